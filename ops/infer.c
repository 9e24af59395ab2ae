/*
 * ops/infer.c - hop_op_infer: operand checks, the dispatch to each shape
 * rule, and the helpers every rule shares (dims, decisions, broadcasting,
 * message text).  The rules themselves are in infer_elem.c and infer_shape.c.
 *
 * Message forms (every message starts with the op's name):
 *   HOP_INVALID  "<op>: expected <n> operands, got <m>"
 *                "<op>: argument <i> must be <what>, got <kind>"
 *                "<op>: argument <i> item <k> must be <what>, got <kind>"
 *                "<op>: dim <d> out of range for <meta>"
 *                plus op-specific ones documented next to each rule
 *   HOP_SHAPE    "<op>: cannot broadcast <meta> with <meta>" and op-specific ones
 *   HOP_DTYPE    "<op>: ... <meta or scalar> ..." naming the offending dtype
 *   HOP_DATA_DEPENDENT  written by the ShapeEnv with the op name as prefix
 *   HOP_NOMEM / errors of a sym constructor: "<op>: <the constructor's message>"
 * Metadata prints with hop_meta_print (`f32[s0, 4]`), scalars as Python does.
 *
 * A failed call leaves the ShapeEnv's guards as they were: hop_op_infer
 * truncates the guard list back to its length at entry.  Rules create unbacked
 * symbols only as their last fallible step, so a failure never leaves one.
 */
#include "ops/infer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ text */

static void text_add(hop__text *t, const char *fmt, ...) HOP_PRINTF(2, 3);

static void
text_add(hop__text *t, const char *fmt, ...)
{
    size_t len = strlen(t->s);
    if (len + 1 >= sizeof t->s)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->s + len, sizeof t->s - len, fmt, ap);
    va_end(ap);
}

static void
text_add_expr(hop__text *t, const hop_expr *e)
{
    size_t len = strlen(t->s);
    if (len + 1 >= sizeof t->s)
        return;
    if (e == NULL)
        text_add(t, "?");
    else
        hop_expr_print(e, t->s + len, sizeof t->s - len);
}

const char *
hop__meta_text(hop__text *t, const hop_meta *m)
{
    t->s[0] = '\0';
    hop_meta_print(m, t->s, sizeof t->s);
    return t->s;
}

const char *
hop__sizes_text(hop__text *t, const hop_expr *const *sizes, int n)
{
    hop_exprs_print(HOP_DTYPE_COUNT, n, sizes, t->s, sizeof t->s);
    return t->s;
}

/* The shortest text that reads back as v, with ".0" on integral values,
 * as Python's repr writes floats. */
static void
text_add_float(hop__text *t, double v)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (strcspn(buf, ".eni") == strlen(buf))
        strcat(buf, ".0");
    text_add(t, "%s", buf);
}

static void
text_add_operand(hop__text *t, const hop_operand *o)
{
    switch (o->kind) {
    case HOP_OPND_NONE:
        text_add(t, "None");
        break;
    case HOP_OPND_TENSOR: {
        size_t len = strlen(t->s);
        if (o->u.tensor == NULL)
            text_add(t, "<NULL tensor>");
        else if (len + 1 < sizeof t->s)
            hop_meta_print(o->u.tensor, t->s + len, sizeof t->s - len);
        break;
    }
    case HOP_OPND_SYM:
        text_add_expr(t, o->u.sym);
        break;
    case HOP_OPND_INT:
        text_add(t, "%" PRId64, o->u.i);
        break;
    case HOP_OPND_FLOAT:
        text_add_float(t, o->u.f);
        break;
    case HOP_OPND_BOOL:
        text_add(t, "%s", o->u.b ? "True" : "False");
        break;
    case HOP_OPND_DTYPE:
        text_add(t, "%s", hop_dtype_name(o->u.dtype));
        break;
    case HOP_OPND_LIST:
        text_add(t, "[");
        for (size_t i = 0; i < o->u.list.n && o->u.list.items != NULL; i++) {
            if (i > 0)
                text_add(t, ", ");
            text_add_operand(t, &o->u.list.items[i]);
        }
        text_add(t, "]");
        break;
    default:
        text_add(t, "?");
        break;
    }
}

