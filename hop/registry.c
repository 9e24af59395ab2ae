/*
 * hop/registry.c - the HOP registry: validation, registration, lookup by
 * name and listing, and libraries of HOPs loaded at run time
 * (hop_load_library).  The built-ins are registered on first use.  Mutexes
 * make it safe to register and load from several threads.
 */
#define _GNU_SOURCE /* dladdr1, dlinfo */
#include "hop/foreign.h"
#include "hop/hop_impl.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
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

/* Adds cls; a class a library's init registers (logged) goes into the
 * thread's registration log first, so that a failed init can undo it. */
static hop_status
add_locked(const hop_class *cls, bool logged)
{
    hop_status st = validate(cls);
    if (st != HOP_OK)
        return st;
    if (find_locked(cls->name))
        return hop_error(HOP_EXISTS, "register HOP: a HOP named %s is registered already",
                         cls->name);
    if (hop__grow((void **)&classes, &classes_cap, nclasses + 1, sizeof *classes) != HOP_OK ||
        (logged && hop__reglog_note(HOP__REG_HOP, cls->name) != HOP_OK))
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
        hop_status st = add_locked(builtins[i], false);
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
        st = add_locked(cls, true);
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

/* Recursive: an init may load the libraries it depends on. */
static pthread_mutex_t lib_lock;
static pthread_once_t lib_lock_once = PTHREAD_ONCE_INIT;
static library *libraries;
static size_t nlibraries, libraries_cap;
/* The handles whose init is running (an init that loads its own library
 * would run again and again). */
static void *loading[64];
static size_t nloading;

static void
lib_lock_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&lib_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

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

/*
 * The library's descriptor, checked before anything of it runs: an object
 * (not a function: `int hop_library_init = 42` is no entry point) of the
 * library itself (not of one of its dependencies), of a descriptor's size,
 * with the magic number, this ABI version and an init inside the library.
 */
static hop_status
find_descriptor(void *h, const char *path, const hop_library_descriptor **out)
{
    struct link_map *self = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &self) != 0 || self == NULL)
        return hop_error(HOP_INVALID, "load_library: %s: cannot inspect the library", path);
    void *sym = dlsym(h, HOP_LIBRARY_SYMBOL);
    const char *old = dlsym(h, "hop_library_init") ? " (it exports hop_library_init, the entry "
                                                     "point of hop before ABI version 2)"
                                                   : "";
    if (sym == NULL)
        return hop_error(HOP_INVALID,
                         "load_library: %s has no descriptor %s%s; a library of HOPs declares "
                         "itself with HOP_LIBRARY(init) (hop/prim_hop.h) and is built against "
                         "this hop's headers (ABI version %d)",
                         path, HOP_LIBRARY_SYMBOL, old, HOP_ABI_VERSION);
    Dl_info info;
    const ElfW(Sym) *entry = NULL;
    struct link_map *owner = NULL;
    if (!dladdr1(sym, &info, (void **)&entry, RTLD_DL_SYMENT) || entry == NULL ||
        !dladdr1(sym, &info, (void **)&owner, RTLD_DL_LINKMAP) || owner != self ||
        ELF64_ST_TYPE(entry->st_info) != STT_OBJECT ||
        entry->st_size < sizeof(hop_library_descriptor))
        return hop_error(HOP_INVALID,
                         "load_library: %s's symbol %s is not a descriptor (an object of %zu "
                         "bytes defined by HOP_LIBRARY(init) in the library itself)",
                         path, HOP_LIBRARY_SYMBOL, sizeof(hop_library_descriptor));
    const hop_library_descriptor *d = sym;
    if (d->magic != HOP_LIBRARY_MAGIC)
        return hop_error(HOP_INVALID,
                         "load_library: %s's symbol %s is not a descriptor (magic number "
                         "0x%08x, not 0x%08x)",
                         path, HOP_LIBRARY_SYMBOL, (unsigned)d->magic, HOP_LIBRARY_MAGIC);
    if (d->abi_version != HOP_ABI_VERSION)
        return hop_error(HOP_INVALID,
                         "load_library: %s was built for hop ABI version %u, but this hop is "
                         "ABI version %d; rebuild it against this hop's headers",
                         path, (unsigned)d->abi_version, HOP_ABI_VERSION);
    void *init;
    memcpy(&init, &d->init, sizeof init);
    if (init == NULL || !dladdr1(init, &info, (void **)&owner, RTLD_DL_LINKMAP) || owner != self)
        return hop_error(HOP_INVALID,
                         "load_library: %s's descriptor has no init function of the library", path);
    *out = d;
    return HOP_OK;
}

