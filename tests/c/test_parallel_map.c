/*
 * tests/c/test_parallel_map.c - map loops split over the thread pool
 * (lowering/parplan.c, runtime/parmap.c): plans on 1, 2 and 4 threads give exactly what the
 * op-by-op interpreter gives on many bodies (elementwise, a private
 * intermediate, reductions, cond, invoke_subgraph, nested map, a map inside
 * a subroutine) at row counts around the parallel threshold; a steady run
 * allocates nothing, whatever the row count; an error in the middle of a
 * parallel map is reported once, as the sequential run reports it, and the
 * plan stays usable; a map run row by row because its rows would not fit
 * batched reserves nothing for the batched body, and one that fits takes it
 * and is exact; an allocation-failure sweep over lower + run on 2 threads.  Also: the runtime frees
 * a thread's eager state when the thread exits.
 *
 * Under valgrind (HOP_TEST_SCALE set) the thread counts that only repeat a
 * path another test of this file (or another file) runs are left out:
 * every plan here runs on the pool, and the 40,000-row runs on one thread
 * once (where this file took 78 s of the valgrind phase's 242 CPU-s); the
 * pool runs on 2 threads, not 4 (parmap.c's worker frames go through the
 * same lines for 1 worker or 3, and memcheck runs one thread at a time;
 * the plain and ASan ctest runs keep 4).  The steady-run test maps 2,500
 * rows where it mapped 10,000 and the allocation sweep 1,000 where it
 * mapped 3,000: still on the pool, which each asserts (hop__parmap_runs).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"
#include "test_plan_util.h"

/* runtime/parmap.c: how many loops ran on the pool so far (internal). */
long hop__parmap_runs(void);

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* Set by HOP_TEST_SCALE (valgrind, scripts/dev.sh): see the header. */
static bool under_valgrind;

/* by_rows: every map row by row (the parallel row loop under test); else
 * a batchable body runs once over all rows. */
static hop_plan *
lower(hop_output_graph *og, bool fuse, bool by_rows)
{
    hop_lower_options o = {.no_fusion = !fuse, .no_batching = by_rows};
    hop_plan *p = hop_lower(og, &o);
    if (p == NULL)
        fprintf(stderr, "hop_lower: %s: %s\n", hop_status_name(hop_error_code()),
                hop_error_message());
    assert_non_null(p);
    return p;
}

static void
finish(hop_output_graph *og, hop_node *const *results, size_t n)
{
    hop_arg outs[8];
    for (size_t i = 0; i < n; i++) {
        assert_non_null(results[i]);
        outs[i] = N(results[i]);
    }
    assert_non_null(hop_tracer_output(hop_output_graph_root(og), outs, n));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
}

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

static hop_status
push_first(hop_values *out, hop_values *r, hop_status st)
{
    if (st == HOP_OK)
        st = push(out, r->items[0]);
    hop_values_clear(r);
    return st;
}

/* -------------------------------------------------------------- bodies */

typedef struct prog {
    hop_node *x, *w, *b;
} prog;

/* relu(row * w + b) */
static hop_status
elementwise(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *a = m ? OP(t, HOP_OP_add, N(m), N(p->b)) : NULL;
    return push(out, a ? OP(t, HOP_OP_relu, N(a)) : NULL);
}

/* a = row * w has two users, so it lives in a buffer of the body:
 * a - exp(a) */
static hop_status
private_tmp(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *a = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *e = a ? OP(t, HOP_OP_exp, N(a)) : NULL;
    return push(out, e ? OP(t, HOP_OP_sub, N(a), N(e)) : NULL);
}

/* (sum(row * w), row - amax(row)) */
static hop_status
reductions(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *s = m ? OP(t, HOP_OP_sum, N(m), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *mx = OP(t, HOP_OP_amax, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *d = mx ? OP(t, HOP_OP_sub, N(in[0]), N(mx)) : NULL;
    hop_status st = push(out, s);
    return st == HOP_OK ? push(out, d) : st;
}

static hop_status
twice(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_mul, N(in[0]), hop_arg_int(2)));
}

