/*
 * tests/c/test_scale.c - hop at scale: 256-deep nested HOPs (wrap, cond, map
 * and invoke_subgraph in turn, every level closing over a root tensor), a
 * 100,000-node graph, 10,000 distinct values lifted through three levels, and
 * a map over 1,000,000 rows.  Each is traced, verified, printed, lowered and
 * run, and checked exactly against a C reference.
 *
 * The graph's memory is measured in bytes through a counting allocator
 * (hop_set_allocator) and bounded (MAX_BYTES_PER_NODE).  Times are printed
 * at two sizes, never asserted.  HOP_TEST_SCALE=k divides every size by k
 * (sanitizer and valgrind runs use it); the depth of the nesting test stays
 * 256 whatever the scale.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N hop_arg_node
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

/* ------------------------------------------------------------ measuring */

/* A realloc-style allocator that knows every block's size (a 16-byte
 * header keeps malloc's alignment), so a test can read live bytes: what
 * glibc's malloc holds for each block (an 8-byte header, 16-byte granules,
 * 32 bytes at least), so allocator overhead counts too. */
static atomic_llong live_bytes;

static long long
held(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return (long long)(c < 32 ? 32 : c);
}

static void *
counting_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    char *old = ptr ? (char *)ptr - 16 : NULL;
    long long oldn = old ? held(*(size_t *)old) : 0;
    if (n == 0) {
        free(old);
        atomic_fetch_sub(&live_bytes, oldn);
        return NULL;
    }
    char *p = realloc(old, n + 16);
    if (p == NULL)
        return NULL;
    *(size_t *)p = n;
    atomic_fetch_add(&live_bytes, held(n) - oldn);
    return p + 16;
}

/* Seconds on a clock: CLOCK_MONOTONIC (now) or the thread's CPU time
 * (cpu_now, what the lifting tests compare). */
static double
seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
now(void)
{
    return seconds(CLOCK_MONOTONIC);
}

static long scale_div = 1;

static long
scaled(long n)
{
    return n / scale_div > 0 ? n / scale_div : 1;
}

static hop_tracer *
root(hop_output_graph *og)
{
    return hop_output_graph_root(og);
}

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

static hop_plan *
lower(hop_output_graph *og)
{
    hop_plan *p = hop_lower(og, NULL);
    if (p == NULL)
        fprintf(stderr, "hop_lower: %s: %s\n", hop_status_name(hop_error_code()),
                hop_error_message());
    assert_non_null(p);
    return p;
}

static void
finish(hop_output_graph *og, hop_node *result)
{
    assert_non_null(result);
    assert_non_null(hop_tracer_output(root(og), (hop_arg[]){N(result)}, 1));
    hop_status st = hop_graph_verify(hop_output_graph_root_graph(og));
    if (st != HOP_OK)
        fprintf(stderr, "verify: %s\n", hop_error_message());
    assert_int_equal(st, HOP_OK);
}

/* Every printer works on the graph (and none recurses too deep). */
static void
print_all(hop_output_graph *og, size_t *code_len)
{
    hop_graph *g = hop_output_graph_root_graph(og);
    char *code = hop_graph_code(g), *table = hop_graph_table(g), *dot = hop_graph_dot(g);
    assert_non_null(code);
    assert_non_null(table);
    assert_non_null(dot);
    if (code_len)
        *code_len = strlen(code);
    hop_free(code);
    hop_free(table);
    hop_free(dot);
}

/* ----------------------------------------------------- 256-deep nesting */

#define DEPTH 256
#define LEN 5

typedef struct deep {
    hop_node *w; /* a root tensor every level closes over */
    int level[DEPTH + 1];
} deep;

/* Level i's body: inner(v) + w, where inner is level i-1 through the HOP
 * HOPS[i % 4]; level 0 is v * 2. */
static hop_status deep_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n,
                            hop_values *out);

typedef struct deep_ud {
    deep *d;
    int level;
} deep_ud;

static deep_ud deep_uds[DEPTH + 1];

static hop_status
deep_false(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_neg, N(in[0])));
}

