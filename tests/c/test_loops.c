/*
 * tests/c/test_loops.c - the loop HOPs from the C API: while_loop, fori_loop
 * and scan traced, lowered and run against the reference interpreter, with
 * no allocation per iteration (the carries are double-buffered and a scan's
 * ys are written into their rows), and the carry check's message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/loop_kit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* Counts allocations (a realloc-style allocator over the C library's). */
static long nallocs;

static void *
counting(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (ptr == NULL)
        nallocs++;
    return realloc(ptr, nsize);
}

static hop_node *
op(hop_tracer *t, hop_op o, hop_arg a, hop_arg b)
{
    return hop_tracer_call_op(t, o, (hop_arg[]){a, b}, 2);
}

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

/* cond(i, v) = i < n (n in ud); body(i, v) = (i + 1, v * 1.5 + 1) */
static hop_status
cond_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    return push(out, op(t, HOP_OP_lt, hop_arg_node(in[0]), hop_arg_node(ud)));
}

static hop_status
body_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    hop_node *v = op(t, HOP_OP_mul, hop_arg_node(in[1]), hop_arg_float(1.5));
    hop_status st = push(out, op(t, HOP_OP_add, hop_arg_node(in[0]), hop_arg_int(1)));
    return st == HOP_OK ? push(out, v ? op(t, HOP_OP_add, hop_arg_node(v), hop_arg_float(1.0))
                                      : NULL)
                        : st;
}

static hop_tensor *
scalar_i64(int64_t v)
{
    return hop_tensor_from_data(HOP_I64, 0, NULL, &v);
}

static hop_tensor *
vec(int64_t n, float start)
{
    float d[64];
    for (int64_t i = 0; i < n; i++)
        d[i] = start + (float)i;
    return hop_tensor_from_data(HOP_F32, 1, &n, d);
}

/* while i < n: (i, v) = (i + 1, v * 1.5 + 1), with n an input. */
static hop_output_graph *
while_program(void)
{
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {8};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, true);
    hop_node *n = hop_output_graph_add_input(og, "n", HOP_I64, 0, NULL, false);
    hop_node *i0 = hop_tracer_call_op(hop_output_graph_root(og), HOP_OP_full,
                                      (hop_arg[]){hop_arg_list(NULL, 0), hop_arg_int(0),
                                                  hop_arg_dtype(HOP_I64)},
                                      3);
    assert_non_null(i0);
    hop_arg carries[] = {hop_arg_node(i0), hop_arg_node(x)};
    hop_arg args[] = {hop_arg_list(carries, 2)};
    hop_body bodies[] = {{cond_fn, n}, {body_fn, NULL}};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, &hop_while_loop_class, args, 1, bodies, 2, &out), HOP_OK);
    assert_non_null(hop_tracer_output(hop_output_graph_root(og),
                                      (hop_arg[]){hop_arg_node(out.items[1])}, 1));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
    hop_values_clear(&out);
    return og;
}

/* --------------------------------------------------------------- tests */

static void
test_while_loop_runs_in_the_plan_and_allocates_nothing_per_iteration(void **state)
{
    (void)state;
    hop_output_graph *og = while_program();
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    hop_tensor *x = vec(8, -2.0f), *got = NULL, *want = NULL;
    long per_trip[2];
    int64_t trips[2] = {3, 300};
    for (int k = 0; k < 2; k++) {
        hop_tensor *n = scalar_i64(trips[k]);
        hop_tensor *in[] = {x, n};
        assert_int_equal(hop_plan_run(plan, in, 2, &got, 1), HOP_OK); /* warm */
        hop_tensor_release(got);
        hop_set_allocator(counting, NULL);
        nallocs = 0;
        assert_int_equal(hop_plan_run(plan, in, 2, &got, 1), HOP_OK);
        per_trip[k] = nallocs;
        hop_set_allocator(NULL, NULL);
        assert_int_equal(hop_graph_eval(og, in, 2, &want, 1), HOP_OK);
        for (int i = 0; i < 8; i++) {
            double v = -2.0 + i;
            for (int64_t t = 0; t < trips[k]; t++)
                v = (float)((float)v * 1.5f + 1.0f);
            assert_float_equal(((float *)want->data)[i], ((float *)got->data)[i], 0);
            if (trips[k] == 3)
                assert_float_equal(((float *)got->data)[i], v, 1e-4);
        }
        hop_tensor_release(got);
        hop_tensor_release(want);
        hop_tensor_release(n);
    }
    /* as many allocations for 300 iterations as for 3: none per iteration */
    assert_int_equal(per_trip[0], per_trip[1]);
    char *dump = hop_plan_dump(plan);
    assert_non_null(strstr(dump, "Swap"));
    /* rotated: the test at the bottom, an If back to the body */
    assert_non_null(strstr(dump, " If "));
    assert_null(strstr(dump, "IfNot"));
    hop_free(dump);
    hop_tensor_release(x);
    hop_plan_free(plan);
    hop_output_graph_free(og);
}

