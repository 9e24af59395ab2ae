/*
 * runtime/matmul.c - matmul with torch.matmul's shapes: f32/f64 through
 * CBLAS (cblas_sgemm/dgemm, one call per batch matrix and piece; small f32
 * matrices by matmul_small.c's AVX2 tiles where the CPU has them), integers
 * by a plain loop with wrapping arithmetic, f16 by one accumulating in f32.
 *
 * Pieces take units: whole batch matrices, or blocks of one fixed by its
 * shape (hop__matmul_plan_units), so one large matrix and many small ones
 * both spread over the threads and no result depends on the split; BLAS
 * itself stays single-threaded so that hop's pool is the only source of
 * parallelism.  OpenBLAS has no per-call thread count (0.3.21), only a
 * process-wide one, which NumPy's OpenBLAS shares when hop calls the same
 * shared library: setting it around hop's calls was seen by NumPy on other
 * threads (its matmuls ran on one thread meanwhile; a threadpoolctl limit
 * entered then restored 1 for good).  So hop links a copy of OpenBLAS of its
 * own (runtime/CMakeLists.txt: HOP_PRIVATE_OPENBLAS), sets it to one thread
 * once and stops its thread server, and never touches NumPy's.  Without that
 * copy, hop__blas_enter/leave set the shared count to 1 for the duration of
 * hop's matmuls and give back what they found: a count of hop calls inside
 * BLAS, under a lock, makes the first entrant save it and the last one
 * restore it, whichever threads they run on.  A matrix whose
 * strides BLAS cannot describe (neither dim unit-stride, or a leading
 * dimension too small, e.g. an expanded operand) takes the plain loop: no
 * copy, no allocation.  hop_eager copies such operands to contiguous first.
 */
#include "runtime/runtime.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#if defined(HOP_PRIVATE_OPENBLAS)
/* OpenBLAS's own (driver/others/blas_server.c; its fork handler calls it):
 * joins the thread server its constructor started.  A later call on one
 * thread never starts it again. */
int blas_thread_shutdown_(void);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void
blas_single(void)
{
    openblas_set_num_threads(1);
    blas_thread_shutdown_();
}
#elif defined(HOP_HAVE_OPENBLAS)
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_users;  /* hop matmuls between enter and leave */
static int blas_saved;  /* the thread count the first of them found */
static bool blas_reset; /* ... and changed to 1 */
#endif

void
hop__blas_enter(void)
{
#if defined(HOP_PRIVATE_OPENBLAS)
    pthread_once(&blas_once, blas_single);
#elif defined(HOP_HAVE_OPENBLAS)
    pthread_mutex_lock(&blas_lock);
    if (blas_users++ == 0) {
        blas_saved = openblas_get_num_threads();
        blas_reset = blas_saved != 1;
        if (blas_reset)
            openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_lock);
#endif
}

void
hop__blas_leave(void)
{
#if !defined(HOP_PRIVATE_OPENBLAS) && defined(HOP_HAVE_OPENBLAS)
    pthread_mutex_lock(&blas_lock);
    /* A count someone else set meanwhile (still not 1) is theirs to keep. */
    if (--blas_users == 0 && blas_reset && openblas_get_num_threads() == 1)
        openblas_set_num_threads(blas_saved);
    pthread_mutex_unlock(&blas_lock);
#endif
}

#ifdef HOP_NO_SMALL_MATMUL
hop__sgemm_small_fn
hop__sgemm_small(void)
{
    return NULL;
}
#endif

