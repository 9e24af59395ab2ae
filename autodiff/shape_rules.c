/*
 * autodiff/shape_rules.c - the autodiff rules of the reductions (sum, mean,
 * amax, amin, prod), matmul and the views and concatenations (reshape,
 * transpose, permute, expand, select, slice, cat, stack, to, clone): their
 * part of the op table's autodiff column (op_rules.c has the overview).
 */
#include "autodiff/op_rules.h"

#include <string.h>

/* ---------------------------------------------------------- reductions */

/* The dims a reduction's argument 1 names, as a mask over x's rank (a 0-d
 * x reduces nothing). */
static int
reduce_mask(const hop_node *n, int rank, bool *mask)
{
    const hop_arg *o = &n->args[1];
    int count = 0;
    bool all = o->kind == HOP_ARG_NONE || (o->kind == HOP_ARG_LIST && o->u.list.n == 0);
    for (int k = 0; k < HOP_MAX_RANK; k++)
        mask[k] = all && k < rank;
    if (rank > 0 && o->kind == HOP_ARG_INT)
        mask[wrap_dim(o->u.i, rank)] = true;
    if (rank > 0 && o->kind == HOP_ARG_LIST)
        for (size_t i = 0; i < o->u.list.n; i++)
            mask[wrap_dim(o->u.list.items[i].u.i, rank)] = true;
    for (int k = 0; k < rank; k++)
        count += mask[k];
    return count;
}

static bool
keepdim_of(const hop_node *n)
{
    return n->args[2].kind == HOP_ARG_BOOL && n->args[2].u.b;
}

/* A reduction's result v with the reduced dims put back as size 1 (v
 * itself under keepdim), so it broadcasts against x. */
static hop_node *
unreduce(hop_graph *g, const hop_node *n, hop_node *v)
{
    bool mask[HOP_MAX_RANK];
    int rank = meta_of(n->args[0].u.node)->rank;
    reduce_mask(n, rank, mask);
    if (keepdim_of(n))
        return v;
    for (int k = 0; k < rank && v; k++)
        if (mask[k])
            v = HOP_EMIT(g, unsqueeze, N(v), I(k));
    return v;
}

/* The reduction of n (same dims) over v, with keepdim given. */
static hop_node *
reduce_like(hop_graph *g, const hop_node *n, hop_op op, hop_node *v, bool keepdim)
{
    hop_arg args[3] = {N(v), n->args[1], hop_arg_bool(keepdim)};
    return hop_graph_emit(g, op, args, 3);
}

/* The number of elements each result of a reduction reduces. */
static const hop_expr *
reduce_count(hop_shape_env *env, const hop_node *n)
{
    const hop_meta *x = meta_of(n->args[0].u.node);
    bool mask[HOP_MAX_RANK];
    reduce_mask(n, x->rank, mask);
    const hop_expr *c = hop_sym_const(env, 1);
    for (int k = 0; k < x->rank && c; k++)
        if (mask[k])
            c = hop_sym_mul(env, c, x->sizes[k]);
    return c;
}

VJP_ARG0(vjp_sum)
{
    hop_graph *g = a->g;
    const hop_node *x = n->args[0].u.node;
    hop_node *v = unreduce(g, n, hop_vjp_ct(cx, n, 0));
    if (v && n->op == HOP_OP_mean) {
        const hop_expr *count = reduce_count(g->env, n);
        v = count ? HOP_EMIT(g, div, N(v), S(count)) : NULL;
    }
    return accumulate(cx, x, v ? hop__ad_expand(g, v, meta_of(x)) : NULL);
}

/* masked_sum (x, dims, keepdim, mask, initial): linear in x where mask
 * holds, and initial adds to every result element. */
static hop_status
vjp_masked_sum(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_status st = HOP_OK;
    if (wants(cx, &n->args[0])) {
        const hop_node *x = n->args[0].u.node;
        hop_node *v = unreduce(a.g, n, ct);
        v = v ? hop__ad_expand(a.g, v, meta_of(x)) : NULL;
        st = accumulate(cx, x, where_or_zero(a.g, primal(&a, n->args[3].u.node), v));
    }
    if (st == HOP_OK && wants(cx, &n->args[4]))
        st = accumulate(cx, n->args[4].u.node, hop__ad_sum(a.g, ct, NULL, 0, false));
    return st;
}

