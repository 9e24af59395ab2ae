/*
 * lowering/foreign.c - foreign kernels above the runtime: recording a call in
 * a tracer (hop_tracer_call_foreign), lowering a call_foreign node to an
 * Extern instruction, and exporting a plan as a C function (an ffi closure
 * whose handler wraps the caller's buffers and runs the plan into them).
 *
 * This is the one layer that sees kernels (runtime), tracers and HOP value
 * lists (hop) and plans at once, so the typed tracing entry point lives
 * here; the tracer itself only knows call_foreign nodes by name.
 */
#include "lowering/lowering_impl.h"
#include "runtime/foreign_impl.h"

#include <inttypes.h>
#include <stdio.h>

_Static_assert(HOP__EXTERN_MAXOUT >= HOP_FOREIGN_MAX_PARAMS,
               "an Extern holds one output per parameter");

/* ------------------------------------------------------------- tracing */

static const char *
meta_text(const hop_meta *m, char *buf, size_t cap)
{
    hop_meta_print(m, buf, cap);
    return buf;
}

/* What an argument is, for messages: "a tensor f32[s0]", "an int", ... */
static const char *
arg_text(const hop_arg *a, char *buf, size_t cap)
{
    switch (a->kind) {
    case HOP_ARG_NODE:
        if (a->u.node && a->u.node->meta->kind == HOP_VALUE_TENSOR) {
            char m[128];
            snprintf(buf, cap, "a tensor %s", meta_text(&a->u.node->meta->meta, m, sizeof m));
        } else if (a->u.node && a->u.node->meta->kind == HOP_VALUE_SYM) {
            snprintf(buf, cap, "a %s",
                     hop_expr_is_bool(a->u.node->meta->sym) ? "SymBool" : "SymInt");
        } else {
            snprintf(buf, cap, "a value with no single result");
        }
        return buf;
    case HOP_ARG_INT:
        return "an int";
    case HOP_ARG_FLOAT:
        return "a float";
    case HOP_ARG_BOOL:
        return "a bool";
    case HOP_ARG_SYM:
        return hop_expr_is_bool(a->u.sym) ? "a SymBool" : "a SymInt";
    case HOP_ARG_NONE:
        return "None";
    case HOP_ARG_DTYPE:
        return "a dtype";
    case HOP_ARG_LIST:
        return "a list";
    case HOP_ARG_GRAPH:
        return "a graph";
    }
    return "?";
}

/* int: 0, bool: 1, tensor: 2, other: -1 (symbolic values by their kind). */
static int
arg_class(const hop_arg *a)
{
    switch (a->kind) {
    case HOP_ARG_INT:
        return 0;
    case HOP_ARG_BOOL:
        return 1;
    case HOP_ARG_SYM:
        return a->u.sym ? (hop_expr_is_bool(a->u.sym) ? 1 : 0) : -1;
    case HOP_ARG_NODE:
        if (a->u.node == NULL)
            return -1;
        if (a->u.node->meta->kind == HOP_VALUE_TENSOR)
            return 2;
        if (a->u.node->meta->kind == HOP_VALUE_SYM)
            return hop_expr_is_bool(a->u.node->meta->sym) ? 1 : 0;
        return -1;
    case HOP_ARG_FLOAT:
        return 3;
    default:
        return -1;
    }
}

/* Checks one graph argument against parameter i of sig (tracing and
 * lowering share it, so a graph that lowers is one that traced). */
static hop_status
check_graph_arg(const hop__sig *s, size_t i, const hop_arg *a)
{
    const hop_foreign_param *p = &s->params[i];
    char pt[128], at[160]; /* made only for a message */
#define PT hop__param_text(s, i, pt, sizeof pt)
    int c = arg_class(a);
    if (p->kind == HOP_FOREIGN_SCALAR) {
        bool ok = p->dtype == HOP_BOOL           ? c == 1
                  : hop_dtype_is_float(p->dtype) ? c == 0 || c == 3
                                                 : c == 0;
        if (!ok)
            return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes %s, got %s", s->name, i + 1,
                             PT,
                             p->dtype == HOP_BOOL           ? "a bool"
                             : hop_dtype_is_float(p->dtype) ? "a float or an int"
                                                            : "an int",
                             arg_text(a, at, sizeof at));
        return HOP_OK;
    }
    if (c != 2)
        return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes a tensor, got %s", s->name,
                         i + 1, PT, arg_text(a, at, sizeof at));
    const hop_meta *m = &a->u.node->meta->meta;
    if (m->dtype != p->dtype) {
        char mt[128];
        return hop_error(HOP_DTYPE, "%s: parameter %zu (%s) takes %s, got %s", s->name, i + 1, PT,
                         hop_dtype_name(p->dtype), meta_text(m, mt, sizeof mt));
    }
    return HOP_OK;
}

