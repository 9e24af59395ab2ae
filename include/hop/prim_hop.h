/*
 * hop/prim_hop.h - tracing a HOP: the PrimHOP base and its call protocol,
 * the registry, the accessors of a call by parameter name, and the built-in
 * HOPs' C entry points.
 *
 * A HOP is a `const hop_class` (hop/class.h: the signature and every slot).
 * hop_apply runs the protocol every HOP shares:
 *
 *   1. checkpoint the OutputGraph (every failure below restores it exactly);
 *   2. bind the arguments to the signature (leads, one list per group);
 *   3. check the operands                                 (slot check_operands)
 *      - which may pick a body to run inline (c->inline_body: cond with a
 *        constant pred), traced straight into the caller with no call node;
 *   4. per body: push a tracer, create its explicit inputs (slot body_inputs),
 *      run the body callback, lift what it returns, pop; place the guards its
 *      tracing recorded (guard_mode);
 *   5. check the bodies' outputs against each other      (slot check_outputs)
 *   6. give the bodies one signature and build the values the call passes
 *      (slot signature: base = explicit operands then lifted values; cond
 *      merges its branches' lifted inputs)
 *   7. install each body as a subgraph named "<prefix>_<N>"
 *   8. compute the output metadata                       (slot output_meta)
 *   9. emit one call_hop node (hop/class.h gives its layout) in the parent
 *      and one getitem per output.
 *
 * (Slot lookup may answer steps 4-8 from a cache; slot installed runs last.)
 *
 * Bodies are C callbacks with user data; whatever outer values they use are
 * lifted automatically (hop/tracer.h).
 */
#ifndef HOP_PRIM_HOP_H
#define HOP_PRIM_HOP_H

/* The build checks the layering: a layer may include this header only if
 * it links the hop layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_HOP)
#error "hop/prim_hop.h belongs to the hop layer, which this layer does not link"
#endif

#include "hop/class.h"
#include "hop/output_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/*
 * One HOP call in flight, passed to every tracing slot.  Slots read what is
 * above their step and fill what their step owns; read the arguments with
 * hop_call_param / hop_call_group.
 */
struct hop_call {
    const hop_class *cls;
    hop_output_graph *og;
    hop_tracer *parent;      /* the tracer the call is recorded in */
    const hop_param *params; /* cls's signature (inherited ones resolved) */
    size_t nparams;
    /* The leading arguments of the call node (INT..VALUE params, in order),
     * as given; check_operands may replace one (cond lifts its pred). */
    hop_arg lead[HOP_MAX_PARAMS];
    size_t nlead;
    /* Every group's values in order (what the bodies get), and where each
     * group starts: group g is operands[group_start[g] .. group_start[g+1]). */
    hop_node **operands;
    size_t noperands;
    size_t group_start[HOP_MAX_PARAMS + 1];
    size_t ngroups;
    const hop_body *bodies;
    size_t nbodies;
    /* check_operands: run this body inline instead of making a call node
     * (-1: no).  Its outputs become the call's, lifted into the caller. */
    int inline_body;
    /* Explicit inputs of every body (body_inputs): metadata and names, the
     * class's made inputs first, then one per operand. */
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
    /* The call's results (one getitem per output), once emitted. */
    hop_values *outputs;
    /* Set by a class that answers a call without tracing (invoke_subgraph's
     * cache): the installed subgraphs to call instead. */
    hop_graph *reuse[HOP_MAX_BODIES];
};

/*
 * The PrimHOP base: the defaults every slot inherits.
 *   check_operands  every group value is a tensor or SymInt of a tracer
 *                   enclosing the caller, in the same OutputGraph;
 *   body_inputs     (explicit mode) room for the made inputs (the class
 *                   fills them), then one input per operand with its
 *                   metadata and name (a SymInt carry: a fresh unbacked
 *                   symbol);
 *   check_outputs   nothing to compare;
 *   signature       explicit inputs, then lifted values in order of first
 *                   use; several bodies are merged as for cond (shared values
 *                   sorted by name, then those unique to each body in body
 *                   order, suffixed "_<prefix tail>_branch");
 *   output_meta     the metadata of body 0's results;
 *   lookup, installed  nothing;
 *   print           the generic form; lower hop_lower_default; eval
 *                   hop_eval_default.
 */
const hop_class *hop_prim_hop_base(void);

