/*
 * hop/associative_scan.c - associative_scan(combine_fn, xs, dim, reverse):
 * torch's inclusive scan with an associative combine_fn,
 *
 *     out[0] = x[0];  out[i] = combine_fn(out[i - 1], x[i])
 *
 * along dim (from the end with reverse), for a pytree of xs scanned together.
 *
 * Tracing: combine_fn is traced once on element slices (dim removed): its
 * left operands are slices of the group `a`, its right operands of the
 * group `b`, both the xs (the node shows where each comes from:
 * `associative_scan(0, False, combine_0, (x,), (x,), (lifted...))`), and it
 * returns one element per xs, as it entered.
 *
 * Lowering: a work-efficient parallel scan in three phases over up to 16
 * chunks: each chunk scanned on its own (a parallel loop: the pool runs the
 * chunks when the work is large enough), the chunks' totals scanned in
 * order, then each chunk's elements combined with the total of the chunks
 * before it (a parallel loop again): 2n combines, n / chunks deep.  A
 * combine_fn of one add, mul, maximum or minimum runs as a kernel of this
 * file instead (hop_lower_kernel; "one-op combines" below).  Eval: the
 * sequential scan.
 *
 * Autodiff (vjp and jvp): a combine_fn of one add, mul, maximum or minimum
 * over one float xs ("autodiff" below); any other is HOP_UNSUPPORTED.
 */
#include "hop/layout.h"
#include "hop/lowering.h"
#include "hop/loop_kit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define CHUNKS 16

/* ---------------------------------------------------------------- tracing */

static hop_status
no_xs(void)
{
    return hop_error(HOP_INVALID, "associative_scan: needs at least one xs");
}

static hop_status
not_both_xs(void)
{
    return hop_error(HOP_INVALID,
                     "associative_scan: the groups a and b must both be the xs (combine_fn's "
                     "left and right operands are slices of them)");
}

static hop_status
scan_check_operands(hop_call *c)
{
    size_t na, nb;
    hop_node *const *a = hop_call_group(c, "a", &na), *const *b = hop_call_group(c, "b", &nb);
    int64_t dim = hop_call_param(c, "dim")->u.i;
    if (na == 0)
        return no_xs();
    if (na != nb || memcmp(a, b, na * sizeof *a) != 0)
        return not_both_xs();
    hop_status st = hop_prim_hop_base()->check_operands(c);
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t i = 0; i < na && st == HOP_OK; i++) {
        const hop_value_info *x = a[i]->meta;
        char what[128]; /* printed for an error only */
        int d;
        if (hop_loop_xs_dim("associative_scan", i, a[i]->name, x, dim, &d) != HOP_OK)
            return HOP_SHAPE;
        int d0 = hop_loop_dim(dim, a[0]->meta->meta.rank);
        bool eq;
        st = hop_shape_env_decide_eq(env, x->meta.sizes[d], a[0]->meta->meta.sizes[d0],
                                     "associative_scan", &eq);
        if (st == HOP_OK && !eq) {
            hop_value_info_print(x, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "associative_scan: xs %zu (%s) is %s: its size along dim "
                             "%" PRId64 " is not xs 0's",
                             i, a[i]->name, what, dim);
        }
    }
    return st;
}

/* Both operands are element slices: dim removed. */
static hop_status
scan_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    return st == HOP_OK ? hop_call_slice_inputs(c, 0, c->ninputs, hop_call_param(c, "dim")->u.i)
                        : st;
}

static hop_status
scan_check_outputs(hop_call *c)
{
    size_t na;
    hop_call_group(c, "a", &na);
    return hop_call_check_carries(c, 0, 0, na, false, "combine_fn");
}

static hop_status
scan_output_meta(hop_call *c)
{
    size_t na;
    hop_node *const *a = hop_call_group(c, "a", &na);
    c->outs = hop_calloc(na + 1, sizeof *c->outs);
    if (c->outs == NULL)
        return hop_error_code();
    for (size_t i = 0; i < na; i++)
        c->outs[i] = *a[i]->meta;
    c->nouts = na;
    return HOP_OK;
}

/* ------------------------------------------------------------- verifying */

/* combine_fn takes element slices of both groups (dim removed) and returns
 * one per xs (the outputs are the xs' shapes: dim removed too). */
static bool
element_slice(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const size_t *nslices = ud;
    (void)body;
    if (j < *nslices)
        *want = hop_value_info_drop_dim(
            want, hop_loop_dim(hop_node_param(call, "dim")->u.i, want->meta.rank));
    return true;
}

/* What tracing checks of the operands (the xs as both groups, each with
 * dim and xs 0's size along it), one output per xs with its metadata, and
 * combine_fn over element slices. */
static hop_status
scan_verify(const hop_node *call)
{
    size_t na, nb;
    const hop_arg *a = hop_node_group(call, "a", &na), *b = hop_node_group(call, "b", &nb);
    int64_t dim = hop_node_param(call, "dim")->u.i;
    if (na == 0)
        return hop_verify_error(call, no_xs());
    bool same = na == nb;
    for (size_t i = 0; i < na && same; i++)
        same = a[i].kind == HOP_ARG_NODE && b[i].kind == HOP_ARG_NODE && a[i].u.node == b[i].u.node;
    if (!same)
        return hop_verify_error(call, not_both_xs());
    const hop_expr *len0 = NULL;
    for (size_t i = 0; i < na; i++) {
        const hop_value_info *x = a[i].u.node->meta;
        int d;
        int64_t p, q;
        if (hop_loop_xs_dim("associative_scan", i, a[i].u.node->name, x, dim, &d) != HOP_OK)
            return hop_verify_error(call, HOP_SHAPE);
        const hop_expr *len = x->meta.sizes[d];
        if (len0 && len != len0 && hop_expr_const_value(len, &p) &&
            hop_expr_const_value(len0, &q) && p != q)
            return hop_verify_fail(
                call, "associative_scan: xs %zu's size along dim %" PRId64 " is not xs 0's", i,
                dim);
        len0 = len0 ? len0 : len;
    }
    if (call->nouts != na)
        return hop_verify_fail(call, "associative_scan: has %zu outputs for %zu xs",
                               (size_t)call->nouts, na);
    for (size_t i = 0; i < na; i++)
        if (!hop_value_info_compatible(a[i].u.node->meta, &call->outs[i]))
            return hop_verify_fail(call, "associative_scan: output %zu is not xs %zu's shape", i,
                                   i);
    size_t slices = 2 * na;
    return hop_verify_bodies(call, element_slice, element_slice, &slices);
}

/* --------------------------------------------------------------- lowering */

/* ------------------------------------------------------ one-op combines */

/*
 * A combine_fn that is one add, mul, maximum or minimum of its two operands
 * (cumsum, cumprod, cummax, cummin) over one xs of int32, int64, float32 or
 * float64 runs as a kernel of its own instead of the element-by-element
 * plan: each line along dim scanned in order, lines split over the pool;
 * one long line (at least SPLIT elements) is split into CHUNKS chunks in
 * three phases as above, the same chunks on any number of threads, so the
 * result does not depend on the thread count.  Integer results, and every
 * result that was not split, are the sequential scan's exactly.
 */
#define SPLIT (1 << 16)

typedef struct one_op {
    hop_op op;
    hop_dtype dtype;
    bool swapped; /* combine_fn(a, b) computes op(b, a) */
    bool reverse;
    int dim;
} one_op;

/* Whether combine_fn g over nx xs is one add, mul, maximum or minimum of
 * its two operands, all of one dtype (k: the op, the dtype, the order). */
