/*
 * python/_C/tensor_repr.c - the text of a hop.Tensor: repr() (a proxy's
 * node, a 0-d float tensor's NumPy digits made in C, everything else
 * through hop/_tensor_api.py) and the `f32[2, 3]` text of a tensor's
 * metadata that tensor.c's messages use.
 */
#include "tensor_impl.h"

#include <math.h>
#include <string.h>

/* `f32[2, 3]` for a concrete tensor or a proxy. */
const char *
hop_py__tensor_text(TensorObject *o, char *buf, size_t cap)
{
    if (o->t != NULL)
        hop_tensor_print_meta(o->t, buf, cap);
    else if (o->node != NULL && o->node->meta->kind == HOP_VALUE_TENSOR)
        hop_meta_print(&o->node->meta->meta, buf, cap);
    else
        snprintf(buf, cap, "<traced value>");
    return buf;
}

/*
 * The text of a 0-d float tensor whose value prints positionally (finite,
 * 0 or 1e-4 <= |v| < 1e8) under NumPy's default print options: the case of
 * hop/_tensor_api.py's _scalar_text that a compiled function's replayed
 * print(x.sum()) meets on every call, made here without a Python frame:
 * for float32 and float64 the digits NumPy's dragon4 gives, computed
 * exactly (dragon4_text), for float16 NumPy's dragon4 itself
 * (test_tensor.py checks that this and the Python path give the same
 * text).  NULL with no exception: not this case, or NumPy keeps its options
 * elsewhere (_tensor_api._repr_parts is None); the Python path decides.
 */
static PyObject *repr_parts; /* (numpy.core.arrayprint, its defaults, dragon4_positional),
                              * Py_None: unavailable */
static PyObject *repr_kw2, *str_format_options, *repr_eight, *repr_zero, *repr_point;

/* The tuple of the n names, each interned. */
static PyObject *
interned_names(const char *const *names, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++)
        hop_py_fill(&t, i, PyUnicode_InternFromString(names[i]));
    return t;
}

/* Whether NumPy's print options (its dict opts) are its defaults.  The
 * items of opts when it last equalled them are kept: the same keys holding
 * the same (immutable) objects in the same order are equal without
 * comparing strings; anything else is compared in full. */
static PyObject *repr_default_items; /* list of (key, value) of opts, or NULL */

static int
options_as_kept(PyObject *opts)
{
    if (repr_default_items == NULL || !PyDict_CheckExact(opts) ||
        PyDict_GET_SIZE(opts) != PyList_GET_SIZE(repr_default_items))
        return 0;
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(opts, &pos, &k, &v)) {
        PyObject *kv = PyList_GET_ITEM(repr_default_items, i++);
        if (PyTuple_GET_ITEM(kv, 0) != k || PyTuple_GET_ITEM(kv, 1) != v)
            return 0;
    }
    return 1;
}

static int
options_default(PyObject *opts, PyObject *defaults)
{
    if (options_as_kept(opts))
        return 1;
    int eq = PyObject_RichCompareBool(opts, defaults, Py_EQ);
    if (eq == 1 && PyDict_CheckExact(opts)) {
        Py_XSETREF(repr_default_items, PyDict_Items(opts));
        if (repr_default_items == NULL)
            return -1;
    }
    return eq;
}

static int
repr_parts_load(void)
{
    PyObject *api = PyImport_ImportModule("hop._tensor_api");
    PyObject *parts = api != NULL ? PyObject_CallMethod(api, "_repr_parts", NULL) : NULL;
    Py_XDECREF(api);
    if (parts == NULL)
        return -1;
    if (parts != Py_None && !(PyTuple_Check(parts) && PyTuple_GET_SIZE(parts) == 3)) {
        Py_DECREF(parts);
        PyErr_SetString(PyExc_SystemError, "hop._tensor_api._repr_parts: not 3 parts");
        return -1;
    }
    /* interned, as NumPy's parser first matches keyword names by identity */
    static const char *const kw2[] = {"precision",  "min_digits", "unique",
                                      "fractional", "trim",       "sign"};
    repr_kw2 = interned_names(kw2, 6);
    str_format_options = PyUnicode_InternFromString("_format_options");
    repr_eight = PyLong_FromLong(8);
    repr_zero = PyLong_FromLong(0);
    repr_point = PyUnicode_InternFromString(".");
    if (repr_kw2 == NULL || str_format_options == NULL || repr_eight == NULL || repr_zero == NULL ||
        repr_point == NULL) {
        Py_DECREF(parts);
        return -1;
    }
    repr_parts = parts;
    return 0;
}

