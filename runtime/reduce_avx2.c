/*
 * runtime/reduce_avx2.c - sum, mean, amax and amin of f32/f64 rows that are
 * contiguous (softmax's row max and row sum): reduce.c's one-run fast path
 * with its lanes in AVX registers, several rows (or a long row's pairwise
 * leaves) at a time; and sums down contiguous rows (a kept dim innermost)
 * with the outputs in registers.
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

/*
 * Sums in NumPy's order (pairwise.h), contiguous.  Above HOP__PW_BLOCK the
 * recursion splits a run into leaves of 64 to 128 elements, each summed by
 * eight accumulators, and adds the leaves' sums in a tree.  pairwise.h's
 * loops wait on each add's latency (eight accumulators are one or two
 * dependent vector chains); here the leaves are listed first, summed four
 * at a time as independent chains (lane j of a leaf's register pairwise.h's
 * r[j]), and the tree is walked over their sums: the same adds in the same
 * order, so the same bits.  A chunk (HOP__PW_CHUNK elements) has at most
 * LEAVES leaves since every leaf of a split run has more than 63 elements.
 */
#define LEAVES 128
_Static_assert(HOP__PW_CHUNK / 64 <= LEAVES, "a chunk has more leaves than LEAVES");

/* The leaves of the run [off, off + n) (n > 7) appended from lo[k], len[k];
 * returns the new count. */
