/*
 * batching/batch_impl.h - helpers shared by the transformation and the op
 * rules.  Each emitter adds one node (or a few) to g and returns it, or
 * NULL with the error context set; every node argument must belong to g.
 */
#ifndef HOP_BATCHING_BATCH_IMPL_H
#define HOP_BATCHING_BATCH_IMPL_H

#include "hop/batching.h"

/* unsqueeze(x, dim), squeeze(x, dim) */
hop_node *hop__batch_unsqueeze(hop_graph *g, hop_node *x, int64_t dim);
hop_node *hop__batch_squeeze(hop_graph *g, hop_node *x, int64_t dim);
/* x with dim `from` moved to `to` (a permute; x itself when equal). */
hop_node *hop__batch_movedim(hop_graph *g, hop_node *x, int from, int to);
/* Maps every argument of n as it is into args (room for n->nargs): nodes to
 * their values (batched or not), subgraphs to copies; lists live in
 * scratch memory freed by hop__batch_scratch_clear. */
hop_status hop__batch_map_args(hop_batch_ctx *cx, const hop_node *n, hop_arg *args);
void hop__batch_scratch_clear(hop_batch_ctx *cx);
/* The value of the node of at's graph, before at, that binds symbol s,
 * when that value is batched (a batched item's [B] ints, batch_item in
 * op_rules.c); NULL when it is not batched or nothing there binds s. */
hop_node *hop__batch_symbol(hop_batch_ctx *cx, const hop_node *at, const hop_expr *s);
/* Whether expression e (as read at node at) mentions a symbol bound to a
 * batched item (hop__batch_symbol of one of its first 16 free symbols). */
bool hop__batch_mentions(hop_batch_ctx *cx, const hop_node *at, const hop_expr *e);

#endif /* HOP_BATCHING_BATCH_IMPL_H */
