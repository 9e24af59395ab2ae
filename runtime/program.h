/*
 * runtime/program.h - the program format: what the code generator
 * (lowering/) writes and the VM (runtime/vm.c) runs, the one header both
 * sides include, as SQLite's vdbe.h sits between its code generator and
 * vdbe.c.  Everything else is private to one side: runtime/vm_impl.h (frames,
 * the interpreter's helpers) and lowering/lowering_impl.h (the compiler's
 * state).  hop/plan.h is the public face of a plan.
 *
 * A program (a hop_plan) is a flat array of instructions (hop__insn) over
 * numbered tensor slots and int registers.  A tensor slot is a hop_tensor
 * header in a frame (one frame per concurrent run); its storage is a plan
 * input, the frame's block (the memory plan), a root output tensor or a
 * tensor sized mid-run (a late slot: storage the frame keeps between
 * runs).  An int register holds a SymInt's value; every symbol of the
 * ShapeEnv the plan uses has one register, shared by every subgraph (a
 * symbol means the same size everywhere in one program).  Int
 * expressions are small postfix programs over the registers (hop__xprog),
 * because a plan keeps no pointer into the ShapeEnv.
 *
 * Routine 0 is the main program, from instruction 0 to its Halt; each
 * subroutine (a subgraph compiled once and called from several places)
 * follows, ending in Return.  Jump targets are absolute addresses.  What an
 * instruction's P4 points at (its descriptor) lives in the plan's arena.
 *
 * The code generator calls: hop__plan_new (and hop_plan_free when it
 * fails), the vector-function lookups and hop__convert for the steps and
 * scalars of fused groups and hop__fgroup_copy for copy groups.  It knows
 * no graph: the code generator translates nodes into this format, and the
 * VM never sees one.
 */
#ifndef HOP_RUNTIME_PROGRAM_H
#define HOP_RUNTIME_PROGRAM_H

#include "core/core.h"
#include "hop/plan.h"
#include "hop/runtime.h"

#include <stdatomic.h>
#include <stdio.h>

typedef struct hop_foreign hop_foreign; /* hop/foreign.h */

/* ------------------------------------------------------- int expressions */

/* Postfix instructions of an int program: push a constant or a register,
 * or replace the top operands with their result (Python semantics: floor
 * division, modulo with the sign of the divisor, 0/1 for relations). */
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

/* The deepest stack a program may need. */
#define HOP__X_MAXDEPTH 32

/* A compiled SymInt/SymBool expression; constant ones have no code. */
typedef struct hop__xprog {
    const char *text; /* as hop_expr_print writes it: messages and dumps */
    bool is_const, is_bool;
    int64_t value; /* is_const */
    int len;
    const hop__xi *code;
    int nsyms; /* free symbols, for messages */
    const int32_t *regs;
    const char *const *names;
} hop__xprog;

/*
 * A register file: nregs int64 registers, each HOP_UNBOUND (INT64_MIN) until
 * the run binds it (a symbol whose value it has not met yet).  INT64_MIN is
 * a value too (the item of a tensor holding it, a bound of a loop), so past
 * the last register the file keeps one mark byte per register, 1 when its
 * INT64_MIN is a value; its length sits just before register 0, where
 * whatever holds `regs` finds the marks.  A write of a value that may be
 * INT64_MIN goes through hop__reg_put, a copy through hop__reg_move; a write
 * that never is (a size, a loop counter) may store directly: a stale mark
 * is only read for a register holding INT64_MIN.
 */
static inline size_t
hop__regs_bytes(int32_t nregs)
{
    return (size_t)(nregs + 1) * sizeof(int64_t) + (size_t)nregs;
}

/* Sets up the file at raw (hop__regs_bytes(nregs), int64-aligned) with
 * every register unbound; returns regs. */
static inline int64_t *
hop__regs_init(void *raw, int32_t nregs)
{
    int64_t *regs = (int64_t *)raw + 1;
    regs[-1] = nregs;
    for (int32_t r = 0; r < nregs; r++)
        regs[r] = HOP_UNBOUND;
    __builtin_memset(regs + nregs, 0, (size_t)nregs);
    return regs;
}

static inline unsigned char *
hop__reg_marks(const int64_t *regs)
{
    return (unsigned char *)(uintptr_t)(regs + regs[-1]);
}

