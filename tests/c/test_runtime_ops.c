/*
 * tests/c/test_runtime_ops.c - every op of HOP_OP_LIST against reference
 * values computed here, independently of the kernels: every accepted dtype
 * (and the refused ones), broadcasting, strided/transposed/sliced/expanded
 * inputs, 0-d and empty tensors, Python scalars, and the documented
 * behaviour on data (division by zero, overflow, nan, conversions).
 */
#include "test_runtime_util.h"

#include "runtime/program.h"
#include "runtime/runtime.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static const hop_dtype DTYPES[] = {HOP_BOOL, HOP_I32, HOP_I64, HOP_F32, HOP_F64};

static bool
is_float(hop_dtype d)
{
    return d == HOP_F32 || d == HOP_F64;
}

static hop_dtype
promote(hop_dtype a, hop_dtype b)
{
    return a > b ? a : b;
}

/* The documented conversion of a double to dtype, as a double. */
static double
cvt(double v, hop_dtype dt)
{
    switch (dt) {
    case HOP_BOOL:
        return v != 0;
    case HOP_I32:
        if (isnan(v))
            return 0;
        return v <= INT32_MIN ? INT32_MIN : v >= INT32_MAX ? INT32_MAX : trunc(v);
    case HOP_I64:
        if (isnan(v))
            return 0;
        return v <= -9223372036854775808.0  ? -9223372036854775808.0
               : v >= 9223372036854775808.0 ? 9223372036854775807.0
                                            : trunc(v);
    case HOP_F32:
        return (float)v;
    default:
        return v;
    }
}

/* Sample inputs per dtype: six values, and three for a second operand. */
static const double *
sample_a(hop_dtype dt)
{
    static const double ints[] = {-3, -1, 0, 1, 2, 5};
    static const double floats[] = {-3.5, -1, 0, 1.5, 2, 5};
    static const double bools[] = {1, 0, 1, 1, 0, 1};
    return dt == HOP_BOOL ? bools : is_float(dt) ? floats : ints;
}

static const double *
sample_b(hop_dtype dt)
{
    static const double ints[] = {2, -1, 3};
    static const double floats[] = {2, -0.5, 3};
    static const double bools[] = {1, 0, 1};
    return dt == HOP_BOOL ? bools : is_float(dt) ? floats : ints;
}

/* ----------------------------------------------------------------- unary */

static const hop_op UNARY[] = {HOP_OP_neg,  HOP_OP_abs,  HOP_OP_exp,        HOP_OP_log,
                               HOP_OP_sin,  HOP_OP_cos,  HOP_OP_tanh,       HOP_OP_sigmoid,
                               HOP_OP_relu, HOP_OP_sqrt, HOP_OP_logical_not};

static double
ref_unary(hop_op op, double x)
{
    switch (op) {
    case HOP_OP_neg:
        return -x;
    case HOP_OP_abs:
        return fabs(x);
    case HOP_OP_exp:
        return exp(x);
    case HOP_OP_log:
        return log(x);
    case HOP_OP_sin:
        return sin(x);
    case HOP_OP_cos:
        return cos(x);
    case HOP_OP_tanh:
        return tanh(x);
    case HOP_OP_sigmoid:
        return 1 / (1 + exp(-x));
    case HOP_OP_relu:
        return x > 0 ? x : 0;
    case HOP_OP_sqrt:
        return sqrt(x);
    default: /* logical_not */
        return x == 0;
    }
}

static bool
exact_unary(hop_op op)
{
    return op == HOP_OP_neg || op == HOP_OP_abs || op == HOP_OP_relu || op == HOP_OP_logical_not ||
           op == HOP_OP_sqrt;
}

static hop_dtype
unary_result(hop_op op, hop_dtype dt)
{
    if (op == HOP_OP_logical_not)
        return HOP_BOOL;
    if (op == HOP_OP_neg || op == HOP_OP_abs || op == HOP_OP_relu)
        return dt;
    return is_float(dt) ? dt : HOP_F32;
}

/* x is f(input) for each element i, the input read through elem(). */
static void
check_unary(hop_op op, const hop_tensor *x, const hop_tensor *y)
{
    hop_dtype rd = unary_result(op, x->dtype);
    assert_int_equal(y->dtype, rd);
    int64_t n = hop_tensor_numel(x);
    double want[64];
    assert_true(n <= 64);
    for (int64_t i = 0; i < n; i++)
        want[i] = cvt(ref_unary(op, cvt(elem(x, i), rd == HOP_BOOL ? HOP_F64 : rd)), rd);
    if (exact_unary(op))
        check_values(y, want, n);
    else
        check_close(y, want, n, rd == HOP_F32 ? 4e-7 : 4e-15);
}

static void
test_unary_ops_on_every_dtype(void **state)
{
    (void)state;
    for (size_t o = 0; o < N_(UNARY); o++) {
        for (size_t d = 0; d < N_(DTYPES); d++) {
            hop_op op = UNARY[o];
            hop_tensor *x = make(DTYPES[d], 2, SIZES(2, 3), sample_a(DTYPES[d]));
            hop_rt_arg arg = TA(x);
            if (op == HOP_OP_neg && DTYPES[d] == HOP_BOOL) {
                assert_null(hop_eager_tensor(op, &arg, 1));
                assert_int_equal(hop_error_code(), HOP_DTYPE);
            } else {
                hop_tensor *y = run_op(op, &arg, 1);
                check_meta(y, unary_result(op, DTYPES[d]), 2, SIZES(2, 3));
                check_unary(op, x, y);
                hop_tensor_release(y);
            }
            hop_tensor_release(x);
        }
    }
}

