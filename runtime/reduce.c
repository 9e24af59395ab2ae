/*
 * runtime/reduce.c - sum, mean, prod, any, all, amax, amin, argmax and
 * argmin over any set of dims of a strided input.
 *
 * The input's dims split into kept dims (one output element per index) and
 * reduced dims, which are coalesced where contiguous so that the common
 * case (reducing trailing contiguous dims) is one tight inner loop.  Pieces
 * split the output elements.  Float sums and means add in NumPy 1.24's
 * order, in the dtype (float16 in float), bit for bit (numpy_order,
 * pairwise.h; docs/ARCHITECTURE.md, "Summation order"); integer and bool
 * sums accumulate in wrapping int64.  amax/amin propagate
 * nan; argmax returns the first maximum, a nan counting as the maximum;
 * its index is row-major over the reduced dims (flattened for dim=None).
 */
#include "runtime/runtime.h"

#include "runtime/pairwise.h"

#include <math.h>
#include <stdlib.h>

/* The reduced-dims mask of a (x, dims, keepdim) or (x, dim, keepdim) call:
 * shape inference has validated the operand already. */
static void
reduce_mask(const hop_rt_arg *dims, int rank, bool *mask)
{
    for (int d = 0; d < HOP_MAX_RANK; d++)
        mask[d] =
            dims->kind == HOP_OPND_NONE || (dims->kind == HOP_OPND_LIST && dims->u.list.n == 0);
    int wrap = rank > 0 ? rank : 1;
    if (dims->kind == HOP_OPND_INT) {
        int64_t d = dims->u.i < 0 ? dims->u.i + wrap : dims->u.i;
        mask[d] = true;
    } else if (dims->kind == HOP_OPND_LIST) {
        for (size_t k = 0; k < dims->u.list.n; k++) {
            int64_t d = dims->u.list.items[k].u.i;
            mask[d < 0 ? d + wrap : d] = true;
        }
    }
}

/* NumPy's order of a float sum: its reduction iterator visits x's dims in
 * their memory order (hop_memory_order; dims of size 1 take no part), and
 * its inner loop sums pairwise the innermost reduced
 * dims that no kept dim separates, NumPy's buffer size at a time, adding
 * each such sum to the output element; when a kept dim is innermost, the
 * loop adds element by element.  So the reduced dims are re-listed in that
 * order, outermost first, merged where they are contiguous, and np_g0
 * counts the innermost ones of that inner block. */
static void
numpy_order(hop__reduce *r, const hop_tensor *x, const bool *mask)
{
    int order[HOP_MAX_RANK], perm[HOP_MAX_RANK], n = 0; /* perm: innermost first */
    hop_memory_order(x->rank, x->sizes, x->strides, order);
    for (int i = x->rank - 1; i >= 0; i--)
        if (x->sizes[order[i]] != 1)
            perm[n++] = order[i];
    int inner = 0; /* how many innermost dims are reduced */
    while (inner < n && mask[perm[inner]])
        inner++;
    r->nred = 0;
    r->np_g0 = 0;
    for (int i = n - 1; i >= 0; i--) {
        int d = perm[i], k = r->nred;
        if (!mask[d])
            continue;
        bool adjacent = i + 1 < n && mask[perm[i + 1]] && k > 0;
        if (adjacent && r->red_xst[k - 1] == x->strides[d] * x->sizes[d]) {
            r->red_sizes[k - 1] *= x->sizes[d];
            r->red_xst[k - 1] = x->strides[d];
            continue;
        }
        r->red_sizes[k] = x->sizes[d];
        r->red_xst[k] = x->strides[d];
        r->nred++;
        r->np_g0 += i < inner;
    }
}

void
hop__reduce_init(hop__reduce *r, const hop__call *c, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    bool keepdim = c->args[2].u.b, mask[HOP_MAX_RANK];
    reduce_mask(&c->args[1], x->rank, mask);
    memset(r, 0, sizeof *r);
    r->op = c->op;
    r->dtype = x->dtype;
    r->odtype = out->dtype;
    r->x = x->data;
    r->out = out->data;
    r->nout = 1;
    r->nred_total = 1;
    int od = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!mask[d]) {
            /* kept dims that both x and out step through evenly merge */
            int k = r->nkept;
            r->nout *= x->sizes[d];
            if (k > 0 && r->kept_xst[k - 1] == x->strides[d] * x->sizes[d] &&
                r->kept_ost[k - 1] == out->strides[od] * x->sizes[d]) {
                r->kept_sizes[k - 1] *= x->sizes[d];
                r->kept_xst[k - 1] = x->strides[d];
                r->kept_ost[k - 1] = out->strides[od];
            } else {
                r->kept_sizes[k] = x->sizes[d];
                r->kept_xst[k] = x->strides[d];
                r->kept_ost[k] = out->strides[od];
                r->nkept++;
            }
            od++;
            continue;
        }
        od += keepdim;
        r->nred_total *= x->sizes[d];
        if (x->sizes[d] == 1)
            continue;
        int n = r->nred;
        if (n > 0 && r->red_xst[n - 1] == x->strides[d] * x->sizes[d]) {
            r->red_sizes[n - 1] *= x->sizes[d];
            r->red_xst[n - 1] = x->strides[d];
        } else {
            r->red_sizes[n] = x->sizes[d];
            r->red_xst[n] = x->strides[d];
            r->nred++;
        }
    }
    if (((r->op == HOP_OP_sum || r->op == HOP_OP_mean) &&
         (hop_dtype_is_float(r->dtype) || hop_dtype_is_complex(r->dtype))) ||
        (r->op == HOP_OP_prod &&
         (hop_dtype_is_float(r->dtype) || hop_dtype_is_complex(r->dtype))))
        numpy_order(r, x, mask); /* (a float product: one element at a time in that order) */
}

