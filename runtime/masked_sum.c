/*
 * runtime/masked_sum.c - masked_sum(x, dims, keepdim, mask, initial):
 * NumPy 1.24's add.reduce(x, where=mask, initial=initial) of floats and
 * complex numbers, bit for bit.
 *
 * NumPy's masked reduction (reduction.c, ufunc_object.c reduce_loop) runs
 * the same iterator as the unmasked one with the mask as a third operand,
 * and its masked inner loop (array_method.c, generic_masked_strided_loop)
 * calls the add loop once per run of unmasked elements of each inner loop.
 * The add loop's reduce (loops_utils.h.src) adds the run's pairwise sum to
 * the output element; its binary loop (a kept dim innermost) adds element
 * by element.  The output starts at initial (the identity +0.0 without
 * one, which the caller passes).  float16 sums each run in float and
 * stores float16 after it.
 *
 * x's dims are taken outermost first in the order given (the caller
 * permutes x and mask into NumPy's iterator order; size-1 dims take no
 * part): the reduced dims innermost, up to the first kept dim, form the
 * inner loop, which NumPy's buffer hands over at most 8192 elements at a
 * time (gathered from several dims, the mask with them: a run goes on
 * across them); the other reduced dims are visited around it.  Output
 * element o is the o-th of the kept dims in C order.
 *
 * masked_prod is NumPy's multiply.reduce(x, where=mask, initial=initial)
 * in the same runs: its multiply loop's reduce multiplies a run's elements
 * one at a time into the output element (float16 in float, stored float16
 * after the run), its binary loop element by element (float16 stored after
 * each multiply); a complex product is the textbook one (NumPy's AVX512F
 * complex128 loop rounds by FMAs).
 */
#include "runtime/runtime.h"

#include "runtime/pairwise.h"

#include <string.h>

typedef struct msum {
    int nkept, nred, inner; /* inner: the innermost reduced dims */
    int64_t kept_sizes[HOP_MAX_RANK], kept_xst[HOP_MAX_RANK], kept_mst[HOP_MAX_RANK];
    int64_t red_sizes[HOP_MAX_RANK], red_xst[HOP_MAX_RANK], red_mst[HOP_MAX_RANK];
    int64_t block; /* elements of the inner loop (1 with inner 0) */
    const char *x;
    const hop__bool *m;
} msum;

static void
msum_init(msum *r, const hop_tensor *x, const hop_tensor *m, const bool *mask)
{
    memset(r, 0, sizeof *r);
    r->x = x->data;
    r->m = m->data;
    for (int d = 0; d < x->rank; d++) {
        if (x->sizes[d] == 1 && mask[d])
            continue;
        if (mask[d]) {
            r->red_sizes[r->nred] = x->sizes[d];
            r->red_xst[r->nred] = x->strides[d];
            r->red_mst[r->nred++] = m->strides[d];
        } else {
            r->kept_sizes[r->nkept] = x->sizes[d];
            r->kept_xst[r->nkept] = x->strides[d];
            r->kept_mst[r->nkept++] = m->strides[d];
        }
    }
    /* the reduced dims after the last kept dim of more than one element */
    int before = 0, nr = 0;
    for (int d = 0; d < x->rank; d++) {
        if (mask[d] && x->sizes[d] != 1)
            nr++;
        else if (!mask[d] && x->sizes[d] != 1)
            before = nr;
    }
    r->inner = nr - before;
    r->block = 1;
    for (int i = r->nred - r->inner; i < r->nred; i++)
        r->block *= r->red_sizes[i];
}

/* Element e (C order) of the inner loop: its offsets in x and the mask. */
static void
inner_offsets(const msum *r, int64_t e, int64_t *xo, int64_t *mo)
{
    if (r->inner == 1) {
        *xo = e * r->red_xst[r->nred - 1];
        *mo = e * r->red_mst[r->nred - 1];
        return;
    }
    *xo = *mo = 0;
    for (int d = r->nred - 1; d >= r->nred - r->inner; d--) {
        int64_t i = e % r->red_sizes[d];
        e /= r->red_sizes[d];
        *xo += i * r->red_xst[d];
        *mo += i * r->red_mst[d];
    }
}

/* Per element type: ACC out element by element (outer-only loops) or by
 * runs of the gathered inner loop.  W is how many T an element holds (2
 * for complex), SUMRUN(buf, n, acc) adds a run's pairwise sum, ADD1(p, acc)
 * one element. */
