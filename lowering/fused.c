/*
 * lowering/fused.c - fused elementwise groups at compile time: which nodes
 * can be fused, and how a group is built (steps over tile registers,
 * register allocation, the dtype each operand is read in, the vector
 * function of each step); runtime/fused_exec.c runs them.
 *
 * A group is a tree of elementwise ops (unary, binary, comparison, logical,
 * where, to, clone) over one output shape whose intermediates have no other
 * users.  Dtypes follow hop_op_infer: a step reads its operands in the
 * dtype its vector function wants (the result dtype; the promoted dtype for
 * comparisons; bool for logical ops and where's condition) and an operand
 * in another dtype is converted per tile.
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void small_plan(const hop_lower_ctx *cx, hop__fgroup *g);

/* ------------------------------------------------------------- the ops */

static bool
fusable_op(hop_op op)
{
    const hop_op_info *info = hop_op_get(op);
    if (info == NULL)
        return false;
    switch (info->rule) {
    case HOP_RULE_UNARY:
    case HOP_RULE_BINARY:
    case HOP_RULE_COMPARE:
    case HOP_RULE_LOGICAL:
    case HOP_RULE_WHERE:
        return true;
    default:
        return op == HOP_OP_to || op == HOP_OP_clone;
    }
}

/* The dtype an operand has: a tensor's, or a Python scalar's own. */
static bool
operand_dtype(const hop_arg *a, hop_dtype *dt, bool *tensor)
{
    *tensor = false;
    switch (a->kind) {
    case HOP_ARG_NODE:
        if (a->u.node->meta->kind == HOP_VALUE_TENSOR) {
            *dt = a->u.node->meta->meta.dtype;
            *tensor = true;
            return true;
        }
        if (a->u.node->meta->kind == HOP_VALUE_SYM) {
            *dt = hop_expr_is_bool(a->u.node->meta->sym) ? HOP_BOOL : HOP_I64;
            return true;
        }
        return false;
    case HOP_ARG_INT:
        *dt = HOP_I64;
        return true;
    case HOP_ARG_FLOAT:
        *dt = HOP_F64;
        return true;
    case HOP_ARG_BOOL:
        *dt = HOP_BOOL;
        return true;
    case HOP_ARG_SYM:
        *dt = hop_expr_is_bool(a->u.sym) ? HOP_BOOL : HOP_I64;
        return true;
    default:
        return false;
    }
}

static int
category(hop_dtype d)
{
    return d == HOP_BOOL ? 0 : hop_dtype_is_float(d) ? 2 : 1;
}

/* PyTorch's promotion with weak scalars (ops/infer_elem.c): the dtype a
 * comparison compares its operands in. */
static hop_dtype
promote(const hop_node *n)
{
    hop_dtype t = HOP_BOOL;
    int ntensors = 0, scalar = -1;
    for (size_t i = 0; i < n->nargs; i++) {
        hop_dtype d;
        bool tensor;
        if (!operand_dtype(&n->args[i], &d, &tensor))
            continue;
        if (tensor) {
            t = ntensors++ ? hop_dtype_promote(t, d) : d;
        } else if (category(d) > scalar) {
            scalar = category(d);
        }
    }
    if (ntensors == 0 || scalar > category(t))
        return scalar <= 0 ? HOP_BOOL : scalar == 1 ? HOP_I64 : HOP_F32;
    return t;
}

/* The vector function of n, the dtype each operand is read in and the one
 * the function writes (*fdtype: f32 for an f16 result, rounded after each
 * step as the runtime's kernel does, so fused and unfused agree). */
static hop__vfn
step_fn(const hop_node *n, hop_dtype *need, hop_dtype *fdtype)
{
    if (n->meta->kind != HOP_VALUE_TENSOR)
        return NULL;
    hop_dtype out = n->meta->meta.dtype;
    const hop_op_info *info = hop_op_get(n->op);
    for (int i = 0; i < 3; i++)
        need[i] = out;
    *fdtype = out;
    if (n->op == HOP_OP_to || n->op == HOP_OP_clone)
        return hop__vfn_copy(out);
    hop_dtype compute = hop__compute_dtype(out);
    switch (info->rule) {
    case HOP_RULE_UNARY:
        need[0] = *fdtype = compute;
        return out == HOP_F16 ? hop__vfn_unary_f16(n->op) : hop__vfn_unary(n->op, compute);
    case HOP_RULE_BINARY:
        need[0] = need[1] = *fdtype = compute;
        return hop__vfn_binary(n->op, out); /* f16: the f32 function it rounds from */
    case HOP_RULE_COMPARE:
        need[0] = need[1] = hop__compute_dtype(promote(n));
        return hop__vfn_binary(n->op, need[0]);
    case HOP_RULE_LOGICAL:
        need[0] = need[1] = HOP_BOOL;
        return n->op == HOP_OP_logical_not ? hop__vfn_unary(n->op, HOP_BOOL)
                                           : hop__vfn_binary(n->op, HOP_BOOL);
    case HOP_RULE_WHERE:
        need[0] = HOP_BOOL;
        return hop__vfn_where(out);
    default:
        return NULL;
    }
}

/* Operands the group reads: tensors, scalars, SymInt nodes. */
static int
n_operands(const hop_node *n)
{
    return n->op == HOP_OP_to ? 1 : (int)n->nargs;
}

