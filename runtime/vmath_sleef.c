/*
 * runtime/vmath_sleef.c - the SLEEF AVX2 math backend: exp, log, sin, cos,
 * tanh, pow with SLEEF's 1-ulp (u10) functions on 8 floats / 4 doubles per
 * vector, sigmoid as 1 / (1 + exp(-x)), sqrt with the exact vsqrtps.
 *
 * Compiled with -mavx2 -mfma only (see runtime/CMakeLists.txt); vmath.c
 * calls it only on CPUs with AVX2 and FMA.  A tail shorter than a vector is
 * padded through a small buffer so that every element goes through the same
 * function (results do not depend on an element's position).
 */
#include "runtime/runtime.h"

#include <immintrin.h>
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

static const hop__math sleef_avx2 = {
    "sleef-avx2", exp_f32, log_f32, sin_f32,  cos_f32,     tanh_f32, sigmoid_f32, sqrt_f32, exp_f64,
    log_f64,      sin_f64, cos_f64, tanh_f64, sigmoid_f64, sqrt_f64, pow_f32,     pow_f64,
};

const hop__math *
hop__math_sleef_avx2(void)
{
    return &sleef_avx2;
}