/* Unregisters, last first, what a failed init registered; its error stays. */
static void
undo(const hop__reglog *log)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hop_error_message());
    hop_status code = hop_error_code();
    for (size_t i = log->n; i-- > 0;) {
        if (log->items[i].kind == HOP__REG_HOP)
            hop_unregister_hop(log->items[i].name);
        else
            hop_foreign_unregister(log->items[i].name);
    }
    hop_error(code, "%s", msg);
}

/* Runs the init of the library h (not loaded before): on success records
 * it with the names of the HOPs it registered, sorted; on failure undoes
 * every registration. */
static hop_status
run_init(void *h, const char *path, const hop_library_descriptor *d)
{
    for (size_t i = 0; i < nloading; i++)
        if (loading[i] == h)
            return hop_error(HOP_INVALID,
                             "load_library: %s's init loads %s itself (directly or through "
                             "another library)",
                             path, path);
    if (nloading == HOP__ARRAY_LEN(loading))
        return hop_error(HOP_INVALID,
                         "load_library: %s: libraries loading libraries nest deeper "
                         "than %zu",
                         path, HOP__ARRAY_LEN(loading));
    hop__reglog log;
    hop__reglog_begin(&log);
    loading[nloading++] = h;
    hop_error_clear();
    hop_status st = d->init();
    nloading--;
    hop__reglog_end(&log);
    if (st != HOP_OK && hop_error_code() == HOP_OK)
        st = hop_error(st, "load_library: %s's init failed with %s", path, hop_status_name(st));
    library lib = {h, NULL, 0};
    for (size_t i = 0; i < log.n; i++)
        lib.n += log.items[i].kind == HOP__REG_HOP;
    /* Room for the record only now: the init may have loaded libraries. */
    if (st == HOP_OK && ((lib.names = hop__calloc(lib.n + 1, sizeof *lib.names)) == NULL ||
                         hop__grow((void **)&libraries, &libraries_cap, nlibraries + 1,
                                   sizeof *libraries) != HOP_OK))
        st = HOP_NOMEM;
    for (size_t i = 0, k = 0; st == HOP_OK && i < log.n; i++) {
        if (log.items[i].kind != HOP__REG_HOP)
            continue;
        pthread_mutex_lock(&lock);
        const hop_class *cls = find_locked(log.items[i].name);
        pthread_mutex_unlock(&lock);
        if (cls)
            lib.names[k++] = cls->name; /* borrowed from the class */
        else
            lib.n--; /* registered and unregistered again by the init */
    }
    if (st == HOP_OK) {
        qsort(lib.names, lib.n, sizeof *lib.names, compare_names);
        libraries[nlibraries++] = lib;
    } else {
        hop__free(lib.names);
        undo(&log);
    }
    hop__reglog_free(&log);
    return st;
}

hop_status
hop_load_library(const char *path, const char **names, size_t cap, size_t *n)
{
    if (n)
        *n = 0;
    if (path == NULL || (cap && names == NULL))
        return hop_error(HOP_MISUSE, "hop_load_library: NULL %s", path ? "names" : "path");
    pthread_once(&lib_lock_once, lib_lock_init);
    pthread_mutex_lock(&lib_lock);
    export_self();
    hop_status st = HOP_OK;
    const hop_library_descriptor *d = NULL;
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
    st = find_descriptor(h, path, &d);
    bool ran = st == HOP_OK;
    if (ran)
        st = run_init(h, path, d);
    if (st != HOP_OK) {
        /* Nothing of the library is registered any more.  One whose init ran
         * stays loaded: while it ran, its HOPs and kernels were in the
         * registry for every thread, and a graph or a plan that took one
         * then must not point into an unloaded library. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hop_error_message());
        hop_status code = hop_error_code() != HOP_OK ? hop_error_code() : st;
        if (!ran)
            dlclose(h);
        st = hop_error(code, "%s", msg);
    } else {
        report(&libraries[nlibraries - 1], names, cap, n);
    }
done:
    pthread_mutex_unlock(&lib_lock);
    return st;
}
