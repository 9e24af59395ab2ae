/*
 * tests/c/test_autodiff_ops.c - the op rules of autodiff (autodiff/
 * op_rules.c) against central finite differences: for each differentiable
 * op, f(x[, y]) = sum(w * op(...)) in float64 (w a fixed non-uniform
 * weight, so a transposed or permuted cotangent shows), its hop_vjp_graph
 * gradient and its hop_jvp_graph directional derivative, evaluated with the
 * reference interpreter, agree with (f(x + eps e) - f(x - eps e)) / 2 eps
 * (eps 1e-6) to 1e-6 relative; broadcasting shapes and scalar operands
 * included.  Then the values JAX gives where the derivative is a
 * convention (ties, kinks, zeros), grad-of-grad through rules built from
 * differentiable ops, and the table's coverage of every op.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "hop.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/runtime.h"
#include "test_nomem_util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN(a) (sizeof(a) / sizeof *(a))
#define N(x) hop_arg_node(x)
#define I(v) hop_arg_int(v)
#define F(v) hop_arg_float(v)
#define B(v) hop_arg_bool(v)
#define NONE hop_arg_none()
#define LIST(...) hop_arg_list((hop_arg[]){__VA_ARGS__}, LEN(((hop_arg[]){__VA_ARGS__})))
#define OP(g, op, ...)                                                                             \
    call(g, HOP_OP_##op, (hop_arg[]){__VA_ARGS__}, LEN(((hop_arg[]){__VA_ARGS__})))

#define EPS 1e-6
#define RTOL 1e-6
#define MAX_IN 3

static hop_node *
call(hop_graph *g, hop_op op, const hop_arg *args, size_t n)
{
    hop_node *r = hop_graph_call_op(g, op, args, n);
    if (r == NULL)
        fail_msg("%s: %s", hop_op_get(op)->name, hop_error_message());
    return r;
}

/* ------------------------------------------------------------- a case */

typedef hop_node *(*build_fn)(hop_graph *g, hop_node **x);

typedef struct shape {
    int rank;
    int64_t sizes[4];
} shape;

typedef struct ad_case {
    const char *name;
    build_fn build;
    int nin;
    shape in[MAX_IN];
    double lo, hi; /* inputs drawn from [lo, hi] */
} ad_case;

/* sum(w * y) with w = cos(0.7 k + 0.3) over y's elements in order: a
 * scalar whose cotangent at y is w, different at every element. */
static hop_node *
weighted_sum(hop_graph *g, hop_node *y)
{
    const hop_meta *m = &y->meta->meta;
    hop_arg sizes[HOP_MAX_RANK];
    for (int k = 0; k < m->rank; k++)
        sizes[k] = hop_arg_sym(m->sizes[k]);
    hop_node *numel_k =
        OP(g, arange, I(0), hop_arg_sym(hop_meta_numel(m, g->env)), I(1), hop_arg_dtype(HOP_F64));
    hop_node *w = OP(g, reshape, N(numel_k), hop_arg_list(sizes, (size_t)m->rank));
    w = OP(g, cos, N(OP(g, add, N(OP(g, mul, N(w), F(0.7))), F(0.3))));
    return OP(g, sum, N(OP(g, mul, N(y), N(w))), NONE, B(false));
}

/* Whether inputs get symbolic sizes (duck-sized backed symbols; sizes 0
 * and 1 stay constants), so rules meet SymInt sizes. */
static bool dynamic;

/* The forward graph f(x...) -> sum(w * build(x...)) (or the plain sum). */
static hop_graph *
forward(hop_shape_env *env, const ad_case *c, bool weighted)
{
    hop_graph *g = hop_graph_new(env, "f");
    assert_non_null(g);
    hop_node *x[MAX_IN];
    for (int i = 0; i < c->nin; i++) {
        hop_value_info vi = {.kind = HOP_VALUE_TENSOR};
        assert_int_equal(hop_meta_init(&vi.meta, env, HOP_F64, c->in[i].rank, c->in[i].sizes),
                         HOP_OK);
        for (int k = 0; dynamic && k < c->in[i].rank; k++)
            assert_non_null(vi.meta.sizes[k] =
                                hop_shape_env_size_symbol(env, c->in[i].sizes[k], true, true));
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        assert_non_null(x[i] = hop_graph_placeholder(g, name, &vi));
    }
    hop_node *y = c->build(g, x);
    hop_node *s = weighted ? weighted_sum(g, y) : OP(g, sum, N(y), NONE, B(false));
    assert_non_null(hop_graph_output(g, (hop_arg[]){N(s)}, 1));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    return g;
}

static uint64_t rng_state = 88172645463325252ull;

static double
uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static int64_t
numel(const shape *s)
{
    int64_t n = 1;
    for (int k = 0; k < s->rank; k++)
        n *= s->sizes[k];
    return n;
}

static hop_tensor *
tensor(const shape *s, const double *data)
{
    hop_tensor *t = hop_tensor_from_data(HOP_F64, s->rank, s->sizes, data);
    assert_non_null(t);
    return t;
}

/* Runs og's root on inputs; out[] gets every output (the caller's). */
static void
run(hop_output_graph *og, hop_tensor **in, size_t nin, hop_tensor **out)
{
    size_t nout = hop_output_graph_root_graph(og)->output->nargs;
    hop_status st = hop_graph_eval(og, in, nin, out, nout);
    if (st != HOP_OK)
        fail_msg("hop_graph_eval: %s", hop_error_message());
}

static double
scalar_of(const hop_tensor *t)
{
    double v;
    assert_int_equal(hop_tensor_item_double(t, &v), HOP_OK);
    return v;
}

static void
release(hop_tensor **ts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hop_tensor_release(ts[i]);
}

/* Output 0 of og's root (f) at inputs data[i] (+ h dir[i]) for the first
 * nin inputs; extra (tangent) inputs get zeros. */
static double
f_at(hop_output_graph *og, const ad_case *c, double *const *data, double *const *dir, double h,
     int nextra)
{
    hop_tensor *in[2 * MAX_IN], *out[16];
    double buf[256];
    for (int i = 0; i < c->nin; i++) {
        int64_t n = numel(&c->in[i]);
        assert_true(n <= (int64_t)LEN(buf));
        for (int64_t k = 0; k < n; k++)
            buf[k] = data[i][k] + (dir ? h * dir[i][k] : 0.0);
        in[i] = tensor(&c->in[i], buf);
    }
    for (int i = 0; i < nextra; i++) {
        memset(buf, 0, sizeof buf);
        in[c->nin + i] = tensor(&c->in[i], buf);
    }
    size_t nout = hop_output_graph_root_graph(og)->output->nargs;
    assert_true(nout <= LEN(out));
    run(og, in, (size_t)(c->nin + nextra), out);
    double v = scalar_of(out[0]);
    release(out, nout);
    release(in, (size_t)(c->nin + nextra));
    return v;
}

