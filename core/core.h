/*
 * core/core.h - internals shared by every layer: the allocator entry points,
 * the growing arena, and a string builder.  Public API is in hop/core.h.
 */
#ifndef HOP_CORE_INTERNAL_H
#define HOP_CORE_INTERNAL_H

#include "hop/core.h"

#include <string.h>

/* The status st a class's slot (a HOP's, possibly a library's: cls its
 * name, slot the slot's) returned: where it failed without a message, one
 * naming the class and the slot.  The caller clears the error context
 * before the slot runs, so that an older error's message is never reported
 * for the slot's failure. */
hop_status hop__slot_status(const char *cls, const char *slot, hop_status st);

/* Allocate through the installed allocator.  NULL on failure, with the error
 * context set to HOP_NOMEM.  hop__free(NULL) is a no-op. */
void *hop__malloc(size_t n);
void *hop__calloc(size_t count, size_t size);
void *hop__realloc(void *p, size_t n);
void hop__free(void *p);
char *hop__strdup(const char *s);

/*
 * Small blocks that die young (an eager op's result on a few elements): a
 * block of at least n bytes, taken from the calling thread's cache of
 * freed ones when it holds one of n's size class (up to HOP__SMALL_MAX
 * bytes), else from the allocator.  Either way it counts as an allocation
 * (hop_alloc_count, hop_alloc_live) and the fault injector can fail it.
 * Free it with hop__free_small(p, n), the same n: the block goes back to
 * the cache (counted as freed) or to the allocator.  hop__free works too.
 * Large blocks (32 KiB to 64 MiB) are cached too, a few per thread up to 64
 * MiB in all, each serving a request it holds with no more than a quarter
 * left over (core/alloc.c says why).  Cached blocks go back to the
 * allocator that made them when the thread exits or its cache finds
 * another allocator installed.
 */
#define HOP__SMALL_MAX 8192
/* A full arena chunk's block (8 KiB of room and its header): hop__malloc_small
 * and hop__free_small of exactly this size keep freed ones per thread, up to
 * 32 MiB, so that a graph, plan or lowering built after another one dies
 * reuses its chunks (pages the system's allocator would give back and fault
 * in again, at ~10 us each). */
#define HOP__CHUNK_BLOCK (8192 + 32)
void *hop__malloc_small(size_t n);
void hop__free_small(void *p, size_t n);
/* A block that stays allocated but is handed to a new user (a dead tensor's
 * block recycled as a new result, hop_eager_quick_spare) counts as an
 * allocation of n bytes (its size class when small: hop_alloc_count, hop_alloc_bytes; hop_alloc_live
 * unchanged, the block was never freed) that the fault injector can fail:
 * false then, with HOP_NOMEM set, and the caller frees the block. */
bool hop__count_reuse(size_t n);

/* Grows a dynamic array *items of *cap elements of size elem so that it holds
 * at least need elements.  HOP_OK or HOP_NOMEM (the array is unchanged).
 * Inline when there is room (nearly every call: lowering a traced cond call
 * asks ~30 times for one more instruction, access or slot, a call of ~20
 * instructions each); hop__grow_to grows. */
hop_status hop__grow_to(void **items, size_t *cap, size_t need, size_t elem);
static inline hop_status
hop__grow(void **items, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? HOP_OK : hop__grow_to(items, cap, need, elem);
}
/* hop__grow for an array whose first nsmall elements are the owner's buffer
 * small (inside a tracer: most of its lists hold a few entries): *items is
 * NULL or small until need passes nsmall, then a block of its own, which
 * the owner frees unless it is small.  HOP_OK or HOP_NOMEM (unchanged). */
hop_status hop__grow_small_to(void **items, size_t *cap, size_t need, size_t elem, void *small,
                              size_t nsmall);
static inline hop_status
hop__grow_small(void **items, size_t *cap, size_t need, size_t elem, void *small, size_t nsmall)
{
    return need <= *cap ? HOP_OK : hop__grow_small_to(items, cap, need, elem, small, nsmall);
}
/* Frees an array hop__grow made (hop__free works too): one of 32 KiB or more
 * is kept for the thread's next large array or block (hop__malloc_small). */
void hop__grow_free(void *items, size_t cap, size_t elem);

/*
 * Arena: bump allocation in chunks that grow by half up to 8 KiB.  Nothing is freed
 * until hop__arena_reset/hop__arena_destroy; there is no capacity limit.
 * Allocations are aligned for any C object.
 */
typedef struct hop__chunk hop__chunk;
typedef struct hop__arena {
    hop__chunk *head;
    /* The chunk that was the head before it: byte strings fill the free
     * space its last block did not fit into (see hop__arena_bytes). */
    hop__chunk *side;
    hop__chunk *spare; /* chunks a rollback emptied, taken before a new one */
    size_t used;       /* bytes handed out */
    size_t reserved;   /* bytes held in chunks (spare ones included) */
    size_t first;      /* the first chunk's size (0: 1 KiB) */
} hop__arena;

