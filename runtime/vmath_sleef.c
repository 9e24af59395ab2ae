/*
 * runtime/vmath_sleef.c - the SLEEF math backends: exp, log, sin, cos,
 * tanh, pow, sinh, cosh, asin, acos, asinh, acosh, atanh, cbrt and atan2
 * with SLEEF's 1-ulp (u10) functions, sigmoid as 1 / (1 + exp(-x)), sqrt
 * with the exact vector square root; log10, log2, exp2, expm1, log1p, tan,
 * atan and hypot with libm's.
 *
 * One source, two widths: built with -mavx2 -mfma as the AVX2 backend (8
 * floats / 4 doubles per vector, hop__math_sleef_avx2) and, through
 * vmath_sleef512.c which defines HOP_SLEEF_AVX512, with -mavx512f as the
 * AVX-512 one (16 floats / 8 doubles, hop__math_sleef_avx512); see
 * runtime/CMakeLists.txt.  vmath.c picks the widest the CPU runs.  A tail
 * shorter than a vector is padded through a small buffer so that every
 * element goes through the same function (results do not depend on an
 * element's position).
 */
#include "runtime/runtime.h"

#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#ifdef HOP_SLEEF_AVX512
typedef __m512 vf;
typedef __m512d vd;
#define NF 16
#define ND 8
#define LDF _mm512_loadu_ps
#define STF _mm512_storeu_ps
#define LDD _mm512_loadu_pd
#define STD _mm512_storeu_pd
#define SF(fn, u) Sleef_##fn##f16_##u##avx512f
#define SD(fn, u) Sleef_##fn##d8_##u##avx512f
#define SQRTF _mm512_sqrt_ps
#define SQRTD _mm512_sqrt_pd
#define ADDF _mm512_add_ps
#define ADDD _mm512_add_pd
#define SUBF _mm512_sub_ps
#define SUBD _mm512_sub_pd
#define DIVF _mm512_div_ps
#define DIVD _mm512_div_pd
#define SET1F _mm512_set1_ps
#define SET1D _mm512_set1_pd
/* any lane of |x| above lim (nan compares false) */
#define ANY_ABOVE_F(x, lim) (_mm512_cmp_ps_mask(_mm512_abs_ps(x), SET1F(lim), _CMP_GT_OQ) != 0)
#define ANY_ABOVE_D(x, lim) (_mm512_cmp_pd_mask(_mm512_abs_pd(x), SET1D(lim), _CMP_GT_OQ) != 0)
#define BACKEND sleef_avx512
#define BACKEND_NAME "sleef-avx512"
#define BACKEND_GET hop__math_sleef_avx512
#else
typedef __m256 vf;
typedef __m256d vd;
#define NF 8
#define ND 4
#define LDF _mm256_loadu_ps
#define STF _mm256_storeu_ps
#define LDD _mm256_loadu_pd
#define STD _mm256_storeu_pd
#define SF(fn, u) Sleef_##fn##f8_##u##avx2
#define SD(fn, u) Sleef_##fn##d4_##u##avx2
#define SQRTF _mm256_sqrt_ps
#define SQRTD _mm256_sqrt_pd
#define ADDF _mm256_add_ps
#define ADDD _mm256_add_pd
#define SUBF _mm256_sub_ps
#define SUBD _mm256_sub_pd
#define DIVF _mm256_div_ps
#define DIVD _mm256_div_pd
#define SET1F _mm256_set1_ps
#define SET1D _mm256_set1_pd
#define ANY_ABOVE_F(x, lim)                                                                        \
    (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(SET1F(-0.0f), x), SET1F(lim), _CMP_GT_OQ)))
#define ANY_ABOVE_D(x, lim)                                                                        \
    (_mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(SET1D(-0.0), x), SET1D(lim), _CMP_GT_OQ)))
#define BACKEND sleef_avx2
#define BACKEND_NAME "sleef-avx2"
#define BACKEND_GET hop__math_sleef_avx2
#endif

/* NaN results as x86 and NumPy make them: a NaN operand comes back quiet,
 * itself (the first one of two); a NaN made from numbers (log(-1),
 * sin(inf), pow(-1, 0.5)) is the default NaN (negative, no payload).
 * SLEEF's functions return all-ones, positive or payload NaNs instead,
 * which also differ between its widths.  A NaN made from numbers is an
 * invalid operation, noted as one (hop__fp_note), as NumPy's libm raises
 * it: SLEEF's sin(inf) raised nothing.  A vector with no NaN result costs
 * one compare.  exp, sigmoid and sqrt need none: their only NaN is a NaN
 * operand, which they return as x86 does. */
