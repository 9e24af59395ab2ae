/*
 * runtime/tensor.c - storage and tensor headers: creation, wrapping external
 * memory, views over shared storage, reference counting, small accessors.
 *
 * A new tensor is one allocation: [storage][tensor header][pad][data], the
 * data 64-byte aligned.  The header holds one reference to its storage and
 * the storage frees the block when its last reference goes, so a view that
 * outlives the tensor it was made from keeps the block (and the dead header
 * in it) alive.  Wrapped memory and views have a separately allocated
 * header.  Reference counts are atomic: plans, the Python layer and threads
 * may share tensors.
 *
 * Blocks of HUGE_BYTES or more are advised to use transparent huge pages, as
 * NumPy does: a kernel streaming through 64 MiB on 4 KiB pages spends about a
 * tenth of its time on TLB misses.
 */
#define _DEFAULT_SOURCE /* madvise */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define ALIGN 64
#define HUGE_BYTES ((size_t)4 << 20)

/* --------------------------------------------------------------- helpers */

static void
ref_inc(long *rc)
{
    __atomic_fetch_add(rc, 1, __ATOMIC_RELAXED);
}

/* True when this dropped the last reference.  Holding the only one, no
 * other thread can take or drop one, so the common end of a short-lived
 * tensor skips the locked instruction; the acquire load still orders the
 * free after every other thread's earlier release. */
static bool
ref_dec(long *rc)
{
    if (__atomic_load_n(rc, __ATOMIC_ACQUIRE) == 1)
        return true;
    return __atomic_fetch_sub(rc, 1, __ATOMIC_ACQ_REL) == 1;
}

const char *
hop__sizes_text_i(hop__ttext *t, const int64_t *sizes, int n)
{
    hop_sizes_print(HOP_DTYPE_COUNT, n, sizes, t->s, sizeof t->s);
    return t->s;
}

size_t
hop_tensor_print_meta(const hop_tensor *t, char *buf, size_t cap)
{
    if (t == NULL) {
        int n = snprintf(buf, cap, "<NULL tensor>");
        return n < 0 ? 0 : (size_t)n;
    }
    return hop_sizes_print(t->dtype, t->rank, t->sizes, buf, cap);
}

const char *
hop__tensor_text(hop__ttext *t, const hop_tensor *x)
{
    hop_tensor_print_meta(x, t->s, sizeof t->s);
    return t->s;
}

hop_status
hop__check_shape(const char *fn, hop_dtype dtype, int rank, const int64_t *sizes, int64_t *numel)
{
    hop_status st = hop_dims_check(fn, dtype, rank, sizes);
    if (st != HOP_OK)
        return st;
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < rank; i++) {
        if (sizes[i] < 0) {
            hop__ttext t;
            return hop_error(HOP_INVALID, "%s: size %" PRId64 " of dim %d is negative in %s", fn,
                             sizes[i], i, hop__sizes_text_i(&t, sizes, rank));
        }
        if (!overflow && __builtin_mul_overflow(n, sizes[i], &n))
            overflow = true;
    }
    if (overflow || n > (int64_t)(SIZE_MAX / 16)) {
        /* An empty dim makes the product 0 whatever the others are. */
        for (int i = 0; i < rank; i++) {
            if (sizes[i] == 0) {
                *numel = 0;
                return HOP_OK;
            }
        }
        hop__ttext t;
        return hop_error(HOP_NOMEM, "%s: %s%s is too large", fn, hop_dtype_name(dtype),
                         hop__sizes_text_i(&t, sizes, rank));
    }
    *numel = n;
    return HOP_OK;
}

static void
contiguous_strides(int rank, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 0 ? sizes[i] : 1;
    }
}

/* The dims past rank are zeros, stored as whole arrays of fixed size (a
 * loop over the dims left was ~40 instructions of an eager `a + b`); so
 * sizes and strides must not point into t. */
