/*
 * tests/c/test_infer.c - the op table and shape inference (hop_op_infer):
 * every op's result and its characteristic errors, dtype promotion with weak
 * scalars, symbolic broadcasting and the guards it records, data-dependent
 * errors on unbacked symbols, reshape with -1, slice clamping, matmul batch
 * broadcasting, view geometry over concrete sizes (hop_view_of) against the
 * shape rules, and an allocation-failure sweep.
 *
 * Tensors are written as their printed metadata, M("f32[s0, 4]"), and results
 * compared as text: RUN(op, args...) gives the result's metadata, "sym <expr>"
 * for a SymInt, or "HOP_<CODE>: <message>" for an error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/core.h"
#include "hop/ops.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static hop_shape_env *env;
static long live_at_start;

static int
setup(void **state)
{
    (void)state;
    live_at_start = hop_alloc_live();
    env = hop_shape_env_new();
    return env == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
    (void)state;
    hop_shape_env_free(env);
    env = NULL;
    hop_alloc_fail_at(0);
    return hop_alloc_live() == live_at_start ? 0 : -1;
}

/* ------------------------------------------------------------- helpers */

/* A backed symbol without duck sizing, so equal hints give distinct symbols. */
static const hop_expr *
sym(int64_t hint)
{
    const hop_expr *e = hop_shape_env_size_symbol(env, hint, false, true);
    assert_non_null(e);
    return e;
}

static const hop_expr *
unbacked(int64_t lo, int64_t hi)
{
    const hop_expr *e = hop_shape_env_unbacked(env, lo, hi);
    assert_non_null(e);
    return e;
}

static const hop_expr *
find_symbol(const char *name, size_t len)
{
    for (size_t i = 0; i < hop_shape_env_nsymbols(env); i++) {
        const hop_expr *s = hop_shape_env_symbol(env, i);
        if (strlen(hop_symbol_name(s)) == len && strncmp(hop_symbol_name(s), name, len) == 0)
            return s;
    }
    fail_msg("no symbol %.*s", (int)len, name);
    return NULL;
}

/* "f32[3, s0]" -> metadata; symbols must exist already. */
static hop_meta
M(const char *spec)
{
    hop_meta m;
    memset(&m, 0, sizeof m);
    const char *br = strchr(spec, '[');
    char name[16];
    assert_non_null(br);
    snprintf(name, sizeof name, "%.*s", (int)(br - spec), spec);
    assert_int_equal(hop_dtype_from_name(name, &m.dtype), HOP_OK);
    for (const char *p = br + 1; *p != ']';) {
        if (*p == ',' || *p == ' ') {
            p++;
        } else if (isdigit((unsigned char)*p)) {
            char *end;
            m.sizes[m.rank++] = hop_sym_const(env, strtoll(p, &end, 10));
            p = end;
        } else {
            const char *q = p;
            while (isalnum((unsigned char)*q))
                q++;
            m.sizes[m.rank++] = find_symbol(p, (size_t)(q - p));
            p = q;
        }
    }
    return m;
}

#define T(m) ((hop_operand){.kind = HOP_OPND_TENSOR, .u.tensor = (m)})
#define I(v) ((hop_operand){.kind = HOP_OPND_INT, .u.i = (v)})
#define F(v) ((hop_operand){.kind = HOP_OPND_FLOAT, .u.f = (v)})
#define B(v) ((hop_operand){.kind = HOP_OPND_BOOL, .u.b = (v)})
#define S(e) ((hop_operand){.kind = HOP_OPND_SYM, .u.sym = (e)})
#define D(d) ((hop_operand){.kind = HOP_OPND_DTYPE, .u.dtype = HOP_##d})
#define NONE ((hop_operand){.kind = HOP_OPND_NONE})
#define L(...)                                                                                     \
    ((hop_operand){.kind = HOP_OPND_LIST,                                                          \
                   .u.list = {(const hop_operand[]){__VA_ARGS__},                                  \
                              sizeof((hop_operand[]){__VA_ARGS__}) / sizeof(hop_operand)}})
#define EMPTY ((hop_operand){.kind = HOP_OPND_LIST, .u.list = {NULL, 0}})

/* The ShapeEnv's explanation that ends a data-dependent message about u0. */
#define U0_UNBACKED " (u0 is unbacked; its value is only known at run time)"

static hop_value_info last; /* the result of the last successful RUN */
static char text[2048];

/* Runs inference and describes the outcome; checks that a failure leaves the
 * guards as they were. */
static const char *
run(hop_op op, const hop_operand *args, size_t n)
{
    size_t nguards = hop_shape_env_nguards(env);
    hop_value_info out;
    hop_status st = hop_op_infer(env, op, args, n, &out);
    if (st != HOP_OK) {
        assert_int_equal(hop_error_code(), st);
        assert_int_equal(hop_shape_env_nguards(env), nguards);
        snprintf(text, sizeof text, "%s: %s", hop_status_name(st), hop_error_message());
        return text;
    }
    last = out;
    if (out.kind == HOP_VALUE_SYM) {
        strcpy(text, "sym ");
        hop_expr_print(out.sym, text + 4, sizeof text - 4);
    } else {
        assert_int_equal(out.kind, HOP_VALUE_TENSOR);
        hop_meta_print(&out.meta, text, sizeof text);
    }
    return text;
}

#define RUN(op, ...)                                                                               \
    run(HOP_OP_##op, (const hop_operand[]){__VA_ARGS__},                                           \
        sizeof((hop_operand[]){__VA_ARGS__}) / sizeof(hop_operand))

/* The guards recorded so far, joined with "; ". */
static const char *
guards(void)
{
    static char buf[1024];
    buf[0] = '\0';
    for (size_t i = 0; i < hop_shape_env_nguards(env); i++) {
        const char *g = hop_expr_str(env, hop_shape_env_guard(env, i));
        assert_non_null(g);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "; " : "", g);
    }
    return buf;
}

static void
assert_range(const hop_expr *e, int64_t lo, int64_t hi)
{
    int64_t l, h;
    hop_shape_env_bounds(env, e, &l, &h);
    assert_int_equal(l, lo);
    assert_int_equal(h, hi);
}

/* ------------------------------------------------------------ op table */

static void
test_op_table_rows_come_from_the_x_macro(void **state)
{
    (void)state;
    const hop_op_info *add = hop_op_get(HOP_OP_add);
    assert_string_equal(add->name, "add");
    assert_int_equal(add->nargs, 2);
    assert_int_equal(add->rule, HOP_RULE_BINARY);
    assert_int_equal(add->family, HOP_KF_BINARY);
    const hop_op_info *slice = hop_op_get(HOP_OP_slice);
    assert_string_equal(slice->name, "slice");
    assert_int_equal(slice->nargs, 5);
    assert_int_equal(slice->rule, HOP_RULE_SLICE);
    assert_int_equal(slice->family, HOP_KF_VIEW);
    assert_int_equal(hop_op_get(HOP_OP_logical_not)->nargs, 1);
    assert_int_equal(hop_op_get(HOP_OP_logical_not)->family, HOP_KF_UNARY);
    assert_int_equal(hop_op_get(HOP_OP_clone)->rule, HOP_RULE_CLONE);
    assert_int_equal(HOP_OP_COUNT, 132);
    assert_null(hop_op_get(HOP_OP_COUNT));
    assert_null(hop_op_get((hop_op)-1));
}

static void
test_op_from_name_finds_every_op_and_reports_unknown_names(void **state)
{
    (void)state;
    for (int i = 0; i < HOP_OP_COUNT; i++) {
        hop_op op = HOP_OP_COUNT;
        assert_int_equal(hop_op_from_name(hop_op_get((hop_op)i)->name, &op), HOP_OK);
        assert_int_equal(op, i);
    }
    hop_op op;
    assert_int_equal(hop_op_from_name("addd", &op), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(), "hop_op_from_name: no op named 'addd'");
    assert_int_equal(hop_op_from_name(NULL, &op), HOP_MISUSE);
}

/* ---------------------------------------------------- operand checking */

