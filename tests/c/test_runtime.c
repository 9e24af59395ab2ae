/*
 * tests/c/test_runtime.c - runtime tensors and the machinery around the
 * kernels: creation, wrapping external memory, views sharing storage,
 * reference counts, out= and prepared kernels, the thread pool, errors and
 * allocation failures.  The ops' values are in test_runtime_ops.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_runtime_util.h"
#include "hop/foreign.h"
#include "core/clock.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* ---------------------------------------------------------------- tensors */

/* hop_eager's shortcut for a float function of one dense f32 or f64 tensor
 * (np.sin(a) from Python) gives exactly what the general path (hop_eager_out:
 * shape inference + the engine) gives, bit for bit, and the same flags of
 * hop_fp_status, for a dense operand and its transposed view, at lengths
 * either side of the shortcut's bounds (f16 and more work than a piece worth
 * a thread take the general path). */
static void
test_eager_unary_shortcut_matches_the_general_path(void **state)
{
    (void)state;
    const hop_op ops[] = {
        HOP_OP_neg,    HOP_OP_abs,     HOP_OP_exp,     HOP_OP_log,     HOP_OP_sin,  HOP_OP_cos,
        HOP_OP_tanh,   HOP_OP_sqrt,    HOP_OP_expm1,   HOP_OP_log1p,   HOP_OP_log2, HOP_OP_log10,
        HOP_OP_exp2,   HOP_OP_tan,     HOP_OP_arctan,  HOP_OP_sinh,    HOP_OP_cosh, HOP_OP_arcsin,
        HOP_OP_arccos, HOP_OP_arcsinh, HOP_OP_arccosh, HOP_OP_arctanh, HOP_OP_cbrt};
    const hop_dtype dts[] = {HOP_F32, HOP_F64, HOP_F16};
    const int64_t lens[] = {1, 7, 16, 100, 4096, 5000};
    static double v[5000];
    for (int i = 0; i < 5000; i++)
        v[i] = (i % 37) * 0.37 - 6.5 + i * 1e-4; /* (negatives: NaN and the invalid flag) */
    for (size_t o = 0; o < N_(ops); o++)
        for (size_t d = 0; d < N_(dts); d++)
            for (size_t l = 0; l < N_(lens); l++) {
                hop_tensor *a = make(dts[d], 2, SIZES(1, lens[l]), v);
                hop_tensor *s = OP(transpose, TA(a), IA(0), IA(1));
                hop_tensor *in[] = {a, s};
                for (size_t k = 0; k < N_(in); k++) {
                    hop_rt_arg args[] = {TA(in[k])};
                    hop_fp_clear();
                    hop_tensor *got = run_op(ops[o], args, 1);
                    int got_fp = hop_fp_status();
                    hop_tensor *want = hop_tensor_empty(got->dtype, got->rank, got->sizes);
                    hop_fp_clear();
                    assert_int_equal(hop_eager_out(ops[o], args, 1, want), HOP_OK);
                    assert_int_equal(hop_fp_status(), got_fp);
                    assert_int_equal(got->dtype, dts[d]);
                    assert_memory_equal(got->data, want->data,
                                        (size_t)hop_tensor_numel(got) * hop_dtype_size(got->dtype));
                    hop_tensor_release(got);
                    hop_tensor_release(want);
                }
                hop_tensor_release(s);
                hop_tensor_release(a);
            }
    /* an allocation failure is HOP_NOMEM with nothing returned */
    hop_tensor *x = make(HOP_F64, 1, SIZES(3), v);
    long live = hop_alloc_live();
    hop_alloc_fail_at(1);
    EXPECT_FAIL(HOP_NOMEM, NULL, sin, TA(x));
    hop_alloc_fail_at(0);
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor_release(x);
}

/* hop_eager's shortcut for same-shape dense arithmetic must give exactly what
 * the general path (hop_eager_out, shape inference + the engine) gives, and
 * hand every other case to it. */
static void
test_eager_arithmetic_shortcut_matches_the_general_path(void **state)
{
    (void)state;
    const hop_op ops[] = {HOP_OP_add, HOP_OP_sub,     HOP_OP_mul,
                          HOP_OP_div, HOP_OP_maximum, HOP_OP_minimum};
    const hop_dtype dts[] = {HOP_F32, HOP_F64, HOP_I32, HOP_I64};
    double av[12], bv[12];
    for (int i = 0; i < 12; i++) {
        av[i] = i * 1.5 - 7;
        bv[i] = 5 - i * 0.75;
    }
    for (size_t o = 0; o < N_(ops); o++)
        for (size_t d = 0; d < N_(dts); d++) {
            if (ops[o] == HOP_OP_div && !hop_dtype_is_float(dts[d]))
                continue;
            hop_tensor *a = make(dts[d], 2, SIZES(3, 4), av), *b = make(dts[d], 2, SIZES(3, 4), bv);
            /* dense, a transposed (strided) operand, a broadcast operand */
            hop_tensor *at = OP(transpose, TA(a), IA(0), IA(1));
            hop_tensor *btv = OP(transpose, TA(b), IA(0), IA(1));
            hop_tensor *bt = hop_tensor_contiguous(btv);
            assert_non_null(bt);
            hop_tensor_release(btv);
            hop_tensor *row = make(dts[d], 1, SIZES(4), bv);
            const hop_tensor *pairs[][2] = {{a, b}, {at, bt}, {a, row}, {a, a}};
            for (size_t p = 0; p < N_(pairs); p++) {
                hop_rt_arg args[] = {TA((hop_tensor *)pairs[p][0]), TA((hop_tensor *)pairs[p][1])};
                hop_tensor *got = run_op(ops[o], args, 2);
                hop_tensor *want = hop_tensor_empty(got->dtype, got->rank, got->sizes);
                assert_int_equal(hop_eager_out(ops[o], args, 2, want), HOP_OK);
                assert_int_equal(got->dtype, dts[d]);
                assert_memory_equal(got->data, want->data,
                                    (size_t)hop_tensor_numel(got) * hop_dtype_size(got->dtype));
                hop_tensor_release(got);
                hop_tensor_release(want);
            }
            hop_tensor *ts[] = {a, b, at, bt, row};
            for (size_t i = 0; i < N_(ts); i++)
                hop_tensor_release(ts[i]);
        }
    /* Errors still come from the general path; an allocation failure is
     * HOP_NOMEM with nothing returned. */
    hop_tensor *x = make(HOP_F32, 1, SIZES(3), av), *y = make(HOP_F64, 1, SIZES(3), bv);
    hop_tensor *z = make(HOP_F32, 1, SIZES(4), bv);
    EXPECT_FAIL(HOP_SHAPE, "add: cannot broadcast f32[3] with f32[4]", add, TA(x), TA(z));
    hop_tensor *m = OP(add, TA(x), TA(y));
    assert_int_equal(m->dtype, HOP_F64);
    hop_tensor_release(m);
    long live = hop_alloc_live();
    hop_alloc_fail_at(1);
    EXPECT_FAIL(HOP_NOMEM, NULL, add, TA(x), TA(x));
    hop_alloc_fail_at(0);
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor *ts[] = {x, y, z};
    for (size_t i = 0; i < N_(ts); i++)
        hop_tensor_release(ts[i]);
}

/* hop_eager_quick: hop_eager's result where the shortcut applies (the
 * bits, dtype and sizes), false and nothing done elsewhere, and the
 * boundary of a costly op's size limit exactly the shortcut's. */
static void
test_eager_quick_gives_hop_eagers_result_or_declines(void **state)
{
    (void)state;
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i * 1.25 - 6;
    hop_tensor *a = make(HOP_F32, 2, SIZES(3, 4), v), *at = OP(transpose, TA(a), IA(0), IA(1));
    hop_tensor *row = make(HOP_F32, 1, SIZES(4), v), *d = make(HOP_F64, 2, SIZES(3, 4), v);
    hop_tensor *ia = make(HOP_I32, 2, SIZES(3, 4), v), *t;
    const struct {
        hop_op op;
        hop_tensor *a, *b;
    } yes[] = {{HOP_OP_add, a, a},
               {HOP_OP_div, d, d},
               {HOP_OP_maximum, ia, ia},
               {HOP_OP_neg, a, NULL},
               {HOP_OP_sin, d, NULL}},
      no[] = {{HOP_OP_add, at, at},   {HOP_OP_add, a, row},  {HOP_OP_add, a, d},
              {HOP_OP_div, ia, ia},   {HOP_OP_pow, a, a},    {HOP_OP_neg, ia, NULL},
              {HOP_OP_relu, a, NULL}, {HOP_OP_sum, a, NULL}, {HOP_OP_add, NULL, NULL}};
    for (size_t k = 0; k < N_(yes); k++) {
        hop_rt_arg args[] = {TA(yes[k].a), TA(yes[k].b)};
        hop_tensor *want = run_op(yes[k].op, args, yes[k].b != NULL ? 2 : 1);
        assert_true(hop_eager_quick(yes[k].op, yes[k].a, yes[k].b, &t));
        assert_non_null(t);
        check_meta(t, want->dtype, want->rank, want->sizes);
        assert_memory_equal(t->data, want->data, 12 * hop_dtype_size(want->dtype));
        hop_tensor_release(t);
        hop_tensor_release(want);
    }
    for (size_t k = 0; k < N_(no); k++) {
        t = a;
        assert_false(hop_eager_quick(no[k].op, no[k].a, no[k].b, &t));
        assert_null(t);
    }
    /* exp costs 8: 4095 elements are one piece's work (< HOP__GRAIN), 4096 not */
    hop_tensor *e1 = hop_tensor_zeros(HOP_F32, 1, SIZES(4095));
    hop_tensor *e2 = hop_tensor_zeros(HOP_F32, 1, SIZES(4096));
    assert_true(hop_eager_quick(HOP_OP_exp, e1, NULL, &t));
    assert_int_equal(t->sizes[0], 4095);
    assert_true(((float *)t->data)[4094] == 1.0f);
    hop_tensor_release(t);
    assert_false(hop_eager_quick(HOP_OP_exp, e2, NULL, &t));
    assert_true(hop_eager_quick(HOP_OP_add, e2, e2, &t));
    hop_tensor_release(t);
    /* a failed allocation: taken, NULL, HOP_NOMEM, nothing left allocated */
    long live = hop_alloc_live();
    hop_alloc_fail_at(1);
    assert_true(hop_eager_quick(HOP_OP_mul, a, a, &t));
    hop_alloc_fail_at(0);
    assert_null(t);
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor *ts[] = {a, at, row, d, ia, e1, e2};
    for (size_t k = 0; k < N_(ts); k++)
        hop_tensor_release(ts[k]);
}

/* hop_eager_quick_scalar: hop_eager's result, bit for bit, for a tensor and
 * an int or float scalar on either side (special values, ints wrapping into
 * i32 as the general path converts them), into spare's block when it holds
 * it; false and nothing done where the general path must decide. */
static void
test_eager_quick_scalar_gives_hop_eagers_result_or_declines(void **state)
{
    (void)state;
    double v[12] = {-6, -0.0, 0.5, 1e-310, 3.25, 1e9, -1e9, 7, 2147483647.0, -3, 1, 0};
    hop_tensor *f = make(HOP_F32, 2, SIZES(3, 4), v), *d = make(HOP_F64, 1, SIZES(12), v);
    hop_tensor *i = make(HOP_I32, 2, SIZES(3, 4), v), *l = make(HOP_I64, 1, SIZES(12), v);
    hop_tensor *z = make(HOP_F32, 0, NULL, v), *t;
    hop_tensor *tensors[] = {f, d, i, l, z};
    const hop_op ops[] = {HOP_OP_add, HOP_OP_sub,     HOP_OP_mul,
                          HOP_OP_div, HOP_OP_maximum, HOP_OP_minimum};
    const hop_rt_arg scalars[] = {FA(1.5), FA(-0.0), FA(1e300),        FA(NAN), FA(1e-45),
                                  IA(3),   IA(-7),   IA(2147483648LL), IA(0),   IA(1LL << 62)};
    int taken = 0;
    for (size_t k = 0; k < N_(tensors); k++)
        for (size_t o = 0; o < N_(ops); o++)
            for (size_t c = 0; c < N_(scalars); c++)
                for (int first = 0; first < 2; first++) {
                    hop_rt_arg args[2] = {TA(tensors[k]), scalars[c]};
                    if (first) {
                        args[0] = scalars[c];
                        args[1] = TA(tensors[k]);
                    }
                    hop_dtype dt = tensors[k]->dtype;
                    bool fl = dt == HOP_F32 || dt == HOP_F64;
                    bool expect = (fl || (ops[o] != HOP_OP_div && scalars[c].kind == HOP_OPND_INT));
                    t = tensors[k];
                    bool got =
                        hop_eager_quick_scalar(ops[o], tensors[k], &scalars[c], first, NULL, &t);
                    assert_int_equal(got, expect);
                    if (!got) {
                        assert_null(t);
                        continue;
                    }
                    taken++;
                    hop_tensor *want = run_op(ops[o], args, 2);
                    assert_non_null(t);
                    check_meta(t, want->dtype, want->rank, want->sizes);
                    assert_memory_equal(t->data, want->data,
                                        (size_t)hop_tensor_numel(t) * hop_dtype_size(t->dtype));
                    hop_tensor_release(t);
                    hop_tensor_release(want);
                }
    /* f32, f64, 0-d f32: every op, scalar and side; i32, i64: not div, int scalars */
    assert_int_equal(taken, 3 * 6 * 10 * 2 + 2 * 5 * 5 * 2);
    /* declined: a strided tensor, a bool scalar, f16, one piece's work */
    hop_tensor *ft = OP(transpose, TA(f), IA(0), IA(1));
    hop_tensor *h = make(HOP_F16, 1, SIZES(12), v),
               *big = hop_tensor_zeros(HOP_F32, 1, SIZES(4096));
    hop_rt_arg one = FA(1.0), yes = hop_rt_bool(true);
    assert_false(hop_eager_quick_scalar(HOP_OP_add, ft, &one, false, NULL, &t));
    assert_false(hop_eager_quick_scalar(HOP_OP_add, f, &yes, false, NULL, &t));
    assert_false(hop_eager_quick_scalar(HOP_OP_add, h, &one, false, NULL, &t));
    assert_false(hop_eager_quick_scalar(HOP_OP_exp, f, &one, false, NULL, &t));
    assert_false(hop_eager_quick_scalar(HOP_OP_pow, f, &one, false, NULL, &t));
    assert_true(hop_eager_quick_scalar(HOP_OP_add, big, &one, false, NULL, &t));
    assert_true(((float *)t->data)[4095] == 1.0f);
    hop_tensor_release(t);
    /* into a dead tensor's block: spare itself, rewritten */
    hop_tensor *spare = hop_tensor_empty(HOP_F64, 1, SIZES(6));
    hop_rt_arg two = FA(2.0), mf[] = {TA(f), two};
    hop_tensor *want = run_op(HOP_OP_mul, mf, 2);
    assert_true(hop_eager_quick_scalar(HOP_OP_mul, f, &two, false, spare, &t));
    assert_ptr_equal(t, spare);
    check_meta(t, HOP_F32, 2, SIZES(3, 4));
    assert_memory_equal(t->data, want->data, 48);
    hop_tensor_release(t);
    hop_tensor_release(want);
    /* a failed allocation: taken, NULL, HOP_NOMEM, nothing left allocated */
    long live = hop_alloc_live();
    hop_alloc_fail_at(1);
    assert_true(hop_eager_quick_scalar(HOP_OP_mul, f, &two, true, NULL, &t));
    hop_alloc_fail_at(0);
    assert_null(t);
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor *ts[] = {f, d, i, l, z, ft, h, big};
    for (size_t k = 0; k < N_(ts); k++)
        hop_tensor_release(ts[k]);
}

