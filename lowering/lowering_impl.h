/*
 * lowering/lowering_impl.h - the code generator's private state and what
 * its files share.  Nothing outside lowering/ includes it: the program it
 * writes has its format in runtime/program.h, the one header shared with
 * the VM.
 *
 *   emit.c     the program under construction: routines, instructions,
 *              registers, slot accesses and aliases (for lifetimes), notes
 *   xprog.c    SymInt/SymBool expressions compiled into int programs
 *   values.c   the value of each node, slots, instruction operands, the
 *              text of nodes in plans
 *   fused.c    fused elementwise groups: which nodes fuse, building a group
 *   toolkit.c  what a HOP's lower callback builds code with
 *              (hop/lowering.h), except the entries that compile a graph
 *   fuseplan.c fusion planning: which nodes each fused group computes,
 *              within the executor's limits, each group built once
 *   lower.c    graph -> program: each node kind, graphs, guards,
 *              the main routine, assembly, hop_lower; and the toolkit's
 *              entries that compile a graph (inline, call, subroutines,
 *              the default lowering of a call_hop)
 *   memplan.c  lifetimes, regions and static offsets of the block
 *   parplan.c  which parallel loops may run on the pool
 *   foreign.c  a call_foreign node lowered to an Extern
 *
 * The files call each other one way: emit.c <- xprog.c <- values.c <-
 * fused.c <- toolkit.c <- lower.c, fused.c <- fuseplan.c <- lower.c,
 * values.c <- foreign.c <- lower.c, and lower.c -> memplan.c -> parplan.c.
 * The recursion of compiling (a graph's call_hop runs its class's lower
 * slot, which compiles the HOP's bodies) goes through that slot, a
 * function pointer, back into lower.c's hop_lower_inline/hop_lower_call.
 */
#ifndef HOP_LOWERING_IMPL_H
#define HOP_LOWERING_IMPL_H

#include "core/core.h"
#include "core/hash.h"
#include "hop/lowering.h"
#include "runtime/program.h"

/* ---------------------------------------------------- the compiler's state */

/* A slot read or written at a position of its routine (lifetimes). */
typedef struct hop__acc {
    int32_t pos;
    int32_t slot;
} hop__acc;

/* Slot `slot` stands for `of` (a view, a Move): of lives as long as it. */
typedef struct hop__alias {
    int32_t slot, of;
} hop__alias;

/* A loop's LoopInit and Next, positions in its routine. */
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

/*
 * What the compiler knows of a node (values.c keeps one per node, keyed by
 * the node): its value, a call's results, whether fusion absorbed it into
 * its user's group, and where it should be computed.
 */
typedef struct hop__vmap {
    const hop_node *node;
    hop_pval v;
    hop_pval *results; /* call_hop, call_foreign */
    size_t nresults;
    bool absorbed;    /* fused into its user's group */
    bool merged;      /* computed by a multi-output group rooted later (fuseplan.c) */
    bool fusable;     /* hop__fused_ok(node), asked once by plan_fusion */
    bool preassigned; /* v is a destination slot the node must be computed into */
    hop_pval *dests;  /* call_hop: where its results should go (NONE: anywhere) */
    /* The fused group the node was last collected into (cx->group, see
     * fuseplan.c collect) and its index among that group's members (-1 while
     * its operands are being collected): a member test is one lookup, where
     * a search of the group's up to 64 members made planning and building a
     * group quadratic in its length. */
    uint32_t group;
    int member;
    /* A group root: its group as fusion planning built it, which
     * compile_group finishes (NULL: it builds the group itself). */
    struct hop__fbuilt *built;
    /* Its place in its graph's order, and the fused group (fuseplan.c's
     * merge_units: an index among the graph's groups, -1 none) that
     * computes it. */
    int32_t pos, unit;
    /* A fusable node's step function and dtypes as hop__fused_ok found
     * them, which building its group reads instead of finding them again. */
    hop__vfn step_fn;
    hop_dtype step_need[3], step_fdtype;
} hop__vmap;

typedef struct hop__xcache hop__xcache;
typedef struct hop__noteseen hop__noteseen;

/* An open if/else or loop block: kind 0 if, 1 else, 2 loop, 3 parallel loop,
 * 4 while loop. */
typedef struct hop__ctl {
    int kind;
    int32_t a, b;
    /* an if's then-branch that is a lazy section: the section open
     * before it and its routine, restored at its else or end (-1: not
     * lazy) */
    int32_t outer_section, outer_routine;
} hop__ctl;

/* A jump out of a loop (a while loop's test, a break), patched at its end. */
typedef struct hop__exit {
    int depth; /* the loop's index in ctl */
    int32_t pc;
} hop__exit;

