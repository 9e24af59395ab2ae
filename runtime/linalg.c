/*
 * runtime/linalg.c - the linear-algebra ops (ops/infer_linalg.c) on LAPACK:
 * the copy of OpenBLAS hop links (runtime/CMakeLists.txt) ships LAPACK, and
 * lapack.h (Debian's liblapacke-dev) declares its Fortran routines.
 *
 * Each matrix of the batch is copied into a column-major work buffer (LAPACK
 * is column-major and overwrites its input; the copy also takes any strides
 * and broadcast batch dims), the routine runs, and the results are copied
 * into the contiguous row-major output.  The copies are O(n^2) beside the
 * routines' O(n^3).  Workspace sizes are asked of LAPACK once per call
 * (lwork = -1) and taken from one scratch block.  The routines NumPy's
 * umath_linalg calls: gesv (solve, inv: a solve against the identity),
 * getrf (det, slogdet), potrf (cholesky, the lower triangle), geqrf with
 * orgqr/ungqr (qr; geqrf alone for qr_raw), gesdd (svd), syevd/heevd (eigh; the lower triangle
 * unless `upper`), geev (eig: right eigenvectors only), gelsd (lstsq).  Errors are NumPy's
 * LinAlgError messages as HOP_LINALG: "Singular matrix", "Matrix is not positive definite", "SVD
 * did not converge", "Eigenvalues did not converge".
 */
#include "runtime/runtime.h"

#include <lapack.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#undef complex
#undef I

typedef float _Complex c64;
typedef double _Complex c128;

/* ------------------------------------------------------------- batches */

/* Offsets (in elements) of batch matrix bi of x, its leading dims
 * broadcast against the output's `nb` batch dims of sizes bsizes. */
static int64_t
batch_offset(const hop_tensor *x, int nb, const int64_t *bsizes, int64_t bi)
{
    int xb = x->rank - 2;
    int64_t o = 0;
    for (int j = nb - 1; j >= 0; j--) {
        int64_t i = bi % bsizes[j];
        bi /= bsizes[j];
        int d = j - (nb - xb);
        if (d >= 0 && x->sizes[d] != 1)
            o += i * x->strides[d];
    }
    return o;
}

/* rows x cols elements of es bytes from src (element strides srs, scs) to
 * dst (drs, dcs), row by row.  One loop per element size: a memcpy of a
 * constant size is one load and one store, where a call per element (a
 * 262144 x 4 matrix has a million) cost more than the tall SVD's QR. */
static void
copy2d(char *dst, int64_t drs, int64_t dcs, const char *src, int64_t srs, int64_t scs,
       int64_t rows, int64_t cols, size_t es)
{
#define HOP_COPY2D(size)                                                                          \
    for (int64_t i = 0; i < rows; i++)                                                           \
        for (int64_t j = 0; j < cols; j++)                                                       \
            memcpy(dst + (size_t)(i * drs + j * dcs) * (size),                                   \
                   src + (size_t)(i * srs + j * scs) * (size), (size))
    switch (es) {
    case 4:
        HOP_COPY2D(4);
        break;
    case 8:
        HOP_COPY2D(8);
        break;
    case 16:
        HOP_COPY2D(16);
        break;
    default:
        HOP_COPY2D(es);
        break;
    }
#undef HOP_COPY2D
}

/* Matrix (rows x cols at p, strides rs, cs, dtype dt) into column-major
 * dst of leading dimension ld, in dtype dt. */
static void
load_cm(const char *p, hop_dtype dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs, void *dst,
        int64_t ld)
{
    copy2d(dst, 1, ld, p, rs, cs, rows, cols, hop_dtype_size(dt));
}

/* Column-major src (ld) rows x cols into row-major dst with row stride
 * drs (elements). */
static void
store_rm(const void *src, int64_t ld, hop_dtype dt, int64_t rows, int64_t cols, char *dst,
         int64_t drs)
{
    copy2d(dst, drs, 1, src, 1, ld, rows, cols, hop_dtype_size(dt));
}

/* A real vector (n doubles or floats as the real dtype of dt) into dst of
 * dtype dt (complex: imag 0) with stride 1. */
static void
store_real_vec(const void *src, hop_dtype dt, int64_t n, char *dst)
{
    hop_dtype rt = hop_dtype_real(dt);
    hop__convert(n, dst, dt, src, rt, 1);
}

static hop_status
linalg_error(const char *msg)
{
    return hop_error(HOP_LINALG, "%s", msg);
}

/* -------------------------------------------------------- the routines */

static lapack_int
gesv(hop_dtype dt, lapack_int n, lapack_int k, void *a, lapack_int *ipiv, void *b)
{
    lapack_int info = 0;
    switch (dt) {
    case HOP_F32:
        LAPACK_sgesv(&n, &k, a, &n, ipiv, b, &n, &info);
        break;
    case HOP_F64:
        LAPACK_dgesv(&n, &k, a, &n, ipiv, b, &n, &info);
        break;
    case HOP_C64:
        LAPACK_cgesv(&n, &k, a, &n, ipiv, b, &n, &info);
        break;
    default:
        LAPACK_zgesv(&n, &k, a, &n, ipiv, b, &n, &info);
        break;
    }
    return info;
}

