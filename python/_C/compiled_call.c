/*
 * python/_C/compiled_call.c - _C._CompiledCall: the base of hop.compile's
 * CompiledFunction (python/hop/_compile.py).  Its call: without keyword
 * arguments, the newest plan's bound call (_fast, Plan.bind_arrays or
 * Plan.bind_tensors) when it takes the arguments, else
 * self._call_args(args); with keyword arguments self._call_kw(args,
 * kwargs).  So the common call has no Python frame between it and the
 * plan, and keyword arguments cost nothing when absent.  A bound call whose
 * guard fails goes to _call_args (which tries the other plans or retraces),
 * as does one that fails while this thread traces (traced values: the
 * function is called inside another trace; it runs as part of that trace)
 * and one whose plan raised another of hop's errors (eager decides there).
 *
 * _C._EffectsCall is the bound call of a translated function's plan
 * (hop/_frame.py: a function with Python effects and no graph break): it
 * checks the environment guards (the builtin names in C, then the other
 * guards' check), runs the plan, rebuilds the result and the
 * side-effect table's values from the outputs, and replays the table in C,
 * in program order, as _frame_state.replay does.  Anything it does not take (other
 * arguments, a guard that fails) is NotImplemented before anything ran; a
 * replayed effect that raises is the call's error (the plan ran, earlier
 * effects happened: never a second run).
 */
#include "trace_impl.h"

#include <stddef.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD PyObject *fast; /* the bound call, or NULL */
    char fp_mode; /* _fp_mode: what a NumPy call's floating-point exceptions do: 0 nothing
                   * (hop's own function), 1 re-run the call when NumPy's state warns for
                   * one, 2 re-run it for any (the function may set NumPy's state itself) */
    char distinct; /* _distinct: arguments with one object at two places take the general
                    * path (distinct_args) */
} CompiledCallObject;

static PyObject *str_call_args, *str_call_kw; /* interned method names */
static PyObject *str_state, *str_print;       /* "_state", "print" */
static PyObject *str_recheck;                 /* "_recheck" */
static PyObject *str_fp_rerun;                /* "_fp_rerun" */
static PyObject *str_space, *str_newline;     /* " ", "\n" */
static PyObject *str_write, *str_item;        /* "write", "item" */
static PyObject *builtins_dict;               /* builtins.__dict__ (print is read per call) */
static PyObject *builtins_module;
static PyObject *builtin_print;         /* builtins.print when this module was made */
static PyObject *sys_dict, *str_stdout; /* sys.__dict__, "stdout" (print_plain) */

/* ------------------------------------------------------- _EffectsCall */

/* The effect kinds replayed here (hop/_compile.py's _EFFECT_CODES): the
 * values of each are (v0, ...) as _frame_state.replay reads them. */
enum { FX_PRINT, FX_CALL, FX_CELL, FX_GLOBAL, FX_ATTR, FX_ITEM, FX_NKINDS };

typedef struct {
    PyObject_HEAD PlanObject *plan;
    PyObject *runner;  /* its _state: (the objects the check expects, the captures) */
    PyObject *check;   /* the runner's fast check of its other guards (Guards.check_c), or
                        * NULL */
    PyObject *names;   /* the plan's builtin-name guard (a _C._NameGuard), or NULL */
    PyObject *consts;  /* tuple: per leaf of the result, its constant (traced: None) */
    PyObject *traced;  /* bytes: per leaf, 1 where the next plan output goes */
    PyObject *tree;    /* (result tree, per effect its values' tree): nested tuples of
                        * leaf indices (Python ints) */
    PyObject *effects; /* tuple of (kind code, target, key) */
    PyObject *lifted;  /* tuple of (cell,) or (dict, key): the lifted ints, read per call and
                        * passed after the arguments as 0-d int64 tensors */
    PyObject *sym;     /* bytes: per plan output, 0 (a tensor), 1 (int(x.item())) or
                        * 2 (float(x.item())), or NULL (all tensors) */
    PyObject *args_at; /* tuple of (leaf index, argument index): leaves that are the caller's
                        * arguments themselves (a break's local holding one), or NULL */
    PyObject *then;    /* a graph break's resume (Break.resume): called with the result, its
                        * value the call's; or NULL */
    Py_ssize_t *alias; /* an aliased plan's pattern (hop/_trace.py _aliases): per argument the
                        * earlier one it must be, -1 an input of its own; or NULL */
    Py_ssize_t nargs;
    void **env; /* the addresses no argument may be besides the captures (Guards.env_ids,
                 * numpy_call.c hop_py__env_argument), or NULL */
    Py_ssize_t nenv;
    int apart; /* whether to check them and the captures */
} EffectsCallObject;

static PyTypeObject EffectsCallType;

/* The value of tree (a leaf index or a tuple of trees) from leaves: a new
 * reference, a fresh tuple for every tuple node (as _pytree.unflatten). */
static PyObject *
build(PyObject *tree, PyObject *const *leaves)
{
    if (!PyTuple_Check(tree)) {
        PyObject *v = leaves[PyLong_AsSsize_t(tree)];
        Py_INCREF(v);
        return v;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tree);
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++) {
        PyObject *v = build(PyTuple_GET_ITEM(tree, i), leaves);
        if (v == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* Whether tree is a leaf index below nleaves or a tuple of such trees. */
static int
tree_ok(PyObject *tree, Py_ssize_t nleaves, int depth)
{
    if (PyLong_CheckExact(tree)) {
        Py_ssize_t i = PyLong_AsSsize_t(tree);
        return i >= 0 && i < nleaves;
    }
    if (!PyTuple_CheckExact(tree) || depth > 64)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tree); i++)
        if (!tree_ok(PyTuple_GET_ITEM(tree, i), nleaves, depth + 1))
            return 0;
    return 1;
}

