/*
 * runtime/convert.c - dtype conversion of strided runs into contiguous
 * buffers (the elementwise engine's gather), strided scatter, and reading
 * one element as double or int64.
 *
 * Conversions never hit C undefined behaviour: float to integer truncates
 * toward zero and saturates (nan gives 0), integer to narrower integer wraps
 * (two's complement), anything to bool is x != 0 and bool reads as 0 or 1
 * whatever byte the memory holds.  binary16 goes through float (exact) on
 * the way in and is rounded to nearest even on the way out.
 */
#include "runtime/runtime.h"

#include <math.h>

/* Float to integer: truncate toward zero, saturate to [lo, hi], nan -> 0.
 * The comparisons are exact: every bound is a double (INT64_MAX rounds to
 * 2^63, and a v below it truncates into range). */
static inline int64_t
sat_i(double v, int64_t lo, int64_t hi)
{
    if (isnan(v))
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

static inline uint64_t
sat_u(double v, uint64_t hi)
{
    if (isnan(v) || v <= 0)
        return 0;
    if (v >= (double)hi)
        return hi;
    return (uint64_t)v;
}

/* The low `bits` bits of u as a two's complement value: defined for every
 * u, where a narrowing cast to a signed type is implementation-defined. */
static inline int64_t
wrap_s(uint64_t u, int bits)
{
    if (bits < 64) {
        uint64_t half = (uint64_t)1 << (bits - 1);
        u &= ((uint64_t)1 << bits) - 1;
        return u >= half ? (int64_t)(u - half) - (int64_t)half : (int64_t)u;
    }
    return u <= INT64_MAX ? (int64_t)u : (int64_t)(u - 9223372036854775808u) + INT64_MIN;
}

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

/*
 * The cases of one destination type DT over every source dtype, given how DT
 * is made from each kind of source value: B from a bool (0 or 1), S from a
 * signed integer x of type ST, U from an unsigned one, H from binary16 bits,
 * F from a float or double.  Bools read as 0 or 1 whatever byte they hold.
 */
#define SOURCES(DT, B, S, U, H, F)                                                                 \
    switch (st) {                                                                                  \
    case HOP_BOOL:                                                                                 \
        CONVERT_LOOP(DT, hop__bool, B(x != 0));                                                    \
        break;                                                                                     \
    case HOP_I8:                                                                                   \
        CONVERT_LOOP(DT, int8_t, S(x, int8_t));                                                    \
        break;                                                                                     \
    case HOP_U8:                                                                                   \
        CONVERT_LOOP(DT, uint8_t, U(x));                                                           \
        break;                                                                                     \
    case HOP_I16:                                                                                  \
        CONVERT_LOOP(DT, int16_t, S(x, int16_t));                                                  \
        break;                                                                                     \
    case HOP_I32:                                                                                  \
        CONVERT_LOOP(DT, int32_t, S(x, int32_t));                                                  \
        break;                                                                                     \
    case HOP_I64:                                                                                  \
        CONVERT_LOOP(DT, int64_t, S(x, int64_t));                                                  \
        break;                                                                                     \
    case HOP_U64:                                                                                  \
        CONVERT_LOOP(DT, uint64_t, U(x));                                                          \
        break;                                                                                     \
    case HOP_U16:                                                                                  \
        CONVERT_LOOP(DT, uint16_t, U(x));                                                          \
        break;                                                                                     \
    case HOP_U32:                                                                                  \
        CONVERT_LOOP(DT, uint32_t, U(x));                                                          \
        break;                                                                                     \
    case HOP_F16:                                                                                  \
        CONVERT_LOOP(DT, uint16_t, H(x));                                                          \
        break;                                                                                     \
    case HOP_F32:                                                                                  \
        CONVERT_LOOP(DT, float, F(x));                                                             \
        break;                                                                                     \
    case HOP_F64:                                                                                  \
        CONVERT_LOOP(DT, double, F(x));                                                            \
        break;                                                                                     \
    default:                                                                                       \
        break;                                                                                     \
    }

/* To bool: x != 0 (nan is true; -0.0 is false). */
#define B_BOOL(b) (hop__bool)(b)
#define S_BOOL(x, ST) (hop__bool)((x) != 0)
#define U_BOOL(x) (hop__bool)((x) != 0)
#define H_BOOL(x) (hop__bool)(((x)&0x7fff) != 0)
#define F_BOOL(x) (hop__bool)((x) != 0)

/* To a signed integer of `bits` bits: widening is exact, narrowing wraps,
 * floats saturate. */
#define SINT_FROM_S(x, ST, T, bits)                                                                \
    (sizeof(T) >= sizeof(ST) ? (T)(x) : (T)wrap_s((uint64_t)(x), bits))
#define SINT_FROM_S_8(x, ST) SINT_FROM_S(x, ST, int8_t, 8)
#define SINT_FROM_S_16(x, ST) SINT_FROM_S(x, ST, int16_t, 16)
#define SINT_FROM_S_32(x, ST) SINT_FROM_S(x, ST, int32_t, 32)
#define SINT_FROM_S_64(x, ST) SINT_FROM_S(x, ST, int64_t, 64)
#define SINT_FROM_U_8(x) (int8_t) wrap_s((uint64_t)(x), 8)
#define SINT_FROM_U_16(x) (int16_t) wrap_s((uint64_t)(x), 16)
#define SINT_FROM_U_32(x) (int32_t) wrap_s((uint64_t)(x), 32)
#define SINT_FROM_U_64(x) (int64_t) wrap_s((uint64_t)(x), 64)
#define SINT_FROM_H_8(x) (int8_t) sat_i(hop_f16_to_float(x), INT8_MIN, INT8_MAX)
#define SINT_FROM_H_16(x) (int16_t) sat_i(hop_f16_to_float(x), INT16_MIN, INT16_MAX)
#define SINT_FROM_H_32(x) (int32_t) sat_i(hop_f16_to_float(x), INT32_MIN, INT32_MAX)
#define SINT_FROM_H_64(x) (int64_t) sat_i(hop_f16_to_float(x), INT64_MIN, INT64_MAX)
#define SINT_FROM_F_8(x) (int8_t) sat_i((double)(x), INT8_MIN, INT8_MAX)
#define SINT_FROM_F_16(x) (int16_t) sat_i((double)(x), INT16_MIN, INT16_MAX)
#define SINT_FROM_F_32(x) (int32_t) sat_i((double)(x), INT32_MIN, INT32_MAX)
#define SINT_FROM_F_64(x) (int64_t) sat_i((double)(x), INT64_MIN, INT64_MAX)

/* To an unsigned integer: integers wrap (a conversion to an unsigned type
 * is modulo 2^bits in C), floats saturate to [0, max]. */
#define UINT_FROM_S_8(x, ST) (uint8_t)(x)
#define UINT_FROM_S_16(x, ST) (uint16_t)(x)
#define UINT_FROM_S_32(x, ST) (uint32_t)(x)
#define UINT_FROM_S_64(x, ST) (uint64_t)(x)
#define UINT_FROM_U_16(x) (uint16_t)(x)
#define UINT_FROM_U_32(x) (uint32_t)(x)
#define UINT_FROM_H_16(x) (uint16_t) sat_u(hop_f16_to_float(x), UINT16_MAX)
#define UINT_FROM_H_32(x) (uint32_t) sat_u(hop_f16_to_float(x), UINT32_MAX)
#define UINT_FROM_F_16(x) (uint16_t) sat_u((double)(x), UINT16_MAX)
#define UINT_FROM_F_32(x) (uint32_t) sat_u((double)(x), UINT32_MAX)
#define UINT_FROM_U_8(x) (uint8_t)(x)
#define UINT_FROM_U_64(x) (uint64_t)(x)
#define UINT_FROM_H_8(x) (uint8_t) sat_u(hop_f16_to_float(x), UINT8_MAX)
#define UINT_FROM_H_64(x) sat_u(hop_f16_to_float(x), UINT64_MAX)
#define UINT_FROM_F_8(x) (uint8_t) sat_u((double)(x), UINT8_MAX)
#define UINT_FROM_F_64(x) sat_u((double)(x), UINT64_MAX)

/* To binary16: rounded to nearest even from the exact value (integers
 * beyond 2^53 round twice). */
#define HALF_FROM_B(b) (uint16_t)((b) ? 0x3c00 : 0)
#define HALF_FROM_S(x, ST) half_noted((double)(x), hop_f16_from_double((double)(x)))
#define HALF_FROM_U(x) half_noted((double)(x), hop_f16_from_double((double)(x)))
#define HALF_FROM_H(x) (x)
/* a float's own bits: a nan keeps its payload as NumPy's casts keep it */
#define HALF_FROM_F(x)                                                                             \
    half_noted((double)(x),                                                                        \
               _Generic((x), float: hop_f16_from_float, default: hop_f16_from_double)(x))

/* h, the binary16 of x, with the flags NumPy's npy_float_to_half and
 * npy_double_to_half raise (halffloat.c): overflow where a finite x became
 * an infinity, underflow where an x below the smallest normal (2^-14) was
 * not exact.  NumPy's float16 loops compute in float and store through
 * these, so `float16(300) * float16(300)` warns "overflow encountered in
 * multiply" and `astype(float16)` "... in cast"; hop's f16 kernels compute
 * in float and store here. */
static inline uint16_t
half_noted(double x, uint16_t h)
{
    uint16_t e = h & 0x7c00;
    if (e == 0x7c00) {
        if (isfinite(x))
            hop__fp_note(HOP_FP_OVERFLOW);
    } else if (e == 0 && x != 0 && (double)hop_f16_to_float(h) != x) {
        hop__fp_note(HOP_FP_UNDERFLOW);
    }
    return h;
}

uint16_t
hop__f16_noted(float f)
{
    return half_noted((double)f, hop_f16_from_float(f));
}

/* binary16 to double as NumPy's npy_halfbits_to_doublebits: a nan keeps
 * its payload, where converting hop_f16_to_float's float would quiet a
 * signalling one */
static inline double
dbl_from_half(uint16_t h)
{
    if ((h & 0x7c00) != 0x7c00 || !(h & 0x3ff))
        return (double)hop_f16_to_float(h);
    uint64_t bits = (uint64_t)(h & 0x8000) << 48 | 0x7ff0000000000000u | (uint64_t)(h & 0x3ff) << 42;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* To float and double: C's conversions (round to nearest). */
#define FLT_FROM_B(b) (float)(b)
#define FLT_FROM_S(x, ST) (float)(x)
#define FLT_FROM_U(x) (float)(x)
#define FLT_FROM_H(x) hop_f16_to_float(x)
#define FLT_FROM_F(x) (float)(x)
#define DBL_FROM_B(b) (double)(b)
#define DBL_FROM_S(x, ST) (double)(x)
#define DBL_FROM_U(x) (double)(x)
#define DBL_FROM_H(x) dbl_from_half(x)
#define DBL_FROM_F(x) (double)(x)

#define SINT_FROM_B_8(b) (int8_t)(b)
#define SINT_FROM_B_16(b) (int16_t)(b)
#define SINT_FROM_B_32(b) (int32_t)(b)
#define SINT_FROM_B_64(b) (int64_t)(b)
#define UINT_FROM_B_8(b) (uint8_t)(b)
#define UINT_FROM_B_16(b) (uint16_t)(b)
#define UINT_FROM_B_32(b) (uint32_t)(b)
#define UINT_FROM_B_64(b) (uint64_t)(b)

/* Copies n elements of esize bytes with a source stride (same dtype). */
static void
gather_same(int64_t n, void *dst, const void *src, int64_t stride, size_t esize)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    switch (esize) {
    case 16:
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)dst + 16 * i, (const char *)src + 16 * i * stride, 16);
        break;
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i * stride];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i * stride];
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

