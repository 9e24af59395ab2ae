/*
 * runtime/eager.c - eager execution: operand conversion, shape inference
 * through hop_op_infer in a per-thread ShapeEnv, and hop_eager /
 * hop_eager_out / hop_view_compute.
 *
 * Shape and dtype rules are hop_op_infer's, never duplicated: each concrete
 * tensor becomes a hop_meta of constant sizes in the calling thread's
 * ShapeEnv (constants are interned, so a cache of the small ones makes the
 * common case an array lookup), and the result's constant sizes are read
 * back.  Constant decisions record no guards.  Everything else a call makes
 * in the env - the constants of sizes beyond the cache, the unbacked symbol
 * of each item or nonzero and the expressions built on it - is rolled back
 * after the call (hop_shape_env_mark/rollback), so the env's memory stays
 * flat: once warm, a call allocates nothing but the result tensor (one
 * block for header, storage and data), whatever sizes it sees.  (Truncating
 * the symbols alone left their nodes and every new constant in the env's
 * arena, a few hundred bytes a call: a new arena chunk every few dozen
 * calls, at points that depended on how many calls the thread had run, so
 * even a warm plan run could allocate.)  A thread's state is freed when the
 * thread exits (a pthread key's destructor) or by
 * hop_runtime_thread_cleanup.
 */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define SMALL 256
#define LOCAL_ITEMS 64

typedef struct tstate {
    hop_shape_env *env;
    const hop_expr *small[SMALL];
} tstate;

static _Thread_local tstate tls;

/* A thread's state is reached through tls (fast); the key only makes the
 * thread's exit free it (a pool worker, or any thread that ran an op). */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static bool exit_key_ok;

static void
free_state(tstate *s)
{
    hop_shape_env_free(s->env);
    memset(s, 0, sizeof *s);
}

static void
at_thread_exit(void *p)
{
    free_state(p);
}

static void
make_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, at_thread_exit) == 0;
}

void
hop_runtime_thread_cleanup(void)
{
    free_state(&tls);
    pthread_once(&exit_once, make_exit_key);
    if (exit_key_ok)
        pthread_setspecific(exit_key, NULL);
}

void
hop_runtime_shutdown(void)
{
    hop__pool_stop();
    hop_runtime_thread_cleanup();
}

static const hop_expr *
size_expr(hop_shape_env *env, int64_t v)
{
    if (v >= 0 && v < SMALL) {
        if (tls.small[v] == NULL)
            tls.small[v] = hop_sym_const(env, v);
        return tls.small[v];
    }
    return hop_sym_const(env, v);
}

static hop_shape_env *
thread_env(void)
{
    if (tls.env == NULL) {
        if ((tls.env = hop_shape_env_new()) == NULL)
            return NULL;
        /* Without the key (it could not be made) the state lives until
         * hop_runtime_thread_cleanup, as it always could. */
        pthread_once(&exit_once, make_exit_key);
        if (exit_key_ok)
            pthread_setspecific(exit_key, &tls);
        /* The intern table then never empties on a rollback, which would
         * free it and make the next call allocate it again. */
        if (size_expr(tls.env, 0) == NULL) {
            hop_runtime_thread_cleanup();
            return NULL;
        }
    }
    return tls.env;
}

/* Interns the small sizes of the tensor operands into the cache before the
 * call's mark, so that they outlive its rollback.  Invalid operands are
 * skipped: convert_tensor reports them. */
static hop_status
warm_small(hop_shape_env *env, const hop_rt_arg *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_rt_arg *it = &args[i];
        size_t n = 1;
        if (args[i].kind == HOP_OPND_LIST) {
            it = args[i].u.list.items;
            n = it == NULL ? 0 : args[i].u.list.n;
        }
        for (size_t k = 0; k < n; k++) {
            const hop_tensor *t = it[k].kind == HOP_OPND_TENSOR ? it[k].u.tensor : NULL;
            if (t == NULL || t->rank < 0 || t->rank > HOP_MAX_RANK)
                continue;
            for (int d = 0; d < t->rank; d++) {
                int64_t v = t->sizes[d];
                if (v >= 0 && v < SMALL && tls.small[v] == NULL && size_expr(env, v) == NULL)
                    return hop_error_code();
            }
        }
    }
    return HOP_OK;
}

