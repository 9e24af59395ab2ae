/*
 * hop/loop_kit.h - the kit for HOPs that carry values through iterations:
 * while_loop, fori_loop and scan are built on it, and so are the loops of
 * examples/ (fold, repeat), as any outside author's would be.
 *
 * What a loop HOP has in common is in here once, for every stage:
 *
 *   tracing    the checks that a body returns each carry as it entered and
 *              that a condition is a bool scalar, the outputs of a loop
 *              (the carries, a SymInt's value a fresh unbacked symbol);
 *   verifying  the same checks on a call node, for the class's verify slot;
 *   eval       the same checks on concrete values, and the carry-evaluation
 *              loop: the body run step after step with the current carries
 *              (hop_eval_loop);
 *   autodiff   reverse mode of any loop as scans (hop_loop_vjp: an augmented
 *              forward scan that stacks the carries each step starts from,
 *              then a scan the other way running the step's backward), and
 *              forward mode as the same HOP over the step's tangent twin
 *              (hop_loop_jvp).
 *
 * The messages name the HOP the user called (`fold: carry 0 enters as
 * f32[3] but f returns f32[1]`).  Batching: hop_loop_batch (the loop again
 * over its bodies batched), built on hop/batching.h's hop_batch_carries
 * (which carries a batch reaches: a fixed point over the body); a loop
 * whose lanes finish at different times is hop_loop_batch_masked (every
 * carry batched, the step masked per lane: hop_batch_masked_body).
 *
 * Stability: these functions are public API in the same sense as the rest
 * of include/hop/, and a library of HOPs compiled against them keeps
 * working while HOP_ABI_VERSION (hop/prim_hop.h) does not change.  The
 * graphs hop_loop_vjp and hop_loop_jvp emit (their node and subgraph names,
 * the placement of the stacked carries) are not: they are documented in
 * docs/AUTODIFF.md and may change between versions, as any transformed
 * graph may.
 */
#ifndef HOP_LOOP_KIT_H
#define HOP_LOOP_KIT_H

#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/eval.h"
#include "hop/layout.h"
#include "hop/prim_hop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- tracing */

/*
 * Each returns HOP_OK or an error naming the HOP (c->cls->name), the function
 * (fn: "body_fn") and the carry, leaving the state to the protocol's undo.
 *
 * hop_call_check_pred     body's results are one bool scalar (a bool tensor
 *                         of one element, or a SymBool).
 * hop_call_check_carries  body's first ncarry results come back as the
 *                         explicit inputs from c->input_meta[first] went in:
 *                         kind, dtype, rank and sizes decided equal
 *                         (`while_loop: carry 1 enters as f32[s0, 4] but
 *                         body_fn returns f32[s0, 5]`); more results only
 *                         when `more` (a scan's ys), else `fori_loop:
 *                         body_fun returns 3 values for 2 carries`.
 * hop_call_slice_inputs   the body sees inputs first..first+n-1 (a scan's
 *                         xs) one slice at a time: dim (negative: from the
 *                         end) removed from their metadata, for a
 *                         body_inputs slot after the base's.  HOP_MISUSE
 *                         when one is not a tensor with that dim (the
 *                         operand check comes first).
 * hop_call_carry_outputs  c->outs: the carries as they entered, a SymInt's
 *                         value a fresh unbacked symbol, with room for extra
 *                         more outputs the caller fills (c->nouts = ncarry).
 *                         (hop_call_bind_outputs, hop/prim_hop.h, binds
 *                         their symbols in the caller: the installed slot.)
 */
hop_status hop_call_check_pred(hop_call *c, size_t body, const char *fn);
hop_status hop_call_check_carries(hop_call *c, size_t body, size_t first, size_t ncarry, bool more,
                                  const char *fn);
hop_status hop_call_slice_inputs(hop_call *c, size_t first, size_t n, int64_t dim);
hop_status hop_call_carry_outputs(hop_call *c, size_t first, size_t ncarry, size_t extra);

