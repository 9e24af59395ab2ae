/*
 * tests/c/test_numpy_ops.c - the ops NumPy programs brought into the op
 * table, run eagerly against values NumPy 1.24 gives: floor_divide and
 * remainder (Python's rounding toward -inf, zero divisors, signed zeros,
 * inf), bitwise ops, sign/floor/ceil/round, the libm float functions,
 * prod/any/all/argmin, cumsum/cumprod (sequential, f16 rounded each step),
 * sort/argsort (stable, nan last, descending) and take (negative indices,
 * index shapes, strided inputs, HOP_INDEX for an index out of range); and
 * the dynamic indexing ops (a start read from a tensor, clamped).
 */
#include "test_runtime_util.h"

#define LIST(...) hop_rt_list((hop_rt_arg[]){__VA_ARGS__}, N_(((hop_rt_arg[]){__VA_ARGS__})))

static void
release_all(hop_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hop_tensor_release(ts[i]);
}
#define RELEASE(...) release_all((hop_tensor *[]){__VA_ARGS__}, N_(((hop_tensor *[]){__VA_ARGS__})))

static void
test_floor_divide_and_remainder_round_toward_minus_infinity(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I8, 1, SIZES(6), (double[]){-7, 7, -7, 7, 0, -128});
    hop_tensor *b = make(HOP_I8, 1, SIZES(6), (double[]){2, 2, -2, -2, 0, -1});
    hop_tensor *q = OP(floor_divide, TA(a), TA(b));
    CHECK(q, HOP_I8, (6), -4, 3, 3, -4, 0, -128); /* x // 0 is 0, MIN // -1 wraps */
    hop_tensor *r = OP(remainder, TA(a), TA(b));
    CHECK(r, HOP_I8, (6), 1, 1, -1, -1, 0, 0);
    hop_tensor *u = make(HOP_U64, 1, SIZES(2), (double[]){7, 5});
    hop_tensor *uq = OP(floor_divide, TA(u), IA(0));
    CHECK(uq, HOP_U64, (2), 0, 0);
    hop_tensor *ur = OP(remainder, TA(u), IA(3));
    CHECK(ur, HOP_U64, (2), 1, 2);
    hop_tensor *fa =
        make(HOP_F64, 1, SIZES(7), (double[]){-7.5, 7.5, 1.0, -0.0, 5.0, INFINITY, 1.0});
    hop_tensor *fb = make(HOP_F64, 1, SIZES(7), (double[]){2, -2, 0.1, 3, 0, 2, INFINITY});
    hop_tensor *fq = OP(floor_divide, TA(fa), TA(fb));
    CHECK(fq, HOP_F64, (7), -4, -4, 9, -0.0, INFINITY, NAN, 0);
    assert_true(signbit(elem(fq, 3)) && !signbit(elem(fq, 6)));
    hop_tensor *fr = OP(remainder, TA(fa), TA(fb));
    CHECK(fr, HOP_F64, (7), 0.5, -0.5, 0.09999999999999995, 0, NAN, NAN, 1);
    hop_tensor *f32 = OP(to, TA(fa), DA(HOP_F32));
    hop_tensor *q32 = OP(floor_divide, TA(f32), FA(2));
    CHECK(q32, HOP_F32, (7), -4, 3, 0, -0.0, 2, NAN, 0);
    RELEASE(a, b, q, r, u, uq, ur, fa, fb, fq, fr, f32, q32);
}

static void
test_bitwise_ops_on_integers_and_bools(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I64, 1, SIZES(3), (double[]){7, -1, 12});
    hop_tensor *and = OP(bitwise_and, TA(a), IA(5));
    CHECK(and, HOP_I64, (3), 5, 5, 4);
    hop_tensor * or = OP(bitwise_or, TA(a), IA(8));
    CHECK(or, HOP_I64, (3), 15, -1, 12);
    hop_tensor * xor = OP(bitwise_xor, TA(a), TA(a));
    CHECK(xor, HOP_I64, (3), 0, 0, 0);
    hop_tensor *not = OP(bitwise_not, TA(a));
    CHECK(not, HOP_I64, (3), -8, 0, -13);
    hop_tensor *u = make(HOP_U8, 1, SIZES(2), (double[]){0, 15});
    hop_tensor *unot = OP(bitwise_not, TA(u));
    CHECK(unot, HOP_U8, (2), 255, 240);
    hop_tensor *b = make(HOP_BOOL, 1, SIZES(3), (double[]){1, 0, 1});
    hop_tensor *bx = OP(bitwise_xor, TA(b), BA(true));
    CHECK(bx, HOP_BOOL, (3), 0, 1, 0);
    hop_tensor *bn = OP(bitwise_not, TA(b));
    CHECK(bn, HOP_BOOL, (3), 0, 1, 0);
    RELEASE(a, and, or, xor, not, u, unot, b, bx, bn);
}

