/*
 * ops/meta.c - tensor metadata: dtype, rank and symbolic sizes; contiguous
 * strides, element counts, equality and the `f32[s0, 4]` printer; the
 * checks on value infos that HOPs share (bool and int scalars, compatible
 * metadata, a dim removed) and their `Sym(s0)` printer.
 */
#include "ops/sym_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

hop_status
hop_dims_check(const char *fn, hop_dtype dtype, int rank, const int64_t *sizes)
{
    if ((unsigned)dtype >= HOP_DTYPE_COUNT)
        return hop_error(HOP_INVALID, "%s: invalid dtype %d", fn, (int)dtype);
    if (rank < 0 || rank > HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "%s: rank %d is outside [0, %d]", fn, rank, HOP_MAX_RANK);
    if (rank > 0 && sizes == NULL)
        return hop_error(HOP_MISUSE, "%s: sizes is NULL for rank %d", fn, rank);
    return HOP_OK;
}

hop_status
hop_meta_init(hop_meta *m, hop_shape_env *env, hop_dtype dtype, int rank, const int64_t *sizes)
{
    const char *fn = "hop_meta_init";
    if (m == NULL || env == NULL)
        return hop_error(HOP_MISUSE, "%s: %s is NULL", fn, m == NULL ? "m" : "the ShapeEnv");
    hop_status st = hop_dims_check(fn, dtype, rank, sizes);
    if (st != HOP_OK)
        return st;
    hop_meta tmp = {.dtype = dtype, .rank = rank};
    for (int i = 0; i < rank; i++) {
        if (sizes[i] < 0)
            return hop_error(HOP_INVALID, "%s: size %" PRId64 " of dim %d is negative", fn,
                             sizes[i], i);
        if ((tmp.sizes[i] = hop_sym_const(env, sizes[i])) == NULL)
            return hop_error_code();
    }
    *m = tmp;
    return HOP_OK;
}

static hop_status
check_meta(const hop_meta *m, hop_shape_env *env, const char *fn)
{
    if (m == NULL || env == NULL)
        return hop_error(HOP_MISUSE, "%s: %s is NULL", fn, m == NULL ? "m" : "the ShapeEnv");
    if (m->rank < 0 || m->rank > HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "%s: rank %d is outside [0, %d]", fn, m->rank, HOP_MAX_RANK);
    for (int i = 0; i < m->rank; i++) {
        hop_status st = hop__sym_check(env, m->sizes[i], fn, i + 1, false);
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

/*
 * Row-major strides: the last dim has stride 1 and each other dim the product
 * of the sizes after it.  (PyTorch clamps sizes to >= 1 here; the runtime
 * never reads strides of a tensor with no elements, so we keep the product.)
 */
hop_status
hop_meta_strides(const hop_meta *m, hop_shape_env *env, const hop_expr **out)
{
    const char *fn = "hop_meta_strides";
    hop_status st = check_meta(m, env, fn);
    if (st != HOP_OK)
        return st;
    if (out == NULL && m->rank > 0)
        return hop_error(HOP_MISUSE, "%s: out is NULL", fn);
    const hop_expr *tmp[HOP_MAX_RANK];
    const hop_expr *acc = hop_sym_const(env, 1);
    for (int i = m->rank - 1; i >= 0 && acc; i--) {
        tmp[i] = acc;
        if (i > 0)
            acc = hop_sym_mul(env, acc, m->sizes[i]);
    }
    if (acc == NULL)
        return hop_error_code();
    for (int i = 0; i < m->rank; i++)
        out[i] = tmp[i];
    return HOP_OK;
}

const hop_expr *
hop_meta_numel(const hop_meta *m, hop_shape_env *env)
{
    if (check_meta(m, env, "hop_meta_numel") != HOP_OK)
        return NULL;
    const hop_expr *acc = hop_sym_const(env, 1);
    for (int i = 0; i < m->rank && acc; i++)
        acc = hop_sym_mul(env, acc, m->sizes[i]);
    return acc;
}

bool
hop_meta_equal(const hop_meta *a, const hop_meta *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->sizes[i] != b->sizes[i]) /* interned: pointer equality is equality */
            return false;
    return true;
}

bool
hop_value_info_equal(const hop_value_info *a, const hop_value_info *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == HOP_VALUE_SYM)
        return a->sym == b->sym;
    if (a->kind != HOP_VALUE_TENSOR)
        return true;
    if (a->meta.dtype != b->meta.dtype || a->meta.rank != b->meta.rank)
        return false;
    for (int d = 0; d < a->meta.rank; d++)
        if (a->meta.sizes[d] != b->meta.sizes[d]) /* interned: pointer equality is equality */
            return false;
    return true;
}

