/*
 * runtime/pack.c - the offsets of the memory plan's buffers in a block:
 * two buffers whose live ranges meet never share a byte, and buffers whose
 * live ranges are disjoint may share any.
 *
 * Greedy by size (Pisarchyk and Lee, "Efficient Memory Management for Deep
 * Neural Net Inference", 2020; TFLite's arena planner): the largest buffer
 * first, each at the smallest gap between the buffers already placed that
 * it meets in time, or above them all.  Regions (buffers chained in order
 * of first use, each region as large as its largest member) wasted what a
 * small buffer left of a large region: a 1 MB mask in a free 4 MB region
 * sent the next 4 MB value to a new region (np_large's Mandelbrot: 43 MB
 * where 27 MB are ever live at once).  Packing by size reaches the peak of
 * the live bytes on every program of the benches.
 *
 * The buffers placed so far that meet a buffer in time are found through a
 * tree over the partition's buffers in order of first use, each node the
 * latest last use of the placed buffers under it: those that start before
 * the buffer ends and end after it starts, in O(log n) each.  Buffers of
 * different routines always meet (a subroutine runs while its callers'
 * values are live): each routine packs its own part, one after the other.
 * The code generator packs a static plan once (memplan.c); the VM packs a
 * symbolic one at its sizes, and the worker areas of parallel loops
 * (frame.c), with this one function.
 */
#include "runtime/vm_impl.h"

#include <stdlib.h>

#define ALIGN 64

/* A buffer of the part being packed: its size and first use, for the
 * order in which it is placed. */
typedef struct item {
    int64_t size;
    int32_t routine, def, last, id; /* id: index among the picked buffers */
} item;

/* By routine, then first use, then index: the tree's order. */
static int
cmp_time(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->routine != y->routine)
        return x->routine < y->routine ? -1 : 1;
    if (x->def != y->def)
        return x->def < y->def ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Largest first; then by first use and index (a stable order). */
static int
cmp_size(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->def != y->def)
        return x->def < y->def ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

typedef struct span {
    int64_t lo, hi;
} span;

