/*
 * examples/repeat_hop.c - using a HOP defined in C (examples/repeat.c,
 * linked in here; Python loads the same file as a library): register it,
 * trace repeat(3, tanh(v * w + b), x) with w and b closed over, compile it,
 * run the plan, check it against the reference interpreter, print the plan.
 */
#include <hop.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const hop_library_descriptor hop_library; /* examples/repeat.c */

/* The friendly entry point, like hop_map for map. */
static hop_status
repeat(hop_output_graph *og, int64_t n, hop_body body, hop_node *x, hop_values *outputs)
{
    const hop_class *cls = hop_find_hop("repeat");
    hop_arg xs = hop_arg_node(x);
    hop_arg args[] = {hop_arg_int(n), hop_arg_list(&xs, 1), hop_arg_list(NULL, 0)};
    return cls ? hop_apply(og, cls, args, 3, &body, 1, outputs) : hop_error_code();
}

/* ----------------------------------------------------------- a program */

/* body(v) = tanh(v * w + b): w and b are closed over, so they are lifted. */
typedef struct layer {
    hop_node *w, *b;
} layer;

static hop_status
layer_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    layer *l = ud;
    (void)n;
    hop_node *m =
        hop_tracer_call_op(t, HOP_OP_mul, (hop_arg[]){hop_arg_node(in[0]), hop_arg_node(l->w)}, 2);
    hop_node *a =
        m ? hop_tracer_call_op(t, HOP_OP_add, (hop_arg[]){hop_arg_node(m), hop_arg_node(l->b)}, 2)
          : NULL;
    hop_node *r = a ? hop_tracer_call_op(t, HOP_OP_tanh, (hop_arg[]){hop_arg_node(a)}, 1) : NULL;
    return r ? hop_values_push(out, r) : hop_error_code();
}

static int
fail(const char *what)
{
    fprintf(stderr, "repeat_hop: %s: %s: %s\n", what, hop_status_name(hop_error_code()),
            hop_error_message());
    return 1;
}

int
main(void)
{
    if (hop_library.init() != HOP_OK)
        return fail("register");
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return fail("new");
    int64_t xs[] = {16, 8}, ws[] = {8};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, xs, true);
    hop_node *w = hop_output_graph_add_input(og, "w", HOP_F32, 1, ws, true);
    hop_node *b = hop_output_graph_add_input(og, "b", HOP_F32, 1, ws, true);
    if (!x || !w || !b)
        return fail("inputs");
    layer l = {w, b};
    hop_values out = {0};
    if (repeat(og, 3, (hop_body){layer_body, &l}, x, &out) != HOP_OK)
        return fail("repeat");
    hop_tracer *root = hop_output_graph_root(og);
    if (hop_tracer_output(root, (hop_arg[]){hop_arg_node(out.items[0])}, 1) == NULL)
        return fail("output");
    hop_graph *g = hop_output_graph_root_graph(og);
    if (hop_graph_verify(g) != HOP_OK)
        return fail("verify");
    char *code = hop_graph_code(g);
    if (code == NULL)
        return fail("print");
    printf("%s", code);

    /* Compile, run, and check against the op-by-op interpreter. */
    hop_plan *plan = hop_lower(og, NULL);
    if (plan == NULL)
        return fail("lower");
    hop_tensor *args[3];
    int64_t sizes[3][2] = {{4, 3}, {3, 0}, {3, 0}};
    for (int k = 0; k < 3; k++) {
        args[k] = hop_tensor_empty(HOP_F32, k == 0 ? 2 : 1, sizes[k]);
        if (args[k] == NULL)
            return fail("tensor");
        float *d = args[k]->data;
        for (int64_t i = 0; i < hop_tensor_numel(args[k]); i++)
            d[i] = (float)(k == 0 ? i % 5 - 2 : k == 1 ? 0.5 : 0.1 * (double)i);
    }
    hop_tensor *got, *want;
    if (hop_plan_run(plan, args, 3, &got, 1) != HOP_OK)
        return fail("run");
    if (hop_graph_eval(og, args, 3, &want, 1) != HOP_OK)
        return fail("eval");
    printf("\nrepeat(3, tanh(v * w + b), x) for x: f32[4, 3] =\n");
    bool same = true;
    for (int64_t r = 0; r < 4; r++) {
        printf("  [");
        for (int64_t c = 0; c < 3; c++) {
            float v = ((float *)got->data)[r * 3 + c];
            same = same && v == ((float *)want->data)[r * 3 + c];
            printf("%s%9.6f", c ? ", " : "", v);
        }
        printf("]\n");
    }
    printf("plan %s the op-by-op interpreter\n", same ? "agrees with" : "DIFFERS FROM");
    char *dump = hop_plan_dump(plan);
    if (dump == NULL)
        return fail("dump");
    printf("\n%s", dump);
    hop_free(dump);
    hop_tensor_release(got);
    hop_tensor_release(want);
    for (int k = 0; k < 3; k++)
        hop_tensor_release(args[k]);
    hop_plan_free(plan);
    if (!same)
        return fail("check");

    /* Wrong use is a clear error, and leaves the graph as it was. */
    hop_values bad = {0};
    hop_body shrink = {layer_body, &(layer){b, b}};
    hop_node *row = hop_tracer_call_op(
        root, HOP_OP_select, (hop_arg[]){hop_arg_node(x), hop_arg_int(0), hop_arg_int(0)}, 3);
    if (row == NULL || repeat(og, -1, shrink, row, &bad) != HOP_INVALID)
        return fail("expected an error for n = -1");
    printf("\nrepeat(-1, ...) -> %s: %s\n", hop_status_name(hop_error_code()), hop_error_message());
    hop_free(code);
    hop_values_clear(&out);
    hop_values_clear(&bad);
    hop_output_graph_free(og);
    return hop_unregister_hop("repeat") == HOP_OK ? 0 : fail("unregister");
}
