/*
 * bench/cref.c - the hand-written C reference of bench/run.py's rows
 * (issue #30): each row's computation as a careful person would write it in
 * C, built with -O3 -march=native (bench/CMakeLists.txt) into a shared
 * library that run.py loads with ctypes and times in the same run, sample by
 * sample alternating with hop.
 *
 * "The same computation" means the same results: every function here gives
 * hop's bits (run.py checks each against hop before timing), so it is built
 * with -ffp-contract=off (a + b * c stays two roundings, as in hop and in
 * NumPy), does its float operations in hop's order, uses hop's relu (nan
 * kept, -0 to +0) and SLEEF's 1-ulp functions, which hop's math backend uses.
 * The vector width is the machine's widest the compiler may use: AVX-512
 * where -march=native has it, else AVX2, else SSE2 (cref_isa says which).
 * Each function runs `reps` repetitions so that one ctypes call's cost (~1
 * us) is spread; run.py divides.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cblas.h>
#include <immintrin.h>
#include <sleef.h>

#define EXPORT __attribute__((visibility("default")))

/* The instruction set the vector code below was built for. */
EXPORT const char *
cref_isa(void)
{
#if defined(__AVX512F__)
    return "avx512f";
#elif defined(__AVX2__) && defined(__FMA__)
    return "avx2";
#else
    return "sse2";
#endif
}

/* ----------------------------------------------------------- fori_iter */

/* v = v * 0.999 + 0.001 on 16 floats, iters times (v in registers). */
EXPORT void
cref_fori(float *v, int64_t iters)
{
    float x[16];
    memcpy(x, v, sizeof x);
    for (int64_t it = 0; it < iters; it++)
        for (int j = 0; j < 16; j++)
            x[j] = x[j] * 0.999f + 0.001f;
    memcpy(v, x, sizeof x);
}

/* ------------------------------------------------------------ map rows */

static inline float
relu(float x)
{
    return x > 0 || x != x ? x : 0.0f;
}

/* out[r] = relu(x[r] * w + b) for rows of 16 floats. */
EXPORT void
cref_map(const float *restrict x, const float *restrict w, const float *restrict b,
         float *restrict out, int64_t rows)
{
    float ww[16], bb[16];
    memcpy(ww, w, sizeof ww);
    memcpy(bb, b, sizeof bb);
    for (int64_t r = 0; r < rows; r++)
        for (int j = 0; j < 16; j++)
            out[r * 16 + j] = relu(x[r * 16 + j] * ww[j] + bb[j]);
}

/* ------------------------------------------------------------ scan RNN */

/* tanh of 32 floats with SLEEF's 1-ulp function at the widest vectors. */
static void
tanh32(float *restrict o, const float *restrict a, const float *restrict b)
{
#if defined(__AVX512F__)
    for (int j = 0; j < 32; j += 16)
        _mm512_storeu_ps(o + j, Sleef_tanhf16_u10avx512f(_mm512_add_ps(_mm512_loadu_ps(a + j),
                                                                       _mm512_loadu_ps(b + j))));
#elif defined(__AVX2__) && defined(__FMA__)
    for (int j = 0; j < 32; j += 8)
        _mm256_storeu_ps(o + j, Sleef_tanhf8_u10avx2(_mm256_add_ps(_mm256_loadu_ps(a + j),
                                                                   _mm256_loadu_ps(b + j))));
#else
    for (int j = 0; j < 32; j += 4)
        _mm_storeu_ps(o + j, Sleef_tanhf4_u10sse2(_mm_add_ps(_mm_loadu_ps(a + j),
                                                             _mm_loadu_ps(b + j))));
#endif
}

/* h = tanh(h @ W + xs[t] @ U) for t < steps, h: [1, 32], each h into
 * hs[t]; the matmuls are BLAS calls (cblas_sgemm, one thread). */
