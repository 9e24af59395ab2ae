/*
 * tests/c/test_lowering.c - plans against the op-by-op interpreter on many
 * programs (elementwise chains, broadcasting, reductions, views, nested
 * HOPs) at several input sizes with dynamic shapes; the lowering of each
 * HOP (cond runs one branch, map allocates once, invoke_subgraph compiles
 * once); guard failures with their exact messages; the dump; concurrent
 * runs; an allocation-failure sweep over lower + run.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"
#include "test_plan_util.h"

#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

__attribute__((unused)) static hop_tensor *
t1(hop_dtype dt, int64_t a)
{
    return rand_tensor(dt, 1, (int64_t[]){a});
}

static hop_tensor *
t2(hop_dtype dt, int64_t a, int64_t b)
{
    return rand_tensor(dt, 2, (int64_t[]){a, b});
}

static hop_plan *
lower(hop_output_graph *og, bool fuse)
{
    hop_lower_options o = {.no_fusion = !fuse};
    hop_plan *p = hop_lower(og, &o);
    if (p == NULL)
        fprintf(stderr, "hop_lower: %s: %s\n", hop_status_name(hop_error_code()),
                hop_error_message());
    assert_non_null(p);
    return p;
}

/* Every map row by row (the row loop under test, not the batched body). */
static hop_plan *
lower_by_rows(hop_output_graph *og)
{
    hop_lower_options o = {.no_batching = true};
    hop_plan *p = hop_lower(og, &o);
    assert_non_null(p);
    return p;
}

/* The plan (fused and unfused) gives exactly what the op-by-op interpreter
 * gives on these inputs. */
static void
check_plan(hop_output_graph *og, hop_tensor **in, size_t nin, size_t nout)
{
    hop_tensor *want[8] = {0}, *got[8] = {0};
    hop_status st = hop_graph_eval(og, in, nin, want, nout);
    if (st != HOP_OK)
        fprintf(stderr, "eval: %s\n", hop_error_message());
    assert_int_equal(st, HOP_OK);
    for (int fuse = 0; fuse < 2; fuse++) {
        hop_plan *p = lower(og, fuse);
        for (int rep = 0; rep < 2; rep++) {
            st = hop_plan_run(p, in, nin, got, nout);
            if (st != HOP_OK)
                fprintf(stderr, "run: %s\n", hop_error_message());
            assert_int_equal(st, HOP_OK);
            for (size_t j = 0; j < nout; j++)
                assert_same(got[j], want[j]);
            release_all(got, nout);
        }
        hop_plan_free(p);
    }
    release_all(want, nout);
}

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

static hop_tracer *
root(hop_output_graph *og)
{
    return hop_output_graph_root(og);
}

/* ------------------------------------------------------ elementwise */

/* exp(relu(x * 2 + 1)) */
static hop_output_graph *
chain_program(int64_t rows, int64_t cols, bool dynamic)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){rows, cols}, dynamic);
    hop_tracer *t = root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(2));
    hop_node *a = OP(t, HOP_OP_add, N(m), hop_arg_int(1));
    hop_node *r = OP(t, HOP_OP_relu, N(a));
    hop_node *e = OP(t, HOP_OP_exp, N(r));
    finish(og, &e, 1);
    return og;
}

static void
test_elementwise_chain_matches_eager_with_static_shapes(void **state)
{
    (void)state;
    hop_output_graph *og = chain_program(8, 4, false);
    hop_tensor *x = t2(HOP_F32, 8, 4);
    check_plan(og, &x, 1, 1);
    hop_tensor_release(x);
    hop_output_graph_free(og);
}

static void
test_one_dynamic_plan_serves_several_sizes(void **state)
{
    (void)state;
    hop_output_graph *og = chain_program(8, 4, true);
    hop_plan *p = lower(og, true);
    int64_t sizes[][2] = {{8, 4}, {3, 5}, {100, 33}, {2, 2}, {1000, 7}};
    for (size_t i = 0; i < LEN(sizes); i++) {
        hop_tensor *x = t2(HOP_F32, sizes[i][0], sizes[i][1]), *got, *want;
        assert_int_equal(hop_plan_run(p, &x, 1, &got, 1), HOP_OK);
        assert_int_equal(hop_graph_eval(og, &x, 1, &want, 1), HOP_OK);
        assert_same(got, want);
        hop_tensor_release(x);
        hop_tensor_release(got);
        hop_tensor_release(want);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* sum(x * 2, [1]) and sum(x * 2): reductions whose operand and output are
 * laid out by the plan (fixed, program.h), so a run on the same data
 * pointers reruns the kernel unchecked.  New values in the same places,
 * the caller's outputs (hop_plan_run_into: strided, then contiguous at the
 * recycled output's place) and new places each give the eager answer. */
static void
test_fixed_ops_rerun_on_new_values_new_places_and_the_callers_outputs(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){6, 5}, false);
    hop_tracer *t = root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(2));
    hop_node *rows =
        OP(t, HOP_OP_sum, N(m), hop_arg_list((hop_arg[]){hop_arg_int(1)}, 1), hop_arg_bool(false));
    hop_node *all = OP(t, HOP_OP_sum, N(m), hop_arg_none(), hop_arg_bool(false));
    finish(og, (hop_node *[]){rows, all}, 2);
    hop_plan *p = lower(og, true);
    char *dump = hop_plan_dump(p);
    assert_non_null(dump);
    assert_non_null(strstr(dump, "t1 = sum (kernel 0, fixed)"));
    assert_non_null(strstr(dump, "t2 = sum_1 (kernel 1, fixed)"));
    hop_free(dump);
    hop_tensor *x1 = t2(HOP_F32, 6, 5);
    for (int k = 0; k < 6; k++) {
        hop_tensor *xk = k % 2 ? t2(HOP_F32, 6, 5) : x1, *got[2], *want[2];
        if (k == 4) {
            /* into a column of the caller's [6, 2] (stride 2), then a 0-d */
            hop_tensor *base = hop_tensor_zeros(HOP_F32, 2, (int64_t[]){6, 2});
            got[0] = hop_tensor_view(base, 1, (int64_t[]){6}, (int64_t[]){2}, 1);
            got[1] = hop_tensor_zeros(HOP_F32, 0, NULL);
            hop_tensor_release(base);
            assert_int_equal(hop_plan_run_into(p, &xk, 1, got, 2), HOP_OK);
        } else {
            assert_int_equal(hop_plan_run(p, &xk, 1, got, 2), HOP_OK);
        }
        assert_int_equal(hop_graph_eval(og, &xk, 1, want, 2), HOP_OK);
        assert_same(got[0], want[0]);
        assert_same(got[1], want[1]);
        release_all(got, 2);
        release_all(want, 2);
        if (xk != x1)
            hop_tensor_release(xk);
        /* new values in x1's place for the next run on it */
        float *d = x1->data;
        for (int i = 0; i < 30; i++)
            d[i] = d[i] * -0.5f + (float)k;
    }
    hop_tensor_release(x1);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* where(x > y, x * y, z - x) + sigmoid(y), with int and bool operands. */
static void
test_broadcasts_scalars_and_dtypes_match_eager(void **state)
{
    (void)state;
    int64_t shapes[][2] = {{6, 5}, {2, 3}, {17, 9}};
    for (size_t k = 0; k < LEN(shapes); k++) {
        hop_output_graph *og = hop_output_graph_new();
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){6, 5}, true);
        hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){5}, true);
        hop_node *z = hop_output_graph_add_input(og, "z", HOP_F32, 0, NULL, false);
        hop_node *i = hop_output_graph_add_input(og, "i", HOP_I32, 2, (int64_t[]){6, 5}, true);
        hop_tracer *t = root(og);
        hop_node *gt = OP(t, HOP_OP_gt, N(x), N(y));
        hop_node *xy = OP(t, HOP_OP_mul, N(x), N(y));
        hop_node *zx = OP(t, HOP_OP_sub, N(z), N(x));
        hop_node *w = OP(t, HOP_OP_where, N(gt), N(xy), N(zx));
        hop_node *sg = OP(t, HOP_OP_sigmoid, N(y));
        hop_node *r = OP(t, HOP_OP_add, N(w), N(sg));
        /* int tensor with a float scalar, a comparison with a float, logic */
        hop_node *ih = OP(t, HOP_OP_mul, N(i), hop_arg_float(0.5));
        hop_node *ic = OP(t, HOP_OP_lt, N(i), hop_arg_float(1.5));
        hop_node *both = OP(t, HOP_OP_logical_and, N(ic), N(gt));
        hop_node *nb = OP(t, HOP_OP_logical_not, N(both));
        hop_node *cv = OP(t, HOP_OP_to, N(nb), hop_arg_dtype(HOP_I64));
        hop_node *ci = OP(t, HOP_OP_add, N(cv), N(i));
        hop_node *dv = OP(t, HOP_OP_div, N(ci), hop_arg_int(3));
        hop_node *mx = OP(t, HOP_OP_maximum, N(dv), N(ih));
        hop_node *pw = OP(t, HOP_OP_pow, N(mx), hop_arg_int(2));
        hop_node *ab = OP(t, HOP_OP_abs, N(pw));
        hop_node *sq = OP(t, HOP_OP_sqrt, N(ab));
        finish(og, (hop_node *[]){r, sq, ci}, 3);
        hop_tensor *in[] = {t2(HOP_F32, shapes[k][0], shapes[k][1]), t1(HOP_F32, shapes[k][1]),
                            rand_tensor(HOP_F32, 0, NULL), t2(HOP_I32, shapes[k][0], shapes[k][1])};
        check_plan(og, in, 4, 3);
        release_all(in, 4);
        hop_output_graph_free(og);
    }
}

/* Non-contiguous inputs: a transposed view and a broadcast (stride 0) one. */
static void
test_strided_inputs_match_eager(void **state)
{
    (void)state;
    hop_output_graph *og = chain_program(6, 8, true);
    hop_tensor *base = t2(HOP_F32, 8, 6);
    hop_tensor *tr = hop_tensor_view(base, 2, (int64_t[]){6, 8}, (int64_t[]){1, 6}, 0);
    hop_tensor *row = t1(HOP_F32, 8);
    hop_tensor *bc = hop_tensor_view(row, 2, (int64_t[]){6, 8}, (int64_t[]){0, 1}, 0);
    check_plan(og, &tr, 1, 1);
    check_plan(og, &bc, 1, 1);
    hop_tensor *ts[] = {base, tr, row, bc};
    release_all(ts, 4);
    hop_output_graph_free(og);
}

/* Pairwise differences x[n, 1, d] - c[1, k, d] (short rows: fused groups
 * compute tiles of the output with the inputs gathered, lowering/fused.c):
 * rows shorter and longer than a tile's share, every element size, mixed
 * dtypes, a transposed input. */
static void
test_short_broadcast_rows_match_eager(void **state)
{
    (void)state;
    const int64_t ds[] = {2, 3, 5, 63, 64, 200};
    const hop_dtype dts[][2] = {{HOP_F32, HOP_F32},
                                {HOP_F64, HOP_F64},
                                {HOP_I32, HOP_F32},
                                {HOP_BOOL, HOP_BOOL},
                                {HOP_I64, HOP_I64}};
    for (size_t i = 0; i < LEN(ds); i++) {
        for (size_t j = 0; j < LEN(dts); j++) {
            int64_t n = 37, k = 9, d = ds[i];
            hop_output_graph *og = hop_output_graph_new();
            hop_node *x =
                hop_output_graph_add_input(og, "x", dts[j][0], 3, (int64_t[]){n, 1, d}, false);
            hop_node *c =
                hop_output_graph_add_input(og, "c", dts[j][1], 3, (int64_t[]){1, k, d}, false);
            hop_tracer *t = root(og);
            hop_node *r;
            if (dts[j][0] == HOP_BOOL) {
                hop_node *a = OP(t, HOP_OP_logical_or, N(x), N(c));
                r = OP(t, HOP_OP_logical_and, N(a), N(x));
            } else {
                hop_node *df = OP(t, HOP_OP_sub, N(x), N(c));
                hop_node *sq = OP(t, HOP_OP_mul, N(df), N(df));
                r = OP(t, HOP_OP_add, N(sq), N(x));
            }
            finish(og, &r, 1);
            hop_tensor *in[] = {rand_tensor(dts[j][0], 3, (int64_t[]){n, 1, d}),
                                rand_tensor(dts[j][1], 3, (int64_t[]){1, k, d})};
            check_plan(og, in, 2, 1);
            /* c as a transposed view: its rows step by k */
            hop_tensor *base = rand_tensor(dts[j][1], 3, (int64_t[]){1, d, k});
            hop_tensor *ct =
                hop_tensor_view(base, 3, (int64_t[]){1, k, d}, (int64_t[]){d * k, 1, k}, 0);
            hop_tensor *in2[] = {in[0], ct};
            check_plan(og, in2, 2, 1);
            hop_tensor *all[] = {in[0], in[1], base, ct};
            release_all(all, 4);
            hop_output_graph_free(og);
        }
    }
}

