/*
 * autodiff/op_rules.c - the op table's autodiff column: one vjp and one jvp
 * rule per differentiable op, and the nondiff mark for the others
 * (hop_op_ad).  JAX's conventions throughout: ops that are piecewise
 * constant (comparisons, sign, floor, floor_divide, argmax, ...) pass no
 * gradient; abs has slope +1 at 0; relu slope 0 at 0; maximum/minimum split
 * a tie 0.5/0.5; amax/amin share the cotangent among tied maxima; pow's
 * exponent gradient is 0 where the base is 0.
 *
 * Every rule emits differentiable ops only (index computations aside, which
 * are integer and pass no gradient), so the graph a rule builds can be
 * differentiated again.  Elementwise ops multiply by their Jacobian's
 * diagonal, which serves both modes (unary_partial, binary_partial: v is a
 * cotangent or a tangent).  Linear ops apply themselves to the tangent in
 * forward mode (jvp_linear) and their transpose in reverse mode.
 *
 * There is no scatter op, so a gradient that scatters is built another way:
 *   select, slice   a gather (take) of the cotangent padded with one zero
 *                   slot, or a cat of zeros around it (step 1): O(numel(x))
 *   take            a one-hot matmul: onehot(index)^T @ ct over x's dim,
 *                   O(numel(index) * size) for the one-hot.  An inf or nan in
 *                   the cotangent reaches every element of its row (0 * inf
 *                   is nan), where a scatter-add would keep it to its index
 *   sort            a permutation's transpose is its inverse: the cotangent
 *                   gathered by argsort(argsort(x)), O(numel(x))
 *   cumsum          a reverse cumsum, flip(cumsum(flip(ct))), flip a take
 *                   with a reversed arange
 *   prod            the product of the other elements as the exclusive
 *                   cumprods from both ends (exact with zeros, O(numel(x)))
 *   cumprod         the matrix of partial products without x_j,
 *                   O(size^2) per row along dim (exact with zeros)
 * dynamic_slice and dynamic_update_slice scatter into one place, so each is
 * the other's transpose (below).
 */
#include "autodiff/ad_impl.h"

#include <math.h>
#include <string.h>

#define LEN(a) (sizeof(a) / sizeof *(a))

/* ln 2 and ln 10 (M_LN2 and M_LN10 are not C11) */
#define LN2 0.693147180559945309417232121458176568
#define LN10 2.30258509299404568401799145468436421

/* ------------------------------------------------------------ emitting */

static hop_node *
op1(hop_graph *g, hop_op op, hop_node *x)
{
    return x ? hop__ad_op1(g, op, x) : NULL;
}

static hop_node *
op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    return a && b ? hop__ad_op2(g, op, a, b) : NULL;
}

static hop_node *
op2c(hop_graph *g, hop_op op, hop_node *a, double c)
{
    return a ? hop__ad_op2c(g, op, a, c) : NULL;
}

static hop_node *
cop2(hop_graph *g, hop_op op, double c, hop_node *b)
{
    return b ? hop__ad_cop2(g, op, c, b) : NULL;
}

static hop_node *
where3(hop_graph *g, hop_node *cond, hop_node *a, hop_node *b)
{
    return cond && a && b ? hop__ad_where(g, cond, a, b) : NULL;
}

/* where(cond, a, 0) and where(cond, 0, b): a float zero keeps the dtype. */
static hop_node *
where_or_zero(hop_graph *g, hop_node *cond, hop_node *a)
{
    return HOP_EMIT(g, where, N(cond), N(a), F(0.0));
}

static hop_node *
zero_or_where(hop_graph *g, hop_node *cond, hop_node *b)
{
    return HOP_EMIT(g, where, N(cond), F(0.0), N(b));
}

static hop_node *
to_dtype(hop_graph *g, hop_node *x, hop_dtype dt)
{
    return x ? hop__ad_to(g, x, dt) : NULL;
}

static int
wrap_dim(int64_t d, int rank)
{
    return (int)(d < 0 ? d + rank : d);
}

static const hop_meta *
meta_of(const hop_node *n)
{
    return &n->meta->meta;
}

/* The dim that argument 1 of an op along one dim of x (sort, cumsum,
 * cumprod) names, wrapped; -1 for a 0-d x, on which the op is the
 * identity. */
static int
along_dim(const hop_node *n)
{
    int rank = meta_of(n->args[0].u.node)->rank;
    return rank == 0 ? -1 : wrap_dim(n->args[1].u.i, rank);
}

/* The sizes of m as shape arguments (constants fold to INT). */
static void
shape_args(const hop_meta *m, hop_arg *items)
{
    for (int k = 0; k < m->rank; k++)
        items[k] = S(m->sizes[k]);
}

static hop_node *
reshape_to(hop_graph *g, hop_node *x, const hop_meta *m)
{
    hop_arg items[HOP_MAX_RANK];
    shape_args(m, items);
    return HOP_EMIT(g, reshape, N(x), hop_arg_list(items, (size_t)m->rank));
}

