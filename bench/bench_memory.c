/*
 * bench/bench_memory.c - what graphs and plans cost in memory: bytes per
 * graph node (everything hop allocates for an OutputGraph holding a chain of
 * ops, arena slack included, divided by the nodes), the same for nodes
 * inside nested wrap bodies, and allocations per map iteration (the
 * difference between a plan run over many rows and over few, per row).
 *
 * Counts through a hop_set_allocator hook that records each block's size,
 * plus what glibc's malloc adds to it (an 8-byte header, 16-byte granules,
 * 32 bytes at least), so the figure is the memory really held.  Prints
 * figures; asserts nothing.
 */
#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N hop_arg_node
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

/* Each block carries its size in front, aligned like malloc's. */
typedef union header {
    size_t size;
    max_align_t align;
} header;

static size_t live_bytes;

/* The bytes malloc holds for a request of n (glibc's chunk size). */
static size_t
held(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

static void *
counting_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    header *h = ptr ? (header *)ptr - 1 : NULL;
    size_t old = h ? held(h->size) : 0;
    if (nsize == 0) {
        live_bytes -= old;
        free(h);
        return NULL;
    }
    header *n = realloc(h, sizeof *n + nsize);
    if (n == NULL)
        return NULL;
    live_bytes += held(nsize) - old;
    n->size = nsize;
    return n + 1;
}

static void
check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench_memory: %s: %s: %s\n", what, hop_status_name(hop_error_code()),
                hop_error_message());
        exit(1);
    }
}

/* A chain of n elementwise ops on x and y in tracer t. */
static hop_node *
chain(hop_tracer *t, hop_node *x, hop_node *y, int n)
{
    static const hop_op ops[] = {HOP_OP_add, HOP_OP_mul, HOP_OP_sub, HOP_OP_maximum};
    for (int i = 0; i < n && x != NULL; i++)
        x = OP(t, ops[i % 4], N(x), N(y));
    return x;
}

/* Bytes per node of a root graph with `nodes` ops on two f32[s0, s1]
 * inputs (two symbols, so nodes carry symbolic metadata). */
static void
bench_root(int nodes)
{
    size_t before = live_bytes;
    hop_output_graph *og = hop_output_graph_new();
    check(og != NULL, "new");
    int64_t sizes[] = {8, 16};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, sizes, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 2, sizes, true);
    size_t empty = live_bytes;
    hop_tracer *t = hop_output_graph_root(og);
    hop_node *v = chain(t, x, y, nodes);
    check(v != NULL && hop_tracer_output(t, (hop_arg[]){N(v)}, 1) != NULL, "trace");
    size_t full = live_bytes;
    printf("graph of %5d ops, root graph        %6.0f bytes per node  (%zu bytes in all, "
           "%zu empty)\n",
           nodes, (double)(full - empty) / (nodes + 1), full - before, empty - before);
    hop_output_graph_free(og);
}

typedef struct nest {
    int depth, per_level;
} nest;

/* A wrap body: per_level ops on its input and a lifted outer value, then
 * (while depth remains) another wrap inside. */
static hop_status
wrap_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    nest *c = ud;
    (void)nin;
    hop_node *v = chain(t, in[0], in[0], c->per_level);
    if (v == NULL)
        return hop_error_code();
    if (c->depth > 1) {
        nest inner = {c->depth - 1, c->per_level};
        hop_values r = {0};
        hop_status st = hop_wrap(hop_output_graph_of(t), (hop_body){wrap_body, &inner},
                                 (hop_arg[]){N(v)}, 1, &r);
        if (st != HOP_OK)
            return st;
        v = r.items[0];
        hop_values_clear(&r);
    }
    return hop_values_push(out, v);
}

/* Bytes per node (all graphs' nodes counted) of `depth` nested wraps with
 * per_level ops each. */
