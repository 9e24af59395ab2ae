/*
 * runtime/pool.c - the thread pool that runs a large kernel's pieces on all
 * cores, and the thread-count setting.
 *
 * One job at a time: the caller publishes (fn, ctx, pieces) and a new
 * generation, wakes the workers that sleep and claims pieces itself like a
 * worker, so a job finishes even when no worker wakes up in time.  Pieces
 * are claimed with a compare-and-swap on one word (generation | pieces |
 * next piece): a worker that slept through a whole job can never claim a
 * piece of the next one with the old job's function.
 *
 * Why pieces, and few threads, matter on a busy machine: the OS may
 * deschedule any thread for milliseconds, and a job split into one piece
 * per thread then waits for the slowest (measured on 2 loaded cores: a map
 * took 3x longer on 2 threads than on 1).  So a job may have many more
 * pieces than threads (hop__pool_run_pieces), each thread claims the next
 * free one, and a descheduled worker holds the others back by at most the
 * piece in its hands; a worker that wakes up after the last piece was taken
 * costs nothing.  A job never runs on more threads than the setting: a
 * worker takes a seat first, and there are threads - 1 seats per job.
 * Whether a job is split at all is its kind's figures' call (below), for a
 * plan's parallel loop too (hop__pool_run_loop).
 *
 * Idle workers spin a little (SPIN_NS: back-to-back kernels from one
 * loop, or calls from Python a few us apart, need no wake-up, which costs
 * tens of us) and then sleep on a condition variable; a spinning
 * worker takes a core from the caller and from everyone else.  The caller
 * waits for pieces still in other threads' hands the same way.  Wake-ups
 * are skipped when nobody sleeps.  A caller that finds the pool busy
 * (another thread's job) runs its job inline instead of waiting.  Workers
 * start on first use; a worker that cannot be created leaves its pieces to
 * the others.
 */
#define _GNU_SOURCE
#include "runtime/runtime.h"

#include "core/clock.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#define MAX_THREADS 256
#define MAX_PIECES 0xffff
#define SPIN_NS 50000   /* an idle worker's, or a waiting caller's, spin */
#define POLL_NS 2000000 /* a polled caller's wait between polls */
#define KINDS 64        /* job kinds the pool keeps figures for (a direct-mapped table) */
#define SAMPLES 5       /* figures kept per kind and way: the median of these decides */
#define PROBE_MIN 4     /* jobs of a kind between tries of the other way, after a switch */
#define PROBE_MAX 256   /* ... and at most, while the way in use keeps winning */
#define POOL_PROBE 3    /* jobs a try of the pool lasts (the first may find workers asleep) */
#define MARGIN 0.95     /* the pool must take at most this share of the caller's time */
#define WARM_NS 1000000 /* a worker runs slowly this long after it wakes (see record) */
#define COLD_MAX 16     /* cold jobs in a row a kind skips before they are its figures */

static pthread_mutex_t dispatch = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;     /* sleeping and waking */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static int setting;  /* hop_runtime_set_threads; 0 = cores */
static int nworkers; /* started (under dispatch) */
static pthread_t workers[MAX_THREADS];

static uint64_t job; /* generation << 32 | pieces << 16 | next piece */
static hop__task_fn job_fn;
static const void *job_ctx;
static int pending; /* pieces of the current job not finished */
static int job_fp;  /* the workers' floating-point flags of the current job (hop_fp_status) */
/* generation << 32 | workers that may still join that job: a worker takes
 * a seat of the job it saw only (a worker that slept through a job cannot
 * take a seat of the next one, which then ran without it). */
static uint64_t seats;
void (*hop__pool_seat_hook)(void); /* runtime.h: for tests */
static int sleepers;               /* workers asleep on wake (or about to be) */
static int64_t woke;               /* when a worker last woke from its sleep (or started) */
static int waiting;                /* the caller asleep on done (or about to be) */
static int stopping;
/* Counters (hop_runtime_pool_counts): jobs split or run whole, and the
 * pieces each side ran, one relaxed add per job or piece (a piece is tens
 * of us), on a line of their own, away from the job's words. */
static _Alignas(64) long n_split, n_whole, n_caller_pieces, n_worker_pieces;

