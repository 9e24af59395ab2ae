/*
 * lowering/lowering_impl.h - the layout of plans and frames, the opcodes, and
 * the internals shared by the files of the lowering layer:
 *
 *   xprog.c    int expressions compiled to small postfix programs
 *   lower.c    graph -> plan: values, nodes, fusion planning, the toolkit of
 *              lower callbacks, routines (subroutines), hop_lower
 *   hops.c     the lowering registry and the built-in HOPs' lowerings
 *   memplan.c  lifetimes, regions and the layout of the block
 *   fused.c    fused elementwise groups: building and the tiled executor
 *   interp.c   frames and the interpreter loop (hop_plan_run)
 *   parmap.c   parallel loops: which qualify, worker frames, running on the pool
 *   dump.c     hop_plan_dump and the trace
 *   eager.c    the reference interpreter (hop_graph_run_eager)
 *
 * A plan is a flat program (hop__insn) over tensor slots and int registers.
 * Tensor slots are hop_tensor headers in a frame; their storage is an input,
 * the frame's block (memory plan), a root output tensor, or a tensor
 * allocated mid-run ("late").  Int registers hold SymInt values; every
 * symbol of the ShapeEnv the plan uses has one register, shared by every
 * subgraph (a symbol means the same size everywhere in one program).
 */
#ifndef HOP_LOWERING_IMPL_H
#define HOP_LOWERING_IMPL_H

#include "core/core.h"
#include "core/hash.h"
#include "hop/lowering.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdatomic.h>

/* ------------------------------------------------------- int expressions */

/* Postfix instructions of an int program (see xprog.c). */
typedef enum hop__xop {
    HOP__X_CONST,
    HOP__X_REG,
    HOP__X_ADD,
    HOP__X_SUB,
    HOP__X_MUL,
    HOP__X_FLOORDIV,
    HOP__X_MOD,
    HOP__X_POW,
    HOP__X_NEG,
    HOP__X_NOT,
    HOP__X_AND,
    HOP__X_OR,
    HOP__X_EQ,
    HOP__X_NE,
    HOP__X_LT,
    HOP__X_LE,
    HOP__X_GT,
    HOP__X_GE,
    HOP__X_MAX, /* n operands */
    HOP__X_MIN,
} hop__xop;

typedef struct hop__xi {
    uint8_t op;
    uint8_t n;   /* MAX/MIN: operand count */
    int32_t reg; /* REG */
    int64_t v;   /* CONST */
} hop__xi;

#define HOP__X_MAXDEPTH 32

/* A compiled SymInt/SymBool expression; constant ones have no code. */
typedef struct hop__xprog {
    const char *text; /* as hop_expr_print writes it */
    bool is_const, is_bool;
    int64_t value; /* is_const */
    int len;
    const hop__xi *code;
    int nsyms; /* free symbols, for messages */
    const int32_t *regs;
    const char *const *names;
} hop__xprog;

/* Evaluates x over the int registers.  HOP_RUNTIME when a symbol is not
 * bound yet, on division by zero or overflow (message names the text). */
hop_status hop__xeval(const hop__xprog *x, const int64_t *regs, int64_t *out);

static inline hop_status
hop__xget(const hop__xprog *x, const int64_t *regs, int64_t *out)
{
    if (x->is_const) {
        *out = x->value;
        return HOP_OK;
    }
    if (x->len == 1 && x->code[0].op == HOP__X_REG && regs[x->code[0].reg] != HOP_UNBOUND) {
        *out = regs[x->code[0].reg];
        return HOP_OK;
    }
    return hop__xeval(x, regs, out);
}

/* -------------------------------------------------------------- opcodes */

/*
 * X(name).  Each opcode's meaning (p1, p2, p3, p4) is documented where the
 * interpreter runs it (interp.c).
 */
#define HOP__OPCODES(X)                                                                            \
    X(Input)                                                                                       \
    X(Guard)                                                                                       \
    X(Layout)                                                                                      \
    X(Fused)                                                                                       \
    X(Op)                                                                                          \
    X(View)                                                                                        \
    X(Eager)                                                                                       \
    X(Alloc)                                                                                       \
    X(Copy)                                                                                        \
    X(Move)                                                                                        \
    X(Select)                                                                                      \
    X(Item)                                                                                        \
    X(SymSize)                                                                                     \
    X(Eval)                                                                                        \
    X(Integer)                                                                                     \
    X(MoveInt)                                                                                     \
    X(IfNot)                                                                                       \
    X(Goto)                                                                                        \
    X(LoopInit)                                                                                    \
    X(Next)                                                                                        \
    X(Call)                                                                                        \
    X(Return)                                                                                      \
    X(Extern)                                                                                      \
    X(Halt)

