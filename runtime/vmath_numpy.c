/*
 * runtime/vmath_numpy.c - NumPy 1.24's own float32 exp, log, sin and cos,
 * operation for operation, so that hop.numpy answers NumPy's bits.
 *
 * NumPy 1.24 computes these four with loops of its own on CPUs with AVX2
 * and FMA3 or with AVX512F (numpy/core/src/umath/
 * loops_exponent_log.dispatch.c.src: simd_exp_FLOAT, simd_log_FLOAT;
 * loops_trigonometric.dispatch.c.src: simd_sincos_f32), not with SVML, and
 * exports none of them, so vmath_adopt.c cannot adopt them as it adopts
 * SVML's.  These are hop's own reproductions: the same constants, the same
 * IEEE operations in the same order per lane, including the contractions
 * NumPy's compiled loops make (GCC fuses `x * log2e + magic` and
 * `x * 2/pi + magic` into one FMA in both its AVX2 and AVX-512 builds),
 * so each element's bits, and the floating-point flags its lane raises,
 * are NumPy's:
 * - exp: Cody-Waite reduction by ln 2, a 5/2 rational approximation,
 *   scaling by 2^k (AVX2: an exponent add, and a division for subnormal
 *   results; AVX-512: vscalefps, the same single rounding); x >= 88.72...
 *   gives inf and x <= -103.97... gives 0 with overflow / underflow noted
 *   (not for +-inf); any NaN gives NumPy's NaN 0x7fc00000.
 * - log: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), a 5/5 rational
 *   approximation of log1p(m - 1), + e ln 2 (AVX2 takes e and m from the
 *   bits, scaling subnormals by 2^100; AVX-512 vgetexpps/vgetmantps);
 *   x < 0 gives -NaN 0xffc00000 and invalid, +-0 -inf and divide by zero,
 *   any NaN 0x7fc00000.
 * - sin, cos: Cody-Waite reduction by pi/2 for |x| <= 117435.992
 *   (sin) / 71476.0625 (cos), polynomials on [-pi/4, pi/4]; larger
 *   arguments, infinities and NaNs take libm's sinf/cosf (NumPy's fallback:
 *   the same glibc function in the same process).
 * An element's result depends on nothing but its value (NumPy runs a
 * strided or overlapping array through the same lanes one element at a
 * time), so these loops over contiguous arrays give NumPy's bits whatever
 * the layout.  A tail shorter than a vector is padded with copies of its
 * last element, so the padding raises no flag the elements do not.
 *
 * Only the loops are vector code (target pragmas: AVX2+FMA, and AVX-512F
 * when the build has the SLEEF AVX-512 backend); the rest is baseline
 * x86-64 code.  vmath_adopt.c installs them (hop_runtime_math_adopt_numpy)
 * only on CPUs that run them.
 */
