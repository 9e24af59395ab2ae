/*
 * output_graph/saved_impl.h - what the saved format's writer (save.c) and
 * reader (load.c) share: the record tags, the limits, the CRC-32 and the
 * primitive encodings.  docs/SAVED_FORMAT.md is the specification.
 *
 * Integers are LEB128 varints (signed ones zigzag-encoded first), floats 8
 * little-endian bytes, strings a varint length and the bytes (no NUL).
 */
#ifndef HOP_SAVED_IMPL_H
#define HOP_SAVED_IMPL_H

#include "core/core.h"
#include "hop/saved.h"

/* "hopsaved", the version (u32), a reserved u32 and the payload length
 * (u64); then the payload; then the CRC-32 (u32) of everything before it. */
#define HOP__SAVED_MAGIC "hopsaved"
enum { HOP__SAVED_HEADER = 24, HOP__SAVED_TRAILER = 4 };

/* Limits a reader enforces (a writer refuses what exceeds them). */
enum {
    HOP__SAVED_MAX_NAME = 4096,   /* bytes of a name, target or note */
    HOP__SAVED_MAX_SECTION = 255, /* bytes of a section name */
    HOP__SAVED_MAX_LIST_DEPTH = 8,
    HOP__SAVED_MAX_EXPONENT = 64, /* of an atom in a product */
};

/* Value info kinds and argument kinds are written as the enums' values;
 * these are the roles of a placeholder in a capture table. */
enum {
    HOP__ROLE_EXPLICIT = 0, /* a body argument: the call passes an operand */
    HOP__ROLE_LIFTED = 1,   /* lifted by this graph's tracer from the parent */
    HOP__ROLE_OTHER = 2,    /* lifted by another body of the same call (cond's
                               unused placeholder for the other branch's value) */
};

uint32_t hop__crc32(const void *data, size_t n);

/* The integer an expression record keeps besides its operands: a CONST's
 * value, an ADD's constant term, a SYMBOL's id; 0 for other kinds. */
static inline int64_t
hop__expr_value(const hop_expr *e)
{
    int64_t v = 0;
    switch (hop_expr_kind_of(e)) {
    case HOP_EXPR_CONST:
        hop_expr_const_value(e, &v);
        return v;
    case HOP_EXPR_ADD:
        return hop_expr_addend(e);
    case HOP_EXPR_SYMBOL:
        return hop_symbol_id(e);
    default:
        return 0;
    }
}

/* Whether records of kind k keep a coefficient per operand (ADD: a term's
 * coefficient; MUL: an atom's exponent). */
static inline bool
hop__expr_has_coefs(hop_expr_kind k)
{
    return k == HOP_EXPR_ADD || k == HOP_EXPR_MUL;
}

/* ------------------------------------------------------------- writing */

static inline void
hop__put_u(hop__buf *b, uint64_t v)
{
    char tmp[10];
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = (char)(byte | (v ? 0x80 : 0));
    } while (v);
    hop__buf_append(b, tmp, n);
}

static inline void
hop__put_i(hop__buf *b, int64_t v)
{
    hop__put_u(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void
hop__put_byte(hop__buf *b, unsigned v)
{
    char c = (char)v;
    hop__buf_append(b, &c, 1);
}

static inline void
hop__put_bytes(hop__buf *b, const void *p, size_t n)
{
    hop__put_u(b, n);
    hop__buf_append(b, p, n);
}

static inline void
hop__put_str(hop__buf *b, const char *s)
{
    hop__put_bytes(b, s, strlen(s));
}

/* ------------------------------------------------------------- reading */

/* A cursor over the payload.  Every read checks the bytes left; the first
 * failure sets err (a HOP_FORMAT message naming `where`) and every later
 * read returns zeros, so a record is read first and checked once. */
typedef struct hop__reader {
    const unsigned char *p, *end;
    const unsigned char *start;
    bool failed;
    const char *where; /* what is being read, for the message */
} hop__reader;

hop_status hop__reader_fail(hop__reader *r, const char *fmt, ...) HOP_PRINTF(2, 3);

static inline size_t
hop__left(const hop__reader *r)
{
    return r->failed ? 0 : (size_t)(r->end - r->p);
}

static inline uint64_t
hop__get_u(hop__reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; !r->failed; shift += 7) {
        if (r->p == r->end) {
            hop__reader_fail(r, "truncated");
            break;
        }
        unsigned char byte = *r->p++;
        if (shift == 63 && byte > 1) {
            hop__reader_fail(r, "an integer overflows 64 bits");
            break;
        }
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    return 0;
}

static inline int64_t
hop__get_i(hop__reader *r)
{
    uint64_t u = hop__get_u(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline unsigned
hop__get_byte(hop__reader *r)
{
    if (r->failed || r->p == r->end) {
        hop__reader_fail(r, "truncated");
        return 0;
    }
    return *r->p++;
}

/* A count of items each taking at least min_bytes: more than the bytes left
 * can hold is corrupt, so no allocation sized by a count exceeds the file. */
static inline size_t
hop__get_count(hop__reader *r, size_t min_bytes, const char *what)
{
    uint64_t n = hop__get_u(r);
    if (!r->failed && n > hop__left(r) / (min_bytes ? min_bytes : 1)) {
        hop__reader_fail(r, "%s: a count of %llu is more than the file holds", what,
                         (unsigned long long)n);
        return 0;
    }
    return (size_t)n;
}

/* Bytes of a string or blob, not copied (NULL with *n = 0 on failure). */
static inline const void *
hop__get_bytes(hop__reader *r, size_t max, size_t *n)
{
    uint64_t len = hop__get_u(r);
    *n = 0;
    if (r->failed)
        return NULL;
    if (len > hop__left(r)) {
        hop__reader_fail(r, "truncated");
        return NULL;
    }
    if (len > max) {
        hop__reader_fail(r, "a string of %llu bytes is longer than %zu", (unsigned long long)len,
                         max);
        return NULL;
    }
    const void *p = r->p;
    r->p += len;
    *n = (size_t)len;
    return p;
}

#endif /* HOP_SAVED_IMPL_H */
