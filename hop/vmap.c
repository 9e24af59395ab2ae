/*
 * hop/vmap.c - vmap(in_dims, out_dims, f, args): f over a batch of
 * examples, through hop_vmap_graph (hop/batching.h).  Python's hop.vmap is
 * built on it.
 *
 * in_dims is a mask: bit i set means args value i is batched along its dim 0
 * (hop.vmap moves each batched argument's axis there first); every batched
 * value has the same size there, the batch size.  f is traced on one
 * example (fresh inputs, CARRY: a batched value's input has dim 0 removed),
 * then the traced body is replaced by its batched graph, `<body>_vmap`,
 * whose inputs are the values the call passes.  An output of f that depends
 * on a batched value is batched at dim 0; with bit j of out_dims set, output
 * j is batched even when it does not (broadcast), else it stays unbatched.
 * After tracing, out_dims holds what each output is (bit j: batched), so the
 * call prints `vmap([0, -1], [0], vmap_body_0_vmap, (x, w))`.
 *
 * Lowering is the base's (run the batched body), and so is evaluation of a
 * traced graph; an eager call with a host function has nothing to batch
 * (hop.vmap traces f first).  The call is differentiated through its body,
 * and batched again (vmap of vmap) through it.
 *
 * hop_vmap_graph lives here: its fallback emits this layer's `map`.
 */
#include "hop/batching.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>
#include <string.h>

hop_status
hop_vmap_graph(const hop_graph *fwd, const int *in_dims, const hop_expr *size, const int *out_dims,
               hop_graph *out)
{
    return hop_vmap_graph_loop(fwd, in_dims, size, out_dims, &hop_map_class, out);
}

static bool
bit(int64_t mask, size_t i)
{
    return i < 63 && ((mask >> i) & 1);
}

static hop_status
vmap_check_operands(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    size_t nargs;
    hop_node *const *args = hop_call_group(c, "args", &nargs);
    int64_t in = hop_call_param(c, "in_dims")->u.i;
    if (in < 0 || (nargs < 63 && (in >> nargs) != 0))
        return hop_error(HOP_INVALID,
                         "vmap: in_dims mask %lld names an argument past the %zu given",
                         (long long)in, nargs);
    if (in == 0)
        return hop_error(HOP_INVALID, "vmap: no argument is batched (in_dims is all None)");
    const hop_node *first = NULL;
    for (size_t i = 0; i < nargs; i++) {
        if (!bit(in, i))
            continue;
        const hop_value_info *m = args[i]->meta;
        char what[128], other[128];
        hop_value_info_print(m, what, sizeof what);
        if (m->kind != HOP_VALUE_TENSOR || m->meta.rank == 0)
            return hop_error(HOP_INVALID,
                             "vmap: argument %zu (%s: %s) is batched but has no dim to batch over",
                             i, args[i]->name, what);
        if (first == NULL) {
            first = args[i];
            continue;
        }
        bool same;
        st = hop_shape_env_decide_eq(hop_output_graph_env(c->og), m->meta.sizes[0],
                                     first->meta->meta.sizes[0], "vmap", &same);
        if (st != HOP_OK)
            return st;
        if (!same) {
            hop_value_info_print(first->meta, other, sizeof other);
            return hop_error(HOP_SHAPE,
                             "vmap: batched arguments have different sizes: %s is %s but %s is %s",
                             first->name, other, args[i]->name, what);
        }
    }
    return HOP_OK;
}

static hop_status
vmap_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    if (st != HOP_OK)
        return st;
    size_t nargs;
    hop_call_group(c, "args", &nargs);
    int64_t in = hop_call_param(c, "in_dims")->u.i;
    for (size_t i = 0; i < nargs; i++) { /* the args come first */
        if (!bit(in, i))
            continue;
        hop_meta *m = &c->input_meta[i].meta;
        for (int d = 1; d < m->rank; d++)
            m->sizes[d - 1] = m->sizes[d];
        m->rank--;
    }
    return HOP_OK;
}

typedef struct vmap_build {
    int64_t in, out;
    size_t nargs;
    const hop_expr *size;
} vmap_build;

