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
 *
 * Idle workers spin only briefly (SPIN_NS: back-to-back kernels from one
 * loop need no wake-up) and then sleep on a condition variable; a spinning
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

#include <pthread.h>
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
#define SPIN_NS 5000    /* an idle worker's, or a waiting caller's, spin */
#define POLL_NS 2000000 /* a polled caller's wait between polls */
#define BACKOFF_MAX 256 /* jobs the pool did not help in a row: this many inline, and ms */

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
static int pending;  /* pieces of the current job not finished */
static int seats;    /* workers that may still join the current job */
static int sleepers; /* workers asleep on wake (or about to be) */
static int waiting;  /* the caller asleep on done (or about to be) */
static int stopping;
/* After a job the pool did not speed up (see hop__pool_run_pieces), jobs
 * run on the caller alone: the next skip_jobs of them, and all until
 * backoff_until (hop__monotonic_ns).  backoff doubles with each such job in
 * a row, up to BACKOFF_MAX, and is 0 after a job it sped up.  Under
 * dispatch. */
static int backoff;
static int skip_jobs;
static int64_t backoff_until;

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

/* The calling thread's CPU time: what its pieces cost, not counting the
 * time the OS ran something else in its place. */
static int64_t
cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return hop__monotonic_ns();
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
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
 * ran. */
static int
work(uint32_t gen)
{
    uint64_t w = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
    for (int ran = 0;; ran++) {
        if (JOB_GEN(w) != gen || JOB_NEXT(w) >= JOB_PIECES(w))
            return ran;
        if (!__atomic_compare_exchange_n(&job, &w, w + 1, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        /* The job cannot finish before this piece does: fn/ctx are its own. */
        job_fn(job_ctx, JOB_NEXT(w), JOB_PIECES(w));
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
    return gen;
}

static void *
worker_main(void *arg)
{
    (void)arg;
    uint32_t seen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE));
    for (;;) {
        uint32_t gen = next_job(seen);
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            return NULL;
        seen = gen;
        /* A seat of this job (a late worker may take one of the next
         * job's: then that job has one worker fewer, never more). */
        if (__atomic_sub_fetch(&seats, 1, __ATOMIC_ACQ_REL) >= 0)
            (void)work(gen);
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
    hop__pool_run_polled(fn, ctx, nth, NULL, NULL);
}

void
hop__pool_run(hop__task_fn fn, const void *ctx, int nth)
{
    hop__pool_run_polled(fn, ctx, nth, NULL, NULL);
}

void
hop__pool_run_polled(hop__task_fn fn, const void *ctx, int nth, void (*poll)(const void *),
                     const void *pctx)
{
    int threads = hop_runtime_threads();
    hop__pool_run_pieces(fn, ctx, nth > threads ? threads : nth, poll, pctx);
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

void
hop__pool_run_pieces(hop__task_fn fn, const void *ctx, int pieces, void (*poll)(const void *),
                     const void *pctx)
{
    int threads = hop_runtime_threads();
    if (pieces > MAX_PIECES)
        pieces = MAX_PIECES;
    if (pieces <= 1 || threads <= 1 || pthread_mutex_trylock(&dispatch) != 0) {
        fn(ctx, 0, 1);
        return;
    }
    /* A polled job (a plan's parallel map: its worker frames make their
     * buffers on first use) always takes the pool, so what a plan keeps
     * after its first parallel run does not depend on the machine's load. */
    int64_t t_enter = hop__monotonic_ns();
    if (poll == NULL && backoff > 0 && (skip_jobs > 0 || t_enter < backoff_until)) {
        if (skip_jobs > 0)
            skip_jobs--;
        pthread_mutex_unlock(&dispatch);
        fn(ctx, 0, 1);
        return;
    }
    start_workers(threads);
    if (nworkers == 0) {
        pthread_mutex_unlock(&dispatch);
        fn(ctx, 0, 1);
        return;
    }

    job_fn = fn;
    job_ctx = ctx;
    __atomic_store_n(&pending, pieces, __ATOMIC_RELEASE);
    int helpers = threads - 1 < pieces - 1 ? threads - 1 : pieces - 1;
    __atomic_store_n(&seats, helpers, __ATOMIC_RELEASE);
    uint32_t gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE)) + 1;
    __atomic_store_n(&job, (uint64_t)gen << 32 | (uint64_t)pieces << 16, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);
    }

    int64_t c_pub = cpu_ns();
    int own = work(gen);
    int64_t c_own = cpu_ns();
    wait_pieces(poll, pctx);
    /*
     * Did the pool help?  On a machine whose cores are all busy a second
     * thread has no core of its own: waking it can make the OS run it in
     * the caller's place, on the caller's core (measured: the worker ran
     * every piece while the caller waited 0.5-20 ms to run again), and a
     * worker descheduled mid-piece keeps the caller waiting as long.  The
     * caller ran `own` of the pieces in c_own - c_pub of its CPU time;
     * alone it would have taken about that * pieces / own.  (CPU time, not
     * wall time: a caller the OS set aside while the worker ran on its core
     * would otherwise look as if its pieces were slow.)  When the job took
     * longer than 95% of that, the next jobs run on the caller alone, and
     * the pool is tried again after them (the pause doubling while the pool
     * does not help): hop.set_num_threads(2) on a busy machine then costs
     * about what one thread does.
     */
    int64_t t_end = hop__monotonic_ns();
    double took = (double)(t_end - t_enter), own_ns = (double)(c_own - c_pub);
    if (own == 0 || took * own > 0.95 * own_ns * pieces) {
        backoff = backoff == 0 ? 1 : backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : backoff * 2;
        skip_jobs = backoff;
        backoff_until = t_end + (int64_t)backoff * 1000000;
    } else {
        backoff = 0;
    }
    pthread_mutex_unlock(&dispatch);
}
