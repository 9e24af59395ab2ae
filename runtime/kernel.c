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

#include "runtime/pairwise.h"

#include <inttypes.h>
#include <stdio.h>

_Static_assert(sizeof(hop__kernel) <= HOP_KERNEL_BYTES, "hop_kernel is too small for a plan");

/* Work units per piece worth a thread (runtime.h). */
#define GRAIN HOP__GRAIN

/* ---------------------------------------------------------------- checks */

bool
hop__same_sizes(const hop_tensor *t, int rank, const int64_t *sizes)
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
    if (a->data != b->data || a->dtype != b->dtype || !hop__same_sizes(a, b->rank, b->sizes))
        return false;
    for (int d = 0; d < a->rank; d++) {
        if (a->sizes[d] != 1 && a->strides[d] != b->strides[d])
            return false;
    }
    return true;
}

static bool
overlap_ok(const hop_op_info *info, const hop_tensor *out, const hop_tensor *x)
{
    uintptr_t olo, ohi, xlo, xhi;
    if (!byte_range(out, &olo, &ohi) || !byte_range(x, &xlo, &xhi) || ohi <= xlo || xhi <= olo)
        return true;
    hop_kernel_family f = info->family;
    bool elementwise =
        f == HOP_KF_UNARY || f == HOP_KF_BINARY || f == HOP_KF_WHERE || f == HOP_KF_COPY;
    return elementwise && same_geometry(out, x);
}