static bool
one_op_body(const hop_graph *g, size_t nx, one_op *k)
{
    if (nx != 1 || g->nplaceholders != 2 || g->nnodes != 4 || g->output == NULL ||
        g->output->nargs != 1 || g->output->args[0].kind != HOP_ARG_NODE)
        return false;
    const hop_node *n = g->output->args[0].u.node, *a = g->first, *b = a->next;
    if (n->kind != HOP_NODE_CALL_OP || n->nargs != 2 || n->args[0].kind != HOP_ARG_NODE ||
        n->args[1].kind != HOP_ARG_NODE)
        return false;
    switch (n->op) {
    case HOP_OP_add:
    case HOP_OP_mul:
    case HOP_OP_maximum:
    case HOP_OP_minimum:
        break;
    default:
        return false;
    }
    const hop_node *l = n->args[0].u.node, *r = n->args[1].u.node;
    if (!((l == a && r == b) || (l == b && r == a)))
        return false;
    hop_dtype dt = n->meta->meta.dtype;
    if (a->meta->meta.dtype != dt || b->meta->meta.dtype != dt)
        return false;
    k->op = n->op;
    k->dtype = dt;
    k->swapped = l == b;
    return true;
}

/* one_op_body over a dtype the kernel below computes in (the autodiff
 * rules, which emit graph ops, take any float dtype: float16 too). */
static bool
one_op_combine(const hop_graph *g, size_t nx, one_op *k)
{
    if (!one_op_body(g, nx, k))
        return false;
    hop_dtype dt = k->dtype;
    return dt == HOP_I32 || dt == HOP_I64 || dt == HOP_F32 || dt == HOP_F64;
}

/* A line: len elements at stride st from p (bytes, elements). */
typedef struct line {
    const char *x;
    char *o;
    int64_t xs, os, len;
} line;

#define IADD(T, U, x, y) ((T)((U)(x) + (U)(y)))
#define IMUL(T, U, x, y) ((T)((U)(x) * (U)(y)))
#define FADD(T, U, x, y) ((x) + (y))
#define FMUL(T, U, x, y) ((x) * (y))
#define FMAX(T, U, x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) > (y) ? (x) : (y))
#define FMIN(T, U, x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (x) : (y))
#define IMAX(T, U, x, y) ((x) > (y) ? (x) : (y))
#define IMIN(T, U, x, y) ((x) < (y) ? (x) : (y))

/* combine(l, r) for one op and order: op(l, r), or op(r, l) when swapped */
#define COMBINE(OPF, T, U, sw, l, r) ((sw) ? OPF(T, U, r, l) : OPF(T, U, l, r))

/* Scans elements [from, to) of a line in scan order (index i is element
 * len-1-i with reverse), starting from the element itself at `from`, or
 * from combine(*init, x) with init. */
#define SCAN_FN(name, OPF, T, U)                                                                   \
    static void name(const line *ln, int64_t from, int64_t to, bool rev, bool sw, const T *init)   \
    {                                                                                              \
        int64_t xs = rev ? -ln->xs : ln->xs, os = rev ? -ln->os : ln->os;                          \
        const T *x = (const T *)ln->x + (rev ? ln->len - 1 - from : from) * ln->xs;                \
        T *o = (T *)ln->o + (rev ? ln->len - 1 - from : from) * ln->os;                            \
        if (from >= to)                                                                            \
            return;                                                                                \
        T acc = init ? COMBINE(OPF, T, U, sw, *init, *x) : *x;                                     \
        *o = acc;                                                                                  \
        for (int64_t i = from + 1; i < to; i++) {                                                  \
            x += xs;                                                                               \
            o += os;                                                                               \
            acc = COMBINE(OPF, T, U, sw, acc, *x);                                                 \
            *o = acc;                                                                              \
        }                                                                                          \
    }                                                                                              \
    /* out[i] = combine(*carry, out[i]) over [from, to) */                                         \
    static void name##_fix(const line *ln, int64_t from, int64_t to, bool rev, bool sw,            \
                           const T *carry)                                                         \
    {                                                                                              \
        T c = *carry;                                                                              \
        for (int64_t i = from; i < to; i++) {                                                      \
            T *o = (T *)ln->o + (rev ? ln->len - 1 - i : i) * ln->os;                              \
            *o = COMBINE(OPF, T, U, sw, c, *o);                                                    \
        }                                                                                          \
    }

/*
 * Scans LANES at a time.  A scan is a chain of combines, each waiting for the
 * one before (an add's latency: ~4 cycles an element), so LANES scans - the
 * chunks of a split line, or neighbouring lines - advance together, element
 * k of each in turn: LANES chains in flight, each the same combines in the
 * same order as alone, so the same bits.  Lane j's element k is at x + j *
 * xd + k * xs (elements; o likewise).  Lanes whose starts are a multiple of
 * 4 KiB apart (a 16M line's chunks: 4 MiB) fight over the same L1 sets, so
 * lane j first runs j * STAGGER bytes' worth of elements alone (measured on
 * 16M float32: 38 ms interleaved without the stagger, 5.4 ms with it, 14.6
 * ms one chunk after another).  acc[j] is lane j's running value before
 * its element 0 here, and after its last.
 */
#define LANES 8
#define STAGGER 512 /* bytes between neighbouring lanes, modulo 4 KiB */
_Static_assert(SPLIT / CHUNKS - CHUNKS > (LANES - 1) * (STAGGER / 4) + 1,
               "a split line's chunks hold the lanes' stagger");

#define LANES_FN(name, OPF, T, U, SW)                                                              \
    static void name(const void *xv, void *ov, const int64_t *step, int64_t m, void *accv)         \
    {                                                                                              \
        const T *x = xv;                                                                           \
        T *o = ov;                                                                                 \
        int64_t xs = step[0], os = step[1], xd = step[2], od = step[3];                            \
        T a[LANES];                                                                                \
        memcpy(a, accv, sizeof a);                                                                 \
        for (int64_t k = 0; k < m; k++, x += xs, o += os) {                                        \
            _Pragma("GCC unroll 8") for (int j = 0; j < LANES; j++)                                \
            {                                                                                      \
                a[j] = COMBINE(OPF, T, U, SW, a[j], x[j * xd]);                                    \
                o[j * od] = a[j];                                                                  \
            }                                                                                      \
        }                                                                                          \
        memcpy(accv, a, sizeof a);                                                                 \
    }

