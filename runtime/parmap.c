/*
 * runtime/parmap.c - running a parallel loop on the thread pool.
 *
 * The code generator marks the loops that may run so (lowering/parplan.c:
 * independent iterations, nothing allocated per iteration, no ordered
 * effect) and gives each the buffers its body makes, which every worker
 * gets its own copy of in its area of the block (frame.c).
 *
 * At run time, LoopInit hands a qualifying loop here when the frame is not
 * a worker itself (a nested parallel loop runs sequentially inside its
 * worker: the pool does not nest) and the estimated work - rows times the
 * instructions and elements one iteration touches - is worth a dispatch.
 * Piece 0 runs on the caller's frame; piece k on worker frame k, made at
 * Layout and kept with the frame, whose slots and registers are copied from
 * the caller's and whose private buffers point into its own area.  Pieces
 * claim chunks of rows from one counter, so a worker that wakes late costs
 * at most a chunk.  A worker runs one iteration with hop__exec_at up to the
 * loop's Next, with its own call stack, so cond, nested loops and Calls
 * work unchanged.  The first failing row wins: rows after a known failure
 * are skipped, and the error of the lowest failing row (its status and
 * message, copied out of the worker thread's error context) is reported
 * once, as a sequential run would report it.  Nothing in the frames needs
 * undoing after an error: the next dispatch copies the slots again.
 */
#include "runtime/vm_impl.h"

#include <stdatomic.h>
#include <stdio.h>

/* The pool hands work over through atomics, which race detectors do not
 * see as ordering: tell helgrind/drd about the handovers (no-ops outside
 * valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif
#ifndef ANNOTATE_HAPPENS_BEFORE
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)(obj))
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)(obj))
#endif

/* Work units (1 ~ a float add, as for kernels) an iteration must reach in
 * total before a loop is split: about 20 us, several times what copying the
 * frames and waking a worker cost (measured: bench/bench_plan.c). */
#define GRAIN 32768
/* Units per interpreted instruction of a body (~15 ns each). */
#define INSN_UNITS 24

/* ------------------------------------------------------------------ running */

static int64_t
sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t
sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The estimated units of one iteration at the bound sizes. */
static int64_t
row_work(const hop__frame *f, const hop__parloop *d)
{
    const hop_plan *p = f->plan;
    int64_t w = (int64_t)d->ninsn * INSN_UNITS;
    for (int32_t i = 0; i < d->nwork; i++) {
        const hop__pwork *k = &d->work[i];
        const hop__slot *sl = &p->slots[k->slot];
        int64_t n = k->mult * k->cost;
        for (int r = 0; r < sl->rank; r++) {
            int64_t v;
            if (hop__xget(sl->sizes[r], f->regs, &v) != HOP_OK) {
                hop_error_clear(); /* a size made inside the body: count 1 */
                v = 1;
            }
            n = sat_mul(n, v > 0 ? v : 0);
        }
        if (k->mreg >= 0 && f->regs[k->mreg] > 1)
            n = sat_mul(n, f->regs[k->mreg]);
        w = sat_add(w, n);
    }
    return w;
}

static atomic_long dispatches;

long
hop__parmap_runs(void)
{
    return atomic_load(&dispatches);
}

typedef struct pjob {
    hop__frame *f;
    const hop__parloop *d;
    int n;      /* the threads it may run on */
    bool split; /* it runs on the pool: the worker frames are prepared */
    int32_t body, next, ireg;
    int64_t rows, chunk;
    _Atomic int64_t cursor;
    _Atomic int64_t failrow; /* the lowest row known to fail */
} pjob;

static void
piece(const void *ctx, int ith, int nth)
{
    (void)nth;
    pjob *j = (pjob *)ctx;
    ANNOTATE_HAPPENS_AFTER(&j->cursor);
    hop__frame *w = ith == 0 ? j->f : j->f->subs[ith - 1];
    int32_t saved = w->stop;
    w->stop = j->next;
    for (;;) {
        int64_t r = atomic_fetch_add_explicit(&j->cursor, j->chunk, memory_order_relaxed);
        if (r >= j->rows)
            break;
        int64_t end = j->rows - r < j->chunk ? j->rows : r + j->chunk;
        for (; r < end; r++) {
            if (r > atomic_load_explicit(&j->failrow, memory_order_relaxed))
                goto out;
            w->regs[j->ireg] = r;
            hop_status st = hop__exec_at(w, j->body);
            if (st != HOP_OK) {
                w->perr = st;
                w->prow = r;
                snprintf(w->pmsg, sizeof w->pmsg, "%s", hop_error_message());
                int64_t cur = atomic_load(&j->failrow);
                while (r < cur && !atomic_compare_exchange_weak(&j->failrow, &cur, r))
                    ;
                goto out;
            }
        }
    }
out:
    w->stop = saved;
    if (w != j->f)
        hop__frame_release_owned(w);
    ANNOTATE_HAPPENS_BEFORE(&j->failrow);
}

/* The caller, waiting while the pool's threads run every row (it may get
 * no piece), still checks for interrupts: its progress handler may only run
 * on its thread. */
static void
poll_interrupt(const void *ctx)
{
    hop__interrupt_poll(((const pjob *)ctx)->f);
}

/* Worker frame w starts from the caller's state, with its own copies of
 * the loop's private buffers (area k of the block). */