const char *
hop__operand_text(hop__text *t, const hop_operand *o)
{
    t->s[0] = '\0';
    text_add_operand(t, o);
    return t->s;
}

const char *
hop__expr_text(hop__text *t, const hop_expr *e)
{
    return hop__operand_text(t, &(hop_operand){.kind = HOP_OPND_SYM, .u.sym = e});
}

const char *
hop__kind_text(hop_operand_kind k)
{
    switch (k) {
    case HOP_OPND_NONE:
        return "None";
    case HOP_OPND_TENSOR:
        return "a tensor";
    case HOP_OPND_SYM:
        return "a SymInt";
    case HOP_OPND_INT:
        return "an int";
    case HOP_OPND_FLOAT:
        return "a float";
    case HOP_OPND_BOOL:
        return "a bool";
    case HOP_OPND_DTYPE:
        return "a dtype";
    case HOP_OPND_LIST:
        return "a list";
    }
    return "an invalid operand";
}

/* A SYM operand holding a SymBool is named as such. */
const char *
hop_operand_kind_name(const hop_operand *o)
{
    if (o == NULL)
        return "an invalid operand";
    if (o->kind == HOP_OPND_SYM && o->u.sym != NULL && hop_expr_is_bool(o->u.sym))
        return "a SymBool";
    return hop__kind_text(o->kind);
}

/* -------------------------------------------------------------- operands */

hop_status
hop__kind_error(hop__infer *c, size_t i, const char *what)
{
    return hop_error(HOP_INVALID, "%s: argument %zu must be %s, got %s", c->name, i, what,
                     hop_operand_kind_name(&c->args[i]));
}

hop_status
hop__check_meta(hop__infer *c, size_t i, const hop_meta *m)
{
    if (m == NULL)
        return hop_error(HOP_INVALID, "%s: argument %zu is a tensor with NULL metadata", c->name,
                         i);
    if (m->rank < 0 || m->rank > HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "%s: argument %zu has invalid rank %d", c->name, i, m->rank);
    if ((unsigned)m->dtype >= HOP_DTYPE_COUNT)
        return hop_error(HOP_INVALID, "%s: argument %zu has invalid dtype %d", c->name, i,
                         (int)m->dtype);
    for (int k = 0; k < m->rank; k++) {
        if (m->sizes[k] == NULL || hop_expr_is_bool(m->sizes[k]))
            return hop_error(HOP_INVALID, "%s: argument %zu has an invalid size in dim %d", c->name,
                             i, k);
    }
    return HOP_OK;
}

hop_status
hop__arg_tensor(hop__infer *c, size_t i, const hop_meta **out)
{
    if (c->args[i].kind != HOP_OPND_TENSOR)
        return hop__kind_error(c, i, "a tensor");
    hop_status st = hop__check_meta(c, i, c->args[i].u.tensor);
    if (st != HOP_OK)
        return st;
    *out = c->args[i].u.tensor;
    return HOP_OK;
}

hop_status
hop__arg_int(hop__infer *c, size_t i, int64_t *out)
{
    if (c->args[i].kind != HOP_OPND_INT)
        return hop__kind_error(c, i, "an int");
    *out = c->args[i].u.i;
    return HOP_OK;
}

hop_status
hop__arg_bool(hop__infer *c, size_t i, bool *out)
{
    if (c->args[i].kind != HOP_OPND_BOOL)
        return hop__kind_error(c, i, "a bool");
    *out = c->args[i].u.b;
    return HOP_OK;
}

