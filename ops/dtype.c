/*
 * ops/dtype.c - the dtype table (names, sizes, kinds) and promotion.
 *
 * Everything comes from HOP_DTYPE_LIST, whose order is the promotion order.
 */
#include "core/core.h"
#include "hop/ops.h"

typedef struct dtype_info {
    const char *name;
    size_t size;
    int kind; /* 0 bool, 1 integer, 2 float */
} dtype_info;

static const dtype_info dtype_table[] = {
#define HOP__DTYPE_ROW(e, name, ctype, size, kind) {name, size, kind},
    HOP_DTYPE_LIST(HOP__DTYPE_ROW)
#undef HOP__DTYPE_ROW
};
_Static_assert(HOP__ARRAY_LEN(dtype_table) == HOP_DTYPE_COUNT, "dtype table and enum disagree");

/* Long spellings accepted by hop_dtype_from_name, as NumPy and PyTorch name them. */
static const struct {
    const char *alias;
    hop_dtype dtype;
} dtype_aliases[] = {
    {"float32", HOP_F32}, {"float", HOP_F32}, {"float64", HOP_F64},
    {"double", HOP_F64},  {"int32", HOP_I32}, {"int", HOP_I32},
    {"int64", HOP_I64},   {"long", HOP_I64},  {"bool_", HOP_BOOL},
};

static bool
valid(hop_dtype d)
{
    return (unsigned)d < HOP_DTYPE_COUNT;
}

const char *
hop_dtype_name(hop_dtype d)
{
    return valid(d) ? dtype_table[d].name : "?";
}

size_t
hop_dtype_size(hop_dtype d)
{
    return valid(d) ? dtype_table[d].size : 0;
}

bool
hop_dtype_is_float(hop_dtype d)
{
    return valid(d) && dtype_table[d].kind == 2;
}

bool
hop_dtype_is_int(hop_dtype d)
{
    return valid(d) && dtype_table[d].kind == 1;
}

hop_status
hop_dtype_from_name(const char *name, hop_dtype *out)
{
    if (name == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_dtype_from_name: %s is NULL", name ? "out" : "name");
    for (int d = 0; d < HOP_DTYPE_COUNT; d++) {
        if (strcmp(name, dtype_table[d].name) == 0) {
            *out = (hop_dtype)d;
            return HOP_OK;
        }
    }
    for (size_t i = 0; i < HOP__ARRAY_LEN(dtype_aliases); i++) {
        if (strcmp(name, dtype_aliases[i].alias) == 0) {
            *out = dtype_aliases[i].dtype;
            return HOP_OK;
        }
    }
    return hop_error(HOP_INVALID, "unknown dtype '%s' (expected bool, i32, i64, f32 or f64)", name);
}

hop_dtype
hop_dtype_promote(hop_dtype a, hop_dtype b)
{
    /* An invalid operand wins, so that a caller checking the result with
     * hop_dtype_name sees "?" rather than a silently valid dtype. */
    if (!valid(a))
        return a;
    if (!valid(b))
        return b;
    return a > b ? a : b;
}
