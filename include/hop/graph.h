/*
 * hop/graph.h - the graph IR: graphs of nodes with metadata, nested subgraphs,
 * the verifier, dead-code elimination and the printers.
 *
 * A graph owns an arena: its nodes, names, argument arrays and metadata live
 * and die with it, and it owns the subgraphs installed in it.  Expressions in
 * metadata are borrowed from the graph's hop_shape_env, which must outlive it.
 * Node and graph structs are readable; change them only through this API.
 *
 * Every builder is atomic: on any error (shape inference, out-of-memory,
 * misuse) it returns NULL or a status and the graph is exactly as before: no
 * node, no use, no name taken (a retried call gets the same name).
 *
 * Names.  Node names are identifiers, unique in their graph and distinct from
 * the names of its subgraphs.  A node asks for a base (the op or HOP name,
 * "getitem", "output", or a placeholder's name), sanitised into an identifier
 * (`x.y` -> `x_y`, `0a` -> `_0a`, a Python keyword `if` -> `if_`), and gets
 * the base if free, else `base_<k>` for the smallest free k >= 1.  Erasing a
 * node frees its name, so names depend only on the names taken now.
 */
#ifndef HOP_GRAPH_H
#define HOP_GRAPH_H

/* The build checks the layering: a layer may include this header only if
 * it links the graph layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_GRAPH)
#error "hop/graph.h belongs to the graph layer, which this layer does not link"
#endif

#include "hop/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_graph hop_graph;
typedef struct hop_node hop_node;
typedef struct hop_class hop_class; /* a HOP: hop/class.h */

typedef enum hop_node_kind {
    HOP_NODE_PLACEHOLDER,
    HOP_NODE_CALL_OP,
    HOP_NODE_CALL_HOP,
    HOP_NODE_GETITEM,
    HOP_NODE_OUTPUT,
    HOP_NODE_CALL_FOREIGN, /* a foreign C kernel (hop/foreign.h) */
} hop_node_kind;

/* "placeholder", "call_op", "call_hop", "getitem", "output", "call_foreign". */
const char *hop_node_kind_name(hop_node_kind k);

typedef enum hop_arg_kind {
    HOP_ARG_NONE,
    HOP_ARG_NODE, /* a value defined by a node of the same graph */
    HOP_ARG_INT,
    HOP_ARG_FLOAT,
    HOP_ARG_BOOL,
    HOP_ARG_SYM, /* a SymInt/SymBool expression (constants fold to INT) */
    HOP_ARG_DTYPE,
    HOP_ARG_LIST,
    HOP_ARG_GRAPH, /* a subgraph owned by the same graph */
} hop_arg_kind;

typedef struct hop_arg {
    hop_arg_kind kind;
    union {
        hop_node *node;
        int64_t i;
        double f;
        bool b;
        const hop_expr *sym;
        hop_dtype dtype;
        struct {
            struct hop_arg *items;
            size_t n;
        } list;
        hop_graph *graph;
    } u;
} hop_arg;

/* Argument constructors (plain values, nothing allocated). */
hop_arg hop_arg_node(hop_node *n);
hop_arg hop_arg_int(int64_t v);
hop_arg hop_arg_float(double v);
hop_arg hop_arg_bool(bool v);
hop_arg hop_arg_sym(const hop_expr *e);
hop_arg hop_arg_dtype(hop_dtype d);
hop_arg hop_arg_none(void);
hop_arg hop_arg_list(hop_arg *items, size_t n); /* items are copied when used */
hop_arg hop_arg_graph(hop_graph *g);

/* How many hop_arg a deep copy of args[n] takes: n plus the items of every
 * list at any depth. */
size_t hop_args_count(const hop_arg *args, size_t n);

/* Copies args[n] to out[n], the items of each list (at any depth) to *pool,
 * which it advances past them; *pool needs room for hop_args_count(args, n)
 * - n items.  Plain values and pointers are copied as they are (nodes,
 * expressions and graphs stay borrowed).  Returns out. */
hop_arg *hop_args_copy(hop_arg *out, const hop_arg *args, size_t n, hop_arg **pool);

/* A use of a node by another node (one record per argument slot). */
typedef struct hop_use {
    hop_node *user;
    struct hop_use *next;
} hop_use;

