/*
 * tests/c/test_printer.c - the code, table and DOT printers, locked with
 * golden text: nested subgraphs, symbolic shapes, every argument kind, float
 * formatting, escaping; and an allocation-failure sweep over building and
 * printing a graph with subgraphs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/graph.h"
#include "test_class_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long live_at_setup;

static int
setup(void **state)
{
    (void)state;
    live_at_setup = hop_alloc_live();
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    assert_int_equal(hop_alloc_live(), live_at_setup);
    return 0;
}

/* Compares printer output with the golden text and frees it; on a mismatch
 * prints the whole text so that a reviewer can see it. */
static void
assert_text(char *got, const char *want)
{
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "---- got ----\n%s---- want ----\n%s----\n", got, want);
    assert_string_equal(got, want);
    hop_free(got);
}

/*
 * The example graph, built so that any step can fail (for the sweep):
 *
 *   forward(s0, x: f32[s0, 4], y: f32[4])
 *     cond_true_0(s0, x):  sin, mul(sin, 2.0), return (mul, s0)
 *     cond_false_0(s0, x): wrap(wrap_body_0, (x,)) with wrap_body_0(x): neg
 *                          add(getitem, 0.5), return (add, s0)
 *     add, sum, gt, cond, getitem, getitem_1, view, cat, mul(..., 1e-06),
 *     to(f64), sym_size, return (to, sym_size)
 */
typedef struct example {
    hop_shape_env *env;
    hop_graph *g;
} example;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if (!(x))                                                                                  \
            goto fail;                                                                             \
    } while (0)

static hop_node *
call(hop_graph *g, hop_op op, hop_arg *args, size_t n)
{
    return hop_graph_call_op(g, op, args, n);
}

static hop_graph *
branch(hop_shape_env *env, const char *name, bool true_branch, const hop_value_info *sv,
       const hop_value_info *xv)
{
    hop_graph *b = hop_graph_new(env, name);
    hop_graph *body = NULL;
    TRY(b);
    hop_node *s = hop_graph_placeholder(b, "s0", sv);
    TRY(s);
    hop_node *x = hop_graph_placeholder(b, "x", xv);
    TRY(x);
    hop_node *r;
    if (true_branch) {
        hop_arg a[] = {hop_arg_node(x)};
        hop_node *sin = call(b, HOP_OP_sin, a, 1);
        TRY(sin);
        hop_arg m[] = {hop_arg_node(sin), hop_arg_float(2.0)};
        TRY(r = call(b, HOP_OP_mul, m, 2));
    } else {
        body = hop_graph_new(env, "wrap_body_0");
        TRY(body);
        hop_node *bx = hop_graph_placeholder(body, "x", xv);
        TRY(bx);
        hop_arg a[] = {hop_arg_node(bx)};
        hop_node *neg = call(body, HOP_OP_neg, a, 1);
        TRY(neg);
        hop_arg rv[] = {hop_arg_node(neg)};
        TRY(hop_graph_output(body, rv, 1));
        TRY(hop_graph_add_subgraph(b, body) == HOP_OK);
        hop_graph *installed = body;
        body = NULL;
        hop_arg operands[] = {hop_arg_node(x)};
        hop_arg wa[] = {hop_arg_graph(installed), hop_arg_list(operands, 1)};
        hop_node *wrap = hop_graph_call_hop(b, class_named("wrap"), wa, 2, xv, 1);
        TRY(wrap);
        hop_node *item = hop_graph_getitem(b, wrap, 0);
        TRY(item);
        hop_arg ad[] = {hop_arg_node(item), hop_arg_float(0.5)};
        TRY(r = call(b, HOP_OP_add, ad, 2));
    }
    hop_arg rv[] = {hop_arg_node(r), hop_arg_node(s)};
    TRY(hop_graph_output(b, rv, 2));
    return b;
fail:
    hop_graph_free(body);
    hop_graph_free(b);
    return NULL;
}

/* HOP_OK with ex filled, or the error of the step that failed (everything
 * freed). */