static hop_status
negated(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *ng = OP(t, HOP_OP_neg, N(in[0]));
    return push(out, ng ? OP(t, HOP_OP_add, N(ng), N(p->b)) : NULL);
}

/* cond(row.sum() > 0, row * 2, -row + b) */
static hop_status
with_cond(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_node *s = OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    return push_first(out, &r,
                      hop_cond(hop_output_graph_of(t), N(pred), (hop_body){twice, ud},
                               (hop_body){negated, ud}, (hop_arg[]){N(in[0])}, 1, &r));
}

/* invoke_subgraph(elementwise, row) + b */
static hop_status
with_invoke(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_values r = {0};
    hop_status st = hop_invoke_subgraph(hop_output_graph_of(t), (hop_body){elementwise, p},
                                        (hop_arg[]){N(in[0])}, 1, &r);
    if (st == HOP_OK)
        st = push(out, OP(t, HOP_OP_add, N(r.items[0]), N(p->b)));
    hop_values_clear(&r);
    return st;
}

/* map(elementwise, row) over a row of a 3-d x */
static hop_status
with_map(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_values r = {0};
    return push_first(out, &r,
                      hop_map(hop_output_graph_of(t), (hop_body){elementwise, ud},
                              (hop_arg[]){N(in[0])}, 1, NULL, 0, &r));
}

/* map(elementwise, x) inside invoke_subgraph: the loop is in a subroutine */
static hop_status
map_in_sub(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_values r = {0};
    return push_first(out, &r,
                      hop_map(hop_output_graph_of(t), (hop_body){elementwise, ud},
                              (hop_arg[]){N(in[0])}, 1, NULL, 0, &r));
}

typedef enum kind { ELEMENTWISE, PRIVATE, REDUCE, COND, INVOKE, NESTED, IN_SUB, NKINDS } kind;

static const char *const kind_names[] = {"elementwise", "private", "reduce", "cond",
                                         "invoke",      "nested",  "in_sub"};

/* map(body, x) with closures w, b (x: f32[rows, cols], f32[rows, 3, cols]
 * for the nested map), all sizes dynamic. */
static hop_output_graph *
program(kind k, prog *p, size_t *nout)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    int64_t xs[3] = {8, 3, 4};
    bool nested = k == NESTED;
    p->x = nested ? hop_output_graph_add_input(og, "x", HOP_F32, 3, xs, true)
                  : hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){8, 4}, true);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){4}, true);
    p->b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){4}, true);
    static const hop_body_fn fns[] = {elementwise, private_tmp, reductions, with_cond,
                                      with_invoke, with_map,    NULL};
    hop_values r = {0};
    if (k == IN_SUB)
        assert_int_equal(
            hop_invoke_subgraph(og, (hop_body){map_in_sub, p}, (hop_arg[]){N(p->x)}, 1, &r),
            HOP_OK);
    else
        assert_int_equal(hop_map(og, (hop_body){fns[k], p}, (hop_arg[]){N(p->x)}, 1, NULL, 0, &r),
                         HOP_OK);
    *nout = r.n;
    finish(og, r.items, r.n);
    hop_values_clear(&r);
    return og;
}

static void
inputs_for(kind k, int64_t rows, int64_t cols, hop_tensor **in)
{
    in[0] = k == NESTED ? rand_tensor(HOP_F32, 3, (int64_t[]){rows, 3, cols})
                        : rand_tensor(HOP_F32, 2, (int64_t[]){rows, cols});
    in[1] = rand_tensor(HOP_F32, 1, &cols);
    in[2] = rand_tensor(HOP_F32, 1, &cols);
}

/* The plan, fused and unfused, row by row and batched, run twice, gives
 * exactly what hop_graph_eval gives (these bodies have no matmul: a batched
 * body computes each row as the row loop does); returns how many loops of
 * the row-by-row plans went to the pool. */