/* Product of sizes[k] for k in [lo, hi) (1 for none). */
static const hop_expr *
size_product(hop_shape_env *env, const hop_expr *const *sizes, int lo, int hi)
{
    const hop_expr *p = hop_sym_const(env, 1);
    for (int k = lo; k < hi && p; k++)
        p = hop_sym_mul(env, p, sizes[k]);
    return p;
}

/* arange(0, n) as an i64 tensor. */
static hop_node *
arange_n(hop_graph *g, const hop_expr *n)
{
    return HOP_EMIT(g, arange, I(0), S(n), I(1), hop_arg_none());
}

/* x reversed along dim d (a take with the index n-1, ..., 0). */
static hop_node *
flip(hop_graph *g, hop_node *x, int d)
{
    if (x == NULL)
        return NULL;
    const hop_expr *n = meta_of(x)->sizes[d];
    const hop_expr *last = hop_sym_add_int(g->env, n, -1);
    if (last == NULL)
        return NULL;
    hop_node *idx = HOP_EMIT(g, sub, S(last), N(arange_n(g, n)));
    return HOP_EMIT(g, take, N(x), I(d), N(idx));
}

/* A tensor of meta `like` with dim d of size `size`, filled with v. */
static hop_node *
full_with_dim(hop_graph *g, const hop_meta *like, int d, const hop_expr *size, double v)
{
    hop_meta m = *like;
    m.sizes[d] = size;
    return hop__ad_full(g, &m, v);
}

/* ----------------------------------------------------- the two contexts */

/* A rule's view of its context: the graph and the primal mapping, the
 * same for both modes. */
typedef struct ad {
    hop_graph *g;
    hop_vjp_ctx *v;
    hop_jvp_ctx *j;
} ad;

static ad
ad_vjp(hop_vjp_ctx *cx)
{
    return (ad){hop_vjp_out(cx), cx, NULL};
}

static ad
ad_jvp(hop_jvp_ctx *cx)
{
    return (ad){hop_jvp_out(cx), NULL, cx};
}

static hop_node *
primal(const ad *a, const hop_node *n)
{
    return a->v ? hop_vjp_primal(a->v, n) : hop_jvp_primal(a->j, n);
}

/* Operand k of n as a tensor of dtype dt: the primal copy of a node,
 * converted; a scalar as a 0-d tensor. */
static hop_node *
operand(const ad *a, const hop_node *n, size_t k, hop_dtype dt)
{
    const hop_arg *arg = &n->args[k];
    if (arg->kind == HOP_ARG_NODE && arg->u.node->meta->kind == HOP_VALUE_TENSOR)
        return to_dtype(a->g, primal(a, arg->u.node), dt);
    hop_arg v = *arg; /* a SymInt node: its symbol */
    if (arg->kind == HOP_ARG_NODE)
        v = hop_arg_sym(arg->u.node->meta->sym);
    return HOP_EMIT(a->g, full, hop_arg_list(NULL, 0), v, hop_arg_dtype(dt));
}

/* Whether reverse mode wants a gradient for argument arg (a float node
 * that depends on a wrt input). */
static bool
wants(hop_vjp_ctx *cx, const hop_arg *arg)
{
    return hop__ad_is_float_node(arg) && hop_vjp_active(cx, arg->u.node);
}

static hop_status
accumulate(hop_vjp_ctx *cx, const hop_node *v, hop_node *g)
{
    return g ? hop_vjp_accumulate(cx, v, g) : hop_error_code();
}

/* The tangent of argument arg: NULL for a scalar, a non-float value, or a
 * zero tangent. */
static hop_node *
tangent(hop_jvp_ctx *cx, const hop_arg *arg)
{
    return hop__ad_is_float_node(arg) ? hop_jvp_tangent(cx, arg->u.node) : NULL;
}

/* Sets n's tangent to t, converted to n's dtype and broadcast to its shape
 * (an operand's tangent alone may be narrower: add(x[3], y[2, 3])). */
static hop_status
set_tangent(hop_jvp_ctx *cx, const hop_node *n, hop_node *t)
{
    if (t == NULL)
        return hop_error_code();
    hop_graph *g = hop_jvp_out(cx);
    const hop_meta *m = meta_of(n);
    t = to_dtype(g, t, m->dtype);
    if (t && !hop_meta_equal(meta_of(t), m))
        t = hop__ad_expand(g, t, m);
    return t ? hop_jvp_set_tangent(cx, n, 0, t) : hop_error_code();
}

/* Rules through operand 0 alone.  The prologue is written once here (C has
 * no closures, so a macro names the body): VJP_ARG0(name) defines vjp slot
 * name, which does nothing unless reverse mode wants a gradient for operand
 * 0 and else runs the body that follows on (cx, n, a: the ad view);
 * JVP_ARG0(name) defines jvp slot name, which does nothing unless operand 0
 * has a tangent and else runs the body on (cx, n, a, t: that tangent). */