/*
 * NumPy's dragon4 text of a float, made exactly with 128-bit integers.  A
 * finite a > 0 is M x 2^E with an integer M of `bits` bits (24 for
 * binary32, 53 for binary64); a decimal is D x 10^k = D x 5^k x 2^k, the
 * powers of two joined into one shift.  In the range scalar_repr prints
 * positionally (1e-4 <= a < 1e8: E >= -67, k >= -20, at most 17 digits)
 * every product below stays under 2^125 (the bounds are at each function).
 */
typedef unsigned __int128 u128;

static const uint64_t pow10_u64[18] = {1u,
                                       10u,
                                       100u,
                                       1000u,
                                       10000u,
                                       100000u,
                                       1000000u,
                                       10000000u,
                                       100000000u,
                                       1000000000u,
                                       10000000000u,
                                       100000000000u,
                                       1000000000000u,
                                       10000000000000u,
                                       100000000000000u,
                                       1000000000000000u,
                                       10000000000000000u,
                                       100000000000000000u};

static uint64_t
pow5(int k) /* 0 <= k <= 27 */
{
    uint64_t r = 1;
    while (k-- > 0)
        r *= 5;
    return r;
}

/* The sign of D x 10^k - L x 2^e.  (D < 2^57, L < 2^55, -20 <= k <= 7,
 * e >= -69: D x 5^k < 2^57 only when k <= 0 (k > 0 means at most 8
 * digits: below 2^44), shifted by k - e <= 76 for k > 0 and <= 68
 * otherwise; L x 5^-k < 2^102, shifted by at most 14 in binary32's range.) */
static int
dec_vs_bin(uint64_t D, int k, uint64_t L, int e)
{
    u128 left = D, right = L;
    if (k >= 0)
        left *= pow5(k);
    else
        right *= pow5(-k);
    int s = k - e;
    if (s >= 0)
        left <<= s;
    else
        right <<= -s;
    return (left > right) - (left < right);
}

/* M x 2^E x 10^s rounded to an integer, half to even (-7 <= s <= 20:
 * M x 5^s < 2^100, the shift E + s < 0 for binary64 and <= 16 for
 * binary32; 5^-s x 2^-(E+s) < 2^91). */
static uint64_t
round_scaled(uint64_t M, int E, int s)
{
    u128 num = M, den = 1;
    if (s >= 0)
        num *= pow5(s);
    else
        den = pow5(-s);
    if (E + s >= 0)
        num <<= E + s;
    else
        den <<= -(E + s);
    u128 q = num / den, r2 = (num % den) * 2;
    if (r2 > den || (r2 == den && (q & 1)))
        q++;
    return (uint64_t)q;
}

/* Whether D x 10^k reads back as the float M x 2^E (M of `bits` bits):
 * inside its rounding interval, whose ends count when M is even (ties round
 * to even) and whose lower half is half as wide at a power of two. */
static int
reads_back(uint64_t D, int k, uint64_t M, int E, int bits)
{
    int below = dec_vs_bin(D, k, 4 * M - (M == (uint64_t)1 << (bits - 1) ? 1 : 2), E - 2);
    int above = dec_vs_bin(D, k, 4 * M + 2, E - 2);
    return (below > 0 || (below == 0 && !(M & 1))) && (above < 0 || (above == 0 && !(M & 1)));
}

/* The closest decimal of p significant digits to the float M x 2^E whose
 * integer part has j + 1 digits, if one reads back: the correctly rounded
 * one, or when that falls outside the (uneven) rounding interval, its
 * neighbour on the value's other side, the only other candidate.  Returns
 * 1 and sets *D, *k; 0 when none does. */
static int
digits_of(uint64_t M, int E, int bits, int j, int p, uint64_t *D, int *k)
{
    int kk = j - p + 1;
    uint64_t d = round_scaled(M, E, -kk);
    if (d == pow10_u64[p]) { /* 9.99 rounded up to 10.0 */
        d = pow10_u64[p - 1];
        kk++;
    }
    if (!reads_back(d, kk, M, E, bits)) {
        if (dec_vs_bin(d, kk, M, E) > 0) {
            if (--d < pow10_u64[p - 1]) { /* 100 - 1: 999 one place lower */
                d = pow10_u64[p] - 1;
                kk--;
            }
        } else if (++d == pow10_u64[p]) { /* 999 + 1: 100 one place higher */
            d = pow10_u64[p - 1];
            kk++;
        }
        if (!reads_back(d, kk, M, E, bits))
            return 0;
    }
    *D = d;
    *k = kk;
    return 1;
}

