/*
 * runtime/vmath_adopt.c - another library's AVX-512 vector functions in
 * place of hop's own for some math functions (hop_runtime_math_adopt).
 *
 * What it is for: NumPy runs Intel's SVML (AVX-512, in its own extension
 * module) for float64 exp, log, sin, cos, tanh, pow, ... on CPUs with the
 * AVX512_SKX set.  hop's SLEEF kernels are within 1 ulp but differ from
 * those in the last bit for 20-60% of elements, and SLEEF's exp and sin are
 * 1.4-1.7x slower.  Python's `import hop` finds NumPy's functions and adopts
 * each one whose results are NumPy's bit for bit on a probe
 * (python/hop/_numpy_math.py), so hop.numpy answers with NumPy's bits at
 * NumPy's speed.  Everything else, and a process that adopts nothing,
 * keeps the backend vmath.c chose.
 *
 * An adopted function takes and returns one zmm register (8 doubles or 16
 * floats; two for pow and atan2), the x86-64 vector ABI of SVML's
 * __svml_exp8 and glibc's _ZGVeN8v_exp.  A loop's tail shorter than a
 * vector is padded with copies of its last element, so the padding raises
 * no floating-point flag that the elements do not (flags are what hop.numpy
 * warns from: runtime/fpstatus.c).  Only the loops are built for AVX-512
 * (a target pragma), and they run only on CPUs with AVX-512 F, CD, BW, DQ
 * and VL (SKX, NumPy's own condition); the rest, hop_runtime_math_adopt's
 * checks included, is baseline x86-64 code that any CPU (and valgrind,
 * which has no AVX-512) runs.
 *
 * It also installs hop's copies of NumPy's own float32 exp, log, sin and
 * cos loops (vmath_numpy.c; hop_runtime_math_adopt_numpy), which NumPy
 * runs on CPUs with AVX2 and FMA: those need only the AVX2 backend, at
 * whose width (or the AVX-512 one's) they run.  Both kinds share the one
 * adopted table.
 */
#include "hop/runtime.h"
#include "runtime/runtime.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef HOP_HAVE_SLEEF_AVX512
#pragma GCC push_options
#pragma GCC target("avx512f")

typedef __m512d (*vfn_d)(__m512d);
typedef __m512 (*vfn_f)(__m512);
typedef __m512d (*vfn2_d)(__m512d, __m512d);
typedef __m512 (*vfn2_f)(__m512, __m512);

/* fn(v), with NaN lanes as nan says (hop_runtime_math_adopt_nan; a masked
 * move raises no flag, the compare invalid for a signalling NaN). */
static inline __m512d
call_d(vfn_d fn, hop_math_nan nan, __m512d v)
{
    if (nan == HOP_MATH_NAN_OWN)
        return fn(v);
    __mmask8 isnan = _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
    if (nan == HOP_MATH_NAN_DEFAULT)
        return _mm512_mask_mov_pd(fn(v), isnan,
                                  _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff8000000000000)));
    return _mm512_mask_mov_pd(fn(_mm512_mask_mov_pd(v, isnan, _mm512_set1_pd(1.0))), isnan, v);
}

static inline __m512
call_f(vfn_f fn, hop_math_nan nan, __m512 v)
{
    if (nan == HOP_MATH_NAN_OWN)
        return fn(v);
    __mmask16 isnan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    if (nan == HOP_MATH_NAN_DEFAULT)
        return _mm512_mask_mov_ps(fn(v), isnan, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
    return _mm512_mask_mov_ps(fn(_mm512_mask_mov_ps(v, isnan, _mm512_set1_ps(1.0f))), isnan, v);
}

static inline void
loop_d(vfn_d fn, hop_math_nan nan, int64_t n, double *out, const double *in)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(out + i, call_d(fn, nan, _mm512_loadu_pd(in + i)));
    if (i < n) {
        double buf[8];
        for (int k = 0; k < 8; k++)
            buf[k] = in[i + k < n ? i + k : n - 1];
        _mm512_storeu_pd(buf, call_d(fn, nan, _mm512_loadu_pd(buf)));
        memcpy(out + i, buf, (size_t)(n - i) * sizeof(double));
    }
}

