/*
 * lowering/memplan.c - the memory plan: live ranges of the tensors in the
 * block, regions of tensors whose live ranges are disjoint, and their
 * offsets when every size is constant.
 *
 * Live ranges are positions in a routine's code.  A slot is live from its
 * first access to its last; a view or an alias extends the range of what it
 * stands for (the two buffers of a loop carry, which Swap exchanges, stand
 * for each other: either may hold either region, also at the next run's
 * start); a range that crosses a loop's boundary covers the whole loop
 * (a value made before a loop and read in it must survive every iteration,
 * and one written in it and read after it must survive the later
 * iterations), while a range inside one iteration is reused by the next.
 * Each routine has its own regions, because a subroutine runs while its
 * callers' values are live.
 *
 * Regions are assigned greedily in order of first use, best fit by the
 * sizes at the symbols' hints.  A region is as large as its largest tensor;
 * regions lie one after the other, 64-byte aligned, in one block.  The
 * buffers of a lazy section (hop_lower_if_lazy: a branch a run takes only
 * when its values are small enough) have regions of their own, in a block
 * of the section's own that a run lays out only when it enters the
 * section: they never share a region with the block's buffers, so a run
 * that skips the section reserves nothing for them.  When
 * every size is constant the offsets are computed here once; otherwise the
 * VM computes them (runtime/frame.c) at the first run and again only when
 * the symbols they depend on change.  Which regions the parallel loops'
 * workers need copies of is parplan.c's.
 */
#include "lowering/lowering_impl.h"

#include <stdlib.h>

#define ALIGN 64

typedef struct range {
    int32_t lo, hi;
} range;

static bool
widen(range *r, range w)
{
    if (w.hi < 0)
        return false;
    bool changed = false;
    if (r->hi < 0) {
        *r = w;
        return true;
    }
    if (w.lo < r->lo) {
        r->lo = w.lo;
        changed = true;
    }
    if (w.hi > r->hi) {
        r->hi = w.hi;
        changed = true;
    }
    return changed;
}

