/*
 * tests/c/test_tracer.c - the OutputGraph and SubgraphTracer: lifting of free
 * tensors and symbols through nested tracers (the scenarios of seed 003 and
 * DESIGN.md), root inputs, captures, dead proxies, checkpoints and errors.
 *
 * Graphs are built by hand through the public API, as a HOP would build them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lifts.h"
#include "hop/output_graph.h"

#include <stdio.h>
#include <string.h>

/* "s0, s1, x": the placeholder names of g, in order. */
static const char *
placeholders(const hop_graph *g)
{
    static char buf[4096];
    buf[0] = '\0';
    for (size_t i = 0; i < g->nplaceholders; i++) {
        if (i)
            strcat(buf, ", ");
        strcat(buf, hop_graph_placeholder_at(g, i)->name);
    }
    return buf;
}

/* "s0<-s0, x<-x": each lifted placeholder of t and the parent value passed for it. */
static const char *
sources(const hop_tracer *t)
{
    static char buf[4096];
    buf[0] = '\0';
    for (size_t i = 0; i < hop_tracer_nlifted(t); i++) {
        hop_node *ph = hop_tracer_lifted_placeholder(t, i);
        if (i)
            strcat(buf, ", ");
        strcat(buf, ph->name);
        strcat(buf, "<-");
        strcat(buf, hop_tracer_lifted_source(t, ph)->name);
    }
    return buf;
}

static hop_node *
op1(hop_tracer *t, hop_op op, hop_node *a)
{
    hop_arg args[] = {hop_arg_node(a)};
    hop_node *n = hop_tracer_call_op(t, op, args, 1);
    assert_non_null(n);
    return n;
}

static hop_node *
op2(hop_tracer *t, hop_op op, hop_node *a, hop_node *b)
{
    hop_arg args[] = {hop_arg_node(a), hop_arg_node(b)};
    hop_node *n = hop_tracer_call_op(t, op, args, 2);
    assert_non_null(n);
    return n;
}

static void
ret(hop_tracer *t, hop_node *v)
{
    hop_arg a = hop_arg_node(v);
    assert_non_null(hop_tracer_output(t, &a, 1));
}

static hop_graph *
pop(hop_output_graph *og, hop_tracer *t)
{
    hop_graph *g = NULL;
    assert_int_equal(hop_output_graph_pop(og, t, &g), HOP_OK);
    assert_ptr_equal(g, hop_tracer_graph(t));
    return g;
}

static hop_node *
input(hop_output_graph *og, const char *name, int rank, int64_t d0, int64_t d1, bool dynamic)
{
    int64_t sizes[] = {d0, d1};
    hop_node *n = hop_output_graph_add_input(og, name, HOP_F32, rank, sizes, dynamic);
    assert_non_null(n);
    return n;
}

static void
test_root_inputs_get_symbols_right_before_their_tensor_with_duck_sizing(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_graph *root = hop_output_graph_root_graph(og);
    input(og, "x", 2, 3, 4, true);
    input(og, "y", 2, 4, 5, true);
    input(og, "z", 2, 1, 3, true);
    input(og, "w", 2, 3, 4, false);
    assert_string_equal(placeholders(root), "s0, s1, x, s2, y, z, w");
    hop_node *z = hop_graph_find_node(root, "z");
    char buf[64];
    hop_meta_print(&z->meta->meta, buf, sizeof buf);
    assert_string_equal(buf, "f32[1, s0]");

    hop_source src;
    assert_ptr_equal(hop_output_graph_input(og, 0, &src), hop_graph_find_node(root, "s0"));
    assert_int_equal(src.kind, HOP_SOURCE_SIZE);
    assert_int_equal(src.input, 2);
    assert_int_equal(src.dim, 0);
    hop_output_graph_input(og, 1, &src);
    assert_int_equal(src.kind, HOP_SOURCE_SIZE);
    assert_int_equal(src.dim, 1);
    hop_output_graph_input(og, 3, &src);
    assert_int_equal(src.kind, HOP_SOURCE_SIZE);
    assert_int_equal(src.input, 4);
    assert_int_equal(src.dim, 1);
    hop_output_graph_input(og, 4, &src);
    assert_int_equal(src.kind, HOP_SOURCE_ARG);
    assert_int_equal(src.position, 1);
    hop_output_graph_input(og, 6, &src);
    assert_int_equal(src.kind, HOP_SOURCE_ARG);
    assert_int_equal(src.position, 3);
    assert_int_equal(hop_output_graph_ninputs(og), 7);
    hop_output_graph_free(og);
}

/* Seed 003: x: [s0, s1] used two tracers deep; every level is (s0, s1, x). */
static void
test_tensor_used_two_levels_deep_is_lifted_with_its_symbols_at_every_level(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, true);
    hop_tracer *t1 = hop_output_graph_push(og, "cond_true_0");
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    assert_int_equal(hop_output_graph_depth(og), 3);
    hop_node *s = op1(t2, HOP_OP_sin, x);
    ret(t2, s);
    hop_graph *g2 = pop(og, t2);
    hop_graph *g1 = hop_tracer_graph(t1);

    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "s0, s1, x");
    assert_string_equal(placeholders(g1), "s0, s1, x");
    assert_string_equal(placeholders(g2), "s0, s1, x");
    assert_string_equal(sources(t1), "s0<-s0, s1<-s1, x<-x");
    assert_string_equal(sources(t2), "s0<-s0, s1<-s1, x<-x");
    /* The inner graph's sources are the middle graph's placeholders. */
    assert_ptr_equal(hop_tracer_lifted_source(t2, hop_graph_find_node(g2, "x")),
                     hop_graph_find_node(g1, "x"));
    assert_ptr_equal(hop_tracer_lifted_source(t1, hop_graph_find_node(g1, "x")), x);
    char *code = hop_graph_code(g2);
    assert_non_null(strstr(code, "sin: \"f32[s0, s1]\" = sin(x)"));
    hop_free(code);
    hop_output_graph_free(og);
}