#define SCAN_TYPE(OPN, OPF, T, U)                                                                  \
    SCAN_FN(OPN, OPF, T, U)                                                                        \
    LANES_FN(OPN##_lanes, OPF, T, U, false)                                                        \
    LANES_FN(OPN##_lanes_sw, OPF, T, U, true)

#define SCAN_FNS(OPN, IOP, FOP)                                                                    \
    SCAN_TYPE(OPN##_i32, IOP, int32_t, uint32_t)                                                   \
    SCAN_TYPE(OPN##_i64, IOP, int64_t, uint64_t)                                                   \
    SCAN_TYPE(OPN##_f32, FOP, float, float)                                                        \
    SCAN_TYPE(OPN##_f64, FOP, double, double)

SCAN_FNS(add, IADD, FADD)
SCAN_FNS(mul, IMUL, FMUL)
SCAN_FNS(max, IMAX, FMAX)
SCAN_FNS(min, IMIN, FMIN)

typedef void (*scan_fn)(const line *, int64_t, int64_t, bool, bool, const void *);
typedef void (*lanes_fn)(const void *, void *, const int64_t *, int64_t, void *);

/* The scan, the fix-up and the lanes (in the combine's order sw) of one op
 * and dtype. */
static void
scan_fns(hop_op op, hop_dtype dt, bool sw, scan_fn *scan, scan_fn *fix, lanes_fn *lanes)
{
#define BY_DTYPE(TYPE, OPN, SUFFIX)                                                                \
    (dt == HOP_I32   ? (TYPE)OPN##_i32##SUFFIX                                                     \
     : dt == HOP_I64 ? (TYPE)OPN##_i64##SUFFIX                                                     \
     : dt == HOP_F32 ? (TYPE)OPN##_f32##SUFFIX                                                     \
                     : (TYPE)OPN##_f64##SUFFIX)
#define PICK(OPN)                                                                                  \
    do {                                                                                           \
        *scan = BY_DTYPE(scan_fn, OPN, );                                                          \
        *fix = BY_DTYPE(scan_fn, OPN, _fix);                                                       \
        *lanes = sw ? BY_DTYPE(lanes_fn, OPN, _lanes_sw) : BY_DTYPE(lanes_fn, OPN, _lanes);        \
    } while (0)
    if (op == HOP_OP_add)
        PICK(add);
    else if (op == HOP_OP_mul)
        PICK(mul);
    else if (op == HOP_OP_maximum)
        PICK(max);
    else
        PICK(min);
#undef PICK
#undef BY_DTYPE
}

typedef struct scan_run {
    const one_op *k;
    const hop_tensor *x;
    hop_tensor *out;
    scan_fn scan, fix;
    lanes_fn lanes;
    int64_t lines, len, chunk;                  /* chunk: elements per chunk of a split line */
    _Alignas(8) unsigned char carry[CHUNKS][8]; /* split: the total before each chunk */
} scan_run;

/* Line l of the run: the other dims in row-major order. */
static line
line_at(const scan_run *r, int64_t l)
{
    const hop_tensor *x = r->x;
    int64_t xo = 0, oo = 0;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (d == r->k->dim)
            continue;
        xo += l % x->sizes[d] * x->strides[d];
        oo += l % x->sizes[d] * r->out->strides[d];
        l /= x->sizes[d];
    }
    size_t es = hop_dtype_size(x->dtype);
    return (line){(const char *)x->data + xo * (int64_t)es, (char *)r->out->data + oo * (int64_t)es,
                  x->strides[r->k->dim], r->out->strides[r->k->dim], r->len};
}

/* Where chunk c of the split line ends (scan order). */
static int64_t
chunk_end(const scan_run *r, int c)
{
    int64_t to = (c + 1) * r->chunk;
    return to < r->len ? to : r->len;
}

/* Scan-order index i of a line: its element's offset from ln->x (or ln->o
 * with the output's stride), in elements. */
static int64_t
at(const line *ln, int64_t i, bool rev, bool out)
{
    return (rev ? ln->len - 1 - i : i) * (out ? ln->os : ln->xs);
}

/* Whether lanes d bytes apart sit in one L1 set: lanes j apart, in
 * different lines, within a line of each other modulo 4 KiB. */
static bool
same_sets(int64_t d)
{
    for (int64_t j = 1; j < LANES; j++) {
        int64_t far = j * d < 0 ? -j * d : j * d, mod = far % 4096;
        if (far >= 64 && (mod < 64 || mod > 4096 - 64))
            return true;
    }
    return false;
}

/*
 * Scans [from[j], to[j]) of line ln[j] for each lane j, LANES_FN's way when
 * the lanes' positions are evenly spaced in memory (elements apart, not
 * bytes), else one after another.  The stagger (s elements) where the lanes
 * would share L1 sets and every range is long enough for it.
 */
static void
scan_lanes(const scan_run *r, const line *ln, const int64_t *from, const int64_t *to)
{
    bool rev = r->k->reverse, sw = r->k->swapped;
    int64_t es = (int64_t)hop_dtype_size(r->x->dtype), s = STAGGER / es, m = INT64_MAX;
    int64_t dx =
        ln[1].x - ln[0].x + (at(&ln[1], from[1], rev, false) - at(ln, from[0], rev, false)) * es;
    int64_t dox =
        ln[1].o - ln[0].o + (at(&ln[1], from[1], rev, true) - at(ln, from[0], rev, true)) * es;
    if (!same_sets(dx) && !same_sets(dox))
        s = 0;
    for (int j = 0; j < LANES; j++)
        if (to[j] - from[j] <= (LANES - 1) * s + 1)
            s = 0;
    /* where each lane's element 0 of the run together is, from lane 0's x and o */
    int64_t pos[2][LANES];
    bool even = true;
    for (int j = 0; j < LANES; j++) {
        int64_t i = from[j] + j * s + 1;
        pos[0][j] = (ln[j].x - ln[0].x) / es + at(&ln[j], i, rev, false);
        pos[1][j] = (ln[j].o - ln[0].o) / es + at(&ln[j], i, rev, true);
        even = even && ((ln[j].x - ln[0].x) % es == 0 && (ln[j].o - ln[0].o) % es == 0);
        even = even && (j < 2 || (pos[0][j] - pos[0][j - 1] == pos[0][1] - pos[0][0] &&
                                  pos[1][j] - pos[1][j - 1] == pos[1][1] - pos[1][0]));
        m = to[j] - i < m ? to[j] - i : m;
    }
    if (!even || m <= 0) {
        for (int j = 0; j < LANES; j++)
            r->scan(&ln[j], from[j], to[j], rev, sw, NULL);
        return;
    }
    _Alignas(8) unsigned char acc[LANES * 8];
    for (int j = 0; j < LANES; j++) {
        int64_t i = from[j] + j * s + 1;
        r->scan(&ln[j], from[j], i, rev, sw, NULL);
        memcpy(acc + j * es, ln[j].o + at(&ln[j], i - 1, rev, true) * es, (size_t)es);
    }
    int64_t step[4] = {rev ? -ln->xs : ln->xs, rev ? -ln->os : ln->os, pos[0][1] - pos[0][0],
                       pos[1][1] - pos[1][0]};
    r->lanes(ln->x + pos[0][0] * es, ln->o + pos[1][0] * es, step, m, acc);
    for (int j = 0; j < LANES; j++)
        r->scan(&ln[j], from[j] + j * s + 1 + m, to[j], rev, sw, acc + j * es);
}

/* Lines of the run, LANES at a time (scan_lanes) while they last. */
static void
lines_piece(const void *ctx, int ith, int nth)
{
    const scan_run *r = ctx;
    int64_t l = r->lines * ith / nth, end = r->lines * (ith + 1) / nth;
    for (; l + LANES <= end; l += LANES) {
        line lns[LANES];
        int64_t from[LANES] = {0}, to[LANES];
        for (int j = 0; j < LANES; j++) {
            lns[j] = line_at(r, l + j);
            to[j] = r->len;
        }
        scan_lanes(r, lns, from, to);
    }
    for (; l < end; l++) {
        line ln = line_at(r, l);
        r->scan(&ln, 0, r->len, r->k->reverse, r->k->swapped, NULL);
    }
}

/* Split line, phase 1: the chunks scanned on their own, LANES at a time. */
static void
phase1(const void *ctx, int ith, int nth)
{
    const scan_run *r = ctx;
    line ln = line_at(r, 0);
    int c = CHUNKS * ith / nth, last = CHUNKS * (ith + 1) / nth;
    /* every chunk holds the stagger (the _Static_assert at LANES) */
    for (; c + LANES <= last; c += LANES) {
        line lns[LANES];
        int64_t from[LANES], to[LANES];
        for (int j = 0; j < LANES; j++) {
            lns[j] = ln;
            from[j] = (c + j) * r->chunk;
            to[j] = chunk_end(r, c + j);
        }
        scan_lanes(r, lns, from, to);
    }
    for (; c < last; c++)
        r->scan(&ln, c * r->chunk, chunk_end(r, c), r->k->reverse, r->k->swapped, NULL);
}

/* Phase 3: each chunk after the first fixed up with the total before it,
 * in FIX_PARTS parts of each chunk, claimed piece by piece (pool.c).  The
 * fix-up is element by element, so any pieces give the same bits; in two
 * static halves (as before), a worker descheduled on a busy machine kept
 * the caller waiting for its whole half (~3 ms at 16M float32). */
#define FIX_PARTS 4

static void
phase3(const void *ctx, int ith, int nth)
{
    const scan_run *r = ctx;
    line ln = line_at(r, 0);
    int parts = CHUNKS * FIX_PARTS;
    for (int p = parts * ith / nth, last = parts * (ith + 1) / nth; p < last; p++) {
        int c = p / FIX_PARTS, q = p % FIX_PARTS;
        int64_t from = c * r->chunk, to = chunk_end(r, c);
        if (c == 0 || from >= to)
            continue;
        r->fix(&ln, from + (to - from) * q / FIX_PARTS, from + (to - from) * (q + 1) / FIX_PARTS,
               r->k->reverse, r->k->swapped, r->carry[c]);
    }
}

/* The kernel: tensors[0] the result, tensors[1] the xs. */
static hop_status
one_op_kernel(const void *data, hop_tensor *const *t, size_t n)
{
    (void)n;
    scan_run r = {.k = data, .x = t[1], .out = t[0]};
    scan_fns(r.k->op, r.k->dtype, r.k->swapped, &r.scan, &r.fix, &r.lanes);
    r.len = r.x->sizes[r.k->dim];
    int64_t numel = hop_tensor_numel(r.x);
    if (r.len == 0 || numel == 0)
        return HOP_OK;
    r.lines = numel / r.len;
    int threads = hop_runtime_threads();
    if (r.lines > 1 || r.len < SPLIT) {
        int nth = numel < SPLIT ? 1 : (int)(r.lines < threads ? r.lines : threads);
        if (nth <= 1)
            lines_piece(&r, 0, 1);
        else
            hop_runtime_parallel_work(lines_piece, &r, nth, numel);
        return HOP_OK;
    }
    r.chunk = (r.len + CHUNKS - 1) / CHUNKS;
    hop_runtime_parallel_work(phase1, &r, threads < CHUNKS ? threads : CHUNKS, numel);
    /* phase 2: carry[c] = combine(carry[c - 1], total of chunk c - 1) */
    line ln = line_at(&r, 0);
    size_t es = hop_dtype_size(r.x->dtype);
    for (int c = 1; c < CHUNKS; c++) {
        int64_t last = c * r.chunk - 1; /* chunk c-1's last element, in scan order */
        if (last >= r.len)
            break;
        const char *total = ln.o + (r.k->reverse ? r.len - 1 - last : last) * ln.os * (int64_t)es;
        memcpy(r.carry[c], total, es);
        if (c > 1) {
            /* carry[c] = combine(carry[c-1], total): scan the pair */
            _Alignas(8) unsigned char pair[16], res[16];
            memcpy(pair, r.carry[c - 1], es);
            memcpy(pair + es, total, es);
            line two = {(const char *)pair, (char *)res, 1, 1, 2};
            r.scan(&two, 0, 2, false, r.k->swapped, NULL);
            memcpy(r.carry[c], res + es, es);
        }
    }
    hop_runtime_parallel_pieces(phase3, &r, CHUNKS * FIX_PARTS, numel);
    return HOP_OK;
}

static hop_status
one_op_lower(hop_lower_ctx *cx, const hop_node *call, one_op *k)
{
    size_t nx;
    const hop_arg *xs = hop_node_group(call, "a", &nx);
    hop_pval x, *out = hop_lower_outputs(cx, true);
    hop_status st = out == NULL ? hop_error_code() : hop_lower_arg(cx, &xs[0], &x);
    k->reverse = hop_node_param(call, "reverse")->u.b;
    k->dim = hop_loop_dim(hop_node_param(call, "dim")->u.i, xs[0].u.node->meta->meta.rank);
    hop_pval args[2] = {out ? out[0] : x, x};
    if (st == HOP_OK)
        st = hop_lower_kernel(cx, "associative_scan", one_op_kernel, k, sizeof *k, args, 2);
    return st == HOP_OK ? hop_lower_results(cx, out, 1) : st;
}

typedef struct scan_lowering {
    hop_lower_ctx *cx;
    const hop_graph *combine;
    size_t nx, n;     /* xs, passed values (a, b, lifted) */
    hop_pval *passed; /* a..., b..., lifted... */
    hop_pval *out;    /* the results, one per xs */
    int *dims;        /* per xs */
    bool reverse;
    hop_pval len;                 /* the size along dim */
    hop_pval last;                /* len - 1 */
    hop_pval nch, L;              /* chunks, and the elements of each */
    hop_pval *r1, *r2, *r3, *tmp; /* element views, per xs */
    hop_pval *pre;                /* the totals of the chunks before each */
} scan_lowering;

static const hop_pval ONE = {HOP_PVAL_CONST, -1, 1}, ZERO = {HOP_PVAL_CONST, -1, 0};

static hop_status
int_op(scan_lowering *s, hop_int_op op, hop_pval a, hop_pval b, hop_pval *out)
{
    if (a.kind == HOP_PVAL_CONST && b.kind == HOP_PVAL_CONST && op <= HOP_INT_MUL) {
        int64_t v = op == HOP_INT_ADD   ? a.value + b.value
                    : op == HOP_INT_SUB ? a.value - b.value
                                        : a.value * b.value;
        *out = (hop_pval){HOP_PVAL_CONST, -1, v};
        return HOP_OK;
    }
    return hop_lower_int(s->cx, op, a, b, out);
}

/* Element i (in scan order) of every tensor in ts along the xs' dims. */
static hop_status
elements(scan_lowering *s, const hop_pval *ts, hop_pval i, hop_pval *rows)
{
    hop_pval at = i;
    hop_status st = s->reverse ? int_op(s, HOP_INT_SUB, s->last, i, &at) : HOP_OK;
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_select_dim(s->cx, ts[j], s->dims[j], at, &rows[j]);
    return st;
}

/* dst = combine(left, right), written into dst (its destinations). */
static hop_status
combine(scan_lowering *s, const hop_pval *left, const hop_pval *right, const hop_pval *dst)
{
    hop_pval *in = hop_lower_pvals(s->cx, s->n), *got = hop_lower_pvals(s->cx, s->nx);
    if (in == NULL || got == NULL)
        return hop_error_code();
    for (size_t k = 0; k < s->n; k++)
        in[k] = k < s->nx ? left[k] : k < 2 * s->nx ? right[k - s->nx] : s->passed[k];
    hop_status st = hop_lower_inline(s->cx, s->combine, in, s->n, dst, got, s->nx);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        if (got[j].id != dst[j].id)
            st = hop_lower_copy(s->cx, dst[j], got[j]);
    return st;
}

/* The bounds [start, end) of chunk c of size L: end = min(start + L, len). */
static hop_status
chunk(scan_lowering *s, hop_pval c, hop_pval L, hop_pval *start, hop_pval *end)
{
    hop_status st = int_op(s, HOP_INT_MUL, c, L, start);
    if (st == HOP_OK)
        st = int_op(s, HOP_INT_ADD, *start, L, end);
    return st == HOP_OK ? hop_lower_int(s->cx, HOP_INT_MIN, *end, s->len, end) : st;
}

/* The chunks: nch = min(CHUNKS, len), L = ceil(len / nch) (len 0: nothing
 * runs); pre, the totals of the chunks before each, [CHUNKS, element...]. */
static hop_status
lower_chunks(scan_lowering *s, const hop_node *call)
{
    hop_lower_ctx *cx = s->cx;
    hop_pval cnt;
    hop_status st = int_op(s, HOP_INT_SUB, s->len, ONE, &s->last);
    if (st == HOP_OK)
        st =
            hop_lower_int(cx, HOP_INT_MIN, s->len, (hop_pval){HOP_PVAL_CONST, -1, CHUNKS}, &s->nch);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_MAX, s->nch, ONE, &cnt);
    if (st == HOP_OK)
        st = int_op(s, HOP_INT_ADD, s->len, cnt, &s->L);
    if (st == HOP_OK)
        st = int_op(s, HOP_INT_SUB, s->L, ONE, &s->L);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_FLOORDIV, s->L, cnt, &s->L);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++) {
        hop_value_info p = call->outs[j];
        p.meta.sizes[s->dims[j]] = hop_sym_const(call->graph->env, CHUNKS);
        if (p.meta.sizes[s->dims[j]] == NULL)
            st = hop_error_code();
        /* rows along dim 0: the chunk index first */
        const hop_expr *d0 = p.meta.sizes[s->dims[j]];
        memmove(p.meta.sizes + 1, p.meta.sizes, (size_t)s->dims[j] * sizeof *p.meta.sizes);
        p.meta.sizes[0] = d0;
        if (st == HOP_OK)
            st = hop_lower_tensor(cx, &p, true, &s->pre[j]);
    }
    return st;
}

/* Phase 1, chunk by chunk (independent): out[s] = x[s]; out[i] =
 * combine(out[i - 1], x[i]) for the chunk's other elements. */
static hop_status
lower_phase1(scan_lowering *s)
{
    hop_lower_ctx *cx = s->cx;
    hop_pval c, k, start, end, cnt, i, ok;
    hop_status st = hop_lower_parallel_loop_begin(cx, s->nch, &c);
    if (st == HOP_OK)
        st = chunk(s, c, s->L, &start, &end);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_LT, start, s->len, &ok);
    if (st == HOP_OK)
        st = hop_lower_if(cx, ok);
    if (st == HOP_OK && (st = elements(s, s->out, start, s->r1)) == HOP_OK &&
        (st = elements(s, s->passed + s->nx, start, s->r2)) == HOP_OK)
        for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
            st = hop_lower_copy(cx, s->r1[j], s->r2[j]);
    if (st == HOP_OK && (st = int_op(s, HOP_INT_SUB, end, start, &cnt)) == HOP_OK)
        st = int_op(s, HOP_INT_SUB, cnt, ONE, &cnt);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, cnt, &k);
    if (st == HOP_OK && (st = int_op(s, HOP_INT_ADD, start, k, &i)) == HOP_OK &&
        (st = elements(s, s->out, i, s->r1)) == HOP_OK &&
        (st = int_op(s, HOP_INT_ADD, i, ONE, &i)) == HOP_OK &&
        (st = elements(s, s->passed + s->nx, i, s->r2)) == HOP_OK &&
        (st = elements(s, s->out, i, s->r3)) == HOP_OK)
        st = combine(s, s->r1, s->r2, s->r3);
    if (st == HOP_OK && (st = hop_lower_loop_end(cx)) == HOP_OK &&
        (st = hop_lower_end_if(cx)) == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st;
}

/* Phase 2, in order: pre[c] = the total of chunks 0..c-1. */
static hop_status
lower_phase2(scan_lowering *s)
{
    hop_lower_ctx *cx = s->cx;
    hop_pval c, start, end, ok, prev, lastprev;
    hop_status st = hop_lower_loop_begin(cx, s->nch, &c);
    if (st == HOP_OK)
        st = chunk(s, c, s->L, &start, &end);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_LT, ZERO, c, &ok); /* c >= 1 */
    if (st == HOP_OK)
        st = hop_lower_if(cx, ok);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_LT, start, s->len, &ok); /* chunk c is not empty */
    if (st == HOP_OK)
        st = hop_lower_if(cx, ok);
    if (st == HOP_OK && (st = int_op(s, HOP_INT_SUB, start, ONE, &lastprev)) == HOP_OK)
        st = elements(s, s->out, lastprev, s->r1); /* chunk c-1's own total */
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_select(cx, s->pre[j], c, &s->r3[j]);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_LT, ONE, c, &ok); /* c >= 2: combine with pre[c-1] */
    if (st == HOP_OK)
        st = hop_lower_if(cx, ok);
    if (st == HOP_OK)
        st = int_op(s, HOP_INT_SUB, c, ONE, &prev);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_select(cx, s->pre[j], prev, &s->r2[j]);
    if (st == HOP_OK)
        st = combine(s, s->r2, s->r1, s->r3);
    if (st == HOP_OK)
        st = hop_lower_else(cx);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_copy(cx, s->r3[j], s->r1[j]);
    if (st == HOP_OK && (st = hop_lower_end_if(cx)) == HOP_OK &&
        (st = hop_lower_end_if(cx)) == HOP_OK && (st = hop_lower_end_if(cx)) == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st;
}

