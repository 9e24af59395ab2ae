/* A user's first hop program: build a one-node graph and print it, then run
 * the runtime's kernels (libm, BLAS) so that every link dependency is needed. */
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

    float xs[3] = {0.0f, 1.0f, 2.0f}, m[4] = {1, 2, 3, 4};
    int64_t msize[] = {2, 2};
    hop_tensor *xt = hop_tensor_wrap(HOP_F32, 1, &size, NULL, xs, sizeof xs, NULL, NULL);
    hop_tensor *mt = hop_tensor_wrap(HOP_F32, 2, msize, NULL, m, sizeof m, NULL, NULL);
    hop_tensor *s = xt ? hop_eager_tensor(HOP_OP_exp, (hop_rt_arg[]){hop_rt_tensor(xt)}, 1) : NULL;
    hop_tensor *mm = mt ? hop_eager_tensor(HOP_OP_matmul,
                                           (hop_rt_arg[]){hop_rt_tensor(mt), hop_rt_tensor(mt)}, 2)
                        : NULL;
    if (s == NULL || mm == NULL) {
        fprintf(stderr, "%s: %s\n", hop_status_name(hop_error_code()), hop_error_message());
        return 1;
    }
    const float *sv = s->data, *mv = mm->data;
    printf("exp(x) = %.4f %.4f %.4f; m @ m = %g %g %g %g\n", sv[0], sv[1], sv[2], mv[0], mv[1],
           mv[2], mv[3]);
    hop_tensor_release(s);
    hop_tensor_release(mm);
    hop_tensor_release(xt);
    hop_tensor_release(mt);
    hop_runtime_shutdown();
    hop_graph_free(g);
    hop_shape_env_free(env);
    return 0;
}
