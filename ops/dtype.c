/*
 * ops/dtype.c - the dtype table (names, sizes, kinds), promotion and the
 * binary16 conversions.
 *
 * Everything comes from HOP_DTYPE_LIST.
 */
#include "core/core.h"
#include "hop/ops.h"

#include <fenv.h>
#include <math.h>

typedef struct dtype_info {
    const char *name;
    size_t size;
    int kind; /* 0 bool, 1 signed integer, 2 float, 3 unsigned integer, 4 complex */
} dtype_info;

static const dtype_info dtype_table[] = {
#define HOP__DTYPE_ROW(e, name, ctype, size, kind) {name, size, kind},
    HOP_DTYPE_LIST(HOP__DTYPE_ROW)
#undef HOP__DTYPE_ROW
};
_Static_assert(HOP__ARRAY_LEN(dtype_table) == HOP_DTYPE_COUNT, "dtype table and enum disagree");

/* Long spellings accepted by hop_dtype_from_name, as NumPy and PyTorch name them. */
static const struct {
    const char *alias;
    hop_dtype dtype;
} dtype_aliases[] = {
    {"float32", HOP_F32}, {"float", HOP_F32}, {"float64", HOP_F64}, {"double", HOP_F64},
    {"float16", HOP_F16}, {"half", HOP_F16},  {"int32", HOP_I32},   {"int", HOP_I32},
    {"int64", HOP_I64},   {"long", HOP_I64},  {"int8", HOP_I8},     {"int16", HOP_I16},
    {"short", HOP_I16},   {"uint8", HOP_U8},  {"uint64", HOP_U64},  {"bool_", HOP_BOOL},
    {"uint16", HOP_U16},  {"uint32", HOP_U32},
    {"complex64", HOP_C64}, {"complex128", HOP_C128}, {"cfloat", HOP_C64}, {"cdouble", HOP_C128},
};

static bool
valid(hop_dtype d)
{
    return (unsigned)d < HOP_DTYPE_COUNT;
}

const char *
hop_dtype_name(hop_dtype d)
{
    return valid(d) ? dtype_table[d].name : "?";
}

size_t
hop_dtype_size(hop_dtype d)
{
    return valid(d) ? dtype_table[d].size : 0;
}

bool
hop_dtype_is_float(hop_dtype d)
{
    return valid(d) && dtype_table[d].kind == 2;
}

bool
hop_dtype_is_int(hop_dtype d)
{
    return valid(d) && (dtype_table[d].kind == 1 || dtype_table[d].kind == 3);
}

bool
hop_dtype_is_unsigned(hop_dtype d)
{
    return valid(d) && dtype_table[d].kind == 3;
}

bool
hop_dtype_is_complex(hop_dtype d)
{
    return valid(d) && dtype_table[d].kind == 4;
}

bool
hop_dtype_is_inexact(hop_dtype d)
{
    return valid(d) && (dtype_table[d].kind == 2 || dtype_table[d].kind == 4);
}

hop_dtype
hop_dtype_real(hop_dtype d)
{
    return d == HOP_C64 ? HOP_F32 : d == HOP_C128 ? HOP_F64 : d;
}

hop_dtype
hop_dtype_complex(hop_dtype d)
{
    return d == HOP_F64 || d == HOP_C128 ? HOP_C128 : HOP_C64;
}

hop_status
hop_dtype_from_name(const char *name, hop_dtype *out)
{
    if (name == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_dtype_from_name: %s is NULL", name ? "out" : "name");
    for (int d = 0; d < HOP_DTYPE_COUNT; d++) {
        if (strcmp(name, dtype_table[d].name) == 0) {
            *out = (hop_dtype)d;
            return HOP_OK;
        }
    }
    for (size_t i = 0; i < HOP__ARRAY_LEN(dtype_aliases); i++) {
        if (strcmp(name, dtype_aliases[i].alias) == 0) {
            *out = dtype_aliases[i].dtype;
            return HOP_OK;
        }
    }
    return hop_error(HOP_INVALID,
                     "unknown dtype '%s' (expected bool, i8, u8, i16, u16, i32, u32, i64, u64, "
                     "f16, f32, f64, c64 or c128)",
                     name);
}

/* The signed integer dtype of a byte size (1, 2, 4, 8). */
static hop_dtype
signed_of_size(size_t size)
{
    return size == 1 ? HOP_I8 : size == 2 ? HOP_I16 : size == 4 ? HOP_I32 : HOP_I64;
}

hop_dtype
hop_dtype_promote(hop_dtype a, hop_dtype b)
{
    /* An invalid operand wins, so that a caller checking the result with
     * hop_dtype_name sees "?" rather than a silently valid dtype. */
    if (!valid(a))
        return a;
    if (!valid(b))
        return b;
    if (a == b || b == HOP_BOOL)
        return a;
    if (a == HOP_BOOL)
        return b;
    size_t sa = dtype_table[a].size, sb = dtype_table[b].size;
    bool ca = hop_dtype_is_complex(a), cb = hop_dtype_is_complex(b);
    if (ca || cb) {
        hop_dtype c = ca ? a : b, o = ca ? b : a;
        if (hop_dtype_is_complex(o))
            return sa >= sb ? a : b;
        return o == HOP_F64 ? HOP_C128 : c;
    }
    bool fa = hop_dtype_is_float(a), fb = hop_dtype_is_float(b);
    if (fa != fb)
        return fa ? a : b;
    bool ua = hop_dtype_is_unsigned(a), ub = hop_dtype_is_unsigned(b);
    if (fa || ua == ub)
        return sa >= sb ? a : b;
    size_t su = ua ? sa : sb, ss = ua ? sb : sa;
    if (ss > su)
        return ua ? b : a;
    return su < 8 ? signed_of_size(2 * su) : HOP_F64;
}

/* ------------------------------------------------------------- binary16 */

float
hop_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in float */
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31)
        bits = sign | 0x7f800000u | mant << 13; /* inf, or nan keeping its payload */
    else
        bits = sign | (exp - 15 + 127) << 23 | mant << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t