#include "runtime/runtime.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* numpy/core/src/umath/npy_simd_data.h and npy_math.h, 1.24 */
#define EXP_XMAX 88.72283935546875f
#define EXP_XMIN -103.97208404541015625f
#define RINT_MAGIC 0x1.800000p+23f
#define LN2_HIGH -6.93145752e-1f
#define LN2_LOW -1.42860677e-6f
#define EXP_P0 9.999999999980870924916e-01f
#define EXP_P1 7.257664613233124478488e-01f
#define EXP_P2 2.473615434895520810817e-01f
#define EXP_P3 5.114512081637298353406e-02f
#define EXP_P4 6.757896990527504603057e-03f
#define EXP_P5 5.082762527590693718096e-04f
#define EXP_Q0 1.000000000000000000000e+00f
#define EXP_Q1 -2.742335390411667452936e-01f
#define EXP_Q2 2.159509375685829852307e-02f
#define LOG_P0 0.000000000000000000000e+00f
#define LOG_P1 9.999999999999998702752e-01f
#define LOG_P2 2.112677543073053063722e+00f
#define LOG_P3 1.480000633576506585156e+00f
#define LOG_P4 3.808837741388407920751e-01f
#define LOG_P5 2.589979117907922693523e-02f
#define LOG_Q0 1.000000000000000000000e+00f
#define LOG_Q1 2.612677543073109236779e+00f
#define LOG_Q2 2.453006071784736363091e+00f
#define LOG_Q3 9.864942958519418960339e-01f
#define LOG_Q4 1.546476374983906719538e-01f
#define LOG_Q5 5.875095403124574342950e-03f
#define LOG2E 1.442695040888963407359924681001892137f
#define LOGE2 0.693147180559945309417232121458176568f
#define SQRT1_2 0.707106781186547524400844362104849039f
/* loops_trigonometric.dispatch.c.src */
#define TWO_OVER_PI 0x1.45f306p-1f
#define PIO2_HIGH -0x1.921fb0p+00f
#define PIO2_MED -0x1.5110b4p-22f
#define PIO2_LOW -0x1.846988p-48f
#define COS_MAX 71476.0625f
#define SIN_MAX 117435.992f
#define COS_F8 0x1.98e616p-16f
#define COS_F6 -0x1.6c06dcp-10f
#define COS_F4 0x1.55553cp-05f
#define COS_F2 -0x1.000000p-01f
#define SIN_F9 0x1.7d3bbcp-19f
#define SIN_F7 -0x1.a06bbap-13f
#define SIN_F5 0x1.11119ap-07f
#define SIN_F3 -0x1.555556p-03f
/* NPY_NANF and -NPY_NANF */
#define NAN_BITS 0x7fc00000
#define NEG_NAN_BITS ((int)0xffc00000u)

/* The loop over n elements of one vector function f(x, flags) of a width
 * (NL lanes): flags collects the lanes' noted flags (HOP_FP_*). */
#define NP_LOOP(fname, vfn, NL, LD, ST)                                                            \
    static void fname(int64_t n, float *out, const float *in)                                      \
    {                                                                                              \
        int flags = 0;                                                                             \
        int64_t i = 0;                                                                             \
        for (; i + NL <= n; i += NL)                                                               \
            ST(out + i, vfn(LD(in + i), &flags));                                                  \
        if (i < n) {                                                                               \
            float buf[NL];                                                                         \
            for (int k = 0; k < NL; k++)                                                           \
                buf[k] = in[i + k < n ? i + k : n - 1];                                            \
            ST(buf, vfn(LD(buf), &flags));                                                         \
            memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));                                 \
        }                                                                                          \
        if (flags != 0)                                                                            \
            hop__fp_note(flags);                                                                   \
    }

/* The lanes of x outside NumPy's Cody-Waite range (bit k of simd clear)
 * from libm, as NumPy's fallback. */