#undef PT

_Static_assert(HOP_FOREIGN_MAX_PARAMS <= 32, "hop__sig_size_uses gives one bit per parameter");

/* An int argument's value when it is a constant. */
static bool
const_int(const hop_arg *a, int64_t *out)
{
    if (a->kind == HOP_ARG_INT) {
        *out = a->u.i;
        return true;
    }
    if (a->kind == HOP_ARG_SYM)
        return hop_expr_const_value(a->u.sym, out);
    if (a->kind == HOP_ARG_NODE && a->u.node && a->u.node->meta->kind == HOP_VALUE_SYM)
        return hop_expr_const_value(a->u.node->meta->sym, out);
    return false;
}

/* A pointer's size (hop/foreign.h) checked as a call would check it, when
 * the size and the operand's sizes are constants: a call that would be
 * refused on every run is refused while tracing, with the same message.
 * Symbolic ones are checked by each call. */
static hop_status
check_graph_size(const hop__sig *s, size_t i, const hop_arg *args)
{
    int64_t ints[HOP_FOREIGN_MAX_PARAMS] = {0};
    uint32_t uses = hop__sig_size_uses(s, i);
    for (size_t k = 0; k < s->nparams; k++)
        if ((uses & (UINT32_C(1) << k)) && !const_int(&args[k], &ints[k]))
            return HOP_OK;
    const hop_meta *m = &args[i].u.node->meta->meta;
    int64_t numel = 1;
    for (int d = 0; d < m->rank; d++) {
        int64_t n;
        if (!hop_expr_const_value(m->sizes[d], &n) || __builtin_mul_overflow(numel, n, &numel))
            return HOP_OK;
    }
    char mt[128];
    return hop__sig_check_size(s, i, ints, numel, meta_text(m, mt, sizeof mt));
}

