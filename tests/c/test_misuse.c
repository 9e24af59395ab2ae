/*
 * tests/c/test_misuse.c - the C API refuses misuse with a status and a
 * message, never a crash, and changes nothing: NULL for every pointer a
 * public function takes, values and tracers of another OutputGraph, bodies
 * that push or pop tracers of their own, popping the root or a popped tracer,
 * recording into a tracer after its pop, and plans run with the wrong
 * arguments.  Accessors given NULL read as empty.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"
#include "test_class_util.h"

#include <stdio.h>
#include <string.h>

#define N hop_arg_node

/* ------------------------------------------------------------ helpers */

/* The call failed with code and exactly this message. */
#define FAILS(call, code, msg)                                                                     \
    do {                                                                                           \
        hop_error_clear();                                                                         \
        (void)(call);                                                                              \
        if (hop_error_code() != (code) || strcmp(hop_error_message(), (msg)) != 0)                 \
            fprintf(stderr, "%s\n  gave %s: %s\n", #call, hop_status_name(hop_error_code()),       \
                    hop_error_message());                                                          \
        assert_int_equal(hop_error_code(), (code));                                                \
        assert_string_equal(hop_error_message(), (msg));                                           \
    } while (0)

#define MISUSE(call, msg) FAILS(call, HOP_MISUSE, msg)

static hop_tracer *
root(hop_output_graph *og)
{
    return hop_output_graph_root(og);
}

static hop_output_graph *
program(const char *name, hop_node **x)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    *x = hop_output_graph_add_input(og, name, HOP_F32, 1, (int64_t[]){3}, false);
    assert_non_null(*x);
    return og;
}

/* What must not change: the stack and the code of every graph on it. */
typedef struct og_state {
    size_t depth, nsymbols, nguards, ninputs;
    char *code;
} og_state;

static og_state
state_of(hop_output_graph *og)
{
    og_state s = {hop_output_graph_depth(og), hop_shape_env_nsymbols(hop_output_graph_env(og)),
                  hop_shape_env_nguards(hop_output_graph_env(og)), hop_output_graph_ninputs(og),
                  NULL};
    size_t len = 0;
    for (hop_tracer *t = hop_output_graph_current(og); t; t = hop_tracer_parent(t)) {
        char *c = hop_graph_code(hop_tracer_graph(t));
        assert_non_null(c);
        s.code = hop_realloc(s.code, len + strlen(c) + 1);
        assert_non_null(s.code);
        memcpy(s.code + len, c, strlen(c) + 1);
        len += strlen(c);
        hop_free(c);
    }
    return s;
}

static void
assert_state(hop_output_graph *og, og_state *before)
{
    og_state now = state_of(og);
    assert_int_equal(now.depth, before->depth);
    assert_int_equal(now.nsymbols, before->nsymbols);
    assert_int_equal(now.nguards, before->nguards);
    assert_int_equal(now.ninputs, before->ninputs);
    assert_string_equal(now.code, before->code);
    hop_free(now.code);
    hop_free(before->code);
    before->code = NULL;
}

static hop_status
return_first(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)t;
    (void)ud;
    return hop_values_push(out, n > 0 ? in[0] : NULL);
}

static hop_status
return_ud(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)t;
    (void)in;
    (void)n;
    return hop_values_push(out, ud);
}

static hop_status
neg_of_ud(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)in;
    (void)n;
    hop_node *v = hop_tracer_call_op(t, HOP_OP_neg, (hop_arg[]){N(ud)}, 1);
    return v ? hop_values_push(out, v) : hop_error_code();
}

/* ------------------------------------------------------------ NULLs */

