/*
 * tests/c/test_shape_env.c - the ShapeEnv (backed symbols with duck sizing and
 * 0/1 specialisation, unbacked symbols and value ranges, decisions and the
 * guards they record, the data-dependent error), dtypes and tensor metadata,
 * with an allocation-failure sweep.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/core.h"
#include "hop/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *
str(const hop_expr *e)
{
    static char bufs[4][512];
    static int k;
    char *b = bufs[k++ % 4];
    hop_expr_print(e, b, 512);
    return b;
}

static const char *
guard_text(hop_shape_env *env, size_t i)
{
    return str(hop_shape_env_guard(env, i));
}

static int
setup(void **state)
{
    *state = hop_shape_env_new();
    return *state ? 0 : -1;
}

static int
teardown(void **state)
{
    hop_shape_env_free(*state);
    hop_error_clear();
    return 0;
}

#define C(v) hop_sym_const(env, (v))

/* ----------------------------------------------------------- backed symbols */

static void
test_duck_sizing_shares_a_symbol_between_equal_sizes(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *a = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *b = hop_shape_env_size_symbol(env, 6, true, true);
    const hop_expr *c = hop_shape_env_size_symbol(env, 5, true, true);
    assert_string_equal(hop_symbol_name(a), "s0");
    assert_string_equal(hop_symbol_name(b), "s1");
    assert_ptr_equal(a, c);
    assert_int_equal(hop_shape_env_nsymbols(env), 2);
    assert_ptr_equal(hop_shape_env_symbol(env, 0), a);
    assert_ptr_equal(hop_shape_env_symbol(env, 1), b);
    assert_null(hop_shape_env_symbol(env, 2));
    int64_t hint = 0;
    assert_true(hop_symbol_hint(b, &hint));
    assert_int_equal(hint, 6);
    /* without duck sizing every size gets its own symbol, and it does not
     * join the duck table */
    const hop_expr *d = hop_shape_env_size_symbol(env, 5, false, true);
    assert_string_equal(hop_symbol_name(d), "s2");
    const hop_expr *e = hop_shape_env_size_symbol(env, 9, false, true);
    assert_ptr_not_equal(hop_shape_env_size_symbol(env, 9, true, true), e);
    assert_ptr_equal(hop_shape_env_size_symbol(env, 5, true, true), a);
}

static void
test_sizes_0_and_1_are_specialised_to_constants(void **state)
{
    hop_shape_env *env = *state;
    assert_ptr_equal(hop_shape_env_size_symbol(env, 0, true, true), C(0));
    assert_ptr_equal(hop_shape_env_size_symbol(env, 1, true, true), C(1));
    assert_ptr_equal(hop_shape_env_size_symbol(env, 1, false, true), C(1));
    assert_int_equal(hop_shape_env_nsymbols(env), 0);
    /* unless asked not to: then the symbol's range admits 0 and 1 */
    const hop_expr *s = hop_shape_env_size_symbol(env, 1, true, false);
    assert_string_equal(hop_symbol_name(s), "s0");
    int64_t lo, hi;
    hop_shape_env_bounds(env, s, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, INT64_MAX);
    bool v = false;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_eq(env, s, C(1)), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_nguards(env), 1);
    assert_string_equal(guard_text(env, 0), "s0 == 1");
}

static void
test_backed_symbols_have_range_2_to_int64_max(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s = hop_shape_env_size_symbol(env, 8, true, true);
    int64_t lo = 0, hi = 0;
    hop_shape_env_bounds(env, s, &lo, &hi);
    assert_int_equal(lo, 2);
    assert_int_equal(hi, INT64_MAX);
    assert_false(hop_symbol_is_unbacked(s));
}

static void
test_negative_size_hint_is_invalid(void **state)
{
    hop_shape_env *env = *state;
    assert_null(hop_shape_env_size_symbol(env, -3, true, true));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_shape_env_size_symbol: size -3 is negative");
    assert_int_equal(hop_shape_env_nsymbols(env), 0);
    assert_null(hop_shape_env_size_symbol(NULL, 3, true, true));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
}

/* --------------------------------------------------------- unbacked symbols */

static void
test_unbacked_symbols_have_their_own_names_and_shared_ids(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 4, true, true);
    const hop_expr *u0 = hop_shape_env_unbacked(env, 0, INT64_MAX);
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 7, true, true);
    const hop_expr *u1 = hop_shape_env_unbacked(env, -5, 5);
    assert_string_equal(hop_symbol_name(s0), "s0");
    assert_string_equal(hop_symbol_name(u0), "u0");
    assert_string_equal(hop_symbol_name(s1), "s1");
    assert_string_equal(hop_symbol_name(u1), "u1");
    assert_int_equal(hop_symbol_id(s0), 0);
    assert_int_equal(hop_symbol_id(u0), 1);
    assert_int_equal(hop_symbol_id(s1), 2);
    assert_int_equal(hop_symbol_id(u1), 3);
    assert_true(hop_symbol_is_unbacked(u1));
    assert_false(hop_symbol_hint(u1, NULL));
    int64_t lo, hi;
    hop_shape_env_bounds(env, u1, &lo, &hi);
    assert_int_equal(lo, -5);
    assert_int_equal(hi, 5);
    assert_null(hop_shape_env_unbacked(env, 3, 2));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_shape_env_unbacked: empty range [3, 2]");
    assert_int_equal(hop_shape_env_nsymbols(env), 4);
    assert_string_equal(hop_symbol_name(hop_shape_env_unbacked(env, 0, 0)), "u2");
}