/* body(c, x) = (c + x, c * x): a scan's carry and y */
static hop_status
step_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    hop_status st = push(out, op(t, HOP_OP_add, hop_arg_node(in[0]), hop_arg_node(in[1])));
    return st == HOP_OK ? push(out, op(t, HOP_OP_mul, hop_arg_node(in[0]), hop_arg_node(in[1])))
                        : st;
}

static void
test_scan_writes_each_y_into_its_row_and_reverse_scans_from_the_end(void **state)
{
    (void)state;
    for (int reverse = 0; reverse < 2; reverse++) {
        hop_output_graph *og = hop_output_graph_new();
        int64_t xs_sizes[] = {6, 4}, c_sizes[] = {4};
        hop_node *xs = hop_output_graph_add_input(og, "xs", HOP_F32, 2, xs_sizes, true);
        hop_node *c0 = hop_output_graph_add_input(og, "c", HOP_F32, 1, c_sizes, true);
        hop_arg init = hop_arg_node(c0), x = hop_arg_node(xs);
        hop_arg args[] = {hop_arg_bool(reverse), hop_arg_int(0), hop_arg_int(-1),
                          hop_arg_list(&init, 1), hop_arg_list(&x, 1)};
        hop_body body = {step_fn, NULL};
        hop_values out = {0};
        assert_int_equal(hop_apply(og, &hop_scan_class, args, 5, &body, 1, &out), HOP_OK);
        assert_non_null(hop_tracer_output(hop_output_graph_root(og),
                                          (hop_arg[]){hop_arg_node(out.items[0]),
                                                      hop_arg_node(out.items[1])},
                                          2));
        hop_plan *plan = hop_lower(og, NULL);
        assert_non_null(plan);
        float d[24];
        for (int i = 0; i < 24; i++)
            d[i] = (float)(i % 5) - 1.5f;
        hop_tensor *in[] = {hop_tensor_from_data(HOP_F32, 2, xs_sizes, d), vec(4, 1.0f)};
        hop_tensor *got[2], *want[2];
        assert_int_equal(hop_plan_run(plan, in, 2, got, 2), HOP_OK);
        assert_int_equal(hop_graph_eval(og, in, 2, want, 2), HOP_OK);
        float c[4] = {1, 2, 3, 4};
        for (int s = 0; s < 6; s++) {
            int t = reverse ? 5 - s : s;
            for (int j = 0; j < 4; j++) {
                float y = c[j] * d[t * 4 + j];
                assert_float_equal(((float *)got[1]->data)[t * 4 + j], y, 1e-5);
                assert_float_equal(((float *)want[1]->data)[t * 4 + j], y, 1e-5);
                c[j] += d[t * 4 + j];
            }
        }
        for (int j = 0; j < 4; j++)
            assert_float_equal(((float *)got[0]->data)[j], c[j], 1e-5);
        for (int k = 0; k < 2; k++) {
            hop_tensor_release(got[k]);
            hop_tensor_release(want[k]);
            hop_tensor_release(in[k]);
        }
        hop_plan_free(plan);
        hop_values_clear(&out);
        hop_output_graph_free(og);
    }
}

/* body(i, v) = v[:2]: the carry check names the HOP and both metadata. */
static hop_status
shrink_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, hop_tracer_call_op(t, HOP_OP_slice,
                                        (hop_arg[]){hop_arg_node(in[1]), hop_arg_int(0),
                                                    hop_arg_int(0), hop_arg_int(2),
                                                    hop_arg_int(1)},
                                        5));
}

