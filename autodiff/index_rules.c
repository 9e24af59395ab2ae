/*
 * autodiff/index_rules.c - the autodiff rules of the index ops (take, sort,
 * put, bitcast), the cumulative ops (cumsum, cumprod) and dynamic indexing
 * (dynamic_slice, dynamic_update_slice, mask_gradient): their part of the op
 * table's autodiff column.  How each builds a gradient that scatters is in
 * op_rules.c's overview.
 */
#include "autodiff/op_rules.h"

#include <string.h>

/* ---------------------------------------------------------- index ops */

/* Whether idx is size - 1 - arange(0, size, 1), the index of a flip along
 * a dim of that size (flip above emits it): a permutation that is its own
 * inverse. */
static bool
is_reversal(hop_shape_env *env, const hop_node *idx, const hop_expr *size)
{
    if (idx->kind != HOP_NODE_CALL_OP || idx->op != HOP_OP_sub || idx->args[1].kind != HOP_ARG_NODE)
        return false;
    const hop_node *ar = idx->args[1].u.node;
    if (ar->kind != HOP_NODE_CALL_OP || ar->op != HOP_OP_arange)
        return false;
    const hop_expr *start = arg_expr(env, &ar->args[0]), *end = arg_expr(env, &ar->args[1]);
    const hop_expr *step = arg_expr(env, &ar->args[2]), *last = arg_expr(env, &idx->args[0]);
    int64_t v0, v1;
    return start && end && step && last && hop_expr_const_value(start, &v0) && v0 == 0 &&
           hop_expr_const_value(step, &v1) && v1 == 1 && end == size &&
           hop_sym_add_int(env, end, -1) == last;
}

/*
 * take(x, dim, index): the scatter-add of the cotangent into x's dim, a put
 * that adds; a flip's cotangent flips back (O(size), and the second
 * derivative of a rule that flips stays linear).  x is seen as [P, size, Q]
 * and the cotangent as [P, M, Q] (M the index's elements): ct[p, m, q] adds
 * into x's flat element (p * size + index[m]) * Q + q.  (A one-hot matmul,
 * onehot[j, m] = (index[m] == j), multiplied each element of the cotangent
 * by the zeros of the positions it does not go to: an infinite or nan one,
 * sqrt's slope at 0, made every other gradient along the dim nan.)
 */
VJP_ARG0(vjp_take)
{
    hop_graph *g = a->g;
    hop_shape_env *env = g->env;
    const hop_node *x = n->args[0].u.node;
    const hop_meta *xm = meta_of(x), *im = meta_of(n->args[2].u.node);
    int d = wrap_dim(n->args[1].u.i, xm->rank);
    const hop_expr *size = xm->sizes[d];
    const hop_expr *P = size_product(env, xm->sizes, 0, d);
    const hop_expr *Q = size_product(env, xm->sizes, d + 1, xm->rank);
    const hop_expr *M = hop_meta_numel(im, env);
    const hop_expr *numel = hop_meta_numel(xm, env), *nct = hop_meta_numel(meta_of(n), env);
    if (P == NULL || Q == NULL || M == NULL || numel == NULL || nct == NULL)
        return hop_error_code();
    if (is_reversal(env, n->args[2].u.node, size)) {
        hop_node *back =
            HOP_EMIT(g, take, N(hop_vjp_ct(cx, n, 0)), I(d), N(primal(a, n->args[2].u.node)));
        return accumulate(cx, x, back);
    }
    hop_node *idx = HOP_EMIT(g, reshape, N(primal(a, n->args[2].u.node)),
                             hop_arg_list((hop_arg[]){I(1), S(M), I(1)}, 3));
    idx = HOP_EMIT(g, remainder, N(idx), S(size)); /* negative indices count from the end */
    hop_node *rows = HOP_EMIT(g, reshape, N(HOP_EMIT(g, mul, N(arange_n(g, P)), S(size))),
                              hop_arg_list((hop_arg[]){S(P), I(1), I(1)}, 3));
    hop_node *cols = HOP_EMIT(g, reshape, N(arange_n(g, Q)),
                              hop_arg_list((hop_arg[]){I(1), I(1), S(Q)}, 3));
    hop_node *at = op2(g, HOP_OP_add, HOP_EMIT(g, mul, N(op2(g, HOP_OP_add, rows, idx)), S(Q)),
                       cols); /* [P, M, Q] */
    at = HOP_EMIT(g, reshape, N(at), hop_arg_list((hop_arg[]){S(nct)}, 1));
    hop_node *ct = HOP_EMIT(g, reshape, N(hop_vjp_ct(cx, n, 0)),
                            hop_arg_list((hop_arg[]){S(nct)}, 1));
    hop_node *zeros = HOP_EMIT(g, full, hop_arg_list((hop_arg[]){S(numel)}, 1), F(0.0),
                               hop_arg_dtype(meta_of(n)->dtype));
    hop_node *sum = HOP_EMIT(g, put, N(zeros), N(at), N(ct), hop_arg_bool(true));
    return accumulate(cx, x, sum ? reshape_to(g, sum, xm) : NULL);
}