static void
sincos_libm(float *res, const float *x, unsigned simd, int nl, bool cos_)
{
    for (int k = 0; k < nl; k++)
        if (!((simd >> k) & 1u))
            res[k] = cos_ ? cosf(x[k]) : sinf(x[k]);
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")

#define S8 _mm256_set1_ps
#define I8 _mm256_set1_epi32

static inline __m256
np_exp8(__m256 x, int *flags)
{
    __m256 zero = _mm256_setzero_ps(), inf = S8(INFINITY);
    __m256 nan_mask = _mm256_cmp_ps(x, x, _CMP_NEQ_UQ);
    x = _mm256_blendv_ps(x, zero, nan_mask);
    __m256 xmax_mask = _mm256_cmp_ps(x, S8(EXP_XMAX), _CMP_GE_OQ);
    __m256 xmin_mask = _mm256_cmp_ps(x, S8(EXP_XMIN), _CMP_LE_OQ);
    __m256 inf_mask = _mm256_cmp_ps(x, inf, _CMP_EQ_OQ);
    __m256 ninf_mask = _mm256_cmp_ps(x, S8(-INFINITY), _CMP_EQ_OQ);
    if (_mm256_movemask_ps(_mm256_xor_ps(xmax_mask, inf_mask)))
        *flags |= HOP_FP_OVERFLOW;
    if (_mm256_movemask_ps(_mm256_xor_ps(xmin_mask, ninf_mask)))
        *flags |= HOP_FP_UNDERFLOW;
    x = _mm256_blendv_ps(x, zero, _mm256_or_ps(_mm256_or_ps(nan_mask, xmin_mask), xmax_mask));
    /* rint(x log2 e): NumPy's compiled loop fuses the multiply and the add */
    __m256 q = _mm256_add_ps(_mm256_fmadd_ps(x, S8(LOG2E), S8(RINT_MAGIC)), S8(-RINT_MAGIC));
    x = _mm256_fmadd_ps(q, S8(LN2_HIGH), x);
    x = _mm256_fmadd_ps(q, S8(LN2_LOW), x);
    x = _mm256_fmadd_ps(q, zero, x);
    __m256 num = _mm256_fmadd_ps(S8(EXP_P5), x, S8(EXP_P4));
    num = _mm256_fmadd_ps(num, x, S8(EXP_P3));
    num = _mm256_fmadd_ps(num, x, S8(EXP_P2));
    num = _mm256_fmadd_ps(num, x, S8(EXP_P1));
    num = _mm256_fmadd_ps(num, x, S8(EXP_P0));
    __m256 den = _mm256_fmadd_ps(S8(EXP_Q2), x, S8(EXP_Q1));
    den = _mm256_fmadd_ps(den, x, S8(EXP_Q0));
    __m256 poly = _mm256_div_ps(num, den);
    /* poly * 2^q: NumPy's fma_scalef_ps */
    __m256 denormal = _mm256_cmp_ps(q, S8(-125.0f), _CMP_LE_OQ);
    if (_mm256_movemask_ps(denormal)) {
        __m256 diff = _mm256_sub_ps(zero, _mm256_sub_ps(q, S8(-125.0f)));
        diff = _mm256_blendv_ps(zero, diff, denormal);
        __m256i pow2 = _mm256_sllv_epi32(I8(1), _mm256_cvtps_epi32(diff));
        __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(_mm256_max_ps(q, S8(-125.0f))), 23);
        poly = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(poly), e));
        __m256 dpoly = _mm256_div_ps(poly, _mm256_cvtepi32_ps(pow2));
        poly = _mm256_blendv_ps(poly, dpoly, denormal);
    } else {
        __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(q), 23);
        poly = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(poly), e));
    }
    poly = _mm256_blendv_ps(poly, _mm256_castsi256_ps(I8(NAN_BITS)), nan_mask);
    poly = _mm256_blendv_ps(poly, inf, xmax_mask);
    return _mm256_blendv_ps(poly, zero, xmin_mask);
}

/* NumPy's fma_get_exponent and fma_get_mantissa in one: subnormals scaled
 * by 2^100 first (the multiply runs on every lane, as NumPy's). */
static inline __m256
np_frexp8(__m256 x, __m256 *mant)
{
    __m256 denormal = _mm256_cmp_ps(x, S8(0x1p-126f), _CMP_LT_OQ);
    __m256 normal = _mm256_cmp_ps(x, S8(0x1p-126f), _CMP_GE_OQ);
    __m256 t = _mm256_mul_ps(_mm256_blendv_ps(x, _mm256_setzero_ps(), normal), S8(0x1p100f));
    __m256i b = _mm256_castps_si256(_mm256_blendv_ps(x, t, denormal));
    __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 23), I8(0x7e)));
    *mant = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(b, I8(0x7fffff)), I8(126 << 23)));
    return _mm256_blendv_ps(e, _mm256_sub_ps(e, S8(100.0f)), denormal);
}

