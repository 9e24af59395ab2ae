/*
 * hop/autodiff.h - reverse and forward mode as graph transformations, and
 * the contexts through which an op's or a HOP's rule takes part in them.
 *
 * hop_vjp_graph turns a closed graph f(inputs) -> outputs into
 *
 *     f_bwd(inputs..., cotangents...) -> (outputs..., gradients...)
 *
 * and hop_jvp_graph into
 *
 *     f_jvp(inputs..., tangents...) -> (outputs..., output tangents...)
 *
 * Both write into an empty graph the caller gives (a new graph, or the graph
 * of a tracer a HOP pushed), so ownership is the caller's.  A HOP call in f
 * becomes a call of its class's vjp/jvp rule: the rule emits the backward
 * (or tangent) computation of the call, usually the same HOP over bodies
 * transformed with hop_vjp_body/hop_jvp_body, which are installed as
 * subgraphs of the result named after their forward (`cond_true_0_bwd`,
 * `map_body_0_jvp`).  Reverse mode recomputes: a transformed body computes
 * its forward again from its inputs, so no residuals cross a HOP boundary
 * (docs/AUTODIFF.md has the design and each HOP's rule).
 *
 * Differentiable values are float tensors.  Integer and bool tensors and
 * SymInts get no gradient and no tangent: an input asked for with wrt is
 * HOP_DTYPE naming it.  Ops that are not differentiable (comparisons,
 * argmax, integer ops, nonzero, item, ...) pass no gradient, as JAX does.
 */
#ifndef HOP_AUTODIFF_H
#define HOP_AUTODIFF_H

/* The build checks the layering: a layer may include this header only if
 * it links the autodiff layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_AUTODIFF)
#error "hop/autodiff.h belongs to the autodiff layer, which this layer does not link"
#endif

#include "hop/class.h"
#include "hop/rewrite.h" /* hop_jvp_inline is hop_graph_inline of a tangent graph */