void
hop__matmul_init(hop__matmul *m, const hop__call *c, hop_tensor *out)
{
    const hop_tensor *a = c->args[0].u.tensor, *b = c->args[1].u.tensor;
    memset(m, 0, sizeof *m);
    m->dtype = a->dtype;
    m->a = a->data;
    m->b = b->data;
    m->c = out->data;
    int ar = a->rank, br = b->rank, orank = out->rank;
    if (ar >= 2) {
        m->n = a->sizes[ar - 2];
        m->ars = a->strides[ar - 2];
    } else {
        m->n = 1;
    }
    m->k = a->sizes[ar - 1];
    m->acs = a->strides[ar - 1];
    if (br >= 2) {
        m->brs = b->strides[br - 2];
        m->bcs = b->strides[br - 1];
        m->m = b->sizes[br - 1];
    } else {
        m->brs = b->strides[0];
        m->m = 1;
    }
    m->nbatch = orank - (ar >= 2) - (br >= 2);
    m->crs = ar >= 2 ? out->strides[m->nbatch] : 0;
    m->ccs = br >= 2 ? out->strides[orank - 1] : 0;
    int anb = ar >= 2 ? ar - 2 : 0, bnb = br >= 2 ? br - 2 : 0;
    m->batch = 1;
    for (int j = 0; j < m->nbatch; j++) {
        int ad = j - (m->nbatch - anb), bd = j - (m->nbatch - bnb);
        m->bsizes[j] = out->sizes[j];
        m->abst[j] = ad < 0 || a->sizes[ad] == 1 ? 0 : a->strides[ad];
        m->bbst[j] = bd < 0 || b->sizes[bd] == 1 ? 0 : b->strides[bd];
        m->cbst[j] = out->strides[j];
        m->batch *= out->sizes[j];
    }
    if ((m->dtype == HOP_F32 || m->dtype == HOP_F64) &&
        !(hop__matmul_blas_ok(a) && hop__matmul_blas_ok(b))) {
        m->pack_a = (int8_t)(hop_tensor_is_contiguous(a) ? 0 : ar >= 2 ? 2 : 1);
        m->pack_b = (int8_t)(hop_tensor_is_contiguous(b) ? 0 : br >= 2 ? 2 : 1);
    }
    hop__matmul_plan_units(m);
}

/* Copies the rows x cols matrices of src (strides rs, cs; batch strides
 * bst, 0 for a broadcast dim) into new memory, each contiguous, one for
 * each distinct batch index; nbst: their batch strides there. */
static char *
pack_operand(const hop__matmul *mm, const char *src, int64_t rows, int64_t cols, int64_t rs,
             int64_t cs, const int64_t *bst, int64_t *nbst)
{
    int64_t esz = (int64_t)hop_dtype_size(mm->dtype), per = rows * cols, count = 1;
    for (int j = mm->nbatch - 1; j >= 0; j--) {
        nbst[j] = bst[j] != 0 ? per * count : 0;
        count *= bst[j] != 0 ? mm->bsizes[j] : 1;
    }
    char *dst = hop__malloc((size_t)(per * count * esz) + 1);
    if (dst == NULL)
        return NULL;
    for (int64_t i = 0; i < count; i++) {
        int64_t rest = i, off = 0;
        for (int j = mm->nbatch - 1; j >= 0; j--)
            if (bst[j] != 0) {
                off += rest % mm->bsizes[j] * bst[j];
                rest /= mm->bsizes[j];
            }
        char *d = dst + i * per * esz;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                if (esz == 8)
                    ((double *)d)[r * cols + c] = ((const double *)src)[off + r * rs + c * cs];
                else
                    ((float *)d)[r * cols + c] = ((const float *)src)[off + r * rs + c * cs];
    }
    return dst;
}

/*
 * The operands eager matmul once copied itself (hop_tensor_contiguous of
 * both when either is not BLAS's), copied here when the kernel runs, so
 * eagerly, through hop_eager_out and in a plan (whose kernel is prepared
 * once and rebased) alike: the same strides reach block, so the same
 * BLAS calls and bits.  The naive loop a plan ran instead gave other last
 * bits (x[:, ::2] @ v).  Only the matrix strides decide a matrix's bits,
 * so a broadcast batch dim is copied once.
 */
bool
hop__matmul_pack(const hop__matmul *mm, hop__matmul *out, void *mem[2])
{
    *out = *mm;
    out->pack_a = out->pack_b = 0;
    mem[0] = mem[1] = NULL;
    if (mm->pack_a) {
        if ((mem[0] = pack_operand(mm, mm->a, mm->n, mm->k, mm->ars, mm->acs, mm->abst,
                                   out->abst)) == NULL)
            goto unpacked;
        out->a = mem[0];
        out->ars = mm->pack_a == 2 ? mm->k : mm->ars;
        out->acs = 1;
    }
    if (mm->pack_b) {
        if ((mem[1] = pack_operand(mm, mm->b, mm->k, mm->m, mm->brs, mm->bcs, mm->bbst,
                                   out->bbst)) == NULL)
            goto unpacked;
        out->b = mem[1];
        out->brs = mm->pack_b == 2 ? mm->m : 1;
        out->bcs = mm->pack_b == 2 ? 1 : mm->bcs;
    }
    hop__matmul_plan_units(out);
    return true;
unpacked:
    /* (pack_operand wrote the copies' batch strides before it failed, and
     * a's copy may be made: none of it stays) */
    hop__free(mem[0]);
    mem[0] = NULL;
    *out = *mm;
    out->pack_a = out->pack_b = 0;
    hop_error_clear();
    return false;
}

/* A BLAS description of a rows x cols operand with strides (rs, cs):
 * false when there is none. */
