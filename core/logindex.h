/*
 * core/logindex.h - a log with an index: entries kept in the order they were
 * added, each beginning with a pointer key, and an open-addressed index of
 * their positions that finds a key's newest entry in O(1).
 *
 * Two owners use it with different lookups over the same shape: the
 * tracer's lift and symbol tables (tracer/tracer_impl.h), an undo log whose
 * newest entries a failed scope takes back (hop__logindex_truncate) and
 * which is indexed as it grows, and an OutputGraph's lift notes
 * (output_graph/lifts.c), set once per lift and read only by explain_lifts
 * and saving, indexed when looked up.  Either way a lookup gives the newest
 * entry of its key.
 *
 * The index holds one slot per entry, the position + 1 (0: empty), with
 * linear probing, at most half full; it covers the first `nindexed`
 * entries, always in creation order, so a newer entry's probe sequence
 * crosses only older entries' slots and truncating (newest first) can empty
 * a slot without breaking any other entry's search.  Up to HOP__LOGINDEX_SCAN
 * entries there is no index: a scan of a few entries beats the allocation
 * (most bodies lift a handful of values).
 */
#ifndef HOP_CORE_LOGINDEX_H
#define HOP_CORE_LOGINDEX_H

#include "core/core.h"

enum { HOP__LOGINDEX_SCAN = 8 };

typedef struct hop__logindex {
    unsigned char *log; /* n entries of elem bytes: `small` until it outgrows it */
    size_t n, cap;
    uint32_t *index; /* NULL while nothing is indexed */
    size_t icap;     /* a power of two, or 0 */
    size_t nindexed; /* the first nindexed entries are in the index */
    void *small;     /* the owner's room for the first nsmall entries, or NULL */
    uint32_t elem, nsmall;
} hop__logindex;

/* An empty log of entries of elem bytes, each beginning with its key (a
 * `const void *`); small (NULL or room for nsmall entries, which the owner
 * keeps for the log's life) holds the first ones: a malloc and a free each
 * were ~300 instructions of every traced HOP call's body (issue #30). */
void hop__logindex_init(hop__logindex *li, size_t elem, void *small, size_t nsmall);

/* Appends an entry and indexes nothing: the new entry's room (elem bytes),
 * which the caller fills, its key first, before the next call on li; NULL
 * (HOP_NOMEM, nothing changed) when the log cannot grow.  Inline while
 * there is room: a typed store where a copy of elem bytes was a call to
 * memcpy (the tracer adds two entries a lift). */
void *hop__logindex_push_grow(hop__logindex *li);
static inline void *
hop__logindex_push(hop__logindex *li)
{
    if (li->n < li->cap)
        return li->log + li->n++ * li->elem;
    return hop__logindex_push_grow(li);
}

/* Brings the index up to date with the log (nothing to do up to
 * HOP__LOGINDEX_SCAN entries).  HOP_OK or HOP_NOMEM, which leaves the index
 * as it was: lookups stay exact, scanning the entries it does not cover. */
hop_status hop__logindex_index_all(hop__logindex *li);

/* The slot of an index of icap slots where key's probe sequence starts. */
static inline size_t
hop__logindex_slot(const void *key, size_t icap)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15u;
    return (size_t)(h >> 32) & (icap - 1);
}

static inline hop_status
hop__logindex_index(hop__logindex *li)
{
    if (li->nindexed == li->n || li->n <= HOP__LOGINDEX_SCAN)
        return HOP_OK;
    if (li->nindexed + 1 == li->n && 2 * li->n <= li->icap) {
        /* one entry more and room for it (an undo log's every add) */
        const void *key;
        memcpy(&key, li->log + li->nindexed * li->elem, sizeof key);
        size_t k = hop__logindex_slot(key, li->icap);
        while (li->index[k] != 0)
            k = (k + 1) & (li->icap - 1);
        li->index[k] = (uint32_t)++li->nindexed;
        return HOP_OK;
    }
    return hop__logindex_index_all(li);
}

/* The newest entry whose key is key, or NULL.  Borrowed: valid until the
 * log changes. */
const void *hop__logindex_find_indexed(const hop__logindex *li, const void *key);
static inline const void *
hop__logindex_find(const hop__logindex *li, const void *key)
{
    /* The entries the index does not cover are the newest: scan them
     * first, newest first (all of them while there is no index). */
    for (size_t i = li->n; i-- > li->nindexed;) {
        const unsigned char *e = li->log + i * li->elem;
        const void *k;
        memcpy(&k, e, sizeof k); /* one load: any entry type's key */
        if (k == key)
            return e;
    }
    return li->nindexed ? hop__logindex_find_indexed(li, key) : NULL;
}

/* The entry at position i (i < li->n). */
static inline void *
hop__logindex_at(const hop__logindex *li, size_t i)
{
    return li->log + i * li->elem;
}

/* Removes the entries after the first n, newest first (n <= li->n). */
void hop__logindex_truncate(hop__logindex *li, size_t n);

/* Frees the log's blocks (not `small`); li is empty and can be used again. */
void hop__logindex_free(hop__logindex *li);

#endif /* HOP_CORE_LOGINDEX_H */