static void
test_constrain_narrows_ranges_and_rejects_empty_ones(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *u = hop_shape_env_unbacked(env, 0, INT64_MAX);
    const hop_expr *u2 = hop_sym_add_int(env, hop_sym_mul_int(env, u, 2), 1);
    int64_t lo, hi;
    hop_shape_env_bounds(env, u2, &lo, &hi);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, INT64_MAX);
    assert_int_equal(hop_shape_env_constrain(env, u, 2, 100), HOP_OK);
    /* compound expressions see the narrower range */
    hop_shape_env_bounds(env, u2, &lo, &hi);
    assert_int_equal(lo, 5);
    assert_int_equal(hi, 201);
    assert_int_equal(hop_shape_env_constrain(env, u, INT64_MIN, 50), HOP_OK);
    hop_shape_env_bounds(env, u, &lo, &hi);
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 50);
    assert_int_equal(hop_shape_env_constrain(env, u, 60, 70), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_shape_env_constrain: u0 in [2, 50] cannot also be in [60, 70]");
    hop_shape_env_bounds(env, u, &lo, &hi);
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 50);
    assert_int_equal(hop_shape_env_constrain(env, hop_sym_add_int(env, u, 1), 0, 9), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_shape_env_constrain: u0 + 1 is not a symbol");
    assert_int_equal(hop_shape_env_constrain(env, NULL, 0, 9), HOP_MISUSE);
}

static void
test_bounds_by_interval_arithmetic(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s = hop_shape_env_size_symbol(env, 8, true, true);
    const hop_expr *u = hop_shape_env_unbacked(env, -3, 10);
    int64_t lo, hi;
    hop_shape_env_bounds(env, hop_sym_add_int(env, hop_sym_mul_int(env, s, 2), 1), &lo, &hi);
    assert_int_equal(lo, 5);
    assert_int_equal(hi, INT64_MAX);
    hop_shape_env_bounds(env, hop_sym_sub(env, C(4), s), &lo, &hi);
    assert_int_equal(lo, -INT64_MAX + 4);
    assert_int_equal(hi, 2);
    hop_shape_env_bounds(env, hop_sym_mul(env, u, u), &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 100);
    hop_shape_env_bounds(env, hop_sym_mul_int(env, u, -2), &lo, &hi);
    assert_int_equal(lo, -20);
    assert_int_equal(hi, 6);
    hop_shape_env_bounds(env, hop_sym_floordiv(env, u, C(4)), &lo, &hi);
    assert_int_equal(lo, -1);
    assert_int_equal(hi, 2);
    hop_shape_env_bounds(env, hop_sym_mod(env, s, C(4)), &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 3);
    hop_shape_env_bounds(env, hop_sym_max(env, u, C(4)), &lo, &hi);
    assert_int_equal(lo, 4);
    assert_int_equal(hi, 10);
    hop_shape_env_bounds(env, hop_sym_min(env, u, s), &lo, &hi);
    assert_int_equal(lo, -3);
    assert_int_equal(hi, 10);
    hop_shape_env_bounds(env, hop_sym_floordiv(env, u, s), &lo, &hi);
    assert_int_equal(lo, -2);
    assert_int_equal(hi, 5);
    hop_shape_env_bounds(env, hop_sym_gt(env, u, C(100)), &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    hop_shape_env_bounds(env, hop_sym_gt(env, u, C(5)), &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 1);
    /* overflowing bounds saturate */
    hop_shape_env_bounds(env, hop_sym_mul(env, s, s), &lo, &hi);
    assert_int_equal(lo, 4);
    assert_int_equal(hi, INT64_MAX);
}

/* ---------------------------------------------------------------- decisions */

static void
test_constant_conditions_decide_without_guards(void **state)
{
    hop_shape_env *env = *state;
    bool v = false;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_bool(env, true), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_decide(env, hop_sym_lt(env, C(5), C(3)), NULL, &v), HOP_OK);
    assert_false(v);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_conditions_settled_by_value_ranges_record_no_guard(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *u0 = hop_shape_env_unbacked(env, 0, INT64_MAX);
    bool v = true;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_eq(env, s0, C(1)), "view", &v), HOP_OK);
    assert_false(v);
    assert_int_equal(hop_shape_env_decide(env, hop_sym_ge(env, u0, C(0)), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(
        hop_shape_env_decide(env, hop_sym_gt(env, hop_sym_mul(env, s0, s0), C(3)), NULL, &v),
        HOP_OK);
    assert_true(v);
    const hop_expr *both = hop_sym_and(env, hop_sym_ne(env, s0, C(0)), hop_sym_ge(env, u0, C(0)));
    assert_int_equal(hop_shape_env_decide(env, both, NULL, &v), HOP_OK);
    assert_true(v);
    /* an OR settled by one operand even though the other is unbacked */
    const hop_expr *either = hop_sym_or(env, hop_sym_gt(env, u0, C(4)), hop_sym_ge(env, s0, C(2)));
    assert_int_equal(hop_shape_env_decide(env, either, NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_hint_decisions_record_the_condition_that_held(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 7, true, true);
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 3, true, true);
    bool v = false;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_gt(env, s0, C(4)), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_decide(env, hop_sym_gt(env, s1, C(4)), NULL, &v), HOP_OK);
    assert_false(v);
    assert_int_equal(hop_shape_env_decide_eq(env, s0, s1, "add", &v), HOP_OK);
    assert_false(v);
    assert_int_equal(hop_shape_env_decide_eq(env, hop_sym_floordiv(env, s0, C(2)), s1, NULL, &v),
                     HOP_OK);
    assert_true(v);
    const hop_expr *m = hop_sym_mod(env, hop_sym_mul(env, s0, s1), C(4));
    assert_int_equal(hop_shape_env_decide(env, hop_sym_eq(env, m, C(1)), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_nguards(env), 5);
    assert_string_equal(guard_text(env, 0), "s0 > 4");
    assert_string_equal(guard_text(env, 1), "s1 <= 4");
    assert_string_equal(guard_text(env, 2), "s0 != s1");
    assert_string_equal(guard_text(env, 3), "s1 == s0//2");
    assert_string_equal(guard_text(env, 4), "(s0*s1) % 4 == 1");
    /* each guard is a SymBool that holds under the hints */
    int64_t hints[2] = {7, 3}, r = 0;
    for (size_t i = 0; i < hop_shape_env_nguards(env); i++) {
        assert_int_equal(hop_expr_eval(hop_shape_env_guard(env, i), hints, 2, &r), HOP_OK);
        assert_int_equal(r, 1);
    }
    /* the same decisions again add nothing */
    assert_int_equal(hop_shape_env_decide(env, hop_sym_lt(env, C(4), s0), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_decide(env, hop_sym_le(env, s1, C(4)), NULL, &v), HOP_OK);
    assert_true(v);
    assert_int_equal(hop_shape_env_decide_eq(env, s1, s0, NULL, &v), HOP_OK);
    assert_false(v);
    assert_int_equal(hop_shape_env_nguards(env), 5);
    assert_null(hop_shape_env_guard(env, 5));
}

static void
test_undecidable_unbacked_condition_is_data_dependent(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 7, true, true);
    const hop_expr *u0 = hop_shape_env_unbacked(env, 0, INT64_MAX);
    const hop_expr *u1 = hop_shape_env_unbacked(env, 0, 10);
    bool v = true;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_gt(env, u0, C(4)), NULL, &v),
                     HOP_DATA_DEPENDENT);
    assert_string_equal(hop_error_message(),
                        "data-dependent: cannot decide u0 > 4 (u0 is unbacked; its value is only "
                        "known at run time)");
    assert_true(v);
    assert_int_equal(hop_shape_env_decide_eq(env, hop_sym_add(env, s0, u0), u1, "reshape", &v),
                     HOP_DATA_DEPENDENT);
    assert_string_equal(hop_error_message(),
                        "reshape: data-dependent: cannot decide s0 + u0 == u1 (u0, u1 are "
                        "unbacked; their values are only known at run time)");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_decide_rejects_ints_nulls_and_foreign_conditions(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 7, true, true);
    bool v;
    assert_int_equal(hop_shape_env_decide(env, s0, NULL, &v), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_shape_env_decide: operand 1 is a SymInt (s0) where a SymBool is "
                        "expected");
    assert_int_equal(hop_shape_env_decide(env, NULL, NULL, &v), HOP_MISUSE);
    assert_int_equal(hop_shape_env_decide(env, hop_sym_gt(env, s0, C(2)), NULL, NULL), HOP_MISUSE);
    hop_shape_env *other = hop_shape_env_new();
    const hop_expr *t =
        hop_sym_gt(other, hop_shape_env_size_symbol(other, 3, true, true), hop_sym_const(other, 9));
    assert_int_equal(hop_shape_env_decide(env, t, NULL, &v), HOP_MISUSE);
    assert_string_equal(hop_error_message(),
                        "hop_shape_env_decide: operand 1 belongs to another ShapeEnv");
    assert_int_equal(hop_shape_env_decide_eq(env, s0, NULL, NULL, &v), HOP_MISUSE);
    assert_int_equal(hop_shape_env_add_guard(env, t), HOP_MISUSE);
    hop_shape_env_free(other);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

/* ------------------------------------------------------------------- guards */

static void
test_guards_are_deduplicated_and_truncatable(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 7, true, true);
    const hop_expr *g1 = hop_sym_eq(env, s0, C(7));
    const hop_expr *g2 = hop_sym_gt(env, s0, C(2));
    assert_int_equal(hop_shape_env_add_guard(env, g1), HOP_OK);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_eq(env, C(7), s0)), HOP_OK);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_bool(env, true)), HOP_OK);
    assert_int_equal(hop_shape_env_nguards(env), 1);
    assert_int_equal(hop_shape_env_add_guard(env, g2), HOP_OK);
    assert_int_equal(hop_shape_env_nguards(env), 2);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_bool(env, false)), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "hop_shape_env_add_guard: the guard is False, so it can never hold");
    assert_int_equal(hop_shape_env_add_guard(env, s0), HOP_INVALID);
    hop_shape_env_truncate_guards(env, 1);
    assert_int_equal(hop_shape_env_nguards(env), 1);
    assert_ptr_equal(hop_shape_env_guard(env, 0), g1);
    /* a dropped guard can be recorded again */
    bool v;
    assert_int_equal(hop_shape_env_decide(env, hop_sym_lt(env, C(2), s0), NULL, &v), HOP_OK);
    assert_int_equal(hop_shape_env_nguards(env), 2);
    assert_ptr_equal(hop_shape_env_guard(env, 1), g2);
    hop_shape_env_truncate_guards(env, 5);
    assert_int_equal(hop_shape_env_nguards(env), 2);
    hop_shape_env_truncate_guards(env, 0);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