/* hop__fused_ok with n's step function and dtypes into *fn, need, *fdtype. */
static bool
fused_ok(const hop_node *n, hop__vfn *fn, hop_dtype need[3], hop_dtype *fdtype)
{
    if (n->kind != HOP_NODE_CALL_OP || !fusable_op(n->op) || n->meta->kind != HOP_VALUE_TENSOR ||
        n_operands(n) > 3 || n_operands(n) < 1)
        return false;
    /* Complex values stay out of fused groups (their scalars and tiles are
     * real-sized), and so do the ops between complex numbers and parts. */
    if (hop_dtype_is_complex(n->meta->meta.dtype) || n->op == HOP_OP_real || n->op == HOP_OP_imag ||
        n->op == HOP_OP_conj || n->op == HOP_OP_angle || n->op == HOP_OP_complex)
        return false;
    if ((*fn = step_fn(n, need, fdtype)) == NULL)
        return false;
    for (int i = 0; i < n_operands(n); i++) {
        hop_dtype d;
        bool tensor;
        if (!operand_dtype(&n->args[i], &d, &tensor) || hop_dtype_is_complex(d))
            return false;
    }
    return true;
}

bool
hop__fused_ok(const hop_node *n)
{
    hop__vfn fn;
    hop_dtype need[3], fdtype;
    return fused_ok(n, &fn, need, &fdtype);
}

/* What fused_ok's answer for n depends on, packed (0: not kept, n has
 * more than three arguments or no tensor value): the op, the result's
 * dtype, the number of arguments and each one's operand_dtype (whether it
 * has one, whether a tensor, which dtype).  Nodes with one key get one
 * answer: fused_ok reads nothing else of them (promote reads the same
 * operand dtypes). */
static uint64_t
fused_key(const hop_node *n)
{
    if (n->kind != HOP_NODE_CALL_OP || n->meta->kind != HOP_VALUE_TENSOR || n->nargs > 3)
        return 0;
    _Static_assert(HOP_DTYPE_COUNT <= 32, "a dtype fits in 5 bits");
    uint64_t key = (uint64_t)1 << 63 | (uint64_t)n->op << 32 | (uint64_t)n->meta->meta.dtype << 24 |
                   (uint64_t)n->nargs << 21;
    for (size_t i = 0; i < n->nargs; i++) {
        hop_dtype d;
        bool tensor;
        uint64_t code = operand_dtype(&n->args[i], &d, &tensor)
                            ? (uint64_t)d | (uint64_t)tensor << 5 | (uint64_t)1 << 6
                            : 0;
        key |= code << (7 * i);
    }
    return key;
}

bool
hop__fused_ok_into(hop_lower_ctx *cx, const hop_node *n, hop__vmap *m)
{
    uint64_t key = fused_key(n);
    if (key == 0)
        return fused_ok(n, &m->step_fn, m->step_need, &m->step_fdtype);
    /* a search of the few kept (a hashed slot each: two of a chain's four
     * keys met in one and took turns in it) */
    struct hop__fok *e = cx->fok;
    while (e < cx->fok + HOP__FOK && e->key != key)
        e++;
    if (e == cx->fok + HOP__FOK) {
        e = &cx->fok[cx->fok_next++ % HOP__FOK];
        e->ok = fused_ok(n, &e->fn, e->need, &e->fdtype);
        e->key = key;
    }
    m->step_fn = e->fn;
    memcpy(m->step_need, e->need, sizeof e->need);
    m->step_fdtype = e->fdtype;
    return e->ok;
}

/* ------------------------------------------------------------- building */

/* A dry build's caller only asks whether the group fits (plan_fusion tries
 * many that do not): no message for it. */
static hop_status
full(hop_lower_ctx *cx, bool dry, const char *what)
{
    cx->fbuild_inputs = strcmp(what, "inputs") == 0;
    return dry ? HOP_UNSUPPORTED : hop_error(HOP_UNSUPPORTED, "fused group: too many %s", what);
}

/* A scalar operand in need; for an op on f16 (computed in f32) rounded to
 * f16 first, as the runtime's kernel does. */
static void
scalar_value(const hop_arg *a, hop_dtype need, hop_dtype opdtype, unsigned char *val)
{
    memset(val, 0, 8);
    if (opdtype == HOP_F16 && need != HOP_F16) {
        uint16_t h;
        scalar_value(a, HOP_F16, HOP_F16, val);
        memcpy(&h, val, sizeof h);
        hop__convert(1, val, need, &h, HOP_F16, 1);
        return;
    }
    switch (a->kind) {
    case HOP_ARG_INT: {
        int64_t v = a->u.i;
        hop__convert(1, val, need, &v, HOP_I64, 1);
        break;
    }
    case HOP_ARG_FLOAT: {
        double v = a->u.f;
        if (need == HOP_F32) { /* hop__convert's cast (runtime/convert.c FLT_FROM_F), inline */
            float f = (float)v;
            memcpy(val, &f, sizeof f);
        } else if (need == HOP_F64) {
            memcpy(val, &v, sizeof v);
        } else {
            hop__convert(1, val, need, &v, HOP_F64, 1);
        }
        break;
    }
    case HOP_ARG_BOOL: {
        uint8_t v = a->u.b; /* bool elements are bytes */
        hop__convert(1, val, need, &v, HOP_BOOL, 1);
        break;
    }
    default:
        break;
    }
}

