/*
 * batching/op_rules.c - the batch rule of every op: a column of the op table
 * (hop_op_batch).
 *
 * A rule runs when at least one operand of a node is batched.  A batched
 * value has the batch at dim 0 and the forward value's dims after it (its
 * logical dims), so a rule mostly shifts dim arguments by one, after
 * normalising negative ones against the logical rank.  Elementwise ops align
 * a batched operand of lower logical rank than the result by inserting
 * size-1 dims after the batch; an unbatched operand broadcasts from the
 * right by itself.  docs/VMAP.md has the table.
 */
#include "batching/batch_impl.h"
#include "core/core.h"

#include <string.h>

/* ------------------------------------------------------------ emitters */

static hop_node *
op_nodes(hop_graph *g, hop_op op, hop_node *x, const hop_arg *rest, size_t nrest)
{
    if (x == NULL)
        return NULL;
    hop_arg args[8];
    args[0] = hop_arg_node(x);
    for (size_t i = 0; i < nrest && i < 7; i++)
        args[i + 1] = rest[i];
    return hop_graph_call_op(g, op, args, nrest + 1);
}

hop_node *
hop__batch_unsqueeze(hop_graph *g, hop_node *x, int64_t dim)
{
    hop_arg d = hop_arg_int(dim);
    return op_nodes(g, HOP_OP_unsqueeze, x, &d, 1);
}

hop_node *
hop__batch_squeeze(hop_graph *g, hop_node *x, int64_t dim)
{
    hop_arg d = hop_arg_int(dim);
    return op_nodes(g, HOP_OP_squeeze, x, &d, 1);
}

hop_node *
hop__batch_movedim(hop_graph *g, hop_node *x, int from, int to)
{
    if (x == NULL || from == to)
        return x;
    int r = x->meta->meta.rank, order[HOP_MAX_RANK], k = 0;
    for (int d = 0; d < r; d++)
        if (d != from)
            order[k++] = d;
    /* order holds the other dims; put `from` at `to` */
    hop_arg items[HOP_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++)
        items[d] = hop_arg_int(d == to ? from : order[j++]);
    hop_arg list = hop_arg_list(items, (size_t)r);
    return op_nodes(g, HOP_OP_permute, x, &list, 1);
}

/* reshape(x, [B, sizes...]) with nsizes items after the batch size. */
static hop_node *
reshape_batched(hop_batch_ctx *cx, hop_node *x, const hop_arg *sizes, size_t nsizes)
{
    hop_arg items[HOP_MAX_RANK + 1];
    if (nsizes + 1 > HOP_MAX_RANK) {
        hop_error(HOP_UNSUPPORTED, "vmap: a batched value would have rank %zu, more than %d",
                  nsizes + 1, HOP_MAX_RANK);
        return NULL;
    }
    items[0] = hop_arg_sym(hop_batch_size(cx));
    memcpy(items + 1, sizes, nsizes * sizeof *items);
    hop_arg list = hop_arg_list(items, nsizes + 1);
    return op_nodes(hop_batch_out(cx), HOP_OP_reshape, x, &list, 1);
}

/* Whether the batch has 0 examples: a reshape of it cannot infer a -1 (no
 * elements to divide), so the rules give such a size from one example's
 * metadata instead. */
static bool
empty_batch(hop_batch_ctx *cx)
{
    int64_t b;
    return hop_expr_const_value(hop_batch_size(cx), &b) && b == 0;
}

/* x (batched) reshaped to [B, ones..., m's sizes] with `ones` size-1 dims. */
static hop_node *
reshape_ones(hop_batch_ctx *cx, hop_node *x, int ones, const hop_meta *m)
{
    hop_arg sizes[HOP_MAX_RANK];
    size_t k = 0;
    for (int i = 0; i < ones && k < HOP_MAX_RANK; i++)
        sizes[k++] = hop_arg_int(1);
    for (int d = 0; d < m->rank && k < HOP_MAX_RANK; d++)
        sizes[k++] = hop_arg_sym(m->sizes[d]);
    if ((int)k != ones + m->rank) {
        hop_error(HOP_UNSUPPORTED, "vmap: a batched value would have rank %d, more than %d",
                  ones + m->rank + 1, HOP_MAX_RANK);
        return NULL;
    }
    return reshape_batched(cx, x, sizes, k);
}

/* ------------------------------------------------------------ helpers */

static int
rank_of(const hop_node *fwd)
{
    return fwd->meta->kind == HOP_VALUE_TENSOR ? fwd->meta->meta.rank : 0;
}

/* d normalised against rank r (Python's negative dims). */
static int64_t
norm(int64_t d, int r)
{
    return d < 0 ? d + r : d;
}

/* The value of tensor operand k of n and whether it is batched. */
static hop_node *
operand(hop_batch_ctx *cx, const hop_node *n, size_t k, bool *batched)
{
    return hop_batch_value(cx, n->args[k].u.node, batched);
}

/* n's op over args, set as n's value (batched). */
static hop_status
emit(hop_batch_ctx *cx, const hop_node *n, hop_op op, const hop_arg *args, size_t nargs,
     bool batched)
{
    hop_node *r = hop_graph_call_op(hop_batch_out(cx), op, args, nargs);
    if (r == NULL)
        return hop_error_code();
    return hop_batch_set(cx, n, 0, r, batched);
}

static hop_status
set(hop_batch_ctx *cx, const hop_node *n, hop_node *v)
{
    return v ? hop_batch_set(cx, n, 0, v, true) : hop_error_code();
}

/* n's arguments as they are, with argument k replaced by v. */
static void
args_with(hop_batch_ctx *cx, const hop_node *n, hop_arg *args)
{
    for (size_t i = 0; i < n->nargs; i++) {
        args[i] = n->args[i];
        if (args[i].kind == HOP_ARG_NODE)
            args[i] = hop_arg_node(hop_batch_value(cx, n->args[i].u.node, NULL));
    }
}

/* ------------------------------------------------------------ rules */

/* v, the [B] tensor of a batched item (a SymInt per example, see
 * batch_item) that elementwise op n reads as a scalar operand, converted to
 * the dtype a Python int (bool) takes beside n's tensors, a weak scalar as
 * eagerly: n's result dtype (f32[2] * n is f32, i32[2] * n is i32, i8[2] *
 * 300 wraps in i8, bool[2] + n is i64; logical ops take its truth); for a
 * comparison, the dtype of the tensor it is compared with (i8[2] == 300
 * compares with the wrapped 44, as eagerly), except a bool tensor, which
 * promotes to the int's dtype (bool[2] == 2 is false). */
static hop_node *
weak_int(hop_batch_ctx *cx, const hop_node *n, hop_node *v)
{
    hop_dtype want = n->meta->meta.dtype;
    bool compare = n->op == HOP_OP_eq || n->op == HOP_OP_ne || n->op == HOP_OP_lt ||
                   n->op == HOP_OP_le || n->op == HOP_OP_gt || n->op == HOP_OP_ge;
    if (compare) {
        want = HOP_BOOL;
        for (size_t i = 0; i < n->nargs && want == HOP_BOOL; i++) {
            const hop_arg *a = &n->args[i];
            if (a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_TENSOR)
                want = a->u.node->meta->meta.dtype;
        }
    }
    if (v == NULL || v->meta->meta.dtype == want || (compare && want == HOP_BOOL))
        return v;
    return op_nodes(hop_batch_out(cx), HOP_OP_to, v, (hop_arg[]){hop_arg_dtype(want)}, 1);
}

/* The [B] value of symbol s where n's graph binds it to a batched item
 * (batch_item), as int64 so that arithmetic on it is Python's within int64;
 * NULL when s is bound unbatched (a size, an unbatched item) or not in n's
 * graph before n. */
static hop_node *
batched_symbol(hop_batch_ctx *cx, const hop_node *n, const hop_expr *s)
{
    hop_node *v = hop__batch_symbol(cx, n, s);
    if (v == NULL || v->meta->meta.dtype == HOP_I64)
        return v;
    return op_nodes(hop_batch_out(cx), HOP_OP_to, v, (hop_arg[]){hop_arg_dtype(HOP_I64)}, 1);
}

/* acc op x, where x is a [B] node or an unbatched expression (an operand a
 * binary op takes as a weak int beside acc's int64). */
static hop_node *
combine(hop_batch_ctx *cx, hop_op op, hop_node *acc, hop_arg x)
{
    if (acc == NULL)
        return x.kind == HOP_ARG_NODE ? x.u.node : NULL;
    return op_nodes(hop_batch_out(cx), op, acc, &x, 1);
}