#define JOB_GEN(w) ((uint32_t)((w) >> 32))
#define JOB_PIECES(w) ((int)(((w) >> 16) & 0xffff))
#define JOB_NEXT(w) ((int)((w)&0xffff))

/* sysconf reads /sys on Linux: once per process, not once per kernel. */
static int
cores(void)
{
    static int cached;
    int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c < 1 ? 1 : c > MAX_THREADS ? MAX_THREADS : (int)c;
        __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
    }
    return n;
}

static void stop_workers(void);

void
hop_runtime_set_threads(int n)
{
    /* Started workers stay: a job never seats more than threads - 1 of
     * them, and restarting threads on every change would give the
     * scheduler fresh threads to place next to the caller (seen as no gain
     * from a second thread right after switching 1 -> 2). */
    pthread_mutex_lock(&dispatch);
    __atomic_store_n(&setting, n <= 0 ? 0 : n > MAX_THREADS ? MAX_THREADS : n, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&dispatch);
}

int
hop_runtime_threads(void)
{
    int s = __atomic_load_n(&setting, __ATOMIC_RELAXED);
    return s > 0 ? s : cores();
}

/* Claims and runs pieces of generation gen until none is left; how many it
 * ran.  A worker hands the floating-point flags its pieces raised to the
 * job before the piece counts as done (the caller's own stay in its fenv). */
static int
claim(uint32_t gen, bool worker)
{
    long *count = worker ? &n_worker_pieces : &n_caller_pieces;
    uint64_t w = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
    for (int ran = 0;; ran++) {
        if (JOB_GEN(w) != gen || JOB_NEXT(w) >= JOB_PIECES(w))
            return ran;
        if (!__atomic_compare_exchange_n(&job, &w, w + 1, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        /* The job cannot finish before this piece does: fn/ctx are its own. */
        job_fn(job_ctx, JOB_NEXT(w), JOB_PIECES(w));
        int fp = worker ? hop__fp_take() : 0;
        if (fp != 0)
            __atomic_fetch_or(&job_fp, fp, __ATOMIC_RELAXED);
        __atomic_add_fetch(count, 1, __ATOMIC_RELAXED); /* before the job can end */
        if (__atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST) == 0 &&
            __atomic_load_n(&waiting, __ATOMIC_SEQ_CST)) {
            pthread_mutex_lock(&lock);
            pthread_cond_broadcast(&done);
            pthread_mutex_unlock(&lock);
        }
        w = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
    }
}

/* Pass i of a spin that lasts SPIN_NS from its first clock read (*until, 0
 * before it): pauses the core and returns true, or false once the time is
 * up.  The clock is read every 64th pass only, so a pass costs a pause. */
static inline bool
spin(int i, int64_t *until)
{
    if ((i & 63) == 63) {
        int64_t t = hop__monotonic_ns();
        if (*until == 0)
            *until = t + SPIN_NS;
        else if (t >= *until)
            return false;
    }
    CPU_RELAX();
    return true;
}

/* The generation after `seen`, spinning up to SPIN_NS, then asleep; 0 when
 * the pool stops. */
static uint32_t
next_job(uint32_t seen)
{
    int64_t until = 0;
    for (int i = 0;; i++) {
        uint32_t gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE));
        if (gen != seen)
            return gen;
        if (!spin(i, &until))
            break;
    }
    uint32_t gen;
    pthread_mutex_lock(&lock);
    /* sleepers before the test: a caller that publishes after the test
     * sees it and wakes us (both seq_cst) */
    __atomic_add_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
    while ((gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_SEQ_CST))) == seen &&
           !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&wake, &lock);
    __atomic_sub_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
    __atomic_store_n(&woke, hop__monotonic_ns(), __ATOMIC_RELAXED);
    return gen;
}

/* A seat of job gen, if one is left. */
static bool
take_seat(uint32_t gen)
{
    uint64_t s = __atomic_load_n(&seats, __ATOMIC_ACQUIRE);
    while (JOB_GEN(s) == gen && (uint32_t)s > 0)
        if (__atomic_compare_exchange_n(&seats, &s, s - 1, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return true;
    return false;
}

static void *
worker_main(void *arg)
{
    (void)arg;
    __atomic_store_n(&woke, hop__monotonic_ns(), __ATOMIC_RELAXED);
    uint32_t seen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE));
    for (;;) {
        uint32_t gen = next_job(seen);
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            return NULL;
        seen = gen;
        void (*hook)(void) = __atomic_load_n(&hop__pool_seat_hook, __ATOMIC_ACQUIRE);
        if (hook)
            hook();
        if (take_seat(gen))
            (void)claim(gen, true);
    }
}

