/*
 * runtime/straight.c - straight loops (program.h: hop__insn.straight): a
 * loop whose body is only MoveInt, Integer, Swap and small fused groups
 * runs its iterations here, without the interpreter's per-instruction work.
 *
 * When the loop starts, its body is decoded twice, into the ops of an even
 * and of an odd iteration (sop).  A Swap only exchanges which storage two
 * slots hold, so the decoding follows each slot's data through the Swaps
 * and every operand becomes a fixed pointer: an iteration decodes nothing
 * and swaps nothing.  This holds when two iterations' Swaps bring every
 * slot back to its storage (a double-buffered carry); the frame's slots
 * keep their headers while the loop runs, and after an odd number of
 * iterations the body's Swaps run once, whole (straight_settle).  A body
 * that is longer than STRAIGHT_MAXOPS ops, or whose Swaps do not come back
 * in two iterations, runs instruction by instruction (straight_slow).
 *
 * The ops run one after the other by tail calls (NEXT):
 *   - f32 and f64 + - * / run inline, 16 or (with AVX) 32 bytes at a time.
 *     Each element is one IEEE operation in the operands' dtype, as in the
 *     vector functions, so the loop gives the interpreter's bits;
 *   - other steps call their vector function;
 *   - a SymInt operand is computed into its op's cell first (SYM);
 *   - MoveInt, Integer and scalar_i64 groups run inline (one op per int
 *     operation: op_s_add, op_s_lt, ...).
 */
#include "runtime/vm_impl.h"

#include <stdlib.h>
#include <string.h>

#define STRAIGHT_MAXOPS 48  /* ops of one iteration, op_end included */
#define STRAIGHT_MAXMAP 128 /* slots one decoding follows */

typedef struct sop sop;
/* An op of an iteration: HOP_OK, or the status the loop stops with. */
typedef hop_status (*sop_fn)(const sop *o, int64_t *regs);

struct sop {
    sop_fn run;     /* op_end: the iteration's ops end */
    int32_t p1, p2; /* op_move: r[p1] = r[p2]; op_int: r[p1] = i64 */
    int64_t i64;
    int64_t n;    /* op_step, arithmetic: elements */
    int64_t nv;   /* arithmetic: whole vectors (arith_ops.bytes) in n */
    int64_t tail; /* arithmetic: the elements after them */
    hop__vfn fn;
    const int *ai;
    void *out;
    const void *in[3];
    const hop__fopnd *sym; /* op_sym: the operand, read in dtype symdt */
    hop_dtype symdt;
    _Alignas(8) unsigned char val[8]; /* op_sym: the value */
};

/* The back edge's test after one iteration's ops. */
typedef struct stest {
    const void *data; /* If on a slot: its element; NULL: a register */
    hop_tensor t;     /* If on a non-bool slot: its header over data */
} stest;

/* An iteration that is one register-kernel group (fused_reg.c) besides
 * MoveInt and Integer: the group and where its inputs and output are in
 * this iteration, and its ops' range in the iteration's ops. */
typedef struct sgroup {
    const hop__fgroup *g; /* NULL: none, or more than one group */
    int ngroups;          /* the groups that are not scalar_i64 */
    const void *in[HOP__F_MAXIN];
    void *out;
    /* the scalar_i64 groups (a while loop's counter and test): each one's
     * group and op; nscal may count more than fit */
    int nscal;
    const hop__fgroup *scal_g[2];
    const sop *scal[2];
} sgroup;

/* Where each slot's data is at a point of the decoding. */
typedef struct smap {
    int n;
    int32_t slot[STRAIGHT_MAXMAP];
    void *data[STRAIGHT_MAXMAP];
} smap;

/* The cell holding slot s's data now, added when new; NULL when full. */
static void **
map_at(const hop__frame *f, smap *m, int32_t s)
{
    for (int j = 0; j < m->n; j++)
        if (m->slot[j] == s)
            return &m->data[j];
    if (m->n == STRAIGHT_MAXMAP)
        return NULL;
    m->slot[m->n] = s;
    m->data[m->n] = f->slots[s].data;
    return &m->data[m->n++];
}

/* ------------------------------------------------------------------ ops */

/* Each op ends by running the next (a tail call), so an iteration is one
 * call of its first op; op_end returns. */
#define NEXT(o, regs) return (o)[1].run((o) + 1, regs)

static hop_status
op_end(const sop *o, int64_t *regs)
{
    (void)o;
    (void)regs;
    return HOP_OK;
}

static hop_status
op_step(const sop *o, int64_t *regs)
{
    o->fn(o->n, o->out, o->in, o->ai);
    NEXT(o, regs);
}

