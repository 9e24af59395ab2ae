/*
 * hop/registry.c - the HOP registry: validation, registration, lookup by
 * name and listing.  The built-ins are registered on first use.  A mutex
 * makes it safe to register from several threads.
 */
#include "hop/hop_impl.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const hop_hop_class **classes;
static size_t nclasses, classes_cap;
static bool builtins_done;

static hop_status
validate(const hop_hop_class *cls)
{
    if (cls == NULL)
        return hop_error(HOP_MISUSE, "register HOP: NULL class");
    if (cls->name == NULL || !hop_name_is_identifier(cls->name))
        return hop_error(HOP_INVALID, "register HOP: name %s%s%s is not an identifier",
                         cls->name ? "'" : "", cls->name ? cls->name : "(NULL)",
                         cls->name ? "'" : "");
    if (cls->nbodies < 1 || cls->nbodies > HOP_MAX_BODIES)
        return hop_error(HOP_INVALID, "register HOP %s: nbodies is %d; it must be 1..%d", cls->name,
                         cls->nbodies, HOP_MAX_BODIES);
    for (int b = 0; b < cls->nbodies; b++)
        if (cls->prefixes[b] == NULL || !hop_name_is_identifier(cls->prefixes[b]))
            return hop_error(HOP_INVALID,
                             "register HOP %s: the subgraph prefix of body %d is missing or not "
                             "an identifier",
                             cls->name, b);
    if ((unsigned)cls->input_mode > HOP_INPUTS_EXPLICIT)
        return hop_error(HOP_INVALID, "register HOP %s: input_mode %d is not an hop_input_mode",
                         cls->name, (int)cls->input_mode);
    if ((unsigned)cls->guard_mode > HOP_GUARDS_BODY)
        return hop_error(HOP_INVALID, "register HOP %s: guard_mode %d is not an hop_guard_mode",
                         cls->name, (int)cls->guard_mode);
    int depth = 0;
    for (const hop_hop_class *k = cls->base; k; k = k->base)
        if (++depth > HOP__MAX_BASE_DEPTH || k == cls)
            return hop_error(HOP_INVALID,
                             "register HOP %s: its chain of base classes is cyclic or deeper "
                             "than %d",
                             cls->name, HOP__MAX_BASE_DEPTH);
    return HOP_OK;
}

static const hop_hop_class *
find_locked(const char *name)
{
    for (size_t i = 0; i < nclasses; i++)
        if (strcmp(classes[i]->name, name) == 0)
            return classes[i];
    return NULL;
}

static hop_status
add_locked(const hop_hop_class *cls)
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
    const hop_hop_class *builtins[] = {&hop_wrap_class, &hop_cond_class, &hop_map_class,
                                       &hop_invoke_subgraph_class};
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
hop_register_hop(const hop_hop_class *cls)
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

const hop_hop_class *
hop_find_hop(const char *name)
{
    if (name == NULL) {
        hop_error(HOP_MISUSE, "find HOP: NULL name");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    const hop_hop_class *cls = builtins_locked() == HOP_OK ? find_locked(name) : NULL;
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