/* Rows minus their own element of a column, x[n, k, d] - m[n, k, 1], then
 * times m2[n, 1, 1] (softmax's x - max(x, -1)): each output row repeats one
 * element of m, gathered row by row (runtime/fused_exec.c), with tiles
 * ending inside rows, every row length below 64, a strided m and element
 * sizes 1, 4 and 8. */
static void
test_short_rows_minus_a_column_match_eager(void **state)
{
    (void)state;
    const int64_t ds[] = {1, 2, 3, 5, 33, 63};
    const hop_dtype dts[] = {HOP_F32, HOP_F64, HOP_I64, HOP_BOOL};
    for (size_t i = 0; i < LEN(ds); i++) {
        for (size_t j = 0; j < LEN(dts); j++) {
            int64_t n = 7, k = 11, d = ds[i];
            hop_dtype dt = dts[j];
            hop_output_graph *og = hop_output_graph_new();
            hop_node *x = hop_output_graph_add_input(og, "x", dt, 3, (int64_t[]){n, k, d}, false);
            hop_node *m = hop_output_graph_add_input(og, "m", dt, 3, (int64_t[]){n, k, 1}, false);
            hop_node *m2 = hop_output_graph_add_input(og, "m2", dt, 3, (int64_t[]){n, 1, 1}, false);
            hop_tracer *t = root(og);
            hop_node *r;
            if (dt == HOP_BOOL) {
                hop_node *a = OP(t, HOP_OP_logical_or, N(x), N(m));
                r = OP(t, HOP_OP_logical_and, N(a), N(m2));
            } else {
                hop_node *df = OP(t, HOP_OP_sub, N(x), N(m));
                r = OP(t, HOP_OP_mul, N(df), N(m2));
            }
            finish(og, &r, 1);
            hop_tensor *in[] = {rand_tensor(dt, 3, (int64_t[]){n, k, d}),
                                rand_tensor(dt, 3, (int64_t[]){n, k, 1}),
                                rand_tensor(dt, 3, (int64_t[]){n, 1, 1})};
            check_plan(og, in, 3, 1);
            /* m as every other block of k elements of a longer buffer: its
             * rows do not merge, so a run of rows ends with the block */
            hop_tensor *base = rand_tensor(dt, 1, (int64_t[]){2 * n * k});
            hop_tensor *ms =
                hop_tensor_view(base, 3, (int64_t[]){n, k, 1}, (int64_t[]){2 * k, 1, 1}, 0);
            hop_tensor *in2[] = {in[0], ms, in[2]};
            check_plan(og, in2, 3, 1);
            hop_tensor *all[] = {in[0], in[1], in[2], base, ms};
            release_all(all, 5);
            hop_output_graph_free(og);
        }
    }
}

/* x[n, k, d] * w[d] + b[1, k, d] (a batched map body: row vectors broadcast
 * over the rows): w and b repeat every d and k * d elements, so when that
 * period divides a tile they are gathered once per run, not per tile
 * (runtime/fused_exec.c).  Periods that divide a tile and ones that do not,
 * a strided b, element sizes 1, 4 and 8, and 1 and 2 threads (a worker's
 * range starts mid-period; under valgrind 2 only, whose first worker runs
 * what one thread runs). */
static void
test_short_rows_with_row_vectors_gathered_once_match_eager(void **state)
{
    (void)state;
    const int64_t ds[] = {1, 3, 16, 24, 32};
    const int64_t ks[] = {1, 3, 4};
    const hop_dtype dts[] = {HOP_F32, HOP_F64, HOP_I64, HOP_BOOL};
    for (int threads = getenv("HOP_TEST_SCALE") ? 2 : 1; threads <= 2; threads++) {
        hop_runtime_set_threads(threads);
        for (size_t i = 0; i < LEN(ds); i++) {
            for (size_t kk = 0; kk < LEN(ks); kk++) {
                for (size_t j = 0; j < LEN(dts); j++) {
                    int64_t n = 1031, k = ks[kk], d = ds[i];
                    hop_dtype dt = dts[j];
                    hop_output_graph *og = hop_output_graph_new();
                    hop_node *x =
                        hop_output_graph_add_input(og, "x", dt, 3, (int64_t[]){n, k, d}, false);
                    hop_node *w = hop_output_graph_add_input(og, "w", dt, 1, (int64_t[]){d}, false);
                    hop_node *b =
                        hop_output_graph_add_input(og, "b", dt, 3, (int64_t[]){1, k, d}, false);
                    hop_tracer *t = root(og);
                    hop_node *r;
                    if (dt == HOP_BOOL) {
                        hop_node *a = OP(t, HOP_OP_logical_and, N(x), N(w));
                        r = OP(t, HOP_OP_logical_or, N(a), N(b));
                    } else {
                        hop_node *a = OP(t, HOP_OP_mul, N(x), N(w));
                        r = OP(t, HOP_OP_add, N(a), N(b));
                    }
                    finish(og, &r, 1);
                    hop_tensor *in[] = {rand_tensor(dt, 3, (int64_t[]){n, k, d}),
                                        rand_tensor(dt, 1, (int64_t[]){d}),
                                        rand_tensor(dt, 3, (int64_t[]){1, k, d})};
                    check_plan(og, in, 3, 1);
                    /* b transposed: it steps by k along d */
                    hop_tensor *base = rand_tensor(dt, 3, (int64_t[]){1, d, k});
                    hop_tensor *bt =
                        hop_tensor_view(base, 3, (int64_t[]){1, k, d}, (int64_t[]){d * k, 1, k}, 0);
                    hop_tensor *in2[] = {in[0], in[1], bt};
                    check_plan(og, in2, 3, 1);
                    hop_tensor *all[] = {in[0], in[1], in[2], base, bt};
                    release_all(all, 5);
                    hop_output_graph_free(og);
                }
            }
        }
    }
    hop_runtime_set_threads(0);
}

/* Reductions, matmul, views, concatenation and factories in one program. */
static void
test_kernels_and_views_match_eager(void **state)
{
    (void)state;
    int64_t shapes[][2] = {{6, 4}, {3, 7}, {20, 2}};
    for (size_t k = 0; k < LEN(shapes); k++) {
        hop_output_graph *og = hop_output_graph_new();
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){6, 4}, true);
        hop_node *w = hop_output_graph_add_input(og, "w", HOP_F32, 2, (int64_t[]){4, 3}, true);
        hop_tracer *t = root(og);
        hop_node *mm = OP(t, HOP_OP_matmul, N(x), N(w));
        hop_node *tr = OP(t, HOP_OP_transpose, N(mm), hop_arg_int(0), hop_arg_int(1));
        hop_node *th = OP(t, HOP_OP_tanh, N(tr));
        hop_node *sm = OP(t, HOP_OP_sum, N(th), hop_arg_list((hop_arg[]){hop_arg_int(1)}, 1),
                          hop_arg_bool(true));
        hop_node *flat = OP(t, HOP_OP_reshape, N(x), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
        hop_node *cat =
            OP(t, HOP_OP_cat, hop_arg_list((hop_arg[]){N(flat), N(flat)}, 2), hop_arg_int(0));
        hop_node *mean = OP(t, HOP_OP_mean, N(cat), hop_arg_none(), hop_arg_bool(false));
        hop_node *am = OP(t, HOP_OP_argmax, N(x), hop_arg_int(1), hop_arg_bool(false));
        hop_node *un = OP(t, HOP_OP_unsqueeze, N(mean), hop_arg_int(0));
        hop_node *sel = OP(t, HOP_OP_select, N(x), hop_arg_int(1), hop_arg_int(-1));
        hop_node *sl = OP(t, HOP_OP_slice, N(x), hop_arg_int(0), hop_arg_int(1), hop_arg_none(),
                          hop_arg_int(2));
        hop_node *amax = OP(t, HOP_OP_amax, N(sl), hop_arg_int(0), hop_arg_bool(false));
        hop_node *ones =
            OP(t, HOP_OP_ones, hop_arg_list((hop_arg[]){hop_arg_int(2), hop_arg_int(3)}, 2),
               hop_arg_none());
        hop_node *sq = OP(t, HOP_OP_squeeze, N(sm), hop_arg_int(1));
        hop_node *ex = OP(t, HOP_OP_expand, N(un),
                          hop_arg_list((hop_arg[]){hop_arg_int(2), hop_arg_int(-1)}, 2));
        hop_node *ad = OP(t, HOP_OP_add, N(ex), N(sq));
        hop_node *pm = OP(t, HOP_OP_permute, N(ones),
                          hop_arg_list((hop_arg[]){hop_arg_int(1), hop_arg_int(0)}, 2));
        hop_node *cl = OP(t, HOP_OP_clone, N(pm));
        finish(og, (hop_node *[]){sm, cat, am, sel, amax, ad, cl}, 7);
        hop_tensor *in[] = {t2(HOP_F32, shapes[k][0], shapes[k][1]), t2(HOP_F32, shapes[k][1], 3)};
        check_plan(og, in, 2, 7);
        release_all(in, 2);
        hop_output_graph_free(og);
    }
}

/* A reshape of a transposed input cannot be a view: the plan copies. */
static void
test_reshape_of_a_transposed_tensor_copies(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){3, 4}, true);
    hop_tracer *t = root(og);
    hop_node *tr = OP(t, HOP_OP_transpose, N(x), hop_arg_int(0), hop_arg_int(1));
    hop_node *r = OP(t, HOP_OP_reshape, N(tr), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
    hop_node *e = OP(t, HOP_OP_neg, N(r));
    finish(og, (hop_node *[]){e, r}, 2);
    hop_tensor *in = t2(HOP_F32, 5, 3);
    check_plan(og, &in, 1, 2);
    hop_tensor_release(in);
    hop_output_graph_free(og);
}

/* A view the plan makes at run time names its node in the error, as eager
 * does: the text is made only then (issue #30), by the same call. */
static void
test_a_view_that_fails_at_run_time_names_its_node(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){3, 4}, true);
    hop_tracer *t = root(og);
    hop_node *tr = OP(t, HOP_OP_transpose, N(x), hop_arg_int(0), hop_arg_int(1));
    hop_node *v = OP(t, HOP_OP_view, N(tr), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
    assert_non_null(v);
    finish(og, (hop_node *[]){v}, 1);
    hop_plan *p = lower(og, true);
    assert_non_null(p);
    hop_output_graph_free(og); /* the plan keeps what the text needs */
    hop_tensor *in = t2(HOP_F32, 5, 3), *out[1] = {NULL};
    assert_int_equal(hop_plan_run(p, &in, 1, out, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "view = view(transpose, [-1]): its strides cannot "
                                             "be viewed so; use reshape (input f32[3, 5])");
    assert_null(out[0]);
    hop_tensor_release(in);
    hop_plan_free(p);
}

/* An output that is an input, or a view of one, is returned as such. */
static void
test_outputs_that_are_inputs_or_views_share_storage(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){3, 4}, true);
    hop_node *tr = OP(root(og), HOP_OP_transpose, N(x), hop_arg_int(0), hop_arg_int(1));
    finish(og, (hop_node *[]){x, tr}, 2);
    hop_plan *p = lower(og, true);
    hop_tensor *in = t2(HOP_F32, 5, 3), *out[2];
    assert_int_equal(hop_plan_run(p, &in, 1, out, 2), HOP_OK);
    assert_ptr_equal(out[0], in);
    assert_true(hop_tensor_shares_storage(out[1], in));
    assert_int_equal(out[1]->sizes[0], 3);
    assert_int_equal(out[1]->strides[0], 1);
    release_all(out, 2);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------------ HOP bodies */

typedef struct prog {
    hop_node *x, *y, *w, *b;
    int counted;
} prog;

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

static hop_status
pushr(hop_values *out, hop_values *r, hop_status st)
{
    if (st == HOP_OK)
        st = push(out, r->items[0]);
    hop_values_clear(r);
    return st;
}

/* relu(v * w + b) */
static hop_status
block(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    p->counted++;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *a = m ? OP(t, HOP_OP_add, N(m), N(p->b)) : NULL;
    return push(out, a ? OP(t, HOP_OP_relu, N(a)) : NULL);
}

static hop_status
row_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_values r = {0};
    hop_status st = hop_invoke_subgraph(hop_output_graph_of(t), (hop_body){block, p},
                                        (hop_arg[]){N(in[0])}, 1, &r);
    if (st == HOP_OK)
        st = push(out, OP(t, HOP_OP_add, N(r.items[0]), N(p->b)));
    hop_values_clear(&r);
    return st;
}

