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
 * the other's transpose (index_rules.c).
 *
 * The column is in three files by op family, each with its part of the
 * table: this file the elementwise ops (unary, binary, where, complex),
 * the nondiff marks and the linalg rows (linalg_rules.c); shape_rules.c the
 * reductions, matmul and views; index_rules.c the index ops, cumulative
 * ops and dynamic indexing.  op_rules.h has the helpers they share.
 */
#include "autodiff/op_rules.h"

#include <math.h>
#include <string.h>

/* ln 2 and ln 10 (M_LN2 and M_LN10 are not C11) */
#define LN2 0.693147180559945309417232121458176568
#define LN10 2.30258509299404568401799145468436421

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
    case HOP_OP_pow:
    case HOP_OP_float_power: { /* (float_power: pow by libm; the same derivatives) */
        hop_node *x = operand(a, n, 0, dt), *e = operand(a, n, 1, dt);
        if (k == 0) { /* e x^(e-1), and 0 where e == 0 (x may be 0) */
            hop_node *d = op2(g, HOP_OP_mul, e, op2(g, n->op, x, op2c(g, HOP_OP_sub, e, 1.0)));
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
    case HOP_OP_logaddexp:
    case HOP_OP_logaddexp2: {
        /* e^a / (e^a + e^b) = 1 / (1 + e^(b - a)) (base 2 alike: its ln 2
         * cancels), PyTorch's form: no primal, and 1 or 0 where one operand
         * is infinite (exp(a - out) would be inf - inf there) */
        hop_op ex = n->op == HOP_OP_logaddexp ? HOP_OP_exp : HOP_OP_exp2;
        hop_node *d = op2(g, HOP_OP_sub, operand(a, n, 1 - k, dt), operand(a, n, k, dt));
        return op2(g, HOP_OP_div, v, op2c(g, HOP_OP_add, op1(g, ex, d), 1.0));
    }
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
    hop_status st = HOP_OK;
    for (size_t k = 0; k < 2 && st == HOP_OK; k++)
        if (wants(cx, &n->args[k]))
            st = accumulate(cx, n->args[k].u.node, binary_partial(&a, n, k, ct));
    return st;
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
    [HOP_OP_logaddexp] = BINARY,
    [HOP_OP_logaddexp2] = BINARY,
    [HOP_OP_float_power] = BINARY,
    [HOP_OP_add] = BINARY,
    [HOP_OP_sub] = BINARY,
    [HOP_OP_mul] = BINARY,
    [HOP_OP_div] = BINARY,
    [HOP_OP_pow] = BINARY,
    [HOP_OP_maximum] = BINARY,
    [HOP_OP_minimum] = BINARY,
    [HOP_OP_remainder] = BINARY,
    [HOP_OP_where] = {.vjp = vjp_where, .jvp = jvp_where},
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
    /* gelsd's values only: hop.numpy's lstsq differentiates its SVD solution */
    [HOP_OP_linalg_lstsq] = NONDIFF,
    [HOP_OP_linalg_qr_raw] = NONDIFF,
    [HOP_OP_linalg_eigh] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_eigvalsh] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_linalg_eig] = {.vjp = hop__vjp_linalg, .jvp = hop__jvp_linalg},
    [HOP_OP_fft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
    [HOP_OP_rfft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
    [HOP_OP_irfft] = {.vjp = hop__vjp_linalg, .jvp = jvp_linear},
};

/* Whether a part of the table has a row for an op (an op's row is in
 * exactly one part; the others leave it zero). */
static bool
has_row(const hop_op_ad_rule *r)
{
    return r->nondiff || r->vjp || r->jvp;
}

const hop_op_ad_rule *
hop_op_ad(hop_op op)
{
    if ((unsigned)op >= HOP_OP_COUNT)
        return NULL;
    if (has_row(&hop__ad_shape_rules[op]))
        return &hop__ad_shape_rules[op];
    if (has_row(&hop__ad_index_rules[op]))
        return &hop__ad_index_rules[op];
    return &rules[op];
}