EXPORT void
cref_scan_rnn(const float *W, const float *U, const float *xs, const float *h0, float *hs,
              float *hT, int64_t steps)
{
    float p[32], q[32];
    const float *h = h0;
    for (int64_t t = 0; t < steps; t++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 32, 32, 1.0f, h, 32, W, 32,
                    0.0f, p, 32);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 32, 32, 1.0f, xs + t * 32, 32,
                    U, 32, 0.0f, q, 32);
        tanh32(hs + t * 32, p, q);
        h = hs + t * 32;
    }
    memcpy(hT, h, 32 * sizeof(float));
}

/* ----------------------------------------------------- fused elementwise */

/* exp(relu(x * 2 + 1)) of one vector of W floats, SLEEF's 1-ulp expf. */
#if defined(__AVX512F__)
#define W 16
static inline void
exp_relu(const float *x, float *out)
{
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x), _mm512_set1_ps(2.0f)),
                             _mm512_set1_ps(1.0f));
    /* relu: v where v > 0 or v is nan, else +0 */
    __mmask16 keep = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NLE_UQ);
    _mm512_storeu_ps(out, Sleef_expf16_u10avx512f(_mm512_maskz_mov_ps(keep, v)));
}
#elif defined(__AVX2__) && defined(__FMA__)
#define W 8
static inline void
exp_relu(const float *x, float *out)
{
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x), _mm256_set1_ps(2.0f)),
                             _mm256_set1_ps(1.0f));
    __m256 keep = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NLE_UQ);
    _mm256_storeu_ps(out, Sleef_expf8_u10avx2(_mm256_and_ps(keep, v)));
}
#else
#define W 4
static inline void
exp_relu(const float *x, float *out)
{
    __m128 v = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(x), _mm_set1_ps(2.0f)), _mm_set1_ps(1.0f));
    __m128 keep = _mm_cmpnle_ps(v, _mm_setzero_ps());
    _mm_storeu_ps(out, Sleef_expf4_u10sse2(_mm_and_ps(keep, v)));
}
#endif

/* out = exp(relu(x * 2 + 1)) over n floats; a tail through a padded
 * vector, as hop's math backend does. */
EXPORT void
cref_fused_exp(const float *restrict x, float *restrict out, int64_t n)
{
    int64_t i = 0;
    for (; i + W <= n; i += W)
        exp_relu(x + i, out + i);
    if (i < n) {
        float buf[W] = {0};
        memcpy(buf, x + i, (size_t)(n - i) * sizeof(float));
        exp_relu(buf, buf);
        memcpy(out + i, buf, (size_t)(n - i) * sizeof(float));
    }
}

/* ------------------------------------------------ the same on nth threads */

#ifdef _OPENMP
/* cref_map and cref_fused_exp split into nth equal static pieces, one per
 * OpenMP thread: the ceiling of what a second core gives these rows on this
 * machine (both are bound by memory once the loop is vectorised), which the
 * thread rows report beside hop's 2-vs-1 figure.  The fused pieces start on
 * whole vectors so that the bits equal the one-thread loop's. */
EXPORT void
cref_map_mt(const float *x, const float *w, const float *b, float *out, int64_t rows, int nth)
{
#pragma omp parallel for num_threads(nth) schedule(static)
    for (int k = 0; k < nth; k++) {
        int64_t from = rows * k / nth, to = rows * (k + 1) / nth;
        cref_map(x + from * 16, w, b, out + from * 16, to - from);
    }
}

EXPORT void
cref_fused_exp_mt(const float *x, float *out, int64_t n, int nth)
{
    int64_t vecs = n / W;
#pragma omp parallel for num_threads(nth) schedule(static)
    for (int k = 0; k < nth; k++) {
        int64_t from = vecs * k / nth * W, to = k == nth - 1 ? n : vecs * (k + 1) / nth * W;
        cref_fused_exp(x + from, out + from, to - from);
    }
}
#endif

/* ------------------------------------------------------- plan op chain */

/* The 256-op chain of run.py's chain_fn on 16 floats, reps times:
 * x = x * y; x = x + 1; x = x - y; x = x * 0.5, repeated nops / 4 times. */