/* Open if/loop blocks: one per enclosing cond or map; tests/c/test_scale.c
 * lowers 256-deep nesting. */
#define HOP__MAX_CTL 1024

#define HOP__FOK 8
#define HOP__XFRONT 16

struct hop_lower_ctx {
    hop_plan *plan;
    const hop_output_graph *og;
    hop_shape_env *env;
    hop_lower_options opts;
    hop__arena tmp;
    uint32_t group;        /* the last group collect numbered (hop__vmap.group) */
    hop__fgroup *fscratch; /* where trial fits are checked (tmp arena) */
    /* hop__fused_ok_into's answers by what they depend on (fused.c
     * fused_key: the op, the result's dtype, each operand's kind and dtype),
     * the last HOP__FOK asked: a chain's nodes ask the same few questions. */
    struct hop__fok {
        uint64_t key; /* 0: empty */
        bool ok;
        hop__vfn fn;
        hop_dtype need[3], fdtype;
    } fok[HOP__FOK];
    unsigned fok_next;  /* the entry a new answer replaces, mod HOP__FOK */
    bool fbuild_inputs; /* the last failed build had too many inputs */
    /* The values by node: an open-addressed table of vcap entries (a power
     * of two, at most half used; NULL: free) into cx->tmp's hop__vmaps. */
    hop__vmap **values;
    size_t vcap, vcount;
    hop__xcache *xcache;
    /* The plan's notes by text (hop_lower_note keeps each once): a map call
     * notes its own name, so a scan of every earlier note made lowering N
     * map calls quadratic (10,000 calls: ~1.7 G instructions in strcmp). */
    hop__noteseen *noteseen;
    /* The programs hop__xcompile gave last, by a hash of the expression
     * (interned: one pointer per expression), asked before xcache: a HOP
     * call's slots ask for the same few sizes (a cond call ~14 times, each
     * a uthash lookup of ~45 instructions where a hit here is ~8). */
    struct hop__xfront {
        const hop_expr *e; /* NULL: empty */
        const hop__xprog *x;
    } xfront[HOP__XFRONT];

    int32_t *symreg; /* by symbol id: register or -1 */
    bool *symdef;    /* by symbol id: bound by code emitted so far */
    bool *symentry;  /* by symbol id: bound by an input's size at entry */
    size_t nsyms;

    hop__rcode *routines;
    size_t nroutines, caproutines;
    int32_t cur;

    hop__ctl ctl[HOP__MAX_CTL];
    int nctl;
    hop__exit *exits;
    size_t nexits, capexits;

    hop__slot *slots;
    size_t nslots, capslots;
    const char **regnames;
    size_t nregs, capregs;
    hop__buffer *buffers;
    size_t nbuffers, capbuffers;
    hop__alias *aliases;
    size_t naliases, capaliases;
    /* the open lazy section (0: none; hop_lower_if_lazy) and its routine:
     * buffers that routine makes meanwhile are the section's */
    int32_t section, section_routine;
    int32_t nsections;

    int32_t ncache;
    int64_t nrtargs;

