/*
 * hop/graph.h - the graph IR: graphs of nodes with metadata, nested subgraphs,
 * the verifier, dead-code elimination and the printers.
 *
 * A graph owns an arena: its nodes, names, argument arrays and metadata live
 * and die with it, and it owns the subgraphs installed in it.  Expressions in
 * metadata are borrowed from the graph's hop_shape_env, which must outlive it.
 * Node and graph structs are readable; change them only through this API.
 */
#ifndef HOP_GRAPH_H
#define HOP_GRAPH_H

#include "hop/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_graph hop_graph;
typedef struct hop_node hop_node;

typedef enum hop_node_kind {
    HOP_NODE_PLACEHOLDER,
    HOP_NODE_CALL_OP,
    HOP_NODE_CALL_HOP,
    HOP_NODE_GETITEM,
    HOP_NODE_OUTPUT,
} hop_node_kind;

/* "placeholder", "call_op", "call_hop", "getitem", "output". */
const char *hop_node_kind_name(hop_node_kind k);

typedef enum hop_arg_kind {
    HOP_ARG_NONE,
    HOP_ARG_NODE,  /* a value defined by a node of the same graph */
    HOP_ARG_INT,
    HOP_ARG_FLOAT,
    HOP_ARG_BOOL,
    HOP_ARG_SYM,   /* a SymInt/SymBool expression (constants fold to INT) */
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

/* A use of a node by another node (one record per argument slot). */
typedef struct hop_use {
    hop_node *user;
    struct hop_use *next;
} hop_use;

struct hop_node {
    hop_node_kind kind;
    const char *name;   /* unique in its graph */
    hop_graph *graph;   /* the owner */
    hop_op op;          /* HOP_NODE_CALL_OP */
    const char *target; /* op name, HOP name ("cond"), "getitem" or "output" */
    hop_arg *args;      /* owned by the graph (deep copy of what was passed) */
    size_t nargs;
    hop_value_info meta;      /* the value; NONE for output and multi-output call_hop */
    hop_value_info *outs;     /* call_hop: the metadata of each output */
    size_t nouts;
    hop_use *uses;            /* who reads this node */
    size_t nuses;
    hop_node *prev, *next;    /* program order */
    void *user_data;          /* free for upper layers (the tracer) */
};

struct hop_graph {
    const char *name;      /* "forward", "cond_true_0", ... */
    hop_graph *parent;     /* the graph that owns this one, or NULL */
    hop_shape_env *env;    /* borrowed */
    hop_node *first, *last;
    size_t nnodes;
    size_t nplaceholders;
    hop_node *output;      /* the output node, once added */
    hop_graph **subgraphs; /* owned, in installation order */
    size_t nsubgraphs;
    /* private */
    size_t subgraph_cap;
    void *names;           /* name table */
    void *arena;
};

/* A new empty graph.  NULL on out-of-memory.  env is borrowed. */
hop_graph *hop_graph_new(hop_shape_env *env, const char *name);
/* Frees g, every node, and every subgraph it owns.  NULL is a no-op.  Misuse
 * to free a graph that is installed in a parent (free the parent). */
void hop_graph_free(hop_graph *g);

/*
 * Adds a placeholder.  `name` is uniquified (`x`, `x_1`, ...).  With
 * hop_graph_insert_placeholder it goes at placeholder position pos (0 = first,
 * nplaceholders = after the last); hop_graph_placeholder appends.  meta must be
 * a tensor or a SymInt (HOP_INVALID otherwise).  NULL on error.
 */
hop_node *hop_graph_placeholder(hop_graph *g, const char *name, const hop_value_info *meta);
hop_node *hop_graph_insert_placeholder(hop_graph *g, size_t pos, const char *name,
                                       const hop_value_info *meta);
/* The pos-th placeholder, or NULL. */
hop_node *hop_graph_placeholder_at(const hop_graph *g, size_t pos);

/*
 * Records op over args (deep-copied) after running shape inference; the node
 * is named after the op (`add`, `add_1`, ...).  Every HOP_ARG_NODE must belong
 * to g (HOP_MISUSE otherwise, naming both graphs).  NULL on error, with g
 * unchanged.
 */
hop_node *hop_graph_call_op(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs);

/*
 * Records a call of the HOP `target` (e.g. "cond").  args may include
 * HOP_ARG_GRAPH references, which must be subgraphs owned by g.  By
 * convention the values passed to the subgraphs are the last argument, a
 * HOP_ARG_LIST.  outs describe the nouts results; the node's own meta is
 * outs[0] when nouts == 1 and NONE otherwise.  Named after target.  NULL on
 * error, with g unchanged.
 */
hop_node *hop_graph_call_hop(hop_graph *g, const char *target, const hop_arg *args, size_t nargs,
                             const hop_value_info *outs, size_t nouts);

/* The index-th result of a call_hop; named `getitem`, `getitem_1`, ... */
hop_node *hop_graph_getitem(hop_graph *g, hop_node *call, size_t index);

/* The output node (at most one per graph, always last): returns values. */
hop_node *hop_graph_output(hop_graph *g, const hop_arg *values, size_t n);

/*
 * Installs child (a graph with no parent, using the same env) as a subgraph of
 * parent, which takes ownership.  child's name must be unique among parent's
 * subgraphs (HOP_EXISTS).  HOP_MISUSE for a child that has a parent already.
 */
hop_status hop_graph_add_subgraph(hop_graph *parent, hop_graph *child);
/* Removes child from parent without freeing it (the caller owns it again). */
hop_status hop_graph_remove_subgraph(hop_graph *parent, hop_graph *child);
/* A direct subgraph by name, or NULL. */
hop_graph *hop_graph_find_subgraph(const hop_graph *g, const char *name);

/* Looks a node up by name, or NULL. */
hop_node *hop_graph_find_node(const hop_graph *g, const char *name);

/* Removes a node that has no users (HOP_MISUSE otherwise). */
hop_status hop_graph_erase_node(hop_graph *g, hop_node *n);
/*
 * Dead-code elimination: removes call_op, call_hop and getitem nodes whose
 * values nobody uses (placeholders and the output stay), and frees subgraphs
 * no remaining call refers to.  Not recursive into subgraphs (their
 * signatures are fixed by their callers).  Returns the number of nodes removed.
 */
size_t hop_graph_dce(hop_graph *g);

/*
 * The verifier.  HOP_VERIFY with a message naming the graph and the node for:
 * a node using a value defined later or in another graph; a subgraph argument
 * not owned by the graph; a call_hop whose subgraph signature does not match
 * (placeholder count and value kinds/dtypes against the final list argument;
 * output count against nouts); a missing or misplaced output node; duplicate
 * names.  Checks subgraphs recursively.
 */
hop_status hop_graph_verify(const hop_graph *g);

/*
 * Printers.  Each returns a new string (free with hop_free), or NULL on
 * out-of-memory.
 *   code:  Python-like source with annotations and nested subgraphs, e.g.
 *            def forward(s0: "Sym(s0)", x: "f32[s0, 4]"):
 *                add: "f32[s0, 4]" = add(x, 1)
 *                return (add,)
 *   table: one row per node: opcode, name, target, args, meta
 *   dot:   Graphviz, one cluster per subgraph
 */
char *hop_graph_code(const hop_graph *g);
char *hop_graph_table(const hop_graph *g);
char *hop_graph_dot(const hop_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* HOP_GRAPH_H */
