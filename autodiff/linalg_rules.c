/*
 * autodiff/linalg_rules.c - the autodiff rules of the linalg ops and the
 * reverse-mode rules of the FFTs (their forward mode is the op applied to
 * the tangent: they are linear).
 *
 * Matrices are the last two dims, the others batch.  The rules (A^T: the
 * last two dims swapped; JAX's convention for complex values, so the
 * holomorphic ops' rules need no conjugate):
 *   solve     X = A^-1 B:  B' = solve(A^T, X'), A' = -B' X^T;  dX = solve(A, dB - dA X)
 *   inv       Y = A^-1:    A' = -Y^T Y' Y^T;                    dY = -Y dA Y
 *   det       d:           A' = d' d inv(A)^T;                  dd = d tr(solve(A, dA))
 *   slogdet   (s, l):      A' = l' inv(A)^T (s passes none);    dl = re tr(solve(A, dA))
 *   cholesky  L:           A' = L^-T Phi(L^T L') L^-1 (Phi: the lower triangle, its diagonal
 *                          halved), the transpose of JAX's dL = L Phi(L^-1 dA L^-T)
 *   eigh      (w, V):      A' = V (diag(w') + F o (V^T V')) V^T, F_ij = 1 / (w_j - w_i) off the
 *                          diagonal and where eigenvalues are distinct, else 0 (eigvalsh: the
 *                          first term, V from an eigh of A)
 *   svd       (U, S, Vh):  the reduced SVD's rule (Townsend): A' = U (sym part ...) V^T plus
 *                          the projections off U's and V's spans; svdvals: U diag(S') V^T
 *   qr        (Q, R):      m >= n, reduced: A' = (Q' + Q copyltu(M)) R^-T, M = R R'^T - Q'^T Q;
 *                          m < n: A = [X | Y], R = [U | V] (PyTorch's): X' the square rule's
 *                          with Q' + Y V'^T, Y' = Q V'
 *   fft       the DFT matrix is symmetric: x' = fft(y') with the same direction and norm
 *   rfft      x' = re(fft(pad(y', n)))
 *   irfft     x' = conj(m o rfft(y')), m = [1, 2, ..., 2, 1 (n even)], padded to x's size
 *   eig       (w, V):      both modes, real and complex inputs: see "eig" below (the
 *                          derivative of geev's normalisation included)
 * Forward mode: solve, inv, det, slogdet, eigh, eigvalsh, eig, and (real
 * inputs) cholesky, svd, svdvals and qr: PyTorch's linalg_*_jvp formulas, with
 * F and 1/s 0 where singular values coincide or are 0 as in the vjp (see
 * "forward mode of the decompositions"); lstsq's and pinv's derivatives
 * (hop.numpy) come through svd's and qr's.
 * Refused with HOP_UNSUPPORTED (a clear error, never a zero gradient):
 * complex inputs of cholesky, eigh, svd and qr (both modes); svd with full
 * matrices of a non-square input; qr in complete mode with m > n, or of a
 * matrix not known to be tall or wide (dynamic sizes).
 */
#include "autodiff/ad_impl.h"

#include <string.h>

static const hop_meta *
meta(const hop_node *n)
{
    return &n->meta->meta;
}

static hop_node *
mT(hop_graph *g, hop_node *x)
{
    return x ? HOP_EMIT(g, transpose, N(x), I(-2), I(-1)) : NULL;
}

static hop_node *
op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    return a && b ? hop__ad_op2(g, op, a, b) : NULL;
}

static hop_node *
mm(hop_graph *g, hop_node *a, hop_node *b)
{
    return op2(g, HOP_OP_matmul, a, b);
}

static hop_node *
neg(hop_graph *g, hop_node *x)
{
    return x ? hop__ad_op1(g, HOP_OP_neg, x) : NULL;
}

static hop_node *
solve(hop_graph *g, hop_node *a, hop_node *b)
{
    return op2(g, HOP_OP_linalg_solve, a, b);
}

/* x[..., lo:hi] along dim d (negative d from the end). */
static hop_node *
slice(hop_graph *g, hop_node *x, int d, const hop_expr *lo, const hop_expr *hi)
{
    return x ? HOP_EMIT(g, slice, N(x), I(d), S(lo), S(hi), I(1)) : NULL;
}

static hop_node *
select_(hop_graph *g, hop_node *x, int d, int64_t i)
{
    return x ? HOP_EMIT(g, select, N(x), I(d), I(i)) : NULL;
}

static hop_node *
unsq(hop_graph *g, hop_node *x, int d)
{
    return x ? HOP_EMIT(g, unsqueeze, N(x), I(d)) : NULL;
}

static const hop_expr *
cnst(hop_graph *g, int64_t v)
{
    return hop_sym_const(g->env, v);
}

/* [n, n] bool masks over the last two dims: i == j, i > j (strictly lower). */
static hop_node *
index_mask(hop_graph *g, const hop_expr *n, hop_op rel)
{
    hop_node *r = HOP_EMIT(g, arange, I(0), S(n), I(1), hop_arg_none());
    hop_node *i = unsq(g, r, 1), *j = unsq(g, r, 0);
    return op2(g, rel, i, j);
}

/* diag(v) for v [..., n]: [..., n, n]. */
static hop_node *
diag_embed(hop_graph *g, hop_node *v, const hop_expr *n)
{
    hop_node *eye = index_mask(g, n, HOP_OP_eq);
    hop_node *vv = unsq(g, v, -2); /* [..., 1, n] */
    return eye && vv ? HOP_EMIT(g, where, N(eye), N(vv), F(0.0)) : NULL;
}

/* Phi(X): the lower triangle with the diagonal halved. */
static hop_node *
phi(hop_graph *g, hop_node *x, const hop_expr *n)
{
    hop_node *lower = index_mask(g, n, HOP_OP_gt), *eye = index_mask(g, n, HOP_OP_eq);
    hop_node *half = x ? hop__ad_op2c(g, HOP_OP_mul, x, 0.5) : NULL;
    hop_node *d = eye && half ? HOP_EMIT(g, where, N(eye), N(half), F(0.0)) : NULL;
    return lower && d ? HOP_EMIT(g, where, N(lower), N(x), N(d)) : NULL;
}

