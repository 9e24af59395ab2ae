/*
 * ops/shape_env.c - the ShapeEnv: the owner of every expression (arena and
 * intern table), the symbols (backed s<k> from example sizes with duck sizing
 * and 0/1 specialisation, unbacked u<k> with value ranges; two name sequences
 * over one dense id space), decisions on SymBools and the guards they record.
 *
 * A decision is static when the value ranges settle it (no guard: it holds
 * for every input the symbols' ranges admit); otherwise the hints settle it
 * and the outcome becomes a guard, which upper layers check before reusing a
 * trace.  Unbacked symbols have no hint, so a condition on them that the
 * ranges do not settle is data-dependent.
 */
#include "ops/sym_impl.h"

#include <inttypes.h>
#include <stdio.h>

hop_shape_env *
hop_shape_env_new(void)
{
    hop_shape_env *env = hop__calloc(1, sizeof *env);
    if (env == NULL)
        return NULL;
    hop__arena_init(&env->arena);
    env->ranges_epoch = 1;
    return env;
}

void
hop_shape_env_free(hop_shape_env *env)
{
    if (env == NULL)
        return;
    HASH_CLEAR(hh, env->table);
    HASH_CLEAR(hh, env->duck);
    hop__guard_entry *g, *tmp;
    HASH_ITER(hh, env->guard_set, g, tmp)
    {
        HASH_DEL(env->guard_set, g);
        hop__free(g);
    }
    hop__free(env->symbols);
    hop__free(env->guards);
    hop__arena_destroy(&env->arena);
    hop__free(env);
}

/* ---------------------------------------------------------------- symbols */

static hop_expr *
new_symbol(hop_shape_env *env, bool unbacked, int64_t hint, int64_t lo, int64_t hi)
{
    if (hop__grow((void **)&env->symbols, &env->capsymbols, env->nsymbols + 1,
                  sizeof *env->symbols) != HOP_OK)
        return NULL;
    hop_expr *s = hop__arena_zalloc(&env->arena, sizeof *s);
    const hop_expr **self = hop__arena_alloc(&env->arena, sizeof *self);
    int64_t seq = unbacked ? env->nunbacked : env->nbacked;
    char *name = hop__arena_printf(&env->arena, "%c%" PRId64, unbacked ? 'u' : 's', seq);
    if (s == NULL || self == NULL || name == NULL)
        return NULL;
    s->env = env;
    s->kind = HOP_EXPR_SYMBOL;
    s->id = (int64_t)env->nsymbols;
    s->seq = seq;
    s->name = name;
    s->unbacked = unbacked;
    s->has_unbacked = unbacked;
    s->has_hint = !unbacked;
    s->hint = unbacked ? 0 : hint;
    s->lo = lo;
    s->hi = hi;
    *self = s;
    s->syms = self;
    s->nsyms = 1;
    env->symbols[env->nsymbols++] = s;
    if (unbacked)
        env->nunbacked++;
    else
        env->nbacked++;
    return s;
}

const hop_expr *
hop_shape_env_size_symbol(hop_shape_env *env, int64_t hint, bool duck, bool specialize_01)
{
    if (env == NULL) {
        hop_error(HOP_MISUSE, "hop_shape_env_size_symbol: the ShapeEnv is NULL");
        return NULL;
    }
    if (hint < 0) {
        hop_error(HOP_INVALID, "hop_shape_env_size_symbol: size %" PRId64 " is negative", hint);
        return NULL;
    }
    if (specialize_01 && hint <= 1)
        return hop_sym_const(env, hint);
    hop__duck_entry *d = NULL;
    if (duck) {
        HASH_FIND(hh, env->duck, &hint, sizeof hint, d);
        if (d)
            return d->sym;
        d = hop__arena_zalloc(&env->arena, sizeof *d);
        if (d == NULL)
            return NULL;
    }
    /* Sizes 0 and 1 are what 0/1 specialisation excludes; a symbol that may
     * be 0 or 1 gets the honest range. */
    hop_expr *s = new_symbol(env, false, hint, hint >= 2 ? 2 : 0, INT64_MAX);
    if (s == NULL)
        return NULL;
    if (duck) {
        d->hint = hint;
        d->sym = s;
        hop_status st;
        HOP_HASH_ADD(st, hh, env->duck, hint, sizeof d->hint, d);
        if (st != HOP_OK) {
            /* Undo the symbol so that a retry names it the same. */
            env->nsymbols--;
            env->nbacked--;
            return NULL;
        }
    }
    return s;
}

