/*
 * tests/c/test_numpy_ops.c - the ops NumPy programs brought into the op
 * table, run eagerly against values NumPy 1.24 gives: floor_divide and
 * remainder (Python's rounding toward -inf, zero divisors, signed zeros,
 * inf), bitwise ops, sign/floor/ceil/round, the libm float functions,
 * prod/any/all/argmin, cumsum/cumprod (sequential, f16 rounded each step),
 * sort/argsort (stable, nan last, descending), take (negative indices,
 * index shapes, strided inputs, HOP_INDEX for an index out of range), the
 * dynamic indexing ops (a start read from a tensor, clamped), and the
 * ufuncs of #29: hyperbolic and inverse trig functions, cbrt, i0/i1,
 * arctan2 hypot copysign nextafter fmod ldexp, logaddexp and logaddexp2
 * (NumPy's bits), gcd lcm and shifts, put
 * (set, add, and the combine codes of ufunc.at), searchsorted and bitcast;
 * and the FFT plan cache shared by threads.
 */
#include "test_runtime_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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
    hop_tensor *s = OP(sort, TA(x), IA(0), BA(false), IA(0));
    CHECK(s, HOP_F64, (6), -INFINITY, 1, 1, 3, 3, NAN);
    hop_tensor *a = OP(argsort, TA(x), IA(0), BA(false), IA(0));
    CHECK(a, HOP_I64, (6), 4, 2, 5, 0, 3, 1);
    hop_tensor *d = OP(argsort, TA(x), IA(0), BA(true), IA(0));
    CHECK(d, HOP_I64, (6), 1, 0, 3, 2, 5, 4); /* ties keep their order */
    hop_tensor *u = hop_tensor_empty(HOP_U64, 2, SIZES(2, 2));
    uint64_t *uv = u->data;
    uv[0] = UINT64_MAX, uv[1] = 1, uv[2] = 5, uv[3] = (uint64_t)1 << 63;
    hop_tensor *ut = OP(transpose, TA(u), IA(0), IA(1));
    hop_tensor *us = OP(argsort, TA(ut), IA(1), BA(false), IA(0));
    CHECK(us, HOP_I64, (2, 2), 1, 0, 0, 1); /* unsigned order, strided lines */
    hop_tensor *uvals = OP(sort, TA(u), IA(0), BA(false), IA(0));
    assert_true(((uint64_t *)uvals->data)[0] == 5 && ((uint64_t *)uvals->data)[1] == 1);
    RELEASE(x, s, a, d, u, ut, us, uvals);
}

/* NumPy 1.24's argsort of these 20 ties, per kind: its introsort
 * partitions from 17 elements on, so equal keys leave their order. */
static void
test_quick_and_heap_kinds_order_ties_as_numpy(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F64, 1, SIZES(20),
                         (double[]){3, 1, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 0});
    hop_tensor *q = OP(argsort, TA(x), IA(0), BA(false), IA(HOP_SORT_QUICK));
    CHECK(q, HOP_I64, (20), 19, 15, 12, 18, 6, 9, 3, 1, 8, 11, 2, 14, 17, 5, 4, 7, 10, 13, 16, 0);
    hop_tensor *h = OP(argsort, TA(x), IA(0), BA(false), IA(HOP_SORT_HEAP));
    CHECK(h, HOP_I64, (20), 19, 15, 6, 9, 12, 18, 1, 3, 2, 11, 5, 17, 8, 14, 13, 10, 4, 16, 7, 0);
    hop_tensor *s = OP(argsort, TA(x), IA(0), BA(false), IA(HOP_SORT_STABLE));
    CHECK(s, HOP_I64, (20), 19, 1, 3, 6, 9, 12, 15, 18, 2, 5, 8, 11, 14, 17, 0, 4, 7, 10, 13, 16);
    RELEASE(x, q, h, s);
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

/* The further float functions against libm (SLEEF's are within 1 ulp; the
 * domain edges, where SLEEF hands over to libm, exactly), over both
 * backends, and integer inputs become f32. */
