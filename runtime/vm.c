/*
 * runtime/vm.c - the program interpreter (the VM): hop_plan_run and
 * hop_plan_run_into run a plan (runtime/program.h) in one switch over the
 * opcodes, with one error exit; and int programs (hop__xeval).
 *
 * A run takes a frame (frame.c) holding everything it writes.  Headers of
 * slots are the frame's memory: we fill their fields directly (what
 * hop_tensor_init_borrowed does) because views and rows are made in the
 * innermost loops.  A parallel map loop's LoopInit hands the loop to
 * parmap.c, whose workers run one iteration each with hop__exec_at,
 * stopping at the loop's Next.
 */
#include "hop/foreign.h"
#include "runtime/vm_impl.h"

#include <inttypes.h>
#include <stdio.h>

/* ------------------------------------------------------------ slot helpers */

static inline void
drop(hop__frame *f, int32_t s)
{
    if (f->owned[s]) {
        hop_tensor_release(f->owner[s]);
        f->owned[s] = 0;
    }
}

/* Slot s takes the reference t (a new tensor). */
static void
take(hop__frame *f, int32_t s, hop_tensor *t)
{
    drop(f, s);
    f->owner[s] = t;
    f->owned[s] = 1;
    hop__header(&f->slots[s], t->storage, t->dtype, t->rank, t->sizes, t->strides, t->data);
}

/* ------------------------------------------------------------------ Input */

static size_t
input_dim(const void *input, int d, char *buf, size_t cap)
{
    const hop__dimcheck *c = &((const hop__input *)input)->dims[d];
    int n = c->kind == HOP__D_CONST
                ? snprintf(buf, cap, "%" PRId64, c->value)
                : snprintf(buf, cap, "%s", c->kind == HOP__D_EXPR ? c->x->text : c->sym);
    return n < 0 ? 0 : (size_t)n;
}

/* What the plan expects of an input, `f32[s0, 4]`. */
static const char *
dims_text(char *buf, size_t cap, const hop__input *in)
{
    hop_dims_print(in->dtype, in->rank, input_dim, in, buf, cap);
    return buf;
}

static hop_status
run_input(hop__frame *f, const hop__input *in, const hop_tensor *t)
{
    char want[160];
    if (t->dtype != in->dtype)
        return hop_error(HOP_GUARD,
                         "guard failed: %s.dtype == %s expected, got %s (input %s is %s)", in->name,
                         hop_dtype_name(in->dtype), hop_dtype_name(t->dtype), in->name,
                         dims_text(want, sizeof want, in));
    if (t->rank != in->rank)
        return hop_error(HOP_GUARD,
                         "guard failed: %s.dim() == %d expected, got %d (input %s is %s)", in->name,
                         in->rank, t->rank, in->name, dims_text(want, sizeof want, in));
    int64_t *regs = f->regs;
    for (int d = 0; d < in->rank; d++) {
        const hop__dimcheck *c = &in->dims[d];
        int64_t v = t->sizes[d];
        switch (c->kind) {
        case HOP__D_CONST:
            if (v != c->value)
                return hop_error(HOP_GUARD,
                                 "guard failed: %s.size(%d) == %" PRId64 " expected, got %" PRId64,
                                 in->name, d, c->value, v);
            break;
        case HOP__D_BIND:
            if (v < c->lo || v > c->hi) {
                if (c->hi == INT64_MAX)
                    return hop_error(HOP_GUARD,
                                     "guard failed: %s.size(%d) >= %" PRId64
                                     " expected (%s is dynamic; sizes 0 and 1 are specialised), "
                                     "got %" PRId64,
                                     in->name, d, c->lo, c->sym, v);
                return hop_error(HOP_GUARD,
                                 "guard failed: %" PRId64 " <= %s.size(%d) <= %" PRId64
                                 " expected (%s), got %" PRId64,
                                 c->lo, in->name, d, c->hi, c->sym, v);
            }
            regs[c->reg] = v;
            break;
        case HOP__D_SAME:
            if (v != regs[c->reg])
                return hop_error(
                    HOP_GUARD,
                    "guard failed: %s.size(%d) == %s expected (both are %s), got %" PRId64
                    " and %" PRId64,
                    in->name, d, c->first, c->sym, v, regs[c->reg]);
            break;
        case HOP__D_EXPR:
            break;
        }
    }
    hop__header(&f->slots[in->slot], t->storage, t->dtype, t->rank, t->sizes, t->strides, t->data);
    f->owner[in->slot] = (hop_tensor *)t;
    return HOP_OK;
}

static hop_status
check_exprs(hop__frame *f, const hop__input *in)
{
    const hop_tensor *t = &f->slots[in->slot];
    for (int d = 0; d < in->rank; d++) {
        const hop__dimcheck *c = &in->dims[d];
        if (c->kind != HOP__D_EXPR)
            continue;
        int64_t want;
        hop_status st = hop__xget(c->x, f->regs, &want);
        if (st != HOP_OK)
            return st;
        if (t->sizes[d] != want)
            return hop_error(
                HOP_GUARD, "guard failed: %s.size(%d) == %s expected (= %" PRId64 "), got %" PRId64,
                in->name, d, c->x->text, want, t->sizes[d]);
    }
    return HOP_OK;
}

static hop_status
run_guard(hop__frame *f, const hop__guard *g)
{
    int64_t v;
    hop_status st = hop__xeval(g->x, f->regs, &v);
    if (st != HOP_OK)
        return st;
    if (v)
        return HOP_OK;
    char vals[512];
    size_t n = 0;
    vals[0] = '\0';
    for (int k = 0; k < g->x->nsyms && n < sizeof vals; k++)
        n += (size_t)snprintf(vals + n, sizeof vals - n, "%s%s = %" PRId64, k ? ", " : "",
                              g->x->names[k], f->regs[g->x->regs[k]]);
    if (g->graph)
        return hop_error(HOP_GUARD, "guard %s of %s failed with %s: %s was traced assuming it",
                         g->x->text, g->graph, vals, g->graph);
    return hop_error(HOP_GUARD, "guard %s failed with %s", g->x->text, vals);
}