static hop_status
build_example(example *ex)
{
    hop_graph *t = NULL, *f = NULL;
    ex->g = NULL;
    ex->env = hop_shape_env_new();
    TRY(ex->env);
    const hop_expr *s0 = hop_shape_env_size_symbol(ex->env, 5, true, true);
    TRY(s0);
    const hop_expr *four = hop_sym_const(ex->env, 4);
    TRY(four);
    hop_value_info sv = {.kind = HOP_VALUE_SYM, .sym = s0};
    hop_value_info xv = {.kind = HOP_VALUE_TENSOR, .meta = {HOP_F32, 2, {s0, four}}};
    hop_value_info yv = {.kind = HOP_VALUE_TENSOR, .meta = {HOP_F32, 1, {four}}};

    hop_graph *g = ex->g = hop_graph_new(ex->env, "forward");
    TRY(g);
    hop_node *s = hop_graph_placeholder(g, "s0", &sv);
    TRY(s);
    hop_node *x = hop_graph_placeholder(g, "x", &xv);
    TRY(x);
    hop_node *y = hop_graph_placeholder(g, "y", &yv);
    TRY(y);
    TRY(t = branch(ex->env, "cond_true_0", true, &sv, &xv));
    TRY(hop_graph_add_subgraph(g, t) == HOP_OK);
    t = NULL;
    TRY(f = branch(ex->env, "cond_false_0", false, &sv, &xv));
    TRY(hop_graph_add_subgraph(g, f) == HOP_OK);
    f = NULL;

    hop_arg aa[] = {hop_arg_node(x), hop_arg_node(y)};
    hop_node *add = call(g, HOP_OP_add, aa, 2);
    TRY(add);
    hop_arg sa[] = {hop_arg_node(add), hop_arg_none(), hop_arg_bool(false)};
    hop_node *sum = call(g, HOP_OP_sum, sa, 3);
    TRY(sum);
    hop_arg ga[] = {hop_arg_node(sum), hop_arg_int(0)};
    hop_node *gt = call(g, HOP_OP_gt, ga, 2);
    TRY(gt);
    hop_arg operands[] = {hop_arg_node(s), hop_arg_node(x)};
    hop_arg ca[] = {hop_arg_node(gt), hop_arg_graph(g->subgraphs[0]),
                    hop_arg_graph(g->subgraphs[1]), hop_arg_list(operands, 2)};
    hop_value_info outs[] = {xv, sv};
    hop_node *cond = hop_graph_call_hop(g, class_named("cond"), ca, 4, outs, 2);
    TRY(cond);
    hop_node *g0 = hop_graph_getitem(g, cond, 0);
    TRY(g0);
    hop_node *g1 = hop_graph_getitem(g, cond, 1);
    TRY(g1);
    hop_arg shape[] = {hop_arg_node(g1), hop_arg_int(4)};
    hop_arg va[] = {hop_arg_node(g0), hop_arg_list(shape, 2)};
    hop_node *view = call(g, HOP_OP_view, va, 2);
    TRY(view);
    hop_arg parts[] = {hop_arg_node(view), hop_arg_node(x)};
    hop_arg cat_args[] = {hop_arg_list(parts, 2), hop_arg_int(0)};
    hop_node *cat = call(g, HOP_OP_cat, cat_args, 2);
    TRY(cat);
    hop_arg ma[] = {hop_arg_node(cat), hop_arg_float(1e-06)};
    hop_node *mul = call(g, HOP_OP_mul, ma, 2);
    TRY(mul);
    hop_arg ta[] = {hop_arg_node(mul), hop_arg_dtype(HOP_F64)};
    hop_node *to = call(g, HOP_OP_to, ta, 2);
    TRY(to);
    hop_arg za[] = {hop_arg_node(cat), hop_arg_int(0)};
    hop_node *size = call(g, HOP_OP_sym_size, za, 2);
    TRY(size);
    hop_arg rv[] = {hop_arg_node(to), hop_arg_node(size)};
    TRY(hop_graph_output(g, rv, 2));
    return HOP_OK;
fail:;
    hop_status st = hop_error_code();
    hop_graph_free(t);
    hop_graph_free(f);
    hop_graph_free(ex->g);
    hop_shape_env_free(ex->env);
    ex->g = NULL;
    ex->env = NULL;
    return st;
}

static void
free_example(example *ex)
{
    hop_graph_free(ex->g);
    hop_shape_env_free(ex->env);
}