static inline bool
hop__reg_unbound(const int64_t *regs, int32_t r)
{
    return regs[r] == HOP_UNBOUND && !hop__reg_marks(regs)[r];
}

static inline void
hop__reg_put(int64_t *regs, int32_t r, int64_t v)
{
    regs[r] = v;
    if (__builtin_expect(v == HOP_UNBOUND, 0))
        hop__reg_marks(regs)[r] = 1;
}

/* Marks r after a write through a pointer (item, an expression's value). */
static inline void
hop__reg_wrote(int64_t *regs, int32_t r)
{
    if (__builtin_expect(regs[r] == HOP_UNBOUND, 0))
        hop__reg_marks(regs)[r] = 1;
}

static inline void
hop__reg_move(int64_t *regs, int32_t dst, int32_t src)
{
    regs[dst] = regs[src];
    if (__builtin_expect(regs[src] == HOP_UNBOUND, 0))
        hop__reg_marks(regs)[dst] = hop__reg_marks(regs)[src];
}

/* dst (a file of the same length) becomes a copy of src. */
static inline void
hop__regs_copy(int64_t *dst, const int64_t *src)
{
    __builtin_memcpy(dst, src, (size_t)src[-1] * sizeof(int64_t) + (size_t)src[-1]);
}

/* Evaluates x over the int registers.  HOP_CHECK when a symbol is not
 * bound yet, on division by zero or overflow (message names the text). */
hop_status hop__xeval(const hop__xprog *x, const int64_t *regs, int64_t *out);

/* hop__xeval with the common cases inline: a constant, one bound register. */
static inline hop_status
hop__xget(const hop__xprog *x, const int64_t *regs, int64_t *out)
{
    if (x->is_const) {
        *out = x->value;
        return HOP_OK;
    }
    if (x->len == 1 && x->code[0].op == HOP__X_REG && !hop__reg_unbound(regs, x->code[0].reg)) {
        *out = regs[x->code[0].reg];
        return HOP_OK;
    }
    return hop__xeval(x, regs, out);
}

/* -------------------------------------------------------------- opcodes */

/*
 * X(name): the opcodes, in SQLite's notation (P1, P2, P3 ints, P4 the
 * descriptor; rN a register, tN a slot).  The VM's switch (runtime/vm.c)
 * has the full comment of each.
 *
 *   Input    P1 P2 * P4  t[P2] = input P1, checked against P4 (hop__input)
 *   Guard    P1 * * P4   HOP_GUARD unless P4 (a hop__guard) holds
 *   Layout   P1          P1 0: places the block's tensors, binds the outputs;
 *                        P1 k > 0: places lazy section k's tensors in its own block
 *   Fused    P1 P2 P3 P4 t[P1] = fused group P4 (P2 inputs, P3 steps)
 *   Op       P1 P2 * P4  t[P1] = op P4 (hop__opdesc) with kernel cache P2
 *   View     P1 P2 * P4  t[P1] = view P4 of t[P2] (a copy for reshape)
 *   OpAlloc  P1 * * P4   t[P1] = INDEX op P4, sized by itself, in kept storage
 *   Alloc    P1          t[P1] = tensor of its sizes, known only now (kept storage)
 *   Copy     P1 P2 * P4  t[P1] <- t[P2] (copy group P4)
 *   Move     P1 P2       t[P1] stands for t[P2]
 *   Select   P1 P2 P3    t[P1] = index r[P3] of t[P2] along dim i64 (0: a row)
 *   Item     P1 P2       r[P1] = the one element of t[P2]
 *   SymSize  P1 P2 P3    r[P1] = size P3 of t[P2]
 *   Eval     P1 * * P4   r[P1] = int program P4
 *   Integer  P1          r[P1] = the instruction's i64
 *   MoveInt  P1 P2       r[P1] = r[P2]
 *   IfNot    P1 P2 P3 P4 goto P2 unless t[P1] (P3 0) or r[P1] (P3 1); P4: a
 *                        fused group (hop__fgroup) writing t[P1], run first
 *   If       P1 P2 P3 P4 goto P2 if t[P1] (P3 0) or r[P1] (P3 1); P4 as IfNot's
 *   Goto     * P2        goto P2
 *   LoopInit P1 P2 P3 P4 r[P1] = 0; goto P2 if r[P3] <= 0; P4: parallel
 *   Next     P1 P2 P3    r[P1] += 1; goto P2 while r[P1] < r[P3]
 *   Call     P1 P2 * P4  P2 parameter moves of P4, then call P1
 *   Return               back after the Call
 *   Extern   P1 P2 * P4  foreign kernel call P4 into its P2 output slots
 *   Swap     P1 P2 P3 P4 t[P1] and t[P2] exchange what they hold (a carry),
 *                        and the P3 pairs of slots in P4 (int32_t[2 * P3])
 *   Kernel   * * * P4    a HOP's own kernel P4 (hop__hopkernel) on its slots
 *   Halt                 the program is done
 */
