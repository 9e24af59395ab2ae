/*
 * tests/c/test_math_backends.c - the math backends of runtime/vmath.c:
 * which one HOP_MATH and the CPU pick (the widest the CPU runs: AVX-512,
 * else AVX2, else the libm loops; under valgrind, whose cpuid reports no
 * AVX-512, AVX2), and every backend the CPU runs within its bound: SLEEF's
 * documented 1.0 ulp (u10; hypot 0.5 ulp, u05) against long double
 * references, the scalar backend bit for bit libm's own function (and
 * every backend for the members it computes with libm).
 */
#include "test_runtime_util.h"

#include "runtime/runtime.h"

#include <float.h>
#include <stdlib.h>

static bool
cpu_has(const char *what)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (strcmp(what, "avx512f") == 0)
        return __builtin_cpu_supports("avx512f");
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    (void)what;
    return false;
#endif
}

/* The backends this CPU runs, the scalar one first. */
static int
runnable(const hop__math **out)
{
    int n = 0;
    out[n++] = &hop__math_scalar;
    if (hop__math_sleef_avx2() != NULL && cpu_has("avx2"))
        out[n++] = hop__math_sleef_avx2();
    if (hop__math_sleef_avx512() != NULL && cpu_has("avx512f"))
        out[n++] = hop__math_sleef_avx512();
    return n;
}

static void
choice_follows_hop_math_and_the_cpu(void **state)
{
    (void)state;
    const hop__math *avx2 =
        hop__math_sleef_avx2() && cpu_has("avx2") ? hop__math_sleef_avx2() : &hop__math_scalar;
    const hop__math *widest =
        hop__math_sleef_avx512() && cpu_has("avx512f") ? hop__math_sleef_avx512() : avx2;
    assert_ptr_equal(hop__math_choose("scalar"), &hop__math_scalar);
    assert_ptr_equal(hop__math_choose("avx2"), avx2);
    assert_ptr_equal(hop__math_choose(NULL), widest);
    assert_ptr_equal(hop__math_choose(""), widest);
    assert_ptr_equal(hop__math_choose("sleef"), widest); /* (Python adopts nothing then) */
    /* a typo is an error naming the variable, the value and the valid ones */
    hop_error_clear();
    assert_null(hop__math_choose("avx512"));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "HOP_MATH=\"avx512\" is not a math backend: valid values are \"avx2\", "
                        "\"scalar\", \"sleef\" (the widest SLEEF backend, with nothing adopted), "
                        "or unset (or empty) for the widest the CPU runs");
    hop_error_clear();
    assert_null(hop__math_choose("Scalar"));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    /* the process's own choice (HOP_MATH as the test runs) is one of them,
     * and never one the CPU cannot run (valgrind: no AVX-512) */
    const char *env = getenv("HOP_MATH");
    assert_ptr_equal(hop__math_get(), hop__math_choose(env));
    assert_int_equal(hop_runtime_math_init(), HOP_OK);
    if (!cpu_has("avx512f"))
        assert_true(hop__math_get() != hop__math_sleef_avx512() ||
                    hop__math_sleef_avx512() == NULL);
    assert_string_equal(hop_runtime_math_backend(), hop__math_get()->name);
    print_message("math backend: %s (avx512f %d)\n", hop_runtime_math_backend(),
                  cpu_has("avx512f"));
    if (hop__math_sleef_avx2() != NULL && cpu_has("avx2") && env == NULL)
        assert_true(strncmp(hop_runtime_math_backend(), "sleef-", 6) == 0);
}

/* |r - exact| in units of the last place of the double nearest exact (the
 * subnormals' spacing below DBL_MIN); float: spacing 2^-23 relative. */
static long double
ulps(long double r, long double exact, int mant_bits, int min_exp)
{
    if (r == exact)
        return 0;
    int e;
    frexpl(exact, &e); /* |exact| in [2^(e-1), 2^e) */
    if (e - 1 < min_exp)
        e = min_exp + 1;
    return fabsl(r - exact) / ldexpl(1.0L, e - 1 - mant_bits);
}

typedef struct fn1 {
    const char *name;
    long double (*ref)(long double);
    double lo, hi; /* the sampled interval */
    int index;     /* -1: the named field; else unary_f64/f32[index] */
    double lim64;  /* beyond this |x| (SLEEF's domain) libm's function runs */
    float lim32;
} fn1;

