/*
 * hop/lowering.h - compiling a traced program into a plan (the plan runs
 * through hop/plan.h), and the toolkit a HOP's lower slot builds code with.
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
 *   - each HOP lowered by its class's lower slot (hop/class.h; a class
 *     without one lowers as its nearest base): cond is a conditional jump over inlined
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

/* The build checks the layering: a layer may include this header only if
 * it links the lowering layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_LOWERING)
#error "hop/lowering.h belongs to the lowering layer, which this layer does not link"
#endif

#include "hop/class.h"
#include "hop/output_graph.h"
#include "hop/plan.h"
#include "hop/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_lower_options {
    /* Every elementwise op its own instruction (differential tests and the
     * per-op cost figure); default false: fuse. */
    bool no_fusion;
    /* Every HOP runs its bodies as traced, never batched: a map row by row
     * (tests of the row loops); default false: a map whose body batches
     * runs it once over all rows. */
    bool no_batching;
} hop_lower_options;

/*
 * Compiles the root graph of og (which must have its output node) into a
 * plan.  opts may be NULL (defaults).  The inputs of the plan are the
 * root's tensor placeholders in order (hop_plan_input_name); the symbols of
 * their sizes are bound from the tensors passed at run time.  NULL on error:
 * HOP_MISUSE (NULL og, no output node), HOP_VERIFY (the graph does not
 * verify: hop_graph_verify_changed, so a graph verified and unchanged since
 * is not checked again), HOP_UNSUPPORTED naming the node (a map whose output sizes depend
 * on a value computed in its body), a HOP's lower slot's error, HOP_NOMEM.
 * The caller owns the plan (hop_plan_free).
 */
hop_plan *hop_lower(const hop_output_graph *og, const hop_lower_options *opts);

/* ------------------------------------------------------ lowering HOPs */

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

/*
 * The toolkit of a HOP's lower slot (hop/class.h), called with the call_hop
 * node to lower (read its arguments with hop_node_param/_body/_group of
 * hop/prim_hop.h).  The slot must end with hop_lower_results.  Every
 * function returns HOP_OK or an error status (the lowering then fails as a
 * whole and frees everything).
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
 * hop_lower_select    a view of base[index] along dim 0 (index: an int);
 *                     hop_lower_select_dim along any dim.
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
 * hop_lower_if_lazy   hop_lower_if whose then-branch is a lazy section: the
 *                     tensors its code makes get their storage only when a
 *                     run takes the branch (a block of the section's own,
 *                     kept by the run's frame), not in the plan's block
 *                     that every run lays out.  For a branch a run takes
 *                     only when its values are small enough (map's batched
 *                     body behind its fit test), so that a run taking the
 *                     other one reserves nothing for it.  Ends as an if.
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
hop_status hop_lower_select_dim(hop_lower_ctx *cx, hop_pval base, int dim, hop_pval index,
                                hop_pval *out);
hop_status hop_lower_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index);
hop_status hop_lower_loop_end(hop_lower_ctx *cx);
hop_status hop_lower_parallel_loop_begin(hop_lower_ctx *cx, hop_pval count, hop_pval *index);
hop_status hop_lower_if(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_if_lazy(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_else(hop_lower_ctx *cx);
hop_status hop_lower_end_if(hop_lower_ctx *cx);
hop_status hop_lower_results(hop_lower_ctx *cx, const hop_pval *results, size_t n);
/*
 * A graph the lower slot made (a transformed body) handed to the lowering,
 * which frees it when hop_lower returns: inline it with hop_lower_inline
 * after this call.  The lowering keys values by node, so such a graph must
 * not be freed before.  Freed at once on error (HOP_NOMEM, HOP_MISUSE).
 */
hop_status hop_lower_keep_graph(hop_lower_ctx *cx, hop_graph *g);

/*
 * A line the plan keeps to say which way the lower slot chose and why
 * (hop_plan_note; the plan dump's "notes:", explain() in Python), such as
 * "map (map_body_0): row by row: the body calls cond (a HOP)".  Start with
 * the call's name; a line equal to one already noted is not repeated.
 */
