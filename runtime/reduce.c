/*
 * runtime/reduce.c - sum, mean, amax, amin and argmax over any set of dims
 * of a strided input.
 *
 * The input's dims split into kept dims (one output element per index) and
 * reduced dims, which are coalesced where contiguous so that the common
 * case (reducing trailing contiguous dims) is one tight inner loop.  Pieces
 * split the output elements.  Float sums accumulate in double with four
 * partial sums (faster and more accurate than one float accumulator);
 * integer and bool sums accumulate in wrapping int64.  amax/amin propagate
 * nan; argmax returns the first maximum, a nan counting as the maximum;
 * its index is row-major over the reduced dims (flattened for dim=None).
 */
#include "runtime/runtime.h"

#include <math.h>

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
            r->kept_sizes[r->nkept] = x->sizes[d];
            r->kept_xst[r->nkept] = x->strides[d];
            r->kept_ost[r->nkept] = out->strides[od];
            r->nkept++;
            r->nout *= x->sizes[d];
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
}

/* The running state of one output element. */
typedef struct acc {
    double f, f1, f2, f3;
    uint64_t u;
    int64_t best_i; /* argmax */
    double best;    /* amax/amin/argmax of floats */
    int64_t ibest;  /* of integers */
    bool have, nan;
} acc;

#define SUM_FLOAT(T)                                                                               \
    static void sum_##T(acc *a, const T *p, int64_t n, int64_t s)                                  \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        if (s == 1) {                                                                              \
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                 \
            for (; i + 4 <= n; i += 4) {                                                           \
                s0 += p[i];                                                                        \
                s1 += p[i + 1];                                                                    \
                s2 += p[i + 2];                                                                    \
                s3 += p[i + 3];                                                                    \
            }                                                                                      \
            a->f += s0;                                                                            \
            a->f1 += s1;                                                                           \
            a->f2 += s2;                                                                           \
            a->f3 += s3;                                                                           \
        }                                                                                          \
        for (; i < n; i++)                                                                         \
            a->f += p[i * s];                                                                      \
    }
SUM_FLOAT(float)
SUM_FLOAT(double)

#define SUM_INT(T)                                                                                 \
    static void sum_##T(acc *a, const T *p, int64_t n, int64_t s)                                  \
    {                                                                                              \
        uint64_t u = a->u;                                                                         \
        for (int64_t i = 0; i < n; i++)                                                            \
            u += (uint64_t)(int64_t)p[i * s];                                                      \
        a->u = u;                                                                                  \
    }
SUM_INT(int32_t)
SUM_INT(int64_t)

static void
sum_hop__bool(acc *a, const hop__bool *p, int64_t n, int64_t s)
{
    uint64_t u = a->u;
    for (int64_t i = 0; i < n; i++)
        u += p[i * s] != 0;
    a->u = u;
}

/* amax (sign 1) / amin (sign -1) / argmax over a run; base is the reduced
 * index of p[0]. */
#define EXTREME_FLOAT(T)                                                                           \
    static void ext_##T(acc *a, const T *p, int64_t n, int64_t s, int sign, int64_t base)          \
    {                                                                                              \
        for (int64_t i = 0; i < n && !a->nan; i++) {                                               \
            double v = p[i * s];                                                                   \
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
EXTREME_FLOAT(float)
EXTREME_FLOAT(double)

#define EXTREME_INT(T)                                                                             \
    static void ext_##T(acc *a, const T *p, int64_t n, int64_t s, int sign, int64_t base)          \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            int64_t v = (int64_t)p[i * s];                                                         \
            if (!a->have || (sign > 0 ? v > a->ibest : v < a->ibest)) {                            \
                a->ibest = v;                                                                      \
                a->best_i = base + i;                                                              \
                a->have = true;                                                                    \
            }                                                                                      \
        }                                                                                          \
    }
EXTREME_INT(int32_t)
EXTREME_INT(int64_t)

static void
ext_hop__bool(acc *a, const hop__bool *p, int64_t n, int64_t s, int sign, int64_t base)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = p[i * s] != 0;
        if (!a->have || (sign > 0 ? v > a->ibest : v < a->ibest)) {
            a->ibest = v;
            a->best_i = base + i;
            a->have = true;
        }
    }
}

/* One run of the reduced space into a. */
static void
reduce_run(const hop__reduce *r, acc *a, const char *p, int64_t n, int64_t s, int64_t base)
{
    bool sum = r->op == HOP_OP_sum || r->op == HOP_OP_mean;
    int sign = r->op == HOP_OP_amin ? -1 : 1;
#define CASE(E, T)                                                                                 \
    case HOP_##E:                                                                                  \
        if (sum)                                                                                   \
            sum_##T(a, (const T *)p, n, s);                                                        \
        else                                                                                       \
            ext_##T(a, (const T *)p, n, s, sign, base);                                            \
        break;
    switch (r->dtype) {
        CASE(BOOL, hop__bool)
        CASE(I32, int32_t)
        CASE(I64, int64_t)
        CASE(F32, float)
        CASE(F64, double)
    default:
        break;
    }
#undef CASE
}

static void
store(const hop__reduce *r, const acc *a, char *o)
{
    bool is_float = hop_dtype_is_float(r->dtype);
    double total = (a->f + a->f1) + (a->f2 + a->f3);
    int64_t iv;
    double fv;
    switch (r->op) {
    case HOP_OP_sum:
        if (is_float) {
            fv = total;
            break;
        }
        iv = (int64_t)a->u;
        memcpy(o, &iv, sizeof iv);
        return;
    case HOP_OP_mean:
        fv = r->nred_total == 0 ? NAN : total / (double)r->nred_total;
        break;
    case HOP_OP_argmax:
        memcpy(o, &a->best_i, sizeof a->best_i);
        return;
    default: /* amax, amin keep the dtype */
        if (is_float) {
            fv = a->best;
            break;
        }
        hop__convert(1, o, r->odtype, &a->ibest, HOP_I64, 1);
        return;
    }
    hop__convert(1, o, r->odtype, &fv, HOP_F64, 1);
}

void
hop__reduce_compute(const hop__reduce *r, int ith, int nth)
{
    int64_t begin, end;
    hop__split(r->nout, ith, nth, 1, &begin, &end);
    size_t xsz = hop_dtype_size(r->dtype), osz = hop_dtype_size(r->odtype);
    int inner = r->nred - 1;
    int64_t run_n = r->nred > 0 ? r->red_sizes[inner] : 1;
    int64_t run_s = r->nred > 0 ? r->red_xst[inner] : 0;
    int64_t nruns = r->nred_total == 0 ? 0 : r->nred_total / run_n;
    if (r->nred == 0)
        nruns = r->nred_total == 0 ? 0 : 1;

    for (int64_t o = begin; o < end; o++) {
        int64_t xoff = 0, ooff = 0, rest = o;
        for (int d = r->nkept - 1; d >= 0; d--) {
            int64_t i = rest % r->kept_sizes[d];
            rest /= r->kept_sizes[d];
            xoff += i * r->kept_xst[d];
            ooff += i * r->kept_ost[d];
        }
        acc a;
        memset(&a, 0, sizeof a);
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