static void
pick(const hop__math *m, const fn1 *f, hop__mfn_f64 *d, hop__mfn_f32 *s)
{
    if (f->index >= 0) {
        *d = m->unary_f64[f->index];
        *s = m->unary_f32[f->index];
    } else if (strcmp(f->name, "exp") == 0) {
        *d = m->exp_f64, *s = m->exp_f32;
    } else if (strcmp(f->name, "log") == 0) {
        *d = m->log_f64, *s = m->log_f32;
    } else if (strcmp(f->name, "sin") == 0) {
        *d = m->sin_f64, *s = m->sin_f32;
    } else if (strcmp(f->name, "cos") == 0) {
        *d = m->cos_f64, *s = m->cos_f32;
    } else {
        *d = m->tanh_f64, *s = m->tanh_f32;
    }
}

#define ALL INFINITY, INFINITY
static const fn1 FNS[] = {
    {"exp", expl, -740, 709, -1, ALL},
    {"log", logl, 1e-300, 1e300, -1, ALL},
    {"sin", sinl, -1e4, 1e4, -1, ALL},
    {"cos", cosl, -1e4, 1e4, -1, ALL},
    {"tanh", tanhl, -20, 20, -1, ALL},
    {"sinh", sinhl, -710, 710, HOP__MU_sinh, 700.0, 88.0f},
    {"cosh", coshl, -710, 710, HOP__MU_cosh, 700.0, 88.0f},
    {"asin", asinl, -1, 1, HOP__MU_asin, ALL},
    {"acos", acosl, -1, 1, HOP__MU_acos, ALL},
    {"asinh", asinhl, -1e160, 1e160, HOP__MU_asinh, 1e150, 1e19f},
    {"acosh", acoshl, 1, 1e160, HOP__MU_acosh, 1e150, 1e19f},
    {"atanh", atanhl, -1, 1, HOP__MU_atanh, ALL},
    {"cbrt", cbrtl, -1e9, 1e9, HOP__MU_cbrt, ALL},
};

/* libm's own functions, for the scalar backend's bits */
static double (*const LIBM64[])(double) = {exp,  log,  sin,   cos,   tanh,  sinh, cosh,
                                           asin, acos, asinh, acosh, atanh, cbrt};
static float (*const LIBM32[])(float) = {expf,  logf,  sinf,   cosf,   tanhf,  sinhf, coshf,
                                         asinf, acosf, asinhf, acoshf, atanhf, cbrtf};

#define NPTS 4099 /* not a multiple of 8 or 16: every backend's tail runs */

/* n points over [lo, hi]: evenly spaced, and for wide intervals also
 * spread over the magnitudes (log-spaced), plus a few large sin/cos
 * arguments (reduction far from 0). */
static void
points(const fn1 *f, double *x)
{
    for (int i = 0; i < NPTS; i++) {
        double t = (double)i / (NPTS - 1);
        if (i % 2 == 0 || f->lo <= 0 || f->hi / f->lo < 1e3)
            x[i] = f->lo + (f->hi - f->lo) * t;
        else
            x[i] = exp(log(f->lo) + (log(f->hi) - log(f->lo)) * t);
    }
    if (strcmp(f->name, "sin") == 0 || strcmp(f->name, "cos") == 0) {
        x[1] = 1e15, x[3] = -3.5e22, x[5] = 1e300, x[7] = 6.2831853071795862;
    }
}

/* Whether long double carries more bits than double: not under valgrind,
 * which computes x87 arithmetic in doubles (then the references are no
 * better than the results, and only libm's bits are checked). */
static bool
precise_reference(void)
{
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    return one + tiny != one;
}