static void
test_a_body_that_changes_a_carry_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {5};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, true);
    size_t nnodes = hop_output_graph_root_graph(og)->nnodes;
    hop_arg carry = hop_arg_node(x);
    hop_arg args[] = {hop_arg_int(0), hop_arg_int(3), hop_arg_list(&carry, 1)};
    hop_body body = {shrink_fn, NULL};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, &hop_fori_loop_class, args, 3, &body, 1, &out), HOP_TRACE);
    assert_string_equal(hop_error_message(),
                        "fori_loop: carry 0 enters as f32[s0] but body_fun returns f32[2]");
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, nnodes);
    assert_int_equal(hop_output_graph_root_graph(og)->nsubgraphs, 0);
    assert_int_equal(hop_output_graph_depth(og), 1);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* cond(i) = i < 3; body(i) = (i + 1, i + 1): one value too many. */
static hop_status
below_three(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, op(t, HOP_OP_lt, hop_arg_node(in[0]), hop_arg_int(3)));
}

static hop_status
twice_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    hop_status st = push(out, op(t, HOP_OP_add, hop_arg_node(in[0]), hop_arg_int(1)));
    return st == HOP_OK ? push(out, op(t, HOP_OP_add, hop_arg_node(in[0]), hop_arg_int(1))) : st;
}

static void
test_a_while_body_returning_more_values_than_carries_is_refused(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *i0 = hop_tracer_call_op(
        hop_output_graph_root(og), HOP_OP_full,
        (hop_arg[]){hop_arg_list(NULL, 0), hop_arg_int(0), hop_arg_dtype(HOP_I64)}, 3);
    assert_non_null(i0);
    size_t nnodes = hop_output_graph_root_graph(og)->nnodes;
    hop_arg carry = hop_arg_node(i0);
    hop_arg args[] = {hop_arg_list(&carry, 1)};
    hop_body bodies[] = {{below_three, NULL}, {twice_fn, NULL}};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, &hop_while_loop_class, args, 1, bodies, 2, &out), HOP_TRACE);
    assert_string_equal(hop_error_message(), "while_loop: body_fn returns 2 values for 1 carry");
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, nnodes);
    assert_int_equal(hop_output_graph_root_graph(og)->nsubgraphs, 0);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* The loop kit's dim of an xs value: negative dims count from the end, one
 * out of range is -1, and an xs without that dim (or not a tensor) is
 * refused with a message naming the HOP, the value and the dim. */
static void
test_the_loop_kit_resolves_an_xs_dim_from_either_end_and_names_a_missing_one(void **state)
{
    (void)state;
    assert_int_equal(hop_loop_dim(0, 2), 0);
    assert_int_equal(hop_loop_dim(-1, 2), 1);
    assert_int_equal(hop_loop_dim(-2, 2), 0);
    assert_int_equal(hop_loop_dim(2, 2), -1);
    assert_int_equal(hop_loop_dim(-3, 2), -1);
    assert_int_equal(hop_loop_dim(0, 0), -1);
    hop_shape_env *env = hop_shape_env_new();
    hop_value_info x = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&x.meta, env, HOP_F32, 2, (int64_t[]){3, 4}), HOP_OK);
    int d = 7;
    assert_int_equal(hop_loop_xs_dim("scan", 0, "x", &x, -1, &d), HOP_OK);
    assert_int_equal(d, 1);
    assert_int_equal(hop_loop_xs_dim("associative_scan", 1, "y", &x, 2, &d), HOP_SHAPE);
    assert_int_equal(d, -1);
    assert_string_equal(hop_error_message(),
                        "associative_scan: xs 1 (y) is f32[3, 4], which has no dim 2");
    hop_value_info n = {.kind = HOP_VALUE_SYM, .sym = hop_sym_const(env, 3)};
    assert_int_equal(hop_loop_xs_dim("scan", 2, "n", &n, 0, &d), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "scan: xs 2 (n) is Sym(3), which has no dim 0");
    hop_error_clear();
    hop_shape_env_free(env);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_while_loop_runs_in_the_plan_and_allocates_nothing_per_iteration),
        cmocka_unit_test(test_scan_writes_each_y_into_its_row_and_reverse_scans_from_the_end),
        cmocka_unit_test(test_a_body_that_changes_a_carry_is_refused_and_changes_nothing),
        cmocka_unit_test(test_a_while_body_returning_more_values_than_carries_is_refused),
        cmocka_unit_test(
            test_the_loop_kit_resolves_an_xs_dim_from_either_end_and_names_a_missing_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
