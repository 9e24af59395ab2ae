/*
 * hop/hop_impl.h - internals shared by the files of the HOP layer.
 */
#ifndef HOP_HOP_IMPL_H
#define HOP_HOP_IMPL_H

#include "hop/prim_hop.h"
#include "core/core.h"

/* How deep a chain of base classes may be (a longer one is rejected). */
#define HOP__MAX_BASE_DEPTH 16

/* The input mode cls resolves to through its bases. */
hop_input_mode hop__input_mode(const hop_hop_class *cls);
/* The guard mode cls resolves to through its bases. */
hop_guard_mode hop__guard_mode(const hop_hop_class *cls);
/* The base signature slot (one body, or merged bodies as for cond). */
hop_status hop__signature_merge(hop_call *c);
/* Steps 2-8 of a call (no checkpoint): for callers that run a HOP inside
 * another's protocol. */
hop_status hop__call_run(hop_call *c, hop_values *outputs);

#endif /* HOP_HOP_IMPL_H */