static void
test_null_arguments_to_tracer_functions_are_misuse(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_tracer *r = root(og);
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    vi.meta.dtype = HOP_F32;
    hop_arg xa = N(x);
    og_state before = state_of(og);
    MISUSE(hop_tracer_create_input(NULL, "a", &vi), "hop_tracer_create_input: NULL tracer");
    MISUSE(hop_tracer_create_input(r, NULL, &vi), "hop_tracer_create_input: NULL name");
    MISUSE(hop_tracer_create_input_for(NULL, "a", &vi, x),
           "hop_tracer_create_input_for: NULL tracer");
    MISUSE(hop_tracer_create_input_for(r, "a", &vi, NULL),
           "hop_tracer_create_input_for: input a needs a value of an enclosing tracer to stand "
           "for");
    MISUSE(hop_tracer_lift(NULL, x), "hop_tracer_lift: NULL tracer");
    MISUSE(hop_tracer_lift(r, NULL), "hop_tracer_lift: NULL value");
    MISUSE(hop_tracer_bind_symbol(NULL, NULL),
           "hop_tracer_bind_symbol: needs a tracer and a symbol");
    MISUSE(hop_tracer_bind_symbol(r, NULL), "hop_tracer_bind_symbol: needs a tracer and a symbol");
    MISUSE(hop_tracer_bind_value(NULL, NULL, NULL), "hop_tracer_bind_value: NULL argument");
    MISUSE(hop_tracer_bind_value(r, NULL, x), "hop_tracer_bind_value: NULL argument");
    MISUSE(hop_tracer_bind_value(r, hop_sym_const(hop_output_graph_env(og), 3), x),
           "hop_tracer_bind_value: x is not a value of graph forward that yields 3");
    MISUSE(hop_tracer_call_op(NULL, HOP_OP_neg, &xa, 1), "hop_tracer_call_op: NULL tracer");
    MISUSE(hop_tracer_call_op(r, HOP_OP_neg, NULL, 1), "hop_tracer_call_op: NULL arguments");
    MISUSE(hop_tracer_call_op(r, HOP_OP_neg, (hop_arg[]){N(NULL)}, 1),
           "argument 0 is a NULL value (recording in graph forward)");
    FAILS(hop_tracer_call_op(r, HOP_OP_COUNT, &xa, 1), HOP_INVALID, "call_op: unknown op 132");
    MISUSE(hop_tracer_output(NULL, &xa, 1), "hop_tracer_output: NULL tracer");
    MISUSE(hop_tracer_output(r, NULL, 1), "hop_tracer_output: NULL arguments");
    assert_state(og, &before);
    hop_output_graph_free(og);
}

static void
test_null_arguments_to_output_graph_functions_are_misuse(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    int64_t sz[] = {3};
    static int identity;
    og_state before = state_of(og);
    MISUSE(hop_output_graph_add_input(NULL, "a", HOP_F32, 1, sz, false),
           "hop_output_graph_add_input: NULL output graph");
    MISUSE(hop_output_graph_add_input(og, NULL, HOP_F32, 1, sz, false), "root input: NULL name");
    MISUSE(hop_output_graph_add_input(og, "a", HOP_F32, 1, NULL, false), "root input: NULL sizes");
    MISUSE(hop_output_graph_add_input_dims(og, "a", HOP_F32, 1, sz, NULL),
           "root input: NULL dynamic flags");
    FAILS(hop_output_graph_add_input(og, "a", HOP_DTYPE_COUNT, 1, sz, false), HOP_INVALID,
          "root input a: invalid dtype 14");
    FAILS(hop_output_graph_add_input(og, "a", HOP_F32, -1, sz, false), HOP_INVALID,
          "root input a: rank -1 is outside 0..8");
    FAILS(hop_output_graph_add_input(og, "a", HOP_F32, 1, (int64_t[]){-2}, false), HOP_INVALID,
          "root input a: size -2 of dim 0 is negative");
    MISUSE(hop_output_graph_capture(NULL, &identity, "c", HOP_F32, 1, sz, false),
           "hop_output_graph_capture: NULL output graph");
    MISUSE(hop_output_graph_capture(og, NULL, "c", HOP_F32, 1, sz, false),
           "hop_output_graph_capture: NULL identity");
    MISUSE(hop_output_graph_capture(og, &identity, NULL, HOP_F32, 1, sz, false),
           "root input: NULL name");
    MISUSE(hop_output_graph_capture(og, &identity, "c", HOP_F32, 1, NULL, false),
           "root input: NULL sizes");
    MISUSE(hop_output_graph_push(NULL, "g"), "hop_output_graph_push: NULL output graph");
    MISUSE(hop_output_graph_push(og, NULL), "hop_output_graph_push: NULL graph name");
    MISUSE(hop_output_graph_pop(NULL, root(og), NULL), "hop_output_graph_pop: NULL output graph");
    MISUSE(hop_output_graph_pop(og, NULL, NULL), "hop_output_graph_pop: NULL tracer");
    MISUSE(hop_output_graph_next_name(NULL, "p"), "hop_output_graph_next_name: NULL output graph");
    MISUSE(hop_output_graph_next_name(og, NULL), "hop_output_graph_next_name: NULL prefix");
    MISUSE(hop_output_graph_set_data(NULL, &identity, NULL, NULL),
           "hop_output_graph_set_data: NULL output graph");
    MISUSE(hop_output_graph_set_data(og, NULL, NULL, NULL), "hop_output_graph_set_data: NULL key");
    MISUSE(hop_output_graph_checkpoint(NULL), "hop_output_graph_checkpoint: NULL output graph");
    MISUSE(hop_output_graph_restore(NULL, NULL), "hop_output_graph_restore: NULL argument");
    MISUSE(hop_output_graph_restore(og, NULL), "hop_output_graph_restore: NULL argument");
    hop_output_graph_free(NULL);
    hop_output_graph_discard(og, NULL);
    hop_checkpoint_free(NULL);
    assert_state(og, &before);
    hop_output_graph_free(og);
}