/* --------------------------------------------------------------- operands */

/* Fills rt[0..n) from args (list items after them, from *next). */
static hop_status
fill_args(hop__frame *f, const hop__oparg *args, int n, hop_rt_arg *rt, hop_rt_arg **next)
{
    for (int i = 0; i < n; i++) {
        const hop__oparg *a = &args[i];
        int64_t v;
        hop_status st;
        switch (a->kind) {
        case HOP__A_NONE:
            rt[i] = hop_rt_none();
            break;
        case HOP__A_TENSOR:
            rt[i] = hop_rt_tensor(&f->slots[a->slot]);
            break;
        case HOP__A_INT:
        case HOP__A_BOOL:
            if ((st = hop__xget(a->x, f->regs, &v)) != HOP_OK)
                return st;
            rt[i] = a->kind == HOP__A_INT ? hop_rt_int(v) : hop_rt_bool(v != 0);
            break;
        case HOP__A_FLOAT:
            rt[i] = hop_rt_float(a->f);
            break;
        case HOP__A_DTYPE:
            rt[i] = hop_rt_dtype(a->dtype);
            break;
        case HOP__A_LIST: {
            hop_rt_arg *items = *next;
            *next += a->n;
            if ((st = fill_args(f, a->items, a->n, items, next)) != HOP_OK)
                return st;
            rt[i] = hop_rt_list(items, (size_t)a->n);
            break;
        }
        }
    }
    return HOP_OK;
}

/* Numbers every preparation, over all frames and threads. */
static _Atomic uint64_t kernel_gen;

/*
 * Op: the cached kernel rebased onto this run's (or row's) operands when
 * only their data moved - the rows of a map, a new input - and prepared
 * again only when their geometry or values changed: preparing infers
 * shapes in the thread's ShapeEnv, which may allocate.  Inlined in the
 * interpreter's Op case (as when that was its one caller) and in
 * run_epilogue.
 */
static inline __attribute__((always_inline)) hop_status
run_op(hop__frame *f, const hop__insn *in)
{
    const hop__opdesc *d = in->p4;
    hop__kcache *kc = &f->kernels[d->cache];
    hop_tensor *out = &f->slots[in->p1];
    hop__kernel *k = (hop__kernel *)kc->k.u.bytes;
    if (d->fixed && kc->valid && f->into == NULL && d->nargs <= HOP__K_NBASE) {
        /* the same data as the last run: nothing to recheck (~400
         * instructions of a small op's ~700) */
        const char *data[HOP__K_NBASE];
        for (int i = 0; i < d->nargs; i++)
            data[i] = d->args[i].kind == HOP__A_TENSOR ? f->slots[d->args[i].slot].data : NULL;
        if (hop__kernel_at(k, data, (size_t)d->nargs, out->data))
            goto run;
    }
    hop_rt_arg *rt = f->rtargs + d->rtbase, *next = rt + d->nargs;
    hop_status st = fill_args(f, d->args, d->nargs, rt, &next);
    if (st != HOP_OK)
        return st;
    if (!kc->valid || !hop__kernel_rebase(k, rt, (size_t)d->nargs, out)) {
        kc->valid = false;
        if ((st = hop_kernel_prepare(&kc->k, d->op, rt, (size_t)d->nargs, out)) != HOP_OK)
            return st;
        kc->valid = true;
        kc->gen = atomic_fetch_add_explicit(&kernel_gen, 1, memory_order_relaxed) + 1;
    }
run:
    hop__kernel_run(k);
    f->budget -= k->work >> HOP__CHECK_SHIFT;
    return HOP_OK;
}

/* Group g's reduction epilogue (program.h): its op's kernel and cache, as
 * an Op instruction runs them, without a dispatch of its own.  On the same
 * data as the last run, the reduction straight (hop__kernel_run: one piece,
 * or a long sum's chunks shared over the pool); else run_op. */
static hop_status
run_epilogue(hop__frame *f, const hop__fgroup *g)
{
    const hop__opdesc *d = g->epi;
    hop__kcache *kc = &f->kernels[d->cache];
    const hop__kernel *k = (const hop__kernel *)kc->k.u.bytes;
    if (d->fixed && kc->valid && f->into == NULL && d->nargs <= HOP__K_NBASE) {
        const char *data[HOP__K_NBASE];
        for (int i = 0; i < d->nargs; i++)
            data[i] = d->args[i].kind == HOP__A_TENSOR ? f->slots[d->args[i].slot].data : NULL;
        if (hop__kernel_at(k, data, (size_t)d->nargs, f->slots[g->epi_out].data) &&
            k->kind == HOP__K_REDUCE && k->p.red.nout == 1) {
            hop__kernel_run(k);
            f->budget -= k->work >> HOP__CHECK_SHIFT;
            return HOP_OK;
        }
    }
    hop__insn in = {.opcode = HOP__OP_Op, .p1 = g->epi_out, .p2 = d->cache, .p4 = d};
    return run_op(f, &in);
}

/* OpAlloc's memory: the slot's kept storage and the frame's scratch. */
typedef struct late_ud {
    hop__frame *f;
    int32_t slot;
} late_ud;

static hop_tensor *
late_result(void *ud, hop_dtype dtype, int rank, const int64_t *sizes)
{
    late_ud *u = ud;
    return hop__late_tensor(u->f, u->slot, dtype, rank, sizes);
}

static void *
late_scratch(void *ud, size_t n)
{
    return hop__frame_scratch(((late_ud *)ud)->f, n);
}

