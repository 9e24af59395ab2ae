/*
 * bench/bench_plan.c - what a compiled plan costs: fused elementwise
 * bandwidth on a large tensor, the interpreter's cost per small op, a map
 * over many rows, and invoke_subgraph calls.  Prints figures, asserts
 * nothing (run it on a quiet machine; best of several repetitions).
 *
 *   exp(relu(x*2 + 1)) on 16M f32, 1 thread    GB/s counting x and the result
 *   a chain of 16 ops on 16 floats             ns per op, fused and unfused
 *   map over 10,000 rows x 16 floats           ns per row (3-op body)
 *   map whose body runs kernels (sum, matmul)  ns per row, allocations per run
 *                                              on 1 and 2 threads; a kernel's
 *                                              prepare against its rebase
 *   the same map on 1 thread and on 2          ns per row and the ratio, also
 *                                              with 256 and 1024 floats a row
 *                                              and near the parallel threshold
 *   invoke_subgraph 8 times on 16 floats       ns per call
 */
#define _POSIX_C_SOURCE 200809L
#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"

#include <stdio.h>

/* runtime/parmap.c: loops run on the pool so far */
long hop__parmap_runs(void);
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N hop_arg_node
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench_plan: %s: %s: %s\n", what, hop_status_name(hop_error_code()),
                hop_error_message());
        exit(1);
    }
}

static hop_tensor *
filled(int rank, const int64_t *sizes, float v)
{
    hop_tensor *t = hop_tensor_empty(HOP_F32, rank, sizes);
    check(t != NULL, "tensor");
    float *d = t->data;
    for (int64_t i = 0; i < hop_tensor_numel(t); i++)
        d[i] = v * (float)((i % 17) - 8) / 8.0f;
    return t;
}

/* Best time per call of run_into over reps calls, repeated rounds times. */
static double
best(hop_plan *p, hop_tensor **in, size_t nin, hop_tensor **out, size_t nout, int reps, int rounds)
{
    double b = 1e30;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++)
            check(hop_plan_run_into(p, in, nin, out, nout) == HOP_OK, "run");
        double t = (now() - t0) / reps;
        b = t < b ? t : b;
    }
    return b;
}

static hop_plan *
lower(hop_output_graph *og, bool fuse)
{
    hop_lower_options o = {.no_fusion = !fuse};
    hop_plan *p = hop_lower(og, &o);
    check(p != NULL, "lower");
    return p;
}

/* ---------------------------------------------------------- bandwidth */

static void
bench_bandwidth(void)
{
    int64_t n = 16 << 20;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, &n, true);
    hop_tracer *t = hop_output_graph_root(og);
    hop_node *m = OP(t, HOP_OP_mul, N(x), hop_arg_int(2));
    hop_node *a = OP(t, HOP_OP_add, N(m), hop_arg_int(1));
    hop_node *r = OP(t, HOP_OP_relu, N(a));
    hop_node *e = OP(t, HOP_OP_exp, N(r));
    check(hop_tracer_output(t, (hop_arg[]){N(e)}, 1) != NULL, "trace");
    hop_tensor *in = filled(1, &n, 1.0f), *out = hop_tensor_empty(HOP_F32, 1, &n);
    double bytes = 2.0 * (double)n * sizeof(float);
    for (int fuse = 1; fuse >= 0; fuse--) {
        hop_plan *p = lower(og, fuse);
        double s = best(p, &in, 1, &out, 1, 3, 5);
        printf("exp(relu(x*2 + 1)), 16M f32, 1 thread, %-8s  %7.2f ms  %6.2f GB/s (into)\n",
               fuse ? "fused" : "unfused", s * 1e3, bytes / s / 1e9);
        for (int fresh = 0; fuse && fresh < 2; fresh++) {
            /* The plan reuses a released output of the same size; trimmed,
             * every run gets a new one (page faults included). */
            double b = 1e30;
            for (int k = 0; k < 5; k++) {
                hop_tensor *o;
                if (fresh)
                    hop_plan_trim(p);
                double t0 = now();
                check(hop_plan_run(p, &in, 1, &o, 1) == HOP_OK, "run");
                double dt = now() - t0;
                hop_tensor_release(o);
                b = dt < b ? dt : b;
            }
            printf("exp(relu(x*2 + 1)), 16M f32, 1 thread, fused     %7.2f ms  %6.2f GB/s "
                   "(hop_plan_run, %s output)\n",
                   b * 1e3, bytes / b / 1e9, fresh ? "fresh" : "recycled");
        }
        hop_plan_free(p);
    }
    /* op by op through hop_eager, for comparison */
    double b = 1e30;
    for (int k = 0; k < 3; k++) {
        double t0 = now();
        hop_tensor *v1 =
            hop_eager_tensor(HOP_OP_mul, (hop_rt_arg[]){hop_rt_tensor(in), hop_rt_int(2)}, 2);
        hop_tensor *v2 =
            hop_eager_tensor(HOP_OP_add, (hop_rt_arg[]){hop_rt_tensor(v1), hop_rt_int(1)}, 2);
        hop_tensor *v3 = hop_eager_tensor(HOP_OP_relu, (hop_rt_arg[]){hop_rt_tensor(v2)}, 1);
        hop_tensor *v4 = hop_eager_tensor(HOP_OP_exp, (hop_rt_arg[]){hop_rt_tensor(v3)}, 1);
        double dt = now() - t0;
        b = dt < b ? dt : b;
        hop_tensor_release(v1);
        hop_tensor_release(v2);
        hop_tensor_release(v3);
        hop_tensor_release(v4);
    }
    printf("exp(relu(x*2 + 1)), 16M f32, 1 thread, hop_eager %7.2f ms  %6.2f GB/s\n", b * 1e3,
           bytes / b / 1e9);
    hop_tensor_release(in);
    hop_tensor_release(out);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------- small ops */

