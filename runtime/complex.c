/*
 * runtime/complex.c - the complex dtypes' kernels: conversions to and from
 * every other dtype, the vector functions of the elementwise ops that take
 * complex operands (ops/infer_complex.c lists them), and the folds of the
 * complex reductions.
 *
 * c64 and c128 are C's float/double _Complex: NumPy's layout.  Arithmetic
 * is NumPy's: the textbook product (no Annex G recovery of infinities) and
 * Smith's division; powers with a small integer exponent are NumPy's
 * nc_pow and abs its SIMD loop's formula, bit for bit; the elementary functions are glibc's c*
 * functions, which may differ from NumPy's own npy_c* in the last bits.
 * A complex converted to a real dtype keeps its real part (NumPy's
 * astype, which also warns), to bool whether it is nonzero.
 */
#include "runtime/runtime.h"

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define BLK 256

typedef float _Complex c64;
typedef double _Complex c128;

/* ---------------------------------------------------------- conversions */

/* n elements of src (dtype st, stride) as double real and imaginary parts. */
static void
load_parts(int64_t n, double *re, double *im, const void *src, hop_dtype st, int64_t stride)
{
    if (st == HOP_C64) {
        const float *s = src;
        for (int64_t i = 0; i < n; i++) {
            re[i] = s[2 * i * stride];
            im[i] = s[2 * i * stride + 1];
        }
    } else if (st == HOP_C128) {
        const double *s = src;
        for (int64_t i = 0; i < n; i++) {
            re[i] = s[2 * i * stride];
            im[i] = s[2 * i * stride + 1];
        }
    } else {
        hop__convert(n, re, HOP_F64, src, st, stride);
        for (int64_t i = 0; i < n; i++)
            im[i] = 0;
    }
}

bool
hop__convert_complex(int64_t n, void *dst, hop_dtype dt, const void *src, hop_dtype st,
                     int64_t stride)
{
    if (!hop_dtype_is_complex(dt) && !hop_dtype_is_complex(st))
        return false;
    if (dt == HOP_C64 && st == HOP_C128) {
        c64 *d = dst;
        const double *s = src;
        for (int64_t i = 0; i < n; i++)
            d[i] = CMPLXF((float)s[2 * i * stride], (float)s[2 * i * stride + 1]);
        return true;
    }
    if (dt == HOP_C128 && st == HOP_C64) {
        c128 *d = dst;
        const float *s = src;
        for (int64_t i = 0; i < n; i++)
            d[i] = CMPLX(s[2 * i * stride], s[2 * i * stride + 1]);
        return true;
    }
    size_t ssz = hop_dtype_size(st), dsz = hop_dtype_size(dt);
    double re[BLK], im[BLK];
    for (int64_t j = 0; j < n; j += BLK) {
        int64_t m = n - j < BLK ? n - j : BLK;
        load_parts(m, re, im, (const char *)src + j * stride * (int64_t)ssz, st, stride);
        char *d = (char *)dst + j * (int64_t)dsz;
        if (dt == HOP_C64) {
            for (int64_t i = 0; i < m; i++)
                ((c64 *)d)[i] = CMPLXF((float)re[i], (float)im[i]);
        } else if (dt == HOP_C128) {
            for (int64_t i = 0; i < m; i++)
                ((c128 *)d)[i] = CMPLX(re[i], im[i]);
        } else if (dt == HOP_BOOL) {
            for (int64_t i = 0; i < m; i++)
                ((hop__bool *)d)[i] = re[i] != 0 || im[i] != 0;
        } else {
            hop__convert(m, d, dt, re, HOP_F64, 1); /* the real part */
        }
    }
    return true;
}

/* ------------------------------------------------------ vector functions */

#define BIN(name, T, OT, EXPR)                                                                     \
    static void name(int64_t n, void *out, const void *const *in, const int *inc)                  \
    {                                                                                              \
        OT *o = out;                                                                               \
        const T *a = in[0], *b = in[1];                                                            \
        int64_t ia = inc[0], ib = inc[1];                                                          \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = a[i * ia], y = b[i * ib];                                                        \
            o[i] = (OT)(EXPR);                                                                     \
        }                                                                                          \
    }
#define UN(name, T, OT, EXPR) HOP__UNARY_VFN(name, T, OT, EXPR, )

