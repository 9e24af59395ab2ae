/*
 * runtime/shape_ops.c - the geometry of view ops (reshape/view, transpose,
 * permute, unsqueeze, squeeze, expand, select, slice), and the kernels of
 * cat/stack, arange and nonzero.
 *
 * Shape inference has checked every operand and computed the result's
 * sizes (c->sizes) before anything here runs, so these functions only turn
 * sizes into strides and offsets.  reshape/view follow PyTorch's
 * computeStride: a view exists when each run of merged or split dims is
 * contiguous within itself.
 */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <stdio.h>

static int
wrap_dim(int64_t d, int rank)
{
    int r = rank > 0 ? rank : 1;
    return (int)(d < 0 ? d + r : d);
}

/*
 * Strides for viewing (osizes, ostrides) as nsizes (same numel), or false.
 * PyTorch's at::detail::computeStride: walk the old dims from the right in
 * chunks that are contiguous in memory; each chunk must be covered exactly
 * by a run of new dims.
 */
static bool
view_strides(int orank, const int64_t *osizes, const int64_t *ostrides, int nrank,
             const int64_t *nsizes, int64_t *nstrides)
{
    int64_t numel = 1;
    for (int d = 0; d < orank; d++)
        numel *= osizes[d];
    if (numel == 0 || orank == 0) {
        int64_t s = 1;
        for (int d = nrank - 1; d >= 0; d--) {
            nstrides[d] = s;
            s *= nsizes[d] > 0 ? nsizes[d] : 1;
        }
        return true;
    }
    int view_d = nrank - 1;
    int64_t chunk_base = ostrides[orank - 1], tensor_numel = 1, view_numel = 1;
    for (int td = orank - 1; td >= 0; td--) {
        tensor_numel *= osizes[td];
        if (td == 0 || (osizes[td - 1] != 1 && ostrides[td - 1] != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || nsizes[view_d] == 1)) {
                nstrides[view_d] = view_numel * chunk_base;
                view_numel *= nsizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (td > 0) {
                chunk_base = ostrides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

hop_status
hop__view_geometry(const hop__call *c, hop_view *v, bool *needs_copy)
{
    const hop_tensor *x = c->args[0].u.tensor;
    const hop_rt_arg *args = c->args;
    int rank = x->rank;
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    memcpy(sizes, x->sizes, sizeof sizes);
    memcpy(strides, x->strides, sizeof strides);
    int64_t offset = x->offset;
    int nrank = c->res.meta.rank;
    *needs_copy = false;

    switch (c->op) {
    case HOP_OP_reshape:
    case HOP_OP_view:
        if (!view_strides(rank, x->sizes, x->strides, nrank, c->sizes, strides)) {
            if (c->op == HOP_OP_reshape) {
                *needs_copy = true;
                return HOP_OK;
            }
            hop__ttext tx, ts, tn;
            return hop_error(HOP_SHAPE, "view: cannot view %s with strides %s as %s; use reshape",
                             hop__tensor_text(&tx, x), hop__sizes_text_i(&ts, x->strides, rank),
                             hop__sizes_text_i(&tn, c->sizes, nrank));
        }
        break;
    case HOP_OP_transpose: {
        int d0 = wrap_dim(args[1].u.i, rank), d1 = wrap_dim(args[2].u.i, rank);
        strides[d0] = x->strides[d1];
        strides[d1] = x->strides[d0];
        break;
    }
    case HOP_OP_permute:
        for (int k = 0; k < rank; k++)
            strides[k] = x->strides[wrap_dim(args[1].u.list.items[k].u.i, rank)];
        break;
    case HOP_OP_unsqueeze: {
        int d = wrap_dim(args[1].u.i, rank + 1);
        int64_t s = d < rank ? x->sizes[d] * x->strides[d] : 1;
        for (int k = 0, j = 0; k <= rank; k++)
            strides[k] = k == d ? s : x->strides[j++];
        break;
    }
    case HOP_OP_squeeze: {
        int only = args[1].kind == HOP_OPND_INT ? wrap_dim(args[1].u.i, rank) : -1;
        int j = 0;
        for (int k = 0; k < rank; k++) {
            if (x->sizes[k] == 1 && (only < 0 || only == k))
                continue;
            strides[j++] = x->strides[k];
        }
        break;
    }
    case HOP_OP_expand: {
        int lead = nrank - rank;
        for (int k = 0; k < nrank; k++) {
            int xd = k - lead;
            strides[k] = xd < 0 || (x->sizes[xd] == 1 && c->sizes[k] != 1) ? 0 : x->strides[xd];
        }
        break;
    }
    case HOP_OP_select: {
        int d = wrap_dim(args[1].u.i, rank);
        int64_t idx = args[2].u.i < 0 ? args[2].u.i + x->sizes[d] : args[2].u.i;
        offset += idx * x->strides[d];
        for (int k = 0, j = 0; k < rank; k++) {
            if (k != d)
                strides[j++] = x->strides[k];
        }
        break;
    }
    case HOP_OP_slice: {
        int d = wrap_dim(args[1].u.i, rank);
        int64_t n = x->sizes[d], start = 0;
        if (args[2].kind == HOP_OPND_INT) {
            start = args[2].u.i;
            if (start < 0)
                start = start + n < 0 ? 0 : start + n;
            if (start > n)
                start = n;
        }
        offset += start * x->strides[d];
        strides[d] = x->strides[d] * args[4].u.i;
        break;
    }
    default:
        return hop_error(HOP_INVALID, "%s: not a view op", c->info->name);
    }
    v->rank = nrank;
    for (int k = 0; k < HOP_MAX_RANK; k++) {
        v->sizes[k] = k < nrank ? c->sizes[k] : 0;
        v->strides[k] = k < nrank ? strides[k] : 0;
    }
    v->offset = offset;
    return HOP_OK;
}

/* ------------------------------------------------------------ cat, stack */

void
hop__cat_compute(const hop__cat *c, int ith, int nth)
{
    const hop_tensor *out = c->out;
    size_t osz = hop_dtype_size(out->dtype);
    hop_dtype need = out->dtype;
    hop__vfn copy = hop__vfn_copy(out->dtype);
    int64_t pos = 0;
    for (size_t i = 0; i < c->n; i++) {
        const hop_tensor *x = c->items[i].u.tensor;
        int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
        int rank = 0;
        char *data;
        if (c->stack) {
            for (int d = 0; d < out->rank; d++) {
                if (d == c->dim)
                    continue;
                sizes[rank] = out->sizes[d];
                strides[rank++] = out->strides[d];
            }
            data = (char *)out->data + (int64_t)i * out->strides[c->dim] * (int64_t)osz;
        } else {
            rank = out->rank;
            memcpy(sizes, out->sizes, sizeof sizes);
            memcpy(strides, out->strides, sizeof strides);
            sizes[c->dim] = x->sizes[c->dim];
            data = (char *)out->data + pos * out->strides[c->dim] * (int64_t)osz;
            pos += x->sizes[c->dim];
        }
        hop__ew_src src = {x->data, x->dtype, x->rank, x->sizes, x->strides, {0}};
        hop__ew e;
        hop__ew_init(&e, data, out->dtype, rank, sizes, strides, &src, &need, 1, copy, out->dtype);
        hop__ew_compute(&e, ith, nth);
    }
}

/* ---------------------------------------------------------------- arange */

void
hop__arange_compute(const hop__arange *a, int ith, int nth)
{
    int64_t begin, end;
    hop__split(a->n, ith, nth, 16, &begin, &end);
    size_t esz = hop_dtype_size(a->dtype);
    for (int64_t i = begin; i < end; i++) {
        /* start + i*step stays within [start, end) by construction */
        int64_t v = a->start + i * a->step;
        hop__convert(1, a->out + i * a->stride * (int64_t)esz, a->dtype, &v, HOP_I64, 1);
    }
}

/* --------------------------------------------------------------- nonzero */

/* Calls visit(ud, idx) for each nonzero element of x in C order; returns
 * their count.  Runs of the last dim are converted to bool in blocks. */
static int64_t
walk_nonzero(const hop_tensor *x, int64_t *out, int64_t cap)
{
    int64_t numel = hop_tensor_numel(x), count = 0;
    if (numel == 0)
        return 0;
    if (x->rank == 0) {
        hop__bool b;
        hop__convert(1, &b, HOP_BOOL, x->data, x->dtype, 1);
        return b ? 1 : 0;
    }
    int r = x->rank, inner = r - 1;
    size_t esz = hop_dtype_size(x->dtype);
    int64_t idx[HOP_MAX_RANK] = {0};
    hop__bool buf[256];
    for (int64_t pos = 0; pos < numel; pos += x->sizes[inner]) {
        int64_t off = 0;
        for (int d = 0; d < inner; d++)
            off += idx[d] * x->strides[d];
        const char *row = (const char *)x->data + off * (int64_t)esz;
        for (int64_t j = 0; j < x->sizes[inner]; j += 256) {
            int64_t m = x->sizes[inner] - j < 256 ? x->sizes[inner] - j : 256;
            hop__convert(m, buf, HOP_BOOL, row + j * x->strides[inner] * (int64_t)esz, x->dtype,
                         x->strides[inner]);
            for (int64_t t = 0; t < m; t++) {
                if (!buf[t])
                    continue;
                if (count < cap) {
                    for (int d = 0; d < inner; d++)
                        out[count * r + d] = idx[d];
                    out[count * r + inner] = j + t;
                }
                count++;
            }
        }
        for (int d = inner - 1; d >= 0; d--) {
            if (++idx[d] < x->sizes[d])
                break;
            idx[d] = 0;
        }
    }
    return count;
}

hop_tensor *
hop__nonzero(const hop_tensor *x)
{
    int64_t n = walk_nonzero(x, NULL, 0);
    int64_t sizes[2] = {n, x->rank};
    hop_tensor *t = hop_tensor_empty(HOP_I64, 2, sizes);
    if (t == NULL)
        return NULL;
    walk_nonzero(x, t->data, n);
    return t;
}