static void
backend_within_bound(const hop__math *m, const fn1 *f, int k)
{
    double x[NPTS], y[NPTS];
    float xf[NPTS], yf[NPTS];
    hop__mfn_f64 d;
    hop__mfn_f32 s;
    points(f, x);
    for (int i = 0; i < NPTS; i++)
        xf[i] = (float)x[i];
    pick(m, f, &d, &s);
    d(NPTS, y, x);
    s(NPTS, yf, xf);
    bool scalar = m == &hop__math_scalar;
    long double worst = 0, worstf = 0;
    double worst_x = 0;
    float worst_xf = 0;
    for (int i = 0; i < NPTS; i++) {
        bool libm64 = scalar || fabs(x[i]) > f->lim64, libm32 = scalar || fabsf(xf[i]) > f->lim32;
        if (libm64 || libm32) { /* the libm loops, or a lane past SLEEF's domain: libm's bits */
            double want = LIBM64[k](x[i]);
            float wantf = LIBM32[k](xf[i]);
            if (libm64)
                assert_memory_equal(&y[i], &want, sizeof want);
            if (libm32)
                assert_memory_equal(&yf[i], &wantf, sizeof wantf);
        }
        /* SLEEF's lanes: within its bound */
        long double r = libm64 ? y[i] : f->ref(x[i]), rf = libm32 ? yf[i] : f->ref(xf[i]);
        if (fabsl(r) > DBL_MAX && !(isinf(y[i]) && !signbit(y[i]) == !signbit(r)))
            fail_msg("%s %s(%a) = %a, not %Lg", m->name, f->name, x[i], y[i], r);
        if (fabsl(rf) > FLT_MAX && !(isinf(yf[i]) && !signbit(yf[i]) == !signbit(rf)))
            fail_msg("%s %s(%a f) = %a, not %Lg", m->name, f->name, xf[i], yf[i], rf);
        if (fabsl(r) <= DBL_MAX && ulps(y[i], r, 52, DBL_MIN_EXP - 1) > worst) {
            worst = ulps(y[i], r, 52, DBL_MIN_EXP - 1);
            worst_x = x[i];
        }
        if (fabsl(rf) <= FLT_MAX && ulps(yf[i], rf, 23, FLT_MIN_EXP - 1) > worstf) {
            worstf = ulps(yf[i], rf, 23, FLT_MIN_EXP - 1);
            worst_xf = xf[i];
        }
    }
    /* SLEEF's u10 bound, 1.0 ulp, and the long double reference's own
     * error (under 2^-10 ulp of a double) */
    if (precise_reference() && (worst > 1.0L + 0x1p-10L || worstf > 1.0L + 0x1p-10L))
        fail_msg("%s %s: %.4Lf ulp at %a (f64), %.4Lf ulp at %a (f32), bound 1.0", m->name, f->name,
                 worst, worst_x, worstf, (double)worst_xf);
}

static void
every_backend_within_its_bound(void **state)
{
    (void)state;
    const hop__math *ms[3];
    int nm = runnable(ms);
    for (int b = 0; b < nm; b++)
        for (int k = 0; k < (int)N_(FNS); k++)
            backend_within_bound(ms[b], &FNS[k], k);
}

static void
hypot_within_half_an_ulp(void **state)
{
    (void)state;
    const hop__math *ms[3];
    int nm = runnable(ms);
    double a[NPTS], b[NPTS], y[NPTS];
    for (int i = 0; i < NPTS; i++) {
        a[i] = ldexp(1.0 + i * 1e-3, i % 200 - 100);
        b[i] = ldexp(3.0 - i * 1e-4, (i * 7) % 200 - 100);
    }
    for (int m = 1; m < nm; m++) {
        ms[m]->binary_f64[HOP__MB_hypot](NPTS, y, a, b);
        for (int i = 0; i < NPTS; i++) {
            long double r = sqrtl((long double)a[i] * a[i] + (long double)b[i] * b[i]);
            long double e = ulps(y[i], r, 52, DBL_MIN_EXP - 1);
            if (e > 0.5001L + 0x1p-10L && precise_reference()) /* SLEEF's u05: 0.5001 ulp */
                fail_msg("%s hypot(%a, %a): %.4Lf ulp", ms[m]->name, a[i], b[i], e);
        }
    }
}

/* The members every backend computes with libm (log10 ... atan: members so
 * that NumPy's SVML functions can be adopted for them) are libm's bits,
 * signalling NaNs and infinities included, in every backend. */
static const struct {
    int index;
    double (*f64)(double);
    float (*f32)(float);
    double lo, hi;
} LIBM_MEMBERS[] = {
    {HOP__MU_log10, log10, log10f, -1, 1e30}, {HOP__MU_log2, log2, log2f, -1, 1e30},
    {HOP__MU_exp2, exp2, exp2f, -1100, 1100}, {HOP__MU_expm1, expm1, expm1f, -800, 800},
    {HOP__MU_log1p, log1p, log1pf, -2, 1e30}, {HOP__MU_tan, tan, tanf, -1e6, 1e6},
    {HOP__MU_atan, atan, atanf, -1e30, 1e30},
};

