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
 * (hop.vmap traces f first).  The traced f stays as the call's second body
 * (`vmap(in, out, f_vmap, f, args)`, never run): an outer vmap batches f
 * once over both batches (vmap_batch) instead of batching f_vmap again, whose
 * rules need not batch twice (a compacted cond's nonzero).  The call is
 * differentiated through its first body.
 *
 * hop_vmap_graph lives here: its fallback emits this layer's `map`.
 */
#include "hop/batching.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/layout.h"
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
        char what[128], other[128]; /* printed for an error only */
        if (m->kind != HOP_VALUE_TENSOR || m->meta.rank == 0) {
            hop_value_info_print(m, what, sizeof what);
            return hop_error(HOP_INVALID,
                             "vmap: argument %zu (%s: %s) is batched but has no dim to batch over",
                             i, args[i]->name, what);
        }
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
            hop_value_info_print(m, what, sizeof what);
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
        c->input_meta[i] = hop_value_info_drop_dim(&c->input_meta[i], 0);
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
    st = hop_call_replace_body_keep(c, 0, "_vmap", vmap_build_graph, &vb);
    if (st != HOP_OK)
        return st;
    if (st == HOP_OK) /* out_dims now says which outputs are batched */
        hop_call_param(c, "out_dims")->u.i = vb.out;
    return st;
}

static hop_status
vmap_eval(hop_eval_ctx *ex)
{
    return hop_eval_traced_only(ex, "batch", "hop.vmap traces the function first");
}

/* ------------------------------------------------------------- verifying */

typedef struct vmap_masks {
    int64_t in, out;
} vmap_masks;

/* The batched body (body 0) takes what the call passes and returns its
 * outputs; f on one example (body 1) takes one example of each batched
 * argument (dim 0 removed). */
static bool
vmap_example_in(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const vmap_masks *m = ud;
    (void)call;
    if (body == 1 && bit(m->in, j))
        *want = hop_value_info_drop_dim(want, 0);
    return true;
}

/* f's outputs are not the call's with a dim removed where a SymInt output
 * was batched into a tensor: only the batched body's are checked (f is
 * only ever batched again, by vmap_batch, whose result is verified). */
static bool
vmap_example_out(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    (void)ud, (void)call, (void)j, (void)want;
    return body == 0;
}

/* in_dims names only values the call passes (an outer vmap's rule batches
 * lifted ones too), each batched one has a dim 0 (all of one size), and
 * the bodies are the batched one and, when kept, f on one example. */
static hop_status
vmap_verify(const hop_node *call)
{
    size_t np = hop_node_passed(call, NULL, 0), nbodies = 0;
    vmap_masks m = {hop_node_param(call, "in_dims")->u.i, hop_node_param(call, "out_dims")->u.i};
    if (m.in < 0 || (np < 63 && (m.in >> np) != 0) || m.out < 0)
        return hop_verify_fail(call,
                               "vmap: the mask in_dims %lld names values past the %zu it "
                               "passes, or out_dims %lld is negative",
                               (long long)m.in, np, (long long)m.out);
    const hop_expr *batch = NULL;
    for (size_t i = 0; i < np && i < 63; i++) {
        if (!bit(m.in, i))
            continue;
        const hop_arg *a = hop_node_passed_to(call, i);
        const hop_value_info *v = a->kind == HOP_ARG_NODE ? a->u.node->meta : NULL;
        int64_t p, q;
        if (v == NULL || v->kind != HOP_VALUE_TENSOR || v->meta.rank == 0 ||
            (batch && batch != v->meta.sizes[0] && hop_expr_const_value(batch, &p) &&
             hop_expr_const_value(v->meta.sizes[0], &q) && p != q))
            return hop_verify_fail(call,
                                   "vmap: value %zu is batched but has no dim 0 of the "
                                   "batch's size",
                                   i);
        batch = batch ? batch : v->meta.sizes[0];
    }
    for (size_t i = 0; i < call->nargs; i++)
        nbodies += call->args[i].kind == HOP_ARG_GRAPH;
    if (nbodies > 2)
        return hop_verify_fail(call, "vmap: has %zu bodies; it takes its batched body and f",
                               nbodies);
    hop_status st = hop_verify_inputs(call, vmap_example_in, &m);
    return st == HOP_OK ? hop_verify_outputs(call, vmap_example_out, &m) : st;
}