static void
test_two_tensors_sharing_a_symbol_bind_it_once_per_level(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, true);
    hop_node *y = input(og, "y", 2, 4, 5, true);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    op1(t2, HOP_OP_cos, y);
    op1(t2, HOP_OP_sin, x);
    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "s0, s1, x, s2, y");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "s1, s2, y, s0, x");
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "s1, s2, y, s0, x");
    assert_string_equal(sources(t2), "s1<-s1, s2<-s2, y<-y, s0<-s0, x<-x");
    hop_output_graph_free(og);
}

/* A closure over c = x.size(0) inside a nested tracer: only the symbol. */
static void
test_closure_over_size_lifts_only_the_symbol_into_the_inner_tracer(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, true);
    hop_tracer *t1 = hop_output_graph_push(og, "cond_true_0");
    hop_arg a[] = {hop_arg_node(x), hop_arg_int(0)};
    hop_node *c = hop_tracer_call_op(t1, HOP_OP_sym_size, a, 2);
    assert_non_null(c);
    assert_string_equal(c->name, "sym_size");
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    ret(t2, c);
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "s0, s1, x");
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "s0");
    assert_string_equal(sources(t2), "s0<-s0");
    hop_output_graph_free(og);
}

static hop_node *
int_scalar_input(hop_output_graph *og, const char *name)
{
    hop_node *n = hop_output_graph_add_input(og, name, HOP_I64, 0, NULL, true);
    assert_non_null(n);
    return n;
}

/* c = x.item() in tracer 1, used in tracer 2: u0 comes from tracer 1 only. */
static void
test_unbacked_symbol_from_item_is_lifted_from_the_tracer_that_made_it(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = int_scalar_input(og, "x");
    hop_tracer *t1 = hop_output_graph_push(og, "cond_true_0");
    hop_node *c = op1(t1, HOP_OP_item, x);
    assert_string_equal(hop_symbol_name(c->meta->sym), "u0");
    assert_ptr_equal(hop_tracer_bound_symbol(t1, c->meta->sym), c);
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    ret(t2, c);
    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "x");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x");
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "u0");
    assert_string_equal(sources(t2), "u0<-item");
    hop_output_graph_free(og);
}

/* r = zeros(c) with c unbacked, closed over: u0 comes right before r. */
static void
test_tensor_with_unbacked_size_brings_its_symbol_right_before_it(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = int_scalar_input(og, "x");
    hop_node *y = input(og, "y", 1, 5, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "cond_true_0");
    hop_node *c = op1(t1, HOP_OP_item, x);
    hop_arg shape[] = {hop_arg_node(c)};
    hop_arg za[] = {hop_arg_list(shape, 1), hop_arg_none()};
    hop_node *r = hop_tracer_call_op(t1, HOP_OP_zeros, za, 2);
    assert_non_null(r);
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    op1(t2, HOP_OP_sin, y);
    op1(t2, HOP_OP_cos, r);
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "y, u0, zeros");
    assert_string_equal(sources(t2), "y<-y, u0<-item, zeros<-zeros");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x, y");
    hop_output_graph_free(og);
}

static void
test_free_value_used_three_times_gets_one_placeholder(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 4, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_node *a = op1(t1, HOP_OP_sin, x);
    hop_node *b = op2(t1, HOP_OP_add, a, x);
    op2(t1, HOP_OP_mul, b, x);
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x");
    assert_int_equal(hop_tracer_nlifted(t1), 1);
    hop_node *ph = hop_graph_find_node(hop_tracer_graph(t1), "x");
    assert_int_equal(ph->nuses, 3);
    hop_output_graph_free(og);
}

/* A value created in the middle tracer of three is lifted into the innermost only. */
static void
test_value_made_in_the_middle_tracer_is_lifted_into_inner_ones_only(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 4, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    hop_node *y = op1(t2, HOP_OP_sin, x);
    hop_tracer *t3 = hop_output_graph_push(og, "wrap_body_2");
    op1(t3, HOP_OP_exp, y);
    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "x");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x");
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "x");
    assert_string_equal(placeholders(hop_tracer_graph(t3)), "sin");
    assert_string_equal(sources(t3), "sin<-sin");
    hop_output_graph_free(og);
}

static void
test_returning_a_free_value_unchanged_lifts_it(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 2, 3, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    ret(t1, x);
    hop_graph *g = pop(og, t1);
    char *code = hop_graph_code(g);
    assert_string_equal(code, "def wrap_body_0(x: \"f32[2, 3]\"):\n"
                              "    return (x,)\n");
    hop_free(code);
    hop_output_graph_free(og);
}

