/*
 * tests/c/test_class_util.h - HOP classes for graph-layer tests, which build
 * call_hop nodes by hand: the graph layer reads a class's name, its signature
 * (the verifier checks a call's layout against it) and its slots (unset
 * here: the base's print and verify).
 */
#ifndef HOP_TEST_CLASS_UTIL_H
#define HOP_TEST_CLASS_UTIL_H

#include "hop/class.h"

#include <string.h>

/* One class per name, alive for the whole test program. */
static inline const hop_class *
class_named(const char *name)
{
    static hop_class table[32];
    static size_t n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    if (n == sizeof table / sizeof table[0])
        return NULL;
    table[n].name = name;
    /* The verifier checks a call's layout against its class's signature: a
     * class named cond takes cond's (the rest take the PrimHOP base's,
     * (body, *args)). */
    if (strcmp(name, "cond") == 0) {
        const hop_param cond[] = {{"pred", HOP_PARAM_VALUE, NULL, 0},
                                  {"true_fn", HOP_PARAM_BODY, "cond_true", 0},
                                  {"false_fn", HOP_PARAM_BODY, "cond_false", 0},
                                  {"operands", HOP_PARAM_VALUES, NULL, 0}};
        memcpy(table[n].params, cond, sizeof cond);
    }
    return &table[n++];
}

#endif /* HOP_TEST_CLASS_UTIL_H */
