/*
 * ops/infer_linalg.c - shape rules of the linear-algebra ops (LAPACK, in
 * runtime/linalg.c) and of the FFTs (FFTW, in runtime/fft.c).
 *
 * Every linalg op works on the last two dims and batches over the others
 * (they broadcast for solve), in f32, f64, c64 or c128 (hop.numpy converts
 * integers first, as NumPy does).  Decompositions with several results give
 * one packed tensor of the input's dtype that the caller views apart:
 *   slogdet  [..., 2]: (sign, log|det|); complex: log|det| has imag 0
 *   qr       [..., m + q, max(q, n)]: Q = [:m, :q], R = [m:, :n], with
 *            q = min(m, n), or m when complete
 *   svd      [..., m + 1 + v, max(u, n)]: U = [:m, :u], S = [m, :k],
 *            Vh = [m + 1:, :n], k = min(m, n), u = v = k, or u = m and v = n
 *            when full; S is real (its imag 0 for complex inputs)
 *   eigh     [..., n + 1, n]: w = [0, :], V = [1:, :]; w real (imag 0)
 *   eig      the same (or [..., n]: w alone), always complex (f32 gives c64)
 *   lstsq    [..., n + 2, max(k, min(m, n) + 1)] for a [..., m, n], b [..., m, k]:
 *            x = [:n, :k], the residuals = [n, :k] (zeros unless rank == n < m),
 *            s = [n + 1, :min(m, n)], rank = [n + 1, min(m, n)]; all real parts
 *            (imag 0) but x's
 * Messages:
 *   HOP_SHAPE "linalg_inv: needs square matrices in the last two dims, got f32[3, 4]"
 *             "linalg_solve: cannot solve with f32[3, 3] for f32[4, 2]"
 *   HOP_DTYPE "linalg_det: needs f32, f64, c64 or c128, got i64[3, 3]"
 *             "rfft: needs a real float input, got c64[8]"
 */
#include "ops/infer.h"

#include <stdio.h>

static hop_status
linalg_dtype(hop__infer *c, const hop_meta *m)
{
    if (m->dtype == HOP_F32 || m->dtype == HOP_F64 || hop_dtype_is_complex(m->dtype))
        return HOP_OK;
    hop__text t;
    return hop_error(HOP_DTYPE, "%s: needs f32, f64, c64 or c128, got %s", c->name,
                     hop__meta_text(&t, m));
}

/* A stack of matrices: rank >= 2, the right dtype, square when asked. */
static hop_status
matrices(hop__infer *c, size_t i, bool square, const hop_meta **out)
{
    hop_status st = hop__arg_tensor(c, i, out);
    if (st != HOP_OK || (st = linalg_dtype(c, *out)) != HOP_OK)
        return st;
    const hop_meta *m = *out;
    hop__text t;
    if (m->rank < 2)
        return hop_error(HOP_SHAPE, "%s: needs at least 2 dims, got %s", c->name,
                         hop__meta_text(&t, m));
    if (square) {
        bool eq;
        if ((st = hop__decide_eq(c, m->sizes[m->rank - 2], m->sizes[m->rank - 1], &eq)) != HOP_OK)
            return st;
        if (!eq)
            return hop_error(HOP_SHAPE, "%s: needs square matrices in the last two dims, got %s",
                             c->name, hop__meta_text(&t, m));
    }
    return HOP_OK;
}

static const hop_expr *
sym_max(hop__infer *c, const hop_expr *a, const hop_expr *b)
{
    const hop_expr *e = a && b ? hop_sym_max(c->env, a, b) : NULL;
    if (e == NULL)
        hop__sym_failed(c);
    return e;
}

static const hop_expr *
sym_min(hop__infer *c, const hop_expr *a, const hop_expr *b)
{
    const hop_expr *e = a && b ? hop_sym_min(c->env, a, b) : NULL;
    if (e == NULL)
        hop__sym_failed(c);
    return e;
}

