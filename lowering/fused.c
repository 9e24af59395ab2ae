/*
 * lowering/fused.c - fused elementwise groups: which nodes can be fused, how
 * a group is built (steps over tile registers, register allocation, the
 * dtype each operand is read in), and the tiled executor.
 *
 * A group is a tree of elementwise ops (unary, binary, comparison, logical,
 * where, to, clone) over one output shape whose intermediates have no other
 * users.  The executor walks the output in tiles of TILE elements; each step
 * runs the runtime's vector function for its op and dtype (the same code
 * hop_eager runs, so results agree bit for bit) from tile registers on the
 * stack into a tile register, and the last step writes the output directly.
 * Intermediates never touch memory beyond L1.  Inputs that are contiguous
 * (or one broadcast element) are read in place: the common case is one flat
 * run over every operand.  Otherwise the output's dims are walked with an
 * odometer after broadcasting and merging dims, as the runtime's engine
 * does, and strided inputs are gathered into a register per tile.
 *
 * Dtypes follow hop_op_infer: a step reads its operands in the dtype its
 * vector function wants (the result dtype; the promoted dtype for
 * comparisons; bool for logical ops and where's condition) and an operand
 * in another dtype is converted per tile.
 */
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>

#define TILE 512

hop_status hop__fused_operand(hop_lower_ctx *cx, const hop_node *n, hop_pval *out);

/* ------------------------------------------------------------- the ops */

bool
hop__fusable_op(hop_op op)
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
        return hop__vfn_unary(n->op, compute);
    case HOP_RULE_BINARY:
        need[0] = need[1] = *fdtype = compute;
        return hop__vfn_binary(n->op, compute);
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

bool
hop__fused_ok(const hop_node *n)
{
    if (n->kind != HOP_NODE_CALL_OP || !hop__fusable_op(n->op) ||
        n->meta->kind != HOP_VALUE_TENSOR || n_operands(n) > 3 || n_operands(n) < 1)
        return false;
    hop_dtype need[3], fdtype;
    if (step_fn(n, need, &fdtype) == NULL)
        return false;
    for (int i = 0; i < n_operands(n); i++) {
        hop_dtype d;
        bool tensor;
        if (!operand_dtype(&n->args[i], &d, &tensor))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------- building */

static hop_status
full(const char *what)
{
    return hop_error(HOP_UNSUPPORTED, "fused group: too many %s", what);
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
        hop__convert(1, val, need, &v, HOP_F64, 1);
        break;
    }
    case HOP_ARG_BOOL: {
        hop__bool v = a->u.b;
        hop__convert(1, val, need, &v, HOP_BOOL, 1);
        break;
    }
    default:
        break;
    }
}

/* Text of a member for the dump: op(args) with fused operands nested. */
static void
member_text(hop__buf *b, const hop_node *n, const hop_node *const *members, int nm)
{
    hop__buf_printf(b, "%s(", n->target);
    for (size_t i = 0; i < n->nargs; i++) {
        const hop_arg *a = &n->args[i];
        if (i)
            hop__buf_puts(b, ", ");
        bool inner = false;
        for (int k = 0; a->kind == HOP_ARG_NODE && k < nm; k++)
            inner = inner || members[k] == a->u.node;
        char e[128];
        switch (a->kind) {
        case HOP_ARG_NODE:
            if (inner)
                member_text(b, a->u.node, members, nm);
            else
                hop__buf_puts(b, a->u.node->name);
            break;
        case HOP_ARG_INT:
            hop__buf_printf(b, "%" PRId64, a->u.i);
            break;
        case HOP_ARG_FLOAT:
            hop__buf_printf(b, "%g", a->u.f);
            break;
        case HOP_ARG_BOOL:
            hop__buf_puts(b, a->u.b ? "True" : "False");
            break;
        case HOP_ARG_SYM:
            hop_expr_print(a->u.sym, e, sizeof e);
            hop__buf_puts(b, e);
            break;
        case HOP_ARG_DTYPE:
            hop__buf_puts(b, hop_dtype_name(a->u.dtype));
            break;
        default:
            hop__buf_puts(b, "?");
        }
    }
    hop__buf_puts(b, ")");
}