/*
 * x gathered along dim d by idx (an integer tensor of x's shape, values in
 * [0, size)): out[..., i, ...] = x[..., idx[..., i, ...], ...], NumPy's
 * take_along_axis.  dim d goes last, x is flattened and idx offset by each
 * row's start, so one take does it.
 */
static hop_node *
take_along(hop_graph *g, hop_node *x, int d, hop_node *idx)
{
    if (x == NULL || idx == NULL)
        return NULL;
    hop_shape_env *env = g->env;
    int rank = meta_of(x)->rank;
    bool move = d != rank - 1;
    if (move) {
        x = HOP_EMIT(g, transpose, N(x), I(d), I(-1));
        idx = HOP_EMIT(g, transpose, N(idx), I(d), I(-1));
        if (x == NULL || idx == NULL)
            return NULL;
    }
    hop_meta tm = *meta_of(x);
    const hop_expr *size = tm.sizes[rank - 1];
    const hop_expr *R = size_product(env, tm.sizes, 0, rank - 1);
    const hop_expr *numel = hop_meta_numel(&tm, env);
    if (R == NULL || numel == NULL)
        return NULL;
    hop_node *flat = HOP_EMIT(g, reshape, N(x), hop_arg_list((hop_arg[]){S(numel)}, 1));
    hop_node *idx2 = HOP_EMIT(g, reshape, N(idx), hop_arg_list((hop_arg[]){S(R), S(size)}, 2));
    hop_node *base = HOP_EMIT(g, mul, N(HOP_EMIT(g, unsqueeze, N(arange_n(g, R)), I(1))), S(size));
    hop_node *out = HOP_EMIT(g, take, N(flat), I(0), N(op2(g, HOP_OP_add, idx2, base)));
    out = reshape_to(g, out, &tm);
    return move ? HOP_EMIT(g, transpose, N(out), I(d), I(-1)) : out;
}

/* The permutation sort applies along its dim: argsort with sort's args
 * (its kind too, so ties are permuted as sort permuted them). */
static hop_node *
sort_perm(const ad *a, const hop_node *n)
{
    return HOP_EMIT(a->g, argsort, N(primal(a, n->args[0].u.node)), n->args[1], n->args[2],
                    n->args[3]);
}

/* sort: y = take_along(x, perm), so the cotangent goes back through the
 * inverse permutation, argsort(perm), also a gather. */
VJP_ARG0(vjp_sort)
{
    const hop_node *x = n->args[0].u.node;
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    int d = along_dim(n);
    if (d < 0)
        return accumulate(cx, x, ct);
    /* a permutation has no ties: any kind inverts it */
    hop_node *inv = HOP_EMIT(a->g, argsort, N(sort_perm(a, n)), I(d), hop_arg_bool(false),
                             I(HOP_SORT_STABLE));
    return accumulate(cx, x, take_along(a->g, ct, d, inv));
}

JVP_ARG0(jvp_sort)
{
    int d = along_dim(n);
    return set_tangent(cx, n, d < 0 ? t : take_along(a->g, t, d, sort_perm(a, n)));
}

/* How put n combines: SET or ADD (false/true, or the ADD code), or another
 * combine code. */
static int64_t
put_combine(const hop_node *n)
{
    if (n->args[3].kind == HOP_ARG_BOOL)
        return n->args[3].u.b ? HOP_PUT_ADD : HOP_PUT_SET;
    return n->args[3].u.i;
}