/* dict(items) of a tuple of (key, value) pairs, or NULL (no exception) for
 * none. */
static int
kwargs_of(PyObject *items, PyObject **out)
{
    *out = NULL;
    if (PyTuple_GET_SIZE(items) == 0)
        return 0;
    PyObject *d = PyDict_New();
    if (d == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++) {
        PyObject *kv = PyTuple_GET_ITEM(items, i);
        if (PyDict_SetItem(d, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1)) < 0) {
            Py_DECREF(d);
            return -1;
        }
    }
    *out = d;
    return 0;
}

/*
 * A name's value in a dict that lives as long as the interpreter
 * (builtins', sys'), read again only when the dict changed: its PEP 509
 * version tag (CPython 3.11; any write to the dict moves it) is the one it
 * had when the value was read, so the dict still holds that value and the
 * borrowed pointer is valid.  Later versions read the dict every time.
 */
typedef struct name_memo {
    PyObject *value; /* borrowed from the dict; NULL: not read yet */
    uint64_t tag;
} name_memo;

static name_memo memo_print, memo_stdout;

/* dict[key] (borrowed), or NULL: with an exception, or without for none. */
static PyObject *
memo_get(name_memo *m, PyObject *dict, PyObject *key)
{
#if PY_VERSION_HEX < 0x030C0000
    if (m->value != NULL && ((PyDictObject *)dict)->ma_version_tag == m->tag)
        return m->value;
    PyObject *v = PyDict_GetItemWithError(dict, key);
    m->value = v;
    m->tag = ((PyDictObject *)dict)->ma_version_tag;
    return v;
#else
    (void)m;
    return PyDict_GetItemWithError(dict, key);
#endif
}

/* Whether fn is the builtin print (not a replacement the user put in
 * builtins): a built-in function of the builtins module named print. */
static int
is_builtin_print(PyObject *fn)
{
    if (fn == builtin_print)
        return 1; /* (the common case, without the name's strcmp: ~12 ns) */
    return PyCFunction_CheckExact(fn) && PyCFunction_GET_SELF(fn) == builtins_module &&
           strcmp(((PyCFunctionObject *)fn)->m_ml->ml_name, "print") == 0;
}

#if PY_VERSION_HEX < 0x030C0000
/*
 * What _PyObject_GetMethod found for "write" on an io.TextIOWrapper
 * (sys.stdout's usual type) the last time: the method of the type, not
 * one in the file's __dict__.  It finds the same while the type's version
 * tag (immutable: never moves) and the file's __dict__ - the same dict
 * (or none) at the same PEP 509 version - are the ones it saw: the lookup
 * depends on nothing else, so any file of the type in that state gets it.
 * meth is borrowed from the type's dict, which the tag keeps unchanged.
 */
static PyTypeObject *textio_type; /* io.TextIOWrapper, or NULL */
static struct {
    PyObject *meth; /* NULL: none memoized */
    unsigned int type_tag;
    PyObject *dict; /* the file's __dict__ then (an address: compared only) */
    uint64_t dict_tag;
} write_memo;

/* The file's __dict__ (borrowed) or NULL, and its version in *tag. */
static PyObject *
instance_dict(PyObject *file, uint64_t *tag)
{
    PyObject **dp = _PyObject_GetDictPtr(file);
    PyObject *d = dp != NULL ? *dp : NULL;
    *tag = d != NULL ? ((PyDictObject *)d)->ma_version_tag : 0;
    return d;
}

/* file.write (borrowed, unbound) from the memo, or NULL to look it up. */
static PyObject *
write_memo_get(PyObject *file)
{
    PyTypeObject *tp = Py_TYPE(file);
    if (write_memo.meth == NULL || tp != textio_type ||
        !PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) ||
        tp->tp_version_tag != write_memo.type_tag)
        return NULL;
    uint64_t tag;
    PyObject *d = instance_dict(file, &tag);
    return d == write_memo.dict && tag == write_memo.dict_tag ? write_memo.meth : NULL;
}

/* Remembers what _PyObject_GetMethod just found on file. */
static void
write_memo_set(PyObject *file, PyObject *meth, int unbound)
{
    PyTypeObject *tp = Py_TYPE(file);
    write_memo.meth = NULL;
    if (!unbound || tp != textio_type || !PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) ||
        PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT))
        return;
    write_memo.type_tag = tp->tp_version_tag;
    write_memo.dict = instance_dict(file, &write_memo.dict_tag);
    write_memo.meth = meth;
}
#endif

/* str(obj).  A hop.Tensor (no subclasses, no tp_str) has its repr as str:
 * made here without PyObject_Str's and PyObject_Repr's two recursion
 * guards around it (~100 instructions of a replayed print(x.sum())), its
 * result checked as PyObject_Repr checks it. */
#if PY_VERSION_HEX < 0x030D0000
static PyObject *
str_of(PyObject *obj)
{
    if (!Py_IS_TYPE(obj, &hop_py_TensorType))
        return PyObject_Str(obj);
    PyObject *text = Py_TYPE(obj)->tp_repr(obj);
    if (text != NULL && !PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "__repr__ returned non-string (type %.200s)",
                     Py_TYPE(text)->tp_name);
        Py_CLEAR(text);
    }
    return text;
}
#endif

/*
 * PyFile_WriteObject(obj, file, Py_PRINT_RAW), the builtin print's write:
 * file.write looked up, then str(obj), then the call, in that order -- the
 * method looked up as the interpreter's own obj.write(...) does, without
 * making a bound method for each write (~300 instructions of a replayed
 * print's two), and on an io.TextIOWrapper from write_memo while that
 * finds the same (~280 more).  0, or -1 with the exception.
 * (_PyObject_GetMethod is CPython's, exported through 3.12; later versions
 * take the public path.)
 */