/*
 * A node is 96 bytes; its arguments and use records follow it in the same
 * arena block.  Its metadata is shared: `meta` points at an immutable value
 * info the graph keeps once per distinct value (nodes of equal shape and
 * dtype share one), so compare metadata with hop_meta_equal, not pointers.
 * The small fields are packed (kind, flags and op in one word; counts are 32
 * bits: a graph builder refuses more), and what a node calls is not stored
 * but derived: hop_node_target.
 */
struct hop_node {
    hop_node_kind kind : 8;
    unsigned flags : 8; /* HOP_NODE_SIDE_EFFECTS */
    hop_op op : 16;     /* HOP_NODE_CALL_OP; HOP_OP_COUNT for other kinds */
    uint32_t nargs;
    const char *name; /* unique in its graph */
    hop_graph *graph; /* the owner; NULL once erased (the memory stays valid) */
    hop_arg *args;    /* owned by the graph (deep copy of what was passed) */
    /* The value, never NULL: kind NONE for output and multi-output call_hop.
     * Owned by the graph, valid as long as the node's memory is. */
    const hop_value_info *meta;
    hop_value_info *outs; /* call_hop: the metadata of each output */
    uint32_t nouts;
    uint32_t nuses;
    hop_use *uses;         /* who reads this node, most recent user first */
    hop_node *prev, *next; /* program order */
    const hop_class *cls;  /* HOP_NODE_CALL_HOP: the HOP's class (borrowed); NULL
                              for other kinds */
    /* private (graph/names.c): the name table's chain link, its low bits a
     * tag (not a pointer to follow as it is) */
    hop_node *name_next;
};

/* What n calls, as printed code shows it: the op's name (call_op), the
 * HOP's name ("cond"), the foreign kernel's name, "getitem", "output", or a
 * placeholder's own name.  Valid as long as the node's memory is; NULL for a
 * NULL node. */
const char *hop_node_target(const hop_node *n);

/* The node has effects beyond its results (a foreign kernel that writes a
 * global, say): DCE keeps it, and so every call_hop whose subgraphs hold one. */
#define HOP_NODE_SIDE_EFFECTS 1u
/* The node may fail when the plan runs though no effect of it is seen
 * otherwise (a foreign kernel that returns int, has a check hook or a sized
 * pointer: hop_foreign_may_fail): DCE keeps it (hop_node_may_fail), since
 * eager raises there whether or not its results are used. */
#define HOP_NODE_MAY_FAIL 2u

/* Whether n has effects beyond its results: HOP_NODE_SIDE_EFFECTS on n, or
 * (a call_hop) on a node of a subgraph it calls, at any depth. */
bool hop_node_has_side_effects(const hop_node *n);

/* Whether running n may fail on the values it is given, so that it is a
 * check even where nothing uses its value (eagerly the same code raises or
 * warns): an op that checks its operands' values (hop_op_checks_values:
 * take, a linalg op, fail_if of an EFFECT kind; one of a VALUE kind only
 * vouches for the bits of a value nobody reads), a node with a SymInt
 * argument the plan evaluates when it runs and no guard has checked (one
 * that mentions an unbacked symbol: a size that may be negative, an index
 * that may be out of range; or a // or % by a non-constant, which may
 * divide by 0), a call_hop whose subgraphs hold such a node, at any
 * depth, a node flagged HOP_NODE_MAY_FAIL (a foreign kernel that can
 * refuse its data), or a call of a class flagged HOP_CLASS_MAY_NOT_END
 * (while_loop: a run that never ends is eager's hang).  DCE keeps such nodes, and so
 * does vmap (batching's mark_needed): a check is an effect. */
bool hop_node_may_fail(const hop_node *n);

