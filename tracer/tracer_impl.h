/*
 * tracer/tracer_impl.h - the SubgraphTracer's private layout and tables.
 * Nothing outside tracer/ includes it: the OutputGraph uses the interface of
 * tracer/tracer_owner.h.
 */
#ifndef HOP_TRACER_IMPL_H
#define HOP_TRACER_IMPL_H

#include "core/core.h"
#include "core/logindex.h"
#include "tracer/tracer_owner.h"

/*
 * A pointer -> value table whose additions can be undone newest first: the
 * tracer's two tables (below) are one of these each, a log with an index
 * (core/logindex.h) in creation order, indexed as it grows, which
 * hop__tracer_rollback truncates.  Most bodies lift a handful of values, so
 * most tables are the log alone: a uthash table per tracer table cost ~600
 * bytes (32 buckets and its header) plus 56 bytes an entry, a tenth of a
 * 100-node body.
 */
typedef struct hop__memo_entry {
    const void *key;
    hop_node *value;
} hop__memo_entry;

enum { HOP__TRACER_SMALL = 4 };

typedef struct hop__memo {
    hop__logindex log;
    /* The first HOP__TRACER_SMALL entries, in the tracer itself: a body
     * lifts a handful of values, and a malloc and a free for its table were
     * ~300 instructions of every HOP call's body (issue #30). */
    hop__memo_entry small[HOP__TRACER_SMALL];
} hop__memo;

/*
 * The journal of an OutputGraph's tracers (one, made with the root tracer
 * and shared by its descendants): while a scope is open
 * (hop__tracer_scope_begin), the first change to a tracer since the
 * innermost scope began records the tracer's mark first, so a scope's
 * rollback undoes exactly the tracers that changed, newest entry first.
 * Opening a scope costs O(1) however deep the stack is, where marking every
 * tracer on it cost O(depth) a HOP call and a lifting op (issue #30).
 */
typedef struct hop__journal_entry {
    hop_tracer *t;
    uint64_t prev; /* t->touched before this entry */
    hop__tracer_mark mark;
} hop__journal_entry;

typedef struct hop__journal {
    hop__journal_entry *items; /* small, NULL or a block (as a hop__memo's log) */
    size_t n, cap;
    size_t scopes;    /* open scopes */
    uint64_t gen;     /* the innermost open scope's number (0: none) */
    uint64_t last;    /* the last number given to a scope */
    size_t rollbacks; /* hop_tracer_rollbacks: scopes rolled back, in all */
    /* The first entries: a HOP call or a lifting op opens a scope, and one
     * whose changes touch a few tracers made a malloc and a free for them. */
    hop__journal_entry small[HOP__TRACER_SMALL];
} hop__journal;

typedef struct hop__lifted {
    hop_node *placeholder, *source, *cause;
} hop__lifted;

struct hop_tracer {
    hop_graph *graph;
    hop_tracer *parent;
    int depth;
    hop_tracer_state state;
    void *owner; /* the OutputGraph that made it */
    /* One way to reach a placeholder of this tracer: keyed by the outer
     * value it stands for (the original value and the parent's value both
     * get an entry). */
    hop__memo lifts;
    hop__memo syms; /* symbol -> the value in this tracer that yields it */
    /* The lifted placeholders in creation order, each with the parent's
     * value passed for it and (hop_tracer_lifted_cause, for a lifted
     * symbol) the parent's tensor whose shape brought it in (NULL when the
     * symbol itself was used): one record
     * each, one array (three arrays were three allocations a body). */
    hop__lifted *lifted; /* lifted_small until it outgrows it (as hop__memo) */
    size_t nlifted, lifted_cap;
    hop__lifted lifted_small[HOP__TRACER_SMALL];
    /* `cause` is the tensor whose shape's symbols are being bound; the
     * hook (hop_tracer_set_lift_hook) is inherited by children. */
    hop_node *cause;
    hop_lift_hook hook;
    void *hook_ud;
    hop__journal *journal; /* the root's, shared */
    uint64_t touched;      /* journal->gen when its mark was last journaled */
};

#endif /* HOP_TRACER_IMPL_H */
