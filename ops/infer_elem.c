/*
 * ops/infer_elem.c - shape rules of the elementwise ops (unary, binary,
 * comparisons, logical, where), the reductions, argmax and matmul; and dtype
 * promotion with Python scalars as weak types.
 *
 * Promotion follows PyTorch: tensors promote among themselves by
 * hop_dtype_promote; a scalar (int, float, bool, or a SYM, which is an int for
 * a SymInt and a bool for a SymBool) only matters when it is of a higher
 * category (bool < integer < float) than every tensor, and then gives the
 * default dtype of its category: i64 for an int, f32 for a float.  So
 * f32 + 2.5 -> f32, i32 + 2 -> i32, i64 + 2.5 -> f32, bool + 1 -> i64.
 *
 * Messages beyond those of infer.c:
 *   HOP_INVALID "<op>: expected at least one tensor operand, got 2 and 3"
 *   HOP_SHAPE   "<op>: cannot broadcast bool[3], f32[4] and f32[3]" (where)
 *   HOP_DTYPE   "neg: negation is not supported for bool tensors, got bool[3]"
 *               "sub: subtraction is not supported for bool operands, got bool[3] and True"
 *               "where: condition must be a bool tensor, got f32[3]"
 *               "mean: mean needs a float input, got i32[3]"
 *               "argmax: bool tensors are not supported, got bool[3]"
 *               "matmul: dtypes differ, got f32[2, 3] and f64[3]"
 *   HOP_SHAPE   "amax: cannot reduce over dim 0 of size 0 in f32[0, 3] (zero-size array to
 *               reduction operation maximum which has no identity)"
 *               "matmul: both operands need at least 1 dim, got f32[] and f32[3]"
 *               "matmul: cannot multiply f32[2, 3] by f32[4, 5]: inner sizes 3 and 4 differ"
 *               "matmul: cannot broadcast the batch dims of f32[2, 3, 4] and f32[5, 4, 2]"
 */
#include "ops/infer.h"

#include <inttypes.h>
#include <stdio.h>

/* 0 bool, 1 integer, 2 float, 3 complex: the categories of weak-scalar
 * promotion (a Python scalar is never complex: a complex constant is a
 * tensor of its own). */
static int
dtype_category(hop_dtype d)
{
    return d == HOP_BOOL ? 0 : hop_dtype_is_complex(d) ? 3 : hop_dtype_is_float(d) ? 2 : 1;
}

typedef struct promo {
    size_t ntensors;
    hop_dtype tensor; /* promotion of the tensors so far */
    int scalar;       /* highest scalar category, -1 without scalars */
} promo;

static void
promo_init(promo *p)
{
    p->ntensors = 0;
    p->tensor = HOP_BOOL;
    p->scalar = -1;
}

static void
promo_tensor(promo *p, hop_dtype d)
{
    p->tensor = p->ntensors == 0 ? d : hop_dtype_promote(p->tensor, d);
    p->ntensors++;
}

static void
promo_scalar(promo *p, const hop_operand *o)
{
    bool is_bool =
        o->kind == HOP_OPND_BOOL || (o->kind == HOP_OPND_SYM && hop_expr_is_bool(o->u.sym));
    int cat = o->kind == HOP_OPND_FLOAT ? 2 : is_bool ? 0 : 1;
    if (cat > p->scalar)
        p->scalar = cat;
}

static hop_dtype
category_default(int cat)
{
    return cat <= 0 ? HOP_BOOL : cat == 1 ? HOP_I64 : HOP_F32;
}

static hop_dtype
promo_result(const promo *p)
{
    if (p->ntensors == 0)
        return category_default(p->scalar);
    if (p->scalar > dtype_category(p->tensor))
        return category_default(p->scalar);
    return p->tensor;
}

/*
 * Collects the value operands args[first .. first+n): each a tensor or a
 * scalar.  Tensors go to metas[] (in order), everyone into *p.
 */
