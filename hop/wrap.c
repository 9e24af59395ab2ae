/*
 * hop/wrap.c - wrap(body, *args): body(*args), traced into a subgraph
 * wrap_body_N with no free variables; its inputs are lifted on first use.
 *
 * Everything but the class is inherited: the PrimHOP base traces the one
 * body, lowers it inline (hop_lower_default) and evaluates it
 * (hop_eval_default).
 */
#include "hop/prim_hop.h"

const hop_class hop_wrap_class = {
    .name = "wrap",
    .params = {{"body", HOP_PARAM_BODY, "wrap_body"}, {"args", HOP_PARAM_VARARGS}},
    .doc = "wrap(body, *args): body(*args); under tracing body becomes a subgraph wrap_body_N "
           "whose free values are lifted into explicit inputs.",
    .input_mode = HOP_INPUTS_LIFTED,
};

hop_status
hop_wrap(hop_output_graph *og, hop_body body, const hop_arg *args, size_t nargs,
         hop_values *outputs)
{
    hop_arg list = hop_arg_list((hop_arg *)args, nargs);
    return hop_apply(og, &hop_wrap_class, &list, 1, &body, 1, outputs);
}