/* ------------------------------------------------------------- operands */

typedef struct conv {
    const char *name;
    hop_shape_env *env;
    hop_operand *items; /* list items of every list operand */
    hop_meta *metas;    /* one per tensor, top-level and in lists */
    size_t nitems, nmetas;
} conv;

static hop_status
convert_tensor(conv *cv, const hop_rt_arg *a, hop_operand *o, size_t i)
{
    const hop_tensor *t = a->u.tensor;
    if (t == NULL)
        return hop_error(HOP_INVALID, "%s: argument %zu is a NULL tensor", cv->name, i);
    bool valid = t->rank >= 0 && t->rank <= HOP_MAX_RANK && (unsigned)t->dtype < HOP_DTYPE_COUNT &&
                 t->storage != NULL;
    for (int d = 0; valid && d < t->rank; d++)
        valid = t->sizes[d] >= 0 && t->strides[d] >= 0;
    if (!valid)
        return hop_error(HOP_INVALID, "%s: argument %zu is not a valid tensor header", cv->name, i);
    hop_meta *m = &cv->metas[cv->nmetas++];
    m->dtype = t->dtype;
    m->rank = t->rank;
    for (int d = 0; d < t->rank; d++) {
        if ((m->sizes[d] = size_expr(cv->env, t->sizes[d])) == NULL)
            return hop_error_code();
    }
    o->kind = HOP_OPND_TENSOR;
    o->u.tensor = m;
    return HOP_OK;
}

static hop_status
convert_scalar(conv *cv, const hop_rt_arg *a, hop_operand *o, size_t i, const char *where)
{
    o->kind = a->kind;
    switch (a->kind) {
    case HOP_OPND_NONE:
        break;
    case HOP_OPND_INT:
        o->u.i = a->u.i;
        break;
    case HOP_OPND_FLOAT:
        o->u.f = a->u.f;
        break;
    case HOP_OPND_BOOL:
        o->u.b = a->u.b;
        break;
    case HOP_OPND_DTYPE:
        o->u.dtype = a->u.dtype;
        break;
    case HOP_OPND_SYM:
        return hop_error(HOP_INVALID,
                         "%s: argument %zu%s is a SymInt; the runtime needs concrete values",
                         cv->name, i, where);
    default:
        return hop_error(HOP_INVALID, "%s: argument %zu%s has invalid kind %d", cv->name, i, where,
                         (int)a->kind);
    }
    return HOP_OK;
}

static hop_status
convert(conv *cv, const hop_rt_arg *a, hop_operand *o, size_t i)
{
    if (a->kind == HOP_OPND_TENSOR)
        return convert_tensor(cv, a, o, i);
    if (a->kind != HOP_OPND_LIST)
        return convert_scalar(cv, a, o, i, "");
    if (a->u.list.n > 0 && a->u.list.items == NULL)
        return hop_error(HOP_INVALID, "%s: argument %zu is a list with NULL items", cv->name, i);
    hop_operand *items = &cv->items[cv->nitems];
    cv->nitems += a->u.list.n;
    for (size_t k = 0; k < a->u.list.n; k++) {
        const hop_rt_arg *it = &a->u.list.items[k];
        hop_status st;
        char where[32];
        snprintf(where, sizeof where, " item %zu", k);
        if (it->kind == HOP_OPND_TENSOR)
            st = convert_tensor(cv, it, &items[k], i);
        else if (it->kind == HOP_OPND_LIST)
            st = hop_error(HOP_INVALID, "%s: argument %zu item %zu is a nested list", cv->name, i,
                           k);
        else
            st = convert_scalar(cv, it, &items[k], i, where);
        if (st != HOP_OK)
            return st;
    }
    o->kind = HOP_OPND_LIST;
    o->u.list.items = items;
    o->u.list.n = a->u.list.n;
    return HOP_OK;
}

