/*
 * ops/infer_shape.c - shape rules of the view and shape ops (reshape/view,
 * transpose, permute, unsqueeze, squeeze, expand, select, slice), cat and
 * stack, the factories (full, zeros, ones, arange) and the ops that produce
 * symbols or copies (item, nonzero, sym_size, to, clone).
 *
 * Messages beyond those of infer.c:
 *   HOP_INVALID "reshape: invalid size -2 in shape [2, -2]"
 *               "reshape: only one size can be -1, got [-1, -1]"
 *               "reshape: shape [...] has 9 dims, more than 8"
 *               "permute: got 2 dims [1, 0] for f32[2, 3, 4]"
 *               "permute: dim 0 repeats in [0, 0, 1]"
 *               "unsqueeze: f32[...] already has 8 dims"
 *               "expand: got 1 size [3] for f32[2, 3]"
 *               "expand: -1 is not allowed for the new leading dim 0 of [-1, 2, 3]"
 *               "select: index 5 out of range for dim 0 of f32[3, 4]"
 *               "slice: step must be positive, got 0"
 *               "cat: expected a non-empty list of tensors"
 *               "arange: step must be nonzero"
 *               "arange: end 0 is on the wrong side of start 5 for step 1"
 *   HOP_SHAPE   "reshape: shape [3, 5] is invalid for input f32[2, 7] of size 14"
 *               "reshape: cannot infer the -1 in [0, -1] for f32[0, 3]: the other sizes
 *                multiply to 0"
 *               "expand: cannot expand f32[2, 3] to [2, 4]: dim 1 has size 3, not 1"
 *               "cat: tensors must have the same rank, got f32[2, 3] and f32[3]"
 *               "cat: zero-dim tensor f32[] cannot be concatenated"
 *               "cat: sizes must match except in dim 0, got f32[2, 3] and f32[2, 4]"
 *               "stack: all tensors must have the same shape, got f32[2, 3] and f32[3]"
 *               "item: a tensor with 6 elements cannot be converted to a scalar, got i64[2, 3]"
 *   HOP_UNSUPPORTED "item: cannot trace item() of a float tensor f32[]: only integer and
 *                bool tensors give a SymInt"
 */
#include "ops/infer.h"

#include <inttypes.h>
#include <stdio.h>

/* ---------------------------------------------------------------- shapes */

/*
 * A shape argument: a LIST of INT/SymInt.  A constant -1 (an INT or a
 * constant SYM) is left as NULL in sizes[] when allow_minus1, other negative
 * constants are HOP_INVALID.  Counts -1s in *nminus1.
 */
static hop_status
parse_shape(hop__infer *c, size_t i, bool allow_minus1, const hop_expr **sizes, int *n,
            int *nminus1)
{
    const hop_operand *o = &c->args[i];
    hop__text t;
    char where[64];
    hop_status st;

    if (o->kind != HOP_OPND_LIST)
        return hop__kind_error(c, i, "a list of sizes");
    if (o->u.list.n > 0 && o->u.list.items == NULL)
        return hop_error(HOP_INVALID, "%s: argument %zu is a list with NULL items", c->name, i);
    if (o->u.list.n > HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "%s: shape %s has %zu dims, more than %d", c->name,
                         hop__operand_text(&t, o), o->u.list.n, HOP_MAX_RANK);
    *n = (int)o->u.list.n;
    *nminus1 = 0;
    for (int k = 0; k < *n; k++) {
        snprintf(where, sizeof where, "argument %zu item %d", i, k);
        if ((st = hop__operand_symint(c, &o->u.list.items[k], where, &sizes[k])) != HOP_OK)
            return st;
        int64_t v;
        if (!hop_expr_const_value(sizes[k], &v) || v >= 0)
            continue;
        if (v == -1 && allow_minus1) {
            sizes[k] = NULL;
            ++*nminus1;
            continue;
        }
        return hop_error(HOP_INVALID, "%s: invalid size %" PRId64 " in shape %s", c->name, v,
                         hop__operand_text(&t, o));
    }
    return HOP_OK;
}

/* Product of the non-NULL sizes (1 for none). */
static const hop_expr *
product(hop__infer *c, const hop_expr *const *sizes, int n)
{
    const hop_expr *p = hop__const(c, 1);
    for (int k = 0; k < n && p != NULL; k++) {
        if (sizes[k] != NULL && (p = hop_sym_mul(c->env, p, sizes[k])) == NULL)
            hop__sym_failed(c);
    }
    return p;
}

/*
 * The size a -1 stands for: numel // (product of the other sizes), after
 * checking divisibility; *out NULL when it does not divide.  Sizes that x and
 * the new shape share are cancelled first, so that [s0, s1] -> [s1, -1] gives
 * s0 rather than (s0*s1)//s1 (the sym layer only divides out constants).
 */