typedef hop_status (*vjp_arg0_body)(hop_vjp_ctx *cx, const hop_node *n, const ad *a);
typedef hop_status (*jvp_arg0_body)(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t);

static hop_status
vjp_arg0(hop_vjp_ctx *cx, const hop_node *n, vjp_arg0_body body)
{
    if (!wants(cx, &n->args[0]))
        return HOP_OK;
    ad a = ad_vjp(cx);
    return body(cx, n, &a);
}

static hop_status
jvp_arg0(hop_jvp_ctx *cx, const hop_node *n, jvp_arg0_body body)
{
    hop_node *t = tangent(cx, &n->args[0]);
    if (t == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    return body(cx, n, &a, t);
}

#define VJP_ARG0(name)                                                                             \
    static hop_status name##_body(hop_vjp_ctx *cx, const hop_node *n, const ad *a);                \
    static hop_status name(hop_vjp_ctx *cx, const hop_node *n)                                     \
    {                                                                                              \
        return vjp_arg0(cx, n, name##_body);                                                       \
    }                                                                                              \
    static hop_status name##_body(hop_vjp_ctx *cx, const hop_node *n, const ad *a)

#define JVP_ARG0(name)                                                                             \
    static hop_status name##_body(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t);   \
    static hop_status name(hop_jvp_ctx *cx, const hop_node *n)                                     \
    {                                                                                              \
        return jvp_arg0(cx, n, name##_body);                                                       \
    }                                                                                              \
    static hop_status name##_body(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t)

/* The op of n applied again with x (argument 0) replaced by t and every
 * other node argument by its primal: the tangent of an op linear in x. */
static hop_node *
relinear(const ad *a, const hop_node *n, hop_node *t)
{
    hop_arg args[8];
    if (t == NULL || n->nargs > LEN(args))
        return NULL;
    for (size_t k = 0; k < n->nargs; k++) {
        args[k] = n->args[k];
        if (args[k].kind == HOP_ARG_NODE)
            args[k] = N(k == 0 ? t : primal(a, n->args[k].u.node));
    }
    return hop_graph_emit(a->g, n->op, args, n->nargs);
}

JVP_ARG0(jvp_linear)
{
    return set_tangent(cx, n, relinear(a, n, t));
}

/* --------------------------------------------------------------- unary */

/* v * f'(x) for the unary op of n, from x and y = f(x). */
static hop_node *
unary_partial(const ad *a, const hop_node *n, hop_node *v)
{
    hop_graph *g = a->g;
    hop_node *x = primal(a, n->args[0].u.node), *y = primal(a, n);
    if (x == NULL || y == NULL || v == NULL)
        return NULL;
    switch (n->op) {
    case HOP_OP_neg:
        return op1(g, HOP_OP_neg, v);
    case HOP_OP_abs: /* JAX: slope +1 at 0 */
        if (hop_dtype_is_complex(meta_of(x)->dtype)) {
            /* d|z| = re(conj(z) dz) / |z|: v conj(z) / |z| (0 at 0); a tangent's real part is
             * taken by set_tangent */
            hop_node *r = op1(g, HOP_OP_abs, x);
            hop_node *safe =
                r ? HOP_EMIT(g, where, N(op2c(g, HOP_OP_eq, r, 0.0)), F(1.0), N(r)) : NULL;
            return op2(g, HOP_OP_mul, v, op2(g, HOP_OP_div, op1(g, HOP_OP_conj, x), safe));
        }
        return where3(g, op2c(g, HOP_OP_ge, x, 0.0), v, op1(g, HOP_OP_neg, v));
    case HOP_OP_exp:
        return op2(g, HOP_OP_mul, v, y);
    case HOP_OP_log:
        return op2(g, HOP_OP_div, v, x);
    case HOP_OP_sin:
        return op2(g, HOP_OP_mul, v, op1(g, HOP_OP_cos, x));
    case HOP_OP_cos:
        return op1(g, HOP_OP_neg, op2(g, HOP_OP_mul, v, op1(g, HOP_OP_sin, x)));
    case HOP_OP_tanh: /* 1 - y^2 */
        return op2(g, HOP_OP_mul, v, cop2(g, HOP_OP_sub, 1.0, op2(g, HOP_OP_mul, y, y)));
    case HOP_OP_sigmoid: /* y (1 - y) */
        return op2(g, HOP_OP_mul, op2(g, HOP_OP_mul, v, y), cop2(g, HOP_OP_sub, 1.0, y));
    case HOP_OP_relu: /* JAX: slope 0 at 0 */
        return where_or_zero(g, op2c(g, HOP_OP_gt, x, 0.0), v);
    case HOP_OP_sqrt: /* 1 / (2 y) */
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_mul, y, 2.0));
    case HOP_OP_expm1: /* y + 1 */
        return op2(g, HOP_OP_mul, v, op2c(g, HOP_OP_add, y, 1.0));
    case HOP_OP_log1p:
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_add, x, 1.0));
    case HOP_OP_log2:
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_mul, x, LN2));
    case HOP_OP_log10:
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_mul, x, LN10));
    case HOP_OP_exp2:
        return op2(g, HOP_OP_mul, v, op2c(g, HOP_OP_mul, y, LN2));
    case HOP_OP_tan: /* 1 + y^2 */
        return op2(g, HOP_OP_mul, v, op2c(g, HOP_OP_add, op2(g, HOP_OP_mul, y, y), 1.0));
    case HOP_OP_arctan: /* 1 / (1 + x^2) */
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_add, op2(g, HOP_OP_mul, x, x), 1.0));
    case HOP_OP_sinh:
        return op2(g, HOP_OP_mul, v, op1(g, HOP_OP_cosh, x));
    case HOP_OP_cosh:
        return op2(g, HOP_OP_mul, v, op1(g, HOP_OP_sinh, x));
    case HOP_OP_arcsin: /* 1 / sqrt(1 - x^2) */
    case HOP_OP_arccos: /* -1 / sqrt(1 - x^2) */ {
        hop_node *d = op2(g, HOP_OP_div, v,
                          op1(g, HOP_OP_sqrt, cop2(g, HOP_OP_sub, 1.0, op2(g, HOP_OP_mul, x, x))));
        return n->op == HOP_OP_arcsin ? d : op1(g, HOP_OP_neg, d);
    }
    case HOP_OP_arcsinh: /* 1 / sqrt(x^2 + 1) */
        return op2(g, HOP_OP_div, v,
                   op1(g, HOP_OP_sqrt, op2c(g, HOP_OP_add, op2(g, HOP_OP_mul, x, x), 1.0)));
    case HOP_OP_arccosh: /* 1 / sqrt((x - 1)(x + 1)), exact near 1 */
        return op2(
            g, HOP_OP_div, v,
            op1(g, HOP_OP_sqrt,
                op2(g, HOP_OP_mul, op2c(g, HOP_OP_sub, x, 1.0), op2c(g, HOP_OP_add, x, 1.0))));
    case HOP_OP_arctanh: /* 1 / (1 - x^2) */
        return op2(g, HOP_OP_div, v, cop2(g, HOP_OP_sub, 1.0, op2(g, HOP_OP_mul, x, x)));
    case HOP_OP_cbrt: /* 1 / (3 y^2) */
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_mul, op2(g, HOP_OP_mul, y, y), 3.0));
    case HOP_OP_i0: /* i1(x) */
        return op2(g, HOP_OP_mul, v, op1(g, HOP_OP_i1, x));
    case HOP_OP_i1: { /* i0(x) - y / x, 1/2 at 0 */
        hop_node *zero = op2c(g, HOP_OP_eq, x, 0.0);
        hop_node *safe = HOP_EMIT(g, where, N(zero), F(1.0), N(x));
        hop_node *d = op2(g, HOP_OP_sub, op1(g, HOP_OP_i0, x), op2(g, HOP_OP_div, y, safe));
        return op2(g, HOP_OP_mul, v, HOP_EMIT(g, where, N(zero), F(0.5), N(d)));
    }
    default:
        hop_error(HOP_MISUSE, "autodiff: %s is not a unary op with a rule", hop_node_target(n));
        return NULL;
    }
}

