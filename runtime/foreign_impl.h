/*
 * runtime/foreign_impl.h - the parsed C signatures and foreign kernels that
 * runtime/foreign.c owns, shared with lowering/foreign.c (plans call kernels
 * and exports build closures from the same parsed signatures).  The only
 * header that includes ffi.h: libffi stays out of the public API.
 */
#ifndef HOP_FOREIGN_IMPL_H
#define HOP_FOREIGN_IMPL_H

#include "core/core.h"
#include "hop/foreign.h"

#include <ffi.h>
#include <stdatomic.h>

/* A pointer's size expression (`x[n * k]`) as a postfix program over the
 * integer parameters; its text is hop_foreign_param.size. */
enum { HOP__SIZE_MAXOPS = 32 };
typedef enum hop__size_opk {
    HOP__SZ_NUM,
    HOP__SZ_PARAM,
    HOP__SZ_ADD,
    HOP__SZ_SUB,
    HOP__SZ_MUL
} hop__size_opk;
typedef struct hop__size_op {
    hop__size_opk kind;
    int64_t v; /* the number, or the parameter's index */
} hop__size_op;
typedef struct hop__size {
    size_t nops;
    hop__size_op ops[HOP__SIZE_MAXOPS];
} hop__size;

/* A parsed prototype with its libffi call interface. */
typedef struct hop__sig {
    hop__arena arena; /* names and text */
    const char *name; /* the function's */
    bool returns_int; /* int / int32_t, else void */
    size_t nparams;
    hop_foreign_param params[HOP_FOREIGN_MAX_PARAMS];
    int columns[HOP_FOREIGN_MAX_PARAMS];            /* where each parameter starts (1-based) */
    const char *text;                               /* canonical spelling */
    const hop__size *sizes[HOP_FOREIGN_MAX_PARAMS]; /* per pointer with a size, else NULL */
    bool sized;                                     /* any size at all */
    ffi_cif cif;
    ffi_type *types[HOP_FOREIGN_MAX_PARAMS];
} hop__sig;

/* Parses signature into *sig (caller-owned memory; free with hop__sig_clear
 * on success).  who prefixes messages ("foreign signature").  HOP_INVALID
 * naming the column, HOP_UNSUPPORTED when libffi refuses, HOP_NOMEM. */
hop_status hop__sig_parse(const char *who, const char *signature, hop__sig *sig);
void hop__sig_clear(hop__sig *sig);
/* Refuses parameter i's operand when its size expression (if any) exceeds
 * numel or overflows: HOP_SHAPE naming the parameter, the size and desc (the
 * operand's text, "f32[4]").  ints[k] is the value of integer parameter k
 * (others are not read).  Calls, plans and tracing share it: one message. */
hop_status hop__sig_check_size(const hop__sig *sig, size_t i, const int64_t *ints, int64_t numel,
                               const char *desc);
/* Which parameters parameter i's size reads: bit k for parameter k. */
uint32_t hop__sig_size_uses(const hop__sig *sig, size_t i);
/* `const float *x` or `const float x[n]` for parameter i, into buf (cap bytes). */
const char *hop__param_text(const hop__sig *sig, size_t i, char *buf, size_t cap);
/* The C spelling of a dtype: bool, int32_t, int64_t, float, double. */
const char *hop__ctype_name(hop_dtype d);

struct hop_foreign {
    hop__sig sig;
    void *fn;
    hop_foreign_options opts;
    size_t noutputs;
    atomic_long refs; /* the registry's and every plan's that calls it */
};

/* The kernel registered under name with one more reference (NULL and
 * HOP_NOT_FOUND if none), so that an unregister cannot free it under you. */
hop_foreign *hop__foreign_acquire(const char *name);
void hop__foreign_release(hop_foreign *f);

#endif /* HOP_FOREIGN_IMPL_H */