static void
test_hyperbolic_and_inverse_trig_functions_match_libm(void **state)
{
    (void)state;
    const double v[] = {-0.75, 0.0, 0.5, 0.999, 3.0, 20.0, 709.5, -710.0, 1e200, NAN};
    static const hop_op ops[] = {HOP_OP_sinh,    HOP_OP_cosh,    HOP_OP_arcsin,  HOP_OP_arccos,
                                 HOP_OP_arcsinh, HOP_OP_arccosh, HOP_OP_arctanh, HOP_OP_cbrt};
    double (*const ref[])(double) = {sinh, cosh, asin, acos, asinh, acosh, atanh, cbrt};
    hop_tensor *d = make(HOP_F64, 1, SIZES(10), v);
    hop_tensor *f = OP(to, TA(d), DA(HOP_F32));
    float (*const reff[])(float) = {sinhf, coshf, asinf, acosf, asinhf, acoshf, atanhf, cbrtf};
    for (size_t k = 0; k < N_(ops); k++) {
        hop_tensor *y = run_op(ops[k], (const hop_rt_arg[]){TA(d)}, 1);
        double want[10], wantf[10];
        for (int i = 0; i < 10; i++) {
            want[i] = ref[k](v[i]);
            wantf[i] = reff[k]((float)v[i]);
        }
        check_close(y, want, 10, 4e-16);
        hop_tensor *yf = run_op(ops[k], (const hop_rt_arg[]){TA(f)}, 1);
        assert_int_equal(yf->dtype, HOP_F32);
        check_close(yf, wantf, 10, 2.5e-7);
        RELEASE(y, yf);
    }
    hop_tensor *i = make(HOP_I32, 1, SIZES(2), (double[]){1, 8});
    hop_tensor *ci = OP(cbrt, TA(i));
    CHECK(ci, HOP_F32, (2), 1, 2);
    RELEASE(d, f, i, ci);
}

/* i0 is NumPy's Cephes series (numpy.i0's values); i1 Cephes' (scipy's). */
static void
test_bessel_i0_and_i1_follow_the_cephes_series(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F64, 1, SIZES(6), (double[]){0, 1, -2.5, 8, 10, NAN});
    hop_tensor *i0 = OP(i0, TA(x));
    const double want0[] = {
        1.0, 1.2660658777520082, 3.2898391440501231, 427.56411572180474, 2815.716628466254, NAN};
    check_close(i0, want0, 6, 1e-15);
    hop_tensor *i1 = OP(i1, TA(x));
    const double want1[] = {
        0.0, 0.56515910399248515, -2.5167162452886984, 399.87313678255992, 2670.9883037012551, NAN};
    check_close(i1, want1, 6, 1e-15);
    RELEASE(x, i0, i1);
}

static void
test_two_operand_float_functions(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F64, 1, SIZES(5), (double[]){1, -1, 0, -0.0, 3});
    hop_tensor *b = make(HOP_F64, 1, SIZES(5), (double[]){-1, -1, -0.0, 2, 4});
    hop_tensor *at = OP(arctan2, TA(a), TA(b));
    const double want[] = {atan2(1, -1), atan2(-1, -1), atan2(0, -0.0), atan2(-0.0, 2),
                           atan2(3, 4)};
    check_close(at, want, 5, 4e-16);
    hop_tensor *hy = OP(hypot, TA(a), FA(4));
    const double wh[] = {hypot(1, 4), hypot(1, 4), 4, 4, 5};
    check_close(hy, wh, 5, 2e-16);
    hop_tensor *cs = OP(copysign, TA(b), TA(a));
    CHECK(cs, HOP_F64, (5), 1, -1, 0, -2, 4);
    assert_true(!signbit(elem(cs, 2)) && signbit(elem(cs, 3)));
    hop_tensor *na = OP(nextafter, TA(a), FA(10));
    CHECK(na, HOP_F64, (5), nextafter(1, 10), nextafter(-1, 10), nextafter(0, 10),
          nextafter(-0.0, 10), nextafter(3, 10));
    hop_tensor *fm = OP(fmod, TA(b), FA(-0.75));
    CHECK(fm, HOP_F64, (5), -0.25, -0.25, -0.0, 0.5, 0.25); /* the dividend's sign */
    hop_tensor *n = make(HOP_I64, 1, SIZES(5), (double[]){3, -1, 5000, -5000, 0});
    hop_tensor *ld = OP(ldexp, TA(a), TA(n));
    CHECK(ld, HOP_F64, (5), 8, -0.5, 0, -0.0, 3);
    hop_tensor *big = make(HOP_F64, 1, SIZES(2), (double[]){1e-300, 1e300});
    hop_tensor *e = make(HOP_I64, 1, SIZES(2), (double[]){1100, -1100});
    hop_tensor *lb = OP(ldexp, TA(big), TA(e)); /* one rounding, as C's ldexp */
    CHECK(lb, HOP_F64, (2), ldexp(1e-300, 1100), ldexp(1e300, -1100));
    hop_tensor *i = make(HOP_I32, 1, SIZES(2), (double[]){1, 2});
    hop_tensor *ai = OP(arctan2, TA(i), IA(1));
    assert_int_equal(ai->dtype, HOP_F32);
    RELEASE(a, b, at, hy, cs, na, fm, n, ld, big, e, lb, i, ai);
}