static void
test_explicit_inputs_come_first_then_lifted_values_in_order_of_first_use(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 4, 0, true);
    hop_node *y = input(og, "y", 1, 4, 0, true);
    hop_node *z = input(og, "z", 1, 6, 0, true);
    hop_tracer *t1 = hop_output_graph_push(og, "map_body_0");
    hop_value_info slice = {.kind = HOP_VALUE_TENSOR};
    slice.meta.dtype = HOP_F32;
    slice.meta.rank = 0;
    hop_node *xi = hop_tracer_create_input(t1, "xs", &slice);
    assert_non_null(xi);
    op2(t1, HOP_OP_mul, xi, z);
    op2(t1, HOP_OP_add, xi, y);
    (void)x;
    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "s0, x, y, s1, z");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "xs, s1, z, s0, y");
    assert_null(hop_tracer_lifted_source(t1, xi));
    hop_output_graph_free(og);
}

static void
test_symbolic_argument_binds_its_symbols_in_the_tracer(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, true);
    (void)x;
    hop_shape_env *env = hop_output_graph_env(og);
    const hop_expr *s1 = hop_shape_env_symbol(env, 1);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_arg shape[] = {hop_arg_sym(hop_sym_mul_int(env, s1, 2))};
    hop_arg za[] = {hop_arg_list(shape, 1), hop_arg_none()};
    hop_node *z = hop_tracer_call_op(t1, HOP_OP_zeros, za, 2);
    assert_non_null(z);
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "s1");
    char buf[64];
    hop_meta_print(&z->meta->meta, buf, sizeof buf);
    assert_string_equal(buf, "f32[2*s1]");
    hop_output_graph_free(og);
}

static void
test_compound_symint_value_is_one_input_named_after_its_node(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 6, 0, true);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_arg ra[2];
    hop_arg shape[] = {hop_arg_int(2), hop_arg_int(-1)};
    ra[0] = hop_arg_node(x);
    ra[1] = hop_arg_list(shape, 2);
    hop_node *r = hop_tracer_call_op(t1, HOP_OP_reshape, ra, 2); /* f32[2, s0//2] */
    assert_non_null(r);
    hop_arg sa[] = {hop_arg_node(r), hop_arg_int(1)};
    hop_node *half = hop_tracer_call_op(t1, HOP_OP_sym_size, sa, 2);
    assert_non_null(half);
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    ret(t2, half);
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "sym_size");
    hop_output_graph_free(og);
}

static void
test_nonzero_binds_its_unbacked_size_through_sym_size(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 5, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_node *nz = op1(t1, HOP_OP_nonzero, x);
    const hop_expr *u0 = nz->meta->meta.sizes[0];
    assert_string_equal(hop_symbol_name(u0), "u0");
    hop_node *bound = hop_tracer_bound_symbol(t1, u0);
    assert_non_null(bound);
    assert_string_equal(hop_node_target(bound), "sym_size");
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    op1(t2, HOP_OP_neg, nz);
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "u0, nonzero");
    assert_string_equal(sources(t2), "u0<-sym_size, nonzero<-nonzero");
    hop_output_graph_free(og);
}

static void
test_captured_tensor_is_one_root_input_deduplicated_by_identity(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    input(og, "x", 1, 4, 0, false);
    static float concrete[4];
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    int64_t sizes[] = {4};
    hop_node *c1 = hop_output_graph_capture(og, concrete, "g", HOP_F32, 1, sizes, false);
    hop_node *c2 = hop_output_graph_capture(og, concrete, "g", HOP_F32, 1, sizes, false);
    assert_non_null(c1);
    assert_ptr_equal(c1, c2);
    op1(t1, HOP_OP_sin, c1);
    assert_string_equal(placeholders(hop_output_graph_root_graph(og)), "x, g");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "g");
    hop_source src;
    assert_ptr_equal(hop_output_graph_input(og, 1, &src), c1);
    assert_int_equal(src.kind, HOP_SOURCE_CAPTURE);
    assert_ptr_equal(src.identity, concrete);
    hop_output_graph_free(og);
}

/* HOP_MAX_NESTING bodies nest; one more is HOP_TRACE naming the subgraph,
 * with the stack as it was (deeper nesting would overflow the C stack). */
static void
test_nesting_deeper_than_the_limit_is_a_trace_error(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, false);
    hop_tracer *t = NULL;
    char name[32];
    for (int i = 0; i < HOP_MAX_NESTING; i++) {
        snprintf(name, sizeof name, "wrap_body_%d", i);
        t = hop_output_graph_push(og, name);
        assert_non_null(t);
    }
    assert_non_null(hop_tracer_lift(t, x));
    assert_null(hop_output_graph_push(og, "wrap_body_1000"));
    assert_int_equal(hop_error_code(), HOP_TRACE);
    assert_string_equal(hop_error_message(),
                        "wrap_body_1000: HOP bodies nested 1000 deep already; hop refuses to "
                        "nest deeper (the nesting depth limit, HOP_MAX_NESTING), which would "
                        "overflow the C stack");
    assert_int_equal(hop_output_graph_depth(og), HOP_MAX_NESTING + 1);
    assert_ptr_equal(hop_output_graph_current(og), t);
    hop_graph *g;
    assert_int_equal(hop_output_graph_pop(og, t, &g), HOP_OK);
    assert_non_null(hop_output_graph_push(og, "wrap_body_again"));
    hop_output_graph_free(og);
}