#define HOP__OPCODES(X)                                                                            \
    X(Input)                                                                                       \
    X(Guard)                                                                                       \
    X(Layout)                                                                                      \
    X(Fused)                                                                                       \
    X(Op)                                                                                          \
    X(View)                                                                                        \
    X(OpAlloc)                                                                                     \
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
    X(If)                                                                                          \
    X(Goto)                                                                                        \
    X(LoopInit)                                                                                    \
    X(Next)                                                                                        \
    X(Call)                                                                                        \
    X(Return)                                                                                      \
    X(Extern)                                                                                      \
    X(Swap)                                                                                        \
    X(Kernel)                                                                                      \
    X(Halt)

typedef enum hop__opcode {
#define HOP__OPC_ENUM(name) HOP__OP_##name,
    HOP__OPCODES(HOP__OPC_ENUM)
#undef HOP__OPC_ENUM
        HOP__OP_COUNT
} hop__opcode;

/* Their names, for the dump (runtime/explain.c). */
extern const char *const hop__opcode_names[HOP__OP_COUNT];

typedef struct hop__insn {
    uint8_t opcode;
    /* A loop's back edge (Next, or an If jumping back) whose body, from P2
     * up to it, is straight: only MoveInt, Integer, Swap and small fused
     * groups (small_n > 0), none of which can jump.  The VM runs such a
     * loop's iterations in one tight loop (runtime/vm.c: run_straight).  Set
     * by the lowering when it assembles the program. */
    uint8_t straight;
    int32_t p1, p2, p3;
    int64_t i64;      /* Integer: the value */
    const void *p4;   /* per opcode: a descriptor in the plan's arena */
    const char *note; /* what the instruction computes, for the dump (arena) */
} hop__insn;

/* ---------------------------------------------------------------- slots */

typedef enum hop__skind {
    HOP__S_INPUT,  /* a plan input: the caller's tensor */
    HOP__S_BUFFER, /* storage in the block */
    HOP__S_OUTPUT, /* storage: a root output tensor made by Layout (or the caller's) */
    HOP__S_LATE,   /* storage the frame keeps for it, sized by Alloc/OpAlloc when made */
    HOP__S_VIEW,   /* a view made by View/Select */
    HOP__S_ALIAS,  /* filled by Move or Call: stands for another slot */
} hop__skind;

extern const char *const hop__skind_names[];

typedef struct hop__slot {
    const char *name; /* the node it holds, for dumps */
    const char *what; /* the op that makes it (`matmul`), for messages; else NULL */
    /* its rank sizes, in the plan's arena (a select of dim 0 shares the
     * tail of its base's): out of line, a slot is 40 bytes where
     * HOP_MAX_RANK entries made it 104 (issue #30: a traced cond call's
     * slots, ten in the plan and as many in lowering's growing array, are
     * of rank 0 or 1) */
    const hop__xprog *const *sizes;
    hop__skind kind;
    hop_dtype dtype;
    int rank;
    int32_t buffer; /* BUFFER: index of its buffer; OUTPUT: index of the plan output; else -1 */
} hop__slot;

/* A tensor in the memory plan. */
typedef struct hop__buffer {
    int32_t slot;
    int32_t routine;   /* whose code positions def/last count */
    int32_t def, last; /* live range (positions in the routine) */
    /* 0: in the block, laid out by the plan's Layout; k > 0: in lazy section
     * k's block, laid out only when a run reaches the section (its Layout k:
     * code a run may skip because its values would be too large) */
    int32_t section;
    /* its bytes as an expression; NULL when that overflows int64 (then only
     * its sizes, evaluated and checked at run time, say how large it is) */
    const hop__xprog *bytes;
    int64_t hint;   /* bytes at the symbols' hints */
    int64_t offset; /* static plans: its offset in its section's block */
} hop__buffer;

