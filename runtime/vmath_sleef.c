/*
 * runtime/vmath_sleef.c - the SLEEF AVX2 math backend: exp, log, sin, cos,
 * tanh, pow, sinh, cosh, asin, acos, asinh, acosh, atanh, cbrt and atan2
 * with SLEEF's 1-ulp (u10) functions on 8 floats / 4 doubles per vector,
 * hypot with its 0.5-ulp one, sigmoid as 1 / (1 + exp(-x)), sqrt with the
 * exact vsqrtps.
 *
 * Compiled with -mavx2 -mfma only (see runtime/CMakeLists.txt); vmath.c
 * calls it only on CPUs with AVX2 and FMA.  A tail shorter than a vector is
 * padded through a small buffer so that every element goes through the same
 * function (results do not depend on an element's position).
 */
#include "runtime/runtime.h"

#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#define UNARY_F32(name, VEXPR)                                                                     \
    static inline __m256 v_##name##_f32(__m256 x)                                                  \
    {                                                                                              \
        return VEXPR;                                                                              \
    }                                                                                              \
    static void name##_f32(int64_t n, float *out, const float *in)                                 \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + 8 <= n; i += 8)                                                                 \
            _mm256_storeu_ps(out + i, v_##name##_f32(_mm256_loadu_ps(in + i)));                    \
        if (i < n) {                                                                               \
            float buf[8] = {0};                                                                    \
            memcpy(buf, in + i, (size_t)(n - i) * sizeof(float));                                  \
            _mm256_storeu_ps(buf, v_##name##_f32(_mm256_loadu_ps(buf)));                           \
            memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));                                 \
        }                                                                                          \
    }

#define UNARY_F64(name, VEXPR)                                                                     \
    static inline __m256d v_##name##_f64(__m256d x)                                                \
    {                                                                                              \
        return VEXPR;                                                                              \
    }                                                                                              \
    static void name##_f64(int64_t n, double *out, const double *in)                               \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + 4 <= n; i += 4)                                                                 \
            _mm256_storeu_pd(out + i, v_##name##_f64(_mm256_loadu_pd(in + i)));                    \
        if (i < n) {                                                                               \
            double buf[4] = {0};                                                                   \
            memcpy(buf, in + i, (size_t)(n - i) * sizeof(double));                                 \
            _mm256_storeu_pd(buf, v_##name##_f64(_mm256_loadu_pd(buf)));                           \
            memcpy(out + i, buf, (size_t)(n - i) * sizeof(double));                                \
        }                                                                                          \
    }

static inline __m256
sigmoid8(__m256 x)
{
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

static inline __m256d
sigmoid4(__m256d x)
{
    __m256d one = _mm256_set1_pd(1.0);
    __m256d e = Sleef_expd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), x));
    return _mm256_div_pd(one, _mm256_add_pd(one, e));
}

UNARY_F32(exp, Sleef_expf8_u10avx2(x))
UNARY_F32(log, Sleef_logf8_u10avx2(x))
UNARY_F32(sin, Sleef_sinf8_u10avx2(x))
UNARY_F32(cos, Sleef_cosf8_u10avx2(x))
UNARY_F32(tanh, Sleef_tanhf8_u10avx2(x))
UNARY_F32(sigmoid, sigmoid8(x))
UNARY_F32(sqrt, _mm256_sqrt_ps(x))
UNARY_F64(exp, Sleef_expd4_u10avx2(x))
UNARY_F64(log, Sleef_logd4_u10avx2(x))
UNARY_F64(sin, Sleef_sind4_u10avx2(x))
UNARY_F64(cos, Sleef_cosd4_u10avx2(x))
UNARY_F64(tanh, Sleef_tanhd4_u10avx2(x))
UNARY_F64(sigmoid, sigmoid4(x))
UNARY_F64(sqrt, _mm256_sqrt_pd(x))

