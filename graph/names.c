/*
 * graph/names.c - the name table of a graph: unique, printable node names.
 *
 * Names are identifiers so that the code printer can print them as they are.
 * A node asks for a base (`add`, or a placeholder's name) and gets `base` if
 * it is free, else `base_<k>` for the smallest free k >= 1.  Because erasing a
 * node frees its name and lowers the base's search start again, the names a
 * graph hands out depend only on which names are taken now: a call that fails
 * and is retried, or a node that is erased and rebuilt, gets the same name.
 */
#include "graph/graph_impl.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const python_keywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

static bool
is_keyword(const char *s)
{
    size_t n = strlen(s);
    if (n < 2 || n > 8) /* every keyword has 2..8 letters: most names stop here */
        return false;
    for (size_t i = 0; i < HOP__ARRAY_LEN(python_keywords); i++) {
        if (strcmp(s, python_keywords[i]) == 0)
            return true;
    }
    return false;
}

static bool
is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

bool
hop__name_is_identifier(const char *s)
{
    if (s == NULL || !is_ident_start(s[0]))
        return false;
    for (const char *p = s + 1; *p; p++) {
        if (!is_ident_char(*p))
            return false;
    }
    return !is_keyword(s);
}

/* Writes the identifier form of s into out, which has room for strlen(s) + 3
 * bytes; returns its length.  "x.y" -> "x_y", "0a" -> "_0a", "" -> "_",
 * "if" -> "if_". */
static size_t
sanitize_into(const char *s, char *out)
{
    size_t n = 0;
    if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
        out[n++] = '_';
    for (const char *p = s; *p; p++)
        out[n++] = is_ident_char(*p) ? *p : '_';
    out[n] = '\0';
    if (is_keyword(out)) {
        out[n++] = '_';
        out[n] = '\0';
    }
    return n;
}

char *
hop__name_sanitize(hop__arena *a, const char *s)
{
    char *out = hop__arena_alloc(a, strlen(s) + 3);
    if (out)
        sanitize_into(s, out);
    return out;
}

static hop__name *
find_entry(const hop_graph *g, const char *name, size_t len)
{
    hop__name *head = g->names, *e = NULL;
    HASH_FIND(hh, head, name, len, e);
    return e;
}

hop_node *
hop__name_find(const hop_graph *g, const char *name)
{
    if (name == NULL)
        return NULL;
    hop__name *e = find_entry(g, name, strlen(name));
    return e ? e->node : NULL;
}

/* A name is taken by a node or by a subgraph of g (both print as names in the
 * same scope). */
static bool
is_taken(const hop_graph *g, const char *name, const hop__name *e)
{
    return (e && e->node) || hop_graph_find_subgraph(g, name) != NULL;
}

hop_status
hop__name_reserve(hop_graph *g, const char *base, hop__name_claim *claim)
{
    size_t cap = strlen(base) + 3 + 24; /* sanitising, then "_<uint64>" */
    char small[128];
    char *buf = cap <= sizeof small ? small : hop__malloc(cap);
    if (buf == NULL)
        return HOP_NOMEM;
    size_t blen = sanitize_into(base, buf);

    claim->base = NULL;
    claim->suffix = 0;
    hop__name *e = find_entry(g, buf, blen);
    if (is_taken(g, buf, e)) {
        claim->base = e;
        uint64_t k = e ? e->next : 1;
        for (;; k++) {
            int n = snprintf(buf + blen, cap - blen, "_%" PRIu64, k);
            e = find_entry(g, buf, blen + (size_t)n);
            if (!is_taken(g, buf, e))
                break;
        }
        claim->suffix = k;
    }

    hop_status st = HOP_OK;
    if (e == NULL) {
        hop__arena *a = hop__graph_arena(g);
        e = hop__arena_alloc(a, sizeof *e);
        char *name = e ? hop__arena_strdup(a, buf) : NULL;
        if (name == NULL) {
            st = HOP_NOMEM;
            goto done;
        }
        memset(e, 0, sizeof *e);
        e->name = name;
        e->next = 1;
        hop__name *head = g->names;
        HOP_HASH_ADD_KEYPTR(st, hh, head, e->name, strlen(e->name), e);
        g->names = head;
        if (st != HOP_OK)
            goto done;
    }
    claim->entry = e;
done:
    if (buf != small)
        hop__free(buf);
    return st;
}

void
hop__name_commit(hop_graph *g, const hop__name_claim *claim, hop_node *n)
{
    (void)g;
    claim->entry->node = n;
    n->name = claim->entry->name;
    /* Reserving scanned base_<next> .. base_<suffix - 1> and found them taken. */
    if (claim->base && claim->suffix >= claim->base->next)
        claim->base->next = claim->suffix + 1;
}

/* name stopped being taken: if it is `<base>_<k>`, base's search must start
 * at k again for the next name to be the smallest free one. */
static void
lower_base_start(hop_graph *g, const char *name)
{
    const char *us = strrchr(name, '_');
    if (us == NULL || us == name || us[1] < '1' || us[1] > '9')
        return;
    uint64_t k = 0;
    for (const char *p = us + 1; *p; p++) {
        if (*p < '0' || *p > '9' || k > (UINT64_MAX - 9) / 10)
            return;
        k = k * 10 + (uint64_t)(*p - '0');
    }
    hop__name *be = find_entry(g, name, (size_t)(us - name));
    if (be && k < be->next)
        be->next = k;
}

void
hop__name_release(hop_graph *g, hop_node *n)
{
    hop__name *e = find_entry(g, n->name, strlen(n->name));
    if (e && e->node == n) {
        e->node = NULL;
        lower_base_start(g, n->name);
    }
}

void
hop__name_unreserve(hop_graph *g, const char *name)
{
    lower_base_start(g, name);
}

void
hop__names_clear(hop_graph *g)
{
    hop__name *head = g->names;
    HASH_CLEAR(hh, head);
    g->names = NULL;
}