static lapack_int
getrf(hop_dtype dt, lapack_int n, void *a, lapack_int *ipiv)
{
    lapack_int info = 0;
    switch (dt) {
    case HOP_F32:
        LAPACK_sgetrf(&n, &n, a, &n, ipiv, &info);
        break;
    case HOP_F64:
        LAPACK_dgetrf(&n, &n, a, &n, ipiv, &info);
        break;
    case HOP_C64:
        LAPACK_cgetrf(&n, &n, a, &n, ipiv, &info);
        break;
    default:
        LAPACK_zgetrf(&n, &n, a, &n, ipiv, &info);
        break;
    }
    return info;
}

static lapack_int
potrf(hop_dtype dt, lapack_int n, void *a)
{
    lapack_int info = 0;
    char uplo = 'L';
    switch (dt) {
    case HOP_F32:
        LAPACK_spotrf(&uplo, &n, a, &n, &info);
        break;
    case HOP_F64:
        LAPACK_dpotrf(&uplo, &n, a, &n, &info);
        break;
    case HOP_C64:
        LAPACK_cpotrf(&uplo, &n, a, &n, &info);
        break;
    default:
        LAPACK_zpotrf(&uplo, &n, a, &n, &info);
        break;
    }
    return info;
}

/* geqrf (q < 0: only the workspace query into *lwork) */
static lapack_int
geqrf(hop_dtype dt, lapack_int m, lapack_int n, void *a, lapack_int lda, void *tau, void *work,
      lapack_int lwork)
{
    lapack_int info = 0;
    switch (dt) {
    case HOP_F32:
        LAPACK_sgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info);
        break;
    case HOP_F64:
        LAPACK_dgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info);
        break;
    case HOP_C64:
        LAPACK_cgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info);
        break;
    default:
        LAPACK_zgeqrf(&m, &n, a, &lda, tau, work, &lwork, &info);
        break;
    }
    return info;
}

static lapack_int
orgqr(hop_dtype dt, lapack_int m, lapack_int q, lapack_int k, void *a, lapack_int lda, void *tau,
      void *work, lapack_int lwork)
{
    lapack_int info = 0;
    switch (dt) {
    case HOP_F32:
        LAPACK_sorgqr(&m, &q, &k, a, &lda, tau, work, &lwork, &info);
        break;
    case HOP_F64:
        LAPACK_dorgqr(&m, &q, &k, a, &lda, tau, work, &lwork, &info);
        break;
    case HOP_C64:
        LAPACK_cungqr(&m, &q, &k, a, &lda, tau, work, &lwork, &info);
        break;
    default:
        LAPACK_zungqr(&m, &q, &k, a, &lda, tau, work, &lwork, &info);
        break;
    }
    return info;
}

static lapack_int
gesdd(hop_dtype dt, char jobz, lapack_int m, lapack_int n, void *a, void *s, void *u,
      lapack_int ldu, void *vt, lapack_int ldvt, void *work, lapack_int lwork, void *rwork,
      lapack_int *iwork)
{
    lapack_int info = 0, lda = m > 1 ? m : 1;
    switch (dt) {
    case HOP_F32:
        LAPACK_sgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
        break;
    case HOP_F64:
        LAPACK_dgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
        break;
    case HOP_C64:
        LAPACK_cgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,
                      &info);
        break;
    default:
        LAPACK_zgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,
                      &info);
        break;
    }
    return info;
}

static lapack_int
syevd(hop_dtype dt, char jobz, char uplo, lapack_int n, void *a, void *w, void *work,
      lapack_int lwork, void *rwork, lapack_int lrwork, lapack_int *iwork, lapack_int liwork)
{
    lapack_int info = 0, lda = n > 1 ? n : 1;
    switch (dt) {
    case HOP_F32:
        LAPACK_ssyevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
        break;
    case HOP_F64:
        LAPACK_dsyevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info);
        break;
    case HOP_C64:
        LAPACK_cheevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
                      &info);
        break;
    default:
        LAPACK_zheevd(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
                      &info);
        break;
    }
    return info;
}

/* geev with right eigenvectors (jobvr 'V') or none: a real dt gives the
 * eigenvalues as wr, wi and a pair of conjugate vectors as two real columns;
 * a complex one gives w and the vectors (rwork: 2n reals). */
static lapack_int
geev(hop_dtype dt, char jobvr, lapack_int n, void *a, void *w, void *wi, void *vr, void *work,
     lapack_int lwork, void *rwork)
{
    lapack_int info = 0, lda = n > 1 ? n : 1, one = 1, ldvr = jobvr == 'V' ? lda : 1;
    char jobvl = 'N';
    switch (dt) {
    case HOP_F32:
        LAPACK_sgeev(&jobvl, &jobvr, &n, a, &lda, w, wi, NULL, &one, vr, &ldvr, work, &lwork,
                     &info);
        break;
    case HOP_F64:
        LAPACK_dgeev(&jobvl, &jobvr, &n, a, &lda, w, wi, NULL, &one, vr, &ldvr, work, &lwork,
                     &info);
        break;
    case HOP_C64:
        LAPACK_cgeev(&jobvl, &jobvr, &n, a, &lda, w, NULL, &one, vr, &ldvr, work, &lwork, rwork,
                     &info);
        break;
    default:
        LAPACK_zgeev(&jobvl, &jobvr, &n, a, &lda, w, NULL, &one, vr, &ldvr, work, &lwork, rwork,
                     &info);
        break;
    }
    return info;
}