/* logaddexp and logaddexp2 give NumPy 1.24's bits (its values below): equal
 * operands, infinities of one sign and of both, a NaN, a difference whose
 * exp underflows; float32 computes in float32 (NumPy's 2.3132617f, where
 * hop's former composition gave 2.3132615f) and float16 in float32, rounded
 * once; int operands give float32. */
static void
test_logaddexp_is_numpys_npy_logaddexp(void **state)
{
    (void)state;
    hop_tensor *a =
        make(HOP_F64, 1, SIZES(8), (double[]){1, -INFINITY, INFINITY, INFINITY, NAN, 0, 1000, -3});
    hop_tensor *b = make(HOP_F64, 1, SIZES(8),
                         (double[]){2, -INFINITY, -INFINITY, INFINITY, 1, 0, -1000, -3.5});
    hop_tensor *e = OP(logaddexp, TA(a), TA(b));
    CHECK(e, HOP_F64, (8), 0x1.2818f57f7d825p+1, -INFINITY, INFINITY, INFINITY, NAN,
          0x1.62e42fefa39efp-1, 1000, -0x1.43517204947f4p+1);
    hop_tensor *e2 = OP(logaddexp2, TA(a), TA(b));
    CHECK(e2, HOP_F64, (8), 0x1.4ae00d1cfdeb4p+1, -INFINITY, INFINITY, INFINITY, NAN, 1, 1000,
          -0x1.1d3dbdc9e5505p+1);
    hop_tensor *a32 = make(HOP_F32, 1, SIZES(1), (double[]){1});
    hop_tensor *f = OP(logaddexp, TA(a32), FA(2));
    CHECK(f, HOP_F32, (1), 0x1.2818f6p+1);
    hop_tensor *f2 = OP(logaddexp2, TA(a32), FA(2));
    CHECK(f2, HOP_F32, (1), 0x1.4ae00cp+1);
    hop_tensor *a16 = make(HOP_F16, 1, SIZES(1), (double[]){1});
    hop_tensor *h = OP(logaddexp, TA(a16), FA(2));
    CHECK(h, HOP_F16, (1), 0x1.28p+1);
    hop_tensor *i = make(HOP_I32, 1, SIZES(2), (double[]){1, 2});
    hop_tensor *ei = OP(logaddexp, TA(i), IA(1));
    assert_int_equal(ei->dtype, HOP_F32);
    RELEASE(a, b, e, e2, a32, f, f2, a16, h, i, ei);
}

/* NumPy's integer semantics: fmod and gcd/lcm on magnitudes, zero divisors
 * give 0, shifts by counts outside [0, width) give 0 or -1. */