/*
 * The common contiguous conversions (np_large's Mandelbrot adds a bool mask
 * to an int32 count 20 times a call) at the widest vectors the CPU has,
 * picked at load time as elementwise.c's float arithmetic (GCC's
 * target_clones).  Each is exact or one IEEE rounding to nearest per
 * element, so every clone gives the same bits as the switch's loops below.
 * No restrict: GCC checks at run time whether dst overlaps src and runs the
 * loop in order when it does, as the scalar loop would.
 */
#define CONV_FN(name, DT, ST, EXPR)                                                                \
    HOP__WIDE static void name(int64_t n, void *dst, const void *src)                              \
    {                                                                                              \
        DT *d = dst;                                                                               \
        const ST *s = src;                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                          \
            ST x = s[i];                                                                           \
            d[i] = (EXPR);                                                                         \
        }                                                                                          \
    }
CONV_FN(i32_from_b, int32_t, hop__bool, (int32_t)(x != 0))
CONV_FN(i64_from_b, int64_t, hop__bool, (int64_t)(x != 0))
CONV_FN(f32_from_b, float, hop__bool, (float)(x != 0))
CONV_FN(f64_from_b, double, hop__bool, (double)(x != 0))
CONV_FN(i32_from_i8, int32_t, int8_t, (int32_t)x)
CONV_FN(i64_from_i8, int64_t, int8_t, (int64_t)x)
CONV_FN(f32_from_i8, float, int8_t, (float)x)
CONV_FN(i32_from_u8, int32_t, uint8_t, (int32_t)x)
CONV_FN(i64_from_u8, int64_t, uint8_t, (int64_t)x)
CONV_FN(f32_from_u8, float, uint8_t, (float)x)
CONV_FN(i64_from_i32, int64_t, int32_t, (int64_t)x)
CONV_FN(f32_from_i32, float, int32_t, (float)x)
CONV_FN(f64_from_i32, double, int32_t, (double)x)
CONV_FN(f64_from_f32, double, float, (double)x)
CONV_FN(f32_from_f64, float, double, (float)x)

