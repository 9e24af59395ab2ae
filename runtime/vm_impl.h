/*
 * runtime/vm_impl.h - the VM's private part: frames (the state of one run)
 * and what the files of the program interpreter share.  Nothing outside
 * runtime/ includes it; the code generator sees only runtime/program.h.
 *
 *   vm.c          the interpreter loop (hop_plan_run*), operands, views,
 *                 results, interrupts, int programs (hop__xeval)
 *   frame.c       plans' lifetime, frames, worker frames, the block's layout,
 *                 the binding of output tensors and the storage of late
 *                 tensors kept between runs
 *   parmap.c      parallel loops on the pool
 *   fused_exec.c  the tiled executor of fused groups, tensor copies
 *   explain.c     hop_plan_dump and the trace of a run
 *   export.c      plans as C functions (an ffi closure)
 */
#ifndef HOP_RUNTIME_VM_IMPL_H
#define HOP_RUNTIME_VM_IMPL_H

#include "runtime/program.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdatomic.h>

/* A kernel a frame keeps for an Op between runs. */
typedef struct hop__kcache {
    hop_kernel k;
    bool valid;
    /* which preparation k comes from (unique over all frames): parmap.c
     * copies a kernel to a worker frame only when the worker's differs */
    uint64_t gen;
} hop__kcache;

/* Per-run state; one per concurrent run. */
struct hop__frame {
    hop_plan *plan;
    void *raw;                 /* the allocation holding the frame and its arrays */
    hop_tensor *const *inputs; /* this run's */
    hop_tensor *const *into;   /* hop_plan_run_into's outputs, or NULL */
    hop_tensor *slots;
    hop_tensor **owner;   /* the tensor whose storage a slot's header uses */
    unsigned char *owned; /* owner is a reference this frame holds */
    int64_t *regs;
    int32_t *stack;
    int32_t sp;
    hop__kcache *kernels;
    hop_rt_arg *rtargs;
    hop_tensor *block; /* the memory plan's block (a byte tensor) */
    int64_t *layout_key;
    bool layout_ok;
    /* Lazy sections (1..nsections): each one's block (NULL until a run
     * enters it; kept like the block), the symbol values it was laid out
     * for (nlayout_regs per section) and whether its headers are placed. */
    hop_tensor **sblock;
    int64_t *skey;
    unsigned char *sok;
    int64_t *offsets; /* per buffer */
    void *pack;       /* scratch of the layouts that pack (frame.c pack_bytes) */
    /* per output: the tensor the last run returned (one reference); reused
     * when the caller has released it and the sizes are the same */
    hop_tensor **recycle;
    /* Late tensors (Alloc, OpAlloc): per slot, the tensor whose storage the
     * slot's last one used (one reference), kept between runs and reused
     * when nothing else holds it and its storage is large enough; nkept
     * counts them.  scratch: an INDEX op's line buffer (nscratch bytes).
     * hop__late_tensor hands them out; a result takes its tensor away
     * (hop__late_forget); hop_plan_trim frees them with the frame. */
    hop_tensor **kept;
    int32_t nkept;
    void *scratch;
    size_t nscratch;

    /* Parallel loops (parmap.c).  stop: hop__exec_at returns OK on reaching
     * the Next at this pc (a worker running one iteration), -1 otherwise.
     * The block holds nsub worker areas of warea bytes from wbase; woff
     * gives each private buffer's offset in an area.  subs are the worker
     * frames (one allocation, subraw), made at Layout and kept. */
    int32_t stop;
    int nsub, subcap;
    hop__frame **subs;
    void *subraw;
    int64_t *woff;
    int64_t warea, wbase;
    /* Interrupts.  budget: work units left before the next check; epoch:
     * the plan's interrupt count when the run began; root: the run's own
     * frame (a worker's is its caller's), whose halt tells its workers to
     * stop and whose progress handler runs on the thread that called
     * (caller). */
    int64_t budget;
    uint32_t epoch;
    hop__frame *root;
    _Atomic int halt;
    int (*progress)(void *ud);
    void *progress_ud;
    pthread_t caller;
    /* a piece's first error: status, row and message */
    hop_status perr;
    int64_t prow;
    char pmsg[1024];
};

/* ------------------------------------------------------------- frame.c */

/* Work units between two interrupt checks: ~1000 interpreted instructions,
 * or kernels of ~4M elements (an Op's kernel work >> HOP__CHECK_SHIFT). */
#define HOP__CHECK_EVERY 1024
#define HOP__CHECK_SHIFT 12

/* "x, y": the names of p's inputs, for messages, into buf (cap > 0;
 * truncated). */
const char *hop__input_names(const hop_plan *p, char *buf, size_t cap);
/* A new frame for a run of p (NULL on out-of-memory), and its end.  A run
 * takes the plan's cached frame when there is one (vm.c). */