/* NumPy's complex division (its loops' and npy_cpow's): Smith's method,
 * scaling by the larger part of the divisor, and x / 0 as the parts over
 * +0 (inf or nan).  C's division (Annex G's scaling) differs from it in
 * the last bits and at overflow (1 / 1.5e-39j in complex64: NumPy's
 * nan - inf j). */
#define CDIV(T, R, sfx, CMPLXF_, CREAL, CIMAG, FABS)                                               \
    static T cdiv_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        R ar = CREAL(x), ai = CIMAG(x), br = CREAL(y), bi = CIMAG(y);                              \
        R abr = FABS(br), abi = FABS(bi);                                                          \
        if (abr >= abi) {                                                                          \
            if (abr == 0 && abi == 0)                                                              \
                return CMPLXF_(ar / abr, ai / abr);                                                \
            R rat = bi / br, scl = (R)1 / (br + bi * rat);                                         \
            return CMPLXF_((ar + ai * rat) * scl, (ai - ar * rat) * scl);                          \
        }                                                                                          \
        R rat = br / bi, scl = (R)1 / (bi + br * rat);                                             \
        return CMPLXF_((ar * rat + ai) * scl, (ai * rat - ar) * scl);                              \
    }
CDIV(c64, float, c64, CMPLXF, crealf, cimagf, fabsf)
CDIV(c128, double, c128, CMPLX, creal, cimag, fabs)

/* NumPy's complex product: the textbook formula (C's recovers infinities
 * from a nan result as Annex G asks; NumPy's gives the nan). */
#define CMUL(T, R, sfx, CMPLXF_, CREAL, CIMAG)                                                     \
    static T cmul_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        R ar = CREAL(x), ai = CIMAG(x), br = CREAL(y), bi = CIMAG(y);                              \
        return CMPLXF_(ar * br - ai * bi, ar * bi + ai * br);                                      \
    }
CMUL(c64, float, c64, CMPLXF, crealf, cimagf)
CMUL(c128, double, c128, CMPLX, creal, cimag)

/*
 * A NaN part of a complex product as NumPy 1.24's loops make it on x86,
 * where an operation with a NaN operand gives its first NaN operand (quieted,
 * its sign kept) and a NaN made from numbers (0 * inf, inf - inf) is the
 * default NaN (negative).  NumPy's loops compute the real part as
 * (ar * br) - (ai * bi) and the imaginary part as (ai * br) + (ar * bi) in
 * its SIMD loop (every operand of unit stride) and (ar * bi) + (ai * br) in
 * its scalar loop (a broadcast operand), which fuses the real part's
 * products on an AVX512F build without negating a NaN.  C lets the compiler
 * swap a product's operands and hop's fused kernel negates ai * bi, so a
 * product with a NaN part is computed again here, one operation at a time
 * with the NaN picked explicitly: which NaN, and its sign, are NumPy's
 * (in the fused loop a NaN operand of a fused multiply-add wins over a NaN
 * its product of 0 and inf would make).
 * (A strided operand takes NumPy's scalar loop, which hop's kernel cannot
 * tell from a unit stride: there the imaginary part may be the other NaN.)
 */
#define NAN_FIRST(a, b, r) ((a) != (a) ? QUIET(a) : (b) != (b) ? QUIET(b) : (r))
static float
quietf(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u |= UINT32_C(0x00400000);
    memcpy(&x, &u, sizeof u);
    return x;
}

static double
quiet(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u |= UINT64_C(0x0008000000000000);
    memcpy(&x, &u, sizeof u);
    return x;
}

