/*
 * tests/c/test_graph.c - the graph IR: building graphs (placeholders, calls,
 * getitem, output), names, argument copies, use lists, failure atomicity,
 * subgraph ownership, erase and DCE, and the verifier.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop/graph.h"
#include "test_class_util.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ fixtures */

static hop_shape_env *env;
static const hop_expr *s0;
static long live_at_setup;

static int
setup(void **state)
{
    (void)state;
    live_at_setup = hop_alloc_live();
    env = hop_shape_env_new();
    s0 = hop_shape_env_size_symbol(env, 5, true, true);
    return env && s0 ? 0 : -1;
}

/* Every test frees what it made: the env goes last and nothing may be left. */
static int
teardown(void **state)
{
    (void)state;
    hop_shape_env_free(env);
    env = NULL;
    assert_int_equal(hop_alloc_live(), live_at_setup);
    return 0;
}

static const hop_expr *
K(int64_t v)
{
    return hop_sym_const(env, v);
}

static hop_value_info
T(hop_dtype dt, int rank, const hop_expr *d0, const hop_expr *d1)
{
    hop_value_info v;
    memset(&v, 0, sizeof v);
    v.kind = HOP_VALUE_TENSOR;
    v.meta.dtype = dt;
    v.meta.rank = rank;
    v.meta.sizes[0] = d0;
    v.meta.sizes[1] = d1;
    return v;
}

static hop_value_info
S(const hop_expr *e)
{
    hop_value_info v;
    memset(&v, 0, sizeof v);
    v.kind = HOP_VALUE_SYM;
    v.sym = e;
    return v;
}

static hop_node *
ph(hop_graph *g, const char *name, hop_value_info v)
{
    hop_node *n = hop_graph_placeholder(g, name, &v);
    assert_non_null(n);
    return n;
}

static hop_node *
op1(hop_graph *g, hop_op op, hop_node *a)
{
    hop_arg args[] = {hop_arg_node(a)};
    hop_node *n = hop_graph_call_op(g, op, args, 1);
    assert_non_null(n);
    return n;
}

static hop_node *
op1_or_null(hop_graph *g, hop_op op, hop_node *a)
{
    hop_arg args[] = {hop_arg_node(a)};
    return hop_graph_call_op(g, op, args, 1);
}

static hop_node *
op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    hop_arg args[] = {hop_arg_node(a), hop_arg_node(b)};
    hop_node *n = hop_graph_call_op(g, op, args, 2);
    assert_non_null(n);
    return n;
}

static hop_node *
ret(hop_graph *g, hop_node *a)
{
    hop_arg v = hop_arg_node(a);
    hop_node *n = hop_graph_output(g, &v, 1);
    assert_non_null(n);
    return n;
}

static void
assert_error(hop_status code, const char *message)
{
    assert_string_equal(hop_status_name(hop_error_code()), hop_status_name(code));
    assert_string_equal(hop_error_message(), message);
}

/* The names of g's nodes in program order, space-separated. */
static const char *
names(const hop_graph *g)
{
    static char buf[1024];
    buf[0] = '\0';
    for (const hop_node *n = g->first; n; n = n->next) {
        if (buf[0])
            strcat(buf, " ");
        strcat(buf, n->name);
    }
    return buf;
}

/* The users of n as recorded in its use list, space-separated. */
static const char *
users(const hop_node *n)
{
    static char buf[512];
    buf[0] = '\0';
    for (const hop_use *u = n->uses; u; u = u->next) {
        if (buf[0])
            strcat(buf, " ");
        strcat(buf, u->user->name);
    }
    return buf;
}

/* A subgraph `name(x: f32[s0, 4]) -> (sin(x),)`. */
static hop_graph *
sin_body(const char *name)
{
    hop_graph *s = hop_graph_new(env, name);
    assert_non_null(s);
    hop_node *x = ph(s, "x", T(HOP_F32, 2, s0, K(4)));
    ret(s, op1(s, HOP_OP_sin, x));
    return s;
}

/* A subgraph `name(x: f32[s0, 4]) -> (sin(x), cos(x))`. */
static hop_graph *
pair_body(const char *name)
{
    hop_graph *s = hop_graph_new(env, name);
    assert_non_null(s);
    hop_node *x = ph(s, "x", T(HOP_F32, 2, s0, K(4)));
    hop_arg rv[] = {hop_arg_node(op1(s, HOP_OP_sin, x)), hop_arg_node(op1(s, HOP_OP_cos, x))};
    assert_non_null(hop_graph_output(s, rv, 2));
    return s;
}

/* ------------------------------------------------------------ building */

static void
test_new_graph_is_empty_and_named_as_an_identifier(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    assert_string_equal(g->name, "forward");
    assert_ptr_equal(g->env, env);
    assert_null(g->first);
    assert_null(g->last);
    assert_null(g->output);
    assert_null(g->parent);
    assert_int_equal(g->nnodes, 0);
    assert_int_equal(g->nplaceholders, 0);
    assert_int_equal(g->nsubgraphs, 0);
    hop_graph_free(g);

    g = hop_graph_new(env, "my body.0");
    assert_string_equal(g->name, "my_body_0");
    /* a body's name as hop_output_graph_next_name makes it (an identifier,
     * copied as it is), keywords and others as for a node's */
    const char *given[] = {"cond_true_17", "if", "lambda", "0a", "", "x.y", "_", "None"};
    const char *want[] = {"cond_true_17", "if_", "lambda_", "_0a", "_", "x_y", "_", "None_"};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
        hop_graph *h = hop_graph_new_sharing(g, given[i]);
        assert_non_null(h);
        assert_string_equal(h->name, want[i]);
        hop_graph_free(h);
    }
    hop_graph_free(g);

    assert_null(hop_graph_new(NULL, "forward"));
    assert_error(HOP_MISUSE, "hop_graph_new: the shape env is NULL");
    hop_graph_free(NULL);
}

static void
test_placeholders_stay_first_and_insert_at_their_position(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_node *add = op2(g, HOP_OP_add, x, x);
    hop_node *y = ph(g, "y", T(HOP_F32, 1, K(4), NULL));
    hop_value_info sv = S(s0);
    hop_node *s = hop_graph_insert_placeholder(g, 0, "s0", &sv);
    hop_value_info zv = T(HOP_I64, 0, NULL, NULL);
    hop_node *z = hop_graph_insert_placeholder(g, 2, "z", &zv);
    assert_non_null(s);
    assert_non_null(z);
    assert_string_equal(names(g), "s0 x z y add");
    assert_int_equal(g->nplaceholders, 4);
    assert_int_equal(g->nnodes, 5);
    assert_ptr_equal(hop_graph_placeholder_at(g, 0), s);
    assert_ptr_equal(hop_graph_placeholder_at(g, 1), x);
    assert_ptr_equal(hop_graph_placeholder_at(g, 2), z);
    assert_ptr_equal(hop_graph_placeholder_at(g, 3), y);
    assert_null(hop_graph_placeholder_at(g, 4));
    assert_ptr_equal(g->first, s);
    assert_ptr_equal(g->last, add);
    assert_int_equal(x->kind, HOP_NODE_PLACEHOLDER);
    assert_string_equal(hop_node_target(x), "x");
    assert_int_equal(x->nargs, 0);
    assert_ptr_equal(x->graph, g);
    assert_int_equal(s->meta->kind, HOP_VALUE_SYM);
    assert_ptr_equal(s->meta->sym, s0);
    assert_int_equal(z->meta->meta.dtype, HOP_I64);

    assert_null(hop_graph_insert_placeholder(g, 5, "w", &zv));
    assert_error(HOP_INVALID, "placeholder w: position 5 is past the 4 placeholders of forward");
    hop_value_info none = {.kind = HOP_VALUE_NONE};
    assert_null(hop_graph_placeholder(g, "w", &none));
    assert_error(HOP_INVALID, "placeholder w: the metadata must be a tensor or a SymInt");
    hop_value_info bad = T(HOP_F32, 9, NULL, NULL);
    assert_null(hop_graph_placeholder(g, "w", &bad));
    assert_error(HOP_INVALID, "placeholder w: the metadata has rank 9 (at most 8)");
    assert_string_equal(names(g), "s0 x z y add");
    assert_null(hop_graph_find_node(g, "w"));
    hop_graph_free(g);
}

static void
test_names_are_uniquified_with_the_smallest_free_suffix(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    ph(g, "add", T(HOP_F32, 1, K(4), NULL));
    ph(g, "add_2", T(HOP_F32, 1, K(4), NULL));
    hop_node *a = op2(g, HOP_OP_add, x, x);
    hop_node *b = op2(g, HOP_OP_add, x, x);
    hop_node *c = op2(g, HOP_OP_add, x, x);
    assert_string_equal(a->name, "add_1");
    assert_string_equal(b->name, "add_3");
    assert_string_equal(c->name, "add_4");
    assert_string_equal(names(g), "x x_1 add add_2 add_1 add_3 add_4");

    /* An erased name is free again, and the smallest free one comes first. */
    assert_int_equal(hop_graph_erase_node(g, b), HOP_OK);
    assert_int_equal(hop_graph_erase_node(g, a), HOP_OK);
    assert_string_equal(op2(g, HOP_OP_add, x, x)->name, "add_1");
    assert_string_equal(op2(g, HOP_OP_add, x, x)->name, "add_3");
    assert_string_equal(op2(g, HOP_OP_add, x, x)->name, "add_5");
    hop_graph_free(g);
}

/* A base's own name, once seen taken, is not looked up again (names.c,
 * bare_taken) until it is free: the node holding it erased or renamed, or
 * the subgraph of that name removed; then it is the next name again. */