static void
test_integer_fmod_gcd_lcm_and_shifts(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_I8, 1, SIZES(6), (double[]){7, -7, 7, -128, 12, 0});
    hop_tensor *b = make(HOP_I8, 1, SIZES(6), (double[]){3, 3, 0, -1, -18, 0});
    hop_tensor *fm = OP(fmod, TA(a), TA(b));
    CHECK(fm, HOP_I8, (6), 1, -1, 0, 0, 12, 0);
    hop_tensor *g = OP(gcd, TA(a), TA(b));
    CHECK(g, HOP_I8, (6), 1, 1, 7, 1, 6, 0);
    hop_tensor *l = OP(lcm, TA(a), TA(b));
    CHECK(l, HOP_I8, (6), 21, 21, 0, -128, 36, 0);
    hop_tensor *x = make(HOP_I16, 1, SIZES(5), (double[]){1, -8, 3, -1, 5});
    hop_tensor *c = make(HOP_I16, 1, SIZES(5), (double[]){15, 1, 16, 20, -1});
    hop_tensor *ls = OP(left_shift, TA(x), TA(c));
    CHECK(ls, HOP_I16, (5), -32768, -16, 0, 0, 0);
    hop_tensor *rs = OP(right_shift, TA(x), TA(c));
    CHECK(rs, HOP_I16, (5), 0, -4, 0, -1, 0);
    hop_tensor *u = make(HOP_U8, 1, SIZES(3), (double[]){200, 9, 0});
    hop_tensor *ug = OP(gcd, TA(u), IA(6));
    CHECK(ug, HOP_U8, (3), 2, 3, 6);
    hop_tensor *ul = OP(lcm, TA(u), IA(6));
    CHECK(ul, HOP_U8, (3), 88, 18, 0); /* 600 wraps to 88, as NumPy's */
    RELEASE(a, b, fm, g, l, x, c, ls, rs, u, ug, ul);
}

/* put sets (last write wins) or adds (NumPy's add.at) at flat indices;
 * every index and the value count are checked before anything is written. */
static void
test_put_sets_or_accumulates_at_flat_indices(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 2, SIZES(2, 3), (double[]){0, 1, 2, 3, 4, 5});
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1)); /* strided [3, 2] */
    hop_tensor *idx = make(HOP_I32, 2, SIZES(2, 2), (double[]){0, -1, 0, 2});
    hop_tensor *v = make(HOP_F32, 2, SIZES(2, 2), (double[]){10, 20, 30, 40});
    hop_tensor *p = OP(put, TA(xt), TA(idx), TA(v), BA(false));
    CHECK(p, HOP_F32, (3, 2), 30, 3, 40, 4, 2, 20);
    hop_tensor *pa = OP(put, TA(xt), TA(idx), TA(v), BA(true));
    CHECK(pa, HOP_F32, (3, 2), 40, 3, 41, 4, 2, 25);
    hop_tensor *one = make(HOP_F32, 0, SIZES(0), (double[]){7});
    hop_tensor *p1 = OP(put, TA(x), TA(idx), TA(one), BA(false));
    CHECK(p1, HOP_F32, (2, 3), 7, 1, 7, 3, 4, 7);
    hop_tensor *h = make(HOP_F16, 1, SIZES(1), (double[]){2048});
    hop_tensor *hi = make(HOP_I64, 1, SIZES(2), (double[]){0, 0});
    hop_tensor *hv = make(HOP_F16, 1, SIZES(2), (double[]){1, 1});
    hop_tensor *ha = OP(put, TA(h), TA(hi), TA(hv), BA(true));
    CHECK(ha, HOP_F16, (1), 2048); /* each addition rounds to f16 */
    hop_tensor *six = make(HOP_I64, 1, SIZES(1), (double[]){6});
    EXPECT_FAIL(HOP_INDEX, "put: index 6 is out of bounds for size 6", put, TA(x), TA(six), TA(one),
                BA(false));
    hop_tensor *three = make(HOP_F32, 1, SIZES(3), (double[]){1, 2, 3});
    EXPECT_FAIL(HOP_SHAPE, "put: cannot put 3 value(s) at 2 index(es)", put, TA(x), TA(hi),
                TA(three), BA(false));
    RELEASE(x, xt, idx, v, p, pa, one, p1, h, hi, hv, ha, six, three);
}

/* put with a combine code: op(x[k], v) once per index in order, computed
 * in values' dtype and cast back into x's (float to int as NumPy's x86-64
 * casts: through int32, out of range the minimum, then the low bits). */
