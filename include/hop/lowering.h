/*
 * hop/lowering.h - compiling a traced program into a plan (the plan runs
 * through hop/plan.h), and running a graph op by op.
 *
 * The lowering layer (lowering/) is the code generator, in the manner of
 * SQLite's: hop_lower compiles the root graph of an OutputGraph and its
 * nested subgraphs into one flat program over numbered tensor slots and int
 * registers (runtime/program.h is the format), which the runtime's VM runs.
 * It links the runtime and every layer below it.
 *
 * A plan has
 *   - entry checks: the inputs' dtypes, ranks, constant sizes, duck-sized
 *     symbols, value ranges and every guard of the ShapeEnv (hop/plan.h);
 *   - a memory plan: every intermediate tensor whose sizes are known at entry
 *     (constants and backed symbols, evaluated from the bound input sizes)
 *     lives in one block, and tensors whose lifetimes do not overlap share
 *     space.  A tensor whose size depends on a value only known mid-run
 *     (an unbacked symbol from item/nonzero/cond) is allocated when made;
 *   - fused elementwise groups: a tree of elementwise ops over one shape
 *     whose intermediates have no other users runs as one tiled kernel;
 *   - each HOP lowered through the lowering registered for its class (or
 *     the nearest base class): cond is a conditional jump over inlined
 *     branches (only the taken one runs), map a loop over row views writing
 *     into the stacked output, wrap is inlined, invoke_subgraph a subroutine
 *     compiled once per plan and CALLed from every call site;
 *   - parallel loops: a loop begun with hop_lower_parallel_loop_begin (map's
 *     rows) may split its rows over the thread pool when nothing in its body
 *     allocates per row or has an ordered effect (a tensor sized mid-run,
 *     nonzero, a foreign kernel: those loops stay sequential); hop/plan.h
 *     says when it does at run time.
 */
#ifndef HOP_LOWERING_H
#define HOP_LOWERING_H

#include "hop/plan.h"
#include "hop/prim_hop.h"
#include "hop/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_lower_options {
    /* Every elementwise op its own instruction (differential tests and the
     * per-op cost figure); default false: fuse. */
    bool no_fusion;
} hop_lower_options;

/*
 * Compiles the root graph of og (which must have its output node) into a
 * plan.  opts may be NULL (defaults).  The inputs of the plan are the
 * root's tensor placeholders in order (hop_plan_input_name); the symbols of
 * their sizes are bound from the tensors passed at run time.  NULL on error:
 * HOP_MISUSE (NULL og, no output node), HOP_VERIFY (the graph does not
 * verify), HOP_UNSUPPORTED naming the node (a HOP with no lowering, a map
 * whose output sizes depend on a value computed in its body), HOP_NOMEM.
 * The caller owns the plan (hop_plan_free).
 */
hop_plan *hop_lower(const hop_output_graph *og, const hop_lower_options *opts);

/*
 * The reference interpreter: runs the root graph of og node by node with
 * hop_eager (HOPs through their lowering's eager slot), with the same
 * inputs and outputs as a plan of og would take.  Checks only what the ops
 * check.  For differential tests: a plan must give the same results.
 */
hop_status hop_graph_run_eager(const hop_output_graph *og, hop_tensor *const *inputs,
                               size_t ninputs, hop_tensor **outputs, size_t noutputs);

/* ------------------------------------------------ lowering HOPs (registry) */

/*
 * A value of the plan being built: a tensor slot, an int register, or an
 * int constant.  Plain value; only meaningful during one hop_lower.
 */
typedef enum hop_pval_kind {
    HOP_PVAL_NONE,
    HOP_PVAL_TENSOR, /* id: a tensor slot */
    HOP_PVAL_INT,    /* id: an int register */
    HOP_PVAL_CONST,  /* value: an int known at compile time */
} hop_pval_kind;

typedef struct hop_pval {
    hop_pval_kind kind;
    int32_t id;
    int64_t value;
} hop_pval;

typedef struct hop_lower_ctx hop_lower_ctx;
typedef struct hop_eager_ctx hop_eager_ctx;

/*
 * How one HOP class runs.  lower emits the plan code of one call_hop node of
 * that class (call->args: the leading arguments, the subgraphs, then the
 * list of passed values) and must end with hop_lower_results.  eager runs
 * the node in hop_graph_run_eager and must end with hop_eager_results.
 * Either may be NULL (then plans, or the reference interpreter, refuse the
 * HOP with HOP_UNSUPPORTED).  user_data is passed to both.
 */
typedef struct hop_lowering {
    hop_status (*lower)(hop_lower_ctx *cx, const hop_node *call, void *user_data);
    hop_status (*eager)(hop_eager_ctx *ex, const hop_node *call, void *user_data);
    void *user_data;
} hop_lowering;

/*
 * Registers how class cls runs (copied; cls is borrowed and must outlive
 * the registration).  A class without a lowering of its own runs as its
 * nearest base class with one (a class based on wrap lowers like wrap).
 * HOP_EXISTS if cls has one already; HOP_MISUSE for NULL.  The built-ins
 * wrap, cond, map and invoke_subgraph are registered from the start.
 */