/* 64 nested tracers: every level gets the value; cost is linear in depth. */
static long
allocations_for_first_lift_at_depth(int depth)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 2, 3, 4, true);
    hop_tracer *t = NULL;
    char name[32];
    for (int i = 0; i < depth; i++) {
        snprintf(name, sizeof name, "wrap_body_%d", i);
        t = hop_output_graph_push(og, name);
        assert_non_null(t);
    }
    long before = hop_alloc_count();
    hop_node *v = hop_tracer_lift(t, x);
    long cost = hop_alloc_count() - before;
    assert_non_null(v);
    for (hop_tracer *p = t; p != hop_output_graph_root(og); p = hop_tracer_parent(p))
        assert_string_equal(placeholders(hop_tracer_graph(p)), "s0, s1, x");
    /* Repeated use: one lookup, no allocation, the same placeholder. */
    before = hop_alloc_count();
    for (int i = 0; i < 100; i++)
        assert_ptr_equal(hop_tracer_lift(t, x), v);
    assert_int_equal(hop_alloc_count() - before, 0);
    hop_output_graph_free(og);
    return cost;
}

/* A body's first four lifts are recorded in the tracer itself (issue #30: a
 * malloc and a free for each of its two lists were ~8% of a traced wrap
 * call); the fifth moves them into a block of their own, in order, and a
 * rollback to a mark inside the buffer undoes both kinds. */
static void
test_first_four_lifts_of_a_body_allocate_no_lists_and_more_keep_their_order(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *xs[9];
    char name[16];
    for (int i = 0; i < 9; i++) {
        snprintf(name, sizeof name, "v%d", i);
        xs[i] = input(og, name, 1, 16, 0, false);
    }
    hop_tracer *t = hop_output_graph_push(og, "wrap_body_0");
    assert_non_null(t);
    hop_graph *g = hop_tracer_graph(t);
    /* A placeholder's node and name come from the graphs' shared arena,
     * which the inputs above left with room. */
    long before = hop_alloc_count();
    for (int i = 0; i < 4; i++)
        assert_non_null(hop_tracer_lift(t, xs[i]));
    assert_int_equal(hop_alloc_count() - before, 0);
    for (int i = 0; i < 4; i++)
        assert_ptr_equal(hop_tracer_lift(t, xs[i]), hop_graph_placeholder_at(g, (size_t)i));
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    assert_non_null(cp);
    for (int i = 4; i < 9; i++)
        assert_non_null(hop_tracer_lift(t, xs[i]));
    assert_string_equal(sources(t), "v0<-v0, v1<-v1, v2<-v2, v3<-v3, v4<-v4, v5<-v5, v6<-v6, "
                                    "v7<-v7, v8<-v8");
    for (int i = 0; i < 9; i++)
        assert_ptr_equal(hop_tracer_lift(t, xs[i]), hop_graph_placeholder_at(g, (size_t)i));
    /* Undone back into the buffer's range, then lifted again. */
    assert_int_equal(hop_output_graph_abandon(og, cp, HOP_INVALID), HOP_INVALID);
    assert_string_equal(placeholders(g), "v0, v1, v2, v3");
    assert_string_equal(sources(t), "v0<-v0, v1<-v1, v2<-v2, v3<-v3");
    assert_non_null(hop_tracer_lift(t, xs[8]));
    assert_string_equal(sources(t), "v0<-v0, v1<-v1, v2<-v2, v3<-v3, v8<-v8");
    assert_ptr_equal(hop_tracer_lift(t, xs[2]), hop_graph_placeholder_at(g, 2));
    hop_output_graph_free(og);
}

/* Lift notes: the newest note of a placeholder wins, also one set after
 * an earlier lookup, for every placeholder of many (the table indexes its
 * log of notes when looked up, and again as it grows); a placeholder a
 * failed call took back has none. */
static void
test_lift_notes_give_each_placeholder_its_newest_note_across_lookups(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    enum { N = 40 };
    hop_node *xs[N], *ph[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "v%d", i);
        xs[i] = input(og, name, 1, 16, 0, false);
    }
    hop_tracer *t = hop_output_graph_push(og, "wrap_body_0");
    assert_non_null(t);
    bool operand = true;
    for (int i = 0; i < N; i++) {
        ph[i] = hop_tracer_lift(t, xs[i]);
        assert_non_null(ph[i]);
        snprintf(name, sizeof name, "f.py:%d", i);
        assert_int_equal(hop_output_graph_set_lift_note(og, ph[i], name, i % 2), HOP_OK);
        if (i == 5) { /* a lookup between notes */
            assert_string_equal(hop_output_graph_lift_note(og, ph[3], &operand), "f.py:3");
            assert_true(operand);
        }
        if (i == 12) /* a note replaced after the lookup */
            assert_int_equal(hop_output_graph_set_lift_note(og, ph[3], "g.py:7", false), HOP_OK);
    }
    assert_int_equal(hop_output_graph_set_lift_note(og, ph[30], "g.py:8", true), HOP_OK);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "f.py:%d", i);
        const char *want = i == 3 ? "g.py:7" : i == 30 ? "g.py:8" : name;
        assert_string_equal(hop_output_graph_lift_note(og, ph[i], &operand), want);
        assert_int_equal(operand, i == 3 ? false : i == 30 ? true : (bool)(i % 2));
    }
    assert_null(hop_output_graph_lift_note(og, xs[0], &operand));
    assert_false(operand);
    /* Taken back by a failed call: no note, though it was set. */
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    assert_non_null(cp);
    hop_node *late = hop_tracer_create_input(t, "late", ph[0]->meta);
    assert_non_null(late);
    assert_int_equal(hop_output_graph_set_lift_note(og, late, "h.py:1", false), HOP_OK);
    assert_string_equal(hop_output_graph_lift_note(og, late, NULL), "h.py:1");
    assert_int_equal(hop_output_graph_abandon(og, cp, HOP_INVALID), HOP_INVALID);
    assert_null(hop_output_graph_lift_note(og, late, NULL));
    assert_string_equal(hop_output_graph_lift_note(og, ph[39], NULL), "f.py:39");
    hop_output_graph_free(og);
}