/* gelsd: the minimum-norm least-squares solution through the SVD
 * (divide and conquer), as NumPy's lstsq calls it; rwork only complex. */
static lapack_int
gelsd(hop_dtype dt, lapack_int m, lapack_int n, lapack_int k, void *a, void *b, lapack_int ldb,
      void *s, double rcond, lapack_int *rank, void *work, lapack_int lwork, void *rwork,
      lapack_int *iwork)
{
    lapack_int info = 0, lda = m > 1 ? m : 1;
    float rcf = (float)rcond;
    switch (dt) {
    case HOP_F32:
        LAPACK_sgelsd(&m, &n, &k, a, &lda, b, &ldb, s, &rcf, rank, work, &lwork, iwork, &info);
        break;
    case HOP_F64:
        LAPACK_dgelsd(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, &info);
        break;
    case HOP_C64:
        LAPACK_cgelsd(&m, &n, &k, a, &lda, b, &ldb, s, &rcf, rank, work, &lwork, rwork, iwork,
                      &info);
        break;
    default:
        LAPACK_zgelsd(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork,
                      &info);
        break;
    }
    return info;
}

/* A workspace size LAPACK wrote into a work array's first element. */
static lapack_int
work_size(hop_dtype dt, const void *w)
{
    double v = dt == HOP_F32 || dt == HOP_C64 ? (double)*(const float *)w : *(const double *)w;
    return v < 1 ? 1 : (lapack_int)v;
}

/* ------------------------------------------------------------- the ops */

typedef struct lcall {
    const hop__call *c;
    const hop__imem *mem;
    hop_dtype dt;
    size_t es;
    int nb; /* the output's batch dims */
    int64_t bsizes[HOP_MAX_RANK], batch;
} lcall;

static void *
scratch(const lcall *l, size_t n)
{
    n = n < 16 ? 16 : n;
    return l->mem ? l->mem->scratch(l->mem->ud, n) : hop_malloc(n);
}

static void
scratch_done(const lcall *l, void *p)
{
    if (l->mem == NULL)
        hop_free(p);
}

/* The matrix of x at batch bi in column-major dst (ld = its rows). */
static void
load(const lcall *l, const hop_tensor *x, int64_t bi, void *dst)
{
    int r = x->rank;
    int64_t off = batch_offset(x, l->nb, l->bsizes, bi);
    load_cm((const char *)x->data + off * (int64_t)l->es, l->dt, x->sizes[r - 2], x->sizes[r - 1],
            x->strides[r - 2], x->strides[r - 1], dst, x->sizes[r - 2]);
}

static size_t
align16(size_t n)
{
    return (n + 15) / 16 * 16;
}

static hop_status
run_solve_inv(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    bool inv = l->c->op == HOP_OP_linalg_inv;
    const hop_tensor *b = inv ? NULL : l->c->args[1].u.tensor;
    int64_t n = a->sizes[a->rank - 1], k = inv ? n : b->sizes[b->rank - 1];
    if (n > INT_MAX || k > INT_MAX || n * n > INT_MAX || n * k > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: matrices this large are not supported",
                         l->c->info->name);
    size_t sa = align16((size_t)(n * n) * l->es), sb = align16((size_t)(n * k) * l->es);
    char *w = scratch(l, sa + sb + (size_t)n * sizeof(lapack_int));
    if (w == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK; bi++) {
        load(l, a, bi, w);
        if (inv) {
            memset(w + sa, 0, (size_t)(n * n) * l->es);
            for (int64_t i = 0; i < n; i++)
                hop__convert(1, w + sa + (size_t)(i + i * n) * l->es, l->dt, &(double){1.0},
                             HOP_F64, 1);
        } else {
            load(l, b, bi, w + sa);
        }
        if (n > 0 &&
            gesv(l->dt, (lapack_int)n, (lapack_int)k, w, (lapack_int *)(w + sa + sb), w + sa) > 0)
            st = linalg_error("Singular matrix");
        else
            store_rm(w + sa, n, l->dt, n, k, (char *)out->data + bi * n * k * (int64_t)l->es, k);
    }
    scratch_done(l, w);
    return st;
}

/* det and slogdet from the LU factors as NumPy's umath_linalg: the sign
 * of the row permutation times each diagonal element's sign (d / |d|, |d|
 * hypot's), the log of each |d| summed in order, and det = sign *
 * exp(logdet) (det_from_slogdet: not the product of the diagonal, which
 * rounds otherwise); a zero pivot gives sign 0 and log -inf, so det 0. */