/* Starts workers up to n - 1 (the caller is the n-th thread). */
static void
start_workers(int n)
{
    while (nworkers < n - 1) {
        if (pthread_create(&workers[nworkers], NULL, worker_main, NULL) != 0)
            return;
        nworkers++;
    }
}

/* Joins every worker; the caller holds dispatch. */
static void
stop_workers(void)
{
    if (nworkers == 0)
        return;
    pthread_mutex_lock(&lock);
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < nworkers; i++)
        pthread_join(workers[i], NULL);
    nworkers = 0;
    __atomic_store_n(&stopping, 0, __ATOMIC_RELEASE);
}

void
hop__pool_stop(void)
{
    pthread_mutex_lock(&dispatch);
    stop_workers();
    pthread_mutex_unlock(&dispatch);
}

void
hop_runtime_parallel(hop_parallel_fn fn, const void *ctx, int nth)
{
    hop__pool_run(fn, ctx, nth, 0);
}

void
hop_runtime_parallel_work(hop_parallel_fn fn, const void *ctx, int nth, int64_t work)
{
    hop__pool_run(fn, ctx, nth, work);
}

void
hop_runtime_parallel_pieces(hop_parallel_fn fn, const void *ctx, int pieces, int64_t work)
{
    hop__pool_run_pieces(fn, ctx, pieces, work, NULL, NULL);
}

void
hop__pool_run(hop__task_fn fn, const void *ctx, int nth, int64_t work)
{
    int threads = hop_runtime_threads();
    hop__pool_run_pieces(fn, ctx, nth > threads ? threads : nth, work, NULL, NULL);
}

void
hop__pool_run_polled(hop__task_fn fn, const void *ctx, int nth, void (*poll)(const void *),
                     const void *pctx)
{
    int threads = hop_runtime_threads();
    hop__pool_run_pieces(fn, ctx, nth > threads ? threads : nth, 0, poll, pctx);
}

/*
 * Does the pool pay for a kind of job?  Only the figures can say: on a
 * quiet machine a second thread halves a large kernel, while on a machine
 * whose cores are all busy it has no core of its own - waking it can make
 * the OS run it in the caller's place (measured: the worker ran every piece
 * while the caller waited 0.5-20 ms to run again), and a worker descheduled
 * mid-piece keeps the caller waiting as long.  So the pool keeps, per kind
 * of job (its function and the size class of its work: a BLAS call, a
 * fused group of some size, a scan phase; a plan's parallel loop, keyed by
 * the loop), the wall time per unit of work of its last jobs run each way -
 * on the caller alone and on the pool - and runs the next job the way
 * whose median is lower, the pool only when it takes at most MARGIN of the
 * caller's time: hop.set_num_threads(2) then costs about what one thread
 * does when the second does not help.  A job on the pool that did not
 * split (one thread ran every piece) loses to any time of the caller's
 * (see record): on a machine with no core to spare that is how the pool's
 * jobs run.
 *
 * Wall time of the whole job, the same clock for both ways: what the user
 * waits for.  (The caller's CPU time for its own pieces, the measure before,
 * misjudged a job of one piece per thread - a BLAS call each - whenever the
 * worker woke late, and one bad job sent every kind to the caller for up to
 * 256 jobs, during which the worker fell asleep, so the next try found it
 * late again.)  The way not in use is tried again after `probe` jobs of
 * the kind and probe ms: a try of the pool is POOL_PROBE jobs in a row,
 * since its first job may find the workers asleep, cut short by a job that
 * took twice the caller's time; probe doubles while the way in use keeps
 * winning, up to PROBE_MAX (so on a busy machine a try costs at most one
 * slow job in 256 ms, as the backoff before did), and falls back to
 * PROBE_MIN when the way changes.  Kinds share
 * nothing, so a map that does not pay on the pool leaves BLAS calls on it.
 * Under kinds_lock; a kind evicted by another (a table slot's collision)
 * starts again.
 */