static hop_status
infer_minus1(hop__infer *c, const hop_meta *x, const hop_expr *const *sizes, int n,
             const hop_expr **out)
{
    const hop_expr *num[HOP_MAX_RANK], *den[HOP_MAX_RANK];
    memcpy(num, x->sizes, sizeof num);
    memcpy(den, sizes, sizeof den);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < x->rank && den[j] != NULL; i++) {
            if (num[i] == den[j])
                num[i] = den[j] = NULL;
        }
    }
    const hop_expr *a = product(c, num, x->rank), *b = product(c, den, n);
    if (a == NULL || b == NULL)
        return hop_error_code();
    hop_status st;
    bool divides = true;
    if (!hop__is_const(b, 1) &&
        (st = hop__decide_eq_int(c, hop_sym_mod(c->env, a, b), 0, &divides)) != HOP_OK)
        return st;
    *out = NULL;
    if (divides && (*out = hop_sym_floordiv(c->env, a, b)) == NULL)
        return hop__sym_failed(c);
    return HOP_OK;
}

/*
 * reshape/view: the new shape must have x's numel, decided through the
 * ShapeEnv (a guard when it takes a hint).  A -1 becomes numel // (product of
 * the other sizes) after checking divisibility.  Every hop tensor is
 * contiguous, so view has exactly reshape's rule.
 */
hop_status
hop__infer_reshape(hop__infer *c)
{
    const hop_meta *x;
    const hop_expr *sizes[HOP_MAX_RANK];
    int n, nminus1;
    hop_status st;
    hop__text tx, ts, tn;

    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK ||
        (st = parse_shape(c, 1, true, sizes, &n, &nminus1)) != HOP_OK)
        return st;
    if (nminus1 > 1)
        return hop_error(HOP_INVALID, "%s: only one size can be -1, got %s", c->name,
                         hop__operand_text(&ts, &c->args[1]));

    const hop_expr *numel = hop_meta_numel(x, c->env);
    if (numel == NULL)
        return hop__sym_failed(c);
    const hop_expr *prod = product(c, sizes, n);
    if (prod == NULL)
        return hop_error_code();
    bool ok;
    if (nminus1 == 0) {
        if ((st = hop__decide_eq(c, prod, numel, &ok)) != HOP_OK)
            return st;
    } else {
        if (hop__is_const(prod, 0))
            return hop_error(HOP_SHAPE,
                             "%s: cannot infer the -1 in %s for %s: the other sizes multiply to 0",
                             c->name, hop__operand_text(&ts, &c->args[1]), hop__meta_text(&tx, x));
        const hop_expr *q;
        if ((st = infer_minus1(c, x, sizes, n, &q)) != HOP_OK)
            return st;
        ok = q != NULL;
        for (int k = 0; k < n; k++)
            sizes[k] = sizes[k] != NULL ? sizes[k] : q;
    }
    if (!ok)
        return hop_error(HOP_SHAPE, "%s: shape %s is invalid for input %s of size %s", c->name,
                         hop__operand_text(&ts, &c->args[1]), hop__meta_text(&tx, x),
                         hop__expr_text(&tn, numel));
    return hop__set_tensor(c, x->dtype, n, sizes);
}

/* ----------------------------------------------------------- dims moves */

/* The result of a view op that only moves dims (transpose, permute,
 * unsqueeze, squeeze, select) with checked parameters p[np]: the moves are
 * view geometry's (hop__view_dims, ops/view.c), applied to x's symbolic
 * sizes; a new dim has size 1. */
static hop_status
move_dims(hop__infer *c, const hop_meta *x, const int64_t *p, int np)
{
    int from[HOP_MAX_RANK];
    int rank = hop__view_dims(c->op, x->rank, p, np, from);
    if (rank < 0)
        return hop_error(HOP_INVALID, "%s: bad dims", c->name); /* checked by the caller */
    const hop_expr *sizes[HOP_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        if (from[k] < 0 && (sizes[k] = hop__const(c, 1)) == NULL)
            return hop_error_code();
        if (from[k] >= 0)
            sizes[k] = x->sizes[from[k]];
    }
    return hop__set_tensor(c, x->dtype, rank, sizes);
}

hop_status
hop__infer_transpose(hop__infer *c)
{
    const hop_meta *x;
    int64_t d0, d1;
    int w0, w1;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &d0)) != HOP_OK ||
        (st = hop__arg_int(c, 2, &d1)) != HOP_OK ||
        (st = hop__wrap_dim(c, d0, x->rank, x, &w0)) != HOP_OK ||
        (st = hop__wrap_dim(c, d1, x->rank, x, &w1)) != HOP_OK)
        return st;
    return move_dims(c, x, (int64_t[]){w0, w1}, 2);
}