static void
test_truncate_symbols_forgets_names_duck_sizes_and_their_guards(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *u0 = hop_shape_env_unbacked(env, 0, 9);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_gt(env, s0, C(3))), HOP_OK);
    size_t mark = hop_shape_env_nsymbols(env);
    /* a failed trace: two more symbols and guards on them */
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 6, true, true);
    const hop_expr *u1 = hop_shape_env_unbacked(env, 0, 9);
    assert_string_equal(hop_symbol_name(u1), "u1");
    bool v;
    assert_int_equal(hop_shape_env_decide_eq(env, s0, s1, NULL, &v), HOP_OK);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_lt(env, s1, C(9))), HOP_OK);
    assert_int_equal(hop_shape_env_nguards(env), 3);
    hop_shape_env_truncate_symbols(env, mark);
    assert_int_equal(hop_shape_env_nsymbols(env), 2);
    assert_int_equal(hop_shape_env_nguards(env), 1);
    assert_string_equal(guard_text(env, 0), "s0 > 3");
    /* names, ids and the duck table start again where they were */
    const hop_expr *n1 = hop_shape_env_size_symbol(env, 6, true, true);
    assert_ptr_not_equal(n1, s1);
    assert_string_equal(hop_symbol_name(n1), "s1");
    assert_int_equal(hop_symbol_id(n1), 2);
    assert_ptr_equal(hop_shape_env_size_symbol(env, 5, true, true), s0);
    assert_string_equal(hop_symbol_name(hop_shape_env_unbacked(env, 0, 1)), "u1");
    /* the same guard on the new symbol is recorded afresh */
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_lt(env, n1, C(9))), HOP_OK);
    assert_int_equal(hop_shape_env_nguards(env), 2);
    assert_string_equal(guard_text(env, 1), "s1 < 9");
    assert_string_equal(str(hop_sym_add(env, n1, u0)), "s1 + u0");
    hop_shape_env_truncate_symbols(env, 10); /* past the end: nothing */
    assert_int_equal(hop_shape_env_nsymbols(env), 4);
    hop_shape_env_truncate_symbols(env, 0);
    assert_int_equal(hop_shape_env_nsymbols(env), 0);
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_string_equal(hop_symbol_name(hop_shape_env_size_symbol(env, 5, true, true)), "s0");
}