EXPORT void
cref_chain(const float *x0, const float *y0, float *out, int nops, int64_t reps)
{
    float y[16];
    memcpy(y, y0, sizeof y);
    for (int64_t r = 0; r < reps; r++) {
        float x[16];
        memcpy(x, x0, sizeof x);
        for (int k = 0; k < nops / 4; k++)
            for (int j = 0; j < 16; j++) {
                float v = x[j] * y[j];
                v = v + 1.0f;
                v = v - y[j];
                x[j] = v * 0.5f;
            }
        memcpy(out, x, sizeof x);
        /* keep the repetitions from being folded into one */
        __asm__ volatile("" : : "r"(out) : "memory");
    }
}

/* ------------------------------------------------------- cond dispatch */

/* out = x * 2 if sum(x) > 0 else x - 1, 16 floats, reps times; the sum in
 * hop's order (a pairwise tree over the 16 elements is what hop's reduction
 * computes: see run.py, which checks the branch taken, not the sum's bits). */
EXPORT void
cref_cond(const float *x, float *out, int64_t reps)
{
    for (int64_t r = 0; r < reps; r++) {
        float s = 0;
        for (int j = 0; j < 16; j++)
            s += x[j];
        if (s > 0)
            for (int j = 0; j < 16; j++)
                out[j] = x[j] * 2.0f;
        else
            for (int j = 0; j < 16; j++)
                out[j] = x[j] - 1.0f;
        __asm__ volatile("" : : "r"(out), "r"(x) : "memory");
    }
}

/* --------------------------------------------------- associative scan */

/* out = cumsum(x), the sequential loop. */
EXPORT void
cref_cumsum(const float *restrict x, float *restrict out, int64_t n)
{
    float s = 0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
        out[i] = s;
    }
}

/* The same split as hop's kernel (16 chunks scanned on their own, then
 * each chunk's elements get the carry of those before it added) on nth
 * threads: a careful parallel cumsum, with hop's bits. */
#define CHUNKS 16

typedef struct cs_job {
    const float *x;
    float *out;
    int64_t n, chunk;
    float carry[CHUNKS];
    int nth;
    int phase;
    int ith;
} cs_job;

static void
cs_piece(const cs_job *j, int ith)
{
    for (int c = CHUNKS * ith / j->nth; c < CHUNKS * (ith + 1) / j->nth; c++) {
        int64_t from = c * j->chunk, to = from + j->chunk < j->n ? from + j->chunk : j->n;
        if (j->phase == 1) {
            float s = 0;
            for (int64_t i = from; i < to; i++) {
                s += j->x[i];
                j->out[i] = s;
            }
        } else if (c > 0) {
            float k = j->carry[c];
            for (int64_t i = from; i < to; i++)
                j->out[i] = k + j->out[i];
        }
    }
}

typedef struct cs_arg {
    const cs_job *j;
    int ith;
} cs_arg;

static void *
cs_thread(void *p)
{
    const cs_arg *a = p;
    cs_piece(a->j, a->ith);
    return NULL;
}

static void
cs_phase(cs_job *j, int phase)
{
    pthread_t t[8];
    cs_arg args[8];
    j->phase = phase;
    int started = 0;
    for (int k = 1; k < j->nth && k < 8; k++) {
        args[k] = (cs_arg){j, k};
        if (pthread_create(&t[k], NULL, cs_thread, &args[k]) != 0)
            break;
        started = k;
    }
    cs_piece(j, 0);
    for (int k = started + 1; k < j->nth; k++) /* threads that did not start */
        cs_piece(j, k);
    for (int k = 1; k <= started; k++)
        pthread_join(t[k], NULL);
}

EXPORT void
cref_cumsum_chunked(const float *x, float *out, int64_t n, int nth)
{
    cs_job j = {.x = x, .out = out, .n = n, .chunk = (n + CHUNKS - 1) / CHUNKS,
                .nth = nth < 1 ? 1 : nth > 8 ? 8 : nth};
    cs_phase(&j, 1);
    for (int c = 1; c < CHUNKS; c++) {
        int64_t last = c * j.chunk - 1;
        if (last >= n)
            break;
        j.carry[c] = c > 1 ? j.carry[c - 1] + out[last] : out[last];
    }
    cs_phase(&j, 3);
}
