/*
 * runtime/elementwise.c - the elementwise engine and its vector functions:
 * unary ops, binary arithmetic, comparisons, logical ops, where and copy,
 * and the float functions of NumPy's ufuncs (through the math backend or
 * libm; i0 and i1 from Cephes' series; logaddexp and logaddexp2 as NumPy's
 * npymath computes them).
 *
 * The engine (hop__ew_init/hop__ew_compute) broadcasts every operand to the
 * output's shape with stride 0, drops size-1 dims and merges dims that are
 * contiguous in every operand, so that same-shape contiguous operands become
 * one flat run: one call of the vector function over the piece's range, no
 * index math per element.  Otherwise it walks the output's dims with an
 * odometer and runs the innermost dim; an operand whose dtype is not the
 * one the function reads, or whose inner stride is not 0 or 1, is converted
 * into a stack buffer in blocks (and a strided output is scattered from one).
 *
 * Vector functions see contiguous inputs (inc 1) or one broadcast element
 * (inc 0) and write a contiguous output; they are generated per op and dtype
 * by the macros below.  Integer arithmetic goes through unsigned types so
 * that overflow wraps instead of being undefined.  No restrict: out may be
 * an input (in-place ops), which is safe at distance 0 but would break a
 * restrict promise.
 */
#include "runtime/runtime.h"

#include <math.h>

#define BLK 256

/* ------------------------------------------------------------ the engine */

void
hop__split(int64_t n, int ith, int nth, int64_t align, int64_t *begin, int64_t *end)
{
    if (nth <= 1) {
        *begin = 0;
        *end = n;
        return;
    }
    int64_t chunk = (n + nth - 1) / nth;
    if (align > 1)
        chunk = (chunk + align - 1) / align * align;
    int64_t b = chunk * ith, e = b + chunk;
    *begin = b < n ? b : n;
    *end = e < n ? e : n;
}

void
hop__ew_init(hop__ew *e, void *out, hop_dtype odtype, int rank, const int64_t *sizes,
             const int64_t *ostrides, const hop__ew_src *src, const hop_dtype *need, int nin,
             hop__vfn fn, hop_dtype fdtype)
{
    *e =
        (hop__ew){.nin = nin, .out = out, .odtype = odtype, .fdtype = fdtype, .fn = fn, .numel = 1};
    for (int d = 0; d < rank; d++)
        e->numel *= sizes[d];

    /* Broadcast strides of every operand over the output's dims. */
    int64_t st[HOP__EW_MAXIN + 1][HOP_MAX_RANK];
    for (int i = 0; i < nin; i++) {
        e->in[i].need = need[i];
        if (src[i].data == NULL) {
            hop__convert(1, e->sval[i], need[i], src[i].sval, src[i].dtype, 1);
            e->in[i].data = NULL;
            e->in[i].dtype = need[i];
            for (int d = 0; d < rank; d++)
                st[i][d] = 0;
            continue;
        }
        e->in[i].data = src[i].data;
        e->in[i].dtype = src[i].dtype;
        for (int d = 0; d < rank; d++) {
            int sd = d - (rank - src[i].rank);
            st[i][d] = sd < 0 || src[i].sizes[sd] == 1 ? 0 : src[i].strides[sd];
        }
    }
    for (int d = 0; d < rank; d++)
        st[nin][d] = ostrides[d];

    /* Drop size-1 dims; merge a dim into the previous one when every
     * operand steps over the inner dim exactly once per outer step. */
    int n = 0;
    int64_t csize[HOP_MAX_RANK];
    int64_t cst[HOP__EW_MAXIN + 1][HOP_MAX_RANK];
    for (int d = 0; d < rank && e->numel > 0; d++) {
        if (sizes[d] == 1)
            continue;
        bool merge = n > 0;
        for (int i = 0; i <= nin && merge; i++)
            merge = cst[i][n - 1] == st[i][d] * sizes[d];
        if (merge) {
            csize[n - 1] *= sizes[d];
            for (int i = 0; i <= nin; i++)
                cst[i][n - 1] = st[i][d];
        } else {
            csize[n] = sizes[d];
            for (int i = 0; i <= nin; i++)
                cst[i][n] = st[i][d];
            n++;
        }
    }
    if (n == 0 && e->numel > 0) {
        /* one element: a single dim of size 1 keeps the odometer simple */
        csize[0] = 1;
        for (int i = 0; i <= nin; i++)
            cst[i][0] = 0;
        n = 1;
    }
    e->rank = n;
    for (int d = 0; d < n; d++) {
        e->sizes[d] = csize[d];
        e->ostrides[d] = cst[nin][d];
        for (int i = 0; i < nin; i++)
            e->in[i].strides[d] = cst[i][d];
    }
    for (int i = 0; i < nin; i++) {
        bool some0 = false, some = false;
        for (int d = 0; d < n && e->in[i].data != NULL; d++) {
            some0 = some0 || (cst[i][d] == 0 && csize[d] > 1);
            some = some || cst[i][d] != 0;
        }
        e->in[i].partial = some0 && some;
    }

    bool flat =
        fdtype == odtype && (n == 0 || (n == 1 && (e->ostrides[0] == 1 || e->sizes[0] == 1)));
    for (int i = 0; i < nin && flat; i++) {
        int64_t s = n == 0 ? 0 : e->in[i].strides[0];
        flat = e->in[i].dtype == need[i] && (s == 0 || s == 1);
    }
    e->flat = flat;
}

/* Writes m results of fn (in obuf, as e->fdtype) to dst with stride ost,
 * converting to e->odtype when they differ. */
static void
store(const hop__ew *e, int64_t m, char *dst, int64_t ost, const unsigned char *obuf,
      unsigned char *cbuf)
{
    size_t osz = hop_dtype_size(e->odtype);
    const unsigned char *p = obuf;
    if (e->fdtype != e->odtype) {
        if (ost == 1) {
            hop__convert(m, dst, e->odtype, obuf, e->fdtype, 1);
            return;
        }
        hop__convert(m, cbuf, e->odtype, obuf, e->fdtype, 1);
        p = cbuf;
    }
    hop__scatter(m, dst, ost, p, osz);
}

/*
 * One run of n output elements: o with stride ost, inputs at ip[i] with
 * strides ist[i] (in their own dtype).
 */