static long
check_plan(hop_output_graph *og, hop_tensor **in, size_t nin, size_t nout)
{
    hop_tensor *want[4] = {0}, *got[4] = {0};
    hop_status st = hop_graph_eval(og, in, nin, want, nout);
    if (st != HOP_OK)
        fprintf(stderr, "eval: %s\n", hop_error_message());
    assert_int_equal(st, HOP_OK);
    long used = 0;
    for (int k = 0; k < 4; k++) {
        bool fuse = k & 1, by_rows = k < 2;
        long before = hop__parmap_runs();
        hop_plan *p = lower(og, fuse, by_rows);
        for (int rep = 0; rep < 2; rep++) {
            st = hop_plan_run(p, in, nin, got, nout);
            if (st != HOP_OK)
                fprintf(stderr, "run: %s\n", hop_error_message());
            assert_int_equal(st, HOP_OK);
            for (size_t j = 0; j < nout; j++)
                assert_same(got[j], want[j]);
            release_all(got, nout);
        }
        hop_plan_free(p);
        if (by_rows)
            used += hop__parmap_runs() - before;
    }
    release_all(want, nout);
    return used;
}

/* ---------------------------------------------------------------- tests */

static void
test_parallel_map_matches_sequential_and_eager_on_every_body(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 4};
    static const int64_t rows[] = {2, 3, 37, 2500};
    /* under valgrind 2 threads only: one thread is the sequential row loop
     * every other plan test runs, and 4 run the lines 2 run (parmap.c's
     * loops over the worker frames; memcheck runs one thread at a time) */
    size_t first = under_valgrind ? 1 : 0, end = under_valgrind ? 2 : LEN(threads);
    for (kind k = 0; k < NKINDS; k++) {
        prog p;
        size_t nout;
        hop_output_graph *og = program(k, &p, &nout);
        for (size_t ti = first; ti < end; ti++) {
            hop_runtime_set_threads(threads[ti]);
            for (size_t ri = 0; ri < LEN(rows); ri++) {
                hop_tensor *in[3];
                inputs_for(k, rows[ri], k == NESTED ? 5 : 16, in);
                long used = check_plan(og, in, 3, nout);
                /* 2500 rows is worth the pool for every body; 3 rows never */
                if (threads[ti] == 1 || rows[ri] <= 3)
                    assert_int_equal(used, 0);
                if (threads[ti] > 1 && rows[ri] == 2500) {
                    if (used != 4)
                        fprintf(stderr, "%s: %ld parallel runs\n", kind_names[k], used);
                    assert_int_equal(used, 4);
                }
                release_all(in, 3);
            }
        }
        hop_output_graph_free(og);
    }
    hop_runtime_set_threads(0);
}

static bool
goes_parallel(hop_plan *p, hop_tensor **in)
{
    hop_tensor *out = NULL;
    long before = hop__parmap_runs();
    assert_int_equal(hop_plan_run(p, in, 3, &out, 1), HOP_OK);
    hop_tensor_release(out);
    return hop__parmap_runs() > before;
}

/* The smallest row count worth the pool, then one row less and more. */
static void
test_rows_around_the_parallel_threshold_match_eager(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    for (kind k = ELEMENTWISE; k <= PRIVATE; k++) {
        prog pr;
        size_t nout;
        hop_output_graph *og = program(k, &pr, &nout);
        hop_plan *p = lower(og, true, true);
        int64_t lo = 2, hi = 1 << 14;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            hop_tensor *in[3];
            inputs_for(k, mid, 16, in);
            if (goes_parallel(p, in))
                hi = mid;
            else
                lo = mid + 1;
            release_all(in, 3);
        }
        /* about 20 us of work: a few hundred rows of 16 floats */
        assert_true(lo > 50 && lo < 2000);
        for (int64_t r = lo - 1; r <= lo + 1; r++) {
            hop_tensor *in[3];
            inputs_for(k, r, 16, in);
            assert_int_equal(goes_parallel(p, in), r >= lo);
            /* (the unfused plan runs more instructions a row: its
             * threshold is lower) */
            long used = check_plan(og, in, 3, nout);
            if (r >= lo)
                assert_true(used >= 2);
            release_all(in, 3);
        }
        hop_plan_free(p);
        hop_output_graph_free(og);
    }
    hop_runtime_set_threads(0);
}

/* Allocations of run_into on a fresh plan (first run) and then per run;
 * pooled: the runs must go to the pool. */