/* The offsets of the buffers pick[] selects (NULL: all n) in one block
 * (runtime/pack.c): buffers whose live ranges meet never overlap, each
 * routine's after the previous routine's; bytes[b] is buffer b's size.
 * Writes off[b] for each picked b and the block's size to *total; borrows
 * scratch of hop__pack_scratch_bytes(n) bytes (aligned as malloc) and
 * allocates nothing.  Fails (HOP_NOMEM, message set) when the block would
 * pass INT64_MAX bytes. */
size_t hop__pack_scratch_bytes(int32_t n);
hop_status hop__pack(const hop__buffer *bufs, int32_t n, const int64_t *bytes, const bool *pick,
                     void *scratch, int64_t *off, int64_t *total);

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

/* An operand of an Op/View/OpAlloc/Extern instruction. */
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

/* The text of the node an instruction runs (`sum = sum(x, [1], False)`),
 * for EXPLAIN and messages: made only when asked, by write, the lowering's
 * (which keeps after this header what it needs, in the plan's arena).
 * Writing it for every op while lowering cost ~1.8K instructions an op and
 * only a dump or an error reads it (issue #30). */
typedef struct hop__ntext {
    void (*write)(const struct hop__ntext *t, hop__buf *b);
} hop__ntext;

/* Appends t's text to b. */
static inline void
hop__ntext_write(const hop__ntext *t, hop__buf *b)
{
    t->write(t, b);
}

/* t's text in a new string (hop_free it); NULL on out-of-memory. */
char *hop__ntext_string(const hop__ntext *t);

typedef struct hop__opdesc {
    hop_op op;
    int nargs;
    const hop__oparg *args;
    int32_t nrt;            /* hop_rt_arg entries it needs, list items included */
    int32_t cache;          /* Op: index of its kernel cache in a frame */
    int32_t rtbase;         /* first of its hop_rt_arg entries in a frame */
    const hop__ntext *text; /* `sum = sum(x, [1], False)` for the dump and messages */
    /* Op: every operand and the output are fixed - tensors in slots whose
     * headers the plan makes the same on every run (a buffer or an output
     * of constant sizes, laid out by Layout; not the caller's outputs of
     * hop_plan_run_into), scalars constants - so a kernel that last ran on
     * the same data pointers runs again without its operands rechecked
     * (set when the program is assembled) */
    bool fixed;
    /* squeeze: dims of the input that stay, in order */
    int nkeep;
    int8_t keep[HOP_MAX_RANK];
} hop__opdesc;

/* A guard of the ShapeEnv. */
typedef struct hop__guard {
    const hop__xprog *x;
    const char *graph; /* the subgraph whose own guard it is; NULL on entry */
} hop__guard;

/*
 * A fused elementwise group (runtime/fused_exec.c runs it): steps over tile
 * registers, each a vector function of the elementwise engine, reading its
 * operands in the dtypes it needs from registers, the group's inputs, scalar
 * constants or SymInt values; the last step writes the group's output.
 */
#define HOP__F_MAXSTEPS 64
#define HOP__F_MAXIN 8
#define HOP__F_MAXREGS 6
#define HOP__F_SMALL 64
#define HOP__F_MAXXOUT 8 /* extra outputs of a multi-output group */

/* A vector function: n elements into contiguous out from inputs that are
 * each contiguous (inc 1) or one broadcast element (inc 0), all of the
 * function's input dtypes. */
typedef void (*hop__vfn)(int64_t n, void *out, const void *const *in, const int *inc);
/* Defines a static vfn of one contiguous operand, o[i] = (OT)(EXPR) with
 * x = a[i] (T the operand's C type, OT the result's; ATTR a function
 * attribute such as a target, or nothing): the real kernels'
 * (elementwise.c) and the complex ones' (complex.c). */
#define HOP__UNARY_VFN(name, T, OT, EXPR, ATTR)                                                    \
    ATTR static void name(int64_t n, void *out, const void *const *in, const int *inc)             \
    {                                                                                              \
        (void)inc;                                                                                 \
        OT *o = out;                                                                               \
        const T *a = in[0];                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = a[i];                                                                            \
            o[i] = (OT)(EXPR);                                                                     \
        }                                                                                          \
    }