static hop_status
check_graph_args(const hop_foreign *f, const hop_arg *args, size_t nargs)
{
    const hop__sig *s = &f->sig;
    if (nargs != s->nparams || (nargs && args == NULL))
        return hop_error(HOP_INVALID, "%s: takes %zu operand%s (%s), got %zu", s->name, s->nparams,
                         s->nparams == 1 ? "" : "s", s->text, nargs);
    for (size_t i = 0; i < nargs; i++) {
        hop_status st = check_graph_arg(s, i, &args[i]);
        if (st != HOP_OK)
            return st;
    }
    for (size_t i = 0; s->sized && i < nargs; i++) {
        hop_status st = s->sizes[i] ? check_graph_size(s, i, args) : HOP_OK;
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

hop_status
hop_tracer_call_foreign(hop_tracer *t, const hop_foreign *f, const hop_arg *args, size_t nargs,
                        hop_values *outs)
{
    if (t == NULL || f == NULL || outs == NULL)
        return hop_error(HOP_MISUSE, "hop_tracer_call_foreign: NULL %s",
                         t == NULL   ? "tracer"
                         : f == NULL ? "kernel"
                                     : "output list");
    hop_status st = check_graph_args(f, args, nargs);
    if (st != HOP_OK)
        return st;
    hop_value_info metas[HOP_FOREIGN_MAX_PARAMS];
    hop_node *results[HOP_FOREIGN_MAX_PARAMS];
    size_t nouts = 0;
    for (size_t i = 0; i < nargs; i++)
        if (f->sig.params[i].kind == HOP_FOREIGN_INOUT)
            metas[nouts++] = *args[i].u.node->meta;
    /* Room for the results first: once recorded, nothing may fail. */
    size_t old = outs->n;
    for (size_t j = 0; j < nouts && st == HOP_OK; j++)
        st = hop_values_push(outs, NULL);
    if (st == HOP_OK && hop_tracer_record_foreign(t, f->sig.name, args, nargs, metas, nouts,
                                                  f->opts.side_effects ? HOP_NODE_SIDE_EFFECTS : 0,
                                                  results) == NULL)
        st = hop_error_code();
    if (st != HOP_OK) {
        outs->n = old;
        return st;
    }
    for (size_t j = 0; j < nouts; j++)
        outs->items[old + j] = results[j];
    return HOP_OK;
}

/* ------------------------------------------------------------ lowering */

static hop_status
extern_run(void *ud, const hop_rt_arg *args, size_t nargs, hop_tensor *const *outs, size_t nouts)
{
    return hop_foreign_call_into(ud, args, nargs, outs, nouts);
}

static void
extern_release(void *ud)
{
    hop__foreign_release(ud);
}

void
hop__plan_release_externs(hop_plan *p)
{
    for (hop__extern *e = p->externs; e; e = e->chain)
        if (e->release)
            e->release(e->ud);
    p->externs = NULL;
}

hop_status
hop__lower_foreign(hop_lower_ctx *cx, const hop_node *n, hop_pval **results)
{
    hop_foreign *f = hop__foreign_acquire(n->target);
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "lowering: %s calls the foreign kernel %s, which is not registered",
                         n->name, n->target);
    hop_plan *p = cx->plan;
    hop__extern *e = hop__arena_zalloc(&p->arena, sizeof *e);
    if (e == NULL) {
        hop__foreign_release(f);
        return HOP_NOMEM;
    }
    /* From here the plan holds the reference, also when lowering fails. */
    e->ud = f;
    e->release = extern_release;
    e->chain = p->externs;
    p->externs = e;
    e->name = f->sig.name;
    e->fn = extern_run;
    hop_status st = check_graph_args(f, n->args, n->nargs);
    if (st == HOP_OK && n->nouts != f->noutputs)
        st = hop_error(HOP_VERIFY, "lowering: %s has %zu outputs but %s gives %zu", n->name,
                       n->nouts, f->sig.text, f->noutputs);
    if (st != HOP_OK)
        return st;
    hop__oparg *args = hop__arena_zalloc(&p->arena, (n->nargs + 1) * sizeof *args);
    int32_t *outs = hop__arena_zalloc(&p->arena, (n->nouts + 1) * sizeof *outs);
    hop_pval *res = hop__arena_zalloc(&cx->tmp, (n->nouts + 1) * sizeof *res);
    if (args == NULL || outs == NULL || res == NULL || (e->text = hop__node_text(cx, n)) == NULL)
        return HOP_NOMEM;
    int32_t nrt = 0;
    for (size_t i = 0; i < n->nargs; i++)
        if ((st = hop__compile_oparg(cx, &n->args[i], &args[i], &nrt)) != HOP_OK)
            return st;
    e->args = args;
    e->nargs = (int32_t)n->nargs;
    e->rtbase = (int32_t)cx->nrtargs;
    cx->nrtargs += nrt;
    for (size_t j = 0; j < n->nouts; j++) {
        const hop_meta *m = &n->outs[j].meta;
        bool late = hop__meta_late(cx, m);
        const char *name = hop__note(cx, "%s[%zu]", n->name, j);
        if (name == NULL)
            return HOP_NOMEM;
        if ((st = hop__new_slot(cx, late ? HOP__S_LATE : HOP__S_BUFFER, m, name, &outs[j])) !=
            HOP_OK)
            return st;
        if (late && hop__emit(cx, HOP__OP_Alloc, outs[j], 0, 0, NULL, NULL) < 0)
            return HOP_NOMEM;
        res[j] = hop__pv_tensor(outs[j]);
    }
    e->outs = outs;
    e->nouts = (int32_t)n->nouts;
    if (hop__emit(cx, HOP__OP_Extern, n->nouts ? outs[0] : -1, (int32_t)n->nouts, 0, e, e->text) <
        0)
        return HOP_NOMEM;
    for (size_t i = 0; i < n->nargs; i++)
        if (args[i].kind == HOP__A_TENSOR && (st = hop__access(cx, args[i].slot)) != HOP_OK)
            return st;
    for (size_t j = 0; j < n->nouts; j++)
        if ((st = hop__access(cx, outs[j])) != HOP_OK)
            return st;
    *results = res;
    return HOP_OK;
}

/* -------------------------------------------------------------- exports */

typedef enum role { ROLE_INPUT, ROLE_OUTPUT, ROLE_SIZE } role;

/* How a size is found at call time: a constant, a register, or a program. */
typedef struct dimsrc {
    int64_t value;
    const hop__xprog *x; /* NULL: value */
} dimsrc;

typedef struct xtensor {
    size_t param;
    hop_dtype dtype;
    int rank;
    dimsrc dims[HOP_MAX_RANK];
} xtensor;

struct hop_export {
    hop__sig sig;
    hop_plan *plan;
    ffi_closure *closure;
    void *code;
    xtensor ins[HOP_FOREIGN_MAX_PARAMS], outs[HOP_FOREIGN_MAX_PARAMS];
    size_t nins, nouts;
    size_t size_param[HOP_FOREIGN_MAX_PARAMS]; /* per size symbol: its parameter */
    int32_t size_reg[HOP_FOREIGN_MAX_PARAMS];
    size_t nsizes;
};

/* The plan's entry symbols: the first BIND dim of each. */
typedef struct entry_sym {
    int32_t reg;
    const char *name;
    const char *input;
    int dim;
} entry_sym;

static size_t
entry_symbols(const hop_plan *p, entry_sym *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ninputs; i++)
        for (int d = 0; d < p->inputs[i].rank; d++) {
            const hop__dimcheck *c = &p->inputs[i].dims[d];
            if (c->kind != HOP__D_BIND)
                continue;
            if (n < cap)
                out[n] = (entry_sym){c->reg, c->sym, p->inputs[i].name, d};
            n++;
        }
    return n;
}