#ifdef HOP_SLEEF_AVX512
#define NANF(v) _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)
#define NAND(v) _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q)
#define PICKF(m, a, b) _mm512_mask_blend_ps(m, a, b)
#define PICKD(m, a, b) _mm512_mask_blend_pd(m, a, b)
#define ANY_NANF(v) (NANF(v) != 0)
#define ANY_NAND(v) (NAND(v) != 0)
#else
#define NANF(v) _mm256_cmp_ps(v, v, _CMP_UNORD_Q)
#define NAND(v) _mm256_cmp_pd(v, v, _CMP_UNORD_Q)
#define PICKF(m, a, b) _mm256_blendv_ps(a, b, m)
#define PICKD(m, a, b) _mm256_blendv_pd(a, b, m)
#define ANY_NANF(v) (_mm256_movemask_ps(NANF(v)) != 0)
#define ANY_NAND(v) (_mm256_movemask_pd(NAND(v)) != 0)
#endif

static inline vf
canon2f(vf x, vf y, vf r)
{
    if (!ANY_NANF(r))
        return r; /* the common case: one compare */
    vf zero = SET1F(0);
    if (ANY_NANF(PICKF(NANF(x), PICKF(NANF(y), r, zero), zero)))
        hop__fp_note(HOP_FP_INVALID); /* a NaN made from numbers */
    vf nan = PICKF(NANF(x), PICKF(NANF(y), SET1F(-NAN), ADDF(y, y)), ADDF(x, x));
    return PICKF(NANF(r), r, nan);
}

static inline vd
canon2d(vd x, vd y, vd r)
{
    if (!ANY_NAND(r))
        return r; /* the common case: one compare */
    vd zero = SET1D(0);
    if (ANY_NAND(PICKD(NAND(x), PICKD(NAND(y), r, zero), zero)))
        hop__fp_note(HOP_FP_INVALID); /* a NaN made from numbers */
    vd nan = PICKD(NAND(x), PICKD(NAND(y), SET1D(-NAN), ADDD(y, y)), ADDD(x, x));
    return PICKD(NAND(r), r, nan);
}

/* one operand: its NaN, or the default one */
#define canon1f(x, r) canon2f(x, x, r)
#define canon1d(x, r) canon2d(x, x, r)

#define UNARY_F32(name, VEXPR)                                                                     \
    static inline vf v_##name##_f32(vf x)                                                          \
    {                                                                                              \
        return VEXPR;                                                                              \
    }                                                                                              \
    static void name##_f32(int64_t n, float *out, const float *in)                                 \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + NF <= n; i += NF)                                                               \
            STF(out + i, v_##name##_f32(LDF(in + i)));                                             \
        if (i < n) {                                                                               \
            float buf[NF] = {0};                                                                   \
            memcpy(buf, in + i, (size_t)(n - i) * sizeof(float));                                  \
            STF(buf, v_##name##_f32(LDF(buf)));                                                    \
            memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));                                 \
        }                                                                                          \
    }

