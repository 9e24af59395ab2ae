/*
 * runtime/export.c - a plan as a plain C function (hop_plan_export): an ffi
 * closure whose handler wraps the caller's buffers as tensors (no copy),
 * sizes them from the int64_t parameters named after the plan's size
 * symbols, and runs hop_plan_run_into into the output buffers.  The
 * signature is checked against the plan's inputs, outputs and symbols once,
 * when the export is made.
 */
#include "runtime/foreign_impl.h"
#include "runtime/vm_impl.h"

#include <inttypes.h>
#include <stdio.h>

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

/* The plan's next input as const pointer parameter i (text pt): its dtype
 * checked, each size a constant, a register bound on entry or an
 * expression over them. */
static hop_status
export_input(hop_export *e, const hop_foreign_param *q, size_t i, const char *pt, xtensor *xt)
{
    const hop__input *in = &e->plan->inputs[e->nins++];
    if (in->dtype != q->dtype)
        return hop_error(HOP_INVALID,
                         "hop_plan_export: parameter %zu (%s) is %s but input %zu (%s) of the "
                         "plan is %s",
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
    return HOP_OK;
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
        hop__input_names(p, names, sizeof names);
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
            hop_status st = export_input(e, q, i, pt, xt);
            if (st != HOP_OK)
                return st;
            continue;
        }
        size_t j = e->nouts++;
        const hop__output *o = &p->outputs[j];
        if (o->kind != HOP__O_TENSOR) {
            xt->dtype = HOP_I64;
            xt->rank = 0;
        } else {
            const hop__slot *sl = &p->slots[o->id];
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

/* Sizes of exported tensor xt from the size registers: each at least 0 and
 * their product (the elements of the caller's buffer) an int64, else an
 * error naming the function and the parameter. */
static hop_status
export_sizes(const hop_export *e, const xtensor *xt, const int64_t *regs, int64_t *sizes,
             int64_t *numel)
{
    *numel = 1;
    bool overflow = false, empty = false;
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
        char pt[128];
        if (sizes[d] < 0)
            return hop_error(HOP_INVALID,
                             "%s: parameter %zu (%s): size %d is %" PRId64 ", which is negative",
                             e->sig.name, xt->param + 1,
                             hop__param_text(&e->sig, xt->param, pt, sizeof pt), d, sizes[d]);
        overflow |= __builtin_mul_overflow(*numel, sizes[d], numel);
        empty |= sizes[d] == 0;
    }
    int64_t bytes;
    overflow |= __builtin_mul_overflow(*numel, (int64_t)hop_dtype_size(xt->dtype), &bytes);
    if (empty) {
        *numel = 0;
    } else if (overflow) {
        /* a byte count past int64 is no caller's buffer (2^62 x 4 wraps to 0) */
        char pt[128], shape[160];
        size_t n = (size_t)snprintf(shape, sizeof shape, "%s[", hop_dtype_name(xt->dtype));
        for (int d = 0; d < xt->rank && n < sizeof shape; d++)
            n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%" PRId64, d ? ", " : "",
                                  sizes[d]);
        return hop_error(HOP_INVALID,
                         "%s: parameter %zu (%s) would be %s], which no buffer "
                         "holds (its byte count overflows int64)",
                         e->sig.name, xt->param + 1,
                         hop__param_text(&e->sig, xt->param, pt, sizeof pt), shape);
    }
    return HOP_OK;
}

static hop_tensor *
export_wrap(const hop_export *e, const xtensor *xt, const int64_t *regs, void *data)
{
    int64_t sizes[HOP_MAX_RANK], numel;
    if (export_sizes(e, xt, regs, sizes, &numel) != HOP_OK)
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
    int64_t small[1 + 64 + 8], *raw = small; /* a register file of 64 (program.h) */
    if (p->nregs > 64 && (raw = hop__malloc(hop__regs_bytes(p->nregs))) == NULL)
        return HOP_NOMEM;
    int64_t *regs = hop__regs_init(raw, p->nregs);
    for (size_t k = 0; k < e->nsizes; k++)
        hop__reg_put(regs, e->size_reg[k], *(const int64_t *)args[e->size_param[k]]);
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
    if (raw != small)
        hop__free(raw);
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