static bool
const_size(const hop_expr *e, int64_t *v)
{
    return e != NULL && !hop_expr_is_bool(e) && hop_expr_const_value(e, v);
}

/* Reads the inferred result back as integers. */
static hop_status
read_result(hop__call *c)
{
    if (c->res.kind == HOP_VALUE_SYM) {
        c->sym = 0;
        if (c->info->rule == HOP_RULE_SYM_SIZE && !const_size(c->res.sym, &c->sym))
            return hop_error(HOP_RUNTIME, "%s: the result is not a constant", c->info->name);
        return HOP_OK;
    }
    if (c->op == HOP_OP_nonzero)
        return HOP_OK; /* its size comes from the data */
    for (int d = 0; d < c->res.meta.rank; d++) {
        if (!const_size(c->res.meta.sizes[d], &c->sizes[d]))
            return hop_error(HOP_RUNTIME, "%s: size %d of the result is not a constant",
                             c->info->name, d);
    }
    /* Refused here, named after the op, before a view or an allocation
     * would refuse it under the runtime function's name: plans run this
     * check too (hop_kernel_prepare), and check their views and blocks
     * with the same rule (runtime/vm.c, runtime/frame.c). */
    int64_t numel;
    return hop__check_shape(c->info->name, c->res.meta.dtype, c->res.meta.rank, c->sizes, &numel);
}

hop_status
hop__infer_call(hop__call *c, hop_op op, const hop_rt_arg *args, size_t nargs)
{
    const hop_op_info *info = hop_op_get(op);
    if (info == NULL)
        return hop_error(HOP_INVALID, "hop_eager: unknown op %d", (int)op);
    if (args == NULL && nargs > 0)
        return hop_error(HOP_MISUSE, "%s: NULL operands", info->name);
    if (nargs != (size_t)info->nargs)
        return hop_error(HOP_INVALID, "%s: expected %d operand%s, got %zu", info->name, info->nargs,
                         info->nargs == 1 ? "" : "s", nargs);
    memset(c, 0, offsetof(hop__call, sizes));
    c->op = op;
    c->info = info;
    c->args = args;
    c->nargs = nargs;

    conv cv = {info->name, thread_env(), NULL, NULL, 0, 0};
    if (cv.env == NULL)
        return hop_error_code();
    size_t nitems = 0;
    for (size_t i = 0; i < nargs; i++)
        nitems += args[i].kind == HOP_OPND_LIST ? args[i].u.list.n : 0;
    hop_operand local_items[LOCAL_ITEMS], opnds[8];
    hop_meta local_metas[LOCAL_ITEMS + 8];
    void *heap = NULL;
    if (nitems <= LOCAL_ITEMS) {
        cv.items = local_items;
        cv.metas = local_metas;
    } else {
        heap = hop__malloc(nitems * sizeof(hop_operand) + (nitems + 8) * sizeof(hop_meta));
        if (heap == NULL)
            return HOP_NOMEM;
        cv.metas = heap;
        cv.items = (hop_operand *)(cv.metas + nitems + 8);
    }

    hop_status st = warm_small(cv.env, args, nargs);
    hop_shape_env_mark(cv.env);
    for (size_t i = 0; i < nargs && st == HOP_OK; i++)
        st = convert(&cv, &args[i], &opnds[i], i);
    if (st == HOP_OK)
        st = hop_op_infer(cv.env, op, opnds, nargs, &c->res);
    if (st == HOP_OK && info->rule == HOP_RULE_COMPARE) {
        /* maximum has the plain promotion rule: the dtype to compare in;
         * it refuses complex operands, whose eq/ne compare in add's */
        bool cplx = false;
        for (size_t i = 0; i < nargs; i++)
            cplx |= opnds[i].kind == HOP_OPND_TENSOR && opnds[i].u.tensor != NULL &&
                    hop_dtype_is_complex(opnds[i].u.tensor->dtype);
        hop_value_info promo;
        st = hop_op_infer(cv.env, cplx ? HOP_OP_add : HOP_OP_maximum, opnds, nargs, &promo);
        c->promoted = promo.meta.dtype;
    }
    if (st == HOP_OK)
        st = read_result(c); /* reads the sizes before the rollback takes them */
    hop_shape_env_rollback(cv.env);
    hop__free(heap);
    return st;
}