static void
test_a_base_name_freed_is_the_next_name_again(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *a = op1(g, HOP_OP_neg, x);
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg_1");
    assert_int_equal(hop_graph_erase_node(g, a), HOP_OK);
    hop_node *b = op1(g, HOP_OP_neg, x);
    assert_string_equal(b->name, "neg");
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg_2");
    assert_int_equal(hop_graph_rename_node(g, b, "other"), HOP_OK);
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg");
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg_3");
    /* placeholders (the sanitising path) */
    hop_node *p = ph(g, "p", T(HOP_F32, 1, K(4), NULL));
    assert_string_equal(ph(g, "p", T(HOP_F32, 1, K(4), NULL))->name, "p_1");
    assert_int_equal(hop_graph_erase_node(g, p), HOP_OK);
    assert_string_equal(ph(g, "p", T(HOP_F32, 1, K(4), NULL))->name, "p");
    assert_string_equal(ph(g, "p", T(HOP_F32, 1, K(4), NULL))->name, "p_2");
    /* a subgraph's name */
    hop_graph *s = hop_graph_new_subgraph(g, "sin");
    hop_value_info v = T(HOP_F32, 1, K(4), NULL);
    ret(s, ph(s, "a", v));
    assert_int_equal(hop_graph_add_subgraph(g, s), HOP_OK);
    assert_string_equal(op1(g, HOP_OP_sin, x)->name, "sin_1");
    assert_string_equal(op1(g, HOP_OP_sin, x)->name, "sin_2");
    assert_int_equal(hop_graph_remove_subgraph(g, s), HOP_OK);
    hop_graph_free(s);
    assert_string_equal(op1(g, HOP_OP_sin, x)->name, "sin");
    assert_string_equal(op1(g, HOP_OP_sin, x)->name, "sin_3");
    ret(g, x);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* The name a node asking for base gets: base when no node or subgraph has
 * it, else base_<k> for the smallest free k >= 1 (names.c's contract, found
 * here by asking the graph about every candidate). */
static void
expected_name(const hop_graph *g, const char *base, char *out, size_t cap)
{
    snprintf(out, cap, "%s", base);
    for (int k = 1; hop_graph_find_node(g, out) || hop_graph_find_subgraph(g, out); k++)
        snprintf(out, cap, "%s_%d", base, k);
}

/* A counter's names above the highest it handed out are taken without a
 * search of the node table (names.c, counter_name_free) unless a node took
 * a name of the counter's form some other way: as a placeholder's name, a
 * base, a rename; subgraph names are always searched.  Random appends,
 * renames, erasures and subgraphs over names of that form, each checked
 * against the smallest free name found by asking the graph. */
static void
test_counter_names_skip_every_name_taken_another_way(void **state)
{
    (void)state;
    static const char *const pool[] = {
        "add",   "add_1", "add_2", "add_3",   "add_5",  "add_10", "add_01", "add_1_1",
        "neg",   "neg_2", "neg_7", "neg_1_1", "p",      "p_1",    "p_2",    "x_1",
        "add_0", "_",     "__1",   "add_",    "add__2", "n3",     "n3_1",   "add_4x",
    };
    enum { NPOOL = sizeof pool / sizeof pool[0], STEPS = 4000, MAXN = 256, MAXS = 8 };
    for (unsigned seed = 1; seed <= 3; seed++) {
        hop_graph *g = hop_graph_new(env, "forward");
        hop_value_info v = T(HOP_F32, 1, K(4), NULL);
        hop_node *x = ph(g, "x", v);
        hop_node *made[MAXN];
        hop_graph *subs[MAXS];
        size_t nmade = 0, nsubs = 0;
        uint64_t r = seed * 0x9E3779B97F4A7C15u;
        char want[64];
        for (int step = 0; step < STEPS; step++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            unsigned what = (unsigned)(r >> 60) % 8, pick = (unsigned)(r >> 33);
            const char *name = pool[pick % NPOOL];
            if (what <= 2 && nmade < MAXN) { /* an op node: a counter's name */
                hop_op op = what == 0 ? HOP_OP_neg : HOP_OP_add;
                expected_name(g, op == HOP_OP_neg ? "neg" : "add", want, sizeof want);
                hop_node *n = op == HOP_OP_neg ? op1(g, op, x) : op2(g, op, x, x);
                assert_string_equal(n->name, want);
                made[nmade++] = n;
            } else if (what == 3 && nmade < MAXN) { /* a placeholder, named whole */
                expected_name(g, name, want, sizeof want);
                hop_node *n = ph(g, name, v);
                assert_string_equal(n->name, want);
                made[nmade++] = n;
            } else if (what == 4 && nmade > 0) { /* a rename */
                hop_node *n = made[pick % nmade];
                /* (its own name is free to it: moved out of the way first) */
                assert_int_equal(hop_graph_rename_node(g, n, "tmp_rename"), HOP_OK);
                expected_name(g, name, want, sizeof want);
                assert_int_equal(hop_graph_rename_node(g, n, name), HOP_OK);
                assert_string_equal(n->name, want);
            } else if (what == 5 && nmade > 0) { /* an erasure */
                size_t i = pick % nmade;
                assert_int_equal(hop_graph_erase_node(g, made[i]), HOP_OK);
                made[i] = made[--nmade];
            } else if (what == 6 && nsubs < MAXS) { /* a subgraph */
                hop_graph *s = hop_graph_new_subgraph(g, name);
                assert_non_null(s);
                ret(s, ph(s, "a", v));
                assert_int_equal(hop_graph_add_subgraph(g, s), HOP_OK);
                subs[nsubs++] = s;
            } else if (what == 7 && nsubs > 0) {
                size_t i = pick % nsubs;
                assert_int_equal(hop_graph_remove_subgraph(g, subs[i]), HOP_OK);
                hop_graph_free(subs[i]);
                subs[i] = subs[--nsubs];
            }
        }
        ret(g, x);
        assert_int_equal(hop_graph_verify(g), HOP_OK);
        hop_graph_free(g);
    }
}

/* Many uniquified bases (the table of bases outgrows its inline buckets):
 * each keeps its own smallest free suffix, also after erasures, and graphs
 * sharing memory name their nodes independently. */
static void
test_many_uniquified_bases_each_keep_the_smallest_free_suffix(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_graph *h = hop_graph_new_sharing(g, "body");
    assert_non_null(h);
    enum { NB = 40 };
    hop_node *second[NB];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NB; i++) {
            char base[16], want[32];
            snprintf(base, sizeof base, "v%d", i);
            hop_node *n = ph(g, base, T(HOP_F32, 1, K(4), NULL));
            if (round == 0)
                snprintf(want, sizeof want, "%s", base);
            else
                snprintf(want, sizeof want, "%s_%d", base, round);
            assert_string_equal(n->name, want);
            if (round == 1)
                second[i] = n;
        }
    for (int i = 0; i < NB; i++)
        assert_int_equal(hop_graph_erase_node(g, second[i]), HOP_OK);
    for (int i = 0; i < NB; i++) {
        char base[16], want[32];
        snprintf(base, sizeof base, "v%d", i);
        snprintf(want, sizeof want, "%s_1", base);
        assert_string_equal(ph(g, base, T(HOP_F32, 1, K(4), NULL))->name, want);
        snprintf(want, sizeof want, "%s_3", base); /* _2 is still taken */
        assert_string_equal(ph(g, base, T(HOP_F32, 1, K(4), NULL))->name, want);
    }
    /* the other graph of the same memory has its own names */
    assert_string_equal(ph(h, "v0", T(HOP_F32, 1, K(4), NULL))->name, "v0");
    hop_graph_free(h);
    hop_graph_free(g);
}

/* Graphs sharing memory keep it alive for each other: the one made first
 * can be freed first, and the other's nodes and metadata stay valid. */
static void
test_a_sharing_graph_outlives_the_graph_it_shares_with(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *gx = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_graph *h = hop_graph_new_sharing(g, "body");
    hop_node *x = ph(h, "x", T(HOP_F32, 1, K(4), NULL));
    assert_ptr_equal(x->meta, gx->meta); /* one interned copy */
    hop_node *a = op2(h, HOP_OP_add, x, x);
    hop_graph_free(g);
    hop_node *b = op2(h, HOP_OP_mul, a, x);
    assert_string_equal(names(h), "x add mul");
    assert_int_equal(b->meta->meta.rank, 1);
    assert_null(hop_graph_new_sharing(NULL, "y"));
    assert_error(HOP_MISUSE, "hop_graph_new_sharing: the graph is NULL");
    hop_graph_free(h);
}

static void
test_names_that_are_not_identifiers_are_sanitised(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_value_info v = T(HOP_F32, 0, NULL, NULL);
    const char *given[] = {"x.y", "0a", "", "if", "a-b c", "self.weight", "x.y", "lambda"};
    const char *want[] = {"x_y", "_0a", "_", "if_", "a_b_c", "self_weight", "x_y_1", "lambda_"};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        assert_string_equal(ph(g, given[i], v)->name, want[i]);
    assert_ptr_equal(hop_graph_find_node(g, "x_y_1"), hop_graph_placeholder_at(g, 6));
    assert_null(hop_graph_find_node(g, "x.y"));
    hop_graph_free(g);
}

static void
test_call_op_records_op_target_and_inferred_meta(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_node *y = ph(g, "y", T(HOP_F32, 1, K(4), NULL));
    hop_node *add = op2(g, HOP_OP_add, x, y);
    assert_int_equal(add->kind, HOP_NODE_CALL_OP);
    assert_int_equal(add->op, HOP_OP_add);
    assert_string_equal(hop_node_target(add), "add");
    assert_int_equal(add->meta->kind, HOP_VALUE_TENSOR);
    hop_value_info want = T(HOP_F32, 2, s0, K(4));
    assert_true(hop_meta_equal(&add->meta->meta, &want.meta));

    hop_arg size_args[] = {hop_arg_node(x), hop_arg_int(0)};
    hop_node *size = hop_graph_call_op(g, HOP_OP_sym_size, size_args, 2);
    assert_non_null(size);
    assert_string_equal(size->name, "sym_size");
    assert_int_equal(size->meta->kind, HOP_VALUE_SYM);
    assert_ptr_equal(size->meta->sym, s0);

    /* A SymInt node is a SymInt operand. */
    hop_arg gt_args[] = {hop_arg_node(add), hop_arg_node(size)};
    hop_node *gt = hop_graph_call_op(g, HOP_OP_gt, gt_args, 2);
    assert_non_null(gt);
    assert_int_equal(gt->meta->meta.dtype, HOP_BOOL);
    assert_int_equal(gt->meta->meta.rank, 2);

    assert_null(hop_graph_call_op(g, HOP_OP_add, gt_args, 1));
    assert_error(HOP_INVALID, "call_op add: takes 2 arguments, got 1");
    assert_null(hop_graph_call_op(g, HOP_OP_COUNT, gt_args, 1));
    char msg[64];
    snprintf(msg, sizeof msg, "call_op: unknown op %d", (int)HOP_OP_COUNT);
    assert_error(HOP_INVALID, msg);
    assert_string_equal(names(g), "x y add sym_size gt");
    hop_graph_free(g);
}