typedef enum hop__fsrc { HOP__F_REG, HOP__F_INPUT, HOP__F_SCALAR, HOP__F_SYM } hop__fsrc;

typedef struct hop__fopnd {
    uint8_t src;                      /* hop__fsrc */
    uint8_t idx;                      /* REG: register; INPUT: external input */
    hop_dtype need;                   /* the dtype the vector function reads */
    hop_dtype have;                   /* the dtype the operand is in (SCALAR: need) */
    _Alignas(8) unsigned char val[8]; /* SCALAR: the value in need */
    const hop__xprog *x;              /* SYM: the value's program */
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
    /* In a small group (small_n > 0): each operand's inc for fn, 1 for a
     * register or a stepping input, 0 otherwise (set with small_n). */
    int small_ai[3];
    /* k > 0: the step's register is also the group's extra output k - 1
     * (hop__fgroup.xout), written as soon as the step has run: 0 none. */
    uint8_t store;
} hop__fstep;

/* A group's steps come last: a plan keeps a group of n steps in
 * hop__fgroup_size(g) bytes (its steps past n never read), ~300 bytes for
 * one step where the whole struct is ~10 KB (issue #30: a traced one-op HOP
 * body's group was 3 KB of fresh plan memory, page faults included, when
 * the struct was).  The register kernel's arrays follow the n steps, sized
 * by n (hop__fgroup_seal points reg_code, reg_arg and reg_splat there): at
 * their worst-case size in the struct they were ~390 of a one-step group's
 * ~680 bytes, ~1.2 KB of every traced cond call (issue #30).  So a group is
 * built where it stays (in the plan) and never copied. */
typedef struct hop__fgroup {
    int nsteps;
    int ninputs;
    int32_t inputs[HOP__F_MAXIN]; /* tensor slots */
    hop_dtype in_dtype[HOP__F_MAXIN];
    int nregs;
    int32_t out;
    hop_dtype odtype;
    /* A multi-output group (lowering/fuseplan.c merge_units): the slots of
     * its extra outputs, each the result of a step before the last (its
     * `store`), of the output's sizes, in fresh plan storage that no
     * operand of the group shares (so a step may write one before later
     * steps read the inputs).  Never small, never the register kernel's. */
    int nxout;
    int32_t xout[HOP__F_MAXXOUT];
    int cost;         /* per element, for threading */
    bool has_sym;     /* a step reads a SymInt (hop__fgroup_seal) */
    bool same_dtypes; /* every operand is read in the dtype it has */
    /* > 0: the output and every input are storage of the plan (contiguous)
     * with constant sizes, small_n elements in the output (at most
     * HOP__F_SMALL) and small_n or 1 in each input (small_inc[k] 1 or 0):
     * hop__fused_run runs the steps straight over them.  Set by the
     * lowering; 0 otherwise. */
    int small_n;
    unsigned char small_inc[HOP__F_MAXIN];
    /* One step of integer arithmetic or comparison over one int64 element
     * per operand (a loop counter, a trip test): hop__fused_run computes it
     * inline.  Set by the lowering. */
    bool scalar_i64;
    /* The steps are one chain of f32 arithmetic the register kernel runs
     * (runtime/fused_reg.c), each step's code in reg_code.  Set by
     * hop__fgroup_seal, as the three arrays below (after the steps). */
    bool reg;
    bool reg_inline;   /* and every step runs inline (no RK_CALL) */
    uint8_t *reg_code; /* nsteps of them */
    /* Step s's operand other than the chain's value (index nsteps: step
     * 0's first, where the chain starts): an input k >= 0, -1 the constant
     * in reg_splat[s], -2 none (a unary step).  nsteps + 1 of them. */
    int8_t *reg_arg;
    float *reg_splat; /* nsteps + 1; the kernel spreads each per pass */
    /* What the group computes (`mul(add(x, 1), y)`), for EXPLAIN and
     * messages, through hop__fgroup_text: a fixed text, or else made when
     * asked by describe(desc, b), the code generator's (which keeps in desc
     * what it needs, in the plan's arena).  Writing every group's text while
     * lowering cost ~10% of tracing a chain of ops, and only a dump or an
     * error reads it (issue #30). */
    const char *text;
    void (*describe)(const void *desc, hop__buf *b);
    const void *desc;
    /* An epilogue: a reduction to one element (sum, mean, prod, amax, ...)
     * of the group's output, run by the Fused instruction right after the
     * group into slot epi_out, with epi's kernel cache - the kernel and
     * order of a separate Op step (the same bits), without its dispatch.
     * Set by the lowering (lower.c: epilogue_group); NULL otherwise. */
    const hop__opdesc *epi;
    int32_t epi_out;
    hop__fstep steps[HOP__F_MAXSTEPS];
} hop__fgroup;