static const char example_code[] =
    "def forward(s0: \"Sym(s0)\", x: \"f32[s0, 4]\", y: \"f32[4]\"):\n"
    "    def cond_true_0(s0: \"Sym(s0)\", x: \"f32[s0, 4]\"):\n"
    "        sin: \"f32[s0, 4]\" = sin(x)\n"
    "        mul: \"f32[s0, 4]\" = mul(sin, 2.0)\n"
    "        return (mul, s0)\n"
    "\n"
    "    def cond_false_0(s0: \"Sym(s0)\", x: \"f32[s0, 4]\"):\n"
    "        def wrap_body_0(x: \"f32[s0, 4]\"):\n"
    "            neg: \"f32[s0, 4]\" = neg(x)\n"
    "            return (neg,)\n"
    "\n"
    "        wrap: \"f32[s0, 4]\" = wrap(wrap_body_0, (x,))\n"
    "        getitem: \"f32[s0, 4]\" = wrap[0]\n"
    "        add: \"f32[s0, 4]\" = add(getitem, 0.5)\n"
    "        return (add, s0)\n"
    "\n"
    "    add: \"f32[s0, 4]\" = add(x, y)\n"
    "    sum: \"f32[]\" = sum(add, None, False)\n"
    "    gt: \"bool[]\" = gt(sum, 0)\n"
    "    cond: \"(f32[s0, 4], Sym(s0))\" = cond(gt, cond_true_0, cond_false_0, (s0, x))\n"
    "    getitem: \"f32[s0, 4]\" = cond[0]\n"
    "    getitem_1: \"Sym(s0)\" = cond[1]\n"
    "    view: \"f32[s0, 4]\" = view(getitem, [getitem_1, 4])\n"
    "    cat: \"f32[2*s0, 4]\" = cat([view, x], 0)\n"
    "    mul: \"f32[2*s0, 4]\" = mul(cat, 1e-06)\n"
    "    to: \"f64[2*s0, 4]\" = to(mul, f64)\n"
    "    sym_size: \"Sym(2*s0)\" = sym_size(cat, 0)\n"
    "    return (to, sym_size)\n";

static void
test_code_prints_nested_subgraphs_as_nested_defs(void **state)
{
    (void)state;
    example ex;
    assert_int_equal(build_example(&ex), HOP_OK);
    assert_int_equal(hop_graph_verify(ex.g), HOP_OK);
    assert_text(hop_graph_code(ex.g), example_code);
    /* A subgraph prints on its own too. */
    assert_text(hop_graph_code(ex.g->subgraphs[1]->subgraphs[0]),
                "def wrap_body_0(x: \"f32[s0, 4]\"):\n"
                "    neg: \"f32[s0, 4]\" = neg(x)\n"
                "    return (neg,)\n");
    free_example(&ex);
}