typedef struct kind {
    hop__task_fn fn;      /* NULL: unused */
    const void *key;      /* the job's own key (a plan's parallel loop), or NULL */
    int size;             /* the size class: log2 of the work */
    float ns[2][SAMPLES]; /* ns per unit of work: [0] on the caller alone, [1] on the pool */
    uint8_t n[2], at[2];  /* figures held and the next to replace, per way */
    bool pooled;          /* the way in use */
    int16_t left;         /* jobs before the other way is tried ... */
    int64_t due;          /* ... and the time (hop__monotonic_ns) */
    int16_t probe;        /* that interval, in jobs and in ms */
    int8_t trying;        /* jobs left of a try of the other way */
    bool warm;            /* the next job on the pool wakes (or starts) the workers */
    uint8_t cold;         /* cold jobs on the pool skipped since its last figure */
} kind;

static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;
static kind kinds[KINDS];

static int
size_class(int64_t work)
{
    return work <= 1 ? 0 : 64 - __builtin_clzll((unsigned long long)work);
}

static kind *
kind_of(hop__task_fn fn, const void *key, int size)
{
    uintptr_t h = (uintptr_t)fn * 0x9E3779B97F4A7C15u + (uintptr_t)key * 0xC2B2AE3D27D4EB4Fu +
                  (uintptr_t)size * 0x85EBCA6Bu;
    kind *k = &kinds[(h >> 20) % KINDS];
    if (k->fn != fn || k->key != key || k->size != size) {
        memset(k, 0, sizeof *k);
        k->fn = fn;
        k->key = key;
        k->size = size;
        k->pooled = true; /* a new kind tries the pool first ... */
        k->warm = true;
        k->left = POOL_PROBE;
        k->probe = PROBE_MIN; /* ... then the caller alone */
    }
    return k;
}