/*
 * For loops that slice their xs along a dim (scan, associative_scan), in
 * every stage:
 *
 * hop_loop_dim     dim (negative: counted from the end) of a value of rank
 *                  rank, as an index 0..rank-1; -1 when out of range.
 * hop_loop_xs_dim  *d = hop_loop_dim of xs value i (called name: its node's
 *                  name) whose metadata is x; HOP_SHAPE when x is not a
 *                  tensor with that dim (*d is -1 then), naming the HOP hop
 *                  (`scan: xs 0 (x) is f32[3], which has no dim 1`): what
 *                  tracing and verifying both refuse.
 */
int hop_loop_dim(int64_t dim, int rank);
hop_status hop_loop_xs_dim(const char *hop, size_t i, const char *name, const hop_value_info *x,
                           int64_t dim, int *d);

/* -------------------------------------------------------------- verifying */

/*
 * The same checks on a loop's call node, for its verify slot (hop/class.h):
 * HOP_VERIFY naming the node and the HOP.
 *
 * hop_verify_pred      body `body` (a BODY parameter) returns one bool
 *                      scalar (fn names it in the message: "cond_fn").
 * hop_verify_carries   the call's first outputs are the values of group
 *                      `group` as they entered (compatible metadata; a
 *                      SymInt carry leaves as any SymInt), one per carry,
 *                      and no more outputs unless `more` (a scan's ys).
 */
hop_status hop_verify_pred(const hop_node *call, const char *body, const char *fn);
hop_status hop_verify_carries(const hop_node *call, const char *group, bool more);

/* ------------------------------------------------------------------- eval */

/*
 * The tracing checks on concrete values, with the same messages:
 * hop_eval_pred reads a body's one bool scalar result into *out;
 * hop_eval_check_carries checks a body's first ncarry results against the
 * carries they replace (same kind, dtype and shape), and that there are no
 * more results unless `more`.
 */
hop_status hop_eval_pred(hop_eval_ctx *ex, const hop_rt_values *r, const char *fn, bool *out);
hop_status hop_eval_check_carries(hop_eval_ctx *ex, const hop_rt_values *r,
                                  const hop_rt_value *carry, size_t ncarry, bool more,
                                  const char *fn);

/*
 * The carry-evaluation loop of an eval slot.  in holds the body's inputs:
 * `made` inputs the slot sets before each step (fori_loop's index), then
 * every value the call passes, the carries' replaced by their current
 * values (carry: the first nc of them, owned).  A slot that slices per step
 * (scan's xs) writes its slices into in before each step and releases them
 * after.
 *
 * hop_eval_loop_begin  starts the loop of the call in ex whose carries are
 *                      group `carries`: in and carry as above (the carries'
 *                      references retained).
 * hop_eval_loop_run    runs body (a BODY parameter) on in and appends its
 *                      results (new references) to *next, which must be
 *                      empty.
 * hop_eval_loop_step   hop_eval_loop_run, then hop_eval_check_carries on
 *                      the results (fn names the body; more results than
 *                      carries only when the slot set l->more, as scan's
 *                      ys); on error *next is cleared.
 * hop_eval_loop_take   the step's results become the carries: every value
 *                      of *next (a slot moves what is not a carry, a scan's
 *                      ys, out first), the old ones released; in updated,
 *                      *next left empty.
 * hop_eval_loop_next   one whole step of a loop whose body returns just its
 *                      carries: hop_eval_loop_step, then hop_eval_loop_take
 *                      (on error the carries stay as they were).
 * hop_eval_loop_slice  the slices at idx along dim (negative: from the end)
 *                      of the n tensors xs (a scan's xs, a fold's rows),
 *                      appended to *rows (new references: the slot clears
 *                      them after the step) and written into in after the
 *                      carries, where the body takes them.  What
 *                      hop_eager(HOP_OP_select) returns on error (the slot
 *                      has checked dim and idx against the xs' sizes).
 * hop_eval_loop_end    with st HOP_OK, the call's results are the carries
 *                      (and whatever the slot appended to carry:
 *                      hop_eval_results); frees what the loop holds either
 *                      way.  Returns st, or the results' error.
 */
typedef struct hop_eval_loop {
    hop_eval_ctx *ex;
    hop_rt_value *in;
    size_t nin, made, nc;
    bool more; /* the body returns more than the carries (false after begin) */
    hop_rt_values carry;
    const hop_rt_value *init; /* the carries as the call passed them */
} hop_eval_loop;

hop_status hop_eval_loop_begin(hop_eval_ctx *ex, size_t made, const char *carries,
                               hop_eval_loop *l);
