/*
 * runtime/fused_reg.c - the register kernel of fused groups: a group whose
 * steps form one chain over f32 (each step reads the step before it, and
 * nothing else reads that result) runs all of its steps on a few vector
 * registers, a vector of the output at a time, instead of one pass per
 * step over a tile in L1 (fused_exec.c's run_tiles) or one call per step
 * (its small runner).
 *
 * The arithmetic it runs inline (+ - * /, maximum, minimum, neg, abs, relu)
 * is each element's one IEEE operation or compare-and-select, written as the
 * vector functions of elementwise.c write it (same operand order, same NaN
 * and signed-zero rules), so results are those bits.  Any other f32 step (exp,
 * tanh, pow, ...) calls its own vector function over a chunk of CHUNK
 * elements: the math backend gives the same bits whatever the chunk
 * (vmath_sleef.c pads its tails), so the group's results do not change.
 *
 * hop__fgroup_seal marks the groups (hop__freg_plan); run_tiles, the small
 * runner and straight loops run them through hop__freg_run.  The kernel is
 * built at three widths (AVX-512, AVX2, SSE2), picked once at run time;
 * HOP_SIMD=baseline picks SSE2, as it does for straight loops.
 */
#include "runtime/vm_impl.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 512 /* elements between the calls of a non-inline step */

/* The register kernel's code of a step (hop__fgroup.reg_code).  _AO: the
 * chain's value is the op's first operand, the other one its second; _OA:
 * the other way round. */
enum {
    RK_NONE,
    RK_ADD_AO,
    RK_ADD_OA,
    RK_SUB_AO,
    RK_SUB_OA,
    RK_MUL_AO,
    RK_MUL_OA,
    RK_DIV_AO,
    RK_DIV_OA,
    RK_MAX_AO,
    RK_MAX_OA,
    RK_MIN_AO,
    RK_MIN_OA,
    RK_NEG,
    RK_ABS,
    RK_RELU,
    RK_CALL, /* the step's vector function over a chunk */
};

/* A binary step's code with RK_SPLAT: its other operand is one element,
 * spread into a register once per pass of the step loop instead of loaded
 * per vector.  A constant's is set when the group is sealed; a lone input
 * element's per run (bind), since an input is one element or not only at
 * run time. */
#define RK_SPLAT 32
_Static_assert(RK_CALL < RK_SPLAT, "the step codes fit below RK_SPLAT");

static int
binary_code(hop_op op, bool acc_first)
{
    int base;
    switch (op) {
    case HOP_OP_add:
        base = RK_ADD_AO;
        break;
    case HOP_OP_sub:
        base = RK_SUB_AO;
        break;
    case HOP_OP_mul:
        base = RK_MUL_AO;
        break;
    case HOP_OP_div:
        base = RK_DIV_AO;
        break;
    case HOP_OP_maximum:
        base = RK_MAX_AO;
        break;
    case HOP_OP_minimum:
        base = RK_MIN_AO;
        break;
    default:
        return RK_NONE;
    }
    return acc_first ? base : base + 1;
}

static int
unary_code(hop_op op)
{
    switch (op) {
    case HOP_OP_neg:
        return RK_NEG;
    case HOP_OP_abs:
        return RK_ABS;
    case HOP_OP_relu:
        return RK_RELU;
    default:
        return RK_NONE;
    }
}

/* HOP_FUSED_REG=0 turns the kernel off (groups run as before: tests compare
 * the two; measuring), read once. */
static bool
reg_enabled(void)
{
    static int on; /* 0: not read yet; 1 yes; -1 no (a race reads twice) */
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v == 0) {
        const char *env = getenv("HOP_FUSED_REG");
        v = env != NULL && strcmp(env, "0") == 0 ? -1 : 1;
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v > 0;
}

/* reg_arg[s] and reg_splat[s] for operand op (an input or a constant) */
static void
plan_arg(hop__fgroup *g, int s, const hop__fopnd *op)
{
    if (op->src == HOP__F_INPUT) {
        g->reg_arg[s] = (int8_t)op->idx;
        return;
    }
    g->reg_arg[s] = -1;
    memcpy(&g->reg_splat[s], op->val, sizeof g->reg_splat[s]);
}