static bool
blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool allow_trans, bool *trans,
            int *ld)
{
    int64_t l;
    if (cs == 1 || cols == 1) {
        l = rows == 1 ? (cols > 1 ? cols : 1) : rs;
        *trans = false;
        if (l >= (cols > 1 ? cols : 1) && l <= INT_MAX) {
            *ld = (int)l;
            return true;
        }
    }
    if (allow_trans && (rs == 1 || rows == 1)) {
        l = cols == 1 ? (rows > 1 ? rows : 1) : cs;
        *trans = true;
        if (l >= (rows > 1 ? rows : 1) && l <= INT_MAX) {
            *ld = (int)l;
            return true;
        }
    }
    return false;
}

#define NAIVE(T, UT)                                                                               \
    static void naive_##T(const hop__matmul *mm, const char *ap, const char *bp, char *cp,         \
                          int64_t rows)                                                            \
    {                                                                                              \
        const T *a = (const T *)ap, *b = (const T *)bp;                                            \
        T *c = (T *)cp;                                                                            \
        for (int64_t i = 0; i < rows; i++) {                                                       \
            T *crow = c + i * mm->crs;                                                             \
            for (int64_t j = 0; j < mm->m; j++)                                                    \
                crow[j * mm->ccs] = 0;                                                             \
            for (int64_t p = 0; p < mm->k; p++) {                                                  \
                UT aip = (UT)a[i * mm->ars + p * mm->acs];                                         \
                const T *brow = b + p * mm->brs;                                                   \
                for (int64_t j = 0; j < mm->m; j++)                                                \
                    crow[j * mm->ccs] = (T)((UT)crow[j * mm->ccs] + aip * (UT)brow[j * mm->bcs]);  \
            }                                                                                      \
        }                                                                                          \
    }
NAIVE(int8_t, uint32_t)
NAIVE(uint8_t, uint32_t)
NAIVE(int16_t, uint32_t)
NAIVE(int32_t, uint32_t)
NAIVE(int64_t, uint64_t)
NAIVE(uint64_t, uint64_t)
NAIVE(uint16_t, uint32_t)
NAIVE(uint32_t, uint32_t)
NAIVE(float, float)
NAIVE(double, double)
typedef float _Complex hop__c64;
typedef double _Complex hop__c128;
NAIVE(hop__c64, hop__c64)
NAIVE(hop__c128, hop__c128)

/* c64/c128 through cgemm/zgemm (gemv for one column or row), alpha 1 and
 * beta 0 passed by address as CBLAS's complex routines take them; false
 * when BLAS cannot describe the operands. */
static bool
complex_block(const hop__matmul *mm, const char *a, const char *b, char *c, int64_t rows, int64_t m)
{
    static const double one[2] = {1, 0}, zero[2] = {0, 0};
    static const float onef[2] = {1, 0}, zerof[2] = {0, 0};
    bool dbl = mm->dtype == HOP_C128;
    const void *al = dbl ? (const void *)one : (const void *)onef;
    const void *be = dbl ? (const void *)zero : (const void *)zerof;
    bool ta, tb, tc;
    int lda, ldb, ldc;
    if (mm->k <= 0 || mm->k > INT_MAX || rows > INT_MAX || m > INT_MAX)
        return false;
    if (mm->m == 1 || mm->n == 1) {
        /* c = A b (one column), or c = B^T a (one row) */
        bool col = mm->m == 1;
        int64_t r = col ? rows : m, rs = col ? mm->ars : mm->bcs, cs = col ? mm->acs : mm->brs;
        int64_t incx = col ? mm->brs : mm->acs, incy = col ? mm->crs : mm->ccs;
        const char *mat = col ? a : b, *x = col ? b : a;
        bool trans;
        int ld;
        if (incx <= 0 || incx > INT_MAX || incy <= 0 || incy > INT_MAX ||
            !blas_layout(r, mm->k, rs, cs, true, &trans, &ld))
            return false;
        enum CBLAS_TRANSPOSE T = trans ? CblasTrans : CblasNoTrans;
        int rr = trans ? (int)mm->k : (int)r, cc = trans ? (int)r : (int)mm->k;
        if (dbl)
            cblas_zgemv(CblasRowMajor, T, rr, cc, al, mat, ld, x, (int)incx, be, c, (int)incy);
        else
            cblas_cgemv(CblasRowMajor, T, rr, cc, al, mat, ld, x, (int)incx, be, c, (int)incy);
        return true;
    }
    if (!blas_layout(mm->n, mm->k, mm->ars, mm->acs, true, &ta, &lda) ||
        !blas_layout(mm->k, mm->m, mm->brs, mm->bcs, true, &tb, &ldb) ||
        !blas_layout(mm->n, mm->m, mm->crs, mm->ccs, false, &tc, &ldc))
        return false;
    enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE TB = tb ? CblasTrans : CblasNoTrans;
    if (dbl)
        cblas_zgemm(CblasRowMajor, TA, TB, (int)rows, (int)m, (int)mm->k, al, a, lda, b, ldb, be, c,
                    ldc);
    else
        cblas_cgemm(CblasRowMajor, TA, TB, (int)rows, (int)m, (int)mm->k, al, a, lda, b, ldb, be, c,
                    ldc);
    return true;
}