/* Its tangent: the sum of x's tangent where mask holds plus initial's (in
 * hop's order: a tangent is no NumPy result). */
static hop_status
jvp_masked_sum(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *tx = tangent(cx, &n->args[0]), *ti = tangent(cx, &n->args[4]);
    if (tx == NULL && ti == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    hop_node *t = NULL;
    if (tx != NULL) {
        tx = where_or_zero(a.g, primal(&a, n->args[3].u.node), tx);
        t = tx ? reduce_like(a.g, n, HOP_OP_sum, tx, keepdim_of(n)) : NULL;
    }
    if (ti != NULL)
        t = t ? op2(a.g, HOP_OP_add, t, ti) : ti;
    return set_tangent(cx, n, t);
}

/* amax/amin: the positions equal to the result share the cotangent. */
static hop_status
extreme_mask(const ad *a, const hop_node *n, hop_node **mask, hop_node **count, bool keepdim)
{
    hop_node *x = primal(a, n->args[0].u.node);
    *mask = op2(a->g, HOP_OP_eq, x, unreduce(a->g, n, primal(a, n)));
    *count = reduce_like(a->g, n, HOP_OP_sum, to_dtype(a->g, *mask, meta_of(n)->dtype), keepdim);
    return *count ? HOP_OK : hop_error_code();
}

VJP_ARG0(vjp_extreme)
{
    hop_node *mask, *count;
    hop_status st = extreme_mask(a, n, &mask, &count, true);
    if (st != HOP_OK)
        return st;
    hop_node *share = op2(a->g, HOP_OP_div, unreduce(a->g, n, hop_vjp_ct(cx, n, 0)), count);
    return accumulate(cx, n->args[0].u.node, where_or_zero(a->g, mask, share));
}

JVP_ARG0(jvp_extreme)
{
    hop_node *mask, *count;
    hop_status st = extreme_mask(a, n, &mask, &count, keepdim_of(n));
    if (st != HOP_OK)
        return st;
    hop_node *num = reduce_like(a->g, n, HOP_OP_sum, where_or_zero(a->g, mask, t), keepdim_of(n));
    return set_tangent(cx, n, op2(a->g, HOP_OP_div, num, count));
}

/* The exclusive cumprod along dim 1 of x2 [K, R]: 1, x0, x0 x1, ... */
static hop_node *
exclusive_cumprod(hop_graph *g, hop_node *x2)
{
    if (x2 == NULL)
        return NULL;
    hop_node *one = full_with_dim(g, meta_of(x2), 1, hop_sym_const(g->env, 1), 1.0);
    hop_node *head = HOP_EMIT(g, slice, N(x2), I(1), hop_arg_none(), I(-1), I(1));
    hop_arg items[2] = {N(one), N(head)};
    return HOP_EMIT(g, cumprod, N(HOP_EMIT(g, cat, hop_arg_list(items, 2), I(1))), I(1));
}

/*
 * For prod: the product of the other reduced elements at each position of
 * x (x's shape), with no division, so exact where x has zeros.  The reduced
 * dims are moved last and flattened: x2 [K, R]; the product without x_j is
 * the exclusive cumprod from the left times the one from the right.
 */
static hop_node *
prod_others_of(const ad *a, const hop_node *n, hop_node *x)
{
    hop_graph *g = a->g;
    const hop_meta *xm = meta_of(n->args[0].u.node);
    bool mask[HOP_MAX_RANK];
    reduce_mask(n, xm->rank, mask);
    int64_t perm[HOP_MAX_RANK], inv[HOP_MAX_RANK];
    int nkept = 0, np = 0;
    for (int k = 0; k < xm->rank; k++)
        if (!mask[k])
            perm[np++] = k, nkept++;
    for (int k = 0; k < xm->rank; k++)
        if (mask[k])
            perm[np++] = k;
    hop_meta pm = *xm;
    for (int k = 0; k < np; k++) {
        pm.sizes[k] = xm->sizes[perm[k]];
        inv[perm[k]] = k;
    }
    hop_arg pitems[HOP_MAX_RANK], iitems[HOP_MAX_RANK];
    for (int k = 0; k < np; k++)
        pitems[k] = I(perm[k]), iitems[k] = I(inv[k]);
    const hop_expr *K = size_product(g->env, pm.sizes, 0, nkept);
    const hop_expr *R = size_product(g->env, pm.sizes, nkept, np);
    if (K == NULL || R == NULL)
        return NULL;
    hop_node *xp = np > 1 ? HOP_EMIT(g, permute, N(x), hop_arg_list(pitems, (size_t)np)) : x;
    hop_node *x2 = HOP_EMIT(g, reshape, N(xp), hop_arg_list((hop_arg[]){S(K), S(R)}, 2));
    hop_node *left = exclusive_cumprod(g, x2);
    hop_node *right = flip(g, exclusive_cumprod(g, flip(g, x2, 1)), 1);
    hop_node *o = reshape_to(g, op2(g, HOP_OP_mul, left, right), &pm);
    return np > 1 ? HOP_EMIT(g, permute, N(o), hop_arg_list(iitems, (size_t)np)) : o;
}

static hop_node *
prod_others(const ad *a, const hop_node *n)
{
    return prod_others_of(a, n, primal(a, n->args[0].u.node));
}

/* Whether a prod reduces nothing (a 0-d x: the result is x) or an empty
 * set of elements (R == 0: x has no elements, the gradient is empty). */
static bool
prod_trivial(const hop_node *n, bool *empty)
{
    const hop_meta *xm = meta_of(n->args[0].u.node);
    bool mask[HOP_MAX_RANK];
    int64_t v;
    *empty = false;
    for (int k = 0; k < xm->rank; k++)
        if (hop_expr_const_value(xm->sizes[k], &v) && v == 0)
            *empty = true;
    return *empty || reduce_mask(n, xm->rank, mask) == 0;
}

VJP_ARG0(vjp_prod)
{
    const hop_node *x = n->args[0].u.node;
    hop_node *ct = unreduce(a->g, n, hop_vjp_ct(cx, n, 0));
    bool empty;
    if (prod_trivial(n, &empty))
        return empty ? HOP_OK : accumulate(cx, x, ct);
    return accumulate(cx, x, op2(a->g, HOP_OP_mul, ct, prod_others(a, n)));
}

JVP_ARG0(jvp_prod)
{
    bool empty;
    if (prod_trivial(n, &empty))
        return empty ? HOP_OK : set_tangent(cx, n, t);
    hop_node *tp = op2(a->g, HOP_OP_mul, t, prod_others(a, n));
    return set_tangent(cx, n, reduce_like(a->g, n, HOP_OP_sum, tp, keepdim_of(n)));
}

/*
 * masked_prod (x, dims, keepdim, mask, initial): initial times prod's of
 * y = where(mask, x, 1).  x's cotangent where mask holds is initial times
 * the product of y's other reduced elements (prod_others, exact at zeros),
 * initial's the sum of the cotangent times y's product.
 */
static hop_status
masked_prod_parts(const ad *a, const hop_node *n, hop_node **y, hop_node **others)
{
    hop_node *m = primal(a, n->args[3].u.node);
    *y = HOP_EMIT(a->g, where, N(m), N(primal(a, n->args[0].u.node)), F(1.0));
    bool empty;
    *others = prod_trivial(n, &empty) ? NULL : prod_others_of(a, n, *y);
    return *y == NULL ? hop_error_code() : HOP_OK;
}

static hop_status
vjp_masked_prod(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0), *y, *others;
    hop_node *init = primal(&a, n->args[4].u.node);
    hop_status st = masked_prod_parts(&a, n, &y, &others);
    if (st == HOP_OK && wants(cx, &n->args[0])) {
        const hop_node *x = n->args[0].u.node;
        hop_node *v = unreduce(a.g, n, ct);
        v = v ? hop__ad_expand(a.g, op2(a.g, HOP_OP_mul, v, init), meta_of(x)) : NULL;
        if (v != NULL && others != NULL)
            v = op2(a.g, HOP_OP_mul, v, others);
        st = accumulate(cx, x, where_or_zero(a.g, primal(&a, n->args[3].u.node), v));
    }
    if (st == HOP_OK && wants(cx, &n->args[4])) {
        hop_node *p = reduce_like(a.g, n, HOP_OP_prod, y, keepdim_of(n));
        st = accumulate(cx, n->args[4].u.node,
                        hop__ad_sum(a.g, op2(a.g, HOP_OP_mul, ct, p), NULL, 0, false));
    }
    return st;
}