static hop_status
put_no_derivative(const hop_node *n)
{
    hop_op op = hop_put_combine_op(put_combine(n));
    if ((op == HOP_OP_maximum || op == HOP_OP_minimum) &&
        hop_dtype_is_complex(meta_of(n->args[2].u.node)->dtype))
        return hop_error(HOP_UNSUPPORTED,
                         "put: no derivative of combining complex values by %s (NumPy's order "
                         "of complex numbers, by their parts, has none)",
                         hop_op_get(op)->name);
    return hop_error(HOP_UNSUPPORTED,
                     "put: no derivative of combining by %s (set, add, mul, maximum and minimum "
                     "have one)",
                     op == HOP_OP_COUNT ? "an unknown op" : hop_op_get(op)->name);
}

/*
 * put combining by maximum, minimum or mul (NumPy's maximum.at, minimum.at,
 * multiply.at).  With V_k = {values[j] : index[j] == k}:
 *   maximum/minimum  out[k] is one of x[k] and V_k; every one of them equal to
 *                    it shares the cotangent (tangent) equally, amax's
 *                    convention; none when out[k] is nan
 *   mul              out[k] = x[k] prod V_k: prod V_k for x[k], and x[k] times
 *                    the product of V_k without values[j] for values[j], from
 *                    the count of zeros in V_k and the product of its other
 *                    elements (exact with zeros)
 * Flat over x's elements; values in x's dtype (a wider loop dtype only
 * rounds the forward value).  The pieces both modes use:
 */
typedef struct put_parts {
    hop_node *fi; /* index, [M] */
    hop_node *vf; /* values in x's dtype, [nv] */
    hop_node *x;  /* x, its shape */
    const hop_expr *numel, *nv;
    hop_dtype dt;
    /* maximum/minimum */
    hop_node *xw, *vw; /* x[k] (its shape), values[j] ([M]) equal to the result */
    hop_node *cnt;     /* how many are, x's shape */
    /* mul */
    hop_node *prod;   /* prod V_k, x's shape */
    hop_node *others; /* the product of V_k without values[j], [M] (or [1]) */
} put_parts;

static hop_node *
flat_zeros(hop_graph *g, const hop_expr *numel, hop_dtype dt, double v)
{
    return HOP_EMIT(g, full, hop_arg_list((hop_arg[]){S(numel)}, 1), F(v), hop_arg_dtype(dt));
}

static hop_node *
scatter_add(hop_graph *g, const put_parts *p, hop_node *v)
{
    return HOP_EMIT(g, put, N(flat_zeros(g, p->numel, p->dt, 0.0)), N(p->fi), N(v),
                    hop_arg_bool(true));
}

static hop_status
put_parts_of(const ad *a, const hop_node *n, put_parts *p)
{
    hop_graph *g = a->g;
    hop_shape_env *env = g->env;
    const hop_meta *m = meta_of(n);
    p->dt = m->dtype;
    p->numel = hop_meta_numel(m, env);
    const hop_expr *M = hop_meta_numel(meta_of(n->args[1].u.node), env);
    p->nv = hop_meta_numel(meta_of(n->args[2].u.node), env);
    if (p->numel == NULL || M == NULL || p->nv == NULL)
        return hop_error_code();
    p->x = primal(a, n->args[0].u.node);
    p->fi =
        HOP_EMIT(g, reshape, N(primal(a, n->args[1].u.node)), hop_arg_list((hop_arg[]){S(M)}, 1));
    p->vf = to_dtype(g,
                     HOP_EMIT(g, reshape, N(primal(a, n->args[2].u.node)),
                              hop_arg_list((hop_arg[]){S(p->nv)}, 1)),
                     p->dt);
    const hop_meta *xm = meta_of(n->args[0].u.node);
    if (put_combine(n) == HOP_PUT_MUL) {
        hop_node *zero = op2c(g, HOP_OP_eq, p->vf, 0.0);
        hop_node *nonzero = HOP_EMIT(g, where, N(zero), F(1.0), N(p->vf));
        hop_node *p0 = HOP_EMIT(g, put, N(flat_zeros(g, p->numel, p->dt, 1.0)), N(p->fi),
                                N(nonzero), I(HOP_PUT_MUL));
        hop_node *zeros = scatter_add(g, p, to_dtype(g, zero, p->dt));
        p->prod = reshape_to(g, zero_or_where(g, op2c(g, HOP_OP_gt, zeros, 0.0), p0), xm);
        hop_node *p0k = HOP_EMIT(g, take, N(p0), I(0), N(p->fi));
        hop_node *zk = HOP_EMIT(g, take, N(zeros), I(0), N(p->fi));
        /* values[j] == 0: the others' product if it is V_k's only zero; else
         * prod V_k / values[j] if V_k has none */
        p->others =
            where3(g, zero, where_or_zero(g, op2c(g, HOP_OP_eq, zk, 1.0), p0k),
                   where_or_zero(g, op2c(g, HOP_OP_eq, zk, 0.0), op2(g, HOP_OP_div, p0k, nonzero)));
        return p->prod && p->others ? HOP_OK : hop_error_code();
    }
    hop_node *r = primal(a, n);
    hop_node *rf = HOP_EMIT(g, reshape, N(r), hop_arg_list((hop_arg[]){S(p->numel)}, 1));
    p->xw = op2(g, HOP_OP_eq, p->x, r);
    p->vw = op2(g, HOP_OP_eq, p->vf, HOP_EMIT(g, take, N(rf), I(0), N(p->fi)));
    p->cnt = op2(g, HOP_OP_add, to_dtype(g, p->xw, p->dt),
                 reshape_to(g, scatter_add(g, p, to_dtype(g, p->vw, p->dt)), xm));
    return p->cnt ? HOP_OK : hop_error_code();
}