/* ---------------------------------------------------------------- eager */

static hop_status
eager_item(const hop__call *c, hop_rt_value *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    out->kind = HOP_VALUE_SYM;
    out->i = hop__load_i64(x->data, x->dtype);
    return HOP_OK;
}

/* Runs c into a new tensor of the inferred dtype and sizes. */
static hop_status
eager_new(const hop__call *c, hop_rt_value *out)
{
    hop_tensor *t = hop_tensor_empty(c->res.meta.dtype, c->res.meta.rank, c->sizes);
    if (t == NULL)
        return hop_error_code();
    hop__kernel k;
    hop_status st = hop__kernel_prepare(&k, c, t);
    if (st != HOP_OK) {
        hop_tensor_release(t);
        return st;
    }
    hop__kernel_run(&k);
    out->kind = HOP_VALUE_TENSOR;
    out->tensor = t;
    return HOP_OK;
}

static hop_status
eager_view(const hop__call *c, hop_rt_value *out)
{
    hop_view v;
    bool needs_copy;
    hop_status st = hop__view_geometry(c, &v, &needs_copy);
    if (st != HOP_OK)
        return st;
    if (needs_copy)
        return eager_new(c, out);
    hop_tensor *t = hop_tensor_view(c->args[0].u.tensor, v.rank, v.sizes, v.strides, v.offset);
    if (t == NULL)
        return hop_error_code();
    out->kind = HOP_VALUE_TENSOR;
    out->tensor = t;
    return HOP_OK;
}

/* Whether op is a unary op whose result has the dtype of its f32 or f64
 * operand (hop_op_infer's rule for these) and one vector function per dtype
 * that the engine calls as eager_fast does (hop__vfn_unary). */
static bool
float_unary(hop_op op)
{
    switch (op) {
    case HOP_OP_neg:
    case HOP_OP_abs:
    case HOP_OP_exp:
    case HOP_OP_log:
    case HOP_OP_sin:
    case HOP_OP_cos:
    case HOP_OP_tanh:
    case HOP_OP_sqrt:
    case HOP_OP_expm1:
    case HOP_OP_log1p:
    case HOP_OP_log2:
    case HOP_OP_log10:
    case HOP_OP_exp2:
    case HOP_OP_tan:
    case HOP_OP_arctan:
    case HOP_OP_sinh:
    case HOP_OP_cosh:
    case HOP_OP_arcsin:
    case HOP_OP_arccos:
    case HOP_OP_arcsinh:
    case HOP_OP_arccosh:
    case HOP_OP_arctanh:
    case HOP_OP_cbrt:
        return true;
    default:
        return false;
    }
}

/* A quick-table entry for an (op, dtype) with no vector function: not 0,
 * which means "not looked up yet". */
static void
quick_none(int64_t n, void *out, const void *const *in, const int *inc)
{
    (void)n, (void)out, (void)in, (void)inc;
}

/*
 * The quick path's table, by arity (0 binary, 1 unary), op and dtype: the
 * vector function (hop__vfn_binary's or hop__vfn_unary's; quick_none where
 * the quick path does not apply; NULL: not looked up yet), the most
 * elements (1 + the count below HOP__GRAIN at the op's cost, at most 4096)
 * and the element size, each looked up on first use: one entry's load
 * instead of a switch over the ops, the dtype tests, two calls and a
 * switch.  fn is stored last (release) and read first (acquire, a plain
 * load on x86): a thread that sees it sees the rest; every thread computes
 * the same constants.
 */
typedef struct quick_entry {
    _Atomic(hop__vfn) fn;
    _Atomic int32_t max;
    _Atomic int32_t esize;
} quick_entry;

static quick_entry quick[2][HOP_OP_COUNT][HOP_DTYPE_COUNT];