static void
check_close(const char *what, const char *name, double got, double want)
{
    if (!(fabs(got - want) <= RTOL * (1.0 + fabs(want))))
        fail_msg("%s of %s: got %.12g, finite differences give %.12g", what, name, got, want);
}

/* The gradient of hop_vjp_graph and the tangent of hop_jvp_graph against
 * central differences at one point. */
static void
check_case(const ad_case *c)
{
    double data[MAX_IN][256], dirs[MAX_IN][256];
    double *dp[MAX_IN], *dd[MAX_IN];
    for (int i = 0; i < c->nin; i++) {
        for (int64_t k = 0; k < numel(&c->in[i]); k++) {
            data[i][k] = uniform(c->lo, c->hi);
            dirs[i][k] = uniform(-1.0, 1.0);
        }
        dp[i] = data[i];
        dd[i] = dirs[i];
    }

    /* reverse mode: f_bwd(x...) -> (f, grads...) */
    hop_output_graph *og = hop_output_graph_new();
    assert_non_null(og);
    hop_graph *fwd = forward(hop_output_graph_env(og), c, true);
    bool wrt[MAX_IN] = {true, true, true};
    hop_ct_kind cts[1] = {HOP_CT_ONE};
    if (hop_vjp_graph(fwd, wrt, cts, hop_output_graph_root_graph(og)) != HOP_OK)
        fail_msg("hop_vjp_graph of %s: %s", c->name, hop_error_message());
    hop_tensor *in[MAX_IN], *out[1 + MAX_IN];
    for (int i = 0; i < c->nin; i++)
        in[i] = tensor(&c->in[i], data[i]);
    run(og, in, (size_t)c->nin, out);
    for (int i = 0; i < c->nin; i++) {
        hop_tensor *gr = out[1 + i];
        assert_int_equal(gr->dtype, HOP_F64);
        assert_int_equal(gr->rank, c->in[i].rank);
        assert_int_equal(hop_tensor_numel(gr), numel(&c->in[i]));
        hop_tensor *cg = hop_tensor_contiguous(gr);
        const double *gv = cg->data;
        for (int64_t k = 0; k < numel(&c->in[i]); k++) {
            double keep = data[i][k];
            data[i][k] = keep + EPS;
            double fp = f_at(og, c, dp, NULL, 0, 0);
            data[i][k] = keep - EPS;
            double fm = f_at(og, c, dp, NULL, 0, 0);
            data[i][k] = keep;
            char what[64];
            snprintf(what, sizeof what, "d/dx%d[%lld]", i, (long long)k);
            check_close(what, c->name, gv[k], (fp - fm) / (2 * EPS));
        }
        hop_tensor_release(cg);
    }
    release(out, (size_t)(1 + c->nin));
    release(in, (size_t)c->nin);
    hop_graph_free(fwd);
    hop_output_graph_free(og);

    /* forward mode: f_jvp(x..., t...) -> (f, df) */
    og = hop_output_graph_new();
    assert_non_null(og);
    fwd = forward(hop_output_graph_env(og), c, true);
    if (hop_jvp_graph(fwd, wrt, hop_output_graph_root_graph(og)) != HOP_OK)
        fail_msg("hop_jvp_graph of %s: %s", c->name, hop_error_message());
    hop_tensor *jin[2 * MAX_IN], *jout[2];
    for (int i = 0; i < c->nin; i++) {
        jin[i] = tensor(&c->in[i], data[i]);
        jin[c->nin + i] = tensor(&c->in[i], dirs[i]);
    }
    run(og, jin, (size_t)(2 * c->nin), jout);
    double fp = f_at(og, c, dp, dd, EPS, c->nin), fm = f_at(og, c, dp, dd, -EPS, c->nin);
    check_close("the directional derivative", c->name, scalar_of(jout[1]), (fp - fm) / (2 * EPS));
    release(jout, 2);
    release(jin, (size_t)(2 * c->nin));
    hop_graph_free(fwd);
    hop_output_graph_free(og);
}

/* Each case at two points, with constant and then symbolic sizes. */
static void
check_cases(const ad_case *cs, size_t n)
{
    for (int dyn = 0; dyn < 2; dyn++) {
        dynamic = dyn;
        for (size_t i = 0; i < n; i++)
            for (int rep = 0; rep < 2; rep++)
                check_case(&cs[i]);
    }
    dynamic = false;
}

#define S1(a)                                                                                      \
    {                                                                                              \
        1,                                                                                         \
        {                                                                                          \
            a                                                                                      \
        }                                                                                          \
    }
#define S2(a, b)                                                                                   \
    {                                                                                              \
        2,                                                                                         \
        {                                                                                          \
            a, b                                                                                   \
        }                                                                                          \
    }
#define S3(a, b, c)                                                                                \
    {                                                                                              \
        3,                                                                                         \
        {                                                                                          \
            a, b, c                                                                                \
        }                                                                                          \
    }
#define S4(a, b, c, d)                                                                             \
    {                                                                                              \
        4,                                                                                         \
        {                                                                                          \
            a, b, c, d                                                                             \
        }                                                                                          \
    }
