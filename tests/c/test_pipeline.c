/*
 * tests/c/test_pipeline.c - allocation failures over the whole pipeline.
 *
 * One program exercises every layer: wrap around a map whose body runs a cond
 * whose true branch calls invoke_subgraph twice (one shared subgraph), with
 * bodies closing over an outer tensor (w), the map's row (r) and a symbolic
 * size (n = x.size(0)):
 *
 *     def f(x, w):                            # x: f32[s0, s1], w: f32[s1]
 *         n = x.size(0)
 *         def body(xx):
 *             def row(r):
 *                 def pos(r): return scale(scale(r, w), w)   # invoke_subgraph
 *                 def neg(r): return (r - w) * n
 *                 return cond(r.sum() > 0, pos, neg, (r,))
 *             return map(row, xx) + 1.0
 *         return wrap(body, x)
 *
 * It is traced, verified, printed, DCE'd, lowered (fused and not), dumped,
 * run as a plan and by the reference interpreter.  Two sweeps fail the 1st,
 * 2nd, ... allocation until everything succeeds:
 *   - the whole pipeline, from a fresh OutputGraph to the plan's results:
 *     every failure is HOP_NOMEM with a message and frees everything;
 *   - one HOP call on a prepared OutputGraph: after the failure the tracer
 *     stack, every active graph, the ShapeEnv's symbols and guards are as
 *     before (checked around the call at every nesting level), and calling
 *     again succeeds and gives exact values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N hop_arg_node
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

#define ROWS 6
#define COLS 4

/* ------------------------------------------------------------ state checks */

/* The state a failed HOP call must leave as it was: the stack depth, the code
 * of every graph on the stack, the ShapeEnv's symbols and guards. */
typedef struct snap {
    size_t depth, nsymbols, nguards;
    char *code;
} snap;

static hop_status
snap_take(hop_output_graph *og, snap *s)
{
    hop_shape_env *env = hop_output_graph_env(og);
    s->depth = hop_output_graph_depth(og);
    s->nsymbols = hop_shape_env_nsymbols(env);
    s->nguards = hop_shape_env_nguards(env);
    s->code = NULL;
    size_t len = 0;
    for (hop_tracer *t = hop_output_graph_current(og); t; t = hop_tracer_parent(t)) {
        char *c = hop_graph_code(hop_tracer_graph(t));
        char *all = c ? hop_realloc(s->code, len + strlen(c) + 1) : NULL;
        if (all == NULL) {
            hop_free(c);
            hop_free(s->code);
            s->code = NULL;
            return HOP_NOMEM;
        }
        memcpy(all + len, c, strlen(c) + 1);
        len += strlen(c);
        s->code = all;
        hop_free(c);
    }
    return HOP_OK;
}

static void
snap_free(snap *s)
{
    hop_free(s->code);
    s->code = NULL;
}

/* After a failed call: the error is a real out-of-memory with a message and
 * the state is what `before` recorded. */
static void
assert_unchanged(hop_output_graph *og, hop_status st, const snap *before)
{
    assert_int_equal(st, HOP_NOMEM);
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_non_null(strstr(hop_error_message(), "out of memory"));
    snap after;
    assert_int_equal(snap_take(og, &after), HOP_OK); /* the one injected failure is spent */
    assert_int_equal(after.depth, before->depth);
    assert_int_equal(after.nsymbols, before->nsymbols);
    assert_int_equal(after.nguards, before->nguards);
    if (strcmp(after.code, before->code) != 0)
        fprintf(stderr, "--- before:\n%s--- after:\n%s", before->code, after.code);
    assert_string_equal(after.code, before->code);
    snap_free(&after);
}

/* ------------------------------------------------------------ the program */

typedef struct prog {
    hop_node *w, *n; /* root values the bodies close over */
    bool check;      /* check the state around every nested HOP call */
    int checked;     /* nested calls that failed and were checked */
} prog;

/* Around a nested HOP call: with p->check, a snapshot before (its own
 * allocation may be the one that fails) and, after a failure, the check that
 * the call changed nothing.  Usage: st = check_end(p, og, &s, call) after
 * check_begin(p, og, &s) == HOP_OK. */
static hop_status
check_begin(prog *p, hop_output_graph *og, snap *s)
{
    s->code = NULL;
    return p->check ? snap_take(og, s) : HOP_OK;
}

static hop_status
check_end(prog *p, hop_output_graph *og, snap *s, hop_status st)
{
    if (p->check && st != HOP_OK) {
        assert_unchanged(og, st, s);
        p->checked++;
    }
    snap_free(s);
    return st;
}

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

/* scale(a, b) = a * b: the invoke_subgraph body (explicit inputs). */
static hop_status
scale_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_mul, N(in[0]), N(in[1])));
}