/* Whether slot s's sizes can be evaluated now (every symbol bound). */
static bool
sizes_bound(const hop__slot *sl, const int64_t *regs)
{
    for (int d = 0; d < sl->rank; d++)
        for (int i = 0; i < sl->sizes[d]->len; i++)
            if (sl->sizes[d]->code[i].op == HOP__X_REG &&
                hop__reg_unbound(regs, sl->sizes[d]->code[i].reg))
                return false;
    return true;
}

/*
 * OpAlloc: an op of the INDEX family into the storage the frame keeps for
 * its slot.  Its sizes come from the slot when its symbols are bound (as
 * an Op's kernel is rebased, without the shape inference that the lowering
 * did once: inferring interns every new size in the thread's ShapeEnv),
 * from the data for nonzero, else from hop_eager's inference.
 */
static hop_status
run_op_alloc(hop__frame *f, const hop__insn *in)
{
    const hop_plan *p = f->plan;
    const hop__opdesc *d = in->p4;
    const hop__slot *sl = &p->slots[in->p1];
    hop_rt_arg *rt = f->rtargs + d->rtbase, *next = rt + d->nargs;
    hop_status st = fill_args(f, d->args, d->nargs, rt, &next);
    if (st != HOP_OK)
        return st;
    hop__call c;
    if (d->op == HOP_OP_nonzero || sizes_bound(sl, f->regs)) {
        memset(&c, 0, sizeof c);
        c.op = d->op;
        c.info = hop_op_get(d->op);
        c.args = rt;
        c.nargs = (size_t)d->nargs;
        c.res.kind = HOP_VALUE_TENSOR;
        c.res.meta.dtype = sl->dtype;
        c.res.meta.rank = sl->rank;
        int64_t numel;
        if (d->op != HOP_OP_nonzero &&
            (st = hop__slot_sizes(p, in->p1, f->regs, c.sizes, &numel)) != HOP_OK)
            return st;
    } else if ((st = hop__infer_call(&c, d->op, rt, (size_t)d->nargs)) != HOP_OK) {
        return st;
    }
    if (c.res.kind != HOP_VALUE_TENSOR) {
        char *t = hop__ntext_string(d->text);
        st = t ? hop_error(HOP_RUNTIME, "%s: gives no tensor", t) : HOP_NOMEM;
        hop_free(t);
        return st;
    }
    /* The slot keeps its last tensor until this one is made: an operand
     * may still read it (a loop's carry), so in a loop OpAlloc takes new
     * storage each time; from run to run it reuses the kept one. */
    late_ud u = {f, in->p1};
    hop__imem mem = {late_result, late_scratch, &u};
    hop_tensor *t;
    if ((st = hop__index_run(&c, &mem, &t)) != HOP_OK)
        return st;
    take(f, in->p1, t);
    return HOP_OK;
}

/* Extern: the kernel's operands, evaluated, and its output slots. */
static hop_status
run_extern(hop__frame *f, const hop__insn *in)
{
    const hop__extern *e = in->p4;
    hop_rt_arg *rt = f->rtargs + e->rtbase, *next = rt + e->nargs;
    hop_status st = fill_args(f, e->args, e->nargs, rt, &next);
    if (st != HOP_OK)
        return st;
    hop_tensor *outs[HOP__EXTERN_MAXOUT];
    for (int32_t k = 0; k < e->nouts; k++)
        outs[k] = &f->slots[e->outs[k]];
    return hop_foreign_call_into(e->kernel, rt, (size_t)e->nargs, outs, (size_t)e->nouts);
}

/* ------------------------------------------------------------ int programs */

/* A size or int the plan computes that int64 cannot hold, or a zero
 * divisor: a run-time check that failed (HOP_CHECK), where eager Python
 * gives a big int or raises ZeroDivisionError (hop.compile then runs the
 * call eagerly, docs/ARCHITECTURE.md "Run-time checks"). */
static hop_status
xfail(const hop__xprog *x, const char *why)
{
    return hop_error(HOP_CHECK, "cannot evaluate %s: %s", x->text, why);
}

static bool
ipow(int64_t b, int64_t e, int64_t *out)
{
    int64_t r = 1;
    while (e > 0) {
        if ((e & 1) && __builtin_mul_overflow(r, b, &r))
            return false;
        e >>= 1;
        if (e > 0 && __builtin_mul_overflow(b, b, &b))
            return false;
    }
    *out = r;
    return true;
}

