/*
 * tests/c/test_vmap.c - hop_vmap_graph (hop/batching.h) on a graph built
 * with the graph builders: one exact batched graph (a batched input moved
 * to dim 0, an unbatched one left alone, a batched vector times a matrix (one
 * GEMM), the
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
#include "hop/loop_kit.h"
#include "hop/prim_hop.h"
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

/* A branch g(x: f32[3]) = x op 2. */
static hop_graph *
branch(hop_shape_env *env, const char *name, hop_op op)
{
    hop_graph *g = hop_graph_new(env, name);
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    hop_node *x = hop_graph_placeholder(g, "x", &vx);
    hop_arg k = op == HOP_OP_cumsum ? hop_arg_int(0) : hop_arg_float(2.0);
    hop_node *y = hop_graph_call_op(g, op, (hop_arg[]){hop_arg_node(x), k}, 2);
    assert_non_null(hop_graph_output(g, (hop_arg[]){hop_arg_node(y)}, 1));
    return g;
}

/* the false branch's op (sub; cumsum for build_cond_costly) */
static hop_op false_op = HOP_OP_sub;

/* f(x: f32[3]) = cond(sum(x) > 0, x * 2, x - 2), a call of cls */
static void
build_cond_of(fixture *f, const hop_class *cls)
{
    f->env = hop_shape_env_new();
    f->fwd = hop_graph_new(f->env, "f");
    f->out = hop_graph_new(f->env, "f_vmap");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, f->env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    f->x = hop_graph_placeholder(f->fwd, "x", &vx);
    hop_node *s =
        hop_graph_call_op(f->fwd, HOP_OP_sum,
                          (hop_arg[]){hop_arg_node(f->x), hop_arg_none(), hop_arg_bool(false)}, 3);
    hop_node *p =
        hop_graph_call_op(f->fwd, HOP_OP_gt, (hop_arg[]){hop_arg_node(s), hop_arg_int(0)}, 2);
    hop_graph *t = branch(f->env, "cond_true_0", HOP_OP_mul);
    hop_graph *e = branch(f->env, "cond_false_0", false_op);
    assert_int_equal(hop_graph_add_subgraph(f->fwd, t), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(f->fwd, e), HOP_OK);
    hop_arg ops[] = {hop_arg_node(f->x)};
    hop_arg args[] = {hop_arg_node(p), hop_arg_graph(t), hop_arg_graph(e), hop_arg_list(ops, 1)};
    hop_node *c = hop_graph_call_hop(f->fwd, cls, args, 4, &vx, 1);
    hop_node *g = hop_graph_getitem(f->fwd, c, 0);
    assert_non_null(hop_graph_output(f->fwd, (hop_arg[]){hop_arg_node(g)}, 1));
    assert_int_equal(hop_graph_verify(f->fwd), HOP_OK);
}

static void
build_cond(fixture *f)
{
    build_cond_of(f, &hop_cond_class);
}

/* f(x: f32[3]) = cond(sum(x) > 0, x * 2, cumsum(x, 0)): not cheap, so a
 * batched predicate compacts */
static void
build_cond_costly(fixture *f)
{
    false_op = HOP_OP_cumsum;
    build_cond_of(f, &hop_cond_class);
    false_op = HOP_OP_sub;
}

/* cond without its batch slot: a HOP with no rule */
static hop_class cond_no_batch;

static void
build_cond_no_batch(fixture *f)
{
    cond_no_batch = hop_cond_class;
    cond_no_batch.batch = NULL;
    build_cond_of(f, &cond_no_batch);
}

/* f(x: f32[3]) = wrap(x * 2) */
static void
build_wrap(fixture *f)
{
    f->env = hop_shape_env_new();
    f->fwd = hop_graph_new(f->env, "f");
    f->out = hop_graph_new(f->env, "f_vmap");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, f->env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    f->x = hop_graph_placeholder(f->fwd, "x", &vx);
    hop_graph *body = branch(f->env, "wrap_body_0", HOP_OP_mul);
    assert_int_equal(hop_graph_add_subgraph(f->fwd, body), HOP_OK);
    hop_arg ops[] = {hop_arg_node(f->x)};
    hop_arg args[] = {hop_arg_graph(body), hop_arg_list(ops, 1)};
    hop_node *c = hop_graph_call_hop(f->fwd, &hop_wrap_class, args, 2, &vx, 1);
    hop_node *g = hop_graph_getitem(f->fwd, c, 0);
    assert_non_null(hop_graph_output(f->fwd, (hop_arg[]){hop_arg_node(g)}, 1));
    assert_int_equal(hop_graph_verify(f->fwd), HOP_OK);
}