hop_status hop_lower_note(hop_lower_ctx *cx, const char *fmt, ...) HOP_PRINTF(2, 3);

/* The options hop_lower was called with (defaults for NULL), for a lower
 * slot that honours them (no_batching). */
const hop_lower_options *hop_lower_get_options(const hop_lower_ctx *cx);

/*
 * Conveniences over the above.  Arrays they return live in the lowering's
 * scratch arena until hop_lower returns (never free them); NULL with
 * HOP_NOMEM set when it is exhausted.
 *
 * hop_lower_pvals     n zeroed values (kind HOP_PVAL_NONE).
 * hop_lower_args      the plan values of n call arguments (a group's items,
 *                     hop_node_group; the passed values, hop_node_passed).
 * hop_lower_passed    the plan values of every value the call passes to its
 *                     bodies (its lists, concatenated); *n gets the count.
 * hop_lower_dests     the call's destinations, one per output (see
 *                     hop_lower_dest).
 * hop_lower_outputs   for each output, its destination, or a new tensor of
 *                     its metadata (in the memory plan when storage is true)
 *                     where the caller has none.
 * hop_lower_default   the PrimHOP base's lower slot: the call's first body
 *                     inlined with every passed value, its results the
 *                     call's.
 * hop_lower_symbol_known
 *                     whether symbol sym has a value at this point of the
 *                     program: a backed symbol bound on entry, or an unbacked
 *                     one computed by code emitted so far (a size only known
 *                     inside a body is not).
 */
hop_pval *hop_lower_pvals(hop_lower_ctx *cx, size_t n);
hop_pval *hop_lower_args(hop_lower_ctx *cx, const hop_arg *args, size_t n);
hop_pval *hop_lower_passed(hop_lower_ctx *cx, const hop_node *call, size_t *n);
hop_pval *hop_lower_dests(hop_lower_ctx *cx);
hop_pval *hop_lower_outputs(hop_lower_ctx *cx, bool storage);
hop_status hop_lower_default(hop_lower_ctx *cx, const hop_node *call);
bool hop_lower_symbol_known(hop_lower_ctx *cx, const hop_expr *sym);

/*
 * Loops whose condition the plan evaluates, and leaving loops early.
 *
 * hop_lower_while_begin  opens a while loop; the code that computes its
 *                        condition follows.
 * hop_lower_while_test   leaves the loop when pred (a bool scalar tensor or
 *                        an int) is false; the code after it is the body.
 * hop_lower_while_end    jumps back to the condition.
 * hop_lower_break_if     leaves the innermost while or (sequential) counted
 *                        loop when pred is true; HOP_MISUSE in a parallel
 *                        loop, whose iterations cannot stop it.
 *
 * The same loop rotated (what while_loop uses): the test sits after the
 * body, so an iteration runs the body, the condition and one branch back
 * (no jump to a test at the head); the loop is entered at the condition,
 * so a loop whose condition is false at once runs no body.
 *
 * hop_lower_while_body   opens a rotated while loop (emits the jump to its
 *                        condition); the code after it is the body.
 * hop_lower_while_cond   ends the body; the code after it computes the
 *                        condition (it reads the values the body leaves,
 *                        e.g. the carries after hop_lower_carry_next, and
 *                        on entry those made before the loop; it must not
 *                        read a value the body makes, which the first test
 *                        runs before).
 * hop_lower_while_repeat jumps back to the body when pred is true and
 *                        closes the loop (break_if's exits land after it).
 *                        When the condition's last instruction is a fused
 *                        group computing pred (and no jump lands after it),
 *                        the branch runs that group itself: one instruction.
 *
 * The plan checks for interrupts as it runs instructions, so a loop that
 * never ends can still be stopped (hop_plan_interrupt, Ctrl-C).
 */