/* hop_eager_quick_spare: the result in spare's block when spare is
 * recyclable and the block holds it (spare itself, its geometry rewritten,
 * counted as an allocation, hop_alloc_live unchanged); else spare released
 * (a view's base, a second reference, wrapped memory: never written) and a
 * new result; spare untouched and still the caller's where the quick path
 * declines; a failed reuse releases it. */
static void
test_eager_quick_spare_reuses_a_recyclable_tensor_or_releases_it(void **state)
{
    (void)state;
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i * 1.25 - 6;
    hop_tensor *a = make(HOP_F32, 2, SIZES(3, 4), v), *d = make(HOP_F64, 1, SIZES(12), v), *t;
    hop_rt_arg aa[] = {TA(a), TA(a)}, dd[] = {TA(d), TA(d)};
    hop_tensor *want = run_op(HOP_OP_add, aa, 2), *want_d = run_op(HOP_OP_add, dd, 2);
    /* a dead f64[2, 6] (96 bytes) holds the f32[3, 4] sum */
    hop_tensor *spare = hop_tensor_empty(HOP_F64, 2, SIZES(2, 6));
    assert_true(hop_tensor_recyclable(spare));
    long live = hop_alloc_live(), count = hop_alloc_count();
    assert_true(hop_eager_quick_spare(HOP_OP_add, a, a, spare, &t));
    assert_ptr_equal(t, spare);
    check_meta(t, HOP_F32, 2, SIZES(3, 4));
    assert_true(t->strides[0] == 4 && t->strides[1] == 1 && t->offset == 0);
    assert_true(t->storage->nbytes == 48 && t->data == t->storage->data);
    assert_memory_equal(t->data, want->data, 48);
    assert_int_equal(hop_alloc_live(), live);
    assert_int_equal(hop_alloc_count(), count + 1);
    /* and again at another rank (the dims past it zero) */
    assert_true(hop_eager_quick_spare(HOP_OP_add, d, d, t, &t));
    check_meta(t, HOP_F64, 1, SIZES(12));
    assert_true(t->sizes[1] == 0 && t->strides[1] == 0 && t->storage->nbytes == 96);
    assert_memory_equal(t->data, want_d->data, 96);
    /* declined (pow): spare untouched, still the caller's */
    hop_tensor *u;
    assert_false(hop_eager_quick_spare(HOP_OP_pow, a, a, t, &u));
    assert_null(u);
    assert_int_equal(hop_tensor_refcount(t), 1);
    /* too small a block: released, a new result (maybe in the same block,
     * back from the thread's cache) */
    live = hop_alloc_live();
    hop_tensor *tiny = hop_tensor_empty(HOP_F32, 1, SIZES(1));
    assert_true(hop_eager_quick_spare(HOP_OP_add, d, d, tiny, &u));
    assert_int_equal(hop_alloc_live(), live + 1);
    check_meta(u, HOP_F64, 1, SIZES(12));
    assert_memory_equal(u->data, want_d->data, 96);
    hop_tensor_release(u);
    /* not recyclable: released, never written */
    hop_tensor *base = hop_tensor_zeros(HOP_F32, 1, SIZES(12));
    hop_tensor *view = hop_tensor_view(base, 1, SIZES(12), SIZES(1), 0);
    hop_tensor *twice = hop_tensor_retain(hop_tensor_zeros(HOP_F32, 1, SIZES(12)));
    static float ext[12];
    hop_tensor *wrapped = hop_tensor_wrap(HOP_F32, 1, SIZES(12), NULL, ext, sizeof ext, NULL, NULL);
    hop_tensor *big = hop_tensor_zeros(HOP_F32, 1, SIZES(4096)); /* 16 KiB: not a small block */
    hop_tensor *nots[] = {base, twice, wrapped, big};
    for (size_t k = 0; k < N_(nots); k++) {
        assert_false(hop_tensor_recyclable(nots[k]));
        hop_tensor *keep = hop_tensor_retain(nots[k]);
        if (nots[k] == twice)
            hop_tensor_release(keep); /* (the second reference is the one handed over) */
        assert_true(hop_eager_quick_spare(HOP_OP_add, a, a, nots[k], &u));
        assert_ptr_not_equal(u, nots[k]);
        assert_memory_equal(u->data, want->data, 48);
        hop_tensor_release(u);
        assert_int_equal(hop_tensor_refcount(nots[k]), 1);
        assert_true(((float *)nots[k]->data)[11] == 0.0f && nots[k]->sizes[0] != 3);
        if (nots[k] != twice)
            hop_tensor_release(keep);
    }
    assert_true(((float *)view->data)[0] == 0.0f);
    hop_tensor_release(view);
    hop_tensor_release(twice);
    assert_false(hop_tensor_recyclable(NULL));
    /* a failed reuse: taken, NULL, HOP_NOMEM, spare freed */
    live = hop_alloc_live();
    hop_alloc_fail_at(1);
    assert_true(hop_eager_quick_spare(HOP_OP_mul, a, a, t, &u));
    hop_alloc_fail_at(0);
    assert_null(u);
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_int_equal(hop_alloc_live(), live - 1);
    hop_tensor *ts[] = {a, d, want, want_d};
    for (size_t k = 0; k < N_(ts); k++)
        hop_tensor_release(ts[k]);
}