static void
test_unary_ops_on_strided_expanded_and_long_inputs(void **state)
{
    (void)state;
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (i - 5) * 0.75;
    hop_tensor *x = make(HOP_F64, 2, SIZES(3, 4), v);
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *xs = OP(slice, TA(x), IA(1), IA(1), NA(), IA(2)); /* f64[3, 2], stride 2 */
    hop_tensor *xi = make(HOP_I32, 2, SIZES(3, 4), v);
    hop_tensor *xit = OP(transpose, TA(xi), IA(0), IA(1)); /* converted while gathered */
    hop_tensor *col = OP(slice, TA(x), IA(1), IA(0), IA(1), IA(1));
    hop_tensor *ex = OP(expand, TA(col), hop_rt_list((hop_rt_arg[]){IA(3), IA(5)}, 2));
    hop_tensor *inputs[] = {xt, xs, xit, ex};
    for (size_t o = 0; o < N_(UNARY); o++) {
        for (size_t i = 0; i < N_(inputs); i++) {
            hop_rt_arg arg = TA(inputs[i]);
            if (UNARY[o] == HOP_OP_logical_not || hop_tensor_numel(inputs[i]) > 64)
                continue;
            hop_tensor *y = run_op(UNARY[o], &arg, 1);
            assert_true(hop_tensor_is_contiguous(y));
            check_unary(UNARY[o], inputs[i], y);
            hop_tensor_release(y);
        }
    }
    /* long contiguous runs take the vector path, tails included */
    enum { N = 1003 };
    double big[N];
    for (int i = 0; i < N; i++)
        big[i] = (i % 97) * 0.13 - 6;
    for (size_t d = 3; d < 5; d++) {
        hop_tensor *b = make(DTYPES[d], 1, SIZES(N), big);
        for (size_t o = 0; o < N_(UNARY); o++) {
            if (UNARY[o] == HOP_OP_logical_not)
                continue;
            hop_rt_arg arg = TA(b);
            hop_tensor *y = run_op(UNARY[o], &arg, 1);
            for (int64_t i = 0; i < N; i++) {
                double want = cvt(ref_unary(UNARY[o], elem(b, i)), DTYPES[d]);
                double got = elem(y, i), tol = DTYPES[d] == HOP_F32 ? 4e-7 : 4e-15;
                if (isnan(want) ? !isnan(got) : fabs(got - want) > tol * fabs(want) + 1e-37)
                    fail_msg("%s[%lld]: got %.17g want %.17g", hop_op_get(UNARY[o])->name,
                             (long long)i, got, want);
            }
            hop_tensor_release(y);
        }
        hop_tensor_release(b);
    }
    hop_tensor *all[] = {x, xt, xs, xi, xit, col, ex};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ---------------------------------------------------------------- binary */

static const hop_op BINARY[] = {HOP_OP_add, HOP_OP_sub,         HOP_OP_mul,       HOP_OP_div,
                                HOP_OP_pow, HOP_OP_maximum,     HOP_OP_minimum,   HOP_OP_eq,
                                HOP_OP_ne,  HOP_OP_lt,          HOP_OP_le,        HOP_OP_gt,
                                HOP_OP_ge,  HOP_OP_logical_and, HOP_OP_logical_or};

static bool
is_compare(hop_op op)
{
    return op >= HOP_OP_eq && op <= HOP_OP_logical_or;
}

static double
ipow_ref(double x, double y)
{
    if (y < 0)
        return x == 1 ? 1 : x == -1 ? (fmod(-y, 2) == 1 ? -1 : 1) : 0;
    double r = 1;
    for (int k = 0; k < (int)y; k++)
        r *= x;
    return r;
}

/* op on x and y, both already in the dtype the op computes in (cd). */
static double
ref_binary(hop_op op, hop_dtype cd, double x, double y)
{
    switch (op) {
    case HOP_OP_add:
        return cd == HOP_BOOL ? (x || y) : x + y;
    case HOP_OP_sub:
        return x - y;
    case HOP_OP_mul:
        return cd == HOP_BOOL ? (x && y) : x * y;
    case HOP_OP_div:
        return x / y;
    case HOP_OP_pow:
        if (cd == HOP_BOOL)
            return x || !y;
        return is_float(cd) ? pow(x, y) : ipow_ref(x, y);
    case HOP_OP_maximum:
        return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    case HOP_OP_minimum:
        return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
    case HOP_OP_eq:
        return x == y;
    case HOP_OP_ne:
        return x != y;
    case HOP_OP_lt:
        return x < y;
    case HOP_OP_le:
        return x <= y;
    case HOP_OP_gt:
        return x > y;
    case HOP_OP_ge:
        return x >= y;
    case HOP_OP_logical_and:
        return x != 0 && y != 0;
    default:
        return x != 0 || y != 0;
    }
}

/* The dtype the op computes in and its result dtype, for promoted p. */
static void
binary_dtypes(hop_op op, hop_dtype p, hop_dtype *cd, hop_dtype *rd)
{
    *cd = p;
    *rd = p;
    if (op == HOP_OP_div && !is_float(p))
        *cd = *rd = HOP_F32;
    if (is_compare(op))
        *rd = HOP_BOOL;
    if (op == HOP_OP_logical_and || op == HOP_OP_logical_or)
        *cd = HOP_BOOL;
}

/* out[i] = op(a[i], b[i]) with a, b read through elem() (broadcast by the
 * caller's index maps ia/ib). */
static void
check_binary(hop_op op, const hop_tensor *a, const int64_t *ia, double sa, const hop_tensor *b,
             const int64_t *ib, double sb, hop_dtype p, const hop_tensor *y)
{
    hop_dtype cd, rd;
    binary_dtypes(op, p, &cd, &rd);
    assert_int_equal(y->dtype, rd);
    int64_t n = hop_tensor_numel(y);
    for (int64_t i = 0; i < n; i++) {
        double x = cvt(a ? elem(a, ia[i]) : sa, cd), z = cvt(b ? elem(b, ib[i]) : sb, cd);
        double want = cvt(ref_binary(op, cd, x, z), rd), got = elem(y, i);
        bool ok = isnan(want) ? isnan(got) : got == want;
        if (!ok && op == HOP_OP_pow && is_float(cd))
            ok = fabs(got - want) <= (cd == HOP_F32 ? 4e-7 : 4e-15) * fabs(want);
        if (!ok)
            fail_msg("%s %s/%s element %lld: got %.17g want %.17g", hop_op_get(op)->name,
                     a ? hop_dtype_name(a->dtype) : "scalar",
                     b ? hop_dtype_name(b->dtype) : "scalar", (long long)i, got, want);
    }
}

static void
test_binary_ops_on_every_dtype_pair_with_broadcasting(void **state)
{
    (void)state;
    const int64_t ia[] = {0, 1, 2, 3, 4, 5}, ib[] = {0, 1, 2, 0, 1, 2};
    for (size_t o = 0; o < N_(BINARY); o++) {
        for (size_t i = 0; i < N_(DTYPES); i++) {
            for (size_t j = 0; j < N_(DTYPES); j++) {
                hop_op op = BINARY[o];
                hop_tensor *a = make(DTYPES[i], 2, SIZES(2, 3), sample_a(DTYPES[i]));
                hop_tensor *b = make(DTYPES[j], 1, SIZES(3), sample_b(DTYPES[j]));
                hop_rt_arg args[] = {TA(a), TA(b)};
                hop_dtype p = promote(DTYPES[i], DTYPES[j]);
                if (op == HOP_OP_sub && p == HOP_BOOL) {
                    assert_null(hop_eager_tensor(op, args, 2));
                    assert_int_equal(hop_error_code(), HOP_DTYPE);
                    assert_string_equal(hop_error_message(),
                                        "sub: subtraction is not supported for bool operands, got "
                                        "bool[2, 3] and bool[3]");
                } else {
                    hop_tensor *y = run_op(op, args, 2);
                    hop_dtype cd, rd;
                    binary_dtypes(op, p, &cd, &rd);
                    check_meta(y, rd, 2, SIZES(2, 3));
                    check_binary(op, a, ia, 0, b, ib, 0, p, y);
                    hop_tensor_release(y);
                }
                hop_tensor_release(a);
                hop_tensor_release(b);
            }
        }
    }
}

static void
test_binary_ops_with_python_scalars_use_weak_promotion(void **state)
{
    (void)state;
    const int64_t id[] = {0, 1, 2, 3, 4, 5};
    struct {
        hop_dtype dt;
        hop_rt_arg s;
        double sv;
        hop_dtype p;
    } cases[] = {
        {HOP_F32, FA(2.5), 2.5, HOP_F32},  {HOP_I32, IA(2), 2, HOP_I32},
        {HOP_I64, FA(2.5), 2.5, HOP_F32},  {HOP_BOOL, IA(1), 1, HOP_I64},
        {HOP_BOOL, BA(true), 1, HOP_BOOL}, {HOP_I32, FA(0.5), 0.5, HOP_F32},
        {HOP_F64, IA(3), 3, HOP_F64},      {HOP_I32, BA(false), 0, HOP_I32},
    };
    for (size_t c = 0; c < N_(cases); c++) {
        for (size_t o = 0; o < N_(BINARY); o++) {
            hop_op op = BINARY[o];
            if (op == HOP_OP_sub && cases[c].p == HOP_BOOL)
                continue;
            hop_tensor *a = make(cases[c].dt, 2, SIZES(2, 3), sample_a(cases[c].dt));
            /* tensor op scalar, and scalar op tensor */
            hop_tensor *y = run_op(op, (hop_rt_arg[]){TA(a), cases[c].s}, 2);
            check_binary(op, a, id, 0, NULL, NULL, cases[c].sv, cases[c].p, y);
            hop_tensor *z = run_op(op, (hop_rt_arg[]){cases[c].s, TA(a)}, 2);
            check_binary(op, NULL, NULL, cases[c].sv, a, id, 0, cases[c].p, z);
            hop_tensor_release(a);
            hop_tensor_release(y);
            hop_tensor_release(z);
        }
    }
    /* compare in the promoted dtype: 0.1 rounds to f32 like the tensor */
    hop_tensor *f = make(HOP_F32, 1, SIZES(2), (double[]){0.1, 0.2});
    hop_tensor *e = OP(eq, TA(f), FA(0.1));
    CHECK(e, HOP_BOOL, (2), 1, 0);
    EXPECT_FAIL(HOP_INVALID, "add: expected at least one tensor operand, got 2 and 3", add, IA(2),
                IA(3));
    hop_tensor_release(f);
    hop_tensor_release(e);
}

/* Every operand layout the engine distinguishes, against index maps. */
static void
test_binary_broadcasting_over_strided_operands(void **state)
{
    (void)state;
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i * 1.5 - 7;
    hop_tensor *x = make(HOP_F32, 3, SIZES(2, 3, 4), v);
    hop_tensor *xi = make(HOP_I64, 3, SIZES(2, 3, 4), v);
    /* a: f32[2, 4, 3] transposed view; b: i64[4, 1] sliced column */
    hop_tensor *a = OP(transpose, TA(x), IA(1), IA(2));
    hop_tensor *b0 = OP(select, TA(xi), IA(0), IA(1));             /* i64[3, 4] */
    hop_tensor *b1 = OP(transpose, TA(b0), IA(0), IA(1));          /* i64[4, 3] */
    hop_tensor *b = OP(slice, TA(b1), IA(1), IA(2), IA(3), IA(1)); /* i64[4, 1] */
    int64_t ia[24], ib[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) {
                ia[i * 12 + j * 3 + k] = i * 12 + j * 3 + k;
                ib[i * 12 + j * 3 + k] = j;
            }
    for (size_t o = 0; o < N_(BINARY); o++) {
        hop_tensor *y = run_op(BINARY[o], (hop_rt_arg[]){TA(a), TA(b)}, 2);
        check_meta(y, is_compare(BINARY[o]) ? HOP_BOOL : HOP_F32, 3, SIZES(2, 4, 3));
        check_binary(BINARY[o], a, ia, 0, b, ib, 0, HOP_F32, y);
        hop_tensor_release(y);
    }
    /* [2, 1, 3] with [4, 1]: both sides broadcast */
    hop_tensor *c = OP(slice, TA(a), IA(1), IA(0), IA(1), IA(1));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++)
                ia[i * 12 + j * 3 + k] = i * 3 + k;
    hop_tensor *y = OP(mul, TA(c), TA(b));
    check_meta(y, HOP_F32, 3, SIZES(2, 4, 3));
    check_binary(HOP_OP_mul, c, ia, 0, b, ib, 0, HOP_F32, y);
    /* 0-d tensors */
    hop_tensor *s = make(HOP_I32, 0, NULL, (double[]){4});
    hop_tensor *s2 = OP(add, TA(s), TA(s));
    CHECK(s2, HOP_I32, (), 8);
    hop_tensor *s3 = OP(sub, TA(s), TA(b));
    check_meta(s3, HOP_I64, 2, SIZES(4, 1));
    for (int i = 0; i < 4; i++)
        assert_true(elem(s3, i) == 4 - elem(b, i));
    /* empty */
    hop_tensor *em = hop_tensor_empty(HOP_F64, 2, SIZES(0, 4));
    hop_tensor *row = OP(select, TA(b0), IA(0), IA(0)); /* i64[4] */
    hop_tensor *ey2 = OP(add, TA(em), TA(row));
    check_meta(ey2, HOP_F64, 2, SIZES(0, 4));
    hop_tensor *all[] = {x, xi, a, b0, b1, b, c, y, s, s2, s3, em, row, ey2};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_integer_division_by_zero_is_true_division_giving_inf_and_nan(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I32, 1, SIZES(4), (double[]){1, -1, 0, 7});
    hop_tensor *z = make(HOP_I64, 1, SIZES(4), (double[]){0, 0, 0, 0});
    hop_tensor *q = OP(div, TA(a), IA(0));
    CHECK(q, HOP_F32, (4), INFINITY, -INFINITY, NAN, INFINITY);
    hop_tensor *q2 = OP(div, TA(a), TA(z));
    CHECK(q2, HOP_F32, (4), INFINITY, -INFINITY, NAN, INFINITY);
    hop_tensor *q3 = OP(div, TA(a), IA(2));
    CHECK(q3, HOP_F32, (4), 0.5, -0.5, 0, 3.5);
    hop_tensor *all[] = {a, z, q, q2, q3};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_integer_overflow_wraps_around(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I32, 1, SIZES(2), (double[]){INT32_MAX, INT32_MIN});
    hop_tensor *s = OP(add, TA(a), IA(1));
    CHECK(s, HOP_I32, (2), INT32_MIN, INT32_MIN + 1);
    hop_tensor *n = OP(neg, TA(a));
    CHECK(n, HOP_I32, (2), INT32_MIN + 1, INT32_MIN);
    hop_tensor *ab = OP(abs, TA(a));
    CHECK(ab, HOP_I32, (2), INT32_MAX, INT32_MIN);
    hop_tensor *m = OP(mul, TA(a), IA(2));
    CHECK(m, HOP_I32, (2), -2, 0);
    hop_tensor *b = make(HOP_I64, 1, SIZES(2), (double[]){2, 3});
    hop_tensor *p = OP(pow, TA(b), IA(64));
    assert_true(((int64_t *)p->data)[0] == 0);
    assert_true(((int64_t *)p->data)[1] == (int64_t)0x7932278c797ebd01ull); /* 3**64 mod 2**64 */
    hop_tensor *mx = make(HOP_I64, 1, SIZES(2), (double[]){0, 0});
    ((int64_t *)mx->data)[0] = INT64_MAX;
    ((int64_t *)mx->data)[1] = INT64_MAX;
    hop_tensor *sum = OP(sum, TA(mx), NA(), BA(false));
    assert_true(((int64_t *)sum->data)[0] == -2);
    hop_tensor *all[] = {a, s, n, ab, m, b, p, mx, sum};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_integer_pow_with_negative_exponent_follows_pytorch(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_I32, 1, SIZES(6), (double[]){1, -1, -1, 2, 0, -3});
    hop_tensor *e = make(HOP_I32, 1, SIZES(6), (double[]){-1, -1, -2, -1, -3, 3});
    hop_tensor *p = OP(pow, TA(x), TA(e));
    CHECK(p, HOP_I32, (6), 1, -1, 1, 0, 0, -27);
    hop_tensor *q = OP(pow, TA(x), IA(2));
    CHECK(q, HOP_I32, (6), 1, 1, 1, 4, 0, 9);
    hop_tensor *f = make(HOP_F32, 1, SIZES(3), (double[]){-2, 0.5, 3});
    hop_tensor *sq = OP(pow, TA(f), IA(2));
    CHECK(sq, HOP_F32, (3), 4, 0.25, 9);
    hop_tensor *r = OP(pow, FA(2.0), TA(f));
    CHECK(r, HOP_F32, (3), 0.25, sqrtf(2.0f), 8);
    hop_tensor *all[] = {x, e, p, q, f, sq, r};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_nan_propagates_through_maximum_minimum_and_relu(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F64, 1, SIZES(3), (double[]){NAN, 1, -2});
    hop_tensor *b = make(HOP_F64, 1, SIZES(3), (double[]){0, NAN, -3});
    hop_tensor *mx = OP(maximum, TA(a), TA(b));
    CHECK(mx, HOP_F64, (3), NAN, NAN, -2);
    hop_tensor *mn = OP(minimum, TA(a), TA(b));
    CHECK(mn, HOP_F64, (3), NAN, NAN, -3);
    hop_tensor *r = OP(relu, TA(a));
    CHECK(r, HOP_F64, (3), NAN, 1, 0);
    hop_tensor *bo = OP(to, TA(a), DA(HOP_BOOL));
    CHECK(bo, HOP_BOOL, (3), 1, 1, 1);
    hop_tensor *all[] = {a, b, mx, mn, r, bo};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ----------------------------------------------------------------- where */

/* The vector functions the fused tiles call (hop__vfn_where, the compares):
 * the contiguous loops run at the widest vectors the CPU has; their results
 * are the scalar semantics' bits (c ? a : b moves bits: NaN payloads, -0.0,
 * signalling NaNs; a compare is C's on the values), every length around the
 * vector widths (tails), unaligned starts, the result over an operand. */
static const uint64_t VFN_BITS[] = {
    0,
    1,
    0x8000000000000000u,
    0x7fffffffffffffffu,
    0xffffffffffffffffu,
    0x3ff0000000000000u,
    0xbff0000000000000u,
    0x7ff0000000000000u,
    0xfff0000000000000u,
    0x7ff8000000000001u,
    0xfff8dead00000000u,
    0x7ff0000000000123u,
    0x000fffffffffffffu,
    0x80000000ffffffffu,
    0x3f8000007fc00001u,
    0xff80000080000001u,
    0x7f80000000000000u,
    0x807fffff00400000u,
    0x7fc0beef7f800001u,
    0x0000000180000000u,
    0x00000000ffc12345u,
    0x4049000042c80000u,
    0xc049000042c80000u,
    0x0001000000010001u,
};
#define VFN_NB (sizeof VFN_BITS / sizeof VFN_BITS[0])

static void
vfn_fill(unsigned char *p, size_t n, size_t size, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = VFN_BITS[(i * 7 + seed) % VFN_NB], hi = VFN_BITS[(i / 3 + seed) % VFN_NB];
        unsigned char w[16];
        memcpy(w, &lo, 8);
        memcpy(w + 8, &hi, 8);
        /* narrower elements take the top bytes too: float signs and NaNs */
        for (size_t b = 0; b < size; b++)
            p[i * size + b] = size < 8 ? w[8 - size + b] : w[b];
    }
}

