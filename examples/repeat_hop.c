/*
 * examples/repeat_hop.c - defining a new HOP in C: repeat(n, body, x) applies
 * body to x n times (x -> body(x) -> body(body(x)) ...).
 *
 * The whole definition is the class struct `repeat_class` and its two slots;
 * tracing the body in a subtracer, lifting what it closes over, installing
 * the subgraph `repeat_body_N` and emitting the call node come from the
 * PrimHOP base.  docs/DEFINING_A_HOP.md walks through it step by step.
 */
#include <hop.h>

#include <stdio.h>
#include <string.h>

/* Operands: (n: int >= 0, x: tensor).  n becomes the call's leading
 * argument; x is the body's one explicit input. */
static hop_status
repeat_check_operands(hop_call *c)
{
    if (c->noperands != 2 || c->operands[0].kind != HOP_ARG_INT || c->operands[0].u.i < 0)
        return hop_error(HOP_INVALID, "repeat: takes (n, x) with an int n >= 0");
    c->lead[0] = c->operands[0];
    c->nlead = 1;
    c->body_operands = 1;
    /* The base checks that the rest are traced values. */
    return hop_prim_hop_base()->check_operands(c);
}

/* The body's result feeds its next iteration, so it must look exactly like x. */
static hop_status
repeat_output_meta(hop_call *c)
{
    const hop_values *r = &c->results[0];
    const hop_node *x = c->operands[1].u.node;
    if (r->n != 1 || r->items[0]->meta.kind != HOP_VALUE_TENSOR ||
        !hop_meta_equal(&r->items[0]->meta.meta, &x->meta.meta)) {
        char want[96], got[96] = "something else";
        hop_meta_print(&x->meta.meta, want, sizeof want);
        if (r->n == 1 && r->items[0]->meta.kind == HOP_VALUE_TENSOR)
            hop_meta_print(&r->items[0]->meta.meta, got, sizeof got);
        return hop_error(HOP_TRACE,
                         "repeat: the body must return one %s like its input; it "
                         "returns %zu value(s), the first %s",
                         want, r->n, got);
    }
    return hop_prim_hop_base()->output_meta(c);
}

static const hop_hop_class repeat_class = {
    .name = "repeat",
    .nbodies = 1,
    .prefixes = {"repeat_body"},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = repeat_check_operands,
    .output_meta = repeat_output_meta,
    /* every other slot inherits from the PrimHOP base */
};

/* The friendly entry point, like hop_map for map. */
static hop_status
repeat(hop_output_graph *og, int64_t n, hop_body body, hop_node *x, hop_values *outputs)
{
    hop_arg operands[] = {hop_arg_int(n), hop_arg_node(x)};
    return hop_hop_call(og, &repeat_class, operands, 2, &body, 1, outputs);
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
    if (hop_register_hop(&repeat_class) != HOP_OK)
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