static hop_status
value_operands(hop__infer *c, size_t first, size_t n, const hop_meta **metas, size_t *nmetas,
               promo *p)
{
    promo_init(p);
    *nmetas = 0;
    for (size_t i = first; i < first + n; i++) {
        const hop_operand *o = &c->args[i];
        switch (o->kind) {
        case HOP_OPND_TENSOR: {
            hop_status st = hop__check_meta(c, i, o->u.tensor);
            if (st != HOP_OK)
                return st;
            metas[(*nmetas)++] = o->u.tensor;
            promo_tensor(p, o->u.tensor->dtype);
            break;
        }
        case HOP_OPND_SYM:
            if (o->u.sym == NULL)
                return hop_error(HOP_INVALID, "%s: argument %zu is a NULL SymInt", c->name, i);
            promo_scalar(p, o);
            break;
        case HOP_OPND_INT:
        case HOP_OPND_FLOAT:
        case HOP_OPND_BOOL:
            promo_scalar(p, o);
            break;
        default:
            return hop__kind_error(c, i, "a tensor or a scalar");
        }
    }
    return HOP_OK;
}

/* "f32[3] and 2.5" / "bool[3], f32[4] and f32[3]": args[first .. first+n). */
static const char *
operands_text(hop__infer *c, hop__text *t, size_t first, size_t n, bool tensors_only,
              const char *conj)
{
    hop__text one;
    size_t shown = 0, total = 0;
    for (size_t i = first; i < first + n; i++)
        total += !tensors_only || c->args[i].kind == HOP_OPND_TENSOR;
    t->s[0] = '\0';
    for (size_t i = first; i < first + n; i++) {
        if (tensors_only && c->args[i].kind != HOP_OPND_TENSOR)
            continue;
        const char *sep = shown == 0 ? "" : shown + 1 == total ? conj : ", ";
        size_t len = strlen(t->s);
        snprintf(t->s + len, sizeof t->s - len, "%s%s", sep, hop__operand_text(&one, &c->args[i]));
        shown++;
    }
    return t->s;
}

/* metas[0..n) have one rank and the same size expressions (pointers: they
 * are interned), so broadcasting them decides nothing. */
static bool
same_sizes(const hop_meta *const *metas, size_t n)
{
    const hop_meta *a = metas[0];
    for (size_t i = 1; i < n; i++) {
        if (metas[i]->rank != a->rank)
            return false;
        for (int d = 0; d < a->rank; d++)
            if (metas[i]->sizes[d] != a->sizes[d])
                return false;
    }
    return true;
}

/* Broadcasts the shapes of metas[0..n) into the result's sizes. */
static hop_status
broadcast_operands(hop__infer *c, size_t first, size_t nargs, const hop_meta *const *metas,
                   size_t n, const hop_expr **sizes, int *rank)
{
    *rank = 0;
    if (n > 0 && same_sizes(metas, n)) {
        /* One shape (a tensor and scalars, or tensors whose sizes are the
         * same interned expressions): broadcasting gives it with nothing to
         * decide, as hop__broadcast_sizes would (~150 instructions of every
         * op of a traced chain, issue #30). */
        memcpy(sizes, metas[0]->sizes, sizeof *sizes * (size_t)metas[0]->rank);
        *rank = metas[0]->rank;
        return HOP_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const hop_expr *next[HOP_MAX_RANK];
        int nnext;
        bool mismatch;
        hop_status st = hop__broadcast_sizes(c, sizes, *rank, metas[i]->sizes, metas[i]->rank, next,
                                             &nnext, &mismatch);
        if (st != HOP_OK)
            return st;
        if (mismatch) {
            hop__text t;
            return hop_error(HOP_SHAPE, "%s: cannot broadcast %s", c->name,
                             operands_text(c, &t, first, nargs, true, n == 2 ? " with " : " and "));
        }
        memcpy(sizes, next, sizeof next[0] * (size_t)nnext);
        *rank = nnext;
    }
    return HOP_OK;
}

/* neg abs relu sign floor ceil round bitwise_not keep the dtype; the others
 * are float functions and turn integer and bool inputs into f32, as
 * torch.exp(int tensor) does. */