/* copyltu(M) = tril(M) + tril(M, -1)^T: the lower triangle mirrored. */
static hop_node *
copyltu(hop_graph *g, hop_node *x, const hop_expr *n)
{
    hop_node *lower = index_mask(g, n, HOP_OP_ge);
    hop_node *t = mT(g, x);
    return lower && t ? HOP_EMIT(g, where, N(lower), N(x), N(t)) : NULL;
}

static hop_status
refuse(const hop_node *n, const char *what)
{
    return hop_error(HOP_UNSUPPORTED, "%s: %s is not supported", hop_node_target(n), what);
}

/* refuse's error for what under a transform, named by how ("the gradient
 * of"): "<target>: <how> <what> is not supported". */
static hop_status
refuse_how(const hop_node *n, const char *how, const char *what)
{
    return hop_error(HOP_UNSUPPORTED, "%s: %s %s is not supported", hop_node_target(n), how, what);
}

static bool
wants(hop_vjp_ctx *cx, const hop_node *n, size_t k)
{
    const hop_arg *a = &n->args[k];
    return hop__ad_is_float_node(a) && hop_vjp_active(cx, a->u.node);
}

static hop_status
acc(hop_vjp_ctx *cx, const hop_node *n, size_t k, hop_node *g)
{
    return g ? hop_vjp_accumulate(cx, n->args[k].u.node, g) : hop_error_code();
}

/* --------------------------------------------------------- the FFTs */

static hop_status
vjp_fft(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    const hop_node *x = n->args[0].u.node;
    int rank = meta(x)->rank;
    int dim = (int)(n->args[1].u.i < 0 ? n->args[1].u.i + rank : n->args[1].u.i);
    switch (n->op) {
    case HOP_OP_fft:
        return acc(cx, n, 0, HOP_EMIT(g, fft, N(ct), n->args[1], n->args[2], n->args[3]));
    case HOP_OP_rfft: {
        /* pad the half spectrum's cotangent with zeros to n, transform, real part */
        hop_meta zm = *meta(ct);
        const hop_expr *nn = meta(x)->sizes[dim];
        zm.sizes[dim] = hop_sym_sub(g->env, nn, meta(ct)->sizes[dim]);
        hop_node *z = zm.sizes[dim] ? hop__ad_full(g, &zm, 0.0) : NULL;
        hop_arg items[2] = {N(ct), N(z)};
        hop_node *full = z ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(dim)) : NULL;
        hop_node *f =
            full ? HOP_EMIT(g, fft, N(full), I(dim), hop_arg_bool(false), n->args[2]) : NULL;
        return acc(cx, n, 0, f ? hop__ad_op1(g, HOP_OP_real, f) : NULL);
    }
    case HOP_OP_irfft: {
        /* conj(mask * rfft(ct)), mask 1, 2, ..., 2 and a last 1 for even n */
        hop_node *r = HOP_EMIT(g, rfft, N(ct), I(dim), n->args[3]);
        const hop_expr *h = r ? meta(r)->sizes[dim] : NULL;
        const hop_expr *nout = meta(n)->sizes[dim];
        hop_node *k = h ? HOP_EMIT(g, arange, I(0), S(h), I(1), hop_arg_none()) : NULL;
        /* k == 0, or n even and k == n / 2: 1; else 2 */
        hop_node *first = k ? hop__ad_op2c(g, HOP_OP_eq, k, 0.0) : NULL;
        hop_node *twice_k = k ? hop__ad_op2c(g, HOP_OP_mul, k, 2.0) : NULL;
        hop_node *last = twice_k ? HOP_EMIT(g, eq, N(twice_k), S(nout)) : NULL;
        hop_node *one = first && last ? HOP_EMIT(g, logical_or, N(first), N(last)) : NULL;
        hop_node *m = one ? HOP_EMIT(g, where, N(one), F(1.0), F(2.0)) : NULL;
        for (int d = dim + 1; m && d < rank; d++)
            m = unsq(g, m, -1);
        hop_node *y = m ? hop__ad_op1(g, HOP_OP_conj, op2(g, HOP_OP_mul, r, m)) : NULL;
        if (y == NULL)
            return hop_error_code();
        /* x may have more than n // 2 + 1 elements along dim: zeros there */
        const hop_expr *xs = meta(x)->sizes[dim];
        hop_meta zm = *meta(y);
        zm.sizes[dim] = hop_sym_sub(g->env, xs, h);
        int64_t extra;
        if (zm.sizes[dim] && hop_expr_const_value(zm.sizes[dim], &extra) && extra == 0)
            return acc(cx, n, 0, y);
        hop_node *z = zm.sizes[dim] ? hop__ad_full(g, &zm, 0.0) : NULL;
        hop_arg items[2] = {N(y), N(z)};
        return acc(cx, n, 0, z ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(dim)) : NULL);
    }
    default:
        return refuse(n, "this gradient");
    }
}

/* ------------------------------------------------------------ linalg */

static hop_status
vjp_solve(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    hop_node *a = hop_vjp_primal(cx, n->args[0].u.node), *x = hop_vjp_primal(cx, n);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_node *bbar = solve(g, mT(g, a), ct);
    hop_status st = HOP_OK;
    if (wants(cx, n, 1))
        st = acc(cx, n, 1, bbar);
    if (st == HOP_OK && wants(cx, n, 0))
        st = acc(cx, n, 0, neg(g, mm(g, bbar, mT(g, x))));
    return st;
}

static hop_status
vjp_inv(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    hop_node *y = hop_vjp_primal(cx, n), *yt = mT(g, y);
    return acc(cx, n, 0, neg(g, mm(g, mm(g, yt, hop_vjp_ct(cx, n, 0)), yt)));
}

/* det: d' d inv(A)^T; slogdet: l' inv(A)^T. */
static hop_status
vjp_det(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    hop_node *a = hop_vjp_primal(cx, n->args[0].u.node), *ct = hop_vjp_ct(cx, n, 0);
    hop_node *w;
    if (n->op == HOP_OP_linalg_det)
        w = op2(g, HOP_OP_mul, ct, hop_vjp_primal(cx, n));
    else
        w = select_(g, ct, -1, 1);
    hop_node *it = mT(g, a ? hop__ad_op1(g, HOP_OP_linalg_inv, a) : NULL);
    return acc(cx, n, 0, op2(g, HOP_OP_mul, it, unsq(g, unsq(g, w, -1), -1)));
}