static void
test_new_tensor_is_contiguous_aligned_and_owned_once(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    hop_tensor *t = hop_tensor_empty(HOP_F32, 3, SIZES(2, 3, 4));
    assert_non_null(t);
    check_meta(t, HOP_F32, 3, SIZES(2, 3, 4));
    assert_int_equal(t->strides[0], 12);
    assert_int_equal(t->strides[1], 4);
    assert_int_equal(t->strides[2], 1);
    assert_int_equal(t->offset, 0);
    assert_int_equal((uintptr_t)t->data % 64, 0);
    assert_int_equal(hop_storage_nbytes(t->storage), 96);
    assert_int_equal(hop_tensor_refcount(t), 1);
    assert_true(hop_tensor_is_contiguous(t));
    assert_int_equal(hop_alloc_live(), live + 1); /* header, storage and data: one block */
    hop_tensor_release(t);
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_zeros_from_data_and_zero_dim_tensors(void **state)
{
    (void)state;
    hop_tensor *z = hop_tensor_zeros(HOP_I64, 2, SIZES(2, 2));
    CHECK(z, HOP_I64, (2, 2), 0, 0, 0, 0);
    const int32_t d[] = {7, -8, 9};
    hop_tensor *f = hop_tensor_from_data(HOP_I32, 1, SIZES(3), d);
    CHECK(f, HOP_I32, (3), 7, -8, 9);
    double v = 2.5;
    hop_tensor *s = hop_tensor_from_data(HOP_F64, 0, NULL, &v);
    CHECK(s, HOP_F64, (), 2.5);
    double got;
    assert_int_equal(hop_tensor_item_double(s, &got), HOP_OK);
    assert_true(got == 2.5);
    hop_tensor *e = hop_tensor_empty(HOP_F32, 2, SIZES(0, 5));
    assert_int_equal(hop_tensor_numel(e), 0);
    assert_int_equal(hop_storage_nbytes(e->storage), 0);
    hop_tensor_release(z);
    hop_tensor_release(f);
    hop_tensor_release(s);
    hop_tensor_release(e);
}

static void
test_tensor_creation_rejects_bad_shapes(void **state)
{
    (void)state;
    assert_null(hop_tensor_empty(HOP_F32, 2, SIZES(2, -1)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_tensor_empty: size -1 of dim 1 is negative in [2, -1]");
    assert_null(hop_tensor_empty(HOP_F32, 9, SIZES(1, 1, 1, 1, 1, 1, 1, 1, 1)));
    assert_string_equal(hop_error_message(), "hop_tensor_empty: rank 9 is outside [0, 8]");
    assert_null(hop_tensor_empty((hop_dtype)42, 0, NULL));
    assert_string_equal(hop_error_message(), "hop_tensor_empty: invalid dtype 42");
    assert_null(hop_tensor_empty(HOP_F64, 2, SIZES(INT64_MAX / 2, 4)));
    assert_int_equal(hop_error_code(), HOP_NOMEM);
    assert_string_equal(hop_error_message(),
                        "hop_tensor_empty: f64[4611686018427387903, 4] is too large");
}

static int released;
static void *released_data;

static void
count_release(void *ud, void *data)
{
    released += *(int *)ud;
    released_data = data;
}

static void
test_wrapped_memory_is_zero_copy_and_released_by_the_last_view(void **state)
{
    (void)state;
    hop_runtime_thread_cleanup();
    long live = hop_alloc_live();
    float buf[6] = {1, 2, 3, 4, 5, 6};
    int one = 1;
    released = 0;
    hop_tensor *t =
        hop_tensor_wrap(HOP_F32, 2, SIZES(2, 3), NULL, buf, sizeof buf, count_release, &one);
    assert_non_null(t);
    assert_ptr_equal(t->data, buf);
    hop_tensor *tt = OP(transpose, TA(t), IA(0), IA(1));
    assert_ptr_equal(tt->data, buf);
    buf[1] = 20; /* visible through both: no copy */
    CHECK(tt, HOP_F32, (3, 2), 1, 4, 20, 5, 3, 6);
    hop_tensor_release(t);
    assert_int_equal(released, 0);
    hop_tensor_release(tt);
    assert_int_equal(released, 1);
    assert_ptr_equal(released_data, buf);
    hop_runtime_thread_cleanup(); /* the thread's ShapeEnv */
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_wrap_checks_geometry_and_alignment_without_taking_the_memory(void **state)
{
    (void)state;
    double buf[4];
    int one = 1;
    released = 0;
    assert_null(
        hop_tensor_wrap(HOP_F64, 2, SIZES(2, 3), NULL, buf, sizeof buf, count_release, &one));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_tensor_wrap: f64[2, 3] with strides [3, 1] at offset 0 does not "
                        "fit in a storage of 32 bytes");
    assert_null(
        hop_tensor_wrap(HOP_F64, 1, SIZES(2), NULL, (char *)buf + 4, 16, count_release, &one));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_non_null(strstr(hop_error_message(), "is not aligned to the 8 bytes of f64"));
    assert_null(hop_tensor_wrap(HOP_F64, 1, SIZES(2), SIZES(-1), buf, sizeof buf, NULL, NULL));
    assert_string_equal(hop_error_message(), "hop_tensor_wrap: stride -1 of dim 0 is negative");
    assert_int_equal(released, 0);
    /* strided wrap: every other element */
    hop_tensor *t = hop_tensor_wrap(HOP_F64, 1, SIZES(2), SIZES(2), buf, sizeof buf, NULL, NULL);
    assert_non_null(t);
    buf[0] = 1;
    buf[2] = 3;
    CHECK(t, HOP_F64, (2), 1, 3);
    hop_tensor_release(t);
}

static void
test_views_share_storage_and_keep_it_alive(void **state)
{
    (void)state;
    hop_runtime_thread_cleanup();
    long live = hop_alloc_live();
    hop_tensor *x = make(HOP_I32, 2, SIZES(2, 3), (double[]){0, 1, 2, 3, 4, 5});
    hop_tensor *row = OP(select, TA(x), IA(0), IA(1));
    assert_true(hop_tensor_shares_storage(x, row));
    assert_int_equal(row->offset, 3);
    assert_int_equal(hop_tensor_refcount(x), 1); /* views hold the storage, not x */
    hop_tensor_release(x);                       /* row keeps the block alive */
    CHECK(row, HOP_I32, (3), 3, 4, 5);
    hop_tensor *r2 = hop_tensor_retain(row);
    assert_ptr_equal(r2, row);
    assert_int_equal(hop_tensor_refcount(row), 2);
    hop_tensor_release(r2);
    assert_int_equal(hop_tensor_refcount(row), 1);
    hop_tensor_release(row);
    hop_runtime_thread_cleanup();
    assert_int_equal(hop_alloc_live(), live);
    hop_tensor_release(NULL);
    assert_null(hop_tensor_retain(NULL));
}

static void
test_view_ops_give_the_strides_and_offsets_of_pytorch(void **state)
{
    (void)state;
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    hop_tensor *x = make(HOP_F32, 3, SIZES(2, 3, 4), v);

    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(-1));
    check_meta(t, HOP_F32, 3, SIZES(4, 3, 2));
    assert_int_equal(t->strides[0], 1);
    assert_int_equal(t->strides[2], 12);
    assert_true(elem(t, 1) == 12); /* t[0][0][1] = x[1][0][0] */
    assert_false(hop_tensor_is_contiguous(t));

    hop_tensor *p = OP(permute, TA(x), hop_rt_list((hop_rt_arg[]){IA(2), IA(0), IA(1)}, 3));
    check_meta(p, HOP_F32, 3, SIZES(4, 2, 3));
    assert_int_equal(p->strides[0], 1);
    assert_int_equal(p->strides[1], 12);
    assert_int_equal(p->strides[2], 4);

    hop_tensor *u = OP(unsqueeze, TA(x), IA(1));
    check_meta(u, HOP_F32, 4, SIZES(2, 1, 3, 4));
    assert_int_equal(u->strides[1], 12);
    hop_tensor *u2 = OP(unsqueeze, TA(x), IA(-1));
    check_meta(u2, HOP_F32, 4, SIZES(2, 3, 4, 1));
    assert_int_equal(u2->strides[3], 1);

    hop_tensor *sq = OP(squeeze, TA(u), NA());
    check_meta(sq, HOP_F32, 3, SIZES(2, 3, 4));
    assert_true(hop_tensor_is_contiguous(sq));
    hop_tensor *sq1 = OP(squeeze, TA(u), IA(0)); /* size 2: stays */
    check_meta(sq1, HOP_F32, 4, SIZES(2, 1, 3, 4));

    hop_tensor *sl = OP(slice, TA(x), IA(2), IA(-3), NA(), IA(2));
    check_meta(sl, HOP_F32, 3, SIZES(2, 3, 2));
    assert_int_equal(sl->offset, 1);
    assert_int_equal(sl->strides[2], 2);
    CHECK(sl, HOP_F32, (2, 3, 2), 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23);

    hop_tensor *sl0 = OP(slice, TA(x), IA(1), IA(5), IA(7), IA(1)); /* clamps to empty */
    check_meta(sl0, HOP_F32, 3, SIZES(2, 0, 4));

    hop_tensor *se = OP(select, TA(x), IA(1), IA(-1));
    CHECK(se, HOP_F32, (2, 4), 8, 9, 10, 11, 20, 21, 22, 23);
    assert_int_equal(se->offset, 8);

    hop_tensor *col = OP(slice, TA(x), IA(2), IA(0), IA(1), IA(1));
    hop_tensor *ex =
        OP(expand, TA(col), hop_rt_list((hop_rt_arg[]){IA(2), IA(-1), IA(-1), IA(3)}, 4));
    check_meta(ex, HOP_F32, 4, SIZES(2, 2, 3, 3));
    assert_int_equal(ex->strides[0], 0);
    assert_int_equal(ex->strides[3], 0);
    assert_true(elem(ex, 5) == 4); /* ex[0][0][1][2] = x[0][1][0] */

    hop_tensor *rs = OP(reshape, TA(x), hop_rt_list((hop_rt_arg[]){IA(6), IA(-1)}, 2));
    check_meta(rs, HOP_F32, 2, SIZES(6, 4));
    assert_true(hop_tensor_shares_storage(rs, x));
    /* a transposed tensor splits its last dim without a copy */
    hop_tensor *vv = OP(view, TA(t), hop_rt_list((hop_rt_arg[]){IA(2), IA(2), IA(3), IA(2)}, 4));
    assert_true(hop_tensor_shares_storage(vv, x));
    assert_int_equal(vv->strides[0], 2);
    assert_int_equal(vv->strides[1], 1);
    for (int64_t i = 0; i < 24; i++)
        assert_true(elem(vv, i) == elem(t, i));

    hop_tensor *all[] = {x, t, p, u, u2, sq, sq1, sl, sl0, se, col, ex, rs, vv};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_contiguity_is_c_or_fortran_order_and_ignores_size_one_dims(void **state)
{
    (void)state;
    double v[24] = {0};
    hop_tensor *x = make(HOP_F32, 3, SIZES(2, 3, 4), v);
    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(-1)); /* (4, 3, 2), strides (1, 4, 12) */
    hop_tensor *p = OP(permute, TA(x), hop_rt_list((hop_rt_arg[]){IA(2), IA(0), IA(1)}, 3));
    hop_tensor *row = OP(slice, TA(x), IA(0), IA(0), IA(1), IA(1)); /* (1, 3, 4) */
    hop_tensor *col = OP(transpose, TA(row), IA(0), IA(-1));        /* (4, 3, 1) */
    hop_tensor *sl = OP(slice, TA(x), IA(2), IA(0), NA(), IA(2));   /* every other: neither */
    hop_tensor *e = make(HOP_F32, 2, SIZES(0, 3), v);               /* empty: both */
    hop_tensor *one = make(HOP_F32, 1, SIZES(5), v);
    assert_true(hop_tensor_is_contiguous(x) && !hop_tensor_is_f_contiguous(x));
    assert_true(!hop_tensor_is_contiguous(t) && hop_tensor_is_f_contiguous(t));
    assert_true(!hop_tensor_is_contiguous(p) && !hop_tensor_is_f_contiguous(p));
    assert_true(hop_tensor_is_contiguous(row) && !hop_tensor_is_f_contiguous(row));
    assert_true(!hop_tensor_is_contiguous(col) && hop_tensor_is_f_contiguous(col));
    assert_true(!hop_tensor_is_contiguous(sl) && !hop_tensor_is_f_contiguous(sl));
    assert_true(hop_tensor_is_contiguous(e) && hop_tensor_is_f_contiguous(e));
    assert_true(hop_tensor_is_contiguous(one) && hop_tensor_is_f_contiguous(one));
    hop_tensor *all[] = {x, t, p, row, col, sl, e, one};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_view_ops_on_zero_dim_and_empty_tensors(void **state)
{
    (void)state;
    hop_tensor *s = make(HOP_F64, 0, NULL, (double[]){2.5});
    hop_tensor *u = OP(unsqueeze, TA(s), IA(0));
    CHECK(u, HOP_F64, (1), 2.5);
    hop_tensor *v = OP(view, TA(s), hop_rt_list((hop_rt_arg[]){IA(1), IA(1)}, 2));
    CHECK(v, HOP_F64, (1, 1), 2.5);
    hop_tensor *b = OP(squeeze, TA(v), NA());
    CHECK(b, HOP_F64, (), 2.5);
    hop_tensor *q = OP(squeeze, TA(s), IA(0));
    CHECK(q, HOP_F64, (), 2.5);
    hop_tensor *p = OP(permute, TA(s), hop_rt_list(NULL, 0));
    CHECK(p, HOP_F64, (), 2.5);
    hop_tensor *e = OP(expand, TA(s), hop_rt_list((hop_rt_arg[]){IA(2), IA(3)}, 2));
    CHECK(e, HOP_F64, (2, 3), 2.5, 2.5, 2.5, 2.5, 2.5, 2.5);
    hop_tensor *sel = OP(select, TA(u), IA(0), IA(-1));
    CHECK(sel, HOP_F64, (), 2.5);
    hop_tensor *z = hop_tensor_empty(HOP_I32, 2, SIZES(0, 3));
    hop_tensor *zr = OP(reshape, TA(z), hop_rt_list((hop_rt_arg[]){IA(3), IA(-1), IA(2)}, 3));
    check_meta(zr, HOP_I32, 3, SIZES(3, 0, 2));
    hop_tensor *zt = OP(transpose, TA(z), IA(0), IA(1));
    check_meta(zt, HOP_I32, 2, SIZES(3, 0));
    hop_tensor *zs = OP(slice, TA(z), IA(1), IA(3), NA(), IA(1));
    check_meta(zs, HOP_I32, 2, SIZES(0, 0));
    hop_tensor *all[] = {s, u, v, b, q, p, e, sel, z, zr, zt, zs};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_reshape_copies_when_strides_forbid_a_view_and_view_refuses(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_I64, 2, SIZES(2, 3), (double[]){0, 1, 2, 3, 4, 5});
    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(1));
    hop_rt_arg shape[] = {IA(6)};
    hop_tensor *r = OP(reshape, TA(t), hop_rt_list(shape, 1));
    assert_false(hop_tensor_shares_storage(r, x));
    CHECK(r, HOP_I64, (6), 0, 3, 1, 4, 2, 5);
    EXPECT_FAIL(HOP_SHAPE, "view: cannot view i64[3, 2] with strides [1, 3] as [6]; use reshape",
                view, TA(t), hop_rt_list(shape, 1));
    hop_view v;
    hop_rt_arg args[] = {TA(t), hop_rt_list(shape, 1)};
    assert_int_equal(hop_view_compute(HOP_OP_reshape, args, 2, &v), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "reshape: cannot view i64[3, 2] with strides [1, 3] as [6] without a copy");
    hop_tensor_release(x);
    hop_tensor_release(t);
    hop_tensor_release(r);
}

static void
test_view_compute_and_borrowed_headers_allocate_nothing(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 2, SIZES(3, 4), (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    hop_tensor_release(OP(add, TA(x), TA(x))); /* warm the thread's ShapeEnv */
    hop_rt_arg args[] = {TA(x), IA(1), IA(2)};
    hop_view v;
    assert_int_equal(hop_view_compute(HOP_OP_select, args, 3, &v), HOP_OK);
    long count = hop_alloc_count();
    assert_int_equal(hop_view_compute(HOP_OP_select, args, 3, &v), HOP_OK);
    hop_tensor h;
    assert_int_equal(hop_tensor_init_borrowed(&h, x, v.rank, v.sizes, v.strides, v.offset), HOP_OK);
    assert_int_equal(hop_alloc_count(), count);
    CHECK(&h, HOP_F32, (3), 2, 6, 10);
    assert_int_equal(hop_tensor_refcount(&h), 0);
    hop_tensor_release(&h); /* a no-op on a borrowed header */
    hop_tensor *c = OP(clone, TA(&h));
    CHECK(c, HOP_F32, (3), 2, 6, 10);
    assert_int_equal(hop_tensor_init_borrowed(&h, x, 1, SIZES(5), SIZES(3), 0), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_tensor_init_borrowed: f32[5] with strides [3] at offset 0 does not "
                        "fit in a storage of 48 bytes");
    assert_int_equal(hop_view_compute(HOP_OP_add, (hop_rt_arg[]){TA(x), TA(x)}, 2, &v),
                     HOP_INVALID);
    assert_string_equal(hop_error_message(), "add: not a view op");
    hop_tensor_release(c);
    hop_tensor_release(x);
}

static void
test_contiguous_returns_the_same_tensor_or_a_copy(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F64, 2, SIZES(2, 2), (double[]){1, 2, 3, 4});
    hop_tensor *same = hop_tensor_contiguous(x);
    assert_ptr_equal(same, x);
    assert_int_equal(hop_tensor_refcount(x), 2);
    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *c = hop_tensor_contiguous(t);
    assert_ptr_not_equal(c, t);
    assert_true(hop_tensor_is_contiguous(c));
    CHECK(c, HOP_F64, (2, 2), 1, 3, 2, 4);
    hop_tensor_release(same);
    hop_tensor_release(x);
    hop_tensor_release(t);
    hop_tensor_release(c);
}

/* ------------------------------------------------------------------ out= */

static void
test_eager_out_writes_into_a_strided_output_without_allocating(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F32, 2, SIZES(2, 3), (double[]){1, 2, 3, 4, 5, 6});
    hop_tensor *b = make(HOP_F32, 1, SIZES(3), (double[]){10, 20, 30});
    hop_tensor *buf = hop_tensor_zeros(HOP_F32, 2, SIZES(3, 2));
    hop_tensor *out = OP(transpose, TA(buf), IA(0), IA(1)); /* f32[2, 3], strides [1, 2] */
    hop_rt_arg args[] = {TA(a), TA(b)};
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, out), HOP_OK);
    long count = hop_alloc_count();
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, out), HOP_OK);
    assert_int_equal(hop_alloc_count(), count);
    CHECK(out, HOP_F32, (2, 3), 11, 22, 33, 14, 25, 36);
    CHECK(buf, HOP_F32, (3, 2), 11, 14, 22, 25, 33, 36);
    hop_tensor *all[] = {a, b, buf, out};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_eager_out_checks_dtype_shape_strides_and_overlap(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F32, 2, SIZES(2, 3), (double[]){1, 2, 3, 4, 5, 6});
    hop_tensor *small = hop_tensor_zeros(HOP_F32, 1, SIZES(3));
    hop_tensor *wrong = hop_tensor_zeros(HOP_F64, 2, SIZES(2, 3));
    hop_rt_arg args[] = {TA(a), TA(a)};
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, small), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "add: out is f32[3] but the result is f32[2, 3]");
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, wrong), HOP_DTYPE);
    assert_string_equal(hop_error_message(), "add: out is f64[2, 3] but the result is f32[2, 3]");
    hop_tensor *ex = OP(expand, TA(small), hop_rt_list((hop_rt_arg[]){IA(2), IA(3)}, 2));
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, ex), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "add: out f32[2, 3] has stride 0 in dim 0, so its elements would be "
                        "written more than once");
    /* in place is fine for elementwise ops ... */
    assert_int_equal(hop_eager_out(HOP_OP_add, args, 2, a), HOP_OK);
    CHECK(a, HOP_F32, (2, 3), 2, 4, 6, 8, 10, 12);
    /* ... but not for a transposed alias, nor for matmul */
    hop_tensor *sq = make(HOP_F32, 2, SIZES(2, 2), (double[]){1, 2, 3, 4});
    hop_tensor *sqt = OP(transpose, TA(sq), IA(0), IA(1));
    assert_int_equal(hop_eager_out(HOP_OP_neg, (hop_rt_arg[]){TA(sqt)}, 1, sq), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "neg: out f32[2, 2] overlaps argument 0 f32[2, 2]; only an elementwise "
                        "op may write into an input of the same geometry");
    assert_int_equal(hop_eager_out(HOP_OP_matmul, (hop_rt_arg[]){TA(sq), TA(sq)}, 2, sq),
                     HOP_INVALID);
    CHECK(sq, HOP_F32, (2, 2), 1, 2, 3, 4);
    hop_tensor *nz = hop_tensor_zeros(HOP_I64, 2, SIZES(1, 1));
    assert_int_equal(hop_eager_out(HOP_OP_nonzero, (hop_rt_arg[]){TA(sq)}, 1, nz), HOP_UNSUPPORTED);
    assert_string_equal(hop_error_message(),
                        "nonzero: has no out= form (its result depends on the data); use "
                        "hop_eager");
    hop_tensor *all[] = {a, small, wrong, ex, sq, sqt, nz};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_view_op_into_out_copies_the_view(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_I32, 2, SIZES(2, 3), (double[]){0, 1, 2, 3, 4, 5});
    hop_tensor *out = hop_tensor_zeros(HOP_I32, 2, SIZES(3, 2));
    assert_int_equal(hop_eager_out(HOP_OP_transpose, (hop_rt_arg[]){TA(x), IA(0), IA(1)}, 3, out),
                     HOP_OK);
    CHECK(out, HOP_I32, (3, 2), 0, 3, 1, 4, 2, 5);
    /* reshape of a non-viewable input copies in C order into out */
    hop_tensor *t = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *flat = hop_tensor_zeros(HOP_I32, 1, SIZES(6));
    hop_rt_arg shape[] = {IA(-1)};
    assert_int_equal(
        hop_eager_out(HOP_OP_reshape, (hop_rt_arg[]){TA(t), hop_rt_list(shape, 1)}, 2, flat),
        HOP_OK);
    CHECK(flat, HOP_I32, (6), 0, 3, 1, 4, 2, 5);
    hop_tensor *all[] = {x, out, t, flat};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* ------------------------------------------------------ prepared kernels */

