/*
 * hop/prim_hop.h - higher-order operators: the PrimHOP base, the registry,
 * and the four built-in HOPs (wrap, cond, map, invoke_subgraph).
 *
 * A HOP is a `const hop_hop_class`: a name, one subgraph name prefix per
 * body, how body inputs are made, and slots.  An unset (NULL/0) slot inherits
 * from `base` (NULL means the PrimHOP base, hop_prim_hop_base()).  The base
 * does the shared work of every call (hop_hop_call):
 *
 *   1. checkpoint the OutputGraph (every failure below restores it exactly);
 *   2. check the operands                                 (slot check_operands)
 *   3. per body: push a tracer, create its explicit inputs (slot body_inputs),
 *      run the body callback, lift what it returns, pop; place the guards its
 *      tracing recorded (guard_mode);
 *   4. check the bodies' outputs against each other      (slot check_outputs)
 *   5. give the bodies one signature and build the values the call passes
 *      (slot signature: base = explicit operands then lifted values; cond
 *      merges its branches' lifted inputs)
 *   6. install each body as a subgraph named "<prefix>_<N>"
 *   7. compute the output metadata                       (slot output_meta)
 *   8. emit one call_hop node in the parent and one getitem per output.
 *
 * (Slot lookup may answer step 3-7 from a cache; slot installed runs last.)
 * The eager implementation and the lowering of a HOP are slots added by the
 * runtime and lowering layers.
 *
 * Bodies are C callbacks with user data; whatever outer values they use are
 * lifted automatically (hop/tracer.h).
 */
#ifndef HOP_PRIM_HOP_H
#define HOP_PRIM_HOP_H

#include "hop/output_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable list of values (what a body returns, what a HOP call yields). */
typedef struct hop_values {
    hop_node **items;
    size_t n, cap;
} hop_values;

/* Appends v.  HOP_NOMEM leaves the list as it was. */
hop_status hop_values_push(hop_values *vs, hop_node *v);
/* Frees the items array (not the nodes) and empties the list. */
void hop_values_clear(hop_values *vs);

/*
 * A body: records ops in tracer t and appends what it returns to *outputs.
 * inputs are the body's explicit inputs: placeholders of t's graph for a HOP
 * with explicit inputs (map: one slice per xs, then the extra args), or the
 * outer values themselves for a HOP whose inputs are lifted on first use
 * (wrap, cond).  Returns HOP_OK, or an error status with the error context
 * set; the base then undoes everything the call did.
 */
typedef hop_status (*hop_body_fn)(hop_tracer *t, void *ud, hop_node *const *inputs, size_t ninputs,
                                  hop_values *outputs);

typedef struct hop_body {
    hop_body_fn fn;
    void *ud;
} hop_body;

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

#define HOP_MAX_BODIES 4

typedef struct hop_hop_class hop_hop_class;

/*
 * One HOP call in flight, passed to every slot.  Slots read what is above
 * their step and fill what their step owns.
 */
typedef struct hop_call {
    const hop_hop_class *cls;
    hop_output_graph *og;
    hop_tracer *parent;      /* the tracer the call is recorded in */
    const hop_arg *operands; /* as given (cond: the pred; map: xs...) */
    size_t noperands;
    size_t body_operands; /* operands[body_operands..] go to the bodies
                             (check_operands may skip leading ones) */
    const hop_body *bodies;
    size_t nbodies;
    /* Explicit inputs of every body (body_inputs): metadata and names. */
    hop_value_info *input_meta;
    const char **input_names;
    size_t ninputs;
    /* Per body, after tracing: its tracer, graph and returned values (the
     * body graph's own nodes, in order). */
    hop_tracer *tracers[HOP_MAX_BODIES];
    hop_graph *graphs[HOP_MAX_BODIES];
    hop_values results[HOP_MAX_BODIES];
    /* The values the call passes to its subgraphs, in signature order
     * (signature slot), as values of the parent tracer. */
    hop_values passed;
    /* Output metadata (output_meta slot). */
    hop_value_info *outs;
    size_t nouts;
    /* Leading arguments of the call_hop node before the subgraphs, e.g.
     * cond's pred (set by check_operands); at most 4. */
    hop_arg lead[4];
    size_t nlead;
    /* The call's results (one getitem per output), once emitted. */
    hop_values *outputs;
    /* Set by a class that answers a call without tracing (invoke_subgraph's
     * cache): the installed subgraphs to call instead. */
    hop_graph *reuse[HOP_MAX_BODIES];
} hop_call;