static hop_status
vjp_cholesky(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    hop_node *l = hop_vjp_primal(cx, n), *lt = mT(g, l);
    const hop_expr *nn = meta(n)->sizes[meta(n)->rank - 1];
    hop_node *p = phi(g, mm(g, lt, hop_vjp_ct(cx, n, 0)), nn);
    /* L^-T P L^-1 = solve(L^T, (solve(L^T, P^T))^T) */
    hop_node *left = solve(g, lt, p);
    return acc(cx, n, 0, mT(g, solve(g, lt, mT(g, left))));
}

/* F_ij = 1 / (w_j - w_i) for eigenvalues w [..., n], 0 where they are equal
 * (the diagonal, and repeated eigenvalues, whose eigenvectors have no
 * derivative: the rules give the part that exists, as PyTorch's and JAX's). */
static hop_node *
eig_f(hop_graph *g, hop_node *w)
{
    hop_node *d = op2(g, HOP_OP_sub, unsq(g, w, -2), unsq(g, w, -1)); /* w_j - w_i */
    hop_node *zero = d ? hop__ad_op2c(g, HOP_OP_eq, d, 0.0) : NULL;
    hop_node *safe = zero ? HOP_EMIT(g, where, N(zero), F(1.0), N(d)) : NULL;
    return zero && safe
               ? HOP_EMIT(g, where, N(zero), F(0.0), N(hop__ad_cop2(g, HOP_OP_div, 1.0, safe)))
               : NULL;
}

/* x [..., n, n] summed over its rows: [..., n]. */
static hop_node *
colsum(hop_graph *g, hop_node *x)
{
    int64_t d = -2;
    return x ? hop__ad_sum(g, x, &d, 1, false) : NULL;
}

/* The diagonal of x [..., n, n]: [..., n]. */
static hop_node *
diag_part(hop_graph *g, hop_node *x, const hop_expr *n)
{
    hop_node *eye = index_mask(g, n, HOP_OP_eq);
    return colsum(g, eye && x ? HOP_EMIT(g, where, N(eye), N(x), F(0.0)) : NULL);
}

/* V (diag(w') + F o (V^T V')) V^T, V' NULL for eigvalsh. */
static hop_node *
eigh_grad(hop_graph *g, hop_node *w, hop_node *v, hop_node *wbar, hop_node *vbar,
          const hop_expr *nn)
{
    hop_node *inner = diag_embed(g, wbar, nn);
    if (vbar != NULL)
        inner = op2(g, HOP_OP_add, inner, op2(g, HOP_OP_mul, eig_f(g, w), mm(g, mT(g, v), vbar)));
    return mm(g, mm(g, v, inner), mT(g, v));
}

/* The eigenvalues and eigenvectors of eigh's packed result p [..., n + 1, n]. */
static void
unpack_eig(hop_graph *g, hop_node *p, const hop_expr *nn, hop_node **w, hop_node **v)
{
    *w = select_(g, p, -2, 0);
    *v = slice(g, p, -2, cnst(g, 1), hop_sym_add_int(g->env, nn, 1));
}

/* The eigenvalues w and vectors v of eig or eigh node n's operand (of order
 * nn), for the four rules of the two: from pn, n's primal, when n returns
 * the vectors (eig(x, True), eigh), else from the decomposition run again
 * on px, its operand's primal, with them (eig(x, False), eigvalsh, keeping
 * its UPLO).  Returns whether n returns the vectors. */
static bool
eig_pairs(hop_graph *g, const hop_node *n, hop_node *pn, hop_node *px, const hop_expr *nn,
          hop_node **w, hop_node **v)
{
    bool eigh = n->op != HOP_OP_linalg_eig;
    bool vectors = eigh ? n->op == HOP_OP_linalg_eigh : n->args[1].u.b;
    hop_node *p = vectors ? pn
                  : eigh  ? HOP_EMIT(g, linalg_eigh, N(px), n->args[1])
                          : HOP_EMIT(g, linalg_eig, N(px), hop_arg_bool(true));
    unpack_eig(g, p, nn, w, v);
    return vectors;
}

/* ------------------------------------------------- eig (general matrix)
 *
 * Forward (Magnus 1985; PyTorch's linalg_eig_jvp), P = V^-1 dA V:
 *   dw = diag(P);  dV0 = V (F o P);  dV1 = dV0 - V diag(re(diag(V^H dV0)))
 *   dV = dV1 + i V diag(theta),  theta_j = -im(dV1[k_j, j]) / V[k_j, j]
 * dV1 keeps each column's norm 1 and dV its largest component real: geev's
 * (NumPy's) normalisation, so the derivative is that of the function NumPy
 * computes, phase included (k_j: the row of column j's largest |V|).  The
 * vjp is its transpose under JAX's pairing re(sum(a b)) (no conjugate):
 *   G0 = V' + i M diag(t / r),  t_j = -im(sum_i V'_ij V_ij), r_j = V[k_j, j], M_ij = (i == k_j)
 *   A' = V^-T (diag(w') + F o (V^T (G0 - conj(V) diag(s)))) V^T,  s_j = re(sum_i G0_ij V_ij)
 * and its real part for a real A. */

static hop_node *
times_i(hop_graph *g, hop_node *x) /* i x, x complex */
{
    hop_node *re = x ? hop__ad_op1(g, HOP_OP_real, x) : NULL;
    hop_node *im = x ? hop__ad_op1(g, HOP_OP_imag, x) : NULL;
    return re && im ? HOP_EMIT(g, complex, N(neg(g, im)), N(re)) : NULL;
}

static hop_node *
cplx_of(hop_graph *g, hop_node *x, hop_dtype ct) /* a real x as complex */
{
    return x ? hop__ad_to(g, x, ct) : NULL;
}

