/*
 * runtime/vmath.c - the math backend of the float unary functions, pow,
 * atan2 and hypot over contiguous arrays: the scalar libm loops (always there) and the
 * choice, once per process, between them and the SLEEF AVX2 backend of
 * vmath_sleef.c.
 *
 * Why SLEEF: GCC does not vectorise expf/logf/sinf/... loops without
 * -ffast-math (errno, and libmvec is only used under fast-math), so the
 * libm loops run one element at a time.  SLEEF's u10 functions (error
 * <= 1 ulp) on 8 floats per AVX2 vector are several times faster (see
 * bench/bench_kernels.c, which prints both).  The SLEEF file is compiled
 * with -mavx2 -mfma when the compiler and libsleef allow it (a build-time
 * choice, HOP_HAVE_SLEEF_AVX2) and used only when the CPU has AVX2 and FMA
 * (a run-time check), so the library still runs on older x86-64 CPUs.
 */
#include "runtime/runtime.h"

#include <math.h>
#include <stdlib.h>

#define SCALAR_LOOP(name, T, EXPR)                                                                 \
    static void name(int64_t n, T *out, const T *in)                                               \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = in[i];                                                                           \
            out[i] = (EXPR);                                                                       \
        }                                                                                          \
    }

SCALAR_LOOP(exp_f32, float, expf(x))
SCALAR_LOOP(log_f32, float, logf(x))
SCALAR_LOOP(sin_f32, float, sinf(x))
SCALAR_LOOP(cos_f32, float, cosf(x))
SCALAR_LOOP(tanh_f32, float, tanhf(x))
SCALAR_LOOP(sigmoid_f32, float, 1.0f / (1.0f + expf(-x)))
SCALAR_LOOP(sqrt_f32, float, sqrtf(x))
SCALAR_LOOP(exp_f64, double, exp(x))
SCALAR_LOOP(log_f64, double, log(x))
SCALAR_LOOP(sin_f64, double, sin(x))
SCALAR_LOOP(cos_f64, double, cos(x))
SCALAR_LOOP(tanh_f64, double, tanh(x))
SCALAR_LOOP(sigmoid_f64, double, 1.0 / (1.0 + exp(-x)))
SCALAR_LOOP(sqrt_f64, double, sqrt(x))

static void
pow_f32(int64_t n, float *out, const float *a, const float *b)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = powf(a[i], b[i]);
}

static void
pow_f64(int64_t n, double *out, const double *a, const double *b)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = pow(a[i], b[i]);
}

/* The further functions: name##f and name from libm. */
#define SCALAR_UNARY(name, libm)                                                                   \
    SCALAR_LOOP(u_##name##_f32, float, libm##f(x))                                                 \
    SCALAR_LOOP(u_##name##_f64, double, libm(x))
HOP__MATH_UNARY(SCALAR_UNARY)
#define SCALAR_BINARY(name, libm)                                                                  \
    static void b_##name##_f32(int64_t n, float *out, const float *a, const float *b)              \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            out[i] = libm##f(a[i], b[i]);                                                          \
    }                                                                                              \
    static void b_##name##_f64(int64_t n, double *out, const double *a, const double *b)           \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            out[i] = libm(a[i], b[i]);                                                             \
    }
HOP__MATH_BINARY(SCALAR_BINARY)

const hop__math hop__math_scalar = {
    .name = "scalar",
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

#ifndef HOP_HAVE_SLEEF_AVX2
const hop__math *
hop__math_sleef_avx2(void)
{
    return NULL;
}
#endif

static const hop__math *
choose(void)
{
    /* HOP_MATH=scalar forces the libm loops (for measuring and debugging). */
    const char *env = getenv("HOP_MATH");
    if (env != NULL && strcmp(env, "scalar") == 0)
        return &hop__math_scalar;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        hop__math_sleef_avx2() != NULL)
        return hop__math_sleef_avx2();
#endif
    return &hop__math_scalar;
}

const hop__math *
hop__math_get(void)
{
    static const hop__math *chosen;
    const hop__math *m = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (m == NULL) {
        m = choose(); /* a race only computes the same answer twice */
        __atomic_store_n(&chosen, m, __ATOMIC_RELEASE);
    }
    return m;
}

const char *
hop_runtime_math_backend(void)
{
    return hop__math_get()->name;
}