static void
count_allocations(hop_output_graph *og, kind k, int64_t rows, bool pooled, long *first,
                  long *steady)
{
    hop_plan *p = lower(og, true, true);
    hop_tensor *in[3];
    inputs_for(k, rows, 16, in);
    hop_tensor *out = hop_tensor_empty(HOP_F32, 2, (int64_t[]){rows, 16});
    long before = hop_alloc_count();
    assert_int_equal(hop_plan_run_into(p, in, 3, &out, 1), HOP_OK);
    *first = hop_alloc_count() - before;
    long parallel = hop__parmap_runs();
    before = hop_alloc_count();
    for (int rep = 0; rep < 5; rep++)
        assert_int_equal(hop_plan_run_into(p, in, 3, &out, 1), HOP_OK);
    *steady = hop_alloc_count() - before;
    if (pooled)
        assert_int_equal(hop__parmap_runs() - parallel, 5);
    /* hop_plan_run: the released output is reused */
    hop_tensor *o = NULL;
    assert_int_equal(hop_plan_run(p, in, 3, &o, 1), HOP_OK);
    hop_tensor_release(o);
    before = hop_alloc_count();
    assert_int_equal(hop_plan_run(p, in, 3, &o, 1), HOP_OK);
    assert_int_equal(hop_alloc_count() - before, 0);
    hop_tensor_release(o);
    release_all(in, 3);
    hop_tensor_release(out);
    hop_plan_free(p);
}

static void
test_parallel_map_allocates_nothing_per_row_at_any_row_count(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    for (kind k = ELEMENTWISE; k <= PRIVATE; k++) {
        prog pr;
        size_t nout;
        hop_output_graph *og = program(k, &pr, &nout);
        /* (under valgrind 2,500 rows, not 10,000: still on the pool, as
         * count_allocations checks) */
        int64_t big = under_valgrind ? 2500 : 10000;
        long first10, steady10, first10k, steady10k;
        count_allocations(og, k, 10, false, &first10, &steady10);
        count_allocations(og, k, big, true, &first10k, &steady10k);
        /* the frame, the block (intermediates and the workers' areas) and
         * the worker frames: the same for 10 rows and 10,000 */
        assert_int_equal(first10, first10k);
        assert_int_equal(first10, 3);
        assert_int_equal(steady10, 0);
        assert_int_equal(steady10k, 0);
        /* one plan, row counts changing: nothing but a larger block */
        hop_plan *p = lower(og, true, true);
        int64_t seq[] = {10, big, 10, big, big * 3 / 10};
        long allocs[LEN(seq)];
        for (size_t i = 0; i < LEN(seq); i++) {
            hop_tensor *in[3], *out = hop_tensor_empty(HOP_F32, 2, (int64_t[]){seq[i], 16});
            inputs_for(k, seq[i], 16, in);
            long before = hop_alloc_count();
            assert_int_equal(hop_plan_run_into(p, in, 3, &out, 1), HOP_OK);
            allocs[i] = hop_alloc_count() - before;
            release_all(in, 3);
            hop_tensor_release(out);
        }
        assert_int_equal(allocs[0], 3);
        /* a larger block once for the private buffers of 16 floats? no:
         * their size does not depend on the row count */
        assert_int_equal(allocs[1] + allocs[2] + allocs[3] + allocs[4], 0);
        hop_plan_free(p);
        hop_output_graph_free(og);
    }
    hop_runtime_set_threads(0);
}

/* ------------------------------------------- the batched body's memory */

/* sum(exp(row * w)): a row of cols floats in, one float out.  Batched, its
 * values take 2 * cols * 4 + 4 bytes a row. */
static hop_status
sum_exp(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *e = m ? OP(t, HOP_OP_exp, N(m)) : NULL;
    return push(out, e ? OP(t, HOP_OP_sum, N(e), hop_arg_none(), hop_arg_bool(false)) : NULL);
}

#define FIT_COLS 256
/* 40,000 rows take 82 MB batched, more than map's 64 MiB: row by row. */
#define FIT_TOO_MANY 40000

