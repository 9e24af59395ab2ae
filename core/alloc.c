/*
 * core/alloc.c - the allocator hook, fault injection and allocation counters.
 *
 * Every byte hop allocates passes through hop__realloc, so one counter can make
 * the k-th allocation fail (Lua's Memcontrol, SQLite's fault injection) and one
 * counter of live blocks lets a test prove that a failed call leaked nothing.
 * Each thread's counter block also caches a few freed small blocks
 * (hop__malloc_small): a malloc/free pair was a third of an eager `a + b`;
 * and a few large ones (an eager op's result of 32,000+ bytes), which the
 * system's allocator gives back to the system when they are freed (a block
 * past its mmap threshold, the top of its heap past its trim threshold), so
 * that the next one pays a page fault per 4 KiB it touches (~10 us each on
 * the VMs hop is measured on: an eager `a.std()` of 1M doubles, two 8 MB
 * temporaries a call, took 16x NumPy's time).
 */
#include "core/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

_Thread_local int hop__hash_oom;

static void *
default_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return ptr == NULL ? malloc(nsize) : realloc(ptr, nsize);
}

static hop_alloc_fn alloc_fn = default_alloc;
static void *alloc_ud;
static atomic_long fail_countdown; /* 0: off; 1: the next allocation fails */

/*
 * The counters.  Every allocation and free moves them, and a locked
 * read-modify-write on a shared line costs more than a small malloc (4 of
 * them were a third of an eager `a + b` on 16 floats), so each thread
 * counts in its own block: the owner updates it with plain relaxed loads
 * and stores, a reader sums the blocks of the live threads and what exited
 * threads left in `gone` (folded in by the key's destructor).  A thread
 * whose block cannot be made counts in `gone` with locked adds.
 */
#define SMALL_MIN 512 /* the smallest class: blocks of SMALL_MIN << c bytes */
#define SMALL_CLASSES 5
#define SMALL_DEPTH 4
_Static_assert((SMALL_MIN << (SMALL_CLASSES - 1)) == HOP__SMALL_MAX, "the largest class");
/* Large blocks a thread keeps: of LARGE_MIN bytes or more, at most
 * LARGE_DEPTH of them and LARGE_KEEP bytes in all (the oldest goes first);
 * one serves a request of n bytes when it holds n and no more than a
 * quarter of it is left over. */
#define LARGE_MIN ((size_t)32 << 10)
#define LARGE_DEPTH 16
#define LARGE_KEEP ((size_t)64 << 20)
#define GROW_OVER 64 /* hop__grow takes a kept block up to 64 times its need */
/* Full arena chunks (blocks of HOP__CHUNK_BLOCK bytes) a thread keeps, in a
 * list through their first word: at most CHUNK_KEEP bytes of them. */
#define CHUNK_KEEP ((size_t)32 << 20)
#define CHUNK_DEPTH (CHUNK_KEEP / HOP__CHUNK_BLOCK)
_Static_assert(HOP__CHUNK_BLOCK > HOP__SMALL_MAX && HOP__CHUNK_BLOCK < LARGE_MIN,
               "a chunk is neither a small nor a large block");

typedef struct counters {
    atomic_long count, live;
    atomic_llong bytes;
    struct counters *prev, *next;
    /* freed small blocks, owned by the thread; made by cache_fn/cache_ud */
    hop_alloc_fn cache_fn;
    void *cache_ud;
    int ncached[SMALL_CLASSES];
    void *cached[SMALL_CLASSES][SMALL_DEPTH];
    /* freed large blocks, oldest first, each with the size it was asked for */
    int nlarge;
    size_t large_bytes;
    void *large[LARGE_DEPTH];
    size_t large_size[LARGE_DEPTH];
    /* freed full arena chunks, the last freed first */
    void *chunks;
    size_t nchunks;
} counters;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static counters *reg_head; /* the live threads' blocks */
static counters gone;      /* exited threads' counts, and the fallback */
static pthread_key_t reg_key;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static bool reg_key_ok;
static _Thread_local counters *mine;

/* Gives c's cached blocks back to the allocator that made them. */
static void
cache_drop(counters *c)
{
    for (int k = 0; k < SMALL_CLASSES; k++) {
        while (c->ncached[k] > 0)
            c->cache_fn(c->cache_ud, c->cached[k][--c->ncached[k]], 0);
    }
    while (c->nlarge > 0)
        c->cache_fn(c->cache_ud, c->large[--c->nlarge], 0);
    c->large_bytes = 0;
    while (c->chunks != NULL) {
        void *next = *(void **)c->chunks;
        c->cache_fn(c->cache_ud, c->chunks, 0);
        c->chunks = next;
    }
    c->nchunks = 0;
}

