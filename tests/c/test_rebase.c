/*
 * tests/c/test_rebase.c - prepared kernels rebased onto operands that moved
 * (hop_kernel_rebase) and what that buys a plan: a map whose body runs
 * kernels (a reduction, a matmul, a cond choosing between them) allocates
 * nothing per run once warm, on 1, 2 and 4 threads and at 10, 1,000 and
 * 100,000 rows (2,500 under valgrind: HOP_TEST_SCALE), and gives
 * exactly what hop_graph_eval gives.
 *
 * Kernel level: every kernel family rebased onto new data computes what a
 * fresh prepare computes, without allocating; anything but a data pointer
 * that differs (sizes, strides, dtype, a scalar), an overlap that prepare
 * refuses, an unprepared kernel or too many operands is an error with an
 * exact message, and the kernel stays as it was.  Plan level: the counts
 * above, and an allocation-failure sweep over lower + run on 2 threads.
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* runtime/parmap.c: how many loops went to the pool so far */
long hop__parmap_runs(void);

/* ------------------------------------------------------ kernel level */

/* An op and two sets of operands of one geometry: prepared on set 0,
 * rebased onto set 1, it must compute what hop_eager_out computes on set
 * 1, and allocate nothing while rebasing. */
typedef struct kcase {
    const char *name;
    hop_op op;
    hop_rt_arg args[2][4];
    size_t nargs;
    hop_rt_arg items[2][3]; /* cat/stack items */
    hop_tensor *owned[8];
    size_t nowned;
    int out_rank;
    int64_t out_sizes[HOP_MAX_RANK];
    hop_dtype out_dtype;
} kcase;

static hop_tensor *
keep(kcase *c, hop_tensor *t)
{
    assert_non_null(t);
    c->owned[c->nowned++] = t;
    return t;
}

static void
check_case(kcase *c)
{
    hop_tensor *out0 = hop_tensor_zeros(c->out_dtype, c->out_rank, c->out_sizes);
    hop_tensor *out1 = hop_tensor_zeros(c->out_dtype, c->out_rank, c->out_sizes);
    hop_tensor *want = hop_tensor_zeros(c->out_dtype, c->out_rank, c->out_sizes);
    hop_kernel k;
    assert_int_equal(hop_kernel_prepare(&k, c->op, c->args[0], c->nargs, out0), HOP_OK);
    long before = hop_alloc_count();
    assert_int_equal(hop_kernel_rebase(&k, c->args[1], c->nargs, out1), HOP_OK);
    assert_int_equal(hop_alloc_count() - before, 0);
    hop_kernel_run(&k);
    assert_int_equal(hop_eager_out(c->op, c->args[1], c->nargs, want), HOP_OK);
    assert_identical(out1, want);
    /* and back, in pieces */
    assert_int_equal(hop_kernel_rebase(&k, c->args[0], c->nargs, out0), HOP_OK);
    for (int i = 0; i < 3; i++)
        hop_kernel_compute(&k, i, 3);
    assert_int_equal(hop_eager_out(c->op, c->args[0], c->nargs, want), HOP_OK);
    assert_identical(out0, want);
    hop_tensor *ts[] = {out0, out1, want};
    release_all(ts, 3);
    release_all(c->owned, c->nowned);
}