static const hop_expr *
sym_add(hop__infer *c, const hop_expr *a, int64_t k, const hop_expr *b)
{
    const hop_expr *e = a ? hop_sym_add_int(c->env, a, k) : NULL;
    if (e != NULL && b != NULL)
        e = hop_sym_add(c->env, e, b);
    if (e == NULL)
        hop__sym_failed(c);
    return e;
}

/* The batch dims of x followed by the given trailing sizes. */
static hop_status
set_batched(hop__infer *c, const hop_meta *x, hop_dtype dtype, int keep,
            const hop_expr *const *tail, int ntail)
{
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < keep; d++)
        sizes[rank++] = x->sizes[d];
    for (int d = 0; d < ntail; d++) {
        if (tail[d] == NULL)
            return hop_error_code();
        if (rank == HOP_MAX_RANK)
            return hop_error(HOP_SHAPE, "%s: the result would have more than %d dims", c->name,
                             HOP_MAX_RANK);
        sizes[rank++] = tail[d];
    }
    return hop__set_tensor(c, dtype, rank, sizes);
}

/* a's and b's common part for solve and lstsq: one dtype, a's dim
 * `adim` (from the end) b's rows, else `mismatch` (a format taking both
 * texts) as HOP_SHAPE; the broadcast batch dims into sizes[*rank]. */
static hop_status
paired(hop__infer *c, const hop_meta *a, const hop_meta *b, int adim, const char *mismatch,
       const hop_expr **sizes, int *rank)
{
    hop__text ta, tb;
    if (a->dtype != b->dtype)
        return hop_error(HOP_DTYPE, "%s: dtypes differ, got %s and %s", c->name,
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b));
    bool eq, bad;
    hop_status st = hop__decide_eq(c, a->sizes[a->rank - adim], b->sizes[b->rank - 2], &eq);
    if (st != HOP_OK)
        return st;
    if (!eq)
        return hop_error(HOP_SHAPE, mismatch, c->name, hop__meta_text(&ta, a),
                         hop__meta_text(&tb, b));
    if ((st = hop__broadcast_sizes(c, a->sizes, a->rank - 2, b->sizes, b->rank - 2, sizes, rank,
                                   &bad)) != HOP_OK)
        return st;
    if (bad)
        return hop_error(HOP_SHAPE, "%s: cannot broadcast the batch dims of %s and %s", c->name,
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b));
    return HOP_OK;
}

static hop_status
infer_solve(hop__infer *c)
{
    const hop_meta *a, *b;
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank;
    hop_status st;
    if ((st = matrices(c, 0, true, &a)) != HOP_OK || (st = matrices(c, 1, false, &b)) != HOP_OK ||
        (st = paired(c, a, b, 1, "%s: cannot solve with %s for %s", sizes, &rank)) != HOP_OK)
        return st;
    sizes[rank++] = b->sizes[b->rank - 2];
    sizes[rank++] = b->sizes[b->rank - 1];
    return hop__set_tensor(c, a->dtype, rank, sizes);
}

/* lstsq(a, b, rcond): b's rows a's, batch dims broadcast as solve's. */
static hop_status
infer_lstsq(hop__infer *c)
{
    const hop_meta *a, *b;
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank;
    hop_status st;
    if ((st = matrices(c, 0, false, &a)) != HOP_OK || (st = matrices(c, 1, false, &b)) != HOP_OK)
        return st;
    if (c->args[2].kind != HOP_OPND_FLOAT)
        return hop__kind_error(c, 2, "a float");
    if ((st = paired(c, a, b, 2, "%s: the rows of %s and %s differ", sizes, &rank)) != HOP_OK)
        return st;
    const hop_expr *m = a->sizes[a->rank - 2], *n = a->sizes[a->rank - 1];
    const hop_expr *k = sym_min(c, m, n), *rows = sym_add(c, n, 2, NULL);
    const hop_expr *cols = sym_max(c, b->sizes[b->rank - 1], sym_add(c, k, 1, NULL));
    if (rows == NULL || cols == NULL)
        return hop_error_code();
    if (rank + 2 > HOP_MAX_RANK)
        return hop_error(HOP_SHAPE, "%s: the result would have more than %d dims", c->name,
                         HOP_MAX_RANK);
    sizes[rank++] = rows;
    sizes[rank++] = cols;
    return hop__set_tensor(c, a->dtype, rank, sizes);
}