/* The index of a, an argument of a member, among the members of the group
 * collected last if it is one and comes before member `before`, else -1. */
static int
member_of(hop_lower_ctx *cx, const hop_arg *a, int before)
{
    /* Members are call_op nodes (hop__fused_ok_into): a placeholder, a
     * capture's, is no member, with no lookup of its entry. */
    if (a->kind != HOP_ARG_NODE || a->u.node->kind != HOP_NODE_CALL_OP)
        return -1;
    const hop__vmap *m = hop__vmap_get(cx, a->u.node, false);
    return m && m->group == cx->group && m->member >= 0 && m->member < before ? m->member : -1;
}

/* A SymInt operand (a symbol, or a SymInt node) as the int program that
 * computes it: a constant, or the node's register read as a one-symbol
 * program. */
static hop_status
sym_operand(hop_lower_ctx *cx, const hop_arg *a, const hop__xprog **out)
{
    hop_pval v;
    hop_status rc;
    if (a->kind == HOP_ARG_SYM) {
        *out = hop__xcompile(cx, a->u.sym);
    } else if ((rc = hop__value_of(cx, a->u.node, &v)) != HOP_OK) {
        return rc;
    } else if (v.kind == HOP_PVAL_CONST) {
        *out = hop__xconst(cx, v.value);
    } else {
        hop__xprog *x = hop__arena_zalloc(&cx->plan->arena, sizeof *x);
        hop__xi *code = hop__arena_zalloc(&cx->plan->arena, sizeof *code);
        int32_t *regs = hop__arena_zalloc(&cx->plan->arena, sizeof *regs);
        const char **names = hop__arena_zalloc(&cx->plan->arena, sizeof *names);
        if (!x || !code || !regs || !names)
            return HOP_NOMEM;
        *code = (hop__xi){.op = HOP__X_REG, .reg = v.id};
        *regs = v.id;
        *names = a->u.node->name;
        x->text = a->u.node->name;
        x->code = code;
        x->len = 1;
        x->regs = regs;
        x->names = names;
        x->nsyms = 1;
        *out = x;
    }
    return *out ? HOP_OK : HOP_NOMEM;
}

/* ------------------------------------------------------------- its text */

/* An argument of a member in the group's text: another member's text, a
 * scalar printed when asked, or a text (a node's name or an argument of
 * another kind, in the plan's arena). */
typedef struct ftleaf {
    int32_t member;    /* >= 0: that member's text */
    hop_arg_kind kind; /* INT, FLOAT, BOOL: u holds it; else u.text */
    union {
        const char *text;
        int64_t i;
        double f;
        bool b;
    } u;
} ftleaf;

/* What describe_group needs to write a group's text (hop__fgroup.describe):
 * each member's op (the step's) and its arguments, first[m] .. first[m+1]
 * of leaves. */
typedef struct ftext {
    const hop__fgroup *g;
    int32_t *first;
    ftleaf *leaves;
    /* A multi-output group's: the name of each member that is an extra
     * output or read by more than one step (NULL: written out where it is
     * read), so its text grows with its steps, not with their uses; NULL
     * in a tree group. */
    const char **names;
} ftext;

static void
describe_member(const ftext *t, int m, hop__buf *b)
{
    hop__buf_puts(b, hop_op_get(t->g->steps[m].op)->name);
    hop__buf_append(b, "(", 1);
    for (int32_t j = t->first[m]; j < t->first[m + 1]; j++) {
        const ftleaf *l = &t->leaves[j];
        if (j > t->first[m])
            hop__buf_append(b, ", ", 2);
        if (l->member >= 0 && t->names && t->names[l->member]) {
            hop__buf_puts(b, t->names[l->member]);
        } else if (l->member >= 0) {
            describe_member(t, l->member, b);
        } else if (l->kind == HOP_ARG_INT || l->kind == HOP_ARG_FLOAT || l->kind == HOP_ARG_BOOL) {
            hop_arg a = {.kind = l->kind};
            if (l->kind == HOP_ARG_INT)
                a.u.i = l->u.i;
            else if (l->kind == HOP_ARG_FLOAT)
                a.u.f = l->u.f;
            else
                a.u.b = l->u.b;
            hop__arg_text(b, &a);
        } else {
            hop__buf_puts(b, l->u.text);
        }
    }
    hop__buf_append(b, ")", 1);
}

/* The group's text: its root member's op over its arguments, fused
 * operands nested (`mul(add(x, 1), y)`). */
static void
describe_group(const void *desc, hop__buf *b)
{
    const ftext *t = desc;
    for (int m = 0; t->names && m < t->g->nsteps - 1; m++) {
        if (t->names[m] == NULL)
            continue;
        hop__buf_puts(b, t->names[m]);
        hop__buf_append(b, " = ", 3);
        describe_member(t, m, b);
        hop__buf_append(b, "; ", 2);
    }
    describe_member(t, t->g->nsteps - 1, b);
}

/* A multi-output group's member names (ftext.names): extra outputs and
 * members read by more than one step. */