/* Phase 3, chunk by chunk: out[i] = combine(pre[c], out[i]). */
static hop_status
lower_phase3(scan_lowering *s, const hop_node *call)
{
    hop_lower_ctx *cx = s->cx;
    hop_pval c, k, start, end, cnt, i, ok;
    hop_status st = hop_lower_parallel_loop_begin(cx, s->nch, &c);
    if (st == HOP_OK)
        st = chunk(s, c, s->L, &start, &end);
    if (st == HOP_OK && (st = hop_lower_int(cx, HOP_INT_LT, ZERO, c, &ok)) == HOP_OK)
        st = hop_lower_if(cx, ok);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_select(cx, s->pre[j], c, &s->r1[j]);
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++) {
        hop_value_info e = hop_value_info_drop_dim(&call->outs[j], s->dims[j]);
        st = hop_lower_tensor(cx, &e, true, &s->tmp[j]); /* private to each chunk */
    }
    if (st == HOP_OK && (st = int_op(s, HOP_INT_SUB, end, start, &cnt)) == HOP_OK)
        st = hop_lower_loop_begin(cx, cnt, &k);
    if (st == HOP_OK && (st = int_op(s, HOP_INT_ADD, start, k, &i)) == HOP_OK &&
        (st = elements(s, s->out, i, s->r2)) == HOP_OK)
        st = combine(s, s->r1, s->r2, s->tmp); /* not in place: combine reads all of b first */
    for (size_t j = 0; j < s->nx && st == HOP_OK; j++)
        st = hop_lower_copy(cx, s->r2[j], s->tmp[j]);
    if (st == HOP_OK && (st = hop_lower_loop_end(cx)) == HOP_OK &&
        (st = hop_lower_end_if(cx)) == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st;
}