hop_status hop_eval_loop_run(hop_eval_loop *l, const char *body, hop_rt_values *next);
hop_status hop_eval_loop_step(hop_eval_loop *l, const char *body, const char *fn,
                              hop_rt_values *next);
void hop_eval_loop_take(hop_eval_loop *l, hop_rt_values *next);
hop_status hop_eval_loop_next(hop_eval_loop *l, const char *body, const char *fn);
hop_status hop_eval_loop_slice(hop_eval_loop *l, const hop_rt_value *xs, size_t n, int64_t dim,
                               int64_t idx, hop_rt_values *rows);
hop_status hop_eval_loop_end(hop_eval_loop *l, hop_status st);

/* --------------------------------------------------------------- autodiff */

/*
 * A loop of a call node, for the rules: the call's step body f and what
 * its inputs are,
 *
 *     f(made..., carries..., xs..., rest...) -> (carries'..., ys...)
 *
 * made   the index i of the step (a SymInt) when the class makes one input
 *        (fori_loop), else none;
 * carries  the group `carries` of the call (the call's first outputs);
 * xs     the group `xs`, each value sliced along dim per step (the last slice
 *        first when reverse); NULL for a counted loop, whose steps are
 *        i = lower, ..., upper - 1 (ints, SymInts, or SymInt nodes of the
 *        out graph: the rule maps a node bound to its primal first);
 * rest   every input after them, passed whole (the lifted values, a VARARGS
 *        group).
 *
 * The call's outputs are the carries, then (with xs) one y per further
 * output of f, stacked along dim.  length is scan's lead (-1: the xs' size).
 */
typedef struct hop_loop {
    const hop_node *call;
    const char *body;
    const char *carries;
    const char *xs;
    bool reverse;
    int64_t dim, length;
    hop_arg lower, upper;
} hop_loop;

/*
 * Reverse mode of a loop: an augmented forward scan (`<f>_fwd`: f's outputs,
 * then the carries each step starts from, stacked), then a scan the other
 * way (`<f>_bwd`) carrying the carries' cotangents and the running sums of
 * the gradients of rest's float values over (the xs, the stacked carries,
 * the ys' cotangents), its body f's vjp graph inlined: its ys are the xs'
 * gradients, its final carries the carries' and rest's.  A counted loop
 * scans arange(lower, lower + Max(upper - lower, 0)), each step's f getting
 * i = item(index) with i's range the index's; a constant empty range passes
 * the carries' cotangents through.  The gradients are accumulated into the
 * forward values (hop_vjp_accumulate).  HOP_UNSUPPORTED naming the HOP and
 * the carry for a SymInt carry; HOP_MISUSE for a body whose inputs are not
 * made, carries, xs, rest in that order; what the builders return.
 */
hop_status hop_loop_vjp(hop_vjp_ctx *cx, const hop_loop *loop);

/*
 * hop_loop_vjp of a counted loop (no xs), the loop named by its step body
 * and carried group, its steps i = lower, ..., upper - 1: the rule of
 * repeat, fori_loop and while_loop (its count of steps as upper) in one
 * call.  Returns what hop_loop_vjp returns.
 */
hop_status hop_loop_vjp_counted(hop_vjp_ctx *cx, const hop_node *call, const char *body,
                                const char *carries, hop_arg lower, hop_arg upper);

/*
 * Forward mode of a loop: the same HOP again, its leads as they were (a
 * node lead mapped to its primal), each group followed by the tangents of
 * its float values (every float carry has one: zeros where the carry's init
 * has none), over f's tangent twin (`<f>_jvp`: f's tangent graph inlined,
 * returning the carries, their tangents, the ys, theirs; a step reads a
 * carry's tangent only once a value with a tangent has reached it, so when
 * some init has none the carries group also carries an i64 step counter
 * after the tangents and the twin is a switch over the first steps'
 * phases, docs/AUTODIFF.md) and the twins of
 * the call's other bodies (`<g>_jvp`: g run on the primal inputs, as a
 * while_loop's cond_fn).  A made input keeps a fresh symbol of its range
 * (the new loop binds its own index).  The tangents of the call's float
 * outputs are set.  Only for a HOP that takes the longer groups (fold's
 * init and xs take any number of values; repeat's x takes one and has no
 * jvp).  HOP_UNSUPPORTED for a SymInt carry; what the builders return.
 */