static inline __m256
np_log8(__m256 x_in, int *flags)
{
    __m256 zero = _mm256_setzero_ps(), one = S8(1.0f);
    __m256 negx = _mm256_cmp_ps(x_in, zero, _CMP_LT_OQ);
    __m256 zero_mask = _mm256_cmp_ps(x_in, zero, _CMP_EQ_OQ);
    __m256 inf_mask = _mm256_cmp_ps(x_in, S8(INFINITY), _CMP_EQ_OQ);
    __m256 nan_mask = _mm256_cmp_ps(x_in, x_in, _CMP_NEQ_UQ);
    if (_mm256_movemask_ps(zero_mask))
        *flags |= HOP_FP_DIVIDE;
    if (_mm256_movemask_ps(negx))
        *flags |= HOP_FP_INVALID;
    __m256 x, e = np_frexp8(_mm256_blendv_ps(x_in, zero, negx), &x);
    __m256 sqrt2 = _mm256_cmp_ps(x, S8(SQRT1_2), _CMP_LE_OQ);
    x = _mm256_blendv_ps(x, _mm256_add_ps(x, x), sqrt2);
    e = _mm256_blendv_ps(e, _mm256_sub_ps(e, one), sqrt2);
    x = _mm256_sub_ps(x, one);
    __m256 num = _mm256_fmadd_ps(S8(LOG_P5), x, S8(LOG_P4));
    num = _mm256_fmadd_ps(num, x, S8(LOG_P3));
    num = _mm256_fmadd_ps(num, x, S8(LOG_P2));
    num = _mm256_fmadd_ps(num, x, S8(LOG_P1));
    num = _mm256_fmadd_ps(num, x, S8(LOG_P0));
    __m256 den = _mm256_fmadd_ps(S8(LOG_Q5), x, S8(LOG_Q4));
    den = _mm256_fmadd_ps(den, x, S8(LOG_Q3));
    den = _mm256_fmadd_ps(den, x, S8(LOG_Q2));
    den = _mm256_fmadd_ps(den, x, S8(LOG_Q1));
    den = _mm256_fmadd_ps(den, x, S8(LOG_Q0));
    __m256 poly = _mm256_fmadd_ps(e, S8(LOGE2), _mm256_div_ps(num, den));
    poly = _mm256_blendv_ps(poly, _mm256_castsi256_ps(I8(NAN_BITS)), nan_mask);
    poly = _mm256_blendv_ps(poly, _mm256_castsi256_ps(I8(NEG_NAN_BITS)), negx);
    poly = _mm256_blendv_ps(poly, S8(-INFINITY), zero_mask);
    return _mm256_blendv_ps(poly, S8(INFINITY), inf_mask);
}

/* NumPy's simd_sincos_f32 at 8 lanes; cos_ picks cos. */
static inline __m256
np_sincos8(__m256 x_in, bool cos_)
{
    __m256 zero = _mm256_setzero_ps();
    __m256 ax = _mm256_and_ps(x_in, _mm256_castsi256_ps(I8(0x7fffffff)));
    __m256 in_range = _mm256_cmp_ps(ax, S8(cos_ ? COS_MAX : SIN_MAX), _CMP_LE_OQ);
    unsigned simd = (unsigned)_mm256_movemask_ps(in_range);
    __m256 res = zero;
    if (simd != 0) {
        __m256 nnan = _mm256_cmp_ps(x_in, x_in, _CMP_ORD_Q);
        __m256 x = _mm256_blendv_ps(zero, x_in, _mm256_and_ps(nnan, in_range));
        __m256 q =
            _mm256_add_ps(_mm256_fmadd_ps(x, S8(TWO_OVER_PI), S8(RINT_MAGIC)), S8(-RINT_MAGIC));
        __m256 r = _mm256_fmadd_ps(q, S8(PIO2_HIGH), x);
        r = _mm256_fmadd_ps(q, S8(PIO2_MED), r);
        r = _mm256_fmadd_ps(q, S8(PIO2_LOW), r);
        __m256 r2 = _mm256_mul_ps(r, r);
        __m256 c = _mm256_fmadd_ps(S8(COS_F8), r2, S8(COS_F6));
        c = _mm256_fmadd_ps(c, r2, S8(COS_F4));
        c = _mm256_fmadd_ps(c, r2, S8(COS_F2));
        c = _mm256_fmadd_ps(c, r2, S8(1.0f));
        __m256 s = _mm256_fmadd_ps(S8(SIN_F9), r2, S8(SIN_F7));
        s = _mm256_fmadd_ps(s, r2, S8(SIN_F5));
        s = _mm256_fmadd_ps(s, r2, S8(SIN_F3));
        s = _mm256_fmadd_ps(s, r2, zero);
        s = _mm256_fmadd_ps(s, r, r);
        __m256i iq = _mm256_add_epi32(_mm256_cvtps_epi32(q), I8(cos_ ? 1 : 0));
        __m256i odd = _mm256_and_si256(iq, I8(1));
        __m256 sine = _mm256_castsi256_ps(_mm256_cmpeq_epi32(odd, _mm256_setzero_si256()));
        res = _mm256_blendv_ps(c, s, sine);
        __m256i two = _mm256_and_si256(iq, I8(2));
        __m256 neg = _mm256_castsi256_ps(_mm256_cmpeq_epi32(two, I8(2)));
        res = _mm256_blendv_ps(res, _mm256_sub_ps(zero, res), neg);
        res = _mm256_blendv_ps(_mm256_castsi256_ps(I8(NAN_BITS)), res, nnan);
    }
    if (simd != 0xffu) {
        float xs[8], rs[8];
        _mm256_storeu_ps(xs, x_in);
        _mm256_storeu_ps(rs, res);
        sincos_libm(rs, xs, simd, 8, cos_);
        res = _mm256_loadu_ps(rs);
    }
    return res;
}