static hop_status
pos_branch(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)in;
    (void)n;
    hop_values r = {0};
    return pushr(out, &r,
                 hop_map(hop_output_graph_of(t), (hop_body){row_fn, p}, (hop_arg[]){N(p->x)}, 1,
                         NULL, 0, &r));
}

static hop_status
neg_branch(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)in;
    (void)n;
    return push(out, OP(t, HOP_OP_neg, N(p->x)));
}

static hop_status
wrap_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)in;
    (void)n;
    hop_node *s = OP(t, HOP_OP_sum, N(p->x), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    return pushr(out, &r,
                 hop_cond(hop_output_graph_of(t), N(pred), (hop_body){pos_branch, p},
                          (hop_body){neg_branch, p}, NULL, 0, &r));
}

/* The showcase program: wrap(cond(x.sum() > 0, map(row: block(row) + b, x), -x)). */
static hop_output_graph *
nested_program(prog *p)
{
    hop_output_graph *og = hop_output_graph_new();
    p->x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){8, 4}, true);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){4}, true);
    p->b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){4}, true);
    hop_values r = {0};
    assert_int_equal(hop_wrap(og, (hop_body){wrap_body, p}, NULL, 0, &r), HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    return og;
}

static void
test_nested_hops_match_eager_at_several_sizes(void **state)
{
    (void)state;
    prog p = {0};
    hop_output_graph *og = nested_program(&p);
    int64_t sizes[][2] = {{8, 4}, {3, 2}, {50, 16}, {2, 9}};
    for (size_t k = 0; k < LEN(sizes); k++) {
        for (int sign = 0; sign < 2; sign++) {
            hop_tensor *in[] = {t2(HOP_F32, sizes[k][0], sizes[k][1]), t1(HOP_F32, sizes[k][1]),
                                t1(HOP_F32, sizes[k][1])};
            /* both branches: make the sum positive or negative */
            float *xd = in[0]->data;
            for (int64_t i = 0; i < sizes[k][0] * sizes[k][1]; i++)
                xd[i] = sign ? fabsf(xd[i]) : -fabsf(xd[i]);
            check_plan(og, in, 3, 1);
            release_all(in, 3);
        }
    }
    hop_output_graph_free(og);
}

/* A plan keeps nothing of the OutputGraph. */
static void
test_a_plan_outlives_its_output_graph(void **state)
{
    (void)state;
    prog p = {0};
    hop_output_graph *og = nested_program(&p);
    hop_plan *plan = lower(og, true);
    hop_tensor *in[] = {t2(HOP_F32, 5, 3), t1(HOP_F32, 3), t1(HOP_F32, 3)};
    hop_tensor *want, *got;
    assert_int_equal(hop_graph_eval(og, in, 3, &want, 1), HOP_OK);
    hop_output_graph_free(og);
    assert_int_equal(hop_plan_run(plan, in, 3, &got, 1), HOP_OK);
    assert_same(got, want);
    char *dump = hop_plan_dump(plan);
    assert_non_null(dump);
    hop_free(dump);
    hop_tensor_release(got);
    hop_tensor_release(want);
    release_all(in, 3);
    hop_plan_free(plan);
}

/* A fused group's text is made from the plan when the dump asks, after the
 * graph is gone: a member used twice is written twice, a float at %.17g, a
 * cast's dtype, the input's name. */
static void
test_fused_group_text_is_made_from_the_plan_when_asked(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, false);
    hop_tracer *t = root(og);
    hop_node *a = OP(t, HOP_OP_add, N(x), hop_arg_float(0.1));
    hop_node *b = OP(t, HOP_OP_mul, N(a), N(a));
    hop_node *c = OP(t, HOP_OP_to, N(b), hop_arg_dtype(HOP_F64));
    hop_node *d = OP(t, HOP_OP_sub, N(c), hop_arg_int(2));
    finish(og, &d, 1);
    hop_plan *p = lower(og, true);
    hop_output_graph_free(og);
    char *dump = hop_plan_dump(p);
    assert_non_null(dump);
    const char *want = "   2  Fused       1   1   4  "
                       "sub(to(mul(add(x, 0.10000000000000001), add(x, 0.10000000000000001)), "
                       "f64), 2)  t1 = sub\n";
    if (strstr(dump, want) == NULL)
        fail_msg("dump:\n%s", dump);
    hop_free(dump);
    hop_plan_free(p);
}

/* ------------------------------------------------------------------ cond */

typedef struct unary_spec {
    hop_op op;
    hop_node *x;
} unary_spec;

static hop_status
unary_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    unary_spec *u = ud;
    (void)in;
    (void)n;
    return push(out, OP(t, u->op, N(u->x)));
}

static char *
read_all(FILE *f)
{
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    return s;
}

static void
test_cond_runs_only_the_taken_branch(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){6}, true);
    hop_node *s = OP(root(og), HOP_OP_sum, N(x), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0));
    unary_spec ts = {HOP_OP_sin, x}, fs = {HOP_OP_cos, x};
    hop_values r = {0};
    assert_int_equal(hop_cond(og, N(pred), (hop_body){unary_body, &ts}, (hop_body){unary_body, &fs},
                              NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    hop_plan *p = lower(og, true);
    for (int sign = 0; sign < 2; sign++) {
        hop_tensor *in = t1(HOP_F32, 9), *got, *want;
        for (int i = 0; i < 9; i++)
            ((float *)in->data)[i] = sign ? 1.0f + (float)i : -1.0f - (float)i;
        FILE *trace = tmpfile();
        assert_non_null(trace);
        hop_plan_set_trace(p, trace);
        assert_int_equal(hop_plan_run(p, &in, 1, &got, 1), HOP_OK);
        hop_plan_set_trace(p, NULL);
        char *text = read_all(trace);
        fclose(trace);
        /* The trace shows every instruction executed: one branch only. */
        assert_true((strstr(text, "sin(x)") != NULL) == (sign == 1));
        assert_true((strstr(text, "cos(x)") != NULL) == (sign == 0));
        free(text);
        assert_int_equal(hop_graph_eval(og, &in, 1, &want, 1), HOP_OK);
        assert_same(got, want);
        hop_tensor_release(got);
        hop_tensor_release(want);
        hop_tensor_release(in);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
}

static hop_status
return_ud(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)t;
    (void)in;
    (void)n;
    return push(out, ud);
}

/* cond(pred, a, b) with a: f32[s0] and b: f32[s1] gives f32[u0]; later ops
 * on it are sized when the cond has run. */
static void
test_cond_outputs_whose_size_differs_per_branch(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *a = hop_output_graph_add_input(og, "a", HOP_F32, 1, (int64_t[]){3}, true);
    hop_node *b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){5}, true);
    hop_node *s = OP(root(og), HOP_OP_sum, N(a), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0));
    hop_values r = {0};
    assert_int_equal(
        hop_cond(og, N(pred), (hop_body){return_ud, a}, (hop_body){return_ud, b}, NULL, 0, &r),
        HOP_OK);
    hop_node *m = OP(root(og), HOP_OP_mul, N(r.items[0]), hop_arg_int(2));
    hop_node *e = OP(root(og), HOP_OP_exp, N(m));
    hop_node *sm = OP(root(og), HOP_OP_sum, N(e), hop_arg_int(0), hop_arg_bool(false));
    finish(og, (hop_node *[]){e, sm}, 2);
    hop_values_clear(&r);
    int64_t sizes[][2] = {{3, 5}, {7, 2}, {4, 4}};
    for (size_t k = 0; k < LEN(sizes); k++) {
        for (int sign = 0; sign < 2; sign++) {
            hop_tensor *in[] = {t1(HOP_F32, sizes[k][0]), t1(HOP_F32, sizes[k][1])};
            for (int64_t i = 0; i < sizes[k][0]; i++)
                ((float *)in[0]->data)[i] = sign ? 1.0f : -1.0f;
            check_plan(og, in, 2, 2);
            hop_tensor *out[2];
            hop_plan *p = lower(og, true);
            assert_int_equal(hop_plan_run(p, in, 2, out, 2), HOP_OK);
            assert_int_equal(out[0]->sizes[0], sizes[k][sign ? 0 : 1]);
            release_all(out, 2);
            hop_plan_free(p);
            release_all(in, 2);
        }
    }
    hop_output_graph_free(og);
}

/* x[:4] + w: slicing keeps f32[Min(s0, 4)], adding w decides Min(s0, 4) == 4,
 * a guard of this branch only. */
static hop_status
slice_add_w(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    hop_node **xw = ud;
    (void)in;
    (void)n;
    hop_node *sl = OP(t, HOP_OP_slice, N(xw[0]), hop_arg_int(0), hop_arg_none(), hop_arg_int(4),
                      hop_arg_int(1));
    return push(out, sl ? OP(t, HOP_OP_add, N(sl), N(xw[1])) : NULL);
}

static hop_status
double_x(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    hop_node **xw = ud;
    (void)in;
    (void)n;
    return push(out, OP(t, HOP_OP_mul, N(xw[0]), hop_arg_int(2)));
}

/* A branch's guard is checked when that branch runs, by the plan and by the
 * reference interpreter alike, and never rejects inputs taking the other. */
static void
test_cond_branch_guards_are_checked_only_when_the_branch_runs(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *xw[2];
    xw[0] = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){8}, true);
    xw[1] = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){4}, false);
    hop_node *s = OP(root(og), HOP_OP_sum, N(xw[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0));
    hop_values r = {0};
    assert_int_equal(
        hop_cond(og, N(pred), (hop_body){slice_add_w, xw}, (hop_body){double_x, xw}, NULL, 0, &r),
        HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    assert_int_equal(hop_shape_env_nguards(hop_output_graph_env(og)), 0);
    for (int64_t size = 2; size <= 9; size++) {
        for (int sign = 0; sign < 2; sign++) {
            hop_tensor *in[] = {t1(HOP_F32, size), t1(HOP_F32, 4)};
            for (int64_t i = 0; i < size; i++)
                ((float *)in[0]->data)[i] = sign ? 1.0f : -1.0f;
            if (!sign || size >= 4) {
                check_plan(og, in, 2, 1);
            } else {
                /* x[:4] has 2 rows: eager's add would fail too */
                hop_tensor *out[1] = {NULL};
                char want[160];
                snprintf(want, sizeof want,
                         "guard Min(s0, 4) == 4 of cond_true_0 failed with s0 = %d: "
                         "cond_true_0 was traced assuming it",
                         (int)size);
                hop_plan *p = lower(og, true);
                assert_int_equal(hop_plan_run(p, in, 2, out, 1), HOP_GUARD);
                assert_string_equal(hop_error_message(), want);
                hop_plan_free(p);
                assert_int_equal(hop_graph_eval(og, in, 2, out, 1), HOP_GUARD);
                assert_string_equal(hop_error_message(),
                                    "eval: guard Min(s0, 4) == 4 of cond_true_0 failed: "
                                    "cond_true_0 was traced assuming it");
                assert_null(out[0]);
            }
            release_all(in, 2);
        }
    }
    hop_output_graph_free(og);
}

/* ------------------------------------------------------------------- map */

/* row -> relu(row * sum(row * w) + b): a reduction in the body. */
static hop_status
reduce_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *s = m ? OP(t, HOP_OP_sum, N(m), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *q = s ? OP(t, HOP_OP_mul, N(in[0]), N(s)) : NULL;
    hop_node *a = q ? OP(t, HOP_OP_add, N(q), N(p->b)) : NULL;
    return push(out, a ? OP(t, HOP_OP_relu, N(a)) : NULL);
}

static hop_output_graph *
map_program(prog *p, hop_body_fn fn)
{
    hop_output_graph *og = hop_output_graph_new();
    p->x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){10, 16}, true);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){16}, true);
    p->b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){16}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){fn, p}, (hop_arg[]){N(p->x)}, 1, NULL, 0, &r), HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    return og;
}

