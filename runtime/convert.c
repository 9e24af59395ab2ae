/*
 * runtime/convert.c - dtype conversion of strided runs into contiguous
 * buffers (the elementwise engine's gather), strided scatter, and reading
 * one element as double or int64.
 *
 * Conversions never hit C undefined behaviour: float to integer truncates
 * toward zero and saturates (nan gives 0), integer to narrower integer wraps
 * (two's complement), anything to bool is x != 0 and bool reads as 0 or 1
 * whatever byte the memory holds.
 */
#include "runtime/runtime.h"

#include <math.h>

static inline int32_t
f2i32(double v)
{
    if (isnan(v))
        return 0;
    if (v <= (double)INT32_MIN)
        return INT32_MIN;
    if (v >= (double)INT32_MAX)
        return INT32_MAX;
    return (int32_t)v;
}

static inline int64_t
f2i64(double v)
{
    if (isnan(v))
        return 0;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    return (int64_t)v;
}

/* Integer to i32: keep the low 32 bits (defined through unsigned). */
static inline int32_t
wrap32(int64_t v)
{
    uint32_t u = (uint32_t)(uint64_t)v;
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

/* Per destination type D, from source value x of the source type. */
#define TO_BOOL(x) ((hop__bool)((x) != 0))
#define BOOL_IN(x) ((x) != 0)

#define CONVERT_LOOP(DT, ST, EXPR)                                                                 \
    do {                                                                                           \
        DT *d = dst;                                                                               \
        const ST *s = src;                                                                         \
        if (stride == 1) {                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                      \
                ST x = s[i];                                                                       \
                d[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                ST x = s[i * stride];                                                              \
                d[i] = (EXPR);                                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Copies n elements of esize bytes with a source stride (same dtype). */
static void
gather_same(int64_t n, void *dst, const void *src, int64_t stride, size_t esize)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    switch (esize) {
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i * stride];
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i * stride];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i * stride];
        break;
    }
}

void
hop__convert(int64_t n, void *dst, hop_dtype dt, const void *src, hop_dtype st, int64_t stride)
{
    if (dt == st && st != HOP_BOOL) {
        gather_same(n, dst, src, stride, hop_dtype_size(dt));
        return;
    }
#define PAIR(a, b) ((int)(a)*HOP_DTYPE_COUNT + (int)(b))
    switch (PAIR(dt, st)) {
    case PAIR(HOP_BOOL, HOP_BOOL):
        CONVERT_LOOP(hop__bool, hop__bool, TO_BOOL(x));
        break;
    case PAIR(HOP_BOOL, HOP_I32):
        CONVERT_LOOP(hop__bool, int32_t, TO_BOOL(x));
        break;
    case PAIR(HOP_BOOL, HOP_I64):
        CONVERT_LOOP(hop__bool, int64_t, TO_BOOL(x));
        break;
    case PAIR(HOP_BOOL, HOP_F32):
        CONVERT_LOOP(hop__bool, float, TO_BOOL(x));
        break;
    case PAIR(HOP_BOOL, HOP_F64):
        CONVERT_LOOP(hop__bool, double, TO_BOOL(x));
        break;
    case PAIR(HOP_I32, HOP_BOOL):
        CONVERT_LOOP(int32_t, hop__bool, BOOL_IN(x));
        break;
    case PAIR(HOP_I32, HOP_I64):
        CONVERT_LOOP(int32_t, int64_t, wrap32(x));
        break;
    case PAIR(HOP_I32, HOP_F32):
        CONVERT_LOOP(int32_t, float, f2i32(x));
        break;
    case PAIR(HOP_I32, HOP_F64):
        CONVERT_LOOP(int32_t, double, f2i32(x));
        break;
    case PAIR(HOP_I64, HOP_BOOL):
        CONVERT_LOOP(int64_t, hop__bool, BOOL_IN(x));
        break;
    case PAIR(HOP_I64, HOP_I32):
        CONVERT_LOOP(int64_t, int32_t, x);
        break;
    case PAIR(HOP_I64, HOP_F32):
        CONVERT_LOOP(int64_t, float, f2i64(x));
        break;
    case PAIR(HOP_I64, HOP_F64):
        CONVERT_LOOP(int64_t, double, f2i64(x));
        break;
    case PAIR(HOP_F32, HOP_BOOL):
        CONVERT_LOOP(float, hop__bool, (float)BOOL_IN(x));
        break;
    case PAIR(HOP_F32, HOP_I32):
        CONVERT_LOOP(float, int32_t, (float)x);
        break;
    case PAIR(HOP_F32, HOP_I64):
        CONVERT_LOOP(float, int64_t, (float)x);
        break;
    case PAIR(HOP_F32, HOP_F64):
        CONVERT_LOOP(float, double, (float)x);
        break;
    case PAIR(HOP_F64, HOP_BOOL):
        CONVERT_LOOP(double, hop__bool, (double)BOOL_IN(x));
        break;
    case PAIR(HOP_F64, HOP_I32):
        CONVERT_LOOP(double, int32_t, (double)x);
        break;
    case PAIR(HOP_F64, HOP_I64):
        CONVERT_LOOP(double, int64_t, (double)x);
        break;
    case PAIR(HOP_F64, HOP_F32):
        CONVERT_LOOP(double, float, (double)x);
        break;
    default:
        break;
    }
#undef PAIR
}

void
hop__scatter(int64_t n, void *dst, int64_t stride, const void *src, size_t esize)
{
    switch (esize) {
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i * stride] = ((const uint8_t *)src)[i];
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i * stride] = ((const uint32_t *)src)[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)dst)[i * stride] = ((const uint64_t *)src)[i];
        break;
    }
}

double
hop__load_f64(const void *p, hop_dtype dt)
{
    double v;
    hop__convert(1, &v, HOP_F64, p, dt, 1);
    return v;
}

int64_t
hop__load_i64(const void *p, hop_dtype dt)
{
    int64_t v;
    hop__convert(1, &v, HOP_I64, p, dt, 1);
    return v;
}