static int
write_raw(PyObject *obj, PyObject *file)
{
#if PY_VERSION_HEX < 0x030D0000
    PyObject *meth = NULL;
    int unbound = 1;
#if PY_VERSION_HEX < 0x030C0000
    if ((meth = write_memo_get(file)) != NULL) {
        Py_INCREF(meth);
    } else {
        unbound = _PyObject_GetMethod(file, str_write, &meth);
        if (meth != NULL)
            write_memo_set(file, meth, unbound);
    }
#else
    unbound = _PyObject_GetMethod(file, str_write, &meth);
#endif
    if (meth == NULL)
        return -1;
    PyObject *text = str_of(obj);
    PyObject *r = NULL;
    if (text != NULL) {
        PyObject *argv[2] = {file, text};
        r = unbound ? PyObject_Vectorcall(meth, argv, 2, NULL)
                    : PyObject_Vectorcall(meth, argv + 1, 1, NULL);
        Py_DECREF(text);
    }
    Py_DECREF(meth);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
#else
    return PyFile_WriteObject(obj, file, Py_PRINT_RAW);
#endif
}

/* print(*args) as the builtin does it with sep, end, file and flush at their
 * defaults (CPython's builtin_print): nothing when sys.stdout is None, else
 * each argument's str() written to it, " " between, "\n" after -- the same
 * write() calls on the same file, without print's argument parsing, its
 * vararg tuple and a new "\n" string per call.  The arguments are the tree
 * argtree over leaves (each made when written: no tuple of them).  0, or -1
 * with the exception a write or a str() raised. */
static int
print_plain(PyObject *argtree, PyObject *const *leaves)
{
    PyObject *file = memo_get(&memo_stdout, sys_dict, str_stdout); /* borrowed */
    if (file == NULL) {
        if (PyErr_Occurred())
            return -1;
        PyErr_SetString(PyExc_RuntimeError, "lost sys.stdout");
        return -1;
    }
    if (file == Py_None)
        return 0;
    Py_INCREF(file); /* (a write may rebind sys.stdout) */
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyTuple_GET_SIZE(argtree); i++) {
        if (i > 0)
            rc = write_raw(str_space, file);
        PyObject *v = rc == 0 ? build(PyTuple_GET_ITEM(argtree, i), leaves) : NULL;
        if (v == NULL)
            rc = -1;
        else {
            rc = write_raw(v, file);
            Py_DECREF(v);
        }
    }
    if (rc == 0)
        rc = write_raw(str_newline, file);
    Py_DECREF(file);
    return rc;
}

/* One effect of the table with this call's values, the tree vtree over
 * leaves: 0, or -1 with the exception the effect raised.  (The values are
 * made here, per effect: making them runs no Python code, so the order of
 * what the user sees is the table's.) */
static int
replay_one(PyObject *fx, PyObject *vtree, PyObject *const *leaves)
{
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(fx, 0));
    PyObject *target = PyTuple_GET_ITEM(fx, 1), *key = PyTuple_GET_ITEM(fx, 2);
    PyObject *fn = NULL, *kw = NULL, *r = NULL, *v = NULL;
    int rc = -1;
    if (kind == FX_PRINT) {
        /* print(*v[0], **dict(v[1])), print as it is now; the builtin with no
         * keywords writes each argument as it is made */
        fn = memo_get(&memo_print, builtins_dict, str_print);
        if (fn == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_NameError, "name 'print' is not defined");
            return -1;
        }
        PyObject *args = PyTuple_GET_ITEM(vtree, 0), *kws = PyTuple_GET_ITEM(vtree, 1);
        if (PyTuple_CheckExact(args) && PyTuple_CheckExact(kws) && PyTuple_GET_SIZE(kws) == 0 &&
            is_builtin_print(fn))
            return print_plain(args, leaves);
        fn = NULL;
    }
    if ((v = build(vtree, leaves)) == NULL)
        return -1;
    switch (kind) {
    case FX_PRINT: /* print(*v[0], **dict(v[1])), a print other than the builtin's */
    case FX_CALL:  /* getattr(target, key)(*v[0], **dict(v[1])) */
        if (kind == FX_PRINT) {
            /* (looked up again: making v ran no Python code) */
            fn = PyDict_GetItemWithError(builtins_dict, str_print);
            if (fn == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_NameError, "name 'print' is not defined");
                break;
            }
            Py_INCREF(fn);
        } else if ((fn = PyObject_GetAttr(target, key)) == NULL) {
            break;
        }
        if (kwargs_of(PyTuple_GET_ITEM(v, 1), &kw) == 0)
            r = PyObject_Call(fn, PyTuple_GET_ITEM(v, 0), kw);
        rc = r != NULL ? 0 : -1;
        Py_XDECREF(r);
        Py_XDECREF(kw);
        Py_DECREF(fn);
        break;
    case FX_CELL:
        rc = PyCell_Set(target, PyTuple_GET_ITEM(v, 0));
        break;
    case FX_GLOBAL:
        rc = PyObject_SetItem(target, key, PyTuple_GET_ITEM(v, 0));
        break;
    case FX_ATTR:
        rc = PyObject_SetAttr(target, key, PyTuple_GET_ITEM(v, 0));
        break;
    case FX_ITEM:
        rc = PyObject_SetItem(target, PyTuple_GET_ITEM(v, 0), PyTuple_GET_ITEM(v, 1));
        break;
    default:
        PyErr_Format(PyExc_SystemError, "_EffectsCall: unknown effect kind %ld", kind);
    }
    Py_DECREF(v);
    return rc;
}