/*
 * SymInt expression e, a scalar operand of elementwise op n, as its value per
 * example: e itself (*out an expression argument) when it mentions no
 * batched item, else a [B] int64 node computing e's canonical form (see
 * hop_expr_kind) on the batched items' [B] values with the int ops that
 * round as Python does (floor_divide, remainder); the unbatched parts stay
 * expression arguments of those ops.  A // or % whose divisor is batched or
 * may be 0 is refused: eagerly the example dividing by 0 raises, where the
 * tensor op would give 0.
 */
static hop_status
batched_expr(hop_batch_ctx *cx, const hop_node *n, const hop_expr *e, hop_arg *out)
{
    hop_shape_env *env = hop_batch_out(cx)->env;
    *out = hop_arg_sym(e);
    if (!hop__batch_mentions(cx, n, e))
        return HOP_OK;
    hop_expr_kind kind = hop_expr_kind_of(e);
    size_t k = hop_expr_noperands(e);
    hop_node *acc = NULL;
    const hop_expr *rest = NULL; /* the unbatched terms (ADD), factors (MUL) */
    hop_arg x;
    switch (kind) {
    case HOP_EXPR_SYMBOL:
        acc = batched_symbol(cx, n, e);
        break;
    case HOP_EXPR_ADD:
        rest = hop_sym_const(env, hop_expr_addend(e));
        for (size_t i = 0; i < k && rest; i++) {
            const hop_expr *t = hop_expr_operand(e, i);
            int64_t c = hop_expr_coef(e, i);
            if (batched_expr(cx, n, t, &x) != HOP_OK)
                return hop_error_code();
            if (x.kind == HOP_ARG_SYM)
                rest = hop_sym_add(env, rest, hop_sym_mul_int(env, t, c));
            else if (c == 1 || (x.u.node = combine(cx, HOP_OP_mul, x.u.node, hop_arg_int(c))))
                acc = acc ? combine(cx, HOP_OP_add, acc, x) : x.u.node;
            if (x.kind == HOP_ARG_NODE && (x.u.node == NULL || acc == NULL))
                return hop_error_code();
        }
        if (rest == NULL)
            return hop_error_code();
        if (rest != hop_sym_const(env, 0)) /* (interned: equal expressions are one pointer) */
            acc = combine(cx, HOP_OP_add, acc, hop_arg_sym(rest));
        break;
    case HOP_EXPR_MUL:
        rest = hop_sym_const(env, 1);
        for (size_t i = 0; i < k && rest; i++) {
            const hop_expr *t = hop_expr_operand(e, i);
            int64_t p = hop_expr_coef(e, i);
            if (batched_expr(cx, n, t, &x) != HOP_OK)
                return hop_error_code();
            for (int64_t j = 0; j < p && rest; j++) {
                if (x.kind == HOP_ARG_SYM)
                    rest = hop_sym_mul(env, rest, t);
                else if ((acc = acc ? combine(cx, HOP_OP_mul, acc, x) : x.u.node) == NULL)
                    return hop_error_code();
            }
        }
        if (rest == NULL)
            return hop_error_code();
        if (rest != hop_sym_const(env, 1))
            acc = combine(cx, HOP_OP_mul, acc, hop_arg_sym(rest));
        break;
    case HOP_EXPR_FLOORDIV:
    case HOP_EXPR_MOD: {
        const hop_expr *d = hop_expr_operand(e, 1);
        int64_t lo, hi;
        hop_shape_env_bounds(env, d, &lo, &hi);
        if (hop__batch_mentions(cx, n, d) || (lo <= 0 && hi >= 0))
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: %s reads the int %s, whose %s divides by %s, which may be 0 "
                             "in an example (eagerly that example raises ZeroDivisionError)",
                             n->name, hop_expr_str(env, e), kind == HOP_EXPR_MOD ? "%" : "//",
                             hop_expr_str(env, d));
        if (batched_expr(cx, n, hop_expr_operand(e, 0), &x) != HOP_OK)
            return hop_error_code();
        acc = x.kind == HOP_ARG_NODE ? x.u.node : NULL; /* (d is unbatched: e's dividend is) */
        acc = combine(cx, kind == HOP_EXPR_MOD ? HOP_OP_remainder : HOP_OP_floor_divide, acc,
                      hop_arg_sym(d));
        break;
    }
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
        for (size_t i = 0; i < k; i++) {
            if (batched_expr(cx, n, hop_expr_operand(e, i), &x) != HOP_OK)
                return hop_error_code();
            if (acc == NULL && x.kind == HOP_ARG_SYM) /* (a batched operand comes later) */
                x = hop_arg_node(hop_graph_call_op(
                    hop_batch_out(cx), HOP_OP_full,
                    (hop_arg[]){hop_arg_list(NULL, 0), x, hop_arg_dtype(HOP_I64)}, 3));
            acc = acc ? combine(cx, kind == HOP_EXPR_MAX ? HOP_OP_maximum : HOP_OP_minimum, acc, x)
                      : x.u.node;
            if (acc == NULL)
                return hop_error_code();
        }
        break;
    default:
        return hop_error(HOP_UNSUPPORTED, "vmap: %s reads %s, not an int expression", n->name,
                         hop_expr_str(env, e));
    }
    if (acc == NULL)
        return hop_error_code();
    *out = hop_arg_node(acc);
    return HOP_OK;
}

/* Unary, binary, comparison, logical, where, to, clone: batched operands of
 * lower logical rank than the result get size-1 dims after the batch.  A
 * batched item's int, alone (a SymInt node) or in an expression, is its
 * per-example values as a tensor of the dtype a weak Python int takes. */
static hop_status
batch_elementwise(hop_batch_ctx *cx, const hop_node *n)
{
    int R = rank_of(n);
    hop_arg args[8];
    for (size_t i = 0; i < n->nargs && i < 8; i++) {
        const hop_arg *a = &n->args[i];
        if (a->kind == HOP_ARG_SYM && !hop_expr_is_bool(a->u.sym)) {
            if (batched_expr(cx, n, a->u.sym, &args[i]) != HOP_OK)
                return hop_error_code();
            hop_node *v = args[i].kind == HOP_ARG_NODE ? weak_int(cx, n, args[i].u.node) : NULL;
            const hop_meta scalar = {.rank = 0};
            if (args[i].kind == HOP_ARG_NODE &&
                (v == NULL || (R > 0 && (v = reshape_ones(cx, v, R, &scalar)) == NULL)))
                return hop_error_code();
            if (v)
                args[i] = hop_arg_node(v);
            continue;
        }
        if (a->kind != HOP_ARG_NODE) {
            args[i] = *a;
            continue;
        }
        bool b;
        hop_node *v = hop_batch_value(cx, a->u.node, &b);
        if (b && a->u.node->meta->kind == HOP_VALUE_SYM && (v = weak_int(cx, n, v)) == NULL)
            return hop_error_code();
        int r = rank_of(a->u.node);
        if (b && r < R && (v = reshape_ones(cx, v, R - r, &a->u.node->meta->meta)) == NULL)
            return hop_error_code();
        args[i] = hop_arg_node(v);
    }
    return emit(cx, n, n->op, args, n->nargs, true);
}

/* The dims argument of a reduction as a list of logical dims (all of them
 * for NONE or an empty list); false when there are none to name (rank 0). */
static size_t
reduce_dims(const hop_arg *a, int r, int64_t *dims)
{
    size_t k = 0;
    if (a->kind == HOP_ARG_INT)
        dims[k++] = norm(a->u.i, r);
    else if (a->kind == HOP_ARG_LIST)
        for (size_t i = 0; i < a->u.list.n && k < HOP_MAX_RANK; i++)
            dims[k++] = norm(a->u.list.items[i].u.i, r);
    if (k == 0)
        for (int d = 0; d < r; d++)
            dims[k++] = d;
    return k;
}

/* The dims (into items; their count returned) and keepdim of reduction n
 * (x, dims, keepdim, ...) over batched operands: normalised against the
 * logical rank and shifted by one; a logical scalar is reduced over a
 * size-1 dim made for it in each of vs[0..nv) (NULL where that fails). */
