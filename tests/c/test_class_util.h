/*
 * tests/c/test_class_util.h - HOP classes for graph-layer tests, which build
 * call_hop nodes by hand: the graph layer reads only a class's name (and its
 * print slot, unset here).
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
    return &table[n++];
}

#endif /* HOP_TEST_CLASS_UTIL_H */