void
hop__freg_plan(hop__fgroup *g)
{
    g->reg = g->reg_inline = false;
    if (!reg_enabled())
        return;
    if (g->has_sym || !g->same_dtypes || g->odtype != HOP_F32 || g->nsteps < 1 || g->nxout > 0)
        return;
    for (int k = 0; k < g->ninputs; k++)
        if (g->in_dtype[k] != HOP_F32)
            return;
    int inline_steps = 0;
    for (int s = 0; s < g->nsteps; s++) {
        const hop__fstep *st = &g->steps[s];
        if (st->dtype != HOP_F32 || st->fdtype != HOP_F32 || st->opdtype != HOP_F32 ||
            st->nin < 1 || st->nin > 2 || st->fn == NULL)
            return;
        /* one chain: step s > 0 reads step s - 1's register, once; step 0
         * reads none (the lowering gives every register one reader) */
        int regs = 0, at = -1;
        for (int i = 0; i < st->nin; i++) {
            if (st->in[i].need != HOP_F32 || st->in[i].have != HOP_F32)
                return;
            if (st->in[i].src == HOP__F_REG) {
                if (s == 0 || st->in[i].idx != g->steps[s - 1].out)
                    return;
                regs++;
                at = i;
            }
        }
        if (regs != (s > 0))
            return;
        int code = RK_NONE;
        if (st->nin == 2 && st->fn == hop__vfn_binary(st->op, HOP_F32))
            code = binary_code(st->op, s == 0 || at == 0);
        else if (st->nin == 1 && st->fn == hop__vfn_unary(st->op, HOP_F32))
            code = unary_code(st->op);
        g->reg_code[s] = (uint8_t)(code != RK_NONE ? code : RK_CALL);
        inline_steps += code != RK_NONE;
        /* the other operand; step 0's first is where the chain starts */
        if (s == 0)
            plan_arg(g, g->nsteps, &st->in[0]);
        int i = s == 0 ? 1 : st->in[0].src == HOP__F_REG;
        if (i < st->nin)
            plan_arg(g, s, &st->in[i]);
        else
            g->reg_arg[s] = -2;
        /* a binary step's constant: spread once a pass (kernel below) */
        if (g->reg_arg[s] == -1 && code != RK_NONE && code < RK_NEG)
            g->reg_code[s] |= RK_SPLAT;
    }
    /* one step, or calls alone, gain nothing from registers (a copy, a
     * lone a + b, exp(tanh(x))) */
    g->reg = inline_steps > 0 && g->nsteps > 1;
    g->reg_inline = inline_steps == g->nsteps;
}

/* ---------------------------------------------------------------- kernel */

/* The period of a periodic operand (hop__freg_run's inc > 1): CHUNK, so a
 * call step's chunk at j reads the whole period from j & (CHUNK - 1) = 0,
 * and every block of U vectors (U * L divides it) lies inside one period. */
_Static_assert(HOP__FREG_PERIOD == CHUNK, "a period is one chunk");

/* One run of a group: each input as a pointer and an index mask (-1: it
 * steps; 0: one element; P - 1: periodic with period P), and the steps'
 * codes: the group's own (a constant operand's RK_SPLAT set when it was
 * sealed), or, when an input is one element, copies with its steps' bit set
 * (bind). */
typedef struct rk_ctx {
    const hop__fgroup *g;
    const uint8_t *code;
    const float *ip[HOP__F_MAXIN];
    int64_t im[HOP__F_MAXIN];
    uint8_t lone_code[HOP__F_MAXSTEPS];
} rk_ctx;

/* Step k's other operand at element j of c's run (a constant: its one
 * element) */
static inline const float *
rk_operand_at(const rk_ctx *c, int k, int64_t j)
{
    int a = c->g->reg_arg[k];
    return a >= 0 ? c->ip[a] + (j & c->im[a]) : &c->g->reg_splat[k];
}

/* Step k's other operand (k = the group's nsteps: where the chain starts) at
 * element j of c's run: its pointer into *p, its mask into *m. */