static hop_status
run_det(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    int64_t n = a->sizes[a->rank - 1];
    bool slog = l->c->op == HOP_OP_linalg_slogdet;
    if (n > INT_MAX || n * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: matrices this large are not supported",
                         l->c->info->name);
    size_t sa = align16((size_t)(n * n) * l->es);
    char *w = scratch(l, sa + (size_t)n * sizeof(lapack_int));
    if (w == NULL)
        return hop_error_code();
    lapack_int *ipiv = (lapack_int *)(w + sa);
    bool cplx = hop_dtype_is_complex(l->dt);
    for (int64_t bi = 0; bi < l->batch; bi++) {
        load(l, a, bi, w);
        if (n > 0)
            getrf(l->dt, (lapack_int)n, w, ipiv);
        double sr = 1, si = 0, logabs = 0; /* sign (a unit complex) and log|det| */
        for (int64_t i = 0; i < n; i++) {
            double dr, di = 0;
            if (l->dt == HOP_F32 || l->dt == HOP_C64) {
                dr = ((const float *)w)[(i + i * n) * (cplx ? 2 : 1)];
                if (cplx)
                    di = ((const float *)w)[(i + i * n) * 2 + 1];
            } else {
                dr = ((const double *)w)[(i + i * n) * (cplx ? 2 : 1)];
                if (cplx)
                    di = ((const double *)w)[(i + i * n) * 2 + 1];
            }
            if (ipiv[i] != i + 1) {
                sr = -sr;
                si = -si;
            }
            double m = hypot(dr, di);
            if (m == 0) {
                sr = si = 0;
                logabs = -INFINITY;
            } else if (logabs != -INFINITY) {
                double ur = dr / m, ui = di / m, tr = sr * ur - si * ui, ti = sr * ui + si * ur;
                sr = tr;
                si = ti;
                logabs += log(m);
            }
        }
        char *o = (char *)out->data + bi * (slog ? 2 : 1) * (int64_t)l->es;
        double e = exp(logabs); /* (NumPy's complex product by e + 0j) */
        double v[4] = {slog ? sr : sr * e - si * 0.0, slog ? si : sr * 0.0 + si * e, logabs, 0};
        if (cplx) {
            hop__convert(slog ? 2 : 1, o, l->dt, v, HOP_C128, 1);
        } else {
            double rv[2] = {v[0], v[2]};
            hop__convert(slog ? 2 : 1, o, l->dt, rv, HOP_F64, 1);
        }
    }
    scratch_done(l, w);
    return HOP_OK;
}

static hop_status
run_cholesky(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    int64_t n = a->sizes[a->rank - 1];
    if (n > INT_MAX || n * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "linalg_cholesky: matrices this large are not supported");
    char *w = scratch(l, (size_t)(n * n) * l->es);
    if (w == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK; bi++) {
        load(l, a, bi, w);
        if (n > 0 && potrf(l->dt, (lapack_int)n, w) != 0) {
            st = linalg_error("Matrix is not positive definite");
            break;
        }
        for (int64_t j = 1; j < n; j++) /* the upper triangle: zeros */
            for (int64_t i = 0; i < j; i++)
                memset(w + (size_t)(i + j * n) * l->es, 0, l->es);
        store_rm(w, n, l->dt, n, n, (char *)out->data + bi * n * n * (int64_t)l->es, n);
    }
    scratch_done(l, w);
    return st;
}

static hop_status
run_qr(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    bool complete = l->c->args[1].u.b;
    int64_t m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1], k = m < n ? m : n;
    int64_t q = complete ? m : k, cols = q > n ? q : n, wcols = n > q ? n : q;
    if (m > INT_MAX || n > INT_MAX || m * wcols > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "linalg_qr: matrices this large are not supported");
    /* a: m x max(n, q) (the factors, then Q), tau, work */
    lapack_int lwork = -1;
    _Alignas(16) double query[4] = {0};
    lapack_int lw1 = 1, lw2 = 1;
    if (m > 0 && n > 0) {
        geqrf(l->dt, (lapack_int)m, (lapack_int)n, NULL, (lapack_int)m, NULL, query, lwork);
        lw1 = work_size(l->dt, query);
        orgqr(l->dt, (lapack_int)m, (lapack_int)q, (lapack_int)k, NULL, (lapack_int)m, NULL, query,
              lwork);
        lw2 = work_size(l->dt, query);
    }
    lapack_int lw = lw1 > lw2 ? lw1 : lw2;
    size_t sa = align16((size_t)(m * wcols) * l->es), st_ = align16((size_t)(k + 1) * l->es);
    char *w = scratch(l, sa + st_ + (size_t)lw * l->es);
    if (w == NULL)
        return hop_error_code();
    char *tau = w + sa, *work = tau + st_;
    int64_t orows = m + q;
    for (int64_t bi = 0; bi < l->batch; bi++) {
        char *o = (char *)out->data + bi * orows * cols * (int64_t)l->es;
        memset(o, 0, (size_t)(orows * cols) * l->es);
        if (m == 0 || n == 0) {
            /* no reflectors: Q is the identity (complete mode's m x m of an m x 0 matrix) */
            for (int64_t i = 0; i < q && i < m; i++)
                hop__convert(1, o + (size_t)(i * cols + i) * l->es, l->dt, &(double){1.0}, HOP_F64,
                             1);
            continue;
        }
        load(l, a, bi, w);
        geqrf(l->dt, (lapack_int)m, (lapack_int)n, w, (lapack_int)m, tau, work, lw);
        /* R: the upper triangle of the first q rows */
        for (int64_t i = 0; i < q; i++)
            for (int64_t j = i; j < n; j++)
                memcpy(o + (size_t)((m + i) * cols + j) * l->es, w + (size_t)(i + j * m) * l->es,
                       l->es);
        orgqr(l->dt, (lapack_int)m, (lapack_int)q, (lapack_int)k, w, (lapack_int)m, tau, work, lw);
        store_rm(w, m, l->dt, m, q, o, cols);
    }
    scratch_done(l, w);
    return HOP_OK;
}