static int
cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Whether a[0..n) is already in cmp's order.  The buffers of a trace come
 * in order of first use, most of one size: the parts and their size order
 * are usually sorted already, and qsort (glibc's merge sort, through the
 * comparison's pointer) costs ~1 K instructions a buffer even then. */
static bool
is_sorted(const void *a, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *c = a;
    for (size_t i = 1; i < n; i++)
        if (cmp(c + (i - 1) * size, c + i * size) > 0)
            return false;
    return true;
}

/* Sorts the spans a buffer meets by their start.  A buffer meets a few:
 * an insertion sort, stable as glibc's qsort (a merge sort) is, so spans
 * that start together stay in the tree's order; qsort past SMALL_SORT. */
#define SMALL_SORT 16

static void
sort_spans(span *s, int32_t n)
{
    if (n > SMALL_SORT) {
        qsort(s, (size_t)n, sizeof *s, cmp_span);
        return;
    }
    for (int32_t i = 1; i < n; i++) {
        span v = s[i];
        int32_t j = i;
        for (; j > 0 && s[j - 1].lo > v.lo; j--)
            s[j] = s[j - 1];
        s[j] = v;
    }
}

/* The packing of one routine's buffers: it[0..m) in order of first use. */
typedef struct part {
    item *it;
    int32_t m, leaves;
    int32_t *tree; /* 2 * leaves: latest last use of the placed under a node */
    int64_t *off;  /* per item (its position in it), its offset once placed */
    span *meet;    /* scratch: the placed buffers one buffer meets */
} part;

static void
mark_placed(part *pt, int32_t i)
{
    int32_t v = pt->it[i].last;
    for (int32_t n = pt->leaves + i; n >= 1 && pt->tree[n] < v; n /= 2)
        pt->tree[n] = v;
}

/* The placed buffers among it[0..upper) whose last use is at or after lo:
 * their spans into pt->meet; returns how many. */
static int32_t
placed_meeting(const part *pt, int32_t upper, int32_t lo)
{
    int32_t stack[2 * 32 + 2], sp = 0, n = 0;
    int32_t nlo[2 * 32 + 2], nhi[2 * 32 + 2];
    stack[sp] = 1, nlo[sp] = 0, nhi[sp] = pt->leaves, sp++;
    while (sp > 0) {
        sp--;
        int32_t node = stack[sp], a = nlo[sp], b = nhi[sp];
        if (a >= upper || pt->tree[node] < lo)
            continue;
        if (node >= pt->leaves) {
            int32_t i = node - pt->leaves;
            pt->meet[n++] = (span){pt->off[i], pt->off[i] + pt->it[i].size};
            continue;
        }
        int32_t mid = a + (b - a) / 2;
        stack[sp] = 2 * node + 1, nlo[sp] = mid, nhi[sp] = b, sp++;
        stack[sp] = 2 * node, nlo[sp] = a, nhi[sp] = mid, sp++;
    }
    return n;
}

/* Places it[i]: the smallest gap among the placed buffers it meets that
 * holds it, else right above them.  Fails when that passes INT64_MAX. */
static hop_status
place_one(part *pt, int32_t i)
{
    const item *x = &pt->it[i];
    /* the first of it[] that starts after x ends: none from there meets x */
    int32_t a = 0, b = pt->m;
    while (a < b) {
        int32_t mid = a + (b - a) / 2;
        if (pt->it[mid].def <= x->last)
            a = mid + 1;
        else
            b = mid;
    }
    int32_t n = placed_meeting(pt, a, x->def);
    sort_spans(pt->meet, n);
    int64_t top = 0, best = -1, gap = INT64_MAX;
    for (int32_t k = 0; k < n; k++) {
        if (pt->meet[k].lo - top >= x->size && pt->meet[k].lo - top < gap) {
            best = top;
            gap = pt->meet[k].lo - top;
        }
        if (pt->meet[k].hi > top)
            top = pt->meet[k].hi;
    }
    if (best < 0) {
        int64_t end;
        if (__builtin_add_overflow(top, x->size, &end))
            return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
        best = top;
    }
    pt->off[i] = best;
    mark_placed(pt, i);
    return HOP_OK;
}

/* Packs it[0..m) (one routine's buffers, in order of first use) from
 * offset 0; *top: the end of the highest. */
static hop_status
pack_part(part *pt, item *bysize, int64_t *top)
{
    pt->leaves = 1;
    while (pt->leaves < pt->m)
        pt->leaves *= 2;
    for (int32_t n = 0; n < 2 * pt->leaves; n++)
        pt->tree[n] = -1;
    /* bysize[k].id: the item's position in it[] */
    for (int32_t i = 0; i < pt->m; i++)
        bysize[i] = (item){pt->it[i].size, 0, pt->it[i].def, 0, i};
    if (!is_sorted(bysize, (size_t)pt->m, sizeof *bysize, cmp_size))
        qsort(bysize, (size_t)pt->m, sizeof *bysize, cmp_size);
    *top = 0;
    for (int32_t k = 0; k < pt->m; k++) {
        int32_t i = bysize[k].id;
        hop_status st = place_one(pt, i);
        if (st != HOP_OK)
            return st;
        if (pt->off[i] + pt->it[i].size > *top)
            *top = pt->off[i] + pt->it[i].size;
    }
    return HOP_OK;
}

static size_t
al(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static int32_t
leaves_for(int32_t m)
{
    int32_t leaves = 1;
    while (leaves < m)
        leaves *= 2;
    return leaves;
}

size_t
hop__pack_scratch_bytes(int32_t n)
{
    size_t m = n > 0 ? (size_t)n : 1;
    return 2 * al(m * sizeof(item)) + al(2 * (size_t)leaves_for((int32_t)m) * sizeof(int32_t)) +
           al(m * sizeof(int64_t)) + al(m * sizeof(span));
}

hop_status
hop__pack(const hop__buffer *bufs, int32_t n, const int64_t *bytes, const bool *pick, void *scratch,
          int64_t *off, int64_t *total)
{
    *total = 0;
    int32_t m = 0;
    for (int32_t b = 0; b < n; b++)
        m += pick == NULL || pick[b];
    if (m == 0)
        return HOP_OK;
    /* scratch: laid out as hop__pack_scratch_bytes(n) counts it */
    size_t nn = (size_t)n;
    char *c = scratch;
    item *it = (item *)c;
    c += al(nn * sizeof(item));
    item *bysize = (item *)c;
    c += al(nn * sizeof(item));
    int32_t *tree = (int32_t *)c;
    c += al(2 * (size_t)leaves_for(n) * sizeof(int32_t));
    int64_t *poff = (int64_t *)c;
    c += al(nn * sizeof(int64_t));
    span *meet = (span *)c;
    m = 0;
    for (int32_t b = 0; b < n; b++) {
        if (pick && !pick[b])
            continue;
        int64_t size = bytes[b] < 0 ? 0 : bytes[b];
        if (size > INT64_MAX - (ALIGN - 1))
            return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
        size = (size + ALIGN - 1) / ALIGN * ALIGN;
        it[m++] = (item){size, bufs[b].routine, bufs[b].def, bufs[b].last, b};
    }
    if (!is_sorted(it, (size_t)m, sizeof *it, cmp_time))
        qsort(it, (size_t)m, sizeof *it, cmp_time);
    /* one routine after the other: its part packed from 0, then moved up */
    for (int32_t s = 0; s < m;) {
        int32_t e = s;
        while (e < m && it[e].routine == it[s].routine)
            e++;
        part pt = {it + s, e - s, 0, tree, poff + s, meet};
        int64_t top;
        hop_status st = pack_part(&pt, bysize, &top);
        if (st != HOP_OK)
            return st;
        for (int32_t i = s; i < e; i++)
            off[it[i].id] = *total + poff[i];
        if (__builtin_add_overflow(*total, top, total))
            return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
        s = e;
    }
    return HOP_OK;
}
