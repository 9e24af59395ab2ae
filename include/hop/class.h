/*
 * hop/class.h - the HOP class: the one struct through which every stage of
 * the pipeline reaches a higher-order operator.
 *
 * A HOP is a `const hop_class`: a name, a signature (its parameters:
 * constants, traced values, bodies and groups of operands) and slots, one
 * per stage of a HOP's life:
 *
 *   tracing        check_operands .. installed   (hop/prim_hop.h: the protocol)
 *   verifying      verify, body_nouts             (graph/verify.c: every call
 *                                                  node, traced or loaded)
 *   printing       print                          (graph/print.c)
 *   lowering       lower                          (hop/lowering.h: the toolkit)
 *   evaluation     eval                           (hop/eval.h: the reference
 *                                                  interpreter and eager calls)
 *   autodiff       vjp, jvp, reach                (hop/autodiff.h)
 *   batching       batch                          (hop/batching.h)
 *
 * An unset (NULL/0) slot or field inherits from `base`; NULL base means the
 * PrimHOP base (hop_prim_hop_base()), whose behaviour each slot documents.
 * Every stage calls its slot through the class a call_hop node records
 * (hop_node.cls), so the stages never look a HOP up by name and never need
 * the HOP layer to link: this header has types, and the resolvers of a
 * class's inherited fields (hop_class_params and friends, below), which the
 * graph layer implements.
 *
 * The call node's layout follows the signature (params, in order):
 *
 *   name(leads..., bodies..., groups...)
 *
 *   leads   every INT, FLOAT, BOOL, DTYPE and VALUE parameter, in order;
 *   bodies  one subgraph per BODY parameter, in order (a BODIES parameter:
 *           one per body given);
 *   groups  one list per VALUES/CARRY/VARARGS parameter, in order, holding
 *           the values passed to the bodies.  The values each body lifted come
 *           last: appended to the final group when it is VARARGS (map's
 *           extra args, invoke_subgraph's args: "additional inputs"), else in
 *           a list of their own after the groups.  A HOP whose inputs are
 *           lifted on first use (HOP_INPUTS_LIFTED: wrap, cond) has exactly
 *           one list, the merged signature of its bodies.
 *
 * So `map(f, xs, *args)` prints `map(map_body_0, (x,), (w, s1))` and
 * `repeat(n: int, body, *args)` prints `repeat(3, repeat_body_0, (x, w))`.
 * The accessors (hop_call_arg and friends, hop/prim_hop.h) read a node by
 * parameter name; no HOP reads args[k] by position.
 */
#ifndef HOP_CLASS_H
#define HOP_CLASS_H

/* The build checks the layering: a layer may include this header only if
 * it links the graph layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_GRAPH)
#error "hop/class.h belongs to the graph layer, which this layer does not link"
#endif

#include "hop/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_class hop_class;
typedef struct hop_call hop_call;           /* a call being traced: hop/prim_hop.h */
typedef struct hop_lower_ctx hop_lower_ctx; /* a plan being built: hop/lowering.h */
typedef struct hop_eval_ctx hop_eval_ctx;   /* a call being evaluated: hop/eval.h */
typedef struct hop_vjp_ctx hop_vjp_ctx;     /* reverse mode (issue #15) */
typedef struct hop_jvp_ctx hop_jvp_ctx;     /* forward mode (issue #15) */
typedef struct hop_batch_ctx hop_batch_ctx; /* vmap: hop/batching.h */

typedef enum hop_param_kind {
    HOP_PARAM_END = 0, /* ends the parameter list */
    HOP_PARAM_INT,     /* an int64 constant (HOP_ARG_INT) */
    HOP_PARAM_FLOAT,   /* a double constant (HOP_ARG_FLOAT; an int is taken) */
    HOP_PARAM_BOOL,    /* a bool constant (HOP_ARG_BOOL) */
    HOP_PARAM_DTYPE,   /* a dtype (HOP_ARG_DTYPE) */
    HOP_PARAM_VALUE,   /* one traced value for the HOP itself (cond's pred): a
                          node, a SymInt/SymBool expression or a bool */
    HOP_PARAM_BODY,    /* a body, traced into a subgraph named <prefix>_<N> */
    HOP_PARAM_BODIES,  /* one or more bodies given as a list (switch's
                          branches), each traced as a BODY; the last body
                          parameter */
    HOP_PARAM_VALUES,  /* a group of values passed to the bodies (a list);
                          from Python one argument, a tensor or a pytree */
    HOP_PARAM_CARRY,   /* a group of values a loop carries: passed like VALUES,
                          but each body input for one is fresh (never the
                          operand itself: a carry changes), a SymInt carry an
                          unbacked symbol */
    HOP_PARAM_VARARGS, /* the same as VALUES for the remaining positional
                          arguments (Python *args); only as the last parameter */
} hop_param_kind;

