/*
 * tests/c/test_dtypes.c - the small dtypes (i8, u8, i16, u64, f16) through
 * the runtime: conversions between every pair as hop/runtime.h documents
 * them (integers wrap, floats saturate, f16 rounds to nearest even),
 * wrapping arithmetic, mixed signed/unsigned promotion, f16 arithmetic that
 * rounds each result as NumPy's float16 does, reductions (sum of u8 is u64),
 * matmul, where, cat, factories and nonzero.  Expected values were taken
 * from NumPy 1.24 where NumPy defines them.
 */
#include "test_runtime_util.h"

#include <stdlib.h>

static const hop_dtype SMALL[] = {HOP_I8, HOP_U8, HOP_I16, HOP_U16, HOP_U32, HOP_U64, HOP_F16};

static uint64_t
u64_at(const hop_tensor *t, int64_t i)
{
    return ((const uint64_t *)t->data)[i * t->strides[0]];
}

static uint16_t
f16_at(const hop_tensor *t, int64_t i)
{
    return ((const uint16_t *)t->data)[i * t->strides[0]];
}

/* ------------------------------------------------------------ conversions */

static void
test_to_between_small_integers_wraps_like_numpy_astype(void **state)
{
    (void)state;
    const double v[] = {-129, -1, 0, 127, 128, 255, 256, 300};
    hop_tensor *x = make(HOP_I16, 1, SIZES(8), v);
    hop_tensor *i8 = OP(to, TA(x), DA(HOP_I8));
    CHECK(i8, HOP_I8, (8), 127, -1, 0, 127, -128, -1, 0, 44);
    hop_tensor *u8 = OP(to, TA(x), DA(HOP_U8));
    CHECK(u8, HOP_U8, (8), 127, 255, 0, 127, 128, 255, 0, 44);
    hop_tensor *u64 = OP(to, TA(x), DA(HOP_U64));
    assert_true(u64_at(u64, 0) == (uint64_t)0 - 129 && u64_at(u64, 1) == UINT64_MAX);
    assert_true(u64_at(u64, 7) == 300);
    /* u64 beyond int64 wraps into i64 and converts exactly to f64 */
    hop_tensor *big = hop_tensor_empty(HOP_U64, 1, SIZES(2));
    ((uint64_t *)big->data)[0] = UINT64_MAX;
    ((uint64_t *)big->data)[1] = (uint64_t)1 << 63;
    hop_tensor *bi = OP(to, TA(big), DA(HOP_I64));
    CHECK(bi, HOP_I64, (2), -1, -9223372036854775808.0);
    hop_tensor *bf = OP(to, TA(big), DA(HOP_F64));
    CHECK(bf, HOP_F64, (2), 18446744073709551616.0, 9223372036854775808.0);
    hop_tensor *bb = OP(to, TA(big), DA(HOP_BOOL));
    CHECK(bb, HOP_BOOL, (2), 1, 1);
    hop_tensor *all[] = {x, i8, u8, u64, big, bi, bf, bb};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

static void
test_to_from_floats_saturates_and_rounds_to_f16(void **state)
{
    (void)state;
    const double v[] = {-1.5, 300.7, NAN, 1e20, -1e20};
    hop_tensor *x = make(HOP_F64, 1, SIZES(5), v);
    hop_tensor *u8 = OP(to, TA(x), DA(HOP_U8));
    CHECK(u8, HOP_U8, (5), 0, 255, 0, 255, 0);
    hop_tensor *i8 = OP(to, TA(x), DA(HOP_I8));
    CHECK(i8, HOP_I8, (5), -1, 127, 0, 127, -128);
    hop_tensor *i16 = OP(to, TA(x), DA(HOP_I16));
    CHECK(i16, HOP_I16, (5), -1, 300, 0, 32767, -32768);
    hop_tensor *u64 = OP(to, TA(x), DA(HOP_U64));
    assert_true(u64_at(u64, 0) == 0 && u64_at(u64, 1) == 300 && u64_at(u64, 2) == 0);
    assert_true(u64_at(u64, 3) == UINT64_MAX && u64_at(u64, 4) == 0);
    hop_tensor *h = OP(to, TA(x), DA(HOP_F16));
    CHECK(h, HOP_F16, (5), -1.5, 300.75, NAN, INFINITY, -INFINITY);
    /* f16 back to everything: exact */
    hop_tensor *hs = OP(slice, TA(h), IA(0), IA(0), IA(2), IA(1));
    for (size_t j = 0; j < N_(SMALL); j++) {
        hop_tensor *y = OP(to, TA(hs), DA(SMALL[j]));
        double want0 = SMALL[j] == HOP_F16 ? -1.5 : hop_dtype_is_unsigned(SMALL[j]) ? 0 : -1;
        assert_true(elem(y, 0) == want0 && elem(y, 1) == (SMALL[j] == HOP_F16  ? 300.75
                                                          : SMALL[j] == HOP_I8 ? 127
                                                          : SMALL[j] == HOP_U8 ? 255
                                                                               : 300));
        hop_tensor_release(y);
    }
    hop_tensor *all[] = {x, u8, i8, i16, u64, h, hs};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

/* ------------------------------------------------------------ arithmetic */

static void
test_small_integer_arithmetic_wraps_around(void **state)
{
    (void)state;
    hop_tensor *a8 = make(HOP_I8, 1, SIZES(2), (double[]){100, -100});
    hop_tensor *s8 = OP(add, TA(a8), TA(a8));
    CHECK(s8, HOP_I8, (2), -56, 56);
    hop_tensor *n8 = OP(neg, TA(s8));
    CHECK(n8, HOP_I8, (2), 56, -56);
    hop_tensor *m8 = make(HOP_I8, 1, SIZES(2), (double[]){-128, 2});
    hop_tensor *abs8 = OP(abs, TA(m8));
    CHECK(abs8, HOP_I8, (2), -128, 2);
    hop_tensor *p8 = OP(pow, TA(m8), IA(7));
    CHECK(p8, HOP_I8, (2), 0, -128);
    hop_tensor *u = make(HOP_U8, 1, SIZES(3), (double[]){200, 3, 1});
    hop_tensor *su = OP(add, TA(u), IA(100));
    CHECK(su, HOP_U8, (3), 44, 103, 101);
    hop_tensor *du = OP(sub, TA(u), IA(5));
    CHECK(du, HOP_U8, (3), 195, 254, 252);
    hop_tensor *nu = OP(neg, TA(u));
    CHECK(nu, HOP_U8, (3), 56, 253, 255);
    hop_tensor *au = OP(abs, TA(u));
    CHECK(au, HOP_U8, (3), 200, 3, 1);
    hop_tensor *i16 = make(HOP_I16, 1, SIZES(1), (double[]){300});
    hop_tensor *sq = OP(mul, TA(i16), TA(i16));
    CHECK(sq, HOP_I16, (1), 24464);
    hop_tensor *z = make(HOP_U64, 1, SIZES(1), (double[]){0});
    hop_tensor *zm = OP(sub, TA(z), IA(1));
    assert_true(u64_at(zm, 0) == UINT64_MAX);
    hop_tensor *zmax = OP(maximum, TA(zm), IA(3));
    assert_true(u64_at(zmax, 0) == UINT64_MAX); /* compared unsigned */
    hop_tensor *gt = OP(gt, TA(zm), IA(1));
    CHECK(gt, HOP_BOOL, (1), 1);
    hop_tensor *all[] = {a8, s8, n8, m8, abs8, p8, u, su, du, nu, au, i16, sq, z, zm, zmax, gt};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

static void
test_signed_with_unsigned_promotes_to_a_type_holding_both(void **state)
{
    (void)state;
    hop_tensor *u = make(HOP_U8, 1, SIZES(2), (double[]){255, 200});
    hop_tensor *s = make(HOP_I8, 1, SIZES(2), (double[]){-1, -100});
    hop_tensor *sum = OP(add, TA(u), TA(s));
    CHECK(sum, HOP_I16, (2), 254, 100);
    hop_tensor *lt = OP(lt, TA(s), TA(u));
    CHECK(lt, HOP_BOOL, (2), 1, 1);
    hop_tensor *u64 = hop_tensor_empty(HOP_U64, 1, SIZES(1));
    ((uint64_t *)u64->data)[0] = (uint64_t)1 << 63;
    hop_tensor *i64 = make(HOP_I64, 1, SIZES(1), (double[]){-1});
    hop_tensor *mixed = OP(add, TA(u64), TA(i64));
    CHECK(mixed, HOP_F64, (1), 9223372036854775808.0 - 1);
    /* u16 and u32 (NumPy's rule: the narrowest signed type holding both) */
    hop_tensor *u16 = make(HOP_U16, 1, SIZES(2), (double[]){65535, 3});
    hop_tensor *i16 = make(HOP_I16, 1, SIZES(2), (double[]){-1, -4});
    hop_tensor *u32 = make(HOP_U32, 1, SIZES(2), (double[]){4294967295.0, 1});
    hop_tensor *i32 = make(HOP_I32, 1, SIZES(2), (double[]){-1, -2});
    hop_tensor *s16 = OP(add, TA(u16), TA(i16));
    CHECK(s16, HOP_I32, (2), 65534, -1);
    hop_tensor *s32 = OP(add, TA(u32), TA(i32));
    CHECK(s32, HOP_I64, (2), 4294967294.0, -1);
    hop_tensor *uu = OP(add, TA(u16), TA(u32));
    CHECK(uu, HOP_U32, (2), 65534, 4); /* wraps in u32 */
    hop_tensor *w16 = OP(mul, TA(u16), TA(u16));
    CHECK(w16, HOP_U16, (2), 1, 9); /* 65535 * 65535 wraps to 1 */
    hop_tensor *all[] = {u, s, sum, lt, u64, i64, mixed, u16, i16, u32, i32, s16, s32, uu, w16};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

static void
test_f16_arithmetic_rounds_each_result_like_numpy(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F16, 1, SIZES(4), (double[]){1, 2048, 65504, 1});
    hop_tensor *b = make(HOP_F16, 1, SIZES(4), (double[]){0x1p-11, 1, 2, 3});
    hop_tensor *s = OP(add, TA(a), TA(b));
    assert_true(f16_at(s, 0) == 0x3c00 && f16_at(s, 1) == 0x6800); /* ties to even */
    hop_tensor *p = OP(mul, TA(a), TA(b));
    assert_true(f16_at(p, 2) == 0x7c00); /* overflow to inf */
    hop_tensor *q = OP(div, TA(a), TA(b));
    assert_true(f16_at(q, 3) == 0x3555 && q->dtype == HOP_F16);
    hop_tensor *one = make(HOP_F16, 1, SIZES(2), (double[]){1, 2});
    hop_tensor *e = OP(exp, TA(one));
    assert_true(f16_at(e, 0) == 0x4170);
    hop_tensor *r = OP(sqrt, TA(one));
    assert_true(f16_at(r, 1) == 0x3da8);
    /* a weak Python scalar keeps f16: 0.1 * 3 rounds 0.1 first, as NumPy */
    hop_tensor *tenth = make(HOP_F16, 1, SIZES(1), (double[]){0.1});
    hop_tensor *t3 = OP(mul, TA(tenth), IA(3));
    assert_true(t3->dtype == HOP_F16 && f16_at(t3, 0) == 0x34cc);
    /* strided and broadcast f16 operands, converted per block */
    hop_tensor *m = make(HOP_F16, 2, SIZES(2, 3), (double[]){1, 2, 3, 4, 5, 6});
    hop_tensor *mt = OP(transpose, TA(m), IA(0), IA(1));
    hop_tensor *row = make(HOP_F16, 1, SIZES(2), (double[]){0.5, -1});
    hop_tensor *mr = OP(mul, TA(mt), TA(row));
    CHECK(mr, HOP_F16, (3, 2), 0.5, -4, 1, -5, 1.5, -6);
    hop_tensor *all[] = {a, b, s, p, q, one, e, r, tenth, t3, m, mt, row, mr};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

/* ------------------------------------------------------------ reductions */

static void
test_reductions_of_small_types_widen_like_numpy(void **state)
{
    (void)state;
    hop_tensor *u = make(HOP_U8, 1, SIZES(3), (double[]){200, 100, 255});
    hop_tensor *su = OP(sum, TA(u), NA(), BA(false));
    CHECK(su, HOP_U64, (), 555);
    hop_tensor *am = OP(argmax, TA(u), NA(), BA(false));
    CHECK(am, HOP_I64, (), 2);
    hop_tensor *mn = OP(amin, TA(u), NA(), BA(false));
    CHECK(mn, HOP_U8, (), 100);
    hop_tensor *s = make(HOP_I8, 2, SIZES(2, 2), (double[]){100, 100, -128, -1});
    hop_tensor *ss = OP(sum, TA(s), IA(1), BA(true));
    CHECK(ss, HOP_I64, (2, 1), 200, -129);
    hop_tensor *big = hop_tensor_empty(HOP_U64, 1, SIZES(3));
    ((uint64_t *)big->data)[0] = 1;
    ((uint64_t *)big->data)[1] = (uint64_t)1 << 63;
    ((uint64_t *)big->data)[2] = 7;
    hop_tensor *bmax = OP(amax, TA(big), NA(), BA(false));
    assert_true(((uint64_t *)bmax->data)[0] == (uint64_t)1 << 63); /* not a negative i64 */
    hop_tensor *bam = OP(argmax, TA(big), IA(0), BA(false));
    CHECK(bam, HOP_I64, (), 1);
    hop_tensor *h = make(HOP_F16, 1, SIZES(2), (double[]){65504, 65504});
    hop_tensor *hs = OP(sum, TA(h), NA(), BA(false));
    CHECK(hs, HOP_F16, (), INFINITY);
    hop_tensor *h2 = make(HOP_F16, 1, SIZES(3), (double[]){1, 2, NAN});
    hop_tensor *hm = OP(mean, TA(h2), IA(0), BA(false));
    CHECK(hm, HOP_F16, (), NAN);
    hop_tensor *hx = OP(amax, TA(h2), NA(), BA(false));
    CHECK(hx, HOP_F16, (), NAN);
    hop_tensor *all[] = {u, su, am, mn, s, ss, big, bmax, bam, h, hs, h2, hm, hx};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

/* ------------------------------------------------------------ the rest */

static void
test_matmul_where_cat_factories_and_nonzero_on_small_types(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I8, 2, SIZES(1, 2), (double[]){100, 100});
    hop_tensor *b = make(HOP_I8, 2, SIZES(2, 1), (double[]){1, 2});
    hop_tensor *ab = OP(matmul, TA(a), TA(b));
    CHECK(ab, HOP_I8, (1, 1), 44);
    hop_tensor *ha = make(HOP_F16, 2, SIZES(1, 2), (double[]){1, 2});
    hop_tensor *hb = make(HOP_F16, 2, SIZES(2, 1), (double[]){3, 4});
    hop_tensor *hab = OP(matmul, TA(ha), TA(hb));
    CHECK(hab, HOP_F16, (1, 1), 11);
    hop_tensor *c = make(HOP_BOOL, 1, SIZES(2), (double[]){1, 0});
    hop_tensor *w = OP(where, TA(c), TA(ha), FA(0.5));
    CHECK(w, HOP_F16, (1, 2), 1, 0.5);
    hop_tensor *u = make(HOP_U8, 1, SIZES(2), (double[]){255, 0});
    hop_tensor *s = make(HOP_I8, 1, SIZES(1), (double[]){-1});
    hop_tensor *cat = OP(cat, hop_rt_list((hop_rt_arg[]){TA(u), TA(s)}, 2), IA(0));
    CHECK(cat, HOP_I16, (3), 255, 0, -1);
    hop_tensor *ar = OP(arange, IA(250), IA(260), IA(4), DA(HOP_U8));
    CHECK(ar, HOP_U8, (3), 250, 254, 2);
    hop_tensor *f = OP(full, hop_rt_list((hop_rt_arg[]){IA(2)}, 1), FA(0.1), DA(HOP_F16));
    assert_true(f16_at(f, 0) == 0x2e66 && f16_at(f, 1) == 0x2e66);
    hop_tensor *nz = OP(nonzero, TA(u));
    CHECK(nz, HOP_I64, (1, 1), 0);
    for (size_t i = 0; i < N_(SMALL); i++) {
        hop_tensor *o = OP(ones, hop_rt_list((hop_rt_arg[]){IA(2)}, 1), DA(SMALL[i]));
        CHECK(o, SMALL[i], (2), 1, 1);
        hop_tensor_release(o);
    }
    hop_tensor *all[] = {a, b, ab, ha, hb, hab, c, w, u, s, cat, ar, f, nz};
    for (size_t k = 0; k < N_(all); k++)
        hop_tensor_release(all[k]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_between_small_integers_wraps_like_numpy_astype),
        cmocka_unit_test(test_to_from_floats_saturates_and_rounds_to_f16),
        cmocka_unit_test(test_small_integer_arithmetic_wraps_around),
        cmocka_unit_test(test_signed_with_unsigned_promotes_to_a_type_holding_both),
        cmocka_unit_test(test_f16_arithmetic_rounds_each_result_like_numpy),
        cmocka_unit_test(test_reductions_of_small_types_widen_like_numpy),
        cmocka_unit_test(test_matmul_where_cat_factories_and_nonzero_on_small_types),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return failed;
}