/* An eager call's use of the env: an unbacked symbol, a guard, new
 * constants and expressions on all of them. */
static void
scratch_work(hop_shape_env *env, int64_t seed)
{
    const hop_expr *u = hop_shape_env_unbacked(env, 0, 1000);
    assert_non_null(u);
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_ge(env, u, C(0))), HOP_OK);
    for (int64_t k = 0; k < 40; k++)
        assert_non_null(hop_sym_add(env, hop_sym_mul(env, u, C(seed + k)), C(1000 + seed + k)));
}

static void
test_rollback_forgets_what_was_made_since_the_mark_and_reuses_its_memory(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *old = hop_sym_add(env, s0, C(7));
    assert_int_equal(hop_shape_env_add_guard(env, hop_sym_gt(env, s0, C(3))), HOP_OK);
    hop_shape_env_rollback(env); /* no mark: nothing */
    hop_shape_env_rollback(NULL);
    hop_shape_env_mark(NULL);
    assert_int_equal(hop_shape_env_nsymbols(env), 1);

    hop_shape_env_mark(env);
    /* text asked for while marked outlives the rollback's reuse of memory */
    assert_string_equal(hop_expr_str(env, old), "s0 + 7");
    scratch_work(env, 0);
    assert_int_equal(hop_shape_env_nsymbols(env), 2);
    assert_int_equal(hop_shape_env_nguards(env), 2);
    hop_shape_env_rollback(env);
    assert_int_equal(hop_shape_env_nsymbols(env), 1);
    assert_int_equal(hop_shape_env_nguards(env), 1);
    assert_string_equal(guard_text(env, 0), "s0 > 3");

    /* a hundred more rounds on ever new constants: once the first has
     * made room, the env holds no more memory (the arithmetic's scratch
     * comes and goes), and what was there before the marks is found as it
     * was */
    hop_shape_env_mark(env);
    scratch_work(env, 100);
    hop_shape_env_rollback(env);
    long before = hop_alloc_live();
    for (int64_t r = 2; r < 100; r++) {
        hop_shape_env_mark(env);
        scratch_work(env, 100 * r);
        assert_string_equal(hop_symbol_name(hop_shape_env_symbol(env, 1)), "u0");
        hop_shape_env_rollback(env);
    }
    assert_int_equal(hop_alloc_live() - before, 0);
    assert_ptr_equal(hop_sym_add(env, s0, C(7)), old);
    assert_ptr_equal(hop_shape_env_size_symbol(env, 5, true, true), s0);
    assert_string_equal(hop_expr_str(env, old), "s0 + 7");
    assert_string_equal(str(hop_sym_add(env, old, hop_shape_env_unbacked(env, 0, 9))),
                        "s0 + u0 + 7");
}

/* hop_sym_const's cache of recent constants never outlives its node: a
 * constant first made while marked is interned afresh after the rollback
 * (its memory reused), one made before the mark is the same node throughout,
 * and two constants in one cache slot (64 apart) are each themselves. */
static void
test_constants_made_while_marked_are_made_again_after_rollback(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *seven = C(7);
    assert_ptr_equal(C(7), seven);
    hop_shape_env_mark(env);
    assert_ptr_equal(C(7), seven);
    const hop_expr *big = C(12345);
    assert_int_equal(hop_expr_kind_of(big), HOP_EXPR_CONST);
    assert_ptr_equal(C(12345), big);
    hop_shape_env_rollback(env);
    /* reuses the rolled-back memory: a node here may sit where 12345 was */
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 9, true, true);
    assert_string_equal(str(hop_sym_add(env, s0, C(12345))), "s0 + 12345");
    scratch_work(env, 500);
    const hop_expr *again = C(12345);
    assert_int_equal(hop_expr_kind_of(again), HOP_EXPR_CONST);
    int64_t v = 0;
    assert_true(hop_expr_const_value(again, &v));
    assert_int_equal(v, 12345);
    assert_ptr_equal(C(12345), again);
    assert_ptr_equal(C(7), seven);
    const hop_expr *far = C(7 + 64);
    assert_true(hop_expr_const_value(far, &v));
    assert_int_equal(v, 71);
    assert_ptr_equal(C(7), seven);
    assert_ptr_equal(C(71), far);
    assert_true(hop_expr_const_value(C(-57), &v)); /* -57 and 7 share a slot too */
    assert_int_equal(v, -57);
    assert_ptr_equal(C(7), seven);
}