static void
test_prepared_kernel_pieces_cover_the_op_exactly_once(void **state)
{
    (void)state;
    enum { R = 37, C = 53 };
    double *v = malloc(sizeof(double) * R * C);
    for (int i = 0; i < R * C; i++)
        v[i] = (i * 7919) % 1000 - 500;
    hop_tensor *x = make(HOP_F32, 2, SIZES(R, C), v);
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *ref = OP(mul, TA(xt), FA(0.5));
    hop_tensor *out = hop_tensor_empty(HOP_F32, 2, SIZES(C, R));
    hop_kernel k;
    hop_rt_arg args[] = {TA(xt), FA(0.5)};
    assert_int_equal(hop_kernel_prepare(&k, HOP_OP_mul, args, 2, out), HOP_OK);
    for (int nth = 1; nth <= 7; nth++) {
        memset(out->data, 0xff, sizeof(float) * R * C); /* nan everywhere */
        for (int ith = nth - 1; ith >= 0; ith--)        /* any order */
            hop_kernel_compute(&k, ith, nth);
        for (int64_t i = 0; i < R * C; i++)
            assert_true(elem(out, i) == elem(ref, i));
    }
    assert_int_equal(hop_kernel_tasks(&k, 4), 1); /* 2k elements: not worth a thread */
    hop_kernel copy;
    memcpy(&copy, &k, sizeof k); /* a plan may move its kernels */
    memset(out->data, 0, sizeof(float) * R * C);
    hop_kernel_run(&copy);
    assert_true(elem(out, 5) == elem(ref, 5));
    free(v);
    hop_tensor *all[] = {x, xt, ref, out};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

static void
test_prepare_reports_errors_like_eager(void **state)
{
    (void)state;
    hop_tensor *a = hop_tensor_zeros(HOP_F32, 2, SIZES(3, 4));
    hop_tensor *b = hop_tensor_zeros(HOP_F32, 1, SIZES(5));
    hop_kernel k;
    assert_int_equal(hop_kernel_prepare(&k, HOP_OP_add, (hop_rt_arg[]){TA(a), TA(b)}, 2, a),
                     HOP_SHAPE);
    assert_string_equal(hop_error_message(), "add: cannot broadcast f32[3, 4] with f32[5]");
    hop_tensor_release(a);
    hop_tensor_release(b);
}

/* ----------------------------------------------------------- thread pool */

/* The same large ops on 1 and 2 threads give the same bits, except matmul,
 * where BLAS may block a 500-row piece differently from the whole matrix
 * (seen under valgrind, which hides AVX-512 from OpenBLAS): the last bits
 * may differ there. */
static void
test_thread_pool_splits_large_kernels_with_identical_results(void **state)
{
    (void)state;
    enum { R = 1024, C = 1000 };
    double *v = malloc(sizeof(double) * R * C);
    for (int i = 0; i < R * C; i++)
        v[i] = ((i * 2654435761u) % 20000) / 1000.0 - 10;
    hop_tensor *x = make(HOP_F32, 2, SIZES(R, C), v);
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *row = OP(select, TA(x), IA(0), IA(3));
    /* Under valgrind (HOP_TEST_SCALE) the matmul's inner size is 32, not
     * 256: the same 1000 x 1000 result split over the threads, an eighth of
     * the products (that matmul was 25 of the test's 30 s there). */
    int64_t depth = getenv("HOP_TEST_SCALE") ? 32 : 256;
    hop_tensor *mm_a = OP(slice, TA(x), IA(0), IA(0), IA(depth), IA(1));
    hop_tensor *mm_b = OP(slice, TA(xt), IA(1), IA(0), IA(depth), IA(1));
    hop_tensor *res[2][5];
    int threads[2] = {1, 2};
    for (int r = 0; r < 2; r++) {
        hop_runtime_set_threads(threads[r]);
        assert_int_equal(hop_runtime_threads(), threads[r]);
        res[r][0] = OP(add, TA(x), TA(row)); /* broadcast, 1M elements */
        res[r][1] = OP(exp, TA(xt));         /* strided transcendental */
        res[r][2] = OP(sum, TA(x), IA(1), BA(false));
        res[r][3] = OP(matmul, TA(mm_b), TA(mm_a)); /* [1000, depth] x [depth, 1000] */
        res[r][4] = OP(gt, TA(xt), FA(0.0));
    }
    hop_kernel k;
    assert_int_equal(
        hop_kernel_prepare(&k, HOP_OP_add, (hop_rt_arg[]){TA(x), TA(row)}, 2, res[0][0]), HOP_OK);
    assert_int_equal(hop_kernel_tasks(&k, 2), 2);
    assert_int_equal(hop_kernel_tasks(&k, 1), 1);
    for (int i = 0; i < 5; i++) {
        int64_t n = hop_tensor_numel(res[0][i]);
        assert_int_equal(n, hop_tensor_numel(res[1][i]));
        if (i == 3) {
            for (int64_t j = 0; j < n; j++) {
                double p = elem(res[0][i], j), q = elem(res[1][i], j);
                if (fabs(p - q) > 5e-3 + 1e-5 * fabs(p)) /* sums of <= 256 products <= 100 */
                    fail_msg("matmul element %lld: %.9g with 1 thread, %.9g with 2", (long long)j,
                             p, q);
            }
        } else if (memcmp(res[0][i]->data, res[1][i]->data,
                          (size_t)n * hop_dtype_size(res[0][i]->dtype)) != 0) {
            fail_msg("result %d differs between 1 and 2 threads", i);
        }
    }
    assert_true(elem(res[1][0], 5 * C + 7) == (float)((float)v[5 * C + 7] + (float)v[3 * C + 7]));
    hop_runtime_set_threads(0);
    assert_true(hop_runtime_threads() >= 1);
    free(v);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 5; i++)
            hop_tensor_release(res[r][i]);
    hop_tensor *all[] = {x, xt, row, mm_a, mm_b};
    for (size_t i = 0; i < N_(all); i++)
        hop_tensor_release(all[i]);
}

/* A job of many pieces (hop__pool_run_pieces) covers its range exactly
 * once whichever way it runs: split over the caller and a worker, or whole
 * on the caller (fn(ctx, 0, 1)) when the pool is busy or did not speed up
 * the last jobs.  A spinning thread beside it keeps a core busy, so both
 * ways happen in 150 jobs on a 2-core machine. */
enum { PIECES_N = 20011 };

typedef struct pieces_job {
    unsigned char *hits;
    int64_t n;
} pieces_job;

static void
pieces_task(const void *ctx, int ith, int nth)
{
    const pieces_job *j = ctx;
    int64_t b, e;
    hop__split(j->n, ith, nth, 64, &b, &e);
    for (int64_t i = b; i < e; i++)
        j->hits[i]++;
}

static volatile int spinner_stop;

static void *
spinner(void *arg)
{
    (void)arg;
    while (!spinner_stop)
        ;
    return NULL;
}

static void
test_pool_pieces_cover_a_job_exactly_once_on_a_busy_machine(void **state)
{
    (void)state;
    pthread_t spin;
    spinner_stop = 0;
    assert_int_equal(pthread_create(&spin, NULL, spinner, NULL), 0);
    hop_runtime_set_threads(2);
    unsigned char *hits = calloc(PIECES_N, 1);
    assert_non_null(hits);
    pieces_job j = {hits, PIECES_N};
    for (int job = 0; job < 150; job++) {
        int pieces = 1 + job % 97;
        hop__pool_run_pieces(pieces_task, &j, pieces, PIECES_N, NULL, NULL);
        for (int64_t i = 0; i < PIECES_N; i++)
            if (hits[i] != 1)
                fail_msg("job %d of %d pieces: element %lld ran %d times", job, pieces,
                         (long long)i, hits[i]);
        memset(hits, 0, PIECES_N);
    }
    spinner_stop = 1;
    pthread_join(spin, NULL);
    hop_runtime_set_threads(0);
    free(hits);
}

/* The floating-point exceptions a job's pieces raise reach the caller's
 * hop_fp_status whichever thread ran them (a worker's IEEE flags are its
 * own: pool.c hands them to the job), and only those: a plain job leaves
 * the status clear.  A piece on another thread than the caller divides by
 * zero; the caller's pieces do not, so a set DIVIDE came from a worker. */
typedef struct {
    pthread_t caller;
    atomic_int on_workers;
    int raise;
} fp_job;

static void
fp_task(const void *ctx, int ith, int nth)
{
    (void)ith, (void)nth;
    fp_job *j = (fp_job *)ctx;
    struct timespec t = {0, 200000}; /* long enough for a worker to take pieces */
    nanosleep(&t, NULL);
    if (!pthread_equal(pthread_self(), j->caller)) {
        atomic_fetch_add(&j->on_workers, 1);
        volatile double one = 1.0, zero = j->raise ? 0.0 : 1.0;
        volatile double r = one / zero;
        (void)r;
    }
}

static void
fp_no_poll(const void *ctx)
{
    (void)ctx;
}

/* Whether this thread's IEEE flags record a division by zero: not under
 * valgrind, whose CPU emulation keeps no exception flags (its phase of
 * .ci/run would see hop_fp_status() stay 0 whatever the kernels raise). */
static bool
fp_flags_recorded(void)
{
    hop_fp_clear();
    volatile double one = 1.0, zero = 0.0, r = one / zero;
    (void)r;
    bool seen = hop_fp_status() & HOP_FP_DIVIDE;
    hop_fp_clear();
    return seen;
}

static void
test_fp_status_of_a_pool_job_includes_its_workers_flags(void **state)
{
    (void)state;
    if (!fp_flags_recorded())
        skip(); /* (valgrind: no IEEE flags to read) */
    hop_runtime_set_threads(2);
    for (int raise = 0; raise < 2; raise++) {
        fp_job j = {pthread_self(), 0, raise};
        hop_fp_clear();
        assert_int_equal(hop_fp_status(), 0);
        /* (polled: always on the pool, runtime.h) */
        hop__pool_run_pieces(fp_task, &j, 32, 0, fp_no_poll, NULL);
        if (atomic_load(&j.on_workers) == 0)
            skip(); /* no worker took a piece (a busy machine): nothing to see */
        assert_int_equal(hop_fp_status(), raise ? HOP_FP_DIVIDE : 0);
    }
    /* what the caller itself raises, and the integer kernels' notes */
    hop_fp_clear();
    volatile double big = 1e300, r = big * big;
    (void)r;
    hop__fp_note(HOP_FP_INVALID);
    assert_int_equal(hop_fp_status(), HOP_FP_OVERFLOW | HOP_FP_INVALID);
    hop_fp_clear();
    assert_int_equal(hop_fp_status(), 0);
    hop_runtime_set_threads(0);
}