static void
run(const hop__ew *e, int64_t n, char *o, int64_t ost, const char *const *ip, const int64_t *ist)
{
    const void *p[HOP__EW_MAXIN];
    int inc[HOP__EW_MAXIN];
    size_t osz = hop_dtype_size(e->odtype);
    bool convert_out = e->fdtype != e->odtype;
    bool direct = (ost == 1 || n == 1) && !convert_out, all_bcast = e->nin > 0;
    /* A complex operand broadcast along the inner dim but not along
     * every dim is spread into a block, as NumPy's buffered iterator hands
     * it to its loop: its complex multiply's bits (complex128's) and the
     * NaN a part with NaNs takes (both) depend on whether an operand is one
     * element for the whole loop (complex.c, mul_c128, cmul_fix_nan). */
    bool spread[HOP__EW_MAXIN];
    for (int i = 0; i < e->nin; i++) {
        spread[i] = ist[i] == 0 && e->in[i].partial && hop_dtype_is_complex(e->fdtype) && n > 1;
        direct =
            direct && e->in[i].dtype == e->in[i].need && (ist[i] == 0 || ist[i] == 1) && !spread[i];
        all_bcast = all_bcast && ist[i] == 0 && !spread[i];
        p[i] = ip[i];
        inc[i] = ist[i] != 0 || spread[i];
    }
    _Alignas(64) unsigned char buf[HOP__EW_MAXIN][BLK * 16];
    _Alignas(64) unsigned char obuf[BLK * 16];
    _Alignas(64) unsigned char cbuf[BLK * 16];

    if (all_bcast && n > 1) {
        /* Every input is one element: compute it once and fill. */
        for (int i = 0; i < e->nin; i++) {
            hop__convert(1, buf[i], e->in[i].need, ip[i], e->in[i].dtype, 1);
            p[i] = buf[i];
        }
        e->fn(1, obuf, p, inc);
        if (convert_out) {
            hop__convert(1, cbuf, e->odtype, obuf, e->fdtype, 1);
            memcpy(obuf, cbuf, osz);
        }
        for (int64_t j = 0; j < n; j += BLK) {
            int64_t m = n - j < BLK ? n - j : BLK;
            if (j == 0) {
                for (int64_t k = 1; k < m; k++)
                    memcpy(obuf + k * osz, obuf, osz);
            }
            hop__scatter(m, o + j * ost * (int64_t)osz, ost, obuf, osz);
        }
        return;
    }
    if (direct) {
        e->fn(n, o, p, inc);
        return;
    }
    for (int i = 0; i < e->nin; i++) {
        if (ist[i] == 0 && (e->in[i].dtype != e->in[i].need || spread[i])) {
            hop__convert(1, buf[i], e->in[i].need, ip[i], e->in[i].dtype, 1);
            p[i] = buf[i];
        }
        if (spread[i]) { /* a block's copies of the one element (16 bytes) */
            size_t nsz = hop_dtype_size(e->in[i].need);
            for (int64_t k = 1; k < (n < BLK ? n : BLK); k++)
                memcpy(buf[i] + k * nsz, buf[i], nsz);
        }
    }
    for (int64_t j = 0; j < n; j += BLK) {
        int64_t m = n - j < BLK ? n - j : BLK;
        for (int i = 0; i < e->nin; i++) {
            size_t isz = hop_dtype_size(e->in[i].dtype);
            const char *src = ip[i] + j * ist[i] * (int64_t)isz;
            if (ist[i] == 0)
                continue;
            if (ist[i] == 1 && e->in[i].dtype == e->in[i].need) {
                p[i] = src;
            } else {
                hop__convert(m, buf[i], e->in[i].need, src, e->in[i].dtype, ist[i]);
                p[i] = buf[i];
            }
        }
        char *dst = o + j * ost * (int64_t)osz;
        if (ost == 1 && !convert_out) {
            e->fn(m, dst, p, inc);
        } else {
            e->fn(m, obuf, p, inc);
            store(e, m, dst, ost, obuf, cbuf);
        }
    }
}

void
hop__ew_compute(const hop__ew *e, int ith, int nth)
{
    int64_t begin, end;
    hop__split(e->numel, ith, nth, 16, &begin, &end);
    if (begin >= end)
        return;
    const char *ip[HOP__EW_MAXIN];
    int64_t ist[HOP__EW_MAXIN];
    size_t osz = hop_dtype_size(e->odtype);

    if (e->flat) {
        for (int i = 0; i < e->nin; i++) {
            const hop__ew_in *in = &e->in[i];
            int64_t s = e->rank == 0 || in->data == NULL ? 0 : in->strides[0];
            ist[i] = s;
            ip[i] = in->data == NULL ? (const char *)e->sval[i]
                                     : in->data + begin * s * (int64_t)hop_dtype_size(in->dtype);
        }
        run(e, end - begin, e->out + begin * (int64_t)osz, 1, ip, ist);
        return;
    }

    int r = e->rank, inner = r - 1;
    int64_t idx[HOP_MAX_RANK];
    int64_t rest = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rest % e->sizes[d];
        rest /= e->sizes[d];
    }
    for (int i = 0; i < e->nin; i++)
        ist[i] = e->in[i].data == NULL ? 0 : e->in[i].strides[inner];
    for (int64_t pos = begin; pos < end;) {
        int64_t ooff = 0;
        for (int d = 0; d < r; d++)
            ooff += idx[d] * e->ostrides[d];
        for (int i = 0; i < e->nin; i++) {
            const hop__ew_in *in = &e->in[i];
            if (in->data == NULL) {
                ip[i] = (const char *)e->sval[i];
                continue;
            }
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d] * in->strides[d];
            ip[i] = in->data + off * (int64_t)hop_dtype_size(in->dtype);
        }
        int64_t n = e->sizes[inner] - idx[inner];
        if (n > end - pos)
            n = end - pos;
        run(e, n, e->out + ooff * (int64_t)osz, e->ostrides[inner], ip, ist);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] == e->sizes[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

/* ------------------------------------------------------ vector functions */

/* The integer dtypes, as (C type, suffix); the float ones. */
#define SINT_TYPES(X) X(int8_t, i8) X(int16_t, i16) X(int32_t, i32) X(int64_t, i64)
#define UINT_TYPES(X) X(uint8_t, u8) X(uint16_t, u16) X(uint32_t, u32) X(uint64_t, u64)
#define INT_TYPES(X) SINT_TYPES(X) UINT_TYPES(X)
#define FLOAT_TYPES(X) X(float, f32) X(double, f64)
#define NUM_TYPES(X) INT_TYPES(X) FLOAT_TYPES(X)

/* Unsigned twins for wrapping arithmetic.  The 16-bit ones are unsigned
 * int: a uint16_t operand promotes to int, where 65535 * 65535 overflows. */
#define U_int8_t uint8_t
#define U_int16_t unsigned
#define U_int32_t uint32_t
#define U_int64_t uint64_t
#define U_uint8_t uint8_t
#define U_uint16_t unsigned
#define U_uint32_t uint32_t
#define U_uint64_t uint64_t
#define U_hop__bool unsigned

#define WRAP_ADD(T, x, y) ((T)((U_##T)(x) + (U_##T)(y)))
#define WRAP_SUB(T, x, y) ((T)((U_##T)(x) - (U_##T)(y)))
#define WRAP_MUL(T, x, y) ((T)((U_##T)(x) * (U_##T)(y)))
#define WRAP_NEG(T, x) ((T)(0 - (U_##T)(x)))

/* A binary function OT name(T x, T y): vv, vs and sv loops.  The float
 * arithmetic the fused tiles run (fused_exec.c: several passes over a tile
 * in L1, so the vector width is the cost) is HOP__WIDE (runtime.h): at the
 * widest vectors the CPU has. */

#define BINARY_FN(name, T, OT, EXPR) BINARY_FN_AT(name, T, OT, EXPR, )
#define BINARY_FN_AT(name, T, OT, EXPR, ATTR)                                                      \
    ATTR static void name(int64_t n, void *out, const void *const *in, const int *inc)             \
    {                                                                                              \
        OT *o = out;                                                                               \
        const T *a = in[0];                                                                        \
        const T *b = in[1];                                                                        \
        if (inc[0] && inc[1]) {                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i], y = b[i];                                                              \
                o[i] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        } else if (inc[0]) {                                                                       \
            T y = b[0];                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i];                                                                        \
                o[i] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        } else {                                                                                   \
            T x = a[0];                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T y = b[i];                                                                        \
                o[i] = (OT)(EXPR);                                                                 \
            }                                                                                      \
        }                                                                                          \
    }

#define UNARY_FN(name, T, OT, EXPR) UNARY_FN_AT(name, T, OT, EXPR, )
#define UNARY_FN_AT HOP__UNARY_VFN

#define FMAX(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) > (y) ? (x) : (y))
#define FMIN(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (x) : (y))
#define IMAX(x, y) ((x) > (y) ? (x) : (y))
#define IMIN(x, y) ((x) < (y) ? (x) : (y))

/* add sub mul maximum minimum per dtype; bool add is or, mul is and. */
BINARY_FN(add_b, hop__bool, hop__bool, (x | y) != 0)
BINARY_FN(mul_b, hop__bool, hop__bool, (x & y) != 0)
BINARY_FN(max_b, hop__bool, hop__bool, (x | y) != 0)
BINARY_FN(min_b, hop__bool, hop__bool, (x & y) != 0)
/* The integer ones at the widest vectors too (exact: every clone gives the
 * same bits; np_large's Mandelbrot counts with 20 add_i32 a call). */
