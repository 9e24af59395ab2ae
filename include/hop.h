/*
 * hop.h - the umbrella header of the hop C library.
 */
#ifndef HOP_H
#define HOP_H

#include "hop/core.h"
#include "hop/ops.h"
#include "hop/graph.h"
#include "hop/rewrite.h"
#include "hop/layout.h"
#include "hop/tracer.h"
#include "hop/output_graph.h"
#include "hop/lifts.h"
#include "hop/saved.h"
#include "hop/runtime.h"
#include "hop/plan.h"
#include "hop/foreign.h"
#include "hop/lowering.h"
#include "hop/class.h"
#include "hop/prim_hop.h"
#include "hop/eval.h"
#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/loop_kit.h"

#define HOP_VERSION_MAJOR 0
#define HOP_VERSION_MINOR 1
#define HOP_VERSION_PATCH 0
#define HOP_VERSION "0.1.0"

#endif /* HOP_H */
