/*
 * ops/infer_index.c - shape rules of the ops that the runtime computes along
 * one dim from the data (the INDEX family, run by hop_eager also in plans):
 * cumsum/cumprod, sort/argsort, take (gather by an integer tensor), put
 * (scatter into a copy) and searchsorted; and of the dynamic indexing ops,
 * whose start is a tensor read at run time: dynamic_slice (a view),
 * dynamic_update_slice, and mask_gradient (a view whose gradient a mask
 * filters).
 *
 * Messages beyond those of infer.c:
 *   HOP_DTYPE  "take: index must be an integer tensor, got f32[3]"
 *   HOP_SHAPE  "take: cannot take from a 0-d tensor, got f32[]"
 *              "take: the result would have 9 dims (f32[2, 3, 4] with an index of
 *               i64[1, 1, 1, 1, 1, 1, 1]); hop tensors have at most 8"
 *              "take: cannot take 1 element(s) from dim 0 of size 0 in f32[0, 3]"
 *              "dynamic_slice: a slice of 4 elements does not fit in dim 0 of f32[3]"
 *              "dynamic_update_slice: update f32[2, 4] does not fit x f32[3, 3] along
 *               dim 0"
 *              "mask_gradient: mask bool[4] does not broadcast to x f32[3]"
 *              "searchsorted: the sorted sequence must be 1-d, got f32[2, 3]"
 *   HOP_DTYPE  "dynamic_slice: start must be an integer tensor of rank 0, got f32[]"
 *              "put: values must have the dtype of x (f32[3]), got f64[2]"
 */
#include "ops/infer.h"

#include <inttypes.h>

/* A dim of x; a 0-d tensor accepts 0 and -1, as the reductions do. */
static hop_status
one_dim(hop__infer *c, size_t i, const hop_meta *x, int *d)
{
    int64_t v;
    hop_status st = hop__arg_int(c, i, &v);
    if (st != HOP_OK)
        return st;
    return hop__wrap_dim(c, v, x->rank > 0 ? x->rank : 1, x, d);
}

/* cumsum/cumprod(x, dim): x's shape; the dtype of sum/prod (bool and signed
 * ints give i64, unsigned u64, floats and complex numbers keep theirs). */
hop_status
hop__infer_scan(hop__infer *c)
{
    const hop_meta *x;
    int d;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = one_dim(c, 1, x, &d)) != HOP_OK)
        return st;
    hop_dtype dtype = x->dtype;
    if (!hop_dtype_is_float(dtype) && !hop_dtype_is_complex(dtype))
        dtype = hop_dtype_is_unsigned(dtype) ? HOP_U64 : HOP_I64;
    return hop__set_tensor(c, dtype, x->rank, x->sizes);
}

/* sort(x, dim, descending, kind): x's shape and dtype; argsort: i64
 * indices.  NumPy's kinds have no descending order. */
hop_status
hop__infer_sort(hop__infer *c)
{
    const hop_meta *x;
    int d;
    bool descending;
    int64_t kind;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = one_dim(c, 1, x, &d)) != HOP_OK ||
        (st = hop__arg_bool(c, 2, &descending)) != HOP_OK ||
        (st = hop__arg_int(c, 3, &kind)) != HOP_OK)
        return st;
    if (kind < HOP_SORT_STABLE || kind > HOP_SORT_HEAP)
        return hop_error(HOP_INVALID,
                         "%s: kind must be 0 (stable), 1 (quick) or 2 (heap), got %" PRId64,
                         c->name, kind);
    if (descending && kind != HOP_SORT_STABLE)
        return hop_error(HOP_INVALID, "%s: only the stable kind sorts in descending order",
                         c->name);
    return hop__set_tensor(c, c->op == HOP_OP_argsort ? HOP_I64 : x->dtype, x->rank, x->sizes);
}

