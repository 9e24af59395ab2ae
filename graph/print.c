/*
 * graph/print.c - the three views of a graph: Python-like code, a table and
 * Graphviz DOT.
 *
 * The formats are part of the product (expected-graph tests compare them as
 * text), so everything here is deterministic: nodes in program order,
 * subgraphs in installation order, floats in the shortest form that reads
 * back to the same double (Python's repr), no pointers or counters.
 *
 * Code:   def forward(s0: "Sym(s0)", x: "f32[s0, 4]"):
 *             def cond_true_0(x: "f32[s0, 4]"):      nested subgraphs first,
 *                 sin: "f32[s0, 4]" = sin(x)         indented, each followed
 *                 return (sin,)                      by a blank line
 *
 *             add: "f32[s0, 4]" = add(x, 1)
 *             cond: "(f32[s0, 4], i64[])" = cond(gt, cond_true_0, cond_false_0, (x,))
 *             getitem: "f32[s0, 4]" = cond[0]
 *             return (getitem,)
 *   A call_hop's annotation is its single output's, or the tuple of its
 *   outputs when it has none or several; its last argument (the operands of
 *   its subgraphs) prints as a tuple.  A call_foreign is annotated the same
 *   way and calls `foreign.<kernel>(...)`, followed by `  # side effects`
 *   when it has them.  Dtypes print as `f32`, SymBools and
 *   SymInts through hop_expr_print.
 * Table:  per graph a title line, then aligned columns opcode, name, target,
 *   args, meta; subgraphs follow their parent, depth first.
 * Guards: a graph's guards (hop_graph_add_guard) print under its def line as
 *   `# guards: s0 >= 4, s1 == 3`, under its table title as `guards: ...`,
 *   and on a second line of its DOT cluster's label.
 * DOT:    one digraph; per subgraph a `subgraph "cluster_<path>"` where path
 *   is the dotted chain of subgraph names below the printed graph; node ids
 *   are "<path>.<name>"; labels say name, target (when it differs) and
 *   meta; edges run from each argument to its user, and from a subgraph's
 *   output to the call_hop that calls it (dashed).
 */
#include "graph/graph_impl.h"
#include "hop/class.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { INDENT = 4 };

/* ------------------------------------------------------------ values */

/* Formats v the way Python's repr does: the shortest digits that read back
 * to v, fixed notation for exponents in [-4, 16), else d.ddde+XX.  out holds
 * at least 32 bytes. */