static void
test_lifting_through_64_tracers_costs_linear_in_depth(void **state)
{
    (void)state;
    long c16 = allocations_for_first_lift_at_depth(16);
    long c32 = allocations_for_first_lift_at_depth(32);
    long c64 = allocations_for_first_lift_at_depth(64);
    assert_true(c16 > 0);
    /* Quadratic work would quadruple per doubling; linear roughly doubles. */
    assert_true(c32 <= 2 * c16 + 16);
    assert_true(c64 <= 2 * c32 + 16);
}

static void
test_unbalanced_pop_is_misuse_and_leaves_the_stack_unchanged(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    hop_graph *g = NULL;
    assert_int_equal(hop_output_graph_pop(og, t1, &g), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "hop_output_graph_pop: unbalanced pop of the tracer of graph wrap_body_0 "
                        "while the tracer of graph wrap_body_1 is current");
    assert_null(g);
    assert_int_equal(hop_output_graph_depth(og), 3);
    assert_ptr_equal(hop_output_graph_current(og), t2);
    assert_int_equal(hop_tracer_state_of(t1), HOP_TRACER_SUSPENDED);
    pop(og, t2);
    pop(og, t1);
    assert_int_equal(hop_output_graph_pop(og, hop_output_graph_root(og), &g), HOP_MISUSE);
    assert_int_equal(hop_output_graph_depth(og), 1);
    hop_output_graph_free(og);
}

static void
test_dead_proxy_use_names_its_subgraph_and_changes_nothing(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 4, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "cond_true_0");
    hop_node *s = op1(t1, HOP_OP_sin, x);
    ret(t1, s);
    pop(og, t1);
    hop_graph *root = hop_output_graph_root_graph(og);
    char *before = hop_graph_code(root);
    hop_arg a[] = {hop_arg_node(s)};
    assert_null(hop_tracer_call_op(hop_output_graph_root(og), HOP_OP_cos, a, 1));
    assert_int_equal(hop_error_code(), HOP_TRACE);
    assert_string_equal(hop_error_message(),
                        "value sin was created in subgraph cond_true_0, whose tracing has ended; "
                        "a value made inside a body cannot be used outside it (return it from "
                        "the body instead)");
    char *after = hop_graph_code(root);
    assert_string_equal(before, after);
    hop_free(before);
    hop_free(after);
    /* Also from a new, nested tracer: nothing is lifted into it. */
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    assert_null(hop_tracer_call_op(t2, HOP_OP_cos, a, 1));
    assert_int_equal(hop_tracer_graph(t2)->nnodes, 0);
    hop_output_graph_free(og);
}

static void
test_input_without_metadata_is_misuse_and_changes_nothing(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_tracer *t1 = hop_output_graph_push(og, "map_body_0");
    assert_null(hop_tracer_create_input(t1, "xs", NULL));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "hop_tracer_create_input: input xs of graph map_body_0 has no example "
                        "metadata (every graph input needs one)");
    hop_value_info none = {.kind = HOP_VALUE_NONE};
    assert_null(hop_tracer_create_input(t1, "xs", &none));
    assert_int_equal(hop_tracer_graph(t1)->nplaceholders, 0);
    /* Recording in a suspended tracer is misuse too. */
    hop_output_graph_push(og, "map_body_1");
    hop_value_info ok = {.kind = HOP_VALUE_TENSOR};
    ok.meta.dtype = HOP_F32;
    assert_null(hop_tracer_create_input(t1, "xs", &ok));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_int_equal(hop_tracer_graph(t1)->nplaceholders, 0);
    hop_output_graph_free(og);
}

static void
test_failed_op_after_lifting_rolls_back_every_level(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 3, 0, false);
    hop_node *y = input(og, "y", 1, 5, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    hop_arg a[] = {hop_arg_node(x), hop_arg_node(y)};
    assert_null(hop_tracer_call_op(t2, HOP_OP_add, a, 2)); /* f32[3] + f32[5] */
    assert_int_equal(hop_error_code(), HOP_SHAPE);
    assert_int_equal(hop_tracer_graph(t1)->nplaceholders, 0);
    assert_int_equal(hop_tracer_graph(t2)->nplaceholders, 0);
    assert_int_equal(hop_tracer_nlifted(t1), 0);
    /* The next lift gets the plain names again. */
    hop_node *v = hop_tracer_lift(t2, x);
    assert_string_equal(v->name, "x");
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x");
    hop_output_graph_free(og);
}