hop_status hop_register_lowering(const hop_hop_class *cls, const hop_lowering *l);
/* HOP_NOT_FOUND if cls has no lowering of its own. */
hop_status hop_unregister_lowering(const hop_hop_class *cls);
/* The lowering of cls or of its nearest base class that has one; NULL
 * (HOP_NOT_FOUND set) if none has. */
const hop_lowering *hop_find_lowering(const hop_hop_class *cls);

/*
 * The toolkit of a lower callback.  Every function returns HOP_OK or an
 * error status (the lowering then fails as a whole and frees everything).
 *
 * hop_lower_arg       the plan value of an argument of the call node: a
 *                     node's value, an int, or a SymInt expression.
 * hop_lower_inline    compiles subgraph g here with its placeholders bound
 *                     to inputs; its results go to outputs[noutputs].  With
 *                     dests (tensor slots, or HOP_PVAL_NONE entries), result
 *                     i is written into dests[i] (computed straight into it
 *                     where possible, else copied) and outputs[i] is dests[i].
 * hop_lower_call      compiles g once per plan as a subroutine (later calls
 *                     reuse it) and emits a CALL of it; dests as for inline.
 * hop_lower_dest      where the caller would like result i of the call:
 *                     a tensor slot of the result's dtype and sizes (write
 *                     the result there and give it to hop_lower_results),
 *                     or HOP_PVAL_NONE (anywhere).  Ignoring it costs a copy.
 * hop_lower_tensor    a new tensor with meta's dtype and sizes, in the
 *                     memory plan (storage true) or a slot without storage
 *                     that hop_lower_move fills (storage false); a SymInt
 *                     meta gives a new int register.
 * hop_lower_copy      copies src's elements (or int) into dst.
 * hop_lower_move      makes dst stand for src (no copy; dst aliases src).
 * hop_lower_select    a view of base[index] along dim 0 (index: an int).
 * hop_lower_loop_begin / hop_lower_loop_end
 *                     a loop running its body count times with *index
 *                     (a new int register) = 0, 1, ..., count - 1.
 * hop_lower_parallel_loop_begin
 *                     the same for a loop whose iterations are independent:
 *                     each writes only values it makes itself and its own
 *                     rows of tensors made before the loop, and reads
 *                     nothing another iteration writes.  The plan may run
 *                     its iterations on the thread pool, in any order (map
 *                     does).  Ends with hop_lower_loop_end.
 * hop_lower_if / hop_lower_else / hop_lower_end_if
 *                     code run when pred (a bool scalar tensor or an int)
 *                     is true, else the code after hop_lower_else.
 * hop_lower_results   the call's results, one per getitem index.
 */
hop_status hop_lower_arg(hop_lower_ctx *cx, const hop_arg *arg, hop_pval *out);
hop_status hop_lower_inline(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs,
                            size_t ninputs, const hop_pval *dests, hop_pval *outputs,
                            size_t noutputs);
hop_status hop_lower_call(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs,
                          size_t ninputs, const hop_pval *dests, hop_pval *outputs,
                          size_t noutputs);
hop_status hop_lower_dest(hop_lower_ctx *cx, size_t i, hop_pval *out);
hop_status hop_lower_tensor(hop_lower_ctx *cx, const hop_value_info *meta, bool storage,
                            hop_pval *out);
hop_status hop_lower_copy(hop_lower_ctx *cx, hop_pval dst, hop_pval src);
hop_status hop_lower_move(hop_lower_ctx *cx, hop_pval dst, hop_pval src);
hop_status hop_lower_select(hop_lower_ctx *cx, hop_pval base, hop_pval index, hop_pval *out);
hop_status hop_lower_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index);
hop_status hop_lower_loop_end(hop_lower_ctx *cx);
hop_status hop_lower_parallel_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index);
hop_status hop_lower_if(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_else(hop_lower_ctx *cx);
hop_status hop_lower_end_if(hop_lower_ctx *cx);
hop_status hop_lower_results(hop_lower_ctx *cx, const hop_pval *results, size_t n);

/*
 * The toolkit of an eager callback (values as hop_eager gives them).
 *
 * hop_eager_arg      the value of an argument of the call node; a tensor is
 *                    borrowed.
 * hop_eager_graph    runs subgraph g on inputs (borrowed); outputs[noutputs]
 *                    get new references (release them, or hand them to
 *                    hop_eager_results).
 * hop_eager_results  the call's results; takes the tensors' references.
 */
hop_status hop_eager_arg(hop_eager_ctx *ex, const hop_arg *arg, hop_rt_value *out);
hop_status hop_eager_graph(hop_eager_ctx *ex, const hop_graph *g, const hop_rt_value *inputs,
                           size_t ninputs, hop_rt_value *outputs, size_t noutputs);
hop_status hop_eager_results(hop_eager_ctx *ex, hop_rt_value *results, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LOWERING_H */