struct hop_graph {
    const char *name;   /* "forward", "cond_true_0", ... */
    hop_graph *parent;  /* the graph that owns this one, or NULL */
    hop_shape_env *env; /* borrowed */
    hop_node *first, *last;
    size_t nnodes;
    size_t nplaceholders;
    hop_node *output;      /* the output node, once added */
    hop_graph **subgraphs; /* owned, in installation order */
    size_t nsubgraphs;
    void *user_data; /* free for upper layers (the tracer that builds it) */
    /* Conditions on size symbols this graph was traced under that hold only
     * when it runs (a cond branch's hint decisions): checked each time the
     * graph runs, before its first node, never on entry to the whole program.
     * SymBools of env, in order, without duplicates (hop_graph_add_guard). */
    const hop_expr **guards;
    size_t nguards;
    /* Called just before the graph is freed (by hop_graph_free, a parent's
     * free, or DCE), so an upper layer holding a pointer to it can forget it. */
    void (*free_hook)(hop_graph *g);
    hop_node *last_placeholder; /* the last placeholder, or NULL */
    /* private (graph/graph_impl.h): the graph is allocated together with its
     * name table; `arena` points at its memory, which graphs made by
     * hop_graph_new_sharing share */
    size_t subgraph_cap;
    void *arena;
};

/* True when s can name a node, a graph or a HOP in printed code: an
 * identifier ([A-Za-z_][A-Za-z0-9_]*) and no Python keyword.  False for
 * NULL.  Never fails. */
bool hop_name_is_identifier(const char *s);

/* A new empty graph.  NULL on out-of-memory, or HOP_MISUSE for a NULL env or
 * name.  env is borrowed.  The name is sanitised into an identifier like node
 * names (it prints as a function name). */
hop_graph *hop_graph_new(hop_shape_env *env, const char *name);
/* A new empty graph with g's env that allocates from g's memory: the memory
 * (and the metadata the graphs intern) is freed with the last graph sharing
 * it, so nodes of either stay valid whichever is freed first.  For the bodies
 * of a program built on one thread (the OutputGraph's tracers): a body then
 * pays no arena and no metadata of its own.  Not for graphs that different
 * threads build at once.  NULL on out-of-memory, or HOP_MISUSE for a NULL g
 * or name. */
hop_graph *hop_graph_new_sharing(hop_graph *g, const char *name);
/* Frees g, every node, and every subgraph it owns.  NULL is a no-op.  Misuse
 * to free a graph that is installed in a parent (free the parent). */
void hop_graph_free(hop_graph *g);

/*
 * Adds a placeholder.  `name` is uniquified (`x`, `x_1`, ...).  With
 * hop_graph_insert_placeholder it goes at placeholder position pos (0 = first,
 * nplaceholders = after the last); hop_graph_placeholder appends.  meta must be
 * a tensor or a SymInt (HOP_INVALID otherwise, and for a pos past the last
 * placeholder).  Placeholders always come first, in their order.  NULL on
 * error.
 */
hop_node *hop_graph_placeholder(hop_graph *g, const char *name, const hop_value_info *meta);
hop_node *hop_graph_insert_placeholder(hop_graph *g, size_t pos, const char *name,
                                       const hop_value_info *meta);
/* Moves placeholder ph to placeholder position pos (0 = first).  Uses, names
 * and metadata are unchanged.  HOP_MISUSE / HOP_INVALID on bad arguments. */
hop_status hop_graph_move_placeholder(hop_graph *g, hop_node *ph, size_t pos);
/* Erases the n placeholders from position pos (each must have no users:
 * HOP_MISUSE otherwise) and moves the last n placeholders into their place,
 * in order: the inputs a transformation made (appended last) taking the
 * place of inputs the traced function never read (vjp's cotangents, jvp's
 * tangents).  HOP_INVALID when the graph has fewer than pos + 2n
 * placeholders. */
hop_status hop_graph_replace_placeholders(hop_graph *g, size_t pos, size_t n);
/* Renames n to the unique name made from base (n keeps its name if base
 * uniquifies to it).  HOP_NOMEM leaves n's name as it was. */
hop_status hop_graph_rename_node(hop_graph *g, hop_node *n, const char *base);
/* The pos-th placeholder, or NULL (O(1) for the last one). */
hop_node *hop_graph_placeholder_at(const hop_graph *g, size_t pos);

/*
 * The operands shape inference reads for args[n] (hop_op_infer), into
 * out[n]: a node gives its tensor metadata or its SymInt/SymBool, a plain
 * value itself.  A list's items go to *pool (advanced past them; it needs
 * room for every item at any depth); with pool NULL a list is a
 * HOP_OPND_LIST without its items (items NULL, n its length), enough for
 * a check that refuses lists.  The operands borrow the nodes' metadata.
 * For whoever checks a call recorded in a graph without running it
 * (hop_graph_call_op, a foreign kernel's signature).  HOP_INVALID naming
 * who and the argument for a node with no single value; HOP_MISUSE for a
 * graph argument.
 */