#define S0                                                                                         \
    {                                                                                              \
        0,                                                                                         \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* ---------------------------------------------------------------- unary */

#define UNARY_BUILD(op)                                                                            \
    static hop_node *b_##op(hop_graph *g, hop_node **x)                                            \
    {                                                                                              \
        return OP(g, op, N(x[0]));                                                                 \
    }
UNARY_BUILD(neg)
UNARY_BUILD(abs)
UNARY_BUILD(exp)
UNARY_BUILD(log)
UNARY_BUILD(sin)
UNARY_BUILD(cos)
UNARY_BUILD(tanh)
UNARY_BUILD(sigmoid)
UNARY_BUILD(relu)
UNARY_BUILD(sqrt)
UNARY_BUILD(expm1)
UNARY_BUILD(log1p)
UNARY_BUILD(log2)
UNARY_BUILD(log10)
UNARY_BUILD(exp2)
UNARY_BUILD(tan)
UNARY_BUILD(arctan)
UNARY_BUILD(clone)

static void
test_unary_ops_match_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"neg", b_neg, 1, {S2(2, 3)}, -2, 2},       {"abs", b_abs, 1, {S2(2, 3)}, -2, 2},
        {"exp", b_exp, 1, {S2(2, 3)}, -2, 2},       {"log", b_log, 1, {S2(2, 3)}, 0.5, 2},
        {"sin", b_sin, 1, {S2(2, 3)}, -2, 2},       {"cos", b_cos, 1, {S2(2, 3)}, -2, 2},
        {"tanh", b_tanh, 1, {S2(2, 3)}, -2, 2},     {"sigmoid", b_sigmoid, 1, {S2(2, 3)}, -2, 2},
        {"relu", b_relu, 1, {S2(2, 3)}, -2, 2},     {"sqrt", b_sqrt, 1, {S2(2, 3)}, 0.5, 2},
        {"expm1", b_expm1, 1, {S2(2, 3)}, -2, 2},   {"log1p", b_log1p, 1, {S2(2, 3)}, -0.5, 2},
        {"log2", b_log2, 1, {S2(2, 3)}, 0.5, 2},    {"log10", b_log10, 1, {S2(2, 3)}, 0.5, 2},
        {"exp2", b_exp2, 1, {S2(2, 3)}, -2, 2},     {"tan", b_tan, 1, {S2(2, 3)}, -1, 1},
        {"arctan", b_arctan, 1, {S2(2, 3)}, -2, 2}, {"clone", b_clone, 1, {S0}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

/* --------------------------------------------------------------- binary */

#define BINARY_BUILD(op)                                                                           \
    static hop_node *b_##op(hop_graph *g, hop_node **x)                                            \
    {                                                                                              \
        return OP(g, op, N(x[0]), N(x[1]));                                                        \
    }
BINARY_BUILD(add)
BINARY_BUILD(sub)
BINARY_BUILD(mul)
BINARY_BUILD(div)
BINARY_BUILD(pow)
BINARY_BUILD(maximum)
BINARY_BUILD(minimum)
BINARY_BUILD(remainder)
BINARY_BUILD(matmul)

static hop_node *
b_mul_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, mul, N(x[0]), F(2.5));
}

static hop_node *
b_rsub_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, sub, I(3), N(x[0]));
}

static hop_node *
b_rdiv_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, div, F(1.5), N(x[0]));
}

static hop_node *
b_pow_scalar_exp(hop_graph *g, hop_node **x)
{
    return OP(g, pow, N(x[0]), F(3.0));
}

static hop_node *
b_pow_scalar_base(hop_graph *g, hop_node **x)
{
    return OP(g, pow, F(2.0), N(x[0]));
}

static hop_node *
b_max_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, maximum, N(x[0]), F(0.25));
}

static hop_node *
b_rem_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, remainder, F(5.0), N(x[0]));
}

/* An operand used twice: the two gradients add up. */
static hop_node *
b_square_sum(hop_graph *g, hop_node **x)
{
    return OP(g, add, N(OP(g, mul, N(x[0]), N(x[0]))), N(x[1]));
}

static void
test_binary_ops_match_finite_differences_with_broadcasting(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"add [2,3]+[3]", b_add, 2, {S2(2, 3), S1(3)}, -2, 2},
        {"add [3,1]+[1,4]", b_add, 2, {S2(3, 1), S2(1, 4)}, -2, 2},
        {"sub [2,1]-[2,3]", b_sub, 2, {S2(2, 1), S2(2, 3)}, -2, 2},
        {"mul [2,3]*[3]", b_mul, 2, {S2(2, 3), S1(3)}, -2, 2},
        {"mul []*[2,3]", b_mul, 2, {S0, S2(2, 3)}, -2, 2},
        {"div [2,3]/[2,1]", b_div, 2, {S2(2, 3), S2(2, 1)}, 0.5, 2},
        {"pow [2,3]**[3]", b_pow, 2, {S2(2, 3), S1(3)}, 0.5, 2},
        {"maximum [2,3],[3]", b_maximum, 2, {S2(2, 3), S1(3)}, -2, 2},
        {"minimum [2,3],[2,1]", b_minimum, 2, {S2(2, 3), S2(2, 1)}, -2, 2},
        {"remainder [2,3]%[3]", b_remainder, 2, {S2(2, 3), S1(3)}, 0.6, 2.9},
        {"mul x*2.5", b_mul_scalar, 1, {S2(2, 3)}, -2, 2},
        {"sub 3-x", b_rsub_scalar, 1, {S2(2, 3)}, -2, 2},
        {"div 1.5/x", b_rdiv_scalar, 1, {S2(2, 3)}, 0.5, 2},
        {"pow x**3.0", b_pow_scalar_exp, 1, {S2(2, 3)}, -2, 2},
        {"pow 2.0**x", b_pow_scalar_base, 1, {S2(2, 3)}, -2, 2},
        {"maximum x,0.25", b_max_scalar, 1, {S2(2, 3)}, -2, 2},
        {"remainder 5.0%x", b_rem_scalar, 1, {S2(2, 3)}, 0.7, 1.9},
        {"x*x+y", b_square_sum, 2, {S2(2, 3), S1(3)}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

static hop_node *
b_where(hop_graph *g, hop_node **x)
{
    return OP(g, where, N(OP(g, gt, N(x[0]), N(x[1]))), N(x[0]), N(x[1]));
}

static hop_node *
b_where_scalar(hop_graph *g, hop_node **x)
{
    return OP(g, where, N(OP(g, gt, N(x[0]), F(0.0))), F(1.5), N(x[1]));
}

static void
test_where_matches_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"where [2,3],[3]", b_where, 2, {S2(2, 3), S1(3)}, -2, 2},
        {"where scalar", b_where_scalar, 2, {S2(2, 3), S2(2, 1)}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

/* ----------------------------------------------------------- reductions */

#define REDUCE_BUILD(fn, op, dims, keep)                                                           \
    static hop_node *fn(hop_graph *g, hop_node **x)                                                \
    {                                                                                              \
        return OP(g, op, N(x[0]), dims, B(keep));                                                  \
    }
REDUCE_BUILD(b_sum1, sum, I(1), false)
REDUCE_BUILD(b_sum02k, sum, LIST(I(0), I(-1)), true)
REDUCE_BUILD(b_mean_all, mean, NONE, false)
REDUCE_BUILD(b_mean1k, mean, I(1), true)
REDUCE_BUILD(b_amax1, amax, I(1), false)
REDUCE_BUILD(b_amax_all, amax, NONE, false)
REDUCE_BUILD(b_amin02k, amin, LIST(I(0), I(2)), true)
REDUCE_BUILD(b_prod1, prod, I(1), false)
REDUCE_BUILD(b_prod02k, prod, LIST(I(0), I(2)), true)
REDUCE_BUILD(b_prod_all, prod, NONE, false)
REDUCE_BUILD(b_prod_scalar, prod, NONE, false)

static void
test_reductions_match_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"sum dim 1", b_sum1, 1, {S3(2, 3, 4)}, -2, 2},
        {"sum dims [0, -1] keepdim", b_sum02k, 1, {S3(2, 3, 4)}, -2, 2},
        {"mean all", b_mean_all, 1, {S3(2, 3, 4)}, -2, 2},
        {"mean dim 1 keepdim", b_mean1k, 1, {S3(2, 3, 4)}, -2, 2},
        {"amax dim 1", b_amax1, 1, {S3(2, 3, 4)}, -2, 2},
        {"amax all", b_amax_all, 1, {S2(3, 4)}, -2, 2},
        {"amin dims [0, 2] keepdim", b_amin02k, 1, {S3(2, 3, 4)}, -2, 2},
        {"prod dim 1", b_prod1, 1, {S3(2, 3, 4)}, 0.5, 1.5},
        {"prod dims [0, 2] keepdim", b_prod02k, 1, {S3(2, 3, 4)}, -1.5, 1.5},
        {"prod all", b_prod_all, 1, {S2(3, 4)}, 0.5, 1.5},
        {"prod of a 0-d", b_prod_scalar, 1, {S0}, 0.5, 1.5},
    };
    check_cases(cs, LEN(cs));
}