typedef void (*conv_fn)(int64_t n, void *dst, const void *src);

/* The wide function for a contiguous st -> dt, or NULL. */
static conv_fn
wide_conversion(hop_dtype dt, hop_dtype st)
{
#define CONV_CASE(D, S, fn)                                                                        \
    if (dt == (D) && st == (S))                                                                    \
        return fn;
    CONV_CASE(HOP_I32, HOP_BOOL, i32_from_b)
    CONV_CASE(HOP_I64, HOP_BOOL, i64_from_b)
    CONV_CASE(HOP_F32, HOP_BOOL, f32_from_b)
    CONV_CASE(HOP_F64, HOP_BOOL, f64_from_b)
    CONV_CASE(HOP_I32, HOP_I8, i32_from_i8)
    CONV_CASE(HOP_I64, HOP_I8, i64_from_i8)
    CONV_CASE(HOP_F32, HOP_I8, f32_from_i8)
    CONV_CASE(HOP_I32, HOP_U8, i32_from_u8)
    CONV_CASE(HOP_I64, HOP_U8, i64_from_u8)
    CONV_CASE(HOP_F32, HOP_U8, f32_from_u8)
    CONV_CASE(HOP_I64, HOP_I32, i64_from_i32)
    CONV_CASE(HOP_F32, HOP_I32, f32_from_i32)
    CONV_CASE(HOP_F64, HOP_I32, f64_from_i32)
    CONV_CASE(HOP_F64, HOP_F32, f64_from_f32)
    CONV_CASE(HOP_F32, HOP_F64, f32_from_f64)
#undef CONV_CASE
    return NULL;
}