static size_t
batched_reduce_dims(hop_batch_ctx *cx, const hop_node *n, hop_arg *items, bool *keepdim,
                    hop_node **vs, int nv)
{
    int r = rank_of(n->args[0].u.node);
    int64_t dims[HOP_MAX_RANK];
    size_t k = reduce_dims(&n->args[1], r, dims);
    *keepdim = n->args[2].kind == HOP_ARG_BOOL && n->args[2].u.b;
    if (r > 0) {
        for (size_t i = 0; i < k; i++)
            items[i] = hop_arg_int(dims[i] + 1);
        return k;
    }
    for (int i = 0; i < nv; i++)
        vs[i] = vs[i] ? hop__batch_unsqueeze(hop_batch_out(cx), vs[i], 1) : NULL;
    items[0] = hop_arg_int(1);
    *keepdim = false;
    return 1;
}

/* sum mean amax amin prod any all (x, dims, keepdim). */
static hop_status
batch_reduce(hop_batch_ctx *cx, const hop_node *n)
{
    hop_node *x = operand(cx, n, 0, NULL);
    hop_arg items[HOP_MAX_RANK];
    bool keepdim;
    size_t k = batched_reduce_dims(cx, n, items, &keepdim, &x, 1);
    if (x == NULL)
        return hop_error_code();
    hop_arg args[] = {hop_arg_node(x), hop_arg_list(items, k), hop_arg_bool(keepdim)};
    return emit(cx, n, n->op, args, 3, true);
}

/* Operand k of n with its batch dim at 0 whether or not it was batched (an
 * unbatched one expanded along a new leading dim of the batch size). */
static hop_node *
batched_operand(hop_batch_ctx *cx, const hop_node *n, size_t k)
{
    bool b = false;
    hop_node *v = operand(cx, n, k, &b);
    if (b || v == NULL)
        return v;
    const hop_meta *m = &n->args[k].u.node->meta->meta;
    hop_arg items[HOP_MAX_RANK + 1];
    if (m->rank + 1 > HOP_MAX_RANK) {
        hop_error(HOP_UNSUPPORTED, "vmap: %s of rank %d", hop_op_get(n->op)->name, m->rank);
        return NULL;
    }
    items[0] = hop_arg_sym(hop_batch_size(cx));
    for (int q = 0; q < m->rank; q++)
        items[q + 1] = hop_arg_sym(m->sizes[q]);
    v = hop__batch_unsqueeze(hop_batch_out(cx), v, 0);
    return op_nodes(hop_batch_out(cx), HOP_OP_expand, v,
                    (hop_arg[]){hop_arg_list(items, (size_t)m->rank + 1)}, 1);
}

/* masked_sum and masked_prod (x, dims, keepdim, mask, initial): x and mask both batched,
 * reduced as batch_reduce's dims; a batched initial (one start per
 * example) is not batched. */
static hop_status
batch_masked_sum(hop_batch_ctx *cx, const hop_node *n)
{
    bool bi = false;
    hop_node *init = operand(cx, n, 4, &bi);
    if (bi)
        return hop_error(HOP_UNSUPPORTED, "vmap: %s with a batched initial",
                         hop_op_get(n->op)->name);
    hop_node *xm[] = {batched_operand(cx, n, 0), batched_operand(cx, n, 3)};
    hop_arg items[HOP_MAX_RANK];
    bool keepdim;
    size_t k = batched_reduce_dims(cx, n, items, &keepdim, xm, 2);
    if (xm[0] == NULL || xm[1] == NULL || init == NULL)
        return hop_error_code();
    hop_arg args[] = {hop_arg_node(xm[0]), hop_arg_list(items, k), hop_arg_bool(keepdim),
                      hop_arg_node(xm[1]), hop_arg_node(init)};
    return emit(cx, n, n->op, args, 5, true);
}

/* argmax argmin (x, dim or NONE = flattened, keepdim). */
static hop_status
batch_argmax(hop_batch_ctx *cx, const hop_node *n)
{
    hop_node *x = operand(cx, n, 0, NULL);
    int r = rank_of(n->args[0].u.node);
    hop_graph *g = hop_batch_out(cx);
    if (n->args[1].kind == HOP_ARG_INT && r > 0) {
        hop_arg args[] = {hop_arg_node(x), hop_arg_int(norm(n->args[1].u.i, r) + 1), n->args[2]};
        return emit(cx, n, n->op, args, 3, true);
    }
    /* flattened (or a logical scalar): over [B, numel] */
    hop_arg minus1 = hop_arg_int(-1);
    if (empty_batch(cx)) { /* (no -1 to infer from no elements) */
        const hop_meta *m = &n->args[0].u.node->meta->meta;
        const hop_expr *numel = hop_sym_const(g->env, 1);
        for (int d = 0; d < m->rank && numel != NULL; d++)
            numel = hop_sym_mul(g->env, numel, m->sizes[d]);
        if (numel == NULL)
            return hop_error_code();
        minus1 = hop_arg_sym(numel);
    }
    if ((x = reshape_batched(cx, x, &minus1, 1)) == NULL)
        return hop_error_code();
    hop_arg args[] = {hop_arg_node(x), hop_arg_int(1), hop_arg_bool(false)};
    hop_node *res = hop_graph_call_op(g, n->op, args, 3);
    if (res != NULL && rank_of(n) > 0)
        res = reshape_ones(cx, res, 0, &n->meta->meta);
    return set(cx, n, res);
}

/*
 * matmul (a, b).  A batched 1-D operand becomes a matrix ([B, 1, k] on the
 * left, [B, k, 1] on the right) whose extra dim is squeezed from the result;
 * a batched operand of lower matrix rank than the other gets size-1 dims
 * after the batch, so the batch never broadcasts against the other's batch
 * dims.  A batched right vector times an unbatched left operand is
 * a @ b^T ([.., n, B]) with the batch moved to the front.
 */
static hop_status
batch_matmul(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    bool ba, bb;
    hop_node *a = operand(cx, n, 0, &ba), *b = operand(cx, n, 1, &bb);
    int ra = rank_of(n->args[0].u.node), rb = rank_of(n->args[1].u.node);
    if (!ba && rb == 1) {
        /* a @ b[B, k]^T = [..., B] */
        hop_arg t[] = {hop_arg_int(0), hop_arg_int(1)};
        hop_node *bt = op_nodes(g, HOP_OP_transpose, b, t, 2);
        hop_node *res = bt ? op_nodes(g, HOP_OP_matmul, a, (hop_arg[]){hop_arg_node(bt)}, 1) : NULL;
        if (res == NULL)
            return hop_error_code();
        return set(cx, n, hop__batch_movedim(g, res, res->meta->meta.rank - 1, 0));
    }
    if (ba && ra == 1 && !bb && rb == 2) {
        /* a[B, k] @ b[k, n] = [B, n]: one GEMM, not B row-vector products */
        hop_node *res = op_nodes(g, HOP_OP_matmul, a, (hop_arg[]){hop_arg_node(b)}, 1);
        return res ? set(cx, n, res) : hop_error_code();
    }
    bool arow = false, bcol = false;
    if (ba && ra == 1) {
        a = hop__batch_unsqueeze(g, a, 1);
        ra = 2;
        arow = true;
    }
    if (bb && rb == 1) {
        b = hop__batch_unsqueeze(g, b, 2);
        rb = 2;
        bcol = true;
    }
    if (a == NULL || b == NULL)
        return hop_error_code();
    /* align the batched operands' matrix ranks with the other's */
    int top = ra > rb ? ra : rb;
    for (; ba && ra >= 2 && ra < top; ra++)
        if ((a = hop__batch_unsqueeze(g, a, 1)) == NULL)
            return hop_error_code();
    for (; bb && rb >= 2 && rb < top; rb++)
        if ((b = hop__batch_unsqueeze(g, b, 1)) == NULL)
            return hop_error_code();
    hop_node *res = op_nodes(g, HOP_OP_matmul, a, (hop_arg[]){hop_arg_node(b)}, 1);
    /* b's column dim is last when b is a matrix in the call */
    bool bmat = bcol || rank_of(n->args[1].u.node) >= 2;
    if (bcol)
        res = hop__batch_squeeze(g, res, -1);
    if (arow)
        res = hop__batch_squeeze(g, res, bmat && !bcol ? -2 : -1);
    return set(cx, n, res);
}

/* reshape view (x, shape): the batch size first (a view of a batched value
 * may not be viewable: it is a reshape). */
static hop_status
batch_reshape(hop_batch_ctx *cx, const hop_node *n)
{
    const hop_arg *shape = &n->args[1];
    hop_node *x = operand(cx, n, 0, NULL);
    const hop_arg *items = shape->u.list.items;
    size_t k = shape->u.list.n;
    hop_arg sizes[HOP_MAX_RANK];
    if (empty_batch(cx) && k <= HOP_MAX_RANK && (int)k == n->meta->meta.rank) {
        /* a -1 is the example's size there (the result's metadata) */
        for (size_t i = 0; i < k; i++)
            sizes[i] = items[i].kind == HOP_ARG_INT && items[i].u.i == -1
                           ? hop_arg_sym(n->meta->meta.sizes[i])
                           : items[i];
        items = sizes;
    }
    return set(cx, n, reshape_batched(cx, x, items, k));
}

