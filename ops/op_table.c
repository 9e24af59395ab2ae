/*
 * ops/op_table.c - the op table: one row per op of HOP_OP_LIST (name, operand
 * count, shape rule, kernel family, complex, cost) and lookup by enum value or by name.
 *
 * The table is generated from the X-macro so that the enum, the names and the
 * rules can never drift apart; shape inference itself lives in infer*.c.
 */
#include "core/core.h"
#include "hop/ops.h"

static const hop_op_info op_table[] = {
#define HOP__OP_COMPLEX_C true
#define HOP__OP_COMPLEX_R false
#define HOP__OP_ROW(name, nargs, rule, family, complex, cost)                                      \
    {#name, nargs, HOP_RULE_##rule, HOP_KF_##family, HOP__OP_COMPLEX_##complex, cost},
    HOP_OP_LIST(HOP__OP_ROW)
#undef HOP__OP_ROW
#undef HOP__OP_COMPLEX_C
#undef HOP__OP_COMPLEX_R
};
_Static_assert(HOP__ARRAY_LEN(op_table) == HOP_OP_COUNT, "op table and enum disagree");

const hop_op_info *
hop_op_get(hop_op op)
{
    if ((unsigned)op >= HOP_OP_COUNT)
        return NULL;
    return &op_table[op];
}

/* A linear scan: the table is small and lookups happen once per traced call
 * from Python, never in a kernel loop. */
hop_status
hop_op_from_name(const char *name, hop_op *out)
{
    if (name == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_op_from_name: NULL %s", name == NULL ? "name" : "out");
    for (size_t i = 0; i < HOP_OP_COUNT; i++) {
        if (strcmp(op_table[i].name, name) == 0) {
            *out = (hop_op)i;
            return HOP_OK;
        }
    }
    return hop_error(HOP_NOT_FOUND, "hop_op_from_name: no op named '%s'", name);
}

hop_op
hop_put_combine_op(int64_t code)
{
    static const hop_op ops[] = {HOP_OP_COUNT, /* SET */
#define HOP__PUT_OP(code, op) HOP_OP_##op,
                                 HOP_PUT_COMBINE_LIST(HOP__PUT_OP)
#undef HOP__PUT_OP
    };
    _Static_assert(HOP__ARRAY_LEN(ops) == HOP_PUT_COMBINE_COUNT, "one op per put combine code");
    return code >= 0 && code < HOP_PUT_COMBINE_COUNT ? ops[code] : HOP_OP_COUNT;
}

bool
hop_op_checks_values(hop_op op)
{
    switch (op) {
    case HOP_OP_fail_if:
    case HOP_OP_take:
    case HOP_OP_put:
    case HOP_OP_linalg_solve:
    case HOP_OP_linalg_inv:
    case HOP_OP_linalg_cholesky:
    case HOP_OP_linalg_svd:
    case HOP_OP_linalg_svdvals:
    case HOP_OP_linalg_eigh:
    case HOP_OP_linalg_eigvalsh:
    case HOP_OP_linalg_eig:
    case HOP_OP_linalg_lstsq:
        return true;
    default:
        return false;
    }
}

const char *
hop_check_kind_message(int64_t kind)
{
    static const char *const msgs[] = {
#define HOP__CHECK_MSG(code, what, msg) msg,
        HOP_CHECK_KIND_LIST(HOP__CHECK_MSG)
#undef HOP__CHECK_MSG
    };
    return kind >= 0 && kind < HOP_CHECK_KIND_COUNT ? msgs[kind] : NULL;
}

const char *
hop_check_kind_name(int64_t kind)
{
    static const char *const names[] = {
#define HOP__CHECK_NAME(code, what, msg) #code,
        HOP_CHECK_KIND_LIST(HOP__CHECK_NAME)
#undef HOP__CHECK_NAME
    };
    return kind >= 0 && kind < HOP_CHECK_KIND_COUNT ? names[kind] : NULL;
}

bool
hop_check_kind_is_effect(int64_t kind)
{
    static const bool effect[] = {
#define HOP__CHECK_EFFECT_VALUE false
#define HOP__CHECK_EFFECT_EFFECT true
#define HOP__CHECK_EFFECT(code, what, msg) HOP__CHECK_EFFECT_##what,
        HOP_CHECK_KIND_LIST(HOP__CHECK_EFFECT)
#undef HOP__CHECK_EFFECT
#undef HOP__CHECK_EFFECT_EFFECT
#undef HOP__CHECK_EFFECT_VALUE
    };
    return kind >= 0 && kind < HOP_CHECK_KIND_COUNT && effect[kind];
}