/* By first use, then by slot (a stable order for equal starts). */
static int
cmp_def(const void *a, const void *b)
{
    const hop__buffer *x = *(hop__buffer *const *)a, *y = *(hop__buffer *const *)b;
    if (x->def != y->def)
        return x->def < y->def ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

static int64_t
align_up(int64_t n)
{
    return n > INT64_MAX - (ALIGN - 1) ? INT64_MAX / ALIGN * ALIGN
                                       : (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* Each slot's live range (first and last access, positions of its
 * routine's code) and the routine that owns it: widened through aliases
 * (a view lives as long as what it views) and over every loop it is live
 * in part of, until nothing changes. */
static void
live_ranges(const hop_lower_ctx *cx, range *rg, int32_t *owner)
{
    size_t ns = cx->nslots;
    for (size_t s = 0; s < ns; s++) {
        rg[s] = (range){INT32_MAX, -1};
        owner[s] = -1;
    }
    for (size_t r = 0; r < cx->nroutines; r++) {
        const hop__rcode *rc = &cx->routines[r];
        for (size_t i = 0; i < rc->nacc; i++) {
            const hop__acc *a = &rc->acc[i];
            widen(&rg[a->slot], (range){a->pos, a->pos});
            owner[a->slot] = (int32_t)r;
        }
    }
    /* Aliases and loops until nothing changes. */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < cx->naliases; i++) {
            const hop__alias *a = &cx->aliases[i];
            if (owner[a->slot] != owner[a->of] && owner[a->slot] >= 0 && owner[a->of] >= 0)
                continue;
            changed |= widen(&rg[a->of], rg[a->slot]);
            if (owner[a->of] < 0)
                owner[a->of] = owner[a->slot];
        }
        for (size_t s = 0; s < ns; s++) {
            if (owner[s] < 0 || rg[s].hi < 0)
                continue;
            const hop__rcode *rc = &cx->routines[owner[s]];
            for (size_t l = 0; l < rc->nloops; l++) {
                range lp = {rc->loops[l].start, rc->loops[l].end};
                bool meets = rg[s].lo <= lp.hi && rg[s].hi >= lp.lo;
                bool inside = rg[s].lo >= lp.lo && rg[s].hi <= lp.hi;
                if (meets && !inside)
                    changed |= widen(&rg[s], lp);
            }
        }
    }
}

/* Whether the layout is static (every buffer of a constant size that can
 * be made), and each region's size and offset in its section: for a
 * symbolic layout, at the hints. */
static void
region_offsets(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    p->static_layout = true;
    for (size_t b = 0; b < cx->nbuffers; b++) {
        const hop__xprog *bx = cx->buffers[b].bytes;
        int64_t esize = (int64_t)hop_dtype_size(cx->slots[cx->buffers[b].slot].dtype);
        p->static_layout =
            p->static_layout && bx && bx->is_const && bx->value / esize <= (int64_t)(SIZE_MAX / 16);
    }
    for (int32_t r = 0; r < p->nregions; r++) {
        hop__region *reg = &p->regions[r];
        int64_t *off = &p->section_bytes[reg->section];
        reg->offset = *off;
        reg->size = 0;
        for (int32_t m = 0; m < reg->nmembers; m++) {
            const hop__buffer *b = &cx->buffers[reg->members[m]];
            int64_t bytes = b->bytes && b->bytes->is_const ? b->bytes->value : b->hint;
            if (bytes > reg->size)
                reg->size = bytes;
        }
        /* Saturating: sizes at the hints may be anything a saved file says
         * (a run allocates what its sizes need, and fails as eager would). */
        int64_t a = align_up(reg->size);
        *off = *off > INT64_MAX - a ? INT64_MAX : *off + a;
    }
    p->block_bytes = p->section_bytes[0];
}

/* The registers of the symbols a symbolic layout's buffer sizes read, each
 * once: the layout's cache key. */
static hop_status
layout_key(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    int32_t *regs = hop__arena_alloc(&p->arena, (cx->nregs + 1) * sizeof *regs);
    bool *seen = hop__calloc(cx->nregs + 1, sizeof *seen);
    if (regs == NULL || seen == NULL) {
        hop__free(seen);
        return HOP_NOMEM;
    }
    int32_t n = 0;
    for (size_t s = 0; s < cx->nslots; s++) {
        const hop__slot *sl = &cx->slots[s];
        if (sl->kind != HOP__S_BUFFER)
            continue;
        for (int d = 0; d < sl->rank; d++)
            for (int k = 0; k < sl->sizes[d]->nsyms; k++)
                if (!seen[sl->sizes[d]->regs[k]]) {
                    seen[sl->sizes[d]->regs[k]] = true;
                    regs[n++] = sl->sizes[d]->regs[k];
                }
    }
    hop__free(seen);
    p->layout_regs = regs;
    p->nlayout_regs = n;
    return HOP_OK;
}

/* Each buffer of order (by first use) into a region: greedy, best fit at
 * the hints, a region of the same routine and section whose last use is
 * before the buffer's first.  The regions' last use, routine, section,
 * hint and member count in the arrays (nbuffers long); returns how many. */
static int32_t
assign_regions(hop__buffer **order, size_t nbuffers, int32_t *rlast, int32_t *rrout, int32_t *rsec,
               int64_t *rhint, int32_t *rcount)
{
    int32_t nreg = 0;
    for (size_t i = 0; i < nbuffers; i++) {
        hop__buffer *b = order[i];
        int32_t best = -1;
        for (int32_t r = 0; r < nreg; r++) {
            if (rrout[r] != b->routine || rsec[r] != b->section || rlast[r] >= b->def)
                continue;
            if (best < 0) {
                best = r;
                continue;
            }
            /* Prefer a region that holds b already, the smallest such;
             * else the largest (it grows least). */
            bool fits = rhint[r] >= b->hint, bfits = rhint[best] >= b->hint;
            if ((fits && (!bfits || rhint[r] < rhint[best])) ||
                (!fits && !bfits && rhint[r] > rhint[best]))
                best = r;
        }
        if (best < 0) {
            best = nreg++;
            rrout[best] = b->routine;
            rsec[best] = b->section;
            rhint[best] = 0;
        }
        rlast[best] = b->last;
        if (b->hint > rhint[best])
            rhint[best] = b->hint;
        b->region = best;
        rcount[best]++;
    }
    return nreg;
}

hop_status
hop__memplan(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    size_t ns = cx->nslots;
    range *rg = hop__malloc((ns + 1) * sizeof *rg);
    int32_t *owner = hop__malloc((ns + 1) * sizeof *owner);
    hop__buffer **order = hop__malloc((cx->nbuffers + 1) * sizeof *order);
    hop_status st = HOP_OK;
    if (rg == NULL || owner == NULL || order == NULL) {
        st = HOP_NOMEM;
        goto done;
    }
    live_ranges(cx, rg, owner);
    for (size_t b = 0; b < cx->nbuffers; b++) {
        hop__buffer *buf = &cx->buffers[b];
        range r = rg[buf->slot];
        if (r.hi < 0)
            r = (range){0, 0};
        buf->def = r.lo;
        buf->last = r.hi;
        if (owner[buf->slot] >= 0)
            buf->routine = owner[buf->slot];
        order[b] = buf;
    }
    qsort(order, cx->nbuffers, sizeof *order, cmp_def);

    /* Regions: greedy in order of first use, best fit at the hints. */
    int32_t *rlast = hop__malloc((cx->nbuffers + 1) * sizeof *rlast);
    int32_t *rrout = hop__malloc((cx->nbuffers + 1) * sizeof *rrout);
    int32_t *rsec = hop__malloc((cx->nbuffers + 1) * sizeof *rsec);
    int64_t *rhint = hop__malloc((cx->nbuffers + 1) * sizeof *rhint);
    int32_t *rcount = hop__calloc(cx->nbuffers + 1, sizeof *rcount);
    int32_t nreg = 0;
    if (!rlast || !rrout || !rsec || !rhint || !rcount) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    nreg = assign_regions(order, cx->nbuffers, rlast, rrout, rsec, rhint, rcount);
    p->regions = hop__arena_zalloc(&p->arena, ((size_t)nreg + 1) * sizeof *p->regions);
    if (p->regions == NULL) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    p->nregions = nreg;
    p->nsections = cx->nsections;
    p->section_bytes =
        hop__arena_zalloc(&p->arena, ((size_t)cx->nsections + 1) * sizeof *p->section_bytes);
    if (p->section_bytes == NULL) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    for (int32_t r = 0; r < nreg; r++) {
        p->regions[r].section = rsec[r];
        p->regions[r].members =
            hop__arena_alloc(&p->arena, ((size_t)rcount[r] + 1) * sizeof(int32_t));
        if (p->regions[r].members == NULL) {
            st = HOP_NOMEM;
            goto regions_done;
        }
    }
    for (size_t i = 0; i < cx->nbuffers; i++) {
        hop__region *r = &p->regions[order[i]->region];
        r->members[r->nmembers++] = (int32_t)(order[i] - cx->buffers);
    }

    /* Static plans get their offsets now. */
    /* A constant tensor too large to make is checked (and named) at run
     * time, by the symbolic layout, like sizes bound at run time. */
    region_offsets(cx);

    /* The symbols a symbolic layout depends on: its cache key. */
    if (!p->static_layout && (st = layout_key(cx)) != HOP_OK)
        goto regions_done;
    p->buffers = hop__arena_alloc(&p->arena, (cx->nbuffers + 1) * sizeof *p->buffers);
    if (p->buffers == NULL) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    if (cx->nbuffers)
        memcpy(p->buffers, cx->buffers, cx->nbuffers * sizeof *p->buffers);
    p->nbuffers = (int32_t)cx->nbuffers;
    st = hop__parmap_plan(cx);
regions_done:
    hop__free(rlast);
    hop__free(rrout);
    hop__free(rsec);
    hop__free(rhint);
    hop__free(rcount);
done:
    hop__free(rg);
    hop__free(owner);
    hop__free(order);
    return st;
}