/* squeeze (x, dim or NONE): a reshape to the result's logical sizes, so a
 * batch of size 1 is never squeezed. */
static hop_status
batch_squeeze(hop_batch_ctx *cx, const hop_node *n)
{
    return set(cx, n, reshape_ones(cx, operand(cx, n, 0, NULL), 0, &n->meta->meta));
}

/* expand (x, sizes): x gets size-1 dims for the new leading ones first. */
static hop_status
batch_expand(hop_batch_ctx *cx, const hop_node *n)
{
    const hop_node *fx = n->args[0].u.node;
    int r = rank_of(fx), L = (int)n->args[1].u.list.n;
    hop_node *x = operand(cx, n, 0, NULL);
    if (L > r && (x = reshape_ones(cx, x, L - r, &fx->meta->meta)) == NULL)
        return hop_error_code();
    hop_arg items[HOP_MAX_RANK + 1];
    if (L + 1 > HOP_MAX_RANK)
        return hop_error(HOP_UNSUPPORTED, "vmap: expand to rank %d of a batched value", L + 1);
    items[0] = hop_arg_sym(hop_batch_size(cx));
    memcpy(items + 1, n->args[1].u.list.items, (size_t)L * sizeof *items);
    hop_arg args[] = {hop_arg_node(x), hop_arg_list(items, (size_t)L + 1)};
    return emit(cx, n, HOP_OP_expand, args, 2, true);
}

/* transpose (x, d0, d1) */
static hop_status
batch_transpose(hop_batch_ctx *cx, const hop_node *n)
{
    int r = rank_of(n->args[0].u.node);
    hop_arg args[] = {hop_arg_node(operand(cx, n, 0, NULL)),
                      hop_arg_int(norm(n->args[1].u.i, r) + 1),
                      hop_arg_int(norm(n->args[2].u.i, r) + 1)};
    return emit(cx, n, HOP_OP_transpose, args, 3, true);
}

/* permute (x, dims) */
static hop_status
batch_permute(hop_batch_ctx *cx, const hop_node *n)
{
    int r = rank_of(n->args[0].u.node);
    const hop_arg *dims = &n->args[1];
    hop_arg items[HOP_MAX_RANK];
    if (dims->u.list.n + 1 > HOP_MAX_RANK)
        return hop_error(HOP_UNSUPPORTED, "vmap: permute of a batched value of rank %zu",
                         dims->u.list.n + 1);
    items[0] = hop_arg_int(0);
    for (size_t i = 0; i < dims->u.list.n; i++)
        items[i + 1] = hop_arg_int(norm(dims->u.list.items[i].u.i, r) + 1);
    hop_arg args[] = {hop_arg_node(operand(cx, n, 0, NULL)),
                      hop_arg_list(items, dims->u.list.n + 1)};
    return emit(cx, n, HOP_OP_permute, args, 2, true);
}

/* Ops whose argument 1 is a dim of x: select slice cumsum cumprod sort
 * argsort sym_size; unsqueeze's is a dim of the result (rank + 1). */
static hop_status
batch_dim1(hop_batch_ctx *cx, const hop_node *n)
{
    int r = rank_of(n->args[0].u.node) + (n->op == HOP_OP_unsqueeze);
    hop_arg args[8];
    args_with(cx, n, args);
    args[1] = hop_arg_int(norm(n->args[1].u.i, r) + 1);
    /* sym_size is the same for every example: not batched */
    return emit(cx, n, n->op, args, n->nargs, n->op != HOP_OP_sym_size);
}

/* cat stack (tensors, dim): unbatched tensors are broadcast to the batch. */
static hop_status
batch_concat(hop_batch_ctx *cx, const hop_node *n)
{
    const hop_arg *list = &n->args[0];
    size_t nt = list->u.list.n;
    hop_arg *items = hop__calloc(nt + 1, sizeof *items);
    if (items == NULL)
        return HOP_NOMEM;
    hop_status st = HOP_OK;
    int r = 0;
    for (size_t i = 0; i < nt && st == HOP_OK; i++) {
        bool b;
        const hop_node *f = list->u.list.items[i].u.node;
        hop_node *v = hop_batch_value(cx, f, &b);
        r = rank_of(f);
        if (!b && (v = hop_batch_broadcast(cx, v)) == NULL)
            st = hop_error_code();
        items[i] = hop_arg_node(v);
    }
    r += n->op == HOP_OP_stack;
    hop_arg args[] = {hop_arg_list(items, nt), hop_arg_int(norm(n->args[1].u.i, r) + 1)};
    if (st == HOP_OK)
        st = emit(cx, n, n->op, args, 2, true);
    hop__free(items);
    return st;
}

/*
 * A gather from a batched x by a batched index (in range along dim d, or
 * past B * size to make take report it): x flattened over (batch, dim), each
 * example's index offset by its row: x's dim moved next to the batch,
 * [B * size, ...] taken at index + b * size, then the gathered dims (ri of
 * them, after the batch) moved back after x's leading dims.  fx is the
 * forward x (its logical sizes).
 */
static hop_node *
gather_batched(hop_batch_ctx *cx, hop_node *x, const hop_node *fx, int64_t d, hop_node *idx, int ri)
{
    hop_graph *g = hop_batch_out(cx);
    int r = rank_of(fx);
    const hop_expr *size = fx->meta->meta.sizes[d];
    const hop_expr *total = hop_sym_mul(g->env, hop_batch_size(cx), size);
    if (total == NULL || idx == NULL)
        return NULL;
    hop_arg s = hop_arg_sym(size);
    /* + b * size, b the example's row */
    hop_arg ar[] = {hop_arg_int(0), hop_arg_sym(hop_batch_size(cx)), hop_arg_int(1),
                    hop_arg_dtype(HOP_I64)};
    hop_node *rows = hop_graph_call_op(g, HOP_OP_arange, ar, 4);
    hop_node *off = rows ? op_nodes(g, HOP_OP_mul, rows, &s, 1) : NULL;
    hop_meta one = {.dtype = HOP_I64, .rank = 0};
    if (off && ri > 0 && (off = reshape_ones(cx, off, ri, &one)) == NULL)
        return NULL;
    hop_node *flat_idx =
        off ? op_nodes(g, HOP_OP_add, idx, (hop_arg[]){hop_arg_node(off)}, 1) : NULL;
    /* x: [B, pre..., size, post...] -> [B, size, pre..., post...] -> [B * size, ...] */
    hop_node *xm = hop__batch_movedim(g, x, (int)d + 1, 1);
    hop_arg items[HOP_MAX_RANK];
    items[0] = hop_arg_sym(total);
    for (int k = 0, j = 1; k < r; k++)
        if (k != d)
            items[j++] = hop_arg_sym(fx->meta->meta.sizes[k]);
    hop_node *xf =
        xm ? op_nodes(g, HOP_OP_reshape, xm, (hop_arg[]){hop_arg_list(items, (size_t)r)}, 1) : NULL;
    hop_node *res = xf && flat_idx ? hop_graph_call_op(g, HOP_OP_take,
                                                       (hop_arg[]){hop_arg_node(xf), hop_arg_int(0),
                                                                   hop_arg_node(flat_idx)},
                                                       3)
                                   : NULL;
    if (res == NULL || d == 0)
        return res;
    /* res: [B, I..., pre..., post...] -> [B, pre..., I..., post...] */
    hop_arg perm[HOP_MAX_RANK];
    int k = 0, rr = res->meta->meta.rank;
    perm[k++] = hop_arg_int(0);
    for (int j = 0; j < d; j++)
        perm[k++] = hop_arg_int(1 + ri + j);
    for (int j = 0; j < ri; j++)
        perm[k++] = hop_arg_int(1 + j);
    for (int j = 1 + ri + (int)d; j < rr; j++)
        perm[k++] = hop_arg_int(j);
    return op_nodes(g, HOP_OP_permute, res, (hop_arg[]){hop_arg_list(perm, (size_t)rr)}, 1);
}

/*
 * take (x, dim, index).  A batched x with an unbatched index: the dim
 * shifts.  An unbatched x with a batched index: the result has the index's
 * batch at dim, moved to 0.  Both batched: gather_batched, the index
 * normalised first (an index out of range is sent past the end, so take
 * reports it).
 */