static void
bench_nested(int depth, int per_level)
{
    hop_output_graph *og = hop_output_graph_new();
    check(og != NULL, "new");
    int64_t sizes[] = {8, 16};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, sizes, true);
    size_t empty = live_bytes;
    nest c = {depth, per_level};
    hop_values r = {0};
    check(hop_wrap(og, (hop_body){wrap_body, &c}, (hop_arg[]){N(x)}, 1, &r) == HOP_OK, "wrap");
    check(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){N(r.items[0])}, 1) != NULL,
          "output");
    hop_values_clear(&r);
    /* ops + per body: its placeholders (the input and the two size symbols
     * lifted for it), wrap call, getitem, output; counted, not assumed */
    size_t nodes = hop_graph_tree_nodes(hop_output_graph_root_graph(og)) - 1; /* x is not new */
    printf("graph of %5zu nodes in %d nested wraps %6.1f bytes per node\n", nodes, depth,
           (double)(live_bytes - empty) / (double)nodes);
    hop_output_graph_free(og);
}

static hop_status
row_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    hop_node **wb = ud;
    (void)nin;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(wb[0]));
    hop_node *a = m ? OP(t, HOP_OP_add, N(m), N(wb[1])) : NULL;
    hop_node *r = a ? OP(t, HOP_OP_relu, N(a)) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

static hop_tensor *
filled(int rank, const int64_t *sizes)
{
    hop_tensor *t = hop_tensor_zeros(HOP_F32, rank, sizes);
    check(t != NULL, "tensor");
    return t;
}

/* Allocations of one hop_plan_run of map over `rows` rows (dynamic rows). */
static long
map_run_allocs(hop_plan *p, int64_t rows)
{
    int64_t cols = 16;
    hop_tensor *in[] = {filled(2, (int64_t[]){rows, cols}), filled(1, &cols), filled(1, &cols)};
    hop_tensor *o;
    check(hop_plan_run(p, in, 3, &o, 1) == HOP_OK, "run"); /* warm: caches filled */
    hop_tensor_release(o);
    long before = hop_alloc_count();
    check(hop_plan_run(p, in, 3, &o, 1) == HOP_OK, "run");
    long allocs = hop_alloc_count() - before;
    hop_tensor_release(o);
    for (int i = 0; i < 3; i++)
        hop_tensor_release(in[i]);
    return allocs;
}

static void
bench_map_allocs(void)
{
    int64_t cols = 16;
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, (int64_t[]){100, cols}, true);
    hop_node *wb[] = {hop_output_graph_add_input(og, "w", HOP_F32, 1, &cols, true),
                      hop_output_graph_add_input(og, "b", HOP_F32, 1, &cols, true)};
    hop_values r = {0};
    check(hop_map(og, (hop_body){row_body, wb}, (hop_arg[]){N(x)}, 1, NULL, 0, &r) == HOP_OK,
          "map");
    check(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){N(r.items[0])}, 1) != NULL,
          "output");
    hop_values_clear(&r);
    for (int fuse = 1; fuse >= 0; fuse--) {
        hop_lower_options o = {.no_fusion = !fuse};
        hop_plan *p = hop_lower(og, &o);
        check(p != NULL, "lower");
        long few = map_run_allocs(p, 100), many = map_run_allocs(p, 100000);
        printf("map, 3-op body, %-8s  %ld allocations a run over 100 rows, %ld over 100000: "
               "%.4f per iteration\n",
               fuse ? "fused" : "unfused", few, many, (double)(many - few) / (100000 - 100));
        hop_plan_free(p);
    }
    hop_output_graph_free(og);
}

int
main(void)
{
    /* The HOP registry is a process-lifetime table made on first use: made
     * here, before the hook, it is neither counted nor lost. */
    check(hop_find_hop("wrap") != NULL, "registry");
    hop_set_allocator(counting_alloc, NULL);
    hop_runtime_set_threads(1);
    bench_root(1000);
    bench_root(10000);
    bench_root(100000);
    bench_nested(10, 100);
    bench_map_allocs();
    hop_runtime_shutdown();
    hop_set_allocator(NULL, NULL);
    return 0;
}
