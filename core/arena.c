/*
 * core/arena.c - the growing bump allocator that graphs own.
 *
 * Chunks grow by half (1 KiB, 1.5, 2.25, ... up to 8 KiB; larger requests
 * get a chunk of their own; aligned blocks from a chunk's front, byte
 * strings from its back), so a graph has no fixed capacity and at most
 * 8 KiB of unused chunk.  Most arenas belong to HOP bodies of tens to
 * hundreds of nodes, where the last chunk's empty part is most of the
 * waste: chunks doubling up to 32 KiB left a 100-node body about 12 KiB of
 * it (bench_memory's nested wraps: 108 bytes of slack per node, 9 now).
 * With 8 KiB chunks a 100,000-node graph makes ~2,300 allocations and pays
 * about 1 byte per node for chunk headers and malloc's own.  Everything
 * dies together in hop__arena_destroy.  The first chunk is small because
 * most arenas belong to small HOP bodies: a 64-deep nest of them then stays
 * under glibc's trim threshold, instead of giving its pages back on every
 * free and faulting them in again (bench_lift).
 */
#include "core/core.h"

#include <stdalign.h>
#include <stdio.h>

/* A chunk hands out aligned blocks from its front (data[0, used)) and
 * unaligned bytes from its back (data[top, size)): byte strings (node names)
 * then pack without padding and without chunks of their own, whose unused
 * tail cost every small graph up to a few hundred bytes. */
struct hop__chunk {
    hop__chunk *next;
    size_t size; /* usable bytes in data */
    size_t used;
    size_t top;
    alignas(max_align_t) unsigned char data[];
};

enum { ARENA_FIRST = 1024, ARENA_MAX = 1 << 13 };

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

/* A new chunk of a with room for n bytes, made when the head has not:
 * it becomes the head, or for a big one-off request goes behind it.  NULL
 * (HOP_NOMEM) on failure. */
static hop__chunk *
chunk_for(hop__arena *a, size_t n)
{
    hop__chunk *c = a->head;
    size_t size = c ? (c->size + c->size / 2 + 15) & ~(size_t)15 : ARENA_FIRST; /* x1.5 */
    if (size > ARENA_MAX)
        size = ARENA_MAX;
    if (size < n)
        size = n;
    hop__chunk *nc = hop__malloc(sizeof *nc + size);
    if (nc == NULL)
        return NULL;
    nc->size = size;
    nc->used = 0;
    nc->top = size;
    /* A big one-off request goes behind the current chunk so that the
     * current chunk's free space is still used by the next small ones. */
    if (c && size == n && c->top - c->used > 256) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        a->head = nc;
    }
    a->reserved += size;
    return nc;
}

void *
hop__arena_alloc(hop__arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) & ~(align - 1);
    if (n == 0)
        n = align;
    hop__chunk *c = a->head;
    if (c == NULL || c->top - c->used < n) /* the common case stays inline */
        if ((c = chunk_for(a, n)) == NULL)
            return NULL;
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    return p;
}

void *
hop__arena_bytes(hop__arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    hop__chunk *c = a->head;
    if (c == NULL || c->top - c->used < n)
        if ((c = chunk_for(a, n)) == NULL)
            return NULL;
    c->top -= n;
    a->used += n;
    return c->data + c->top;
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
    char *d = hop__arena_bytes(a, n);
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
    return t->text = hop__arena_bytes(t->arena, size);
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
