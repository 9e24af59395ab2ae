/*
 * lowering/parplan.c - which loops of a plan may split their iterations
 * over the thread pool (runtime/parmap.c runs them).
 *
 * A loop begun with hop_lower_parallel_loop_begin (map's row loop) has
 * independent iterations.  It qualifies when nothing in its body (or in a
 * subroutine the body calls) allocates per iteration or has an effect whose
 * order matters: Alloc and OpAlloc (tensors sized mid-run) and Extern
 * (foreign kernels, which may have side effects) keep it sequential.  The
 * buffers the body makes (live ranges inside the loop, and every buffer of
 * a subroutine it calls) are its private buffers: each worker gets its own
 * copy in its area of the block, so the frame's one block stays the only
 * allocation for intermediates.  A lazy section's buffers are not: every
 * frame, a worker's too, lays out the section's block of its own when it
 * enters the section.  The work of one iteration is estimated
 * from the instructions it runs and the tensors it touches, so that the
 * run decides whether a dispatch pays.
 */
#include "lowering/lowering_impl.h"

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

/* An op d into slot out (an Op, or a group's reduction epilogue): its work,
 * its operands and its kernel cache. */
static void
add_op(scan *s, const hop__opdesc *d, int32_t out, int64_t mult, int32_t mreg)
{
    add_work(s, out, 2, mult, mreg);
    add_args(s, d->args, d->nargs, mult, mreg);
    if (!s->incache[d->cache]) {
        s->incache[d->cache] = true;
        s->caches[s->ncaches++] = d->cache;
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
        case HOP__OP_OpAlloc:
        case HOP__OP_Extern:
        case HOP__OP_Kernel:
        case HOP__OP_Input:
        case HOP__OP_Halt:
        case HOP__OP_COUNT:
            s->ok = false;
            break;
        case HOP__OP_Layout:
            /* A lazy section's (P1 > 0) lays out its block in the running
             * frame, a worker's its own: no allocation once a frame has it
             * at these sizes.  The plan's own Layout is never in a loop. */
            s->ok = in->p1 > 0;
            break;
        case HOP__OP_Fused: {
            const hop__fgroup *g = in->p4;
            add_work(s, in->p1, g->cost, mult, mreg);
            if (g->epi)
                add_op(s, g->epi, g->epi_out, mult, mreg);
            break;
        }
        case HOP__OP_If: /* a rotated while loop's test may run a group */
            if (in->p4)
                add_work(s, in->p1, ((const hop__fgroup *)in->p4)->cost, mult, mreg);
            break;
        case HOP__OP_Copy:
            add_work(s, in->p1, 1, mult, mreg);
            break;
        case HOP__OP_Op:
            add_op(s, in->p4, in->p1, mult, mreg);
            break;
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
    bool *wbuf = NULL;
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
            if (wbuf == NULL)
                wbuf = hop__arena_zalloc(&p->arena, (size_t)p->nbuffers + 1);
            if (priv == NULL || work == NULL || d == NULL || caches == NULL || wbuf == NULL) {
                st = HOP_NOMEM;
                break;
            }
            for (int32_t b = 0; b < p->nbuffers; b++) {
                const hop__buffer *buf = &p->buffers[b];
                bool inside =
                    buf->routine == (int32_t)ri && buf->def > lp->start && buf->last <= lp->end;
                if ((inside || s.called[buf->routine]) && buf->section == 0) {
                    priv[np++] = b;
                    wbuf[b] = true;
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
    p->wbuf = wbuf;
    hop__free(s.work);
    hop__free(s.called);
    hop__free(s.incache);
    hop__free(s.caches);
    return st;
}
