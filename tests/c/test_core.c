/*
 * tests/c/test_core.c - status codes, the error context, the allocator hook,
 * the arena, the string builder, the uthash wrapper and the log with an
 * index.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/hash.h"
#include "core/logindex.h"

#include <pthread.h>
#include <stdio.h>

static void
test_status_names_and_messages_come_from_one_list(void **state)
{
    (void)state;
    assert_string_equal(hop_status_name(HOP_OK), "HOP_OK");
    assert_string_equal(hop_status_name(HOP_SHAPE), "HOP_SHAPE");
    assert_string_equal(hop_status_message(HOP_NOMEM), "out of memory");
    assert_string_equal(hop_status_name((hop_status)999), "HOP_UNKNOWN");
    assert_string_equal(hop_status_message((hop_status)-1), "unknown status");
}

static void
test_error_context_holds_last_code_and_formatted_message(void **state)
{
    (void)state;
    hop_error_clear();
    assert_int_equal(hop_error_code(), HOP_OK);
    assert_string_equal(hop_error_message(), "");
    assert_int_equal(hop_error(HOP_SHAPE, "add: cannot broadcast %s with %s", "f32[3]", "f32[4]"),
                     HOP_SHAPE);
    assert_int_equal(hop_error_code(), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "add: cannot broadcast f32[3] with f32[4]");
    hop_error_clear();
    assert_int_equal(hop_error_code(), HOP_OK);
}

static void
test_error_message_longer_than_buffer_is_truncated_not_overflowed(void **state)
{
    (void)state;
    char big[4000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    hop_error(HOP_INVALID, "%s", big);
    assert_int_equal(strlen(hop_error_message()), 1023);
}

static void
test_fail_at_fails_exactly_the_kth_allocation(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    hop_alloc_fail_at(3);
    void *a = hop__malloc(8), *b = hop__malloc(8), *c = hop__malloc(8), *d = hop__malloc(8);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_non_null(d);
    assert_int_equal(hop_alloc_live(), live + 3);
    hop__free(a);
    hop__free(b);
    hop__free(d);
    assert_int_equal(hop_alloc_live(), live);
}

/* What allocate_elsewhere saw on a thread of its own. */
typedef struct {
    long before, after;
    void *block;
} elsewhere;

static void *
allocate_elsewhere(void *out)
{
    elsewhere *e = out;
    e->before = hop_alloc_thread_live();
    e->block = hop__malloc(8);
    e->after = hop_alloc_thread_live();
    return NULL;
}

static void
test_thread_live_counts_only_the_calling_threads_allocations_and_frees(void **state)
{
    (void)state;
    long mine = hop_alloc_thread_live(), all = hop_alloc_live();
    void *a = hop__malloc(8);
    assert_int_equal(hop_alloc_thread_live(), mine + 1);
    elsewhere e = {0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, allocate_elsewhere, &e), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(e.block);
    /* the other thread counted its block, this one did not; the sum (the
     * exited thread's count folded into it) sees both */
    assert_int_equal(e.after, e.before + 1);
    assert_int_equal(hop_alloc_thread_live(), mine + 1);
    assert_int_equal(hop_alloc_live(), all + 2);
    hop__free(e.block); /* freed here: counted here */
    assert_int_equal(hop_alloc_thread_live(), mine);
    hop__free(a);
    assert_int_equal(hop_alloc_thread_live(), mine - 1);
    assert_int_equal(hop_alloc_live(), all);
}

static long custom_calls;
static void *
counting_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    custom_calls++;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

static void
test_custom_allocator_sees_every_allocation_and_free(void **state)
{
    (void)state;
    hop_set_allocator(counting_alloc, NULL);
    custom_calls = 0;
    char *s = hop__strdup("hello");
    s = hop__realloc(s, 100);
    hop_free(s);
    assert_int_equal(custom_calls, 3);
    hop_set_allocator(NULL, NULL);
}

/* A freed small block comes back for the next request of its size class:
 * counted as a free and an allocation, failed by the injector like any
 * allocation (the block stays cached), and a block of another class or past
 * HOP__SMALL_MAX never comes from the cache. */
