/*
 * hop/batching.h - vmap as a graph transformation, and the context through
 * which an op's or a HOP's batch rule takes part in it.
 *
 * hop_vmap_graph turns a closed graph f(inputs) -> outputs, traced on one
 * example, into the graph of f over a batch of examples:
 *
 *     f_vmap(inputs with a batch dim where in_dims says) -> outputs with a
 *                                                           batch dim where
 *                                                           out_dims says
 *
 * It writes into an empty graph the caller gives, like hop_vjp_graph.  Inside,
 * every batched value carries its batch dim at position 0 (moved there on
 * entry); an unbatched value stays unbatched and is never broadcast to the
 * batch unless an op needs it so (JAX's batching).  Each op has a rule (a
 * column of the op table, batching/op_rules.c); a HOP call with a batched
 * operand goes to its class's batch slot, or, for a HOP whose lowering and
 * evaluation are the base's (wrap-like), to hop_batch_bodies, or else falls
 * back to a loop: a `map` over the batch whose body makes the call on one
 * example (hop_batch_loop).  docs/VMAP.md has the design and each rule.
 */
#ifndef HOP_BATCHING_H
#define HOP_BATCHING_H

/* The build checks the layering: a layer may include this header only if
 * it links the batching layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_BATCHING)
#error "hop/batching.h belongs to the batching layer, which this layer does not link"
#endif

#include "hop/class.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * fwd is a closed graph with an output node; out an empty graph of the same
 * ShapeEnv.  in_dims[i] (one per placeholder of fwd) is the dim of input i
 * that is the batch (0 .. rank of the batched input - 1), or -1 for an input
 * that is not batched.  size is the batch size (a SymInt of fwd's env).
 * out_dims[j] (one per output) is where output j's batch dim goes (0 ..
 * rank), -1 for an output that must not depend on a batched input, or
 * HOP_VMAP_AUTO: batched at 0 when it depends on a batched input, else left
 * unbatched (the vmap HOP's outputs; the caller reads which from the
 * output's rank).  An
 * output that does not depend on one but has a batch dim is broadcast
 * (expanded) to the batch, as JAX does.  (Python's hop.vmap turns negative
 * axes and None into these.)
 *
 * out gets fwd's placeholders (same names; a batched one with a dim of
 * `size` inserted at in_dims[i]), nodes, and the output (fwd's outputs with
 * their batch dims where out_dims says).  Subgraphs of out are fwd's
 * (copied, same names), batched bodies (`<body>_vmap`) and the bodies of the
 * loops of the fallback (`<call>_vmap_loop`).  out is verified.
 *
 * hop_vmap_graph is defined by the HOP layer (hop/vmap.c), which knows the
 * `map` HOP the fallback emits; hop_vmap_graph_loop takes the loop class
 * (NULL: a HOP with no batch rule is HOP_UNSUPPORTED).
 *
 * Errors (out is left partly built; free it or drop it): HOP_INVALID for an
 * in_dims/out_dims out of range, a batched input that is not a tensor, an
 * output with out dim -1 that depends on a batched input ("vmap:
 * output 0 (add) is batched but its out dim is None"); HOP_UNSUPPORTED
 * naming the op or HOP that has no rule ("vmap: item of a batched value is
 * data-dependent per example"); HOP_MISUSE for bad arguments; whatever a
 * rule or a builder returns.
 */
#define HOP_VMAP_AUTO (-2)

hop_status hop_vmap_graph(const hop_graph *fwd, const int *in_dims, const hop_expr *size,
                          const int *out_dims, hop_graph *out);
hop_status hop_vmap_graph_loop(const hop_graph *fwd, const int *in_dims, const hop_expr *size,
                               const int *out_dims, const hop_class *loop, hop_graph *out);

/* ---------------------------------------------------------------- rules */