VJP_ARG0(vjp_unary)
{
    return accumulate(cx, n->args[0].u.node, unary_partial(a, n, hop_vjp_ct(cx, n, 0)));
}

JVP_ARG0(jvp_unary)
{
    return set_tangent(cx, n, unary_partial(a, n, t));
}

/* -------------------------------------------------------------- binary */

/* v * d(n)/d(operand k) for the binary op of n.  Operands are read as
 * tensors of n's dtype (a scalar as a 0-d tensor). */
static hop_node *
binary_partial(const ad *a, const hop_node *n, size_t k, hop_node *v)
{
    hop_graph *g = a->g;
    hop_dtype dt = meta_of(n)->dtype;
    if (v == NULL)
        return NULL;
    switch (n->op) {
    case HOP_OP_add:
        return v;
    case HOP_OP_sub:
        return k == 0 ? v : op1(g, HOP_OP_neg, v);
    case HOP_OP_mul:
        return op2(g, HOP_OP_mul, v, operand(a, n, 1 - k, dt));
    case HOP_OP_div:
        if (k == 0)
            return op2(g, HOP_OP_div, v, operand(a, n, 1, dt));
        /* -v a / b^2, as -(v y) / b */
        return op1(g, HOP_OP_neg,
                   op2(g, HOP_OP_div, op2(g, HOP_OP_mul, v, primal(a, n)), operand(a, n, 1, dt)));
    case HOP_OP_pow: {
        hop_node *x = operand(a, n, 0, dt), *e = operand(a, n, 1, dt);
        if (k == 0) { /* e x^(e-1), and 0 where e == 0 (x may be 0) */
            hop_node *d = op2(g, HOP_OP_mul, e, op2(g, HOP_OP_pow, x, op2c(g, HOP_OP_sub, e, 1.0)));
            return HOP_EMIT(g, where, N(op2c(g, HOP_OP_eq, e, 0.0)), F(0.0),
                            N(op2(g, HOP_OP_mul, v, d)));
        }
        /* log(x) y, with log(1) = 0 where x == 0 */
        hop_node *safe = HOP_EMIT(g, where, N(op2c(g, HOP_OP_eq, x, 0.0)), F(1.0), N(x));
        return op2(g, HOP_OP_mul, op2(g, HOP_OP_mul, v, op1(g, HOP_OP_log, safe)), primal(a, n));
    }
    case HOP_OP_maximum:
    case HOP_OP_minimum: {
        /* all of v where this operand wins, half at a tie */
        hop_node *self = operand(a, n, k, dt), *other = operand(a, n, 1 - k, dt);
        hop_op wins = n->op == HOP_OP_maximum ? HOP_OP_gt : HOP_OP_lt;
        hop_node *half =
            where_or_zero(g, op2(g, HOP_OP_eq, self, other), op2c(g, HOP_OP_mul, v, 0.5));
        return where3(g, op2(g, wins, self, other), v, half);
    }
    case HOP_OP_remainder: /* a - b floor(a / b) */
        if (k == 0)
            return v;
        return op1(g, HOP_OP_neg,
                   op2(g, HOP_OP_mul, v,
                       op2(g, HOP_OP_floor_divide, operand(a, n, 0, dt), operand(a, n, 1, dt))));
    case HOP_OP_fmod: /* a - b trunc(a / b): d/db = -trunc(a / b) = (y - a) / b */
        if (k == 0)
            return v;
        return op2(g, HOP_OP_mul, v,
                   op2(g, HOP_OP_div, op2(g, HOP_OP_sub, primal(a, n), operand(a, n, 0, dt)),
                       operand(a, n, 1, dt)));
    case HOP_OP_arctan2: { /* atan2(a, b): (b, -a) / (a^2 + b^2) */
        hop_node *y = operand(a, n, 0, dt), *x = operand(a, n, 1, dt);
        hop_node *r2 = op2(g, HOP_OP_add, op2(g, HOP_OP_mul, y, y), op2(g, HOP_OP_mul, x, x));
        hop_node *d = op2(g, HOP_OP_div, op2(g, HOP_OP_mul, v, k == 0 ? x : y), r2);
        return k == 0 ? d : op1(g, HOP_OP_neg, d);
    }
    case HOP_OP_hypot: /* operand / hypot */
        return op2(g, HOP_OP_div, op2(g, HOP_OP_mul, v, operand(a, n, k, dt)), primal(a, n));
    case HOP_OP_copysign: { /* |a| s(b): sign(a) s(b) for a, 0 for b */
        if (k == 1)
            return op2c(g, HOP_OP_mul, v, 0.0);
        hop_node *one = HOP_EMIT(g, full, hop_arg_list(NULL, 0), F(1.0), hop_arg_dtype(dt));
        hop_node *sa = op2(g, HOP_OP_copysign, one, operand(a, n, 0, dt));
        hop_node *sb = op2(g, HOP_OP_copysign, one, operand(a, n, 1, dt));
        return op2(g, HOP_OP_mul, v, op2(g, HOP_OP_mul, sa, sb));
    }
    case HOP_OP_nextafter: /* the identity in a, a step function of b */
        return k == 0 ? v : op2c(g, HOP_OP_mul, v, 0.0);
    case HOP_OP_ldexp: /* 2^n for a; n is read as an integer: 0 for it */
        return k == 0 ? op2(g, HOP_OP_ldexp, v, operand(a, n, 1, dt)) : op2c(g, HOP_OP_mul, v, 0.0);
    default:
        hop_error(HOP_MISUSE, "autodiff: %s is not a binary op with a rule", hop_node_target(n));
        return NULL;
    }
}

