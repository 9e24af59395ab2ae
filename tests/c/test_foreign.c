/*
 * tests/c/test_foreign.c - foreign kernels both ways: C functions registered
 * from their prototypes and called eagerly, from traced graphs, from plans
 * and from the op-by-op interpreter (inside cond, map and nested HOPs with
 * lifting); plans exported as C function pointers and called with raw
 * arrays; the exact errors of signatures, operands and exports; DCE of
 * side-effecting calls; allocation-failure sweeps; a plan keeping its
 * kernels alive.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N hop_arg_node
#define LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

/* ------------------------------------------------------------ kernels */

static int saxpy_calls;

static void
saxpy(int64_t n, float a, const float *x, float *y)
{
    saxpy_calls++;
    for (int64_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

static int ticks_true, ticks_false;

static void
tick_true(int64_t k, const float *x)
{
    (void)x;
    ticks_true += (int)k;
}

static void
tick_false(int64_t k, const float *x)
{
    (void)x;
    ticks_false += (int)k;
}

static int row_calls;

/* Doubles a row and adds its index in the row count it was given. */
static void
double_row(int64_t n, double *row)
{
    row_calls++;
    for (int64_t i = 0; i < n; i++)
        row[i] *= 2;
}

static int
checked_sum(int32_t n, const int64_t *x, int64_t *acc, bool fail)
{
    if (fail)
        return 7;
    for (int32_t i = 0; i < n; i++)
        acc[0] += x[i];
    return 0;
}

static void
nothing(void)
{
}

/* ------------------------------------------------------------ helpers */

/* A failed test must not leave its kernels registered for the next one. */
static int
unregister_all(void **state)
{
    (void)state;
    const char *names[] = {"saxpy",       "tick_true", "tick_false", "double_row",
                           "checked_sum", "nothing",   "gemv"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        hop_foreign_unregister(names[i]);
    hop_error_clear();
    return 0;
}

static hop_tensor *
f32(int64_t n, const float *v)
{
    hop_tensor *t = hop_tensor_from_data(HOP_F32, 1, &n, v);
    assert_non_null(t);
    return t;
}

static void
assert_f32(const hop_tensor *t, int64_t n, const float *want)
{
    assert_non_null(t);
    assert_int_equal(t->dtype, HOP_F32);
    assert_int_equal(t->rank, 1);
    assert_int_equal(t->sizes[0], n);
    for (int64_t i = 0; i < n; i++) {
        float got = ((const float *)t->data)[i * t->strides[0]];
        if (got != want[i]) {
            fprintf(stderr, "element %lld: %.9g, want %.9g\n", (long long)i, got, want[i]);
            fail();
        }
    }
}

static const hop_foreign *
reg(const char *sig, void *fn, bool side_effects)
{
    const hop_foreign *f = NULL;
    hop_foreign_options o = {.side_effects = side_effects};
    hop_status st = hop_foreign_register(sig, fn, &o, &f);
    if (st != HOP_OK)
        fprintf(stderr, "register: %s\n", hop_error_message());
    assert_int_equal(st, HOP_OK);
    return f;
}

#define SAXPY_SIG "void saxpy(int64_t n, float a, const float *x, float *y)"

static void
finish(hop_output_graph *og, hop_node *const *results, size_t n)
{
    hop_arg outs[8];
    for (size_t i = 0; i < n; i++) {
        assert_non_null(results[i]);
        outs[i] = N(results[i]);
    }
    assert_non_null(hop_tracer_output(hop_output_graph_root(og), outs, n));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
}

static void
assert_code(const hop_output_graph *og, const char *want)
{
    char *code = hop_graph_code(hop_output_graph_root_graph(og));
    assert_non_null(code);
    if (strcmp(code, want) != 0)
        fprintf(stderr, "got:\n%s\nwant:\n%s\n", code, want);
    assert_string_equal(code, want);
    hop_free(code);
}

static hop_plan *
lower(const hop_output_graph *og)
{
    hop_plan *p = hop_lower(og, NULL);
    if (p == NULL)
        fprintf(stderr, "hop_lower: %s\n", hop_error_message());
    assert_non_null(p);
    return p;
}

/* ------------------------------------------------------ registration */

static void
test_a_signature_parses_to_parameters_and_canonical_text(void **state)
{
    (void)state;
    const hop_foreign *f = NULL;
    assert_int_equal(hop_foreign_register(" void  saxpy ( int64_t n,float a , const float* x,float "
                                          "*const y ) ; ",
                                          (void *)saxpy, NULL, &f),
                     HOP_OK);
    assert_string_equal(hop_foreign_name(f), "saxpy");
    assert_string_equal(hop_foreign_signature(f), SAXPY_SIG);
    assert_int_equal(hop_foreign_nparams(f), 4);
    assert_int_equal(hop_foreign_noutputs(f), 1);
    assert_false(hop_foreign_side_effects(f));
    const hop_foreign_param *p = hop_foreign_param_at(f, 0);
    assert_string_equal(p->name, "n");
    assert_int_equal(p->kind, HOP_FOREIGN_SCALAR);
    assert_int_equal(p->dtype, HOP_I64);
    p = hop_foreign_param_at(f, 2);
    assert_string_equal(p->name, "x");
    assert_int_equal(p->kind, HOP_FOREIGN_IN);
    assert_int_equal(p->dtype, HOP_F32);
    p = hop_foreign_param_at(f, 3);
    assert_int_equal(p->kind, HOP_FOREIGN_INOUT);
    assert_null(hop_foreign_param_at(f, 4));
    assert_ptr_equal(hop_foreign_find("saxpy"), f);

    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, NULL, NULL), HOP_EXISTS);
    assert_string_equal(hop_error_message(),
                        "hop_foreign_register: a foreign kernel named saxpy is registered already");
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_null(hop_foreign_find("saxpy"));
    assert_int_equal(hop_error_code(), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(),
                        "hop_foreign_find: no foreign kernel named saxpy is registered");
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(),
                        "hop_foreign_unregister: no foreign kernel named saxpy is registered");

    /* (void), int returns, bool and int32_t scalars, int64_t pointers */
    f = reg("void nothing(void)", (void *)nothing, false);
    assert_string_equal(hop_foreign_signature(f), "void nothing(void)");
    assert_int_equal(hop_foreign_nparams(f), 0);
    f = reg("int checked_sum(int n, const int64_t *x, int64_t *acc, _Bool fail)",
            (void *)checked_sum, false);
    assert_string_equal(hop_foreign_signature(f),
                        "int checked_sum(int32_t n, const int64_t *x, int64_t *acc, bool fail)");
    assert_int_equal(hop_foreign_unregister("nothing"), HOP_OK);
    assert_int_equal(hop_foreign_unregister("checked_sum"), HOP_OK);
}