static hop_status
pos_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    prog *p = ud;
    hop_output_graph *og = hop_output_graph_of(t);
    hop_body scale = {scale_body, NULL};
    hop_values a = {0}, b = {0};
    snap s;
    hop_status st = check_begin(p, og, &s);
    if (st == HOP_OK)
        st = check_end(p, og, &s,
                       hop_invoke_subgraph(og, scale, (hop_arg[]){N(in[0]), N(p->w)}, 2, &a));
    if (st == HOP_OK)
        st = check_begin(p, og, &s);
    if (st == HOP_OK)
        st = check_end(p, og, &s,
                       hop_invoke_subgraph(og, scale, (hop_arg[]){N(a.items[0]), N(p->w)}, 2, &b));
    if (st == HOP_OK)
        st = push(out, b.items[0]);
    hop_values_clear(&a);
    hop_values_clear(&b);
    return st;
}

static hop_status
neg_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    prog *p = ud;
    hop_node *d = OP(t, HOP_OP_sub, N(in[0]), N(p->w));
    return push(out, d ? OP(t, HOP_OP_mul, N(d), N(p->n)) : NULL);
}

static hop_status
row_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    prog *p = ud;
    hop_output_graph *og = hop_output_graph_of(t);
    hop_node *sum = OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = sum ? OP(t, HOP_OP_gt, N(sum), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    snap s;
    hop_status st = check_begin(p, og, &s);
    if (st == HOP_OK)
        st = check_end(p, og, &s,
                       hop_cond(og, N(pred), (hop_body){pos_body, p}, (hop_body){neg_body, p},
                                (hop_arg[]){N(in[0])}, 1, &r));
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
wrap_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    prog *p = ud;
    hop_output_graph *og = hop_output_graph_of(t);
    hop_values m = {0};
    snap s;
    hop_status st = check_begin(p, og, &s);
    if (st == HOP_OK)
        st = check_end(p, og, &s,
                       hop_map(og, (hop_body){row_body, p}, (hop_arg[]){N(in[0])}, 1, NULL, 0, &m));
    if (st == HOP_OK)
        st = push(out, OP(t, HOP_OP_add, N(m.items[0]), hop_arg_float(1.0)));
    hop_values_clear(&m);
    return st;
}

/* The root's inputs and n; NULL on error (og freed). */
static hop_output_graph *
program_inputs(prog *p, hop_node **x)
{
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return NULL;
    *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){ROWS, COLS}, true);
    p->w = *x ? hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){COLS}, true) : NULL;
    p->n = p->w ? OP(hop_output_graph_root(og), HOP_OP_sym_size, N(*x), hop_arg_int(0)) : NULL;
    if (p->n == NULL) {
        hop_output_graph_free(og);
        return NULL;
    }
    return og;
}

/* The wrap call, the output and a dead node for DCE to remove. */
static hop_status
program_finish(hop_output_graph *og, hop_node *result, hop_node *x)
{
    hop_tracer *root = hop_output_graph_root(og);
    if (OP(root, HOP_OP_neg, N(x)) == NULL) /* unused: DCE removes it */
        return hop_error_code();
    if (hop_tracer_output(root, (hop_arg[]){N(result)}, 1) == NULL)
        return hop_error_code();
    return hop_graph_verify(hop_output_graph_root_graph(og));
}

/* ------------------------------------------------------------ inputs */

static float xdata[ROWS][COLS], wdata[COLS];

static void
fill_inputs(void)
{
    /* Rows alternate clearly positive and clearly negative sums. */
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            xdata[i][j] = (float)((i % 2 ? -1 : 1) * (1.25 + 0.5 * j + 0.125 * i));
    for (int j = 0; j < COLS; j++)
        wdata[j] = (float)(0.75 - 0.25 * j);
}

static float
expected(int i, int j)
{
    float xv = xdata[i][j], wv = wdata[j];
    float sum = 0;
    for (int k = 0; k < COLS; k++)
        sum += xdata[i][k];
    float v;
    if (sum > 0) {
        v = xv * wv;
        v = v * wv;
    } else {
        v = (xv - wv) * (float)ROWS;
    }
    return v + 1.0f;
}

static bool
matches(const hop_tensor *out)
{
    if (out == NULL || out->dtype != HOP_F32 || out->rank != 2 || out->sizes[0] != ROWS ||
        out->sizes[1] != COLS)
        return false;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            float got = ((const float *)out->data)[i * out->strides[0] + j * out->strides[1]];
            if (got != expected(i, j)) {
                fprintf(stderr, "out[%d][%d] = %.9g, expected %.9g\n", i, j, got, expected(i, j));
                return false;
            }
        }
    return true;
}

/* ------------------------------------------------------------ the pipeline */