static hop_status
member_names(hop_lower_ctx *cx, const hop_node *const *members, const ftleaf *leaves,
             const int32_t *first, const hop__fgroup *g, const char ***out)
{
    const char **names = hop__arena_zalloc(&cx->plan->arena, (size_t)g->nsteps * sizeof *names);
    int reads[HOP__F_MAXSTEPS] = {0};
    if (names == NULL)
        return HOP_NOMEM;
    for (int32_t j = 0; j < first[g->nsteps]; j++)
        if (leaves[j].member >= 0)
            reads[leaves[j].member]++;
    for (int s = 0; s < g->nsteps - 1; s++)
        if ((g->steps[s].store || reads[s] > 1) &&
            (names[s] = hop__arena_strdup(&cx->plan->arena, members[s]->name)) == NULL)
            return HOP_NOMEM;
    *out = names;
    return HOP_OK;
}

/* Arg a of a member as a leaf whose text is made now: a node's name or an
 * argument of a kind a scalar leaf does not hold, copied into the plan. */
static hop_status
text_leaf(hop_lower_ctx *cx, const hop_arg *a, ftleaf *l)
{
    if (a->kind == HOP_ARG_NODE) {
        l->u.text = hop__arena_strdup(&cx->plan->arena, a->u.node->name);
        return l->u.text ? HOP_OK : HOP_NOMEM;
    }
    hop__buf b;
    hop__buf_init(&b);
    hop__arg_text(&b, a);
    char *s = hop__buf_finish(&b);
    if (s == NULL)
        return HOP_NOMEM;
    l->u.text = hop__arena_strdup(&cx->plan->arena, s);
    hop_free(s);
    return l->u.text ? HOP_OK : HOP_NOMEM;
}

/* The leaf of argument i of member s: an operand the steps describe
 * (another member through the register it wrote, an input, a scalar), or
 * else a text (in_names: the inputs' names, copied once a group). */
static hop_status
member_leaf(hop_lower_ctx *cx, const hop__fbuilt *bt, const hop_node *n, int s, size_t i,
            const int *writer, const char **in_names, ftleaf *l)
{
    const hop_arg *a = &n->args[i];
    const hop__fopnd *o = (int)i < bt->g->steps[s].nin ? &bt->g->steps[s].in[i] : NULL;
    l->member = -1;
    l->kind = a->kind;
    if (o && o->src == HOP__F_REG) {
        l->member = writer[o->idx];
    } else if (o && o->src == HOP__F_INPUT) {
        if (in_names[o->idx] == NULL &&
            (in_names[o->idx] = hop__arena_strdup(&cx->plan->arena, a->u.node->name)) == NULL)
            return HOP_NOMEM;
        l->kind = HOP_ARG_NODE;
        l->u.text = in_names[o->idx];
    } else if (a->kind == HOP_ARG_INT) {
        l->u.i = a->u.i;
    } else if (a->kind == HOP_ARG_FLOAT) {
        l->u.f = a->u.f;
    } else if (a->kind == HOP_ARG_BOOL) {
        l->u.b = a->u.b;
    } else {
        int k = o ? -1 : member_of(cx, a, s); /* an argument past the operands */
        if (k >= 0)
            l->member = k;
        else
            return text_leaf(cx, a, l);
    }
    return HOP_OK;
}

/* Keeps in the plan what describe_group needs to write b's text when asked
 * (each member's arguments as leaves), in place of the text itself. */
static hop_status
group_text(hop_lower_ctx *cx, const hop_node *const *members, const hop__fbuilt *bt)
{
    hop__fgroup *g = bt->g;
    size_t nleaves = 0;
    for (int s = 0; s < g->nsteps; s++)
        nleaves += members[s]->nargs;
    ftext *t = hop__arena_alloc(&cx->plan->arena, sizeof *t);
    int32_t *first = hop__arena_alloc(&cx->plan->arena, (size_t)(g->nsteps + 1) * sizeof *first);
    ftleaf *leaves = hop__arena_alloc(&cx->plan->arena, (nleaves ? nleaves : 1) * sizeof *leaves);
    if (t == NULL || first == NULL || leaves == NULL)
        return HOP_NOMEM;
    int writer[HOP__F_MAXREGS]; /* the member whose result a register holds now */
    const char *in_names[HOP__F_MAXIN] = {NULL};
    int32_t j = 0;
    for (int s = 0; s < g->nsteps; s++) {
        first[s] = j;
        for (size_t i = 0; i < members[s]->nargs; i++) {
            hop_status st = member_leaf(cx, bt, members[s], s, i, writer, in_names, &leaves[j++]);
            if (st != HOP_OK)
                return st;
        }
        if (g->steps[s].out >= 0)
            writer[g->steps[s].out] = s;
    }
    first[g->nsteps] = j;
    *t = (ftext){.g = g, .first = first, .leaves = leaves};
    hop_status st = g->nxout ? member_names(cx, members, leaves, first, g, &t->names) : HOP_OK;
    if (st != HOP_OK)
        return st;
    g->text = NULL;
    g->describe = describe_group;
    g->desc = t;
    return HOP_OK;
}

/* Operand a of a step, not a member's result: an input of group g (in_nodes
 * its nodes, a new one added unless the group has HOP__F_MAXIN), a SymInt
 * or a scalar. */
