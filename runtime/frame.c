/*
 * runtime/frame.c - plans and frames: a plan's lifetime and accessors,
 * frames (everything one run writes: slot headers, registers, the call
 * stack, kernel caches, the block, the storage of late tensors) and the
 * worker frames of parallel loops, the layout of the block at run time,
 * the binding of output tensors, late tensors, and interrupts.
 *
 * A plan keeps one idle frame, taken and given back with an atomic
 * exchange, so consecutive runs reuse it and concurrent runs each get their
 * own; with it go the storage of its late tensors and its scratch, so that
 * a steady run allocates nothing (hop_plan_trim gives all of it back).  The
 * memory plan's block is one byte tensor: when every size is constant the
 * code generator computed the offsets; otherwise Layout computes them at
 * the first run and again only when the symbols they depend on change.
 * Behind the main buffers lie the worker areas of the parallel loops
 * (parmap.c): one per worker frame, a packing of the buffers a loop body
 * owns.
 */
#include "hop/foreign.h"
#include "runtime/vm_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define ALIGN 64
/* Worker frames at most (the pool has up to 256 threads). */
#define MAX_WORKERS 63

/* ----------------------------------------------------------------- plans */

hop_plan *
hop__plan_new(void)
{
    hop_plan *p = hop__calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    hop__arena_init(&p->arena);
    atomic_init(&p->idle, NULL);
    atomic_init(&p->interrupts, 0);
    return p;
}

/* Drops the plan's references to the foreign kernels it calls. */
static void
release_externs(hop_plan *p)
{
    for (hop__extern *e = p->externs; e; e = e->chain)
        hop_foreign_release(e->kernel);
    p->externs = NULL;
}

void
hop_plan_set_trace(hop_plan *plan, FILE *f)
{
    if (plan)
        plan->trace = f;
}

size_t
hop_plan_ninputs(const hop_plan *plan)
{
    return plan ? plan->ninputs : 0;
}

const char *
hop_plan_input_name(const hop_plan *plan, size_t i)
{
    return plan && i < plan->ninputs ? plan->inputs[i].name : NULL;
}

const char *
hop__input_names(const hop_plan *p, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->ninputs && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", p->inputs[i].name);
    return buf;
}

size_t
hop_plan_noutputs(const hop_plan *plan)
{
    return plan ? plan->noutputs : 0;
}

/* ---------------------------------------------------------------- frames */

static void workers_free(hop__frame *f);

