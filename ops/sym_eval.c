/*
 * ops/sym_eval.c - what an expression is worth: evaluation under bindings
 * (exact, Python semantics, overflow is an error), substitution, and value
 * ranges by interval arithmetic (saturating, so always sound) with the static
 * decisions the ShapeEnv takes from them.
 */
#include "ops/sym_impl.h"

#include <inttypes.h>

/* ------------------------------------------------------------ evaluation */

static hop_status
eval_error(const char *what, const hop_expr *e)
{
    char text[256];
    hop_expr_print(e, text, sizeof text);
    return hop_error(HOP_INVALID, "hop_expr_eval: %s in %s", what, text);
}

static hop_status
eval_rec(const hop_expr *e, hop__sym_lookup lookup, void *ud, int64_t *out)
{
    int64_t a, b, v = 0;
    hop_status st;
    switch (e->kind) {
    case HOP_EXPR_CONST:
        *out = e->value;
        return HOP_OK;
    case HOP_EXPR_SYMBOL:
        if (!lookup(ud, e, out))
            return hop_error(HOP_INVALID, "hop_expr_eval: symbol %s is unbound", e->name);
        return HOP_OK;
    case HOP_EXPR_ADD:
        v = e->value;
        for (size_t i = 0; i < e->n; i++) {
            if ((st = eval_rec(e->ops[i], lookup, ud, &a)) != HOP_OK)
                return st;
            if (hop__mul_overflows(a, e->coefs[i], &a) || hop__add_overflows(v, a, &v))
                return eval_error("int64 overflow", e);
        }
        *out = v;
        return HOP_OK;
    case HOP_EXPR_MUL:
        v = 1;
        for (size_t i = 0; i < e->n; i++) {
            if ((st = eval_rec(e->ops[i], lookup, ud, &a)) != HOP_OK)
                return st;
            if (hop__pow_overflows(a, e->coefs[i], &a) || hop__mul_overflows(v, a, &v))
                return eval_error("int64 overflow", e);
        }
        *out = v;
        return HOP_OK;
    case HOP_EXPR_FLOORDIV:
    case HOP_EXPR_MOD:
        if ((st = eval_rec(e->ops[0], lookup, ud, &a)) != HOP_OK ||
            (st = eval_rec(e->ops[1], lookup, ud, &b)) != HOP_OK)
            return st;
        if (b == 0)
            return eval_error(e->kind == HOP_EXPR_MOD ? "modulo by zero" : "division by zero", e);
        if (e->kind == HOP_EXPR_MOD)
            *out = hop__pymod(a, b);
        else if (hop__floordiv_overflows(a, b, out))
            return eval_error("int64 overflow", e);
        return HOP_OK;
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
        for (size_t i = 0; i < e->n; i++) {
            if ((st = eval_rec(e->ops[i], lookup, ud, &a)) != HOP_OK)
                return st;
            if (i == 0 || (e->kind == HOP_EXPR_MAX ? a > v : a < v))
                v = a;
        }
        *out = v;
        return HOP_OK;
    case HOP_EXPR_TRUE:
    case HOP_EXPR_FALSE:
        *out = e->kind == HOP_EXPR_TRUE;
        return HOP_OK;
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE:
        if ((st = eval_rec(e->ops[0], lookup, ud, &a)) != HOP_OK ||
            (st = eval_rec(e->ops[1], lookup, ud, &b)) != HOP_OK)
            return st;
        *out = e->kind == HOP_EXPR_EQ   ? a == b
               : e->kind == HOP_EXPR_NE ? a != b
               : e->kind == HOP_EXPR_LT ? a < b
                                        : a <= b;
        return HOP_OK;
    case HOP_EXPR_AND:
    case HOP_EXPR_OR:
        /* Every operand is evaluated, as Python's & and | do. */
        v = e->kind == HOP_EXPR_AND;
        for (size_t i = 0; i < e->n; i++) {
            if ((st = eval_rec(e->ops[i], lookup, ud, &a)) != HOP_OK)
                return st;
            v = e->kind == HOP_EXPR_AND ? (v && a) : (v || a);
        }
        *out = v;
        return HOP_OK;
    case HOP_EXPR_NOT:
        if ((st = eval_rec(e->ops[0], lookup, ud, &a)) != HOP_OK)
            return st;
        *out = !a;
        return HOP_OK;
    }
    return hop_error(HOP_INVALID, "hop_expr_eval: unknown expression kind %d", (int)e->kind);
}

