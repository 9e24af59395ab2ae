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

/*
 * Whether NumPy's print options are still those options_default last
 * found to be the defaults, without reading them: neither arrayprint's
 * module dict (where _format_options is bound) nor that options dict
 * changed since.  A dict's ma_version_tag (PEP 509) is globally unique and
 * new on every change of that dict, so equal tags of the same two dicts
 * mean the same bindings.  (The tag is CPython 3.11's; later versions
 * deprecate it, and there the options are read and compared each time.)
 */
#if PY_VERSION_HEX < 0x030C0000
static PyObject *repr_seen_opts;                /* the options dict then, or NULL */
static uint64_t repr_seen_mtag, repr_seen_otag; /* the two dicts' tags then */
#endif

static int
options_unchanged(PyObject *mod)
{
#if PY_VERSION_HEX < 0x030C0000
    return repr_seen_opts != NULL && PyModule_CheckExact(mod) &&
           ((PyDictObject *)PyModule_GetDict(mod))->ma_version_tag == repr_seen_mtag &&
           ((PyDictObject *)repr_seen_opts)->ma_version_tag == repr_seen_otag;
#else
    (void)mod;
    return 0;
#endif
}

/* Records that the options opts, read from mod just now, are the defaults. */
static void
options_seen(PyObject *mod, PyObject *opts)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!PyModule_CheckExact(mod) || !PyDict_CheckExact(opts))
        return;
    Py_INCREF(opts);
    Py_XSETREF(repr_seen_opts, opts);
    repr_seen_mtag = ((PyDictObject *)PyModule_GetDict(mod))->ma_version_tag;
    repr_seen_otag = ((PyDictObject *)opts)->ma_version_tag;
#else
    (void)mod;
    (void)opts;
#endif
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
 * finite a > 0 is m2 x 2^e2 with an integer m2 of `bits` bits (24 for
 * binary32, 53 for binary64).  Its shortest digits come from the decimal
 * floors of the value and of the ends of its rounding interval at one
 * scale, then removing digits while a shorter decimal still fits (Ryu's
 * digit loop, Adams 2018), here on exact floors: in the range scalar_repr
 * prints positionally (1e-4 <= a < 1e8) each floor is one 128-bit product
 * and a shift (the bounds are at shortest_digits), where probing a digit
 * count at a time took ~2,300 instructions.
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

/* 5^k, 0 <= k <= 27 */
static const uint64_t pow5_u64[28] = {1u,
                                      5u,
                                      25u,
                                      125u,
                                      625u,
                                      3125u,
                                      15625u,
                                      78125u,
                                      390625u,
                                      1953125u,
                                      9765625u,
                                      48828125u,
                                      244140625u,
                                      1220703125u,
                                      6103515625u,
                                      30517578125u,
                                      152587890625u,
                                      762939453125u,
                                      3814697265625u,
                                      19073486328125u,
                                      95367431640625u,
                                      476837158203125u,
                                      2384185791015625u,
                                      11920928955078125u,
                                      59604644775390625u,
                                      298023223876953125u,
                                      1490116119384765625u,
                                      7450580596923828125u};

/* M x 2^E x 10^s rounded to an integer, half to even (-7 <= s <= 20:
 * M x 5^s < 2^100, the shift E + s < 0 for binary64 and <= 16 for
 * binary32; 5^-s x 2^-(E+s) < 2^91). */
static uint64_t
round_scaled(uint64_t M, int E, int s)
{
    u128 num = M, den = 1;
    if (s >= 0)
        num *= pow5_u64[s];
    else
        den = pow5_u64[-s];
    if (E + s >= 0)
        num <<= E + s;
    else
        den <<= -(E + s);
    u128 q = num / den, r2 = (num % den) * 2;
    if (r2 > den || (r2 == den && (q & 1)))
        q++;
    return (uint64_t)q;
}

/* floor(x x 2^e2 / 10^q) for the scale of shortest_digits, and whether it
 * is exact: x x 2^e2 = x x 5^i / 2^q x 10^q with i = -e2 - q. */
static uint64_t
floor_scaled(uint64_t x, uint64_t five_i, int q, int *exact)
{
    u128 p = (u128)x * five_i;
    *exact = (p & (((u128)1 << q) - 1)) == 0;
    return (uint64_t)(p >> q);
}

/*
 * The shortest decimal D x 10^k that reads back as the float m2 x 2^e2
 * (its rounding interval: ends count when m2 is even, as ties round to
 * even, and the lower half is half as wide when `unequal`, at a power of
 * two), the closest to it among those (exact ties to the even digit): the
 * digits NumPy's dragon4 gives in unique mode.  Range: 2^-14 <= value <
 * 2^27 with m2 < 2^53, so e2 - 2 >= -68.  At the scale 10^q, q one below
 * floor(log10 5^-(e2-2)) (at least 0), the floors need i = -(e2-2) - q <=
 * 22 powers of five: 4 m2 x 5^i < 2^55 x 2^52, and the floors themselves
 * below 100 x 2^55 < 2^64.
 */