/* Whether parameters of kind k are groups of values (a list in the node). */
static inline int
hop_param_is_group(hop_param_kind k)
{
    return k == HOP_PARAM_VALUES || k == HOP_PARAM_CARRY || k == HOP_PARAM_VARARGS;
}

/* Whether parameters of kind k are leads (a constant or a value of the
 * call itself, before the bodies in the node). */
static inline int
hop_param_is_lead(hop_param_kind k)
{
    return k != HOP_PARAM_END && k != HOP_PARAM_BODY && k != HOP_PARAM_BODIES &&
           !hop_param_is_group(k);
}

/* Whether a may stand for a lead parameter of kind k (in a call being
 * traced and in a call_hop node alike): INT an int; FLOAT a float or an
 * int; BOOL a bool; DTYPE a valid dtype; VALUE a node, a SymInt/SymBool
 * expression, a bool or an int.  False for other kinds (graph/class.c). */
bool hop_param_fits(hop_param_kind k, const hop_arg *a);

/*
 * Flags of a parameter.  HOP_PARAM_BATCHED_ITEM (a VALUE lead): the HOP
 * reads an int scalar tensor given here with `item` when traced (switch's
 * index, fori_loop's bounds), and under vmap an `item` of a batched tensor
 * whose only uses are such leads is not an error: its value is the batched
 * tensor itself, [B], one int per example, which the class's batch slot
 * must take (docs/VMAP.md).
 */
enum { HOP_PARAM_BATCHED_ITEM = 1u << 0 };

/*
 * Flags of a class.  HOP_CLASS_MAY_NOT_END: a call may run forever
 * (while_loop: its trip count is data), which eager code shows as a hang, an
 * effect: hop_node_may_fail counts the call, so no DCE drops an unused one
 * and a transformed function hangs where eager does, as the plain traced and
 * compiled calls always did (docs/AUTODIFF.md, "Run-time checks").
 */
enum { HOP_CLASS_MAY_NOT_END = 1u << 0 };

typedef struct hop_param {
    const char *name; /* an identifier, unique in the signature */
    hop_param_kind kind;
    const char *prefix; /* BODY: the subgraph name prefix ("cond_true") */
    unsigned flags;     /* HOP_PARAM_BATCHED_ITEM, or 0 */
} hop_param;

/* Parameters of one signature, bodies of one call. */
#define HOP_MAX_PARAMS 8
#define HOP_MAX_BODIES 16

typedef enum hop_input_mode {
    HOP_INPUTS_INHERIT = 0, /* as the base class says */
    HOP_INPUTS_LIFTED,      /* the body gets the outer values; lifted on first use */
    HOP_INPUTS_EXPLICIT,    /* explicit placeholders first, lifted values after */
} hop_input_mode;

/*
 * Where the guards recorded while a body is traced go (hint decisions on the
 * sizes of the program's inputs, hop_shape_env_decide).  A guard must hold
 * whenever the code that relied on it runs, and only then: a guard one cond
 * branch needs must not reject inputs that take the other branch.
 */
typedef enum hop_guard_mode {
    HOP_GUARDS_INHERIT = 0, /* as the base class says */
    HOP_GUARDS_CALLER,      /* the caller's (the base): the body runs whenever the
                               call does (wrap, map, invoke_subgraph) */
    HOP_GUARDS_BRANCH,      /* exactly one body runs per call (cond): a guard
                               every body recorded is the caller's, the others
                               stay with their body (its graph's guards), checked
                               each time it runs */
    HOP_GUARDS_BODY,        /* a body may run or not (a loop body): every guard
                               stays with its body */
} hop_guard_mode;

