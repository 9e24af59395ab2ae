/*
 * examples/showcase.c - hop's main job, through the C API: trace a program
 * with nested cond / map / wrap / invoke_subgraph whose bodies close over
 * outer tensors and symbolic sizes, and print the graph.
 *
 *     def forward(x: f32[s0, s1], w: f32[s1], b: f32[s1]):
 *         def block(v):                       # invoke_subgraph: traced once
 *             return relu(v * w + b)          # w, b closed over
 *         def body():                         # wrap, closes over x
 *             def pos(): return map(lambda row: block(row) + b, x)
 *             def neg(): return -x
 *             return cond(x.sum() > 0, pos, neg)
 *         return wrap(body)
 *
 * Every free tensor and symbol is lifted, outer-first, into an input of each
 * level.
 */
#include <hop.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct program {
    hop_node *x, *w, *b;
} program;

#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))
#define N hop_arg_node

static hop_status
push(hop_values *out, hop_node *v)
{
    return v ? hop_values_push(out, v) : hop_error_code();
}

static hop_status
block(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    program *p = ud;
    (void)n;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    hop_node *a = m ? OP(t, HOP_OP_add, N(m), N(p->b)) : NULL;
    return push(out, a ? OP(t, HOP_OP_relu, N(a)) : NULL);
}

static hop_status
row_fn(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    program *p = ud;
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
pos(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    program *p = ud;
    (void)in;
    (void)n;
    hop_values r = {0};
    hop_status st = hop_map(hop_output_graph_of(t), (hop_body){row_fn, p}, (hop_arg[]){N(p->x)}, 1,
                            NULL, 0, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
neg(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    program *p = ud;
    (void)in;
    (void)n;
    return push(out, OP(t, HOP_OP_neg, N(p->x)));
}

static hop_status
body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    program *p = ud;
    (void)in;
    (void)n;
    hop_node *s = OP(t, HOP_OP_sum, N(p->x), hop_arg_none(), hop_arg_bool(false));
    hop_node *pred = s ? OP(t, HOP_OP_gt, N(s), hop_arg_int(0)) : NULL;
    if (pred == NULL)
        return hop_error_code();
    hop_values r = {0};
    hop_status st = hop_cond(hop_output_graph_of(t), N(pred), (hop_body){pos, p},
                             (hop_body){neg, p}, NULL, 0, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static void
check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "showcase: %s: %s: %s\n", what, hop_status_name(hop_error_code()),
                hop_error_message());
        exit(1);
    }
}

int
main(void)
{
    hop_output_graph *og = hop_output_graph_new();
    check(og != NULL, "new");
    int64_t xs[] = {128, 16}, ws[] = {16};
    program p = {
        .x = hop_output_graph_add_input(og, "x", HOP_F32, 2, xs, true),
        .w = hop_output_graph_add_input(og, "w", HOP_F32, 1, ws, true),
        .b = hop_output_graph_add_input(og, "b", HOP_F32, 1, ws, true),
    };
    check(p.x && p.w && p.b, "inputs");
    hop_values r = {0};
    check(hop_wrap(og, (hop_body){body, &p}, NULL, 0, &r) == HOP_OK, "trace");
    check(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){N(r.items[0])}, 1) != NULL,
          "output");
    hop_graph *root = hop_output_graph_root_graph(og);
    check(hop_graph_verify(root) == HOP_OK, "verify");

    char *code = hop_graph_code(root);
    check(code != NULL, "print");
    printf("# Traced: every body takes what it closes over as explicit inputs\n\n%s\n", code);
    hop_free(code);

    hop_shape_env *env = hop_output_graph_env(og);
    printf("# Root inputs and where they come from\n\n");
    for (size_t i = 0; i < hop_output_graph_ninputs(og); i++) {
        hop_source src;
        hop_node *in = hop_output_graph_input(og, i, &src);
        if (src.kind == HOP_SOURCE_SIZE)
            printf("  %-3s = size(%s, %zu)\n", in->name,
                   hop_output_graph_input(og, src.input, NULL)->name, src.dim);
        else
            printf("  %-3s = argument %zu\n", in->name, src.position);
    }
    printf("\n# Guards: %zu\n", hop_shape_env_nguards(env));
    for (size_t i = 0; i < hop_shape_env_nguards(env); i++)
        printf("  %s\n", hop_expr_str(env, hop_shape_env_guard(env, i)));
    hop_values_clear(&r);
    hop_output_graph_free(og);
    return 0;
}