/* take(x, dim, index): x.shape[:dim] + index.shape + x.shape[dim+1:]. */
hop_status
hop__infer_take(hop__infer *c)
{
    const hop_meta *x, *idx;
    hop_status st;
    hop__text tx, ti;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_tensor(c, 2, &idx)) != HOP_OK)
        return st;
    if (x->rank == 0)
        return hop_error(HOP_SHAPE, "take: cannot take from a 0-d tensor, got %s",
                         hop__meta_text(&tx, x));
    int d;
    int64_t v;
    if ((st = hop__arg_int(c, 1, &v)) != HOP_OK ||
        (st = hop__wrap_dim(c, v, x->rank, x, &d)) != HOP_OK)
        return st;
    if (!hop_dtype_is_int(idx->dtype))
        return hop_error(HOP_DTYPE, "take: index must be an integer tensor, got %s",
                         hop__meta_text(&ti, idx));
    int rank = x->rank - 1 + idx->rank;
    if (rank > HOP_MAX_RANK)
        return hop_error(HOP_SHAPE,
                         "take: the result would have %d dims (%s with an index of %s); hop "
                         "tensors have at most %d",
                         rank, hop__meta_text(&tx, x), hop__meta_text(&ti, idx), HOP_MAX_RANK);
    /* Nothing can be taken from an empty dim: refused now when both sizes
     * are known (otherwise every index fails when the op runs). */
    const hop_expr *numel = hop_meta_numel(idx, c->env);
    int64_t n;
    if (numel == NULL)
        return hop__sym_failed(c);
    if (hop__is_const(x->sizes[d], 0) && hop_expr_const_value(numel, &n) && n > 0)
        return hop_error(HOP_SHAPE, "take: cannot take %lld element(s) from dim %d of size 0 in %s",
                         (long long)n, d, hop__meta_text(&tx, x));
    const hop_expr *sizes[HOP_MAX_RANK];
    int k = 0;
    for (int i = 0; i < d; i++)
        sizes[k++] = x->sizes[i];
    for (int i = 0; i < idx->rank; i++)
        sizes[k++] = idx->sizes[i];
    for (int i = d + 1; i < x->rank; i++)
        sizes[k++] = x->sizes[i];
    return hop__set_tensor(c, x->dtype, rank, sizes);
}

/* ------------------------------------------------------- dynamic indexing */

/* Argument i is a start read at run time: an integer tensor of rank 0 (or,
 * with scalars, an INT or a SymInt). */
static hop_status
start_arg(hop__infer *c, size_t i, bool scalars)
{
    const hop_operand *o = &c->args[i];
    hop__text t;
    if (scalars && (o->kind == HOP_OPND_INT ||
                    (o->kind == HOP_OPND_SYM && o->u.sym && !hop_expr_is_bool(o->u.sym))))
        return HOP_OK;
    if (o->kind != HOP_OPND_TENSOR)
        return hop__kind_error(c, i,
                               scalars ? "an int, a SymInt or an integer tensor of rank 0"
                                       : "an integer tensor of rank 0");
    const hop_meta *m = o->u.tensor;
    if (!hop_dtype_is_int(m->dtype) || m->rank != 0)
        return hop_error(HOP_DTYPE, "%s: start must be an integer tensor of rank 0, got %s",
                         c->name, hop__meta_text(&t, m));
    return HOP_OK;
}

/* size <= n along dim d of x, decided (a guard for backed sizes); what
 * names the slice in the message. */
static hop_status
fits(hop__infer *c, const hop_expr *size, const hop_meta *x, int d, const char *what)
{
    bool ok;
    hop__text ts, tx;
    hop_status st = hop__decide(c, hop_sym_le(c->env, size, x->sizes[d]), &ok);
    if (st != HOP_OK)
        return st;
    if (!ok)
        return hop_error(HOP_SHAPE, "%s: %s of %s elements does not fit in dim %d of %s", c->name,
                         what, hop__expr_text(&ts, size), d, hop__meta_text(&tx, x));
    return HOP_OK;
}

/* dynamic_slice(x, dim, start, size): x with `size` along dim; size None:
 * one element, the dim dropped. */