static void
test_call_op_copies_arguments_and_folds_constant_syms_to_ints(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_arg shape[] = {hop_arg_sym(s0), hop_arg_sym(hop_sym_add_int(env, K(2), 2))};
    hop_arg args[] = {hop_arg_node(x), hop_arg_list(shape, 2)};
    hop_node *view = hop_graph_call_op(g, HOP_OP_view, args, 2);
    assert_non_null(view);
    /* The caller's arrays are scratch: the node keeps its own copy. */
    shape[0] = hop_arg_int(99);
    args[0] = hop_arg_none();
    assert_int_equal(view->nargs, 2);
    assert_int_equal(view->args[0].kind, HOP_ARG_NODE);
    assert_ptr_equal(view->args[0].u.node, x);
    assert_int_equal(view->args[1].kind, HOP_ARG_LIST);
    assert_int_equal(view->args[1].u.list.n, 2);
    assert_ptr_not_equal(view->args[1].u.list.items, shape);
    assert_int_equal(view->args[1].u.list.items[0].kind, HOP_ARG_SYM);
    assert_ptr_equal(view->args[1].u.list.items[0].u.sym, s0);
    assert_int_equal(view->args[1].u.list.items[1].kind, HOP_ARG_INT);
    assert_int_equal(view->args[1].u.list.items[1].u.i, 4);
    hop_graph_free(g);
}

static void
test_use_lists_hold_one_record_per_argument_slot(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *y = ph(g, "y", T(HOP_F32, 1, K(4), NULL));
    hop_node *add = op2(g, HOP_OP_add, x, x);
    hop_node *mul = op2(g, HOP_OP_mul, add, y);
    hop_node *items[] = {x, add, mul};
    hop_arg list[] = {hop_arg_node(items[0]), hop_arg_node(items[1]), hop_arg_node(items[2])};
    hop_arg cat_args[] = {hop_arg_list(list, 3), hop_arg_int(0)};
    hop_node *cat = hop_graph_call_op(g, HOP_OP_cat, cat_args, 2);
    assert_non_null(cat);
    ret(g, cat);
    /* Most recent user first. */
    assert_int_equal(x->nuses, 3);
    assert_string_equal(users(x), "cat add add");
    assert_int_equal(add->nuses, 2);
    assert_string_equal(users(add), "cat mul");
    assert_string_equal(users(y), "mul");
    assert_string_equal(users(cat), "output");
    assert_int_equal(g->output->nuses, 0);
    hop_graph_free(g);
}

static void
test_failed_call_leaves_graph_unchanged_and_its_name_unused(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_node *z = ph(g, "z", T(HOP_F32, 1, K(3), NULL));
    hop_node *add0 = op2(g, HOP_OP_add, x, x);
    hop_arg bad[] = {hop_arg_node(x), hop_arg_node(z)};
    assert_null(hop_graph_call_op(g, HOP_OP_add, bad, 2));
    assert_int_equal(hop_error_code(), HOP_SHAPE);
    assert_string_equal(names(g), "x z add");
    assert_int_equal(g->nnodes, 3);
    assert_ptr_equal(g->last, add0);
    assert_int_equal(x->nuses, 2);
    assert_int_equal(z->nuses, 0);
    assert_null(hop_graph_find_node(g, "add_1"));
    assert_string_equal(op2(g, HOP_OP_add, x, x)->name, "add_1");

    /* A misuse detected after the name was reserved. */
    hop_graph *other = hop_graph_new(env, "other");
    hop_node *w = ph(other, "w", T(HOP_F32, 2, s0, K(4)));
    hop_arg foreign[] = {hop_arg_node(x), hop_arg_node(w)};
    assert_null(hop_graph_call_op(g, HOP_OP_mul, foreign, 2));
    assert_error(HOP_MISUSE, "call_op mul: argument 1 (w) belongs to graph other, not forward");
    assert_string_equal(op2(g, HOP_OP_mul, x, x)->name, "mul");
    hop_graph_free(other);
    hop_graph_free(g);
}

/* Every allocation of a call can fail; each failure is NOMEM and leaves the
 * graph as it was (same nodes, uses and free name). */
static void
test_out_of_memory_in_a_call_leaves_graph_unchanged(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    /* Enough calls that the arena and the name table grow several times. */
    int failures = 0;
    for (int i = 0; i < 300; i++) {
        char want[32];
        snprintf(want, sizeof want, i ? "mul_%d" : "mul", i);
        size_t nnodes = g->nnodes, nuses = x->nuses;
        hop_node *last = g->last;
        for (long k = 1;; k++) {
            hop_arg a[] = {hop_arg_node(x), hop_arg_node(x)};
            hop_alloc_fail_at(k);
            hop_node *n = hop_graph_call_op(g, HOP_OP_mul, a, 2);
            hop_alloc_fail_at(0);
            if (n) {
                assert_string_equal(n->name, want);
                break;
            }
            failures++;
            assert_int_equal(hop_error_code(), HOP_NOMEM);
            assert_int_equal(g->nnodes, nnodes);
            assert_ptr_equal(g->last, last);
            assert_int_equal(x->nuses, nuses);
            assert_null(hop_graph_find_node(g, want));
        }
    }
    assert_true(failures >= 5);
    hop_graph_free(g);
}

static void
test_call_op_rejects_bad_operands_with_misuse_or_invalid(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_graph *body = sin_body("body");
    assert_int_equal(hop_graph_add_subgraph(g, body), HOP_OK);
    hop_arg operands[] = {hop_arg_node(x)};
    hop_value_info outs[] = {T(HOP_F32, 1, K(4), NULL), T(HOP_F32, 1, K(4), NULL)};
    hop_arg hop_args[] = {hop_arg_graph(body), hop_arg_list(operands, 1)};
    hop_node *call = hop_graph_call_hop(g, class_named("wrap"), hop_args, 2, outs, 2);
    assert_non_null(call);

    hop_arg a[2] = {hop_arg_node(call), hop_arg_node(x)};
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_INVALID, "call_op add: argument 0 (wrap) has no single value");
    a[0] = hop_arg_graph(body);
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_MISUSE, "call_op add: argument 0 is a graph; only a call_hop takes "
                             "subgraphs, as direct arguments");
    a[0] = hop_arg_node(NULL);
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_MISUSE, "call_op add: argument 0 is a NULL node");
    a[0] = hop_arg_sym(NULL);
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_MISUSE, "call_op add: argument 0 is a NULL SymInt");
    a[0] = hop_arg_dtype((hop_dtype)42);
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_INVALID, "call_op add: argument 0 has an invalid dtype 42");
    hop_node *out = ret(g, x);
    a[0] = hop_arg_node(out);
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_MISUSE, "call_op add: argument 0 is the output node of forward");
    /* A list that contains itself is cut off instead of recursing forever. */
    hop_arg loop = hop_arg_list(NULL, 1);
    loop.u.list.items = &loop;
    hop_arg c[] = {loop, hop_arg_int(0)};
    assert_null(hop_graph_call_op(g, HOP_OP_cat, c, 2));
    assert_error(HOP_INVALID, "call_op cat: argument 0 nests lists more than 16 deep");
    assert_string_equal(names(g), "x wrap output");
    hop_graph_free(g);
}

static void
test_call_hop_copies_outs_and_getitem_reads_them(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_graph *t = sin_body("cond_true_0");
    hop_graph *f = sin_body("cond_false_0");
    assert_int_equal(hop_graph_add_subgraph(g, t), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, f), HOP_OK);
    hop_arg operands[] = {hop_arg_node(x)};
    hop_value_info outs[] = {T(HOP_F32, 2, s0, K(4)), S(s0)};
    hop_arg args[] = {hop_arg_bool(true), hop_arg_graph(t), hop_arg_graph(f),
                      hop_arg_list(operands, 1)};
    hop_node *cond = hop_graph_call_hop(g, class_named("cond"), args, 4, outs, 2);
    assert_non_null(cond);
    outs[0] = S(s0);
    assert_int_equal(cond->kind, HOP_NODE_CALL_HOP);
    assert_string_equal(hop_node_target(cond), "cond");
    assert_string_equal(cond->name, "cond");
    assert_int_equal(cond->meta->kind, HOP_VALUE_NONE);
    assert_int_equal(cond->nouts, 2);
    assert_int_equal(cond->outs[0].kind, HOP_VALUE_TENSOR);
    assert_ptr_equal(cond->args[1].u.graph, t);
    assert_int_equal(x->nuses, 1);

    hop_node *g0 = hop_graph_getitem(g, cond, 0);
    hop_node *g1 = hop_graph_getitem(g, cond, 1);
    assert_string_equal(g0->name, "getitem");
    assert_string_equal(g1->name, "getitem_1");
    assert_int_equal(g0->kind, HOP_NODE_GETITEM);
    assert_string_equal(hop_node_target(g0), "getitem");
    assert_int_equal(g0->meta->kind, HOP_VALUE_TENSOR);
    assert_int_equal(g1->meta->kind, HOP_VALUE_SYM);
    assert_ptr_equal(g1->meta->sym, s0);
    assert_int_equal(g1->args[1].u.i, 1);
    assert_int_equal(cond->nuses, 2);
    assert_null(hop_graph_getitem(g, cond, 2));
    assert_error(HOP_INVALID, "getitem: cond has 2 outputs; index 2 is out of range");
    assert_null(hop_graph_getitem(g, x, 0));
    assert_error(HOP_INVALID, "getitem: x is a placeholder, not a call_hop");

    /* One output: the call is that value. */
    hop_node *single = hop_graph_call_hop(g, class_named("cond"), args, 4, outs + 1, 1);
    assert_string_equal(single->name, "cond_1");
    assert_int_equal(single->meta->kind, HOP_VALUE_SYM);

    hop_graph *stray = sin_body("stray");
    args[1] = hop_arg_graph(stray);
    assert_null(hop_graph_call_hop(g, class_named("cond"), args, 4, outs, 2));
    assert_error(HOP_MISUSE, "call_hop cond: argument 1: graph stray is not a subgraph of forward");
    args[1] = hop_arg_graph(t);
    hop_value_info none = {.kind = HOP_VALUE_NONE};
    assert_null(hop_graph_call_hop(g, class_named("cond"), args, 4, &none, 1));
    assert_error(HOP_INVALID, "call_hop cond: output 0 must be a tensor or a SymInt");
    assert_string_equal(names(g), "x cond getitem getitem_1 cond_1");
    hop_graph_free(stray);
    hop_graph_free(g);
}