static void
bench_small_ops(void)
{
    int64_t n = 16;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, &n, false);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, &n, false);
    hop_tracer *t = hop_output_graph_root(og);
    static const hop_op ops[] = {HOP_OP_add, HOP_OP_mul, HOP_OP_sub, HOP_OP_maximum};
    hop_node *v = x;
    int nops = 16;
    for (int i = 0; i < nops; i++)
        v = OP(t, ops[i % 4], N(v), N(y));
    check(v != NULL && hop_tracer_output(t, (hop_arg[]){N(v)}, 1) != NULL, "trace");
    hop_tensor *in[] = {filled(1, &n, 1.0f), filled(1, &n, 0.5f)};
    hop_tensor *out = hop_tensor_empty(HOP_F32, 1, &n);
    for (int fuse = 1; fuse >= 0; fuse--) {
        hop_plan *p = lower(og, fuse);
        double s = best(p, in, 2, &out, 1, 100000, 5);
        printf("chain of %d ops on 16 f32, %-8s               %7.1f ns per op (%.0f ns a run)\n",
               nops, fuse ? "fused" : "unfused", s * 1e9 / nops, s * 1e9);
        hop_plan_free(p);
    }
    hop_tensor_release(in[0]);
    hop_tensor_release(in[1]);
    hop_tensor_release(out);
    hop_output_graph_free(og);
}

/* ---------------------------------------------------------------- map */

typedef struct closure {
    hop_node *w, *b;
} closure;