static void
format_float(double v, char *out, size_t cap)
{
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, "%sinf", v < 0 ? "-" : "");
        return;
    }
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e is [-]d[.ddd]e(+|-)XX: split it into sign, digits and exponent. */
    const char *p = e;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++) {
        if (*p != '.')
            digits[nd++] = *p;
    }
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int exp = atoi(p + 1);

    size_t n = 0;
    if (neg)
        out[n++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            n += (size_t)snprintf(out + n, cap - n, "0.");
            for (int i = 0; i < -exp - 1; i++)
                out[n++] = '0';
            n += (size_t)snprintf(out + n, cap - n, "%s", digits);
        } else {
            for (int i = 0; i <= exp; i++)
                out[n++] = (size_t)i < nd ? digits[i] : '0';
            out[n++] = '.';
            if ((size_t)exp + 1 < nd)
                n += (size_t)snprintf(out + n, cap - n, "%s", digits + exp + 1);
            else
                out[n++] = '0';
        }
        out[n] = '\0';
    } else {
        out[n++] = digits[0];
        if (nd > 1)
            n += (size_t)snprintf(out + n, cap - n, ".%s", digits + 1);
        snprintf(out + n, cap - n, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

/* What "%.17g" writes for v: an integral v of fewer than 17 digits prints
 * as that integer (no point, no exponent; -0.0 as "-0"); a v of at least
 * 1e-4 and below 1e15 in magnitude that is exactly m / 10^d (d <= 6, m
 * integral) as those digits with the point d places in (the digits %.17g
 * finds: exact, at most 16); the rest through snprintf.  out holds at least
 * 32 bytes. */
static void
format_g17(double v, char *out, size_t cap)
{
    if (v > -1e16 && v < 1e16 && v == (double)(long long)v) {
        if (v == 0 && signbit(v)) {
            memcpy(out, "-0", 3);
            return;
        }
        hop__format_int((long long)v, out);
        return;
    }
    double a = fabs(v), p = 1;
    if (a >= 1e-4 && a < 1e15) {
        for (int d = 1; d <= 6; d++) {
            p *= 10;
            double m = a * p;
            /* m integral and a * p == m exactly (fma's one rounding of the
             * difference gives 0 only then): a == m / 10^d. */
            if (m >= 1e16 || m != (double)(long long)m || fma(a, p, -m) != 0)
                continue;
            char digits[24];
            hop__format_int((long long)m, digits);
            size_t nd = strlen(digits), n = 0;
            if (v < 0)
                out[n++] = '-';
            if (nd <= (size_t)d) {
                out[n++] = '0';
                out[n++] = '.';
                for (size_t z = nd; z < (size_t)d; z++)
                    out[n++] = '0';
                memcpy(out + n, digits, nd);
                n += nd;
            } else {
                memcpy(out + n, digits, nd - (size_t)d);
                n += nd - (size_t)d;
                out[n++] = '.';
                memcpy(out + n, digits + nd - d, (size_t)d);
                n += (size_t)d;
            }
            out[n] = '\0';
            return;
        }
    }
    snprintf(out, cap, "%.17g", v);
}

static size_t
print_expr(const void *e, char *buf, size_t cap)
{
    return hop_expr_print(e, buf, cap);
}

static size_t
print_meta(const void *m, char *buf, size_t cap)
{
    return hop_meta_print(m, buf, cap);
}

static void
append_value_info(hop__buf *b, const hop_value_info *v)
{
    if (v->kind == HOP_VALUE_TENSOR) {
        hop__buf_print(b, print_meta, &v->meta);
    } else if (v->kind == HOP_VALUE_SYM) {
        hop__buf_puts(b, "Sym(");
        hop__buf_print(b, print_expr, v->sym);
        hop__buf_puts(b, ")");
    }
}

/* What a node holds: its value, or for a call_hop with other than one
 * output the tuple of its outputs.  Nothing for the output node. */
static void
append_node_meta(hop__buf *b, const hop_node *n)
{
    if ((n->kind == HOP_NODE_CALL_HOP || n->kind == HOP_NODE_CALL_FOREIGN) && n->nouts != 1) {
        hop__buf_puts(b, "(");
        for (size_t i = 0; i < n->nouts; i++) {
            if (i > 0)
                hop__buf_puts(b, ", ");
            append_value_info(b, &n->outs[i]);
        }
        hop__buf_puts(b, ")");
        return;
    }
    append_value_info(b, n->meta);
}

/*
 * The one printer of arguments.  It writes into a sink: a builder (the
 * printers here) or a caller's buffer under the snprintf contract
 * (hop_arg_print, which plans use for their instruction texts), so it never
 * allocates for the latter.
 */
typedef struct sink {
    hop__buf *b; /* appends here when set, else: */
    char *buf;   /* writes what fits of cap bytes, counting everything */
    size_t cap, len;
} sink;

static void
sink_put(sink *s, const char *text, size_t n)
{
    if (s->b) {
        hop__buf_append(s->b, text, n);
        return;
    }
    if (s->len + 1 < s->cap) {
        size_t room = s->cap - 1 - s->len;
        memcpy(s->buf + s->len, text, n < room ? n : room);
    }
    s->len += n;
}

static void
sink_puts(sink *s, const char *text)
{
    sink_put(s, text, strlen(text));
}

static void
sink_expr(sink *s, const hop_expr *e)
{
    if (s->b) {
        hop__buf_print(s->b, print_expr, e);
        return;
    }
    /* Straight into place; the NUL it writes is overwritten or final. */
    size_t room = s->len + 1 < s->cap ? s->cap - s->len : 0;
    s->len += hop_expr_print(e, room ? s->buf + s->len : NULL, room);
}

static void sink_args(sink *s, const hop_arg *args, size_t n, const char *open, const char *close,
                      bool lists_as_tuples, hop_float_style style);

static void
sink_arg(sink *s, const hop_arg *a, bool as_tuple, hop_float_style style)
{
    char tmp[48];
    switch (a->kind) {
    case HOP_ARG_NONE:
        sink_puts(s, "None");
        break;
    case HOP_ARG_NODE:
        sink_puts(s, a->u.node->name);
        break;
    case HOP_ARG_INT:
        hop__format_int((long long)a->u.i, tmp);
        sink_puts(s, tmp);
        break;
    case HOP_ARG_FLOAT:
        if (style == HOP_FLOAT_G17)
            format_g17(a->u.f, tmp, sizeof tmp);
        else
            format_float(a->u.f, tmp, sizeof tmp);
        sink_puts(s, tmp);
        break;
    case HOP_ARG_BOOL:
        sink_puts(s, a->u.b ? "True" : "False");
        break;
    case HOP_ARG_SYM:
        sink_expr(s, a->u.sym);
        break;
    case HOP_ARG_DTYPE:
        sink_puts(s, hop_dtype_name(a->u.dtype));
        break;
    case HOP_ARG_LIST:
        if (as_tuple)
            sink_args(s, a->u.list.items, a->u.list.n, "(", a->u.list.n == 1 ? ",)" : ")", false,
                      style);
        else
            sink_args(s, a->u.list.items, a->u.list.n, "[", "]", false, style);
        break;
    case HOP_ARG_GRAPH:
        sink_puts(s, a->u.graph->name);
        break;
    }
}

/* lists_as_tuples: each list among args prints as a tuple (a call_hop's
 * groups), not just nested ones as lists. */
static void
sink_args(sink *s, const hop_arg *args, size_t n, const char *open, const char *close,
          bool lists_as_tuples, hop_float_style style)
{
    sink_puts(s, open);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            sink_puts(s, ", ");
        sink_arg(s, &args[i], lists_as_tuples, style);
    }
    sink_puts(s, close);
}

size_t
hop_arg_print(const hop_arg *a, hop_float_style style, char *buf, size_t cap)
{
    sink s = {.buf = buf, .cap = cap};
    if (a == NULL)
        sink_puts(&s, "NULL");
    else
        sink_arg(&s, a, false, style);
    if (cap > 0)
        buf[s.len < cap ? s.len : cap - 1] = '\0';
    return s.len;
}

static void
append_arg(hop__buf *b, const hop_arg *a, bool as_tuple)
{
    sink s = {.b = b};
    sink_arg(&s, a, as_tuple, HOP_FLOAT_REPR);
}

static void
append_args(hop__buf *b, const hop_arg *args, size_t n, const char *open, const char *close,
            bool lists_as_tuples)
{
    sink s = {.b = b};
    sink_args(&s, args, n, open, close, lists_as_tuples, HOP_FLOAT_REPR);
}

/* A node's arguments as a call's parenthesised list.  A call_hop's lists
 * (the operands of its subgraphs, one per group) print as tuples. */
static void
append_call_args(hop__buf *b, const hop_node *n)
{
    append_args(b, n->args, n->nargs, "(", ")", n->kind == HOP_NODE_CALL_HOP);
}

enum { HOP__PRINT_SLOT_MAX = 1 << 20 }; /* bytes a print slot may say a call's text takes */

/* The right-hand side of a call's line: `target(args)`, or what the HOP's
 * print slot writes. */
static void
append_call(hop__buf *b, const hop_node *n)
{
    const hop_class *owner =
        n->kind == HOP_NODE_CALL_HOP ? HOP_CLASS_SLOT_OWNER(n->cls, print) : NULL;
    if (owner == NULL) {
        hop__buf_puts(b, hop_node_target(n));
        append_call_args(b, n);
        return;
    }
    /* The slot is a library's code: its length is taken at its word only up
     * to what a call's line could need (SIZE_MAX, a negative int returned as
     * a size, would make need + 1 wrap to a 0-byte buffer), and a NUL at that
     * length bounds what is read should it not end its text. */
    char small[256];
    size_t need = owner->print(n, small, sizeof small);
    if (need > HOP__PRINT_SLOT_MAX) {
        hop__buf_printf(b, "%s<its print slot returned a length of %zu>", hop_node_target(n), need);
        append_call_args(b, n);
        return;
    }
    if (need < sizeof small) {
        small[need] = '\0';
        hop__buf_puts(b, small);
        return;
    }
    char *big = hop__malloc(need + 1);
    if (big == NULL) {
        b->failed = true;
        return;
    }
    big[0] = '\0';
    owner->print(n, big, need + 1);
    big[need] = '\0';
    hop__buf_puts(b, big);
    hop__free(big);
}

/* ------------------------------------------------------------ code */

/* `s0 >= 4, s1 == 3`: a graph's guards (see hop_graph_add_guard). */
static void
append_guards(hop__buf *b, const hop_graph *g)
{
    for (size_t i = 0; i < g->nguards; i++) {
        if (i > 0)
            hop__buf_puts(b, ", ");
        hop__buf_print(b, print_expr, g->guards[i]);
    }
}

static void
code_graph(hop__buf *b, const hop_graph *g, int depth)
{
    hop__buf_indent(b, depth * INDENT);
    hop__buf_printf(b, "def %s(", g->name);
    const hop_node *n = g->first;
    for (size_t i = 0; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, i++) {
        if (i > 0)
            hop__buf_puts(b, ", ");
        hop__buf_printf(b, "%s: \"", n->name);
        append_node_meta(b, n);
        hop__buf_puts(b, "\"");
    }
    hop__buf_puts(b, "):\n");
    if (g->nguards > 0) {
        hop__buf_indent(b, (depth + 1) * INDENT);
        hop__buf_puts(b, "# guards: ");
        append_guards(b, g);
        hop__buf_puts(b, "\n");
    }

    for (size_t i = 0; i < g->nsubgraphs; i++) {
        code_graph(b, g->subgraphs[i], depth + 1);
        hop__buf_puts(b, "\n");
    }
    if (n == NULL && g->nsubgraphs == 0) {
        hop__buf_indent(b, (depth + 1) * INDENT);
        hop__buf_puts(b, "pass\n");
    }
    for (; n; n = n->next) {
        hop__buf_indent(b, (depth + 1) * INDENT);
        switch (n->kind) {
        case HOP_NODE_OUTPUT:
            hop__buf_puts(b, "return ");
            append_args(b, n->args, n->nargs, "(", n->nargs == 1 ? ",)" : ")", false);
            break;
        case HOP_NODE_GETITEM:
            hop__buf_printf(b, "%s: \"", n->name);
            append_node_meta(b, n);
            hop__buf_puts(b, "\" = ");
            append_arg(b, &n->args[0], false);
            hop__buf_puts(b, "[");
            append_arg(b, &n->args[1], false);
            hop__buf_puts(b, "]");
            break;
        case HOP_NODE_CALL_FOREIGN:
            /* `foreign.` keeps a kernel apart from an op or HOP of that name. */
            hop__buf_printf(b, "%s: \"", n->name);
            append_node_meta(b, n);
            hop__buf_printf(b, "\" = foreign.%s", hop_node_target(n));
            append_call_args(b, n);
            if (n->flags & HOP_NODE_SIDE_EFFECTS)
                hop__buf_puts(b, "  # side effects");
            break;
        default: /* call_op, call_hop; a stray placeholder prints as a call */
            hop__buf_printf(b, "%s: \"", n->name);
            append_node_meta(b, n);
            hop__buf_puts(b, "\" = ");
            append_call(b, n);
            break;
        }
        hop__buf_puts(b, "\n");
    }
}

/* The three printers' one entry (who names it in errors): g's text as
 * emit writes it, or NULL when g is NULL or memory runs out. */
static char *
print_graph(const char *who, const hop_graph *g, void (*emit)(hop__buf *, const hop_graph *))
{
    if (g == NULL) {
        hop_error(HOP_MISUSE, "%s: the graph is NULL", who);
        return NULL;
    }
    hop__buf b;
    hop__buf_init(&b);
    emit(&b, g);
    return hop__buf_finish(&b);
}

static void
emit_code(hop__buf *b, const hop_graph *g)
{
    code_graph(b, g, 0);
}

char *
hop_graph_code(const hop_graph *g)
{
    return print_graph("hop_graph_code", g, emit_code);
}

/* ------------------------------------------------------------ table */

enum { NCOLS = 5, TABLE_MAX_WIDTH = 200 };
static const char *const table_header[NCOLS] = {"opcode", "name", "target", "args", "meta"};

/* One graph's rows, columns padded to their widest cell. */
static void
table_graph(hop__buf *out, const hop_graph *g)
{
    size_t nrows = g->nnodes + 1;
    size_t *offsets = hop__calloc(nrows * NCOLS, sizeof *offsets);
    if (offsets == NULL) {
        out->failed = true;
        return;
    }
    /* All cells go into one buffer, NUL-separated, addressed by offset
     * because the buffer moves as it grows. */
    hop__buf text;
    hop__buf_init(&text);
    size_t row = 0;
    for (int c = 0; c < NCOLS; c++) {
        offsets[c] = text.len;
        hop__buf_puts(&text, table_header[c]);
        hop__buf_append(&text, "", 1);
    }
    for (const hop_node *n = g->first; n && row + 1 < nrows; n = n->next) {
        size_t *cell = &offsets[++row * NCOLS];
        cell[0] = text.len;
        hop__buf_puts(&text, hop_node_kind_name(n->kind));
        hop__buf_append(&text, "", 1);
        cell[1] = text.len;
        hop__buf_puts(&text, n->name);
        hop__buf_append(&text, "", 1);
        cell[2] = text.len;
        hop__buf_puts(&text, hop_node_target(n));
        hop__buf_append(&text, "", 1);
        cell[3] = text.len;
        append_args(&text, n->args, n->nargs, "(", n->nargs == 1 ? ",)" : ")",
                    n->kind == HOP_NODE_CALL_HOP);
        hop__buf_append(&text, "", 1);
        cell[4] = text.len;
        append_node_meta(&text, n);
        hop__buf_append(&text, "", 1);
    }
    if (text.failed) {
        out->failed = true;
        goto done;
    }
    /* A column is as wide as its widest cell up to TABLE_MAX_WIDTH; a wider
     * cell (a call passing thousands of values) overflows its column instead
     * of padding every row of the table to its length. */
    size_t width[NCOLS] = {0};
    for (size_t r = 0; r <= row; r++) {
        for (int c = 0; c < NCOLS; c++) {
            size_t len = strlen(text.data + offsets[r * NCOLS + c]);
            if (len > width[c] && len <= TABLE_MAX_WIDTH)
                width[c] = len;
        }
    }
    for (size_t r = 0; r <= row; r++) {
        /* The header is followed by a rule under each column. */
        for (int pass = 0; pass < (r == 0 ? 2 : 1); pass++) {
            size_t start = out->len;
            for (int c = 0; c < NCOLS; c++) {
                const char *cell = text.data + offsets[r * NCOLS + c];
                size_t len = pass ? width[c] : strlen(cell);
                if (pass) {
                    for (size_t k = 0; k < len; k++)
                        hop__buf_append(out, "-", 1);
                } else {
                    hop__buf_puts(out, cell);
                }
                if (c + 1 < NCOLS)
                    hop__buf_indent(out, (int)(len < width[c] ? width[c] - len : 0) + 2);
            }
            /* No trailing blanks when the last cells are empty. */
            while (!out->failed && out->len > start && out->data[out->len - 1] == ' ')
                out->len--;
            hop__buf_puts(out, "\n");
        }
    }
done:
    hop__buf_discard(&text);
    hop__free(offsets);
}

static void
table_tree(hop__buf *out, const hop_graph *g, bool first)
{
    if (!first)
        hop__buf_puts(out, "\n");
    if (g->parent && !first)
        hop__buf_printf(out, "graph %s (in %s):\n", g->name, g->parent->name);
    else
        hop__buf_printf(out, "graph %s:\n", g->name);
    if (g->nguards > 0) {
        hop__buf_puts(out, "guards: ");
        append_guards(out, g);
        hop__buf_puts(out, "\n");
    }
    table_graph(out, g);
    for (size_t i = 0; i < g->nsubgraphs; i++)
        table_tree(out, g->subgraphs[i], false);
}

static void
emit_table(hop__buf *b, const hop_graph *g)
{
    table_tree(b, g, true);
}

char *
hop_graph_table(const hop_graph *g)
{
    return print_graph("hop_graph_table", g, emit_table);
}

/* ------------------------------------------------------------ DOT */

/* Appends s escaped for a DOT double-quoted string. */
static void
dot_escape(hop__buf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '"'    ? "\\\""
                          : s[i] == '\\' ? "\\\\"
                          : s[i] == '\n' ? "\\n"
                                         : NULL;
        if (esc) {
            hop__buf_append(b, s + run, i - run);
            hop__buf_puts(b, esc);
            run = i + 1;
        }
    }
    hop__buf_append(b, s + run, n - run);
}