static void
test_table_aligns_columns_and_lists_subgraphs_after_their_parent(void **state)
{
    (void)state;
    example ex;
    assert_int_equal(build_example(&ex), HOP_OK);
    assert_text(
        hop_graph_table(ex.g),
        "graph forward:\n"
        "opcode       name       target    args                                      meta\n"
        "-----------  ---------  --------  ----------------------------------------  "
        "---------------------\n"
        "placeholder  s0         s0        ()                                        Sym(s0)\n"
        "placeholder  x          x         ()                                        f32[s0, 4]\n"
        "placeholder  y          y         ()                                        f32[4]\n"
        "call_op      add        add       (x, y)                                    f32[s0, 4]\n"
        "call_op      sum        sum       (add, None, False)                        f32[]\n"
        "call_op      gt         gt        (sum, 0)                                  bool[]\n"
        "call_hop     cond       cond      (gt, cond_true_0, cond_false_0, (s0, x))  (f32[s0, 4], "
        "Sym(s0))\n"
        "getitem      getitem    getitem   (cond, 0)                                 f32[s0, 4]\n"
        "getitem      getitem_1  getitem   (cond, 1)                                 Sym(s0)\n"
        "call_op      view       view      (getitem, [getitem_1, 4])                 f32[s0, 4]\n"
        "call_op      cat        cat       ([view, x], 0)                            f32[2*s0, "
        "4]\n"
        "call_op      mul        mul       (cat, 1e-06)                              f32[2*s0, "
        "4]\n"
        "call_op      to         to        (mul, f64)                                f64[2*s0, "
        "4]\n"
        "call_op      sym_size   sym_size  (cat, 0)                                  Sym(2*s0)\n"
        "output       output     output    (to, sym_size)\n"
        "\n"
        "graph cond_true_0 (in forward):\n"
        "opcode       name    target  args        meta\n"
        "-----------  ------  ------  ----------  ----------\n"
        "placeholder  s0      s0      ()          Sym(s0)\n"
        "placeholder  x       x       ()          f32[s0, 4]\n"
        "call_op      sin     sin     (x,)        f32[s0, 4]\n"
        "call_op      mul     mul     (sin, 2.0)  f32[s0, 4]\n"
        "output       output  output  (mul, s0)\n"
        "\n"
        "graph cond_false_0 (in forward):\n"
        "opcode       name     target   args                 meta\n"
        "-----------  -------  -------  -------------------  ----------\n"
        "placeholder  s0       s0       ()                   Sym(s0)\n"
        "placeholder  x        x        ()                   f32[s0, 4]\n"
        "call_hop     wrap     wrap     (wrap_body_0, (x,))  f32[s0, 4]\n"
        "getitem      getitem  getitem  (wrap, 0)            f32[s0, 4]\n"
        "call_op      add      add      (getitem, 0.5)       f32[s0, 4]\n"
        "output       output   output   (add, s0)\n"
        "\n"
        "graph wrap_body_0 (in cond_false_0):\n"
        "opcode       name    target  args    meta\n"
        "-----------  ------  ------  ------  ----------\n"
        "placeholder  x       x       ()      f32[s0, 4]\n"
        "call_op      neg     neg     (x,)    f32[s0, 4]\n"
        "output       output  output  (neg,)\n");
    free_example(&ex);
}