static hop_status
row_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    closure *c = ud;
    (void)nin;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(c->w));
    hop_node *a = m ? OP(t, HOP_OP_add, N(m), N(c->b)) : NULL;
    hop_node *r = a ? OP(t, HOP_OP_relu, N(a)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

/* A traced map of body over the rows of x (rows x cols, dynamic), whose
 * closure is w and b: vectors of cols marked dynamic, or (kernel_w) a
 * cols x cols matrix and a vector both static; with its inputs (x 1.0,
 * w 0.5, b 0.25) and an output to run into. */
typedef struct map_case {
    closure c;
    hop_output_graph *og;
    hop_values r;
    hop_tensor *in[3], *out;
} map_case;

static void
map_case_init(map_case *m, int64_t rows, int64_t cols, bool kernel_w, hop_body_fn body)
{
    int64_t ww[2] = {cols, cols};
    m->og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(m->og, "x", HOP_F32, 2, (int64_t[]){rows, cols}, true);
    m->c.w = hop_output_graph_add_input(m->og, "w", HOP_F32, kernel_w ? 2 : 1, ww, !kernel_w);
    m->c.b = hop_output_graph_add_input(m->og, "b", HOP_F32, 1, &cols, !kernel_w);
    m->r = (hop_values){0};
    check(hop_map(m->og, (hop_body){body, &m->c}, (hop_arg[]){N(x)}, 1, NULL, 0, &m->r) == HOP_OK,
          "map");
    check(hop_tracer_output(hop_output_graph_root(m->og), (hop_arg[]){N(m->r.items[0])}, 1) != NULL,
          "output");
    m->in[0] = filled(2, (int64_t[]){rows, cols}, 1.0f);
    m->in[1] = filled(kernel_w ? 2 : 1, ww, 0.5f);
    m->in[2] = filled(1, &cols, 0.25f);
    m->out = hop_tensor_empty(HOP_F32, 2, (int64_t[]){rows, cols});
}

static void
map_case_free(map_case *m)
{
    for (int i = 0; i < 3; i++)
        hop_tensor_release(m->in[i]);
    hop_tensor_release(m->out);
    hop_values_clear(&m->r);
    hop_output_graph_free(m->og);
}

/* ns per row of the fused map plan over rows x cols on `threads` threads. */
static double map_ns_per_row(int64_t rows, int64_t cols, int threads, bool private_tmp);

static void
bench_map(void)
{
    int64_t rows = 10000;
    map_case m;
    map_case_init(&m, rows, 16, false, row_body);
    for (int fuse = 1; fuse >= 0; fuse--) {
        hop_plan *p = lower(m.og, fuse);
        double s = best(p, m.in, 3, &m.out, 1, 20, 5);
        long before = hop_alloc_count();
        hop_tensor *o;
        check(hop_plan_run(p, m.in, 3, &o, 1) == HOP_OK, "run");
        long allocs = hop_alloc_count() - before;
        hop_tensor_release(o);
        printf("map over %lld rows x 16 f32, 3-op body, %-8s  %7.1f ns per row (%ld "
               "allocation%s a run)\n",
               (long long)rows, fuse ? "fused" : "unfused", s * 1e9 / (double)rows, allocs,
               allocs == 1 ? "" : "s");
        hop_plan_free(p);
    }
    map_case_free(&m);
}

/* a = row * w; a - exp(a): a lives in a buffer of the body (a private
 * intermediate of each worker) */
static hop_status
tmp_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    closure *c = ud;
    (void)nin;
    hop_node *a = OP(t, HOP_OP_mul, N(in[0]), N(c->w));
    hop_node *e = a ? OP(t, HOP_OP_exp, N(a)) : NULL;
    hop_node *r = e ? OP(t, HOP_OP_sub, N(a), N(e)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

static double
map_ns_per_row(int64_t rows, int64_t cols, int threads, bool private_tmp)
{
    map_case m;
    map_case_init(&m, rows, cols, false, private_tmp ? tmp_body : row_body);
    hop_runtime_set_threads(threads);
    hop_plan *p = lower(m.og, true);
    int reps = (int)(2000000 / (rows * (cols + 16))) + 3;
    double s = best(p, m.in, 3, &m.out, 1, reps, 7);
    hop_plan_free(p);
    hop_runtime_set_threads(1);
    map_case_free(&m);
    return s * 1e9 / (double)rows;
}

/* relu(matmul(row, W) * sum(row) + b): a reduction and a matmul, which
 * run as prepared kernels (rebased onto each row) rather than fused */
static hop_status
kernel_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    closure *c = ud;
    (void)nin;
    hop_node *m = OP(t, HOP_OP_matmul, N(in[0]), N(c->w));
    hop_node *s = m ? OP(t, HOP_OP_sum, N(in[0]), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *p = s ? OP(t, HOP_OP_mul, N(m), N(s)) : NULL;
    hop_node *a = p ? OP(t, HOP_OP_add, N(p), N(c->b)) : NULL;
    hop_node *r = a ? OP(t, HOP_OP_relu, N(a)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

static void
bench_map_kernels(void)
{
    int64_t rows = 10000, cols = 16;
    map_case m;
    map_case_init(&m, rows, cols, true, kernel_body);
    hop_tensor **in = m.in, *out = m.out;
    for (int threads = 1; threads <= 2; threads++) {
        hop_runtime_set_threads(threads);
        hop_plan *p = lower(m.og, true);
        double s = best(p, in, 3, &out, 1, 20, 7);
        long before = hop_alloc_count();
        check(hop_plan_run_into(p, in, 3, &out, 1) == HOP_OK, "run");
        long allocs = hop_alloc_count() - before;
        printf("map over %lld rows x 16 f32, sum + matmul body, %d thread%s %7.1f ns per row "
               "(%ld allocation%s a run)\n",
               (long long)rows, threads, threads == 1 ? ": " : "s:", s * 1e9 / (double)rows, allocs,
               allocs == 1 ? "" : "s");
        hop_plan_free(p);
    }
    hop_runtime_set_threads(1);

    /* One kernel: prepared for every row, or prepared once and rebased. */
    hop_tensor *res = hop_tensor_empty(HOP_F32, 1, &cols);
    hop_tensor row;
    check(hop_tensor_init_borrowed(&row, in[0], 1, &cols, &cols, 0) == HOP_OK, "row");
    hop_rt_arg args[] = {hop_rt_tensor(&row), hop_rt_tensor(in[1])};
    hop_kernel k;
    for (int rebase = 0; rebase <= 1; rebase++) {
        int64_t n = 200000;
        double b = 1e30;
        check(hop_kernel_prepare(&k, HOP_OP_matmul, args, 2, res) == HOP_OK, "prepare");
        for (int round = 0; round < 5; round++) {
            double t0 = now();
            for (int64_t i = 0; i < n; i++) {
                row.data = (float *)in[0]->data + (i % rows) * cols;
                row.offset = (i % rows) * cols;
                check((rebase ? hop_kernel_rebase(&k, args, 2, res)
                              : hop_kernel_prepare(&k, HOP_OP_matmul, args, 2, res)) == HOP_OK,
                      "rebase");
            }
            double t = (now() - t0) / (double)n;
            b = t < b ? t : b;
        }
        printf("matmul f32[16] @ f32[16, 16] kernel, %-7s for a new row   %7.1f ns\n",
               rebase ? "rebased" : "prepared", b * 1e9);
    }
    hop_tensor_release(res);
    map_case_free(&m);
}

/* Map iterations split over the pool: 1 thread against 2. */
static void
bench_parallel_map(void)
{
    static const struct {
        int64_t rows, cols;
        bool tmp;
        const char *body;
    } cases[] = {
        {10000, 16, false, "3-op body"},
        {10000, 256, false, "3-op body"},
        {10000, 256, true, "a - exp(a), a = x*w"},
        {10000, 1024, false, "3-op body"},
        {100, 16, false, "3-op body"},
        {300, 16, false, "3-op body"},
        {1000, 16, false, "3-op body"},
        {30, 256, false, "3-op body"},
        {100, 256, false, "3-op body"},
    };
    /* Start the pool's worker first: the first thread may be placed on the
     * caller's core for a while. */
    map_ns_per_row(10000, 16, 2, false);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double one = map_ns_per_row(cases[i].rows, cases[i].cols, 1, cases[i].tmp);
        long p0 = hop__parmap_runs();
        double two = map_ns_per_row(cases[i].rows, cases[i].cols, 2, cases[i].tmp);
        bool split = hop__parmap_runs() > p0;
        printf("map over %5lld rows x %4lld f32, %-20s 1 thread %8.1f ns/row, 2 threads "
               "%8.1f ns/row  %.2fx%s\n",
               (long long)cases[i].rows, (long long)cases[i].cols, cases[i].body, one, two,
               one / two, split ? "" : " (sequential: below the threshold)");
    }
}

/* ---------------------------------------------------- invoke_subgraph */

static int traced;

static hop_status
block_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    traced++;
    return row_body(t, ud, in, nin, out);
}

static void
bench_invoke(void)
{
    int64_t cols = 16;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *v = hop_output_graph_add_input(og, "x", HOP_F32, 1, &cols, false);
    closure c = {hop_output_graph_add_input(og, "w", HOP_F32, 1, &cols, false),
                 hop_output_graph_add_input(og, "b", HOP_F32, 1, &cols, false)};
    int calls = 8;
    for (int i = 0; i < calls; i++) {
        hop_values r = {0};
        check(hop_invoke_subgraph(og, (hop_body){block_body, &c}, (hop_arg[]){N(v)}, 1, &r) ==
                  HOP_OK,
              "invoke");
        v = r.items[0];
        hop_values_clear(&r);
    }
    check(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){N(v)}, 1) != NULL, "output");
    hop_plan *p = lower(og, true);
    char *dump = hop_plan_dump(p);
    int routines = 0;
    for (const char *s = dump; (s = strstr(s, "\n-- ")) != NULL; s++)
        routines++;
    hop_free(dump);
    hop_tensor *in[] = {filled(1, &cols, 1.0f), filled(1, &cols, 0.5f), filled(1, &cols, 0.25f)};
    hop_tensor *out = hop_tensor_empty(HOP_F32, 1, &cols);
    double s = best(p, in, 3, &out, 1, 100000, 5);
    printf("invoke_subgraph %d times on 16 f32 (traced %d, compiled into %d subroutine%s)  "
           "%5.1f ns per call\n",
           calls, traced, routines, routines == 1 ? "" : "s", s * 1e9 / calls);
    for (int i = 0; i < 3; i++)
        hop_tensor_release(in[i]);
    hop_tensor_release(out);
    hop_plan_free(p);
    hop_output_graph_free(og);
}

int
main(int argc, char **argv)
{
    /* `bench_plan parallel`: only the 1-thread vs 2-thread map figures */
    bool only_parallel = argc > 1 && strcmp(argv[1], "parallel") == 0;
    hop_runtime_set_threads(1);
    printf("math backend: %s\n", hop_runtime_math_backend());
    if (only_parallel) {
        bench_parallel_map();
        hop_runtime_shutdown();
        return 0;
    }
    bench_bandwidth();
    bench_small_ops();
    bench_map();
    bench_map_kernels();
    bench_parallel_map();
    bench_invoke();
    hop_runtime_shutdown();
    return 0;
}
