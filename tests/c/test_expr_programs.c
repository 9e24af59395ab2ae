/*
 * tests/c/test_expr_programs.c - the programs plans compile SymInt and
 * SymBool expressions into (lowering/xprog.c) against hop_expr_eval
 * (ops/sym_eval.c): random expressions over three size symbols, built with
 * the public constructors, are a plan's output; at random sizes the plan
 * gives exactly hop_expr_eval's value, and fails exactly when it does
 * (int64 overflow, division or modulo by zero).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "test_plan_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer in [lo, hi], from test_plan_util.h's generator. */
static int64_t
between(int64_t lo, int64_t hi)
{
    int64_t k = lo + (int64_t)((uniform() + 1.0) / 2.0 * (double)(hi - lo + 1));
    return k > hi ? hi : k;
}

typedef struct gen {
    hop_shape_env *env;
    const hop_expr *syms[3];
} gen;

static const hop_expr *gen_bool(gen *g, int depth);

/* A leaf: a symbol, a small constant, or now and then one large enough to
 * overflow what it meets. */
static const hop_expr *
leaf(gen *g)
{
    int64_t r = between(0, 19);
    if (r < 11)
        return g->syms[r % 3];
    if (r < 18)
        return hop_sym_const(g->env, between(-6, 6));
    static const int64_t big[] = {INT64_MAX, INT64_MIN, (int64_t)1 << 62, -((int64_t)1 << 31)};
    return hop_sym_const(g->env, big[r % 4]);
}

static const hop_expr *
gen_int(gen *g, int depth)
{
    if (depth == 0 || between(0, 9) < 3)
        return leaf(g);
    const hop_expr *a = gen_int(g, depth - 1), *b = gen_int(g, depth - 1), *e = NULL;
    switch (between(0, 10)) {
    case 0:
        e = hop_sym_add(g->env, a, b);
        break;
    case 1:
        e = hop_sym_sub(g->env, a, b);
        break;
    case 2:
    case 3:
        e = hop_sym_mul(g->env, a, b);
        break;
    case 4:
        e = hop_sym_floordiv(g->env, a, b);
        break;
    case 5:
        e = hop_sym_mod(g->env, a, b);
        break;
    case 6:
        e = hop_sym_max(g->env, a, hop_sym_max(g->env, b, gen_int(g, depth - 1)));
        break;
    case 7:
        e = hop_sym_min(g->env, a, b);
        break;
    case 8:
        e = hop_sym_neg(g->env, a);
        break;
    case 9:
        e = hop_sym_mul_int(g->env, hop_sym_add_int(g->env, a, between(-3, 3)), between(-4, 4));
        break;
    default:
        e = hop_sym_mul(g->env, a, hop_sym_mul(g->env, a, b)); /* powers */
        break;
    }
    if (e == NULL) { /* a constant division by zero or overflow: refused */
        hop_error_clear();
        return leaf(g);
    }
    return e;
}

static const hop_expr *
gen_bool(gen *g, int depth)
{
    const hop_expr *e = NULL;
    int64_t r = between(0, 9);
    if (depth == 0 || r < 6) {
        const hop_expr *a = gen_int(g, depth), *b = gen_int(g, depth);
        switch (between(0, 5)) {
        case 0:
            e = hop_sym_eq(g->env, a, b);
            break;
        case 1:
            e = hop_sym_ne(g->env, a, b);
            break;
        case 2:
            e = hop_sym_lt(g->env, a, b);
            break;
        case 3:
            e = hop_sym_le(g->env, a, b);
            break;
        case 4:
            e = hop_sym_gt(g->env, a, b);
            break;
        default:
            e = hop_sym_ge(g->env, a, b);
            break;
        }
    } else if (r < 8) {
        const hop_expr *a = gen_bool(g, depth - 1), *b = gen_bool(g, depth - 1);
        e = r == 6 ? hop_sym_and(g->env, a, b) : hop_sym_or(g->env, a, b);
    } else {
        e = hop_sym_not(g->env, gen_bool(g, depth - 1));
    }
    if (e == NULL) {
        hop_error_clear();
        return hop_sym_bool(g->env, true);
    }
    return e;
}