static void
test_small_blocks_are_reused_within_their_class_and_counted_as_allocations(void **state)
{
    (void)state;
    char *p = hop__malloc_small(300);
    assert_non_null(p);
    memset(p, 1, 512); /* the whole class's size is the caller's */
    long live = hop_alloc_live(), count = hop_alloc_count();
    hop__free_small(p, 300);
    assert_int_equal(hop_alloc_live(), live - 1);
    hop_alloc_fail_at(1);
    assert_null(hop__malloc_small(400));
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_int_equal(hop_alloc_live(), live - 1);
    char *q = hop__malloc_small(400); /* the same class: the cached block */
    assert_ptr_equal(q, p);
    assert_int_equal(hop_alloc_live(), live);
    assert_int_equal(hop_alloc_count(), count + 1);
    char *r = hop__malloc_small(600); /* the next class: a new block */
    assert_non_null(r);
    assert_ptr_not_equal(r, q);
    memset(r, 2, 1024);
    hop__free_small(q, 400);
    hop__free_small(r, 600);
    char *big = hop__malloc_small(HOP__SMALL_MAX + 1);
    assert_non_null(big);
    hop__free_small(big, HOP__SMALL_MAX + 1);
    assert_int_equal(hop_alloc_live(), live - 1);
    char *again = hop__malloc_small(HOP__SMALL_MAX + 1);
    assert_ptr_not_equal(again, q);
    hop__free(again);
    hop__free(hop__malloc_small(1000)); /* r's block; plain hop__free works too */
    assert_ptr_equal(hop__malloc_small(10), q);
    hop__free_small(q, 10);
}

/* Installing another allocator gives the calling thread's cached blocks
 * back to the allocator that made them, at once. */
static void
test_cached_small_blocks_go_back_to_their_allocator_when_it_is_replaced(void **state)
{
    (void)state;
    hop_set_allocator(counting_alloc, NULL);
    custom_calls = 0;
    char *p = hop__malloc_small(100), *q = hop__malloc_small(100);
    hop__free_small(p, 100);
    hop__free_small(q, 100);
    assert_int_equal(custom_calls, 2); /* both cached, none freed */
    assert_ptr_equal(hop__malloc_small(100), q);
    hop__free_small(q, 100);
    hop_set_allocator(NULL, NULL);
    assert_int_equal(custom_calls, 4); /* both freed by counting_alloc */
    char *r = hop__malloc_small(100);
    assert_non_null(r);
    hop__free_small(r, 100);
    assert_int_equal(custom_calls, 4);
}

/* Large blocks (32 KiB to 64 MiB) freed by hop__free_small stay the
 * thread's, up to sixteen and 64 MiB: the next request a block holds with no
 * more than a quarter left over gets it (the smallest such), counted as an
 * allocation the fault injector can fail; the oldest goes first; another
 * allocator installed gets them back. */