static hop_status
vmap_build_graph(void *ud, const hop_graph *fwd, hop_graph *out)
{
    vmap_build *vb = ud;
    size_t nph = fwd->nplaceholders, nouts = fwd->output->nargs;
    int *in = hop_calloc(nph + 1, sizeof *in), *od = hop_calloc(nouts + 1, sizeof *od);
    hop_status st = in && od ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; i < nph && st == HOP_OK; i++)
        in[i] = i < vb->nargs && bit(vb->in, i) ? 0 : -1;
    for (size_t j = 0; j < nouts && st == HOP_OK; j++)
        od[j] = bit(vb->out, j) ? 0 : HOP_VMAP_AUTO;
    if (st == HOP_OK)
        st = hop_vmap_graph(fwd, in, vb->size, od, out);
    /* which outputs came out batched: one dim more than f's */
    for (size_t j = 0; j < nouts && j < 63 && st == HOP_OK; j++) {
        const hop_arg *a = &fwd->output->args[j], *b = &out->output->args[j];
        if (a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_TENSOR &&
            b->u.node->meta->meta.rank == a->u.node->meta->meta.rank + 1)
            vb->out |= (int64_t)1 << j;
    }
    hop_free(in);
    hop_free(od);
    return st;
}

static hop_status
vmap_signature(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->signature(c);
    if (st != HOP_OK)
        return st;
    vmap_build vb = {.in = hop_call_param(c, "in_dims")->u.i,
                     .out = hop_call_param(c, "out_dims")->u.i};
    hop_node *const *args = hop_call_group(c, "args", &vb.nargs);
    for (size_t i = 0; i < vb.nargs && vb.size == NULL; i++)
        if (bit(vb.in, i))
            vb.size = args[i]->meta->meta.sizes[0];
    st = hop_call_replace_body(c, 0, "_vmap", vmap_build_graph, &vb);
    if (st != HOP_OK)
        return st;
    if (st == HOP_OK) /* out_dims now says which outputs are batched */
        hop_call_param(c, "out_dims")->u.i = vb.out;
    return st;
}

static hop_status
vmap_output_meta(hop_call *c)
{
    return hop_call_body_output_meta(c, 0);
}

static hop_status
vmap_eval(hop_eval_ctx *ex)
{
    if (hop_eval_nouts(ex) == SIZE_MAX)
        return hop_error(HOP_UNSUPPORTED, "vmap: an eager call has no graph to batch; hop.vmap "
                                          "traces the function first");
    return hop_eval_default(ex);
}

/* vmap([0, -1], [0], vmap_body_0_vmap, (x, w)) */
static size_t
vmap_print(const hop_node *call, char *buf, size_t cap)
{
    /* the args, then the values the body lifted (never batched here) */
    size_t n = 0, nargs = hop_node_passed(call, NULL, 0);
    int64_t in = hop_node_param(call, "in_dims")->u.i, out = hop_node_param(call, "out_dims")->u.i;
    const hop_arg *args[64];
    if (nargs > 64)
        nargs = 64;
    hop_node_passed(call, args, nargs);
#define PUT(...) n += (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, __VA_ARGS__)
    PUT("vmap([");
    for (size_t i = 0; i < nargs; i++)
        PUT("%s%d", i ? ", " : "", bit(in, i) ? 0 : -1);
    PUT("], [");
    for (size_t j = 0; j < call->nouts; j++)
        PUT("%s%d", j ? ", " : "", bit(out, j) ? 0 : -1);
    PUT("], %s, (", hop_node_body(call, "f")->name);
    for (size_t i = 0; i < nargs; i++) {
        char a[256];
        hop_arg_print(args[i], HOP_FLOAT_REPR, a, sizeof a);
        PUT("%s%s", i ? ", " : "", a);
    }
    PUT("%s))", nargs == 1 ? "," : "");
#undef PUT
    return n;
}

const hop_class hop_vmap_class = {
    .name = "vmap",
    .params = {{"in_dims", HOP_PARAM_INT},
               {"out_dims", HOP_PARAM_INT},
               {"f", HOP_PARAM_BODY, "vmap_body"},
               {"args", HOP_PARAM_CARRY}},
    .doc = "vmap(in_dims, out_dims, f, args): f over a batch: args value i is batched along its "
           "dim 0 when bit i of the mask in_dims is set; an output that depends on a batched "
           "value is batched at dim 0, and so is output j (broadcast) when bit j of out_dims "
           "is set.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = vmap_check_operands,
    .body_inputs = vmap_body_inputs,
    .signature = vmap_signature,
    .output_meta = vmap_output_meta,
    .print = vmap_print,
    .eval = vmap_eval,
    /* the call runs its (batched) body on what it passes */
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = hop_batch_bodies,
};