hop_status hop_loop_jvp(hop_jvp_ctx *cx, const hop_node *call, const char *body,
                        const char *carries);

/*
 * A loop's reach slot (hop/class.h) in one call, the loop named by its step
 * body and carried group as for hop_loop_jvp: from (one per value the call
 * passes) seeds the step's inputs, a carry is reached once a step's reached
 * inputs reach its output (a fixed point: the carries' reached after any
 * number of steps, none included), and a y when the step's reached inputs
 * at the fixed point reach it.  Sets reached[i] (one per output of the
 * call) for those and leaves the others.  HOP_MISUSE for a NULL argument or
 * a call not laid out as a loop (f(made..., carries..., ...) -> (carries'...,
 * ys...)); HOP_NOMEM.
 */
hop_status hop_loop_reach(const hop_node *call, const char *body, const char *carries,
                          const bool *from, bool *reached);

/* --------------------------------------------------------------- batching */

/*
 * Batching a loop whose leads no batch reaches: the same HOP again, its
 * leads as they are (a node lead's value), over its bodies batched
 * (hop_batch_body_outs: the step body `body` returning its carries batched
 * where they are, the other bodies, a while_loop's cond_fn, returning their
 * values unbatched), passing the values it passed: a carry of group
 * `carries` is batched when its init is or the step makes it so (the fixed
 * point of hop_batch_carries; such an init is broadcast on entry), each
 * batched value of group `xs` (NULL: none) has its batch moved after its dim
 * 0 (the loop slices its rows, which come out batched at 0), the others as
 * they come.  batched: NULL, or what the rule found already (the batching of
 * every input of the bodies, the fixed point included: while_loop asks it
 * to decide).  The call's carries are its first outputs; it has no others.
 * HOP_UNSUPPORTED for a batched lead; HOP_MISUSE for a call with outputs
 * past its carries; what the builders return.
 */
hop_status hop_loop_batch(hop_batch_ctx *cx, const hop_node *call, const char *body,
                          const char *carries, const char *xs, const bool *batched);

/*
 * Batching a loop whose lanes finish at different times (while_loop's
 * batched predicate, fori_loop's batched bounds): the same HOP again, every
 * carry of group `carries` batched (an unbatched init broadcast on entry),
 * the other values passed as hop_batch_operands finds them, every output
 * batched.  What differs between such loops is the class's, in m:
 *
 *   bodies  sets every body of the new call on b (hop_build_use_body),
 *           the step typically hop_batch_masked_body(cx, step, batched,
 *           carries.at, lanes): batched holds, per input of the bodies, the
 *           batching hop_batch_operands found, every carry true; carries is
 *           the carried group's span in them.  Called once the operands
 *           are found, before an init is broadcast or an operand passed.
 *   leads   sets every lead on b, and passes any extra operand (an extra
 *           lifted value the masked body takes: hop_build_operand); called
 *           after the call's own operands.  NULL: the leads as they are (a
 *           node lead's value; a batched one refused, HOP_UNSUPPORTED), as
 *           hop_loop_batch passes them.
 *   arg     passed to both, untouched.
 *
 * The call's carries are its first outputs; it has no others.  A SymInt
 * carry cannot differ per lane: the rule decides before calling (an error,
 * or hop_batch_loop); here it is HOP_UNSUPPORTED naming the HOP and the
 * carry.  HOP_MISUSE for a call with outputs past its carries or a NULL
 * m->bodies; otherwise what m's functions and the builders return (the
 * call's outputs unset; bodies already installed in the out graph stay
 * there, unused).  Borrows everything; the new call belongs to the out
 * graph.
 */
typedef struct hop_loop_lanes {
    hop_status (*bodies)(void *arg, hop_batch_ctx *cx, const hop_node *call, const bool *batched,
                         hop_span carries, hop_build *b);
    hop_status (*leads)(void *arg, hop_batch_ctx *cx, const hop_node *call, hop_build *b);
    void *arg;
} hop_loop_lanes;

hop_status hop_loop_batch_masked(hop_batch_ctx *cx, const hop_node *call, const char *carries,
                                 const hop_loop_lanes *m);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LOOP_KIT_H */