/* --------------------------------------------------------------- matmul */

static void
test_matmul_matches_finite_differences_for_every_rank_case(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"[3]@[3]", b_matmul, 2, {S1(3), S1(3)}, -2, 2},
        {"[2,3]@[3]", b_matmul, 2, {S2(2, 3), S1(3)}, -2, 2},
        {"[3]@[3,2]", b_matmul, 2, {S1(3), S2(3, 2)}, -2, 2},
        {"[2,3]@[3,4]", b_matmul, 2, {S2(2, 3), S2(3, 4)}, -2, 2},
        {"[2,2,3]@[3,4]", b_matmul, 2, {S3(2, 2, 3), S2(3, 4)}, -2, 2},
        {"[3]@[2,3,2]", b_matmul, 2, {S1(3), S3(2, 3, 2)}, -2, 2},
        {"[2,2,3]@[3]", b_matmul, 2, {S3(2, 2, 3), S1(3)}, -2, 2},
        {"[2,1,2,3]@[3,3,2]", b_matmul, 2, {S4(2, 1, 2, 3), S3(3, 3, 2)}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

/* ---------------------------------------------------------------- views */

static hop_node *
b_reshape(hop_graph *g, hop_node **x)
{
    return OP(g, reshape, N(x[0]), LIST(I(-1), I(4)));
}

static hop_node *
b_view(hop_graph *g, hop_node **x)
{
    return OP(g, view, N(x[0]), LIST(I(3), I(8)));
}

static hop_node *
b_transpose(hop_graph *g, hop_node **x)
{
    return OP(g, transpose, N(x[0]), I(0), I(-1));
}

static hop_node *
b_permute(hop_graph *g, hop_node **x)
{
    return OP(g, permute, N(x[0]), LIST(I(2), I(0), I(1)));
}

static hop_node *
b_unsqueeze(hop_graph *g, hop_node **x)
{
    return OP(g, unsqueeze, N(x[0]), I(1));
}

static hop_node *
b_squeeze_all(hop_graph *g, hop_node **x)
{
    return OP(g, squeeze, N(x[0]), NONE);
}

static hop_node *
b_squeeze1(hop_graph *g, hop_node **x)
{
    return OP(g, squeeze, N(x[0]), I(1));
}

static hop_node *
b_expand(hop_graph *g, hop_node **x)
{
    return OP(g, expand, N(x[0]), LIST(I(2), I(3), I(4)));
}

static hop_node *
b_select(hop_graph *g, hop_node **x)
{
    return OP(g, select, N(x[0]), I(1), I(-1));
}

static hop_node *
b_select0(hop_graph *g, hop_node **x)
{
    return OP(g, select, N(x[0]), I(0), I(1));
}

static hop_node *
b_slice1(hop_graph *g, hop_node **x)
{
    return OP(g, slice, N(x[0]), I(1), I(1), NONE, I(1));
}

static hop_node *
b_slice_mid(hop_graph *g, hop_node **x)
{
    return OP(g, slice, N(x[0]), I(-1), I(1), I(-1), I(1));
}

static hop_node *
b_slice_step2(hop_graph *g, hop_node **x)
{
    return OP(g, slice, N(x[0]), I(1), I(1), NONE, I(2));
}

static hop_node *
b_slice_step3_neg(hop_graph *g, hop_node **x)
{
    return OP(g, slice, N(x[0]), I(0), I(-6), I(-1), I(3));
}

static hop_node *
b_cat(hop_graph *g, hop_node **x)
{
    return OP(g, cat, LIST(N(x[0]), N(x[1]), N(x[0])), I(1));
}

static hop_node *
b_stack(hop_graph *g, hop_node **x)
{
    return OP(g, stack, LIST(N(x[0]), N(x[1])), I(-1));
}

static void
test_views_and_concatenation_match_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"reshape [-1, 4]", b_reshape, 1, {S3(2, 3, 4)}, -2, 2},
        {"view [3, 8]", b_view, 1, {S3(2, 3, 4)}, -2, 2},
        {"transpose 0, -1", b_transpose, 1, {S3(2, 3, 4)}, -2, 2},
        {"permute [2, 0, 1]", b_permute, 1, {S3(2, 3, 4)}, -2, 2},
        {"unsqueeze 1", b_unsqueeze, 1, {S2(2, 3)}, -2, 2},
        {"squeeze None", b_squeeze_all, 1, {S3(2, 1, 3)}, -2, 2},
        {"squeeze 1", b_squeeze1, 1, {S3(2, 1, 3)}, -2, 2},
        {"expand [3,1] to [2,3,4]", b_expand, 1, {S2(3, 1)}, -2, 2},
        {"select dim 1 index -1", b_select, 1, {S3(2, 3, 4)}, -2, 2},
        {"select dim 0 index 1", b_select0, 1, {S2(3, 4)}, -2, 2},
        {"slice 1:", b_slice1, 1, {S2(3, 5)}, -2, 2},
        {"slice 1:-1 in the last dim", b_slice_mid, 1, {S2(3, 5)}, -2, 2},
        {"slice 1::2", b_slice_step2, 1, {S2(3, 6)}, -2, 2},
        {"slice -6:-1:3", b_slice_step3_neg, 1, {S2(8, 2)}, -2, 2},
        {"cat (x, y, x) dim 1", b_cat, 2, {S2(2, 3), S2(2, 2)}, -2, 2},
        {"stack (x, y) dim -1", b_stack, 2, {S2(2, 3), S2(2, 3)}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

/* ------------------------------------------------------------ index ops */

/* take with the index [[0, 0], [2, -1]] (a repeat and a negative index). */
static hop_node *
b_take(hop_graph *g, hop_node **x)
{
    hop_node *ar = OP(g, arange, I(0), I(4), I(1), NONE);
    hop_node *idx = OP(g, mul, N(OP(g, floor_divide, N(ar), I(2))), I(2));    /* 0 0 2 2 */
    idx = OP(g, sub, N(idx), N(OP(g, mul, N(OP(g, eq, N(ar), I(3))), I(3)))); /* 0 0 2 -1 */
    return OP(g, take, N(x[0]), I(1), N(OP(g, reshape, N(idx), LIST(I(2), I(2)))));
}

/* take with a 0-d index: the dim goes away. */
static hop_node *
b_take_scalar(hop_graph *g, hop_node **x)
{
    hop_node *idx = OP(g, sum, N(OP(g, arange, I(0), I(3), I(1), NONE)), NONE, B(false)); /* 3 */
    return OP(g, take, N(x[0]), I(0), N(idx));
}

/* take with the index 4 - arange(5): a flip of dim 0. */
static hop_node *
b_take_flip(hop_graph *g, hop_node **x)
{
    hop_node *idx = OP(g, sub, I(4), N(OP(g, arange, I(0), I(5), I(1), NONE)));
    return OP(g, take, N(x[0]), I(0), N(idx));
}

static hop_node *
b_cumsum1(hop_graph *g, hop_node **x)
{
    return OP(g, cumsum, N(x[0]), I(1));
}

static hop_node *
b_cumsum0(hop_graph *g, hop_node **x)
{
    return OP(g, cumsum, N(x[0]), I(0));
}

static hop_node *
b_cumprod1(hop_graph *g, hop_node **x)
{
    return OP(g, cumprod, N(x[0]), I(1));
}

static hop_node *
b_cumprod0(hop_graph *g, hop_node **x)
{
    return OP(g, cumprod, N(x[0]), I(-3));
}

static hop_node *
b_sort1(hop_graph *g, hop_node **x)
{
    return OP(g, sort, N(x[0]), I(1), B(false), I(0));
}

static hop_node *
b_sort0_desc(hop_graph *g, hop_node **x)
{
    return OP(g, sort, N(x[0]), I(0), B(true), I(0));
}

static hop_node *
b_to_clone(hop_graph *g, hop_node **x)
{
    return OP(g, clone, N(OP(g, to, N(x[0]), hop_arg_dtype(HOP_F64))));
}

static void
test_index_and_scan_ops_match_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"take dim 1 index [2,2]", b_take, 1, {S3(2, 4, 3)}, -2, 2},
        {"take 0-d index", b_take_scalar, 1, {S2(5, 2)}, -2, 2},
        {"take 4 - arange(5) (a flip)", b_take_flip, 1, {S2(5, 2)}, -2, 2},
        {"cumsum dim 1", b_cumsum1, 1, {S3(2, 4, 3)}, -2, 2},
        {"cumsum of a vector", b_cumsum0, 1, {S1(5)}, -2, 2},
        {"cumprod dim 1", b_cumprod1, 1, {S3(2, 4, 3)}, -1.5, 1.5},
        {"cumprod dim -3", b_cumprod0, 1, {S3(3, 2, 2)}, -1.5, 1.5},
        {"sort dim 1", b_sort1, 1, {S3(2, 5, 3)}, -2, 2},
        {"sort dim 0 descending", b_sort0_desc, 1, {S2(5, 3)}, -2, 2},
        {"to f64 and clone", b_to_clone, 1, {S2(2, 3)}, -2, 2},
    };
    check_cases(cs, LEN(cs));
}