hop_status
hop__arg_dtype(hop__infer *c, size_t i, bool allow_none, hop_dtype dflt, hop_dtype *out)
{
    const hop_operand *o = &c->args[i];
    if (allow_none && o->kind == HOP_OPND_NONE) {
        *out = dflt;
        return HOP_OK;
    }
    if (o->kind != HOP_OPND_DTYPE)
        return hop__kind_error(c, i, allow_none ? "a dtype or None" : "a dtype");
    if ((unsigned)o->u.dtype >= HOP_DTYPE_COUNT)
        return hop_error(HOP_INVALID, "%s: argument %zu is an invalid dtype %d", c->name, i,
                         (int)o->u.dtype);
    *out = o->u.dtype;
    return HOP_OK;
}

/* `where` is "argument 1" or "argument 1 item 2", for the message. */
hop_status
hop__operand_symint(hop__infer *c, const hop_operand *o, const char *where, const hop_expr **out)
{
    if (o->kind == HOP_OPND_INT) {
        *out = hop__const(c, o->u.i);
        return *out == NULL ? hop_error_code() : HOP_OK;
    }
    if (o->kind == HOP_OPND_SYM && o->u.sym != NULL && !hop_expr_is_bool(o->u.sym)) {
        *out = o->u.sym;
        return HOP_OK;
    }
    return hop_error(HOP_INVALID, "%s: %s must be an int or a SymInt, got %s", c->name, where,
                     hop_operand_kind_name(o));
}

/* ------------------------------------------------------------------ dims */

hop_status
hop__wrap_dim(hop__infer *c, int64_t d, int rank, const hop_meta *m, int *out)
{
    if (rank <= 0 || d < -(int64_t)rank || d >= (int64_t)rank) {
        hop__text t;
        return hop_error(HOP_INVALID, "%s: dim %" PRId64 " out of range for %s", c->name, d,
                         hop__meta_text(&t, m));
    }
    *out = (int)(d < 0 ? d + rank : d);
    return HOP_OK;
}

/* ---------------------------------------------------------- expressions */

hop_status
hop__sym_failed(hop__infer *c)
{
    hop_status code = hop_error_code();
    if (code == HOP_OK)
        code = HOP_NOMEM; /* a constructor returned NULL without saying why */
    const char *msg = hop_error_message();
    size_t n = strlen(c->name);
    if (strncmp(msg, c->name, n) == 0 && msg[n] == ':')
        return code; /* already says which op (a helper failed first) */
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", msg);
    return hop_error(code, "%s: %s", c->name, copy);
}

const hop_expr *
hop__const(hop__infer *c, int64_t v)
{
    const hop_expr *e = hop_sym_const(c->env, v);
    if (e == NULL)
        hop__sym_failed(c);
    return e;
}

bool
hop__is_const(const hop_expr *e, int64_t v)
{
    int64_t x;
    return e != NULL && !hop_expr_is_bool(e) && hop_expr_const_value(e, &x) && x == v;
}

hop_status
hop__decide(hop__infer *c, const hop_expr *cond, bool *out)
{
    if (cond == NULL)
        return hop__sym_failed(c);
    return hop_shape_env_decide(c->env, cond, c->name, out);
}

hop_status
hop__decide_eq(hop__infer *c, const hop_expr *a, const hop_expr *b, bool *out)
{
    if (a == NULL || b == NULL)
        return hop__sym_failed(c);
    if (a == b) {
        *out = true;
        return HOP_OK;
    }
    return hop__decide(c, hop_sym_eq(c->env, a, b), out);
}

hop_status
hop__decide_eq_int(hop__infer *c, const hop_expr *a, int64_t v, bool *out)
{
    if (a == NULL)
        return hop__sym_failed(c);
    return hop__decide_eq(c, a, hop__const(c, v), out);
}

hop_status
hop__try_decide(hop__infer *c, const hop_expr *cond, bool *known, bool *out)
{
    hop_status st = hop__decide(c, cond, out);
    *known = st == HOP_OK;
    if (st == HOP_DATA_DEPENDENT) {
        hop_error_clear();
        return HOP_OK;
    }
    return st;
}