/* _frame_state.lifted_now in C: the current values of the lifted sources
 * (each (cell,) or (dict, key)) as new 0-d int64 tensors in out: 1; 0 when
 * one holds no int in (-2**62, 2**62) (nothing made: the plan does not fit);
 * -1 with an error. */
static int
lifted_now(PyObject *lifted, PyObject **out)
{
    Py_ssize_t n = PyTuple_GET_SIZE(lifted), i;
    for (i = 0; i < n; i++) {
        PyObject *src = PyTuple_GET_ITEM(lifted, i), *v;
        if (PyTuple_GET_SIZE(src) == 1) {
            v = PyCell_GET(PyTuple_GET_ITEM(src, 0));
        } else if ((v = PyDict_GetItemWithError(PyTuple_GET_ITEM(src, 0),
                                                PyTuple_GET_ITEM(src, 1))) == NULL &&
                   PyErr_Occurred()) {
            goto fail;
        }
        int overflow = 0;
        long long x = v != NULL && PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &overflow)
                                                          : 0;
        if (v == NULL || !PyLong_CheckExact(v) || overflow != 0 || x <= -(1LL << 62) ||
            x >= (1LL << 62)) {
            for (Py_ssize_t j = 0; j < i; j++)
                Py_DECREF(out[j]);
            return 0;
        }
        hop_tensor *t = hop_tensor_empty(HOP_I64, 0, NULL);
        if (t == NULL) {
            hop_py_raise();
            goto fail;
        }
        *(int64_t *)t->data = (int64_t)x;
        if ((out[i] = hop_py_tensor_new(t)) == NULL)
            goto fail;
    }
    return 1;
fail:
    for (Py_ssize_t j = 0; j < i; j++)
        Py_DECREF(out[j]);
    return -1;
}

/* Runner.finish's numbers: the outputs sym marks replaced in the tuple outs
 * (fresh from the plan, not shared yet) by int(x.item()) or float(x.item()). */
static int
as_numbers(PyObject *outs, PyObject *sym)
{
    const char *s = PyBytes_AS_STRING(sym);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {
        if (s[i] == 0)
            continue;
        PyObject *item = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(outs, i), str_item);
        PyObject *num = item == NULL ? NULL : s[i] == 1 ? PyNumber_Long(item)
                                                        : PyNumber_Float(item);
        Py_XDECREF(item);
        if (num == NULL)
            return -1;
        Py_DECREF(PyTuple_GET_ITEM(outs, i));
        PyTuple_SET_ITEM(outs, i, num);
    }
    return 0;
}

/* Whether self takes the tuple args (all hop.Tensors, as many as it was
 * made for) with the builtin names as traced: 1, 0 (NotImplemented), or -1
 * with an error. */
static int
effects_takes(const EffectsCallObject *self, PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n != self->nargs)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_IS_TYPE(PyTuple_GET_ITEM(args, i), &hop_py_TensorType))
            return 0;
    /* the builtin names in C, whatever the other guards (no Python call
     * per call); a failure takes the general path, which raises the
     * guard's error or retraces, as numpy_call.c's bound call */
    return self->names != NULL ? hop_py__names_hold(self->names) : 1;
}

/* Whether the runner's state (its guards held) takes the tuple args: 1; 0
 * (NotImplemented) when an argument is an object of the environment (a
 * capture of the state, or at an address of self->env), which the trace
 * took for another (the general path runs the call eagerly); -1 with an
 * error when the state has no tuple of captures. */
static int
effects_state_fits(const EffectsCallObject *self, PyObject *args, PyObject *state)
{
    PyObject *caps = PyTuple_GET_ITEM(state, 1);
    if (!PyTuple_Check(caps)) {
        PyErr_SetString(PyExc_SystemError, "_EffectsCall: the runner's captures are no tuple");
        return -1;
    }
    return !self->apart ||
           hop_py__env_argument(((PyTupleObject *)args)->ob_item, PyTuple_GET_SIZE(args), caps,
                                self->env, self->nenv) < 0;
}

/* The result's leaves (borrowed): the plan's outputs outs where traced,
 * else the constants, and at args_at the caller's arguments args. */
static void
fill_leaves(const EffectsCallObject *self, PyObject *outs, PyObject *args, PyObject **leaves)
{
    const char *traced = PyBytes_AS_STRING(self->traced);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->consts); i++)
        leaves[i] = traced[i] ? PyTuple_GET_ITEM(outs, k++) : PyTuple_GET_ITEM(self->consts, i);
    for (Py_ssize_t j = 0; self->args_at != NULL && j < PyTuple_GET_SIZE(self->args_at); j++) {
        PyObject *at = PyTuple_GET_ITEM(self->args_at, j);
        leaves[PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 0))] =
            PyTuple_GET_ITEM(args, PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 1)));
    }
}

/* The call on the tuple args: NotImplemented (nothing ran) unless it takes
 * them; *ran is set once the plan ran (an error after that is the call's).
 * An aliased plan's call takes only arguments with its pattern, and passes
 * the plan its own ones. */
