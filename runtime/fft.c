/*
 * runtime/fft.c - the FFT ops (fft, rfft, irfft; ops/infer_linalg.c) on
 * FFTW 3 (Debian's libfftw3-dev; docs/ARCHITECTURE.md says why FFTW).
 *
 * An op transforms one dim of a tensor.  The input is first copied (and
 * converted) into a contiguous buffer of the transform's input type laid
 * out as [outer, n, inner] (the output itself for fft, which transforms in
 * place), and one FFTW "guru" plan runs every line at once: the transform
 * of length n with stride `inner`, over `outer * inner` lines.  Plans are
 * made with FFTW_ESTIMATE (no timing runs, so a plan is the same on every
 * run and cheap to make) and FFTW_UNALIGNED, and kept in a small cache keyed
 * by (kind, precision, n, outer, inner); the planner is not thread-safe, so
 * making, caching and destroying plans holds a lock, while executing a
 * cached plan on new arrays (fftw_execute_dft and friends) is safe on any
 * thread.  A plan counts its holders (the cache and each running transform):
 * one evicted while another thread runs it is destroyed by the last.
 * Scaling (norm: 1, 1/sqrt(n), 1/n) multiplies the result afterwards.
 * c2r transforms destroy their input, which is why irfft copies it first.
 */
#include "runtime/runtime.h"

#include <fftw3.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#undef complex
#undef I

#define CACHE 64

typedef struct plan_key {
    int kind; /* 0 c2c forward, 1 c2c backward, 2 r2c, 3 c2r */
    bool dbl;
    int64_t n, outer, inner;
} plan_key;

/* A plan and its holders: the cache (while it keeps it) and each transform
 * running it; destroyed by the last to let go. */
typedef struct held_plan {
    void *plan; /* fftw_plan or fftwf_plan */
    bool dbl;
    int holders;
} held_plan;

typedef struct plan_entry {
    plan_key key;
    held_plan *held;
    uint64_t used;
} plan_entry;

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static plan_entry cache[CACHE];
static uint64_t clock_;

/* One holder lets go of h; plan_lock held. */
static void
let_go_locked(held_plan *h)
{
    if (--h->holders > 0)
        return;
    if (h->dbl)
        fftw_destroy_plan(h->plan);
    else
        fftwf_destroy_plan(h->plan);
    free(h);
}

static bool
same_key(const plan_key *a, const plan_key *b)
{
    return a->kind == b->kind && a->dbl == b->dbl && a->n == b->n && a->outer == b->outer &&
           a->inner == b->inner;
}

/* A new plan for key over the arrays in/out (their contents are untouched:
 * FFTW_ESTIMATE plans without running). */