static void
test_dot_has_one_cluster_per_subgraph_and_edges_from_args_to_users(void **state)
{
    (void)state;
    example ex;
    assert_int_equal(build_example(&ex), HOP_OK);
    assert_text(
        hop_graph_dot(ex.g),
        "digraph \"forward\" {\n"
        "    compound=true;\n"
        "    node [fontname=\"monospace\", fontsize=10];\n"
        "    \"s0\" [label=\"s0\\nSym(s0)\", shape=ellipse];\n"
        "    \"x\" [label=\"x\\nf32[s0, 4]\", shape=ellipse];\n"
        "    \"y\" [label=\"y\\nf32[4]\", shape=ellipse];\n"
        "    \"add\" [label=\"add\\nf32[s0, 4]\", shape=box];\n"
        "    \"sum\" [label=\"sum\\nf32[]\", shape=box];\n"
        "    \"gt\" [label=\"gt\\nbool[]\", shape=box];\n"
        "    \"cond\" [label=\"cond\\n(f32[s0, 4], Sym(s0))\", shape=box3d];\n"
        "    \"getitem\" [label=\"getitem\\nf32[s0, 4]\", shape=box];\n"
        "    \"getitem_1\" [label=\"getitem_1\\ngetitem\\nSym(s0)\", shape=box];\n"
        "    \"view\" [label=\"view\\nf32[s0, 4]\", shape=box];\n"
        "    \"cat\" [label=\"cat\\nf32[2*s0, 4]\", shape=box];\n"
        "    \"mul\" [label=\"mul\\nf32[2*s0, 4]\", shape=box];\n"
        "    \"to\" [label=\"to\\nf64[2*s0, 4]\", shape=box];\n"
        "    \"sym_size\" [label=\"sym_size\\nSym(2*s0)\", shape=box];\n"
        "    \"output\" [label=\"output\", shape=doubleoctagon];\n"
        "    subgraph \"cluster_cond_true_0\" {\n"
        "        label=\"cond_true_0\";\n"
        "        style=rounded;\n"
        "        \"cond_true_0.s0\" [label=\"s0\\nSym(s0)\", shape=ellipse];\n"
        "        \"cond_true_0.x\" [label=\"x\\nf32[s0, 4]\", shape=ellipse];\n"
        "        \"cond_true_0.sin\" [label=\"sin\\nf32[s0, 4]\", shape=box];\n"
        "        \"cond_true_0.mul\" [label=\"mul\\nf32[s0, 4]\", shape=box];\n"
        "        \"cond_true_0.output\" [label=\"output\", shape=doubleoctagon];\n"
        "        \"cond_true_0.x\" -> \"cond_true_0.sin\";\n"
        "        \"cond_true_0.sin\" -> \"cond_true_0.mul\";\n"
        "        \"cond_true_0.mul\" -> \"cond_true_0.output\";\n"
        "        \"cond_true_0.s0\" -> \"cond_true_0.output\";\n"
        "    }\n"
        "    subgraph \"cluster_cond_false_0\" {\n"
        "        label=\"cond_false_0\";\n"
        "        style=rounded;\n"
        "        \"cond_false_0.s0\" [label=\"s0\\nSym(s0)\", shape=ellipse];\n"
        "        \"cond_false_0.x\" [label=\"x\\nf32[s0, 4]\", shape=ellipse];\n"
        "        \"cond_false_0.wrap\" [label=\"wrap\\nf32[s0, 4]\", shape=box3d];\n"
        "        \"cond_false_0.getitem\" [label=\"getitem\\nf32[s0, 4]\", shape=box];\n"
        "        \"cond_false_0.add\" [label=\"add\\nf32[s0, 4]\", shape=box];\n"
        "        \"cond_false_0.output\" [label=\"output\", shape=doubleoctagon];\n"
        "        subgraph \"cluster_cond_false_0.wrap_body_0\" {\n"
        "            label=\"wrap_body_0\";\n"
        "            style=rounded;\n"
        "            \"cond_false_0.wrap_body_0.x\" [label=\"x\\nf32[s0, 4]\", shape=ellipse];\n"
        "            \"cond_false_0.wrap_body_0.neg\" [label=\"neg\\nf32[s0, 4]\", shape=box];\n"
        "            \"cond_false_0.wrap_body_0.output\" [label=\"output\", "
        "shape=doubleoctagon];\n"
        "            \"cond_false_0.wrap_body_0.x\" -> \"cond_false_0.wrap_body_0.neg\";\n"
        "            \"cond_false_0.wrap_body_0.neg\" -> \"cond_false_0.wrap_body_0.output\";\n"
        "        }\n"
        "        \"cond_false_0.x\" -> \"cond_false_0.wrap\";\n"
        "        \"cond_false_0.wrap_body_0.output\" -> \"cond_false_0.wrap\" [style=dashed, "
        "ltail=\"cluster_cond_false_0.wrap_body_0\"];\n"
        "        \"cond_false_0.wrap\" -> \"cond_false_0.getitem\";\n"
        "        \"cond_false_0.getitem\" -> \"cond_false_0.add\";\n"
        "        \"cond_false_0.add\" -> \"cond_false_0.output\";\n"
        "        \"cond_false_0.s0\" -> \"cond_false_0.output\";\n"
        "    }\n"
        "    \"x\" -> \"add\";\n"
        "    \"y\" -> \"add\";\n"
        "    \"add\" -> \"sum\";\n"
        "    \"sum\" -> \"gt\";\n"
        "    \"gt\" -> \"cond\";\n"
        "    \"s0\" -> \"cond\";\n"
        "    \"x\" -> \"cond\";\n"
        "    \"cond_true_0.output\" -> \"cond\" [style=dashed, ltail=\"cluster_cond_true_0\"];\n"
        "    \"cond_false_0.output\" -> \"cond\" [style=dashed, ltail=\"cluster_cond_false_0\"];\n"
        "    \"cond\" -> \"getitem\";\n"
        "    \"cond\" -> \"getitem_1\";\n"
        "    \"getitem\" -> \"view\";\n"
        "    \"getitem_1\" -> \"view\";\n"
        "    \"view\" -> \"cat\";\n"
        "    \"x\" -> \"cat\";\n"
        "    \"cat\" -> \"mul\";\n"
        "    \"mul\" -> \"to\";\n"
        "    \"cat\" -> \"sym_size\";\n"
        "    \"to\" -> \"output\";\n"
        "    \"sym_size\" -> \"output\";\n"
        "}\n");
    free_example(&ex);
}

/* A graph `forward(x: f32[s0, 4])` whose only body node is a call_hop
 * "show" with args (nouts 0), printed as code. */