static void
test_restore_undoes_a_failed_scope_exactly(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_shape_env *env = hop_output_graph_env(og);
    hop_node *x = input(og, "x", 2, 3, 4, true);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    op1(t1, HOP_OP_sin, x);
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_0");
    hop_graph *root = hop_output_graph_root_graph(og);
    char *root_before = hop_graph_code(root);
    char *t1_before = hop_graph_code(hop_tracer_graph(t1));
    size_t nsym = hop_shape_env_nsymbols(env), nguards = hop_shape_env_nguards(env);

    size_t root_rollbacks = hop_tracer_rollbacks(hop_output_graph_root(og));
    size_t t1_rollbacks = hop_tracer_rollbacks(t1);
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    assert_non_null(cp);
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_1");
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_0");
    hop_tracer *t2 = hop_output_graph_push(og, "cond_true_1");
    hop_node *i = hop_tracer_call_op(
        t2, HOP_OP_item,
        (hop_arg[]){hop_arg_node(hop_tracer_call_op(
            t2, HOP_OP_sum, (hop_arg[]){hop_arg_node(x), hop_arg_none(), hop_arg_bool(false)}, 3))},
        1);
    assert_null(i); /* item of an f32 tensor is unsupported: a real failure */
    static int concrete;
    int64_t sz[] = {7};
    assert_non_null(hop_output_graph_capture(og, &concrete, "c", HOP_F32, 1, sz, true));
    hop_node *n = hop_tracer_call_op(t2, HOP_OP_neg, (hop_arg[]){hop_arg_node(x)}, 1);
    assert_non_null(n);
    assert_int_equal(hop_output_graph_depth(og), 3);

    assert_int_equal(hop_output_graph_restore(og, cp), HOP_OK);
    assert_int_equal(hop_output_graph_depth(og), 2);
    assert_ptr_equal(hop_output_graph_current(og), t1);
    /* Every tracer on the stack was rolled back (a node seen before may be
     * gone): what python/_C/hops.c's lift provenance memo checks.  The
     * failed item op rolled its chain back once already. */
    assert_int_equal(hop_tracer_rollbacks(hop_output_graph_root(og)), root_rollbacks + 2);
    assert_int_equal(hop_tracer_rollbacks(t1), t1_rollbacks + 2);
    assert_int_equal(hop_tracer_rollbacks(NULL), 0);
    assert_int_equal(hop_tracer_state_of(t2), HOP_TRACER_ENDED);
    char *root_after = hop_graph_code(root);
    char *t1_after = hop_graph_code(hop_tracer_graph(t1));
    assert_string_equal(root_before, root_after);
    assert_string_equal(t1_before, t1_after);
    assert_int_equal(hop_shape_env_nsymbols(env), nsym);
    assert_int_equal(hop_shape_env_nguards(env), nguards);
    assert_int_equal(hop_output_graph_ninputs(og), 3);
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_1");
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_0");
    /* The capture is gone too: capturing again makes a new root input. */
    hop_node *c = hop_output_graph_capture(og, &concrete, "c", HOP_F32, 1, sz, true);
    assert_string_equal(c->name, "c");
    assert_string_equal(placeholders(root), "s0, s1, x, s2, c");
    hop_free(root_before);
    hop_free(root_after);
    hop_free(t1_before);
    hop_free(t1_after);
    hop_output_graph_free(og);
}

/* A body's lift table is searched by scan while short and through an index
 * beyond 8 entries; a restore takes back the newest entries, across the
 * index's growth, and every older lift is still found, every undone one is
 * lifted afresh. */
static void
test_restore_of_many_lifts_keeps_the_older_ones_found(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 3, 0, false);
    hop_tracer *root = hop_output_graph_root(og);
    enum { OLD = 12, ALL = 40 };
    hop_node *v[ALL], *ph[ALL];
    v[0] = op1(root, HOP_OP_sin, x);
    for (int i = 1; i < ALL; i++)
        v[i] = op1(root, HOP_OP_sin, v[i - 1]);
    hop_tracer *t = hop_output_graph_push(og, "wrap_body_0");
    for (int i = 0; i < OLD; i++)
        assert_non_null(ph[i] = hop_tracer_lift(t, v[i]));
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    for (int i = OLD; i < ALL; i++)
        assert_non_null(ph[i] = hop_tracer_lift(t, v[i]));
    assert_int_equal(hop_tracer_nlifted(t), ALL);
    assert_int_equal(hop_output_graph_restore(og, cp), HOP_OK);
    assert_int_equal(hop_tracer_nlifted(t), OLD);
    assert_int_equal(hop_tracer_graph(t)->nplaceholders, OLD);
    for (int i = 0; i < OLD; i++)
        assert_ptr_equal(hop_tracer_lift(t, v[i]), ph[i]);
    for (int i = OLD; i < ALL; i++) {
        hop_node *again = hop_tracer_lift(t, v[i]);
        assert_non_null(again);
        assert_ptr_equal(again->graph, hop_tracer_graph(t)); /* a live node, not the undone one */
        assert_ptr_equal(hop_tracer_lifted_source(t, again), v[i]);
    }
    assert_int_equal(hop_tracer_nlifted(t), ALL);
    for (int i = 0; i < ALL; i++)
        assert_ptr_equal(hop_tracer_lift(t, v[i]), hop_tracer_lifted_placeholder(t, (size_t)i));
    hop_output_graph_free(og);
}