/* NumPy's qr(mode='raw'): geqrf's factored matrix (column-major m x n:
 * the output's first n rows of m) and tau (row n), with NumPy 1.24's
 * workspace (umath_linalg's init_geqrf: max(1, n, the query)), so that the
 * blocked or unblocked code is the one NumPy's LAPACK runs. */
static hop_status
run_qr_raw(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    int64_t m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1], k = m < n ? m : n;
    if (m > INT_MAX || n > INT_MAX || m * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "linalg_qr_raw: matrices this large are not supported");
    _Alignas(16) double query[4] = {0};
    lapack_int lw = 1;
    if (m > 0 && n > 0) {
        geqrf(l->dt, (lapack_int)m, (lapack_int)n, NULL, (lapack_int)m, NULL, query, -1);
        lw = work_size(l->dt, query);
        lw = lw > (lapack_int)n ? lw : (lapack_int)n;
    }
    size_t sa = align16((size_t)(m * n) * l->es), st_ = align16((size_t)(k + 1) * l->es);
    char *w = scratch(l, sa + st_ + (size_t)lw * l->es);
    if (w == NULL)
        return hop_error_code();
    char *tau = w + sa, *work = tau + st_;
    int64_t osize = (n + 1) * m;
    for (int64_t bi = 0; bi < l->batch; bi++) {
        char *o = (char *)out->data + bi * osize * (int64_t)l->es;
        memset(o, 0, (size_t)osize * l->es);
        if (m == 0 || n == 0)
            continue; /* no reflectors */
        load(l, a, bi, w);
        geqrf(l->dt, (lapack_int)m, (lapack_int)n, w, (lapack_int)m, tau, work, lw);
        memcpy(o, w, (size_t)(m * n) * l->es);
        memcpy(o + (size_t)(m * n) * l->es, tau, (size_t)k * l->es);
    }
    scratch_done(l, w);
    return HOP_OK;
}

static hop_status
run_svd(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    bool vals = l->c->op == HOP_OP_linalg_svdvals, full = !vals && l->c->args[1].u.b;
    int64_t m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1], k = m < n ? m : n;
    int64_t u = full ? m : k, v = full ? n : k, cols = u > n ? u : n, rows = m + 1 + v;
    /* the factors' own sizes: a tall matrix's reduced U is m x k, not m x m */
    if (m > INT_MAX || n > INT_MAX || m * n > INT_MAX || m * u > INT_MAX || v * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: matrices this large are not supported",
                         l->c->info->name);
    char jobz = vals ? 'N' : full ? 'A' : 'S';
    hop_dtype rt = hop_dtype_real(l->dt);
    size_t rs = hop_dtype_size(rt);
    bool cplx = hop_dtype_is_complex(l->dt);
    int64_t mx = m > n ? m : n, mn = k;
    /* rwork (complex): NumPy's size for gesdd */
    int64_t big = 5 * mn * mn + 5 * mn, big2 = 2 * mx * mn + 2 * mn * mn + mn;
    int64_t lrw = !cplx ? 1 : vals ? 7 * mn + 1 : (big > big2 ? big : big2) + 1;
    lapack_int ldu = (lapack_int)(m > 1 ? m : 1), ldvt = (lapack_int)(v > 1 ? v : 1);
    _Alignas(16) double query[4] = {0};
    lapack_int lw = 1;
    if (k > 0) {
        lapack_int iq[8];
        gesdd(l->dt, jobz, (lapack_int)m, (lapack_int)n, NULL, NULL, NULL, ldu, NULL, ldvt, query,
              -1, NULL, iq);
        lw = work_size(l->dt, query);
    }
    size_t sa = align16((size_t)(m * n) * l->es), ss = align16((size_t)k * rs);
    size_t su = vals ? 0 : align16((size_t)(m * u) * l->es);
    size_t sv = vals ? 0 : align16((size_t)(v * n) * l->es);
    size_t sw = align16((size_t)lw * l->es), srw = align16((size_t)lrw * rs);
    size_t si = align16((size_t)(8 * k + 8) * sizeof(lapack_int));
    char *w = scratch(l, sa + ss + su + sv + sw + srw + si);
    if (w == NULL)
        return hop_error_code();
    char *s = w + sa, *uu = s + ss, *vt = uu + su, *work = vt + sv, *rwork = work + sw,
         *iwork = rwork + srw;
    hop_status st = HOP_OK;
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK; bi++) {
        char *o = (char *)out->data + bi * (vals ? k : rows * cols) * (int64_t)(vals ? rs : l->es);
        if (!vals) {
            /* zero only what the factors leave: the columns right of U and
             * of V^T, and row m beyond s (a tall matrix's reduced factors
             * fill the rest; an empty product's identities are written
             * over zeros) */
            for (int64_t i = 0; i < rows; i++) {
                int64_t used = k == 0 ? 0 : i < m ? u : i == m ? k : n;
                if (used < cols)
                    memset(o + (size_t)(i * cols + used) * l->es, 0,
                           (size_t)(cols - used) * l->es);
            }
        }
        if (k == 0) {
            /* full matrices of an empty product: identities */
            for (int64_t i = 0; !vals && i < u && i < m; i++)
                hop__convert(1, o + (size_t)(i * cols + i) * l->es, l->dt, &(double){1.0}, HOP_F64,
                             1);
            for (int64_t i = 0; !vals && i < v; i++)
                hop__convert(1, o + (size_t)((m + 1 + i) * cols + i) * l->es, l->dt, &(double){1.0},
                             HOP_F64, 1);
            continue;
        }
        load(l, a, bi, w);
        if (gesdd(l->dt, jobz, (lapack_int)m, (lapack_int)n, w, s, vals ? NULL : uu, ldu,
                  vals ? NULL : vt, ldvt, work, lw, rwork, (lapack_int *)iwork) != 0) {
            st = linalg_error("SVD did not converge");
            break;
        }
        if (vals) {
            memcpy(o, s, (size_t)k * rs);
            continue;
        }
        store_rm(uu, m, l->dt, m, u, o, cols);
        store_real_vec(s, l->dt, k, o + (size_t)(m * cols) * l->es);
        store_rm(vt, v, l->dt, v, n, o + (size_t)((m + 1) * cols) * l->es, cols);
    }
    scratch_done(l, w);
    return st;
}