/* One expression as the output of a plan over x0[s0], x1[s1], x2[s2], run
 * at sizes drawn from [2, 40]; returns how many runs failed. */
static int
check_expression(int index, int *kinds)
{
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    gen g = {.env = hop_output_graph_env(og)};
    hop_node *x[3];
    for (int i = 0; i < 3; i++) {
        char name[4] = {'x', (char)('0' + i), 0};
        x[i] = hop_output_graph_add_input(og, name, HOP_F32, 1, (int64_t[]){3 + 2 * i}, true);
        assert_non_null(x[i]);
        g.syms[i] = x[i]->meta->meta.sizes[0];
    }
    const hop_expr *e = index % 3 == 0 ? gen_bool(&g, 4) : gen_int(&g, 5);
    kinds[hop_expr_kind_of(e)]++;
    hop_arg out = hop_arg_sym(e);
    assert_non_null(hop_tracer_output(hop_output_graph_root(og), &out, 1));
    hop_plan *p = hop_lower(og, NULL);
    if (p == NULL)
        fail_msg("%s: %s", hop_expr_str(g.env, e), hop_error_message());
    int failures = 0;
    for (int run = 0; run < 12; run++) {
        int64_t sizes[3], values[8];
        size_t nsyms = hop_shape_env_nsymbols(g.env);
        assert_true(nsyms <= 8);
        for (size_t k = 0; k < nsyms; k++)
            values[k] = HOP_UNBOUND;
        hop_tensor *in[3];
        for (int i = 0; i < 3; i++) {
            sizes[i] = between(2, 40);
            values[hop_symbol_id(g.syms[i])] = sizes[i];
            in[i] = hop_tensor_empty(HOP_F32, 1, &sizes[i]);
            assert_non_null(in[i]);
        }
        int64_t want = 0;
        hop_status ws = hop_expr_eval(e, values, nsyms, &want);
        hop_tensor *got = NULL;
        hop_status gs = hop_plan_run(p, in, 3, &got, 1);
        if ((ws == HOP_OK) != (gs == HOP_OK) ||
            (gs != HOP_OK && (gs != HOP_CHECK || !strstr(hop_error_message(), "cannot evaluate"))))
            fail_msg("%s at s = (%lld, %lld, %lld): hop_expr_eval %s, the plan %s (%s)",
                     hop_expr_str(g.env, e), (long long)sizes[0], (long long)sizes[1],
                     (long long)sizes[2], hop_status_name(ws), hop_status_name(gs),
                     hop_error_message());
        if (gs == HOP_OK) {
            assert_int_equal(got->dtype, HOP_I64);
            assert_int_equal(got->rank, 0);
            int64_t v = *(const int64_t *)got->data;
            if (v != want)
                fail_msg("%s at s = (%lld, %lld, %lld): %lld, hop_expr_eval gives %lld",
                         hop_expr_str(g.env, e), (long long)sizes[0], (long long)sizes[1],
                         (long long)sizes[2], (long long)v, (long long)want);
        } else {
            failures++;
        }
        hop_error_clear();
        hop_tensor_release(got);
        for (int i = 0; i < 3; i++)
            hop_tensor_release(in[i]);
    }
    hop_plan_free(p);
    hop_output_graph_free(og);
    return failures;
}

static void
test_compiled_expressions_evaluate_as_hop_expr_eval_does(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    int kinds[HOP_EXPR_NOT + 1] = {0}, failures = 0;
    for (int i = 0; i < 600; i++)
        failures += check_expression(i, kinds);
    /* The draw covered the canonical form's kinds, and errors too. */
    for (int k = HOP_EXPR_SYMBOL; k <= HOP_EXPR_NOT; k++)
        if (k != HOP_EXPR_TRUE && k != HOP_EXPR_FALSE && kinds[k] == 0)
            fail_msg("no expression of kind %d at the top", k);
    assert_true(failures > 20);
    assert_int_equal(hop_alloc_live(), live);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compiled_expressions_evaluate_as_hop_expr_eval_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