static void
test_decide_static_uses_ranges_only_and_records_nothing(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 8, true, true);
    const hop_expr *u0 = hop_shape_env_unbacked(env, 0, 10);
    bool v = true;
    /* constants and ranges settle these */
    assert_true(hop_shape_env_decide_static(env, hop_sym_lt(env, C(3), C(4)), &v));
    assert_true(v);
    assert_true(hop_shape_env_decide_static(env, hop_sym_gt(env, C(1), s0), &v));
    assert_false(v);
    assert_true(hop_shape_env_decide_static(env, hop_sym_le(env, u0, C(10)), &v));
    assert_true(v);
    /* the hint (8) would say s0 >= 4, but that is a guard, not a fact */
    v = false;
    assert_false(hop_shape_env_decide_static(env, hop_sym_ge(env, s0, C(4)), &v));
    assert_false(v);
    assert_false(hop_shape_env_decide_static(env, hop_sym_lt(env, u0, C(5)), &v));
    /* an int, NULL or a foreign expression: not decided, no error */
    hop_shape_env *other = hop_shape_env_new();
    assert_false(hop_shape_env_decide_static(env, s0, &v));
    assert_false(hop_shape_env_decide_static(env, NULL, &v));
    assert_false(hop_shape_env_decide_static(env, hop_sym_bool(other, true), &v));
    assert_false(hop_shape_env_decide_static(NULL, hop_sym_bool(env, true), &v));
    hop_shape_env_free(other);
    assert_int_equal(hop_shape_env_nguards(env), 0);
    assert_int_equal(hop_error_code(), HOP_OK);
}

/* Slicing clamps bounds with Min/Max instead of guarding; the lattice laws
 * keep what it builds short (and equal sizes equal pointers). */
static void
test_min_max_drop_operands_the_lattice_laws_dominate(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 8, true, true);
    const hop_expr *min4 = hop_sym_min(env, s0, C(4)), *min3 = hop_sym_min(env, s0, C(3));
    assert_string_equal(str(min4), "Min(s0, 4)");
    /* absorption: Max(a, Min(a, b)) = a, Min(a, Max(a, b)) = a */
    assert_ptr_equal(hop_sym_max(env, s0, min4), s0);
    assert_ptr_equal(hop_sym_min(env, s0, hop_sym_max(env, s0, C(9))), s0);
    /* Min(s0, 3) <= Min(s0, 4), Max(s0, 3) <= Max(s0, 4) */
    assert_ptr_equal(hop_sym_max(env, min3, min4), min4);
    assert_ptr_equal(hop_sym_min(env, min3, min4), min3);
    const hop_expr *max3 = hop_sym_max(env, s0, C(3)), *max4 = hop_sym_max(env, s0, C(4));
    assert_ptr_equal(hop_sym_max(env, max3, max4), max4);
    assert_ptr_equal(hop_sym_min(env, max3, max4), max3);
    /* sums of the same terms compare by their constants */
    const hop_expr *a = hop_sym_add_int(env, s0, -6), *b = hop_sym_add_int(env, s0, -1);
    assert_ptr_equal(hop_sym_max(env, a, b), b);
    assert_ptr_equal(hop_sym_min(env, a, b), a);
    /* nothing is dropped when neither side always wins */
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 9, true, true);
    assert_string_equal(str(hop_sym_max(env, min4, s1)), "Max(s1, Min(s0, 4))");
    assert_string_equal(str(hop_sym_max(env, hop_sym_add_int(env, s0, -6), s1)), "Max(s1, s0 - 6)");
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

/* Bounds see through Min and Max in sums: equal terms cancel and a Min or
 * Max term is distributed over the rest, so the decisions the third order
 * of a while_loop's gradient needs (its peeled step's slices of u0 - Min(u0,
 * Max(0, u0 - 1)) elements) are taken; what stays open stays open. */
static void
test_bounds_see_through_min_and_max_in_sums(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *u = hop_shape_env_unbacked(env, 0, INT64_MAX);
    const hop_expr *v = hop_shape_env_unbacked(env, 0, INT64_MAX);
    const hop_expr *um1 = hop_sym_max(env, C(0), hop_sym_add_int(env, u, -1));
    int64_t lo, hi;
    /* u - Max(0, u - 1) is Min(u, 1) */
    hop_shape_env_bounds(env, hop_sym_sub(env, u, um1), &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 1);
    /* u - Min(u, Max(0, u - 1)) is Max(0, Min(u, 1)) */
    const hop_expr *size = hop_sym_sub(env, u, hop_sym_min(env, u, um1));
    hop_shape_env_bounds(env, size, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 1);
    bool out = true;
    assert_true(hop_shape_env_decide_static(
        env, hop_sym_lt(env, hop_sym_min(env, C(0), size), C(0)), &out));
    assert_false(out);
    assert_true(hop_shape_env_decide_static(env, hop_sym_le(env, um1, u), &out));
    assert_true(out);
    assert_true(hop_shape_env_decide_static(env, hop_sym_lt(env, u, um1), &out));
    assert_false(out);
    assert_true(hop_shape_env_decide_static(
        env, hop_sym_ne(env, hop_sym_max(env, u, C(3)), hop_sym_add_int(env, u, -1)), &out));
    assert_true(out);
    /* 2*Min(u, 5) - Min(2*u, 10) is always 0; distributing pairs each form
     * with both of the other Min's operands, so the bounds are sound but not
     * exact ([0, 10]) */
    const hop_expr *m = hop_sym_sub(env, hop_sym_mul_int(env, hop_sym_min(env, u, C(5)), 2),
                                    hop_sym_min(env, hop_sym_mul_int(env, u, 2), C(10)));
    hop_shape_env_bounds(env, m, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 10);
    /* a relation between unrelated symbols stays undecided */
    assert_false(hop_shape_env_decide_static(env, hop_sym_le(env, um1, v), &out));
    /* (true for u, v >= 0, but not by these bounds: never decided false) */
    out = true;
    hop_shape_env_decide_static(
        env, hop_sym_le(env, hop_sym_max(env, u, v), hop_sym_add(env, u, v)), &out);
    assert_true(out);
    assert_int_equal(hop_shape_env_nguards(env), 0);
}

/* ------------------------------------------------------------------- dtypes */