static void
test_map_allocates_only_its_output_whatever_the_row_count(void **state)
{
    (void)state;
    prog pr = {0};
    hop_output_graph *og = map_program(&pr, reduce_row);
    hop_plan *p = lower_by_rows(og);
    hop_tensor *w = t1(HOP_F32, 16), *b = t1(HOP_F32, 16);
    int64_t rows[] = {10, 10, 1000, 100, 100, 3};
    for (size_t k = 0; k < LEN(rows); k++) {
        hop_tensor *x = t2(HOP_F32, rows[k], 16), *got, *want;
        hop_tensor *in[] = {x, w, b};
        long before = hop_alloc_count();
        assert_int_equal(hop_plan_run(p, in, 3, &got, 1), HOP_OK);
        long allocs = hop_alloc_count() - before;
        /* The first run makes the frame and the block; after that a run
         * allocates its output tensor and nothing else, and not even that
         * when the last one, released, has the same sizes. */
        if (k > 0)
            assert_int_equal(allocs, rows[k] == rows[k - 1] ? 0 : 1);
        assert_int_equal(hop_graph_eval(og, in, 3, &want, 1), HOP_OK);
        assert_same(got, want);
        hop_tensor_release(got);
        hop_tensor_release(want);
        hop_tensor_release(x);
    }
    /* The caller keeps the last output: one allocation, the new output. */
    hop_tensor *x3 = t2(HOP_F32, 3, 16), *keep, *next;
    hop_tensor *in3[] = {x3, w, b};
    assert_int_equal(hop_plan_run(p, in3, 3, &keep, 1), HOP_OK);
    long before3 = hop_alloc_count();
    assert_int_equal(hop_plan_run(p, in3, 3, &next, 1), HOP_OK);
    assert_int_equal(hop_alloc_count() - before3, 1);
    assert_ptr_not_equal(keep, next);
    assert_same(keep, next);
    hop_tensor *kept[] = {keep, next, x3};
    release_all(kept, 3);
    /* With the caller's output tensor: no allocation at all. */
    hop_tensor *x = t2(HOP_F32, 500, 16), *out = hop_tensor_empty(HOP_F32, 2, (int64_t[]){500, 16});
    hop_tensor *in[] = {x, w, b};
    long before = hop_alloc_count();
    assert_int_equal(hop_plan_run_into(p, in, 3, &out, 1), HOP_OK);
    assert_int_equal(hop_alloc_count() - before, 0);
    hop_tensor *want;
    assert_int_equal(hop_graph_eval(og, in, 3, &want, 1), HOP_OK);
    assert_same(out, want);
    hop_tensor *bad = hop_tensor_empty(HOP_F32, 2, (int64_t[]){499, 16});
    assert_int_equal(hop_plan_run_into(p, in, 3, &bad, 1), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "hop_plan_run_into: output 0 (getitem) is f32[499, 16] but the result is "
                        "f32[500, 16]");
    hop_tensor *ts[] = {x, out, want, bad, w, b};
    release_all(ts, 6);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* map over two xs with an extra argument and a closure. */
typedef struct two_spec {
    hop_node *c;
} two_spec;

static hop_status
two_xs(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    two_spec *s = ud;
    assert_int_equal(n, 3);
    hop_node *a = OP(t, HOP_OP_mul, N(in[0]), N(in[1]));
    hop_node *b = a ? OP(t, HOP_OP_sub, N(a), N(in[2])) : NULL;
    hop_node *c = b ? OP(t, HOP_OP_add, N(b), N(s->c)) : NULL;
    hop_status st = push(out, c);
    return st == HOP_OK ? push(out, a) : st;
}

/* ------------------------------------------------ batched map and notes */

/* runtime/parmap.c: how many loops went to the pool so far (internal). */
long hop__parmap_runs(void);

static hop_status
doubled(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_mul, N(in[0]), hop_arg_int(2)));
}

static hop_status
negated(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_neg, N(in[0])));
}

/* row -> cond(row.sum() > 0, row * 2, -row) */
static hop_status
cond_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_node *s = OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    return pushr(out, &r,
                 hop_cond(hop_output_graph_of(t), N(pred), (hop_body){doubled, ud},
                          (hop_body){negated, ud}, (hop_arg[]){N(in[0])}, 1, &r));
}

/* row -> relu(row @ w * sum(row) + b), w: [cols, 512] */
static hop_status
matmul_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_matmul, N(in[0]), N(p->w));
    hop_node *s = m ? OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *q = s ? OP(t, HOP_OP_mul, N(m), N(s)) : NULL;
    hop_node *a = q ? OP(t, HOP_OP_add, N(q), N(p->b)) : NULL;
    return push(out, a ? OP(t, HOP_OP_relu, N(a)) : NULL);
}

/* map(fn, x[rows, cols]) closing over w and b (sizes wsize, bsize). */
static hop_output_graph *
sized_map(prog *p, hop_body_fn fn, int64_t rows, int64_t cols, int wrank, const int64_t *wsize,
          int64_t bsize, bool dynamic)
{
    hop_output_graph *og = hop_output_graph_new();
    p->x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){rows, cols}, dynamic);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, wrank, wsize, dynamic);
    p->b = hop_output_graph_add_input(og, "b", HOP_F32, 1, &bsize, dynamic);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){fn, p}, (hop_arg[]){N(p->x)}, 1, NULL, 0, &r), HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    return og;
}

/* The one note map's lowering leaves: batched, row by row and why, or
 * chosen at run time. */
static void
assert_note(hop_output_graph *og, const hop_lower_options *o, const char *want)
{
    hop_plan *p = hop_lower(og, o);
    assert_non_null(p);
    assert_int_equal(hop_plan_nnotes(p), 1);
    assert_string_equal(hop_plan_note(p, 0), want);
    assert_null(hop_plan_note(p, 1));
    char *dump = hop_plan_dump(p);
    char line[600];
    snprintf(line, sizeof line, "\nnotes:\n  %s\n", want);
    assert_non_null(strstr(dump, line));
    hop_free(dump);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

static void
test_map_notes_in_the_plan_say_batched_or_row_by_row_and_why(void **state)
{
    (void)state;
    prog pr = {0};
    const int64_t w16 = 16;
    assert_note(sized_map(&pr, reduce_row, 10, 16, 1, &w16, 16, false), NULL,
                "map (map_body_0): one batched body over all rows (map_body_0_rows)");
    hop_lower_options rows = {.no_batching = true};
    assert_note(sized_map(&pr, reduce_row, 10, 16, 1, &w16, 16, false), &rows,
                "map (map_body_0): row by row: batching is off (hop_lower_options.no_batching)");
    assert_note(sized_map(&pr, reduce_row, 10, 16, 1, &w16, 16, true), NULL,
                "map (map_body_0): one batched body over all rows (map_body_0_rows) when the "
                "values of all rows fit in 64 MiB (and none has more than 65536 elements per "
                "row), else row by row; decided each run");
    const int64_t wide = 70000;
    assert_note(sized_map(&pr, reduce_row, 4, wide, 1, &wide, wide, false), NULL,
                "map (map_body_0): row by row: a value has 70000 elements per row, more than "
                "65536");
    /* x, w, b, mul, mul, add, relu: 7 x 4096 bytes, sum 4: 28676 bytes a row */
    const int64_t w1k = 1024;
    assert_note(sized_map(&pr, reduce_row, 20000, 1024, 1, &w1k, 1024, false), NULL,
                "map (map_body_0): row by row: the values of all rows take 573520000 bytes, "
                "more than 64 MiB");
    assert_note(sized_map(&pr, cond_row, 10, 16, 1, &w16, 16, false), NULL,
                "map (map_body_0): row by row: the body calls cond (a HOP)");
    assert_int_equal(hop_plan_nnotes(NULL), 0);
    assert_null(hop_plan_note(NULL, 0));
}

/* A dynamic map with a matmul: one GEMM over all rows while they fit (its
 * sums run in another order than the row's vector-matrix product, so the
 * results agree to rounding), the row loop (on the pool) for more rows;
 * the plan switches both ways, and once each side is warm a run allocates
 * nothing. */
static void
test_a_dynamic_batched_map_switches_to_the_row_loop_for_many_rows(void **state)
{
    (void)state;
    prog pr = {0};
    hop_output_graph *og = sized_map(&pr, matmul_row, 10, 16, 2, (int64_t[]){16, 512}, 512, true);
    hop_runtime_set_threads(2);
    hop_plan *p = hop_lower(og, NULL);
    assert_non_null(p);
    hop_tensor *w = t2(HOP_F32, 16, 512), *b = t1(HOP_F32, 512);
    /* w counts in full for every row (32 KiB): 2,500 rows take more than
     * 64 MiB; 5,000 natively, 2,500 under valgrind (HOP_TEST_SCALE) */
    const int64_t many = getenv("HOP_TEST_SCALE") ? 2500 : 5000;
    const int64_t seq[] = {10, many, 37, many, 10};
    for (size_t i = 0; i < LEN(seq); i++) {
        hop_tensor *x = t2(HOP_F32, seq[i], 16), *want = NULL;
        hop_tensor *got = hop_tensor_empty(HOP_F32, 2, (int64_t[]){seq[i], 512});
        hop_tensor *in[] = {x, w, b};
        long runs = hop__parmap_runs(), allocs = hop_alloc_count();
        assert_int_equal(hop_plan_run_into(p, in, 3, &got, 1), HOP_OK);
        /* warm both ways (the block is as large as either needs) */
        if (i > 2)
            assert_int_equal(hop_alloc_count() - allocs, 0);
        assert_int_equal(hop__parmap_runs() - runs, seq[i] == many);
        assert_int_equal(hop_graph_eval(og, in, 3, &want, 1), HOP_OK);
        assert_geometry_equal(got, want);
        /* within rounding of the largest value (sums of 16 products) */
        const float *g = got->data, *e = want->data;
        float most = 0;
        for (int64_t k = 0; k < seq[i] * 512; k++)
            most = fmaxf(most, fabsf(e[k]));
        for (int64_t k = 0; k < seq[i] * 512; k++)
            assert_true(fabsf(g[k] - e[k]) <= 1e-5f * (1.0f + most));
        hop_tensor_release(got);
        hop_tensor_release(want);
        hop_tensor_release(x);
    }
    hop_tensor *ts[] = {w, b};
    release_all(ts, 2);
    hop_plan_free(p);
    hop_runtime_set_threads(0);
    hop_output_graph_free(og);
}

static void
test_map_over_two_inputs_with_extra_args_matches_eager(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){6, 3}, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 2, (int64_t[]){6, 3}, true);
    hop_node *z = hop_output_graph_add_input(og, "z", HOP_F32, 1, (int64_t[]){3}, true);
    hop_node *c = hop_output_graph_add_input(og, "c", HOP_F32, 0, NULL, false);
    two_spec sp = {c};
    hop_values r = {0};
    assert_int_equal(
        hop_map(og, (hop_body){two_xs, &sp}, (hop_arg[]){N(x), N(y)}, 2, (hop_arg[]){N(z)}, 1, &r),
        HOP_OK);
    assert_int_equal(r.n, 2);
    finish(og, r.items, 2);
    hop_values_clear(&r);
    hop_tensor *in[] = {t2(HOP_F32, 9, 4), t2(HOP_F32, 9, 4), t1(HOP_F32, 4),
                        rand_tensor(HOP_F32, 0, NULL)};
    check_plan(og, in, 4, 2);
    release_all(in, 4);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------- invoke_subgraph */

static void
test_invoke_subgraph_is_compiled_once_and_called_three_times(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    prog pr = {0};
    pr.x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){5, 4}, true);
    pr.w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){4}, true);
    pr.b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){4}, true);
    hop_node *v = pr.x;
    for (int i = 0; i < 3; i++) {
        hop_values r = {0};
        assert_int_equal(hop_invoke_subgraph(og, (hop_body){block, &pr}, (hop_arg[]){N(v)}, 1, &r),
                         HOP_OK);
        v = r.items[0];
        hop_values_clear(&r);
    }
    assert_int_equal(pr.counted, 1);
    finish(og, &v, 1);
    hop_plan *p = lower(og, true);
    char *dump = hop_plan_dump(p);
    assert_non_null(dump);
    int routines = 0, calls = 0;
    for (const char *c = dump; (c = strstr(c, "-- subgraph_0")) != NULL; c++)
        routines++;
    for (const char *c = dump; (c = strstr(c, " Call ")) != NULL; c++)
        calls++;
    assert_int_equal(routines, 1);
    assert_int_equal(calls, 3);
    hop_free(dump);
    hop_plan_free(p);
    hop_tensor *in[] = {t2(HOP_F32, 7, 3), t1(HOP_F32, 3), t1(HOP_F32, 3)};
    check_plan(og, in, 3, 1);
    release_all(in, 3);
    hop_output_graph_free(og);
}

/* ------------------------------------------------ item, nonzero, arange */

