/*
 * runtime/scan_sort.c - the ops computed along one dim into a new tensor:
 * cumsum/cumprod, sort/argsort and take (gather by an integer tensor), put
 * (scatter into a copy, NumPy's assignment and add.at) and searchsorted,
 * plus the dispatch of the INDEX family that hop_eager and every plan's OpAlloc
 * instruction run.
 *
 * Each works one line (the elements along the dim, for one index of the
 * other dims) at a time, through a line buffer: hop's allocator's when
 * eager, the plan frame's kept scratch in a plan (hop__imem).  Scans
 * accumulate sequentially in the result's dtype, rounding every step as
 * NumPy's accumulate does (f16 in f32 rounded back to f16 each step, f32 in
 * f32); integers wrap in 64 bits.  Sorting orders nan as the largest
 * value (NumPy puts nans last); the stable kind is a merge sort (NumPy's
 * kind="stable"), the quick and heap kinds are NumPy 1.24's introsort and
 * heapsort (npysort/quicksort.cpp, npysort_heapsort.h) made over the line's
 * indices with NumPy's comparisons, so equal keys end where NumPy puts
 * them.  take checks every index against the dim's size:
 * HOP_INDEX "take: index 7 is out of bounds for dim 0 with size 5"; put
 * every index and the number of values (HOP_SHAPE "put: cannot put 3
 * value(s) at 5 index(es)") before it writes anything.
 */
#include "runtime/runtime.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* The odometer over every dim of sizes but skip: *off advances by strides. */
typedef struct lines {
    int rank, skip;
    const int64_t *sizes;
    int64_t idx[HOP_MAX_RANK];
} lines;

static void
lines_init(lines *w, int rank, const int64_t *sizes, int skip)
{
    w->rank = rank;
    w->skip = skip;
    w->sizes = sizes;
    memset(w->idx, 0, sizeof w->idx);
}

/* The offset (in elements) of the current line under strides. */
static int64_t
lines_offset(const lines *w, const int64_t *strides)
{
    int64_t off = 0;
    for (int d = 0; d < w->rank; d++)
        if (d != w->skip)
            off += w->idx[d] * strides[d];
    return off;
}

/* Moves to the next line; false after the last. */
static bool
lines_next(lines *w)
{
    for (int d = w->rank - 1; d >= 0; d--) {
        if (d == w->skip)
            continue;
        if (++w->idx[d] < w->sizes[d])
            return true;
        w->idx[d] = 0;
    }
    return false;
}

static int64_t
numel_of(int rank, const int64_t *sizes)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= sizes[d];
    return n;
}

static int
wrap_dim(int64_t d, int rank)
{
    int r = rank > 0 ? rank : 1;
    return (int)(d < 0 ? d + r : d);
}

/* n bytes of scratch: the plan frame's (mem), else hop's allocator. */
static void *
scratch_get(const hop__imem *mem, size_t n)
{
    return mem ? mem->scratch(mem->ud, n) : hop_malloc(n);
}

static void
scratch_put(const hop__imem *mem, void *p)
{
    if (mem == NULL)
        hop_free(p);
}

/* ----------------------------------------------------------------- scans */

/* The loops of scan_line, one per element type T: a real one (v[i] =
 * v[i-1] op v[i]) and a complex one over (re, im) pairs of T with NumPy's
 * textbook complex product (C's would recover infinities from a nan: Annex
 * G).  Macros, so each dtype keeps its own inlined loop. */
#define SCAN_REAL(T)                                                                               \
    {                                                                                              \
        T *v = p;                                                                                  \
        for (int64_t i = 1; i < n; i++)                                                            \
            v[i] = sum ? v[i - 1] + v[i] : v[i - 1] * v[i];                                        \
        break;                                                                                     \
    }
#define SCAN_COMPLEX(T)                                                                            \
    {                                                                                              \
        T *v = p;                                                                                  \
        for (int64_t i = 1; i < n; i++) {                                                          \
            T ar = v[2 * i - 2], ai = v[2 * i - 1], br = v[2 * i], bi = v[2 * i + 1];              \
            v[2 * i] = sum ? ar + br : ar * br - ai * bi;                                          \
            v[2 * i + 1] = sum ? ai + bi : ar * bi + ai * br;                                      \
        }                                                                                          \
        break;                                                                                     \
    }

/* One line of n elements in dtype dt, scanned in place as NumPy's
 * add/multiply.accumulate does it: the first element kept as it is (so
 * -0.0 stays -0.0, a complex inf+2j stays inf+2j), each next one the
 * last result op'd with it. */
static void
scan_line(hop_op op, hop_dtype dt, void *p, int64_t n)
{
    bool sum = op == HOP_OP_cumsum;
    switch (dt) {
    case HOP_F32:
        SCAN_REAL(float)
    case HOP_F64:
        SCAN_REAL(double)
    case HOP_F16: {
        uint16_t *v = p;
        for (int64_t i = 1; i < n; i++) {
            float a = hop_f16_to_float(v[i - 1]), x = hop_f16_to_float(v[i]);
            v[i] = hop__f16_noted(sum ? a + x : a * x);
        }
        break;
    }
    case HOP_C64:
        SCAN_COMPLEX(float)
    case HOP_C128:
        SCAN_COMPLEX(double)
    default: /* i64 and u64: the same wrapping bits */
        SCAN_REAL(uint64_t)
    }
}
#undef SCAN_REAL
#undef SCAN_COMPLEX