static float
median(const float *v, int n)
{
    float s[SAMPLES];
    memcpy(s, v, (size_t)n * sizeof *s);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            float t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Whether the next job of kind (fn, key, size) takes the pool. */
static bool
choose(hop__task_fn fn, const void *key, int size, int64_t now)
{
    pthread_mutex_lock(&kinds_lock);
    kind *k = kind_of(fn, key, size);
    bool pool = k->pooled;
    if (k->trying > 0) {
        k->trying--;
        pool = !pool;
    } else if ((k->left > 0 ? --k->left : 0) == 0 && now >= k->due &&
               !(pool && k->cold > 0 && k->cold < COLD_MAX)) {
        k->left = k->probe;
        pool = !pool;
        k->trying = (int8_t)(pool ? POOL_PROBE - 1 : 0);
        if (pool) {
            /* the try's own figures decide: older ones may be a wake-up's,
             * a thread start's or a busier moment's */
            k->n[1] = k->at[1] = 0;
            k->warm = true;
        }
    }
    pthread_mutex_unlock(&kinds_lock);
    return pool;
}

/* A job of kind (fn, key, size) took ns of wall time on the pool (pool)
 * or on the caller alone, cold when it lasted less than WARM_NS and a
 * worker had woken less than WARM_NS before it began (or woke for it),
 * split when on the pool both the caller and a worker ran pieces of it:
 * the way the next jobs take. */
static void
record(hop__task_fn fn, const void *key, int size, int64_t work, bool pool, bool cold, bool split,
       int64_t ns, int64_t now)
{
    pthread_mutex_lock(&kinds_lock);
    kind *k = kind_of(fn, key, size);
    int w = pool;
    float per = (float)((double)ns / (double)(work > 1 ? work : 1));
    /* The first job of a kind, or of a try of the pool, started the
     * workers or woke them from their sleep (a try comes after jobs on the
     * caller alone): its time says how fast a worker wakes, not what the
     * pool does for this kind, so it is neither a figure nor a reason to
     * end the try. */
    if (pool && k->warm) {
        k->warm = false;
        pthread_mutex_unlock(&kinds_lock);
        return;
    }
    /* Nor, once the caller alone has figures, is a cold job that took at
     * most twice the caller's time, unless COLD_MAX such jobs came in a row
     * (then cold is how this kind's jobs run); a job longer than WARM_NS
     * is a figure however it began, as its slow start is a small part of
     * it.  On this KVM guest a worker's pieces take ~3x as
     * long for the first ~0.5 ms after it wakes (a 100,000 x 16 map's
     * pieces 28-44 us, against 11 us later and on the caller), so a kind
     * whose jobs come between stretches of one-thread work - the workers
     * sleep meanwhile - or whose tries of the pool, each of which wakes
     * them, last three jobs of 0.2 ms, looked slow on the pool for good.
     * A try of the pool lasts until it has figures (and choose waits for
     * them before it tries the caller).  A job over twice the caller's
     * time is more than a cold worker: a figure, as before. */
    if (pool && cold && split && k->n[0] > 0 && k->cold < COLD_MAX &&
        per <= 2 * median(k->ns[0], k->n[0])) {
        k->cold++;
        if (!k->pooled)
            k->trying++;
        pthread_mutex_unlock(&kinds_lock);
        return;
    }
    if (pool && (!cold || !split))
        k->cold = 0;
    /* A job on the pool that one thread ran alone - the workers woke after
     * the caller had taken every piece, or the woken worker ran them all
     * in the caller's place while the caller waited for a core - is what
     * a second thread gets on a machine with no core to spare: a figure,
     * however cold (skipped as cold, such jobs kept a kind on the pool for
     * 16 jobs at a time), that loses to any time of the caller's (its own
     * time, one thread's plus a wake-up, beat the caller's median by the
     * load's noise often enough to send a map of 100,000 x 16 to the pool
     * in 588 of 1,250 jobs beside a CPU-bound process: 0.82x one thread),
     * and the end of a try. */
    if (pool && !split)
        per = INFINITY;
    k->ns[w][k->at[w]] = per;
    k->at[w] = (uint8_t)((k->at[w] + 1) % SAMPLES);
    if (k->n[w] < SAMPLES)
        k->n[w]++;
    /* A try of the pool ends at a job that took twice the caller's time,
     * or that did not split: a busy machine pays for one such job per try. */
    if (k->trying > 0 && pool && (!split || (k->n[0] > 0 && per > 2 * median(k->ns[0], k->n[0]))))
        k->trying = 0;
    if (k->trying == 0 && k->n[0] > 0 && k->n[1] > 0) {
        bool was = k->pooled;
        k->pooled = median(k->ns[1], k->n[1]) <= MARGIN * median(k->ns[0], k->n[0]);
        if (k->pooled != was) {
            k->probe = PROBE_MIN;
            k->left = PROBE_MIN;
            k->due = now;
        } else if (w != was) { /* a try that lost: the next one later */
            if (k->probe < PROBE_MAX)
                k->probe = (int16_t)(k->probe * 2);
            k->due = now + (int64_t)k->probe * 1000000;
        }
    }
    pthread_mutex_unlock(&kinds_lock);
}

bool
hop__pool_choose(hop__task_fn fn, const void *key, int64_t work, int64_t now)
{
    return choose(fn, key, size_class(work), now);
}

void
hop__pool_record(hop__task_fn fn, const void *key, int64_t work, bool pool, bool cold, bool split,
                 int64_t ns, int64_t now)
{
    record(fn, key, size_class(work), work, pool, cold, split, ns, now);
}

/* Waits until every piece is finished: spinning a little, then asleep
 * (polling meanwhile when asked). */
static void
wait_pieces(void (*poll)(const void *), const void *pctx)
{
    int64_t until = 0;
    for (int i = 0; __atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0; i++)
        if (!spin(i, &until))
            break;
    while (__atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0) {
        pthread_mutex_lock(&lock);
        __atomic_store_n(&waiting, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&pending, __ATOMIC_SEQ_CST) > 0) {
            if (poll == NULL) {
                pthread_cond_wait(&done, &lock);
            } else {
                struct timespec t;
                clock_gettime(CLOCK_REALTIME, &t);
                t.tv_nsec += POLL_NS;
                if (t.tv_nsec >= 1000000000) {
                    t.tv_sec++;
                    t.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&done, &lock, &t);
            }
        }
        __atomic_store_n(&waiting, 0, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&lock);
        if (poll && __atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0)
            poll(pctx);
    }
}

/* How a job runs (run_job): the kind's key, whether its kind's figures
 * choose the way (else it always takes the pool), what the caller does
 * once the job is split, before any piece runs, and its poll. */