/* A checkpoint marks only the current tracer; an ancestor changed later (a
 * lift through it) is marked at its first change, also under a nested
 * checkpoint that was kept, and the restore undoes every one of them. */
static void
test_restore_undoes_lifts_into_ancestors_marked_at_their_first_change(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 3, 0, false);
    hop_node *y = input(og, "y", 1, 3, 0, false);
    hop_tracer *t1 = hop_output_graph_push(og, "wrap_body_0");
    op1(t1, HOP_OP_sin, x);
    hop_tracer *t2 = hop_output_graph_push(og, "wrap_body_1");
    hop_tracer *t3 = hop_output_graph_push(og, "wrap_body_2");
    char *before[3];
    hop_tracer *ts[3] = {t1, t2, t3};
    for (int i = 0; i < 3; i++)
        before[i] = hop_graph_code(hop_tracer_graph(ts[i]));
    size_t rollbacks = hop_tracer_rollbacks(t1);
    hop_checkpoint *outer = hop_output_graph_checkpoint(og);
    op1(t3, HOP_OP_neg, x); /* lifts x into t2 and t3 */
    hop_checkpoint *inner = hop_output_graph_checkpoint(og);
    op1(t3, HOP_OP_cos, y); /* lifts y into t1, t2 and t3 */
    hop_checkpoint_free(inner);
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x, y");
    assert_string_equal(placeholders(hop_tracer_graph(t2)), "x, y");
    assert_int_equal(hop_output_graph_restore(og, outer), HOP_OK);
    for (int i = 0; i < 3; i++) {
        char *after = hop_graph_code(hop_tracer_graph(ts[i]));
        assert_string_equal(before[i], after);
        hop_free(after);
        hop_free(before[i]);
    }
    assert_int_equal(hop_tracer_nlifted(t1), 1);
    assert_int_equal(hop_tracer_nlifted(t2), 0);
    assert_int_equal(hop_tracer_rollbacks(t1), rollbacks + 1);
    /* lifting again works from the restored tables */
    op1(t3, HOP_OP_cos, y);
    assert_string_equal(placeholders(hop_tracer_graph(t1)), "x, y");
    assert_string_equal(sources(t2), "y<-y");
    hop_output_graph_free(og);
}

static void
test_abandon_restores_and_keeps_the_failing_scopes_error(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = input(og, "x", 1, 3, 0, false);
    char *root_before = hop_graph_code(hop_output_graph_root_graph(og));
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    hop_tracer *t = hop_output_graph_push(og, "wrap_body_0");
    assert_non_null(op1(t, HOP_OP_neg, x));
    hop_error(HOP_INVALID, "wrap: the body failed");
    assert_int_equal(hop_output_graph_abandon(og, cp, HOP_INVALID), HOP_INVALID);
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "wrap: the body failed");
    assert_int_equal(hop_output_graph_depth(og), 1);
    char *root_after = hop_graph_code(hop_output_graph_root_graph(og));
    assert_string_equal(root_before, root_after);
    hop_free(root_before);
    hop_free(root_after);
    hop_output_graph_free(og);
}

/* Every HOP call takes a checkpoint and frees it: the last one freed is
 * kept for the next, which then allocates nothing, unless name counters
 * made since need more room than it has; nested and restored checkpoints
 * restore the counters either way, and freeing the OutputGraph frees the
 * kept one. */