/* M (bool [..., n, n]: row i is column j's largest |V_ij|) and r_j = V[k_j, j] (real). */
static void
eig_phase(hop_graph *g, hop_node *v, const hop_expr *nn, hop_node **m, hop_node **r)
{
    hop_node *a = v ? hop__ad_op1(g, HOP_OP_abs, v) : NULL;
    hop_node *k = a ? HOP_EMIT(g, argmax, N(a), I(-2), hop_arg_bool(true)) : NULL; /* [..., 1, n] */
    hop_node *rows = unsq(g, HOP_EMIT(g, arange, I(0), S(nn), I(1), hop_arg_none()), 1);
    *m = op2(g, HOP_OP_eq, rows, k);
    hop_node *vk = colsum(g, *m ? HOP_EMIT(g, where, N(*m), N(v), F(0.0)) : NULL);
    *r = vk ? hop__ad_op1(g, HOP_OP_real, vk) : NULL;
}

static hop_status
jvp_eig(hop_jvp_ctx *cx, const hop_node *n, hop_node *ta)
{
    hop_graph *g = hop_jvp_out(cx);
    const hop_node *x = n->args[0].u.node;
    const hop_expr *nn = meta(x)->sizes[meta(x)->rank - 1];
    hop_dtype ct = meta(n)->dtype;
    hop_node *w, *v;
    bool vectors = eig_pairs(g, n, hop_jvp_primal(cx, n), hop_jvp_primal(cx, x), nn, &w, &v);
    hop_node *dp = solve(g, v, mm(g, cplx_of(g, ta, ct), v));
    hop_node *dw = diag_part(g, dp, nn);
    hop_node *t = dw;
    if (vectors) {
        hop_node *dv0 = mm(g, v, op2(g, HOP_OP_mul, eig_f(g, w), dp));
        hop_node *vh = v ? hop__ad_op1(g, HOP_OP_conj, v) : NULL;
        hop_node *c = colsum(g, op2(g, HOP_OP_mul, vh, dv0));
        c = c ? cplx_of(g, hop__ad_op1(g, HOP_OP_real, c), ct) : NULL;
        hop_node *dv1 = op2(g, HOP_OP_sub, dv0, op2(g, HOP_OP_mul, v, unsq(g, c, -2)));
        hop_node *m, *r;
        eig_phase(g, v, nn, &m, &r);
        hop_node *dk = colsum(g, m && dv1 ? HOP_EMIT(g, where, N(m), N(dv1), F(0.0)) : NULL);
        hop_node *th = op2(g, HOP_OP_div, neg(g, dk ? hop__ad_op1(g, HOP_OP_imag, dk) : NULL), r);
        hop_node *dv = op2(g, HOP_OP_add, dv1,
                           op2(g, HOP_OP_mul, v, times_i(g, cplx_of(g, unsq(g, th, -2), ct))));
        hop_arg items[2] = {N(unsq(g, dw, -2)), N(dv)};
        t = dw && dv ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(-2)) : NULL;
    }
    return t ? hop_jvp_set_tangent(cx, n, 0, t) : hop_error_code();
}

static hop_status
vjp_eig(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    const hop_node *x = n->args[0].u.node;
    const hop_expr *nn = meta(x)->sizes[meta(x)->rank - 1];
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_dtype cd = meta(n)->dtype;
    hop_node *w, *v, *wbar = ct, *vbar = NULL;
    bool vectors = eig_pairs(g, n, hop_vjp_primal(cx, n), hop_vjp_primal(cx, x), nn, &w, &v);
    if (vectors)
        unpack_eig(g, ct, nn, &wbar, &vbar);
    hop_node *inner = diag_embed(g, wbar, nn);
    if (vectors) {
        hop_node *m, *r;
        eig_phase(g, v, nn, &m, &r);
        hop_node *gv = op2(g, HOP_OP_mul, vbar, v);
        hop_node *tt = neg(g, gv ? hop__ad_op1(g, HOP_OP_imag, colsum(g, gv)) : NULL);
        hop_node *q = times_i(g, cplx_of(g, unsq(g, op2(g, HOP_OP_div, tt, r), -2), cd));
        hop_node *g0 =
            op2(g, HOP_OP_add, vbar, m && q ? HOP_EMIT(g, where, N(m), N(q), F(0.0)) : NULL);
        hop_node *sv = colsum(g, op2(g, HOP_OP_mul, g0, v));
        hop_node *s = sv ? cplx_of(g, hop__ad_op1(g, HOP_OP_real, sv), cd) : NULL;
        hop_node *vc = v ? hop__ad_op1(g, HOP_OP_conj, v) : NULL;
        hop_node *xbar = op2(g, HOP_OP_sub, g0, op2(g, HOP_OP_mul, vc, unsq(g, s, -2)));
        inner = op2(g, HOP_OP_add, inner, op2(g, HOP_OP_mul, eig_f(g, w), mm(g, mT(g, v), xbar)));
    }
    hop_node *vt = mT(g, v);
    hop_node *abar = solve(g, vt, mm(g, inner, vt));
    if (abar != NULL && !hop_dtype_is_complex(meta(x)->dtype))
        abar = hop__ad_op1(g, HOP_OP_real, abar);
    return acc(cx, n, 0, abar ? hop__ad_to(g, abar, meta(x)->dtype) : NULL);
}

/* dw = diag(P), dV = V (F o P), P = V^T dA V (dA as given: its symmetric part
 * is what eigh reads; the vjp above is this map's transpose). */
static hop_status
jvp_eigh(hop_jvp_ctx *cx, const hop_node *n, hop_node *ta)
{
    hop_graph *g = hop_jvp_out(cx);
    const hop_node *x = n->args[0].u.node;
    const hop_expr *nn = meta(x)->sizes[meta(x)->rank - 1];
    hop_node *w, *v;
    bool vectors = eig_pairs(g, n, hop_jvp_primal(cx, n), hop_jvp_primal(cx, x), nn, &w, &v);
    hop_node *dp = mm(g, mT(g, v), mm(g, ta, v));
    hop_node *t = diag_part(g, dp, nn);
    if (vectors) {
        hop_node *dv = mm(g, v, op2(g, HOP_OP_mul, eig_f(g, w), dp));
        hop_arg items[2] = {N(unsq(g, t, -2)), N(dv)};
        t = t && dv ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(-2)) : NULL;
    }
    return t ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, t, meta(n)->dtype)) : hop_error_code();
}