/* ------------------------------------------------- JAX's conventions */

/* The gradient (plain sum of op) at given inputs: out[i] gets input i's. */
static void
grad_at(const ad_case *c, double *const *data, hop_tensor **grads)
{
    hop_output_graph *og = hop_output_graph_new();
    hop_graph *fwd = forward(hop_output_graph_env(og), c, false);
    bool wrt[MAX_IN] = {true, true, true};
    if (hop_vjp_graph(fwd, wrt, (hop_ct_kind[]){HOP_CT_ONE}, hop_output_graph_root_graph(og)) !=
        HOP_OK)
        fail_msg("hop_vjp_graph of %s: %s", c->name, hop_error_message());
    hop_tensor *in[MAX_IN], *out[1 + MAX_IN];
    for (int i = 0; i < c->nin; i++)
        in[i] = tensor(&c->in[i], data[i]);
    run(og, in, (size_t)c->nin, out);
    hop_tensor_release(out[0]);
    for (int i = 0; i < c->nin; i++)
        grads[i] = hop_tensor_contiguous(out[1 + i]), hop_tensor_release(out[1 + i]);
    release(in, (size_t)c->nin);
    hop_graph_free(fwd);
    hop_output_graph_free(og);
}

static void
expect(const hop_tensor *t, const double *want, int64_t n, const char *what)
{
    assert_int_equal(hop_tensor_numel(t), n);
    const double *v = t->data;
    for (int64_t k = 0; k < n; k++)
        if (v[k] != want[k])
            fail_msg("%s: element %lld is %.17g, not %.17g", what, (long long)k, v[k], want[k]);
}