/* Writes the decimal digits of u (no zeros at the front) to out; returns
 * their count. */
static int
put_digits(uint64_t u, char *out)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/*
 * The text NumPy's dragon4 gives a finite float a (binary32 when f32) with
 * 1e-4 <= |a| < 1e8 or a == 0, positionally, with unique=True, precision=8,
 * min_digits=0, fractional=True, trim='.': its shortest digits that read
 * back as a (the closest to a among them), the integer part in full where
 * they end before the point, and a rounded (exactly, half to even) to 8
 * fraction digits where they have more.  Returns the length written to buf
 * (>= 48 bytes), or -1 with an exception set.
 */
static int
dragon4_text(double v, int f32, char *buf)
{
    double a = fabs(v);
    int len = 0;
    if (signbit(v))
        buf[len++] = '-';
    if (a == 0) {
        memcpy(buf + len, "0.", 3);
        return len + 2;
    }
    int E;
    double frac = frexp(a, &E); /* a = frac x 2^E, 0.5 <= frac < 1 */
    int bits = f32 ? 24 : 53;
    uint64_t M = (uint64_t)ldexp(frac, bits);
    E -= bits;
    /* the shortest digits, as the decimal D x 10^k; j + 1 integer digits:
     * 10^j <= a < 10^(j+1), -4 <= j <= 7 */
    int j = (int)floor(log10(a));
    if (j > -4 && dec_vs_bin(1, j, M, E) > 0)
        j--;
    else if (j < 7 && dec_vs_bin(1, j + 1, M, E) <= 0)
        j++;
    /* the fewest digits: a search, as a decimal of p digits reading back as
     * a means one of p + 1 does too (and 9, or 17, always do).  Most
     * computed values need all the digits or all but one, so it probes one
     * below all, then (if that reads back) two below, then halves: two
     * probes for those, where halving from the middle took three or four */
    int lo = 1, hi = f32 ? 9 : 17, have = 0;
    uint64_t D = 0;
    int k = 0;
    for (int n = 0, mid = hi - 1; lo < hi; n++, mid = n == 1 && have ? hi - 1 : (lo + hi) / 2) {
        uint64_t md;
        int mk;
        if (digits_of(M, E, bits, j, mid, &md, &mk)) {
            hi = mid;
            D = md;
            k = mk;
            have = 1;
        } else {
            lo = mid + 1;
        }
    }
    if (!have && !digits_of(M, E, bits, j, hi, &D, &k)) {
        PyErr_SetString(PyExc_SystemError, "hop: no decimal of 9 (17) digits reads back");
        return -1;
    }
    while (D % 10 == 0) {
        D /= 10;
        k++;
    }
    if (k >= 0) {
        /* the digits end at or before the point: the integer in full */
        len += put_digits((uint64_t)a, buf + len);
        buf[len++] = '.';
    } else if (k < -8) {
        /* more than 8 fraction digits: a rounded to 8 */
        uint64_t r = round_scaled(M, E, 8);
        len += put_digits(r / pow10_u64[8], buf + len);
        buf[len++] = '.';
        uint64_t f = r % pow10_u64[8];
        for (int i = 7; i >= 0; i--, f /= 10)
            buf[len + i] = (char)('0' + f % 10);
        /* the fraction without its zeros at the end */
        int n = 8;
        while (n > 0 && buf[len + n - 1] == '0')
            n--;
        len += n;
    } else {
        char digits[24];
        int n = put_digits(D, digits), point = n + k; /* digits before the point */
        if (point <= 0) {
            memcpy(buf + len, "0.", 2);
            len += 2;
            memset(buf + len, '0', (size_t)-point);
            len += -point;
            memcpy(buf + len, digits, (size_t)n);
            len += n;
        } else {
            memcpy(buf + len, digits, (size_t)point);
            len += point;
            buf[len++] = '.';
            memcpy(buf + len, digits + point, (size_t)(n - point));
            len += n - point;
        }
    }
    buf[len] = '\0';
    return len;
}

