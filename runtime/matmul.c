/*
 * runtime/matmul.c - matmul with torch.matmul's shapes: f32/f64 through
 * CBLAS (cblas_sgemm/dgemm, one call per batch matrix and piece; small f32
 * matrices by matmul_small.c's AVX2 tiles where the CPU has them), integers
 * by a plain loop with wrapping arithmetic, f16 by one accumulating in f32.
 *
 * Pieces split the rows of all batch matrices together (batch * n rows), so
 * one large matrix and many small ones both spread over the threads; BLAS
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
#include <pthread.h>

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
NAIVE(float, float)
NAIVE(double, double)

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
            c[i * mm->crs + j * mm->ccs] = hop_f16_from_float(acc);
        }
    }
}

/* Rows [0, rows) of one batch matrix, a/c already at the first row. */
static void
block(const hop__matmul *mm, const char *a, const char *b, char *c, int64_t rows)
{
    if (mm->m == 0 || rows == 0)
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
        small(rows, mm->m, mm->k, (const float *)a, mm->ars, mm->acs, (const float *)b, mm->brs,
              (float *)c, mm->crs);
        return;
    }
    if (is_float && mm->k > 0 && rows <= INT_MAX && mm->k <= INT_MAX && mm->m <= INT_MAX &&
        blas_layout(mm->n, mm->k, mm->ars, mm->acs, true, &ta, &lda) &&
        blas_layout(mm->k, mm->m, mm->brs, mm->bcs, true, &tb, &ldb) &&
        blas_layout(mm->n, mm->m, mm->crs, mm->ccs, false, &tc, &ldc)) {
        enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans;
        enum CBLAS_TRANSPOSE TB = tb ? CblasTrans : CblasNoTrans;
        if (mm->dtype == HOP_F32)
            cblas_sgemm(CblasRowMajor, TA, TB, (int)rows, (int)mm->m, (int)mm->k, 1.0f,
                        (const float *)a, lda, (const float *)b, ldb, 0.0f, (float *)c, ldc);
        else
            cblas_dgemm(CblasRowMajor, TA, TB, (int)rows, (int)mm->m, (int)mm->k, 1.0,
                        (const double *)a, lda, (const double *)b, ldb, 0.0, (double *)c, ldc);
        return;
    }
    switch (mm->dtype) {
    case HOP_I8:
        naive_int8_t(mm, a, b, c, rows);
        break;
    case HOP_U8:
        naive_uint8_t(mm, a, b, c, rows);
        break;
    case HOP_I16:
        naive_int16_t(mm, a, b, c, rows);
        break;
    case HOP_U64:
        naive_uint64_t(mm, a, b, c, rows);
        break;
    case HOP_F16:
        naive_f16(mm, a, b, c, rows);
        break;
    case HOP_I32:
        naive_int32_t(mm, a, b, c, rows);
        break;
    case HOP_I64:
        naive_int64_t(mm, a, b, c, rows);
        break;
    case HOP_F32:
        naive_float(mm, a, b, c, rows);
        break;
    case HOP_F64:
        naive_double(mm, a, b, c, rows);
        break;
    default:
        break;
    }
}

void
hop__matmul_compute(const hop__matmul *mm, int ith, int nth)
{
    int64_t begin, end;
    hop__split(mm->batch * mm->n, ith, nth, 1, &begin, &end);
    int64_t esz = (int64_t)hop_dtype_size(mm->dtype);
    for (int64_t g = begin; g < end;) {
        int64_t bi = g / mm->n, r0 = g % mm->n;
        int64_t rows = mm->n - r0 < end - g ? mm->n - r0 : end - g;
        int64_t ao = 0, bo = 0, co = 0, rest = bi;
        for (int j = mm->nbatch - 1; j >= 0; j--) {
            int64_t i = rest % mm->bsizes[j];
            rest /= mm->bsizes[j];
            ao += i * mm->abst[j];
            bo += i * mm->bbst[j];
            co += i * mm->cbst[j];
        }
        ao += r0 * mm->ars;
        co += r0 * mm->crs;
        block(mm, mm->a + ao * esz, mm->b + bo * esz, mm->c + co * esz, rows);
        g += rows;
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
