/*
 * tests/c/test_rewrite.c - graph's rewriter (hop/rewrite.h) and body
 * layouts and call builders (hop/layout.h), on the graph layer alone: a
 * loop-like class with a made input, two groups and a lifted list, built
 * and read by name; copies and inlining of graphs with subgraphs; the memo;
 * errors and allocation failures leave nothing behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/layout.h"
#include "hop/rewrite.h"
#include "test_nomem_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hop_shape_env *env;
static long live_at_setup;

static int
setup(void **state)
{
    (void)state;
    live_at_setup = hop_alloc_live();
    env = hop_shape_env_new();
    return env ? 0 : -1;
}

static int
teardown(void **state)
{
    (void)state;
    hop_shape_env_free(env);
    env = NULL;
    assert_int_equal(hop_alloc_live(), live_at_setup);
    return 0;
}

/* loop(n: int, f, init: CARRY, xs: VALUES) with one made input (a step) and
 * the lifted values in a list of their own; verified as the base verifies. */
static const hop_class loop_class = {
    .name = "loop",
    .params = {{"n", HOP_PARAM_INT},
               {"f", HOP_PARAM_BODY, "loop_body"},
               {"init", HOP_PARAM_CARRY},
               {"xs", HOP_PARAM_VALUES}},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .made_inputs = 1,
};

static hop_value_info
F32(int64_t n)
{
    hop_value_info v = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&v.meta, env, HOP_F32, 1, (int64_t[]){n}), HOP_OK);
    return v;
}

static hop_value_info
SYM(void)
{
    hop_value_info v = {.kind = HOP_VALUE_SYM, .sym = hop_shape_env_unbacked(env, 0, 9)};
    assert_non_null(v.sym);
    return v;
}

static hop_node *
op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    hop_node *n = hop_graph_call_op(g, op, (hop_arg[]){hop_arg_node(a), hop_arg_node(b)}, 2);
    assert_non_null(n);
    return n;
}

/* A root graph with c, x, w and a call of loop built with the builder:
 * inputs added by group name out of order still land in group order, in
 * the body and in the call's lists. */
static hop_graph *
built_loop(hop_node **call)
{
    hop_graph *g = hop_graph_new(env, "root");
    hop_value_info f4 = F32(4), i = SYM();
    hop_node *c = hop_graph_placeholder(g, "c", &f4), *x = hop_graph_placeholder(g, "x", &f4);
    hop_node *w = hop_graph_placeholder(g, "w", &f4);
    hop_build *b = hop_build_new(g, &loop_class);
    hop_graph *body = hop_build_body(b, "f", "loop_body_0");
    assert_non_null(body);
    hop_node *pw = hop_build_input(b, HOP_SPAN_LIFTED, w, "w", &f4);
    hop_node *px = hop_build_input(b, "xs", x, "x", &f4);
    hop_node *pc = hop_build_input(b, "init", c, "c", &f4);
    assert_non_null(hop_build_made(b, "i", &i));
    assert_non_null(pw && px && pc ? pw : NULL);
    hop_span s = hop_build_span(b, "xs");
    assert_int_equal(s.at, 2);
    assert_int_equal(s.n, 1);
    assert_int_equal(hop_build_lead(b, "n", hop_arg_int(3)), HOP_OK);
    assert_int_equal(
        hop_build_output(b, "f", op2(body, HOP_OP_add, op2(body, HOP_OP_mul, pc, px), pw)), HOP_OK);
    *call = hop_build_emit(b, &f4, 1);
    assert_non_null(*call);
    hop_node *r = hop_graph_getitem(g, *call, 0);
    assert_non_null(hop_graph_output(g, (hop_arg[]){hop_arg_node(r)}, 1));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    return g;
}

static const char *const built_code =
    "def root(c: \"f32[4]\", x: \"f32[4]\", w: \"f32[4]\"):\n"
    "    def loop_body_0(i: \"Sym(u0)\", c: \"f32[4]\", x: \"f32[4]\", w: \"f32[4]\"):\n"
    "        mul: \"f32[4]\" = mul(c, x)\n"
    "        add: \"f32[4]\" = add(mul, w)\n"
    "        return (add,)\n"
    "\n"
    "    loop: \"f32[4]\" = loop(3, loop_body_0, (c,), (x,), (w,))\n"
    "    getitem: \"f32[4]\" = loop[0]\n"
    "    return (getitem,)\n";