static void
test_every_kernel_family_rebased_computes_what_a_fresh_prepare_computes(void **state)
{
    (void)state;
    int64_t s34[] = {3, 4}, s4[] = {4}, s43[] = {4, 3}, s33[] = {3, 3};

    /* elementwise, broadcast, with a scalar: add(x, y) then mul by 2.5 */
    kcase ew = {.name = "add", .op = HOP_OP_add, .nargs = 2, .out_rank = 2, .out_dtype = HOP_F32};
    memcpy(ew.out_sizes, s34, sizeof s34);
    for (int i = 0; i < 2; i++) {
        ew.args[i][0] = hop_rt_tensor(keep(&ew, rand_tensor(HOP_F32, 2, s34)));
        ew.args[i][1] = hop_rt_tensor(keep(&ew, rand_tensor(HOP_F32, 1, s4)));
    }
    check_case(&ew);
    kcase sc = {.name = "mul", .op = HOP_OP_mul, .nargs = 2, .out_rank = 1, .out_dtype = HOP_F32};
    sc.out_sizes[0] = 4;
    for (int i = 0; i < 2; i++) {
        sc.args[i][0] = hop_rt_tensor(keep(&sc, rand_tensor(HOP_F32, 1, s4)));
        sc.args[i][1] = hop_rt_float(2.5);
    }
    check_case(&sc);

    /* where(cond, x, y): three tensor operands */
    kcase wh = {
        .name = "where", .op = HOP_OP_where, .nargs = 3, .out_rank = 1, .out_dtype = HOP_F32};
    wh.out_sizes[0] = 4;
    for (int i = 0; i < 2; i++) {
        hop_tensor *cnd = keep(&wh, hop_tensor_zeros(HOP_BOOL, 1, s4));
        ((uint8_t *)cnd->data)[i] = 1;
        ((uint8_t *)cnd->data)[2 + i] = 1;
        wh.args[i][0] = hop_rt_tensor(cnd);
        wh.args[i][1] = hop_rt_tensor(keep(&wh, rand_tensor(HOP_F32, 1, s4)));
        wh.args[i][2] = hop_rt_tensor(keep(&wh, rand_tensor(HOP_F32, 1, s4)));
    }
    check_case(&wh);

    /* a reduction over dim 1 of a transposed (strided) tensor, keepdim */
    kcase red = {.name = "sum", .op = HOP_OP_sum, .nargs = 3, .out_rank = 2, .out_dtype = HOP_F32};
    red.out_sizes[0] = 3;
    red.out_sizes[1] = 1;
    hop_rt_arg dim1[] = {hop_rt_int(1)};
    for (int i = 0; i < 2; i++) {
        hop_tensor *base = keep(&red, rand_tensor(HOP_F32, 2, s43));
        hop_tensor *tr = keep(&red, hop_tensor_view(base, 2, s34, (int64_t[]){1, 3}, 0));
        red.args[i][0] = hop_rt_tensor(tr);
        red.args[i][1] = hop_rt_list(dim1, 1);
        red.args[i][2] = hop_rt_bool(true);
    }
    check_case(&red);

    /* matmul of f32[3, 4] @ f32[4, 3] */
    kcase mm = {
        .name = "matmul", .op = HOP_OP_matmul, .nargs = 2, .out_rank = 2, .out_dtype = HOP_F32};
    memcpy(mm.out_sizes, s33, sizeof s33);
    for (int i = 0; i < 2; i++) {
        mm.args[i][0] = hop_rt_tensor(keep(&mm, rand_tensor(HOP_F32, 2, s34)));
        mm.args[i][1] = hop_rt_tensor(keep(&mm, rand_tensor(HOP_F32, 2, s43)));
    }
    check_case(&mm);

    /* a view op run as a copy: transpose(x, 0, 1) into f32[4, 3] */
    kcase vw = {.name = "transpose",
                .op = HOP_OP_transpose,
                .nargs = 3,
                .out_rank = 2,
                .out_dtype = HOP_F32};
    memcpy(vw.out_sizes, s43, sizeof s43);
    for (int i = 0; i < 2; i++) {
        vw.args[i][0] = hop_rt_tensor(keep(&vw, rand_tensor(HOP_F32, 2, s34)));
        vw.args[i][1] = hop_rt_int(0);
        vw.args[i][2] = hop_rt_int(1);
    }
    check_case(&vw);

    /* reshape of a transposed tensor, which needs a copy */
    kcase rs = {
        .name = "reshape", .op = HOP_OP_reshape, .nargs = 2, .out_rank = 1, .out_dtype = HOP_F32};
    rs.out_sizes[0] = 12;
    hop_rt_arg twelve[] = {hop_rt_int(12)};
    for (int i = 0; i < 2; i++) {
        hop_tensor *base = keep(&rs, rand_tensor(HOP_F32, 2, s43));
        rs.args[i][0] =
            hop_rt_tensor(keep(&rs, hop_tensor_view(base, 2, s34, (int64_t[]){1, 3}, 0)));
        rs.args[i][1] = hop_rt_list(twelve, 1);
    }
    check_case(&rs);

    /* stack of three rows: the items array moves too */
    kcase st = {
        .name = "stack", .op = HOP_OP_stack, .nargs = 2, .out_rank = 2, .out_dtype = HOP_F32};
    st.out_sizes[0] = 3;
    st.out_sizes[1] = 4;
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 3; j++)
            st.items[i][j] = hop_rt_tensor(keep(&st, rand_tensor(HOP_F32, 1, s4)));
        st.args[i][0] = hop_rt_list(st.items[i], 3);
        st.args[i][1] = hop_rt_int(0);
    }
    check_case(&st);

    /* factories write only out: full and arange */
    kcase fu = {.name = "full", .op = HOP_OP_full, .nargs = 3, .out_rank = 2, .out_dtype = HOP_F32};
    memcpy(fu.out_sizes, s34, sizeof s34);
    hop_rt_arg sizes[] = {hop_rt_int(3), hop_rt_int(4)};
    for (int i = 0; i < 2; i++) {
        fu.args[i][0] = hop_rt_list(sizes, 2);
        fu.args[i][1] = hop_rt_float(1.5);
        fu.args[i][2] = hop_rt_dtype(HOP_F32);
    }
    check_case(&fu);
    kcase ar = {
        .name = "arange", .op = HOP_OP_arange, .nargs = 4, .out_rank = 1, .out_dtype = HOP_I64};
    ar.out_sizes[0] = 5;
    for (int i = 0; i < 2; i++) {
        ar.args[i][0] = hop_rt_int(2);
        ar.args[i][1] = hop_rt_int(12);
        ar.args[i][2] = hop_rt_int(2);
        ar.args[i][3] = hop_rt_dtype(HOP_I64);
    }
    check_case(&ar);
}

