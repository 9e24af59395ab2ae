/*
 * hop/saved.h - saving a traced program to bytes and loading it back.
 *
 * The saved format (docs/SAVED_FORMAT.md) keeps a whole OutputGraph: the
 * ShapeEnv's symbols (with their hints and value ranges) and guards, the root
 * graph and its nested subgraphs with every node, metadata and guard, each
 * subgraph's capture table (what each of its placeholders stands for in the
 * parent graph, and why a lifted symbol was lifted), the lift notes of
 * hop/lifts.h, the root inputs' sources, the values of captured tensors
 * (constants) and named byte sections for upper layers (the Python package
 * keeps its argument structure there).  A loaded program prints exactly as
 * the saved one (code, table, DOT) and lowers to a plan that computes the
 * same results.
 *
 * The file is versioned and ends with a CRC-32 of everything before it, so a
 * flipped byte or a truncation is HOP_FORMAT.  The loader trusts nothing:
 * every count is checked against the bytes left before anything is
 * allocated, every reference points backwards or into a table already read,
 * expressions are rebuilt through the ShapeEnv's constructors and must come
 * out as saved, ops are checked by shape inference, and the result must
 * verify (hop_graph_verify).  A hostile file is HOP_FORMAT, never a crash, an
 * allocation larger than a small multiple of the file, or code executed.
 * Little-endian hosts only (the raw tensor data is in host order).
 */
#ifndef HOP_SAVED_H
#define HOP_SAVED_H

/* The build checks the layering: a layer may include this header only if
 * it links the output_graph layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_OUTPUT_GRAPH)
#error "hop/saved.h belongs to the output_graph layer, which this layer does not link"
#endif

#include "hop/output_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this library writes and reads. */
#define HOP_SAVED_VERSION 2

/* A tensor's value: dtype, sizes and numel * hop_dtype_size(dtype) bytes of
 * C-contiguous data in host (little-endian) order.  Plain value. */
typedef struct hop_saved_tensor {
    hop_dtype dtype;
    int rank;
    int64_t sizes[HOP_MAX_RANK];
    const void *data;
} hop_saved_tensor;

/* A named byte string for an upper layer; hop never reads it.  The name is
 * at most 255 bytes. */
typedef struct hop_saved_section {
    const char *name;
    const void *data;
    size_t size;
} hop_saved_section;

typedef struct hop_save_options {
    /* The value of each captured root input (HOP_SOURCE_CAPTURE), in root
     * input order: exactly one per capture (HOP_INVALID otherwise). */
    const hop_saved_tensor *captures;
    size_t ncaptures;
    const hop_saved_section *sections;
    size_t nsections;
} hop_save_options;

/*
 * Saves og, which must be complete (its root has an output node and only
 * the root tracer is on the stack: HOP_MISUSE otherwise), into a new buffer
 * *data of *size bytes that the caller frees with hop_free.  opts may be NULL
 * when og captured nothing.  Errors: HOP_MISUSE, HOP_INVALID (a wrong
 * capture count or value, a section name too long), HOP_VERIFY (og does not
 * verify: hop_graph_verify_changed), HOP_UNSUPPORTED (a graph that the format cannot express,
 * named), HOP_NOMEM.  og is not changed.
 */
hop_status hop_output_graph_save(const hop_output_graph *og, const hop_save_options *opts,
                                 void **data, size_t *size);

typedef struct hop_load_options {
    /* How each call_hop's class is found from its saved name: pass
     * hop_find_hop (hop/prim_hop.h), the registry.  A name it does not know
     * (NULL) fails the load with HOP_NOT_FOUND naming the HOP, so a program
     * that calls a HOP of a library (hop_load_library) loads only after that
     * library; with no find_hop every call_hop is HOP_NOT_FOUND. */
    const hop_class *(*find_hop)(const char *name);
    /* The identity (hop_source.identity) of each captured root input, made
     * from its saved value, e.g. a new tensor holding a copy.  NULL (error
     * context set) fails the load, after which release(ud, identity) is
     * called for every identity made so far.  Without capture, a captured
     * input's identity is its hop_saved_tensor in the result. */
    const void *(*capture)(void *ud, size_t index, const hop_saved_tensor *value);
    void (*release)(void *ud, const void *identity);
    void *ud;
} hop_load_options;

/* A loaded program.  Everything belongs to it (hop_saved_free). */
typedef struct hop_saved {
    hop_output_graph *og;       /* set to NULL to keep it (then free it yourself) */
    hop_saved_tensor *captures; /* data points into the hop_saved */
    size_t ncaptures;
    hop_saved_section *sections;
    size_t nsections;
} hop_saved;

/*
 * Loads a program saved by hop_output_graph_save.  NULL on error: HOP_FORMAT
 * with a message naming what is wrong and where (a bad magic number or
 * version, a checksum mismatch, a truncated record, a reference out of
 * range, metadata that does not match its op, a graph that does not
 * verify); HOP_NOT_FOUND for a HOP that is not registered; HOP_NOMEM.
 * data is borrowed; opts is required (find_hop).
 */
hop_saved *hop_output_graph_load(const void *data, size_t size, const hop_load_options *opts);
/* Frees s, its og unless taken, and its captures and sections.  NULL is a
 * no-op.  The release callback is not called: identities made by the
 * capture callback belong to the caller. */
void hop_saved_free(hop_saved *s);

#ifdef __cplusplus
}
#endif
#endif /* HOP_SAVED_H */
