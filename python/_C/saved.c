/*
 * python/_C/saved.c - the saved format (hop/saved.h) and lifting provenance
 * (hop/lifts.h) for the Python package: _save, _load, _lifts,
 * _explain_lifts, and the lift hook that notes where each lift happened.
 *
 * The hook runs inside the C tracer whenever a body's use of an outer value
 * lifts it; it walks the Python frames from the innermost outwards to the
 * first one outside the hop package and notes that frame's file:line on the
 * new placeholder.  It costs nothing for ops that lift nothing.
 */
#include "hop_py.h"

#include "hop/lifts.h"
#include "hop/saved.h"

#include <frameobject.h>
#include <string.h>

/* ------------------------------------------------------------ lift notes */

static PyObject *package_dir; /* ".../hop/" (str), whose frames are skipped */

/* The package's directory, from the extension's __file__ (set only after
 * the module's init, so found on first use). */
static PyObject *
find_package_dir(void)
{
    if (package_dir)
        return package_dir;
    PyObject *m = PyImport_AddModule("hop._C"); /* borrowed */
    PyObject *file = m ? PyModule_GetFilenameObject(m) : NULL;
    if (file) {
        Py_ssize_t cut = PyUnicode_FindChar(file, '/', 0, PyUnicode_GET_LENGTH(file), -1);
        package_dir = cut >= 0 ? PyUnicode_Substring(file, 0, cut + 1) : NULL;
        Py_DECREF(file);
    }
    if (PyErr_Occurred())
        PyErr_Clear();
    return package_dir;
}

/* "<file>:<line>" into note (what snprintf's "%s:%d" writes there), by
 * hand when it fits: the format parsing was ~1.5 K instructions of every
 * lift (one per operand of every HOP call, issue #30). */
static void
note_at(char *note, size_t cap, const char *file, int line)
{
    size_t n = strlen(file);
    if (n + 13 > cap) { /* ':', up to 11 characters of an int, NUL */
        snprintf(note, cap, "%s:%d", file, line);
        return;
    }
    memcpy(note, file, n);
    note[n++] = ':';
    unsigned v = line < 0 ? 0u - (unsigned)line : (unsigned)line;
    if (line < 0)
        note[n++] = '-';
    hop_py_put_digits(note + n, v);
}

size_t
hop_py_put_digits(char *out, unsigned long long v)
{
    char digits[20];
    size_t nd = 0, n = 0;
    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (nd)
        out[n++] = digits[--nd];
    out[n] = '\0';
    return n;
}

/* The places last noted: a code object outside the package (a strong
 * reference), an instruction offset, the note.  A body's op lifts at the
 * same place on every HOP call of a loop (cond: two branches, two places)
 * and for every capture of a loop over a list, so the package test and the
 * line lookup are made once a place (issue #30: ~190 instructions a lift).
 * A line is a function of the code and the offset; the GIL guards these;
 * each code has one entry of NOTED (by its address). */
#define NOTED 4
static struct noted {
    PyObject *code;
    int lasti;
    char note[512];
} noted[NOTED];

static struct noted *
noted_for(const PyCodeObject *code)
{
    return &noted[((uintptr_t)code >> 6) % NOTED];
}

/* The note for frame f (its code, not the package's), from the cache when
 * it is a place noted. */
static void
note_for(char *note, size_t cap, PyFrameObject *f, PyCodeObject *code)
{
    struct noted *e = noted_for(code);
    int lasti = PyFrame_GetLasti(f);
    size_t n;
    if (e->code == (PyObject *)code && e->lasti == lasti && (n = strlen(e->note) + 1) <= cap) {
        memcpy(note, e->note, n);
        return;
    }
    const char *name = PyUnicode_AsUTF8(code->co_filename);
    note_at(note, cap, name ? name : "?", PyFrame_GetLineNumber(f));
    n = strlen(note) + 1;
    if (name == NULL || n > sizeof e->note)
        return;
    Py_INCREF(code);
    Py_XSETREF(e->code, (PyObject *)code);
    e->lasti = lasti;
    memcpy(e->note, note, n);
}

