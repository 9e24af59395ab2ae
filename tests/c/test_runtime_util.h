/*
 * tests/c/test_runtime_util.h - helpers shared by the runtime tests: making
 * tensors from literals, running eager ops with a readable failure, and
 * reading elements back in C order whatever the strides.
 */
#ifndef HOP_TEST_RUNTIME_UTIL_H
#define HOP_TEST_RUNTIME_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/runtime.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define SIZES(...) ((const int64_t[]){__VA_ARGS__})

/* A tensor of dtype from double values (converted as C does). */
static inline hop_tensor *
make(hop_dtype dt, int rank, const int64_t *sizes, const double *vals)
{
    hop_tensor *t = hop_tensor_empty(dt, rank, sizes);
    assert_non_null(t);
    int64_t n = hop_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = vals[i];
        switch (dt) {
        case HOP_BOOL:
            ((uint8_t *)t->data)[i] = v != 0;
            break;
        case HOP_I8:
            ((int8_t *)t->data)[i] = (int8_t)v;
            break;
        case HOP_U8:
            ((uint8_t *)t->data)[i] = (uint8_t)v;
            break;
        case HOP_I16:
            ((int16_t *)t->data)[i] = (int16_t)v;
            break;
        case HOP_U64:
            ((uint64_t *)t->data)[i] = (uint64_t)v;
            break;
        case HOP_U16:
            ((uint16_t *)t->data)[i] = (uint16_t)v;
            break;
        case HOP_U32:
            ((uint32_t *)t->data)[i] = (uint32_t)v;
            break;
        case HOP_F16:
            ((uint16_t *)t->data)[i] = hop_f16_from_double(v);
            break;
        case HOP_I32:
            ((int32_t *)t->data)[i] = (int32_t)v;
            break;
        case HOP_I64:
            ((int64_t *)t->data)[i] = (int64_t)v;
            break;
        case HOP_F32:
            ((float *)t->data)[i] = (float)v;
            break;
        default:
            ((double *)t->data)[i] = v;
            break;
        }
    }
    return t;
}

/* Element lin (C order over the sizes) as double. */
static inline double
elem(const hop_tensor *t, int64_t lin)
{
    int64_t off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        off += (lin % t->sizes[d]) * t->strides[d];
        lin /= t->sizes[d];
    }
    const char *p = (const char *)t->data + off * (int64_t)hop_dtype_size(t->dtype);
    switch (t->dtype) {
    case HOP_BOOL:
        return *(const uint8_t *)p;
    case HOP_I8:
        return *(const int8_t *)p;
    case HOP_U8:
        return *(const uint8_t *)p;
    case HOP_I16:
        return *(const int16_t *)p;
    case HOP_U64:
        return (double)*(const uint64_t *)p;
    case HOP_U16:
        return *(const uint16_t *)p;
    case HOP_U32:
        return *(const uint32_t *)p;
    case HOP_F16:
        return hop_f16_to_float(*(const uint16_t *)p);
    case HOP_I32:
        return *(const int32_t *)p;
    case HOP_I64:
        return (double)*(const int64_t *)p;
    case HOP_F32:
        return *(const float *)p;
    default:
        return *(const double *)p;
    }
}

/* Fails with the error message when the op fails. */
static inline hop_tensor *
run_op(hop_op op, const hop_rt_arg *args, size_t n)
{
    hop_tensor *t = hop_eager_tensor(op, args, n);
    if (t == NULL)
        fail_msg("%s failed: %s: %s", hop_op_get(op)->name, hop_status_name(hop_error_code()),
                 hop_error_message());
    return t;
}

#define OP(op, ...)                                                                                \
    run_op(HOP_OP_##op, (const hop_rt_arg[]){__VA_ARGS__}, N_(((const hop_rt_arg[]){__VA_ARGS__})))
#define TA(t) hop_rt_tensor(t)
#define IA(v) hop_rt_int(v)
#define FA(v) hop_rt_float(v)
#define BA(v) hop_rt_bool(v)
#define DA(v) hop_rt_dtype(v)
#define NA() hop_rt_none()

/* The op must fail with code and (when msg is not NULL) exactly msg. */
#define EXPECT_FAIL(code, msg, op, ...)                                                            \
    do {                                                                                           \
        const hop_rt_arg a_[] = {__VA_ARGS__};                                                     \
        hop_rt_value v_;                                                                           \
        assert_int_equal(hop_eager(HOP_OP_##op, a_, N_(a_), &v_), code);                           \
        assert_int_equal(hop_error_code(), code);                                                  \
        assert_null(v_.tensor);                                                                    \
        if ((const char *)(msg) != NULL)                                                           \
            assert_string_equal(hop_error_message(), msg);                                         \
    } while (0)

static inline void
check_meta(const hop_tensor *t, hop_dtype dt, int rank, const int64_t *sizes)
{
    char buf[160], want[160];
    hop_tensor_print_meta(t, buf, sizeof buf);
    int len = snprintf(want, sizeof want, "%s[", hop_dtype_name(dt));
    for (int i = 0; i < rank; i++)
        len += snprintf(want + len, sizeof want - (size_t)len, "%s%lld", i ? ", " : "",
                        (long long)sizes[i]);
    snprintf(want + len, sizeof want - (size_t)len, "]");
    assert_string_equal(buf, want);
}

/* Exact comparison of every element (nan matches nan). */
static inline void
check_values(const hop_tensor *t, const double *want, int64_t n)
{
    assert_int_equal(hop_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        double got = elem(t, i);
        if (isnan(want[i]) && isnan(got))
            continue;
        if (got != want[i])
            fail_msg("element %lld: got %.17g, want %.17g", (long long)i, got, want[i]);
    }
}

/* Relative comparison for transcendental results (SLEEF u10 vs libm). */
static inline void
check_close(const hop_tensor *t, const double *want, int64_t n, double rtol)
{
    assert_int_equal(hop_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        double got = elem(t, i);
        if (isnan(want[i]) && isnan(got))
            continue;
        if (isinf(want[i]) && got == want[i])
            continue;
        double err = fabs(got - want[i]), scale = fabs(want[i]) > 1e-30 ? fabs(want[i]) : 1e-30;
        if (!(err <= rtol * scale || err <= 1e-37))
            fail_msg("element %lld: got %.17g, want %.17g (rtol %g)", (long long)i, got, want[i],
                     rtol);
    }
}

#define CHECK(t, dt, shape, ...)                                                                   \
    do {                                                                                           \
        const int64_t s_[] = {0, HOP__UNPACK shape};                                               \
        const double w_[] = {__VA_ARGS__};                                                         \
        check_meta(t, dt, (int)N_(s_) - 1, s_ + 1);                                                \
        check_values(t, w_, (int64_t)N_(w_));                                                      \
    } while (0)
#define HOP__UNPACK(...) __VA_ARGS__

#endif