static char *
code_of_args(hop_shape_env *env, const hop_expr *s0, const hop_arg *args, size_t nargs)
{
    hop_graph *g = hop_graph_new(env, "forward");
    const hop_expr *four = hop_sym_const(env, 4);
    hop_value_info xv = {.kind = HOP_VALUE_TENSOR, .meta = {HOP_F32, 2, {s0, four}}};
    hop_node *x = hop_graph_placeholder(g, "x", &xv);
    assert_non_null(x);
    hop_arg *copy = calloc(nargs + 1, sizeof *copy);
    memcpy(copy, args, nargs * sizeof *copy);
    copy[nargs] = hop_arg_node(x);
    assert_non_null(hop_graph_call_hop(g, class_named("show"), copy, nargs + 1, NULL, 0));
    free(copy);
    char *code = hop_graph_code(g);
    hop_graph_free(g);
    return code;
}

static void
test_floats_print_in_the_shortest_form_that_reads_back(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    double values[] = {1.0,    0.5,    1e-06,    0.1,       1e16,    1e15,
                       1234.5, 0.0001, 1.5e-05,  -0.0,      1.0 / 3, 123456789012345680.0,
                       1e22,   -2.5,   INFINITY, -INFINITY, NAN,     5e-324};
    size_t n = sizeof values / sizeof values[0];
    hop_arg args[sizeof values / sizeof values[0]];
    for (size_t i = 0; i < n; i++)
        args[i] = hop_arg_float(values[i]);
    assert_text(
        code_of_args(env, s0, args, n),
        "def forward(x: \"f32[s0, 4]\"):\n"
        "    show: \"()\" = show(1.0, 0.5, 1e-06, 0.1, 1e+16, 1000000000000000.0, 1234.5, 0.0001, "
        "1.5e-05, -0.0, 0.3333333333333333, 1.2345678901234568e+17, 1e+22, -2.5, inf, -inf, nan, "
        "5e-324, x)\n");
    hop_shape_env_free(env);
}

static void
test_every_argument_kind_has_one_spelling(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 7, true, true);
    const hop_expr *e = hop_sym_add_int(env, hop_sym_mul_int(env, s0, 2), 1);
    const hop_expr *b = hop_sym_gt(env, s1, hop_sym_const(env, 4));
    hop_arg inner[] = {hop_arg_int(1), hop_arg_int(-2)};
    hop_arg outer[] = {hop_arg_list(inner, 2), hop_arg_list(NULL, 0), hop_arg_sym(s1)};
    hop_arg args[] = {hop_arg_none(),        hop_arg_bool(true),      hop_arg_bool(false),
                      hop_arg_int(-7),       hop_arg_int(INT64_MAX),  hop_arg_sym(e),
                      hop_arg_sym(b),        hop_arg_dtype(HOP_BOOL), hop_arg_dtype(HOP_I32),
                      hop_arg_list(outer, 3)};
    assert_text(
        code_of_args(env, s0, args, sizeof args / sizeof args[0]),
        "def forward(x: \"f32[s0, 4]\"):\n"
        "    show: \"()\" = show(None, True, False, -7, 9223372036854775807, 2*s0 + 1, s1 > 4, "
        "bool, i32, ([1, -2], [], s1), x)\n");
    hop_shape_env_free(env);
}

static void
test_empty_graphs_and_call_hop_annotations(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *g = hop_graph_new(env, "forward");
    assert_text(hop_graph_code(g), "def forward():\n"
                                   "    pass\n");
    assert_text(hop_graph_table(g), "graph forward:\n"
                                    "opcode  name  target  args  meta\n"
                                    "------  ----  ------  ----  ----\n");
    assert_text(hop_graph_dot(g), "digraph \"forward\" {\n"
                                  "    compound=true;\n"
                                  "    node [fontname=\"monospace\", fontsize=10];\n"
                                  "}\n");

    /* A subgraph with no nodes, called with no operands, for 0, 1 and 3 outputs. */
    hop_graph *body = hop_graph_new(env, "body");
    assert_int_equal(hop_graph_add_subgraph(g, body), HOP_OK);
    const hop_expr *three = hop_sym_const(env, 3);
    hop_value_info outs[] = {{.kind = HOP_VALUE_TENSOR, .meta = {HOP_I64, 1, {three}}},
                             {.kind = HOP_VALUE_TENSOR, .meta = {HOP_BOOL, 0, {NULL}}},
                             {.kind = HOP_VALUE_SYM, .sym = three}};
    hop_arg args[] = {hop_arg_graph(body), hop_arg_list(NULL, 0)};
    assert_non_null(hop_graph_call_hop(g, class_named("run"), args, 2, NULL, 0));
    assert_non_null(hop_graph_call_hop(g, class_named("run"), args, 2, outs, 1));
    assert_non_null(hop_graph_call_hop(g, class_named("run"), args, 2, outs, 3));
    assert_text(hop_graph_code(g), "def forward():\n"
                                   "    def body():\n"
                                   "        pass\n"
                                   "\n"
                                   "    run: \"()\" = run(body, ())\n"
                                   "    run_1: \"i64[3]\" = run(body, ())\n"
                                   "    run_2: \"(i64[3], bool[], Sym(3))\" = run(body, ())\n");
    hop_graph_free(g);
    hop_shape_env_free(env);
}