static inline void
rk_operand(const rk_ctx *c, int k, int64_t j, const float **p, int64_t *m)
{
    int a = c->g->reg_arg[k];
    if (a >= 0) {
        *p = c->ip[a] + (j & c->im[a]);
        *m = c->im[a];
    } else {
        *p = &c->g->reg_splat[k]; /* -2 (a unary step): never read */
        *m = 0;
    }
}

/* x & m | y & ~m on the bits */
#define SEL(V, VI, m, x, y) ((V)(((VI)(x) & (m)) | ((VI)(y) & ~(m))))

#define EACH(U, stmt) _Pragma("GCC unroll 16") for (int u = 0; u < (U); u++) stmt

/* v's lanes each the float f, its bits as they are (no arithmetic: -0.0
 * and NaN payloads stay) */
#define RK_BCAST(V, VI, v, f) (v) = __builtin_shuffle((V){(f)}, (VI){0})

/* Both cases of a binary code: o, the operand of vector u, loaded by
 * LOAD(o, u) or spread from *q once. */
#define RK_BIN(V, VI, U, CODE, q, LOAD, stmt)                                                      \
    case CODE:                                                                                     \
        EACH(U, {                                                                                  \
            V o;                                                                                   \
            LOAD(o, u);                                                                            \
            stmt;                                                                                  \
        });                                                                                        \
        break;                                                                                     \
    case CODE | RK_SPLAT: {                                                                        \
        V o;                                                                                       \
        RK_BCAST(V, VI, o, *(q));                                                                  \
        EACH(U, stmt;);                                                                            \
        break;                                                                                     \
    }

/* x[u] = code(x[u], o[u]) for u < U: the ops as elementwise.c's vector
 * functions compute them (the same operand order and NaN rules) */
#define RK_APPLY(V, VI, U, code, x, q, LOAD)                                                       \
    switch ((code) & (2 * RK_SPLAT - 1)) { /* (a jump table without a bounds test) */              \
        RK_BIN(V, VI, U, RK_ADD_AO, q, LOAD, x[u] = x[u] + o)                                      \
        RK_BIN(V, VI, U, RK_ADD_OA, q, LOAD, x[u] = o + x[u])                                      \
        RK_BIN(V, VI, U, RK_SUB_AO, q, LOAD, x[u] = x[u] - o)                                      \
        RK_BIN(V, VI, U, RK_SUB_OA, q, LOAD, x[u] = o - x[u])                                      \
        RK_BIN(V, VI, U, RK_MUL_AO, q, LOAD, x[u] = x[u] * o)                                      \
        RK_BIN(V, VI, U, RK_MUL_OA, q, LOAD, x[u] = o * x[u])                                      \
        RK_BIN(V, VI, U, RK_DIV_AO, q, LOAD, x[u] = x[u] / o)                                      \
        RK_BIN(V, VI, U, RK_DIV_OA, q, LOAD, x[u] = o / x[u])                                      \
        /* FMAX(x, o) */                                                                           \
        RK_BIN(V, VI, U, RK_MAX_AO, q, LOAD,                                                       \
               x[u] = SEL(V, VI, (x[u] != x[u]) | ((o == o) & (x[u] > o)), x[u], o))               \
        /* FMAX(o, x) */                                                                           \
        RK_BIN(V, VI, U, RK_MAX_OA, q, LOAD,                                                       \
               x[u] = SEL(V, VI, (o != o) | ((x[u] == x[u]) & (o > x[u])), o, x[u]))               \
        RK_BIN(V, VI, U, RK_MIN_AO, q, LOAD,                                                       \
               x[u] = SEL(V, VI, (x[u] != x[u]) | ((o == o) & (x[u] < o)), x[u], o))               \
        RK_BIN(V, VI, U, RK_MIN_OA, q, LOAD,                                                       \
               x[u] = SEL(V, VI, (o != o) | ((x[u] == x[u]) & (o < x[u])), o, x[u]))               \
    case RK_NEG:                                                                                   \
        EACH(U, x[u] = -x[u];);                                                                    \
        break;                                                                                     \
    case RK_ABS: /* fabsf */                                                                       \
        EACH(U, x[u] = (V)((VI)x[u] & 0x7fffffff););                                               \
        break;                                                                                     \
    case RK_RELU: /* x > 0 || x != x ? x : +0, i.e. !(x <= 0): one compare */                      \
        EACH(U, x[u] = (V)((VI)x[u] & ~(x[u] <= 0)););                                             \
        break;                                                                                     \
    default: /* RK_CALL never comes here (the callers split at it) */                              \
        __builtin_unreachable();                                                                   \
    }