static hop_status
batch_take(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    bool bx, bi;
    hop_node *x = operand(cx, n, 0, &bx), *idx = operand(cx, n, 2, &bi);
    const hop_node *fx = n->args[0].u.node, *fi = n->args[2].u.node;
    int r = rank_of(fx), ri = rank_of(fi);
    int64_t d = norm(n->args[1].u.i, r);
    if (!bi) {
        hop_arg args[] = {hop_arg_node(x), hop_arg_int(d + 1), hop_arg_node(idx)};
        return emit(cx, n, HOP_OP_take, args, 3, true);
    }
    if (!bx) {
        hop_arg args[] = {hop_arg_node(x), hop_arg_int(d), hop_arg_node(idx)};
        hop_node *res = hop_graph_call_op(g, HOP_OP_take, args, 3);
        return set(cx, n, res ? hop__batch_movedim(g, res, (int)d, 0) : NULL);
    }
    const hop_expr *size = fx->meta->meta.sizes[d];
    /* idx in [0, size) or past B * size */
    hop_arg s = hop_arg_sym(size);
    hop_node *neg = op_nodes(g, HOP_OP_lt, idx, (hop_arg[]){hop_arg_int(0)}, 1);
    hop_node *wrapped = op_nodes(g, HOP_OP_add, idx, &s, 1);
    hop_node *in =
        neg && wrapped
            ? hop_graph_call_op(
                  g, HOP_OP_where,
                  (hop_arg[]){hop_arg_node(neg), hop_arg_node(wrapped), hop_arg_node(idx)}, 3)
            : NULL;
    hop_node *lo = op_nodes(g, HOP_OP_lt, in, (hop_arg[]){hop_arg_int(0)}, 1);
    hop_node *hi = op_nodes(g, HOP_OP_ge, in, &s, 1);
    hop_node *bad =
        lo && hi ? op_nodes(g, HOP_OP_logical_or, lo, (hop_arg[]){hop_arg_node(hi)}, 1) : NULL;
    const hop_expr *total = hop_sym_mul(g->env, hop_batch_size(cx), size);
    if (total == NULL)
        return hop_error_code();
    hop_node *safe =
        bad ? hop_graph_call_op(
                  g, HOP_OP_where,
                  (hop_arg[]){hop_arg_node(bad), hop_arg_sym(total), hop_arg_node(in)}, 3)
            : NULL;
    return set(cx, n, gather_batched(cx, x, fx, d, safe, ri));
}

/*
 * The dynamic indexing ops with a start per example ([B]): the starts
 * clamped as hop_dynamic_start clamps them (from the end when negative,
 * then into [0, n - size]), as i64, over a dim of n elements.
 */
static hop_node *
clamped_starts(hop_graph *g, hop_node *s, const hop_expr *n, const hop_expr *size)
{
    const hop_expr *hi = hop_sym_sub(g->env, n, size);
    hop_arg sn = hop_arg_sym(n);
    s = s && s->meta->meta.dtype != HOP_I64
            ? op_nodes(g, HOP_OP_to, s, (hop_arg[]){hop_arg_dtype(HOP_I64)}, 1)
            : s;
    hop_node *neg = op_nodes(g, HOP_OP_lt, s, (hop_arg[]){hop_arg_int(0)}, 1);
    hop_node *wrapped = op_nodes(g, HOP_OP_add, s, &sn, 1);
    hop_node *w =
        neg && wrapped && hi
            ? hop_graph_call_op(
                  g, HOP_OP_where,
                  (hop_arg[]){hop_arg_node(neg), hop_arg_node(wrapped), hop_arg_node(s)}, 3)
            : NULL;
    hop_node *lo = op_nodes(g, HOP_OP_maximum, w, (hop_arg[]){hop_arg_int(0)}, 1);
    return op_nodes(g, HOP_OP_minimum, lo, (hop_arg[]){hop_arg_sym(hi)}, 1);
}

/*
 * dynamic_slice (x, dim, start, size).  An unbatched start: the dim shifts
 * (a view, as before).  A start per example: each example's `size`
 * elements gathered, at start_b + arange(size) (in range: clamped).
 */
static hop_status
batch_dynamic_slice(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    bool bx, bs;
    hop_node *x = operand(cx, n, 0, &bx), *s = operand(cx, n, 2, &bs);
    const hop_node *fx = n->args[0].u.node;
    int r = rank_of(fx);
    int64_t d = norm(n->args[1].u.i, r);
    bool keep = n->args[3].kind != HOP_ARG_NONE; /* else x[i]: one element, the dim goes */
    const hop_expr *size = keep ? n->meta->meta.sizes[d] : hop_sym_const(g->env, 1);
    if (!bs) {
        hop_arg args[] = {hop_arg_node(x), hop_arg_int(d + 1), hop_arg_node(s),
                          keep ? hop_arg_sym(size) : hop_arg_none()};
        return emit(cx, n, HOP_OP_dynamic_slice, args, 4, true);
    }
    hop_node *idx = clamped_starts(g, s, fx->meta->meta.sizes[d], size);
    if (keep) { /* [B, size] */
        hop_node *col = op_nodes(g, HOP_OP_unsqueeze, idx, (hop_arg[]){hop_arg_int(1)}, 1);
        hop_arg ar[] = {hop_arg_int(0), hop_arg_sym(size), hop_arg_int(1), hop_arg_dtype(HOP_I64)};
        hop_node *k = hop_graph_call_op(g, HOP_OP_arange, ar, 4);
        idx = col && k ? op_nodes(g, HOP_OP_add, col, (hop_arg[]){hop_arg_node(k)}, 1) : NULL;
    }
    if (idx == NULL)
        return hop_error_code();
    if (!bx) { /* [pre..., B, size, post...] -> the batch in front */
        hop_arg args[] = {hop_arg_node(x), hop_arg_int(d), hop_arg_node(idx)};
        hop_node *res = hop_graph_call_op(g, HOP_OP_take, args, 3);
        return set(cx, n, res ? hop__batch_movedim(g, res, (int)d, 0) : NULL);
    }
    return set(cx, n, gather_batched(cx, x, fx, d, idx, keep));
}

/*
 * dynamic_update_slice (x, update, dim, start).  x and update are batched
 * (broadcast when not).  An unbatched start: the dim shifts.  A start per
 * example: position j of example b's dim takes update element j - start_b
 * where 0 <= j - start_b < size, x's elsewhere (a gather and a where: the
 * update's elements per example, then the mask).
 */
static hop_status
batch_dynamic_update_slice(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    bool bx, bu, bs = false;
    hop_node *x = operand(cx, n, 0, &bx), *u = operand(cx, n, 1, &bu), *s = NULL;
    const hop_node *fx = n->args[0].u.node, *fu = n->args[1].u.node;
    int r = rank_of(fx);
    int64_t d = norm(n->args[2].u.i, r);
    if (n->args[3].kind == HOP_ARG_NODE && n->args[3].u.node->meta->kind == HOP_VALUE_TENSOR)
        s = operand(cx, n, 3, &bs);
    if ((!bx && (x = hop_batch_broadcast(cx, x)) == NULL) ||
        (!bu && (u = hop_batch_broadcast(cx, u)) == NULL))
        return hop_error_code();
    if (!bs) {
        hop_arg start = n->args[3];
        if (s != NULL)
            start = hop_arg_node(s);
        else if (start.kind == HOP_ARG_NODE) /* a SymInt node: its symbol */
            start = hop_arg_sym(start.u.node->meta->sym);
        hop_arg args[] = {hop_arg_node(x), hop_arg_node(u), hop_arg_int(d + 1), start};
        return emit(cx, n, HOP_OP_dynamic_update_slice, args, 4, true);
    }
    const hop_expr *len = fx->meta->meta.sizes[d], *size = fu->meta->meta.sizes[d];
    int64_t k;
    if (hop_expr_const_value(size, &k) && k == 0)
        return set(cx, n, x); /* nothing is written */
    hop_node *c = clamped_starts(g, s, len, size);
    hop_node *col = op_nodes(g, HOP_OP_unsqueeze, c, (hop_arg[]){hop_arg_int(1)}, 1);
    hop_arg ar[] = {hop_arg_int(0), hop_arg_sym(len), hop_arg_int(1), hop_arg_dtype(HOP_I64)};
    hop_node *pos = hop_graph_call_op(g, HOP_OP_arange, ar, 4);
    /* rel[b, j] = j - start_b, [B, n] */
    hop_node *rel =
        pos && col ? op_nodes(g, HOP_OP_sub, pos, (hop_arg[]){hop_arg_node(col)}, 1) : NULL;
    hop_node *ge = op_nodes(g, HOP_OP_ge, rel, (hop_arg[]){hop_arg_int(0)}, 1);
    hop_node *lt = op_nodes(g, HOP_OP_lt, rel, (hop_arg[]){hop_arg_sym(size)}, 1);
    hop_node *inside =
        ge && lt ? op_nodes(g, HOP_OP_logical_and, ge, (hop_arg[]){hop_arg_node(lt)}, 1) : NULL;
    const hop_expr *last = hop_sym_add_int(g->env, size, -1);
    hop_node *lo = op_nodes(g, HOP_OP_maximum, rel, (hop_arg[]){hop_arg_int(0)}, 1);
    hop_node *at = last ? op_nodes(g, HOP_OP_minimum, lo, (hop_arg[]){hop_arg_sym(last)}, 1) : NULL;
    hop_node *got = gather_batched(cx, u, fu, d, at, 1); /* [B, pre..., n, post...] */
    /* inside as [B, 1 (pre)..., n, 1 (post)...] */
    hop_arg shape[HOP_MAX_RANK + 1];
    shape[0] = hop_arg_sym(hop_batch_size(cx));
    for (int q = 0; q < r; q++)
        shape[q + 1] = q == d ? hop_arg_sym(len) : hop_arg_int(1);
    hop_node *mask = inside ? op_nodes(g, HOP_OP_reshape, inside,
                                       (hop_arg[]){hop_arg_list(shape, (size_t)r + 1)}, 1)
                            : NULL;
    hop_node *res =
        mask && got
            ? hop_graph_call_op(g, HOP_OP_where,
                                (hop_arg[]){hop_arg_node(mask), hop_arg_node(got), hop_arg_node(x)},
                                3)
            : NULL;
    return set(cx, n, res);
}