#define QUIET(v) _Generic((v), float : quietf, double : quiet)(v)
#define NAN_FIRST3(a, b, c, r) ((a) != (a) ? QUIET(a) : NAN_FIRST(b, c, r))
#define CMUL_NAN(T, R, sfx, CMPLXF_, CREAL, CIMAG, FMA)                                            \
    static T cmul_nan_##sfx(T x, T y, enum cmul_loop loop)                                         \
    {                                                                                              \
        R ar = CREAL(x), ai = CIMAG(x), br = CREAL(y), bi = CIMAG(y);                              \
        R rr = NAN_FIRST(ar, br, ar * br), ii = NAN_FIRST(ai, bi, ai * bi);                        \
        R ib = NAN_FIRST(ai, br, ai * br), ab = NAN_FIRST(ar, bi, ar * bi);                        \
        if (loop == CMUL_FUSED)                                                                    \
            return CMPLXF_(NAN_FIRST3(ar, br, ii, FMA(ar, br, -ii)),                               \
                           NAN_FIRST3(ar, bi, ib, FMA(ar, bi, ib)));                               \
        R re = NAN_FIRST(rr, ii, rr - ii);                                                         \
        R im = loop == CMUL_SIMD ? NAN_FIRST(ib, ab, ib + ab) : NAN_FIRST(ab, ib, ab + ib);        \
        return CMPLXF_(re, im);                                                                    \
    }                                                                                              \
    static void cmul_fix_nan_##sfx(int64_t n, T *o, const T *a, int64_t ia, const T *b,            \
                                   int64_t ib, enum cmul_loop loop)                                \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (CREAL(o[i]) != CREAL(o[i]) || CIMAG(o[i]) != CIMAG(o[i]))                          \
                o[i] = cmul_nan_##sfx(a[i * ia], b[i * ib], loop);                                 \
    }
/* NumPy's loops: SIMD, scalar, and scalar with the products fused */
enum cmul_loop { CMUL_SIMD, CMUL_SCALAR, CMUL_FUSED };
CMUL_NAN(c64, float, c64, CMPLXF, crealf, cimagf, fmaf)
CMUL_NAN(c128, double, c128, CMPLX, creal, cimag, fma)

/*
 * complex128 multiply, NumPy 1.24's two loops on a CPU with AVX512F: its
 * SIMD loop (every operand and the output of unit stride, the output apart
 * from both inputs) computes the textbook formula with separate roundings,
 * its scalar loop (a broadcast operand, a strided one, an output on an
 * input: `a *= b`), compiled for AVX512F, with the products contracted
 * into fused multiply-adds: ar * br - (ai * bi) and ar * bi + (ai * br).
 * hop's kernel sees only whether an operand is broadcast (inc 0), so a
 * broadcast gives the scalar loop's bits and everything else the SIMD
 * loop's (NumPy's bits of a strided operand or an in-place product are
 * the scalar loop's: a layout hop does not reproduce).  complex64's loops
 * agree with the textbook formula in both cases; elsewhere NumPy's scalar
 * loop is not contracted.  A NaN part is made again as NumPy's
 * (cmul_fix_nan above).
 */
#if defined(__GNUC__) && defined(__x86_64__)
#define FUSED_CMUL 1
static bool
c128_mul_fused_when_broadcast(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}

/* (built for FMA, so that fma() is one instruction, not glibc's call) */
__attribute__((target("fma"))) static void
mul_c128_fused(int64_t n, c128 *o, const c128 *a, int64_t ia, const c128 *b, int64_t ib)
{
    for (int64_t i = 0; i < n; i++) {
        double ar = creal(a[i * ia]), ai = cimag(a[i * ia]);
        double br = creal(b[i * ib]), bi = cimag(b[i * ib]);
        o[i] = CMPLX(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br));
    }
}
#endif

