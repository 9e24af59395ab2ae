/*
 * tests/c/test_vmap.c - hop_vmap_graph (hop/batching.h) on a graph built
 * with the graph builders: one exact batched graph (a batched input moved
 * to dim 0, an unbatched one left alone, a matmul of a batched vector, the
 * output moved to its out dim), an unbatched output broadcast to the batch,
 * and the errors.  (Values are checked from Python against a loop,
 * tests/python/test_vmap.py.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "hop.h"
#include "hop/batching.h"
#include <string.h>

typedef struct fixture {
    hop_shape_env *env;
    hop_graph *fwd, *out;
    hop_node *x, *w;
} fixture;

/* f(x: f32[3], w: f32[3, 2]) = (sum(relu(x * 2) @ w), w * 2) */
static void
build(fixture *f)
{
    f->env = hop_shape_env_new();
    f->fwd = hop_graph_new(f->env, "f");
    f->out = hop_graph_new(f->env, "f_vmap");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR}, vw = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, f->env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    assert_int_equal(hop_meta_init(&vw.meta, f->env, HOP_F32, 2, (int64_t[]){3, 2}), HOP_OK);
    f->x = hop_graph_placeholder(f->fwd, "x", &vx);
    f->w = hop_graph_placeholder(f->fwd, "w", &vw);
    hop_node *m = hop_graph_call_op(f->fwd, HOP_OP_mul,
                                    (hop_arg[]){hop_arg_node(f->x), hop_arg_float(2.0)}, 2);
    hop_node *r = hop_graph_call_op(f->fwd, HOP_OP_relu, (hop_arg[]){hop_arg_node(m)}, 1);
    hop_node *mm = hop_graph_call_op(f->fwd, HOP_OP_matmul,
                                     (hop_arg[]){hop_arg_node(r), hop_arg_node(f->w)}, 2);
    hop_node *s = hop_graph_call_op(
        f->fwd, HOP_OP_sum, (hop_arg[]){hop_arg_node(mm), hop_arg_none(), hop_arg_bool(false)}, 3);
    hop_node *w2 = hop_graph_call_op(f->fwd, HOP_OP_mul,
                                     (hop_arg[]){hop_arg_node(f->w), hop_arg_float(2.0)}, 2);
    assert_non_null(hop_graph_output(f->fwd, (hop_arg[]){hop_arg_node(s), hop_arg_node(w2)}, 2));
    assert_int_equal(hop_graph_verify(f->fwd), HOP_OK);
}

static void
teardown(fixture *f)
{
    hop_graph_free(f->fwd);
    hop_graph_free(f->out);
    hop_shape_env_free(f->env);
}

static void
test_vmap_graph_moves_batch_dims_and_broadcasts_unbatched_outputs(void **state)
{
    (void)state;
    fixture f;
    build(&f);
    int in[] = {1, -1}, out[] = {0, 2};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    char *code = hop_graph_code(f.out);
    assert_string_equal(code, "def f_vmap(x: \"f32[3, 4]\", w: \"f32[3, 2]\"):\n"
                              "    permute: \"f32[4, 3]\" = permute(x, [1, 0])\n"
                              "    mul: \"f32[4, 3]\" = mul(permute, 2.0)\n"
                              "    relu: \"f32[4, 3]\" = relu(mul)\n"
                              "    unsqueeze: \"f32[4, 1, 3]\" = unsqueeze(relu, 1)\n"
                              "    matmul: \"f32[4, 1, 2]\" = matmul(unsqueeze, w)\n"
                              "    matmul_1: \"f32[4, 2]\" = squeeze(matmul, -2)\n"
                              "    sum: \"f32[4]\" = sum(matmul_1, [1], False)\n"
                              "    mul_1: \"f32[3, 2]\" = mul(w, 2.0)\n"
                              "    unsqueeze_1: \"f32[1, 3, 2]\" = unsqueeze(mul_1, 0)\n"
                              "    expand: \"f32[4, 3, 2]\" = expand(unsqueeze_1, [4, -1, -1])\n"
                              "    permute_1: \"f32[3, 2, 4]\" = permute(expand, [1, 2, 0])\n"
                              "    return (sum, permute_1)\n");
    hop_free(code);
    teardown(&f);
}

static void
test_vmap_graph_errors_name_the_input_or_output(void **state)
{
    (void)state;
    fixture f;
    build(&f);
    const hop_expr *four = hop_sym_const(f.env, 4);
    int in[] = {0, -1}, none[] = {-1, -1}, bad[] = {2, -1}, out[] = {0, 0};
    assert_int_equal(hop_vmap_graph(f.fwd, in, four, none, f.out), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "vmap: output 0 (sum) is batched but its out dim is None");
    hop_graph_free(f.out);
    f.out = hop_graph_new(f.env, "f_vmap");
    assert_int_equal(hop_vmap_graph(f.fwd, bad, four, out, f.out), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "vmap: in dim 2 of input 0 (x: f32[3]) is out of range for a batched "
                        "input of rank 2");
    assert_int_equal(hop_vmap_graph(NULL, in, four, out, f.out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_vmap_graph: NULL graph");
    teardown(&f);
}

static void
test_vmap_graph_op_table_has_a_batch_column(void **state)
{
    (void)state;
    for (int op = 0; op < HOP_OP_COUNT; op++) {
        const hop_op_batch_rule *r = hop_op_batch((hop_op)op);
        assert_non_null(r);
        assert_true(r->batch != NULL || r->unsupported != NULL);
    }
    assert_null(hop_op_batch(HOP_OP_COUNT));
    assert_string_equal(hop_op_batch(HOP_OP_item)->unsupported,
                        "item of a batched value is data-dependent per example");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmap_graph_moves_batch_dims_and_broadcasts_unbatched_outputs),
        cmocka_unit_test(test_vmap_graph_errors_name_the_input_or_output),
        cmocka_unit_test(test_vmap_graph_op_table_has_a_batch_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