static hop_status
scan_lower(hop_lower_ctx *cx, const hop_node *call)
{
    one_op fast;
    size_t nxs;
    const hop_graph *body = hop_node_body(call, "combine_fn");
    if (hop_node_group(call, "a", &nxs) != NULL && body != NULL && one_op_combine(body, nxs, &fast))
        return one_op_lower(cx, call, &fast);
    scan_lowering s = {.cx = cx,
                       .combine = hop_node_body(call, "combine_fn"),
                       .nx = call->nouts,
                       .reverse = hop_node_param(call, "reverse")->u.b};
    const hop_arg *xs = hop_node_group(call, "a", &s.nx);
    int64_t dim = hop_node_param(call, "dim")->u.i;
    s.passed = hop_lower_passed(cx, call, &s.n);
    s.out = hop_lower_outputs(cx, true);
    s.dims = hop_calloc(s.nx + 1, sizeof *s.dims);
    s.r1 = hop_lower_pvals(cx, s.nx), s.r2 = hop_lower_pvals(cx, s.nx);
    s.r3 = hop_lower_pvals(cx, s.nx), s.pre = hop_lower_pvals(cx, s.nx);
    s.tmp = hop_lower_pvals(cx, s.nx);
    if (s.combine == NULL || xs == NULL || s.passed == NULL || s.out == NULL || s.dims == NULL ||
        s.r1 == NULL || s.r2 == NULL || s.r3 == NULL || s.pre == NULL || s.tmp == NULL) {
        hop_free(s.dims);
        return hop_error_code();
    }
    for (size_t j = 0; j < s.nx; j++)
        s.dims[j] = hop_loop_dim(dim, xs[j].u.node->meta->meta.rank);
    const hop_meta *m0 = &xs[0].u.node->meta->meta;
    hop_arg size = hop_arg_sym(m0->sizes[s.dims[0]]);
    hop_status st = hop_lower_arg(cx, &size, &s.len);
    if (st == HOP_OK)
        st = lower_chunks(&s, call);
    if (st == HOP_OK)
        st = lower_phase1(&s);
    if (st == HOP_OK)
        st = lower_phase2(&s);
    if (st == HOP_OK)
        st = lower_phase3(&s, call);
    hop_free(s.dims);
    return st == HOP_OK ? hop_lower_results(cx, s.out, s.nx) : st;
}

/* ------------------------------------------------------------------- eval */