const hop_expr *
hop_shape_env_unbacked(hop_shape_env *env, int64_t lo, int64_t hi)
{
    if (env == NULL) {
        hop_error(HOP_MISUSE, "hop_shape_env_unbacked: the ShapeEnv is NULL");
        return NULL;
    }
    if (lo > hi) {
        hop_error(HOP_INVALID, "hop_shape_env_unbacked: empty range [%" PRId64 ", %" PRId64 "]", lo,
                  hi);
        return NULL;
    }
    return new_symbol(env, true, 0, lo, hi);
}

hop_status
hop_shape_env_constrain(hop_shape_env *env, const hop_expr *sym, int64_t lo, int64_t hi)
{
    const char *fn = "hop_shape_env_constrain";
    hop_status st = hop__sym_check(env, sym, fn, 1, false);
    if (st != HOP_OK)
        return st;
    if (sym->kind != HOP_EXPR_SYMBOL) {
        char text[160];
        hop_expr_print(sym, text, sizeof text);
        return hop_error(HOP_INVALID, "%s: %s is not a symbol", fn, text);
    }
    int64_t nlo = lo > sym->lo ? lo : sym->lo, nhi = hi < sym->hi ? hi : sym->hi;
    if (nlo > nhi)
        return hop_error(HOP_INVALID,
                         "%s: %s in [%" PRId64 ", %" PRId64 "] cannot also be in [%" PRId64
                         ", %" PRId64 "]",
                         fn, sym->name, sym->lo, sym->hi, lo, hi);
    hop_expr *s = (hop_expr *)sym; /* symbols are the env's own mutable nodes */
    if (s->lo != nlo || s->hi != nhi)
        env->ranges_epoch++;
    s->lo = nlo;
    s->hi = nhi;
    return HOP_OK;
}

/* Whether e mentions a symbol with id >= n. */
static bool
mentions_symbols_from(const hop_expr *e, size_t n)
{
    for (size_t i = 0; i < e->nsyms; i++)
        if ((size_t)e->syms[i]->id >= n)
            return true;
    return false;
}

/*
 * Symbols are appended in id order and each name sequence counts up, so
 * dropping the tail and recounting restores the counters.  The forgotten
 * nodes stay in the arena (the intern table keys on pointers, so expressions
 * built from them can never be found for the new symbols that reuse their
 * names); what must go is every way to reach them: the duck table and the
 * guards that mention them (all recorded after them, so the guards before
 * the checkpoint keep their indices).
 */
void
hop_shape_env_truncate_symbols(hop_shape_env *env, size_t n)
{
    if (env == NULL || n >= env->nsymbols)
        return;
    hop__duck_entry *d, *tmp;
    HASH_ITER(hh, env->duck, d, tmp)
    {
        if ((size_t)d->sym->id >= n)
            HASH_DEL(env->duck, d); /* arena memory: nothing to free */
    }
    size_t out = 0;
    for (size_t i = 0; i < env->nguards; i++) {
        const hop_expr *g = env->guards[i];
        if (!mentions_symbols_from(g, n)) {
            env->guards[out++] = g;
            continue;
        }
        hop__guard_entry *e = NULL;
        HASH_FIND_PTR(env->guard_set, &g, e);
        if (e) {
            HASH_DEL(env->guard_set, e);
            hop__free(e);
        }
    }
    env->nguards = out;
    env->nsymbols = n;
    env->nbacked = env->nunbacked = 0;
    for (size_t i = 0; i < n; i++) {
        if (env->symbols[i]->unbacked)
            env->nunbacked++;
        else
            env->nbacked++;
    }
}