typedef enum hop__opcode {
#define HOP__OPC_ENUM(name) HOP__OP_##name,
    HOP__OPCODES(HOP__OPC_ENUM)
#undef HOP__OPC_ENUM
        HOP__OP_COUNT
} hop__opcode;

extern const char *const hop__opcode_names[HOP__OP_COUNT];

typedef struct hop__insn {
    uint8_t opcode;
    int32_t p1, p2, p3;
    int64_t i64;       /* Integer: the value */
    const void *p4;    /* per opcode: a descriptor in the plan's arena */
    const char *note;  /* comment for the dump (arena) */
} hop__insn;

/* ---------------------------------------------------------------- slots */

typedef enum hop__skind {
    HOP__S_INPUT,  /* a plan input: the caller's tensor */
    HOP__S_BUFFER, /* storage in the block */
    HOP__S_OUTPUT, /* storage: a root output tensor made by Layout (or the caller's) */
    HOP__S_LATE,   /* storage allocated by Alloc/Eager when made */
    HOP__S_VIEW,   /* a view made by View/Select */
    HOP__S_ALIAS,  /* filled by Move or Call: stands for another slot */
} hop__skind;

extern const char *const hop__skind_names[];

typedef struct hop__slot {
    const char *name; /* the node it holds, for dumps */
    const char *what; /* the op that makes it (`matmul`), for messages; else NULL */
    hop__skind kind;
    hop_dtype dtype;
    int rank;
    const hop__xprog *sizes[HOP_MAX_RANK];
    int32_t buffer; /* BUFFER: index of its buffer; OUTPUT: index of the plan output; else -1 */
} hop__slot;

/* A tensor in the memory plan. */
typedef struct hop__buffer {
    int32_t slot;
    int32_t routine;      /* whose code positions def/last count */
    int32_t def, last;    /* live range (positions in the routine) */
    int32_t region;
    /* its bytes as an expression; NULL when that overflows int64 (then only
     * its sizes, evaluated and checked at run time, say how large it is) */
    const hop__xprog *bytes;
    int64_t hint; /* bytes at the symbols' hints (for best fit) */
} hop__buffer;

/* A region of the block: buffers whose live ranges are disjoint. */
typedef struct hop__region {
    int32_t *members;
    int32_t nmembers;
    int64_t size, offset; /* static plans */
} hop__region;

/* ------------------------------------------------------------ descriptors */

/* Input: how each dim of an input is checked or binds a symbol. */
typedef enum hop__dimkind {
    HOP__D_CONST, /* size must equal value */
    HOP__D_BIND,  /* binds symbol register reg (range lo..hi) */
    HOP__D_SAME,  /* must equal register reg, bound by an earlier dim (`first`) */
    HOP__D_EXPR,  /* must equal the expression x (checked after binding) */
} hop__dimkind;

typedef struct hop__dimcheck {
    hop__dimkind kind;
    int32_t reg;
    int64_t value, lo, hi;
    const char *sym;   /* the symbol's name */
    const char *first; /* SAME: "x.size(0)" that bound it */
    const hop__xprog *x;
} hop__dimcheck;

typedef struct hop__input {
    const char *name;
    int32_t slot;
    hop_dtype dtype;
    int rank;
    hop__dimcheck dims[HOP_MAX_RANK];
} hop__input;

/* An operand of an Op/View/Eager instruction. */
typedef enum hop__akind {
    HOP__A_NONE,
    HOP__A_TENSOR, /* slot */
    HOP__A_INT,    /* x (constant or not) */
    HOP__A_BOOL,   /* x: a SymBool, or a constant */
    HOP__A_FLOAT,
    HOP__A_DTYPE,
    HOP__A_LIST,
} hop__akind;

typedef struct hop__oparg {
    hop__akind kind;
    int32_t slot;
    const hop__xprog *x;
    double f;
    hop_dtype dtype;
    const struct hop__oparg *items;
    int32_t n;
} hop__oparg;