static void
test_dtype_table_names_sizes_and_kinds(void **state)
{
    (void)state;
    assert_string_equal(hop_dtype_name(HOP_F32), "f32");
    assert_string_equal(hop_dtype_name(HOP_BOOL), "bool");
    assert_string_equal(hop_dtype_name((hop_dtype)99), "?");
    assert_int_equal(hop_dtype_size(HOP_F64), 8);
    assert_int_equal(hop_dtype_size(HOP_I32), 4);
    assert_int_equal(hop_dtype_size(HOP_BOOL), 1);
    assert_int_equal(hop_dtype_size((hop_dtype)-1), 0);
    assert_true(hop_dtype_is_float(HOP_F32));
    assert_false(hop_dtype_is_float(HOP_I64));
    assert_true(hop_dtype_is_int(HOP_I64));
    assert_false(hop_dtype_is_int(HOP_BOOL));
    assert_false(hop_dtype_is_int((hop_dtype)42));
    hop_dtype d = HOP_BOOL;
    assert_int_equal(hop_dtype_from_name("float32", &d), HOP_OK);
    assert_int_equal(d, HOP_F32);
    assert_int_equal(hop_dtype_from_name("i64", &d), HOP_OK);
    assert_int_equal(d, HOP_I64);
    assert_int_equal(hop_dtype_from_name("int32", &d), HOP_OK);
    assert_int_equal(d, HOP_I32);
    assert_int_equal(hop_dtype_from_name("f64", &d), HOP_OK);
    assert_int_equal(d, HOP_F64);
    assert_int_equal(hop_dtype_from_name("bool", &d), HOP_OK);
    assert_int_equal(d, HOP_BOOL);
    assert_int_equal(hop_dtype_from_name("complex32", &d), HOP_INVALID);
    assert_string_equal(hop_error_message(), "unknown dtype 'complex32' (expected bool, i8, u8, "
                                             "i16, u16, i32, u32, i64, u64, f16, f32, f64, c64 "
                                             "or c128)");
    assert_int_equal(d, HOP_BOOL);
    assert_int_equal(hop_dtype_from_name("complex64", &d), HOP_OK);
    assert_int_equal(d, HOP_C64);
    assert_int_equal(hop_dtype_size(HOP_C128), 16);
    assert_true(hop_dtype_is_complex(HOP_C128));
    assert_false(hop_dtype_is_float(HOP_C64));
    assert_int_equal(hop_dtype_real(HOP_C64), HOP_F32);
    assert_int_equal(hop_dtype_complex(HOP_F64), HOP_C128);
    d = HOP_BOOL;
    /* the small types and what NumPy promotes them to */
    static const struct {
        const char *name, *alias;
        hop_dtype d;
        size_t size;
        bool is_float, is_int, is_unsigned;
    } rows[] = {
        {"i8", "int8", HOP_I8, 1, false, true, false},
        {"u8", "uint8", HOP_U8, 1, false, true, true},
        {"i16", "int16", HOP_I16, 2, false, true, false},
        {"u64", "uint64", HOP_U64, 8, false, true, true},
        {"f16", "float16", HOP_F16, 2, true, false, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_string_equal(hop_dtype_name(rows[i].d), rows[i].name);
        assert_int_equal(hop_dtype_size(rows[i].d), rows[i].size);
        assert_int_equal(hop_dtype_is_float(rows[i].d), rows[i].is_float);
        assert_int_equal(hop_dtype_is_int(rows[i].d), rows[i].is_int);
        assert_int_equal(hop_dtype_is_unsigned(rows[i].d), rows[i].is_unsigned);
        assert_int_equal(hop_dtype_from_name(rows[i].name, &d), HOP_OK);
        assert_int_equal(d, rows[i].d);
        assert_int_equal(hop_dtype_from_name(rows[i].alias, &d), HOP_OK);
        assert_int_equal(d, rows[i].d);
    }
    assert_false(hop_dtype_is_unsigned(HOP_I64));
    assert_false(hop_dtype_is_unsigned((hop_dtype)42));
}

/* binary16 against NumPy's float16: exact values, rounding to nearest even
 * (ties too), overflow to inf, subnormals, nan and signed zeros. */
static void
test_f16_conversions_round_to_nearest_even(void **state)
{
    (void)state;
    static const struct {
        double v;
        uint16_t h;
    } rows[] = {
        {0.0, 0x0000},           {-0.0, 0x8000},
        {1.0, 0x3c00},           {-2.0, 0xc000},
        {65504.0, 0x7bff},       {65519.99, 0x7bff},
        {65520.0, 0x7c00},       {1e6, 0x7c00},
        {-1e6, 0xfc00},          {0x1p-24, 0x0001},
        {0x1p-25, 0x0000},       {0x1.8p-25, 0x0001},
        {0x1p-14, 0x0400},       {0x1.ffcp-15, 0x0400},
        {1.0 + 0x1p-11, 0x3c00}, {1.0 + 0x3p-11, 0x3c02},
        {1.0 + 0x1p-10, 0x3c01}, {0.1, 0x2e66},
        {3.14159265, 0x4248},    {1.0 + 0x1p-11 + 0x1p-40, 0x3c01},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(hop_f16_from_double(rows[i].v), rows[i].h);
        assert_int_equal(hop_f16_from_float((float)rows[i].v),
                         hop_f16_from_double((double)(float)rows[i].v));
    }
    assert_true(hop_f16_from_double(NAN) == 0x7e00);
    /* a nan keeps its payload's top bits, as NumPy's conversions keep them
     * (a signalling one stays signalling; all-zero top bits give 0x7c01) */
    const uint32_t fnan[] = {0x7fa00001u, 0xffbfffffu, 0x7f800001u};
    const uint16_t hnan[] = {0x7d00, 0xfdff, 0x7c01};
    for (size_t i = 0; i < 3; i++) {
        float f;
        memcpy(&f, &fnan[i], sizeof f);
        assert_int_equal(hop_f16_from_float(f), hnan[i]);
    }
    const uint64_t dnan = 0x7ff4000000000001u;
    double d;
    memcpy(&d, &dnan, sizeof d);
    assert_int_equal(hop_f16_from_double(d), 0x7d00);
    assert_true(hop_f16_from_double(-INFINITY) == 0xfc00);
    assert_true(hop_f16_to_float(0x7bff) == 65504.0f);
    assert_true(hop_f16_to_float(0x0001) == 0x1p-24f);
    assert_true(hop_f16_to_float(0x8000) == 0.0f && signbit(hop_f16_to_float(0x8000)));
    assert_true(isinf(hop_f16_to_float(0x7c00)));
    assert_true(isnan(hop_f16_to_float(0x7e00)));
    /* every finite half survives the round trip */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        assert_int_equal(hop_f16_from_float(hop_f16_to_float((uint16_t)h)), h);
    }
}