static void
test_null_arguments_to_hop_calls_are_misuse_and_change_nothing(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_body b = {return_first, NULL}, none = {NULL, NULL};
    hop_arg xa = N(x);
    hop_values vs = {0};
    og_state before = state_of(og);
    MISUSE(hop_values_push(NULL, x), "hop_values_push: NULL list");
    hop_arg xl = hop_arg_list(&xa, 1);
    MISUSE(hop_apply(NULL, &hop_wrap_class, &xl, 1, &b, 1, &vs), "hop_apply: NULL output graph");
    MISUSE(hop_apply(og, NULL, &xl, 1, &b, 1, &vs), "hop_apply: NULL class");
    MISUSE(hop_apply(og, &hop_wrap_class, NULL, 1, &b, 1, &vs), "wrap: 1 arguments at NULL");
    FAILS(hop_apply(og, &hop_wrap_class, &xa, 1, &b, 1, &vs), HOP_INVALID,
          "wrap: args must be a list of traced values");
    FAILS(hop_apply(og, &hop_wrap_class, &xl, 2, &b, 1, &vs), HOP_INVALID,
          "wrap: takes 1 argument besides its bodies, got 2");
    FAILS(hop_apply(og, &hop_wrap_class, &xl, 1, NULL, 1, &vs), HOP_INVALID,
          "wrap: wrap_body body is not callable (NULL function)");
    MISUSE(hop_apply(og, &hop_wrap_class, &xl, 1, &b, 1, NULL), "hop_apply: NULL outputs");
    MISUSE(hop_wrap(NULL, b, &xa, 1, &vs), "hop_apply: NULL output graph");
    MISUSE(hop_wrap(og, b, NULL, 1, &vs), "wrap: 1 operands at NULL");
    FAILS(hop_wrap(og, b, (hop_arg[]){N(NULL)}, 1, &vs), HOP_INVALID,
          "wrap: operand 0 must be a traced value (a tensor or a SymInt)");
    FAILS(hop_wrap(og, none, &xa, 1, &vs), HOP_INVALID,
          "wrap: wrap_body body is not callable (NULL function)");
    MISUSE(hop_cond(NULL, hop_arg_bool(true), b, b, NULL, 0, &vs), "hop_cond: NULL output graph");
    MISUSE(hop_cond(og, N(NULL), b, b, NULL, 0, &vs), "cond: pred is a NULL value");
    MISUSE(hop_cond(og, hop_arg_bool(true), b, b, NULL, 1, &vs), "hop_cond: NULL operands");
    MISUSE(hop_cond(og, hop_arg_bool(true), b, b, NULL, 0, NULL), "hop_cond: NULL outputs");
    MISUSE(hop_map(NULL, b, &xa, 1, NULL, 0, &vs), "hop_apply: NULL output graph");
    MISUSE(hop_map(og, b, NULL, 1, NULL, 0, &vs), "hop_map: NULL xs");
    MISUSE(hop_map(og, b, &xa, 1, NULL, 1, &vs), "hop_map: NULL args");
    FAILS(hop_map(og, b, &xa, 0, NULL, 0, &vs), HOP_INVALID,
          "map: needs at least one xs to map over");
    MISUSE(hop_map(og, b, &xa, 1, NULL, 0, NULL), "hop_apply: NULL outputs");
    MISUSE(hop_invoke_subgraph(NULL, b, &xa, 1, &vs), "hop_apply: NULL output graph");
    MISUSE(hop_invoke_subgraph(og, b, NULL, 1, &vs), "invoke_subgraph: 1 operands at NULL");
    MISUSE(hop_invoke_subgraph(og, b, &xa, 1, NULL), "hop_apply: NULL outputs");
    MISUSE(hop_register_hop(NULL), "register HOP: NULL class");
    MISUSE(hop_unregister_hop(NULL), "unregister HOP: NULL name");
    MISUSE(hop_find_hop(NULL), "find HOP: NULL name");
    MISUSE(hop_node_param(NULL, "pred"), "hop_node_param: not a call_hop node");
    MISUSE(hop_call_param(NULL, "pred"), "hop_call_param: NULL call");
    assert_int_equal(vs.n, 0);
    assert_state(og, &before);
    hop_values_clear(&vs);
    hop_values_clear(NULL);
    hop_output_graph_free(og);
}