/* A size program evaluable from the entry symbols alone. */
static bool
entry_computable(const hop__xprog *x, const entry_sym *syms, size_t nsyms)
{
    for (int k = 0; k < x->nsyms; k++) {
        bool found = false;
        for (size_t s = 0; s < nsyms && !found; s++)
            found = syms[s].reg == x->regs[k];
        if (!found)
            return false;
    }
    return true;
}

static void
dim_of(dimsrc *d, const hop__xprog *x)
{
    d->x = x->is_const ? NULL : x;
    d->value = x->is_const ? x->value : 0;
}

static hop_status
export_check(hop_export *e)
{
    const hop_plan *p = e->plan;
    const hop__sig *s = &e->sig;
    entry_sym syms[HOP_FOREIGN_MAX_PARAMS];
    size_t nsyms = entry_symbols(p, syms, HOP__ARRAY_LEN(syms));
    if (nsyms > HOP__ARRAY_LEN(syms))
        return hop_error(HOP_UNSUPPORTED,
                         "hop_plan_export: the plan has %zu size symbols (at most "
                         "%zu)",
                         nsyms, HOP__ARRAY_LEN(syms));
    size_t nin = 0, nout = 0;
    for (size_t i = 0; i < s->nparams; i++)
        nin += s->params[i].kind == HOP_FOREIGN_IN, nout += s->params[i].kind == HOP_FOREIGN_INOUT;
    if (nin != p->ninputs || nout != p->noutputs) {
        char names[256];
        size_t n = 0;
        names[0] = '\0';
        for (size_t i = 0; i < p->ninputs && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                                  p->inputs[i].name);
        if (nin != p->ninputs)
            return hop_error(HOP_INVALID,
                             "hop_plan_export: the plan has %zu input%s (%s) but %s has %zu const "
                             "pointer%s",
                             p->ninputs, p->ninputs == 1 ? "" : "s", names, s->text, nin,
                             nin == 1 ? "" : "s");
        return hop_error(HOP_INVALID,
                         "hop_plan_export: the plan has %zu output%s but %s has %zu non-const "
                         "pointer%s",
                         p->noutputs, p->noutputs == 1 ? "" : "s", s->text, nout,
                         nout == 1 ? "" : "s");
    }
    bool bound[HOP_FOREIGN_MAX_PARAMS] = {false};
    for (size_t i = 0; i < s->nparams; i++) {
        const hop_foreign_param *q = &s->params[i];
        char pt[128];
        hop__param_text(s, i, pt, sizeof pt);
        if (q->kind == HOP_FOREIGN_SCALAR) {
            char list[256];
            size_t n = 0;
            list[0] = '\0';
            for (size_t k = 0; k < nsyms && n < sizeof list; k++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                      syms[k].name);
            size_t k = 0;
            while (k < nsyms && strcmp(syms[k].name, q->name) != 0)
                k++;
            if (q->dtype != HOP_I64 || k == nsyms)
                return hop_error(HOP_INVALID,
                                 "hop_plan_export: parameter %zu (%s) is no size symbol of the "
                                 "plan; scalars must be int64_t named after one (%s)",
                                 i + 1, pt, nsyms ? list : "the plan has none");
            bound[k] = true;
            e->size_param[e->nsizes] = i;
            e->size_reg[e->nsizes++] = syms[k].reg;
            continue;
        }
        if (q->size)
            return hop_error(HOP_INVALID,
                             "hop_plan_export: parameter %zu (%s) has a size; an export's sizes "
                             "come from its int64_t parameters named after the plan's size "
                             "symbols",
                             i + 1, pt);
        xtensor *xt = q->kind == HOP_FOREIGN_IN ? &e->ins[e->nins] : &e->outs[e->nouts];
        xt->param = i;
        if (q->kind == HOP_FOREIGN_IN) {
            const hop__input *in = &p->inputs[e->nins++];
            if (in->dtype != q->dtype)
                return hop_error(HOP_INVALID,
                                 "hop_plan_export: parameter %zu (%s) is %s but input %zu (%s) of "
                                 "the plan is %s",
                                 i + 1, pt, hop_dtype_name(q->dtype), e->nins - 1, in->name,
                                 hop_dtype_name(in->dtype));
            xt->dtype = in->dtype;
            xt->rank = in->rank;
            for (int d = 0; d < in->rank; d++) {
                const hop__dimcheck *c = &in->dims[d];
                if (c->kind == HOP__D_CONST)
                    xt->dims[d].value = c->value;
                else if (c->kind == HOP__D_EXPR)
                    dim_of(&xt->dims[d], c->x);
                else
                    xt->dims[d] = (dimsrc){-1 - c->reg, NULL}; /* a register */
            }
            continue;
        }
        size_t j = e->nouts++;
        const hop__output *o = &p->outputs[j];
        if (o->v.kind != HOP_PVAL_TENSOR) {
            xt->dtype = HOP_I64;
            xt->rank = 0;
        } else {
            const hop__slot *sl = &p->slots[o->v.id];
            xt->dtype = sl->dtype;
            xt->rank = sl->rank;
            for (int d = 0; d < sl->rank; d++) {
                if (!sl->sizes[d]->is_const && !entry_computable(sl->sizes[d], syms, nsyms))
                    return hop_error(HOP_UNSUPPORTED,
                                     "hop_plan_export: size %d of output %zu (%s) is %s, which is "
                                     "only known while the plan runs",
                                     d, j, o->name, sl->sizes[d]->text);
                dim_of(&xt->dims[d], sl->sizes[d]);
            }
        }
        if (xt->dtype != q->dtype)
            return hop_error(HOP_INVALID,
                             "hop_plan_export: parameter %zu (%s) is %s but output %zu (%s) of the "
                             "plan is %s",
                             i + 1, pt, hop_dtype_name(q->dtype), j, o->name,
                             hop_dtype_name(xt->dtype));
    }
    for (size_t k = 0; k < nsyms; k++) {
        if (bound[k])
            continue;
        size_t dup = 0;
        while (dup < k && strcmp(syms[dup].name, syms[k].name) != 0)
            dup++;
        if (dup < k)
            continue;
        return hop_error(HOP_INVALID,
                         "hop_plan_export: %s has no int64_t parameter for the size symbol %s "
                         "(%s.size(%d))",
                         s->text, syms[k].name, syms[k].input, syms[k].dim);
    }
    return HOP_OK;
}

