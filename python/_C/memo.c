/*
 * python/_C/memo.c - the op memo of a trace, for hop.compile's path
 * specialisation (python/hop/_paths.py).
 *
 * Path specialisation traces the rest of a function after a data-dependent
 * `if` by running the function again from its start inside a cond branch.
 * The ops before the `if` were recorded once already: the memo lists them
 * (op and arguments, and the node each gave), and while the function runs
 * again they are *replayed*: an op call equal to the next listed one gives
 * that node (which the branch then lifts) instead of a second copy in the
 * branch.  A call that differs turns the memo off for the rest of that run,
 * which then records as any trace does (correct, only slower): memoization
 * never decides what is computed, only where.
 *
 * Only ops recorded at the depth of the run (its own tracer) take part: the
 * bodies of the function's own HOP calls are traced again as a whole.  The
 * memo holds nodes, never Python objects, so it makes no reference cycle
 * with the trace.
 */
#include "hop_py.h"

#include <string.h>

typedef struct memo_entry {
    hop_op op;
    size_t nargs;
    hop_arg *args; /* nargs arguments, then the items of their lists */
    hop_node *node;
} memo_entry;

struct hop_py_memo {
    memo_entry *items;
    size_t n, cap;
    size_t cursor, limit; /* replaying entries [cursor, limit) */
    int depth;            /* the tracer depth of the run; -1: off */
};

hop_py_memo *
hop_py_memo_new(void)
{
    hop_py_memo *m = PyMem_RawCalloc(1, sizeof *m);
    if (m == NULL)
        return (hop_py_memo *)PyErr_NoMemory();
    m->depth = -1;
    return m;
}

static void
truncate_to(hop_py_memo *m, size_t n)
{
    while (m->n > n)
        PyMem_RawFree(m->items[--m->n].args);
}

void
hop_py_memo_free(hop_py_memo *m)
{
    if (m == NULL)
        return;
    truncate_to(m, 0);
    PyMem_RawFree(m->items);
    PyMem_RawFree(m);
}

static bool
same_args(const hop_arg *a, const hop_arg *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind != b[i].kind)
            return false;
        switch (a[i].kind) {
        case HOP_ARG_NODE:
            if (a[i].u.node != b[i].u.node)
                return false;
            break;
        case HOP_ARG_INT:
            if (a[i].u.i != b[i].u.i)
                return false;
            break;
        case HOP_ARG_FLOAT:
            if (memcmp(&a[i].u.f, &b[i].u.f, sizeof a[i].u.f) != 0)
                return false;
            break;
        case HOP_ARG_BOOL:
            if (a[i].u.b != b[i].u.b)
                return false;
            break;
        case HOP_ARG_SYM:
            if (a[i].u.sym != b[i].u.sym)
                return false;
            break;
        case HOP_ARG_DTYPE:
            if (a[i].u.dtype != b[i].u.dtype)
                return false;
            break;
        case HOP_ARG_LIST:
            if (a[i].u.list.n != b[i].u.list.n ||
                !same_args(a[i].u.list.items, b[i].u.list.items, a[i].u.list.n))
                return false;
            break;
        case HOP_ARG_NONE:
            break;
        case HOP_ARG_GRAPH:
            if (a[i].u.graph != b[i].u.graph)
                return false;
            break;
        }
    }
    return true;
}

hop_node *
hop_py_memo_replay(hop_py_memo *m, int depth, hop_op op, const hop_arg *args, size_t nargs)
{
    if (m == NULL || depth != m->depth || m->cursor >= m->limit)
        return NULL;
    const memo_entry *e = &m->items[m->cursor];
    if (e->op == op && e->nargs == nargs && same_args(e->args, args, nargs)) {
        m->cursor++;
        return e->node;
    }
    /* The run went another way: no memo for the rest of it (the entries
     * stay, for the runs of the other branches). */
    m->depth = -1;
    return NULL;
}

int
hop_py_memo_record(hop_py_memo *m, int depth, hop_op op, const hop_arg *args, size_t nargs,
                   hop_node *node)
{
    if (m == NULL || depth != m->depth)
        return 0;
    /* Entries past the replayed ones belong to a run that ended (the other
     * side of a branch): this run's ops take their place. */
    truncate_to(m, m->cursor);
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        memo_entry *grown = PyMem_RawRealloc(m->items, cap * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->items = grown;
        m->cap = cap;
    }
    size_t total = hop_args_count(args, nargs);
    hop_arg *copy = PyMem_RawMalloc((total ? total : 1) * sizeof *copy);
    if (copy == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    hop_arg *pool = copy + nargs;
    hop_args_copy(copy, args, nargs, &pool);
    m->items[m->n++] = (memo_entry){op, nargs, copy, node};
    m->cursor = m->limit = m->n;
    return 0;
}

/* The state Python saves around a run: (length, cursor, limit, depth). */
PyObject *
hop_py_memo_state(hop_py_memo *m)
{
    return Py_BuildValue("(nnni)", (Py_ssize_t)m->n, (Py_ssize_t)m->cursor, (Py_ssize_t)m->limit,
                         m->depth);
}

/*
 * Starts a run at tracer depth `depth` that replays the first `limit`
 * entries (0 for the function's first run: it only records).  Entries past
 * them are dropped.
 */
int
hop_py_memo_begin(hop_py_memo *m, Py_ssize_t limit, int depth)
{
    if (limit < 0 || (size_t)limit > m->n) {
        PyErr_Format(PyExc_ValueError, "_memo_begin(): %zd entries of %zu", limit, m->n);
        return -1;
    }
    truncate_to(m, (size_t)limit);
    m->cursor = 0;
    m->limit = (size_t)limit;
    m->depth = depth;
    return 0;
}

/* Back to a saved state after a branch's run: its entries go (and those
 * the saved state had past the branch point, which the run dropped, stay
 * gone: the run that saved it is over). */
int
hop_py_memo_restore(hop_py_memo *m, PyObject *state)
{
    Py_ssize_t n, cursor, limit;
    int depth;
    if (!PyArg_ParseTuple(state, "nnni", &n, &cursor, &limit, &depth))
        return -1;
    if (n < 0 || cursor > n || limit > n) {
        PyErr_SetString(PyExc_ValueError, "_memo_restore(): not a state of a memo");
        return -1;
    }
    if ((size_t)n < m->n)
        truncate_to(m, (size_t)n);
    m->cursor = (size_t)cursor < m->n ? (size_t)cursor : m->n;
    m->limit = (size_t)limit < m->n ? (size_t)limit : m->n;
    m->depth = depth;
    return 0;
}

/* Off: no replay, no record, every entry dropped. */
void
hop_py_memo_stop(hop_py_memo *m)
{
    truncate_to(m, 0);
    m->cursor = m->limit = 0;
    m->depth = -1;
}