static void
test_signature_errors_name_the_column_and_parameter(void **state)
{
    (void)state;
    static const struct {
        const char *sig;
        const char *message;
    } cases[] = {
        {"void saxpy(int64_t n, flaot a)",
         "foreign signature: column 23 (parameter 2): unknown type 'flaot' (types: void, bool, "
         "int, int32_t, int64_t, float, double)"},
        {"void f(float)", "foreign signature: column 13 (parameter 1): expected a parameter name, "
                          "got ')'"},
        {"void f(float *x y)",
         "foreign signature: column 17 (parameter 1): expected ',' or ')' after the parameter, got "
         "'y'"},
        {"void f(float **x)",
         "foreign signature: column 15 (parameter 1): pointers to pointers are not supported"},
        {"void f(void *p)", "foreign signature: column 14 (parameter 1): void * has no dtype; use "
                            "a typed pointer such as float *"},
        {"void f(int a, void b)",
         "foreign signature: column 20 (parameter 2): a parameter cannot be void"},
        {"void f(int a, float a)",
         "foreign signature: column 21 (parameter 2): duplicate parameter name 'a'"},
        {"float f(int a)", "foreign signature: column 1: the return type must be void or int (a "
                           "status: non-zero fails)"},
        {"void (int a)", "foreign signature: column 6: expected the function's name, got '('"},
        {"void f int a", "foreign signature: column 8: expected '(' after f, got 'int'"},
        {"void f(int a", "foreign signature: column 13 (parameter 1): expected ',' or ')' after "
                         "the parameter, got the end"},
        {"void f(int a) extra", "foreign signature: column 15: unexpected 'extra' after the "
                                "signature"},
        {"", "foreign signature: column 1: expected a type, got the end"},
        {"void f(int a, float float)",
         "foreign signature: column 21 (parameter 2): expected a parameter name, got 'float'"},
    };
    long base = hop_alloc_live();
    for (size_t i = 0; i < LEN(cases); i++) {
        assert_int_equal(hop_foreign_register(cases[i].sig, (void *)nothing, NULL, NULL),
                         HOP_INVALID);
        if (strcmp(hop_error_message(), cases[i].message) != 0)
            fprintf(stderr, "%s\n  got:  %s\n  want: %s\n", cases[i].sig, hop_error_message(),
                    cases[i].message);
        assert_string_equal(hop_error_message(), cases[i].message);
        assert_null(hop_foreign_find("f"));
    }
    char many[512] = "void f(";
    for (int i = 0; i < 17; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sint a%d", i ? ", " : "", i);
    strcat(many, ")");
    assert_int_equal(hop_foreign_register(many, (void *)nothing, NULL, NULL), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "foreign signature: column 142 (parameter 17): more than 16 parameters");
    assert_int_equal(hop_foreign_register(NULL, (void *)nothing, NULL, NULL), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_foreign_register: NULL signature");
    assert_int_equal(hop_foreign_register("void f(void)", NULL, NULL, NULL), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_foreign_register: NULL function");
    assert_int_equal(hop_alloc_live(), base);
}

/* ------------------------------------------------------------- eager */

static void
test_saxpy_eagerly_returns_a_new_tensor_and_leaves_y_alone(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_tensor *x = f32(4, (float[]){1, 2, 3, 4}), *y = f32(4, (float[]){10, 20, 30, 40});
    hop_rt_arg args[] = {hop_rt_int(4), hop_rt_float(2.0), hop_rt_tensor(x), hop_rt_tensor(y)};
    hop_tensor *out = NULL;
    saxpy_calls = 0;
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_OK);
    assert_int_equal(saxpy_calls, 1);
    assert_f32(out, 4, (float[]){12, 24, 36, 48});
    assert_f32(y, 4, (float[]){10, 20, 30, 40});
    assert_ptr_not_equal(out->data, y->data);
    hop_tensor_release(out);

    /* an int for a float parameter; n smaller than the tensors */
    args[0] = hop_rt_int(2);
    args[1] = hop_rt_int(-1);
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_OK);
    assert_f32(out, 4, (float[]){9, 18, 30, 40});
    hop_tensor_release(out);

    /* a strided x is made contiguous first */
    hop_tensor *x8 = f32(8, (float[]){1, -1, 2, -1, 3, -1, 4, -1});
    hop_tensor *xs = hop_tensor_view(x8, 1, (int64_t[]){4}, (int64_t[]){2}, 0);
    args[0] = hop_rt_int(4);
    args[1] = hop_rt_float(0.5);
    args[2] = hop_rt_tensor(xs);
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_OK);
    assert_f32(out, 4, (float[]){10.5f, 21, 31.5f, 42});
    hop_tensor_release(out);

    /* into the caller's tensor, which may be y itself (in place) */
    args[2] = hop_rt_tensor(x);
    args[1] = hop_rt_float(1.0);
    assert_int_equal(hop_foreign_call_into(f, args, 4, &y, 1), HOP_OK);
    assert_f32(y, 4, (float[]){11, 22, 33, 44});
    hop_tensor *ts[] = {x, y, x8, xs};
    for (size_t i = 0; i < LEN(ts); i++)
        hop_tensor_release(ts[i]);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

static hop_status
check_n(void *ud, const hop_foreign *f, const hop_rt_arg *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    if (args[0].u.i > hop_tensor_numel(args[2].u.tensor))
        return hop_error(HOP_SHAPE, "%s: n = %lld exceeds the %lld elements of x",
                         hop_foreign_name(f), (long long)args[0].u.i,
                         (long long)hop_tensor_numel(args[2].u.tensor));
    return HOP_OK;
}

static void
test_eager_operand_errors_name_the_parameter(void **state)
{
    (void)state;
    hop_foreign_options o = {.check = check_n};
    const hop_foreign *f = NULL;
    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, &o, &f), HOP_OK);
    hop_tensor *x = f32(3, (float[]){1, 2, 3}), *y = f32(3, (float[]){1, 1, 1});
    int64_t two = 2;
    hop_tensor *yi = hop_tensor_from_data(HOP_I64, 1, &two, (int64_t[]){1, 2});
    hop_tensor *y2 = f32(2, (float[]){1, 1});
    hop_tensor *out = (hop_tensor *)1;
    struct {
        hop_rt_arg args[4];
        size_t nargs;
        hop_status code;
        const char *message;
    } cases[] = {
        {{hop_rt_int(3), hop_rt_float(1), hop_rt_tensor(x)},
         3,
         HOP_INVALID,
         "saxpy: takes 4 operands (" SAXPY_SIG "), got 3"},
        {{hop_rt_tensor(x), hop_rt_float(1), hop_rt_tensor(x), hop_rt_tensor(y)},
         4,
         HOP_INVALID,
         "saxpy: parameter 1 (int64_t n) takes an int, got a tensor f32[3]"},
        {{hop_rt_int(3), hop_rt_bool(true), hop_rt_tensor(x), hop_rt_tensor(y)},
         4,
         HOP_INVALID,
         "saxpy: parameter 2 (float a) takes a float or an int, got a bool"},
        {{hop_rt_int(3), hop_rt_float(1), hop_rt_int(0), hop_rt_tensor(y)},
         4,
         HOP_INVALID,
         "saxpy: parameter 3 (const float *x) takes a tensor, got an int"},
        {{hop_rt_int(3), hop_rt_float(1), hop_rt_tensor(x), hop_rt_tensor(yi)},
         4,
         HOP_DTYPE,
         "saxpy: parameter 4 (float *y) takes f32, got i64[2]"},
        {{hop_rt_int(4), hop_rt_float(1), hop_rt_tensor(x), hop_rt_tensor(y)},
         4,
         HOP_SHAPE,
         "saxpy: n = 4 exceeds the 3 elements of x"},
    };
    for (size_t i = 0; i < LEN(cases); i++) {
        out = (hop_tensor *)1;
        assert_int_equal(hop_foreign_call(f, cases[i].args, cases[i].nargs, &out, 1),
                         cases[i].code);
        assert_string_equal(hop_error_message(), cases[i].message);
        assert_null(out);
    }
    hop_rt_arg ok[] = {hop_rt_int(3), hop_rt_float(1), hop_rt_tensor(x), hop_rt_tensor(y)};
    hop_tensor *outs2[2] = {(hop_tensor *)1, (hop_tensor *)1};
    assert_int_equal(hop_foreign_call(f, ok, 4, outs2, 2), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "saxpy: gives 1 output (one per non-const pointer), not 2");
    assert_null(outs2[0]);
    assert_null(outs2[1]);
    assert_int_equal(hop_foreign_call_into(f, ok, 4, &y2, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "saxpy: output 0 is f32[2] but parameter 4 (y) is f32[3]");
    assert_f32(y, 3, (float[]){1, 1, 1});

    /* an int return is a status: non-zero fails */
    f = reg("int checked_sum(int32_t n, const int64_t *x, int64_t *acc, bool fail)",
            (void *)checked_sum, false);
    int64_t three = 3, one = 1;
    hop_tensor *xi = hop_tensor_from_data(HOP_I64, 1, &three, (int64_t[]){1, 2, 3});
    hop_tensor *acc = hop_tensor_from_data(HOP_I64, 1, &one, (int64_t[]){100});
    hop_rt_arg cs[] = {hop_rt_int(3), hop_rt_tensor(xi), hop_rt_tensor(acc), hop_rt_bool(false)};
    assert_int_equal(hop_foreign_call(f, cs, 4, &out, 1), HOP_OK);
    assert_int_equal(((int64_t *)out->data)[0], 106);
    hop_tensor_release(out);
    cs[3] = hop_rt_bool(true);
    assert_int_equal(hop_foreign_call(f, cs, 4, &out, 1), HOP_RUNTIME);
    assert_string_equal(hop_error_message(), "checked_sum: the kernel returned 7");
    assert_null(out);
    cs[3] = hop_rt_bool(false);
    cs[0] = hop_rt_int(1ll << 40);
    assert_int_equal(hop_foreign_call(f, cs, 4, &out, 1), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "checked_sum: parameter 1 (int32_t n) takes an int32_t, got 1099511627776");
    hop_tensor *ts[] = {x, y, yi, y2, xi, acc};
    for (size_t i = 0; i < LEN(ts); i++)
        hop_tensor_release(ts[i]);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(hop_foreign_unregister("checked_sum"), HOP_OK);
}