/* Writes its own cell: the ops array is the caller's (not const), the
 * const only keeps the other ops from writing. */
static hop_status
op_sym(const sop *o, int64_t *regs)
{
    hop_status st = hop__fused_sym_value(o->sym, o->symdt, regs, (void *)o->val);
    if (st != HOP_OK)
        return st;
    NEXT(o, regs);
}

/* op_s_<name>: a scalar_i64 group's step, the arithmetic of the vector
 * functions (wrapping add, sub, mul), as hop__scalar_i64 computes it. */
#define SCALAR_OP(name, OT, EXPR)                                                                  \
    static hop_status op_s_##name(const sop *o, int64_t *regs)                                     \
    {                                                                                              \
        int64_t x, y;                                                                              \
        memcpy(&x, o->in[0], sizeof x);                                                            \
        memcpy(&y, o->in[1], sizeof y);                                                            \
        OT r = (OT)(EXPR);                                                                         \
        memcpy(o->out, &r, sizeof r);                                                              \
        NEXT(o, regs);                                                                             \
    }

SCALAR_OP(add, int64_t, (uint64_t)x + (uint64_t)y)
SCALAR_OP(sub, int64_t, (uint64_t)x - (uint64_t)y)
SCALAR_OP(mul, int64_t, (uint64_t)x *(uint64_t)y)
SCALAR_OP(max, int64_t, x > y ? x : y)
SCALAR_OP(min, int64_t, x < y ? x : y)
SCALAR_OP(eq, hop__bool, x == y)
SCALAR_OP(ne, hop__bool, x != y)
SCALAR_OP(lt, hop__bool, x < y)
SCALAR_OP(le, hop__bool, x <= y)
SCALAR_OP(gt, hop__bool, x > y)
SCALAR_OP(ge, hop__bool, x >= y)

/* The op of a scalar_i64 group's step (the lowering marks no other ops). */
static sop_fn
scalar_op(hop_op op)
{
    switch (op) {
    case HOP_OP_add:
        return op_s_add;
    case HOP_OP_sub:
        return op_s_sub;
    case HOP_OP_mul:
        return op_s_mul;
    case HOP_OP_maximum:
        return op_s_max;
    case HOP_OP_minimum:
        return op_s_min;
    case HOP_OP_eq:
        return op_s_eq;
    case HOP_OP_ne:
        return op_s_ne;
    case HOP_OP_lt:
        return op_s_lt;
    case HOP_OP_le:
        return op_s_le;
    case HOP_OP_gt:
        return op_s_gt;
    default: /* HOP_OP_ge, as hop__scalar_i64 */
        return op_s_ge;
    }
}

static hop_status
op_move(const sop *o, int64_t *regs)
{
    hop__reg_move(regs, o->p1, o->p2);
    NEXT(o, regs);
}

static hop_status
op_int(const sop *o, int64_t *regs)
{
    hop__reg_put(regs, o->p1, o->i64);
    NEXT(o, regs);
}

/* The elements from `from` on of an arithmetic op, by its vector function,
 * then the next op (out of line: the ops' own loops keep to registers). */
__attribute__((noinline)) static hop_status
arith_tail(const sop *o, int64_t *regs, int64_t from, size_t size)
{
    const void *in[2] = {(const char *)o->in[0] + (size_t)(o->ai[0] * from) * size,
                         (const char *)o->in[1] + (size_t)(o->ai[1] * from) * size};
    o->fn(o->n - from, (char *)o->out + (size_t)from * size, in, o->ai);
    NEXT(o, regs);
}

/*
 * op_<name>: out = a OP b over o->n elements, a stepping when SA is 1 and
 * one element when it is 0 (b: SB): o->nv vectors V (GNU C vectors: SSE,
 * NEON, or AVX in the _avx ops), then the o->tail elements left.  A
 * vector is loaded whole before it is stored, so the output may be an
 * operand (it never overlaps one otherwise: plan storage).  A lone element
 * is copied into every lane (no arithmetic: -0.0 stays -0.0).  Each element
 * is one IEEE operation in T, as in the vector functions (C11 mode: no
 * contraction).
 */
#define ARITH_OP(name, T, V, OP, SA, SB, ATTR)                                                     \
    ATTR static hop_status op_##name(const sop *o, int64_t *regs)                                  \
    {                                                                                              \
        enum { L = sizeof(V) / sizeof(T) };                                                        \
        T *out = o->out;                                                                           \
        const T *a = o->in[0], *b = o->in[1];                                                      \
        V x, y;                                                                                    \
        for (int k = 0; k < L; k++)                                                                \
            x[k] = a[0], y[k] = b[0];                                                              \
        for (int64_t v = 0, nv = o->nv; v < nv; v++) {                                             \
            if (SA)                                                                                \
                memcpy(&x, a + v * L, sizeof x);                                                   \
            if (SB)                                                                                \
                memcpy(&y, b + v * L, sizeof y);                                                   \
            V r = x OP y;                                                                          \
            memcpy(out + v * L, &r, sizeof r);                                                     \
        }                                                                                          \
        if (o->tail)                                                                               \
            return arith_tail(o, regs, o->nv * L, sizeof(T));                                      \
        NEXT(o, regs);                                                                             \
    }

