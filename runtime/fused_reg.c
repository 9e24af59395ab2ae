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
    float v;
    memcpy(&v, op->val, sizeof v);
    g->reg_arg[s] = -1;
    for (int q = 0; q < 16; q++)
        g->reg_splat[s][q] = v;
}

void
hop__freg_plan(hop__fgroup *g)
{
    g->reg = false;
    if (!reg_enabled())
        return;
    if (g->has_sym || !g->same_dtypes || g->odtype != HOP_F32 || g->nsteps < 1)
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
            plan_arg(g, HOP__F_MAXSTEPS, &st->in[0]);
        int i = s == 0 ? 1 : st->in[0].src == HOP__F_REG;
        if (i < st->nin)
            plan_arg(g, s, &st->in[i]);
        else
            g->reg_arg[s] = -2;
    }
    /* one step, or calls alone, gain nothing from registers (a copy, a
     * lone a + b, exp(tanh(x))) */
    g->reg = inline_steps > 0 && g->nsteps > 1;
}

/* ---------------------------------------------------------------- kernel */

#define MAXL 16 /* floats in the widest vector (AVX-512) */

/* One run of a group: where the chain starts (step 0's first operand) and
 * each step's other operand, as a pointer and an index mask (-1: it steps;
 * 0: one element, spread into spl first). */
typedef struct rk_ctx {
    const uint8_t *code;
    const float *start;
    int64_t start_mask;
    const float *p[HOP__F_MAXSTEPS];
    int64_t mask[HOP__F_MAXSTEPS];
    _Alignas(64) float spl[HOP__F_MAXIN][MAXL]; /* lone input elements spread */
} rk_ctx;

/* x & m | y & ~m on the bits */
#define SEL(V, VI, m, x, y) ((V)(((VI)(x) & (m)) | ((VI)(y) & ~(m))))

/* x[u] = code(x[u], o[u]) for u < U: the ops as elementwise.c's vector
 * functions compute them (the same operand order and NaN rules) */
#define EACH(U, stmt) _Pragma("GCC unroll 8") for (int u = 0; u < (U); u++) stmt
#define RK_APPLY(V, VI, U, code, x, o)                                                             \
    switch (code) {                                                                                \
    case RK_ADD_AO:                                                                                \
        EACH(U, x[u] = x[u] + o[u];);                                                              \
        break;                                                                                     \
    case RK_ADD_OA:                                                                                \
        EACH(U, x[u] = o[u] + x[u];);                                                              \
        break;                                                                                     \
    case RK_SUB_AO:                                                                                \
        EACH(U, x[u] = x[u] - o[u];);                                                              \
        break;                                                                                     \
    case RK_SUB_OA:                                                                                \
        EACH(U, x[u] = o[u] - x[u];);                                                              \
        break;                                                                                     \
    case RK_MUL_AO:                                                                                \
        EACH(U, x[u] = x[u] * o[u];);                                                              \
        break;                                                                                     \
    case RK_MUL_OA:                                                                                \
        EACH(U, x[u] = o[u] * x[u];);                                                              \
        break;                                                                                     \
    case RK_DIV_AO:                                                                                \
        EACH(U, x[u] = x[u] / o[u];);                                                              \
        break;                                                                                     \
    case RK_DIV_OA:                                                                                \
        EACH(U, x[u] = o[u] / x[u];);                                                              \
        break;                                                                                     \
    case RK_MAX_AO: /* FMAX(x, o) */                                                               \
        EACH(U,                                                                                    \
             x[u] = SEL(V, VI, (x[u] != x[u]) | ((o[u] == o[u]) & (x[u] > o[u])), x[u], o[u]););   \
        break;                                                                                     \
    case RK_MAX_OA: /* FMAX(o, x) */                                                               \
        EACH(U,                                                                                    \
             x[u] = SEL(V, VI, (o[u] != o[u]) | ((x[u] == x[u]) & (o[u] > x[u])), o[u], x[u]););   \
        break;                                                                                     \
    case RK_MIN_AO:                                                                                \
        EACH(U,                                                                                    \
             x[u] = SEL(V, VI, (x[u] != x[u]) | ((o[u] == o[u]) & (x[u] < o[u])), x[u], o[u]););   \
        break;                                                                                     \
    case RK_MIN_OA:                                                                                \
        EACH(U,                                                                                    \
             x[u] = SEL(V, VI, (o[u] != o[u]) | ((x[u] == x[u]) & (o[u] < x[u])), o[u], x[u]););   \
        break;                                                                                     \
    case RK_NEG:                                                                                   \
        EACH(U, x[u] = -x[u];);                                                                    \
        break;                                                                                     \
    case RK_ABS: /* fabsf */                                                                       \
        EACH(U, x[u] = (V)((VI)x[u] & 0x7fffffff););                                               \
        break;                                                                                     \
    default: /* RK_RELU: x > 0 || x != x ? x : +0 */                                               \
        EACH(U, x[u] = (V)((VI)x[u] & ((x[u] > 0) | (x[u] != x[u]))););                            \
        break;                                                                                     \
    }