static void
test_unbacked_sizes_from_item_and_nonzero(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){4, 5}, true);
    hop_tracer *t = root(og);
    hop_node *mask = OP(t, HOP_OP_gt, N(x), hop_arg_int(0));
    hop_node *nz = OP(t, HOP_OP_nonzero, N(mask));
    hop_node *s = OP(t, HOP_OP_sum, N(nz), hop_arg_none(), hop_arg_bool(false));
    hop_node *cnt = OP(t, HOP_OP_to, N(mask), hop_arg_dtype(HOP_I64));
    hop_node *total = OP(t, HOP_OP_sum, N(cnt), hop_arg_none(), hop_arg_bool(false));
    hop_node *n = OP(t, HOP_OP_item, N(total));
    /* arange needs end >= start: what the user knows of the count. */
    assert_int_equal(hop_shape_env_constrain(hop_output_graph_env(og), n->meta->sym, 0, 1 << 20),
                     HOP_OK);
    hop_node *ar = OP(t, HOP_OP_arange, hop_arg_int(0), N(n), hop_arg_int(1), hop_arg_none());
    hop_node *sq = OP(t, HOP_OP_mul, N(ar), N(ar));
    hop_node *plus = OP(t, HOP_OP_add, N(sq), N(n));
    /* n is a SymInt: it comes out as an i64 tensor of rank 0 */
    finish(og, (hop_node *[]){nz, s, plus, n}, 4);
    int64_t sizes[][2] = {{4, 5}, {9, 3}, {2, 2}};
    for (size_t k = 0; k < LEN(sizes); k++) {
        hop_tensor *in = t2(HOP_F32, sizes[k][0], sizes[k][1]);
        check_plan(og, &in, 1, 4);
        hop_tensor_release(in);
    }
    hop_output_graph_free(og);
}

/*
 * A compaction: the rows whose sum is positive (nonzero, take: OpAlloc),
 * a matmul and a tanh on them (late tensors: Alloc), a cumsum of the mask
 * (OpAlloc of static size).  The frame keeps the storage of every late
 * tensor and the INDEX ops' scratch between runs: from the second run on a
 * run allocates nothing, also when the number of rows taken changes
 * within the room kept, and hop_plan_trim gives all of it back.
 */
static hop_output_graph *
compaction_program(hop_node **late, hop_node **tot, hop_node **last)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){300, 16}, false);
    hop_node *w = hop_output_graph_add_input(og, "w", HOP_F32, 2, (int64_t[]){16, 16}, false);
    hop_tracer *t = root(og);
    hop_node *s =
        OP(t, HOP_OP_sum, N(x), hop_arg_list((hop_arg[]){hop_arg_int(1)}, 1), hop_arg_bool(false));
    hop_node *mask = OP(t, HOP_OP_gt, N(s), hop_arg_int(0));
    hop_node *nz = OP(t, HOP_OP_nonzero, N(mask));
    hop_node *idx = OP(t, HOP_OP_reshape, N(nz), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
    hop_node *sel = OP(t, HOP_OP_take, N(x), hop_arg_int(0), N(idx));
    hop_node *mm = OP(t, HOP_OP_matmul, N(sel), N(w));
    hop_node *th = OP(t, HOP_OP_tanh, N(mm));
    hop_node *cnt = OP(t, HOP_OP_to, N(mask), hop_arg_dtype(HOP_I64));
    hop_node *cs = OP(t, HOP_OP_cumsum, N(cnt), hop_arg_int(0));
    *tot = OP(t, HOP_OP_sum, N(th), hop_arg_none(), hop_arg_bool(false));
    *last = OP(t, HOP_OP_sum, N(cs), hop_arg_none(), hop_arg_bool(false));
    *late = th;
    return og;
}

/* x with its first `pos` rows of positive sum, the others negative. */
static hop_tensor *
rows_positive(int64_t pos)
{
    hop_tensor *x = t2(HOP_F32, 300, 16);
    float *v = x->data;
    for (int64_t i = 0; i < 300 * 16; i++)
        v[i] = (i / 16 < pos ? 1.0f : -1.0f) * (0.5f + 0.01f * (float)(i % 7));
    return x;
}

static void
test_steady_runs_keep_late_tensors_and_allocate_nothing(void **state)
{
    (void)state;
    hop_node *th, *tot, *last;
    hop_output_graph *og = compaction_program(&th, &tot, &last);
    /* the results are the two sums: plan outputs of static size */
    finish(og, (hop_node *[]){tot, last}, 2);
    hop_plan *p = lower(og, true);
    hop_tensor *w = t2(HOP_F32, 16, 16);
    int64_t counts[] = {150, 150, 140, 160, 150, 0, 150};
    for (size_t k = 0; k < LEN(counts); k++) {
        hop_tensor *x = rows_positive(counts[k]), *in[] = {x, w}, *got[2], *want[2];
        long before = hop_alloc_count();
        assert_int_equal(hop_plan_run(p, in, 2, got, 2), HOP_OK);
        long allocs = hop_alloc_count() - before;
        /* run 0 makes the frame, the block, the outputs and the late
         * storage (160 rows fit in the room kept for 150 + 150/8) */
        if (k > 0)
            assert_int_equal(allocs, 0);
        assert_int_equal(hop_graph_eval(og, in, 2, want, 2), HOP_OK);
        assert_same(got[0], want[0]);
        assert_same(got[1], want[1]);
        release_all(got, 2);
        release_all(want, 2);
        hop_tensor_release(x);
    }
    /* More rows than the room kept: new storage for the late tensors of
     * that size (nonzero, take, matmul, tanh), once. */
    hop_tensor *x = rows_positive(300), *in[] = {x, w}, *got[2];
    long before = hop_alloc_count();
    assert_int_equal(hop_plan_run(p, in, 2, got, 2), HOP_OK);
    assert_int_equal(hop_alloc_count() - before, 4);
    release_all(got, 2);
    before = hop_alloc_count();
    assert_int_equal(hop_plan_run(p, in, 2, got, 2), HOP_OK);
    assert_int_equal(hop_alloc_count() - before, 0);
    release_all(got, 2);
    /* hop_plan_trim gives the frame back with everything it keeps. */
    hop_plan_trim(p);
    hop_runtime_thread_cleanup();
    long live = hop_alloc_live();
    assert_int_equal(hop_plan_run(p, in, 2, got, 2), HOP_OK);
    release_all(got, 2);
    assert_true(hop_alloc_live() > live);
    hop_plan_trim(p);
    hop_runtime_thread_cleanup();
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor_release(x);
    hop_tensor_release(w);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/*
 * A late tensor returned as a result (and a view of one) goes to the
 * caller: the frame lets go of it, so the next run writes other storage
 * and what the caller holds keeps its values.
 */
static void
test_late_results_never_share_storage_a_later_run_writes(void **state)
{
    (void)state;
    hop_node *th, *tot, *last;
    hop_output_graph *og = compaction_program(&th, &tot, &last);
    hop_node *flat =
        OP(root(og), HOP_OP_reshape, N(th), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
    finish(og, (hop_node *[]){th, flat}, 2);
    hop_plan *p = lower(og, true);
    hop_tensor *w = t2(HOP_F32, 16, 16);
    hop_tensor *x1 = rows_positive(150), *x2 = rows_positive(120), *in1[] = {x1, w},
               *in2[] = {x2, w}, *a[2], *b[2], *want1[2], *want2[2];
    assert_int_equal(hop_graph_eval(og, in1, 2, want1, 2), HOP_OK);
    assert_int_equal(hop_graph_eval(og, in2, 2, want2, 2), HOP_OK);
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(hop_plan_run(p, in1, 2, a, 2), HOP_OK);
        assert_int_equal(hop_plan_run(p, in2, 2, b, 2), HOP_OK);
        assert_ptr_not_equal(a[0]->storage, b[0]->storage);
        assert_ptr_not_equal(a[1]->storage, b[1]->storage);
        assert_same(a[0], want1[0]);
        assert_same(a[1], want1[1]);
        assert_same(b[0], want2[0]);
        assert_same(b[1], want2[1]);
        release_all(a, 2);
        release_all(b, 2);
    }
    release_all(want1, 2);
    release_all(want2, 2);
    hop_tensor *all[] = {x1, x2, w};
    release_all(all, 3);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* --------------------------------------------------------------- guards */

static hop_status
run1(hop_plan *p, hop_tensor *x)
{
    hop_tensor *out = NULL;
    hop_status st = hop_plan_run(p, &x, 1, &out, 1);
    assert_true(st == HOP_OK || out == NULL);
    hop_tensor_release(out);
    return st;
}

static void
test_guard_failures_name_the_input_dim_or_guard_and_the_values(void **state)
{
    (void)state;
    /* static sizes, dtype, rank, count */
    hop_output_graph *og = chain_program(5, 3, false);
    hop_plan *p = lower(og, true);
    hop_tensor *x = t2(HOP_F32, 7, 3);
    assert_int_equal(run1(p, x), HOP_GUARD);
    assert_string_equal(hop_error_message(), "guard failed: x.size(0) == 5 expected, got 7");
    hop_tensor_release(x);
    x = t2(HOP_F64, 5, 3);
    assert_int_equal(run1(p, x), HOP_GUARD);
    assert_string_equal(hop_error_message(),
                        "guard failed: x.dtype == f32 expected, got f64 (input x is f32[5, 3])");
    hop_tensor_release(x);
    x = t1(HOP_F32, 5);
    assert_int_equal(run1(p, x), HOP_GUARD);
    assert_string_equal(hop_error_message(),
                        "guard failed: x.dim() == 2 expected, got 1 (input x is f32[5, 3])");
    hop_tensor *two[] = {x, x}, *out[1];
    assert_int_equal(hop_plan_run(p, two, 2, out, 1), HOP_GUARD);
    assert_string_equal(hop_error_message(), "guard failed: expected 1 input (x), got 2");
    assert_null(out[0]);
    hop_tensor_release(x);
    hop_plan_free(p);
    hop_output_graph_free(og);

    /* duck sizing, ranges of dynamic sizes, ShapeEnv guards */
    og = hop_output_graph_new();
    hop_node *a = hop_output_graph_add_input(og, "a", HOP_F32, 1, (int64_t[]){6}, true);
    hop_node *b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){6}, true);
    hop_shape_env *env = hop_output_graph_env(og);
    const hop_expr *s0 = a->meta->meta.sizes[0];
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_gt(env, s0, hop_sym_const(env, 4))),
                     HOP_OK);
    hop_node *sum = OP(root(og), HOP_OP_add, N(a), N(b));
    finish(og, &sum, 1);
    p = lower(og, true);
    hop_tensor *in[] = {t1(HOP_F32, 7), t1(HOP_F32, 5)};
    assert_int_equal(hop_plan_run(p, in, 2, out, 1), HOP_GUARD);
    assert_string_equal(hop_error_message(),
                        "guard failed: b.size(0) == a.size(0) expected (both are s0), got 5 and 7");
    release_all(in, 2);
    in[0] = t1(HOP_F32, 3);
    in[1] = t1(HOP_F32, 3);
    assert_int_equal(hop_plan_run(p, in, 2, out, 1), HOP_GUARD);
    assert_string_equal(hop_error_message(), "guard s0 > 4 failed with s0 = 3");
    release_all(in, 2);
    in[0] = t1(HOP_F32, 1);
    in[1] = t1(HOP_F32, 1);
    assert_int_equal(hop_plan_run(p, in, 2, out, 1), HOP_GUARD);
    assert_string_equal(hop_error_message(),
                        "guard failed: a.size(0) >= 2 expected (s0 is dynamic; sizes 0 and 1 are "
                        "specialised), got 1");
    release_all(in, 2);
    /* and the plan still works */
    in[0] = t1(HOP_F32, 9);
    in[1] = t1(HOP_F32, 9);
    assert_int_equal(hop_plan_run(p, in, 2, out, 1), HOP_OK);
    hop_tensor_release(out[0]);
    release_all(in, 2);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* HOP_TRACE_PLAN=1 when the plan is made: each instruction to stderr. */