/* The value of level `level` applied to v, recorded in t. */
static hop_node *
deep_level(hop_tracer *t, deep *d, int level, hop_node *v)
{
    if (level == 0)
        return OP(t, HOP_OP_mul, N(v), hop_arg_int(2));
    hop_output_graph *og = hop_output_graph_of(t);
    hop_body inner = {deep_body, &deep_uds[level - 1]};
    deep_uds[level - 1] = (deep_ud){d, level - 1};
    hop_values r = {0};
    hop_status st;
    hop_node *result = NULL;
    switch (level % 4) {
    case 0:
        st = hop_wrap(og, inner, (hop_arg[]){N(v)}, 1, &r);
        break;
    case 1: {
        hop_node *s = OP(t, HOP_OP_sum, N(v), hop_arg_none(), hop_arg_bool(false));
        hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
        st = pred ? hop_cond(og, N(pred), inner, (hop_body){deep_false, NULL}, (hop_arg[]){N(v)}, 1,
                             &r)
                  : hop_error_code();
        break;
    }
    case 2: {
        hop_node *rows = OP(t, HOP_OP_unsqueeze, N(v), hop_arg_int(0));
        st = rows ? hop_map(og, inner, (hop_arg[]){N(rows)}, 1, NULL, 0, &r) : hop_error_code();
        if (st == HOP_OK) {
            hop_node *sq = OP(t, HOP_OP_squeeze, N(r.items[0]), hop_arg_int(0));
            hop_values_clear(&r);
            st = sq ? hop_values_push(&r, sq) : hop_error_code();
        }
        break;
    }
    default:
        st = hop_invoke_subgraph(og, inner, (hop_arg[]){N(v)}, 1, &r);
        break;
    }
    if (st == HOP_OK)
        result = r.items[0];
    else
        fprintf(stderr, "level %d: %s\n", level, hop_error_message());
    hop_values_clear(&r);
    return result;
}

static hop_status
deep_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    deep_ud *u = ud;
    hop_node *inner = deep_level(t, u->d, u->level, in[0]);
    return push(out, inner ? OP(t, HOP_OP_add, N(inner), N(u->d->w)) : NULL);
}

static double
deep_run(int depth, bool check)
{
    double t0 = now();
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    deep d = {0};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){LEN}, true);
    d.w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){LEN}, true);
    hop_node *top = deep_level(root(og), &d, depth, x);
    finish(og, top);
    hop_graph *g = hop_output_graph_root_graph(og);
    size_t code_len = 0;
    print_all(og, &code_len);
    /* Nested subgraphs: one per level, two for cond levels (the false branch). */
    size_t graphs = 0;
    for (hop_graph *sub = g; sub;) {
        graphs += sub->nsubgraphs;
        hop_graph *next = NULL;
        for (size_t i = 0; i < sub->nsubgraphs; i++)
            if (sub->subgraphs[i]->nsubgraphs > 0)
                next = sub->subgraphs[i];
        sub = next;
    }
    assert_int_equal(graphs, (size_t)depth + (size_t)(depth + 3) / 4);
    hop_plan *p = lower(og);
    float xd[LEN], wd[LEN], want[LEN];
    for (int i = 0; i < LEN; i++) {
        xd[i] = 0.5f + (float)i;
        wd[i] = 0.25f * (float)(i + 1);
        float acc = xd[i] * 2;
        for (int l = 0; l < depth; l++)
            acc = acc + wd[i];
        want[i] = acc;
    }
    hop_tensor *in[2] = {hop_tensor_from_data(HOP_F32, 1, (int64_t[]){LEN}, xd),
                         hop_tensor_from_data(HOP_F32, 1, (int64_t[]){LEN}, wd)};
    hop_tensor *out = NULL;
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    for (int i = 0; i < LEN; i++)
        assert_true(((float *)out->data)[i] == want[i]);
    hop_tensor_release(out);
    if (check) {
        assert_int_equal(hop_graph_eval(og, in, 2, &out, 1), HOP_OK);
        for (int i = 0; i < LEN; i++)
            assert_true(((float *)out->data)[i] == want[i]);
        hop_tensor_release(out);
    }
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
    hop_plan_free(p);
    hop_graph_dce(g);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_output_graph_free(og);
    (void)code_len;
    return now() - t0;
}