/* mask_gradient (x, mask): both batched (x broadcast when not; a batched
 * mask of lower logical rank gets size-1 dims after the batch): the mask
 * is per example. */
static hop_status
batch_mask_gradient(hop_batch_ctx *cx, const hop_node *n)
{
    bool bx, bm;
    hop_node *x = operand(cx, n, 0, &bx), *m = operand(cx, n, 1, &bm);
    const hop_node *fx = n->args[0].u.node, *fm = n->args[1].u.node;
    int rx = rank_of(fx), rm = rank_of(fm);
    if (!bx && (x = hop_batch_broadcast(cx, x)) == NULL)
        return hop_error_code();
    if (bm && rm < rx && (m = reshape_ones(cx, m, rx - rm, &fm->meta->meta)) == NULL)
        return hop_error_code();
    hop_arg args[] = {hop_arg_node(x), hop_arg_node(m)};
    return emit(cx, n, HOP_OP_mask_gradient, args, 2, true);
}

/* fail_if (x, flag, kind): x as it is, batched or not; the flag too, of
 * whatever shape: the op fails when any element is true, so a batched
 * flag fails the call when any example's does (an `any` over the batch,
 * which the op makes itself). */
static hop_status
batch_fail_if(hop_batch_ctx *cx, const hop_node *n)
{
    bool bx, bf;
    hop_node *x = operand(cx, n, 0, &bx), *f = operand(cx, n, 1, &bf);
    if (x == NULL || f == NULL)
        return hop_error_code();
    hop_arg args[] = {hop_arg_node(x), hop_arg_node(f), n->args[2]};
    return emit(cx, n, HOP_OP_fail_if, args, 3, bx);
}

/* ------------------------------------------------------------ the table */

/* Whether argument k of call node s is a lead parameter flagged
 * HOP_PARAM_BATCHED_ITEM (leads come first in the node, in signature
 * order; a class with no signature has its base's). */
static bool
batched_item_lead(const hop_node *s, size_t k)
{
    const hop_class *cls = s->cls;
    while (cls && cls->params[0].kind == HOP_PARAM_END)
        cls = cls->base;
    for (size_t i = 0, lead = 0; cls && i < HOP_MAX_PARAMS; i++) {
        const hop_param *p = &cls->params[i];
        if (p->kind == HOP_PARAM_END || !hop_param_is_lead(p->kind))
            break;
        if (lead++ == k)
            return (p->flags & HOP_PARAM_BATCHED_ITEM) != 0;
    }
    return false;
}

/* Whether arg a (a list's items too) is an expression over symbol u. */
static bool
arg_mentions(const hop_arg *a, const hop_expr *u)
{
    if (a->kind == HOP_ARG_LIST) {
        for (size_t k = 0; k < a->u.list.n; k++)
            if (arg_mentions(&a->u.list.items[k], u))
                return true;
        return false;
    }
    if (a->kind != HOP_ARG_SYM)
        return false;
    const hop_expr *fs[16];
    size_t nf = hop_expr_free_symbols(a->u.sym, fs, 16);
    for (size_t k = 0; k < nf; k++)
        if (k >= 16 || fs[k] == u)
            return true; /* (more than 16: assume it does) */
    return false;
}

/* Whether list arg a holds node n. */
static bool
arg_has_node(const hop_arg *a, const hop_node *n)
{
    for (size_t k = 0; k < a->u.list.n; k++)
        if (a->u.list.items[k].kind == HOP_ARG_NODE && a->u.list.items[k].u.node == n)
            return true;
    return false;
}

/* item of a batched value: a SymInt per example, which nothing can hold;
 * but an item whose only uses are leads a HOP reads with item when traced
 * (HOP_PARAM_BATCHED_ITEM: switch's index, fori_loop's bounds) or scalar
 * operands of elementwise ops (the int of cond branches returning different
 * Python ints, times a tensor) stays the batched tensor, [B], for that
 * HOP's batch slot (hop/switch.c with the branch kit, hop/fori_loop.c) or
 * batch_elementwise (converted to the weak int's dtype, weak_int). */
static hop_status
batch_item(hop_batch_ctx *cx, const hop_node *n)
{
    bool deferred = true;       /* (no use at all: an expression over its symbol, below) */
    const hop_node *bad = NULL; /* the use that needs one int for the batch */
    for (const hop_use *u = n->uses; u && deferred; u = u->next) {
        const hop_node *s = u->user;
        bad = s;
        if (s->kind == HOP_NODE_CALL_OP && hop_op_batch(s->op)->batch == batch_elementwise) {
            /* a scalar operand of an elementwise op: the per-example ints
             * as a tensor beside the op's tensors (batch_elementwise) */
            for (size_t i = 0; deferred && i < s->nargs; i++)
                deferred = s->args[i].kind != HOP_ARG_LIST || !arg_has_node(&s->args[i], n);
            continue;
        }
        deferred = s->kind == HOP_NODE_CALL_HOP && s->cls != NULL;
        for (size_t i = 0; deferred && i < s->nargs; i++) {
            const hop_arg *a = &s->args[i];
            if (a->kind == HOP_ARG_NODE && a->u.node == n)
                deferred = batched_item_lead(s, i);
            for (size_t k = 0; a->kind == HOP_ARG_LIST && k < a->u.list.n; k++)
                if (a->u.list.items[k].kind == HOP_ARG_NODE && a->u.list.items[k].u.node == n)
                    deferred = false; /* passed to a body */
        }
    }
    /* nor may a later node use its symbol in an expression (autodiff's
     * arange(0, Max(u0, 0)) of a loop's steps), but as an int expression
     * that is a scalar operand of an elementwise op ((n + 1) * x), which
     * batch_elementwise computes per example (batched_expr) */
    for (const hop_node *m = n->next; m && deferred; m = m->next) {
        bool elementwise =
            m->kind == HOP_NODE_CALL_OP && hop_op_batch(m->op)->batch == batch_elementwise;
        for (size_t i = 0; i < m->nargs && deferred; i++)
            if (!(elementwise && m->args[i].kind == HOP_ARG_SYM &&
                  !hop_expr_is_bool(m->args[i].u.sym)) &&
                !(deferred = !arg_mentions(&m->args[i], n->meta->sym)))
                bad = m;
    }
    if (!deferred && bad->kind == HOP_NODE_OUTPUT)
        return hop_error(HOP_UNSUPPORTED,
                         "vmap: the op item (%s) has no batch rule: item of a batched value is "
                         "data-dependent per example, and the function returns its int, one "
                         "Python int where the batch has one per example (return it as a "
                         "tensor: hop.tensor(0) + the int)",
                         n->name);
    if (!deferred)
        return hop_error(HOP_UNSUPPORTED,
                         "vmap: the op item (%s) has no batch rule: item of a batched value is "
                         "data-dependent per example, and %s uses its int (%s) as more than a "
                         "scalar operand of an elementwise op, alone or in an int expression (a "
                         "size, an index, a bool) where one int must serve the whole batch",
                         n->name, bad->name, n->name);
    hop_node *x = hop_batch_value(cx, n->args[0].u.node, NULL);
    hop_arg items[] = {hop_arg_sym(hop_batch_size(cx))};
    hop_arg args[] = {hop_arg_node(x), hop_arg_list(items, 1)};
    hop_node *v = hop_graph_emit(hop_batch_out(cx), HOP_OP_reshape, args, 2);
    return v ? hop_batch_set(cx, n, 0, v, true) : hop_error_code();
}