/* Its tangent: initial times the sum of x's tangent times the others'
 * product where mask holds, plus initial's tangent times y's product (in
 * hop's order: a tangent is no NumPy result). */
static hop_status
jvp_masked_prod(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *tx = tangent(cx, &n->args[0]), *ti = tangent(cx, &n->args[4]), *y, *others;
    if (tx == NULL && ti == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    hop_status st = masked_prod_parts(&a, n, &y, &others);
    if (st != HOP_OK)
        return st;
    hop_node *t = NULL;
    if (tx != NULL) {
        tx = where_or_zero(a.g, primal(&a, n->args[3].u.node), tx);
        if (tx != NULL && others != NULL)
            tx = op2(a.g, HOP_OP_mul, tx, others);
        t = tx ? reduce_like(a.g, n, HOP_OP_sum, tx, keepdim_of(n)) : NULL;
        t = t ? op2(a.g, HOP_OP_mul, t, primal(&a, n->args[4].u.node)) : NULL;
    }
    if (ti != NULL) {
        hop_node *p = reduce_like(a.g, n, HOP_OP_prod, y, keepdim_of(n));
        hop_node *tp = p ? op2(a.g, HOP_OP_mul, p, ti) : NULL;
        t = t ? op2(a.g, HOP_OP_add, t, tp) : tp;
    }
    return set_tangent(cx, n, t);
}

/* -------------------------------------------------------------- matmul */

/*
 * With 1-D operands promoted (a [k] as [1, k], b [k] as [k, 1]) and the
 * cotangent given their dims back: ga = ct @ b^T and gb = a^T @ ct, batch
 * dims broadcast by matmul and summed away by accumulate.
 */
static hop_status
vjp_matmul(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_graph *g = a.g;
    const hop_node *A = n->args[0].u.node, *B = n->args[1].u.node;
    bool a1 = meta_of(A)->rank == 1, b1 = meta_of(B)->rank == 1;
    hop_node *ap = primal(&a, A), *bp = primal(&a, B), *ct = hop_vjp_ct(cx, n, 0);
    if (a1)
        ap = HOP_EMIT(g, unsqueeze, N(ap), I(0));
    if (b1) {
        bp = HOP_EMIT(g, unsqueeze, N(bp), I(1));
        ct = HOP_EMIT(g, unsqueeze, N(ct), I(-1));
    }
    if (a1)
        ct = HOP_EMIT(g, unsqueeze, N(ct), I(-2));
    hop_status st = HOP_OK;
    if (wants(cx, &n->args[0])) {
        hop_node *ga = op2(g, HOP_OP_matmul, ct, HOP_EMIT(g, transpose, N(bp), I(-1), I(-2)));
        if (a1)
            ga = HOP_EMIT(g, squeeze, N(ga), I(-2));
        st = accumulate(cx, A, ga);
    }
    if (st == HOP_OK && wants(cx, &n->args[1])) {
        hop_node *gb = op2(g, HOP_OP_matmul, HOP_EMIT(g, transpose, N(ap), I(-1), I(-2)), ct);
        if (b1)
            gb = HOP_EMIT(g, squeeze, N(gb), I(-1));
        st = accumulate(cx, B, gb);
    }
    return st;
}

static hop_status
jvp_matmul(hop_jvp_ctx *cx, const hop_node *n)
{
    ad a = ad_jvp(cx);
    hop_node *ta = tangent(cx, &n->args[0]), *tb = tangent(cx, &n->args[1]), *t = NULL;
    if (ta)
        t = op2(a.g, HOP_OP_matmul, ta, primal(&a, n->args[1].u.node));
    if (tb) {
        hop_node *u = op2(a.g, HOP_OP_matmul, primal(&a, n->args[0].u.node), tb);
        t = t ? op2(a.g, HOP_OP_add, t, u) : u;
    }
    return ta || tb ? set_tangent(cx, n, t) : HOP_OK;
}

/* --------------------------------------------------------------- views */

/* reshape, view, squeeze, unsqueeze: the cotangent reshaped back. */
static hop_status
vjp_reshape(hop_vjp_ctx *cx, const hop_node *n)
{
    if (!wants(cx, &n->args[0]))
        return HOP_OK;
    const hop_node *x = n->args[0].u.node;
    return accumulate(cx, x, reshape_to(hop_vjp_out(cx), hop_vjp_ct(cx, n, 0), meta_of(x)));
}

VJP_ARG0(vjp_transpose)
{
    hop_graph *g = a->g;
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    return accumulate(cx, n->args[0].u.node, HOP_EMIT(g, transpose, N(ct), n->args[1], n->args[2]));
}

VJP_ARG0(vjp_permute)
{
    hop_graph *g = a->g;
    int rank = meta_of(n)->rank;
    hop_arg inv[HOP_MAX_RANK];
    for (int k = 0; k < rank; k++)
        inv[wrap_dim(n->args[1].u.list.items[k].u.i, rank)] = I(k);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    return accumulate(cx, n->args[0].u.node,
                      HOP_EMIT(g, permute, N(ct), hop_arg_list(inv, (size_t)rank)));
}

/* expand and clone: accumulate sums the broadcast dims away. */
static hop_status
vjp_identity(hop_vjp_ctx *cx, const hop_node *n)
{
    if (!wants(cx, &n->args[0]) || !hop_dtype_is_inexact(meta_of(n)->dtype))
        return HOP_OK;
    return accumulate(cx, n->args[0].u.node, hop_vjp_ct(cx, n, 0));
}

static hop_status
jvp_identity(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *t = tangent(cx, &n->args[0]);
    if (t == NULL || !hop_dtype_is_inexact(meta_of(n)->dtype))
        return HOP_OK;
    return set_tangent(cx, n, t);
}

/* An index argument as a SymInt in [0, size) (Python's wrapping of an
 * index in [-size, size)). */
static const hop_expr *
wrapped_index(hop_shape_env *env, const hop_arg *a, const hop_expr *size)
{
    if (a->kind == HOP_ARG_INT)
        return a->u.i < 0 ? hop_sym_add_int(env, size, a->u.i) : hop_sym_const(env, a->u.i);
    const hop_expr *e = arg_expr(env, a);
    return e ? hop_sym_mod(env, e, size) : NULL;
}

/* select(x, dim, i): the cotangent where arange(size) == i, zeros elsewhere. */
VJP_ARG0(vjp_select)
{
    hop_graph *g = a->g;
    const hop_meta *xm = meta_of(n->args[0].u.node);
    int d = wrap_dim(n->args[1].u.i, xm->rank);
    const hop_expr *size = xm->sizes[d];
    const hop_expr *idx = wrapped_index(g->env, &n->args[2], size);
    if (idx == NULL)
        return hop_error_code();
    /* arange shaped [size, 1, ...] so that it lines up with dim d */
    hop_arg shape[HOP_MAX_RANK];
    shape[0] = S(size);
    for (int k = d + 1; k < xm->rank; k++)
        shape[k - d] = I(1);
    hop_node *pos =
        HOP_EMIT(g, reshape, N(arange_n(g, size)), hop_arg_list(shape, (size_t)(xm->rank - d)));
    hop_node *hit = HOP_EMIT(g, eq, N(pos), S(idx));
    hop_node *ct = HOP_EMIT(g, unsqueeze, N(hop_vjp_ct(cx, n, 0)), I(d));
    return accumulate(cx, n->args[0].u.node, where_or_zero(g, hit, ct));
}

/* Python's clamping of a slice bound v into [0, size], as shape inference
 * does it (ops/infer_shape.c, clamp_bound): the same decisions, so the same
 * expressions (a hint decision finds its guard already recorded). */
static const hop_expr *
clamp_bound(hop_shape_env *env, const hop_expr *v, const hop_expr *size)
{
    const hop_expr *zero = hop_sym_const(env, 0);
    const hop_expr *is_neg = zero ? hop_sym_lt(env, v, zero) : NULL;
    bool neg, known, past;
    if (is_neg == NULL || hop_shape_env_decide(env, is_neg, "slice", &neg) != HOP_OK)
        return NULL;
    const hop_expr *w = neg ? hop_sym_add(env, v, size) : v;
    const hop_expr *beyond = w == NULL ? NULL
                             : neg     ? hop_sym_lt(env, w, zero)
                                       : hop_sym_gt(env, v, size);
    if (beyond == NULL)
        return NULL;
    known = hop_shape_env_decide_static(env, beyond, &past);
    if (neg)
        return !known ? hop_sym_max(env, w, zero) : past ? zero : w;
    return !known ? hop_sym_min(env, v, size) : past ? size : v;
}

/* The clamped start of slice n along a dim of the given size. */
static const hop_expr *
slice_start(hop_shape_env *env, const hop_node *n, const hop_expr *size)
{
    const hop_arg *s = &n->args[2];
    if (s->kind == HOP_ARG_NONE)
        return hop_sym_const(env, 0);
    const hop_expr *v = arg_expr(env, s);
    return v ? clamp_bound(env, v, size) : NULL;
}

/*
 * slice(x, dim, start, end, step) with len results from start' (the
 * clamped start): step 1 puts the cotangent between zeros (a cat); a larger
 * step gathers, for each position j of x, element (j - start') / step of
 * the cotangent padded with one zero, or that zero where j is not taken.
 */
VJP_ARG0(vjp_slice)
{
    hop_graph *g = a->g;
    hop_shape_env *env = g->env;
    const hop_meta *xm = meta_of(n->args[0].u.node);
    int d = wrap_dim(n->args[1].u.i, xm->rank);
    int64_t step = n->args[4].u.i;
    const hop_expr *size = xm->sizes[d], *len = meta_of(n)->sizes[d];
    const hop_expr *start = slice_start(env, n, size);
    hop_node *ct = hop_vjp_ct(cx, n, 0), *grad;
    if (start == NULL)
        return hop_error_code();
    if (step == 1) {
        const hop_expr *rest = hop_sym_sub(env, size, start);
        const hop_expr *after = rest ? hop_sym_sub(env, rest, len) : NULL;
        if (after == NULL)
            return hop_error_code();
        hop_arg items[3];
        size_t k = 0;
        int64_t c;
        if (!(hop_expr_const_value(start, &c) && c == 0))
            items[k++] = N(full_with_dim(g, meta_of(ct), d, start, 0.0));
        items[k++] = N(ct);
        if (!(hop_expr_const_value(after, &c) && c == 0))
            items[k++] = N(full_with_dim(g, meta_of(ct), d, after, 0.0));
        grad = k == 1 ? ct : HOP_EMIT(g, cat, hop_arg_list(items, k), I(d));
    } else {
        hop_node *off = HOP_EMIT(g, sub, N(arange_n(g, size)), S(start));
        hop_node *q = HOP_EMIT(g, floor_divide, N(off), I(step));
        hop_node *taken = HOP_EMIT(
            g, logical_and,
            N(HOP_EMIT(g, logical_and, N(HOP_EMIT(g, ge, N(off), I(0))),
                       N(HOP_EMIT(g, eq, N(HOP_EMIT(g, remainder, N(off), I(step))), I(0))))),
            N(HOP_EMIT(g, lt, N(q), S(len))));
        hop_node *src = HOP_EMIT(g, where, N(taken), N(q), S(len));
        hop_arg items[2] = {N(ct), N(full_with_dim(g, meta_of(ct), d, hop_sym_const(env, 1), 0.0))};
        grad = HOP_EMIT(g, take, N(HOP_EMIT(g, cat, hop_arg_list(items, 2), I(d))), I(d), N(src));
    }
    return accumulate(cx, n->args[0].u.node, grad);
}

/* cat: each operand's part of the cotangent, a slice. */
static hop_status
vjp_cat(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    hop_shape_env *env = g->env;
    const hop_arg *items = n->args[0].u.list.items;
    size_t count = n->args[0].u.list.n;
    int d = wrap_dim(n->args[1].u.i, meta_of(n)->rank);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    const hop_expr *off = hop_sym_const(env, 0);
    for (size_t k = 0; k < count; k++) {
        const hop_expr *end =
            off ? hop_sym_add(env, off, meta_of(items[k].u.node)->sizes[d]) : NULL;
        if (end == NULL)
            return hop_error_code();
        if (wants(cx, &items[k])) {
            hop_status st = accumulate(cx, items[k].u.node,
                                       HOP_EMIT(g, slice, N(ct), I(d), S(off), S(end), I(1)));
            if (st != HOP_OK)
                return st;
        }
        off = end;
    }
    return HOP_OK;
}

/* stack: each operand's part of the cotangent, a select. */
static hop_status
vjp_stack(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    const hop_arg *items = n->args[0].u.list.items;
    size_t count = n->args[0].u.list.n;
    int d = wrap_dim(n->args[1].u.i, meta_of(n)->rank);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    for (size_t k = 0; k < count; k++) {
        if (!wants(cx, &items[k]))
            continue;
        hop_status st =
            accumulate(cx, items[k].u.node, HOP_EMIT(g, select, N(ct), I(d), I((int64_t)k)));
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

/* cat and stack: the same op over the operands' tangents, zeros for the
 * operands without one. */
static hop_status
jvp_concat(hop_jvp_ctx *cx, const hop_node *n)
{
    ad a = ad_jvp(cx);
    const hop_arg *items = n->args[0].u.list.items;
    size_t count = n->args[0].u.list.n;
    hop_arg *ts = hop_malloc(count * sizeof *ts);
    if (ts == NULL)
        return hop_error_code();
    bool any = false;
    for (size_t k = 0; k < count; k++) {
        hop_node *t = tangent(cx, &items[k]);
        any = any || t;
        ts[k] = N(t ? t : hop_jvp_zeros(cx, items[k].u.node->meta));
    }
    hop_status st = HOP_OK;
    if (any) {
        hop_arg args[2] = {hop_arg_list(ts, count), n->args[1]};
        st = set_tangent(cx, n, hop_graph_emit(a.g, n->op, args, 2));
    }
    hop_free(ts);
    return st;
}

/* ------------------------------------------------------- the table part */

const hop_op_ad_rule hop__ad_shape_rules[HOP_OP_COUNT] = {
    [HOP_OP_sum] = {.vjp = vjp_sum, .jvp = jvp_linear},
    [HOP_OP_mean] = {.vjp = vjp_sum, .jvp = jvp_linear},
    [HOP_OP_masked_sum] = {.vjp = vjp_masked_sum, .jvp = jvp_masked_sum},
    [HOP_OP_masked_prod] = {.vjp = vjp_masked_prod, .jvp = jvp_masked_prod},
    [HOP_OP_amax] = {.vjp = vjp_extreme, .jvp = jvp_extreme},
    [HOP_OP_amin] = {.vjp = vjp_extreme, .jvp = jvp_extreme},
    [HOP_OP_prod] = {.vjp = vjp_prod, .jvp = jvp_prod},
    [HOP_OP_matmul] = {.vjp = vjp_matmul, .jvp = jvp_matmul},
    [HOP_OP_reshape] = {.vjp = vjp_reshape, .jvp = jvp_linear},
    [HOP_OP_view] = {.vjp = vjp_reshape, .jvp = jvp_linear},
    [HOP_OP_unsqueeze] = {.vjp = vjp_reshape, .jvp = jvp_linear},
    [HOP_OP_squeeze] = {.vjp = vjp_reshape, .jvp = jvp_linear},
    [HOP_OP_transpose] = {.vjp = vjp_transpose, .jvp = jvp_linear},
    [HOP_OP_permute] = {.vjp = vjp_permute, .jvp = jvp_linear},
    [HOP_OP_expand] = {.vjp = vjp_identity, .jvp = jvp_linear},
    [HOP_OP_select] = {.vjp = vjp_select, .jvp = jvp_linear},
    [HOP_OP_slice] = {.vjp = vjp_slice, .jvp = jvp_linear},
    [HOP_OP_cat] = {.vjp = vjp_cat, .jvp = jvp_concat},
    [HOP_OP_stack] = {.vjp = vjp_stack, .jvp = jvp_concat},
    [HOP_OP_to] = {.vjp = vjp_identity, .jvp = jvp_identity},
    [HOP_OP_clone] = {.vjp = vjp_identity, .jvp = jvp_identity},
};