static int
list_leaves(int64_t off, int64_t n, int64_t *lo, int64_t *len, int k)
{
    if (n <= HOP__PW_BLOCK) {
        lo[k] = off;
        len[k] = n;
        return k + 1;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8; /* pairwise.h's split */
    k = list_leaves(off, n2, lo, len, k);
    return list_leaves(off + n2, n - n2, lo, len, k);
}

/* The leaves' lockstep part: their common whole blocks of 8 from 8 on */
static inline __attribute__((always_inline)) int64_t
common_blocks(int R, const int64_t *n, int64_t *end)
{
    int64_t common = INT64_MAX;
    for (int r = 0; r < R; r++) {
        end[r] = n[r] - n[r] % 8;
        common = end[r] < common ? end[r] : common;
    }
    return common;
}

/* res[r]: pairwise.h's block sum of the n[r] (8 to 128) elements at p[r] */
static inline __attribute__((always_inline)) void
leaves_float(int R, const float *const *p, const int64_t *n, float *res)
{
    __m256 acc[4];
    int64_t i, end[4], common = common_blocks(R, n, end);
    for (int r = 0; r < R; r++)
        acc[r] = _mm256_loadu_ps(p[r]);
    for (i = 8; i < common; i += 8)
        for (int r = 0; r < R; r++)
            acc[r] = _mm256_add_ps(acc[r], _mm256_loadu_ps(p[r] + i));
    for (int r = 0; r < R; r++) {
        for (int64_t k = i; k < end[r]; k += 8)
            acc[r] = _mm256_add_ps(acc[r], _mm256_loadu_ps(p[r] + k));
        /* ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) in the register */
        __m256 h = _mm256_hadd_ps(acc[r], acc[r]);
        h = _mm256_hadd_ps(h, h);
        float t = _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
        for (int64_t k = end[r]; k < n[r]; k++)
            t += p[r][k];
        res[r] = t;
    }
}

static inline __attribute__((always_inline)) void
leaves_double(int R, const double *const *p, const int64_t *n, double *res)
{
    __m256d lo[4], hi[4]; /* lanes 0-3 and 4-7 */
    int64_t i, end[4], common = common_blocks(R, n, end);
    for (int r = 0; r < R; r++) {
        lo[r] = _mm256_loadu_pd(p[r]);
        hi[r] = _mm256_loadu_pd(p[r] + 4);
    }
    for (i = 8; i < common; i += 8)
        for (int r = 0; r < R; r++) {
            lo[r] = _mm256_add_pd(lo[r], _mm256_loadu_pd(p[r] + i));
            hi[r] = _mm256_add_pd(hi[r], _mm256_loadu_pd(p[r] + i + 4));
        }
    for (int r = 0; r < R; r++) {
        for (int64_t k = i; k < end[r]; k += 8) {
            lo[r] = _mm256_add_pd(lo[r], _mm256_loadu_pd(p[r] + k));
            hi[r] = _mm256_add_pd(hi[r], _mm256_loadu_pd(p[r] + k + 4));
        }
        /* (r0 + r1, r4 + r5, r2 + r3, r6 + r7), then its halves added */
        __m256d h = _mm256_hadd_pd(lo[r], hi[r]);
        __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
        double t = _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
        for (int64_t k = end[r]; k < n[r]; k++)
            t += p[r][k];
        res[r] = t;
    }
}

/* pw_T(p, n): pairwise.h's sum of p[0..n) (n <= HOP__PW_CHUNK); pw_T_chunked:
 * NumPy's sum of one inner loop of n elements from out (pairwise.h's). */
#define PAIRWISE_FAST(T)                                                                           \
    static T tree_##T(const T *sum, int *k, int64_t n)                                             \
    {                                                                                              \
        if (n <= HOP__PW_BLOCK)                                                                    \
            return sum[(*k)++];                                                                    \
        int64_t n2 = n / 2;                                                                        \
        n2 -= n2 % 8;                                                                              \
        T left = tree_##T(sum, k, n2);                                                             \
        return left + tree_##T(sum, k, n - n2);                                                    \
    }                                                                                              \
    static T pw_##T(const T *p, int64_t n)                                                         \
    {                                                                                              \
        if (n < 8) {                                                                               \
            T t = -0.0; /* pairwise.h's one accumulator */                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                t += p[i];                                                                         \
            return t;                                                                              \
        }                                                                                          \
        int64_t lo[LEAVES], len[LEAVES];                                                           \
        T sum[LEAVES];                                                                             \
        const T *lp[4];                                                                            \
        if (n > HOP__PW_BLOCK && (n & (n - 1)) == 0) {                                             \
            /* a whole chunk: a perfect tree over leaves of 128, its levels                        \
             * paired in place (the recursion's adds, without its calls) */                        \
            int nl = (int)(n / HOP__PW_BLOCK), R = nl < 4 ? nl : 4;                                \
            for (int r = 0; r < R; r++)                                                            \
                len[r] = HOP__PW_BLOCK;                                                            \
            for (int k = 0; k < nl; k += R) {                                                      \
                for (int r = 0; r < R; r++)                                                        \
                    lp[r] = p + (k + r) * HOP__PW_BLOCK;                                           \
                if (R == 4)                                                                        \
                    leaves_##T(4, lp, len, sum + k);                                               \
                else                                                                               \
                    leaves_##T(2, lp, len, sum + k);                                               \
            }                                                                                      \
            for (int w = nl; w > 1; w /= 2)                                                        \
                for (int i = 0; i < w / 2; i++)                                                    \
                    sum[i] = sum[2 * i] + sum[2 * i + 1];                                          \
            return sum[0];                                                                         \
        }                                                                                          \
        int nl = list_leaves(0, n, lo, len, 0), k = 0;                                             \
        for (; k + 4 <= nl; k += 4) {                                                              \
            for (int r = 0; r < 4; r++)                                                            \
                lp[r] = p + lo[k + r];                                                             \
            leaves_##T(4, lp, len + k, sum + k);                                                   \
        }                                                                                          \
        for (; k < nl; k++) {                                                                      \
            lp[0] = p + lo[k];                                                                     \
            leaves_##T(1, lp, len + k, sum + k);                                                   \
        }                                                                                          \
        k = 0;                                                                                     \
        return tree_##T(sum, &k, n);                                                               \
    }                                                                                              \
    static T pw_##T##_chunked(const T *p, int64_t n, T out)                                        \
    {                                                                                              \
        for (int64_t k = 0; k < n; k += HOP__PW_CHUNK)                                             \
            out = out + pw_##T(p + k, n - k < HOP__PW_CHUNK ? n - k : HOP__PW_CHUNK);              \
        return out;                                                                                \
    }
PAIRWISE_FAST(float)
PAIRWISE_FAST(double)

/* pairwise.h's own recursion, built here with AVX2 (long_rows_T) */
HOP__PAIRWISE(pwr_float, float, float, HOP__PW_LOAD)
HOP__PAIRWISE_CHUNKED(pwr_float, float, float, HOP__PW_ROUND)
HOP__PAIRWISE(pwr_double, double, double, HOP__PW_LOAD)
HOP__PAIRWISE_CHUNKED(pwr_double, double, double, HOP__PW_ROUND)

/* R rows' sums of n (> 128) elements each, into total: a single row (a
 * full sum) by pw_T's leaves, several by pairwise.h's recursion (pw_T's
 * leaf list costs more per row than it saves there: 300-element f64 rows
 * took 5.8x as long, 1,000-element ones 4.4x) */
#define LONG_ROWS(T)                                                                               \
    static __attribute__((noinline)) void long_rows_##T(int R, const T *x, int64_t xs, int64_t n,  \
                                                        T *total)                                  \
    {                                                                                              \
        if (R == 1) {                                                                              \
            total[0] = pw_##T##_chunked(x, n, 0);                                                  \
            return;                                                                                \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            total[r] = pwr_##T##_chunked(x + r * xs, n, 1, 0);                                     \
    }
LONG_ROWS(float)
LONG_ROWS(double)

/* R rows' sums (or means) of n elements each, each row one inner loop of
 * NumPy's.  Rows of 8 to 128 elements are one leaf each, R at once. */
#define SUM_ROWS(T)                                                                                \
    static inline __attribute__((always_inline)) void sum_rows_##T(                                \
        int R, const T *x, int64_t xs, int64_t n, bool mean, T *out, int64_t os)                   \
    {                                                                                              \
        T total[4];                                                                                \
        if (n < 8) { /* short rows inline (a call per row cost 3.6x, rk41) */                      \
            for (int r = 0; r < R; r++) {                                                          \
                T t = -0.0; /* pairwise.h's one accumulator */                                     \
                for (int64_t k = 0; k < n; k++)                                                    \
                    t += x[r * xs + k];                                                            \
                total[r] = 0 + t;                                                                  \
            }                                                                                      \
        } else if (n > HOP__PW_BLOCK) {                                                            \
            long_rows_##T(R, x, xs, n, total);                                                     \
        } else {                                                                                   \
            const T *p[4];                                                                         \
            int64_t len[4];                                                                        \
            for (int r = 0; r < R; r++) {                                                          \
                p[r] = x + r * xs;                                                                 \
                len[r] = n;                                                                        \
            }                                                                                      \
            leaves_##T(R, p, len, total);                                                          \
            for (int r = 0; r < R; r++)                                                            \
                total[r] = 0 + total[r]; /* (NumPy's output starts at 0) */                        \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            out[r * os] = mean ? (T)(total[r] / (double)n) : total[r];                             \
    }
SUM_ROWS(float)
SUM_ROWS(double)

/* Outputs [begin, end) of contiguous x summed down n rows s apart (a kept
 * dim innermost: each output element by element from 0, row 0 first, as
 * reduce.c's down loop), 16 (f64) or 32 (f32) outputs in registers over
 * DOWN_ROWS rows at a time, DOWN_COLS outputs going down all the rows
 * while they stay in L1; the rest, and a mean's division, in C. */
#define DOWN_ROWS 8
#define DOWN_COLS 512
#define DOWN(T, V, L, ZERO, LOAD, ADD, STORE)                                                      \
    static void down_##T(const T *x, int64_t n, int64_t s, bool mean, T *out, int64_t begin,       \
                         int64_t end)                                                              \
    {                                                                                              \
        for (int64_t b = begin; b < end; b += DOWN_COLS) {                                         \
            int64_t e = end - b < DOWN_COLS ? end : b + DOWN_COLS, o = b;                          \
            for (; o + 4 * L <= e; o += 4 * L) {                                                   \
                V a[4] = {ZERO, ZERO, ZERO, ZERO};                                                 \
                for (int64_t i = 0; i < n; i += DOWN_ROWS) {                                       \
                    int64_t stop = n - i < DOWN_ROWS ? n : i + DOWN_ROWS;                          \
                    for (int64_t k = i; k < stop; k++)                                             \
                        for (int j = 0; j < 4; j++)                                                \
                            a[j] = ADD(a[j], LOAD(x + k * s + o + j * L));                         \
                }                                                                                  \
                for (int j = 0; j < 4; j++)                                                        \
                    STORE(out + o + j * L, a[j]);                                                  \
            }                                                                                      \
            for (; o < e; o++) {                                                                   \
                T t = 0;                                                                           \
                for (int64_t k = 0; k < n; k++)                                                    \
                    t += x[k * s + o];                                                             \
                out[o] = t;                                                                        \
            }                                                                                      \
            if (mean)                                                                              \
                for (o = b; o < e; o++)                                                            \
                    out[o] = (T)(out[o] / (double)n);                                              \
        }                                                                                          \
    }
DOWN(float, __m256, 8, _mm256_setzero_ps(), _mm256_loadu_ps, _mm256_add_ps, _mm256_storeu_ps)
DOWN(double, __m256d, 4, _mm256_setzero_pd(), _mm256_loadu_pd, _mm256_add_pd, _mm256_storeu_pd)

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

static const hop__rrows avx2_rows = {sum_f32, sum_f64, ext_f32, ext_f64, down_float, down_double};

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