hop_status
hop__infer_permute(hop__infer *c)
{
    const hop_meta *x;
    hop_status st;
    hop__text tx, td;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    const hop_operand *o = &c->args[1];
    if (o->kind != HOP_OPND_LIST)
        return hop__kind_error(c, 1, "a list of ints");
    if (o->u.list.n > 0 && o->u.list.items == NULL)
        return hop_error(HOP_INVALID, "%s: argument 1 is a list with NULL items", c->name);
    if (o->u.list.n != (size_t)x->rank)
        return hop_error(HOP_INVALID, "permute: got %zu dims %s for %s", o->u.list.n,
                         hop__operand_text(&td, o), hop__meta_text(&tx, x));
    bool seen[HOP_MAX_RANK] = {false};
    int64_t dims[HOP_MAX_RANK];
    for (int k = 0; k < x->rank; k++) {
        const hop_operand *item = &o->u.list.items[k];
        int d;
        if (item->kind != HOP_OPND_INT)
            return hop_error(HOP_INVALID, "permute: argument 1 item %d must be an int, got %s", k,
                             hop__kind_text(item->kind));
        if ((st = hop__wrap_dim(c, item->u.i, x->rank, x, &d)) != HOP_OK)
            return st;
        if (seen[d])
            return hop_error(HOP_INVALID, "permute: dim %d repeats in %s", d,
                             hop__operand_text(&td, o));
        seen[d] = true;
        dims[k] = d;
    }
    return move_dims(c, x, dims, x->rank);
}

hop_status
hop__infer_unsqueeze(hop__infer *c)
{
    const hop_meta *x;
    int64_t d;
    int w;
    hop_status st;
    hop__text t;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &d)) != HOP_OK)
        return st;
    if (x->rank == HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "unsqueeze: %s already has %d dims", hop__meta_text(&t, x),
                         HOP_MAX_RANK);
    if ((st = hop__wrap_dim(c, d, x->rank + 1, x, &w)) != HOP_OK)
        return st;
    return move_dims(c, x, (int64_t[]){w}, 1);
}

/*
 * squeeze drops a size-1 dim (the given one, or all with None) and keeps any
 * other.  Whether a symbolic size is 1 is decided like broadcasting does; one
 * that cannot be decided (unbacked) is assumed not to be 1, as PyTorch's
 * size-oblivious rule does, so the dim stays.
 */
hop_status
hop__infer_squeeze(hop__infer *c)
{
    const hop_meta *x;
    hop_status st;
    bool only[HOP_MAX_RANK];
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    const hop_operand *o = &c->args[1];
    for (int k = 0; k < HOP_MAX_RANK; k++)
        only[k] = o->kind == HOP_OPND_NONE;
    if (o->kind == HOP_OPND_INT) {
        int d;
        if ((st = hop__wrap_dim(c, o->u.i, x->rank > 0 ? x->rank : 1, x, &d)) != HOP_OK)
            return st;
        only[d] = true;
    } else if (o->kind != HOP_OPND_NONE) {
        return hop__kind_error(c, 1, "an int or None");
    }
    int64_t keep[HOP_MAX_RANK];
    int rank = 0;
    for (int k = 0; k < x->rank; k++) {
        bool known = true, one = false;
        if (only[k]) {
            const hop_expr *one_e = hop__const(c, 1);
            if (one_e == NULL)
                return hop_error_code();
            if ((st = hop__try_decide(c, hop_sym_eq(c->env, x->sizes[k], one_e), &known, &one)) !=
                HOP_OK)
                return st;
        }
        if (!(known && one))
            keep[rank++] = k;
    }
    return move_dims(c, x, keep, rank);
}

/*
 * expand(x, sizes): sizes has at least x's rank entries; new leading dims
 * take the given size, -1 keeps x's size, and only a dim of size 1 may
 * change.  Sizes are compared like broadcasting does.
 */