static void
mul_c128(int64_t n, void *out, const void *const *in, const int *inc)
{
    c128 *o = out;
    const c128 *a = in[0], *b = in[1];
    int64_t ia = inc[0], ib = inc[1];
#ifdef FUSED_CMUL
    if (!(ia && ib) && c128_mul_fused_when_broadcast()) {
        mul_c128_fused(n, o, a, ia, b, ib);
        cmul_fix_nan_c128(n, o, a, ia, b, ib, CMUL_FUSED);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        o[i] = cmul_c128(a[i * ia], b[i * ib]);
    cmul_fix_nan_c128(n, o, a, ia, b, ib, ia && ib ? CMUL_SIMD : CMUL_SCALAR);
}

static void
mul_c64(int64_t n, void *out, const void *const *in, const int *inc)
{
    c64 *o = out;
    const c64 *a = in[0], *b = in[1];
    int64_t ia = inc[0], ib = inc[1];
    for (int64_t i = 0; i < n; i++)
        o[i] = cmul_c64(a[i * ia], b[i * ib]);
    cmul_fix_nan_c64(n, o, a, ia, b, ib, ia && ib ? CMUL_SIMD : CMUL_SCALAR);
}

/* NumPy 1.24's nc_pow (umath's power loop): 0**y is 0 for a positive real
 * y, nan otherwise with FE_INVALID (nc_pow raises it, so NumPy warns
 * "invalid value encountered in power"); an integer exponent below 100 in size is z itself, z*z,
 * z*(z*z), else a product by squaring (the textbook product), a negative
 * one then its reciprocal by the division above; else cpow. */
#define CPOW(T, R, sfx, CPOWF, CMPLXF_, CREAL, CIMAG)                                              \
    static T cpow_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        R yr = CREAL(y), yi = CIMAG(y);                                                            \
        if (yr == 0 && yi == 0)                                                                    \
            return CMPLXF_(1, 0);                                                                  \
        if (CREAL(x) == 0 && CIMAG(x) == 0) {                                                      \
            if (yr > 0 && yi == 0)                                                                 \
                return CMPLXF_(0, 0);                                                              \
            hop__fp_note(HOP_FP_INVALID);                                                          \
            return CMPLXF_(NAN, NAN);                                                              \
        }                                                                                          \
        if (yi == 0 && yr > -100 && yr < 100 && yr == (R)(long)yr) {                               \
            long k = (long)yr, m = k < 0 ? -k : k;                                                 \
            if (k == 1)                                                                            \
                return x;                                                                          \
            if (k == 2)                                                                            \
                return cmul_##sfx(x, x);                                                           \
            if (k == 3)                                                                            \
                return cmul_##sfx(x, cmul_##sfx(x, x));                                            \
            T r = CMPLXF_(1, 0), b = x;                                                            \
            for (long mask = 1;; mask <<= 1) {                                                     \
                if (m & mask)                                                                      \
                    r = cmul_##sfx(r, b);                                                          \
                if (m < (mask << 1))                                                               \
                    break;                                                                         \
                b = cmul_##sfx(b, b);                                                              \
            }                                                                                      \
            return k > 0 ? r : cdiv_##sfx(CMPLXF_(1, 0), r);                                       \
        }                                                                                          \
        return CPOWF(x, y);                                                                        \
    }
CPOW(c64, float, c64, cpowf, CMPLXF, crealf, cimagf)
CPOW(c128, double, c128, cpow, CMPLX, creal, cimag)

/* NumPy 1.24's sign of a complex: the sign of the real part, or of the
 * imaginary one when the real part is 0, as a complex; nan when either part
 * is (its complex comparisons with 0 are all false then: -1.5+nanj too). */
#define CSIGN(T, R, CMPLXF_, re, im)                                                               \
    ((re) > 0 && (im) == (im)   ? CMPLXF_(1, 0)                                                    \
     : (re) < 0 && (im) == (im) ? CMPLXF_(-1, 0)                                                   \
     : (re) == 0 ? ((im) > 0    ? CMPLXF_(1, 0)                                                    \
                    : (im) < 0  ? CMPLXF_(-1, 0)                                                   \
                    : (im) == 0 ? CMPLXF_(0, 0)                                                    \
                                : CMPLXF_(NAN, 0))                                                 \
                 : CMPLXF_(NAN, 0))

#define LN2 0.693147180559945309417232121458176568
#define LN10 2.30258509299404568401799145468436421