hop_status
hop__infer_linalg(hop__infer *c)
{
    if (c->op == HOP_OP_linalg_solve)
        return infer_solve(c);
    if (c->op == HOP_OP_linalg_lstsq)
        return infer_lstsq(c);
    bool square = c->op != HOP_OP_linalg_qr && c->op != HOP_OP_linalg_qr_raw &&
                  c->op != HOP_OP_linalg_svd && c->op != HOP_OP_linalg_svdvals;
    const hop_meta *x;
    hop_status st = matrices(c, 0, square, &x);
    if (st != HOP_OK)
        return st;
    bool flag = false;
    if (c->op == HOP_OP_linalg_qr || c->op == HOP_OP_linalg_svd || c->op == HOP_OP_linalg_eigh ||
        c->op == HOP_OP_linalg_eigvalsh || c->op == HOP_OP_linalg_eig) {
        if ((st = hop__arg_bool(c, 1, &flag)) != HOP_OK)
            return st;
    }
    int keep = x->rank - 2;
    const hop_expr *m = x->sizes[keep], *n = x->sizes[keep + 1];
    hop_dtype dt = x->dtype, real = hop_dtype_real(x->dtype);
    switch (c->op) {
    case HOP_OP_linalg_inv:
    case HOP_OP_linalg_cholesky:
        return set_batched(c, x, dt, keep, (const hop_expr *[]){m, n}, 2);
    case HOP_OP_linalg_det:
        return set_batched(c, x, dt, keep, NULL, 0);
    case HOP_OP_linalg_slogdet: {
        const hop_expr *two = hop__const(c, 2);
        return two ? set_batched(c, x, dt, keep, &two, 1) : hop_error_code();
    }
    case HOP_OP_linalg_qr: {
        const hop_expr *q = flag ? m : sym_min(c, m, n);
        const hop_expr *rows = sym_add(c, m, 0, q), *cols = sym_max(c, q, n);
        return set_batched(c, x, dt, keep, (const hop_expr *[]){rows, cols}, 2);
    }
    case HOP_OP_linalg_qr_raw: {
        /* (tau's min(m, n) entries fit in a row of m) */
        const hop_expr *rows = sym_add(c, n, 1, NULL);
        return set_batched(c, x, dt, keep, (const hop_expr *[]){rows, m}, 2);
    }
    case HOP_OP_linalg_svd: {
        const hop_expr *k = sym_min(c, m, n);
        const hop_expr *u = flag ? m : k, *v = flag ? n : k;
        const hop_expr *rows = sym_add(c, m, 1, v), *cols = sym_max(c, u, n);
        return set_batched(c, x, dt, keep, (const hop_expr *[]){rows, cols}, 2);
    }
    case HOP_OP_linalg_svdvals: {
        const hop_expr *k = sym_min(c, m, n);
        return set_batched(c, x, real, keep, &k, 1);
    }
    case HOP_OP_linalg_eigh: {
        const hop_expr *rows = sym_add(c, n, 1, NULL);
        return set_batched(c, x, dt, keep, (const hop_expr *[]){rows, n}, 2);
    }
    case HOP_OP_linalg_eigvalsh:
        return set_batched(c, x, real, keep, &n, 1);
    case HOP_OP_linalg_eig: {
        hop_dtype cdt = hop_dtype_complex(dt);
        if (!flag)
            return set_batched(c, x, cdt, keep, &n, 1);
        const hop_expr *rows = sym_add(c, n, 1, NULL);
        return set_batched(c, x, cdt, keep, (const hop_expr *[]){rows, n}, 2);
    }
    default:
        return hop_error(HOP_INVALID, "%s: not a linalg op", c->name);
    }
}