hop_status
hop__infer_expand(hop__infer *c)
{
    const hop_meta *x;
    const hop_expr *sizes[HOP_MAX_RANK];
    int n, nminus1;
    hop_status st;
    hop__text tx, ts;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK ||
        (st = parse_shape(c, 1, true, sizes, &n, &nminus1)) != HOP_OK)
        return st;
    if (n < x->rank)
        return hop_error(HOP_INVALID, "expand: got %d size%s %s for %s", n, n == 1 ? "" : "s",
                         hop__operand_text(&ts, &c->args[1]), hop__meta_text(&tx, x));
    int lead = n - x->rank;
    for (int k = 0; k < n; k++) {
        if (k < lead) {
            if (sizes[k] == NULL)
                return hop_error(HOP_INVALID,
                                 "expand: -1 is not allowed for the new leading dim %d of %s", k,
                                 hop__operand_text(&ts, &c->args[1]));
            continue;
        }
        const hop_expr *have = x->sizes[k - lead], *want = sizes[k];
        if (want == NULL || want == have) {
            sizes[k] = have;
            continue;
        }
        if (hop__is_const(have, 1))
            continue;
        bool eq;
        if ((st = hop__decide_eq(c, have, want, &eq)) != HOP_OK)
            return st;
        if (eq) {
            sizes[k] = hop__pick_equal(have, want);
            continue;
        }
        if ((st = hop__decide_eq_int(c, have, 1, &eq)) != HOP_OK)
            return st;
        if (!eq) {
            hop__text th;
            return hop_error(HOP_SHAPE, "expand: cannot expand %s to %s: dim %d has size %s, not 1",
                             hop__meta_text(&tx, x), hop__operand_text(&ts, &c->args[1]), k - lead,
                             hop__expr_text(&th, have));
        }
    }
    return hop__set_tensor(c, x->dtype, n, sizes);
}

/* ---------------------------------------------------------------- select */

/*
 * select(x, dim, index) drops dim.  The index must satisfy -size <= index <
 * size; this is checked when decidable (from the constants and ranges, or by
 * a hint, which records a guard) and left to the runtime when it is
 * data-dependent.
 */
hop_status
hop__infer_select(hop__infer *c)
{
    const hop_meta *x;
    int64_t d;
    int w;
    const hop_expr *idx;
    hop_status st;
    hop__text tx;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &d)) != HOP_OK ||
        (st = hop__wrap_dim(c, d, x->rank, x, &w)) != HOP_OK ||
        (st = hop__operand_symint(c, &c->args[2], "argument 2", &idx)) != HOP_OK)
        return st;

    const hop_expr *n = x->sizes[w];
    const hop_expr *neg_n = hop_sym_neg(c->env, n);
    if (neg_n == NULL)
        return hop__sym_failed(c);
    bool known, below = true, above = true;
    if ((st = hop__try_decide(c, hop_sym_lt(c->env, idx, n), &known, &below)) != HOP_OK)
        return st;
    below = below || !known;
    if (below &&
        (st = hop__try_decide(c, hop_sym_ge(c->env, idx, neg_n), &known, &above)) != HOP_OK)
        return st;
    above = above || !known;
    if (!below || !above) {
        hop__text ti;
        return hop_error(HOP_INVALID, "select: index %s out of range for dim %d of %s",
                         hop__expr_text(&ti, idx), w, hop__meta_text(&tx, x));
    }
    return move_dims(c, x, (int64_t[]){w, 0}, 2);
}

/* ----------------------------------------------------------------- slice */

/* Min or Max of a and b, or NULL after hop__sym_failed. */
static const hop_expr *
min_or_max(hop__infer *c, bool max, const hop_expr *a, const hop_expr *b)
{
    const hop_expr *e = max ? hop_sym_max(c->env, a, b) : hop_sym_min(c->env, a, b);
    if (e == NULL)
        hop__sym_failed(c);
    return e;
}

/*
 * Python's clamping of a slice bound v into [0, n]: a negative v counts from
 * the end (and stops at 0), a positive one stops at n.  Whether v is negative
 * must be decided (a constant bound, or a symbol whose range says it); whether
 * it passes 0 or n is decided only from constants and ranges, and otherwise
 * kept as Max(v + n, 0) / Min(v, n).  So `x[:4]` on f32[s0] is f32[Min(s0, 4)]
 * with no guard: one trace serves every size, and a slice inside a cond
 * branch never rejects inputs that take the other branch (a hint decision
 * would have recorded s0 >= 4).
 */
static hop_status
clamp_bound(hop__infer *c, const hop_expr *v, const hop_expr *n, const hop_expr **out)
{
    bool neg, known, past;
    hop_status st;
    const hop_expr *zero = hop__const(c, 0);
    if (zero == NULL)
        return hop_error_code();
    if ((st = hop__decide(c, hop_sym_lt(c->env, v, zero), &neg)) != HOP_OK)
        return st;
    if (neg) {
        const hop_expr *w = hop_sym_add(c->env, v, n);
        if (w == NULL)
            return hop__sym_failed(c);
        if ((st = hop__decide_static(c, hop_sym_lt(c->env, w, zero), &known, &past)) != HOP_OK)
            return st;
        *out = !known ? min_or_max(c, true, w, zero) : past ? zero : w;
    } else {
        if ((st = hop__decide_static(c, hop_sym_gt(c->env, v, n), &known, &past)) != HOP_OK)
            return st;
        *out = !known ? min_or_max(c, false, v, n) : past ? n : v;
    }
    return *out == NULL ? hop_error_code() : HOP_OK;
}

