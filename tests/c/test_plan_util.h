/*
 * tests/c/test_plan_util.h - what the plan tests (test_lowering,
 * test_parallel_map, test_rebase) share: recording ops in a tracer,
 * deterministic random tensors, and comparing a plan's result with the
 * reference interpreter's.  Include after cmocka.h.
 */
#ifndef HOP_TEST_PLAN_UTIL_H
#define HOP_TEST_PLAN_UTIL_H

#include "hop.h"
#include "hop/lowering.h"
#include "hop/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N hop_arg_node
#define LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OP(t, op, ...)                                                                             \
    hop_tracer_call_op((t), (op), (hop_arg[]){__VA_ARGS__},                                        \
                       sizeof((hop_arg[]){__VA_ARGS__}) / sizeof(hop_arg))

static uint64_t rng = 88172645463325252ull;

/* xorshift64: the same inputs on every run, in [-1, 1). */
static inline double
uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Floats in [-4, 4); integers in [-12, 12); bools about half true. */
static inline hop_tensor *
rand_tensor(hop_dtype dt, int rank, const int64_t *sizes)
{
    hop_tensor *t = hop_tensor_empty(dt, rank, sizes);
    assert_non_null(t);
    int64_t n = hop_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = uniform() * 4;
        switch (dt) {
        case HOP_F32:
            ((float *)t->data)[i] = (float)v;
            break;
        case HOP_F64:
            ((double *)t->data)[i] = v;
            break;
        case HOP_I32:
            ((int32_t *)t->data)[i] = (int32_t)(v * 3);
            break;
        case HOP_I64:
            ((int64_t *)t->data)[i] = (int64_t)(v * 3);
            break;
        case HOP_BOOL:
            ((uint8_t *)t->data)[i] = v > 0;
            break;
        default:
            break;
        }
    }
    return t;
}

static inline void
assert_geometry_equal(const hop_tensor *a, const hop_tensor *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int d = 0; d < a->rank; d++)
        assert_int_equal(a->sizes[d], b->sizes[d]);
}

/* Exact equality (a plan runs the same vector functions as hop_eager),
 * elementwise over any strides; a float nan equals a nan of any bits. */
static inline void
assert_same(const hop_tensor *a, const hop_tensor *b)
{
    assert_geometry_equal(a, b);
    int64_t n = hop_tensor_numel(a);
    size_t es = hop_dtype_size(a->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t oa = 0, ob = 0, rest = i;
        for (int d = a->rank - 1; d >= 0; d--) {
            int64_t k = rest % a->sizes[d];
            rest /= a->sizes[d];
            oa += k * a->strides[d];
            ob += k * b->strides[d];
        }
        const char *pa = (const char *)a->data + oa * (int64_t)es;
        const char *pb = (const char *)b->data + ob * (int64_t)es;
        if (memcmp(pa, pb, es) != 0) {
            double x = a->dtype == HOP_F32   ? *(const float *)pa
                       : a->dtype == HOP_F64 ? *(const double *)pa
                                             : 0;
            double y = b->dtype == HOP_F32   ? *(const float *)pb
                       : b->dtype == HOP_F64 ? *(const double *)pb
                                             : 0;
            if (!(x != x && y != y)) {
                fprintf(stderr, "element %lld differs: %.9g vs %.9g\n", (long long)i, x, y);
                fail();
            }
        }
    }
}

/* Bit-for-bit equality of the elements, nans included. */
static inline void
assert_identical(const hop_tensor *a, const hop_tensor *b)
{
    assert_geometry_equal(a, b);
    hop_tensor *ca = hop_tensor_contiguous((hop_tensor *)a);
    hop_tensor *cb = hop_tensor_contiguous((hop_tensor *)b);
    assert_non_null(ca);
    assert_non_null(cb);
    assert_memory_equal(ca->data, cb->data, (size_t)hop_tensor_numel(a) * hop_dtype_size(a->dtype));
    hop_tensor_release(ca);
    hop_tensor_release(cb);
}

static inline void
release_all(hop_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hop_tensor_release(ts[i]);
}

/* A saved program's length and CRC written for its bytes as they are, so
 * that a mutation reaches the parser (a hostile file, not an accident:
 * test_saved.c, test_check.c). */
static inline void
fix_checksum(unsigned char *p, size_t size)
{
    if (size < 28)
        return;
    uint64_t len = size - 28;
    for (int k = 0; k < 8; k++)
        p[16 + k] = (unsigned char)(len >> (8 * k));
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size - 4; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
    }
    crc ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; k++)
        p[size - 4 + k] = (unsigned char)(crc >> (8 * k));
}

#endif /* HOP_TEST_PLAN_UTIL_H */
