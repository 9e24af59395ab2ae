/*
 * runtime/pool.c - the thread pool that runs a large kernel's pieces on all
 * cores, and the thread-count setting.
 *
 * One job at a time: the caller publishes (fn, ctx, nth) and a new
 * generation, wakes the workers and claims pieces itself like a worker, so
 * a job finishes even when no worker wakes up in time.  Pieces are claimed
 * with a compare-and-swap on one word (generation | nth | next piece): a
 * worker that slept through a whole job can never claim a piece of the next
 * one with the old job's function.  Workers spin briefly before sleeping on
 * a condition variable, so back-to-back kernels do not pay a wake-up each.
 * A caller that finds the pool busy (another thread's job) runs its job
 * inline instead of waiting.  Workers start on first use; a worker that
 * cannot be created leaves its pieces to the others.
 */
#define _GNU_SOURCE
#include "runtime/runtime.h"

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
#define SPIN 20000
#define POLL_NS 2000000 /* a polled caller's wait between polls */

static pthread_mutex_t dispatch = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;     /* sleeping and waking */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static int setting;  /* hop_runtime_set_threads; 0 = cores */
static int nworkers; /* started (under dispatch) */
static pthread_t workers[MAX_THREADS];

static uint64_t job; /* generation << 32 | nth << 16 | next piece */
static hop__task_fn job_fn;
static const void *job_ctx;
static int pending; /* pieces of the current job not finished */
static int stopping;

#define JOB_GEN(w) ((uint32_t)((w) >> 32))
#define JOB_NTH(w) ((int)(((w) >> 16) & 0xffff))
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
    /* Started workers stay: a job of nth pieces never uses more than
     * nth - 1 of them, and restarting threads on every change would give
     * the scheduler fresh threads to place next to the caller (seen as no
     * gain from a second thread right after switching 1 -> 2). */
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

/* Claims and runs pieces of generation gen until none is left. */
static void
work(uint32_t gen)
{
    uint64_t w = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
    for (;;) {
        if (JOB_GEN(w) != gen || JOB_NEXT(w) >= JOB_NTH(w))
            return;
        if (!__atomic_compare_exchange_n(&job, &w, w + 1, true, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        /* The job cannot finish before this piece does: fn/ctx are its own. */
        job_fn(job_ctx, JOB_NEXT(w), JOB_NTH(w));
        if (__atomic_sub_fetch(&pending, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&lock);
            pthread_cond_broadcast(&done);
            pthread_mutex_unlock(&lock);
        }
        w = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
    }
}

static void *
worker_main(void *arg)
{
    (void)arg;
    uint32_t seen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE));
    for (;;) {
        uint32_t gen = seen;
        for (int i = 0; i < SPIN && gen == seen; i++) {
            CPU_RELAX();
            gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE));
        }
        if (gen == seen) {
            pthread_mutex_lock(&lock);
            while ((gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE))) == seen &&
                   !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
                pthread_cond_wait(&wake, &lock);
            pthread_mutex_unlock(&lock);
        }
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            return NULL;
        seen = gen;
        work(gen);
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
    if (nth > threads)
        nth = threads;
    if (nth > 0xffff)
        nth = 0xffff;
    if (nth <= 1 || pthread_mutex_trylock(&dispatch) != 0) {
        fn(ctx, 0, 1);
        return;
    }
    start_workers(nth);
    if (nworkers == 0) {
        pthread_mutex_unlock(&dispatch);
        fn(ctx, 0, 1);
        return;
    }

    job_fn = fn;
    job_ctx = ctx;
    __atomic_store_n(&pending, nth, __ATOMIC_RELEASE);
    uint32_t gen = JOB_GEN(__atomic_load_n(&job, __ATOMIC_ACQUIRE)) + 1;
    pthread_mutex_lock(&lock);
    __atomic_store_n(&job, (uint64_t)gen << 32 | (uint64_t)nth << 16, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);

    work(gen);
    for (int i = 0; i < SPIN && __atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0; i++)
        CPU_RELAX();
    /* Waiting for pieces other threads claimed (all of them, maybe, when
     * more workers are parked than the job needs): poll meanwhile. */
    while (__atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0) {
        pthread_mutex_lock(&lock);
        if (__atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0) {
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
        pthread_mutex_unlock(&lock);
        if (poll && __atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0)
            poll(pctx);
    }
    pthread_mutex_unlock(&dispatch);
}