static void
test_trace_plan_env_var_traces_to_stderr(void **state)
{
    (void)state;
    hop_output_graph *og = chain_program(2, 3, false);
    setenv("HOP_TRACE_PLAN", "1", 1);
    hop_plan *p = lower(og, true);
    unsetenv("HOP_TRACE_PLAN");
    hop_tensor *x = t2(HOP_F32, 2, 3), *out;
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    hop_status st = hop_plan_run(p, &x, 1, &out, 1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(st, HOP_OK);
    fseek(tmp, 0, SEEK_END);
    char *text = read_all(tmp);
    fclose(tmp);
    assert_string_equal(text,
                        "plan:    0  Input       0   0   0  x: f32[2, 3]                  t0 = "
                        "input 0\n"
                        "plan:    1  Layout      0   0   0                                block: 0 "
                        "bytes, 0 tensors\n"
                        "plan:    2  Fused       1   1   4  exp(relu(add(mul(x, 2), 1)))  t1 = "
                        "exp\n"
                        "plan:    3  Halt        0   0   0\n");
    free(text);
    hop_tensor_release(out);
    hop_tensor_release(x);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* ----------------------------------------------------------------- dump */

static void
test_dump_of_a_small_program(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){8, 4}, false);
    hop_tracer *t = root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(2));
    hop_node *e = OP(t, HOP_OP_exp, N(m));
    hop_node *s = OP(t, HOP_OP_sum, N(e), hop_arg_int(1), hop_arg_bool(false));
    hop_node *q = OP(t, HOP_OP_sin, N(s));
    finish(og, &q, 1);
    hop_plan *p = lower(og, true);
    char *dump = hop_plan_dump(p);
    assert_non_null(dump);
    const char *want =
        "addr  opcode     p1  p2  p3  p4                            comment\n"
        "----  --------- --- --- ---  ----------------------------  -------\n"
        "   0  Input       0   0   0  x: f32[8, 4]                  t0 = input 0\n"
        "   1  Layout      0   0   0                                block: 192 bytes, 2 tensors\n"
        "   2  Fused       2   1   2  exp(mul(x, 2))                t2 = exp\n"
        "   3  Op          3   0   0  sum(exp, 1, False)            t3 = sum (kernel 0, fixed)\n"
        "   4  Fused       1   1   1  sin(sum)                      t1 = sin\n"
        "   5  Halt        0   0   0\n"
        "\n"
        "slots:\n"
        "  t0   input   f32[8, 4]  x\n"
        "  t1   output  f32[8]  sin\n"
        "  t2   buffer  f32[8, 4]  exp\n"
        "  t3   buffer  f32[8]  sum\n"
        "memory: 2 tensors, block of 192 bytes\n"
        "  t2 exp [2-3]: offset 0, 128 bytes\n"
        "  t3 sum [3-4]: offset 128, 32 bytes\n";
    if (strcmp(dump, want) != 0)
        fprintf(stderr, "--- got:\n%s--- want:\n%s", dump, want);
    assert_string_equal(dump, want);
    hop_free(dump);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* Buffers whose live ranges are disjoint share memory whatever their
 * sizes: exp's 4 KB dies when sum_1 (1 KB) is born and sin's 4 KB comes
 * after, so sin takes exp's bytes and the three sums lie above them: the
 * block is the 7 KB live at once (sin and three sums), not the 10 KB of
 * regions chained in order of first use (sum_1 took exp's free 4 KB region
 * and sent sin to a new one). */
static void
test_the_memory_plan_packs_buffers_into_the_bytes_live_at_once(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){4, 256}, false);
    hop_tracer *t = root(og);
    hop_node *e = OP(t, HOP_OP_exp, N(x));
    hop_node *s0 = OP(t, HOP_OP_sum, N(e), hop_arg_int(0), hop_arg_bool(false));
    hop_node *s1 = OP(t, HOP_OP_sum, N(x), hop_arg_int(0), hop_arg_bool(false));
    hop_node *n = OP(t, HOP_OP_sin, N(x));
    hop_node *s2 = OP(t, HOP_OP_sum, N(n), hop_arg_int(0), hop_arg_bool(false));
    hop_node *a = OP(t, HOP_OP_add, N(s0), N(s1));
    hop_node *q = OP(t, HOP_OP_add, N(a), N(s2));
    finish(og, &q, 1);
    hop_plan *p = lower(og, true);
    char *dump = hop_plan_dump(p);
    assert_non_null(dump);
    const char *want = "memory: 5 tensors, block of 7168 bytes\n"
                       "  t2 exp [2-3]: offset 0, 4096 bytes\n"
                       "  t3 sum [3-7]: offset 4096, 1024 bytes\n"
                       "  t4 sum_1 [4-7]: offset 5120, 1024 bytes\n"
                       "  t5 sin [5-6]: offset 0, 4096 bytes\n"
                       "  t6 sum_2 [6-7]: offset 6144, 1024 bytes\n";
    const char *got = strstr(dump, "memory: ");
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "--- got:\n%s--- want:\n%s", dump, want);
    assert_string_equal(got, want);
    hop_free(dump);
    /* and the run gives eager's bits */
    hop_tensor *in = t2(HOP_F32, 4, 256), *out = NULL, *ref = NULL;
    assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
    assert_int_equal(hop_graph_eval(og, &in, 1, &ref, 1), HOP_OK);
    assert_int_equal(memcmp(out->data, ref->data, 256 * sizeof(float)), 0);
    hop_tensor_release(out);
    hop_tensor_release(ref);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* ---------------------------------------------------- more programs */

static hop_status
relu_or_neg_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    unary_spec *specs = ud; /* [0]: true branch, [1]: false branch */
    hop_node *s = OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    specs[0].x = specs[1].x = in[0];
    hop_values r = {0};
    return pushr(out, &r,
                 hop_cond(hop_output_graph_of(t), N(pred), (hop_body){unary_body, &specs[0]},
                          (hop_body){unary_body, &specs[1]}, NULL, 0, &r));
}

static hop_status
inner_map(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_values r = {0};
    return pushr(out, &r,
                 hop_map(hop_output_graph_of(t), (hop_body){relu_or_neg_row, ud},
                         (hop_arg[]){N(in[0])}, 1, NULL, 0, &r));
}

/* A body returning a value that does not depend on its row, and a SymInt
 * used as a scalar. */
static hop_status
closure_row(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    hop_node *w = ud;
    (void)n;
    hop_node *sz = OP(t, HOP_OP_sym_size, N(in[0]), hop_arg_int(0));
    hop_node *a = sz ? OP(t, HOP_OP_add, N(in[0]), N(sz)) : NULL;
    hop_node *wh =
        a ? OP(t, HOP_OP_where, N(OP(t, HOP_OP_gt, N(a), hop_arg_int(3))), N(a), hop_arg_float(0.0))
          : NULL;
    hop_status st = push(out, wh);
    return st == HOP_OK ? push(out, w) : st;
}

static void
test_maps_in_maps_conds_in_maps_and_closures_match_eager(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F64, 3, (int64_t[]){4, 3, 5}, true);
    hop_node *w = hop_output_graph_add_input(og, "w", HOP_F64, 1, (int64_t[]){7}, true);
    unary_spec specs[2] = {{HOP_OP_relu, NULL}, {HOP_OP_neg, NULL}};
    hop_values r1 = {0}, r2 = {0};
    assert_int_equal(hop_map(og, (hop_body){inner_map, specs}, (hop_arg[]){N(x)}, 1, NULL, 0, &r1),
                     HOP_OK);
    hop_node *flat = OP(root(og), HOP_OP_reshape, N(x),
                        hop_arg_list((hop_arg[]){hop_arg_int(-1), hop_arg_int(5)}, 2));
    assert_int_equal(hop_map(og, (hop_body){closure_row, w}, (hop_arg[]){N(flat)}, 1, NULL, 0, &r2),
                     HOP_OK);
    /* the same value twice, and a SymInt */
    hop_node *sz = OP(root(og), HOP_OP_sym_size, N(x), hop_arg_int(0));
    finish(og, (hop_node *[]){r1.items[0], r2.items[0], r2.items[1], r1.items[0], sz}, 5);
    hop_values_clear(&r1);
    hop_values_clear(&r2);
    int64_t sizes[][3] = {{4, 3, 5}, {2, 6, 5}, {7, 2, 5}};
    for (size_t k = 0; k < LEN(sizes); k++) {
        hop_tensor *in[] = {rand_tensor(HOP_F64, 3, sizes[k]), t1(HOP_F64, 7)};
        check_plan(og, in, 2, 5);
        release_all(in, 2);
    }
    hop_output_graph_free(og);
}

/* Big enough to be split over the pool. */
static void
test_large_fused_groups_on_four_threads_match_eager(void **state)
{
    (void)state;
    hop_runtime_set_threads(4);
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){512, 1024}, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, (int64_t[]){1024}, true);
    hop_tracer *t = root(og);
    hop_node *a = OP(t, HOP_OP_mul, N(x), N(y));
    hop_node *tr = OP(t, HOP_OP_transpose, N(a), hop_arg_int(0), hop_arg_int(1));
    hop_node *e = OP(t, HOP_OP_tanh, N(tr));
    hop_node *s = OP(t, HOP_OP_sigmoid, N(x));
    finish(og, (hop_node *[]){e, s}, 2);
    hop_tensor *in[] = {t2(HOP_F32, 600, 1000), t1(HOP_F32, 1000)};
    check_plan(og, in, 2, 2);
    release_all(in, 2);
    hop_output_graph_free(og);
    hop_runtime_set_threads(0);
}

/* ------------------------------------------------------------- registry */

static const hop_class mywrap_class = {
    .base = &hop_wrap_class,
    .name = "mywrap",
    .params = {{"body", HOP_PARAM_BODY, "mywrap_body"}, {"args", HOP_PARAM_VARARGS}},
};

static int opaque_lowered;
static hop_status opaque_lower(hop_lower_ctx *cx, const hop_node *call);

static const hop_class opaque_class = {
    .name = "opaque",
    .params = {{"body", HOP_PARAM_BODY, "opaque_body"}, {"args", HOP_PARAM_VARARGS}},
    .input_mode = HOP_INPUTS_LIFTED,
    .lower = opaque_lower,
    .user_data = &opaque_lowered,
};

/* A lower slot written with the public toolkit: inline the body. */
static hop_status
opaque_lower(hop_lower_ctx *cx, const hop_node *call)
{
    int *used = call->cls->user_data;
    (*used)++;
    size_t n;
    const hop_graph *body = hop_node_body(call, "body");
    hop_pval *in = hop_lower_passed(cx, call, &n), out[8];
    if (body == NULL || in == NULL)
        return hop_error_code();
    hop_status st = hop_lower_inline(cx, body, in, n, NULL, out, call->nouts);
    return st == HOP_OK ? hop_lower_results(cx, out, call->nouts) : st;
}

static hop_output_graph *
custom_program(const hop_class *cls)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){5}, true);
    unary_spec u = {HOP_OP_tanh, x};
    hop_values r = {0};
    hop_body b = {unary_body, &u};
    hop_arg none = hop_arg_list(NULL, 0);
    assert_int_equal(hop_apply(og, cls, &none, 1, &b, 1, &r), HOP_OK);
    hop_node *y = OP(root(og), HOP_OP_add, N(r.items[0]), N(x));
    finish(og, &y, 1);
    hop_values_clear(&r);
    return og;
}

static void
test_a_hop_based_on_wrap_lowers_like_wrap(void **state)
{
    (void)state;
    assert_int_equal(hop_register_hop(&mywrap_class), HOP_OK);
    hop_output_graph *og = custom_program(&mywrap_class);
    hop_tensor *x = t1(HOP_F32, 8);
    check_plan(og, &x, 1, 1);
    hop_tensor_release(x);
    hop_output_graph_free(og);
    assert_int_equal(hop_unregister_hop("mywrap"), HOP_OK);
}

static void
test_a_user_hops_lower_slot_runs_and_its_eval_is_inherited(void **state)
{
    (void)state;
    assert_int_equal(hop_register_hop(&opaque_class), HOP_OK);
    hop_output_graph *og = custom_program(&opaque_class);
    opaque_lowered = 0;
    hop_plan *p = lower(og, true);
    assert_int_equal(opaque_lowered, 1);
    /* No eval slot: the PrimHOP base's runs the body. */
    hop_tensor *x = t1(HOP_F32, 6), *got, *want;
    assert_int_equal(hop_graph_eval(og, &x, 1, &want, 1), HOP_OK);
    assert_int_equal(hop_plan_run(p, &x, 1, &got, 1), HOP_OK);
    for (int i = 0; i < 6; i++) {
        float v = ((float *)x->data)[i];
        assert_float_equal(((float *)got->data)[i], tanhf(v) + v, 1e-6);
        assert_float_equal(((float *)want->data)[i], tanhf(v) + v, 1e-6);
    }
    hop_tensor_release(got);
    hop_tensor_release(want);
    hop_tensor_release(x);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_unregister_hop("opaque"), HOP_OK);
}

/* A lower slot that notes one text twice and one of its own, then inlines
 * its body as opaque's does. */
static hop_status
noting_lower(hop_lower_ctx *cx, const hop_node *call)
{
    hop_status st = hop_lower_note(cx, "the same note");
    if (st == HOP_OK)
        st = hop_lower_note(cx, "%s's own note", call->name);
    if (st == HOP_OK)
        st = hop_lower_note(cx, "the same %s", "note");
    return st == HOP_OK ? opaque_lower(cx, call) : st;
}

static const hop_class noting_class = {
    .name = "noting",
    .params = {{"body", HOP_PARAM_BODY, "noting_body"}, {"args", HOP_PARAM_VARARGS}},
    .input_mode = HOP_INPUTS_LIFTED,
    .lower = noting_lower,
    .user_data = &opaque_lowered,
};

/* hop_lower_note keeps each text once, in the order first noted, over all
 * the calls of a plan (a set of texts since the forty-sixth session: a scan
 * of every earlier note made N map calls' lowering quadratic). */
