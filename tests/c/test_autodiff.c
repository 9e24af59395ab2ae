/*
 * tests/c/test_autodiff.c - the transformations of hop/autodiff.h through
 * the HOPs: the exact backward graph of a traced cond with a closure, the
 * vjp HOP's graph, a user class that inherits wrap (differentiated through
 * its body) and one with a lowering of its own and no rule (an error naming
 * it), the misuse and dtype errors, and hop_graph_inline.  (Values are
 * checked from Python, tests/python/test_autodiff.py, and per op in
 * test_autodiff_ops.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "hop.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/lowering.h"
#include "hop/runtime.h"
#include <math.h>
#include <string.h>

static hop_node *
op1(hop_tracer *t, hop_op op, hop_node *a)
{
    return hop_tracer_call_op(t, op, (hop_arg[]){hop_arg_node(a)}, 1);
}

static hop_node *
op2(hop_tracer *t, hop_op op, hop_node *a, hop_node *b)
{
    return hop_tracer_call_op(t, op, (hop_arg[]){hop_arg_node(a), hop_arg_node(b)}, 2);
}

/* sin(x * w): x is the body's input, w a closure (lifted). */
typedef struct body_ud {
    hop_node *x, *w;
} body_ud;

static hop_status
sin_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    body_ud *b = ud;
    hop_node *x = n > 0 ? in[0] : b->x;
    hop_node *v = op1(t, HOP_OP_sin, op2(t, HOP_OP_mul, x, b->w));
    return v ? hop_values_push(out, v) : hop_error_code();
}

static hop_status
square_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    body_ud *b = ud;
    hop_node *x = n > 0 ? in[0] : b->x;
    hop_node *v = op2(t, HOP_OP_mul, x, x);
    return v ? hop_values_push(out, v) : hop_error_code();
}

/* The root graph of og: f(x, w) = sum(result). */
static void
finish(hop_output_graph *og, hop_node *result)
{
    hop_tracer *root = hop_output_graph_root(og);
    hop_node *s = hop_tracer_call_op(
        root, HOP_OP_sum, (hop_arg[]){hop_arg_node(result), hop_arg_none(), hop_arg_bool(false)},
        3);
    assert_non_null(s);
    assert_non_null(hop_tracer_output(root, (hop_arg[]){hop_arg_node(s)}, 1));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
}

static hop_output_graph *
inputs(hop_node **x, hop_node **w)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    int64_t sz[] = {3};
    *x = hop_output_graph_add_input(og, "x", HOP_F64, 1, sz, false);
    *w = hop_output_graph_add_input(og, "w", HOP_F64, 1, sz, false);
    assert_non_null(*x);
    assert_non_null(*w);
    return og;
}