/* Appends the quoted id of node n printed under path ("" at the top). */
static void
dot_node_id(hop__buf *b, const char *path, const hop_node *n)
{
    hop__buf_puts(b, "\"");
    if (path[0]) {
        dot_escape(b, path, strlen(path));
        hop__buf_puts(b, ".");
    }
    dot_escape(b, n->name, strlen(n->name));
    hop__buf_puts(b, "\"");
}

static const char *
dot_shape(hop_node_kind k)
{
    switch (k) {
    case HOP_NODE_PLACEHOLDER:
        return "ellipse";
    case HOP_NODE_CALL_HOP:
        return "box3d";
    case HOP_NODE_CALL_FOREIGN:
        return "component";
    case HOP_NODE_OUTPUT:
        return "doubleoctagon";
    default:
        return "box";
    }
}

static void
dot_edges(hop__buf *b, const char *path, const hop_node *user, const hop_arg *args, size_t nargs,
          int depth)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_NODE) {
            hop__buf_indent(b, depth * INDENT);
            dot_node_id(b, path, a->u.node);
            hop__buf_puts(b, " -> ");
            dot_node_id(b, path, user);
            hop__buf_puts(b, ";\n");
        } else if (a->kind == HOP_ARG_LIST) {
            dot_edges(b, path, user, a->u.list.items, a->u.list.n, depth);
        }
    }
}

