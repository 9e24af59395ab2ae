/*
 * lowering/memplan.c - the memory plan: live ranges of the tensors in the
 * block, regions of tensors whose live ranges are disjoint, and the layout
 * of the block at run time.
 *
 * Live ranges are positions in a routine's code.  A slot is live from its
 * first access to its last; a view or an alias extends the range of what it
 * stands for; a range that crosses a loop's boundary covers the whole loop
 * (a value made before a loop and read in it must survive every iteration,
 * and one written in it and read after it must survive the later
 * iterations), while a range inside one iteration is reused by the next.
 * Each routine has its own regions, because a subroutine runs while its
 * callers' values are live.
 *
 * Regions are assigned greedily in order of first use, best fit by the
 * sizes at the symbols' hints.  A region is as large as its largest tensor;
 * regions lie one after the other, 64-byte aligned, in one block.  When
 * every size is constant the offsets are computed here once; otherwise at
 * the first run and again only when the symbols they depend on change.
 * Behind the main regions lie the worker areas of the parallel loops
 * (parmap.c): one copy per worker frame of the regions a loop body's own
 * buffers use.
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
    return (n + ALIGN - 1) / ALIGN * ALIGN;
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
    int64_t *rhint = hop__malloc((cx->nbuffers + 1) * sizeof *rhint);
    int32_t *rcount = hop__calloc(cx->nbuffers + 1, sizeof *rcount);
    int32_t nreg = 0;
    if (!rlast || !rrout || !rhint || !rcount) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    for (size_t i = 0; i < cx->nbuffers; i++) {
        hop__buffer *b = order[i];
        int32_t best = -1;
        for (int32_t r = 0; r < nreg; r++) {
            if (rrout[r] != b->routine || rlast[r] >= b->def)
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
            rhint[best] = 0;
        }
        rlast[best] = b->last;
        if (b->hint > rhint[best])
            rhint[best] = b->hint;
        b->region = best;
        rcount[best]++;
    }
    p->regions = hop__arena_zalloc(&p->arena, ((size_t)nreg + 1) * sizeof *p->regions);
    if (p->regions == NULL) {
        st = HOP_NOMEM;
        goto regions_done;
    }
    p->nregions = nreg;
    for (int32_t r = 0; r < nreg; r++) {
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
    p->static_layout = true;
    for (size_t b = 0; b < cx->nbuffers; b++) {
        const hop__xprog *bx = cx->buffers[b].bytes;
        int64_t esize = (int64_t)hop_dtype_size(cx->slots[cx->buffers[b].slot].dtype);
        p->static_layout =
            p->static_layout && bx && bx->is_const && bx->value / esize <= (int64_t)(SIZE_MAX / 16);
    }
    int64_t off = 0;
    for (int32_t r = 0; r < nreg; r++) {
        hop__region *reg = &p->regions[r];
        reg->offset = off;
        reg->size = 0;
        for (int32_t m = 0; m < reg->nmembers; m++) {
            const hop__buffer *b = &cx->buffers[reg->members[m]];
            int64_t bytes = b->bytes && b->bytes->is_const ? b->bytes->value : b->hint;
            if (bytes > reg->size)
                reg->size = bytes;
        }
        off += align_up(reg->size);
    }
    p->block_bytes = off;

    /* The symbols a symbolic layout depends on: its cache key. */
    if (!p->static_layout) {
        int32_t *regs = hop__arena_alloc(&p->arena, (cx->nregs + 1) * sizeof *regs);
        bool *seen = hop__calloc(cx->nregs + 1, sizeof *seen);
        if (regs == NULL || seen == NULL) {
            hop__free(seen);
            st = HOP_NOMEM;
            goto regions_done;
        }
        int32_t n = 0;
        for (size_t s = 0; s < ns; s++) {
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
    }
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
    hop__free(rhint);
    hop__free(rcount);
done:
    hop__free(rg);
    hop__free(owner);
    hop__free(order);
    return st;
}

/* ------------------------------------------------------------- run time */

int64_t
hop__contig_strides(int rank, const int64_t *sizes, int64_t *strides)
{
    int64_t n = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = n;
        n *= sizes[d];
    }
    return n;
}

void
hop__header(hop_tensor *t, hop_storage *s, hop_dtype dtype, int rank, const int64_t *sizes,
            const int64_t *strides, void *data)
{
    t->dtype = dtype;
    t->rank = rank;
    for (int d = 0; d < rank; d++) {
        t->sizes[d] = sizes[d];
        t->strides[d] = strides[d];
    }
    t->storage = s;
    t->data = data;
    t->offset = s ? ((char *)data - (char *)hop_storage_data(s)) / (int64_t)hop_dtype_size(dtype)
                  : 0;
    t->refcount_ = 0;
    t->flags_ = HOP__T_BORROWED;
}