static hop_status
outer_operand(hop_lower_ctx *cx, const hop_arg *a, hop__fopnd *o, bool quiet, hop__fgroup *g,
              const hop_node **in_nodes)
{
    bool tensor;
    operand_dtype(a, &o->have, &tensor);
    if (!tensor) {
        o->src = a->kind == HOP_ARG_NODE || a->kind == HOP_ARG_SYM ? HOP__F_SYM : HOP__F_SCALAR;
        return HOP_OK;
    }
    int k = 0;
    while (k < g->ninputs && in_nodes[k] != a->u.node)
        k++;
    if (k == g->ninputs) {
        if (g->ninputs == HOP__F_MAXIN)
            return full(cx, quiet, "inputs");
        in_nodes[g->ninputs] = a->u.node;
        g->in_dtype[g->ninputs++] = o->have;
    }
    o->src = HOP__F_INPUT;
    o->idx = (uint8_t)k;
    return HOP_OK;
}

/*
 * The limits' half of building the group of members into g: each operand's
 * source (a member's register, a tensor input, else a scalar or SymInt,
 * which fill_steps completes), each step's result register, g's inputs
 * into in_nodes.  HOP_UNSUPPORTED when the group is too big (quiet: with no
 * message).  Fusion planning cuts a group that is too big one member at a
 * time and asks again (a chain of adds over captures: ~30 times a 64-step
 * group), so this half stays cheap: no step functions or dtype rules, which
 * fill_steps adds once the group fits (issue #30).
 *
 * Members skip .. skip + nskip - 1 are left out, their last one's result
 * read as a tensor input (a cut member's run of members: see
 * hop__fused_fits).  It writes only what the check reads.  Building
 * (zeroed not NULL, no member left out), it zeroes the steps first, a block
 * of ZERO_STEPS at a time as it reaches them, steps [0, *zeroed) being
 * zeroed: a group too big for its inputs stops a few steps in, where
 * zeroing its nm steps at once was ~700 instructions of every capture of a
 * chain of adds over captures (a failed build of 64 steps, 10 KB, a group
 * of 7 adds, issue #30).  A trial (hop__fused_fits) leaves them as they
 * are.
 */
enum { ZERO_STEPS = 8 };

static hop_status
fit_steps(hop_lower_ctx *cx, const hop_node *const *members, int nm, int skip, int nskip,
          bool quiet, hop__fgroup *g, const hop_node **in_nodes, int *zeroed)
{
    int reg_of[HOP__F_MAXSTEPS]; /* register of each member's result */
    bool busy[HOP__F_MAXREGS] = {false};
    for (int s = 0; s < nm; s++) {
        if (s == skip && nskip > 0) {
            s += nskip - 1;
            continue;
        }
        const hop_node *n = members[s];
        hop__fstep *st = &g->steps[s];
        if (zeroed && s == *zeroed) {
            int k = nm - s < ZERO_STEPS ? nm - s : ZERO_STEPS;
            memset(st, 0, (size_t)k * sizeof *st);
            *zeroed = s + k;
        }
        st->nin = n_operands(n);
        int freed[3], nfreed = 0;
        for (int i = 0; i < st->nin; i++) {
            const hop_arg *a = &n->args[i];
            hop__fopnd *o = &st->in[i];
            /* A chain's operand is the member just before (fusion planning
             * tries a group ~6 times a cut, each step looking its operands
             * up: ~700 instructions of every capture of a chain of adds
             * over captures, issue #30). */
            int member = s > 0 && a->kind == HOP_ARG_NODE && a->u.node == members[s - 1]
                             ? s - 1
                             : member_of(cx, a, s);
            if (member >= skip && member - skip < nskip)
                member = -1; /* the cut member's result: an input */
            if (member >= 0) {
                o->src = HOP__F_REG;
                o->idx = (uint8_t)reg_of[member];
                o->have = members[member]->meta->meta.dtype;
                freed[nfreed++] = reg_of[member];
                continue;
            }
            hop_status st_in = outer_operand(cx, a, o, quiet, g, in_nodes);
            if (st_in != HOP_OK)
                return st_in;
        }
        if (s == nm - 1) {
            st->out = -1;
        } else {
            int r = 0;
            while (r < HOP__F_MAXREGS && busy[r])
                r++;
            if (r == HOP__F_MAXREGS)
                return full(cx, quiet, "registers");
            busy[r] = true;
            st->out = r;
            reg_of[s] = r;
            if (r + 1 > g->nregs)
                g->nregs = r + 1;
        }
        /* Operand registers die here: each member has this one user.  The
         * result got its register first, so a step never works in place. */
        for (int k = 0; k < nfreed; k++)
            busy[freed[k]] = false;
    }
    return HOP_OK;
}

/* The rest of each step of a group that fits (fit_steps): its function and
 * dtypes, the dtype each operand is read in, scalars' values. */