/* binary16: each dot product accumulates in float and is rounded once. */
static void
naive_f16(const hop__matmul *mm, const char *ap, const char *bp, char *cp, int64_t rows)
{
    const uint16_t *a = (const uint16_t *)ap, *b = (const uint16_t *)bp;
    uint16_t *c = (uint16_t *)cp;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < mm->m; j++) {
            float acc = 0;
            for (int64_t p = 0; p < mm->k; p++)
                acc += hop_f16_to_float(a[i * mm->ars + p * mm->acs]) *
                       hop_f16_to_float(b[p * mm->brs + j * mm->bcs]);
            c[i * mm->crs + j * mm->ccs] = hop__f16_noted(acc);
        }
    }
}

/*
 * The chains of FMAs each output of a product x @ M read transposed (M
 * k x n) sums in, decided by the product's width n alone, never by a
 * call's columns: 4 for n up to two AVX2 vectors (16 f32, 8 f64), 2 up to
 * four, else 1 (a wide product has enough columns in flight; a narrow one
 * with one chain waited on the FMA's latency).
 */
static int
gemv_t_chains(hop_dtype dt, int64_t n)
{
    int64_t lanes = dt == HOP_F32 ? 8 : 4;
    return n <= 2 * lanes ? 4 : n <= 4 * lanes ? 2 : 1;
}

/*
 * y (len elements, stride incy) = x (k, stride incx) @ M (k x len, row
 * stride ld, unit column stride): each y[j] `chains` chains of FMAs from
 * +0, chain c over the rows p = c, c + chains, ... in order, added
 * pairwise ((s0 + s1) + (s2 + s3)): the same bits for any split of the
 * columns.  OpenBLAS's gemv reading its matrix this way (w @ X, X.T @ w)
 * gave f32 bits that depended on the columns per call, so on the thread
 * count; this loop streams M's rows as fast (matmul_small.c has its AVX2
 * form, which this one matches bit for bit where the CPU lacks it).
 */
#define GEMV_T(T, FMA)                                                                             \
    static void gemv_t_##T(int chains, int64_t len, int64_t k, const T *x, int64_t incx,           \
                           const T *m, int64_t ld, T *y, int64_t incy)                             \
    {                                                                                              \
        enum { STRIP = 256 };                                                                      \
        T s[4][STRIP];                                                                             \
        if (chains == 1) { /* (y itself holds the chain: M's rows streamed whole) */               \
            for (int64_t j = 0; j < len; j++)                                                      \
                y[j * incy] = 0;                                                                   \
            for (int64_t p = 0; p < k; p++)                                                        \
                for (int64_t j = 0; j < len; j++)                                                  \
                    y[j * incy] = FMA(x[p * incx], m[p * ld + j], y[j * incy]);                    \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j0 = 0; j0 < len; j0 += STRIP) {                                              \
            int64_t w = len - j0 < STRIP ? len - j0 : STRIP;                                       \
            memset(s, 0, sizeof s);                                                                \
            for (int64_t p = 0; p < k; p++) {                                                      \
                T *sc = s[p % chains], xp = x[p * incx];                                           \
                const T *mp = m + p * ld + j0;                                                     \
                for (int64_t j = 0; j < w; j++)                                                    \
                    sc[j] = FMA(xp, mp[j], sc[j]);                                                 \
            }                                                                                      \
            for (int64_t j = 0; j < w; j++)                                                        \
                y[(j0 + j) * incy] =                                                               \
                    chains == 4 ? (s[0][j] + s[1][j]) + (s[2][j] + s[3][j]) : s[0][j] + s[1][j];   \
        }                                                                                          \
    }
GEMV_T(float, fmaf)
GEMV_T(double, fma)

