/*
 * hop/registry.c - the HOP registry: validation, registration, lookup by
 * name and listing, and libraries of HOPs loaded at run time
 * (hop_load_library).  The built-ins are registered on first use.  Mutexes
 * make it safe to register and load from several threads.
 */
#define _GNU_SOURCE /* dladdr */
#include "hop/hop_impl.h"

#include <pthread.h>
#include <dlfcn.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const hop_class **classes;
static size_t nclasses, classes_cap;
static bool builtins_done;

static hop_status
validate_params(const hop_class *cls)
{
    size_t n, nbodies = 0, ngroups = 0;
    const hop_param *p = hop_class_params(cls, &n);
    for (size_t i = 0; i < n; i++) {
        if (p[i].name == NULL || !hop_name_is_identifier(p[i].name))
            return hop_error(HOP_INVALID,
                             "register HOP %s: the name of parameter %zu is missing or not an "
                             "identifier",
                             cls->name, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p[j].name, p[i].name) == 0)
                return hop_error(HOP_INVALID, "register HOP %s: two parameters are named %s",
                                 cls->name, p[i].name);
        if ((unsigned)p[i].kind > HOP_PARAM_VARARGS)
            return hop_error(HOP_INVALID, "register HOP %s: parameter %s has kind %d", cls->name,
                             p[i].name, (int)p[i].kind);
        if (p[i].kind == HOP_PARAM_VARARGS && i + 1 != n)
            return hop_error(HOP_INVALID,
                             "register HOP %s: the variadic parameter %s must be the last",
                             cls->name, p[i].name);
        if (p[i].kind == HOP_PARAM_BODIES && nbodies != (size_t)-1) {
            for (size_t j = i + 1; j < n; j++)
                if (p[j].kind == HOP_PARAM_BODY || p[j].kind == HOP_PARAM_BODIES)
                    return hop_error(HOP_INVALID,
                                     "register HOP %s: the bodies %s must be the last body "
                                     "parameter",
                                     cls->name, p[i].name);
        }
        if (p[i].kind == HOP_PARAM_BODY || p[i].kind == HOP_PARAM_BODIES) {
            nbodies++;
            if (p[i].prefix == NULL || !hop_name_is_identifier(p[i].prefix))
                return hop_error(HOP_INVALID,
                                 "register HOP %s: the subgraph prefix of body %s is missing or "
                                 "not an identifier",
                                 cls->name, p[i].name);
        }
        ngroups += hop_param_is_group(p[i].kind);
    }
    if (nbodies < 1 || nbodies > HOP_MAX_BODIES)
        return hop_error(HOP_INVALID, "register HOP %s: it has %zu bodies; it must have 1..%d",
                         cls->name, nbodies, HOP_MAX_BODIES);
    if (ngroups > 1 && hop_class_input_mode(cls) == HOP_INPUTS_LIFTED)
        return hop_error(HOP_INVALID,
                         "register HOP %s: its inputs are lifted on first use, so it takes at "
                         "most one group of operands (it has %zu)",
                         cls->name, ngroups);
    return HOP_OK;
}

static hop_status
validate(const hop_class *cls)
{
    if (cls == NULL)
        return hop_error(HOP_MISUSE, "register HOP: NULL class");
    if (cls->name == NULL || !hop_name_is_identifier(cls->name))
        return hop_error(HOP_INVALID, "register HOP: name %s%s%s is not an identifier",
                         cls->name ? "'" : "", cls->name ? cls->name : "(NULL)",
                         cls->name ? "'" : "");
    if ((unsigned)cls->input_mode > HOP_INPUTS_EXPLICIT)
        return hop_error(HOP_INVALID, "register HOP %s: input_mode %d is not an hop_input_mode",
                         cls->name, (int)cls->input_mode);
    if ((unsigned)cls->guard_mode > HOP_GUARDS_BODY)
        return hop_error(HOP_INVALID, "register HOP %s: guard_mode %d is not an hop_guard_mode",
                         cls->name, (int)cls->guard_mode);
    int depth = 0;
    for (const hop_class *k = cls->base; k; k = k->base)
        if (++depth > HOP__MAX_BASE_DEPTH || k == cls)
            return hop_error(HOP_INVALID,
                             "register HOP %s: its chain of base classes is cyclic or deeper "
                             "than %d",
                             cls->name, HOP__MAX_BASE_DEPTH);
    return validate_params(cls);
}

