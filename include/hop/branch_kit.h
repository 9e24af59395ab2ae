/*
 * hop/branch_kit.h - the kit for HOPs that run one of their bodies, picked
 * by a lead of the call (cond's pred, switch's index): their tracing (the
 * branches' outputs checked against each other and merged into the call's)
 * and their vmap.
 *
 * Tracing: every branch is traced, and the call's outputs are what any
 * branch may return: the branches must agree in count, kind, dtype and
 * rank; a size they do not all share becomes a fresh unbacked symbol, bound
 * in the caller by the installed slot.
 *
 * Vmap:
 * A lead no batch reaches: the same HOP over its branches batched
 * (hop_batch_body: batched operands at dim 0, every tensor output batched,
 * an output that does not depend on the batch broadcast, so every branch
 * agrees).  A batched lead: each example picks its own branch.  The HOP
 * gives, from the lead as a [B] vector, one [B] bool mask per branch (which
 * examples take it); the kit then runs the branches by the cost rule of
 * docs/VMAP.md:
 *
 *   select      every branch on the whole batch, the results combined with
 *               a chain of `where` over the masks, each branch's float
 *               operands through mask_gradient with its mask (an example's
 *               gradient comes from its own branch only), when every branch
 *               is cheap and pure (at most 16 elementwise op nodes in all,
 *               no HOP, no foreign call);
 *   compaction  otherwise: each branch once, batched over its examples (a
 *               batch of unbacked size), the results put back in the
 *               examples' order.
 *
 * The batched branches are subgraphs named `<branch>_vmap_select` or
 * `<branch>_vmap_compact`, run by `wrap`, so the strategy shows in the
 * graph's code and in explain().
 *
 * Stability: public API as the rest of include/hop/ (HOP_ABI_VERSION); the
 * graphs it emits (names, the strategy's cost bound) may change between
 * versions, as any transformed graph may.
 */
#ifndef HOP_BRANCH_KIT_H
#define HOP_BRANCH_KIT_H

#include "hop/batching.h"
#include "hop/prim_hop.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * For the slots of a HOP that runs one of its bodies (c->nbodies branches,
 * traced into c->results):
 *
 * hop_call_check_branches      check_outputs: every branch returns as many
 *                              values as branch 0, each of its kind, dtype
 *                              and rank; HOP_TRACE naming the HOP, the output
 *                              and both branches (names[b], or "branch b"
 *                              when names is NULL: `cond: output 1 of the
 *                              true branch is f32[3] but the false branch
 *                              gives i64[3]`).
 * hop_call_merge_branch_outputs output_meta: the base's (branch 0's), each
 *                              size (and SymInt) replaced by one that holds
 *                              whichever branch runs: a branch's size that
 *                              every other branch's equals there (the same
 *                              expression, or equated by a guard of the
 *                              caller or of that branch), else a fresh
 *                              unbacked symbol spanning their bounds.
 * hop_call_bind_output_sizes   for the installed slot: binds, in the caller,
 *                              each unbacked symbol among the sizes of the
 *                              call's tensor outputs (a sym_size of the
 *                              output), as hop_call_bind_outputs does for
 *                              SymInt outputs.
 * Each returns HOP_OK or the error, as check_outputs, output_meta and
 * installed slots do (the protocol undoes the call).
 */
hop_status hop_call_check_branches(hop_call *c, const char *const *names);
hop_status hop_call_merge_branch_outputs(hop_call *c);
hop_status hop_call_bind_output_sizes(hop_call *c);

/*
 * The masks of a batched lead: lead is the lead's value as a [B] vector in
 * g (the graph being built); writes nb [B] bool masks (nodes of g) into
 * masks, the examples of branch k in masks[k], each example in exactly one.
 * Returns HOP_OK, or the builders' error (a NULL mask counts as one).
 */
typedef hop_status (*hop_branch_masks_fn)(hop_graph *g, hop_node *lead, size_t nb,
                                          hop_node **masks);

/*
 * The batch slot of a HOP that runs one of its bodies: lead names its
 * VALUE parameter that picks the body, what names it in messages
 * ("predicate", "index"), masks gives the branches' masks of a batched lead
 * (see above).  HOP_UNSUPPORTED when a batched lead meets branches whose
 * outputs differ in shape or are SymInts (they would differ per example),
 * naming the output and both branches; what the builders and
 * hop_vmap_graph return.
 */
hop_status hop_batch_branches(hop_batch_ctx *cx, const hop_node *call, const char *lead,
                              const char *what, hop_branch_masks_fn masks);

#ifdef __cplusplus
}
#endif
#endif /* HOP_BRANCH_KIT_H */