/* Whether the quick path takes op on dtype dt: arithmetic (add, sub, mul,
 * maximum, minimum: f32, f64, i32, i64; div: f32, f64) or float_unary on
 * f32 and f64, whose results have the operands' dtype and sizes
 * (hop_op_infer says so for these). */
static bool
quick_takes(hop_op op, hop_dtype dt, bool unary)
{
    bool fl = dt == HOP_F32 || dt == HOP_F64;
    if (unary)
        return fl && float_unary(op);
    switch (op) {
    case HOP_OP_add:
    case HOP_OP_sub:
    case HOP_OP_mul:
    case HOP_OP_maximum:
    case HOP_OP_minimum:
        return fl || dt == HOP_I32 || dt == HOP_I64;
    case HOP_OP_div:
        return fl;
    default:
        return false;
    }
}

static __attribute__((noinline)) hop__vfn
quick_lookup(quick_entry *e, hop_op op, hop_dtype dt, bool unary)
{
    hop__vfn fn = NULL;
    if (quick_takes(op, dt, unary))
        fn = unary ? hop__vfn_unary(op, dt) : hop__vfn_binary(op, dt);
    if (fn == NULL)
        fn = quick_none;
    int cost = hop_op_get(op)->cost;
    int64_t most = cost > 0 ? (HOP__GRAIN - 1) / cost : 4096;
    atomic_store_explicit(&e->max, 1 + (int32_t)(most < 4096 ? most : 4096), memory_order_relaxed);
    atomic_store_explicit(&e->esize, (int32_t)hop_dtype_size(dt), memory_order_relaxed);
    atomic_store_explicit(&e->fn, fn, memory_order_release);
    return fn;
}

/* The quick path's result of a's dtype and sizes (n elements): in spare's
 * block (hop__tensor_recycle) or new; NULL on error. */
static inline hop_tensor *
quick_result(const quick_entry *e, const hop_tensor *a, int64_t n, hop_tensor *spare)
{
    if (spare == NULL)
        return hop__tensor_empty_checked(a->dtype, a->rank, a->sizes, n);
    size_t esize = (size_t)atomic_load_explicit(&e->esize, memory_order_relaxed);
    return hop__tensor_recycle(spare, a->dtype, a->rank, a->sizes, n, esize);
}

/*
 * The common eager call from Python - arithmetic on two dense tensors of one
 * dtype and one shape, or a float function of one dense f32 or f64 tensor
 * (np.sin(a)), small enough not to go to the pool - skips shape inference
 * and the engine's setup: its result has the operands' dtype and sizes
 * (quick_takes), and one call of the vector function computes it, as the
 * engine does for one flat run of operands in the dtype the function reads
 * (elementwise.c's direct run) on one task (less work than a piece worth a
 * thread, HOP__GRAIN).  Anything else (or an op without a vector function
 * for the dtype) takes the general path, which also reports every operand
 * error.  b NULL: a unary op on a.  The result is new, or spare's block
 * (spare not NULL: hop__tensor_recycle).  *done false and NULL when it does
 * not apply (spare untouched); else *done and the result, NULL with the
 * error set.
 */
static inline __attribute__((always_inline)) hop_tensor *
eager_dense(hop_op op, const hop_tensor *a, const hop_tensor *b, hop_tensor *spare, bool *done)
{
    *done = false;
    bool unary = b == NULL;
    if (unary)
        b = a;
    if (a == NULL || a->dtype != b->dtype || a->rank != b->rank || a->rank < 0 ||
        a->rank > HOP_MAX_RANK || (unsigned)op >= HOP_OP_COUNT ||
        (unsigned)a->dtype >= HOP_DTYPE_COUNT)
        return NULL;
    quick_entry *e = &quick[unary][op][a->dtype];
    hop__vfn fn = atomic_load_explicit(&e->fn, memory_order_acquire);
    if (__builtin_expect(fn == NULL, 0))
        fn = quick_lookup(e, op, a->dtype, unary);
    if (fn == quick_none)
        return NULL;
    /* Non-negative sizes whose product is at most 4096 pass
     * hop__check_shape, so the result is allocated without it; a header
     * the general path would call invalid goes there for its error.  Both
     * dense (contiguous from the first element, C order: checked in the
     * same walk). */
    int64_t n = 1;
    for (int d = a->rank - 1; d >= 0; d--) {
        int64_t size = a->sizes[d];
        if (size != b->sizes[d] || size < 0 ||
            (size != 1 && (a->strides[d] != n || b->strides[d] != n)) ||
            __builtin_mul_overflow(n, size, &n))
            return NULL;
    }
    if (n >= atomic_load_explicit(&e->max, memory_order_relaxed))
        return NULL;
    *done = true;
    hop_tensor *t = quick_result(e, a, n, spare);
    if (t == NULL)
        return NULL;
    const void *in[2] = {a->data, b->data};
    static const int inc[2] = {1, 1};
    fn(n, t->data, in, inc);
    return t;
}