static void dot_graph(hop__buf *b, const hop_graph *g, const char *path, int depth);

/* The path of subgraph s of the graph at path (`cond_true_0`,
 * `map_body_0.wrap_body_1`), which names its cluster and its nodes; NULL
 * with b failed on out-of-memory.  The caller frees it. */
static char *
dot_subpath(hop__buf *b, const char *path, const hop_graph *s)
{
    hop__buf sub;
    hop__buf_init(&sub);
    if (path[0])
        hop__buf_printf(&sub, "%s.", path);
    hop__buf_puts(&sub, s->name);
    char *subpath = hop__buf_finish(&sub);
    if (subpath == NULL)
        b->failed = true;
    return subpath;
}

/* Prints the subgraphs of g as clusters; they need their own path. */
static void
dot_subgraphs(hop__buf *b, const hop_graph *g, const char *path, int depth)
{
    for (size_t i = 0; i < g->nsubgraphs; i++) {
        const hop_graph *s = g->subgraphs[i];
        char *subpath = dot_subpath(b, path, s);
        if (subpath == NULL)
            return;
        hop__buf_indent(b, depth * INDENT);
        hop__buf_puts(b, "subgraph \"cluster_");
        dot_escape(b, subpath, strlen(subpath));
        hop__buf_puts(b, "\" {\n");
        hop__buf_indent(b, (depth + 1) * INDENT);
        hop__buf_puts(b, "label=\"");
        hop__buf label;
        hop__buf_init(&label);
        hop__buf_puts(&label, s->name);
        if (s->nguards > 0) {
            hop__buf_puts(&label, "\nguards: ");
            append_guards(&label, s);
        }
        if (label.failed)
            b->failed = true;
        else
            dot_escape(b, label.data, label.len);
        hop__buf_discard(&label);
        hop__buf_puts(b, "\";\n");
        hop__buf_indent(b, (depth + 1) * INDENT);
        hop__buf_puts(b, "style=rounded;\n");
        dot_graph(b, s, subpath, depth + 1);
        hop__buf_indent(b, depth * INDENT);
        hop__buf_puts(b, "}\n");
        hop__free(subpath);
    }
}