/* U vectors of an operand from element i on (index mask msk) */
#define RK_LOADU(U, L, x, p, i, msk)                                                               \
    EACH(U, memcpy(&x[u], (p) + (((i) + u * (L)) & (msk)), sizeof x[u]);)

/* One vector of an operand at element i into x[0], its lanes past r (a
 * short last vector) repeating element i. */
#define RK_LOAD1(L, x, p, i, msk, r)                                                               \
    do {                                                                                           \
        if ((r) == (L)) {                                                                          \
            memcpy(&x[0], (p) + ((i) & (msk)), sizeof x[0]);                                       \
        } else {                                                                                   \
            float t_[L];                                                                           \
            for (int q_ = 0; q_ < (L); q_++)                                                       \
                t_[q_] = (p)[((i) + (q_ < (r) ? q_ : 0)) & (msk)];                                 \
            memcpy(&x[0], t_, sizeof x[0]);                                                        \
        }                                                                                          \
    } while (0)

/* iters iterations of steps [0, e) on U vectors at t (in place), their
 * operands at ob */
#define RK_ITERS(V, VI, U, L, c, e, iters, ob, t)                                                  \
    do {                                                                                           \
        V x[U];                                                                                    \
        EACH(U, memcpy(&x[u], (t) + u * (L), sizeof x[u]););                                       \
        for (int64_t it = 0; it < (iters); it++)                                                   \
            for (int k = 0; k < (e); k++) {                                                        \
                V o[U];                                                                            \
                EACH(U, memcpy(&o[u], (ob)[k] + u * (L), sizeof o[u]););                           \
                RK_APPLY(V, VI, U, (c)->code[k], x, o)                                             \
            }                                                                                      \
        EACH(U, memcpy((t) + u * (L), &x[u], sizeof x[u]););                                       \
    } while (0)

/*
 * KERNEL(sfx, V, VI, U, ATTR): seg_<sfx>, the inline steps [s, e) over
 * elements [j, j + m) of the group, U vectors V at a time (VI: the same
 * lanes as int32), each in a register through all of the steps: the
 * chain's value from src (at element 0 of the chunk; NULL: where the chain
 * starts, at element j) into dst.  The fewer the steps, the more vectors
 * one pass of the step dispatch must carry to pay for it.
 */