static PyObject *
effects_run(EffectsCallObject *self, PyObject *args, int *ran)
{
    *ran = 0;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int takes = effects_takes(self, args);
    if (takes <= 0) {
        if (takes < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *state = PyObject_GetAttr(self->runner, str_state);
    if (state == NULL)
        return NULL;
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 2) {
        Py_DECREF(state);
        PyErr_SetString(PyExc_SystemError, "_EffectsCall: the runner's state is not a pair");
        return NULL;
    }
    if (self->check != NULL) {
        /* the guards' fast check; False: the full check (Runner._recheck,
         * the new state or None), as Runner._captured does: a cell the
         * function rebinds (`w = w - lr * g`) fails the fast check on every
         * call and passes the full one */
        PyObject *argv[2] = {PyTuple_GET_ITEM(state, 0), Py_None};
        PyObject *ok = PyObject_Vectorcall(self->check, argv, 2, NULL);
        int holds = ok != NULL ? PyObject_IsTrue(ok) : -1;
        Py_XDECREF(ok);
        if (holds == 0) {
            Py_SETREF(state, PyObject_CallMethodNoArgs(self->runner, str_recheck));
            if (state == NULL)
                return NULL;
            if (state == Py_None) {
                Py_DECREF(state);
                Py_RETURN_NOTIMPLEMENTED; /* a guard's miss: the general path raises it */
            }
            holds = PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2;
        }
        if (holds <= 0) {
            Py_DECREF(state);
            if (holds < 0)
                return NULL;
            PyErr_SetString(PyExc_SystemError, "_EffectsCall: the runner's state is not a pair");
            return NULL;
        }
    }
    int fits = effects_state_fits(self, args, state);
    if (fits <= 0) {
        Py_DECREF(state);
        if (fits < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *small_in[16], **in = small_in, *outs = NULL;
    Py_ssize_t nl = PyTuple_GET_SIZE(self->lifted), nin = n;
    if (n + nl > 16 && (in = PyMem_RawMalloc((size_t)(n + nl) * sizeof *in)) == NULL) {
        Py_DECREF(state);
        return PyErr_NoMemory();
    }
    if (self->alias != NULL) {
        /* (checked after the guards, which read no argument: nothing ran) */
        if (!hop_py__alias_pattern_holds(self->alias, self->nargs,
                                         ((PyTupleObject *)args)->ob_item, in, &nin)) {
            if (in != small_in)
                PyMem_RawFree(in);
            Py_DECREF(state);
            Py_RETURN_NOTIMPLEMENTED;
        }
        n = nin;
    } else {
        for (Py_ssize_t i = 0; i < n; i++)
            in[i] = PyTuple_GET_ITEM(args, i);
    }
    int took = lifted_now(self->lifted, in + n);
    if (took > 0) {
        nin = n + nl;
        outs = hop_py__plan_run_tensors(self->plan, in, nin, PyTuple_GET_ITEM(state, 1), NULL,
                                        HOP_PY_RUN_TUPLE);
    }
    for (Py_ssize_t i = n; i < nin; i++)
        Py_DECREF(in[i]);
    if (in != small_in)
        PyMem_RawFree(in);
    Py_DECREF(state);
    if (took == 0)
        Py_RETURN_NOTIMPLEMENTED; /* a lifted source holds no int: the general path's miss */
    if (outs == NULL)
        return NULL;
    *ran = 1;
    if (self->sym != NULL && as_numbers(outs, self->sym) < 0) {
        Py_DECREF(outs);
        return NULL;
    }
    Py_ssize_t nleaves = PyTuple_GET_SIZE(self->consts);
    PyObject *small[32], **leaves = small, *built = NULL, *result = NULL;
    if (nleaves > 32 && (leaves = PyMem_RawMalloc((size_t)nleaves * sizeof *leaves)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    fill_leaves(self, outs, args, leaves);
    PyObject *vtrees = PyTuple_GET_ITEM(self->tree, 1);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->effects); i++)
        if (replay_one(PyTuple_GET_ITEM(self->effects, i), PyTuple_GET_ITEM(vtrees, i), leaves) < 0)
            goto done;
    built = build(PyTuple_GET_ITEM(self->tree, 0), leaves);
    if (built != NULL && self->then != NULL) {
        /* (the plan ended at a graph break: the code after it, in Python;
         * an error there is the call's own, *ran being set) */
        result = PyObject_CallOneArg(self->then, built);
    } else {
        result = built;
        built = NULL;
    }
done:
    if (leaves != small)
        PyMem_RawFree(leaves);
    Py_XDECREF(built);
    Py_DECREF(outs);
    return result;
}

static PyObject *
effects_call(EffectsCallObject *self, PyObject *args, PyObject *kwargs)
{
    int ran;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)
        Py_RETURN_NOTIMPLEMENTED;
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 1 ||
        !PyTuple_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "_EffectsCall takes one tuple of arguments");
        return NULL;
    }
    return effects_run(self, PyTuple_GET_ITEM(args, 0), &ran);
}

/* Whether lifted (NULL: none) is a tuple of (cell,) and (dict, key): 0, or
 * -1 with a TypeError. */
static int
lifted_ok(PyObject *lifted)
{
    for (Py_ssize_t i = 0; lifted != NULL && i < PyTuple_GET_SIZE(lifted); i++) {
        PyObject *src = PyTuple_GET_ITEM(lifted, i);
        if (!PyTuple_Check(src) ||
            !(PyTuple_GET_SIZE(src) == 1 ? PyCell_Check(PyTuple_GET_ITEM(src, 0))
                                         : PyTuple_GET_SIZE(src) == 2 &&
                                               PyDict_CheckExact(PyTuple_GET_ITEM(src, 0)))) {
            PyErr_Format(PyExc_TypeError, "_EffectsCall: lifted source %zd is not (cell,) or "
                                          "(dict, key)", i);
            return -1;
        }
    }
    return 0;
}

/* The pattern alias (None, or a tuple of nargs ints: per argument the earlier
 * argument it must be, or -1) as an array in *out (NULL for None): 0, or -1
 * with a TypeError. */