#define TYPE_FNS(T, R, sfx, CMPLXF_, F)                                                            \
    BIN(add_##sfx, T, T, x + y)                                                                    \
    BIN(sub_##sfx, T, T, x - y)                                                                    \
    BIN(div_##sfx, T, T, cdiv_##sfx(x, y))                                                         \
    BIN(pow_##sfx, T, T, cpow_##sfx(x, y))                                                         \
    BIN(eq_##sfx, T, hop__bool, x == y)                                                            \
    BIN(ne_##sfx, T, hop__bool, x != y)                                                            \
    UN(neg_##sfx, T, T, -x)                                                                        \
    UN(abs_##sfx, T, R, cabs_##sfx(x))                                                             \
    UN(real_##sfx, T, R, F(creal)(x))                                                              \
    UN(imag_##sfx, T, R, F(cimag)(x))                                                              \
    UN(angle_##sfx, T, R, F(carg)(x))                                                              \
    UN(conj_##sfx, T, T, F(conj)(x))                                                               \
    UN(exp_##sfx, T, T, F(cexp)(x))                                                                \
    UN(log_##sfx, T, T, F(clog)(x))                                                                \
    UN(sqrt_##sfx, T, T, F(csqrt)(x))                                                              \
    UN(sin_##sfx, T, T, F(csin)(x))                                                                \
    UN(cos_##sfx, T, T, F(ccos)(x))                                                                \
    UN(tan_##sfx, T, T, F(ctan)(x))                                                                \
    UN(tanh_##sfx, T, T, F(ctanh)(x))                                                              \
    UN(sinh_##sfx, T, T, F(csinh)(x))                                                              \
    UN(cosh_##sfx, T, T, F(ccosh)(x))                                                              \
    UN(asin_##sfx, T, T, F(casin)(x))                                                              \
    UN(acos_##sfx, T, T, F(cacos)(x))                                                              \
    UN(atan_##sfx, T, T, F(catan)(x))                                                              \
    UN(asinh_##sfx, T, T, F(casinh)(x))                                                            \
    UN(acosh_##sfx, T, T, F(cacosh)(x))                                                            \
    UN(atanh_##sfx, T, T, F(catanh)(x))                                                            \
    UN(log2_##sfx, T, T, F(clog)(x) / (R)LN2)                                                      \
    UN(log10_##sfx, T, T, F(clog)(x) / (R)LN10)                                                    \
    UN(exp2_##sfx, T, T, F(cexp)(x * (R)LN2))                                                      \
    UN(expm1_##sfx, T, T, cexpm1_##sfx(x))                                                         \
    UN(log1p_##sfx, T, T, F(clog)(1 + x))                                                          \
    UN(sign_##sfx, T, T, CSIGN(T, R, CMPLXF_, F(creal)(x), F(cimag)(x)))

/* expm1: exp(x) - 1 with the real part kept accurate near 0 (NumPy's
 * npy_cexpm1: expm1(a) cos(b) - 2 sin^2(b / 2), i exp(a) sin(b)). */
static c64
cexpm1_c64(c64 z)
{
    float a = crealf(z), b = cimagf(z), s = sinf(b / 2);
    return CMPLXF(expm1f(a) * cosf(b) - 2 * s * s, expf(a) * sinf(b));
}
static c128
cexpm1_c128(c128 z)
{
    double a = creal(z), b = cimag(z), s = sin(b / 2);
    return CMPLX(expm1(a) * cos(b) - 2 * s * s, exp(a) * sin(b));
}

/* NumPy 1.24's complex absolute.  On a CPU with AVX512F its SIMD loop
 * (simd_cabsolute of loops_arithm_fp, for every stride NumPy's loop is
 * given): the larger part times sqrt(r * r + 1), r the smaller over the
 * larger, with one fused multiply-add; an infinite part gives inf, else a
 * nan part nan.  Elsewhere (AVX2 and FMA3 alone: an AMD EPYC) npy_hypot,
 * glibc's hypot, which differs from the loop in the last bit (|3.3 +
 * 0.001j|) and is what NumPy gives there. */
static bool
cabs_by_loop(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

#define CABS(T, R, sfx, CREAL, CIMAG, FABS, FMA, SQRT, HYPOT)                                      \
    static R cabs_##sfx(T z)                                                                       \
    {                                                                                              \
        if (!cabs_by_loop())                                                                       \
            return HYPOT(CREAL(z), CIMAG(z));                                                      \
        R re = FABS(CREAL(z)), im = FABS(CIMAG(z));                                                \
        if (isinf(re) || isinf(im))                                                                \
            return (R)INFINITY;                                                                    \
        if (isnan(re) || isnan(im))                                                                \
            return (R)NAN;                                                                         \
        R big = re > im ? re : im, small = re > im ? im : re;                                      \
        if (big == 0)                                                                              \
            return 0;                                                                              \
        R r = small / big;                                                                         \
        return SQRT(FMA(r, r, (R)1)) * big;                                                        \
    }
CABS(c64, float, c64, crealf, cimagf, fabsf, fmaf, sqrtf, hypotf)
CABS(c128, double, c128, creal, cimag, fabs, fma, sqrt, hypot)

#define F32FN(fn) fn##f
#define F64FN(fn) fn
TYPE_FNS(c64, float, c64, CMPLXF, F32FN)
TYPE_FNS(c128, double, c128, CMPLX, F64FN)

/* complex(re, im) from two real parts. */
BIN(complex_c64, float, c64, CMPLXF(x, y))
BIN(complex_c128, double, c128, CMPLX(x, y))

/* imag of a real input: zeros of its size; angle: 0 or pi (nan stays). */
#define ZERO_FN(T, sfx)                                                                            \
    static void zero_##sfx(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)in;                                                                                  \
        (void)inc;                                                                                 \
        memset(out, 0, (size_t)n * sizeof(T));                                                     \
    }
ZERO_FN(uint8_t, 1)
ZERO_FN(uint16_t, 2)
ZERO_FN(uint32_t, 4)
ZERO_FN(uint64_t, 8)
#define ANGLE_REAL(T, sfx)                                                                         \
    UN(angle_real_##sfx, T, T,                                                                     \
       (x) != (x)                            ? (x)                                                 \
       : (x) < 0 || ((x) == 0 && signbit(x)) ? (T)3.14159265358979323846                           \
                                             : 0)
ANGLE_REAL(float, f32)
ANGLE_REAL(double, f64)

hop__vfn
hop__vfn_complex_part(hop_op op, hop_dtype dt)
{
    size_t sz = hop_dtype_size(dt);
    switch (op) {
    case HOP_OP_real:
    case HOP_OP_conj:
        return hop__vfn_copy(dt);
    case HOP_OP_imag:
        return sz == 1 ? zero_1 : sz == 2 ? zero_2 : sz == 4 ? zero_4 : sz == 8 ? zero_8 : NULL;
    case HOP_OP_angle:
        return dt == HOP_F32 ? angle_real_f32 : dt == HOP_F64 ? angle_real_f64 : NULL;
    default:
        return NULL;
    }
}

hop__vfn
hop__vfn_complex(hop_op op, hop_dtype dt)
{
    bool d = dt == HOP_C128;
    if (dt != HOP_C64 && dt != HOP_C128)
        return NULL;
#define PICK(name) return d ? name##_c128 : name##_c64
    switch (op) {
    case HOP_OP_add:
        PICK(add);
    case HOP_OP_sub:
        PICK(sub);
    case HOP_OP_mul:
        PICK(mul);
    case HOP_OP_div:
        PICK(div);
    case HOP_OP_pow:
        PICK(pow);
    case HOP_OP_eq:
        PICK(eq);
    case HOP_OP_ne:
        PICK(ne);
    case HOP_OP_neg:
        PICK(neg);
    case HOP_OP_abs:
        PICK(abs);
    case HOP_OP_real:
        PICK(real);
    case HOP_OP_imag:
        PICK(imag);
    case HOP_OP_angle:
        PICK(angle);
    case HOP_OP_conj:
        PICK(conj);
    case HOP_OP_exp:
        PICK(exp);
    case HOP_OP_log:
        PICK(log);
    case HOP_OP_sqrt:
        PICK(sqrt);
    case HOP_OP_sin:
        PICK(sin);
    case HOP_OP_cos:
        PICK(cos);
    case HOP_OP_tan:
        PICK(tan);
    case HOP_OP_tanh:
        PICK(tanh);
    case HOP_OP_sinh:
        PICK(sinh);
    case HOP_OP_cosh:
        PICK(cosh);
    case HOP_OP_arcsin:
        PICK(asin);
    case HOP_OP_arccos:
        PICK(acos);
    case HOP_OP_arctan:
        PICK(atan);
    case HOP_OP_arcsinh:
        PICK(asinh);
    case HOP_OP_arccosh:
        PICK(acosh);
    case HOP_OP_arctanh:
        PICK(atanh);
    case HOP_OP_log2:
        PICK(log2);
    case HOP_OP_log10:
        PICK(log10);
    case HOP_OP_exp2:
        PICK(exp2);
    case HOP_OP_expm1:
        PICK(expm1);
    case HOP_OP_log1p:
        PICK(log1p);
    case HOP_OP_sign:
        PICK(sign);
    case HOP_OP_complex:
        PICK(complex);
    default:
        return NULL;
    }
#undef PICK
}