/* map(sum_exp, x) with x: f32[s0, s1], w: f32[s1]: the plan batches the
 * body or runs the rows, decided each run by the fit test. */
static hop_output_graph *
fit_program(prog *p)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    p->x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){8, FIT_COLS}, true);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){FIT_COLS}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){sum_exp, p}, (hop_arg[]){N(p->x)}, 1, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    return og;
}

/* x of rows rows, every one the same (stride 0: no memory), and w. */
static void
fit_inputs(int64_t rows, hop_tensor **in)
{
    hop_tensor *row = rand_tensor(HOP_F32, 2, (int64_t[]){1, FIT_COLS});
    in[0] = hop_tensor_view(row, 2, (int64_t[]){rows, FIT_COLS}, (int64_t[]){0, 1}, 0);
    hop_tensor_release(row);
    int64_t cols = FIT_COLS;
    in[1] = rand_tensor(HOP_F32, 1, &cols);
    assert_non_null(in[0]);
}

/* Runs p on in into out (f32[rows]): the bytes the run asked the allocator
 * for. */
static long long
run_bytes(hop_plan *p, hop_tensor **in, hop_tensor *out)
{
    long long before = hop_alloc_bytes();
    hop_status st = hop_plan_run_into(p, in, 2, &out, 1);
    if (st != HOP_OK)
        fprintf(stderr, "run: %s\n", hop_error_message());
    assert_int_equal(st, HOP_OK);
    return hop_alloc_bytes() - before;
}

/* A run that takes the row loop, because the rows' values would not fit,
 * reserves nothing for the batched body: the batched body's tensors have a
 * block of their own, laid out only by a run that takes it (a lazy
 * section).  The plan's block used to hold them too, sized by the real row
 * count: 82 MB here (13 GB, and a MemoryError on 2 threads, for a
 * 400,000-row map of 64 x 64 matmuls). */
static void
test_a_map_run_row_by_row_reserves_nothing_for_its_batched_body(void **state)
{
    (void)state;
    prog pr;
    hop_output_graph *og = fit_program(&pr);
    /* under valgrind 2 threads only: the next test runs the 40,000 rows on
     * one */
    for (int threads = under_valgrind ? 2 : 1; threads <= 2; threads++) {
        hop_runtime_set_threads(threads);
        hop_plan *p = lower(og, true, false);
        char *dump = hop_plan_dump(p);
        assert_non_null(strstr(dump, "Layout      1   0   0"));
        assert_non_null(strstr(dump, "] (lazy section 1): "));
        hop_free(dump);
        hop_tensor *in[2], *out = hop_tensor_empty(HOP_F32, 1, (int64_t[]){FIT_TOO_MANY});
        fit_inputs(FIT_TOO_MANY, in);
        long parallel = hop__parmap_runs();
        long long first = run_bytes(p, in, out);
        /* the frame, a block of a few rows' values (and the workers'
         * areas), the worker frames: some KiB, not 40,000 rows' */
        if (first > 256 << 10)
            fprintf(stderr, "%d threads: the run allocated %lld bytes\n", threads, first);
        assert_true(first <= 256 << 10);
        assert_int_equal(hop__parmap_runs() - parallel, threads == 2);
        assert_int_equal(run_bytes(p, in, out), 0);
        /* the rows are right: each is the one row's sum (the rows are all
         * the same: hop_graph_eval of one) */
        hop_tensor *one[2] = {hop_tensor_view(in[0], 2, (int64_t[]){1, FIT_COLS}, (int64_t[]){0, 1},
                                              0),
                              in[1]},
                   *want[1];
        assert_int_equal(hop_graph_eval(og, one, 2, want, 1), HOP_OK);
        const float *o = out->data, w = *(const float *)want[0]->data;
        for (int64_t i = 0; i < FIT_TOO_MANY; i++)
            if (o[i] != w)
                fail_msg("row %lld: %.9g, not %.9g", (long long)i, (double)o[i], (double)w);
        hop_tensor_release(one[0]);
        release_all(want, 1);
        release_all(in, 2);
        hop_tensor_release(out);
        hop_plan_free(p);
    }
    hop_runtime_set_threads(0);
    hop_output_graph_free(og);
}