#define INT_ARITH(T, sfx)                                                                          \
    BINARY_FN_AT(add_##sfx, T, T, WRAP_ADD(T, x, y), HOP__WIDE)                                    \
    BINARY_FN_AT(sub_##sfx, T, T, WRAP_SUB(T, x, y), HOP__WIDE)                                    \
    BINARY_FN_AT(mul_##sfx, T, T, WRAP_MUL(T, x, y), HOP__WIDE)                                    \
    BINARY_FN_AT(max_##sfx, T, T, IMAX(x, y), HOP__WIDE)                                           \
    BINARY_FN_AT(min_##sfx, T, T, IMIN(x, y), HOP__WIDE)
INT_TYPES(INT_ARITH)
#define FLOAT_ARITH(T, sfx)                                                                        \
    BINARY_FN_AT(add_##sfx, T, T, x + y, HOP__WIDE)                                                \
    BINARY_FN_AT(sub_##sfx, T, T, x - y, HOP__WIDE)                                                \
    BINARY_FN_AT(mul_##sfx, T, T, x *y, HOP__WIDE)                                                 \
    BINARY_FN_AT(div_##sfx, T, T, x / y, HOP__WIDE)                                                \
    BINARY_FN_AT(max_##sfx, T, T, FMAX(x, y), HOP__WIDE)                                           \
    BINARY_FN_AT(min_##sfx, T, T, FMIN(x, y), HOP__WIDE)
FLOAT_TYPES(FLOAT_ARITH)

/* Comparisons read T and write bool; the integer and float ones (single
 * IEEE compares for floats: every clone gives the same bits) at the widest
 * vectors, as the fused tiles' arithmetic. */
#define COMPARE_FNS_AT(T, sfx, ATTR)                                                               \
    BINARY_FN_AT(eq_##sfx, T, hop__bool, x == y, ATTR)                                             \
    BINARY_FN_AT(ne_##sfx, T, hop__bool, x != y, ATTR)                                             \
    BINARY_FN_AT(lt_##sfx, T, hop__bool, x < y, ATTR)                                              \
    BINARY_FN_AT(le_##sfx, T, hop__bool, x <= y, ATTR)                                             \
    BINARY_FN_AT(gt_##sfx, T, hop__bool, x > y, ATTR)                                              \
    BINARY_FN_AT(ge_##sfx, T, hop__bool, x >= y, ATTR)
#define COMPARE_FNS(T, sfx) COMPARE_FNS_AT(T, sfx, )
#define COMPARE_FNS_WIDE(T, sfx) COMPARE_FNS_AT(T, sfx, HOP__WIDE)
COMPARE_FNS(hop__bool, b)
INT_TYPES(COMPARE_FNS_WIDE)
FLOAT_TYPES(COMPARE_FNS_WIDE)

BINARY_FN(land_b, hop__bool, hop__bool, (x & y) != 0)
BINARY_FN(lor_b, hop__bool, hop__bool, (x | y) != 0)

/*
 * Integer pow by squaring with wrapping products; a negative exponent gives
 * PyTorch's answer (1 for base 1, +-1 for base -1, else 0).
 */
#define IPOW(T, sfx)                                                                               \
    static T ipow_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        if (y < 0)                                                                                 \
            return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;                                  \
        U_##T r = 1, b = (U_##T)x;                                                                 \
        for (; y > 0; y >>= 1) {                                                                   \
            if (y & 1)                                                                             \
                r = (U_##T)(r * b);                                                                \
            b = (U_##T)(b * b);                                                                    \
        }                                                                                          \
        return (T)r;                                                                               \
    }                                                                                              \
    BINARY_FN(pow_##sfx, T, T, ipow_##sfx(x, y))
SINT_TYPES(IPOW)
#define UPOW(T, sfx)                                                                               \
    static T ipow_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        T r = 1;                                                                                   \
        for (; y > 0; y >>= 1) {                                                                   \
            if (y & 1)                                                                             \
                r = (T)(r * x);                                                                    \
            x = (T)(x * x);                                                                        \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    BINARY_FN(pow_##sfx, T, T, ipow_##sfx(x, y))
UINT_TYPES(UPOW)
BINARY_FN(pow_b, hop__bool, hop__bool, (x | !y) != 0)

/* The math backend wants arrays: fn(k, out, a, b) over a broadcast
 * operand (inc 0) and an array, the broadcast value spread into a block,
 * the array taken BLK elements at a time.  Reads the kernel's n, o, a, b
 * and inc; a macro, so that each kernel compiles as when it wrote it out. */
#define SPREAD_BLOCKS(T, fn)                                                                       \
    do {                                                                                           \
        T spread[BLK];                                                                             \
        T v = inc[0] ? b[0] : a[0];                                                                \
        for (int i = 0; i < BLK; i++)                                                              \
            spread[i] = v;                                                                         \
        for (int64_t j = 0; j < n; j += BLK) {                                                     \
            int64_t k = n - j < BLK ? n - j : BLK;                                                 \
            if (inc[0])                                                                            \
                fn(k, o + j, a + j, spread);                                                       \
            else                                                                                   \
                fn(k, o + j, spread, b + j);                                                       \
        }                                                                                          \
    } while (0)

/*
 * Float pow through the math backend (SPREAD_BLOCKS for a broadcast
 * operand).  x ** 2 is x * x (exact either way,
 * and the common case).
 */
#define FPOW(T, sfx)                                                                               \
    static void pow_##sfx(int64_t n, void *out, const void *const *in, const int *inc)             \
    {                                                                                              \
        const hop__math *m = hop__math_get();                                                      \
        T *o = out;                                                                                \
        const T *a = in[0], *b = in[1];                                                            \
        if (inc[0] && inc[1]) {                                                                    \
            m->pow_##sfx(n, o, a, b);                                                              \
            return;                                                                                \
        }                                                                                          \
        if (!inc[1] && b[0] == 2) {                                                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = a[i] * a[i];                                                                \
            return;                                                                                \
        }                                                                                          \
        SPREAD_BLOCKS(T, m->pow_##sfx);                                                            \
    }
FPOW(float, f32)
FPOW(double, f64)
/*
 * The f32 function a float16 power rounds from: NumPy 1.24's float16 power
 * is its scalar loop on every machine (no SIMD one), glibc's powf of the
 * float32 values rounded to float16, so hop's is too.  The backend's vector
 * powf differs from glibc's in the last float32 bit, which moves the float16
 * result at a halfway point (about 5 elements in a million).
 */
BINARY_FN(pow_f16, float, float, powf(x, y))

/* Unary ops on integer and bool dtypes. */
#define SINT_UNARY(T, sfx)                                                                         \
    UNARY_FN(neg_##sfx, T, T, WRAP_NEG(T, x))                                                      \
    UNARY_FN(abs_##sfx, T, T, x < 0 ? WRAP_NEG(T, x) : x)                                          \
    UNARY_FN(relu_##sfx, T, T, x > 0 ? x : 0)
SINT_TYPES(SINT_UNARY)
/* Unsigned: abs and relu are the identity; neg wraps, as NumPy's does. */
#define UINT_UNARY(T, sfx)                                                                         \
    UNARY_FN(neg_##sfx, T, T, WRAP_NEG(T, x))                                                      \
    UNARY_FN(abs_##sfx, T, T, x)                                                                   \
    UNARY_FN(relu_##sfx, T, T, x)
UINT_TYPES(UINT_UNARY)
UNARY_FN_AT(neg_f32, float, float, -x, HOP__WIDE)
UNARY_FN_AT(neg_f64, double, double, -x, HOP__WIDE)
UNARY_FN(abs_b, hop__bool, hop__bool, x != 0)
UNARY_FN_AT(abs_f32, float, float, fabsf(x), HOP__WIDE)
UNARY_FN_AT(abs_f64, double, double, fabs(x), HOP__WIDE)
UNARY_FN(relu_b, hop__bool, hop__bool, x != 0)
/* relu keeps nan, as PyTorch's does */
UNARY_FN_AT(relu_f32, float, float, x > 0 || x != x ? x : 0.0f, HOP__WIDE)
UNARY_FN_AT(relu_f64, double, double, x > 0 || x != x ? x : 0.0, HOP__WIDE)
UNARY_FN(lnot_b, hop__bool, hop__bool, x == 0)

/* Float functions through the math backend. */
#define MATH_FN(name)                                                                              \
    static void name##_f32(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)inc;                                                                                 \
        hop__math_get()->name##_f32(n, out, in[0]);                                                \
    }                                                                                              \
    static void name##_f64(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)inc;                                                                                 \
        hop__math_get()->name##_f64(n, out, in[0]);                                                \
    }
MATH_FN(exp)
MATH_FN(log)
MATH_FN(sin)
MATH_FN(cos)
/* What float16 rounds from: the table's float16 members (the backend's own
 * float32 functions, or NumPy's SVML ones once adopted: NumPy's float16
 * loop of a contiguous array runs SVML's float32 functions, not the loops
 * of its own it runs for a float32 array). */
#define HALF_MATH_FN(name)                                                                         \
    static void name##_for_f16(int64_t n, void *out, const void *const *in, const int *inc)        \
    {                                                                                              \
        (void)inc;                                                                                 \
        hop__math_get()->name##_f16(n, out, in[0]);                                                \
    }
/* exp for float16: the table's float16 exp, whose vector code may raise no
 * flag, noting the overflow (inf of a finite x) and underflow (0 of a
 * finite x) glibc's expf and SVML's raise: exp(254) is inf in float32
 * already, where the conversion to float16 notes nothing. */
static void
exp_for_f16(int64_t n, void *out, const void *const *in, const int *inc)
{
    (void)inc;
    hop__math_get()->exp_f16(n, out, in[0]);
    const float *x = in[0], *y = out;
    int flags = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(x[i]) && (isinf(y[i]) || y[i] == 0.0f))
            flags |= isinf(y[i]) ? HOP_FP_OVERFLOW : HOP_FP_UNDERFLOW;
    }
    if (flags != 0)
        hop__fp_note(flags);
}
HALF_MATH_FN(log)
HALF_MATH_FN(sin)
HALF_MATH_FN(cos)
HALF_MATH_FN(tanh)
MATH_FN(tanh)
MATH_FN(sigmoid)
MATH_FN(sqrt)

/* Float functions from libm, one element at a time (not in the backend). */
#define LIBM_FN(name, f32fn, f64fn)                                                                \
    UNARY_FN(name##_f32, float, float, f32fn(x))                                                   \
    UNARY_FN(name##_f64, double, double, f64fn(x))
LIBM_FN(floor, floorf, floor)
LIBM_FN(ceil, ceilf, ceil)
/* half to even under the default rounding mode, as NumPy's rint */
LIBM_FN(round, rintf, rint)

/* sign: -1, 0 or 1 in the dtype; nan stays nan and -0.0 gives 0.0, as NumPy. */
#define FSIGN(x) ((x) > 0 ? 1 : (x) < 0 ? -1 : (x) == 0 ? 0 : (x))
UNARY_FN(sign_f32, float, float, FSIGN(x))
UNARY_FN(sign_f64, double, double, FSIGN(x))
UNARY_FN(sign_b, hop__bool, hop__bool, x != 0)
#define SINT_SIGN(T, sfx) UNARY_FN(sign_##sfx, T, T, (x > 0) - (x < 0))
SINT_TYPES(SINT_SIGN)
#define UINT_SIGN(T, sfx) UNARY_FN(sign_##sfx, T, T, x > 0)
UINT_TYPES(UINT_SIGN)
/* floor, ceil and round of integers and bools are the identity. */
#define INT_IDENTITY(T, sfx)                                                                       \
    UNARY_FN(floor_##sfx, T, T, x)                                                                 \
    UNARY_FN(ceil_##sfx, T, T, x)                                                                  \
    UNARY_FN(round_##sfx, T, T, x)
INT_TYPES(INT_IDENTITY)
UNARY_FN(floor_b, hop__bool, hop__bool, x != 0)
UNARY_FN(ceil_b, hop__bool, hop__bool, x != 0)
UNARY_FN(round_b, hop__bool, hop__bool, x != 0)

/* Bitwise ops on integers; on bools they are the logical ones. */
#define INT_BITWISE(T, sfx)                                                                        \
    BINARY_FN(band_##sfx, T, T, x &y)                                                              \
    BINARY_FN(bor_##sfx, T, T, x | y)                                                              \
    BINARY_FN(bxor_##sfx, T, T, x ^ y)                                                             \
    UNARY_FN(bnot_##sfx, T, T, (T) ~(U_##T)x)
INT_TYPES(INT_BITWISE)
BINARY_FN(band_b, hop__bool, hop__bool, (x & y) != 0)
BINARY_FN(bor_b, hop__bool, hop__bool, (x | y) != 0)
BINARY_FN(bxor_b, hop__bool, hop__bool, (x != 0) != (y != 0))

/*
 * Floor division and remainder, rounding toward -inf (Python's // and %).
 * Integers: a zero divisor gives 0 for both, and MIN // -1 wraps to MIN, as
 * NumPy 1.24 answers; both are noted as the divide and overflow exceptions
 * its integer loops raise (hop_fp_status: NumPy warns for them, and for
 * MIN % -1 it does not).  Floats: CPython's
 * float_divmod, which NumPy's npy_divmod is: fmod, then the quotient
 * snapped to an integer; a zero divisor gives x / 0 and fmod's nan.
 */
#define SINT_DIVMOD(T, sfx)                                                                        \
    static T fdiv_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        if (y == 0) {                                                                              \
            hop__fp_note(HOP_FP_DIVIDE);                                                           \
            return 0;                                                                              \
        }                                                                                          \
        if (y == -1) {                                                                             \
            if (x < 0 && WRAP_NEG(T, x) == x)                                                      \
                hop__fp_note(HOP_FP_OVERFLOW);                                                     \
            return WRAP_NEG(T, x);                                                                 \
        }                                                                                          \
        T q = (T)(x / y), r = (T)(x % y);                                                          \
        return r != 0 && ((r < 0) != (y < 0)) ? (T)(q - 1) : q;                                    \
    }                                                                                              \
    static T fmod_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        if (y == 0)                                                                                \
            hop__fp_note(HOP_FP_DIVIDE);                                                           \
        if (y == 0 || y == -1)                                                                     \
            return 0;                                                                              \
        T r = (T)(x % y);                                                                          \
        return r != 0 && ((r < 0) != (y < 0)) ? (T)(r + y) : r;                                    \
    }                                                                                              \
    BINARY_FN(floordiv_##sfx, T, T, fdiv_##sfx(x, y))                                              \
    BINARY_FN(rem_##sfx, T, T, fmod_##sfx(x, y))
SINT_TYPES(SINT_DIVMOD)
#define UINT_DIVMOD(T, sfx)                                                                        \
    BINARY_FN(floordiv_##sfx, T, T, y == 0 ? (hop__fp_note(HOP_FP_DIVIDE), 0) : x / y)             \
    BINARY_FN(rem_##sfx, T, T, y == 0 ? (hop__fp_note(HOP_FP_DIVIDE), 0) : x % y)
UINT_TYPES(UINT_DIVMOD)
#define FLOAT_DIVMOD(T, sfx, FMOD, FLOOR)                                                          \
    static T fdiv_##sfx(T a, T b)                                                                  \
    {                                                                                              \
        if (b == 0)                                                                                \
            return a / b;                                                                          \
        T mod = FMOD(a, b);                                                                        \
        T div = (a - mod) / b;                                                                     \
        if (mod != 0 && (b < 0) != (mod < 0))                                                      \
            div -= 1;                                                                              \
        if (div == 0)                                                                              \
            return copysign(0, a / b);                                                             \
        T fl = FLOOR(div);                                                                         \
        return div - fl > (T)0.5 ? fl + 1 : fl;                                                    \
    }                                                                                              \
    static T fmod_##sfx(T a, T b)                                                                  \
    {                                                                                              \
        T mod = FMOD(a, b);                                                                        \
        if (b == 0)                                                                                \
            return mod;                                                                            \
        if (mod != 0)                                                                              \
            return (b < 0) != (mod < 0) ? mod + b : mod;                                           \
        return copysign(0, b);                                                                     \
    }                                                                                              \
    BINARY_FN(floordiv_##sfx, T, T, fdiv_##sfx(x, y))                                              \
    BINARY_FN(rem_##sfx, T, T, fmod_##sfx(x, y))
FLOAT_DIVMOD(float, f32, fmodf, floorf)
FLOAT_DIVMOD(double, f64, fmod, floor)

/* The backend's further functions (sinh ... cbrt, log10 ... atan; atan2, hypot). */
#define MATH_UNARY_FN(name, f)                                                                     \
    static void name##_f32(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)inc;                                                                                 \
        hop__math_get()->unary_f32[HOP__MU_##name](n, out, in[0]);                                 \
    }                                                                                              \
    static void name##_f64(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)inc;                                                                                 \
        hop__math_get()->unary_f64[HOP__MU_##name](n, out, in[0]);                                 \
    }
HOP__MATH_UNARY(MATH_UNARY_FN)

/* A broadcast operand is spread into a block first, as for pow. */
#define MATH_BINARY_FN(name, T, sfx)                                                               \
    static void name##_##sfx(int64_t n, void *out, const void *const *in, const int *inc)          \
    {                                                                                              \
        hop__mfn2_##sfx fn = hop__math_get()->binary_##sfx[HOP__MB_##name];                        \
        T *o = out;                                                                                \
        const T *a = in[0], *b = in[1];                                                            \
        if (inc[0] && inc[1]) {                                                                    \
            fn(n, o, a, b);                                                                        \
            return;                                                                                \
        }                                                                                          \
        if (!inc[0] && !inc[1]) { /* two scalars: one value */                                     \
            T r;                                                                                   \
            fn(1, &r, a, b);                                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = r;                                                                          \
            return;                                                                                \
        }                                                                                          \
        SPREAD_BLOCKS(T, fn);                                                                      \
    }
MATH_BINARY_FN(atan2, float, f32)
MATH_BINARY_FN(atan2, double, f64)
MATH_BINARY_FN(hypot, float, f32)
MATH_BINARY_FN(hypot, double, f64)

/* copysign, nextafter and C's fmod from libm; ldexp reads its exponent as
 * an integer (any count beyond +-2200 under- or overflows every double
 * already, so it is clamped there before the conversion). */
#define LDEXP_N(y) ((int)((y) > 2200 ? 2200 : (y) < -2200 ? -2200 : (y)))
BINARY_FN(copysign_f32, float, float, copysignf(x, y))
BINARY_FN(copysign_f64, double, double, copysign(x, y))
BINARY_FN(nextafter_f32, float, float, nextafterf(x, y))
BINARY_FN(nextafter_f64, double, double, nextafter(x, y))
BINARY_FN(cfmod_f32, float, float, fmodf(x, y))
BINARY_FN(cfmod_f64, double, double, fmod(x, y))
BINARY_FN(ldexp_f32, float, float, y != y ? y : ldexpf(x, LDEXP_N(y)))
BINARY_FN(ldexp_f64, double, double, y != y ? y : ldexp(x, LDEXP_N(y)))
/* float_power: the C library's pow one element at a time, as NumPy 1.24's
 * float_power loop (npy_pow) and its float scalars' ** (npy_pow, npy_powf)
 * call it; the math backend's vector pow (SLEEF's or NumPy's SVML one, its
 * power loop's) differs in the last bit of ~27% of float64 results. */
BINARY_FN(fpow_f32, float, float, powf(x, y))
BINARY_FN(fpow_f64, double, double, pow(x, y))

/*
 * logaddexp and logaddexp2: NumPy 1.24's npy_logaddexp and npy_logaddexp2
 * (npymath/npy_math_internal.h.src) line for line, with libm's exp, exp2
 * and log1p as NumPy's loops call them (not the math backend: NumPy runs
 * no SIMD loop here), so every result is NumPy's bits; float16 is the
 * float32 function rounded once, as NumPy's half loop calls the float one.
 * x == y first (infinities of one sign, with no inf - inf); a NaN operand
 * makes tmp NaN, whose ordered comparison with 0 raises FE_INVALID
 * (NumPy's "invalid value encountered in logaddexp"), and tmp is the
 * result.  log2_1p(v) is LOG2E * log1p(v), NumPy's npy_log2_1p (C11 does
 * not contract the sum into a fused multiply-add, nor did NumPy's build).
 */
#define LOGADDEXP(T, sfx, EXP, EXP2, LOG1P, LOGE2, LOG2E)                                          \
    static T logaddexp_##sfx##_1(T x, T y)                                                         \
    {                                                                                              \
        if (x == y)                                                                                \
            return x + LOGE2;                                                                      \
        T tmp = x - y;                                                                             \
        if (tmp > 0)                                                                               \
            return x + LOG1P(EXP(-tmp));                                                           \
        else if (tmp <= 0)                                                                         \
            return y + LOG1P(EXP(tmp));                                                            \
        return tmp;                                                                                \
    }                                                                                              \
    static T logaddexp2_##sfx##_1(T x, T y)                                                        \
    {                                                                                              \
        if (x == y)                                                                                \
            return x + 1;                                                                          \
        T tmp = x - y;                                                                             \
        if (tmp > 0)                                                                               \
            return x + LOG2E * LOG1P(EXP2(-tmp));                                                  \
        else if (tmp <= 0)                                                                         \
            return y + LOG2E * LOG1P(EXP2(tmp));                                                   \
        return tmp;                                                                                \
    }                                                                                              \
    BINARY_FN(logaddexp_##sfx, T, T, logaddexp_##sfx##_1(x, y))                                    \
    BINARY_FN(logaddexp2_##sfx, T, T, logaddexp2_##sfx##_1(x, y))
LOGADDEXP(float, f32, expf, exp2f, log1pf, 0.693147180559945309417232121458176568F,
          1.442695040888963407359924681001892137F)
LOGADDEXP(double, f64, exp, exp2, log1p, 0.693147180559945309417232121458176568,
          1.442695040888963407359924681001892137)

/*
 * Integer fmod (the sign of the dividend, C's %): a zero divisor gives 0,
 * and so does -1 (MIN % -1 would trap).  gcd and lcm on magnitudes
 * (NumPy's npy_gcd/npy_lcm: lcm is |a| / gcd * |b| in C's int for int8 and
 * int16, narrowed after (lcm(12, 11) of int8 is -124), in the type itself
 * wider, wrapping (so lcm(2**62, 3) is negative); gcd(MIN, 0) stays MIN as
 * NumPy's does).  Shifts by a count outside [0, width) give 0,
 * and a right shift of a negative value then -1, as NumPy's npy_lshift and
 * npy_rshift; a left shift goes through the unsigned type (it wraps).
 */
#define SINT_MORE(T, sfx)                                                                          \
    static T igcd_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        U_##T a = x < 0 ? (U_##T)(0 - (U_##T)x) : (U_##T)x;                                        \
        U_##T b = y < 0 ? (U_##T)(0 - (U_##T)y) : (U_##T)y;                                        \
        while (b != 0) {                                                                           \
            U_##T t = a % b;                                                                       \
            a = b;                                                                                 \
            b = t;                                                                                 \
        }                                                                                          \
        return (T)a;                                                                               \
    }                                                                                              \
    static T ilcm_##sfx(T x, T y)                                                                  \
    {                                                                                              \
        T g = igcd_##sfx(x, y);                                                                    \
        if (g == 0)                                                                                \
            return 0;                                                                              \
        if (sizeof(T) < sizeof(int)) /* C's int: exact, then narrowed (it wraps) */                \
            return (T)((x < 0 ? -(int)x : (int)x) / g * (y < 0 ? -(int)y : (int)y));               \
        T ax = x < 0 ? WRAP_NEG(T, x) : x, ay = y < 0 ? WRAP_NEG(T, y) : y;                        \
        return WRAP_MUL(T, g == -1 ? WRAP_NEG(T, ax) : (T)(ax / g), ay);                           \
    }                                                                                              \
    BINARY_FN(ifmod_##sfx, T, T,                                                                   \
              y == 0    ? (hop__fp_note(HOP_FP_DIVIDE), 0)                                         \
              : y == -1 ? 0                                                                        \
                        : (T)(x % y))                                                              \
    BINARY_FN(gcd_##sfx, T, T, igcd_##sfx(x, y))                                                   \
    BINARY_FN(lcm_##sfx, T, T, ilcm_##sfx(x, y))                                                   \
    BINARY_FN(lshift_##sfx, T, T, (uint64_t)y < 8 * sizeof(T) ? (T)((U_##T)x << y) : 0)            \
    BINARY_FN(rshift_##sfx, T, T, (uint64_t)y < 8 * sizeof(T) ? (T)(x >> y) : (T)(x < 0 ? -1 : 0))
SINT_TYPES(SINT_MORE)
#define UINT_MORE(T, sfx)                                                                          \
    static T igcd_##sfx(T a, T b)                                                                  \
    {                                                                                              \
        while (b != 0) {                                                                           \
            T t = (T)(a % b);                                                                      \
            a = b;                                                                                 \
            b = t;                                                                                 \
        }                                                                                          \
        return a;                                                                                  \
    }                                                                                              \
    BINARY_FN(ifmod_##sfx, T, T, y == 0 ? (hop__fp_note(HOP_FP_DIVIDE), 0) : (T)(x % y))           \
    BINARY_FN(gcd_##sfx, T, T, igcd_##sfx(x, y))                                                   \
    BINARY_FN(lcm_##sfx, T, T, igcd_##sfx(x, y) == 0 ? 0 : (T)(x / igcd_##sfx(x, y) * y))          \
    BINARY_FN(lshift_##sfx, T, T, (uint64_t)y < 8 * sizeof(T) ? (T)(x << y) : 0)                   \
    BINARY_FN(rshift_##sfx, T, T, (uint64_t)y < 8 * sizeof(T) ? (T)(x >> y) : 0)
UINT_TYPES(UINT_MORE)

/*
 * The modified Bessel functions i0 and i1 from Cephes' Chebyshev series on
 * [0, 8] and (8, inf): exp(x) * chbevl(x/2 - 2, A) and exp(x) * chbevl(32/x
 * - 2, B) / sqrt(x) (i1 times x on [0, 8], odd).  i0 is NumPy's own
 * (numpy.i0 evaluates these series in the array's dtype, in this order).
 */
static const double i0_a[] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,  -2.43127984654795469359E-16,
    1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,  -1.72682629144155570723E-11,
    9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,   -2.67079385394061173391E-7,
    1.11738753912010371815E-6,   -4.41673835845875056359E-6,  1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,   -5.76375574538582365885E-4,
    1.63947561694133579842E-3,   -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,   -9.49010970480476444210E-2,
    1.71620901522208775349E-1,   -3.04682672343198398683E-1,  6.76795274409476084995E-1};
static const double i0_b[] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
    2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
static const double i1_a[] = {
    2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
    3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
    9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
    -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
    4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
    -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
    2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
    -1.76416518357834055153E-1,  2.52587186443633654823E-1};
static const double i1_b[] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
    3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

/* Cephes' chbevl in type T: every step rounds to T, as NumPy's i0 on a
 * float32 array does. */
#define BESSEL(T, sfx, EXP, SQRT)                                                                  \
    static T chbevl_##sfx(T x, const double *c, int n)                                             \
    {                                                                                              \
        T b0 = (T)c[0], b1 = 0, b2 = 0;                                                            \
        for (int i = 1; i < n; i++) {                                                              \
            b2 = b1;                                                                               \
            b1 = b0;                                                                               \
            b0 = x * b1 - b2 + (T)c[i];                                                            \
        }                                                                                          \
        return (T)0.5 * (b0 - b2);                                                                 \
    }                                                                                              \
    /* i0 of z = |x| >= 0 (or NaN), given ez = exp(z) */                                           \
    static T bessel_i0_ez_##sfx(T z, T ez)                                                         \
    {                                                                                              \
        if (z <= 8)                                                                                \
            return ez * chbevl_##sfx(z / (T)2.0 - (T)2, i0_a, 30);                                 \
        return ez * chbevl_##sfx((T)32.0 / z - (T)2.0, i0_b, 25) / SQRT(z);                        \
    }                                                                                              \
    static T bessel_i0_##sfx(T x)                                                                  \
    {                                                                                              \
        T z = x < 0 ? -x : x;                                                                      \
        return bessel_i0_ez_##sfx(z, EXP(z));                                                      \
    }                                                                                              \
    static T bessel_i1_##sfx(T x)                                                                  \
    {                                                                                              \
        T z = x < 0 ? -x : x, r;                                                                   \
        if (z <= 8)                                                                                \
            r = chbevl_##sfx(z / (T)2.0 - (T)2, i1_a, 29) * z * EXP(z);                            \
        else                                                                                       \
            r = EXP(z) * chbevl_##sfx((T)32.0 / z - (T)2.0, i1_b, 25) / SQRT(z);                   \
        return x < 0 ? -r : r;                                                                     \
    }                                                                                              \
    UNARY_FN(i1_##sfx, T, T, bessel_i1_##sfx(x))
BESSEL(float, f32, expf, sqrtf)
BESSEL(double, f64, exp, sqrt)
/* NumPy's i0 takes np.exp of the array's |x|: for float64 its SVML exp
 * where the CPU has AVX512_SKX, for float32 its own AVX2/AVX-512 loop,
 * which the math table runs once `import hop` adopted them (vmath_adopt.c,
 * vmath_numpy.c), and libm's exp elsewhere (NumPy's scalar loop), which
 * the table's own SLEEF exp is not: so the exponentials come from the
 * table, a block at a time, only while its exp is adopted. */
#define I0_FN(T, sfx, ABS)                                                                         \
    static void i0_##sfx(int64_t n, void *out, const void *const *in, const int *inc)              \
    {                                                                                              \
        (void)inc;                                                                                 \
        T *o = out;                                                                                \
        const T *a = in[0];                                                                        \
        hop__mfn_##sfx exp_fn = hop__math_get()->exp_##sfx;                                        \
        if (exp_fn == hop__math_base()->exp_##sfx) {                                               \
            for (int64_t i = 0; i < n; i++)                                                        \
                o[i] = bessel_i0_##sfx(a[i]);                                                      \
            return;                                                                                \
        }                                                                                          \
        enum { BLOCK = 256 };                                                                      \
        T z[BLOCK], ez[BLOCK];                                                                     \
        for (int64_t i = 0; i < n; i += BLOCK) {                                                   \
            int64_t len = n - i < BLOCK ? n - i : BLOCK;                                           \
            for (int64_t k = 0; k < len; k++)                                                      \
                z[k] = ABS(a[i + k]);                                                              \
            exp_fn(len, ez, z);                                                                    \
            for (int64_t k = 0; k < len; k++)                                                      \
                o[i + k] = bessel_i0_ez_##sfx(z[k], ez[k]);                                        \
        }                                                                                          \
    }
I0_FN(float, f32, fabsf)
I0_FN(double, f64, fabs)

/* where(c, a, b) and copy move elements by their size: c is bool.  The
 * contiguous loop reads both a[i] and b[i] and selects (a blend: the loop
 * vectorises, at the widest vectors the CPU has; a conditional read would
 * keep it scalar); moving bits, every clone gives the same ones. */
#define WHERE_FN(T, sfx, ATTR)                                                                     \
    ATTR static void where_##sfx(int64_t n, void *out, const void *const *in, const int *inc)      \
    {                                                                                              \
        T *o = out;                                                                                \
        const hop__bool *c = in[0];                                                                \
        const T *a = in[1], *b = in[2];                                                            \
        if (inc[0] && inc[1] && inc[2]) {                                                          \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T x = a[i], y = b[i];                                                              \
                o[i] = c[i] ? x : y;                                                               \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int64_t ic = inc[0], ia = inc[1], ib = inc[2];                                             \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = c[i * ic] ? a[i * ia] : b[i * ib];                                              \
    }
WHERE_FN(uint8_t, 1, HOP__WIDE)
WHERE_FN(uint16_t, 2, HOP__WIDE)
WHERE_FN(uint32_t, 4, HOP__WIDE)
WHERE_FN(uint64_t, 8, HOP__WIDE)
typedef struct {
    uint64_t w[2];
} hop__u128;
WHERE_FN(hop__u128, 16, )

#define COPY_FN(T, sfx)                                                                            \
    static void copy_##sfx(int64_t n, void *out, const void *const *in, const int *inc)            \
    {                                                                                              \
        (void)inc;                                                                                 \
        memmove(out, in[0], (size_t)n * sizeof(T)); /* out may be in[0] */                         \
    }
COPY_FN(uint8_t, 1)
COPY_FN(uint16_t, 2)
COPY_FN(uint32_t, 4)
COPY_FN(uint64_t, 8)
COPY_FN(hop__u128, 16)
/* Bools are normalised to 0/1 on the way. */
UNARY_FN(copy_b, hop__bool, hop__bool, x != 0)

/* ---------------------------------------------------------------- tables */

/* Designated rows of a table indexed by dtype; a missing entry is NULL. */
#define INT_ROW(name)                                                                              \
    [HOP_I8] = name##_i8, [HOP_U8] = name##_u8, [HOP_I16] = name##_i16, [HOP_I32] = name##_i32,    \
    [HOP_I64] = name##_i64, [HOP_U64] = name##_u64, [HOP_U16] = name##_u16, [HOP_U32] = name##_u32
#define FLOAT_ROW(name) [HOP_F32] = name##_f32, [HOP_F64] = name##_f64
#define NUM_ROW(name) INT_ROW(name), FLOAT_ROW(name)
#define SIZE_ROW(name)                                                                             \
    [HOP_I8] = name##_1, [HOP_U8] = name##_1, [HOP_I16] = name##_2, [HOP_I32] = name##_4,          \
    [HOP_I64] = name##_8, [HOP_U64] = name##_8, [HOP_F16] = name##_2, [HOP_F32] = name##_4,        \
    [HOP_F64] = name##_8, [HOP_C64] = name##_8, [HOP_C128] = name##_16, [HOP_U16] = name##_2,      \
    [HOP_U32] = name##_4

/* float16 arcsin and arcsinh: NumPy 1.24's float16 loops are glibc's
 * asinf/asinhf rounded on a CPU without AVX512F (an AMD EPYC), where the
 * backend's float32 functions rounded differ at a few inputs; on one with
 * AVX512F they are SVML's, which the backend's rounded agree with. */
UNARY_FN(asin_libm_f32, float, float, asinf(x))
UNARY_FN(asinh_libm_f32, float, float, asinhf(x))

static bool
f16_asin_by_libm(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return !__builtin_cpu_supports("avx512f");
#else
    return true;
#endif
}

hop__vfn
hop__vfn_unary_f16(hop_op op)
{
    switch (op) {
    case HOP_OP_arcsin:
        return f16_asin_by_libm() ? asin_libm_f32 : hop__vfn_unary(op, HOP_F32);
    case HOP_OP_arcsinh:
        return f16_asin_by_libm() ? asinh_libm_f32 : hop__vfn_unary(op, HOP_F32);
    case HOP_OP_exp:
        return exp_for_f16;
    case HOP_OP_log:
        return log_for_f16;
    case HOP_OP_sin:
        return sin_for_f16;
    case HOP_OP_cos:
        return cos_for_f16;
    case HOP_OP_tanh:
        return tanh_for_f16;
    default:
        return hop__vfn_unary(op, HOP_F32);
    }
}

hop__vfn
hop__vfn_unary(hop_op op, hop_dtype dt)
{
    static const hop__vfn neg[HOP_DTYPE_COUNT] = {NUM_ROW(neg)};
    static const hop__vfn abs_[HOP_DTYPE_COUNT] = {[HOP_BOOL] = abs_b, NUM_ROW(abs)};
    static const hop__vfn relu[HOP_DTYPE_COUNT] = {[HOP_BOOL] = relu_b, NUM_ROW(relu)};
    static const hop__vfn lnot[HOP_DTYPE_COUNT] = {[HOP_BOOL] = lnot_b};
    static const hop__vfn exp_[HOP_DTYPE_COUNT] = {FLOAT_ROW(exp)},
                          log_[HOP_DTYPE_COUNT] = {FLOAT_ROW(log)},
                          sin_[HOP_DTYPE_COUNT] = {FLOAT_ROW(sin)},
                          cos_[HOP_DTYPE_COUNT] = {FLOAT_ROW(cos)},
                          tanh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(tanh)},
                          sigm[HOP_DTYPE_COUNT] = {FLOAT_ROW(sigmoid)},
                          sqrt_[HOP_DTYPE_COUNT] = {FLOAT_ROW(sqrt)},
                          expm1_[HOP_DTYPE_COUNT] = {FLOAT_ROW(expm1)},
                          log1p_[HOP_DTYPE_COUNT] = {FLOAT_ROW(log1p)},
                          log2_[HOP_DTYPE_COUNT] = {FLOAT_ROW(log2)},
                          log10_[HOP_DTYPE_COUNT] = {FLOAT_ROW(log10)},
                          exp2_[HOP_DTYPE_COUNT] = {FLOAT_ROW(exp2)},
                          tan_[HOP_DTYPE_COUNT] = {FLOAT_ROW(tan)},
                          atan_[HOP_DTYPE_COUNT] = {FLOAT_ROW(atan)},
                          sinh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(sinh)},
                          cosh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(cosh)},
                          asin_[HOP_DTYPE_COUNT] = {FLOAT_ROW(asin)},
                          acos_[HOP_DTYPE_COUNT] = {FLOAT_ROW(acos)},
                          asinh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(asinh)},
                          acosh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(acosh)},
                          atanh_[HOP_DTYPE_COUNT] = {FLOAT_ROW(atanh)},
                          cbrt_[HOP_DTYPE_COUNT] = {FLOAT_ROW(cbrt)},
                          i0_[HOP_DTYPE_COUNT] = {FLOAT_ROW(i0)},
                          i1_[HOP_DTYPE_COUNT] = {FLOAT_ROW(i1)};
    static const hop__vfn sign[HOP_DTYPE_COUNT] = {[HOP_BOOL] = sign_b, NUM_ROW(sign)},
                          floor_[HOP_DTYPE_COUNT] = {[HOP_BOOL] = floor_b, NUM_ROW(floor)},
                          ceil_[HOP_DTYPE_COUNT] = {[HOP_BOOL] = ceil_b, NUM_ROW(ceil)},
                          round_[HOP_DTYPE_COUNT] = {[HOP_BOOL] = round_b, NUM_ROW(round)},
                          bnot[HOP_DTYPE_COUNT] = {[HOP_BOOL] = lnot_b, INT_ROW(bnot)};
    if ((unsigned)dt >= HOP_DTYPE_COUNT)
        return NULL;
    if (hop_dtype_is_complex(dt))
        return hop__vfn_complex(op, dt);
    if (op == HOP_OP_real || op == HOP_OP_imag || op == HOP_OP_conj || op == HOP_OP_angle)
        return hop__vfn_complex_part(op, dt);
    switch (op) {
    case HOP_OP_neg:
        return neg[dt];
    case HOP_OP_abs:
        return abs_[dt];
    case HOP_OP_relu:
        return relu[dt];
    case HOP_OP_logical_not:
        return lnot[dt];
    case HOP_OP_exp:
        return exp_[dt];
    case HOP_OP_log:
        return log_[dt];
    case HOP_OP_sin:
        return sin_[dt];
    case HOP_OP_cos:
        return cos_[dt];
    case HOP_OP_tanh:
        return tanh_[dt];
    case HOP_OP_sigmoid:
        return sigm[dt];
    case HOP_OP_sqrt:
        return sqrt_[dt];
    case HOP_OP_expm1:
        return expm1_[dt];
    case HOP_OP_log1p:
        return log1p_[dt];
    case HOP_OP_log2:
        return log2_[dt];
    case HOP_OP_log10:
        return log10_[dt];
    case HOP_OP_exp2:
        return exp2_[dt];
    case HOP_OP_tan:
        return tan_[dt];
    case HOP_OP_arctan:
        return atan_[dt];
    case HOP_OP_sinh:
        return sinh_[dt];
    case HOP_OP_cosh:
        return cosh_[dt];
    case HOP_OP_arcsin:
        return asin_[dt];
    case HOP_OP_arccos:
        return acos_[dt];
    case HOP_OP_arcsinh:
        return asinh_[dt];
    case HOP_OP_arccosh:
        return acosh_[dt];
    case HOP_OP_arctanh:
        return atanh_[dt];
    case HOP_OP_cbrt:
        return cbrt_[dt];
    case HOP_OP_i0:
        return i0_[dt];
    case HOP_OP_i1:
        return i1_[dt];
    case HOP_OP_sign:
        return sign[dt];
    case HOP_OP_floor:
        return floor_[dt];
    case HOP_OP_ceil:
        return ceil_[dt];
    case HOP_OP_round:
        return round_[dt];
    case HOP_OP_bitwise_not:
        return bnot[dt];
    default:
        return NULL;
    }
}

hop__vfn
hop__vfn_binary(hop_op op, hop_dtype dt)
{
    static const hop__vfn add[HOP_DTYPE_COUNT] = {[HOP_BOOL] = add_b, NUM_ROW(add)};
    static const hop__vfn sub[HOP_DTYPE_COUNT] = {NUM_ROW(sub)};
    static const hop__vfn mul[HOP_DTYPE_COUNT] = {[HOP_BOOL] = mul_b, NUM_ROW(mul)};
    static const hop__vfn div[HOP_DTYPE_COUNT] = {FLOAT_ROW(div)};
    static const hop__vfn pow_[HOP_DTYPE_COUNT] = {[HOP_BOOL] = pow_b, NUM_ROW(pow)};
    static const hop__vfn max[HOP_DTYPE_COUNT] = {[HOP_BOOL] = max_b, NUM_ROW(max)};
    static const hop__vfn min[HOP_DTYPE_COUNT] = {[HOP_BOOL] = min_b, NUM_ROW(min)};
    static const hop__vfn eq[HOP_DTYPE_COUNT] = {[HOP_BOOL] = eq_b, NUM_ROW(eq)};
    static const hop__vfn ne[HOP_DTYPE_COUNT] = {[HOP_BOOL] = ne_b, NUM_ROW(ne)};
    static const hop__vfn lt[HOP_DTYPE_COUNT] = {[HOP_BOOL] = lt_b, NUM_ROW(lt)};
    static const hop__vfn le[HOP_DTYPE_COUNT] = {[HOP_BOOL] = le_b, NUM_ROW(le)};
    static const hop__vfn gt[HOP_DTYPE_COUNT] = {[HOP_BOOL] = gt_b, NUM_ROW(gt)};
    static const hop__vfn ge[HOP_DTYPE_COUNT] = {[HOP_BOOL] = ge_b, NUM_ROW(ge)};
    static const hop__vfn land[HOP_DTYPE_COUNT] = {[HOP_BOOL] = land_b};
    static const hop__vfn lor[HOP_DTYPE_COUNT] = {[HOP_BOOL] = lor_b};
    static const hop__vfn fdiv[HOP_DTYPE_COUNT] = {NUM_ROW(floordiv)};
    static const hop__vfn rem[HOP_DTYPE_COUNT] = {NUM_ROW(rem)};
    static const hop__vfn band[HOP_DTYPE_COUNT] = {[HOP_BOOL] = band_b, INT_ROW(band)};
    static const hop__vfn bor[HOP_DTYPE_COUNT] = {[HOP_BOOL] = bor_b, INT_ROW(bor)};
    static const hop__vfn bxor[HOP_DTYPE_COUNT] = {[HOP_BOOL] = bxor_b, INT_ROW(bxor)};
    static const hop__vfn atan2_[HOP_DTYPE_COUNT] = {FLOAT_ROW(atan2)},
                          hypot_[HOP_DTYPE_COUNT] = {FLOAT_ROW(hypot)},
                          csign[HOP_DTYPE_COUNT] = {FLOAT_ROW(copysign)},
                          nexta[HOP_DTYPE_COUNT] = {FLOAT_ROW(nextafter)},
                          ldexp_[HOP_DTYPE_COUNT] = {FLOAT_ROW(ldexp)},
                          lae[HOP_DTYPE_COUNT] = {FLOAT_ROW(logaddexp)},
                          lae2[HOP_DTYPE_COUNT] = {FLOAT_ROW(logaddexp2)},
                          fpow[HOP_DTYPE_COUNT] = {FLOAT_ROW(fpow)},
                          fmod_[HOP_DTYPE_COUNT] = {INT_ROW(ifmod), FLOAT_ROW(cfmod)},
                          gcd[HOP_DTYPE_COUNT] = {INT_ROW(gcd)},
                          lcm[HOP_DTYPE_COUNT] = {INT_ROW(lcm)},
                          lsh[HOP_DTYPE_COUNT] = {INT_ROW(lshift)},
                          rsh[HOP_DTYPE_COUNT] = {INT_ROW(rshift)};
    if ((unsigned)dt >= HOP_DTYPE_COUNT)
        return NULL;
    if (hop_dtype_is_complex(dt))
        return hop__vfn_complex(op, dt);
    if (dt == HOP_F16)
        return op == HOP_OP_pow ? pow_f16 : hop__vfn_binary(op, HOP_F32);
    switch (op) {
    case HOP_OP_add:
        return add[dt];
    case HOP_OP_sub:
        return sub[dt];
    case HOP_OP_mul:
        return mul[dt];
    case HOP_OP_div:
        return div[dt];
    case HOP_OP_pow:
        return pow_[dt];
    case HOP_OP_maximum:
        return max[dt];
    case HOP_OP_minimum:
        return min[dt];
    case HOP_OP_eq:
        return eq[dt];
    case HOP_OP_ne:
        return ne[dt];
    case HOP_OP_lt:
        return lt[dt];
    case HOP_OP_le:
        return le[dt];
    case HOP_OP_gt:
        return gt[dt];
    case HOP_OP_ge:
        return ge[dt];
    case HOP_OP_logical_and:
        return land[dt];
    case HOP_OP_logical_or:
        return lor[dt];
    case HOP_OP_floor_divide:
        return fdiv[dt];
    case HOP_OP_remainder:
        return rem[dt];
    case HOP_OP_bitwise_and:
        return band[dt];
    case HOP_OP_bitwise_or:
        return bor[dt];
    case HOP_OP_bitwise_xor:
        return bxor[dt];
    case HOP_OP_arctan2:
        return atan2_[dt];
    case HOP_OP_hypot:
        return hypot_[dt];
    case HOP_OP_copysign:
        return csign[dt];
    case HOP_OP_nextafter:
        return nexta[dt];
    case HOP_OP_ldexp:
        return ldexp_[dt];
    case HOP_OP_logaddexp:
        return lae[dt];
    case HOP_OP_logaddexp2:
        return lae2[dt];
    case HOP_OP_float_power:
        return fpow[dt];
    case HOP_OP_fmod:
        return fmod_[dt];
    case HOP_OP_gcd:
        return gcd[dt];
    case HOP_OP_lcm:
        return lcm[dt];
    case HOP_OP_left_shift:
        return lsh[dt];
    case HOP_OP_right_shift:
        return rsh[dt];
    default:
        return NULL;
    }
}

hop__vfn
hop__vfn_where(hop_dtype dt)
{
    static const hop__vfn where[HOP_DTYPE_COUNT] = {[HOP_BOOL] = where_1, SIZE_ROW(where)};
    return (unsigned)dt < HOP_DTYPE_COUNT ? where[dt] : NULL;
}

hop__vfn
hop__vfn_copy(hop_dtype dt)
{
    static const hop__vfn copy[HOP_DTYPE_COUNT] = {[HOP_BOOL] = copy_b, SIZE_ROW(copy)};
    return (unsigned)dt < HOP_DTYPE_COUNT ? copy[dt] : NULL;
}
