/*
 * core/arena.c - the growing bump allocator that graphs own.
 *
 * Chunks double in size (1 KiB up to 32 KiB, larger requests get a chunk of
 * their own), so a graph has no fixed capacity and at most 32 KiB of unused
 * chunk: with chunks doubling to 1 MiB, the last one was half empty at most
 * sizes (bench_memory, bytes per node of a 10,000-op graph: 327 -> 236;
 * 1,000 ops: 267 -> 234).  A 100,000-node graph makes ~700 allocations.  Everything dies together in hop__arena_destroy.  The first
 * chunk is small because most arenas belong to small HOP bodies: a 64-deep
 * nest of them then stays under glibc's trim threshold, instead of giving
 * its pages back on every free and faulting them in again (bench_lift).
 */
#include "core/core.h"

#include <stdalign.h>
#include <stdio.h>

struct hop__chunk {
    hop__chunk *next;
    size_t size; /* usable bytes in data */
    size_t used;
    alignas(max_align_t) unsigned char data[];
};

enum { ARENA_FIRST = 1024, ARENA_MAX = 1 << 15 };

void
hop__arena_init(hop__arena *a)
{
    a->head = NULL;
    a->used = 0;
    a->reserved = 0;
}

void
hop__arena_destroy(hop__arena *a)
{
    hop__chunk *c = a->head;
    while (c) {
        hop__chunk *next = c->next;
        hop__free(c);
        c = next;
    }
    hop__arena_init(a);
}

void *
hop__arena_alloc(hop__arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) & ~(align - 1);
    if (n == 0)
        n = align;
    hop__chunk *c = a->head;
    if (c == NULL || c->size - c->used < n) {
        size_t size = c ? c->size * 2 : ARENA_FIRST;
        if (size > ARENA_MAX)
            size = ARENA_MAX;
        if (size < n)
            size = n;
        hop__chunk *nc = hop__malloc(sizeof *nc + size);
        if (nc == NULL)
            return NULL;
        nc->size = size;
        nc->used = 0;
        /* A big one-off request goes behind the current chunk so that the
         * current chunk's free space is still used by the next small ones. */
        if (c && size == n && c->size - c->used > 256) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        a->reserved += size;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    return p;
}

void *
hop__arena_zalloc(hop__arena *a, size_t n)
{
    void *p = hop__arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *
hop__arena_strdup(hop__arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = hop__arena_alloc(a, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* hop__arena_printf's room: the string, allocated from the arena. */
struct arena_text {
    hop__arena *arena;
    char *text;
};

static char *
arena_room(void *ctx, size_t size)
{
    struct arena_text *t = ctx;
    return t->text = hop__arena_alloc(t->arena, size);
}

char *
hop__arena_printf(hop__arena *a, const char *fmt, ...)
{
    struct arena_text t = {a, NULL};
    va_list ap;
    va_start(ap, fmt);
    int n = hop__vformat(arena_room, &t, fmt, ap);
    va_end(ap);
    if (n == -1)
        hop_error(HOP_INVALID, "bad format string");
    return n < 0 ? NULL : t.text;
}