static hop_status
vjp_eigh(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    const hop_node *x = n->args[0].u.node;
    const hop_expr *nn = meta(x)->sizes[meta(x)->rank - 1];
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_node *w, *v, *wbar = ct, *vbar = NULL;
    if (eig_pairs(g, n, hop_vjp_primal(cx, n), hop_vjp_primal(cx, x), nn, &w, &v))
        unpack_eig(g, ct, nn, &wbar, &vbar);
    return acc(cx, n, 0, eigh_grad(g, w, v, wbar, vbar, nn));
}

/* The reduced SVD's vjp (Townsend 2016, as PyTorch's svd_backward):
 *   A' = U [J + J^T... ] written as
 *   A' = U (F o (U^T U' - U'^T U) S + diag(S') + S (F o (V^T V' - V'^T V))) V^T
 *        + (I - U U^T) U' S^-1 V^T + U S^-1 V'^T (I - V V^T),
 * F_ij = 1 / (s_j^2 - s_i^2) off the diagonal where distinct, else 0. */
/* F_ij = 1 / (s_j^2 - s_i^2) for singular values s [..., k], 0 where they
 * coincide (the diagonal included): eig_f of the squares. */
static hop_node *
svd_f(hop_graph *g, hop_node *s)
{
    return eig_f(g, op2(g, HOP_OP_mul, s, s));
}

/* 1 / s, 0 where s is 0 (a zero singular value's direction has no
 * derivative: the rules give the part that exists). */
static hop_node *
svd_sinv(hop_graph *g, hop_node *s)
{
    hop_node *sz = s ? hop__ad_op2c(g, HOP_OP_eq, s, 0.0) : NULL;
    return sz ? HOP_EMIT(
                    g, where, N(sz), F(0.0),
                    N(hop__ad_cop2(g, HOP_OP_div, 1.0, HOP_EMIT(g, where, N(sz), F(1.0), N(s)))))
              : NULL;
}

static hop_node *
svd_grad(hop_graph *g, hop_node *u, hop_node *s, hop_node *v, hop_node *ubar, hop_node *sbar,
         hop_node *vbar, const hop_expr *k)
{
    hop_node *res = mm(g, mm(g, u, diag_embed(g, sbar, k)), mT(g, v));
    if (ubar == NULL)
        return res;
    hop_node *f = svd_f(g, s);
    hop_node *ut = mT(g, u), *vt = mT(g, v);
    hop_node *utub = mm(g, ut, ubar), *vtvb = mm(g, vt, vbar);
    hop_node *ju = op2(g, HOP_OP_mul, f, op2(g, HOP_OP_sub, utub, mT(g, utub)));
    hop_node *jv = op2(g, HOP_OP_mul, f, op2(g, HOP_OP_sub, vtvb, mT(g, vtvb)));
    hop_node *srow = unsq(g, s, -2), *scol = unsq(g, s, -1);
    hop_node *core = op2(g, HOP_OP_add, op2(g, HOP_OP_mul, ju, srow), op2(g, HOP_OP_mul, scol, jv));
    res = op2(g, HOP_OP_add, res, mm(g, mm(g, u, core), vt));
    /* the parts off the spans: (I - U U^T) U' S^-1 V^T and U S^-1 V'^T (I - V V^T) */
    hop_node *sinv = svd_sinv(g, s);
    hop_node *ubs = op2(g, HOP_OP_mul, op2(g, HOP_OP_sub, ubar, mm(g, u, utub)), unsq(g, sinv, -2));
    res = op2(g, HOP_OP_add, res, mm(g, ubs, vt));
    hop_node *vbs = op2(g, HOP_OP_mul, op2(g, HOP_OP_sub, vbar, mm(g, v, vtvb)), unsq(g, sinv, -2));
    return op2(g, HOP_OP_add, res, mm(g, u, mT(g, vbs)));
}

/* U [..., m, k], S [..., k] and V [..., n, k] of the reduced SVD packed in p
 * (of an m x n matrix); returns k. */
static const hop_expr *
svd_unpack(hop_graph *g, hop_node *p, const hop_expr *m, const hop_expr *nn, hop_node **u,
           hop_node **s, hop_node **v)
{
    const hop_expr *k = hop_sym_min(g->env, m, nn), *zero = cnst(g, 0);
    const hop_expr *m1 = hop_sym_add_int(g->env, m, 1), *mk1 = hop_sym_add(g->env, m1, k);
    *u = slice(g, slice(g, p, -2, zero, m), -1, zero, k);
    *s = slice(g, p ? HOP_EMIT(g, select, N(p), I(-2), S(m)) : NULL, -1, zero, k);
    *v = mT(g, slice(g, slice(g, p, -2, m1, mk1), -1, zero, nn));
    return k;
}

static hop_status
vjp_svd(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    const hop_node *x = n->args[0].u.node;
    int r = meta(x)->rank;
    const hop_expr *m = meta(x)->sizes[r - 2], *nn = meta(x)->sizes[r - 1];
    hop_node *ct = hop_vjp_ct(cx, n, 0), *p;
    bool vals = n->op == HOP_OP_linalg_svdvals;
    if (!vals && n->args[1].u.b && m != nn)
        return refuse(n, "the gradient of full_matrices=True for a non-square input");
    if (vals)
        p = HOP_EMIT(g, linalg_svd, N(hop_vjp_primal(cx, x)), hop_arg_bool(false));
    else
        p = hop_vjp_primal(cx, n);
    hop_node *u, *s, *v;
    const hop_expr *k = svd_unpack(g, p, m, nn, &u, &s, &v), *zero = cnst(g, 0);
    const hop_expr *m1 = hop_sym_add_int(g->env, m, 1), *mk1 = hop_sym_add(g->env, m1, k);
    if (vals)
        return acc(cx, n, 0, svd_grad(g, u, s, v, NULL, ct, NULL, k));
    hop_node *ubar = slice(g, slice(g, ct, -2, zero, m), -1, zero, k);
    hop_node *sbar = slice(g, HOP_EMIT(g, select, N(ct), I(-2), S(m)), -1, zero, k);
    hop_node *vbar = mT(g, slice(g, slice(g, ct, -2, m1, mk1), -1, zero, nn));
    return acc(cx, n, 0, svd_grad(g, u, s, v, ubar, sbar, vbar, k));
}