/* ----------------------------------------------------- graphs and plans */

/* out = saxpy(s0, 2.0, x, y)[0] + 1, with x, y: f32[s0] */
static hop_output_graph *
saxpy_program(const hop_foreign *f, hop_node **call_out)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){4}, true);
    hop_tracer *t = hop_output_graph_root(og);
    hop_values r = {0};
    hop_arg args[] = {hop_arg_sym(x->meta->meta.sizes[0]), hop_arg_float(2.0), N(x), N(y)};
    assert_int_equal(hop_tracer_call_foreign(t, f, args, 4, &r), HOP_OK);
    assert_int_equal(r.n, 1);
    hop_node *out = OP(t, HOP_OP_add, N(r.items[0]), hop_arg_int(1));
    if (call_out)
        *call_out = r.items[0];
    finish(og, &out, 1);
    hop_values_clear(&r);
    return og;
}

static void
test_saxpy_in_a_plan_and_op_by_op_at_two_sizes(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = saxpy_program(f, NULL);
    assert_code(og, "def forward(s0: \"Sym(s0)\", x: \"f32[s0]\", y: \"f32[s0]\"):\n"
                    "    saxpy: \"f32[s0]\" = foreign.saxpy(s0, 2.0, x, y)\n"
                    "    getitem: \"f32[s0]\" = saxpy[0]\n"
                    "    add: \"f32[s0]\" = add(getitem, 1)\n"
                    "    return (add,)\n");
    char *table = hop_graph_table(hop_output_graph_root_graph(og));
    assert_non_null(strstr(table, "call_foreign  saxpy    saxpy    (s0, 2.0, x, y)  f32[s0]"));
    hop_free(table);
    hop_plan *p = lower(og);
    char *dump = hop_plan_dump(p);
    assert_non_null(strstr(dump, "Extern"));
    assert_non_null(strstr(dump, "saxpy(s0, 2, x, y)"));
    assert_non_null(strstr(dump, "foreign saxpy"));
    hop_free(dump);
    for (int64_t n = 4; n <= 7; n += 3) {
        float xv[7] = {1, 2, 3, 4, 5, 6, 7}, yv[7] = {10, 20, 30, 40, 50, 60, 70};
        float want[7];
        for (int i = 0; i < n; i++)
            want[i] = yv[i] + 2 * xv[i] + 1;
        hop_tensor *in[] = {f32(n, xv), f32(n, yv)}, *got = NULL, *ref = NULL;
        saxpy_calls = 0;
        assert_int_equal(hop_plan_run(p, in, 2, &got, 1), HOP_OK);
        assert_int_equal(saxpy_calls, 1);
        assert_f32(got, n, want);
        assert_f32(in[1], n, yv); /* the plan's input is never written */
        assert_int_equal(hop_graph_eval(og, in, 2, &ref, 1), HOP_OK);
        assert_int_equal(saxpy_calls, 2);
        assert_f32(ref, n, want);
        hop_tensor *ts[] = {in[0], in[1], got, ref};
        for (size_t i = 0; i < LEN(ts); i++)
            hop_tensor_release(ts[i]);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

static void
test_tracing_errors_name_the_parameter_and_change_nothing(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    hop_node *xi = hop_output_graph_add_input(og, "xi", HOP_I64, 2, (int64_t[]){3, 5}, false);
    hop_tracer *t = hop_output_graph_root(og);
    hop_values r = {0};
    const hop_expr *s0 = x->meta->meta.sizes[0];
    struct {
        hop_arg args[4];
        size_t nargs;
        hop_status code;
        const char *message;
    } cases[] = {
        {{hop_arg_sym(s0), hop_arg_float(2), N(x)},
         3,
         HOP_INVALID,
         "saxpy: takes 4 operands (" SAXPY_SIG "), got 3"},
        {{N(x), hop_arg_float(2), N(x), N(x)},
         4,
         HOP_INVALID,
         "saxpy: parameter 1 (int64_t n) takes an int, got a tensor f32[s0]"},
        {{hop_arg_float(4), hop_arg_float(2), N(x), N(x)},
         4,
         HOP_INVALID,
         "saxpy: parameter 1 (int64_t n) takes an int, got a float"},
        {{hop_arg_int(4), hop_arg_bool(true), N(x), N(x)},
         4,
         HOP_INVALID,
         "saxpy: parameter 2 (float a) takes a float or an int, got a bool"},
        {{hop_arg_int(4), hop_arg_float(2), hop_arg_sym(s0), N(x)},
         4,
         HOP_INVALID,
         "saxpy: parameter 3 (const float *x) takes a tensor, got a SymInt"},
        {{hop_arg_int(4), hop_arg_float(2), N(x), N(xi)},
         4,
         HOP_DTYPE,
         "saxpy: parameter 4 (float *y) takes f32, got i64[3, 5]"},
    };
    char *before = hop_graph_code(hop_output_graph_root_graph(og));
    for (size_t i = 0; i < LEN(cases); i++) {
        assert_int_equal(hop_tracer_call_foreign(t, f, cases[i].args, cases[i].nargs, &r),
                         cases[i].code);
        assert_string_equal(hop_error_message(), cases[i].message);
        assert_int_equal(r.n, 0);
    }
    char *after = hop_graph_code(hop_output_graph_root_graph(og));
    assert_string_equal(before, after);
    hop_free(before);
    hop_free(after);
    hop_values_clear(&r);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

/* ------------------------------------------------------------- cond */

typedef struct branch {
    const hop_foreign *tick;
    hop_node *x;
    hop_op op;
} branch;

/* tick(3, x) for its side effect, then op(x). */
static hop_status
ticking_branch(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)in;
    (void)n;
    branch *b = ud;
    hop_values none = {0};
    hop_arg args[] = {hop_arg_int(3), N(b->x)};
    hop_status st = hop_tracer_call_foreign(t, b->tick, args, 2, &none);
    hop_values_clear(&none);
    if (st != HOP_OK)
        return st;
    hop_node *v = OP(t, b->op, N(b->x));
    return v ? hop_values_push(out, v) : hop_error_code();
}

static void
test_cond_runs_the_side_effects_of_the_taken_branch_only(void **state)
{
    (void)state;
    branch bt = {reg("void tick_true(int64_t k, const float *x)", (void *)tick_true, true), NULL,
                 HOP_OP_sin};
    branch bf = {reg("void tick_false(int64_t k, const float *x)", (void *)tick_false, true), NULL,
                 HOP_OP_cos};
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){3}, true);
    hop_tracer *t = hop_output_graph_root(og);
    hop_node *s = OP(t, HOP_OP_sum, N(x), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = OP(t, HOP_OP_gt, N(s), hop_arg_int(0));
    bt.x = bf.x = x;
    hop_values r = {0};
    assert_int_equal(hop_cond(og, N(pred), (hop_body){ticking_branch, &bt},
                              (hop_body){ticking_branch, &bf}, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    assert_code(og, "def forward(s0: \"Sym(s0)\", x: \"f32[s0]\"):\n"
                    "    def cond_true_0(s0: \"Sym(s0)\", x: \"f32[s0]\"):\n"
                    "        tick_true: \"()\" = foreign.tick_true(3, x)  # side effects\n"
                    "        sin: \"f32[s0]\" = sin(x)\n"
                    "        return (sin,)\n"
                    "\n"
                    "    def cond_false_0(s0: \"Sym(s0)\", x: \"f32[s0]\"):\n"
                    "        tick_false: \"()\" = foreign.tick_false(3, x)  # side effects\n"
                    "        cos: \"f32[s0]\" = cos(x)\n"
                    "        return (cos,)\n"
                    "\n"
                    "    sum: \"f32[]\" = sum(x, None, False)\n"
                    "    gt: \"bool[]\" = gt(sum, 0)\n"
                    "    cond: \"f32[s0]\" = cond(gt, cond_true_0, cond_false_0, (s0, x))\n"
                    "    getitem: \"f32[s0]\" = cond[0]\n"
                    "    return (getitem,)\n");
    hop_plan *p = lower(og);
    for (int sign = 0; sign < 2; sign++) {
        float v = sign ? 1.0f : -1.0f;
        hop_tensor *in = f32(3, (float[]){v, v, v}), *out = NULL;
        ticks_true = ticks_false = 0;
        assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
        assert_int_equal(ticks_true, sign ? 3 : 0);
        assert_int_equal(ticks_false, sign ? 0 : 3);
        hop_tensor_release(out);
        assert_int_equal(hop_graph_eval(og, &in, 1, &out, 1), HOP_OK);
        assert_int_equal(ticks_true, sign ? 6 : 0);
        assert_int_equal(ticks_false, sign ? 0 : 6);
        hop_tensor_release(out);
        hop_tensor_release(in);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("tick_true"), HOP_OK);
    assert_int_equal(hop_foreign_unregister("tick_false"), HOP_OK);
}

/* ---------------------------------------------------- map and lifting */

typedef struct rowspec {
    const hop_foreign *f;
} rowspec;

static hop_status
doubling_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    rowspec *rs = ud;
    hop_arg args[] = {hop_arg_sym(in[0]->meta->meta.sizes[0]), N(in[0])};
    return hop_tracer_call_foreign(t, rs->f, args, 2, out);
}

static void
test_a_foreign_call_inside_map_runs_once_per_row(void **state)
{
    (void)state;
    rowspec rs = {reg("void double_row(int64_t n, double *row)", (void *)double_row, false)};
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F64, 2, (int64_t[]){4, 3}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){doubling_row, &rs}, (hop_arg[]){N(x)}, 1, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    hop_plan *p = lower(og);
    for (int64_t rows = 5; rows <= 9; rows += 4) {
        int64_t sizes[] = {rows, 3};
        hop_tensor *in = hop_tensor_empty(HOP_F64, 2, sizes), *got = NULL, *ref = NULL;
        for (int64_t i = 0; i < rows * 3; i++)
            ((double *)in->data)[i] = (double)i - 4.5;
        row_calls = 0;
        assert_int_equal(hop_plan_run(p, &in, 1, &got, 1), HOP_OK);
        assert_int_equal(row_calls, rows);
        assert_int_equal(hop_graph_eval(og, &in, 1, &ref, 1), HOP_OK);
        assert_int_equal(row_calls, 2 * rows);
        for (int64_t i = 0; i < rows * 3; i++) {
            assert_true(((double *)got->data)[i] == 2 * ((double)i - 4.5));
            assert_true(((double *)ref->data)[i] == 2 * ((double)i - 4.5));
            assert_true(((double *)in->data)[i] == (double)i - 4.5);
        }
        hop_tensor *ts[] = {in, got, ref};
        for (size_t i = 0; i < LEN(ts); i++)
            hop_tensor_release(ts[i]);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("double_row"), HOP_OK);
}

typedef struct nested {
    const hop_foreign *saxpy;
    hop_node *w; /* an outer tensor both bodies close over */
} nested;

/* wrap body: saxpy(s1, 0.5, w, row) with w lifted from the root */
static hop_status
wrap_saxpy(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    nested *ns = ud;
    hop_arg args[] = {hop_arg_sym(in[0]->meta->meta.sizes[0]), hop_arg_float(0.5), N(ns->w),
                      N(in[0])};
    return hop_tracer_call_foreign(t, ns->saxpy, args, 4, out);
}

static hop_status
map_wrap_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    return hop_wrap(hop_output_graph_of(t), (hop_body){wrap_saxpy, ud}, (hop_arg[]){N(in[0])}, 1,
                    out);
}

