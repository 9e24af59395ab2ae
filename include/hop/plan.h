/*
 * hop/plan.h - running a plan: a compiled program (hop/lowering.h makes one
 * with hop_lower) and the runtime's program interpreter, the VM, in the
 * manner of SQLite's VDBE: one flat program over numbered tensor slots and
 * int registers, run by one switch loop that calls the runtime's kernels
 * (hop/runtime.h).  runtime/program.h documents the program format.
 *
 * A run checks its inputs first: their count, dtypes, ranks and constant
 * sizes, the consistency of duck-sized symbols, the value ranges of the size
 * symbols and every guard of the ShapeEnv it was traced with (HOP_GUARD on
 * failure, with a message naming the input, the dim or the guard and the
 * values seen); a subgraph's own guards (a cond branch's) are checked each
 * time it runs.  Then it places every intermediate tensor whose sizes are
 * known at entry in one block (the memory plan; tensors whose lifetimes do
 * not overlap share space) and runs the program.  A tensor whose size
 * depends on a value only known mid-run (an unbacked symbol from
 * item/nonzero/cond) is allocated when made.
 *
 * Parallel map: a loop the plan marks parallel (map's rows) splits its rows
 * over the thread pool (hop_runtime_set_threads) when the rows times the
 * work of one row (instructions and elements touched, estimated at the
 * bound sizes) reach about 20 us.  Each worker has a frame of its own
 * (slots, registers, call stack, kernel caches) copied from the caller's at
 * the loop, and its own area of the block for the body's intermediates; both
 * are made with the frame (at the first run, and again only when the thread
 * setting grows), so a steady run still allocates nothing per row.  Results
 * go straight into the stacked output rows.  cond, invoke_subgraph and
 * nested maps work inside workers; a nested map runs sequentially in its
 * worker (the pool does not nest).  An error in a row is reported once,
 * with the status and message of the lowest failing row, as a sequential
 * run reports it, and the plan stays usable.  With HOP_TRACE_PLAN every
 * loop runs sequentially.
 *
 * A plan keeps no pointer into the OutputGraph it was compiled from.  A
 * plan may be run many times, also concurrently from several threads: each
 * run takes a frame (registers, slots, the block) from the plan's cache or
 * makes one, so a steady run on one thread allocates nothing but its output
 * tensors.  The cached frame also keeps a reference to the tensors the last
 * run returned, and reuses one for the same output when the caller has
 * released it (so its refcount reads 2 while the caller holds it), and the
 * storage of the tensors whose sizes are only known mid-run (unbacked
 * sizes: nonzero, a compacted branch), reused when the next run's fit (an
 * eighth of room is kept for growth) and replaced by larger storage when
 * not; a result that is (a view of) such a tensor is handed to the caller
 * and never written again.  hop_plan_trim gives that memory and the block
 * back.
 *
 * HOP_TRACE_PLAN=1 in the environment (read by hop_lower) makes the plan
 * print each instruction it executes to stderr; hop_plan_set_trace chooses
 * the stream explicitly.
 */
#ifndef HOP_PLAN_H
#define HOP_PLAN_H

/* The build checks the layering: a layer may include this header only if
 * it links the runtime layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_RUNTIME)
#error "hop/plan.h belongs to the runtime layer, which this layer does not link"
#endif

#include "hop/runtime.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_plan hop_plan;

/* NULL is a no-op.  No run of the plan may be in progress. */
void hop_plan_free(hop_plan *plan);
/* Frees the cached frame: the block, the outputs and the storage of late
 * tensors kept for reuse. */
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
 * on out-of-memory.  runtime/explain.c documents the format.
 */
char *hop_plan_dump(const hop_plan *plan);

/*
 * The decisions the lowering noted (hop_lower_note), in the order it made
 * them: which way a HOP runs and why (map: "map (map_body_0): one batched
 * body over all rows ...").  The dump prints them under "notes:".  Strings
 * live as long as the plan; hop_plan_note is NULL out of range.
 */
size_t hop_plan_nnotes(const hop_plan *plan);
const char *hop_plan_note(const hop_plan *plan, size_t i);

/* Traces every executed instruction to f (NULL: off).  Do not call while the
 * plan runs. */
void hop_plan_set_trace(hop_plan *plan, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* HOP_PLAN_H */