static inline __m256
np_sin8(__m256 x, int *flags)
{
    (void)flags;
    return np_sincos8(x, false);
}

static inline __m256
np_cos8(__m256 x, int *flags)
{
    (void)flags;
    return np_sincos8(x, true);
}

NP_LOOP(np_exp_avx2, np_exp8, 8, _mm256_loadu_ps, _mm256_storeu_ps)
NP_LOOP(np_log_avx2, np_log8, 8, _mm256_loadu_ps, _mm256_storeu_ps)
NP_LOOP(np_sin_avx2, np_sin8, 8, _mm256_loadu_ps, _mm256_storeu_ps)
NP_LOOP(np_cos_avx2, np_cos8, 8, _mm256_loadu_ps, _mm256_storeu_ps)

#undef S8
#undef I8
#pragma GCC pop_options

#ifdef HOP_HAVE_SLEEF_AVX512
#pragma GCC push_options
#pragma GCC target("avx512f,fma")

#define S16 _mm512_set1_ps
#define I16 _mm512_set1_epi32

static inline __m512
np_exp16(__m512 x, int *flags)
{
    __m512 zero = _mm512_setzero_ps(), inf = S16(INFINITY);
    __mmask16 nan_mask = _mm512_cmp_ps_mask(x, x, _CMP_NEQ_UQ);
    x = _mm512_mask_blend_ps(nan_mask, x, zero);
    __mmask16 xmax_mask = _mm512_cmp_ps_mask(x, S16(EXP_XMAX), _CMP_GE_OQ);
    __mmask16 xmin_mask = _mm512_cmp_ps_mask(x, S16(EXP_XMIN), _CMP_LE_OQ);
    __mmask16 inf_mask = _mm512_cmp_ps_mask(x, inf, _CMP_EQ_OQ);
    __mmask16 ninf_mask = _mm512_cmp_ps_mask(x, S16(-INFINITY), _CMP_EQ_OQ);
    if (xmax_mask ^ inf_mask)
        *flags |= HOP_FP_OVERFLOW;
    if (xmin_mask ^ ninf_mask)
        *flags |= HOP_FP_UNDERFLOW;
    x = _mm512_mask_blend_ps(nan_mask | xmin_mask | xmax_mask, x, zero);
    __m512 q = _mm512_add_ps(_mm512_fmadd_ps(x, S16(LOG2E), S16(RINT_MAGIC)), S16(-RINT_MAGIC));
    x = _mm512_fmadd_ps(q, S16(LN2_HIGH), x);
    x = _mm512_fmadd_ps(q, S16(LN2_LOW), x);
    x = _mm512_fmadd_ps(q, zero, x);
    __m512 num = _mm512_fmadd_ps(S16(EXP_P5), x, S16(EXP_P4));
    num = _mm512_fmadd_ps(num, x, S16(EXP_P3));
    num = _mm512_fmadd_ps(num, x, S16(EXP_P2));
    num = _mm512_fmadd_ps(num, x, S16(EXP_P1));
    num = _mm512_fmadd_ps(num, x, S16(EXP_P0));
    __m512 den = _mm512_fmadd_ps(S16(EXP_Q2), x, S16(EXP_Q1));
    den = _mm512_fmadd_ps(den, x, S16(EXP_Q0));
    __m512 poly = _mm512_scalef_ps(_mm512_div_ps(num, den), q);
    poly = _mm512_mask_blend_ps(nan_mask, poly, _mm512_castsi512_ps(I16(NAN_BITS)));
    poly = _mm512_mask_blend_ps(xmax_mask, poly, inf);
    return _mm512_mask_blend_ps(xmin_mask, poly, zero);
}

