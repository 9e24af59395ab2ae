/*
 * hop/hop_impl.h - internals shared by the files of the HOP layer.
 */
#ifndef HOP_HOP_IMPL_H
#define HOP_HOP_IMPL_H

#include "core/core.h"
#include "hop/eval.h"
#include "hop/lowering.h"
#include "hop/prim_hop.h"

/* How deep a chain of base classes may be (a longer one is rejected). */
#define HOP__MAX_BASE_DEPTH 16

/* The base signature slot (one body, or merged bodies as for cond). */
hop_status hop__signature_merge(hop_call *c);
/* Steps 3-9 of a call (no checkpoint): for callers that run a HOP inside
 * another's protocol. */
hop_status hop__call_run(hop_call *c, hop_values *outputs);

#endif /* HOP_HOP_IMPL_H */
