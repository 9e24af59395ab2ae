/*
 * tests/c/test_sym.c - symbolic integers: interning and the canonical form
 * (algebra as pointer equality), simplification of floordiv/mod/max/min,
 * relations and connectives, printing, free symbols, substitution, evaluation
 * with Python semantics, misuse errors and an allocation-failure sweep.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- helpers */

typedef struct fixture {
    hop_shape_env *env;
    const hop_expr *s0, *s1, *s2; /* hints 5, 6, 7 */
    const hop_expr *u0;           /* [0, INT64_MAX] */
} fixture;

static int
setup(void **state)
{
    static fixture f;
    f.env = hop_shape_env_new();
    if (f.env == NULL)
        return -1;
    f.s0 = hop_shape_env_size_symbol(f.env, 5, true, true);
    f.s1 = hop_shape_env_size_symbol(f.env, 6, true, true);
    f.s2 = hop_shape_env_size_symbol(f.env, 7, true, true);
    f.u0 = hop_shape_env_unbacked(f.env, 0, INT64_MAX);
    *state = &f;
    return f.s0 && f.s1 && f.s2 && f.u0 ? 0 : -1;
}

static int
teardown(void **state)
{
    fixture *f = *state;
    hop_shape_env_free(f->env);
    hop_error_clear();
    return 0;
}

/* The printed form, in a rotating static buffer so that two can be compared. */
static const char *
str(const hop_expr *e)
{
    static char bufs[4][512];
    static int k;
    char *b = bufs[k++ % 4];
    hop_expr_print(e, b, 512);
    return b;
}

#define C(v) hop_sym_const(env, (v))

/* ------------------------------------------------------- canonical algebra */

static void
test_constants_and_symbols_are_interned(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_ptr_equal(C(3), C(3));
    assert_ptr_not_equal(C(3), C(4));
    assert_ptr_equal(hop_sym_bool(env, true), hop_sym_bool(env, true));
    assert_ptr_equal(hop_sym_add(env, C(2), C(3)), C(5));
    assert_ptr_equal(hop_sym_mul(env, C(-4), C(3)), C(-12));
    assert_ptr_equal(hop_sym_sub(env, C(2), C(3)), C(-1));
    assert_ptr_equal(hop_sym_neg(env, C(7)), C(-7));
    assert_ptr_equal(hop_sym_add_int(env, f->s0, 0), f->s0);
    assert_ptr_equal(hop_sym_mul_int(env, f->s0, 1), f->s0);
    assert_ptr_equal(hop_sym_mul_int(env, f->s0, 0), C(0));
    assert_ptr_equal(hop_sym_mul(env, f->s0, C(0)), C(0));
}

static void
test_products_and_sums_are_commutative(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *two_s0 = hop_sym_mul_int(env, f->s0, 2);
    assert_ptr_equal(two_s0, hop_sym_mul(env, f->s0, C(2)));
    assert_ptr_equal(two_s0, hop_sym_mul(env, C(2), f->s0));
    assert_ptr_equal(two_s0, hop_sym_add(env, f->s0, f->s0));
    assert_ptr_equal(hop_sym_mul(env, f->s0, f->s1), hop_sym_mul(env, f->s1, f->s0));
    assert_ptr_equal(hop_sym_add(env, f->s0, f->s1), hop_sym_add(env, f->s1, f->s0));
    assert_ptr_equal(hop_sym_add(env, f->s0, C(1)), hop_sym_add(env, C(1), f->s0));
    assert_ptr_equal(hop_sym_max(env, f->s0, f->s1), hop_sym_max(env, f->s1, f->s0));
    assert_ptr_equal(hop_sym_min(env, f->u0, f->s1), hop_sym_min(env, f->s1, f->u0));
}

static void
test_sums_and_products_are_associative(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *a = hop_sym_add(env, hop_sym_add(env, f->s0, f->s1), f->s2);
    const hop_expr *b = hop_sym_add(env, f->s0, hop_sym_add(env, f->s1, f->s2));
    assert_ptr_equal(a, b);
    assert_string_equal(str(a), "s0 + s1 + s2");
    a = hop_sym_mul(env, hop_sym_mul(env, f->s2, f->s1), f->s0);
    b = hop_sym_mul(env, f->s0, hop_sym_mul(env, f->s1, f->s2));
    assert_ptr_equal(a, b);
    assert_string_equal(str(a), "s0*s1*s2");
    a = hop_sym_max(env, hop_sym_max(env, f->s0, f->s1), f->s2);
    b = hop_sym_max(env, f->s2, hop_sym_max(env, f->s1, f->s0));
    assert_ptr_equal(a, b);
    assert_string_equal(str(a), "Max(s0, s1, s2)");
}

static void
test_adding_then_subtracting_cancels(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_ptr_equal(hop_sym_sub(env, hop_sym_add_int(env, f->s0, 1), C(1)), f->s0);
    assert_ptr_equal(hop_sym_sub(env, f->s0, f->s0), C(0));
    const hop_expr *p = hop_sym_mul(env, f->s0, f->s1);
    assert_ptr_equal(hop_sym_sub(env, hop_sym_add(env, p, f->s2), p), f->s2);
    assert_ptr_equal(hop_sym_add(env, f->s0, hop_sym_neg(env, f->s0)), C(0));
    assert_ptr_equal(hop_sym_neg(env, hop_sym_neg(env, p)), p);
    const hop_expr *d = hop_sym_floordiv(env, f->s0, C(2));
    assert_ptr_equal(hop_sym_sub(env, hop_sym_mul_int(env, d, 3), hop_sym_add(env, d, d)), d);
}

static void
test_products_distribute_over_sums(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *a = hop_sym_add_int(env, f->s0, 1);
    const hop_expr *sq = hop_sym_mul(env, a, a);
    assert_string_equal(str(sq), "s0**2 + 2*s0 + 1");
    const hop_expr *by_hand = hop_sym_add(
        env, hop_sym_add(env, hop_sym_mul(env, f->s0, f->s0), hop_sym_mul_int(env, f->s0, 2)),
        C(1));
    assert_ptr_equal(sq, by_hand);
    /* (s0 + s1)(s0 - s1) == s0**2 - s1**2 */
    const hop_expr *d =
        hop_sym_mul(env, hop_sym_add(env, f->s0, f->s1), hop_sym_sub(env, f->s0, f->s1));
    assert_string_equal(str(d), "s0**2 - s1**2");
    /* 3*(s0 + 2) == 3*s0 + 6 */
    assert_string_equal(str(hop_sym_mul_int(env, hop_sym_add_int(env, f->s0, 2), 3)), "3*s0 + 6");
    /* s0*(s0*s1) == s0**2*s1 */
    assert_string_equal(str(hop_sym_mul(env, f->s0, hop_sym_mul(env, f->s0, f->s1))), "s0**2*s1");
    /* (s0 + 1)**3 */
    const hop_expr *cube = hop_sym_mul(env, sq, a);
    assert_string_equal(str(cube), "s0**3 + 3*s0**2 + 3*s0 + 1");
}