/* a op b with b a constant int (a NULL a stays NULL). */
static hop_node *
op_int(hop_graph *g, hop_op op, hop_node *a, int64_t b)
{
    return op_nodes(g, op, a, (hop_arg[]){hop_arg_int(b)}, 1);
}

static hop_node *
op_node(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    return a && b ? op_nodes(g, op, a, (hop_arg[]){hop_arg_node(b)}, 1) : NULL;
}

static hop_node *
reshape_list(hop_graph *g, hop_node *x, const hop_expr *const *sizes, size_t n)
{
    hop_arg items[HOP_MAX_RANK];
    for (size_t k = 0; k < n; k++)
        items[k] = hop_arg_sym(sizes[k]);
    return op_nodes(g, HOP_OP_reshape, x, (hop_arg[]){hop_arg_list(items, n)}, 1);
}

/*
 * put (x, index, values, accumulate): one put over the examples flattened
 * into one vector, each example's indices offset by its start (normalised
 * first; an index out of range is sent past the end so that put reports
 * it), each example's values expanded to its index count.
 */
static hop_status
batch_put(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    hop_shape_env *env = g->env;
    bool bx, bi, bv;
    hop_node *x = operand(cx, n, 0, &bx), *idx = operand(cx, n, 1, &bi);
    hop_node *v = operand(cx, n, 2, &bv);
    const hop_node *fx = n->args[0].u.node, *fi = n->args[1].u.node, *fv = n->args[2].u.node;
    const hop_expr *B = hop_batch_size(cx);
    const hop_expr *N = hop_meta_numel(&fx->meta->meta, env);
    const hop_expr *M = hop_meta_numel(&fi->meta->meta, env);
    const hop_expr *NV = hop_meta_numel(&fv->meta->meta, env);
    const hop_expr *BN = N ? hop_sym_mul(env, B, N) : NULL;
    const hop_expr *BM = M ? hop_sym_mul(env, B, M) : NULL;
    if (BN == NULL || BM == NULL || NV == NULL)
        return hop_error_code();
    if (!bx && (x = hop_batch_broadcast(cx, x)) == NULL)
        return hop_error_code();
    if (!bi && (idx = hop_batch_broadcast(cx, idx)) == NULL)
        return hop_error_code();
    if (!bv && (v = hop_batch_broadcast(cx, v)) == NULL)
        return hop_error_code();
    hop_node *xf = reshape_list(g, x, &BN, 1);
    hop_node *i2 = reshape_list(g, idx, (const hop_expr *[]){B, M}, 2);
    i2 = i2 && i2->meta->meta.dtype != HOP_I64
             ? op_nodes(g, HOP_OP_to, i2, (hop_arg[]){hop_arg_dtype(HOP_I64)}, 1)
             : i2;
    hop_arg s = hop_arg_sym(N);
    hop_node *wrapped = op_nodes(g, HOP_OP_add, i2, &s, 1);
    hop_node *neg = op_int(g, HOP_OP_lt, i2, 0);
    hop_node *in =
        neg && wrapped
            ? hop_graph_call_op(
                  g, HOP_OP_where,
                  (hop_arg[]){hop_arg_node(neg), hop_arg_node(wrapped), hop_arg_node(i2)}, 3)
            : NULL;
    hop_node *bad = op_node(g, HOP_OP_logical_or, op_int(g, HOP_OP_lt, in, 0),
                            op_nodes(g, HOP_OP_ge, in, &s, 1));
    hop_node *rows = hop_graph_call_op(
        g, HOP_OP_arange,
        (hop_arg[]){hop_arg_int(0), hop_arg_sym(B), hop_arg_int(1), hop_arg_dtype(HOP_I64)}, 4);
    hop_node *off = rows ? op_nodes(g, HOP_OP_mul, rows, &s, 1) : NULL;
    off = off ? op_int(g, HOP_OP_unsqueeze, off, 1) : NULL;
    hop_node *flat = op_node(g, HOP_OP_add, in, off);
    hop_node *safe =
        bad && flat
            ? hop_graph_call_op(g, HOP_OP_where,
                                (hop_arg[]){hop_arg_node(bad), hop_arg_sym(BN), hop_arg_node(flat)},
                                3)
            : NULL;
    hop_node *if_ = reshape_list(g, safe, &BM, 1);
    hop_node *v2 = reshape_list(g, v, (const hop_expr *[]){B, NV}, 2);
    v2 = v2 ? op_nodes(g, HOP_OP_expand, v2,
                       (hop_arg[]){hop_arg_list((hop_arg[]){hop_arg_sym(B), hop_arg_sym(M)}, 2)}, 1)
            : NULL;
    hop_node *vf = reshape_list(g, v2, &BM, 1);
    hop_node *r =
        xf && if_ && vf
            ? hop_graph_call_op(
                  g, HOP_OP_put,
                  (hop_arg[]){hop_arg_node(xf), hop_arg_node(if_), hop_arg_node(vf), n->args[3]}, 4)
            : NULL;
    const hop_meta *m = &fx->meta->meta;
    hop_arg items[HOP_MAX_RANK];
    for (int d = 0; d < m->rank; d++)
        items[d] = hop_arg_sym(m->sizes[d]);
    return set(cx, n, r ? reshape_batched(cx, r, items, (size_t)m->rank) : NULL);
}

/*
 * searchsorted (sorted, values, right).  An unbatched sorted sequence: the
 * values' batch passes through.  A batched one: per example the count of
 * its elements ordered before each value (NumPy's order: nan last), by
 * comparing every pair.
 */
static hop_status
batch_searchsorted(hop_batch_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_batch_out(cx);
    bool ba, bv;
    hop_node *a = operand(cx, n, 0, &ba), *v = operand(cx, n, 1, &bv);
    if (!ba) {
        hop_arg args[] = {hop_arg_node(a), hop_arg_node(v), n->args[2]};
        return emit(cx, n, HOP_OP_searchsorted, args, 3, true);
    }
    if (!bv && (v = hop_batch_broadcast(cx, v)) == NULL)
        return hop_error_code();
    const hop_node *fv = n->args[1].u.node;
    const hop_meta *vm = &fv->meta->meta;
    const hop_expr *B = hop_batch_size(cx);
    const hop_expr *M = hop_meta_numel(vm, g->env);
    if (M == NULL)
        return hop_error_code();
    bool right = n->args[2].u.b;
    hop_node *vv =
        op_int(g, HOP_OP_unsqueeze, reshape_list(g, v, (const hop_expr *[]){B, M}, 2), 2);
    hop_node *aa = op_int(g, HOP_OP_unsqueeze, a, 1); /* [B, 1, n] */
    /* before: a < v (left) or !(v < a) (right), with nan after numbers */
    hop_node *lo = right ? vv : aa, *hi = right ? aa : vv;
    hop_node *lt = op_node(g, HOP_OP_lt, lo, hi);
    if (hop_dtype_is_float(vm->dtype)) {
        hop_node *lo_num = op_node(g, HOP_OP_eq, lo, lo), *hi_nan = op_node(g, HOP_OP_ne, hi, hi);
        lt = op_node(g, HOP_OP_logical_or, lt, op_node(g, HOP_OP_logical_and, hi_nan, lo_num));
    }
    hop_node *before =
        right && lt ? hop_graph_call_op(g, HOP_OP_logical_not, (hop_arg[]){hop_arg_node(lt)}, 1)
                    : lt;
    hop_node *cnt = before ? op_nodes(g, HOP_OP_sum, before,
                                      (hop_arg[]){hop_arg_int(2), hop_arg_bool(false)}, 2)
                           : NULL;
    cnt = cnt && cnt->meta->meta.dtype != HOP_I64
              ? op_nodes(g, HOP_OP_to, cnt, (hop_arg[]){hop_arg_dtype(HOP_I64)}, 1)
              : cnt;
    hop_arg items[HOP_MAX_RANK];
    for (int d = 0; d < vm->rank; d++)
        items[d] = hop_arg_sym(vm->sizes[d]);
    return set(cx, n, cnt ? reshape_batched(cx, cnt, items, (size_t)vm->rank) : NULL);
}