/* ------------------------------------------------------------ nested vmap */

/* f on one example: the call's second body, or NULL (a call saved before it
 * was kept, or a vmap node made by differentiating one). */
static const hop_graph *
vmap_one(const hop_node *call)
{
    size_t n;
    const hop_arg *bodies = hop_node_graphs(call, &n);
    return n > 1 ? bodies[1].u.graph : NULL;
}

#define N(x) hop_arg_node(x)

/* reshape(v, [lead..., sizes of v from dim `from`]) */
static hop_node *
reshape_lead(hop_graph *g, hop_node *v, const hop_expr *const *lead, int nlead, int from)
{
    if (v == NULL)
        return NULL;
    const hop_meta *m = &v->meta->meta;
    hop_arg items[HOP_MAX_RANK + 2];
    int n = 0;
    for (int d = 0; d < nlead; d++)
        items[n++] = hop_arg_sym(lead[d]);
    for (int d = from; d < m->rank; d++)
        items[n++] = hop_arg_sym(m->sizes[d]);
    hop_arg args[] = {N(v), hop_arg_list(items, (size_t)n)};
    return hop_graph_emit(g, HOP_OP_reshape, args, 2);
}

/* v [B, ...] repeated at a new dim `at` (0 or 1) of size n: [n, B, ...] or
 * [B, n, ...]. */
static hop_node *
expand_at(hop_graph *g, hop_node *v, int at, const hop_expr *n)
{
    hop_arg ua[] = {N(v), hop_arg_int(at)};
    hop_node *u = hop_graph_emit(g, HOP_OP_unsqueeze, ua, 2);
    if (u == NULL)
        return NULL;
    const hop_meta *m = &u->meta->meta;
    hop_arg items[HOP_MAX_RANK + 1];
    for (int d = 0; d < m->rank; d++)
        items[d] = d == at ? hop_arg_sym(n) : hop_arg_int(-1);
    hop_arg ea[] = {N(u), hop_arg_list(items, (size_t)m->rank)};
    return hop_graph_emit(g, HOP_OP_expand, ea, 2);
}

/* The composition of an outer vmap (batch b1) with a vmap node (batch b2):
 * every value passed becomes [b1 * b2, ...] where either batch reaches it. */
typedef struct composed {
    const hop_graph *one; /* f on one example */
    const hop_expr *b1, *b2, *n;
    int64_t in, od;   /* the node's masks */
    int64_t in2, od2; /* the composed node's */
    size_t np;
    hop_arg *vals;   /* the values the composed node passes */
    int *ind;        /* per value: batched at 0 over b1 * b2, or not (-1) */
    hop_graph *body; /* `<f>_vmap_composed` */
} composed;

/* vals and ind: passed value i batched by both batches is reshaped to
 * [b1 * b2, ...], by one of them repeated over the other first, by neither
 * passed whole. */
static hop_status
composed_values(hop_batch_ctx *cx, const hop_node *call, composed *k)
{
    hop_graph *out = hop_batch_out(cx);
    const hop_expr *both[] = {k->n};
    for (size_t i = 0; i < k->np; i++) {
        const hop_arg *a = hop_node_passed_to(call, i);
        k->vals[i] = *a;
        k->ind[i] = -1;
        if (a->kind != HOP_ARG_NODE)
            continue;
        bool outer;
        hop_node *v = hop_batch_value(cx, a->u.node, &outer);
        if (v == NULL)
            return hop_error(HOP_MISUSE, "vmap: %s passes %s before it is defined", call->name,
                             a->u.node->name);
        if (outer || bit(k->in, i)) {
            if (!bit(k->in, i)) /* [B1, ...] -> [B1, B2, ...] */
                v = expand_at(out, v, 1, k->b2);
            else if (!outer) /* [B2, ...] -> [B1, B2, ...] */
                v = expand_at(out, v, 0, k->b1);
            if ((v = reshape_lead(out, v, both, 1, 2)) == NULL)
                return hop_error_code();
            k->in2 |= (int64_t)1 << i;
            k->ind[i] = 0;
        }
        k->vals[i] = N(v);
    }
    return HOP_OK;
}

