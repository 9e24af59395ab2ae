/*
 * hop/core.h - status codes, the error context and the allocator.
 *
 * Every fallible hop function returns a hop_status (or NULL) and leaves the
 * code and a formatted message in the calling thread's error context.  No hop
 * function aborts, exits or longjmps on a user mistake.
 *
 * All memory hop allocates goes through one allocator (see hop_set_allocator);
 * tests use hop_alloc_fail_at() to make the k-th allocation fail.
 */
#ifndef HOP_CORE_H
#define HOP_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HOP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HOP_PRINTF(f, a)
#endif

/* The one list of status codes: X(NAME, default message). */
#define HOP_STATUS_LIST(X)                                                                         \
    X(OK, "ok")                                                                                    \
    X(NOMEM, "out of memory")                                                                      \
    X(MISUSE, "API misuse")                                                                        \
    X(INVALID, "invalid argument")                                                                 \
    X(SHAPE, "shape mismatch")                                                                     \
    X(DTYPE, "dtype mismatch")                                                                     \
    X(DATA_DEPENDENT, "data-dependent decision")                                                   \
    X(TRACE, "tracing error")                                                                      \
    X(UNSUPPORTED, "unsupported")                                                                  \
    X(VERIFY, "graph verification failed")                                                         \
    X(NOT_FOUND, "not found")                                                                      \
    X(EXISTS, "already exists")                                                                    \
    X(GUARD, "guard failed")                                                                       \
    X(RUNTIME, "runtime error")                                                                    \
    X(INTERRUPTED, "interrupted")                                                                  \
    X(FORMAT, "not a valid saved hop program")                                                     \
    X(INDEX, "index out of range")                                                                 \
    X(LINALG, "linear algebra error")                                                              \
    X(CHECK, "a run-time check failed")

typedef enum hop_status {
#define HOP__STATUS_ENUM(name, msg) HOP_##name,
    HOP_STATUS_LIST(HOP__STATUS_ENUM)
#undef HOP__STATUS_ENUM
        HOP_STATUS_COUNT
} hop_status;

/* "HOP_SHAPE" for HOP_SHAPE; "HOP_UNKNOWN" for a value outside the list. */
const char *hop_status_name(hop_status s);
/* The default message of a code ("shape mismatch"); never NULL. */
const char *hop_status_message(hop_status s);

/* The calling thread's last error code; HOP_OK after hop_error_clear(). */
hop_status hop_error_code(void);
/* The calling thread's last error message ("" when none). Borrowed: valid until
 * the next hop call on this thread that sets or clears an error. */
const char *hop_error_message(void);
/* Resets the calling thread's error context to HOP_OK. */
void hop_error_clear(void);
/* Sets the calling thread's error context and returns code, so that callers can
 * write `return hop_error(HOP_SHAPE, "add: ...")`.  Messages longer than the
 * context's buffer (1 KiB) are truncated. */
hop_status hop_error(hop_status code, const char *fmt, ...) HOP_PRINTF(2, 3);
hop_status hop_verror(hop_status code, const char *fmt, va_list ap);

/*
 * The allocator: realloc semantics, in the manner of Lua's lua_Alloc.
 * ptr == NULL allocates nsize bytes; nsize == 0 frees ptr and returns NULL;
 * otherwise resizes.  Returns NULL on failure (the old block stays valid).
 */
typedef void *(*hop_alloc_fn)(void *ud, void *ptr, size_t nsize);

/* Installs fn (NULL restores the default malloc/realloc/free allocator).  Call
 * it only while no hop object is alive.  Each thread keeps a few freed small
 * blocks (up to 8 KiB: small tensors) for reuse; they go back to the
 * allocator that made them when this is called (the calling thread's at
 * once, another thread's on its next allocation) and when a thread exits. */
void hop_set_allocator(hop_alloc_fn fn, void *ud);

/* Allocation through hop's allocator, for code built on hop (a HOP class's
 * cache, say) so that fault injection and leak counts see it too.  NULL on
 * failure with the error context set to HOP_NOMEM. */
void *hop_malloc(size_t n);
void *hop_calloc(size_t count, size_t size);
void *hop_realloc(void *ptr, size_t n);
/* Frees memory that hop returned to the caller (printer strings, lists) or
 * that came from hop_malloc/hop_calloc/hop_realloc. */
void hop_free(void *ptr);

/*
 * Fault injection for tests: after hop_alloc_fail_at(k) with k >= 1, the k-th
 * allocation from now fails (and only that one); k == 0 disables it.
 * hop_alloc_count() counts allocations (not frees) since start; hop_alloc_live()
 * counts blocks currently allocated, so a sweep can check that nothing leaked;
 * hop_alloc_thread_live() counts the calling thread's allocations less its
 * frees (a block freed by another thread counts there), so a check of what one
 * call on this thread leaves allocated ignores what other threads do meanwhile;
 * hop_alloc_bytes() sums the sizes asked for since start (a realloc counts its
 * new size; a small block its size class: 512 B to 8 KiB), so a test can bound
 * what an operation allocates.  A small block reused from a thread's cache
 * counts (and can be failed) as an allocation, and one put back as a free.
 */
void hop_alloc_fail_at(long k);
long hop_alloc_count(void);
long hop_alloc_live(void);
long hop_alloc_thread_live(void);
long long hop_alloc_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* HOP_CORE_H */