/* Loads of vector u of an operand at q: whole vectors (L lanes), or the r
 * lanes of a short last vector with the lanes past r repeating q[0]. */
#define RK_LOADV(o, u) memcpy(&(o), q + (u)*L, sizeof(o))
#define RK_LOADR(o, u)                                                                             \
    do {                                                                                           \
        float t_[L];                                                                               \
        for (int l_ = 0; l_ < L; l_++)                                                             \
            t_[l_] = q[l_ < r ? l_ : 0];                                                           \
        memcpy(&(o), t_, sizeof(o));                                                               \
    } while (0)

/* Step k's operand at element i of the seg: from the tables the seg made
 * (a seg of more than one block), or from c (one pass: no tables to make) */
#define RK_OPND_TAB(k) (op[k] + (i & om[k]))
#define RK_OPND_CTX(k) rk_operand_at(c, k, j + i)

/* One pass of steps [s, e) over U vectors at element i (a multiple of U * L,
 * or inside a block that is: see HOP__FREG_PERIOD), loaded by LOAD, the
 * chain's value from a0 (mask am) into x, operands by OPND. */
#define RK_PASS(V, VI, U, LOAD, OPND, x)                                                           \
    do {                                                                                           \
        if (am == 0) {                                                                             \
            V v_;                                                                                  \
            RK_BCAST(V, VI, v_, *a0);                                                              \
            EACH(U, x[u] = v_;);                                                                   \
        } else {                                                                                   \
            const float *q = a0 + (i & am);                                                        \
            EACH(U, LOAD(x[u], u););                                                               \
        }                                                                                          \
        for (int k = s; k < e; k++) {                                                              \
            const float *q = OPND(k);                                                              \
            RK_APPLY(V, VI, U, code[k], x, q, LOAD)                                                \
        }                                                                                          \
    } while (0)

/* U whole vectors at element i: the pass, then the store */
#define RK_BLOCK(V, VI, U, OPND)                                                                   \
    do {                                                                                           \
        V x[U];                                                                                    \
        RK_PASS(V, VI, U, RK_LOADV, OPND, x);                                                      \
        EACH(U, memcpy(dst + i + u * L, &x[u], sizeof x[u]););                                     \
    } while (0)

/* iters iterations of steps [0, e) on U vectors at t (in place), their
 * operands at ob (whole blocks, never spread) */
#define RK_ITERS(V, VI, U, L, c, e, iters, ob, t)                                                  \
    do {                                                                                           \
        V x[U];                                                                                    \
        EACH(U, memcpy(&x[u], (t) + u * (L), sizeof x[u]););                                       \
        for (int64_t it = 0; it < (iters); it++)                                                   \
            for (int k = 0; k < (e); k++) {                                                        \
                const float *q = (ob)[k];                                                          \
                RK_APPLY(V, VI, U, (c)->code[k] & ~RK_SPLAT, x, q, RK_LOADV)                       \
            }                                                                                      \
        EACH(U, memcpy((t) + u * (L), &x[u], sizeof x[u]););                                       \
    } while (0)

/*
 * RK_THREADED(sfx, V, VI, ATTR): thr_<sfx>, one vector at element i of the
 * seg (RK_BLOCK's pass of U = 1 with operands from c), its step dispatch
 * threaded (GNU C's labels as values).  Each step's code ends in its own
 * jump to the next step's: a step is one taken branch, not three (the
 * shared switch jump, the jump back, the loop's), and the predictor learns
 * the successor of each kind of step at that step's own jump.  With the
 * switch's one shared jump, plan_op's chain ran 2.7 or 3.1 ns/op on the
 * same instructions depending on where the linker put the kernel.  The
 * ops are RK_APPLY's, written the same way (its statements, in order).
 */
#if defined(__GNUC__)
#define RK_T_NEXT                                                                                  \
    do {                                                                                           \
        if (++k == e)                                                                              \
            goto done;                                                                             \
        q = rk_operand_at(c, k, at);                                                               \
        goto *next[code[k] & (2 * RK_SPLAT - 1)];                                                  \
    } while (0)
