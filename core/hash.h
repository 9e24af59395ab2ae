/*
 * core/hash.h - the one way hop uses uthash.
 *
 * uthash allocates through hop's allocator, and an allocation failure inside a
 * HASH_ADD is not fatal: uthash undoes the add and we raise a flag.  Use the
 * HOP_HASH_* wrappers, which turn the flag into HOP_NOMEM.
 */
#ifndef HOP_CORE_HASH_H
#define HOP_CORE_HASH_H

#include "core/core.h"

extern _Thread_local int hop__hash_oom;

#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) hop__malloc(sz)
#define uthash_free(ptr, sz) hop__free(ptr)
#define uthash_nonfatal_oom(elt) (hop__hash_oom = 1)

#include <uthash.h>

/* Adds item (keyed by its field keyfield of keylen bytes) to head and stores
 * HOP_OK in st, or HOP_NOMEM (error context set) with item not added. */
#define HOP_HASH_ADD(st, hh, head, keyfield, keylen, item)                                         \
    do {                                                                                           \
        hop__hash_oom = 0;                                                                         \
        HASH_ADD(hh, head, keyfield, keylen, item);                                                \
        (st) =                                                                                     \
            hop__hash_oom ? hop_error(HOP_NOMEM, "out of memory growing a hash table") : HOP_OK;   \
    } while (0)

#define HOP_HASH_ADD_KEYPTR(st, hh, head, keyptr, keylen, item)                                    \
    do {                                                                                           \
        hop__hash_oom = 0;                                                                         \
        HASH_ADD_KEYPTR(hh, head, keyptr, keylen, item);                                           \
        (st) =                                                                                     \
            hop__hash_oom ? hop_error(HOP_NOMEM, "out of memory growing a hash table") : HOP_OK;   \
    } while (0)

#endif /* HOP_CORE_HASH_H */