static void
test_256_deep_nested_hops_trace_lower_and_run_exactly(void **state)
{
    (void)state;
    double t128 = deep_run(DEPTH / 2, false);
    double t256 = deep_run(DEPTH, true);
    fprintf(stderr, "scale: nesting depth 128: %.3f s, depth 256: %.3f s (ratio %.2f)\n", t128,
            t256, t256 / t128);
}

/* ----------------------------------------------------- 100,000 nodes */

/*
 * Issue #30's target: at most 200 bytes per node (issue #7's was 256; at
 * 100,000 nodes, arena slack and malloc overhead included).  A node here
 * costs about 175: one arena block of 160 (the 96-byte hop_node, two args
 * 48, a use record 16), its name packed in 6 to 9, 4 to 8 of name buckets,
 * and shared metadata (nothing per node).  docs/ARCHITECTURE.md says where
 * the bytes go.
 */
#define MAX_BYTES_PER_NODE 200.0

typedef struct chain_figures {
    double trace, verify, print, dce, lower, run;
    double bytes_per_node;
} chain_figures;

/* x + 3 - 2 + 3 - 2 ...: n nodes, plus a dead neg every 100th. */
static chain_figures
chain_run(long n)
{
    chain_figures f = {0};
    long long base = atomic_load(&live_bytes);
    double t0 = now();
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){64}, true);
    hop_node *v = x;
    long dead = 0;
    for (long i = 0; i < n; i++) {
        v = i % 2 == 0 ? OP(root(og), HOP_OP_add, N(v), hop_arg_int(3))
                       : OP(root(og), HOP_OP_sub, N(v), hop_arg_int(2));
        assert_non_null(v);
        if (i % 100 == 99) {
            assert_non_null(OP(root(og), HOP_OP_neg, N(v)));
            dead++;
        }
    }
    assert_non_null(hop_tracer_output(root(og), (hop_arg[]){N(v)}, 1));
    f.trace = now() - t0;
    hop_graph *g = hop_output_graph_root_graph(og);
    assert_int_equal(g->nnodes, (size_t)(n + dead + 3)); /* s0, x, output */
    f.bytes_per_node = (double)(atomic_load(&live_bytes) - base) / (double)g->nnodes;

    t0 = now();
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    f.verify = now() - t0;
    t0 = now();
    print_all(og, NULL);
    f.print = now() - t0;
    t0 = now();
    assert_int_equal(hop_graph_dce(g), (size_t)dead);
    assert_int_equal(g->nnodes, (size_t)(n + 3));
    f.dce = now() - t0;
    t0 = now();
    hop_plan *p = lower(og);
    f.lower = now() - t0;

    float xd[64];
    for (int i = 0; i < 64; i++)
        xd[i] = (float)(i - 32);
    hop_tensor *in = hop_tensor_from_data(HOP_F32, 1, (int64_t[]){64}, xd);
    hop_tensor *out = NULL;
    t0 = now();
    assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
    f.run = now() - t0;
    for (int i = 0; i < 64; i++) {
        float want = xd[i];
        for (long k = 0; k < n; k++)
            want = k % 2 == 0 ? want + 3 : want - 2;
        assert_true(((float *)out->data)[i] == want);
    }
    hop_tensor_release(out);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
    return f;
}

