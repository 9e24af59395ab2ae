/*
 * autodiff/op_rules.h - what the three files of the op table's autodiff
 * column share (op_rules.c, shape_rules.c, index_rules.c): emitting that
 * passes NULL through, the rule's view of its two contexts (ad), the
 * operand-0 prologue (VJP_ARG0, JVP_ARG0) and the jvp of ops linear in
 * operand 0 (jvp_linear).  Private to autodiff/; each file includes it once.
 */
#ifndef HOP_AUTODIFF_OP_RULES_H
#define HOP_AUTODIFF_OP_RULES_H

#include "autodiff/ad_impl.h"

#define LEN(a) (sizeof(a) / sizeof *(a))

/* ------------------------------------------------------------ emitting */

static inline hop_node *
op1(hop_graph *g, hop_op op, hop_node *x)
{
    return x ? hop__ad_op1(g, op, x) : NULL;
}

static inline hop_node *
op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    return a && b ? hop__ad_op2(g, op, a, b) : NULL;
}

static inline hop_node *
op2c(hop_graph *g, hop_op op, hop_node *a, double c)
{
    return a ? hop__ad_op2c(g, op, a, c) : NULL;
}

static inline hop_node *
cop2(hop_graph *g, hop_op op, double c, hop_node *b)
{
    return b ? hop__ad_cop2(g, op, c, b) : NULL;
}

static inline hop_node *
where3(hop_graph *g, hop_node *cond, hop_node *a, hop_node *b)
{
    return cond && a && b ? hop__ad_where(g, cond, a, b) : NULL;
}

/* where(cond, a, 0) and where(cond, 0, b): a float zero keeps the dtype. */
static inline hop_node *
where_or_zero(hop_graph *g, hop_node *cond, hop_node *a)
{
    return HOP_EMIT(g, where, N(cond), N(a), F(0.0));
}

static inline hop_node *
zero_or_where(hop_graph *g, hop_node *cond, hop_node *b)
{
    return HOP_EMIT(g, where, N(cond), F(0.0), N(b));
}

static inline hop_node *
to_dtype(hop_graph *g, hop_node *x, hop_dtype dt)
{
    return x ? hop__ad_to(g, x, dt) : NULL;
}

static inline int
wrap_dim(int64_t d, int rank)
{
    return (int)(d < 0 ? d + rank : d);
}

static inline const hop_meta *
meta_of(const hop_node *n)
{
    return &n->meta->meta;
}

/* The dim that argument 1 of an op along one dim of x (sort, cumsum,
 * cumprod) names, wrapped; -1 for a 0-d x, on which the op is the
 * identity. */
static inline int
along_dim(const hop_node *n)
{
    int rank = meta_of(n->args[0].u.node)->rank;
    return rank == 0 ? -1 : wrap_dim(n->args[1].u.i, rank);
}

/* The sizes of m as shape arguments (constants fold to INT). */
static inline void
shape_args(const hop_meta *m, hop_arg *items)
{
    for (int k = 0; k < m->rank; k++)
        items[k] = S(m->sizes[k]);
}

static inline hop_node *
reshape_to(hop_graph *g, hop_node *x, const hop_meta *m)
{
    hop_arg items[HOP_MAX_RANK];
    shape_args(m, items);
    return HOP_EMIT(g, reshape, N(x), hop_arg_list(items, (size_t)m->rank));
}

/* Product of sizes[k] for k in [lo, hi) (1 for none). */
static inline const hop_expr *
size_product(hop_shape_env *env, const hop_expr *const *sizes, int lo, int hi)
{
    const hop_expr *p = hop_sym_const(env, 1);
    for (int k = lo; k < hi && p; k++)
        p = hop_sym_mul(env, p, sizes[k]);
    return p;
}

/* arange(0, n) as an i64 tensor. */
static inline hop_node *
arange_n(hop_graph *g, const hop_expr *n)
{
    return HOP_EMIT(g, arange, I(0), S(n), I(1), hop_arg_none());
}