static inline void
loop_f(vfn_f fn, hop_math_nan nan, int64_t n, float *out, const float *in)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, call_f(fn, nan, _mm512_loadu_ps(in + i)));
    if (i < n) {
        float buf[16];
        for (int k = 0; k < 16; k++)
            buf[k] = in[i + k < n ? i + k : n - 1];
        _mm512_storeu_ps(buf, call_f(fn, nan, _mm512_loadu_ps(buf)));
        memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));
    }
}

static inline void
loop2_d(vfn2_d fn, int64_t n, double *out, const double *a, const double *b)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(out + i, fn(_mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i)));
    if (i < n) {
        double x[8], y[8];
        for (int k = 0; k < 8; k++) {
            x[k] = a[i + k < n ? i + k : n - 1];
            y[k] = b[i + k < n ? i + k : n - 1];
        }
        _mm512_storeu_pd(x, fn(_mm512_loadu_pd(x), _mm512_loadu_pd(y)));
        memcpy(out + i, x, (size_t)(n - i) * sizeof(double));
    }
}

static inline void
loop2_f(vfn2_f fn, int64_t n, float *out, const float *a, const float *b)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, fn(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
    if (i < n) {
        float x[16], y[16];
        for (int k = 0; k < 16; k++) {
            x[k] = a[i + k < n ? i + k : n - 1];
            y[k] = b[i + k < n ? i + k : n - 1];
        }
        _mm512_storeu_ps(x, fn(_mm512_loadu_ps(x), _mm512_loadu_ps(y)));
        memcpy(out + i, x, (size_t)(n - i) * sizeof(float));
    }
}

/* Per function and width: the adopted vector function, what NaN lanes
 * answer (one argument), and the loop over it that goes into the table
 * while it is adopted. */