#define MSUM_LOOPS(sfx, T, W, ACC, SUMRUN, ADD1)                                                   \
    static void msum_##sfx(const msum *r, const T *x, const hop__bool *m, T *buf, hop__bool *mb,   \
                           ACC *acc)                                                               \
    {                                                                                              \
        int64_t idx[HOP_MAX_RANK] = {0};                                                           \
        int outer = r->nred - r->inner;                                                            \
        do {                                                                                       \
            int64_t xo = 0, mo = 0;                                                                \
            for (int d = 0; d < outer; d++) {                                                      \
                xo += idx[d] * r->red_xst[d];                                                      \
                mo += idx[d] * r->red_mst[d];                                                      \
            }                                                                                      \
            if (r->inner == 0) {                                                                   \
                if (m[mo])                                                                         \
                    ADD1(x + W * xo, *acc);                                                        \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t c0 = 0; c0 < r->block; c0 += HOP__PW_CHUNK) {                             \
                int64_t len = r->block - c0 < HOP__PW_CHUNK ? r->block - c0 : HOP__PW_CHUNK;       \
                for (int64_t e = 0; e < len; e++) {                                                \
                    int64_t xe, me;                                                                \
                    inner_offsets(r, c0 + e, &xe, &me);                                            \
                    mb[e] = m[mo + me] != 0;                                                       \
                    memcpy(buf + W * e, x + W * (xo + xe), W * sizeof(T));                         \
                }                                                                                  \
                for (int64_t i = 0; i < len;) {                                                    \
                    while (i < len && !mb[i])                                                      \
                        i++;                                                                       \
                    int64_t j = i;                                                                 \
                    while (j < len && mb[j])                                                       \
                        j++;                                                                       \
                    if (j > i)                                                                     \
                        SUMRUN(buf + W * i, j - i, *acc);                                          \
                    i = j;                                                                         \
                }                                                                                  \
            }                                                                                      \
        } while (hop__odometer(idx, r->red_sizes, 0, outer));                                      \
    }

HOP__PAIRWISE(mpw_f16, uint16_t, float, HOP__PW_LOAD_HALF)
HOP__PAIRWISE(mpw_f32, float, float, HOP__PW_LOAD)
HOP__PAIRWISE(mpw_f64, double, double, HOP__PW_LOAD)
HOP__CPAIRWISE(mcpw_c64, float)
HOP__CPAIRWISE(mcpw_c128, double)

#define F16_RUN(buf, n, a) (a) = HOP__PW_ROUND_HALF((a) + mpw_f16((buf), (n), 1))
#define F16_ADD(p, a) (a) = HOP__PW_ROUND_HALF((a) + hop_f16_to_float(*(p)))
#define F32_RUN(buf, n, a) (a) += mpw_f32((buf), (n), 1)
#define F64_RUN(buf, n, a) (a) += mpw_f64((buf), (n), 1)
#define REAL_ADD(p, a) (a) += *(p)
#define C64_RUN(buf, n, a)                                                                         \
    do {                                                                                           \
        float rr_, ri_;                                                                            \
        mcpw_c64((buf), (n), 1, &rr_, &ri_);                                                       \
        (a)[0] += rr_;                                                                             \
        (a)[1] += ri_;                                                                             \
    } while (0)
#define C128_RUN(buf, n, a)                                                                        \
    do {                                                                                           \
        double rr_, ri_;                                                                           \
        mcpw_c128((buf), (n), 1, &rr_, &ri_);                                                      \
        (a)[0] += rr_;                                                                             \
        (a)[1] += ri_;                                                                             \
    } while (0)
#define CPLX_ADD(p, a)                                                                             \
    do {                                                                                           \
        (a)[0] += (p)[0];                                                                          \
        (a)[1] += (p)[1];                                                                          \
    } while (0)

typedef float c64_acc[2];
typedef double c128_acc[2];
MSUM_LOOPS(f16, uint16_t, 1, float, F16_RUN, F16_ADD)
MSUM_LOOPS(f32, float, 1, float, F32_RUN, REAL_ADD)
MSUM_LOOPS(f64, double, 1, double, F64_RUN, REAL_ADD)
MSUM_LOOPS(c64, float, 2, c64_acc, C64_RUN, CPLX_ADD)
MSUM_LOOPS(c128, double, 2, c128_acc, C128_RUN, CPLX_ADD)

#define F16_PRUN(buf, n, a)                                                                        \
    do {                                                                                           \
        for (int64_t k_ = 0; k_ < (n); k_++)                                                       \
            (a) *= hop_f16_to_float((buf)[k_]);                                                    \
        (a) = HOP__PW_ROUND_HALF(a);                                                               \
    } while (0)
#define F16_MUL(p, a) (a) = HOP__PW_ROUND_HALF((a)*hop_f16_to_float(*(p)))
#define REAL_PRUN(buf, n, a)                                                                       \
    do {                                                                                           \
        for (int64_t k_ = 0; k_ < (n); k_++)                                                       \
            (a) *= (buf)[k_];                                                                      \
    } while (0)
#define REAL_MUL(p, a) (a) *= *(p)
#define CPLX_MUL(p, a)                                                                             \
    do {                                                                                           \
        double re_ = (a)[0] * (p)[0] - (a)[1] * (p)[1]; /* (exact for float parts too) */          \
        (a)[1] = (a)[0] * (p)[1] + (a)[1] * (p)[0];                                                \
        (a)[0] = re_;                                                                              \
    } while (0)