static void
test_vector_where_moves_the_bits_of_the_scalar_select(void **state)
{
    (void)state;
    enum { N = 203 };
    static unsigned char c[N + 1], a[16 * (N + 1)], b[16 * (N + 1)], o[16 * (N + 1)],
        want[16 * (N + 1)];
    for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
        hop__vfn fn = hop__vfn_where((hop_dtype)dt);
        assert_non_null(fn);
        size_t sz = hop_dtype_size((hop_dtype)dt);
        for (int64_t n = 0; n <= N; n += n < 70 ? 1 : 133)
            for (int off = 0; off < 2; off++)
                for (int alias = 0; alias < 3; alias++) {
                    for (int64_t i = 0; i < n + 1; i++)
                        c[i] = (unsigned char)((i * 5 + n) % 3 == 0 ? 0 : (i % 7 == 3) ? 2 : 1);
                    vfn_fill(a, (size_t)n + 1, sz, 1);
                    vfn_fill(b, (size_t)n + 1, sz, 5);
                    unsigned char *ca = c + off, *pa = a + off * sz, *pb = b + off * sz;
                    for (int64_t i = 0; i < n; i++)
                        memcpy(want + i * sz, ca[i] ? pa + i * sz : pb + i * sz, sz);
                    unsigned char *out = alias == 0 ? o + off * sz : alias == 1 ? pa : pb;
                    fn(n, out, (const void *[]){ca, pa, pb}, (const int[]){1, 1, 1});
                    if (n > 0)
                        assert_memory_equal(out, want, (size_t)n * sz);
                }
    }
}

#define VFN_CMP_REF(T)                                                                             \
    static hop__bool vfn_cmp_##T(hop_op op, const void *pa, const void *pb)                        \
    {                                                                                              \
        T x, y;                                                                                    \
        memcpy(&x, pa, sizeof x);                                                                  \
        memcpy(&y, pb, sizeof y);                                                                  \
        switch (op) {                                                                              \
        case HOP_OP_eq:                                                                            \
            return x == y;                                                                         \
        case HOP_OP_ne:                                                                            \
            return x != y;                                                                         \
        case HOP_OP_lt:                                                                            \
            return x < y;                                                                          \
        case HOP_OP_le:                                                                            \
            return x <= y;                                                                         \
        case HOP_OP_gt:                                                                            \
            return x > y;                                                                          \
        default:                                                                                   \
            return x >= y;                                                                         \
        }                                                                                          \
    }
VFN_CMP_REF(uint8_t)
VFN_CMP_REF(int8_t)
VFN_CMP_REF(int16_t)
VFN_CMP_REF(uint16_t)
VFN_CMP_REF(int32_t)
VFN_CMP_REF(uint32_t)
VFN_CMP_REF(int64_t)
VFN_CMP_REF(uint64_t)
VFN_CMP_REF(float)
VFN_CMP_REF(double)