static void
test_dtype_promotion_follows_kind_then_width(void **state)
{
    (void)state;
    assert_int_equal(hop_dtype_promote(HOP_U8, HOP_I8), HOP_I16);
    assert_int_equal(hop_dtype_promote(HOP_U64, HOP_I64), HOP_F64);
    assert_int_equal(hop_dtype_promote(HOP_I64, HOP_F16), HOP_F16);
    assert_int_equal(hop_dtype_promote(HOP_U8, HOP_U64), HOP_U64);
    assert_int_equal(hop_dtype_promote(HOP_BOOL, HOP_I32), HOP_I32);
    assert_int_equal(hop_dtype_promote(HOP_I64, HOP_I32), HOP_I64);
    assert_int_equal(hop_dtype_promote(HOP_I64, HOP_F32), HOP_F32);
    assert_int_equal(hop_dtype_promote(HOP_F64, HOP_F32), HOP_F64);
    assert_int_equal(hop_dtype_promote(HOP_BOOL, HOP_BOOL), HOP_BOOL);
    assert_int_equal(hop_dtype_promote(HOP_F32, HOP_I32), HOP_F32);
}

/* ----------------------------------------------------------------- metadata */

static void
test_meta_prints_sizes_and_zero_dim_tensors(void **state)
{
    hop_shape_env *env = *state;
    hop_meta m;
    int64_t sizes[2] = {7, 4};
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, 2, sizes), HOP_OK);
    char buf[64];
    assert_int_equal(hop_meta_print(&m, buf, sizeof buf), 9);
    assert_string_equal(buf, "f32[7, 4]");
    m.sizes[0] = hop_shape_env_size_symbol(env, 7, true, true);
    hop_meta_print(&m, buf, sizeof buf);
    assert_string_equal(buf, "f32[s0, 4]");
    assert_int_equal(hop_meta_print(&m, buf, 6), 10);
    assert_string_equal(buf, "f32[s");
    assert_int_equal(hop_meta_print(&m, NULL, 0), 10);
    hop_meta z;
    assert_int_equal(hop_meta_init(&z, env, HOP_I64, 0, NULL), HOP_OK);
    hop_meta_print(&z, buf, sizeof buf);
    assert_string_equal(buf, "i64[]");
    m.sizes[1] = hop_sym_add_int(env, hop_sym_mul_int(env, m.sizes[0], 2), 1);
    hop_meta_print(&m, buf, sizeof buf);
    assert_string_equal(buf, "f32[s0, 2*s0 + 1]");
}

static void
test_meta_init_rejects_bad_rank_sizes_and_dtype(void **state)
{
    hop_shape_env *env = *state;
    hop_meta m = {.dtype = HOP_F64, .rank = 1};
    int64_t sizes[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, 9, sizes), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_meta_init: rank 9 is outside [0, 8]");
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, -1, sizes), HOP_INVALID);
    sizes[1] = -2;
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, 3, sizes), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hop_meta_init: size -2 of dim 1 is negative");
    assert_int_equal(hop_meta_init(&m, env, (hop_dtype)17, 1, sizes), HOP_INVALID);
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, 2, NULL), HOP_MISUSE);
    assert_int_equal(hop_meta_init(&m, NULL, HOP_F32, 1, sizes), HOP_MISUSE);
    /* m is untouched by every failure */
    assert_int_equal(m.dtype, HOP_F64);
    assert_int_equal(m.rank, 1);
}

static void
test_meta_strides_numel_and_equality(void **state)
{
    hop_shape_env *env = *state;
    const hop_expr *s0 = hop_shape_env_size_symbol(env, 5, true, true);
    const hop_expr *s1 = hop_shape_env_size_symbol(env, 6, true, true);
    int64_t sizes[3] = {1, 4, 1};
    hop_meta m;
    assert_int_equal(hop_meta_init(&m, env, HOP_F32, 3, sizes), HOP_OK);
    m.sizes[0] = s0;
    m.sizes[2] = s1;
    const hop_expr *st[3];
    assert_int_equal(hop_meta_strides(&m, env, st), HOP_OK);
    assert_string_equal(str(st[0]), "4*s1");
    assert_string_equal(str(st[1]), "s1");
    assert_string_equal(str(st[2]), "1");
    assert_string_equal(str(hop_meta_numel(&m, env)), "4*s0*s1");
    hop_meta z;
    assert_int_equal(hop_meta_init(&z, env, HOP_F32, 0, NULL), HOP_OK);
    assert_ptr_equal(hop_meta_numel(&z, env), C(1));
    assert_int_equal(hop_meta_strides(&z, env, NULL), HOP_OK);

    hop_meta n = m;
    assert_true(hop_meta_equal(&m, &n));
    n.sizes[1] = hop_sym_add_int(env, C(3), 1); /* the same interned 4 */
    assert_true(hop_meta_equal(&m, &n));
    n.sizes[1] = C(5);
    assert_false(hop_meta_equal(&m, &n));
    n = m;
    n.dtype = HOP_F64;
    assert_false(hop_meta_equal(&m, &n));
    n = m;
    n.rank = 2;
    assert_false(hop_meta_equal(&m, &n));
    assert_true(hop_meta_equal(NULL, NULL));
    assert_false(hop_meta_equal(&m, NULL));

    m.sizes[1] = NULL;
    assert_int_equal(hop_meta_strides(&m, env, st), HOP_MISUSE);
    assert_null(hop_meta_numel(&m, env));
    assert_int_equal(hop_error_code(), HOP_MISUSE);
}