/* A worker that saw a job but took its seat only after the job ended must
 * not take a seat of the next job: it used to, and that job then ran on the
 * caller alone (the cause of a flaky live-block count in
 * test_trust_runtime's Ctrl-C test: a worker frame that ran no row of the
 * first parallel run made its buffers in the second).  Job 1 ends while
 * the worker is held in the hook; job 2's piece 0 waits until piece 1 has
 * started on another thread. */
static atomic_int late_go, late_held, late_started;

static void
late_hook(void)
{
    if (atomic_exchange(&late_held, 1) == 0) /* the first job the worker sees */
        while (!atomic_load(&late_go))
            nanosleep(&(struct timespec){0, 100000}, NULL);
}

/* *ran: 0 job 1 (the caller runs both pieces), else piece 0 waits up to
 * 2 s for piece 1 to start on another thread and sets *ran to 2 when it
 * did, 1 when not. */
static void
late_task(const void *ctx, int ith, int nth)
{
    (void)nth;
    int *ran = (int *)ctx;
    if (ith == 1) {
        atomic_store(&late_started, 1);
        return;
    }
    if (*ran == 0)
        return;
    atomic_store(&late_go, 1);
    for (int i = 0; i < 20000 && !atomic_load(&late_started); i++)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    *ran = atomic_load(&late_started) ? 2 : 1;
}

static void
no_poll(const void *ctx)
{
    (void)ctx;
}

static void
test_pool_a_late_worker_joins_the_next_job(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    /* A job both threads ran: the worker is started and waits for the next
     * (polled jobs always take the pool). */
    atomic_store(&late_go, 0);
    atomic_store(&late_started, 0);
    int ran = 1;
    hop__pool_run_polled(late_task, &ran, 2, no_poll, NULL);
    assert_int_equal(ran, 2);
    atomic_store(&late_go, 0);
    atomic_store(&late_held, 0);
    __atomic_store_n(&hop__pool_seat_hook, late_hook, __ATOMIC_RELEASE);
    ran = 0;
    hop__pool_run_polled(late_task, &ran, 2, no_poll, NULL);
    for (int i = 0; i < 20000 && !atomic_load(&late_held); i++)
        nanosleep(&(struct timespec){0, 100000},
                  NULL); /* job 1 ended; the worker is held in the hook */
    assert_int_equal(atomic_load(&late_held), 1);
    atomic_store(&late_started, 0);
    ran = 1;
    hop__pool_run_polled(late_task, &ran, 2, no_poll, NULL);
    __atomic_store_n(&hop__pool_seat_hook, NULL, __ATOMIC_RELEASE);
    hop_runtime_set_threads(0);
    assert_int_equal(ran, 2);
}

/* A job in pieces (hop_runtime_parallel_pieces) on a busy machine: a
 * worker descheduled in the middle of its piece - here held there until
 * the caller is done - holds back that piece only, and the caller runs every
 * other piece itself.  (associative_scan's fix-up phase ran in two static
 * halves, hop_runtime_parallel_work's one piece per thread: the caller ran
 * its half and waited for the worker's.)  The first job of a kind takes the
 * pool, so this one is split. */
#define HELD_PIECES 16
typedef struct held_job {
    pthread_t caller;
    atomic_int caller_ran, worker_ran, worker_in, nth, runs[HELD_PIECES];
} held_job;

static void
wait_for(atomic_int *v, int at_least)
{
    for (int i = 0; i < 20000 && atomic_load(v) < at_least; i++)
        nanosleep(&(struct timespec){0, 100000}, NULL);
}

static void
held_piece(const void *ctx, int ith, int nth)
{
    held_job *j = (held_job *)ctx;
    atomic_store(&j->nth, nth);
    if (nth != HELD_PIECES)
        return;
    atomic_fetch_add(&j->runs[ith], 1);
    if (pthread_equal(pthread_self(), j->caller)) {
        wait_for(&j->worker_in, 1); /* the worker is in its piece */
        atomic_fetch_add(&j->caller_ran, 1);
    } else {
        atomic_store(&j->worker_in, 1);
        wait_for(&j->caller_ran, HELD_PIECES - 1); /* held until the caller is done */
        atomic_fetch_add(&j->worker_ran, 1);
    }
}

static void
test_pool_caller_runs_the_pieces_a_held_worker_has_not_started(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    held_job j = {.caller = pthread_self()};
    hop_runtime_parallel_pieces(held_piece, &j, HELD_PIECES, 1 << 22);
    hop_runtime_set_threads(0);
    assert_int_equal(atomic_load(&j.nth), HELD_PIECES);
    assert_int_equal(atomic_load(&j.caller_ran), HELD_PIECES - 1);
    assert_int_equal(atomic_load(&j.worker_ran), 1);
    for (int i = 0; i < HELD_PIECES; i++)
        assert_int_equal(atomic_load(&j.runs[i]), 1);
}

/* The pool times each kind of job (its function, the size of its work)
 * both ways and runs it the faster way, kind by kind: a job whose pieces
 * take 8 ms each takes half the wall time on two threads and stays on the
 * pool, while one whose worker pieces are slow (5 ms, 0.2 ms on the caller)
 * runs on the caller alone but for a rare try of the pool.  (One global
 * backoff judged by the caller's CPU time sent both kinds to the caller.)
 * The decisions are hop__pool_choose's and hop__pool_record's, as
 * hop__pool_run_pieces calls them, on a simulated clock: with real sleeps
 * (as before), a machine with a load of 16 on 2 cores ran the caller's and
 * the worker's sleeps late and the slow kind took the pool 14 times of 40
 * (18 in the one-fn-two-sizes test below), whatever the pool decided right. */
typedef struct timed_kind {
    hop__task_fn fn;
    int64_t work, alone_ns, split_ns; /* a job's wall time on the caller alone and split */
    int pooled;
} timed_kind;