static hop_status
lift_hook(void *ud, hop_tracer *t, hop_node *ph, hop_node *source)
{
    (void)t;
    (void)source;
    PyObject *et, *ev, *tb; /* an exception in flight stays as it was */
    PyErr_Fetch(&et, &ev, &tb);
    if (find_package_dir() == NULL) {
        PyErr_Restore(et, ev, tb);
        return HOP_OK;
    }
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    char note[512];
    note[0] = '\0';
    while (f) {
        PyCodeObject *code = PyFrame_GetCode(f);
        PyObject *file = code->co_filename;
        if (noted_for(code)->code == (PyObject *)code ||
            (PyUnicode_Check(file) &&
             PyUnicode_Tailmatch(file, package_dir, 0, PY_SSIZE_T_MAX, -1) != 1)) {
            note_for(note, sizeof note, f, code);
            Py_DECREF(code);
            break;
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    /* A body of cond or wrap gets its operands as outer values: their lifts
     * are explicit, which captures="error" needs to know.  Out of memory
     * storing the note fails the lift (MemoryError), as any allocation of
     * the lift would. */
    return note[0]
               ? hop_output_graph_set_lift_note(ud, ph, note, hop_py_lift_is_operand(ph, source))
               : HOP_OK;
}

void
hop_py_install_lift_hook(hop_output_graph *og)
{
    hop_tracer_set_lift_hook(hop_output_graph_root(og), lift_hook, og);
}

/* ------------------------------------------------------------ saving */

/* _save(trace, captures, sections) -> bytes: captures are the concrete
 * tensors of the captured inputs in order, sections a dict str -> bytes. */
static PyObject *
py_save(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *trace, *caps, *secs;
    if (!PyArg_ParseTuple(args, "OO!O!:_save", &trace, &PyList_Type, &caps, &PyDict_Type, &secs))
        return NULL;
    hop_output_graph *og = hop_py_trace_og(trace);
    if (og == NULL)
        return NULL;
    Py_ssize_t nc = PyList_GET_SIZE(caps), ns = PyDict_GET_SIZE(secs);
    hop_saved_tensor *ts = PyMem_RawCalloc((size_t)nc + 1, sizeof *ts);
    hop_tensor **held = PyMem_RawCalloc((size_t)nc + 1, sizeof *held);
    hop_saved_section *ss = PyMem_RawCalloc((size_t)ns + 1, sizeof *ss);
    PyObject *result = NULL;
    if (ts == NULL || held == NULL || ss == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *o = PyList_GET_ITEM(caps, i);
        if (!PyObject_TypeCheck(o, &hop_py_TensorType) || HOP_PY_IS_PROXY(o)) {
            PyErr_Format(PyExc_TypeError, "_save: capture %zd is not a concrete tensor", i);
            goto done;
        }
        hop_tensor *t = hop_tensor_contiguous(((TensorObject *)o)->t);
        if (t == NULL) {
            hop_py_raise();
            goto done;
        }
        held[i] = t;
        ts[i].dtype = t->dtype;
        ts[i].rank = t->rank;
        memcpy(ts[i].sizes, t->sizes, sizeof ts[i].sizes);
        ts[i].data = t->data;
    }
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(secs, &pos, &key, &value)) {
        if (!PyUnicode_Check(key) || !PyBytes_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "_save: sections map str to bytes");
            goto done;
        }
        Py_ssize_t len;
        ss[k].name = PyUnicode_AsUTF8AndSize(key, &len);
        if (ss[k].name == NULL)
            goto done;
        if ((size_t)len != strlen(ss[k].name)) { /* the file's names are C strings */
            PyErr_Format(PyExc_ValueError, "_save: the section name %R holds a NUL character", key);
            goto done;
        }
        ss[k].data = PyBytes_AS_STRING(value);
        ss[k].size = (size_t)PyBytes_GET_SIZE(value);
        k++;
    }
    hop_save_options opts = {ts, (size_t)nc, ss, (size_t)ns};
    void *data = NULL;
    size_t size = 0;
    if (hop_output_graph_save(og, &opts, &data, &size) != HOP_OK) {
        hop_py_raise();
        goto done;
    }
    result = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    hop_free(data);
done:
    for (Py_ssize_t i = 0; held && i < nc; i++)
        hop_tensor_release(held[i]);
    PyMem_RawFree(ts);
    PyMem_RawFree(held);
    PyMem_RawFree(ss);
    return result;
}

/* ------------------------------------------------------------ loading */

static const void *
make_capture(void *ud, size_t index, const hop_saved_tensor *v)
{
    (void)index;
    PyObject *list = ud;
    hop_tensor *t = hop_tensor_from_data(v->dtype, v->rank, v->sizes, v->data);
    PyObject *o = t ? hop_py_tensor_new(t) : NULL;
    if (o == NULL || PyList_Append(list, o) < 0) {
        Py_XDECREF(o);
        PyErr_Clear();
        if (hop_error_code() == HOP_OK)
            hop_error(HOP_NOMEM, "out of memory");
        return NULL;
    }
    Py_DECREF(o); /* the list holds it */
    return o;
}

/* _load(bytes) -> (Trace, captures, sections): the program as a finished
 * Trace, the captured tensors in order, the sections as a dict. */
