/*
 * python/_C/np_eager_take.c - the eager fast path's array keys: a[idx] and
 * a[mask], a[idx] = v and a[mask] = v for one integer or boolean index array
 * on a concrete hop.numpy array (np_eager.c's fast_getitem and fast_setitem
 * call here when the key is not basic; hop.numpy._eager_shape says what the
 * fast path takes).
 *
 * NumPy's rules for such a key, which the general path (_indexing._advanced:
 * a `take` of the positions, each checked) follows too: an integer array idx
 * picks rows of the first dim (negative ones counted from the end), the
 * result's shape idx.shape + a.shape[1:]; a boolean mask of a's first
 * mask.ndim dims picks the rows where it holds, in C order, the result's
 * shape (count,) + a.shape[mask.ndim:].  The result is a new array, the
 * key's dims outermost and in C order, the rows' dims laid out in a's
 * memory order (NumPy's: a row of a Fortran-ordered array stays
 * Fortran-ordered), but for an index array of a 1-d array, which NumPy
 * lays out as the index is: a key in another order is the general path's.
 *
 * Here a key is read once into the element offsets of the rows it picks
 * (hop_py__np_take), and the rows are copied out or filled through them:
 * the positions are all read and checked before anything is written, so
 * an index out of range (the general path's IndexError) or a key that
 * aliases a leaves a as it was.  The fill of a strided view with one
 * element is here too (hop_py__np_fill_view): np_eager.c's
 * a[basic key] = number writes through it.
 */
#include "tensor_impl.h"

#include <stdlib.h>
#include <string.h>

int
hop_py__np_int_at(hop_dtype d, const void *p, int64_t *v)
{
    switch (d) {
    case HOP_BOOL:
        *v = *(const bool *)p;
        return 1;
    case HOP_I8:
        *v = *(const int8_t *)p;
        return 1;
    case HOP_U8:
        *v = *(const uint8_t *)p;
        return 1;
    case HOP_I16:
        *v = *(const int16_t *)p;
        return 1;
    case HOP_U16:
        *v = *(const uint16_t *)p;
        return 1;
    case HOP_I32:
        *v = *(const int32_t *)p;
        return 1;
    case HOP_U32:
        *v = *(const uint32_t *)p;
        return 1;
    case HOP_I64:
    case HOP_U64: /* (as intp: a uint64 2**64 - 1 is -1) */
        memcpy(v, p, 8);
        return 1;
    default:
        return 0;
    }
}

/* The values of key tensor k (an integer or bool dtype), in C order, as
 * int64 in out (NumPy's intp reading): 1, or 0 for another dtype. */
static int
key_values(const hop_tensor *k, int64_t *out)
{
    int64_t idx[HOP_MAX_RANK] = {0}, n = hop_tensor_numel(k);
    size_t isz = hop_dtype_size(k->dtype);
    const char *p = k->data;
    for (int64_t j = 0; j < n; j++) {
        if (!hop_py__np_int_at(k->dtype, p, &out[j]))
            return 0;
        /* the next element in C order (k's strides, in elements) */
        int d = k->rank - 1;
        for (; d >= 0; d--) {
            p += k->strides[d] * (int64_t)isz;
            if (++idx[d] < k->sizes[d])
                break;
            p -= k->sizes[d] * k->strides[d] * (int64_t)isz;
            idx[d] = 0;
        }
    }
    return 1;
}

/* Key tensor k of a list key: exact ints (an int64 array) or exact bools
 * (a mask), at least one; NULL without an exception for any other list (the
 * general path's: nested lists, NumPy scalars, a mix), or with one. */
static hop_tensor *
list_key(PyObject *list)
{
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n == 0)
        return NULL;
    int bools = PyBool_Check(PyList_GET_ITEM(list, 0));
    int64_t size = n;
    hop_tensor *k = hop_tensor_empty(bools ? HOP_BOOL : HOP_I64, 1, &size);
    if (k == NULL) {
        PyErr_NoMemory();
        hop_error_clear();
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *v = PyList_GET_ITEM(list, j);
        int overflow = 0;
        if (bools ? !PyBool_Check(v) : !PyLong_CheckExact(v))
            goto not_taken;
        if (bools) {
            ((bool *)k->data)[j] = v == Py_True;
            continue;
        }
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow != 0 || (x == -1 && PyErr_Occurred()))
            goto not_taken;
        ((int64_t *)k->data)[j] = x;
    }
    return k;
not_taken:
    PyErr_Clear();
    hop_tensor_release(k);
    return NULL;
}

hop_tensor *
hop_py__np_key_tensor(PyObject *key)
{
    if (PyList_CheckExact(key))
        return list_key(key);
    if (!hop_py__np_ready())
        return NULL;
    hop_tensor *k = hop_py__np_borrow(key); /* (NULL for anything but an exact ndarray) */
    if (k != NULL && k->rank == 0) {
        hop_tensor_release(k);
        k = NULL;
    }
    return k;
}