/* f once over the b1 * b2 examples (`<f>_vmap_composed`), and which of its
 * outputs came out batched (od2); outs gets their metadata. */
static hop_status
composed_body(hop_batch_ctx *cx, const hop_node *call, composed *k, hop_value_info *outs)
{
    hop_graph *out = hop_batch_out(cx);
    int *outd = hop_calloc(call->nouts + 1, sizeof *outd);
    char name[256];
    snprintf(name, sizeof name, "%s_vmap_composed", k->one->name);
    hop_status st = outd ? HOP_OK : hop_error_code();
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++)
        outd[j] = bit(k->od, j) ? 0 : HOP_VMAP_AUTO;
    if (st == HOP_OK && (k->body = hop_graph_new_subgraph(out, name)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_vmap_graph(k->one, k->ind, k->n, outd, k->body);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(out, k->body);
    else
        hop_graph_free(k->body);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        const hop_arg *a = &k->one->output->args[j], *b = &k->body->output->args[j];
        outs[j] = *b->u.node->meta;
        if (b->u.node->meta->meta.rank == a->u.node->meta->meta.rank + 1)
            k->od2 |= (int64_t)1 << j;
    }
    hop_free(outd);
    return st;
}

/* The composed node: leads (in2, od2), its body and f kept for a vmap
 * further out, the values in the groups call passes them in. */
static hop_node *
composed_node(hop_batch_ctx *cx, const hop_node *call, const composed *k, hop_graph *copy,
              const hop_value_info *outs)
{
    hop_layout l;
    if (hop_layout_of(call, &l) != HOP_OK)
        return NULL;
    hop_build *b = hop_build_new(hop_batch_out(cx), &hop_vmap_class);
    hop_status st = b ? hop_build_lead(b, "in_dims", hop_arg_int(k->in2)) : hop_error_code();
    if (st == HOP_OK)
        st = hop_build_lead(b, "out_dims", hop_arg_int(k->od2));
    if (st == HOP_OK)
        st = hop_build_use_body(b, "f", k->body);
    if (st == HOP_OK)
        st = hop_build_keep_body(b, copy);
    if (st == HOP_OK)
        st = hop_build_passed(b, &l, k->vals);
    if (st == HOP_OK)
        return hop_build_emit(b, outs, call->nouts);
    hop_build_free(b);
    return NULL;
}

/* Output j of the composed node c back to [B1, B2, ...]: an output the
 * inner vmap left unbatched but the outer batch reaches is row b2 = 0 of
 * each outer example's rows (so B2 is at least 1: vmap_batch batches the
 * node's body instead when B2 may be 0 and an output is left unbatched);
 * one batched by the inner vmap only is broadcast over B2. */
static hop_status
composed_outputs(hop_batch_ctx *cx, const hop_node *call, const composed *k, hop_node *c)
{
    hop_graph *out = hop_batch_out(cx);
    hop_status st = hop_graph_rename_node(out, c, call->name);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(out, c, j);
        bool outer = true;
        if (v != NULL && bit(k->od2, j)) {
            const hop_expr *lead[] = {k->b1, k->b2};
            v = reshape_lead(out, v, lead, 2, 1);
            if (v != NULL && !bit(k->od, j)) { /* the inner vmap left it unbatched */
                hop_arg sa[] = {N(v), hop_arg_int(1), hop_arg_int(0)};
                v = hop_graph_emit(out, HOP_OP_select, sa, 3);
            }
        } else if (v != NULL && bit(k->od, j)) { /* broadcast by the inner vmap only */
            v = expand_at(out, v, 0, k->b2);
            outer = false;
        } else
            outer = false;
        st = v ? hop_batch_set(cx, call, j, v, outer) : hop_error_code();
    }
    return st;
}