hop_status
hop__infer_dynamic_slice(hop__infer *c)
{
    const hop_meta *x;
    const hop_expr *size;
    int d;
    bool neg;
    hop_status st;
    hop__text tx;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    if (x->rank == 0)
        return hop_error(HOP_SHAPE, "dynamic_slice: cannot slice a 0-d tensor, got %s",
                         hop__meta_text(&tx, x));
    bool keep = c->args[3].kind != HOP_OPND_NONE;
    if ((st = one_dim(c, 1, x, &d)) != HOP_OK || (st = start_arg(c, 2, false)) != HOP_OK)
        return st;
    if (!keep)
        size = hop__const(c, 1);
    else if ((st = hop__operand_symint(c, &c->args[3], "size", &size)) != HOP_OK)
        return st;
    if (size == NULL)
        return hop__sym_failed(c);
    if ((st = hop__decide(c, hop_sym_lt(c->env, size, hop__const(c, 0)), &neg)) != HOP_OK)
        return st;
    if (neg)
        return hop_error(HOP_INVALID, "dynamic_slice: size must be >= 0, got %s",
                         hop__expr_text(&tx, size));
    if ((st = fits(c, size, x, d, "a slice")) != HOP_OK)
        return st;
    const hop_expr *sizes[HOP_MAX_RANK];
    memcpy(sizes, x->sizes, sizeof sizes);
    sizes[d] = size;
    if (!keep) /* x[i]: the dim goes */
        memmove(sizes + d, sizes + d + 1, (size_t)(x->rank - d - 1) * sizeof *sizes);
    return hop__set_tensor(c, x->dtype, keep ? x->rank : x->rank - 1, sizes);
}

/* dynamic_update_slice(x, update, dim, start): x's metadata. */
hop_status
hop__infer_dynamic_update_slice(hop__infer *c)
{
    const hop_meta *x, *u;
    int d;
    hop_status st;
    hop__text tx, tu;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_tensor(c, 1, &u)) != HOP_OK)
        return st;
    if (x->rank == 0)
        return hop_error(HOP_SHAPE,
                         "dynamic_update_slice: cannot update a slice of a 0-d tensor, "
                         "got %s",
                         hop__meta_text(&tx, x));
    if ((st = one_dim(c, 2, x, &d)) != HOP_OK || (st = start_arg(c, 3, true)) != HOP_OK)
        return st;
    if (u->dtype != x->dtype)
        return hop_error(HOP_DTYPE, "dynamic_update_slice: update %s must have x's dtype (x %s)",
                         hop__meta_text(&tu, u), hop__meta_text(&tx, x));
    bool same = u->rank == x->rank;
    for (int k = 0; same && k < x->rank; k++)
        if (k != d && (st = hop__decide_eq(c, u->sizes[k], x->sizes[k], &same)) != HOP_OK)
            return st;
    if (same &&
        (st = hop__decide(c, hop_sym_le(c->env, u->sizes[d], x->sizes[d]), &same)) != HOP_OK)
        return st;
    if (!same)
        return hop_error(HOP_SHAPE,
                         "dynamic_update_slice: update %s does not fit x %s along "
                         "dim %d",
                         hop__meta_text(&tu, u), hop__meta_text(&tx, x), d);
    return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
}

/* put(x, index, values, combine): x's shape and dtype.  values has x's
 * dtype for a BOOL combine; for an INT one it is the dtype the combining op
 * computes in, which the op must take and give back.  How many elements it
 * has is checked when the op runs (with a boolean mask's index, their
 * counts are known only then). */
hop_status
hop__infer_put(hop__infer *c)
{
    const hop_meta *x, *idx, *v;
    hop_status st;
    hop__text tx, ti;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK ||
        (st = hop__arg_tensor(c, 1, &idx)) != HOP_OK || (st = hop__arg_tensor(c, 2, &v)) != HOP_OK)
        return st;
    if (!hop_dtype_is_int(idx->dtype))
        return hop_error(HOP_DTYPE, "put: index must be an integer tensor, got %s",
                         hop__meta_text(&ti, idx));
    if (c->args[3].kind == HOP_OPND_INT) {
        int64_t code = c->args[3].u.i;
        hop_op op = hop_put_combine_op(code);
        if (op == HOP_OP_COUNT)
            return hop_error(HOP_INVALID, "put: %" PRId64 " is not a combine code (0 to %d)", code,
                             HOP_PUT_COMBINE_COUNT - 1);
        /* the combining op on two scalars of values' dtype: no sizes, so no
         * decision reaches the env */
        hop_meta s = {.dtype = v->dtype, .rank = 0};
        hop_operand two[2] = {{.kind = HOP_OPND_TENSOR, .u.tensor = &s},
                              {.kind = HOP_OPND_TENSOR, .u.tensor = &s}};
        hop_value_info r;
        /* maximum and minimum take no complex operands as ops, but combine
         * them in put by NumPy's order (runtime/scan_sort.c) */
        bool complex_extreme =
            hop_dtype_is_complex(v->dtype) && (op == HOP_OP_maximum || op == HOP_OP_minimum);
        if (!complex_extreme &&
            (hop_op_infer(c->env, op, two, 2, &r) != HOP_OK || r.meta.dtype != v->dtype)) {
            return hop_error(HOP_DTYPE, "put: %s cannot combine values %s in their dtype",
                             hop_op_get(op)->name, hop__meta_text(&ti, v));
        }
        return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
    }
    bool acc;
    if ((st = hop__arg_bool(c, 3, &acc)) != HOP_OK)
        return st;
    if (v->dtype != x->dtype)
        return hop_error(HOP_DTYPE, "put: values must have the dtype of x (%s), got %s",
                         hop__meta_text(&tx, x), hop__meta_text(&ti, v));
    if (acc && x->dtype == HOP_BOOL)
        return hop_error(HOP_DTYPE, "put: accumulate is not supported for bool tensors, got %s",
                         hop__meta_text(&tx, x));
    return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
}