static void
test_null_arguments_to_graphs_plans_and_tensors_are_misuse(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_graph *g = hop_output_graph_root_graph(og);
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    vi.meta.dtype = HOP_F32;
    hop_arg xa = N(x);
    int64_t sz[] = {3};
    og_state before = state_of(og);
    MISUSE(hop_graph_new(NULL, "g"), "hop_graph_new: the shape env is NULL");
    MISUSE(hop_graph_placeholder(NULL, "a", &vi), "placeholder: the graph is NULL");
    MISUSE(hop_graph_placeholder(g, NULL, &vi), "placeholder: the name is NULL");
    MISUSE(hop_graph_placeholder(g, "a", NULL), "placeholder: the metadata is NULL");
    MISUSE(hop_graph_move_placeholder(g, NULL, 0), "move_placeholder: the node is NULL");
    MISUSE(hop_graph_replace_placeholders(NULL, 0, 0), "replace_placeholders: the graph is NULL");
    FAILS(hop_graph_replace_placeholders(g, 0, 1), HOP_INVALID,
          "replace_placeholders: forward has 1 placeholders, too few to replace 1 from "
          "position 0 by its last 1");
    MISUSE(hop_graph_rename_node(g, x, NULL), "rename_node: the name is NULL");
    MISUSE(hop_graph_rename_node(g, NULL, "a"), "rename_node: the node is NULL");
    MISUSE(hop_graph_call_op(NULL, HOP_OP_neg, &xa, 1), "call_op: the graph is NULL");
    MISUSE(hop_graph_call_op(g, HOP_OP_neg, NULL, 1), "call_op neg: 1 arguments at NULL");
    MISUSE(hop_graph_call_hop(g, NULL, NULL, 0, NULL, 0), "call_hop: the class is NULL");
    MISUSE(hop_graph_call_hop(g, class_named("w"), NULL, 0, NULL, 1),
           "call_hop w: 1 outputs at NULL");
    MISUSE(hop_graph_getitem(g, NULL, 0), "getitem: the call is NULL");
    MISUSE(hop_graph_output(g, NULL, 1), "output: 1 arguments at NULL");
    MISUSE(hop_graph_add_subgraph(g, NULL), "add_subgraph: the child is NULL");
    MISUSE(hop_graph_remove_subgraph(g, NULL), "remove_subgraph: the child is NULL");
    MISUSE(hop_graph_erase_node(g, NULL), "erase_node: the node is NULL");
    MISUSE(hop_graph_verify(NULL), "verify: the graph is NULL");
    MISUSE(hop_graph_code(NULL), "hop_graph_code: the graph is NULL");
    MISUSE(hop_graph_table(NULL), "hop_graph_table: the graph is NULL");
    MISUSE(hop_graph_dot(NULL), "hop_graph_dot: the graph is NULL");
    MISUSE(hop_lower(NULL, NULL), "hop_lower: the OutputGraph is NULL");
    MISUSE(hop_lower(og, NULL), "hop_lower: the root graph has no output node yet");
    MISUSE(hop_plan_run(NULL, NULL, 0, NULL, 0), "hop_plan_run: NULL plan");
    MISUSE(hop_plan_run_into(NULL, NULL, 0, NULL, 0), "hop_plan_run: NULL plan");
    MISUSE(hop_plan_dump(NULL), "hop_plan_dump: the plan is NULL");
    MISUSE(hop_graph_eval(NULL, NULL, 0, NULL, 0), "hop_graph_eval: NULL argument");
    MISUSE(hop_tensor_empty(HOP_F32, 1, NULL), "hop_tensor_empty: sizes is NULL for rank 1");
    MISUSE(hop_tensor_from_data(HOP_F32, 1, sz, NULL), "hop_tensor_from_data: data is NULL");
    MISUSE(hop_tensor_wrap(HOP_F32, 1, sz, NULL, NULL, 12, NULL, NULL),
           "hop_tensor_wrap: data is NULL");
    MISUSE(hop_tensor_view(NULL, 1, sz, sz, 0), "hop_tensor_view: base is NULL");
    MISUSE(hop_tensor_contiguous(NULL), "hop_tensor_contiguous: t is NULL");
    MISUSE(hop_tensor_item_double(NULL, NULL), "hop_tensor_item_double: t is NULL");
    MISUSE(hop_tensor_item_int(NULL, NULL), "hop_tensor_item_int: t is NULL");
    MISUSE(hop_eager(HOP_OP_neg, NULL, 1, NULL), "hop_eager: out is NULL");
    MISUSE(hop_eager_tensor(HOP_OP_neg, NULL, 1), "neg: NULL operands");
    FAILS(hop_eager_tensor(HOP_OP_neg, (hop_rt_arg[]){hop_rt_tensor(NULL)}, 1), HOP_INVALID,
          "neg: argument 0 is a NULL tensor");
    FAILS(hop_eager_out(HOP_OP_neg, (hop_rt_arg[]){hop_rt_tensor(NULL)}, 1, NULL), HOP_INVALID,
          "neg: argument 0 is a NULL tensor");
    MISUSE(hop_sym_add(NULL, NULL, NULL), "hop_sym_add: the ShapeEnv is NULL");
    MISUSE(hop_meta_init(NULL, NULL, HOP_F32, 1, sz), "hop_meta_init: m is NULL");
    MISUSE(hop_op_infer(NULL, HOP_OP_neg, NULL, 1, NULL), "neg: NULL shape env");
    MISUSE(hop_dtype_from_name(NULL, NULL), "hop_dtype_from_name: name is NULL");
    hop_graph_free(NULL);
    hop_plan_free(NULL);
    hop_plan_trim(NULL);
    hop_plan_set_trace(NULL, NULL);
    hop_tensor_release(NULL);
    hop_shape_env_free(NULL);
    hop_free(NULL);
    assert_state(og, &before);
    hop_output_graph_free(og);
}