static void
test_output_is_last_and_later_nodes_go_before_it(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *out = ret(g, x);
    assert_ptr_equal(g->output, out);
    assert_int_equal(out->kind, HOP_NODE_OUTPUT);
    assert_string_equal(out->name, "output");
    assert_string_equal(hop_node_target(out), "output");
    op1(g, HOP_OP_neg, x);
    ph(g, "y", T(HOP_F32, 1, K(4), NULL));
    assert_string_equal(names(g), "x y neg output");
    assert_ptr_equal(g->last, out);
    hop_arg v = hop_arg_node(x);
    assert_null(hop_graph_output(g, &v, 1));
    assert_error(HOP_MISUSE, "output: forward already has an output node");
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* ------------------------------------------------------------ subgraphs */

/* Past HOP__SMALL_SUBGRAPHS a graph finds its subgraphs through a hash index
 * (issue #30): every one stays findable by name through removals in any
 * order (the index's deletions shift entries back), a removed name is free
 * again, and node names still avoid the subgraphs' names. */
static void
test_many_subgraphs_stay_findable_through_removals(void **state)
{
    (void)state;
    enum { N = 300 };
    hop_graph *g = sin_body("forward");
    hop_graph *subs[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "body_%d", i);
        subs[i] = sin_body(name);
        assert_int_equal(hop_graph_add_subgraph(g, subs[i]), HOP_OK);
    }
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    snprintf(name, sizeof name, "body_%d", 7);
    hop_graph *dup = sin_body(name);
    assert_int_equal(hop_graph_add_subgraph(g, dup), HOP_EXISTS);
    hop_graph_free(dup);
    assert_string_equal(ph(g, "body_42", T(HOP_F32, 0, NULL, NULL))->name, "body_42_1");
    /* Remove every third one, from the middle outwards and from both ends. */
    bool gone[N] = {false};
    for (int k = 0; k < N; k += 3) {
        int i = (k / 3) % 2 ? k : N - 1 - k;
        assert_int_equal(hop_graph_remove_subgraph(g, subs[i]), HOP_OK);
        hop_graph_free(subs[i]);
        gone[i] = true;
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "body_%d", i);
        if (gone[i])
            assert_null(hop_graph_find_subgraph(g, name));
        else
            assert_ptr_equal(hop_graph_find_subgraph(g, name), subs[i]);
    }
    assert_null(hop_graph_find_subgraph(g, "body_"));
    assert_null(hop_graph_find_subgraph(g, "body_3000"));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    /* A removed name can be taken again, and is found. */
    for (int i = 0; i < N; i++) {
        if (!gone[i])
            continue;
        snprintf(name, sizeof name, "body_%d", i);
        subs[i] = sin_body(name);
        assert_int_equal(hop_graph_add_subgraph(g, subs[i]), HOP_OK);
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "body_%d", i);
        assert_ptr_equal(hop_graph_find_subgraph(g, name), subs[i]);
    }
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

static void
test_subgraph_ownership_is_exclusive_and_names_are_unique(void **state)
{
    (void)state;
    hop_graph_free(sin_body("warm_up")); /* interns the env's expressions */
    long live = hop_alloc_live();
    hop_graph *g = hop_graph_new(env, "forward");
    hop_graph *t = sin_body("cond_true_0");
    hop_graph *inner = sin_body("wrap_body_0");
    assert_int_equal(hop_graph_add_subgraph(t, inner), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, t), HOP_OK);
    assert_ptr_equal(t->parent, g);
    assert_ptr_equal(hop_graph_find_subgraph(g, "cond_true_0"), t);
    assert_null(hop_graph_find_subgraph(g, "wrap_body_0"));
    assert_ptr_equal(hop_graph_find_subgraph(t, "wrap_body_0"), inner);

    assert_int_equal(hop_graph_add_subgraph(g, t), HOP_MISUSE);
    assert_error(HOP_MISUSE, "add_subgraph: cond_true_0 is already a subgraph of forward");
    hop_graph *dup = sin_body("cond_true_0");
    assert_int_equal(hop_graph_add_subgraph(g, dup), HOP_EXISTS);
    assert_error(HOP_EXISTS, "add_subgraph: forward already has a subgraph named cond_true_0");
    hop_graph_free(dup);
    assert_int_equal(hop_graph_add_subgraph(inner, g), HOP_MISUSE);
    assert_error(HOP_MISUSE, "add_subgraph: forward contains wrap_body_0, which cannot contain it");
    assert_int_equal(hop_graph_add_subgraph(g, g), HOP_MISUSE);
    hop_shape_env *env2 = hop_shape_env_new();
    hop_graph *alien = hop_graph_new(env2, "alien");
    assert_int_equal(hop_graph_add_subgraph(g, alien), HOP_MISUSE);
    assert_error(HOP_MISUSE, "add_subgraph: alien uses another shape env than forward");
    hop_graph_free(alien);
    hop_shape_env_free(env2);

    /* A subgraph cannot be freed on its own... */
    hop_graph_free(t);
    assert_error(HOP_MISUSE,
                 "hop_graph_free: cond_true_0 is a subgraph of forward; free forward instead");
    assert_ptr_equal(hop_graph_find_subgraph(g, "cond_true_0"), t);
    /* ...and node names avoid subgraph names. */
    assert_string_equal(ph(g, "cond_true_0", T(HOP_F32, 0, NULL, NULL))->name, "cond_true_0_1");
    hop_graph *clash = sin_body("cond_true_0_1");
    assert_int_equal(hop_graph_add_subgraph(g, clash), HOP_EXISTS);
    assert_error(HOP_EXISTS, "add_subgraph: forward already has a node named cond_true_0_1");
    hop_graph_free(clash);

    /* Freeing the parent frees the whole tree. */
    hop_graph_free(g);
    assert_int_equal(hop_alloc_live(), live);
}

static void
test_removed_subgraph_belongs_to_the_caller_again(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    hop_graph *a = sin_body("a");
    hop_graph *b = sin_body("b");
    hop_graph *c = sin_body("c");
    assert_int_equal(hop_graph_add_subgraph(g, a), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, b), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, c), HOP_OK);
    hop_arg operands[] = {hop_arg_node(x)};
    hop_value_info outs[] = {T(HOP_F32, 2, s0, K(4))};
    hop_arg args[] = {hop_arg_graph(c), hop_arg_list(operands, 1)};
    hop_node *call = hop_graph_call_hop(g, class_named("wrap"), args, 2, outs, 1);
    assert_non_null(call);

    assert_int_equal(hop_graph_remove_subgraph(g, c), HOP_MISUSE);
    assert_error(HOP_MISUSE, "remove_subgraph: c is still used by node wrap");
    assert_int_equal(hop_graph_remove_subgraph(g, b), HOP_OK);
    assert_null(b->parent);
    assert_int_equal(g->nsubgraphs, 2);
    assert_ptr_equal(g->subgraphs[0], a);
    assert_ptr_equal(g->subgraphs[1], c);
    assert_int_equal(hop_graph_remove_subgraph(g, b), HOP_MISUSE);
    assert_error(HOP_MISUSE, "remove_subgraph: b is not a subgraph of forward");
    /* Its name is free for nodes again. */
    assert_string_equal(ph(g, "b", T(HOP_F32, 0, NULL, NULL))->name, "b");
    hop_graph_free(b);
    assert_int_equal(hop_graph_erase_node(g, call), HOP_OK);
    assert_int_equal(hop_graph_remove_subgraph(g, c), HOP_OK);
    hop_graph_free(c);
    hop_graph_free(g);
}

/* ------------------------------------------------------------ erase, DCE */

static void
test_erase_refuses_used_nodes_and_unlinks_uses(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *y = ph(g, "y", T(HOP_F32, 1, K(4), NULL));
    hop_node *add = op2(g, HOP_OP_add, x, y);
    hop_node *mul = op2(g, HOP_OP_mul, add, x);
    ret(g, mul);
    assert_int_equal(hop_graph_erase_node(g, add), HOP_MISUSE);
    assert_error(HOP_MISUSE, "erase_node: add is still used by mul");
    assert_int_equal(hop_graph_erase_node(g, g->output), HOP_OK);
    assert_null(g->output);
    assert_int_equal(hop_graph_erase_node(g, mul), HOP_OK);
    assert_int_equal(x->nuses, 1);
    assert_string_equal(users(x), "add");
    assert_int_equal(add->nuses, 0);
    assert_null(mul->graph);
    assert_null(hop_graph_find_node(g, "mul"));
    assert_int_equal(hop_graph_erase_node(g, mul), HOP_MISUSE);
    assert_error(HOP_MISUSE, "erase_node: mul is not a node of forward");
    /* An erased node cannot be an argument. */
    hop_arg a[] = {hop_arg_node(mul), hop_arg_node(x)};
    assert_null(hop_graph_call_op(g, HOP_OP_add, a, 2));
    assert_error(HOP_MISUSE, "call_op add: argument 0 (mul) was erased");
    assert_int_equal(hop_graph_erase_node(g, add), HOP_OK);
    assert_int_equal(hop_graph_erase_node(g, y), HOP_OK);
    assert_int_equal(g->nplaceholders, 1);
    assert_string_equal(names(g), "x");
    assert_int_equal(g->nnodes, 1);
    assert_int_equal(x->nuses, 0);
    ret(g, x);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

static void
test_dce_removes_dead_chains_and_unreferenced_subgraphs(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 2, s0, K(4)));
    ph(g, "unused", T(HOP_F32, 0, NULL, NULL));
    hop_node *live = op1(g, HOP_OP_cos, x);
    hop_node *dead = op1(g, HOP_OP_exp, op1(g, HOP_OP_sin, x));
    op2(g, HOP_OP_add, dead, dead);
    hop_graph *used = pair_body("used");
    hop_graph *dropped = pair_body("dropped");
    hop_graph *never = sin_body("never");
    assert_int_equal(hop_graph_add_subgraph(g, used), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, dropped), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(g, never), HOP_OK);
    hop_arg operands[] = {hop_arg_node(x)};
    hop_value_info outs[] = {T(HOP_F32, 2, s0, K(4)), T(HOP_F32, 2, s0, K(4))};
    hop_arg a1[] = {hop_arg_graph(used), hop_arg_list(operands, 1)};
    hop_node *w1 = hop_graph_call_hop(g, class_named("wrap"), a1, 2, outs, 2);
    hop_arg a2[] = {hop_arg_graph(dropped), hop_arg_list(operands, 1)};
    hop_node *w2 = hop_graph_call_hop(g, class_named("wrap"), a2, 2, outs, 2);
    hop_node *keep = hop_graph_getitem(g, w1, 1);
    hop_graph_getitem(g, w1, 0);
    hop_graph_getitem(g, w2, 0);
    hop_arg rv[] = {hop_arg_node(live), hop_arg_node(keep)};
    assert_non_null(hop_graph_output(g, rv, 2));
    assert_string_equal(names(g), "x unused cos sin exp add wrap wrap_1 getitem getitem_1 "
                                  "getitem_2 output");

    assert_int_equal(hop_graph_dce(g), 6);
    assert_string_equal(names(g), "x unused cos wrap getitem output");
    assert_int_equal(x->nuses, 2);
    assert_int_equal(w1->nuses, 1);
    assert_int_equal(g->nsubgraphs, 1);
    assert_ptr_equal(g->subgraphs[0], used);
    assert_null(hop_graph_find_subgraph(g, "dropped"));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    assert_int_equal(hop_graph_dce(g), 0);
    hop_graph_free(g);
}

