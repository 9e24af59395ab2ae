/*
 * hop/eval.h - running HOP calls on concrete values: the toolkit of a HOP's
 * eval slot, the reference graph interpreter, and eager calls whose bodies
 * are host functions (Python's hop.ops.<name> outside a trace).
 *
 * A HOP's eval slot (hop/class.h) is written once and serves two callers:
 *
 *   hop_graph_eval   the reference interpreter: runs a traced program node
 *                    by node with the runtime's eager ops; a call_hop's eval
 *                    gets its leads and groups from the node and runs its
 *                    bodies as subgraphs.  Differential tests check plans
 *                    against it.
 *   hop_eval_apply   one eager call: the leads and groups are the caller's
 *                    concrete values and each body is a host function (a
 *                    Python callable), run on concrete tensors.
 *
 * So a HOP checks what it needs on concrete values (a loop's carries, map's
 * rows) in one place, for both.  Values are hop_rt_value: a tensor or an
 * int (a SymInt's value).
 */
#ifndef HOP_EVAL_H
#define HOP_EVAL_H

/* The build checks the layering: a layer may include this header only if
 * it links the hop layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_HOP)
#error "hop/eval.h belongs to the hop layer, which this layer does not link"
#endif

#include "hop/prim_hop.h"
#include "hop/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable list of runtime values; it owns a reference to each tensor. */
typedef struct hop_rt_values {
    hop_rt_value *items;
    size_t n, cap;
} hop_rt_values;

/* Appends v, taking its tensor's reference (released on HOP_NOMEM). */
hop_status hop_rt_values_push(hop_rt_values *vs, hop_rt_value v);
/* Releases every tensor, frees the array and empties the list. */
void hop_rt_values_clear(hop_rt_values *vs);

/*
 * The toolkit of an eval slot.  Every function returns HOP_OK or an error
 * status with the error context set (the slot then returns it).
 *
 * hop_eval_class    the HOP being evaluated.
 * hop_eval_param    the value of a lead (INT..VALUE parameter) `name`: an
 *                   INT/FLOAT/BOOL/DTYPE as such; a VALUE as a tensor
 *                   (borrowed) or, for a SymInt/SymBool/bool, an int.
 * hop_eval_group    the values of group `name` (borrowed, valid until the
 *                   slot returns); *n gets their count.  The final VARARGS
 *                   group includes the values the bodies lifted.
 * hop_eval_passed   every value passed to the bodies, in body input order
 *                   (all groups, then the lifted values); borrowed.
 * hop_eval_body     runs BODY parameter `body` on inputs (borrowed; one per
 *                   placeholder of its subgraph, or whatever its host
 *                   function takes) and appends its results to *outputs
 *                   (new references).  A host body may return any number of
 *                   values; check them if the HOP needs to.
 * hop_eval_body_at  the same for body k of a BODIES parameter (a switch's
 *                   branch k; hop_eval_nbodies says how many the call has).
 * hop_eval_results  the call's results: takes every value of *results (the
 *                   list is left empty).
 * hop_eval_describe `f32[4, 3]` or `int` for messages; snprintf contract.
 * hop_eval_same_kind whether a and b are both ints, or tensors of one dtype
 *                   and shape (a loop's carry checked against its input).
 * hop_eval_nouts    the call's number of outputs when it runs a node of a
 *                   graph; SIZE_MAX for an eager call (its bodies decide).
 * hop_eval_output_zeros
 *                   a new zero-filled tensor (the caller's) with output j's
 *                   metadata, its sizes evaluated: for results no body gave
 *                   (a loop of zero steps).  HOP_UNSUPPORTED for an eager
 *                   call, whose outputs have no metadata.
 * hop_eval_stack_rows
 *                   the per-step values of a map or a scan stacked: rows
 *                   holds steps rows of n tensors each, row-major (row s's
 *                   value j at s * n + j); value j of every row stacked
 *                   along dim of the result (negative: from its end), the
 *                   rows in reverse order when `reverse`, appended to *out
 *                   (new references; rows stays the caller's).  Needs
 *                   steps >= 1 when n > 0: a stack of no rows has no shape.
 */