static size_t
al(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The scratch of a run's layouts: each buffer's size, which ones to pack,
 * and hop__pack's own; none for a static plan without parallel loops (its
 * offsets are the code generator's). */
static size_t
pack_bytes(const hop_plan *p)
{
    if (p->static_layout && p->wbuf == NULL)
        return 0;
    return al((size_t)p->nbuffers * sizeof(int64_t)) + al((size_t)p->nbuffers) +
           al(hop__pack_scratch_bytes(p->nbuffers));
}

/* The frame and its arrays, 64-byte aligned, in one allocation. */
/* clang-format off */
#define FRAME_SIZES(p)                                                                             \
    {                                                                                              \
        al(sizeof(hop__frame)),                                                                    \
        al((size_t)(p)->nslots * sizeof(hop_tensor)),                                              \
        al((size_t)(p)->nslots * sizeof(hop_tensor *)),                                            \
        al((size_t)(p)->nslots),                                                                   \
        al(hop__regs_bytes((p)->nregs)),                                                           \
        al((size_t)(p)->max_depth * sizeof(int32_t)),                                              \
        al((size_t)(p)->ncache * sizeof(hop__kcache)),                                             \
        al((size_t)(p)->nrtargs * sizeof(hop_rt_arg)),                                             \
        al((size_t)(p)->nlayout_regs * sizeof(int64_t)),                                           \
        al((size_t)(p)->nbuffers * sizeof(int64_t)),                                               \
        al((p)->noutputs * sizeof(hop_tensor *)),                                                  \
        al((size_t)(p)->nbuffers * sizeof(int64_t)),                                               \
        al((size_t)(p)->nslots * sizeof(hop_tensor *)),                                            \
        al(((size_t)(p)->nsections + 1) * sizeof(hop_tensor *)),                                   \
        al(((size_t)(p)->nsections + 1) * (size_t)(p)->nlayout_regs * sizeof(int64_t)),            \
        al((size_t)(p)->nsections + 1),                                                            \
        pack_bytes(p),                                                                             \
    }
/* clang-format on */

size_t
hop__frame_bytes(const hop_plan *p)
{
    size_t sz[] = FRAME_SIZES(p), total = 0;
    for (size_t i = 0; i < HOP__ARRAY_LEN(sz); i++)
        total += sz[i];
    return total;
}

hop__frame *
hop__frame_init(hop_plan *p, void *raw)
{
    size_t sz[] = FRAME_SIZES(p);
    char *c = raw;
    hop__frame *f = (hop__frame *)c;
    c += sz[0];
    f->slots = (hop_tensor *)c;
    c += sz[1];
    f->owner = (hop_tensor **)c;
    c += sz[2];
    f->owned = (unsigned char *)c;
    c += sz[3];
    f->regs = hop__regs_init(c, p->nregs);
    c += sz[4];
    f->stack = (int32_t *)c;
    c += sz[5];
    f->kernels = (hop__kcache *)c;
    c += sz[6];
    f->rtargs = (hop_rt_arg *)c;
    c += sz[7];
    f->layout_key = (int64_t *)c;
    c += sz[8];
    f->offsets = (int64_t *)c;
    c += sz[9];
    f->recycle = (hop_tensor **)c;
    c += sz[10];
    f->woff = (int64_t *)c;
    c += sz[11];
    f->kept = (hop_tensor **)c;
    c += sz[12];
    f->sblock = (hop_tensor **)c;
    c += sz[13];
    f->skey = (int64_t *)c;
    c += sz[14];
    f->sok = (unsigned char *)c;
    c += sz[15];
    f->pack = c;
    f->plan = p;
    f->stop = -1;
    f->root = f;
    f->budget = HOP__CHECK_EVERY;
    for (int32_t s = 0; s < p->nslots; s++)
        hop__header(&f->slots[s], NULL, p->slots[s].dtype, 0, NULL, NULL, NULL);
    return f;
}

hop__frame *
hop__frame_new(hop_plan *p)
{
    void *raw = hop__calloc(1, hop__frame_bytes(p) + 64);
    if (raw == NULL)
        return NULL;
    hop__frame *f = hop__frame_init(p, (void *)(((uintptr_t)raw + 63) & ~(uintptr_t)63));
    f->raw = raw;
    return f;
}

void
hop__frame_release_owned(hop__frame *f)
{
    for (int32_t s = 0; s < f->plan->nslots; s++) {
        if (f->owned[s]) {
            hop_tensor_release(f->owner[s]);
            f->owned[s] = 0;
        }
        f->owner[s] = NULL;
    }
}

void
hop__frame_release_kept(hop__frame *f)
{
    for (int32_t s = 0; s < f->plan->nslots && f->nkept > 0; s++) {
        if (f->kept[s]) {
            hop_tensor_release(f->kept[s]);
            f->kept[s] = NULL;
            f->nkept--;
        }
    }
    hop__free(f->scratch);
    f->scratch = NULL;
    f->nscratch = 0;
    for (int32_t k = 1; k <= f->plan->nsections; k++) {
        hop_tensor_release(f->sblock[k]);
        f->sblock[k] = NULL;
        f->sok[k] = 0;
    }
}

void
hop__frame_free(hop__frame *f)
{
    if (f == NULL)
        return;
    hop__frame_release_owned(f);
    hop__frame_release_kept(f);
    workers_free(f);
    for (size_t j = 0; j < f->plan->noutputs; j++)
        hop_tensor_release(f->recycle[j]);
    hop_tensor_release(f->block);
    hop__free(f->raw);
}

void
hop_plan_trim(hop_plan *plan)
{
    if (plan)
        hop__frame_free(atomic_exchange(&plan->idle, NULL));
}

void
hop_plan_free(hop_plan *plan)
{
    if (plan == NULL)
        return;
    hop__frame_free(atomic_exchange(&plan->idle, NULL));
    release_externs(plan);
    hop__free(plan->notes);
    hop__arena_destroy(&plan->arena);
    hop__free(plan);
}

/* --------------------------------------------------------- worker frames */

int
hop__parmap_workers(const hop_plan *p)
{
    if (p->nparloops == 0)
        return 0;
    int n = hop_runtime_threads() - 1;
    return n < 0 ? 0 : n > MAX_WORKERS ? MAX_WORKERS : n;
}

static void
workers_free(hop__frame *f)
{
    for (int k = 0; k < f->subcap; k++) {
        hop__frame_release_owned(f->subs[k]);
        hop__frame_release_kept(f->subs[k]);
    }
    hop__free(f->subraw);
    f->subraw = NULL;
    f->subs = NULL;
    f->subcap = 0;
    f->nsub = 0;
}

hop_status
hop__parmap_reserve(hop__frame *f, int n)
{
    if (n <= f->subcap)
        return HOP_OK;
    size_t fb = hop__frame_bytes(f->plan), ptrs = al((size_t)n * sizeof(hop__frame *));
    void *raw = hop__calloc(1, 64 + ptrs + (size_t)n * fb);
    if (raw == NULL)
        return hop_error_code();
    int nsub = f->nsub;
    workers_free(f);
    char *c = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    f->subs = (hop__frame **)c;
    c += ptrs;
    for (int k = 0; k < n; k++)
        f->subs[k] = hop__frame_init(f->plan, c + (size_t)k * fb);
    f->subraw = raw;
    f->subcap = n;
    f->nsub = nsub < n ? nsub : n;
    return HOP_OK;
}

/* ---------------------------------------------------------- late tensors */

/*
 * A late tensor's storage (sized only mid-run: Alloc, OpAlloc) outlives the
 * run in f->kept, so that the next run reuses it instead of asking the
 * allocator again: above glibc's mmap threshold every fresh block is a new
 * mapping the kernel zeroes page by page on first touch, which made a
 * compacted vmap of a cond 2-4x slower per example from 10,000 examples on.
 * A kept tensor is reused only when the frame holds the one reference to it
 * and to its storage (a result, a swapped carry or anything else still
 * holding it makes the slot take new storage) and the storage is large
 * enough; new storage gets an eighth more room, so sizes that vary a little
 * from run to run (the examples a branch takes) settle after a few runs.
 */
static bool
kept_free(const hop_tensor *t)
{
    return hop_tensor_refcount(t) == 1 &&
           __atomic_load_n(&t->storage->refcount, __ATOMIC_ACQUIRE) == 1;
}

hop_tensor *
hop__late_tensor(hop__frame *f, int32_t s, hop_dtype dtype, int rank, const int64_t *sizes)
{
    int64_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= sizes[d]; /* checked by hop__check_shape: no overflow */
    int64_t bytes = numel * (int64_t)hop_dtype_size(dtype);
    hop_tensor *t = f->kept[s];
    if (t == NULL || !kept_free(t) || (int64_t)hop_storage_nbytes(t->storage) < bytes) {
        int64_t room = bytes > INT64_MAX / 2 ? bytes : bytes + bytes / 8;
        if (room < ALIGN)
            room = ALIGN;
        hop_tensor *n = hop_tensor_empty(HOP_U8, 1, &room);
        if (n == NULL)
            return NULL;
        if (t)
            hop_tensor_release(t);
        else
            f->nkept++;
        f->kept[s] = t = n;
    }
    hop__tensor_set_contiguous(t, dtype, rank, sizes);
    return hop_tensor_retain(t);
}

void *
hop__frame_scratch(hop__frame *f, size_t n)
{
    if (n <= f->nscratch)
        return f->scratch;
    size_t room = n + n / 8;
    void *p = hop__malloc(room);
    if (p == NULL)
        return NULL;
    hop__free(f->scratch);
    f->scratch = p;
    f->nscratch = room;
    return p;
}

int32_t
hop__late_find(const hop__frame *f, const hop_tensor *own)
{
    for (int32_t s = 0; s < f->plan->nslots && f->nkept > 0; s++)
        if (f->kept[s] == own)
            return s;
    return -1;
}

void
hop__late_forget(hop__frame *f, int32_t s)
{
    hop_tensor_release(f->kept[s]);
    f->kept[s] = NULL;
    f->nkept--;
}

/* ---------------------------------------------------------------- layout */

static int64_t
contig_strides(int rank, const int64_t *sizes, int64_t *strides)
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
    /* (at the storage's start, as every output is: no dtype lookup and no
     * division, per output per run) */
    t->offset = s == NULL || data == s->data
                    ? 0
                    : ((char *)data - (char *)s->data) / (int64_t)hop_dtype_size(dtype);
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
    }
    /* A size from the data (zeros(n.item())): HOP_INVALID with eager's
     * message (ops/infer_shape.c). */
    for (int d = 0; d < sl->rank; d++) {
        if (sizes[d] < 0) {
            hop__ttext t;
            return hop_error(HOP_INVALID, "%s: invalid size %lld in shape %s",
                             sl->name ? sl->name : "tensor", (long long)sizes[d],
                             hop__sizes_text_i(&t, sizes, sl->rank));
        }
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

/* A block (the frame's, or a lazy section's): one byte tensor, grown
 * (replaced) when too small.  Its tensors are placed after it. */
static hop_status
ensure_block(hop_tensor **block, int64_t bytes)
{
    if (*block && (int64_t)hop_storage_nbytes((*block)->storage) >= bytes)
        return HOP_OK;
    int64_t n = bytes < ALIGN ? ALIGN : bytes;
    hop_tensor *b = hop_tensor_empty(HOP_BOOL, 1, &n);
    if (b == NULL)
        return hop_error_code();
    hop_tensor_release(*block);
    *block = b;
    return HOP_OK;
}

/* The headers of section k's buffers (0: the block's), at the offsets
 * computed into f->offsets, in block. */
static hop_status
place(hop__frame *f, int32_t k, const hop_tensor *block)
{
    const hop_plan *p = f->plan;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    char *base = block->data;
    for (int32_t b = 0; b < p->nbuffers; b++) {
        const hop__buffer *buf = &p->buffers[b];
        if (buf->section != k)
            continue;
        const hop__slot *sl = &p->slots[buf->slot];
        hop_status st = eval_sizes(sl, f->regs, sizes);
        if (st != HOP_OK)
            return st;
        contig_strides(sl->rank, sizes, strides);
        hop__header(&f->slots[buf->slot], block->storage, sl->dtype, sl->rank, sizes, strides,
                    base + f->offsets[b]);
        f->owner[buf->slot] = NULL; /* the block: results are copied out */
    }
    return HOP_OK;
}

/*
 * The offsets of section k's buffers (0: the block's main buffers) at the
 * bound sizes, packed (pack.c): *bytes is the total.  For the block, also
 * each private buffer's offset in a worker area and the area's size
 * (*warea).  A static plan's offsets are the code generator's; otherwise
 * each size is computed from the sizes, checked and named as eager checks
 * an op's result.
 */
static hop_status
lay_out(hop__frame *f, int32_t k, int64_t *bytes, int64_t *warea)
{
    const hop_plan *p = f->plan;
    bool need_w = warea != NULL && p->wbuf != NULL;
    if (warea)
        *warea = 0;
    if (p->static_layout && !need_w) {
        for (int32_t b = 0; b < p->nbuffers; b++)
            if (p->buffers[b].section == k)
                f->offsets[b] = p->buffers[b].offset;
        *bytes = p->section_bytes[k];
        return HOP_OK;
    }
    size_t n = (size_t)p->nbuffers;
    int64_t *size = f->pack;
    bool *pick = (bool *)((char *)f->pack + al(n * sizeof(int64_t)));
    void *scratch = (char *)pick + al(n);
    hop_status st = HOP_OK;
    for (size_t b = 0; b < n; b++) {
        const hop__buffer *buf = &p->buffers[b];
        pick[b] = buf->section == k;
        if (p->static_layout) {
            size[b] = buf->bytes->value;
            continue;
        }
        int64_t sizes[HOP_MAX_RANK], numel;
        if (!pick[b] && !(need_w && p->wbuf[b])) {
            size[b] = 0;
            continue;
        }
        if ((st = hop__slot_sizes(p, buf->slot, f->regs, sizes, &numel)) != HOP_OK)
            return st;
        /* at most SIZE_MAX / 16 elements of at most 8 bytes */
        size[b] = numel * (int64_t)hop_dtype_size(p->slots[buf->slot].dtype);
    }
    if (p->static_layout) {
        for (size_t b = 0; b < n; b++)
            if (pick[b])
                f->offsets[b] = p->buffers[b].offset;
        *bytes = p->section_bytes[k];
    } else if ((st = hop__pack(p->buffers, p->nbuffers, size, pick, scratch, f->offsets, bytes)) !=
               HOP_OK) {
        return st;
    }
    if (need_w) {
        for (size_t b = 0; b < n; b++)
            pick[b] = p->wbuf[b];
        st = hop__pack(p->buffers, p->nbuffers, size, pick, scratch, f->woff, warea);
    }
    return st;
}

/* The layout of section k (0: the block) still holds: the symbols its sizes
 * depend on have the values it was made for. */
static bool
layout_holds(const hop__frame *f, const int64_t *key)
{
    const hop_plan *p = f->plan;
    for (int32_t i = 0; i < p->nlayout_regs; i++)
        if (key[i] != f->regs[p->layout_regs[i]])
            return false;
    return true;
}

static void
layout_remember(hop__frame *f, int64_t *key)
{
    const hop_plan *p = f->plan;
    for (int32_t i = 0; i < p->nlayout_regs; i++)
        key[i] = f->regs[p->layout_regs[i]];
}

/*
 * After the main buffers, the block holds one area per worker frame of the
 * parallel loops (parmap.c): a packing of the buffers the loop bodies own,
 * so that workers never share an intermediate.  Their number
 * follows the thread setting, so a run on more threads lays out again.
 * Lazy sections' buffers are not in the block: hop__layout_section.
 */
hop_status
hop__layout(hop__frame *f)
{
    const hop_plan *p = f->plan;
    int nsub = hop__parmap_workers(p);
    if (f->layout_ok && f->nsub == nsub && (p->static_layout || layout_holds(f, f->layout_key)))
        return HOP_OK;
    f->layout_ok = false;
    int64_t main_bytes, warea, total;
    hop_status st = lay_out(f, 0, &main_bytes, &warea);
    if (st != HOP_OK)
        return st;
    if (__builtin_mul_overflow(warea, (int64_t)nsub, &total) ||
        __builtin_add_overflow(total, main_bytes, &total))
        return hop_error(HOP_NOMEM, "the plan's block would exceed the address space");
    if ((st = hop__parmap_reserve(f, nsub)) != HOP_OK ||
        (st = ensure_block(&f->block, total)) != HOP_OK || (st = place(f, 0, f->block)) != HOP_OK)
        return st;
    f->wbase = main_bytes;
    f->warea = warea;
    f->nsub = nsub;
    layout_remember(f, f->layout_key);
    f->layout_ok = true;
    return HOP_OK;
}

hop_status
hop__layout_section(hop__frame *f, int32_t k)
{
    const hop_plan *p = f->plan;
    int64_t *key = f->skey + (size_t)k * (size_t)p->nlayout_regs;
    if (f->sok[k] && (p->static_layout || layout_holds(f, key)))
        return HOP_OK;
    f->sok[k] = 0;
    int64_t bytes;
    hop_status st = lay_out(f, k, &bytes, NULL);
    if (st == HOP_OK)
        st = ensure_block(&f->sblock[k], bytes);
    if (st == HOP_OK)
        st = place(f, k, f->sblock[k]);
    if (st != HOP_OK)
        return st;
    layout_remember(f, key);
    f->sok[k] = 1;
    return HOP_OK;
}

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
                                 "hop_plan_run_into: output %zu (%s) is %s but the result is %s", j,
                                 p->outputs[j].name, hop__tensor_text(&a, t),
                                 hop__tensor_text(&b, &want));
            }
        } else {
            /* The last run's output, if its caller let go of it (nobody else
             * holds the tensor or its storage) and it has the same sizes. */
            t = f->recycle[j];
            f->recycle[j] = NULL;
            bool reuse = t && hop_tensor_refcount(t) == 1 &&
                         __atomic_load_n(&t->storage->refcount, __ATOMIC_ACQUIRE) == 1 &&
                         t->dtype == sl->dtype && t->rank == sl->rank;
            for (int d = 0; reuse && d < sl->rank; d++)
                reuse = t->sizes[d] == sizes[d];
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

/* ------------------------------------------------------------ interrupts */

void
hop_plan_interrupt(hop_plan *plan)
{
    if (plan)
        atomic_fetch_add_explicit(&plan->interrupts, 1, memory_order_relaxed);
}

void
hop__interrupt_share(hop__frame *f, hop__frame *w)
{
    w->root = f->root;
    w->epoch = f->epoch;
    w->budget = HOP__CHECK_EVERY;
}

/*
 * The check every HOP__CHECK_EVERY units of work (SQLite's progress
 * handler): an interrupt of the plan since the run began, the run halted
 * by another of its threads, or the caller's handler asking to stop, which
 * only the calling thread runs (a Python signal check needs that thread).
 */
static bool
progress_stops(hop__frame *r)
{
    if (r->progress && pthread_equal(pthread_self(), r->caller) &&
        r->progress(r->progress_ud) != 0) {
        atomic_store_explicit(&r->halt, 1, memory_order_relaxed);
        return true;
    }
    return false;
}

void
hop__interrupt_poll(hop__frame *f)
{
    hop__frame *r = f->root;
    if (!atomic_load_explicit(&r->halt, memory_order_relaxed))
        progress_stops(r);
}

hop_status
hop__interrupt_check(hop__frame *f)
{
    hop__frame *r = f->root;
    f->budget = HOP__CHECK_EVERY;
    bool stop = atomic_load_explicit(&((hop_plan *)f->plan)->interrupts, memory_order_relaxed) !=
                    f->epoch ||
                atomic_load_explicit(&r->halt, memory_order_relaxed) || progress_stops(r);
    return stop ? hop_error(HOP_INTERRUPTED, "plan interrupted") : HOP_OK;
}