static void
test_a_foreign_call_in_a_nested_body_lifts_the_outer_tensor_it_uses(void **state)
{
    (void)state;
    nested ns = {reg(SAXPY_SIG, (void *)saxpy, false), NULL};
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){2, 3}, true);
    ns.w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){3}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){map_wrap_row, &ns}, (hop_arg[]){N(x)}, 1, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    assert_code(
        og, "def forward(s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f32[s0, s1]\", w: \"f32[s1]\"):\n"
            "    def map_body_0(x: \"f32[s1]\", s1: \"Sym(s1)\", w: \"f32[s1]\"):\n"
            "        def wrap_body_0(s1: \"Sym(s1)\", w: \"f32[s1]\", x: \"f32[s1]\"):\n"
            "            saxpy: \"f32[s1]\" = foreign.saxpy(s1, 0.5, w, x)\n"
            "            getitem: \"f32[s1]\" = saxpy[0]\n"
            "            return (getitem,)\n"
            "\n"
            "        wrap: \"f32[s1]\" = wrap(wrap_body_0, (s1, w, x))\n"
            "        getitem: \"f32[s1]\" = wrap[0]\n"
            "        return (getitem,)\n"
            "\n"
            "    map: \"f32[s0, s1]\" = map(map_body_0, (x,), (s1, w))\n"
            "    getitem: \"f32[s0, s1]\" = map[0]\n"
            "    return (getitem,)\n");
    hop_plan *p = lower(og);
    int64_t xs[] = {3, 4};
    hop_tensor *x_in =
        hop_tensor_from_data(HOP_F32, 2, xs, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    hop_tensor *w_in = hop_tensor_from_data(HOP_F32, 1, &xs[1], (float[]){2, 4, 6, 8});
    hop_tensor *in[] = {x_in, w_in}, *got = NULL, *ref = NULL;
    saxpy_calls = 0;
    assert_int_equal(hop_plan_run(p, in, 2, &got, 1), HOP_OK);
    assert_int_equal(saxpy_calls, 3);
    assert_int_equal(hop_graph_eval(og, in, 2, &ref, 1), HOP_OK);
    float want[] = {2, 4, 6, 8, 6, 8, 10, 12, 10, 12, 14, 16};
    for (int i = 0; i < 12; i++) {
        assert_true(((float *)got->data)[i] == want[i]);
        assert_true(((float *)ref->data)[i] == want[i]);
    }
    hop_tensor *ts[] = {x_in, w_in, got, ref};
    for (size_t i = 0; i < LEN(ts); i++)
        hop_tensor_release(ts[i]);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

/* --------------------------------------------------------------- DCE */

static void
test_dce_keeps_side_effecting_calls_and_the_hops_that_hold_them(void **state)
{
    (void)state;
    const hop_foreign *pure = reg(SAXPY_SIG, (void *)saxpy, false);
    branch bt = {reg("void tick_true(int64_t k, const float *x)", (void *)tick_true, true), NULL,
                 HOP_OP_sin};
    branch bf = {reg("void tick_false(int64_t k, const float *x)", (void *)tick_false, false), NULL,
                 HOP_OP_cos};
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){3}, false);
    hop_tracer *t = hop_output_graph_root(og);
    hop_values r = {0};
    /* unused: a pure call (removed), a side-effecting one (kept) */
    hop_arg sargs[] = {hop_arg_int(3), hop_arg_float(1), N(x), N(x)};
    assert_int_equal(hop_tracer_call_foreign(t, pure, sargs, 4, &r), HOP_OK);
    hop_arg targs[] = {hop_arg_int(1), N(x)};
    assert_int_equal(hop_tracer_call_foreign(t, bt.tick, targs, 2, &r), HOP_OK);
    /* unused conds: one whose branch ticks (kept), one pure (removed) */
    hop_node *pred = OP(t, HOP_OP_gt, N(x), hop_arg_int(0));
    hop_node *p0 = OP(t, HOP_OP_select, N(pred), hop_arg_int(0), hop_arg_int(0));
    bt.x = bf.x = x;
    branch pure_t = bf;
    assert_int_equal(hop_cond(og, N(p0), (hop_body){ticking_branch, &bt},
                              (hop_body){ticking_branch, &bf}, NULL, 0, &r),
                     HOP_OK);
    assert_int_equal(hop_cond(og, N(p0), (hop_body){ticking_branch, &pure_t},
                              (hop_body){ticking_branch, &bf}, NULL, 0, &r),
                     HOP_OK);
    finish(og, &x, 1);
    hop_values_clear(&r);
    hop_graph *g = hop_output_graph_root_graph(og);
    assert_int_equal(hop_graph_dce(g), 5);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    char *code = hop_graph_code(g);
    assert_null(strstr(code, "foreign.saxpy"));
    assert_non_null(
        strstr(code, "    tick_true: \"()\" = foreign.tick_true(1, x)  # side effects\n"));
    assert_non_null(strstr(code, "    cond: \"f32[3]\" = cond(select, cond_true_0, cond_false_0"));
    assert_null(strstr(code, "cond_true_1"));
    hop_free(code);
    /* and the kept calls still run */
    hop_plan *p = lower(og);
    hop_tensor *in = f32(3, (float[]){1, -1, 1}), *out = NULL;
    ticks_true = ticks_false = 0;
    assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
    assert_int_equal(ticks_true, 4);
    assert_int_equal(ticks_false, 0);
    hop_tensor_release(out);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(hop_foreign_unregister("tick_true"), HOP_OK);
    assert_int_equal(hop_foreign_unregister("tick_false"), HOP_OK);
}