static void
fill_steps(hop_lower_ctx *cx, const hop_node *const *members, int nm, hop__fgroup *g)
{
    for (int s = 0; s < nm; s++) {
        const hop_node *n = members[s];
        hop__fstep *st = &g->steps[s];
        hop_dtype need[3];
        /* What fusion planning's hop__fused_ok_into found, else found now. */
        const hop__vmap *m = hop__vmap_get(cx, n, false);
        if (m != NULL && m->fusable) {
            st->fn = m->step_fn;
            st->fdtype = m->step_fdtype;
            memcpy(need, m->step_need, sizeof need);
        } else {
            st->fn = step_fn(n, need, &st->fdtype);
        }
        st->opdtype =
            hop_op_get(n->op)->rule == HOP_RULE_COMPARE ? promote(n) : n->meta->meta.dtype;
        st->op = n->op;
        st->dtype = n->meta->meta.dtype;
        g->cost += hop_op_get(n->op)->cost;
        for (int i = 0; i < st->nin; i++) {
            hop__fopnd *o = &st->in[i];
            o->need = need[i];
            if (o->src == HOP__F_SYM) {
                o->have = o->need; /* its program: hop__fused_finish */
            } else if (o->src == HOP__F_SCALAR) {
                scalar_value(&n->args[i], o->need, st->opdtype, o->val);
                o->have = o->need;
            }
        }
    }
}

/*
 * Builds the steps of the group of members (graph order, root last) into g:
 * everything that does not need the operands' values, so fusion planning
 * builds each group once, before the operands have slots, and
 * hop__fused_finish completes it.  in_nodes gets the tensor inputs.
 * HOP_UNSUPPORTED when the group is too big (quiet: with no message).
 */
static hop_status
build_steps(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
            bool quiet, hop__fgroup *g, const hop_node **in_nodes)
{
    if (nm > HOP__F_MAXSTEPS)
        return full(cx, quiet, "steps");
    /* The nm steps are zeroed by fit_steps, ZERO_STEPS at a time (the
     * steps past nm are never read; zeroing all 64 was ~6 K instructions of
     * every node of a long chain, issue #30; one memset per 152-byte step
     * was a string store's start-up each, ~30% of fit_steps' time in
     * trace_node's chain, perf). */
    memset(g, 0, hop__fgroup_bytes(0));
    g->out = -1;
    g->odtype = root->meta->meta.dtype;
    int zeroed = 0;
    hop_status st = fit_steps(cx, members, nm, 0, 0, quiet, g, in_nodes, &zeroed);
    if (st != HOP_OK)
        return st;
    fill_steps(cx, members, nm, g);
    g->nsteps = nm;
    hop__fgroup_seal(g);
    return HOP_OK;
}

/*
 * fit_steps for a multi-output group (fuseplan.c merge_units): members in
 * graph order, the last the output, is_out[s] whether member s's result is
 * also an extra output (read after the group).  A member may have several
 * users in the group, so its register lives until its last one reads it
 * (an output's is written to its slot as soon as the step has run, and
 * lives on only if a later step reads it).  Sets each step's store and
 * g->nxout; xnodes gets the extra outputs' members.
 */
static hop_status
fit_dag(hop_lower_ctx *cx, const hop_node *const *members, int nm, const bool *is_out,
        hop__fgroup *g, const hop_node **in_nodes, const hop_node **xnodes)
{
    int reg_of[HOP__F_MAXSTEPS], last[HOP__F_MAXSTEPS];
    bool busy[HOP__F_MAXREGS] = {false};
    for (int s = 0; s < nm; s++) {
        last[s] = -1;
        for (int i = 0; i < n_operands(members[s]); i++) {
            int k = member_of(cx, &members[s]->args[i], s);
            if (k >= 0)
                last[k] = s;
        }
    }
    memset(g->steps, 0, (size_t)nm * sizeof *g->steps);
    for (int s = 0; s < nm; s++) {
        const hop_node *n = members[s];
        hop__fstep *st = &g->steps[s];
        st->nin = n_operands(n);
        for (int i = 0; i < st->nin; i++) {
            const hop_arg *a = &n->args[i];
            hop__fopnd *o = &st->in[i];
            int member = member_of(cx, a, s);
            if (member >= 0) {
                o->src = HOP__F_REG;
                o->idx = (uint8_t)reg_of[member];
                o->have = members[member]->meta->meta.dtype;
                continue;
            }
            hop_status st_in = outer_operand(cx, a, o, true, g, in_nodes);
            if (st_in != HOP_OK)
                return st_in;
        }
        if (s == nm - 1) {
            st->out = -1;
            break;
        }
        int r = 0;
        while (r < HOP__F_MAXREGS && busy[r])
            r++;
        if (r == HOP__F_MAXREGS)
            return full(cx, true, "registers");
        st->out = r;
        reg_of[s] = r;
        if (r + 1 > g->nregs)
            g->nregs = r + 1;
        if (is_out[s]) {
            if (g->nxout == HOP__F_MAXXOUT)
                return full(cx, true, "outputs");
            xnodes[g->nxout++] = n;
            st->store = (uint8_t)g->nxout;
        }
        /* Operand registers die at their last reader; the result got its
         * register first, so a step never works in place. */
        for (int i = 0; i < st->nin; i++)
            if (st->in[i].src == HOP__F_REG && last[member_of(cx, &n->args[i], s)] == s)
                busy[st->in[i].idx] = false;
        busy[r] = last[s] > s;
    }
    return HOP_OK;
}