static const char *const cond_bwd_code =
    "def f_bwd(x: \"f64[3]\", w: \"f64[3]\"):\n"
    "    def cond_true_0(x: \"f64[3]\", w_true_branch: \"f64[3]\"):\n"
    "        mul: \"f64[3]\" = mul(x, w_true_branch)\n"
    "        sin: \"f64[3]\" = sin(mul)\n"
    "        return (sin,)\n"
    "\n"
    "    def cond_false_0(x: \"f64[3]\", w_true_branch: \"f64[3]\"):\n"
    "        mul: \"f64[3]\" = mul(x, x)\n"
    "        return (mul,)\n"
    "\n"
    "    def cond_true_0_bwd(x: \"f64[3]\", w_true_branch: \"f64[3]\", sin_ct: \"f64[3]\"):\n"
    "        mul: \"f64[3]\" = mul(x, w_true_branch)\n"
    "        sin: \"f64[3]\" = sin(mul)\n"
    "        cos: \"f64[3]\" = cos(mul)\n"
    "        mul_1: \"f64[3]\" = mul(sin_ct, cos)\n"
    "        mul_2: \"f64[3]\" = mul(mul_1, w_true_branch)\n"
    "        mul_3: \"f64[3]\" = mul(mul_1, x)\n"
    "        return (sin, mul_2, mul_3)\n"
    "\n"
    "    def cond_false_0_bwd(x: \"f64[3]\", w_true_branch: \"f64[3]\", mul_ct: \"f64[3]\"):\n"
    "        mul: \"f64[3]\" = mul(x, x)\n"
    "        mul_1: \"f64[3]\" = mul(mul_ct, x)\n"
    "        mul_2: \"f64[3]\" = mul(mul_ct, x)\n"
    "        add: \"f64[3]\" = add(mul_1, mul_2)\n"
    "        full: \"f64[3]\" = full([3], 0.0, f64)\n"
    "        return (mul, add, full)\n"
    "\n"
    "    sum: \"f64[]\" = sum(x, None, False)\n"
    "    gt: \"bool[]\" = gt(sum, 0)\n"
    "    cond: \"f64[3]\" = cond(gt, cond_true_0, cond_false_0, (x, w))\n"
    "    getitem: \"f64[3]\" = cond[0]\n"
    "    sum_1: \"f64[]\" = sum(getitem, None, False)\n"
    "    full: \"f64[]\" = full([], 1.0, f64)\n"
    "    unsqueeze: \"f64[1]\" = unsqueeze(full, 0)\n"
    "    expand: \"f64[3]\" = expand(unsqueeze, [3])\n"
    "    cond_1: \"(f64[3], f64[3], f64[3])\" = cond(gt, cond_true_0_bwd, cond_false_0_bwd, (x, w, "
    "expand))\n"
    "    getitem_1: \"f64[3]\" = cond_1[1]\n"
    "    getitem_2: \"f64[3]\" = cond_1[2]\n"
    "    return (sum_1, getitem_1, getitem_2)\n";

/* cond(sum(x) > 0, sin(x * w), x * x): the backward is a cond over the
 * branches' backward graphs with the same predicate, each named after its
 * forward, taking the merged signature and the output's cotangent. */
static void
test_cond_backward_graph_is_a_cond_over_backward_branches(void **state)
{
    (void)state;
    hop_node *x, *w;
    hop_output_graph *og = inputs(&x, &w);
    hop_tracer *root = hop_output_graph_root(og);
    hop_node *s = hop_tracer_call_op(
        root, HOP_OP_sum, (hop_arg[]){hop_arg_node(x), hop_arg_none(), hop_arg_bool(false)}, 3);
    hop_node *pred =
        hop_tracer_call_op(root, HOP_OP_gt, (hop_arg[]){hop_arg_node(s), hop_arg_int(0)}, 2);
    body_ud ud = {x, w};
    hop_values out = {0};
    assert_int_equal(hop_cond(og, hop_arg_node(pred), (hop_body){sin_body, &ud},
                              (hop_body){square_body, &ud}, NULL, 0, &out),
                     HOP_OK);
    finish(og, out.items[0]);
    hop_values_clear(&out);

    const hop_graph *f = hop_output_graph_root_graph(og);
    hop_graph *b = hop_graph_new(f->env, "f_bwd");
    bool wrt[] = {true, true};
    hop_ct_kind cts[] = {HOP_CT_ONE};
    assert_int_equal(hop_vjp_graph(f, wrt, cts, b), HOP_OK);
    char *code = hop_graph_code(b);
    assert_non_null(code);
    assert_string_equal(code, cond_bwd_code);
    hop_free(code);
    hop_graph_free(b);
    hop_output_graph_free(og);
}

/* A class that sets nothing but its name and base (wrap): differentiated
 * through its body, the backward a call of the same class. */
static const hop_class my_wrap = {
    .base = &hop_wrap_class,
    .name = "my_wrap",
    .params = {{"body", HOP_PARAM_BODY, "my_wrap_body"}, {"args", HOP_PARAM_VARARGS}},
};

static hop_status
own_lower(hop_lower_ctx *cx, const hop_node *call)
{
    return hop_lower_default(cx, call);
}