/* Removes c's large block i. */
static void
large_remove(counters *c, int i)
{
    c->large_bytes -= c->large_size[i];
    for (int j = i; j + 1 < c->nlarge; j++) {
        c->large[j] = c->large[j + 1];
        c->large_size[j] = c->large_size[j + 1];
    }
    c->nlarge--;
}

/* The index of c's large block that best serves n bytes (the smallest
 * that holds n and no more than `most`; of equal ones the last freed, warm
 * in the caches), or -1. */
static int
large_fit(const counters *c, size_t n, size_t most)
{
    int best = -1;
    for (int i = c->nlarge - 1; i >= 0; i--) {
        size_t s = c->large_size[i];
        if (s >= n && s <= most && (best < 0 || s < c->large_size[best]))
            best = i;
    }
    return best;
}

static void
counters_fold(void *p)
{
    counters *c = p;
    cache_drop(c);
    pthread_mutex_lock(&reg_lock);
    atomic_fetch_add(&gone.count, atomic_load_explicit(&c->count, memory_order_relaxed));
    atomic_fetch_add(&gone.live, atomic_load_explicit(&c->live, memory_order_relaxed));
    atomic_fetch_add(&gone.bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed));
    if (c->prev)
        c->prev->next = c->next;
    else
        reg_head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&reg_lock);
    if (mine == c)
        mine = NULL;
    free(c);
}

/* A fork copies the lock as another thread may hold it. */
static void
reg_lock_take(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void
reg_lock_drop(void)
{
    pthread_mutex_unlock(&reg_lock);
}

static void
reg_init(void)
{
    reg_key_ok = pthread_key_create(&reg_key, counters_fold) == 0 &&
                 pthread_atfork(reg_lock_take, reg_lock_drop, reg_lock_drop) == 0;
}

/* The calling thread's block, made on its first allocation (with the
 * system's malloc: the counters do not count themselves); &gone when it
 * cannot be made. */
static counters *
my_counters(void)
{
    counters *c = mine;
    if (__builtin_expect(c != NULL, 1))
        return c;
    pthread_once(&reg_once, reg_init);
    if (!reg_key_ok || (c = calloc(1, sizeof *c)) == NULL)
        return &gone;
    if (pthread_setspecific(reg_key, c) != 0) {
        free(c);
        return &gone;
    }
    pthread_mutex_lock(&reg_lock);
    c->next = reg_head;
    if (reg_head)
        reg_head->prev = c;
    reg_head = c;
    pthread_mutex_unlock(&reg_lock);
    mine = c;
    return c;
}

/* Adds d to a counter of c: a plain update when c is the thread's own. */
static inline void
bump(counters *c, atomic_long *v, long d)
{
    if (c != &gone)
        atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d,
                              memory_order_relaxed);
    else
        atomic_fetch_add(v, d);
}

static inline void
bump_bytes(counters *c, long long d)
{
    if (c != &gone)
        atomic_store_explicit(&c->bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed) + d,
                              memory_order_relaxed);
    else
        atomic_fetch_add(&c->bytes, d);
}

/* The sum of one counter over every thread that counted. */
#define SUM_COUNTER(field, type)                                                                   \
    do {                                                                                           \
        pthread_mutex_lock(&reg_lock);                                                             \
        type total = atomic_load(&gone.field);                                                     \
        for (const counters *c = reg_head; c; c = c->next)                                         \
            total += atomic_load_explicit(&c->field, memory_order_relaxed);                        \
        pthread_mutex_unlock(&reg_lock);                                                           \
        return total;                                                                              \
    } while (0)

static __attribute__((noinline, cold)) void
cache_retag(counters *c)
{
    cache_drop(c);
    c->cache_fn = alloc_fn;
    c->cache_ud = alloc_ud;
}

/* c's cache holds blocks of the installed allocator only: after a change it
 * is emptied into the old one. */
static inline void
cache_check(counters *c)
{
    if (__builtin_expect(c->cache_fn != alloc_fn || c->cache_ud != alloc_ud, 0))
        cache_retag(c);
}

void
hop_set_allocator(hop_alloc_fn fn, void *ud)
{
    if (mine != NULL)
        cache_drop(mine); /* the calling thread's: back before the switch */
    alloc_fn = fn ? fn : default_alloc;
    alloc_ud = fn ? ud : NULL;
}

void
hop_alloc_fail_at(long k)
{
    atomic_store(&fail_countdown, k > 0 ? k : 0);
}

long
hop_alloc_count(void)
{
    SUM_COUNTER(count, long);
}