static inline __m512
np_log16(__m512 x_in, int *flags)
{
    __m512 zero = _mm512_setzero_ps(), one = S16(1.0f);
    __mmask16 negx = _mm512_cmp_ps_mask(x_in, zero, _CMP_LT_OQ);
    __mmask16 zero_mask = _mm512_cmp_ps_mask(x_in, zero, _CMP_EQ_OQ);
    __mmask16 inf_mask = _mm512_cmp_ps_mask(x_in, S16(INFINITY), _CMP_EQ_OQ);
    __mmask16 nan_mask = _mm512_cmp_ps_mask(x_in, x_in, _CMP_NEQ_UQ);
    if (zero_mask)
        *flags |= HOP_FP_DIVIDE;
    if (negx)
        *flags |= HOP_FP_INVALID;
    __m512 x = _mm512_mask_blend_ps(negx, x_in, zero);
    __m512 e = _mm512_add_ps(_mm512_getexp_ps(x), one);
    x = _mm512_getmant_ps(x, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_src);
    __mmask16 sqrt2 = _mm512_cmp_ps_mask(x, S16(SQRT1_2), _CMP_LE_OQ);
    /* masked, as NumPy's compiled loop: the other lanes compute nothing */
    x = _mm512_mask_add_ps(x, sqrt2, x, x);
    e = _mm512_mask_sub_ps(e, sqrt2, e, one);
    x = _mm512_sub_ps(x, one);
    __m512 num = _mm512_fmadd_ps(S16(LOG_P5), x, S16(LOG_P4));
    num = _mm512_fmadd_ps(num, x, S16(LOG_P3));
    num = _mm512_fmadd_ps(num, x, S16(LOG_P2));
    num = _mm512_fmadd_ps(num, x, S16(LOG_P1));
    num = _mm512_fmadd_ps(num, x, S16(LOG_P0));
    __m512 den = _mm512_fmadd_ps(S16(LOG_Q5), x, S16(LOG_Q4));
    den = _mm512_fmadd_ps(den, x, S16(LOG_Q3));
    den = _mm512_fmadd_ps(den, x, S16(LOG_Q2));
    den = _mm512_fmadd_ps(den, x, S16(LOG_Q1));
    den = _mm512_fmadd_ps(den, x, S16(LOG_Q0));
    __m512 poly = _mm512_fmadd_ps(e, S16(LOGE2), _mm512_div_ps(num, den));
    poly = _mm512_mask_blend_ps(nan_mask, poly, _mm512_castsi512_ps(I16(NAN_BITS)));
    poly = _mm512_mask_blend_ps(negx, poly, _mm512_castsi512_ps(I16(NEG_NAN_BITS)));
    poly = _mm512_mask_blend_ps(zero_mask, poly, S16(-INFINITY));
    return _mm512_mask_blend_ps(inf_mask, poly, S16(INFINITY));
}