static void
test_sign_floor_ceil_round_and_libm_functions(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F64, 1, SIZES(5), (double[]){-2.5, 0.0, -0.0, NAN, 3});
    hop_tensor *s = OP(sign, TA(x));
    CHECK(s, HOP_F64, (5), -1, 0, 0, NAN, 1);
    assert_false(signbit(elem(s, 2)));
    hop_tensor *h = make(HOP_F32, 1, SIZES(5), (double[]){0.5, 1.5, 2.5, -0.5, -1.5});
    hop_tensor *rd = OP(round, TA(h));
    CHECK(rd, HOP_F32, (5), 0, 2, 2, -0.0, -2); /* half to even */
    hop_tensor *fl = OP(floor, TA(h));
    CHECK(fl, HOP_F32, (5), 0, 1, 2, -1, -2);
    hop_tensor *ce = OP(ceil, TA(h));
    CHECK(ce, HOP_F32, (5), 1, 2, 3, -0.0, -1);
    hop_tensor *i = make(HOP_I16, 1, SIZES(3), (double[]){-5, 0, 9});
    hop_tensor *si = OP(sign, TA(i));
    CHECK(si, HOP_I16, (3), -1, 0, 1);
    hop_tensor *fi = OP(floor, TA(i));
    CHECK(fi, HOP_I16, (3), -5, 0, 9);
    const double v[] = {0.25, 1, 3};
    hop_tensor *d = make(HOP_F64, 1, SIZES(3), v);
    static const hop_op ops[] = {HOP_OP_expm1, HOP_OP_log1p, HOP_OP_log2,  HOP_OP_log10,
                                 HOP_OP_exp2,  HOP_OP_tan,   HOP_OP_arctan};
    double (*const ref[])(double) = {expm1, log1p, log2, log10, exp2, tan, atan};
    for (size_t k = 0; k < N_(ops); k++) {
        hop_tensor *y = run_op(ops[k], (const hop_rt_arg[]){TA(d)}, 1);
        double want[3] = {ref[k](v[0]), ref[k](v[1]), ref[k](v[2])};
        check_values(y, want, 3);
        hop_tensor *yi = run_op(ops[k], (const hop_rt_arg[]){TA(i)}, 1);
        assert_int_equal(yi->dtype, HOP_F32); /* integers become f32, as exp's */
        RELEASE(y, yi);
    }
    RELEASE(x, s, h, rd, fl, ce, i, si, fi, d);
}

static void
test_prod_any_all_and_argmin_reduce_like_numpy(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I8, 2, SIZES(2, 3), (double[]){1, 2, 3, 4, 5, 6});
    hop_tensor *p = OP(prod, TA(a), IA(1), BA(false));
    CHECK(p, HOP_I64, (2), 6, 120);
    hop_tensor *f = make(HOP_F32, 2, SIZES(2, 3), (double[]){0.5, 2, 4, NAN, 1, 0});
    hop_tensor *pf = OP(prod, TA(f), IA(1), BA(true));
    CHECK(pf, HOP_F32, (2, 1), 4, NAN);
    hop_tensor *any = OP(any, TA(f), IA(0), BA(false));
    CHECK(any, HOP_BOOL, (3), 1, 1, 1); /* nan is nonzero */
    hop_tensor *all = OP(all, TA(f), NA(), BA(false));
    CHECK(all, HOP_BOOL, (), 0);
    hop_tensor *e = hop_tensor_empty(HOP_F64, 2, SIZES(0, 2));
    hop_tensor *ea = OP(all, TA(e), IA(0), BA(false));
    CHECK(ea, HOP_BOOL, (2), 1, 1);
    hop_tensor *en = OP(any, TA(e), IA(0), BA(false));
    CHECK(en, HOP_BOOL, (2), 0, 0);
    hop_tensor *ep = OP(prod, TA(e), NA(), BA(false));
    CHECK(ep, HOP_F64, (), 1);
    hop_tensor *am = OP(argmin, TA(f), IA(1), BA(false));
    CHECK(am, HOP_I64, (2), 0, 0); /* the first nan wins, as NumPy's */
    hop_tensor *u = make(HOP_U8, 1, SIZES(4), (double[]){9, 3, 3, 200});
    hop_tensor *au = OP(argmin, TA(u), NA(), BA(false));
    CHECK(au, HOP_I64, (), 1);
    RELEASE(a, p, f, pf, any, all, e, ea, en, ep, am, u, au);
}