typedef struct hop__opdesc {
    hop_op op;
    int nargs;
    const hop__oparg *args;
    int32_t nrt;    /* hop_rt_arg entries it needs, list items included */
    int32_t cache;  /* Op: index of its kernel cache in a frame */
    int32_t rtbase; /* Op: first of its hop_rt_arg entries in a frame */
    const char *text; /* `sum(x, [1], False)` for the dump */
    /* squeeze: dims of the input that stay, in order */
    int nkeep;
    int8_t keep[HOP_MAX_RANK];
} hop__opdesc;

/* A guard of the ShapeEnv. */
typedef struct hop__guard {
    const hop__xprog *x;
    const char *graph; /* the subgraph whose own guard it is; NULL on entry */
} hop__guard;

/* A fused elementwise group (fused.c). */
#define HOP__F_MAXSTEPS 16
#define HOP__F_MAXIN 8
#define HOP__F_MAXREGS 6

typedef enum hop__fsrc { HOP__F_REG, HOP__F_INPUT, HOP__F_SCALAR, HOP__F_SYM } hop__fsrc;

typedef struct hop__fopnd {
    uint8_t src;       /* hop__fsrc */
    uint8_t idx;       /* REG: register; INPUT: external input */
    hop_dtype need;    /* the dtype the vector function reads */
    hop_dtype have;    /* the dtype the operand is in (SCALAR: need) */
    _Alignas(8) unsigned char val[8]; /* SCALAR: the value in need */
    const hop__xprog *x;  /* SYM: the value's program */
} hop__fopnd;

typedef struct hop__fstep {
    hop__vfn fn;
    hop_op op;
    int nin;
    int out;           /* register of the result (-1: the group's output) */
    hop_dtype dtype;   /* of the result */
    hop_dtype fdtype;  /* what fn writes: dtype, or f32 rounded into an f16 result */
    hop_dtype opdtype; /* the dtype the op is in (a comparison's promoted one) */
    hop__fopnd in[3];
} hop__fstep;

typedef struct hop__fgroup {
    int nsteps;
    hop__fstep steps[HOP__F_MAXSTEPS];
    int ninputs;
    int32_t inputs[HOP__F_MAXIN]; /* tensor slots */
    hop_dtype in_dtype[HOP__F_MAXIN];
    int nregs;
    int32_t out;
    hop_dtype odtype;
    int cost; /* per element, for threading */
    const char *text;
} hop__fgroup;

/* Call: moves into the callee's parameters, then a jump. */
typedef struct hop__callmove {
    bool tensor;
    int32_t dst;            /* callee slot or register */
    int32_t src;            /* caller slot or register (-1: constant) */
    int64_t value;          /* constant */
} hop__callmove;

typedef struct hop__calldesc {
    int32_t routine;
    int32_t nmoves;
    const hop__callmove *moves;
} hop__calldesc;

/* Extern: a foreign kernel call (lowering/foreign.c).  fn gets the
 * operands evaluated (tensors, ints, floats, bools) and the output slots,
 * and copies the in-out operands into them before the kernel runs. */
#define HOP__EXTERN_MAXOUT 16
typedef struct hop__extern {
    const char *name; /* the kernel's */
    const char *text; /* `saxpy = saxpy(s0, 2.0, x, y)` for the dump */
    hop_status (*fn)(void *ud, const hop_rt_arg *args, size_t nargs, hop_tensor *const *outs,
                     size_t nouts);
    void *ud;
    void (*release)(void *ud); /* when the plan is freed */
    int32_t nargs;
    const hop__oparg *args;
    int32_t rtbase; /* first of its hop_rt_arg entries in a frame */
    int32_t nouts;
    const int32_t *outs;       /* slots */
    struct hop__extern *chain; /* the plan's externs, for release */
} hop__extern;

/* The plan's results. */
typedef struct hop__output {
    hop_pval v;
    const char *name;
} hop__output;

typedef struct hop__routine {
    const char *name;
    int32_t entry, len;
} hop__routine;

/*
 * A loop whose iterations may run on the thread pool (parmap.c): the p4 of
 * its LoopInit.  Each worker gets a frame of its own and its own copy of
 * the buffers the body makes (`private`, placed in the worker's area of the
 * block); everything else it reads through the caller's slots.  The work
 * items estimate the cost of one iteration.
 */
typedef struct hop__pwork {
    int32_t slot;  /* a tensor the body writes or reads: numel * cost units */
    int32_t cost;
    int32_t mreg;  /* a nested loop's count register multiplying it, or -1 */
    int64_t mult;  /* constant multiplier (nested loops of constant count) */
} hop__pwork;