/*
 * Arguments by parameter name (HOP_MISUSE naming the HOP and the name when
 * the signature has no such parameter of that kind; NULL returned then).
 *
 * hop_call_param   a lead (INT..VALUE) of a call being traced (mutable: a
 *                  check_operands slot may replace it).
 * hop_call_group   the values of group `name` of a call being traced; *n
 *                  gets their count.  Returns a non-NULL pointer for an empty
 *                  group.
 * hop_node_param   a lead of a call_hop node.
 * hop_node_body    the subgraph of BODY parameter `name` of a call_hop node.
 * hop_node_bodies  the subgraph arguments (HOP_ARG_GRAPH) of BODY or BODIES
 *                  parameter `name` (a BODIES parameter's: every body the
 *                  call was given, in order); *n gets their count.
 * hop_node_group   the list of group `name` of a call_hop node: its items and
 *                  (in *n) their count.  The final VARARGS group includes the
 *                  lifted values; a HOP_INPUTS_LIFTED class's one group is
 *                  the merged signature.
 * hop_node_lifted  the lifted values of a call_hop node whose final group is
 *                  not VARARGS (their own list); none (n = 0) otherwise.
 * hop_node_passed  every value the node passes to its bodies, in body input
 *                  order (all groups, then the lifted list): *n gets the
 *                  count, items[i] the i-th.  Fills up to cap items and
 *                  returns the count (call with cap 0 to size an array).
 */
hop_arg *hop_call_param(hop_call *c, const char *name);
hop_node *const *hop_call_group(const hop_call *c, const char *name, size_t *n);
const hop_arg *hop_node_param(const hop_node *call, const char *name);
const hop_graph *hop_node_body(const hop_node *call, const char *name);
const hop_arg *hop_node_bodies(const hop_node *call, const char *name, size_t *n);
const hop_arg *hop_node_group(const hop_node *call, const char *name, size_t *n);
const hop_arg *hop_node_lifted(const hop_node *call, size_t *n);
size_t hop_node_passed(const hop_node *call, const hop_arg **items, size_t cap);

/* ------------------------------------------------------------ registry */

/*
 * hop_register_hop validates cls (name and parameter names are identifiers,
 * the signature is well formed: 1..HOP_MAX_BODIES bodies each with a prefix,
 * VARARGS only last, at most one group in lifted mode; modes in range; the
 * base chain acyclic) and adds it: HOP_INVALID naming the problem, HOP_EXISTS
 * for a duplicate name.  cls is borrowed and must outlive its registration.
 * The built-ins are registered on first use of the registry.
 */
hop_status hop_register_hop(const hop_class *cls);
hop_status hop_unregister_hop(const char *name);
/* NULL (HOP_NOT_FOUND set) if there is none. */
const hop_class *hop_find_hop(const char *name);
/* Registered names, sorted; returns how many there are (writes up to cap). */
size_t hop_list_hops(const char **names, size_t cap);

/*
 * A library of HOPs loaded at run time (a shared object that Python's
 * hop.load_library opens) declares itself with a descriptor, the one symbol
 * the loader reads:
 *
 *     static hop_status
 *     my_init(void)
 *     {
 *         return hop_register_hop(&my_class);
 *     }
 *
 *     HOP_LIBRARY(my_init);
 *
 * HOP_LIBRARY defines the exported constant `hop_library`: a magic number,
 * the hop ABI version the library was compiled against (HOP_ABI_VERSION of
 * the headers it included) and its init function, which registers the
 * library's HOPs (and foreign kernels) and returns HOP_OK, like a SQLite
 * extension's sqlite3_extension_init.  The version changes whenever a change
 * of the public headers (a slot of hop_class, a field of hop_call, an enum)
 * makes a library compiled against the old ones misread the new ones.
 * Version 3 added the reach slot, version 2 the verify slot; version 1 was every hop before
 * descriptors, whose libraries exported a bare function hop_library_init.
 */
#define HOP_ABI_VERSION 3
#define HOP_LIBRARY_MAGIC 0x4c504f48u /* "HOPL" in little-endian bytes */
#define HOP_LIBRARY_SYMBOL "hop_library"

typedef hop_status (*hop_library_init_fn)(void);

typedef struct hop_library_descriptor {
    uint32_t magic;       /* HOP_LIBRARY_MAGIC */
    uint32_t abi_version; /* HOP_ABI_VERSION the library was compiled against */
    hop_library_init_fn init;
} hop_library_descriptor;

#ifdef __cplusplus
#define HOP__LIBRARY_LINKAGE extern "C"
#else
#define HOP__LIBRARY_LINKAGE
#endif
#define HOP_LIBRARY(init_fn)                                                                       \
    HOP__LIBRARY_LINKAGE __attribute__((visibility("default"), used))                              \
    const hop_library_descriptor hop_library = {HOP_LIBRARY_MAGIC, HOP_ABI_VERSION, (init_fn)}