static hop_status
eval_sizes(const hop__slot *sl, const int64_t *regs, int64_t *sizes)
{
    for (int d = 0; d < sl->rank; d++) {
        hop_status st = hop__xget(sl->sizes[d], regs, &sizes[d]);
        if (st != HOP_OK)
            return st;
        if (sizes[d] < 0)
            return hop_error(HOP_RUNTIME, "%s: size %d is %lld (%s)", sl->name ? sl->name : "tensor",
                             d, (long long)sizes[d], sl->sizes[d]->text);
    }
    return HOP_OK;
}

/* The sizes of a buffer or a late tensor when it is made, checked as eager
 * checks an op's result: too large is HOP_NOMEM naming the op. */
hop_status
hop__slot_sizes(const hop_plan *p, int32_t s, const int64_t *regs, int64_t *sizes, int64_t *numel)
{
    const hop__slot *sl = &p->slots[s];
    hop_status st = eval_sizes(sl, regs, sizes);
    if (st != HOP_OK)
        return st;
    const char *what = sl->what ? sl->what : sl->name;
    return hop__check_shape(what ? what : "tensor", sl->dtype, sl->rank, sizes, numel);
}

static void
release_slot(hop__frame *f, int32_t s)
{
    if (f->owned[s])
        hop_tensor_release(f->owner[s]);
    f->owned[s] = 0;
    f->owner[s] = NULL;
}

/* The block: one byte tensor, grown (replaced) when too small. */
static hop_status
ensure_block(hop__frame *f, int64_t bytes)
{
    if (f->block && (int64_t)hop_storage_nbytes(f->block->storage) >= bytes)
        return HOP_OK;
    int64_t n = bytes < ALIGN ? ALIGN : bytes;
    hop_tensor *b = hop_tensor_empty(HOP_BOOL, 1, &n);
    if (b == NULL)
        return hop_error_code();
    hop_tensor_release(f->block);
    f->block = b;
    f->layout_ok = false;
    return HOP_OK;
}

static hop_status
place(hop__frame *f, const int64_t *offsets)
{
    const hop_plan *p = f->plan;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    char *base = f->block->data;
    for (int32_t b = 0; b < p->nbuffers; b++) {
        const hop__buffer *buf = &p->buffers[b];
        const hop__slot *sl = &p->slots[buf->slot];
        hop_status st = eval_sizes(sl, f->regs, sizes);
        if (st != HOP_OK)
            return st;
        hop__contig_strides(sl->rank, sizes, strides);
        hop__header(&f->slots[buf->slot], f->block->storage, sl->dtype, sl->rank, sizes, strides,
                    base + offsets[b]);
        f->owner[buf->slot] = NULL; /* the block: results are copied out */
    }
    return HOP_OK;
}

/*
 * After the main regions, the block holds one area per worker frame of the
 * parallel loops (parmap.c): a copy of each region that holds a loop body's
 * own buffers, so that workers never share an intermediate.  Their number
 * follows the thread setting, so a run on more threads lays out again.
 */
static hop_status
finish_layout(hop__frame *f, int64_t main_bytes, int64_t warea, int nsub)
{
    int64_t total;
    if (__builtin_mul_overflow(warea, (int64_t)nsub, &total) ||
        __builtin_add_overflow(total, main_bytes, &total))
        return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
    hop_status st;
    if ((st = hop__parmap_reserve(f, nsub)) != HOP_OK || (st = ensure_block(f, total)) != HOP_OK ||
        (st = place(f, f->offsets)) != HOP_OK)
        return st;
    f->wbase = main_bytes;
    f->warea = warea;
    f->nsub = nsub;
    return HOP_OK;
}