static hop_status
scan(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    if (hop_tensor_numel(x) == 0)
        return HOP_OK;
    if (x->rank == 0) { /* one element: its own sum and product */
        hop__convert(1, out->data, out->dtype, x->data, x->dtype, 1);
        return HOP_OK;
    }
    int d = wrap_dim(c->args[1].u.i, x->rank);
    int64_t n = x->sizes[d];
    size_t osz = hop_dtype_size(out->dtype);
    char *line = scratch_get(mem, (size_t)n * osz);
    if (line == NULL)
        return HOP_NOMEM;
    lines w;
    lines_init(&w, x->rank, x->sizes, d);
    size_t xsz = hop_dtype_size(x->dtype);
    do {
        const char *src = (const char *)x->data + lines_offset(&w, x->strides) * (int64_t)xsz;
        char *dst = (char *)out->data + lines_offset(&w, out->strides) * (int64_t)osz;
        hop__convert(n, line, out->dtype, src, x->dtype, x->strides[d]);
        scan_line(c->op, out->dtype, line, n);
        hop__scatter(n, dst, out->strides[d], line, osz);
    } while (lines_next(&w));
    scratch_put(mem, line);
    return HOP_OK;
}

/* --------------------------------------------------------------- sorting */

/* A complex key, NumPy's complex64 and complex128 alike. */
typedef struct cplx {
    double re, im;
} cplx;

/* NumPy's CDOUBLE_LT (npysort_common.h): lexicographic, real part first;
 * a nan in a part sorts that number after every one without (R+Rj,
 * R+nanj, nan+Rj, nan+nanj), numbers of one class by their other part. */
static inline bool
cplx_less(cplx a, cplx b)
{
    if (a.re < b.re)
        return a.im == a.im || b.im != b.im;
    if (a.re > b.re)
        return b.im != b.im && a.im == a.im;
    if (a.re == b.re || (a.re != a.re && b.re != b.re))
        return a.im < b.im || (b.im != b.im && a.im == a.im);
    return b.re != b.re;
}

/* A sort key: integers exactly (signed or unsigned), floats as double,
 * complex numbers as two doubles. */
typedef struct key {
    int kind; /* 0 signed, 1 unsigned, 2 float, 3 complex */
    const int64_t *i;
    const uint64_t *u;
    const double *f;
    const cplx *c;
} key;

/* a < b in the ascending order: nan is the largest, nans compare equal. */
static bool
key_less(const key *k, int64_t a, int64_t b)
{
    switch (k->kind) {
    case 0:
        return k->i[a] < k->i[b];
    case 1:
        return k->u[a] < k->u[b];
    case 3:
        return cplx_less(k->c[a], k->c[b]);
    default: {
        double x = k->f[a], y = k->f[b];
        if (isnan(x))
            return false;
        return isnan(y) || x < y;
    }
    }
}

/* Stable merge sort of idx[0..n) by k (descending: by the reverse order,
 * ties still in their original order); tmp has room for n. */
static void
merge_sort(const key *k, bool desc, int64_t *idx, int64_t *tmp, int64_t n)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                /* take from the right only when it is strictly before */
                bool right = desc ? key_less(k, idx[i], idx[j]) : key_less(k, idx[j], idx[i]);
                tmp[o++] = right ? idx[j++] : idx[i++];
            }
            while (i < mid)
                tmp[o++] = idx[i++];
            while (j < hi)
                tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/*
 * NumPy 1.24's introsort (aquicksort_) and heapsort (aheapsort_) of the
 * indices idx[0..n), one function per key kind so the comparison inlines.
 * The comparisons, pivots (median of three), the cut-off to insertion sort
 * (more than 15 elements partition) and the depth limit (2 * floor(log2 n),
 * then heapsort) are NumPy's, so every tie lands where NumPy's lands: its
 * argsort, and its sort of values, which moves values by the same swaps.
 */
#define NPY_SMALL_QUICKSORT 15
#define NPY_STACK 128 /* two pointers per level of at most 64 */