static void *
make_plan(const plan_key *k, void *in, void *out)
{
    fftw_iodim dim = {(int)k->n, (int)k->inner, (int)k->inner};
    fftw_iodim how[2] = {{(int)k->outer, (int)(k->n * k->inner), (int)(k->n * k->inner)},
                         {(int)k->inner, 1, 1}};
    fftw_iodim hin[2] = {{(int)k->outer, (int)(k->n * k->inner), 0}, {(int)k->inner, 1, 1}};
    unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    int64_t h = k->n / 2 + 1;
    if (k->kind >= 2) {
        /* r2c: in [outer, n, inner] real, out [outer, h, inner] complex;
         * c2r the other way round */
        int64_t rlen = k->n * k->inner, clen = h * k->inner;
        hin[0].is = (int)(k->kind == 2 ? rlen : clen);
        hin[0].os = (int)(k->kind == 2 ? clen : rlen);
        how[0] = hin[0];
    }
    if (k->dbl) {
        switch (k->kind) {
        case 0:
        case 1:
            return fftw_plan_guru_dft(1, &dim, 2, how, in, out,
                                      k->kind == 0 ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        case 2:
            return fftw_plan_guru_dft_r2c(1, &dim, 2, how, in, out, flags);
        default:
            return fftw_plan_guru_dft_c2r(1, &dim, 2, how, in, out, flags);
        }
    }
    switch (k->kind) {
    case 0:
    case 1:
        return fftwf_plan_guru_dft(1, &dim, 2, how, in, out,
                                   k->kind == 0 ? FFTW_FORWARD : FFTW_BACKWARD, flags);
    case 2:
        return fftwf_plan_guru_dft_r2c(1, &dim, 2, how, in, out, flags);
    default:
        return fftwf_plan_guru_dft_c2r(1, &dim, 2, how, in, out, flags);
    }
}

/* The cached plan of key (made over in/out when missing), held for the
 * caller until it calls let_go; NULL when FFTW cannot plan it, or (*nomem
 * set) when there is no memory for its holder. */
static held_plan *
get_plan(const plan_key *k, void *in, void *out, bool *nomem)
{
    pthread_mutex_lock(&plan_lock);
    plan_entry *slot = &cache[0];
    for (int i = 0; i < CACHE; i++) {
        if (cache[i].held != NULL && same_key(&cache[i].key, k)) {
            cache[i].used = ++clock_;
            held_plan *h = cache[i].held;
            h->holders++;
            pthread_mutex_unlock(&plan_lock);
            return h;
        }
        if (cache[i].held == NULL || cache[i].used < slot->used)
            slot = &cache[i];
    }
    held_plan *h = malloc(sizeof *h);
    *nomem = h == NULL;
    void *p = h ? make_plan(k, in, out) : NULL;
    if (p == NULL) {
        free(h);
        pthread_mutex_unlock(&plan_lock);
        return NULL;
    }
    *h = (held_plan){p, k->dbl, 2}; /* the cache and the caller */
    if (slot->held != NULL)         /* evicted: destroyed now, or by its last runner */
        let_go_locked(slot->held);
    *slot = (plan_entry){*k, h, ++clock_};
    pthread_mutex_unlock(&plan_lock);
    return h;
}

static void
let_go(held_plan *h)
{
    pthread_mutex_lock(&plan_lock);
    let_go_locked(h);
    pthread_mutex_unlock(&plan_lock);
}

static void
execute(const plan_key *k, void *p, void *in, void *out)
{
    if (k->dbl) {
        if (k->kind <= 1)
            fftw_execute_dft(p, in, out);
        else if (k->kind == 2)
            fftw_execute_dft_r2c(p, in, out);
        else
            fftw_execute_dft_c2r(p, in, out);
    } else {
        if (k->kind <= 1)
            fftwf_execute_dft(p, in, out);
        else if (k->kind == 2)
            fftwf_execute_dft_r2c(p, in, out);
        else
            fftwf_execute_dft_c2r(p, in, out);
    }
}

/* x (any strides) into contiguous dst of dtype dt, C order, with dim's
 * first `take` elements only (irfft reads n // 2 + 1 of them). */
static void
gather(const hop_tensor *x, int dim, int64_t take, void *dst, hop_dtype dt)
{
    int64_t sizes[HOP_MAX_RANK], idx[HOP_MAX_RANK] = {0}, numel = 1;
    for (int d = 0; d < x->rank; d++) {
        sizes[d] = d == dim ? take : x->sizes[d];
        numel *= sizes[d];
    }
    if (numel == 0)
        return;
    int r = x->rank, inner = r - 1;
    size_t es = hop_dtype_size(dt), xs = hop_dtype_size(x->dtype);
    char *o = dst;
    for (int64_t pos = 0; pos < numel;) {
        int64_t off = 0;
        for (int d = 0; d < r; d++)
            off += idx[d] * x->strides[d];
        int64_t run = r == 0 ? 1 : sizes[inner];
        hop__convert(run, o, dt, (const char *)x->data + off * (int64_t)xs, x->dtype,
                     r == 0 ? 1 : x->strides[inner]);
        o += (size_t)run * es;
        pos += run;
        for (int d = inner - 1; d >= 0; d--) {
            if (++idx[d] < sizes[d])
                break;
            idx[d] = 0;
        }
    }
}

static void
scale(void *p, hop_dtype dt, int64_t count, double s)
{
    if (s == 1)
        return;
    if (dt == HOP_F32 || dt == HOP_C64) {
        float *f = p, fs = (float)s;
        for (int64_t i = 0; i < count; i++)
            f[i] *= fs;
    } else {
        double *f = p;
        for (int64_t i = 0; i < count; i++)
            f[i] *= s;
    }
}

hop_status
hop__fft_run(const hop__call *c, const hop__imem *mem, hop_tensor *out)
{
    const hop_tensor *x = c->args[0].u.tensor;
    int rank = x->rank, dim = (int)(c->args[1].u.i < 0 ? c->args[1].u.i + rank : c->args[1].u.i);
    int64_t norm = c->args[c->op == HOP_OP_rfft ? 2 : 3].u.i;
    int64_t n = c->op == HOP_OP_irfft ? out->sizes[dim] : x->sizes[dim];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; d++)
        outer *= out->sizes[d];
    for (int d = dim + 1; d < rank; d++)
        inner *= out->sizes[d];
    plan_key k = {.kind = c->op == HOP_OP_rfft    ? 2
                          : c->op == HOP_OP_irfft ? 3
                          : c->args[2].u.b        ? 1
                                                  : 0,
                  .dbl = out->dtype == HOP_F64 || out->dtype == HOP_C128,
                  .n = n,
                  .outer = outer,
                  .inner = inner};
    if (n > INT_MAX || outer > INT_MAX || inner > INT_MAX || n * inner > INT_MAX ||
        outer * n * inner > INT_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: transforms this large are not supported",
                         c->info->name);
    int64_t numel = hop_tensor_numel(out);
    if (numel == 0)
        return HOP_OK;
    hop_dtype in_dt = k.kind == 2 ? x->dtype : hop_dtype_complex(out->dtype);
    int64_t h = n / 2 + 1, in_elems = outer * inner * (k.kind == 3 ? h : n);
    void *in = out->data, *block = NULL;
    if (k.kind == 0 || k.kind == 1) {
        gather(x, dim, n, out->data, in_dt); /* in place */
    } else {
        size_t bytes = (size_t)in_elems * hop_dtype_size(in_dt);
        block = mem ? mem->scratch(mem->ud, bytes) : hop_malloc(bytes);
        if (block == NULL)
            return hop_error_code();
        gather(x, dim, k.kind == 3 ? h : n, block, in_dt);
        in = block;
    }
    bool nomem = false;
    held_plan *p = get_plan(&k, in, out->data, &nomem);
    if (p == NULL) {
        if (mem == NULL)
            hop_free(block);
        if (nomem)
            return hop_error(HOP_NOMEM, "%s: out of memory", c->info->name);
        return hop_error(HOP_RUNTIME, "%s: FFTW could not plan a transform of length %lld",
                         c->info->name, (long long)n);
    }
    execute(&k, p->plan, in, out->data);
    let_go(p);
    if (mem == NULL)
        hop_free(block);
    double s = norm == 2 ? 1.0 / (double)n : norm == 1 ? 1.0 / sqrt((double)n) : 1.0;
    scale(out->data, out->dtype, numel * (hop_dtype_is_complex(out->dtype) ? 2 : 1), s);
    return HOP_OK;
}