/* A check is an effect: an unused fail_if of an EFFECT kind (eager raises
 * there) and an unused zeros of an unbacked size (eager refuses a negative
 * one) stay, with what they read; a VALUE kind's unused check, which only
 * vouches for bits nobody reads, goes. */
static void
test_dce_keeps_unused_checks_that_eager_would_raise(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *flag = op2(g, HOP_OP_gt, x, x);
    hop_arg fe[] = {hop_arg_node(x), hop_arg_node(flag), hop_arg_int(HOP_CHECK_NUMPY_INDEX)};
    hop_arg fv[] = {hop_arg_node(x), hop_arg_node(flag), hop_arg_int(HOP_CHECK_NUMPY_ZERO_SIGN)};
    hop_node *effect = hop_graph_call_op(g, HOP_OP_fail_if, fe, 3);
    hop_node *value = hop_graph_call_op(g, HOP_OP_fail_if, fv, 3);
    hop_node *k = ph(g, "k", T(HOP_I64, 0, NULL, NULL));
    hop_arg ka[] = {hop_arg_node(k)};
    hop_node *item = hop_graph_call_op(g, HOP_OP_item, ka, 1);
    hop_arg shape[] = {hop_arg_node(item)};
    hop_arg za[] = {hop_arg_list(shape, 1), hop_arg_none()};
    hop_node *zeros = hop_graph_call_op(g, HOP_OP_zeros, za, 2);
    assert_non_null(effect);
    assert_non_null(value);
    assert_non_null(zeros);
    assert_true(hop_node_may_fail(effect));
    assert_false(hop_node_may_fail(value));
    assert_true(hop_node_may_fail(zeros));
    assert_false(hop_node_may_fail(flag));
    hop_arg rv[] = {hop_arg_node(x)};
    assert_non_null(hop_graph_output(g, rv, 1));
    assert_int_equal(hop_graph_dce(g), 1);
    assert_string_equal(names(g), "x k gt fail_if item zeros output");
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* ------------------------------------------------------------ verifier */

/* forward(x, y) calls cond(pred, cond_true_0, cond_false_0, (x,)) where each
 * branch is sin_body; the root returns cond[0]. */
typedef struct cond_graph {
    hop_graph *g, *t, *f;
    hop_node *x, *y, *cond, *item;
} cond_graph;

/* build_cond_graph before its verification: the branches are made by
 * checked appends alone, the root by hop_graph_call_hop too. */
static cond_graph
build_cond_graph_unverified(void)
{
    cond_graph c;
    c.g = hop_graph_new(env, "forward");
    c.x = ph(c.g, "x", T(HOP_F32, 2, s0, K(4)));
    c.y = ph(c.g, "y", T(HOP_I64, 0, NULL, NULL));
    c.t = sin_body("cond_true_0");
    c.f = sin_body("cond_false_0");
    assert_int_equal(hop_graph_add_subgraph(c.g, c.t), HOP_OK);
    assert_int_equal(hop_graph_add_subgraph(c.g, c.f), HOP_OK);
    hop_arg operands[] = {hop_arg_node(c.x)};
    hop_value_info outs[] = {T(HOP_F32, 2, s0, K(4))};
    hop_arg args[] = {hop_arg_bool(true), hop_arg_graph(c.t), hop_arg_graph(c.f),
                      hop_arg_list(operands, 1)};
    c.cond = hop_graph_call_hop(c.g, class_named("cond"), args, 4, outs, 1);
    assert_non_null(c.cond);
    c.item = hop_graph_getitem(c.g, c.cond, 0);
    ret(c.g, c.item);
    return c;
}

static cond_graph
build_cond_graph(void)
{
    cond_graph c = build_cond_graph_unverified();
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    return c;
}

/* hop_node_graphs: a call's subgraph arguments, after its leads. */
/* hop_graph_tree_nodes: a graph's nodes and its subgraphs' at any depth. */
static void
test_tree_nodes_counts_every_graph_under_a_graph(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    /* forward: x, y, cond, item, output; each branch: its input, sin, output */
    assert_int_equal(c.g->nnodes, 5);
    assert_int_equal(hop_graph_tree_nodes(c.t), 3);
    assert_int_equal(hop_graph_tree_nodes(c.g), 5 + 3 + 3);
    hop_graph *inner = sin_body("inner");
    assert_int_equal(hop_graph_add_subgraph(c.t, inner), HOP_OK);
    assert_int_equal(hop_graph_tree_nodes(c.g), 5 + 3 + 3 + 3);
    assert_int_equal(hop_graph_tree_nodes(NULL), 0);
    hop_graph_free(c.g);
}

static void
test_node_graphs_are_the_bodies_after_the_leads(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    size_t n = 99;
    const hop_arg *bodies = hop_node_graphs(c.cond, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(bodies, &c.cond->args[1]); /* after the one lead, pred */
    assert_ptr_equal(bodies[0].u.graph, c.t);
    assert_ptr_equal(bodies[1].u.graph, c.f);
    /* a node with no subgraphs: none, past its arguments */
    assert_ptr_equal(hop_node_graphs(c.item, &n), c.item->args + c.item->nargs);
    assert_int_equal(n, 0);
    n = 99;
    assert_null(hop_node_graphs(NULL, &n));
    assert_int_equal(n, 0);
    hop_graph_free(c.g);
}

static void
test_verify_accepts_graphs_the_builders_make(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    assert_int_equal(hop_graph_verify(NULL), HOP_MISUSE);
    hop_graph_free(c.g);
}

static void
test_verify_rejects_use_before_definition_in_a_subgraph(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    hop_node *x = c.t->first;
    hop_node *sin = x->next;
    /* add(x, x) then y = cos(x); make add read y. */
    hop_graph_erase_node(c.t, c.t->output);
    hop_node *add = op2(c.t, HOP_OP_add, sin, x);
    hop_node *y = op1(c.t, HOP_OP_cos, x);
    ret(c.t, add);
    y->name = "y";
    add->args[1].u.node = y;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_true_0: node add uses y, which is defined later");
    add->args[1].u.node = add;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_true_0: node add uses itself");
    /* A value of another graph is reported first, even after an argument
     * defined later (check_args fails there first). */
    add->args[0].u.node = y;
    add->args[1].u.node = c.x;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_true_0: node add uses x, which belongs to graph "
                             "forward");
    add->args[0].u.node = sin;
    add->args[1].u.node = x;
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    hop_graph_free(c.g);
}

static void
test_verify_rejects_a_value_from_another_graph(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    hop_node *sin = c.f->first->next;
    sin->args[0].u.node = c.x;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_false_0: node sin uses x, which belongs to graph "
                             "forward");
    sin->args[0].u.node = c.f->first;
    hop_graph_free(c.g);
}

static void
test_verify_rejects_a_subgraph_argument_the_graph_does_not_own(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    hop_graph *stray = sin_body("stray");
    c.cond->args[2].u.graph = stray;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond uses subgraph stray, which is not a "
                             "subgraph of forward");
    c.cond->args[2].u.graph = c.f;
    hop_graph_free(stray);
    hop_graph_free(c.g);
}

/* hop_graph_verify_changed trusts the stamp of a graph verified and not
 * changed through the API since: a field written behind the API's back (the
 * documented case for hop_graph_touch) goes unseen, which is how these tests
 * see whether the check ran. */
static void
test_verify_changed_skips_a_graph_verified_and_unchanged(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph(); /* verified: stamped */
    c.cond->nouts = 2;                 /* broken behind the API's back */
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY); /* always checks */
    assert_error(HOP_VERIFY, "verify: forward: node cond has 2 outputs but cond_true_0 returns 1");
    /* The failed check took the stamp away. */
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
    c.cond->nouts = 1;
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK); /* checked and passed */
    assert_int_equal(hop_graph_verify_changed(NULL), HOP_MISUSE);
    assert_int_equal(hop_graph_version(NULL), 0);
    hop_graph_touch(NULL);
    hop_graph_free(c.g);
}

static void
test_a_change_after_verification_is_verified_again(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    /* Each API change of the root, after a good check: the broken field is
     * seen again. */
    for (int k = 0; k < 4; k++) {
        assert_int_equal(hop_graph_verify(c.g), HOP_OK);
        uint32_t v = hop_graph_version(c.g);
        c.cond->nouts = 2;
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
        if (k == 0)
            assert_int_equal(hop_graph_rename_node(c.g, c.item, "item"), HOP_OK);
        else if (k == 1)
            ph(c.g, "z", T(HOP_F32, 0, NULL, NULL));
        else if (k == 2)
            assert_int_equal(hop_graph_erase_node(c.g, hop_graph_find_node(c.g, "z")), HOP_OK);
        else
            hop_graph_touch(c.g);
        assert_true(hop_graph_version(c.g) != v);
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
        assert_error(HOP_VERIFY,
                     "verify: forward: node cond has 2 outputs but cond_true_0 returns 1");
        c.cond->nouts = 1;
    }
    /* A change inside a subgraph: the root's check runs again. */
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    hop_node *sin = c.t->first->next;
    sin->args[0].u.node = sin; /* broken behind the API's back */
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
    assert_int_equal(hop_graph_rename_node(c.t, sin, "s"), HOP_OK);
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_true_0: node s uses itself");
    sin->args[0].u.node = c.t->first;
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
    hop_graph_free(c.g);
}

