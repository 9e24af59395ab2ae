/*
 * runtime/shape_ops.c - view ops of eager calls and kernels (their geometry
 * is ops/view.c's hop_view_of), and the kernels of cat/stack, arange,
 * nonzero and dynamic_update_slice.
 *
 * Shape inference has checked every operand and computed the result's
 * sizes (c->sizes) before anything here runs.
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

/* The int parameters of c as hop_view_of takes them.  Sizes come from shape
 * inference (c->sizes), so a caller may view a tensor as another shape
 * without list operands (kernel.c's reshape into out). */
static int
view_params(const hop__call *c, int64_t *p, unsigned *none)
{
    const hop_tensor *x = c->args[0].u.tensor;
    const hop_rt_arg *args = c->args;
    int n = 0;
    *none = 0;
    switch (c->op) {
    case HOP_OP_reshape:
    case HOP_OP_view:
    case HOP_OP_expand:
        for (int k = 0; k < c->res.meta.rank; k++)
            p[n++] = c->sizes[k];
        break;
    case HOP_OP_permute:
        for (size_t k = 0; k < args[1].u.list.n && k < HOP_MAX_RANK; k++)
            p[n++] = args[1].u.list.items[k].u.i;
        break;
    case HOP_OP_squeeze: {
        /* The dims that stay: those not of size 1, or not the one named. */
        int only = args[1].kind == HOP_OPND_INT ? wrap_dim(args[1].u.i, x->rank) : -1;
        for (int k = 0; k < x->rank; k++)
            if (!(x->sizes[k] == 1 && (only < 0 || only == k)))
                p[n++] = k;
        break;
    }
    case HOP_OP_slice:
        p[n++] = args[1].u.i;
        for (int k = 2; k <= 3; k++) {
            if (args[k].kind != HOP_OPND_INT)
                *none |= 1u << (k - 2);
            p[n++] = args[k].kind == HOP_OPND_INT ? args[k].u.i : 0;
        }
        p[n++] = args[4].u.i;
        break;
    case HOP_OP_dynamic_slice: /* dim, the start as read, the size, keep */
        p[n++] = args[1].u.i;
        p[n++] = hop__start_value(&args[2]);
        p[n++] = args[3].kind == HOP_OPND_NONE ? 1 : c->sizes[wrap_dim(args[1].u.i, x->rank)];
        p[n++] = args[3].kind != HOP_OPND_NONE;
        break;
    case HOP_OP_mask_gradient:
    case HOP_OP_fail_if:
        break;
    default: /* transpose, unsqueeze, select: ints */
        for (size_t k = 1; k < c->nargs && k <= 2; k++)
            p[n++] = args[k].u.i;
        break;
    }
    return n;
}

int64_t
hop__start_value(const hop_rt_arg *a)
{
    if (a->kind == HOP_OPND_TENSOR)
        return hop__load_i64(a->u.tensor->data, a->u.tensor->dtype);
    return a->u.i;
}

/* ------------------------------------------------- dynamic_update_slice */

/* Copies src (broadcast) into the strided array (data, sizes, strides) of
 * dtype, on this thread. */
static void
copy_into(char *data, hop_dtype dtype, int rank, const int64_t *sizes, const int64_t *strides,
          const hop_tensor *src)
{
    hop__ew_src s = {src->data, src->dtype, src->rank, src->sizes, src->strides, {0}};
    hop_dtype need = dtype;
    hop__ew e;
    hop__ew_init(&e, data, dtype, rank, sizes, strides, &s, &need, 1, hop__vfn_copy(dtype), dtype);
    hop__ew_compute(&e, 0, 1);
}

void
hop__dynamic_update(const hop__call *c, hop_tensor *t)
{
    const hop_tensor *x = c->args[0].u.tensor, *u = c->args[1].u.tensor;
    int d = wrap_dim(c->args[2].u.i, x->rank);
    int64_t s = hop_dynamic_start(hop__start_value(&c->args[3]), x->sizes[d], u->sizes[d]);
    copy_into(t->data, t->dtype, t->rank, t->sizes, t->strides, x);
    int64_t sizes[HOP_MAX_RANK];
    memcpy(sizes, t->sizes, sizeof sizes);
    sizes[d] = u->sizes[d];
    copy_into((char *)t->data + s * t->strides[d] * (int64_t)hop_dtype_size(t->dtype), t->dtype,
              t->rank, sizes, t->strides, u);
}

hop_status
hop__view_geometry(const hop__call *c, hop_view *v, bool *needs_copy)
{
    const hop_tensor *x = c->args[0].u.tensor;
    if (c->op == HOP_OP_fail_if) {
        hop_status chk = hop__check_flag(c->args[1].u.tensor, c->args[2].u.i, NULL);
        if (chk != HOP_OK)
            return chk;
    }
    int64_t p[HOP_MAX_RANK + 1];
    unsigned none;
    int np = view_params(c, p, &none);
    hop_view xv = {.rank = x->rank, .offset = x->offset};
    memcpy(xv.sizes, x->sizes, sizeof xv.sizes);
    memcpy(xv.strides, x->strides, sizeof xv.strides);
    hop_status st = hop_view_of(c->op, x->dtype, &xv, p, np, none, c->info->name, v, needs_copy);
    if (st == HOP_OK && *needs_copy && c->op == HOP_OP_view) {
        hop__ttext tx, ts, tn;
        return hop_error(HOP_SHAPE, "view: cannot view %s with strides %s as %s; use reshape",
                         hop__tensor_text(&tx, x), hop__sizes_text_i(&ts, x->strides, x->rank),
                         hop__sizes_text_i(&tn, c->sizes, c->res.meta.rank));
    }
    return st;
}

/* ------------------------------------------------------------ fail_if */

/* Whether some element of the bool tensor f (any strides) is true. */
static bool
any_true(const hop_tensor *f)
{
    const unsigned char *d = f->data;
    int64_t idx[HOP_MAX_RANK] = {0}, n = 1;
    for (int k = 0; k < f->rank; k++)
        n *= f->sizes[k];
    for (int64_t i = 0, off = 0; i < n; i++) {
        if (d[off])
            return true;
        for (int k = f->rank - 1; k >= 0; k--) { /* the next index, C order */
            off += f->strides[k];
            if (++idx[k] < f->sizes[k])
                break;
            off -= f->strides[k] * f->sizes[k];
            idx[k] = 0;
        }
    }
    return false;
}

hop_status
hop__check_flag(const hop_tensor *flag, int64_t kind, const char *where)
{
    if (!any_true(flag))
        return HOP_OK;
    const char *msg = hop_check_kind_message(kind);
    if (msg == NULL) /* shape inference checked it: a plan built by hand */
        return hop_error(HOP_INVALID, "fail_if: %" PRId64 " is not a check kind", kind);
    if (where != NULL)
        return hop_error(HOP_CHECK, "fail_if: %s (check %s of kind %s)", msg, where,
                         hop_check_kind_name(kind));
    return hop_error(HOP_CHECK, "fail_if: %s (check of kind %s)", msg, hop_check_kind_name(kind));
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
hop__nonzero(const hop_tensor *x, const hop__imem *mem)
{
    int64_t n = walk_nonzero(x, NULL, 0);
    int64_t sizes[2] = {n, x->rank};
    hop_tensor *t =
        mem ? mem->result(mem->ud, HOP_I64, 2, sizes) : hop_tensor_empty(HOP_I64, 2, sizes);
    if (t == NULL)
        return NULL;
    walk_nonzero(x, t->data, n);
    return t;
}
