/*
 * tests/c/test_nomem_util.h - the allocation-failure sweep the C tests share:
 * a build run with its k-th allocation failing, for k = 1, 2, ... until it
 * succeeds, must return HOP_NOMEM each time and leave no block allocated.
 */
#ifndef HOP_TEST_NOMEM_UTIL_H
#define HOP_TEST_NOMEM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/core.h"

#include <stdio.h>

/* Runs build(arg) with each allocation in turn failing until it succeeds;
 * asserts every failed run returned HOP_NOMEM and freed all it allocated
 * (a run that does not says which allocation, its status and the leak).
 * Returns how many runs failed. */
static long
hop_test_nomem_sweep(hop_status (*build)(void *), void *arg)
{
    long live = hop_alloc_live();
    long failures = 0;
    for (long k = 1; k < 1000000; k++) {
        hop_alloc_fail_at(k);
        hop_status st = build(arg);
        hop_alloc_fail_at(0);
        if (hop_alloc_live() != live || (st != HOP_OK && st != HOP_NOMEM))
            fprintf(stderr, "allocation %ld: status %s, %s, %ld blocks leaked\n", k,
                    hop_status_name(st), hop_error_message(), hop_alloc_live() - live);
        assert_int_equal(hop_alloc_live(), live);
        if (st == HOP_OK)
            return failures;
        assert_int_equal(st, HOP_NOMEM);
        failures++;
    }
    fail_msg("the build never succeeded in 1000000 allocations");
    return failures;
}

#endif