#define DIFFERS                                                                                    \
    ": hop_kernel_rebase: the operands differ from those the kernel was prepared with in more "    \
    "than their data; prepare it again"

static void
test_rebase_refuses_anything_but_moved_data_and_leaves_the_kernel_as_it_was(void **state)
{
    (void)state;
    int64_t s4[] = {4}, s5[] = {5}, s22[] = {2, 2};
    hop_tensor *x = rand_tensor(HOP_F32, 1, s4), *y = rand_tensor(HOP_F32, 1, s4),
               *out = hop_tensor_zeros(HOP_F32, 1, s4);
    hop_tensor *x5 = rand_tensor(HOP_F32, 1, s5), *out5 = hop_tensor_zeros(HOP_F32, 1, s5);
    hop_tensor *xi = hop_tensor_zeros(HOP_I32, 1, s4), *want = hop_tensor_zeros(HOP_F32, 1, s4);
    hop_kernel k;
    hop_rt_arg args[] = {hop_rt_tensor(x), hop_rt_float(2.0)};
    assert_int_equal(hop_kernel_prepare(&k, HOP_OP_add, args, 2, out), HOP_OK);

    /* other sizes, another dtype, another scalar, another kind */
    hop_rt_arg bad_sizes[] = {hop_rt_tensor(x5), hop_rt_float(2.0)};
    assert_int_equal(hop_kernel_rebase(&k, bad_sizes, 2, out5), HOP_INVALID);
    assert_string_equal(hop_error_message(), "add" DIFFERS);
    hop_rt_arg bad_dtype[] = {hop_rt_tensor(xi), hop_rt_float(2.0)};
    assert_int_equal(hop_kernel_rebase(&k, bad_dtype, 2, out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "add" DIFFERS);
    hop_rt_arg bad_value[] = {hop_rt_tensor(y), hop_rt_float(3.0)};
    assert_int_equal(hop_kernel_rebase(&k, bad_value, 2, out), HOP_INVALID);
    hop_rt_arg bad_kind[] = {hop_rt_tensor(y), hop_rt_int(2)};
    assert_int_equal(hop_kernel_rebase(&k, bad_kind, 2, out), HOP_INVALID);
    assert_int_equal(hop_kernel_rebase(&k, args, 1, out), HOP_INVALID);
    /* other strides, same sizes: every other element of x5's storage */
    hop_tensor *strided = hop_tensor_view(x5, 1, (int64_t[]){2}, (int64_t[]){2}, 0);
    hop_tensor *out2 = hop_tensor_zeros(HOP_F32, 1, (int64_t[]){2});
    hop_tensor *dense = rand_tensor(HOP_F32, 1, (int64_t[]){2});
    hop_kernel k2;
    hop_rt_arg dense_args[] = {hop_rt_tensor(dense), hop_rt_float(1.0)};
    assert_int_equal(hop_kernel_prepare(&k2, HOP_OP_add, dense_args, 2, out2), HOP_OK);
    hop_rt_arg strided_args[] = {hop_rt_tensor(strided), hop_rt_float(1.0)};
    assert_int_equal(hop_kernel_rebase(&k2, strided_args, 2, out2), HOP_INVALID);
    assert_string_equal(hop_error_message(), "add" DIFFERS);

    /* after every refusal k still computes x + 2 into out */
    hop_kernel_run(&k);
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, want), HOP_OK);
    assert_identical(out, want);

    /* in place is allowed for an elementwise op: out = x */
    hop_rt_arg inplace[] = {hop_rt_tensor(y), hop_rt_float(2.0)};
    assert_int_equal(hop_eager_out(HOP_OP_add, inplace, 2, want), HOP_OK);
    assert_int_equal(hop_kernel_rebase(&k, inplace, 2, y), HOP_OK);
    hop_kernel_run(&k);
    assert_identical(y, want);

    /* a matmul may not write into its input: prepare's message */
    hop_tensor *a = rand_tensor(HOP_F32, 2, s22), *b = rand_tensor(HOP_F32, 2, s22),
               *c = hop_tensor_zeros(HOP_F32, 2, s22);
    hop_tensor *c_before = hop_tensor_contiguous(c);
    hop_kernel km;
    hop_rt_arg mm[] = {hop_rt_tensor(a), hop_rt_tensor(b)};
    assert_int_equal(hop_kernel_prepare(&km, HOP_OP_matmul, mm, 2, c), HOP_OK);
    hop_tensor *a2 = rand_tensor(HOP_F32, 2, s22);
    hop_rt_arg mm2[] = {hop_rt_tensor(a2), hop_rt_tensor(b)};
    assert_int_equal(hop_kernel_rebase(&km, mm2, 2, a2), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "matmul: out f32[2, 2] overlaps argument 0 f32[2, 2]; only an elementwise "
                        "op may write into an input of the same geometry");
    assert_int_equal(hop_kernel_prepare(&km, HOP_OP_matmul, mm2, 2, a2), HOP_INVALID);
    hop_kernel_run(&km); /* still a @ b into c */
    assert_int_equal(hop_eager_out(HOP_OP_matmul, mm, 2, c_before), HOP_OK);
    assert_identical(c, c_before);

    /* misuse */
    assert_int_equal(hop_kernel_rebase(NULL, args, 2, out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_kernel_rebase: k is NULL");
    assert_int_equal(hop_kernel_rebase(&k, args, 2, NULL), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_kernel_rebase: out is NULL");
    hop_kernel blank;
    memset(&blank, 0, sizeof blank);
    assert_int_equal(hop_kernel_rebase(&blank, args, 2, out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_kernel_rebase: k was not prepared");

    /* a cat of 40 tensors is more than a kernel remembers */
    hop_rt_arg items[40];
    hop_tensor *parts[40];
    for (int i = 0; i < 40; i++) {
        parts[i] = rand_tensor(HOP_F32, 2, (int64_t[]){1, 2});
        items[i] = hop_rt_tensor(parts[i]);
    }
    hop_tensor *cat = hop_tensor_zeros(HOP_F32, 2, (int64_t[]){40, 2});
    hop_rt_arg cat_args[] = {hop_rt_list(items, 40), hop_rt_int(0)};
    hop_kernel kc;
    assert_int_equal(hop_kernel_prepare(&kc, HOP_OP_cat, cat_args, 2, cat), HOP_OK);
    assert_int_equal(hop_kernel_rebase(&kc, cat_args, 2, cat), HOP_UNSUPPORTED);
    assert_string_equal(hop_error_message(), "cat: hop_kernel_rebase: the kernel has too many "
                                             "operands to be rebased; prepare it again");
    release_all(parts, 40);
    hop_tensor *ts[] = {x,    y,     out, x5, out5, xi, want, strided,
                        out2, dense, a,   b,  c,    a2, cat,  c_before};
    release_all(ts, LEN(ts));
}

/* -------------------------------------------------------- plan level */

typedef struct prog {
    hop_node *w, *v, *b;
} prog;

/* relu(matmul(row, w) * sum(row) + b): a reduction and a matmul */
static hop_status
kernels(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_matmul, N(in[0]), N(p->w));
    hop_node *s = m ? OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *q = s ? OP(t, HOP_OP_mul, N(m), N(s)) : NULL;
    hop_node *a = q ? OP(t, HOP_OP_add, N(q), N(p->b)) : NULL;
    hop_node *r = a ? OP(t, HOP_OP_relu, N(a)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

static hop_status
branch_matmul(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_matmul, N(in[0]), N(p->w));
    return m ? hop_values_push(out, m) : hop_error_code();
}

/* amax(row) * v: another reduction, in the other branch */
static hop_status
branch_amax(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_amax, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *r = m ? OP(t, HOP_OP_mul, N(m), N(p->v)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

/* cond(sum(row) > 0, matmul(row, w), amax(row) * v) + b: rows take either
 * branch, so which thread first meets which kernel is up to the pool */
static hop_status
with_cond(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    prog *p = ud;
    (void)n;
    hop_node *s = OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    hop_status st = hop_cond(hop_output_graph_of(t), N(pred), (hop_body){branch_matmul, p},
                             (hop_body){branch_amax, p}, (hop_arg[]){N(in[0])}, 1, &r);
    if (st == HOP_OK) {
        hop_node *a = OP(t, HOP_OP_add, N(r.items[0]), N(p->b));
        st = a ? hop_values_push(out, a) : hop_error_code();
    }
    hop_values_clear(&r);
    return st;
}

#define COLS 16

/* Set by HOP_TEST_SCALE (valgrind, scripts/dev.sh): fewer rows and thread
 * counts where the same lines run (check_steady_runs). */
static bool under_valgrind;

/* map(body, x) over x: f32[rows, 16] (rows dynamic), w: f32[16, 16],
 * v and b: f32[16]. */
static hop_output_graph *
program(hop_body_fn body, prog *p)
{
    int64_t cols = COLS;
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){10, COLS}, true);
    p->w = hop_output_graph_add_input(og, "w", HOP_F32, 2, (int64_t[]){COLS, COLS}, false);
    p->v = hop_output_graph_add_input(og, "v", HOP_F32, 1, &cols, false);
    p->b = hop_output_graph_add_input(og, "b", HOP_F32, 1, &cols, false);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){body, p}, (hop_arg[]){N(x)}, 1, NULL, 0, &r), HOP_OK);
    assert_non_null(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){N(r.items[0])}, 1));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
    hop_values_clear(&r);
    return og;
}