static void
gemv_t(hop_dtype dt, int chains, int64_t len, int64_t k, const char *x, int64_t incx, const char *m,
       int64_t ld, char *y, int64_t incy)
{
#ifndef HOP_NO_SMALL_MATMUL
    if (hop__sgemm_small() != NULL) {
        hop__gemv_t_avx2(dt, chains, len, k, x, incx, m, ld, y, incy);
        return;
    }
#endif
    if (dt == HOP_F32)
        gemv_t_float(chains, len, k, (const float *)x, incx, (const float *)m, ld, (float *)y,
                     incy);
    else
        gemv_t_double(chains, len, k, (const double *)x, incx, (const double *)m, ld, (double *)y,
                      incy);
}

/*
 * A matrix-vector product: y (ny elements, stride incy) = M x for M the
 * rows x cols operand with strides (rs, cs) and x (cols elements, stride
 * incx), through BLAS's gemv, or gemv_t when M is read transposed.  gemm
 * with one column packs the whole matrix first, which cost more than the
 * product (a 1000 x 1000 f64 X @ w took 4.5x NumPy's gemv).  False when
 * neither can describe the operands (a broadcast vector has stride 0,
 * which BLAS does not take).  width: the whole product's length of y, of
 * which this call may be a piece (it decides gemv_t's chains).
 */
static bool
blas_gemv(hop_dtype dt, int64_t rows, int64_t cols, const char *m, int64_t rs, int64_t cs,
          const char *x, int64_t incx, char *y, int64_t incy, int64_t width)
{
    bool trans;
    int ld;
    if (rows > INT_MAX || cols > INT_MAX || incx <= 0 || incx > INT_MAX || incy <= 0 ||
        incy > INT_MAX || !blas_layout(rows, cols, rs, cs, true, &trans, &ld))
        return false;
    if (trans) {
        gemv_t(dt, gemv_t_chains(dt, width), rows, cols, x, incx, m, ld, y, incy);
        return true;
    }
    if (dt == HOP_F32)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)rows, (int)cols, 1.0f, (const float *)m, ld,
                    (const float *)x, (int)incx, 0.0f, (float *)y, (int)incy);
    else
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)rows, (int)cols, 1.0, (const double *)m, ld,
                    (const double *)x, (int)incx, 0.0, (double *)y, (int)incy);
    return true;
}

/* Rows [0, rows) and columns [0, m) of one batch matrix, a/b/c already at
 * the first row and column. */