static void
test_large_blocks_are_kept_for_a_request_of_about_their_size(void **state)
{
    (void)state;
    hop_set_allocator(counting_alloc, NULL);
    custom_calls = 0;
    size_t mb = (size_t)1 << 20;
    char *a = hop__malloc_small(mb), *b = hop__malloc_small(2 * mb);
    assert_non_null(a);
    assert_non_null(b);
    memset(a, 1, mb);
    memset(b, 2, 2 * mb);
    long live = hop_alloc_live(), count = hop_alloc_count();
    hop__free_small(a, mb);
    hop__free_small(b, 2 * mb);
    assert_int_equal(hop_alloc_live(), live - 2);
    assert_int_equal(custom_calls, 2);                 /* both kept */
    assert_ptr_equal(hop__malloc_small(mb - 1000), a); /* holds it, little left over */
    assert_int_equal(hop_alloc_count(), count + 1);
    assert_int_equal(hop_alloc_live(), live - 1);
    char *c = hop__malloc_small(mb); /* b would leave half over: a new block */
    assert_ptr_not_equal(c, b);
    assert_int_equal(custom_calls, 3);
    hop_alloc_fail_at(1);
    assert_null(hop__malloc_small(2 * mb - 4096)); /* b fits, the injector fails it */
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_ptr_equal(hop__malloc_small(2 * mb - 4096), b); /* still kept */
    hop__free_small(b, 2 * mb - 4096);
    hop__free_small(a, mb - 1000);
    hop__free_small(c, mb);
    /* b, a and c kept; thirteen more fill the sixteen, a seventeenth sends
     * the oldest (b's) back */
    char *d = hop__malloc_small(3 * mb), *e = hop__malloc_small(4 * mb);
    char *fill[12];
    for (int i = 0; i < 12; i++)
        fill[i] = hop__malloc_small((size_t)(64 + 16 * i) << 10);
    long calls = custom_calls;
    hop__free_small(d, 3 * mb);
    for (int i = 0; i < 12; i++)
        hop__free_small(fill[i], (size_t)(64 + 16 * i) << 10);
    assert_int_equal(custom_calls, calls);
    hop__free_small(e, 4 * mb);
    assert_int_equal(custom_calls, calls + 1); /* b freed */
    for (int i = 0; i < 12; i++) {             /* (taken back, and not kept) */
        assert_ptr_equal(hop__malloc_small((size_t)(64 + 16 * i) << 10), fill[i]);
        hop__free(fill[i]);
    }
    assert_int_equal(custom_calls, calls + 13);
    calls = custom_calls;
    char *f = hop__malloc_small(2 * mb - 4096); /* d and e would leave too much over */
    assert_int_equal(custom_calls, calls + 1);
    hop__free(f);
    assert_ptr_equal(hop__malloc_small(3 * mb - 10), d);
    hop__free_small(d, 3 * mb - 10);
    /* 64 MiB in all: a, c, e and d (9 MiB) and a block of 40 MiB stay; one
     * of 20 MiB more pushes out the oldest until it fits */
    char *g = hop__malloc_small(40 * mb);
    calls = custom_calls;
    hop__free_small(g, 40 * mb);
    assert_int_equal(custom_calls, calls); /* 49 MiB kept */
    char *h = hop__malloc_small(20 * mb);  /* (g would leave half over) */
    assert_ptr_not_equal(h, g);
    calls = custom_calls;
    hop__free_small(h, 20 * mb); /* a, c and e go (64 MiB at most): d, g and h stay */
    assert_int_equal(custom_calls, calls + 3);
    assert_ptr_equal(hop__malloc_small(40 * mb), g);
    hop__free_small(g, 40 * mb);
    hop__free_small(hop__malloc_small(65 * mb), 65 * mb); /* past 64 MiB: never kept */
    assert_int_equal(custom_calls, calls + 5);
    hop_set_allocator(NULL, NULL); /* the kept ones (d, g, h) go back to counting_alloc */
    assert_int_equal(custom_calls, calls + 8);
}

/* A full arena chunk's block (HOP__CHUNK_BLOCK) freed by hop__free_small
 * stays the thread's, up to 32 MiB of them: the next one is the last one
 * freed, counted as an allocation the fault injector can fail; another
 * allocator installed gets them back. */