static int
alias_of(PyObject *alias, Py_ssize_t nargs, Py_ssize_t **out)
{
    *out = NULL;
    if (alias == Py_None)
        return 0;
    if (!PyTuple_Check(alias) || PyTuple_GET_SIZE(alias) != nargs) {
        PyErr_SetString(PyExc_TypeError, "_EffectsCall: alias is None or a tuple of an int per "
                                         "argument");
        return -1;
    }
    Py_ssize_t *a = PyMem_RawMalloc((size_t)(nargs > 0 ? nargs : 1) * sizeof *a);
    if (a == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < nargs; j++) {
        a[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(alias, j));
        if (a[j] < -1 || a[j] >= j || (a[j] >= 0 && a[a[j]] >= 0)) {
            /* (an earlier argument of its own: the pattern _aliases makes) */
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "_EffectsCall: alias %zd is not -1 or an earlier "
                                              "argument of its own", j);
            PyMem_RawFree(a);
            return -1;
        }
    }
    *out = a;
    return 0;
}

/* Whether args_at (None, or a tuple of (leaf index, argument index)) holds
 * leaf indices below nleaves and argument indices below nargs: 0, or -1 with
 * a TypeError. */
static int
args_at_ok(PyObject *args_at, Py_ssize_t nleaves, Py_ssize_t nargs)
{
    if (args_at == Py_None)
        return 0;
    if (!PyTuple_Check(args_at))
        goto bad;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(args_at); j++) {
        PyObject *at = PyTuple_GET_ITEM(args_at, j);
        if (!PyTuple_Check(at) || PyTuple_GET_SIZE(at) != 2)
            goto bad;
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 0));
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 1));
        if (i < 0 || i >= nleaves || k < 0 || k >= nargs)
            goto bad;
    }
    return 0;
bad:
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "_EffectsCall: args_at is None or a tuple of (leaf index, "
                                     "argument index)");
    return -1;
}

/* _EffectsCall(plan, runner, nargs, check, consts, traced, tree, effects[, lifted, sym,
 * names, alias, then, args_at, env]): checked here once (the call trusts the shapes:
 * hop/_compile.py makes them from the runner's templates). */
static PyObject *
effects_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *plan, *runner, *check, *consts, *traced, *tree, *effects,
        *lifted = NULL, *sym = Py_None, *names = Py_None, *alias = Py_None, *then = Py_None,
        *args_at = Py_None, *env = Py_None;
    Py_ssize_t nargs, *pattern;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "_EffectsCall takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOnOO!O!O!O!|O!OOOOOO:_EffectsCall", &plan, &runner, &nargs,
                          &check, &PyTuple_Type, &consts, &PyBytes_Type, &traced, &PyTuple_Type,
                          &tree, &PyTuple_Type, &effects, &PyTuple_Type, &lifted, &sym, &names,
                          &alias, &then, &args_at, &env))
        return NULL;
    if (then != Py_None && !PyCallable_Check(then)) {
        PyErr_Format(PyExc_TypeError, "_EffectsCall: then is None or callable, not %.100s",
                     Py_TYPE(then)->tp_name);
        return NULL;
    }
    if (names != Py_None && !hop_py__is_name_guard(names)) {
        PyErr_Format(PyExc_TypeError, "_EffectsCall: names is None or a _NameGuard, not %.100s",
                     Py_TYPE(names)->tp_name);
        return NULL;
    }
    if (lifted_ok(lifted) < 0 ||
        (sym != Py_None && (!PyBytes_Check(sym) || (size_t)PyBytes_GET_SIZE(sym) !=
                                                       ((PlanObject *)plan)->noutputs))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_EffectsCall: sym is not a bytes per plan output");
        return NULL;
    }
    if (!hop_py__is_plan(plan) || nargs < 0 ||
        PyBytes_GET_SIZE(traced) != PyTuple_GET_SIZE(consts) || PyTuple_GET_SIZE(tree) != 2 ||
        !PyTuple_Check(PyTuple_GET_ITEM(tree, 1)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(tree, 1)) != PyTuple_GET_SIZE(effects) ||
        !tree_ok(tree, PyTuple_GET_SIZE(consts), 0)) {
        PyErr_SetString(PyExc_TypeError, "_EffectsCall: inconsistent arguments");
        return NULL;
    }
    Py_ssize_t ntraced = 0;
    for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(traced); i++)
        ntraced += PyBytes_AS_STRING(traced)[i] != 0;
    if ((size_t)ntraced != ((PlanObject *)plan)->noutputs) {
        PyErr_SetString(PyExc_TypeError, "_EffectsCall: the traced leaves are not the plan's "
                                         "outputs");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(effects); i++) {
        PyObject *fx = PyTuple_GET_ITEM(effects, i);
        long kind = PyTuple_Check(fx) && PyTuple_GET_SIZE(fx) == 3
                        ? PyLong_AsLong(PyTuple_GET_ITEM(fx, 0))
                        : -1;
        if (kind < 0 || kind >= FX_NKINDS) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError,
                             "_EffectsCall: effect %zd is not "
                             "(kind, target, key)",
                             i);
            return NULL;
        }
    }
    if (args_at_ok(args_at, PyTuple_GET_SIZE(consts), nargs) < 0)
        return NULL;
    if (nargs < 0 || alias_of(alias, nargs, &pattern) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_EffectsCall: inconsistent arguments");
        return NULL;
    }
    void **ids;
    Py_ssize_t nids;
    if (hop_py__env_ids_of(env, &ids, &nids, "_EffectsCall") < 0) {
        PyMem_RawFree(pattern);
        return NULL;
    }
    EffectsCallObject *self = (EffectsCallObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        PyMem_RawFree(pattern);
        PyMem_RawFree(ids);
        return NULL;
    }
    self->alias = pattern;
    self->env = ids;
    self->nenv = nids;
    self->apart = env != Py_None;
    Py_INCREF(plan);
    self->plan = (PlanObject *)plan;
    self->runner = Py_NewRef(runner);
    self->check = check == Py_None ? NULL : Py_NewRef(check);
    self->names = names == Py_None ? NULL : Py_NewRef(names);
    self->consts = Py_NewRef(consts);
    self->traced = Py_NewRef(traced);
    self->tree = Py_NewRef(tree);
    self->effects = Py_NewRef(effects);
    self->lifted = lifted != NULL ? Py_NewRef(lifted) : PyTuple_New(0);
    self->sym = sym != Py_None ? Py_NewRef(sym) : NULL;
    self->then = then != Py_None ? Py_NewRef(then) : NULL;
    self->args_at = args_at != Py_None ? Py_NewRef(args_at) : NULL;
    self->nargs = nargs;
    if (self->lifted == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int
effects_traverse(EffectsCallObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->plan);
    Py_VISIT(self->runner);
    Py_VISIT(self->check);
    Py_VISIT(self->names);
    Py_VISIT(self->consts);
    Py_VISIT(self->tree);
    Py_VISIT(self->effects);
    Py_VISIT(self->lifted);
    Py_VISIT(self->then);
    Py_VISIT(self->args_at);
    return 0;
}

