/*
 * examples/repeat_hop.c - defining a new HOP in C: repeat(n, body, x) applies
 * body to x n times (x -> body(x) -> body(body(x)) ...).
 *
 * The whole definition is the class struct `repeat_class` and its two slots;
 * tracing the body in a subtracer, lifting what it closes over, installing
 * the subgraph `repeat_body_N` and emitting the call node come from the
 * PrimHOP base.  docs/DEFINING_A_HOP.md walks through it step by step.
 *
 * Running it takes one more registration: how a call lowers into a plan (a
 * loop over the inlined body with a loop-carried tensor) and how the
 * reference interpreter runs it (hop/lowering.h).  The program is then
 * compiled, run, checked against the interpreter and its plan printed.
 */
#include <hop.h>
#include <hop/lowering.h>

#include <math.h>
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
    if (r->n != 1 || r->items[0]->meta->kind != HOP_VALUE_TENSOR ||
        !hop_meta_equal(&r->items[0]->meta->meta, &x->meta->meta)) {
        char want[96], got[96] = "something else";
        hop_meta_print(&x->meta->meta, want, sizeof want);
        if (r->n == 1 && r->items[0]->meta->kind == HOP_VALUE_TENSOR)
            hop_meta_print(&r->items[0]->meta->meta, got, sizeof got);
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

/* ------------------------------------------------------------ running it */

/* The call is repeat(n, repeat_body_N, (x, lifted...)). */
static hop_status
repeat_lower(hop_lower_ctx *cx, const hop_node *call, void *ud)
{
    (void)ud;
    int64_t n = call->args[0].u.i;
    const hop_graph *body = call->args[1].u.graph;
    const hop_arg *list = &call->args[2];
    hop_pval in[16], carry, out, i;
    if (list->u.list.n > 16)
        return hop_error(HOP_UNSUPPORTED, "repeat: more than 16 inputs");
    for (size_t k = 0; k < list->u.list.n; k++) {
        hop_status st = hop_lower_arg(cx, &list->u.list.items[k], &in[k]);
        if (st != HOP_OK)
            return st;
    }
    /* carry = x; n times: carry = body(carry, ...). */
    hop_status st = hop_lower_dest(cx, 0, &carry);
    if (st == HOP_OK && carry.kind == HOP_PVAL_NONE)
        st = hop_lower_tensor(cx, &call->outs[0], true, &carry);
    if (st == HOP_OK)
        st = hop_lower_copy(cx, carry, in[0]);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, (hop_pval){HOP_PVAL_CONST, -1, n}, &i);
    in[0] = carry;
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, list->u.list.n, NULL, &out, 1);
    if (st == HOP_OK && out.id != carry.id)
        st = hop_lower_copy(cx, carry, out);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st == HOP_OK ? hop_lower_results(cx, &carry, 1) : st;
}

static hop_status
repeat_eager(hop_eager_ctx *ex, const hop_node *call, void *ud)
{
    (void)ud;
    int64_t n = call->args[0].u.i;
    const hop_arg *list = &call->args[2];
    hop_rt_value in[16], cur;
    if (list->u.list.n > 16)
        return hop_error(HOP_UNSUPPORTED, "repeat: more than 16 inputs");
    for (size_t k = 0; k < list->u.list.n; k++) {
        hop_status st = hop_eager_arg(ex, &list->u.list.items[k], &in[k]);
        if (st != HOP_OK)
            return st;
    }
    cur = in[0];
    hop_tensor_retain(cur.tensor);
    for (int64_t i = 0; i < n; i++) {
        hop_rt_value next;
        in[0] = cur;
        hop_status st = hop_eager_graph(ex, call->args[1].u.graph, in, list->u.list.n, &next, 1);
        hop_tensor_release(cur.tensor);
        if (st != HOP_OK)
            return st;
        cur = next;
    }
    return hop_eager_results(ex, &cur, 1);
}

static const hop_lowering repeat_lowering = {repeat_lower, repeat_eager, NULL};

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

    /* Compile, run, and check against the op-by-op interpreter. */
    if (hop_register_lowering(&repeat_class, &repeat_lowering) != HOP_OK)
        return fail("register lowering");
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
    if (hop_graph_run_eager(og, args, 3, &want, 1) != HOP_OK)
        return fail("eager");
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
    if (!same || hop_unregister_lowering(&repeat_class) != HOP_OK)
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
