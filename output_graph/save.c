/*
 * output_graph/save.c - the saved format's writer (hop_output_graph_save)
 * and the CRC-32 both sides use.  docs/SAVED_FORMAT.md is the specification.
 *
 * Expressions are written once each, in a table where every operand comes
 * before its user (post-order), so that the reader rebuilds them without
 * recursion; everything else refers to them by index.  The payload is built
 * in two buffers (the expression table grows while the graphs are written)
 * and joined at the end.
 */
#include "core/hash.h"
#include "hop/lifts.h"
#include "output_graph/output_graph_impl.h"
#include "output_graph/saved_impl.h"

#include <stdio.h>

/* ----------------------------------------------------------------- CRC */

uint32_t
hop__crc32(const void *data, size_t n)
{
    static uint32_t table[256];
    static _Atomic int ready;
    if (!ready) {
        /* Idempotent: threads racing here write the same values. */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* --------------------------------------------------------------- tables */

typedef struct ptr_entry {
    const void *key;
    size_t index;
    UT_hash_handle hh;
} ptr_entry;

typedef struct writer {
    const hop_output_graph *og;
    hop__buf exprs; /* the expression table's records */
    size_t nexprs;
    ptr_entry *expr_map, *node_map, *graph_map;
    hop__arena arena; /* the map entries */
    const hop_graph **graphs;
    size_t ngraphs, graphs_cap;
    hop_status st;
} writer;

static bool
remember(writer *w, ptr_entry **map, const void *key, size_t index)
{
    ptr_entry *e = hop__arena_alloc(&w->arena, sizeof *e);
    if (e == NULL) {
        w->st = HOP_NOMEM;
        return false;
    }
    e->key = key;
    e->index = index;
    hop_status st;
    HOP_HASH_ADD(st, hh, *map, key, sizeof e->key, e);
    if (st != HOP_OK)
        w->st = st;
    return st == HOP_OK;
}

static bool
lookup(ptr_entry *map, const void *key, size_t *index)
{
    ptr_entry *e = NULL;
    HASH_FIND_PTR(map, &key, e);
    if (e)
        *index = e->index;
    return e != NULL;
}

/* The index of e in the expression table, writing it (operands first). */
static size_t
expr_index(writer *w, const hop_expr *e, int depth)
{
    size_t index = 0;
    if (w->st != HOP_OK || lookup(w->expr_map, e, &index))
        return index;
    if (depth > 10000) {
        w->st = hop_error(HOP_UNSUPPORTED, "save: an expression nested deeper than 10000");
        return 0;
    }
    hop_expr_kind kind = hop_expr_kind_of(e);
    size_t n = hop_expr_noperands(e);
    size_t small[16], *ops = small;
    if (n > HOP__ARRAY_LEN(small) && (ops = hop__malloc(n * sizeof *ops)) == NULL) {
        w->st = HOP_NOMEM;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        ops[i] = expr_index(w, hop_expr_operand(e, i), depth + 1);
    if (w->st == HOP_OK) {
        hop__put_byte(&w->exprs, (unsigned)kind);
        hop__put_i(&w->exprs, hop__expr_value(e));
        hop__put_u(&w->exprs, n);
        for (size_t i = 0; i < n; i++) {
            hop__put_u(&w->exprs, ops[i]);
            if (hop__expr_has_coefs(kind))
                hop__put_i(&w->exprs, hop_expr_coef(e, i));
        }
        index = w->nexprs;
        if (remember(w, &w->expr_map, e, index))
            w->nexprs++;
    }
    if (ops != small)
        hop__free(ops);
    return index;
}

static void
put_expr(writer *w, hop__buf *b, const hop_expr *e)
{
    hop__put_u(b, expr_index(w, e, 0));
}

static void
put_meta(writer *w, hop__buf *b, const hop_value_info *v)
{
    hop__put_byte(b, (unsigned)v->kind);
    if (v->kind == HOP_VALUE_SYM) {
        put_expr(w, b, v->sym);
    } else if (v->kind == HOP_VALUE_TENSOR) {
        hop__put_byte(b, (unsigned)v->meta.dtype);
        hop__put_byte(b, (unsigned)v->meta.rank);
        for (int d = 0; d < v->meta.rank; d++)
            put_expr(w, b, v->meta.sizes[d]);
    }
}

static void
put_args(writer *w, hop__buf *b, const hop_arg *args, size_t n, int depth)
{
    hop__put_u(b, n);
    for (size_t i = 0; i < n && w->st == HOP_OK; i++) {
        const hop_arg *a = &args[i];
        size_t index = 0;
        hop__put_byte(b, (unsigned)a->kind);
        switch (a->kind) {
        case HOP_ARG_NONE:
            break;
        case HOP_ARG_NODE:
            if (!lookup(w->node_map, a->u.node, &index))
                w->st = hop_error(HOP_VERIFY, "save: argument %s is not an earlier node",
                                  a->u.node->name);
            hop__put_u(b, index);
            break;
        case HOP_ARG_INT:
            hop__put_i(b, a->u.i);
            break;
        case HOP_ARG_FLOAT: {
            uint64_t bits;
            memcpy(&bits, &a->u.f, sizeof bits);
            for (int k = 0; k < 8; k++)
                hop__put_byte(b, (unsigned)(bits >> (8 * k)) & 0xff);
            break;
        }
        case HOP_ARG_BOOL:
            hop__put_byte(b, a->u.b);
            break;
        case HOP_ARG_SYM:
            put_expr(w, b, a->u.sym);
            break;
        case HOP_ARG_DTYPE:
            hop__put_byte(b, (unsigned)a->u.dtype);
            break;
        case HOP_ARG_LIST:
            if (depth >= HOP__SAVED_MAX_LIST_DEPTH)
                w->st = hop_error(HOP_UNSUPPORTED, "save: lists nested deeper than %d",
                                  HOP__SAVED_MAX_LIST_DEPTH);
            put_args(w, b, a->u.list.items, a->u.list.n, depth + 1);
            break;
        case HOP_ARG_GRAPH:
            lookup(w->graph_map, a->u.graph, &index);
            hop__put_u(b, index);
            break;
        }
    }
}

static void
put_name(writer *w, hop__buf *b, const char *s)
{
    if (strlen(s) > HOP__SAVED_MAX_NAME && w->st == HOP_OK)
        w->st = hop_error(HOP_UNSUPPORTED, "save: the name %.40s... is longer than %d bytes", s,
                          HOP__SAVED_MAX_NAME);
    hop__put_str(b, s);
}

/* The graphs in pre-order, root first; each gets its index. */
static void
collect_graphs(writer *w, const hop_graph *g)
{
    if (w->st != HOP_OK)
        return;
    if (hop__grow((void **)&w->graphs, &w->graphs_cap, w->ngraphs + 1, sizeof *w->graphs) !=
            HOP_OK ||
        !remember(w, &w->graph_map, g, w->ngraphs)) {
        w->st = HOP_NOMEM;
        return;
    }
    w->graphs[w->ngraphs++] = g;
    for (size_t i = 0; i < g->nsubgraphs; i++)
        collect_graphs(w, g->subgraphs[i]);
}

static void
put_graph_body(writer *w, hop__buf *b, const hop_graph *g)
{
    hop__put_u(b, g->nguards);
    for (size_t i = 0; i < g->nguards; i++)
        put_expr(w, b, g->guards[i]);
    hop__put_u(b, g->nnodes);
    size_t index = 0;
    for (const hop_node *n = g->first; n && w->st == HOP_OK; n = n->next) {
        hop__put_byte(b, (unsigned)n->kind);
        put_name(w, b, n->name);
        hop__put_u(b, n->flags);
        switch (n->kind) {
        case HOP_NODE_PLACEHOLDER:
            put_meta(w, b, n->meta);
            break;
        case HOP_NODE_CALL_OP:
            hop__put_str(b, hop_node_target(n));
            put_args(w, b, n->args, n->nargs, 0);
            put_meta(w, b, n->meta);
            break;
        case HOP_NODE_CALL_HOP:
        case HOP_NODE_CALL_FOREIGN:
            put_name(w, b, hop_node_target(n));
            put_args(w, b, n->args, n->nargs, 0);
            hop__put_u(b, n->nouts);
            for (size_t i = 0; i < n->nouts; i++)
                put_meta(w, b, &n->outs[i]);
            break;
        case HOP_NODE_GETITEM: {
            size_t call = 0;
            lookup(w->node_map, n->args[0].u.node, &call);
            hop__put_u(b, call);
            hop__put_u(b, (uint64_t)n->args[1].u.i);
            break;
        }
        case HOP_NODE_OUTPUT:
            put_args(w, b, n->args, n->nargs, 0);
            break;
        }
        remember(w, &w->node_map, n, index++);
    }
}

static void
put_capture_table(writer *w, hop__buf *b, const hop_graph *g)
{
    hop__capture *table = hop__calloc(g->nplaceholders + 1, sizeof *table);
    if (table == NULL) {
        w->st = HOP_NOMEM;
        return;
    }
    hop__capture_table(g, table);
    size_t j = 0;
    for (const hop_node *ph = g->first; ph && ph->kind == HOP_NODE_PLACEHOLDER; ph = ph->next) {
        const hop__capture *c = &table[j++];
        hop__put_byte(b, (unsigned)c->role);
        if (c->role == HOP__ROLE_EXPLICIT)
            continue;
        size_t src = 0, cause = 0;
        lookup(w->node_map, c->source, &src);
        hop__put_u(b, src);
        if (c->role != HOP__ROLE_LIFTED)
            continue;
        if (c->cause && lookup(w->node_map, c->cause, &cause))
            cause++;
        hop__put_u(b, cause);
        bool operand;
        const char *note = hop_output_graph_lift_note(w->og, ph, &operand);
        hop__put_byte(b, (note != NULL) | (unsigned)operand << 1);
        if (note)
            put_name(w, b, note);
    }
    hop__free(table);
}

static size_t
tensor_bytes(const hop_saved_tensor *t, bool *ok)
{
    size_t n = hop_dtype_size(t->dtype);
    *ok = n > 0 && t->rank >= 0 && t->rank <= HOP_MAX_RANK;
    for (int d = 0; *ok && d < t->rank; d++) {
        if (t->sizes[d] < 0 || (t->sizes[d] > 0 && n > SIZE_MAX / (size_t)t->sizes[d]))
            *ok = false;
        else
            n *= (size_t)t->sizes[d];
    }
    return *ok ? n : 0;
}

static hop_status
check_request(const hop_output_graph *og, const hop_save_options *opts, void **data, size_t *size)
{
    if (og == NULL || data == NULL || size == NULL)
        return hop_error(HOP_MISUSE, "save: NULL argument");
    const hop_graph *root = hop_output_graph_root_graph(og);
    if (root->output == NULL)
        return hop_error(HOP_MISUSE, "save: the root graph has no output node yet");
    if (hop_output_graph_depth(og) != 1)
        return hop_error(HOP_MISUSE,
                         "save: a body is still being traced (%zu tracers on the "
                         "stack)",
                         hop_output_graph_depth(og));
    size_t ncaptures = 0;
    for (size_t i = 0; i < hop_output_graph_ninputs(og); i++) {
        hop_source src;
        hop_node *n = hop_output_graph_input(og, i, &src);
        if (src.kind != HOP_SOURCE_CAPTURE)
            continue;
        const hop_saved_tensor *t =
            opts && ncaptures < opts->ncaptures ? &opts->captures[ncaptures] : NULL;
        bool ok = false;
        if (t)
            tensor_bytes(t, &ok);
        ok = ok && t->data != NULL && t->dtype == n->meta->meta.dtype &&
             t->rank == n->meta->meta.rank;
        for (int d = 0; ok && d < t->rank; d++) {
            int64_t c;
            ok = hop_expr_const_value(n->meta->meta.sizes[d], &c) && c == t->sizes[d];
        }
        if (!ok)
            return hop_error(HOP_INVALID, "save: the value of captured input %s is %s", n->name,
                             t ? "not a tensor of its metadata" : "missing");
        ncaptures++;
    }
    if (opts && opts->ncaptures != ncaptures)
        return hop_error(HOP_INVALID, "save: %zu capture values given for %zu captured inputs",
                         opts->ncaptures, ncaptures);
    for (size_t i = 0; opts && i < opts->nsections; i++)
        if (opts->sections[i].name == NULL ||
            strlen(opts->sections[i].name) > HOP__SAVED_MAX_SECTION ||
            (opts->sections[i].size && opts->sections[i].data == NULL))
            return hop_error(HOP_INVALID,
                             "save: section %zu has no name, a name longer than %d "
                             "bytes or no data",
                             i, HOP__SAVED_MAX_SECTION);
    return hop_graph_verify_changed(root);
}

/* The program's inputs (each a node and its source), the captured tensors'
 * data, and the caller's sections. */
static void
put_inputs(writer *w, hop__buf *body, const hop_save_options *opts)
{
    const hop_output_graph *og = w->og;
    size_t ninputs = hop_output_graph_ninputs(og), ncaptures = 0;
    hop__put_u(body, ninputs);
    for (size_t i = 0; i < ninputs && w->st == HOP_OK; i++) {
        hop_source src;
        size_t index = 0;
        lookup(w->node_map, hop_output_graph_input(og, i, &src), &index);
        hop__put_u(body, index);
        hop__put_byte(body, (unsigned)src.kind);
        if (src.kind == HOP_SOURCE_ARG) {
            hop__put_u(body, src.position);
        } else if (src.kind == HOP_SOURCE_SIZE) {
            hop__put_u(body, src.input);
            hop__put_u(body, src.dim);
        } else {
            ncaptures++;
        }
    }
    hop__put_u(body, ncaptures);
    for (size_t i = 0; i < ncaptures; i++) {
        const hop_saved_tensor *t = &opts->captures[i];
        bool ok;
        hop__put_byte(body, (unsigned)t->dtype);
        hop__put_byte(body, (unsigned)t->rank);
        for (int d = 0; d < t->rank; d++)
            hop__put_u(body, (uint64_t)t->sizes[d]);
        hop__put_bytes(body, t->data, tensor_bytes(t, &ok));
    }
    size_t nsections = opts ? opts->nsections : 0;
    hop__put_u(body, nsections);
    for (size_t i = 0; i < nsections; i++) {
        hop__put_str(body, opts->sections[i].name);
        hop__put_bytes(body, opts->sections[i].data, opts->sections[i].size);
    }
}

/* The file into out: the header, the symbol ranges, the expression table,
 * the body, the CRC. */
static void
put_file(writer *w, hop__buf *body, hop__buf *out)
{
    hop_shape_env *env = hop_output_graph_env(w->og);
    size_t nsymbols = hop_shape_env_nsymbols(env);
    hop__buf_append(out, HOP__SAVED_MAGIC, 8);
    unsigned char word[8];
    for (int k = 0; k < 4; k++)
        word[k] = (unsigned char)((HOP_SAVED_VERSION >> (8 * k)) & 0xff);
    memset(word + 4, 0, 4);
    hop__buf_append(out, (const char *)word, 8);
    size_t length_at = out->len;
    hop__buf_append(out, (const char *)word + 4, 4);
    hop__buf_append(out, (const char *)word + 4, 4);
    size_t payload_at = out->len;
    hop__put_u(out, nsymbols);
    for (size_t i = 0; i < nsymbols; i++) {
        const hop_expr *s = hop_shape_env_symbol(env, i);
        int64_t hint = 0, lo, hi;
        hop_symbol_hint(s, &hint);
        hop_shape_env_bounds(env, s, &lo, &hi);
        hop__put_byte(out, hop_symbol_is_unbacked(s));
        hop__put_i(out, hint);
        hop__put_i(out, lo);
        hop__put_i(out, hi);
    }
    hop__put_u(out, w->nexprs);
    /* A buffer whose first allocation failed has no data (the failure is
     * reported below): memcpy must not see its NULL, even for 0 bytes. */
    if (w->exprs.data)
        hop__buf_append(out, w->exprs.data, w->exprs.len);
    if (body->data)
        hop__buf_append(out, body->data, body->len);
    if (w->st == HOP_OK && (out->failed || w->exprs.failed || body->failed))
        w->st = hop_error(HOP_NOMEM, "save: out of memory");
    if (w->st == HOP_OK) {
        uint64_t payload = out->len - payload_at;
        for (int k = 0; k < 8; k++)
            ((unsigned char *)out->data)[length_at + k] = (unsigned char)(payload >> (8 * k));
        uint32_t crc = hop__crc32(out->data, out->len);
        for (int k = 0; k < 4; k++)
            word[k] = (unsigned char)(crc >> (8 * k));
        hop__buf_append(out, (const char *)word, 4);
    }
}

hop_status
hop_output_graph_save(const hop_output_graph *og, const hop_save_options *opts, void **data,
                      size_t *size)
{
    hop_status st = check_request(og, opts, data, size);
    if (st != HOP_OK)
        return st;
    writer w = {.og = og, .st = HOP_OK};
    hop__buf_init(&w.exprs);
    hop__arena_init(&w.arena);
    hop__buf body, out;
    hop__buf_init(&body);
    hop__buf_init(&out);
    hop_shape_env *env = hop_output_graph_env(og);

    /* Symbols are expressions 0..nsymbols-1, in id order. */
    size_t nsymbols = hop_shape_env_nsymbols(env);
    for (size_t i = 0; i < nsymbols; i++)
        expr_index(&w, hop_shape_env_symbol(env, i), 0);
    size_t nguards = hop_shape_env_nguards(env);
    hop__put_u(&body, nguards);
    for (size_t i = 0; i < nguards; i++)
        put_expr(&w, &body, hop_shape_env_guard(env, i));

    collect_graphs(&w, hop_output_graph_root_graph(og));
    hop__put_u(&body, w.ngraphs);
    for (size_t i = 0; i < w.ngraphs && w.st == HOP_OK; i++) {
        size_t parent = 0;
        if (w.graphs[i]->parent && lookup(w.graph_map, w.graphs[i]->parent, &parent))
            parent++;
        put_name(&w, &body, w.graphs[i]->name);
        hop__put_u(&body, parent);
    }
    for (size_t i = 0; i < w.ngraphs && w.st == HOP_OK; i++)
        put_graph_body(&w, &body, w.graphs[i]);
    for (size_t i = 1; i < w.ngraphs && w.st == HOP_OK; i++)
        put_capture_table(&w, &body, w.graphs[i]);

    put_inputs(&w, &body, opts);
    put_file(&w, &body, &out);
    size_t len = out.len;
    char *bytes = hop__buf_finish(&out);
    if (w.st == HOP_OK && bytes == NULL)
        w.st = HOP_NOMEM;
    hop__buf_discard(&w.exprs);
    hop__buf_discard(&body);
    HASH_CLEAR(hh, w.expr_map);
    HASH_CLEAR(hh, w.node_map);
    HASH_CLEAR(hh, w.graph_map);
    hop__arena_destroy(&w.arena);
    hop__free(w.graphs);
    if (w.st != HOP_OK) {
        hop__free(bytes);
        return w.st;
    }
    *data = bytes;
    *size = len;
    return HOP_OK;
}