static void
test_accessors_given_null_read_as_empty(void **state)
{
    (void)state;
    assert_null(hop_tracer_graph(NULL));
    assert_null(hop_tracer_parent(NULL));
    assert_null(hop_tracer_of(NULL));
    assert_null(hop_tracer_bound_symbol(NULL, NULL));
    assert_int_equal(hop_tracer_nlifted(NULL), 0);
    assert_null(hop_tracer_lifted_placeholder(NULL, 0));
    assert_null(hop_tracer_lifted_source(NULL, NULL));
    assert_null(hop_output_graph_of(NULL));
    assert_null(hop_output_graph_env(NULL));
    assert_null(hop_output_graph_root(NULL));
    assert_null(hop_output_graph_root_graph(NULL));
    assert_null(hop_output_graph_current(NULL));
    assert_int_equal(hop_output_graph_depth(NULL), 0);
    assert_int_equal(hop_output_graph_ninputs(NULL), 0);
    assert_null(hop_output_graph_input(NULL, 0, NULL));
    assert_null(hop_output_graph_data(NULL, NULL));
    assert_null(hop_graph_placeholder_at(NULL, 0));
    assert_null(hop_graph_find_node(NULL, "x"));
    assert_null(hop_graph_find_subgraph(NULL, "x"));
    assert_int_equal(hop_graph_dce(NULL), 0);
    assert_int_equal(hop_plan_ninputs(NULL), 0);
    assert_null(hop_plan_input_name(NULL, 0));
    assert_int_equal(hop_plan_noutputs(NULL), 0);
    assert_null(hop_tensor_retain(NULL));
    assert_int_equal(hop_expr_print(NULL, NULL, 0), 4); /* "None" */
    /* NULL names with a capacity: only the count. */
    size_t n = hop_list_hops(NULL, 8);
    assert_true(n >= 4);
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    assert_null(hop_output_graph_input(og, 99, NULL));
    assert_null(hop_tracer_lifted_placeholder(root(og), 5));
    assert_null(hop_graph_find_node(hop_output_graph_root_graph(og), NULL));
    hop_output_graph_free(og);
}

/* ------------------------------------------------ another OutputGraph */

