/*
 * hop/rewrite.h - copying, inlining and rewriting graphs: the one engine
 * under every graph transformation (reverse and forward mode, vmap) and
 * every rule that builds a body from another.
 *
 * A rewrite walks a source graph and builds an out graph of the same
 * ShapeEnv, keeping a map from each source node to an entry: the node's copy
 * in out (when it was copied as it is) and, per value of the node (a call's
 * outputs; one value otherwise), the value of out that stands for it.  A
 * transformation keeps its own facts in the same entry: one more node per
 * value (aux: reverse mode's cotangent, forward mode's tangent), one bit per
 * value (flags: vmap's "batched") and one bit per node (mark: reverse mode's
 * "active").  The rewrite also owns the copies of the source's subgraphs
 * (one per subgraph however many calls use it), a memo of the transformed
 * bodies a transformation installs in out (one per body and key: a wrt mask,
 * a batch mask), the scratch list arrays of mapped arguments, and the
 * symbols replaced in everything it copies (hop_graph_inline binding a
 * body's unbacked symbols to the values passed for them).
 *
 * Ownership: the rewrite borrows both graphs and owns its map, memo and
 * scratch (hop_rewrite_clear frees them).  What it builds belongs to out.
 * Errors: NULL or a status with the error context set; out keeps what was
 * built before the error (the caller frees or drops it).
 */
#ifndef HOP_REWRITE_H
#define HOP_REWRITE_H

#include "hop/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One source node's entry.  The arrays have n items, zeroed when made. */
typedef struct hop_rewrite_entry {
    const hop_node *src; /* the source node */
    hop_node *copy;      /* its copy in out as it is (a call: the call node), or NULL */
    size_t n;            /* its values: a call's outputs, else 1 */
    hop_node **vals;     /* vals[i]: the value of out standing for value i, or NULL */
    hop_node **aux;      /* aux[i]: the transformation's node for value i, or NULL */
    bool *flags;         /* flags[i]: the transformation's bit for value i */
    bool mark;           /* the transformation's bit for the node */
} hop_rewrite_entry;

/* A memoised body: src's version in out under key (NULL: its plain copy). */
typedef struct hop_rewrite_memo {
    const hop_graph *src;
    hop_graph *dst;
    char *key;
} hop_rewrite_memo;

/* Read src, out and who; the rest is private (graph/rewrite.c). */
typedef struct hop_rewrite {
    const hop_graph *src;
    hop_graph *out;
    const char *who; /* names the transformation in errors: "autodiff", "vmap" */
    void *map;       /* the entries, a hash keyed by source node */
    hop_rewrite_memo *memos;
    size_t nmemos, memo_cap;
    hop_arg **scratch; /* list items of mapped arguments */
    size_t nscratch, scratch_cap;
    const hop_expr **from, **to; /* symbols replaced, from[k] by to[k] */
    size_t nsubs;
    bool own_subs;
} hop_rewrite;

/* Starts a rewrite of src into out (allocates nothing; never fails). */
void hop_rewrite_init(hop_rewrite *rw, const hop_graph *src, hop_graph *out, const char *who);
/* Frees what the rewrite owns; out and what was built in it stay. */
void hop_rewrite_clear(hop_rewrite *rw);

/*
 * The entries.
 * hop_rewrite_find   n's entry, or NULL.
 * hop_rewrite_add    a new entry for n (n must have none), its arrays
 *                    zeroed; NULL on HOP_NOMEM.
 * hop_rewrite_value  the value standing for value i of e's node: vals[i],
 *                    or, for a node copied as it is, its copy (a call: a
 *                    getitem of the copy, made on first use and kept in
 *                    vals[i]); NULL for i out of range or on error.
 */
hop_rewrite_entry *hop_rewrite_find(const hop_rewrite *rw, const hop_node *n);
hop_rewrite_entry *hop_rewrite_add(hop_rewrite *rw, const hop_node *n);
hop_node *hop_rewrite_value(hop_rewrite *rw, hop_rewrite_entry *e, size_t i);