static void
timed_a(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

static void
timed_b(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

/* 40 jobs of each kind, taking turns, on the simulated clock now. */
static void
run_kinds(timed_kind *kinds, int n, int64_t now)
{
    for (int i = 0; i < 40; i++)
        for (int k = 0; k < n; k++) {
            bool pool = hop__pool_choose(kinds[k].fn, NULL, kinds[k].work, now);
            int64_t ns = pool ? kinds[k].split_ns : kinds[k].alone_ns;
            now += ns;
            hop__pool_record(kinds[k].fn, NULL, kinds[k].work, pool, false, true, ns, now);
            kinds[k].pooled += pool;
        }
}

static void
count_piece(const void *ctx, int ith, int nth)
{
    int *seen = (int *)ctx; /* pieces run, the nth they were given */
    (void)ith;
    __atomic_fetch_add(&seen[0], 1, __ATOMIC_RELAXED);
    __atomic_store_n(&seen[1], nth, __ATOMIC_RELAXED);
}

static void
test_pool_runs_each_kind_of_job_the_faster_way(void **state)
{
    (void)state;
    timed_kind kinds[] = {{timed_a, 1 << 20, 16000000, 8000000, 0},
                          {timed_b, 1 << 20, 400000, 5200000, 0}};
    run_kinds(kinds, 2, 1000000000);
    if (kinds[0].pooled < 20 || kinds[1].pooled > 12)
        fail_msg("of 40 jobs, the pool ran %d of the fast kind (>= 20 expected) and %d of the "
                 "slow kind (<= 12 expected)",
                 kinds[0].pooled, kinds[1].pooled);
    /* and a real job runs each of its pieces once, whichever way it takes
     * (one piece of one on the caller alone, two of two split) */
    hop_runtime_set_threads(2);
    for (int i = 0; i < 8; i++) {
        int seen[2] = {0, 0};
        hop__pool_run(count_piece, seen, 2, 1 << 20);
        assert_true(seen[1] == 1 || seen[1] == 2);
        assert_int_equal(seen[0], seen[1]);
    }
    hop_runtime_set_threads(0);
}

/* Jobs in bursts between stretches of one-thread work (the bench's 1-vs-2
 * alternation, or Python work between calls): the worker sleeps between
 * bursts, and for about 1 ms after it wakes its pieces run ~3x slower
 * (measured on this KVM guest: a 100,000 x 16 map's pieces 28-44 us against
 * 11), so a burst's first jobs take twice the caller's time on the pool and
 * the rest half of it.  The pool's figures skip such cold jobs, so the kind
 * runs on the pool through the warm part of each burst; counted as figures
 * (as before), the same jobs kept the kind on the caller for good, since
 * every try of the pool was three cold jobs.  The decisions only, on a
 * simulated clock (hop__pool_choose/record): deterministic. */
static void
burst_a(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

static void
burst_b(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

/* Of the warm jobs (the 20th on of a burst, bursts 10 on), how many took
 * the pool; cold jobs marked as such or not. */
static int
burst_pooled(hop__task_fn fn, bool mark_cold)
{
    const int64_t caller = 160000, work = 1600000; /* ns on the caller alone */
    int64_t now = 1000000000, woke = 0, last_pool = -1000000000;
    int pooled = 0;
    for (int b = 0; b < 40; b++) {
        for (int i = 0; i < 60; i++) {
            bool pool = hop__pool_choose(fn, NULL, work, now), cold = false;
            int64_t ns = caller;
            if (pool) {
                if (now - last_pool > 50000) /* the worker slept: it wakes now */
                    woke = now;
                cold = now - woke < 1000000;
                ns = cold ? 2 * caller : caller / 2;
            }
            now += ns;
            if (pool)
                last_pool = now;
            hop__pool_record(fn, NULL, work, pool, mark_cold && cold, true, ns, now);
            pooled += pool && b >= 10 && i >= 20;
            now += 2000; /* the caller's Python between calls */
        }
        now += 10000000; /* a stretch on one thread */
    }
    return pooled;
}

static void
test_pool_skips_a_waking_workers_slow_jobs(void **state)
{
    (void)state;
    int marked = burst_pooled(burst_a, true), unmarked = burst_pooled(burst_b, false);
    /* 30 bursts x 40 warm jobs; the caller's tries take one in 4..256 */
    if (marked < 1100 || unmarked > 300)
        fail_msg("of 1200 warm jobs, %d took the pool with cold jobs skipped (>= 1100 expected) "
                 "and %d with them as figures (<= 300 expected)",
                 marked, unmarked);
}

/* One fn at two sizes of work (hop_runtime_parallel_work's work argument,
 * whose size class hop__pool_run_pieces hands to hop__pool_choose and
 * hop__pool_record): each size is judged on its own (the times above's,
 * the large size 16 ms alone and 8 ms split, the small one 0.4 ms alone
 * and 5.2 ms split). */
static void
test_parallel_work_judges_one_fn_per_size(void **state)
{
    (void)state;
    timed_kind kinds[] = {{timed_a, (int64_t)1 << 30, 16000000, 8000000, 0},
                          {timed_a, 1 << 12, 400000, 5200000, 0}};
    run_kinds(kinds, 2, 2000000000);
    if (kinds[0].pooled < 20 || kinds[1].pooled > 12)
        fail_msg("of 40 jobs, the pool ran %d of the large size (>= 20 expected) and %d of the "
                 "small one (<= 12 expected)",
                 kinds[0].pooled, kinds[1].pooled);
}

/* A busy machine (measured: a map of 100,000 x 16 beside a CPU-bound
 * process, load ~6 on 2 cores): a woken worker has no core of its own, so
 * a job on the pool runs on one thread - the caller takes every piece
 * before the worker runs, or the worker runs them all in the caller's
 * place while the caller waits for a core (then up to 1.5x the caller's
 * time, and now and then milliseconds) - and every such job comes within
 * 1 ms of the worker's wake-up (cold).  The pool's figures must send the
 * kind to the caller alone but for rare tries: before, such jobs were
 * skipped as cold 16 at a time and won on the load's noise, and the kind
 * ran 40% of its jobs on the pool, slower than one thread.  On a quiet
 * machine the same kind's jobs split and take half the time: it stays on
 * the pool.  The decisions only, on a simulated clock: deterministic. */
static void
busy_fn(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

static void
quiet_fn(const void *ctx, int ith, int nth)
{
    (void)ctx, (void)ith, (void)nth;
}

static uint32_t
lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* 2,000 jobs of kind fn; *total: their simulated wall time, *alone: what
 * the same jobs took all on the caller; returns the jobs on the pool. */
static int
loaded_jobs(hop__task_fn fn, bool busy, int64_t *total, int64_t *alone)
{
    uint32_t seed = 12345;
    int64_t now = 3000000000;
    int pooled = 0;
    *total = *alone = 0;
    for (int i = 0; i < 2000; i++) {
        uint32_t r = lcg(&seed) % 100;
        /* the caller alone: 150-210 us, 1 job in 4 up to 450, 1 in 20 preempted */
        int64_t one = 150000 + (int64_t)(lcg(&seed) % 60000);
        if (r >= 75)
            one += (int64_t)(lcg(&seed) % 240000);
        if (r >= 95)
            one += 1000000 + (int64_t)(lcg(&seed) % 7000000);
        bool pool = hop__pool_choose(fn, NULL, 4800000, now), split = !busy;
        int64_t ns = one;
        if (pool && busy) /* one thread ran it: the caller (3 in 5), or the worker */
            ns = lcg(&seed) % 5 < 3 ? one * 9 / 10 + 10000 : one * 3 / 2;
        else if (pool)
            ns = one / 2 + 10000;
        now += ns;
        hop__pool_record(fn, NULL, 4800000, pool, pool && busy, split, ns, now);
        pooled += pool;
        *total += ns;
        *alone += one;
        now += 3000; /* the caller's Python between calls */
    }
    return pooled;
}

static void
test_pool_keeps_a_busy_machines_jobs_on_the_caller(void **state)
{
    (void)state;
    int64_t total, alone;
    int pooled = loaded_jobs(busy_fn, true, &total, &alone);
    if (pooled > 60 || total > alone + alone / 50)
        fail_msg("busy: %d of 2000 jobs on the pool (<= 60 expected), %.3f of the caller's time "
                 "(<= 1.02 expected)",
                 pooled, (double)total / (double)alone);
    pooled = loaded_jobs(quiet_fn, false, &total, &alone);
    if (pooled < 1900 || total > alone * 6 / 10)
        fail_msg("quiet: %d of 2000 jobs on the pool (>= 1900 expected), %.3f of the caller's "
                 "time (<= 0.6 expected)",
                 pooled, (double)total / (double)alone);
}

/* A plan's parallel loop (hop__pool_run_loop) takes part in the choice as
 * a kind of its own, per key: a loop whose figures say the caller alone is
 * faster runs as one piece on the caller without its setup (the worker
 * frames are not touched), and one whose figures favour the pool is split,
 * its setup run once before any piece.  (It always took the pool before.) */
typedef struct loop_job {
    atomic_int setups, pieces, nth;
} loop_job;

static void
loop_setup(const void *ctx)
{
    loop_job *j = (loop_job *)ctx;
    assert_int_equal(atomic_load(&j->pieces), 0);
    atomic_fetch_add(&j->setups, 1);
}

static void
loop_piece(const void *ctx, int ith, int nth)
{
    (void)ith;
    loop_job *j = (loop_job *)ctx;
    atomic_fetch_add(&j->pieces, 1);
    atomic_store(&j->nth, nth);
}

static void
test_parallel_loop_runs_the_way_its_figures_choose(void **state)
{
    (void)state;
    static const char slow_key, fast_key;
    int64_t now = hop__monotonic_ns() - 1000000000;
    /* each key's first job woke the workers (no figure); then one split job
     * on the pool and one on the caller alone: the pool 10x slower for one
     * loop, 2x faster for the other */
    for (int k = 0; k < 2; k++) {
        const void *key = k ? &fast_key : &slow_key;
        hop__pool_record(loop_piece, key, 1 << 20, true, false, true, 1000, now);
        hop__pool_record(loop_piece, key, 1 << 20, true, false, true, k ? 50000 : 1000000, now);
        hop__pool_record(loop_piece, key, 1 << 20, false, false, false, 100000, now);
    }
    hop_runtime_set_threads(2);
    loop_job slow = {0}, fast = {0};
    hop__pool_run_loop(loop_piece, &slow, 2, 1 << 20, &slow_key, loop_setup, no_poll, NULL);
    assert_int_equal(atomic_load(&slow.setups), 0);
    assert_int_equal(atomic_load(&slow.pieces), 1);
    assert_int_equal(atomic_load(&slow.nth), 1);
    hop__pool_run_loop(loop_piece, &fast, 2, 1 << 20, &fast_key, loop_setup, no_poll, NULL);
    assert_int_equal(atomic_load(&fast.setups), 1);
    assert_int_equal(atomic_load(&fast.pieces), 2);
    assert_int_equal(atomic_load(&fast.nth), 2);
    hop_runtime_set_threads(0);
}

/* Eager ops on several threads at once: each has its own ShapeEnv, and the
 * one that finds the pool busy runs its kernel inline. */
static void *
eager_worker(void *arg)
{
    hop_tensor *x = arg;
    bool ok = true;
    for (int i = 0; i < 20 && ok; i++) {
        hop_tensor *y = hop_eager_tensor(HOP_OP_mul, (hop_rt_arg[]){TA(x), IA(2)}, 2);
        ok = y != NULL && elem(y, 123457) == 2 * elem(x, 123457);
        hop_tensor_release(y);
    }
    hop_runtime_thread_cleanup();
    return ok ? arg : NULL;
}

static void
test_eager_ops_run_concurrently_on_several_threads(void **state)
{
    (void)state;
    hop_runtime_set_threads(2);
    double *v = malloc(sizeof(double) * 300000);
    for (int i = 0; i < 300000; i++)
        v[i] = i % 1000;
    hop_tensor *x = make(HOP_F32, 1, SIZES(300000), v);
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, eager_worker, x), 0);
    for (int i = 0; i < 3; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_ptr_equal(ret, x);
    }
    hop_runtime_set_threads(0);
    free(v);
    hop_tensor_release(x);
}

/* Each eager call rolls the thread's ShapeEnv back to where it was, so
 * ever new sizes (constants) and nonzero's unbacked symbols do not pile up
 * in it: once warm, a call allocates its result and nothing else, however
 * many sizes it has seen (they used to fill the env's arena, a new chunk
 * every few dozen calls, so even a warm plan run could allocate). */
static void
test_many_distinct_sizes_and_nonzero_calls_allocate_only_their_results(void **state)
{
    (void)state;
    hop_tensor *x = hop_tensor_empty(HOP_F32, 1, SIZES(256 + 3000));
    assert_non_null(x);
    for (int64_t i = 0; i < 256 + 3000; i++)
        ((float *)x->data)[i] = 1.0f;
    hop_tensor_release(OP(nonzero, TA(x))); /* warm: the thread's env */
    for (int64_t n = 256; n < 256 + 3000; n++) {
        long before = hop_alloc_count();
        hop_tensor *y =
            hop_eager_tensor(HOP_OP_arange, (hop_rt_arg[]){IA(0), IA(n), IA(1), NA()}, 4);
        assert_int_equal(hop_alloc_count() - before, 1);
        assert_non_null(y);
        assert_int_equal(y->sizes[0], n);
        assert_true(elem(y, n - 1) == (double)(n - 1));
        hop_tensor_release(y);
        hop_tensor *xs = OP(slice, TA(x), IA(0), IA(0), IA(n), IA(1));
        before = hop_alloc_count();
        hop_tensor *nz = OP(nonzero, TA(xs));
        assert_int_equal(hop_alloc_count() - before, 1);
        assert_int_equal(nz->sizes[0], n);
        assert_int_equal(nz->sizes[1], 1);
        assert_true(elem(nz, n - 1) == (double)(n - 1));
        hop_tensor_release(nz);
        hop_tensor_release(xs);
    }
    hop_tensor_release(x);
}

/* ---------------------------------------------------------------- errors */

static void
test_errors_name_the_op_dtypes_and_shapes(void **state)
{
    (void)state;
    hop_tensor *a = hop_tensor_zeros(HOP_F32, 2, SIZES(3, 4));
    hop_tensor *b = hop_tensor_zeros(HOP_F32, 1, SIZES(5));
    hop_tensor *bo = hop_tensor_zeros(HOP_BOOL, 1, SIZES(3));
    hop_tensor *i = hop_tensor_zeros(HOP_I64, 1, SIZES(2));
    EXPECT_FAIL(HOP_SHAPE, "add: cannot broadcast f32[3, 4] with f32[5]", add, TA(a), TA(b));
    EXPECT_FAIL(HOP_DTYPE,
                "neg: negation is not supported for bool tensors, got bool[3]; use logical_not",
                neg, TA(bo));
    EXPECT_FAIL(HOP_DTYPE, "mean: mean needs a float input, got i64[2]", mean, TA(i), NA(),
                BA(false));
    EXPECT_FAIL(HOP_SHAPE,
                "matmul: cannot multiply f32[3, 4] by f32[5]: inner sizes 4 and 5 differ", matmul,
                TA(a), TA(b));
    EXPECT_FAIL(HOP_INVALID, "add: expected 2 operands, got 1", add, TA(a));
    EXPECT_FAIL(HOP_INVALID, "add: argument 1 is a NULL tensor", add, TA(a), TA(NULL));
    hop_rt_arg sym = {.kind = HOP_OPND_SYM};
    EXPECT_FAIL(HOP_INVALID, "add: argument 1 is a SymInt; the runtime needs concrete values", add,
                TA(a), sym);
    EXPECT_FAIL(HOP_INVALID, "select: index 3 out of range for dim 0 of f32[3, 4]", select, TA(a),
                IA(0), IA(3));
    EXPECT_FAIL(HOP_SHAPE,
                "item: a tensor with 2 elements cannot be converted to a scalar, got i64[2]", item,
                TA(i));
    EXPECT_FAIL(HOP_INVALID, "transpose: dim 2 out of range for f32[3, 4]", transpose, TA(a), IA(0),
                IA(2));
    hop_rt_value v;
    assert_int_equal(hop_eager((hop_op)999, NULL, 0, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_eager: unknown op 999");
    assert_null(hop_eager_tensor(HOP_OP_sym_size, (hop_rt_arg[]){TA(a), IA(0)}, 2));
    assert_string_equal(hop_error_message(), "sym_size: gives an int, not a tensor; use hop_eager");
    hop_tensor bad = *a;
    bad.rank = 12;
    EXPECT_FAIL(HOP_INVALID, "neg: argument 0 is not a valid tensor header", neg, TA(&bad));
    /* the same-shape fast path of add leaves a header it cannot trust to
     * the general path's check, rather than reading past sizes[] or
     * allocating for a negative size */
    EXPECT_FAIL(HOP_INVALID, "add: argument 0 is not a valid tensor header", add, TA(&bad),
                TA(&bad));
    hop_tensor negsize = *a;
    negsize.sizes[0] = -3;
    EXPECT_FAIL(HOP_INVALID, "add: argument 0 is not a valid tensor header", add, TA(&negsize),
                TA(&negsize));
    int64_t iv;
    assert_int_equal(hop_tensor_item_int(a, &iv), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "hop_tensor_item_int: a tensor with 12 elements cannot be converted to a "
                        "scalar, got f32[3, 4]");
    hop_tensor *all[] = {a, b, bo, i};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

/* ------------------------------------------------- allocation failures */

typedef hop_status (*eager_case)(hop_rt_value *out, hop_tensor **in);

static hop_status
case_add(hop_rt_value *out, hop_tensor **in)
{
    return hop_eager(HOP_OP_add, (hop_rt_arg[]){TA(in[0]), FA(1.5)}, 2, out);
}

static hop_status
case_transpose(hop_rt_value *out, hop_tensor **in)
{
    return hop_eager(HOP_OP_transpose, (hop_rt_arg[]){TA(in[0]), IA(0), IA(1)}, 3, out);
}

static hop_status
case_reshape_copy(hop_rt_value *out, hop_tensor **in)
{
    return hop_eager(HOP_OP_reshape,
                     (hop_rt_arg[]){TA(in[1]), hop_rt_list((hop_rt_arg[]){IA(-1)}, 1)}, 2, out);
}

static hop_status
case_matmul_strided(hop_rt_value *out, hop_tensor **in)
{
    /* in[2] has no unit stride: eager copies both operands first */
    return hop_eager(HOP_OP_matmul, (hop_rt_arg[]){TA(in[2]), TA(in[2])}, 2, out);
}

static hop_status
case_cat_many(hop_rt_value *out, hop_tensor **in)
{
    hop_rt_arg items[70];
    for (int i = 0; i < 70; i++)
        items[i] = TA(in[0]); /* more than fit on the stack: operands on the heap */
    return hop_eager(HOP_OP_cat, (hop_rt_arg[]){hop_rt_list(items, 70), IA(0)}, 2, out);
}

static hop_status
case_nonzero(hop_rt_value *out, hop_tensor **in)
{
    return hop_eager(HOP_OP_nonzero, (hop_rt_arg[]){TA(in[0])}, 1, out);
}

static hop_status
case_sum(hop_rt_value *out, hop_tensor **in)
{
    return hop_eager(HOP_OP_sum, (hop_rt_arg[]){TA(in[1]), IA(0), BA(true)}, 3, out);
}

static void
test_allocation_failure_sweep_over_eager_ops(void **state)
{
    (void)state;
    hop_tensor *x =
        make(HOP_F32, 2, SIZES(4, 4), (double[]){0, 1, 0, 2, 3, 0, 4, 5, 0, 0, 6, 7, 8, 0, 9, 1});
    hop_tensor *in[3];
    in[0] = x;
    in[1] = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *cols = OP(slice, TA(in[1]), IA(1), IA(0), NA(), IA(2));
    in[2] = OP(slice, TA(cols), IA(0), IA(0), NA(), IA(2)); /* strides [2, 8] */
    hop_tensor_release(cols);
    eager_case cases[] = {case_add,      case_transpose, case_reshape_copy, case_matmul_strided,
                          case_cat_many, case_nonzero,   case_sum};
    for (size_t c = 0; c < N_(cases); c++) {
        hop_runtime_thread_cleanup();
        long live = hop_alloc_live();
        int failures = 0;
        for (long k = 1;; k++) {
            hop_rt_value v;
            hop_alloc_fail_at(k);
            hop_status st = cases[c](&v, in);
            hop_alloc_fail_at(0);
            if (st == HOP_OK) {
                assert_int_equal(v.kind, HOP_VALUE_TENSOR);
                hop_tensor_release(v.tensor);
                hop_runtime_thread_cleanup();
                assert_int_equal(hop_alloc_live(), live);
                break;
            }
            failures++;
            assert_int_equal(st, HOP_NOMEM);
            assert_int_equal(hop_error_code(), HOP_NOMEM);
            assert_null(v.tensor);
            hop_runtime_thread_cleanup();
            assert_int_equal(hop_alloc_live(), live);
        }
        assert_true(failures >= 2); /* the ShapeEnv and the result at least */
    }
    hop_tensor_release(in[2]);
    hop_tensor_release(in[1]);
    hop_tensor_release(x);
}

static void
test_nothing_leaks_after_shutdown(void **state)
{
    (void)state;
    hop_runtime_shutdown();
    long live = hop_alloc_live();
    hop_tensor *x = make(HOP_F64, 1, SIZES(3), (double[]){1, 2, 3});
    hop_tensor *y = OP(exp, TA(x));
    hop_tensor_release(x);
    hop_tensor_release(y);
    hop_runtime_shutdown();
    assert_int_equal(hop_alloc_live(), live);
}

/* ------------------------------------------------- process-wide settings */

/* OpenBLAS's process-wide thread count, found at run time (NULL without
 * OpenBLAS in the process). */
static int (*blas_get)(void);
static void (*blas_set)(int);

/* Each thread's matmuls: 200, or 200 / HOP_TEST_SCALE under valgrind, whose
 * --fair-sched runs one thread at a time (800 96x96 products were half of
 * this binary's 92 s there). */
static void *
matmuls(void *arg)
{
    hop_tensor *a = arg;
    const char *scale = getenv("HOP_TEST_SCALE");
    int n = 200 / (scale && atoi(scale) > 1 ? atoi(scale) : 1);
    for (int i = 0; i < n; i++) {
        hop_tensor *c = OP(matmul, TA(a), TA(a));
        assert_non_null(c);
        hop_tensor_release(c);
    }
    return NULL;
}

/* hop's matmul runs BLAS on one thread but leaves the thread count of the
 * shared OpenBLAS, which NumPy uses, as it found it: alone, in prepared
 * kernels and with threads calling it at once (it used to set 1 for good).
 * hop links a copy of OpenBLAS of its own when it can, which the shared
 * library loaded here never sees; else this is the library hop calls. */
static void
test_matmul_leaves_the_blas_thread_count_as_it_found_it(void **state)
{
    (void)state;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        skip();
    *(void **)&blas_get = dlsym(lib, "openblas_get_num_threads");
    *(void **)&blas_set = dlsym(lib, "openblas_set_num_threads");
    if (blas_get == NULL || blas_set == NULL)
        skip();
    int before = blas_get();
    blas_set(3);
    double v[96 * 96];
    for (int i = 0; i < 96 * 96; i++)
        v[i] = (i % 7) - 3;
    hop_tensor *a = make(HOP_F32, 2, SIZES(96, 96), v);
    hop_tensor *c = OP(matmul, TA(a), TA(a));
    assert_non_null(c);
    assert_int_equal(blas_get(), 3);
    hop_kernel k;
    assert_int_equal(hop_kernel_prepare(&k, HOP_OP_matmul, (hop_rt_arg[]){TA(a), TA(a)}, 2, c),
                     HOP_OK);
    hop_kernel_run(&k);
    hop_kernel_compute(&k, 1, 2);
    assert_int_equal(blas_get(), 3);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, matmuls, a), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(blas_get(), 3);
    hop_tensor_release(c);
    hop_tensor_release(a);
    blas_set(before);
    dlclose(lib);
}

static void
kernel_noop(int64_t n, const float *x, float *y)
{
    (void)n;
    (void)x;
    (void)y;
}

/* The runtime checks a traced call's operands from their metadata alone
 * (hop_operand, shape inference's type): no graph, no tracer, and this test
 * links only core, ops and runtime.  Messages as hop_foreign_call's. */
static void
test_foreign_kernel_checks_operands_known_only_by_metadata(void **state)
{
    (void)state;
    const hop_foreign *f;
    assert_int_equal(hop_foreign_register("void meta_axpy(int64_t n, const float x[n], float y[n])",
                                          (void *)kernel_noop, NULL, &f),
                     HOP_OK);
    hop_shape_env *env = hop_shape_env_new();
    assert_non_null(env);
    hop_meta f4, f3, i4, fs;
    assert_int_equal(hop_meta_init(&f4, env, HOP_F32, 1, SIZES(4)), HOP_OK);
    assert_int_equal(hop_meta_init(&f3, env, HOP_F32, 1, SIZES(3)), HOP_OK);
    assert_int_equal(hop_meta_init(&i4, env, HOP_I64, 1, SIZES(4)), HOP_OK);
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, false, false);
    assert_non_null(s0);
    fs = f4;
    fs.sizes[0] = s0;
    hop_operand four = {.kind = HOP_OPND_INT, .u.i = 4};
    hop_operand sym = {.kind = HOP_OPND_SYM, .u.sym = s0};
    hop_operand x4 = {.kind = HOP_OPND_TENSOR, .u.tensor = &f4};
    hop_operand x3 = {.kind = HOP_OPND_TENSOR, .u.tensor = &f3};
    hop_operand xi = {.kind = HOP_OPND_TENSOR, .u.tensor = &i4};
    hop_operand xs = {.kind = HOP_OPND_TENSOR, .u.tensor = &fs};

    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){four, x4, x4}, 3), HOP_OK);
    /* symbolic sizes are each call's to check */
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){sym, xs, xs}, 3), HOP_OK);
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){four, x4}, 2), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "meta_axpy: takes 3 operands (void meta_axpy(int64_t n, const float x[n], "
                        "float y[n])), got 2");
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){x4, x4, x4}, 3), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "meta_axpy: parameter 1 (int64_t n) takes an int, got a tensor f32[4]");
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){four, sym, x4}, 3), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "meta_axpy: parameter 2 (const float x[n]) takes a tensor, got a SymInt");
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){four, xi, x4}, 3), HOP_DTYPE);
    assert_string_equal(hop_error_message(),
                        "meta_axpy: parameter 2 (const float x[n]) takes f32, got i64[4]");
    assert_int_equal(hop_foreign_check_operands(f, (hop_operand[]){four, x4, x3}, 3), HOP_SHAPE);
    assert_string_equal(hop_error_message(),
                        "meta_axpy: parameter 3 (float y[n]) needs n = 4 elements, got f32[3]");
    hop_shape_env_free(env);
    assert_int_equal(hop_foreign_unregister("meta_axpy"), HOP_OK);
}