static void
test_wrong_operand_count_or_kind_names_the_op_and_argument(void **state)
{
    (void)state;
    hop_meta x = M("f32[2, 3]");
    assert_string_equal(RUN(add, T(&x), T(&x), T(&x)),
                        "HOP_INVALID: add: expected 2 operands, got 3");
    assert_string_equal(RUN(neg, T(&x), T(&x)), "HOP_INVALID: neg: expected 1 operand, got 2");
    assert_string_equal(RUN(transpose, T(&x), F(1.0), I(0)),
                        "HOP_INVALID: transpose: argument 1 must be an int, got a float");
    assert_string_equal(RUN(neg, I(3)),
                        "HOP_INVALID: neg: argument 0 must be a tensor, got an int");
    assert_string_equal(RUN(add, T(&x), D(F32)),
                        "HOP_INVALID: add: argument 1 must be a tensor or a scalar, got a dtype");
    assert_string_equal(RUN(sum, T(&x), NONE, I(1)),
                        "HOP_INVALID: sum: argument 2 must be a bool, got an int");

    hop_operand args[1] = {T(&x)};
    hop_value_info out;
    assert_int_equal(hop_op_infer(NULL, HOP_OP_neg, args, 1, &out), HOP_MISUSE);
    assert_int_equal(hop_op_infer(env, HOP_OP_neg, NULL, 1, &out), HOP_MISUSE);
    assert_int_equal(hop_op_infer(env, HOP_OP_COUNT, args, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_op_infer: unknown op 132");
    hop_meta bad = x;
    bad.rank = 9;
    assert_string_equal(RUN(neg, T(&bad)), "HOP_INVALID: neg: argument 0 has invalid rank 9");
}

static void
test_dim_out_of_range_names_the_op_and_shape(void **state)
{
    (void)state;
    hop_meta x = M("f32[2, 3]");
    assert_string_equal(RUN(transpose, T(&x), I(3), I(0)),
                        "HOP_INVALID: transpose: dim 3 out of range for f32[2, 3]");
    assert_string_equal(RUN(transpose, T(&x), I(0), I(-3)),
                        "HOP_INVALID: transpose: dim -3 out of range for f32[2, 3]");
    assert_string_equal(RUN(sym_size, T(&x), I(2)),
                        "HOP_INVALID: sym_size: dim 2 out of range for f32[2, 3]");
}

/* --------------------------------------------------------------- unary */

static void
test_unary_float_ops_promote_ints_and_bools_to_f32(void **state)
{
    (void)state;
    sym(5);
    hop_meta i = M("i32[s0, 3]"), b = M("bool[2]"), d = M("f64[4]");
    hop_op float_ops[] = {HOP_OP_exp,  HOP_OP_log,     HOP_OP_sin, HOP_OP_cos,
                          HOP_OP_tanh, HOP_OP_sigmoid, HOP_OP_sqrt};
    for (size_t k = 0; k < sizeof float_ops / sizeof float_ops[0]; k++) {
        hop_operand a[1] = {T(&i)};
        assert_string_equal(run(float_ops[k], a, 1), "f32[s0, 3]");
        a[0] = T(&b);
        assert_string_equal(run(float_ops[k], a, 1), "f32[2]");
        a[0] = T(&d);
        assert_string_equal(run(float_ops[k], a, 1), "f64[4]");
    }
}

static void
test_neg_abs_relu_keep_int_dtypes_and_neg_of_bool_is_a_dtype_error(void **state)
{
    (void)state;
    hop_meta i = M("i32[3]"), l = M("i64[2, 2]"), b = M("bool[3]"), f = M("f32[]");
    assert_string_equal(RUN(neg, T(&i)), "i32[3]");
    assert_string_equal(RUN(abs, T(&l)), "i64[2, 2]");
    assert_string_equal(RUN(relu, T(&i)), "i32[3]");
    assert_string_equal(RUN(relu, T(&f)), "f32[]");
    assert_string_equal(RUN(abs, T(&b)), "bool[3]");
    assert_string_equal(RUN(neg, T(&b)), "HOP_DTYPE: neg: negation is not supported for bool "
                                         "tensors, got bool[3]; use logical_not");
}

/* ------------------------------------------------------------ promotion */

/* PyTorch's table for tensors: bool lowest, a float beats any integer, the
 * wider of one kind wins; signed with unsigned gives the narrowest signed
 * type holding both, and f64 for u64 with a signed type (NumPy's answer). */
static void
test_tensor_dtypes_promote_by_kind_and_width(void **state)
{
    (void)state;
    static const char *names[] = {"bool", "i8",  "u8",  "i16", "i32",
                                  "i64",  "u64", "f16", "f32", "f64"};
    static const char *want[][10] = {
        {"bool", "i8", "u8", "i16", "i32", "i64", "u64", "f16", "f32", "f64"},
        {"i8", "i8", "i16", "i16", "i32", "i64", "f64", "f16", "f32", "f64"},
        {"u8", "i16", "u8", "i16", "i32", "i64", "u64", "f16", "f32", "f64"},
        {"i16", "i16", "i16", "i16", "i32", "i64", "f64", "f16", "f32", "f64"},
        {"i32", "i32", "i32", "i32", "i32", "i64", "f64", "f16", "f32", "f64"},
        {"i64", "i64", "i64", "i64", "i64", "i64", "f64", "f16", "f32", "f64"},
        {"u64", "f64", "u64", "f64", "f64", "f64", "u64", "f16", "f32", "f64"},
        {"f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f32", "f64"},
        {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64"},
        {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
    };
    _Static_assert(sizeof names / sizeof names[0] == HOP_C64, "a name per real dtype");
    for (int a = 0; a < HOP_C64; a++) {
        assert_string_equal(hop_dtype_name((hop_dtype)a), names[a]);
        for (int b = 0; b < HOP_C64; b++) {
            char sa[16], sb[16], w[16];
            snprintf(sa, sizeof sa, "%s[2]", names[a]);
            snprintf(sb, sizeof sb, "%s[2]", names[b]);
            snprintf(w, sizeof w, "%s[2]", want[a][b]);
            hop_meta x = M(sa), y = M(sb);
            assert_string_equal(RUN(maximum, T(&x), T(&y)), w);
            assert_int_equal(hop_dtype_promote((hop_dtype)a, (hop_dtype)b),
                             hop_dtype_promote((hop_dtype)b, (hop_dtype)a));
        }
    }
}

/* A complex dtype beats every real one; with a float its parts are the wider
 * (c64 with f64 is c128, NumPy's and PyTorch's answer); ops NumPy does not
 * define on complex numbers refuse them. */
static void
test_complex_dtypes_promote_and_ops_outside_numpys_set_refuse_them(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"c64[2]", "f32[2]", "c64[2]"},   {"c64[2]", "f64[2]", "c128[2]"},
        {"c64[2]", "i64[2]", "c64[2]"},   {"c64[2]", "bool[2]", "c64[2]"},
        {"c128[2]", "f32[2]", "c128[2]"}, {"c64[2]", "c128[2]", "c128[2]"},
        {"f16[2]", "c64[2]", "c64[2]"},   {"u8[2]", "c128[2]", "c128[2]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hop_meta x = M(cases[i].a), y = M(cases[i].b);
        assert_string_equal(RUN(add, T(&x), T(&y)), cases[i].want);
        assert_string_equal(RUN(add, T(&y), T(&x)), cases[i].want);
    }
    hop_meta z = M("c64[3]"), r = M("f32[3]");
    assert_string_equal(RUN(abs, T(&z)), "f32[3]");
    assert_string_equal(RUN(real, T(&z)), "f32[3]");
    assert_string_equal(RUN(conj, T(&z)), "c64[3]");
    assert_string_equal(RUN(angle, T(&r)), "f32[3]");
    assert_string_equal(RUN(complex, T(&r), T(&r)), "c64[3]");
    assert_string_equal(RUN(exp, T(&z)), "c64[3]");
    assert_string_equal(RUN(sum, T(&z), NONE, B(false)), "c64[]");
    assert_string_equal(RUN(floor, T(&z)),
                        "HOP_DTYPE: floor: complex dtypes are not supported, got c64[3]");
    assert_string_equal(RUN(lt, T(&z), T(&r)),
                        "HOP_DTYPE: lt: complex dtypes are not supported, got c64[3]");
    assert_string_equal(RUN(amax, T(&z), NONE, B(false)),
                        "HOP_DTYPE: amax: complex dtypes are not supported, got c64[3]");
}

static void
test_python_scalars_are_weak_in_promotion(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(4);
    const hop_expr *flag = hop_sym_lt(env, s0, hop_sym_const(env, 10));
    hop_meta f = M("f32[3]"), d = M("f64[3]"), i = M("i32[3]"), l = M("i64[3]"), b = M("bool[3]");
    assert_string_equal(RUN(add, T(&f), F(2.5)), "f32[3]");
    assert_string_equal(RUN(add, T(&d), I(2)), "f64[3]");
    assert_string_equal(RUN(add, T(&i), I(2)), "i32[3]");
    assert_string_equal(RUN(add, T(&i), B(true)), "i32[3]");
    assert_string_equal(RUN(add, T(&l), F(2.5)), "f32[3]");
    assert_string_equal(RUN(mul, F(2.5), T(&i)), "f32[3]");
    assert_string_equal(RUN(add, T(&b), I(1)), "i64[3]");
    assert_string_equal(RUN(add, T(&b), B(true)), "bool[3]");
    assert_string_equal(RUN(add, T(&b), F(0.5)), "f32[3]");
    assert_string_equal(RUN(add, T(&i), S(s0)), "i32[3]");
    assert_string_equal(RUN(add, T(&b), S(s0)), "i64[3]");
    assert_string_equal(RUN(add, T(&f), S(s0)), "f32[3]");
    assert_string_equal(RUN(add, T(&b), S(flag)), "bool[3]");
    assert_string_equal(RUN(add, I(2), I(3)),
                        "HOP_INVALID: add: expected at least one tensor operand, got 2 and 3");
    assert_string_equal(RUN(mul, F(2.0), F(0.1)),
                        "HOP_INVALID: mul: expected at least one tensor operand, got 2.0 and 0.1");
    assert_string_equal(RUN(div, B(true), S(s0)),
                        "HOP_INVALID: div: expected at least one tensor operand, got True and s0");
}

/* -------------------------------------------------------------- binary */

static void
test_binary_ops_broadcast_constant_shapes(void **state)
{
    (void)state;
    hop_meta a = M("f32[3, 1]"), b = M("f32[4]"), c = M("f32[5]"), s = M("f32[]");
    assert_string_equal(RUN(add, T(&a), T(&b)), "f32[3, 4]");
    assert_string_equal(RUN(sub, T(&b), T(&a)), "f32[3, 4]");
    assert_string_equal(RUN(mul, T(&s), T(&a)), "f32[3, 1]");
    assert_string_equal(RUN(pow, T(&a), I(2)), "f32[3, 1]");
    assert_string_equal(RUN(minimum, T(&b), T(&b)), "f32[4]");
    hop_meta ab = M("f32[3, 4]");
    assert_string_equal(RUN(add, T(&ab), T(&c)),
                        "HOP_SHAPE: add: cannot broadcast f32[3, 4] with f32[5]");
    assert_string_equal(RUN(div, T(&c), T(&ab)),
                        "HOP_SHAPE: div: cannot broadcast f32[5] with f32[3, 4]");
}

static void
test_div_is_true_division_and_sub_refuses_bools(void **state)
{
    (void)state;
    hop_meta i = M("i32[3]"), l = M("i64[3]"), b = M("bool[3]"), d = M("f64[3]");
    assert_string_equal(RUN(div, T(&i), T(&l)), "f32[3]");
    assert_string_equal(RUN(div, T(&i), I(2)), "f32[3]");
    assert_string_equal(RUN(div, T(&b), T(&b)), "f32[3]");
    assert_string_equal(RUN(div, T(&d), I(2)), "f64[3]");
    assert_string_equal(RUN(pow, T(&i), I(2)), "i32[3]");
    assert_string_equal(RUN(pow, T(&i), F(0.5)), "f32[3]");
    assert_string_equal(RUN(mul, T(&b), T(&b)), "bool[3]");
    assert_string_equal(RUN(sub, T(&i), T(&b)), "i32[3]");
    assert_string_equal(RUN(sub, T(&b), B(true)), "HOP_DTYPE: sub: subtraction is not supported "
                                                  "for bool operands, got bool[3] and True");
}

/* ------------------------------------------------ symbolic broadcasting */

static void
test_broadcasting_equal_symbols_or_ones_records_no_guard(void **state)
{
    (void)state;
    sym(5);
    unbacked(0, 100);
    hop_meta a = M("f32[s0, 1]"), b = M("f32[s0, 3]"), c = M("f32[1]"), u = M("f32[u0]");
    assert_string_equal(RUN(add, T(&a), T(&b)), "f32[s0, 3]");
    assert_string_equal(RUN(add, T(&b), T(&c)), "f32[s0, 3]");
    assert_string_equal(RUN(add, T(&u), T(&c)), "f32[u0]");
    assert_string_equal(RUN(add, T(&u), T(&u)), "f32[u0]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_broadcasting_distinct_symbols_with_equal_hints_guards_their_equality(void **state)
{
    (void)state;
    sym(5);
    sym(5);
    hop_meta a = M("f32[s0]"), b = M("f32[s1, 1]");
    assert_string_equal(RUN(add, T(&b), T(&a)), "f32[s1, s0]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    hop_meta c = M("f32[s1]");
    assert_string_equal(RUN(add, T(&a), T(&c)), "f32[s0]");
    assert_string_equal(guards(), "s0 == s1");
}

static void
test_broadcasting_a_symbol_against_its_hint_specialises_to_the_constant(void **state)
{
    (void)state;
    sym(5);
    hop_meta a = M("f32[s0]"), b = M("f32[2, 5]");
    assert_string_equal(RUN(mul, T(&a), T(&b)), "f32[2, 5]");
    assert_string_equal(guards(), "s0 == 5");
}

static void
test_broadcasting_mismatched_symbols_is_a_shape_error_and_keeps_no_guard(void **state)
{
    (void)state;
    sym(3);
    sym(4);
    hop_meta a = M("f32[s0]"), b = M("f32[s1]"), c = M("f32[7]");
    assert_string_equal(RUN(add, T(&a), T(&b)),
                        "HOP_SHAPE: add: cannot broadcast f32[s0] with f32[s1]");
    assert_string_equal(RUN(eq, T(&c), T(&a)),
                        "HOP_SHAPE: eq: cannot broadcast f32[7] with f32[s0]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_broadcasting_unbacked_against_backed_is_data_dependent(void **state)
{
    (void)state;
    sym(5);
    unbacked(0, INT64_MAX);
    hop_meta s = M("f32[s0]"), u = M("f32[u0]"), three = M("f32[3]");
    assert_string_equal(RUN(add, T(&u), T(&s)), "HOP_DATA_DEPENDENT: add: data-dependent: "
                                                "cannot decide s0 == u0" U0_UNBACKED);
    assert_string_equal(RUN(sub, T(&three), T(&u)), "HOP_DATA_DEPENDENT: sub: data-dependent: "
                                                    "cannot decide u0 == 3" U0_UNBACKED);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_broadcasting_an_unbacked_size_that_may_be_one_is_data_dependent(void **state)
{
    (void)state;
    unbacked(0, 1);
    hop_meta u = M("f32[u0]"), three = M("f32[3]");
    /* u0 == 3 is false by its range, but u0 == 1 is open. */
    assert_string_equal(RUN(add, T(&u), T(&three)), "HOP_DATA_DEPENDENT: add: data-dependent: "
                                                    "cannot decide u0 == 1" U0_UNBACKED);
}

/* --------------------------------------------------- comparisons, logic */

static void
test_comparisons_and_logical_ops_give_bool(void **state)
{
    (void)state;
    sym(6);
    hop_meta f = M("f32[s0, 1]"), i = M("i32[4]"), b = M("bool[s0, 4]");
    hop_op cmp[] = {HOP_OP_eq, HOP_OP_ne, HOP_OP_lt, HOP_OP_le, HOP_OP_gt, HOP_OP_ge};
    for (size_t k = 0; k < 6; k++) {
        hop_operand a[2] = {T(&f), T(&i)};
        assert_string_equal(run(cmp[k], a, 2), "bool[s0, 4]");
        a[1] = F(0.5);
        assert_string_equal(run(cmp[k], a, 2), "bool[s0, 1]");
    }
    assert_string_equal(RUN(logical_and, T(&f), T(&i)), "bool[s0, 4]");
    assert_string_equal(RUN(logical_or, T(&b), B(false)), "bool[s0, 4]");
    assert_string_equal(RUN(logical_not, T(&i)), "bool[4]");
    assert_string_equal(RUN(logical_not, B(true)),
                        "HOP_INVALID: logical_not: argument 0 must be a tensor, got a bool");
    hop_meta five = M("i32[5]");
    assert_string_equal(RUN(logical_or, T(&five), T(&i)),
                        "HOP_SHAPE: logical_or: cannot broadcast i32[5] with i32[4]");
}

static void
test_where_needs_a_bool_condition_and_broadcasts_all_three(void **state)
{
    (void)state;
    hop_meta c = M("bool[3, 1]"), f = M("f32[4]"), i = M("i32[3, 4]"), fc = M("f32[3, 1]");
    hop_meta five = M("f32[5]");
    assert_string_equal(RUN(where, T(&c), T(&f), I(0)), "f32[3, 4]");
    assert_string_equal(RUN(where, T(&c), T(&i), F(2.5)), "f32[3, 4]");
    assert_string_equal(RUN(where, T(&c), T(&i), T(&f)), "f32[3, 4]");
    assert_string_equal(RUN(where, T(&c), I(1), I(0)), "i64[3, 1]");
    assert_string_equal(RUN(where, T(&c), F(1.0), I(0)), "f32[3, 1]");
    assert_string_equal(RUN(where, T(&c), B(true), B(false)), "bool[3, 1]");
    assert_string_equal(RUN(where, T(&fc), T(&f), T(&f)),
                        "HOP_DTYPE: where: condition must be a bool tensor, got f32[3, 1]");
    assert_string_equal(RUN(where, T(&c), T(&f), T(&five)),
                        "HOP_SHAPE: where: cannot broadcast bool[3, 1], f32[4] and f32[5]");
    assert_string_equal(RUN(where, B(true), T(&f), T(&f)),
                        "HOP_INVALID: where: argument 0 must be a tensor, got a bool");
}

/* ---------------------------------------------------------- reductions */

static void
test_reductions_drop_or_keep_the_reduced_dims(void **state)
{
    (void)state;
    sym(7);
    hop_meta x = M("f32[2, s0, 4]"), s = M("f64[]");
    assert_string_equal(RUN(sum, T(&x), L(I(0), I(2)), B(false)), "f32[s0]");
    assert_string_equal(RUN(sum, T(&x), L(I(0), I(2)), B(true)), "f32[1, s0, 1]");
    assert_string_equal(RUN(mean, T(&x), I(-1), B(false)), "f32[2, s0]");
    assert_string_equal(RUN(amax, T(&x), NONE, B(false)), "f32[]");
    assert_string_equal(RUN(amin, T(&x), NONE, B(true)), "f32[1, 1, 1]");
    assert_string_equal(RUN(sum, T(&x), EMPTY, B(false)), "f32[]");
    /* duplicates, also after wrapping, count once */
    assert_string_equal(RUN(sum, T(&x), L(I(1), I(-2), I(1)), B(false)), "f32[2, 4]");
    assert_string_equal(RUN(sum, T(&s), I(0), B(true)), "f64[]");
    assert_string_equal(RUN(sum, T(&s), I(-1), B(false)), "f64[]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_reduction_dtypes_and_errors(void **state)
{
    (void)state;
    hop_meta i = M("i32[2, 3]"), b = M("bool[2, 3]"), e = M("f32[0, 3]");
    assert_string_equal(RUN(sum, T(&i), I(0), B(false)), "i64[3]");
    assert_string_equal(RUN(sum, T(&b), NONE, B(false)), "i64[]");
    assert_string_equal(RUN(amax, T(&i), I(1), B(false)), "i32[2]");
    assert_string_equal(RUN(amin, T(&b), I(1), B(true)), "bool[2, 1]");
    assert_string_equal(RUN(mean, T(&i), NONE, B(false)),
                        "HOP_DTYPE: mean: mean needs a float input, got i32[2, 3]");
    assert_string_equal(RUN(sum, T(&i), L(I(0), I(2)), B(false)),
                        "HOP_INVALID: sum: dim 2 out of range for i32[2, 3]");
    assert_string_equal(RUN(sum, T(&i), L(I(0), F(1.0)), B(false)),
                        "HOP_INVALID: sum: argument 1 item 1 must be an int, got a float");
    assert_string_equal(RUN(mean, T(&i), F(1.0), B(false)),
                        "HOP_INVALID: mean: argument 1 must be an int, a list of ints or None, "
                        "got a float");
    assert_string_equal(RUN(sum, T(&e), I(0), B(false)), "f32[3]");
    assert_string_equal(RUN(amax, T(&e), I(1), B(false)), "f32[0]");
    assert_string_equal(RUN(amax, T(&e), I(0), B(false)),
                        "HOP_SHAPE: amax: cannot reduce over dim 0 of size 0 in f32[0, 3] (zero-size "
                        "array to reduction operation maximum which has no identity)");
}

static void
test_argmax_gives_i64_over_a_dim_or_the_flattened_tensor(void **state)
{
    (void)state;
    hop_meta x = M("f32[2, 3]"), b = M("bool[3]"), e = M("i32[0, 2]");
    assert_string_equal(RUN(argmax, T(&x), I(1), B(false)), "i64[2]");
    assert_string_equal(RUN(argmax, T(&x), I(0), B(true)), "i64[1, 3]");
    assert_string_equal(RUN(argmax, T(&x), NONE, B(false)), "i64[]");
    assert_string_equal(RUN(argmax, T(&x), NONE, B(true)), "i64[1, 1]");
    assert_string_equal(RUN(argmax, T(&b), I(0), B(false)),
                        "HOP_DTYPE: argmax: bool tensors are not supported, got bool[3]");
    assert_string_equal(RUN(argmax, T(&x), L(I(0)), B(false)),
                        "HOP_INVALID: argmax: argument 1 must be an int or None, got a list");
    assert_string_equal(RUN(argmax, T(&e), NONE, B(false)),
                        "HOP_SHAPE: argmax: cannot reduce over dim 0 of size 0 in i32[0, 2] (attempt "
                        "to get argmax of an empty sequence)");
    assert_string_equal(RUN(argmax, T(&x), I(2), B(false)),
                        "HOP_INVALID: argmax: dim 2 out of range for f32[2, 3]");
}

/* -------------------------------------------------------------- matmul */

static void
test_matmul_handles_vectors_matrices_and_batches(void **state)
{
    (void)state;
    hop_meta v = M("f32[3]"), m = M("f32[2, 3]"), n = M("f32[3, 4]");
    assert_string_equal(RUN(matmul, T(&v), T(&v)), "f32[]");
    assert_string_equal(RUN(matmul, T(&m), T(&v)), "f32[2]");
    assert_string_equal(RUN(matmul, T(&v), T(&n)), "f32[4]");
    assert_string_equal(RUN(matmul, T(&m), T(&n)), "f32[2, 4]");
    hop_meta a = M("f32[5, 1, 2, 3]"), b = M("f32[4, 3, 6]"), bv = M("f32[7, 2, 3]");
    assert_string_equal(RUN(matmul, T(&a), T(&b)), "f32[5, 4, 2, 6]");
    assert_string_equal(RUN(matmul, T(&v), T(&b)), "f32[4, 6]");
    assert_string_equal(RUN(matmul, T(&bv), T(&v)), "f32[7, 2]");
}

static void
test_matmul_batch_dims_broadcast_symbolically(void **state)
{
    (void)state;
    sym(8);
    sym(3);
    hop_meta a = M("f32[s0, 1, 2, s1]"), b = M("f32[5, s1, 6]");
    assert_string_equal(RUN(matmul, T(&a), T(&b)), "f32[s0, 5, 2, 6]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    hop_meta c = M("f32[3, 6]");
    assert_string_equal(RUN(matmul, T(&a), T(&c)), "f32[s0, 1, 2, 6]");
    assert_string_equal(guards(), "s1 == 3");
}

static void
test_matmul_errors_name_both_operands(void **state)
{
    (void)state;
    hop_meta m = M("f32[2, 3]"), n = M("f32[4, 5]"), s = M("f32[]"), d = M("f64[3]");
    hop_meta a = M("f32[2, 3, 4]"), b = M("f32[5, 4, 2]"), bo = M("bool[2, 2]");
    assert_string_equal(RUN(matmul, T(&m), T(&n)), "HOP_SHAPE: matmul: cannot multiply f32[2, 3] "
                                                   "by f32[4, 5]: inner sizes 3 and 4 differ");
    assert_string_equal(RUN(matmul, T(&a), T(&b)),
                        "HOP_SHAPE: matmul: cannot broadcast the batch dims of f32[2, 3, 4] and "
                        "f32[5, 4, 2]");
    assert_string_equal(RUN(matmul, T(&s), T(&m)),
                        "HOP_SHAPE: matmul: both operands need at least 1 dim, got f32[] and "
                        "f32[2, 3]");
    assert_string_equal(RUN(matmul, T(&m), T(&d)),
                        "HOP_DTYPE: matmul: dtypes differ, got f32[2, 3] and f64[3]");
    assert_string_equal(RUN(matmul, T(&bo), T(&bo)),
                        "HOP_DTYPE: matmul: bool tensors are not supported, got bool[2, 2] and "
                        "bool[2, 2]");
}

static void
test_matmul_inner_size_against_an_unbacked_one_is_data_dependent(void **state)
{
    (void)state;
    unbacked(0, INT64_MAX);
    hop_meta a = M("f32[2, u0]"), b = M("f32[3, 4]");
    assert_string_equal(RUN(matmul, T(&a), T(&b)), "HOP_DATA_DEPENDENT: matmul: data-dependent: "
                                                   "cannot decide u0 == 3" U0_UNBACKED);
}

/* ------------------------------------------------------------- reshape */

static void
test_reshape_checks_numel_and_infers_minus_one(void **state)
{
    (void)state;
    hop_meta x = M("f32[2, 3, 4]"), z = M("f32[0, 3]"), y = M("i32[2, 7]");
    assert_string_equal(RUN(reshape, T(&x), L(I(6), I(-1))), "f32[6, 4]");
    assert_string_equal(RUN(reshape, T(&x), L(I(-1))), "f32[24]");
    assert_string_equal(RUN(view, T(&x), L(I(4), I(3), I(2))), "f32[4, 3, 2]");
    assert_string_equal(RUN(reshape, T(&z), L(I(3), I(-1), I(5))), "f32[3, 0, 5]");
    assert_string_equal(
        RUN(reshape, T(&y), L(I(3), I(5))),
        "HOP_SHAPE: reshape: shape [3, 5] is invalid for input i32[2, 7] of size 14");
    assert_string_equal(RUN(view, T(&y), L(I(5), I(-1))),
                        "HOP_SHAPE: view: shape [5, -1] is invalid for input i32[2, 7] of size 14");
    assert_string_equal(RUN(reshape, T(&y), L(I(-1), I(-1))),
                        "HOP_INVALID: reshape: only one size can be -1, got [-1, -1]");
    assert_string_equal(RUN(reshape, T(&y), L(I(2), I(-7))),
                        "HOP_INVALID: reshape: invalid size -7 in shape [2, -7]");
    assert_string_equal(RUN(reshape, T(&z), L(I(0), I(-1))),
                        "HOP_SHAPE: reshape: cannot infer the -1 in [0, -1] for f32[0, 3]: the "
                        "other sizes multiply to 0");
    assert_string_equal(RUN(reshape, T(&y), L(F(2.0), I(7))),
                        "HOP_INVALID: reshape: argument 1 item 0 must be an int or a SymInt, got "
                        "a float");
    assert_string_equal(
        RUN(reshape, T(&y), L(I(1), I(1), I(1), I(1), I(1), I(1), I(1), I(2), I(7))),
        "HOP_INVALID: reshape: shape [1, 1, 1, 1, 1, 1, 1, 2, 7] has 9 dims, more "
        "than 8");
}

static void
test_reshape_with_minus_one_on_symbolic_shapes(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(6), *s1 = sym(5);
    hop_meta x = M("f32[s0, 4]"), xy = M("f32[s0, s1]");
    assert_string_equal(RUN(reshape, T(&x), L(I(-1))), "f32[4*s0]");
    assert_string_equal(RUN(reshape, T(&x), L(I(2), I(-1))), "f32[2, 2*s0]");
    assert_string_equal(RUN(reshape, T(&x), L(S(s0), I(2), I(2))), "f32[s0, 2, 2]");
    assert_string_equal(RUN(reshape, T(&xy), L(S(s1), I(-1))), "f32[s1, s0]");
    assert_string_equal(RUN(reshape, T(&xy), L(I(-1), S(s0))), "f32[s1, s0]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_reshape_decides_numel_through_the_shape_env(void **state)
{
    (void)state;
    sym(6);
    sym(8);
    hop_meta x = M("f32[s0]"), y = M("f32[s1]");
    assert_string_equal(RUN(reshape, T(&x), L(I(2), I(3))), "f32[2, 3]");
    assert_string_equal(guards(), "s0 == 6");
    assert_string_equal(
        RUN(reshape, T(&x), L(I(4), I(-1))),
        "HOP_SHAPE: reshape: shape [4, -1] is invalid for input f32[s0] of size s0");
    assert_string_equal(guards(), "s0 == 6");
    assert_string_equal(RUN(reshape, T(&y), L(I(4), I(-1))), "f32[4, s1//4]");
    assert_string_equal(guards(), "s0 == 6; s1 % 4 == 0");
}

static void
test_reshape_of_unbacked_numel_is_data_dependent(void **state)
{
    (void)state;
    unbacked(0, INT64_MAX);
    hop_meta x = M("f32[u0, 2]");
    assert_string_equal(RUN(reshape, T(&x), L(I(4))),
                        "HOP_DATA_DEPENDENT: reshape: data-dependent: "
                        "cannot decide u0 == 2" U0_UNBACKED);
    assert_string_equal(RUN(reshape, T(&x), L(I(-1))), "f32[2*u0]");
}

/* ------------------------------------------------------- dims and views */

static void
test_transpose_and_permute_move_dims(void **state)
{
    (void)state;
    sym(5);
    hop_meta x = M("f32[2, s0, 4]");
    assert_string_equal(RUN(transpose, T(&x), I(0), I(2)), "f32[4, s0, 2]");
    assert_string_equal(RUN(transpose, T(&x), I(-1), I(-2)), "f32[2, 4, s0]");
    assert_string_equal(RUN(permute, T(&x), L(I(2), I(0), I(1))), "f32[4, 2, s0]");
    assert_string_equal(RUN(permute, T(&x), L(I(-1), I(1), I(0))), "f32[4, s0, 2]");
    assert_string_equal(RUN(permute, T(&x), L(I(1), I(0))),
                        "HOP_INVALID: permute: got 2 dims [1, 0] for f32[2, s0, 4]");
    assert_string_equal(RUN(permute, T(&x), L(I(0), I(-3), I(1))),
                        "HOP_INVALID: permute: dim 0 repeats in [0, -3, 1]");
    assert_string_equal(RUN(permute, T(&x), L(I(0), I(3), I(1))),
                        "HOP_INVALID: permute: dim 3 out of range for f32[2, s0, 4]");
}

static void
test_unsqueeze_and_squeeze(void **state)
{
    (void)state;
    sym(5);
    unbacked(0, 10);
    hop_meta x = M("f32[2, 3]"), o = M("f32[1, s0, 1]"), u = M("f32[u0, 1]"), s = M("f32[]");
    hop_meta r8 = M("f32[1, 1, 1, 1, 1, 1, 1, 1]");
    assert_string_equal(RUN(unsqueeze, T(&x), I(0)), "f32[1, 2, 3]");
    assert_string_equal(RUN(unsqueeze, T(&x), I(2)), "f32[2, 3, 1]");
    assert_string_equal(RUN(unsqueeze, T(&x), I(-1)), "f32[2, 3, 1]");
    assert_string_equal(RUN(unsqueeze, T(&x), I(-3)), "f32[1, 2, 3]");
    assert_string_equal(RUN(unsqueeze, T(&x), I(3)),
                        "HOP_INVALID: unsqueeze: dim 3 out of range for f32[2, 3]");
    assert_string_equal(RUN(unsqueeze, T(&r8), I(0)),
                        "HOP_INVALID: unsqueeze: f32[1, 1, 1, 1, 1, 1, 1, 1] already has 8 dims");
    assert_string_equal(RUN(squeeze, T(&o), NONE), "f32[s0]");
    assert_string_equal(RUN(squeeze, T(&o), I(-1)), "f32[1, s0]");
    assert_string_equal(RUN(squeeze, T(&o), I(1)), "f32[1, s0, 1]");
    assert_string_equal(RUN(squeeze, T(&x), NONE), "f32[2, 3]");
    /* an unbacked size is assumed not to be 1 */
    assert_string_equal(RUN(squeeze, T(&u), NONE), "f32[u0]");
    assert_string_equal(RUN(squeeze, T(&s), I(0)), "f32[]");
    assert_string_equal(RUN(squeeze, T(&x), L(I(0))),
                        "HOP_INVALID: squeeze: argument 1 must be an int or None, got a list");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_expand_grows_size_one_dims_only(void **state)
{
    (void)state;
    const hop_expr *s1;
    sym(5);
    s1 = sym(4);
    hop_meta x = M("f32[3, 1]"), y = M("f32[1, s0]");
    assert_string_equal(RUN(expand, T(&x), L(I(2), I(3), I(4))), "f32[2, 3, 4]");
    assert_string_equal(RUN(expand, T(&x), L(I(-1), I(4))), "f32[3, 4]");
    assert_string_equal(RUN(expand, T(&x), L(I(3), I(1))), "f32[3, 1]");
    assert_string_equal(RUN(expand, T(&y), L(S(s1), I(-1))), "f32[s1, s0]");
    assert_string_equal(RUN(expand, T(&x), L(I(4), I(4))),
                        "HOP_SHAPE: expand: cannot expand f32[3, 1] to [4, 4]: dim 0 has size 3, "
                        "not 1");
    assert_string_equal(RUN(expand, T(&x), L(I(4))),
                        "HOP_INVALID: expand: got 1 size [4] for f32[3, 1]");
    assert_string_equal(RUN(expand, T(&x), L(I(-1), I(3), I(4))),
                        "HOP_INVALID: expand: -1 is not allowed for the new leading dim 0 of "
                        "[-1, 3, 4]");
    assert_string_equal(RUN(expand, T(&x), L(I(3), I(-2))),
                        "HOP_INVALID: expand: invalid size -2 in shape [3, -2]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_string_equal(RUN(expand, T(&y), L(I(2), I(5))), "f32[2, 5]");
    assert_string_equal(guards(), "s0 == 5");
    assert_string_equal(RUN(expand, T(&y), L(I(2), I(6))),
                        "HOP_SHAPE: expand: cannot expand f32[1, s0] to [2, 6]: dim 1 has size s0, "
                        "not 1");
}

static void
test_select_drops_the_dim_and_checks_the_index_when_decidable(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(5);
    unbacked(0, INT64_MAX);
    hop_meta x = M("f32[3, 4]"), y = M("f32[s0, 2]"), u = M("f32[u0]"), s = M("f32[]");
    assert_string_equal(RUN(select, T(&x), I(0), I(1)), "f32[4]");
    assert_string_equal(RUN(select, T(&x), I(1), I(-4)), "f32[3]");
    assert_string_equal(RUN(select, T(&x), I(-2), I(2)), "f32[4]");
    assert_string_equal(RUN(select, T(&x), I(0), I(3)),
                        "HOP_INVALID: select: index 3 out of range for dim 0 of f32[3, 4]");
    assert_string_equal(RUN(select, T(&x), I(1), I(-5)),
                        "HOP_INVALID: select: index -5 out of range for dim 1 of f32[3, 4]");
    assert_string_equal(RUN(select, T(&s), I(0), I(0)),
                        "HOP_INVALID: select: dim 0 out of range for f32[]");
    /* from the range s0 >= 2: no guard */
    assert_string_equal(RUN(select, T(&y), I(0), I(1)), "f32[2]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    /* by the hint: a guard */
    assert_string_equal(RUN(select, T(&y), I(0), I(4)), "f32[2]");
    assert_string_equal(guards(), "s0 > 4");
    assert_string_equal(RUN(select, T(&y), I(0), I(5)),
                        "HOP_INVALID: select: index 5 out of range for dim 0 of f32[s0, 2]");
    assert_string_equal(RUN(select, T(&x), I(1), S(s0)),
                        "HOP_INVALID: select: index s0 out of range for dim 1 of f32[3, 4]");
    /* data-dependent: left to the runtime */
    assert_string_equal(RUN(select, T(&u), I(0), I(7)), "f32[]");
    assert_string_equal(guards(), "s0 > 4");
}

/* --------------------------------------------------------------- slice */

static void
test_slice_follows_python_clamping_on_constant_sizes(void **state)
{
    (void)state;
    hop_meta x = M("f32[10, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(2), I(5), I(1)), "f32[3, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), NONE, NONE, I(3)), "f32[4, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(-3), NONE, I(1)), "f32[3, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(-20), I(4), I(1)), "f32[4, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(7), I(100), I(2)), "f32[2, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(8), I(3), I(1)), "f32[0, 2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(20), NONE, I(1)), "f32[0, 2]");
    assert_string_equal(RUN(slice, T(&x), I(-1), I(1), I(-1), I(1)), "f32[10, 0]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(1), I(2), I(0)),
                        "HOP_INVALID: slice: step must be positive, got 0");
    assert_string_equal(RUN(slice, T(&x), I(0), F(1.0), NONE, I(1)),
                        "HOP_INVALID: slice: argument 2 must be an int or a SymInt, got a float");
    assert_string_equal(RUN(slice, T(&x), I(2), NONE, NONE, I(1)),
                        "HOP_INVALID: slice: dim 2 out of range for f32[10, 2]");
}

static void
test_slice_of_symbolic_sizes_stays_symbolic_without_guards(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(5);
    unbacked(0, INT64_MAX);
    hop_meta x = M("f32[s0]"), u = M("f32[u0]");
    /* 1 <= s0 follows from the range */
    assert_string_equal(RUN(slice, T(&x), I(0), I(1), NONE, I(1)), "f32[s0 - 1]");
    assert_string_equal(RUN(slice, T(&x), I(0), NONE, NONE, I(2)), "f32[(s0 + 1)//2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(0), S(s0), I(1)), "f32[s0]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(-2), NONE, I(1)), "f32[2]");
    /* 3 vs s0 is not settled by the range: Min/Max, never the hint (a guard
     * s0 >= 3 would reject sizes 2 that eager slices fine) */
    assert_string_equal(RUN(slice, T(&x), I(0), NONE, I(3), I(1)), "f32[Min(s0, 3)]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(3), NONE, I(1)), "f32[s0 - Min(s0, 3)]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(-6), NONE, I(1)), "f32[s0 - Max(0, s0 - 6)]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(-6), I(-1), I(1)),
                        "f32[s0 - Max(0, s0 - 6) - 1]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(1), I(7), I(2)), "f32[Min(s0, 7)//2]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(3), I(5), I(1)), "f32[-Min(s0, 3) + Min(s0, 5)]");
    assert_string_equal(RUN(slice, T(&x), I(0), I(5), I(3), I(1)), "f32[0]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    /* unbacked: the same Min/Max */
    assert_string_equal(RUN(slice, T(&u), I(0), NONE, I(3), I(1)), "f32[Min(u0, 3)]");
    assert_string_equal(RUN(slice, T(&u), I(0), I(-2), NONE, I(1)), "f32[u0 - Max(0, u0 - 2)]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_slice_with_an_unbacked_bound_of_unknown_sign_is_data_dependent(void **state)
{
    (void)state;
    hop_meta x = M("f32[10]");
    const hop_expr *u0 = unbacked(-100, 100);
    assert_string_equal(RUN(slice, T(&x), I(0), S(u0), NONE, I(1)),
                        "HOP_DATA_DEPENDENT: slice: data-dependent: "
                        "cannot decide u0 < 0" U0_UNBACKED);
}

/* ------------------------------------------------------------ cat, stack */

static void
test_cat_adds_the_dim_and_checks_the_others(void **state)
{
    (void)state;
    sym(5);
    sym(6);
    hop_meta a = M("f32[2, 3]"), b = M("i32[4, 3]"), c = M("f32[2, 4]"), v = M("f32[3]");
    hop_meta sa = M("f32[s0, 3]"), sb = M("f32[s1, 3]"), s = M("f32[]");
    assert_string_equal(RUN(cat, L(T(&a), T(&b), T(&a)), I(0)), "f32[8, 3]");
    assert_string_equal(RUN(cat, L(T(&a), T(&c)), I(-1)), "f32[2, 7]");
    assert_string_equal(RUN(cat, L(T(&b)), I(1)), "i32[4, 3]");
    assert_string_equal(RUN(cat, L(T(&sa), T(&sb), T(&a)), I(0)), "f32[s0 + s1 + 2, 3]");
    assert_string_equal(RUN(cat, L(T(&a), T(&c)), I(0)),
                        "HOP_SHAPE: cat: sizes must match except in dim 0, got f32[2, 3] and "
                        "f32[2, 4]");
    assert_string_equal(
        RUN(cat, L(T(&a), T(&v)), I(0)),
        "HOP_SHAPE: cat: tensors must have the same rank, got f32[2, 3] and f32[3]");
    assert_string_equal(RUN(cat, L(T(&s), T(&s)), I(0)),
                        "HOP_SHAPE: cat: zero-dim tensor f32[] cannot be concatenated");
    assert_string_equal(RUN(cat, EMPTY, I(0)),
                        "HOP_INVALID: cat: expected a non-empty list of tensors");
    assert_string_equal(RUN(cat, L(T(&a), I(2)), I(0)),
                        "HOP_INVALID: cat: argument 0 item 1 must be a tensor, got an int");
    assert_string_equal(RUN(cat, L(T(&a)), I(2)),
                        "HOP_INVALID: cat: dim 2 out of range for f32[2, 3]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_stack_inserts_a_new_dim(void **state)
{
    (void)state;
    sym(5);
    hop_meta a = M("f32[2, s0]"), b = M("f64[2, s0]"), c = M("f32[2, 3]");
    assert_string_equal(RUN(stack, L(T(&a), T(&b), T(&a)), I(0)), "f64[3, 2, s0]");
    assert_string_equal(RUN(stack, L(T(&a), T(&a)), I(-1)), "f32[2, s0, 2]");
    assert_string_equal(RUN(stack, L(T(&a)), I(1)), "f32[2, 1, s0]");
    assert_string_equal(RUN(stack, L(T(&a), T(&c)), I(0)),
                        "HOP_SHAPE: stack: all tensors must have the same shape, got f32[2, s0] "
                        "and f32[2, 3]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_string_equal(RUN(stack, L(T(&a), T(&c)), I(3)),
                        "HOP_INVALID: stack: dim 3 out of range for f32[2, s0]");
}

/* ------------------------------------------------------------ factories */

static void
test_full_zeros_ones_take_a_shape_and_a_dtype(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(5);
    assert_string_equal(RUN(full, L(I(2), S(s0)), F(1.5), NONE), "f32[2, s0]");
    assert_string_equal(RUN(full, L(I(2)), I(7), NONE), "i64[2]");
    assert_string_equal(RUN(full, L(I(2)), B(true), NONE), "bool[2]");
    assert_string_equal(RUN(full, L(I(2)), S(s0), NONE), "i64[2]");
    assert_string_equal(RUN(full, EMPTY, I(7), D(F64)), "f64[]");
    assert_string_equal(RUN(zeros, L(I(3), I(0)), NONE), "f32[3, 0]");
    assert_string_equal(RUN(ones, L(S(s0)), D(I32)), "i32[s0]");
    assert_string_equal(RUN(zeros, L(I(-1), I(2)), NONE),
                        "HOP_INVALID: zeros: invalid size -1 in shape [-1, 2]");
    assert_string_equal(
        RUN(full, L(I(2)), L(I(1)), NONE),
        "HOP_INVALID: full: argument 1 must be an int, a float or a bool, got a list");
    assert_string_equal(RUN(ones, I(3), NONE),
                        "HOP_INVALID: ones: argument 0 must be a list of sizes, got an int");
    assert_string_equal(RUN(ones, L(I(3)), I(1)),
                        "HOP_INVALID: ones: argument 1 must be a dtype or None, got an int");
}

static void
test_arange_has_ceil_of_span_over_step_elements(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(9), *s1 = sym(3);
    assert_string_equal(RUN(arange, I(0), I(10), I(1), NONE), "i64[10]");
    assert_string_equal(RUN(arange, I(0), I(10), I(3), NONE), "i64[4]");
    assert_string_equal(RUN(arange, I(10), I(0), I(-3), D(F32)), "f32[4]");
    assert_string_equal(RUN(arange, I(4), I(4), I(1), NONE), "i64[0]");
    assert_string_equal(RUN(arange, I(0), S(s0), I(1), NONE), "i64[s0]");
    assert_string_equal(RUN(arange, I(0), S(s0), I(2), NONE), "i64[(s0 + 1)//2]");
    assert_string_equal(RUN(arange, I(1), S(s0), I(1), D(I32)), "i32[s0 - 1]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_string_equal(RUN(arange, I(0), I(10), S(s1), NONE), "i64[(s1 + 9)//s1]");
    assert_string_equal(RUN(arange, S(s0), I(0), I(-2), NONE), "i64[(s0 + 1)//2]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    /* the sign of a symbolic step follows from the range, or from the hint */
    const hop_expr *neg = hop_sym_neg(env, s1), *shifted = hop_sym_add_int(env, s0, -5);
    assert_string_equal(RUN(arange, S(s0), I(0), S(neg), NONE), "i64[(s0 + s1 - 1)//s1]");
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_string_equal(RUN(arange, I(0), I(10), S(shifted), NONE), "i64[(s0 + 4)//(s0 - 5)]");
    assert_string_equal(guards(), "s0 > 5");
    assert_string_equal(RUN(arange, I(0), I(10), I(0), NONE),
                        "HOP_INVALID: arange: step must be nonzero");
    assert_string_equal(RUN(arange, I(5), I(0), I(1), NONE),
                        "HOP_INVALID: arange: end 0 is on the wrong side of start 5 for step 1");
    assert_string_equal(RUN(arange, F(0.0), I(3), I(1), NONE),
                        "HOP_INVALID: arange: argument 0 must be an int or a SymInt, got a float");
}

/* ------------------------------------------------- symbols and copies */

static void
test_item_makes_an_unbacked_symbol_ranged_by_the_dtype(void **state)
{
    (void)state;
    hop_meta l = M("i64[]"), b = M("bool[1, 1]"), i = M("i32[1]");
    assert_string_equal(RUN(item, T(&l)), "sym u0");
    assert_true(hop_symbol_is_unbacked(last.sym));
    assert_range(last.sym, INT64_MIN, INT64_MAX);
    assert_string_equal(RUN(item, T(&b)), "sym u1");
    assert_range(last.sym, 0, 1);
    assert_string_equal(RUN(item, T(&i)), "sym u2");
    assert_range(last.sym, INT32_MIN, INT32_MAX);
    assert_int_equal(hop_shape_env_nsymbols(env), 3);
}

static void
test_item_of_a_float_or_many_elements_fails_without_a_symbol(void **state)
{
    (void)state;
    sym(5);
    hop_meta f = M("f32[]"), m = M("i64[2, 3]"), s = M("i64[s0]");
    assert_string_equal(RUN(item, T(&f)), "HOP_UNSUPPORTED: item: cannot trace item() of a float "
                                          "tensor f32[]: only integer and bool tensors give a "
                                          "SymInt");
    assert_string_equal(RUN(item, T(&m)), "HOP_SHAPE: item: a tensor with 6 elements cannot be "
                                          "converted to a scalar, got i64[2, 3]");
    assert_string_equal(RUN(item, T(&s)), "HOP_SHAPE: item: a tensor with s0 elements cannot be "
                                          "converted to a scalar, got i64[s0]");
    assert_int_equal(hop_shape_env_nsymbols(env), 1);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_nonzero_gives_an_unbacked_count_bounded_by_numel(void **state)
{
    (void)state;
    sym(5);
    hop_meta x = M("f32[2, 3]"), y = M("bool[s0, 3, 2]"), s = M("i32[]");
    assert_string_equal(RUN(nonzero, T(&x)), "i64[u0, 2]");
    assert_range(last.meta.sizes[0], 0, 6);
    assert_string_equal(RUN(nonzero, T(&y)), "i64[u1, 3]");
    assert_range(last.meta.sizes[0], 0, INT64_MAX);
    assert_string_equal(RUN(nonzero, T(&s)), "i64[u2, 0]");
    assert_range(last.meta.sizes[0], 0, 1);
}

static void
test_sym_size_to_and_clone(void **state)
{
    (void)state;
    sym(5);
    hop_meta x = M("f32[s0, 4]");
    assert_string_equal(RUN(sym_size, T(&x), I(0)), "sym s0");
    assert_string_equal(RUN(sym_size, T(&x), I(-1)), "sym 4");
    assert_string_equal(RUN(to, T(&x), D(I64)), "i64[s0, 4]");
    assert_string_equal(RUN(to, T(&x), NONE),
                        "HOP_INVALID: to: argument 1 must be a dtype, got None");
    assert_string_equal(RUN(clone, T(&x)), "f32[s0, 4]");
    assert_string_equal(RUN(clone, S(last.meta.sizes[0])),
                        "HOP_INVALID: clone: argument 0 must be a tensor, got a SymInt");
}

/* The ops NumPy programs brought: their dtypes and refusals. */
static void
test_numpy_ops_keep_or_promote_dtypes_and_refuse_what_they_cannot_do(void **state)
{
    (void)state;
    hop_meta f = M("f32[3]"), i = M("i32[3]"), b = M("bool[3]"), u = M("u8[2, 3]");
    assert_string_equal(RUN(floor_divide, T(&i), I(2)), "i32[3]");
    assert_string_equal(RUN(remainder, T(&f), T(&i)), "f32[3]");
    assert_string_equal(RUN(floor_divide, T(&b), T(&b)),
                        "HOP_DTYPE: floor_divide: not supported for bool operands, got bool[3] and "
                        "bool[3]");
    assert_string_equal(RUN(bitwise_and, T(&i), I(6)), "i32[3]");
    assert_string_equal(RUN(bitwise_xor, T(&b), B(true)), "bool[3]");
    assert_string_equal(RUN(bitwise_or, T(&f), T(&i)),
                        "HOP_DTYPE: bitwise_or: needs integer or bool operands, got f32[3] and "
                        "i32[3]");
    assert_string_equal(RUN(bitwise_not, T(&f)),
                        "HOP_DTYPE: bitwise_not: needs an integer or bool tensor, got f32[3]");
    assert_string_equal(RUN(sign, T(&i)), "i32[3]");
    assert_string_equal(RUN(floor, T(&i)), "i32[3]");
    assert_string_equal(RUN(round, T(&f)), "f32[3]");
    assert_string_equal(RUN(log1p, T(&i)), "f32[3]");
    assert_string_equal(RUN(prod, T(&u), I(1), B(false)), "u64[2]");
    assert_string_equal(RUN(prod, T(&i), NONE, B(true)), "i64[1]");
    assert_string_equal(RUN(any, T(&f), NONE, B(false)), "bool[]");
    assert_string_equal(RUN(all, T(&u), L(I(0)), B(true)), "bool[1, 3]");
    hop_meta e = M("f32[0, 3]");
    assert_string_equal(RUN(all, T(&e), I(0), B(false)), "bool[3]"); /* empty: True */
    assert_string_equal(RUN(argmin, T(&u), I(-1), B(false)), "i64[2]");
    assert_string_equal(RUN(argmin, T(&b), NONE, B(false)),
                        "HOP_DTYPE: argmin: bool tensors are not supported, got bool[3]");
    assert_string_equal(RUN(cumsum, T(&u), I(1)), "u64[2, 3]");
    assert_string_equal(RUN(cumprod, T(&f), I(0)), "f32[3]");
    assert_string_equal(RUN(cumsum, T(&f), I(1)),
                        "HOP_INVALID: cumsum: dim 1 out of range for f32[3]");
    assert_string_equal(RUN(sort, T(&u), I(-1), B(true), I(0)), "u8[2, 3]");
    assert_string_equal(RUN(argsort, T(&u), I(0), B(false), I(0)), "i64[2, 3]");
}

static void
test_take_puts_the_index_shape_in_place_of_the_dim(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(7);
    hop_meta x = M("f32[4, s0, 5]"), idx = M("i64[2, 3]"), fidx = M("f32[2]");
    hop_meta z = M("f32[]"), e = M("f32[0, 3]"), one = M("i32[1]"), noidx = M("i64[0]");
    (void)s0;
    assert_string_equal(RUN(take, T(&x), I(1), T(&idx)), "f32[4, 2, 3, 5]");
    assert_string_equal(RUN(take, T(&x), I(-1), T(&one)), "f32[4, s0, 1]");
    assert_string_equal(RUN(take, T(&x), I(0), T(&fidx)),
                        "HOP_DTYPE: take: index must be an integer tensor, got f32[2]");
    assert_string_equal(RUN(take, T(&z), I(0), T(&one)),
                        "HOP_SHAPE: take: cannot take from a 0-d tensor, got f32[]");
    assert_string_equal(RUN(take, T(&e), I(0), T(&one)),
                        "HOP_SHAPE: take: cannot take 1 element(s) from dim 0 of size 0 in "
                        "f32[0, 3]");
    assert_string_equal(RUN(take, T(&e), I(0), T(&noidx)), "f32[0, 3]");
    assert_string_equal(RUN(take, T(&x), I(3), T(&one)),
                        "HOP_INVALID: take: dim 3 out of range for f32[4, s0, 5]");
    hop_meta big = M("f32[1, 1, 1, 1, 1, 1, 1, 2]"), bidx = M("i64[1, 1]");
    assert_string_equal(RUN(take, T(&big), I(0), T(&bidx)),
                        "HOP_SHAPE: take: the result would have 9 dims (f32[1, 1, 1, 1, 1, 1, 1, "
                        "2] with an index of i64[1, 1]); hop tensors have at most 8");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_dynamic_indexing_ops_keep_sizes_static_and_check_the_slice_fits(void **state)
{
    (void)state;
    const hop_expr *s0 = sym(7);
    hop_meta x = M("f32[5, s0]"), i = M("i64[]"), u8 = M("u8[]"), fi = M("f32[]");
    hop_meta i1 = M("i64[1]"), z = M("f32[]"), u = M("f32[2, s0]"), ud = M("f64[2, s0]");
    hop_meta m = M("bool[s0]"), m2 = M("bool[5, 1]"), mbad = M("bool[3]"), mf = M("f32[s0]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&i), I(2)), "f32[2, s0]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(-1), T(&u8), S(s0)), "f32[5, s0]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&i), I(0)), "f32[0, s0]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(1), T(&i), NONE), "f32[5]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&i), I(6)),
                        "HOP_SHAPE: dynamic_slice: a slice of 6 elements does not fit in dim 0 "
                        "of f32[5, s0]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&i), I(-1)),
                        "HOP_INVALID: dynamic_slice: size must be >= 0, got -1");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&fi), I(1)),
                        "HOP_DTYPE: dynamic_slice: start must be an integer tensor of rank 0, "
                        "got f32[]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), T(&i1), I(1)),
                        "HOP_DTYPE: dynamic_slice: start must be an integer tensor of rank 0, "
                        "got i64[1]");
    assert_string_equal(RUN(dynamic_slice, T(&x), I(0), I(1), I(1)),
                        "HOP_INVALID: dynamic_slice: argument 2 must be an integer tensor of "
                        "rank 0, got an int");
    assert_string_equal(RUN(dynamic_slice, T(&z), I(0), T(&i), I(1)),
                        "HOP_SHAPE: dynamic_slice: cannot slice a 0-d tensor, got f32[]");
    assert_string_equal(RUN(dynamic_update_slice, T(&x), T(&u), I(0), T(&i)), "f32[5, s0]");
    assert_string_equal(RUN(dynamic_update_slice, T(&x), T(&u), I(0), I(3)), "f32[5, s0]");
    assert_string_equal(RUN(dynamic_update_slice, T(&x), T(&u), I(0), S(s0)), "f32[5, s0]");
    assert_string_equal(RUN(dynamic_update_slice, T(&x), T(&ud), I(0), T(&i)),
                        "HOP_DTYPE: dynamic_update_slice: update f64[2, s0] must have x's dtype "
                        "(x f32[5, s0])");
    assert_string_equal(RUN(dynamic_update_slice, T(&x), T(&u), I(1), T(&i)),
                        "HOP_SHAPE: dynamic_update_slice: update f32[2, s0] does not fit x "
                        "f32[5, s0] along dim 1");
    assert_string_equal(RUN(mask_gradient, T(&x), T(&m)), "f32[5, s0]");
    assert_string_equal(RUN(mask_gradient, T(&x), T(&m2)), "f32[5, s0]");
    assert_string_equal(RUN(mask_gradient, T(&x), T(&mbad)),
                        "HOP_SHAPE: mask_gradient: mask bool[3] does not broadcast to x "
                        "f32[5, s0]");
    assert_string_equal(RUN(mask_gradient, T(&x), T(&mf)),
                        "HOP_DTYPE: mask_gradient: mask must be a bool tensor, got f32[s0]");
}

static void
test_results_of_item_and_nonzero_flow_into_later_ops(void **state)
{
    (void)state;
    hop_meta x = M("f32[2, 3]"), n = M("i64[]");
    assert_string_equal(RUN(nonzero, T(&x)), "i64[u0, 2]");
    hop_meta idx = last.meta;
    assert_string_equal(RUN(sum, T(&idx), I(1), B(false)), "i64[u0]");
    assert_string_equal(RUN(item, T(&n)), "sym u1");
    const hop_expr *u1 = last.sym;
    assert_string_equal(RUN(zeros, L(S(u1), I(2)), NONE), "f32[u1, 2]");
    hop_meta z = last.meta;
    assert_string_equal(RUN(add, T(&z), T(&idx)),
                        "HOP_DATA_DEPENDENT: add: data-dependent: cannot decide u0 == u1 (u0, u1 "
                        "are unbacked; their values are only known at run time)");
}

/* ------------------------------------------------- allocation failures */

/* One round of inferences that allocate (symbols, sums, products, Min,
 * guards, unbacked symbols).  Returns the first failing status. */
static hop_status
infer_round(hop_shape_env *e)
{
    const hop_expr *s0 = hop_shape_env_size_symbol(e, 8, false, true);
    const hop_expr *s1 = hop_shape_env_size_symbol(e, 8, false, true);
    const hop_expr *c4 = hop_sym_const(e, 4);
    if (s0 == NULL || s1 == NULL || c4 == NULL)
        return hop_error_code();
    hop_meta a = {HOP_F32, 2, {s0, c4}}, b = {HOP_F32, 2, {s1, NULL}}, col = {HOP_F32, 2, {s1, c4}};
    hop_meta m = {HOP_F32, 2, {c4, s0}}, one = {HOP_I64, 0, {NULL}};
    if ((b.sizes[1] = hop_sym_const(e, 1)) == NULL)
        return hop_error_code();
    hop_value_info out;
    hop_status st;
    size_t ng;

#define STEP(op, ...)                                                                              \
    do {                                                                                           \
        hop_operand args_[] = {__VA_ARGS__};                                                       \
        ng = hop_shape_env_nguards(e);                                                             \
        st = hop_op_infer(e, HOP_OP_##op, args_, sizeof args_ / sizeof args_[0], &out);            \
        if (st != HOP_OK) {                                                                        \
            assert_int_equal(hop_shape_env_nguards(e), ng);                                        \
            return st;                                                                             \
        }                                                                                          \
    } while (0)

    STEP(reshape, T(&a), L(I(2), I(-1)));
    STEP(add, T(&a), T(&b)); /* guards s0 == s1 */
    STEP(mul, T(&b), T(&a));
    STEP(cat, L(T(&a), T(&col), T(&a)), I(0));
    STEP(matmul, T(&a), T(&m));
    STEP(slice, T(&a), I(0), I(1), I(7), I(2));
    STEP(arange, I(0), S(s0), I(3), NONE);
    STEP(nonzero, T(&a));
    STEP(item, T(&one));
#undef STEP
    return HOP_OK;
}

static void
test_allocation_failures_give_nomem_and_leak_nothing(void **state)
{
    (void)state;
    long base = hop_alloc_live();
    long before = hop_alloc_count();
    hop_shape_env *probe = hop_shape_env_new();
    assert_int_equal(infer_round(probe), HOP_OK);
    hop_shape_env_free(probe);
    long nallocs = hop_alloc_count() - before;
    bool done = false;
    int failures = 0;
    for (long k = 1; !done && k < 100000; k++) {
        hop_alloc_fail_at(k);
        hop_shape_env *e = hop_shape_env_new();
        if (e == NULL) {
            assert_int_equal(hop_error_code(), HOP_NOMEM);
            failures++;
            continue;
        }
        hop_status st = infer_round(e);
        if (st == HOP_OK)
            done = true;
        else {
            if (st != HOP_NOMEM)
                fail_msg("k=%ld: %s: %s", k, hop_status_name(st), hop_error_message());
            failures++;
        }
        hop_shape_env_free(e);
        hop_alloc_fail_at(0);
        assert_int_equal(hop_alloc_live(), base);
    }
    /* every allocation of the round is fallible, and each failure surfaces */
    assert_true(done);
    assert_int_equal(failures, nallocs);
    assert_true(nallocs > 20);
}

/* ------------------------------------------------------- view geometry */

static hop_view
contiguous_view(int rank, const int64_t *sizes)
{
    hop_view v = {.rank = rank};
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        v.sizes[d] = sizes[d];
        v.strides[d] = s;
        s *= sizes[d];
    }
    return v;
}

/* Sizes and strides as text: "[3, 4] [1, 3] +0". */
static const char *
view_text(const hop_view *v, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < v->rank; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)v->sizes[d]);
    n += (size_t)snprintf(buf + n, cap - n, "] [");
    for (int d = 0; d < v->rank; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)v->strides[d]);
    snprintf(buf + n, cap - n, "] +%lld", (long long)v->offset);
    return buf;
}

#define GEOM(op, x, none, ...)                                                                     \
    geom(HOP_OP_##op, (x), (int64_t[]){__VA_ARGS__},                                               \
         (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (none))

static char geom_text[256];

static const char *
geom(hop_op op, const hop_view *x, const int64_t *p, int np, unsigned none)
{
    hop_view v;
    bool copy = false;
    hop_status st = hop_view_of(op, HOP_F32, x, p, np, none, "v", &v, &copy);
    if (st != HOP_OK)
        snprintf(geom_text, sizeof geom_text, "%s: %s", hop_status_name(st), hop_error_message());
    else
        view_text(&v, geom_text, sizeof geom_text);
    if (copy)
        strncat(geom_text, " copy", sizeof geom_text - strlen(geom_text) - 1);
    return geom_text;
}

static void
test_view_geometry_moves_dims_strides_and_offsets(void **state)
{
    (void)state;
    hop_view x = contiguous_view(2, (int64_t[]){3, 4});
    assert_string_equal(GEOM(transpose, &x, 0, 0, -1), "[4, 3] [1, 4] +0");
    assert_string_equal(GEOM(permute, &x, 0, 1, 0), "[4, 3] [1, 4] +0");
    assert_string_equal(GEOM(unsqueeze, &x, 0, 1), "[3, 1, 4] [4, 4, 1] +0");
    assert_string_equal(GEOM(unsqueeze, &x, 0, -1), "[3, 4, 1] [4, 1, 1] +0");
    assert_string_equal(GEOM(select, &x, 0, 1, -1), "[3] [4] +3");
    assert_string_equal(GEOM(slice, &x, 0, 1, 1, 100, 2), "[3, 2] [4, 2] +1");
    assert_string_equal(GEOM(slice, &x, 3, 0, 0, 0, 1), "[3, 4] [4, 1] +0"); /* x[:] */
    assert_string_equal(GEOM(slice, &x, 0, 0, -2, -1, 1), "[1, 4] [4, 1] +4");
    assert_string_equal(GEOM(expand, &x, 0, 2, -1, 4), "[2, 3, 4] [0, 4, 1] +0");
    assert_string_equal(GEOM(reshape, &x, 0, -1), "[12] [1] +0");
    assert_string_equal(GEOM(view, &x, 0, 2, -1, 2), "[2, 3, 2] [6, 2, 1] +0");
    hop_view t;
    bool copy;
    assert_int_equal(
        hop_view_of(HOP_OP_transpose, HOP_F32, &x, (int64_t[]){0, 1}, 2, 0, NULL, &t, &copy),
        HOP_OK);
    /* A transposed input cannot be flattened without a copy; it can be
     * split along a dim that is contiguous within itself. */
    assert_string_equal(GEOM(reshape, &t, 0, 12), "[12] [1] +0 copy");
    assert_string_equal(GEOM(reshape, &t, 0, 2, 2, 3), "[2, 2, 3] [2, 1, 4] +0");
    hop_view one = contiguous_view(2, (int64_t[]){1, 4});
    assert_string_equal(GEOM(squeeze, &one, 0, 1), "[4] [1] +0");
    assert_string_equal(GEOM(expand, &one, 0, 5, 4), "[5, 4] [0, 1] +0");
    hop_view empty = contiguous_view(2, (int64_t[]){0, 3});
    assert_string_equal(GEOM(reshape, &empty, 0, 3, 0), "[3, 0] [1, 1] +0");
}

static void
test_view_geometry_refuses_what_shape_inference_refuses_naming_the_call(void **state)
{
    (void)state;
    hop_view x = contiguous_view(2, (int64_t[]){3, 4});
    assert_string_equal(GEOM(transpose, &x, 0, 0, 2),
                        "HOP_SHAPE: v: dim out of range (input f32[3, 4])");
    assert_string_equal(GEOM(permute, &x, 0, 0),
                        "HOP_SHAPE: v: wrong number of dims (input f32[3, 4])");
    assert_string_equal(GEOM(select, &x, 0, 0, 3),
                        "HOP_INDEX: v: index 3 is out of range for dim 0 of f32[3, 4]");
    assert_string_equal(GEOM(select, &x, 0, 1, -5),
                        "HOP_INDEX: v: index -5 is out of range for dim 1 of f32[3, 4]");
    assert_string_equal(GEOM(slice, &x, 0, 0, 0, 2, 0),
                        "HOP_SHAPE: v: step must be positive (input f32[3, 4])");
    assert_string_equal(GEOM(expand, &x, 0, 4),
                        "HOP_SHAPE: v: cannot expand to fewer dims (input f32[3, 4])");
    assert_string_equal(GEOM(expand, &x, 0, -1, 3, 4),
                        "HOP_SHAPE: v: -1 is not allowed for a new dim (input f32[3, 4])");
    assert_string_equal(GEOM(expand, &x, 0, 3, 5),
                        "HOP_SHAPE: v: sizes do not match (input f32[3, 4])");
    assert_string_equal(GEOM(reshape, &x, 0, 5, -1),
                        "HOP_SHAPE: v: the number of elements differs (input f32[3, 4])");
    assert_string_equal(GEOM(reshape, &x, 0, -3, -4),
                        "HOP_SHAPE: v: negative size (input f32[3, 4])");
    assert_string_equal(GEOM(reshape, &x, 0, INT64_MAX, 2),
                        "HOP_INVALID: reshape: int64 overflow computing 9223372036854775807 * 2");
    assert_string_equal(GEOM(reshape, &x, 0, 1, 1, 1, 1, 1, 1, 1, 3, 4),
                        "HOP_SHAPE: v: too many dims (input f32[3, 4])");
    assert_string_equal(GEOM(add, &x, 0, 1), "HOP_UNSUPPORTED: v: not a view op");
}

/* The dims hop_view_of moves are the sizes shape inference gives, over
 * every parameter of each view op on a few shapes. */
static void
test_view_geometry_gives_the_sizes_shape_inference_gives(void **state)
{
    (void)state;
    const int64_t shapes[][3] = {{3, 4, 1}, {1, 5, 2}, {2, 1, 6}};
    int checked = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        hop_view x = contiguous_view(3, shapes[si]);
        hop_meta m = {.dtype = HOP_F32, .rank = 3};
        for (int d = 0; d < 3; d++)
            m.sizes[d] = hop_sym_const(env, shapes[si][d]);
        for (int64_t a = -3; a < 3; a++) {
            for (int64_t b = -3; b < 6; b++) {
                struct {
                    hop_op op;
                    hop_operand args[5];
                    size_t nargs;
                    int64_t p[4];
                    int np;
                    unsigned none;
                    bool applies;
                } cases[] = {
                    {HOP_OP_transpose, {T(&m), I(a), I(b % 3)}, 3, {a, b % 3}, 2, 0, true},
                    {HOP_OP_unsqueeze, {T(&m), I(a)}, 2, {a}, 1, 0, b == 0},
                    {HOP_OP_select, {T(&m), I(a), I(b - 3)}, 3, {a, b - 3}, 2, 0, true},
                    {HOP_OP_slice,
                     {T(&m), I(a), I(b - 3), I(b), I(b % 3 + 1)},
                     5,
                     {a, b - 3, b, b % 3 + 1},
                     4,
                     0,
                     true},
                    {HOP_OP_slice,
                     {T(&m), I(a), NONE, I(b - 3), I(1)},
                     5,
                     {a, 0, b - 3, 1},
                     4,
                     1,
                     true},
                    {HOP_OP_slice,
                     {T(&m), I(a), I(b - 3), NONE, I(2)},
                     5,
                     {a, b - 3, 0, 2},
                     4,
                     2,
                     true},
                };
                for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                    if (!cases[k].applies)
                        continue;
                    hop_value_info info;
                    hop_status want =
                        hop_op_infer(env, cases[k].op, cases[k].args, cases[k].nargs, &info);
                    hop_error_clear();
                    hop_view v;
                    bool copy;
                    hop_status got = hop_view_of(cases[k].op, HOP_F32, &x, cases[k].p, cases[k].np,
                                                 cases[k].none, NULL, &v, &copy);
                    hop_error_clear();
                    assert_int_equal(got == HOP_OK, want == HOP_OK);
                    if (got != HOP_OK)
                        continue;
                    assert_int_equal(v.rank, info.meta.rank);
                    for (int d = 0; d < v.rank; d++) {
                        int64_t size;
                        assert_true(hop_expr_const_value(info.meta.sizes[d], &size));
                        assert_int_equal(v.sizes[d], size);
                    }
                    checked++;
                }
            }
        }
    }
    assert_true(checked > 300);
}

/* A value's metadata with a dim inserted or dropped (map's rows and stacked
 * outputs, a batch in front): the sizes shift around d; a non-tensor, a dim
 * out of range or a full rank give kind NONE. */
static void
test_value_info_insert_and_drop_dim_shift_the_sizes_around_d(void **state)
{
    (void)state;
    char buf[128];
    const hop_expr *seven = hop_sym_const(env, 7);
    hop_value_info v = {.kind = HOP_VALUE_TENSOR, .meta = M("f32[2, 3]")};
    const char *want[] = {"f32[7, 2, 3]", "f32[2, 7, 3]", "f32[2, 3, 7]"};
    for (int d = 0; d <= 2; d++) {
        hop_value_info w = hop_value_info_insert_dim(&v, d, seven);
        assert_int_equal(w.kind, HOP_VALUE_TENSOR);
        hop_meta_print(&w.meta, buf, sizeof buf);
        assert_string_equal(buf, want[d]);
        hop_value_info back = hop_value_info_drop_dim(&w, d);
        hop_meta_print(&back.meta, buf, sizeof buf);
        assert_string_equal(buf, "f32[2, 3]");
        assert_null(back.meta.sizes[2]);
    }
    assert_int_equal(hop_value_info_insert_dim(&v, 3, seven).kind, HOP_VALUE_NONE);
    assert_int_equal(hop_value_info_insert_dim(&v, -1, seven).kind, HOP_VALUE_NONE);
    assert_int_equal(hop_value_info_drop_dim(&v, 2).kind, HOP_VALUE_NONE);
    hop_value_info full = {.kind = HOP_VALUE_TENSOR, .meta = M("f32[1, 1, 1, 1, 1, 1, 1, 1]")};
    assert_int_equal(hop_value_info_insert_dim(&full, 0, seven).kind, HOP_VALUE_NONE);
    hop_value_info sym = {.kind = HOP_VALUE_SYM, .sym = seven};
    assert_int_equal(hop_value_info_insert_dim(&sym, 0, seven).kind, HOP_VALUE_NONE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        TEST(test_op_table_rows_come_from_the_x_macro),
        TEST(test_value_info_insert_and_drop_dim_shift_the_sizes_around_d),
        TEST(test_op_from_name_finds_every_op_and_reports_unknown_names),
        TEST(test_wrong_operand_count_or_kind_names_the_op_and_argument),
        TEST(test_dim_out_of_range_names_the_op_and_shape),
        TEST(test_unary_float_ops_promote_ints_and_bools_to_f32),
        TEST(test_neg_abs_relu_keep_int_dtypes_and_neg_of_bool_is_a_dtype_error),
        TEST(test_tensor_dtypes_promote_by_kind_and_width),
        TEST(test_complex_dtypes_promote_and_ops_outside_numpys_set_refuse_them),
        TEST(test_python_scalars_are_weak_in_promotion),
        TEST(test_binary_ops_broadcast_constant_shapes),
        TEST(test_div_is_true_division_and_sub_refuses_bools),
        TEST(test_broadcasting_equal_symbols_or_ones_records_no_guard),
        TEST(test_broadcasting_distinct_symbols_with_equal_hints_guards_their_equality),
        TEST(test_broadcasting_a_symbol_against_its_hint_specialises_to_the_constant),
        TEST(test_broadcasting_mismatched_symbols_is_a_shape_error_and_keeps_no_guard),
        TEST(test_broadcasting_unbacked_against_backed_is_data_dependent),
        TEST(test_broadcasting_an_unbacked_size_that_may_be_one_is_data_dependent),
        TEST(test_comparisons_and_logical_ops_give_bool),
        TEST(test_where_needs_a_bool_condition_and_broadcasts_all_three),
        TEST(test_reductions_drop_or_keep_the_reduced_dims),
        TEST(test_reduction_dtypes_and_errors),
        TEST(test_argmax_gives_i64_over_a_dim_or_the_flattened_tensor),
        TEST(test_matmul_handles_vectors_matrices_and_batches),
        TEST(test_matmul_batch_dims_broadcast_symbolically),
        TEST(test_matmul_errors_name_both_operands),
        TEST(test_matmul_inner_size_against_an_unbacked_one_is_data_dependent),
        TEST(test_reshape_checks_numel_and_infers_minus_one),
        TEST(test_reshape_with_minus_one_on_symbolic_shapes),
        TEST(test_reshape_decides_numel_through_the_shape_env),
        TEST(test_reshape_of_unbacked_numel_is_data_dependent),
        TEST(test_transpose_and_permute_move_dims),
        TEST(test_unsqueeze_and_squeeze),
        TEST(test_expand_grows_size_one_dims_only),
        TEST(test_select_drops_the_dim_and_checks_the_index_when_decidable),
        TEST(test_slice_follows_python_clamping_on_constant_sizes),
        TEST(test_slice_of_symbolic_sizes_stays_symbolic_without_guards),
        TEST(test_slice_with_an_unbacked_bound_of_unknown_sign_is_data_dependent),
        TEST(test_cat_adds_the_dim_and_checks_the_others),
        TEST(test_stack_inserts_a_new_dim),
        TEST(test_full_zeros_ones_take_a_shape_and_a_dtype),
        TEST(test_arange_has_ceil_of_span_over_step_elements),
        TEST(test_item_makes_an_unbacked_symbol_ranged_by_the_dtype),
        TEST(test_item_of_a_float_or_many_elements_fails_without_a_symbol),
        TEST(test_nonzero_gives_an_unbacked_count_bounded_by_numel),
        TEST(test_sym_size_to_and_clone),
        TEST(test_numpy_ops_keep_or_promote_dtypes_and_refuse_what_they_cannot_do),
        TEST(test_take_puts_the_index_shape_in_place_of_the_dim),
        TEST(test_dynamic_indexing_ops_keep_sizes_static_and_check_the_slice_fits),
        TEST(test_results_of_item_and_nonzero_flow_into_later_ops),
        TEST(test_view_geometry_moves_dims_strides_and_offsets),
        TEST(test_view_geometry_refuses_what_shape_inference_refuses_naming_the_call),
        TEST(test_view_geometry_gives_the_sizes_shape_inference_gives),
        TEST(test_allocation_failures_give_nomem_and_leak_nothing),
#undef TEST
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