#define NPY_SORTS(SFX, T, LESS)                                                                    \
    /* sifts tmp down from a[i] in the heap a[1..n] */                                             \
    static inline void npy_sift_##SFX(const T *v, int64_t *a, int64_t i, int64_t n, int64_t tmp)   \
    {                                                                                              \
        for (int64_t j = i << 1; j <= n;) {                                                        \
            if (j < n && LESS(v[a[j]], v[a[j + 1]]))                                               \
                j += 1;                                                                            \
            if (!LESS(v[tmp], v[a[j]]))                                                            \
                break;                                                                             \
            a[i] = a[j];                                                                           \
            i = j;                                                                                 \
            j += j;                                                                                \
        }                                                                                          \
        a[i] = tmp;                                                                                \
    }                                                                                              \
                                                                                                   \
    static void npy_heapsort_##SFX(const T *v, int64_t *tosort, int64_t n)                         \
    {                                                                                              \
        int64_t *a = tosort - 1; /* NumPy's heap is indexed from 1 */                              \
        for (int64_t l = n >> 1; l > 0; --l)                                                       \
            npy_sift_##SFX(v, a, l, n, a[l]);                                                      \
        for (; n > 1;) {                                                                           \
            int64_t tmp = a[n];                                                                    \
            a[n] = a[1];                                                                           \
            n -= 1;                                                                                \
            npy_sift_##SFX(v, a, 1, n, tmp);                                                       \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void npy_quicksort_##SFX(const T *v, int64_t *tosort, int64_t num)                      \
    {                                                                                              \
        T vp;                                                                                      \
        int64_t *pl = tosort, *pr = tosort + num - 1;                                              \
        int64_t *stack[NPY_STACK], **sptr = stack;                                                 \
        int64_t *pm, *pi, *pj, *pk, vi, t;                                                         \
        int depth[NPY_STACK], *psdepth = depth;                                                    \
        int cdepth = msb(num) * 2;                                                                 \
        for (;;) {                                                                                 \
            if (cdepth < 0) {                                                                      \
                npy_heapsort_##SFX(v, pl, pr - pl + 1);                                            \
                goto stack_pop;                                                                    \
            }                                                                                      \
            while ((pr - pl) > NPY_SMALL_QUICKSORT) {                                              \
                pm = pl + ((pr - pl) >> 1);                                                        \
                if (LESS(v[*pm], v[*pl]))                                                          \
                    t = *pm, *pm = *pl, *pl = t;                                                   \
                if (LESS(v[*pr], v[*pm]))                                                          \
                    t = *pr, *pr = *pm, *pm = t;                                                   \
                if (LESS(v[*pm], v[*pl]))                                                          \
                    t = *pm, *pm = *pl, *pl = t;                                                   \
                vp = v[*pm];                                                                       \
                pi = pl;                                                                           \
                pj = pr - 1;                                                                       \
                t = *pm, *pm = *pj, *pj = t;                                                       \
                for (;;) {                                                                         \
                    do                                                                             \
                        ++pi;                                                                      \
                    while (LESS(v[*pi], vp));                                                      \
                    do                                                                             \
                        --pj;                                                                      \
                    while (LESS(vp, v[*pj]));                                                      \
                    if (pi >= pj)                                                                  \
                        break;                                                                     \
                    t = *pi, *pi = *pj, *pj = t;                                                   \
                }                                                                                  \
                pk = pr - 1;                                                                       \
                t = *pi, *pi = *pk, *pk = t;                                                       \
                /* the larger partition waits on the stack */                                      \
                if (pi - pl < pr - pi) {                                                           \
                    *sptr++ = pi + 1;                                                              \
                    *sptr++ = pr;                                                                  \
                    pr = pi - 1;                                                                   \
                } else {                                                                           \
                    *sptr++ = pl;                                                                  \
                    *sptr++ = pi - 1;                                                              \
                    pl = pi + 1;                                                                   \
                }                                                                                  \
                *psdepth++ = --cdepth;                                                             \
            }                                                                                      \
            for (pi = pl + 1; pi <= pr; ++pi) {                                                    \
                vi = *pi;                                                                          \
                vp = v[vi];                                                                        \
                pj = pi;                                                                           \
                pk = pi - 1;                                                                       \
                while (pj > pl && LESS(vp, v[*pk]))                                                \
                    *pj-- = *pk--;                                                                 \
                *pj = vi;                                                                          \
            }                                                                                      \
        stack_pop:                                                                                 \
            if (sptr == stack)                                                                     \
                break;                                                                             \
            pr = *(--sptr);                                                                        \
            pl = *(--sptr);                                                                        \
            cdepth = *(--psdepth);                                                                 \
        }                                                                                          \
    }

/* NumPy's npy_get_msb: floor(log2(n)) for n > 0. */
static int
msb(int64_t n)
{
    int depth = 0;
    while (n >>= 1)
        depth++;
    return depth;
}

#define LESS_INT(a, b) ((a) < (b))
/* NumPy's FLOAT_LT: nan is the largest, nans are equal */
#define LESS_FLOAT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
NPY_SORTS(i, int64_t, LESS_INT)
NPY_SORTS(u, uint64_t, LESS_INT)
NPY_SORTS(f, double, LESS_FLOAT)
NPY_SORTS(c, cplx, cplx_less)

/* idx[0..n) in NumPy's order of kind (HOP_SORT_QUICK or HOP_SORT_HEAP). */
static void
npy_sort(const key *k, int kind, int64_t *idx, int64_t n)
{
    bool quick = kind == HOP_SORT_QUICK;
    switch (k->kind) {
    case 0:
        (quick ? npy_quicksort_i : npy_heapsort_i)(k->i, idx, n);
        break;
    case 1:
        (quick ? npy_quicksort_u : npy_heapsort_u)(k->u, idx, n);
        break;
    case 3:
        (quick ? npy_quicksort_c : npy_heapsort_c)(k->c, idx, n);
        break;
    default:
        (quick ? npy_quicksort_f : npy_heapsort_f)(k->f, idx, n);
    }
}

/* Whether NumPy 1.24's sort of float32 values with kind quicksort runs its
 * AVX-512 (Skylake-X) sort here, which writes every nan it moved to the end
 * as the default quiet nan (replace_inf_with_nan).  Its order of -0.0 and
 * 0.0 is the vector network's: hop.numpy checks for them (_sorting.py). */
static bool
npy_avx512_f32_sort(void)
{
    static int v; /* 0 unknown, 1 yes, -1 no; racing threads agree */
    if (v == 0)
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512vl")
                ? 1
                : -1;
    return v > 0;
}

static hop_status
sort(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    int64_t total = hop_tensor_numel(x);
    if (total == 0)
        return HOP_OK;
    int d = x->rank == 0 ? -1 : wrap_dim(c->args[1].u.i, x->rank);
    int64_t n = d < 0 ? 1 : x->sizes[d];
    int64_t xstride = d < 0 ? 0 : x->strides[d], ostride = d < 0 ? 0 : out->strides[d];
    bool desc = c->args[2].u.b;
    int kind = (int)c->args[3].u.i;
    bool nan_quiet = c->op == HOP_OP_sort && kind == HOP_SORT_QUICK && x->dtype == HOP_F32 &&
                     n > 1 && npy_avx512_f32_sort();
    size_t xsz = hop_dtype_size(x->dtype), osz = hop_dtype_size(out->dtype);
    hop_dtype kd = hop_dtype_is_complex(x->dtype)    ? HOP_C128
                   : hop_dtype_is_float(x->dtype)    ? HOP_F64
                   : hop_dtype_is_unsigned(x->dtype) ? HOP_U64
                                                     : HOP_I64;
    size_t ksz = hop_dtype_size(kd);
    /* keys (8 or 16 bytes each), indices and scratch (8 bytes each) */
    char *buf = scratch_get(mem, (size_t)n * (ksz + 16));
    if (buf == NULL)
        return HOP_NOMEM;
    void *keys = buf;
    int64_t *idx = (int64_t *)(buf + n * (int64_t)ksz), *tmp = idx + n;
    key k = {kd == HOP_C128  ? 3
             : kd == HOP_F64 ? 2
             : kd == HOP_U64 ? 1
                             : 0,
             keys, keys, keys, keys};
    lines w;
    lines_init(&w, x->rank, x->sizes, d);
    do {
        const char *src = (const char *)x->data + lines_offset(&w, x->strides) * (int64_t)xsz;
        char *dst = (char *)out->data + lines_offset(&w, out->strides) * (int64_t)osz;
        hop__convert(n, keys, kd, src, x->dtype, xstride);
        for (int64_t i = 0; i < n; i++)
            idx[i] = i;
        if (kind == HOP_SORT_STABLE)
            merge_sort(&k, desc, idx, tmp, n);
        else
            npy_sort(&k, kind, idx, n);
        for (int64_t i = 0; i < n; i++) {
            char *o = dst + i * ostride * (int64_t)osz;
            if (c->op == HOP_OP_argsort) {
                memcpy(o, &idx[i], sizeof idx[i]);
            } else if (nan_quiet && isnan(k.f[idx[i]])) {
                float q = NAN;
                memcpy(o, &q, sizeof q);
            } else {
                memcpy(o, src + idx[i] * xstride * (int64_t)xsz, xsz);
            }
        }
    } while (d >= 0 && lines_next(&w));
    scratch_put(mem, buf);
    return HOP_OK;
}

/* ------------------------------------------------------------------ take */

static hop_status
take(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor, *ix = c->args[2].u.tensor;
    int d = wrap_dim(c->args[1].u.i, x->rank);
    int64_t nidx = hop_tensor_numel(ix), size = x->sizes[d];
    if (hop_tensor_numel(out) == 0 && nidx == 0)
        return HOP_OK;
    /* the indices in C order as i64, checked before anything is written */
    int64_t *k = scratch_get(mem, (size_t)(nidx > 0 ? nidx : 1) * sizeof *k);
    if (k == NULL)
        return HOP_NOMEM;
    int64_t kstrides[HOP_MAX_RANK], s = 1;
    for (int i = ix->rank - 1; i >= 0; i--) {
        kstrides[i] = s;
        s *= ix->sizes[i];
    }
    hop__ew_src src = {ix->data, ix->dtype, ix->rank, ix->sizes, ix->strides, {0}};
    hop_dtype need = HOP_I64;
    hop__ew e;
    hop__ew_init(&e, k, HOP_I64, ix->rank, ix->sizes, kstrides, &src, &need, 1,
                 hop__vfn_copy(HOP_I64), HOP_I64);
    hop__ew_compute(&e, 0, 1);
    for (int64_t j = 0; j < nidx; j++) {
        int64_t v = k[j];
        if (hop_dtype_is_unsigned(ix->dtype) && v < 0)
            v = INT64_MAX; /* a u64 beyond int64 is out of range anyway */
        if (v < -size || v >= size) {
            scratch_put(mem, k);
            return hop_error(HOP_INDEX,
                             "take: index %" PRId64 " is out of bounds for dim %d with "
                             "size %" PRId64,
                             v, d, size);
        }
        k[j] = v < 0 ? v + size : v;
    }
    /* out = [outer dims of x][index dims][inner dims of x], in C order */
    size_t esz = hop_dtype_size(x->dtype);
    int64_t outer = numel_of(d, x->sizes), inner = numel_of(x->rank - d - 1, x->sizes + d + 1);
    int64_t oidx[HOP_MAX_RANK] = {0}, iidx[HOP_MAX_RANK] = {0};
    char *o = out->data; /* out is a new contiguous tensor */
    /* the dims after d dense in x: each index copies one block */
    bool inner_dense = true;
    int64_t dense_stride = 1;
    for (int q = x->rank - 1; q > d; dense_stride *= x->sizes[q], q--)
        inner_dense = inner_dense && (x->sizes[q] == 1 || x->strides[q] == dense_stride);
    int64_t block = inner * (int64_t)esz;
    for (int64_t a = 0; a < outer; a++) {
        int64_t obase = 0;
        for (int q = 0; q < d; q++)
            obase += oidx[q] * x->strides[q];
        if (inner_dense) { /* one block per index (rows of a batch) */
            for (int64_t j = 0; j < nidx; j++, o += block)
                memcpy(o, (const char *)x->data + (obase + k[j] * x->strides[d]) * (int64_t)esz,
                       (size_t)block);
            goto next_outer;
        }
        for (int64_t j = 0; j < nidx; j++) {
            int64_t base = obase + k[j] * x->strides[d];
            memset(iidx, 0, sizeof iidx);
            for (int64_t b = 0; b < inner; b++) {
                int64_t off = base;
                for (int q = d + 1; q < x->rank; q++)
                    off += iidx[q] * x->strides[q];
                memcpy(o, (const char *)x->data + off * (int64_t)esz, esz);
                o += esz;
                for (int q = x->rank - 1; q > d; q--) {
                    if (++iidx[q] < x->sizes[q])
                        break;
                    iidx[q] = 0;
                }
            }
        }
    next_outer:
        for (int q = d - 1; q >= 0; q--) {
            if (++oidx[q] < x->sizes[q])
                break;
            oidx[q] = 0;
        }
    }
    scratch_put(mem, k);
    return HOP_OK;
}

/* --------------------------------------------------- put, searchsorted */

/* x's elements in C order, converted to dt, into buf. */
static void
to_contiguous(const hop_tensor *x, hop_dtype dt, void *buf)
{
    if (hop_tensor_numel(x) == 0)
        return;
    int64_t strides[HOP_MAX_RANK], s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= x->sizes[i];
    }
    hop__ew_src src = {x->data, x->dtype, x->rank, x->sizes, x->strides, {0}};
    hop__ew e;
    hop__ew_init(&e, buf, dt, x->rank, x->sizes, strides, &src, &dt, 1, hop__vfn_copy(dt), dt);
    hop__ew_compute(&e, 0, 1);
}

/* Bytes for n elements of dt, rounded up to 8 so that a second buffer
 * carved after it stays aligned (one scratch block per op: a plan's frame
 * has one). */
static size_t
span(int64_t n, hop_dtype dt)
{
    return ((size_t)(n > 0 ? n : 1) * hop_dtype_size(dt) + 7) / 8 * 8;
}

/* o[k] += v in dtype dt: f16 in f32 rounded back, integers wrapping. */
static void
accumulate_one(hop_dtype dt, void *o, int64_t k, const void *v, int64_t j)
{
    switch (dt) {
#define ACC(D, T)                                                                                  \
    case D:                                                                                        \
        ((T *)o)[k] = (T)((T)((uint64_t)((T *)o)[k] + (uint64_t)((const T *)v)[j]));               \
        break;
        ACC(HOP_I8, int8_t)
        ACC(HOP_U8, uint8_t)
        ACC(HOP_I16, int16_t)
        ACC(HOP_I32, int32_t)
        ACC(HOP_I64, int64_t)
        ACC(HOP_U64, uint64_t)
        ACC(HOP_U16, uint16_t)
        ACC(HOP_U32, uint32_t)
#undef ACC
    case HOP_F16: {
        uint16_t *p = o;
        p[k] = hop__f16_noted(hop_f16_to_float(p[k]) + hop_f16_to_float(((const uint16_t *)v)[j]));
        break;
    }
    case HOP_F32:
        ((float *)o)[k] += ((const float *)v)[j];
        break;
    case HOP_F64:
        ((double *)o)[k] += ((const double *)v)[j];
        break;
    case HOP_C64:
        ((float _Complex *)o)[k] += ((const float _Complex *)v)[j];
        break;
    case HOP_C128:
        ((double _Complex *)o)[k] += ((const double _Complex *)v)[j];
        break;
    default: /* bool: refused by the shape rule */
        break;
    }
}

/* A float loop's result r (of dtype ft) stored into integer dtype it as
 * NumPy's x86-64 casts store it: truncated to int32 (to int64 for int64
 * and uint32), a value out of that range (or nan) being its minimum, then
 * the low bits; uint64 as hop converts.  The rule of hop.numpy's astype
 * (python/hop/numpy/_core.py cast), which composes it from ops. */
static void
store_float_as_int(void *dst, hop_dtype it, const void *r, hop_dtype ft)
{
    double d;
    hop__convert(1, &d, HOP_F64, r, ft, 1);
    int64_t w;
    if (it == HOP_U64) {
        hop__convert(1, dst, it, r, ft, 1);
        return;
    }
    if (it == HOP_I64 || it == HOP_U32)
        w = d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : INT64_MIN;
    else
        w = d > -2147483649.0 && d < 2147483648.0 ? (int64_t)d : INT32_MIN;
    hop__convert(1, dst, it, &w, HOP_I64, 1); /* integer narrowing keeps the low bits */
}

/* o[k] = op(o[k], v[j]) (a put combine): o's element in x's dtype xt,
 * computed in values' dtype vt as the elementwise kernels compute it (f16
 * in f32, rounded back) and converted back to xt, as NumPy's ufunc.at
 * casts its loop's result into the array. */
static void
combine_one(hop__vfn fn, hop_dtype vt, hop_dtype xt, void *o, int64_t k, const void *v, int64_t j)
{
    _Alignas(16) unsigned char a[16], b[16], r[16], back[16];
    hop_dtype ct = hop__compute_dtype(vt);
    size_t xs = hop_dtype_size(xt), vs = hop_dtype_size(vt);
    char *dst = (char *)o + k * (int64_t)xs;
    hop__convert(1, a, ct, dst, xt, 1);
    hop__convert(1, b, ct, (const char *)v + j * (int64_t)vs, vt, 1);
    fn(1, r, (const void *const[]){a, b}, (const int[]){1, 1});
    const void *res = r;
    if (ct != vt) { /* f16: the loop's result is f16 before it reaches x */
        hop__convert(1, back, vt, r, ct, 1);
        res = back;
    }
    if (hop_dtype_is_float(vt) && hop_dtype_is_int(xt))
        store_float_as_int(dst, xt, res, vt);
    else
        hop__convert(1, dst, xt, res, vt, 1);
}

/* o[k] = maximum(o[k], v[j]) (max true) or minimum of complex values of
 * dtype vt, as NumPy's complex loop computes it: the first operand stays
 * unless it has no nan and the second one orders after (maximum) or
 * before (minimum) it by real part, then imaginary part (a nan in the
 * second makes it win; of two equal values the first stays, signed zeros
 * included).  o's element is in x's dtype xt, converted as combine_one
 * converts. */
static void
complex_extreme_one(bool max, hop_dtype vt, hop_dtype xt, void *o, int64_t k, const void *v,
                    int64_t j)
{
    double a[2], b[2];
    char *dst = (char *)o + k * (int64_t)hop_dtype_size(xt);
    if (vt == HOP_C64) {
        float af[2], bf[2];
        hop__convert(1, af, HOP_C64, dst, xt, 1);
        memcpy(bf, (const char *)v + j * 8, sizeof bf);
        a[0] = af[0], a[1] = af[1], b[0] = bf[0], b[1] = bf[1];
    } else {
        hop__convert(1, a, HOP_C128, dst, xt, 1);
        memcpy(b, (const char *)v + j * 16, sizeof b);
    }
    /* NumPy's CGE (CLE with the operands' roles swapped) */
    bool keep;
    if (max)
        keep = (a[0] > b[0] && !isnan(a[1]) && !isnan(b[1])) || (a[0] == b[0] && a[1] >= b[1]);
    else
        keep = (a[0] < b[0] && !isnan(a[1]) && !isnan(b[1])) || (a[0] == b[0] && a[1] <= b[1]);
    if (isnan(a[0]) || isnan(a[1]) || keep)
        return; /* o[k] unchanged: its own value, already in xt */
    if (vt == HOP_C64) {
        float r[2] = {(float)b[0], (float)b[1]};
        hop__convert(1, dst, xt, r, HOP_C64, 1);
    } else {
        hop__convert(1, dst, xt, b, HOP_C128, 1);
    }
}

/*
 * put(x, index, values, combine): out (new, C-contiguous) is x with
 * out.flat[index[j]] = values[j] in index order, or += for combine true,
 * or op(out.flat[index[j]], values[j]) for a combine code's op.  Every
 * index and the count of values are checked before anything is written.
 */
static hop_status
put(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor, *ix = c->args[1].u.tensor;
    const hop_tensor *vt = c->args[2].u.tensor;
    bool acc = c->args[3].kind == HOP_OPND_BOOL && c->args[3].u.b;
    hop__vfn fn = NULL;
    int extreme = 0;          /* complex maximum (1) or minimum (-1): complex_extreme_one */
    hop_dtype vdt = x->dtype; /* values' dtype: x's, or a combining op's */
    if (c->args[3].kind == HOP_OPND_INT) {
        vdt = vt->dtype;
        hop_op op = hop_put_combine_op(c->args[3].u.i);
        if (hop_dtype_is_complex(vdt) && (op == HOP_OP_maximum || op == HOP_OP_minimum))
            extreme = op == HOP_OP_maximum ? 1 : -1;
        else
            fn = op == HOP_OP_COUNT ? NULL : hop__vfn_binary(op, hop__compute_dtype(vdt));
        if (fn == NULL && extreme == 0) /* the shape rule refuses these */
            return hop_error(HOP_DTYPE, "put: combine %" PRId64 " does not take %s", c->args[3].u.i,
                             hop_dtype_name(vdt));
    }
    int64_t nidx = hop_tensor_numel(ix), nv = hop_tensor_numel(vt), size = hop_tensor_numel(x);
    if (nv != nidx && nv != 1)
        return hop_error(HOP_SHAPE, "put: cannot put %" PRId64 " value(s) at %" PRId64 " index(es)",
                         nv, nidx);
    char *block = scratch_get(mem, span(nidx, HOP_I64) + span(nv, vdt));
    if (block == NULL)
        return HOP_NOMEM;
    int64_t *k = (int64_t *)block;
    char *vals = block + span(nidx, HOP_I64);
    to_contiguous(ix, HOP_I64, k);
    for (int64_t j = 0; j < nidx; j++) {
        int64_t v = k[j];
        if (hop_dtype_is_unsigned(ix->dtype) && v < 0)
            v = INT64_MAX;
        if (v < -size || v >= size) {
            scratch_put(mem, block);
            return hop_error(HOP_INDEX, "put: index %" PRId64 " is out of bounds for size %" PRId64,
                             v, size);
        }
        k[j] = v < 0 ? v + size : v;
    }
    to_contiguous(vt, vdt, vals);
    int64_t ostrides[HOP_MAX_RANK], s = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        ostrides[i] = s;
        s *= x->sizes[i];
    }
    if (size > 0) {
        hop__ew_src src = {x->data, x->dtype, x->rank, x->sizes, x->strides, {0}};
        hop_dtype dt = x->dtype;
        hop__ew e;
        hop__ew_init(&e, out->data, dt, x->rank, x->sizes, ostrides, &src, &dt, 1,
                     hop__vfn_copy(dt), dt);
        hop__ew_compute(&e, 0, 1);
    }
    size_t esz = hop_dtype_size(x->dtype);
    char *o = out->data;
    for (int64_t j = 0; j < nidx; j++) {
        int64_t from = nv == 1 ? 0 : j;
        if (extreme != 0)
            complex_extreme_one(extreme > 0, vdt, x->dtype, o, k[j], vals, from);
        else if (fn != NULL)
            combine_one(fn, vdt, x->dtype, o, k[j], vals, from);
        else if (acc)
            accumulate_one(x->dtype, o, k[j], vals, from);
        else
            memcpy(o + k[j] * (int64_t)esz, vals + from * (int64_t)esz, esz);
    }
    scratch_put(mem, block);
    return HOP_OK;
}