static hop_status
scan_eval(hop_eval_ctx *ex)
{
    size_t n, nx;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    const hop_rt_value *xs = hop_eval_group(ex, "a", &nx);
    hop_rt_arg dim_arg, reverse;
    hop_status st = hop_eval_param(ex, "dim", &dim_arg);
    if (st == HOP_OK)
        st = hop_eval_param(ex, "reverse", &reverse);
    if (st != HOP_OK)
        return st;
    int64_t len = -1;
    for (size_t j = 0; j < nx; j++) {
        char what[96];
        hop_eval_describe(&xs[j], what, sizeof what);
        int d = xs[j].kind == HOP_VALUE_TENSOR ? hop_loop_dim(dim_arg.u.i, xs[j].tensor->rank) : -1;
        if (d < 0)
            return hop_error(HOP_SHAPE, "associative_scan: xs %zu is %s, which has no dim %" PRId64,
                             j, what, dim_arg.u.i);
        if (len >= 0 && xs[j].tensor->sizes[d] != len)
            return hop_error(HOP_SHAPE,
                             "associative_scan: xs %zu is %s: its size along dim "
                             "%" PRId64 " is not xs 0's",
                             j, what, dim_arg.u.i);
        len = xs[j].tensor->sizes[d];
    }
    hop_rt_value *in = hop_calloc(n + 1, sizeof *in);
    hop_rt_values acc = {NULL, 0, 0}, rows = {NULL, 0, 0}; /* rows: element-major */
    if (in == NULL)
        return hop_error_code();
    memcpy(in, passed, n * sizeof *in);
    for (int64_t s = 0; s < len && st == HOP_OK; s++) {
        int64_t at = reverse.u.b ? len - 1 - s : s;
        hop_rt_values x = {NULL, 0, 0}, next = {NULL, 0, 0};
        for (size_t j = 0; j < nx && st == HOP_OK; j++) {
            hop_rt_arg a[] = {hop_rt_tensor(xs[j].tensor),
                              hop_rt_int(hop_loop_dim(dim_arg.u.i, xs[j].tensor->rank)),
                              hop_rt_int(at)};
            hop_rt_value v;
            if ((st = hop_eager(HOP_OP_select, a, 3, &v)) == HOP_OK)
                st = hop_rt_values_push(&x, v);
        }
        if (st == HOP_OK && s == 0) {
            next = x;
            x = (hop_rt_values){NULL, 0, 0};
        } else if (st == HOP_OK) {
            for (size_t j = 0; j < nx; j++) {
                in[j] = acc.items[j];
                in[nx + j] = x.items[j];
            }
            st = hop_eval_body(ex, "combine_fn", in, n, &next);
            if (st == HOP_OK)
                st = hop_eval_check_carries(ex, &next, x.items, nx, false, "combine_fn");
        }
        hop_rt_values_clear(&x);
        for (size_t j = 0; j < nx && st == HOP_OK; j++)
            st = hop_rt_values_push(
                &rows,
                (hop_rt_value){HOP_VALUE_TENSOR, hop_tensor_retain(next.items[j].tensor), 0});
        hop_rt_values_clear(&acc);
        acc = next;
    }
    hop_rt_values_clear(&acc);
    hop_free(in);
    hop_rt_values res = {NULL, 0, 0};
    if (st == HOP_OK && len > 0)
        st = hop_eval_stack_rows(&rows, nx, len, reverse.u.b, dim_arg.u.i, &res);
    /* Empty along dim: each xs as it is. */
    for (size_t j = 0; j < nx && st == HOP_OK && len == 0; j++)
        st = hop_rt_values_push(
            &res, (hop_rt_value){HOP_VALUE_TENSOR, hop_tensor_retain(xs[j].tensor), 0});
    hop_rt_values_clear(&rows);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &res);
    hop_rt_values_clear(&res);
    return st;
}

/* --------------------------------------------------------------- autodiff */

/*
 * Rules for a combine_fn of one add, mul, maximum or minimum of its two
 * operands over one float xs (what one_op_body recognises, either
 * operand order); any other combine_fn is HOP_UNSUPPORTED naming the call.
 *
 * add (a cumulative sum) is linear: its tangent is the same scan of the
 * tangent, and the gradient of an inclusive scan is the inclusive scan of
 * the cotangent the other way (out[i] sums x[j] for j <= i, so x[j]'s
 * gradient sums ct[i] for i >= j).  Both are emitted as associative_scan
 * calls over a fresh add body, so they run on the parallel kernel.
 *
 * mul, maximum, minimum: with p(i) the element before i in scan order and
 * n(i) the one after, y_i = op(y_p(i), x_i) has the partials
 *
 *     c_i = d y_i / d y_p(i),   d_i = d y_i / d x_i   (the first: d = 1)
 *
 * mul: c_i = x_i, d_i = y_p(i); maximum (minimum): 1 for the operand that
 * wins, 0.5 each at a tie, 0 for the loser (nan: 0 for both), the op's own
 * rule, so the result is the derivative of the scan unrolled into a loop
 * of the op, ties included.  The tangent is the linear recurrence
 * t_i = d_i tx_i + c_i t_p(i), the gradient its transpose gx_i = d_i G_i,
 * G_i = ct_i + c_n(i) G_n(i), run the other way.  The coefficients are
 * elementwise in x and the primal y shifted by one along dim (a slice and a
 * cat); the recurrence is a scan HOP whose body is one multiply-add (for
 * maximum/minimum a where gives a losing operand 0 whatever the value it
 * would multiply, inf or nan, as the op's rule does).  No division, so
 * exact where x has zeros; O(numel(x)) work, sequential along dim and
 * vectorised over the other dims; every op emitted is differentiable, so
 * a second derivative goes through the scan's own rules.
 */

/* A new graph for g named <base><suffix> (or with _1, _2, ...). */
static hop_graph *
fresh_graph(const hop_graph *g, const char *base, const char *suffix)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return hop_graph_new_subgraph(g, name);
}

static hop_node *
sum_scan(hop_graph *g, const hop_node *call, hop_node *v, bool reverse)
{
    const hop_graph *body = hop_node_body(call, "combine_fn");
    hop_graph *b = fresh_graph(g, body->name, "_add");
    if (b == NULL)
        return NULL;
    const hop_node *pa = hop_graph_placeholder_at(body, 0);
    hop_node *l = hop_graph_placeholder(b, pa->name, pa->meta);
    hop_node *r = l ? hop_graph_placeholder(b, "b", pa->meta) : NULL;
    hop_node *s =
        r ? hop_graph_call_op(b, HOP_OP_add, (hop_arg[]){hop_arg_node(l), hop_arg_node(r)}, 2)
          : NULL;
    if (s == NULL || hop_graph_output(b, (hop_arg[]){hop_arg_node(s)}, 1) == NULL ||
        hop_graph_add_subgraph(g, b) != HOP_OK) {
        hop_graph_free(b);
        return NULL;
    }
    hop_arg item = hop_arg_node(v);
    /* the layout of hop/class.h: a, b and the lifted values (none) */
    hop_arg args[] = {*hop_node_param(call, "dim"), hop_arg_bool(reverse),  hop_arg_graph(b),
                      hop_arg_list(&item, 1),       hop_arg_list(&item, 1), hop_arg_list(NULL, 0)};
    hop_node *c = hop_graph_call_hop(g, &hop_associative_scan_class, args, 6, v->meta, 1);
    return c ? hop_graph_getitem(g, c, 0) : NULL;
}

/* The combine_fn's op and the xs node *x (the one the rules differentiate),
 * or HOP_UNSUPPORTED naming the call. */
static hop_status
check_combine(const hop_node *call, const char *mode, one_op *k, hop_node **x)
{
    size_t na;
    const hop_arg *a = hop_node_group(call, "a", &na);
    *x = a[0].u.node;
    if (one_op_body(hop_node_body(call, "combine_fn"), na, k) && hop_dtype_is_float(k->dtype))
        return HOP_OK;
    return hop_error(HOP_UNSUPPORTED,
                     "autodiff: associative_scan %s has no %s rule for its combine_fn: only a "
                     "combine_fn of one add, mul, maximum or minimum of its two operands over "
                     "one float xs (a cumulative sum, product, max or min) is differentiated",
                     call->name, mode);
}

