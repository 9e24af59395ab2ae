/*
 * runtime/kernel.c - prepared kernel calls: checking the output tensor,
 * building each family's plan, sizing the work for the pool, and running a
 * piece (ith, nth) or the whole of it.
 *
 * Everything that can fail happens in hop__kernel_prepare, after shape
 * inference: the output's dtype and sizes, its strides (no element written
 * twice), overlap with the inputs (only exact in-place elementwise is
 * allowed).  hop_kernel_compute never fails and never allocates.
 */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <stdio.h>

_Static_assert(sizeof(hop__kernel) <= HOP_KERNEL_BYTES, "hop_kernel is too small for a plan");

/* Work units per piece worth a thread (1 unit ~ one float add, so ~20 us). */
#define GRAIN 32768

/* ---------------------------------------------------------------- checks */

static bool
same_sizes(const hop_tensor *t, int rank, const int64_t *sizes)
{
    if (t->rank != rank)
        return false;
    for (int d = 0; d < rank; d++) {
        if (t->sizes[d] != sizes[d])
            return false;
    }
    return true;
}

/* The bytes [lo, hi) that t's elements occupy; false when it has none. */
static bool
byte_range(const hop_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    int64_t last = 0;
    for (int d = 0; d < t->rank; d++) {
        if (t->sizes[d] == 0)
            return false;
        last += (t->sizes[d] - 1) * t->strides[d];
    }
    size_t esz = hop_dtype_size(t->dtype);
    *lo = (uintptr_t)t->data;
    *hi = *lo + (uintptr_t)(last + 1) * esz;
    return true;
}

static bool
same_geometry(const hop_tensor *a, const hop_tensor *b)
{
    if (a->data != b->data || a->dtype != b->dtype || !same_sizes(a, b->rank, b->sizes))
        return false;
    for (int d = 0; d < a->rank; d++) {
        if (a->sizes[d] != 1 && a->strides[d] != b->strides[d])
            return false;
    }
    return true;
}

static hop_status
check_overlap(const hop__call *c, const hop_tensor *out, const hop_tensor *x, size_t i)
{
    uintptr_t olo, ohi, xlo, xhi;
    if (!byte_range(out, &olo, &ohi) || !byte_range(x, &xlo, &xhi) || ohi <= xlo || xhi <= olo)
        return HOP_OK;
    hop_kernel_family f = c->info->family;
    bool elementwise =
        f == HOP_KF_UNARY || f == HOP_KF_BINARY || f == HOP_KF_WHERE || f == HOP_KF_COPY;
    if (elementwise && same_geometry(out, x))
        return HOP_OK;
    hop__ttext to, tx;
    return hop_error(HOP_INVALID,
                     "%s: out %s overlaps argument %zu %s; only an elementwise op may write "
                     "into an input of the same geometry",
                     c->info->name, hop__tensor_text(&to, out), i, hop__tensor_text(&tx, x));
}