static void
shortest_digits(uint64_t m2, int e2, int unequal, uint64_t *D, int *k)
{
    int even = (m2 & 1) == 0;
    uint64_t mv = 4 * m2, mp = mv + 2, mm = mv - (unequal ? 1 : 2);
    uint64_t vr, vp, vm;
    int e10, vr_exact = 1, vp_exact = 1, vm_exact = 1;
    e2 -= 2;
    if (e2 >= 0) { /* binary32 at or above 2^24: integers (below 2^29) */
        vr = mv << e2;
        vp = mp << e2;
        vm = mm << e2;
        e10 = 0;
    } else {
        int q = (int)(((uint32_t)-e2 * 732923u) >> 20) - 1; /* floor(-e2 log10 5) - 1 */
        if (q < 0)
            q = 0;
        uint64_t five_i = pow5_u64[-e2 - q];
        vr = floor_scaled(mv, five_i, q, &vr_exact);
        vp = floor_scaled(mp, five_i, q, &vp_exact);
        vm = floor_scaled(mm, five_i, q, &vm_exact);
        e10 = e2 + q;
    }
    if (!even && vp_exact)
        vp--; /* the upper end reads back as the next float */
    /* vm is a candidate only when it is the lower end exactly and ends
     * count; vr_zeros: the digits removed below `last` are all zeros */
    int vm_zeros = even && vm_exact, vr_zeros = vr_exact, removed = 0;
    unsigned last = 0;
    /* A digit off while a decimal one digit shorter fits, then, when the
     * lower end itself is a candidate, while it ends in 0 (shorter still).
     * Once vp / 10 == vm / 10 it stays so, and vm_zeros no longer changes,
     * so one loop makes both passes. */
    while (vp / 10 > vm / 10 || (vm_zeros && vm % 10 == 0)) {
        vm_zeros &= vm % 10 == 0;
        vr_zeros &= last == 0;
        last = (unsigned)(vr % 10);
        vr /= 10;
        vp /= 10;
        vm /= 10;
        removed++;
    }
    if (vr_zeros && last == 5 && vr % 2 == 0)
        last = 4; /* exactly halfway: to the even digit */
    *D = vr + ((vr == vm && !vm_zeros) || last >= 5);
    *k = e10 + removed;
}

/* Writes the decimal digits of u (no zeros at the front) to out; returns
 * their count.  The count first, then two digits per division from the
 * end, in place (one digit per division into a reversed copy was ~150
 * instructions of a replayed print(x.sum())). */
static int
put_digits(uint64_t u, char *out)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    int n = 1;
    while (n < 18 && u >= pow10_u64[n])
        n++;
    if (n == 18 && u >= pow10_u64[17] * 10) /* (above 10^18: no caller's) */
        n = u >= pow10_u64[17] * 100 ? 20 : 19;
    char *p = out + n;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    return n;
}

/*
 * The text NumPy's dragon4 gives a finite float a (binary32 when f32) with
 * 1e-4 <= |a| < 1e8 or a == 0, positionally, with unique=True, precision=8,
 * min_digits=0, fractional=True, trim='.': its shortest digits that read
 * back as a (the closest to a among them), the integer part in full where
 * they end before the point, and a rounded (exactly, half to even) to 8
 * fraction digits where they have more.  Returns the length written to buf
 * (>= 48 bytes).
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
    /* a = M x 2^E, M of 24 (53) bits: normal in this range */
    uint64_t M;
    int E, unequal;
    if (f32) {
        float x = (float)a;
        uint32_t b;
        memcpy(&b, &x, sizeof b);
        M = (b & 0x7FFFFFu) | 0x800000u;
        E = (int)(b >> 23) - 127 - 23;
        unequal = (b & 0x7FFFFFu) == 0;
    } else {
        uint64_t b;
        memcpy(&b, &a, sizeof b);
        M = (b & 0xFFFFFFFFFFFFFull) | (1ull << 52);
        E = (int)(b >> 52) - 1023 - 52;
        unequal = (b & 0xFFFFFFFFFFFFFull) == 0;
    }
    uint64_t D;
    int k;
    shortest_digits(M, E, unequal, &D, &k);
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
    PyObject *mod = PyTuple_GET_ITEM(repr_parts, 0);
    if (!options_unchanged(mod)) {
        PyObject *opts = PyObject_GetAttr(mod, str_format_options);
        int dflt = opts != NULL ? options_default(opts, PyTuple_GET_ITEM(repr_parts, 1)) : -1;
        if (dflt == 1)
            options_seen(mod, opts);
        Py_XDECREF(opts);
        if (dflt <= 0)
            return NULL; /* not the defaults: the Python path (or the error) */
    }
    static const char f16_close[] = ", dtype=hop.float16)", f64_close[] = ", dtype=hop.float64)";
    const char *close = d == HOP_F32 ? ")" : d == HOP_F16 ? f16_close : f64_close;
    size_t m = d == HOP_F32 ? 1 : sizeof f64_close - 1;
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
        char text[96]; /* (not zeroed: the bytes written are the text) */
        memcpy(text, "hop.tensor(", 11);
        int n = dragon4_text(v, d == HOP_F32, text + 11);
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