static void
test_full_arena_chunks_are_kept_for_the_next_one(void **state)
{
    (void)state;
    hop_set_allocator(counting_alloc, NULL);
    custom_calls = 0;
    enum { KEEP = (32 << 20) / HOP__CHUNK_BLOCK };
    char **blocks = malloc((KEEP + 1) * sizeof *blocks);
    assert_non_null(blocks);
    for (int i = 0; i <= KEEP; i++)
        assert_non_null(blocks[i] = hop__malloc_small(HOP__CHUNK_BLOCK));
    memset(blocks[0], 3, HOP__CHUNK_BLOCK); /* the whole block is the caller's */
    assert_int_equal(custom_calls, KEEP + 1);
    long live = hop_alloc_live(), count = hop_alloc_count();
    for (int i = 0; i <= KEEP; i++)
        hop__free_small(blocks[i], HOP__CHUNK_BLOCK);
    assert_int_equal(custom_calls, KEEP + 2); /* the last one past 32 MiB freed */
    assert_int_equal(hop_alloc_live(), live - KEEP - 1);
    hop_alloc_fail_at(1);
    assert_null(hop__malloc_small(HOP__CHUNK_BLOCK));
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    char *p = hop__malloc_small(HOP__CHUNK_BLOCK);
    assert_ptr_equal(p, blocks[KEEP - 1]); /* the last one kept */
    assert_int_equal(hop_alloc_count(), count + 1);
    assert_int_equal(hop_alloc_live(), live - KEEP);
    hop__free(p); /* plain hop__free: not kept */
    assert_int_equal(custom_calls, KEEP + 3);
    /* an arena's full chunks go back to the kept ones and come out again */
    hop__arena a;
    hop__arena_init(&a);
    for (int i = 0; i < 4000; i++)
        assert_non_null(hop__arena_alloc(&a, 64));
    hop__arena_destroy(&a);
    long calls = custom_calls;
    hop__arena_init(&a);
    for (int i = 0; i < 4000; i++)
        assert_non_null(hop__arena_alloc(&a, 64));
    hop__arena_destroy(&a);
    assert_int_equal(custom_calls, calls + 2 * 6); /* the growing chunks, made and freed */
    hop_set_allocator(NULL, NULL);                 /* the kept ones go back to counting_alloc */
    assert_int_equal(custom_calls, calls + 12 + KEEP - 1);
    free(blocks);
}

/* hop__grow moves a large array into a block the thread kept, up to 64
 * times its need, and takes all of it; the block it leaves is kept, and so
 * is the one hop__grow_free frees. */
static void
test_grow_takes_a_kept_block_whole(void **state)
{
    (void)state;
    hop_set_allocator(counting_alloc, NULL);
    custom_calls = 0;
    size_t mb = (size_t)1 << 20;
    char *big = hop__malloc_small(4 * mb);
    hop__free_small(big, 4 * mb);
    int *items = NULL;
    size_t cap = 0;
    assert_int_equal(hop__grow((void **)&items, &cap, 100, sizeof *items), HOP_OK);
    assert_int_equal(cap, 128); /* small: realloc'd, doubling */
    for (int i = 0; i < 100; i++)
        items[i] = i;
    assert_int_equal(hop__grow((void **)&items, &cap, 9000, sizeof *items), HOP_OK);
    assert_ptr_equal(items, big); /* 64 KiB needed: the 4 MiB block, whole */
    assert_int_equal(cap, 4 * mb / sizeof *items);
    for (int i = 0; i < 100; i++)
        assert_int_equal(items[i], i);
    assert_int_equal(custom_calls, 3); /* big; the small array made and freed */
    hop__grow_free(items, cap, sizeof *items);
    assert_int_equal(custom_calls, 3); /* kept */
    /* 16 KiB, then 32 KiB: a new block (4 MiB is past 64 times 32 KiB) */
    items = NULL;
    cap = 0;
    assert_int_equal(hop__grow((void **)&items, &cap, 4096, sizeof *items), HOP_OK);
    assert_int_equal(hop__grow((void **)&items, &cap, 4097, sizeof *items), HOP_OK);
    assert_int_equal(cap, 8192);
    assert_ptr_not_equal(items, big);
    assert_int_equal(custom_calls, 6); /* 16 KiB made; 32 KiB made, 16 KiB freed */
    hop__grow_free(items, cap, sizeof *items);
    assert_int_equal(custom_calls, 6); /* kept */
    hop_set_allocator(NULL, NULL);     /* both large ones go back */
    assert_int_equal(custom_calls, 8);
}

static void
test_arena_grows_without_capacity_limit_and_aligns(void **state)
{
    (void)state;
    hop__arena a;
    hop__arena_init(&a);
    for (int i = 0; i < 100000; i++) {
        void *p = hop__arena_alloc(&a, (size_t)(i % 97) + 1);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % _Alignof(max_align_t), 0);
    }
    void *big = hop__arena_alloc(&a, 5u << 20);
    assert_non_null(big);
    memset(big, 1, 5u << 20);
    assert_string_equal(hop__arena_printf(&a, "%s_%d", "add", 3), "add_3");
    hop__arena_destroy(&a);
}