/* Its own lowering, no vjp rule: nothing says it runs its body once. */
static const hop_class my_loop = {
    .base = &hop_wrap_class,
    .name = "my_loop",
    .params = {{"body", HOP_PARAM_BODY, "my_loop_body"}, {"args", HOP_PARAM_VARARGS}},
    .lower = own_lower,
};

static hop_output_graph *
traced_call(const hop_class *cls, body_ud *ud)
{
    hop_node *x, *w;
    hop_output_graph *og = inputs(&x, &w);
    ud->x = x;
    ud->w = w;
    hop_values out = {0};
    hop_body body = {sin_body, ud};
    hop_arg list = hop_arg_list((hop_arg[]){hop_arg_node(x)}, 1);
    assert_int_equal(hop_apply(og, cls, &list, 1, &body, 1, &out), HOP_OK);
    finish(og, out.items[0]);
    hop_values_clear(&out);
    return og;
}

static void
test_a_wrap_like_class_without_a_rule_is_differentiated_through_its_body(void **state)
{
    (void)state;
    body_ud ud;
    hop_output_graph *og = traced_call(&my_wrap, &ud);
    const hop_graph *f = hop_output_graph_root_graph(og);
    hop_graph *b = hop_graph_new(f->env, "f_bwd");
    bool wrt[] = {true, false};
    assert_int_equal(hop_vjp_graph(f, wrt, (hop_ct_kind[]){HOP_CT_ONE}, b), HOP_OK);
    char *code = hop_graph_code(b);
    assert_non_null(strstr(code, "my_wrap(my_wrap_body_0_bwd, (x, w, "));
    hop_free(code);
    hop_graph_free(b);
    hop_output_graph_free(og);
}

static void
test_a_class_with_its_own_lowering_and_no_rule_is_an_error_naming_it(void **state)
{
    (void)state;
    body_ud ud;
    assert_int_equal(hop_register_hop(&my_loop), HOP_OK);
    hop_output_graph *og = traced_call(&my_loop, &ud);
    const hop_graph *f = hop_output_graph_root_graph(og);
    hop_graph *b = hop_graph_new(f->env, "f_bwd");
    assert_int_equal(hop_vjp_graph(f, (bool[]){true, false}, (hop_ct_kind[]){HOP_CT_ONE}, b),
                     HOP_UNSUPPORTED);
    assert_string_equal(hop_error_message(), "autodiff: the HOP my_loop (my_loop) has no vjp rule");
    hop_graph_free(b);
    b = hop_graph_new(f->env, "f_jvp");
    assert_int_equal(hop_jvp_graph(f, (bool[]){true, false}, b), HOP_UNSUPPORTED);
    assert_string_equal(hop_error_message(), "autodiff: the HOP my_loop (my_loop) has no jvp rule");
    hop_graph_free(b);
    hop_output_graph_free(og);
    assert_int_equal(hop_unregister_hop("my_loop"), HOP_OK);
}

