/*
 * runtime/reduce_avx2.c - sum, mean, amax and amin of f32/f64 rows that are
 * contiguous (softmax's row max and row sum): reduce.c's one-run fast path
 * with its lanes in AVX registers, several rows at a time.
 *
 * The results are the fast path's bits exactly: a sum adds the elements in
 * four f64 lanes (element i into lane i % 4, f32 widened exactly first),
 * the tail into lane 0, then (l0 + l1) + (l2 + l3); amax/amin keep eight
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

/* R rows' sums (or means) of n elements each, accumulated in doubles four
 * lanes at a time (LOAD4: four elements of T as doubles); the tail [i, n)
 * goes into lane 0, then (l0 + l1) + (l2 + l3). */
#define SUM_ROWS(T, LOAD4)                                                                         \
    static inline __attribute__((always_inline))                                                   \
    T sum_finish_##T(__m256d acc, const T *p, int64_t i, int64_t n, bool mean)                     \
    {                                                                                              \
        double l[4];                                                                               \
        _mm256_storeu_pd(l, acc);                                                                  \
        for (; i < n; i++)                                                                         \
            l[0] += p[i];                                                                          \
        double total = (l[0] + l[1]) + (l[2] + l[3]);                                              \
        return (T)(mean ? total / (double)n : total);                                              \
    }                                                                                              \
    static inline __attribute__((always_inline)) void sum_rows_##T(                                \
        int R, const T *x, int64_t xs, int64_t n, bool mean, T *out, int64_t os)                   \
    {                                                                                              \
        __m256d acc[4];                                                                            \
        for (int r = 0; r < R; r++)                                                                \
            acc[r] = _mm256_setzero_pd();                                                          \
        int64_t i = 0;                                                                             \
        for (; i + 4 <= n; i += 4)                                                                 \
            for (int r = 0; r < R; r++)                                                            \
                acc[r] = _mm256_add_pd(acc[r], LOAD4(x + r * xs + i));                             \
        for (int r = 0; r < R; r++)                                                                \
            out[r * os] = sum_finish_##T(acc[r], x + r * xs, i, n, mean);                          \
    }
#define LOAD4_FLOAT(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
SUM_ROWS(float, LOAD4_FLOAT)
SUM_ROWS(double, _mm256_loadu_pd)

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