bool
hop_eager_quick(hop_op op, const hop_tensor *a, const hop_tensor *b, hop_tensor **out)
{
    bool done;
    *out = eager_dense(op, a, b, NULL, &done);
    return done;
}

bool
hop_eager_quick_spare(hop_op op, const hop_tensor *a, const hop_tensor *b, hop_tensor *spare,
                      hop_tensor **out)
{
    bool done;
    *out = eager_dense(op, a, b, spare, &done);
    return done;
}

/* eager_dense's tensor-and-scalar form (hop_eager_quick_scalar): the
 * scalar converted to a's dtype as the general path's elementwise engine
 * converts a scalar operand (hop__ew_init), then read with increment 0. */
static hop_tensor *
eager_scalar(hop_op op, const hop_tensor *a, const hop_rt_arg *s, bool s_first, hop_tensor *spare,
             bool *done)
{
    *done = false;
    if (a == NULL || s == NULL || a->rank < 0 || a->rank > HOP_MAX_RANK ||
        (unsigned)op >= HOP_OP_COUNT)
        return NULL;
    hop_dtype dt = a->dtype;
    bool fl = dt == HOP_F32 || dt == HOP_F64;
    if (!(fl || dt == HOP_I32 || dt == HOP_I64) ||
        !(s->kind == HOP_OPND_INT || (fl && s->kind == HOP_OPND_FLOAT)))
        return NULL;
    quick_entry *e = &quick[0][op][dt];
    hop__vfn fn = atomic_load_explicit(&e->fn, memory_order_acquire);
    if (__builtin_expect(fn == NULL, 0))
        fn = quick_lookup(e, op, dt, false);
    if (fn == quick_none)
        return NULL;
    int64_t n = 1;
    for (int d = a->rank - 1; d >= 0; d--) {
        int64_t size = a->sizes[d];
        if (size < 0 || (size != 1 && a->strides[d] != n) || __builtin_mul_overflow(n, size, &n))
            return NULL;
    }
    if (n >= atomic_load_explicit(&e->max, memory_order_relaxed))
        return NULL;
    *done = true;
    hop_tensor *t = quick_result(e, a, n, spare);
    if (t == NULL)
        return NULL;
    _Alignas(8) unsigned char v[8];
    if (s->kind == HOP_OPND_FLOAT)
        hop__convert(1, v, dt, &s->u.f, HOP_F64, 1);
    else
        hop__convert(1, v, dt, &s->u.i, HOP_I64, 1);
    const void *in[2] = {s_first ? (const void *)v : a->data, s_first ? a->data : (const void *)v};
    const int inc[2] = {!s_first, s_first};
    fn(n, t->data, in, inc);
    return t;
}

bool
hop_eager_quick_scalar(hop_op op, const hop_tensor *a, const hop_rt_arg *s, bool s_first,
                       hop_tensor *spare, hop_tensor **out)
{
    bool done;
    *out = eager_scalar(op, a, s, s_first, spare, &done);
    return done;
}

/* eager_dense on hop_eager's operands: false when it does not apply;
 * *st is the outcome when it does. */