hop_status hop_args_operands(const char *who, const hop_arg *args, size_t n, hop_operand *out,
                             hop_operand **pool);

/*
 * Records op over args (deep-copied) after running shape inference; the node
 * is named after the op (`add`, `add_1`, ...).  Every HOP_ARG_NODE must belong
 * to g (HOP_MISUSE otherwise, naming both graphs; also for an erased node, the
 * output node, a NULL pointer or a subgraph argument).  A node argument is a
 * TENSOR or SYM operand by its meta; one with no single value (a call_hop with
 * other than one output) is HOP_INVALID.  A SYM argument whose expression is
 * constant is stored as INT (BOOL for a SymBool).  Nodes other than
 * placeholders go before the output node when there is one.  NULL on error,
 * with g unchanged.
 */
hop_node *hop_graph_call_op(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs);
/*
 * hop_graph_call_op for chains of builders (a transformation's rules): a
 * NULL node among args, at any depth of a list, is an earlier builder's
 * failure, and the result is NULL with that builder's error kept; so a chain
 * of emits is checked once at its end.
 */
hop_node *hop_graph_emit(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs);
/*
 * HOP_EMIT(g, add, hop_arg_node(a), hop_arg_float(2.0)): hop_graph_emit of
 * HOP_OP_add over the arguments listed, counted from the list: the one
 * spelling of an emit for rules that chain them (autodiff's op rules, a
 * HOP's own rules).
 */