static void
test_100000_node_graph_traces_lowers_and_runs_in_bounded_memory_per_node(void **state)
{
    (void)state;
    long n = scaled(100000);
    chain_figures half = chain_run(n / 2), full = chain_run(n);
    fprintf(stderr,
            "scale: %ld-node graph: %.1f bytes/node; trace %.3f s, verify %.3f s, print %.3f s, "
            "dce %.3f s, lower %.3f s, run %.4f s\n",
            n, full.bytes_per_node, full.trace, full.verify, full.print, full.dce, full.lower,
            full.run);
    fprintf(stderr,
            "scale: %ld-node graph: %.1f bytes/node; trace %.3f s, verify %.3f s, print %.3f s, "
            "dce %.3f s, lower %.3f s, run %.4f s\n",
            n / 2, half.bytes_per_node, half.trace, half.verify, half.print, half.dce, half.lower,
            half.run);
    /* Arena slack depends on the size: the bound holds at full scale. */
    if (scale_div == 1)
        assert_true(full.bytes_per_node <= MAX_BYTES_PER_NODE);
}

/* ------------------------------------------- sequential cond calls */

/*
 * Issue #30: a plan's memory per traced cond call with one op per branch
 * (x = cond(sum(x) > 0, x - 1, x + 1), 1,000 calls, the branch taken
 * alternating): three one-step fused groups (gt and the two branches), the
 * sum's kernel, the instructions and slots.  A fused group keeps the
 * register kernel's arrays sized by its steps: at their worst-case size
 * each group held ~390 bytes more, ~4.0 KB a call in all (~2.9 K now, the
 * counting allocator's figure, arena slack included).
 */
#define MAX_PLAN_BYTES_PER_COND 3200.0

static hop_status
cond_add(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_add, N(in[0]), hop_arg_float(1.0)));
}

static hop_status
cond_sub(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    return push(out, OP(t, HOP_OP_sub, N(in[0]), hop_arg_float(1.0)));
}

static void
test_plan_of_1000_cond_calls_keeps_bounded_bytes_per_call(void **state)
{
    (void)state;
    long calls = scaled(1000);
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *v = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){16}, false);
    for (long i = 0; i < calls; i++) {
        hop_node *s = OP(root(og), HOP_OP_sum, N(v), hop_arg_none(), hop_arg_bool(false));
        hop_node *pred = s ? OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
        assert_non_null(pred);
        hop_values r = {0};
        assert_int_equal(hop_cond(og, N(pred), (hop_body){cond_sub, NULL},
                                  (hop_body){cond_add, NULL}, (hop_arg[]){N(v)}, 1, &r),
                         HOP_OK);
        v = r.items[0];
        hop_values_clear(&r);
    }
    finish(og, v);
    long long base = atomic_load(&live_bytes);
    hop_plan *p = lower(og);
    double per_call = (double)(atomic_load(&live_bytes) - base) / (double)calls;
    fprintf(stderr, "scale: plan of %ld cond calls: %.0f bytes per call\n", calls, per_call);

    float xd[16], want[16];
    for (int i = 0; i < 16; i++)
        want[i] = xd[i] = 0.25f * (float)(i - 10);
    for (long k = 0; k < calls; k++) {
        float sum = 0;
        for (int i = 0; i < 16; i++)
            sum += want[i];
        for (int i = 0; i < 16; i++)
            want[i] = sum > 0 ? want[i] - 1.0f : want[i] + 1.0f;
    }
    hop_tensor *in = hop_tensor_from_data(HOP_F32, 1, (int64_t[]){16}, xd);
    hop_tensor *out = NULL;
    assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
    for (int i = 0; i < 16; i++)
        assert_true(((float *)out->data)[i] == want[i]);
    hop_tensor_release(out);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_output_graph_free(og);
    /* Arena slack depends on the size: the bound holds at full scale. */
    if (scale_div == 1)
        assert_true(per_call <= MAX_PLAN_BYTES_PER_COND);
}

/* ------------------------------------------- repeated restores */

/*
 * A long-running trace that checkpoints, records ops and restores again and
 * again: names come back (every round makes the same ones) and the
 * metadata is shared, so the memory held grows only by the removed nodes,
 * which stay readable until the OutputGraph is freed (graph/graph.c).
 */
