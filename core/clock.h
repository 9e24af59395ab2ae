/*
 * core/clock.h - the one monotonic clock of the library and the Python
 * module: nanoseconds since an arbitrary start, never going back.  Inline
 * (header only) so that the pool's spin loops pay no call, and so that the
 * Python module, which links only the public API, can read it too.
 */
#ifndef HOP_CORE_CLOCK_H
#define HOP_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
hop__monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

#endif