hop__frame *hop__frame_new(hop_plan *p);
void hop__frame_free(hop__frame *f); /* NULL is a no-op */
/* A frame's bytes (one allocation) and its setup in raw (zeroed). */
size_t hop__frame_bytes(const hop_plan *p);
hop__frame *hop__frame_init(hop_plan *p, void *raw);
/* Drops the references the frame's slots hold. */
void hop__frame_release_owned(hop__frame *f);
/* A late tensor for slot s (dtype, rank, sizes checked already): a new
 * reference to a contiguous tensor in the storage the frame keeps for s
 * when nothing else holds it and it is large enough, else in new storage
 * (with room to grow), which the frame keeps from then on.  NULL with the
 * error set (HOP_NOMEM); the kept storage is then as it was. */
hop_tensor *hop__late_tensor(hop__frame *f, int32_t s, hop_dtype dtype, int rank,
                             const int64_t *sizes);
/* n bytes of the frame's scratch (kept, grown when too small).  NULL with
 * the error set. */
void *hop__frame_scratch(hop__frame *f, size_t n);
/* The slot whose kept late tensor is own (a result's owner), or -1. */
int32_t hop__late_find(const hop__frame *f, const hop_tensor *own);
/* The frame lets go of slot s's kept tensor: it is handed to the caller as
 * (part of) a result, so it must never be written again by a later run. */
void hop__late_forget(hop__frame *f, int32_t s);
/* Frees the frame's kept late tensors and scratch. */
void hop__frame_release_kept(hop__frame *f);
/* Keeps n worker frames for f (Layout).  HOP_NOMEM leaves f as it was. */
hop_status hop__parmap_reserve(hop__frame *f, int n);
/* Worker frames a layout makes room for: threads - 1, or 0. */
int hop__parmap_workers(const hop_plan *p);

/* Sets t's geometry as a view of storage s (a header the frame owns). */
void hop__header(hop_tensor *t, hop_storage *s, hop_dtype dtype, int rank, const int64_t *sizes,
                 const int64_t *strides, void *data);
/* The sizes of slot s at regs, and their product, checked as eager checks
 * an op's result (HOP_NOMEM "<op>: f32[...] is too large"). */
hop_status hop__slot_sizes(const hop_plan *p, int32_t s, const int64_t *regs, int64_t *sizes,
                           int64_t *numel);
/* Layout: places the block's tensors for the bound sizes (again only when
 * they changed), then binds the root's output slots to new tensors or the
 * caller's (into, for hop_plan_run_into). */
hop_status hop__layout(hop__frame *f);
/* Layout k > 0: places lazy section k's tensors in the frame's block for
 * the section, made or grown when the bound sizes need more (again only
 * when they changed), so that only a run that enters the section reserves
 * its memory.  HOP_NOMEM "<op>: ... is too large" as hop__layout. */
hop_status hop__layout_section(hop__frame *f, int32_t k);
hop_status hop__bind_outputs(hop__frame *f, hop_tensor *const *into);

/* A worker frame w of f's run starts checking interrupts as its root does. */
void hop__interrupt_share(hop__frame *f, hop__frame *w);
/* On the caller's thread: runs f's progress handler, halting the run's
 * other threads when it asks to stop. */
void hop__interrupt_poll(hop__frame *f);
/* The check every HOP__CHECK_EVERY units: HOP_INTERRUPTED when the run
 * must stop. */
hop_status hop__interrupt_check(hop__frame *f);

/* ---------------------------------------------------------------- vm.c */

/* Runs from pc to Halt, or to the Next at f->stop. */
hop_status hop__exec_at(hop__frame *f, int32_t pc);

/* Slots a and b exchange what they hold (their headers and whose storage
 * they use): a double-buffered carry's next value becomes the current one
 * without a copy.  The two have one geometry (hop_lower_swap checks): only
 * where their elements are changes hands. */
static inline void
hop__swap_slots(hop__frame *f, int32_t p1, int32_t p2)
{
    hop_tensor *a = &f->slots[p1], *b = &f->slots[p2];
    void *data = a->data;
    hop_storage *storage = a->storage;
    int64_t offset = a->offset;
    hop_tensor *o = f->owner[p1];
    unsigned char w = f->owned[p1];
    a->data = b->data;
    a->storage = b->storage;
    a->offset = b->offset;
    b->data = data;
    b->storage = storage;
    b->offset = offset;
    f->owner[p1] = f->owner[p2];
    f->owned[p1] = f->owned[p2];
    f->owner[p2] = o;
    f->owned[p2] = w;
}

/* The value an If or IfNot tests: the one element of slot P1 (P3 = 0) or
 * r[P1] (P3 = 1). */