static PyObject *
scalar_repr(TensorObject *o)
{
    hop_dtype d = o->t->dtype;
    if (d != HOP_F16 && d != HOP_F32 && d != HOP_F64)
        return NULL;
    if (repr_parts == NULL && repr_parts_load() < 0)
        return NULL;
    if (repr_parts == Py_None)
        return NULL;
    const void *p = o->t->data;
    double v = d == HOP_F16   ? hop_f16_to_float(*(const uint16_t *)p)
               : d == HOP_F32 ? *(const float *)p
                              : *(const double *)p;
    double a = fabs(v);
    if (!isfinite(v) || (v != 0 && (a >= 1.e8 || a < 0.0001)))
        return NULL; /* nan, inf, the exponent form: the Python path */
    PyObject *opts = PyObject_GetAttr(PyTuple_GET_ITEM(repr_parts, 0), str_format_options);
    int dflt = opts != NULL ? options_default(opts, PyTuple_GET_ITEM(repr_parts, 1)) : -1;
    Py_XDECREF(opts);
    if (dflt <= 0)
        return NULL; /* not the defaults: the Python path (or the error) */
    const char *close = d == HOP_F32   ? ")"
                        : d == HOP_F16 ? ", dtype=hop.float16)"
                                       : ", dtype=hop.float64)";
    if (d != HOP_F16) {
        /* NumPy's FloatingFormat makes two dragon4 passes: the first
         * (min_digits=-1) only for the widths it pads the second
         * (min_digits=0) to.  For one value in this range the padding adds
         * nothing: min_digits=0 changes only the integer digits past the
         * unique ones (-67600176 instead of -67600180, the same count), never
         * the fraction's, and the unique rounding cannot carry into one more
         * integer digit (10**k <= 1e8 is a float of its own, outside the
         * value's rounding interval).  So the second pass alone is the text,
         * made here without NumPy (test_tensor.py compares it with NumPy's
         * two passes over random and edge float32/float64 values). */
        char text[96] = "hop.tensor(";
        int n = dragon4_text(v, d == HOP_F32, text + 11);
        if (n < 0)
            return NULL;
        size_t m = strlen(close);
        memcpy(text + 11 + n, close, m);
        /* (ASCII: a copy, where PyUnicode_FromFormat would parse a format) */
        PyObject *res = PyUnicode_New(11 + n + (Py_ssize_t)m, 127);
        if (res != NULL)
            memcpy(PyUnicode_DATA(res), text, 11 + n + m);
        return res;
    }
    /* float16: NumPy's dragon4 itself, on the value as NumPy's float16 */
    PyObject *d4 = PyTuple_GET_ITEM(repr_parts, 2);
    PyObject *x = NULL, *second = NULL, *res = NULL;
    if ((x = hop_py__np_element(o->t)) == NULL)
        return NULL; /* (NumPy's C API unusable, no exception: the Python path) */
    PyObject *a2[7] = {x, repr_eight, repr_zero, Py_True, Py_True, repr_point, Py_False};
    second = PyObject_Vectorcall(d4, a2, 1, repr_kw2);
    if (second != NULL)
        res = PyUnicode_FromFormat("hop.tensor(%U%s", second, close);
    Py_XDECREF(second);
    Py_XDECREF(x);
    return res;
}

PyObject *
hop_py__tensor_repr(PyObject *self)
{
    TensorObject *o = HOP_PY_TENSOR(self);
    if (o->t == NULL) {
        /* hop's own messages and hop.trace show the node; in hop.compile the
         * user's code asking for the text is where the compiled part ends
         * (hop/_breaks.py) */
        char buf[256];
        PyObject *text = o->node == NULL
                             ? PyUnicode_FromString("Tensor(proxy <no value>)")
                             : PyUnicode_FromFormat("Tensor(proxy %s: %s)", o->node->name,
                                                    hop_py__tensor_text(o, buf, sizeof buf));
        return hop_py__user_text("proxy_text", self, text);
    }
    if (o->t->rank == 0 && !hop_py_tracing_active()) {
        PyObject *r = scalar_repr(o);
        if (r != NULL || PyErr_Occurred())
            return r;
    }
    /* The NumPy-like text is made in Python (hop/_tensor_api.py). */
    PyObject *api = PyImport_ImportModule("hop._tensor_api");
    if (api == NULL)
        return NULL;
    PyObject *res = PyObject_CallMethod(api, "tensor_repr", "O", self);
    Py_DECREF(api);
    return res;
}