static void
test_lower_notes_are_kept_once_each_in_first_noted_order(void **state)
{
    (void)state;
    assert_int_equal(hop_register_hop(&noting_class), HOP_OK);
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){5}, true);
    unary_spec u = {HOP_OP_tanh, x};
    hop_body b = {unary_body, &u};
    hop_arg none = hop_arg_list(NULL, 0);
    hop_values r1 = {0}, r2 = {0};
    assert_int_equal(hop_apply(og, &noting_class, &none, 1, &b, 1, &r1), HOP_OK);
    assert_int_equal(hop_apply(og, &noting_class, &none, 1, &b, 1, &r2), HOP_OK);
    hop_node *y = OP(root(og), HOP_OP_add, N(r1.items[0]), N(r2.items[0]));
    finish(og, &y, 1);
    hop_plan *p = lower(og, true);
    assert_int_equal(hop_plan_nnotes(p), 3);
    assert_string_equal(hop_plan_note(p, 0), "the same note");
    const char *own1 = hop_plan_note(p, 1), *own2 = hop_plan_note(p, 2);
    const char *tail = "'s own note";
    assert_true(strlen(own1) > strlen(tail) && strlen(own2) > strlen(tail));
    assert_string_equal(own1 + strlen(own1) - strlen(tail), tail);
    assert_string_equal(own2 + strlen(own2) - strlen(tail), tail);
    assert_string_not_equal(own1, own2);
    hop_values_clear(&r1);
    hop_values_clear(&r2);
    hop_plan_free(p);
    hop_output_graph_free(og);
    assert_int_equal(hop_unregister_hop("noting"), HOP_OK);
}

/* ---------------------------------------------------------- concurrency */

typedef struct job {
    hop_plan *plan;
    hop_tensor *in[4][3];
    hop_tensor *want[4];
    int ok;
} job;

static void *
worker(void *arg)
{
    job *j = arg;
    for (int rep = 0; rep < 30; rep++) {
        int k = rep % 4;
        hop_tensor *got = NULL;
        if (hop_plan_run(j->plan, j->in[k], 3, &got, 1) != HOP_OK)
            break;
        bool same =
            got->rank == j->want[k]->rank &&
            memcmp(got->data, j->want[k]->data, (size_t)hop_tensor_numel(got) * sizeof(float)) == 0;
        hop_tensor_release(got);
        if (!same)
            break;
        j->ok++;
    }
    hop_runtime_thread_cleanup();
    return NULL;
}

static void
test_one_plan_runs_concurrently_on_four_threads(void **state)
{
    (void)state;
    prog pr = {0};
    hop_output_graph *og = nested_program(&pr);
    hop_plan *p = lower(og, true);
    job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t].plan = p;
        jobs[t].ok = 0;
        for (int k = 0; k < 4; k++) {
            int64_t rows = 3 + 7 * k + t, cols = 2 + k;
            jobs[t].in[k][0] = t2(HOP_F32, rows, cols);
            jobs[t].in[k][1] = t1(HOP_F32, cols);
            jobs[t].in[k][2] = t1(HOP_F32, cols);
            assert_int_equal(hop_graph_eval(og, jobs[t].in[k], 3, &jobs[t].want[k], 1), HOP_OK);
        }
    }
    for (int t = 0; t < 4; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(jobs[t].ok, 30);
        for (int k = 0; k < 4; k++) {
            release_all(jobs[t].in[k], 3);
            hop_tensor_release(jobs[t].want[k]);
        }
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* ------------------------------------------------- allocation failures */

static void
sweep(hop_output_graph *og, hop_tensor **in, size_t nin, size_t nout)
{
    hop_tensor *out[4] = {0};
    /* Warm up what lives on (the HOP registry, the thread's eager state). */
    hop_plan *p = lower(og, true);
    assert_int_equal(hop_plan_run(p, in, nin, out, nout), HOP_OK);
    release_all(out, nout);
    hop_plan_free(p);
    hop_runtime_thread_cleanup();
    long base = hop_alloc_live();
    long k;
    for (k = 1; k < 100000; k++) {
        hop_alloc_fail_at(k);
        p = hop_lower(og, NULL);
        hop_status st = p ? HOP_OK : hop_error_code();
        for (int rep = 0; rep < 2 && st == HOP_OK; rep++) {
            st = hop_plan_run(p, in, nin, out, nout);
            if (st == HOP_OK)
                release_all(out, nout);
            else
                for (size_t j = 0; j < nout; j++)
                    assert_null(out[j]);
        }
        hop_alloc_fail_at(0);
        if (st != HOP_OK)
            assert_int_equal(st, HOP_NOMEM);
        hop_plan_free(p);
        hop_runtime_thread_cleanup();
        assert_int_equal(hop_alloc_live(), base);
        if (st == HOP_OK)
            break;
    }
    assert_true(k > 10);
    /* and the next attempt succeeds */
    p = lower(og, true);
    assert_int_equal(hop_plan_run(p, in, nin, out, nout), HOP_OK);
    release_all(out, nout);
    hop_plan_free(p);
}

static void
test_allocation_failures_in_lower_and_run_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    prog pr = {0};
    hop_output_graph *og = nested_program(&pr);
    hop_tensor *in[] = {t2(HOP_F32, 6, 3), t1(HOP_F32, 3), t1(HOP_F32, 3)};
    for (int i = 0; i < 18; i++)
        ((float *)in[0]->data)[i] = fabsf(((float *)in[0]->data)[i]);
    sweep(og, in, 3, 1);
    release_all(in, 3);
    hop_output_graph_free(og);

    /* unbacked sizes: late tensors, nonzero, item */
    og = hop_output_graph_new();
    hop_node *a = hop_output_graph_add_input(og, "a", HOP_F32, 1, (int64_t[]){3}, true);
    hop_node *b = hop_output_graph_add_input(og, "b", HOP_F32, 1, (int64_t[]){5}, true);
    hop_node *s = OP(root(og), HOP_OP_sum, N(a), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0));
    hop_values r = {0};
    assert_int_equal(
        hop_cond(og, N(pred), (hop_body){return_ud, a}, (hop_body){return_ud, b}, NULL, 0, &r),
        HOP_OK);
    hop_node *m = OP(root(og), HOP_OP_mul, N(r.items[0]), hop_arg_int(2));
    hop_node *nz = OP(root(og), HOP_OP_nonzero, N(m));
    finish(og, (hop_node *[]){m, nz}, 2);
    hop_values_clear(&r);
    hop_tensor *in2[] = {t1(HOP_F32, 4), t1(HOP_F32, 6)};
    sweep(og, in2, 2, 2);
    release_all(in2, 2);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------- size overflow */

/* The plan's status and message equal hop_graph_eval's (a refusal). */
static void
assert_refused_as_eager(hop_output_graph *og, hop_plan *p, hop_tensor **in, size_t nin,
                        hop_status want, const char *msg)
{
    hop_tensor *out = NULL;
    assert_int_equal(hop_graph_eval(og, in, nin, &out, 1), want);
    assert_string_equal(hop_error_message(), msg);
    assert_null(out);
    assert_int_equal(hop_plan_run(p, in, nin, &out, 1), want);
    assert_string_equal(hop_error_message(), msg);
    assert_null(out);
}

/* A stride-0 view of one element as rows x cols: huge, and no memory. */
static hop_tensor *
broadcast_one(hop_tensor *one, int64_t rows, int64_t cols)
{
    hop_tensor *v = hop_tensor_view(one, 2, (int64_t[]){rows, cols}, (int64_t[]){0, 0}, 0);
    assert_non_null(v);
    return v;
}

/*
 * Sizes bound when the plan runs whose product is too large for a tensor:
 * eager refuses them (HOP_NOMEM naming the op) and so does the plan, in a
 * view (expand), in the block (mul, matmul) and in a late tensor, where the
 * view used to wrap around and sum to 0.  The plan runs normally after.
 */
static void
test_sizes_too_large_are_refused_as_eager_refuses_them(void **state)
{
    (void)state;
    /* sum(expand(x, [-1, 2**61])) */
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        hop_output_graph *og = hop_output_graph_new();
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){3, 1}, dynamic);
        hop_node *e =
            OP(root(og), HOP_OP_expand, N(x),
               hop_arg_list((hop_arg[]){hop_arg_int(-1), hop_arg_int(INT64_C(1) << 61)}, 2));
        hop_node *s = OP(root(og), HOP_OP_sum, N(e), hop_arg_none(), hop_arg_bool(false));
        finish(og, &s, 1);
        for (int fuse = 0; fuse < 2; fuse++) {
            hop_plan *p = lower(og, fuse);
            hop_tensor *in = t2(HOP_F32, 3, 1);
            for (int rep = 0; rep < 2; rep++)
                assert_refused_as_eager(og, p, &in, 1, HOP_NOMEM,
                                        "expand: f32[3, 2305843009213693952] is too large");
            hop_tensor_release(in);
            hop_plan_free(p);
        }
        hop_output_graph_free(og);
    }

    /* sum(x * y) and sum(x @ y) over x [s0, 1], y [1, s1] */
    hop_op ops[] = {HOP_OP_mul, HOP_OP_matmul};
    const char *msgs[] = {"mul: f32[1099511627776, 1099511627776] is too large",
                          "matmul: f32[1099511627776, 1099511627776] is too large"};
    for (size_t k = 0; k < LEN(ops); k++) {
        hop_output_graph *og = hop_output_graph_new();
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){4, 1}, true);
        hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 2, (int64_t[]){1, 5}, true);
        hop_node *m = OP(root(og), ops[k], N(x), N(y));
        hop_node *s = OP(root(og), HOP_OP_sum, N(m), hop_arg_none(), hop_arg_bool(false));
        finish(og, &s, 1);
        hop_plan *p = lower(og, true);
        hop_tensor *one = t2(HOP_F32, 1, 1);
        int64_t big = INT64_C(1) << 40;
        hop_tensor *huge[] = {broadcast_one(one, big, 1), broadcast_one(one, 1, big)};
        assert_refused_as_eager(og, p, huge, 2, HOP_NOMEM, msgs[k]);
        /* nothing of the refused run stays: the next one is right */
        hop_tensor *small[] = {t2(HOP_F32, 4, 1), t2(HOP_F32, 1, 5)}, *got, *want;
        assert_int_equal(hop_plan_run(p, small, 2, &got, 1), HOP_OK);
        assert_int_equal(hop_graph_eval(og, small, 2, &want, 1), HOP_OK);
        assert_same(got, want);
        assert_refused_as_eager(og, p, huge, 2, HOP_NOMEM, msgs[k]);
        release_all(small, 2);
        release_all(huge, 2);
        hop_tensor_release(one);
        hop_tensor_release(got);
        hop_tensor_release(want);
        hop_plan_free(p);
        hop_output_graph_free(og);
    }

    /* constant sizes too large for int64 lower (they may sit in a branch
     * never taken), and the run refuses them */
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){1, 4}, false);
    hop_node *z = OP(root(og), HOP_OP_zeros,
                     hop_arg_list((hop_arg[]){hop_arg_int(INT64_C(1) << 62), hop_arg_int(4)}, 2),
                     hop_arg_none());
    hop_node *a = OP(root(og), HOP_OP_add, N(z), N(x));
    finish(og, &a, 1);
    hop_plan *p = lower(og, true);
    hop_tensor *in = t2(HOP_F32, 1, 4);
    assert_refused_as_eager(og, p, &in, 1, HOP_NOMEM,
                            "zeros: f32[4611686018427387904, 4] is too large");
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

/* ------------------------------------------------ reduction epilogues */

/* red(x * 3 - 1) to one element, and that group's output times 2 (so the
 * reduction reads an output used elsewhere too).  The fused plan runs red as
 * the group's epilogue (program.h: hop__fgroup.epi).  NULL where the tracer
 * refuses red, as eager does. */
static hop_output_graph *
epilogue_program(hop_dtype dt, hop_op red, int64_t n, bool dynamic)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", dt, 1, &n, dynamic);
    hop_tracer *t = root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(3));
    hop_node *g = m ? OP(t, HOP_OP_sub, N(m), hop_arg_int(1)) : NULL;
    hop_node *r = g ? OP(t, red, N(g), hop_arg_none(), hop_arg_bool(false)) : NULL;
    if (r == NULL) { /* (refused as eager refuses it: the tracer infers shapes) */
        hop_output_graph_free(og);
        return NULL;
    }
    hop_node *d = OP(t, HOP_OP_mul, N(g), hop_arg_int(2));
    finish(og, (hop_node *[]){r, d}, 2);
    return og;
}

/* Plan p on x gives the reference interpreter's outputs bit for bit (nans
 * included); twice, so the second run takes the epilogue's path for a
 * kernel on the same data. */