static void
test_vector_compares_give_the_scalar_compares_on_nan_zero_inf_denormals(void **state)
{
    (void)state;
    typedef hop__bool (*ref_fn)(hop_op, const void *, const void *);
    static const struct {
        hop_dtype dt;
        ref_fn ref;
    } cases[] = {
        {HOP_BOOL, vfn_cmp_uint8_t}, {HOP_I8, vfn_cmp_int8_t},    {HOP_U8, vfn_cmp_uint8_t},
        {HOP_I16, vfn_cmp_int16_t},  {HOP_U16, vfn_cmp_uint16_t}, {HOP_I32, vfn_cmp_int32_t},
        {HOP_U32, vfn_cmp_uint32_t}, {HOP_I64, vfn_cmp_int64_t},  {HOP_U64, vfn_cmp_uint64_t},
        {HOP_F32, vfn_cmp_float},    {HOP_F64, vfn_cmp_double}};
    static const hop_op ops[] = {HOP_OP_eq, HOP_OP_ne, HOP_OP_lt, HOP_OP_le, HOP_OP_gt, HOP_OP_ge};
    enum { N = VFN_NB * VFN_NB };
    static unsigned char a[8 * (N + 1)], b[8 * (N + 1)];
    static hop__bool o[N + 1], want[N + 1];
    for (size_t k = 0; k < N_(cases); k++) {
        size_t sz = hop_dtype_size(cases[k].dt);
        /* every pair of the patterns: a runs through them slowly, b fast */
        for (size_t i = 0; i < N + 1; i++) {
            uint64_t lo = VFN_BITS[(i / VFN_NB) % VFN_NB], lb = VFN_BITS[i % VFN_NB];
            for (size_t t = 0; t < sz; t++) {
                a[i * sz + t] =
                    sz < 8 ? ((unsigned char *)&lo)[8 - sz + t] : ((unsigned char *)&lo)[t];
                b[i * sz + t] =
                    sz < 8 ? ((unsigned char *)&lb)[8 - sz + t] : ((unsigned char *)&lb)[t];
            }
            if (cases[k].dt == HOP_BOOL) {
                a[i] = a[i] != 0;
                b[i] = b[i] != 0;
            }
        }
        for (size_t q = 0; q < N_(ops); q++) {
            hop__vfn fn = hop__vfn_binary(ops[q], cases[k].dt);
            assert_non_null(fn);
            for (int64_t n = 0; n <= N; n += n < 70 ? 1 : (int64_t)N - 70)
                for (int off = 0; off < 2; off++)
                    for (int form = 0; form < 3; form++) { /* vv, vs, sv */
                        const unsigned char *pa = a + off * sz, *pb = b + off * sz;
                        for (int64_t i = 0; i < n; i++)
                            want[i] = cases[k].ref(ops[q], pa + (form == 2 ? 0 : i) * sz,
                                                   pb + (form == 1 ? 0 : i) * sz);
                        fn(n, o + off, (const void *[]){pa, pb},
                           (const int[]){form != 2, form != 1});
                        if (n > 0)
                            assert_memory_equal(o + off, want, (size_t)n);
                    }
        }
    }
}

static void
test_where_on_every_dtype_with_scalars_and_broadcasting(void **state)
{
    (void)state;
    hop_tensor *c = make(HOP_BOOL, 1, SIZES(3), (double[]){1, 0, 1});
    for (size_t d = 0; d < N_(DTYPES); d++) {
        hop_tensor *a = make(DTYPES[d], 2, SIZES(2, 3), sample_a(DTYPES[d]));
        hop_tensor *b = make(DTYPES[d], 2, SIZES(2, 1), sample_b(DTYPES[d]));
        hop_tensor *y = OP(where, TA(c), TA(a), TA(b));
        check_meta(y, DTYPES[d], 2, SIZES(2, 3));
        const double *va = sample_a(DTYPES[d]), *vb = sample_b(DTYPES[d]);
        for (int i = 0; i < 6; i++) {
            double want = (i % 3 != 1) ? cvt(va[i], DTYPES[d]) : cvt(vb[i / 3], DTYPES[d]);
            assert_true(elem(y, i) == want);
        }
        hop_tensor_release(a);
        hop_tensor_release(b);
        hop_tensor_release(y);
    }
    hop_tensor *s = OP(where, TA(c), FA(1.0), IA(0));
    CHECK(s, HOP_F32, (3), 1, 0, 1);
    hop_tensor *i = make(HOP_I32, 1, SIZES(3), (double[]){4, 5, 6});
    hop_tensor *m = OP(where, TA(c), TA(i), FA(2.5));
    CHECK(m, HOP_F32, (3), 4, 2.5, 6);
    hop_tensor *it = OP(where, TA(c), IA(7), TA(i));
    CHECK(it, HOP_I32, (3), 7, 5, 7);
    hop_tensor *f = make(HOP_F32, 1, SIZES(3), (double[]){1, 2, 3});
    EXPECT_FAIL(HOP_DTYPE, "where: condition must be a bool tensor, got f32[3]", where, TA(f),
                TA(f), TA(f));
    hop_tensor *all[] = {c, s, i, m, it, f};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

/* ------------------------------------------------------------ reductions */

/* Reference reduction of x (C order, sizes[rank]) over mask. */
static void
ref_reduce(hop_op op, const hop_tensor *x, const bool *mask, double *out, int64_t *nout)
{
    int64_t n = hop_tensor_numel(x), kept = 1, red = 1;
    for (int d = 0; d < x->rank; d++) {
        if (mask[d])
            red *= x->sizes[d];
        else
            kept *= x->sizes[d];
    }
    *nout = kept;
    for (int64_t o = 0; o < kept; o++) {
        double acc = op == HOP_OP_sum || op == HOP_OP_mean ? 0 : NAN;
        int64_t best = -1, r = 0;
        for (int64_t i = 0; i < n; i++) {
            /* the output index of element i and its index in the reduced space */
            int64_t rest = i, oi = 0, ri = 0, om = 1, rm = 1;
            for (int d = x->rank - 1; d >= 0; d--) {
                int64_t k = rest % x->sizes[d];
                rest /= x->sizes[d];
                if (mask[d]) {
                    ri += k * rm;
                    rm *= x->sizes[d];
                } else {
                    oi += k * om;
                    om *= x->sizes[d];
                }
            }
            if (oi != o)
                continue;
            double v = elem(x, i);
            r++;
            if (op == HOP_OP_sum || op == HOP_OP_mean) {
                acc += v;
                continue;
            }
            if (best >= 0 && isnan(acc))
                continue; /* the first nan wins */
            bool low = op == HOP_OP_amin || op == HOP_OP_argmin;
            if (best < 0 || isnan(v) || (low ? v < acc : v > acc)) {
                acc = v;
                best = ri;
            }
        }
        out[o] = op == HOP_OP_mean                            ? acc / (double)r
                 : op == HOP_OP_argmax || op == HOP_OP_argmin ? (double)best
                                                              : acc;
    }
}

static void
check_reduce(hop_op op, hop_tensor *x, hop_rt_arg dims, bool keepdim, const bool *mask)
{
    hop_tensor *y = run_op(op, (hop_rt_arg[]){TA(x), dims, BA(keepdim)}, 3);
    double want[64];
    int64_t n;
    ref_reduce(op, x, mask, want, &n);
    hop_dtype rd = op == HOP_OP_argmax || op == HOP_OP_argmin ? HOP_I64
                   : op == HOP_OP_sum && !is_float(x->dtype)  ? HOP_I64
                                                              : x->dtype;
    assert_int_equal(y->dtype, rd);
    int rank = 0;
    for (int d = 0; d < x->rank; d++)
        rank += !mask[d] || keepdim;
    assert_int_equal(y->rank, rank);
    for (int64_t i = 0; i < n; i++)
        want[i] = cvt(want[i], rd);
    if (op == HOP_OP_mean)
        check_close(y, want, n, rd == HOP_F32 ? 2e-7 : 1e-15);
    else
        check_values(y, want, n);
    hop_tensor_release(y);
}

static void
test_reductions_over_every_dtype_dims_and_keepdim(void **state)
{
    (void)state;
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = (i * 7) % 11 - 4.5 * (i % 2);
    const hop_op ops[] = {HOP_OP_sum, HOP_OP_mean, HOP_OP_amax, HOP_OP_amin};
    for (size_t d = 0; d < N_(DTYPES); d++) {
        hop_tensor *x3 = make(DTYPES[d], 3, SIZES(2, 3, 4), v);
        hop_tensor *xt = OP(permute, TA(x3), hop_rt_list((hop_rt_arg[]){IA(2), IA(0), IA(1)}, 3));
        hop_tensor *xs[] = {x3, xt};
        for (size_t k = 0; k < 2; k++) {
            hop_tensor *x = xs[k];
            for (size_t o = 0; o < N_(ops); o++) {
                if (ops[o] == HOP_OP_mean && !is_float(DTYPES[d]))
                    continue;
                for (int keep = 0; keep < 2; keep++) {
                    check_reduce(ops[o], x, NA(), keep, (bool[]){1, 1, 1});
                    check_reduce(ops[o], x, IA(1), keep, (bool[]){0, 1, 0});
                    check_reduce(ops[o], x, IA(-1), keep, (bool[]){0, 0, 1});
                    check_reduce(ops[o], x, hop_rt_list((hop_rt_arg[]){IA(0), IA(2)}, 2), keep,
                                 (bool[]){1, 0, 1});
                    check_reduce(ops[o], x, hop_rt_list(NULL, 0), keep, (bool[]){1, 1, 1});
                }
            }
            if (DTYPES[d] != HOP_BOOL) {
                for (int keep = 0; keep < 2; keep++) {
                    check_reduce(HOP_OP_argmax, x, NA(), keep, (bool[]){1, 1, 1});
                    check_reduce(HOP_OP_argmax, x, IA(0), keep, (bool[]){1, 0, 0});
                    check_reduce(HOP_OP_argmax, x, IA(2), keep, (bool[]){0, 0, 1});
                }
            }
        }
        hop_tensor_release(x3);
        hop_tensor_release(xt);
    }
}

/* Float rows long enough for the eight-lane loops of the one-run path,
 * with nans in the lanes and in the tail, along and across rows. */
static void
test_float_reductions_over_long_rows_with_nans(void **state)
{
    (void)state;
    enum { R = 5, C = 37 };
    double v[R * C];
    for (int i = 0; i < R * C; i++)
        v[i] = (double)((i * 37) % 101) - 50.25;
    v[2 * C + 20] = NAN; /* in the lanes */
    v[4 * C + 35] = NAN; /* in the tail */
    v[1 * C + 9] = 1000; /* a maximum in the lanes */
    v[3 * C + 36] = -1000;
    const hop_op ops[] = {HOP_OP_sum,  HOP_OP_mean,   HOP_OP_amax,
                          HOP_OP_amin, HOP_OP_argmax, HOP_OP_argmin};
    const hop_dtype dts[] = {HOP_F32, HOP_F64};
    for (size_t d = 0; d < N_(dts); d++) {
        hop_tensor *x = make(dts[d], 2, SIZES(R, C), v);
        hop_tensor *xt = OP(permute, TA(x), hop_rt_list((hop_rt_arg[]){IA(1), IA(0)}, 2));
        for (size_t o = 0; o < N_(ops); o++) {
            check_reduce(ops[o], x, IA(1), false, (bool[]){0, 1});
            check_reduce(ops[o], x, IA(0), true, (bool[]){1, 0});
            check_reduce(ops[o], xt, IA(0), false, (bool[]){1, 0});
            check_reduce(ops[o], xt, NA(), false, (bool[]){1, 1});
        }
        hop_tensor_release(x);
        hop_tensor_release(xt);
    }
}

/* Float sums add in NumPy 1.24's order (runtime/pairwise.h), which float32
 * rounding shows: 2^24 and fifteen ones sum to 16777230 along a row of 16
 * (NumPy's pairwise loop: eight accumulators, combined in pairs) and to
 * 16777216 down a column (a kept dim innermost: one element at a time,
 * each 1 lost to rounding), by the AVX rows and the portable loops alike;
 * accumulated in double both were 16777232.  A mean divides the float
 * sum. */
static void
test_float_sums_add_in_numpys_pairwise_order(void **state)
{
    (void)state;
    double v[32] = {16777216.0};
    for (int i = 1; i < 16; i++)
        v[i] = 1;
    double col[32] = {0};
    for (int i = 0; i < 16; i++)
        col[2 * i] = v[i];
    hop_tensor *x = make(HOP_F32, 2, SIZES(1, 16), v);
    hop_tensor *xc = make(HOP_F32, 2, SIZES(16, 2), col);
    for (int simd = 0; simd < 2; simd++) {
        hop__reduce_set_simd(simd);
        hop_tensor *y = run_op(HOP_OP_sum, (hop_rt_arg[]){TA(x), IA(1), BA(false)}, 3);
        check_values(y, (double[]){16777230.0}, 1);
        hop_tensor_release(y);
        y = run_op(HOP_OP_mean, (hop_rt_arg[]){TA(x), IA(1), BA(false)}, 3);
        check_values(y, (double[]){(float)(16777230.0 / 16)}, 1);
        hop_tensor_release(y);
        y = run_op(HOP_OP_sum, (hop_rt_arg[]){TA(xc), IA(0), BA(false)}, 3);
        check_values(y, (double[]){16777216.0, 0.0}, 2);
        hop_tensor_release(y);
        y = run_op(HOP_OP_sum, (hop_rt_arg[]){TA(xc), NA(), BA(false)}, 3);
        check_values(y, (double[]){16777228.0}, 1); /* one run of 32, pairwise */
        hop_tensor_release(y);
    }
    hop__reduce_set_simd(true);
    hop_tensor_release(x);
    hop_tensor_release(xc);
}

/* The AVX rows of the one-run path (runtime/reduce_avx2.c) give the bits
 * of the portable loops: sums in the same lanes and order, amax/amin the
 * same signed zero among equal zeros and the row's first nan, for every
 * row length around the 4- and 8-lane boundaries, 1 to 9 rows (four at a
 * time and the rest), contiguous and padded rows. */
static double
lcg_value(uint64_t *st, int special)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = *st >> 33;
    switch (special ? r % 16 : 15) {
    case 0:
        return 0.0;
    case 1:
        return -0.0;
    case 2:
        return r % 64 == 2 ? NAN : 0.0;
    case 3:
        return r % 32 == 3 ? (r & 64 ? INFINITY : -INFINITY) : -0.0;
    default:
        return ldexp((double)(r % 2000003) - 1000001.0, (int)(r / 2000003 % 200) - 100);
    }
}