static void
test_big_sums_and_products_stay_canonical(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *syms[40];
    for (int i = 0; i < 40; i++)
        syms[i] = hop_shape_env_size_symbol(env, 1000 + i, true, true);
    /* forwards and backwards: one pointer (keys longer than the stack buffer) */
    const hop_expr *fw = C(0), *bw = C(0), *pf = C(1), *pb = C(1);
    for (int i = 0; i < 40; i++) {
        fw = hop_sym_add(env, fw, hop_sym_mul_int(env, syms[i], i + 1));
        bw = hop_sym_add(env, bw, hop_sym_mul_int(env, syms[39 - i], 40 - i));
        pf = hop_sym_mul(env, pf, syms[i]);
        pb = hop_sym_mul(env, pb, syms[39 - i]);
    }
    assert_non_null(fw);
    assert_ptr_equal(fw, bw);
    assert_non_null(pf);
    assert_ptr_equal(pf, pb);
    assert_int_equal(hop_expr_free_symbols(pf, NULL, 0), 40);
    const hop_expr *sq = hop_sym_mul(env, pf, pf);
    char text[1024];
    hop_expr_print(sq, text, sizeof text);
    assert_memory_equal(text, "s3**2*s4**2*s5**2*", 18);
    int64_t v = 0, values[44];
    for (int i = 0; i < 44; i++)
        values[i] = 1;
    assert_int_equal(hop_expr_eval(fw, values, 44, &v), HOP_OK);
    assert_int_equal(v, 40 * 41 / 2);
    /* substituting into a power of a sum expands it */
    const hop_expr *cube = hop_sym_mul(env, f->s0, hop_sym_mul(env, f->s0, f->s0));
    const hop_expr *from[1] = {f->s0};
    const hop_expr *to[1] = {hop_sym_add_int(env, f->s1, 1)};
    assert_string_equal(str(hop_sym_subs(env, cube, from, to, 1)), "s1**3 + 3*s1**2 + 3*s1 + 1");
}

/* ----------------------------------------------------------------- printing */

static void
test_printer_golden_strings(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *s0 = f->s0, *s1 = f->s1;
    assert_string_equal(str(s0), "s0");
    assert_string_equal(str(f->u0), "u0");
    assert_string_equal(str(C(-3)), "-3");
    assert_string_equal(str(hop_sym_add_int(env, hop_sym_mul_int(env, s0, 2), 1)), "2*s0 + 1");
    assert_string_equal(str(hop_sym_sub(env, C(3), s0)), "-s0 + 3");
    assert_string_equal(str(hop_sym_add_int(env, s0, -1)), "s0 - 1");
    assert_string_equal(str(hop_sym_mul_int(env, s0, -2)), "-2*s0");
    assert_string_equal(str(hop_sym_sub(env, s0, hop_sym_mul_int(env, s1, 2))), "s0 - 2*s1");
    assert_string_equal(str(hop_sym_mul(env, s0, s1)), "s0*s1");
    assert_string_equal(str(hop_sym_mul(env, s0, s0)), "s0**2");
    assert_string_equal(str(hop_sym_add(env, hop_sym_mul(env, s0, s1), s0)), "s0*s1 + s0");
    assert_string_equal(str(hop_sym_add(env, hop_sym_mul(env, s1, s1), s0)), "s0 + s1**2");
    assert_string_equal(str(hop_sym_add(env, f->u0, s0)), "s0 + u0");
    assert_string_equal(str(hop_sym_floordiv(env, hop_sym_add_int(env, s0, 1), C(2))),
                        "(s0 + 1)//2");
    assert_string_equal(str(hop_sym_floordiv(env, s0, s1)), "s0//s1");
    assert_string_equal(str(hop_sym_floordiv(env, s0, hop_sym_mul(env, s1, f->s2))), "s0//(s1*s2)");
    assert_string_equal(str(hop_sym_mod(env, s0, C(3))), "s0 % 3");
    assert_string_equal(str(hop_sym_mod(env, hop_sym_add_int(env, s0, 1), C(3))), "(s0 + 1) % 3");
    const hop_expr *d = hop_sym_floordiv(env, s0, C(3));
    assert_string_equal(str(hop_sym_add_int(env, d, 1)), "s0//3 + 1");
    assert_string_equal(str(hop_sym_mul_int(env, d, 2)), "2*(s0//3)");
    assert_string_equal(str(hop_sym_neg(env, d)), "-(s0//3)");
    assert_string_equal(str(hop_sym_sub(env, s1, d)), "s1 - s0//3");
    assert_string_equal(str(hop_sym_mul(env, d, d)), "(s0//3)**2");
    assert_string_equal(str(hop_sym_mul(env, d, s1)), "s1*(s0//3)");
    assert_string_equal(str(hop_sym_max(env, s0, s1)), "Max(s0, s1)");
    assert_string_equal(str(hop_sym_min(env, f->u0, C(4))), "Min(u0, 4)");
    assert_string_equal(str(hop_sym_max(env, hop_sym_add_int(env, s1, 1), s0)), "Max(s0, s1 + 1)");
    assert_string_equal(str(hop_sym_bool(env, true)), "True");
    assert_string_equal(str(hop_sym_bool(env, false)), "False");
}

static void
test_printer_follows_the_snprintf_contract(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *e = hop_sym_add_int(env, hop_sym_mul_int(env, f->s0, 2), 1);
    char buf[5];
    assert_int_equal(hop_expr_print(e, buf, sizeof buf), 8);
    assert_string_equal(buf, "2*s0");
    assert_int_equal(hop_expr_print(e, NULL, 0), 8);
    char one[1] = {'x'};
    assert_int_equal(hop_expr_print(e, one, 1), 8);
    assert_int_equal(one[0], '\0');
    const char *s = hop_expr_str(env, e);
    assert_string_equal(s, "2*s0 + 1");
    assert_ptr_equal(hop_expr_str(env, e), s);
}

/* ------------------------------------------------- floordiv, mod, max, min */