/* Sizes of an exported tensor from the size registers. */
static hop_status
export_sizes(const xtensor *xt, const int64_t *regs, int64_t *sizes, int64_t *numel)
{
    *numel = 1;
    for (int d = 0; d < xt->rank; d++) {
        const dimsrc *ds = &xt->dims[d];
        hop_status st = HOP_OK;
        if (ds->x)
            st = hop__xget(ds->x, regs, &sizes[d]);
        else if (ds->value < 0)
            sizes[d] = regs[-1 - ds->value];
        else
            sizes[d] = ds->value;
        if (st != HOP_OK)
            return st;
        if (sizes[d] < 0)
            return hop_error(HOP_INVALID,
                             "exported %s: size %d of a tensor is %" PRId64 ", which is negative",
                             "function", d, sizes[d]);
        *numel *= sizes[d];
    }
    return HOP_OK;
}

static hop_tensor *
export_wrap(const hop_export *e, const xtensor *xt, const int64_t *regs, void *data)
{
    int64_t sizes[HOP_MAX_RANK], numel;
    if (export_sizes(xt, regs, sizes, &numel) != HOP_OK)
        return NULL;
    char pt[128];
    if (data == NULL && numel > 0) {
        hop_error(HOP_INVALID, "%s: parameter %zu (%s) is NULL", e->sig.name, xt->param + 1,
                  hop__param_text(&e->sig, xt->param, pt, sizeof pt));
        return NULL;
    }
    static int64_t none; /* a place for tensors of no elements */
    return hop_tensor_wrap(xt->dtype, xt->rank, sizes, NULL, data ? data : &none,
                           (size_t)numel * hop_dtype_size(xt->dtype), NULL, NULL);
}