static void
test_cumsum_and_cumprod_accumulate_in_order(void **state)
{
    (void)state;
    hop_tensor *h = make(HOP_F16, 1, SIZES(3), (double[]){60000, 10000, -20000});
    hop_tensor *hs = OP(cumsum, TA(h), IA(0));
    CHECK(hs, HOP_F16, (3), 60000, INFINITY, INFINITY); /* rounded at every step */
    hop_tensor *u = make(HOP_U8, 1, SIZES(3), (double[]){3, 4, 5});
    hop_tensor *up = OP(cumprod, TA(u), IA(0));
    CHECK(up, HOP_U64, (3), 3, 12, 60);
    hop_tensor *m = make(HOP_I32, 2, SIZES(2, 3), (double[]){1, 2, 3, 4, 5, 6});
    hop_tensor *mt = OP(transpose, TA(m), IA(0), IA(1)); /* strided lines */
    hop_tensor *c0 = OP(cumsum, TA(mt), IA(0));
    CHECK(c0, HOP_I64, (3, 2), 1, 4, 3, 9, 6, 15);
    hop_tensor *c1 = OP(cumsum, TA(mt), IA(-1));
    CHECK(c1, HOP_I64, (3, 2), 1, 5, 2, 7, 3, 9);
    hop_tensor *z = make(HOP_BOOL, 0, NULL, (double[]){1});
    hop_tensor *zs = OP(cumsum, TA(z), IA(0));
    CHECK(zs, HOP_I64, (), 1);
    RELEASE(h, hs, u, up, m, mt, c0, c1, z, zs);
}

static void
test_sort_and_argsort_are_stable_with_nan_last(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F64, 1, SIZES(6), (double[]){3, NAN, 1, 3, -INFINITY, 1});
    hop_tensor *s = OP(sort, TA(x), IA(0), BA(false));
    CHECK(s, HOP_F64, (6), -INFINITY, 1, 1, 3, 3, NAN);
    hop_tensor *a = OP(argsort, TA(x), IA(0), BA(false));
    CHECK(a, HOP_I64, (6), 4, 2, 5, 0, 3, 1);
    hop_tensor *d = OP(argsort, TA(x), IA(0), BA(true));
    CHECK(d, HOP_I64, (6), 1, 0, 3, 2, 5, 4); /* ties keep their order */
    hop_tensor *u = hop_tensor_empty(HOP_U64, 2, SIZES(2, 2));
    uint64_t *uv = u->data;
    uv[0] = UINT64_MAX, uv[1] = 1, uv[2] = 5, uv[3] = (uint64_t)1 << 63;
    hop_tensor *ut = OP(transpose, TA(u), IA(0), IA(1));
    hop_tensor *us = OP(argsort, TA(ut), IA(1), BA(false));
    CHECK(us, HOP_I64, (2, 2), 1, 0, 0, 1); /* unsigned order, strided lines */
    hop_tensor *uvals = OP(sort, TA(u), IA(0), BA(false));
    assert_true(((uint64_t *)uvals->data)[0] == 5 && ((uint64_t *)uvals->data)[1] == 1);
    RELEASE(x, s, a, d, u, ut, us, uvals);
}