/*
 * A rule reads the node it batches (a node of fwd) and emits into
 * hop_batch_out with the builders of hop/graph.h.  Every operand has been
 * batched before the rule runs:
 *
 *   hop_batch_out          the graph being built
 *   hop_batch_size         the batch size
 *   hop_batch_value        the value standing for fwd value v in out, and
 *                          whether it is batched (then its dim 0 is the
 *                          batch and its other dims are v's); NULL when v
 *                          is not a node of fwd
 *   hop_batch_set          sets output i of fwd node n (0 for a single
 *                          value) to v, batched or not
 *   hop_batch_broadcast    an unbatched value of out expanded to the batch
 *                          (a new dim 0 of hop_batch_size)
 *   hop_batch_body         the batched version of body (a subgraph of the
 *                          call): hop_vmap_graph with in_dims 0 where
 *                          batched[i] and not batched elsewhere, every
 *                          tensor output batched at 0; installed in out as
 *                          `<body>_vmap`, one per (body, batched), so a
 *                          shared body has one batched version
 *   hop_batch_copy_body    body (a subgraph of the call) copied as it is
 *                          into out, once, under its own name (vmap keeps
 *                          its unbatched f this way); NULL on error
 *
 * A HOP rule sets every output of the call.
 */
hop_graph *hop_batch_out(hop_batch_ctx *cx);
const hop_expr *hop_batch_size(hop_batch_ctx *cx);
hop_node *hop_batch_value(hop_batch_ctx *cx, const hop_node *v, bool *batched);
hop_status hop_batch_set(hop_batch_ctx *cx, const hop_node *n, size_t i, hop_node *v, bool batched);
hop_node *hop_batch_broadcast(hop_batch_ctx *cx, hop_node *v);
hop_status hop_batch_body(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                          hop_graph **vmapped);
hop_graph *hop_batch_copy_body(hop_batch_ctx *cx, const hop_graph *body);

/*
 * For rules that choose which outputs of a body are batched (the loops:
 * a carry's batching is a fixed point over the body):
 *
 *   hop_batch_depends      out_batched[j] (one per output of body): whether
 *                          output j depends on an input with batched[i]
 *                          (a tensor output only; SymInts never are).
 *                          Batches body into a scratch graph it frees
 *   hop_batch_body_outs    hop_batch_body with output j batched at 0 where
 *                          out_batched[j] (broadcast when it does not
 *                          depend on a batched input) and unbatched
 *                          elsewhere (HOP_INVALID when it depends on one);
 *                          out_batched NULL: hop_batch_body.  Memoised per
 *                          (body, batched, out_batched)
 *   hop_batch_graph        the batched graph of body into g, an empty graph
 *                          (a subgraph made with hop_graph_new_subgraph of
 *                          hop_batch_out, not installed): hop_vmap_graph
 *                          with in_dims 0 where batched, out_dims as
 *                          given, the context's size and loop class.  For a
 *                          rule that builds a new body around a batched one
 *                          (hop_graph_inline it, then free g)
 */
/*
 * For rules that read a call's operands and emit the call again (with
 * hop/layout.h's builder):
 *
 *   hop_batch_operands     per input j of call's bodies (its layout), the
 *                          value standing for what the call passes there in
 *                          ops[j] and whether it is batched in batched[j];
 *                          NULL and false for the inputs the HOP makes.
 *                          HOP_MISUSE naming a value with none
 *   hop_batch_meta         v with a batch dim of hop_batch_size at 0
 *   hop_batch_outputs      sets output j of call to getitem j of c, batched
 *                          where batched[j] (NULL: every tensor output),
 *                          after c is renamed after call
 */
hop_status hop_batch_operands(hop_batch_ctx *cx, const hop_node *call, hop_node **ops,
                              bool *batched);
hop_value_info hop_batch_meta(hop_batch_ctx *cx, const hop_value_info *v);
hop_status hop_batch_outputs(hop_batch_ctx *cx, const hop_node *call, hop_node *c,
                             const bool *batched);

/*
 * hop_batch_carries: the carries' batching of a loop body whose
 * placeholders at .. at + n - 1 are the carries and whose outputs 0 .. n - 1
 * their next values: batched (one per placeholder) is updated in place to
 * the least fixed point (JAX's batching of scan/while): a carry unbatched
 * on entry that its next value makes batched is batched, and the body
 * re-examined.  hop_batch_movedim: v (a value of hop_batch_out) with dim
 * `from` moved to `to` (a permute; v itself when equal).
 */
hop_status hop_batch_carries(hop_batch_ctx *cx, const hop_graph *body, bool *batched, size_t at,
                             size_t n);