/* ------------------------------------- mul, maximum, minimum: a recurrence */

/* A rule's view of the call: graph g being built, the op, the dim. */
typedef struct rec {
    hop_graph *g;
    const hop_node *call;
    hop_op op;
    int d;
    bool reverse;
    const hop_value_info *x;    /* the xs (and the output) */
    const hop_value_info *elem; /* one element: the xs without dim */
} rec;

#define N(v) hop_arg_node(v)

static bool
first_is_low(const rec *r, bool first)
{
    return first != r->reverse; /* the first element in scan order is index 0 unless reverse */
}

/* v without its first (first) or last element in scan order along dim. */
static hop_node *
drop_end(const rec *r, hop_node *v, bool first)
{
    bool low = first_is_low(r, first);
    return HOP_EMIT(r->g, slice, N(v), hop_arg_int(r->d), low ? hop_arg_int(1) : hop_arg_none(),
                    low ? hop_arg_none() : hop_arg_int(-1), hop_arg_int(1));
}

/* v with one slice of fill before its first (first) or after its last
 * element in scan order along dim. */
static hop_node *
pad_end(const rec *r, hop_node *v, bool first, double fill)
{
    const hop_meta *m = &r->x->meta;
    hop_arg sizes[HOP_MAX_RANK];
    for (int i = 0; i < m->rank; i++)
        sizes[i] = hop_arg_sym(i == r->d ? hop_sym_const(r->g->env, 1) : m->sizes[i]);
    hop_node *f = HOP_EMIT(r->g, full, hop_arg_list(sizes, (size_t)m->rank), hop_arg_float(fill),
                           hop_arg_dtype(m->dtype));
    bool low = first_is_low(r, first);
    hop_arg parts[2] = {N(low ? f : v), N(low ? v : f)};
    return f ? HOP_EMIT(r->g, cat, hop_arg_list(parts, 2), hop_arg_int(r->d)) : NULL;
}

/* d op(u, w) / d u: mul w; maximum (minimum) 1 where u wins, 0.5 at a tie. */
static hop_node *
partial(const rec *r, hop_node *u, hop_node *w)
{
    if (r->op == HOP_OP_mul)
        return w;
    hop_graph *g = r->g;
    hop_arg dt = hop_arg_dtype(r->x->meta.dtype);
    hop_node *win =
        r->op == HOP_OP_maximum ? HOP_EMIT(g, gt, N(u), N(w)) : HOP_EMIT(g, lt, N(u), N(w));
    hop_node *tie = HOP_EMIT(g, mul, N(HOP_EMIT(g, to, N(HOP_EMIT(g, eq, N(u), N(w))), dt)),
                             hop_arg_float(0.5));
    return HOP_EMIT(g, add, N(HOP_EMIT(g, to, N(win), dt)), N(tie));
}

/* coef * v; for maximum/minimum 0 where coef is 0 whatever v is. */
static hop_node *
scale(hop_graph *g, hop_op op, hop_node *coef, hop_node *v)
{
    hop_node *p = HOP_EMIT(g, mul, N(coef), N(v));
    if (op == HOP_OP_mul)
        return p;
    return HOP_EMIT(g, where, N(HOP_EMIT(g, eq, N(coef), hop_arg_float(0.0))), hop_arg_float(0.0),
                    N(p));
}

/*
 * The coefficients over the whole xs: cn_i = c_n(i) (0 for the last) and
 * d_i for every element but the first (whose d is 1), from x and the
 * primal y (output 0 of the primal call c: both rules read it so): the
 * pairs (y_p(i), x_i) for every element i but the first are y without its
 * last element and x without its first.
 */
static hop_status
coefficients(const rec *r, hop_node *x, hop_node *c, hop_node **cn, hop_node **dd)
{
    hop_node *y = hop_graph_getitem(r->g, c, 0);
    if (y == NULL)
        return hop_error_code();
    hop_node *yp = drop_end(r, y, false), *xi = drop_end(r, x, true);
    *cn = pad_end(r, partial(r, yp, xi), false, 0.0);
    *dd = partial(r, xi, yp);
    return *cn && *dd ? HOP_OK : hop_error_code();
}

/*
 * d_i v_i over the whole xs, dd the d of every element but the first: the
 * first element is v's own, not 1 * v (a constant 1 padded in front would
 * be a value whose tangent is an instantiated zero, and under jvp of grad
 * that zero times an infinite v_first is nan where the unrolled loop's
 * symbolic zero gives v_first's own tangent).  The values are the same
 * bits: 1 * v is v.
 */
static hop_node *
scale_rest(const rec *r, hop_node *dd, hop_node *v)
{
    bool low = first_is_low(r, true);
    hop_node *first =
        HOP_EMIT(r->g, slice, N(v), hop_arg_int(r->d), low ? hop_arg_none() : hop_arg_int(-1),
                 low ? hop_arg_int(1) : hop_arg_none(), hop_arg_int(1));
    hop_node *rest = scale(r->g, r->op, dd, drop_end(r, v, true));
    hop_arg parts[2] = {N(low ? first : rest), N(low ? rest : first)};
    return first && rest ? HOP_EMIT(r->g, cat, hop_arg_list(parts, 2), hop_arg_int(r->d)) : NULL;
}

/*
 * The recurrence as a scan along dim (the other way with other_way) of a
 * fresh body.  Gradient (tangent false): carry G, xs (cn, ct), G = ct +
 * cn G, ys G.  Tangent: carries (t, k), xs (cn, dv), t = dv + k t, carries
 * (t, cn), ys t: k is the coefficient of the step before's element.  The
 * carries start at zeros.  Returns the ys.
 */
static hop_node *
recurrence(const rec *r, bool tangent, hop_node *cn, hop_node *v, hop_node *zero)
{
    const hop_graph *combine = hop_node_body(r->call, "combine_fn");
    char name[256];
    snprintf(name, sizeof name, "%s%s", combine->name, tangent ? "_jvp" : "_bwd");
    hop_build *bd = hop_build_new(r->g, &hop_scan_class);
    hop_graph *b = bd ? hop_build_body(bd, "f", name) : NULL;
    /* carries: g (t, k); xs: cn, ct (dv) */
    hop_node *carry = b ? hop_build_input(bd, "init", zero, tangent ? "t" : "g", r->elem) : NULL;
    hop_node *k = tangent && carry ? hop_build_input(bd, "init", zero, "k", r->elem) : carry;
    hop_node *c = k ? hop_build_input(bd, "xs", cn, "cn", r->elem) : NULL;
    hop_node *e = c ? hop_build_input(bd, "xs", v, tangent ? "dv" : "ct", r->elem) : NULL;
    hop_node *next = e ? HOP_EMIT(b, add, N(e), N(scale(b, r->op, tangent ? k : c, carry))) : NULL;
    hop_node *outs[3] = {next, tangent ? c : next, next};
    size_t nc = tangent ? 2 : 1;
    hop_status st = next ? HOP_OK : hop_error_code();
    for (size_t j = 0; j < nc + 1 && st == HOP_OK; j++)
        st = hop_build_output(bd, "f", outs[j]);
    st = st == HOP_OK
             ? hop_build_lead(bd, "reverse", hop_arg_bool(tangent ? r->reverse : !r->reverse))
             : st;
    st = st == HOP_OK ? hop_build_lead(bd, "dim", hop_arg_int(r->d)) : st;
    st = st == HOP_OK ? hop_build_lead(bd, "length", hop_arg_int(-1)) : st;
    hop_value_info metas[3] = {*r->elem, *r->elem, *r->x};
    metas[nc] = *r->x;
    hop_node *s = NULL;
    if (st == HOP_OK) {
        s = hop_build_emit(bd, metas, nc + 1);
        bd = NULL;
    }
    hop_build_free(bd);
    return s ? hop_graph_getitem(r->g, s, nc) : NULL;
}