/* v / cnt where cnt > 0, else 0 (a nan result has no winner). */
static hop_node *
per_winner(hop_graph *g, const put_parts *p, hop_node *v)
{
    return where_or_zero(g, op2c(g, HOP_OP_gt, p->cnt, 0.0), op2(g, HOP_OP_div, v, p->cnt));
}

static hop_status
vjp_put_combined(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_graph *g = a.g;
    put_parts p;
    hop_status st = put_parts_of(&a, n, &p);
    if (st != HOP_OK)
        return st;
    hop_node *ct = hop_vjp_ct(cx, n, 0), *gx, *gv;
    hop_node *flat_ct;
    if (put_combine(n) == HOP_PUT_MUL) {
        gx = op2(g, HOP_OP_mul, ct, p.prod);
        flat_ct = HOP_EMIT(g, reshape, N(op2(g, HOP_OP_mul, ct, p.x)),
                           hop_arg_list((hop_arg[]){S(p.numel)}, 1));
        gv = op2(g, HOP_OP_mul, HOP_EMIT(g, take, N(flat_ct), I(0), N(p.fi)), p.others);
    } else {
        hop_node *share = per_winner(g, &p, ct);
        gx = where_or_zero(g, p.xw, share);
        flat_ct = HOP_EMIT(g, reshape, N(share), hop_arg_list((hop_arg[]){S(p.numel)}, 1));
        gv = where_or_zero(g, p.vw, HOP_EMIT(g, take, N(flat_ct), I(0), N(p.fi)));
    }
    if (wants(cx, &n->args[0]) && (st = accumulate(cx, n->args[0].u.node, gx)) != HOP_OK)
        return st;
    if (!wants(cx, &n->args[2]))
        return HOP_OK;
    const hop_node *vals = n->args[2].u.node;
    int64_t one;
    if (hop_expr_const_value(p.nv, &one) && one == 1)
        gv = HOP_EMIT(g, sum, N(gv), hop_arg_none(), hop_arg_bool(false));
    gv = to_dtype(g, gv, meta_of(vals)->dtype);
    return accumulate(cx, vals, gv ? reshape_to(g, gv, meta_of(vals)) : NULL);
}