void
hop__convert(int64_t n, void *dst, hop_dtype dt, const void *src, hop_dtype st, int64_t stride)
{
    if (stride == 1 && n > 1) {
        conv_fn fn = wide_conversion(dt, st);
        if (fn != NULL) {
            fn(n, dst, src);
            return;
        }
    }
    if (dt == st && st != HOP_BOOL) {
        gather_same(n, dst, src, stride, hop_dtype_size(dt));
        return;
    }
    if (hop__convert_complex(n, dst, dt, src, st, stride))
        return;
    switch (dt) {
    case HOP_BOOL:
        SOURCES(hop__bool, B_BOOL, S_BOOL, U_BOOL, H_BOOL, F_BOOL);
        break;
    case HOP_I8:
        SOURCES(int8_t, SINT_FROM_B_8, SINT_FROM_S_8, SINT_FROM_U_8, SINT_FROM_H_8, SINT_FROM_F_8);
        break;
    case HOP_I16:
        SOURCES(int16_t, SINT_FROM_B_16, SINT_FROM_S_16, SINT_FROM_U_16, SINT_FROM_H_16,
                SINT_FROM_F_16);
        break;
    case HOP_I32:
        SOURCES(int32_t, SINT_FROM_B_32, SINT_FROM_S_32, SINT_FROM_U_32, SINT_FROM_H_32,
                SINT_FROM_F_32);
        break;
    case HOP_I64:
        SOURCES(int64_t, SINT_FROM_B_64, SINT_FROM_S_64, SINT_FROM_U_64, SINT_FROM_H_64,
                SINT_FROM_F_64);
        break;
    case HOP_U8:
        SOURCES(uint8_t, UINT_FROM_B_8, UINT_FROM_S_8, UINT_FROM_U_8, UINT_FROM_H_8, UINT_FROM_F_8);
        break;
    case HOP_U64:
        SOURCES(uint64_t, UINT_FROM_B_64, UINT_FROM_S_64, UINT_FROM_U_64, UINT_FROM_H_64,
                UINT_FROM_F_64);
        break;
    case HOP_U16:
        SOURCES(uint16_t, UINT_FROM_B_16, UINT_FROM_S_16, UINT_FROM_U_16, UINT_FROM_H_16,
                UINT_FROM_F_16);
        break;
    case HOP_U32:
        SOURCES(uint32_t, UINT_FROM_B_32, UINT_FROM_S_32, UINT_FROM_U_32, UINT_FROM_H_32,
                UINT_FROM_F_32);
        break;
    case HOP_F16:
        SOURCES(uint16_t, HALF_FROM_B, HALF_FROM_S, HALF_FROM_U, HALF_FROM_H, HALF_FROM_F);
        break;
    case HOP_F32:
        SOURCES(float, FLT_FROM_B, FLT_FROM_S, FLT_FROM_U, FLT_FROM_H, FLT_FROM_F);
        break;
    case HOP_F64:
        SOURCES(double, DBL_FROM_B, DBL_FROM_S, DBL_FROM_U, DBL_FROM_H, DBL_FROM_F);
        break;
    default:
        break;
    }
}

void
hop__scatter(int64_t n, void *dst, int64_t stride, const void *src, size_t esize)
{
    switch (esize) {
    case 16:
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)dst + 16 * i * stride, (const char *)src + 16 * i, 16);
        break;
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i * stride] = ((const uint8_t *)src)[i];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i * stride] = ((const uint16_t *)src)[i];
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