hop_status
hop__decide_static(hop__infer *c, const hop_expr *cond, bool *known, bool *out)
{
    if (cond == NULL)
        return hop__sym_failed(c);
    *known = hop_shape_env_decide_static(c->env, cond, out);
    return HOP_OK;
}

const hop_expr *
hop__pick_equal(const hop_expr *a, const hop_expr *b)
{
    int64_t v;
    if (hop_expr_const_value(b, &v) && !hop_expr_const_value(a, &v))
        return b;
    return a;
}

/* ---------------------------------------------------------- broadcasting */

/*
 * One pair of sizes: equal pointers, or a constant 1 on either side, need no
 * decision.  Otherwise a == b is decided (a guard for backed symbols); if it
 * does not hold, the side that is 1 (a decision too, for a symbol) gives way.
 */
static hop_status
broadcast_dim(hop__infer *c, const hop_expr *a, const hop_expr *b, const hop_expr **out,
              bool *mismatch)
{
    bool yes;
    hop_status st;

    if (a == b || hop__is_const(b, 1)) {
        *out = a;
        return HOP_OK;
    }
    if (hop__is_const(a, 1)) {
        *out = b;
        return HOP_OK;
    }
    if ((st = hop__decide_eq(c, a, b, &yes)) != HOP_OK)
        return st;
    if (yes) {
        *out = hop__pick_equal(a, b);
        return HOP_OK;
    }
    if ((st = hop__decide_eq_int(c, a, 1, &yes)) != HOP_OK)
        return st;
    if (yes) {
        *out = b;
        return HOP_OK;
    }
    if ((st = hop__decide_eq_int(c, b, 1, &yes)) != HOP_OK)
        return st;
    if (yes) {
        *out = a;
        return HOP_OK;
    }
    *mismatch = true;
    return HOP_OK;
}

hop_status
hop__broadcast_sizes(hop__infer *c, const hop_expr *const *a, int na, const hop_expr *const *b,
                     int nb, const hop_expr **out, int *nout, bool *mismatch)
{
    int n = na > nb ? na : nb;
    *mismatch = false;
    for (int k = 0; k < n; k++) {
        int ia = na - n + k, ib = nb - n + k;
        if (ia < 0) {
            out[k] = b[ib];
        } else if (ib < 0) {
            out[k] = a[ia];
        } else {
            hop_status st = broadcast_dim(c, a[ia], b[ib], &out[k], mismatch);
            if (st != HOP_OK || *mismatch)
                return st;
        }
    }
    *nout = n;
    return HOP_OK;
}

/* ---------------------------------------------------------------- result */

hop_status
hop__set_tensor(hop__infer *c, hop_dtype dtype, int rank, const hop_expr *const *sizes)
{
    hop_value_info *o = c->out;
    memset(o, 0, sizeof *o);
    o->kind = HOP_VALUE_TENSOR;
    o->meta.dtype = dtype;
    o->meta.rank = rank;
    for (int k = 0; k < rank; k++)
        o->meta.sizes[k] = sizes[k];
    return HOP_OK;
}

hop_status
hop__set_sym(hop__infer *c, const hop_expr *e)
{
    memset(c->out, 0, sizeof *c->out);
    c->out->kind = HOP_VALUE_SYM;
    c->out->sym = e;
    return HOP_OK;
}

/* -------------------------------------------------------------- dispatch */

/* Each shape rule's function, indexed by rule (the closed set of
 * hop/ops.h: the table has one entry per rule). */