hop_node *hop_batch_movedim(hop_batch_ctx *cx, hop_node *v, int from, int to);
hop_status hop_batch_depends(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                             bool *out_batched);
hop_status hop_batch_body_outs(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                               const bool *out_batched, hop_graph **vmapped);
hop_status hop_batch_graph(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                           const int *out_dims, hop_graph *g);

/*
 * hop_batch_masked_body: the body `<body>_vmap` (installed in
 * hop_batch_out) of a loop whose lanes finish at different times:
 * while_loop's batched predicate, fori_loop's batched bounds.  body's
 * outputs are the next values of its carries, placeholders at .. at + nout
 * - 1; batched (one per placeholder) has every carry batched.  The new body
 * takes body's inputs (names as body's), then one input per non-NULL
 * lanes->extra[k] (named lanes->extra_names[k], with its metadata: a value
 * of hop_batch_out the caller passes as an extra lifted value), and returns
 *
 *     where(mask, step(inputs)[j], carry j)       for each carry j
 *
 * step being body batched (hop_batch_graph, every output at 0), inlined,
 * and mask the bool [B] of the lanes still running (reshaped to [B, 1, ..]
 * against each carry): a finished lane keeps its carries, the step's
 * results on it discarded.  The step reads each float input through
 * mask_gradient(x, mask) (an unbatched one broadcast to the batch first),
 * so a finished lane gets no gradient from the step it ran for nothing (a
 * zero cotangent times an infinite derivative there would be nan).
 * lanes->build(arg, g, in, extra, &mask) makes mask in the new body g from
 * its inputs, before the step's nodes: in (standing for body's) and extra
 * (extra[k] for lanes->extra[k], NULL for a NULL one).  Errors: HOP_MISUSE
 * for bad arguments; what hop_batch_graph, the builders or build return
 * (nothing installed).
 */
typedef struct hop_batch_lanes {
    hop_status (*build)(void *arg, hop_graph *g, hop_node *const *in, hop_node *const *extra,
                        hop_node **mask);
    void *arg; /* passed to build */
    size_t nextra;
    const char *const *extra_names;
    hop_node *const *extra;
} hop_batch_lanes;

hop_status hop_batch_masked_body(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                                 size_t at, const hop_batch_lanes *lanes, hop_graph **vmapped);

/*
 * The rule of a HOP that runs one of its bodies on the values it passes
 * (wrap, invoke_subgraph, vjp, jvp, a vmap node without its kept f: vmap's
 * own slot composes the batches otherwise, hop/vmap.c): the same HOP, with
 * the same leads, over each body's batched version; every tensor output
 * batched.
 * A batched lead (a value of the HOP itself), or a body that cannot be
 * batched (HOP_UNSUPPORTED), falls back to hop_batch_loop.
 */
hop_status hop_batch_bodies(hop_batch_ctx *cx, const hop_node *call);

/*
 * The fallback for a HOP (or foreign kernel) call with no rule: a loop, the
 * `map` HOP over the batch, whose body (`<call>_vmap_loop`) makes the call
 * on one example (batched operands sliced, the others passed whole); every
 * output batched.  Correct for any call, one example at a time.
 * hop_batch_is_loop tells such a map node from others (for explain()).
 * HOP_UNSUPPORTED when the context has no loop class or the call returns a
 * SymInt.
 */
hop_status hop_batch_loop(hop_batch_ctx *cx, const hop_node *call);
bool hop_batch_is_loop(const hop_node *n);

/*
 * The op rules, one column of the op table (batching/op_rules.c).  batch is
 * called only when an operand of n is batched; it sets n's value.  An op with
 * no batch function has `unsupported`, the reason given in its error.  Ops
 * with no tensor operand (the factories) are never batched.
 */
typedef struct hop_op_batch_rule {
    hop_status (*batch)(hop_batch_ctx *cx, const hop_node *n);
    const char *unsupported;
} hop_op_batch_rule;

/* The row of op; NULL outside the table. */
const hop_op_batch_rule *hop_op_batch(hop_op op);

#ifdef __cplusplus
}
#endif
#endif /* HOP_BATCHING_H */