static void
inputs(int64_t rows, hop_tensor **in)
{
    int64_t cols = COLS;
    in[0] = rand_tensor(HOP_F32, 2, (int64_t[]){rows, COLS});
    in[1] = rand_tensor(HOP_F32, 2, (int64_t[]){COLS, COLS});
    in[2] = rand_tensor(HOP_F32, 1, &cols);
    in[3] = rand_tensor(HOP_F32, 1, &cols);
}

/* Maps row by row: the rebased kernels of the row loop are under test (a
 * batched body runs each kernel once per run). */
static hop_plan *
lower(hop_output_graph *og)
{
    hop_lower_options o = {.no_batching = true};
    hop_plan *p = hop_lower(og, &o);
    if (p == NULL)
        fprintf(stderr, "hop_lower: %s\n", hop_error_message());
    assert_non_null(p);
    return p;
}

/*
 * For 10, 1,000 and 100,000 rows and 1, 2 and 4 threads: once warm, a
 * run into the caller's tensor allocates nothing and a run that returns a
 * new output (the last one still held) allocates exactly that, run after
 * run; the rows are split over the pool where they are worth it; and the
 * values are hop_graph_eval's.
 */
static void
check_steady_runs(hop_body_fn body)
{
    prog pr;
    hop_output_graph *og = program(body, &pr);
    /* 100,000 rows; under valgrind (HOP_TEST_SCALE) 2,500: still split
     * over the pool (the count of pooled runs below checks it), the same
     * lines at a fortieth of the rows (10,000 took 64-76 s of memcheck a
     * test, the most of any binary's tests). */
    const int64_t big = under_valgrind ? 2500 : 100000;
    const int64_t rows[] = {10, 1000, big};
    static const int threads[] = {1, 2, 4};
    for (size_t r = 0; r < LEN(rows); r++) {
        hop_tensor *in[4], *want;
        inputs(rows[r], in);
        assert_int_equal(hop_graph_eval(og, in, 4, &want, 1), HOP_OK);
        for (size_t t = 0; t < LEN(threads); t++) {
            /* under valgrind one pool size, the larger: a pool of 2 runs
             * the same code with fewer workers */
            if (under_valgrind && threads[t] == 2)
                continue;
            hop_runtime_set_threads(threads[t]);
            hop_plan *p = lower(og);
            hop_tensor *out = hop_tensor_zeros(HOP_F32, 2, (int64_t[]){rows[r], COLS});
            assert_int_equal(hop_plan_run_into(p, in, 4, &out, 1), HOP_OK); /* warm */
            assert_identical(out, want);
            long pooled = hop__parmap_runs();
            for (int rep = 0; rep < 3; rep++) {
                memset(out->data, 0, (size_t)rows[r] * COLS * sizeof(float));
                long before = hop_alloc_count();
                assert_int_equal(hop_plan_run_into(p, in, 4, &out, 1), HOP_OK);
                assert_int_equal(hop_alloc_count() - before, 0);
                assert_identical(out, want);
            }
            if (threads[t] > 1 && rows[r] == big)
                assert_int_equal(hop__parmap_runs() - pooled, 3);
            if (threads[t] == 1 || rows[r] == 10)
                assert_int_equal(hop__parmap_runs() - pooled, 0);
            /* the caller keeps every output: each run allocates its own */
            hop_tensor *kept[3];
            assert_int_equal(hop_plan_run(p, in, 4, &kept[0], 1), HOP_OK);
            for (int rep = 1; rep < 3; rep++) {
                long before = hop_alloc_count();
                assert_int_equal(hop_plan_run(p, in, 4, &kept[rep], 1), HOP_OK);
                assert_int_equal(hop_alloc_count() - before, 1);
                assert_identical(kept[rep], want);
            }
            release_all(kept, 3);
            hop_tensor_release(out);
            hop_plan_free(p);
        }
        hop_tensor_release(want);
        release_all(in, 4);
    }
    hop_runtime_set_threads(0);
    hop_output_graph_free(og);
}