/* The rule's view of call; *empty when the xs has no elements along dim. */
static void
rec_of(hop_graph *g, const hop_node *call, const one_op *k, rec *r, bool *empty)
{
    size_t na;
    const hop_arg *a = hop_node_group(call, "a", &na);
    const hop_value_info *x = a[0].u.node->meta;
    *r = (rec){.g = g,
               .call = call,
               .op = k->op,
               .d = hop_loop_dim(hop_node_param(call, "dim")->u.i, x->meta.rank),
               .reverse = hop_node_param(call, "reverse")->u.b,
               .x = x,
               .elem = hop_graph_placeholder_at(hop_node_body(call, "combine_fn"), 0)->meta};
    int64_t len;
    *empty = hop_expr_const_value(x->meta.sizes[r->d], &len) && len == 0;
}

/* ---------------------------------------------------------------- reach */

/* The reach slot (hop/class.h): output i is xs i's element 0, then
 * combine_fn's output i of (the outputs so far, xs i's elements, the lifted
 * values): a monotone fixed point over the `a` operands, which start as the
 * xs (from) and grow by the combine_fn outputs a tangent reaches. */
static hop_status
assoc_reach(const hop_node *call, const bool *from, bool *reached)
{
    size_t na, np = hop_node_passed(call, NULL, 0), made = hop_node_made_inputs(call);
    const hop_graph *f = hop_node_body(call, "combine_fn");
    if (hop_node_group(call, "a", &na) == NULL || f == NULL)
        return hop_error_code();
    if (f->nplaceholders != made + np || f->output == NULL || f->output->nargs != na ||
        call->nouts != na || np < 2 * na)
        return hop_error(HOP_MISUSE,
                         "associative_scan %s: combine_fn is not laid out as "
                         "(a, b, lifted) -> one per xs",
                         call->name);
    bool *cur = hop_calloc(made + np + na + 1, sizeof *cur), *out = cur + made + np;
    if (cur == NULL)
        return HOP_NOMEM;
    for (size_t j = 0; j < np; j++)
        cur[made + j] = from[j];
    hop_status st = HOP_OK;
    for (bool grew = true; grew && st == HOP_OK;) {
        memset(out, 0, na * sizeof *out);
        st = hop_ad_reach(f, cur, out);
        grew = false;
        for (size_t i = 0; i < na && st == HOP_OK; i++)
            if (out[i] && !cur[made + i])
                cur[made + i] = grew = true;
    }
    for (size_t i = 0; i < na && st == HOP_OK; i++)
        reached[i] = reached[i] || cur[made + i];
    hop_free(cur);
    return st;
}

/* Whether a (co)tangent reaches an output of call: `active` says which of
 * the values it passes carry one.  None (*any false): the outputs are
 * symbolic zeros, whatever the combine_fn (one that reads a value with a
 * tangent only through a comparison, say), so a rule has nothing to do. */
static hop_status
assoc_any_reached(const hop_node *call, bool (*active)(void *, const hop_node *), void *cx,
                  bool *any)
{
    size_t np = hop_node_passed(call, NULL, 0);
    const hop_arg **items = hop_calloc(np + 1, sizeof *items);
    bool *from = hop_calloc(np + call->nouts + 2, sizeof *from), *reached = from + np + 1;
    hop_status st = items && from ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK)
        hop_node_passed(call, items, np);
    for (size_t j = 0; j < np && st == HOP_OK; j++)
        from[j] = items[j]->kind == HOP_ARG_NODE && active(cx, items[j]->u.node);
    if (st == HOP_OK)
        st = assoc_reach(call, from, reached);
    *any = false;
    for (size_t i = 0; i < call->nouts && st == HOP_OK; i++)
        *any = *any || reached[i];
    hop_free(items);
    hop_free(from);
    return st;
}

static bool
vjp_active(void *cx, const hop_node *v)
{
    return hop_vjp_active(cx, v);
}

static bool
jvp_active(void *cx, const hop_node *v)
{
    return hop_jvp_tangent(cx, v) != NULL;
}

static hop_status
assoc_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    one_op k;
    hop_node *x;
    bool any;
    hop_status st = assoc_any_reached(call, vjp_active, cx, &any);
    if (st != HOP_OK || !any)
        return st;
    st = check_combine(call, "vjp", &k, &x);
    if (st != HOP_OK)
        return st;
    hop_node *ct = hop_vjp_ct(cx, call, 0);
    if (ct == NULL || !hop_vjp_active(cx, x))
        return HOP_OK;
    bool reverse = hop_node_param(call, "reverse")->u.b;
    hop_graph *g = hop_vjp_out(cx);
    if (k.op == HOP_OP_add) {
        hop_node *s = sum_scan(g, call, ct, !reverse);
        return s ? hop_vjp_accumulate(cx, x, s) : hop_error_code();
    }
    rec r;
    bool empty;
    rec_of(g, call, &k, &r, &empty);
    if (empty)
        return HOP_OK;
    hop_node *cn, *dd;
    st = coefficients(&r, hop_vjp_primal(cx, x), hop_vjp_primal(cx, call), &cn, &dd);
    hop_node *zero = st == HOP_OK ? hop_vjp_zeros(cx, r.elem) : NULL;
    hop_node *G = zero ? recurrence(&r, false, cn, ct, zero) : NULL;
    hop_node *gx = G ? scale_rest(&r, dd, G) : NULL;
    return gx ? hop_vjp_accumulate(cx, x, gx) : hop_error_code();
}

static hop_status
assoc_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    one_op k;
    hop_node *x;
    bool any;
    hop_status st = assoc_any_reached(call, jvp_active, cx, &any);
    if (st != HOP_OK || !any)
        return st;
    st = check_combine(call, "jvp", &k, &x);
    if (st != HOP_OK)
        return st;
    hop_node *t = hop_jvp_tangent(cx, x);
    if (t == NULL)
        return HOP_OK;
    bool reverse = hop_node_param(call, "reverse")->u.b;
    hop_graph *g = hop_jvp_out(cx);
    if (k.op == HOP_OP_add) {
        t = sum_scan(g, call, t, reverse);
        return t ? hop_jvp_set_tangent(cx, call, 0, t) : hop_error_code();
    }
    rec r;
    bool empty;
    rec_of(g, call, &k, &r, &empty);
    if (empty)
        return hop_jvp_set_tangent(cx, call, 0, t);
    hop_node *cn, *dd;
    st = coefficients(&r, hop_jvp_primal(cx, x), hop_jvp_primal(cx, call), &cn, &dd);
    hop_node *zero = st == HOP_OK ? hop_jvp_zeros(cx, r.elem) : NULL;
    hop_node *dv = zero ? scale_rest(&r, dd, t) : NULL;
    hop_node *T = dv ? recurrence(&r, true, cn, dv, zero) : NULL;
    return T ? hop_jvp_set_tangent(cx, call, 0, T) : hop_error_code();
}

#undef EMIT
#undef NARGS
#undef N

const hop_class hop_associative_scan_class = {
    .name = "associative_scan",
    .params = {{"dim", HOP_PARAM_INT},
               {"reverse", HOP_PARAM_BOOL},
               {"combine_fn", HOP_PARAM_BODY, "associative_scan_combine"},
               {"a", HOP_PARAM_VALUES},
               {"b", HOP_PARAM_VALUES}},
    .doc = "associative_scan(dim, reverse, combine_fn, a, b): the inclusive scan of the xs "
           "(given as both a and b: combine_fn's left and right operands are slices of them) "
           "with the associative combine_fn along dim.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = scan_check_operands,
    .body_inputs = scan_body_inputs,
    .check_outputs = scan_check_outputs,
    .output_meta = scan_output_meta,
    .verify = scan_verify,
    .lower = scan_lower,
    .eval = scan_eval,
    .vjp = assoc_vjp,
    .jvp = assoc_jvp,
    .reach = assoc_reach,
};
