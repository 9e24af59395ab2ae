/*
 * runtime/reduce_avx2.c - sum, mean, amax and amin of f32/f64 rows that are
 * contiguous (softmax's row max and row sum): reduce.c's one-run fast path
 * with its lanes in AVX registers, several rows at a time.
 *
 * The results are the fast path's bits exactly: a sum adds in NumPy's
 * order (pairwise.h, the row one inner loop of NumPy's); amax/amin keep eight
 * running extremes (element i into lane i % 8, each lane started from the
 * row's first element, `v > m ? v : m` being MAXPS's own rule, so signed
 * zeros and nans come out as in C), combined from lane 0 up, then the
 * tail; the first nan of a row when it has one.  Rows are independent
 * chains, so taking four at once only hides the adds' latency.
 *
 * Compiled with -mavx2 only (runtime/CMakeLists.txt); hop__reduce_rows says
 * whether this CPU can run it.
 */
#include "runtime/runtime.h"

#include "runtime/pairwise.h"

#include <immintrin.h>

/* lanes m[0..7] combined from lane 0 up, then elements [i, n) of p */
#define FINISH(T)                                                                                  \
    static inline __attribute__((always_inline))                                                   \
    T finish_##T(const T *m, bool nan, const T *p, int64_t i, int64_t n, int sign)                 \
    {                                                                                              \
        T best = m[0];                                                                             \
        for (int j = 1; j < 8; j++)                                                                \
            best = sign > 0 ? (m[j] > best ? m[j] : best) : (m[j] < best ? m[j] : best);           \
        for (; i < n; i++) {                                                                       \
            T v = p[i];                                                                            \
            best = sign > 0 ? (v > best ? v : best) : (v < best ? v : best);                       \
            nan |= v != v;                                                                         \
        }                                                                                          \
        if (nan || best != best) {                                                                 \
            for (i = 0; i < n; i++)                                                                \
                if (p[i] != p[i])                                                                  \
                    return p[i];                                                                   \
        }                                                                                          \
        return best;                                                                               \
    }
FINISH(float)
FINISH(double)

/* R (1..4) rows of n f32 elements from x (row stride xs) */
static inline __attribute__((always_inline)) void
ext_f32_rows(int R, const float *x, int64_t xs, int64_t n, int sign, float *out, int64_t os)
{
    __m256 m[4], bad[4];
    for (int r = 0; r < R; r++) {
        m[r] = _mm256_set1_ps(x[r * xs]);
        bad[r] = _mm256_setzero_ps();
    }
    int64_t i = 0;
    /* OP(v, m): v > m ? v : m for max, v < m ? v : m for min; the sign's
     * test stays out of the loop */
#define BLOCKS(OP)                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
        for (int r = 0; r < R; r++) {                                                              \
            __m256 v = _mm256_loadu_ps(x + r * xs + i);                                            \
            m[r] = OP(v, m[r]);                                                                    \
            bad[r] = _mm256_or_ps(bad[r], _mm256_cmp_ps(v, v, _CMP_UNORD_Q));                      \
        }
    if (sign > 0)
        BLOCKS(_mm256_max_ps)
    else
        BLOCKS(_mm256_min_ps)
#undef BLOCKS
    for (int r = 0; r < R; r++) {
        float lanes[8];
        _mm256_storeu_ps(lanes, m[r]);
        out[r * os] = finish_float(lanes, _mm256_movemask_ps(bad[r]) != 0, x + r * xs, i, n, sign);
    }
}

static inline __attribute__((always_inline)) void
ext_f64_rows(int R, const double *x, int64_t xs, int64_t n, int sign, double *out, int64_t os)
{
    __m256d lo[4], hi[4], bad[4]; /* lanes 0-3 and 4-7 */
    for (int r = 0; r < R; r++) {
        lo[r] = hi[r] = _mm256_set1_pd(x[r * xs]);
        bad[r] = _mm256_setzero_pd();
    }
    int64_t i = 0;
    /* as ext_f32_rows; unordered(a, b): a nan in either */
#define BLOCKS(OP)                                                                                 \
    for (; i + 8 <= n; i += 8)                                                                     \
        for (int r = 0; r < R; r++) {                                                              \
            __m256d a = _mm256_loadu_pd(x + r * xs + i), b = _mm256_loadu_pd(x + r * xs + i + 4);  \
            lo[r] = OP(a, lo[r]);                                                                  \
            hi[r] = OP(b, hi[r]);                                                                  \
            bad[r] = _mm256_or_pd(bad[r], _mm256_cmp_pd(a, b, _CMP_UNORD_Q));                      \
        }
    if (sign > 0)
        BLOCKS(_mm256_max_pd)
    else
        BLOCKS(_mm256_min_pd)
#undef BLOCKS
    for (int r = 0; r < R; r++) {
        double lanes[8];
        _mm256_storeu_pd(lanes, lo[r]);
        _mm256_storeu_pd(lanes + 4, hi[r]);
        out[r * os] = finish_double(lanes, _mm256_movemask_pd(bad[r]) != 0, x + r * xs, i, n, sign);
    }
}

/* R rows' sums (or means) of n elements each in NumPy's order, each row
 * one inner loop of NumPy's: pairwise.h's chunks.  A row of 8 to 128
 * elements is one block of eight accumulators, here one vector register
 * (two for f64) per row, R rows at once to hide the adds' latency, lane j
 * combined as pairwise.h's r[j]. */