static void
test_misuse_and_dtype_errors_name_what_was_wrong(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *f = hop_graph_new(env, "f");
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vi.meta, env, HOP_I64, 1, (int64_t[]){3}), HOP_OK);
    hop_node *n = hop_graph_placeholder(f, "n", &vi);
    hop_node *s = hop_graph_call_op(
        f, HOP_OP_sum, (hop_arg[]){hop_arg_node(n), hop_arg_none(), hop_arg_bool(false)}, 3);
    hop_graph *out = hop_graph_new(env, "out");
    assert_int_equal(hop_vjp_graph(f, (bool[]){false}, NULL, out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_vjp_graph: graph f has no output node");
    assert_non_null(hop_graph_output(f, (hop_arg[]){hop_arg_node(s)}, 1));

    assert_int_equal(hop_vjp_graph(f, (bool[]){true}, NULL, out), HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "grad: input 0 of graph f (n: i64[3]) is not a float tensor");
    hop_graph_free(out);
    out = hop_graph_new(env, "out");
    assert_int_equal(hop_vjp_graph(f, (bool[]){false}, (hop_ct_kind[]){HOP_CT_ONE}, out),
                     HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "autodiff: output 0 of graph f (i64[]) is not a float tensor");
    hop_graph_free(out);
    out = hop_graph_new(env, "out");
    assert_int_equal(hop_jvp_graph(f, (bool[]){true}, out), HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "jvp: input 0 of graph f (n: i64[3]) is not a float tensor");
    /* out is not empty now: a second transformation into it is misuse */
    assert_int_equal(hop_jvp_graph(f, (bool[]){false}, out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_jvp_graph: the out graph out is not empty");
    assert_int_equal(hop_vjp_graph(NULL, NULL, NULL, out), HOP_MISUSE);
    hop_graph_free(out);
    hop_graph_free(f);
    hop_shape_env_free(env);
}

/* hop_graph_inline: src's nodes copied with its placeholders bound to dst's
 * values; the copies of its outputs returned. */
static void
test_graph_inline_binds_placeholders_and_returns_outputs(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vi.meta, env, HOP_F32, 1, (int64_t[]){4}), HOP_OK);
    hop_graph *src = hop_graph_new(env, "src");
    hop_node *a = hop_graph_placeholder(src, "a", &vi);
    hop_node *b = hop_graph_placeholder(src, "b", &vi);
    hop_node *m =
        hop_graph_call_op(src, HOP_OP_mul, (hop_arg[]){hop_arg_node(a), hop_arg_node(b)}, 2);
    assert_non_null(hop_graph_output(src, (hop_arg[]){hop_arg_node(m), hop_arg_node(a)}, 2));

    hop_graph *dst = hop_graph_new(env, "dst");
    hop_node *p = hop_graph_placeholder(dst, "p", &vi);
    hop_node *q = hop_graph_call_op(dst, HOP_OP_exp, (hop_arg[]){hop_arg_node(p)}, 1);
    hop_node *outs[2];
    assert_int_equal(hop_graph_inline(dst, src, (hop_node *[]){q, p}, outs), HOP_OK);
    assert_ptr_equal(outs[1], q);
    assert_non_null(hop_graph_output(dst, (hop_arg[]){hop_arg_node(outs[0])}, 1));
    char *code = hop_graph_code(dst);
    assert_string_equal(code, "def dst(p: \"f32[4]\"):\n"
                              "    exp: \"f32[4]\" = exp(p)\n"
                              "    mul: \"f32[4]\" = mul(exp, p)\n"
                              "    return (mul,)\n");
    hop_free(code);
    hop_graph *bad = hop_graph_new(env, "bad");
    assert_int_equal(hop_graph_inline(bad, src, NULL, outs), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_graph_inline: NULL inputs or outputs");
    hop_graph_free(bad);
    hop_graph_free(dst);
    hop_graph_free(src);

    /* A SymInt placeholder binds its symbol: the copy's sizes and symbolic
     * arguments name the symbol of the value passed for it. */
    const hop_expr *u = hop_shape_env_unbacked(env, 0, 100);
    hop_value_info si = {.kind = HOP_VALUE_SYM, .sym = u};
    src = hop_graph_new(env, "src");
    hop_node *n = hop_graph_placeholder(src, "n", &si);
    hop_node *r = hop_graph_call_op(
        src, HOP_OP_arange,
        (hop_arg[]){hop_arg_int(0), hop_arg_sym(hop_sym_max(env, u, hop_sym_const(env, 0))),
                    hop_arg_int(1), hop_arg_dtype(HOP_I64)},
        4);
    hop_node *s =
        hop_graph_call_op(src, HOP_OP_add, (hop_arg[]){hop_arg_node(r), hop_arg_node(n)}, 2);
    assert_non_null(hop_graph_output(src, (hop_arg[]){hop_arg_node(s)}, 1));
    dst = hop_graph_new(env, "dst");
    hop_value_info ti = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&ti.meta, env, HOP_I64, 0, NULL), HOP_OK);
    p = hop_graph_placeholder(dst, "t", &ti);
    hop_node *item = hop_graph_call_op(dst, HOP_OP_item, (hop_arg[]){hop_arg_node(p)}, 1);
    assert_ptr_not_equal(item->meta->sym, u);
    /* the caller vouches for the range src assumed (Max(u, 0) is u) */
    assert_int_equal(hop_shape_env_constrain(env, item->meta->sym, 0, 100), HOP_OK);
    assert_int_equal(hop_graph_inline(dst, src, (hop_node *[]){item}, outs), HOP_OK);
    assert_non_null(hop_graph_output(dst, (hop_arg[]){hop_arg_node(outs[0])}, 1));
    code = hop_graph_code(dst);
    assert_string_equal(code, "def dst(t: \"i64[]\"):\n"
                              "    item: \"Sym(u1)\" = item(t)\n"
                              "    arange: \"i64[u1]\" = arange(0, u1, 1, i64)\n"
                              "    add: \"i64[u1]\" = add(arange, item)\n"
                              "    return (add,)\n");
    hop_free(code);
    hop_graph_free(dst);
    hop_graph_free(src);
    hop_shape_env_free(env);
}

