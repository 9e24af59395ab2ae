/*
 * ops/infer.h - internals shared by the shape-inference files: the per-call
 * context, operand access with uniform error messages, dims, decisions and
 * broadcasting.  infer.c owns these helpers and the dispatch; each rule
 * function lives in infer_elem.c (elementwise, reductions, matmul),
 * infer_shape.c (views, cat/stack, factories, scalars) or infer_index.c
 * (scans, sorting, take); view.c owns view geometry (hop_view_of) and gives
 * the view rules their dim moves.
 */
#ifndef HOP_OPS_INFER_H
#define HOP_OPS_INFER_H

#include "core/core.h"
#include "hop/ops.h"

/* One hop_op_infer call. */
typedef struct hop__infer {
    hop_shape_env *env;
    hop_op op;
    const char *name; /* the op's name: every message starts with it */
    const hop_operand *args;
    hop_value_info *out; /* a local of hop_op_infer, copied out on success */
} hop__infer;

/* Text for messages, truncated rather than allocated so that describing an
 * error can never fail. */
typedef struct hop__text {
    char s[320];
} hop__text;

const char *hop__meta_text(hop__text *t, const hop_meta *m);
const char *hop__expr_text(hop__text *t, const hop_expr *e);
/* `[2, s0]` */
const char *hop__sizes_text(hop__text *t, const hop_expr *const *sizes, int n);
/* An operand as a Python user would write it: `2`, `2.5`, `True`, `s0`,
 * `f32`, `[2, -1]`, `None`, or the tensor's metadata. */
const char *hop__operand_text(hop__text *t, const hop_operand *o);
/* "a tensor", "an int", "None", ... */
const char *hop__kind_text(hop_operand_kind k);

/*
 * Operand access.  Each returns HOP_OK, or HOP_INVALID with the message
 * "<op>: argument <i> must be <what>, got <kind>".
 */
hop_status hop__kind_error(hop__infer *c, size_t i, const char *what);
hop_status hop__arg_tensor(hop__infer *c, size_t i, const hop_meta **out);
hop_status hop__arg_int(hop__infer *c, size_t i, int64_t *out);
hop_status hop__arg_bool(hop__infer *c, size_t i, bool *out);
/* A DTYPE; with allow_none, NONE gives dflt. */
hop_status hop__arg_dtype(hop__infer *c, size_t i, bool allow_none, hop_dtype dflt, hop_dtype *out);
/* An INT or an integer SYM, as an expression (INT becomes a constant). */
hop_status hop__operand_symint(hop__infer *c, const hop_operand *o, const char *where,
                               const hop_expr **out);
/* Checks that a tensor operand's metadata is well formed (rank, dtype, sizes). */
hop_status hop__check_meta(hop__infer *c, size_t i, const hop_meta *m);

/* Wraps a Python-style dim into [0, rank): HOP_INVALID "<op>: dim <d> out of
 * range for <meta>" otherwise. */
hop_status hop__wrap_dim(hop__infer *c, int64_t d, int rank, const hop_meta *m, int *out);

/* After a sym constructor returned NULL: re-raises its error prefixed with
 * the op name (HOP_NOMEM stays HOP_NOMEM). */
hop_status hop__sym_failed(hop__infer *c);

/* Shorthands that check for NULL.  Each returns NULL after hop__sym_failed. */
const hop_expr *hop__const(hop__infer *c, int64_t v);
bool hop__is_const(const hop_expr *e, int64_t v);

/*
 * Decisions through the ShapeEnv with the op name as `what`: constant or
 * range-implied values need no guard, backed ones record a guard, unbacked
 * ones are HOP_DATA_DEPENDENT (message written by the ShapeEnv).
 */
hop_status hop__decide(hop__infer *c, const hop_expr *cond, bool *out);
hop_status hop__decide_eq(hop__infer *c, const hop_expr *a, const hop_expr *b, bool *out);
hop_status hop__decide_eq_int(hop__infer *c, const hop_expr *a, int64_t v, bool *out);
/* Like hop__decide, but a data-dependent condition is not an error: *known
 * is set false and the error context cleared. */
hop_status hop__try_decide(hop__infer *c, const hop_expr *cond, bool *known, bool *out);
/* Decides cond from constants and value ranges only (no guard, no hint):
 * *known false when they do not settle it.  Fails only when cond is NULL
 * (a constructor failed). */