/* The bytes of the register kernel's arrays of a group of n steps:
 * reg_splat, reg_arg (n + 1 each), then reg_code (n). */
static inline size_t
hop__freg_bytes(int n)
{
    return (size_t)(n + 1) * (sizeof(float) + sizeof(int8_t)) + (size_t)n * sizeof(uint8_t);
}

/* The bytes of a group of n steps (see above): what a plan keeps; a group
 * of at most n steps may be sealed in them. */
static inline size_t
hop__fgroup_bytes(int n)
{
    return offsetof(hop__fgroup, steps) + (size_t)n * sizeof(hop__fstep) + hop__freg_bytes(n);
}

static inline size_t
hop__fgroup_size(const hop__fgroup *g)
{
    return hop__fgroup_bytes(g->nsteps);
}

/* Call: moves into the callee's parameters, then a jump. */
typedef struct hop__callmove {
    bool tensor;
    int32_t dst;   /* callee slot or register */
    int32_t src;   /* caller slot or register (-1: constant) */
    int64_t value; /* constant */
} hop__callmove;

typedef struct hop__calldesc {
    int32_t routine;
    int32_t nmoves;
    const hop__callmove *moves;
} hop__calldesc;

/* Extern: a foreign kernel call.  The VM evaluates the operands (tensors,
 * ints, floats, bools) and calls hop_foreign_call_into with the output
 * slots, which copies the in-out operands into them before the kernel runs.
 * The plan holds one reference to kernel (released with the plan). */
#define HOP__EXTERN_MAXOUT 16
typedef struct hop__extern {
    const char *name;       /* the kernel's */
    const hop__ntext *text; /* `saxpy = saxpy(s0, 2, x, y)` for the dump */
    const hop_foreign *kernel;
    int32_t nargs;
    const hop__oparg *args;
    int32_t rtbase; /* first of its hop_rt_arg entries in a frame */
    int32_t nouts;
    const int32_t *outs;       /* slots */
    struct hop__extern *chain; /* the plan's externs, for release */
} hop__extern;

/* Kernel: a HOP's own kernel (hop_lower_kernel) and the slots it gets. */
#define HOP__KERNEL_MAXARGS 16 /* HOP_LOWER_KERNEL_MAX_ARGS */
typedef struct hop__hopkernel {
    const char *name;
    hop_status (*fn)(const void *data, hop_tensor *const *tensors, size_t n); /* lowering.h */
    const void *data;                                                         /* the plan's copy */
    int32_t n;
    const int32_t *slots;
} hop__hopkernel;

/* A result of the plan: a tensor slot, an int register, or a constant. */
typedef enum hop__okind { HOP__O_TENSOR, HOP__O_INT, HOP__O_CONST } hop__okind;

typedef struct hop__output {
    hop__okind kind;
    int32_t id;    /* TENSOR: slot; INT: register */
    int64_t value; /* CONST */
    const char *name;
} hop__output;

typedef struct hop__routine {
    const char *name;
    int32_t entry, len;
} hop__routine;

/*
 * A loop whose iterations may run on the thread pool (runtime/parmap.c):
 * the P4 of its LoopInit.  Each worker gets a frame of its own and its own
 * copy of the buffers the body makes (`private`, placed in the worker's
 * area of the block); everything else it reads through the caller's slots.
 * The work items estimate the cost of one iteration.
 */
