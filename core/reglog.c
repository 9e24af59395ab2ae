/*
 * core/reglog.c - the registration log (core/core.h): what the registries
 * (HOP classes, foreign kernels) registered on this thread while a
 * library's init ran, so that hop_load_library can undo a failed init.
 * Per thread, since another thread may register at the same time; the log
 * belongs to the loader's stack frame, the thread only points at it.
 */
#include "core/core.h"

static _Thread_local hop__reglog *current;

void
hop__reglog_begin(hop__reglog *log)
{
    log->items = NULL;
    log->n = log->cap = 0;
    log->outer = current;
    current = log;
}

void
hop__reglog_end(hop__reglog *log)
{
    if (current == log)
        current = log->outer;
}

void
hop__reglog_free(hop__reglog *log)
{
    for (size_t i = 0; i < log->n; i++)
        hop__free(log->items[i].name);
    hop__free(log->items);
    log->items = NULL;
    log->n = log->cap = 0;
}

hop_status
hop__reglog_note(hop__reg_kind kind, const char *name)
{
    hop__reglog *log = current;
    if (log == NULL)
        return HOP_OK;
    char *copy = hop__strdup(name);
    if (copy == NULL ||
        hop__grow((void **)&log->items, &log->cap, log->n + 1, sizeof *log->items) != HOP_OK) {
        hop__free(copy);
        return HOP_NOMEM;
    }
    log->items[log->n++] = (hop__reglog_entry){kind, copy};
    return HOP_OK;
}