static void
test_values_of_another_output_graph_are_misuse_and_change_nothing(void **state)
{
    (void)state;
    hop_node *x, *y;
    hop_output_graph *og = program("x", &x), *other = program("y", &y);
    hop_tracer *r = root(og);
    hop_arg ya = N(y);
    hop_values vs = {0};
    hop_body ignore = {return_first, NULL};
    hop_node *ysum = hop_tracer_call_op(root(other), HOP_OP_sum,
                                        (hop_arg[]){ya, hop_arg_none(), hop_arg_bool(false)}, 3);
    hop_node *ypred =
        hop_tracer_call_op(root(other), HOP_OP_gt, (hop_arg[]){N(ysum), hop_arg_int(0)}, 2);
    assert_non_null(ypred);
    og_state before = state_of(og);
    MISUSE(hop_tracer_call_op(r, HOP_OP_neg, &ya, 1),
           "value y belongs to graph forward of another OutputGraph than graph forward's");
    MISUSE(hop_tracer_lift(r, y),
           "value y belongs to graph forward of another OutputGraph than graph forward's");
    MISUSE(hop_tracer_output(r, &ya, 1),
           "value y belongs to graph forward of another OutputGraph than graph forward's");
    /* A HOP refuses a foreign operand even when its body never uses it. */
    MISUSE(hop_wrap(og, (hop_body){return_ud, x}, &ya, 1, &vs),
           "wrap: operand 0 (y) belongs to another OutputGraph");
    MISUSE(hop_cond(og, N(ypred), ignore, ignore, (hop_arg[]){N(x)}, 1, &vs),
           "cond: pred: value gt belongs to graph forward of another OutputGraph than graph "
           "forward's");
    MISUSE(hop_map(og, ignore, &ya, 1, NULL, 0, &vs),
           "map: operand 0 (y) belongs to another OutputGraph");
    MISUSE(hop_invoke_subgraph(og, ignore, &ya, 1, &vs),
           "invoke_subgraph: operand 0 (y) belongs to another OutputGraph");
    /* ... and a body closing over a foreign value fails, naming it. */
    MISUSE(hop_wrap(og, (hop_body){neg_of_ud, y}, (hop_arg[]){N(x)}, 1, &vs),
           "value y belongs to graph forward of another OutputGraph than graph wrap_body_0's");
    MISUSE(hop_wrap(og, (hop_body){return_ud, y}, (hop_arg[]){N(x)}, 1, &vs),
           "wrap: output 0 of the wrap_body body: value y belongs to graph forward of another "
           "OutputGraph than graph wrap_body_0's");
    MISUSE(hop_output_graph_pop(og, root(other), NULL),
           "hop_output_graph_pop: the tracer of graph forward belongs to another OutputGraph");
    MISUSE(
        hop_graph_add_subgraph(hop_output_graph_root_graph(og), hop_output_graph_root_graph(other)),
        "add_subgraph: forward uses another shape env than forward");
    assert_int_equal(vs.n, 0);
    assert_state(og, &before);
    /* The other OutputGraph is untouched and still works. */
    assert_non_null(hop_tracer_call_op(root(other), HOP_OP_neg, &ya, 1));
    hop_values_clear(&vs);
    hop_output_graph_free(other);
    hop_output_graph_free(og);
}

/* ------------------------------------------------- the tracer stack */

static hop_status
pushes_and_returns(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)in;
    (void)n;
    if (hop_output_graph_push(hop_output_graph_of(t), "stray") == NULL)
        return hop_error_code();
    return hop_values_push(out, ud);
}

static hop_status
pops_itself(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)in;
    (void)n;
    hop_graph *g;
    hop_status st = hop_output_graph_pop(hop_output_graph_of(t), t, &g);
    if (st != HOP_OK)
        return st;
    return hop_values_push(out, ud);
}

static void
test_a_body_with_unbalanced_push_or_pop_is_misuse_and_the_stack_is_repaired(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_values vs = {0};
    og_state before = state_of(og);
    MISUSE(hop_wrap(og, (hop_body){pushes_and_returns, x}, (hop_arg[]){N(x)}, 1, &vs),
           "wrap: the wrap_body body returned with the tracer of graph stray current instead "
           "of its own (wrap_body_0): unbalanced push or pop");
    assert_state(og, &before);
    before = state_of(og);
    MISUSE(hop_wrap(og, (hop_body){pops_itself, x}, (hop_arg[]){N(x)}, 1, &vs),
           "wrap: the wrap_body body returned with the tracer of graph forward current instead "
           "of its own (wrap_body_0): unbalanced push or pop");
    assert_state(og, &before);
    assert_int_equal(hop_tracer_state_of(root(og)), HOP_TRACER_CURRENT);
    /* Nothing is left behind: the next call works and gets the first names. */
    hop_body neg = {neg_of_ud, x};
    assert_int_equal(hop_wrap(og, neg, (hop_arg[]){N(x)}, 1, &vs), HOP_OK);
    assert_non_null(hop_graph_find_subgraph(hop_output_graph_root_graph(og), "wrap_body_0"));
    hop_values_clear(&vs);
    hop_output_graph_free(og);
}