static void
test_map_with_a_reduction_and_a_matmul_allocates_nothing_per_run_on_any_thread_count(void **state)
{
    (void)state;
    check_steady_runs(kernels);
}

static void
test_map_with_a_cond_between_kernels_allocates_nothing_per_run_on_any_thread_count(void **state)
{
    (void)state;
    check_steady_runs(with_cond);
}

/* New data of the same sizes: the kernels are rebased, never prepared, so
 * the allocation count does not move; new sizes prepare again and agree
 * with eager. */
static void
test_a_plan_rebases_onto_new_inputs_and_prepares_again_for_new_sizes(void **state)
{
    (void)state;
    prog pr;
    hop_output_graph *og = program(kernels, &pr);
    hop_runtime_set_threads(2);
    hop_plan *p = lower(og);
    static const int64_t rows[] = {5000, 5000, 5000, 37, 37, 5000};
    for (size_t i = 0; i < LEN(rows); i++) {
        hop_tensor *in[4], *want;
        inputs(rows[i], in);
        hop_tensor *out = hop_tensor_zeros(HOP_F32, 2, (int64_t[]){rows[i], COLS});
        long before = hop_alloc_count();
        assert_int_equal(hop_plan_run_into(p, in, 4, &out, 1), HOP_OK);
        if (i > 0)
            assert_int_equal(hop_alloc_count() - before, 0);
        assert_int_equal(hop_graph_eval(og, in, 4, &want, 1), HOP_OK);
        assert_identical(out, want);
        hop_tensor_release(want);
        hop_tensor_release(out);
        release_all(in, 4);
    }
    hop_plan_free(p);
    hop_runtime_set_threads(0);
    hop_output_graph_free(og);
}