hop_status
hop__fused_build_multi(hop_lower_ctx *cx, const hop_node *const *members, int nm,
                       const bool *is_out, hop__fbuilt **out)
{
    if (nm > HOP__F_MAXSTEPS)
        return full(cx, true, "steps");
    const hop_node *in_nodes[HOP__F_MAXIN], *xnodes[HOP__F_MAXXOUT];
    if (out == NULL) { /* a trial: into scratch */
        if (cx->fscratch == NULL &&
            (cx->fscratch = hop__arena_alloc(&cx->tmp, sizeof *cx->fscratch)) == NULL)
            return HOP_NOMEM;
        memset(cx->fscratch, 0, hop__fgroup_bytes(0));
        return fit_dag(cx, members, nm, is_out, cx->fscratch, in_nodes, xnodes);
    }
    hop__fbuilt *b = hop__arena_alloc(&cx->tmp, sizeof *b);
    if (b == NULL)
        return HOP_NOMEM;
    hop__arena_mark mark;
    hop__arena_mark_at(&cx->plan->arena, &mark);
    hop__fgroup *g = hop__arena_alloc(&cx->plan->arena, hop__fgroup_bytes(nm));
    if (g == NULL)
        return HOP_NOMEM;
    memset(g, 0, hop__fgroup_bytes(0));
    g->out = -1;
    g->odtype = members[nm - 1]->meta->meta.dtype;
    hop_status st = fit_dag(cx, members, nm, is_out, g, b->in_nodes, b->xnodes);
    if (st != HOP_OK) {
        hop__arena_rollback(&cx->plan->arena, &mark);
        return st;
    }
    fill_steps(cx, members, nm, g);
    g->nsteps = nm;
    hop__fgroup_seal(g);
    if ((b->members = hop__arena_alloc(&cx->tmp, (size_t)nm * sizeof *b->members)) == NULL)
        return HOP_NOMEM;
    memcpy(b->members, members, (size_t)nm * sizeof *members);
    b->g = g;
    b->nmembers = nm;
    b->group = cx->group;
    *out = b;
    return HOP_OK;
}

bool
hop__fused_fits(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
                int skip, int nskip)
{
    if (nm - nskip > HOP__F_MAXSTEPS)
        return false;
    if (cx->fscratch == NULL &&
        (cx->fscratch = hop__arena_alloc(&cx->tmp, sizeof *cx->fscratch)) == NULL)
        return false;
    const hop_node *in_nodes[HOP__F_MAXIN];
    hop__fgroup *g = cx->fscratch;
    memset(g, 0, hop__fgroup_bytes(0));
    g->odtype = root->meta->meta.dtype;
    return fit_steps(cx, members, nm, skip, nskip, true, g, in_nodes, NULL) == HOP_OK;
}

int
hop__fused_add_inputs(hop_lower_ctx *cx, const hop_node *const *members, int from, int to,
                      int first, const hop_node **in, int nin)
{
    for (int s = from; s < to && nin <= HOP__F_MAXIN; s++) {
        const hop_node *n = members[s];
        for (int i = 0; i < n_operands(n); i++) {
            const hop_arg *a = &n->args[i];
            if (a->kind != HOP_ARG_NODE || a->u.node->meta->kind != HOP_VALUE_TENSOR)
                continue; /* a scalar or SymInt operand: no input (fit_steps) */
            /* a member of the group is read from its register, as fit_steps
             * finds it (the chain's member just before, else member_of) */
            int member = s > 0 && a->u.node == members[s - 1] ? s - 1 : member_of(cx, a, s);
            if (member >= first)
                continue;
            int k = 0;
            while (k < nin && in[k] != a->u.node)
                k++;
            if (k == nin)
                in[nin++] = a->u.node;
            if (nin > HOP__F_MAXIN)
                break;
        }
    }
    return nin;
}

hop_status
hop__fused_build(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
                 bool quiet, hop__fbuilt **out)
{
    /* Built in place in the plan, hop__fgroup_size bytes of nm steps (a
     * build that succeeds has them all), taken back when it does not fit.
     * Building in scratch (~10 KB) and copying the group into the plan was
     * ~150 instructions of every member of a traced chain (issue #30). */
    if (nm > HOP__F_MAXSTEPS)
        return full(cx, quiet, "steps");
    hop__fbuilt *b = hop__arena_alloc(&cx->tmp, sizeof *b);
    if (b == NULL)
        return HOP_NOMEM;
    hop__arena_mark mark;
    hop__arena_mark_at(&cx->plan->arena, &mark);
    if ((b->g = hop__arena_alloc(&cx->plan->arena, hop__fgroup_bytes(nm))) == NULL)
        return HOP_NOMEM;
    hop_status st = build_steps(cx, root, members, nm, quiet, b->g, b->in_nodes);
    if (st != HOP_OK) {
        hop__arena_rollback(&cx->plan->arena, &mark);
        return st;
    }
    if ((b->members = hop__arena_alloc(&cx->tmp, (size_t)nm * sizeof *b->members)) == NULL)
        return HOP_NOMEM;
    memcpy(b->members, members, (size_t)nm * sizeof *members);
    b->nmembers = nm;
    b->group = cx->group;
    *out = b;
    return HOP_OK;
}