long
hop_alloc_live(void)
{
    SUM_COUNTER(live, long);
}

long
hop_alloc_thread_live(void)
{
    counters *c = my_counters();
    return c == &gone ? hop_alloc_live() : atomic_load_explicit(&c->live, memory_order_relaxed);
}

long long
hop_alloc_bytes(void)
{
    SUM_COUNTER(bytes, long long);
}

/* True when the fault injector says this allocation must fail. */
static bool
injected_failure(void)
{
    long n = atomic_load(&fail_countdown);
    while (n > 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1))
            return n == 1;
    }
    return false;
}

void *
hop__realloc(void *p, size_t n)
{
    if (n == 0) {
        hop__free(p);
        return NULL;
    }
    counters *c = my_counters();
    bump(c, &c->count, 1);
    bump_bytes(c, (long long)n);
    void *q = injected_failure() ? NULL : alloc_fn(alloc_ud, p, n);
    if (q == NULL) {
        hop_error(HOP_NOMEM, "out of memory (allocating %zu bytes)", n);
        return NULL;
    }
    if (p == NULL)
        bump(c, &c->live, 1);
    return q;
}

void *
hop__malloc(size_t n)
{
    return hop__realloc(NULL, n ? n : 1);
}

void *
hop__calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        hop_error(HOP_NOMEM, "out of memory (%zu x %zu bytes overflows)", count, size);
        return NULL;
    }
    size_t n = count * size;
    void *p = hop__malloc(n);
    if (p && n > 0)
        memset(p, 0, n);
    return p;
}

void
hop__free(void *p)
{
    if (p == NULL)
        return;
    counters *c = my_counters();
    bump(c, &c->live, -1);
    alloc_fn(alloc_ud, p, 0);
}

/* The class of a block of n bytes, or -1 past the largest. */
static inline int
small_class(size_t n)
{
    if (n <= SMALL_MIN)
        return 0;
    if (n > HOP__SMALL_MAX)
        return -1;
    return 64 - __builtin_clzll((unsigned long long)(n - 1)) - 9; /* log2(SMALL_MIN) */
}
_Static_assert(SMALL_MIN == 1 << 9, "small_class's shift");

/* A large block of n to `most` bytes from c's cache (its size in *size),
 * or NULL (none fits, or the fault injector fails it: then with the error
 * set). */
static void *
large_take(counters *c, size_t n, size_t most, size_t *size, bool *failed)
{
    cache_check(c);
    int i = large_fit(c, n, most);
    if (i < 0)
        return NULL;
    if (injected_failure()) {
        hop_error(HOP_NOMEM, "out of memory (allocating %zu bytes)", n);
        *failed = true;
        return NULL;
    }
    void *p = c->large[i];
    *size = c->large_size[i];
    large_remove(c, i);
    bump(c, &c->count, 1);
    bump_bytes(c, (long long)n);
    bump(c, &c->live, 1);
    return p;
}

/* A kept arena chunk, or NULL (none kept, or the fault injector fails
 * it: then with the error set). */
static void *
chunk_take(counters *c, bool *failed)
{
    cache_check(c);
    if (c->chunks == NULL)
        return NULL;
    if (injected_failure()) {
        hop_error(HOP_NOMEM, "out of memory (allocating %d bytes)", HOP__CHUNK_BLOCK);
        *failed = true;
        return NULL;
    }
    void *p = c->chunks;
    c->chunks = *(void **)p;
    c->nchunks--;
    bump(c, &c->count, 1);
    bump_bytes(c, HOP__CHUNK_BLOCK);
    bump(c, &c->live, 1);
    return p;
}

void *
hop__malloc_small(size_t n)
{
    int k = small_class(n);
    if (n == HOP__CHUNK_BLOCK) {
        counters *c = my_counters();
        bool failed = false;
        void *p = c != &gone ? chunk_take(c, &failed) : NULL;
        return p != NULL || failed ? p : hop__malloc(n);
    }
    if (k < 0) {
        counters *c = n >= LARGE_MIN ? my_counters() : &gone;
        bool failed = false;
        size_t size;
        /* (no more than a quarter of the block left over) */
        void *p = c != &gone ? large_take(c, n, n + n / 3, &size, &failed) : NULL;
        return p != NULL || failed ? p : hop__malloc(n);
    }
    /* always the whole class: any block of it fits any n of it */
    size_t size = (size_t)SMALL_MIN << k;
    counters *c = my_counters();
    if (c == &gone)
        return hop__malloc(size);
    cache_check(c);
    if (c->ncached[k] == 0)
        return hop__malloc(size);
    if (injected_failure()) {
        hop_error(HOP_NOMEM, "out of memory (allocating %zu bytes)", size);
        return NULL;
    }
    bump(c, &c->count, 1);
    bump_bytes(c, (long long)size);
    bump(c, &c->live, 1);
    return c->cached[k][--c->ncached[k]];
}