static void
test_put_combines_in_values_dtype_in_index_order(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 1, SIZES(3), (double[]){1, 1, 1});
    hop_tensor *idx = make(HOP_I64, 1, SIZES(3), (double[]){0, 0, -1});
    hop_tensor *v = make(HOP_F64, 1, SIZES(3), (double[]){1.1, 1.3, NAN});
    hop_tensor *m = OP(put, TA(x), TA(idx), TA(v), IA(HOP_PUT_MUL));
    /* each f64 product rounded to f32 before the next: NumPy's 1.4300001 */
    float want = (float)((double)(float)1.1 * 1.3);
    CHECK(m, HOP_F32, (3), want, 1, NAN);
    hop_tensor *mx = OP(put, TA(x), TA(idx), TA(v), IA(HOP_PUT_MAX));
    CHECK(mx, HOP_F32, (3), (float)1.3, 1, NAN);
    hop_tensor *u = make(HOP_U8, 1, SIZES(2), (double[]){3, 200});
    hop_tensor *ui = make(HOP_I32, 1, SIZES(2), (double[]){0, 1});
    hop_tensor *uv = make(HOP_F64, 1, SIZES(2), (double[]){-5.5, 1e10});
    hop_tensor *ua = OP(put, TA(u), TA(ui), TA(uv), IA(HOP_PUT_ADD));
    CHECK(ua, HOP_U8, (2), 254, 0); /* -2.5 -> -2 -> 254; 1e10 -> INT32_MIN -> 0 */
    hop_tensor *b = make(HOP_BOOL, 1, SIZES(2), (double[]){0, 1});
    EXPECT_FAIL(HOP_DTYPE, "put: div cannot combine values i32[2] in their dtype", put, TA(u),
                TA(ui), TA(ui), IA(HOP_PUT_DIV));
    EXPECT_FAIL(HOP_INVALID, "put: 99 is not a combine code (0 to 19)", put, TA(u), TA(ui), TA(ui),
                IA(99));
    RELEASE(x, idx, v, m, mx, u, ui, uv, ua, b);
}

/* bitcast reads x's bytes in C order (a strided x too) as another dtype. */
static void
test_bitcast_reads_the_bytes_in_c_order(void **state)
{
    (void)state;
    hop_tensor *x = make(HOP_F32, 2, SIZES(2, 2), (double[]){1, -2, 0.5, 0});
    hop_tensor *xt = OP(transpose, TA(x), IA(0), IA(1)); /* 1, 0.5, -2, 0 */
    hop_tensor *i = OP(bitcast, TA(xt), DA(HOP_I32));
    CHECK(i, HOP_I32, (2, 2), 0x3f800000, 0x3f000000, (int32_t)0xc0000000, 0);
    hop_tensor *d = OP(bitcast, TA(x), DA(HOP_F64));
    CHECK(d, HOP_F64, (2, 1), -2.000000473111868, 5.222099017e-315); /* NumPy's */
    hop_tensor *b = OP(bitcast, TA(x), DA(HOP_U8));
    CHECK(b, HOP_U8, (2, 8), 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f, 0, 0, 0, 0);
    hop_tensor *odd = make(HOP_F32, 1, SIZES(3), (double[]){1, 2, 3});
    EXPECT_FAIL(HOP_SHAPE, "bitcast: the last dim of f32[3] does not split into whole items of f64",
                bitcast, TA(odd), DA(HOP_F64));
    hop_tensor *s = make(HOP_F32, 0, SIZES(0), (double[]){1});
    EXPECT_FAIL(HOP_SHAPE,
                "bitcast: a 0-d tensor f32[] cannot be read as f64, whose items have "
                "another size",
                bitcast, TA(s), DA(HOP_F64));
    RELEASE(x, xt, i, d, b, odd, s);
}