#define HOP_EMIT(g, op, ...)                                                                       \
    hop_graph_emit((g), HOP_OP_##op, (hop_arg[]){__VA_ARGS__},                                     \
                   sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

/*
 * hop_graph_call_op with the result's metadata given, for a graph loaded
 * from a saved program (hop/saved.h): the operands are checked by running
 * shape inference, whose result must agree with meta (the same value info,
 * where a size may differ from inference's when a guard the env recorded
 * before says they are equal, `s0 == 8`; for an op that makes unbacked
 * symbols, item and nonzero, the same kind, dtype and rank), and the node
 * gets meta.  Whatever inference added to the
 * env (unbacked symbols, guards) is taken back: meta's symbols and the
 * program's guards come from the saved program.  HOP_INVALID naming both
 * metadata when they disagree; otherwise the errors of hop_graph_call_op.
 */
hop_node *hop_graph_call_op_meta(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs,
                                 const hop_value_info *meta);

/*
 * Records a call of the HOP cls (its class, borrowed: it must outlive g).
 * args follow the layout hop/class.h gives: the leading arguments, one
 * HOP_ARG_GRAPH per body (subgraphs owned by g), then the lists of values
 * passed to the subgraphs (the verifier checks them, concatenated, against
 * the subgraphs' placeholders).  outs (each a tensor or a SymInt) describe
 * the nouts results and are copied; the node's own meta is outs[0] when
 * nouts == 1 and NONE otherwise.  cls->name must be an identifier
 * (HOP_INVALID otherwise; it prints as a function name); it is the node's
 * target (hop_node_target), and the node is named after it.  NULL on error,
 * with g unchanged.
 */
hop_node *hop_graph_call_hop(hop_graph *g, const hop_class *cls, const hop_arg *args, size_t nargs,
                             const hop_value_info *outs, size_t nouts);
/*
 * The values a call_hop node passes to its subgraphs, in the subgraphs'
 * placeholder order: its list arguments, concatenated.  Stores up to cap of
 * them in items (may be NULL when cap is 0) and returns how many there are.
 */
size_t hop_node_passed(const hop_node *call, const hop_arg **items, size_t cap);
/*
 * The subgraph arguments of a call_hop node, which stand together after its
 * leading arguments (the layout above): returns the first, *n their count
 * (the signature's bodies, and a body kept after them, as vmap keeps f),
 * so that the leads are the arguments before it.  A node with none (not a
 * call_hop): *n is 0, the pointer past its arguments (NULL for call NULL).
 * Borrowed.  For the rules that serve any class (a wrap-like HOP's bodies
 * differentiated or batched); a class's own rules read its bodies by
 * parameter name (hop_node_body, hop/prim_hop.h).
 */
const hop_arg *hop_node_graphs(const hop_node *call, size_t *n);
/*
 * How many leading placeholders of a call_hop's subgraphs the HOP makes
 * itself and passes no value for (its class's made_inputs, through its
 * bases: fori_loop's index); 0 for other nodes.
 */
size_t hop_node_made_inputs(const hop_node *call);
/*
 * What placeholder j of call's subgraphs stands for in call's graph: the
 * value call passes there (item j - made inputs of hop_node_passed), or NULL
 * for a placeholder the HOP makes itself and for j past the end.  Borrowed
 * from call.
 */
const hop_arg *hop_node_passed_to(const hop_node *call, size_t j);

/*
 * Records a call of the foreign kernel `target` (hop/foreign.h checks the
 * operands against the kernel's C signature; this layer does not know it).
 * args are plain operands (no subgraphs, HOP_MISUSE otherwise) and outs
 * (tensors only, HOP_INVALID otherwise) describe the nouts results, read
 * through getitem like a call_hop's; the node's meta is outs[0] when
 * nouts == 1.  flags may hold HOP_NODE_SIDE_EFFECTS and HOP_NODE_MAY_FAIL.  target must be an
 * identifier and is copied.  Named after target.  NULL on error, g unchanged.
 */
hop_node *hop_graph_call_foreign(hop_graph *g, const char *target, const hop_arg *args,
                                 size_t nargs, const hop_value_info *outs, size_t nouts,
                                 unsigned flags);

/* The index-th result of a call_hop or call_foreign of g, with meta
 * call->outs[index]; named `getitem`, `getitem_1`, ...  HOP_INVALID for a
 * call of another kind or index >= nouts; NULL on error. */
hop_node *hop_graph_getitem(hop_graph *g, hop_node *call, size_t index);

/* The output node (at most one per graph, always last; a second one is
 * HOP_MISUSE): returns values (copied as call_op args are; a node value must
 * have a single value, else HOP_INVALID).  NULL on error. */
hop_node *hop_graph_output(hop_graph *g, const hop_arg *values, size_t n);

/*
 * Installs child (a graph with no parent, using the same env) as a subgraph of
 * parent, which takes ownership.  child's name must be unique among parent's
 * subgraphs and node names (HOP_EXISTS).  HOP_MISUSE for a child that has a
 * parent already, that is parent or one of its ancestors, or that uses
 * another env.
 */
hop_status hop_graph_add_subgraph(hop_graph *parent, hop_graph *child);
/* Removes child from parent without freeing it (the caller owns it again).
 * HOP_MISUSE if child is not a subgraph of parent or a node of parent still
 * names it (erase the call first). */
hop_status hop_graph_remove_subgraph(hop_graph *parent, hop_graph *child);
/* A direct subgraph by name, or NULL. */
hop_graph *hop_graph_find_subgraph(const hop_graph *g, const char *name);
/* A new empty graph of g's env for installing in g, named base, or base_1,
 * base_2, ...: the first name free among g's subgraphs and nodes (names
 * longer than 255 bytes are cut).  NULL on error (HOP_NOMEM, HOP_MISUSE). */
hop_graph *hop_graph_new_subgraph(const hop_graph *g, const char *base);

/*
 * Adds the SymBool cond to g's guards: what g assumes about the sizes of the
 * program's inputs whenever it runs (see the guards field).  True and a guard
 * g has already are no-ops.  HOP_MISUSE for a NULL graph or condition or one
 * of another env; HOP_INVALID for a SymInt or False (it could never hold);
 * HOP_NOMEM.  On error g is unchanged.
 */
hop_status hop_graph_add_guard(hop_graph *g, const hop_expr *cond);

/* Looks a node up by name, or NULL. */
hop_node *hop_graph_find_node(const hop_graph *g, const char *name);

/* The nodes of g and of every graph installed under it, at any depth (0 for
 * NULL).  Cannot fail. */
size_t hop_graph_tree_nodes(const hop_graph *g);

/* Removes a node of g that has no users (HOP_MISUSE otherwise): unlinks it
 * from its arguments' use lists and frees its name.  Its memory stays valid
 * until g is freed, with n->graph == NULL. */
hop_status hop_graph_erase_node(hop_graph *g, hop_node *n);
/*
 * Dead-code elimination: removes call_op, call_hop, call_foreign and getitem
 * nodes whose values nobody uses (placeholders and the output stay), and frees
 * subgraphs no remaining call refers to.  Nodes with HOP_NODE_SIDE_EFFECTS
 * stay, and so does a call_hop whose subgraphs (at any depth) hold one, a
 * node that may fail (hop_node_may_fail: a run-time check, whose failure
 * eager code would raise), and a node whose value is an unbacked symbol
 * (item's u0: sizes and symbolic arguments may name it without using the
 * node).  Not recursive into subgraphs (their signatures are fixed by their
 * callers).
 * Returns the number of nodes removed.
 */
size_t hop_graph_dce(hop_graph *g);

/*
 * The verifier.  HOP_VERIFY with a message naming the graph and the node for:
 * a node using a value defined later or in another graph; a subgraph argument
 * not owned by the graph; a call_hop that is not a well-formed call of its
 * class (hop_graph_verify_call); a missing or misplaced output node;
 * duplicate names.  Checks subgraphs recursively, always in full.  A graph
 * that passes is stamped with its version (below), and so is each subgraph;
 * checking a subgraph alone clears the stamps of the graphs above it (their
 * calls were checked against the subgraph as it was).
 */
hop_status hop_graph_verify(const hop_graph *g);

/*
 * hop_graph_verify, skipped (HOP_OK, the error state untouched) when g and
 * every graph under it passed a hop_graph_verify and none changed since:
 * what hop_lower and hop_output_graph_save call, so a graph verified when
 * it was made (autodiff, vmap, load) is not walked again when it is lowered.
 * Skipped too for a graph that has an output node and has changed, since
 * it was made, only by hop_graph_placeholder,
 * hop_graph_insert_placeholder, hop_graph_call_op, hop_graph_call_op_meta,
 * hop_graph_emit, hop_graph_output and hop_graph_add_guard: each checks what
 * the verifier would check of what it adds, so such a graph (a traced
 * function without HOPs) is well formed by construction.  So are
 * hop_graph_add_subgraph, hop_graph_getitem and hop_graph_call_hop, the
 * last once hop_graph_verify_call passes on its node (before that, or once
 * a second call_hop is added before the first passed, the graph is walked),
 * while each subgraph is still the version its calls' checks saw and is
 * trusted in turn: a traced function with HOPs.  When g itself is
 * walked, each graph under it that either rule vouches for is skipped (a
 * traced HOP's bodies are mostly checked appends); g's calls of it are
 * still checked against it.
 *
 * A change is one made through this API (adding, erasing, renaming or
 * moving a node, an output, a guard, adding or removing a subgraph), which
 * bumps the graph's version (hop_graph_version, never 0 or UINT32_MAX; it
 * wraps past them after 2^32 - 2 changes).  Code that writes a graph's or a
 * node's fields directly must call hop_graph_touch on the graph afterwards,
 * or the next hop_graph_verify_changed may trust the old stamp or the
 * graph's construction; hop_graph_verify itself always checks.  hop_graph_version(NULL) is 0;
 * hop_graph_touch(NULL) does nothing.  A graph and its stamp belong to one thread at a time.
 */
hop_status hop_graph_verify_changed(const hop_graph *g);
uint32_t hop_graph_version(const hop_graph *g);
void hop_graph_touch(hop_graph *g);

/*
 * One call_hop node against its class, as hop_graph_verify checks each: its
 * arguments follow the signature (hop/class.h: each lead of its parameter's
 * kind, the bodies' subgraphs of call's graph, one list of values per
 * group); each body has made_inputs + one placeholder per passed value, of
 * its kind (and dtype); each returns body_nouts values; then the class's
 * verify slot (hop_verify_default when none of its chain sets one).  Not
 * recursive: the bodies' own nodes are not checked.  hop_apply runs it on
 * the node it emits.  HOP_VERIFY naming the graph, the node and the HOP.
 */
hop_status hop_graph_verify_call(const hop_node *call);

/*
 * The kit of a class's verify slot (hop/class.h).
 *
 * hop_verify_fail   HOP_VERIFY with `verify: <graph>: node <call> (<HOP>):
 *                   <message>`; returns HOP_VERIFY.
 * hop_verify_error  turns the error st the calling thread's context holds
 *                   (a check the class shares with its tracing, HOP_SHAPE
 *                   "scan: xs 0 ... has no dim 3") into that HOP_VERIFY,
 *                   keeping its message; HOP_OK for HOP_OK, and HOP_NOMEM
 *                   stays.
 * hop_verify_inputs   checks each body's inputs against the values call
 *                   passes: the placeholder of passed value j (after the
 *                   made inputs) must be hop_value_info_compatible with
 *                   *want, which starts as the passed value's metadata (an
 *                   int or SymInt argument: a SymInt, sym NULL for an int)
 *                   and which fn (NULL: none) may change, or return false to
 *                   skip the check (a slice: map's xs lose dim 0).  A value
 *                   of a CARRY group that is a SymInt needs a SymInt only
 *                   (the body's is fresh).
 * hop_verify_outputs  the same for each body's outputs: output i of body
 *                   b against the call's output i (for i below both
 *                   counts; the counts are checked already), which fn may
 *                   change or skip (map's outputs are stacked).
 * hop_verify_bodies   the bodies the signature takes (as many as
 *                   hop_class_takes_bodies allows), hop_verify_inputs with
 *                   in, and hop_verify_outputs with out (when out is NULL:
 *                   only for a class that does not set body_nouts, whose
 *                   bodies return the call's outputs).
 * hop_verify_default  the PrimHOP base's verify: hop_verify_bodies with no
 *                   fn.
 */
typedef bool (*hop_verify_meta_fn)(void *ud, const hop_node *call, size_t body, size_t index,
                                   hop_value_info *want);
hop_status hop_verify_fail(const hop_node *call, const char *fmt, ...) HOP_PRINTF(2, 3);
hop_status hop_verify_error(const hop_node *call, hop_status st);
hop_status hop_verify_inputs(const hop_node *call, hop_verify_meta_fn fn, void *ud);
hop_status hop_verify_outputs(const hop_node *call, hop_verify_meta_fn fn, void *ud);
hop_status hop_verify_bodies(const hop_node *call, hop_verify_meta_fn in, hop_verify_meta_fn out,
                             void *ud);
hop_status hop_verify_default(const hop_node *call);

/* How hop_arg_print writes a float: as Python's repr, the shortest text
 * that reads back to the same double (`2.0`, `0.1`: the graph printers), or
 * as C's %.17g, exact too (`2`, `0.10000000000000001`: plan dumps). */
typedef enum hop_float_style {
    HOP_FLOAT_REPR,
    HOP_FLOAT_G17,
} hop_float_style;

/*
 * The text of argument a as the printers write it: a node's or subgraph's
 * name, `2`, a float (style), `True`, a SymInt or SymBool expression
 * (hop_expr_print), a dtype (`f32`), `[a, 2]`, `None`.  The graph printers
 * and plan dumps (hop_plan_dump) print every argument through it.  snprintf
 * contract (hop_expr_print): writes at most cap bytes, NUL included, and
 * returns the length the full text needs.  Never fails; NULL prints `NULL`.
 */
size_t hop_arg_print(const hop_arg *a, hop_float_style style, char *buf, size_t cap);

/*
 * Printers.  Each returns a new string (free with hop_free), or NULL on
 * out-of-memory.
 *   code:  Python-like source with annotations and nested subgraphs, e.g.
 *            def forward(s0: "Sym(s0)", x: "f32[s0, 4]"):
 *                add: "f32[s0, 4]" = add(x, 1)
 *                return (add,)
 *   table: per graph a title, then one row per node with aligned columns
 *          opcode, name, target, args, meta; subgraphs follow, depth first
 *   dot:   Graphviz, one cluster per subgraph
 * A graph with guards prints them first: in code as the comment line
 * `# guards: s0 >= 4, s1 == 3` right under its def line, in the table as a
 * `guards: ...` line under its title, in DOT in its cluster's label.
 * graph/print.c documents each format; tests/c/test_printer.c locks them.
 */
char *hop_graph_code(const hop_graph *g);
char *hop_graph_table(const hop_graph *g);
char *hop_graph_dot(const hop_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* HOP_GRAPH_H */
