/*
 * hop/ops.h - dtypes, symbolic integers, the ShapeEnv, tensor metadata and the
 * op table with shape inference.
 *
 * Symbolic expressions (SymInt and SymBool) are immutable, interned values
 * owned by one hop_shape_env: two expressions are structurally equal exactly
 * when their pointers are equal.  They live until the env is freed.
 */
#ifndef HOP_OPS_H
#define HOP_OPS_H

/* The build checks the layering: a layer may include this header only if
 * it links the ops layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_OPS)
#error "hop/ops.h belongs to the ops layer, which this layer does not link"
#endif

#include "hop/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dtypes */

/* X(ENUM, name, C type, byte size, kind) with kind 0 bool, 1 signed integer,
 * 2 float, 3 unsigned integer, 4 complex.  f16 is IEEE binary16, stored as
 * its bits (uint16_t); kernels compute on it in f32 and round each result
 * back, as NumPy does.  c64 and c128 are C's float/double _Complex (NumPy's
 * complex64/complex128: the real part, then the imaginary one).  The order is
 * the enum's, not a promotion order; new dtypes go last, since saved graphs
 * store the enum's values. */
#define HOP_DTYPE_LIST(X)                                                                          \
    X(BOOL, "bool", bool, 1, 0)                                                                    \
    X(I8, "i8", int8_t, 1, 1)                                                                      \
    X(U8, "u8", uint8_t, 1, 3)                                                                     \
    X(I16, "i16", int16_t, 2, 1)                                                                   \
    X(I32, "i32", int32_t, 4, 1)                                                                   \
    X(I64, "i64", int64_t, 8, 1)                                                                   \
    X(U64, "u64", uint64_t, 8, 3)                                                                  \
    X(F16, "f16", uint16_t, 2, 2)                                                                  \
    X(F32, "f32", float, 4, 2)                                                                     \
    X(F64, "f64", double, 8, 2)                                                                    \
    X(C64, "c64", float _Complex, 8, 4)                                                            \
    X(C128, "c128", double _Complex, 16, 4)                                                        \
    X(U16, "u16", uint16_t, 2, 3)                                                                  \
    X(U32, "u32", uint32_t, 4, 3)

typedef enum hop_dtype {
#define HOP__DTYPE_ENUM(e, name, ctype, size, kind) HOP_##e,
    HOP_DTYPE_LIST(HOP__DTYPE_ENUM)
#undef HOP__DTYPE_ENUM
        HOP_DTYPE_COUNT
} hop_dtype;

/* "f32"; "?" for an invalid dtype. */
const char *hop_dtype_name(hop_dtype d);
/* Bytes per element; 0 for an invalid dtype. */
size_t hop_dtype_size(hop_dtype d);
bool hop_dtype_is_float(hop_dtype d);    /* f16, f32, f64 */
bool hop_dtype_is_int(hop_dtype d);      /* signed and unsigned integers (not bool) */
bool hop_dtype_is_unsigned(hop_dtype d); /* u8, u16, u32, u64 */
bool hop_dtype_is_complex(hop_dtype d);  /* c64, c128 */
bool hop_dtype_is_inexact(hop_dtype d);  /* float or complex: what autodiff differentiates */
/* The dtype of a complex dtype's parts (c64: f32, c128: f64); d itself for
 * any other dtype. */
hop_dtype hop_dtype_real(hop_dtype d);
/* The complex dtype whose parts have dtype d (f64: c128; c64 and c128 stay;
 * every other dtype: c64). */
hop_dtype hop_dtype_complex(hop_dtype d);
/* Parses "f32", "float32", "i64", "int64", "u8", "uint8", "bool", ...;
 * HOP_INVALID if unknown. */
hop_status hop_dtype_from_name(const char *name, hop_dtype *out);
/*
 * Promotion of two tensor dtypes, PyTorch's for tensors of equal rank: bool
 * is below every other dtype, a float dtype beats any integer one (i64 with
 * f16 is f16), and of two of one kind the wider wins.  A signed and an
 * unsigned integer give the narrowest signed type that holds both (u8 with
 * i8 is i16, u8 with i32 is i32), and u64 with a signed type gives f64, as
 * NumPy does (PyTorch has no answer there).  A complex dtype beats every
 * other one; with a float its parts are the wider of the two (c64 with f64
 * is c128, as NumPy and PyTorch give), with an integer or bool it stays.  An
 * invalid operand is returned as is.
 */
hop_dtype hop_dtype_promote(hop_dtype a, hop_dtype b);

/* IEEE binary16 conversions, rounding to nearest even (overflow gives inf,
 * nan stays nan); from double directly, without a double rounding through
 * float.  Never fail.  To float16 raises FE_OVERFLOW for a finite value
 * that becomes inf and FE_UNDERFLOW for an inexact subnormal or zero, as
 * NumPy's conversions do (its float16 loops warn by those flags). */
float hop_f16_to_float(uint16_t h);
uint16_t hop_f16_from_float(float f);
uint16_t hop_f16_from_double(double d);

/* ------------------------------------------------------ symbolic integers */

typedef struct hop_shape_env hop_shape_env;
typedef struct hop_expr hop_expr;

/*
 * Expression kinds.  SymInt expressions are kept in a canonical form: a sum of
 * terms coef * monomial plus a constant, where a monomial is a product of
 * atoms (symbols and the FLOORDIV/MOD/MAX/MIN nodes) with positive exponents.
 * A sum with no terms is a CONST; a sum 1*m with no constant is the monomial m
 * itself; a monomial of one atom with exponent 1 is the atom itself.  So
 * `2*s0 == s0*2` and `(s0 + 1) - 1 == s0` as pointers, and products
 * distribute over sums: (s0 + 1)*(s0 + 1) is `s0**2 + 2*s0 + 1`.
 * FLOORDIV/MOD by a constant keep a positive divisor and pull out what divides
 * ((2*s0 + s1)//2 is `s0 + s1//2`); MAX/MIN are n-ary, flattened and sorted.
 * SymBool expressions are TRUE/FALSE constants, relations, AND/OR/NOT.  A
 * relation a REL b is stored as P REL N where P - N + c is (a - b) divided by
 * the gcd of its coefficients, P/N hold the terms with positive/negative
 * coefficient and the constant sits where it is positive, or alone opposite
 * the terms: so `s0 > 4` is LT(4, s0), the same pointer as `4 < s0` and
 * `2*s0 > 8`; GT/GE build LT/LE with swapped sides.  NOT of a relation is the
 * negated relation (~(s0 > 4) is `s0 <= 4`); AND/OR are n-ary, flattened,
 * sorted, and fold constants and x & ~x.
 */
typedef enum hop_expr_kind {
    HOP_EXPR_CONST,    /* integer constant */
    HOP_EXPR_SYMBOL,   /* s0 (backed) or u0 (unbacked) */
    HOP_EXPR_ADD,      /* constant + sum of coef * monomial, >= 1 term */
    HOP_EXPR_MUL,      /* product of atoms with exponents, coefficient 1 */
    HOP_EXPR_FLOORDIV, /* a // b, rounding toward -inf */
    HOP_EXPR_MOD,      /* a % b, sign of b (Python) */
    HOP_EXPR_MAX,
    HOP_EXPR_MIN,
    HOP_EXPR_TRUE,
    HOP_EXPR_FALSE,
    HOP_EXPR_EQ, /* relations compare two SymInts */
    HOP_EXPR_NE,
    HOP_EXPR_LT,
    HOP_EXPR_LE,
    HOP_EXPR_AND,
    HOP_EXPR_OR,
    HOP_EXPR_NOT,
} hop_expr_kind;

/* A new, empty ShapeEnv.  NULL on out-of-memory.  Free with hop_shape_env_free. */
hop_shape_env *hop_shape_env_new(void);
/* Frees the env and every expression it interned.  NULL is a no-op. */
void hop_shape_env_free(hop_shape_env *env);