hop_f16_from_double(double d)
{
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) {
        /* NumPy's npy_doublebits_to_halfbits: the payload's top 10 bits,
         * kept a nan when they are all zero (no quieting) */
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        uint16_t sig = (uint16_t)((bits & 0x000fffffffffffffu) >> 42);
        return sign | 0x7c00 | (sig ? sig : 1);
    }
    /* 65520 is halfway between the largest half, 65504, and 65536; the tie
     * goes to the even neighbour, 65536, which overflows.  A finite value
     * that overflows raises FE_OVERFLOW, as NumPy's npy_doublebits_to_halfbits
     * (NPY_HALF_GENERATE_OVERFLOW): its float16 loops and casts warn
     * "overflow encountered in ..." by that flag (docs/ARCHITECTURE.md,
     * "Floating-point warnings"). */
    if (a >= 65520.0) {
        if (!isinf(a))
            feraiseexcept(FE_OVERFLOW);
        return sign | 0x7c00;
    }
    if (a < 0x1p-14) {
        /* subnormal (or zero): a multiple of 2^-24, rounded to even; 1024
         * is the smallest normal, whose bits the sum gives as well.  Not
         * exact: FE_UNDERFLOW, as NumPy's (NPY_HALF_GENERATE_UNDERFLOW) */
        double s = ldexp(a, 24), r = rint(s);
        if (r != s)
            feraiseexcept(FE_UNDERFLOW);
        return sign | (uint16_t)r;
    }
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): a in [2^(e-1), 2^e) */
    int E = e - 1;
    double m = rint(ldexp(a, 10 - E)); /* in [1024, 2048] */
    if (m >= 2048.0) {
        m = 1024.0;
        E++;
    }
    return sign | (uint16_t)((E + 15) << 10) | (uint16_t)((int)m - 1024);
}

/* NumPy's npy_floatbits_to_halfbits: integer arithmetic on the float's
 * bits (no frexp/ldexp per element: float16 kernels convert every result
 * through here), the same bits and flags as hop_f16_from_double of the
 * exact double (checked over every float of the subnormal, overflow and
 * NaN ranges and 2^27 others): ties to even, FE_OVERFLOW for a finite value
 * that becomes inf, FE_UNDERFLOW for a nonzero one whose float16 is
 * subnormal or zero and not exact; a NaN keeps its payload's top 10 bits
 * (kept a NaN when they are all zero), unquieted. */
uint16_t
hop_f16_from_float(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
    uint32_t fexp = b & 0x7f800000u, fsig = b & 0x007fffffu;
    if (fexp >= 0x47800000u) { /* 2^16 and beyond: inf, or a NaN */
        if (fexp == 0x7f800000u && fsig != 0) {
            uint16_t sig = (uint16_t)(fsig >> 13);
            return sign | 0x7c00u | (sig ? sig : 1);
        }
        if (fexp != 0x7f800000u)
            feraiseexcept(FE_OVERFLOW);
        return sign | 0x7c00u;
    }
    if (fexp <= 0x38000000u) {    /* below 2^-14: subnormal or zero */
        if (fexp < 0x33000000u) { /* below 2^-25: zero */
            if ((b & 0x7fffffffu) != 0)
                feraiseexcept(FE_UNDERFLOW);
            return sign;
        }
        uint32_t e = fexp >> 23, s = 0x00800000u + fsig;
        if ((s & ((1u << (126 - e)) - 1)) != 0)
            feraiseexcept(FE_UNDERFLOW);
        s >>= 113 - e;
        /* half an ulp added unless the kept part is even and the rest is
         * exactly half (the shift dropped up to 11 bits: b's own say) */
        if ((s & 0x3fffu) != 0x1000u || (b & 0x7ffu) != 0)
            s += 0x1000u;
        return sign | (uint16_t)(s >> 13); /* (a carry makes the smallest normal) */
    }
    uint32_t hexp = (fexp - 0x38000000u) >> 13;
    if ((fsig & 0x3fffu) != 0x1000u)
        fsig += 0x1000u;
    uint32_t h = hexp + (fsig >> 13); /* (a carry moves to the exponent, or inf) */
    if (h == 0x7c00u)
        feraiseexcept(FE_OVERFLOW);
    return sign | (uint16_t)h;
}