/* hop_graph_verify_changed walks a changed graph but not a subgraph it can
 * vouch for: one verified and unchanged since, or one of checked appends
 * alone (a traced HOP's body); the calls of it are still checked, and
 * hop_graph_verify checks every graph.  A field broken behind the API's back
 * shows which graphs the check walked. */
static void
test_verify_changed_skips_the_subgraphs_it_can_vouch_for(void **state)
{
    (void)state;
    for (int verified = 0; verified <= 1; verified++) {
        cond_graph c = verified ? build_cond_graph() : build_cond_graph_unverified();
        hop_node *sin = c.t->first->next;
        sin->args[0].u.node = sin; /* in the branch */
        hop_graph_touch(c.g);      /* the root changed, the branch did not */
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
        assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY); /* always checks */
        assert_error(HOP_VERIFY, "verify: cond_true_0: node sin uses itself");
        /* The branch changed through the API: walked again. */
        assert_int_equal(hop_graph_rename_node(c.t, sin, "s"), HOP_OK);
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
        assert_error(HOP_VERIFY, "verify: cond_true_0: node s uses itself");
        sin->args[0].u.node = c.t->first;
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
        /* The root is walked, and its call checked against the trusted
         * branch. */
        hop_graph_touch(c.g);
        c.cond->nouts = 2;
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
        assert_error(HOP_VERIFY,
                     "verify: forward: node cond has 2 outputs but cond_true_0 returns 1");
        c.cond->nouts = 1;
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
        hop_graph_free(c.g);
    }
}

static void
test_verifying_a_subgraph_alone_clears_the_enclosing_stamp(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    /* A second input makes the branch fine alone but the call short of an
     * operand. */
    ph(c.t, "x2", T(HOP_F32, 2, s0, K(4)));
    assert_int_equal(hop_graph_verify(c.t), HOP_OK);
    assert_int_equal(hop_graph_verify_changed(c.t), HOP_OK);
    assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY,
                 "verify: forward: node cond passes 1 operand to cond_true_0, which has "
                 "2 placeholders");
    hop_graph_free(c.g);
}

/* A graph changed only by the checked appends (placeholders, op calls, the
 * output, guards) is well formed by construction: once it has its output,
 * hop_graph_verify_changed trusts it without a walk (a field broken behind
 * the API's back shows whether the check ran) and hop_graph_verify checks
 * it; every other change, and a check that fails, ends the trust. */
static void
test_verify_changed_trusts_a_graph_of_checked_appends_only(void **state)
{
    (void)state;
    hop_graph *open = hop_graph_new(env, "open"); /* no output yet: checked */
    op1(open, HOP_OP_sin, ph(open, "x", T(HOP_F32, 1, s0, NULL)));
    assert_int_equal(hop_graph_verify_changed(open), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: open: no output node");
    hop_graph_free(open);
    for (int k = 0; k < 9; k++) {
        hop_graph *g = hop_graph_new(env, "chain");
        hop_node *x = ph(g, "x", T(HOP_F32, 1, s0, NULL));
        hop_node *spare = op1(g, HOP_OP_cos, x);
        hop_node *add = op2(g, HOP_OP_add, op1(g, HOP_OP_sin, x), x);
        hop_node *out = ret(g, add);
        /* Checked appends after the output: still trusted. */
        hop_node *y = ph(g, "y", T(HOP_F32, 1, s0, NULL));
        op2(g, HOP_OP_mul, add, y);
        assert_int_equal(hop_graph_add_guard(g, hop_sym_ge(env, s0, K(2))), HOP_OK);
        assert_int_equal(g->nguards, 1);
        add->args[1].u.node = add; /* broken behind the API's back */
        if (k == 0) {
            assert_int_equal(hop_graph_verify_changed(g), HOP_OK);
            assert_int_equal(hop_graph_verify(g), HOP_VERIFY); /* always checks */
        } else {
            hop_value_info o = T(HOP_F32, 1, s0, NULL);
            hop_arg xa = hop_arg_node(x);
            hop_node *call = NULL;
            if (k == 1)
                assert_int_equal(hop_graph_erase_node(g, spare), HOP_OK);
            else if (k == 2)
                assert_int_equal(hop_graph_rename_node(g, spare, "other"), HOP_OK);
            else if (k == 3)
                assert_int_equal(hop_graph_move_placeholder(g, y, 0), HOP_OK);
            else if (k == 4)
                hop_graph_touch(g);
            else if (k == 5)
                assert_non_null(call = hop_graph_call_foreign(g, "kern", &xa, 1, &o, 1, 0));
            else if (k == 6) {
                hop_graph *body = hop_graph_new_subgraph(g, "body");
                ret(body, ph(body, "a", o));
                assert_int_equal(hop_graph_add_subgraph(g, body), HOP_OK);
            } else if (k == 7)
                assert_int_equal(hop_graph_verify(g), HOP_VERIFY); /* a failed check */
            else
                assert_int_equal(hop_graph_erase_node(g, out), HOP_OK);
            if (k == 5)
                assert_non_null(hop_graph_getitem(g, call, 0));
            if (k == 8) { /* no output node again: nothing to trust */
                assert_int_equal(hop_graph_verify_changed(g), HOP_VERIFY);
                assert_error(HOP_VERIFY, "verify: chain: no output node");
                ret(g, add);
            }
            assert_int_equal(hop_graph_verify_changed(g), HOP_VERIFY);
        }
        assert_error(HOP_VERIFY, "verify: chain: node add uses itself");
        add->args[1].u.node = x;
        assert_int_equal(hop_graph_verify_changed(g), HOP_OK);
        assert_int_equal(hop_graph_verify(g), HOP_OK);
        hop_graph_free(g);
    }
}

/* A HOP call appended to a graph of checked appends (its subgraphs, the
 * call_hop once hop_graph_verify_call passes on it, its getitems) keeps the
 * graph trusted while each subgraph is the version the call's check saw and
 * trusted in turn (issue #30: a traced root's calls were checked again at
 * lowering); a call not checked yet, a second call appended before the first
 * was checked, a subgraph changed since, or a subgraph's own broken trust
 * has the graph walked.  A field broken behind the API's back shows which
 * graphs the check walked. */
static void
test_verify_changed_trusts_a_hop_call_checked_when_appended(void **state)
{
    (void)state;
    for (int k = 0; k < 5; k++) {
        cond_graph c = build_cond_graph_unverified();
        hop_node *second = NULL;
        if (k == 2) { /* a second call before the first is checked */
            hop_arg operands[] = {hop_arg_node(c.x)};
            hop_value_info outs[] = {T(HOP_F32, 2, s0, K(4))};
            hop_arg args[] = {hop_arg_bool(true), hop_arg_graph(c.t), hop_arg_graph(c.f),
                              hop_arg_list(operands, 1)};
            second = hop_graph_call_hop(c.g, class_named("cond"), args, 4, outs, 1);
            assert_non_null(second);
            assert_int_equal(hop_graph_verify_call(second), HOP_OK);
        }
        if (k != 1 && k != 2)
            assert_int_equal(hop_graph_verify_call(c.cond), HOP_OK);
        c.cond->nouts = 2; /* broken behind the API's back */
        if (k == 0) {
            assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK); /* not walked */
            assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);     /* always checks */
        } else {
            if (k == 3) /* a branch changed since the call's check */
                assert_int_equal(hop_graph_rename_node(c.t, c.t->first->next, "s"), HOP_OK);
            if (k == 4) /* a branch that is trusted no more */
                hop_graph_touch(c.f);
            assert_int_equal(hop_graph_verify_changed(c.g), HOP_VERIFY);
        }
        assert_error(HOP_VERIFY,
                     "verify: forward: node cond has 2 outputs but cond_true_0 returns 1");
        c.cond->nouts = 1;
        assert_int_equal(hop_graph_verify_changed(c.g), HOP_OK);
        hop_graph_free(c.g);
    }
}

static void
test_verify_checks_call_hop_signatures_against_subgraphs(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    hop_arg *ops = c.cond->args[3].u.list.items;

    /* Placeholder count. */
    c.cond->args[3].u.list.n = 0;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY,
                 "verify: forward: node cond passes 0 operands to cond_true_0, which has 1 "
                 "placeholder");
    c.cond->args[3].u.list.n = 1;

    /* Kind: a SymInt for a tensor placeholder. */
    ops[0] = hop_arg_sym(s0);
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond passes operand 0 (s0, a SymInt) to "
                             "placeholder x of cond_true_0, which is a tensor");
    /* Dtype. */
    ops[0] = hop_arg_node(c.y);
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond passes operand 0 (y, i64) to "
                             "placeholder x of cond_true_0, which is f32");
    ops[0] = hop_arg_node(c.x);
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);

    /* Ranks are the class's verify slot's to check (map's says its body takes
     * slices); cond's, the base's, wants what the call passes. */
    const hop_value_info *shared = c.f->first->meta; /* metadata is shared: poke a copy */
    hop_value_info slice = *shared;
    slice.meta.rank = 1;
    c.f->first->meta = &slice;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond: cond: input x of cond_false_0 is "
                             "f32[s0], but the call needs f32[s0, 4] there");
    c.f->first->meta = shared;

    /* Output count. */
    c.cond->nouts = 2;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond has 2 outputs but cond_true_0 returns 1");
    c.cond->nouts = 1;

    /* The operands are the call's lists: the signature says it has one. */
    c.cond->nargs = 3;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond: cond: argument 3 must be list 0 of the "
                             "values it passes, not missing");
    c.cond->nargs = 4;
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    hop_graph_free(c.g);
}