hop_status
hop__infer_unary(hop__infer *c)
{
    const hop_meta *x;
    hop_status st = hop__arg_tensor(c, 0, &x);
    if (st != HOP_OK)
        return st;
    hop_dtype dtype = x->dtype;
    switch (c->op) {
    case HOP_OP_real:
    case HOP_OP_imag:
    case HOP_OP_conj:
    case HOP_OP_angle:
        return hop__infer_complex_part(c, x);
    case HOP_OP_neg:
        if (dtype == HOP_BOOL) {
            hop__text t;
            return hop_error(HOP_DTYPE,
                             "neg: negation is not supported for bool tensors, got %s; "
                             "use logical_not",
                             hop__meta_text(&t, x));
        }
        break;
    case HOP_OP_abs:
        dtype = hop_dtype_real(dtype); /* |z| is real */
        break;
    case HOP_OP_relu:
    case HOP_OP_sign:
    case HOP_OP_floor:
    case HOP_OP_ceil:
    case HOP_OP_round:
        break;
    case HOP_OP_bitwise_not:
        if (hop_dtype_is_float(dtype)) {
            hop__text t;
            return hop_error(HOP_DTYPE, "bitwise_not: needs an integer or bool tensor, got %s",
                             hop__meta_text(&t, x));
        }
        break;
    default:
        if (!hop_dtype_is_float(dtype) && !hop_dtype_is_complex(dtype))
            dtype = HOP_F32;
        break;
    }
    return hop__set_tensor(c, dtype, x->rank, x->sizes);
}

/* The dtype of a binary op's result from its operands' promoted dtype (in
 * *dtype): div is true division (ints give f32), as are the float functions
 * of two operands (arctan2 hypot copysign nextafter ldexp logaddexp
 * logaddexp2 float_power); sub refuses
 * bools like PyTorch; gcd lcm and the shifts take integers only. */
static hop_status
binary_dtype(hop__infer *c, hop_dtype *dtype)
{
    hop__text t;
    if (c->op == HOP_OP_sub && *dtype == HOP_BOOL)
        return hop_error(HOP_DTYPE, "sub: subtraction is not supported for bool operands, got %s",
                         operands_text(c, &t, 0, 2, false, " and "));
    switch (c->op) {
    case HOP_OP_floor_divide:
    case HOP_OP_remainder:
    case HOP_OP_fmod:
        if (*dtype == HOP_BOOL)
            return hop_error(HOP_DTYPE, "%s: not supported for bool operands, got %s", c->name,
                             operands_text(c, &t, 0, 2, false, " and "));
        break;
    case HOP_OP_bitwise_and:
    case HOP_OP_bitwise_or:
    case HOP_OP_bitwise_xor:
        if (hop_dtype_is_float(*dtype))
            return hop_error(HOP_DTYPE, "%s: needs integer or bool operands, got %s", c->name,
                             operands_text(c, &t, 0, 2, false, " and "));
        break;
    case HOP_OP_gcd:
    case HOP_OP_lcm:
    case HOP_OP_left_shift:
    case HOP_OP_right_shift:
        if (!hop_dtype_is_int(*dtype))
            return hop_error(HOP_DTYPE, "%s: needs integer operands, got %s", c->name,
                             operands_text(c, &t, 0, 2, false, " and "));
        break;
    case HOP_OP_div:
    case HOP_OP_arctan2:
    case HOP_OP_hypot:
    case HOP_OP_copysign:
    case HOP_OP_nextafter:
    case HOP_OP_ldexp:
    case HOP_OP_logaddexp:
    case HOP_OP_logaddexp2:
    case HOP_OP_float_power:
        /* float functions: integer operands give f32, as div's */
        if (!hop_dtype_is_float(*dtype) && !hop_dtype_is_complex(*dtype))
            *dtype = HOP_F32;
        break;
    case HOP_OP_complex:
        /* re + i im: the complex dtype of the promoted parts (ints: c64) */
        if (hop_dtype_is_complex(*dtype))
            return hop_error(HOP_DTYPE, "complex: needs real parts, got %s",
                             operands_text(c, &t, 0, 2, false, " and "));
        *dtype = hop_dtype_complex(*dtype);
        break;
    default:
        break;
    }
    return HOP_OK;
}

/* The common part of binary, compare and logical: (a, b) broadcast, and a
 * result of bool (to_bool) or of the dtype binary_dtype gives. */
static hop_status
elementwise(hop__infer *c, bool to_bool)
{
    const hop_meta *metas[3];
    size_t nmetas;
    promo p;
    hop_status st = value_operands(c, 0, 2, metas, &nmetas, &p);
    if (st != HOP_OK)
        return st;
    if (nmetas == 0) {
        hop__text t;
        return hop_error(HOP_INVALID, "%s: expected at least one tensor operand, got %s", c->name,
                         operands_text(c, &t, 0, 2, false, " and "));
    }
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank;
    hop_dtype dtype = to_bool ? HOP_BOOL : promo_result(&p);
    if ((st = broadcast_operands(c, 0, 2, metas, nmetas, sizes, &rank)) != HOP_OK ||
        (!to_bool && (st = binary_dtype(c, &dtype)) != HOP_OK))
        return st;
    return hop__set_tensor(c, dtype, rank, sizes);
}