static void
test_ties_kinks_and_zeros_follow_jax(void **state)
{
    (void)state;
    hop_tensor *gr[2];
    /* maximum/minimum split a tie 0.5/0.5 */
    ad_case mx = {"maximum", b_maximum, 2, {S1(3), S1(3)}, 0, 0};
    grad_at(&mx, (double *[]){(double[]){1, 2, 3}, (double[]){1, 5, 0}}, gr);
    expect(gr[0], (double[]){0.5, 0, 1}, 3, "maximum, d/da");
    expect(gr[1], (double[]){0.5, 1, 0}, 3, "maximum, d/db");
    release(gr, 2);
    ad_case mn = {"minimum", b_minimum, 2, {S1(2), S1(2)}, 0, 0};
    grad_at(&mn, (double *[]){(double[]){4, 2}, (double[]){4, 5}}, gr);
    expect(gr[0], (double[]){0.5, 1}, 2, "minimum, d/da");
    expect(gr[1], (double[]){0.5, 0}, 2, "minimum, d/db");
    release(gr, 2);
    /* amax/amin share the cotangent among the tied extremes */
    ad_case am = {"amax", b_amax1, 1, {S2(2, 3)}, 0, 0};
    grad_at(&am, (double *[]){(double[]){3, 1, 3, 2, 2, 2}}, gr);
    expect(gr[0], (double[]){0.5, 0, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 6, "amax ties");
    release(gr, 1);
    /* abs has slope +1 at 0, relu 0 */
    ad_case ab = {"abs", b_abs, 1, {S1(3)}, 0, 0};
    grad_at(&ab, (double *[]){(double[]){0, -2, 2}}, gr);
    expect(gr[0], (double[]){1, -1, 1}, 3, "abs");
    release(gr, 1);
    ad_case re = {"relu", b_relu, 1, {S1(3)}, 0, 0};
    grad_at(&re, (double *[]){(double[]){0, -2, 2}}, gr);
    expect(gr[0], (double[]){0, 0, 1}, 3, "relu");
    release(gr, 1);
    /* pow: 0 ** 2 has d/da 0 and d/db 0 (log 0 replaced); x ** 0 has d/da 0 */
    ad_case pw = {"pow", b_pow, 2, {S1(2), S1(2)}, 0, 0};
    grad_at(&pw, (double *[]){(double[]){0, 0}, (double[]){2, 0}}, gr);
    expect(gr[0], (double[]){0, 0}, 2, "pow, d/da at a = 0");
    expect(gr[1], (double[]){0, 0}, 2, "pow, d/db at a = 0");
    release(gr, 2);
    /* prod and cumprod are exact where x has zeros */
    ad_case pr = {"prod", b_prod_all, 1, {S1(3)}, 0, 0};
    grad_at(&pr, (double *[]){(double[]){2, 0, 3}}, gr);
    expect(gr[0], (double[]){0, 6, 0}, 3, "prod with one zero");
    release(gr, 1);
    grad_at(&pr, (double *[]){(double[]){0, 0, 3}}, gr);
    expect(gr[0], (double[]){0, 0, 0}, 3, "prod with two zeros");
    release(gr, 1);
    ad_case cp = {"cumprod", b_cumprod1, 1, {S2(1, 3)}, 0, 0};
    grad_at(&cp, (double *[]){(double[]){2, 0, 3}}, gr);
    expect(gr[0], (double[]){1, 8, 0}, 3, "cumprod with a zero");
    release(gr, 1);
}

/* ------------------------------------------------------- grad of grad */

/*
 * The rules emit differentiable ops, so the backward graph differentiates
 * again: the vjp of f_bwd with the gradients seeded by ones is the
 * gradient of sum(grad f), checked against differences of it.
 */
static void
check_second_order(const ad_case *c)
{
    double data[MAX_IN][256];
    double *dp[MAX_IN];
    for (int i = 0; i < c->nin; i++) {
        for (int64_t k = 0; k < numel(&c->in[i]); k++)
            data[i][k] = uniform(c->lo, c->hi);
        dp[i] = data[i];
    }
    hop_output_graph *og = hop_output_graph_new();
    hop_shape_env *env = hop_output_graph_env(og);
    hop_graph *fwd = forward(env, c, true);
    hop_graph *bwd = hop_graph_new(env, "f_bwd");
    bool wrt[MAX_IN] = {true, true, true};
    if (hop_vjp_graph(fwd, wrt, (hop_ct_kind[]){HOP_CT_ONE}, bwd) != HOP_OK)
        fail_msg("hop_vjp_graph of %s: %s", c->name, hop_error_message());
    hop_ct_kind cts[1 + MAX_IN] = {HOP_CT_NONE};
    for (int i = 0; i < c->nin; i++)
        cts[1 + i] = HOP_CT_ONE;
    if (hop_vjp_graph(bwd, wrt, cts, hop_output_graph_root_graph(og)) != HOP_OK)
        fail_msg("hop_vjp_graph of the backward of %s: %s", c->name, hop_error_message());
    /* outputs: f, grads..., second-order grads... */
    size_t nout = (size_t)(1 + 2 * c->nin);
    hop_tensor *in[MAX_IN], *out[1 + 2 * MAX_IN];
    for (int i = 0; i < c->nin; i++)
        in[i] = tensor(&c->in[i], data[i]);
    run(og, in, (size_t)c->nin, out);
    for (int i = 0; i < c->nin; i++) {
        hop_tensor *h = hop_tensor_contiguous(out[1 + c->nin + i]);
        for (int64_t k = 0; k < numel(&c->in[i]); k++) {
            double s[2];
            for (int side = 0; side < 2; side++) {
                double keep = data[i][k];
                data[i][k] = keep + (side ? -EPS : EPS);
                hop_tensor *pin[MAX_IN], *pout[1 + 2 * MAX_IN];
                for (int j = 0; j < c->nin; j++)
                    pin[j] = tensor(&c->in[j], dp[j]);
                run(og, pin, (size_t)c->nin, pout);
                s[side] = 0;
                for (int j = 0; j < c->nin; j++) {
                    hop_tensor *gj = hop_tensor_contiguous(pout[1 + j]);
                    for (int64_t e = 0; e < hop_tensor_numel(gj); e++)
                        s[side] += ((const double *)gj->data)[e];
                    hop_tensor_release(gj);
                }
                release(pout, nout);
                release(pin, (size_t)c->nin);
                data[i][k] = keep;
            }
            char what[64];
            snprintf(what, sizeof what, "d/dx%d[%lld] of sum(grad)", i, (long long)k);
            check_close(what, c->name, ((const double *)h->data)[k], (s[0] - s[1]) / (2 * EPS));
        }
        hop_tensor_release(h);
    }
    release(out, nout);
    release(in, (size_t)c->nin);
    hop_graph_free(bwd);
    hop_graph_free(fwd);
    hop_output_graph_free(og);
}

static hop_node *
b_tanh_mul(hop_graph *g, hop_node **x)
{
    return OP(g, tanh, N(OP(g, mul, N(x[0]), N(x[1]))));
}

static hop_node *
b_sin_matmul(hop_graph *g, hop_node **x)
{
    return OP(g, sin, N(OP(g, matmul, N(x[0]), N(x[1]))));
}

static hop_node *
b_exp_sort(hop_graph *g, hop_node **x)
{
    return OP(g, exp, N(b_sort1(g, x)));
}

static hop_node *
b_square_take(hop_graph *g, hop_node **x)
{
    hop_node *t = b_take(g, x);
    return OP(g, mul, N(t), N(t));
}

static hop_node *
b_square_slice(hop_graph *g, hop_node **x)
{
    hop_node *t = b_slice_step2(g, x);
    return OP(g, mul, N(t), N(t));
}

static hop_node *
b_exp_cumsum(hop_graph *g, hop_node **x)
{
    return OP(g, exp, N(b_cumsum1(g, x)));
}

static hop_node *
b_pow_div(hop_graph *g, hop_node **x)
{
    return OP(g, div, N(OP(g, pow, N(x[0]), N(x[1]))), N(x[1]));
}

static hop_node *
b_square_amax(hop_graph *g, hop_node **x)
{
    hop_node *t = b_amax1(g, x);
    return OP(g, mul, N(t), N(t));
}

static void
test_second_order_gradients_match_finite_differences(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"tanh(x * y)", b_tanh_mul, 2, {S2(2, 3), S1(3)}, -1, 1},
        {"sin(x @ y)", b_sin_matmul, 2, {S2(2, 3), S2(3, 2)}, -1, 1},
        {"x ** y / y", b_pow_div, 2, {S2(2, 3), S1(3)}, 0.5, 2},
        {"prod", b_prod02k, 1, {S3(2, 3, 2)}, 0.5, 1.5},
        {"cumprod", b_cumprod1, 1, {S2(2, 4)}, 0.5, 1.5},
        {"exp(cumsum)", b_exp_cumsum, 1, {S3(2, 3, 2)}, -1, 1},
        {"exp(sort)", b_exp_sort, 1, {S3(2, 4, 2)}, -1, 1},
        {"take^2", b_square_take, 1, {S3(2, 4, 3)}, -1, 1},
        {"slice^2", b_square_slice, 1, {S2(2, 6)}, -1, 1},
        {"amax^2", b_square_amax, 1, {S3(2, 3, 2)}, -1, 1},
    };
    for (size_t i = 0; i < LEN(cs); i++)
        check_second_order(&cs[i]);
}