/*
 * Constructors.  Each returns the interned, canonical expression, or NULL with
 * the error context set: HOP_NOMEM; HOP_MISUSE for a NULL operand or one from
 * another env (or a NULL env); HOP_INVALID for an int operand given where a
 * bool is expected or vice versa; HOP_INVALID for a constant division or
 * modulo by zero.  Besides the algebra, the value ranges of symbols simplify
 * MAX/MIN/FLOORDIV/MOD: Max(s0, 1) is s0 for a backed s0 (>= 2), (s0 % 3) % 5
 * is s0 % 3.  Relations fold only when constant, never by ranges (that is
 * hop_shape_env_decide's job).
 * Constant folding is exact (overflow of int64 is HOP_INVALID).
 * Results are borrowed from env.
 */
const hop_expr *hop_sym_const(hop_shape_env *env, int64_t v);
const hop_expr *hop_sym_add(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_sub(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_mul(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_neg(hop_shape_env *env, const hop_expr *a);
const hop_expr *hop_sym_floordiv(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_mod(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_max(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_min(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
/* a + c, a * c for an integer constant c: shorthands used everywhere. */
const hop_expr *hop_sym_add_int(hop_shape_env *env, const hop_expr *a, int64_t c);
const hop_expr *hop_sym_mul_int(hop_shape_env *env, const hop_expr *a, int64_t c);

const hop_expr *hop_sym_bool(hop_shape_env *env, bool v);
const hop_expr *hop_sym_eq(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_ne(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_lt(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_le(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_gt(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_ge(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_and(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_or(hop_shape_env *env, const hop_expr *a, const hop_expr *b);
const hop_expr *hop_sym_not(hop_shape_env *env, const hop_expr *a);

/* Inspection.  Never fail. */
hop_expr_kind hop_expr_kind_of(const hop_expr *e);
bool hop_expr_is_bool(const hop_expr *e);
/* True (and *out set) when e is an integer constant; for a bool constant,
 * *out is 0 or 1 and the result is true too. */
bool hop_expr_const_value(const hop_expr *e, int64_t *out);
/*
 * The canonical form's structure (see hop_expr_kind), for code that walks an
 * expression (the plan compiler compiles it into a program).  Never fail;
 * results are borrowed from the env.
 *   hop_expr_noperands(e)   ADD: its terms (monomials); MUL: its atoms;
 *                           FLOORDIV, MOD and the relations: 2 (a OP b);
 *                           MAX, MIN, AND, OR: their operands (>= 2); NOT: 1;
 *                           CONST, SYMBOL, TRUE, FALSE (and NULL): 0
 *   hop_expr_operand(e, i)  operand i; NULL past the end
 *   hop_expr_coef(e, i)     ADD: the coefficient of term i (never 0); MUL:
 *                           the exponent of atom i (>= 1); 1 for an operand
 *                           of another kind; 0 past the end
 *   hop_expr_addend(e)      ADD: its constant; 0 for other kinds (a CONST's
 *                           value is hop_expr_const_value's)
 * So an ADD is addend + sum(coef_i * operand_i), a MUL prod(operand_i **
 * coef_i), and the others apply their kind to their operands in order, as
 * hop_expr_eval does.
 */
size_t hop_expr_noperands(const hop_expr *e);
const hop_expr *hop_expr_operand(const hop_expr *e, size_t i);
int64_t hop_expr_coef(const hop_expr *e, size_t i);
int64_t hop_expr_addend(const hop_expr *e);
/* For a SYMBOL: its name ("s0", "u3") and its dense id in the env (ids are
 * shared by backed and unbacked symbols, in creation order).  NULL / -1 for
 * other kinds. */
const char *hop_symbol_name(const hop_expr *e);
int64_t hop_symbol_id(const hop_expr *e);
bool hop_symbol_is_unbacked(const hop_expr *e);
/* Hint of a backed symbol; false for unbacked symbols and non-symbols. */
bool hop_symbol_hint(const hop_expr *e, int64_t *out);
/* Structural order used for sorting: symbols by name (all s before u, then
 * by number), other expressions after symbols by kind then structure.  <0, 0, >0. */
int hop_expr_compare(const hop_expr *a, const hop_expr *b);

/*
 * The free symbols of e, sorted by hop_expr_compare, without duplicates.
 * Writes up to cap of them to out (out may be NULL when cap is 0) and returns
 * how many there are, so a caller can size its buffer and call again.
 */
size_t hop_expr_free_symbols(const hop_expr *e, const hop_expr **out, size_t cap);

/* e with every syms[i] replaced by vals[i] (int for int); NULL on error. */
const hop_expr *hop_sym_subs(hop_shape_env *env, const hop_expr *e, const hop_expr *const *syms,
                             const hop_expr *const *vals, size_t n);

/*
 * Evaluates e with symbol id i bound to values[i] for i < nvalues; a value of
 * HOP_UNBOUND means unbound.  A bool expression evaluates to 0 or 1.
 * HOP_INVALID naming the symbol when one is unbound; HOP_INVALID on division
 * or modulo by zero or int64 overflow.
 */
#define HOP_UNBOUND INT64_MIN
hop_status hop_expr_eval(const hop_expr *e, const int64_t *values, size_t nvalues, int64_t *out);

/*
 * Prints e the way a person writes it, in Python syntax: `2*s0 + 1`, `-s0 + 3`,
 * `s0*s1`, `s0**2`, `(s0 + 1)//2`, `2*(s0//3)`, `Max(s0, s1)`, `s0 % 3`,
 * `(s0*s1) % 4`, `s0 > 4`, `s0 == 1`, `s0 + 1 <= s1`, `(s1 == 2) & (s0 > 4)`,
 * `~((s1 == 2) & (s0 > 4))`, `True`.  Terms of a sum print in sympy's lex
 * order (higher powers of earlier symbols first: `s0**2 + 2*s0 + 1`,
 * `s0*s1 + s0`, `s0 + s1**2`) with the constant last; factors, Max/Min and
 * AND/OR operands in hop_expr_compare order.  A relation prints with its
 * constant side on the right (`s0 > 4`, not `4 < s0`), and of two sides with
 * terms the one whose first term comes first on the left (`s0 > s1`).
 * snprintf contract: writes at most cap bytes (NUL included) and returns the
 * length the full text needs.
 */
size_t hop_expr_print(const hop_expr *e, char *buf, size_t cap);
/* The same text, interned in env (borrowed: lives as long as env, or while
 * env is marked only until hop_shape_env_rollback; NULL on out-of-memory). */
const char *hop_expr_str(hop_shape_env *env, const hop_expr *e);

/* --------------------------------------------------------------- ShapeEnv */

/*
 * A backed symbol for an example size: with duck sizing, a size equal to an
 * earlier duck-sized example size returns that earlier symbol; sizes 0 and 1
 * are specialised to constants (when specialize_01).  A negative hint is
 * HOP_INVALID.  Backed symbols have the value range [2, INT64_MAX] (a symbol
 * made for a hint 0 or 1 without specialize_01 gets [0, INT64_MAX]).
 */
const hop_expr *hop_shape_env_size_symbol(hop_shape_env *env, int64_t hint, bool duck,
                                          bool specialize_01);
/* A fresh unbacked symbol u<k> with the value range [lo, hi]; lo > hi is
 * HOP_INVALID. */
const hop_expr *hop_shape_env_unbacked(hop_shape_env *env, int64_t lo, int64_t hi);
/* Narrows the value range of a symbol (intersection).  HOP_INVALID if the
 * range becomes empty or e is not a symbol of env. */
hop_status hop_shape_env_constrain(hop_shape_env *env, const hop_expr *sym, int64_t lo, int64_t hi);
/* The value range [lo, hi] of an int expression by interval arithmetic over
 * its symbols' ranges (a sound over-approximation; bounds saturate at the
 * int64 limits).  A SymBool gives [0, 1], or [v, v] when the ranges decide
 * it.  [INT64_MIN, INT64_MAX] for NULL or a foreign expression. */
void hop_shape_env_bounds(hop_shape_env *env, const hop_expr *e, int64_t *lo, int64_t *hi);

/* Forgets the symbols created after the first n (to undo a failed trace):
 * names and ids are reused by the next symbols created; expressions built
 * from the forgotten symbols must no longer be used. */
void hop_shape_env_truncate_symbols(hop_shape_env *env, size_t n);

/* Symbols created so far (backed and unbacked), in id order. */
size_t hop_shape_env_nsymbols(const hop_shape_env *env);
const hop_expr *hop_shape_env_symbol(const hop_shape_env *env, size_t id);

/*
 * Decides a SymBool.  If it is constant, or its value follows from the value
 * ranges, that value is returned with no guard.  Otherwise, if every free
 * symbol is backed, the hints decide it and the decision (cond, or its
 * negation) is recorded as a guard.  Otherwise it is HOP_DATA_DEPENDENT with a
 * message naming the expression and its unbacked symbols: "data-dependent:
 * cannot decide u0 > 4 (u0 is unbacked; its value is only known at run time)"
 * ("u0, u1 are unbacked; their values are ...").  `what` (may be NULL) says who
 * asks ("reshape") and prefixes the message: "reshape: data-dependent: ...".
 * HOP_INVALID for an int cond or when the hints overflow/divide by zero.
 */
hop_status hop_shape_env_decide(hop_shape_env *env, const hop_expr *cond, const char *what,
                                bool *out);
/*
 * Decides cond from constants and value ranges alone, the first step of
 * hop_shape_env_decide: true with *out set when they settle it, false when
 * only a hint (a guard) or the run time could.  Records nothing, never
 * fails (false for NULL or a foreign expression).  Shape rules use it to
 * keep a size symbolic (`Min(s0, 4)`) instead of guarding on a hint.
 */
bool hop_shape_env_decide_static(hop_shape_env *env, const hop_expr *cond, bool *out);
/* Shorthands: decide a == b, a == constant. */
hop_status hop_shape_env_decide_eq(hop_shape_env *env, const hop_expr *a, const hop_expr *b,
                                   const char *what, bool *out);

/* Guards recorded so far (each a SymBool that holds), in order, deduplicated. */
size_t hop_shape_env_nguards(const hop_shape_env *env);
const hop_expr *hop_shape_env_guard(const hop_shape_env *env, size_t i);
/* Records a guard directly (for constant specialisation by upper layers). */
hop_status hop_shape_env_add_guard(hop_shape_env *env, const hop_expr *cond);
/* Drops guards recorded after the first n (to undo a failed trace). */
void hop_shape_env_truncate_guards(hop_shape_env *env, size_t n);

/*
 * Marks the env's present state (one mark per env: a second replaces the
 * first).  hop_shape_env_rollback goes back to it and removes it: the
 * symbols and guards made since are dropped as by the truncations above,
 * and every expression made since is forgotten and its memory reused, so a
 * caller that infers shapes again and again in one env (eager ops: a new
 * unbacked symbol for each nonzero, constants for each new size) keeps the
 * env's memory flat.  Expressions made after the mark must not be used
 * after the rollback; hop_expr_str of any expression, while the env is
 * marked, returns text that lives only until the rollback.  Rollback is a
 * no-op without a mark; both are no-ops for NULL.
 */
void hop_shape_env_mark(hop_shape_env *env);
void hop_shape_env_rollback(hop_shape_env *env);

/* ---------------------------------------------------------- tensor metadata */

#define HOP_MAX_RANK 8

/* Tensor metadata: dtype, rank and sizes as SymInts (constants included).
 * Strides are contiguous and derived by hop_meta_strides.  Plain value. */
typedef struct hop_meta {
    hop_dtype dtype;
    int rank;
    const hop_expr *sizes[HOP_MAX_RANK];
} hop_meta;

/* The checks every description of a tensor by dtype, rank and sizes gets
 * (fn names the caller in messages): HOP_INVALID for an invalid dtype or a
 * rank outside [0, HOP_MAX_RANK], HOP_MISUSE for NULL sizes of rank > 0.
 * The sizes' values are the caller's to check. */
hop_status hop_dims_check(const char *fn, hop_dtype dtype, int rank, const int64_t *sizes);
/* Fills *m; HOP_INVALID for rank > HOP_MAX_RANK or a negative size. */
hop_status hop_meta_init(hop_meta *m, hop_shape_env *env, hop_dtype dtype, int rank,
                         const int64_t *sizes);
/* Contiguous strides of m into out[rank]: stride[i] is the product of the
 * sizes after dim i (no clamping of 0 sizes to 1). */
hop_status hop_meta_strides(const hop_meta *m, hop_shape_env *env, const hop_expr **out);
/* Product of the sizes. */
const hop_expr *hop_meta_numel(const hop_meta *m, hop_shape_env *env);
bool hop_meta_equal(const hop_meta *a, const hop_meta *b);
/*
 * The meta printer: the one spelling of a tensor's metadata, `f32[s0, 4]`,
 * which every layer's messages, printers and dumps use, so a tensor reads
 * the same everywhere.  All keep snprintf's contract (as hop_expr_print):
 * the length of the whole text is returned, at most cap bytes are written,
 * NUL included.
 *
 * hop_dims_print is the printer itself: dt's name (nothing for
 * HOP_DTYPE_COUNT: `[3, 4]`, a list of sizes or strides), then rank dims
 * in brackets separated by ", ", dim d written by dim(ctx, d, buf, cap)
 * (same contract), for a layer that holds its sizes in its own form (a
 * plan's compiled size programs).  hop_meta_print: m's symbolic sizes
 * (`NULL` for m NULL); hop_exprs_print: SymInt sizes; hop_sizes_print:
 * concrete sizes (a tensor's, a view's).
 */
typedef size_t (*hop_dim_print_fn)(const void *ctx, int d, char *buf, size_t cap);
size_t hop_dims_print(hop_dtype dt, int rank, hop_dim_print_fn dim, const void *ctx, char *buf,
                      size_t cap);
size_t hop_meta_print(const hop_meta *m, char *buf, size_t cap);
size_t hop_exprs_print(hop_dtype dt, int rank, const hop_expr *const *sizes, char *buf, size_t cap);
size_t hop_sizes_print(hop_dtype dt, int rank, const int64_t *sizes, char *buf, size_t cap);

/* ------------------------------------------------------------ the op table */

/* Shape rules (closed set). */
typedef enum hop_shape_rule {
    HOP_RULE_UNARY,                /* (x) -> same shape; float ops promote ints to f32 */
    HOP_RULE_BINARY,               /* (a, b) broadcast, dtype promotion */
    HOP_RULE_COMPARE,              /* (a, b) broadcast, result bool */
    HOP_RULE_LOGICAL,              /* (a, b) or (a) broadcast, result bool */
    HOP_RULE_WHERE,                /* (cond, a, b) */
    HOP_RULE_REDUCE,               /* (x, dims, keepdim) */
    HOP_RULE_ARGMAX,               /* (x, dim, keepdim) */
    HOP_RULE_MATMUL,               /* (a, b) */
    HOP_RULE_RESHAPE,              /* (x, shape) */
    HOP_RULE_TRANSPOSE,            /* (x, d0, d1) */
    HOP_RULE_PERMUTE,              /* (x, dims) */
    HOP_RULE_UNSQUEEZE,            /* (x, dim) */
    HOP_RULE_SQUEEZE,              /* (x, dim or none) */
    HOP_RULE_EXPAND,               /* (x, sizes) */
    HOP_RULE_SELECT,               /* (x, dim, index) */
    HOP_RULE_SLICE,                /* (x, dim, start, end, step) */
    HOP_RULE_CAT,                  /* (tensors, dim) */
    HOP_RULE_STACK,                /* (tensors, dim) */
    HOP_RULE_FULL,                 /* (shape, value, dtype) / (shape, dtype) */
    HOP_RULE_ARANGE,               /* (start, end, step, dtype) */
    HOP_RULE_ITEM,                 /* (x) -> SymInt */
    HOP_RULE_NONZERO,              /* (x) -> i64[u, rank] */
    HOP_RULE_SYM_SIZE,             /* (x, dim) -> SymInt */
    HOP_RULE_TO,                   /* (x, dtype) */
    HOP_RULE_CLONE,                /* (x) */
    HOP_RULE_SCAN,                 /* (x, dim) -> same shape */
    HOP_RULE_SORT,                 /* (x, dim, descending, kind) -> same shape */
    HOP_RULE_TAKE,                 /* (x, dim, index) */
    HOP_RULE_DYNAMIC_SLICE,        /* (x, dim, start, size) */
    HOP_RULE_DYNAMIC_UPDATE_SLICE, /* (x, update, dim, start) */
    HOP_RULE_MASK_GRADIENT,        /* (x, mask) */
    HOP_RULE_PUT,                  /* (x, index, values, accumulate) -> x's shape */
    HOP_RULE_SEARCHSORTED,         /* (sorted, values, right) -> i64, values' shape */
    HOP_RULE_LINALG,               /* the linalg ops: see their rows */
    HOP_RULE_FFT,                  /* (x, n, axis, kind flags) */
    HOP_RULE_BITCAST,              /* (x, dtype) -> the bytes read as dtype */
    HOP_RULE_FAIL_IF,              /* (x, flag, kind) -> x */
    HOP_RULE_MASKED_SUM,           /* (x, dims, keepdim, mask, initial) */
} hop_shape_rule;

/* Kernel families, for the runtime (closed set). */
typedef enum hop_kernel_family {
    HOP_KF_UNARY,
    HOP_KF_BINARY,
    HOP_KF_WHERE,
    HOP_KF_REDUCE,
    HOP_KF_MATMUL,
    HOP_KF_VIEW,
    HOP_KF_COPY,
    HOP_KF_CONCAT,
    HOP_KF_FACTORY,
    HOP_KF_SCALAR,
    HOP_KF_INDEX, /* computed by hop_eager (also in plans): a result or an error from the data */
} hop_kernel_family;

/* sort/argsort's kind (argument 3): how equal keys are ordered.  QUICK and
 * HEAP make NumPy 1.24's comparisons and swaps (its introsort and heapsort),
 * so ties (equal integers, -0.0 and 0.0) land where NumPy's land. */
typedef enum hop_sort_kind {
    HOP_SORT_STABLE = 0, /* ties in their order: NumPy's "stable"/"mergesort" */
    HOP_SORT_QUICK = 1,  /* NumPy's "quicksort", the default */
    HOP_SORT_HEAP = 2,   /* NumPy's "heapsort" */
} hop_sort_kind;

/*
 * The op table: X(name, nargs, rule, family, complex, cost).  nargs counts
 * every positional operand (tensors and attributes alike); all are required,
 * absent optional ones are passed as HOP_OPND_NONE.  complex is C where the op
 * takes complex operands, R where it refuses them (HOP_DTYPE, below).  cost is
 * the work of one element relative to an add (1), what the fuser and the
 * kernels' thread split weigh a loop by.  The argument lists per op:
 *
 *   unary ops            (x)
 *   binary, comparisons  (a, b): each a tensor or a scalar (INT/FLOAT/BOOL/SYM)
 *   logical_and/or       (a, b)         logical_not (x)
 *   where                (cond, a, b)   a/b may be scalars
 *   sum mean amax amin   (x, dims: INT, LIST of INT (empty = all), or NONE = all, keepdim: BOOL)
 *   prod any all         (x, dims, keepdim) as sum
 *   argmax argmin        (x, dim: INT or NONE = flattened, keepdim: BOOL)
 *   matmul               (a, b)
 *   reshape view         (x, shape: LIST of INT/SYM, at most one -1)
 *   transpose            (x, d0: INT, d1: INT)
 *   permute              (x, dims: LIST of INT)
 *   unsqueeze            (x, dim: INT)
 *   squeeze              (x, dim: INT or NONE = every size-1 dim)
 *   expand               (x, sizes: LIST of INT/SYM, -1 keeps a dim)
 *   select               (x, dim: INT, index: INT/SYM)
 *   slice                (x, dim: INT, start, end: INT/SYM/NONE, step: INT > 0)
 *   cat stack            (tensors: LIST of TENSOR, dim: INT)
 *   full                 (shape: LIST, value: INT/FLOAT/BOOL/SYM, dtype: DTYPE or NONE)
 *   zeros ones           (shape: LIST, dtype: DTYPE or NONE = f32)
 *   arange               (start, end, step: INT/SYM, dtype: DTYPE or NONE = i64)
 *   item                 (x)            numel 1, integer or bool dtype -> unbacked SymInt
 *   nonzero              (x)            -> i64[u, rank(x)]
 *   sym_size             (x, dim: INT)  -> SymInt
 *   to                   (x, dtype: DTYPE)
 *   clone                (x)
 *   cumsum cumprod       (x, dim: INT)
 *   sort argsort         (x, dim: INT, descending: BOOL, kind: INT, a hop_sort_kind)  nan sorts
 *                        as the largest; HOP_SORT_STABLE keeps ties in their order (descending
 *                        too), HOP_SORT_QUICK and HOP_SORT_HEAP order them as NumPy 1.24's
 *                        kind="quicksort" (introsort) and "heapsort" do (not descending)
 *   take                 (x, dim: INT, index: integer TENSOR) -> x.shape[:dim] + index.shape +
 *                        x.shape[dim+1:]; negative indices count from the end; an index out of
 *                        range is HOP_INDEX when the op runs
 *   dynamic_slice        (x, dim: INT, start: integer TENSOR of rank 0, size: INT/SYM or
 *                        NONE) -> x with `size` elements along dim, from start' =
 *                        clamp(start < 0 ? start + n : start, 0, n - size) for n = x's size
 *                        there (JAX's dynamic_slice: a start read at run time never fails, it
 *                        is clamped so that the slice fits); 0 <= size <= n.  NONE: the one
 *                        element at start' with the dim dropped (x[i]).  A view.
 *   dynamic_update_slice (x, update, dim: INT, start: INT/SYM or integer TENSOR of rank 0)
 *                        -> x with update written along dim from start', clamped as
 *                        dynamic_slice's for size = update's size along dim (JAX's
 *                        dynamic_update_slice); update has x's dtype and rank, and x's sizes
 *                        but along dim, where it has at most n
 *   mask_gradient        (x, mask: bool TENSOR that broadcasts to x's shape) -> x itself (a
 *                        view); its gradient and tangent are zero where mask is false: how a
 *                        batched cond keeps a branch's gradient out of the examples that did
 *                        not take it (docs/AUTODIFF.md)
 *   put                  (x, index: integer TENSOR, values: TENSOR, combine: BOOL or INT) ->
 *                        a copy of x with its element index[i] (x flattened in C order;
 *                        negative counts from the end) set to values[i], in index order (a
 *                        repeated index keeps the last value), or combined with it (NumPy's
 *                        ufunc.at): combine true adds (values of x's dtype); an INT is a
 *                        hop_put_combine code below, whose op computes x[k] = op(x[k], v) once
 *                        per index in order, in values' dtype (NumPy's loop dtype: x[k] is
 *                        converted to it, the result back to x's dtype); values has x's dtype
 *                        for false/true and as many elements as index, or one (used for
 *                        every index), checked when the op runs (HOP_SHAPE), as every index
 *                        is (HOP_INDEX)
 *   searchsorted         (sorted: 1-d TENSOR, values: TENSOR of its dtype, right: BOOL) -> i64
 *                        of values' shape: for each value the first position i with
 *                        sorted[i] >= value (right: > value) in NumPy's order (nan last)
 *
 *   real imag angle      (x) -> the parts (angle in radians) of a complex x in its parts'
 *                        dtype; of a real x: x, zeros, 0 or pi
 *   conj                 (x) -> the complex conjugate (a real x itself)
 *   complex              (re, im) -> re + i im, both real: the complex dtype of their
 *                        promotion (c128 for f64, else c64)
 *   linalg_solve         (a: [..., n, n], b: [..., n, k]) -> x with a x = b (LAPACK gesv;
 *                        batch dims broadcast); a singular a is HOP_LINALG when it runs
 *   linalg_inv, linalg_det, linalg_slogdet, linalg_cholesky (a: [..., n, n]): getrf/getri,
 *                        the LU's diagonal, potrf (the lower factor; HOP_LINALG when a is
 *                        not positive definite)
 *   linalg_qr            (a, complete: BOOL) -> Q and R packed (ops/infer_linalg.c)
 *   linalg_qr_raw        (a: [..., m, n]) -> geqrf's factored matrix and its reflectors'
 *                        scales packed: [..., n + 1, m], rows 0..n-1 the factored matrix
 *                        (LAPACK's column-major m x n, NumPy's qr(mode='raw') h), row n
 *                        tau (min(m, n) entries, then zeros)
 *   linalg_svd           (a, full: BOOL) -> U, S, Vh packed (gesdd); linalg_svdvals (a) -> S
 *   linalg_eigh          (a, upper: BOOL) -> w, V packed (syevd/heevd; upper: read the upper
 *                        triangle, else the lower); linalg_eigvalsh (a, upper) -> w
 *   linalg_eig           (a: [..., n, n], vectors: BOOL) -> the eigenvalues and right
 *                        eigenvectors of a general matrix (geev), complex (f32 -> c64,
 *                        f64 -> c128): w, V packed as eigh's, or w alone ([..., n]) without
 *                        vectors; the vectors are LAPACK's (unit 2-norm, the largest
 *                        component real); HOP_LINALG when geev does not converge
 *   linalg_lstsq         (a: [..., m, n], b: [..., m, k] of a's dtype, rcond: FLOAT) -> x,
 *                        residuals, s and rank packed (gelsd, as NumPy 1.24's lstsq calls
 *                        it: rcond as given, -inf for eps * max(m, n), k = 0 as one zero
 *                        column; ops/infer_linalg.c); no gradient of its own (hop.numpy's
 *                        lstsq adds the SVD solution's); HOP_LINALG when gelsd fails
 *   fft                  (x: complex, dim: INT, inverse: BOOL, norm: INT) along dim (FFTW);
 *                        norm 0, 1, 2 scale by 1, 1/sqrt(n), 1/n
 *   rfft                 (x: f32/f64, dim, norm) -> complex, dim's size n // 2 + 1
 *   irfft                (x: complex, dim, n: INT/SYM, norm) -> real, dim's size n
 *   bitcast              (x, dtype: DTYPE) -> x's bytes in C order read as dtype (NumPy's
 *                        x.view(dtype) of a C-contiguous x): the last dim scaled by the ratio
 *                        of the item sizes; HOP_SHAPE for a 0-d x and another item size, and
 *                        for a last dim whose bytes do not split into whole new items
 *   masked_sum           (x: float or complex, dims, keepdim: as sum's, mask: bool TENSOR of
 *                        x's shape, initial: TENSOR of x's dtype and rank 0) -> x's dtype,
 *                        sum's shape: NumPy 1.24's add.reduce(x, where=mask, initial=initial)
 *                        bit for bit, x's dims taken outermost first as NumPy's iterator
 *                        visits them (the caller permutes x and mask so): from initial, each
 *                        run of unmasked elements of an inner loop (the innermost reduced
 *                        dims, gathered, at most 8192 elements) summed pairwise and added;
 *                        element by element when a kept dim is innermost; float16 rounded
 *                        to float16 after each add, summed in float
 *   masked_prod          (as masked_sum's) NumPy 1.24's multiply.reduce(x, where=mask,
 *                        initial=initial) bit for bit, in masked_sum's runs: each run's
 *                        elements multiplied one at a time into the output element; float16
 *                        in float, rounded to float16 after each run (after each multiply
 *                        when a kept dim is innermost), as NumPy's half loop stores it
 *   fail_if              (x, flag: bool TENSOR of any shape, kind: INT, a hop_check_kind) ->
 *                        x itself (a view), once the op has checked flag when it runs: any
 *                        element true is HOP_CHECK with kind's message (a plan's run-time
 *                        check: a result that goes through it is never used unchecked; an
 *                        unused one is a check when its kind is an EFFECT, none when it is a
 *                        VALUE: hop_check_kind_is_effect); no derivative reaches flag, x's
 *                        cotangent and tangent go through the same check (docs/AUTODIFF.md)
 *
 * Complex operands (c64, c128) are taken by arithmetic, pow, eq/ne, the
 * float functions NumPy defines on them, sign (NumPy's: the sign of the real
 * part, or of the imaginary one when that is 0), abs (real result), the
 * logical ops, where, sum/mean/prod/any/all, matmul, cumsum/cumprod, data
 * movement and the linalg and fft ops; any other op refuses them
 * (HOP_DTYPE, ops/infer_complex.c).
 *
 * Negative dims count from the end, as in Python.  floor_divide and remainder
 * round toward -inf (Python's // and %, NumPy's); an integer division by
 * zero gives 0 (NumPy's answer, with no warning).  bitwise_* take integers
 * and bools.  sign, floor, ceil, round (half to even) and bitwise_not keep
 * the dtype; expm1 log1p log2 log10 exp2 tan arctan and sinh cosh arcsin
 * arccos arcsinh arccosh arctanh cbrt i0 i1 (the modified Bessel functions
 * of order 0 and 1, Cephes' series: i0's is NumPy's) are float functions like exp; arctan2
 * hypot copysign nextafter ldexp logaddexp logaddexp2 are float functions of
 * two operands (ldexp(x, n) is x * 2**n with n read as an integer;
 * logaddexp(x, y) is log(e**x + e**y), logaddexp2 log2(2**x + 2**y), each
 * NumPy 1.24's npy_logaddexp evaluated with libm: runtime/elementwise.c); fmod is C's
 * remainder, with the sign of the dividend (an integer divisor of 0 gives
 * 0); gcd and lcm take integers (lcm is |a / gcd(a, b) * b|, wrapping as
 * NumPy's does); left_shift and right_shift take integers, and a shift by a
 * negative count or one of at least the width gives 0 (right_shift of a
 * negative value -1), as NumPy's.  float_power is pow of float operands
 * (ints give f32) computed by the C library's pow and powf one element at a
 * time, as NumPy 1.24's float_power loop and its scalar math call them (pow
 * takes the math backend's vector pow, NumPy's SVML one where adopted: the
 * two differ in the last bit of about a quarter of float64 results).
 */
#define HOP_OP_LIST(X)                                                                             \
    X(neg, 1, UNARY, UNARY, C, 1)                                                                  \
    X(abs, 1, UNARY, UNARY, C, 1)                                                                  \
    X(exp, 1, UNARY, UNARY, C, 8)                                                                  \
    X(log, 1, UNARY, UNARY, C, 8)                                                                  \
    X(sin, 1, UNARY, UNARY, C, 8)                                                                  \
    X(cos, 1, UNARY, UNARY, C, 8)                                                                  \
    X(tanh, 1, UNARY, UNARY, C, 8)                                                                 \
    X(sigmoid, 1, UNARY, UNARY, R, 8)                                                              \
    X(relu, 1, UNARY, UNARY, R, 1)                                                                 \
    X(sqrt, 1, UNARY, UNARY, C, 2)                                                                 \
    X(add, 2, BINARY, BINARY, C, 1)                                                                \
    X(sub, 2, BINARY, BINARY, C, 1)                                                                \
    X(mul, 2, BINARY, BINARY, C, 1)                                                                \
    X(div, 2, BINARY, BINARY, C, 2)                                                                \
    X(pow, 2, BINARY, BINARY, C, 16)                                                               \
    X(maximum, 2, BINARY, BINARY, R, 1)                                                            \
    X(minimum, 2, BINARY, BINARY, R, 1)                                                            \
    X(eq, 2, COMPARE, BINARY, C, 1)                                                                \
    X(ne, 2, COMPARE, BINARY, C, 1)                                                                \
    X(lt, 2, COMPARE, BINARY, R, 1)                                                                \
    X(le, 2, COMPARE, BINARY, R, 1)                                                                \
    X(gt, 2, COMPARE, BINARY, R, 1)                                                                \
    X(ge, 2, COMPARE, BINARY, R, 1)                                                                \
    X(logical_and, 2, LOGICAL, BINARY, C, 1)                                                       \
    X(logical_or, 2, LOGICAL, BINARY, C, 1)                                                        \
    X(logical_not, 1, LOGICAL, UNARY, C, 1)                                                        \
    X(where, 3, WHERE, WHERE, C, 1)                                                                \
    X(sum, 3, REDUCE, REDUCE, C, 1)                                                                \
    X(mean, 3, REDUCE, REDUCE, C, 1)                                                               \
    X(amax, 3, REDUCE, REDUCE, R, 1)                                                               \
    X(amin, 3, REDUCE, REDUCE, R, 1)                                                               \
    X(argmax, 3, ARGMAX, REDUCE, R, 1)                                                             \
    X(matmul, 2, MATMUL, MATMUL, C, 1)                                                             \
    X(reshape, 2, RESHAPE, VIEW, C, 1)                                                             \
    X(view, 2, RESHAPE, VIEW, C, 1)                                                                \
    X(transpose, 3, TRANSPOSE, VIEW, C, 1)                                                         \
    X(permute, 2, PERMUTE, VIEW, C, 1)                                                             \
    X(unsqueeze, 2, UNSQUEEZE, VIEW, C, 1)                                                         \
    X(squeeze, 2, SQUEEZE, VIEW, C, 1)                                                             \
    X(expand, 2, EXPAND, VIEW, C, 1)                                                               \
    X(select, 3, SELECT, VIEW, C, 1)                                                               \
    X(slice, 5, SLICE, VIEW, C, 1)                                                                 \
    X(cat, 2, CAT, CONCAT, C, 1)                                                                   \
    X(stack, 2, STACK, CONCAT, C, 1)                                                               \
    X(full, 3, FULL, FACTORY, C, 1)                                                                \
    X(zeros, 2, FULL, FACTORY, C, 1)                                                               \
    X(ones, 2, FULL, FACTORY, C, 1)                                                                \
    X(arange, 4, ARANGE, FACTORY, R, 1)                                                            \
    X(item, 1, ITEM, SCALAR, R, 1)                                                                 \
    X(nonzero, 1, NONZERO, INDEX, C, 1)                                                            \
    X(sym_size, 2, SYM_SIZE, SCALAR, C, 1)                                                         \
    X(to, 2, TO, COPY, C, 1)                                                                       \
    X(clone, 1, CLONE, COPY, C, 1)                                                                 \
    X(floor_divide, 2, BINARY, BINARY, R, 4)                                                       \
    X(remainder, 2, BINARY, BINARY, R, 4)                                                          \
    X(bitwise_and, 2, BINARY, BINARY, R, 1)                                                        \
    X(bitwise_or, 2, BINARY, BINARY, R, 1)                                                         \
    X(bitwise_xor, 2, BINARY, BINARY, R, 1)                                                        \
    X(bitwise_not, 1, UNARY, UNARY, R, 1)                                                          \
    X(sign, 1, UNARY, UNARY, C, 1)                                                                 \
    X(floor, 1, UNARY, UNARY, R, 1)                                                                \
    X(ceil, 1, UNARY, UNARY, R, 1)                                                                 \
    X(round, 1, UNARY, UNARY, R, 1)                                                                \
    X(expm1, 1, UNARY, UNARY, C, 8)                                                                \
    X(log1p, 1, UNARY, UNARY, C, 8)                                                                \
    X(log2, 1, UNARY, UNARY, C, 8)                                                                 \
    X(log10, 1, UNARY, UNARY, C, 8)                                                                \
    X(exp2, 1, UNARY, UNARY, C, 8)                                                                 \
    X(tan, 1, UNARY, UNARY, C, 8)                                                                  \
    X(arctan, 1, UNARY, UNARY, C, 8)                                                               \
    X(prod, 3, REDUCE, REDUCE, C, 1)                                                               \
    X(any, 3, REDUCE, REDUCE, C, 1)                                                                \
    X(all, 3, REDUCE, REDUCE, C, 1)                                                                \
    X(argmin, 3, ARGMAX, REDUCE, R, 1)                                                             \
    X(cumsum, 2, SCAN, INDEX, C, 1)                                                                \
    X(cumprod, 2, SCAN, INDEX, C, 1)                                                               \
    X(sort, 4, SORT, INDEX, C, 1)                                                                  \
    X(argsort, 4, SORT, INDEX, C, 1)                                                               \
    X(take, 3, TAKE, INDEX, C, 1)                                                                  \
    X(dynamic_slice, 4, DYNAMIC_SLICE, VIEW, C, 1)                                                 \
    X(dynamic_update_slice, 4, DYNAMIC_UPDATE_SLICE, INDEX, C, 1)                                  \
    X(mask_gradient, 2, MASK_GRADIENT, VIEW, C, 1)                                                 \
    X(sinh, 1, UNARY, UNARY, C, 8)                                                                 \
    X(cosh, 1, UNARY, UNARY, C, 8)                                                                 \
    X(arcsin, 1, UNARY, UNARY, C, 8)                                                               \
    X(arccos, 1, UNARY, UNARY, C, 8)                                                               \
    X(arcsinh, 1, UNARY, UNARY, C, 8)                                                              \
    X(arccosh, 1, UNARY, UNARY, C, 8)                                                              \
    X(arctanh, 1, UNARY, UNARY, C, 8)                                                              \
    X(cbrt, 1, UNARY, UNARY, R, 8)                                                                 \
    X(i0, 1, UNARY, UNARY, R, 32)                                                                  \
    X(i1, 1, UNARY, UNARY, R, 32)                                                                  \
    X(arctan2, 2, BINARY, BINARY, R, 8)                                                            \
    X(hypot, 2, BINARY, BINARY, R, 8)                                                              \
    X(copysign, 2, BINARY, BINARY, R, 1)                                                           \
    X(fmod, 2, BINARY, BINARY, R, 4)                                                               \
    X(nextafter, 2, BINARY, BINARY, R, 1)                                                          \
    X(ldexp, 2, BINARY, BINARY, R, 1)                                                              \
    X(logaddexp, 2, BINARY, BINARY, R, 16)                                                         \
    X(logaddexp2, 2, BINARY, BINARY, R, 16)                                                        \
    X(gcd, 2, BINARY, BINARY, R, 4)                                                                \
    X(lcm, 2, BINARY, BINARY, R, 4)                                                                \
    X(left_shift, 2, BINARY, BINARY, R, 1)                                                         \
    X(right_shift, 2, BINARY, BINARY, R, 1)                                                        \
    X(put, 4, PUT, INDEX, C, 1)                                                                    \
    X(searchsorted, 3, SEARCHSORTED, INDEX, C, 1)                                                  \
    X(real, 1, UNARY, UNARY, C, 1)                                                                 \
    X(imag, 1, UNARY, UNARY, C, 1)                                                                 \
    X(conj, 1, UNARY, UNARY, C, 1)                                                                 \
    X(angle, 1, UNARY, UNARY, C, 1)                                                                \
    X(complex, 2, BINARY, BINARY, R, 1)                                                            \
    X(linalg_solve, 2, LINALG, INDEX, C, 1)                                                        \
    X(linalg_inv, 1, LINALG, INDEX, C, 1)                                                          \
    X(linalg_det, 1, LINALG, INDEX, C, 1)                                                          \
    X(linalg_slogdet, 1, LINALG, INDEX, C, 1)                                                      \
    X(linalg_cholesky, 1, LINALG, INDEX, C, 1)                                                     \
    X(linalg_qr, 2, LINALG, INDEX, C, 1)                                                           \
    X(linalg_qr_raw, 1, LINALG, INDEX, C, 1)                                                       \
    X(linalg_svd, 2, LINALG, INDEX, C, 1)                                                          \
    X(linalg_svdvals, 1, LINALG, INDEX, C, 1)                                                      \
    X(linalg_eigh, 2, LINALG, INDEX, C, 1)                                                         \
    X(linalg_eigvalsh, 2, LINALG, INDEX, C, 1)                                                     \
    X(linalg_eig, 2, LINALG, INDEX, C, 1)                                                          \
    X(linalg_lstsq, 3, LINALG, INDEX, C, 1)                                                        \
    X(fft, 4, FFT, INDEX, C, 1)                                                                    \
    X(rfft, 3, FFT, INDEX, C, 1)                                                                   \
    X(irfft, 4, FFT, INDEX, C, 1)                                                                  \
    X(bitcast, 2, BITCAST, INDEX, C, 1)                                                            \
    X(fail_if, 3, FAIL_IF, VIEW, C, 1)                                                             \
    X(masked_sum, 5, MASKED_SUM, INDEX, C, 1)                                                      \
    X(float_power, 2, BINARY, BINARY, R, 32)                                                       \
    X(masked_prod, 5, MASKED_SUM, INDEX, C, 1)

typedef enum hop_op {
#define HOP__OP_ENUM(name, nargs, rule, family, complex, cost) HOP_OP_##name,
    HOP_OP_LIST(HOP__OP_ENUM)
#undef HOP__OP_ENUM
        HOP_OP_COUNT
} hop_op;

/*
 * put's combining ops, its fourth operand as an INT (false and true are SET
 * and ADD with values of x's dtype).  Saved graphs store the code, so the
 * list only grows at its end.  Each names the binary op of the table that
 * combines; the op must take values' dtype and give it back.  MAX and MIN
 * also combine complex values (which the ops refuse) by NumPy's complex
 * maximum/minimum: real parts first, then imaginary, the first nan kept
 * (np.maximum.at); they have no derivative there.
 */
#define HOP_PUT_COMBINE_LIST(X)                                                                    \
    X(ADD, add)                                                                                    \
    X(MUL, mul)                                                                                    \
    X(MAX, maximum)                                                                                \
    X(MIN, minimum)                                                                                \
    X(DIV, div)                                                                                    \
    X(FLOOR_DIVIDE, floor_divide)                                                                  \
    X(REMAINDER, remainder)                                                                        \
    X(FMOD, fmod)                                                                                  \
    X(POW, pow)                                                                                    \
    X(BITWISE_AND, bitwise_and)                                                                    \
    X(BITWISE_OR, bitwise_or)                                                                      \
    X(BITWISE_XOR, bitwise_xor)                                                                    \
    X(LEFT_SHIFT, left_shift)                                                                      \
    X(RIGHT_SHIFT, right_shift)                                                                    \
    X(GCD, gcd)                                                                                    \
    X(LCM, lcm)                                                                                    \
    X(ARCTAN2, arctan2)                                                                            \
    X(HYPOT, hypot)                                                                                \
    X(COPYSIGN, copysign)

typedef enum hop_put_combine {
    HOP_PUT_SET = 0,
#define HOP__PUT_ENUM(code, op) HOP_PUT_##code,
    HOP_PUT_COMBINE_LIST(HOP__PUT_ENUM)
#undef HOP__PUT_ENUM
        HOP_PUT_COMBINE_COUNT
} hop_put_combine;

/*
 * fail_if's kinds (its third operand): what a failed check means, the first
 * part of its HOP_CHECK message.  Saved graphs store the code, so the list
 * only grows at its end.  X(code, what, message), what being EFFECT where
 * the eager code raises or warns whatever becomes of the value (a check
 * that stays when nothing uses the value: hop_node_may_fail, hop/graph.h),
 * VALUE where only the checked value's bits are in doubt (no use, no check).
 */
#define HOP_CHECK_KIND_LIST(X)                                                                     \
    X(ASSERT, EFFECT, "a run-time check failed")                                                   \
    X(NUMPY_CUTOFF, VALUE,                                                                         \
      "a singular value lies within hop's error bound of the cutoff, so hop cannot vouch that "    \
      "its decision (which singular values count) is NumPy's")                                     \
    X(NUMPY_ZERO_SIGN, VALUE,                                                                      \
      "a zero result's sign is the one NumPy's SIMD loop happens to keep among zeros of both "     \
      "signs, which hop cannot know")                                                              \
    X(NUMPY_CAST, VALUE,                                                                           \
      "a float outside (-2**31 - 1, 2**32) or NaN cast to uint32, where NumPy's answer depends "   \
      "on which of its loops takes the element")                                                   \
    X(NUMPY_TIES, VALUE,                                                                           \
      "equal keys (-0.0 and 0.0, or NaNs) whose order NumPy's sort decides in a way hop cannot "   \
      "know")                                                                                      \
    X(NUMPY_NAN_PATH, VALUE,                                                                       \
      "a NaN sends NumPy down a path hop does not follow (np.ma.median's NaN fill tied with an "   \
      "infinity, a nanquantile method hop computes only without NaNs)")                            \
    X(NUMPY_WARNS, EFFECT,                                                                         \
      "a reduction's result is not finite, where NumPy may warn of the data (an all-NaN slice, "   \
      "an empty one, no more elements than ddof), which hop's plan does not")                      \
    X(NUMPY_EMPTY, EFFECT,                                                                         \
      "an axis whose length is known only at run time is empty, where NumPy's median warns and "   \
      "its quantile raises, which hop's plan does not")                                            \
    X(NUMPY_SCALAR_OVERFLOW, EFFECT,                                                               \
      "a NumPy scalar's integer arithmetic overflowed, where NumPy's scalar math warns (or "       \
      "raises, under numpy.errstate), which hop's plan does not")                                  \
    X(NUMPY_INDEX, EFFECT,                                                                         \
      "a flat index or a coordinate is out of bounds, where NumPy's unravel_index or "             \
      "ravel_multi_index raises its ValueError")                                                   \
    X(VMAP_BRANCHES, EFFECT,                                                                       \
      "the examples of a vmap take different branches of a cond whose branches give outputs of "   \
      "different shapes, rows a batch cannot stack (nor could a loop over the examples)")

typedef enum hop_check_kind {
#define HOP__CHECK_ENUM(code, what, msg) HOP_CHECK_##code,
    HOP_CHECK_KIND_LIST(HOP__CHECK_ENUM)
#undef HOP__CHECK_ENUM
        HOP_CHECK_KIND_COUNT
} hop_check_kind;

/* The message of a fail_if kind; NULL for a code outside the list. */
const char *hop_check_kind_message(int64_t kind);
/* The name of a fail_if kind ("NUMPY_CUTOFF"); NULL outside the list. */
const char *hop_check_kind_name(int64_t kind);
/* Whether a failed check of kind stands for an eager error or warning
 * (EFFECT in the list); false for VALUE kinds and codes outside the list. */
bool hop_check_kind_is_effect(int64_t kind);

typedef struct hop_op_info {
    const char *name;
    int nargs;
    hop_shape_rule rule;
    hop_kernel_family family;
    bool complex; /* takes complex operands (column C) */
    int cost;     /* one element's work, an add's being 1 */
} hop_op_info;

/* The row of op; NULL for a value outside the table. */
const hop_op_info *hop_op_get(hop_op op);
/* Looks an op up by name; HOP_NOT_FOUND if there is none. */
hop_status hop_op_from_name(const char *name, hop_op *out);
/* The op a put combine code combines with (code 0, SET, and codes outside
 * the list: HOP_OP_COUNT). */
hop_op hop_put_combine_op(int64_t code);
/* Whether op's kernel can fail on the values it is given when a plan runs
 * it, beyond the metadata its shape rule checked: fail_if's flag, take's and
 * put's indices out of range, a singular or not positive definite matrix, an
 * SVD or eigensolver that does not converge.  Such a node is a check: DCE
 * keeps it when nothing uses its value (hop_node_may_fail, hop/graph.h). */
bool hop_op_checks_values(hop_op op);

/* An operand of shape inference: a tensor's metadata, a SymInt/SymBool, a
 * Python-like scalar, a dtype, a list, or nothing. */
typedef enum hop_operand_kind {
    HOP_OPND_NONE,
    HOP_OPND_TENSOR,
    HOP_OPND_SYM, /* SymInt or SymBool expression */
    HOP_OPND_INT,
    HOP_OPND_FLOAT,
    HOP_OPND_BOOL,
    HOP_OPND_DTYPE,
    HOP_OPND_LIST,
} hop_operand_kind;

typedef struct hop_operand {
    hop_operand_kind kind;
    union {
        const hop_meta *tensor;
        const hop_expr *sym;
        int64_t i;
        double f;
        bool b;
        hop_dtype dtype;
        struct {
            const struct hop_operand *items;
            size_t n;
        } list;
    } u;
} hop_operand;

/* What o is, for messages: "a tensor", "an int", "a float", "a bool",
 * "None", "a dtype", "a list", "a SymInt" or "a SymBool" (a SYM holding
 * a SymBool); a static string, "an invalid operand" for NULL or an
 * unknown kind. */
const char *hop_operand_kind_name(const hop_operand *o);

/* What an op produces: a tensor, a SymInt/SymBool, or nothing. */
typedef enum hop_value_kind {
    HOP_VALUE_NONE,
    HOP_VALUE_TENSOR,
    HOP_VALUE_SYM,
} hop_value_kind;

typedef struct hop_value_info {
    hop_value_kind kind;
    const hop_expr *sym; /* HOP_VALUE_SYM */
    hop_meta meta;       /* HOP_VALUE_TENSOR */
} hop_value_info;

/*
 * Whether a and b are the same kind of value with the same dtype and rank
 * and each size decided equal through env (hop_shape_env_decide: a hint
 * decision records a guard), for a HOP's checks that a value comes back as
 * it went in (a loop's carry).  SymInts are the same kind whatever their
 * values.  HOP_DATA_DEPENDENT when a size comparison cannot be decided; on
 * error env's guards are as before.
 */
hop_status hop_value_info_decide_same(hop_shape_env *env, const hop_value_info *a,
                                      const hop_value_info *b, const char *what, bool *same);

/* "f32[s0, 4]", "Sym(s0)" or "nothing" for messages; snprintf contract. */
size_t hop_value_info_print(const hop_value_info *v, char *buf, size_t cap);

/*
 * Checks HOPs share, on metadata alone (no env, no guards: a verifier's
 * questions).  is_bool_scalar: a SymBool, or a bool tensor whose sizes are
 * constants with product 1 (cond's pred, a loop condition's result).
 * is_int_scalar: a SymInt (sym may be NULL: an int constant), or an int32 or
 * int64 tensor of one element so (switch's index, fori_loop's bounds).
 * compatible: a and b may describe one value: the same kind (SymInts: both
 * ints or both bools), tensors of one dtype and rank whose sizes agree
 * wherever both are constants (symbolic sizes are the runtime's to check).
 * drop_dim: v with dim d removed (a slice's metadata: map's rows, scan's
 * steps); kind NONE when v is not a tensor with a dim d.
 * insert_dim: v with a dim of the given size inserted at d, 0 <= d <= rank
 * (rows stacked: map's and scan's outputs, a batch in front); kind NONE when
 * v is not a tensor, d is out of range or v has rank HOP_MAX_RANK already.
 */
bool hop_value_info_is_bool_scalar(const hop_value_info *v);
bool hop_value_info_is_int_scalar(const hop_value_info *v);
bool hop_value_info_compatible(const hop_value_info *a, const hop_value_info *b);
/* Whether a and b are the same value info: the same kind, and the same
 * SymInt, or the same dtype and the same (interned) sizes. */
bool hop_value_info_equal(const hop_value_info *a, const hop_value_info *b);
hop_value_info hop_value_info_drop_dim(const hop_value_info *v, int d);
hop_value_info hop_value_info_insert_dim(const hop_value_info *v, int d, const hop_expr *size);

/*
 * Shape inference: checks the operands of op and fills *out.  Symbolic sizes
 * are compared through hop_shape_env_decide (so a decision by a hint becomes a
 * guard, and an undecidable unbacked one is HOP_DATA_DEPENDENT).  item and
 * nonzero create unbacked symbols in env.  Errors name the op and the shapes or
 * dtypes involved: HOP_SHAPE ("add: cannot broadcast f32[3, 4] with f32[5]"),
 * HOP_DTYPE, HOP_INVALID (wrong operand kind or count, dim out of range).  On
 * error *out is unspecified and env's guards are as before the call.
 */
hop_status hop_op_infer(hop_shape_env *env, hop_op op, const hop_operand *args, size_t nargs,
                        hop_value_info *out);

/* ----------------------------------------------------------- view geometry */

/* A strided view of a storage: sizes and strides in elements, offset in
 * elements from the storage's first element. */
typedef struct hop_view {
    int rank;
    int64_t sizes[HOP_MAX_RANK];
    int64_t strides[HOP_MAX_RANK];
    int64_t offset;
} hop_view;

/*
 * View geometry over concrete sizes, the one implementation of it (eager
 * views, view kernels and plans run it): the view that op makes of x, whose
 * elements have dtype (for messages only), into *out.  p[np] are the op's
 * int parameters after the tensor; dims may be negative (Python's):
 *   reshape, view  the new sizes, at most one of them -1
 *   transpose      the two dims
 *   permute        one dim per dim of x, in their new order
 *   unsqueeze      the new dim
 *   squeeze        the dims of x that stay, in order (the caller decides
 *                  which dims of size 1 go)
 *   expand         the new sizes (-1 keeps a dim's size)
 *   select         the dim and the index (negative: from the end)
 *   slice          the dim, start, end and step; bit 0 of none makes start
 *                  None (0), bit 1 makes end None (the size)
 *   dynamic_slice  the dim, the start as read from its tensor (clamped here,
 *                  hop_dynamic_start), the size and whether the dim stays (1) or
 *                  goes (0: size 1, x[i])
 *   mask_gradient  nothing: x itself
 * out->offset is x's offset plus the view's.  reshape and view of strides
 * that cannot be viewed so set *copy (HOP_OK returned; out gets the
 * contiguous strides of a copy): reshape then copies, view refuses.
 * Errors name what (the call, e.g. "t = view(x, [5, 3])"; NULL: the op's
 * name) and the input: HOP_SHAPE "<what>: dim out of range (input
 * f32[3, 4])" for a dim, a dim count or a size that does not fit;
 * HOP_INDEX "<what>: index 7 is out of range for dim 0 of f32[3, 4]";
 * HOP_INVALID "reshape: int64 overflow computing a * b" for sizes whose
 * product overflows; HOP_UNSUPPORTED for an op that is not a view op;
 * HOP_MISUSE for NULL pointers.  Allocates nothing.
 */
hop_status hop_view_of(hop_op op, hop_dtype dtype, const hop_view *x, const int64_t *p, int np,
                       unsigned none, const char *what, hop_view *out, bool *copy);

/*
 * The start dynamic_slice and dynamic_update_slice use for a start read as
 * `start` in a dim of n elements and a slice of size elements (0 <= size <=
 * n): a negative start counts from the end (start + n), then it is clamped
 * into [0, n - size], so the slice always fits (JAX's dynamic_slice).  Never
 * fails.
 */
int64_t hop_dynamic_start(int64_t start, int64_t n, int64_t size);
/*
 * dynamic_slice's geometry over (rank, sizes, strides), for hop_view_of and
 * the VM's View of a dynamic_slice (runtime/vm.c, which reads the start
 * straight from its tensor): sizes and strides of the view into orank,
 * osizes, ostrides (dim `dim` of `size` elements, or gone when !keep), and
 * the offset it adds, in elements, from the start hop_dynamic_start clamps.
 * The caller checked dim and 0 <= size <= sizes[dim].  Never fails.
 */
int64_t hop_dynamic_view(int rank, const int64_t *sizes, const int64_t *strides, int dim,
                         int64_t start, int64_t size, bool keep, int *orank, int64_t *osizes,
                         int64_t *ostrides);

#ifdef __cplusplus
}
#endif
#endif /* HOP_OPS_H */