static int
effects_clear(EffectsCallObject *self)
{
    Py_CLEAR(self->plan);
    Py_CLEAR(self->runner);
    Py_CLEAR(self->check);
    Py_CLEAR(self->names);
    Py_CLEAR(self->consts);
    Py_CLEAR(self->traced);
    Py_CLEAR(self->tree);
    Py_CLEAR(self->effects);
    Py_CLEAR(self->lifted);
    Py_CLEAR(self->sym);
    Py_CLEAR(self->then);
    Py_CLEAR(self->args_at);
    return 0;
}

static void
effects_dealloc(EffectsCallObject *self)
{
    PyObject_GC_UnTrack(self);
    effects_clear(self);
    PyMem_RawFree(self->alias);
    PyMem_RawFree(self->env);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject EffectsCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._EffectsCall",
    .tp_basicsize = sizeof(EffectsCallObject),
    .tp_dealloc = (destructor)effects_dealloc,
    .tp_call = (ternaryfunc)effects_call,
    .tp_traverse = (traverseproc)effects_traverse,
    .tp_clear = (inquiry)effects_clear,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = effects_new,
    .tp_doc =
        "_EffectsCall(plan, runner, nargs, check, consts, traced, tree, effects[, lifted, "
        "sym, names, alias, then, args_at, env]): the bound call of a translated function's plan "
        "with its "
        "side-effect table (hop/_compile.py); f(args) is the result (then(result) where "
        "then, a graph break's resume, is given; args_at: (leaf, argument) pairs of "
        "leaves that are the caller's arguments), or NotImplemented "
        "before anything ran for arguments or guards it does not take (names, a "
        "_NameGuard, checked in C first, then check; alias, an aliased plan's pattern: "
        "per argument the earlier one it must be, -1 an input of its own; env, a tuple of "
        "addresses: an argument that is a capture or at one of them is NotImplemented, "
        "after the guards).",
};

/* ------------------------------------------------------- _CompiledCall */

/*
 * Whether no object is at two places of the tuple args (the bound calls
 * take flat tuples of tensors or arrays, each its own input of the plan).
 * f(t, t) is not the call a plan of two inputs was traced for: `a is b`
 * is True eagerly and a write through one shows through the other, so it
 * takes the general path, whose retrace makes a plan of one input for
 * both (hop/_trace.py _aliased, _aliases).  That plan's bound call checks
 * its own pattern (hop_py__alias_pattern_holds, numpy_call.c: an
 * ArrayCall's, or an _EffectsCall's with guards or effects), so a call that repeats
 * an object goes to it.  A pointer compare per pair: nothing for
 * one argument, one for two.
 */
static int
distinct_args(PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *const *a = ((PyTupleObject *)args)->ob_item;
    for (Py_ssize_t i = 1; i < n; i++)
        for (Py_ssize_t j = 0; j < i; j++)
            if (a[i] == a[j])
                return 0;
    return 1;
}

static PyObject *
compiled_call(CompiledCallObject *self, PyObject *args, PyObject *kwargs)
{
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)
        return PyObject_CallMethodObjArgs((PyObject *)self, str_call_kw, args, kwargs, NULL);
    /* (called while this thread traces, a compiled helper of a function
     * hop translates or traces: the general path inlines it into that
     * trace; its plan must not run, nor its effects replay, for real) */
    PyObject *fast = hop_py_tracing_active() ? NULL : self->fast;
    if (fast != NULL && fast != Py_None &&
        (!self->distinct || distinct_args(args) || hop_py__array_call_aliased(fast) ||
         (Py_IS_TYPE(fast, &EffectsCallType) && ((EffectsCallObject *)fast)->alias != NULL))) {
        Py_INCREF(fast); /* the call may replace it */
        int ran = 0;
        PyObject *r = Py_IS_TYPE(fast, &EffectsCallType)
                          ? effects_run((EffectsCallObject *)fast, args, &ran)
                          : PyObject_CallOneArg(fast, args);
        if (r != NULL && r != Py_NotImplemented && self->fp_mode != 0 && hop_fp_status() != 0 &&
            hop_py__is_array_call(fast)) {
            /* the plan raised a floating-point exception NumPy warns for:
             * the call again through NumPy, its warnings and its answer
             * (nothing of the call was applied: a bound call of arrays has
             * no effects and writes no argument) */
            int warned = self->fp_mode == 2 ? 1 : hop_py__np_fp_warned();
            if (warned != 0) {
                Py_DECREF(fast);
                Py_DECREF(r);
                return warned < 0 ? NULL
                                  : PyObject_CallMethodOneArg((PyObject *)self, str_fp_rerun, args);
            }
        }
        Py_DECREF(fast);
        if (ran)
            return r; /* the plan ran, never again: a replayed effect's (or the code after a
                       * graph break's) error, or the answer, NotImplemented too */
        if (r != Py_NotImplemented) {
            /* a guard that fails (a miss: _call_args retraces), traced
             * values (inside another trace) and any other error of hop's
             * take the general path: nothing of the call happened, and
             * what the plan raised for the call's values (an index out of
             * range) is for eager to decide (hop/_compile.py, _RUN_ERRORS;
             * the plan runs again there, on this rare path only) */
            if (r != NULL ||
                !(PyErr_ExceptionMatches(hop_py_Error) || hop_py__thread_tracing()))
                return r;
            PyErr_Clear();
        } else {
            Py_DECREF(r);
        }
    }
    return PyObject_CallMethodOneArg((PyObject *)self, str_call_args, args);
}