/* Equal bits, but any nan for a nan: which nan a sum of nans and infinities
 * gives (its sign) depends on the order of an add's operands, which C lets
 * the compiler swap. */
static bool
same_bits(const hop_tensor *a, const hop_tensor *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double x = a->dtype == HOP_F32 ? ((const float *)a->data)[i] : ((const double *)a->data)[i];
        double y = b->dtype == HOP_F32 ? ((const float *)b->data)[i] : ((const double *)b->data)[i];
        if (x != x && y != y)
            continue;
        size_t sz = hop_dtype_size(a->dtype);
        if (memcmp((const char *)a->data + i * (int64_t)sz, (const char *)b->data + i * (int64_t)sz,
                   sz) != 0)
            return false;
    }
    return true;
}

static void
test_simd_row_reductions_give_the_bits_of_the_portable_loops(void **state)
{
    (void)state;
    const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 40, 64, 67};
    const hop_op ops[] = {HOP_OP_sum, HOP_OP_mean, HOP_OP_amax, HOP_OP_amin};
    const hop_dtype dts[] = {HOP_F32, HOP_F64};
    enum { ROWS = 9, PAD = 3 };
    uint64_t st = 17;
    double v[ROWS * (67 + PAD)];
    int compared = 0;
    for (int special = 0; special < 3; special++)
        for (size_t l = 0; l < N_(lens); l++) {
            int64_t n = lens[l];
            for (int i = 0; i < ROWS * (n + PAD); i++)
                v[i] = special == 2 ? (lcg_value(&st, 1) != 0 ? -0.0 : 0.0) /* all zeros */
                                    : lcg_value(&st, special);
            for (size_t d = 0; d < N_(dts); d++) {
                hop_tensor *x = make(dts[d], 2, SIZES(ROWS, n + PAD), v);
                hop_tensor *xp = OP(slice, TA(x), IA(1), IA(0), IA(n), IA(1));
                hop_tensor *xc = OP(clone, TA(xp));
                hop_tensor *rows[] = {xp, xc};
                for (size_t k = 0; k < N_(rows); k++)
                    for (int64_t nr = 1; nr <= ROWS; nr++) {
                        hop_tensor *xr = OP(slice, TA(rows[k]), IA(0), IA(0), IA(nr), IA(1));
                        for (size_t o = 0; o < N_(ops); o++) {
                            hop_rt_arg a[] = {TA(xr), IA(1), BA(false)};
                            hop__reduce_set_simd(false);
                            hop_tensor *want = run_op(ops[o], a, 3);
                            hop__reduce_set_simd(true);
                            hop_tensor *got = run_op(ops[o], a, 3);
                            if (!same_bits(got, want, nr))
                                fail_msg("%s of %s rows of %" PRId64 " x %" PRId64
                                         " (%s, data %d) differs from the portable loop",
                                         hop_op_get(ops[o])->name, k ? "contiguous" : "padded", nr,
                                         n, hop_dtype_name(dts[d]), special);
                            compared++;
                            hop_tensor_release(want);
                            hop_tensor_release(got);
                        }
                        hop_tensor_release(xr);
                    }
                hop_tensor_release(x);
                hop_tensor_release(xp);
                hop_tensor_release(xc);
            }
        }
    assert_int_equal(compared, 3 * N_(lens) * 2 * 2 * ROWS * 4);
}

/* Rows longer than a leaf (128 elements) are summed by reduce_avx2.c's
 * leaves four at a time and its tree over their sums: the portable
 * recursion's bits at lengths around the splits and NumPy's chunks of 8192,
 * one row and five (four at once and one), contiguous and padded; sums down
 * the rows (a kept dim innermost) in reduce_avx2.c's registers.  A full
 * sum or mean of such a run shares its chunks over the pool: two threads
 * give one thread's bits. */
static void
test_long_row_sums_give_the_bits_of_the_portable_loops_on_any_thread_count(void **state)
{
    (void)state;
    const int64_t lens[] = {129,  136,  255,  256,   1000,  1024,         4096,
                            8191, 8192, 8200, 16384, 20000, 3 * 8192 + 5, 40 * 8192 + 3};
    const hop_op ops[] = {HOP_OP_sum, HOP_OP_mean};
    const hop_dtype dts[] = {HOP_F32, HOP_F64};
    enum { PAD = 3 };
    uint64_t st = 29;
    int threads = hop_runtime_threads(), compared = 0;
    for (int special = 0; special < 2; special++)
        for (size_t l = 0; l < N_(lens); l++) {
            int64_t n = lens[l], rows = n > 30000 ? 1 : 5;
            double *v = malloc((size_t)(rows * (n + PAD)) * sizeof *v);
            assert_non_null(v);
            for (int64_t i = 0; i < rows * (n + PAD); i++)
                v[i] = lcg_value(&st, special);
            for (size_t d = 0; d < N_(dts); d++) {
                hop_tensor *x = make(dts[d], 2, SIZES(rows, n + PAD), v);
                hop_tensor *xp = OP(slice, TA(x), IA(1), IA(0), IA(n), IA(1));
                hop_tensor *xc = OP(clone, TA(xp));
                hop_tensor *row = OP(slice, TA(xc), IA(0), IA(0), IA(1), IA(1));
                for (size_t o = 0; o < N_(ops); o++) {
                    hop_rt_arg a[] = {TA(xp), IA(1), BA(false)}, c[] = {TA(xc), IA(1), BA(false)};
                    hop_rt_arg full[] = {TA(row), NA(), BA(false)},
                               down[] = {TA(xp), IA(0), BA(false)};
                    hop__reduce_set_simd(false);
                    hop_tensor *want = run_op(ops[o], a, 3);
                    hop_tensor *want1 = run_op(ops[o], full, 3), *wantd = run_op(ops[o], down, 3);
                    hop__reduce_set_simd(true);
                    hop_tensor *got = run_op(ops[o], a, 3), *gotc = run_op(ops[o], c, 3);
                    hop_tensor *gotd = run_op(ops[o], down, 3);
                    hop_runtime_set_threads(2);
                    hop_tensor *got2 = run_op(ops[o], full, 3);
                    hop_runtime_set_threads(threads);
                    if (!same_bits(got, want, rows) || !same_bits(gotc, want, rows) ||
                        !same_bits(got2, want1, 1) || !same_bits(gotd, wantd, n))
                        fail_msg("%s of %" PRId64 " x %" PRId64 " (%s, data %d) differs from "
                                 "the portable loop",
                                 hop_op_get(ops[o])->name, rows, n, hop_dtype_name(dts[d]),
                                 special);
                    compared++;
                    hop_tensor *ts[] = {want, want1, wantd, got, gotc, got2, gotd};
                    for (size_t t = 0; t < N_(ts); t++)
                        hop_tensor_release(ts[t]);
                }
                hop_tensor_release(row);
                hop_tensor_release(x);
                hop_tensor_release(xp);
                hop_tensor_release(xc);
            }
            free(v);
        }
    assert_int_equal(compared, 2 * N_(lens) * 2 * 2);
}

