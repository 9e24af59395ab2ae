/*
 * runtime/matmul_small.c - the f32 matmul of small matrices (matmul.c
 * picks it below HOP__SMALL_MATMUL multiply-adds): register tiles of 4 rows
 * x 16 columns with AVX2 FMAs, no packing, no BLAS call.  At these sizes a
 * BLAS call's fixed cost (argument checks, buffer allocation under a lock,
 * packing both operands) is most of the product: 16 x 16 by 16 x 32 takes
 * about a third of OpenBLAS's time.
 *
 * Compiled with -mavx2 -mfma only (runtime/CMakeLists.txt);
 * hop__sgemm_small says whether this CPU can run it.  Each element is one
 * chain of FMAs over k in order from 0, whatever the tiling and however the
 * rows are split among threads, so results do not depend on the thread
 * count.
 */
#include "runtime/runtime.h"

#include <immintrin.h>

/* 8 lanes on then 8 off: a mask of the first n (0..8) lanes starts at 8 - n */
static const int32_t lane_masks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* c[r, j] = sum over p of a[r, p] * b[p, j], for r < R and j < w (w <= 16) */
static inline __attribute__((always_inline)) void
tile(int R, int64_t k, const float *a, int64_t ars, int64_t acs, const float *b, int64_t brs,
     float *c, int64_t crs, int64_t w)
{
    __m256 acc[4][2];
    for (int r = 0; r < 4; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    if (w == 16) {
        for (int64_t p = 0; p < k; p++) {
            const float *bp = b + p * brs;
            __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
            for (int r = 0; r < R; r++) {
                __m256 av = _mm256_broadcast_ss(a + r * ars + p * acs);
                acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
            }
        }
        for (int r = 0; r < R; r++) {
            _mm256_storeu_ps(c + r * crs, acc[r][0]);
            _mm256_storeu_ps(c + r * crs + 8, acc[r][1]);
        }
        return;
    }
    int64_t w0 = w < 8 ? w : 8, w1 = w - w0;
    __m256i m0 = _mm256_loadu_si256((const __m256i *)(lane_masks + 8 - w0));
    __m256i m1 = _mm256_loadu_si256((const __m256i *)(lane_masks + 8 - w1));
    for (int64_t p = 0; p < k; p++) {
        const float *bp = b + p * brs;
        __m256 b0 = _mm256_maskload_ps(bp, m0);
        __m256 b1 = w1 > 0 ? _mm256_maskload_ps(bp + 8, m1) : _mm256_setzero_ps();
        for (int r = 0; r < R; r++) {
            __m256 av = _mm256_broadcast_ss(a + r * ars + p * acs);
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            if (w1 > 0)
                acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
    }
    for (int r = 0; r < R; r++) {
        _mm256_maskstore_ps(c + r * crs, m0, acc[r][0]);
        if (w1 > 0)
            _mm256_maskstore_ps(c + r * crs + 8, m1, acc[r][1]);
    }
}

static void
sgemm_small(int64_t rows, int64_t m, int64_t k, const float *a, int64_t ars, int64_t acs,
            const float *b, int64_t brs, float *c, int64_t crs)
{
    for (int64_t j = 0; j < m; j += 16) {
        int64_t w = m - j < 16 ? m - j : 16, i = 0;
        for (; i + 4 <= rows; i += 4)
            tile(4, k, a + i * ars, ars, acs, b + j, brs, c + i * crs + j, crs, w);
        switch (rows - i) {
        case 3:
            tile(3, k, a + i * ars, ars, acs, b + j, brs, c + i * crs + j, crs, w);
            break;
        case 2:
            tile(2, k, a + i * ars, ars, acs, b + j, brs, c + i * crs + j, crs, w);
            break;
        case 1:
            tile(1, k, a + i * ars, ars, acs, b + j, brs, c + i * crs + j, crs, w);
            break;
        default:
            break;
        }
    }
}

/*
 * y (len elements, stride incy) = x (k elements, stride incx) @ M (k x len,
 * row stride ld, unit column stride), for a product whose whole width (the
 * columns of all its calls) makes each y[j] `chains` chains of FMAs
 * (matmul.c: gemv_t_chains), each from +0: chain c takes the rows
 * p = c, c + chains, ... in order, and y[j] is their sum, pairwise:
 * (s0 + s1) + (s2 + s3).  The sum is a column's own and the chains are the
 * width's, so any split of the columns gives the same bits (matmul.c:
 * gemv_t, the same sums without AVX2; OpenBLAS's sgemv reading its matrix
 * this way gave bits that depended on the columns per call).  A narrow
 * product's one chain per column waited on the FMA's latency (x.T @ v of a
 * 65536 x 16 X took 1.8x NumPy's time), so it gets 4 or 2 chains; up to
 * eight vectors of sums stay in registers.  A wide one sweeps rows four at
 * a time over a strip of columns held in y (or a buffer when incy != 1),
 * one chain each.
 */
#define GEMV_SWEEP(NAME, T, V, S, LANES, STRIP)                                                    \
    static void NAME##_sweep(int64_t len, int64_t k, const T *x, int64_t incx, const T *m,         \
                             int64_t ld, T *y, int64_t incy)                                       \
    {                                                                                              \
        T buf[STRIP];                                                                              \
        for (int64_t j0 = 0; j0 < len; j0 += STRIP) {                                              \
            int64_t w = len - j0 < STRIP ? len - j0 : STRIP, wv = w / LANES * LANES;               \
            T *out = incy == 1 ? y + j0 : buf;                                                     \
            const T *mj = m + j0;                                                                  \
            __m256i tail =                                                                         \
                _mm256_loadu_si256((const __m256i *)(lane_masks + 8 - (w - wv) * (8 / LANES)));    \
            for (int64_t j = 0; j < w; j++)                                                        \
                out[j] = 0;                                                                        \
            int64_t p = 0;                                                                         \
            for (; p + 4 <= k; p += 4) {                                                           \
                const T *m0 = mj + p * ld, *m1 = m0 + ld, *m2 = m1 + ld, *m3 = m2 + ld;            \
                V x0 = _mm256_set1_##S(x[p * incx]), x1 = _mm256_set1_##S(x[(p + 1) * incx]);      \
                V x2 = _mm256_set1_##S(x[(p + 2) * incx]),                                         \
                  x3 = _mm256_set1_##S(x[(p + 3) * incx]);                                         \
                for (int64_t j = 0; j < wv; j += LANES) {                                          \
                    V acc = _mm256_loadu_##S(out + j);                                             \
                    acc = _mm256_fmadd_##S(x0, _mm256_loadu_##S(m0 + j), acc);                     \
                    acc = _mm256_fmadd_##S(x1, _mm256_loadu_##S(m1 + j), acc);                     \
                    acc = _mm256_fmadd_##S(x2, _mm256_loadu_##S(m2 + j), acc);                     \
                    acc = _mm256_fmadd_##S(x3, _mm256_loadu_##S(m3 + j), acc);                     \
                    _mm256_storeu_##S(out + j, acc);                                               \
                }                                                                                  \
                if (wv < w) {                                                                      \
                    V acc = _mm256_maskload_##S(out + wv, tail);                                   \
                    acc = _mm256_fmadd_##S(x0, _mm256_maskload_##S(m0 + wv, tail), acc);           \
                    acc = _mm256_fmadd_##S(x1, _mm256_maskload_##S(m1 + wv, tail), acc);           \
                    acc = _mm256_fmadd_##S(x2, _mm256_maskload_##S(m2 + wv, tail), acc);           \
                    acc = _mm256_fmadd_##S(x3, _mm256_maskload_##S(m3 + wv, tail), acc);           \
                    _mm256_maskstore_##S(out + wv, tail, acc);                                     \
                }                                                                                  \
            }                                                                                      \
            for (; p < k; p++) {                                                                   \
                const T *m0 = mj + p * ld;                                                         \
                V x0 = _mm256_set1_##S(x[p * incx]);                                               \
                for (int64_t j = 0; j < wv; j += LANES)                                            \
                    _mm256_storeu_##S(out + j, _mm256_fmadd_##S(x0, _mm256_loadu_##S(m0 + j),      \
                                                                _mm256_loadu_##S(out + j)));       \
                if (wv < w)                                                                        \
                    _mm256_maskstore_##S(out + wv, tail,                                           \
                                         _mm256_fmadd_##S(x0, _mm256_maskload_##S(m0 + wv, tail),  \
                                                          _mm256_maskload_##S(out + wv, tail)));   \
            }                                                                                      \
            if (incy != 1)                                                                         \
                for (int64_t j = 0; j < w; j++)                                                    \
                    y[(j0 + j) * incy] = buf[j];                                                   \
        }                                                                                          \
    }
#define GEMV_REGS(NAME, T, V, S, LANES)                                                            \
    static inline __attribute__((always_inline))                                                   \
    V NAME##_row(const T *mp, int v, int NV, __m256i tail)                                         \
    {                                                                                              \
        return v < NV - 1 ? _mm256_loadu_##S(mp + v * LANES)                                       \
                          : _mm256_maskload_##S(mp + v * LANES, tail);                             \
    }                                                                                              \
    /* y[0, w) with C chains of NV vectors each in registers (C * NV <= 8; w in the NV-th          \
     * vector, which alone is read and written through a mask) */                                  \
    static inline __attribute__((always_inline)) void NAME##_regs(                                 \
        int C, int NV, int64_t w, int64_t k, const T *x, int64_t incx, const T *m, int64_t ld,     \
        T *y)                                                                                      \
    {                                                                                              \
        __m256i tail = _mm256_loadu_si256(                                                         \
            (const __m256i *)(lane_masks + 8 - (w - (NV - 1) * LANES) * (8 / LANES)));             \
        V s[8];                                                                                    \
        for (int i = 0; i < C * NV; i++)                                                           \
            s[i] = _mm256_setzero_##S();                                                           \
        int64_t p = 0;                                                                             \
        for (; p + C <= k; p += C)                                                                 \
            for (int c = 0; c < C; c++) {                                                          \
                V xv = _mm256_set1_##S(x[(p + c) * incx]);                                         \
                for (int v = 0; v < NV; v++)                                                       \
                    s[c * NV + v] = _mm256_fmadd_##S(                                              \
                        xv, NAME##_row(m + (p + c) * ld, v, NV, tail), s[c * NV + v]);             \
            }                                                                                      \
        for (int c = 0; c < C && p + c < k; c++) {                                                 \
            V xv = _mm256_set1_##S(x[(p + c) * incx]);                                             \
            for (int v = 0; v < NV; v++)                                                           \
                s[c * NV + v] = _mm256_fmadd_##S(xv, NAME##_row(m + (p + c) * ld, v, NV, tail),    \
                                                 s[c * NV + v]);                                   \
        }                                                                                          \
        for (int v = 0; v < NV; v++) {                                                             \
            V r = s[v];                                                                            \
            if (C == 2)                                                                            \
                r = _mm256_add_##S(s[v], s[NV + v]);                                               \
            if (C == 4)                                                                            \
                r = _mm256_add_##S(_mm256_add_##S(s[v], s[NV + v]),                                \
                                   _mm256_add_##S(s[2 * NV + v], s[3 * NV + v]));                  \
            if (v < NV - 1)                                                                        \
                _mm256_storeu_##S(y + v * LANES, r);                                               \
            else                                                                                   \
                _mm256_maskstore_##S(y + v * LANES, tail, r);                                      \
        }                                                                                          \
    }                                                                                              \
    /* y[0, w) for 0 < w <= 8 * LANES / chains */                                                  \
    static void NAME##_narrow(int chains, int64_t w, int64_t k, const T *x, int64_t incx,          \
                              const T *m, int64_t ld, T *y)                                        \
    {                                                                                              \
        switch (chains * 16 + (int)((w + LANES - 1) / LANES)) {                                    \
        case 4 * 16 + 1:                                                                           \
            NAME##_regs(4, 1, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 4 * 16 + 2:                                                                           \
            NAME##_regs(4, 2, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 2 * 16 + 1:                                                                           \
            NAME##_regs(2, 1, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 2 * 16 + 2:                                                                           \
            NAME##_regs(2, 2, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 2 * 16 + 3:                                                                           \
            NAME##_regs(2, 3, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 2 * 16 + 4:                                                                           \
            NAME##_regs(2, 4, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 1:                                                                           \
            NAME##_regs(1, 1, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 2:                                                                           \
            NAME##_regs(1, 2, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 3:                                                                           \
            NAME##_regs(1, 3, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 4:                                                                           \
            NAME##_regs(1, 4, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 5:                                                                           \
            NAME##_regs(1, 5, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 6:                                                                           \
            NAME##_regs(1, 6, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        case 1 * 16 + 7:                                                                           \
            NAME##_regs(1, 7, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        default:                                                                                   \
            NAME##_regs(1, 8, w, k, x, incx, m, ld, y);                                            \
            break;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    /* the columns in strips of what the registers hold for the chains (any                        \
     * strip gives a column the same sums), a wide product's in one sweep */                       \
    static void NAME(int chains, int64_t len, int64_t k, const T *x, int64_t incx, const T *m,     \
                     int64_t ld, T *y, int64_t incy)                                               \
    {                                                                                              \
        T buf[8 * LANES];                                                                          \
        int64_t strip = 8 * LANES / chains;                                                        \
        if (chains == 1 && len > strip) {                                                          \
            NAME##_sweep(len, k, x, incx, m, ld, y, incy);                                         \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j0 = 0; j0 < len; j0 += strip) {                                              \
            int64_t w = len - j0 < strip ? len - j0 : strip;                                       \
            NAME##_narrow(chains, w, k, x, incx, m + j0, ld, incy == 1 ? y + j0 : buf);            \
            if (incy != 1)                                                                         \
                for (int64_t j = 0; j < w; j++)                                                    \
                    y[(j0 + j) * incy] = buf[j];                                                   \
        }                                                                                          \
    }
GEMV_SWEEP(sgemv_t, float, __m256, ps, 8, 4096)
GEMV_SWEEP(dgemv_t, double, __m256d, pd, 4, 2048)
GEMV_REGS(sgemv_t, float, __m256, ps, 8)
GEMV_REGS(dgemv_t, double, __m256d, pd, 4)

hop__sgemm_small_fn
hop__sgemm_small(void)
{
    static int ok; /* 0: not asked yet; 1 yes; -1 no (a race asks twice) */
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v == 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : -1;
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return v > 0 ? sgemm_small : NULL;
}

void
hop__gemv_t_avx2(hop_dtype dt, int chains, int64_t len, int64_t k, const void *x, int64_t incx,
                 const void *m, int64_t ld, void *y, int64_t incy)
{
    if (dt == HOP_F32)
        sgemv_t(chains, len, k, (const float *)x, incx, (const float *)m, ld, (float *)y, incy);
    else
        dgemv_t(chains, len, k, (const double *)x, incx, (const double *)m, ld, (double *)y, incy);
}