typedef struct hop__parloop {
    int32_t nprivate;
    const int32_t *private_buffers;
    int32_t ninsn; /* instructions one iteration runs (nested loops once) */
    int32_t nwork;
    const hop__pwork *work;
    /* kernel caches of the Ops one iteration may run: the caller's go to
     * the worker frames, so that a worker rebases and never prepares */
    int32_t ncaches;
    const int32_t *caches;
} hop__parloop;

/* ---------------------------------------------------------------- plans */

typedef struct hop__frame hop__frame;

struct hop_plan {
    hop__arena arena;
    hop__insn *code;
    int32_t ncode;
    hop__routine *routines; /* [0] is main */
    int32_t nroutines;

    hop__slot *slots;
    int32_t nslots;
    int32_t nregs;
    const char **regnames; /* symbol names, or NULL for temporaries */

    hop__input *inputs;
    size_t ninputs;
    hop__output *outputs;
    size_t noutputs;
    int32_t *outslots; /* per output: its OUTPUT slot, or -1 */

    hop__buffer *buffers;
    int32_t nbuffers;
    hop__region *regions;
    int32_t nregions;
    bool static_layout;
    int64_t block_bytes; /* static plans */
    const hop__xprog **layout_syms; /* registers the layout depends on */
    int32_t *layout_regs;
    int32_t nlayout_regs;

    int32_t ncache;
    int64_t nrtargs;
    int32_t max_depth; /* nested Calls */

    int32_t nparloops;    /* loops that may run on the pool (parmap.c) */
    const bool *wregion;  /* per region: in a worker's area (holds private buffers) */

    _Atomic(hop__frame *) idle;
    /* hop_plan_interrupt's count: a run whose epoch differs stops */
    _Atomic uint32_t interrupts;
    FILE *trace;
    hop__extern *externs; /* released with the plan */
};

/* Per-run state; one per concurrent run (interp.c). */
typedef struct hop__kcache {
    hop_kernel k;
    bool valid;
    /* which preparation k comes from (unique over all frames): parmap.c
     * copies a kernel to a worker frame only when the worker's differs */
    uint64_t gen;
} hop__kcache;

struct hop__frame {
    hop_plan *plan;
    void *raw; /* the allocation holding the frame and its arrays */
    hop_tensor *const *inputs; /* this run's */
    hop_tensor *const *into;   /* hop_plan_run_into's outputs, or NULL */
    hop_tensor *slots;
    hop_tensor **owner;     /* the tensor whose storage a slot's header uses */
    unsigned char *owned;   /* owner is a reference this frame holds */
    int64_t *regs;
    int32_t *stack;
    int32_t sp;
    hop__kcache *kernels;
    hop_rt_arg *rtargs;
    hop_tensor *block; /* the memory plan's block (a byte tensor) */
    int64_t *layout_key;
    bool layout_ok;
    int64_t *offsets; /* per buffer */
    /* per output: the tensor the last run returned (one reference); reused
     * when the caller has released it and the sizes are the same */
    hop_tensor **recycle;

