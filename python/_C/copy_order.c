/*
 * python/_C/copy_order.c - the copy hop.asarray makes of a buffer it cannot
 * wrap (read-only, negative or unaligned strides), laid out in NumPy's
 * memory order of it with positive strides: NumPy computes on the array in
 * that order (a sum adds in it, a new result of it is laid out in it), so
 * a C-ordered copy of a Fortran-ordered array summed otherwise than NumPy.
 */
#include "tensor_impl.h"

#include <stdlib.h>
#include <string.h>

/*
 * A copy of view's elements (numel of them) laid out in perm's order
 * (hop_memory_order's, not C order): NumPy computes on the array in its memory
 * order (a sum adds in it, a new result of it is laid out in it), so hop's
 * copy keeps that order, with positive strides.  NULL on error.
 */
static hop_tensor *
copy_perm(const Py_buffer *view, hop_dtype dt, const int64_t *sizes, const int *perm, int64_t numel)
{
    int rank = view->ndim;
    int64_t psizes[HOP_MAX_RANK] = {0}, strides[HOP_MAX_RANK] = {0}, idx[HOP_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++)
        psizes[i] = sizes[perm[i]];
    hop_tensor *base = hop_tensor_empty(dt, rank, psizes);
    if (base == NULL)
        return NULL;
    int64_t step = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[perm[i]] = step;
        step *= sizes[perm[i]];
    }
    size_t esize = (size_t)view->itemsize;
    const char *src = view->buf;
    char *dst = base->data;
    for (int64_t k = 0; k < numel; k++) {
        memcpy(dst + (size_t)k * esize, src, esize);
        for (int i = rank - 1; i >= 0; i--) { /* the next index, perm's innermost fastest */
            int d = perm[i];
            if (++idx[d] < sizes[d]) {
                src += view->strides[d];
                break;
            }
            src -= view->strides[d] * (sizes[d] - 1);
            idx[d] = 0;
        }
    }
    hop_tensor *t = hop_tensor_view(base, rank, sizes, strides, 0);
    hop_tensor_release(base);
    return t;
}

hop_tensor *
hop_py__copy_in_order(const Py_buffer *view, hop_dtype dt, const int64_t *sizes, int64_t numel,
                      bool *c_order)
{
    int perm[HOP_MAX_RANK];
    int64_t strides[HOP_MAX_RANK];
    for (int d = 0; d < view->ndim; d++)
        strides[d] = view->strides[d];
    *c_order = hop_memory_order(view->ndim, sizes, strides, perm);
    return *c_order ? NULL : copy_perm(view, dt, sizes, perm, numel);
}