static void
test_reductions_of_empty_zero_dim_and_nan_inputs(void **state)
{
    (void)state;
    hop_tensor *e = hop_tensor_empty(HOP_F32, 2, SIZES(0, 3));
    hop_tensor *s = OP(sum, TA(e), IA(0), BA(false));
    CHECK(s, HOP_F32, (3), 0, 0, 0);
    hop_tensor *m = OP(mean, TA(e), IA(0), BA(true));
    CHECK(m, HOP_F32, (1, 3), NAN, NAN, NAN);
    hop_tensor *s1 = OP(sum, TA(e), IA(1), BA(false));
    check_meta(s1, HOP_F32, 1, SIZES(0));
    EXPECT_FAIL(
        HOP_SHAPE,
        "amax: cannot reduce over dim 0 of size 0 in f32[0, 3] (zero-size array to reduction "
        "operation maximum which has no identity)",
        amax, TA(e), IA(0), BA(false));
    hop_tensor *z = make(HOP_I32, 0, NULL, (double[]){-7});
    hop_tensor *zs = OP(sum, TA(z), NA(), BA(false));
    CHECK(zs, HOP_I64, (), -7);
    hop_tensor *zm = OP(amax, TA(z), IA(0), BA(true));
    CHECK(zm, HOP_I32, (), -7);
    hop_tensor *za = OP(argmax, TA(z), NA(), BA(false));
    CHECK(za, HOP_I64, (), 0);
    hop_tensor *n = make(HOP_F64, 2, SIZES(2, 3), (double[]){1, NAN, 5, 7, 2, NAN});
    hop_tensor *nm = OP(amax, TA(n), IA(1), BA(false));
    CHECK(nm, HOP_F64, (2), NAN, NAN);
    hop_tensor *na = OP(argmax, TA(n), IA(1), BA(false));
    CHECK(na, HOP_I64, (2), 1, 2);
    hop_tensor *nf = OP(argmax, TA(n), NA(), BA(true));
    CHECK(nf, HOP_I64, (1, 1), 1);
    hop_tensor *n0 = OP(amin, TA(n), IA(0), BA(false));
    CHECK(n0, HOP_F64, (3), 1, NAN, NAN);
    hop_tensor *tie = make(HOP_I64, 1, SIZES(4), (double[]){3, 9, 9, 1});
    hop_tensor *ta = OP(argmax, TA(tie), IA(0), BA(false));
    CHECK(ta, HOP_I64, (), 1);
    hop_tensor *bo = make(HOP_BOOL, 1, SIZES(3), (double[]){1, 0, 1});
    hop_tensor *bs = OP(sum, TA(bo), NA(), BA(false));
    CHECK(bs, HOP_I64, (), 2);
    EXPECT_FAIL(HOP_DTYPE, "argmax: bool tensors are not supported, got bool[3]", argmax, TA(bo),
                NA(), BA(false));
    hop_tensor *all[] = {e, s, m, s1, z, zs, zm, za, n, nm, na, nf, n0, tie, ta, bo, bs};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ---------------------------------------------------------------- matmul */

/* Reference matmul over elem(): 2-D views (m x k) and (k x n) given as
 * element index functions of the operands' C order. */
static void
check_matmul(hop_tensor *a, hop_tensor *b, const int64_t *want_shape, int want_rank)
{
    hop_tensor *y = run_op(HOP_OP_matmul, (hop_rt_arg[]){TA(a), TA(b)}, 2);
    check_meta(y, a->dtype, want_rank, want_shape);
    int ar = a->rank, br = b->rank;
    int64_t n = ar >= 2 ? a->sizes[ar - 2] : 1, k = a->sizes[ar - 1];
    int64_t m = br >= 2 ? b->sizes[br - 1] : 1;
    int64_t nout = hop_tensor_numel(y), batch = n * m == 0 ? 0 : nout / (n * m);
    int abatch = ar > 2 ? ar - 2 : 0, bbatch = br > 2 ? br - 2 : 0;
    int nb = want_rank - (ar >= 2) - (br >= 2);
    for (int64_t bi = 0; bi < batch; bi++) {
        /* batch index -> offsets of a and b (broadcast) in their C order */
        int64_t aoff = 0, boff = 0, rest = bi, am = n * k, bm = k * m;
        for (int j = nb - 1; j >= 0; j--) {
            int64_t i = rest % want_shape[j];
            rest /= want_shape[j];
            int ad = j - (nb - abatch), bd = j - (nb - bbatch);
            if (ad >= 0) {
                aoff += (a->sizes[ad] == 1 ? 0 : i) * am;
                am *= a->sizes[ad];
            }
            if (bd >= 0) {
                boff += (b->sizes[bd] == 1 ? 0 : i) * bm;
                bm *= b->sizes[bd];
            }
        }
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < m; c++) {
                double acc = 0;
                for (int64_t p = 0; p < k; p++)
                    acc += elem(a, aoff + r * k + p) * elem(b, boff + p * m + c);
                double got = elem(y, bi * n * m + r * m + c);
                if (got != cvt(acc, y->dtype))
                    fail_msg("matmul[%lld][%lld][%lld]: got %.17g want %.17g", (long long)bi,
                             (long long)r, (long long)c, got, acc);
            }
    }
    hop_tensor_release(y);
}

static void
test_matmul_shapes_dtypes_and_layouts(void **state)
{
    (void)state;
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (i * 5) % 13 - 6;
    const hop_dtype dts[] = {HOP_I32, HOP_I64, HOP_F32, HOP_F64};
    for (size_t d = 0; d < N_(dts); d++) {
        hop_dtype dt = dts[d];
        hop_tensor *a = make(dt, 2, SIZES(2, 3), v);
        hop_tensor *b = make(dt, 2, SIZES(3, 4), v + 6);
        hop_tensor *vec = make(dt, 1, SIZES(3), v + 20);
        hop_tensor *vec2 = make(dt, 1, SIZES(2), v + 30);
        hop_tensor *a3 = make(dt, 3, SIZES(2, 2, 3), v + 1);
        hop_tensor *a4 = make(dt, 4, SIZES(2, 1, 2, 3), v + 2);
        hop_tensor *b3 = make(dt, 3, SIZES(3, 3, 2), v + 3);
        check_matmul(a, b, SIZES(2, 4), 2);
        check_matmul(vec2, a, SIZES(3), 1);
        check_matmul(a, vec, SIZES(2), 1);
        check_matmul(vec, vec, NULL, 0);
        check_matmul(a3, b, SIZES(2, 2, 4), 3);
        check_matmul(a4, b3, SIZES(2, 3, 2, 2), 4);
        check_matmul(vec, b3, SIZES(3, 2), 2);
        /* transposed operands (BLAS's Trans), and ones BLAS cannot read */
        hop_tensor *at = OP(transpose, TA(b), IA(0), IA(1)); /* [4, 3] */
        hop_tensor *bt = OP(transpose, TA(a), IA(0), IA(1)); /* [3, 2] */
        check_matmul(at, bt, SIZES(4, 2), 2);
        hop_tensor *big = make(dt, 2, SIZES(6, 8), v);
        hop_tensor *s1 = OP(slice, TA(big), IA(1), IA(0), NA(), IA(2)); /* [6, 4] stride 2 */
        hop_tensor *s2 = OP(slice, TA(s1), IA(0), IA(0), NA(), IA(2));  /* [3, 4] strides 16, 2 */
        hop_tensor *s2t = OP(transpose, TA(s2), IA(0), IA(1));
        check_matmul(s2t, s2, SIZES(4, 4), 2);
        hop_tensor *out = hop_tensor_zeros(dt, 2, SIZES(4, 4));
        hop_tensor *outt = OP(transpose, TA(out), IA(0), IA(1));
        hop_tensor *ref = OP(matmul, TA(s2t), TA(s2));
        assert_int_equal(hop_eager_out(HOP_OP_matmul, (hop_rt_arg[]){TA(s2t), TA(s2)}, 2, outt),
                         HOP_OK); /* the plain loop, strided everywhere */
        for (int64_t i = 0; i < 16; i++)
            assert_true(elem(outt, i) == elem(ref, i));
        /* k = 0 gives zeros, n = 0 gives nothing */
        hop_tensor *k0a = hop_tensor_empty(dt, 2, SIZES(2, 0));
        hop_tensor *k0b = hop_tensor_empty(dt, 2, SIZES(0, 3));
        hop_tensor *k0 = OP(matmul, TA(k0a), TA(k0b));
        CHECK(k0, dt, (2, 3), 0, 0, 0, 0, 0, 0);
        hop_tensor *n0 = OP(matmul, TA(k0b), TA(b));
        check_meta(n0, dt, 2, SIZES(0, 4));
        /* a dot product (and a batch of one) with k = 0 is a sum of nothing: 0 */
        hop_tensor *d0a = hop_tensor_empty(dt, 3, SIZES(1, 1, 0));
        hop_tensor *d0b = hop_tensor_empty(dt, 3, SIZES(1, 0, 1));
        hop_tensor *d0 = OP(matmul, TA(d0a), TA(d0b));
        CHECK(d0, dt, (1, 1, 1), 0);
        hop_tensor *all[] = {a,   b,   vec,  vec2, a3,  a4,  b3, at, bt,  big, s1, s2,
                             s2t, out, outt, ref,  k0a, k0b, k0, n0, d0a, d0b, d0};
        for (size_t i = 0; i < N_(all); i++)
            hop_tensor_release(all[i]);
    }
    hop_tensor *f = hop_tensor_zeros(HOP_F32, 2, SIZES(2, 2));
    hop_tensor *g = hop_tensor_zeros(HOP_F64, 2, SIZES(2, 2));
    EXPECT_FAIL(HOP_DTYPE, "matmul: dtypes differ, got f32[2, 2] and f64[2, 2]", matmul, TA(f),
                TA(g));
    hop_tensor_release(f);
    hop_tensor_release(g);
}