/* Lowers og (fused or not), runs the plan twice, dumps it. */
static hop_status
lower_and_run(hop_output_graph *og, bool fuse, hop_tensor **in, bool *ok)
{
    hop_lower_options o = {.no_fusion = !fuse};
    hop_plan *plan = hop_lower(og, &o);
    if (plan == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (int rep = 0; rep < 2 && st == HOP_OK; rep++) {
        hop_tensor *out = NULL;
        st = hop_plan_run(plan, in, 2, &out, 1);
        if (st == HOP_OK)
            *ok = *ok && matches(out);
        else
            assert_null(out);
        hop_tensor_release(out);
    }
    char *dump = st == HOP_OK ? hop_plan_dump(plan) : NULL;
    if (st == HOP_OK && dump == NULL)
        st = hop_error_code();
    hop_free(dump);
    hop_plan_free(plan);
    return st;
}

/* Everything, from a fresh OutputGraph; *ok tells whether every result was
 * exact.  Frees all it made, whatever happens. */
static hop_status
pipeline(hop_tensor **in, bool *ok)
{
    prog p = {0};
    hop_node *x = NULL;
    hop_output_graph *og = program_inputs(&p, &x);
    if (og == NULL)
        return hop_error_code();
    hop_values r = {0};
    hop_status st = hop_wrap(og, (hop_body){wrap_body, &p}, (hop_arg[]){N(x)}, 1, &r);
    if (st == HOP_OK)
        st = program_finish(og, r.items[0], x);
    hop_values_clear(&r);
    hop_graph *root = hop_output_graph_root_graph(og);
    char *texts[3] = {NULL, NULL, NULL};
    if (st == HOP_OK) {
        texts[0] = hop_graph_code(root);
        texts[1] = texts[0] ? hop_graph_table(root) : NULL;
        texts[2] = texts[1] ? hop_graph_dot(root) : NULL;
        if (texts[2] == NULL)
            st = hop_error_code();
    }
    for (int i = 0; i < 3; i++)
        hop_free(texts[i]);
    /* Two dead nodes: n (its symbol is lifted, not the node) and the neg. */
    size_t removed = st == HOP_OK ? hop_graph_dce(root) : 2;
    if (removed != 2)
        st = hop_error(HOP_RUNTIME, "DCE removed %zu nodes, not the two dead ones", removed);
    if (st == HOP_OK)
        st = lower_and_run(og, true, in, ok);
    if (st == HOP_OK)
        st = lower_and_run(og, false, in, ok);
    if (st == HOP_OK) {
        hop_tensor *out = NULL;
        st = hop_graph_eval(og, in, 2, &out, 1);
        if (st == HOP_OK)
            *ok = *ok && matches(out);
        hop_tensor_release(out);
    }
    hop_output_graph_free(og);
    return st;
}

static void
make_inputs(hop_tensor **in)
{
    fill_inputs();
    in[0] = hop_tensor_from_data(HOP_F32, 2, (int64_t[]){ROWS, COLS}, xdata);
    in[1] = hop_tensor_from_data(HOP_F32, 1, (int64_t[]){COLS}, wdata);
    assert_non_null(in[0]);
    assert_non_null(in[1]);
}

/* Allocations that live for the process (the HOP registry, the thread's
 * eager ShapeEnv) are made once before the baseline. */
static long
warm_up(hop_tensor **in)
{
    bool ok = true;
    hop_status st = pipeline(in, &ok);
    if (st != HOP_OK)
        fprintf(stderr, "pipeline: %s: %s\n", hop_status_name(st), hop_error_message());
    assert_int_equal(st, HOP_OK);
    assert_true(ok);
    hop_runtime_thread_cleanup();
    return hop_alloc_live();
}

static void
test_the_pipeline_gives_exact_values_against_a_c_reference(void **state)
{
    (void)state;
    hop_tensor *in[2];
    make_inputs(in);
    (void)warm_up(in);

    /* The graph has the shape the sweep relies on. */
    prog p = {0};
    hop_node *x;
    hop_output_graph *og = program_inputs(&p, &x);
    assert_non_null(og);
    hop_values r = {0};
    assert_int_equal(hop_wrap(og, (hop_body){wrap_body, &p}, (hop_arg[]){N(x)}, 1, &r), HOP_OK);
    assert_int_equal(program_finish(og, r.items[0], x), HOP_OK);
    hop_values_clear(&r);
    char *code = hop_graph_code(hop_output_graph_root_graph(og));
    assert_non_null(code);
    assert_non_null(strstr(code, "wrap(wrap_body_0, (s1, w, s0, x))"));
    assert_non_null(strstr(code, "map(map_body_0, (x,), (s1, w, s0))"));
    assert_non_null(strstr(code, "cond(gt, cond_true_0, cond_false_0, (s1, w, x, s0))"));
    assert_non_null(strstr(code,
                           "def cond_false_0(s1: \"Sym(s1)\", w: \"f32[s1]\", x: \"f32[s1]\", "
                           "s0_false_branch: \"Sym(s0)\")"));
    assert_non_null(strstr(code, "invoke_subgraph(subgraph_0, (x, w))"));
    assert_non_null(strstr(code, "invoke_subgraph(subgraph_0, (getitem, w))"));
    assert_null(strstr(code, "def subgraph_1"));
    hop_free(code);
    hop_output_graph_free(og);
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
}

static void
test_allocation_failure_sweep_over_trace_lower_and_run(void **state)
{
    (void)state;
    hop_tensor *in[2];
    make_inputs(in);
    long base = warm_up(in);
    /* Every allocation of a run fails once, the last one included: a
     * failure the pipeline absorbs (a lift note's lookup index, whose
     * lookup then scans the log) gives HOP_OK and exact values, and the
     * sweep goes on past it (it ended at the first such one before the
     * forty-sixth session, leaving the run's later allocations unswept). */
    long made = hop_alloc_count();
    (void)warm_up(in);
    made = hop_alloc_count() - made;
    long k, faults = 0, absorbed = 0;
    for (k = 1; k <= made; k++) {
        bool ok = true;
        hop_alloc_fail_at(k);
        hop_status st = pipeline(in, &ok);
        hop_alloc_fail_at(0);
        hop_runtime_thread_cleanup();
        if (st != HOP_OK && st != HOP_NOMEM)
            fprintf(stderr, "allocation %ld: %s: %s\n", k, hop_status_name(st),
                    hop_error_message());
        if (hop_alloc_live() != base)
            fprintf(stderr, "allocation %ld: %ld blocks leaked\n", k, hop_alloc_live() - base);
        assert_int_equal(hop_alloc_live(), base);
        if (st == HOP_OK) {
            assert_true(ok);
            absorbed++;
            continue;
        }
        assert_int_equal(st, HOP_NOMEM);
        assert_non_null(strstr(hop_error_message(), "out of memory"));
        faults++;
    }
    fprintf(stderr,
            "pipeline sweep: %ld allocations, %ld faults each HOP_NOMEM, %ld absorbed with "
            "exact values, no leak\n",
            made, faults, absorbed);
    assert_true(faults > 400);
    bool ok = true;
    assert_int_equal(pipeline(in, &ok), HOP_OK);
    assert_true(ok);
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
}

static void
test_a_failed_nested_hop_call_changes_nothing_and_the_retry_is_exact(void **state)
{
    (void)state;
    hop_tensor *in[2];
    make_inputs(in);
    long base = warm_up(in);
    long k, faults = 0;
    int checked = 0;
    for (k = 1; k < 1000000; k++) {
        prog p = {0};
        hop_node *x;
        hop_output_graph *og = program_inputs(&p, &x);
        assert_non_null(og);
        snap before;
        assert_int_equal(snap_take(og, &before), HOP_OK);
        hop_values r = {0};
        p.check = true;
        hop_alloc_fail_at(k);
        hop_status st = hop_wrap(og, (hop_body){wrap_body, &p}, (hop_arg[]){N(x)}, 1, &r);
        hop_alloc_fail_at(0);
        bool failed = st != HOP_OK;
        if (failed) {
            assert_unchanged(og, st, &before);
            assert_int_equal(r.n, 0);
            checked += p.checked;
            faults++;
            /* The same call again, with nothing failing, succeeds. */
            p.check = false;
            st = hop_wrap(og, (hop_body){wrap_body, &p}, (hop_arg[]){N(x)}, 1, &r);
            assert_int_equal(st, HOP_OK);
        }
        snap_free(&before);
        assert_int_equal(program_finish(og, r.items[0], x), HOP_OK);
        hop_values_clear(&r);
        hop_plan *plan = hop_lower(og, NULL);
        assert_non_null(plan);
        hop_tensor *out = NULL;
        assert_int_equal(hop_plan_run(plan, in, 2, &out, 1), HOP_OK);
        assert_true(matches(out));
        hop_tensor_release(out);
        hop_plan_free(plan);
        hop_output_graph_free(og);
        hop_runtime_thread_cleanup();
        assert_int_equal(hop_alloc_live(), base);
        if (!failed)
            break;
    }
    fprintf(stderr,
            "HOP-call sweep: %ld allocation faults injected, %d nested HOP calls checked after "
            "their failure\n",
            faults, checked);
    assert_true(faults > 100);
    assert_true(checked > faults); /* inner failures are checked at every level they cross */
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_pipeline_gives_exact_values_against_a_c_reference),
        cmocka_unit_test(test_allocation_failure_sweep_over_trace_lower_and_run),
        cmocka_unit_test(test_a_failed_nested_hop_call_changes_nothing_and_the_retry_is_exact),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