void
hop_shape_env_bounds(hop_shape_env *env, const hop_expr *e, int64_t *lo, int64_t *hi)
{
    int64_t a = INT64_MIN, b = INT64_MAX;
    if (env != NULL && e != NULL && e->env == env)
        hop__sym_bounds(e, &a, &b);
    if (lo)
        *lo = a;
    if (hi)
        *hi = b;
}

size_t
hop_shape_env_nsymbols(const hop_shape_env *env)
{
    return env ? env->nsymbols : 0;
}

const hop_expr *
hop_shape_env_symbol(const hop_shape_env *env, size_t id)
{
    return env && id < env->nsymbols ? env->symbols[id] : NULL;
}

/* ------------------------------------------------------------------ guards */

size_t
hop_shape_env_nguards(const hop_shape_env *env)
{
    return env ? env->nguards : 0;
}

const hop_expr *
hop_shape_env_guard(const hop_shape_env *env, size_t i)
{
    return env && i < env->nguards ? env->guards[i] : NULL;
}

/* Appends cond unless it is already a guard. */
static hop_status
record_guard(hop_shape_env *env, const hop_expr *cond)
{
    hop__guard_entry *g = NULL;
    HASH_FIND_PTR(env->guard_set, &cond, g);
    if (g)
        return HOP_OK;
    if (hop__grow((void **)&env->guards, &env->capguards, env->nguards + 1, sizeof *env->guards) !=
        HOP_OK)
        return HOP_NOMEM;
    g = hop__malloc(sizeof *g);
    if (g == NULL)
        return HOP_NOMEM;
    g->cond = cond;
    hop_status st;
    HOP_HASH_ADD(st, hh, env->guard_set, cond, sizeof g->cond, g);
    if (st != HOP_OK) {
        hop__free(g);
        return st;
    }
    env->guards[env->nguards++] = cond;
    return HOP_OK;
}

hop_status
hop_shape_env_add_guard(hop_shape_env *env, const hop_expr *cond)
{
    const char *fn = "hop_shape_env_add_guard";
    hop_status st = hop__sym_check(env, cond, fn, 1, true);
    if (st != HOP_OK)
        return st;
    if (cond->kind == HOP_EXPR_TRUE)
        return HOP_OK;
    if (cond->kind == HOP_EXPR_FALSE)
        return hop_error(HOP_INVALID, "%s: the guard is False, so it can never hold", fn);
    return record_guard(env, cond);
}

void
hop_shape_env_truncate_guards(hop_shape_env *env, size_t n)
{
    if (env == NULL)
        return;
    while (env->nguards > n) {
        const hop_expr *cond = env->guards[--env->nguards];
        hop__guard_entry *g = NULL;
        HASH_FIND_PTR(env->guard_set, &cond, g);
        if (g) {
            HASH_DEL(env->guard_set, g);
            hop__free(g);
        }
    }
}

/* ------------------------------------------------------- mark, rollback */

/* The newest node of the intern table (uthash keeps them in insertion
 * order), or NULL when it is empty. */
static hop_expr *
newest_interned(const hop_shape_env *env)
{
    if (env->table == NULL)
        return NULL;
    const UT_hash_table *tbl = env->table->hh.tbl;
    return (hop_expr *)(void *)((char *)tbl->tail - tbl->hho);
}

void
hop_shape_env_mark(hop_shape_env *env)
{
    if (env == NULL)
        return;
    env->marked = true;
    env->mark_nsymbols = env->nsymbols;
    env->mark_nguards = env->nguards;
    env->mark_last = newest_interned(env);
    hop__arena_mark_at(&env->arena, &env->mark_arena);
}