static inline hop_status
hop__branch_value(const hop__frame *f, const hop__insn *in, int64_t *v)
{
    if (in->p3 != 0) {
        *v = f->regs[in->p1];
        return HOP_OK;
    }
    const hop_tensor *t = &f->slots[in->p1];
    if (t->dtype == HOP_BOOL) {
        *v = *(const unsigned char *)t->data != 0;
        return HOP_OK;
    }
    return hop_tensor_item_int(t, v);
}

/* ---------------------------------------------------------- straight.c */

/* A straight loop (program.h: hop__insn.straight) whose back edge `back`
 * (Next or If) has just jumped to its body: the rest of its iterations.
 * Returns when the back edge's test falls through; the interpreter goes
 * on after `back`. */
hop_status hop__run_straight(hop__frame *f, const hop__insn *back);

/* ------------------------------------------------------------ parmap.c */

/* LoopInit at pc with a parallel descriptor: runs the whole loop on the
 * pool and sets *ran, or leaves it to the caller (*ran false). */
hop_status hop__parmap_run(hop__frame *f, int32_t pc, bool *ran);
/* How many loops ran on the pool so far (tests, tuning). */
long hop__parmap_runs(void);

/* -------------------------------------------------------- fused_exec.c */

hop_status hop__fused_run(const hop__fgroup *g, hop__frame *f);
/* The step of a scalar_i64 group (program.h) over x and y into out: the
 * arithmetic of the vector functions (wrapping add, sub, mul), inline. */
static inline void
hop__scalar_i64(hop_op op, int64_t x, int64_t y, void *out)
{
    int64_t r;
    switch (op) {
    case HOP_OP_add:
        r = (int64_t)((uint64_t)x + (uint64_t)y);
        break;
    case HOP_OP_sub:
        r = (int64_t)((uint64_t)x - (uint64_t)y);
        break;
    case HOP_OP_mul:
        r = (int64_t)((uint64_t)x * (uint64_t)y);
        break;
    case HOP_OP_maximum:
        r = x > y ? x : y;
        break;
    case HOP_OP_minimum:
        r = x < y ? x : y;
        break;
    case HOP_OP_eq:
        *(hop__bool *)out = x == y;
        return;
    case HOP_OP_ne:
        *(hop__bool *)out = x != y;
        return;
    case HOP_OP_lt:
        *(hop__bool *)out = x < y;
        return;
    case HOP_OP_le:
        *(hop__bool *)out = x <= y;
        return;
    case HOP_OP_gt:
        *(hop__bool *)out = x > y;
        return;
    default: /* HOP_OP_ge: the lowering marks no other */
        *(hop__bool *)out = x >= y;
        return;
    }
    memcpy(out, &r, sizeof r);
}

/* A small group (small_n > 0) with the caller's tile registers: a loop
 * running small groups every iteration keeps one set (runtime/vm.c). */
typedef unsigned char hop__ftile[HOP__F_SMALL * 8];
hop_status hop__fused_small(const hop__fgroup *g, hop__frame *f, hop__ftile *regs);

/* The register kernel (fused_reg.c).  hop__freg_plan sets g->reg and
 * g->reg_code (from hop__fgroup_seal).  hop__freg_run runs a group with
 * g->reg over n contiguous output elements at out from inputs in[k], each
 * contiguous (inc[k] 1), one element (inc[k] 0) or periodic (inc[k]
 * HOP__FREG_PERIOD: element i of the operand is in[k][i % HOP__FREG_PERIOD],
 * a row vector broadcast over rows gathered into one period); false, having
 * written nothing, when its first step has no operand that steps (the
 * caller runs the group otherwise). */
#define HOP__FREG_PERIOD 512
void hop__freg_plan(hop__fgroup *g);
bool hop__freg_run(const hop__fgroup *g, int64_t n, void *out, const void *const *in,
                   const int64_t *inc);
/* Whether every step of g (g->reg) runs inline: what hop__freg_loop runs. */
bool hop__freg_inline(const hop__fgroup *g);
/* iters >= 1 applications of such a group to n elements, each after the
 * first starting from the last one's result instead of the group's first
 * operand (src the first time); the result into dst (may be src).  The other
 * operands from in/inc as hop__freg_run, none of them src or dst. */
void hop__freg_loop(const hop__fgroup *g, int64_t n, int64_t iters, const void *const *in,
                    const int64_t *inc, const float *src, float *dst);
/* A SymInt operand's value now (from regs), in the dtype its step reads:
 * into out, o->need's size. */
hop_status hop__fused_sym_value(const hop__fopnd *o, hop_dtype opdtype, const int64_t *regs,
                                void *out);
/* dst = src elementwise (same sizes, any strides, dtype conversion). */
hop_status hop__copy_tensor(hop_tensor *dst, const hop_tensor *src);

/* ----------------------------------------------------------- explain.c */

void hop__trace_insn(const hop_plan *p, int32_t pc);

#endif /* HOP_RUNTIME_VM_IMPL_H */
