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
 * NumPy's order of a buffer's dims (npyiter_find_best_axis_ordering, as
 * runtime/reduce.c's numpy_order): perm[0] outermost, sorted by |stride|
 * by a stable insertion sort from C order in which a dim of stride 0 or of
 * size 1 compares with none.  True when that is C order.
 */
static bool
memory_perm(const Py_buffer *view, int *perm)
{
    int rank = view->ndim, n = 0, inner[HOP_MAX_RANK]; /* innermost first */
    for (int d = rank - 1; d >= 0; d--)
        inner[n++] = d;
    for (int i0 = 1; i0 < n; i0++) {
        int j0 = inner[i0], ipos = i0;
        int64_t s0 = view->shape[j0] > 1 ? llabs((long long)view->strides[j0]) : 0;
        for (int i1 = i0 - 1; i1 >= 0 && s0 != 0; i1--) {
            int j1 = inner[i1];
            int64_t s1 = view->shape[j1] > 1 ? llabs((long long)view->strides[j1]) : 0;
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

/*
 * A copy of view's elements (numel of them) laid out in perm's order
 * (memory_perm's, not C order): NumPy computes on the array in its memory
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
    *c_order = memory_perm(view, perm);
    return *c_order ? NULL : copy_perm(view, dt, sizes, perm, numel);
}