#define RK_T_BIN(V, VI, name, stmt)                                                                \
    name : {                                                                                       \
        V o;                                                                                       \
        memcpy(&o, q, sizeof o);                                                                   \
        stmt;                                                                                      \
    }                                                                                              \
    RK_T_NEXT;                                                                                     \
    name##_s:                                                                                      \
    {                                                                                              \
        V o;                                                                                       \
        RK_BCAST(V, VI, o, *q);                                                                    \
        stmt;                                                                                      \
    }                                                                                              \
    RK_T_NEXT;
#define RK_T_LABELS(CODE, name) [CODE] = &&name, [CODE | RK_SPLAT] = &&name##_s
#define RK_THREADED(sfx, V, VI, ATTR)                                                              \
    ATTR HOP__SEG_ALIGN static void thr_##sfx(const rk_ctx *c, int s, int e, int64_t at,           \
                                              const float *a0, int64_t am, int64_t i, float *dst)  \
    {                                                                                              \
        static const void *const next[2 * RK_SPLAT] = {RK_T_LABELS(RK_ADD_AO, add_ao),             \
                                                       RK_T_LABELS(RK_ADD_OA, add_oa),             \
                                                       RK_T_LABELS(RK_SUB_AO, sub_ao),             \
                                                       RK_T_LABELS(RK_SUB_OA, sub_oa),             \
                                                       RK_T_LABELS(RK_MUL_AO, mul_ao),             \
                                                       RK_T_LABELS(RK_MUL_OA, mul_oa),             \
                                                       RK_T_LABELS(RK_DIV_AO, div_ao),             \
                                                       RK_T_LABELS(RK_DIV_OA, div_oa),             \
                                                       RK_T_LABELS(RK_MAX_AO, max_ao),             \
                                                       RK_T_LABELS(RK_MAX_OA, max_oa),             \
                                                       RK_T_LABELS(RK_MIN_AO, min_ao),             \
                                                       RK_T_LABELS(RK_MIN_OA, min_oa),             \
                                                       [RK_NEG] = &&neg,                           \
                                                       [RK_ABS] = &&abs_,                          \
                                                       [RK_RELU] = &&relu};                        \
        const uint8_t *code = c->code;                                                             \
        const int u = 0;                                                                           \
        V x[1];                                                                                    \
        if (am == 0) {                                                                             \
            RK_BCAST(V, VI, x[0], *a0);                                                            \
        } else {                                                                                   \
            memcpy(&x[0], a0 + (i & am), sizeof x[0]);                                             \
        }                                                                                          \
        int k = s;                                                                                 \
        if (k == e)                                                                                \
            goto done;                                                                             \
        const float *q = rk_operand_at(c, k, at);                                                  \
        goto *next[code[k] & (2 * RK_SPLAT - 1)];                                                  \
        RK_T_BIN(V, VI, add_ao, x[u] = x[u] + o)                                                   \
        RK_T_BIN(V, VI, add_oa, x[u] = o + x[u])                                                   \
        RK_T_BIN(V, VI, sub_ao, x[u] = x[u] - o)                                                   \
        RK_T_BIN(V, VI, sub_oa, x[u] = o - x[u])                                                   \
        RK_T_BIN(V, VI, mul_ao, x[u] = x[u] * o)                                                   \
        RK_T_BIN(V, VI, mul_oa, x[u] = o * x[u])                                                   \
        RK_T_BIN(V, VI, div_ao, x[u] = x[u] / o)                                                   \
        RK_T_BIN(V, VI, div_oa, x[u] = o / x[u])                                                   \
        RK_T_BIN(V, VI, max_ao,                                                                    \
                 x[u] = SEL(V, VI, (x[u] != x[u]) | ((o == o) & (x[u] > o)), x[u], o))             \
        RK_T_BIN(V, VI, max_oa,                                                                    \
                 x[u] = SEL(V, VI, (o != o) | ((x[u] == x[u]) & (o > x[u])), o, x[u]))             \
        RK_T_BIN(V, VI, min_ao,                                                                    \
                 x[u] = SEL(V, VI, (x[u] != x[u]) | ((o == o) & (x[u] < o)), x[u], o))             \
        RK_T_BIN(V, VI, min_oa,                                                                    \
                 x[u] = SEL(V, VI, (o != o) | ((x[u] == x[u]) & (o < x[u])), o, x[u]))             \
    neg:                                                                                           \
        x[u] = -x[u];                                                                              \
        RK_T_NEXT;                                                                                 \
    abs_:                                                                                          \
        x[u] = (V)((VI)x[u] & 0x7fffffff);                                                         \
        RK_T_NEXT;                                                                                 \
    relu:                                                                                          \
        x[u] = (V)((VI)x[u] & ~(x[u] <= 0));                                                       \
        RK_T_NEXT;                                                                                 \
    done:                                                                                          \
        memcpy(dst + i, &x[0], sizeof x[0]);                                                       \
    }