static void
test_take_gathers_by_an_index_tensor_and_checks_its_range(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 2, SIZES(3, 4), (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    hop_tensor *i = make(HOP_I64, 2, SIZES(2, 2), (double[]){0, -1, 2, 2});
    hop_tensor *t0 = OP(take, TA(x), IA(0), TA(i));
    CHECK(t0, HOP_F32, (2, 2, 4), 0, 1, 2, 3, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11);
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *j = make(HOP_U8, 1, SIZES(2), (double[]){2, 0});
    hop_tensor *t1 = OP(take, TA(xt), IA(1), TA(j));
    CHECK(t1, HOP_F32, (4, 2), 8, 0, 9, 1, 10, 2, 11, 3);
    hop_tensor *bad = make(HOP_I32, 1, SIZES(3), (double[]){0, 4, -5});
    EXPECT_FAIL(HOP_INDEX, "take: index 4 is out of bounds for dim 1 with size 4", take, TA(x),
                IA(1), TA(bad));
    hop_tensor *last = OP(slice, TA(bad), IA(0), IA(2), NA(), IA(1));
    EXPECT_FAIL(HOP_INDEX, "take: index -5 is out of bounds for dim 1 with size 4", take, TA(x),
                IA(-1), TA(last));
    RELEASE(x, i, t0, xt, j, t1, bad, last);
}

/* JAX's clamping: from the end when negative, then into [0, n - size]. */
static void
test_dynamic_slice_and_update_clamp_their_start_read_from_a_tensor(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 2, SIZES(4, 2), (double[]){0, 1, 2, 3, 4, 5, 6, 7});
    hop_tensor *u = make(HOP_F32, 2, SIZES(2, 2), (double[]){-1, -2, -3, -4});
    int64_t starts[] = {1, 3, 9, -1, -4, -9};
    int first[] = {1, 2, 2, 2, 0, 0}; /* the row the slice starts at */
    for (size_t k = 0; k < N_(starts); k++) {
        hop_tensor *i = make(HOP_I32, 0, NULL, (double[]){(double)starts[k]});
        hop_tensor *s = OP(dynamic_slice, TA(x), IA(0), TA(i), IA(2));
        double r = 2.0 * first[k];
        CHECK(s, HOP_F32, (2, 2), r, r + 1, r + 2, r + 3);
        assert_true(hop_tensor_shares_storage(s, x)); /* a view */
        /* no size: the element, the dim dropped (x[i]) */
        hop_tensor *one = OP(dynamic_slice, TA(x), IA(1), TA(i), NA());
        int c = starts[k] < 0 ? (starts[k] < -2 ? 0 : (int)starts[k] + 2)
                              : (starts[k] > 1 ? 1 : (int)starts[k]);
        CHECK(one, HOP_F32, (4), c, 2 + c, 4 + c, 6 + c);
        hop_tensor_release(one);
        hop_tensor *w = OP(dynamic_update_slice, TA(x), TA(u), IA(0), TA(i));
        double want[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        for (int j = 0; j < 4; j++)
            want[2 * first[k] + j] = -1 - j;
        CHECK(w, HOP_F32, (4, 2), want[0], want[1], want[2], want[3], want[4], want[5], want[6],
              want[7]);
        RELEASE(i, s, w);
    }
    /* an INT start, along dim 1 of a transposed (strided) x */
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1));
    hop_tensor *col = make(HOP_F32, 2, SIZES(2, 1), (double[]){9, 8});
    hop_tensor *w = OP(dynamic_update_slice, TA(xt), TA(col), IA(1), IA(-1));
    CHECK(w, HOP_F32, (2, 4), 0, 2, 4, 9, 1, 3, 5, 8);
    /* mask_gradient is x itself */
    hop_tensor *m = make(HOP_BOOL, 1, SIZES(2), (double[]){1, 0});
    hop_tensor *g = OP(mask_gradient, TA(x), TA(m));
    assert_true(hop_tensor_shares_storage(g, x) && g->data == x->data);
    RELEASE(x, u, xt, col, w, m, g);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_divide_and_remainder_round_toward_minus_infinity),
        cmocka_unit_test(test_bitwise_ops_on_integers_and_bools),
        cmocka_unit_test(test_sign_floor_ceil_round_and_libm_functions),
        cmocka_unit_test(test_prod_any_all_and_argmin_reduce_like_numpy),
        cmocka_unit_test(test_cumsum_and_cumprod_accumulate_in_order),
        cmocka_unit_test(test_sort_and_argsort_are_stable_with_nan_last),
        cmocka_unit_test(test_take_gathers_by_an_index_tensor_and_checks_its_range),
        cmocka_unit_test(test_dynamic_slice_and_update_clamp_their_start_read_from_a_tensor),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