#define ELEM                                                                                       \
    {                                                                                              \
        batch_elementwise, NULL                                                                    \
    }
#define REDUCE                                                                                     \
    {                                                                                              \
        batch_reduce, NULL                                                                         \
    }
#define DIM1                                                                                       \
    {                                                                                              \
        batch_dim1, NULL                                                                           \
    }
#define FACTORY                                                                                    \
    {                                                                                              \
        NULL, "it has no tensor operand, so it is never batched"                                   \
    }

static const hop_op_batch_rule rules[HOP_OP_COUNT] = {
    [HOP_OP_neg] = ELEM,
    [HOP_OP_abs] = ELEM,
    [HOP_OP_exp] = ELEM,
    [HOP_OP_log] = ELEM,
    [HOP_OP_sin] = ELEM,
    [HOP_OP_cos] = ELEM,
    [HOP_OP_tanh] = ELEM,
    [HOP_OP_sigmoid] = ELEM,
    [HOP_OP_relu] = ELEM,
    [HOP_OP_sqrt] = ELEM,
    [HOP_OP_add] = ELEM,
    [HOP_OP_sub] = ELEM,
    [HOP_OP_mul] = ELEM,
    [HOP_OP_div] = ELEM,
    [HOP_OP_pow] = ELEM,
    [HOP_OP_maximum] = ELEM,
    [HOP_OP_minimum] = ELEM,
    [HOP_OP_eq] = ELEM,
    [HOP_OP_ne] = ELEM,
    [HOP_OP_lt] = ELEM,
    [HOP_OP_le] = ELEM,
    [HOP_OP_gt] = ELEM,
    [HOP_OP_ge] = ELEM,
    [HOP_OP_logical_and] = ELEM,
    [HOP_OP_logical_or] = ELEM,
    [HOP_OP_logical_not] = ELEM,
    [HOP_OP_where] = ELEM,
    [HOP_OP_sum] = REDUCE,
    [HOP_OP_mean] = REDUCE,
    [HOP_OP_masked_sum] = {batch_masked_sum, NULL},
    [HOP_OP_masked_prod] = {batch_masked_sum, NULL},
    [HOP_OP_amax] = REDUCE,
    [HOP_OP_amin] = REDUCE,
    [HOP_OP_argmax] = {batch_argmax, NULL},
    [HOP_OP_matmul] = {batch_matmul, NULL},
    [HOP_OP_reshape] = {batch_reshape, NULL},
    [HOP_OP_view] = {batch_reshape, NULL},
    [HOP_OP_transpose] = {batch_transpose, NULL},
    [HOP_OP_permute] = {batch_permute, NULL},
    [HOP_OP_unsqueeze] = DIM1,
    [HOP_OP_squeeze] = {batch_squeeze, NULL},
    [HOP_OP_expand] = {batch_expand, NULL},
    [HOP_OP_select] = DIM1,
    [HOP_OP_slice] = DIM1,
    [HOP_OP_cat] = {batch_concat, NULL},
    [HOP_OP_stack] = {batch_concat, NULL},
    [HOP_OP_full] = FACTORY,
    [HOP_OP_zeros] = FACTORY,
    [HOP_OP_ones] = FACTORY,
    [HOP_OP_arange] = FACTORY,
    [HOP_OP_item] = {batch_item, "item of a batched value is data-dependent per example"},
    [HOP_OP_nonzero] = {NULL, "nonzero of a batched value has a data-dependent size per example"},
    [HOP_OP_sym_size] = DIM1,
    [HOP_OP_to] = ELEM,
    [HOP_OP_clone] = ELEM,
    [HOP_OP_floor_divide] = ELEM,
    [HOP_OP_remainder] = ELEM,
    [HOP_OP_bitwise_and] = ELEM,
    [HOP_OP_bitwise_or] = ELEM,
    [HOP_OP_bitwise_xor] = ELEM,
    [HOP_OP_bitwise_not] = ELEM,
    [HOP_OP_sign] = ELEM,
    [HOP_OP_floor] = ELEM,
    [HOP_OP_ceil] = ELEM,
    [HOP_OP_round] = ELEM,
    [HOP_OP_expm1] = ELEM,
    [HOP_OP_log1p] = ELEM,
    [HOP_OP_log2] = ELEM,
    [HOP_OP_log10] = ELEM,
    [HOP_OP_exp2] = ELEM,
    [HOP_OP_tan] = ELEM,
    [HOP_OP_arctan] = ELEM,
    [HOP_OP_prod] = REDUCE,
    [HOP_OP_any] = REDUCE,
    [HOP_OP_all] = REDUCE,
    [HOP_OP_argmin] = {batch_argmax, NULL},
    [HOP_OP_cumsum] = DIM1,
    [HOP_OP_cumprod] = DIM1,
    [HOP_OP_sort] = DIM1,
    [HOP_OP_argsort] = DIM1,
    [HOP_OP_take] = {batch_take, NULL},
    [HOP_OP_dynamic_slice] = {batch_dynamic_slice, NULL},
    [HOP_OP_dynamic_update_slice] = {batch_dynamic_update_slice, NULL},
    [HOP_OP_mask_gradient] = {batch_mask_gradient, NULL},
    [HOP_OP_sinh] = ELEM,
    [HOP_OP_cosh] = ELEM,
    [HOP_OP_arcsin] = ELEM,
    [HOP_OP_arccos] = ELEM,
    [HOP_OP_arcsinh] = ELEM,
    [HOP_OP_arccosh] = ELEM,
    [HOP_OP_arctanh] = ELEM,
    [HOP_OP_cbrt] = ELEM,
    [HOP_OP_i0] = ELEM,
    [HOP_OP_i1] = ELEM,
    [HOP_OP_arctan2] = ELEM,
    [HOP_OP_hypot] = ELEM,
    [HOP_OP_logaddexp] = ELEM,
    [HOP_OP_logaddexp2] = ELEM,
    [HOP_OP_float_power] = ELEM,
    [HOP_OP_copysign] = ELEM,
    [HOP_OP_fmod] = ELEM,
    [HOP_OP_nextafter] = ELEM,
    [HOP_OP_ldexp] = ELEM,
    [HOP_OP_gcd] = ELEM,
    [HOP_OP_lcm] = ELEM,
    [HOP_OP_left_shift] = ELEM,
    [HOP_OP_right_shift] = ELEM,
    [HOP_OP_put] = {batch_put, NULL},
    [HOP_OP_real] = ELEM,
    [HOP_OP_imag] = ELEM,
    [HOP_OP_conj] = ELEM,
    [HOP_OP_angle] = ELEM,
    [HOP_OP_complex] = ELEM,
    /* the linalg ops work on the last two dims and batch over the others
     * (solve's broadcast): elementwise's rule lines the batch dims up */
    [HOP_OP_linalg_solve] = ELEM,
    [HOP_OP_linalg_inv] = ELEM,
    [HOP_OP_linalg_det] = ELEM,
    [HOP_OP_linalg_slogdet] = ELEM,
    [HOP_OP_linalg_cholesky] = ELEM,
    [HOP_OP_linalg_qr] = ELEM,
    [HOP_OP_linalg_qr_raw] = ELEM,
    [HOP_OP_linalg_svd] = ELEM,
    [HOP_OP_linalg_svdvals] = ELEM,
    [HOP_OP_linalg_lstsq] = ELEM,
    [HOP_OP_linalg_eigh] = ELEM,
    [HOP_OP_linalg_eigvalsh] = ELEM,
    [HOP_OP_linalg_eig] = ELEM,
    [HOP_OP_fft] = DIM1,
    [HOP_OP_rfft] = DIM1,
    [HOP_OP_irfft] = DIM1,
    [HOP_OP_searchsorted] = {batch_searchsorted, NULL},
    [HOP_OP_bitcast] = ELEM, /* only the last dim changes: the batch is at dim 0 */
    [HOP_OP_fail_if] = {batch_fail_if, NULL},
};

const hop_op_batch_rule *
hop_op_batch(hop_op op)
{
    if ((unsigned)op >= HOP_OP_COUNT)
        return NULL;
    return &rules[op];
}