static void
test_popping_the_root_or_a_popped_tracer_is_misuse(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_graph *g = NULL;
    MISUSE(hop_output_graph_pop(og, root(og), &g),
           "hop_output_graph_pop: only the root tracer (graph forward) is on the stack; it "
           "cannot be popped");
    hop_tracer *t1 = hop_output_graph_push(og, "a");
    hop_tracer *t2 = hop_output_graph_push(og, "b");
    MISUSE(hop_output_graph_pop(og, root(og), &g),
           "hop_output_graph_pop: unbalanced pop of the tracer of graph forward while the "
           "tracer of graph b is current");
    MISUSE(hop_output_graph_pop(og, t1, &g),
           "hop_output_graph_pop: unbalanced pop of the tracer of graph a while the tracer of "
           "graph b is current");
    assert_null(g);
    assert_int_equal(hop_output_graph_depth(og), 3);
    assert_int_equal(hop_output_graph_pop(og, t2, &g), HOP_OK);
    assert_ptr_equal(g, hop_tracer_graph(t2));
    g = NULL;
    MISUSE(hop_output_graph_pop(og, t2, &g),
           "hop_output_graph_pop: the tracer of graph b was popped already");
    assert_null(g);
    assert_int_equal(hop_output_graph_depth(og), 2);
    assert_ptr_equal(hop_output_graph_current(og), t1);
    assert_int_equal(hop_output_graph_pop(og, t1, &g), HOP_OK);
    assert_int_equal(hop_output_graph_depth(og), 1);
    assert_int_equal(hop_tracer_state_of(root(og)), HOP_TRACER_CURRENT);
    hop_output_graph_free(og);
}