hop_status hop_lower_while_begin(hop_lower_ctx *cx);
hop_status hop_lower_while_test(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_while_end(hop_lower_ctx *cx);
hop_status hop_lower_while_body(hop_lower_ctx *cx);
hop_status hop_lower_while_cond(hop_lower_ctx *cx);
hop_status hop_lower_while_repeat(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_break_if(hop_lower_ctx *cx, hop_pval pred);

/*
 * Loop-carried values, double-buffered: no copy and no allocation per
 * iteration.  A tensor carry lives in two buffers of the memory plan; each
 * iteration reads `cur` and writes the next value into `next`, then the two
 * swap (hop_lower_swap: the slots exchange their buffers, O(1); every tensor
 * carry of hop_lower_carry_next swaps in one instruction).  The memory
 * plan keeps both buffers for the union of the two slots' live ranges: after
 * an odd trip count each slot holds the other's buffer, also when a loop
 * around runs the loop again.  A SymInt carry is an int register.
 *
 * hop_lower_carry_begin  (before the loop) n carries of metadata meta,
 *                        copied from init: fills lc.
 * hop_lower_carry_next   (at the end of each iteration) takes the body's
 *                        results from lc->got (written into lc->next when
 *                        the body was inlined with lc->next as its dests;
 *                        else copied) and swaps.
 * hop_lower_carry_end    (after the loop) the carries are the call's first
 *                        n outputs: lc->out gets the call's destinations (or
 *                        new tensors), with one copy of the final values.
 * hop_lower_carry_loop_end
 *                        the end of a counted loop over carries, in one
 *                        call: hop_lower_carry_next, hop_lower_loop_end,
 *                        hop_lower_carry_end (each only when the one before
 *                        succeeded).
 */
typedef struct hop_loop_carry {
    size_t n;
    hop_pval *cur;  /* the current values: the body's inputs */
    hop_pval *next; /* where the body writes the next values: its dests */
    hop_pval *got;  /* what the body gave: its outputs */
    hop_pval *out;  /* after hop_lower_carry_end: the call's results */
} hop_loop_carry;

hop_status hop_lower_carry_begin(hop_lower_ctx *cx, const hop_value_info *meta,
                                 const hop_pval *init, size_t n, hop_loop_carry *lc);
hop_status hop_lower_carry_next(hop_lower_ctx *cx, hop_loop_carry *lc);
hop_status hop_lower_carry_end(hop_lower_ctx *cx, hop_loop_carry *lc);
hop_status hop_lower_carry_loop_end(hop_lower_ctx *cx, hop_loop_carry *lc);
hop_status hop_lower_swap(hop_lower_ctx *cx, hop_pval a, hop_pval b);

/* Int arithmetic on plan values (registers and constants): *out is a new
 * register with `a op b` (comparisons give 0 or 1). */
typedef enum hop_int_op {
    HOP_INT_ADD,
    HOP_INT_SUB,
    HOP_INT_MUL,
    HOP_INT_FLOORDIV,
    HOP_INT_MOD,
    HOP_INT_LT,
    HOP_INT_LE,
    HOP_INT_EQ,
    HOP_INT_MAX,
    HOP_INT_MIN,
} hop_int_op;
hop_status hop_lower_int(hop_lower_ctx *cx, hop_int_op op, hop_pval a, hop_pval b, hop_pval *out);

/*
 * A kernel of the HOP's own, run at this point of the plan: fn(data,
 * tensors, n) gets the tensors args[0..n) hold when it runs (tensor pvals
 * only).  It writes only into tensors it was given as destinations (from
 * hop_lower_dests / hop_lower_outputs / hop_lower_tensor with storage) and
 * only reads the others; it must not keep the pointers.  It returns HOP_OK,
 * or a status with hop_error() set, which fails the plan's run.  It may
 * split its work with hop_runtime_parallel.  `size` bytes at `data` are
 * copied into the plan (data may be on the caller's stack); `name` shows in
 * the plan's dump.  A map whose body holds a kernel runs its iterations on
 * one thread.  Errors: HOP_MISUSE for a NULL fn, a non-tensor arg or more
 * than HOP_LOWER_KERNEL_MAX_ARGS args; HOP_NOMEM.
 */
#define HOP_LOWER_KERNEL_MAX_ARGS 16
typedef hop_status (*hop_lower_kernel_fn)(const void *data, hop_tensor *const *tensors, size_t n);
hop_status hop_lower_kernel(hop_lower_ctx *cx, const char *name, hop_lower_kernel_fn fn,
                            const void *data, size_t size, const hop_pval *args, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LOWERING_H */