/* The allocation counters are kept per thread: what a thread counted stays
 * counted after it exits, and a block made on one thread and freed on
 * another balances. */
typedef struct alloc_job {
    void *keep; /* made here, freed by the main thread */
    void *take; /* made by the main thread, freed here */
} alloc_job;

static void *
alloc_worker(void *p)
{
    alloc_job *j = p;
    for (int i = 0; i < 100; i++)
        hop__free(hop__malloc(48));
    j->keep = hop__malloc(1000);
    hop__free(j->take);
    return NULL;
}

static void
test_allocation_counters_add_up_over_threads(void **state)
{
    (void)state;
    long count = hop_alloc_count(), live = hop_alloc_live();
    long long bytes = hop_alloc_bytes();
    alloc_job j = {.take = hop__malloc(24)};
    assert_non_null(j.take);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, alloc_worker, &j), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_non_null(j.keep);
    assert_int_equal(hop_alloc_count(), count + 102);
    assert_int_equal(hop_alloc_bytes(), bytes + 24 + 100 * 48 + 1000);
    assert_int_equal(hop_alloc_live(), live + 1); /* keep */
    hop__free(j.keep);
    assert_int_equal(hop_alloc_live(), live);
}

/* NumPy's memory order (hop_memory_order, the one owner: reductions sum
 * in it, hop.asarray's copies are laid out in it) */
static void
test_memory_order_is_numpys(void **state)
{
    (void)state;
    int perm[4];
    /* C order, Fortran order (by strides in any unit) */
    assert_true(hop_memory_order(3, (int64_t[]){2, 3, 4}, (int64_t[]){12, 4, 1}, perm));
    assert_true(perm[0] == 0 && perm[1] == 1 && perm[2] == 2);
    assert_false(hop_memory_order(3, (int64_t[]){2, 3, 4}, (int64_t[]){8, 16, 48}, perm));
    assert_true(perm[0] == 2 && perm[1] == 1 && perm[2] == 0);
    /* |stride|: a negative stride sorts by its size */
    assert_false(hop_memory_order(2, (int64_t[]){3, 4}, (int64_t[]){-1, 3}, perm));
    assert_true(perm[0] == 1 && perm[1] == 0);
    /* a dim of size 1 or of stride 0 compares with none: a dim inserted
     * past it moves it along (dim 0, innermost, passes dim 1 to go inside
     * dim 2), the others keep C order around it */
    assert_false(hop_memory_order(3, (int64_t[]){3, 1, 4}, (int64_t[]){1, 100, 3}, perm));
    assert_true(perm[0] == 1 && perm[1] == 2 && perm[2] == 0);
    assert_true(hop_memory_order(3, (int64_t[]){3, 5, 4}, (int64_t[]){4, 0, 1}, perm));
    assert_true(perm[0] == 0 && perm[1] == 1 && perm[2] == 2);
    assert_true(hop_memory_order(0, NULL, NULL, perm));
}

/* ------------------------------------------------------------ the memory plan's packing */

/* hop__pack written the plain way (the algorithm runtime/pack.c names):
 * each routine's buffers, largest first (then by first use, then index),
 * each at the lowest of the smallest gaps between the placed buffers of its
 * routine whose live ranges meet its own, found by listing them all and
 * sorting them by offset; else above them; a buffer of no bytes at the
 * routine's base; routines one after the other. */
typedef struct ref_item {
    int64_t size;
    int32_t def, last, id;
} ref_item;

static int
ref_by_size(const void *a, const void *b)
{
    const ref_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->def != y->def)
        return x->def < y->def ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int