/* f(x: f32[3], n: i64[]) = fori_loop(0, item(n), x * 2 + i, (x,)): n
 * batched is a bound per example (the item deferred to fori_loop's rule) */
static void
build_fori(fixture *f)
{
    f->env = hop_shape_env_new();
    f->fwd = hop_graph_new(f->env, "f");
    f->out = hop_graph_new(f->env, "f_vmap");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR}, vn = {.kind = HOP_VALUE_TENSOR};
    assert_int_equal(hop_meta_init(&vx.meta, f->env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    assert_int_equal(hop_meta_init(&vn.meta, f->env, HOP_I64, 0, NULL), HOP_OK);
    f->x = hop_graph_placeholder(f->fwd, "x", &vx);
    f->w = hop_graph_placeholder(f->fwd, "n", &vn);
    hop_node *k = hop_graph_call_op(f->fwd, HOP_OP_item, (hop_arg[]){hop_arg_node(f->w)}, 1);
    hop_graph *body = hop_graph_new(f->env, "fori_loop_body_0");
    hop_value_info vi = {.kind = HOP_VALUE_SYM,
                         .sym = hop_shape_env_unbacked(f->env, INT64_MIN, INT64_MAX)};
    hop_node *i = hop_graph_placeholder(body, "i", &vi);
    hop_node *c = hop_graph_placeholder(body, "c", &vx);
    hop_node *m =
        hop_graph_call_op(body, HOP_OP_mul, (hop_arg[]){hop_arg_node(c), hop_arg_float(2.0)}, 2);
    hop_node *a =
        hop_graph_call_op(body, HOP_OP_add, (hop_arg[]){hop_arg_node(m), hop_arg_node(i)}, 2);
    assert_non_null(hop_graph_output(body, (hop_arg[]){hop_arg_node(a)}, 1));
    assert_int_equal(hop_graph_add_subgraph(f->fwd, body), HOP_OK);
    hop_arg ops[] = {hop_arg_node(f->x)};
    hop_arg args[] = {hop_arg_int(0), hop_arg_node(k), hop_arg_graph(body), hop_arg_list(ops, 1),
                      hop_arg_list(NULL, 0)};
    hop_node *call = hop_graph_call_hop(f->fwd, &hop_fori_loop_class, args, 5, &vx, 1);
    hop_node *g = hop_graph_getitem(f->fwd, call, 0);
    assert_non_null(hop_graph_output(f->fwd, (hop_arg[]){hop_arg_node(g)}, 1));
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
                              "    matmul: \"f32[4, 2]\" = matmul(relu, w)\n"
                              "    sum: \"f32[4]\" = sum(matmul, [1], False)\n"
                              "    mul_1: \"f32[3, 2]\" = mul(w, 2.0)\n"
                              "    unsqueeze: \"f32[1, 3, 2]\" = unsqueeze(mul_1, 0)\n"
                              "    expand: \"f32[4, 3, 2]\" = expand(unsqueeze, [4, -1, -1])\n"
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
test_vmap_graph_runs_a_hop_without_a_rule_as_a_map_loop(void **state)
{
    (void)state;
    fixture f;
    build_cond_no_batch(&f);
    int in[] = {0}, out[] = {0};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    char *code = hop_graph_code(f.out);
    assert_string_equal(code,
                        "def f_vmap(x: \"f32[4, 3]\"):\n"
                        "    def cond_vmap_loop(gt: \"bool[]\", x: \"f32[3]\"):\n"
                        "        def cond_true_0(x: \"f32[3]\"):\n"
                        "            mul: \"f32[3]\" = mul(x, 2.0)\n"
                        "            return (mul,)\n"
                        "\n"
                        "        def cond_false_0(x: \"f32[3]\"):\n"
                        "            sub: \"f32[3]\" = sub(x, 2.0)\n"
                        "            return (sub,)\n"
                        "\n"
                        "        cond: \"f32[3]\" = cond(gt, cond_true_0, cond_false_0, (x,))\n"
                        "        getitem: \"f32[3]\" = cond[0]\n"
                        "        return (getitem,)\n"
                        "\n"
                        "    sum: \"f32[4]\" = sum(x, [1], False)\n"
                        "    gt: \"bool[4]\" = gt(sum, 0)\n"
                        "    map: \"f32[4, 3]\" = map(cond_vmap_loop, (gt, x), ())\n"
                        "    getitem: \"f32[4, 3]\" = map[0]\n"
                        "    return (getitem,)\n");
    hop_free(code);
    const hop_node *m = hop_graph_find_node(f.out, "map");
    assert_true(hop_batch_is_loop(m));
    assert_false(hop_batch_is_loop(hop_graph_find_node(f.out, "sum")));
    teardown(&f);
}

/* cond with a batched predicate and cheap, pure branches: select (both
 * branches on the whole batch, then where). */
static void
test_vmap_graph_selects_a_cheap_cond(void **state)
{
    (void)state;
    fixture f;
    build_cond(&f);
    int in[] = {0}, out[] = {0};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    char *code = hop_graph_code(f.out);
    assert_string_equal(code, "def f_vmap(x: \"f32[4, 3]\"):\n"
                              "    def cond_true_0_vmap_select(x: \"f32[4, 3]\"):\n"
                              "        mul: \"f32[4, 3]\" = mul(x, 2.0)\n"
                              "        return (mul,)\n"
                              "\n"
                              "    def cond_false_0_vmap_select(x: \"f32[4, 3]\"):\n"
                              "        sub: \"f32[4, 3]\" = sub(x, 2.0)\n"
                              "        return (sub,)\n"
                              "\n"
                              "    sum: \"f32[4]\" = sum(x, [1], False)\n"
                              "    gt: \"bool[4]\" = gt(sum, 0)\n"
                              "    logical_not: \"bool[4]\" = logical_not(gt)\n"
                              /* each branch's operand keeps the gradient of
                               * the examples that took it (the select rule) */
                              "    reshape: \"bool[4, 1]\" = reshape(gt, [4, 1])\n"
                              "    mask_gradient: \"f32[4, 3]\" = mask_gradient(x, reshape)\n"
                              "    wrap: \"f32[4, 3]\" = wrap(cond_true_0_vmap_select, "
                              "(mask_gradient,))\n"
                              "    getitem: \"f32[4, 3]\" = wrap[0]\n"
                              "    reshape_1: \"bool[4, 1]\" = reshape(logical_not, [4, 1])\n"
                              "    mask_gradient_1: \"f32[4, 3]\" = mask_gradient(x, reshape_1)\n"
                              "    wrap_1: \"f32[4, 3]\" = wrap(cond_false_0_vmap_select, "
                              "(mask_gradient_1,))\n"
                              "    getitem_1: \"f32[4, 3]\" = wrap_1[0]\n"
                              "    reshape_2: \"bool[4, 1]\" = reshape(gt, [4, 1])\n"
                              "    where: \"f32[4, 3]\" = where(reshape_2, getitem, getitem_1)\n"
                              "    return (where,)\n");
    hop_free(code);
    teardown(&f);
}

/* fori_loop with a batched bound: one loop over [0, max n) whose lanes keep
 * their carries once i reaches their own n; the step reads the carry
 * through mask_gradient, so a finished lane gets no gradient from it. */
static void
test_vmap_graph_masks_the_lanes_of_a_fori_loop_with_a_batched_bound(void **state)
{
    (void)state;
    fixture f;
    build_fori(&f);
    int in[] = {-1, 0}, out[] = {0};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    char *code = hop_graph_code(f.out);
    assert_string_equal(
        code,
        "def f_vmap(x: \"f32[3]\", n: \"i64[4]\"):\n"
        "    def fori_loop_body_0_vmap(i: \"Sym(u1)\", c: \"f32[4, 3]\", upper: \"i64[4]\"):\n"
        "        gt: \"bool[4]\" = gt(upper, i)\n"
        "        reshape: \"bool[4, 1]\" = reshape(gt, [4, 1])\n"
        "        mask_gradient: \"f32[4, 3]\" = mask_gradient(c, reshape)\n"
        "        mul: \"f32[4, 3]\" = mul(mask_gradient, 2.0)\n"
        "        add: \"f32[4, 3]\" = add(mul, i)\n"
        "        where: \"f32[4, 3]\" = where(reshape, add, c)\n"
        "        return (where,)\n"
        "\n"
        "    item: \"i64[4]\" = reshape(n, [4])\n"
        "    unsqueeze: \"f32[1, 3]\" = unsqueeze(x, 0)\n"
        "    expand: \"f32[4, 3]\" = expand(unsqueeze, [4, -1])\n"
        "    amax: \"i64[]\" = amax(item, [0], False)\n"
        "    item_1: \"Sym(u2)\" = item(amax)\n"
        "    fori_loop: \"f32[4, 3]\" = fori_loop(0, item_1, fori_loop_body_0_vmap, (expand,), "
        "(item,))\n"
        "    getitem: \"f32[4, 3]\" = fori_loop[0]\n"
        "    return (getitem,)\n");
    hop_free(code);
    teardown(&f);
}

/* ------------------------------------------- the loop kit's masked loop */

/* fori_loop with its batch slot replaced by a rule on hop_loop_batch_masked,
 * whose bodies function records what the kit gave it and batches the step
 * as it is (or fails, or is missing: kit_mode). */
enum { KIT_BATCH, KIT_FAIL, KIT_NO_BODIES };
static int kit_mode;
static bool kit_batched[8];
static size_t kit_nbatched;
static hop_span kit_carries;

static hop_status
kit_bodies(void *arg, hop_batch_ctx *cx, const hop_node *call, const bool *batched,
           hop_span carries, hop_build *b)
{
    (void)arg;
    const hop_graph *body = hop_node_body(call, "body_fun");
    kit_nbatched = body->nplaceholders;
    memcpy(kit_batched, batched, kit_nbatched * sizeof *batched);
    kit_carries = carries;
    if (kit_mode == KIT_FAIL)
        return hop_error(HOP_SHAPE, "kit test: the bodies refused");
    hop_graph *v = NULL;
    hop_status st = hop_batch_body(cx, body, batched, &v);
    return st == HOP_OK ? hop_build_use_body(b, "body_fun", v) : st;
}

static hop_status
kit_batch(hop_batch_ctx *cx, const hop_node *call)
{
    hop_loop_lanes m = {kit_mode == KIT_NO_BODIES ? NULL : kit_bodies, NULL, NULL};
    return hop_loop_batch_masked(cx, call, "init_val", &m);
}

static hop_class kit_fori;

/* f(x: f32[3], w: f32[3]) = fori_loop(0, 3, c * w, (x,), (w,)) of kit_fori;
 * with sym, the carry is a SymInt input s instead (the body returns i). */
static void
build_kit_fori(fixture *f, bool sym)
{
    kit_fori = hop_fori_loop_class;
    kit_fori.batch = kit_batch;
    f->env = hop_shape_env_new();
    f->fwd = hop_graph_new(f->env, "f");
    f->out = hop_graph_new(f->env, "f_vmap");
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR};
    hop_value_info vs = {.kind = HOP_VALUE_SYM, .sym = hop_shape_env_unbacked(f->env, 0, 9)};
    hop_value_info vi = {.kind = HOP_VALUE_SYM, .sym = hop_shape_env_unbacked(f->env, 0, 2)};
    assert_int_equal(hop_meta_init(&vx.meta, f->env, HOP_F32, 1, (int64_t[]){3}), HOP_OK);
    f->x = hop_graph_placeholder(f->fwd, sym ? "s" : "x", sym ? &vs : &vx);
    f->w = hop_graph_placeholder(f->fwd, "w", &vx);
    hop_graph *body = hop_graph_new(f->env, "fori_loop_body_0");
    hop_node *i = hop_graph_placeholder(body, "i", &vi);
    hop_node *c = hop_graph_placeholder(body, "c", sym ? &vs : &vx);
    hop_node *w = hop_graph_placeholder(body, "w", &vx);
    hop_node *r =
        sym ? i
            : hop_graph_call_op(body, HOP_OP_mul, (hop_arg[]){hop_arg_node(c), hop_arg_node(w)}, 2);
    assert_non_null(hop_graph_output(body, (hop_arg[]){hop_arg_node(r)}, 1));
    assert_int_equal(hop_graph_add_subgraph(f->fwd, body), HOP_OK);
    hop_arg init[] = {hop_arg_node(f->x)}, lifted[] = {hop_arg_node(f->w)};
    hop_arg args[] = {hop_arg_int(0), hop_arg_int(3), hop_arg_graph(body), hop_arg_list(init, 1),
                      hop_arg_list(lifted, 1)};
    hop_node *call = hop_graph_call_hop(f->fwd, &kit_fori, args, 5, sym ? &vs : &vx, 1);
    hop_node *g = hop_graph_getitem(f->fwd, call, 0);
    assert_non_null(hop_graph_output(f->fwd, (hop_arg[]){hop_arg_node(g)}, 1));
    assert_int_equal(hop_graph_verify(f->fwd), HOP_OK);
}

static void
build_kit(fixture *f)
{
    build_kit_fori(f, false);
}

/* The kit batches every carry (an unbatched init broadcast), passes the
 * bodies function what hop_batch_operands found with the carries set, and
 * keeps the leads as they are. */
static void
test_loop_kit_masked_loop_batches_every_carry_and_keeps_the_leads(void **state)
{
    (void)state;
    fixture f;
    kit_mode = KIT_BATCH;
    build_kit(&f);
    int in[] = {-1, 0}, out[] = {0};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    assert_int_equal(kit_nbatched, 3);
    assert_false(kit_batched[0]); /* i: made, never batched */
    assert_true(kit_batched[1]);  /* c: unbatched init, batched by the kit */
    assert_true(kit_batched[2]);  /* w: batched operand */
    assert_int_equal(kit_carries.at, 1);
    assert_int_equal(kit_carries.n, 1);
    char *code = hop_graph_code(f.out);
    assert_string_equal(
        code,
        "def f_vmap(x: \"f32[3]\", w: \"f32[4, 3]\"):\n"
        "    def fori_loop_body_0_vmap(i: \"Sym(u1)\", c: \"f32[4, 3]\", w: \"f32[4, 3]\"):\n"
        "        mul: \"f32[4, 3]\" = mul(c, w)\n"
        "        return (mul,)\n"
        "\n"
        "    unsqueeze: \"f32[1, 3]\" = unsqueeze(x, 0)\n"
        "    expand: \"f32[4, 3]\" = expand(unsqueeze, [4, -1])\n"
        "    fori_loop: \"f32[4, 3]\" = fori_loop(0, 3, fori_loop_body_0_vmap, (expand,), (w,))\n"
        "    getitem: \"f32[4, 3]\" = fori_loop[0]\n"
        "    return (getitem,)\n");
    hop_free(code);
    teardown(&f);
}

/* What the bodies function returns is the rule's error, and the call's
 * outputs stay unset; no bodies function, or a SymInt carry (it cannot
 * differ per lane), is refused before anything is built. */
static void
test_loop_kit_masked_loop_errors(void **state)
{
    (void)state;
    int in[] = {-1, 0}, out[] = {0};
    fixture f;
    kit_mode = KIT_FAIL;
    build_kit(&f);
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "kit test: the bodies refused");
    teardown(&f);

    kit_mode = KIT_NO_BODIES;
    build_kit(&f);
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_loop_batch_masked: no bodies function");
    teardown(&f);

    kit_mode = KIT_BATCH;
    kit_nbatched = 0;
    build_kit_fori(&f, true);
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out),
                     HOP_UNSUPPORTED);
    assert_string_equal(hop_error_message(), "vmap: fori_loop (fori_loop) carries a SymInt "
                                             "(carry 0), which cannot differ per lane");
    assert_int_equal(kit_nbatched, 0); /* the bodies function never ran */
    teardown(&f);
}

