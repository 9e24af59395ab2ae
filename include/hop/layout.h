/*
 * hop/layout.h - the inputs of a call's bodies by name, and building a call
 * together with its bodies by name: the body-graph side of the call node's
 * layout (hop/class.h), for rules that read a body and build new ones.
 *
 * Every body of a call_hop takes the same inputs, in this order (the
 * placeholders of its graph):
 *
 *   made     the inputs the HOP makes itself and passes no value for
 *            (fori_loop's index i: its class's made_inputs);
 *   groups   one per value of each VALUES/CARRY/VARARGS parameter, in
 *            signature order, named after the parameter ("init", "xs");
 *   lifted   the values the bodies lifted, when they have their own list
 *            (the final group is not VARARGS: there they are the group's
 *            tail; a HOP_INPUTS_LIFTED class's one group is its bodies'
 *            merged signature and has no lifted span).
 *
 * A layout names these spans, so a rule says "the carries" where it would
 * otherwise compute `i < nc ? ... : i < nc + nx ? ...`:
 *
 *     hop_layout l;
 *     hop_layout_of(call, &l);
 *     hop_span c = hop_layout_span(&l, "init");
 *     for (size_t j = 0; j < c.n; j++)
 *         use(hop_graph_placeholder_at(f, c.at + j), hop_node_passed_to(call, c.at + j));
 *
 * A builder (hop_build) makes a call of a class in a graph together with
 * the bodies it builds: each input is added by group name, with the value
 * the call passes for it and one placeholder in every body being built at
 * the end of that group, so bodies and operands always agree and the
 * placeholders of several groups may be added in any order.
 */
#ifndef HOP_LAYOUT_H
#define HOP_LAYOUT_H

#include "hop/class.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Placeholders at .. at + n - 1 of a body. */
typedef struct hop_span {
    size_t at, n;
} hop_span;

/* The span names that are not parameter names. */
#define HOP_SPAN_MADE "made"
#define HOP_SPAN_LIFTED "lifted"

typedef struct hop_layout {
    size_t n;      /* inputs in all */
    size_t nspans; /* made, the groups, lifted */
    const char *names[HOP_MAX_PARAMS + 2];
    hop_span spans[HOP_MAX_PARAMS + 2];
} hop_layout;

/*
 * The layout of call's bodies, from its class's signature and its lists.
 * HOP_MISUSE for a node that is not a call_hop, HOP_VERIFY for one whose
 * lists do not follow its signature (the verifier checks every graph's).
 */
hop_status hop_layout_of(const hop_node *call, hop_layout *l);
/*
 * The span of a name: "made", a group parameter's name, or "lifted".  A
 * name the layout does not have gives an empty span at its end and sets
 * HOP_MISUSE naming it (a typo in a rule is found by its first test).
 */
hop_span hop_layout_span(const hop_layout *l, const char *name);

/* ---------------------------------------------------------------- builder */

typedef struct hop_build hop_build;

/*
 * A new builder of a call of cls in g (cls borrowed; g must outlive the
 * builder).  NULL on HOP_NOMEM.
 *
 * hop_build_body      a new empty graph for BODY parameter `param` (for a
 *                     BODIES parameter: one more body), named `name` (or
 *                     name_1, ...: free among g's subgraphs and nodes when
 *                     made), which the builder owns until the call is
 *                     emitted; inputs added afterwards get a placeholder in
 *                     it.  NULL on error.
 * hop_build_use_body  a body made elsewhere, already a subgraph of g
 *                     (hop_batch_body's, say): the builder adds nothing to
 *                     it; its inputs must follow the call's layout.
 * hop_build_keep_body one more body after the signature's, which the call
 *                     keeps and never runs (vmap keeps f on one example
 *                     after its batched body: hop_node_graphs lists it
 *                     last), already a subgraph of g; the builder adds
 *                     nothing to it.  HOP_MISUSE when one is kept already
 *                     or the call has HOP_MAX_BODIES bodies.
 * hop_build_lead      the value of lead parameter `param`.
 * hop_build_made      one made input: a placeholder at the end of the made
 *                     span of every body being built; returns the first
 *                     body's.
 * hop_build_input     operand v passed in group `group` ("lifted": the
 *                     lifted list) and a placeholder named `name` with
 *                     metadata meta at the end of that group in every body
 *                     being built; returns the first body's (NULL on error,
 *                     or with no body being built).
 * hop_build_operand   operand v passed in group `group`, no placeholder (for
 *                     bodies made elsewhere).
 * hop_build_operands  hop_build_operand of ops[j] for every input j of
 *                     layout l (a call's: the same groups) outside its made
 *                     span, each into the group of its span: a call like
 *                     the one l was read from, with other values.
 * hop_build_passed    the same for vals[j], the value passed to input
 *                     made + j (hop_node_passed's order: l's made span has
 *                     no value), each any argument a call passes (a node,
 *                     a constant); borrowed, copied into the call.
 * hop_build_span      the span of a name in the bodies as built so far.
 * hop_build_output    appends v (a node of the body) to the output list of
 *                     the body being built for `param` (the k-th of a BODIES
 *                     parameter: use hop_build_body's graph with
 *                     hop_build_output_of).
 * hop_build_emit      installs every body being built (each with an output
 *                     node made from its output list) and records the call
 *                     with outputs outs[nouts]; returns the call node.  The
 *                     builder is freed, on error too (then the bodies it
 *                     built are freed and g is as it was, but for the bodies
 *                     it was given).  HOP_MISUSE for a lead or a body not
 *                     given; what the graph builders return.
 * hop_build_free      abandons a builder: frees it and the bodies it built.
 *
 * Errors name the class and the parameter (HOP_MISUSE for a name the
 * signature does not have or of another kind); a failed step leaves the
 * builder usable only for hop_build_free.
 */
hop_build *hop_build_new(hop_graph *g, const hop_class *cls);
hop_graph *hop_build_body(hop_build *b, const char *param, const char *name);
hop_status hop_build_use_body(hop_build *b, const char *param, hop_graph *body);
hop_status hop_build_keep_body(hop_build *b, hop_graph *body);
hop_status hop_build_lead(hop_build *b, const char *param, hop_arg v);
hop_node *hop_build_made(hop_build *b, const char *name, const hop_value_info *meta);
hop_node *hop_build_input(hop_build *b, const char *group, hop_node *v, const char *name,
                          const hop_value_info *meta);
hop_status hop_build_operand(hop_build *b, const char *group, hop_node *v);
hop_status hop_build_operands(hop_build *b, const hop_layout *l, hop_node *const *ops);
hop_status hop_build_passed(hop_build *b, const hop_layout *l, const hop_arg *vals);
hop_span hop_build_span(const hop_build *b, const char *name);
hop_status hop_build_output(hop_build *b, const char *param, hop_node *v);
hop_status hop_build_output_of(hop_build *b, hop_graph *body, hop_node *v);
hop_node *hop_build_emit(hop_build *b, const hop_value_info *outs, size_t nouts);
void hop_build_free(hop_build *b);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LAYOUT_H */