#define RK_ONE(sfx, V, VI) thr_##sfx(c, s, e, j + i, a0, am, i, dst)
#else
#define RK_THREADED(sfx, V, VI, ATTR)
#define RK_ONE(sfx, V, VI) RK_BLOCK(V, VI, 1, RK_OPND_CTX)
#endif

/*
 * KERNEL(sfx, V, VI, U, ATTR): seg_<sfx>, the inline steps [s, e) over
 * elements [j, j + m) of the group, U vectors V at a time (VI: the same
 * lanes as int32), each in a register through all of the steps: the
 * chain's value from src (at element 0 of the chunk; NULL: where the chain
 * starts, at element j) into dst.  The fewer the steps, the more vectors
 * one pass of the step dispatch must carry to pay for it; the elements
 * past the last U vectors go by 4, 2 and 1 vectors, then one short vector.
 */
#if defined(__GNUC__)
/* Each kernel starts on a cache line, so where its dispatch loop falls
 * (the indirect jump of each step, the loop head) depends on its own code
 * only, not on how much code the linker put before it: placed 16 bytes off
 * a line by an unrelated change, the AVX-512 kernel ran the plan_op chain
 * 13% slower (2.68 -> 3.05 ns/op on the same instructions). */
#define HOP__SEG_ALIGN __attribute__((aligned(64)))
#else
#define HOP__SEG_ALIGN
#endif
#define KERNEL(sfx, V, VI, U, ATTR)                                                                \
    RK_THREADED(sfx, V, VI, ATTR)                                                                  \
    ATTR HOP__SEG_ALIGN static void seg_##sfx(const rk_ctx *c, int s, int e, int64_t j, int64_t m, \
                                              const float *src, float *dst)                        \
    {                                                                                              \
        enum { L = (int)(sizeof(V) / sizeof(float)) };                                             \
        _Static_assert(HOP__FREG_PERIOD % (U * L) == 0, "a block inside a period");                \
        const uint8_t *code = c->code;                                                             \
        const float *a0 = src;                                                                     \
        int64_t am = -1;                                                                           \
        if (src == NULL)                                                                           \
            rk_operand(c, c->g->nsteps, j, &a0, &am);                                              \
        int64_t i = 0;                                                                             \
        if (m >= 2 * U * L) {                                                                      \
            const float *op[HOP__F_MAXSTEPS];                                                      \
            int64_t om[HOP__F_MAXSTEPS];                                                           \
            for (int k = s; k < e; k++)                                                            \
                rk_operand(c, k, j, &op[k], &om[k]);                                               \
            for (; i + U * L <= m; i += U * L)                                                     \
                RK_BLOCK(V, VI, U, RK_OPND_TAB);                                                   \
        } else if (m >= U * L) {                                                                   \
            RK_BLOCK(V, VI, U, RK_OPND_CTX);                                                       \
            i += U * L;                                                                            \
        }                                                                                          \
        if (U > 4 && i + 4 * L <= m) {                                                             \
            RK_BLOCK(V, VI, (U > 4 ? 4 : 1), RK_OPND_CTX);                                         \
            i += 4 * L;                                                                            \
        }                                                                                          \
        if (U > 2 && i + 2 * L <= m) {                                                             \
            RK_BLOCK(V, VI, (U > 2 ? 2 : 1), RK_OPND_CTX);                                         \
            i += 2 * L;                                                                            \
        }                                                                                          \
        if (i + L <= m) {                                                                          \
            RK_ONE(sfx, V, VI);                                                                    \
            i += L;                                                                                \
        }                                                                                          \
        if (i < m) {                                                                               \
            int64_t r = m - i;                                                                     \
            V x[1];                                                                                \
            RK_PASS(V, VI, 1, RK_LOADR, RK_OPND_CTX, x);                                           \
            float t[L];                                                                            \
            memcpy(t, &x[0], sizeof x[0]);                                                         \
            memcpy(dst + i, t, (size_t)r * sizeof(float));                                         \
        }                                                                                          \
    }                                                                                              \
    /* iters iterations of all steps (inline ones) over m elements: the                            \
     * chain starts from src, then from its own result; into dst.  Up to 4                         \
     * vectors run side by side (their chains overlap); operands come from                         \
     * padded copies, so the lanes past m compute on zeros. */                                     \
    ATTR static void loop_##sfx(const rk_ctx *c, int e, int64_t iters, int64_t m,                  \
                                const float *src, float *dst)                                      \
    {                                                                                              \
        enum { L = (int)(sizeof(V) / sizeof(float)), B = 4 * L };                                  \
        _Alignas(64) float ob[HOP__F_MAXSTEPS][B];                                                 \
        const float *op[HOP__F_MAXSTEPS];                                                          \
        int64_t om[HOP__F_MAXSTEPS];                                                               \
        for (int k = 0; k < e; k++)                                                                \
            rk_operand(c, k, 0, &op[k], &om[k]);                                                   \
        for (int64_t j = 0; j < m; j += B) {                                                       \
            int64_t r = m - j < B ? m - j : B;                                                     \
            for (int k = 0; k < e; k++)                                                            \
                for (int q = 0; q < B; q++)                                                        \
                    ob[k][q] = om[k] ? (q < r ? op[k][j + q] : 0.0f) : op[k][0];                   \
            float t[B];                                                                            \
            for (int q = 0; q < B; q++)                                                            \
                t[q] = q < r ? src[j + q] : 0.0f;                                                  \
            /* as few vectors as hold the elements: each costs throughput */                       \
            if (r <= L)                                                                            \
                RK_ITERS(V, VI, 1, L, c, e, iters, ob, t);                                         \
            else if (r <= 2 * L)                                                                   \
                RK_ITERS(V, VI, 2, L, c, e, iters, ob, t);                                         \
            else                                                                                   \
                RK_ITERS(V, VI, 4, L, c, e, iters, ob, t);                                         \
            memcpy(dst + j, t, (size_t)r * sizeof(float));                                         \
        }                                                                                          \
    }