/* Every allocation of the transformation failing in turn: HOP_NOMEM, no
 * crash, and nothing leaked once the partly built graph is freed (the
 * ShapeEnv keeps the expressions it interned: a first run makes them). */
static void
test_vmap_graph_batches_a_wrap_body(void **state)
{
    (void)state;
    fixture f;
    build_wrap(&f);
    int in[] = {0}, out[] = {1};
    assert_int_equal(hop_vmap_graph(f.fwd, in, hop_sym_const(f.env, 4), out, f.out), HOP_OK);
    char *code = hop_graph_code(f.out);
    assert_string_equal(code, "def f_vmap(x: \"f32[4, 3]\"):\n"
                              "    def wrap_body_0_vmap(x: \"f32[4, 3]\"):\n"
                              "        mul: \"f32[4, 3]\" = mul(x, 2.0)\n"
                              "        return (mul,)\n"
                              "\n"
                              "    wrap: \"f32[4, 3]\" = wrap(wrap_body_0_vmap, (x,))\n"
                              "    getitem: \"f32[4, 3]\" = wrap[0]\n"
                              "    permute: \"f32[3, 4]\" = permute(getitem, [1, 0])\n"
                              "    return (permute,)\n");
    hop_free(code);
    teardown(&f);
}

static void
test_vmap_graph_survives_every_allocation_failure(void **state)
{
    (void)state;
    void (*builds[])(fixture *) = {
        build,      build_cond, build_wrap, build_cond_no_batch, build_cond_costly,
        build_fori, build_kit};
    int in[7][2] = {{1, -1}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {-1, 0}, {-1, 0}};
    int out[7][2] = {{0, 2}, {0, 0}, {1, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
    kit_mode = KIT_BATCH;
    for (int b = 0; b < 7; b++) {
        /* compaction's nonzero and fori_loop's item(amax) make fresh
         * unbacked symbols, which the env keeps: no leak check there, only
         * HOP_NOMEM and no crash */
        bool fresh_symbols = builds[b] == build_cond_costly || builds[b] == build_fori;
        fixture f;
        builds[b](&f);
        long failures = 0;
        const hop_expr *four = hop_sym_const(f.env, 4);
        /* once first, so the env has interned every expression it makes */
        assert_int_equal(hop_vmap_graph(f.fwd, in[b], four, out[b], f.out), HOP_OK);
        for (long k = 1;; k++) {
            hop_graph_free(f.out);
            long live = hop_alloc_live();
            f.out = hop_graph_new(f.env, "f_vmap");
            hop_alloc_fail_at(k);
            hop_status st = hop_vmap_graph(f.fwd, in[b], four, out[b], f.out);
            hop_alloc_fail_at(0);
            if (st == HOP_OK)
                break;
            assert_int_equal(st, HOP_NOMEM);
            failures++;
            hop_graph_free(f.out);
            f.out = NULL;
            if (!fresh_symbols)
                assert_int_equal(hop_alloc_live(), live);
        }
        assert_true(failures > 10);
        teardown(&f);
    }
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
        cmocka_unit_test(test_vmap_graph_runs_a_hop_without_a_rule_as_a_map_loop),
        cmocka_unit_test(test_vmap_graph_batches_a_wrap_body),
        cmocka_unit_test(test_vmap_graph_selects_a_cheap_cond),
        cmocka_unit_test(test_vmap_graph_masks_the_lanes_of_a_fori_loop_with_a_batched_bound),
        cmocka_unit_test(test_loop_kit_masked_loop_batches_every_carry_and_keeps_the_leads),
        cmocka_unit_test(test_loop_kit_masked_loop_errors),
        cmocka_unit_test(test_vmap_graph_survives_every_allocation_failure),
        cmocka_unit_test(test_vmap_graph_op_table_has_a_batch_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