/*
 * The batch slot: an outer vmap (batch B1) reaching a vmap node (batch B2)
 * composes the two batches instead of batching the inner batched body,
 * whose rules need not batch again (the nonzero of a compacted cond has no
 * batch rule): every value passed becomes [B1 * B2, ...] (batched by both:
 * a reshape; by one: repeated over the other first; by neither: passed
 * whole), f on one example is batched once over the B1 * B2 examples, and
 * each output goes back to [B1, B2, ...].  A node without f (saved before f
 * was kept, or made by differentiating a vmap) batches its body as any
 * wrap-like HOP does.  The new body is `<f>_vmap_composed`, so the graph
 * and explain() show it.
 */
static hop_status
vmap_batch(hop_batch_ctx *cx, const hop_node *call)
{
    composed k = {
        .one = vmap_one(call), .b1 = hop_batch_size(cx), .np = hop_node_passed(call, NULL, 0)};
    if (k.one == NULL)
        return hop_batch_bodies(cx, call);
    for (size_t j = 0; j < call->nouts; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR || k.np > 62 || k.np != k.one->nplaceholders)
            return hop_batch_loop(cx, call);
    k.in = hop_node_param(call, "in_dims")->u.i;
    k.od = hop_node_param(call, "out_dims")->u.i;
    for (size_t i = 0; i < k.np && k.b2 == NULL; i++) {
        const hop_arg *a = hop_node_passed_to(call, i);
        if (bit(k.in, i) && a->kind == HOP_ARG_NODE)
            k.b2 = a->u.node->meta->meta.sizes[0];
    }
    if (k.b2 == NULL)
        return hop_error(HOP_INVALID, "vmap: %s batches no value it passes", call->name);
    int64_t b2;
    if (!hop_expr_const_value(k.b2, &b2) || b2 < 1)
        for (size_t j = 0; j < call->nouts; j++)
            if (!bit(k.od, j)) /* no example to take it from (composed_outputs) */
                return hop_batch_bodies(cx, call);
    if ((k.n = hop_sym_mul(hop_batch_out(cx)->env, k.b1, k.b2)) == NULL)
        return hop_error_code();
    k.vals = hop_calloc(k.np + 1, sizeof *k.vals);
    k.ind = hop_calloc(k.np + 1, sizeof *k.ind);
    hop_value_info *outs = hop_calloc(call->nouts + 1, sizeof *outs);
    hop_status st = k.vals && k.ind && outs ? HOP_OK : hop_error_code();
    if (st == HOP_OK)
        st = composed_values(cx, call, &k);
    if (st == HOP_OK)
        st = composed_body(cx, call, &k, outs);
    hop_graph *copy = st == HOP_OK ? hop_batch_copy_body(cx, k.one) : NULL;
    hop_node *c = copy ? composed_node(cx, call, &k, copy, outs) : NULL;
    if (st == HOP_OK)
        st = c ? composed_outputs(cx, call, &k, c) : hop_error_code();
    hop_free(k.vals);
    hop_free(k.ind);
    hop_free(outs);
    return st;
}
#undef N

/* vmap([0, -1], [0], vmap_body_0_vmap, vmap_body_0, (x, w)) */
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
    PUT("], %s, ", hop_node_body(call, "f")->name);
    const hop_graph *one = vmap_one(call);
    if (one)
        PUT("%s, ", one->name);
    PUT("(");
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
    .output_meta = hop_call_body_output_meta,
    .verify = vmap_verify,
    .print = vmap_print,
    .eval = vmap_eval,
    /* the call runs its (batched) body on what it passes */
    .vjp = hop_vjp_first_body,
    .jvp = hop_jvp_first_body,
    /* output i is output i of either body (batched or not) */
    .reach = hop_ad_reach_bodies,
    .batch = vmap_batch,
};