typedef void (*seg_fn)(const rk_ctx *c, int s, int e, int64_t j, int64_t m, const float *src,
                       float *dst);

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
KERNEL(sse, v4f, v4i, 4, )

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_WIDE_RK 1
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
/* 8 vectors a pass at AVX2 too: an operand is a memory operand of its
 * instruction, so the 16 registers hold the 8 chain values and temporaries */
KERNEL(avx2, v8f, v8i, 8, __attribute__((target("avx2"))))
KERNEL(avx512, v16f, v16i, 8, __attribute__((target("avx512f"))))
#endif

typedef struct rk_width {
    seg_fn seg;
    void (*loop)(const rk_ctx *c, int e, int64_t iters, int64_t m, const float *src, float *dst);
} rk_width;

static const rk_width width_sse = {seg_sse, loop_sse};
#ifdef HAVE_WIDE_RK
static const rk_width width_avx2 = {seg_avx2, loop_avx2};
static const rk_width width_avx512 = {seg_avx512, loop_avx512};
#endif

/* The widest kernel the CPU runs (HOP_SIMD=baseline: SSE2, as straight.c). */
static const rk_width *
width_pick(void)
{
    static const rk_width *picked; /* a race picks twice, the same */
    const rk_width *w = __atomic_load_n(&picked, __ATOMIC_RELAXED);
    if (w != NULL)
        return w;
    w = &width_sse;
#ifdef HAVE_WIDE_RK
    const char *env = getenv("HOP_SIMD");
    __builtin_cpu_init();
    if (env == NULL || strcmp(env, "baseline") != 0) {
        if (__builtin_cpu_supports("avx512f"))
            w = &width_avx512;
        else if (__builtin_cpu_supports("avx2"))
            w = &width_avx2;
    }
#endif
    __atomic_store_n(&picked, w, __ATOMIC_RELAXED);
    return w;
}

