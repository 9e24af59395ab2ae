/*
 * graph/names.c - the name table of a graph: unique, printable node names.
 *
 * Names are identifiers so that the code printer can print them as they are.
 * A node asks for a base (`add`, or a placeholder's name) and gets `base` if
 * it is free, else `base_<k>` for the smallest free k >= 1.  Because erasing a
 * node frees its name and lowers the base's search start again, the names a
 * graph hands out depend only on which names are taken now: a call that fails
 * and is retried, or a node that is erased and rebuilt, gets the same name.
 *
 * The table is a chained hash table of nodes linked through the node itself
 * (hop_node.name_next), not uthash: a UT_hash_handle is 56 bytes, over a
 * quarter of the 200 bytes a node may cost (issues #7, #30), where this costs
 * 8 bytes in the node plus 8 to 16 bytes of bucket array.  The node keeps no
 * hash (4 bytes would make it 104 bytes, not 96), but every link (a bucket,
 * a name_next) carries three bits of the hash of the node it points to in
 * its low bits, which a hop_node's alignment leaves zero: a chain compares
 * the names of one node in eight that is not the one sought (comparing
 * `add_17` with `add_12`, ... was ~150 instructions of every node of a
 * traced chain, issue #30).  Growing the table hashes each name again,
 * twice per name on average.
 * Base names that were uniquified (few) sit in a table of the same kind,
 * hop__base.  A base's counter hands out `<base>_<k>` upwards; a candidate
 * above every k it handed out is looked up in the node table only if some
 * name of that form was taken another way (counter_name_free).
 */
#include "graph/graph_impl.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

/* In strcmp order: is_keyword searches it. */
static const char *const python_keywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
};

/* Bit (c - 'A') of keyword_firsts[n - 2] is set when a keyword of n letters
 * starts with c (as the table above says; test_printer.c checks every
 * keyword and its neighbours). */
static const uint64_t keyword_firsts[7] = {
#define KW_BIT(c) ((uint64_t)1 << ((c) - 'A'))
    /* as if in is or */
    KW_BIT('a') | KW_BIT('i') | KW_BIT('o'),
    /* and def del for not try */
    KW_BIT('a') | KW_BIT('d') | KW_BIT('f') | KW_BIT('n') | KW_BIT('t'),
    /* None True elif else from pass with */
    KW_BIT('N') | KW_BIT('T') | KW_BIT('e') | KW_BIT('f') | KW_BIT('p') | KW_BIT('w'),
    /* False async await break class raise while yield */
    KW_BIT('F') | KW_BIT('a') | KW_BIT('b') | KW_BIT('c') | KW_BIT('r') | KW_BIT('w') | KW_BIT('y'),
    /* assert except global import lambda return */
    KW_BIT('a') | KW_BIT('e') | KW_BIT('g') | KW_BIT('i') | KW_BIT('l') | KW_BIT('r'),
    /* finally */
    KW_BIT('f'),
    /* continue nonlocal */
    KW_BIT('c') | KW_BIT('n'),
#undef KW_BIT
};

/* Whether s, of n bytes, is a Python keyword. */
static bool
is_keyword_n(const char *s, size_t n)
{
    if (n < 2 || n > 8) /* every keyword has 2..8 letters: most names stop here */
        return false;
    /* Op names (`mul`, `add`, `relu`) name most nodes: the first letter and
     * the length rule nearly all of them out before any compare. */
    if (s[0] < 'A' || s[0] > 'z' || !(keyword_firsts[n - 2] >> (s[0] - 'A') & 1))
        return false;
    /* python_keywords is in strcmp order: a binary search, ~6 compares
     * where the scan made 35 (a name is sanitised for every node). */
    size_t lo = 0, hi = HOP__ARRAY_LEN(python_keywords);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s, python_keywords[mid]);
        if (c == 0)
            return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

static bool
is_keyword(const char *s)
{
    return is_keyword_n(s, strlen(s));
}

static bool
is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