static void
test_a_builder_puts_inputs_in_group_order_whatever_order_they_come_in(void **state)
{
    (void)state;
    hop_node *call;
    hop_graph *g = built_loop(&call);
    char *code = hop_graph_code(g);
    assert_string_equal(code, built_code);
    hop_free(code);
    hop_graph_free(g);
}

static void
test_a_layout_names_the_made_inputs_each_group_and_the_lifted_values(void **state)
{
    (void)state;
    hop_node *call;
    hop_graph *g = built_loop(&call);
    hop_layout l;
    assert_int_equal(hop_layout_of(call, &l), HOP_OK);
    assert_int_equal(l.n, 4);
    const char *names[] = {HOP_SPAN_MADE, "init", "xs", HOP_SPAN_LIFTED};
    for (size_t k = 0; k < 4; k++) {
        hop_span s = hop_layout_span(&l, names[k]);
        assert_int_equal(s.at, k);
        assert_int_equal(s.n, 1);
        if (k > 0) /* what the call passes there is the root's value of that name */
            assert_string_equal(hop_node_passed_to(call, s.at)->u.node->name,
                                hop_graph_placeholder_at(call->args[1].u.graph, s.at)->name);
    }
    hop_span none = hop_layout_span(&l, "ys");
    assert_int_equal(none.at, 4);
    assert_int_equal(none.n, 0);
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_layout_span: the layout has no span ys");
    hop_error_clear();
    assert_int_equal(hop_layout_of(hop_graph_placeholder_at(g, 0), &l), HOP_MISUSE);
    hop_graph_free(g);
}

/* A builder's errors name the class and the parameter; an abandoned or
 * failed builder leaves the graph with no body of its. */
static void
test_builder_errors_name_the_parameter_and_leave_the_graph_as_it_was(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "root");
    hop_value_info f4 = F32(4);
    hop_node *c = hop_graph_placeholder(g, "c", &f4);
    hop_build *b = hop_build_new(g, &loop_class);
    assert_null(hop_build_body(b, "g", "x"));
    assert_string_equal(hop_error_message(), "hop_build: loop has no body parameter g");
    assert_int_equal(hop_build_lead(b, "init", hop_arg_int(1)), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_build: loop has no leading parameter init");
    assert_null(hop_build_input(b, "init", c, "c", &f4));
    assert_string_equal(hop_error_message(), "hop_build: loop has no body being built for input c");
    hop_graph *body = hop_build_body(b, "f", "loop_body_0");
    assert_non_null(hop_build_input(b, "init", c, "c", &f4));
    assert_null(hop_build_body(b, "f", "again"));
    assert_string_equal(hop_error_message(), "hop_build: loop's body f is given twice");
    assert_int_equal(hop_build_output(b, "f", hop_graph_placeholder_at(body, 0)), HOP_OK);
    assert_null(hop_build_emit(b, &f4, 1)); /* freed, with its body */
    assert_string_equal(hop_error_message(), "hop_build_emit: loop's lead n is not given");
    assert_int_equal(g->nsubgraphs, 0);
    assert_null(hop_graph_find_subgraph(g, "loop_body_0"));
    b = hop_build_new(g, &loop_class);
    assert_non_null(hop_build_body(b, "f", "loop_body_0"));
    hop_build_free(b);
    assert_int_equal(g->nsubgraphs, 0);
    hop_graph_free(g);
}

/* A call built like another with other values: hop_build_passed puts
 * value j of what a call passes (a node or a constant) into the group of
 * its input made + j; hop_build_keep_body's graph comes after the
 * signature's bodies, where hop_node_graphs lists it last. */