static void
test_printed_names_are_identifiers(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *g = hop_graph_new(env, "say \"hi\"");
    hop_value_info v = {.kind = HOP_VALUE_SYM, .sym = hop_sym_const(env, 2)};
    assert_non_null(hop_graph_placeholder(g, "a\\b", &v));
    hop_arg args[] = {hop_arg_int(1)};
    assert_null(hop_graph_call_hop(g, class_named("my\"hop"), args, 1, NULL, 0));
    assert_string_equal(hop_error_message(), "call_hop my\"hop: the target is not an identifier");
    assert_null(hop_graph_call_hop(g, class_named("if"), args, 1, NULL, 0));
    assert_string_equal(hop_error_message(), "call_hop if: the target is not an identifier");
    assert_text(hop_graph_code(g), "def say__hi_(a_b: \"Sym(2)\"):\n"
                                   "    pass\n");
    assert_text(hop_graph_dot(g), "digraph \"say__hi_\" {\n"
                                  "    compound=true;\n"
                                  "    node [fontname=\"monospace\", fontsize=10];\n"
                                  "    \"a_b\" [label=\"a_b\\nSym(2)\", shape=ellipse];\n"
                                  "}\n");
    hop_graph_free(g);
    hop_shape_env_free(env);
}

/* hop_arg_print is the printers' own argument printer: the same text as in
 * code, floats in either style, the snprintf contract (truncation keeps a
 * NUL and the return counts the whole text), and no allocation at all. */