/* NumPy's order for searching: nan after every number. */
#define NAN_LT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define PLAIN_LT(a, b) ((a) < (b))
#define F16_LT(a, b) NAN_LT(hop_f16_to_float(a), hop_f16_to_float(b))
#define C64_LT(a, b) cplx_less((cplx){(a)[0], (a)[1]}, (cplx){(b)[0], (b)[1]})
#define C128_LT(a, b) cplx_less((cplx){(a)[0], (a)[1]}, (cplx){(b)[0], (b)[1]})
/* before(x, key): x goes before key (x < key; right: x <= key, !(key < x)). */
#define BEFORE(LT, x, key) (right ? !LT(key, x) : LT(x, key))
/* NumPy's binsearch (npysort/binsearch.cpp) to the letter, so that an
 * unsorted a gives NumPy's answer too: the keys in C order, each search
 * starting from the window the previous key left (a key not before the
 * last one keeps lo; another restarts at 0 with hi one wider). T is one
 * element (an array type for complex: re, im). */
#define SEARCH(T, LT)                                                                              \
    {                                                                                              \
        const T *sa = a;                                                                           \
        const T *sv = v;                                                                           \
        int64_t lo = 0, hi = n;                                                                    \
        const T *last = &sv[0];                                                                    \
        for (int64_t j = 0; j < m; j++) {                                                          \
            const T *want = &sv[j];                                                                \
            if (BEFORE(LT, *last, *want)) {                                                        \
                hi = n;                                                                            \
            } else {                                                                               \
                lo = 0;                                                                            \
                hi = hi < n ? hi + 1 : n;                                                          \
            }                                                                                      \
            last = want;                                                                           \
            while (lo < hi) {                                                                      \
                int64_t mid = lo + ((hi - lo) >> 1);                                               \
                if (BEFORE(LT, sa[mid], *want))                                                    \
                    lo = mid + 1;                                                                  \
                else                                                                               \
                    hi = mid;                                                                      \
            }                                                                                      \
            o[j] = lo;                                                                             \
        }                                                                                          \
    }