/* An input's index mask for inc as hop__freg_run takes it. */
static inline int64_t
inc_mask(int64_t inc)
{
    return inc == 0 ? 0 : inc == 1 ? -1 : HOP__FREG_PERIOD - 1;
}

/* c for group g over inputs in (inc as hop__freg_run). */
static void
bind(rk_ctx *c, const hop__fgroup *g, const void *const *in, const int64_t *inc)
{
    bool lone = false;
    c->g = g;
    for (int k = 0; k < g->ninputs; k++) {
        c->ip[k] = in[k];
        c->im[k] = inc_mask(inc[k]);
        lone |= inc[k] == 0;
    }
    c->code = g->reg_code;
    if (!lone)
        return;
    for (int s = 0; s < g->nsteps; s++) {
        int a = g->reg_arg[s];
        uint8_t code = g->reg_code[s];
        c->lone_code[s] = code < RK_NEG && a >= 0 && inc[a] == 0 ? code | RK_SPLAT : code;
    }
    c->code = c->lone_code;
}

bool
hop__freg_inline(const hop__fgroup *g)
{
    return g->reg && g->reg_inline;
}

void
hop__freg_loop(const hop__fgroup *g, int64_t n, int64_t iters, const void *const *in,
               const int64_t *inc, const float *src, float *dst)
{
    const rk_width *w = width_pick();
    rk_ctx c;
    bind(&c, g, in, inc);
    w->loop(&c, g->nsteps, iters, n, src, dst);
}

bool
hop__freg_run(const hop__fgroup *g, int64_t n, void *out, const void *const *in, const int64_t *inc)
{
    const hop__fstep *st0 = &g->steps[0];
    if (g->reg_code[0] == RK_CALL) {
        /* its function needs an operand that steps (run_tiles spreads) */
        bool steps = false;
        for (int i = 0; i < st0->nin; i++)
            steps |= st0->in[i].src == HOP__F_INPUT && inc[st0->in[i].idx];
        if (!steps)
            return false;
    }
    const rk_width *w = width_pick();
    rk_ctx c;
    bind(&c, g, in, inc);
    seg_fn seg = w->seg;
    float *o = out;
    if (g->reg_inline) {
        /* no chunk buffers to fill: one pass over all of it */
        seg(&c, 0, g->nsteps, 0, n, NULL, o);
        return true;
    }
    _Alignas(64) float buf[2][CHUNK];
    for (int64_t j = 0; j < n; j += CHUNK) {
        int64_t m = n - j < CHUNK ? n - j : CHUNK;
        const float *src = NULL;
        for (int s = 0; s < g->nsteps;) {
            float *spare = src == buf[0] ? buf[1] : buf[0];
            if (g->reg_code[s] == RK_CALL) {
                const hop__fstep *st = &g->steps[s];
                const void *a[2];
                int ai[2];
                for (int i = 0; i < st->nin; i++) {
                    const hop__fopnd *op = &st->in[i];
                    if (op->src == HOP__F_REG) {
                        a[i] = src;
                        ai[i] = 1;
                    } else if (op->src == HOP__F_INPUT && inc[op->idx]) {
                        /* a periodic input: its period from j (a multiple) */
                        a[i] = (const float *)in[op->idx] + (j & inc_mask(inc[op->idx]));
                        ai[i] = 1;
                    } else {
                        a[i] = op->src == HOP__F_INPUT ? in[op->idx] : (const void *)op->val;
                        ai[i] = 0;
                    }
                }
                float *dst = s == g->nsteps - 1 ? o + j : spare;
                st->fn(m, dst, a, ai);
                src = dst;
                s++;
            } else {
                int e = s;
                while (e < g->nsteps && g->reg_code[e] != RK_CALL)
                    e++;
                float *dst = e == g->nsteps ? o + j : spare;
                seg(&c, s, e, j, m, src, dst);
                src = dst;
                s = e;
            }
        }
    }
    return true;
}