/* The square (or tall, reduced) QR's cotangent of A for those of Q and R. */
static hop_node *
qr_cot(hop_graph *g, hop_node *q, hop_node *rr, hop_node *qbar, hop_node *rbar, const hop_expr *nn)
{
    hop_node *mmat = op2(g, HOP_OP_sub, mm(g, rr, mT(g, rbar)), mm(g, mT(g, qbar), q));
    hop_node *b = op2(g, HOP_OP_add, qbar, mm(g, q, copyltu(g, mmat, nn)));
    /* B R^-T = (R^-1 B^T)^T */
    return mT(g, solve(g, rr, mT(g, b)));
}

/* A QR node's shapes for its rules: x [..., m, nn], Q [..., m, k] and
 * R [..., k, nn] packed in rows [0, m) and [m, m + k) of its result (k the
 * smaller of m and nn, as wide says).  HOP_UNSUPPORTED, named for how ("the
 * gradient of", "forward-mode differentiation (jvp) of"), when whether x is
 * wide is not known, or for mode='complete' of a tall x. */
typedef struct {
    const hop_expr *m, *nn, *k, *zero;
    bool wide;
} qr_shape;

static hop_status
qr_shape_of(hop_graph *g, const hop_node *n, const char *how, qr_shape *s)
{
    const hop_node *x = n->args[0].u.node;
    int r = meta(x)->rank;
    s->m = meta(x)->sizes[r - 2];
    s->nn = meta(x)->sizes[r - 1];
    s->zero = cnst(g, 0);
    s->wide = false;
    if (!hop_shape_env_decide_static(g->env, hop_sym_lt(g->env, s->m, s->nn), &s->wide))
        return refuse_how(n, how, "a QR of a matrix whose shape (tall or wide) is not known");
    if (n->args[1].u.b && !s->wide && s->m != s->nn)
        return refuse_how(n, how, "mode='complete' for a matrix with more rows than columns");
    s->k = s->wide ? s->m : s->nn;
    return HOP_OK;
}

/* Q and R of a QR's packed result (or of its cotangent or tangent) p. */
static void
qr_unpack(hop_graph *g, const qr_shape *s, hop_node *p, hop_node **q, hop_node **r)
{
    const hop_expr *mk = hop_sym_add(g->env, s->m, s->k);
    *q = slice(g, slice(g, p, -2, s->zero, s->m), -1, s->zero, s->k);
    *r = slice(g, slice(g, p, -2, s->m, mk), -1, s->zero, s->nn);
}

/* A wide matrix's A = [X | Y] (PyTorch's): (Q, U) is X's QR and R = [U | V],
 * V = Q^T Y, so Q' gains Y V'^T, X' is the square rule's and Y' = Q V'. */
static hop_status
vjp_qr(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g)
{
    const hop_node *x = n->args[0].u.node;
    qr_shape s;
    hop_status st = qr_shape_of(g, n, "the gradient of", &s);
    if (st != HOP_OK)
        return st;
    const hop_expr *m = s.m, *nn = s.nn, *zero = s.zero;
    bool wide = s.wide;
    hop_node *q, *rr, *qbar, *rbar;
    qr_unpack(g, &s, hop_vjp_primal(cx, n), &q, &rr);
    qr_unpack(g, &s, hop_vjp_ct(cx, n, 0), &qbar, &rbar);
    if (!wide)
        return acc(cx, n, 0, qr_cot(g, q, rr, qbar, rbar, nn));
    hop_node *y = slice(g, hop_vjp_primal(cx, x), -1, m, nn);
    hop_node *vbar = slice(g, rbar, -1, m, nn);
    hop_node *qb = op2(g, HOP_OP_add, qbar, mm(g, y, mT(g, vbar)));
    hop_node *xbar = qr_cot(g, q, slice(g, rr, -1, zero, m), qb, slice(g, rbar, -1, zero, m), m);
    hop_arg items[2] = {N(xbar), N(mm(g, q, vbar))};
    return acc(cx, n, 0,
               xbar && items[1].u.node ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(-1)) : NULL);
}

/* ------------------------------------- forward mode of the decompositions */

/* x [..., r, c] with zero columns appended up to w (x itself when c is w):
 * a block of a packed result's tangent (the padding's tangent is 0). */
static hop_node *
pad_cols(hop_graph *g, hop_node *x, const hop_expr *w)
{
    if (x == NULL)
        return NULL;
    hop_meta zm = *meta(x);
    int d = zm.rank - 1;
    zm.sizes[d] = hop_sym_sub(g->env, w, meta(x)->sizes[d]);
    int64_t extra;
    if (zm.sizes[d] == NULL)
        return NULL;
    if (hop_expr_const_value(zm.sizes[d], &extra) && extra == 0)
        return x;
    hop_node *z = hop__ad_full(g, &zm, 0.0);
    hop_arg items[2] = {N(x), N(z)};
    return z ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(-1)) : NULL;
}

/* The tangent of packed result n: blocks [..., r_i, c_i] stacked along the
 * rows, each padded with zero columns to n's width. */
static hop_node *
pack_rows(hop_graph *g, const hop_node *n, hop_node **blocks, size_t nb)
{
    const hop_expr *w = meta(n)->sizes[meta(n)->rank - 1];
    hop_arg items[3];
    for (size_t i = 0; i < nb; i++) {
        hop_node *b = pad_cols(g, blocks[i], w);
        if (b == NULL)
            return NULL;
        items[i] = N(b);
    }
    return HOP_EMIT(g, cat, hop_arg_list(items, nb), I(-2));
}

/* Whether a < b may hold (false only when known not to). */
static bool
may_be_lt(hop_graph *g, const hop_expr *a, const hop_expr *b)
{
    bool lt = true;
    return !hop_shape_env_decide_static(g->env, hop_sym_lt(g->env, a, b), &lt) || lt;
}

/* The reduced SVD's forward mode (PyTorch's linalg_svd_jvp), P = U^T dA V:
 *   dS = diag(P)
 *   dU = U (F o (P S + S P^T)) + (dA V - U P) S^-1    (the second term 0 when m <= n)
 *   dV = V (F o (S P + P^T S)) + (dA^T U - V P^T) S^-1  (0 when n <= m)
 * F and S^-1 as the vjp's: 0 where singular values coincide or are 0. */