static hop_status
export_run(hop_export *e, void **args)
{
    const hop_plan *p = e->plan;
    int64_t small[64], *regs = small;
    if (p->nregs > 64 && (regs = hop__malloc((size_t)p->nregs * sizeof *regs)) == NULL)
        return HOP_NOMEM;
    for (int32_t r = 0; r < p->nregs; r++)
        regs[r] = HOP_UNBOUND;
    for (size_t k = 0; k < e->nsizes; k++)
        regs[e->size_reg[k]] = *(const int64_t *)args[e->size_param[k]];
    hop_tensor *ins[HOP_FOREIGN_MAX_PARAMS] = {NULL}, *outs[HOP_FOREIGN_MAX_PARAMS] = {NULL};
    hop_status st = HOP_OK;
    for (size_t i = 0; i < e->nins && st == HOP_OK; i++)
        if ((ins[i] = export_wrap(e, &e->ins[i], regs, *(void **)args[e->ins[i].param])) == NULL)
            st = hop_error_code();
    for (size_t j = 0; j < e->nouts && st == HOP_OK; j++)
        if ((outs[j] = export_wrap(e, &e->outs[j], regs, *(void **)args[e->outs[j].param])) == NULL)
            st = hop_error_code();
    if (st == HOP_OK)
        st = hop_plan_run_into(e->plan, ins, e->nins, outs, e->nouts);
    for (size_t i = 0; i < e->nins; i++)
        hop_tensor_release(ins[i]);
    for (size_t j = 0; j < e->nouts; j++)
        hop_tensor_release(outs[j]);
    if (regs != small)
        hop__free(regs);
    return st;
}

static void
export_handler(ffi_cif *cif, void *ret, void **args, void *ud)
{
    hop_export *e = ud;
    hop_status st = export_run(e, args);
    if (e->sig.returns_int)
        *(ffi_sarg *)ret = (ffi_sarg)st;
}

hop_status
hop_plan_export(hop_plan *plan, const char *signature, hop_export **out)
{
    if (out)
        *out = NULL;
    if (plan == NULL || signature == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_plan_export: NULL %s",
                         plan == NULL        ? "plan"
                         : signature == NULL ? "signature"
                                             : "result");
    hop_export *e = hop__calloc(1, sizeof *e);
    if (e == NULL)
        return HOP_NOMEM;
    e->plan = plan;
    hop_status st = hop__sig_parse("export signature", signature, &e->sig);
    if (st != HOP_OK) {
        hop__free(e);
        return st;
    }
    st = export_check(e);
    if (st == HOP_OK) {
        e->closure = ffi_closure_alloc(sizeof(ffi_closure), &e->code);
        if (e->closure == NULL)
            st = hop_error(HOP_NOMEM, "hop_plan_export: ffi_closure_alloc failed");
        else if (ffi_prep_closure_loc(e->closure, &e->sig.cif, export_handler, e, e->code) !=
                 FFI_OK)
            st = hop_error(HOP_UNSUPPORTED, "hop_plan_export: libffi cannot make a closure for %s",
                           e->sig.text);
    }
    if (st != HOP_OK) {
        hop_export_free(e);
        return st;
    }
    *out = e;
    return HOP_OK;
}

void *
hop_export_fn(const hop_export *e)
{
    return e ? e->code : NULL;
}

void
hop_export_free(hop_export *e)
{
    if (e == NULL)
        return;
    if (e->closure)
        ffi_closure_free(e->closure);
    hop__sig_clear(&e->sig);
    hop__free(e);
}