/* ---------------------------------------------------- registry and plans */

static void
test_a_plan_keeps_its_kernel_alive_and_graphs_find_kernels_by_name(void **state)
{
    (void)state;
    hop_runtime_thread_cleanup();
    long base = hop_alloc_live();
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = saxpy_program(f, NULL);
    hop_plan *p = lower(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    hop_tensor *in[] = {f32(2, (float[]){1, 2}), f32(2, (float[]){3, 4})}, *out = NULL;
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    assert_f32(out, 2, (float[]){6, 9});
    hop_tensor_release(out);
    assert_null(hop_lower(og, NULL));
    assert_int_equal(hop_error_code(), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(),
                        "lowering: saxpy calls the foreign kernel saxpy, which is not registered");
    assert_int_equal(hop_graph_eval(og, in, 2, &out, 1), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(),
                        "eval: saxpy calls the foreign kernel saxpy, which is not registered");
    /* a kernel of the same name but another signature */
    reg("void saxpy(int64_t n, double a, const double *x, double *y)", (void *)saxpy, false);
    assert_null(hop_lower(og, NULL));
    assert_int_equal(hop_error_code(), HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "saxpy: parameter 3 (const double *x) takes f64, got f32[s0]");
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
    hop_plan_free(p);
    hop_output_graph_free(og);
    hop_runtime_thread_cleanup();
    assert_int_equal(hop_alloc_live(), base);
}

/* ------------------------------------------------------------ exports */

/* out = x * 2 + y, and s = saxpy(s0, 1.0, x, y)[0] */
static hop_output_graph *
export_program(const hop_foreign *f)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){4}, true);
    hop_tracer *t = hop_output_graph_root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(2));
    hop_node *a = OP(t, HOP_OP_add, N(m), N(y));
    hop_values r = {0};
    hop_arg args[] = {hop_arg_sym(x->meta->meta.sizes[0]), hop_arg_float(1.0), N(x), N(y)};
    assert_int_equal(hop_tracer_call_foreign(t, f, args, 4, &r), HOP_OK);
    finish(og, (hop_node *[]){a, r.items[0]}, 2);
    hop_values_clear(&r);
    return og;
}

typedef int (*exported_fn)(int64_t s0, const float *x, const float *y, float *out, float *s);
typedef void (*exported_void_fn)(const float *x, float *out, int64_t s0, const float *y, float *s);