/* ceil(a / d) for d > 0, as (a + d - 1) // d, which prints the way people
 * write it; a or d may be NULL from a failed constructor.  NULL after
 * hop__sym_failed. */
static const hop_expr *
ceil_div(hop__infer *c, const hop_expr *a, const hop_expr *d)
{
    if (a != NULL && d != NULL && !hop__is_const(d, 1)) {
        const hop_expr *dm1 = hop_sym_add_int(c->env, d, -1);
        a = dm1 == NULL ? NULL : hop_sym_add(c->env, a, dm1);
        a = a == NULL ? NULL : hop_sym_floordiv(c->env, a, d);
    }
    if (a == NULL || d == NULL)
        hop__sym_failed(c);
    return d == NULL ? NULL : a;
}

/*
 * slice(x, dim, start, end, step) with Python semantics: None start is 0,
 * None end is the size, both clamp into [0, size], an end before the start
 * gives size 0; the size is ceil((end - start) / step).  Only the sign of a
 * symbolic bound can add a guard (clamp_bound); everything else stays
 * symbolic, with Min/Max.
 */
hop_status
hop__infer_slice(hop__infer *c)
{
    const hop_meta *x;
    int64_t d, step;
    int w;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &d)) != HOP_OK ||
        (st = hop__wrap_dim(c, d, x->rank, x, &w)) != HOP_OK)
        return st;
    const hop_expr *bound[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const hop_operand *o = &c->args[2 + k];
        char where[32];
        snprintf(where, sizeof where, "argument %d", 2 + k);
        if (o->kind != HOP_OPND_NONE &&
            (st = hop__operand_symint(c, o, where, &bound[k])) != HOP_OK)
            return st;
    }
    if ((st = hop__arg_int(c, 4, &step)) != HOP_OK)
        return st;
    if (step <= 0)
        return hop_error(HOP_INVALID, "slice: step must be positive, got %" PRId64, step);

    const hop_expr *n = x->sizes[w];
    const hop_expr *start = hop__const(c, 0), *end = n;
    if (start == NULL)
        return hop_error_code();
    if (bound[0] != NULL && (st = clamp_bound(c, bound[0], n, &start)) != HOP_OK)
        return st;
    if (bound[1] != NULL && (st = clamp_bound(c, bound[1], n, &end)) != HOP_OK)
        return st;
    /* Both bounds are in [0, n] now, so only two explicit ones can cross;
     * when the ranges cannot tell, Max(end, start) keeps the size >= 0. */
    bool known = true, empty = false;
    if (bound[0] != NULL && bound[1] != NULL &&
        (st = hop__decide_static(c, hop_sym_lt(c->env, end, start), &known, &empty)) != HOP_OK)
        return st;
    if (!known)
        end = min_or_max(c, true, end, start);
    else if (empty)
        end = start;
    if (end == NULL)
        return hop_error_code();

    const hop_expr *len = ceil_div(c, hop_sym_sub(c->env, end, start), hop__const(c, step));
    if (len == NULL)
        return hop_error_code();
    const hop_expr *sizes[HOP_MAX_RANK];
    memcpy(sizes, x->sizes, sizeof sizes);
    sizes[w] = len;
    return hop__set_tensor(c, x->dtype, x->rank, sizes);
}

/* ------------------------------------------------------------- cat, stack */

/* cat's and stack's arguments: the LIST of tensors in argument 0,
 * non-empty, their promoted dtype, the first one's meta (what the others
 * must agree with) and the dim in argument 1. */
typedef struct {
    const hop_operand *items;
    size_t n;
    hop_dtype dtype;
    const hop_meta *first;
    int64_t dim;
} tensor_list;

static hop_status
tensor_list_of(hop__infer *c, tensor_list *l)
{
    const hop_operand *o = &c->args[0];
    if (o->kind != HOP_OPND_LIST)
        return hop__kind_error(c, 0, "a list of tensors");
    if (o->u.list.n == 0 || o->u.list.items == NULL)
        return hop_error(HOP_INVALID, "%s: expected a non-empty list of tensors", c->name);
    for (size_t k = 0; k < o->u.list.n; k++) {
        const hop_operand *item = &o->u.list.items[k];
        if (item->kind != HOP_OPND_TENSOR)
            return hop_error(HOP_INVALID, "%s: argument 0 item %zu must be a tensor, got %s",
                             c->name, k, hop__kind_text(item->kind));
        hop_status st = hop__check_meta(c, 0, item->u.tensor);
        if (st != HOP_OK)
            return st;
        l->dtype =
            k == 0 ? item->u.tensor->dtype : hop_dtype_promote(l->dtype, item->u.tensor->dtype);
    }
    l->items = o->u.list.items;
    l->n = o->u.list.n;
    l->first = l->items[0].u.tensor;
    return hop__arg_int(c, 1, &l->dim);
}