static void
test_repeated_restores_grow_only_by_the_removed_nodes(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){64}, true);
    hop_graph *g = hop_output_graph_root_graph(og);
    size_t nnodes = g->nnodes;
    long rounds = scaled(2000), per_round = 10;
    long long before = 0;
    for (long r = 0; r < rounds; r++) {
        if (r == 1)
            before = atomic_load(&live_bytes); /* after the first round's growth */
        hop_checkpoint *cp = hop_output_graph_checkpoint(og);
        assert_non_null(cp);
        hop_node *v = x;
        for (long i = 0; i < per_round; i++)
            assert_non_null(v = OP(root(og), HOP_OP_mul, N(v), hop_arg_float(0.5)));
        assert_string_equal(v->name, "mul_9");
        assert_ptr_equal(v->meta, x->meta);
        assert_int_equal(hop_output_graph_restore(og, cp), HOP_OK);
        assert_int_equal(g->nnodes, nnodes);
        assert_null(v->graph);
        assert_string_equal(v->name, "mul_9"); /* a removed node stays readable */
    }
    double per_node =
        (double)(atomic_load(&live_bytes) - before) / (double)((rounds - 1) * per_round);
    fprintf(stderr, "scale: %ld restores of %ld nodes: %.1f bytes held per removed node\n", rounds,
            per_round, per_node);
    if (scale_div == 1) /* arena slack again: the bound holds at full scale */
        assert_true(per_node <= MAX_BYTES_PER_NODE);
    hop_output_graph_free(og);
}

/* ---------------------------------------- 10,000 distinct lifted values */

typedef struct lifted {
    hop_node **values;
    long n;
    int levels;
} lifted;

static hop_status
lifted_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)in;
    (void)n;
    lifted *l = ud;
    if (l->levels > 1) {
        l->levels--;
        hop_values r = {0};
        hop_status st = hop_wrap(hop_output_graph_of(t), (hop_body){lifted_body, l}, NULL, 0, &r);
        l->levels++;
        if (st == HOP_OK)
            st = push(out, r.items[0]);
        hop_values_clear(&r);
        return st;
    }
    /* The innermost body sums every outer value: each is lifted through
     * every level. */
    hop_node *acc = l->values[0];
    for (long i = 1; i < l->n && acc; i++)
        acc = OP(t, HOP_OP_add, N(acc), N(l->values[i]));
    return push(out, acc);
}

static double
lifted_run(long n, int levels)
{
    double t0 = now();
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F64, 1, (int64_t[]){8}, true);
    lifted l = {hop_calloc((size_t)n, sizeof(hop_node *)), n, levels};
    assert_non_null(l.values);
    for (long i = 0; i < n; i++) {
        l.values[i] = OP(root(og), HOP_OP_add, N(x), hop_arg_int(i));
        assert_non_null(l.values[i]);
    }
    hop_values r = {0};
    assert_int_equal(hop_wrap(og, (hop_body){lifted_body, &l}, NULL, 0, &r), HOP_OK);
    finish(og, r.items[0]);
    hop_values_clear(&r);
    /* Every level has one placeholder per value (and one for x's symbol). */
    hop_graph *g = hop_output_graph_root_graph(og);
    for (int k = 0; k < levels; k++) {
        assert_int_equal(g->nsubgraphs, 1);
        g = g->subgraphs[0];
        assert_int_equal(g->nplaceholders, (size_t)n + 1);
    }
    print_all(og, NULL);
    hop_plan *p = lower(og);
    double xd[8];
    for (int i = 0; i < 8; i++)
        xd[i] = (double)(i * 3 - 7);
    hop_tensor *in = hop_tensor_from_data(HOP_F64, 1, (int64_t[]){8}, xd);
    hop_tensor *out = NULL;
    assert_int_equal(hop_plan_run(p, &in, 1, &out, 1), HOP_OK);
    for (int i = 0; i < 8; i++) {
        double want = xd[i];
        for (long k = 1; k < n; k++)
            want = want + (xd[i] + (double)k);
        assert_true(((double *)out->data)[i] == want);
    }
    hop_tensor_release(out);
    hop_tensor_release(in);
    hop_plan_free(p);
    hop_free(l.values);
    hop_output_graph_free(og);
    return now() - t0;
}