/* A run whose rows fit takes the batched body (its block is then made,
 * once) and gives exactly what the row loop and hop_graph_eval give; a run
 * of too many rows in between reserves nothing more, and the plan keeps the
 * batched body's block for the next run that fits. */
static void
test_a_map_run_that_fits_takes_the_batched_body_and_is_exact(void **state)
{
    (void)state;
    prog pr;
    hop_output_graph *og = fit_program(&pr);
    int64_t rows = 1000;
    /* under valgrind 1 thread only: the last test ran the 40,000 rows on 2 */
    for (int threads = 1; threads <= (under_valgrind ? 1 : 2); threads++) {
        hop_runtime_set_threads(threads);
        hop_plan *p = lower(og, true, false), *by_rows = lower(og, true, true);
        hop_tensor *in[2], *big[2], *want[1], *got[1];
        in[0] = rand_tensor(HOP_F32, 2, (int64_t[]){rows, FIT_COLS});
        int64_t cols = FIT_COLS;
        in[1] = rand_tensor(HOP_F32, 1, &cols);
        fit_inputs(FIT_TOO_MANY, big);
        hop_tensor *out = hop_tensor_empty(HOP_F32, 1, &rows);
        hop_tensor *bigout = hop_tensor_empty(HOP_F32, 1, (int64_t[]){FIT_TOO_MANY});
        /* the batched body's block: all rows' values of the fused group */
        long long batched = rows * FIT_COLS * 4;
        assert_true(run_bytes(p, in, out) >= batched);
        assert_int_equal(hop_graph_eval(og, in, 2, want, 1), HOP_OK);
        assert_int_equal(hop_plan_run(by_rows, in, 2, got, 1), HOP_OK);
        assert_identical(out, want[0]);
        assert_identical(out, got[0]);
        assert_int_equal(run_bytes(p, in, out), 0);
        assert_true(run_bytes(p, big, bigout) <= 256 << 10);
        assert_int_equal(run_bytes(p, in, out), 0);
        assert_identical(out, want[0]);
        release_all(want, 1);
        release_all(got, 1);
        release_all(in, 2);
        release_all(big, 2);
        hop_tensor_release(out);
        hop_tensor_release(bigout);
        hop_plan_free(p);
        hop_plan_free(by_rows);
    }
    hop_runtime_set_threads(0);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------------- errors */

/* table[idx_row.item()] * 2: out of range for a bad index */
static hop_status
lookup(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    hop_node *table = ud;
    (void)n;
    hop_node *i = OP(t, HOP_OP_item, N(in[0]));
    hop_node *row = i ? OP(t, HOP_OP_select, N(table), hop_arg_int(0), N(i)) : NULL;
    return push(out, row ? OP(t, HOP_OP_mul, N(row), hop_arg_int(2)) : NULL);
}

static hop_output_graph *
lookup_program(void)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *idx = hop_output_graph_add_input(og, "idx", HOP_I64, 1, (int64_t[]){8}, true);
    hop_node *table = hop_output_graph_add_input(og, "table", HOP_F32, 2, (int64_t[]){5, 64}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){lookup, table}, (hop_arg[]){N(idx)}, 1, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    return og;
}

static hop_status
run_lookup(hop_plan *p, hop_tensor *idx, hop_tensor *table, char *msg, size_t cap)
{
    hop_tensor *in[] = {idx, table}, *out = (hop_tensor *)1;
    hop_status st = hop_plan_run(p, in, 2, &out, 1);
    if (st != HOP_OK)
        assert_null(out);
    hop_tensor_release(out);
    snprintf(msg, cap, "%s", st == HOP_OK ? "" : hop_error_message());
    return st;
}

