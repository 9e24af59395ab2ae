/*
 * runtime/pairwise.h - NumPy 1.24's pairwise summation of floats, the sum
 * its add.reduce takes of each inner loop (numpy/core/src/umath/
 * loops_utils.h.src, pairwise_sum), bit for bit: below 8 elements one
 * accumulator from -0.0, then sequentially; up to 128 eight accumulators
 * started from the first eight elements, element i into r[i % 8] in blocks
 * of 8, combined ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), the
 * rest added sequentially; above 128 the two halves (the first a multiple
 * of 8 elements) summed so and added.  float16 accumulates in float.
 *
 * NumPy's reduction iterator hands its inner loop at most its buffer size
 * (8192) elements at a time, which reduce.c's callers split by
 * (HOP__PW_CHUNK); docs/ARCHITECTURE.md ("Summation order") has the rest.
 *
 * Header-only so that reduce.c and reduce_avx2.c (built with -mavx2, where
 * the eight accumulators are one vector register) compile the same loops.
 */
#ifndef HOP_RUNTIME_PAIRWISE_H
#define HOP_RUNTIME_PAIRWISE_H

#include <stdint.h>

#define HOP__PW_BLOCK 128
#define HOP__PW_CHUNK 8192

/* name(p, n, s): the pairwise sum of p[0], p[s], ... p[(n-1)s] as ACC. */
#define HOP__PAIRWISE(name, T, ACC, LOAD)                                                          \
    static inline ACC name##_block(const T *p, int64_t n, int64_t s)                               \
    {                                                                                              \
        ACC r[8], res;                                                                             \
        int64_t i, end = n - n % 8;                                                                \
        for (int j = 0; j < 8; j++)                                                                \
            r[j] = LOAD(p[j * s]);                                                                 \
        if (s == 1) {                                                                              \
            for (i = 8; i < end; i += 8)                                                           \
                for (int j = 0; j < 8; j++)                                                        \
                    r[j] += LOAD(p[i + j]);                                                        \
        } else {                                                                                   \
            for (i = 8; i < end; i += 8)                                                           \
                for (int j = 0; j < 8; j++)                                                        \
                    r[j] += LOAD(p[(i + j) * s]);                                                  \
        }                                                                                          \
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                   \
        for (; i < n; i++)                                                                         \
            res += LOAD(p[i * s]);                                                                 \
        return res;                                                                                \
    }                                                                                              \
    static ACC name##_split(const T *p, int64_t n, int64_t s);                                     \
    static inline ACC name(const T *p, int64_t n, int64_t s)                                       \
    {                                                                                              \
        if (n < 8) {                                                                               \
            ACC res = -0.0; /* NumPy's: a sum of -0.0 is -0.0 */                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                res += LOAD(p[i * s]);                                                             \
            return res;                                                                            \
        }                                                                                          \
        if (n <= HOP__PW_BLOCK)                                                                    \
            return name##_block(p, n, s);                                                          \
        return name##_split(p, n, s);                                                              \
    }                                                                                              \
    /* (the halves' call; the small cases above inline into their caller) */                       \
    static ACC name##_split(const T *p, int64_t n, int64_t s)                                      \
    {                                                                                              \
        int64_t n2 = n / 2;                                                                        \
        n2 -= n2 % 8;                                                                              \
        return name(p, n2, s) + name(p + n2 * s, n - n2, s);                                       \
    }

/* name##_chunked(p, n, s): NumPy's sum of one inner block of n elements:
 * from 0, each chunk of HOP__PW_CHUNK elements from the block's start
 * summed pairwise and added, the running total rounded by ROUND (float16's
 * is stored as float16 after each inner loop). */
#define HOP__PAIRWISE_CHUNKED(name, T, ACC, ROUND)                                                 \
    static inline ACC name##_chunked(const T *p, int64_t n, int64_t s, ACC out)                    \
    {                                                                                              \
        for (int64_t k = 0; k < n; k += HOP__PW_CHUNK)                                             \
            out = ROUND(out + name(p + k * s, n - k < HOP__PW_CHUNK ? n - k : HOP__PW_CHUNK, s));  \
        return out;                                                                                \
    }

/* name(p, m, s, rr, ri): NumPy's complex pairwise sum (loops_utils.h.src, @TYPE@_pairwise_sum) of
 * m complex elements p[2 * i * s] + i p[2 * i * s + 1], in T: below 4
 * elements one accumulator per part from -0.0; up to 64 four per part from
 * the first four, element i into r[i % 4], combined (r0 + r1) + (r2 + r3),
 * the rest added one by one; above 64 the two halves, the first a multiple
 * of 4 elements.  (NumPy counts in floats: n = 2 m, blocks of 8 and 128.) */
#define HOP__CPAIRWISE(name, T)                                                                    \
    static void name(const T *p, int64_t m, int64_t s, T *rr, T *ri)                               \
    {                                                                                              \
        if (m < 4) {                                                                               \
            T re = -0.0, im = -0.0;                                                                \
            for (int64_t i = 0; i < m; i++) {                                                      \
                re += p[2 * i * s];                                                                \
                im += p[2 * i * s + 1];                                                            \
            }                                                                                      \
            *rr = re;                                                                              \
            *ri = im;                                                                              \
            return;                                                                                \
        }                                                                                          \
        if (m <= 64) {                                                                             \
            T r[8];                                                                                \
            for (int j = 0; j < 4; j++) {                                                          \
                r[2 * j] = p[2 * j * s];                                                           \
                r[2 * j + 1] = p[2 * j * s + 1];                                                   \
            }                                                                                      \
            int64_t i = 4;                                                                         \
            for (; i < m - (m % 4); i += 4)                                                        \
                for (int j = 0; j < 4; j++) {                                                      \
                    r[2 * j] += p[2 * (i + j) * s];                                                \
                    r[2 * j + 1] += p[2 * (i + j) * s + 1];                                        \
                }                                                                                  \
            T re = (r[0] + r[2]) + (r[4] + r[6]), im = (r[1] + r[3]) + (r[5] + r[7]);              \
            for (; i < m; i++) {                                                                   \
                re += p[2 * i * s];                                                                \
                im += p[2 * i * s + 1];                                                            \
            }                                                                                      \
            *rr = re;                                                                              \
            *ri = im;                                                                              \
            return;                                                                                \
        }                                                                                          \
        int64_t m1 = (m - m % 8) / 2;                                                              \
        T r1, i1, r2, i2;                                                                          \
        name(p, m1, s, &r1, &i1);                                                                  \
        name(p + 2 * m1 * s, m - m1, s, &r2, &i2);                                                 \
        *rr = r1 + r2;                                                                             \
        *ri = i1 + i2;                                                                             \
    }

#define HOP__PW_LOAD(v) (v)
#define HOP__PW_LOAD_HALF(v) hop_f16_to_float(v)
#define HOP__PW_ROUND(v) (v)
#define HOP__PW_ROUND_HALF(v) hop_f16_to_float(hop_f16_from_float(v))

#endif