hop_status
hop__xeval(const hop__xprog *x, const int64_t *regs, int64_t *out)
{
    if (x->is_const) {
        *out = x->value;
        return HOP_OK;
    }
    int64_t st[HOP__X_MAXDEPTH];
    int sp = 0;
    for (int i = 0; i < x->len; i++) {
        const hop__xi *c = &x->code[i];
        int64_t a, b, r = 0;
        switch (c->op) {
        case HOP__X_CONST:
            st[sp++] = c->v;
            continue;
        case HOP__X_REG:
            if (hop__reg_unbound(regs, c->reg)) {
                for (int k = 0; k < x->nsyms; k++) {
                    if (x->regs[k] == c->reg) {
                        char why[96];
                        snprintf(why, sizeof why, "%s is not known yet", x->names[k]);
                        return xfail(x, why);
                    }
                }
                return xfail(x, "a symbol is not known yet");
            }
            st[sp++] = regs[c->reg];
            continue;
        case HOP__X_NEG:
            if (st[sp - 1] == INT64_MIN)
                return xfail(x, "int64 overflow");
            st[sp - 1] = -st[sp - 1];
            continue;
        case HOP__X_NOT:
            st[sp - 1] = st[sp - 1] == 0;
            continue;
        case HOP__X_MAX:
        case HOP__X_MIN:
            sp -= c->n;
            r = st[sp];
            for (int k = 1; k < c->n; k++)
                r = (c->op == HOP__X_MAX) == (st[sp + k] > r) ? st[sp + k] : r;
            st[sp++] = r;
            continue;
        default:
            break;
        }
        b = st[--sp];
        a = st[sp - 1];
        switch (c->op) {
        case HOP__X_ADD:
            if (__builtin_add_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_SUB:
            if (__builtin_sub_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_MUL:
            if (__builtin_mul_overflow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_FLOORDIV:
        case HOP__X_MOD:
            if (b == 0)
                return xfail(x, "division by zero");
            if (a == INT64_MIN && b == -1) {
                if (c->op == HOP__X_FLOORDIV)
                    return xfail(x, "int64 overflow");
                r = 0;
                break;
            }
            if (c->op == HOP__X_FLOORDIV) {
                r = a / b;
                if (a % b != 0 && ((a < 0) != (b < 0)))
                    r--;
            } else {
                r = a % b;
                if (r != 0 && ((r < 0) != (b < 0)))
                    r += b;
            }
            break;
        case HOP__X_POW:
            if (b < 0)
                return xfail(x, "negative exponent");
            if (!ipow(a, b, &r))
                return xfail(x, "int64 overflow");
            break;
        case HOP__X_AND:
            r = a != 0 && b != 0;
            break;
        case HOP__X_OR:
            r = a != 0 || b != 0;
            break;
        case HOP__X_EQ:
            r = a == b;
            break;
        case HOP__X_NE:
            r = a != b;
            break;
        case HOP__X_LT:
            r = a < b;
            break;
        case HOP__X_LE:
            r = a <= b;
            break;
        case HOP__X_GT:
            r = a > b;
            break;
        case HOP__X_GE:
            r = a >= b;
            break;
        default:
            return xfail(x, "bad program");
        }
        st[sp - 1] = r;
    }
    *out = st[0];
    return HOP_OK;
}

/* ------------------------------------------------------------------ views */

/* The View of a dynamic_slice whose size fits, or false: its start read
 * straight from its slot, the geometry hop_dynamic_view's (ops/view.c).  A
 * loop body reading table[i] runs it once per iteration, so it skips the
 * argument array; anything out of the ordinary goes the general way. */
static bool
dynamic_view(hop__frame *f, const hop__insn *in, const hop__opdesc *d)
{
    const hop_tensor *x = &f->slots[in->p2];
    int64_t dim, size = 1;
    bool keep = d->args[3].kind != HOP__A_NONE;
    if (hop__xget(d->args[1].x, f->regs, &dim) != HOP_OK ||
        (keep && hop__xget(d->args[3].x, f->regs, &size) != HOP_OK)) {
        hop_error_clear(); /* the general way reports it */
        return false;
    }
    dim = dim < 0 ? dim + x->rank : dim;
    if (dim < 0 || dim >= x->rank || size < 0 || size > x->sizes[dim])
        return false;
    const hop_tensor *ix = &f->slots[d->args[2].slot];
    int64_t sizes[HOP_MAX_RANK], strides[HOP_MAX_RANK];
    int rank;
    int64_t off =
        hop_dynamic_view(x->rank, x->sizes, x->strides, (int)dim,
                         hop__load_i64(ix->data, ix->dtype), size, keep, &rank, sizes, strides);
    drop(f, in->p1);
    hop__header(&f->slots[in->p1], x->storage, x->dtype, rank, sizes, strides,
                (char *)x->data + off * (int64_t)hop_dtype_size(x->dtype));
    f->owner[in->p1] = f->owner[in->p2];
    return true;
}

/* View P1 P2 * P4: the geometry is ops/view.c's (hop_view_of), from the
 * operands evaluated now: sizes and indices may be SymInts bound mid-run. */
static hop_status
run_view(hop__frame *f, const hop__insn *in)
{
    const hop__opdesc *d = in->p4;
    if (d->op == HOP_OP_dynamic_slice && dynamic_view(f, in, d))
        return HOP_OK;
    hop_rt_arg *rt = f->rtargs + d->rtbase, *next = rt + d->nargs;
    hop_status st = fill_args(f, d->args, d->nargs, rt, &next);
    if (st != HOP_OK)
        return st;
    const hop_tensor *x = &f->slots[in->p2];
    int64_t p[HOP_MAX_RANK + 1];
    unsigned none = 0;
    int np = 0;
    switch (d->op) {
    case HOP_OP_squeeze: /* which dims go was decided at trace time */
        for (int i = 0; i < d->nkeep; i++)
            p[np++] = d->keep[i];
        break;
    case HOP_OP_reshape:
    case HOP_OP_view:
    case HOP_OP_permute:
    case HOP_OP_expand:
        /* One more than a rank can have is as wrong as any more. */
        for (size_t i = 0; i < rt[1].u.list.n && np <= HOP_MAX_RANK; i++)
            p[np++] = rt[1].u.list.items[i].u.i;
        break;
    case HOP_OP_slice: /* dim, start or None, end or None, step */
        for (int i = 1; i <= 4; i++) {
            bool given = rt[i].kind == HOP_OPND_INT;
            if (!given && (i == 2 || i == 3))
                none |= 1u << (i - 2);
            p[np++] = given ? rt[i].u.i : i == 4 ? 1 : 0;
        }
        break;
    case HOP_OP_dynamic_slice: /* dim, the start as read (clamped by the geometry), size, keep */
        p[np++] = rt[1].u.i;
        p[np++] = hop__start_value(&rt[2]);
        p[np++] = rt[3].kind == HOP_OPND_INT ? rt[3].u.i : 1;
        p[np++] = rt[3].kind == HOP_OPND_INT;
        break;
    case HOP_OP_mask_gradient: /* x itself */
        break;
    case HOP_OP_fail_if: /* x itself, once its flag says no element failed */
        if (rt[1].kind != HOP_OPND_TENSOR || rt[2].kind != HOP_OPND_INT)
            return hop_error(HOP_INVALID, "fail_if: its flag and kind are not a tensor and an int");
        if (hop__check_flag(rt[1].u.tensor, rt[2].u.i, NULL) != HOP_OK) {
            /* again with the node's text, which the message names (made
             * only now: the check is pure, so it fails the same way) */
            char *t = hop__ntext_string(d->text);
            st = t ? hop__check_flag(rt[1].u.tensor, rt[2].u.i, t) : HOP_NOMEM;
            hop_free(t);
            return st;
        }
        break;
    default: /* transpose, unsqueeze, select: ints */
        for (int i = 1; i < d->nargs && np <= HOP_MAX_RANK; i++)
            p[np++] = rt[i].u.i;
        break;
    }
    hop_view xv = {.rank = x->rank, .offset = x->offset}, v;
    memcpy(xv.sizes, x->sizes, sizeof xv.sizes);
    memcpy(xv.strides, x->strides, sizeof xv.strides);
    bool copy;
    if ((st = hop_view_of(d->op, x->dtype, &xv, p, np, none, NULL, &v, &copy)) != HOP_OK) {
        /* Again with the node's text, which the message names (made only
         * now: hop_view_of is pure, so it fails the same way). */
        char *t = hop__ntext_string(d->text);
        st = t ? hop_view_of(d->op, x->dtype, &xv, p, np, none, t, &v, &copy) : HOP_NOMEM;
        hop_free(t);
        return st;
    }
    if (d->op == HOP_OP_expand) {
        /* The one view that makes more elements: checked as eager checks
         * it (sizes bound at run time may multiply past int64). */
        int64_t numel;
        if ((st = hop__check_shape(hop_op_get(d->op)->name, x->dtype, v.rank, v.sizes, &numel)) !=
            HOP_OK)
            return st;
    }
    if (copy) {
        if (d->op == HOP_OP_view) {
            hop__ttext t;
            char *what = hop__ntext_string(d->text);
            st = what ? hop_error(HOP_SHAPE,
                                  "%s: its strides cannot be viewed so; use reshape (input %s)",
                                  what, hop__tensor_text(&t, x))
                      : HOP_NOMEM;
            hop_free(what);
            return st;
        }
        /* reshape of strides that cannot be viewed: a contiguous copy, then
         * the new shape over it. */
        hop_tensor *t = hop_tensor_empty(x->dtype, x->rank, x->sizes);
        if (t == NULL)
            return hop_error_code();
        if ((st = hop__copy_tensor(t, x)) != HOP_OK) {
            hop_tensor_release(t);
            return st;
        }
        take(f, in->p1, t);
        hop__header(&f->slots[in->p1], t->storage, t->dtype, v.rank, v.sizes, v.strides, t->data);
        return HOP_OK;
    }
    drop(f, in->p1);
    hop__header(&f->slots[in->p1], x->storage, x->dtype, v.rank, v.sizes, v.strides,
                (char *)x->data + (v.offset - x->offset) * (int64_t)hop_dtype_size(x->dtype));
    f->owner[in->p1] = f->owner[in->p2];
    return HOP_OK;
}

/* ------------------------------------------------------------ interpreter */

hop_status
hop__exec_at(hop__frame *f, int32_t pc)
{
    const hop_plan *p = f->plan;
    const hop__insn *code = p->code;
    hop_tensor *slots = f->slots;
    int64_t *regs = f->regs;
    FILE *trace = p->trace;
    hop_status st = HOP_OK;
    for (;;) {
        const hop__insn *in = &code[pc];
        if (--f->budget <= 0 && (st = hop__interrupt_check(f)) != HOP_OK)
            goto fail;
        if (trace)
            hop__trace_insn(p, pc);
        switch ((hop__opcode)in->opcode) {
        /* Input P1 P2 * P4: binds slot P2 to the caller's input P1 after
         * checking its dtype, rank and sizes against P4; the first dim of a
         * size symbol binds the symbol's register, later ones must agree. */
        case HOP__OP_Input: {
            const hop__input *d = in->p4;
            if ((st = run_input(f, d, f->inputs[in->p1])) != HOP_OK)
                goto fail;
            /* Compound sizes once the last input bound every symbol. */
            if ((size_t)in->p1 + 1 == p->ninputs)
                for (size_t k = 0; k < p->ninputs; k++)
                    if ((st = check_exprs(f, &p->inputs[k])) != HOP_OK)
                        goto fail;
            break;
        }
        /* Guard P1 * * P4: HOP_GUARD unless expression P4 (guard P1 of the
         * ShapeEnv, or of the subgraph starting here) holds for the bound
         * symbols. */
        case HOP__OP_Guard:
            if ((st = run_guard(f, in->p4)) != HOP_OK)
                goto fail;
            break;
        /* Layout P1: with P1 0, places the block's tensors for the bound
         * sizes (again only when they changed) and makes or binds the output
         * tensors; with P1 k > 0, places lazy section k's tensors in the
         * section's own block, made only now that the run enters it. */
        case HOP__OP_Layout:
            if (in->p1 > 0) {
                if ((st = hop__layout_section(f, in->p1)) != HOP_OK)
                    goto fail;
            } else if ((st = hop__layout(f)) != HOP_OK ||
                       (st = hop__bind_outputs(f, f->into)) != HOP_OK) {
                goto fail;
            }
            break;
        /* Fused P1 P2 P3 P4: runs fused group P4 (P2 inputs, P3 steps) into
         * slot P1, then its reduction epilogue if it has one. */
        case HOP__OP_Fused:
        /* Copy P1 P2 * P4: copies slot P2 into slot P1 (group P4). */
        case HOP__OP_Copy: {
            const hop__fgroup *g = in->p4;
            if ((st = hop__fused_run(g, f)) != HOP_OK)
                goto fail;
            /* a small group costs what the instruction does (above) */
            if (g->small_n == 0)
                f->budget -= hop_tensor_numel(&slots[in->p1]) >> HOP__CHECK_SHIFT;
            if (g->epi && (st = run_epilogue(f, g)) != HOP_OK)
                goto fail;
            break;
        }
        /* Op P1 P2 * P4: runs op P4 into slot P1 with the kernel cached in
         * P2, prepared again only when an operand's data or geometry changed. */
        case HOP__OP_Op:
            if ((st = run_op(f, in)) != HOP_OK)
                goto fail;
            break;
        /* View P1 P2 * P4: slot P1 = the view P4 of slot P2 (a copy for a
         * reshape whose strides cannot be viewed). */
        case HOP__OP_View:
            if ((st = run_view(f, in)) != HOP_OK)
                goto fail;
            break;
        /* OpAlloc P1 * * P4: slot P1 = op P4 (of the INDEX family) run
         * into a tensor it sizes itself (nonzero: its size is only known
         * once it ran), in the storage the frame keeps for P1 as Alloc's. */
        case HOP__OP_OpAlloc:
            if ((st = run_op_alloc(f, in)) != HOP_OK)
                goto fail;
            break;
        /* Alloc P1: slot P1 = a tensor of its sizes, which depend on values
         * known only now, in the storage the frame keeps for P1 between
         * runs (new storage when that is too small or still in use). */
        case HOP__OP_Alloc: {
            const hop__slot *sl = &p->slots[in->p1];
            int64_t sizes[HOP_MAX_RANK], numel;
            if ((st = hop__slot_sizes(p, in->p1, regs, sizes, &numel)) != HOP_OK)
                goto fail;
            drop(f, in->p1); /* its storage may be what the frame keeps */
            hop_tensor *t = hop__late_tensor(f, in->p1, sl->dtype, sl->rank, sizes);
            if (t == NULL) {
                st = hop_error_code();
                goto fail;
            }
            take(f, in->p1, t);
            break;
        }
        /* Move P1 P2: slot P1 stands for slot P2 (no copy). */
        case HOP__OP_Move:
            drop(f, in->p1);
            slots[in->p1] = slots[in->p2];
            f->owner[in->p1] = f->owner[in->p2];
            break;
        /* Select P1 P2 P3, dim in the instruction's int: slot P1 = index
         * r[P3] of slot P2 along that dim (a view; dim 0: a row). */
        case HOP__OP_Select: {
            const hop_tensor *x = &slots[in->p2];
            int64_t i = regs[in->p3];
            int dim = (int)in->i64;
            if (i < 0 || i >= x->sizes[dim]) {
                hop__ttext t;
                st = hop_error(HOP_RUNTIME, "%s %" PRId64 " is out of range for %s",
                               dim ? "index" : "row", i, hop__tensor_text(&t, x));
                goto fail;
            }
            hop_tensor *y = &slots[in->p1];
            drop(f, in->p1);
            y->dtype = x->dtype;
            y->rank = x->rank - 1;
            for (int d = 0, k = 0; d < x->rank; d++) {
                if (d == dim)
                    continue;
                y->sizes[k] = x->sizes[d];
                y->strides[k++] = x->strides[d];
            }
            y->offset = x->offset + i * x->strides[dim];
            y->data = (char *)x->data + i * x->strides[dim] * (int64_t)hop_dtype_size(x->dtype);
            y->storage = x->storage;
            f->owner[in->p1] = f->owner[in->p2];
            break;
        }
        /* Item P1 P2: r[P1] = the one element of slot P2, as an int. */
        case HOP__OP_Item:
            if ((st = hop_tensor_item_int(&slots[in->p2], &regs[in->p1])) != HOP_OK)
                goto fail;
            hop__reg_wrote(regs, in->p1);
            break;
        /* SymSize P1 P2 P3: r[P1] = size P3 of slot P2. */
        case HOP__OP_SymSize:
            regs[in->p1] = slots[in->p2].sizes[in->p3];
            break;
        /* Eval P1 * * P4: r[P1] = expression P4. */
        case HOP__OP_Eval:
            if ((st = hop__xeval(in->p4, regs, &regs[in->p1])) != HOP_OK)
                goto fail;
            hop__reg_wrote(regs, in->p1);
            break;
        /* Integer P1: r[P1] = the instruction's constant. */
        case HOP__OP_Integer:
            hop__reg_put(regs, in->p1, in->i64);
            break;
        /* MoveInt P1 P2: r[P1] = r[P2]. */
        case HOP__OP_MoveInt:
            hop__reg_move(regs, in->p1, in->p2);
            break;
        /* IfNot P1 P2 P3 P4: jumps to P2 when P1 is false: the one element
         * of slot P1 (P3 = 0) or r[P1] (P3 = 1).  If: when it is true (the
         * test at the bottom of a rotated while loop).  P4: the fused group
         * computing slot P1, run first (the condition's last step). */
        case HOP__OP_IfNot:
        case HOP__OP_If: {
            int64_t v;
            if (in->p4 && (st = hop__fused_run(in->p4, f)) != HOP_OK)
                goto fail;
            if ((st = hop__branch_value(f, in, &v)) != HOP_OK)
                goto fail;
            if ((v != 0) == (in->opcode == HOP__OP_If))
                goto jump_to_p2;
            break;
        }
        /* Swap P1 P2: slots P1 and P2 exchange what they hold (their
         * headers and whose storage they use): a double-buffered carry's
         * next value becomes the current one without a copy. */
        case HOP__OP_Swap: {
            hop__swap_slots(f, in->p1, in->p2);
            /* P3 more pairs in P4: a loop's carries swap together. */
            const int32_t *more = in->p4;
            for (int32_t k = 0; k < in->p3; k++)
                hop__swap_slots(f, more[2 * k], more[2 * k + 1]);
            break;
        }
        /* Goto P2. */
        case HOP__OP_Goto:
            pc = in->p2;
            continue;
        /* LoopInit P1 P2 P3 P4: r[P1] = 0; jumps to P2 (after the loop)
         * when r[P3] <= 0. */
        case HOP__OP_LoopInit:
            regs[in->p1] = 0;
            if (regs[in->p3] <= 0) {
                pc = in->p2;
                continue;
            }
            /* P4: the iterations are independent; parmap.c may run them
             * all on the pool (not inside a worker, not when tracing). */
            if (in->p4 && f->stop < 0 && trace == NULL) {
                bool ran;
                if ((st = hop__parmap_run(f, pc, &ran)) != HOP_OK)
                    goto fail;
                if (ran) {
                    regs[in->p1] = regs[in->p3];
                    pc = in->p2;
                    continue;
                }
            }
            break;
        /* Next P1 P2 P3: r[P1] += 1; jumps to P2 (the loop body) while
         * r[P1] < r[P3]; a worker running one iteration returns here. */
        case HOP__OP_Next:
            if (pc == f->stop)
                return HOP_OK;
            if (++regs[in->p1] < regs[in->p3])
                goto jump_to_p2;
            break;
        /* Call P1 P2 * P4: copies P4's P2 values into the callee's
         * parameters (and binds its results to the caller's slots), pushes
         * the return address and jumps to P1. */
        case HOP__OP_Call: {
            const hop__calldesc *d = in->p4;
            for (int32_t k = 0; k < d->nmoves; k++) {
                const hop__callmove *m = &d->moves[k];
                if (m->tensor) {
                    drop(f, m->dst);
                    slots[m->dst] = slots[m->src];
                    f->owner[m->dst] = f->owner[m->src];
                } else if (m->src >= 0) {
                    hop__reg_move(regs, m->dst, m->src);
                } else {
                    hop__reg_put(regs, m->dst, m->value);
                }
            }
            f->stack[f->sp++] = pc + 1;
            pc = in->p1;
            continue;
        }
        /* Return: back to the instruction after the Call. */
        case HOP__OP_Return:
            pc = f->stack[--f->sp];
            continue;
        /* Extern P1 P2 * P4: runs foreign kernel call P4 on its operands;
         * its P2 results go to its output slots (P1 is the first, or -1):
         * each in-out operand is copied into its slot, then the kernel
         * updates the slot through libffi. */
        case HOP__OP_Extern:
            if ((st = run_extern(f, in)) != HOP_OK)
                goto fail;
            break;
        /* Kernel P4: a HOP's own kernel on the tensors of its slots. */
        case HOP__OP_Kernel: {
            const hop__hopkernel *k = in->p4;
            hop_tensor *ts[HOP__KERNEL_MAXARGS];
            for (int32_t j = 0; j < k->n; j++)
                ts[j] = &slots[k->slots[j]];
            if ((st = k->fn(k->data, ts, (size_t)k->n)) != HOP_OK)
                goto fail;
            break;
        }
        /* Halt: the program is done. */
        case HOP__OP_Halt:
            return HOP_OK;
        case HOP__OP_COUNT:
            st = hop_error(HOP_RUNTIME, "plan: bad opcode at %d", pc);
            goto fail;
        }
        pc++;
        continue;
        /* A taken jump of If, IfNot or Next: to P2, or, when the jump has a
         * straight-line fast path and no trace is on, through
         * hop__run_straight, which runs the loop to its end in place. */
    jump_to_p2:
        if (in->straight && trace == NULL) {
            if ((st = hop__run_straight(f, in)) != HOP_OK)
                goto fail;
            pc++;
        } else {
            pc = in->p2;
        }
    }
fail:
    if (st == HOP_OK)
        st = hop_error(HOP_RUNTIME, "plan: failed at %d", pc);
    f->sp = 0;
    return st;
}

/* --------------------------------------------------------------- results */

static bool
same_geometry(const hop_tensor *a, const hop_tensor *b)
{
    if (a->data != b->data || a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->sizes[d] != b->sizes[d] || (a->sizes[d] != 1 && a->strides[d] != b->strides[d]))
            return false;
    return true;
}

static hop_status
result(hop__frame *f, size_t j, hop_tensor **out)
{
    const hop_plan *p = f->plan;
    const hop__output *v = &p->outputs[j];
    if (v->kind != HOP__O_TENSOR) {
        int64_t x = v->kind == HOP__O_CONST ? v->value : f->regs[v->id];
        *out = hop_tensor_from_data(HOP_I64, 0, NULL, &x);
        return *out ? HOP_OK : hop_error_code();
    }
    const hop_tensor *h = &f->slots[v->id];
    hop_tensor *own = f->owner[v->id];
    /* A late tensor the frame keeps: the caller gets it (the frame lets go
     * of it, so no later run writes it), or a copy when its storage, grown
     * for an earlier run, holds more than twice what the result needs. */
    int32_t late = own && f->nkept ? hop__late_find(f, own) : -1;
    if (late >= 0) {
        int64_t need = hop_tensor_numel(own) * (int64_t)hop_dtype_size(own->dtype);
        if ((int64_t)hop_storage_nbytes(own->storage) > 2 * need + 4096)
            own = NULL;
    }
    if (own && own != f->block) {
        if (same_geometry(h, own) && p->outslots[j] == v->id && f->owned[v->id]) {
            /* A root output tensor: the caller gets it, and the frame keeps
             * its own reference to reuse it once the caller is done. */
            *out = hop_tensor_retain(own);
            f->owned[v->id] = 0;
            f->recycle[j] = own;
        } else if (same_geometry(h, own)) {
            *out = hop_tensor_retain(own);
        } else {
            *out = hop_tensor_view(own, h->rank, h->sizes, h->strides, h->offset);
        }
        if (*out && late >= 0)
            hop__late_forget(f, late);
        return *out ? HOP_OK : hop_error_code();
    }
    hop_tensor *t = hop_tensor_empty(h->dtype, h->rank, h->sizes);
    if (t == NULL)
        return hop_error_code();
    hop_status st = hop__copy_tensor(t, h);
    if (st != HOP_OK) {
        hop_tensor_release(t);
        return st;
    }
    *out = t;
    return HOP_OK;
}

static hop_status
result_into(hop__frame *f, size_t j, hop_tensor *dst)
{
    const hop_plan *p = f->plan;
    const hop__output *v = &p->outputs[j];
    if (v->kind != HOP__O_TENSOR) {
        int64_t x = v->kind == HOP__O_CONST ? v->value : f->regs[v->id];
        hop_tensor src;
        hop__header(&src, NULL, HOP_I64, 0, NULL, NULL, &x);
        if (hop_tensor_numel(dst) != 1)
            return hop_error(HOP_SHAPE,
                             "hop_plan_run_into: output %zu (%s) is a SymInt; it needs "
                             "a tensor of one element",
                             j, p->outputs[j].name);
        return hop__copy_tensor(dst, &src);
    }
    const hop_tensor *h = &f->slots[v->id];
    if (h->data == dst->data && same_geometry(h, dst))
        return HOP_OK;
    bool ok = h->rank == dst->rank;
    for (int d = 0; d < h->rank && ok; d++)
        ok = h->sizes[d] == dst->sizes[d];
    if (!ok || h->dtype != dst->dtype) {
        hop__ttext a, b;
        return hop_error(h->dtype != dst->dtype ? HOP_DTYPE : HOP_SHAPE,
                         "hop_plan_run_into: output %zu (%s) is %s but the result is %s", j,
                         p->outputs[j].name, hop__tensor_text(&a, dst), hop__tensor_text(&b, h));
    }
    return hop__copy_tensor(dst, h);
}

/* The plan keeps one idle frame, taken and given back with an atomic
 * exchange, so consecutive runs reuse it and concurrent runs each get their
 * own. */
static hop__frame *
frame_take(hop_plan *p)
{
    hop__frame *f = atomic_exchange(&p->idle, NULL);
    return f ? f : hop__frame_new(p);
}

static void
frame_put(hop_plan *p, hop__frame *f)
{
    hop__frame *expect = NULL;
    if (!atomic_compare_exchange_strong(&p->idle, &expect, f))
        hop__frame_free(f);
}

static hop_status
run(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs, hop_tensor **outputs,
    hop_tensor *const *into, size_t noutputs, const hop_run_options *opts)
{
    const char *fn = into ? "hop_plan_run_into" : "hop_plan_run";
    if (outputs)
        for (size_t j = 0; j < noutputs; j++)
            outputs[j] = NULL;
    if (plan == NULL || (ninputs && inputs == NULL) || (noutputs && !outputs && !into))
        return hop_error(HOP_MISUSE, "%s: NULL %s", fn, plan == NULL ? "plan" : "array");
    if (ninputs != plan->ninputs) {
        char names[256];
        return hop_error(HOP_GUARD, "guard failed: expected %zu input%s (%s), got %zu",
                         plan->ninputs, plan->ninputs == 1 ? "" : "s",
                         hop__input_names(plan, names, sizeof names), ninputs);
    }
    if (noutputs != plan->noutputs)
        return hop_error(HOP_MISUSE, "%s: the plan has %zu output%s, not %zu", fn, plan->noutputs,
                         plan->noutputs == 1 ? "" : "s", noutputs);
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i] == NULL)
            return hop_error(HOP_MISUSE, "%s: input %zu (%s) is NULL", fn, i, plan->inputs[i].name);
    for (size_t j = 0; into && j < noutputs; j++)
        if (into[j] == NULL)
            return hop_error(HOP_MISUSE, "%s: output %zu is NULL", fn, j);
    hop__frame *f = frame_take(plan);
    if (f == NULL)
        return hop_error_code();
    hop__regs_init(f->regs - 1, plan->nregs);
    f->inputs = inputs;
    f->into = into;
    f->sp = 0;
    /* Interrupts from now on stop this run; earlier ones do not. */
    f->epoch = atomic_load_explicit(&plan->interrupts, memory_order_relaxed);
    atomic_store_explicit(&f->halt, 0, memory_order_relaxed);
    f->progress = opts ? opts->progress : NULL;
    f->progress_ud = opts ? opts->ud : NULL;
    f->caller = pthread_self();
    f->budget = HOP__CHECK_EVERY;
    hop_status st = hop__exec_at(f, 0);
    for (size_t j = 0; j < noutputs && st == HOP_OK; j++)
        st = into ? result_into(f, j, into[j]) : result(f, j, &outputs[j]);
    if (st != HOP_OK && outputs) {
        for (size_t j = 0; j < noutputs; j++) {
            hop_tensor_release(outputs[j]);
            outputs[j] = NULL;
        }
    }
    hop__frame_release_owned(f);
    f->inputs = NULL;
    f->into = NULL;
    frame_put(plan, f);
    return st;
}

hop_status
hop_plan_run(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs, hop_tensor **outputs,
             size_t noutputs)
{
    return run(plan, inputs, ninputs, outputs, NULL, noutputs, NULL);
}

hop_status
hop_plan_run_opts(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs, hop_tensor **outputs,
                  size_t noutputs, const hop_run_options *opts)
{
    return run(plan, inputs, ninputs, outputs, NULL, noutputs, opts);
}

hop_status
hop_plan_run_into(hop_plan *plan, hop_tensor *const *inputs, size_t ninputs,
                  hop_tensor *const *outputs, size_t noutputs)
{
    return run(plan, inputs, ninputs, NULL, outputs, noutputs, NULL);
}