#define CPLX_PRUN(buf, n, a)                                                                       \
    do {                                                                                           \
        for (int64_t k_ = 0; k_ < (n); k_++)                                                       \
            CPLX_MUL((buf) + 2 * k_, a);                                                           \
    } while (0)

MSUM_LOOPS(pf16, uint16_t, 1, float, F16_PRUN, F16_MUL)
MSUM_LOOPS(pf32, float, 1, float, REAL_PRUN, REAL_MUL)
MSUM_LOOPS(pf64, double, 1, double, REAL_PRUN, REAL_MUL)
MSUM_LOOPS(pc64, float, 2, c64_acc, CPLX_PRUN, CPLX_MUL)
MSUM_LOOPS(pc128, double, 2, c128_acc, CPLX_PRUN, CPLX_MUL)

/* The reduced dims' mask of argument 1 (validated by shape inference). */
static void
reduced_dims(const hop_rt_arg *dims, int rank, bool *mask)
{
    bool all = dims->kind == HOP_OPND_NONE || (dims->kind == HOP_OPND_LIST && dims->u.list.n == 0);
    for (int d = 0; d < HOP_MAX_RANK; d++)
        mask[d] = all;
    int wrap = rank > 0 ? rank : 1;
    if (dims->kind == HOP_OPND_INT)
        mask[dims->u.i < 0 ? dims->u.i + wrap : dims->u.i] = true;
    else if (dims->kind == HOP_OPND_LIST)
        for (size_t k = 0; k < dims->u.list.n; k++) {
            int64_t d = dims->u.list.items[k].u.i;
            mask[d < 0 ? d + wrap : d] = true;
        }
}

hop_status
hop__masked_sum_run(const hop__call *c, void *scratch, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor, *m = c->args[3].u.tensor;
    const hop_tensor *init = c->args[4].u.tensor;
    bool mask[HOP_MAX_RANK];
    reduced_dims(&c->args[1], x->rank, mask);
    msum r;
    msum_init(&r, x, m, mask);
    int64_t nout = hop_tensor_numel(out);
    size_t esz = hop_dtype_size(x->dtype);
    bool empty = hop_tensor_numel(x) == 0, prod = c->op == HOP_OP_masked_prod;
    hop__bool *mb = (hop__bool *)((char *)scratch + HOP__PW_CHUNK * esz);
    for (int64_t o = 0; o < nout; o++) {
        int64_t rest = o, xo = 0, mo = 0;
        for (int d = r.nkept - 1; d >= 0; d--) {
            int64_t i = rest % r.kept_sizes[d];
            rest /= r.kept_sizes[d];
            xo += i * r.kept_xst[d];
            mo += i * r.kept_mst[d];
        }
        char *dst = (char *)out->data + o * (int64_t)esz;
        const hop__bool *mp = r.m + mo;
        switch (x->dtype) {
        case HOP_F16: {
            float a = hop_f16_to_float(*(const uint16_t *)init->data);
            if (!empty)
                (prod ? msum_pf16 : msum_f16)(&r, (const uint16_t *)r.x + xo, mp, scratch, mb, &a);
            *(uint16_t *)dst = hop_f16_from_float(a);
            break;
        }
        case HOP_F32: {
            float a = *(const float *)init->data;
            if (!empty)
                (prod ? msum_pf32 : msum_f32)(&r, (const float *)r.x + xo, mp, scratch, mb, &a);
            memcpy(dst, &a, sizeof a);
            break;
        }
        case HOP_F64: {
            double a = *(const double *)init->data;
            if (!empty)
                (prod ? msum_pf64 : msum_f64)(&r, (const double *)r.x + xo, mp, scratch, mb, &a);
            memcpy(dst, &a, sizeof a);
            break;
        }
        case HOP_C64: {
            c64_acc a;
            memcpy(a, init->data, sizeof a);
            if (!empty)
                (prod ? msum_pc64 : msum_c64)(&r, (const float *)r.x + 2 * xo, mp, scratch, mb, &a);
            memcpy(dst, a, sizeof a);
            break;
        }
        case HOP_C128: {
            c128_acc a;
            memcpy(a, init->data, sizeof a);
            if (!empty)
                (prod ? msum_pc128 : msum_c128)(&r, (const double *)r.x + 2 * xo, mp, scratch, mb,
                                                &a);
            memcpy(dst, a, sizeof a);
            break;
        }
        default:
            return hop_error(HOP_DTYPE, "%s: x must be a float or complex tensor", c->info->name);
        }
    }
    return HOP_OK;
}

/* The scratch hop__masked_sum_run needs for x's dtype. */
size_t
hop__masked_sum_scratch(hop_dtype dtype)
{
    return HOP__PW_CHUNK * (hop_dtype_size(dtype) + sizeof(hop__bool));
}