/* cat: same rank (at least 1); all sizes but dim's agree; dim's add up. */
hop_status
hop__infer_cat(hop__infer *c)
{
    tensor_list l;
    hop_status st = tensor_list_of(c, &l);
    if (st != HOP_OK)
        return st;
    hop__text t0, t1;
    for (size_t k = 0; k < l.n; k++) {
        if (l.items[k].u.tensor->rank == 0)
            return hop_error(HOP_SHAPE, "cat: zero-dim tensor %s cannot be concatenated",
                             hop__meta_text(&t0, l.items[k].u.tensor));
        if (l.items[k].u.tensor->rank != l.first->rank)
            return hop_error(HOP_SHAPE, "cat: tensors must have the same rank, got %s and %s",
                             hop__meta_text(&t0, l.first),
                             hop__meta_text(&t1, l.items[k].u.tensor));
    }
    int w;
    if ((st = hop__wrap_dim(c, l.dim, l.first->rank, l.first, &w)) != HOP_OK)
        return st;
    const hop_expr *sizes[HOP_MAX_RANK];
    memcpy(sizes, l.first->sizes, sizeof sizes);
    for (size_t k = 1; k < l.n; k++) {
        const hop_meta *m = l.items[k].u.tensor;
        for (int j = 0; j < m->rank; j++) {
            if (j == w) {
                if ((sizes[j] = hop_sym_add(c->env, sizes[j], m->sizes[j])) == NULL)
                    return hop__sym_failed(c);
                continue;
            }
            bool eq;
            if ((st = hop__decide_eq(c, sizes[j], m->sizes[j], &eq)) != HOP_OK)
                return st;
            if (!eq)
                return hop_error(HOP_SHAPE, "cat: sizes must match except in dim %d, got %s and %s",
                                 w, hop__meta_text(&t0, l.first), hop__meta_text(&t1, m));
            sizes[j] = hop__pick_equal(sizes[j], m->sizes[j]);
        }
    }
    return hop__set_tensor(c, l.dtype, l.first->rank, sizes);
}

/* stack: equal shapes; a new dim of size n at dim (in [-(rank+1), rank]). */
hop_status
hop__infer_stack(hop__infer *c)
{
    tensor_list l;
    hop_status st = tensor_list_of(c, &l);
    if (st != HOP_OK)
        return st;
    hop__text t0, t1;
    if (l.first->rank == HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "stack: %s already has %d dims", hop__meta_text(&t0, l.first),
                         HOP_MAX_RANK);
    int w;
    if ((st = hop__wrap_dim(c, l.dim, l.first->rank + 1, l.first, &w)) != HOP_OK)
        return st;
    const hop_expr *shape[HOP_MAX_RANK];
    memcpy(shape, l.first->sizes, sizeof shape);
    for (size_t k = 1; k < l.n; k++) {
        const hop_meta *m = l.items[k].u.tensor;
        bool eq = m->rank == l.first->rank;
        for (int j = 0; j < m->rank && eq; j++) {
            if ((st = hop__decide_eq(c, shape[j], m->sizes[j], &eq)) != HOP_OK)
                return st;
            if (eq)
                shape[j] = hop__pick_equal(shape[j], m->sizes[j]);
        }
        if (!eq)
            return hop_error(HOP_SHAPE,
                             "stack: all tensors must have the same shape, got %s and %s",
                             hop__meta_text(&t0, l.first), hop__meta_text(&t1, m));
    }
    const hop_expr *count = hop__const(c, (int64_t)l.n);
    if (count == NULL)
        return hop_error_code();
    const hop_expr *sizes[HOP_MAX_RANK];
    for (int k = 0, j = 0; k <= l.first->rank; k++)
        sizes[k] = k == w ? count : shape[j++];
    return hop__set_tensor(c, l.dtype, l.first->rank + 1, sizes);
}

/* ------------------------------------------------------------- factories */

/*
 * full(shape, value, dtype) infers the dtype from the value when dtype is
 * None (bool, i64 for an int or a SymInt, f32 for a float); zeros and ones
 * take (shape, dtype) with f32 by default.
 */