hop_status
hop__infer_binary(hop__infer *c)
{
    return elementwise(c, false);
}

hop_status
hop__infer_compare(hop__infer *c)
{
    return elementwise(c, true);
}

/* logical_and/or take (a, b) like the binary ops, logical_not a tensor. */
hop_status
hop__infer_logical(hop__infer *c)
{
    if (c->op == HOP_OP_logical_not) {
        const hop_meta *x;
        hop_status st = hop__arg_tensor(c, 0, &x);
        if (st != HOP_OK)
            return st;
        return hop__set_tensor(c, HOP_BOOL, x->rank, x->sizes);
    }
    return hop__infer_compare(c);
}

/* where(cond, a, b): cond a bool tensor; a and b tensors or scalars (both
 * scalars is fine: where(c, 1.0, 0.0) is f32); all three broadcast. */
hop_status
hop__infer_where(hop__infer *c)
{
    const hop_meta *cond;
    hop_status st = hop__arg_tensor(c, 0, &cond);
    if (st != HOP_OK)
        return st;
    if (cond->dtype != HOP_BOOL) {
        hop__text t;
        return hop_error(HOP_DTYPE, "where: condition must be a bool tensor, got %s",
                         hop__meta_text(&t, cond));
    }
    const hop_meta *metas[3];
    size_t nmetas;
    promo p;
    if ((st = value_operands(c, 1, 2, metas + 1, &nmetas, &p)) != HOP_OK)
        return st;
    metas[0] = cond;
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank;
    if ((st = broadcast_operands(c, 0, 3, metas, nmetas + 1, sizes, &rank)) != HOP_OK)
        return st;
    return hop__set_tensor(c, promo_result(&p), rank, sizes);
}

/* ------------------------------------------------------------ reductions */

/*
 * dims: an INT, a LIST of INT (duplicates, also after wrapping, count once;
 * an empty list means every dim, as in PyTorch) or NONE for every dim.  A
 * 0-dim tensor accepts dim 0 and -1, as PyTorch's scalar wrapping does.
 */
static hop_status
reduce_dims(hop__infer *c, size_t i, const hop_meta *x, bool *mask)
{
    const hop_operand *o = &c->args[i];
    int wrap_rank = x->rank > 0 ? x->rank : 1;
    int d;
    hop_status st;

    for (int k = 0; k < HOP_MAX_RANK; k++)
        mask[k] = o->kind == HOP_OPND_NONE;
    if (o->kind == HOP_OPND_NONE)
        return HOP_OK;
    if (o->kind == HOP_OPND_INT) {
        if ((st = hop__wrap_dim(c, o->u.i, wrap_rank, x, &d)) != HOP_OK)
            return st;
        mask[d] = true;
        return HOP_OK;
    }
    if (o->kind != HOP_OPND_LIST)
        return hop__kind_error(c, i, "an int, a list of ints or None");
    if (o->u.list.n > 0 && o->u.list.items == NULL)
        return hop_error(HOP_INVALID, "%s: argument %zu is a list with NULL items", c->name, i);
    for (size_t k = 0; k < o->u.list.n; k++) {
        const hop_operand *item = &o->u.list.items[k];
        if (item->kind != HOP_OPND_INT)
            return hop_error(HOP_INVALID, "%s: argument %zu item %zu must be an int, got %s",
                             c->name, i, k, hop__kind_text(item->kind));
        if ((st = hop__wrap_dim(c, item->u.i, wrap_rank, x, &d)) != HOP_OK)
            return st;
        mask[d] = true;
    }
    if (o->u.list.n == 0) {
        for (int k = 0; k < HOP_MAX_RANK; k++)
            mask[k] = true;
    }
    return HOP_OK;
}

/* NumPy's words for an empty max/min/argmax (hop.numpy's `a[a > t].min()` of
 * an empty selection fails in check_nonempty at run time, when the
 * selection's size is unbacked). */
static const char *
numpy_empty_reduction(hop_op op)
{
    switch (op) {
    case HOP_OP_amax:
        return "zero-size array to reduction operation maximum which has no identity";
    case HOP_OP_amin:
        return "zero-size array to reduction operation minimum which has no identity";
    case HOP_OP_argmax:
        return "attempt to get argmax of an empty sequence";
    case HOP_OP_argmin:
        return "attempt to get argmin of an empty sequence";
    default:
        return "a reduction with no identity of a zero-size array";
    }
}