static void
test_arg_print_is_the_printers_spelling_with_the_snprintf_contract(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *e = hop_sym_add_int(env, hop_sym_mul_int(env, s0, 2), 1);
    hop_arg inner[] = {hop_arg_int(1), hop_arg_float(2.0), hop_arg_sym(e), hop_arg_none()};
    hop_arg list = hop_arg_list(inner, 4);
    char buf[64];
    long allocs = hop_alloc_live();
    hop_alloc_fail_at(1); /* nothing below may allocate */
    assert_int_equal(hop_arg_print(&list, HOP_FLOAT_REPR, buf, sizeof buf), 24);
    assert_string_equal(buf, "[1, 2.0, 2*s0 + 1, None]");
    assert_int_equal(hop_arg_print(&list, HOP_FLOAT_G17, buf, sizeof buf), 22);
    assert_string_equal(buf, "[1, 2, 2*s0 + 1, None]");
    hop_arg tenth = hop_arg_float(0.1);
    assert_int_equal(hop_arg_print(&tenth, HOP_FLOAT_G17, buf, sizeof buf), 19);
    assert_string_equal(buf, "0.10000000000000001");
    assert_int_equal(hop_arg_print(&tenth, HOP_FLOAT_REPR, buf, sizeof buf), 3);
    assert_string_equal(buf, "0.1");
    /* Truncated: as much as fits, NUL-terminated, the full length returned;
     * the expression too is cut in place. */
    for (size_t cap = 0; cap <= 24; cap++) {
        char small[32];
        memset(small, 'x', sizeof small);
        assert_int_equal(hop_arg_print(&list, HOP_FLOAT_REPR, small, cap), 24);
        if (cap > 0) {
            assert_int_equal(strlen(small), cap - 1);
            assert_memory_equal(small, "[1, 2.0, 2*s0 + 1, None]", cap - 1);
        }
        assert_int_equal(small[cap], 'x');
    }
    assert_int_equal(hop_arg_print(&list, HOP_FLOAT_REPR, NULL, 0), 24);
    assert_int_equal(hop_arg_print(NULL, HOP_FLOAT_REPR, buf, sizeof buf), 4);
    assert_string_equal(buf, "NULL");
    hop_alloc_fail_at(0);
    assert_int_equal(hop_alloc_live(), allocs);
    assert_true(hop_name_is_identifier("cond_true_0"));
    assert_true(hop_name_is_identifier("_x"));
    assert_false(hop_name_is_identifier("0x"));
    assert_false(hop_name_is_identifier("a-b"));
    assert_false(hop_name_is_identifier("lambda"));
    /* every keyword (the search over them is a binary one), and names next
     * to them in strcmp order */
    const char *keywords[] = {
        "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
        "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
        "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
        "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        assert_false(hop_name_is_identifier(keywords[i]));
    const char *near[] = {"Fals", "Falsey", "Nonf", "an", "ande", "asserts", "a", "de", "ifa", "ia",
                          "noz", "yields", "yiel", "zz", "AA", "_if",
                          /* op names, through the first-letter and length filter */
                          "add", "mul", "sub", "div", "relu", "neg", "ass", "iff", "dell", "Tru",
                          "Nones", "finall", "continu", "nonlocals", "t", "exp"};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
        assert_true(hop_name_is_identifier(near[i]));
    assert_false(hop_name_is_identifier(""));
    assert_false(hop_name_is_identifier(NULL));
    /* A call_op node's name is reserved from its op's name unsanitised
     * (graph/names.c hop__name_reserve_op): every op's name must be an
     * identifier and no keyword. */
    for (int op = 0; op < HOP_OP_COUNT; op++)
        assert_true(hop_name_is_identifier(hop_op_get((hop_op)op)->name));
    hop_shape_env_free(env);
}

/* Building the example and printing it three ways: every allocation can
 * fail, each failure is NOMEM, and nothing leaks. */
static hop_status
build_and_print(char **texts)
{
    example ex;
    hop_status st = build_example(&ex);
    if (st != HOP_OK)
        return st;
    texts[0] = hop_graph_code(ex.g);
    texts[1] = texts[0] ? hop_graph_table(ex.g) : NULL;
    texts[2] = texts[1] ? hop_graph_dot(ex.g) : NULL;
    st = texts[2] ? HOP_OK : hop_error_code();
    free_example(&ex);
    if (st != HOP_OK) {
        for (int i = 0; i < 3; i++) {
            hop_free(texts[i]);
            texts[i] = NULL;
        }
    }
    return st;
}

static void
test_every_allocation_failure_while_building_and_printing_is_nomem(void **state)
{
    (void)state;
    char *want[3] = {NULL, NULL, NULL};
    assert_int_equal(build_and_print(want), HOP_OK);
    long live = hop_alloc_live();
    long k;
    for (k = 1;; k++) {
        char *got[3] = {NULL, NULL, NULL};
        hop_alloc_fail_at(k);
        hop_status st = build_and_print(got);
        hop_alloc_fail_at(0);
        if (st == HOP_OK) {
            for (int i = 0; i < 3; i++) {
                assert_string_equal(got[i], want[i]);
                hop_free(got[i]);
            }
            break;
        }
        assert_string_equal(hop_status_name(st), "HOP_NOMEM");
        assert_int_equal(hop_alloc_live(), live);
    }
    assert_true(k > 20);
    for (int i = 0; i < 3; i++)
        hop_free(want[i]);
}

int
main(void)
{
#define T_(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(test_code_prints_nested_subgraphs_as_nested_defs),
        T_(test_table_aligns_columns_and_lists_subgraphs_after_their_parent),
        T_(test_dot_has_one_cluster_per_subgraph_and_edges_from_args_to_users),
        T_(test_floats_print_in_the_shortest_form_that_reads_back),
        T_(test_every_argument_kind_has_one_spelling),
        T_(test_empty_graphs_and_call_hop_annotations),
        T_(test_printed_names_are_identifiers),
        T_(test_arg_print_is_the_printers_spelling_with_the_snprintf_contract),
        T_(test_every_allocation_failure_while_building_and_printing_is_nomem),
    };
#undef T_
    return cmocka_run_group_tests(tests, NULL, NULL);
}