static void
set_geometry(hop_tensor *t, hop_dtype dtype, int rank, const int64_t *sizes, const int64_t *strides,
             int64_t offset)
{
    t->dtype = dtype;
    t->rank = rank;
    memset(t->sizes, 0, sizeof t->sizes);
    memset(t->strides, 0, sizeof t->strides);
    for (int i = 0; i < rank; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    t->offset = offset;
    if (offset == 0) { /* (every new tensor: no dtype lookup) */
        t->data = t->storage->data;
        return;
    }
    /* An empty tensor's offset may lie past the storage: keep data inside. */
    size_t esize = hop_dtype_size(dtype), at = (size_t)offset * esize;
    t->data = (char *)t->storage->data + (at <= t->storage->nbytes ? at : t->storage->nbytes);
}

void
hop__tensor_set_contiguous(hop_tensor *t, hop_dtype dtype, int rank, const int64_t *sizes)
{
    int64_t strides[HOP_MAX_RANK];
    contiguous_strides(rank, sizes, strides);
    set_geometry(t, dtype, rank, sizes, strides, 0);
}

/* -------------------------------------------------------------- creation */

/* Advice only: a failure (or an allocator whose memory cannot take it)
 * changes nothing. */
static void
advise_huge(void *data, size_t nbytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (nbytes < HUGE_BYTES)
        return;
    uintptr_t page = 4096, b = ((uintptr_t)data + page - 1) & ~(page - 1);
    uintptr_t e = ((uintptr_t)data + nbytes) & ~(page - 1);
    if (e > b)
        (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
    (void)data;
    (void)nbytes;
#endif
}

/* A tensor and its storage in one block (a storage header, then the
 * tensor; HOP__T_EMBEDDED): one allocation, one free, for a new tensor
 * over data (in the block or the caller's). */
static hop_tensor *
embedded(char *block, void *data, size_t nbytes, hop_release_fn release, void *user_data,
         hop_dtype dtype, int rank, const int64_t *sizes, const int64_t *strides)
{
    hop_storage *s = (hop_storage *)block;
    hop_tensor *t = (hop_tensor *)(block + sizeof(hop_storage));
    *s = (hop_storage){.refcount = 1,
                       .data = data,
                       .nbytes = nbytes,
                       .block = block,
                       .release = release,
                       /* without release, user_data is nobody's: 0 as small */
                       .user_data = release != NULL ? user_data : NULL};
    t->storage = s;
    t->refcount_ = 1;
    t->flags_ = HOP__T_EMBEDDED;
    set_geometry(t, dtype, rank, sizes, strides, 0);
    return t;
}

hop_tensor *
hop_tensor_empty(hop_dtype dtype, int rank, const int64_t *sizes)
{
    int64_t numel;
    if (hop__check_shape("hop_tensor_empty", dtype, rank, sizes, &numel) != HOP_OK)
        return NULL;
    return hop__tensor_empty_checked(dtype, rank, sizes, numel);
}

hop_tensor *
hop__tensor_empty_checked(hop_dtype dtype, int rank, const int64_t *sizes, int64_t numel)
{
    size_t nbytes = (size_t)numel * hop_dtype_size(dtype);
    size_t head = sizeof(hop_storage) + sizeof(hop_tensor), size = head + ALIGN - 1 + nbytes;
    /* an eager op's small result: often the block of the last one freed */
    char *block = hop__malloc_small(size);
    if (block == NULL)
        return NULL;
    uintptr_t p = (uintptr_t)(block + head);
    p = (p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    advise_huge((void *)p, nbytes);
    hop_storage *s = (hop_storage *)block;
    hop_tensor *t = (hop_tensor *)(block + sizeof(hop_storage));
    *s = (hop_storage){
        .refcount = 1, .data = (void *)p, .nbytes = nbytes, .block = block, .small = size};
    t->storage = s;
    t->refcount_ = 1;
    t->flags_ = HOP__T_EMBEDDED;
    hop__tensor_set_dense(t, dtype, rank, sizes, -1);
    return t;
}

bool
hop_tensor_recyclable(const hop_tensor *t)
{
    return hop__tensor_recyclable(t);
}

bool
hop_tensor_owns_storage(const hop_tensor *t)
{
    return t != NULL && !(t->flags_ & HOP__T_BORROWED) && t->storage->release == NULL &&
           __atomic_load_n(&t->refcount_, __ATOMIC_ACQUIRE) == 1 &&
           __atomic_load_n(&t->storage->refcount, __ATOMIC_ACQUIRE) == 1;
}

hop_tensor *
hop__tensor_recycle_slow(hop_tensor *spare, hop_dtype dtype, int rank, const int64_t *sizes,
                         int64_t numel)
{
    hop_tensor_release(spare);
    return hop__tensor_empty_checked(dtype, rank, sizes, numel);
}

hop_tensor *
hop_tensor_zeros(hop_dtype dtype, int rank, const int64_t *sizes)
{
    hop_tensor *t = hop_tensor_empty(dtype, rank, sizes);
    if (t != NULL)
        memset(t->data, 0, t->storage->nbytes);
    return t;
}

hop_tensor *
hop_tensor_from_data(hop_dtype dtype, int rank, const int64_t *sizes, const void *data)
{
    hop_tensor *t = hop_tensor_empty(dtype, rank, sizes);
    if (t == NULL)
        return NULL;
    if (t->storage->nbytes > 0) {
        if (data == NULL) {
            hop_tensor_release(t);
            hop_error(HOP_MISUSE, "hop_tensor_from_data: data is NULL");
            return NULL;
        }
        memcpy(t->data, data, t->storage->nbytes);
    }
    return t;
}

/*
 * Every element reached by (rank, sizes, strides, offset) lies inside nbytes
 * of storage.  An empty tensor reaches nothing, so any offset will do (a
 * slice of an empty tensor may point past its storage, as in PyTorch).
 */
static hop_status
check_inside(const char *fn, hop_dtype dtype, int rank, const int64_t *sizes,
             const int64_t *strides, int64_t offset, size_t nbytes)
{
    hop__ttext ts, tt;
    int64_t numel;
    hop_status st = hop__check_shape(fn, dtype, rank, sizes, &numel);
    if (st != HOP_OK)
        return st;
    if (rank > 0 && strides == NULL)
        return hop_error(HOP_MISUSE, "%s: strides is NULL for rank %d", fn, rank);
    int64_t esize = (int64_t)hop_dtype_size(dtype);
    int64_t cap = (int64_t)(nbytes / (size_t)esize);
    if (offset < 0)
        return hop_error(HOP_INVALID, "%s: offset %" PRId64 " is negative", fn, offset);
    int64_t last = offset;
    for (int i = 0; i < rank; i++) {
        if (strides[i] < 0)
            return hop_error(HOP_INVALID, "%s: stride %" PRId64 " of dim %d is negative", fn,
                             strides[i], i);
        int64_t span;
        if (numel > 0 && (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
                          __builtin_add_overflow(last, span, &last)))
            last = INT64_MAX;
    }
    if (numel > 0 && last >= cap)
        return hop_error(HOP_INVALID,
                         "%s: %s%s with strides %s at offset %" PRId64
                         " does not fit in a storage of %zu bytes",
                         fn, hop_dtype_name(dtype), hop__sizes_text_i(&ts, sizes, rank),
                         hop__sizes_text_i(&tt, strides, rank), offset, nbytes);
    return HOP_OK;
}

hop_tensor *
hop_tensor_wrap(hop_dtype dtype, int rank, const int64_t *sizes, const int64_t *strides, void *data,
                size_t nbytes, hop_release_fn release, void *user_data)
{
    const char *fn = "hop_tensor_wrap";
    int64_t numel, cstrides[HOP_MAX_RANK];
    if (hop__check_shape(fn, dtype, rank, sizes, &numel) != HOP_OK)
        return NULL;
    if (strides == NULL) {
        contiguous_strides(rank, sizes, cstrides);
        strides = cstrides;
    }
    if (data == NULL && nbytes > 0) {
        hop_error(HOP_MISUSE, "%s: data is NULL", fn);
        return NULL;
    }
    if ((uintptr_t)data % hop_dtype_size(dtype) != 0) {
        hop_error(HOP_INVALID, "%s: data %p is not aligned to the %zu bytes of %s", fn, data,
                  hop_dtype_size(dtype), hop_dtype_name(dtype));
        return NULL;
    }
    if (check_inside(fn, dtype, rank, sizes, strides, 0, nbytes) != HOP_OK)
        return NULL;
    char *block = hop__malloc(sizeof(hop_storage) + sizeof(hop_tensor));
    if (block == NULL)
        return NULL;
    return embedded(block, data, nbytes, release, user_data, dtype, rank, sizes, strides);
}

hop_tensor *
hop_tensor_view(hop_tensor *base, int rank, const int64_t *sizes, const int64_t *strides,
                int64_t offset)
{
    const char *fn = "hop_tensor_view";
    if (base == NULL) {
        hop_error(HOP_MISUSE, "%s: base is NULL", fn);
        return NULL;
    }
    if (check_inside(fn, base->dtype, rank, sizes, strides, offset, base->storage->nbytes) !=
        HOP_OK)
        return NULL;
    hop_tensor *t = hop__malloc(sizeof *t);
    if (t == NULL)
        return NULL;
    t->storage = base->storage;
    ref_inc(&base->storage->refcount);
    t->refcount_ = 1;
    t->flags_ = 0;
    set_geometry(t, base->dtype, rank, sizes, strides, offset);
    return t;
}

hop_status
hop_tensor_init_borrowed(hop_tensor *dst, const hop_tensor *base, int rank, const int64_t *sizes,
                         const int64_t *strides, int64_t offset)
{
    const char *fn = "hop_tensor_init_borrowed";
    if (dst == NULL || base == NULL)
        return hop_error(HOP_MISUSE, "%s: %s is NULL", fn, dst == NULL ? "dst" : "base");
    hop_status st =
        check_inside(fn, base->dtype, rank, sizes, strides, offset, base->storage->nbytes);
    if (st != HOP_OK)
        return st;
    hop_tensor tmp;
    tmp.storage = base->storage;
    tmp.refcount_ = 0;
    tmp.flags_ = HOP__T_BORROWED;
    set_geometry(&tmp, base->dtype, rank, sizes, strides, offset);
    *dst = tmp;
    return HOP_OK;
}

/* ------------------------------------------------------------ references */

static void
storage_release(hop_storage *s)
{
    if (!ref_dec(&s->refcount))
        return;
    size_t small = s->release != NULL ? 0 : s->small;
    if (s->release != NULL)
        s->release(s->user_data, s->data);
    if (small != 0)
        hop__free_small(s->block, small);
    else
        hop__free(s->block);
}

hop_tensor *
hop_tensor_retain(hop_tensor *t)
{
    if (t != NULL && !(t->flags_ & HOP__T_BORROWED))
        ref_inc(&t->refcount_);
    return t;
}

void
hop_tensor_release(hop_tensor *t)
{
    if (t == NULL || (t->flags_ & HOP__T_BORROWED) || !ref_dec(&t->refcount_))
        return;
    hop_storage *s = t->storage;
    bool embedded = t->flags_ & HOP__T_EMBEDDED;
    if (!embedded)
        hop__free(t);
    storage_release(s); /* frees an embedded header with its block */
}

long
hop_tensor_refcount(const hop_tensor *t)
{
    return t == NULL ? 0 : __atomic_load_n(&t->refcount_, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- accessors */

int64_t
hop_tensor_numel(const hop_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; t != NULL && i < t->rank; i++)
        n *= t->sizes[i];
    return n;
}

/* Whether t's elements lie densely with the strides growing over its dims
 * in the order first, first + step, ... (dims of size 1 ignored; a dim of
 * size 0 reached with the strides so far dense ends the walk: dense). */
static bool
dense_in_order(const hop_tensor *t, int first, int step)
{
    int64_t expect = 1;
    for (int k = 0, i = first; k < t->rank; k++, i += step) {
        if (t->sizes[i] == 0)
            return true;
        if (t->sizes[i] != 1 && t->strides[i] != expect)
            return false;
        expect *= t->sizes[i];
    }
    return true;
}

bool
hop_tensor_is_contiguous(const hop_tensor *t)
{
    return dense_in_order(t, t->rank - 1, -1);
}

bool
hop_tensor_is_f_contiguous(const hop_tensor *t)
{
    return dense_in_order(t, 0, 1);
}

bool
hop_memory_order(int rank, const int64_t *sizes, const int64_t *strides, int *perm)
{
    int n = 0, inner[HOP_MAX_RANK]; /* innermost first */
    for (int d = rank - 1; d >= 0; d--)
        inner[n++] = d;
    for (int i0 = 1; i0 < n; i0++) {
        int j0 = inner[i0], ipos = i0;
        int64_t s0 = sizes[j0] > 1 ? llabs((long long)strides[j0]) : 0;
        for (int i1 = i0 - 1; i1 >= 0 && s0 != 0; i1--) {
            int j1 = inner[i1];
            int64_t s1 = sizes[j1] > 1 ? llabs((long long)strides[j1]) : 0;
            if (s1 == 0)
                continue; /* no order between these two: look further */
            if (s1 <= s0)
                break;
            ipos = i1;
        }
        memmove(&inner[ipos + 1], &inner[ipos], (size_t)(i0 - ipos) * sizeof *inner);
        inner[ipos] = j0;
    }
    bool c_order = true;
    for (int i = 0; i < n; i++) {
        perm[i] = inner[n - 1 - i];
        c_order &= perm[i] == i;
    }
    return c_order;
}

bool
hop_tensor_shares_storage(const hop_tensor *a, const hop_tensor *b)
{
    return a != NULL && b != NULL && a->storage == b->storage;
}

size_t
hop_storage_nbytes(const hop_storage *s)
{
    return s == NULL ? 0 : s->nbytes;
}

void *
hop_storage_data(const hop_storage *s)
{
    return s == NULL ? NULL : s->data;
}

hop_tensor *
hop_tensor_contiguous(hop_tensor *t)
{
    if (t == NULL) {
        hop_error(HOP_MISUSE, "hop_tensor_contiguous: t is NULL");
        return NULL;
    }
    if (hop_tensor_is_contiguous(t) && !(t->flags_ & HOP__T_BORROWED))
        return hop_tensor_retain(t);
    hop_rt_arg arg = hop_rt_tensor(t);
    return hop_eager_tensor(HOP_OP_clone, &arg, 1);
}

static hop_status
item_ptr(const hop_tensor *t, const char *fn)
{
    if (t == NULL)
        return hop_error(HOP_MISUSE, "%s: t is NULL", fn);
    if (hop_tensor_numel(t) != 1) {
        hop__ttext s;
        return hop_error(HOP_SHAPE,
                         "%s: a tensor with %" PRId64
                         " elements cannot be converted to a scalar, got %s",
                         fn, hop_tensor_numel(t), hop__tensor_text(&s, t));
    }
    return HOP_OK;
}

hop_status
hop_tensor_item_double(const hop_tensor *t, double *out)
{
    hop_status st = item_ptr(t, "hop_tensor_item_double");
    if (st == HOP_OK)
        *out = hop__load_f64(t->data, t->dtype);
    return st;
}

hop_status
hop_tensor_item_int(const hop_tensor *t, int64_t *out)
{
    hop_status st = item_ptr(t, "hop_tensor_item_int");
    if (st == HOP_OK)
        *out = hop__load_i64(t->data, t->dtype);
    return st;
}