struct hop_hop_class {
    const hop_hop_class *base;            /* NULL: the PrimHOP base */
    const char *name;                     /* "cond": the call_hop target; an identifier */
    int nbodies;                          /* how many bodies a call takes (1..HOP_MAX_BODIES) */
    const char *prefixes[HOP_MAX_BODIES]; /* subgraph name prefix per body */
    hop_input_mode input_mode;
    hop_guard_mode guard_mode;

    /* Checks c->operands; may set c->lead.  Base: operands must be values
     * (tensors or SymInts) of enclosing tracers. */
    hop_status (*check_operands)(hop_call *c);
    /* Fills c->input_meta/input_names/ninputs (explicit mode).  Base: one
     * input per operand, with the operand's metadata and name. */
    hop_status (*body_inputs)(hop_call *c);
    /* Compares the bodies' results.  Base: nothing to compare. */
    hop_status (*check_outputs)(hop_call *c);
    /* Orders every body's placeholders into one signature and fills
     * c->passed.  Base: explicit operands, then each lifted placeholder's
     * source, for a single body; bodies sharing a signature are merged as
     * for cond (shared sorted by name, then unique per body, suffixed
     * "_<prefix-without-the-HOP-name>", e.g. x_true_branch). */
    hop_status (*signature)(hop_call *c);
    /* Fills c->outs/nouts.  Base: the metadata of body 0's results. */
    hop_status (*output_meta)(hop_call *c);

    /* Answers a call without tracing, e.g. from a cache: sets c->reuse,
     * c->passed and c->outs.  Base: does nothing (always trace). */
    hop_status (*lookup)(hop_call *c);
    /* Runs after the call node is emitted (e.g. to fill a cache).  Base:
     * does nothing. */
    hop_status (*installed)(hop_call *c);

    /* Free for the class. */
    void *user_data;
};

/* The PrimHOP base: the defaults every slot inherits. */
const hop_hop_class *hop_prim_hop_base(void);

/*
 * The registry.  hop_register_hop validates cls (name is an identifier,
 * 1 <= nbodies <= HOP_MAX_BODIES, a prefix per body, resolvable slots) and
 * adds it: HOP_INVALID naming the problem, HOP_EXISTS for a duplicate name.
 * cls is borrowed and must outlive its registration.  The four built-ins are
 * registered on first use of the registry.
 */
hop_status hop_register_hop(const hop_hop_class *cls);
hop_status hop_unregister_hop(const char *name);
/* NULL (HOP_NOT_FOUND set) if there is none. */
const hop_hop_class *hop_find_hop(const char *name);
/* Registered names, sorted; returns how many there are (writes up to cap). */
size_t hop_list_hops(const char **names, size_t cap);

/*
 * Calls HOP cls in the current tracer of og over operands, with bodies.
 * On success one getitem node per output is appended to *outputs.  The caller
 * owns the list and clears it with hop_values_clear, also after an error (the
 * list then has its old length, but its array may have grown).  On error every
 * state is as before the call.
 */
hop_status hop_hop_call(hop_output_graph *og, const hop_hop_class *cls, const hop_arg *operands,
                        size_t noperands, const hop_body *bodies, size_t nbodies,
                        hop_values *outputs);

/* The built-in classes. */
extern const hop_hop_class hop_wrap_class;
extern const hop_hop_class hop_cond_class;
extern const hop_hop_class hop_map_class;
extern const hop_hop_class hop_invoke_subgraph_class;

/* wrap(body, *args): body(*args) with args lifted on first use. */
hop_status hop_wrap(hop_output_graph *og, hop_body body, const hop_arg *args, size_t nargs,
                    hop_values *outputs);
/*
 * cond(pred, true_fn, false_fn, operands): pred is a bool scalar tensor, a
 * SymBool (HOP_ARG_SYM) or a bool (HOP_ARG_BOOL).  A pred that is constant
 * runs the chosen branch inline, with no cond node.
 */
hop_status hop_cond(hop_output_graph *og, hop_arg pred, hop_body true_fn, hop_body false_fn,
                    const hop_arg *operands, size_t noperands, hop_values *outputs);
/* map(f, xs, *args): f over slices of the xs along dim 0, results stacked. */
hop_status hop_map(hop_output_graph *og, hop_body f, const hop_arg *xs, size_t nxs,
                   const hop_arg *args, size_t nargs, hop_values *outputs);
/*
 * invoke_subgraph(f, *args): the first call in a graph traces f into
 * subgraph_N; a later call in the same graph of the same f (fn and ud) with
 * matching argument metadata reuses it without tracing.
 */
hop_status hop_invoke_subgraph(hop_output_graph *og, hop_body f, const hop_arg *args, size_t nargs,
                               hop_values *outputs);

#ifdef __cplusplus
}
#endif
#endif /* HOP_PRIM_HOP_H */