static void
test_a_freed_checkpoint_is_kept_for_the_next_and_counters_still_restore(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    hop_output_graph *og = hop_output_graph_new();
    hop_checkpoint_free(hop_output_graph_checkpoint(og)); /* kept: room for 1 counter */
    long count = hop_alloc_count();
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    assert_int_equal(hop_alloc_count(), count); /* the kept one, no allocation */
    assert_string_equal(hop_output_graph_next_name(og, "wrap_body"), "wrap_body_0");
    hop_checkpoint_free(cp);
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_0");
    /* two counters now: the kept one has room for 1, so a new one is made */
    count = hop_alloc_count();
    hop_checkpoint *outer = hop_output_graph_checkpoint(og);
    assert_int_equal(hop_alloc_count(), count + 1);
    assert_string_equal(hop_output_graph_next_name(og, "wrap_body"), "wrap_body_1");
    hop_checkpoint *inner = hop_output_graph_checkpoint(og); /* 2 counters: made too */
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_1");
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_0");
    assert_int_equal(hop_output_graph_restore(og, inner), HOP_OK);
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_1");
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_0");
    assert_int_equal(hop_output_graph_restore(og, outer), HOP_OK);
    assert_string_equal(hop_output_graph_next_name(og, "wrap_body"), "wrap_body_1");
    assert_string_equal(hop_output_graph_next_name(og, "cond_true"), "cond_true_1");
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_0");
    /* the inner one was kept (room for 3 counters): no allocation */
    count = hop_alloc_count();
    cp = hop_output_graph_checkpoint(og);
    assert_int_equal(hop_alloc_count(), count);
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_1");
    assert_int_equal(hop_output_graph_restore(og, cp), HOP_OK);
    assert_string_equal(hop_output_graph_next_name(og, "map_body"), "map_body_1");
    hop_output_graph_free(og);
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_add_input_while_a_body_is_traced_is_misuse(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_output_graph_push(og, "wrap_body_0");
    int64_t sz[] = {2};
    assert_null(hop_output_graph_add_input(og, "x", HOP_F32, 1, sz, false));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_int_equal(hop_output_graph_root_graph(og)->nplaceholders, 0);
    hop_output_graph_free(og);
}

/* Builds a nested program; fails at the k-th allocation when k > 0. */
static hop_status
build_nested(void)
{
    hop_status st = HOP_NOMEM;
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return hop_error_code();
    int64_t sz[] = {3, 4};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, sz, true);
    hop_tracer *t1 = x ? hop_output_graph_push(og, "wrap_body_0") : NULL;
    hop_tracer *t2 = t1 ? hop_output_graph_push(og, "wrap_body_1") : NULL;
    hop_node *s = t2 ? hop_tracer_call_op(t2, HOP_OP_sin, (hop_arg[]){hop_arg_node(x)}, 1) : NULL;
    hop_node *o = s ? hop_tracer_output(t2, (hop_arg[]){hop_arg_node(s)}, 1) : NULL;
    hop_graph *g2 = NULL;
    if (o && hop_output_graph_pop(og, t2, &g2) == HOP_OK &&
        hop_graph_add_subgraph(hop_tracer_graph(t1), g2) == HOP_OK) {
        char *code = hop_graph_code(hop_tracer_graph(t1));
        if (code) {
            st = HOP_OK;
            hop_free(code);
        }
    }
    if (st != HOP_OK)
        st = hop_error_code();
    hop_output_graph_free(og);
    return st;
}

static void
test_allocation_failure_sweep_over_nested_tracing(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    int failures = 0;
    for (long k = 1; k < 10000; k++) {
        hop_alloc_fail_at(k);
        hop_status st = build_nested();
        hop_alloc_fail_at(0);
        assert_int_equal(hop_alloc_live(), live);
        if (st == HOP_OK)
            break;
        assert_int_equal(st, HOP_NOMEM);
        failures++;
    }
    assert_true(failures > 20);
    assert_int_equal(build_nested(), HOP_OK);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_inputs_get_symbols_right_before_their_tensor_with_duck_sizing),
        cmocka_unit_test(
            test_first_four_lifts_of_a_body_allocate_no_lists_and_more_keep_their_order),
        cmocka_unit_test(test_lift_notes_give_each_placeholder_its_newest_note_across_lookups),
        cmocka_unit_test(
            test_tensor_used_two_levels_deep_is_lifted_with_its_symbols_at_every_level),
        cmocka_unit_test(test_two_tensors_sharing_a_symbol_bind_it_once_per_level),
        cmocka_unit_test(test_closure_over_size_lifts_only_the_symbol_into_the_inner_tracer),
        cmocka_unit_test(test_unbacked_symbol_from_item_is_lifted_from_the_tracer_that_made_it),
        cmocka_unit_test(test_tensor_with_unbacked_size_brings_its_symbol_right_before_it),
        cmocka_unit_test(test_free_value_used_three_times_gets_one_placeholder),
        cmocka_unit_test(test_value_made_in_the_middle_tracer_is_lifted_into_inner_ones_only),
        cmocka_unit_test(test_returning_a_free_value_unchanged_lifts_it),
        cmocka_unit_test(test_explicit_inputs_come_first_then_lifted_values_in_order_of_first_use),
        cmocka_unit_test(test_symbolic_argument_binds_its_symbols_in_the_tracer),
        cmocka_unit_test(test_compound_symint_value_is_one_input_named_after_its_node),
        cmocka_unit_test(test_nonzero_binds_its_unbacked_size_through_sym_size),
        cmocka_unit_test(test_captured_tensor_is_one_root_input_deduplicated_by_identity),
        cmocka_unit_test(test_lifting_through_64_tracers_costs_linear_in_depth),
        cmocka_unit_test(test_unbalanced_pop_is_misuse_and_leaves_the_stack_unchanged),
        cmocka_unit_test(test_dead_proxy_use_names_its_subgraph_and_changes_nothing),
        cmocka_unit_test(test_input_without_metadata_is_misuse_and_changes_nothing),
        cmocka_unit_test(test_failed_op_after_lifting_rolls_back_every_level),
        cmocka_unit_test(test_restore_undoes_a_failed_scope_exactly),
        cmocka_unit_test(test_restore_of_many_lifts_keeps_the_older_ones_found),
        cmocka_unit_test(test_restore_undoes_lifts_into_ancestors_marked_at_their_first_change),
        cmocka_unit_test(test_abandon_restores_and_keeps_the_failing_scopes_error),
        cmocka_unit_test(test_a_freed_checkpoint_is_kept_for_the_next_and_counters_still_restore),
        cmocka_unit_test(test_add_input_while_a_body_is_traced_is_misuse),
        cmocka_unit_test(test_allocation_failure_sweep_over_nested_tracing),
        cmocka_unit_test(test_nesting_deeper_than_the_limit_is_a_trace_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