hop_status
hop_value_info_decide_same(hop_shape_env *env, const hop_value_info *a, const hop_value_info *b,
                           const char *what, bool *same)
{
    *same = a->kind == b->kind;
    if (!*same || a->kind != HOP_VALUE_TENSOR)
        return HOP_OK;
    *same = a->meta.dtype == b->meta.dtype && a->meta.rank == b->meta.rank;
    size_t before = hop_shape_env_nguards(env);
    for (int d = 0; *same && d < a->meta.rank; d++) {
        if (a->meta.sizes[d] == b->meta.sizes[d])
            continue;
        hop_status st = hop_shape_env_decide_eq(env, a->meta.sizes[d], b->meta.sizes[d], what, same);
        if (st != HOP_OK) {
            hop_shape_env_truncate_guards(env, before);
            return st;
        }
    }
    return HOP_OK;
}

/* ------------------------------------------------------ the meta printer */

size_t
hop_dims_print(hop_dtype dt, int rank, hop_dim_print_fn dim, const void *ctx, char *buf, size_t cap)
{
    char small[64];
    size_t len = 0;
    /* Appends text, keeping the snprintf contract: count everything, write
     * what fits. */
#define META_PUT(text, n)                                                                          \
    do {                                                                                           \
        size_t n_ = (n);                                                                           \
        if (len + 1 < cap) {                                                                       \
            size_t room_ = cap - 1 - len;                                                          \
            memcpy(buf + len, (text), n_ < room_ ? n_ : room_);                                    \
        }                                                                                          \
        len += n_;                                                                                 \
    } while (0)
    if (dt != HOP_DTYPE_COUNT) {
        const char *name = hop_dtype_name(dt);
        META_PUT(name, strlen(name));
    }
    META_PUT("[", 1);
    for (int i = 0; i < rank; i++) {
        if (i > 0)
            META_PUT(", ", 2);
        size_t n = dim(ctx, i, small, sizeof small);
        if (n < sizeof small) {
            META_PUT(small, n);
        } else {
            /* Too long for the scratch buffer: print into place. */
            if (len + 1 < cap)
                dim(ctx, i, buf + len, cap - len);
            len += n;
        }
    }
    META_PUT("]", 1);
#undef META_PUT
    if (cap > 0)
        buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

static size_t
expr_dim(const void *sizes, int d, char *buf, size_t cap)
{
    return hop_expr_print(((const hop_expr *const *)sizes)[d], buf, cap);
}

static size_t
int_dim(const void *sizes, int d, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%" PRId64, ((const int64_t *)sizes)[d]);
    return n < 0 ? 0 : (size_t)n;
}

size_t
hop_meta_print(const hop_meta *m, char *buf, size_t cap)
{
    if (m == NULL) {
        int n = snprintf(buf, cap, "NULL");
        return n < 0 ? 0 : (size_t)n;
    }
    return hop_exprs_print(m->dtype, m->rank < HOP_MAX_RANK ? m->rank : HOP_MAX_RANK, m->sizes, buf,
                           cap);
}

size_t
hop_exprs_print(hop_dtype dt, int rank, const hop_expr *const *sizes, char *buf, size_t cap)
{
    return hop_dims_print(dt, rank, expr_dim, sizes, buf, cap);
}

size_t
hop_sizes_print(hop_dtype dt, int rank, const int64_t *sizes, char *buf, size_t cap)
{
    return hop_dims_print(dt, rank, int_dim, sizes, buf, cap);
}

size_t
hop_value_info_print(const hop_value_info *v, char *buf, size_t cap)
{
    int n;
    if (v && v->kind == HOP_VALUE_TENSOR)
        return hop_meta_print(&v->meta, buf, cap);
    if (v && v->kind == HOP_VALUE_SYM && v->sym) {
        char e[96];
        hop_expr_print(v->sym, e, sizeof e);
        n = snprintf(buf, cap, "Sym(%s)", e);
    } else {
        n = snprintf(buf, cap, v && v->kind == HOP_VALUE_SYM ? "Sym(int)" : "nothing");
    }
    return n < 0 ? 0 : (size_t)n;
}

/* Whether every size of m is a constant and their product is 1. */
static bool
one_element(const hop_meta *m)
{
    int64_t numel = 1, k;
    for (int d = 0; d < m->rank; d++)
        if (!hop_expr_const_value(m->sizes[d], &k) || (numel *= k) != 1)
            return false;
    return true;
}

bool
hop_value_info_is_bool_scalar(const hop_value_info *v)
{
    if (v == NULL)
        return false;
    if (v->kind == HOP_VALUE_SYM)
        return v->sym && hop_expr_is_bool(v->sym);
    return v->kind == HOP_VALUE_TENSOR && v->meta.dtype == HOP_BOOL && one_element(&v->meta);
}

bool
hop_value_info_is_int_scalar(const hop_value_info *v)
{
    if (v == NULL)
        return false;
    if (v->kind == HOP_VALUE_SYM)
        return v->sym == NULL || !hop_expr_is_bool(v->sym);
    return v->kind == HOP_VALUE_TENSOR && (v->meta.dtype == HOP_I64 || v->meta.dtype == HOP_I32) &&
           one_element(&v->meta);
}

bool
hop_value_info_compatible(const hop_value_info *a, const hop_value_info *b)
{
    if (a == NULL || b == NULL || a->kind != b->kind)
        return false;
    if (a->kind == HOP_VALUE_SYM)
        return a->sym == NULL || b->sym == NULL ||
               hop_expr_is_bool(a->sym) == hop_expr_is_bool(b->sym);
    if (a->kind != HOP_VALUE_TENSOR)
        return true;
    if (a->meta.dtype != b->meta.dtype || a->meta.rank != b->meta.rank)
        return false;
    for (int d = 0; d < a->meta.rank; d++) {
        int64_t x, y;
        if (a->meta.sizes[d] != b->meta.sizes[d] && hop_expr_const_value(a->meta.sizes[d], &x) &&
            hop_expr_const_value(b->meta.sizes[d], &y) && x != y)
            return false;
    }
    return true;
}

hop_value_info
hop_value_info_drop_dim(const hop_value_info *v, int d)
{
    hop_value_info out = *v;
    if (v->kind != HOP_VALUE_TENSOR || d < 0 || d >= v->meta.rank)
        return (hop_value_info){.kind = HOP_VALUE_NONE};
    memmove(out.meta.sizes + d, out.meta.sizes + d + 1,
            (size_t)(out.meta.rank - d - 1) * sizeof *out.meta.sizes);
    out.meta.rank--;
    out.meta.sizes[out.meta.rank] = NULL;
    return out;
}

hop_value_info
hop_value_info_insert_dim(const hop_value_info *v, int d, const hop_expr *size)
{
    hop_value_info out = *v;
    if (v->kind != HOP_VALUE_TENSOR || d < 0 || d > v->meta.rank || v->meta.rank >= HOP_MAX_RANK)
        return (hop_value_info){.kind = HOP_VALUE_NONE};
    memmove(out.meta.sizes + d + 1, out.meta.sizes + d,
            (size_t)(out.meta.rank - d) * sizeof *out.meta.sizes);
    out.meta.sizes[d] = size;
    out.meta.rank++;
    return out;
}