/* The Python subclass brings its __dict__ and __weakref__ (and its type's
 * reference, which subtype_dealloc drops): only fast is ours. */
static int
compiled_traverse(CompiledCallObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fast);
    return 0;
}

static int
compiled_clear(CompiledCallObject *self)
{
    Py_CLEAR(self->fast);
    return 0;
}

static void
compiled_dealloc(CompiledCallObject *self)
{
    PyObject_GC_UnTrack(self);
    compiled_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef compiled_members[] = {
    {"_fast", T_OBJECT, offsetof(CompiledCallObject, fast), 0,
     "the newest plan's bound call (None: none)"},
    {"_fp_mode", T_BYTE, offsetof(CompiledCallObject, fp_mode), 0,
     "what the floating-point exceptions of a NumPy call's plan do: 0 nothing (hop's own "
     "function), 1 re-run the call through NumPy when NumPy's error state warns for one, 2 "
     "re-run it for any (the function may set NumPy's error state itself)"},
    {"_distinct", T_BOOL, offsetof(CompiledCallObject, distinct), 0,
     "whether a call whose arguments hold one object at two places takes _call_args, not "
     "the bound plan (hop.compile's own functions trace it as two inputs)"},
    {NULL},
};

static PyTypeObject CompiledCallType;

int
hop_py__is_compiled_call(PyObject *o)
{
    return PyObject_TypeCheck(o, &CompiledCallType);
}

static PyTypeObject CompiledCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hop._C._CompiledCall",
    .tp_basicsize = sizeof(CompiledCallObject),
    .tp_dealloc = (destructor)compiled_dealloc,
    .tp_call = (ternaryfunc)compiled_call,
    .tp_traverse = (traverseproc)compiled_traverse,
    .tp_clear = (inquiry)compiled_clear,
    .tp_members = compiled_members,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_doc = "The call of hop.compile's CompiledFunction: the bound plan (_fast), else "
              "_call_args(args), or _call_kw(args, kwargs) with keyword arguments.",
};

int
hop_py__compiled_call_init(PyObject *module)
{
    if (PyType_Ready(&CompiledCallType) < 0)
        return -1;
    if (PyType_Ready(&EffectsCallType) < 0)
        return -1;
    if ((str_call_args = PyUnicode_InternFromString("_call_args")) == NULL ||
        (str_call_kw = PyUnicode_InternFromString("_call_kw")) == NULL ||
        (str_state = PyUnicode_InternFromString("_state")) == NULL ||
        (str_recheck = PyUnicode_InternFromString("_recheck")) == NULL ||
        (str_fp_rerun = PyUnicode_InternFromString("_fp_rerun")) == NULL ||
        (str_print = PyUnicode_InternFromString("print")) == NULL)
        return -1;
    PyObject *b = PyImport_ImportModule("builtins");
    if (b == NULL)
        return -1;
    builtins_dict = Py_NewRef(PyModule_GetDict(b));
    builtins_module = b; /* (kept: a module of the interpreter's, never freed) */
    PyObject *pr = PyDict_GetItemWithError(builtins_dict, str_print); /* borrowed */
    if (pr == NULL && PyErr_Occurred())
        return -1;
    /* (NULL, or replaced before hop was imported: is_builtin_print's slow test only) */
    if (pr != NULL && is_builtin_print(pr))
        builtin_print = Py_NewRef(pr); /* (kept, as the module) */
#if PY_VERSION_HEX < 0x030C0000
    PyObject *io = PyImport_ImportModule("io");
    if (io == NULL)
        return -1;
    PyObject *tw = PyObject_GetAttrString(io, "TextIOWrapper");
    Py_DECREF(io);
    if (tw == NULL)
        return -1;
    if (PyType_Check(tw) && !PyType_HasFeature((PyTypeObject *)tw, Py_TPFLAGS_HEAPTYPE))
        textio_type = (PyTypeObject *)tw; /* (kept: a static type of the interpreter's) */
    else
        Py_DECREF(tw);
#endif
    PyObject *sys = PyImport_ImportModule("sys");
    if (sys == NULL)
        return -1;
    sys_dict = Py_NewRef(PyModule_GetDict(sys)); /* (the interpreter's sysdict) */
    Py_DECREF(sys);
    if ((str_stdout = PyUnicode_InternFromString("stdout")) == NULL ||
        (str_space = PyUnicode_InternFromString(" ")) == NULL ||
        (str_newline = PyUnicode_InternFromString("\n")) == NULL ||
        (str_write = PyUnicode_InternFromString("write")) == NULL ||
        (str_item = PyUnicode_InternFromString("item")) == NULL)
        return -1;
    if (PyModule_AddObjectRef(module, "_EffectsCall", (PyObject *)&EffectsCallType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "_CompiledCall", (PyObject *)&CompiledCallType);
}