#define KERNEL(sfx, V, VI, U, ATTR)                                                                \
    /* v in each lane of the vector at dst */                                                      \
    ATTR static void spread_##sfx(float *dst, float v)                                             \
    {                                                                                              \
        V x;                                                                                       \
        for (int q = 0; q < (int)(sizeof(V) / sizeof(float)); q++)                                 \
            x[q] = v;                                                                              \
        memcpy(dst, &x, sizeof x);                                                                 \
    }                                                                                              \
    ATTR static void seg_##sfx(const rk_ctx *c, int s, int e, int64_t j, int64_t m,                \
                               const float *src, float *dst)                                       \
    {                                                                                              \
        enum { L = (int)(sizeof(V) / sizeof(float)) };                                             \
        const uint8_t *code = c->code;                                                             \
        const float *a0 = src ? src : c->start + (j & c->start_mask);                              \
        int64_t am = src ? -1 : c->start_mask;                                                     \
        const float *op[HOP__F_MAXSTEPS];                                                          \
        int64_t om[HOP__F_MAXSTEPS];                                                               \
        for (int k = s; k < e; k++) {                                                              \
            op[k] = c->p[k] + (j & c->mask[k]);                                                    \
            om[k] = c->mask[k];                                                                    \
        }                                                                                          \
        int64_t i = 0;                                                                             \
        for (; i + U * L <= m; i += U * L) {                                                       \
            V x[U];                                                                                \
            RK_LOADU(U, L, x, a0, i, am);                                                          \
            for (int k = s; k < e; k++) {                                                          \
                V o[U];                                                                            \
                RK_LOADU(U, L, o, op[k], i, om[k]);                                                \
                RK_APPLY(V, VI, U, code[k], x, o)                                                  \
            }                                                                                      \
            EACH(U, memcpy(dst + i + u * L, &x[u], sizeof x[u]););                                 \
        }                                                                                          \
        for (; i < m; i += L) {                                                                    \
            int64_t r = m - i < L ? m - i : L;                                                     \
            V x[1];                                                                                \
            RK_LOAD1(L, x, a0, i, am, r);                                                          \
            for (int k = s; k < e; k++) {                                                          \
                V o[1];                                                                            \
                RK_LOAD1(L, o, op[k], i, om[k], r);                                                \
                RK_APPLY(V, VI, 1, code[k], x, o)                                                  \
            }                                                                                      \
            if (r == L) {                                                                          \
                memcpy(dst + i, &x[0], sizeof x[0]);                                               \
            } else {                                                                               \
                float t[L];                                                                        \
                memcpy(t, &x[0], sizeof x[0]);                                                     \
                memcpy(dst + i, t, (size_t)r * sizeof(float));                                     \
            }                                                                                      \
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
        for (int64_t j = 0; j < m; j += B) {                                                       \
            int64_t r = m - j < B ? m - j : B;                                                     \
            for (int k = 0; k < e; k++)                                                            \
                for (int q = 0; q < B; q++)                                                        \
                    ob[k][q] = c->mask[k] ? (q < r ? c->p[k][j + q] : 0.0f) : c->p[k][0];          \
            float t[B];                                                                            \
            for (int q = 0; q < B; q++)                                                            \
                t[q] = q < r ? src[j + q] : 0.0f;                                                  \
            /* as few vectors as hold the elements: each costs throughput */                   \
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
KERNEL(avx2, v8f, v8i, 4, __attribute__((target("avx2"))))
KERNEL(avx512, v16f, v16i, 8, __attribute__((target("avx512f"))))
#endif

typedef struct rk_width {
    seg_fn seg;
    void (*spread)(float *dst, float v);
    void (*loop)(const rk_ctx *c, int e, int64_t iters, int64_t m, const float *src, float *dst);
} rk_width;

static const rk_width width_sse = {seg_sse, spread_sse, loop_sse};
#ifdef HAVE_WIDE_RK
static const rk_width width_avx2 = {seg_avx2, spread_avx2, loop_avx2};
static const rk_width width_avx512 = {seg_avx512, spread_avx512, loop_avx512};
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

/* c for group g over inputs in (inc as hop__freg_run); c->spl holds the
 * lone elements spread, so c stays where it was bound. */
static void
bind(rk_ctx *c, const rk_width *w, const hop__fgroup *g, const void *const *in, const int64_t *inc)
{
    const float *ip[HOP__F_MAXIN];
    int64_t im[HOP__F_MAXIN];
    for (int k = 0; k < g->ninputs; k++) {
        ip[k] = in[k];
        im[k] = -1;
        if (!inc[k]) {
            w->spread(c->spl[k], ip[k][0]);
            ip[k] = c->spl[k];
            im[k] = 0;
        }
    }
    c->code = g->reg_code;
    int arg = g->reg_arg[HOP__F_MAXSTEPS];
    c->start = arg >= 0 ? ip[arg] : g->reg_splat[HOP__F_MAXSTEPS];
    c->start_mask = arg >= 0 ? im[arg] : 0;
    for (int s = 0; s < g->nsteps; s++) {
        arg = g->reg_arg[s];
        c->p[s] = arg >= 0 ? ip[arg] : g->reg_splat[s]; /* -2: never read */
        c->mask[s] = arg >= 0 ? im[arg] : 0;
    }
}

bool
hop__freg_inline(const hop__fgroup *g)
{
    if (!g->reg)
        return false;
    for (int s = 0; s < g->nsteps; s++)
        if (g->reg_code[s] == RK_CALL)
            return false;
    return true;
}

void
hop__freg_loop(const hop__fgroup *g, int64_t n, int64_t iters, const void *const *in,
               const int64_t *inc, const float *src, float *dst)
{
    const rk_width *w = width_pick();
    rk_ctx c;
    bind(&c, w, g, in, inc);
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
    bind(&c, w, g, in, inc);
    seg_fn seg = w->seg;
    _Alignas(64) float buf[2][CHUNK];
    float *o = out;
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
                        a[i] = (const float *)in[op->idx] + j;
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