/* The running state of one output element. */
typedef struct acc {
    double f, f1, f2, f3;
    uint64_t u;
    int64_t best_i; /* argmax */
    double best;    /* amax/amin/argmax of floats */
    int64_t ibest;  /* of signed integers and bools */
    uint64_t ubest; /* of unsigned integers */
    bool have, nan;
} acc;

/* Element loads: floats as double, binary16 through float. */
#define LOAD_PLAIN(v) (v)
#define LOAD_HALF(v) hop_f16_to_float(v)

/* An output element's sum in NumPy's order (numpy_order) of its reduced
 * elements from p, as ACC (float16's in float, rounded to float16 after
 * each inner loop and each element's add, as NumPy stores it): from 0,
 * element by element when a kept dim is innermost, else each inner block
 * by pairwise.h's chunks, the blocks of more than one dim gathered into a
 * buffer as NumPy's iterator copies them. */
#define NP_SUM(T, sfx, ACC, LOAD, ROUND)                                                           \
    HOP__PAIRWISE(pw_##sfx, T, ACC, LOAD)                                                          \
    HOP__PAIRWISE_CHUNKED(pw_##sfx, T, ACC, ROUND)                                                 \
    static ACC gathered_##sfx(const hop__reduce *r, const T *p, ACC out)                           \
    {                                                                                              \
        T buf[HOP__PW_CHUNK];                                                                      \
        int64_t idx[HOP_MAX_RANK] = {0}, len = 0;                                                  \
        int first = r->nred - r->np_g0, last = r->nred - 1;                                        \
        int64_t n = r->red_sizes[last], s = r->red_xst[last];                                      \
        do {                                                                                       \
            int64_t off = 0;                                                                       \
            for (int d = first; d < last; d++)                                                     \
                off += idx[d] * r->red_xst[d];                                                     \
            for (int64_t i = 0; i < n; i++) {                                                      \
                buf[len++] = p[off + i * s];                                                       \
                if (len == HOP__PW_CHUNK) {                                                        \
                    out = ROUND(out + pw_##sfx(buf, len, 1));                                      \
                    len = 0;                                                                       \
                }                                                                                  \
            }                                                                                      \
        } while (hop__odometer(idx, r->red_sizes, first, last));                                   \
        return len ? ROUND(out + pw_##sfx(buf, len, 1)) : out;                                     \
    }                                                                                              \
    static ACC npsum_##sfx(const hop__reduce *r, const T *p)                                       \
    {                                                                                              \
        ACC out = 0;                                                                               \
        if (r->nred_total == 0)                                                                    \
            return out;                                                                            \
        if (r->nred == 0)                                                                          \
            return ROUND(out + LOAD(p[0]));                                                        \
        int64_t idx[HOP_MAX_RANK] = {0}, block = 1;                                                \
        int g0 = r->np_g0, last = r->nred - 1, outer = g0 ? r->nred - g0 : last;                   \
        for (int d = outer; d < r->nred; d++)                                                      \
            block *= r->red_sizes[d];                                                              \
        do {                                                                                       \
            int64_t off = 0;                                                                       \
            for (int d = 0; d < outer; d++)                                                        \
                off += idx[d] * r->red_xst[d];                                                     \
            if (g0 == 0) {                                                                         \
                for (int64_t i = 0; i < block; i++)                                                \
                    out = ROUND(out + LOAD(p[off + i * r->red_xst[last]]));                        \
            } else if (g0 == 1) {                                                                  \
                out = pw_##sfx##_chunked(p + off, block, r->red_xst[last], out);                   \
            } else {                                                                               \
                out = gathered_##sfx(r, p + off, out);                                             \
            }                                                                                      \
        } while (hop__odometer(idx, r->red_sizes, 0, outer));                                      \
        return out;                                                                                \
    }
NP_SUM(float, f32, float, HOP__PW_LOAD, HOP__PW_ROUND)
NP_SUM(double, f64, double, HOP__PW_LOAD, HOP__PW_ROUND)
NP_SUM(uint16_t, f16, float, HOP__PW_LOAD_HALF, HOP__PW_ROUND_HALF)

/* The offsets (in elements) of output element o in x and in out. */
static void
kept_offsets(const hop__reduce *r, int64_t o, int64_t *xoff, int64_t *ooff)
{
    int64_t rest = o;
    *xoff = *ooff = 0;
    for (int d = r->nkept - 1; d >= 0; d--) {
        int64_t i = rest % r->kept_sizes[d];
        rest /= r->kept_sizes[d];
        *xoff += i * r->kept_xst[d];
        *ooff += i * r->kept_ost[d];
    }
}

/* Float sums and means, output elements [begin, end). */
static void
np_sum_compute(const hop__reduce *r, int64_t begin, int64_t end)
{
    size_t xsz = hop_dtype_size(r->dtype), osz = hop_dtype_size(r->odtype);
    for (int64_t o = begin; o < end; o++) {
        int64_t xoff, ooff;
        kept_offsets(r, o, &xoff, &ooff);
        const char *p = r->x + xoff * (int64_t)xsz;
        double v = r->dtype == HOP_F32   ? npsum_f32(r, (const float *)p)
                   : r->dtype == HOP_F64 ? npsum_f64(r, (const double *)p)
                                         : npsum_f16(r, (const uint16_t *)p);
        if (r->op == HOP_OP_mean)
            v /= (double)r->nred_total; /* 0 / 0 when empty: as NumPy's */
        hop__convert(1, r->out + ooff * (int64_t)osz, r->odtype, &v, HOP_F64, 1);
    }
}

/* A fold of integer elements into a->u: step is an expression of the
 * running u and the element v. */
#define FOLD_U64(fn, T, STEP)                                                                      \
    static void fn(acc *a, const T *p, int64_t n, int64_t s)                                       \
    {                                                                                              \
        uint64_t u = a->u;                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T v = p[i * s];                                                                        \
            u = (STEP);                                                                            \
        }                                                                                          \
        a->u = u;                                                                                  \
    }

/* Integer sums and products wrap in 64 bits: signed values are sign-extended
 * first; a bool byte counts as 0 or 1 whatever it holds.  any/all count the
 * nonzero elements (nan is nonzero). */
#define LOAD_BOOL(v) ((v) != 0)
#define NZ_HALF(v) (((v)&0x7fff) != 0)
#define INT_FOLDS(T, sfx, WIDE, LOAD)                                                              \
    FOLD_U64(sum_##sfx, T, u + (uint64_t)(WIDE)LOAD(v))                                            \
    FOLD_U64(prod_##sfx, T, u *(uint64_t)(WIDE)LOAD(v))                                            \
    FOLD_U64(count_##sfx, T, u + ((v) != 0))
INT_FOLDS(hop__bool, b, uint64_t, LOAD_BOOL)
INT_FOLDS(int8_t, i8, int64_t, LOAD_PLAIN)
INT_FOLDS(int16_t, i16, int64_t, LOAD_PLAIN)
INT_FOLDS(int32_t, i32, int64_t, LOAD_PLAIN)
INT_FOLDS(int64_t, i64, int64_t, LOAD_PLAIN)
INT_FOLDS(uint8_t, u8, uint64_t, LOAD_PLAIN)
INT_FOLDS(uint64_t, u64, uint64_t, LOAD_PLAIN)
INT_FOLDS(uint16_t, u16, uint64_t, LOAD_PLAIN)
INT_FOLDS(uint32_t, u32, uint64_t, LOAD_PLAIN)
FOLD_U64(count_f16, uint16_t, u + NZ_HALF(v))
FOLD_U64(count_f32, float, u + ((v) != 0))
FOLD_U64(count_f64, double, u + ((v) != 0))

/* prod of floats multiplies one element at a time in W (kept in a->f, from
 * 1; integers in a->u from 1, above): float32 in float32 and float64 in
 * float64, as NumPy's multiply.reduce loops, so a float32 product that
 * overflows on the way is inf as NumPy's ([1e30, 1e10, 1e-30] is inf, not
 * 1e10); float16 in float32, as NumPy's half loop carries it. */
#define PROD_FLOAT(T, sfx, W, LOAD)                                                                \
    static void prod_##sfx(acc *a, const T *p, int64_t n, int64_t s)                               \
    {                                                                                              \
        W f = (W)a->f;                                                                             \
        for (int64_t i = 0; i < n; i++)                                                            \
            f *= (W)LOAD(p[i * s]);                                                                \
        a->f = f;                                                                                  \
    }
PROD_FLOAT(float, f32, float, LOAD_PLAIN)
PROD_FLOAT(double, f64, double, LOAD_PLAIN)
PROD_FLOAT(uint16_t, f16, float, LOAD_HALF) /* (prod_half's, below, when it has r) */
/* float16 products round to float16 where NumPy's half loop stores
 * (np_g0, numpy_order): after each multiply when a kept dim is innermost
 * (its binary loop multiplies element by element), after each inner loop of
 * at most NumPy's buffer size when a reduced dim is (its reduce loop carries
 * float32 across it).  Inner loops NumPy's buffer gathers from several
 * reduced dims (np_g0 > 1) round after each run here. */
static void
prod_half(const hop__reduce *r, acc *a, const uint16_t *p, int64_t n, int64_t s)
{
    float f = (float)a->f;
    int64_t chunk = r->np_g0 == 0 ? 1 : 8192;
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
        int64_t end = n - i0 < chunk ? n : i0 + chunk;
        for (int64_t i = i0; i < end; i++)
            f *= LOAD_HALF(p[i * s]);
        f = HOP__PW_ROUND_HALF(f);
    }
    a->f = f;
}
/* amax (sign 1) / amin (sign -1) / argmax over a run; base is the reduced
 * index of p[0]. */
#define EXTREME_FLOAT(T, sfx, LOAD)                                                                \
    static void ext_##sfx(acc *a, const T *p, int64_t n, int64_t s, int sign, int64_t base)        \
    {                                                                                              \
        for (int64_t i = 0; i < n && !a->nan; i++) {                                               \
            double v = LOAD(p[i * s]);                                                             \
            if (v != v) {                                                                          \
                a->nan = true;                                                                     \
                a->best = v;                                                                       \
                a->best_i = base + i;                                                              \
            } else if (!a->have || (sign > 0 ? v > a->best : v < a->best)) {                       \
                a->best = v;                                                                       \
                a->best_i = base + i;                                                              \
                a->have = true;                                                                    \
            }                                                                                      \
        }                                                                                          \
    }
EXTREME_FLOAT(float, f32, LOAD_PLAIN)
EXTREME_FLOAT(double, f64, LOAD_PLAIN)
EXTREME_FLOAT(uint16_t, f16, LOAD_HALF)

/* Integers compare as int64 (signed, bool) or uint64 (unsigned). */
#define EXTREME_INT(T, sfx, W, FIELD, LOAD)                                                        \
    static void ext_##sfx(acc *a, const T *p, int64_t n, int64_t s, int sign, int64_t base)        \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            W v = (W)LOAD(p[i * s]);                                                               \
            if (!a->have || (sign > 0 ? v > a->FIELD : v < a->FIELD)) {                            \
                a->FIELD = v;                                                                      \
                a->best_i = base + i;                                                              \
                a->have = true;                                                                    \
            }                                                                                      \
        }                                                                                          \
    }
EXTREME_INT(hop__bool, b, int64_t, ibest, LOAD_BOOL)
EXTREME_INT(int8_t, i8, int64_t, ibest, LOAD_PLAIN)
EXTREME_INT(int16_t, i16, int64_t, ibest, LOAD_PLAIN)
EXTREME_INT(int32_t, i32, int64_t, ibest, LOAD_PLAIN)
EXTREME_INT(int64_t, i64, int64_t, ibest, LOAD_PLAIN)
EXTREME_INT(uint8_t, u8, uint64_t, ubest, LOAD_PLAIN)
EXTREME_INT(uint64_t, u64, uint64_t, ubest, LOAD_PLAIN)
EXTREME_INT(uint16_t, u16, uint64_t, ubest, LOAD_PLAIN)
EXTREME_INT(uint32_t, u32, uint64_t, ubest, LOAD_PLAIN)

/* complex sums: each run into a (pairwise.h's HOP__CPAIRWISE) */
#define CPAIRWISE(T, sfx)                                                                          \
    HOP__CPAIRWISE(cpw_##sfx, T)                                                                   \
    /* one run into a (its parts in a->f, a->f1, values of T), as NumPy's                          \
     * complex add loop: element by element when a kept dim is innermost,                          \
     * else each inner loop of at most 8192 elements summed pairwise and                           \
     * added (numpy_order's np_g0; runs NumPy's buffer would gather from                           \
     * several reduced dims are summed one by one here) */                                         \
    static void csum_##sfx(const hop__reduce *r, acc *a, const T *p, int64_t n, int64_t s)         \
    {                                                                                              \
        T re = (T)a->f, im = (T)a->f1;                                                             \
        if (r->np_g0 == 0) {                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                      \
                re += p[2 * i * s];                                                                \
                im += p[2 * i * s + 1];                                                            \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i0 = 0; i0 < n; i0 += 8192) {                                             \
                T rr, ri;                                                                          \
                cpw_##sfx(p + 2 * i0 * s, n - i0 < 8192 ? n - i0 : 8192, s, &rr, &ri);             \
                re += rr;                                                                          \
                im += ri;                                                                          \
            }                                                                                      \
        }                                                                                          \
        a->f = re;                                                                                 \
        a->f1 = im;                                                                                \
    }
CPAIRWISE(float, c64)
CPAIRWISE(double, c128)

/* One run of the reduced space into a. */
/* Complex sums (and means) add in the dtype's parts in NumPy's order
 * (csum_*), products multiply one element at a time in that order by
 * NumPy's textbook product in the dtype's parts (complex64 in float, each
 * part rounded as NumPy's loop stores it), any/all count the nonzero
 * elements (a->u). */
static void
fold_complex(const hop__reduce *r, acc *a, const char *p, int64_t n, int64_t s)
{
    bool dbl = r->dtype == HOP_C128;
    if (r->op == HOP_OP_sum || r->op == HOP_OP_mean) {
        if (dbl)
            csum_c128(r, a, (const double *)p, n, s);
        else
            csum_c64(r, a, (const float *)p, n, s);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double re, im;
        if (dbl) {
            re = ((const double *)p)[2 * i * s];
            im = ((const double *)p)[2 * i * s + 1];
        } else {
            re = ((const float *)p)[2 * i * s];
            im = ((const float *)p)[2 * i * s + 1];
        }
        if (r->op == HOP_OP_prod && !dbl) {
            float ar = (float)a->f, ai = (float)a->f1, br = (float)re, bi = (float)im;
            float pr = ar * br - ai * bi, pi = ar * bi + ai * br;
            a->f = pr;
            a->f1 = pi;
        } else if (r->op == HOP_OP_prod) {
            double pr = a->f * re - a->f1 * im, pi = a->f * im + a->f1 * re;
            a->f = pr;
            a->f1 = pi;
        } else if (r->op == HOP_OP_any || r->op == HOP_OP_all) {
            a->u += re != 0 || im != 0;
        } else {
            a->f += re;
            a->f1 += im;
        }
    }
}

static void
reduce_run(const hop__reduce *r, acc *a, const char *p, int64_t n, int64_t s, int64_t base)
{
    if (hop_dtype_is_complex(r->dtype)) {
        fold_complex(r, a, p, n, s);
        return;
    }
    bool sum = r->op == HOP_OP_sum || r->op == HOP_OP_mean;
    bool count = r->op == HOP_OP_any || r->op == HOP_OP_all;
    int sign = r->op == HOP_OP_amin || r->op == HOP_OP_argmin ? -1 : 1;
#define NOT_SUM(T, sfx)                                                                            \
    if (count)                                                                                     \
        count_##sfx(a, (const T *)p, n, s);                                                        \
    else if (r->op == HOP_OP_prod && r->dtype == HOP_F16)                                          \
        prod_half(r, a, (const uint16_t *)p, n, s);                                                \
    else if (r->op == HOP_OP_prod)                                                                 \
        prod_##sfx(a, (const T *)p, n, s);                                                         \
    else                                                                                           \
        ext_##sfx(a, (const T *)p, n, s, sign, base);
#define CASE(E, T, sfx)                                                                            \
    case HOP_##E:                                                                                  \
        if (sum) {                                                                                 \
            sum_##sfx(a, (const T *)p, n, s);                                                      \
        } else {                                                                                   \
            NOT_SUM(T, sfx)                                                                        \
        }                                                                                          \
        break;
    /* (float sums and means are np_sum_compute's) */
#define CASE_F(E, T, sfx)                                                                          \
    case HOP_##E:                                                                                  \
        NOT_SUM(T, sfx)                                                                            \
        break;
    switch (r->dtype) {
        CASE(BOOL, hop__bool, b)
        CASE(I8, int8_t, i8)
        CASE(U8, uint8_t, u8)
        CASE(I16, int16_t, i16)
        CASE(I32, int32_t, i32)
        CASE(I64, int64_t, i64)
        CASE(U64, uint64_t, u64)
        CASE(U16, uint16_t, u16)
        CASE(U32, uint32_t, u32)
        CASE_F(F16, uint16_t, f16)
        CASE_F(F32, float, f32)
        CASE_F(F64, double, f64)
    default:
        break;
    }
#undef CASE
#undef CASE_F
#undef NOT_SUM
}

static void
store(const hop__reduce *r, const acc *a, char *o)
{
    if (hop_dtype_is_complex(r->dtype) && r->op != HOP_OP_any && r->op != HOP_OP_all) {
        double re = a->f, im = a->f1;
        if (r->op == HOP_OP_mean && r->nred_total == 0) {
            /* no elements: 0 / 0 at run time, the platform's NaN as NumPy's
             * true_divide gives it (its sign bit set on x86), not NAN */
            re = re / (double)r->nred_total;
            im = im / (double)r->nred_total;
        } else if (r->op == HOP_OP_mean && r->dtype == HOP_C64) {
            /* NumPy's complex division by the count (c + 0i), in the dtype:
             * rat = 0 / c, scl = 1 / (c + 0 rat), ((re + im rat) scl,
             * (im - re rat) scl) */
            float c = (float)r->nred_total, rat = 0.0f / c, scl = 1.0f / (c + 0.0f * rat);
            float fr = (float)re, fi = (float)im;
            re = (fr + fi * rat) * scl;
            im = (fi - fr * rat) * scl;
        } else if (r->op == HOP_OP_mean) {
            double c = (double)r->nred_total, rat = 0.0 / c, scl = 1.0 / (c + 0.0 * rat);
            double dr = re, di = im;
            re = (dr + di * rat) * scl;
            im = (di - dr * rat) * scl;
        }
        if (r->odtype == HOP_C64) {
            float v[2] = {(float)re, (float)im};
            memcpy(o, v, sizeof v);
        } else {
            double v[2] = {re, im};
            memcpy(o, v, sizeof v);
        }
        return;
    }
    bool is_float = hop_dtype_is_float(r->dtype);
    double total = (a->f + a->f1) + (a->f2 + a->f3);
    double fv;
    switch (r->op) {
    case HOP_OP_sum:
        if (is_float) {
            fv = total;
            break;
        }
        memcpy(o, &a->u, sizeof a->u); /* i64 or u64: the same bits */
        return;
    case HOP_OP_prod:
        if (is_float) {
            fv = a->f;
            break;
        }
        memcpy(o, &a->u, sizeof a->u);
        return;
    case HOP_OP_any:
    case HOP_OP_all: {
        hop__bool b = r->op == HOP_OP_any ? a->u > 0 : a->u == (uint64_t)r->nred_total;
        memcpy(o, &b, sizeof b);
        return;
    }
    case HOP_OP_mean:
        fv = total / (double)r->nred_total; /* 0 / 0 when empty: as NumPy's */
        break;
    case HOP_OP_argmax:
    case HOP_OP_argmin:
        memcpy(o, &a->best_i, sizeof a->best_i);
        return;
    default: /* amax, amin keep the dtype */
        if (is_float) {
            fv = a->best;
            break;
        }
        if (hop_dtype_is_unsigned(r->dtype))
            hop__convert(1, o, r->odtype, &a->ubest, HOP_U64, 1);
        else
            hop__convert(1, o, r->odtype, &a->ibest, HOP_I64, 1);
        return;
    }
    hop__convert(1, o, r->odtype, &fv, HOP_F64, 1);
}

#ifdef HOP_NO_REDUCE_AVX2
const hop__rrows *
hop__reduce_rows_avx2(void)
{
    return NULL;
}
#endif

static int simd_off;

void
hop__reduce_set_simd(bool on)
{
    __atomic_store_n(&simd_off, !on, __ATOMIC_RELAXED);
}

static const hop__rrows *
simd_rows(void)
{
    return __atomic_load_n(&simd_off, __ATOMIC_RELAXED) ? NULL : hop__reduce_rows_avx2();
}

/* rows [0, rows) of the one-run path by rr (contiguous rows); false for an
 * op it does not compute */
#define SIMD_ROWS(T, sfx)                                                                          \
    static bool simd_##sfx(const hop__rrows *rr, hop_op op, const T *x, int64_t xs, int64_t n,     \
                           T *out, int64_t os, int64_t rows)                                       \
    {                                                                                              \
        switch (op) {                                                                              \
        case HOP_OP_sum:                                                                           \
        case HOP_OP_mean:                                                                          \
            rr->sum_##sfx(x, xs, n, op == HOP_OP_mean, out, os, rows);                             \
            return true;                                                                           \
        case HOP_OP_amax:                                                                          \
        case HOP_OP_amin:                                                                          \
            rr->ext_##sfx(x, xs, n, op == HOP_OP_amax ? 1 : -1, out, os, rows);                    \
            return true;                                                                           \
        default:                                                                                   \
            return false;                                                                          \
        }                                                                                          \
    }
SIMD_ROWS(float, f32)
SIMD_ROWS(double, f64)

/*
 * The common case, one run per output element of a float dtype (softmax's
 * max and sum over the last dim): no accumulator record per element, the
 * kept index stepped like an odometer, results stored as their dtype.  The
 * sums add in NumPy's order (np_sum_compute's bits: the run pairwise when
 * it is NumPy's inner loop); amax/amin take eight running extremes a
 * vector unit keeps, and the first nan when there is one.
 */
#define DOWN_BLOCK 512 /* outputs (4 KB of float64) */
#define FAST_FLOAT(T, sfx)                                                                         \
    /* the run's sum in NumPy's order: pairwise when it is NumPy's inner loop                      \
     * (inner), else element by element */                                                         \
    static inline __attribute__((always_inline))                                                   \
    T fsum_##sfx(const T *p, int64_t n, int64_t s, bool inner)                                     \
    {                                                                                              \
        T out = 0;                                                                                 \
        if (inner)                                                                                 \
            return pw_##sfx##_chunked(p, n, s, out);                                               \
        for (int64_t i = 0; i < n; i++)                                                            \
            out += p[i * s];                                                                       \
        return out;                                                                                \
    }                                                                                              \
    /* outputs [begin, end) summed down a kept dim innermost (fsum's order                         \
     * element by element), a row of the reduced dim at a time across them, as                     \
     * NumPy's loop adds: contiguous outputs vectorise.  DOWN_BLOCK outputs at                     \
     * a time go down all n rows while they stay in L1, so out is passed once,                     \
     * not once a row (each output's adds are the same, in the same order) */                      \
    static void down_##sfx(hop_op op, const T *x, int64_t xs, int64_t n, int64_t s, T *out,        \
                           int64_t os, int64_t begin, int64_t end)                                 \
    {                                                                                              \
        for (int64_t b = begin; b < end; b += DOWN_BLOCK) {                                        \
            int64_t e = end - b < DOWN_BLOCK ? end : b + DOWN_BLOCK;                               \
            for (int64_t o = b; o < e; o++)                                                        \
                out[o * os] = 0;                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                const T *row = x + i * s;                                                          \
                if (xs == 1 && os == 1) {                                                          \
                    for (int64_t o = b; o < e; o++)                                                \
                        out[o] += row[o];                                                          \
                } else {                                                                           \
                    for (int64_t o = b; o < e; o++)                                                \
                        out[o * os] += row[o * xs];                                                \
                }                                                                                  \
            }                                                                                      \
            if (op == HOP_OP_mean)                                                                 \
                for (int64_t o = b; o < e; o++)                                                    \
                    out[o * os] = (T)(out[o * os] / (double)n);                                    \
        }                                                                                          \
    }                                                                                              \
    static inline __attribute__((always_inline))                                                   \
    T fext_##sfx(const T *p, int64_t n, int64_t s, int sign)                                       \
    {                                                                                              \
        T m[8];                                                                                    \
        bool nan = false;                                                                          \
        int64_t i = 0;                                                                             \
        for (int j = 0; j < 8; j++)                                                                \
            m[j] = p[0];                                                                           \
        if (s == 1 && sign > 0) {                                                                  \
            for (; i + 8 <= n; i += 8)                                                             \
                for (int j = 0; j < 8; j++) {                                                      \
                    T v = p[i + j];                                                                \
                    m[j] = v > m[j] ? v : m[j];                                                    \
                    nan |= v != v;                                                                 \
                }                                                                                  \
        } else if (s == 1) {                                                                       \
            for (; i + 8 <= n; i += 8)                                                             \
                for (int j = 0; j < 8; j++) {                                                      \
                    T v = p[i + j];                                                                \
                    m[j] = v < m[j] ? v : m[j];                                                    \
                    nan |= v != v;                                                                 \
                }                                                                                  \
        }                                                                                          \
        T best = m[0];                                                                             \
        for (int j = 1; j < 8; j++)                                                                \
            best = sign > 0 ? (m[j] > best ? m[j] : best) : (m[j] < best ? m[j] : best);           \
        for (; i < n; i++) {                                                                       \
            T v = p[i * s];                                                                        \
            best = sign > 0 ? (v > best ? v : best) : (v < best ? v : best);                       \
            nan |= v != v;                                                                         \
        }                                                                                          \
        if (nan || best != best) {                                                                 \
            for (i = 0; i < n; i++)                                                                \
                if (p[i * s] != p[i * s])                                                          \
                    return p[i * s];                                                               \
        }                                                                                          \
        return best;                                                                               \
    }                                                                                              \
    static inline __attribute__((always_inline))                                                   \
    int64_t farg_##sfx(const T *p, int64_t n, int64_t s, int sign)                                 \
    {                                                                                              \
        T b = p[0];                                                                                \
        int64_t bi = 0;                                                                            \
        if (b != b)                                                                                \
            return 0;                                                                              \
        for (int64_t i = 1; i < n; i++) {                                                          \
            T v = p[i * s];                                                                        \
            if (v != v)                                                                            \
                return i;                                                                          \
            if (sign > 0 ? v > b : v < b) {                                                        \
                b = v;                                                                             \
                bi = i;                                                                            \
            }                                                                                      \
        }                                                                                          \
        return bi;                                                                                 \
    }                                                                                              \
    static void fast_##sfx(const hop__reduce *r, int64_t begin, int64_t end)                       \
    {                                                                                              \
        int64_t n = r->red_sizes[0], s = r->red_xst[0], idx[HOP_MAX_RANK], xoff = 0, ooff = 0;     \
        int sign = r->op == HOP_OP_amin || r->op == HOP_OP_argmin ? -1 : 1;                        \
        bool inner = r->np_g0 == 1;                                                                \
        int64_t rest = begin;                                                                      \
        for (int d = r->nkept - 1; d >= 0; d--) {                                                  \
            idx[d] = rest % r->kept_sizes[d];                                                      \
            rest /= r->kept_sizes[d];                                                              \
            xoff += idx[d] * r->kept_xst[d];                                                       \
            ooff += idx[d] * r->kept_ost[d];                                                       \
        }                                                                                          \
        const T *x = (const T *)r->x;                                                              \
        if (r->nkept <= 1) {                                                                       \
            /* one kept dim (after merging): plain loops, one per op */                            \
            int64_t xs = r->nkept ? r->kept_xst[0] : 0, os = r->nkept ? r->kept_ost[0] : 0;        \
            T *out = (T *)r->out;                                                                  \
            int64_t *iout = (int64_t *)r->out;                                                     \
            bool rows = inner || (r->op != HOP_OP_sum && r->op != HOP_OP_mean);                    \
            const hop__rrows *rr = s == 1 && rows ? simd_rows() : NULL;                            \
            if (rr != NULL &&                                                                      \
                simd_##sfx(rr, r->op, x + begin * xs, xs, n, out + begin * os, os, end - begin))   \
                return;                                                                            \
            if (!inner && (r->op == HOP_OP_sum || r->op == HOP_OP_mean)) {                         \
                if (xs == 1 && os == 1 && (rr = simd_rows()) != NULL)                              \
                    rr->down_##sfx(x, n, s, r->op == HOP_OP_mean, out, begin, end);                \
                else                                                                               \
                    down_##sfx(r->op, x, xs, n, s, out, os, begin, end);                           \
                return;                                                                            \
            }                                                                                      \
            switch (r->op) {                                                                       \
            case HOP_OP_sum:                                                                       \
                for (int64_t o = begin; o < end; o++)                                              \
                    out[o * os] = fsum_##sfx(x + o * xs, n, s, inner);                             \
                break;                                                                             \
            case HOP_OP_mean:                                                                      \
                for (int64_t o = begin; o < end; o++)                                              \
                    out[o * os] = (T)(fsum_##sfx(x + o * xs, n, s, inner) / (double)n);            \
                break;                                                                             \
            case HOP_OP_amax:                                                                      \
                for (int64_t o = begin; o < end; o++)                                              \
                    out[o * os] = fext_##sfx(x + o * xs, n, s, 1);                                 \
                break;                                                                             \
            case HOP_OP_amin:                                                                      \
                for (int64_t o = begin; o < end; o++)                                              \
                    out[o * os] = fext_##sfx(x + o * xs, n, s, -1);                                \
                break;                                                                             \
            case HOP_OP_argmax:                                                                    \
                for (int64_t o = begin; o < end; o++)                                              \
                    iout[o * os] = farg_##sfx(x + o * xs, n, s, 1);                                \
                break;                                                                             \
            default:                                                                               \
                for (int64_t o = begin; o < end; o++)                                              \
                    iout[o * os] = farg_##sfx(x + o * xs, n, s, -1);                               \
                break;                                                                             \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t o = begin; o < end; o++) {                                                    \
            const T *p = x + xoff;                                                                 \
            switch (r->op) {                                                                       \
            case HOP_OP_sum:                                                                       \
                ((T *)r->out)[ooff] = fsum_##sfx(p, n, s, inner);                                  \
                break;                                                                             \
            case HOP_OP_mean:                                                                      \
                ((T *)r->out)[ooff] = (T)(fsum_##sfx(p, n, s, inner) / (double)n);                 \
                break;                                                                             \
            case HOP_OP_amax:                                                                      \
            case HOP_OP_amin:                                                                      \
                ((T *)r->out)[ooff] = fext_##sfx(p, n, s, sign);                                   \
                break;                                                                             \
            default: /* argmax, argmin */                                                          \
                ((int64_t *)r->out)[ooff] = farg_##sfx(p, n, s, sign);                             \
                break;                                                                             \
            }                                                                                      \
            for (int d = r->nkept - 1; d >= 0; d--) {                                              \
                xoff += r->kept_xst[d];                                                            \
                ooff += r->kept_ost[d];                                                            \
                if (++idx[d] < r->kept_sizes[d])                                                   \
                    break;                                                                         \
                xoff -= r->kept_xst[d] * r->kept_sizes[d];                                         \
                ooff -= r->kept_ost[d] * r->kept_sizes[d];                                         \
                idx[d] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }
FAST_FLOAT(float, f32)
FAST_FLOAT(double, f64)

/* Whether fast_f32/fast_f64 computes r. */
static bool
fast_case(const hop__reduce *r)
{
    if ((r->dtype != HOP_F32 && r->dtype != HOP_F64) || r->nred != 1 || r->red_sizes[0] < 1)
        return false;
    switch (r->op) {
    case HOP_OP_sum:
    case HOP_OP_mean:
    case HOP_OP_amax:
    case HOP_OP_amin:
        return r->odtype == r->dtype;
    case HOP_OP_argmax:
    case HOP_OP_argmin:
        return r->odtype == HOP_I64;
    default:
        return false;
    }
}

/* A full float sum or mean of one contiguous run that is NumPy's inner
 * loop: its chunks' count, else 0 (runtime.h). */
int64_t
hop__reduce_chunks(const hop__reduce *r)
{
    if (r->nout != 1 || !fast_case(r) || (r->op != HOP_OP_sum && r->op != HOP_OP_mean) ||
        r->np_g0 != 1 || r->red_xst[0] != 1)
        return 0;
    return (r->red_sizes[0] + HOP__PW_CHUNK - 1) / HOP__PW_CHUNK;
}

void
hop__reduce_chunk_sums(const hop__reduce *r, int64_t c0, int64_t c1, double *part)
{
    const hop__rrows *rr = simd_rows();
    int64_t n = r->red_sizes[0];
    for (int64_t c = c0; c < c1; c++) {
        int64_t off = c * HOP__PW_CHUNK, len = n - off < HOP__PW_CHUNK ? n - off : HOP__PW_CHUNK;
        /* (0 + the chunk's sum, as fsum gives it: the sign of a zero sum
         * cannot show in a total that starts at +0) */
        if (r->dtype == HOP_F32) {
            const float *p = (const float *)r->x + off;
            float v;
            if (rr != NULL)
                rr->sum_f32(p, 0, len, false, &v, 0, 1);
            else
                v = fsum_f32(p, len, 1, true);
            part[c - c0] = v;
        } else {
            const double *p = (const double *)r->x + off;
            double v;
            if (rr != NULL)
                rr->sum_f64(p, 0, len, false, &v, 0, 1);
            else
                v = fsum_f64(p, len, 1, true);
            part[c - c0] = v;
        }
    }
}

double
hop__reduce_chunks_add(const hop__reduce *r, double total, const double *part, int64_t n)
{
    if (r->dtype == HOP_F32) {
        float t = (float)total;
        for (int64_t i = 0; i < n; i++)
            t = t + (float)part[i];
        return t;
    }
    for (int64_t i = 0; i < n; i++)
        total = total + part[i];
    return total;
}

void
hop__reduce_chunks_store(const hop__reduce *r, double total)
{
    double n = (double)r->red_sizes[0];
    if (r->dtype == HOP_F32) {
        float t = (float)total;
        *(float *)r->out = r->op == HOP_OP_mean ? (float)(t / n) : t;
    } else {
        *(double *)r->out = r->op == HOP_OP_mean ? total / n : total;
    }
}

void
hop__reduce_compute(const hop__reduce *r, int ith, int nth)
{
    int64_t begin, end;
    hop__split(r->nout, ith, nth, 1, &begin, &end);
    if (begin < end && !fast_case(r) && hop_dtype_is_float(r->dtype) &&
        (r->op == HOP_OP_sum || r->op == HOP_OP_mean)) {
        np_sum_compute(r, begin, end);
        return;
    }
    if (begin < end && fast_case(r)) {
        if (r->dtype == HOP_F32)
            fast_f32(r, begin, end);
        else
            fast_f64(r, begin, end);
        return;
    }
    size_t xsz = hop_dtype_size(r->dtype), osz = hop_dtype_size(r->odtype);
    int inner = r->nred - 1;
    int64_t run_n = r->nred > 0 ? r->red_sizes[inner] : 1;
    int64_t run_s = r->nred > 0 ? r->red_xst[inner] : 0;
    int64_t nruns = r->nred_total == 0 ? 0 : r->nred_total / run_n;
    if (r->nred == 0)
        nruns = r->nred_total == 0 ? 0 : 1;

    for (int64_t o = begin; o < end; o++) {
        int64_t xoff, ooff;
        kept_offsets(r, o, &xoff, &ooff);
        acc a;
        memset(&a, 0, sizeof a);
        if (r->op == HOP_OP_prod) {
            a.f = 1;
            a.u = 1;
        }
        int64_t idx[HOP_MAX_RANK] = {0};
        for (int64_t k = 0; k < nruns; k++) {
            int64_t off = xoff;
            for (int d = 0; d < inner; d++)
                off += idx[d] * r->red_xst[d];
            reduce_run(r, &a, r->x + off * (int64_t)xsz, run_n, run_s, k * run_n);
            for (int d = inner - 1; d >= 0; d--) {
                if (++idx[d] < r->red_sizes[d])
                    break;
                idx[d] = 0;
            }
        }
        store(r, &a, r->out + ooff * (int64_t)osz);
    }
}