/* ------------------------------------------------------ allocation failures */

#define STEP(var, expr)                                                                            \
    const hop_expr *var = (expr);                                                                  \
    if (var == NULL)                                                                               \
        return hop_error_code();

/* A trace's worth of env work; the first failure's status. */
static hop_status
trace_like(hop_shape_env *env, char *text, size_t cap)
{
    STEP(s0, hop_shape_env_size_symbol(env, 8, true, true));
    STEP(s1, hop_shape_env_size_symbol(env, 3, true, true));
    STEP(s0b, hop_shape_env_size_symbol(env, 8, true, true));
    STEP(one, hop_shape_env_size_symbol(env, 1, true, true));
    STEP(u0, hop_shape_env_unbacked(env, 0, INT64_MAX));
    hop_status st = hop_shape_env_constrain(env, u0, 0, 1000);
    if (st != HOP_OK)
        return st;
    bool v;
    STEP(c1, hop_sym_gt(env, s0, s1));
    if ((st = hop_shape_env_decide(env, c1, "cat", &v)) != HOP_OK)
        return st;
    if ((st = hop_shape_env_decide_eq(env, s0b, s1, "add", &v)) != HOP_OK)
        return st;
    STEP(c2, hop_sym_ge(env, u0, one));
    if ((st = hop_shape_env_decide(env, c2, "nonzero", &v)) != HOP_DATA_DEPENDENT)
        return st == HOP_OK ? HOP_INVALID : st;
    STEP(k1000, C(1000));
    STEP(c3, hop_sym_le(env, u0, k1000));
    if ((st = hop_shape_env_decide(env, c3, NULL, &v)) != HOP_OK)
        return st;
    STEP(zero, C(0));
    STEP(c4, hop_sym_ne(env, s0, zero));
    if ((st = hop_shape_env_add_guard(env, c4)) != HOP_OK)
        return st;
    hop_meta m;
    int64_t sizes[2] = {2, 3};
    if ((st = hop_meta_init(&m, env, HOP_F32, 2, sizes)) != HOP_OK)
        return st;
    m.sizes[0] = s0;
    STEP(numel, hop_meta_numel(&m, env));
    const hop_expr *strides[2];
    if ((st = hop_meta_strides(&m, env, strides)) != HOP_OK)
        return st;
    char mbuf[64];
    hop_meta_print(&m, mbuf, sizeof mbuf);
    size_t len = (size_t)snprintf(text, cap, "%s %s", mbuf, str(numel));
    for (size_t i = 0; i < hop_shape_env_nguards(env); i++)
        len += (size_t)snprintf(text + len, cap - len, " [%s]", guard_text(env, i));
    return HOP_OK;
}
#undef STEP

static void
test_allocation_failure_sweep_over_env_work(void **state)
{
    (void)state;
    long base = hop_alloc_live();
    char expect[512], text[512];
    hop_shape_env *env = hop_shape_env_new();
    assert_int_equal(trace_like(env, expect, sizeof expect), HOP_OK);
    assert_string_equal(expect, "f32[s0, 3] 3*s0 [s0 > s1] [s0 != s1] [s0 != 0]");
    hop_shape_env_free(env);
    int failures = 0;
    for (long k = 1;; k++) {
        hop_alloc_fail_at(k);
        env = hop_shape_env_new();
        hop_status st = env ? trace_like(env, text, sizeof text) : hop_error_code();
        hop_alloc_fail_at(0);
        if (st == HOP_OK) {
            assert_string_equal(text, expect);
            hop_shape_env_free(env);
            break;
        }
        assert_int_equal(st, HOP_NOMEM);
        failures++;
        if (env) {
            /* a failed step left the env consistent: doing it all again works
             * and gives the same text */
            assert_int_equal(trace_like(env, text, sizeof text), HOP_OK);
            assert_string_equal(text, expect);
            hop_shape_env_free(env);
        }
        assert_int_equal(hop_alloc_live(), base);
    }
    assert_true(failures > 5);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_duck_sizing_shares_a_symbol_between_equal_sizes),
        T(test_sizes_0_and_1_are_specialised_to_constants),
        T(test_backed_symbols_have_range_2_to_int64_max),
        T(test_negative_size_hint_is_invalid),
        T(test_unbacked_symbols_have_their_own_names_and_shared_ids),
        T(test_constrain_narrows_ranges_and_rejects_empty_ones),
        T(test_bounds_by_interval_arithmetic),
        T(test_constant_conditions_decide_without_guards),
        T(test_conditions_settled_by_value_ranges_record_no_guard),
        T(test_hint_decisions_record_the_condition_that_held),
        T(test_undecidable_unbacked_condition_is_data_dependent),
        T(test_decide_rejects_ints_nulls_and_foreign_conditions),
        T(test_guards_are_deduplicated_and_truncatable),
        T(test_truncate_symbols_forgets_names_duck_sizes_and_their_guards),
        T(test_rollback_forgets_what_was_made_since_the_mark_and_reuses_its_memory),
        T(test_constants_made_while_marked_are_made_again_after_rollback),
        T(test_decide_static_uses_ranges_only_and_records_nothing),
        T(test_min_max_drop_operands_the_lattice_laws_dominate),
        T(test_bounds_see_through_min_and_max_in_sums),
        T(test_dtype_table_names_sizes_and_kinds),
        T(test_f16_conversions_round_to_nearest_even),
        T(test_dtype_promotion_follows_kind_then_width),
        T(test_meta_prints_sizes_and_zero_dim_tensors),
        T(test_meta_init_rejects_bad_rank_sizes_and_dtype),
        T(test_meta_strides_numel_and_equality),
        T(test_allocation_failure_sweep_over_env_work),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