static void
block(const hop__matmul *mm, const char *a, const char *b, char *c, int64_t rows, int64_t m)
{
    if (m == 0 || rows == 0)
        return;
    bool is_float = mm->dtype == HOP_F32 || mm->dtype == HOP_F64;
    bool ta, tb, tc;
    int lda, ldb, ldc;
    /* Decided on the whole matrix, not the piece: the same kernel for
     * every split of the rows among threads. */
    hop__sgemm_small_fn small;
    if (mm->dtype == HOP_F32 && mm->k > 0 && mm->m >= HOP__SMALL_MATMUL_MIN_M && mm->bcs == 1 &&
        mm->ccs == 1 && (double)mm->n * (double)mm->k * (double)mm->m <= HOP__SMALL_MATMUL &&
        (small = hop__sgemm_small()) != NULL) {
        small(rows, m, mm->k, (const float *)a, mm->ars, mm->acs, (const float *)b, mm->brs,
              (float *)c, mm->crs);
        return;
    }
    if (is_float && mm->k > 0 && mm->k <= INT_MAX) {
        /* One column: c = A b; one row: c = B^T a; both: a dot product.
         * Decided on the whole matrix too (mm->n, mm->m): a piece of one
         * row of a matrix product is still gemm's. */
        if (mm->m == 1 && mm->n == 1 && mm->acs > 0 && mm->brs > 0 && mm->acs <= INT_MAX &&
            mm->brs <= INT_MAX) {
            if (mm->dtype == HOP_F32)
                *(float *)c = cblas_sdot((int)mm->k, (const float *)a, (int)mm->acs,
                                         (const float *)b, (int)mm->brs);
            else
                *(double *)c = cblas_ddot((int)mm->k, (const double *)a, (int)mm->acs,
                                          (const double *)b, (int)mm->brs);
            return;
        }
        if (mm->m == 1 &&
            blas_gemv(mm->dtype, rows, mm->k, a, mm->ars, mm->acs, b, mm->brs, c, mm->crs, mm->n))
            return;
        if (mm->n == 1 &&
            blas_gemv(mm->dtype, m, mm->k, b, mm->bcs, mm->brs, a, mm->acs, c, mm->ccs, mm->m))
            return;
    }
    if (is_float && mm->k > 0 && rows <= INT_MAX && mm->k <= INT_MAX && m <= INT_MAX &&
        blas_layout(mm->n, mm->k, mm->ars, mm->acs, true, &ta, &lda) &&
        blas_layout(mm->k, mm->m, mm->brs, mm->bcs, true, &tb, &ldb) &&
        blas_layout(mm->n, mm->m, mm->crs, mm->ccs, false, &tc, &ldc)) {
        enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans;
        enum CBLAS_TRANSPOSE TB = tb ? CblasTrans : CblasNoTrans;
        if (mm->dtype == HOP_F32)
            cblas_sgemm(CblasRowMajor, TA, TB, (int)rows, (int)m, (int)mm->k, 1.0f,
                        (const float *)a, lda, (const float *)b, ldb, 0.0f, (float *)c, ldc);
        else
            cblas_dgemm(CblasRowMajor, TA, TB, (int)rows, (int)m, (int)mm->k, 1.0,
                        (const double *)a, lda, (const double *)b, ldb, 0.0, (double *)c, ldc);
        return;
    }
    if ((mm->dtype == HOP_C64 || mm->dtype == HOP_C128) && complex_block(mm, a, b, c, rows, m))
        return;
    hop__matmul mmp = *mm;
    mmp.m = m;
    switch (mm->dtype) {
    case HOP_I8:
        naive_int8_t(&mmp, a, b, c, rows);
        break;
    case HOP_U8:
        naive_uint8_t(&mmp, a, b, c, rows);
        break;
    case HOP_I16:
        naive_int16_t(&mmp, a, b, c, rows);
        break;
    case HOP_U64:
        naive_uint64_t(&mmp, a, b, c, rows);
        break;
    case HOP_U16:
        naive_uint16_t(&mmp, a, b, c, rows);
        break;
    case HOP_U32:
        naive_uint32_t(&mmp, a, b, c, rows);
        break;
    case HOP_F16:
        naive_f16(&mmp, a, b, c, rows);
        break;
    case HOP_I32:
        naive_int32_t(&mmp, a, b, c, rows);
        break;
    case HOP_I64:
        naive_int64_t(&mmp, a, b, c, rows);
        break;
    case HOP_F32:
        naive_float(&mmp, a, b, c, rows);
        break;
    case HOP_F64:
        naive_double(&mmp, a, b, c, rows);
        break;
    case HOP_C64:
        naive_hop__c64(&mmp, a, b, c, rows);
        break;
    case HOP_C128:
        naive_hop__c128(&mmp, a, b, c, rows);
        break;
    default:
        break;
    }
}

/*
 * Units of work (runtime.h: hop__matmul.units).  A piece of a matmul takes
 * whole units, and every BLAS call covers a block fixed by the shape alone,
 * never by the thread count or the split: OpenBLAS's gemm gives a row
 * bits that depend on the rows in its call (f32 on Zen: almost any change
 * of M; f64: an odd M), so calls sized by the pieces gave an eager map's
 * equal rows different bits on two threads (0.0015%), and one matmul
 * different bits on one thread and two.
 *
 * A gemm's blocks: the whole matrix up to GEMM_WHOLE multiply-adds;
 * beyond, up to GEMM_WANT (fewer when there is less work than GEMM_UNIT a
 * block, or a batch to share instead) of rows (at least GEMM_RMIN, or two
 * halves of at least half that), then columns (at least GEMM_CMIN).  Each
 * call packs its operands again: on one thread 0-9% over one call per
 * matrix (256^3 the most), against 1.6-2x on two.  A gemv's blocks are
 * rows (columns for one row times a matrix), the whole product up to
 * GEMV_WHOLE, else GEMV_WANT (fewer of at least GEMV_MIN), so two threads
 * get even shares.  A gemv reading
 * its matrix transposed runs gemv_t, whose bits do not depend on its
 * columns, so a piece joins its units (of GEMV_BLOCK) into one call: blocks
 * of columns read the matrix in strips, 1.2-1.4x one sweep.  A dot
 * product's units are fixed chunks of k, summed in order.
 */
#define GEMM_WHOLE (1 << 20)
#define GEMM_UNIT (1 << 20)
#define GEMM_WANT 4
#define GEMM_RMIN 128
#define GEMM_CMIN 512
#define GEMV_WHOLE (1 << 18)
#define GEMV_WANT 4
#define GEMV_MIN 128
#define GEMV_BLOCK 64
#define DOT_UNIT 32768 /* elements per dot unit, at least */
#define DOT_MAX_UNITS 64