HOP__PAIRWISE(pw_f32, float, float, HOP__PW_LOAD)
HOP__PAIRWISE_CHUNKED(pw_f32, float, float, HOP__PW_ROUND)
HOP__PAIRWISE(pw_f64, double, double, HOP__PW_LOAD)
HOP__PAIRWISE_CHUNKED(pw_f64, double, double, HOP__PW_ROUND)

static inline __attribute__((always_inline)) void
block_rows_float(int R, const float *x, int64_t xs, int64_t n, float *res)
{
    __m256 acc[4];
    int64_t i, end = n - n % 8;
    for (int r = 0; r < R; r++)
        acc[r] = _mm256_loadu_ps(x + r * xs);
    for (i = 8; i < end; i += 8)
        for (int r = 0; r < R; r++)
            acc[r] = _mm256_add_ps(acc[r], _mm256_loadu_ps(x + r * xs + i));
    for (int r = 0; r < R; r++) {
        /* ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) in the register */
        __m256 h = _mm256_hadd_ps(acc[r], acc[r]);
        h = _mm256_hadd_ps(h, h);
        float t = _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
        for (int64_t k = i; k < n; k++)
            t += x[r * xs + k];
        res[r] = t;
    }
}

static inline __attribute__((always_inline)) void
block_rows_double(int R, const double *x, int64_t xs, int64_t n, double *res)
{
    __m256d lo[4], hi[4]; /* lanes 0-3 and 4-7 */
    int64_t i, end = n - n % 8;
    for (int r = 0; r < R; r++) {
        lo[r] = _mm256_loadu_pd(x + r * xs);
        hi[r] = _mm256_loadu_pd(x + r * xs + 4);
    }
    for (i = 8; i < end; i += 8)
        for (int r = 0; r < R; r++) {
            lo[r] = _mm256_add_pd(lo[r], _mm256_loadu_pd(x + r * xs + i));
            hi[r] = _mm256_add_pd(hi[r], _mm256_loadu_pd(x + r * xs + i + 4));
        }
    for (int r = 0; r < R; r++) {
        /* (r0 + r1, r4 + r5, r2 + r3, r6 + r7), then its halves added */
        __m256d h = _mm256_hadd_pd(lo[r], hi[r]);
        __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
        double t = _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
        for (int64_t k = i; k < n; k++)
            t += x[r * xs + k];
        res[r] = t;
    }
}

#define SUM_ROWS(T, PW)                                                                            \
    static inline __attribute__((always_inline)) void sum_rows_##T(                                \
        int R, const T *x, int64_t xs, int64_t n, bool mean, T *out, int64_t os)                   \
    {                                                                                              \
        T total[4];                                                                                \
        if (n < 8) {                                                                               \
            for (int r = 0; r < R; r++) {                                                          \
                T t = -0.0; /* pairwise.h's one accumulator */                                     \
                for (int64_t k = 0; k < n; k++)                                                    \
                    t += x[r * xs + k];                                                            \
                total[r] = 0 + t;                                                                  \
            }                                                                                      \
        } else if (n <= HOP__PW_BLOCK) {                                                           \
            block_rows_##T(R, x, xs, n, total);                                                    \
            for (int r = 0; r < R; r++)                                                            \
                total[r] = 0 + total[r]; /* (NumPy's output starts at 0) */                        \
        } else {                                                                                   \
            for (int r = 0; r < R; r++)                                                            \
                total[r] = PW##_chunked(x + r * xs, n, 1, 0);                                      \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            out[r * os] = mean ? (T)(total[r] / (double)n) : total[r];                             \
    }
SUM_ROWS(float, pw_f32)
SUM_ROWS(double, pw_f64)

/* rows of the op four at a time, then the last one to three */
#define ROWS(name, T, KERNEL, ARG_T)                                                               \
    static void name(const T *x, int64_t xs, int64_t n, ARG_T arg, T *out, int64_t os,             \
                     int64_t rows)                                                                 \
    {                                                                                              \
        int64_t r = 0;                                                                             \
        for (; r + 4 <= rows; r += 4)                                                              \
            KERNEL(4, x + r * xs, xs, n, arg, out + r * os, os);                                   \
        switch (rows - r) {                                                                        \
        case 3:                                                                                    \
            KERNEL(3, x + r * xs, xs, n, arg, out + r * os, os);                                   \
            break;                                                                                 \
        case 2:                                                                                    \
            KERNEL(2, x + r * xs, xs, n, arg, out + r * os, os);                                   \
            break;                                                                                 \
        case 1:                                                                                    \
            KERNEL(1, x + r * xs, xs, n, arg, out + r * os, os);                                   \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
ROWS(sum_f32, float, sum_rows_float, bool)
ROWS(sum_f64, double, sum_rows_double, bool)
ROWS(ext_f32, float, ext_f32_rows, int)
ROWS(ext_f64, double, ext_f64_rows, int)

static const hop__rrows avx2_rows = {sum_f32, sum_f64, ext_f32, ext_f64};

const hop__rrows *
hop__reduce_rows_avx2(void)
{
    static int ok; /* 0: not asked yet; 1 yes; -1 no (a race asks twice) */
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v == 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") ? 1 : -1;
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return v > 0 ? &avx2_rows : NULL;
}