/* x reversed along dim d (a take with the index n-1, ..., 0). */
static inline hop_node *
flip(hop_graph *g, hop_node *x, int d)
{
    if (x == NULL)
        return NULL;
    const hop_expr *n = meta_of(x)->sizes[d];
    const hop_expr *last = hop_sym_add_int(g->env, n, -1);
    if (last == NULL)
        return NULL;
    hop_node *idx = HOP_EMIT(g, sub, S(last), N(arange_n(g, n)));
    return HOP_EMIT(g, take, N(x), I(d), N(idx));
}

/* A tensor of meta `like` with dim d of size `size`, filled with v. */
static inline hop_node *
full_with_dim(hop_graph *g, const hop_meta *like, int d, const hop_expr *size, double v)
{
    hop_meta m = *like;
    m.sizes[d] = size;
    return hop__ad_full(g, &m, v);
}

/* ----------------------------------------------------- the two contexts */

/* A rule's view of its context: the graph and the primal mapping, the
 * same for both modes. */
typedef struct ad {
    hop_graph *g;
    hop_vjp_ctx *v;
    hop_jvp_ctx *j;
} ad;

static inline ad
ad_vjp(hop_vjp_ctx *cx)
{
    return (ad){hop_vjp_out(cx), cx, NULL};
}

static inline ad
ad_jvp(hop_jvp_ctx *cx)
{
    return (ad){hop_jvp_out(cx), NULL, cx};
}

static inline hop_node *
primal(const ad *a, const hop_node *n)
{
    return a->v ? hop_vjp_primal(a->v, n) : hop_jvp_primal(a->j, n);
}

/* Operand k of n as a tensor of dtype dt: the primal copy of a node,
 * converted; a scalar as a 0-d tensor. */
static inline hop_node *
operand(const ad *a, const hop_node *n, size_t k, hop_dtype dt)
{
    const hop_arg *arg = &n->args[k];
    if (arg->kind == HOP_ARG_NODE && arg->u.node->meta->kind == HOP_VALUE_TENSOR)
        return to_dtype(a->g, primal(a, arg->u.node), dt);
    hop_arg v = *arg; /* a SymInt node: its symbol */
    if (arg->kind == HOP_ARG_NODE)
        v = hop_arg_sym(arg->u.node->meta->sym);
    return HOP_EMIT(a->g, full, hop_arg_list(NULL, 0), v, hop_arg_dtype(dt));
}

/* Whether reverse mode wants a gradient for argument arg (a float node
 * that depends on a wrt input). */
static inline bool
wants(hop_vjp_ctx *cx, const hop_arg *arg)
{
    return hop__ad_is_float_node(arg) && hop_vjp_active(cx, arg->u.node);
}

static inline hop_status
accumulate(hop_vjp_ctx *cx, const hop_node *v, hop_node *g)
{
    return g ? hop_vjp_accumulate(cx, v, g) : hop_error_code();
}

/* The tangent of argument arg: NULL for a scalar, a non-float value, or a
 * zero tangent. */
static inline hop_node *
tangent(hop_jvp_ctx *cx, const hop_arg *arg)
{
    return hop__ad_is_float_node(arg) ? hop_jvp_tangent(cx, arg->u.node) : NULL;
}

/* Sets n's tangent to t, converted to n's dtype and broadcast to its shape
 * (an operand's tangent alone may be narrower: add(x[3], y[2, 3])). */
static inline hop_status
set_tangent(hop_jvp_ctx *cx, const hop_node *n, hop_node *t)
{
    if (t == NULL)
        return hop_error_code();
    hop_graph *g = hop_jvp_out(cx);
    const hop_meta *m = meta_of(n);
    t = to_dtype(g, t, m->dtype);
    if (t && !hop_meta_equal(meta_of(t), m))
        t = hop__ad_expand(g, t, m);
    return t ? hop_jvp_set_tangent(cx, n, 0, t) : hop_error_code();
}