static hop_status
jvp_svd(hop_jvp_ctx *cx, const hop_node *n, hop_node *ta)
{
    hop_graph *g = hop_jvp_out(cx);
    const hop_node *x = n->args[0].u.node;
    int r = meta(x)->rank;
    const hop_expr *m = meta(x)->sizes[r - 2], *nn = meta(x)->sizes[r - 1];
    bool vals = n->op == HOP_OP_linalg_svdvals;
    if (!vals && n->args[1].u.b && m != nn)
        return refuse(n, "forward-mode differentiation (jvp) of full_matrices=True for a "
                         "non-square input");
    hop_node *p = vals ? HOP_EMIT(g, linalg_svd, N(hop_jvp_primal(cx, x)), hop_arg_bool(false))
                       : hop_jvp_primal(cx, n);
    hop_node *u, *s, *v;
    const hop_expr *k = svd_unpack(g, p, m, nn, &u, &s, &v);
    hop_node *dav = mm(g, ta, v);
    hop_node *dp = mm(g, mT(g, u), dav);
    hop_node *ds = diag_part(g, dp, k);
    if (vals)
        return ds ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, ds, meta(n)->dtype))
                  : hop_error_code();
    hop_node *f = svd_f(g, s), *sinv = unsq(g, svd_sinv(g, s), -2);
    hop_node *dps = op2(g, HOP_OP_mul, dp, unsq(g, s, -2)); /* P S */
    hop_node *sdp = op2(g, HOP_OP_mul, unsq(g, s, -1), dp); /* S P */
    hop_node *du = mm(g, u, op2(g, HOP_OP_mul, f, op2(g, HOP_OP_add, dps, mT(g, dps))));
    hop_node *dv = mm(g, v, op2(g, HOP_OP_mul, f, op2(g, HOP_OP_add, sdp, mT(g, sdp))));
    if (may_be_lt(g, nn, m))
        du =
            op2(g, HOP_OP_add, du, op2(g, HOP_OP_mul, op2(g, HOP_OP_sub, dav, mm(g, u, dp)), sinv));
    if (may_be_lt(g, m, nn)) {
        hop_node *dau = mm(g, mT(g, ta), u);
        hop_node *off = op2(g, HOP_OP_sub, dau, mm(g, v, mT(g, dp)));
        dv = op2(g, HOP_OP_add, dv, op2(g, HOP_OP_mul, off, sinv));
    }
    hop_node *blocks[3] = {du, unsq(g, ds, -2), mT(g, dv)};
    hop_node *t = du && ds && dv ? pack_rows(g, n, blocks, 3) : NULL;
    return t ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, t, meta(n)->dtype)) : hop_error_code();
}

/* The square (or tall, reduced) QR's forward mode (PyTorch's linalg_qr_jvp):
 * C = Q^T dA R^-1, X = its symmetric part's upper triangle, diagonal halved
 * (dR R^-1, upper triangular, while Q^T dQ is skew):
 *   dR = X R,  dQ = dA R^-1 - Q X.
 * Returns dQ [..., m, n] and dR [..., n, n] for q, r and the tangent ta. */
static void
qr_tangent(hop_graph *g, hop_node *q, hop_node *r, hop_node *ta, const hop_expr *nn, hop_node **dq,
           hop_node **dr)
{
    hop_node *dar = mT(g, solve(g, mT(g, r), mT(g, ta))); /* dA R^-1 */
    hop_node *c = mm(g, mT(g, q), dar);
    hop_node *sym = op2(g, HOP_OP_add, c, mT(g, c));
    hop_node *upper = index_mask(g, nn, HOP_OP_lt), *eye = index_mask(g, nn, HOP_OP_eq);
    hop_node *d = eye && c ? HOP_EMIT(g, where, N(eye), N(c), F(0.0)) : NULL;
    hop_node *x = upper && sym && d ? HOP_EMIT(g, where, N(upper), N(sym), N(d)) : NULL;
    *dr = mm(g, x, r);
    *dq = op2(g, HOP_OP_sub, dar, mm(g, q, x));
}

/* qr's forward mode: reduced or square; a wide matrix's A = [X | Y] as
 * PyTorch's: (Q, U) is X's QR, and R = [U | V] with dV = Q^T (dY - dQ V). */
static hop_status
jvp_qr(hop_jvp_ctx *cx, const hop_node *n, hop_node *ta)
{
    hop_graph *g = hop_jvp_out(cx);
    qr_shape s;
    hop_status st = qr_shape_of(g, n, "forward-mode differentiation (jvp) of", &s);
    if (st != HOP_OK)
        return st;
    const hop_expr *m = s.m, *nn = s.nn, *zero = s.zero;
    bool wide = s.wide;
    hop_node *q, *r;
    qr_unpack(g, &s, hop_jvp_primal(cx, n), &q, &r);
    hop_node *dq, *dr;
    if (!wide) {
        qr_tangent(g, q, r, ta, nn, &dq, &dr);
    } else {
        hop_node *u = slice(g, r, -1, zero, m), *v = slice(g, r, -1, m, nn);
        hop_node *du;
        qr_tangent(g, q, u, slice(g, ta, -1, zero, m), m, &dq, &du);
        hop_node *dy = slice(g, ta, -1, m, nn);
        hop_node *dv = mm(g, mT(g, q), op2(g, HOP_OP_sub, dy, mm(g, dq, v)));
        hop_arg items[2] = {N(du), N(dv)};
        dr = du && dv ? HOP_EMIT(g, cat, hop_arg_list(items, 2), I(-1)) : NULL;
    }
    hop_node *blocks[2] = {dq, dr};
    hop_node *t = dq && dr ? pack_rows(g, n, blocks, 2) : NULL;
    return t ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, t, meta(n)->dtype)) : hop_error_code();
}

/* cholesky's forward mode: dL = L Phi(L^-1 dA L^-T) (dA as given, as
 * PyTorch's; the vjp above is this map's transpose). */
static hop_status
jvp_cholesky(hop_jvp_ctx *cx, const hop_node *n, hop_node *ta)
{
    hop_graph *g = hop_jvp_out(cx);
    hop_node *l = hop_jvp_primal(cx, n);
    const hop_expr *nn = meta(n)->sizes[meta(n)->rank - 1];
    hop_node *left = solve(g, l, ta); /* L^-1 dA */
    hop_node *inner = mT(g, solve(g, l, mT(g, left)));
    hop_node *t = mm(g, l, phi(g, inner, nn));
    return t ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, t, meta(n)->dtype)) : hop_error_code();
}