/* Every allocation of lower + two runs on 2 threads fails in turn:
 * HOP_NOMEM each time, nothing leaked, and the plan works after. */
static void
test_allocation_failures_in_lower_and_run_on_two_threads_leak_nothing(void **state)
{
    (void)state;
    prog pr;
    hop_output_graph *og = program(with_cond, &pr);
    hop_tensor *in[4], *want;
    inputs(3000, in);
    assert_int_equal(hop_graph_eval(og, in, 4, &want, 1), HOP_OK);
    hop_runtime_set_threads(2);
    hop_plan *warm = lower(og);
    hop_tensor *got;
    assert_int_equal(hop_plan_run(warm, in, 4, &got, 1), HOP_OK);
    hop_tensor_release(got);
    hop_plan_free(warm);
    /* the workers' eager state goes when they exit (shutdown joins them) */
    hop_runtime_shutdown();
    long base = hop_alloc_live();
    long k;
    for (k = 1; k < 100000; k++) {
        hop_alloc_fail_at(k);
        hop_plan *p = hop_lower(og, NULL);
        hop_status st = p ? HOP_OK : hop_error_code();
        for (int run = 0; run < 2 && st == HOP_OK; run++) {
            got = NULL;
            st = hop_plan_run(p, in, 4, &got, 1);
            if (st == HOP_OK)
                assert_identical(got, want);
            else
                assert_null(got);
            hop_tensor_release(got);
        }
        bool done = st == HOP_OK;
        hop_alloc_fail_at(0);
        if (st != HOP_OK)
            assert_int_equal(st, HOP_NOMEM);
        hop_plan_free(p);
        hop_runtime_shutdown();
        assert_int_equal(hop_alloc_live(), base);
        if (done)
            break;
    }
    assert_true(k > 10);
    hop_runtime_set_threads(0);
    hop_tensor_release(want);
    release_all(in, 4);
    hop_output_graph_free(og);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kernel_family_rebased_computes_what_a_fresh_prepare_computes),
        cmocka_unit_test(
            test_rebase_refuses_anything_but_moved_data_and_leaves_the_kernel_as_it_was),
        cmocka_unit_test(
            test_map_with_a_reduction_and_a_matmul_allocates_nothing_per_run_on_any_thread_count),
        cmocka_unit_test(
            test_map_with_a_cond_between_kernels_allocates_nothing_per_run_on_any_thread_count),
        cmocka_unit_test(test_a_plan_rebases_onto_new_inputs_and_prepares_again_for_new_sizes),
        cmocka_unit_test(test_allocation_failures_in_lower_and_run_on_two_threads_leak_nothing),
    };
    under_valgrind = getenv("HOP_TEST_SCALE") != NULL;
    /* HOP_TEST_FILTER=pattern runs only the matching tests (profiling). */
    if (getenv("HOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("HOP_TEST_FILTER"));
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