#define UNARY_F64(name, VEXPR)                                                                     \
    static inline vd v_##name##_f64(vd x)                                                          \
    {                                                                                              \
        return VEXPR;                                                                              \
    }                                                                                              \
    static void name##_f64(int64_t n, double *out, const double *in)                               \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + ND <= n; i += ND)                                                               \
            STD(out + i, v_##name##_f64(LDD(in + i)));                                             \
        if (i < n) {                                                                               \
            double buf[ND] = {0};                                                                  \
            memcpy(buf, in + i, (size_t)(n - i) * sizeof(double));                                 \
            STD(buf, v_##name##_f64(LDD(buf)));                                                    \
            memcpy(out + i, buf, (size_t)(n - i) * sizeof(double));                                \
        }                                                                                          \
    }

static inline vf
sigmoidf(vf x)
{
    vf one = SET1F(1.0f);
    return DIVF(one, ADDF(one, SF(exp, u10)(SUBF(SET1F(0.0f), x))));
}

static inline vd
sigmoidd(vd x)
{
    vd one = SET1D(1.0);
    return DIVD(one, ADDD(one, SD(exp, u10)(SUBD(SET1D(0.0), x))));
}

UNARY_F32(exp, SF(exp, u10)(x))
UNARY_F32(log, canon1f(x, SF(log, u10)(x)))
UNARY_F32(sin, canon1f(x, SF(sin, u10)(x)))
UNARY_F32(cos, canon1f(x, SF(cos, u10)(x)))
UNARY_F32(tanh, canon1f(x, SF(tanh, u10)(x)))
UNARY_F32(sigmoid, sigmoidf(x))
UNARY_F32(sqrt, SQRTF(x))
UNARY_F64(exp, SD(exp, u10)(x))
UNARY_F64(log, canon1d(x, SD(log, u10)(x)))
UNARY_F64(sin, canon1d(x, SD(sin, u10)(x)))
UNARY_F64(cos, canon1d(x, SD(cos, u10)(x)))
UNARY_F64(tanh, canon1d(x, SD(tanh, u10)(x)))
UNARY_F64(sigmoid, sigmoidd(x))
UNARY_F64(sqrt, SQRTD(x))

#define BINARY_F32(name, VFN)                                                                      \
    static inline vf v2_##name##_f32(vf x, vf y)                                                   \
    {                                                                                              \
        return canon2f(x, y, VFN(x, y));                                                           \
    }                                                                                              \
    static void b_##name##_f32(int64_t n, float *out, const float *a, const float *b)              \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + NF <= n; i += NF)                                                               \
            STF(out + i, v2_##name##_f32(LDF(a + i), LDF(b + i)));                                 \
        if (i < n) {                                                                               \
            float x[NF] = {0}, y[NF] = {0};                                                        \
            memcpy(x, a + i, (size_t)(n - i) * sizeof(float));                                     \
            memcpy(y, b + i, (size_t)(n - i) * sizeof(float));                                     \
            STF(x, v2_##name##_f32(LDF(x), LDF(y)));                                               \
            memcpy(out + i, x, (size_t)(n - i) * sizeof(float));                                   \
        }                                                                                          \
    }
#define BINARY_F64(name, VFN)                                                                      \
    static inline vd v2_##name##_f64(vd x, vd y)                                                   \
    {                                                                                              \
        return canon2d(x, y, VFN(x, y));                                                           \
    }                                                                                              \
    static void b_##name##_f64(int64_t n, double *out, const double *a, const double *b)           \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + ND <= n; i += ND)                                                               \
            STD(out + i, v2_##name##_f64(LDD(a + i), LDD(b + i)));                                 \
        if (i < n) {                                                                               \
            double x[ND] = {0}, y[ND] = {0};                                                       \
            memcpy(x, a + i, (size_t)(n - i) * sizeof(double));                                    \
            memcpy(y, b + i, (size_t)(n - i) * sizeof(double));                                    \
            STD(x, v2_##name##_f64(LDD(x), LDD(y)));                                               \
            memcpy(out + i, x, (size_t)(n - i) * sizeof(double));                                  \
        }                                                                                          \
    }
/* pow(±0, y < 0) is a division by zero, noted as NumPy's libm pow raises
 * it (SLEEF's raised nothing); an infinite result is rare, so the lanes
 * are looked at only then. */
static void
pow_zero_notef(vf x, vf y)
{
    float a[NF], b[NF];
    STF(a, x);
    STF(b, y);
    for (int k = 0; k < NF; k++)
        if (a[k] == 0 && b[k] < 0) {
            hop__fp_note(HOP_FP_DIVIDE);
            return;
        }
}

static void
pow_zero_noted(vd x, vd y)
{
    double a[ND], b[ND];
    STD(a, x);
    STD(b, y);
    for (int k = 0; k < ND; k++)
        if (a[k] == 0 && b[k] < 0) {
            hop__fp_note(HOP_FP_DIVIDE);
            return;
        }
}

static inline vf
powf_noted(vf x, vf y)
{
    vf r = SF(pow, u10)(x, y);
    if (ANY_ABOVE_F(r, FLT_MAX))
        pow_zero_notef(x, y);
    return r;
}

static inline vd
powd_noted(vd x, vd y)
{
    vd r = SD(pow, u10)(x, y);
    if (ANY_ABOVE_D(r, DBL_MAX))
        pow_zero_noted(x, y);
    return r;
}

BINARY_F32(pow, powf_noted)
BINARY_F64(pow, powd_noted)

/*
 * The further functions.  SLEEF documents a domain for some (sinh and cosh
 * near overflow, asinh and acosh beyond 1e154 / 1e19): a lane beyond LIM
 * is computed by libm instead, so every result is within SLEEF's or libm's
 * error bound.  LIM is +inf for the others; a nan lane compares false and
 * stays SLEEF's (nan).  Each such lane takes libm alone, so a result never
 * depends on its neighbours (a whole vector to libm made an element's bits
 * depend on the vector width and the values beside it).
 */
#define FURTHER_F32(name, LIBM, LIM)                                                               \
    static inline vf v_##name##_f32(vf x)                                                          \
    {                                                                                              \
        vf r = SF(name, u10)(x);                                                                   \
        if (ANY_ABOVE_F(x, LIM)) {                                                                 \
            float in[NF], out[NF];                                                                 \
            STF(in, x);                                                                            \
            STF(out, r);                                                                           \
            for (int k = 0; k < NF; k++)                                                           \
                if (fabsf(in[k]) > LIM)                                                            \
                    out[k] = LIBM(in[k]);                                                          \
            r = LDF(out);                                                                          \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    UNARY_F32(u_##name, canon1f(x, v_##name##_f32(x)))
#define FURTHER_F64(name, LIBM, LIM)                                                               \
    static inline vd v_##name##_f64(vd x)                                                          \
    {                                                                                              \
        vd r = SD(name, u10)(x);                                                                   \
        if (ANY_ABOVE_D(x, LIM)) {                                                                 \
            double in[ND], out[ND];                                                                \
            STD(in, x);                                                                            \
            STD(out, r);                                                                           \
            for (int k = 0; k < ND; k++)                                                           \
                if (fabs(in[k]) > LIM)                                                             \
                    out[k] = LIBM(in[k]);                                                          \
            r = LDD(out);                                                                          \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    UNARY_F64(u_##name, canon1d(x, v_##name##_f64(x)))

FURTHER_F32(sinh, sinhf, 88.0f)
FURTHER_F32(cosh, coshf, 88.0f)
FURTHER_F32(asin, asinf, INFINITY)
FURTHER_F32(acos, acosf, INFINITY)
FURTHER_F32(asinh, asinhf, 1e19f)
FURTHER_F32(acosh, acoshf, 1e19f)
FURTHER_F32(atanh, atanhf, INFINITY)
FURTHER_F32(cbrt, cbrtf, INFINITY)
FURTHER_F64(sinh, sinh, 700.0)
FURTHER_F64(cosh, cosh, 700.0)
FURTHER_F64(asin, asin, INFINITY)
FURTHER_F64(acos, acos, INFINITY)
FURTHER_F64(asinh, asinh, 1e150)
FURTHER_F64(acosh, acosh, 1e150)
FURTHER_F64(atanh, atanh, INFINITY)
FURTHER_F64(cbrt, cbrt, INFINITY)

/* log10, log2, exp2, expm1, log1p, tan and atan: libm's, one element at a
 * time, as before they were members of the table (they are members so that
 * NumPy's SVML functions can be adopted in their place: vmath_adopt.c). */
#define LIBM_UNARY(name, LIBM)                                                                     \
    static void u_##name##_f32(int64_t n, float *out, const float *in)                             \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            out[i] = LIBM##f(in[i]);                                                               \
    }                                                                                              \
    static void u_##name##_f64(int64_t n, double *out, const double *in)                           \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            out[i] = LIBM(in[i]);                                                                  \
    }
LIBM_UNARY(log10, log10)
LIBM_UNARY(log2, log2)
LIBM_UNARY(exp2, exp2)
LIBM_UNARY(expm1, expm1)
LIBM_UNARY(log1p, log1p)
LIBM_UNARY(tan, tan)
LIBM_UNARY(atan, atan)

BINARY_F32(atan2, SF(atan2, u10))
BINARY_F64(atan2, SD(atan2, u10))

/* hypot: libm's, one element at a time, as NumPy 1.24's loop calls
 * npy_hypot (glibc's hypot and hypotf) on every element at every width:
 * SLEEF's u05 hypot differed from it in the last bit of ~0.7% of float64
 * results, so a result's bits depended on the element's place in a
 * vector or a tail. */
static void
b_hypot_f32(int64_t n, float *out, const float *a, const float *b)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = hypotf(a[i], b[i]);
}

static void
b_hypot_f64(int64_t n, double *out, const double *a, const double *b)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = hypot(a[i], b[i]);
}

static const hop__math BACKEND = HOP__MATH_TABLE(BACKEND_NAME);

const hop__math *
BACKEND_GET(void)
{
    return &BACKEND;
}