/* hop_jvp_inline: f's tangent graph inlined on given primals and tangents. */
static void
test_jvp_inline_binds_primals_and_tangents(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vi.meta, env, HOP_F64, 1, (int64_t[]){3}), HOP_OK);
    hop_graph *f = hop_graph_new(env, "f");
    hop_node *x = hop_graph_placeholder(f, "x", &vi), *w = hop_graph_placeholder(f, "w", &vi);
    hop_node *m =
        hop_graph_call_op(f, HOP_OP_mul, (hop_arg[]){hop_arg_node(x), hop_arg_node(w)}, 2);
    hop_node *s = hop_graph_call_op(f, HOP_OP_sin, (hop_arg[]){hop_arg_node(m)}, 1);
    assert_non_null(hop_graph_output(f, (hop_arg[]){hop_arg_node(s)}, 1));
    hop_graph *dst = hop_graph_new(env, "dst");
    hop_node *a = hop_graph_placeholder(dst, "a", &vi), *b = hop_graph_placeholder(dst, "b", &vi);
    hop_node *da = hop_graph_placeholder(dst, "da", &vi);
    hop_node *outs[2];
    assert_int_equal(hop_jvp_inline(dst, f, (bool[]){true, false}, (hop_node *[]){a, b},
                                    (hop_node *[]){da, NULL}, outs),
                     HOP_OK);
    assert_non_null(
        hop_graph_output(dst, (hop_arg[]){hop_arg_node(outs[0]), hop_arg_node(outs[1])}, 2));
    char *code = hop_graph_code(dst);
    assert_string_equal(code, "def dst(a: \"f64[3]\", b: \"f64[3]\", da: \"f64[3]\"):\n"
                              "    mul: \"f64[3]\" = mul(a, b)\n"
                              "    mul_1: \"f64[3]\" = mul(da, b)\n"
                              "    sin: \"f64[3]\" = sin(mul)\n"
                              "    cos: \"f64[3]\" = cos(mul)\n"
                              "    mul_2: \"f64[3]\" = mul(mul_1, cos)\n"
                              "    return (sin, mul_2)\n");
    hop_free(code);
    assert_int_equal(hop_jvp_inline(dst, f, NULL, NULL, NULL, outs), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_jvp_inline: NULL argument");
    hop_graph_free(dst);
    hop_graph_free(f);
    hop_shape_env_free(env);
}

/* hop_ad_reach: the outputs the inputs marked in from reach through uses,
 * not through a nondiff op (gt), through a wrap-like HOP call's body output
 * by output; entries already set stay set (a union over bodies). */
