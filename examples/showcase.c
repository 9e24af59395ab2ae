/*
 * examples/showcase.c - hop's main job, end to end, through the C API.
 *
 * Traces a program whose body closes over outer tensors with symbolic sizes:
 *
 *     def forward(x: f32[s0, s1], y: f32[s1]):
 *         def body():                  # a wrap body: no explicit inputs
 *             def inner():             # nested two levels deep
 *                 return sin(x) + y    # x and y are free here
 *             return inner() * 2
 *         return body()
 *
 * Every free tensor and symbol is lifted, outer-first, into an input of each
 * level, and the graph prints as code and as a table.
 */
#include <hop.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "showcase: %s: %s\n", hop_status_name(hop_error_code()),               \
                    hop_error_message());                                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Pops t, installs its graph in the parent and calls it with the values the
 * parent must pass (the sources of its lifted inputs). */
static hop_node *
call_body(hop_output_graph *og, hop_tracer *t)
{
    hop_graph *body = NULL;
    hop_tracer *parent = hop_tracer_parent(t);
    CHECK(hop_output_graph_pop(og, t, &body) == HOP_OK);
    CHECK(hop_graph_add_subgraph(hop_tracer_graph(parent), body) == HOP_OK);
    hop_arg passed[16];
    size_t n = hop_tracer_nlifted(t);
    for (size_t i = 0; i < n; i++)
        passed[i] = hop_arg_node(hop_tracer_lifted_source(t, hop_tracer_lifted_placeholder(t, i)));
    hop_arg args[] = {hop_arg_graph(body), hop_arg_list(passed, n)};
    hop_node *out = body->output->args[0].u.node;
    hop_node *call = hop_graph_call_hop(hop_tracer_graph(parent), "wrap", args, 2, &out->meta, 1);
    CHECK(call);
    hop_node *item = hop_graph_getitem(hop_tracer_graph(parent), call, 0);
    CHECK(item);
    return item;
}

int
main(void)
{
    hop_output_graph *og = hop_output_graph_new();
    CHECK(og);
    int64_t xs[] = {8, 16}, ys[] = {16};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, xs, true);
    hop_node *y = hop_output_graph_add_input(og, "y", HOP_F32, 1, ys, true);
    CHECK(x && y);

    hop_tracer *body = hop_output_graph_push(og, hop_output_graph_next_name(og, "wrap_body"));
    hop_tracer *inner = hop_output_graph_push(og, hop_output_graph_next_name(og, "wrap_body"));
    CHECK(body && inner);
    hop_node *s = hop_tracer_call_op(inner, HOP_OP_sin, (hop_arg[]){hop_arg_node(x)}, 1);
    CHECK(s);
    hop_node *a =
        hop_tracer_call_op(inner, HOP_OP_add, (hop_arg[]){hop_arg_node(s), hop_arg_node(y)}, 2);
    CHECK(a && hop_tracer_output(inner, (hop_arg[]){hop_arg_node(a)}, 1));
    hop_node *r = call_body(og, inner);
    hop_node *m =
        hop_tracer_call_op(body, HOP_OP_mul, (hop_arg[]){hop_arg_node(r), hop_arg_int(2)}, 2);
    CHECK(m && hop_tracer_output(body, (hop_arg[]){hop_arg_node(m)}, 1));
    hop_node *result = call_body(og, body);
    CHECK(hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){hop_arg_node(result)}, 1));

    hop_graph *root = hop_output_graph_root_graph(og);
    CHECK(hop_graph_verify(root) == HOP_OK);
    char *code = hop_graph_code(root), *table = hop_graph_table(root);
    CHECK(code && table);
    printf("# The traced program: every level takes what it uses as inputs\n\n%s\n", code);
    printf("# As a table\n\n%s\n", table);
    hop_shape_env *env = hop_output_graph_env(og);
    printf("# Guards: %zu\n", hop_shape_env_nguards(env));
    for (size_t i = 0; i < hop_shape_env_nguards(env); i++)
        printf("  %s\n", hop_expr_str(env, hop_shape_env_guard(env, i)));
    hop_free(code);
    hop_free(table);
    hop_output_graph_free(og);
    return 0;
}