static void
test_a_tracer_after_its_pop_refuses_every_recording_call(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_tracer *t = hop_output_graph_push(og, "b");
    hop_node *s = hop_tracer_call_op(t, HOP_OP_sin, (hop_arg[]){N(x)}, 1);
    assert_non_null(s);
    hop_graph *g;
    assert_int_equal(hop_output_graph_pop(og, t, &g), HOP_OK);
    char *body_before = hop_graph_code(g);
    og_state before = state_of(og);
    hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
    vi.meta.dtype = HOP_F32;
    hop_arg xa = N(x);
    MISUSE(hop_tracer_call_op(t, HOP_OP_neg, &xa, 1),
           "hop_tracer_call_op: tracer of graph b is ended, not current");
    MISUSE(hop_tracer_output(t, &xa, 1),
           "hop_tracer_output: tracer of graph b is ended, not current");
    MISUSE(hop_tracer_create_input(t, "q", &vi),
           "hop_tracer_create_input: tracer of graph b is ended, not current");
    MISUSE(hop_tracer_lift(t, x), "hop_tracer_lift: the tracer of graph b has ended");
    MISUSE(hop_tracer_bind_symbol(
               t, hop_shape_env_size_symbol(hop_output_graph_env(og), 9, true, true)),
           "hop_tracer_bind_symbol: the tracer of graph b has ended");
    /* Its values are dead in the parent. */
    FAILS(hop_tracer_call_op(root(og), HOP_OP_cos, (hop_arg[]){N(s)}, 1), HOP_TRACE,
          "value sin was created in subgraph b, whose tracing has ended; a value made inside a "
          "body cannot be used outside it (return it from the body instead)");
    hop_values vs = {0};
    FAILS(hop_wrap(og, (hop_body){return_first, NULL}, (hop_arg[]){N(s)}, 1, &vs), HOP_TRACE,
          "wrap: operand 0 (sin) was created in subgraph b, whose tracing has ended");
    /* Recording into a suspended tracer is refused too. */
    hop_tracer *t2 = hop_output_graph_push(og, "c");
    MISUSE(hop_tracer_call_op(root(og), HOP_OP_neg, &xa, 1),
           "hop_tracer_call_op: tracer of graph forward is suspended under a subtracer, not "
           "current");
    assert_int_equal(hop_output_graph_pop(og, t2, &g), HOP_OK);
    char *body_after = hop_graph_code(hop_tracer_graph(t));
    assert_string_equal(body_before, body_after);
    hop_free(body_before);
    hop_free(body_after);
    hop_shape_env_truncate_symbols(hop_output_graph_env(og), before.nsymbols);
    assert_state(og, &before);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------------ plans */

static void
test_plans_run_with_wrong_arguments_refuse_and_give_no_outputs(void **state)
{
    (void)state;
    hop_node *x;
    hop_output_graph *og = program("x", &x);
    hop_node *n = hop_tracer_call_op(root(og), HOP_OP_neg, (hop_arg[]){N(x)}, 1);
    assert_non_null(hop_tracer_output(root(og), (hop_arg[]){N(n)}, 1));
    MISUSE(hop_tracer_output(root(og), (hop_arg[]){N(n)}, 1),
           "output: forward already has an output node");
    hop_plan *p = hop_lower(og, NULL);
    assert_non_null(p);
    hop_tensor *t = hop_tensor_zeros(HOP_F32, 1, (int64_t[]){3});
    hop_tensor *t4 = hop_tensor_zeros(HOP_F32, 1, (int64_t[]){4});
    hop_tensor *ti = hop_tensor_zeros(HOP_I32, 1, (int64_t[]){3});
    hop_tensor *o = t;
    FAILS(hop_plan_run(p, (hop_tensor *[]){t}, 0, &o, 1), HOP_GUARD,
          "guard failed: expected 1 input (x), got 0");
    assert_null(o);
    o = t;
    FAILS(hop_plan_run(p, (hop_tensor *[]){t, t}, 2, &o, 1), HOP_GUARD,
          "guard failed: expected 1 input (x), got 2");
    assert_null(o);
    MISUSE(hop_plan_run(p, (hop_tensor *[]){NULL}, 1, &o, 1), "hop_plan_run: input 0 (x) is NULL");
    MISUSE(hop_plan_run(p, NULL, 1, &o, 1), "hop_plan_run: NULL array");
    MISUSE(hop_plan_run(p, (hop_tensor *[]){t}, 1, NULL, 1), "hop_plan_run: NULL array");
    hop_tensor *two[2];
    MISUSE(hop_plan_run(p, (hop_tensor *[]){t}, 1, two, 2),
           "hop_plan_run: the plan has 1 output, not 2");
    assert_null(two[0]);
    assert_null(two[1]);
    FAILS(hop_plan_run(p, (hop_tensor *[]){t4}, 1, &o, 1), HOP_GUARD,
          "guard failed: x.size(0) == 3 expected, got 4");
    FAILS(hop_plan_run(p, (hop_tensor *[]){ti}, 1, &o, 1), HOP_GUARD,
          "guard failed: x.dtype == f32 expected, got i32 (input x is f32[3])");
    assert_null(o);
    MISUSE(hop_plan_run_into(p, (hop_tensor *[]){t}, 1, (hop_tensor *[]){NULL}, 1),
           "hop_plan_run_into: output 0 is NULL");
    FAILS(hop_plan_run_into(p, (hop_tensor *[]){t}, 1, (hop_tensor *[]){t4}, 1), HOP_SHAPE,
          "hop_plan_run_into: output 0 (neg) is f32[4] but the result is f32[3]");
    FAILS(hop_graph_eval(og, (hop_tensor *[]){t, t}, 2, &o, 1), HOP_INVALID,
          "hop_graph_eval: expected 1 inputs, got 2");
    FAILS(hop_graph_eval(og, (hop_tensor *[]){NULL}, 1, &o, 1), HOP_INVALID,
          "hop_graph_eval: input 0 (x) is missing");
    assert_null(hop_plan_input_name(p, 5));
    assert_string_equal(hop_plan_input_name(p, 0), "x");
    /* And after all that, a correct run works. */
    assert_int_equal(hop_plan_run(p, (hop_tensor *[]){t}, 1, &o, 1), HOP_OK);
    assert_int_equal(o->sizes[0], 3);
    hop_tensor_release(o);
    hop_tensor_release(t);
    hop_tensor_release(t4);
    hop_tensor_release(ti);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments_to_tracer_functions_are_misuse),
        cmocka_unit_test(test_null_arguments_to_output_graph_functions_are_misuse),
        cmocka_unit_test(test_null_arguments_to_hop_calls_are_misuse_and_change_nothing),
        cmocka_unit_test(test_null_arguments_to_graphs_plans_and_tensors_are_misuse),
        cmocka_unit_test(test_accessors_given_null_read_as_empty),
        cmocka_unit_test(test_values_of_another_output_graph_are_misuse_and_change_nothing),
        cmocka_unit_test(
            test_a_body_with_unbalanced_push_or_pop_is_misuse_and_the_stack_is_repaired),
        cmocka_unit_test(test_popping_the_root_or_a_popped_tracer_is_misuse),
        cmocka_unit_test(test_a_tracer_after_its_pop_refuses_every_recording_call),
        cmocka_unit_test(test_plans_run_with_wrong_arguments_refuse_and_give_no_outputs),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