static hop_status
vjp_binary(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    for (size_t k = 0; k < 2; k++) {
        if (!wants(cx, &n->args[k]))
            continue;
        hop_status st = accumulate(cx, n->args[k].u.node, binary_partial(&a, n, k, ct));
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

static hop_status
jvp_binary(hop_jvp_ctx *cx, const hop_node *n)
{
    ad a = ad_jvp(cx);
    hop_node *sum = NULL;
    for (size_t k = 0; k < 2; k++) {
        hop_node *t = tangent(cx, &n->args[k]);
        if (t == NULL)
            continue;
        hop_node *p = binary_partial(&a, n, k, t);
        if (p == NULL)
            return hop_error_code();
        if ((sum = sum ? op2(a.g, HOP_OP_add, sum, p) : p) == NULL)
            return hop_error_code();
    }
    return sum ? set_tangent(cx, n, sum) : HOP_OK;
}

/* --------------------------------------------------------------- where */

static hop_status
vjp_where(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0), *cond = primal(&a, n->args[0].u.node);
    hop_status st = HOP_OK;
    if (wants(cx, &n->args[1]))
        st = accumulate(cx, n->args[1].u.node, where_or_zero(a.g, cond, ct));
    if (st == HOP_OK && wants(cx, &n->args[2]))
        st = accumulate(cx, n->args[2].u.node, zero_or_where(a.g, cond, ct));
    return st;
}

static hop_status
jvp_where(hop_jvp_ctx *cx, const hop_node *n)
{
    ad a = ad_jvp(cx);
    hop_node *ta = tangent(cx, &n->args[1]), *tb = tangent(cx, &n->args[2]);
    if (ta == NULL && tb == NULL)
        return HOP_OK;
    hop_node *cond = primal(&a, n->args[0].u.node);
    return set_tangent(cx, n,
                       HOP_EMIT(a.g, where, N(cond), ta ? N(ta) : F(0.0), tb ? N(tb) : F(0.0)));
}

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
prod_others(const ad *a, const hop_node *n)
{
    hop_graph *g = a->g;
    hop_node *x = primal(a, n->args[0].u.node);
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

/* An INT, SYM or SymInt-node argument as a SymInt expression; NULL for
 * another kind.  (A SymInt node, a placeholder or item's result, stands for
 * its symbol, which the transformed graph binds as the forward did.) */
static const hop_expr *
arg_expr(hop_shape_env *env, const hop_arg *a)
{
    return a->kind == HOP_ARG_INT   ? hop_sym_const(env, a->u.i)
           : a->kind == HOP_ARG_SYM ? a->u.sym
           : a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_SYM
               ? a->u.node->meta->sym
               : NULL;
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
 * take(x, dim, index): the scatter-add of the cotangent into x's dim, as a
 * one-hot matmul; a flip's cotangent flips back (O(size), and the second
 * derivative of a rule that flips stays linear).  x is seen as [P, size, Q] and the cotangent as
 * [P, M, Q] (M the index's elements); onehot[j, m] = (index[m] == j), so
 * the gradient is onehot @ ct [P, size, Q].
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
    if (P == NULL || Q == NULL || M == NULL)
        return hop_error_code();
    if (is_reversal(env, n->args[2].u.node, size)) {
        hop_node *back =
            HOP_EMIT(g, take, N(hop_vjp_ct(cx, n, 0)), I(d), N(primal(a, n->args[2].u.node)));
        return accumulate(cx, x, back);
    }
    hop_node *idx =
        HOP_EMIT(g, reshape, N(primal(a, n->args[2].u.node)), hop_arg_list((hop_arg[]){S(M)}, 1));
    idx = HOP_EMIT(g, remainder, N(idx), S(size)); /* negative indices count from the end */
    hop_node *pos = HOP_EMIT(g, unsqueeze, N(arange_n(g, size)), I(1));
    hop_node *onehot =
        HOP_EMIT(g, eq, N(pos), N(HOP_EMIT(g, unsqueeze, N(idx), I(0)))); /* [size, M] */
    onehot = to_dtype(g, onehot, meta_of(n)->dtype);
    hop_node *ct3 = HOP_EMIT(g, reshape, N(hop_vjp_ct(cx, n, 0)),
                             hop_arg_list((hop_arg[]){S(P), S(M), S(Q)}, 3));
    hop_node *g3 = op2(g, HOP_OP_matmul, onehot, ct3);
    return accumulate(cx, x, g3 ? reshape_to(g, g3, xm) : NULL);
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

/* ------------------------------------------------------------- complex */

/*
 * JAX's convention for complex values (docs/AUTODIFF.md): a cotangent c of
 * a complex value stands for the linear function t -> re(c t), so the rule
 * of an op whose derivative is the linear map L gives the c_in with
 * re(c_in t) = re(c L(t)) for every t.  Holomorphic ops keep their real
 * rules (c_in = c f'(z), no conjugate); the rules below are the
 * non-holomorphic ones: real (c_in = c + 0i), imag (0 - c i), conj
 * (conj(c)), angle (c (-i conj(z)) / |z|^2) and complex(re, im) (re(c),
 * -im(c)).  A real input takes the real part of its c_in (accumulate's
 * conversion).
 */
VJP_ARG0(vjp_complex_part)
{
    hop_graph *g = a->g;
    const hop_node *x = n->args[0].u.node;
    bool cplx = hop_dtype_is_complex(meta_of(x)->dtype);
    hop_node *ct = hop_vjp_ct(cx, n, 0), *r = NULL;
    switch (n->op) {
    case HOP_OP_real:
        r = cplx ? HOP_EMIT(g, complex, N(ct), F(0.0)) : ct;
        break;
    case HOP_OP_imag:
        if (!cplx)
            return HOP_OK; /* the zeros of a real input pass no gradient */
        r = HOP_EMIT(g, complex, F(0.0), N(op1(g, HOP_OP_neg, ct)));
        break;
    case HOP_OP_conj:
        r = cplx ? op1(g, HOP_OP_conj, ct) : ct;
        break;
    case HOP_OP_angle: {
        if (!cplx)
            return HOP_OK; /* 0 or pi: piecewise constant */
        hop_node *z = primal(a, x);
        hop_node *re = op1(g, HOP_OP_real, z), *im = op1(g, HOP_OP_imag, z);
        hop_node *r2 = op2(g, HOP_OP_add, op2(g, HOP_OP_mul, re, re), op2(g, HOP_OP_mul, im, im));
        hop_node *s = op2(g, HOP_OP_div, ct, r2);
        r = op2(g, HOP_OP_complex, op1(g, HOP_OP_neg, op2(g, HOP_OP_mul, s, im)),
                op1(g, HOP_OP_neg, op2(g, HOP_OP_mul, s, re)));
        break;
    }
    default:
        return hop_error(HOP_MISUSE, "autodiff: %s is not a complex part op", hop_node_target(n));
    }
    return accumulate(cx, x, r);
}

JVP_ARG0(jvp_complex_part)
{
    hop_graph *g = a->g;
    const hop_node *x = n->args[0].u.node;
    bool cplx = hop_dtype_is_complex(meta_of(x)->dtype);
    if (!cplx && (n->op == HOP_OP_imag || n->op == HOP_OP_angle))
        return HOP_OK;
    if (n->op != HOP_OP_angle)
        return set_tangent(cx, n, cplx ? op1(g, n->op, t) : t);
    /* (re dt_im - im dt_re) / |z|^2 */
    hop_node *z = primal(a, x);
    hop_node *re = op1(g, HOP_OP_real, z), *im = op1(g, HOP_OP_imag, z);
    hop_node *r2 = op2(g, HOP_OP_add, op2(g, HOP_OP_mul, re, re), op2(g, HOP_OP_mul, im, im));
    hop_node *num = op2(g, HOP_OP_sub, op2(g, HOP_OP_mul, re, op1(g, HOP_OP_imag, t)),
                        op2(g, HOP_OP_mul, im, op1(g, HOP_OP_real, t)));
    return set_tangent(cx, n, op2(g, HOP_OP_div, num, r2));
}

static hop_status
vjp_complex(hop_vjp_ctx *cx, const hop_node *n)
{
    ad a = ad_vjp(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_status st = HOP_OK;
    if (wants(cx, &n->args[0]))
        st = accumulate(cx, n->args[0].u.node, op1(a.g, HOP_OP_real, ct));
    if (st == HOP_OK && wants(cx, &n->args[1]))
        st = accumulate(cx, n->args[1].u.node, op1(a.g, HOP_OP_neg, op1(a.g, HOP_OP_imag, ct)));
    return st;
}

static hop_status
jvp_complex(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_node *tr = tangent(cx, &n->args[0]), *ti = tangent(cx, &n->args[1]);
    if (tr == NULL && ti == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    hop_arg re = tr ? N(tr) : F(0.0), im = ti ? N(ti) : F(0.0);
    return set_tangent(cx, n, HOP_EMIT(a.g, complex, re, im));
}

/* ----------------------------------------------------------- the table */

#define UNARY                                                                                      \
    {                                                                                              \
        .vjp = vjp_unary, .jvp = jvp_unary                                                         \
    }
#define BINARY                                                                                     \
    {                                                                                              \
        .vjp = vjp_binary, .jvp = jvp_binary                                                       \
    }
#define NONDIFF                                                                                    \
    {                                                                                              \
        .nondiff = true                                                                            \
    }

static const hop_op_ad_rule rules[HOP_OP_COUNT] = {
    [HOP_OP_neg] = UNARY,
    [HOP_OP_abs] = UNARY,
    [HOP_OP_exp] = UNARY,
    [HOP_OP_log] = UNARY,
    [HOP_OP_sin] = UNARY,
    [HOP_OP_cos] = UNARY,
    [HOP_OP_tanh] = UNARY,
    [HOP_OP_sigmoid] = UNARY,
    [HOP_OP_relu] = UNARY,
    [HOP_OP_sqrt] = UNARY,
    [HOP_OP_expm1] = UNARY,
    [HOP_OP_log1p] = UNARY,
    [HOP_OP_log2] = UNARY,
    [HOP_OP_log10] = UNARY,
    [HOP_OP_exp2] = UNARY,
    [HOP_OP_tan] = UNARY,
    [HOP_OP_arctan] = UNARY,
    [HOP_OP_sinh] = UNARY,
    [HOP_OP_cosh] = UNARY,
    [HOP_OP_arcsin] = UNARY,
    [HOP_OP_arccos] = UNARY,
    [HOP_OP_arcsinh] = UNARY,
    [HOP_OP_arccosh] = UNARY,
    [HOP_OP_arctanh] = UNARY,
    [HOP_OP_cbrt] = UNARY,
    [HOP_OP_i0] = UNARY,
    [HOP_OP_i1] = UNARY,
    [HOP_OP_arctan2] = BINARY,
    [HOP_OP_hypot] = BINARY,
    [HOP_OP_copysign] = BINARY,
    [HOP_OP_fmod] = BINARY,
    [HOP_OP_nextafter] = BINARY,
    [HOP_OP_ldexp] = BINARY,
    [HOP_OP_add] = BINARY,
    [HOP_OP_sub] = BINARY,
    [HOP_OP_mul] = BINARY,
    [HOP_OP_div] = BINARY,
    [HOP_OP_pow] = BINARY,
    [HOP_OP_maximum] = BINARY,
    [HOP_OP_minimum] = BINARY,
    [HOP_OP_remainder] = BINARY,
    [HOP_OP_where] = {.vjp = vjp_where, .jvp = jvp_where},
    [HOP_OP_sum] = {.vjp = vjp_sum, .jvp = jvp_linear},
    [HOP_OP_mean] = {.vjp = vjp_sum, .jvp = jvp_linear},
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
    [HOP_OP_cumsum] = {.vjp = vjp_cumsum, .jvp = jvp_linear},
    [HOP_OP_cumprod] = {.vjp = vjp_cumprod, .jvp = jvp_cumprod},
    [HOP_OP_sort] = {.vjp = vjp_sort, .jvp = jvp_sort},
    [HOP_OP_take] = {.vjp = vjp_take, .jvp = jvp_linear},
    [HOP_OP_dynamic_slice] = {.vjp = vjp_dynamic_slice, .jvp = jvp_linear},
    [HOP_OP_dynamic_update_slice] = {.vjp = vjp_dynamic_update_slice,
                                     .jvp = jvp_dynamic_update_slice},
    [HOP_OP_mask_gradient] = {.vjp = vjp_mask_gradient, .jvp = jvp_mask_gradient},
    [HOP_OP_eq] = NONDIFF,
    [HOP_OP_ne] = NONDIFF,
    [HOP_OP_lt] = NONDIFF,
    [HOP_OP_le] = NONDIFF,
    [HOP_OP_gt] = NONDIFF,
    [HOP_OP_ge] = NONDIFF,
    [HOP_OP_logical_and] = NONDIFF,
    [HOP_OP_logical_or] = NONDIFF,
    [HOP_OP_logical_not] = NONDIFF,
    [HOP_OP_argmax] = NONDIFF,
    [HOP_OP_argmin] = NONDIFF,
    [HOP_OP_item] = NONDIFF,
    [HOP_OP_nonzero] = NONDIFF,
    [HOP_OP_sym_size] = NONDIFF,
    [HOP_OP_full] = NONDIFF,
    [HOP_OP_zeros] = NONDIFF,
    [HOP_OP_ones] = NONDIFF,
    [HOP_OP_arange] = NONDIFF,
    [HOP_OP_floor_divide] = NONDIFF,
    [HOP_OP_bitwise_and] = NONDIFF,
    [HOP_OP_bitwise_or] = NONDIFF,
    [HOP_OP_bitwise_xor] = NONDIFF,
    [HOP_OP_bitwise_not] = NONDIFF,
    [HOP_OP_sign] = NONDIFF,
    [HOP_OP_floor] = NONDIFF,
    [HOP_OP_ceil] = NONDIFF,
    [HOP_OP_round] = NONDIFF,
    [HOP_OP_any] = NONDIFF,
    [HOP_OP_all] = NONDIFF,
    [HOP_OP_argsort] = NONDIFF,
    [HOP_OP_gcd] = NONDIFF,
    [HOP_OP_lcm] = NONDIFF,
    [HOP_OP_left_shift] = NONDIFF,
    [HOP_OP_right_shift] = NONDIFF,
    [HOP_OP_searchsorted] = NONDIFF,
    [HOP_OP_put] = {.vjp = vjp_put, .jvp = jvp_put},
    [HOP_OP_real] = {.vjp = vjp_complex_part, .jvp = jvp_complex_part},
    [HOP_OP_imag] = {.vjp = vjp_complex_part, .jvp = jvp_complex_part},
    [HOP_OP_conj] = {.vjp = vjp_complex_part, .jvp = jvp_complex_part},
    [HOP_OP_angle] = {.vjp = vjp_complex_part, .jvp = jvp_complex_part},
    [HOP_OP_complex] = {.vjp = vjp_complex, .jvp = jvp_complex},
    [HOP_OP_linalg_solve] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_inv] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_det] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_slogdet] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_cholesky] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_qr] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_svd] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_svdvals] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_eigh] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_eigvalsh] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_eig] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_fft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
    [HOP_OP_rfft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
    [HOP_OP_irfft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
    [HOP_OP_bitcast] = {.vjp = vjp_bitcast, .jvp = jvp_bitcast},
};

const hop_op_ad_rule *
hop_op_ad(hop_op op)
{
    return (unsigned)op < HOP_OP_COUNT ? &rules[op] : NULL;
}