static inline __m512
np_sincos16(__m512 x_in, bool cos_)
{
    __m512 zero = _mm512_setzero_ps();
    __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x_in), I16(0x7fffffff)));
    __mmask16 in_range = _mm512_cmp_ps_mask(ax, S16(cos_ ? COS_MAX : SIN_MAX), _CMP_LE_OQ);
    __m512 res = zero;
    if (in_range != 0) {
        __mmask16 nnan = _mm512_cmp_ps_mask(x_in, x_in, _CMP_ORD_Q);
        __m512 x = _mm512_maskz_mov_ps(nnan & in_range, x_in);
        __m512 q =
            _mm512_add_ps(_mm512_fmadd_ps(x, S16(TWO_OVER_PI), S16(RINT_MAGIC)), S16(-RINT_MAGIC));
        __m512 r = _mm512_fmadd_ps(q, S16(PIO2_HIGH), x);
        r = _mm512_fmadd_ps(q, S16(PIO2_MED), r);
        r = _mm512_fmadd_ps(q, S16(PIO2_LOW), r);
        __m512 r2 = _mm512_mul_ps(r, r);
        __m512 c = _mm512_fmadd_ps(S16(COS_F8), r2, S16(COS_F6));
        c = _mm512_fmadd_ps(c, r2, S16(COS_F4));
        c = _mm512_fmadd_ps(c, r2, S16(COS_F2));
        c = _mm512_fmadd_ps(c, r2, S16(1.0f));
        __m512 s = _mm512_fmadd_ps(S16(SIN_F9), r2, S16(SIN_F7));
        s = _mm512_fmadd_ps(s, r2, S16(SIN_F5));
        s = _mm512_fmadd_ps(s, r2, S16(SIN_F3));
        s = _mm512_fmadd_ps(s, r2, zero);
        s = _mm512_fmadd_ps(s, r, r);
        __m512i iq = _mm512_add_epi32(_mm512_cvtps_epi32(q), I16(cos_ ? 1 : 0));
        __mmask16 sine = _mm512_testn_epi32_mask(iq, I16(1));
        res = _mm512_mask_blend_ps(sine, c, s);
        __mmask16 neg = _mm512_cmpeq_epi32_mask(_mm512_and_si512(iq, I16(2)), I16(2));
        res = _mm512_mask_sub_ps(res, neg, zero, res);
        res = _mm512_mask_blend_ps(nnan, _mm512_castsi512_ps(I16(NAN_BITS)), res);
    }
    if (in_range != 0xffffu) {
        float xs[16], rs[16];
        _mm512_storeu_ps(xs, x_in);
        _mm512_storeu_ps(rs, res);
        sincos_libm(rs, xs, in_range, 16, cos_);
        res = _mm512_loadu_ps(rs);
    }
    return res;
}

static inline __m512
np_sin16(__m512 x, int *flags)
{
    (void)flags;
    return np_sincos16(x, false);
}

static inline __m512
np_cos16(__m512 x, int *flags)
{
    (void)flags;
    return np_sincos16(x, true);
}

NP_LOOP(np_exp_avx512, np_exp16, 16, _mm512_loadu_ps, _mm512_storeu_ps)
NP_LOOP(np_log_avx512, np_log16, 16, _mm512_loadu_ps, _mm512_storeu_ps)
NP_LOOP(np_sin_avx512, np_sin16, 16, _mm512_loadu_ps, _mm512_storeu_ps)
NP_LOOP(np_cos_avx512, np_cos16, 16, _mm512_loadu_ps, _mm512_storeu_ps)

#undef S16
#undef I16
#pragma GCC pop_options
#endif

hop__mfn_f32
hop__math_numpy_f32(const char *name, bool avx512)
{
#ifdef HOP_HAVE_SLEEF_AVX512
    if (avx512) {
        if (strcmp(name, "exp") == 0)
            return np_exp_avx512;
        if (strcmp(name, "log") == 0)
            return np_log_avx512;
        if (strcmp(name, "sin") == 0)
            return np_sin_avx512;
        if (strcmp(name, "cos") == 0)
            return np_cos_avx512;
        return NULL;
    }
#else
    (void)avx512;
#endif
    if (strcmp(name, "exp") == 0)
        return np_exp_avx2;
    if (strcmp(name, "log") == 0)
        return np_log_avx2;
    if (strcmp(name, "sin") == 0)
        return np_sin_avx2;
    if (strcmp(name, "cos") == 0)
        return np_cos_avx2;
    return NULL;
}