static const hop_class *
find_locked(const char *name)
{
    for (size_t i = 0; i < nclasses; i++)
        if (strcmp(classes[i]->name, name) == 0)
            return classes[i];
    return NULL;
}

static hop_status
add_locked(const hop_class *cls)
{
    hop_status st = validate(cls);
    if (st != HOP_OK)
        return st;
    if (find_locked(cls->name))
        return hop_error(HOP_EXISTS, "register HOP: a HOP named %s is registered already",
                         cls->name);
    if (hop__grow((void **)&classes, &classes_cap, nclasses + 1, sizeof *classes) != HOP_OK)
        return HOP_NOMEM;
    classes[nclasses++] = cls;
    return HOP_OK;
}

/* Registers the built-ins once; a failure (out of memory) is retried later. */
static hop_status
builtins_locked(void)
{
    if (builtins_done)
        return HOP_OK;
    const hop_class *builtins[] = {&hop_wrap_class,
                                   &hop_cond_class,
                                   &hop_map_class,
                                   &hop_invoke_subgraph_class,
                                   &hop_while_loop_class,
                                   &hop_fori_loop_class,
                                   &hop_scan_class,
                                   &hop_switch_class,
                                   &hop_associative_scan_class,
                                   &hop_vjp_class,
                                   &hop_jvp_class,
                                   &hop_vmap_class};
    for (size_t i = 0; i < HOP__ARRAY_LEN(builtins); i++) {
        if (find_locked(builtins[i]->name))
            continue;
        hop_status st = add_locked(builtins[i]);
        if (st != HOP_OK)
            return st;
    }
    builtins_done = true;
    return HOP_OK;
}

hop_status
hop_register_hop(const hop_class *cls)
{
    pthread_mutex_lock(&lock);
    hop_status st = builtins_locked();
    if (st == HOP_OK)
        st = add_locked(cls);
    pthread_mutex_unlock(&lock);
    return st;
}