static void
libm_members_are_libms_bits(void **state)
{
    (void)state;
    const hop__math *ms[3];
    int nm = runnable(ms);
    static double x[NPTS], y[NPTS];
    static float xf[NPTS], yf[NPTS];
    uint64_t snan = 0x7ff0000000000005ull;
    for (int k = 0; k < (int)N_(LIBM_MEMBERS); k++) {
        double lo = LIBM_MEMBERS[k].lo, hi = LIBM_MEMBERS[k].hi;
        for (int i = 0; i < NPTS; i++) {
            double t = (double)i / (NPTS - 1);
            x[i] = i % 2 == 0 ? lo + (hi - lo) * t : (i % 4 == 1 ? 1 : -1) * exp(-30 + 100 * t);
            xf[i] = (float)x[i];
        }
        x[1] = INFINITY, x[3] = -INFINITY, x[5] = NAN, x[7] = -0.0, x[9] = 0.0;
        memcpy(&x[11], &snan, sizeof snan);
        for (int i = 1; i < 12; i += 2)
            xf[i] = (float)x[i];
        for (int b = 0; b < nm; b++) {
            ms[b]->unary_f64[LIBM_MEMBERS[k].index](NPTS, y, x);
            ms[b]->unary_f32[LIBM_MEMBERS[k].index](NPTS, yf, xf);
            for (int i = 0; i < NPTS; i++) {
                double want = LIBM_MEMBERS[k].f64(x[i]);
                float wantf = LIBM_MEMBERS[k].f32(xf[i]);
                if (memcmp(&y[i], &want, sizeof want) != 0 ||
                    memcmp(&yf[i], &wantf, sizeof wantf) != 0)
                    fail_msg("%s member %d at %a: %a (libm %a), f32 %a (libm %a)", ms[b]->name,
                             LIBM_MEMBERS[k].index, x[i], y[i], want, (double)yf[i], (double)wantf);
            }
        }
    }
}

/* glibc's libmvec AVX-512 exp, a function of the vector ABI that
 * hop_runtime_math_adopt takes (its type does not matter here: only its
 * address is passed). */
#ifdef HOP_TEST_LIBMVEC
extern void _ZGVeN8v_exp(void);
#endif

static bool
cpu_has_skx(void)
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

/* hop_runtime_math_adopt: another library's function in place of SLEEF's,
 * back to SLEEF's bit for bit; bad arguments change nothing. */
