/* A user's first hop program: build a one-node graph and print it. */
#include <hop.h>
#include <stdio.h>

int
main(void)
{
    hop_shape_env *env = hop_shape_env_new();
    hop_graph *g = env ? hop_graph_new(env, "forward") : NULL;
    if (g == NULL)
        return 1;
    hop_value_info meta = {.kind = HOP_VALUE_TENSOR};
    int64_t size = 3;
    hop_meta_init(&meta.meta, env, HOP_F32, 1, &size);
    hop_node *x = hop_graph_placeholder(g, "x", &meta);
    hop_arg args[] = {hop_arg_node(x)};
    hop_node *y = hop_graph_call_op(g, HOP_OP_sin, args, 1);
    hop_arg outs[] = {hop_arg_node(y)};
    char *code = hop_graph_output(g, outs, 1) ? hop_graph_code(g) : NULL;
    if (code == NULL) {
        fprintf(stderr, "%s: %s\n", hop_status_name(hop_error_code()), hop_error_message());
        return 1;
    }
    fputs(code, stdout);
    hop_free(code);
    hop_graph_free(g);
    hop_shape_env_free(env);
    return 0;
}