static hop_status
check_overlap(const hop__call *c, const hop_tensor *out, const hop_tensor *x, size_t i)
{
    if (overlap_ok(c->info, out, x))
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
    if (out->dtype != m->dtype || !hop__same_sizes(out, m->rank, c->sizes)) {
        hop_sizes_print(m->dtype, m->rank, c->sizes, tr.s, sizeof tr.s);
        return hop_error(out->dtype != m->dtype ? HOP_DTYPE : HOP_SHAPE,
                         "%s: out is %s but the result is %s", name, hop__tensor_text(&to, out),
                         tr.s);
    }
    /* An empty out writes nothing (zeros(3, 0) has stride 0 in dim 0). */
    for (int d = 0; d < out->rank && hop_tensor_numel(out) > 0; d++) {
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

/* fdtype: the dtype fn writes (f32 for an f16 out it rounds into).  A
 * scalar operand of an op on f16 is rounded to f16 first (x * 0.1 uses
 * f16(0.1)), as NumPy's float16 loops see it. */
static void
ew_plan(hop__kernel *k, hop_tensor *out, const hop_rt_arg *args, int nin, const hop_dtype *need,
        hop__vfn fn, hop_dtype fdtype, int cost, hop_dtype opdtype)
{
    hop__ew_src src[HOP__EW_MAXIN];
    for (int i = 0; i < nin; i++) {
        ew_source(&src[i], &args[i]);
        if (src[i].data == NULL && opdtype == HOP_F16 && need[i] != HOP_F16) {
            uint16_t h;
            hop__convert(1, &h, HOP_F16, src[i].sval, src[i].dtype, 1);
            memcpy(src[i].sval, &h, sizeof h);
            src[i].dtype = HOP_F16;
        }
    }
    k->kind = HOP__K_EW;
    hop__ew_init(&k->p.ew, out->data, out->dtype, out->rank, out->sizes, out->strides, src, need,
                 nin, fn, fdtype);
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
                 1, hop__vfn_copy(out->dtype), out->dtype);
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
    ew_plan(k, out, &value, 1, &need, hop__vfn_copy(out->dtype), out->dtype, 1, out->dtype);
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

/* --------------------------------------------------------------- rebasing */

/*
 * The operand record: per argument its kind, then an int/bool/dtype value,
 * a float's bits, a list's length and items, or a tensor's dtype and rank,
 * sizes and strides; out's last.  Everything a plan depends on but the data
 * pointers, so equal records mean that only the pointers moved.
 */
typedef struct recorder {
    int64_t *w; /* NULL: compare with cmp instead of writing */
    const int64_t *cmp;
    int32_t n, cap;
    bool ok;
} recorder;

static inline void
put(recorder *r, int64_t v)
{
    if (r->n >= r->cap || (r->w == NULL && r->cmp[r->n] != v)) {
        r->ok = false;
        return;
    }
    if (r->w != NULL)
        r->w[r->n] = v;
    r->n++;
}

static void
put_tensor(recorder *r, const hop_tensor *t)
{
    put(r, (int64_t)HOP_OPND_TENSOR << 16 | (int64_t)t->dtype << 8 | t->rank);
    for (int d = 0; d < t->rank && r->ok; d++) {
        put(r, t->sizes[d]);
        put(r, t->strides[d]);
    }
}

static void
put_arg(recorder *r, const hop_rt_arg *a)
{
    int64_t bits;
    switch (a->kind) {
    case HOP_OPND_TENSOR:
        put_tensor(r, a->u.tensor);
        return;
    case HOP_OPND_LIST:
        put(r, (int64_t)HOP_OPND_LIST << 16);
        put(r, (int64_t)a->u.list.n);
        for (size_t k = 0; k < a->u.list.n && r->ok; k++)
            put_arg(r, &a->u.list.items[k]);
        return;
    case HOP_OPND_FLOAT:
        put(r, (int64_t)HOP_OPND_FLOAT << 16);
        memcpy(&bits, &a->u.f, sizeof bits);
        put(r, bits);
        return;
    case HOP_OPND_INT:
        put(r, (int64_t)HOP_OPND_INT << 16);
        put(r, a->u.i);
        return;
    case HOP_OPND_BOOL:
        put(r, (int64_t)HOP_OPND_BOOL << 16);
        put(r, a->u.b);
        return;
    case HOP_OPND_DTYPE:
        put(r, (int64_t)HOP_OPND_DTYPE << 16);
        put(r, (int64_t)a->u.dtype);
        return;
    default:
        put(r, (int64_t)a->kind << 16);
        return;
    }
}

static bool
record(recorder *r, const hop_rt_arg *args, size_t nargs, const hop_tensor *out)
{
    put(r, (int64_t)nargs);
    for (size_t i = 0; i < nargs && r->ok; i++)
        put_arg(r, &args[i]);
    if (r->ok)
        put_tensor(r, out);
    return r->ok;
}

/* Remembers what k was prepared for (the args were checked by then). */
static void
remember(hop__kernel *k, const hop_rt_arg *args, size_t nargs, const hop_tensor *out)
{
    recorder r = {k->rec, NULL, 0, HOP__K_REC, true};
    k->magic = HOP__K_MAGIC;
    k->nrec = record(&r, args, nargs, out) ? r.n : -1;
    for (size_t i = 0; i < HOP__K_NBASE; i++)
        k->base[i] = i < nargs && args[i].kind == HOP_OPND_TENSOR ? args[i].u.tensor->data : NULL;
    k->obase = out->data;
}

/* p, taken from the data at old, moved with it to now. */
static const char *
moved(const char *p, const char *old, const char *now)
{
    return p == NULL ? NULL : now + ((intptr_t)p - (intptr_t)old);
}

bool
hop__kernel_rebase(hop__kernel *k, const hop_rt_arg *args, size_t nargs, hop_tensor *out)
{
    if (k->magic != HOP__K_MAGIC || k->nrec < 0 || out == NULL || (args == NULL && nargs > 0))
        return false;
    recorder r = {NULL, k->rec, 0, k->nrec, true};
    if (!record(&r, args, nargs, out) || r.n != k->nrec)
        return false;
    /* The geometry is the same, but the new places may overlap. */
    const hop_op_info *info = hop_op_get(k->op);
    const char *now[HOP__K_NBASE] = {NULL, NULL, NULL};
    bool same = out->data == k->obase;
    for (size_t i = 0; i < nargs; i++) {
        const hop_rt_arg *a = &args[i];
        if (a->kind == HOP_OPND_TENSOR) {
            if (!overlap_ok(info, out, a->u.tensor))
                return false;
            if (i < HOP__K_NBASE) {
                now[i] = a->u.tensor->data;
                same = same && now[i] == k->base[i];
            }
        }
        for (size_t j = 0; a->kind == HOP_OPND_LIST && j < a->u.list.n; j++) {
            if (a->u.list.items[j].kind == HOP_OPND_TENSOR &&
                !overlap_ok(info, out, a->u.list.items[j].u.tensor))
                return false;
        }
    }
    if (k->kind == HOP__K_CAT) {
        /* it reads its items and out when it runs */
        k->p.cat.items = args[0].u.list.items;
        k->p.cat.out = out;
        return true;
    }
    if (same)
        return true;
    const char *onow = out->data;
    switch (k->kind) {
    case HOP__K_EW: {
        hop__ew *e = &k->p.ew;
        e->out = (char *)moved(e->out, k->obase, onow);
        for (int i = 0; i < e->nin && i < HOP__K_NBASE; i++)
            e->in[i].data = moved(e->in[i].data, k->base[i], now[i]);
        break;
    }
    case HOP__K_REDUCE:
        k->p.red.x = moved(k->p.red.x, k->base[0], now[0]);
        k->p.red.out = (char *)moved(k->p.red.out, k->obase, onow);
        break;
    case HOP__K_MATMUL:
        k->p.mm.a = moved(k->p.mm.a, k->base[0], now[0]);
        k->p.mm.b = moved(k->p.mm.b, k->base[1], now[1]);
        k->p.mm.c = (char *)moved(k->p.mm.c, k->obase, onow);
        break;
    case HOP__K_ARANGE:
        k->p.ar.out = (char *)moved(k->p.ar.out, k->obase, onow);
        break;
    case HOP__K_CAT:
    case HOP__K_NOP:
        break;
    }
    for (size_t i = 0; i < HOP__K_NBASE; i++)
        k->base[i] = now[i];
    k->obase = onow;
    return true;
}

bool
hop__kernel_at(const hop__kernel *k, const char *const *data, size_t nargs, const char *odata)
{
    if (k->magic != HOP__K_MAGIC || k->nrec < 0 || k->kind == HOP__K_CAT || odata != k->obase)
        return false;
    for (size_t i = 0; i < nargs; i++) {
        /* a tensor past the first HOP__K_NBASE has no base to compare */
        if (i < HOP__K_NBASE ? data[i] != k->base[i] : data[i] != NULL)
            return false;
    }
    return true;
}

/* ----------------------------------------------------------------- prepare */

static hop_status
prepare_plan(hop__kernel *k, const hop__call *c, hop_tensor *out)
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
        if (hop_dtype_is_complex(c->args[0].u.tensor->dtype) && !hop_dtype_is_complex(out->dtype) &&
            c->op != HOP_OP_logical_not) {
            /* abs real imag angle: a complex input, a real result */
            need[0] = c->args[0].u.tensor->dtype;
            ew_plan(k, out, c->args, 1, need, hop__vfn_complex(c->op, need[0]), out->dtype,
                    info->cost, out->dtype);
            return HOP_OK;
        }
        /* f16 computes in f32 and rounds each result back */
        need[0] = c->op == HOP_OP_logical_not ? HOP_BOOL : hop__compute_dtype(out->dtype);
        ew_plan(k, out, c->args, 1, need,
                out->dtype == HOP_F16 ? hop__vfn_unary_f16(c->op) : hop__vfn_unary(c->op, need[0]),
                c->op == HOP_OP_logical_not ? HOP_BOOL : need[0], info->cost, out->dtype);
        return HOP_OK;
    case HOP_KF_BINARY: {
        need[0] = info->rule == HOP_RULE_LOGICAL   ? HOP_BOOL
                  : info->rule == HOP_RULE_COMPARE ? hop__compute_dtype(c->promoted)
                                                   : hop__compute_dtype(out->dtype);
        need[1] = need[0];
        hop_dtype fdtype = info->rule == HOP_RULE_BINARY ? need[0] : HOP_BOOL;
        if (c->op == HOP_OP_complex) { /* two real parts in, one complex out */
            need[0] = need[1] = hop_dtype_real(out->dtype);
            ew_plan(k, out, c->args, 2, need, hop__vfn_complex(c->op, out->dtype), out->dtype, 1,
                    out->dtype);
            return HOP_OK;
        }
        /* f16 arithmetic: the f32 function an f16 result rounds from */
        hop__vfn fn = hop__vfn_binary(c->op, info->rule == HOP_RULE_BINARY ? out->dtype : need[0]);
        ew_plan(k, out, c->args, 2, need, fn, fdtype, info->cost,
                info->rule == HOP_RULE_COMPARE ? c->promoted : out->dtype);
        return HOP_OK;
    }
    case HOP_KF_WHERE:
        need[0] = HOP_BOOL;
        need[1] = need[2] = out->dtype;
        ew_plan(k, out, c->args, 3, need, hop__vfn_where(out->dtype), out->dtype, 1, out->dtype);
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

hop_status
hop__kernel_prepare(hop__kernel *k, const hop__call *c, hop_tensor *out)
{
    hop_status st = prepare_plan(k, c, out);
    if (st == HOP_OK)
        remember(k, c->args, c->nargs, out);
    return st;
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
    if (k->kind == HOP__K_MATMUL && (k->p.mm.mode == HOP__MM_DOT || n > k->p.mm.units))
        n = k->p.mm.mode == HOP__MM_DOT ? 1 : k->p.mm.units; /* hop__kernel_run shares a dot */
    return n < 1 ? 1 : n > threads ? threads : (int)n;
}

static void
task(const void *ctx, int ith, int nth)
{
    compute(ctx, ith, nth);
}

/* Float matmuls call BLAS, on one thread (hop__blas_enter).  One whose BLAS
 * calls are all at most BLAS_SERIAL multiply-adds (rows x k x m of one batch
 * matrix) skips that: OpenBLAS runs a gemm that small on the calling thread
 * whatever the count (its SMP_THRESHOLD_MIN), and with the shared OpenBLAS
 * saving and restoring its count would cost more (~60 ns) than the product
 * of two 8 x 8 matrices. */
#define BLAS_SERIAL 65536.0

static bool
uses_blas(const hop__kernel *k)
{
    const hop__matmul *mm = &k->p.mm;
    return k->kind == HOP__K_MATMUL &&
           (mm->dtype == HOP_F32 || mm->dtype == HOP_F64 || hop_dtype_is_complex(mm->dtype)) &&
           (double)mm->n * (double)mm->k * (double)mm->m > BLAS_SERIAL;
}

/* A dot product long enough to share: the pieces sum whole units of k into
 * part[u], and the caller adds the parts in order (the units depend on k
 * alone, so every thread count gives the same bits). */
typedef struct dot_job {
    const hop__matmul *mm;
    double part[64]; /* at least matmul.c's DOT_MAX_UNITS */
} dot_job;

static void
dot_task(const void *ctx, int ith, int nth)
{
    dot_job *j = (dot_job *)ctx; /* each piece writes its own parts only */
    int64_t begin, end;
    hop__split(j->mm->units, ith, nth, 1, &begin, &end);
    for (int64_t u = begin; u < end; u++)
        j->part[u] = hop__matmul_dot_unit(j->mm, u);
}

/* A full float sum or mean long enough to share (hop__reduce_chunks): pieces
 * of a round of at most SUM_PARTS chunks put their sums in part, and the
 * caller adds them in order. */
#define SUM_PARTS 256
#define SUM_PIECE 4 /* chunks a piece (~10 us) */
typedef struct sum_job {
    const hop__reduce *r;
    int64_t first, n;
    double part[SUM_PARTS];
} sum_job;

static void
sum_task(const void *ctx, int ith, int nth)
{
    sum_job *j = (sum_job *)ctx; /* each piece writes its own parts only */
    int64_t begin, end;
    hop__split(j->n, ith, nth, 1, &begin, &end);
    hop__reduce_chunk_sums(j->r, j->first + begin, j->first + end, j->part + begin);
}

static void
run_shared_sum(const hop__reduce *r, int64_t chunks)
{
    sum_job j = {.r = r};
    double total = 0;
    for (j.first = 0; j.first < chunks; j.first += SUM_PARTS) {
        j.n = chunks - j.first < SUM_PARTS ? chunks - j.first : SUM_PARTS;
        int pieces = (int)((j.n + SUM_PIECE - 1) / SUM_PIECE);
        hop__pool_run_pieces(sum_task, &j, pieces, j.n * HOP__PW_CHUNK, NULL, NULL);
        total = hop__reduce_chunks_add(r, total, j.part, j.n);
    }
    hop__reduce_chunks_store(r, total);
}

/* k, or for a matmul with operands to copy first, *kp: k on the copies
 * (hop__matmul_pack; mem: what to free after the run), or without the
 * memory for them on the operands as they are (the same values, other
 * last bits). */
static const hop__kernel *
with_copies(const hop__kernel *k, hop__kernel *kp, void *mem[2])
{
    mem[0] = mem[1] = NULL;
    if (k->kind != HOP__K_MATMUL || !(k->p.mm.pack_a || k->p.mm.pack_b))
        return k;
    *kp = *k;
    (void)hop__matmul_pack(&k->p.mm, &kp->p.mm, mem);
    return kp;
}

void
hop__kernel_run(const hop__kernel *k)
{
    hop__kernel kp;
    void *mem[2];
    if (with_copies(k, &kp, mem) == &kp) {
        hop__kernel_run(&kp); /* (kp copies nothing: once) */
        hop__free(mem[0]);
        hop__free(mem[1]);
        return;
    }
    if (k->kind != HOP__K_MATMUL && k->work < GRAIN) {
        /* one task, no BLAS, no shared dot (what the rest decides for it),
         * without asking the thread count: a small op in a plan */
        compute(k, 0, 1);
        return;
    }
    int threads = hop_runtime_threads(), n = tasks(k, threads);
    int64_t chunks = k->kind == HOP__K_REDUCE && threads > 1 ? hop__reduce_chunks(&k->p.red) : 0;
    if (chunks > 1) {
        run_shared_sum(&k->p.red, chunks);
        return;
    }
    bool blas = uses_blas(k);
    const hop__matmul *mm = &k->p.mm;
    int nd = k->kind == HOP__K_MATMUL && mm->mode == HOP__MM_DOT && mm->units > 1 && mm->units <= 64
                 ? (mm->units < threads ? (int)mm->units : threads)
                 : 1;
    if (blas || nd > 1)
        hop__blas_enter();
    if (nd > 1) {
        dot_job j = {.mm = mm};
        hop__pool_run(dot_task, &j, nd, k->work);
        double acc = 0;
        for (int64_t u = 0; u < mm->units; u++)
            acc += j.part[u];
        if (k->p.mm.dtype == HOP_F32)
            *(float *)k->p.mm.c = (float)acc;
        else
            *(double *)k->p.mm.c = acc;
        hop__blas_leave();
        return;
    }
    if (n <= 1)
        compute(k, 0, 1);
    else
        hop__pool_run(task, k, n, k->work);
    if (blas)
        hop__blas_leave();
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
    hop__kernel kp;
    void *mem[2];
    /* (each piece copies the operands; hop__kernel_run copies once) */
    const hop__kernel *kk = with_copies((const hop__kernel *)k->u.bytes, &kp, mem);
    bool blas = uses_blas(kk);
    if (blas)
        hop__blas_enter();
    compute(kk, ith, nth);
    if (blas)
        hop__blas_leave();
    hop__free(mem[0]);
    hop__free(mem[1]);
}

void
hop_kernel_run(const hop_kernel *k)
{
    hop__kernel_run((const hop__kernel *)k->u.bytes);
}

hop_status
hop_kernel_rebase(hop_kernel *k, const hop_rt_arg *args, size_t nargs, hop_tensor *out)
{
    if (k == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_kernel_rebase: %s is NULL", k == NULL ? "k" : "out");
    hop__kernel *kk = (hop__kernel *)k->u.bytes;
    if (kk->magic != HOP__K_MAGIC)
        return hop_error(HOP_MISUSE, "hop_kernel_rebase: k was not prepared");
    const char *name = hop_op_get(kk->op)->name;
    if (kk->nrec < 0)
        return hop_error(HOP_UNSUPPORTED,
                         "%s: hop_kernel_rebase: the kernel has too many operands to be rebased; "
                         "prepare it again",
                         name);
    if (hop__kernel_rebase(kk, args, nargs, out))
        return HOP_OK;
    recorder r = {NULL, kk->rec, 0, kk->nrec, true};
    if ((args != NULL || nargs == 0) && record(&r, args, nargs, out) && r.n == kk->nrec) {
        /* the same geometry in places that overlap: prepare's message */
        hop__call c = {.op = kk->op, .info = hop_op_get(kk->op), .args = args, .nargs = nargs};
        for (size_t i = 0; i < nargs; i++) {
            hop_status st = HOP_OK;
            if (args[i].kind == HOP_OPND_TENSOR)
                st = check_overlap(&c, out, args[i].u.tensor, i);
            for (size_t j = 0; args[i].kind == HOP_OPND_LIST && j < args[i].u.list.n; j++)
                if (st == HOP_OK && args[i].u.list.items[j].kind == HOP_OPND_TENSOR)
                    st = check_overlap(&c, out, args[i].u.list.items[j].u.tensor, i);
            if (st != HOP_OK)
                return st;
        }
    }
    return hop_error(HOP_INVALID,
                     "%s: hop_kernel_rebase: the operands differ from those the kernel was "
                     "prepared with in more than their data; prepare it again",
                     name);
}