/* Nodes, then subgraph clusters, then edges of g. */
static void
dot_graph(hop__buf *b, const hop_graph *g, const char *path, int depth)
{
    for (const hop_node *n = g->first; n; n = n->next) {
        hop__buf label;
        hop__buf_init(&label);
        hop__buf_puts(&label, n->name);
        const char *target = hop_node_target(n);
        if (strcmp(target, n->name) != 0) {
            hop__buf_puts(&label, "\n");
            hop__buf_puts(&label, target);
        }
        if (n->meta->kind != HOP_VALUE_NONE || n->kind == HOP_NODE_CALL_HOP ||
            n->kind == HOP_NODE_CALL_FOREIGN) {
            hop__buf_puts(&label, "\n");
            append_node_meta(&label, n);
        }
        hop__buf_indent(b, depth * INDENT);
        dot_node_id(b, path, n);
        hop__buf_puts(b, " [label=\"");
        if (label.failed)
            b->failed = true;
        else
            dot_escape(b, label.data, label.len);
        hop__buf_discard(&label);
        hop__buf_printf(b, "\", shape=%s];\n", dot_shape(n->kind));
    }
    dot_subgraphs(b, g, path, depth);
    for (const hop_node *n = g->first; n; n = n->next) {
        dot_edges(b, path, n, n->args, n->nargs, depth);
        for (size_t i = 0; i < n->nargs; i++) {
            const hop_graph *s = n->args[i].kind == HOP_ARG_GRAPH ? n->args[i].u.graph : NULL;
            const hop_node *from = s ? (s->output ? s->output : s->last) : NULL;
            if (from == NULL)
                continue;
            char *subpath = dot_subpath(b, path, s);
            if (subpath == NULL)
                return;
            hop__buf_indent(b, depth * INDENT);
            dot_node_id(b, subpath, from);
            hop__buf_puts(b, " -> ");
            dot_node_id(b, path, n);
            hop__buf_puts(b, " [style=dashed, ltail=\"cluster_");
            dot_escape(b, subpath, strlen(subpath));
            hop__buf_puts(b, "\"];\n");
            hop__free(subpath);
        }
    }
}

static void
emit_dot(hop__buf *b, const hop_graph *g)
{
    hop__buf_puts(b, "digraph \"");
    dot_escape(b, g->name, strlen(g->name));
    hop__buf_puts(b, "\" {\n");
    hop__buf_indent(b, INDENT);
    hop__buf_puts(b, "compound=true;\n");
    hop__buf_indent(b, INDENT);
    hop__buf_puts(b, "node [fontname=\"monospace\", fontsize=10];\n");
    dot_graph(b, g, "", 1);
    hop__buf_puts(b, "}\n");
}

char *
hop_graph_dot(const hop_graph *g)
{
    return print_graph("hop_graph_dot", g, emit_dot);
}