hop_status
hop_unregister_hop(const char *name)
{
    if (name == NULL)
        return hop_error(HOP_MISUSE, "unregister HOP: NULL name");
    pthread_mutex_lock(&lock);
    hop_status st = builtins_locked();
    size_t i = 0;
    while (i < nclasses && strcmp(classes[i]->name, name) != 0)
        i++;
    if (st == HOP_OK && i == nclasses)
        st = hop_error(HOP_NOT_FOUND, "unregister HOP: no HOP named %s is registered", name);
    if (st == HOP_OK) {
        memmove(&classes[i], &classes[i + 1], (nclasses - i - 1) * sizeof *classes);
        nclasses--;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

const hop_class *
hop_find_hop(const char *name)
{
    if (name == NULL) {
        hop_error(HOP_MISUSE, "find HOP: NULL name");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    const hop_class *cls = builtins_locked() == HOP_OK ? find_locked(name) : NULL;
    pthread_mutex_unlock(&lock);
    if (cls == NULL && hop_error_code() != HOP_NOMEM)
        hop_error(HOP_NOT_FOUND, "find HOP: no HOP named %s is registered", name);
    return cls;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t
hop_list_hops(const char **names, size_t cap)
{
    pthread_mutex_lock(&lock);
    size_t n = 0;
    if (builtins_locked() == HOP_OK) {
        n = nclasses;
        const char **all = hop__malloc((n + 1) * sizeof *all);
        if (all) {
            for (size_t i = 0; i < n; i++)
                all[i] = classes[i]->name;
            qsort(all, n, sizeof *all, compare_names);
            for (size_t i = 0; names != NULL && i < n && i < cap; i++)
                names[i] = all[i];
            hop__free(all);
        } else {
            n = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---------------------------------------------------------------- libraries */

/* Libraries loaded so far and the names each registered (never unloaded:
 * their classes stay registered). */
typedef struct library {
    void *handle;
    const char **names;
    size_t n;
} library;

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static library *libraries;
static size_t nlibraries, libraries_cap;

/* Makes this copy of hop's symbols visible to the libraries it loads: a
 * copy linked into a Python extension is loaded with RTLD_LOCAL. */
static void
export_self(void)
{
    Dl_info info;
    if (dladdr((void *)&hop_load_library, &info) && info.dli_fname) {
        void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
        if (self)
            dlclose(self); /* the promotion stays; only the reference goes */
    }
}

static hop_status
report(const library *l, const char **names, size_t cap, size_t *n)
{
    for (size_t i = 0; names && i < l->n && i < cap; i++)
        names[i] = l->names[i];
    if (n)
        *n = l->n;
    return HOP_OK;
}

/* The names registered now that were not in before (both sorted). */
static const char **
new_names(const char **before, size_t nb, const char **after, size_t na, size_t *n)
{
    const char **out = hop__calloc(na + 1, sizeof *out);
    *n = 0;
    for (size_t i = 0, j = 0; out && i < na; i++) {
        while (j < nb && strcmp(before[j], after[i]) < 0)
            j++;
        if (j == nb || strcmp(before[j], after[i]) != 0)
            out[(*n)++] = after[i];
    }
    return out;
}

hop_status
hop_load_library(const char *path, const char **names, size_t cap, size_t *n)
{
    if (n)
        *n = 0;
    if (path == NULL || (cap && names == NULL))
        return hop_error(HOP_MISUSE, "hop_load_library: NULL %s", path ? "names" : "path");
    pthread_mutex_lock(&lib_lock);
    export_self();
    hop_status st = HOP_OK;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        st = hop_error(HOP_NOT_FOUND, "load_library: cannot load %s: %s", path,
                       why ? why : "unknown error");
        goto done;
    }
    for (size_t i = 0; i < nlibraries; i++)
        if (libraries[i].handle == h) {
            dlclose(h); /* the first load's reference keeps it */
            st = report(&libraries[i], names, cap, n);
            goto done;
        }
    hop_library_init_fn init;
    void *sym = dlsym(h, HOP_LIBRARY_INIT);
    memcpy(&init, &sym, sizeof init);
    if (init == NULL) {
        dlclose(h);
        st = hop_error(HOP_INVALID, "load_library: %s has no function %s", path, HOP_LIBRARY_INIT);
        goto done;
    }
    size_t nb = hop_list_hops(NULL, 0), na;
    const char **before = hop__calloc(nb + 1, sizeof *before), **added = NULL;
    if (before == NULL || hop__grow((void **)&libraries, &libraries_cap, nlibraries + 1,
                                    sizeof *libraries) != HOP_OK) {
        hop__free(before);
        dlclose(h);
        st = HOP_NOMEM;
        goto done;
    }
    nb = hop_list_hops(before, nb);
    st = init();
    if (st != HOP_OK && hop_error_code() == HOP_OK)
        st = hop_error(st, "load_library: %s's %s failed with %s", path, HOP_LIBRARY_INIT,
                       hop_status_name(st));
    na = hop_list_hops(NULL, 0);
    const char **after = hop__calloc(na + 1, sizeof *after);
    if (after)
        na = hop_list_hops(after, na);
    size_t nnew = 0;
    added = after ? new_names(before, nb, after, na, &nnew) : NULL;
    if (st == HOP_OK && added == NULL)
        st = HOP_NOMEM;
    if (st != HOP_OK) {
        /* Undo what the init registered (keeping its error), then unload. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hop_error_message());
        hop_status code = hop_error_code();
        for (size_t i = 0; added && i < nnew; i++)
            hop_unregister_hop(added[i]);
        hop__free(added);
        added = NULL;
        dlclose(h);
        hop_error(code, "%s", msg);
    } else {
        libraries[nlibraries] = (library){h, added, nnew};
        report(&libraries[nlibraries++], names, cap, n);
    }
    hop__free(before);
    hop__free(after);
done:
    pthread_mutex_unlock(&lib_lock);
    return st;
}