/* mask_gradient(x, mask): x's metadata; mask broadcasts to x's shape. */
hop_status
hop__infer_mask_gradient(hop__infer *c)
{
    const hop_meta *x, *m;
    hop_status st;
    hop__text tx, tm;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_tensor(c, 1, &m)) != HOP_OK)
        return st;
    if (m->dtype != HOP_BOOL)
        return hop_error(HOP_DTYPE, "mask_gradient: mask must be a bool tensor, got %s",
                         hop__meta_text(&tm, m));
    bool ok = m->rank <= x->rank;
    for (int k = 0; ok && k < m->rank; k++) {
        const hop_expr *ms = m->sizes[m->rank - 1 - k], *xs = x->sizes[x->rank - 1 - k];
        if (hop__is_const(ms, 1))
            continue;
        if ((st = hop__decide_eq(c, ms, xs, &ok)) != HOP_OK)
            return st;
    }
    if (!ok)
        return hop_error(HOP_SHAPE, "mask_gradient: mask %s does not broadcast to x %s",
                         hop__meta_text(&tm, m), hop__meta_text(&tx, x));
    return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
}

/* fail_if(x, flag, kind): x's metadata; flag a bool tensor of any shape,
 * kind a code of HOP_CHECK_KIND_LIST. */
hop_status
hop__infer_fail_if(hop__infer *c)
{
    const hop_meta *x, *f;
    int64_t kind;
    hop_status st;
    hop__text tf;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_tensor(c, 1, &f)) != HOP_OK ||
        (st = hop__arg_int(c, 2, &kind)) != HOP_OK)
        return st;
    if (f->dtype != HOP_BOOL)
        return hop_error(HOP_DTYPE, "fail_if: flag must be a bool tensor, got %s",
                         hop__meta_text(&tf, f));
    if (hop_check_kind_message(kind) == NULL)
        return hop_error(HOP_INVALID, "fail_if: %" PRId64 " is not a check kind (0 to %d)", kind,
                         HOP_CHECK_KIND_COUNT - 1);
    return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
}

/* searchsorted(sorted, values, right): i64 of values' shape; sorted is 1-d
 * and of values' dtype. */
hop_status
hop__infer_searchsorted(hop__infer *c)
{
    const hop_meta *a, *v;
    bool right;
    hop_status st;
    hop__text ta, tv;
    if ((st = hop__arg_tensor(c, 0, &a)) != HOP_OK || (st = hop__arg_tensor(c, 1, &v)) != HOP_OK ||
        (st = hop__arg_bool(c, 2, &right)) != HOP_OK)
        return st;
    if (a->rank != 1)
        return hop_error(HOP_SHAPE, "searchsorted: the sorted sequence must be 1-d, got %s",
                         hop__meta_text(&ta, a));
    if (a->dtype != v->dtype)
        return hop_error(HOP_DTYPE, "searchsorted: dtypes differ, got %s and %s",
                         hop__meta_text(&ta, a), hop__meta_text(&tv, v));
    return hop__set_tensor(c, HOP_I64, v->rank, v->sizes);
}