static void
test_searchsorted_finds_positions_with_nan_last(void **state)
{
    (void)state;
    hop_tensor *a = make(HOP_F64, 1, SIZES(5), (double[]){1, 2, 2, 3, NAN});
    hop_tensor *v = make(HOP_F64, 2, SIZES(2, 3), (double[]){0, 2, 2.5, 3, NAN, 9});
    hop_tensor *l = OP(searchsorted, TA(a), TA(v), BA(false));
    CHECK(l, HOP_I64, (2, 3), 0, 1, 3, 3, 4, 4);
    hop_tensor *r = OP(searchsorted, TA(a), TA(v), BA(true));
    CHECK(r, HOP_I64, (2, 3), 0, 3, 3, 4, 5, 4);
    hop_tensor *ia = make(HOP_U8, 1, SIZES(3), (double[]){1, 5, 200});
    hop_tensor *iv = make(HOP_U8, 1, SIZES(3), (double[]){0, 5, 255});
    hop_tensor *il = OP(searchsorted, TA(ia), TA(iv), BA(false));
    CHECK(il, HOP_I64, (3), 0, 1, 3);
    RELEASE(a, v, l, r, ia, iv, il);
}

/* FFT plans live in a cache of 64 (runtime/fft.c).  Two threads transform
 * 200 lengths each, one upward and one downward, so plans are made, shared
 * and evicted while the other thread may run them: an evicted plan is
 * destroyed by its last holder, neither freed under a run (ASan, valgrind)
 * nor leaked (the sanitizer tree's ctest checks leaks at exit).  The DFT
 * of n ones is n, then zeros. */
#define FFT_LENGTHS 200

static void *
transform_lengths(void *down)
{
    double *ones = malloc(FFT_LENGTHS * sizeof *ones);
    for (int i = 0; i < FFT_LENGTHS; i++)
        ones[i] = 1.0;
    long bad = 0;
    for (int i = 0; i < FFT_LENGTHS; i++) {
        int64_t n = down ? FFT_LENGTHS - i : i + 1;
        hop_tensor *x = make(HOP_F64, 1, SIZES(n), ones);
        /* rfft: n, then zeros; fft of that: n everywhere */
        hop_tensor *y = hop_eager_tensor(HOP_OP_rfft, (const hop_rt_arg[]){TA(x), IA(0), IA(0)}, 3);
        hop_tensor *z = y ? hop_eager_tensor(
                                HOP_OP_fft, (const hop_rt_arg[]){TA(y), IA(0), BA(false), IA(0)}, 4)
                          : NULL;
        const double *v = y ? y->data : NULL, *w = z ? z->data : NULL;
        double tol = 1e-12 * (double)n;
        if (w == NULL || fabs(v[0] - (double)n) > tol || fabs(v[1]) > tol ||
            fabs(w[0] - (double)n) > tol || fabs(w[1]) > tol ||
            (n > 1 && (fabs(v[2]) > tol || fabs(v[3]) > tol)))
            bad++;
        hop_tensor_release(z);
        hop_tensor_release(y);
        hop_tensor_release(x);
    }
    free(ones);
    hop_runtime_thread_cleanup();
    return (void *)(intptr_t)bad;
}

static void
test_fft_plans_evicted_while_another_thread_runs_them_are_freed_once(void **state)
{
    (void)state;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, transform_lengths, (void *)1), 0);
    void *mine = transform_lengths(NULL), *theirs;
    pthread_join(th, &theirs);
    assert_int_equal((intptr_t)mine, 0);
    assert_int_equal((intptr_t)theirs, 0);
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
        cmocka_unit_test(test_quick_and_heap_kinds_order_ties_as_numpy),
        cmocka_unit_test(test_take_gathers_by_an_index_tensor_and_checks_its_range),
        cmocka_unit_test(test_dynamic_slice_and_update_clamp_their_start_read_from_a_tensor),
        cmocka_unit_test(test_hyperbolic_and_inverse_trig_functions_match_libm),
        cmocka_unit_test(test_bessel_i0_and_i1_follow_the_cephes_series),
        cmocka_unit_test(test_two_operand_float_functions),
        cmocka_unit_test(test_logaddexp_is_numpys_npy_logaddexp),
        cmocka_unit_test(test_integer_fmod_gcd_lcm_and_shifts),
        cmocka_unit_test(test_put_sets_or_accumulates_at_flat_indices),
        cmocka_unit_test(test_put_combines_in_values_dtype_in_index_order),
        cmocka_unit_test(test_bitcast_reads_the_bytes_in_c_order),
        cmocka_unit_test(test_searchsorted_finds_positions_with_nan_last),
        cmocka_unit_test(test_fft_plans_evicted_while_another_thread_runs_them_are_freed_once),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