void hop__arena_init(hop__arena *a);
/* An arena whose first chunk holds `first` bytes: for arenas that are
 * mostly tiny (an OutputGraph's subgraph names). */
void hop__arena_init_first(hop__arena *a, size_t first);
void hop__arena_destroy(hop__arena *a);
/* NULL (error context HOP_NOMEM) on failure. */
void *hop__arena_alloc(hop__arena *a, size_t n);
void *hop__arena_zalloc(hop__arena *a, size_t n);
/* n bytes with no alignment (for strings: nothing is lost to padding).
 * NULL (error context HOP_NOMEM) on failure. */
void *hop__arena_bytes(hop__arena *a, size_t n);
char *hop__arena_strdup(hop__arena *a, const char *s);
char *hop__arena_printf(hop__arena *a, const char *fmt, ...) HOP_PRINTF(2, 3);

/* A point in an arena's history (hop__arena_mark), to go back to with
 * hop__arena_rollback.  Its fields are the arena's. */
typedef struct hop__arena_mark {
    hop__chunk *head, *next; /* the head chunk then, and the one behind it */
    size_t used, top;        /* the head chunk's fill then */
    hop__chunk *side;        /* the side chunk then, and its fill */
    size_t side_top;
    size_t total; /* a->used then */
} hop__arena_mark;

void hop__arena_mark_at(const hop__arena *a, hop__arena_mark *m);
/* Takes back everything allocated since m (which must still be of a's
 * history: no rollback past it since): that memory is handed out again.
 * The chunks made since m are kept as spares, which later chunks are taken
 * from before any is allocated, so that a caller who rolls back after each
 * use reaches a steady state that allocates nothing. */
void hop__arena_rollback(hop__arena *a, const hop__arena_mark *m);

/* The one formatter under hop__arena_printf and hop__buf_printf: formats fmt
 * with ap into the n + 1 bytes room(ctx, n + 1) returns (n the text's length,
 * NUL included in the room), formatting twice only when the text is longer
 * than a small stack buffer.  Returns n; -1 for a bad format (room is not
 * called); -2 when room returns NULL. */
int hop__vformat(char *(*room)(void *ctx, size_t size), void *ctx, const char *fmt, va_list ap);

/*
 * String builder.  Failures are sticky: after an allocation fails every append
 * is a no-op and hop__buf_finish returns NULL (error context HOP_NOMEM).
 */
typedef struct hop__buf {
    char *data;
    size_t len, cap;
    bool failed;
} hop__buf;

/* Writes v in decimal (what "%lld" writes) and a NUL; out holds at least
 * 21 bytes.  Graphs and plans print integers by the thousand, and the
 * format parsing of printf cost ~500 instructions a number (issue #30). */
void hop__format_int(long long v, char *out);

void hop__buf_init(hop__buf *b);
void hop__buf_append(hop__buf *b, const char *s, size_t n);
void hop__buf_puts(hop__buf *b, const char *s);
void hop__buf_printf(hop__buf *b, const char *fmt, ...) HOP_PRINTF(2, 3);
void hop__buf_indent(hop__buf *b, int spaces);
/* Appends the text of a printer with the snprintf contract (hop_expr_print,
 * hop_meta_print, hop_arg_print: writes at most cap bytes and returns the
 * length the whole text needs), however long it is. */
typedef size_t (*hop__print_fn)(const void *what, char *buf, size_t cap);
void hop__buf_print(hop__buf *b, hop__print_fn fn, const void *what);
/* Returns the NUL-terminated string (caller frees with hop_free) or NULL. */
char *hop__buf_finish(hop__buf *b);
void hop__buf_discard(hop__buf *b);

#define HOP__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The registration log (core/reglog.c): while a library's init runs
 * (hop_load_library), every registry records what it registers on that
 * thread, so that a failed init can be undone to the last name.  A log is
 * begun and ended on one thread; logs nest (an init that loads another
 * library): a registration goes to the innermost.  hop__reglog_note is
 * called by a registry before it commits a registration (it can fail, with
 * HOP_NOMEM; with no log begun on the thread it does nothing and succeeds).
 * Entries are the kind and a copy of the name, in registration order.
 */
typedef enum hop__reg_kind { HOP__REG_HOP, HOP__REG_KERNEL } hop__reg_kind;
typedef struct hop__reglog_entry {
    hop__reg_kind kind;
    char *name;
} hop__reglog_entry;
typedef struct hop__reglog {
    hop__reglog_entry *items;
    size_t n, cap;
    struct hop__reglog *outer;
} hop__reglog;

void hop__reglog_begin(hop__reglog *log);
/* Ends the innermost log (which must be log); the entries stay until
 * hop__reglog_free. */
void hop__reglog_end(hop__reglog *log);
void hop__reglog_free(hop__reglog *log);
hop_status hop__reglog_note(hop__reg_kind kind, const char *name);

#endif /* HOP_CORE_INTERNAL_H */
