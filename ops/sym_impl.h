/*
 * ops/sym_impl.h - the layout of symbolic expressions and of the ShapeEnv,
 * shared by sym.c (constructors, canonical form), sym_print.c (printer, order),
 * sym_eval.c (evaluation, substitution, bounds) and shape_env.c.  Nothing
 * outside ops/ includes it.
 */
#ifndef HOP_OPS_SYM_IMPL_H
#define HOP_OPS_SYM_IMPL_H

#include "core/hash.h"
#include "hop/ops.h"

/*
 * One interned expression.  Nodes live in env's arena; the intern table maps
 * the structural key (kind, value, operand pointers, coefficients) to the node,
 * so structural equality is pointer equality.  Per kind:
 *
 *   CONST            value
 *   SYMBOL           id, seq, name, unbacked, hint, lo/hi (mutable range)
 *   ADD              value = constant; ops[i] = monomial, coefs[i] = its
 *                    coefficient (never 0); ops in term order (sym_print.c)
 *   MUL              ops[i] = atom, coefs[i] = exponent >= 1; ops sorted by
 *                    hop_expr_compare; n >= 2 or a single exponent >= 2
 *   FLOORDIV, MOD    ops[0] // ops[1], ops[0] % ops[1]
 *   MAX, MIN         n >= 2 distinct operands sorted by hop_expr_compare,
 *                    at most one constant
 *   EQ NE LT LE      ops[0] REL ops[1], sides normalised by sym.c
 *   AND, OR          n >= 2 distinct operands sorted by hop_expr_compare
 *   NOT              ops[0], never a relation, constant or NOT
 */
struct hop_expr {
    UT_hash_handle hh;
    hop_shape_env *env;
    hop_expr_kind kind;
    bool is_bool;
    bool has_unbacked; /* some free symbol is unbacked */
    int64_t value;
    size_t n;
    const hop_expr **ops;
    int64_t *coefs;
    /* Free symbols, sorted by hop_expr_compare, without duplicates. */
    const hop_expr **syms;
    size_t nsyms;
    /* SYMBOL only. */
    int64_t id;  /* dense over all symbols of the env */
    int64_t seq; /* k in s<k> or u<k> */
    bool unbacked;
    bool has_hint;
    int64_t hint;
    int64_t lo, hi;
    const char *name;
    /* Non-symbols: the bounds cached at env->ranges_epoch == bounds_epoch. */
    int64_t blo, bhi;
    uint64_t bounds_epoch;
    /* Cached text for hop_expr_str. */
    const char *str;
    /* The intern key (SYMBOL nodes are not in the table). */
    const uint64_t *key;
    size_t keylen; /* bytes */
};

typedef struct hop__duck_entry {
    int64_t hint;
    const hop_expr *sym;
    UT_hash_handle hh;
} hop__duck_entry;

typedef struct hop__guard_entry {
    const hop_expr *cond;
    UT_hash_handle hh;
} hop__guard_entry;

struct hop_shape_env {
    hop__arena arena;
    hop_expr *table; /* intern table */
    hop_expr **symbols;
    size_t nsymbols, capsymbols;
    int64_t nbacked, nunbacked;
    hop__duck_entry *duck;
    uint64_t ranges_epoch; /* bumped when a range narrows; starts at 1 */
    const hop_expr **guards;
    size_t nguards, capguards;
    hop__guard_entry *guard_set;
    /* hop_shape_env_mark's; while marked, hop_expr_str caches no text (an
     * older node would keep text the rollback takes back). */
    bool marked;
    size_t mark_nsymbols, mark_nguards;
    hop_expr *mark_last; /* the newest interned node then (NULL: none) */
    hop__arena_mark mark_arena;
    /* hop_sym_const's last constants, by value mod HOP__NCONSTS: a lowering
     * asks for the same few sizes many times a node, and the intern table's
     * hashed lookup cost ~300 instructions a time (issue #30).  Filled only
     * while no mark is set, so a rollback never takes back a node held here. */
    const hop_expr *consts[64];
};

/* Checked int64 arithmetic: true on overflow (then *r is unspecified). */
static inline bool
hop__add_overflows(int64_t a, int64_t b, int64_t *r)
{
#if defined(__GNUC__)
    return __builtin_add_overflow(a, b, r);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return true;
    *r = a + b;
    return false;
#endif
}

static inline bool
hop__mul_overflows(int64_t a, int64_t b, int64_t *r)
{
#if defined(__GNUC__)
    return __builtin_mul_overflow(a, b, r);
#else
    if (a == 0 || b == 0) {
        *r = 0;
        return false;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
        return true;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return true;
    *r = a * b;
    return false;
#endif
}

/* Python floor division and modulo; the caller excludes b == 0.  floordiv
 * overflows only for INT64_MIN // -1 (true returned). */
bool hop__floordiv_overflows(int64_t a, int64_t b, int64_t *r);
int64_t hop__pymod(int64_t a, int64_t b);
/* a**e for e >= 0, checked. */
bool hop__pow_overflows(int64_t a, int64_t e, int64_t *r);

/* Validates an operand of fn (index i counted from 1): HOP_MISUSE for NULL or
 * another env's expression, HOP_INVALID for the wrong type. */
hop_status hop__sym_check(hop_shape_env *env, const hop_expr *e, const char *fn, int i,
                          bool want_bool);

/* The order of terms in a sum, sympy's lex order: the term whose monomial has
 * the larger exponent vector over atoms in hop_expr_compare order comes first,
 * so `s0**2 + 2*s0 + 1` and `s0*s1 + s0`. */
int hop__term_order(const hop_expr *m1, const hop_expr *m2);

/* Interns a node built from parts (copied).  NULL with HOP_NOMEM. */
const hop_expr *hop__sym_intern(hop_shape_env *env, hop_expr_kind kind, int64_t value, size_t n,
                                const hop_expr *const *ops, const int64_t *coefs);
/* a**k for k >= 0 (k == 0 gives 1). */
const hop_expr *hop__sym_pow(hop_shape_env *env, const hop_expr *a, int64_t k);
/* Rebuilds a node of e's kind from new operands through the public
 * constructors (used by substitution). */
const hop_expr *hop__sym_rebuild(hop_shape_env *env, const hop_expr *e, const hop_expr *const *ops);

/* Range of an int expression, saturating at the int64 limits; for a bool
 * expression [0, 1] narrowed when it is decided by the ranges. */
void hop__sym_bounds(const hop_expr *e, int64_t *lo, int64_t *hi);
/* 1 true, 0 false, -1 unknown: a SymBool decided by value ranges alone. */
int hop__sym_decide_static(const hop_expr *e);

/* Evaluation with a lookup for symbols; HOP_INVALID on unbound/overflow/zero
 * division with the error context set. */
typedef bool (*hop__sym_lookup)(void *ud, const hop_expr *sym, int64_t *out);
hop_status hop__sym_eval(const hop_expr *e, hop__sym_lookup lookup, void *ud, int64_t *out);

/* The printer onto a builder. */
void hop__sym_print_buf(hop__buf *b, const hop_expr *e);

#endif /* HOP_OPS_SYM_IMPL_H */