static hop_status
jvp_put_combined(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *tx = tangent(cx, &n->args[0]), *tv = tangent(cx, &n->args[2]);
    if (tx == NULL && tv == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    hop_graph *g = a.g;
    put_parts p;
    hop_status st = put_parts_of(&a, n, &p);
    if (st != HOP_OK)
        return st;
    if (tx == NULL)
        tx = hop__ad_full(g, meta_of(n), 0.0);
    tx = to_dtype(g, tx, p.dt);
    hop_node *tvf =
        tv ? to_dtype(g, HOP_EMIT(g, reshape, N(tv), hop_arg_list((hop_arg[]){S(p.nv)}, 1)), p.dt)
           : flat_zeros(g, p.nv, p.dt, 0.0);
    const hop_meta *xm = meta_of(n);
    hop_node *t;
    if (put_combine(n) == HOP_PUT_MUL) {
        /* tx prod V_k + x[k] sum_j tv_j (prod V_k without v_j) */
        hop_node *sum = reshape_to(g, scatter_add(g, &p, op2(g, HOP_OP_mul, tvf, p.others)), xm);
        t = op2(g, HOP_OP_add, op2(g, HOP_OP_mul, tx, p.prod), op2(g, HOP_OP_mul, p.x, sum));
    } else {
        hop_node *won = reshape_to(g, scatter_add(g, &p, where_or_zero(g, p.vw, tvf)), xm);
        t = per_winner(g, &p, op2(g, HOP_OP_add, where_or_zero(g, p.xw, tx), won));
    }
    return set_tangent(cx, n, t);
}

/*
 * put(x, idx, values, combine) setting or adding.  x's cotangent is ct, with
 * the written positions zeroed when setting (adding, x's elements stay in
 * the sum).  values[j]'s is ct at idx[j]; when setting only the value
 * written last at a position reaches the result, so the others get 0 (a put
 * of 0..M-1 tells which j won each position).  One value used for every
 * index gets the sum.  The other combines: vjp_put_combined.
 */
static hop_status
vjp_put(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_graph *g = a.g;
    hop_shape_env *env = g->env;
    int64_t combine = put_combine(n);
    if ((combine == HOP_PUT_MAX || combine == HOP_PUT_MIN) &&
        hop_dtype_is_complex(meta_of(n->args[2].u.node)->dtype))
        return put_no_derivative(n);
    if (combine == HOP_PUT_MAX || combine == HOP_PUT_MIN || combine == HOP_PUT_MUL)
        return vjp_put_combined(cx, n);
    if (combine != HOP_PUT_SET && combine != HOP_PUT_ADD)
        return put_no_derivative(n);
    bool acc = combine == HOP_PUT_ADD;
    hop_status st;
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    const hop_node *x = n->args[0].u.node, *vals = n->args[2].u.node;
    hop_node *idx = primal(&a, n->args[1].u.node);
    hop_dtype dt = meta_of(n)->dtype;
    if (wants(cx, &n->args[0])) {
        hop_node *gx = ct;
        if (!acc) {
            hop_node *zero = HOP_EMIT(g, full, hop_arg_list(NULL, 0), F(0.0), hop_arg_dtype(dt));
            gx = HOP_EMIT(g, put, N(ct), N(idx), N(zero), hop_arg_bool(false));
        }
        if ((st = accumulate(cx, x, gx)) != HOP_OK)
            return st;
    }
    if (!wants(cx, &n->args[2]))
        return HOP_OK;
    const hop_expr *numel = hop_meta_numel(meta_of(n), env);
    const hop_expr *M = hop_meta_numel(meta_of(n->args[1].u.node), env);
    const hop_expr *nv = hop_meta_numel(meta_of(vals), env);
    if (numel == NULL || M == NULL || nv == NULL)
        return hop_error_code();
    hop_node *flat_idx = HOP_EMIT(g, reshape, N(idx), hop_arg_list((hop_arg[]){S(M)}, 1));
    hop_node *flat_ct = HOP_EMIT(g, reshape, N(ct), hop_arg_list((hop_arg[]){S(numel)}, 1));
    hop_node *gv = HOP_EMIT(g, take, N(flat_ct), I(0), N(flat_idx));
    if (!acc) {
        hop_node *order = arange_n(g, M);
        hop_node *none = HOP_EMIT(g, full, hop_arg_list((hop_arg[]){S(numel)}, 1), I(-1),
                                  hop_arg_dtype(HOP_I64));
        hop_node *winner = HOP_EMIT(g, put, N(none), N(flat_idx), N(order), hop_arg_bool(false));
        hop_node *won =
            HOP_EMIT(g, eq, N(HOP_EMIT(g, take, N(winner), I(0), N(flat_idx))), N(order));
        gv = where_or_zero(g, won, gv);
    }
    int64_t one;
    if (hop_expr_const_value(nv, &one) && one == 1)
        gv = HOP_EMIT(g, sum, N(gv), hop_arg_none(), hop_arg_bool(false));
    /* an added value may be of the wider dtype the addition computed in */
    gv = to_dtype(g, gv, meta_of(vals)->dtype);
    return accumulate(cx, vals, gv ? reshape_to(g, gv, meta_of(vals)) : NULL);
}

/* put is linear in (x, values): the put of their tangents (0 for none). */
static hop_status
jvp_put(hop_jvp_ctx *cx, const hop_node *n)
{
    int64_t combine = put_combine(n);
    if ((combine == HOP_PUT_MAX || combine == HOP_PUT_MIN) &&
        hop_dtype_is_complex(meta_of(n->args[2].u.node)->dtype))
        return put_no_derivative(n);
    if (combine == HOP_PUT_MAX || combine == HOP_PUT_MIN || combine == HOP_PUT_MUL)
        return jvp_put_combined(cx, n);
    if (combine != HOP_PUT_SET && combine != HOP_PUT_ADD)
        return put_no_derivative(n);
    hop_node *tx = tangent(cx, &n->args[0]), *tv = tangent(cx, &n->args[2]);
    if (tx == NULL && tv == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    hop_graph *g = a.g;
    hop_dtype dt = meta_of(n)->dtype;
    if (tx == NULL)
        tx = hop__ad_full(g, meta_of(n), 0.0);
    if (tv == NULL)
        tv = HOP_EMIT(g, full, hop_arg_list(NULL, 0), F(0.0), hop_arg_dtype(dt));
    tx = to_dtype(g, tx, dt);
    tv = to_dtype(g, tv, meta_of(n->args[2].u.node)->dtype);
    if (tx == NULL || tv == NULL)
        return hop_error_code();
    return set_tangent(
        cx, n, HOP_EMIT(g, put, N(tx), N(primal(&a, n->args[1].u.node)), N(tv), n->args[3]));
}

/* bitcast reads bits, which have no derivative: a result of integers or
 * bools passes none (as a comparison's), and a float or complex one from a
 * float or complex x (a complex view of float pairs would be linear) is an
 * error rather than a silent zero. */
static hop_status
bitcast_no_derivative(const hop_node *n)
{
    hop_dtype from = meta_of(n->args[0].u.node)->dtype, to = meta_of(n)->dtype;
    bool inexact = hop_dtype_is_float(to) || hop_dtype_is_complex(to);
    if (!inexact || !(hop_dtype_is_float(from) || hop_dtype_is_complex(from)))
        return HOP_OK;
    return hop_error(HOP_UNSUPPORTED,
                     "bitcast: no derivative of %s's bits read as %s (a view with another dtype)",
                     hop_dtype_name(from), hop_dtype_name(to));
}

static hop_status
vjp_bitcast(hop_vjp_ctx *cx, const hop_node *n)
{
    return hop_vjp_ct(cx, n, 0) == NULL ? HOP_OK : bitcast_no_derivative(n);
}

static hop_status
jvp_bitcast(hop_jvp_ctx *cx, const hop_node *n)
{
    return tangent(cx, &n->args[0]) == NULL ? HOP_OK : bitcast_no_derivative(n);
}

/* cumsum: the transpose of a cumsum is the cumsum from the other end. */
VJP_ARG0(vjp_cumsum)
{
    hop_graph *g = a->g;
    const hop_node *x = n->args[0].u.node;
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    int d = along_dim(n);
    if (d < 0)
        return accumulate(cx, x, ct);
    return accumulate(cx, x, flip(g, HOP_EMIT(g, cumsum, N(flip(g, ct, d)), I(d)), d));
}

/*
 * cumprod along dim d, with x seen as [R, size] (d last, the rest
 * flattened): C[r, j, i] = prod_{k <= i, k != j} x[r, k] (a cumprod of x
 * with x_j replaced by 1) is d y_i / d x_j for j <= i, exact with zeros.
 * Reverse: g_j = sum_{i >= j} ct_i C[j, i]; forward: t'_i = sum_{j <= i}
 * t_j C[j, i].
 */
static hop_status
cumprod_rule(const ad *a, const hop_node *n, hop_node *v, hop_node **out)
{
    hop_graph *g = a->g;
    hop_shape_env *env = g->env;
    int rank = meta_of(n->args[0].u.node)->rank, d = along_dim(n);
    if (d < 0) {
        *out = v;
        return HOP_OK;
    }
    hop_node *x = primal(a, n->args[0].u.node);
    if (d != rank - 1) {
        x = HOP_EMIT(g, transpose, N(x), I(d), I(-1));
        v = HOP_EMIT(g, transpose, N(v), I(d), I(-1));
        if (x == NULL || v == NULL)
            return hop_error_code();
    }
    hop_meta tm = *meta_of(x);
    const hop_expr *size = tm.sizes[rank - 1];
    const hop_expr *R = size_product(env, tm.sizes, 0, rank - 1);
    if (R == NULL)
        return hop_error_code();
    hop_arg shape2[2] = {S(R), S(size)};
    hop_node *x2 = HOP_EMIT(g, reshape, N(x), hop_arg_list(shape2, 2));
    hop_node *v2 = HOP_EMIT(g, reshape, N(v), hop_arg_list(shape2, 2));
    hop_node *ar = arange_n(g, size);
    hop_node *col = HOP_EMIT(g, unsqueeze, N(ar), I(1)); /* j down, i (or k) across */
    hop_node *eye = op2(g, HOP_OP_eq, col, ar);
    hop_node *upper = op2(g, HOP_OP_le, col, ar); /* j <= i */
    hop_node *C = HOP_EMIT(
        g, cumprod, N(HOP_EMIT(g, where, N(eye), F(1.0), N(HOP_EMIT(g, unsqueeze, N(x2), I(1))))),
        I(2));
    hop_node *r2;
    if (a->v) {
        hop_node *terms = op2(g, HOP_OP_mul, C, HOP_EMIT(g, unsqueeze, N(v2), I(1)));
        r2 = HOP_EMIT(g, sum, N(where_or_zero(g, upper, terms)), I(2), hop_arg_bool(false));
    } else {
        hop_node *terms = op2(g, HOP_OP_mul, C, HOP_EMIT(g, unsqueeze, N(v2), I(2)));
        r2 = HOP_EMIT(g, sum, N(where_or_zero(g, upper, terms)), I(1), hop_arg_bool(false));
    }
    hop_node *r = reshape_to(g, r2, &tm);
    if (d != rank - 1)
        r = HOP_EMIT(g, transpose, N(r), I(d), I(-1));
    *out = r;
    return r ? HOP_OK : hop_error_code();
}

VJP_ARG0(vjp_cumprod)
{
    hop_node *r;
    hop_status st = cumprod_rule(a, n, hop_vjp_ct(cx, n, 0), &r);
    return st == HOP_OK ? accumulate(cx, n->args[0].u.node, r) : st;
}

JVP_ARG0(jvp_cumprod)
{
    hop_node *r;
    hop_status st = cumprod_rule(a, n, t, &r);
    return st == HOP_OK ? set_tangent(cx, n, r) : st;
}

/* ---------------------------------------------------- dynamic indexing */

/*
 * The dynamic indexing ops transpose into each other: a dynamic_slice's
 * cotangent is written into zeros at the same start, and
 * dynamic_update_slice's splits into x's (zeros where update went) and
 * update's (that slice); both clamp the start the same way, so the
 * gradient goes where the value came from, exact at any start.
 */

/* A start argument of n as an operand of a new dynamic op: the primal of a
 * tensor, or (an INT/SYM start) a 0-d i64 tensor of it, which dynamic_slice
 * needs. */
static hop_arg
start_operand(const ad *a, const hop_arg *s, bool tensor)
{
    if (s->kind == HOP_ARG_NODE && s->u.node->meta->kind == HOP_VALUE_TENSOR) {
        hop_node *p = primal(a, s->u.node);
        return p ? N(p) : hop_arg_none();
    }
    hop_arg v = *s; /* a SymInt node: its symbol */
    if (s->kind == HOP_ARG_NODE)
        v = S(s->u.node->meta->sym);
    if (!tensor)
        return v;
    hop_node *t = HOP_EMIT(a->g, full, hop_arg_list(NULL, 0), v, hop_arg_dtype(HOP_I64));
    return t ? N(t) : hop_arg_none();
}

VJP_ARG0(vjp_dynamic_slice)
{
    const hop_node *x = n->args[0].u.node;
    hop_node *z = hop__ad_full(a->g, meta_of(x), 0.0), *ct = hop_vjp_ct(cx, n, 0);
    hop_arg s = start_operand(a, &n->args[2], true);
    if (n->args[3].kind == HOP_ARG_NONE) /* x[i]: the dim back, of size 1 */
        ct = HOP_EMIT(a->g, unsqueeze, N(ct), I(wrap_dim(n->args[1].u.i, meta_of(x)->rank)));
    if (z == NULL || ct == NULL || s.kind == HOP_ARG_NONE)
        return hop_error_code();
    return accumulate(cx, x, HOP_EMIT(a->g, dynamic_update_slice, N(z), N(ct), n->args[1], s));
}

static hop_status
vjp_dynamic_update_slice(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    const hop_node *u = n->args[1].u.node;
    int d = wrap_dim(n->args[2].u.i, meta_of(n)->rank);
    hop_status st = HOP_OK;
    if (wants(cx, &n->args[0])) {
        hop_node *z = hop__ad_full(a.g, meta_of(u), 0.0);
        hop_arg s = start_operand(&a, &n->args[3], false);
        st = z && s.kind != HOP_ARG_NONE
                 ? accumulate(cx, n->args[0].u.node,
                              HOP_EMIT(a.g, dynamic_update_slice, N(ct), N(z), n->args[2], s))
                 : hop_error_code();
    }
    if (st == HOP_OK && wants(cx, &n->args[1])) {
        hop_arg s = start_operand(&a, &n->args[3], true);
        st = s.kind != HOP_ARG_NONE ? accumulate(cx, u,
                                                 HOP_EMIT(a.g, dynamic_slice, N(ct), n->args[2], s,
                                                          S(meta_of(u)->sizes[d])))
                                    : hop_error_code();
    }
    return st;
}

static hop_status
jvp_dynamic_update_slice(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *tx = tangent(cx, &n->args[0]), *tu = tangent(cx, &n->args[1]);
    if (tx == NULL && tu == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    if (tx == NULL)
        tx = hop__ad_full(a.g, meta_of(n->args[0].u.node), 0.0);
    if (tu == NULL)
        tu = hop__ad_full(a.g, meta_of(n->args[1].u.node), 0.0);
    hop_arg s = start_operand(&a, &n->args[3], false);
    if (tx == NULL || tu == NULL || s.kind == HOP_ARG_NONE)
        return hop_error_code();
    return set_tangent(cx, n, HOP_EMIT(a.g, dynamic_update_slice, N(tx), N(tu), n->args[2], s));
}

/* mask_gradient(x, mask): the gradient (tangent) where mask, zero elsewhere;
 * a where, so a nan or inf the other side computed never gets through. */
VJP_ARG0(vjp_mask_gradient)
{
    hop_node *mask = primal(a, n->args[1].u.node);
    return accumulate(cx, n->args[0].u.node,
                      mask ? where_or_zero(a->g, mask, hop_vjp_ct(cx, n, 0)) : NULL);
}

JVP_ARG0(jvp_mask_gradient)
{
    hop_node *mask = primal(a, n->args[1].u.node);
    return set_tangent(cx, n, mask ? where_or_zero(a->g, mask, t) : NULL);
}

/* fail_if(x, flag, kind): no derivative reaches flag (a bool); x's
 * cotangent (tangent) is the result's through the same check, so a
 * derivative is never handed out unchecked, whichever outputs a caller
 * keeps (a gradient without the forward value). */
VJP_ARG0(vjp_fail_if)
{
    hop_node *flag = primal(a, n->args[1].u.node), *ct = hop_vjp_ct(cx, n, 0);
    if (ct == NULL)
        return HOP_OK;
    return accumulate(cx, n->args[0].u.node,
                      flag ? HOP_EMIT(a->g, fail_if, N(ct), N(flag), n->args[2]) : NULL);
}

JVP_ARG0(jvp_fail_if)
{
    hop_node *flag = primal(a, n->args[1].u.node);
    return set_tangent(cx, n, flag ? HOP_EMIT(a->g, fail_if, N(t), N(flag), n->args[2]) : NULL);
}

/* ------------------------------------------------------- the table part */

const hop_op_ad_rule hop__ad_index_rules[HOP_OP_COUNT] = {
    [HOP_OP_cumsum] = {.vjp = vjp_cumsum, .jvp = jvp_linear},
    [HOP_OP_cumprod] = {.vjp = vjp_cumprod, .jvp = jvp_cumprod},
    [HOP_OP_sort] = {.vjp = vjp_sort, .jvp = jvp_sort},
    [HOP_OP_take] = {.vjp = vjp_take, .jvp = jvp_linear},
    [HOP_OP_dynamic_slice] = {.vjp = vjp_dynamic_slice, .jvp = jvp_linear},
    [HOP_OP_dynamic_update_slice] = {.vjp = vjp_dynamic_update_slice,
                                     .jvp = jvp_dynamic_update_slice},
    [HOP_OP_mask_gradient] = {.vjp = vjp_mask_gradient, .jvp = jvp_mask_gradient},
    [HOP_OP_put] = {.vjp = vjp_put, .jvp = jvp_put},
    [HOP_OP_bitcast] = {.vjp = vjp_bitcast, .jvp = jvp_bitcast},
    [HOP_OP_fail_if] = {.vjp = vjp_fail_if, .jvp = jvp_fail_if},
};