static PyObject *
py_load(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *caps = PyList_New(0), *secs = PyDict_New(), *result = NULL;
    hop_saved *s = NULL;
    if (caps && secs) {
        hop_load_options opts = {.find_hop = hop_find_hop, .capture = make_capture, .ud = caps};
        s = hop_output_graph_load(view.buf, (size_t)view.len, &opts);
        if (s == NULL)
            hop_py_raise();
    }
    for (size_t i = 0; s && i < s->nsections; i++) {
        /* The format says str; the file's bytes decide whether it is text. */
        const char *nm = s->sections[i].name;
        PyObject *key = PyUnicode_DecodeUTF8(nm, (Py_ssize_t)strlen(nm), "strict");
        if (key == NULL) {
            PyErr_Clear();
            PyErr_Format(hop_py_Error, "load: sections: the name of section %zu is not UTF-8 text",
                         i);
            goto done;
        }
        /* The writer's sections come from a dict: a name twice would leave
         * one of them unread. */
        int seen = PyDict_Contains(secs, key);
        if (seen != 0) {
            if (seen > 0)
                PyErr_Format(hop_py_Error, "load: sections: the section %U appears twice", key);
            Py_DECREF(key);
            goto done;
        }
        PyObject *b =
            PyBytes_FromStringAndSize(s->sections[i].data, (Py_ssize_t)s->sections[i].size);
        if (b == NULL || PyDict_SetItem(secs, key, b) < 0) {
            Py_DECREF(key);
            Py_XDECREF(b);
            goto done;
        }
        Py_DECREF(key);
        Py_DECREF(b);
    }
    if (s) {
        PyObject *tr = hop_py_trace_from_og(s->og, caps);
        s->og = NULL; /* the Trace owns it now (or freed it) */
        if (tr)
            result = Py_BuildValue("(NOO)", tr, caps, secs);
    }
done:
    hop_saved_free(s);
    Py_XDECREF(caps);
    Py_XDECREF(secs);
    PyBuffer_Release(&view);
    return result;
}

/* ------------------------------------------------------------ provenance */

static const char *const origin_names[] = {"argument", "capture", "symbol", "intermediate"};

/* _lifts(trace) -> list of dicts, one per lifted input (hop/lifts.h). */
static PyObject *
py_lifts(PyObject *self, PyObject *trace)
{
    (void)self;
    hop_output_graph *og = hop_py_trace_og(trace);
    if (og == NULL)
        return NULL;
    hop_lift_info *li;
    size_t n;
    if (hop_output_graph_lifts(og, &li, &n) != HOP_OK)
        return hop_py_raise();
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const hop_lift_info *l = &li[i];
        PyObject *chain = PyTuple_New((Py_ssize_t)l->nlifted_by);
        for (size_t k = 0; chain && k < l->nlifted_by; k++) {
            hop_py_fill(&chain, (Py_ssize_t)k, PyUnicode_FromString(l->lifted_by[k]->name));
        }
        PyObject *d =
            chain
                ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s,s:N,s:z,s:z,s:O,s:z,s:O}", "graph",
                                l->graph->name, "placeholder", l->placeholder->name, "source",
                                l->source->name, "kind", origin_names[l->origin_kind], "origin",
                                l->origin->name, "origin_graph", l->origin_graph->name, "lifted_by",
                                chain, "shape_of", l->shape_of ? l->shape_of->name : NULL,
                                "shared_with", l->shared_with ? l->shared_with->graph->name : NULL,
                                "for_other_body", l->for_other_body ? Py_True : Py_False,
                                "location", l->note, "operand", l->operand ? Py_True : Py_False)
                : NULL;
        hop_py_fill(&list, (Py_ssize_t)i, d);
    }
    hop_free(li);
    return list;
}

static PyObject *
py_explain_lifts(PyObject *self, PyObject *trace)
{
    (void)self;
    hop_output_graph *og = hop_py_trace_og(trace);
    if (og == NULL)
        return NULL;
    char *text = hop_output_graph_explain_lifts(og);
    if (text == NULL)
        return hop_py_raise();
    PyObject *r = PyUnicode_FromString(text);
    hop_free(text);
    return r;
}

static PyMethodDef saved_functions[] = {
    {"_save", py_save, METH_VARARGS,
     "_save(trace, captures, sections, /)\n--\n\nThe traced program as saved bytes (hop/saved.h)."},
    {"_load", py_load, METH_O,
     "_load(data, /)\n--\n\nA saved program: (Trace, captured tensors, sections)."},
    {"_lifts", py_lifts, METH_O,
     "_lifts(trace, /)\n--\n\nOne dict per lifted input of every subgraph (hop/lifts.h)."},
    {"_explain_lifts", py_explain_lifts, METH_O,
     "_explain_lifts(trace, /)\n--\n\nThe lift report as text (hop_output_graph_explain_lifts)."},
    {NULL, NULL, 0, NULL},
};

int
hop_py_saved_init(PyObject *module)
{
    return PyModule_AddFunctions(module, saved_functions);
}