static void
pow_f32(int64_t n, float *out, const float *a, const float *b)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i,
                         Sleef_powf8_u10avx2(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    if (i < n) {
        float x[8] = {0}, y[8] = {0};
        memcpy(x, a + i, (size_t)(n - i) * sizeof(float));
        memcpy(y, b + i, (size_t)(n - i) * sizeof(float));
        _mm256_storeu_ps(x, Sleef_powf8_u10avx2(_mm256_loadu_ps(x), _mm256_loadu_ps(y)));
        memcpy(out + i, x, (size_t)(n - i) * sizeof(float));
    }
}

static void
pow_f64(int64_t n, double *out, const double *a, const double *b)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(out + i,
                         Sleef_powd4_u10avx2(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)));
    if (i < n) {
        double x[4] = {0}, y[4] = {0};
        memcpy(x, a + i, (size_t)(n - i) * sizeof(double));
        memcpy(y, b + i, (size_t)(n - i) * sizeof(double));
        _mm256_storeu_pd(x, Sleef_powd4_u10avx2(_mm256_loadu_pd(x), _mm256_loadu_pd(y)));
        memcpy(out + i, x, (size_t)(n - i) * sizeof(double));
    }
}

/*
 * The further functions.  SLEEF documents a domain for some (sinh and cosh
 * near overflow, asinh and acosh beyond 1e154 / 1e19): a vector with a lane
 * beyond LIM is computed by libm instead, so every result is within SLEEF's
 * or libm's error bound.  LIM is +inf for the others; a nan lane compares
 * false and stays SLEEF's (nan).
 */
#define FURTHER_F32(name, SLEEF, LIBM, LIM)                                                        \
    static inline __m256 v_##name##_f32(__m256 x)                                                  \
    {                                                                                              \
        __m256 r = SLEEF(x);                                                                       \
        __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);                                    \
        if (_mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(LIM), _CMP_GT_OQ))) {              \
            float in[8], out[8];                                                                   \
            _mm256_storeu_ps(in, x);                                                               \
            for (int k = 0; k < 8; k++)                                                            \
                out[k] = LIBM(in[k]);                                                              \
            r = _mm256_loadu_ps(out);                                                              \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    UNARY_F32(u_##name, v_##name##_f32(x))
#define FURTHER_F64(name, SLEEF, LIBM, LIM)                                                        \
    static inline __m256d v_##name##_f64(__m256d x)                                                \
    {                                                                                              \
        __m256d r = SLEEF(x);                                                                      \
        __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);                                    \
        if (_mm256_movemask_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(LIM), _CMP_GT_OQ))) {              \
            double in[4], out[4];                                                                  \
            _mm256_storeu_pd(in, x);                                                               \
            for (int k = 0; k < 4; k++)                                                            \
                out[k] = LIBM(in[k]);                                                              \
            r = _mm256_loadu_pd(out);                                                              \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    UNARY_F64(u_##name, v_##name##_f64(x))

FURTHER_F32(sinh, Sleef_sinhf8_u10avx2, sinhf, 88.0f)
FURTHER_F32(cosh, Sleef_coshf8_u10avx2, coshf, 88.0f)
FURTHER_F32(asin, Sleef_asinf8_u10avx2, asinf, INFINITY)
FURTHER_F32(acos, Sleef_acosf8_u10avx2, acosf, INFINITY)
FURTHER_F32(asinh, Sleef_asinhf8_u10avx2, asinhf, 1e19f)
FURTHER_F32(acosh, Sleef_acoshf8_u10avx2, acoshf, 1e19f)
FURTHER_F32(atanh, Sleef_atanhf8_u10avx2, atanhf, INFINITY)
FURTHER_F32(cbrt, Sleef_cbrtf8_u10avx2, cbrtf, INFINITY)
FURTHER_F64(sinh, Sleef_sinhd4_u10avx2, sinh, 700.0)
FURTHER_F64(cosh, Sleef_coshd4_u10avx2, cosh, 700.0)
FURTHER_F64(asin, Sleef_asind4_u10avx2, asin, INFINITY)
FURTHER_F64(acos, Sleef_acosd4_u10avx2, acos, INFINITY)
FURTHER_F64(asinh, Sleef_asinhd4_u10avx2, asinh, 1e150)
FURTHER_F64(acosh, Sleef_acoshd4_u10avx2, acosh, 1e150)
FURTHER_F64(atanh, Sleef_atanhd4_u10avx2, atanh, INFINITY)
FURTHER_F64(cbrt, Sleef_cbrtd4_u10avx2, cbrt, INFINITY)

#define BINARY_F32(name, VFN)                                                                      \
    static void b_##name##_f32(int64_t n, float *out, const float *a, const float *b)              \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + 8 <= n; i += 8)                                                                 \
            _mm256_storeu_ps(out + i, VFN(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));        \
        if (i < n) {                                                                               \
            float x[8] = {0}, y[8] = {0};                                                          \
            memcpy(x, a + i, (size_t)(n - i) * sizeof(float));                                     \
            memcpy(y, b + i, (size_t)(n - i) * sizeof(float));                                     \
            _mm256_storeu_ps(x, VFN(_mm256_loadu_ps(x), _mm256_loadu_ps(y)));                      \
            memcpy(out + i, x, (size_t)(n - i) * sizeof(float));                                   \
        }                                                                                          \
    }
#define BINARY_F64(name, VFN)                                                                      \
    static void b_##name##_f64(int64_t n, double *out, const double *a, const double *b)           \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + 4 <= n; i += 4)                                                                 \
            _mm256_storeu_pd(out + i, VFN(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)));        \
        if (i < n) {                                                                               \
            double x[4] = {0}, y[4] = {0};                                                         \
            memcpy(x, a + i, (size_t)(n - i) * sizeof(double));                                    \
            memcpy(y, b + i, (size_t)(n - i) * sizeof(double));                                    \
            _mm256_storeu_pd(x, VFN(_mm256_loadu_pd(x), _mm256_loadu_pd(y)));                      \
            memcpy(out + i, x, (size_t)(n - i) * sizeof(double));                                  \
        }                                                                                          \
    }