/*
 * Builds the group of members (graph order, root last) writing slot out.
 * With out < 0 it only checks the limits (fusion planning, before the
 * operands have values).  HOP_UNSUPPORTED when the group is too big.
 */
hop_status
hop__fused_build(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
                 int32_t out, hop__fgroup **out_group)
{
    bool dry = out < 0;
    hop__fgroup *g = *out_group;
    if (!dry) {
        g = hop__arena_zalloc(&cx->plan->arena, sizeof *g);
        if (g == NULL)
            return HOP_NOMEM;
    }
    memset(g, 0, sizeof *g);
    if (nm > HOP__F_MAXSTEPS)
        return full("steps");
    const hop_node *in_nodes[HOP__F_MAXIN];
    int reg_of[HOP__F_MAXSTEPS]; /* register of each member's result */
    bool busy[HOP__F_MAXREGS] = {false};
    g->out = out;
    g->odtype = root->meta->meta.dtype;
    for (int s = 0; s < nm; s++) {
        const hop_node *n = members[s];
        hop__fstep *st = &g->steps[s];
        hop_dtype need[3];
        st->fn = step_fn(n, need, &st->fdtype);
        st->opdtype =
            hop_op_get(n->op)->rule == HOP_RULE_COMPARE ? promote(n) : n->meta->meta.dtype;
        st->op = n->op;
        st->nin = n_operands(n);
        st->dtype = n->meta->meta.dtype;
        g->cost += hop__vfn_cost(n->op);
        int freed[3], nfreed = 0;
        for (int i = 0; i < st->nin; i++) {
            const hop_arg *a = &n->args[i];
            hop__fopnd *o = &st->in[i];
            o->need = need[i];
            int member = -1;
            for (int k = 0; a->kind == HOP_ARG_NODE && k < s; k++)
                if (members[k] == a->u.node)
                    member = k;
            bool tensor;
            operand_dtype(a, &o->have, &tensor);
            if (member >= 0) {
                o->src = HOP__F_REG;
                o->idx = (uint8_t)reg_of[member];
                o->have = members[member]->meta->meta.dtype;
                freed[nfreed++] = reg_of[member];
            } else if (tensor) {
                int k = 0;
                while (k < g->ninputs && in_nodes[k] != a->u.node)
                    k++;
                if (k == g->ninputs) {
                    if (g->ninputs == HOP__F_MAXIN)
                        return full("inputs");
                    in_nodes[g->ninputs] = a->u.node;
                    g->in_dtype[g->ninputs++] = o->have;
                }
                o->src = HOP__F_INPUT;
                o->idx = (uint8_t)k;
            } else if (a->kind == HOP_ARG_NODE || a->kind == HOP_ARG_SYM) {
                o->src = HOP__F_SYM;
                if (!dry) {
                    hop_pval v;
                    hop_status rc;
                    if (a->kind == HOP_ARG_SYM) {
                        o->x = hop__xcompile(cx, a->u.sym);
                    } else if ((rc = hop__fused_operand(cx, a->u.node, &v)) != HOP_OK) {
                        return rc;
                    } else if (v.kind == HOP_PVAL_CONST) {
                        o->x = hop__xconst(cx, v.value);
                    } else {
                        hop_arg sym = hop_arg_sym(a->u.node->meta->sym);
                        (void)sym;
                        /* A SymInt node's register, read as a one-symbol program. */
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
                        o->x = x;
                    }
                    if (o->x == NULL)
                        return HOP_NOMEM;
                }
                o->have = o->need;
            } else {
                o->src = HOP__F_SCALAR;
                scalar_value(a, o->need, st->opdtype, o->val);
                o->have = o->need;
            }
        }
        if (s == nm - 1) {
            st->out = -1;
        } else {
            int r = 0;
            while (r < HOP__F_MAXREGS && busy[r])
                r++;
            if (r == HOP__F_MAXREGS)
                return full("registers");
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
    g->nsteps = nm;
    if (dry)
        return HOP_OK;
    for (int k = 0; k < g->ninputs; k++) {
        hop_pval v;
        hop_status rc = hop__fused_operand(cx, in_nodes[k], &v);
        if (rc != HOP_OK)
            return rc;
        if (v.kind != HOP_PVAL_TENSOR)
            return hop_error(HOP_VERIFY, "lowering: %s is not a tensor", in_nodes[k]->name);
        g->inputs[k] = v.id;
    }
    hop__buf b;
    hop__buf_init(&b);
    member_text(&b, root, members, nm);
    char *text = hop__buf_finish(&b);
    if (text == NULL)
        return HOP_NOMEM;
    g->text = hop__arena_strdup(&cx->plan->arena, text);
    hop_free(text);
    if (g->text == NULL)
        return HOP_NOMEM;
    *out_group = g;
    return HOP_OK;
}

/* A group of one copy step: dst = src (with conversion). */
static void
copy_group(hop__fgroup *g, hop_dtype dst, hop_dtype src)
{
    memset(g, 0, sizeof *g);
    g->nsteps = 1;
    g->ninputs = 1;
    g->in_dtype[0] = src;
    g->odtype = dst;
    g->cost = 1;
    hop__fstep *s = &g->steps[0];
    s->fn = hop__vfn_copy(dst);
    s->op = HOP_OP_clone;
    s->nin = 1;
    s->out = -1;
    s->dtype = s->fdtype = dst;
    s->in[0] = (hop__fopnd){.src = HOP__F_INPUT, .idx = 0, .need = dst, .have = src};
}

hop_status
hop__fused_copy(hop_lower_ctx *cx, int32_t dst, int32_t src, hop__fgroup **out_group)
{
    hop__fgroup *g = hop__arena_zalloc(&cx->plan->arena, sizeof *g);
    if (g == NULL)
        return HOP_NOMEM;
    copy_group(g, cx->slots[dst].dtype, cx->slots[src].dtype);
    g->out = dst;
    g->inputs[0] = src;
    g->text = "clone";
    *out_group = g;
    return HOP_OK;
}

/* ------------------------------------------------------------ execution */

typedef struct frun {
    const hop__fgroup *g;
    int rank;
    int64_t numel;
    int64_t sizes[HOP_MAX_RANK];
    char *out;
    int64_t ost[HOP_MAX_RANK];
    const char *in[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN][HOP_MAX_RANK];
    _Alignas(8) unsigned char sym[HOP__F_MAXSTEPS][3][8];
} frun;

static void
spread(unsigned char *dst, const void *src, size_t esize, int64_t m)
{
    if ((const unsigned char *)src != dst)
        memcpy(dst, src, esize);
    for (int64_t filled = 1; filled < m;) {
        int64_t k = filled < m - filled ? filled : m - filled;
        memcpy(dst + filled * (int64_t)esize, dst, (size_t)k * esize);
        filled += k;
    }
}

/* A lone step over operands it reads in place has no intermediates to keep
 * in cache: one call over the whole run streams better than tiles (a + b
 * into a buffer is memory-bound). */
static bool
whole_run(const hop__fgroup *g, int64_t ost, const int64_t *ist)
{
    if (g->nsteps != 1 || ost != 1 || g->steps[0].fdtype != g->steps[0].dtype)
        return false;
    const hop__fstep *st = &g->steps[0];
    bool steps = false;
    for (int i = 0; i < st->nin; i++) {
        const hop__fopnd *op = &st->in[i];
        if (op->have != op->need)
            return false;
        if (op->src == HOP__F_INPUT) {
            if (ist[op->idx] != 0 && ist[op->idx] != 1)
                return false;
            steps |= ist[op->idx] == 1;
        }
    }
    return steps;
}

/* n output elements at o (stride ost) from inputs at ip (strides ist). */
static void
run_tiles(const frun *c, int64_t n, char *o, int64_t ost, const char *const *ip, const int64_t *ist)
{
    const hop__fgroup *g = c->g;
    _Alignas(64) unsigned char regs[HOP__F_MAXREGS][TILE * 8];
    _Alignas(64) unsigned char scr[3][TILE * 8];
    _Alignas(64) unsigned char gat[HOP__F_MAXIN][TILE * 8];
    _Alignas(64) unsigned char otmp[TILE * 8];
    _Alignas(64) unsigned char ftmp[TILE * 8]; /* a step's f32 results before rounding */
    size_t osz = hop_dtype_size(g->odtype);
    int64_t tile = whole_run(g, ost, ist) ? n : TILE;
    for (int64_t j = 0; j < n; j += tile) {
        int64_t m = n - j < tile ? n - j : tile;
        const void *ptr[HOP__F_MAXIN];
        int inc[HOP__F_MAXIN];
        for (int k = 0; k < g->ninputs; k++) {
            size_t isz = hop_dtype_size(g->in_dtype[k]);
            if (ist[k] == 0) {
                ptr[k] = ip[k];
                inc[k] = 0;
            } else if (ist[k] == 1) {
                ptr[k] = ip[k] + j * (int64_t)isz;
                inc[k] = 1;
            } else {
                hop__convert(m, gat[k], g->in_dtype[k], ip[k] + j * ist[k] * (int64_t)isz,
                             g->in_dtype[k], ist[k]);
                ptr[k] = gat[k];
                inc[k] = 1;
            }
        }
        void *dst = NULL;
        for (int s = 0; s < g->nsteps; s++) {
            const hop__fstep *st = &g->steps[s];
            const void *a[3];
            int ai[3];
            for (int i = 0; i < st->nin; i++) {
                const hop__fopnd *op = &st->in[i];
                const void *p;
                int pi;
                switch (op->src) {
                case HOP__F_REG:
                    p = regs[op->idx];
                    pi = 1;
                    break;
                case HOP__F_INPUT:
                    p = ptr[op->idx];
                    pi = inc[op->idx];
                    break;
                case HOP__F_SCALAR:
                    p = op->val;
                    pi = 0;
                    break;
                default:
                    p = c->sym[s][i];
                    pi = 0;
                    break;
                }
                if (op->have != op->need) {
                    hop__convert(pi ? m : 1, scr[i], op->need, p, op->have, 1);
                    p = scr[i];
                }
                a[i] = p;
                ai[i] = pi;
            }
            /* Unary functions read every element; binary ones need one
             * operand that steps; where takes anything. */
            if (st->op != HOP_OP_where && !ai[0] && (st->nin == 1 || !ai[1])) {
                spread(scr[0], a[0], hop_dtype_size(st->in[0].need), m);
                a[0] = scr[0];
                ai[0] = 1;
            }
            if (st->out >= 0)
                dst = regs[st->out];
            else
                dst = ost == 1 ? (void *)(o + j * (int64_t)osz) : otmp;
            if (st->fdtype == st->dtype) {
                st->fn(m, dst, a, ai);
            } else {
                st->fn(m, ftmp, a, ai);
                hop__convert(m, dst, st->dtype, ftmp, st->fdtype, 1);
            }
        }
        if (dst == otmp)
            hop__scatter(m, o + j * ost * (int64_t)osz, ost, otmp, osz);
    }
}

/*
 * Short rows (softmax's x - max over 32 columns, pairwise distances' 3
 * coordinates): a run per row costs more than the row.  When the output is
 * contiguous, tiles of it are computed whole instead, each input that does
 * not step through the output's order gathered into a tile first.
 */
static bool
short_rows(const frun *c)
{
    int inner = c->rank - 1;
    if (c->rank < 2 || c->sizes[inner] >= 64)
        return false;
    int64_t expect = 1;
    for (int d = inner; d >= 0; d--) {
        if (c->ost[d] != expect)
            return false;
        expect *= c->sizes[d];
    }
    return true;
}

/* One input's view of the output's dims for gathering: adjacent dims it
 * steps through contiguously merged (its own, fewer rows). */
typedef struct gview {
    int rank;
    int64_t sizes[HOP_MAX_RANK], st[HOP_MAX_RANK];
} gview;

static void
gview_init(gview *v, const frun *c, int k)
{
    v->rank = 0;
    for (int d = 0; d < c->rank; d++) {
        int n = v->rank;
        if (n > 0 && v->st[n - 1] == c->ist[k][d] * c->sizes[d]) {
            v->sizes[n - 1] *= c->sizes[d];
            v->st[n - 1] = c->ist[k][d];
        } else {
            v->sizes[n] = c->sizes[d];
            v->st[n] = c->ist[k][d];
            v->rank++;
        }
    }
}

/* Elements [pos, pos + m) of an input (of view v over src) in the output's
 * order into dst. */
#define GATHER(T, sfx)                                                                             \
    static void gather_##sfx(T *dst, const T *src, const gview *v, int64_t pos, int64_t m)         \
    {                                                                                              \
        int inner = v->rank - 1;                                                                   \
        int64_t idx[HOP_MAX_RANK], off = 0, s = v->st[inner], rest = pos;                          \
        for (int d = inner; d >= 0; d--) {                                                         \
            idx[d] = rest % v->sizes[d];                                                           \
            rest /= v->sizes[d];                                                                   \
            off += idx[d] * v->st[d];                                                              \
        }                                                                                          \
        for (int64_t done = 0; done < m;) {                                                        \
            if (inner > 0 && idx[inner] == 0 && idx[inner - 1] == 0 &&                             \
                m - done >= v->sizes[inner] * v->sizes[inner - 1]) {                               \
                /* a whole block of the two inner dims: rows without the odometer */               \
                int64_t rows = v->sizes[inner - 1], n = v->sizes[inner], s1 = v->st[inner - 1];    \
                const T *p = src + off;                                                            \
                T *o = dst + done;                                                                 \
                for (int64_t j = 0; j < rows; j++, o += n, p += s1)                                \
                    for (int64_t i = 0; i < n; i++)                                                \
                        o[i] = p[i * s];                                                           \
                done += rows * n;                                                                  \
                if (inner < 2)                                                                     \
                    break; /* the block was everything */                                          \
                off += v->st[inner - 2];                                                           \
                idx[inner - 2]++;                                                                  \
                for (int d = inner - 2; d > 0 && idx[d] == v->sizes[d]; d--) {                     \
                    off += v->st[d - 1] - v->sizes[d] * v->st[d];                                  \
                    idx[d] = 0;                                                                    \
                    idx[d - 1]++;                                                                  \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            int64_t n = v->sizes[inner] - idx[inner];                                              \
            if (n > m - done)                                                                      \
                n = m - done;                                                                      \
            const T *p = src + off;                                                                \
            T *o = dst + done;                                                                     \
            if (s == 0) {                                                                          \
                T x = *p;                                                                          \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = x;                                                                      \
            } else if (s == 1) {                                                                   \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = p[i];                                                                   \
            } else {                                                                               \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = p[i * s];                                                               \
            }                                                                                      \
            done += n;                                                                             \
            off += n * s;                                                                          \
            idx[inner] += n;                                                                       \
            for (int d = inner; d > 0 && idx[d] == v->sizes[d]; d--) {                             \
                off += v->st[d - 1] - v->sizes[d] * v->st[d];                                      \
                idx[d] = 0;                                                                        \
                idx[d - 1]++;                                                                      \
            }                                                                                      \
        }                                                                                          \
    }
GATHER(uint8_t, 1)
GATHER(uint16_t, 2)
GATHER(uint32_t, 4)
GATHER(uint64_t, 8)

static void
gather(void *dst, const char *src, size_t isz, const gview *v, int64_t pos, int64_t m)
{
    switch (isz) {
    case 1:
        gather_1(dst, (const uint8_t *)src, v, pos, m);
        break;
    case 2:
        gather_2(dst, (const uint16_t *)src, v, pos, m);
        break;
    case 4:
        gather_4(dst, (const uint32_t *)src, v, pos, m);
        break;
    default:
        gather_8(dst, (const uint64_t *)src, v, pos, m);
        break;
    }
}

static void
run_short_rows(const frun *c, int64_t begin, int64_t end)
{
    const hop__fgroup *g = c->g;
    int r = c->rank;
    size_t osz = hop_dtype_size(g->odtype);
    _Alignas(64) unsigned char buf[HOP__F_MAXIN][TILE * 8];
    const char *ip[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN];
    int how[HOP__F_MAXIN]; /* 0: one element, 1: in the output's order, 2: gathered */
    gview views[HOP__F_MAXIN];
    for (int k = 0; k < g->ninputs; k++) {
        bool zero = true, same = true;
        for (int d = 0; d < r; d++) {
            zero = zero && c->ist[k][d] == 0;
            same = same && c->ist[k][d] == c->ost[d];
        }
        how[k] = zero ? 0 : same ? 1 : 2;
        ist[k] = how[k] != 0;
        if (how[k] == 2)
            gview_init(&views[k], c, k);
    }
    for (int64_t pos = begin; pos < end;) {
        int64_t m = end - pos < TILE ? end - pos : TILE;
        for (int k = 0; k < g->ninputs; k++) {
            size_t isz = hop_dtype_size(g->in_dtype[k]);
            if (how[k] == 0) {
                ip[k] = c->in[k];
            } else if (how[k] == 1) {
                ip[k] = c->in[k] + pos * (int64_t)isz;
            } else {
                gather(buf[k], c->in[k], isz, &views[k], pos, m);
                ip[k] = (const char *)buf[k];
            }
        }
        run_tiles(c, m, c->out + pos * (int64_t)osz, 1, ip, ist);
        pos += m;
    }
}

static void
run_range(const frun *c, int64_t begin, int64_t end)
{
    const hop__fgroup *g = c->g;
    size_t osz = hop_dtype_size(g->odtype);
    const char *ip[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN];
    if (short_rows(c)) {
        run_short_rows(c, begin, end);
        return;
    }
    if (c->rank <= 1) {
        int64_t os = c->rank ? c->ost[0] : 1;
        for (int k = 0; k < g->ninputs; k++) {
            ist[k] = c->rank ? c->ist[k][0] : 0;
            ip[k] = c->in[k] + begin * ist[k] * (int64_t)hop_dtype_size(g->in_dtype[k]);
        }
        run_tiles(c, end - begin, c->out + begin * os * (int64_t)osz, os, ip, ist);
        return;
    }
    int r = c->rank, inner = r - 1;
    int64_t idx[HOP_MAX_RANK], rest = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rest % c->sizes[d];
        rest /= c->sizes[d];
    }
    for (int k = 0; k < g->ninputs; k++)
        ist[k] = c->ist[k][inner];
    for (int64_t pos = begin; pos < end;) {
        int64_t ooff = 0;
        for (int d = 0; d < r; d++)
            ooff += idx[d] * c->ost[d];
        for (int k = 0; k < g->ninputs; k++) {
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d] * c->ist[k][d];
            ip[k] = c->in[k] + off * (int64_t)hop_dtype_size(g->in_dtype[k]);
        }
        int64_t n = c->sizes[inner] - idx[inner];
        if (n > end - pos)
            n = end - pos;
        run_tiles(c, n, c->out + ooff * (int64_t)osz, c->ost[inner], ip, ist);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] == c->sizes[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static void
task(const void *ctx, int ith, int nth)
{
    const frun *c = ctx;
    int64_t b, e;
    hop__split(c->numel, ith, nth, 64, &b, &e);
    if (b < e)
        run_range(c, b, e);
}

static bool
contiguous(const hop_tensor *t, int64_t *numel)
{
    int64_t expect = 1;
    bool ok = true;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->sizes[d] != 1 && t->strides[d] != expect)
            ok = false;
        expect *= t->sizes[d];
    }
    *numel = expect;
    return ok;
}

static hop_status
mismatch(const hop__fgroup *g, const hop_tensor *out, const hop_tensor *x)
{
    hop__ttext a, b;
    return hop_error(HOP_SHAPE, "%s: operand %s does not broadcast to the result %s",
                     g->text ? g->text : "fused", hop__tensor_text(&a, x),
                     hop__tensor_text(&b, out));
}

/* Runs g with output out and inputs in; sym holds the SYM operands' values
 * converted to their dtypes. */
static hop_status
execute(const hop__fgroup *g, hop_tensor *out, const hop_tensor *const *in, frun *c)
{
    c->g = g;
    int64_t numel;
    bool flat = contiguous(out, &numel);
    c->numel = numel;
    if (numel == 0)
        return HOP_OK;
    for (int k = 0; k < g->ninputs && flat; k++) {
        int64_t n;
        flat = contiguous(in[k], &n) && (n == numel || n == 1) && in[k]->rank <= out->rank;
    }
    c->out = out->data;
    for (int k = 0; k < g->ninputs; k++)
        c->in[k] = in[k]->data;
    if (flat) {
        c->rank = 1;
        c->sizes[0] = numel;
        c->ost[0] = 1;
        for (int k = 0; k < g->ninputs; k++)
            c->ist[k][0] = hop_tensor_numel(in[k]) == 1 && numel != 1 ? 0 : 1;
    } else {
        /* Broadcast strides over the output's dims, then drop size-1 dims
         * and merge dims every operand steps through contiguously. */
        int r = out->rank, n = 0;
        int64_t st[HOP__F_MAXIN][HOP_MAX_RANK];
        for (int k = 0; k < g->ninputs; k++) {
            const hop_tensor *x = in[k];
            if (x->rank > r)
                return mismatch(g, out, x);
            for (int d = 0; d < r; d++) {
                int sd = d - (r - x->rank);
                if (sd < 0 || x->sizes[sd] == 1) {
                    st[k][d] = 0;
                } else if (x->sizes[sd] == out->sizes[d]) {
                    st[k][d] = x->strides[sd];
                } else {
                    return mismatch(g, out, x);
                }
            }
        }
        for (int d = 0; d < r; d++) {
            if (out->sizes[d] == 1)
                continue;
            bool merge = n > 0 && c->ost[n - 1] == out->strides[d] * out->sizes[d];
            for (int k = 0; k < g->ninputs && merge; k++)
                merge = c->ist[k][n - 1] == st[k][d] * out->sizes[d];
            if (merge) {
                c->sizes[n - 1] *= out->sizes[d];
                c->ost[n - 1] = out->strides[d];
                for (int k = 0; k < g->ninputs; k++)
                    c->ist[k][n - 1] = st[k][d];
            } else {
                c->sizes[n] = out->sizes[d];
                c->ost[n] = out->strides[d];
                for (int k = 0; k < g->ninputs; k++)
                    c->ist[k][n] = st[k][d];
                n++;
            }
        }
        c->rank = n;
    }
    int threads = hop_runtime_threads();
    int64_t work = numel * (g->cost > 0 ? g->cost : 1);
    int nth = (int)(work / 65536);
    if (nth > threads)
        nth = threads;
    if (nth > 1)
        hop__pool_run(task, c, nth);
    else
        run_range(c, 0, numel);
    return HOP_OK;
}

hop_status
hop__fused_run(const hop__fgroup *g, hop__frame *f)
{
    frun c;
    const hop_tensor *in[HOP__F_MAXIN];
    for (int k = 0; k < g->ninputs; k++)
        in[k] = &f->slots[g->inputs[k]];
    for (int s = 0; s < g->nsteps; s++) {
        for (int i = 0; i < g->steps[s].nin; i++) {
            const hop__fopnd *o = &g->steps[s].in[i];
            if (o->src != HOP__F_SYM)
                continue;
            int64_t v;
            hop_status st = hop__xget(o->x, f->regs, &v);
            if (st != HOP_OK)
                return st;
            if (o->x->is_bool) {
                hop__bool b = v != 0;
                hop__convert(1, c.sym[s][i], o->need, &b, HOP_BOOL, 1);
            } else if (g->steps[s].opdtype == HOP_F16 && o->need != HOP_F16) {
                uint16_t h; /* rounded to f16 first, as the runtime's kernel does */
                hop__convert(1, &h, HOP_F16, &v, HOP_I64, 1);
                hop__convert(1, c.sym[s][i], o->need, &h, HOP_F16, 1);
            } else {
                hop__convert(1, c.sym[s][i], o->need, &v, HOP_I64, 1);
            }
        }
    }
    return execute(g, &f->slots[g->out], in, &c);
}

hop_status
hop__copy_tensor(hop_tensor *dst, const hop_tensor *src)
{
    hop__fgroup g;
    copy_group(&g, dst->dtype, src->dtype);
    g.text = "copy";
    if (g.steps[0].fn == NULL)
        return hop_error(HOP_DTYPE, "copy: cannot copy into %s", hop_dtype_name(dst->dtype));
    frun c;
    const hop_tensor *in[1] = {src};
    return execute(&g, dst, in, &c);
}
