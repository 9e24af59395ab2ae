/*
 * core/logindex.c - a log with an index (core/logindex.h): growing,
 * indexing, the indexed lookup and truncation.
 */
#include "core/logindex.h"

void
hop__logindex_init(hop__logindex *li, size_t elem, void *small, size_t nsmall)
{
    *li = (hop__logindex){.small = small, .elem = (uint32_t)elem, .nsmall = (uint32_t)nsmall};
}

static const void *
key_at(const hop__logindex *li, size_t pos)
{
    const void *k;
    memcpy(&k, li->log + pos * li->elem, sizeof k);
    return k;
}

void *
hop__logindex_push_grow(hop__logindex *li)
{
    if (li->n >= UINT32_MAX - 1) {
        hop_error(HOP_NOMEM, "out of memory (a log of %zu entries)", li->n);
        return NULL;
    }
    if (hop__grow_small((void **)&li->log, &li->cap, li->n + 1, li->elem, li->small, li->nsmall) !=
        HOP_OK)
        return NULL;
    return li->log + li->n++ * li->elem;
}

/* Enters the entry at position pos into the index (room was made). */
static void
index_at(hop__logindex *li, size_t pos)
{
    size_t k = hop__logindex_slot(key_at(li, pos), li->icap);
    while (li->index[k] != 0)
        k = (k + 1) & (li->icap - 1);
    li->index[k] = (uint32_t)pos + 1;
}

hop_status
hop__logindex_index_all(hop__logindex *li)
{
    if (li->nindexed == li->n || li->n <= HOP__LOGINDEX_SCAN)
        return HOP_OK;
    if (2 * li->n > li->icap) {
        size_t icap = li->icap ? 2 * li->icap : 4 * HOP__LOGINDEX_SCAN;
        while (2 * li->n > icap)
            icap *= 2;
        uint32_t *index = hop__calloc(icap, sizeof *index);
        if (index == NULL)
            return HOP_NOMEM;
        hop__free(li->index);
        li->index = index;
        li->icap = icap;
        li->nindexed = 0;
    }
    for (; li->nindexed < li->n; li->nindexed++)
        index_at(li, li->nindexed);
    return HOP_OK;
}

const void *
hop__logindex_find_indexed(const hop__logindex *li, const void *key)
{
    /* A key entered twice has two slots on its probe sequence: the newest
     * (the highest position) is the one a scan would find. */
    uint32_t best = 0;
    for (size_t k = hop__logindex_slot(key, li->icap); li->index[k] != 0;
         k = (k + 1) & (li->icap - 1))
        if (li->index[k] > best && key_at(li, li->index[k] - 1) == key)
            best = li->index[k];
    return best ? hop__logindex_at(li, best - 1) : NULL;
}

void
hop__logindex_truncate(hop__logindex *li, size_t n)
{
    /* Newest first: an indexed entry's slot is the last on its probe
     * sequence among those still there, so emptying it is exact. */
    for (; li->nindexed > n; li->nindexed--) {
        size_t pos = li->nindexed - 1;
        size_t k = hop__logindex_slot(key_at(li, pos), li->icap);
        while (li->index[k] != pos + 1)
            k = (k + 1) & (li->icap - 1);
        li->index[k] = 0;
    }
    if (li->n > n)
        li->n = n;
}

void
hop__logindex_free(hop__logindex *li)
{
    if (li->log != li->small)
        hop__free(li->log);
    hop__free(li->index);
    hop__logindex_init(li, li->elem, li->small, li->nsmall);
}