#ifdef __cplusplus
extern "C" {
#endif

/* What seeds the reverse pass at one output of the graph. */
typedef enum hop_ct_kind {
    HOP_CT_NONE = 0, /* no cotangent (an integer output, or an aux output) */
    HOP_CT_INPUT,    /* a placeholder of the result, one per such output */
    HOP_CT_ONE,      /* ones of the output's shape (grad of a scalar) */
} hop_ct_kind;

/*
 * Reverse mode.  fwd is a closed graph with an output node (every graph the
 * tracer makes is); out an empty graph (no nodes, no subgraphs) of the same
 * ShapeEnv.  wrt[i] (one per placeholder of fwd) asks for the gradient of
 * placeholder i; cts[j] (one per output) says how output j is seeded (NULL:
 * HOP_CT_INPUT for every float tensor output, NONE for the others).
 *
 * out gets: fwd's placeholders (same names and metadata, in order); then one
 * cotangent placeholder per HOP_CT_INPUT output, named `<output>_ct`, with
 * the output's metadata; nodes; and the output (fwd's outputs..., then the
 * gradient of each wrt placeholder in order, zeros where no path leads).
 * Subgraphs of out are fwd's (copied, same names) and the transformed
 * bodies (`<name>_bwd`).  out is verified.
 *
 * Errors (out is left partly built; free it or drop it): HOP_DTYPE for a
 * wrt input that is not a float tensor or a HOP_CT_INPUT/ONE output that is
 * not one ("grad: input 1 (n: i64[]) is not a float tensor"); HOP_UNSUPPORTED
 * naming the op or HOP that has no rule ("autodiff: the HOP my_loop has
 * no vjp rule"); HOP_MISUSE for bad arguments; whatever a rule returns.
 */
hop_status hop_vjp_graph(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts,
                         hop_graph *out);

/*
 * Forward mode.  out gets fwd's placeholders, then one tangent placeholder
 * per wrt placeholder (`<name>_dot`, the same metadata), and the output
 * (fwd's outputs..., then one tangent per tensor output in order: float
 * outputs their tangent or zeros, integer and bool outputs zeros of their
 * dtype).  SymInt outputs get no tangent.  Errors as hop_vjp_graph.
 */
hop_status hop_jvp_graph(const hop_graph *fwd, const bool *wrt, hop_graph *out);

/*
 * The tangent graph of f (hop_jvp_graph with wrt) inlined into dst:
 * primals[i] bound to f's placeholder i, tangents[i] to its tangent where
 * wrt[i] (other entries are not read).  outputs (room for twice f's output
 * count) gets f's outputs, then one tangent per tensor output.  For rules
 * that build a loop body over values and their tangents.  Errors as
 * hop_jvp_graph and hop_graph_inline (hop/rewrite.h).
 */
hop_status hop_jvp_inline(hop_graph *dst, const hop_graph *f, const bool *wrt,
                          hop_node *const *primals, hop_node *const *tangents, hop_node **outputs);

/*
 * Which outputs of f a (co)tangent passes between: sets reached[j] (one per
 * output of f) for each output j that an input i with from[i] (one per
 * placeholder of f) reaches through the uses of the values it feeds, except
 * through an op whose rule is nondiff (a comparison, argmax, item: they pass
 * none).  An entry already set stays set, so calling it once per body gives
 * the union over a HOP's bodies.  A nested HOP call is asked through its
 * class's reach slot (hop/class.h) which of its outputs the tangents of the
 * values it passes reach: wrap, invoke_subgraph, cond, switch, the vjp/jvp
 * HOPs and a wrap-like class without rules through their bodies
 * (hop_ad_reach_bodies), map the same (its output i stacks body output i),
 * the loops over their carries' fixed point (hop_loop_reach), vmap through
 * its bodies, associative_scan over its combine_fn's fixed point.  A call of
 * a class without a reach slot (a class that sets jvp and not reach), a
 * call with a reached lead, or a foreign call counts
 * every output as reached from every operand: the safe side, since an
 * output counted reached only gets an instantiated zero where a symbolic
 * one would do.  It is the one answer to "which outputs does a tangent
 * reach" for the rules that keep zeros symbolic across a HOP's boundary: a
 * body output no tangent reaches gets none (hop_jvp_bodies, map's and the
 * loop kit's jvp), a loop carry's (co)tangent is read from the step it is
 * reached on (the loop kit's peeled phases).  HOP_MISUSE for a NULL
 * argument, HOP_NOMEM (reached is then partly set).
 */
hop_status hop_ad_reach(const hop_graph *f, const bool *from, bool *reached);

/*
 * A reach slot (hop/class.h) for a HOP whose output i is output i of a body
 * run on the values the call passes (placeholder made_inputs + j for passed
 * value j; a made input has no tangent): hop_ad_reach over each body with
 * from, the union.  A call laid out otherwise (a body with other
 * placeholders, or other outputs than the call's) gets every output reached
 * when any value in from is.  The default of a class whose jvp is
 * hop_jvp_bodies and of a wrap-like class without rules; map sets it.
 * HOP_MISUSE for a NULL argument, HOP_NOMEM.
 */
hop_status hop_ad_reach_bodies(const hop_node *call, const bool *from, bool *reached);

/* ---------------------------------------------------------------- rules */

/*
 * A rule reads the call it transforms (a node of the forward graph) and
 * emits into the graph being built, hop_vjp_out/hop_jvp_out, with the
 * builders of hop/graph.h.  Forward values are mapped to the result with
 * *_primal (every forward node has a copy there, emitted before the rule
 * runs).  Indices i name a call's outputs (0 for a single-value node).
 *
 * Reverse:
 *   hop_vjp_out         the graph being built
 *   hop_vjp_primal      the copy of forward value v (NULL: not a node of fwd)
 *   hop_vjp_active      whether v depends on a wrt input (only active values
 *                       take gradients; a rule skips the others)
 *   hop_vjp_ct          the cotangent of output i of call, or NULL when it
 *                       is zero (nothing downstream reached it)
 *   hop_vjp_accumulate  adds g (a node of the out graph) to the gradient of
 *                       forward value v: summed over broadcast dims down to
 *                       v's shape, converted to v's dtype; ignored for an
 *                       inactive or non-float v
 *   hop_vjp_zeros       zeros with the metadata of a forward value
 *   hop_vjp_body        the transformed version of body (a subgraph of the
 *                       call): hop_vjp_graph with wrt and cts NULL (every
 *                       float output a cotangent input), installed in the
 *                       out graph as `<body>_bwd`; the same (body, wrt) gives
 *                       the same subgraph, so a shared body has one backward
 *   hop_vjp_body_seeded the same with cts (one per output of body, NULL:
 *                       every float output HOP_CT_INPUT): an output whose
 *                       cotangent is zero gets HOP_CT_NONE, a symbolic zero
 *                       (no input, never multiplied by a partial), where a
 *                       tensor of zeros times an infinite partial is nan
 * Forward:
 *   hop_jvp_out, hop_jvp_primal as above
 *   hop_jvp_tangent     the tangent of forward value v, or NULL for zero
 *   hop_jvp_set_tangent sets the tangent of output i of call (t in out)
 *   hop_jvp_zeros       zeros with the metadata of a forward value
 *   hop_jvp_body        hop_jvp_graph of body, installed as `<body>_jvp`
 *   hop_jvp_body_wanted the same with want (one per output of body, NULL:
 *                       every tensor output a tangent output): an output
 *                       with HOP_CT_NONE gets no tangent output, so the
 *                       rule leaves its tangent a symbolic zero
 *                       (hop_ad_reach says which outputs a tangent reaches)
 */
hop_graph *hop_vjp_out(hop_vjp_ctx *cx);
hop_node *hop_vjp_primal(hop_vjp_ctx *cx, const hop_node *v);
bool hop_vjp_active(hop_vjp_ctx *cx, const hop_node *v);
hop_node *hop_vjp_ct(hop_vjp_ctx *cx, const hop_node *call, size_t i);
hop_status hop_vjp_accumulate(hop_vjp_ctx *cx, const hop_node *v, hop_node *g);
hop_node *hop_vjp_zeros(hop_vjp_ctx *cx, const hop_value_info *meta);
hop_status hop_vjp_body(hop_vjp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **bwd);
hop_status hop_vjp_body_seeded(hop_vjp_ctx *cx, const hop_graph *body, const bool *wrt,
                               const hop_ct_kind *cts, hop_graph **bwd);

hop_graph *hop_jvp_out(hop_jvp_ctx *cx);
hop_node *hop_jvp_primal(hop_jvp_ctx *cx, const hop_node *v);
hop_node *hop_jvp_tangent(hop_jvp_ctx *cx, const hop_node *v);
hop_status hop_jvp_set_tangent(hop_jvp_ctx *cx, const hop_node *call, size_t i, hop_node *t);
hop_node *hop_jvp_zeros(hop_jvp_ctx *cx, const hop_value_info *meta);
hop_status hop_jvp_body(hop_jvp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **jvp);
hop_status hop_jvp_body_wanted(hop_jvp_ctx *cx, const hop_graph *body, const bool *wrt,
                               const hop_ct_kind *want, hop_graph **jvp);

/*
 * The rules of a HOP that runs one of its bodies on the values it passes
 * (wrap, cond, switch, invoke_subgraph): the same HOP, with the same leads,
 * over each body's transformed version, passing its values and then the
 * cotangents (tangents).  In forward mode an output that no body computes
 * from a value with a tangent (JAX's union over the branches) gets none: its
 * tangent stays a symbolic zero, and the new call outputs the tangents of
 * the others only (no call at all when there are none).  A class sets them
 * as its vjp/jvp slots; the
 * PrimHOP base uses them for a class that inherits the base's lower and
 * eval (a wrap-like HOP), and is HOP_UNSUPPORTED naming the HOP otherwise.
 */
hop_status hop_vjp_bodies(hop_vjp_ctx *cx, const hop_node *call);
hop_status hop_jvp_bodies(hop_jvp_ctx *cx, const hop_node *call);
/*
 * The same over the call's first body only: the emitted call has that one
 * body (vmap: its second body, the function on one example, describes the
 * first and means nothing for the transformed one, which is not a vmap of
 * it).
 */
hop_status hop_vjp_first_body(hop_vjp_ctx *cx, const hop_node *call);
hop_status hop_jvp_first_body(hop_jvp_ctx *cx, const hop_node *call);

/*
 * The op rules, one column of the op table each (autodiff/op_rules.c and
 * the family files it names):
 * vjp reads hop_vjp_ct(cx, n, 0) (never NULL when called) and accumulates
 * into n's active operands; jvp reads the operands' tangents (at least one
 * not NULL) and sets n's.  Ops that pass no gradient are marked nondiff and
 * have neither.  An op with no entry is HOP_UNSUPPORTED when a gradient
 * must pass through it.
 */
typedef struct hop_op_ad_rule {
    bool nondiff;
    hop_status (*vjp)(hop_vjp_ctx *cx, const hop_node *n);
    hop_status (*jvp)(hop_jvp_ctx *cx, const hop_node *n);
} hop_op_ad_rule;

/* The row of op; NULL outside the table. */
const hop_op_ad_rule *hop_op_ad(hop_op op);

#ifdef __cplusplus
}
#endif
#endif /* HOP_AUTODIFF_H */
