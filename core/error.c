/*
 * core/error.c - status names and messages, and the per-thread error context.
 *
 * The context is thread-local so that tracing on one thread never clobbers an
 * error another thread is about to report.
 */
#include "core/core.h"

#include <stdio.h>

typedef struct hop__status_info {
    const char *name;
    const char *message;
} hop__status_info;

static const hop__status_info status_table[] = {
#define HOP__STATUS_ROW(name, msg) {"HOP_" #name, msg},
    HOP_STATUS_LIST(HOP__STATUS_ROW)
#undef HOP__STATUS_ROW
};
_Static_assert(HOP__ARRAY_LEN(status_table) == HOP_STATUS_COUNT, "status table and enum disagree");

static _Thread_local hop_status last_code = HOP_OK;
static _Thread_local char last_message[1024];

const char *
hop_status_name(hop_status s)
{
    if ((unsigned)s >= HOP_STATUS_COUNT)
        return "HOP_UNKNOWN";
    return status_table[s].name;
}

const char *
hop_status_message(hop_status s)
{
    if ((unsigned)s >= HOP_STATUS_COUNT)
        return "unknown status";
    return status_table[s].message;
}

hop_status
hop_error_code(void)
{
    return last_code;
}

const char *
hop_error_message(void)
{
    return last_message;
}

void
hop_error_clear(void)
{
    last_code = HOP_OK;
    last_message[0] = '\0';
}

hop_status
hop_verror(hop_status code, const char *fmt, va_list ap)
{
    /* Formatted aside first: an argument may be the current message itself
     * (hop_error(st, "cond: pred: %s", hop_error_message())). */
    char text[sizeof last_message];
    if (fmt == NULL)
        snprintf(text, sizeof text, "%s", hop_status_message(code));
    else
        vsnprintf(text, sizeof text, fmt, ap);
    last_code = code;
    memcpy(last_message, text, sizeof text);
    return code;
}

hop_status
hop_error(hop_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hop_verror(code, fmt, ap);
    va_end(ap);
    return code;
}

hop_status
hop__slot_status(const char *cls, const char *slot, hop_status st)
{
    if (st != HOP_OK && last_code == HOP_OK)
        return hop_error(st, "%s: its %s slot failed with %s and gave no message", cls, slot,
                         hop_status_name(st));
    return st;
}
