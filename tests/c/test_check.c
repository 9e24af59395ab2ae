/*
 * tests/c/test_check.c - the op fail_if(x, flag, kind) (include/hop/ops.h):
 * its shape rule and errors, eagerly and in a plan (HOP_CHECK naming the
 * kind and the node when any element of the flag is true, x itself
 * otherwise, the plan usable again after a failed run), its vjp and jvp
 * rules (the cotangent and the tangent go through the same check, no
 * derivative reaches the flag), its batch rule (a batched flag fails the
 * call when any example's does), and saved programs (a round trip, and a
 * hostile file whose check kind is out of range).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_plan_util.h"
#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/saved.h"

#include <stdlib.h>

#define CUTOFF_MSG                                                                                 \
    "fail_if: a singular value lies within hop's error bound of the cutoff, so hop cannot "        \
    "vouch that its decision (which singular values count) is NumPy's"

/* f(x: f32[3], flag: bool[2]) = fail_if(x * 2, flag, kind) + 1 */
static hop_output_graph *
trace_checked(int64_t kind)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_tracer *root = hop_output_graph_root(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){3}, false);
    hop_node *flag = hop_output_graph_add_input(og, "flag", HOP_BOOL, 1, (int64_t[]){2}, false);
    assert_non_null(x);
    assert_non_null(flag);
    hop_node *m = OP(root, HOP_OP_mul, N(x), hop_arg_float(2.0));
    hop_node *c = OP(root, HOP_OP_fail_if, N(m), N(flag), hop_arg_int(kind));
    assert_non_null(c);
    hop_node *y = OP(root, HOP_OP_add, N(c), hop_arg_float(1.0));
    assert_non_null(hop_tracer_output(root, (hop_arg[]){N(y)}, 1));
    return og;
}

static hop_tensor *
bools(int n, const bool *v)
{
    hop_tensor *t = hop_tensor_empty(HOP_BOOL, 1, (int64_t[]){n});
    assert_non_null(t);
    for (int i = 0; i < n; i++)
        ((uint8_t *)t->data)[i] = v[i];
    return t;
}

static hop_tensor *
floats3(float a, float b, float c)
{
    hop_tensor *t = hop_tensor_empty(HOP_F32, 1, (int64_t[]){3});
    assert_non_null(t);
    float *d = t->data;
    d[0] = a, d[1] = b, d[2] = c;
    return t;
}

/* Runs plan on x and flag: the status; *y the result when it ran. */
static hop_status
run2(hop_plan *plan, hop_tensor *x, hop_tensor *flag, hop_tensor **y)
{
    hop_tensor *in[2] = {x, flag};
    *y = NULL;
    return hop_plan_run(plan, in, 2, y, 1);
}

static void
test_shape_rule_takes_a_bool_flag_of_any_shape_and_a_known_kind(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_tracer *root = hop_output_graph_root(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){2, 3}, false);
    hop_node *fb = hop_output_graph_add_input(og, "fb", HOP_BOOL, 3, (int64_t[]){4, 1, 5}, false);
    hop_node *ff = hop_output_graph_add_input(og, "ff", HOP_F32, 1, (int64_t[]){2}, false);
    hop_node *c = OP(root, HOP_OP_fail_if, N(x), N(fb), hop_arg_int(HOP_CHECK_ASSERT));
    assert_non_null(c);
    char *code = hop_graph_code(hop_output_graph_root_graph(og));
    assert_non_null(strstr(code, "fail_if: \"f32[2, 3]\" = fail_if(x, fb, 0)\n"));
    hop_free(code);
    size_t before = hop_output_graph_root_graph(og)->nnodes;
    assert_null(OP(root, HOP_OP_fail_if, N(x), N(ff), hop_arg_int(0)));
    assert_int_equal(hop_error_code(), HOP_DTYPE);
    assert_string_equal(hop_error_message(), "fail_if: flag must be a bool tensor, got f32[2]");
    assert_null(OP(root, HOP_OP_fail_if, N(x), N(fb), hop_arg_int(HOP_CHECK_KIND_COUNT)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "fail_if: 11 is not a check kind (0 to 10)");
    assert_null(OP(root, HOP_OP_fail_if, N(x), N(fb), hop_arg_int(-1)));
    assert_string_equal(hop_error_message(), "fail_if: -1 is not a check kind (0 to 10)");
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, before);
    assert_string_equal(hop_check_kind_name(HOP_CHECK_NUMPY_CUTOFF), "NUMPY_CUTOFF");
    assert_string_equal(hop_check_kind_name(5), "NUMPY_NAN_PATH");
    assert_string_equal(hop_check_kind_name(6), "NUMPY_WARNS");
    assert_string_equal(hop_check_kind_name(7), "NUMPY_EMPTY");
    assert_string_equal(hop_check_kind_name(8), "NUMPY_SCALAR_OVERFLOW");
    assert_string_equal(hop_check_kind_name(9), "NUMPY_INDEX");
    assert_string_equal(hop_check_kind_name(10), "VMAP_BRANCHES");
    assert_null(hop_check_kind_message(HOP_CHECK_KIND_COUNT));
    hop_output_graph_free(og);
}