hop_status
hop__sym_eval(const hop_expr *e, hop__sym_lookup lookup, void *ud, int64_t *out)
{
    int64_t v;
    hop_status st = eval_rec(e, lookup, ud, &v);
    if (st == HOP_OK)
        *out = v;
    return st;
}

typedef struct bindings {
    const int64_t *values;
    size_t n;
} bindings;

static bool
lookup_values(void *ud, const hop_expr *sym, int64_t *out)
{
    const bindings *b = ud;
    if (sym->id < 0 || (size_t)sym->id >= b->n || b->values[sym->id] == HOP_UNBOUND)
        return false;
    *out = b->values[sym->id];
    return true;
}

hop_status
hop_expr_eval(const hop_expr *e, const int64_t *values, size_t nvalues, int64_t *out)
{
    if (e == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_expr_eval: %s is NULL", e == NULL ? "e" : "out");
    if (nvalues > 0 && values == NULL)
        return hop_error(HOP_MISUSE, "hop_expr_eval: values is NULL but nvalues is %zu", nvalues);
    bindings b = {values, nvalues};
    return hop__sym_eval(e, lookup_values, &b, out);
}

/* ---------------------------------------------------------- substitution */

static const hop_expr *
subs_rec(hop_shape_env *env, const hop_expr *e, const hop_expr *const *syms,
         const hop_expr *const *vals, size_t n)
{
    bool touched = false;
    for (size_t i = 0; i < n && !touched; i++)
        for (size_t j = 0; j < e->nsyms && !touched; j++)
            touched = e->syms[j] == syms[i];
    if (!touched)
        return e;
    if (e->kind == HOP_EXPR_SYMBOL) {
        for (size_t i = 0; i < n; i++)
            if (syms[i] == e)
                return vals[i];
        return e;
    }
    const hop_expr **ops = hop__malloc(e->n * sizeof *ops);
    if (ops == NULL)
        return NULL;
    const hop_expr *r = NULL;
    for (size_t i = 0; i < e->n; i++)
        if ((ops[i] = subs_rec(env, e->ops[i], syms, vals, n)) == NULL)
            goto done;
    r = hop__sym_rebuild(env, e, ops);
done:
    hop__free(ops);
    return r;
}

const hop_expr *
hop_sym_subs(hop_shape_env *env, const hop_expr *e, const hop_expr *const *syms,
             const hop_expr *const *vals, size_t n)
{
    const char *fn = "hop_sym_subs";
    if (e != NULL && hop__sym_check(env, e, fn, 1, e->is_bool) != HOP_OK)
        return NULL;
    if (e == NULL || (n > 0 && (syms == NULL || vals == NULL))) {
        hop_error(HOP_MISUSE, "%s: %s is NULL", fn,
                  e == NULL      ? "e"
                  : syms == NULL ? "syms"
                                 : "vals");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (hop__sym_check(env, syms[i], fn, (int)i + 2, false) != HOP_OK ||
            hop__sym_check(env, vals[i], fn, (int)i + 2, false) != HOP_OK)
            return NULL;
        if (syms[i]->kind != HOP_EXPR_SYMBOL) {
            char text[160];
            hop_expr_print(syms[i], text, sizeof text);
            hop_error(HOP_INVALID, "%s: syms[%zu] is %s, not a symbol", fn, i, text);
            return NULL;
        }
    }
    return subs_rec(env, e, syms, vals, n);
}

/* ---------------------------------------------------------- value ranges */

static int64_t
sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (hop__add_overflows(a, b, &r))
        return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t
sat_neg(int64_t a)
{
    return a == INT64_MIN ? INT64_MAX : -a;
}

static int64_t
sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (hop__mul_overflows(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

static int64_t
sat_pow(int64_t a, int64_t e)
{
    int64_t r;
    if (hop__pow_overflows(a, e, &r))
        return a < 0 && (e & 1) ? INT64_MIN : INT64_MAX;
    return r;
}

static int64_t
sat_floordiv(int64_t a, int64_t b)
{
    int64_t r;
    if (hop__floordiv_overflows(a, b, &r))
        return INT64_MAX;
    return r;
}

static int64_t
min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t
max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static void
interval_mul(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *lo, int64_t *hi)
{
    int64_t p[4] = {sat_mul(a, c), sat_mul(a, d), sat_mul(b, c), sat_mul(b, d)};
    *lo = min64(min64(p[0], p[1]), min64(p[2], p[3]));
    *hi = max64(max64(p[0], p[1]), max64(p[2], p[3]));
}

static void
interval_pow(int64_t lo, int64_t hi, int64_t e, int64_t *rlo, int64_t *rhi)
{
    if ((e & 1) || lo >= 0) {
        /* monotone */
        *rlo = sat_pow(lo, e);
        *rhi = sat_pow(hi, e);
    } else if (hi <= 0) {
        *rlo = sat_pow(hi, e);
        *rhi = sat_pow(lo, e);
    } else {
        *rlo = 0;
        *rhi = max64(sat_pow(lo, e), sat_pow(hi, e));
    }
}

static void bounds_uncached(const hop_expr *e, int64_t *lo, int64_t *hi);

/* Cached per node, because a DAG with shared subexpressions would otherwise
 * be walked once per path. */
void
hop__sym_bounds(const hop_expr *e, int64_t *lo, int64_t *hi)
{
    if (e->kind == HOP_EXPR_CONST || e->kind == HOP_EXPR_SYMBOL) {
        bounds_uncached(e, lo, hi);
        return;
    }
    hop_expr *m = (hop_expr *)e; /* the cache is invisible to users */
    if (m->bounds_epoch != e->env->ranges_epoch) {
        bounds_uncached(e, &m->blo, &m->bhi);
        m->bounds_epoch = e->env->ranges_epoch;
    }
    *lo = m->blo;
    *hi = m->bhi;
}

/*
 * Linear forms k + sum c[i] * m[i], for bounds that see through Min and Max.
 * Interval arithmetic bounds each term apart, so `u0 - Min(u0, x)` (which is
 * Max(0, u0 - x), never negative) gets [-inf, inf].  Here equal atoms
 * (interned: the same pointer) are merged, so u0 - u0 cancels, and a Min or
 * Max term is distributed over the rest, c * Min(b...) + r = Min(c*b + r...)
 * for c > 0 (a Max for c < 0), each of those forms bounded again.  Both are
 * exact rewrites, so the bounds stay sound, and never looser than the terms'
 * apart.  A form past LIN_TERMS terms, an overflow of a coefficient, or more
 * than LIN_FORMS forms in a distribution gives up (ok false: the caller
 * keeps the plain bounds).
 */
#define LIN_TERMS 16
#define LIN_FORMS 32

typedef struct lin {
    bool ok;
    int64_t k;
    size_t n;
    const hop_expr *m[LIN_TERMS];
    int64_t c[LIN_TERMS];
} lin;

static bool
is_minmax(const hop_expr *e)
{
    return e->kind == HOP_EXPR_MIN || e->kind == HOP_EXPR_MAX;
}

/* l += c * e, sums flattened into their terms. */
static void
lin_add(lin *l, const hop_expr *e, int64_t c)
{
    int64_t v;
    if (!l->ok || c == 0)
        return;
    if (e->kind == HOP_EXPR_CONST || e->kind == HOP_EXPR_ADD) {
        if (hop__mul_overflows(c, e->value, &v) || hop__add_overflows(l->k, v, &l->k)) {
            l->ok = false;
            return;
        }
        for (size_t i = 0; e->kind == HOP_EXPR_ADD && i < e->n; i++) {
            if (hop__mul_overflows(c, e->coefs[i], &v)) {
                l->ok = false;
                return;
            }
            lin_add(l, e->ops[i], v);
        }
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (l->m[i] == e) {
            l->ok = !hop__add_overflows(l->c[i], c, &l->c[i]);
            return;
        }
    }
    if (l->n == LIN_TERMS) {
        l->ok = false;
        return;
    }
    l->m[l->n] = e;
    l->c[l->n++] = c;
}

/* The bounds of l into [*lo, *hi]; *forms counts down the forms a
 * distribution may still make; false where l gave up. */
static bool
lin_bounds(const lin *l, int *forms, int64_t *lo, int64_t *hi)
{
    if (!l->ok)
        return false;
    for (size_t i = 0; i < l->n; i++) {
        const hop_expr *m = l->m[i];
        if (l->c[i] == 0 || !is_minmax(m) || *forms < (int)m->n)
            continue;
        *forms -= (int)m->n;
        /* a Min when c > 0 keeps Min, c < 0 makes it a Max, and so on */
        bool min = (m->kind == HOP_EXPR_MIN) == (l->c[i] > 0);
        for (size_t j = 0; j < m->n; j++) {
            lin sub = *l;
            sub.c[i] = 0;
            lin_add(&sub, m->ops[j], l->c[i]);
            int64_t a, b;
            if (!lin_bounds(&sub, forms, &a, &b))
                return false;
            if (j == 0) {
                *lo = a;
                *hi = b;
            } else {
                *lo = min ? min64(*lo, a) : max64(*lo, a);
                *hi = min ? min64(*hi, b) : max64(*hi, b);
            }
        }
        return true;
    }
    *lo = *hi = l->k;
    for (size_t i = 0; i < l->n; i++) {
        int64_t a, b, x, y;
        if (l->c[i] == 0)
            continue;
        hop__sym_bounds(l->m[i], &a, &b);
        interval_mul(a, b, l->c[i], l->c[i], &x, &y);
        *lo = sat_add(*lo, x);
        *hi = sat_add(*hi, y);
    }
    return true;
}

/* The bounds of a - b (b NULL: of a) through lin_bounds; false where it
 * gave up. */
static bool
diff_bounds(const hop_expr *a, const hop_expr *b, int64_t *lo, int64_t *hi)
{
    lin l = {.ok = true};
    lin_add(&l, a, 1);
    if (b != NULL)
        lin_add(&l, b, -1);
    int forms = LIN_FORMS;
    return lin_bounds(&l, &forms, lo, hi);
}

/* Whether an ADD has a Min or Max term (one lin_bounds can see through). */
static bool
has_minmax_term(const hop_expr *e)
{
    for (size_t i = 0; i < e->n; i++) {
        if (is_minmax(e->ops[i]))
            return true;
    }
    return false;
}

/* Whether e is a Min or Max, or a sum with one among its terms. */
static bool
has_minmax(const hop_expr *e)
{
    return is_minmax(e) || (e->kind == HOP_EXPR_ADD && has_minmax_term(e));
}

static void
bounds_uncached(const hop_expr *e, int64_t *lo, int64_t *hi)
{
    int64_t a, b, c, d, x, y;
    switch (e->kind) {
    case HOP_EXPR_CONST:
        *lo = *hi = e->value;
        return;
    case HOP_EXPR_SYMBOL:
        *lo = e->lo;
        *hi = e->hi;
        return;
    case HOP_EXPR_ADD:
        if (has_minmax_term(e) && diff_bounds(e, NULL, lo, hi))
            return;
        *lo = *hi = e->value;
        for (size_t i = 0; i < e->n; i++) {
            hop__sym_bounds(e->ops[i], &a, &b);
            interval_mul(a, b, e->coefs[i], e->coefs[i], &x, &y);
            *lo = sat_add(*lo, x);
            *hi = sat_add(*hi, y);
        }
        return;
    case HOP_EXPR_MUL:
        *lo = *hi = 1;
        for (size_t i = 0; i < e->n; i++) {
            hop__sym_bounds(e->ops[i], &a, &b);
            interval_pow(a, b, e->coefs[i], &c, &d);
            interval_mul(*lo, *hi, c, d, &x, &y);
            *lo = x;
            *hi = y;
        }
        return;
    case HOP_EXPR_FLOORDIV:
        hop__sym_bounds(e->ops[0], &a, &b);
        hop__sym_bounds(e->ops[1], &c, &d);
        if (c > 0 || d < 0) {
            /* For a divisor of one sign, a // b is monotone in each
             * argument, so the corners bound it. */
            int64_t p[4] = {sat_floordiv(a, c), sat_floordiv(a, d), sat_floordiv(b, c),
                            sat_floordiv(b, d)};
            *lo = min64(min64(p[0], p[1]), min64(p[2], p[3]));
            *hi = max64(max64(p[0], p[1]), max64(p[2], p[3]));
        } else {
            /* |a // b| <= |a| for any nonzero integer b. */
            x = max64(sat_neg(a), b);
            x = max64(x, max64(a, sat_neg(b)));
            *lo = sat_neg(x);
            *hi = x;
        }
        return;
    case HOP_EXPR_MOD:
        hop__sym_bounds(e->ops[0], &a, &b);
        hop__sym_bounds(e->ops[1], &c, &d);
        if (c > 0) {
            *lo = 0;
            *hi = d - 1;
            if (a >= 0)
                *hi = min64(*hi, b);
        } else if (d < 0) {
            *lo = c + 1;
            *hi = 0;
            if (b <= 0)
                *lo = max64(*lo, a);
        } else {
            x = max64(sat_neg(c), d);
            *lo = x == 0 ? 0 : -(x - 1);
            *hi = x == 0 ? 0 : x - 1;
        }
        return;
    case HOP_EXPR_MAX:
    case HOP_EXPR_MIN:
        for (size_t i = 0; i < e->n; i++) {
            hop__sym_bounds(e->ops[i], &a, &b);
            if (i == 0) {
                *lo = a;
                *hi = b;
            } else if (e->kind == HOP_EXPR_MAX) {
                *lo = max64(*lo, a);
                *hi = max64(*hi, b);
            } else {
                *lo = min64(*lo, a);
                *hi = min64(*hi, b);
            }
        }
        return;
    default: {
        int v = hop__sym_decide_static(e);
        *lo = v == 1 ? 1 : 0;
        *hi = v == 0 ? 0 : 1;
        return;
    }
    }
}

int
hop__sym_decide_static(const hop_expr *e)
{
    int64_t a, b, c, d;
    int v, r;
    switch (e->kind) {
    case HOP_EXPR_TRUE:
        return 1;
    case HOP_EXPR_FALSE:
        return 0;
    case HOP_EXPR_EQ:
    case HOP_EXPR_NE:
    case HOP_EXPR_LT:
    case HOP_EXPR_LE:
        /* Compare the sides' ranges directly: no subtraction to overflow. */
        hop__sym_bounds(e->ops[0], &a, &b);
        hop__sym_bounds(e->ops[1], &c, &d);
        if (e->kind == HOP_EXPR_LT)
            r = b < c ? 1 : a >= d ? 0 : -1;
        else if (e->kind == HOP_EXPR_LE)
            r = b <= c ? 1 : a > d ? 0 : -1;
        else
            r = (a == b && b == c && c == d) ? 1 : (b < c || a > d) ? 0 : -1;
        if (r < 0 && (has_minmax(e->ops[0]) || has_minmax(e->ops[1])) &&
            diff_bounds(e->ops[0], e->ops[1], &a, &b)) {
            /* the sides' ranges overlap, but their difference may not
             * (Max(0, u0 - 1) <= u0: u0 - Max(0, u0 - 1) is Min(u0, 1)) */
            if (e->kind == HOP_EXPR_LT)
                r = b < 0 ? 1 : a >= 0 ? 0 : -1;
            else if (e->kind == HOP_EXPR_LE)
                r = b <= 0 ? 1 : a > 0 ? 0 : -1;
            else
                r = (a == 0 && b == 0) ? 1 : (b < 0 || a > 0) ? 0 : -1;
        }
        if (e->kind == HOP_EXPR_LT || e->kind == HOP_EXPR_LE)
            return r;
        return e->kind == HOP_EXPR_EQ || r < 0 ? r : !r;
    case HOP_EXPR_AND:
    case HOP_EXPR_OR:
        r = e->kind == HOP_EXPR_AND;
        for (size_t i = 0; i < e->n; i++) {
            v = hop__sym_decide_static(e->ops[i]);
            if (v == (e->kind == HOP_EXPR_OR))
                return v; /* absorbing */
            if (v < 0)
                r = -1;
        }
        return r;
    case HOP_EXPR_NOT:
        v = hop__sym_decide_static(e->ops[0]);
        return v < 0 ? v : !v;
    default:
        return -1;
    }
}