static void
test_an_exported_plan_is_called_from_c_with_raw_arrays_at_two_sizes(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = export_program(f);
    hop_plan *p = lower(og);
    hop_export *e = NULL;
    assert_int_equal(hop_plan_export(p,
                                     "int run(int64_t s0, const float *x, const float *y, "
                                     "float *out, float *s)",
                                     &e),
                     HOP_OK);
    exported_fn fn = (exported_fn)hop_export_fn(e);
    float x[] = {1, 2, 3, 4, 5, 6, 7}, y[] = {10, 20, 30, 40, 50, 60, 70};
    for (int64_t n = 3; n <= 7; n += 4) {
        float out[7] = {0}, s[7] = {0};
        saxpy_calls = 0;
        assert_int_equal(fn(n, x, y, out, s), 0);
        assert_int_equal(saxpy_calls, 1);
        for (int i = 0; i < 7; i++) {
            assert_true(out[i] == (i < n ? 2 * x[i] + y[i] : 0));
            assert_true(s[i] == (i < n ? x[i] + y[i] : 0));
            assert_true(y[i] == 10 * (i + 1));
        }
    }
    /* guard failures come back as a status */
    float out[2], s[2];
    assert_int_equal(fn(1, x, y, out, s), HOP_GUARD);
    assert_string_equal(hop_error_message(),
                        "guard failed: x.size(0) >= 2 expected (s0 is dynamic; sizes 0 and 1 are "
                        "specialised), got 1");
    assert_int_equal(fn(2, NULL, y, out, s), HOP_INVALID);
    assert_string_equal(hop_error_message(), "run: parameter 2 (const float *x) is NULL");
    hop_export_free(e);

    /* parameters in any order, void return */
    assert_int_equal(hop_plan_export(p,
                                     "void run2(const float *x, float *out, int64_t s0, "
                                     "const float *y, float *s)",
                                     &e),
                     HOP_OK);
    exported_void_fn vfn = (exported_void_fn)hop_export_fn(e);
    float o2[2] = {0}, s2[2] = {0};
    vfn(x, o2, 2, y, s2);
    assert_true(o2[0] == 12 && o2[1] == 24 && s2[0] == 11 && s2[1] == 22);
    hop_export_free(e);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

typedef int (*exported2_fn)(int64_t s0, int64_t s1, const float *x, float *out);

/* Sizes whose product no buffer holds (2^62 x 4 elements wrapped int64 to 0,
 * which skipped the NULL check and left hop_tensor_wrap to say "too large"
 * as HOP_NOMEM) and negative sizes are HOP_INVALID naming the function and
 * the parameter; nothing runs. */
static void
test_an_exported_call_refuses_sizes_no_buffer_holds_naming_the_parameter(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){4, 3}, true);
    hop_node *m = OP(hop_output_graph_root(og), HOP_OP_mul, N(x), hop_arg_int(2));
    finish(og, &m, 1);
    hop_plan *p = lower(og);
    hop_export *e = NULL;
    assert_int_equal(
        hop_plan_export(p, "int run(int64_t s0, int64_t s1, const float *x, float *out)", &e),
        HOP_OK);
    exported2_fn fn = (exported2_fn)hop_export_fn(e);
    float xs[6] = {1, 2, 3, 4, 5, 6}, out[6] = {0};
    assert_int_equal(fn(2, 3, xs, out), HOP_OK);
    assert_true(out[0] == 2 && out[5] == 12);
    static const struct {
        int64_t s0, s1;
        const char *msg;
    } cases[] = {
        {(int64_t)1 << 62, 4,
         "run: parameter 3 (const float *x) would be f32[4611686018427387904, 4], which no buffer "
         "holds (its byte count overflows int64)"},
        {(int64_t)1 << 32, (int64_t)1 << 32,
         "run: parameter 3 (const float *x) would be f32[4294967296, 4294967296], which no "
         "buffer holds (its byte count overflows int64)"},
        {(int64_t)1 << 61, 2,
         "run: parameter 3 (const float *x) would be f32[2305843009213693952, 2], which no buffer "
         "holds (its byte count overflows int64)"},
        {-1, 3, "run: parameter 3 (const float *x): size 0 is -1, which is negative"},
        {3, INT64_MIN,
         "run: parameter 3 (const float *x): size 1 is -9223372036854775808, which is negative"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(fn(cases[i].s0, cases[i].s1, NULL, NULL), HOP_INVALID);
        assert_string_equal(hop_error_message(), cases[i].msg);
    }
    hop_export_free(e);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

static void
test_export_signature_mismatches_are_clear_errors(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = export_program(f);
    hop_plan *p = lower(og);
    static const struct {
        const char *sig;
        hop_status code;
        const char *message;
    } cases[] = {
        {"int run(int64_t s0, const float *x, float *out, float *s)", HOP_INVALID,
         "hop_plan_export: the plan has 2 inputs (x, y) but int run(int64_t s0, const float *x, "
         "float *out, float *s) has 1 const pointer"},
        {"int run(int64_t s0, const float *x, const float *y, float *out)", HOP_INVALID,
         "hop_plan_export: the plan has 2 outputs but int run(int64_t s0, const float *x, const "
         "float *y, float *out) has 1 non-const pointer"},
        {"int run(int64_t s0, const double *x, const float *y, float *out, float *s)", HOP_INVALID,
         "hop_plan_export: parameter 2 (const double *x) is f64 but input 0 (x) of the plan is "
         "f32"},
        {"int run(int64_t s0, const float *x, const float *y, int64_t *out, float *s)", HOP_INVALID,
         "hop_plan_export: parameter 4 (int64_t *out) is i64 but output 0 (add) of the plan is "
         "f32"},
        {"int run(int64_t n, const float *x, const float *y, float *out, float *s)", HOP_INVALID,
         "hop_plan_export: parameter 1 (int64_t n) is no size symbol of the plan; scalars must be "
         "int64_t named after one (s0)"},
        {"int run(int32_t s0, const float *x, const float *y, float *out, float *s)", HOP_INVALID,
         "hop_plan_export: parameter 1 (int32_t s0) is no size symbol of the plan; scalars must be "
         "int64_t named after one (s0)"},
        {"int run(const float *x, const float *y, float *out, float *s)", HOP_INVALID,
         "hop_plan_export: int run(const float *x, const float *y, float *out, float *s) has no "
         "int64_t parameter for the size symbol s0 (x.size(0))"},
        {"double run(void)", HOP_INVALID,
         "export signature: column 1: the return type must be void or int (a status: non-zero "
         "fails)"},
    };
    long base = hop_alloc_live();
    for (size_t i = 0; i < LEN(cases); i++) {
        hop_export *e = (hop_export *)1;
        assert_int_equal(hop_plan_export(p, cases[i].sig, &e), cases[i].code);
        if (strcmp(hop_error_message(), cases[i].message) != 0)
            fprintf(stderr, "got:  %s\nwant: %s\n", hop_error_message(), cases[i].message);
        assert_string_equal(hop_error_message(), cases[i].message);
        assert_null(e);
    }
    assert_int_equal(hop_alloc_live(), base);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

/* ------------------------------------------------- allocation failures */

static void
test_allocation_failures_in_register_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    long base = hop_alloc_live(), k;
    for (k = 1; k < 1000; k++) {
        hop_alloc_fail_at(k);
        hop_status st = hop_foreign_register(SAXPY_SIG, (void *)saxpy, NULL, NULL);
        hop_alloc_fail_at(0);
        if (st == HOP_OK)
            break;
        assert_int_equal(st, HOP_NOMEM);
        assert_null(hop_foreign_find("saxpy"));
        assert_int_equal(hop_alloc_live(), base);
    }
    assert_true(k > 2);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(hop_alloc_live(), base);
}

static void
test_allocation_failures_in_trace_lower_and_run_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_tensor *in[] = {f32(3, (float[]){1, 2, 3}), f32(3, (float[]){1, 1, 1})}, *out = NULL;
    /* warm up what lives on (registries, the thread's eager state) */
    hop_output_graph *og = saxpy_program(f, NULL);
    hop_plan *p = lower(og);
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    hop_tensor_release(out);
    hop_plan_free(p);
    hop_output_graph_free(og);
    hop_runtime_thread_cleanup();
    long base = hop_alloc_live(), k;
    for (k = 1; k < 100000; k++) {
        hop_alloc_fail_at(k);
        hop_status st = HOP_OK;
        og = hop_output_graph_new();
        hop_node *x =
            og ? hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true) : NULL;
        hop_node *y =
            x ? hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){4}, true) : NULL;
        hop_values r = {0};
        if (y == NULL) {
            st = hop_error_code();
        } else {
            hop_arg args[] = {hop_arg_sym(x->meta->meta.sizes[0]), hop_arg_float(2.0), N(x), N(y)};
            st = hop_tracer_call_foreign(hop_output_graph_root(og), f, args, 4, &r);
            if (st != HOP_OK)
                assert_int_equal(r.n, 0);
        }
        if (st == HOP_OK) {
            hop_arg o = N(r.items[0]);
            if (hop_tracer_output(hop_output_graph_root(og), &o, 1) == NULL)
                st = hop_error_code();
        }
        p = st == HOP_OK ? hop_lower(og, NULL) : NULL;
        if (st == HOP_OK && p == NULL)
            st = hop_error_code();
        for (int rep = 0; rep < 2 && st == HOP_OK; rep++) {
            st = hop_plan_run(p, in, 2, &out, 1);
            if (st == HOP_OK) {
                assert_f32(out, 3, (float[]){3, 5, 7});
                hop_tensor_release(out);
            } else {
                assert_null(out);
            }
        }
        hop_alloc_fail_at(0);
        if (st != HOP_OK)
            assert_int_equal(st, HOP_NOMEM);
        hop_values_clear(&r);
        hop_plan_free(p);
        hop_output_graph_free(og);
        hop_runtime_thread_cleanup();
        assert_int_equal(hop_alloc_live(), base);
        if (st == HOP_OK)
            break;
    }
    assert_true(k > 20);
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