#define LOOPS_1(name)                                                                              \
    static vfn_f ad_##name##_f;                                                                    \
    static vfn_d ad_##name##_d;                                                                    \
    static hop_math_nan nan_##name##_f, nan_##name##_d;                                            \
    static void run_##name##_f32(int64_t n, float *out, const float *in)                           \
    {                                                                                              \
        loop_f(ad_##name##_f, nan_##name##_f, n, out, in);                                         \
    }                                                                                              \
    static void run_##name##_f64(int64_t n, double *out, const double *in)                         \
    {                                                                                              \
        loop_d(ad_##name##_d, nan_##name##_d, n, out, in);                                         \
    }
#define LOOPS_2(name)                                                                              \
    static vfn2_f ad_##name##_f;                                                                   \
    static vfn2_d ad_##name##_d;                                                                   \
    static void run_##name##_f32(int64_t n, float *out, const float *a, const float *b)            \
    {                                                                                              \
        loop2_f(ad_##name##_f, n, out, a, b);                                                      \
    }                                                                                              \
    static void run_##name##_f64(int64_t n, double *out, const double *a, const double *b)         \
    {                                                                                              \
        loop2_d(ad_##name##_d, n, out, a, b);                                                      \
    }
#define LOOPS(name, m32, m64, arity) LOOPS_##arity(name)
HOP__MATH_NAMED(LOOPS)

/* The float16 members' adopted float32 functions (exp log sin cos tanh), and
 * their loops: NaN lanes as the function answers them. */
#define HALF_LOOP(name)                                                                            \
    static vfn_f ad_##name##_h;                                                                    \
    static void run_##name##_h(int64_t n, float *out, const float *in)                             \
    {                                                                                              \
        loop_f(ad_##name##_h, HOP_MATH_NAN_OWN, n, out, in);                                       \
    }
HALF_LOOP(exp)
HALF_LOOP(log)
HALF_LOOP(sin)
HALF_LOOP(cos)
HALF_LOOP(tanh)

#pragma GCC pop_options
#endif

#ifdef HOP_HAVE_SLEEF_AVX512
static bool
cpu_runs_it(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

/* m's member for fname at one width: fn's loop, or base's own when fn is
 * NULL.  Returns the number of adopted functions it added (-1 removed, 0
 * unchanged), or 2 for an unknown name. */
#define SET_MEMBER(name, m32, m64, arity)                                                          \
    if (strcmp(fname, #name) == 0) {                                                               \
        int was, now = fn != NULL;                                                                 \
        if (f64) {                                                                                 \
            was = m->m64 != base->m64;                                                             \
            memcpy(&ad_##name##_d, &fn, sizeof fn);                                                \
            m->m64 = now ? run_##name##_f64 : base->m64;                                           \
        } else {                                                                                   \
            was = m->m32 != base->m32;                                                             \
            memcpy(&ad_##name##_f, &fn, sizeof fn);                                                \
            m->m32 = now ? run_##name##_f32 : base->m32;                                           \
        }                                                                                          \
        return now - was;                                                                          \
    }

static int
set_member(hop__math *m, const hop__math *base, const char *fname, bool f64, void *fn)
{
    HOP__MATH_NAMED(SET_MEMBER)
    return 2;
}

/* m's float16 member for fname (exp, log, sin, cos, tanh) as set_member's. */
#define SET_HALF(name)                                                                             \
    if (strcmp(fname, #name) == 0) {                                                               \
        int was = m->name##_f16 != base->name##_f16, now = fn != NULL;                             \
        memcpy(&ad_##name##_h, &fn, sizeof fn);                                                    \
        m->name##_f16 = now ? run_##name##_h : base->name##_f16;                                   \
        return now - was;                                                                          \
    }

static int
set_half_member(hop__math *m, const hop__math *base, const char *fname, void *fn)
{
    SET_HALF(exp)
    SET_HALF(log)
    SET_HALF(sin)
    SET_HALF(cos)
    SET_HALF(tanh)
    return 2;
}

/* The NaN mode of fname at one width (a one-argument function), or NULL. */
#define NAN_MODE_1(name)                                                                           \
    if (strcmp(fname, #name) == 0)                                                                 \
        return f64 ? &nan_##name##_d : &nan_##name##_f;
#define NAN_MODE_2(name)
#define NAN_MODE(name, m32, m64, arity) NAN_MODE_##arity(name)

static hop_math_nan *
nan_mode(const char *fname, bool f64)
{
    HOP__MATH_NAMED(NAN_MODE)
    return NULL;
}

#endif

/* The table in use while something is adopted: the chosen backend's with
 * the adopted members replaced; how many are adopted. */
static hop__math adopted;
static char adopted_name[48];
static int adopted_count;

/* Makes the adopted table (or the base, when nothing is adopted) the one
 * in use after a member changed by change (+1 adopted, -1 returned). */
static void
use_adopted(const hop__math *base, int change)
{
    adopted_count += change;
    snprintf(adopted_name, sizeof adopted_name, "%s+adopted", base->name);
    adopted.name = adopted_name;
    hop__math_use(adopted_count > 0 ? &adopted : base);
}

#ifdef HOP_HAVE_SLEEF_AVX512
/* The function names for messages, from the one list: ", exp, log, ...",
 * read from its third character; ONE_ARG_NAMES the one-argument ones. */
#define NAME_OF(name, m32, m64, arity) ", " #name
#define ONE_ARG_NAME_1(name) ", " #name
#define ONE_ARG_NAME_2(name)
#define ONE_ARG_NAME(name, m32, m64, arity) ONE_ARG_NAME_##arity(name)
static const char MATH_NAMES[] = HOP__MATH_NAMED(NAME_OF);
static const char ONE_ARG_NAMES[] = HOP__MATH_NAMED(ONE_ARG_NAME);

int
hop_runtime_math_adopt(const char *name, hop_dtype dtype, void *fn)
{
    if (name == NULL || (dtype != HOP_F32 && dtype != HOP_F64 && dtype != HOP_F16))
        return hop_error(HOP_INVALID,
                         "hop_runtime_math_adopt: needs a function name and f32, f64 or "
                         "f16, got %s and %s",
                         name ? name : "NULL", hop_dtype_name(dtype));
    const hop__math *base = hop__math_base();
    if (fn != NULL && (base != hop__math_sleef_avx512() || !cpu_runs_it()))
        return hop_error(HOP_UNSUPPORTED,
                         "hop_runtime_math_adopt: %s: the math backend in use is %s; AVX-512 "
                         "functions are adopted only over sleef-avx512 on CPUs with AVX-512 F, "
                         "CD, BW, DQ and VL",
                         name, base->name);
    if (adopted_count == 0)
        adopted = *base;
    if (dtype == HOP_F16) { /* the float32 function float16's rounds from */
        int change = set_half_member(&adopted, base, name, fn);
        if (change == 2)
            return hop_error(HOP_INVALID,
                             "hop_runtime_math_adopt: float16 adopts exp, log, sin, cos and "
                             "tanh, got '%s'",
                             name);
        use_adopted(base, change);
        return HOP_OK;
    }
    int change = set_member(&adopted, base, name, dtype == HOP_F64, fn);
    if (change == 2)
        return hop_error(HOP_INVALID, "hop_runtime_math_adopt: no math function '%s' (%s)", name,
                         MATH_NAMES + 2);
    hop_math_nan *nan = nan_mode(name, dtype == HOP_F64);
    if (nan != NULL) /* a function adopted again, or hop's own: its own NaNs */
        *nan = HOP_MATH_NAN_OWN;
    use_adopted(base, change);
    return HOP_OK;
}

/* Whether the table in use runs fname's adopted function at one width. */
#define RUNS_ADOPTED(name, m32, m64, arity)                                                        \
    if (strcmp(fname, #name) == 0)                                                                 \
        return adopted_count > 0 &&                                                                \
               (f64 ? adopted.m64 == run_##name##_f64 : adopted.m32 == run_##name##_f32);

static bool
runs_adopted(const char *fname, bool f64)
{
    HOP__MATH_NAMED(RUNS_ADOPTED)
    return false;
}

int
hop_runtime_math_adopt_nan(const char *name, hop_dtype dtype, hop_math_nan mode)
{
    hop_math_nan *nan = name != NULL && (dtype == HOP_F32 || dtype == HOP_F64)
                            ? nan_mode(name, dtype == HOP_F64)
                            : NULL;
    if (nan == NULL)
        return hop_error(HOP_INVALID,
                         "hop_runtime_math_adopt_nan: needs a one-argument math function (%s) and "
                         "f32 or f64, got %s and %s",
                         ONE_ARG_NAMES + 2, name ? name : "NULL", hop_dtype_name(dtype));
    if (mode != HOP_MATH_NAN_OWN && mode != HOP_MATH_NAN_DEFAULT && mode != HOP_MATH_NAN_OPERAND)
        return hop_error(HOP_INVALID, "hop_runtime_math_adopt_nan: %s: no NaN mode %d", name,
                         (int)mode);
    if (!runs_adopted(name, dtype == HOP_F64))
        return hop_error(HOP_INVALID,
                         "hop_runtime_math_adopt_nan: %s %s is not adopted "
                         "(hop_runtime_math_adopt first)",
                         name, hop_dtype_name(dtype));
    *nan = mode;
    return HOP_OK;
}
#endif /* (without it: vmath.c's stubs) */

/* The float32 member of m for name (exp, log, sin, cos), or NULL. */
static hop__mfn_f32 *
numpy_member(hop__math *m, const char *name)
{
    if (strcmp(name, "exp") == 0)
        return &m->exp_f32;
    if (strcmp(name, "log") == 0)
        return &m->log_f32;
    if (strcmp(name, "sin") == 0)
        return &m->sin_f32;
    if (strcmp(name, "cos") == 0)
        return &m->cos_f32;
    return NULL;
}

int
hop_runtime_math_adopt_numpy(const char *name, hop_dtype dtype, bool on)
{
    hop__math probe;
    if (name == NULL || dtype != HOP_F32 || numpy_member(&probe, name) == NULL)
        return hop_error(HOP_INVALID,
                         "hop_runtime_math_adopt_numpy: NumPy's own loops are float32 exp, log, "
                         "sin and cos, got %s and %s",
                         name ? name : "NULL", hop_dtype_name(dtype));
    const hop__math *base = hop__math_base();
    bool avx512 = base == hop__math_sleef_avx512();
    if (on && base != hop__math_sleef_avx2() && !avx512)
        return hop_error(HOP_UNSUPPORTED,
                         "hop_runtime_math_adopt_numpy: %s: the math backend in use is %s; "
                         "NumPy's loops are adopted only over sleef-avx2 or sleef-avx512 (CPUs "
                         "with AVX2 and FMA)",
                         name, base->name);
    if (adopted_count == 0)
        adopted = *base;
    hop__mfn_f32 *member = numpy_member(&adopted, name);
    hop__math own_table = *base;
    hop__mfn_f32 own = *numpy_member(&own_table, name);
    int was = *member != own;
    *member = on ? hop__math_numpy_f32(name, avx512) : own;
    use_adopted(base, (int)on - was);
    return HOP_OK;
}