hop_status
hop__fused_finish(hop_lower_ctx *cx, const hop_node *const *members, const hop__fbuilt *b,
                  int32_t out)
{
    hop__fgroup *g = b->g;
    g->out = out;
    if (g->has_sym) {
        for (int s = 0; s < g->nsteps; s++) {
            hop__fstep *st = &g->steps[s];
            for (int i = 0; i < st->nin; i++) {
                hop_status rc = st->in[i].src == HOP__F_SYM
                                    ? sym_operand(cx, &members[s]->args[i], &st->in[i].x)
                                    : HOP_OK;
                if (rc != HOP_OK)
                    return rc;
            }
        }
    }
    for (int k = 0; k < g->ninputs; k++) {
        hop_pval v;
        hop_status rc = hop__value_of(cx, b->in_nodes[k], &v);
        if (rc != HOP_OK)
            return rc;
        if (v.kind != HOP_PVAL_TENSOR)
            return hop_error(HOP_VERIFY, "lowering: %s is not a tensor", b->in_nodes[k]->name);
        g->inputs[k] = v.id;
    }
    small_plan(cx, g);
    return group_text(cx, members, b);
}

/* Numel of a slot with constant sizes whose elements are contiguous: the
 * plan's own storage, or any slot of one element; -1 otherwise. */
static int64_t
dense_numel(const hop_lower_ctx *cx, int32_t id)
{
    const hop__slot *s = &cx->slots[id];
    int64_t n = 1;
    for (int d = 0; d < s->rank; d++) {
        if (!s->sizes[d]->is_const || s->sizes[d]->value < 0 || s->sizes[d]->value > HOP__F_SMALL)
            return -1;
        n *= s->sizes[d]->value;
    }
    if (n != 1 && s->kind != HOP__S_BUFFER && s->kind != HOP__S_LATE)
        return -1;
    return n;
}

/* The steps hop__fused_run computes inline: int64 in, int64 or bool out. */
static bool
scalar_op(const hop__fstep *st)
{
    switch (st->op) {
    case HOP_OP_add:
    case HOP_OP_sub:
    case HOP_OP_mul:
    case HOP_OP_maximum:
    case HOP_OP_minimum:
        if (st->dtype != HOP_I64)
            return false;
        break;
    case HOP_OP_eq:
    case HOP_OP_ne:
    case HOP_OP_lt:
    case HOP_OP_le:
    case HOP_OP_gt:
    case HOP_OP_ge:
        if (st->dtype != HOP_BOOL)
            return false;
        break;
    default:
        return false;
    }
    if (st->nin != 2)
        return false;
    for (int i = 0; i < 2; i++)
        if (st->in[i].need != HOP_I64 ||
            (st->in[i].src != HOP__F_INPUT && st->in[i].src != HOP__F_SCALAR))
            return false;
    return true;
}

/* Sets small_n when the group qualifies for the straight run (program.h). */
static void
small_plan(const hop_lower_ctx *cx, hop__fgroup *g)
{
    g->small_n = 0;
    int64_t n = g->out >= 0 && g->nxout == 0 ? dense_numel(cx, g->out) : -1;
    if (n <= 0 || n > HOP__F_SMALL || !g->same_dtypes)
        return;
    for (int k = 0; k < g->ninputs; k++) {
        int64_t m = dense_numel(cx, g->inputs[k]);
        if (m != n && m != 1)
            return;
        if (cx->slots[g->inputs[k]].rank > cx->slots[g->out].rank)
            return;
        g->small_inc[k] = m == n && n != 1;
    }
    /* a step whose operands are all single elements over a larger output
     * needs run_tiles to spread it */
    for (int s = 0; n > 1 && s < g->nsteps; s++) {
        const hop__fstep *st = &g->steps[s];
        bool any = st->op == HOP_OP_where;
        for (int i = 0; i < st->nin && i < 2; i++)
            any |= st->in[i].src == HOP__F_REG ||
                   (st->in[i].src == HOP__F_INPUT && g->small_inc[st->in[i].idx]);
        if (!any)
            return;
    }
    for (int s = 0; s < g->nsteps; s++) {
        hop__fstep *st = &g->steps[s];
        for (int i = 0; i < st->nin; i++)
            st->small_ai[i] = st->in[i].src == HOP__F_REG ||
                              (st->in[i].src == HOP__F_INPUT && g->small_inc[st->in[i].idx]);
    }
    g->small_n = (int)n;
    g->scalar_i64 = n == 1 && g->nsteps == 1 && scalar_op(&g->steps[0]);
}

hop_status
hop__emit_copy(hop_lower_ctx *cx, int32_t dst, int32_t src)
{
    hop__fgroup *g = hop__arena_zalloc(&cx->plan->arena, hop__fgroup_bytes(1));
    if (g == NULL)
        return HOP_NOMEM;
    hop__fgroup_copy(g, cx->slots[dst].dtype, cx->slots[src].dtype);
    g->out = dst;
    g->inputs[0] = src;
    g->text = "clone";
    small_plan(cx, g); /* a carry passed through a loop body: straight */
    const char *note =
        hop__note(cx, "copy %s <- %s", cx->slots[dst].name ? cx->slots[dst].name : "",
                  cx->slots[src].name ? cx->slots[src].name : "");
    if (note == NULL || hop__emit(cx, HOP__OP_Copy, dst, src, 0, g, note) < 0)
        return HOP_NOMEM;
    hop_status st = hop__access(cx, src);
    return st != HOP_OK ? st : hop__access(cx, dst);
}