bool
hop_name_is_identifier(const char *s)
{
    if (s == NULL || !is_ident_start(s[0]))
        return false;
    for (const char *p = s + 1; *p; p++) {
        if (!is_ident_char(*p))
            return false;
    }
    return !is_keyword(s);
}

/* Writes the identifier form of s into out, which has room for strlen(s) + 3
 * bytes; returns its length.  "x.y" -> "x_y", "0a" -> "_0a", "" -> "_",
 * "if" -> "if_". */
static size_t
sanitize_into(const char *s, char *out)
{
    size_t n = 0;
    if (s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
        out[n++] = '_';
    for (const char *p = s; *p; p++)
        out[n++] = is_ident_char(*p) ? *p : '_';
    out[n] = '\0';
    if (is_keyword_n(out, n)) {
        out[n++] = '_';
        out[n] = '\0';
    }
    return n;
}

/* The length of s when it is an identifier as it is (sanitize_into would
 * copy it unchanged, keywords aside), else 0. */
static size_t
plain_identifier_len(const char *s)
{
    if (!is_ident_start(s[0]))
        return 0;
    size_t n = 1;
    while (is_ident_char(s[n]))
        n++;
    return s[n] == '\0' ? n : 0;
}

char *
hop__name_sanitize(hop__arena *a, const char *s)
{
    /* Most names are identifiers already (a body's `cond_true_17`, made by
     * hop_output_graph_next_name): copied as they are, keywords aside, with
     * no test of each byte's replacement (the same bytes in the arena). */
    size_t n = plain_identifier_len(s), len = n ? n : strlen(s);
    char *out = hop__arena_alloc(a, len + 3);
    if (out == NULL)
        return NULL;
    if (n == 0 || is_keyword_n(s, n))
        sanitize_into(s, out);
    else
        memcpy(out, s, n + 1);
    return out;
}

/* A name's hash: eight bytes at a time, each word mixed in with a multiply
 * and a shift (splitmix64's constants).  Names are short (`add_123`), so
 * this is one or two rounds where uthash's Jenkins hash cost about 75
 * instructions a name, and the table hashes each name about three times
 * (reserving, then again as the table grows).  Only this file sees the
 * values. */
static uint32_t
name_hash(const char *name, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15u ^ len;
    for (; len >= 8; name += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, name, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9u;
        h ^= h >> 31;
    }
    /* The last len < 8 bytes, little-endian, as four, two and one bytes
     * (fixed-size copies are loads; a memcpy of a variable length is a call
     * into libc, and a loop over the bytes was ~10 instructions a byte,
     * half of a name's hashing). */
    uint64_t w = 0;
    unsigned shift = 0;
    if (len >= 4) {
        uint32_t v;
        memcpy(&v, name, 4);
        w = v;
        shift = 32;
        name += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t v;
        memcpy(&v, name, 2);
        w |= (uint64_t)v << shift;
        shift += 16;
        name += 2;
        len -= 2;
    }
    if (len > 0)
        w |= (uint64_t)(unsigned char)name[0] << shift;
    h = (h ^ w) * 0x94D049BB133111EBu;
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

/* The hash of n's name (the node does not keep it). */
static uint32_t
node_hash(const hop_node *n)
{
    return name_hash(n->name, strlen(n->name));
}

/* A link of the table (a bucket or a name_next): the node it points to,
 * or NULL, with three bits of that node's hash (the top ones: the bucket
 * index takes the low ones) in the low bits that alignment leaves zero. */
_Static_assert(_Alignof(hop_node) >= 8, "a link's tag needs three free bits");
#define LINK_TAG_MASK ((uintptr_t)7)

static uint32_t
link_tag(uint32_t hash)
{
    return hash >> 29;
}

static hop_node *
link_to(hop_node *n, uint32_t hash)
{
    return (hop_node *)((uintptr_t)n | link_tag(hash));
}

static hop_node *
link_node(const hop_node *link)
{
    return (hop_node *)((uintptr_t)link & ~LINK_TAG_MASK);
}

static bool
link_has_tag(const hop_node *link, uint32_t tag)
{
    return ((uintptr_t)link & LINK_TAG_MASK) == tag;
}

/* True when the string a is the len bytes at b (which hold no NUL).  A
 * chain holds a name or two on average, most of them differing from b only
 * near the end (`add_17`, `add_25`): a plain loop beats strncmp's setup. */
static bool
same_name(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i]) /* a's NUL stops here too: b has none */
            return false;
    return a[len] == '\0';
}

