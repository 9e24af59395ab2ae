/*
 * lowering/memplan.c - the memory plan: live ranges of the tensors in the
 * block, and their offsets when every size is constant.
 *
 * Live ranges are positions in a routine's code.  A slot is live from its
 * first access to its last; a view or an alias extends the range of what it
 * stands for (the two buffers of a loop carry, which Swap exchanges, stand
 * for each other: either may hold the other's memory, also at the next
 * run's start); a range that crosses a loop's boundary covers the whole loop
 * (a value made before a loop and read in it must survive every iteration,
 * and one written in it and read after it must survive the later
 * iterations), while a range inside one iteration is reused by the next.
 * Each routine's buffers lie apart from every other routine's, because a
 * subroutine runs while its callers' values are live.
 *
 * Offsets come from packing the buffers by size (runtime/pack.c): two
 * whose live ranges meet never overlap, 64-byte aligned, in one block.
 * The buffers of a lazy section (hop_lower_if_lazy: a branch a run takes
 * only when its values are small enough) are packed in a block of the
 * section's own that a run lays out only when it enters the section: they
 * never share memory with the block's buffers, so a run that skips the
 * section reserves nothing for them.  When every size is constant the
 * offsets are computed here once; otherwise the VM packs the buffers at
 * their sizes (runtime/frame.c) at the first run and again only when the
 * symbols they depend on change.  Which buffers the parallel loops'
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
 * be made), and then each buffer's offset in its section's block and the
 * sections' sizes (runtime/pack.c; the VM lays out a symbolic layout with
 * the same function at its sizes). */
static hop_status
static_offsets(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    /* A constant tensor too large to make is checked (and named) at run
     * time, by the symbolic layout, like sizes bound at run time; so is a
     * block whose buffers' sizes add up past INT64_MAX (the packing's
     * total is at most their sum, so a static one cannot overflow). */
    p->static_layout = true;
    int64_t sum = 0;
    for (size_t b = 0; b < cx->nbuffers && p->static_layout; b++) {
        const hop__xprog *bx = cx->buffers[b].bytes;
        int64_t esize = (int64_t)hop_dtype_size(cx->slots[cx->buffers[b].slot].dtype);
        p->static_layout = bx && bx->is_const && bx->value / esize <= (int64_t)(SIZE_MAX / 16) &&
                           !__builtin_add_overflow(sum, align_up(bx->value), &sum) &&
                           sum <= INT64_MAX - ALIGN;
    }
    if (!p->static_layout || cx->nbuffers == 0)
        return HOP_OK;
    size_t n = cx->nbuffers;
    int64_t *bytes = hop__malloc(n * sizeof *bytes), *off = hop__malloc(n * sizeof *off);
    bool *pick = hop__malloc(n * sizeof *pick);
    void *scratch = hop__malloc(hop__pack_scratch_bytes((int32_t)n));
    hop_status st = bytes && off && pick && scratch ? HOP_OK : HOP_NOMEM;
    if (st != HOP_OK)
        hop_error(HOP_NOMEM, "out of memory planning the block");
    for (size_t b = 0; b < n && st == HOP_OK; b++)
        bytes[b] = cx->buffers[b].bytes->value;
    for (int32_t k = 0; k <= cx->nsections && st == HOP_OK; k++) {
        for (size_t b = 0; b < n; b++)
            pick[b] = cx->buffers[b].section == k;
        st = hop__pack(cx->buffers, (int32_t)n, bytes, pick, scratch, off, &p->section_bytes[k]);
        if (st != HOP_OK)
            break;
        for (size_t b = 0; b < n; b++)
            if (pick[b])
                cx->buffers[b].offset = off[b];
    }
    hop__free(bytes);
    hop__free(off);
    hop__free(pick);
    hop__free(scratch);
    return st;
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

hop_status
hop__memplan(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    size_t ns = cx->nslots;
    range *rg = hop__malloc((ns + 1) * sizeof *rg);
    int32_t *owner = hop__malloc((ns + 1) * sizeof *owner);
    hop_status st = HOP_OK;
    if (rg == NULL || owner == NULL) {
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
    }
    p->nsections = cx->nsections;
    p->section_bytes =
        hop__arena_zalloc(&p->arena, ((size_t)cx->nsections + 1) * sizeof *p->section_bytes);
    if (p->section_bytes == NULL) {
        st = HOP_NOMEM;
        goto done;
    }
    /* Static plans get their offsets now; a symbolic one's depend on the
     * symbols, its layout's cache key. */
    if ((st = static_offsets(cx)) != HOP_OK)
        goto done;
    p->block_bytes = p->static_layout ? p->section_bytes[0] : 0;
    if (!p->static_layout && (st = layout_key(cx)) != HOP_OK)
        goto done;
    p->buffers = hop__arena_alloc(&p->arena, (cx->nbuffers + 1) * sizeof *p->buffers);
    if (p->buffers == NULL) {
        st = HOP_NOMEM;
        goto done;
    }
    if (cx->nbuffers)
        memcpy(p->buffers, cx->buffers, cx->nbuffers * sizeof *p->buffers);
    p->nbuffers = (int32_t)cx->nbuffers;
    st = hop__parmap_plan(cx);
done:
    hop__free(rg);
    hop__free(owner);
    return st;
}
