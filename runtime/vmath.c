/*
 * runtime/vmath.c - the math backend of the float unary functions, pow,
 * atan2 and hypot over contiguous arrays: the scalar libm loops (always there) and the
 * choice, once per process, between them and the SLEEF backends of
 * vmath_sleef.c (AVX-512 and AVX2).
 *
 * Why SLEEF: GCC does not vectorise expf/logf/sinf/... loops without
 * -ffast-math (errno, and libmvec is only used under fast-math), so the
 * libm loops run one element at a time.  SLEEF's u10 functions (error
 * <= 1 ulp) on 8 floats per AVX2 vector are several times faster (see
 * bench/bench_kernels.c, which prints both), and on 16 floats per AVX-512
 * vector about twice faster again (exp: bench/run.py's fused_bw).  The
 * SLEEF file is compiled with -mavx2 -mfma, and a second time with
 * -mavx512f, when the compiler and libsleef allow it (build-time choices,
 * HOP_HAVE_SLEEF_AVX2 and HOP_HAVE_SLEEF_AVX512), and the widest the CPU
 * runs is used (a run-time check), so the library still runs on older
 * x86-64 CPUs.  HOP_MATH=avx2 or HOP_MATH=scalar forces a narrower one;
 * HOP_MATH=sleef keeps the widest SLEEF one and tells Python's `import hop`
 * not to adopt NumPy's own functions in place of some of its members
 * (vmath_adopt.c, python/hop/_numpy_math.py), which it does when HOP_MATH
 * is unset.
 */
#include "runtime/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCALAR_LOOP(name, T, EXPR)                                                                 \
    static void name(int64_t n, T *out, const T *in)                                               \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = in[i];                                                                           \
            out[i] = (EXPR);                                                                       \
        }                                                                                          \
    }

/* name_f32 and name_f64: libm's float function, and its double one. */
#define SCALAR_LOOPS(name, F32, F64)                                                               \
    SCALAR_LOOP(name##_f32, float, F32)                                                            \
    SCALAR_LOOP(name##_f64, double, F64)

SCALAR_LOOPS(exp, expf(x), exp(x))
SCALAR_LOOPS(log, logf(x), log(x))
SCALAR_LOOPS(sin, sinf(x), sin(x))
SCALAR_LOOPS(cos, cosf(x), cos(x))
SCALAR_LOOPS(tanh, tanhf(x), tanh(x))
SCALAR_LOOPS(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + exp(-x)))
SCALAR_LOOPS(sqrt, sqrtf(x), sqrt(x))

static void
b_pow_f32(int64_t n, float *out, const float *a, const float *b)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = powf(a[i], b[i]);
}

static void
b_pow_f64(int64_t n, double *out, const double *a, const double *b)
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

const hop__math hop__math_scalar = HOP__MATH_TABLE("scalar");

#ifndef HOP_HAVE_SLEEF_AVX2
const hop__math *
hop__math_sleef_avx2(void)
{
    return NULL;
}
#endif

#ifndef HOP_HAVE_SLEEF_AVX512
const hop__math *
hop__math_sleef_avx512(void)
{
    return NULL;
}
#endif

/* HOP_MATH's values, for the error that names them. */
#define HOP_MATH_VALUES                                                                            \
    "\"avx2\", \"scalar\", \"sleef\" (the widest SLEEF backend, with nothing adopted), or "        \
    "unset (or empty) for the widest the CPU runs"

const hop__math *
hop__math_choose(const char *setting)
{
    /* HOP_MATH=scalar forces the libm loops, HOP_MATH=avx2 the AVX2
     * vectors (for measuring and debugging); an empty value is unset. */
    if (setting != NULL && setting[0] == '\0')
        setting = NULL;
    /* sleef: what unset picks here; Python's `import hop` adopts nothing
     * when HOP_MATH is set (python/hop/_numpy_math.py) */
    if (setting != NULL && strcmp(setting, "sleef") == 0)
        setting = NULL;
    if (setting != NULL && strcmp(setting, "scalar") == 0)
        return &hop__math_scalar;
    if (setting != NULL && strcmp(setting, "avx2") != 0) {
        hop_error(HOP_INVALID, "HOP_MATH=\"%.64s\" is not a math backend: valid values are %s",
                  setting, HOP_MATH_VALUES);
        return NULL;
    }
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    /* cpuid: under valgrind, which runs no AVX-512, it reports none, so
     * the AVX2 backend runs there */
    __builtin_cpu_init();
    if (setting == NULL && __builtin_cpu_supports("avx512f") && hop__math_sleef_avx512() != NULL)
        return hop__math_sleef_avx512();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        hop__math_sleef_avx2() != NULL)
        return hop__math_sleef_avx2();
#endif
    return &hop__math_scalar;
}

/* The table in use once vmath_adopt.c adopted functions (NULL: the chosen
 * backend's). */
static const hop__math *in_use;

/* The backend HOP_MATH picks, chosen once: with an unknown value the libm
 * loops (a kernel cannot fail, and never runs a backend the user did not
 * ask for), and *bad set. */
