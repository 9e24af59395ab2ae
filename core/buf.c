/*
 * core/buf.c - the string builder behind every printer.
 */
#include "core/core.h"

#include <stdio.h>

void
hop__buf_init(hop__buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = false;
}

static bool
reserve(hop__buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra < b->cap - b->len) /* room already (cap > len while data is set) */
        return true;
    if (hop__grow((void **)&b->data, &b->cap, b->len + extra + 1, 1) != HOP_OK) {
        b->failed = true;
        return false;
    }
    return true;
}

void
hop__buf_append(hop__buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void
hop__buf_puts(hop__buf *b, const char *s)
{
    hop__buf_append(b, s, strlen(s));
}

int
hop__vformat(char *(*room)(void *ctx, size_t size), void *ctx, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    char *d = n < 0 ? NULL : room(ctx, (size_t)n + 1);
    if (d != NULL && (size_t)n < sizeof small)
        memcpy(d, small, (size_t)n + 1);
    else if (d != NULL)
        vsnprintf(d, (size_t)n + 1, fmt, again);
    va_end(again);
    return n < 0 ? -1 : d == NULL ? -2 : n;
}

/* The room at the end of b's text (its NUL included). */
static char *
buf_room(void *ctx, size_t size)
{
    hop__buf *b = ctx;
    return reserve(b, size - 1) ? b->data + b->len : NULL;
}

void
hop__buf_printf(hop__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = hop__vformat(buf_room, b, fmt, ap);
    va_end(ap);
    if (n == -1)
        b->failed = true;
    else if (n >= 0)
        b->len += (size_t)n;
}

void
hop__buf_indent(hop__buf *b, int spaces)
{
    static const char blanks[] = "                                ";
    while (spaces > 0) {
        int n = spaces < 32 ? spaces : 32;
        hop__buf_append(b, blanks, (size_t)n);
        spaces -= n;
    }
}

void
hop__buf_print(hop__buf *b, hop__print_fn fn, const void *what)
{
    char small[256];
    size_t n = fn(what, small, sizeof small);
    if (n < sizeof small) {
        hop__buf_append(b, small, n);
        return;
    }
    if (!reserve(b, n))
        return;
    fn(what, b->data + b->len, n + 1);
    b->len += n;
}

char *
hop__buf_finish(hop__buf *b)
{
    if (!b->failed && b->data == NULL)
        reserve(b, 0);
    if (b->failed) {
        hop__buf_discard(b);
        hop_error(HOP_NOMEM, "out of memory building a string");
        return NULL;
    }
    b->data[b->len] = '\0';
    char *s = b->data;
    hop__buf_init(b);
    return s;
}

void
hop__buf_discard(hop__buf *b)
{
    hop__free(b->data);
    hop__buf_init(b);
}

void
hop__format_int(long long v, char *out)
{
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char digits[20];
    size_t nd = 0, n = 0;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        out[n++] = '-';
    while (nd)
        out[n++] = digits[--nd];
    out[n] = '\0';
}