static void
test_allocation_failures_in_export_and_exported_calls_are_nomem(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = export_program(f);
    hop_plan *p = lower(og);
    const char *sig = "int run(int64_t s0, const float *x, const float *y, float *out, float *s)";
    float x[] = {1, 2, 3}, y[] = {4, 5, 6};
    /* warm up: the plan's frame, the thread's eager state */
    hop_export *e = NULL;
    assert_int_equal(hop_plan_export(p, sig, &e), HOP_OK);
    float out[3], s[3];
    assert_int_equal(((exported_fn)hop_export_fn(e))(3, x, y, out, s), 0);
    hop_export_free(e);
    long base = hop_alloc_live(), k;
    for (k = 1; k < 10000; k++) {
        hop_alloc_fail_at(k);
        e = NULL;
        hop_status st = hop_plan_export(p, sig, &e);
        if (st == HOP_OK) {
            memset(out, 0, sizeof out);
            st = (hop_status)((exported_fn)hop_export_fn(e))(3, x, y, out, s);
            if (st == HOP_OK)
                assert_true(out[0] == 6 && out[2] == 12 && s[1] == 7);
        } else {
            assert_null(e);
        }
        hop_alloc_fail_at(0);
        hop_export_free(e);
        if (st != HOP_OK)
            assert_int_equal(st, HOP_NOMEM);
        assert_int_equal(hop_alloc_live(), base);
        if (st == HOP_OK)
            break;
    }
    assert_true(k > 3);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

/* ----------------------------------------------- lifetime and sizes */

static void
count_release(void *ud)
{
    (*(int *)ud)++;
}

static void
run_saxpy_plan(hop_plan *p)
{
    hop_tensor *in[] = {f32(2, (float[]){1, 2}), f32(2, (float[]){3, 4})}, *out = NULL;
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    assert_f32(out, 2, (float[]){6, 9});
    hop_tensor *ts[] = {in[0], in[1], out};
    for (size_t i = 0; i < LEN(ts); i++)
        hop_tensor_release(ts[i]);
}

static void
test_release_runs_once_when_the_registry_and_every_plan_let_go(void **state)
{
    (void)state;
    int releases = 0;
    hop_foreign_options o = {.user_data = &releases, .release = count_release};
    const hop_foreign *f = NULL;
    /* a failed registration leaves user_data the caller's */
    assert_int_equal(hop_foreign_register("void saxpy(flaot a)", (void *)saxpy, &o, NULL),
                     HOP_INVALID);
    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, &o, &f), HOP_OK);
    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, &o, NULL), HOP_EXISTS);
    assert_int_equal(releases, 0);
    hop_output_graph *og = saxpy_program(f, NULL);
    hop_plan *p1 = lower(og), *p2 = lower(og);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(releases, 0);
    run_saxpy_plan(p1);
    hop_plan_free(p1);
    assert_int_equal(releases, 0);
    run_saxpy_plan(p2);
    hop_plan_free(p2);
    assert_int_equal(releases, 1);
    /* no plan: unregistering frees it at once */
    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, &o, NULL), HOP_OK);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(releases, 2);
    /* a caller's reference (a call in progress) */
    assert_int_equal(hop_foreign_register(SAXPY_SIG, (void *)saxpy, &o, NULL), HOP_OK);
    f = hop_foreign_acquire("saxpy");
    assert_non_null(f);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(releases, 2);
    assert_string_equal(hop_foreign_signature(f), SAXPY_SIG);
    hop_foreign_release(f);
    assert_int_equal(releases, 3);
    assert_null(hop_foreign_acquire("saxpy"));
    assert_int_equal(hop_error_code(), HOP_NOT_FOUND);
    hop_foreign_release(NULL);
}

#define SIZED_SIG "void saxpy(int64_t n, float a, const float x[n], float y[n])"

static void
gemv(int32_t m, int32_t k, const float *a, const float *x, float *y)
{
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j < k; j++)
            y[i] += a[i * k + j] * x[j];
}