/* What runtime/matmul.c's gemv_t computes for one output: `chains` FMA
 * chains from +0 over the rows p = c mod chains in order, added pairwise,
 * in the operands' dtype. */
static double
gemv_t_want(hop_dtype dt, int chains, const hop_tensor *v, const hop_tensor *x, int64_t k,
            int64_t n, int64_t j)
{
    double s[4] = {0, 0, 0, 0};
    for (int64_t p = 0; p < k; p++) {
        double a = elem(v, p), b = elem(x, p * n + j);
        s[p % chains] = dt == HOP_F32 ? fmaf((float)a, (float)b, (float)s[p % chains])
                                      : fma(a, b, s[p % chains]);
    }
    if (dt == HOP_F32)
        return chains == 4   ? ((float)s[0] + (float)s[1]) + ((float)s[2] + (float)s[3])
               : chains == 2 ? (float)s[0] + (float)s[1]
                             : s[0];
    return chains == 4 ? (s[0] + s[1]) + (s[2] + s[3]) : chains == 2 ? s[0] + s[1] : s[0];
}

static void
test_matmul_read_transposed_gives_the_chains_bits(void **state)
{
    /* v @ X and X^T @ v (X k x n, row-major) read X transposed: each output
     * is 4 chains of FMAs for n up to two AVX2 vectors, 2 up to four, else
     * 1 (one chain waited on the FMA's latency when n is small: x.T @ v of
     * a 65536 x 16 X took 1.8x NumPy's time).  The AVX2 kernels (registers
     * up to eight vectors, else a sweep of rows) and the portable loop give
     * these bits exactly, for every width and every k mod 4. */
    (void)state;
    static double vals[200 * 41];
    for (int i = 0; i < 200 * 41; i++)
        vals[i] = (double)((i * 7919) % 2003) / 1001.0 - 1.0 + 1.0 / (3.0 + i % 7);
    const int64_t widths[] = {2, 3, 4, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64, 65, 70, 200};
    const int64_t ks[] = {0, 1, 2, 3, 4, 5, 6, 7, 41};
    const hop_dtype dts[] = {HOP_F32, HOP_F64};
    for (size_t d = 0; d < N_(dts); d++)
        for (size_t wi = 0; wi < N_(widths); wi++)
            for (size_t ki = 0; ki < N_(ks); ki++) {
                hop_dtype dt = dts[d];
                int64_t n = widths[wi], k = ks[ki], lanes = dt == HOP_F32 ? 8 : 4;
                int chains = n <= 2 * lanes ? 4 : n <= 4 * lanes ? 2 : 1;
                hop_tensor *x = make(dt, 2, SIZES(k, n), vals);
                hop_tensor *v = make(dt, 1, SIZES(k), vals + 7);
                hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
                hop_tensor *y1 = OP(matmul, TA(v), TA(x));
                hop_tensor *y2 = OP(matmul, TA(xt), TA(v));
                /* a small f32 v @ X is matmul_small.c's tile, one chain per output */
                bool tile =
                    dt == HOP_F32 && n >= HOP__SMALL_MATMUL_MIN_M && n * k <= HOP__SMALL_MATMUL;
                for (int64_t j = 0; j < n; j++) {
                    double want = gemv_t_want(dt, chains, v, x, k, n, j);
                    if ((!tile && elem(y1, j) != want) || elem(y2, j) != want)
                        fail_msg("%s n=%lld k=%lld [%lld]: v @ X %.17g, X.T @ v %.17g, want %.17g",
                                 hop_dtype_name(dt), (long long)n, (long long)k, (long long)j,
                                 elem(y1, j), elem(y2, j), want);
                }
                hop_tensor *all[] = {x, v, xt, y1, y2};
                for (size_t i = 0; i < N_(all); i++)
                    hop_tensor_release(all[i]);
            }
}

/* ------------------------------------------------------------- cat, stack */

static void
test_cat_and_stack_promote_and_accept_strided_inputs(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F32, 2, SIZES(2, 2), (double[]){1, 2, 3, 4});
    hop_tensor *b = make(HOP_I32, 2, SIZES(1, 2), (double[]){5, 6});
    hop_tensor *at = OP(transpose, TA(a), IA(0), IA(1));
    hop_tensor *e = hop_tensor_empty(HOP_F32, 2, SIZES(0, 2));
    hop_rt_arg l1[] = {TA(a), TA(b), TA(e), TA(at)};
    hop_tensor *c0 = OP(cat, hop_rt_list(l1, 4), IA(0));
    CHECK(c0, HOP_F32, (5, 2), 1, 2, 3, 4, 5, 6, 1, 3, 2, 4);
    hop_rt_arg l2[] = {TA(a), TA(at)};
    hop_tensor *c1 = OP(cat, hop_rt_list(l2, 2), IA(-1));
    CHECK(c1, HOP_F32, (2, 4), 1, 2, 1, 3, 3, 4, 2, 4);
    hop_tensor *s0 = OP(stack, hop_rt_list(l2, 2), IA(0));
    CHECK(s0, HOP_F32, (2, 2, 2), 1, 2, 3, 4, 1, 3, 2, 4);
    hop_tensor *s2 = OP(stack, hop_rt_list(l2, 2), IA(-1));
    CHECK(s2, HOP_F32, (2, 2, 2), 1, 1, 2, 3, 3, 2, 4, 4);
    hop_tensor *bi = make(HOP_BOOL, 1, SIZES(2), (double[]){1, 0});
    hop_tensor *ii = make(HOP_I64, 1, SIZES(2), (double[]){-5, 9});
    hop_rt_arg l3[] = {TA(bi), TA(ii)};
    hop_tensor *s1 = OP(stack, hop_rt_list(l3, 2), IA(1));
    CHECK(s1, HOP_I64, (2, 2), 1, -5, 0, 9);
    hop_tensor *wide = hop_tensor_zeros(HOP_F32, 2, SIZES(1, 3));
    EXPECT_FAIL(HOP_SHAPE, "cat: sizes must match except in dim 0, got f32[2, 2] and f32[1, 3]",
                cat, hop_rt_list((hop_rt_arg[]){TA(a), TA(wide)}, 2), IA(0));
    hop_tensor_release(wide);
    hop_tensor *all[] = {a, b, at, e, c0, c1, s0, s2, bi, ii, s1};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ------------------------------------------------------------- factories */

