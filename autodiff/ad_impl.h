/*
 * autodiff/ad_impl.h - emitting helpers shared by the transformations and
 * the op rules.  Each emits one node (or a few) into g with
 * hop_graph_call_op and returns it, or NULL with the error context set.
 * Every node argument must belong to g.
 */
#ifndef HOP_AUTODIFF_AD_IMPL_H
#define HOP_AUTODIFF_AD_IMPL_H

#include "hop/autodiff.h"
#include "hop/rewrite.h"

/* The argument shorthands of the rule files (op_rules.c, shape_rules.c, index_rules.c,
 * linalg_rules.c), which chain HOP_EMIT (hop/graph.h) over them. */
#define N(x) hop_arg_node(x)
#define I(v) hop_arg_int(v)
#define F(v) hop_arg_float(v)
#define S(e) hop_arg_sym(e)

/* op(x), op(a, b), op(a, c) and op(c, b) for a float constant c. */
hop_node *hop__ad_op1(hop_graph *g, hop_op op, hop_node *x);
hop_node *hop__ad_op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b);
hop_node *hop__ad_op2c(hop_graph *g, hop_op op, hop_node *a, double c);
hop_node *hop__ad_cop2(hop_graph *g, hop_op op, double c, hop_node *b);
/* where(cond, a, b) */
hop_node *hop__ad_where(hop_graph *g, hop_node *cond, hop_node *a, hop_node *b);
/* A tensor of meta m (a tensor meta) filled with v. */
hop_node *hop__ad_full(hop_graph *g, const hop_meta *m, double v);
/* x converted to dtype (x itself when it has it). */
hop_node *hop__ad_to(hop_graph *g, hop_node *x, hop_dtype dtype);
/* x summed over the dims broadcasting added or stretched, down to target's
 * sizes (x itself when they are equal), then converted to target's dtype.
 * HOP_SHAPE if x does not broadcast from target. */
hop_node *hop__ad_sum_to(hop_graph *g, hop_node *x, const hop_meta *target);
/* x broadcast (expand) to target's sizes; x's rank may be lower. */
hop_node *hop__ad_expand(hop_graph *g, hop_node *x, const hop_meta *target);
/* sum(x, dims, keepdim) over the ndims dims given (ndims 0: all). */
hop_node *hop__ad_sum(hop_graph *g, hop_node *x, const int64_t *dims, size_t ndims, bool keepdim);
/* The metadata of a forward value (a tensor node). */
static inline const hop_meta *
hop__ad_meta(const hop_node *n)
{
    return &n->meta->meta;
}
/* Whether forward argument a is a node whose value is a float tensor. */
static inline bool
hop__ad_is_float_node(const hop_arg *a)
{
    return a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_TENSOR &&
           hop_dtype_is_inexact(a->u.node->meta->meta.dtype);
}

/* linalg_rules.c: the rules of the linalg ops (and the fft ops' vjp). */
hop_status hop__vjp_linalg(hop_vjp_ctx *cx, const hop_node *n);
hop_status hop__jvp_linalg(hop_jvp_ctx *cx, const hop_node *n);

#endif /* HOP_AUTODIFF_AD_IMPL_H */