static void
test_ad_reach_follows_uses_but_not_nondiff_ops(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vi.meta, env, HOP_F64, 1, (int64_t[]){3}), HOP_OK);
    hop_graph *f = hop_graph_new(env, "f");
    hop_node *x = hop_graph_placeholder(f, "x", &vi), *w = hop_graph_placeholder(f, "w", &vi);
    hop_node *m =
        hop_graph_call_op(f, HOP_OP_mul, (hop_arg[]){hop_arg_node(x), hop_arg_node(w)}, 2);
    hop_node *gt = hop_graph_call_op(f, HOP_OP_gt, (hop_arg[]){hop_arg_node(x), hop_arg_int(0)}, 2);
    hop_node *wh = hop_graph_call_op(
        f, HOP_OP_where, (hop_arg[]){hop_arg_node(gt), hop_arg_node(w), hop_arg_node(w)}, 3);
    hop_node *e = hop_graph_call_op(f, HOP_OP_exp, (hop_arg[]){hop_arg_node(x)}, 1);
    /* wrap(body, e, w): body(a, b) = (a, a); its second output is not
     * reached from w, which the body does not read (before the forty-sixth
     * session's last change every output of a HOP call counted as reached
     * from every operand) */
    hop_build *b = hop_build_new(f, &hop_wrap_class);
    hop_graph *body = hop_build_body(b, "body", "wrap_body");
    assert_non_null(body);
    hop_node *a = hop_build_input(b, "args", e, "a", &vi);
    assert_non_null(hop_build_input(b, "args", w, "b", &vi));
    assert_int_equal(hop_build_output(b, "body", a), HOP_OK);
    assert_int_equal(hop_build_output(b, "body", a), HOP_OK);
    hop_node *call = hop_build_emit(b, (hop_value_info[]){vi, vi}, 2);
    assert_non_null(call);
    hop_node *g1 = hop_graph_getitem(f, call, 1);
    assert_non_null(
        hop_graph_output(f,
                         (hop_arg[]){hop_arg_node(m), hop_arg_node(gt), hop_arg_node(wh),
                                     hop_arg_node(e), hop_arg_node(g1), hop_arg_float(1.0)},
                         6));
    bool r[6] = {false};
    assert_int_equal(hop_ad_reach(f, (bool[]){true, false}, r), HOP_OK);
    assert_memory_equal(r, ((bool[]){true, false, false, true, true, false}), sizeof r);
    memset(r, 0, sizeof r);
    assert_int_equal(hop_ad_reach(f, (bool[]){false, true}, r), HOP_OK);
    assert_memory_equal(r, ((bool[]){true, false, true, false, false, false}), sizeof r);
    assert_int_equal(hop_ad_reach(f, (bool[]){false, false}, r), HOP_OK);
    assert_memory_equal(r, ((bool[]){true, false, true, false, false, false}), sizeof r);
    memset(r, 0, sizeof r);
    assert_int_equal(hop_ad_reach(f, (bool[]){false, false}, r), HOP_OK);
    assert_memory_equal(r, ((bool[]){false, false, false, false, false, false}), sizeof r);
    assert_int_equal(hop_ad_reach(f, NULL, r), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_ad_reach: NULL from");
    assert_int_equal(hop_ad_reach(NULL, NULL, r), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_ad_reach: NULL graph");
    assert_int_equal(hop_ad_reach_bodies(NULL, (bool[]){true}, r), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_ad_reach_bodies: not a HOP call");
    assert_int_equal(hop_ad_reach_bodies(f->first, (bool[]){true}, r), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_ad_reach_bodies: not a HOP call");
    hop_graph_free(f);
    hop_shape_env_free(env);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cond_backward_graph_is_a_cond_over_backward_branches),
        cmocka_unit_test(test_a_wrap_like_class_without_a_rule_is_differentiated_through_its_body),
        cmocka_unit_test(test_a_class_with_its_own_lowering_and_no_rule_is_an_error_naming_it),
        cmocka_unit_test(test_misuse_and_dtype_errors_name_what_was_wrong),
        cmocka_unit_test(test_graph_inline_binds_placeholders_and_returns_outputs),
        cmocka_unit_test(test_jvp_inline_binds_primals_and_tangents),
        cmocka_unit_test(test_ad_reach_follows_uses_but_not_nondiff_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