#define ARITH_PATTERNS(name, T, V, OP, ATTR)                                                       \
    ARITH_OP(name##_vv, T, V, OP, 1, 1, ATTR)                                                      \
    ARITH_OP(name##_vs, T, V, OP, 1, 0, ATTR)                                                      \
    ARITH_OP(name##_sv, T, V, OP, 0, 1, ATTR)

#define ARITH_DTYPE(sfx, T, V, ATTR)                                                               \
    ARITH_PATTERNS(add_##sfx, T, V, +, ATTR)                                                       \
    ARITH_PATTERNS(sub_##sfx, T, V, -, ATTR)                                                       \
    ARITH_PATTERNS(mul_##sfx, T, V, *, ATTR)                                                       \
    ARITH_PATTERNS(div_##sfx, T, V, /, ATTR)

/* clang-format off */
#define ARITH_ROW(name) {op_##name##_vv, op_##name##_vs, op_##name##_sv}
#define ARITH_TABLE(sfx)                                                                           \
    {{ARITH_ROW(add_f32##sfx), ARITH_ROW(sub_f32##sfx), ARITH_ROW(mul_f32##sfx),                   \
      ARITH_ROW(div_f32##sfx)},                                                                    \
     {ARITH_ROW(add_f64##sfx), ARITH_ROW(sub_f64##sfx), ARITH_ROW(mul_f64##sfx),                   \
      ARITH_ROW(div_f64##sfx)}}
/* clang-format on */

typedef float vf32 __attribute__((vector_size(16)));
typedef double vf64 __attribute__((vector_size(16)));
ARITH_DTYPE(f32, float, vf32, )
ARITH_DTYPE(f64, double, vf64, )

/* The arithmetic ops [dtype][op][pattern] and their vectors' size. */
typedef struct arith_ops {
    sop_fn fn[2][4][3];
    int bytes;
} arith_ops;

static const arith_ops arith_base = {ARITH_TABLE(), 16};

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_AVX_OPS 1
typedef float vf32x8 __attribute__((vector_size(32)));
typedef double vf64x4 __attribute__((vector_size(32)));
ARITH_DTYPE(f32_avx, float, vf32x8, __attribute__((target("avx"))))
ARITH_DTYPE(f64_avx, double, vf64x4, __attribute__((target("avx"))))
static const arith_ops arith_avx = {ARITH_TABLE(_avx), 32};
#endif

/* The arithmetic ops this CPU runs best.  HOP_SIMD=baseline picks the
 * 16-byte ones everywhere (for tests and measuring). */
static const arith_ops *
arith_table(void)
{
#ifdef HAVE_AVX_OPS
    static int avx; /* 0: not asked yet; 1 yes; -1 no (a race asks twice) */
    int v = __atomic_load_n(&avx, __ATOMIC_RELAXED);
    if (v == 0) {
        const char *env = getenv("HOP_SIMD");
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx") && (env == NULL || strcmp(env, "baseline") != 0) ? 1 : -1;
        __atomic_store_n(&avx, v, __ATOMIC_RELAXED);
    }
    if (v > 0)
        return &arith_avx;
#endif
    return &arith_base;
}

/* The op of a step: inline arithmetic (f32 and f64 + - * / with a stepping
 * operand) from t, or op_step. */
static sop_fn
step_op(const hop__fgroup *g, const hop__fstep *st, const arith_ops *t)
{
    static const hop_op ops[4] = {HOP_OP_add, HOP_OP_sub, HOP_OP_mul, HOP_OP_div};
    int dt = st->dtype == HOP_F32 ? 0 : st->dtype == HOP_F64 ? 1 : -1;
    if (dt < 0 || st->nin != 2 || st->fdtype != st->dtype || st->opdtype != st->dtype ||
        st->in[0].need != st->dtype || st->in[1].need != st->dtype ||
        (st->small_ai[0] == 0 && st->small_ai[1] == 0) || g->small_n <= 0)
        return op_step;
    int pat = st->small_ai[1] == 0 ? 1 : st->small_ai[0] == 0 ? 2 : 0;
    for (int op = 0; op < 4; op++)
        if (st->op == ops[op] && st->fn == hop__vfn_binary(st->op, st->dtype))
            return t->fn[dt][op][pat];
    return op_step;
}

/* ------------------------------------------------------------- decoding */

/* The next op of an iteration (one is kept for the end); NULL when full. */
static sop *
next_op(sop *ops, int *k, sop_fn run)
{
    if (*k + 1 >= STRAIGHT_MAXOPS)
        return NULL;
    sop *o = &ops[(*k)++];
    *o = (sop){.run = run};
    return o;
}

/* Decodes a small group's steps into ops[*k...]; false when they do not fit. */
static bool
decode_group(const hop__frame *f, const hop__fgroup *g, hop__ftile *tiles, smap *m, sop *ops,
             int *k)
{
    void **cell;
    sop *o;
    if (g->scalar_i64) {
        /* its two operands: int64 inputs or constants (fused.c) */
        if ((o = next_op(ops, k, scalar_op(g->steps[0].op))) == NULL)
            return false;
        for (int i = 0; i < 2; i++) {
            const hop__fopnd *op = &g->steps[0].in[i];
            if (op->src != HOP__F_INPUT)
                o->in[i] = op->val;
            else if ((cell = map_at(f, m, g->inputs[op->idx])) != NULL)
                o->in[i] = *cell;
            else
                return false;
        }
        if ((cell = map_at(f, m, g->out)) == NULL)
            return false;
        o->out = *cell;
        return true;
    }
    for (int s = 0; s < g->nsteps; s++) {
        const hop__fstep *st = &g->steps[s];
        sop *syms[3] = {NULL, NULL, NULL};
        for (int i = 0; i < st->nin; i++) {
            if (st->in[i].src != HOP__F_SYM)
                continue;
            if ((syms[i] = next_op(ops, k, op_sym)) == NULL)
                return false;
            syms[i]->sym = &st->in[i];
            syms[i]->symdt = st->opdtype;
        }
        const arith_ops *t = arith_table();
        if ((o = next_op(ops, k, step_op(g, st, t))) == NULL)
            return false;
        int64_t lanes = (int64_t)((size_t)t->bytes / hop_dtype_size(st->dtype));
        o->fn = st->fn;
        o->ai = st->small_ai;
        o->n = g->small_n;
        o->nv = g->small_n / lanes;
        o->tail = g->small_n % lanes;
        for (int i = 0; i < st->nin; i++) {
            const hop__fopnd *op = &st->in[i];
            if (op->src == HOP__F_INPUT) {
                if ((cell = map_at(f, m, g->inputs[op->idx])) == NULL)
                    return false;
                o->in[i] = *cell;
            } else if (op->src == HOP__F_REG) {
                o->in[i] = tiles[op->idx];
            } else if (op->src == HOP__F_SCALAR) {
                o->in[i] = op->val;
            } else {
                o->in[i] = syms[i]->val;
            }
        }
        if (st->out >= 0) {
            o->out = tiles[st->out];
        } else {
            if ((cell = map_at(f, m, g->out)) == NULL)
                return false;
            o->out = *cell;
        }
    }
    return true;
}

/* Decodes one iteration: body [body, back), the group back runs first (an
 * If's P4) and back's test, following the Swaps in m.  False when the ops
 * take more than STRAIGHT_MAXOPS or the slots more than STRAIGHT_MAXMAP. */
static bool
decode_iteration(const hop__frame *f, const hop__insn *body, const hop__insn *back,
                 hop__ftile *tiles, smap *m, sop *ops, stest *test, sgroup *sg)
{
    int k = 0;
    sg->g = NULL;
    sg->ngroups = 0;
    sg->nscal = 0;
    for (const hop__insn *in = body; in <= back; in++) {
        if (in->opcode == HOP__OP_Swap) {
            const int32_t *more = in->p4;
            for (int j = 0; j <= in->p3; j++) {
                void **a = map_at(f, m, j ? more[2 * j - 2] : in->p1);
                void **b = map_at(f, m, j ? more[2 * j - 1] : in->p2);
                if (a == NULL || b == NULL)
                    return false;
                void *d = *a;
                *a = *b;
                *b = d;
            }
        } else if (in->opcode == HOP__OP_MoveInt || in->opcode == HOP__OP_Integer) {
            sop *o = next_op(ops, &k, in->opcode == HOP__OP_MoveInt ? op_move : op_int);
            if (o == NULL)
                return false;
            o->p1 = in->p1;
            o->p2 = in->p2;
            o->i64 = in->i64;
        } else if (in->opcode == HOP__OP_Fused || in->opcode == HOP__OP_Copy ||
                   (in == back && in->opcode == HOP__OP_If && in->p4 != NULL)) {
            const hop__fgroup *g = in->p4;
            if (g->scalar_i64) {
                if (sg->nscal < 2) {
                    sg->scal_g[sg->nscal] = g;
                    sg->scal[sg->nscal] = &ops[k];
                }
                sg->nscal++;
            } else if (sg->ngroups++ == 0 && g->small_n > 0 && hop__freg_inline(g)) {
                /* where its operands are before the ops below move nothing */
                void **cell;
                for (int j = 0; j < g->ninputs; j++) {
                    if ((cell = map_at(f, m, g->inputs[j])) == NULL)
                        return false;
                    sg->in[j] = *cell;
                }
                if ((cell = map_at(f, m, g->out)) == NULL)
                    return false;
                sg->out = *cell;
                sg->g = g;
            }
            if (!decode_group(f, g, tiles, m, ops, &k))
                return false;
        }
    }
    if (sg->ngroups != 1)
        sg->g = NULL;
    ops[k] = (sop){.run = op_end};
    *test = (stest){0};
    if (back->opcode == HOP__OP_If && back->p3 == 0) {
        void **cell = map_at(f, m, back->p1);
        if (cell == NULL)
            return false;
        test->data = *cell;
        test->t = f->slots[back->p1];
        test->t.data = *cell;
    }
    return true;
}

/* ------------------------------------------------------------- the loop */

/* Whether the loop goes on after an iteration: back's test. */
static inline hop_status
straight_test(hop__frame *f, const hop__insn *back, const stest *t, bool *more)
{
    int64_t v;
    hop_status st = HOP_OK;
    if (back->opcode == HOP__OP_Next)
        v = ++f->regs[back->p1] < f->regs[back->p3];
    else if (t->data == NULL)
        v = f->regs[back->p1];
    else if (t->t.dtype == HOP_BOOL)
        v = *(const unsigned char *)t->data;
    else
        st = hop_tensor_item_int(&t->t, &v);
    *more = v != 0;
    return st;
}

/* After an odd number of iterations: the body's Swaps, once. */
static void
straight_settle(hop__frame *f, const hop__insn *body, const hop__insn *back)
{
    for (const hop__insn *in = body; in < back; in++) {
        if (in->opcode != HOP__OP_Swap)
            continue;
        hop__swap_slots(f, in->p1, in->p2);
        const int32_t *more = in->p4;
        for (int32_t k = 0; k < in->p3; k++)
            hop__swap_slots(f, more[2 * k], more[2 * k + 1]);
    }
}

/* One instruction of a straight body run as itself. */
static inline hop_status
straight_insn(hop__frame *f, const hop__insn *in, hop__ftile *tiles)
{
    switch ((hop__opcode)in->opcode) {
    case HOP__OP_MoveInt:
        hop__reg_move(f->regs, in->p1, in->p2);
        return HOP_OK;
    case HOP__OP_Integer:
        hop__reg_put(f->regs, in->p1, in->i64);
        return HOP_OK;
    case HOP__OP_Swap: {
        hop__swap_slots(f, in->p1, in->p2);
        const int32_t *more = in->p4;
        for (int32_t k = 0; k < in->p3; k++)
            hop__swap_slots(f, more[2 * k], more[2 * k + 1]);
        return HOP_OK;
    }
    default: /* Fused, Copy: small groups (mark_straight) */
        return hop__fused_small(in->p4, f, tiles);
    }
}

/* The iterations of a body that did not decode, instruction by
 * instruction. */
static hop_status
straight_slow(hop__frame *f, const hop__insn *body, const hop__insn *back, int64_t cost,
              hop__ftile *tiles)
{
    hop_status st;
    for (;;) {
        if ((f->budget -= cost) <= 0 && (st = hop__interrupt_check(f)) != HOP_OK)
            return st;
        for (const hop__insn *in = body; in < back; in++)
            if ((st = straight_insn(f, in, tiles)) != HOP_OK)
                return st;
        if (back->opcode == HOP__OP_If && back->p4 &&
            (st = hop__fused_small(back->p4, f, tiles)) != HOP_OK)
            return st;
        if (back->opcode == HOP__OP_Next) {
            if (++f->regs[back->p1] >= f->regs[back->p3])
                return HOP_OK;
        } else {
            int64_t v;
            if ((st = hop__branch_value(f, back, &v)) != HOP_OK || v == 0)
                return st;
        }
    }
}

/*
 * The register loop: a body that is one group of inline f32 steps (fused_reg.c)
 * carrying one tensor from iteration to iteration (it reads the storage the
 * last iteration wrote, first in its chain, and nothing else of it), a
 * fori_loop counter (Next) and MoveInt/Integer: its iterations run inside
 * the kernel with the carry in vector registers (an iteration costs the
 * latency of its arithmetic, as a hand-written C loop), a block at a time.
 * The registers end as the instructions leave them: a MoveInt/Integer that
 * reads no register another one writes gives after the last iteration what
 * it gives run once with the counter's last value.
 *
 * A while loop whose test is a counter compare takes it too: besides the
 * group, the body is `c' = c + step` on a double-buffered int64 carry (a
 * scalar_i64 add of a constant step >= 1) and the test `c' < b` or
 * `c' <= b` (or `b > c'`, `b >= c'`) with b a constant or an int64 slot
 * the loop does not write.  The trip count follows from c, step and b as
 * for a fori_loop; when c would wrap before the test fails (b near
 * INT64_MAX) the loop runs its ops, which wrap as the instructions do.
 * After a block the counter's two buffers, the test's bool and the carry
 * hold what the instructions leave.
 */
typedef struct rloop {
    const hop__fgroup *g;
    int64_t inc[HOP__F_MAXIN];
    const sop *ints[STRAIGHT_MAXOPS]; /* the MoveInt and Integer ops, in order */
    int nints;
    /* a while loop's counter (wcount): cnt[0] where an even iteration reads
     * it and an odd one writes it, cnt[1] the other; the test's bool; the
     * bound (int64); c < bound (or <= when le) goes on */
    bool wcount, le;
    void *cnt[2];
    void *test;
    const void *bound;
    int64_t step;
} rloop;

/* The carry group of sg (both parities): rl->g and rl->inc; false when it
 * is not one register-kernel group carrying one tensor. */
static bool
rloop_group(rloop *rl, const sgroup *sg)
{
    const hop__fgroup *g = sg[0].g;
    if (g == NULL || sg[1].g != g)
        return false;
    int a = g->reg_arg[g->nsteps];
    if (a < 0 || !g->small_inc[a])
        return false;
    /* the carry: each parity reads what the other wrote */
    if (sg[0].in[a] != sg[1].out || sg[1].in[a] != sg[0].out)
        return false;
    for (int s = 0; s < g->nsteps; s++)
        if (g->reg_arg[s] == a)
            return false;
    for (int k = 0; k < g->ninputs; k++) {
        if (k == a)
            continue;
        if (sg[0].in[k] != sg[1].in[k] || sg[0].in[k] == sg[0].out || sg[0].in[k] == sg[1].out)
            return false;
        rl->inc[k] = g->small_inc[k];
    }
    rl->inc[a] = 1;
    rl->g = g;
    return true;
}

/* The operand of scalar_i64 group g's op o that reads an input: 0 or 1,
 * -1 when both or neither do. */
static int
scal_input(const hop__fgroup *g)
{
    bool i0 = g->steps[0].in[0].src == HOP__F_INPUT, i1 = g->steps[0].in[1].src == HOP__F_INPUT;
    return i0 == i1 ? -1 : i0 ? 0 : 1;
}

/* A while loop's counter and test (see rloop above) in sg; false when the
 * loop is not of that shape.  ops: the iterations' ops. */
static bool
rloop_while(rloop *rl, const hop__insn *back, const sop (*ops)[STRAIGHT_MAXOPS], const stest *test,
            const sgroup *sg)
{
    if (back->opcode != HOP__OP_If || back->p3 != 0 || back->p4 == NULL || sg[0].nscal != 2 ||
        sg[1].nscal != 2 || test[0].data == NULL || test[0].data != test[1].data ||
        test[0].t.dtype != HOP_BOOL)
        return false;
    /* nothing else: the group's ops, the add, the compare */
    for (int p = 0; p < 2; p++)
        for (const sop *o = ops[p]; o->run != op_end; o++)
            if (o->run == op_move || o->run == op_int || o->run == op_sym)
                return false;
    const hop__fgroup *add = sg[0].scal_g[0], *cmp = sg[0].scal_g[1];
    if (sg[1].scal_g[0] != add || sg[1].scal_g[1] != cmp || cmp != back->p4 ||
        cmp->out != back->p1 || add->steps[0].op != HOP_OP_add)
        return false;
    int ai = scal_input(add), ci = scal_input(cmp);
    if (ai < 0 || ci < 0) {
        /* the bound a slot: the compare reads two inputs */
        if (ai < 0 || cmp->steps[0].in[0].src != HOP__F_INPUT ||
            cmp->steps[0].in[1].src != HOP__F_INPUT)
            return false;
    }
    /* c' = c + step: double-buffered, each parity reads what the other wrote */
    const sop *a0 = sg[0].scal[0], *a1 = sg[1].scal[0];
    if (a0->in[ai] != a1->out || a1->in[ai] != a0->out || a0->out == a1->out)
        return false;
    memcpy(&rl->step, add->steps[0].in[1 - ai].val, sizeof rl->step);
    if (rl->step < 1)
        return false;
    /* the compare reads the counter just written, on the side its op wants */
    hop_op op = cmp->steps[0].op;
    int side = op == HOP_OP_lt || op == HOP_OP_le ? 0 : op == HOP_OP_gt || op == HOP_OP_ge ? 1 : -1;
    if (side < 0)
        return false;
    rl->le = op == HOP_OP_le || op == HOP_OP_ge;
    for (int p = 0; p < 2; p++) {
        const sop *c = sg[p].scal[1];
        if (cmp->steps[0].in[side].src != HOP__F_INPUT || c->in[side] != sg[p].scal[0]->out)
            return false;
    }
    const sop *c0 = sg[0].scal[1], *c1 = sg[1].scal[1];
    rl->bound = c0->in[1 - side];
    if (c1->in[1 - side] != rl->bound || rl->bound == a0->out || rl->bound == a1->out ||
        rl->bound == sg[0].out || rl->bound == sg[1].out || rl->bound == test[0].data)
        return false;
    /* the group reads neither the counter nor the test, writes neither */
    const hop__fgroup *g = rl->g;
    for (int p = 0; p < 2; p++) {
        for (int k = 0; k < g->ninputs; k++)
            if (sg[p].in[k] == a0->out || sg[p].in[k] == a1->out || sg[p].in[k] == test[0].data)
                return false;
        if (sg[p].out == a0->out || sg[p].out == a1->out || sg[p].out == test[0].data)
            return false;
    }
    rl->cnt[0] = a1->out;
    rl->cnt[1] = a0->out;
    rl->test = (void *)(uintptr_t)test[0].data; /* a slot of the frame */
    rl->wcount = true;
    rl->nints = 0;
    return true;
}

static bool
rloop_plan(rloop *rl, const hop__insn *back, const sop (*ops)[STRAIGHT_MAXOPS], const stest *test,
           const sgroup *sg)
{
    rl->wcount = false;
    if (!rloop_group(rl, sg))
        return false;
    if (back->opcode == HOP__OP_If)
        return rloop_while(rl, back, ops, test, sg);
    if (back->opcode != HOP__OP_Next || sg[0].nscal != 0 || sg[1].nscal != 0)
        return false;
    /* the other ops: MoveInt and Integer (the group's own are not these),
     * not writing the counter or the bound, not reading what one writes */
    rl->nints = 0;
    for (const sop *o = ops[0]; o->run != op_end; o++) {
        if (o->run != op_move && o->run != op_int)
            continue;
        if (o->p1 == back->p1 || o->p1 == back->p3)
            return false;
        rl->ints[rl->nints++] = o;
    }
    for (int i = 0; i < rl->nints; i++)
        for (int j = 0; j < rl->nints; j++)
            if (rl->ints[i]->run == op_move && rl->ints[i]->p2 == rl->ints[j]->p1)
                return false;
    return true;
}

/* The iterations a while loop's counter gives from the top of an even one
 * (the first of them already tested true): *left, false when the counter
 * would wrap first (the ops run those loops). */
static bool
rloop_while_left(const rloop *rl, int64_t *left)
{
    int64_t c, b, prod, end;
    memcpy(&c, rl->cnt[0], sizeof c);
    memcpy(&b, rl->bound, sizeof b);
    if (rl->le) {
        if (b == INT64_MAX)
            return false;
        b++; /* c <= b as c < b + 1 */
    }
    if (b <= c) {
        *left = 1;
        return !__builtin_add_overflow(c, rl->step, &end);
    }
    uint64_t d = (uint64_t)b - (uint64_t)c; /* b > c: fits */
    uint64_t k = d / (uint64_t)rl->step + (d % (uint64_t)rl->step != 0);
    if (k > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)k, rl->step, &prod) ||
        __builtin_add_overflow(c, prod, &end))
        return false;
    *left = (int64_t)k;
    return true;
}

/* Runs iterations from the top of an even one while the budget lasts
 * without a check (the instructions would not have made one) and, short of
 * the last, an even number of them.  *done: the loop ended. */
static hop_status
rloop_block(hop__frame *f, const hop__insn *back, int64_t cost, const rloop *rl, const sgroup *sg,
            bool *ran, bool *done)
{
    int64_t *regs = f->regs;
    int64_t left;
    int64_t k = (f->budget - 1) / cost;
    *ran = *done = false;
    if (!rl->wcount)
        left = regs[back->p3] - regs[back->p1];
    else if (!rloop_while_left(rl, &left))
        return HOP_OK;
    if (left < 1 || k < 1)
        return HOP_OK;
    if (k >= left)
        k = left;
    else
        k &= ~(int64_t)1;
    if (k < 1)
        return HOP_OK;
    const hop__fgroup *g = rl->g;
    int a = g->reg_arg[g->nsteps];
    /* after an odd number the result is where the even iteration writes */
    hop__freg_loop(g, g->small_n, k, sg[0].in, rl->inc, sg[0].in[a],
                   (float *)(k & 1 ? sg[0].out : (void *)(uintptr_t)sg[0].in[a]));
    f->budget -= k * cost;
    if (rl->wcount) {
        /* the last iteration wrote c + k*step, the one before it c + (k-1)*step
         * (no wrap: rloop_while_left), into the other buffer */
        int64_t c, last;
        memcpy(&c, rl->cnt[0], sizeof c);
        last = c + k * rl->step;
        c = last - rl->step;
        memcpy(rl->cnt[k & 1], &last, sizeof last);
        memcpy(rl->cnt[(k & 1) ^ 1], &c, sizeof c);
        *(hop__bool *)rl->test = k < left;
    } else {
        regs[back->p1] += k - 1;
        for (int i = 0; i < rl->nints; i++) {
            const sop *o = rl->ints[i];
            if (o->run == op_move)
                hop__reg_move(regs, o->p1, o->p2);
            else
                hop__reg_put(regs, o->p1, o->i64);
        }
        regs[back->p1]++;
    }
    *ran = true;
    if (k == left) {
        if (k & 1)
            straight_settle(f, &f->plan->code[back->p2], back);
        *done = true;
    }
    return HOP_OK;
}

/* The iterations of a decoded body: even ones run ops[0], odd ones ops[1].
 * The budget is charged once per iteration, as much as the instructions
 * would.  Inlined into its two callers, so the loop without a register
 * loop (rl NULL) stays as it was. */
static inline __attribute__((always_inline)) hop_status
straight_fast(hop__frame *f, const hop__insn *back, int64_t cost, const sop (*ops)[STRAIGHT_MAXOPS],
              const stest *test, const rloop *rl, const sgroup *sg)
{
    int64_t *regs = f->regs;
    hop_status st;
    for (;;) {
        if (rl != NULL) {
            bool ran, done;
            if ((st = rloop_block(f, back, cost, rl, sg, &ran, &done)) != HOP_OK || done)
                return st;
            if (ran)
                continue;
        }
        for (int p = 0; p < 2; p++) {
            bool more;
            if ((f->budget -= cost) <= 0 && (st = hop__interrupt_check(f)) != HOP_OK)
                return st;
            if ((st = ops[p][0].run(ops[p], regs)) != HOP_OK ||
                (st = straight_test(f, back, &test[p], &more)) != HOP_OK)
                return st;
            if (!more) {
                if (p == 0)
                    straight_settle(f, &f->plan->code[back->p2], back);
                return HOP_OK;
            }
        }
    }
}

static hop_status
straight_reg(hop__frame *f, const hop__insn *back, int64_t cost, const sop (*ops)[STRAIGHT_MAXOPS],
             const stest *test, const rloop *rl, const sgroup *sg)
{
    return straight_fast(f, back, cost, ops, test, rl, sg);
}

hop_status
hop__run_straight(hop__frame *f, const hop__insn *back)
{
    const hop__insn *body = &f->plan->code[back->p2];
    int64_t cost = (int64_t)(back - body) + 1;
    _Alignas(64) hop__ftile tiles[HOP__F_MAXREGS]; /* the groups' registers */
    sop ops[2][STRAIGHT_MAXOPS];
    stest test[2];
    sgroup sg[2];
    smap m;
    m.n = 0;
    bool decoded = decode_iteration(f, body, back, tiles, &m, ops[0], &test[0], &sg[0]) &&
                   decode_iteration(f, body, back, tiles, &m, ops[1], &test[1], &sg[1]);
    for (int j = 0; decoded && j < m.n; j++)
        decoded = m.data[j] == f->slots[m.slot[j]].data;
    if (!decoded)
        return straight_slow(f, body, back, cost, tiles);
    rloop rl;
    if (rloop_plan(&rl, back, (const sop(*)[STRAIGHT_MAXOPS])ops, test, sg))
        return straight_reg(f, back, cost, (const sop(*)[STRAIGHT_MAXOPS])ops, test, &rl, sg);
    return straight_fast(f, back, cost, (const sop(*)[STRAIGHT_MAXOPS])ops, test, NULL, NULL);
}