void
hop_py__np_take_release(hop_py_take *tk)
{
    if (tk->offsets != tk->small)
        PyMem_RawFree(tk->offsets);
    tk->offsets = NULL;
}

int
hop_py__np_take(const hop_tensor *t, const hop_tensor *k, hop_py_take *tk)
{
    tk->offsets = tk->small;
    int64_t n = hop_tensor_numel(k), kept = 0;
    int lead = k->dtype == HOP_BOOL ? k->rank : 1; /* the dims of t the key picks from */
    if (!(k->dtype == HOP_BOOL || hop_dtype_is_int(k->dtype)) || k->rank == 0 || lead > t->rank)
        return 0;
    /* An index array that picks elements (no dims after it) lays NumPy's
     * result out in its own memory order (a Fortran-ordered key, a Fortran-
     * ordered result): the general path's (_indexing.getitem) for any but
     * C order. */
    if (k->dtype != HOP_BOOL && t->rank == 1 && k->rank > 1 && !hop_tensor_is_contiguous(k))
        return 0;
    int rank = (k->dtype == HOP_BOOL ? 1 : k->rank) + t->rank - lead;
    if (rank > HOP_MAX_RANK)
        return 0;
    for (int d = 0; k->dtype == HOP_BOOL && d < lead; d++)
        if (k->sizes[d] != t->sizes[d])
            return 0; /* (the general path's IndexError names the dim) */
    if (n > (int64_t)(sizeof tk->small / sizeof *tk->small) &&
        (n > PY_SSIZE_T_MAX / (int64_t)sizeof(int64_t) ||
         (tk->offsets = PyMem_RawMalloc((size_t)n * sizeof(int64_t))) == NULL)) {
        tk->offsets = tk->small;
        PyErr_NoMemory();
        return -1;
    }
    if (!key_values(k, tk->offsets)) {
        hop_py__np_take_release(tk);
        return 0;
    }
    if (k->dtype == HOP_BOOL) {
        /* the offsets of the rows where the mask holds, in C order (the
         * mask's own: its values were read in it) */
        int64_t idx[HOP_MAX_RANK] = {0}, off = 0;
        for (int64_t j = 0; j < n; j++) {
            if (tk->offsets[j])
                tk->offsets[kept++] = off;
            for (int d = lead - 1; d >= 0; d--) {
                off += t->strides[d];
                if (++idx[d] < t->sizes[d])
                    break;
                off -= t->sizes[d] * t->strides[d];
                idx[d] = 0;
            }
        }
        tk->sizes[0] = kept;
    } else {
        int64_t rows = t->sizes[0];
        for (int64_t j = 0; j < n; j++) {
            int64_t v = tk->offsets[j];
            if (v < -rows || v >= rows) {
                hop_py__np_take_release(tk); /* (the general path's IndexError) */
                return 0;
            }
            tk->offsets[j] = (v < 0 ? v + rows : v) * t->strides[0];
        }
        kept = n;
        memcpy(tk->sizes, k->sizes, (size_t)k->rank * sizeof *k->sizes);
    }
    tk->count = kept;
    tk->rank = rank;
    tk->lead = lead;
    for (int d = lead; d < t->rank; d++)
        tk->sizes[rank - t->rank + d] = t->sizes[d];
    /* The dims after the key's in t's memory order (their strides largest
     * first, ties in dim order: NumPy lays a result's rows out so) */
    int nsub = t->rank - lead;
    for (int i = 0; i < nsub; i++) {
        int d = lead + i, j = i;
        for (; j > 0 && labs(t->strides[tk->sub[j - 1]]) < labs(t->strides[d]); j--)
            tk->sub[j] = tk->sub[j - 1];
        tk->sub[j] = d;
    }
    return 1;
}

/* The row at src (rank dims of sizes and strides, in elements of isz
 * bytes) copied to dst in C order; the next destination. */
static char *
row_copy(char *dst, const char *src, int rank, const int64_t *sizes, const int64_t *strides,
         size_t isz)
{
    int64_t idx[HOP_MAX_RANK] = {0};
    for (int d = 0; d < rank; d++)
        if (sizes[d] == 0)
            return dst;
    for (;;) {
        memcpy(dst, src, isz);
        dst += isz;
        int d = rank - 1;
        for (; d >= 0; d--) {
            src += strides[d] * (int64_t)isz;
            if (++idx[d] < sizes[d])
                break;
            src -= sizes[d] * strides[d] * (int64_t)isz;
            idx[d] = 0;
        }
        if (d < 0)
            return dst;
    }
}