    /* graphs a HOP's lower slot made and inlined (hop_lower_keep_graph):
     * nodes key the value map, so they live until hop_lower returns */
    hop_graph **kept;
    size_t nkept, capkept;

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

/* Some jump of routine r goes to position pos (toolkit.c). */
bool hop__jump_target(const hop__rcode *r, int32_t pos);

/* -------------------------------------------------------------- emit.c */

/* st, or HOP_NOMEM (with its message) when a failure left no status. */
hop_status hop__nomem_or(hop_status st);
/* A printf-formatted string in the plan's arena; NULL on out-of-memory. */
char *hop__note(hop_lower_ctx *cx, const char *fmt, ...) HOP_PRINTF(2, 3);
/* A new routine compiling g (NULL: main). */
hop_status hop__new_routine(hop_lower_ctx *cx, const hop_graph *g, int32_t *out);
/* Appends an instruction to the current routine; its position, or -1 on
 * out-of-memory. */
int32_t hop__emit(hop_lower_ctx *cx, hop__opcode op, int32_t p1, int32_t p2, int32_t p3,
                  const void *p4, const char *note);
/* The position the next instruction gets. */
int32_t hop__pos(hop_lower_ctx *cx);
/* The last instruction reads or writes slot (-1: none): its lifetime. */
hop_status hop__access(hop_lower_ctx *cx, int32_t slot);
/* slot stands for of: of lives at least as long. */
hop_status hop__alias_of(hop_lower_ctx *cx, int32_t slot, int32_t of);
/* A new int register; name (copied; NULL for a temporary) is for dumps. */
hop_status hop__new_reg(hop_lower_ctx *cx, const char *name, int32_t *out);
/* Symbol e's register holds its value from here on in program order. */
void hop__mark_defined(hop_lower_ctx *cx, const hop_expr *e);
/* sym is bound at entry, by an input's size. */
bool hop__entry_bound(hop_lower_ctx *cx, const hop_expr *sym);

/* ------------------------------------------------------------- xprog.c */

/* The program of e (cached per plan), or NULL with the error set
 * (HOP_UNSUPPORTED for a symbol the plan does not know, HOP_NOMEM). */
const hop__xprog *hop__xcompile(hop_lower_ctx *cx, const hop_expr *e);
/* The program of a constant. */
const hop__xprog *hop__xconst(hop_lower_ctx *cx, int64_t v);
/* Symbol sym's register (made on first use); -1 with the error set. */
int32_t hop__sym_reg(hop_lower_ctx *cx, const hop_expr *sym);
void hop__xcache_free(hop_lower_ctx *cx);
/* Frees the set of note texts hop_lower_note keeps (toolkit.c). */
void hop__noteseen_free(hop_lower_ctx *cx);

/* ------------------------------------------------------------ values.c */

/* The home slot of n in cx->values (a Fibonacci hash of the pointer). */
static inline size_t
hop__vmap_home(const hop_lower_ctx *cx, const hop_node *n)
{
    uint64_t h = (uint64_t)(uintptr_t)n * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (cx->vcap - 1);
}

/* Makes n's entry, which is not in the table (NULL on out-of-memory). */
hop__vmap *hop__vmap_add(hop_lower_ctx *cx, const hop_node *n);
/* Makes room for n values in all without growing the table again (hop_lower
 * reserves one per node of the graph and its subgraphs: the table grew seven
 * times, rehashing, for a 1,000-node nested program). */
hop_status hop__vmap_reserve(hop_lower_ctx *cx, size_t n);

/* What the compiler knows of n; with create, made on first use (NULL on
 * out-of-memory).  Inline: lowering asks it about nine times a node (fusion
 * planning, collecting, building), and a call cost more than the probe. */
static inline hop__vmap *
hop__vmap_get(hop_lower_ctx *cx, const hop_node *n, bool create)
{
    if (cx->vcap > 0) {
        for (size_t k = hop__vmap_home(cx, n); cx->values[k] != NULL; k = (k + 1) & (cx->vcap - 1))
            if (cx->values[k]->node == n)
                return cx->values[k];
    }
    return create ? hop__vmap_add(cx, n) : NULL;
}
/* n's value; HOP_VERIFY when n is not computed yet. */
hop_status hop__value_of(hop_lower_ctx *cx, const hop_node *n, hop_pval *out);
hop_status hop__set_value(hop_lower_ctx *cx, const hop_node *n, hop_pval v);
/* The plan value of an argument (hop_lower_arg without its checks): a
 * node's value, an int, or a SymInt expression (an Eval into a new
 * register when it is compound). */
hop_status hop__arg_value(hop_lower_ctx *cx, const hop_arg *a, hop_pval *out);
/* A tensor with meta's sizes is only made mid-run (sizes not bound at
 * entry): its storage is allocated when made, not in the block. */
bool hop__meta_late(hop_lower_ctx *cx, const hop_meta *m);
/* A new slot of kind for a tensor with meta (a buffer of the memory plan
 * for BUFFER); name (copied) is for dumps. */
hop_status hop__new_slot(hop_lower_ctx *cx, hop__skind kind, const hop_meta *meta, const char *name,
                         int32_t *out);
/* An operand of an instruction; counts its hop_rt_arg entries in *nrt. */
hop_status hop__compile_oparg(hop_lower_ctx *cx, const hop_arg *a, hop__oparg *o, int32_t *nrt);
/* The text of an argument in a plan (hop_arg_print, floats as %.17g), and
 * what writes `name = target(args)` of a node when asked, kept in the
 * plan's arena (NULL on out-of-memory). */
void hop__arg_text(hop__buf *b, const hop_arg *a);
const hop__ntext *hop__node_text(hop_lower_ctx *cx, const hop_node *n);

/* ------------------------------------------------------------- fused.c */

/* n can be a member of a fused group. */
bool hop__fused_ok(const hop_node *n);
/* hop__fused_ok, and when true m's step function and dtypes set. */
bool hop__fused_ok_into(hop_lower_ctx *cx, const hop_node *n, hop__vmap *m);
/* A fused group whose steps are built (its limits checked), as fusion
 * planning leaves it for compile_group: the group in the plan's arena, its
 * tensor inputs' nodes (their slots are not known yet), and the members it
 * was built from with the number collect gave them (hop__vmap.group), so
 * compile_group finishes it without walking the group again. */
struct hop__fbuilt {
    hop__fgroup *g;
    const hop_node *in_nodes[HOP__F_MAXIN];
    const hop_node **members; /* tmp arena, nmembers of them */
    int nmembers;
    uint32_t group;
    /* A multi-output group's extra outputs (g->nxout): the members whose
     * results they are (hop__fused_build_multi). */
    const hop_node *xnodes[HOP__F_MAXXOUT];
};
typedef struct hop__fbuilt hop__fbuilt;
/* Builds the steps of the group of members (graph order, root last, as
 * fuseplan.c's collect made them: each member's hop__vmap has group cx->group
 * and its index) into *out (tmp arena; the group in the plan's arena).
 * HOP_UNSUPPORTED when the group is too big (quiet: with no error message,
 * as fusion planning tries groups that do not fit). */
hop_status hop__fused_build(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members,
                            int nmembers, bool quiet, hop__fbuilt **out);
/* Whether the group of members (as for hop__fused_build) less members skip
 * .. skip + nskip - 1 is within the executor's limits (steps, inputs,
 * registers): its build's checks alone, into scratch, for fusion planning's
 * trial cuts.  The members left out are a cut member's run (the member
 * last, what it absorbs before it: each has one user), so the group reads
 * the last one's result as an input; they keep their hop__vmap numbers, so
 * a trial changes nothing to undo.  False also when scratch cannot be had
 * (the build that follows reports it). */
bool hop__fused_fits(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members,
                     int nmembers, int skip, int nskip);
/* The tensor inputs of steps from .. to - 1 of the group members[first
 * .. nmembers - 1] (members before first are a cut member's run, read as
 * an input: hop__fused_fits' skip 0, nskip first), added to in[0 .. nin)
 * when not there yet, as a build of that group counts them: returns the
 * new count, stopping once it is HOP__F_MAXIN + 1 (in has room for that
 * many).  A group whose count is over HOP__F_MAXIN does not fit. */
int hop__fused_add_inputs(hop_lower_ctx *cx, const hop_node *const *members, int from, int to,
                          int first, const hop_node **in, int nin);
/* Builds a multi-output group (fuseplan.c merge_units) of members (graph
 * order, each member's hop__vmap numbered for cx->group; a member may have
 * several users among them), whose last member is the output and each
 * member with is_out set an extra output, into *out as hop__fused_build
 * does; with out NULL only whether it fits (into scratch).
 * HOP_UNSUPPORTED, quiet, when it does not fit. */
hop_status hop__fused_build_multi(hop_lower_ctx *cx, const hop_node *const *members, int nmembers,
                                  const bool *is_out, hop__fbuilt **out);
/* Completes b, built from the same members, to write slot out: its inputs'
 * slots, SymInt operands' programs, the small-run plan and what its text
 * is made from when asked (hop__fgroup.describe). */
hop_status hop__fused_finish(hop_lower_ctx *cx, const hop_node *const *members,
                             const hop__fbuilt *b, int32_t out);
/* A Copy instruction: slot dst <- slot src, elementwise with conversion. */
hop_status hop__emit_copy(hop_lower_ctx *cx, int32_t dst, int32_t src);

/* ---------------------------------------------------------- fuseplan.c */

/* Decides which elementwise nodes of g are computed inside their user's
 * group (hop__vmap.absorbed), within the executor's limits, and keeps each
 * group's build in its root's hop__vmap.built. */
hop_status hop__plan_fusion(hop_lower_ctx *cx, const hop_graph *g);
/* The members of the group rooted at root (graph order, root last; at most
 * HOP__F_MAXSTEPS + 1), each member's hop__vmap numbered for
 * hop__fused_build; returns how many. */
int hop__fuse_collect(hop_lower_ctx *cx, const hop_node *root, const hop_node **members);

/* ------------------------------------------------------------- lower.c */

/* Compiles g here with its placeholders bound to inputs; see
 * hop_lower_inline. */
hop_status hop__compile_graph(hop_lower_ctx *cx, const hop_graph *g, const hop_pval *inputs,
                              size_t ninputs, const hop_pval *dests, hop_pval *outputs,
                              size_t noutputs);

/* ----------------------------------------------------- memplan, parplan */

hop_status hop__memplan(hop_lower_ctx *cx);
/* Decides which parallel loops may run on the pool (after the regions). */
hop_status hop__parmap_plan(hop_lower_ctx *cx);

/* ----------------------------------------------------------- foreign.c */

/* The Extern of a call_foreign node; *results (tmp arena) gets its nouts
 * output slots. */
hop_status hop__lower_foreign(hop_lower_ctx *cx, const hop_node *n, hop_pval **results);

#endif /* HOP_LOWERING_IMPL_H */