typedef float c64_pair[2];
typedef double c128_pair[2];

/* searchsorted(a, values, right): per value NumPy's binary search of a
 * (on a sorted a the number of elements before it: strictly less, or not
 * greater with right). */
static hop_status
searchsorted(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *at = c->args[0].u.tensor, *vt = c->args[1].u.tensor;
    bool right = c->args[2].u.b;
    int64_t n = hop_tensor_numel(at), m = hop_tensor_numel(vt);
    int64_t *o = out->data;
    if (m == 0)
        return HOP_OK;
    char *block = scratch_get(mem, span(n, at->dtype) + span(m, at->dtype));
    if (block == NULL)
        return HOP_NOMEM;
    void *a = block, *v = block + span(n, at->dtype);
    to_contiguous(at, at->dtype, a);
    to_contiguous(vt, at->dtype, v);
    switch (at->dtype) {
    case HOP_BOOL:
        SEARCH(hop__bool, PLAIN_LT)
        break;
    case HOP_I8:
        SEARCH(int8_t, PLAIN_LT)
        break;
    case HOP_U8:
        SEARCH(uint8_t, PLAIN_LT)
        break;
    case HOP_I16:
        SEARCH(int16_t, PLAIN_LT)
        break;
    case HOP_I32:
        SEARCH(int32_t, PLAIN_LT)
        break;
    case HOP_I64:
        SEARCH(int64_t, PLAIN_LT)
        break;
    case HOP_U64:
        SEARCH(uint64_t, PLAIN_LT)
        break;
    case HOP_U16:
        SEARCH(uint16_t, PLAIN_LT)
        break;
    case HOP_U32:
        SEARCH(uint32_t, PLAIN_LT)
        break;
    case HOP_F16:
        SEARCH(uint16_t, F16_LT)
        break;
    case HOP_F32:
        SEARCH(float, NAN_LT)
        break;
    case HOP_F64:
        SEARCH(double, NAN_LT)
        break;
    case HOP_C64:
        SEARCH(c64_pair, C64_LT)
        break;
    case HOP_C128:
        SEARCH(c128_pair, C128_LT)
        break;
    default:
        break;
    }
    scratch_put(mem, block);
    return HOP_OK;
}