static const hop__math *
math_chosen(bool *bad)
{
    static const hop__math *chosen;
    static int unknown;
    const hop__math *m = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (m == NULL) {
        /* a race only computes the same answer twice */
        if ((m = hop__math_choose(getenv("HOP_MATH"))) == NULL) {
            __atomic_store_n(&unknown, 1, __ATOMIC_RELAXED);
            m = &hop__math_scalar;
        }
        __atomic_store_n(&chosen, m, __ATOMIC_RELEASE);
    }
    *bad = __atomic_load_n(&unknown, __ATOMIC_RELAXED) != 0;
    return m;
}

hop_status
hop_runtime_math_init(void)
{
    bool bad;
    math_chosen(&bad);
    if (bad && hop__math_choose(getenv("HOP_MATH")) == NULL) /* the error again */
        return hop_error_code();
    return HOP_OK;
}

/* The backend vmath.c chose (HOP_MATH and the CPU), whatever is adopted. */
const hop__math *
hop__math_base(void)
{
    bool bad;
    return math_chosen(&bad);
}

void
hop__math_use(const hop__math *m)
{
    __atomic_store_n(&in_use, m, __ATOMIC_RELEASE);
}

const hop__math *
hop__math_get(void)
{
    const hop__math *m = __atomic_load_n(&in_use, __ATOMIC_ACQUIRE);
    return m != NULL ? m : hop__math_base();
}

const char *
hop_runtime_math_backend(void)
{
    return hop__math_get()->name;
}

/* A build that cannot adopt AVX-512 functions (no vmath_adopt.c, or no
 * AVX-512 SLEEF backend for it to adopt over): the one stub. */
#if !defined(HOP_HAVE_MATH_ADOPT) || !defined(HOP_HAVE_SLEEF_AVX512)
int
hop_runtime_math_adopt(const char *name, hop_dtype dtype, void *fn)
{
    (void)dtype;
    if (fn == NULL)
        return HOP_OK; /* nothing is adopted in this build */
    return hop_error(HOP_UNSUPPORTED,
                     "hop_runtime_math_adopt: %s: this build has no AVX-512 math backend",
                     name ? name : "NULL");
}

int
hop_runtime_math_adopt_nan(const char *name, hop_dtype dtype, hop_math_nan mode)
{
    (void)mode;
    return hop_error(HOP_INVALID,
                     "hop_runtime_math_adopt_nan: %s %s is not adopted (this build adopts "
                     "nothing)",
                     name ? name : "NULL", hop_dtype_name(dtype));
}
#endif

#ifndef HOP_HAVE_MATH_ADOPT
int
hop_runtime_math_adopt_numpy(const char *name, hop_dtype dtype, bool on)
{
    (void)dtype;
    if (!on)
        return HOP_OK; /* nothing is adopted in this build */
    return hop_error(HOP_UNSUPPORTED,
                     "hop_runtime_math_adopt_numpy: %s: this build has no SLEEF math backend",
                     name ? name : "NULL");
}
#endif

/* Runs one member of the table in use, found by name. */
#define RUN_MEMBER(name, m32, m64, arity)                                                          \
    if (strcmp(fname, #name) == 0) {                                                               \
        if (dtype == HOP_F64)                                                                      \
            RUN_##arity(m->m64, double);                                                           \
        else                                                                                       \
            RUN_##arity(m->m32, float);                                                            \
        return HOP_OK;                                                                             \
    }
#define RUN_1(fn, T) (fn)(n, (T *)out, (const T *)a)
#define RUN_2(fn, T)                                                                               \
    do {                                                                                           \
        if (b == NULL)                                                                             \
            return hop_error(HOP_INVALID, "hop_runtime_math_run: %s takes two arrays", fname);     \
        (fn)(n, (T *)out, (const T *)a, (const T *)b);                                             \
    } while (0)

int
hop_runtime_math_run(const char *fname, hop_dtype dtype, int64_t n, void *out, const void *a,
                     const void *b)
{
    if (fname == NULL || (dtype != HOP_F32 && dtype != HOP_F64 && dtype != HOP_F16) || n < 0 ||
        out == NULL || a == NULL)
        return hop_error(HOP_INVALID, "hop_runtime_math_run: needs a function name, f32, f64 or "
                                      "f16, n >= 0 and arrays");
    const hop__math *m = hop__math_get();
    if (dtype == HOP_F16) { /* the float32 function float16's rounds from, over float32 */
        hop__mfn_f32 fn = strcmp(fname, "exp") == 0    ? m->exp_f16
                          : strcmp(fname, "log") == 0  ? m->log_f16
                          : strcmp(fname, "sin") == 0  ? m->sin_f16
                          : strcmp(fname, "cos") == 0  ? m->cos_f16
                          : strcmp(fname, "tanh") == 0 ? m->tanh_f16
                                                       : NULL;
        if (fn == NULL)
            return hop_error(HOP_INVALID,
                             "hop_runtime_math_run: float16's members are exp, log, sin, cos "
                             "and tanh, got '%s'",
                             fname);
        fn(n, out, a);
        return HOP_OK;
    }
    HOP__MATH_NAMED(RUN_MEMBER)
    return hop_error(HOP_INVALID, "hop_runtime_math_run: no math function '%s'", fname);
}
