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
 * While the order by size is the order of first use (the buffers of a
 * trace, most of one size), the placed buffers a buffer meets are those
 * still live when it starts: a sweep over time keeps them (sweep).  Else
 * the placed buffers are found two ways: in a tree by first use (the
 * latest last use under each node), to list those a buffer meets and sort
 * them by offset, and, once a buffer meets many, in a treap by offset (the
 * first and last uses under each node), to walk the gaps upward through
 * the subtrees that may meet it; place_one lets the two take turns.  A
 * buffer that meets every placed one goes on top without either.  Buffers
 * of different routines always meet (a subroutine runs while its callers'
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

typedef struct span {
    int64_t lo, hi;
} span;

/* Sorts the spans a buffer meets by their start.  Spans that start
 * together may come in any order: they all hold bytes (a buffer of none
 * is never listed, see place_one), so the first of them ends past their
 * start and the gap below them is the same whichever comes first.  An
 * introsort: quicksort on the median of three, insertion sort for short
 * runs, heapsort past 2 log2 n levels; glibc's qsort, through the
 * comparison's pointer, took half the time of a placement that met
 * thousands. */
static void
sift(span *s, int32_t at, int32_t n)
{
    span v = s[at];
    for (int32_t c; (c = 2 * at + 1) < n; at = c) {
        if (c + 1 < n && s[c + 1].lo > s[c].lo)
            c++;
        if (s[c].lo <= v.lo)
            break;
        s[at] = s[c];
    }
    s[at] = v;
}

static void
sort_spans(span *s, int32_t n)
{
    int32_t depth = 0;
    for (int32_t k = n; k > 1; k /= 2)
        depth += 2;
    while (n > 16) {
        if (depth-- == 0) {
            for (int32_t k = n / 2; k-- > 0;)
                sift(s, k, n);
            for (int32_t k = n; --k > 0;) {
                span t = s[0];
                s[0] = s[k], s[k] = t;
                sift(s, 0, k);
            }
            return;
        }
        int64_t a = s[0].lo, b = s[n / 2].lo, c = s[n - 1].lo;
        int64_t p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        int32_t i = 0, j = n - 1;
        for (;;) { /* Hoare: s[0..j] <= p <= s[j+1..n) */
            while (s[i].lo < p)
                i++;
            while (s[j].lo > p)
                j--;
            if (i >= j)
                break;
            span t = s[i];
            s[i++] = s[j], s[j--] = t;
        }
        /* the shorter side sorted now, the longer one by the loop */
        if (j + 1 < n - (j + 1)) {
            sort_spans(s, j + 1);
            s += j + 1, n -= j + 1;
        } else {
            sort_spans(s + j + 1, n - (j + 1));
            n = j + 1;
        }
    }
    for (int32_t i = 1; i < n; i++) {
        span v = s[i];
        int32_t j = i;
        for (; j > 0 && s[j - 1].lo > v.lo; j--)
            s[j] = s[j - 1];
        s[j] = v;
    }
}

/* A placed buffer in the treap of its part: ordered by offset (a buffer
 * placed later at an offset already taken goes after those there), a heap
 * by prio, and what the buffers under it (itself and its subtrees) span:
 * their first and last uses, the lowest offset and the highest end, and
 * whether they cover [lo, hi) without a gap. */
typedef struct node {
    int32_t l, r;
    uint32_t prio;
    int32_t min_def, max_def, min_last, max_last;
    bool dense;
    int64_t lo, hi;
} node;

/* The packing of one routine's buffers it[0..m), in order of first use. */
typedef struct part {
    item *it;
    int32_t m, leaves;
    int32_t *tree;     /* 2 * leaves: the latest last use of the placed under a node */
    int64_t *off;      /* per item (its position in it), its offset once placed */
    span *meet;        /* scratch: m entries, the placed buffers one buffer meets */
    node *t;           /* per item, its treap node once placed and the treap built */
    int32_t *stack;    /* scratch: m entries, a path through the treap */
    const item *order; /* the items in the order they are placed (ids) */
    int32_t root;
    uint32_t seed;
    bool treap;  /* whether the placed buffers are in the treap */
    bool walked; /* whether the last placement's walk found its gap */
    bool marked; /* whether the placed buffers are in the tree (not while sweeping) */
    /* the placed buffers: how many, the end of the highest, the latest
     * first use and the earliest last use */
    int32_t placed, max_def, min_last;
    int64_t top;
} part;

/* Sums node i's subtree again from its own buffer and its children.  The
 * subtree's buffers are in order of offset (left, i, right): they leave no
 * gap when each side leaves none and each part starts at or below the end
 * of those before it. */
static void
pull(part *pt, int32_t i)
{
    node *n = &pt->t[i];
    const item *x = &pt->it[i];
    n->min_def = n->max_def = x->def;
    n->min_last = n->max_last = x->last;
    n->lo = pt->off[i];
    n->hi = pt->off[i] + x->size;
    n->dense = true;
    for (int side = 0; side < 2; side++) {
        int32_t k = side == 0 ? n->l : n->r;
        if (k < 0)
            continue;
        const node *c = &pt->t[k];
        n->min_def = c->min_def < n->min_def ? c->min_def : n->min_def;
        n->max_def = c->max_def > n->max_def ? c->max_def : n->max_def;
        n->min_last = c->min_last < n->min_last ? c->min_last : n->min_last;
        n->max_last = c->max_last > n->max_last ? c->max_last : n->max_last;
        /* left: its buffers come first, then i's (at n->lo); right: after */
        n->dense = n->dense && c->dense && (side == 0 ? n->lo <= c->hi : c->lo <= n->hi);
        if (side == 0)
            n->lo = c->lo;
        n->hi = c->hi > n->hi ? c->hi : n->hi;
    }
}

/* Adds placed it[i] (pt->off[i] set) to the treap: down from the root while
 * the nodes outrank it, then the subtree there split around its offset
 * under it; the nodes whose subtrees changed are summed again, deepest
 * first.  The path is O(log n) long in expectation whatever the offsets. */
static void
insert(part *pt, int32_t i)
{
    pt->seed ^= pt->seed << 13; /* xorshift32 */
    pt->seed ^= pt->seed >> 17;
    pt->seed ^= pt->seed << 5;
    node *x = &pt->t[i];
    x->prio = pt->seed;
    int64_t key = pt->off[i];
    int32_t n = 0, *hook = &pt->root;
    while (*hook >= 0 && pt->t[*hook].prio > x->prio) {
        int32_t c = *hook;
        pt->stack[n++] = c;
        hook = key < pt->off[c] ? &pt->t[c].l : &pt->t[c].r;
    }
    int32_t rest = *hook, path = n;
    *hook = i;
    int32_t *lh = &x->l, *rh = &x->r;
    while (rest >= 0) {
        pt->stack[n++] = rest;
        if (pt->off[rest] <= key) {
            *lh = rest;
            lh = &pt->t[rest].r;
            rest = *lh;
        } else {
            *rh = rest;
            rh = &pt->t[rest].l;
            rest = *rh;
        }
    }
    *lh = *rh = -1;
    while (n > path)
        pull(pt, pt->stack[--n]);
    pull(pt, i);
    while (n > 0)
        pull(pt, pt->stack[--n]);
}

/* Marks it[i] placed in the tree by first use: the latest last use under
 * each node above its leaf. */
static void
mark_placed(part *pt, int32_t i)
{
    int32_t v = pt->it[i].last;
    for (int32_t n = pt->leaves + i; n >= 1 && pt->tree[n] < v; n /= 2)
        pt->tree[n] = v;
}

/* Puts it[i] at offset `at`.  Fails when its end passes INT64_MAX. */
static hop_status
place_at(part *pt, int32_t i, int64_t at)
{
    const item *x = &pt->it[i];
    int64_t end;
    if (__builtin_add_overflow(at, x->size, &end))
        return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
    pt->off[i] = at;
    if (pt->marked)
        mark_placed(pt, i);
    if (pt->treap)
        insert(pt, i);
    if (pt->placed++ == 0 || x->def > pt->max_def)
        pt->max_def = x->def;
    if (pt->placed == 1 || x->last < pt->min_last)
        pt->min_last = x->last;
    if (end > pt->top)
        pt->top = end;
    return HOP_OK;
}

/* The placed buffers among it[0..upper) whose last use is at or after lo
 * (those meeting a buffer that starts at lo and ends before it[upper]
 * starts): their spans into pt->meet.  Returns how many, or -1 past cap. */
static int32_t
placed_meeting(const part *pt, int32_t upper, int32_t lo, int32_t cap)
{
    int32_t stack[2 * 32 + 2], sp = 0, n = 0;
    int32_t nlo[2 * 32 + 2], nhi[2 * 32 + 2];
    stack[sp] = 1, nlo[sp] = 0, nhi[sp] = pt->leaves, sp++;
    while (sp > 0) {
        sp--;
        int32_t at = stack[sp], a = nlo[sp], b = nhi[sp];
        if (a >= upper || pt->tree[at] < lo)
            continue;
        if (at >= pt->leaves) {
            if (n == cap)
                return -1;
            int32_t i = at - pt->leaves;
            pt->meet[n++] = (span){pt->off[i], pt->off[i] + pt->it[i].size};
            continue;
        }
        int32_t mid = a + (b - a) / 2;
        stack[sp] = 2 * at + 1, nlo[sp] = mid, nhi[sp] = b, sp++;
        stack[sp] = 2 * at, nlo[sp] = a, nhi[sp] = mid, sp++;
    }
    return n;
}

/* The gap search of one placement: below `top` every placed buffer that
 * meets x in time has been passed; the best gap so far is [best, best +
 * gap). */
typedef struct search {
    const item *x;
    int64_t top, best, gap;
} search;

/* Passes the span [lo, hi) of buffers meeting x that start at or above
 * every one passed before: the gap below it, if x fits and it is the
 * smallest yet.  True when that gap is exactly x's size (none is smaller:
 * the search is over). */
static bool
pass(search *s, int64_t lo, int64_t hi)
{
    if (lo - s->top >= s->x->size && lo - s->top < s->gap) {
        s->best = s->top;
        s->gap = lo - s->top;
        if (s->gap == s->x->size)
            return true;
    }
    if (hi > s->top)
        s->top = hi;
    return false;
}

/* A walk through the treap for x's gap (see place_one), resumable: the
 * node it goes down from next (c) and the path above it, sp entries on the
 * part's stack. */
typedef struct walk {
    search s;
    int32_t c, sp;
} walk;

/* Goes on with w for `budget` more nodes: true when the walk is over, the
 * gap in w->s. */
static bool
walk_on(part *pt, walk *w, int32_t budget)
{
    const item *x = w->s.x;
    int32_t sp = w->sp, c = w->c;
    for (;;) {
        while (c >= 0) {
            if (--budget < 0) {
                w->c = c, w->sp = sp;
                return false;
            }
            const node *t = &pt->t[c];
            if (t->max_last < x->def || t->min_def > x->last)
                break; /* none meets x */
            if (t->dense && t->min_last >= x->def && t->max_def <= x->last) {
                if (pass(&w->s, t->lo, t->hi))
                    return true;
                break; /* all meet x, no gap among them */
            }
            pt->stack[sp++] = c;
            c = t->l;
        }
        if (sp == 0)
            return true;
        c = pt->stack[--sp];
        const item *y = &pt->it[c];
        if (y->last >= x->def && y->def <= x->last && pass(&w->s, pt->off[c], pt->off[c] + y->size))
            return true;
        c = pt->t[c].r;
    }
}

/* How many placed buffers the first listing of a placement may hold. */
#ifndef PACK_LIST
#define PACK_LIST 16
#endif

/* Places it[i]: the smallest gap among the placed buffers it meets in time
 * that holds it (the lowest of the smallest), else right above them.
 *
 * Every buffer lands at or below the top of those placed before it, so
 * together they cover [0, top) without a gap: one that meets all of them
 * goes at the top; one of no bytes at 0 (they are placed last).
 * Otherwise the gap is found one of two ways:
 * - listing the buffers it meets off the tree by first use (the first of
 *   it[] that starts after x ends bounds them) and sorting them by offset:
 *   O(k log k) for k buffers met, the way when k is small;
 * - walking the treap by offset: a subtree whose buffers all end before x
 *   starts or all start after it ends is skipped, one whose buffers all
 *   meet x and leave no gap is passed as one span, and the walk ends at a
 *   gap of exactly x's size.  Values all live at once (a body's lifted
 *   captures and the terms of a sum over them) pass as a few spans where
 *   listing them for each placement was O(n^2 log n) (10,000 values
 *   lifted through three levels took ~3 s, tests/c/test_scale.c); scattered short ranges defeat the
 *   skipping (a subtree holds buffers both before and after x).
 * Neither is known to be cheaper beforehand: they take turns, each allowed
 * four times the work of its last turn (and the one that finished the
 * last placement first), until one finishes: a placement costs at most a
 * few times the cheaper of the two.  Both find the same gap. */
static hop_status
place_one(part *pt, int32_t i)
{
    const item *x = &pt->it[i];
    if (x->size == 0)
        return place_at(pt, i, 0);
    if (pt->placed == 0 || (pt->max_def <= x->last && pt->min_last >= x->def))
        return place_at(pt, i, pt->top);
    int32_t a = 0, b = pt->m;
    while (a < b) {
        int32_t mid = a + (b - a) / 2;
        if (pt->it[mid].def <= x->last)
            a = mid + 1;
        else
            b = mid;
    }
    walk w = {{x, 0, -1, INT64_MAX}, -1, 0};
    bool walking = false;
    int32_t n;
    /* the treap is built when a placement first meets more than 4 *
     * PACK_LIST: till then every list is allowed that many */
    for (int32_t cap = pt->treap ? PACK_LIST : 4 * PACK_LIST;;
         cap = cap > pt->m / 4 ? pt->m : 4 * cap) {
        if (!pt->walked && (n = placed_meeting(pt, a, x->def, cap)) >= 0)
            break;
        if (!pt->treap) {
            pt->treap = true;
            for (int32_t k = 0; k < pt->placed; k++)
                insert(pt, pt->order[k].id);
        }
        if (!walking)
            w.c = pt->root, walking = true;
        if ((pt->walked = walk_on(pt, &w, cap > INT32_MAX / 4 ? INT32_MAX : 4 * cap)))
            return place_at(pt, i, w.s.best < 0 ? w.s.top : w.s.best);
    }
    search s = {x, 0, -1, INT64_MAX};
    sort_spans(pt->meet, n);
    for (int32_t k = 0; k < n; k++)
        if (pass(&s, pt->meet[k].lo, pt->meet[k].hi))
            break;
    return place_at(pt, i, s.best < 0 ? s.top : s.best);
}

/* Places the items of pt->order from *k on while that order is by first
 * use, as one sweep over time; *k: the first it has not placed.
 *
 * The buffers of a trace mostly come in one size, so their order by size is
 * the order of first use, and few of them are live at once (a cond call's
 * predicate, its branches' values and the result the next call reads).
 * Placed in order of first use, the placed buffers a buffer meets are
 * exactly those still live when it starts (each started no later): a list
 * the sweep keeps, dropping each buffer once a placement starts past its
 * last use (none placed after meets it either).  Sorted by offset, the
 * list gives the gap place_one's listing gives, without the tree by first
 * use, its bisection and its walk down from the root: 106 instructions a
 * buffer of a loop of cond calls where place_one took 465 (callgrind,
 * exclusive; the largest exclusive cost of lowering a cond call).  The
 * sweep stops at a buffer of no bytes (they are placed last, see
 * place_one), at one that starts before the last placed (the order by size
 * is no longer by first use), and where PACK_LIST or more placed buffers
 * are live (sorting them for every placement would cost what listing
 * costs): place_one places the rest, the tree by first use built then. */
static hop_status
sweep(part *pt, int32_t *k)
{
    int32_t *live = pt->stack, nlive = 0; /* the treap's path, unused until place_one */
    for (; *k < pt->m; (*k)++) {
        int32_t i = pt->order[*k].id;
        const item *x = &pt->it[i];
        if (x->size == 0 || (*k > 0 && x->def < pt->max_def))
            break;
        int32_t n = 0;
        for (int32_t j = 0; j < nlive; j++) {
            int32_t y = live[j];
            if (pt->it[y].last >= x->def) {
                live[n] = y;
                pt->meet[n++] = (span){pt->off[y], pt->off[y] + pt->it[y].size};
            }
        }
        if (n >= PACK_LIST)
            break;
        nlive = n;
        search s = {x, 0, -1, INT64_MAX};
        sort_spans(pt->meet, n);
        for (int32_t j = 0; j < n; j++)
            if (pass(&s, pt->meet[j].lo, pt->meet[j].hi))
                break;
        hop_status st = place_at(pt, i, s.best < 0 ? s.top : s.best);
        if (st != HOP_OK)
            return st;
        live[nlive++] = i;
    }
    return HOP_OK;
}

/* The leaves of a tree over m items: the least power of two >= m. */
static int32_t
leaves_for(int32_t m)
{
    int32_t leaves = 1;
    while (leaves < m)
        leaves *= 2;
    return leaves;
}

/* Packs it[0..m) (one routine's buffers, in order of first use) from
 * offset 0; *top: the end of the highest. */
static hop_status
pack_part(part *pt, item *bysize, int64_t *top)
{
    /* bysize[k].id: the item's position in it[] */
    for (int32_t i = 0; i < pt->m; i++)
        bysize[i] = (item){pt->it[i].size, 0, pt->it[i].def, 0, i};
    if (!is_sorted(bysize, (size_t)pt->m, sizeof *bysize, cmp_size))
        qsort(bysize, (size_t)pt->m, sizeof *bysize, cmp_size);
    pt->order = bysize;
    pt->root = -1;
    pt->seed = 0x9e3779b9u;
    pt->treap = pt->walked = false;
    pt->placed = 0;
    pt->top = 0;
    pt->marked = false;
    int32_t k = 0;
    hop_status st = sweep(pt, &k);
    if (st != HOP_OK)
        return st;
    if (k < pt->m) { /* the tree by first use, of the buffers the sweep placed */
        pt->leaves = leaves_for(pt->m);
        for (int32_t n = 0; n < 2 * pt->leaves; n++)
            pt->tree[n] = -1;
        for (int32_t j = 0; j < k; j++)
            mark_placed(pt, bysize[j].id);
        pt->marked = true;
    }
    for (; k < pt->m; k++)
        if ((st = place_one(pt, bysize[k].id)) != HOP_OK)
            return st;
    *top = pt->top;
    return HOP_OK;
}

static size_t
al(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

size_t
hop__pack_scratch_bytes(int32_t n)
{
    size_t m = n > 0 ? (size_t)n : 1;
    return 2 * al(m * sizeof(item)) + al(2 * (size_t)leaves_for((int32_t)m) * sizeof(int32_t)) +
           al(m * sizeof(int64_t)) + al(m * sizeof(span)) + al(m * sizeof(node)) +
           al(m * sizeof(int32_t));
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
    c += al(nn * sizeof(span));
    node *nodes = (node *)c;
    c += al(nn * sizeof(node));
    int32_t *stack = (int32_t *)c;
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
        part pt = {.it = it + s,
                   .m = e - s,
                   .tree = tree,
                   .off = poff + s,
                   .meet = meet,
                   .t = nodes + s,
                   .stack = stack};
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
