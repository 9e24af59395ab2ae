/*
 * lowering/parmap.c - parallel loops: which loops of a plan may split their
 * iterations over the thread pool, the worker frames, and running such a
 * loop on the pool.
 *
 * A loop begun with hop_lower_parallel_loop_begin (map's row loop) has
 * independent iterations.  At lowering, a loop qualifies when nothing in its
 * body (or in a subroutine the body calls) allocates per iteration or has an
 * effect whose order matters: Alloc and Eager (tensors sized mid-run) and
 * Extern (foreign kernels, which may have side effects) keep it
 * sequential.  The buffers the body makes (live ranges inside the loop, and
 * every buffer of a subroutine it calls) are its private buffers: each
 * worker gets its own copy in its area of the block (memplan.c), so the
 * frame's one block stays the only allocation for intermediates.
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
#include "lowering/lowering_impl.h"

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
/* Worker frames at most (the pool has up to 256 threads). */
#define MAX_WORKERS 63

static size_t
al(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---------------------------------------------------------------- planning */

typedef struct scan {
    hop_lower_ctx *cx;
    bool ok, nomem;
    int64_t ninsn;
    hop__pwork *work;
    size_t nwork, capwork;
    bool *called;    /* by routine */
    bool *incache;   /* by kernel cache: caches[] holds it */
    int32_t *caches; /* of the Ops the body runs */
    size_t ncaches;
} scan;

static void
add_work(scan *s, int32_t slot, int32_t cost, int64_t mult, int32_t mreg)
{
    if (hop__grow((void **)&s->work, &s->capwork, s->nwork + 1, sizeof *s->work) != HOP_OK) {
        s->ok = false;
        s->nomem = true;
        return;
    }
    s->work[s->nwork++] = (hop__pwork){slot, cost, mreg, mult};
}

static void
add_args(scan *s, const hop__oparg *args, int n, int64_t mult, int32_t mreg)
{
    for (int i = 0; i < n; i++) {
        if (args[i].kind == HOP__A_TENSOR)
            add_work(s, args[i].slot, 1, mult, mreg);
        else if (args[i].kind == HOP__A_LIST)
            add_args(s, args[i].items, args[i].n, mult, mreg);
    }
}

/* Instructions [from, to) of routine ri (positions in the routine).  mult
 * and mreg: how often one iteration of the parallel loop runs them. */
static void
scan_code(scan *s, int32_t ri, int32_t from, int32_t to, int64_t mult, int32_t mreg, int depth)
{
    const hop__rcode *rc = &s->cx->routines[ri];
    if (depth > 64) {
        s->ok = false;
        return;
    }
    for (int32_t pc = from; pc < to && s->ok; pc++) {
        const hop__insn *in = &rc->code[pc];
        s->ninsn += mult;
        switch ((hop__opcode)in->opcode) {
        case HOP__OP_Alloc:
        case HOP__OP_Eager:
        case HOP__OP_Extern:
        case HOP__OP_Input:
        case HOP__OP_Layout:
        case HOP__OP_Halt:
        case HOP__OP_COUNT:
            s->ok = false;
            break;
        case HOP__OP_Fused:
            add_work(s, in->p1, ((const hop__fgroup *)in->p4)->cost, mult, mreg);
            break;
        case HOP__OP_Copy:
            add_work(s, in->p1, 1, mult, mreg);
            break;
        case HOP__OP_Op: {
            const hop__opdesc *d = in->p4;
            add_work(s, in->p1, 2, mult, mreg);
            add_args(s, d->args, d->nargs, mult, mreg);
            if (!s->incache[d->cache]) {
                s->incache[d->cache] = true;
                s->caches[s->ncaches++] = d->cache;
            }
            break;
        }
        case HOP__OP_Call: {
            /* Before assembly, P1 is the routine. */
            s->called[in->p1] = true;
            const hop__rcode *callee = &s->cx->routines[in->p1];
            scan_code(s, in->p1, 0, (int32_t)callee->n, mult, mreg, depth + 1);
            break;
        }
        case HOP__OP_LoopInit: {
            /* A nested loop: its body runs count times per iteration. */
            int32_t next = in->p2 - 1;
            int64_t m = mult;
            int32_t r = mreg;
            const hop__insn *prev = pc > from ? &rc->code[pc - 1] : NULL;
            if (prev && prev->opcode == HOP__OP_Integer && prev->p1 == in->p3)
                m = prev->i64 > 0 && prev->i64 < (INT64_MAX >> 20) / (m > 0 ? m : 1) ? m * prev->i64
                                                                                     : m;
            else if (r < 0)
                r = in->p3;
            scan_code(s, ri, pc + 1, next + 1, m, r, depth + 1);
            pc = next;
            break;
        }
        default:
            break;
        }
    }
}

hop_status
hop__parmap_plan(hop_lower_ctx *cx)
{
    hop_plan *p = cx->plan;
    scan s = {.cx = cx};
    s.called = hop__malloc(cx->nroutines + 1);
    s.incache = hop__malloc((size_t)cx->ncache + 1);
    s.caches = hop__malloc(((size_t)cx->ncache + 1) * sizeof *s.caches);
    bool *wregion = NULL;
    hop_status st = s.called && s.incache && s.caches ? HOP_OK : HOP_NOMEM;
    for (size_t ri = 0; ri < cx->nroutines && st == HOP_OK; ri++) {
        hop__rcode *rc = &cx->routines[ri];
        for (size_t l = 0; l < rc->nloops && st == HOP_OK; l++) {
            const hop__loop *lp = &rc->loops[l];
            if (!lp->parallel)
                continue;
            memset(s.called, 0, cx->nroutines + 1);
            memset(s.incache, 0, (size_t)cx->ncache + 1);
            s.ok = true;
            s.ninsn = 0;
            s.nwork = 0;
            s.ncaches = 0;
            scan_code(&s, (int32_t)ri, lp->start + 1, lp->end + 1, 1, -1, 0);
            if (s.nomem) {
                st = HOP_NOMEM;
                break;
            }
            if (!s.ok)
                continue;
            int32_t np = 0;
            int32_t *priv = hop__arena_alloc(&p->arena, ((size_t)p->nbuffers + 1) * sizeof *priv);
            hop__pwork *work = hop__arena_alloc(&p->arena, (s.nwork + 1) * sizeof *work);
            hop__parloop *d = hop__arena_zalloc(&p->arena, sizeof *d);
            int32_t *caches = hop__arena_alloc(&p->arena, (s.ncaches + 1) * sizeof *caches);
            if (wregion == NULL)
                wregion = hop__arena_zalloc(&p->arena, (size_t)p->nregions + 1);
            if (priv == NULL || work == NULL || d == NULL || caches == NULL || wregion == NULL) {
                st = HOP_NOMEM;
                break;
            }
            for (int32_t b = 0; b < p->nbuffers; b++) {
                const hop__buffer *buf = &p->buffers[b];
                bool inside =
                    buf->routine == (int32_t)ri && buf->def > lp->start && buf->last <= lp->end;
                if (inside || s.called[buf->routine]) {
                    priv[np++] = b;
                    wregion[buf->region] = true;
                }
            }
            if (s.nwork)
                memcpy(work, s.work, s.nwork * sizeof *work);
            d->nprivate = np;
            d->private_buffers = priv;
            d->ninsn = s.ninsn > INT32_MAX ? INT32_MAX : (int32_t)s.ninsn;
            d->nwork = (int32_t)s.nwork;
            d->work = work;
            if (s.ncaches)
                memcpy(caches, s.caches, s.ncaches * sizeof *caches);
            d->ncaches = (int32_t)s.ncaches;
            d->caches = caches;
            rc->code[lp->start].p4 = d;
            p->nparloops++;
        }
    }
    p->wregion = wregion;
    hop__free(s.work);
    hop__free(s.called);
    hop__free(s.incache);
    hop__free(s.caches);
    return st;
}

/* ----------------------------------------------------------- worker frames */

int
hop__parmap_workers(const hop_plan *p)
{
    if (p->nparloops == 0)
        return 0;
    int n = hop_runtime_threads() - 1;
    return n < 0 ? 0 : n > MAX_WORKERS ? MAX_WORKERS : n;
}

void
hop__parmap_free(hop__frame *f)
{
    for (int k = 0; k < f->subcap; k++)
        hop__frame_release_owned(f->subs[k]);
    hop__free(f->subraw);
    f->subraw = NULL;
    f->subs = NULL;
    f->subcap = 0;
    f->nsub = 0;
}

hop_status
hop__parmap_reserve(hop__frame *f, int n)
{
    if (n <= f->subcap)
        return HOP_OK;
    size_t fb = hop__frame_bytes(f->plan), ptrs = al((size_t)n * sizeof(hop__frame *));
    void *raw = hop__calloc(1, 64 + ptrs + (size_t)n * fb);
    if (raw == NULL)
        return hop_error_code();
    int nsub = f->nsub;
    hop__parmap_free(f);
    char *c = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    f->subs = (hop__frame **)c;
    c += ptrs;
    for (int k = 0; k < n; k++)
        f->subs[k] = hop__frame_init(f->plan, c + (size_t)k * fb);
    f->subraw = raw;
    f->subcap = n;
    f->nsub = nsub < n ? nsub : n;
    return HOP_OK;
}

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
        if (k->mreg >= 0 && f->regs[k->mreg] != HOP_UNBOUND && f->regs[k->mreg] > 1)
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
    memcpy(w->regs, f->regs, (size_t)p->nregs * sizeof *w->regs);
    w->inputs = f->inputs;
    w->into = f->into;
    w->sp = 0;
    w->stop = -1;
    hop__interrupt_share(f, w);
    char *area = (char *)hop_storage_data(f->block->storage) + f->wbase + (int64_t)k * f->warea;
    for (int32_t i = 0; i < d->nprivate; i++) {
        const hop__buffer *b = &p->buffers[d->private_buffers[i]];
        hop_tensor *t = &w->slots[b->slot];
        t->data = area + f->woff[b->region];
        t->storage = f->block->storage;
        t->offset = (area + f->woff[b->region] - (char *)hop_storage_data(t->storage)) /
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
    if (n < 2 || f->block == NULL || sat_mul(rows, row_work(f, d)) < GRAIN)
        return HOP_OK;
    for (int k = 0; k < n - 1; k++) {
        prepare(f, f->subs[k], k, d);
        seed(f, f->subs[k], d);
    }
    for (int k = 0; k < n; k++) {
        hop__frame *w = k ? f->subs[k - 1] : f;
        w->perr = HOP_OK;
        w->prow = INT64_MAX;
    }
    pjob j = {.f = f, .body = pc + 1, .next = in->p2 - 1, .ireg = in->p1, .rows = rows};
    /* Chunks small enough to balance, large enough that the counter is
     * not contended. */
    j.chunk = rows / ((int64_t)n * 8);
    if (j.chunk < 1)
        j.chunk = 1;
    atomic_init(&j.cursor, 0);
    atomic_init(&j.failrow, INT64_MAX);
    atomic_fetch_add(&dispatches, 1);
    ANNOTATE_HAPPENS_BEFORE(&j.cursor);
    hop__pool_run_polled(piece, &j, n, poll_interrupt, &j);
    ANNOTATE_HAPPENS_AFTER(&j.failrow);
    *ran = true;
    gather(f, n, d);
    const hop__frame *bad = NULL;
    for (int k = 0; k < n; k++) {
        const hop__frame *w = k ? f->subs[k - 1] : f;
        if (w->perr != HOP_OK && (bad == NULL || w->prow < bad->prow))
            bad = w;
    }
    return bad ? hop_error(bad->perr, "%s", bad->pmsg) : HOP_OK;
}