static void
prepare(hop__frame *f, hop__frame *w, int k, const hop__parloop *d)
{
    const hop_plan *p = f->plan;
    memcpy(w->slots, f->slots, (size_t)p->nslots * sizeof *w->slots);
    memcpy(w->owner, f->owner, (size_t)p->nslots * sizeof *w->owner);
    memset(w->owned, 0, (size_t)p->nslots);
    hop__regs_copy(w->regs, f->regs);
    w->inputs = f->inputs;
    w->into = f->into;
    w->sp = 0;
    w->stop = -1;
    /* the caller's headers of lazy sections point into its blocks: the
     * worker places them in its own when it enters a section */
    memset(w->sok, 0, (size_t)p->nsections + 1);
    hop__interrupt_share(f, w);
    char *area = (char *)hop_storage_data(f->block->storage) + f->wbase + (int64_t)k * f->warea;
    for (int32_t i = 0; i < d->nprivate; i++) {
        const hop__buffer *b = &p->buffers[d->private_buffers[i]];
        hop_tensor *t = &w->slots[b->slot];
        t->data = area + f->woff[d->private_buffers[i]];
        t->storage = f->block->storage;
        t->offset = (area + f->woff[d->private_buffers[i]] - (char *)hop_storage_data(t->storage)) /
                    (int64_t)hop_dtype_size(t->dtype);
        w->owner[b->slot] = NULL;
    }
}

/*
 * The body's kernels: a worker gets the caller's kernel of each Op (one
 * copy, the first time or after the caller prepared it again) and rebases
 * it row by row, so no row prepares on a worker thread - preparing infers
 * shapes in the thread's own ShapeEnv, which allocates on first use.  What
 * only a worker prepared (a cond branch the caller's rows never took) goes
 * back to the caller after the loop, and from there to every worker next
 * time: from the second run on, no thread prepares, whoever runs which
 * rows.
 */
static void
seed(hop__frame *f, hop__frame *w, const hop__parloop *d)
{
    for (int32_t i = 0; i < d->ncaches; i++) {
        const hop__kcache *src = &f->kernels[d->caches[i]];
        hop__kcache *dst = &w->kernels[d->caches[i]];
        if (src->valid && (!dst->valid || dst->gen != src->gen))
            *dst = *src;
    }
}

/* The pool splits the loop (hop__pool_run_loop's setup): the worker
 * frames start from the caller's state, before any row runs. */
static void
setup(const void *ctx)
{
    pjob *j = (pjob *)ctx;
    for (int k = 0; k < j->n - 1; k++) {
        prepare(j->f, j->f->subs[k], k, j->d);
        seed(j->f, j->f->subs[k], j->d);
    }
    j->split = true;
    ANNOTATE_HAPPENS_BEFORE(&j->cursor);
}

static void
gather(hop__frame *f, int n, const hop__parloop *d)
{
    for (int32_t i = 0; i < d->ncaches; i++) {
        hop__kcache *dst = &f->kernels[d->caches[i]];
        for (int k = 0; k < n - 1 && !dst->valid; k++)
            if (f->subs[k]->kernels[d->caches[i]].valid)
                *dst = f->subs[k]->kernels[d->caches[i]];
    }
}

hop_status
hop__parmap_run(hop__frame *f, int32_t pc, bool *ran)
{
    const hop_plan *p = f->plan;
    const hop__insn *in = &p->code[pc];
    const hop__parloop *d = in->p4;
    int64_t rows = f->regs[in->p3];
    *ran = false;
    int n = f->nsub + 1, threads = hop_runtime_threads();
    if (n > threads)
        n = threads;
    if ((int64_t)n > rows)
        n = (int)rows;
    int64_t work = sat_mul(rows, row_work(f, d));
    if (n < 2 || f->block == NULL || work < GRAIN)
        return HOP_OK;
    for (int k = 0; k < n; k++) {
        hop__frame *w = k ? f->subs[k - 1] : f;
        w->perr = HOP_OK;
        w->prow = INT64_MAX;
    }
    pjob j = {
        .f = f, .d = d, .n = n, .body = pc + 1, .next = in->p2 - 1, .ireg = in->p1, .rows = rows};
    /* Chunks small enough to balance, large enough that the counter is
     * not contended. */
    j.chunk = rows / ((int64_t)n * 8);
    if (j.chunk < 1)
        j.chunk = 1;
    atomic_init(&j.cursor, 0);
    atomic_init(&j.failrow, INT64_MAX);
    atomic_fetch_add(&dispatches, 1);
    /* The pool runs the loop split or on the caller alone (piece 0 of 1
     * then claims every chunk), whichever its last runs found faster
     * (pool.c); the worker frames, made at Layout, are kept either way. */
    hop__pool_run_loop(piece, &j, n, work, d, setup, poll_interrupt, &j);
    ANNOTATE_HAPPENS_AFTER(&j.failrow);
    *ran = true;
    if (j.split)
        gather(f, n, d);
    const hop__frame *bad = NULL;
    for (int k = 0; k < n; k++) {
        const hop__frame *w = k ? f->subs[k - 1] : f;
        if (w->perr != HOP_OK && (bad == NULL || w->prow < bad->prow))
            bad = w;
    }
    return bad ? hop_error(bad->perr, "%s", bad->pmsg) : HOP_OK;
}
