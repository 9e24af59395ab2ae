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