/*
 * Copying.
 * hop_rewrite_map_arg   argument a of a source node as an argument of out:
 *                       a node its value 0 (HOP_MISUSE naming it when it has
 *                       none yet), a subgraph its copy (hop_rewrite_subgraph),
 *                       a list item by item (into scratch memory, freed by
 *                       hop_rewrite_scratch_clear), a symbol with the
 *                       rewrite's replacements, anything else as it is.
 * hop_rewrite_map_args  every argument of n into args (room for n->nargs).
 * hop_rewrite_copy      copies source node n into out as it is (arguments
 *                       mapped, metadata with the replacements; a getitem is
 *                       the value of its call's entry), named as n where the
 *                       name is free, and records it in e (NULL: a new
 *                       entry).  Returns the entry; NULL on error.
 * hop_rewrite_subgraph  the copy of source subgraph g installed in out under
 *                       g's name (or g's name with a suffix when a graph made
 *                       before took it), made once.
 */
hop_status hop_rewrite_map_arg(hop_rewrite *rw, const hop_arg *a, hop_arg *out);
hop_status hop_rewrite_map_args(hop_rewrite *rw, const hop_node *n, hop_arg *args);
void hop_rewrite_scratch_clear(hop_rewrite *rw);
hop_rewrite_entry *hop_rewrite_copy(hop_rewrite *rw, const hop_node *n, hop_rewrite_entry *e);
hop_graph *hop_rewrite_subgraph(hop_rewrite *rw, const hop_graph *g);

/*
 * The memo of transformed bodies.  hop_rewrite_memo_find: the graph
 * installed for (src, key), or NULL.  hop_rewrite_memo_add records dst as
 * src's version under key (copied; NULL for src's plain copy): HOP_NOMEM.
 */
hop_graph *hop_rewrite_memo_find(const hop_rewrite *rw, const hop_graph *src, const char *key);
hop_status hop_rewrite_memo_add(hop_rewrite *rw, const hop_graph *src, const char *key,
                                hop_graph *dst);

/*
 * Emits the call's HOP again in out: its leads and lists mapped
 * (hop_rewrite_map_arg), its first nbodies bodies replaced by bodies[] and
 * the others dropped, extra[nextra] appended to its last list, outputs
 * outs[nouts].  For the rules of HOPs that run one of their bodies on what
 * they pass (hop_vjp_bodies, hop_batch_bodies).  NULL on error (what
 * hop_graph_call_hop returns; HOP_MISUSE when the call passes no list).
 */
hop_node *hop_rewrite_call(hop_rewrite *rw, const hop_node *call, hop_graph *const *bodies,
                           size_t nbodies, hop_node *const *extra, size_t nextra,
                           const hop_value_info *outs, size_t nouts);

/*
 * Whole graphs.
 * hop_graph_copy_guards  adds src's guards to dst.
 * hop_graph_copy         dst (empty) becomes a copy of src: guards,
 *                        placeholders, nodes, subgraphs, output; names and
 *                        metadata as src's.
 * hop_graph_copy_into    a copy of src installed as a subgraph of parent,
 *                        named as src (with a suffix where the name is
 *                        taken); NULL on error (nothing installed).
 * hop_graph_inline       copies the nodes of src into dst (a graph of the
 *                        same ShapeEnv, being built) with src's placeholders
 *                        bound to inputs[src->nplaceholders] (nodes of dst);
 *                        the subgraphs src's calls use are copied into dst.
 *                        Binding a placeholder binds its unbacked symbols: a
 *                        SymInt placeholder's symbol, and each size of a
 *                        tensor placeholder that is a plain unbacked symbol,
 *                        are replaced in every copied size and argument by
 *                        the input's expression (the first binding of a
 *                        symbol wins).  Backed symbols (input sizes) stay.
 *                        The caller vouches for the ranges src assumed of
 *                        them (hop_shape_env_constrain a fresh unbacked
 *                        symbol first).  outputs (room for src's output
 *                        count) gets the values standing for src's outputs
 *                        (NULL for an output that is not a node).  For rules
 *                        that build a body from another (a loop's backward
 *                        body around the body's vjp graph).  Errors: what
 *                        the builders return (dst keeps what was copied so
 *                        far); HOP_MISUSE for bad arguments.
 */
hop_status hop_graph_copy_guards(const hop_graph *src, hop_graph *dst);
hop_status hop_graph_copy(const hop_graph *src, hop_graph *dst);
hop_graph *hop_graph_copy_into(hop_graph *parent, const hop_graph *src);
hop_status hop_graph_inline(hop_graph *dst, const hop_graph *src, hop_node *const *inputs,
                            hop_node **outputs);

#ifdef __cplusplus
}
#endif
#endif /* HOP_REWRITE_H */