/*
 * Loads the shared library at path (dlopen), checks its descriptor and runs
 * its init, which registers its HOPs; the library's hop_* symbols resolve
 * against the hop that calls this (a copy linked into a program or a Python
 * extension is made visible to it first).  Stores up to cap of the names of
 * the HOPs it registered in names (borrowed from the classes) and their
 * count in *n.  Loading a library a second time runs nothing and reports its
 * names again.  An init may load other libraries (its dependencies: each is
 * loaded once, and stays loaded if the init then fails); one that loads its
 * own library is HOP_INVALID.  A library is never unloaded once its init
 * succeeded.
 *
 * Errors: HOP_NOT_FOUND (no such file, or the loader's message);
 * HOP_INVALID naming the library when it has no descriptor (a library built
 * for ABI version 1, or no library of HOPs), one that is not a descriptor
 * (not an object of that size, another magic number, no init) or one for
 * another ABI version (naming both versions); or what the init returned.  A
 * failed init leaves no trace: every HOP and foreign kernel it registered
 * is unregistered (their names may be registered again) before the library
 * is unloaded.
 */
hop_status hop_load_library(const char *path, const char **names, size_t cap, size_t *n);

/* --------------------------------------------------------------- calls */

/*
 * Calls HOP cls in the current tracer of og.  args follow the signature: the
 * leads in order (an INT param takes a HOP_ARG_INT, ...; a VALUE param a
 * node, a SymInt/SymBool expression or a bool), then one HOP_ARG_LIST of
 * HOP_ARG_NODE values per group, in order; bodies one per BODY parameter.
 * On success one getitem node per output is appended to *outputs.  The
 * caller owns the list and clears it with hop_values_clear, also after an
 * error (the list then has its old length, but its array may have grown).
 * On error every state is as before the call: HOP_INVALID for arguments
 * that do not fit the signature (naming the parameter), or what a slot or
 * body returned.
 */
hop_status hop_apply(hop_output_graph *og, const hop_class *cls, const hop_arg *args, size_t nargs,
                     const hop_body *bodies, size_t nbodies, hop_values *outputs);

/* A foreign kernel (hop/foreign.h). */
typedef struct hop_foreign hop_foreign;

/*
 * Records a call of foreign kernel f in tracer t: checks the operands
 * against f's signature (hop_foreign_check_operands: the messages of
 * hop_foreign_call, with the tensors' symbolic metadata), lifts free values
 * as hop_tracer_call_op does, adds one call_foreign node and one getitem
 * per in-out parameter, appended to *outs (the caller owns the list, as for
 * hop_apply).  Tensor operands are nodes; scalars are HOP_ARG_INT/FLOAT/
 * BOOL, HOP_ARG_SYM, or SymInt/SymBool nodes.  On error every state is as
 * before the call.
 */
hop_status hop_tracer_call_foreign(hop_tracer *t, const hop_foreign *f, const hop_arg *args,
                                   size_t nargs, hop_values *outs);

/*
 * An installed slot (a loop's, switch's): binds, in the caller, the unbacked
 * symbols of the call's SymInt outputs (a fresh one per SymInt carry).
 * The other helpers of loop HOPs (carry checks, the carry-evaluation loop,
 * loop autodiff) are the loop kit: hop/loop_kit.h.
 */
hop_status hop_call_bind_outputs(hop_call *c);

/*
 * For a HOP that transforms what it traced (vjp, jvp: hop/autodiff.h), in
 * its signature slot (after the base's): replaces body b's graph with one
 * that build(ud, traced, out) writes into an empty graph out, named after
 * the traced one plus suffix (`vjp_body_0_bwd`); out must keep the traced
 * graph's inputs, in the order of the values the call passes.  The
 * OutputGraph owns out (the protocol's undo drops it like a traced body).
 * hop_call_body_output_meta, the output_meta slot of such a HOP, then sets
 * c->outs from body 0's graph's output (HOP_INVALID when an output is not
 * a value of the graph).
 */
typedef hop_status (*hop_body_builder)(void *ud, const hop_graph *traced, hop_graph *out);
hop_status hop_call_replace_body(hop_call *c, size_t b, const char *suffix, hop_body_builder build,
                                 void *ud);
/*
 * The same, and the traced graph stays, appended as one more body after the
 * call's others (vmap keeps f on one example next to its batched body, so
 * that an outer vmap can batch f once over both batches).  HOP_MISUSE when
 * the call has HOP_MAX_BODIES bodies already.
 */
hop_status hop_call_replace_body_keep(hop_call *c, size_t b, const char *suffix,
                                      hop_body_builder build, void *ud);
hop_status hop_call_body_output_meta(hop_call *c);

/* The built-in classes. */
extern const hop_class hop_wrap_class;
extern const hop_class hop_cond_class;
extern const hop_class hop_map_class;
extern const hop_class hop_invoke_subgraph_class;
extern const hop_class hop_while_loop_class;
extern const hop_class hop_fori_loop_class;
extern const hop_class hop_scan_class;
extern const hop_class hop_switch_class;
extern const hop_class hop_associative_scan_class;
extern const hop_class hop_vjp_class;  /* hop/vjp.c: reverse mode (hop/autodiff.h) */
extern const hop_class hop_jvp_class;  /* hop/jvp.c: forward mode */
extern const hop_class hop_vmap_class; /* hop/vmap.c: batching (hop/batching.h) */

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