bool
hop__count_reuse(size_t n)
{
    int k = small_class(n);
    size_t size = k >= 0 ? (size_t)SMALL_MIN << k : n; /* as hop__malloc_small counts it */
    if (injected_failure()) {
        hop_error(HOP_NOMEM, "out of memory (allocating %zu bytes)", size);
        return false;
    }
    counters *c = my_counters();
    bump(c, &c->count, 1);
    bump_bytes(c, (long long)size);
    return true;
}

void
hop__free_small(void *p, size_t n)
{
    if (p == NULL)
        return;
    int k = small_class(n);
    counters *c = my_counters();
    if (k >= 0 && c != &gone) {
        cache_check(c);
        if (c->ncached[k] < SMALL_DEPTH) {
            bump(c, &c->live, -1);
            c->cached[k][c->ncached[k]++] = p;
            return;
        }
    } else if (n == HOP__CHUNK_BLOCK && c != &gone) {
        cache_check(c);
        if (c->nchunks < CHUNK_DEPTH) {
            bump(c, &c->live, -1);
            *(void **)p = c->chunks;
            c->chunks = p;
            c->nchunks++;
            return;
        }
    } else if (k < 0 && n >= LARGE_MIN && n <= LARGE_KEEP && c != &gone) {
        cache_check(c);
        while (c->nlarge == LARGE_DEPTH || c->large_bytes + n > LARGE_KEEP) {
            c->cache_fn(c->cache_ud, c->large[0], 0); /* the oldest goes */
            large_remove(c, 0);
        }
        bump(c, &c->live, -1);
        c->large[c->nlarge] = p;
        c->large_size[c->nlarge++] = n;
        c->large_bytes += n;
        return;
    }
    hop__free(p);
}

void
hop_free(void *ptr)
{
    hop__free(ptr);
}

void *
hop_malloc(size_t n)
{
    return hop__malloc(n);
}

void *
hop_calloc(size_t count, size_t size)
{
    return hop__calloc(count, size);
}

void *
hop_realloc(void *ptr, size_t n)
{
    return hop__realloc(ptr, n);
}

char *
hop__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = hop__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

hop_status
hop__grow_to(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return HOP_OK;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < need)
        ncap *= 2;
    if (ncap > SIZE_MAX / elem)
        return hop_error(HOP_NOMEM, "out of memory (array of %zu items)", need);
    void *p;
    if (ncap * elem < LARGE_MIN) {
        p = hop__realloc(*items, ncap * elem);
    } else {
        /* A large array moves into a block the thread kept when it has one,
         * up to GROW_OVER times the size needed, all of which it takes: an
         * array that grew as large in the last lowering goes there in one
         * step.  The block it leaves is kept for the next. */
        counters *c = my_counters();
        bool failed = false;
        size_t size = 0;
        size_t most = ncap * elem <= LARGE_KEEP / GROW_OVER ? ncap * elem * GROW_OVER : LARGE_KEEP;
        p = c != &gone ? large_take(c, ncap * elem, most, &size, &failed) : NULL;
        if (p != NULL)
            ncap = size / elem;
        else if (!failed)
            p = hop__malloc(ncap * elem);
        if (p != NULL && *cap > 0) {
            memcpy(p, *items, *cap * elem);
            hop__grow_free(*items, *cap, elem);
        }
    }
    if (p == NULL)
        return HOP_NOMEM;
    *items = p;
    *cap = ncap;
    return HOP_OK;
}

hop_status
hop__grow_small_to(void **items, size_t *cap, size_t need, size_t elem, void *small, size_t nsmall)
{
    if (need <= *cap)
        return HOP_OK;
    if (*items == NULL && need <= nsmall) {
        *items = small;
        *cap = nsmall;
        return HOP_OK;
    }
    if (small == NULL || *items != small)
        return hop__grow(items, cap, need, elem);
    void *block = NULL;
    size_t ncap = 0;
    if (hop__grow(&block, &ncap, need, elem) != HOP_OK)
        return HOP_NOMEM;
    memcpy(block, small, *cap * elem);
    *items = block;
    *cap = ncap;
    return HOP_OK;
}

void
hop__grow_free(void *items, size_t cap, size_t elem)
{
    /* (a small array's block is its own size, not a small class's) */
    if (cap * elem >= LARGE_MIN)
        hop__free_small(items, cap * elem);
    else
        hop__free(items);
}