hop_tensor *
hop_py__np_take_rows(const hop_tensor *t, const hop_py_take *tk)
{
    /* The result is allocated with the key's dims first, then the rows'
     * dims in t's memory order (tk->sub), and viewed back in dim order. */
    int nkey = tk->rank - (t->rank - tk->lead), nsub = t->rank - tk->lead;
    int64_t asizes[HOP_MAX_RANK], sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    bool in_order = true;
    for (int i = 0; i < tk->rank; i++)
        asizes[i] = i < nkey ? tk->sizes[i] : t->sizes[tk->sub[i - nkey]];
    for (int i = 0; i < nsub; i++) {
        sizes[i] = t->sizes[tk->sub[i]];
        strides[i] = t->strides[tk->sub[i]];
        in_order = in_order && tk->sub[i] == tk->lead + i;
    }
    hop_tensor *r = hop_tensor_empty(t->dtype, tk->rank, asizes);
    if (r == NULL)
        return NULL;
    size_t isz = hop_dtype_size(t->dtype);
    char *base = t->data, *dst = r->data;
    if (!in_order) {
        for (int64_t j = 0; j < tk->count; j++)
            dst = row_copy(dst, base + tk->offsets[j] * (int64_t)isz, nsub, sizes, strides, isz);
        int64_t vstrides[HOP_MAX_RANK];
        for (int i = 0; i < nkey; i++)
            vstrides[i] = r->strides[i];
        for (int i = 0; i < nsub; i++)
            vstrides[tk->sub[i] - tk->lead + nkey] = r->strides[nkey + i];
        hop_tensor *v = hop_tensor_view(r, tk->rank, tk->sizes, vstrides, r->offset);
        hop_tensor_release(r);
        return v;
    }
    if (tk->lead == t->rank) { /* one element a row: the common case, inlined */
        switch (isz) {
        case 8:
            for (int64_t j = 0; j < tk->count; j++, dst += 8)
                memcpy(dst, base + tk->offsets[j] * 8, 8);
            return r;
        case 4:
            for (int64_t j = 0; j < tk->count; j++, dst += 4)
                memcpy(dst, base + tk->offsets[j] * 4, 4);
            return r;
        default:
            break;
        }
    }
    for (int64_t j = 0; j < tk->count; j++)
        dst = row_copy(dst, base + tk->offsets[j] * (int64_t)isz, nsub, sizes, strides, isz);
    return r;
}

void
hop_py__np_fill_rows(hop_tensor *t, const hop_py_take *tk, const unsigned char *elem)
{
    size_t isz = hop_dtype_size(t->dtype);
    char *base = t->data;
    int nsub = t->rank - tk->lead;
    for (int64_t j = 0; j < tk->count; j++)
        hop_py__np_fill_view(base + tk->offsets[j] * (int64_t)isz, nsub, t->sizes + tk->lead,
                             t->strides + tk->lead, isz, elem);
}

void
hop_py__np_fill_view(char *p, int rank, const int64_t *sizes, const int64_t *strides, size_t isz,
                     const unsigned char *elem)
{
    static const int64_t none[HOP_MAX_RANK]; /* (elem's strides: every one 0) */
    hop_py__np_copy_view(p, rank, sizes, strides, (const char *)elem, none, isz);
}

void
hop_py__np_copy_view(char *p, int rank, const int64_t *sizes, const int64_t *strides,
                     const char *src, const int64_t *src_strides, size_t isz)
{
    int64_t idx[HOP_MAX_RANK] = {0}, inner = rank > 0 ? sizes[rank - 1] : 1;
    int64_t step = rank > 0 ? strides[rank - 1] * (int64_t)isz : 0;
    int64_t src_step = rank > 0 ? src_strides[rank - 1] * (int64_t)isz : 0;
    for (int d = 0; d < rank; d++) {
        if (sizes[d] == 0)
            return;
    }
    for (;;) {
        char *q = p;
        const char *r = src;
        switch (isz) { /* (constant sizes: the copies inline) */
        case 1:
            for (int64_t k = 0; k < inner; k++, q += step, r += src_step)
                memcpy(q, r, 1);
            break;
        case 2:
            for (int64_t k = 0; k < inner; k++, q += step, r += src_step)
                memcpy(q, r, 2);
            break;
        case 4:
            for (int64_t k = 0; k < inner; k++, q += step, r += src_step)
                memcpy(q, r, 4);
            break;
        case 8:
            for (int64_t k = 0; k < inner; k++, q += step, r += src_step)
                memcpy(q, r, 8);
            break;
        default:
            for (int64_t k = 0; k < inner; k++, q += step, r += src_step)
                memcpy(q, r, isz);
        }
        int d = rank - 2;
        for (; d >= 0; d--) {
            p += strides[d] * (int64_t)isz;
            src += src_strides[d] * (int64_t)isz;
            if (++idx[d] < sizes[d])
                break;
            p -= sizes[d] * strides[d] * (int64_t)isz;
            src -= sizes[d] * src_strides[d] * (int64_t)isz;
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}