hop_status
hop__layout(hop__frame *f)
{
    const hop_plan *p = f->plan;
    hop_status st;
    int nsub = hop__parmap_workers(p);
    if (p->static_layout) {
        if (!f->layout_ok || f->nsub != nsub) {
            f->layout_ok = false;
            int64_t warea = 0;
            for (int32_t r = 0; r < p->nregions; r++) {
                f->woff[r] = -1;
                if (p->wregion && p->wregion[r]) {
                    f->woff[r] = warea;
                    warea += align_up(p->regions[r].size);
                }
            }
            for (int32_t b = 0; b < p->nbuffers; b++)
                f->offsets[b] = p->regions[p->buffers[b].region].offset;
            if ((st = finish_layout(f, p->block_bytes, warea, nsub)) != HOP_OK)
                return st;
            f->layout_ok = true;
        }
    } else {
        bool same = f->layout_ok && f->nsub == nsub;
        for (int32_t i = 0; i < p->nlayout_regs && same; i++)
            same = f->layout_key[i] == f->regs[p->layout_regs[i]];
        if (!same) {
            f->layout_ok = false;
            /* Region sizes at these symbols, offsets one after the other. */
            int64_t off = 0, warea = 0;
            for (int32_t r = 0; r < p->nregions; r++) {
                const hop__region *reg = &p->regions[r];
                int64_t size = 0;
                for (int32_t m = 0; m < reg->nmembers; m++) {
                    /* From the sizes rather than the bytes' expression: the
                     * product is checked, and named, as eager checks it. */
                    const hop__buffer *buf = &p->buffers[reg->members[m]];
                    int64_t sizes[HOP_MAX_RANK], numel;
                    if ((st = hop__slot_sizes(p, buf->slot, f->regs, sizes, &numel)) != HOP_OK)
                        return st;
                    /* at most SIZE_MAX / 16 elements of at most 8 bytes */
                    int64_t bytes = numel * (int64_t)hop_dtype_size(p->slots[buf->slot].dtype);
                    size = bytes > size ? bytes : size;
                }
                for (int32_t m = 0; m < reg->nmembers; m++)
                    f->offsets[reg->members[m]] = off;
                if (__builtin_add_overflow(off, align_up(size), &off))
                    return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
                f->woff[r] = -1;
                if (p->wregion && p->wregion[r]) {
                    f->woff[r] = warea;
                    if (__builtin_add_overflow(warea, align_up(size), &warea))
                        return hop_error(HOP_NOMEM,
                                         "the plan's block would exceed the address space");
                }
            }
            if ((st = finish_layout(f, off, warea, nsub)) != HOP_OK)
                return st;
            for (int32_t i = 0; i < p->nlayout_regs; i++)
                f->layout_key[i] = f->regs[p->layout_regs[i]];
            f->layout_ok = true;
        }
    }
    return HOP_OK;
}

/* Binds the root's output slots: new tensors, or the caller's (run_into). */
hop_status hop__bind_outputs(hop__frame *f, hop_tensor *const *into);

hop_status
hop__bind_outputs(hop__frame *f, hop_tensor *const *into)
{
    const hop_plan *p = f->plan;
    int64_t sizes[HOP_MAX_RANK];
    for (size_t j = 0; j < p->noutputs; j++) {
        int32_t s = p->outslots[j];
        if (s < 0)
            continue;
        const hop__slot *sl = &p->slots[s];
        int64_t numel;
        hop_status st = hop__slot_sizes(p, s, f->regs, sizes, &numel);
        if (st != HOP_OK)
            return st;
        release_slot(f, s);
        hop_tensor *t;
        if (into) {
            t = into[j];
            bool ok = t->dtype == sl->dtype && t->rank == sl->rank;
            for (int d = 0; d < sl->rank && ok; d++)
                ok = t->sizes[d] == sizes[d] && (t->strides[d] != 0 || sizes[d] <= 1);
            if (!ok) {
                hop__ttext a, b;
                hop_tensor want = {.dtype = sl->dtype, .rank = sl->rank};
                memcpy(want.sizes, sizes, sizeof sizes);
                return hop_error(t->dtype != sl->dtype ? HOP_DTYPE : HOP_SHAPE,
                                 "hop_plan_run_into: output %zu (%s) is %s but the result is %s",
                                 j, p->outputs[j].name, hop__tensor_text(&a, t),
                                 hop__tensor_text(&b, &want));
            }
        } else {
            /* The last run's output, if its caller let go of it (nobody else
             * holds the tensor or its storage) and it has the same sizes. */
            t = f->recycle[j];
            f->recycle[j] = NULL;
            bool reuse = t && hop_tensor_refcount(t) == 1 &&
                         __atomic_load_n(&t->storage->refcount, __ATOMIC_ACQUIRE) == 1 &&
                         t->dtype == sl->dtype && t->rank == sl->rank &&
                         memcmp(t->sizes, sizes, (size_t)sl->rank * sizeof *sizes) == 0;
            if (!reuse) {
                hop_tensor_release(t);
                if ((t = hop_tensor_empty(sl->dtype, sl->rank, sizes)) == NULL)
                    return hop_error_code();
            }
            f->owned[s] = 1;
        }
        f->owner[s] = t;
        hop__header(&f->slots[s], t->storage, t->dtype, t->rank, t->sizes, t->strides, t->data);
    }
    return HOP_OK;
}