static void
test_sizes_in_a_signature_refuse_short_operands_on_every_path(void **state)
{
    (void)state;
    const hop_foreign *f = reg(" void saxpy(int64_t n, float a, const float x [ n ], float y[n]);",
                               (void *)saxpy, false);
    assert_string_equal(hop_foreign_signature(f), SIZED_SIG);
    assert_null(hop_foreign_param_at(f, 0)->size);
    assert_string_equal(hop_foreign_param_at(f, 2)->size, "n");
    assert_int_equal(hop_foreign_param_at(f, 2)->kind, HOP_FOREIGN_IN);
    assert_int_equal(hop_foreign_param_at(f, 3)->kind, HOP_FOREIGN_INOUT);
    const char *short_x = "saxpy: parameter 3 (const float x[n]) needs n = 5 elements, got f32[4]";
    float v[] = {1, 2, 3, 4, 5};
    hop_tensor *x4 = f32(4, v), *x5 = f32(5, v), *y5 = f32(5, (float[]){0, 0, 0, 0, 0});

    /* eagerly: refused before the kernel runs; n = 4 < 5 elements is fine */
    hop_rt_arg args[] = {hop_rt_int(5), hop_rt_float(2), hop_rt_tensor(x4), hop_rt_tensor(y5)};
    hop_tensor *out = (hop_tensor *)1;
    saxpy_calls = 0;
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(), short_x);
    assert_null(out);
    assert_int_equal(hop_foreign_call_into(f, args, 4, &y5, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(), short_x);
    assert_int_equal(saxpy_calls, 0);
    args[0] = hop_rt_int(4);
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_OK);
    assert_f32(out, 5, (float[]){2, 4, 6, 8, 0});
    hop_tensor_release(out);

    /* in a plan and op by op: n is 5, the sizes symbolic, so each run checks */
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){5}, true);
    hop_values r = {0};
    hop_arg gargs[] = {hop_arg_int(5), hop_arg_float(2), N(x), N(y)};
    assert_int_equal(hop_tracer_call_foreign(hop_output_graph_root(og), f, gargs, 4, &r), HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    hop_plan *p = lower(og);
    hop_tensor *in[] = {x4, y5};
    saxpy_calls = 0;
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(), short_x);
    assert_int_equal(hop_graph_eval(og, in, 2, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(), short_x);
    assert_int_equal(saxpy_calls, 0);
    in[0] = x5;
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    assert_f32(out, 5, (float[]){2, 4, 6, 8, 10});
    hop_tensor_release(out);
    hop_plan_free(p);
    hop_output_graph_free(og);

    /* tracing with constant sizes refuses at once and changes nothing */
    og = hop_output_graph_new();
    x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, false);
    y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){5}, false);
    char *before = hop_graph_code(hop_output_graph_root_graph(og));
    gargs[2] = N(x);
    gargs[3] = N(y);
    assert_int_equal(hop_tracer_call_foreign(hop_output_graph_root(og), f, gargs, 4, &r),
                     HOP_SHAPE);
    assert_string_equal(hop_error_message(), short_x);
    assert_int_equal(r.n, 0);
    char *after = hop_graph_code(hop_output_graph_root_graph(og));
    assert_string_equal(before, after);
    hop_free(before);
    hop_free(after);
    gargs[0] = hop_arg_int(4);
    assert_int_equal(hop_tracer_call_foreign(hop_output_graph_root(og), f, gargs, 4, &r), HOP_OK);
    hop_values_clear(&r);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);

    /* several parameters, numbers and overflow */
    f = reg("void gemv(int m, int32_t k, const float a[m * k], const float x[(k)], float y[m + 0])",
            (void *)gemv, false);
    assert_string_equal(hop_foreign_signature(f),
                        "void gemv(int32_t m, int32_t k, const float a[m * k], const float x[(k)], "
                        "float y[m + 0])");
    hop_tensor *y2 = f32(2, (float[]){0, 0});
    hop_rt_arg gv[] = {hop_rt_int(2), hop_rt_int(3), hop_rt_tensor(x5), hop_rt_tensor(x4),
                       hop_rt_tensor(y2)};
    assert_int_equal(hop_foreign_call(f, gv, 5, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "gemv: parameter 3 (const float a[m * k]) needs m * k = 6 elements "
                        "(m = 2, k = 3), got f32[5]");
    gv[1] = hop_rt_int(2);
    assert_int_equal(hop_foreign_call(f, gv, 5, &out, 1), HOP_OK);
    assert_f32(out, 2, (float[]){1 * 1 + 2 * 2, 3 * 1 + 4 * 2});
    hop_tensor_release(out);
    assert_int_equal(hop_foreign_unregister("gemv"), HOP_OK);
    f = reg("void saxpy(int64_t n, float a, const float x[4 * n - 1], float y[4])", (void *)saxpy,
            false);
    args[0] = hop_rt_int(INT64_MAX / 2);
    args[2] = hop_rt_tensor(x4);
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "saxpy: parameter 3 (const float x[4 * n - 1]): the size 4 * n - 1 "
                        "overflows int64 (n = 4611686018427387903)");
    args[0] = hop_rt_int(1);
    args[3] = hop_rt_tensor(y2);
    assert_int_equal(hop_foreign_call(f, args, 4, &out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "saxpy: parameter 4 (float y[4]) needs 4 elements, got f32[2]");
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    hop_tensor *ts[] = {x4, x5, y5, y2};
    for (size_t i = 0; i < LEN(ts); i++)
        hop_tensor_release(ts[i]);
}

static void
test_an_export_signature_with_sizes_is_refused(void **state)
{
    (void)state;
    const hop_foreign *f = reg(SAXPY_SIG, (void *)saxpy, false);
    hop_output_graph *og = saxpy_program(f, NULL);
    hop_plan *p = lower(og);
    hop_export *e = (hop_export *)1;
    assert_int_equal(
        hop_plan_export(p, "int f(int64_t s0, const float x[s0], const float *y, float *out)", &e),
        HOP_INVALID);
    assert_null(e);
    assert_string_equal(hop_error_message(),
                        "hop_plan_export: parameter 2 (const float x[s0]) has a size; an export's "
                        "sizes come from its int64_t parameters named after the plan's size "
                        "symbols");
    /* `T x[]` is a plain pointer */
    assert_int_equal(
        hop_plan_export(p, "int f(int64_t s0, const float x[], const float y[], float out[])", &e),
        HOP_OK);
    hop_export_free(e);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
}

static void
test_allocation_failures_in_a_sized_registration_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    long base = hop_alloc_live(), k;
    for (k = 1; k < 1000; k++) {
        hop_alloc_fail_at(k);
        hop_status st = hop_foreign_register(
            "void saxpy(int64_t n, float a, const float x[2 * (n + 1)], float y[n])", (void *)saxpy,
            NULL, NULL);
        hop_alloc_fail_at(0);
        if (st == HOP_OK)
            break;
        assert_int_equal(st, HOP_NOMEM);
        assert_null(hop_foreign_find("saxpy"));
        assert_int_equal(hop_alloc_live(), base);
    }
    assert_true(k > 3);
    assert_int_equal(hop_foreign_unregister("saxpy"), HOP_OK);
    assert_int_equal(hop_alloc_live(), base);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_a_signature_parses_to_parameters_and_canonical_text,
                                  unregister_all),
        cmocka_unit_test_teardown(test_signature_errors_name_the_column_and_parameter,
                                  unregister_all),
        cmocka_unit_test_teardown(test_saxpy_eagerly_returns_a_new_tensor_and_leaves_y_alone,
                                  unregister_all),
        cmocka_unit_test_teardown(test_eager_operand_errors_name_the_parameter, unregister_all),
        cmocka_unit_test_teardown(test_saxpy_in_a_plan_and_op_by_op_at_two_sizes, unregister_all),
        cmocka_unit_test_teardown(test_tracing_errors_name_the_parameter_and_change_nothing,
                                  unregister_all),
        cmocka_unit_test_teardown(test_cond_runs_the_side_effects_of_the_taken_branch_only,
                                  unregister_all),
        cmocka_unit_test_teardown(test_a_foreign_call_inside_map_runs_once_per_row, unregister_all),
        cmocka_unit_test_teardown(
            test_a_foreign_call_in_a_nested_body_lifts_the_outer_tensor_it_uses, unregister_all),
        cmocka_unit_test_teardown(test_dce_keeps_side_effecting_calls_and_the_hops_that_hold_them,
                                  unregister_all),
        cmocka_unit_test_teardown(
            test_a_plan_keeps_its_kernel_alive_and_graphs_find_kernels_by_name, unregister_all),
        cmocka_unit_test_teardown(
            test_an_exported_plan_is_called_from_c_with_raw_arrays_at_two_sizes, unregister_all),
        cmocka_unit_test_teardown(test_export_signature_mismatches_are_clear_errors,
                                  unregister_all),
        cmocka_unit_test_teardown(
            test_an_exported_call_refuses_sizes_no_buffer_holds_naming_the_parameter,
            unregister_all),
        cmocka_unit_test_teardown(test_allocation_failures_in_register_are_nomem_and_leak_nothing,
                                  unregister_all),
        cmocka_unit_test_teardown(
            test_allocation_failures_in_trace_lower_and_run_are_nomem_and_leak_nothing,
            unregister_all),
        cmocka_unit_test_teardown(test_allocation_failures_in_export_and_exported_calls_are_nomem,
                                  unregister_all),
        cmocka_unit_test_teardown(test_release_runs_once_when_the_registry_and_every_plan_let_go,
                                  unregister_all),
        cmocka_unit_test_teardown(test_sizes_in_a_signature_refuse_short_operands_on_every_path,
                                  unregister_all),
        cmocka_unit_test_teardown(test_an_export_signature_with_sizes_is_refused, unregister_all),
        cmocka_unit_test_teardown(
            test_allocation_failures_in_a_sized_registration_are_nomem_and_leak_nothing,
            unregister_all),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