/* The reverse-mode rules of one differentiable operand, operand 0: the
 * dispatcher checks that a gradient is wanted for it and gives the rule the
 * graph being built (solve, of two, checks each operand itself). */
typedef hop_status (*vjp_rule)(hop_vjp_ctx *cx, const hop_node *n, hop_graph *g);

/* The rule of n's op among those that take complex inputs, or NULL. */
static vjp_rule
complex_rule(hop_op op)
{
    switch (op) {
    case HOP_OP_fft:
    case HOP_OP_rfft:
    case HOP_OP_irfft:
        return vjp_fft;
    case HOP_OP_linalg_inv:
        return vjp_inv;
    case HOP_OP_linalg_det:
    case HOP_OP_linalg_slogdet:
        return vjp_det;
    case HOP_OP_linalg_eig:
        return vjp_eig;
    default:
        return NULL;
    }
}

/* The rule of n's op among those for real inputs only, or NULL. */
static vjp_rule
real_rule(hop_op op)
{
    switch (op) {
    case HOP_OP_linalg_cholesky:
        return vjp_cholesky;
    case HOP_OP_linalg_eigh:
    case HOP_OP_linalg_eigvalsh:
        return vjp_eigh;
    case HOP_OP_linalg_svd:
    case HOP_OP_linalg_svdvals:
        return vjp_svd;
    case HOP_OP_linalg_qr:
        return vjp_qr;
    default:
        return NULL;
    }
}

hop_status
hop__vjp_linalg(hop_vjp_ctx *cx, const hop_node *n)
{
    if (n->op == HOP_OP_linalg_solve)
        return vjp_solve(cx, n);
    const hop_arg *a = &n->args[0];
    bool cplx = a->kind == HOP_ARG_NODE && hop_dtype_is_complex(meta(a->u.node)->dtype);
    vjp_rule rule = complex_rule(n->op);
    if (rule == NULL && cplx)
        return refuse(n, "the gradient for complex inputs");
    if (rule == NULL && (rule = real_rule(n->op)) == NULL)
        return refuse(n, "this gradient");
    if (!wants(cx, n, 0))
        return HOP_OK;
    return rule(cx, n, hop_vjp_out(cx));
}

/* Forward mode of solve, inv, det, slogdet; the decompositions refuse. */
hop_status
hop__jvp_linalg(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_jvp_out(cx);
    const hop_arg *a0 = &n->args[0];
    hop_node *ta = hop__ad_is_float_node(a0) ? hop_jvp_tangent(cx, a0->u.node) : NULL;
    hop_node *a = hop_jvp_primal(cx, a0->u.node), *y = hop_jvp_primal(cx, n), *t = NULL;
    switch (n->op) {
    case HOP_OP_linalg_solve: {
        const hop_arg *a1 = &n->args[1];
        hop_node *tb = hop__ad_is_float_node(a1) ? hop_jvp_tangent(cx, a1->u.node) : NULL;
        if (ta == NULL && tb == NULL)
            return HOP_OK;
        hop_node *rhs = tb;
        if (ta != NULL)
            rhs = rhs ? op2(g, HOP_OP_sub, rhs, mm(g, ta, y)) : neg(g, mm(g, ta, y));
        t = solve(g, a, rhs);
        break;
    }
    case HOP_OP_linalg_inv:
        if (ta == NULL)
            return HOP_OK;
        t = neg(g, mm(g, mm(g, y, ta), y));
        break;
    case HOP_OP_linalg_det:
    case HOP_OP_linalg_slogdet: {
        if (ta == NULL)
            return HOP_OK;
        /* tr(solve(A, dA)): the diagonal's sum */
        hop_node *sx = solve(g, a, ta);
        const hop_expr *nn = meta(n->args[0].u.node)->sizes[meta(n->args[0].u.node)->rank - 1];
        hop_node *eye = index_mask(g, nn, HOP_OP_eq);
        hop_node *dg = eye && sx ? HOP_EMIT(g, where, N(eye), N(sx), F(0.0)) : NULL;
        hop_arg dims[2] = {I(-2), I(-1)};
        hop_node *tr =
            dg ? HOP_EMIT(g, sum, N(dg), hop_arg_list(dims, 2), hop_arg_bool(false)) : NULL;
        if (n->op == HOP_OP_linalg_det) {
            t = op2(g, HOP_OP_mul, y, tr);
        } else {
            hop_node *re = tr ? hop__ad_op1(g, HOP_OP_real, tr) : NULL;
            re = re ? hop__ad_to(g, re, meta(n)->dtype) : NULL;
            hop_node *z = re ? hop__ad_op2c(g, HOP_OP_mul, re, 0.0) : NULL;
            hop_arg items[2] = {N(z), N(re)};
            t = z ? HOP_EMIT(g, stack, hop_arg_list(items, 2), I(-1)) : NULL;
        }
        break;
    }
    case HOP_OP_linalg_eig:
        return ta ? jvp_eig(cx, n, ta) : HOP_OK;
    case HOP_OP_linalg_eigh:
    case HOP_OP_linalg_eigvalsh:
    case HOP_OP_linalg_svd:
    case HOP_OP_linalg_svdvals:
    case HOP_OP_linalg_qr:
    case HOP_OP_linalg_cholesky:
        if (hop_dtype_is_complex(meta(n->args[0].u.node)->dtype))
            return refuse(n, "forward-mode differentiation (jvp) for complex inputs");
        if (ta == NULL)
            return HOP_OK;
        if (n->op == HOP_OP_linalg_svd || n->op == HOP_OP_linalg_svdvals)
            return jvp_svd(cx, n, ta);
        if (n->op == HOP_OP_linalg_qr)
            return jvp_qr(cx, n, ta);
        if (n->op == HOP_OP_linalg_cholesky)
            return jvp_cholesky(cx, n, ta);
        return jvp_eigh(cx, n, ta);
    default:
        return refuse(n, "forward-mode differentiation (jvp)");
    }
    return t ? hop_jvp_set_tangent(cx, n, 0, hop__ad_to(g, t, meta(n)->dtype)) : hop_error_code();
}