typedef struct hop__pwork {
    int32_t slot; /* a tensor the body writes or reads: numel * cost units */
    int32_t cost;
    int32_t mreg; /* a nested loop's count register multiplying it, or -1 */
    int64_t mult; /* constant multiplier (nested loops of constant count) */
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

typedef struct hop__frame hop__frame; /* runtime/vm_impl.h */

/* The program.  The code generator fills everything up to `wbuf`; the
 * rest is the VM's. */
struct hop_plan {
    hop__arena arena; /* every descriptor, note and name */
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
    bool static_layout;
    int64_t block_bytes;  /* static plans */
    int32_t *layout_regs; /* registers the layout depends on */
    int32_t nlayout_regs;
    /* lazy sections (hop_lower_if_lazy), numbered from 1; static plans:
     * section_bytes[k] is section k's block ([0]: block_bytes) */
    int32_t nsections;
    int64_t *section_bytes;

    int32_t ncache;    /* kernel caches a frame holds */
    int64_t nrtargs;   /* hop_rt_arg entries a frame holds */
    int32_t max_depth; /* nested Calls */

    const char **notes; /* hop_lower_note's lines (strings in the arena) */
    size_t nnotes, capnotes;

    int32_t nparloops;    /* loops that may run on the pool */
    const bool *wbuf;     /* per buffer: private to a parallel loop (in each worker's area) */
    hop__extern *externs; /* released with the plan */
    FILE *trace;          /* hop_plan_set_trace, HOP_TRACE_PLAN */

    _Atomic(hop__frame *) idle; /* the cached frame */
    /* hop_plan_interrupt's count: a run whose epoch differs stops */
    _Atomic uint32_t interrupts;
};

/* -------------------------------------------- what the code generator calls */

/* A new empty plan (its arena ready).  NULL on out-of-memory.  A plan that
 * fails to compile is freed with hop_plan_free. */
hop_plan *hop__plan_new(void);

/* The dtype the arithmetic vector functions of dt compute in: f16 values are
 * computed in f32 and each result is rounded back, as NumPy does. */
static inline hop_dtype
hop__compute_dtype(hop_dtype dt)
{
    return dt == HOP_F16 ? HOP_F32 : dt;
}

/* The vector functions of fused steps, the elementwise engine's (so a fused
 * group computes what hop_eager does, bit for bit): by op and the dtype
 * they read, NULL where the op refuses the dtype.  Unary and binary ones of
 * f16 are the f32 functions an f16 result is rounded from: they read and
 * write f32 (hop__compute_dtype), and hop__vfn_binary(HOP_OP_pow, HOP_F16)
 * is glibc's powf as NumPy's float16 power (elementwise.c); hop__vfn_unary
 * NULL for f16 (use hop__compute_dtype).  Their cost per element in
 * abstract units (1 = an add) decides threading. */
hop__vfn hop__vfn_unary(hop_op op, hop_dtype dt);
/* The f32 function an f16 result of unary op rounds from: hop__vfn_unary's
 * f32 one, but for exp, log, sin and cos the math backend's own (not hop's
 * copies of NumPy's float32 loops, which NumPy runs for float32 only: its
 * float16 ones are glibc's or SVML's; vmath_numpy.c). */
hop__vfn hop__vfn_unary_f16(hop_op op);
hop__vfn hop__vfn_binary(hop_op op, hop_dtype dt); /* arith, compare, logical */
hop__vfn hop__vfn_where(hop_dtype dt);
hop__vfn hop__vfn_copy(hop_dtype dt);
/* complex.c: the vector function of op on complex operands of dtype dt
 * (for abs real imag angle: a complex input, its parts' dtype out; for
 * complex: dt is the result and the inputs its parts), NULL when op does
 * not take complex; and real imag conj angle of a real dtype dt. */
hop__vfn hop__vfn_complex(hop_op op, hop_dtype dt);
hop__vfn hop__vfn_complex_part(hop_op op, hop_dtype dt);
/* Converts n elements from src (stride in elements) to contiguous dst, with
 * the conversions documented in hop/runtime.h (scalar operands of fused
 * steps are stored converted). */
void hop__convert(int64_t n, void *dst, hop_dtype dt, const void *src, hop_dtype st,
                  int64_t stride);
/* A group of one copy step: dst dtype <- src dtype (with conversion). */
void hop__fgroup_copy(hop__fgroup *g, hop_dtype dst, hop_dtype src);
/* Appends what g computes to b (hop__fgroup.text or .describe; "fused"
 * when it has neither). */
void hop__fgroup_text(const hop__fgroup *g, hop__buf *b);
/* Sets the flags a group's runner reads (has_sym, same_dtypes) and its
 * register kernel's arrays from its g->nsteps steps; g has
 * hop__fgroup_bytes(g->nsteps) bytes. */
void hop__fgroup_seal(hop__fgroup *g);

#endif /* HOP_RUNTIME_PROGRAM_H */