static void
adopt_replaces_and_restores(void **state)
{
    (void)state;
#ifndef HOP_TEST_LIBMVEC
    skip();
#else
    enum { N = 2003 };
    static double x[N], r0[N], r1[N], r2[N];
    for (int i = 0; i < N; i++)
        x[i] = -700.0 + 1400.0 * i / (N - 1) + (i % 7) * 1e-3;
    char before[64];
    snprintf(before, sizeof before, "%s", hop_runtime_math_backend());
    void *fn = (void *)_ZGVeN8v_exp;
    assert_int_equal(hop_runtime_math_adopt("expp", HOP_F64, fn),
                     hop__math_get() == hop__math_sleef_avx512() && cpu_has_skx()
                         ? HOP_INVALID
                         : HOP_UNSUPPORTED);
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_I32, fn), HOP_INVALID);
    /* nothing adopted yet: no default NaN to turn on */
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, HOP_MATH_NAN_DEFAULT), HOP_INVALID);
    assert_non_null(strstr(hop_error_message(), "not adopted"));
    assert_string_equal(hop_runtime_math_backend(), before);
    if (hop__math_get() != hop__math_sleef_avx512() || !cpu_has_skx()) {
        /* valgrind, HOP_MATH, older CPUs: nothing can be adopted */
        assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, fn), HOP_UNSUPPORTED);
        assert_non_null(strstr(hop_error_message(), "AVX-512"));
        assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, NULL), HOP_OK);
        assert_string_equal(hop_runtime_math_backend(), before);
        return;
    }
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, N, r0, x, NULL), HOP_OK);
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, fn), HOP_OK);
    assert_string_equal(hop_runtime_math_backend(), "sleef-avx512+adopted");
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, N, r1, x, NULL), HOP_OK);
    int differ = 0;
    for (int i = 0; i < N; i++) {
        differ += r1[i] != r0[i];
        long double e = ulps(r1[i], expl(x[i]), 52, DBL_MIN_EXP);
        if (e > 4.0L && precise_reference()) /* libmvec's documented 4 ulp */
            fail_msg("libmvec exp(%a): %.4Lf ulp", x[i], e);
    }
    assert_true(differ > 0); /* libmvec's function ran, not SLEEF's */
    /* the default NaN for NaN arguments, on and off; two-argument
     * functions and other widths refuse it */
    double nx[19], ny[19];
    uint64_t neg = 0xfff8000000000123ull, bits;
    for (int i = 0; i < 19; i++)
        memcpy(&nx[i], &neg, sizeof neg);
    assert_int_equal(hop_runtime_math_adopt_nan("pow", HOP_F64, HOP_MATH_NAN_DEFAULT), HOP_INVALID);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F32, HOP_MATH_NAN_DEFAULT), HOP_INVALID);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, HOP_MATH_NAN_DEFAULT), HOP_OK);
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, 19, ny, nx, NULL), HOP_OK);
    for (int i = 0; i < 19; i++) {
        memcpy(&bits, &ny[i], sizeof bits);
        assert_int_equal(bits, 0x7ff8000000000000ull);
    }
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, N, r2, x, NULL), HOP_OK);
    assert_memory_equal(r1, r2, sizeof r1); /* numbers as before */
    /* the NaN operand itself, a signalling one too (x + x would quiet it) */
    uint64_t snan = 0x7ff0000000000005ull;
    memcpy(&nx[7], &snan, sizeof snan);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, HOP_MATH_NAN_OPERAND), HOP_OK);
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, 19, ny, nx, NULL), HOP_OK);
    assert_memory_equal(nx, ny, sizeof nx);
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, N, r2, x, NULL), HOP_OK);
    assert_memory_equal(r1, r2, sizeof r1);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, (hop_math_nan)7), HOP_INVALID);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, HOP_MATH_NAN_DEFAULT), HOP_OK);
    /* adopting the function again: its own NaNs */
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, fn), HOP_OK);
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, 19, ny, nx, NULL), HOP_OK);
    memcpy(&bits, &ny[0], sizeof bits);
    assert_true(bits != 0x7ff8000000000000ull);
    assert_int_equal(hop_runtime_math_adopt_nan("exp", HOP_F64, HOP_MATH_NAN_DEFAULT), HOP_OK);
    /* returning to hop's own and adopting again: off */
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, NULL), HOP_OK);
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, fn), HOP_OK);
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, 19, ny, nx, NULL), HOP_OK);
    memcpy(&bits, &ny[18], sizeof bits);
    assert_true(bits != 0x7ff8000000000000ull); /* libmvec's own NaN */
    assert_int_equal(hop_runtime_math_adopt("exp", HOP_F64, NULL), HOP_OK);
    assert_string_equal(hop_runtime_math_backend(), "sleef-avx512");
    assert_int_equal(hop_runtime_math_run("exp", HOP_F64, N, r2, x, NULL), HOP_OK);
    assert_memory_equal(r0, r2, sizeof r0);
    assert_int_equal(hop_runtime_math_run("pow", HOP_F64, N, r2, x, NULL), HOP_INVALID);
#endif
}

/* hop_runtime_math_adopt_numpy: hop's copies of NumPy 1.24's float32
 * exp, log, sin and cos loops give NumPy's bits (measured with NumPy 1.24.2
 * on an AVX2 machine: exp(1) is 0x402df855, the correctly rounded value
 * 0x402df854) and flags; off, SLEEF's again; bad arguments change nothing. */
static const uint32_t np_x[] = {0x3f800000, 0xbf800000, 0x41280000, 0xc2b40000, 0x42b10000,
                                0x0da24260, 0x40400000, 0x47c35000, 0x48435000, 0x00000000,
                                0x80000000, 0x3f400000, 0x000116c2, 0x42c80000};
static const uint32_t np_want[4][14] = {
    {0x402df855, 0x3ebc5ab1, 0x470ddb81, 0x0008ec28, 0x7f4cdcc3, 0x3f800000, 0x41a0af2e, 0x7f800000,
     0x7f800000, 0x3f800000, 0x3f800000, 0x40077cee, 0x3f800000, 0x7f800000},
    {0x00000000, 0xffc00000, 0x40167cef, 0xffc00000, 0x408f74c2, 0xc28a27b5, 0x3f8c9f54, 0x413834f1,
     0x41434c13, 0xff800000, 0xff800000, 0xbe934b11, 0xc2b834f2, 0x40935d8e},
    {0x3f576aa5, 0xbf576aa5, 0xbf6133be, 0xbf64dcf7, 0x3f029bd0, 0x0da24260, 0x3e1081c3, 0x3d126d55,
     0xbd92555f, 0x00000000, 0x80000000, 0x3f2e7fe1, 0x000116c2, 0xbf01a12e},
    {0x3f0a5140, 0x3f0a5140, 0xbef37994, 0xbee569e8, 0x3f5c2d01, 0x3f800000, 0xbf7d7026, 0xbf7fd61c,
     0x3f7f587e, 0x3f800000, 0x3f800000, 0x3f3b4ff6, 0x3f800000, 0x3f5cc0ee},
};
/* NumPy's flags for those inputs: exp overflows (1e5, 2e5, 100) and
 * underflows (-90); log divides by zero (+-0) and is invalid (-1, -90);
 * sin and cos underflow (1e-30, 1e-40: the square of the reduced argument) */