/* Byte strings come from the back of the chunks aligned blocks come from
 * the front of: neither overlaps the other, blocks stay aligned, strings
 * pack without padding, and a string too big for the chunk gets one. */
static void
test_arena_bytes_pack_behind_aligned_blocks_without_overlap(void **state)
{
    (void)state;
    hop__arena a;
    hop__arena_init(&a);
    enum { N = 5000 };
    static unsigned char *blocks[N];
    static char *strings[N];
    for (int i = 0; i < N; i++) {
        size_t bn = (size_t)(i % 61) + 1, sn = (size_t)(i % 13) + 1;
        blocks[i] = hop__arena_alloc(&a, bn);
        strings[i] = hop__arena_bytes(&a, sn);
        assert_non_null(blocks[i]);
        assert_non_null(strings[i]);
        assert_int_equal((uintptr_t)blocks[i] % _Alignof(max_align_t), 0);
        memset(blocks[i], i & 0xFF, bn);
        memset(strings[i], (i + 1) & 0xFF, sn);
    }
    for (int i = 0; i < N; i++) {
        size_t bn = (size_t)(i % 61) + 1, sn = (size_t)(i % 13) + 1;
        for (size_t k = 0; k < bn; k++)
            assert_int_equal(blocks[i][k], i & 0xFF);
        for (size_t k = 0; k < sn; k++)
            assert_int_equal((unsigned char)strings[i][k], (i + 1) & 0xFF);
    }
    /* Consecutive strings in one chunk are adjacent (no padding), behind
     * the aligned blocks. */
    hop__arena b;
    hop__arena_init(&b);
    char *x = hop__arena_bytes(&b, 3), *y = hop__arena_bytes(&b, 5);
    unsigned char *p = hop__arena_alloc(&b, 16);
    assert_ptr_equal(y + 5, x);
    assert_true(p + 16 <= (unsigned char *)y);
    hop__arena_destroy(&b);
    char *big = hop__arena_bytes(&a, 1u << 20);
    assert_non_null(big);
    memset(big, 7, 1u << 20);
    assert_string_equal(hop__arena_strdup(&a, "add_12"), "add_12");
    hop__arena_destroy(&a);
}