static int64_t
round_up(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

static void
gemm_blocks(hop__matmul *mm)
{
    double work = (double)mm->n * (double)mm->k * (double)mm->m;
    mm->chunk = mm->n > 0 ? mm->n : 1;
    mm->cchunk = mm->m > 0 ? mm->m : 1;
    if (work <= GEMM_WHOLE)
        return;
    int64_t want = (GEMM_WANT + mm->batch - 1) / mm->batch;
    if (work / GEMM_UNIT < (double)want)
        want = work < 2.0 * GEMM_UNIT ? 1 : (int64_t)(work / GEMM_UNIT);
    int64_t rb = mm->n / GEMM_RMIN < want ? mm->n / GEMM_RMIN : want;
    if (rb < 2 && want >= 2 && mm->n / (GEMM_RMIN / 2) >= 2)
        rb = 2;
    if (rb > 1) {
        mm->chunk = round_up((mm->n + rb - 1) / rb, 16);
        rb = (mm->n + mm->chunk - 1) / mm->chunk;
    } else {
        rb = 1;
    }
    int64_t cb = (want + rb - 1) / rb;
    if (mm->m / GEMM_CMIN < cb)
        cb = mm->m / GEMM_CMIN;
    if (cb > 1)
        mm->cchunk = round_up((mm->m + cb - 1) / cb, 16);
}

/* Whether blas_gemv reads a rows x cols operand with strides (rs, cs)
 * transposed, so through gemv_t. */
static bool
read_transposed(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    return !(cs == 1 || cols == 1) && (rs == 1 || rows == 1);
}

static int64_t
gemv_block(int64_t len, int64_t k)
{
    if (len < 1)
        return 1;
    if ((double)len * (double)k <= GEMV_WHOLE)
        return len;
    int64_t blocks = len / GEMV_MIN < GEMV_WANT ? len / GEMV_MIN : GEMV_WANT;
    return blocks < 2 ? len : round_up((len + blocks - 1) / blocks, 16);
}

void
hop__matmul_plan_units(hop__matmul *mm)
{
    bool real = mm->dtype == HOP_F32 || mm->dtype == HOP_F64;
    bool is_float = real || mm->dtype == HOP_C64 || mm->dtype == HOP_C128;
    if (real && mm->batch == 1 && mm->n == 1 && mm->m == 1) {
        int64_t u = mm->k / DOT_UNIT;
        u = u < 1 ? 1 : u > DOT_MAX_UNITS ? DOT_MAX_UNITS : u;
        mm->mode = HOP__MM_DOT;
        mm->chunk = mm->k > 0 ? (mm->k + u - 1) / u : 1; /* k = 0: no units, the sum is 0 */
        mm->units = (mm->k + mm->chunk - 1) / mm->chunk;
    } else if (is_float && mm->batch == 1 && mm->n == 1) {
        mm->mode = HOP__MM_COLS;
        mm->merge = real && read_transposed(mm->m, mm->k, mm->bcs, mm->brs);
        mm->chunk = mm->merge ? GEMV_BLOCK : gemv_block(mm->m, mm->k);
        mm->units = (mm->m + mm->chunk - 1) / mm->chunk;
    } else if (is_float && mm->m == 1 && mm->n > 0) {
        mm->mode = HOP__MM_GEMV;
        mm->merge = real && read_transposed(mm->n, mm->k, mm->ars, mm->acs);
        mm->chunk = mm->merge ? GEMV_BLOCK : gemv_block(mm->n, mm->k);
        mm->units = mm->batch * ((mm->n + mm->chunk - 1) / mm->chunk);
    } else {
        mm->mode = HOP__MM_ROWS;
        gemm_blocks(mm);
        mm->units = mm->batch * ((mm->n + mm->chunk - 1) / mm->chunk) *
                    ((mm->m + mm->cchunk - 1) / mm->cchunk);
    }
}

double
hop__matmul_dot_unit(const hop__matmul *mm, int64_t u)
{
    int64_t esz = (int64_t)hop_dtype_size(mm->dtype), begin = u * mm->chunk;
    int64_t n = mm->k - begin < mm->chunk ? mm->k - begin : mm->chunk;
    const char *a = mm->a + begin * mm->acs * esz, *b = mm->b + begin * mm->brs * esz;
    if (n <= 0)
        return 0;
    if (mm->acs > 0 && mm->brs > 0 && mm->acs <= INT_MAX && mm->brs <= INT_MAX && n <= INT_MAX) {
        if (mm->dtype == HOP_F32)
            return cblas_sdot((int)n, (const float *)a, (int)mm->acs, (const float *)b,
                              (int)mm->brs);
        return cblas_ddot((int)n, (const double *)a, (int)mm->acs, (const double *)b, (int)mm->brs);
    }
    double acc = 0; /* a broadcast operand (stride 0), which BLAS does not take */
    for (int64_t p = 0; p < n; p++)
        acc += mm->dtype == HOP_F32
                   ? (double)((const float *)a)[p * mm->acs] * ((const float *)b)[p * mm->brs]
                   : ((const double *)a)[p * mm->acs] * ((const double *)b)[p * mm->brs];
    return acc;
}

/* The batch matrix bi's offsets of a, b and c, in elements. */
static void
batch_offsets(const hop__matmul *mm, int64_t bi, int64_t *ao, int64_t *bo, int64_t *co)
{
    int64_t rest = bi;
    *ao = *bo = *co = 0;
    for (int j = mm->nbatch - 1; j >= 0; j--) {
        int64_t i = rest % mm->bsizes[j];
        rest /= mm->bsizes[j];
        *ao += i * mm->abst[j];
        *bo += i * mm->bbst[j];
        *co += i * mm->cbst[j];
    }
}

void
hop__matmul_compute(const hop__matmul *mm, int ith, int nth)
{
    int64_t begin, end;
    int64_t esz = (int64_t)hop_dtype_size(mm->dtype);
    hop__split(mm->units, ith, nth, 1, &begin, &end);
    switch (mm->mode) {
    case HOP__MM_DOT: { /* one piece (hop__kernel_run shares the units itself) */
        double acc = 0;
        for (int64_t u = 0; u < mm->units; u++)
            acc += hop__matmul_dot_unit(mm, u);
        if (ith == 0 && mm->dtype == HOP_F32)
            *(float *)mm->c = (float)acc;
        else if (ith == 0)
            *(double *)mm->c = acc;
        return;
    }
    case HOP__MM_COLS: /* one gemv per unit of columns, or per piece */
        for (int64_t u = begin; u < end;) {
            int64_t last = mm->merge ? end : u + 1, j0 = u * mm->chunk;
            int64_t j1 = last * mm->chunk < mm->m ? last * mm->chunk : mm->m;
            block(mm, mm->a, mm->b + j0 * mm->bcs * esz, mm->c + j0 * mm->ccs * esz, 1, j1 - j0);
            u = last;
        }
        return;
    case HOP__MM_GEMV: { /* one gemv per unit of rows of one matrix, or per piece */
        int64_t per = (mm->n + mm->chunk - 1) / mm->chunk;
        for (int64_t u = begin; u < end;) {
            int64_t bi = u / per, last = mm->merge ? (bi + 1) * per : u + 1;
            last = last < end ? last : end;
            int64_t r0 = u % per * mm->chunk, r1 = (last - bi * per) * mm->chunk;
            r1 = r1 < mm->n ? r1 : mm->n;
            int64_t ao, bo, co;
            batch_offsets(mm, bi, &ao, &bo, &co);
            ao += r0 * mm->ars;
            co += r0 * mm->crs;
            block(mm, mm->a + ao * esz, mm->b + bo * esz, mm->c + co * esz, r1 - r0, 1);
            u = last;
        }
        return;
    }
    case HOP__MM_ROWS:
        break;
    }
    int64_t rblocks = (mm->n + mm->chunk - 1) / mm->chunk;
    int64_t cblocks = (mm->m + mm->cchunk - 1) / mm->cchunk;
    for (int64_t u = begin; u < end; u++) {
        int64_t bi = u / (rblocks * cblocks), rest = u % (rblocks * cblocks);
        int64_t r0 = rest / cblocks * mm->chunk, j0 = rest % cblocks * mm->cchunk;
        int64_t rows = mm->n - r0 < mm->chunk ? mm->n - r0 : mm->chunk;
        int64_t cols = mm->m - j0 < mm->cchunk ? mm->m - j0 : mm->cchunk;
        int64_t ao, bo, co;
        batch_offsets(mm, bi, &ao, &bo, &co);
        ao += r0 * mm->ars;
        bo += j0 * mm->bcs;
        co += r0 * mm->crs + j0 * mm->ccs;
        block(mm, mm->a + ao * esz, mm->b + bo * esz, mm->c + co * esz, rows, cols);
    }
}

bool
hop__matmul_blas_ok(const hop_tensor *t)
{
    if (t->rank < 2)
        return true; /* a vector is always describable */
    bool trans;
    int ld;
    int64_t rows = t->sizes[t->rank - 2], cols = t->sizes[t->rank - 1];
    return blas_layout(rows, cols, t->strides[t->rank - 2], t->strides[t->rank - 1], true, &trans,
                       &ld);
}