/* ------------------------------------------------------------- dispatch */

hop_status
hop__index_run(const hop__call *c, const hop__imem *mem, hop_tensor **out)
{
    *out = NULL;
    hop_tensor *t;
    if (c->op == HOP_OP_nonzero) {
        if ((t = hop__nonzero(c->args[0].u.tensor, mem)) == NULL)
            return hop_error_code();
        *out = t;
        return HOP_OK;
    }
    hop_dtype dt = c->res.meta.dtype;
    int rank = c->res.meta.rank;
    t = mem ? mem->result(mem->ud, dt, rank, c->sizes) : hop_tensor_empty(dt, rank, c->sizes);
    if (t == NULL)
        return hop_error_code();
    hop_status st;
    switch (c->op) {
    case HOP_OP_cumsum:
    case HOP_OP_cumprod:
        st = scan(c, mem, t);
        break;
    case HOP_OP_sort:
    case HOP_OP_argsort:
        st = sort(c, mem, t);
        break;
    case HOP_OP_take:
        st = take(c, mem, t);
        break;
    case HOP_OP_dynamic_update_slice:
        hop__dynamic_update(c, t);
        st = HOP_OK;
        break;
    case HOP_OP_put:
        st = put(c, mem, t);
        break;
    case HOP_OP_searchsorted:
        st = searchsorted(c, mem, t);
        break;
    case HOP_OP_masked_sum:
    case HOP_OP_masked_prod: {
        void *scratch = scratch_get(mem, hop__masked_sum_scratch(c->args[0].u.tensor->dtype));
        st = scratch == NULL ? HOP_NOMEM : hop__masked_sum_run(c, scratch, t);
        if (scratch != NULL)
            scratch_put(mem, scratch);
        break;
    }
    case HOP_OP_bitcast: /* x's bytes in C order are the result's */
        to_contiguous(c->args[0].u.tensor, c->args[0].u.tensor->dtype, t->data);
        st = HOP_OK;
        break;
    default:
        st = c->info->rule == HOP_RULE_LINALG ? hop__linalg_run(c, mem, t)
             : c->info->rule == HOP_RULE_FFT
                 ? hop__fft_run(c, mem, t)
                 : hop_error(HOP_UNSUPPORTED, "%s: not an op of the INDEX family", c->info->name);
        break;
    }
    if (st != HOP_OK) {
        hop_tensor_release(t);
        return st;
    }
    *out = t;
    return HOP_OK;
}

hop_status
hop__index_eager(const hop__call *c, hop_rt_value *out)
{
    hop_status st = hop__index_run(c, NULL, &out->tensor);
    if (st == HOP_OK)
        out->kind = HOP_VALUE_TENSOR;
    return st;
}