BINARY_F32(atan2, Sleef_atan2f8_u10avx2)
BINARY_F32(hypot, Sleef_hypotf8_u05avx2)
BINARY_F64(atan2, Sleef_atan2d4_u10avx2)
BINARY_F64(hypot, Sleef_hypotd4_u05avx2)

static const hop__math sleef_avx2 = {
    .name = "sleef-avx2",
    .exp_f32 = exp_f32,
    .log_f32 = log_f32,
    .sin_f32 = sin_f32,
    .cos_f32 = cos_f32,
    .tanh_f32 = tanh_f32,
    .sigmoid_f32 = sigmoid_f32,
    .sqrt_f32 = sqrt_f32,
    .exp_f64 = exp_f64,
    .log_f64 = log_f64,
    .sin_f64 = sin_f64,
    .cos_f64 = cos_f64,
    .tanh_f64 = tanh_f64,
    .sigmoid_f64 = sigmoid_f64,
    .sqrt_f64 = sqrt_f64,
    .pow_f32 = pow_f32,
    .pow_f64 = pow_f64,
#define ROW_U32(name, f) [HOP__MU_##name] = u_##name##_f32,
#define ROW_U64(name, f) [HOP__MU_##name] = u_##name##_f64,
#define ROW_B32(name, f) [HOP__MB_##name] = b_##name##_f32,
#define ROW_B64(name, f) [HOP__MB_##name] = b_##name##_f64,
    .unary_f32 = {HOP__MATH_UNARY(ROW_U32)},
    .unary_f64 = {HOP__MATH_UNARY(ROW_U64)},
    .binary_f32 = {HOP__MATH_BINARY(ROW_B32)},
    .binary_f64 = {HOP__MATH_BINARY(ROW_B64)},
};

const hop__math *
hop__math_sleef_avx2(void)
{
    return &sleef_avx2;
}