/* cumsum's cotangent is flipped, summed and flipped back, and a flip's
 * cotangent flips back: the second derivative has no one-hot matmul, so
 * it stays O(n) along the dim. */
static void
test_second_derivative_of_cumsum_and_prod_has_no_one_hot(void **state)
{
    (void)state;
    static const ad_case cs[] = {
        {"exp(cumsum)", b_exp_cumsum, 1, {S3(2, 3, 2)}, 0, 0},
        {"prod", b_prod02k, 1, {S3(2, 3, 2)}, 0, 0},
    };
    for (size_t i = 0; i < LEN(cs); i++) {
        hop_output_graph *og = hop_output_graph_new();
        hop_shape_env *env = hop_output_graph_env(og);
        hop_graph *fwd = forward(env, &cs[i], true);
        hop_graph *bwd = hop_graph_new(env, "f_bwd");
        bool wrt[1] = {true};
        assert_int_equal(hop_vjp_graph(fwd, wrt, (hop_ct_kind[]){HOP_CT_ONE}, bwd), HOP_OK);
        hop_graph *out = hop_output_graph_root_graph(og);
        assert_int_equal(hop_vjp_graph(bwd, wrt, (hop_ct_kind[]){HOP_CT_NONE, HOP_CT_ONE}, out),
                         HOP_OK);
        char *code = hop_graph_code(out);
        assert_non_null(code);
        assert_non_null(strstr(code, "take("));
        if (strstr(code, "matmul("))
            fail_msg("the second derivative of %s has a one-hot matmul:\n%s", cs[i].name, code);
        hop_free(code);
        hop_graph_free(bwd);
        hop_graph_free(fwd);
        hop_output_graph_free(og);
    }
}

/* ---------------------------------------------------------- the table */

static void
test_every_op_has_a_rule_or_is_nondiff(void **state)
{
    (void)state;
    for (int op = 0; op < HOP_OP_COUNT; op++) {
        const hop_op_ad_rule *r = hop_op_ad((hop_op)op);
        assert_non_null(r);
        if (r->nondiff) {
            if (r->vjp || r->jvp)
                fail_msg("%s is nondiff but has a rule", hop_op_get((hop_op)op)->name);
        } else if (!r->vjp || !r->jvp) {
            fail_msg("%s has no %s rule", hop_op_get((hop_op)op)->name, r->vjp ? "jvp" : "vjp");
        }
    }
    assert_null(hop_op_ad(HOP_OP_COUNT));
    assert_null(hop_op_ad((hop_op)-1));
    assert_true(hop_op_ad(HOP_OP_argmax)->nondiff);
    assert_true(hop_op_ad(HOP_OP_floor)->nondiff);
    assert_false(hop_op_ad(HOP_OP_sort)->nondiff);
}

/* Piecewise constant ops pass no gradient: d/dx sum(x * floor(x)) is
 * floor(x), the product rule with floor's derivative taken as 0. */
static hop_node *
b_x_floor(hop_graph *g, hop_node **x)
{
    return OP(g, mul, N(x[0]), N(OP(g, floor, N(x[0]))));
}

static void
test_nondiff_ops_pass_no_gradient(void **state)
{
    (void)state;
    hop_tensor *gr[1];
    ad_case c = {"x * floor(x)", b_x_floor, 1, {S1(3)}, 0, 0};
    grad_at(&c, (double *[]){(double[]){1.5, -0.5, 2.25}}, gr);
    expect(gr[0], (double[]){1, -1, 2}, 3, "x * floor(x)");
    release(gr, 1);
}

/* ------------------------------------------------- allocation failures */