static void
test_an_error_mid_map_is_reported_once_as_the_sequential_run_reports_it(void **state)
{
    (void)state;
    hop_output_graph *og = lookup_program();
    int64_t rows = 6000;
    hop_tensor *idx = hop_tensor_empty(HOP_I64, 1, &rows);
    hop_tensor *table = rand_tensor(HOP_F32, 2, (int64_t[]){5, 64});
    int64_t *ix = idx->data;
    for (int64_t i = 0; i < rows; i++)
        ix[i] = i % 5;
    /* bad rows on both halves; the first one (row 3500) is the one reported */
    ix[3500] = 7;
    ix[5000] = 9;
    ix[5999] = -11;
    char seq[1024], par[1024];
    hop_runtime_set_threads(1);
    hop_plan *p = lower(og, true, true);
    assert_int_equal(run_lookup(p, idx, table, seq, sizeof seq), HOP_INDEX);
    assert_string_equal(seq, "select = select(table, 0, item): index 7 is out of range for dim 0 "
                             "of f32[5, 64]");
    hop_plan_free(p);
    /* (under valgrind 2 threads only, as in the first test) */
    static const int threads[] = {2, 4};
    for (size_t ti = 0; ti < (under_valgrind ? 1 : LEN(threads)); ti++) {
        hop_runtime_set_threads(threads[ti]);
        p = lower(og, true, true);
        for (int rep = 0; rep < 3; rep++) {
            long before = hop__parmap_runs();
            hop_error_clear();
            assert_int_equal(run_lookup(p, idx, table, par, sizeof par), HOP_INDEX);
            assert_int_equal(hop__parmap_runs() - before, 1);
            assert_string_equal(par, seq);
            /* the plan stays usable: good indices run and match eager */
            ix[3500] = 2;
            ix[5000] = 4;
            ix[5999] = 0;
            hop_tensor *in[] = {idx, table}, *got, *want;
            assert_int_equal(hop_plan_run(p, in, 2, &got, 1), HOP_OK);
            assert_int_equal(hop_graph_eval(og, in, 2, &want, 1), HOP_OK);
            assert_same(got, want);
            hop_tensor_release(got);
            hop_tensor_release(want);
            ix[3500] = 7;
            ix[5000] = 9;
            ix[5999] = -11;
        }
        /* only the last row fails */
        ix[3500] = 1;
        ix[5000] = 1;
        assert_int_equal(run_lookup(p, idx, table, par, sizeof par), HOP_INDEX);
        assert_string_equal(par, "select = select(table, 0, item): index -11 is out of range for "
                                 "dim 0 of f32[5, 64]");
        ix[3500] = 7;
        ix[5000] = 9;
        hop_plan_free(p);
    }
    hop_runtime_set_threads(0);
    hop_tensor_release(idx);
    hop_tensor_release(table);
    hop_output_graph_free(og);
}

/* ------------------------------------------------- allocation failures */

static void
sweep(hop_output_graph *og, hop_tensor **in, size_t nin, size_t nout)
{
    hop_tensor *out[4] = {0};
    hop_plan *p = lower(og, true, true);
    long before = hop__parmap_runs();
    assert_int_equal(hop_plan_run(p, in, nin, out, nout), HOP_OK);
    assert_true(hop__parmap_runs() > before);
    release_all(out, nout);
    hop_plan_free(p);
    /* The workers' eager state goes when they exit (shutdown joins them). */
    hop_runtime_shutdown();
    long base = hop_alloc_live();
    /* row by row (the parallel loop), then as lowered by default (a
     * batchable body once over all rows) */
    for (int by_rows = 1; by_rows >= 0; by_rows--) {
        hop_lower_options o = {.no_batching = by_rows};
        long k;
        for (k = 1; k < 100000; k++) {
            hop_alloc_fail_at(k);
            p = hop_lower(og, &o);
            hop_status st = p ? HOP_OK : hop_error_code();
            for (int rep = 0; rep < 2 && st == HOP_OK; rep++) {
                st = hop_plan_run(p, in, nin, out, nout);
                if (st == HOP_OK)
                    release_all(out, nout);
                else
                    for (size_t j = 0; j < nout; j++)
                        assert_null(out[j]);
            }
            hop_alloc_fail_at(0);
            if (st != HOP_OK) {
                if (st != HOP_NOMEM)
                    fprintf(stderr, "k = %ld: %s\n", k, hop_error_message());
                assert_int_equal(st, HOP_NOMEM);
            }
            hop_plan_free(p);
            hop_runtime_shutdown();
            assert_int_equal(hop_alloc_live(), base);
            if (st == HOP_OK)
                break;
        }
        assert_true(k > 10);
    }
    p = lower(og, true, true);
    assert_int_equal(hop_plan_run(p, in, nin, out, nout), HOP_OK);
    release_all(out, nout);
    hop_plan_free(p);
}