hop_status hop__decide_static(hop__infer *c, const hop_expr *cond, bool *known, bool *out);
/* Of two sizes decided equal, the one to keep: a constant if there is one. */
const hop_expr *hop__pick_equal(const hop_expr *a, const hop_expr *b);

/*
 * Broadcasts two size lists (aligned at the right).  On a mismatch returns
 * HOP_OK with *mismatch set and no message: the caller names the operands.
 */
hop_status hop__broadcast_sizes(hop__infer *c, const hop_expr *const *a, int na,
                                const hop_expr *const *b, int nb, const hop_expr **out, int *nout,
                                bool *mismatch);

/* The dim moves of transpose, permute, unsqueeze, squeeze and select with
 * int parameters p[np] as hop_view_of takes them (ops/view.c): result dim k
 * is dim from[k] of a rank-`rank` input, or a new dim of size 1 (-1).
 * Returns the result's rank; -1 for a dim out of range (or another op), -2
 * for the wrong number of dims.  Never sets an error. */
int hop__view_dims(hop_op op, int rank, const int64_t *p, int np, int *from);

/* Sets the result to a tensor / a SymInt.  They cannot fail: each returns
 * HOP_OK, so that a rule ends `return hop__set_tensor(c, ...)`. */
hop_status hop__set_tensor(hop__infer *c, hop_dtype dtype, int rank, const hop_expr *const *sizes);
hop_status hop__set_sym(hop__infer *c, const hop_expr *e);

/* The rules. */
hop_status hop__infer_unary(hop__infer *c);
hop_status hop__infer_binary(hop__infer *c);
hop_status hop__infer_compare(hop__infer *c);
hop_status hop__infer_logical(hop__infer *c);
hop_status hop__infer_where(hop__infer *c);
hop_status hop__infer_reduce(hop__infer *c);
hop_status hop__infer_masked_sum(hop__infer *c);
hop_status hop__infer_argmax(hop__infer *c);
hop_status hop__infer_matmul(hop__infer *c);
hop_status hop__infer_reshape(hop__infer *c);
hop_status hop__infer_transpose(hop__infer *c);
hop_status hop__infer_permute(hop__infer *c);
hop_status hop__infer_unsqueeze(hop__infer *c);
hop_status hop__infer_squeeze(hop__infer *c);
hop_status hop__infer_expand(hop__infer *c);
hop_status hop__infer_select(hop__infer *c);
hop_status hop__infer_slice(hop__infer *c);
hop_status hop__infer_cat(hop__infer *c);
hop_status hop__infer_stack(hop__infer *c);
hop_status hop__infer_full(hop__infer *c);
hop_status hop__infer_arange(hop__infer *c);
hop_status hop__infer_item(hop__infer *c);
hop_status hop__infer_nonzero(hop__infer *c);
hop_status hop__infer_sym_size(hop__infer *c);
hop_status hop__infer_to(hop__infer *c);
hop_status hop__infer_bitcast(hop__infer *c);
hop_status hop__infer_clone(hop__infer *c);
hop_status hop__infer_scan(hop__infer *c);
hop_status hop__infer_sort(hop__infer *c);
hop_status hop__infer_take(hop__infer *c);
hop_status hop__infer_dynamic_slice(hop__infer *c);
hop_status hop__infer_dynamic_update_slice(hop__infer *c);
hop_status hop__infer_mask_gradient(hop__infer *c);
hop_status hop__infer_fail_if(hop__infer *c);
hop_status hop__infer_put(hop__infer *c);
hop_status hop__infer_searchsorted(hop__infer *c);
/* infer_complex.c: HOP_DTYPE when op refuses the complex operand among
 * args[0..nargs); the rule of real imag conj angle on x, the operand
 * hop__infer_unary has checked is a tensor. */
hop_status hop__complex_check(hop__infer *c, size_t nargs);
hop_status hop__infer_complex_part(hop__infer *c, const hop_meta *x);
/* infer_linalg.c: the linalg and fft ops. */
hop_status hop__infer_linalg(hop__infer *c);
hop_status hop__infer_fft(hop__infer *c);

#endif /* HOP_OPS_INFER_H */