static void
test_verify_rejects_missing_misplaced_and_duplicate_outputs(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    /* A subgraph without output is found by the recursive check. */
    hop_node *out = c.f->output;
    assert_int_equal(hop_graph_erase_node(c.f, out), HOP_OK);
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: cond_false_0: no output node");
    ret(c.f, c.f->first->next);

    /* Append a node behind the output by hiding the output from the builder. */
    hop_node *o = c.g->output;
    c.g->output = NULL;
    hop_node *late = op1(c.g, HOP_OP_neg, c.x);
    c.g->output = o;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: output node output is not the last node");
    hop_graph_erase_node(c.g, late);
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);

    /* Two outputs. */
    c.g->output = NULL;
    ret(c.g, c.item);
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: more than one output node (output, output_1)");
    hop_graph_free(c.g);
}

static void
test_verify_rejects_duplicate_names_and_misplaced_placeholders(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    c.item->name = "x";
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: two nodes are named x");
    c.item->name = "cond_false_0";
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: node cond_false_0 has the name of a subgraph");
    c.item->name = "getitem";

    c.t->name = "cond_false_0";
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: two subgraphs are named cond_false_0");
    c.t->name = "cond_true_0";

    /* Move placeholder y behind cond by hand. */
    hop_node *y = c.y, *cond = c.cond;
    c.x->next = cond;
    cond->prev = c.x;
    y->prev = cond;
    y->next = cond->next;
    cond->next->prev = y;
    cond->next = y;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: placeholder y comes after cond");
    hop_graph_free(c.g);
}

/* The verifier checks use lists during its walk over the nodes but reports
 * them as before: in program order together with the argument counts, and
 * after every node's own checks. */
static void
test_verify_reports_use_list_problems_in_program_order_after_node_checks(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    /* x's records disagree with its argument slots; cond's list is longer
     * than nuses says: x comes first. */
    hop_use *xu = c.x->uses;
    c.x->uses = NULL;
    c.x->nuses = 0;
    c.cond->nuses = 0;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: x is used by 1 argument slot but has 0 use records");
    /* The other way round: x's list is wrong, cond's records disagree with
     * its argument slots. */
    c.x->uses = xu;
    c.x->nuses = 2;
    hop_use *cu = c.cond->uses;
    c.cond->uses = NULL;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: the use list of x has 1 records but nuses is 2");
    /* A later list that is longer than it says. */
    c.x->nuses = 1;
    c.cond->uses = cu;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY,
                 "verify: forward: the use list of cond has more than 0 records but nuses is 0");
    /* A node's own check before any use list. */
    c.x->nuses = 2;
    c.item->args[1].u.i = 1;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: getitem getitem reads index 1 of cond, which has "
                             "1 output");
    c.item->args[1].u.i = 0;
    c.x->nuses = 1;
    c.cond->nuses = 1;
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    hop_graph_free(c.g);
}

static void
test_verify_rejects_inconsistent_use_lists_and_bad_getitems(void **state)
{
    (void)state;
    cond_graph c = build_cond_graph();
    c.x->nuses = 2;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: the use list of x has 1 records but nuses is 2");
    c.x->nuses = 1;
    hop_use *u = c.x->uses;
    c.x->uses = NULL;
    c.x->nuses = 0;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: x is used by 1 argument slot but has 0 use records");
    c.x->uses = u;
    c.x->nuses = 1;

    c.item->args[1].u.i = 1;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: getitem getitem reads index 1 of cond, which has "
                             "1 output");
    c.item->args[1].u.i = 0;
    const hop_value_info *item_meta = c.item->meta;
    hop_value_info f64 = *item_meta;
    f64.meta.dtype = HOP_F64;
    c.item->meta = &f64;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: getitem getitem has other metadata than output 0 "
                             "of cond");
    c.item->meta = item_meta;

    c.g->nnodes++;
    assert_int_equal(hop_graph_verify(c.g), HOP_VERIFY);
    assert_error(HOP_VERIFY, "verify: forward: the node list holds 5 nodes but nnodes is 6");
    c.g->nnodes--;
    assert_int_equal(hop_graph_verify(c.g), HOP_OK);
    hop_graph_free(c.g);
}

/* ------------------------------------------------------------ OOM sweep */

/* Builds forward with a cond over two subgraphs, verifies it and DCEs it. */
static hop_status
build_all(long *nodes)
{
    hop_status st = HOP_NOMEM;
    hop_shape_env *e = hop_shape_env_new();
    hop_graph *g = NULL, *t = NULL, *f = NULL;
    if (e == NULL)
        return hop_error_code();
    const hop_expr *s = hop_shape_env_size_symbol(e, 5, true, true);
    const hop_expr *four = hop_sym_const(e, 4);
    if (s == NULL || four == NULL)
        goto fail;
    hop_value_info xv = {.kind = HOP_VALUE_TENSOR, .meta = {HOP_F32, 2, {s, four}}};
    hop_value_info sv = {.kind = HOP_VALUE_SYM, .sym = s};
    g = hop_graph_new(e, "forward");
    t = hop_graph_new(e, "cond_true_0");
    f = hop_graph_new(e, "cond_false_0");
    if (!g || !t || !f)
        goto fail;
    hop_graph *branches[] = {t, f};
    for (int i = 0; i < 2; i++) {
        hop_graph *b = branches[i];
        hop_node *bs = hop_graph_placeholder(b, "s0", &sv);
        hop_node *bx = bs ? hop_graph_placeholder(b, "x", &xv) : NULL;
        hop_arg a[] = {hop_arg_node(bx)};
        hop_node *r = bx ? hop_graph_call_op(b, i ? HOP_OP_cos : HOP_OP_sin, a, 1) : NULL;
        hop_arg rv[] = {hop_arg_node(r), hop_arg_node(bs)};
        if (r == NULL || hop_graph_output(b, rv, 2) == NULL)
            goto fail;
    }
    hop_node *ps = hop_graph_placeholder(g, "s0", &sv);
    hop_node *px = ps ? hop_graph_placeholder(g, "x", &xv) : NULL;
    if (px == NULL)
        goto fail;
    if (hop_graph_add_subgraph(g, t) != HOP_OK)
        goto fail;
    t = NULL;
    if (hop_graph_add_subgraph(g, f) != HOP_OK)
        goto fail;
    f = NULL;
    hop_arg sargs[] = {hop_arg_node(px), hop_arg_none(), hop_arg_bool(false)};
    hop_node *sum = hop_graph_call_op(g, HOP_OP_sum, sargs, 3);
    hop_arg gargs[] = {hop_arg_node(sum), hop_arg_int(0)};
    hop_node *gt = sum ? hop_graph_call_op(g, HOP_OP_gt, gargs, 2) : NULL;
    if (gt == NULL)
        goto fail;
    hop_arg operands[] = {hop_arg_node(ps), hop_arg_node(px)};
    hop_arg cargs[] = {hop_arg_node(gt), hop_arg_graph(g->subgraphs[0]),
                       hop_arg_graph(g->subgraphs[1]), hop_arg_list(operands, 2)};
    hop_value_info outs[] = {xv, sv};
    hop_node *cond = hop_graph_call_hop(g, class_named("cond"), cargs, 4, outs, 2);
    hop_node *item = cond ? hop_graph_getitem(g, cond, 0) : NULL;
    hop_node *dead = item ? hop_graph_getitem(g, cond, 1) : NULL;
    hop_arg rv[] = {hop_arg_node(item)};
    if (dead == NULL || hop_graph_output(g, rv, 1) == NULL)
        goto fail;
    if ((st = hop_graph_verify(g)) != HOP_OK)
        goto fail;
    if (hop_graph_dce(g) != 1) {
        st = hop_error(HOP_INVALID, "dce removed the wrong nodes");
        goto fail;
    }
    *nodes = (long)g->nnodes;
    st = HOP_OK;
fail:
    if (st != HOP_OK)
        st = hop_error_code();
    hop_graph_free(t);
    hop_graph_free(f);
    hop_graph_free(g);
    hop_shape_env_free(e);
    return st;
}

/* A node does not store what it calls (issue #30): hop_node_target derives
 * it from the kind, the op, the class or the name, and a placeholder's
 * follows a rename; a foreign call keeps a copy of its kernel's name. */
static void
test_node_target_is_derived_and_a_foreign_kernel_name_is_copied(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, s0, NULL));
    assert_string_equal(hop_node_target(x), "x");
    assert_int_equal(hop_graph_rename_node(g, x, "inp"), HOP_OK);
    assert_string_equal(hop_node_target(x), "inp");
    hop_node *e = op1(g, HOP_OP_exp, x);
    assert_string_equal(hop_node_target(e), "exp");
    char kernel[] = "saxpy";
    hop_arg arg = hop_arg_node(e);
    hop_value_info out = T(HOP_F32, 1, s0, NULL);
    hop_node *f = hop_graph_call_foreign(g, kernel, &arg, 1, &out, 1, HOP_NODE_SIDE_EFFECTS);
    assert_non_null(f);
    kernel[0] = 'X'; /* the node's is a copy */
    assert_string_equal(hop_node_target(f), "saxpy");
    assert_string_equal(f->name, "saxpy");
    assert_int_equal(f->flags, HOP_NODE_SIDE_EFFECTS);
    assert_int_equal(f->op, HOP_OP_COUNT);
    assert_int_equal(f->kind, HOP_NODE_CALL_FOREIGN);
    assert_ptr_equal(f->args[0].u.node, e);
    assert_string_equal(hop_node_target(ret(g, e)), "output");
    assert_null(hop_node_target(NULL));
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* Counts are 32 bits in the node: a builder refuses more arguments or
 * outputs with HOP_INVALID before reading them, and the graph is unchanged. */
static void
test_more_than_uint32_arguments_or_outputs_is_invalid(void **state)
{
    (void)state;
    if (sizeof(size_t) <= sizeof(uint32_t))
        skip();
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, s0, NULL));
    hop_arg arg = hop_arg_node(x);
    size_t huge = (size_t)UINT32_MAX + 1;
    assert_null(hop_graph_output(g, &arg, huge));
    assert_error(HOP_INVALID, "output: 4294967296 arguments (at most 4294967295)");
    hop_value_info out = T(HOP_F32, 1, s0, NULL);
    assert_null(hop_graph_call_foreign(g, "k", &arg, 1, &out, huge, 0));
    assert_error(HOP_INVALID, "call_foreign k: 4294967296 outputs (at most 4294967295)");
    assert_int_equal(g->nnodes, 1);
    assert_null(g->output);
    hop_graph_free(g);
}

/* Metadata is shared: nodes with equal values point at one graph-owned
 * copy, whatever the caller's struct does afterwards (issue #7). */