/* Reducing a dim of constant size 0 has no identity for max/min/argmax. */
static hop_status
check_nonempty(hop__infer *c, const hop_meta *x, const bool *mask)
{
    for (int k = 0; k < x->rank; k++) {
        if (mask[k] && hop__is_const(x->sizes[k], 0)) {
            hop__text t;
            return hop_error(HOP_SHAPE, "%s: cannot reduce over dim %d of size 0 in %s (%s)",
                             c->name, k, hop__meta_text(&t, x), numpy_empty_reduction(c->op));
        }
    }
    return HOP_OK;
}

/* The reduced shape: masked dims dropped, or kept as 1 with keepdim. */
static hop_status
reduced_shape(hop__infer *c, const hop_meta *x, const bool *mask, bool keepdim, hop_dtype dtype)
{
    const hop_expr *sizes[HOP_MAX_RANK];
    int rank = 0;
    const hop_expr *one = NULL;
    if (keepdim && (one = hop__const(c, 1)) == NULL)
        return hop_error_code();
    for (int k = 0; k < x->rank; k++) {
        if (!mask[k])
            sizes[rank++] = x->sizes[k];
        else if (keepdim)
            sizes[rank++] = one;
    }
    return hop__set_tensor(c, dtype, rank, sizes);
}

/* sum and prod of bool and signed ints give i64, of unsigned ints u64 (as
 * NumPy; not PyTorch's i64 for u8); mean needs a float; any and all give
 * bool (and accept an empty reduction); amax/amin keep the dtype. */
hop_status
hop__infer_reduce(hop__infer *c)
{
    const hop_meta *x;
    bool mask[HOP_MAX_RANK], keepdim;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = reduce_dims(c, 1, x, mask)) != HOP_OK ||
        (st = hop__arg_bool(c, 2, &keepdim)) != HOP_OK)
        return st;

    hop_dtype dtype = x->dtype;
    hop__text t;
    switch (c->op) {
    case HOP_OP_sum:
    case HOP_OP_prod:
        if (!hop_dtype_is_float(dtype) && !hop_dtype_is_complex(dtype))
            dtype = hop_dtype_is_unsigned(dtype) ? HOP_U64 : HOP_I64;
        break;
    case HOP_OP_any:
    case HOP_OP_all:
        dtype = HOP_BOOL;
        break;
    case HOP_OP_mean:
        if (!hop_dtype_is_float(dtype) && !hop_dtype_is_complex(dtype))
            return hop_error(HOP_DTYPE, "mean: mean needs a float input, got %s",
                             hop__meta_text(&t, x));
        break;
    default:
        if ((st = check_nonempty(c, x, mask)) != HOP_OK)
            return st;
        break;
    }
    return reduced_shape(c, x, mask, keepdim, dtype);
}

/* masked_sum and masked_prod(x, dims, keepdim, mask, initial): sum's shape in x's dtype, a
 * float or complex one; mask a bool tensor of x's shape (the caller
 * broadcasts it), initial a 0-d tensor of x's dtype. */
hop_status
hop__infer_masked_sum(hop__infer *c)
{
    const hop_meta *x, *m, *init;
    bool mask[HOP_MAX_RANK], keepdim, same;
    hop_status st;
    hop__text tx, tm;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK || (st = reduce_dims(c, 1, x, mask)) != HOP_OK ||
        (st = hop__arg_bool(c, 2, &keepdim)) != HOP_OK ||
        (st = hop__arg_tensor(c, 3, &m)) != HOP_OK || (st = hop__arg_tensor(c, 4, &init)) != HOP_OK)
        return st;
    if (!hop_dtype_is_float(x->dtype) && !hop_dtype_is_complex(x->dtype))
        return hop_error(HOP_DTYPE, "%s: x must be a float or complex tensor, got %s", c->name,
                         hop__meta_text(&tx, x));
    if (m->dtype != HOP_BOOL)
        return hop_error(HOP_DTYPE, "%s: mask must be a bool tensor, got %s", c->name,
                         hop__meta_text(&tm, m));
    same = m->rank == x->rank;
    for (int k = 0; same && k < x->rank; k++)
        if ((st = hop__decide_eq(c, m->sizes[k], x->sizes[k], &same)) != HOP_OK)
            return st;
    if (!same)
        return hop_error(HOP_SHAPE, "%s: mask %s must have the shape of x %s", c->name,
                         hop__meta_text(&tm, m), hop__meta_text(&tx, x));
    if (init->rank != 0 || init->dtype != x->dtype)
        return hop_error(HOP_SHAPE,
                         "%s: initial must be a 0-d tensor of x's dtype, got %s "
                         "for x %s",
                         c->name, hop__meta_text(&tm, init), hop__meta_text(&tx, x));
    return reduced_shape(c, x, mask, keepdim, x->dtype);
}