/* op over args, or NULL when an earlier op failed (a NULL node argument). */
static hop_node *
chain(hop_graph *g, hop_op op, const hop_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (args[i].kind == HOP_ARG_NODE && args[i].u.node == NULL)
            return NULL;
        for (size_t k = 0; args[i].kind == HOP_ARG_LIST && k < args[i].u.list.n; k++)
            if (args[i].u.list.items[k].kind == HOP_ARG_NODE &&
                args[i].u.list.items[k].u.node == NULL)
                return NULL;
    }
    return hop_graph_call_op(g, op, args, n);
}
#define C(g, op, ...)                                                                              \
    chain(g, HOP_OP_##op, (hop_arg[]){__VA_ARGS__}, LEN(((hop_arg[]){__VA_ARGS__})))

/* Adds sum(x) to *acc, a running scalar sum; a NULL x (a failed op) makes
 * *acc NULL for good. */
static void
acc_sum(hop_graph *g, hop_node **acc, bool *failed, hop_node *x)
{
    hop_node *s = *failed ? NULL : C(g, sum, N(x), NONE, B(false));
    *acc = s && *acc ? C(g, add, N(*acc), N(s)) : s;
    *failed = *acc == NULL;
}

/*
 * One forward graph that passes a gradient through every kind of rule,
 * and its vjp and jvp, built from nothing (so that every allocation,
 * symbols included, is inside the sweep).  The status of the first
 * failure, or HOP_OK.
 */
static hop_status
build_every_rule(bool dyn)
{
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return hop_error_code();
    hop_shape_env *env = hop_output_graph_env(og);
    hop_graph *f = hop_graph_new(env, "f"), *bwd = NULL, *jvp = NULL;
    hop_node *x = NULL, *y = NULL, *acc = NULL;
    bool failed = false;
    hop_value_info vx = {.kind = HOP_VALUE_TENSOR}, vy = {.kind = HOP_VALUE_TENSOR};
    if (f && hop_meta_init(&vx.meta, env, HOP_F64, 3, (int64_t[]){2, 4, 3}) == HOP_OK &&
        hop_meta_init(&vy.meta, env, HOP_F64, 2, (int64_t[]){4, 3}) == HOP_OK) {
        for (int k = 0; dyn && k < 3; k++)
            vx.meta.sizes[k] = hop_shape_env_size_symbol(env,
                                                         vx.meta.sizes[k] == vy.meta.sizes[0] ? 4
                                                         : k == 0                             ? 2
                                                                                              : 3,
                                                         true, true);
        vy.meta.sizes[0] = vx.meta.sizes[1];
        vy.meta.sizes[1] = vx.meta.sizes[2];
        bool ok = true;
        for (int k = 0; k < 3; k++)
            ok = ok && vx.meta.sizes[k] != NULL;
        x = ok ? hop_graph_placeholder(f, "x", &vx) : NULL;
        y = x ? hop_graph_placeholder(f, "y", &vy) : NULL;
    }
    if (y) {
        hop_node *ar = C(f, arange, I(0), I(4), I(1), NONE);
        acc_sum(f, &acc, &failed, C(f, tanh, N(C(f, mul, N(x), N(y)))));
        acc_sum(f, &acc, &failed, C(f, pow, N(C(f, abs, N(x))), N(C(f, maximum, N(y), F(0.5)))));
        acc_sum(f, &acc, &failed,
                C(f, where, N(C(f, gt, N(x), N(y))), N(C(f, div, N(x), N(y))), F(1.0)));
        acc_sum(f, &acc, &failed,
                C(f, mean, N(C(f, amax, N(x), I(1), B(true))), LIST(I(0), I(2)), B(false)));
        acc_sum(f, &acc, &failed, C(f, prod, N(x), I(1), B(false)));
        acc_sum(f, &acc, &failed, C(f, matmul, N(C(f, transpose, N(y), I(0), I(1))), N(x)));
        acc_sum(f, &acc, &failed, C(f, cumprod, N(C(f, cumsum, N(x), I(1))), I(-1)));
        acc_sum(f, &acc, &failed,
                C(f, sort, N(C(f, permute, N(x), LIST(I(2), I(0), I(1)))), I(2), B(true), I(0)));
        acc_sum(f, &acc, &failed, C(f, take, N(x), I(1), N(C(f, sub, N(ar), I(2)))));
        acc_sum(f, &acc, &failed,
                C(f, slice, N(C(f, select, N(x), I(0), I(-1))), I(0), I(1), NONE, I(2)));
        acc_sum(f, &acc, &failed,
                C(f, cat, LIST(N(C(f, slice, N(y), I(1), I(1), NONE, I(1))), N(y)), I(1)));
        acc_sum(f, &acc, &failed,
                C(f, stack,
                  LIST(N(C(f, reshape, N(x), LIST(I(-1)))),
                       N(C(f, view, N(C(f, clone, N(x))), LIST(I(-1))))),
                  I(0)));
        acc_sum(f, &acc, &failed,
                C(f, expand,
                  N(C(f, unsqueeze,
                      N(C(f, squeeze, N(C(f, to, N(y), hop_arg_dtype(HOP_F32))), NONE)), I(0))),
                  LIST(I(2), I(-1), I(-1))));
        acc_sum(f, &acc, &failed, C(f, remainder, N(C(f, sin, N(y))), N(C(f, exp, N(y)))));
    }
    hop_status st = acc && hop_graph_output(f, (hop_arg[]){N(acc)}, 1) ? HOP_OK : hop_error_code();
    bool wrt[2] = {true, true};
    if (st == HOP_OK)
        st = (bwd = hop_graph_new(env, "f_bwd"))
                 ? hop_vjp_graph(f, wrt, (hop_ct_kind[]){HOP_CT_ONE}, bwd)
                 : hop_error_code();
    if (st == HOP_OK)
        st = (jvp = hop_graph_new(env, "f_jvp")) ? hop_jvp_graph(f, wrt, jvp) : hop_error_code();
    hop_graph_free(jvp);
    hop_graph_free(bwd);
    hop_graph_free(f);
    hop_output_graph_free(og);
    return st;
}

static hop_status
build_every_rule_arg(void *dyn)
{
    return build_every_rule(*(int *)dyn);
}

/* Every allocation of building the vjp and jvp of a graph that reaches
 * every kind of rule fails in turn: HOP_NOMEM, nothing leaked; and with
 * no failure both transformations succeed. */
static void
test_allocation_failures_in_the_rules_are_nomem_and_leak_nothing(void **state)
{
    (void)state;
    for (int dyn = 0; dyn < 2; dyn++) {
        assert_int_equal(build_every_rule(dyn), HOP_OK);
        assert_true(hop_test_nomem_sweep(build_every_rule_arg, &dyn) > 400);
    }
}

int
main(void)
{
    /* HOP_TEST_FILTER=pattern runs only the matching tests (profiling). */
    if (getenv("HOP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("HOP_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_ops_match_finite_differences),
        cmocka_unit_test(test_binary_ops_match_finite_differences_with_broadcasting),
        cmocka_unit_test(test_where_matches_finite_differences),
        cmocka_unit_test(test_reductions_match_finite_differences),
        cmocka_unit_test(test_matmul_matches_finite_differences_for_every_rank_case),
        cmocka_unit_test(test_views_and_concatenation_match_finite_differences),
        cmocka_unit_test(test_index_and_scan_ops_match_finite_differences),
        cmocka_unit_test(test_ties_kinks_and_zeros_follow_jax),
        cmocka_unit_test(test_second_order_gradients_match_finite_differences),
        cmocka_unit_test(test_second_derivative_of_cumsum_and_prod_has_no_one_hot),
        cmocka_unit_test(test_every_op_has_a_rule_or_is_nondiff),
        cmocka_unit_test(test_nondiff_ops_pass_no_gradient),
        cmocka_unit_test(test_allocation_failures_in_the_rules_are_nomem_and_leak_nothing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hop_runtime_shutdown();
    return rc;
}