/* Rules through operand 0 alone.  The prologue is written once here (C has
 * no closures, so a macro names the body): VJP_ARG0(name) defines vjp slot
 * name, which does nothing unless reverse mode wants a gradient for operand
 * 0 and else runs the body that follows on (cx, n, a: the ad view);
 * JVP_ARG0(name) defines jvp slot name, which does nothing unless operand 0
 * has a tangent and else runs the body on (cx, n, a, t: that tangent). */
typedef hop_status (*vjp_arg0_body)(hop_vjp_ctx *cx, const hop_node *n, const ad *a);
typedef hop_status (*jvp_arg0_body)(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t);

static inline hop_status
vjp_arg0(hop_vjp_ctx *cx, const hop_node *n, vjp_arg0_body body)
{
    if (!wants(cx, &n->args[0]))
        return HOP_OK;
    ad a = ad_vjp(cx);
    return body(cx, n, &a);
}

static inline hop_status
jvp_arg0(hop_jvp_ctx *cx, const hop_node *n, jvp_arg0_body body)
{
    hop_node *t = tangent(cx, &n->args[0]);
    if (t == NULL)
        return HOP_OK;
    ad a = ad_jvp(cx);
    return body(cx, n, &a, t);
}

#define VJP_ARG0(name)                                                                             \
    static hop_status name##_body(hop_vjp_ctx *cx, const hop_node *n, const ad *a);                \
    static hop_status name(hop_vjp_ctx *cx, const hop_node *n)                                     \
    {                                                                                              \
        return vjp_arg0(cx, n, name##_body);                                                       \
    }                                                                                              \
    static hop_status name##_body(hop_vjp_ctx *cx, const hop_node *n, const ad *a)

#define JVP_ARG0(name)                                                                             \
    static hop_status name##_body(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t);   \
    static hop_status name(hop_jvp_ctx *cx, const hop_node *n)                                     \
    {                                                                                              \
        return jvp_arg0(cx, n, name##_body);                                                       \
    }                                                                                              \
    static hop_status name##_body(hop_jvp_ctx *cx, const hop_node *n, const ad *a, hop_node *t)

/* The op of n applied again with x (argument 0) replaced by t and every
 * other node argument by its primal: the tangent of an op linear in x. */
static inline hop_node *
relinear(const ad *a, const hop_node *n, hop_node *t)
{
    hop_arg args[8];
    if (t == NULL || n->nargs > LEN(args))
        return NULL;
    for (size_t k = 0; k < n->nargs; k++) {
        args[k] = n->args[k];
        if (args[k].kind == HOP_ARG_NODE)
            args[k] = N(k == 0 ? t : primal(a, n->args[k].u.node));
    }
    return hop_graph_emit(a->g, n->op, args, n->nargs);
}

JVP_ARG0(jvp_linear)
{
    return set_tangent(cx, n, relinear(a, n, t));
}

/* An INT, SYM or SymInt-node argument as a SymInt expression; NULL for
 * another kind.  (A SymInt node, a placeholder or item's result, stands for
 * its symbol, which the transformed graph binds as the forward did.) */
static inline const hop_expr *
arg_expr(hop_shape_env *env, const hop_arg *a)
{
    return a->kind == HOP_ARG_INT   ? hop_sym_const(env, a->u.i)
           : a->kind == HOP_ARG_SYM ? a->u.sym
           : a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_SYM
               ? a->u.node->meta->sym
               : NULL;
}

/* The parts of the table in shape_rules.c and index_rules.c (rows of other
 * ops are zero). */
extern const hop_op_ad_rule hop__ad_shape_rules[HOP_OP_COUNT];
extern const hop_op_ad_rule hop__ad_index_rules[HOP_OP_COUNT];

#endif