static void
test_floordiv_simplifies_and_folds(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_ptr_equal(hop_sym_floordiv(env, f->s0, C(1)), f->s0);
    assert_ptr_equal(hop_sym_floordiv(env, f->s0, C(-1)), hop_sym_neg(env, f->s0));
    assert_ptr_equal(hop_sym_floordiv(env, C(7), C(2)), C(3));
    assert_ptr_equal(hop_sym_floordiv(env, C(-7), C(2)), C(-4));
    assert_ptr_equal(hop_sym_floordiv(env, C(7), C(-2)), C(-4));
    assert_ptr_equal(hop_sym_floordiv(env, C(-7), C(-2)), C(3));
    assert_ptr_equal(hop_sym_floordiv(env, C(0), f->s1), C(0));
    /* (2*s0 + 2)//2 == s0 + 1, (2*s0 + 3)//2 == s0 + 1 */
    const hop_expr *two_s0 = hop_sym_mul_int(env, f->s0, 2);
    assert_ptr_equal(hop_sym_floordiv(env, hop_sym_add_int(env, two_s0, 2), C(2)),
                     hop_sym_add_int(env, f->s0, 1));
    assert_ptr_equal(hop_sym_floordiv(env, hop_sym_add_int(env, two_s0, 3), C(2)),
                     hop_sym_add_int(env, f->s0, 1));
    /* (2*s0 + s1 + 1)//2 == s0 + (s1 + 1)//2 */
    const hop_expr *e =
        hop_sym_floordiv(env, hop_sym_add_int(env, hop_sym_add(env, two_s0, f->s1), 1), C(2));
    assert_string_equal(str(e), "s0 + (s1 + 1)//2");
    /* (s0//2)//3 == s0//6 */
    assert_ptr_equal(hop_sym_floordiv(env, hop_sym_floordiv(env, f->s0, C(2)), C(3)),
                     hop_sym_floordiv(env, f->s0, C(6)));
    /* a multiple of the divisor in the constant comes out: (s0 + 4)//2 == s0//2 + 2 */
    assert_string_equal(str(hop_sym_floordiv(env, hop_sym_add_int(env, f->s0, 4), C(2))),
                        "s0//2 + 2");
    assert_string_equal(str(hop_sym_floordiv(env, hop_sym_add_int(env, f->s0, 3), C(2))),
                        "(s0 + 3)//2");
    /* the remainder's floordiv is simplified too: (2*s0 + s1//2)//2 == s0 + s1//4 */
    assert_ptr_equal(
        hop_sym_floordiv(env, hop_sym_add(env, two_s0, hop_sym_floordiv(env, f->s1, C(2))), C(2)),
        hop_sym_add(env, f->s0, hop_sym_floordiv(env, f->s1, C(4))));
    /* settled by the value range: 0 <= s0 % 3 < 3 */
    assert_ptr_equal(hop_sym_floordiv(env, hop_sym_mod(env, f->s0, C(3)), C(3)), C(0));
    /* s0 // -2 == (-s0)//2 */
    assert_string_equal(str(hop_sym_floordiv(env, f->s0, C(-2))), "(-s0)//2");
    /* interned: built twice, one pointer */
    assert_ptr_equal(hop_sym_floordiv(env, hop_sym_add_int(env, f->s0, 1), C(2)),
                     hop_sym_floordiv(env, hop_sym_add(env, C(1), f->s0), C(2)));
}