static void
test_eager_fail_if_is_x_itself_or_the_kinds_error(void **state)
{
    (void)state;
    hop_tensor *x = floats3(1, 2, 3);
    hop_tensor *ok = bools(2, (bool[]){false, false}), *bad = bools(2, (bool[]){false, true});
    hop_rt_arg a[3] = {hop_rt_tensor(x), hop_rt_tensor(ok), hop_rt_int(HOP_CHECK_NUMPY_CUTOFF)};
    hop_tensor *y = hop_eager_tensor(HOP_OP_fail_if, a, 3);
    assert_non_null(y);
    assert_true(hop_tensor_shares_storage(y, x));
    assert_ptr_equal(y->data, x->data);
    hop_tensor_release(y);
    a[1] = hop_rt_tensor(bad);
    assert_null(hop_eager_tensor(HOP_OP_fail_if, a, 3));
    assert_int_equal(hop_error_code(), HOP_CHECK);
    assert_string_equal(hop_error_message(), CUTOFF_MSG " (check of kind NUMPY_CUTOFF)");
    /* a strided flag: its true element is found where it lies */
    hop_tensor *f4 = bools(4, (bool[]){false, true, false, false});
    hop_tensor *every2 = hop_tensor_view(f4, 1, (int64_t[]){2}, (int64_t[]){2}, 0);
    a[1] = hop_rt_tensor(every2);
    y = hop_eager_tensor(HOP_OP_fail_if, a, 3);
    assert_non_null(y);
    hop_tensor_release(y);
    hop_tensor *odd = hop_tensor_view(f4, 1, (int64_t[]){2}, (int64_t[]){2}, 1);
    a[1] = hop_rt_tensor(odd);
    assert_null(hop_eager_tensor(HOP_OP_fail_if, a, 3));
    assert_int_equal(hop_error_code(), HOP_CHECK);
    hop_tensor *all[] = {x, ok, bad, f4, every2, odd};
    for (size_t i = 0; i < LEN(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_plan_raises_the_named_error_and_runs_again(void **state)
{
    (void)state;
    hop_output_graph *og = trace_checked(HOP_CHECK_NUMPY_CUTOFF);
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    hop_tensor *x = floats3(1, 2, 3), *y;
    hop_tensor *ok = bools(2, (bool[]){false, false}), *bad = bools(2, (bool[]){false, true});
    assert_int_equal(run2(plan, x, ok, &y), HOP_OK);
    assert_true(((float *)y->data)[0] == 3.0f && ((float *)y->data)[2] == 7.0f);
    hop_tensor_release(y);
    assert_int_equal(run2(plan, x, bad, &y), HOP_CHECK);
    assert_null(y);
    assert_string_equal(hop_error_message(),
                        CUTOFF_MSG " (check fail_if = fail_if(mul, flag, 1) of kind NUMPY_CUTOFF)");
    /* the plan is as it was: the next run with a false flag gives x * 2 + 1 */
    assert_int_equal(run2(plan, x, ok, &y), HOP_OK);
    assert_true(((float *)y->data)[1] == 5.0f);
    hop_tensor_release(y);
    hop_tensor_release(x);
    hop_tensor_release(ok);
    hop_tensor_release(bad);
    hop_plan_free(plan);
    hop_output_graph_free(og);
}

/* g(x: f32[3], flag: bool[2]) = sum(fail_if(x * x, flag, 0)) */
static hop_graph *
checked_square_sum(hop_shape_env *env)
{
    hop_graph *g = hop_graph_new(env, "g");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR}, vf = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    assert_int_equal(hop_meta_init(&vf.meta, env, HOP_BOOL, 1, (int64_t[]){2}), HOP_OK);
    hop_node *x = hop_graph_placeholder(g, "x", &vx), *f = hop_graph_placeholder(g, "flag", &vf);
    hop_node *m = hop_graph_call_op(g, HOP_OP_mul, (hop_arg[]){N(x), N(x)}, 2);
    hop_node *c = hop_graph_call_op(g, HOP_OP_fail_if, (hop_arg[]){N(m), N(f), hop_arg_int(0)}, 3);
    hop_node *s =
        hop_graph_call_op(g, HOP_OP_sum, (hop_arg[]){N(c), hop_arg_none(), hop_arg_bool(false)}, 3);
    assert_non_null(hop_graph_output(g, (hop_arg[]){N(s)}, 1));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    return g;
}

static void
test_vjp_and_jvp_send_the_derivative_through_the_same_check(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *g = checked_square_sum(env);
    hop_graph *b = hop_graph_new(env, "g_bwd");
    assert_int_equal(hop_vjp_graph(g, (bool[]){true, false}, (hop_ct_kind[]){HOP_CT_ONE}, b),
                     HOP_OK);
    char *code = hop_graph_code(b);
    assert_string_equal(code, "def g_bwd(x: \"f32[3]\", flag: \"bool[2]\"):\n"
                              "    mul: \"f32[3]\" = mul(x, x)\n"
                              "    fail_if: \"f32[3]\" = fail_if(mul, flag, 0)\n"
                              "    sum: \"f32[]\" = sum(fail_if, None, False)\n"
                              "    full: \"f32[]\" = full([], 1.0, f32)\n"
                              "    unsqueeze: \"f32[1]\" = unsqueeze(full, 0)\n"
                              "    expand: \"f32[3]\" = expand(unsqueeze, [3])\n"
                              "    fail_if_1: \"f32[3]\" = fail_if(expand, flag, 0)\n"
                              "    mul_1: \"f32[3]\" = mul(fail_if_1, x)\n"
                              "    mul_2: \"f32[3]\" = mul(fail_if_1, x)\n"
                              "    add: \"f32[3]\" = add(mul_1, mul_2)\n"
                              "    return (sum, add)\n");
    hop_free(code);
    /* the flag is no float tensor: no gradient is asked of it */
    hop_graph *b2 = hop_graph_new(env, "g_bwd2");
    assert_int_equal(hop_vjp_graph(g, (bool[]){true, true}, (hop_ct_kind[]){HOP_CT_ONE}, b2),
                     HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "grad: input 1 of graph g (flag: bool[2]) is not a float tensor");
    hop_graph *j = hop_graph_new(env, "g_jvp");
    assert_int_equal(hop_jvp_graph(g, (bool[]){true, false}, j), HOP_OK);
    code = hop_graph_code(j);
    assert_non_null(strstr(code, "= fail_if(mul, flag, 0)\n"));
    /* the tangent of x * x, through the check before its sum */
    assert_non_null(strstr(code, "fail_if_1: \"f32[3]\" = fail_if(add, flag, 0)\n"));
    hop_free(code);
    hop_graph_free(b);
    hop_graph_free(b2);
    hop_graph_free(j);
    hop_graph_free(g);
    hop_shape_env_free(env);
}

static void
test_a_batched_flag_is_checked_whole(void **state)
{
    (void)state;
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *g = checked_square_sum(env);
    /* x unbatched, the flag batched (4 examples): the output is x's, and
     * the op checks the [4, 2] flag whole (any example's true element) */
    hop_graph *v = hop_graph_new(env, "g_vmap");
    assert_int_equal(hop_vmap_graph(g, (int[]){-1, 0}, hop_sym_const(env, 4), (int[]){-1}, v),
                     HOP_OK);
    char *code = hop_graph_code(v);
    assert_string_equal(code, "def g_vmap(x: \"f32[3]\", flag: \"bool[4, 2]\"):\n"
                              "    mul: \"f32[3]\" = mul(x, x)\n"
                              "    fail_if: \"f32[3]\" = fail_if(mul, flag, 0)\n"
                              "    sum: \"f32[]\" = sum(fail_if, None, False)\n"
                              "    return (sum,)\n");
    hop_free(code);
    hop_graph *v2 = hop_graph_new(env, "g_vmap2");
    assert_int_equal(hop_vmap_graph(g, (int[]){0, 1}, hop_sym_const(env, 4), (int[]){0}, v2),
                     HOP_OK);
    code = hop_graph_code(v2);
    assert_string_equal(code, "def g_vmap2(x: \"f32[4, 3]\", flag: \"bool[2, 4]\"):\n"
                              "    permute: \"bool[4, 2]\" = permute(flag, [1, 0])\n"
                              "    mul: \"f32[4, 3]\" = mul(x, x)\n"
                              "    fail_if: \"f32[4, 3]\" = fail_if(mul, permute, 0)\n"
                              "    sum: \"f32[4]\" = sum(fail_if, [1], False)\n"
                              "    return (sum,)\n");
    hop_free(code);
    hop_graph_free(v);
    hop_graph_free(v2);
    hop_graph_free(g);
    hop_shape_env_free(env);
    /* run: a plan over a [4, 2] flag fails when one example's is true */
    hop_output_graph *og = hop_output_graph_new();
    hop_tracer *root = hop_output_graph_root(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){3}, false);
    hop_node *f = hop_output_graph_add_input(og, "flag", HOP_BOOL, 2, (int64_t[]){4, 2}, false);
    hop_node *c = OP(root, HOP_OP_fail_if, N(x), N(f), hop_arg_int(0));
    hop_node *y = OP(root, HOP_OP_mul, N(c), hop_arg_float(1.0));
    assert_non_null(hop_tracer_output(root, (hop_arg[]){N(y)}, 1));
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    hop_tensor *xt = floats3(1, 2, 3), *ft = hop_tensor_zeros(HOP_BOOL, 2, (int64_t[]){4, 2}), *out;
    assert_int_equal(run2(plan, xt, ft, &out), HOP_OK);
    hop_tensor_release(out);
    ((uint8_t *)ft->data)[7] = 1; /* the last example's second element */
    assert_int_equal(run2(plan, xt, ft, &out), HOP_CHECK);
    assert_string_equal(hop_error_message(), "fail_if: a run-time check failed (check fail_if = "
                                             "fail_if(x, flag, 0) of kind ASSERT)");
    hop_tensor_release(xt);
    hop_tensor_release(ft);
    hop_plan_free(plan);
    hop_output_graph_free(og);
}

static const hop_load_options load_opts = {.find_hop = hop_find_hop};

static void
test_saved_check_loads_runs_and_a_bad_kind_is_refused(void **state)
{
    (void)state;
    hop_output_graph *og = trace_checked(HOP_CHECK_NUMPY_CUTOFF);
    void *data = NULL;
    size_t size;
    assert_int_equal(hop_output_graph_save(og, NULL, &data, &size), HOP_OK);
    hop_saved *s = hop_output_graph_load(data, size, &load_opts);
    assert_non_null(s);
    char *a = hop_graph_code(hop_output_graph_root_graph(og));
    char *b = hop_graph_code(hop_output_graph_root_graph(s->og));
    assert_string_equal(a, b);
    hop_free(a);
    hop_free(b);
    hop_plan *plan = hop_lower(s->og, NULL);
    assert_non_null(plan);
    hop_tensor *x = floats3(1, 2, 3), *y;
    hop_tensor *ok = bools(2, (bool[]){false, false}), *bad = bools(2, (bool[]){true, true});
    assert_int_equal(run2(plan, x, ok, &y), HOP_OK);
    hop_tensor_release(y);
    assert_int_equal(run2(plan, x, bad, &y), HOP_CHECK);
    assert_string_equal(hop_error_message(),
                        CUTOFF_MSG " (check fail_if = fail_if(mul, flag, 1) of kind NUMPY_CUTOFF)");
    hop_plan_free(plan);
    hop_saved_free(s);
    /* the kind's byte: where the program saved with kind 4 differs */
    hop_output_graph *og4 = trace_checked(HOP_CHECK_NUMPY_TIES);
    void *data4 = NULL;
    size_t size4;
    assert_int_equal(hop_output_graph_save(og4, NULL, &data4, &size4), HOP_OK);
    assert_int_equal(size4, size);
    unsigned char *p = data4, *q = data;
    size_t at = size, ndiff = 0;
    for (size_t i = 24; i + 4 < size; i++)
        if (p[i] != q[i]) {
            at = i;
            ndiff++;
        }
    assert_int_equal(ndiff, 1);
    assert_int_equal(p[at], 8); /* 4, zigzag-coded */
    /* kind 63 (out of the list: zigzag 126, one byte) in a file whose
     * checksum is right */
    p[at] = 126;
    fix_checksum(p, size);
    assert_null(hop_output_graph_load(p, size, &load_opts));
    assert_int_equal(hop_error_code(), HOP_FORMAT);
    assert_non_null(strstr(hop_error_message(), "fail_if: 63 is not a check kind (0 to 10)"));
    hop_free(data);
    hop_free(data4);
    hop_tensor_release(x);
    hop_tensor_release(ok);
    hop_tensor_release(bad);
    hop_output_graph_free(og);
    hop_output_graph_free(og4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_rule_takes_a_bool_flag_of_any_shape_and_a_known_kind),
        cmocka_unit_test(test_eager_fail_if_is_x_itself_or_the_kinds_error),
        cmocka_unit_test(test_plan_raises_the_named_error_and_runs_again),
        cmocka_unit_test(test_vjp_and_jvp_send_the_derivative_through_the_same_check),
        cmocka_unit_test(test_a_batched_flag_is_checked_whole),
        cmocka_unit_test(test_saved_check_loads_runs_and_a_bad_kind_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