static const int np_flags[4] = {HOP_FP_OVERFLOW | HOP_FP_UNDERFLOW, HOP_FP_DIVIDE | HOP_FP_INVALID,
                                HOP_FP_UNDERFLOW, HOP_FP_UNDERFLOW};

/* Whether vector arithmetic raises the IEEE flags here: not under
 * valgrind, which does not model them (then only the flags the loops note
 * show, a part of NumPy's). */
static bool
hardware_flags(void)
{
    hop_fp_clear();
    volatile float a = 1e-30f;
    volatile float b = a * a;
    (void)b;
    bool raised = (hop_fp_status() & HOP_FP_UNDERFLOW) != 0;
    hop_fp_clear();
    return raised;
}

static void
adopt_numpy_gives_numpys_bits(void **state)
{
    (void)state;
    enum { N = sizeof np_x / sizeof np_x[0] };
    static const char *names[4] = {"exp", "log", "sin", "cos"};
    float x[N], r0[N], r1[N], r2[N];
    memcpy(x, np_x, sizeof x);
    char before[64];
    snprintf(before, sizeof before, "%s", hop_runtime_math_backend());
    assert_int_equal(hop_runtime_math_adopt_numpy("tanh", HOP_F32, true), HOP_INVALID);
    assert_non_null(strstr(hop_error_message(), "float32 exp, log, sin and cos"));
    assert_int_equal(hop_runtime_math_adopt_numpy("exp", HOP_F64, true), HOP_INVALID);
    assert_int_equal(hop_runtime_math_adopt_numpy(NULL, HOP_F32, true), HOP_INVALID);
    assert_string_equal(hop_runtime_math_backend(), before);
    const hop__math *base = hop__math_get();
    if (base != hop__math_sleef_avx2() && base != hop__math_sleef_avx512()) {
        /* HOP_MATH=scalar, a CPU without AVX2: NumPy runs libm there too */
        assert_int_equal(hop_runtime_math_adopt_numpy("exp", HOP_F32, true), HOP_UNSUPPORTED);
        assert_int_equal(hop_runtime_math_adopt_numpy("exp", HOP_F32, false), HOP_OK);
        assert_string_equal(hop_runtime_math_backend(), before);
        return;
    }
    bool hardware_flags_here = hardware_flags();
    for (int f = 0; f < 4; f++) {
        assert_int_equal(hop_runtime_math_run(names[f], HOP_F32, N, r0, x, NULL), HOP_OK);
        assert_int_equal(hop_runtime_math_adopt_numpy(names[f], HOP_F32, true), HOP_OK);
        assert_non_null(strstr(hop_runtime_math_backend(), "+adopted"));
        hop_fp_clear();
        /* every length: the tail's padding changes no element and no flag */
        for (int n = 1; n <= N; n++) {
            memset(r1, 0, sizeof r1);
            assert_int_equal(hop_runtime_math_run(names[f], HOP_F32, n, r1, x, NULL), HOP_OK);
            assert_memory_equal(r1, np_want[f], (size_t)n * sizeof(float));
        }
        if (hardware_flags_here)
            assert_int_equal(hop_fp_status(), np_flags[f]);
        else
            assert_int_equal(hop_fp_status() & ~np_flags[f], 0);
        hop_fp_clear();
        assert_int_equal(hop_runtime_math_adopt_numpy(names[f], HOP_F32, false), HOP_OK);
        assert_string_equal(hop_runtime_math_backend(), before);
        assert_int_equal(hop_runtime_math_run(names[f], HOP_F32, N, r2, x, NULL), HOP_OK);
        assert_memory_equal(r0, r2, sizeof r0);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(choice_follows_hop_math_and_the_cpu),
        cmocka_unit_test(every_backend_within_its_bound),
        cmocka_unit_test(hypot_within_half_an_ulp),
        cmocka_unit_test(libm_members_are_libms_bits),
        cmocka_unit_test(adopt_replaces_and_restores),
        cmocka_unit_test(adopt_numpy_gives_numpys_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
