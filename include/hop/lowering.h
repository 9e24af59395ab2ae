/*
 * hop/lowering.h - compiling a traced program into a plan, running plans, and
 * running a graph op by op.
 *
 * The lowering layer (lowering/) owns both halves of execution, in the manner
 * of SQLite's VDBE: hop_lower compiles the root graph of an OutputGraph and
 * its nested subgraphs into one flat program over numbered tensor slots and
 * int registers, and hop_plan_run is the interpreter of that program (one
 * switch loop), calling the runtime's kernels (hop/runtime.h).  It links the
 * runtime and every layer below it.
 *
 * A plan has
 *   - entry checks: the inputs' count, dtypes, ranks and constant sizes, the
 *     consistency of duck-sized symbols, the value ranges of the size
 *     symbols and every guard of the ShapeEnv (HOP_GUARD on failure, with a
 *     message naming the input, the dim or the guard and the values seen);
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
 *   - parallel map: a map loop (any loop begun with
 *     hop_lower_parallel_loop_begin) splits its rows over the thread pool
 *     (hop_runtime_set_threads) when the rows times the work of one row
 *     (instructions and elements touched, estimated at the bound sizes)
 *     reach about 20 us, and nothing in the body allocates per row or has
 *     an ordered effect (a tensor sized mid-run, nonzero, a foreign kernel:
 *     those loops stay sequential).  Each worker has a frame of its own
 *     (slots, registers, call stack, kernel caches) copied from the
 *     caller's at the loop, and its own area of the block for the body's
 *     intermediates; both are made with the frame (at the first run, and
 *     again only when the thread setting grows), so a steady run still
 *     allocates nothing per row.  Results go straight into the stacked
 *     output rows.  cond, invoke_subgraph and nested maps work inside
 *     workers; a nested map runs sequentially in its worker (the pool does
 *     not nest).  An error in a row is reported once, with the status and
 *     message of the lowest failing row, as a sequential run reports it,
 *     and the plan stays usable.  With HOP_TRACE_PLAN every loop runs
 *     sequentially.
 *
 * A plan keeps no pointer into the OutputGraph: free the OutputGraph whenever
 * you like.  A plan may be run many times, also concurrently from several
 * threads: each run takes a frame (registers, slots, the block) from the
 * plan's cache or makes one, so a steady run on one thread allocates nothing
 * but its output tensors.  The cached frame also keeps a reference to the
 * tensors the last run returned, and reuses one for the same output when
 * the caller has released it (so its refcount reads 2 while the caller
 * holds it); hop_plan_trim gives that memory and the block back.
 *
 * HOP_TRACE_PLAN=1 in the environment (read by hop_lower) makes the plan
 * print each instruction it executes to stderr; hop_plan_set_trace chooses
 * the stream explicitly.
 */
#ifndef HOP_LOWERING_H
#define HOP_LOWERING_H

#include "hop/class.h"
#include "hop/output_graph.h"
#include "hop/runtime.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_plan hop_plan;

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
/* NULL is a no-op.  No run of the plan may be in progress. */
void hop_plan_free(hop_plan *plan);
/* Frees the cached frame: the block and the outputs kept for reuse. */
void hop_plan_trim(hop_plan *plan);

/* The plan's tensor inputs and outputs. */
size_t hop_plan_ninputs(const hop_plan *plan);
const char *hop_plan_input_name(const hop_plan *plan, size_t i); /* NULL out of range */
size_t hop_plan_noutputs(const hop_plan *plan);

/*
 * Runs the plan on ninputs tensors (borrowed) and stores noutputs new
 * tensors that the caller owns (hop_tensor_release) in outputs; a SymInt
 * result is an i64 tensor of rank 0.  An output may be one of the inputs
 * (one more reference) or a view of one.  Errors: HOP_GUARD when the inputs
 * do not satisfy the plan's checks ("guard failed: x.size(0) == 5 expected,
 * got 7", "guard s0 > 4 failed with s0 = 3"); HOP_MISUSE for NULL
 * arguments or a wrong noutputs; a kernel's error (HOP_SHAPE, HOP_RUNTIME,
 * ...) when a value only known at run time is wrong; HOP_NOMEM.  On error
 * every outputs[i] is NULL and nothing leaks.  Safe to call concurrently.
 */
