/*
 * core/alloc.c - the allocator hook, fault injection and allocation counters.
 *
 * Every byte hop allocates passes through hop__realloc, so one counter can make
 * the k-th allocation fail (Lua's Memcontrol, SQLite's fault injection) and one
 * counter of live blocks lets a test prove that a failed call leaked nothing.
 */
#include "core/core.h"

#include <stdatomic.h>
#include <stdlib.h>

_Thread_local int hop__hash_oom;

static void *
default_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return ptr == NULL ? malloc(nsize) : realloc(ptr, nsize);
}

static hop_alloc_fn alloc_fn = default_alloc;
static void *alloc_ud;
static atomic_long fail_countdown; /* 0: off; 1: the next allocation fails */
static atomic_long alloc_count;
static atomic_long live_blocks;
static atomic_llong alloc_bytes;

void
hop_set_allocator(hop_alloc_fn fn, void *ud)
{
    alloc_fn = fn ? fn : default_alloc;
    alloc_ud = fn ? ud : NULL;
}

void
hop_alloc_fail_at(long k)
{
    atomic_store(&fail_countdown, k > 0 ? k : 0);
}

long
hop_alloc_count(void)
{
    return atomic_load(&alloc_count);
}

long
hop_alloc_live(void)
{
    return atomic_load(&live_blocks);
}

long long
hop_alloc_bytes(void)
{
    return atomic_load(&alloc_bytes);
}

/* True when the fault injector says this allocation must fail. */
static bool
injected_failure(void)
{
    long n = atomic_load(&fail_countdown);
    while (n > 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1))
            return n == 1;
    }
    return false;
}

void *
hop__realloc(void *p, size_t n)
{
    if (n == 0) {
        hop__free(p);
        return NULL;
    }
    atomic_fetch_add(&alloc_count, 1);
    atomic_fetch_add_explicit(&alloc_bytes, (long long)n, memory_order_relaxed);
    void *q = injected_failure() ? NULL : alloc_fn(alloc_ud, p, n);
    if (q == NULL) {
        hop_error(HOP_NOMEM, "out of memory (allocating %zu bytes)", n);
        return NULL;
    }
    if (p == NULL)
        atomic_fetch_add(&live_blocks, 1);
    return q;
}

void *
hop__malloc(size_t n)
{
    return hop__realloc(NULL, n ? n : 1);
}

void *
hop__calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        hop_error(HOP_NOMEM, "out of memory (%zu x %zu bytes overflows)", count, size);
        return NULL;
    }
    size_t n = count * size;
    void *p = hop__malloc(n);
    if (p && n > 0)
        memset(p, 0, n);
    return p;
}

void
hop__free(void *p)
{
    if (p == NULL)
        return;
    atomic_fetch_sub(&live_blocks, 1);
    alloc_fn(alloc_ud, p, 0);
}

void
hop_free(void *ptr)
{
    hop__free(ptr);
}

void *
hop_malloc(size_t n)
{
    return hop__malloc(n);
}

void *
hop_calloc(size_t count, size_t size)
{
    return hop__calloc(count, size);
}

void *
hop_realloc(void *ptr, size_t n)
{
    return hop__realloc(ptr, n);
}

char *
hop__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = hop__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

hop_status
hop__grow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return HOP_OK;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < need)
        ncap *= 2;
    if (ncap > SIZE_MAX / elem)
        return hop_error(HOP_NOMEM, "out of memory (array of %zu items)", need);
    void *p = hop__realloc(*items, ncap * elem);
    if (p == NULL)
        return HOP_NOMEM;
    *items = p;
    *cap = ncap;
    return HOP_OK;
}