static void
test_a_builder_passes_values_by_group_and_keeps_a_body_after_the_signatures(void **state)
{
    (void)state;
    hop_node *call;
    hop_graph *g = built_loop(&call);
    hop_layout l;
    assert_int_equal(hop_layout_of(call, &l), HOP_OK);
    hop_graph *body = call->args[1].u.graph;
    hop_graph *other = hop_graph_new_subgraph(g, "kept_0");
    assert_non_null(other);
    assert_int_equal(hop_graph_copy(body, other), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, other), HOP_OK);
    hop_node *w = hop_graph_placeholder_at(g, 2), *x = hop_graph_placeholder_at(g, 1);
    hop_arg vals[] = {hop_arg_node(w), hop_arg_int(7), hop_arg_node(x)};
    hop_value_info f4 = F32(4);
    hop_build *b = hop_build_new(g, &loop_class);
    assert_int_equal(hop_build_lead(b, "n", hop_arg_int(2)), HOP_OK);
    assert_int_equal(hop_build_keep_body(b, other), HOP_OK);
    assert_int_equal(hop_build_keep_body(b, other), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_build_keep_body: loop keeps a body already");
    assert_int_equal(hop_build_use_body(b, "f", body), HOP_OK);
    assert_int_equal(hop_build_passed(b, &l, vals), HOP_OK);
    hop_node *c2 = hop_build_emit(b, &f4, 1);
    assert_non_null(c2);
    assert_int_equal(c2->nargs, 6);
    size_t n;
    const hop_arg *bodies = hop_node_graphs(c2, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(bodies[0].u.graph, body);
    assert_ptr_equal(bodies[1].u.graph, other);
    const char *groups[] = {"init", "xs", HOP_SPAN_LIFTED};
    for (size_t k = 0; k < 3; k++) {
        const hop_arg *a = hop_node_passed_to(c2, hop_layout_span(&l, groups[k]).at);
        assert_int_equal(a->kind, vals[k].kind);
        if (a->kind == HOP_ARG_NODE)
            assert_ptr_equal(a->u.node, vals[k].u.node);
        else
            assert_int_equal(a->u.i, 7);
    }
    /* a kept body must be the graph's; a body being built takes no values */
    b = hop_build_new(g, &loop_class);
    hop_graph *loose = hop_graph_new(env, "loose");
    assert_int_equal(hop_build_keep_body(b, loose), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "hop_build_keep_body: loop's kept body is not a subgraph of root");
    assert_non_null(hop_build_body(b, "f", "loop_body_1"));
    assert_int_equal(hop_build_passed(b, &l, vals), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "hop_build_passed: init of loop: a body being built needs hop_build_input");
    hop_build_free(b);
    hop_graph_free(loose);
    hop_graph_free(g);
}

/* hop_graph_copy: the same graph (printed alike), its subgraphs copied;
 * hop_graph_copy_into installs a copy under the source's name. */
static void
test_copies_print_as_their_source_and_own_their_subgraphs(void **state)
{
    (void)state;
    hop_node *call;
    hop_graph *g = built_loop(&call);
    hop_graph *c = hop_graph_new(env, "root");
    assert_int_equal(hop_graph_copy(g, c), HOP_OK);
    char *a = hop_graph_code(g), *b = hop_graph_code(c);
    assert_string_equal(a, b);
    assert_ptr_not_equal(c->subgraphs[0], g->subgraphs[0]);
    assert_int_equal(hop_graph_copy(g, c), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_graph_copy: the out graph is not empty");
    hop_graph *parent = hop_graph_new(env, "parent");
    hop_graph *into = hop_graph_copy_into(parent, g->subgraphs[0]);
    assert_non_null(into);
    assert_string_equal(into->name, "loop_body_0");
    assert_ptr_equal(hop_graph_find_subgraph(parent, "loop_body_0"), into);
    hop_free(a);
    hop_free(b);
    hop_graph_free(parent);
    hop_graph_free(c);
    hop_graph_free(g);
}

/* A rewrite maps source nodes to entries; a copied call's values are
 * getitems made on first use; the memo keeps one version per (body, key). */
static void
test_a_rewrite_maps_nodes_copies_calls_and_memoises_bodies(void **state)
{
    (void)state;
    hop_node *call;
    hop_graph *g = built_loop(&call);
    hop_graph *out = hop_graph_new(env, "out");
    hop_rewrite rw;
    hop_rewrite_init(&rw, g, out, "test");
    hop_rewrite_entry *e = NULL;
    for (const hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next)
        assert_non_null(e = hop_rewrite_copy(&rw, n, NULL));
    assert_ptr_equal(hop_rewrite_find(&rw, g->first)->vals[0], out->first);
    hop_rewrite_entry *ce = hop_rewrite_copy(&rw, call, NULL);
    assert_non_null(ce);
    assert_int_equal(ce->n, 1);
    assert_int_equal(out->nsubgraphs, 1); /* its body, copied once */
    hop_node *v = hop_rewrite_value(&rw, ce, 0);
    assert_non_null(v);
    assert_int_equal(v->kind, HOP_NODE_GETITEM);
    assert_ptr_equal(hop_rewrite_value(&rw, ce, 0), v);
    assert_null(hop_rewrite_value(&rw, ce, 1));
    /* a node not copied yet cannot be an argument */
    hop_arg a;
    assert_int_equal(hop_rewrite_map_arg(&rw, &g->output->args[0], &a), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "test: getitem is used before it is defined in graph root");
    const hop_graph *body = g->subgraphs[0];
    assert_ptr_equal(hop_rewrite_subgraph(&rw, body), out->subgraphs[0]);
    assert_null(hop_rewrite_memo_find(&rw, body, "b1"));
    assert_int_equal(hop_rewrite_memo_add(&rw, body, "b1", out->subgraphs[0]), HOP_OK);
    assert_ptr_equal(hop_rewrite_memo_find(&rw, body, "b1"), out->subgraphs[0]);
    assert_null(hop_rewrite_memo_find(&rw, body, "b0"));
    hop_rewrite_clear(&rw);
    hop_graph_free(out);
    hop_graph_free(g);
}

/* Every allocation of building, copying and inlining fails in turn:
 * HOP_NOMEM or NULL, nothing leaked. */
static hop_status
build_copy_inline_in(void)
{
    hop_node *call = NULL;
    hop_graph *g = hop_graph_new(env, "root"), *c = hop_graph_new(env, "copy");
    hop_value_info f4 = {.kind = HOP_VALUE_TENSOR};
    hop_node *x = g && hop_meta_init(&f4.meta, env, HOP_F32, 1, (int64_t[]){4}) == HOP_OK
                      ? hop_graph_placeholder(g, "x", &f4)
                      : NULL;
    hop_build *b = x ? hop_build_new(g, &loop_class) : NULL;
    hop_graph *body = b ? hop_build_body(b, "f", "loop_body_0") : NULL;
    hop_value_info i = {.kind = HOP_VALUE_SYM, .sym = hop_shape_env_unbacked(env, 0, 9)};
    hop_node *p = body && i.sym && hop_build_made(b, "i", &i)
                      ? hop_build_input(b, "init", x, "x", &f4)
                      : NULL;
    hop_status st = p ? hop_build_output(b, "f", p) : hop_error_code();
    if (st == HOP_OK && hop_build_lead(b, "n", hop_arg_int(2)) == HOP_OK) {
        call = hop_build_emit(b, &f4, 1);
        b = NULL;
    }
    hop_build_free(b);
    hop_node *r = call ? hop_graph_getitem(g, call, 0) : NULL;
    st = r && hop_graph_output(g, (hop_arg[]){hop_arg_node(r)}, 1) ? HOP_OK : hop_error_code();
    if (st == HOP_OK)
        st = c ? hop_graph_copy(g, c) : hop_error_code();
    hop_node *outs[1];
    if (st == HOP_OK) {
        hop_graph *d = hop_graph_new(env, "d");
        hop_node *in = d ? hop_graph_placeholder(d, "y", &f4) : NULL;
        st = in ? hop_graph_inline(d, g, &in, outs) : hop_error_code();
        hop_graph_free(d);
    }
    hop_graph_free(c);
    hop_graph_free(g);
    return st == HOP_OK ? st : hop_error_code();
}

/* ... in a ShapeEnv of its own (its symbols would outlive the graphs). */
static hop_status
build_copy_inline(void)
{
    hop_shape_env *outer = env;
    env = hop_shape_env_new();
    hop_status st = env ? build_copy_inline_in() : hop_error_code();
    hop_shape_env_free(env);
    env = outer;
    return st;
}

static hop_status
build_copy_inline_arg(void *unused)
{
    (void)unused;
    return build_copy_inline();
}

static void
test_allocation_failures_leave_nothing_behind(void **state)
{
    (void)state;
    assert_int_equal(build_copy_inline(), HOP_OK);
    assert_true(hop_test_nomem_sweep(build_copy_inline_arg, NULL) > 20);
}

int
main(void)
{
#define T_(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(test_a_builder_puts_inputs_in_group_order_whatever_order_they_come_in),
        T_(test_a_layout_names_the_made_inputs_each_group_and_the_lifted_values),
        T_(test_builder_errors_name_the_parameter_and_leave_the_graph_as_it_was),
        T_(test_a_builder_passes_values_by_group_and_keeps_a_body_after_the_signatures),
        T_(test_copies_print_as_their_source_and_own_their_subgraphs),
        T_(test_a_rewrite_maps_nodes_copies_calls_and_memoises_bodies),
        T_(test_allocation_failures_leave_nothing_behind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