struct hop_class {
    const hop_class *base; /* NULL: the PrimHOP base */
    const char *name;      /* "cond": the call_hop target; an identifier */
    /* The signature, in call order, ended by the first HOP_PARAM_END entry;
     * none at all inherits the base's.  PrimHOP: (body: BODY, *args). */
    hop_param params[HOP_MAX_PARAMS];
    const char *doc; /* one paragraph for Python's help(); NULL: none */
    hop_input_mode input_mode;
    hop_guard_mode guard_mode;
    /* Leading explicit inputs of every body that the HOP makes itself and
     * passes no value for (a loop's index: fori_loop's body gets i, then its
     * carries).  body_inputs gives their metadata first; the verifier expects
     * made_inputs + the passed values placeholders. */
    unsigned made_inputs;
    /* HOP_CLASS_* flags, the class's own (not inherited), or 0. */
    unsigned flags;

    /* ---- tracing: each slot takes the call in flight (hop/prim_hop.h has
     * the protocol and what each base slot does). */
    hop_status (*check_operands)(hop_call *c);
    hop_status (*body_inputs)(hop_call *c);
    hop_status (*check_outputs)(hop_call *c);
    hop_status (*signature)(hop_call *c);
    hop_status (*output_meta)(hop_call *c);
    hop_status (*lookup)(hop_call *c);
    hop_status (*installed)(hop_call *c);

    /* ---- verifying.  verify checks one call node against what the HOP
     * accepts: the values of its leads (a dim in range, a mask naming only
     * the operands there are), its groups (how many values, of what kinds
     * and ranks), its bodies' inputs against the values it passes and their
     * outputs against its own.  It is the one description of a well-formed
     * call: hop_graph_verify runs it on every call node, so a loaded program
     * (hop_output_graph_load) and every graph lowered or transformed passes
     * it, and hop_apply runs it on the node it emits, so a traced node does.
     * lower, eval, print and the transformations may rely on what it
     * checked.  Before it runs, the verifier has checked the layout the
     * signature gives (each lead of its parameter's kind, the bodies'
     * subgraphs, one list of values per group), each body's placeholders
     * (made_inputs + one per passed value, of their kinds and dtypes) and
     * outputs (body_nouts of them).  Returns HOP_OK or HOP_VERIFY through
     * hop_verify_fail / hop_verify_error (hop/graph.h), never anything else
     * (HOP_NOMEM aside).  PrimHOP: hop_verify_default (the bodies the
     * signature takes, each body's inputs compatible with what the call
     * passes, its outputs with the call's outputs).  A HOP that slices or
     * stacks, or reads its leads, checks them and calls the kit (map: rows
     * are slices, outputs stacked; hop/scan.c: dim in range).
     *
     * body_nouts: how many values body b (0-based, in signature order) of
     * a call node returns, which the verifier checks.  PrimHOP: as many as
     * the call has outputs.  (A loop's condition returns one.) */
    hop_status (*verify)(const hop_node *call);
    size_t (*body_nouts)(const hop_node *call, size_t body);

    /* ---- printing.  Writes the right-hand side of the call's line
     * (`repeat(3, repeat_body_0, (x, w))`) into buf, snprintf-style: returns
     * the length it needs.  PrimHOP: the generic `name(args...)`. */
    size_t (*print)(const hop_node *call, char *buf, size_t cap);

    /* ---- running.  lower emits the plan code of one call node and ends
     * with hop_lower_results (hop/lowering.h).  PrimHOP: its one body inlined
     * with every passed value, its results the call's (hop_lower_default).
     * eval runs one call on concrete values, for the reference interpreter
     * (bodies are subgraphs) and for eager calls (bodies are host functions,
     * e.g. Python), and ends with hop_eval_results (hop/eval.h).  PrimHOP:
     * its one body run on every passed value (hop_eval_default). */
    hop_status (*lower)(hop_lower_ctx *cx, const hop_node *call);
    hop_status (*eval)(hop_eval_ctx *ex);