hop_status
hop__infer_full(hop__infer *c)
{
    const hop_expr *sizes[HOP_MAX_RANK];
    int n, nminus1;
    hop_dtype dtype;
    hop_status st;
    if ((st = parse_shape(c, 0, false, sizes, &n, &nminus1)) != HOP_OK)
        return st;
    if (c->op == HOP_OP_full) {
        const hop_operand *v = &c->args[1];
        hop_dtype dflt;
        if (v->kind == HOP_OPND_INT ||
            (v->kind == HOP_OPND_SYM && v->u.sym != NULL && !hop_expr_is_bool(v->u.sym)))
            dflt = HOP_I64;
        else if (v->kind == HOP_OPND_FLOAT)
            dflt = HOP_F32;
        else if (v->kind == HOP_OPND_BOOL || (v->kind == HOP_OPND_SYM && v->u.sym != NULL))
            dflt = HOP_BOOL;
        else
            return hop__kind_error(c, 1, "an int, a float or a bool");
        st = hop__arg_dtype(c, 2, true, dflt, &dtype);
    } else {
        st = hop__arg_dtype(c, 1, true, HOP_F32, &dtype);
    }
    if (st != HOP_OK)
        return st;
    return hop__set_tensor(c, dtype, n, sizes);
}

/*
 * arange(start, end, step, dtype): ceil((end - start) / step) elements.  The
 * step's sign and the bounds' order are decided (guards for hints); bounds
 * that run against the step are HOP_INVALID, as in PyTorch.
 */
hop_status
hop__infer_arange(hop__infer *c)
{
    const hop_expr *start, *end, *step;
    hop_dtype dtype;
    hop_status st;
    if ((st = hop__operand_symint(c, &c->args[0], "argument 0", &start)) != HOP_OK ||
        (st = hop__operand_symint(c, &c->args[1], "argument 1", &end)) != HOP_OK ||
        (st = hop__operand_symint(c, &c->args[2], "argument 2", &step)) != HOP_OK ||
        (st = hop__arg_dtype(c, 3, true, HOP_I64, &dtype)) != HOP_OK)
        return st;
    const hop_expr *zero = hop__const(c, 0);
    if (zero == NULL)
        return hop_error_code();
    bool pos, neg, ok;
    if ((st = hop__decide(c, hop_sym_gt(c->env, step, zero), &pos)) != HOP_OK)
        return st;
    if (!pos && (st = hop__decide(c, hop_sym_lt(c->env, step, zero), &neg)) != HOP_OK)
        return st;
    if (!pos && !neg)
        return hop_error(HOP_INVALID, "arange: step must be nonzero");
    st = hop__decide(c, pos ? hop_sym_ge(c->env, end, start) : hop_sym_le(c->env, end, start), &ok);
    if (st != HOP_OK)
        return st;
    if (!ok) {
        hop__text te, ts, tp;
        return hop_error(HOP_INVALID, "arange: end %s is on the wrong side of start %s for step %s",
                         hop__expr_text(&te, end), hop__expr_text(&ts, start),
                         hop__expr_text(&tp, step));
    }

    /* ceil((end - start) / step), written over |step| */
    const hop_expr *size =
        pos ? ceil_div(c, hop_sym_sub(c->env, end, start), step)
            : ceil_div(c, hop_sym_sub(c->env, start, end), hop_sym_neg(c->env, step));
    if (size == NULL)
        return hop_error_code();
    return hop__set_tensor(c, dtype, 1, &size);
}

/* ----------------------------------------------------- symbols and copies */

/*
 * item(x) -> a fresh unbacked SymInt, so x must hold one element of an
 * integer or bool dtype (a float would need a SymFloat, which hop does not
 * have).  Its range is that of the dtype: [0, 1] for bool.
 */