static hop_status
run_eigh(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    bool vals = l->c->op == HOP_OP_linalg_eigvalsh;
    char uplo = l->c->args[1].u.b ? 'U' : 'L', jobz = vals ? 'N' : 'V';
    int64_t n = a->sizes[a->rank - 1];
    if (n > INT_MAX || n * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: matrices this large are not supported",
                         l->c->info->name);
    hop_dtype rt = hop_dtype_real(l->dt);
    size_t rs = hop_dtype_size(rt);
    _Alignas(16) double q[4] = {0}, rq[4] = {0};
    lapack_int iq = 1, lw = 1, lrw = 1, liw = 1;
    if (n > 0) {
        syevd(l->dt, jobz, uplo, (lapack_int)n, NULL, NULL, q, -1, rq, -1, &iq, -1);
        lw = work_size(l->dt, q);
        lrw = work_size(rt, rq);
        liw = iq < 1 ? 1 : iq;
    }
    size_t sa = align16((size_t)(n * n) * l->es), sw_ = align16((size_t)n * rs);
    size_t swk = align16((size_t)lw * l->es), srw = align16((size_t)lrw * rs);
    char *w = scratch(l, sa + sw_ + swk + srw + (size_t)liw * sizeof(lapack_int));
    if (w == NULL)
        return hop_error_code();
    char *ev = w + sa, *work = ev + sw_, *rwork = work + swk, *iwork = rwork + srw;
    hop_status st = HOP_OK;
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK; bi++) {
        if (n == 0)
            continue;
        load(l, a, bi, w);
        if (syevd(l->dt, jobz, uplo, (lapack_int)n, w, ev, work, lw, rwork, lrw,
                  (lapack_int *)iwork, liw) != 0) {
            st = linalg_error("Eigenvalues did not converge");
            break;
        }
        if (vals) {
            memcpy((char *)out->data + bi * n * (int64_t)rs, ev, (size_t)n * rs);
            continue;
        }
        char *o = (char *)out->data + bi * (n + 1) * n * (int64_t)l->es;
        store_real_vec(ev, l->dt, n, o);
        store_rm(w, n, l->dt, n, n, o + (size_t)n * l->es, n);
    }
    scratch_done(l, w);
    return st;
}

/* Real geev's results as complex: w = wr + i wi, and for a conjugate pair
 * (wi[j] != 0) the vectors vr[:, j] + i vr[:, j + 1] and its conjugate, as
 * NumPy's umath_linalg makes them.  Output row-major at o as (re, im) pairs
 * (row stride n): w first, then the vectors unless vr is NULL. */
#define EIG_REAL_TO_COMPLEX(RT)                                                                    \
    static void eig_complex_##RT(const RT *wr, const RT *wi, const RT *vr, int64_t n, RT *o)       \
    {                                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                          \
            o[2 * j] = wr[j];                                                                      \
            o[2 * j + 1] = wi[j];                                                                  \
        }                                                                                          \
        if (vr == NULL)                                                                            \
            return;                                                                                \
        RT *v = o + 2 * n;                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                          \
            bool pair = wi[j] != 0 && j + 1 < n;                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                RT re = vr[i + j * n], im = pair ? vr[i + (j + 1) * n] : 0;                        \
                v[2 * (i * n + j)] = re;                                                           \
                v[2 * (i * n + j) + 1] = im;                                                       \
                if (pair) {                                                                        \
                    v[2 * (i * n + j + 1)] = re;                                                   \
                    v[2 * (i * n + j + 1) + 1] = -im;                                              \
                }                                                                                  \
            }                                                                                      \
            j += pair;                                                                             \
        }                                                                                          \
    }
EIG_REAL_TO_COMPLEX(float)
EIG_REAL_TO_COMPLEX(double)

/* Whether the n reals of dtype rt (f32 or f64) at p are all finite. */
static bool
all_finite(const void *p, hop_dtype rt, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (rt == HOP_F32 ? !isfinite(((const float *)p)[i]) : !isfinite(((const double *)p)[i]))
            return false;
    return true;
}