    /* ---- transformations (hop/autodiff.h and hop/batching.h define their
     * contexts). */
    hop_status (*vjp)(hop_vjp_ctx *cx, const hop_node *call);
    hop_status (*jvp)(hop_jvp_ctx *cx, const hop_node *call);
    /* reach: which outputs of a call node a tangent reaches, for
     * hop_ad_reach when it meets the call nested in a graph it walks (so a
     * HOP around this one keeps a symbolic zero for an output this one's
     * jvp leaves none).  from: one per value the call passes
     * (hop_node_passed order), true where a tangent reaches it; sets
     * reached[i] (one per output of the call) for each output i whose
     * tangent the jvp slot may make nonzero, and leaves the others as they
     * were.  Asked only when no lead of the call is reached.  Saying
     * reached is always safe (an instantiated zero where a symbolic one
     * would do); saying not reached for an output the jvp gives a nonzero
     * tangent is a wrong derivative.  hop_ad_reach_bodies (output i is body
     * output i) and hop_loop_reach (hop/loop_kit.h) are ready-made.  Unset
     * in a class that sets jvp (or its base's reach set below a class that
     * sets jvp): every output is reached; a class whose jvp is
     * hop_jvp_bodies, or a wrap-like class without rules, gets
     * hop_ad_reach_bodies. */
    hop_status (*reach)(const hop_node *call, const bool *from, bool *reached);
    hop_status (*batch)(hop_batch_ctx *cx, const hop_node *call);

    void *user_data; /* free for the class */
};

/* How long a chain of bases the resolvers follow (the registry refuses a
 * deeper or cyclic one). */
#define HOP_CLASS_MAX_DEPTH 32

/*
 * What cls says, resolved through its chain of bases; a field no class of
 * the chain sets is the PrimHOP base's (graph/class.c).
 *
 * hop_class_params        the signature; *n gets its length.  PrimHOP:
 *                         (body: BODY "body", *args: VARARGS).
 * hop_class_input_mode    PrimHOP: HOP_INPUTS_LIFTED.
 * hop_class_guard_mode    PrimHOP: HOP_GUARDS_CALLER.
 * hop_class_made_inputs   PrimHOP: 0.
 * hop_class_nbodies       how many BODY parameters the signature has.
 * hop_class_takes_bodies  whether a call may have nbodies bodies (a BODIES
 *                         parameter takes one or more, up to HOP_MAX_BODIES).
 * hop_class_body_param    the parameter of body b (a BODIES parameter for
 *                         each body past the BODY ones), or NULL.
 * hop_class_is_wrap_like  whether the class runs one of its bodies on what
 *                         it passes: its lowering and its evaluation are the
 *                         PrimHOP base's (no class of its chain sets lower or
 *                         eval).  The transformations treat a wrap-like class
 *                         without a rule of its own as wrap (through its
 *                         bodies).
 */
const hop_param *hop_class_params(const hop_class *cls, size_t *n);
hop_input_mode hop_class_input_mode(const hop_class *cls);
hop_guard_mode hop_class_guard_mode(const hop_class *cls);
size_t hop_class_made_inputs(const hop_class *cls);
size_t hop_class_nbodies(const hop_class *cls);
bool hop_class_takes_bodies(const hop_class *cls, size_t nbodies);
const hop_param *hop_class_body_param(const hop_class *cls, size_t b);
bool hop_class_is_wrap_like(const hop_class *cls);

/*
 * The nearest class of cls's chain (cls, its base, ...) that sets the slot
 * at byte offset `offset`, or NULL when none does (the PrimHOP base's
 * behaviour applies).  Use HOP_CLASS_SLOT_OWNER(cls, lower).
 */
static inline const hop_class *
hop_class_slot_owner(const hop_class *cls, size_t offset)
{
    for (int depth = 0; cls && depth < HOP_CLASS_MAX_DEPTH; cls = cls->base, depth++) {
        void (*slot)(void);
        __builtin_memcpy(&slot, (const char *)cls + offset, sizeof slot);
        if (slot != 0)
            return cls;
    }
    return 0;
}

#define HOP_CLASS_SLOT_OWNER(cls, slot)                                                            \
    hop_class_slot_owner((cls), __builtin_offsetof(hop_class, slot))

#ifdef __cplusplus
}
#endif
#endif /* HOP_CLASS_H */