static bool
eager_fast(hop_status *st, hop_op op, const hop_rt_arg *args, size_t nargs, hop_rt_value *out)
{
    if (args == NULL || nargs < 1 || nargs > 2 || args[0].kind != HOP_OPND_TENSOR ||
        args[nargs - 1].kind != HOP_OPND_TENSOR || args[nargs - 1].u.tensor == NULL)
        return false;
    bool done;
    hop_tensor *t =
        eager_dense(op, args[0].u.tensor, nargs == 1 ? NULL : args[1].u.tensor, NULL, &done);
    if (!done)
        return false;
    if (t == NULL) {
        *st = hop_error_code();
        return true;
    }
    out->kind = HOP_VALUE_TENSOR;
    out->tensor = t;
    *st = HOP_OK;
    return true;
}

/* hop_eager past the fast path: inference, then the op's family.  Apart,
 * so that the fast path's caller does not set up this one's frame (a
 * hop__call and the kernel's state: ~2 KB of stack). */
static __attribute__((noinline)) hop_status
eager_general(hop_op op, const hop_rt_arg *args, size_t nargs, hop_rt_value *out)
{
    hop__call c;
    hop_status st = hop__infer_call(&c, op, args, nargs);
    if (st != HOP_OK)
        return st;
    switch (c.info->family) {
    case HOP_KF_VIEW:
        return eager_view(&c, out);
    case HOP_KF_SCALAR:
        if (c.op == HOP_OP_item)
            return eager_item(&c, out);
        out->kind = HOP_VALUE_SYM;
        out->i = c.sym;
        return HOP_OK;
    case HOP_KF_INDEX:
        return hop__index_eager(&c, out);
    default:
        return eager_new(&c, out);
    }
}

hop_status
hop_eager(hop_op op, const hop_rt_arg *args, size_t nargs, hop_rt_value *out)
{
    if (out == NULL)
        return hop_error(HOP_MISUSE, "hop_eager: out is NULL");
    out->kind = HOP_VALUE_NONE;
    out->tensor = NULL;
    out->i = 0;
    hop_status fast;
    if (eager_fast(&fast, op, args, nargs, out))
        return fast;
    return eager_general(op, args, nargs, out);
}

hop_tensor *
hop_eager_tensor(hop_op op, const hop_rt_arg *args, size_t nargs)
{
    hop_rt_value v;
    if (hop_eager(op, args, nargs, &v) != HOP_OK)
        return NULL;
    if (v.kind != HOP_VALUE_TENSOR) {
        hop_error(HOP_INVALID, "%s: gives an int, not a tensor; use hop_eager",
                  hop_op_get(op)->name);
        return NULL;
    }
    return v.tensor;
}

hop_status
hop_eager_out(hop_op op, const hop_rt_arg *args, size_t nargs, hop_tensor *out)
{
    hop__call c;
    hop_status st = hop__infer_call(&c, op, args, nargs);
    if (st != HOP_OK)
        return st;
    hop__kernel k;
    if ((st = hop__kernel_prepare(&k, &c, out)) != HOP_OK)
        return st;
    hop__kernel_run(&k);
    return HOP_OK;
}

hop_status
hop_view_compute(hop_op op, const hop_rt_arg *args, size_t nargs, hop_view *out)
{
    if (out == NULL)
        return hop_error(HOP_MISUSE, "hop_view_compute: out is NULL");
    hop__call c;
    hop_status st = hop__infer_call(&c, op, args, nargs);
    if (st != HOP_OK)
        return st;
    if (c.info->family != HOP_KF_VIEW)
        return hop_error(HOP_INVALID, "%s: not a view op", c.info->name);
    bool needs_copy;
    if ((st = hop__view_geometry(&c, out, &needs_copy)) != HOP_OK)
        return st;
    if (needs_copy) {
        const hop_tensor *x = args[0].u.tensor;
        hop__ttext tx, ts, tn;
        return hop_error(HOP_SHAPE, "reshape: cannot view %s with strides %s as %s without a copy",
                         hop__tensor_text(&tx, x), hop__sizes_text_i(&ts, x->strides, x->rank),
                         hop__sizes_text_i(&tn, c.sizes, c.res.meta.rank));
    }
    return HOP_OK;
}