/*
 * Nodes interned since the mark are the intern table's tail (insertion
 * order), so they leave it newest first until the node that was newest at
 * the mark; then nothing reaches the memory allocated since (symbols, the
 * duck table and guards were truncated first) and the arena hands it out
 * again.  Unlike a truncation alone, a mark and rollback around each use
 * leaves the env as it was, however many symbols and constants the use made.
 */
void
hop_shape_env_rollback(hop_shape_env *env)
{
    if (env == NULL || !env->marked)
        return;
    hop_shape_env_truncate_symbols(env, env->mark_nsymbols);
    hop_shape_env_truncate_guards(env, env->mark_nguards);
    for (hop_expr *e; (e = newest_interned(env)) != env->mark_last;)
        HASH_DEL(env->table, e);
    hop__arena_rollback(&env->arena, &env->mark_arena);
    env->marked = false;
}

/* -------------------------------------------------------------- decisions */

static bool
lookup_hint(void *ud, const hop_expr *sym, int64_t *out)
{
    (void)ud;
    if (!sym->has_hint)
        return false;
    *out = sym->hint;
    return true;
}

static hop_status
data_dependent(const hop_expr *cond, const char *what)
{
    hop__buf b;
    hop__buf_init(&b);
    hop__buf_puts(&b, "cannot decide ");
    hop__sym_print_buf(&b, cond);
    hop__buf_puts(&b, " (");
    size_t n = 0;
    for (size_t i = 0; i < cond->nsyms; i++) {
        if (!cond->syms[i]->unbacked)
            continue;
        hop__buf_puts(&b, n++ ? ", " : "");
        hop__buf_puts(&b, cond->syms[i]->name);
    }
    hop__buf_puts(&b, n == 1 ? " is unbacked; its value is only known at run time)"
                             : " are unbacked; their values are only known at run time)");
    char *text = hop__buf_finish(&b);
    if (text == NULL)
        return HOP_NOMEM;
    hop_status st = hop_error(HOP_DATA_DEPENDENT, "%s%sdata-dependent: %s", what ? what : "",
                              what ? ": " : "", text);
    hop__free(text);
    return st;
}

hop_status
hop_shape_env_decide(hop_shape_env *env, const hop_expr *cond, const char *what, bool *out)
{
    hop_status st = hop__sym_check(env, cond, "hop_shape_env_decide", 1, true);
    if (st != HOP_OK)
        return st;
    if (out == NULL)
        return hop_error(HOP_MISUSE, "hop_shape_env_decide: out is NULL");
    int v = hop__sym_decide_static(cond);
    if (v >= 0) {
        *out = v;
        return HOP_OK;
    }
    if (cond->has_unbacked)
        return data_dependent(cond, what);
    int64_t value;
    if ((st = hop__sym_eval(cond, lookup_hint, NULL, &value)) != HOP_OK)
        return st;
    const hop_expr *guard = value ? cond : hop_sym_not(env, cond);
    if (guard == NULL || (st = record_guard(env, guard)) != HOP_OK)
        return hop_error_code();
    *out = value != 0;
    return HOP_OK;
}

bool
hop_shape_env_decide_static(hop_shape_env *env, const hop_expr *cond, bool *out)
{
    if (env == NULL || cond == NULL || cond->env != env || !hop_expr_is_bool(cond) || out == NULL)
        return false;
    int v = hop__sym_decide_static(cond);
    if (v >= 0)
        *out = v;
    return v >= 0;
}

hop_status
hop_shape_env_decide_eq(hop_shape_env *env, const hop_expr *a, const hop_expr *b, const char *what,
                        bool *out)
{
    const hop_expr *cond = hop_sym_eq(env, a, b);
    if (cond == NULL)
        return hop_error_code();
    return hop_shape_env_decide(env, cond, what, out);
}