ref_by_lo(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static int64_t
ref_pack(const hop__buffer *bufs, int32_t n, const int64_t *bytes, int64_t *off)
{
    int64_t total = 0;
    int32_t max_routine = -1;
    for (int32_t b = 0; b < n; b++)
        if (bufs[b].routine > max_routine)
            max_routine = bufs[b].routine;
    ref_item *items = calloc((size_t)n + 1, sizeof *items);
    int64_t(*spans)[2] = calloc((size_t)n + 1, sizeof *spans);
    assert_non_null(items);
    assert_non_null(spans);
    for (int32_t r = 0; r <= max_routine; r++) {
        int32_t m = 0;
        for (int32_t b = 0; b < n; b++)
            if (bufs[b].routine == r)
                items[m++] = (ref_item){(bytes[b] + 63) / 64 * 64, bufs[b].def, bufs[b].last, b};
        if (m == 0)
            continue;
        qsort(items, (size_t)m, sizeof *items, ref_by_size);
        int64_t part_top = 0;
        for (int32_t k = 0; k < m; k++) {
            const ref_item *x = &items[k];
            if (x->size == 0) {
                off[x->id] = total;
                continue;
            }
            int32_t nm = 0;
            for (int32_t j = 0; j < k; j++) {
                const ref_item *y = &items[j];
                if (y->def <= x->last && y->last >= x->def) {
                    spans[nm][0] = off[y->id] - total;
                    spans[nm][1] = off[y->id] - total + y->size;
                    nm++;
                }
            }
            qsort(spans, (size_t)nm, sizeof *spans, ref_by_lo);
            int64_t top = 0, best = -1, gap = INT64_MAX;
            for (int32_t j = 0; j < nm; j++) {
                if (spans[j][0] - top >= x->size && spans[j][0] - top < gap) {
                    best = top;
                    gap = spans[j][0] - top;
                }
                if (spans[j][1] > top)
                    top = spans[j][1];
            }
            int64_t at = best < 0 ? top : best;
            off[x->id] = total + at;
            if (at + x->size > part_top)
                part_top = at + x->size;
        }
        total += part_top;
    }
    free(items);
    free(spans);
    return total;
}

static uint64_t pack_rng = 0x2545f4914f6cdd1dull;

static uint32_t
pack_rand(uint32_t below)
{
    pack_rng ^= pack_rng << 13;
    pack_rng ^= pack_rng >> 7;
    pack_rng ^= pack_rng << 17;
    return (uint32_t)(pack_rng >> 32) % below;
}

/* One random memory plan of each kind n buffers long: live ranges of every
 * length, buffers all live at once, sums over them, sizes equal, in a few
 * classes or each its own, zero-size buffers, several routines; and plans
 * whose order by size is their order of first use, few live at once (runs
 * of cond calls), for all of the plan or up to a point, or with stretches
 * where more live at once than pack.c's sweep lists. */
static void
random_plan(int kind, int32_t n, hop__buffer *bufs, int64_t *bytes)
{
    int32_t span = 1 + (int32_t)pack_rand((uint32_t)n * 2);
    for (int32_t b = 0; b < n; b++) {
        int32_t def = (int32_t)pack_rand((uint32_t)n * 2), len = (int32_t)pack_rand((uint32_t)span);
        int64_t size = 64 * (1 + pack_rand(8));
        switch (kind % 8) {
        case 0: /* random ranges, sizes in a few classes */
            break;
        case 1: /* each size its own, some zero */
            size = pack_rand(4) == 0 ? 0 : 1 + pack_rand(100000);
            break;
        case 2: /* lifted values (b < n/2, all live to the end), then a sum over them */
            size = 64;
            if (b < n / 2) {
                def = b;
                len = n - b + (int32_t)pack_rand(3);
            } else {
                def = b;
                len = 1;
            }
            break;
        case 3: /* all live at once, sizes mixed */
            def = (int32_t)pack_rand(4);
            len = n + 4;
            break;
        case 4: /* a chain of short-lived temporaries, one size */
            def = b;
            len = 1 + (int32_t)pack_rand(3);
            size = 256;
            break;
        case 5: /* long and short ranges mixed, sizes far apart */
            len = pack_rand(2) ? len : n * 2;
            size = pack_rand(2) ? 64 : 64 * (1 + pack_rand(1000));
            break;
        case 6: /* cond calls: in order, one size, a few live; now and then many */
            def = b;
            len = (b / 24) % 3 == 2 ? (int32_t)pack_rand(40) : (int32_t)pack_rand(6);
            size = 64;
            break;
        default: /* in order of first use, sizes falling, now and then one out of order */
            def = b;
            len = (int32_t)pack_rand(8);
            size = pack_rand(16) == 0 ? 64 * (1 + (int64_t)pack_rand(64)) : 64 * (1 + (n - b) / 4);
            size = pack_rand(32) == 0 ? 0 : size - (int64_t)pack_rand(64);
            break;
        }
        bufs[b] = (hop__buffer){.slot = b,
                                .routine = kind >= 8 ? (int32_t)pack_rand(3) : 0,
                                .def = def,
                                .last = def + len};
        bytes[b] = size;
    }
}

/* hop__pack gives every buffer the offset the plain algorithm gives it, on
 * 4,000 random plans of up to 300 buffers: its three searches (a sweep
 * while buffers come in order of first use, listing the buffers met off
 * the tree by first use and sorting them, walking the treap by offset past
 * subtrees that cannot meet a buffer and stopping at a gap of exactly its
 * size) and its shortcut (the top for a buffer meeting all placed ones)
 * change how the gaps are found, never which is taken. */
static void
test_pack_places_every_buffer_where_the_plain_greedy_does(void **state)
{
    (void)state;
    enum { MAXN = 300 };
    hop__buffer *bufs = calloc(MAXN, sizeof *bufs);
    int64_t bytes[MAXN], got[MAXN], want[MAXN];
    void *scratch = malloc(hop__pack_scratch_bytes(MAXN));
    assert_non_null(bufs);
    assert_non_null(scratch);
    for (int round = 0; round < 4000; round++) {
        int kind = round % 16;
        int32_t n = 1 + (int32_t)pack_rand(round % 3 == 0 ? MAXN : 40);
        random_plan(kind, n, bufs, bytes);
        int64_t total = -1, want_total = ref_pack(bufs, n, bytes, want);
        assert_int_equal(hop__pack(bufs, n, bytes, NULL, scratch, got, &total), HOP_OK);
        for (int32_t b = 0; b < n; b++)
            if (got[b] != want[b]) {
                fprintf(stderr, "round %d (kind %d, %d buffers): buffer %d at %lld, want %lld\n",
                        round, kind, n, b, (long long)got[b], (long long)want[b]);
                fail();
            }
        assert_int_equal(total, want_total);
    }
    free(scratch);
    free(bufs);
}

/* Packs n buffers (one routine), checks them against ref_pack and that no
 * two whose live ranges meet share a byte, and returns the block's size. */
static int64_t
pack_checked(int32_t n, const int32_t (*range)[2], const int64_t *bytes, int64_t *off)
{
    hop__buffer bufs[16];
    int64_t want[16], total = -1;
    assert_true(n <= 16);
    for (int32_t b = 0; b < n; b++)
        bufs[b] = (hop__buffer){.slot = b, .def = range[b][0], .last = range[b][1]};
    void *scratch = malloc(hop__pack_scratch_bytes(n));
    assert_non_null(scratch);
    assert_int_equal(hop__pack(bufs, n, bytes, NULL, scratch, off, &total), HOP_OK);
    free(scratch);
    assert_int_equal(total, ref_pack(bufs, n, bytes, want));
    for (int32_t b = 0; b < n; b++) {
        assert_int_equal(off[b], want[b]);
        for (int32_t c = 0; c < b; c++)
            if (range[b][0] <= range[c][1] && range[c][0] <= range[b][1])
                assert_true(off[b] >= off[c] + bytes[c] || off[c] >= off[b] + bytes[b]);
    }
    return total;
}

/* Buffers in order of first use, largest first (pack.c sweeps them without
 * its tree): the last one starts when b1 and b3 are live, below them a gap
 * of 128 bytes at 0 and between them one of 64; it takes the smaller gap,
 * as the general search does, not the lowest free place. */
static void
test_pack_sweep_takes_the_smallest_gap_a_buffer_fits(void **state)
{
    (void)state;
    static const int32_t range[5][2] = {{0, 1}, {0, 9}, {0, 1}, {0, 9}, {2, 9}};
    static const int64_t bytes[5] = {128, 64, 64, 64, 64};
    int64_t off[5];
    assert_int_equal(pack_checked(5, range, bytes, off), 320);
    assert_true(off[0] == 0 && off[1] == 128 && off[2] == 192 && off[3] == 256);
    assert_int_equal(off[4], 192);
}

/* Three cond calls' buffers (predicate, its test, both branches' values,
 * live till the next call's result is made: the plan of a traced loop of
 * conds): in order, one size, at most four live at once; then the same with
 * a larger buffer made last, so that the order by size is not the order of
 * first use (placed first, it sends pack.c's sweep back to the general
 * search) and with one value live through all of them.  Both are packed
 * where the plain greedy packs them, no two live buffers sharing a byte. */
static void
test_pack_places_cond_calls_with_and_without_the_sweep(void **state)
{
    (void)state;
    static const int32_t chain[10][2] = {{2, 3},   {3, 4},   {5, 16},  {6, 16},  {10, 11},
                                         {11, 12}, {13, 23}, {14, 23}, {18, 19}, {19, 20}};
    static const int64_t same[10] = {4, 1, 64, 64, 4, 1, 64, 64, 4, 1};
    int64_t off[11];
    assert_int_equal(pack_checked(10, chain, same, off), 256);
    static const int32_t mixed[11][2] = {{2, 3},   {3, 4},   {5, 16},  {6, 16}, {10, 11}, {11, 12},
                                         {13, 23}, {14, 23}, {18, 19}, {0, 20}, {21, 30}};
    static const int64_t sizes[11] = {4, 1, 64, 64, 4, 1, 64, 64, 4, 256, 512};
    /* the 512 bytes and the value live through the calls (they never meet)
     * both at 0; the calls' values above the 256 bytes, except the last
     * call's branch values, which meet the 512 bytes too */
    assert_int_equal(pack_checked(11, mixed, sizes, off), 640);
    assert_true(off[10] == 0 && off[9] == 0 && off[6] == 512 && off[7] == 576);
}

/* Thread CPU seconds to pack a plan of n buffers, the least of three:
 * lifted, n/2 values live at once and n/2 terms of a sum over them
 * (random_plan's kind 2 without its randomness); else scattered, short
 * ranges at random times in 16 size classes.  The block must hold at most
 * `most` bytes. */
static double
pack_seconds(int32_t n, bool lifted, int64_t most)
{
    hop__buffer *bufs = calloc((size_t)n, sizeof *bufs);
    int64_t *bytes = calloc((size_t)n, sizeof *bytes), *off = calloc((size_t)n, sizeof *off);
    void *scratch = malloc(hop__pack_scratch_bytes(n));
    assert_true(bufs && bytes && off && scratch);
    for (int32_t b = 0; b < n; b++) {
        int32_t def = lifted ? b : (int32_t)pack_rand((uint32_t)n);
        int32_t last = lifted ? (b < n / 2 ? n / 2 + b : b + 1) : def + 1 + (int32_t)pack_rand(16);
        bufs[b] = (hop__buffer){.slot = b, .routine = 0, .def = def, .last = last};
        bytes[b] = lifted ? 64 : 64 * (1 + pack_rand(16));
    }
    double least = 1e9;
    for (int k = 0; k < 3; k++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        int64_t total;
        assert_int_equal(hop__pack(bufs, n, bytes, NULL, scratch, off, &total), HOP_OK);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        least = s < least ? s : least;
        assert_true(total <= most);
    }
    free(scratch);
    free(off);
    free(bytes);
    free(bufs);
    return least;
}

/* The per-buffer cost of packing 8n buffers over that of n, n = 8000
 * (divided by HOP_TEST_SCALE). */
static double
pack_growth(bool lifted, const char *what)
{
    const char *scale = getenv("HOP_TEST_SCALE");
    int32_t n = 8000 / (scale && atoi(scale) > 1 ? atoi(scale) : 1);
    /* lifted: at most the values and one term live at once; scattered: at
     * most 17 ranges of 16 x 64 bytes meet at any time */
    double small = pack_seconds(n, lifted, lifted ? 64 * ((int64_t)n / 2 + 1) : INT64_MAX);
    double large = pack_seconds(8 * n, lifted, lifted ? 64 * ((int64_t)4 * n + 1) : INT64_MAX);
    double ratio = (large / (8 * n)) / (small / n);
    fprintf(stderr, "pack, %s: %d buffers %.2f ms, %d: %.2f ms (%.2fx per buffer)\n", what, n,
            small * 1e3, 8 * n, large * 1e3, ratio);
    return ratio;
}

/* n values live at once, each used by one term of a sum (a body adding its
 * lifted captures): every term met all the values not yet used, and each
 * placement listed and sorted them, O(n^2 log n): 10,000 values lifted
 * through three levels took ~3 s (tests/c/test_scale.c).  Eight times
 * the buffers now cost about eight times as much: 1.2-1.6x per buffer here
 * (n log n); the quadratic was ~15x.  Bound 4. */
static void
test_pack_costs_about_the_same_per_buffer_at_eight_times_as_many_live_at_once(void **state)
{
    (void)state;
    assert_true(pack_growth(true, "lifted values and terms") < 4.0);
}

/* Short ranges scattered in time: each buffer meets a few, in subtrees of
 * the treap that also hold buffers dead before it and born after it, so a
 * walk through the treap alone visited most of it (32,000 buffers in 0.9 s,
 * 100,000 in 54 s); listing the few it meets stays O(log n) a buffer. */
static void
test_pack_costs_about_the_same_per_buffer_at_eight_times_as_many_scattered(void **state)
{
    (void)state;
    assert_true(pack_growth(false, "scattered short-lived") < 4.0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: before any other matmul of the process */
        cmocka_unit_test(test_matmul_leaves_the_blas_thread_count_as_it_found_it),
        cmocka_unit_test(test_allocation_counters_add_up_over_threads),
        cmocka_unit_test(test_eager_arithmetic_shortcut_matches_the_general_path),
        cmocka_unit_test(test_eager_unary_shortcut_matches_the_general_path),
        cmocka_unit_test(test_eager_quick_gives_hop_eagers_result_or_declines),
        cmocka_unit_test(test_eager_quick_spare_reuses_a_recyclable_tensor_or_releases_it),
        cmocka_unit_test(test_eager_quick_scalar_gives_hop_eagers_result_or_declines),
        cmocka_unit_test(test_new_tensor_is_contiguous_aligned_and_owned_once),
        cmocka_unit_test(test_zeros_from_data_and_zero_dim_tensors),
        cmocka_unit_test(test_tensor_creation_rejects_bad_shapes),
        cmocka_unit_test(test_wrapped_memory_is_zero_copy_and_released_by_the_last_view),
        cmocka_unit_test(test_wrap_checks_geometry_and_alignment_without_taking_the_memory),
        cmocka_unit_test(test_views_share_storage_and_keep_it_alive),
        cmocka_unit_test(test_view_ops_give_the_strides_and_offsets_of_pytorch),
        cmocka_unit_test(test_contiguity_is_c_or_fortran_order_and_ignores_size_one_dims),
        cmocka_unit_test(test_view_ops_on_zero_dim_and_empty_tensors),
        cmocka_unit_test(test_reshape_copies_when_strides_forbid_a_view_and_view_refuses),
        cmocka_unit_test(test_view_compute_and_borrowed_headers_allocate_nothing),
        cmocka_unit_test(test_contiguous_returns_the_same_tensor_or_a_copy),
        cmocka_unit_test(test_eager_out_writes_into_a_strided_output_without_allocating),
        cmocka_unit_test(test_eager_out_checks_dtype_shape_strides_and_overlap),
        cmocka_unit_test(test_view_op_into_out_copies_the_view),
        cmocka_unit_test(test_prepared_kernel_pieces_cover_the_op_exactly_once),
        cmocka_unit_test(test_prepare_reports_errors_like_eager),
        cmocka_unit_test(test_thread_pool_splits_large_kernels_with_identical_results),
        cmocka_unit_test(test_pool_pieces_cover_a_job_exactly_once_on_a_busy_machine),
        cmocka_unit_test(test_pool_a_late_worker_joins_the_next_job),
        cmocka_unit_test(test_pool_caller_runs_the_pieces_a_held_worker_has_not_started),
        cmocka_unit_test(test_pool_runs_each_kind_of_job_the_faster_way),
        cmocka_unit_test(test_pool_skips_a_waking_workers_slow_jobs),
        cmocka_unit_test(test_parallel_work_judges_one_fn_per_size),
        cmocka_unit_test(test_pool_keeps_a_busy_machines_jobs_on_the_caller),
        cmocka_unit_test(test_parallel_loop_runs_the_way_its_figures_choose),
        cmocka_unit_test(test_eager_ops_run_concurrently_on_several_threads),
        cmocka_unit_test(test_many_distinct_sizes_and_nonzero_calls_allocate_only_their_results),
        cmocka_unit_test(test_errors_name_the_op_dtypes_and_shapes),
        cmocka_unit_test(test_foreign_kernel_checks_operands_known_only_by_metadata),
        cmocka_unit_test(test_allocation_failure_sweep_over_eager_ops),
        cmocka_unit_test(test_fp_status_of_a_pool_job_includes_its_workers_flags),
        cmocka_unit_test(test_memory_order_is_numpys),
        cmocka_unit_test(test_pack_places_every_buffer_where_the_plain_greedy_does),
        cmocka_unit_test(test_pack_sweep_takes_the_smallest_gap_a_buffer_fits),
        cmocka_unit_test(test_pack_places_cond_calls_with_and_without_the_sweep),
        cmocka_unit_test(
            test_pack_costs_about_the_same_per_buffer_at_eight_times_as_many_live_at_once),
        cmocka_unit_test(
            test_pack_costs_about_the_same_per_buffer_at_eight_times_as_many_scattered),
        cmocka_unit_test(test_nothing_leaks_after_shutdown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