static hop_status (*const rules[])(hop__infer *c) = {
    [HOP_RULE_UNARY] = hop__infer_unary,
    [HOP_RULE_BINARY] = hop__infer_binary,
    [HOP_RULE_COMPARE] = hop__infer_compare,
    [HOP_RULE_LOGICAL] = hop__infer_logical,
    [HOP_RULE_WHERE] = hop__infer_where,
    [HOP_RULE_REDUCE] = hop__infer_reduce,
    [HOP_RULE_ARGMAX] = hop__infer_argmax,
    [HOP_RULE_MATMUL] = hop__infer_matmul,
    [HOP_RULE_RESHAPE] = hop__infer_reshape,
    [HOP_RULE_TRANSPOSE] = hop__infer_transpose,
    [HOP_RULE_PERMUTE] = hop__infer_permute,
    [HOP_RULE_UNSQUEEZE] = hop__infer_unsqueeze,
    [HOP_RULE_SQUEEZE] = hop__infer_squeeze,
    [HOP_RULE_EXPAND] = hop__infer_expand,
    [HOP_RULE_SELECT] = hop__infer_select,
    [HOP_RULE_SLICE] = hop__infer_slice,
    [HOP_RULE_CAT] = hop__infer_cat,
    [HOP_RULE_STACK] = hop__infer_stack,
    [HOP_RULE_FULL] = hop__infer_full,
    [HOP_RULE_ARANGE] = hop__infer_arange,
    [HOP_RULE_ITEM] = hop__infer_item,
    [HOP_RULE_NONZERO] = hop__infer_nonzero,
    [HOP_RULE_SYM_SIZE] = hop__infer_sym_size,
    [HOP_RULE_TO] = hop__infer_to,
    [HOP_RULE_CLONE] = hop__infer_clone,
    [HOP_RULE_SCAN] = hop__infer_scan,
    [HOP_RULE_SORT] = hop__infer_sort,
    [HOP_RULE_TAKE] = hop__infer_take,
    [HOP_RULE_DYNAMIC_SLICE] = hop__infer_dynamic_slice,
    [HOP_RULE_DYNAMIC_UPDATE_SLICE] = hop__infer_dynamic_update_slice,
    [HOP_RULE_MASK_GRADIENT] = hop__infer_mask_gradient,
    [HOP_RULE_PUT] = hop__infer_put,
    [HOP_RULE_SEARCHSORTED] = hop__infer_searchsorted,
    [HOP_RULE_LINALG] = hop__infer_linalg,
    [HOP_RULE_FFT] = hop__infer_fft,
    [HOP_RULE_BITCAST] = hop__infer_bitcast,
    [HOP_RULE_FAIL_IF] = hop__infer_fail_if,
    [HOP_RULE_MASKED_SUM] = hop__infer_masked_sum,
};
_Static_assert(sizeof rules / sizeof *rules == HOP_RULE_MASKED_SUM + 1,
               "one shape rule function per hop_shape_rule");

hop_status
hop_op_infer(hop_shape_env *env, hop_op op, const hop_operand *args, size_t nargs,
             hop_value_info *out)
{
    const hop_op_info *info = hop_op_get(op);
    if (info == NULL)
        return hop_error(HOP_INVALID, "hop_op_infer: unknown op %d", (int)op);
    if (env == NULL || out == NULL || (args == NULL && nargs > 0))
        return hop_error(HOP_MISUSE, "%s: NULL %s", info->name,
                         env == NULL   ? "shape env"
                         : out == NULL ? "out"
                                       : "operands");
    if (nargs != (size_t)info->nargs)
        return hop_error(HOP_INVALID, "%s: expected %d operand%s, got %zu", info->name, info->nargs,
                         info->nargs == 1 ? "" : "s", nargs);

    hop_value_info result;
    memset(&result, 0, sizeof result);
    hop__infer c = {env, op, info->name, args, &result};
    size_t nguards = hop_shape_env_nguards(env);
    hop_status st = hop__complex_check(&c, nargs);
    if (st != HOP_OK)
        return st;
    st = HOP_INVALID;

    if ((size_t)info->rule < sizeof rules / sizeof *rules && rules[info->rule])
        st = rules[info->rule](&c);
    if (st != HOP_OK) {
        hop_shape_env_truncate_guards(env, nguards);
        return st;
    }
    *out = result;
    return HOP_OK;
}