/*
 * fft(x, dim, inverse, norm): complex to complex along dim; rfft(x, dim,
 * norm): real to complex, dim's size n becoming n // 2 + 1; irfft(x, dim, n,
 * norm): complex to real, dim's size becoming n (its first n // 2 + 1
 * elements are read; it needs at least that many).  norm: 0 scales by 1,
 * 1 by 1 / sqrt(n), 2 by 1 / n, for n the transform's length.
 */
hop_status
hop__infer_fft(hop__infer *c)
{
    const hop_meta *x;
    int64_t dim64, norm;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = hop__arg_int(c, 1, &dim64)) != HOP_OK ||
        (st = hop__arg_int(c, c->op == HOP_OP_rfft ? 2 : 3, &norm)) != HOP_OK)
        return st;
    int dim;
    if ((st = hop__wrap_dim(c, dim64, x->rank, x, &dim)) != HOP_OK)
        return st;
    if (norm < 0 || norm > 2)
        return hop_error(HOP_INVALID, "%s: norm must be 0, 1 or 2, got %lld", c->name,
                         (long long)norm);
    hop__text t;
    bool want_complex = c->op != HOP_OP_rfft;
    if (want_complex ? !hop_dtype_is_complex(x->dtype) : x->dtype != HOP_F32 && x->dtype != HOP_F64)
        return hop_error(HOP_DTYPE, "%s: needs a %s input, got %s", c->name,
                         want_complex ? "complex" : "real float (f32 or f64)",
                         hop__meta_text(&t, x));
    const hop_expr *sizes[HOP_MAX_RANK];
    memcpy(sizes, x->sizes, sizeof sizes[0] * (size_t)x->rank);
    hop_dtype dt = x->dtype;
    bool positive;
    if (c->op == HOP_OP_rfft) {
        const hop_expr *half = hop_sym_floordiv(c->env, x->sizes[dim], hop_sym_const(c->env, 2));
        if (half == NULL || (sizes[dim] = hop_sym_add_int(c->env, half, 1)) == NULL)
            return hop__sym_failed(c);
        dt = hop_dtype_complex(dt);
        if ((st = hop__decide(c, hop_sym_ge(c->env, x->sizes[dim], hop_sym_const(c->env, 1)),
                              &positive)) != HOP_OK)
            return st;
    } else if (c->op == HOP_OP_irfft) {
        const hop_expr *n;
        if ((st = hop__operand_symint(c, &c->args[2], "n", &n)) != HOP_OK)
            return st;
        const hop_expr *half =
            hop_sym_add_int(c->env, hop_sym_floordiv(c->env, n, hop_sym_const(c->env, 2)), 1);
        bool enough;
        if (half == NULL)
            return hop__sym_failed(c);
        if ((st = hop__decide(c, hop_sym_ge(c->env, n, hop_sym_const(c->env, 1)), &positive)) !=
            HOP_OK)
            return st;
        if (positive &&
            (st = hop__decide(c, hop_sym_ge(c->env, x->sizes[dim], half), &enough)) != HOP_OK)
            return st;
        if (positive && !enough)
            return hop_error(HOP_SHAPE,
                             "irfft: an output of %s elements needs %s input elements "
                             "along dim %d, got %s",
                             hop__expr_text(&t, n), "n // 2 + 1", dim, hop__meta_text(&t, x));
        sizes[dim] = n;
        dt = hop_dtype_real(dt);
    } else {
        if ((st = hop__decide(c, hop_sym_ge(c->env, x->sizes[dim], hop_sym_const(c->env, 1)),
                              &positive)) != HOP_OK)
            return st;
    }
    if (!positive)
        return hop_error(HOP_SHAPE,
                         "%s: the transform needs at least 1 element along dim %d, "
                         "got %s",
                         c->name, dim, hop__meta_text(&t, x));
    return hop__set_tensor(c, dt, x->rank, sizes);
}