typedef struct job_opts {
    const void *key;
    bool decide;
    void (*setup)(const void *ctx);
    void (*poll)(const void *);
    const void *pctx;
} job_opts;

/* Runs the pieces of a job on the pool, whose workers are started and
 * whose dispatch the caller holds (and releases): how many pieces the
 * caller ran. */
static int
split_job(hop__task_fn fn, const void *ctx, int pieces, int threads, const job_opts *o)
{
    if (o->setup)
        o->setup(ctx);
    job_fn = fn;
    job_ctx = ctx;
    __atomic_store_n(&pending, pieces, __ATOMIC_RELEASE);
    __atomic_store_n(&job_fp, 0, __ATOMIC_RELAXED);
    int helpers = threads - 1 < pieces - 1 ? threads - 1 : pieces - 1;
    uint32_t gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE)) + 1;
    __atomic_store_n(&seats, (uint64_t)gen << 32 | (uint32_t)helpers, __ATOMIC_RELEASE);
    __atomic_store_n(&job, (uint64_t)gen << 32 | (uint64_t)pieces << 16, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);
    }
    __atomic_add_fetch(&n_split, 1, __ATOMIC_RELAXED);
    int mine = claim(gen, false);
    wait_pieces(o->poll, o->pctx);
    int fp = __atomic_load_n(&job_fp, __ATOMIC_ACQUIRE); /* (pending's seq_cst orders it) */
    if (fp != 0)
        hop__fp_note(fp);
    pthread_mutex_unlock(&dispatch);
    return mine;
}

static void
run_job(hop__task_fn fn, const void *ctx, int pieces, int64_t work, const job_opts *o)
{
    int threads = hop_runtime_threads();
    if (pieces > MAX_PIECES)
        pieces = MAX_PIECES;
    if (pieces <= 1 || threads <= 1 || pthread_mutex_trylock(&dispatch) != 0) {
        fn(ctx, 0, 1); /* not timed: a call from a piece, or beside another job */
        return;
    }
    int size = size_class(work);
    int64_t t0 = hop__monotonic_ns();
    if (o->decide && !choose(fn, o->key, size, t0)) {
        pthread_mutex_unlock(&dispatch);
        __atomic_add_fetch(&n_whole, 1, __ATOMIC_RELAXED);
        fn(ctx, 0, 1);
        int64_t t1 = hop__monotonic_ns();
        record(fn, o->key, size, work, false, false, false, t1 - t0, t1);
        return;
    }
    start_workers(threads);
    if (nworkers == 0) {
        pthread_mutex_unlock(&dispatch);
        fn(ctx, 0, 1);
        return;
    }
    int mine = split_job(fn, ctx, pieces, threads, o);
    if (o->decide) {
        int64_t t1 = hop__monotonic_ns();
        bool cold = t1 - t0 < WARM_NS && __atomic_load_n(&woke, __ATOMIC_RELAXED) > t0 - WARM_NS;
        record(fn, o->key, size, work, true, cold, mine > 0 && mine < pieces, t1 - t0, t1);
    }
}

void
hop__pool_run_pieces(hop__task_fn fn, const void *ctx, int pieces, int64_t work,
                     void (*poll)(const void *), const void *pctx)
{
    job_opts o = {.decide = poll == NULL, .poll = poll, .pctx = pctx};
    run_job(fn, ctx, pieces, work, &o);
}

void
hop__pool_run_loop(hop__task_fn fn, const void *ctx, int nth, int64_t work, const void *key,
                   void (*setup)(const void *ctx), void (*poll)(const void *), const void *pctx)
{
    int threads = hop_runtime_threads();
    job_opts o = {.key = key, .decide = true, .setup = setup, .poll = poll, .pctx = pctx};
    run_job(fn, ctx, nth > threads ? threads : nth, work, &o);
}

void
hop_runtime_pool_counts(hop_pool_counts *c)
{
    c->split = __atomic_load_n(&n_split, __ATOMIC_RELAXED);
    c->whole = __atomic_load_n(&n_whole, __ATOMIC_RELAXED);
    c->caller_pieces = __atomic_load_n(&n_caller_pieces, __ATOMIC_RELAXED);
    c->worker_pieces = __atomic_load_n(&n_worker_pieces, __ATOMIC_RELAXED);
}