const hop_class *hop_eval_class(const hop_eval_ctx *ex);
hop_status hop_eval_param(hop_eval_ctx *ex, const char *name, hop_rt_arg *out);
const hop_rt_value *hop_eval_group(hop_eval_ctx *ex, const char *name, size_t *n);
const hop_rt_value *hop_eval_passed(hop_eval_ctx *ex, size_t *n);
hop_status hop_eval_body(hop_eval_ctx *ex, const char *body, const hop_rt_value *inputs,
                         size_t ninputs, hop_rt_values *outputs);
hop_status hop_eval_body_at(hop_eval_ctx *ex, const char *body, size_t k,
                            const hop_rt_value *inputs, size_t ninputs, hop_rt_values *outputs);
size_t hop_eval_nbodies(const hop_eval_ctx *ex);
hop_status hop_eval_results(hop_eval_ctx *ex, hop_rt_values *results);
size_t hop_eval_describe(const hop_rt_value *v, char *buf, size_t cap);
bool hop_eval_same_kind(const hop_rt_value *a, const hop_rt_value *b);
size_t hop_eval_nouts(const hop_eval_ctx *ex);
hop_status hop_eval_output_zeros(hop_eval_ctx *ex, size_t j, hop_tensor **out);
hop_status hop_eval_stack_rows(const hop_rt_values *rows, size_t n, int64_t steps, bool reverse,
                               int64_t dim, hop_rt_values *out);

/* The carry checks of loops on concrete values: hop/loop_kit.h. */

/* hop_eval_run_passed: body `body` (body k of a BODIES parameter; 0 for a
 * BODY) run on every passed value (hop_eval_passed), its results the
 * call's: a cond's or a switch's eval once it has picked the body.
 * hop_eval_default, the PrimHOP base's eval: the class's first body so. */
hop_status hop_eval_run_passed(hop_eval_ctx *ex, const char *body, size_t k);
hop_status hop_eval_default(hop_eval_ctx *ex);
/* hop_eval_traced_only, the eval of a transformation HOP (vjp, jvp, vmap)
 * whose body is made from a traced graph: hop_eval_default for a node of a
 * graph; an eager call, whose body is a host function with no graph to
 * transform, fails HOP_UNSUPPORTED with "<hop>: an eager call has no graph
 * to <verb>; <how>" (how: which Python entry traces the function first). */
hop_status hop_eval_traced_only(hop_eval_ctx *ex, const char *verb, const char *how);

/*
 * A host body: runs on concrete inputs (borrowed) and appends its results
 * (new references) to *outputs.  Returns HOP_OK or an error status with the
 * error context set.
 */
typedef hop_status (*hop_host_body_fn)(void *ud, const hop_rt_value *inputs, size_t ninputs,
                                       hop_rt_values *outputs);

typedef struct hop_host_body {
    hop_host_body_fn fn;
    void *ud;
} hop_host_body;

/*
 * Runs HOP cls once, eagerly, on concrete values.  args follow the signature
 * as hop_apply's do: the leads (HOP_OPND_INT, FLOAT, BOOL, DTYPE; a VALUE
 * as a tensor, an int or a bool), then one HOP_OPND_LIST per group whose
 * items are tensors or ints; bodies one per BODY parameter.  Appends the
 * results (new references) to *outputs; on error nothing is appended.
 * HOP_INVALID when args do not fit the signature (naming the parameter),
 * else what the eval slot or a body returned.
 */
hop_status hop_eval_apply(const hop_class *cls, const hop_rt_arg *args, size_t nargs,
                          const hop_host_body *bodies, size_t nbodies, hop_rt_values *outputs);

/*
 * The reference interpreter: runs the root graph of og node by node with
 * the runtime's eager ops (HOPs through their eval slot), with the same
 * inputs and outputs as a plan of og would take (hop_plan_run).  Checks only
 * what the ops check.  For differential tests: a plan must give the same
 * results.
 */
hop_status hop_graph_eval(const hop_output_graph *og, hop_tensor *const *inputs, size_t ninputs,
                          hop_tensor **outputs, size_t noutputs);

#ifdef __cplusplus
}
#endif
#endif /* HOP_EVAL_H */