static void
test_10000_distinct_values_lifted_through_three_levels(void **state)
{
    (void)state;
    long n = scaled(10000);
    double half = lifted_run(n / 2, 3), full = lifted_run(n, 3);
    fprintf(stderr, "scale: %ld lifted values x 3 levels: %.3f s; %ld: %.3f s (ratio %.2f)\n",
            n / 2, half, n, full, full / half);
}

static double
cpu_now(void)
{
    return seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* The CPU time of tracing one wrap body that sums n values of the root
 * (each lifted into the body once), or (branches) a cond whose two branches
 * both sum them, over the CPU time of making those n values in the root:
 * the least of three runs.  Both make about as many nodes and names in
 * graphs of the same size, so the caches (and a busy machine) weigh on both
 * alike, and the quotient is flat in n while lifting is linear. */
static double
lift_cost(long n, bool branches)
{
    double best = 0;
    for (int run = 0; run < 3; run++) {
        hop_output_graph *og = hop_output_graph_new();
        assert_non_null(og);
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F64, 1, (int64_t[]){8}, false);
        hop_node *s = OP(root(og), HOP_OP_sum, N(x), hop_arg_none(), hop_arg_bool(false));
        hop_node *pred = s ? OP(root(og), HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
        assert_non_null(pred);
        lifted l = {hop_calloc((size_t)n, sizeof(hop_node *)), n, 1};
        assert_non_null(l.values);
        double t0 = cpu_now();
        for (long i = 0; i < n; i++) {
            l.values[i] = OP(root(og), HOP_OP_add, N(x), hop_arg_int(i));
            assert_non_null(l.values[i]);
        }
        double made = cpu_now() - t0;
        hop_body body = {lifted_body, &l};
        hop_values r = {0};
        t0 = cpu_now();
        assert_int_equal(branches ? hop_cond(og, N(pred), body, body, NULL, 0, &r)
                                  : hop_wrap(og, body, NULL, 0, &r),
                         HOP_OK);
        double t = (cpu_now() - t0) / made;
        /* every value lifted once, shared by both branches */
        hop_graph *g = hop_output_graph_root_graph(og);
        assert_int_equal(g->nsubgraphs, branches ? 2 : 1);
        for (size_t b = 0; b < g->nsubgraphs; b++)
            assert_int_equal(g->subgraphs[b]->nplaceholders, (size_t)n);
        /* a cond's shared values: the same signature in both branches */
        for (hop_node *p = branches ? g->subgraphs[0]->first : NULL,
                      *q = branches ? g->subgraphs[1]->first : NULL;
             p && p->kind == HOP_NODE_PLACEHOLDER; p = p->next, q = q->next)
            assert_string_equal(p->name, q->name);
        best = run == 0 || t < best ? t : best;
        hop_values_clear(&r);
        hop_free(l.values);
        hop_output_graph_free(og);
    }
    return best;
}

/* The signature merge of a body's lifted values searched every earlier
 * lift for each one, O(k^2) (26% of a trace of 8,000 lifts); a cond's
 * second branch still searched all of the first's, and its branches'
 * placeholders, sorted by name, were each moved by a walk to their
 * position: 10,000 values took 3.7 s, 100,000 did not end in 10 minutes.
 * At 100,000 lifts a quadratic term is tens of times the linear work, so a
 * bound between the two sizes is far from both the flat figure and the
 * quadratic one; the Python test of the same (test_scale.py) cannot tell
 * them apart as surely, its per-lift work being larger.  Not asserted
 * under valgrind (HOP_TEST_SCALE), which runs it for memory errors only. */
static void
lifting_costs_the_same_per_value(bool branches)
{
    long small = scaled(10000), large = scaled(100000);
    double t_small = lift_cost(small, branches), t_large = lift_cost(large, branches);
    fprintf(stderr, "scale: %s lifting %ld values: %.2f x making them; %ld: %.2f x (ratio %.2f)\n",
            branches ? "cond" : "wrap", small, t_small, large, t_large, t_large / t_small);
    if (scale_div == 1)
        assert_true(t_large <= 4.0 * t_small);
}

static void
test_lifting_100000_values_into_one_body_costs_the_same_per_value_as_10000(void **state)
{
    (void)state;
    lifting_costs_the_same_per_value(false);
}

static void
test_lifting_100000_values_into_both_branches_costs_the_same_per_value_as_10000(void **state)
{
    (void)state;
    lifting_costs_the_same_per_value(true);
}

/* ------------------------------------------------ a map over 1,000,000 rows */

static hop_status
row_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)n;
    hop_node *w = ud;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(w));
    return push(out, m ? OP(t, HOP_OP_add, N(m), hop_arg_int(1)) : NULL);
}