static hop_status
check_out(const hop__call *c, const hop_tensor *out)
{
    const char *name = c->info->name;
    hop__ttext to, tr;
    if (out == NULL)
        return hop_error(HOP_MISUSE, "%s: out is NULL", name);
    const hop_meta *m = &c->res.meta;
    if (out->dtype != m->dtype || !same_sizes(out, m->rank, c->sizes)) {
        snprintf(tr.s, sizeof tr.s, "%s", hop_dtype_name(m->dtype));
        hop__ttext ts;
        hop__sizes_text_i(&ts, c->sizes, m->rank);
        size_t len = strlen(tr.s);
        snprintf(tr.s + len, sizeof tr.s - len, "%s", ts.s);
        return hop_error(out->dtype != m->dtype ? HOP_DTYPE : HOP_SHAPE,
                         "%s: out is %s but the result is %s", name, hop__tensor_text(&to, out),
                         tr.s);
    }
    for (int d = 0; d < out->rank; d++) {
        if (out->strides[d] == 0 && out->sizes[d] > 1)
            return hop_error(HOP_INVALID,
                             "%s: out %s has stride 0 in dim %d, so its elements would be "
                             "written more than once",
                             name, hop__tensor_text(&to, out), d);
    }
    for (size_t i = 0; i < c->nargs; i++) {
        const hop_rt_arg *a = &c->args[i];
        hop_status st = HOP_OK;
        if (a->kind == HOP_OPND_TENSOR)
            st = check_overlap(c, out, a->u.tensor, i);
        for (size_t k = 0; a->kind == HOP_OPND_LIST && k < a->u.list.n && st == HOP_OK; k++) {
            if (a->u.list.items[k].kind == HOP_OPND_TENSOR)
                st = check_overlap(c, out, a->u.list.items[k].u.tensor, i);
        }
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

/* ----------------------------------------------------------------- plans */

/* An operand of an elementwise op: a tensor, or a scalar in its natural
 * dtype (int -> i64, float -> f64, bool -> bool). */
static void
ew_source(hop__ew_src *s, const hop_rt_arg *a)
{
    memset(s, 0, sizeof *s);
    switch (a->kind) {
    case HOP_OPND_TENSOR:
        s->data = a->u.tensor->data;
        s->dtype = a->u.tensor->dtype;
        s->rank = a->u.tensor->rank;
        s->sizes = a->u.tensor->sizes;
        s->strides = a->u.tensor->strides;
        break;
    case HOP_OPND_FLOAT:
        s->dtype = HOP_F64;
        memcpy(s->sval, &a->u.f, sizeof a->u.f);
        break;
    case HOP_OPND_BOOL:
        s->dtype = HOP_BOOL;
        s->sval[0] = a->u.b;
        break;
    default: /* INT */
        s->dtype = HOP_I64;
        memcpy(s->sval, &a->u.i, sizeof a->u.i);
        break;
    }
}

static void
ew_plan(hop__kernel *k, hop_tensor *out, const hop_rt_arg *args, int nin, const hop_dtype *need,
        hop__vfn fn, int cost)
{
    hop__ew_src src[HOP__EW_MAXIN];
    for (int i = 0; i < nin; i++)
        ew_source(&src[i], &args[i]);
    k->kind = HOP__K_EW;
    hop__ew_init(&k->p.ew, out->data, out->dtype, out->rank, out->sizes, out->strides, src, need,
                 nin, fn);
    k->work = k->p.ew.numel * cost;
    /* converting operands costs about as much as the op */
    for (int i = 0; i < nin; i++)
        k->work += src[i].data != NULL && src[i].dtype != need[i] ? k->p.ew.numel : 0;
}

/* Copies the strided source (x's data/dtype with the given geometry) into
 * out, elementwise in C order of out's shape. */
static void
copy_plan(hop__kernel *k, hop_tensor *out, const void *data, hop_dtype dtype, int rank,
          const int64_t *sizes, const int64_t *strides)
{
    hop__ew_src src = {data, dtype, rank, sizes, strides, {0}};
    hop_dtype need = out->dtype;
    k->kind = HOP__K_EW;
    hop__ew_init(&k->p.ew, out->data, out->dtype, out->rank, out->sizes, out->strides, &src, &need,
                 1, hop__vfn_copy(out->dtype));
    k->work = k->p.ew.numel * (dtype == need ? 1 : 2);
}

static hop_status
view_plan(hop__kernel *k, const hop__call *c, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    hop_view v;
    bool needs_copy;
    hop_status st = hop__view_geometry(c, &v, &needs_copy);
    if (st != HOP_OK)
        return st;
    size_t esz = hop_dtype_size(x->dtype);
    if (!needs_copy) {
        const char *data = (const char *)x->data + (v.offset - x->offset) * (int64_t)esz;
        copy_plan(k, out, data, x->dtype, v.rank, v.sizes, v.strides);
        return HOP_OK;
    }
    /* reshape that needs a copy: elements go in C order, so read x with its
     * own shape and write out viewed with x's shape. */
    hop_view ov;
    hop__call oc = *c;
    hop_rt_arg oarg = hop_rt_tensor(out);
    oc.args = &oarg;
    oc.res.meta.rank = x->rank;
    memcpy(oc.sizes, x->sizes, sizeof oc.sizes);
    bool out_needs_copy;
    if ((st = hop__view_geometry(&oc, &ov, &out_needs_copy)) != HOP_OK)
        return st;
    if (out_needs_copy) {
        hop__ttext to, tx;
        return hop_error(HOP_UNSUPPORTED,
                         "reshape: out %s cannot be viewed with the shape of the input %s, "
                         "which needs a copy",
                         hop__tensor_text(&to, out), hop__tensor_text(&tx, x));
    }
    hop_tensor oview;
    if ((st = hop_tensor_init_borrowed(&oview, out, ov.rank, ov.sizes, ov.strides, ov.offset)) !=
        HOP_OK)
        return st;
    copy_plan(k, &oview, x->data, x->dtype, x->rank, x->sizes, x->strides);
    return HOP_OK;
}

static hop_status
factory_plan(hop__kernel *k, const hop__call *c, hop_tensor *out)
{
    if (c->op == HOP_OP_arange) {
        k->kind = HOP__K_ARANGE;
        k->p.ar.out = out->data;
        k->p.ar.dtype = out->dtype;
        k->p.ar.stride = out->strides[0];
        k->p.ar.n = out->sizes[0];
        k->p.ar.start = c->args[0].u.i;
        k->p.ar.step = c->args[2].u.i;
        k->work = k->p.ar.n * 2;
        return HOP_OK;
    }
    hop_rt_arg value = c->op == HOP_OP_full   ? c->args[1]
                       : c->op == HOP_OP_ones ? hop_rt_int(1)
                                              : hop_rt_int(0);
    hop_dtype need = out->dtype;
    ew_plan(k, out, &value, 1, &need, hop__vfn_copy(out->dtype), 1);
    return HOP_OK;
}

static void
cat_plan(hop__kernel *k, const hop__call *c, hop_tensor *out)
{
    const hop_rt_arg *list = &c->args[0];
    hop__cat *p = &k->p.cat;
    int64_t d = c->args[1].u.i;
    int rank = out->rank; /* wraps a cat dim over rank, a stack dim over rank + 1 = out's */
    k->kind = HOP__K_CAT;
    p->stack = c->op == HOP_OP_stack;
    p->dim = (int)(d < 0 ? d + rank : d);
    p->items = list->u.list.items;
    p->n = list->u.list.n;
    p->out = out;
    p->total = 1;
    for (int i = 0; i < out->rank; i++)
        p->total *= out->sizes[i];
    k->work = p->total * 2;
}

hop_status
hop__kernel_prepare(hop__kernel *k, const hop__call *c, hop_tensor *out)
{
    const hop_op_info *info = c->info;
    if (info->family == HOP_KF_SCALAR || info->family == HOP_KF_INDEX)
        return hop_error(HOP_UNSUPPORTED,
                         "%s: has no out= form (its result depends on the data); use hop_eager",
                         info->name);
    hop_status st = check_out(c, out);
    if (st != HOP_OK)
        return st;
    memset(k, 0, offsetof(hop__kernel, p));
    k->op = c->op;
    hop_dtype need[HOP__EW_MAXIN];
    switch (info->family) {
    case HOP_KF_UNARY:
        need[0] = c->op == HOP_OP_logical_not ? HOP_BOOL : out->dtype;
        ew_plan(k, out, c->args, 1, need, hop__vfn_unary(c->op, need[0]), hop__vfn_cost(c->op));
        return HOP_OK;
    case HOP_KF_BINARY:
        need[0] = info->rule == HOP_RULE_LOGICAL   ? HOP_BOOL
                  : info->rule == HOP_RULE_COMPARE ? c->promoted
                                                   : out->dtype;
        need[1] = need[0];
        ew_plan(k, out, c->args, 2, need, hop__vfn_binary(c->op, need[0]), hop__vfn_cost(c->op));
        return HOP_OK;
    case HOP_KF_WHERE:
        need[0] = HOP_BOOL;
        need[1] = need[2] = out->dtype;
        ew_plan(k, out, c->args, 3, need, hop__vfn_where(out->dtype), 1);
        return HOP_OK;
    case HOP_KF_COPY: {
        const hop_tensor *x = c->args[0].u.tensor;
        copy_plan(k, out, x->data, x->dtype, x->rank, x->sizes, x->strides);
        return HOP_OK;
    }
    case HOP_KF_REDUCE:
        k->kind = HOP__K_REDUCE;
        hop__reduce_init(&k->p.red, c, out);
        k->work = hop_tensor_numel(c->args[0].u.tensor);
        return HOP_OK;
    case HOP_KF_MATMUL:
        k->kind = HOP__K_MATMUL;
        hop__matmul_init(&k->p.mm, c, out);
        k->work = k->p.mm.batch * k->p.mm.n * k->p.mm.m * (k->p.mm.k + 1) / 4;
        return HOP_OK;
    case HOP_KF_VIEW:
        return view_plan(k, c, out);
    case HOP_KF_CONCAT:
        cat_plan(k, c, out);
        return HOP_OK;
    case HOP_KF_FACTORY:
        return factory_plan(k, c, out);
    case HOP_KF_SCALAR:
    case HOP_KF_INDEX:
        break;
    }
    return HOP_OK;
}

/* --------------------------------------------------------------- running */

static void
compute(const hop__kernel *k, int ith, int nth)
{
    switch (k->kind) {
    case HOP__K_EW:
        hop__ew_compute(&k->p.ew, ith, nth);
        break;
    case HOP__K_REDUCE:
        hop__reduce_compute(&k->p.red, ith, nth);
        break;
    case HOP__K_MATMUL:
        hop__matmul_compute(&k->p.mm, ith, nth);
        break;
    case HOP__K_CAT:
        hop__cat_compute(&k->p.cat, ith, nth);
        break;
    case HOP__K_ARANGE:
        hop__arange_compute(&k->p.ar, ith, nth);
        break;
    case HOP__K_NOP:
        break;
    }
}

static int
tasks(const hop__kernel *k, int threads)
{
    int64_t n = k->work / GRAIN;
    if (k->kind == HOP__K_REDUCE && n > k->p.red.nout)
        n = k->p.red.nout; /* pieces split output elements */
    if (k->kind == HOP__K_MATMUL && n > k->p.mm.batch * k->p.mm.n)
        n = k->p.mm.batch * k->p.mm.n;
    return n < 1 ? 1 : n > threads ? threads : (int)n;
}

static void
task(const void *ctx, int ith, int nth)
{
    compute(ctx, ith, nth);
}

void
hop__kernel_run(const hop__kernel *k)
{
    int n = tasks(k, hop_runtime_threads());
    if (n <= 1)
        compute(k, 0, 1);
    else
        hop__pool_run(task, k, n);
}

hop_status
hop_kernel_prepare(hop_kernel *k, hop_op op, const hop_rt_arg *args, size_t nargs, hop_tensor *out)
{
    if (k == NULL)
        return hop_error(HOP_MISUSE, "hop_kernel_prepare: k is NULL");
    hop__call c;
    hop_status st = hop__infer_call(&c, op, args, nargs);
    if (st != HOP_OK)
        return st;
    hop__kernel tmp;
    if ((st = hop__kernel_prepare(&tmp, &c, out)) != HOP_OK)
        return st;
    memcpy(k->u.bytes, &tmp, sizeof tmp);
    return HOP_OK;
}

int
hop_kernel_tasks(const hop_kernel *k, int threads)
{
    return tasks((const hop__kernel *)k->u.bytes, threads < 1 ? 1 : threads);
}

void
hop_kernel_compute(const hop_kernel *k, int ith, int nth)
{
    if (nth < 1 || ith < 0 || ith >= nth)
        return;
    compute((const hop__kernel *)k->u.bytes, ith, nth);
}

void
hop_kernel_run(const hop_kernel *k)
{
    hop__kernel_run((const hop__kernel *)k->u.bytes);
}