hop_status
hop__infer_item(hop__infer *c)
{
    const hop_meta *x;
    hop_status st;
    hop__text t, tn;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    if (hop_dtype_is_float(x->dtype))
        return hop_error(HOP_UNSUPPORTED,
                         "item: cannot trace item() of a float tensor %s: only integer and bool "
                         "tensors give a SymInt",
                         hop__meta_text(&t, x));
    const hop_expr *numel = hop_meta_numel(x, c->env);
    bool one;
    if (numel == NULL)
        return hop__sym_failed(c);
    if ((st = hop__decide_eq_int(c, numel, 1, &one)) != HOP_OK)
        return st;
    if (!one)
        return hop_error(HOP_SHAPE,
                         "item: a tensor with %s elements cannot be converted to a scalar, got %s",
                         hop__expr_text(&tn, numel), hop__meta_text(&t, x));
    /* The dtype's range (u64 beyond INT64_MAX saturates when read). */
    int64_t lo, hi;
    switch (x->dtype) {
    case HOP_BOOL:
        lo = 0, hi = 1;
        break;
    case HOP_I8:
        lo = INT8_MIN, hi = INT8_MAX;
        break;
    case HOP_U8:
        lo = 0, hi = UINT8_MAX;
        break;
    case HOP_U16:
        lo = 0, hi = UINT16_MAX;
        break;
    case HOP_U32:
        lo = 0, hi = UINT32_MAX;
        break;
    case HOP_I16:
        lo = INT16_MIN, hi = INT16_MAX;
        break;
    case HOP_I32:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
    case HOP_U64:
        lo = 0, hi = INT64_MAX;
        break;
    default:
        lo = INT64_MIN, hi = INT64_MAX;
        break;
    }
    const hop_expr *u = hop_shape_env_unbacked(c->env, lo, hi);
    if (u == NULL)
        return hop__sym_failed(c);
    return hop__set_sym(c, u);
}

/* nonzero(x) -> i64[u, rank(x)] with u in [0, numel] (numel constant) or
 * [0, INT64_MAX]. */
hop_status
hop__infer_nonzero(hop__infer *c)
{
    const hop_meta *x;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    const hop_expr *numel = hop_meta_numel(x, c->env);
    const hop_expr *rank = hop__const(c, x->rank);
    if (numel == NULL || rank == NULL)
        return hop__sym_failed(c);
    int64_t hi;
    if (!hop_expr_const_value(numel, &hi))
        hi = INT64_MAX;
    const hop_expr *u = hop_shape_env_unbacked(c->env, 0, hi);
    if (u == NULL)
        return hop__sym_failed(c);
    const hop_expr *sizes[2] = {u, rank};
    return hop__set_tensor(c, HOP_I64, 2, sizes);
}

hop_status
hop__infer_sym_size(hop__infer *c)
{
    const hop_meta *x;
    int64_t d;
    int w;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &d)) != HOP_OK ||
        (st = hop__wrap_dim(c, d, x->rank, x, &w)) != HOP_OK)
        return st;
    return hop__set_sym(c, x->sizes[w]);
}

hop_status
hop__infer_to(hop__infer *c)
{
    const hop_meta *x;
    hop_dtype dtype;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK ||
        (st = hop__arg_dtype(c, 1, false, HOP_F32, &dtype)) != HOP_OK)
        return st;
    return hop__set_tensor(c, dtype, x->rank, x->sizes);
}

/* bitcast(x, dtype): x's shape with the last dim scaled by the ratio of the
 * item sizes (each a power of two, so a smaller one always divides). */
hop_status
hop__infer_bitcast(hop__infer *c)
{
    const hop_meta *x;
    hop_dtype dtype;
    hop_status st;
    hop__text tx;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK ||
        (st = hop__arg_dtype(c, 1, false, HOP_F32, &dtype)) != HOP_OK)
        return st;
    int64_t from = (int64_t)hop_dtype_size(x->dtype), to = (int64_t)hop_dtype_size(dtype);
    if (from == to) {
        return hop__set_tensor(c, dtype, x->rank, x->sizes);
    }
    if (x->rank == 0)
        return hop_error(HOP_SHAPE,
                         "bitcast: a 0-d tensor %s cannot be read as %s, whose items "
                         "have another size",
                         hop__meta_text(&tx, x), hop_dtype_name(dtype));
    const hop_expr *sizes[HOP_MAX_RANK], *last = x->sizes[x->rank - 1];
    memcpy(sizes, x->sizes, sizeof(sizes[0]) * (size_t)x->rank);
    if (from > to) {
        last = hop_sym_mul_int(c->env, last, from / to);
    } else {
        const hop_expr *q = hop_sym_floordiv(c->env, last, hop__const(c, to / from));
        bool whole;
        if (q == NULL)
            return hop__sym_failed(c);
        if ((st = hop__decide_eq(c, hop_sym_mul_int(c->env, q, to / from), last, &whole)) != HOP_OK)
            return st;
        if (!whole)
            return hop_error(HOP_SHAPE,
                             "bitcast: the last dim of %s does not split into whole "
                             "items of %s",
                             hop__meta_text(&tx, x), hop_dtype_name(dtype));
        last = q;
    }
    if (last == NULL)
        return hop__sym_failed(c);
    sizes[x->rank - 1] = last;
    return hop__set_tensor(c, dtype, x->rank, sizes);
}

hop_status
hop__infer_clone(hop__infer *c)
{
    const hop_meta *x;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    return hop__set_tensor(c, x->dtype, x->rank, x->sizes);
}