    /* Parallel loops (parmap.c).  stop: hop__exec_at returns OK on reaching
     * the Next at this pc (a worker running one iteration), -1 otherwise.
     * The block holds nsub worker areas of warea bytes from wbase; woff
     * gives each worker region's offset in an area.  subs are the worker
     * frames (one allocation, subraw), made at Layout and kept. */
    int32_t stop;
    int nsub, subcap;
    hop__frame **subs;
    void *subraw;
    int64_t *woff;
    int64_t warea, wbase;
    /* Interrupts (interp.c).  budget: work units left before the next
     * check; epoch: the plan's interrupt count when the run began; root:
     * the run's own frame (a worker's is its caller's), whose halt tells
     * its workers to stop and whose progress handler runs on the thread
     * that called (caller). */
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

/* Sets t's geometry as a view of storage s (a header the frame owns). */
void hop__header(hop_tensor *t, hop_storage *s, hop_dtype dtype, int rank, const int64_t *sizes,
                 const int64_t *strides, void *data);
/* C-contiguous strides; returns numel. */
int64_t hop__contig_strides(int rank, const int64_t *sizes, int64_t *strides);

/* --------------------------------------------------------- the compiler */

typedef struct hop__acc {
    int32_t pos;
    int32_t slot;
} hop__acc;

typedef struct hop__alias {
    int32_t slot, of;
} hop__alias;

typedef struct hop__loop {
    int32_t start, end;
    bool parallel; /* hop_lower_parallel_loop_begin */
} hop__loop;

/* One routine being compiled: main (0) or a subroutine. */
typedef struct hop__rcode {
    const hop_graph *graph;
    const char *name;
    hop__insn *code;
    size_t n, cap;
    hop__acc *acc; /* slot accesses for lifetimes */
    size_t nacc, capacc;
    hop__loop *loops;
    size_t nloops, caploops;
    /* subroutines: parameters (pvals of the callee) and results */
    hop_pval *params;
    size_t nparams;
    hop_pval *outs; /* TENSOR: a bound slot; INT: a register; NONE+value: parameter index */
    bool *out_param;
    size_t nouts;
    int32_t base; /* final address */
} hop__rcode;

typedef struct hop__vmap hop__vmap;
typedef struct hop__xcache hop__xcache;

typedef struct hop__ctl {
    int kind; /* 0 if, 1 else, 2 loop, 3 parallel loop */
    int32_t a, b;
} hop__ctl;

/* Open if/loop blocks: one per enclosing cond or map; tests/c/test_scale.c
 * lowers 256-deep nesting. */
#define HOP__MAX_CTL 1024

struct hop_lower_ctx {
    hop_plan *plan;
    const hop_output_graph *og;
    hop_shape_env *env;
    hop_lower_options opts;
    hop__arena tmp;
    hop__vmap *values;
    hop__xcache *xcache;

    int32_t *symreg; /* by symbol id: register or -1 */
    bool *symdef;    /* by symbol id: bound by code emitted so far */
    bool *symentry;  /* by symbol id: bound by an input's size at entry */
    size_t nsyms;

    hop__rcode *routines;
    size_t nroutines, caproutines;
    int32_t cur;

    hop__ctl ctl[HOP__MAX_CTL];
    int nctl;

    hop__slot *slots;
    size_t nslots, capslots;
    const char **regnames;
    size_t nregs, capregs;
    hop__buffer *buffers;
    size_t nbuffers, capbuffers;
    hop__alias *aliases;
    size_t naliases, capaliases;

    int32_t ncache;
    int64_t nrtargs;