/* argmax/argmin(x, dim or None, keepdim) -> i64; None flattens (keepdim
 * gives all dims 1). */
hop_status
hop__infer_argmax(hop__infer *c)
{
    const hop_meta *x;
    bool mask[HOP_MAX_RANK], keepdim;
    hop_status st;
    if ((st = hop__arg_tensor(c, 0, &x)) != HOP_OK)
        return st;
    if (c->args[1].kind != HOP_OPND_INT && c->args[1].kind != HOP_OPND_NONE)
        return hop__kind_error(c, 1, "an int or None");
    if ((st = reduce_dims(c, 1, x, mask)) != HOP_OK ||
        (st = hop__arg_bool(c, 2, &keepdim)) != HOP_OK)
        return st;
    if (x->dtype == HOP_BOOL) {
        hop__text t;
        return hop_error(HOP_DTYPE, "%s: bool tensors are not supported, got %s", c->name,
                         hop__meta_text(&t, x));
    }
    if ((st = check_nonempty(c, x, mask)) != HOP_OK)
        return st;
    return reduced_shape(c, x, mask, keepdim, HOP_I64);
}

/* ---------------------------------------------------------------- matmul */

/*
 * matmul follows torch.matmul: 1-D x 1-D is a dot product (0-dim result);
 * a 1-D operand is treated as a row (left) or column (right) vector whose
 * extra dim is then dropped; otherwise the batch dims (all but the last two)
 * broadcast.  Both operands need the same dtype, and not bool.
 */
hop_status
hop__infer_matmul(hop__infer *c)
{
    const hop_meta *a, *b;
    hop_status st;
    hop__text ta, tb;
    if ((st = hop__arg_tensor(c, 0, &a)) != HOP_OK || (st = hop__arg_tensor(c, 1, &b)) != HOP_OK)
        return st;
    if (a->rank == 0 || b->rank == 0)
        return hop_error(HOP_SHAPE, "matmul: both operands need at least 1 dim, got %s and %s",
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b));
    if (a->dtype != b->dtype)
        return hop_error(HOP_DTYPE, "matmul: dtypes differ, got %s and %s", hop__meta_text(&ta, a),
                         hop__meta_text(&tb, b));
    if (a->dtype == HOP_BOOL)
        return hop_error(HOP_DTYPE, "matmul: bool tensors are not supported, got %s and %s",
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b));

    const hop_expr *ka = a->sizes[a->rank - 1];
    const hop_expr *kb = b->sizes[b->rank == 1 ? 0 : b->rank - 2];
    bool eq;
    if ((st = hop__decide_eq(c, ka, kb, &eq)) != HOP_OK)
        return st;
    if (!eq) {
        hop__text t1, t2;
        return hop_error(HOP_SHAPE,
                         "matmul: cannot multiply %s by %s: inner sizes %s and %s differ",
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b), hop__expr_text(&t1, ka),
                         hop__expr_text(&t2, kb));
    }

    const hop_expr *sizes[HOP_MAX_RANK];
    int rank = 0;
    int na = a->rank >= 2 ? a->rank - 2 : 0, nb = b->rank >= 2 ? b->rank - 2 : 0;
    bool mismatch;
    if ((st = hop__broadcast_sizes(c, a->sizes, na, b->sizes, nb, sizes, &rank, &mismatch)) !=
        HOP_OK)
        return st;
    if (mismatch)
        return hop_error(HOP_SHAPE, "matmul: cannot broadcast the batch dims of %s and %s",
                         hop__meta_text(&ta, a), hop__meta_text(&tb, b));
    if (a->rank >= 2)
        sizes[rank++] = a->sizes[a->rank - 2];
    if (b->rank >= 2)
        sizes[rank++] = b->sizes[b->rank - 1];
    return hop__set_tensor(c, a->dtype, rank, sizes);
}