static double
map_run(long rows)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_node *xs = hop_output_graph_add_input(og, "xs", HOP_F32, 2, (int64_t[]){rows, 4}, true);
    hop_node *w = hop_output_graph_add_input(og, "w", HOP_F32, 1, (int64_t[]){4}, true);
    hop_values r = {0};
    assert_int_equal(hop_map(og, (hop_body){row_body, w}, (hop_arg[]){N(xs)}, 1, NULL, 0, &r),
                     HOP_OK);
    finish(og, r.items[0]);
    hop_values_clear(&r);
    hop_plan *p = lower(og);
    hop_tensor *in[2] = {
        hop_tensor_empty(HOP_F32, 2, (int64_t[]){rows, 4}),
        hop_tensor_from_data(HOP_F32, 1, (int64_t[]){4}, (float[]){0.5f, -1.0f, 2.0f, 0.25f})};
    assert_non_null(in[0]);
    float *x = in[0]->data;
    for (long i = 0; i < rows * 4; i++)
        x[i] = (float)(i % 97) - 48.0f;
    hop_tensor *out = NULL;
    double t0 = now();
    assert_int_equal(hop_plan_run(p, in, 2, &out, 1), HOP_OK);
    double t = now() - t0;
    assert_int_equal(out->sizes[0], rows);
    const float *wd = in[1]->data, *o = out->data;
    for (long i = 0; i < rows * 4; i++)
        if (o[i] != x[i] * wd[i % 4] + 1.0f) {
            fprintf(stderr, "row %ld col %ld: %g\n", i / 4, i % 4, o[i]);
            fail();
        }
    hop_tensor_release(out);
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
    hop_plan_free(p);
    hop_output_graph_free(og);
    return t;
}

static void
test_map_over_1000000_rows_runs_exactly(void **state)
{
    (void)state;
    long rows = scaled(1000000);
    double half = map_run(rows / 2), full = map_run(rows);
    fprintf(stderr, "scale: map over %ld rows: %.3f s; %ld rows: %.3f s (ratio %.2f)\n", rows / 2,
            half, rows, full, full / half);
}

int
main(void)
{
    const char *s = getenv("HOP_TEST_SCALE");
    if (s && atol(s) > 1)
        scale_div = atol(s);
    /* HOP_TEST_FILTER=pattern runs only the matching tests (profiling). */
    if (getenv("HOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("HOP_TEST_FILTER"));
    /* The HOP registry is a process-lifetime table made on first use: made
     * before the hook, it is neither counted nor seen as lost by valgrind. */
    assert_non_null(hop_find_hop("wrap"));
    /* Before any hop object exists: every allocation is counted in bytes. */
    hop_set_allocator(counting_alloc, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_100000_node_graph_traces_lowers_and_runs_in_bounded_memory_per_node),
        cmocka_unit_test(test_256_deep_nested_hops_trace_lower_and_run_exactly),
        cmocka_unit_test(test_10000_distinct_values_lifted_through_three_levels),
        cmocka_unit_test(
            test_lifting_100000_values_into_one_body_costs_the_same_per_value_as_10000),
        cmocka_unit_test(
            test_lifting_100000_values_into_both_branches_costs_the_same_per_value_as_10000),
        cmocka_unit_test(test_map_over_1000000_rows_runs_exactly),
        cmocka_unit_test(test_repeated_restores_grow_only_by_the_removed_nodes),
        cmocka_unit_test(test_plan_of_1000_cond_calls_keeps_bounded_bytes_per_call),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