static void
test_floordiv_and_mod_by_constant_zero_are_invalid(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_null(hop_sym_floordiv(env, hop_sym_add_int(env, f->s0, 1), C(0)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_sym_floordiv: division by zero in (s0 + 1)//0");
    assert_null(hop_sym_mod(env, f->s0, C(0)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_sym_mod: modulo by zero in (s0) % 0");
    assert_null(hop_sym_floordiv(env, C(1), C(0)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
}

static void
test_mod_simplifies_and_folds_with_python_semantics(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_ptr_equal(hop_sym_mod(env, f->s0, C(1)), C(0));
    assert_ptr_equal(hop_sym_mod(env, f->s0, C(-1)), C(0));
    assert_ptr_equal(hop_sym_mod(env, C(-7), C(3)), C(2));
    assert_ptr_equal(hop_sym_mod(env, C(7), C(-3)), C(-2));
    assert_ptr_equal(hop_sym_mod(env, C(-7), C(-3)), C(-1));
    assert_ptr_equal(hop_sym_mod(env, C(0), f->s0), C(0));
    /* coefficients and the constant only matter modulo the divisor */
    assert_ptr_equal(hop_sym_mod(env, hop_sym_add_int(env, f->s0, 3), C(3)),
                     hop_sym_mod(env, f->s0, C(3)));
    assert_ptr_equal(
        hop_sym_mod(env, hop_sym_add_int(env, hop_sym_mul_int(env, f->s0, 3), 4), C(3)), C(1));
    assert_string_equal(str(hop_sym_mod(env, hop_sym_mul_int(env, f->s0, 5), C(3))), "(2*s0) % 3");
    /* (s0 % 6) % 3 == s0 % 3; (s0 % 3) % 5 == s0 % 3 by its range */
    const hop_expr *m3 = hop_sym_mod(env, f->s0, C(3));
    assert_ptr_equal(hop_sym_mod(env, hop_sym_mod(env, f->s0, C(6)), C(3)), m3);
    assert_ptr_equal(hop_sym_mod(env, m3, C(5)), m3);
    assert_ptr_equal(hop_sym_mod(env, m3, C(3)), m3);
    assert_string_equal(str(hop_sym_mod(env, f->s0, C(-3))), "-((2*s0) % 3)");
    assert_string_equal(str(hop_sym_mod(env, f->s0, f->s1)), "s0 % s1");
}

static void
test_max_and_min_fold_and_simplify(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_ptr_equal(hop_sym_max(env, C(3), C(5)), C(5));
    assert_ptr_equal(hop_sym_min(env, C(3), C(-5)), C(-5));
    assert_ptr_equal(hop_sym_max(env, f->s0, f->s0), f->s0);
    assert_ptr_equal(hop_sym_min(env, f->u0, f->u0), f->u0);
    /* backed sizes are >= 2, so Max(s0, 1) is s0 and Min(s0, 2) is 2 */
    assert_ptr_equal(hop_sym_max(env, f->s0, C(1)), f->s0);
    assert_ptr_equal(hop_sym_min(env, f->s0, C(2)), C(2));
    /* u0 may be 0 */
    assert_string_equal(str(hop_sym_max(env, f->u0, C(1))), "Max(u0, 1)");
    assert_ptr_equal(hop_sym_max(env, f->u0, C(0)), f->u0);
    /* constants fold inside a flattened Max */
    const hop_expr *m = hop_sym_max(env, hop_sym_max(env, f->u0, C(3)), C(7));
    assert_string_equal(str(m), "Max(u0, 7)");
    assert_ptr_equal(hop_sym_max(env, m, f->u0), m);
    /* nested atoms are interned too */
    const hop_expr *a =
        hop_sym_max(env, hop_sym_floordiv(env, f->s0, C(2)), hop_sym_mod(env, f->s1, C(3)));
    const hop_expr *b =
        hop_sym_max(env, hop_sym_mod(env, f->s1, C(3)), hop_sym_floordiv(env, f->s0, C(2)));
    assert_ptr_equal(a, b);
    assert_string_equal(str(a), "Max(s0//2, s1 % 3)");
    assert_string_equal(str(hop_sym_min(env, f->s1, hop_sym_max(env, f->s0, f->u0))),
                        "Min(s1, Max(s0, u0))");
}

/* ---------------------------------------------------------------- relations */

static void
test_relations_have_one_canonical_form(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *gt = hop_sym_gt(env, f->s0, C(4));
    assert_ptr_equal(gt, hop_sym_lt(env, C(4), f->s0));
    assert_string_equal(str(gt), "s0 > 4");
    assert_ptr_equal(hop_sym_ge(env, f->s0, C(5)), hop_sym_le(env, C(5), f->s0));
    assert_string_equal(str(hop_sym_ge(env, f->s0, C(5))), "s0 >= 5");
    assert_string_equal(str(hop_sym_lt(env, f->s0, C(4))), "s0 < 4");
    assert_string_equal(str(hop_sym_le(env, f->s0, C(-4))), "s0 <= -4");
    assert_string_equal(str(hop_sym_gt(env, f->s0, C(-3))), "s0 > -3");
    const hop_expr *eq = hop_sym_eq(env, f->s0, C(1));
    assert_ptr_equal(eq, hop_sym_eq(env, C(1), f->s0));
    assert_string_equal(str(eq), "s0 == 1");
    assert_ptr_equal(hop_sym_ne(env, f->s0, f->s1), hop_sym_ne(env, f->s1, f->s0));
    assert_string_equal(str(hop_sym_ne(env, f->s1, f->s0)), "s0 != s1");
    assert_string_equal(str(hop_sym_lt(env, f->s0, f->s1)), "s0 < s1");
    assert_string_equal(str(hop_sym_gt(env, f->s0, f->s1)), "s0 > s1");
    assert_ptr_equal(hop_sym_gt(env, f->s0, f->s1), hop_sym_lt(env, f->s1, f->s0));
    assert_string_equal(str(hop_sym_ge(env, hop_sym_add_int(env, f->s0, 3), f->s1)),
                        "s0 + 3 >= s1");
    assert_string_equal(str(hop_sym_gt(env, f->s1, hop_sym_add_int(env, f->s0, 3))), "s0 + 3 < s1");
    /* moving terms across keeps one form */
    assert_ptr_equal(hop_sym_lt(env, hop_sym_add_int(env, f->s0, 1), f->s1),
                     hop_sym_lt(env, f->s0, hop_sym_add_int(env, f->s1, -1)));
    assert_string_equal(str(hop_sym_lt(env, hop_sym_add_int(env, f->s0, 1), f->s1)), "s0 + 1 < s1");
    assert_string_equal(str(hop_sym_le(env, f->s0, hop_sym_add_int(env, f->s1, 2))),
                        "s0 <= s1 + 2");
    /* common factors divide out, rounding the right way */
    assert_ptr_equal(hop_sym_gt(env, hop_sym_mul_int(env, f->s0, 2), C(8)), gt);
    assert_ptr_equal(hop_sym_lt(env, hop_sym_mul_int(env, f->s0, 2), C(9)),
                     hop_sym_lt(env, f->s0, C(5)));
    assert_ptr_equal(hop_sym_le(env, hop_sym_mul_int(env, f->s0, 2), C(9)),
                     hop_sym_le(env, f->s0, C(4)));
    assert_ptr_equal(hop_sym_eq(env, hop_sym_mul_int(env, f->s0, 2), C(8)),
                     hop_sym_eq(env, f->s0, C(4)));
    assert_ptr_equal(hop_sym_eq(env, hop_sym_mul_int(env, f->s0, 2), C(7)),
                     hop_sym_bool(env, false));
    assert_ptr_equal(hop_sym_ne(env, hop_sym_mul_int(env, f->s0, 2), C(7)),
                     hop_sym_bool(env, true));
}

static void
test_relations_between_constants_fold(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *t = hop_sym_bool(env, true), *F = hop_sym_bool(env, false);
    assert_ptr_equal(hop_sym_lt(env, C(3), C(4)), t);
    assert_ptr_equal(hop_sym_lt(env, C(4), C(4)), F);
    assert_ptr_equal(hop_sym_le(env, C(4), C(4)), t);
    assert_ptr_equal(hop_sym_gt(env, C(4), C(3)), t);
    assert_ptr_equal(hop_sym_ge(env, C(2), C(3)), F);
    assert_ptr_equal(hop_sym_eq(env, C(2), C(2)), t);
    assert_ptr_equal(hop_sym_ne(env, C(2), C(2)), F);
    /* structurally equal sides fold too */
    assert_ptr_equal(hop_sym_eq(env, f->s0, f->s0), t);
    assert_ptr_equal(hop_sym_lt(env, f->s0, hop_sym_add_int(env, f->s0, 1)), t);
    assert_ptr_equal(hop_sym_gt(env, f->s0, f->s0), F);
}

static void
test_not_negates_relations_and_connectives_fold(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *t = hop_sym_bool(env, true), *F = hop_sym_bool(env, false);
    const hop_expr *gt = hop_sym_gt(env, f->s0, C(4));
    const hop_expr *eq = hop_sym_eq(env, f->s1, C(2));
    assert_ptr_equal(hop_sym_not(env, gt), hop_sym_le(env, f->s0, C(4)));
    assert_string_equal(str(hop_sym_not(env, gt)), "s0 <= 4");
    assert_ptr_equal(hop_sym_not(env, hop_sym_not(env, gt)), gt);
    assert_ptr_equal(hop_sym_not(env, eq), hop_sym_ne(env, f->s1, C(2)));
    assert_ptr_equal(hop_sym_not(env, hop_sym_lt(env, f->s0, f->s1)),
                     hop_sym_ge(env, f->s0, f->s1));
    assert_ptr_equal(hop_sym_not(env, t), F);
    assert_ptr_equal(hop_sym_not(env, F), t);

    const hop_expr *both = hop_sym_and(env, gt, eq);
    assert_ptr_equal(both, hop_sym_and(env, eq, gt));
    /* operands in hop_expr_compare order: by kind (EQ before LT) */
    assert_string_equal(str(both), "(s1 == 2) & (s0 > 4)");
    assert_ptr_equal(hop_sym_and(env, both, gt), both);
    assert_ptr_equal(hop_sym_and(env, gt, t), gt);
    assert_ptr_equal(hop_sym_and(env, F, gt), F);
    assert_ptr_equal(hop_sym_or(env, gt, t), t);
    assert_ptr_equal(hop_sym_or(env, F, gt), gt);
    assert_ptr_equal(hop_sym_and(env, gt, hop_sym_not(env, gt)), F);
    assert_ptr_equal(hop_sym_or(env, eq, hop_sym_not(env, eq)), t);
    const hop_expr *either = hop_sym_or(env, gt, eq);
    assert_string_equal(str(either), "(s1 == 2) | (s0 > 4)");
    assert_string_equal(str(hop_sym_not(env, both)), "~((s1 == 2) & (s0 > 4))");
    assert_ptr_equal(hop_sym_not(env, hop_sym_not(env, both)), both);
    assert_ptr_equal(hop_sym_and(env, both, hop_sym_not(env, both)), F);
    /* flattening: (a & b) & c == a & (b & c) */
    const hop_expr *c = hop_sym_lt(env, f->s2, C(9));
    assert_ptr_equal(hop_sym_and(env, both, c), hop_sym_and(env, gt, hop_sym_and(env, eq, c)));
    assert_string_equal(str(hop_sym_or(env, hop_sym_not(env, both), c)),
                        "(s2 < 9) | ~((s1 == 2) & (s0 > 4))");
}

/* ----------------------------------------------- free symbols, substitution */

static void
test_free_symbols_are_sorted_and_unique(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *e = hop_sym_add(env, hop_sym_mul(env, f->u0, f->s1),
                                    hop_sym_floordiv(env, f->s1, hop_sym_add(env, f->s0, f->u0)));
    const hop_expr *out[4] = {NULL};
    assert_int_equal(hop_expr_free_symbols(e, NULL, 0), 3);
    assert_int_equal(hop_expr_free_symbols(e, out, 2), 3);
    assert_ptr_equal(out[0], f->s0);
    assert_ptr_equal(out[1], f->s1);
    assert_null(out[2]);
    assert_int_equal(hop_expr_free_symbols(e, out, 4), 3);
    assert_ptr_equal(out[2], f->u0);
    assert_int_equal(hop_expr_free_symbols(C(3), out, 4), 0);
    assert_int_equal(hop_expr_free_symbols(hop_sym_gt(env, f->s2, f->s0), out, 4), 2);
    assert_ptr_equal(out[0], f->s0);
    assert_ptr_equal(out[1], f->s2);
}

static void
test_compare_orders_symbols_by_name_then_other_kinds(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_true(hop_expr_compare(f->s0, f->s1) < 0);
    assert_true(hop_expr_compare(f->s2, f->s1) > 0);
    assert_true(hop_expr_compare(f->s2, f->u0) < 0);
    assert_int_equal(hop_expr_compare(f->s0, f->s0), 0);
    assert_true(hop_expr_compare(f->u0, C(0)) < 0);
    assert_true(hop_expr_compare(C(1), C(2)) < 0);
    /* s10 sorts after s2: by number, not by text */
    const hop_expr *s = NULL;
    for (int64_t h = 100; h < 108; h++)
        s = hop_shape_env_size_symbol(env, h, true, true);
    assert_string_equal(hop_symbol_name(s), "s10");
    assert_true(hop_expr_compare(f->s2, s) < 0);
    assert_string_equal(str(hop_sym_add(env, s, f->s2)), "s2 + s10");
}

static void
test_substitution_rebuilds_canonically(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *e = hop_sym_add_int(env, hop_sym_mul(env, f->s0, f->s1), 1);
    const hop_expr *syms[2] = {f->s0, f->s1};
    const hop_expr *vals[2] = {C(3), f->s0};
    assert_string_equal(str(hop_sym_subs(env, e, syms, vals, 1)), "3*s1 + 1");
    /* simultaneous: s0 -> 3, s1 -> s0 */
    assert_string_equal(str(hop_sym_subs(env, e, syms, vals, 2)), "3*s0 + 1");
    const hop_expr *v2[1] = {f->s1};
    assert_ptr_equal(hop_sym_subs(env, e, syms, v2, 1),
                     hop_sym_add_int(env, hop_sym_mul(env, f->s1, f->s1), 1));
    /* into atoms, relations and connectives, folding */
    const hop_expr *g = hop_sym_and(env, hop_sym_gt(env, hop_sym_floordiv(env, f->s0, C(2)), C(1)),
                                    hop_sym_lt(env, f->s1, C(9)));
    const hop_expr *v3[2] = {C(4), C(3)};
    assert_ptr_equal(hop_sym_subs(env, g, syms, v3, 2), hop_sym_bool(env, true));
    assert_string_equal(str(hop_sym_subs(env, g, syms, v3, 1)), "s1 < 9");
    const hop_expr *mx = hop_sym_max(env, f->s0, f->u0);
    const hop_expr *v4[1] = {C(9)};
    const hop_expr *us[1] = {f->u0};
    assert_string_equal(str(hop_sym_subs(env, mx, us, v4, 1)), "Max(s0, 9)");
    /* an expression without those symbols is returned as is */
    assert_ptr_equal(hop_sym_subs(env, f->s2, syms, vals, 2), f->s2);
    /* only symbols can be replaced, only by ints */
    const hop_expr *bad[1] = {hop_sym_add_int(env, f->s0, 1)};
    assert_null(hop_sym_subs(env, e, bad, vals, 1));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_sym_subs: syms[0] is s0 + 1, not a symbol");
    const hop_expr *bv[1] = {hop_sym_bool(env, true)};
    assert_null(hop_sym_subs(env, e, syms, bv, 1));
    assert_int_equal(hop_error_code(), HOP_INVALID);
}

/* --------------------------------------------------------------- evaluation */

static void
test_eval_uses_python_floor_division_and_modulo(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    int64_t values[4] = {-7, 2, HOP_UNBOUND, HOP_UNBOUND};
    int64_t v = 0;
    const hop_expr *q = hop_sym_floordiv(env, f->s0, f->s1);
    const hop_expr *r = hop_sym_mod(env, f->s0, f->s1);
    assert_int_equal(hop_expr_eval(q, values, 4, &v), HOP_OK);
    assert_int_equal(v, -4);
    assert_int_equal(hop_expr_eval(r, values, 4, &v), HOP_OK);
    assert_int_equal(v, 1);
    values[0] = 7;
    values[1] = -2;
    assert_int_equal(hop_expr_eval(q, values, 4, &v), HOP_OK);
    assert_int_equal(v, -4);
    assert_int_equal(hop_expr_eval(r, values, 4, &v), HOP_OK);
    assert_int_equal(v, -1);
    /* a polynomial, Max and a relation */
    values[0] = 3;
    values[1] = 4;
    const hop_expr *p = hop_sym_add_int(
        env, hop_sym_mul(env, hop_sym_add_int(env, f->s0, 1), hop_sym_add_int(env, f->s0, 1)), -2);
    assert_int_equal(hop_expr_eval(p, values, 2, &v), HOP_OK);
    assert_int_equal(v, 14);
    assert_int_equal(hop_expr_eval(hop_sym_max(env, f->s0, f->s1), values, 2, &v), HOP_OK);
    assert_int_equal(v, 4);
    assert_int_equal(hop_expr_eval(hop_sym_min(env, f->s0, f->s1), values, 2, &v), HOP_OK);
    assert_int_equal(v, 3);
    const hop_expr *rel =
        hop_sym_and(env, hop_sym_gt(env, f->s1, f->s0), hop_sym_ne(env, f->s0, C(2)));
    assert_int_equal(hop_expr_eval(rel, values, 2, &v), HOP_OK);
    assert_int_equal(v, 1);
    assert_int_equal(hop_expr_eval(hop_sym_not(env, rel), values, 2, &v), HOP_OK);
    assert_int_equal(v, 0);
    assert_int_equal(hop_expr_eval(C(-9), NULL, 0, &v), HOP_OK);
    assert_int_equal(v, -9);
}

static void
test_eval_errors_name_the_symbol_or_the_expression(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    int64_t values[2] = {5, HOP_UNBOUND};
    int64_t v = 42;
    assert_int_equal(hop_expr_eval(hop_sym_add(env, f->s0, f->s1), values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: symbol s1 is unbound");
    assert_int_equal(v, 42);
    assert_int_equal(hop_expr_eval(f->s2, values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: symbol s2 is unbound");
    values[1] = 0;
    assert_int_equal(hop_expr_eval(hop_sym_floordiv(env, f->s0, f->s1), values, 2, &v),
                     HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: division by zero in s0//s1");
    assert_int_equal(hop_expr_eval(hop_sym_mod(env, f->s0, f->s1), values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: modulo by zero in s0 % s1");
    values[0] = INT64_MAX;
    assert_int_equal(hop_expr_eval(hop_sym_add_int(env, f->s0, 1), values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: int64 overflow in s0 + 1");
    assert_int_equal(hop_expr_eval(hop_sym_mul(env, f->s0, f->s0), values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: int64 overflow in s0**2");
    /* INT64_MIN itself is HOP_UNBOUND, so reach it by arithmetic */
    values[0] = INT64_MIN + 1;
    values[1] = -1;
    const hop_expr *low = hop_sym_add_int(env, f->s0, -1);
    assert_int_equal(hop_expr_eval(hop_sym_floordiv(env, low, f->s1), values, 2, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_expr_eval: int64 overflow in (s0 - 1)//s1");
    assert_int_equal(hop_expr_eval(hop_sym_mod(env, low, f->s1), values, 2, &v), HOP_OK);
    assert_int_equal(v, 0);
    assert_int_equal(hop_expr_eval(NULL, values, 2, &v), HOP_MISUSE);
}

static void
test_constant_folding_overflow_is_invalid(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_null(hop_sym_add(env, C(INT64_MAX), C(1)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_sym_add: int64 overflow computing 9223372036854775807 + 1");
    assert_null(hop_sym_mul_int(env, hop_sym_mul_int(env, f->s0, INT64_MAX), 2));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_null(hop_sym_floordiv(env, C(INT64_MIN), C(-1)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_sym_floordiv: int64 overflow computing -9223372036854775808 // -1");
    assert_null(hop_sym_neg(env, C(INT64_MIN)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_null(hop_sym_sub(env, C(INT64_MIN), C(1)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    /* INT64_MIN % -1 is 0, not undefined behaviour */
    assert_ptr_equal(hop_sym_mod(env, C(INT64_MIN), C(-1)), C(0));
    assert_ptr_equal(hop_sym_add(env, C(INT64_MAX), C(INT64_MIN)), C(-1));
}

/* ------------------------------------------------------------------- misuse */

static void
test_null_operands_and_foreign_exprs_are_misuse(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    assert_null(hop_sym_add(env, f->s0, NULL));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_sym_add: operand 2 is NULL");
    assert_null(hop_sym_mul(env, NULL, f->s0));
    assert_string_equal(hop_error_message(), "hop_sym_mul: operand 1 is NULL");
    assert_null(hop_sym_neg(env, NULL));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_null(hop_sym_not(env, NULL));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_null(hop_sym_const(NULL, 1));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_null(hop_sym_add(NULL, f->s0, f->s1));
    assert_string_equal(hop_error_message(), "hop_sym_add: the ShapeEnv is NULL");

    hop_shape_env *other = hop_shape_env_new();
    assert_non_null(other);
    const hop_expr *o0 = hop_shape_env_size_symbol(other, 5, true, true);
    assert_string_equal(hop_symbol_name(o0), "s0");
    assert_null(hop_sym_add(env, f->s0, o0));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_sym_add: operand 2 belongs to another ShapeEnv");
    assert_null(hop_sym_max(other, f->s0, o0));
    assert_string_equal(hop_error_message(), "hop_sym_max: operand 1 belongs to another ShapeEnv");
    assert_null(hop_expr_str(other, f->s0));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
    hop_shape_env_free(other);
}

static void
test_mixing_bool_and_int_is_invalid(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    const hop_expr *b = hop_sym_gt(env, f->s0, C(4));
    assert_null(hop_sym_add(env, f->s0, b));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_sym_add: operand 2 is a SymBool (s0 > 4) where a SymInt is expected");
    assert_null(hop_sym_lt(env, b, f->s0));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_null(hop_sym_and(env, b, f->s0));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_sym_and: operand 2 is a SymInt (s0) where a SymBool is expected");
    assert_null(hop_sym_not(env, C(1)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_null(hop_sym_floordiv(env, hop_sym_bool(env, true), C(2)));
    assert_int_equal(hop_error_code(), HOP_INVALID);
}

/* --------------------------------------------------------------- inspection */

static void
test_inspection_of_kinds_constants_and_symbols(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    int64_t v = -1;
    assert_true(hop_expr_const_value(C(7), &v));
    assert_int_equal(v, 7);
    assert_true(hop_expr_const_value(hop_sym_bool(env, true), &v));
    assert_int_equal(v, 1);
    assert_true(hop_expr_const_value(hop_sym_bool(env, false), &v));
    assert_int_equal(v, 0);
    assert_false(hop_expr_const_value(f->s0, &v));
    assert_false(hop_expr_const_value(NULL, &v));
    assert_int_equal(hop_expr_kind_of(f->s0), HOP_EXPR_SYMBOL);
    assert_int_equal(hop_expr_kind_of(hop_sym_add_int(env, f->s0, 1)), HOP_EXPR_ADD);
    assert_int_equal(hop_expr_kind_of(hop_sym_mul_int(env, f->s0, 3)), HOP_EXPR_ADD);
    assert_int_equal(hop_expr_kind_of(hop_sym_mul(env, f->s0, f->s1)), HOP_EXPR_MUL);
    assert_int_equal(hop_expr_kind_of(hop_sym_mul(env, f->s0, f->s0)), HOP_EXPR_MUL);
    assert_int_equal(hop_expr_kind_of(hop_sym_floordiv(env, f->s0, C(2))), HOP_EXPR_FLOORDIV);
    assert_int_equal(hop_expr_kind_of(hop_sym_gt(env, f->s0, C(2))), HOP_EXPR_LT);
    assert_int_equal(hop_expr_kind_of(hop_sym_ge(env, f->s0, C(2))), HOP_EXPR_LE);
    assert_true(hop_expr_is_bool(hop_sym_eq(env, f->s0, f->s1)));
    assert_false(hop_expr_is_bool(f->s0));
    assert_false(hop_expr_is_bool(NULL));
    assert_string_equal(hop_symbol_name(f->s1), "s1");
    assert_int_equal(hop_symbol_id(f->s1), 1);
    assert_int_equal(hop_symbol_id(f->u0), 3);
    assert_null(hop_symbol_name(C(1)));
    assert_int_equal(hop_symbol_id(C(1)), -1);
    assert_true(hop_symbol_is_unbacked(f->u0));
    assert_false(hop_symbol_is_unbacked(f->s0));
    assert_true(hop_symbol_hint(f->s2, &v));
    assert_int_equal(v, 7);
    assert_false(hop_symbol_hint(f->u0, &v));
    assert_false(hop_symbol_hint(hop_sym_add_int(env, f->s0, 1), &v));
}

/* The structure of the canonical form through the accessors: each kind's
 * operands, coefficients (ADD), exponents (MUL) and constant term. */
static void
test_accessors_expose_the_canonical_form(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    /* 3*s0**2 - s1 + 4: terms in lex order, the constant apart */
    const hop_expr *sq = hop_sym_mul(env, f->s0, f->s0);
    const hop_expr *sum =
        hop_sym_add_int(env, hop_sym_sub(env, hop_sym_mul_int(env, sq, 3), f->s1), 4);
    assert_string_equal(str(sum), "3*s0**2 - s1 + 4");
    assert_int_equal(hop_expr_noperands(sum), 2);
    assert_ptr_equal(hop_expr_operand(sum, 0), sq);
    assert_int_equal(hop_expr_coef(sum, 0), 3);
    assert_ptr_equal(hop_expr_operand(sum, 1), f->s1);
    assert_int_equal(hop_expr_coef(sum, 1), -1);
    assert_int_equal(hop_expr_addend(sum), 4);
    assert_null(hop_expr_operand(sum, 2));
    assert_int_equal(hop_expr_coef(sum, 2), 0);
    /* s0**2*s1: atoms sorted, exponents as coefficients */
    const hop_expr *mono = hop_sym_mul(env, sq, f->s1);
    assert_int_equal(hop_expr_kind_of(mono), HOP_EXPR_MUL);
    assert_int_equal(hop_expr_noperands(mono), 2);
    assert_ptr_equal(hop_expr_operand(mono, 0), f->s0);
    assert_int_equal(hop_expr_coef(mono, 0), 2);
    assert_ptr_equal(hop_expr_operand(mono, 1), f->s1);
    assert_int_equal(hop_expr_coef(mono, 1), 1);
    assert_int_equal(hop_expr_addend(mono), 0);
    /* binary atoms and relations: their two sides in order, coefficient 1 */
    const hop_expr *fd = hop_sym_floordiv(env, f->s0, f->u0);
    assert_int_equal(hop_expr_noperands(fd), 2);
    assert_ptr_equal(hop_expr_operand(fd, 0), f->s0);
    assert_ptr_equal(hop_expr_operand(fd, 1), f->u0);
    assert_int_equal(hop_expr_coef(fd, 1), 1);
    const hop_expr *gt = hop_sym_gt(env, f->s0, C(4)); /* LT(4, s0) */
    assert_int_equal(hop_expr_noperands(gt), 2);
    assert_ptr_equal(hop_expr_operand(gt, 0), C(4));
    assert_ptr_equal(hop_expr_operand(gt, 1), f->s0);
    /* n-ary ones: every operand */
    const hop_expr *mx = hop_sym_max(env, hop_sym_max(env, f->s0, f->s1), f->u0);
    assert_int_equal(hop_expr_kind_of(mx), HOP_EXPR_MAX);
    assert_int_equal(hop_expr_noperands(mx), 3);
    const hop_expr *both = hop_sym_and(env, gt, hop_sym_eq(env, f->s1, C(2)));
    assert_int_equal(hop_expr_noperands(both), 2);
    const hop_expr *neg = hop_sym_not(env, both);
    assert_int_equal(hop_expr_kind_of(neg), HOP_EXPR_NOT);
    assert_int_equal(hop_expr_noperands(neg), 1);
    assert_ptr_equal(hop_expr_operand(neg, 0), both);
    /* leaves have none */
    const hop_expr *leaves[] = {C(3), f->s0, f->u0, hop_sym_bool(env, true), NULL};
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        assert_int_equal(hop_expr_noperands(leaves[i]), 0);
        assert_null(hop_expr_operand(leaves[i], 0));
        assert_int_equal(hop_expr_coef(leaves[i], 0), 0);
        assert_int_equal(hop_expr_addend(leaves[i]), 0);
    }
}

/* ------------------------------------------------- randomised differential */

enum { NB = 6, POOL = 48 };

typedef struct rnode {
    const hop_expr *e;
    int64_t v[NB]; /* the value under each binding, computed directly */
} rnode;

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t
rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t
pyfloordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t
pymod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Checks e against the directly computed values under every binding. */
static void
check_values(const hop_expr *e, const int64_t (*bind)[4], const int64_t *want)
{
    for (int k = 0; k < NB; k++) {
        int64_t got = -12345;
        if (hop_expr_eval(e, bind[k], 4, &got) != HOP_OK || got != want[k]) {
            fprintf(stderr, "%s: binding %d gives %lld (%s), want %lld\n", str(e), k,
                    (long long)got, hop_error_message(), (long long)want[k]);
            fail();
        }
    }
}

/* Operation op (0..11: + - * // % max min neg < <= == >) on one binding's
 * values; false where it is not defined (a division by zero) or the
 * operands are too big to stay clear of overflow. */
static bool
value_of(int op, int64_t x, int64_t y, int64_t *r)
{
    if (llabs(x) >= 100000 || llabs(y) >= 100000)
        return false;
    switch (op) {
    case 0:
        *r = x + y;
        return true;
    case 1:
        *r = x - y;
        return true;
    case 2:
        *r = x * y;
        return true;
    case 3:
        return y != 0 && (*r = pyfloordiv(x, y), true);
    case 4:
        return y != 0 && (*r = pymod(x, y), true);
    case 5:
        *r = x > y ? x : y;
        return true;
    case 6:
        *r = x < y ? x : y;
        return true;
    case 7:
        *r = -x;
        return true;
    case 8:
        *r = x < y;
        return true;
    case 9:
        *r = x <= y;
        return true;
    case 10:
        *r = x == y;
        return true;
    default:
        *r = x > y;
        return true;
    }
}

/* The same operation on the expressions. */
static const hop_expr *
expr_of(hop_shape_env *env, int op, const hop_expr *x, const hop_expr *y)
{
    switch (op) {
    case 0:
        return hop_sym_add(env, x, y);
    case 1:
        return hop_sym_sub(env, x, y);
    case 2:
        return hop_sym_mul(env, x, y);
    case 3:
        return hop_sym_floordiv(env, x, y);
    case 4:
        return hop_sym_mod(env, x, y);
    case 5:
        return hop_sym_max(env, x, y);
    case 6:
        return hop_sym_min(env, x, y);
    case 7:
        return hop_sym_neg(env, x);
    case 8:
        return hop_sym_lt(env, x, y);
    case 9:
        return hop_sym_le(env, x, y);
    case 10:
        return hop_sym_eq(env, x, y);
    default:
        return hop_sym_gt(env, x, y);
    }
}

/* A comparison r of a and b: its negation and the connectives with a != b,
 * checked against the values the same way. */
static void
check_connectives(hop_shape_env *env, const rnode *r, const rnode *a, const rnode *b,
                  const int64_t (*bind)[4])
{
    int64_t nv[NB], av[NB], ov[NB];
    const hop_expr *other = hop_sym_ne(env, b->e, a->e);
    for (int k = 0; k < NB; k++) {
        nv[k] = !r->v[k];
        av[k] = r->v[k] && a->v[k] != b->v[k];
        ov[k] = r->v[k] || a->v[k] != b->v[k];
    }
    check_values(hop_sym_not(env, r->e), bind, nv);
    check_values(hop_sym_and(env, r->e, other), bind, av);
    check_values(hop_sym_or(env, other, r->e), bind, ov);
    assert_ptr_equal(hop_sym_not(env, hop_sym_not(env, r->e)), r->e);
}

/* Identities that the canonical form makes pointer equalities. */
static void
check_identities(hop_shape_env *env, const hop_expr *x, const hop_expr *y)
{
    const hop_expr *sum = hop_sym_add(env, x, y);
    if (sum) {
        assert_ptr_equal(sum, hop_sym_add(env, y, x));
        const hop_expr *back = hop_sym_sub(env, sum, y);
        if (back)
            assert_ptr_equal(back, x);
    }
    const hop_expr *prod = hop_sym_mul(env, x, hop_sym_add_int(env, y, 1));
    const hop_expr *xy = hop_sym_mul(env, y, x);
    if (prod && xy)
        assert_ptr_equal(prod, hop_sym_add(env, xy, x));
    hop_error_clear();
}

/* The leaves (the symbols, twice) and constants the expressions grow from,
 * with their values under every binding. */
static void
seed_pool(const fixture *f, rnode *pool, const int64_t (*bind)[4])
{
    const hop_expr *leaves[4] = {f->s0, f->s1, f->s2, f->u0};
    for (int i = 0; i < POOL; i++) {
        if (i < 8) {
            pool[i].e = leaves[i % 4];
            for (int k = 0; k < NB; k++)
                pool[i].v[k] = bind[k][i % 4];
        } else {
            int64_t c = (int64_t)(rng() % 13) - 6;
            pool[i].e = hop_sym_const(f->env, c);
            for (int k = 0; k < NB; k++)
                pool[i].v[k] = c;
        }
    }
}

static void
test_random_expressions_keep_their_values_and_identities(void **state)
{
    fixture *f = *state;
    hop_shape_env *env = f->env;
    /* HOP_TEST_SEED=n explores other sequences; the default one is fixed. */
    const char *seed = getenv("HOP_TEST_SEED");
    if (seed && strtoull(seed, NULL, 10) != 0)
        rng_state = strtoull(seed, NULL, 10);
    assert_int_equal(hop_shape_env_constrain(env, f->u0, 0, 5), HOP_OK);
    int64_t bind[NB][4];
    for (int k = 0; k < NB; k++) {
        for (int i = 0; i < 3; i++)
            bind[k][i] = 2 + (int64_t)(rng() % 8); /* backed: >= 2 */
        bind[k][3] = (int64_t)(rng() % 6);         /* u0 in [0, 5] */
    }
    rnode pool[POOL];
    seed_pool(f, pool, (const int64_t(*)[4])bind);
    int built = 0, bools = 0;
    for (int step = 0; step < 4000; step++) {
        rnode *a = &pool[rng() % POOL], *b = &pool[rng() % POOL];
        int op = (int)(rng() % 12);
        rnode r;
        bool ok = true;
        for (int k = 0; k < NB && ok; k++)
            ok = value_of(op, a->v[k], b->v[k], &r.v[k]);
        /* and expressions small: products of big sums grow without bound */
        if (!ok || hop_expr_print(a->e, NULL, 0) > 120 || hop_expr_print(b->e, NULL, 0) > 120)
            continue;
        r.e = expr_of(env, op, a->e, b->e);
        if (r.e == NULL && hop_error_code() == HOP_INVALID)
            continue; /* a constant division by zero or a coefficient overflow */
        assert_non_null(r.e);
        check_values(r.e, (const int64_t(*)[4])bind, r.v);
        if (op >= 8) {
            check_connectives(env, &r, a, b, (const int64_t(*)[4])bind);
            bools++;
            continue;
        }
        check_identities(env, a->e, b->e);
        pool[rng() % POOL] = r;
        built++;
    }
    /* not vacuous (the bounds hold for every seed tried) */
    assert_true(built > 200);
    assert_true(bools > 200);
}

/* ------------------------------------------------------ allocation failures */

/* Builds a bit of everything; returns the status of the first failure.  Each
 * step is checked so that a NULL is never passed on (that would be misuse). */
#define STEP(var, expr)                                                                            \
    const hop_expr *var = (expr);                                                                  \
    if (var == NULL)                                                                               \
        return hop_error_code();

static hop_status
build_everything(hop_shape_env *env, char *text, size_t cap)
{
    STEP(s0, hop_shape_env_size_symbol(env, 5, true, true));
    STEP(s1, hop_shape_env_size_symbol(env, 6, true, true));
    STEP(u0, hop_shape_env_unbacked(env, 0, 100));
    STEP(two, hop_sym_const(env, 2));
    STEP(three, hop_sym_const(env, 3));
    STEP(a, hop_sym_add_int(env, s0, 1));
    STEP(sq, hop_sym_mul(env, a, a));
    STEP(cube, hop_sym_mul(env, sq, a));
    STEP(d, hop_sym_floordiv(env, cube, two));
    STEP(ds1, hop_sym_add(env, d, s1));
    STEP(m, hop_sym_mod(env, ds1, three));
    STEP(mn, hop_sym_min(env, u0, s1));
    STEP(mx, hop_sym_max(env, m, mn));
    STEP(s1x2, hop_sym_mul_int(env, s1, 2));
    STEP(r, hop_sym_gt(env, mx, s1x2));
    STEP(r2, hop_sym_ne(env, s0, s1));
    STEP(both, hop_sym_and(env, r, r2));
    STEP(nb, hop_sym_not(env, both));
    STEP(b, hop_sym_or(env, nb, r2));
    const hop_expr *syms[1] = {s0};
    const hop_expr *vals[1] = {s1};
    STEP(sub, hop_sym_subs(env, b, syms, vals, 1));
    const char *t = hop_expr_str(env, b);
    if (t == NULL)
        return hop_error_code();
    snprintf(text, cap, "%s | %s", t, str(sub));
    return HOP_OK;
}
#undef STEP

static void
test_allocation_failure_sweep_over_building_expressions(void **state)
{
    (void)state;
    long base = hop_alloc_live();
    char expect[512], text[512];
    hop_shape_env *env = hop_shape_env_new();
    assert_non_null(env);
    assert_int_equal(build_everything(env, expect, sizeof expect), HOP_OK);
    hop_shape_env_free(env);
    assert_int_equal(hop_alloc_live(), base);
    int failures = 0;
    for (long k = 1;; k++) {
        hop_alloc_fail_at(k);
        env = hop_shape_env_new();
        hop_status st = env ? build_everything(env, text, sizeof text) : hop_error_code();
        hop_alloc_fail_at(0);
        if (st == HOP_OK) {
            assert_string_equal(text, expect);
            hop_shape_env_free(env);
            break;
        }
        assert_int_equal(st, HOP_NOMEM);
        failures++;
        /* the env stays usable after a failure */
        if (env) {
            assert_int_equal(build_everything(env, text, sizeof text), HOP_OK);
            hop_shape_env_free(env);
        }
        assert_int_equal(hop_alloc_live(), base);
    }
    assert_true(failures > 10);
    assert_int_equal(hop_alloc_live(), base);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_constants_and_symbols_are_interned),
        T(test_products_and_sums_are_commutative),
        T(test_sums_and_products_are_associative),
        T(test_adding_then_subtracting_cancels),
        T(test_products_distribute_over_sums),
        T(test_big_sums_and_products_stay_canonical),
        T(test_printer_golden_strings),
        T(test_printer_follows_the_snprintf_contract),
        T(test_floordiv_simplifies_and_folds),
        T(test_floordiv_and_mod_by_constant_zero_are_invalid),
        T(test_mod_simplifies_and_folds_with_python_semantics),
        T(test_max_and_min_fold_and_simplify),
        T(test_relations_have_one_canonical_form),
        T(test_relations_between_constants_fold),
        T(test_not_negates_relations_and_connectives_fold),
        T(test_free_symbols_are_sorted_and_unique),
        T(test_compare_orders_symbols_by_name_then_other_kinds),
        T(test_substitution_rebuilds_canonically),
        T(test_eval_uses_python_floor_division_and_modulo),
        T(test_eval_errors_name_the_symbol_or_the_expression),
        T(test_constant_folding_overflow_is_invalid),
        T(test_null_operands_and_foreign_exprs_are_misuse),
        T(test_mixing_bool_and_int_is_invalid),
        T(test_inspection_of_kinds_constants_and_symbols),
        T(test_accessors_expose_the_canonical_form),
        T(test_random_expressions_keep_their_values_and_identities),
        T(test_allocation_failure_sweep_over_building_expressions),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