    /* the call_hop being lowered */
    const hop_node *call;
    const hop_pval *dests;
    hop_pval *results;
    size_t nresults;
    bool have_results;
};

static inline hop_pval
hop__pv_tensor(int32_t slot)
{
    return (hop_pval){HOP_PVAL_TENSOR, slot, 0};
}

static inline hop_pval
hop__pv_int(int32_t reg)
{
    return (hop_pval){HOP_PVAL_INT, reg, 0};
}

static inline hop_pval
hop__pv_const(int64_t v)
{
    return (hop_pval){HOP_PVAL_CONST, -1, v};
}

static inline hop__rcode *
hop__cur(hop_lower_ctx *cx)
{
    return &cx->routines[cx->cur];
}

/* xprog.c */
const hop__xprog *hop__xcompile(hop_lower_ctx *cx, const hop_expr *e);
const hop__xprog *hop__xconst(hop_lower_ctx *cx, int64_t v);
int32_t hop__sym_reg(hop_lower_ctx *cx, const hop_expr *sym);
void hop__xcache_free(hop_lower_ctx *cx);

/* lower.c: values, graphs, emission */
hop_status hop__nomem_or(hop_status st);
hop_status hop__value_of(hop_lower_ctx *cx, const hop_node *n, hop_pval *out);
void hop__mark_defined(hop_lower_ctx *cx, const hop_expr *e);
hop_status hop__compile_graph(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs,
                              size_t ninputs, const hop_pval *dests, hop_pval *outputs,
                              size_t noutputs);
bool hop__bindable(hop_lower_ctx *cx, const hop_node *n, const hop_node *out, size_t j);
/* toolkit.c */
hop_status hop__new_routine(hop_lower_ctx *cx, const hop_graph *g, int32_t *out);
int32_t hop__emit(hop_lower_ctx *cx, hop__opcode op, int32_t p1, int32_t p2, int32_t p3,
                  const void *p4, const char *note);
hop_status hop__access(hop_lower_ctx *cx, int32_t slot);
hop_status hop__alias_of(hop_lower_ctx *cx, int32_t slot, int32_t of);
int32_t hop__pos(hop_lower_ctx *cx);
hop_status hop__new_slot(hop_lower_ctx *cx, hop__skind kind, const hop_meta *meta,
                         const char *name, int32_t *out);
hop_status hop__new_reg(hop_lower_ctx *cx, const char *name, int32_t *out);
char *hop__note(hop_lower_ctx *cx, const char *fmt, ...) HOP_PRINTF(2, 3);
bool hop__meta_late(hop_lower_ctx *cx, const hop_meta *m);

/* hops.c */
const hop_lowering *hop__lowering_for(const char *target, const hop_hop_class **cls);

/* lower.c: an operand of an instruction (counts its hop_rt_arg entries) */
hop_status hop__compile_oparg(hop_lower_ctx *cx, const hop_arg *a, hop__oparg *o, int32_t *nrt);
/* foreign.c: the Extern of a call_foreign node; *results (tmp arena) gets
 * its nouts output slots.  hop__plan_release_externs drops the plan's
 * references to the kernels it calls. */
hop_status hop__lower_foreign(hop_lower_ctx *cx, const hop_node *n, hop_pval **results);
void hop__plan_release_externs(hop_plan *p);

/* fused.c */
bool hop__fusable_op(hop_op op);
/* The dtype operand i of elementwise node n is read in. */
hop_status hop__fused_build(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members,
                            int nmembers, int32_t out, hop__fgroup **out_group);
hop_status hop__fused_copy(hop_lower_ctx *cx, int32_t dst, int32_t src, hop__fgroup **out_group);
hop_status hop__fused_run(const hop__fgroup *g, hop__frame *f);
/* dst = src elementwise (same sizes, any strides, dtype conversion). */
hop_status hop__copy_tensor(hop_tensor *dst, const hop_tensor *src);
bool hop__fused_ok(const hop_node *n);

/* memplan.c */
hop_status hop__memplan(hop_lower_ctx *cx);
hop_status hop__layout(hop__frame *f);
/* The sizes of slot s at regs, and their product, checked as eager checks
 * an op's result (HOP_NOMEM "<op>: f32[...] is too large"). */
hop_status hop__slot_sizes(const hop_plan *p, int32_t s, const int64_t *regs, int64_t *sizes,
                           int64_t *numel);

/* interp.c */
/* Work units between two interrupt checks: ~1000 interpreted instructions,
 * or kernels of ~4M elements (an Op's kernel work >> HOP__CHECK_SHIFT). */
#define HOP__CHECK_EVERY 1024
#define HOP__CHECK_SHIFT 12
/* A worker frame w of f's run starts checking as its root does. */
void hop__interrupt_share(hop__frame *f, hop__frame *w);
/* On the caller's thread: runs f's progress handler, halting the run's
 * other threads when it asks to stop. */
void hop__interrupt_poll(hop__frame *f);
hop_status hop__exec(hop__frame *f);
/* Runs from pc to Halt, or to the Next at f->stop. */
hop_status hop__exec_at(hop__frame *f, int32_t pc);
/* A frame's bytes (one allocation) and its setup in raw (zeroed). */
size_t hop__frame_bytes(const hop_plan *p);
hop__frame *hop__frame_init(hop_plan *p, void *raw);
/* Drops the references the frame's slots hold. */
void hop__frame_release_owned(hop__frame *f);

/* parmap.c */
/* Decides which parallel loops may run on the pool (after hop__memplan). */
hop_status hop__parmap_plan(hop_lower_ctx *cx);
/* Keeps n worker frames for f (Layout).  HOP_NOMEM leaves f as it was. */
hop_status hop__parmap_reserve(hop__frame *f, int n);
void hop__parmap_free(hop__frame *f);
/* Worker frames a layout makes room for: threads - 1, or 0. */
int hop__parmap_workers(const hop_plan *p);
/* LoopInit at pc with a parallel descriptor: runs the whole loop on the
 * pool and sets *ran, or leaves it to the caller (*ran false). */
hop_status hop__parmap_run(hop__frame *f, int32_t pc, bool *ran);
/* How many loops ran on the pool so far (tests, tuning). */
long hop__parmap_runs(void);

/* dump.c */
void hop__trace_insn(const hop_plan *p, const hop__frame *f, int32_t pc);
void hop__insn_text(const hop_plan *p, int32_t pc, hop__buf *b);

#endif /* HOP_LOWERING_IMPL_H */