static void
test_allocation_failures_in_lower_and_parallel_run_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    static const kind kinds[] = {PRIVATE, REDUCE, COND, INVOKE, NESTED};
    for (size_t i = 0; i < LEN(kinds); i++) {
        prog pr;
        size_t nout;
        hop_output_graph *og = program(kinds[i], &pr, &nout);
        hop_tensor *in[3];
        /* (under valgrind 1,000 rows: still on the pool, as sweep checks) */
        inputs_for(kinds[i], under_valgrind ? 1000 : 3000, kinds[i] == NESTED ? 5 : 16, in);
        sweep(og, in, 3, nout);
        release_all(in, 3);
        hop_output_graph_free(og);
    }
    hop_runtime_set_threads(0);
}

/* ------------------------------------------------------- thread exit */

static void *
eager_ops(void *arg)
{
    int *ok = arg;
    int64_t sizes[] = {3, 300 + *ok};
    hop_tensor *x = hop_tensor_zeros(HOP_F32, 2, sizes);
    hop_tensor *y =
        x ? hop_eager_tensor(HOP_OP_add, (hop_rt_arg[]){hop_rt_tensor(x), hop_rt_int(1)}, 2) : NULL;
    hop_rt_value s = {0};
    if (y &&
        hop_eager(HOP_OP_sum, (hop_rt_arg[]){hop_rt_tensor(y), hop_rt_none(), hop_rt_bool(false)},
                  3, &s) == HOP_OK) {
        float v = *(float *)s.tensor->data;
        *ok = v == 3.0f * (float)sizes[1];
    } else {
        *ok = 0;
    }
    hop_tensor_release(s.tensor);
    hop_tensor_release(y);
    hop_tensor_release(x);
    /* no hop_runtime_thread_cleanup(): the thread's exit frees its state */
    return NULL;
}

static void
test_a_thread_that_ran_eager_ops_frees_its_state_when_it_exits(void **state)
{
    (void)state;
    hop_runtime_thread_cleanup();
    long base = hop_alloc_live();
    for (int round = 0; round < 3; round++) {
        pthread_t th[4];
        int ok[4];
        for (int t = 0; t < 4; t++) {
            ok[t] = t + 10 * round;
            assert_int_equal(pthread_create(&th[t], NULL, eager_ops, &ok[t]), 0);
        }
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            assert_int_equal(ok[t], 1);
        }
        assert_int_equal(hop_alloc_live(), base);
    }
    /* and the calling thread's state is freed on request, as before */
    int ok = 0;
    eager_ops(&ok);
    assert_int_equal(ok, 1);
    assert_true(hop_alloc_live() > base);
    hop_runtime_thread_cleanup();
    assert_int_equal(hop_alloc_live(), base);
}

int
main(void)
{
    under_valgrind = getenv("HOP_TEST_SCALE") != NULL;
    /* HOP_TEST_FILTER=pattern runs only the matching tests (profiling). */
    if (getenv("HOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("HOP_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_map_matches_sequential_and_eager_on_every_body),
        cmocka_unit_test(test_rows_around_the_parallel_threshold_match_eager),
        cmocka_unit_test(test_parallel_map_allocates_nothing_per_row_at_any_row_count),
        cmocka_unit_test(test_a_map_run_row_by_row_reserves_nothing_for_its_batched_body),
        cmocka_unit_test(test_a_map_run_that_fits_takes_the_batched_body_and_is_exact),
        cmocka_unit_test(test_an_error_mid_map_is_reported_once_as_the_sequential_run_reports_it),
        cmocka_unit_test(
            test_allocation_failures_in_lower_and_parallel_run_are_nomem_and_leak_nothing),
        cmocka_unit_test(test_a_thread_that_ran_eager_ops_frees_its_state_when_it_exits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