static hop_status
run_eig(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor;
    bool vecs = l->c->args[1].u.b, cplx = hop_dtype_is_complex(l->dt);
    char jobvr = vecs ? 'V' : 'N';
    int64_t n = a->sizes[a->rank - 1];
    if (n > INT_MAX || n * n > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "linalg_eig: matrices this large are not supported");
    hop_dtype ct = hop_dtype_complex(l->dt), rt = hop_dtype_real(l->dt);
    size_t cs = hop_dtype_size(ct), rs = hop_dtype_size(rt);
    _Alignas(16) double q[4] = {0};
    lapack_int lw = 1;
    if (n > 0 && !cplx) {
        geev(l->dt, jobvr, (lapack_int)n, NULL, NULL, NULL, NULL, q, -1, NULL);
        lw = work_size(l->dt, q);
    } else if (n > 0) {
        /* zgeev's query reads its arrays (ztrevc3's does): a bound instead,
         * above its optimum n + 2 n nb for block sizes nb up to 64 */
        lw = (lapack_int)(1 + 130 * n);
    }
    /* a, w (complex, or wr and wi), vr, work, rwork (complex: 2n reals) */
    size_t sa = align16((size_t)(n * n) * l->es), sw_ = align16((size_t)(2 * n) * rs);
    size_t sv = vecs ? align16((size_t)(n * n) * l->es) : 16, swk = align16((size_t)lw * l->es);
    char *w = scratch(l, sa + sw_ + sv + swk + (size_t)(2 * n) * rs);
    if (w == NULL)
        return hop_error_code();
    char *ev = w + sa, *vr = ev + sw_, *work = vr + sv, *rwork = work + swk;
    int64_t orows = vecs ? n + 1 : 1;
    hop_status st = HOP_OK;
    /* NumPy checks every matrix before it computes any (_assert_finite):
     * the check is the op's own, so a transformed or traced eig raises it
     * as eager does without a Python decision on the data. */
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK && n > 0; bi++) {
        load(l, a, bi, w);
        if (!all_finite(w, rt, (n * n) * (cplx ? 2 : 1)))
            st = linalg_error("Array must not contain infs or NaNs");
    }
    for (int64_t bi = 0; bi < l->batch && st == HOP_OK; bi++) {
        if (n == 0)
            continue;
        load(l, a, bi, w);
        char *o = (char *)out->data + bi * orows * n * (int64_t)cs;
        if (geev(l->dt, jobvr, (lapack_int)n, w, ev, ev + (size_t)n * rs, vr, work, lw, rwork) !=
            0) {
            st = linalg_error("Eigenvalues did not converge");
            break;
        }
        if (cplx) {
            memcpy(o, ev, (size_t)n * cs);
            if (vecs)
                store_rm(vr, n, l->dt, n, n, o + (size_t)n * cs, n);
        } else if (l->dt == HOP_F32) {
            eig_complex_float((const float *)ev, (const float *)ev + n,
                              vecs ? (const float *)vr : NULL, n, (float *)o);
        } else {
            eig_complex_double((const double *)ev, (const double *)ev + n,
                               vecs ? (const double *)vr : NULL, n, (double *)o);
        }
    }
    scratch_done(l, w);
    return st;
}

/* The squares of column j's rows n..m-1 of gelsd's b (ld rows), summed
 * one element at a time from 0 as NumPy's abs2 does, into real *dst. */
#define HOP_RESIDUAL(real_t, cplx)                                                                 \
    do {                                                                                           \
        const real_t *p = (const real_t *)b;                                                       \
        real_t r = 0;                                                                              \
        for (int64_t i = n; i < m; i++) {                                                          \
            if (cplx) {                                                                            \
                real_t re = p[2 * (j * ld + i)], im = p[2 * (j * ld + i) + 1];                     \
                r += re * re + im * im;                                                            \
            } else {                                                                               \
                real_t v = p[j * ld + i];                                                          \
                r += v * v;                                                                        \
            }                                                                                      \
        }                                                                                          \
        memcpy(dst, &r, sizeof r);                                                                 \
    } while (0)

static void
residual(hop_dtype dt, const char *b, int64_t ld, int64_t j, int64_t n, int64_t m, void *dst)
{
    bool cplx = hop_dtype_is_complex(dt);
    if (dt == HOP_F32 || dt == HOP_C64)
        HOP_RESIDUAL(float, cplx);
    else
        HOP_RESIDUAL(double, cplx);
}
#undef HOP_RESIDUAL

/* lstsq: gelsd on a copy of a and of b (ldb = max(m, n) rows, k = 0
 * padded to one zero column as NumPy pads it), the workspace sizes asked
 * of gelsd as NumPy asks them (a smaller lwork takes other code paths:
 * other bits), packed as ops/infer_linalg.c says.  rcond -inf is NumPy's
 * rcond=None, eps * max(m, n) (the dtype's eps), computed here because
 * under dynamic=True the sizes are known only now. */