/* True when the len bytes at a and at b agree (a loop: short names). */
static bool
same_bytes(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static hop_node *
find_node(const graph_impl *impl, const char *name, size_t len, uint32_t hash)
{
    if (impl->nbuckets == 0)
        return NULL;
    uint32_t tag = link_tag(hash);
    for (hop_node *l = impl->buckets[hash & (impl->nbuckets - 1)]; l; l = link_node(l)->name_next) {
        if (link_has_tag(l, tag) && same_name(link_node(l)->name, name, len))
            return link_node(l);
    }
    return NULL;
}

hop_node *
hop__name_find(const hop_graph *g, const char *name)
{
    if (name == NULL)
        return NULL;
    size_t len = strlen(name);
    return find_node(hop__graph_impl(g), name, len, name_hash(name, len));
}

/* The base named by the len bytes at name, which hash to hash. */
static hop__base *
find_base(const graph_impl *impl, const char *name, size_t len, uint32_t hash)
{
    if (impl->nbase_buckets == 0)
        return NULL;
    for (hop__base *b = impl->bases[hash & (impl->nbase_buckets - 1)]; b; b = b->chain)
        if (b->hash == hash && b->len == len && same_bytes(b->text, name, len))
            return b;
    return NULL;
}

/* Makes room for one more base (two a bucket on average).  The old array is
 * kept on failure. */
static hop_status
reserve_base(graph_impl *impl)
{
    if (impl->nbases < 2 * impl->nbase_buckets)
        return HOP_OK;
    if (impl->nbase_buckets == 0) {
        impl->bases = impl->small_bases;
        impl->nbase_buckets = HOP__SMALL_BASES;
        return HOP_OK;
    }
    size_t nb = impl->nbase_buckets * 2;
    hop__base **t = hop__calloc(nb, sizeof *t);
    if (t == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < impl->nbase_buckets; i++) {
        for (hop__base *b = impl->bases[i], *next; b; b = next) {
            next = b->chain;
            b->chain = t[b->hash & (nb - 1)];
            t[b->hash & (nb - 1)] = b;
        }
    }
    if (impl->bases != impl->small_bases)
        hop__free(impl->bases);
    impl->bases = t;
    impl->nbase_buckets = nb;
    return HOP_OK;
}

static hop_graph *subgraph_find_hashed(const hop_graph *g, const char *name, size_t len,
                                       uint32_t hash);

/* A name is taken by a node or by a subgraph of g (both print as names in the
 * same scope). */
static bool
is_taken(const hop_graph *g, const char *name, size_t len, uint32_t hash)
{
    return find_node(hop__graph_impl(g), name, len, hash) != NULL ||
           (g->nsubgraphs > 0 && subgraph_find_hashed(g, name, len, hash) != NULL);
}

/* Copies the n bytes at s (plus a NUL) into the graph's arena, unaligned
 * (names are short: padding each to 16 bytes would cost more than the
 * name). */
static char *
pack_string(graph_impl *impl, const char *s, size_t n)
{
    char *d = hop__arena_bytes(&impl->store->arena, n + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Makes room for one more name: the table keeps at most two nodes per bucket
 * on average (4 to 8 bytes of bucket array per name; one per bucket cost 8
 * to 16, a twentieth of a node).  The old array is kept on failure. */
static hop_status
reserve_room(graph_impl *impl)
{
    if (impl->nnamed < 4 * impl->nbuckets)
        return HOP_OK;
    if (impl->nbuckets == 0) {
        impl->buckets = impl->small_buckets;
        impl->nbuckets = HOP__SMALL_BUCKETS;
        return HOP_OK;
    }
    size_t nb = impl->nbuckets * 2;
    hop_node **b = hop__calloc(nb, sizeof *b);
    if (b == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < impl->nbuckets; i++) {
        for (hop_node *l = impl->buckets[i], *next; l; l = next) {
            hop_node *n = link_node(l);
            next = n->name_next;
            uint32_t hash = node_hash(n);
            hop_node **bucket = &b[hash & (nb - 1)];
            n->name_next = *bucket;
            *bucket = link_to(n, hash);
        }
    }
    if (impl->buckets != impl->small_buckets)
        hop__free(impl->buckets);
    impl->buckets = b;
    impl->nbuckets = nb;
    return HOP_OK;
}

/* Writes "_<k>" (decimal) and a NUL at out: what snprintf's "_%" PRIu64
 * writes, without its cost (a name is reserved for every node): the digits
 * counted first, then written from the last, in place.  Returns the length
 * written, NUL excluded. */
static size_t
suffix_into(char *out, uint64_t k)
{
    size_t nd = 1;
    for (uint64_t p = 10; nd < 20 && k >= p; p *= 10)
        nd++;
    out[0] = '_';
    char *d = out + 1 + nd;
    *d = '\0';
    do {
        *--d = (char)('0' + k % 10);
        k /= 10;
    } while (k);
    return 1 + nd;
}

/* The entry of base (blen bytes hashing to bhash), which has none yet, or
 * NULL (HOP_NOMEM; a failed name leaves its bytes in the arena). */
static hop__base *
new_base(graph_impl *impl, const char *base, size_t blen, uint32_t bhash)
{
    if (reserve_base(impl) != HOP_OK)
        return NULL;
    hop__base *b = hop__arena_alloc(&impl->store->arena, sizeof *b);
    char *text = b ? hop__arena_bytes(&impl->store->arena, blen + 22) : NULL;
    if (text == NULL)
        return NULL;
    memcpy(text, base, blen);
    *b = (hop__base){.text = text, .next = 1, .hash = bhash, .len = (uint32_t)blen};
    hop__base **bucket = &impl->bases[b->hash & (impl->nbase_buckets - 1)];
    b->chain = *bucket;
    *bucket = b;
    impl->nbases++;
    return b;
}

/* Writes the candidate `<base>_<k>` in b->text; returns its length.  The
 * successor of the last candidate (most: a chain's next `add`) is its
 * digits counted up in place, with no division (suffix_into's ~70
 * instructions were an eighth of naming a node, issue #30). */
static size_t
base_text(hop__base *b, uint64_t k)
{
    char *d = b->text + b->len + 1; /* the digits */
    if (b->text_k != 0 && k == b->text_k + 1) {
        size_t nd = b->text_len - b->len - 1;
        char *p = d + nd;
        while (p > d && p[-1] == '9')
            *--p = '0';
        if (p > d) {
            p[-1]++;
        } else { /* 9..9 + 1: 10..0, one digit more */
            d[0] = '1';
            d[nd] = '0';
            b->text_len++;
        }
    } else {
        b->text_len = (uint32_t)(b->len + suffix_into(b->text + b->len, k));
    }
    b->text_k = k;
    return b->text_len;
}

/* Whether `<b>_<k>`, the len bytes of b->text hashing to hash, is free.
 * A node can hold a name of that form only through b's counter (k < b->top)
 * or by reserving it whole (b->foreign, mark_foreign): above top and with
 * no such name, only a subgraph can hold it, and the node table is not
 * searched.  That search walked a chain of two to four nodes, each a cache
 * miss, for every node of a traced chain: a tenth of hop.trace's time
 * (issue #30). */
static bool
counter_name_free(const hop_graph *g, const hop__base *b, uint64_t k, size_t len, uint32_t hash)
{
    if (k >= b->top && !b->foreign)
        return g->nsubgraphs == 0 || subgraph_find_hashed(g, b->text, len, hash) == NULL;
    return !is_taken(g, b->text, len, hash);
}

/* The length of the base of a name of the form `<base>_<k>` (k decimal,
 * without leading zeros, k >= 1: a counter's name), or 0. */
static size_t
counted_base_len(const char *name, size_t len)
{
    size_t i = len;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    if (i == len || i < 2 || name[i - 1] != '_' || name[i] == '0')
        return 0;
    return i - 1;
}

/* The name of blen bytes at name is about to be reserved whole: if it has a
 * counter's form, its base's counter may no longer skip the node table
 * (counter_name_free).  Fails only for want of memory. */
static hop_status
mark_foreign(graph_impl *impl, const char *name, size_t blen)
{
    size_t n = counted_base_len(name, blen);
    if (n == 0)
        return HOP_OK;
    uint32_t hash = name_hash(name, n);
    hop__base *b = find_base(impl, name, n, hash);
    if (b == NULL && (b = new_base(impl, name, n, hash)) == NULL)
        return HOP_NOMEM;
    b->foreign = true;
    return HOP_OK;
}

/* Reserves a name from the identifier base of blen bytes, which hashes to
 * bhash: base itself when free, else base_<k>, built in its base entry's
 * text. */
static hop_status
reserve_hashed(hop_graph *g, const char *base, size_t blen, uint32_t bhash,
               hop__name_claim *claim)
{
    graph_impl *impl = hop__graph_impl(g);
    const char *name = base;
    size_t len = blen;
    claim->base = NULL;
    claim->suffix = 0;
    claim->hash = bhash;
    hop__base *b = find_base(impl, base, blen, bhash);
    if ((b != NULL && b->bare_taken) || is_taken(g, base, blen, bhash)) {
        if (b == NULL && (b = new_base(impl, base, blen, bhash)) == NULL)
            return HOP_NOMEM;
        b->bare_taken = true;
        uint64_t k = b->next;
        for (;; k++) {
            len = base_text(b, k);
            claim->hash = name_hash(b->text, len);
            if (counter_name_free(g, b, k, len, claim->hash))
                break;
        }
        claim->base = b;
        claim->suffix = k;
        name = b->text;
    } else if (mark_foreign(impl, base, blen) != HOP_OK) {
        return HOP_NOMEM;
    }
    if (reserve_room(impl) != HOP_OK || (claim->name = pack_string(impl, name, len)) == NULL)
        return HOP_NOMEM;
    return HOP_OK;
}

hop_status
hop__name_reserve(hop_graph *g, const char *base, hop__name_claim *claim)
{
    /* Most bases are identifiers already (a lifted value's placeholder is
     * named after its outer value, a capture _tensor_constant<k>): reserved
     * from base itself, with no sanitised copy and its second strlen (~300
     * instructions of every placeholder a capture makes, issue #30).  A
     * base too long for small takes the general path, its copy allocated
     * as before (test_graph's failed rename needs that allocation). */
    char small[128];
    size_t plain = plain_identifier_len(base);
    if (plain > 0 && plain + 3 <= sizeof small && !is_keyword_n(base, plain))
        return reserve_hashed(g, base, plain, name_hash(base, plain), claim);
    size_t cap = strlen(base) + 3; /* sanitising */
    char *buf = cap <= sizeof small ? small : hop__malloc(cap);
    if (buf == NULL)
        return HOP_NOMEM;
    size_t blen = sanitize_into(base, buf);
    hop_status st = reserve_hashed(g, buf, blen, name_hash(buf, blen), claim);
    if (buf != small)
        hop__free(buf);
    return st;
}

/* Each op's name as a base: its length (the high half) and hash, or 0 until
 * the op first names a node.  A name is the same in every graph, and
 * hashing it (with its strlen and its copy) was ~80 instructions of every
 * node of a traced chain (issue #30).  Threads may fill an entry at once:
 * they store the same value. */
static _Atomic uint64_t op_base_keys[HOP_OP_COUNT];

hop_status
hop__name_reserve_op(hop_graph *g, hop_op op, const char *op_name, hop__name_claim *claim)
{
    /* Every op's name is an identifier and no keyword (test_printer.c checks
     * the whole op table): sanitising it, a scan and a keyword search, was
     * a third of naming a node (callgrind, trace_node's chain). */
    uint64_t key = atomic_load_explicit(&op_base_keys[op], memory_order_relaxed);
    if (key == 0) {
        size_t len = strlen(op_name);
        key = (uint64_t)len << 32 | name_hash(op_name, len);
        atomic_store_explicit(&op_base_keys[op], key, memory_order_relaxed);
    }
    return reserve_hashed(g, op_name, (size_t)(key >> 32), (uint32_t)key, claim);
}

/* Links n, whose name is set and hashes to hash, into the table (room was
 * made). */
static void
link_name(graph_impl *impl, hop_node *n, uint32_t hash)
{
    hop_node **bucket = &impl->buckets[hash & (impl->nbuckets - 1)];
    n->name_next = *bucket;
    *bucket = link_to(n, hash);
    impl->nnamed++;
}

void
hop__name_commit(hop_graph *g, const hop__name_claim *claim, hop_node *n)
{
    n->name = claim->name;
    link_name(hop__graph_impl(g), n, claim->hash);
    /* Reserving scanned base_<next> .. base_<suffix - 1> and found them taken. */
    if (claim->base && claim->suffix >= claim->base->next)
        claim->base->next = claim->suffix + 1;
    if (claim->base && claim->suffix >= claim->base->top)
        claim->base->top = claim->suffix + 1;
}

void
hop__name_retake(hop_graph *g, hop_node *n)
{
    link_name(hop__graph_impl(g), n, node_hash(n));
}

/* name stopped being taken: if it is a base, it is free again; if it is
 * `<base>_<k>`, base's search must start at k again for the next name to be
 * the smallest free one. */
static void
lower_base_start(hop_graph *g, const char *name)
{
    size_t whole = strlen(name);
    hop__base *bare = find_base(hop__graph_impl(g), name, whole, name_hash(name, whole));
    if (bare)
        bare->bare_taken = false;
    const char *us = strrchr(name, '_');
    if (us == NULL || us == name || us[1] < '1' || us[1] > '9')
        return;
    uint64_t k = 0;
    for (const char *p = us + 1; *p; p++) {
        if (*p < '0' || *p > '9' || k > (UINT64_MAX - 9) / 10)
            return;
        k = k * 10 + (uint64_t)(*p - '0');
    }
    size_t len = (size_t)(us - name);
    hop__base *b = find_base(hop__graph_impl(g), name, len, name_hash(name, len));
    if (b && k < b->next)
        b->next = k;
}

void
hop__name_release(hop_graph *g, hop_node *n)
{
    graph_impl *impl = hop__graph_impl(g);
    if (impl->nbuckets == 0)
        return;
    for (hop_node **pp = &impl->buckets[node_hash(n) & (impl->nbuckets - 1)]; *pp;
         pp = &link_node(*pp)->name_next) {
        if (link_node(*pp) == n) {
            *pp = n->name_next;
            n->name_next = NULL;
            impl->nnamed--;
            lower_base_start(g, n->name);
            return;
        }
    }
}

void
hop__name_unreserve(hop_graph *g, const char *name)
{
    lower_base_start(g, name);
}

void
hop__names_clear(hop_graph *g)
{
    graph_impl *impl = hop__graph_impl(g);
    hop__free(impl->sub_slots);
    impl->sub_slots = NULL;
    impl->sub_cap = 0;
    if (impl->bases != impl->small_bases)
        hop__free(impl->bases);
    impl->bases = NULL;
    impl->nbase_buckets = impl->nbases = 0;
    if (impl->buckets != impl->small_buckets)
        hop__free(impl->buckets);
    impl->buckets = NULL;
    impl->nbuckets = impl->nnamed = 0;
}

/* ------------------------------------------------------ the subgraph index */

static void
sub_insert(hop__sub_slot *slots, size_t cap, hop_graph *child, uint32_t hash)
{
    size_t i = hash & (cap - 1);
    while (slots[i].graph)
        i = (i + 1) & (cap - 1);
    slots[i].graph = child;
    slots[i].hash = hash;
}

hop_status
hop__subgraph_reserve(hop_graph *g)
{
    graph_impl *impl = hop__graph_impl(g);
    size_t n = g->nsubgraphs + 1;
    if (n <= HOP__SMALL_SUBGRAPHS || 2 * n <= impl->sub_cap)
        return HOP_OK;
    size_t cap = impl->sub_cap ? impl->sub_cap : 4 * HOP__SMALL_SUBGRAPHS;
    while (cap < 2 * n)
        cap *= 2;
    hop__sub_slot *slots = hop__calloc(cap, sizeof *slots);
    if (slots == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < g->nsubgraphs; i++) {
        const char *name = g->subgraphs[i]->name;
        sub_insert(slots, cap, g->subgraphs[i], name_hash(name, strlen(name)));
    }
    hop__free(impl->sub_slots);
    impl->sub_slots = slots;
    impl->sub_cap = cap;
    return HOP_OK;
}

void
hop__subgraph_link(hop_graph *g, hop_graph *child)
{
    graph_impl *impl = hop__graph_impl(g);
    if (impl->sub_cap)
        sub_insert(impl->sub_slots, impl->sub_cap, child,
                   name_hash(child->name, strlen(child->name)));
}

void
hop__subgraph_unlink(hop_graph *g, const hop_graph *child)
{
    graph_impl *impl = hop__graph_impl(g);
    if (impl->sub_cap == 0)
        return;
    size_t mask = impl->sub_cap - 1;
    hop__sub_slot *slots = impl->sub_slots;
    size_t i = name_hash(child->name, strlen(child->name)) & mask;
    while (slots[i].graph && slots[i].graph != child)
        i = (i + 1) & mask;
    if (slots[i].graph == NULL)
        return;
    /* Backward-shift deletion: every later slot of the run that may move
     * into the hole does, so a probe never stops early at it. */
    for (size_t j = (i + 1) & mask; slots[j].graph; j = (j + 1) & mask) {
        size_t home = slots[j].hash & mask;
        /* j's entry may fill the hole i unless its home lies in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            slots[i] = slots[j];
            i = j;
        }
    }
    slots[i].graph = NULL;
}

/* hop__subgraph_find with name's hash (name_hash) given: a name being
 * reserved has it already (is_taken), and computing it again was a second
 * hash of every reserved name in a graph with subgraphs (issue #30). */
static hop_graph *
subgraph_find_hashed(const hop_graph *g, const char *name, size_t len, uint32_t hash)
{
    const graph_impl *impl = hop__graph_impl(g);
    if (impl->sub_cap == 0) {
        for (size_t i = 0; i < g->nsubgraphs; i++) {
            const char *s = g->subgraphs[i]->name;
            if (strncmp(s, name, len) == 0 && s[len] == '\0')
                return g->subgraphs[i];
        }
        return NULL;
    }
    size_t mask = impl->sub_cap - 1;
    for (size_t i = hash & mask; impl->sub_slots[i].graph; i = (i + 1) & mask) {
        const char *s = impl->sub_slots[i].graph->name;
        if (impl->sub_slots[i].hash == hash && strncmp(s, name, len) == 0 && s[len] == '\0')
            return impl->sub_slots[i].graph;
    }
    return NULL;
}

hop_graph *
hop__subgraph_find(const hop_graph *g, const char *name, size_t len)
{
    const graph_impl *impl = hop__graph_impl(g);
    return subgraph_find_hashed(g, name, len, impl->sub_cap ? name_hash(name, len) : 0);
}