static void
test_arena_failure_is_nomem_and_arena_stays_usable(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    hop__arena a;
    hop__arena_init(&a);
    hop_alloc_fail_at(1);
    assert_null(hop__arena_alloc(&a, 16));
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_non_null(hop__arena_alloc(&a, 16));
    hop__arena_destroy(&a);
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_buf_builds_strings_and_failure_is_sticky(void **state)
{
    (void)state;
    hop__buf b;
    hop__buf_init(&b);
    hop__buf_puts(&b, "def ");
    hop__buf_printf(&b, "%s(%d)", "f", 7);
    hop__buf_indent(&b, 40);
    hop__buf_puts(&b, ":");
    char *s = hop__buf_finish(&b);
    assert_int_equal(strlen(s), 4 + 4 + 40 + 1);
    assert_memory_equal(s, "def f(7)", 8);
    hop_free(s);

    long live = hop_alloc_live();
    hop__buf_init(&b);
    hop_alloc_fail_at(1);
    hop__buf_puts(&b, "lost");
    hop__buf_puts(&b, "also lost");
    assert_null(hop__buf_finish(&b));
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_int_equal(hop_alloc_live(), live);
}

typedef struct item {
    int key;
    UT_hash_handle hh;
} item;

static void
test_hash_add_out_of_memory_is_a_status_not_an_abort(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    item *head = NULL, items[64];
    hop_status st;
    for (int k = 1; k <= 40; k++) {
        /* Fail the first allocation of every add: the table stays as it was. */
        hop__hash_oom = 0;
        items[0].key = 0;
        int failures = 0;
        for (int i = 0; i < 64; i++) {
            items[i].key = i;
            item *found = NULL;
            HASH_FIND_INT(head, &i, found);
            if (found)
                continue;
            if (i == k)
                hop_alloc_fail_at(1);
            HOP_HASH_ADD(st, hh, head, key, sizeof(int), &items[i]);
            if (st != HOP_OK) {
                failures++;
                assert_int_equal(hop_error_code(), HOP_NOMEM);
            }
        }
        hop_alloc_fail_at(0);
        assert_true(failures <= 1);
        HASH_CLEAR(hh, head);
    }
    assert_int_equal(hop_alloc_live(), live);
}

/* ------------------------------------------------------ log with an index */

typedef struct li_entry {
    const void *key;
    int value;
} li_entry;

/* The value of key's newest entry among the first n of log, by a scan, or
 * -1: what every lookup must give. */
static int
li_newest(const li_entry *log, size_t n, const void *key)
{
    for (size_t i = n; i-- > 0;)
        if (log[i].key == key)
            return log[i].value;
    return -1;
}

static hop_status
li_add(hop__logindex *li, const li_entry *e)
{
    li_entry *room = hop__logindex_push(li);
    if (room == NULL)
        return HOP_NOMEM;
    *room = *e;
    return HOP_OK;
}

static int
li_found(const hop__logindex *li, const void *key)
{
    const li_entry *e = hop__logindex_find(li, key);
    return e ? e->value : -1;
}

/* Every key's lookup (and one of a key never added) is the scan's. */
static void
li_check_all(const hop__logindex *li, const li_entry *ref, size_t n, const char *keys, size_t nkeys)
{
    assert_int_equal(li->n, n);
    for (size_t k = 0; k <= nkeys; k++)
        assert_int_equal(li_found(li, keys + k), li_newest(ref, n, keys + k));
}

static void
test_logindex_gives_each_keys_newest_entry_scanned_indexed_or_both(void **state)
{
    (void)state;
    char keys[38];
    li_entry small[4], ref[300];
    hop__logindex li;
    hop__logindex_init(&li, sizeof(li_entry), small, 4);
    long made = hop_alloc_count();
    for (size_t i = 0; i < 300; i++) {
        /* keys come back (37 of them, in a stride that repeats them out of
         * order), so probe sequences cross and keys have several entries */
        ref[i] = (li_entry){keys + (i * 7) % 37, (int)i};
        assert_int_equal(li_add(&li, &ref[i]), HOP_OK);
        if (i < 4)
            assert_int_equal(hop_alloc_count(), made); /* the owner's room first */
        /* indexed now and then: lookups see an index and a tail after it */
        if (i % 5 == 0)
            assert_int_equal(hop__logindex_index(&li), HOP_OK);
        if (i < HOP__LOGINDEX_SCAN)
            assert_null(li.index);
        if (i % 3 == 0 || i < 20)
            li_check_all(&li, ref, i + 1, keys, 37);
    }
    assert_int_equal(hop__logindex_index(&li), HOP_OK);
    assert_int_equal(li.nindexed, 300);
    assert_true(li.icap >= 600);
    li_check_all(&li, ref, 300, keys, 37);
    assert_ptr_equal(hop__logindex_find(&li, keys + 5),
                     hop__logindex_at(&li, 265)); /* 265 * 7 % 37 */
    hop__logindex_free(&li);
    assert_int_equal(li.n, 0);
    assert_null(hop__logindex_find(&li, keys));
}

static void
test_logindex_truncated_newest_first_gives_the_lookups_it_gave_then(void **state)
{
    (void)state;
    char keys[12];
    li_entry small[4], ref[200];
    hop__logindex li;
    hop__logindex_init(&li, sizeof(li_entry), small, 4);
    long live = hop_alloc_live();
    /* an undo log: every add indexed at once, scopes taken back */
    size_t marks[] = {0, 3, 9, 40, 41, 120, 200};
    for (size_t round = 0; round < 2; round++) {
        for (size_t i = li.n; i < 200; i++) {
            ref[i] = (li_entry){keys + (i * 5 + round) % 11, (int)(i + 1000 * round)};
            assert_int_equal(li_add(&li, &ref[i]), HOP_OK);
            assert_int_equal(hop__logindex_index(&li), HOP_OK);
            assert_int_equal(li.nindexed, i < HOP__LOGINDEX_SCAN ? 0 : i + 1);
        }
        for (size_t m = HOP__ARRAY_LEN(marks); m-- > 0;) {
            hop__logindex_truncate(&li, marks[m]);
            li_check_all(&li, ref, marks[m], keys, 11);
            assert_true(li.nindexed <= marks[m]);
            if (m == 3 && round == 0)
                break; /* the second round grows again from 40 */
        }
    }
    /* entries added after a truncation are found, and only they */
    li_entry again = {keys + 11, 77};
    assert_int_equal(li_add(&li, &again), HOP_OK);
    assert_int_equal(li.n, 1);
    assert_int_equal(li_found(&li, keys + 11), 77);
    hop__logindex_truncate(&li, 0);
    assert_int_equal(li_found(&li, keys + 11), -1);
    hop__logindex_free(&li);
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_logindex_out_of_memory_changes_nothing_and_lookups_stay_exact(void **state)
{
    (void)state;
    char keys[16];
    li_entry small[4], ref[64];
    hop__logindex li;
    hop__logindex_init(&li, sizeof(li_entry), small, 4);
    long live = hop_alloc_live();
    for (size_t i = 0; i < 64; i++) {
        ref[i] = (li_entry){keys + i % 13, (int)i};
        /* the first add past the owner's room, and every 16th, fails once */
        if (i == 4 || i % 16 == 15) {
            hop_alloc_fail_at(1);
            hop_status st = li_add(&li, &ref[i]);
            hop_alloc_fail_at(0);
            if (st != HOP_OK) {
                assert_int_equal(st, HOP_NOMEM);
                li_check_all(&li, ref, i, keys, 13);
            }
        }
        if (li.n == i)
            assert_int_equal(li_add(&li, &ref[i]), HOP_OK);
        /* an index that cannot be made (or grow) leaves the old one */
        size_t before = li.nindexed;
        hop_alloc_fail_at(i % 3 == 1 ? 1 : 0);
        hop_status st = hop__logindex_index(&li);
        hop_alloc_fail_at(0);
        if (st != HOP_OK) {
            assert_int_equal(st, HOP_NOMEM);
            assert_int_equal(li.nindexed, before);
        }
        li_check_all(&li, ref, i + 1, keys, 13);
    }
    hop__logindex_free(&li);
    assert_int_equal(hop_alloc_live(), live);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names_and_messages_come_from_one_list),
        cmocka_unit_test(test_error_context_holds_last_code_and_formatted_message),
        cmocka_unit_test(test_error_message_longer_than_buffer_is_truncated_not_overflowed),
        cmocka_unit_test(test_fail_at_fails_exactly_the_kth_allocation),
        cmocka_unit_test(test_thread_live_counts_only_the_calling_threads_allocations_and_frees),
        cmocka_unit_test(test_custom_allocator_sees_every_allocation_and_free),
        cmocka_unit_test(
            test_small_blocks_are_reused_within_their_class_and_counted_as_allocations),
        cmocka_unit_test(test_cached_small_blocks_go_back_to_their_allocator_when_it_is_replaced),
        cmocka_unit_test(test_large_blocks_are_kept_for_a_request_of_about_their_size),
        cmocka_unit_test(test_full_arena_chunks_are_kept_for_the_next_one),
        cmocka_unit_test(test_grow_takes_a_kept_block_whole),
        cmocka_unit_test(test_arena_grows_without_capacity_limit_and_aligns),
        cmocka_unit_test(test_arena_bytes_pack_behind_aligned_blocks_without_overlap),
        cmocka_unit_test(test_arena_failure_is_nomem_and_arena_stays_usable),
        cmocka_unit_test(test_buf_builds_strings_and_failure_is_sticky),
        cmocka_unit_test(test_hash_add_out_of_memory_is_a_status_not_an_abort),
        cmocka_unit_test(test_logindex_gives_each_keys_newest_entry_scanned_indexed_or_both),
        cmocka_unit_test(test_logindex_truncated_newest_first_gives_the_lookups_it_gave_then),
        cmocka_unit_test(test_logindex_out_of_memory_changes_nothing_and_lookups_stay_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