static hop_status
run_lstsq(const lcall *l, hop_tensor *out)
{
    const hop_tensor *a = l->c->args[0].u.tensor, *b = l->c->args[1].u.tensor;
    double rcond = l->c->args[2].u.f;
    int64_t m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1], k = b->sizes[b->rank - 1];
    int64_t mn = m < n ? m : n, ldb = m > n ? m : n, nrhs = k > 0 ? k : 1;
    int64_t cols = out->sizes[out->rank - 1];
    ldb = ldb > 1 ? ldb : 1;
    if (rcond == -INFINITY) /* NumPy's rcond=None, for sizes known only now */
        rcond = (l->dt == HOP_F32 || l->dt == HOP_C64 ? FLT_EPSILON : DBL_EPSILON) *
                (double)(m > n ? m : n);
    if (m > INT_MAX || n > INT_MAX || m * n > INT_MAX || ldb * nrhs > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: matrices this large are not supported",
                         l->c->info->name);
    hop_dtype rt = hop_dtype_real(l->dt);
    size_t rs = hop_dtype_size(rt);
    _Alignas(16) double query[4] = {0}, rquery[2] = {0};
    lapack_int iq[2] = {0}, rank = 0;
    gelsd(l->dt, (lapack_int)m, (lapack_int)n, (lapack_int)nrhs, NULL, NULL, (lapack_int)ldb,
          NULL, rcond, &rank, query, -1, rquery, iq);
    lapack_int lw = work_size(l->dt, query), lrw = work_size(rt, rquery);
    lapack_int liw = iq[0] > 1 ? iq[0] : 1;
    size_t sa = align16((size_t)(m * n) * l->es), sb = align16((size_t)(ldb * nrhs) * l->es);
    size_t ss = align16((size_t)mn * rs), sw = align16((size_t)lw * l->es);
    size_t srw = align16((size_t)lrw * rs), si = align16((size_t)liw * sizeof(lapack_int));
    char *w = scratch(l, sa + sb + ss + sw + srw + si);
    if (w == NULL)
        return hop_error_code();
    char *bb = w + sa, *sv = bb + sb, *work = sv + ss, *rwork = work + sw, *iwork = rwork + srw;
    hop_status st = HOP_OK;
    for (int64_t bi = 0; bi < l->batch; bi++) {
        char *o = (char *)out->data + bi * (n + 2) * cols * (int64_t)l->es;
        memset(o, 0, (size_t)((n + 2) * cols) * l->es);
        memset(bb, 0, (size_t)(ldb * nrhs) * l->es);
        load(l, a, bi, w);
        int64_t off = batch_offset(b, l->nb, l->bsizes, bi);
        load_cm((const char *)b->data + off * (int64_t)l->es, l->dt, m, k,
                b->strides[b->rank - 2], b->strides[b->rank - 1], bb, ldb);
        rank = 0;
        if (gelsd(l->dt, (lapack_int)m, (lapack_int)n, (lapack_int)nrhs, w, bb, (lapack_int)ldb,
                  sv, rcond, &rank, work, lw, rwork, (lapack_int *)iwork) != 0) {
            st = linalg_error("SVD did not converge in Linear Least Squares");
            break;
        }
        if (m > 0)
            store_rm(bb, ldb, l->dt, n, k, o, cols);
        char *ro = o + (size_t)(n * cols) * l->es, *so = ro + (size_t)cols * l->es;
        for (int64_t j = 0; rank == n && m > n && j < k; j++) {
            _Alignas(16) double r[1];
            residual(l->dt, bb, ldb, j, n, m, r);
            store_real_vec(r, l->dt, 1, ro + (size_t)j * l->es);
        }
        store_real_vec(sv, l->dt, mn, so);
        double rk = (double)rank;
        hop__convert(1, so + (size_t)mn * l->es, l->dt, &rk, HOP_F64, 1);
    }
    scratch_done(l, w);
    return st;
}

hop_status
hop__linalg_run(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    lcall l = {.c = c, .mem = mem, .dt = c->args[0].u.tensor->dtype};
    l.es = hop_dtype_size(l.dt);
    /* The batch: the output's dims before its matrix (or vector) dims. */
    int tail = c->op == HOP_OP_linalg_det ? 0
               : c->op == HOP_OP_linalg_slogdet || c->op == HOP_OP_linalg_svdvals ||
                       c->op == HOP_OP_linalg_eigvalsh ||
                       (c->op == HOP_OP_linalg_eig && !c->args[1].u.b)
                   ? 1
                   : 2;
    l.nb = out->rank - tail;
    l.batch = 1;
    for (int j = 0; j < l.nb; j++) {
        l.bsizes[j] = out->sizes[j];
        l.batch *= out->sizes[j];
    }
    hop_status st;
    hop__blas_enter();
    switch (c->op) {
    case HOP_OP_linalg_solve:
    case HOP_OP_linalg_inv:
        st = run_solve_inv(&l, out);
        break;
    case HOP_OP_linalg_det:
    case HOP_OP_linalg_slogdet:
        st = run_det(&l, out);
        break;
    case HOP_OP_linalg_cholesky:
        st = run_cholesky(&l, out);
        break;
    case HOP_OP_linalg_qr:
        st = run_qr(&l, out);
        break;
    case HOP_OP_linalg_qr_raw:
        st = run_qr_raw(&l, out);
        break;
    case HOP_OP_linalg_svd:
    case HOP_OP_linalg_svdvals:
        st = run_svd(&l, out);
        break;
    case HOP_OP_linalg_eigh:
    case HOP_OP_linalg_eigvalsh:
        st = run_eigh(&l, out);
        break;
    case HOP_OP_linalg_eig:
        st = run_eig(&l, out);
        break;
    case HOP_OP_linalg_lstsq:
        st = run_lstsq(&l, out);
        break;
    default:
        st = hop_error(HOP_UNSUPPORTED, "%s: not a linalg op", c->info->name);
        break;
    }
    hop__blas_leave();
    return st;
}
