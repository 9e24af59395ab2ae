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
_Static_assert(sizeof(hop__chunk) + ARENA_MAX == HOP__CHUNK_BLOCK, "a full chunk's block");

/* Whether a chunk of `size` bytes of room is a full one or a big one-off:
 * those come from, and go back to, the blocks the thread keeps (core.h:
 * HOP__CHUNK_BLOCK, hop__malloc_small), so that a graph, plan or lowering
 * made after another one died reuses its pages. */
static bool
kept_size(size_t size)
{
    return size == ARENA_MAX || size > ARENA_MAX * 4;
}

static hop__chunk *
chunk_new(size_t size)
{
    return kept_size(size) ? hop__malloc_small(sizeof(hop__chunk) + size)
                           : hop__malloc(sizeof(hop__chunk) + size);
}

static void
chunk_free(hop__chunk *c)
{
    if (kept_size(c->size))
        hop__free_small(c, sizeof *c + c->size);
    else
        hop__free(c);
}

void
hop__arena_init(hop__arena *a)
{
    a->head = NULL;
    a->side = NULL;
    a->spare = NULL;
    a->used = 0;
    a->reserved = 0;
    a->first = 0;
}

void
hop__arena_init_first(hop__arena *a, size_t first)
{
    hop__arena_init(a);
    a->first = first;
}

static void
free_chunks(hop__chunk *c)
{
    while (c) {
        hop__chunk *next = c->next;
        chunk_free(c);
        c = next;
    }
}

void
hop__arena_destroy(hop__arena *a)
{
    free_chunks(a->head);
    free_chunks(a->spare);
    hop__arena_init(a);
}

/* A spare chunk of at least n bytes taken off a's list, or NULL. */
static hop__chunk *
take_spare(hop__arena *a, size_t n)
{
    for (hop__chunk **l = &a->spare; *l; l = &(*l)->next) {
        hop__chunk *c = *l;
        if (c->size >= n) {
            *l = c->next;
            return c;
        }
    }
    return NULL;
}

/* A new chunk of a with room for n bytes, made (or taken from the spares)
 * when the head has not: it becomes the head, or for a big one-off request
 * goes behind it.  NULL (HOP_NOMEM) on failure. */
static hop__chunk *
chunk_for(hop__arena *a, size_t n)
{
    hop__chunk *c = a->head;
    size_t size = c          ? (c->size + c->size / 2 + 15) & ~(size_t)15 /* x1.5 */
                  : a->first ? a->first
                             : ARENA_FIRST;
    if (size > ARENA_MAX)
        size = ARENA_MAX;
    if (size < n)
        size = n;
    hop__chunk *nc = take_spare(a, n);
    if (nc == NULL) {
        if ((nc = chunk_new(size)) == NULL)
            return NULL;
        nc->size = size;
        a->reserved += size;
    }
    nc->used = 0;
    nc->top = nc->size;
    /* A big one-off request goes behind the current chunk so that the
     * current chunk's free space is still used by the next small ones. */
    if (c && nc->size == n && c->top - c->used > 256) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        a->head = nc;
        a->side = c;
    }
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
    /* A block that did not fit in a chunk left its end unused (half a node
     * on average, a byte a node of a big graph): names fill it first. */
    hop__chunk *s = a->side;
    if (s && s->top - s->used >= n) {
        s->top -= n;
        a->used += n;
        return s->data + s->top;
    }
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

void
hop__arena_mark_at(const hop__arena *a, hop__arena_mark *m)
{
    m->head = a->head;
    m->next = a->head ? a->head->next : NULL;
    m->used = a->head ? a->head->used : 0;
    m->top = a->head ? a->head->top : 0;
    m->total = a->used;
    m->side = a->side;
    m->side_top = a->side ? a->side->top : 0;
}

/* Moves the chunk at *link to the spares. */
static void
spare_chunk(hop__arena *a, hop__chunk **link)
{
    hop__chunk *c = *link;
    *link = c->next;
    c->next = a->spare;
    a->spare = c;
}

void
hop__arena_rollback(hop__arena *a, const hop__arena_mark *m)
{
    /* Chunks made since m sit in front of m->head (chunk_for makes the new
     * one the head) or, one-off big ones, right behind it. */
    while (a->head != m->head)
        spare_chunk(a, &a->head);
    if (m->head != NULL) {
        m->head->used = m->used;
        m->head->top = m->top;
        while (m->head->next != m->next)
            spare_chunk(a, &m->head->next);
    }
    if (m->side != NULL)
        m->side->top = m->side_top;
    a->side = m->side;
    a->used = m->total;
}