static void
test_nodes_with_equal_metadata_share_one_graph_owned_copy(void **state)
{
    (void)state;
    if (sizeof(void *) == 8)
        assert_int_equal(sizeof(hop_node), 96);
    hop_graph *g = hop_graph_new(env, "forward");
    hop_value_info v = T(HOP_F32, 2, s0, K(4));
    hop_node *x = ph(g, "x", v);
    v.meta.dtype = HOP_I64; /* the caller's struct is not the node's */
    assert_int_equal(x->meta->meta.dtype, HOP_F32);
    hop_node *y = ph(g, "y", T(HOP_F32, 2, s0, K(4)));
    assert_ptr_equal(y->meta, x->meta);
    hop_node *sum = op2(g, HOP_OP_add, x, y), *neg = op1(g, HOP_OP_neg, sum);
    assert_ptr_equal(sum->meta, x->meta);
    assert_ptr_equal(neg->meta, x->meta);
    hop_node *i = ph(g, "i", v);
    assert_true(i->meta != x->meta);
    assert_int_equal(i->meta->meta.dtype, HOP_I64);
    hop_node *n = ph(g, "n", (hop_value_info){.kind = HOP_VALUE_SYM, .sym = s0});
    assert_int_equal(n->meta->kind, HOP_VALUE_SYM);
    assert_ptr_equal(n->meta->sym, s0);

    /* Past the short list the metadata is indexed: 12 distinct shapes, each
     * found again by a second placeholder. */
    hop_node *first[12];
    for (int k = 0; k < 12; k++) {
        char name[16];
        snprintf(name, sizeof name, "a%d", k);
        first[k] = ph(g, name, T(HOP_F64, 1, K(k + 2), NULL));
    }
    for (int k = 0; k < 12; k++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", k);
        hop_node *again = ph(g, name, T(HOP_F64, 1, K(k + 2), NULL));
        assert_ptr_equal(again->meta, first[k]->meta);
        assert_int_equal(again->meta->meta.rank, 1);
        assert_ptr_equal(again->meta->meta.sizes[0], K(k + 2));
    }
    hop_node *out = ret(g, neg);
    assert_int_equal(out->meta->kind, HOP_VALUE_NONE);
    char *code = hop_graph_code(g);
    assert_non_null(strstr(code, "    neg: \"f32[s0, 4]\" = neg(add)\n"));
    hop_free(code);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* The name table grows, frees erased names at once and lets a rename that
 * runs out of memory keep the old name. */
static void
test_names_survive_table_growth_erase_and_a_failed_rename(void **state)
{
    (void)state;
    hop_graph *g = hop_graph_new(env, "forward");
    hop_node *x = ph(g, "x", T(HOP_F32, 1, K(4), NULL));
    hop_node *n[100];
    for (int i = 0; i < 100; i++)
        n[i] = op1(g, HOP_OP_neg, x);
    for (int i = 0; i < 100; i++) {
        char want[16];
        snprintf(want, sizeof want, i ? "neg_%d" : "neg", i);
        assert_string_equal(n[i]->name, want);
        assert_ptr_equal(hop_graph_find_node(g, want), n[i]);
    }
    assert_int_equal(hop_graph_erase_node(g, n[50]), HOP_OK);
    assert_null(hop_graph_find_node(g, "neg_50"));
    assert_string_equal(n[50]->name, "neg_50"); /* still readable */
    assert_null(n[50]->graph);
    hop_node *again = op1(g, HOP_OP_neg, x);
    assert_string_equal(again->name, "neg_50");
    assert_ptr_equal(hop_graph_find_node(g, "neg_50"), again);
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg_100");

    char longname[600]; /* long enough to need memory of its own */
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    long k;
    for (k = 1;; k++) {
        hop_alloc_fail_at(k);
        hop_status st = hop_graph_rename_node(g, n[7], longname);
        hop_alloc_fail_at(0);
        if (st == HOP_OK)
            break;
        assert_int_equal(st, HOP_NOMEM);
        assert_string_equal(n[7]->name, "neg_7");
        assert_ptr_equal(hop_graph_find_node(g, "neg_7"), n[7]);
        assert_null(hop_graph_find_node(g, longname));
    }
    assert_true(k > 1);
    assert_ptr_equal(hop_graph_find_node(g, longname), n[7]);
    assert_null(hop_graph_find_node(g, "neg_7"));
    assert_string_equal(op1(g, HOP_OP_neg, x)->name, "neg_7");
    ret(g, x);
    assert_int_equal(hop_graph_verify(g), HOP_OK);
    hop_graph_free(g);
}

/* item makes an unbacked symbol during inference; running out of memory
 * for its metadata afterwards takes the symbol back, and its number.
 * Whether item needs memory at all depends on the room left in the graph's
 * arena, so the graph gets 0, 1, 2, ... filler placeholders until an
 * allocation item makes can fail. */
static void
test_out_of_memory_after_inference_takes_back_new_symbols(void **state)
{
    (void)state;
    long failures = 0;
    for (int fill = 0; failures == 0; fill++) {
        assert_true(fill < 64);
        hop_graph *g = hop_graph_new(env, "forward");
        hop_node *x = ph(g, "x", T(HOP_I64, 1, K(1), NULL));
        for (int i = 0; i < fill; i++)
            ph(g, "filler", T(HOP_I64, 1, K(1), NULL));
        size_t nsyms = hop_shape_env_nsymbols(env), nguards = hop_shape_env_nguards(env);
        hop_node *item = NULL;
        for (long k = 1;; k++) {
            hop_alloc_fail_at(k);
            item = op1_or_null(g, HOP_OP_item, x);
            hop_alloc_fail_at(0);
            if (item)
                break;
            failures++;
            assert_int_equal(hop_error_code(), HOP_NOMEM);
            assert_int_equal(hop_shape_env_nsymbols(env), nsyms);
            assert_int_equal(hop_shape_env_nguards(env), nguards);
            assert_int_equal(g->nnodes, 1 + (size_t)fill);
        }
        assert_int_equal(hop_shape_env_nsymbols(env), nsyms + 1);
        char buf[16], want[16];
        hop_expr_print(item->meta->sym, buf, sizeof buf);
        snprintf(want, sizeof want, "u%d", fill); /* one item per graph so far */
        assert_string_equal(buf, want);
        hop_graph_free(g);
    }
}

static void
test_every_allocation_failure_while_building_is_nomem_and_leaks_nothing(void **state)
{
    (void)state;
    long live = hop_alloc_live();
    long k, nodes = 0;
    for (k = 1;; k++) {
        hop_alloc_fail_at(k);
        hop_status st = build_all(&nodes);
        hop_alloc_fail_at(0);
        assert_int_equal(hop_alloc_live(), live);
        if (st == HOP_OK)
            break;
        assert_string_equal(hop_status_name(st), "HOP_NOMEM");
    }
    assert_true(k > 10);
    assert_int_equal(nodes, 7);
}

int
main(void)
{
#define T_(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(test_new_graph_is_empty_and_named_as_an_identifier),
        T_(test_placeholders_stay_first_and_insert_at_their_position),
        T_(test_names_are_uniquified_with_the_smallest_free_suffix),
        T_(test_a_base_name_freed_is_the_next_name_again),
        T_(test_counter_names_skip_every_name_taken_another_way),
        T_(test_many_uniquified_bases_each_keep_the_smallest_free_suffix),
        T_(test_a_sharing_graph_outlives_the_graph_it_shares_with),
        T_(test_names_that_are_not_identifiers_are_sanitised),
        T_(test_call_op_records_op_target_and_inferred_meta),
        T_(test_call_op_copies_arguments_and_folds_constant_syms_to_ints),
        T_(test_use_lists_hold_one_record_per_argument_slot),
        T_(test_failed_call_leaves_graph_unchanged_and_its_name_unused),
        T_(test_out_of_memory_in_a_call_leaves_graph_unchanged),
        T_(test_call_op_rejects_bad_operands_with_misuse_or_invalid),
        T_(test_call_hop_copies_outs_and_getitem_reads_them),
        T_(test_node_graphs_are_the_bodies_after_the_leads),
        T_(test_output_is_last_and_later_nodes_go_before_it),
        T_(test_subgraph_ownership_is_exclusive_and_names_are_unique),
        T_(test_many_subgraphs_stay_findable_through_removals),
        T_(test_removed_subgraph_belongs_to_the_caller_again),
        T_(test_erase_refuses_used_nodes_and_unlinks_uses),
        T_(test_dce_removes_dead_chains_and_unreferenced_subgraphs),
        T_(test_dce_keeps_unused_checks_that_eager_would_raise),
        T_(test_verify_accepts_graphs_the_builders_make),
        T_(test_verify_rejects_use_before_definition_in_a_subgraph),
        T_(test_verify_rejects_a_value_from_another_graph),
        T_(test_verify_rejects_a_subgraph_argument_the_graph_does_not_own),
        T_(test_verify_changed_skips_a_graph_verified_and_unchanged),
        T_(test_verify_changed_trusts_a_graph_of_checked_appends_only),
        T_(test_verify_changed_trusts_a_hop_call_checked_when_appended),
        T_(test_a_change_after_verification_is_verified_again),
        T_(test_verify_changed_skips_the_subgraphs_it_can_vouch_for),
        T_(test_tree_nodes_counts_every_graph_under_a_graph),
        T_(test_verifying_a_subgraph_alone_clears_the_enclosing_stamp),
        T_(test_verify_checks_call_hop_signatures_against_subgraphs),
        T_(test_verify_rejects_missing_misplaced_and_duplicate_outputs),
        T_(test_verify_rejects_duplicate_names_and_misplaced_placeholders),
        T_(test_verify_rejects_inconsistent_use_lists_and_bad_getitems),
        T_(test_verify_reports_use_list_problems_in_program_order_after_node_checks),
        T_(test_node_target_is_derived_and_a_foreign_kernel_name_is_copied),
        T_(test_more_than_uint32_arguments_or_outputs_is_invalid),
        T_(test_nodes_with_equal_metadata_share_one_graph_owned_copy),
        T_(test_names_survive_table_growth_erase_and_a_failed_rename),
        T_(test_out_of_memory_after_inference_takes_back_new_symbols),
        T_(test_every_allocation_failure_while_building_is_nomem_and_leaks_nothing),
    };
#undef T_
    return cmocka_run_group_tests(tests, NULL, NULL);
}