hop_status hop_plan_run(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs,
                        hop_tensor **outputs, size_t noutputs);
/*
 * The same, writing the results into the caller's tensors, which must have
 * the results' dtypes and sizes (any strides without zeros on dims of size
 * > 1), else HOP_SHAPE / HOP_DTYPE naming the output.  Outputs must not
 * overlap the inputs.  Allocates nothing in a steady run.
 */
hop_status hop_plan_run_into(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs,
                             hop_tensor *const *outputs, size_t noutputs);

/*
 * Stopping a run, in the manner of sqlite3_interrupt and SQLite's progress
 * handler.  A run checks now and then (every ~1000 interpreted instructions,
 * or kernels of a few million elements, whichever comes first; one kernel
 * is never cut short) whether it should stop; it then fails with
 * HOP_INTERRUPTED ("plan interrupted"), releasing what it made as after any
 * error (outputs NULL, nothing leaks), and the plan stays usable.  The rows
 * of a parallel map on the pool stop too.
 *
 * hop_plan_interrupt stops every run of plan in progress, on any thread;
 * runs that start after it returns are not affected.  It is one atomic
 * increment: call it from another thread or from a signal handler.  The
 * plan must stay alive until the call returns.
 */
void hop_plan_interrupt(hop_plan *plan);

/* Options of one run.  progress (NULL: none) is called with ud at those
 * checks, only on the thread that called hop_plan_run_opts; a non-zero
 * return stops the run with HOP_INTERRUPTED.  It may run anything but
 * hop_plan_free of this plan (Python checks for signals in it). */
typedef struct hop_run_options {
    int (*progress)(void *ud);
    void *ud;
} hop_run_options;

/* hop_plan_run with options (opts NULL: hop_plan_run). */
hop_status hop_plan_run_opts(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs,
                             hop_tensor **outputs, size_t noutputs, const hop_run_options *opts);

/*
 * The program as text, like SQLite's EXPLAIN: one row per instruction
 * (addr, opcode, p1, p2, p3, p4, comment), subroutines after the main
 * program, then the slots and the memory plan.  New string (hop_free), NULL
 * on out-of-memory.  lowering/dump.c documents the format.
 */
char *hop_plan_dump(const hop_plan *plan);

/* Traces every executed instruction to f (NULL: off).  Do not call while the
 * plan runs. */
void hop_plan_set_trace(hop_plan *plan, FILE *f);

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
hop_status hop_lower_else(hop_lower_ctx *cx);
hop_status hop_lower_end_if(hop_lower_ctx *cx);
hop_status hop_lower_results(hop_lower_ctx *cx, const hop_pval *results, size_t n);

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
 * The plan checks for interrupts as it runs instructions, so a loop that
 * never ends can still be stopped (hop_plan_interrupt, Ctrl-C).
 */
hop_status hop_lower_while_begin(hop_lower_ctx *cx);
hop_status hop_lower_while_test(hop_lower_ctx *cx, hop_pval pred);
hop_status hop_lower_while_end(hop_lower_ctx *cx);
hop_status hop_lower_break_if(hop_lower_ctx *cx, hop_pval pred);

/*
 * Loop-carried values, double-buffered: no copy and no allocation per
 * iteration.  A tensor carry lives in two buffers of the memory plan; each
 * iteration reads `cur` and writes the next value into `next`, then the two
 * swap (hop_lower_swap: the slots exchange their buffers, O(1)).  A SymInt
 * carry is an int register.
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
hop_status hop_lower_int(hop_lower_ctx *cx, hop_int_op op, hop_pval a, hop_pval b,
                         hop_pval *out);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LOWERING_H */