static void
test_factories_fill_every_dtype(void **state)
{
    (void)state;
    hop_rt_arg sh[] = {IA(2), IA(3)};
    hop_tensor *f = OP(full, hop_rt_list(sh, 2), FA(2.5), NA());
    CHECK(f, HOP_F32, (2, 3), 2.5, 2.5, 2.5, 2.5, 2.5, 2.5);
    hop_tensor *fi = OP(full, hop_rt_list(sh, 1), IA(7), NA());
    CHECK(fi, HOP_I64, (2), 7, 7);
    hop_tensor *fb = OP(full, hop_rt_list(sh, 1), BA(true), NA());
    CHECK(fb, HOP_BOOL, (2), 1, 1);
    hop_tensor *ft = OP(full, hop_rt_list(sh, 1), FA(-2.7), DA(HOP_I32));
    CHECK(ft, HOP_I32, (2), -2, -2);
    for (size_t d = 0; d < N_(DTYPES); d++) {
        hop_tensor *z = OP(zeros, hop_rt_list(sh, 2), DA(DTYPES[d]));
        CHECK(z, DTYPES[d], (2, 3), 0, 0, 0, 0, 0, 0);
        hop_tensor *o = OP(ones, hop_rt_list(sh, 1), DA(DTYPES[d]));
        CHECK(o, DTYPES[d], (2), 1, 1);
        hop_tensor *r = OP(arange, IA(0), IA(3), IA(1), DA(DTYPES[d]));
        CHECK(r, DTYPES[d], (3), 0, 1, DTYPES[d] == HOP_BOOL ? 1 : 2);
        hop_tensor_release(z);
        hop_tensor_release(o);
        hop_tensor_release(r);
    }
    hop_tensor *z0 = OP(zeros, hop_rt_list(NULL, 0), NA());
    CHECK(z0, HOP_F32, (), 0);
    hop_tensor *ar = OP(arange, IA(5), IA(0), IA(-2), NA());
    CHECK(ar, HOP_I64, (3), 5, 3, 1);
    hop_tensor *ae = OP(arange, IA(1), IA(1), IA(1), NA());
    check_meta(ae, HOP_I64, 1, SIZES(0));
    EXPECT_FAIL(HOP_INVALID, "arange: step must be nonzero", arange, IA(0), IA(3), IA(0), NA());
    hop_tensor *all[] = {f, fi, fb, ft, z0, ar, ae};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* --------------------------------------------- item, nonzero, sym_size */

static void
test_item_sym_size_and_nonzero_read_the_data(void **state)
{
    (void)state;
    hop_rt_value v;
    hop_tensor *x = make(HOP_I32, 2, SIZES(1, 1), (double[]){-42});
    assert_int_equal(hop_eager(HOP_OP_item, (hop_rt_arg[]){TA(x)}, 1, &v), HOP_OK);
    assert_int_equal(v.kind, HOP_VALUE_SYM);
    assert_int_equal(v.i, -42);
    assert_null(v.tensor);
    hop_tensor *b = make(HOP_BOOL, 0, NULL, (double[]){1});
    assert_int_equal(hop_eager(HOP_OP_item, (hop_rt_arg[]){TA(b)}, 1, &v), HOP_OK);
    assert_int_equal(v.i, 1);
    hop_tensor *f =
        make(HOP_F32, 2, SIZES(3, 4), (double[]){0, 1, 0, -0.0, NAN, 0, 0, 2, 0, 0, 0, 3});
    EXPECT_FAIL(HOP_UNSUPPORTED,
                "item: cannot trace item() of a float tensor f32[3, 4]: only integer and bool "
                "tensors give a SymInt",
                item, TA(f));
    assert_int_equal(hop_eager(HOP_OP_sym_size, (hop_rt_arg[]){TA(f), IA(-1)}, 2, &v), HOP_OK);
    assert_int_equal(v.kind, HOP_VALUE_SYM);
    assert_int_equal(v.i, 4);

    hop_tensor *nz = OP(nonzero, TA(f)); /* nan is nonzero, -0.0 is zero */
    CHECK(nz, HOP_I64, (4, 2), 0, 1, 1, 0, 1, 3, 2, 3);
    hop_tensor *ft = OP(transpose, TA(f), IA(0), IA(1));
    hop_tensor *nzt = OP(nonzero, TA(ft));
    CHECK(nzt, HOP_I64, (4, 2), 0, 1, 1, 0, 3, 1, 3, 2);
    hop_tensor *n0 = OP(nonzero, TA(b));
    check_meta(n0, HOP_I64, 2, SIZES(1, 0));
    hop_tensor *e = hop_tensor_empty(HOP_I32, 2, SIZES(0, 3));
    hop_tensor *ne = OP(nonzero, TA(e));
    check_meta(ne, HOP_I64, 2, SIZES(0, 2));
    /* a long row crosses the conversion blocks */
    double big[600] = {0};
    big[3] = 1;
    big[300] = 5;
    big[599] = -1;
    hop_tensor *bg = make(HOP_I64, 2, SIZES(2, 300), big);
    hop_tensor *nb = OP(nonzero, TA(bg));
    CHECK(nb, HOP_I64, (3, 2), 0, 3, 1, 0, 1, 299);
    /* an item is a SymInt of a fresh tracer's ShapeEnv in tracing; eagerly
     * the thread's env must not keep the symbols */
    hop_tensor *all[] = {x, b, f, nz, ft, nzt, n0, e, ne, bg, nb};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ------------------------------------------------------------ to, clone */

/* Integers narrow by wrapping; floats saturate (cvt). */
static double
to_ref(double v, hop_dtype from, hop_dtype to)
{
    if (to == HOP_I32 && from == HOP_I64) {
        uint32_t u = (uint32_t)(uint64_t)(int64_t)v;
        return u <= INT32_MAX ? (double)u : (double)u - 4294967296.0;
    }
    return cvt(v, to);
}

static void
test_to_converts_every_dtype_pair_with_saturation(void **state)
{
    (void)state;
    const double src[] = {-2.75, 0, 1.5, 3e9, NAN, -INFINITY, 255, -1};
    for (size_t i = 0; i < N_(DTYPES); i++) {
        hop_tensor *x = hop_tensor_empty(DTYPES[i], 1, SIZES(8));
        for (int k = 0; k < 8; k++) {
            double v = src[k];
            /* store what the source dtype can hold */
            switch (DTYPES[i]) {
            case HOP_BOOL:
                ((uint8_t *)x->data)[k] = v != 0;
                break;
            case HOP_I32:
                ((int32_t *)x->data)[k] = (int32_t)cvt(v, HOP_I32);
                break;
            case HOP_I64:
                ((int64_t *)x->data)[k] = (int64_t)cvt(v, HOP_I64);
                break;
            case HOP_F32:
                ((float *)x->data)[k] = (float)v;
                break;
            default:
                ((double *)x->data)[k] = v;
                break;
            }
        }
        hop_tensor *xs = OP(slice, TA(x), IA(0), IA(0), NA(), IA(2)); /* strided too */
        for (size_t j = 0; j < N_(DTYPES); j++) {
            hop_tensor *y = OP(to, TA(x), DA(DTYPES[j]));
            assert_false(hop_tensor_shares_storage(x, y));
            double want[8];
            for (int k = 0; k < 8; k++)
                want[k] = to_ref(elem(x, k), DTYPES[i], DTYPES[j]);
            check_meta(y, DTYPES[j], 1, SIZES(8));
            check_values(y, want, 8);
            hop_tensor *ys = OP(to, TA(xs), DA(DTYPES[j]));
            for (int k = 0; k < 4; k++)
                want[k] = to_ref(elem(x, 2 * k), DTYPES[i], DTYPES[j]);
            check_values(ys, want, 4);
            hop_tensor_release(y);
            hop_tensor_release(ys);
        }
        hop_tensor_release(xs);
        hop_tensor_release(x);
    }
    /* the saturation itself, spelled out */
    hop_tensor *f = make(HOP_F64, 1, SIZES(4), (double[]){3e9, -3e9, NAN, -7.9});
    hop_tensor *i = OP(to, TA(f), DA(HOP_I32));
    CHECK(i, HOP_I32, (4), INT32_MAX, INT32_MIN, 0, -7);
    hop_tensor *w = make(HOP_I64, 1, SIZES(1), (double[]){4294967297.0}); /* 2**32 + 1 */
    hop_tensor *wi = OP(to, TA(w), DA(HOP_I32));
    CHECK(wi, HOP_I32, (1), 1);
    /* one element, converted: 0-d and [1, 1] */
    hop_tensor *z = make(HOP_BOOL, 0, NULL, (double[]){1});
    hop_tensor *zf = OP(to, TA(z), DA(HOP_F64));
    CHECK(zf, HOP_F64, (), 1);
    hop_tensor *zi = make(HOP_I32, 2, SIZES(1, 1), (double[]){3});
    hop_tensor *zs = OP(add, TA(zi), FA(0.5));
    CHECK(zs, HOP_F32, (1, 1), 3.5);
    hop_tensor *all[] = {f, i, w, wi, z, zf, zi, zs};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

static void
test_clone_makes_a_contiguous_copy(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_BOOL, 2, SIZES(2, 3), (double[]){1, 0, 0, 1, 1, 0});
    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *c = OP(clone, TA(t));
    assert_true(hop_tensor_is_contiguous(c));
    assert_false(hop_tensor_shares_storage(c, x));
    CHECK(c, HOP_BOOL, (3, 2), 1, 1, 0, 1, 0, 0);
    hop_tensor *all[] = {x, t, c};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* Every op of the table is exercised somewhere above or, for the ops NumPy
 * programs brought (floor_divide ... take), in test_numpy_ops.c, and for
 * the complex, linalg and fft ops (real ... linalg_eig, irfft) in test_numpy_ops.c's
 * complex test and tests/python/test_numpy_linalg.py and
 * test_numpy_fft.py, linalg_qr_raw in tests/python/test_numpy_gaps_s34.py, linalg_lstsq in
 * tests/python/test_numpy_linalg_lstsq_gelsd.py, bitcast in test_numpy_ops.c, fail_if in
 * test_check.c, masked_sum in tests/python/test_numpy_masked_sum.py and masked_prod in
 * tests/python/test_numpy_nan_order.py; this keeps the list honest
 * when ops are added. */
static void
test_every_op_of_the_table_is_covered(void **state)
{
    (void)state;
    assert_int_equal(HOP_OP_COUNT, 132);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_ops_on_every_dtype),
        cmocka_unit_test(test_unary_ops_on_strided_expanded_and_long_inputs),
        cmocka_unit_test(test_binary_ops_on_every_dtype_pair_with_broadcasting),
        cmocka_unit_test(test_binary_ops_with_python_scalars_use_weak_promotion),
        cmocka_unit_test(test_binary_broadcasting_over_strided_operands),
        cmocka_unit_test(test_integer_division_by_zero_is_true_division_giving_inf_and_nan),
        cmocka_unit_test(test_integer_overflow_wraps_around),
        cmocka_unit_test(test_integer_pow_with_negative_exponent_follows_pytorch),
        cmocka_unit_test(test_nan_propagates_through_maximum_minimum_and_relu),
        cmocka_unit_test(test_where_on_every_dtype_with_scalars_and_broadcasting),
        cmocka_unit_test(test_vector_where_moves_the_bits_of_the_scalar_select),
        cmocka_unit_test(test_vector_compares_give_the_scalar_compares_on_nan_zero_inf_denormals),
        cmocka_unit_test(test_reductions_over_every_dtype_dims_and_keepdim),
        cmocka_unit_test(test_float_reductions_over_long_rows_with_nans),
        cmocka_unit_test(test_float_sums_add_in_numpys_pairwise_order),
        cmocka_unit_test(test_simd_row_reductions_give_the_bits_of_the_portable_loops),
        cmocka_unit_test(
            test_long_row_sums_give_the_bits_of_the_portable_loops_on_any_thread_count),
        cmocka_unit_test(test_reductions_of_empty_zero_dim_and_nan_inputs),
        cmocka_unit_test(test_matmul_shapes_dtypes_and_layouts),
        cmocka_unit_test(test_matmul_read_transposed_gives_the_chains_bits),
        cmocka_unit_test(test_cat_and_stack_promote_and_accept_strided_inputs),
        cmocka_unit_test(test_factories_fill_every_dtype),
        cmocka_unit_test(test_item_sym_size_and_nonzero_read_the_data),
        cmocka_unit_test(test_to_converts_every_dtype_pair_with_saturation),
        cmocka_unit_test(test_clone_makes_a_contiguous_copy),
        cmocka_unit_test(test_every_op_of_the_table_is_covered),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