static void
assert_runs_as_eval(hop_output_graph *og, hop_plan *p, hop_tensor *x)
{
    hop_tensor *want[2] = {0}, *got[2] = {0};
    assert_int_equal(hop_graph_eval(og, &x, 1, want, 2), HOP_OK);
    for (int rep = 0; rep < 2; rep++) {
        assert_int_equal(hop_plan_run(p, &x, 1, got, 2), HOP_OK);
        assert_identical(got[0], want[0]);
        assert_identical(got[1], want[1]);
        release_all(got, 2);
    }
    release_all(want, 2);
}

/* x of n random elements of dt; a float one with a nan at n / 2 if nan. */
static hop_tensor *
epilogue_input(hop_dtype dt, int64_t n, bool nan)
{
    hop_tensor *x = t1(dt, n);
    if (nan && n > 0 && dt == HOP_F32)
        ((float *)x->data)[n / 2] = NAN;
    else if (nan && n > 0 && dt == HOP_F64)
        ((double *)x->data)[n / 2] = NAN;
    return x;
}

/*
 * A reduction to one element of a fused group's output (sum, prod, mean,
 * amax, amin; f32, f64, i32, i64; sizes 0, 1, 15, 16, 17, 1000, 100003;
 * with and without a nan) runs as the group's epilogue, with no Op step of
 * its own, and gives the bits the unfused plan (its own Op step) and the
 * reference interpreter give; where eager fails (amax of nothing), so does
 * tracing.  Static sizes (the kernel on the same data: the
 * reduction straight) and one dynamic plan across the sizes from 2.
 */
static void
test_reduction_epilogues_match_the_unfused_step_and_eager_bit_for_bit(void **state)
{
    (void)state;
    hop_dtype dts[] = {HOP_F32, HOP_F64, HOP_I32, HOP_I64};
    hop_op reds[] = {HOP_OP_sum, HOP_OP_prod, HOP_OP_mean, HOP_OP_amax, HOP_OP_amin};
    int64_t sizes[] = {0, 1, 15, 16, 17, 1000, 100003};
    for (size_t di = 0; di < LEN(dts); di++) {
        bool is_float = dts[di] == HOP_F32 || dts[di] == HOP_F64;
        for (size_t ri = 0; ri < LEN(reds); ri++) {
            if (reds[ri] == HOP_OP_mean && !is_float)
                continue; /* "mean needs a float input" (hop.numpy casts first) */
            hop_output_graph *dyn = epilogue_program(dts[di], reds[ri], 4, true);
            hop_plan *pd = lower(dyn, true);
            for (size_t si = 0; si < LEN(sizes); si++) {
                hop_output_graph *og = epilogue_program(dts[di], reds[ri], sizes[si], false);
                if (og == NULL) { /* amax and amin of nothing: NumPy's error */
                    assert_int_equal(sizes[si], 0);
                    assert_non_null(strstr(hop_error_message(), "zero-size array to reduction"));
                    continue;
                }
                hop_plan *fused = lower(og, true), *unfused = lower(og, false);
                char *dump = hop_plan_dump(fused);
                char want[64];
                snprintf(want, sizeof want, "= %s (kernel 0", hop_op_get(reds[ri])->name);
                if (strstr(dump, "  Op ") != NULL || strstr(dump, want) == NULL)
                    fail_msg("not an epilogue:\n%s", dump);
                hop_free(dump);
                for (int nan = 0; nan <= is_float; nan++) {
                    hop_tensor *x = epilogue_input(dts[di], sizes[si], nan);
                    assert_runs_as_eval(og, fused, x);
                    assert_runs_as_eval(og, unfused, x);
                    if (sizes[si] >= 2) /* (the dynamic plan specialises 0 and 1) */
                        assert_runs_as_eval(dyn, pd, x);
                    hop_tensor_release(x);
                }
                hop_plan_free(fused);
                hop_plan_free(unfused);
                hop_output_graph_free(og);
            }
            hop_plan_free(pd);
            hop_output_graph_free(dyn);
        }
    }
}

/* ------------------------------------------------------------ interrupts */

/* sum(sin(row * w)): one number per row of x [s0, 256]. */
static hop_status
sin_row_sum(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *e = m ? OP(t, HOP_OP_sin, N(m)) : NULL;
    return push(out, e ? OP(t, HOP_OP_sum, N(e), hop_arg_none(), hop_arg_bool(false)) : NULL);
}

static double
now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct interrupter {
    hop_plan *plan;
    double at; /* when it interrupted */
} interrupter;

static void *
interrupt_later(void *arg)
{
    interrupter *it = arg;
    nanosleep(&(struct timespec){0, 50000000}, NULL);
    it->at = now_s();
    hop_plan_interrupt(it->plan);
    return NULL;
}

typedef struct progress_count {
    int calls, stop_at;
    pthread_t caller;
    bool elsewhere; /* called on another thread */
} progress_count;

static int
stop_at_call(void *ud)
{
    progress_count *c = ud;
    c->elsewhere |= !pthread_equal(pthread_self(), c->caller);
    return ++c->calls >= c->stop_at;
}

/*
 * A long map (millions of rows, on one thread and on the pool; row by row,
 * as a map whose rows' values exceed the batched body's budget runs) stops with
 * HOP_INTERRUPTED well within 100 ms of hop_plan_interrupt from another
 * thread, or when its progress handler asks (called on the caller's thread
 * only); it leaks nothing, an interrupt before a run does not stop it, and
 * the plan runs correctly after.
 */
static void
test_hop_plan_interrupt_stops_a_long_run_soon_and_the_plan_runs_again(void **state)
{
    (void)state;
    prog pr = {0};
    hop_output_graph *og = hop_output_graph_new();
    pr.x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){10, 256}, true);
    pr.w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){256}, true);
    hop_values r = {0};
    assert_int_equal(
        hop_map(og, (hop_body){sin_row_sum, &pr}, (hop_arg[]){N(pr.x)}, 1, NULL, 0, &r), HOP_OK);
    finish(og, r.items, 1);
    hop_values_clear(&r);
    hop_tensor *w = t1(HOP_F32, 256), *row = t2(HOP_F32, 1, 256), *small = t2(HOP_F32, 40, 256);
    /* 8M rows of one row's data: tens of seconds if nothing stops it */
    hop_tensor *big =
        hop_tensor_view(row, 2, (int64_t[]){INT64_C(1) << 23, 256}, (int64_t[]){0, 1}, 0);
    assert_non_null(big);
    hop_tensor *want;
    hop_tensor *sin[] = {small, w}, *bin[] = {big, w};
    assert_int_equal(hop_graph_eval(og, sin, 2, &want, 1), HOP_OK);
    int threads[] = {1, 2};
    for (size_t ti = 0; ti < LEN(threads); ti++) {
        hop_runtime_set_threads(threads[ti]);
        hop_plan *p = lower_by_rows(og);
        hop_tensor *got = NULL;
        assert_int_equal(hop_plan_run(p, sin, 2, &got, 1), HOP_OK);
        assert_same(got, want);
        hop_tensor_release(got);
        long live = hop_alloc_live();
        for (int rep = 0; rep < 2; rep++) {
            interrupter it = {p, 0};
            pthread_t th;
            assert_int_equal(pthread_create(&th, NULL, interrupt_later, &it), 0);
            got = (hop_tensor *)1;
            assert_int_equal(hop_plan_run(p, bin, 2, &got, 1), HOP_INTERRUPTED);
            double latency = now_s() - it.at;
            pthread_join(th, NULL);
            assert_string_equal(hop_error_message(), "plan interrupted");
            assert_null(got);
            /* 0.1 s natively; under valgrind (HOP_TEST_SCALE), which runs
             * the same checks tens of times slower, ten times that */
            double bound = getenv("HOP_TEST_SCALE") ? 1.0 : 0.1;
            if (latency >= bound)
                fail_msg("interrupted %.3f s after hop_plan_interrupt (bound %.1f s)", latency,
                         bound);
            /* an interrupt before a run does not stop it */
            hop_plan_interrupt(p);
            assert_int_equal(hop_plan_run(p, sin, 2, &got, 1), HOP_OK);
            assert_same(got, want);
            hop_tensor_release(got);
        }
        /* the progress handler, on this thread only */
        progress_count c = {0, 3, pthread_self(), false};
        hop_run_options opts = {stop_at_call, &c};
        assert_int_equal(hop_plan_run_opts(p, bin, 2, &got, 1, &opts), HOP_INTERRUPTED);
        assert_int_equal(c.calls, 3);
        assert_false(c.elsewhere);
        assert_int_equal(hop_plan_run_opts(p, sin, 2, &got, 1, NULL), HOP_OK);
        assert_same(got, want);
        hop_tensor_release(got);
        assert_int_equal(hop_alloc_live(), live);
        hop_plan_free(p);
    }
    hop_runtime_set_threads(0);
    hop_tensor *ts[] = {w, row, small, big, want};
    release_all(ts, LEN(ts));
    hop_output_graph_free(og);
}

int
main(void)
{
    /* HOP_TEST_FILTER=pattern runs only the matching tests (profiling). */
    if (getenv("HOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("HOP_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_chain_matches_eager_with_static_shapes),
        cmocka_unit_test(test_fixed_ops_rerun_on_new_values_new_places_and_the_callers_outputs),
        cmocka_unit_test(test_one_dynamic_plan_serves_several_sizes),
        cmocka_unit_test(test_broadcasts_scalars_and_dtypes_match_eager),
        cmocka_unit_test(test_short_broadcast_rows_match_eager),
        cmocka_unit_test(test_short_rows_minus_a_column_match_eager),
        cmocka_unit_test(test_short_rows_with_row_vectors_gathered_once_match_eager),
        cmocka_unit_test(test_strided_inputs_match_eager),
        cmocka_unit_test(test_kernels_and_views_match_eager),
        cmocka_unit_test(test_reshape_of_a_transposed_tensor_copies),
        cmocka_unit_test(test_a_view_that_fails_at_run_time_names_its_node),
        cmocka_unit_test(test_outputs_that_are_inputs_or_views_share_storage),
        cmocka_unit_test(test_nested_hops_match_eager_at_several_sizes),
        cmocka_unit_test(test_a_plan_outlives_its_output_graph),
        cmocka_unit_test(test_cond_runs_only_the_taken_branch),
        cmocka_unit_test(test_cond_outputs_whose_size_differs_per_branch),
        cmocka_unit_test(test_cond_branch_guards_are_checked_only_when_the_branch_runs),
        cmocka_unit_test(test_map_allocates_only_its_output_whatever_the_row_count),
        cmocka_unit_test(test_map_notes_in_the_plan_say_batched_or_row_by_row_and_why),
        cmocka_unit_test(test_a_dynamic_batched_map_switches_to_the_row_loop_for_many_rows),
        cmocka_unit_test(test_map_over_two_inputs_with_extra_args_matches_eager),
        cmocka_unit_test(test_invoke_subgraph_is_compiled_once_and_called_three_times),
        cmocka_unit_test(test_unbacked_sizes_from_item_and_nonzero),
        cmocka_unit_test(test_steady_runs_keep_late_tensors_and_allocate_nothing),
        cmocka_unit_test(test_late_results_never_share_storage_a_later_run_writes),
        cmocka_unit_test(test_guard_failures_name_the_input_dim_or_guard_and_the_values),
        cmocka_unit_test(test_dump_of_a_small_program),
        cmocka_unit_test(test_the_memory_plan_packs_buffers_into_the_bytes_live_at_once),
        cmocka_unit_test(test_fused_group_text_is_made_from_the_plan_when_asked),
        cmocka_unit_test(test_trace_plan_env_var_traces_to_stderr),
        cmocka_unit_test(test_maps_in_maps_conds_in_maps_and_closures_match_eager),
        cmocka_unit_test(test_large_fused_groups_on_four_threads_match_eager),
        cmocka_unit_test(test_a_hop_based_on_wrap_lowers_like_wrap),
        cmocka_unit_test(test_a_user_hops_lower_slot_runs_and_its_eval_is_inherited),
        cmocka_unit_test(test_lower_notes_are_kept_once_each_in_first_noted_order),
        cmocka_unit_test(test_one_plan_runs_concurrently_on_four_threads),
        cmocka_unit_test(test_allocation_failures_in_lower_and_run_are_nomem_and_leak_nothing),
        cmocka_unit_test(test_sizes_too_large_are_refused_as_eager_refuses_them),
        cmocka_unit_test(test_reduction_epilogues_match_the_unfused_step_and_eager_bit_for_bit),
        cmocka_unit_test(test_hop_plan_interrupt_stops_a_long_run_soon_and_the_plan_runs_again),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
