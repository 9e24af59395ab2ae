/*
 * tests/c/test_saved.c - the saved format (hop/saved.h) and lifting
 * provenance (hop/lifts.h).
 *
 * One program covers what the format must keep: a dynamic root input, a
 * captured tensor (a constant), a cond whose branches give different sizes
 * (a fresh unbacked symbol bound in the root), a map body inside a branch
 * that closes over the captured tensor and over the size n = x.size(0), a
 * branch-local guard, and the ShapeEnv's guards:
 *
 *     def f(x):                                 # x: f32[s0, 4]; w: f32[4] captured
 *         n = x.size(0)
 *         def pos(): return map(lambda r: r * w + n, x)     # lifted: w, s0 (twice)
 *         def neg(): return x[1:]                           # another size: u0
 *         return cond(x.sum() > 0, pos, neg)
 *
 * Saved and loaded, it must print identically (code, table, DOT, the lift
 * report) and its plan must compute the same results; every flipped byte and
 * every truncation is HOP_FORMAT; random mutations with a fixed-up checksum
 * (so that they reach the parser) are errors, never crashes (the sanitizer
 * pass runs this under ASan); every allocation failure while saving or
 * loading is HOP_NOMEM and leaks nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_plan_util.h"
#include "hop/lifts.h"
#include "hop/saved.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static float w_data[4] = {0.5f, -1.0f, 2.0f, 0.25f};
static const hop_saved_tensor w_value = {HOP_F32, 1, {4}, w_data};

typedef struct prog {
    hop_node *x, *w, *n;
} prog;

static hop_status
push(hop_values *out, hop_node *n)
{
    return n ? hop_values_push(out, n) : hop_error_code();
}

static hop_status
row_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    prog *p = ud;
    (void)nin;
    hop_node *m = OP(t, HOP_OP_mul, N(in[0]), N(p->w));
    return push(out, m ? OP(t, HOP_OP_add, N(m), N(p->n)) : NULL);
}

static hop_status
pos_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    prog *p = ud;
    (void)in;
    (void)nin;
    hop_values r = {0};
    hop_arg xs = N(p->x);
    hop_status st = hop_map(hop_output_graph_of(t), (hop_body){row_body, p}, &xs, 1, NULL, 0, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
neg_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    prog *p = ud;
    (void)in;
    (void)nin;
    return push(out, OP(t, HOP_OP_slice, N(p->x), hop_arg_int(0), hop_arg_int(1), hop_arg_none(),
                        hop_arg_int(1)));
}

/* The program, traced; NULL on an error (allocation sweeps). */
static hop_output_graph *
trace_program(void)
{
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return NULL;
    prog p;
    bool dyn[2] = {true, false};
    int64_t sizes[2] = {5, 4};
    hop_tracer *root = hop_output_graph_root(og);
    hop_values r = {0};
    hop_node *s, *gt, *y;
    if ((p.x = hop_output_graph_add_input_dims(og, "x", HOP_F32, 2, sizes, dyn)) == NULL ||
        (p.w = hop_output_graph_capture(og, &w_value, "w", HOP_F32, 1, (int64_t[]){4}, false)) ==
            NULL ||
        (p.n = OP(root, HOP_OP_sym_size, N(p.x), hop_arg_int(0))) == NULL ||
        (s = OP(root, HOP_OP_sum, N(p.x), hop_arg_none(), hop_arg_bool(false))) == NULL ||
        (gt = OP(root, HOP_OP_gt, N(s), hop_arg_int(0))) == NULL ||
        hop_cond(og, N(gt), (hop_body){pos_body, &p}, (hop_body){neg_body, &p}, NULL, 0, &r) !=
            HOP_OK ||
        (y = OP(root, HOP_OP_add, N(r.items[0]), hop_arg_float(1.5))) == NULL ||
        hop_tracer_output(root, (hop_arg[]){N(y)}, 1) == NULL) {
        hop_values_clear(&r);
        hop_output_graph_free(og);
        return NULL;
    }
    hop_values_clear(&r);
    return og;
}

static const hop_load_options load_opts = {.find_hop = hop_find_hop};

static void *
save_program(hop_output_graph *og, size_t *size)
{
    hop_save_options so = {.captures = &w_value, .ncaptures = 1};
    void *data = NULL;
    assert_int_equal(hop_output_graph_save(og, &so, &data, size), HOP_OK);
    return data;
}

static void
assert_same_text(char *a, char *b)
{
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0)
        fprintf(stderr, "--- saved:\n%s--- loaded:\n%s", a, b);
    assert_string_equal(a, b);
    hop_free(a);
    hop_free(b);
}

/* Runs a plan of og on x (and w, captured); the one result. */
static hop_tensor *
run(hop_output_graph *og, hop_tensor *x, const hop_saved_tensor *w)
{
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    hop_tensor *wt = hop_tensor_from_data(w->dtype, w->rank, w->sizes, w->data);
    hop_tensor *in[2] = {x, wt}, *out = NULL;
    assert_int_equal(hop_plan_run(plan, in, 2, &out, 1), HOP_OK);
    hop_tensor_release(wt);
    hop_plan_free(plan);
    return out;
}

static void
test_loaded_program_prints_and_runs_as_saved(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    assert_non_null(og);
    size_t size;
    void *data = save_program(og, &size);
    hop_saved *s = hop_output_graph_load(data, size, &load_opts);
    if (s == NULL)
        fprintf(stderr, "%s\n", hop_error_message());
    assert_non_null(s);
    assert_int_equal(s->ncaptures, 1);
    assert_memory_equal(s->captures[0].data, w_data, sizeof w_data);
    const hop_graph *a = hop_output_graph_root_graph(og), *b = hop_output_graph_root_graph(s->og);
    assert_same_text(hop_graph_code(a), hop_graph_code(b));
    assert_same_text(hop_graph_table(a), hop_graph_table(b));
    assert_same_text(hop_graph_dot(a), hop_graph_dot(b));
    assert_same_text(hop_output_graph_explain_lifts(og), hop_output_graph_explain_lifts(s->og));
    assert_int_equal(hop_shape_env_nguards(hop_output_graph_env(s->og)),
                     hop_shape_env_nguards(hop_output_graph_env(og)));
    /* The branch-local guard stays its branch's, and the root inputs keep
     * their sources. */
    assert_int_equal(hop_output_graph_ninputs(s->og), hop_output_graph_ninputs(og));
    for (size_t i = 0; i < hop_output_graph_ninputs(og); i++) {
        hop_source sa, sb;
        hop_node *na = hop_output_graph_input(og, i, &sa);
        hop_node *nb = hop_output_graph_input(s->og, i, &sb);
        assert_string_equal(na->name, nb->name);
        assert_int_equal(sa.kind, sb.kind);
        if (sa.kind == HOP_SOURCE_CAPTURE)
            assert_ptr_equal(sb.identity, &s->captures[0]);
    }
    /* Saving the loaded program gives the same bytes. */
    size_t size2;
    hop_save_options so = {.captures = s->captures, .ncaptures = 1};
    void *data2 = NULL;
    assert_int_equal(hop_output_graph_save(s->og, &so, &data2, &size2), HOP_OK);
    assert_int_equal(size2, size);
    assert_memory_equal(data2, data, size);
    hop_free(data2);
    /* Both branches, several sizes: the same results. */
    for (int64_t rows = 2; rows < 9; rows++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            hop_tensor *x = rand_tensor(HOP_F32, 2, (int64_t[]){rows, 4});
            for (int64_t i = 0; i < rows * 4; i++)
                ((float *)x->data)[i] = sign * (float)(i % 3 + 1);
            hop_tensor *ya = run(og, x, &w_value), *yb = run(s->og, x, &s->captures[0]);
            assert_identical(ya, yb);
            hop_tensor_release(ya);
            hop_tensor_release(yb);
            hop_tensor_release(x);
        }
    }
    hop_saved_free(s);
    hop_free(data);
    hop_output_graph_free(og);
}

/* ------------------------------------------------ loops and switch, nested
 *
 *     def g(x, n, k):                       # x: f32[s0, 4]; n, k: i64[]; w captured
 *         def step(i, v):                   # fori_loop: i is made by the HOP
 *             return switch(k.item(), [lambda: v * w,
 *                                      lambda: v + i,
 *                                      lambda: wrap(lambda: v - w)], v)
 *         v = fori_loop(0, 3, step, x)
 *         _, c = while_loop(lambda j, c: j < n,
 *                           lambda j, c: (j + 1, map(lambda r: r * 0.5 + w, c)), (0, v))
 *         carry, ys = scan(lambda cr, r: (cr + r * w, (cr * r).sum()), c[0] * 0, c)
 *         return associative_scan(lambda a, b: a + b, ys, ys), carry
 *
 * Every loop HOP and switch, bodies nested three deep, closures over the
 * captured w, over arguments (n, k) and over a made input (i), a carry
 * whose size is a symbol: the capture tables must skip the made input and
 * tell while_loop's merged inputs apart.
 */
typedef struct loops {
    hop_node *x, *n, *k, *w;
} loops;

static hop_status
branch_mul(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    return push(out, OP(t, HOP_OP_mul, N(in[0]), N(((loops *)ud)->w)));
}

/* ud: the fori_loop body's index i (a value of the enclosing body). */
static hop_status
branch_add_index(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    return push(out, OP(t, HOP_OP_add, N(in[0]), N(ud)));
}

static hop_status
wrapped_sub(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    return push(out, OP(t, HOP_OP_sub, N(in[0]), N(((loops *)ud)->w)));
}

static hop_status
branch_wrap(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    hop_values r = {0};
    hop_arg ops[] = {N(in[0])};
    hop_arg args[] = {hop_arg_list(ops, 1)};
    hop_body body = {wrapped_sub, ud};
    (void)nin;
    hop_status st = hop_apply(hop_output_graph_of(t), &hop_wrap_class, args, 1, &body, 1, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
fori_step(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    loops *p = ud;
    (void)nin;
    hop_node *index = OP(t, HOP_OP_item, N(p->k));
    if (index == NULL)
        return hop_error_code();
    hop_values r = {0};
    hop_arg ops[] = {N(in[1])};
    hop_arg args[] = {N(index), hop_arg_list(ops, 1)};
    hop_body bodies[] = {{branch_mul, p}, {branch_add_index, in[0]}, {branch_wrap, p}};
    hop_status st = hop_apply(hop_output_graph_of(t), &hop_switch_class, args, 2, bodies, 3, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
while_cond(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    return push(out, OP(t, HOP_OP_lt, N(in[0]), N(((loops *)ud)->n)));
}

static hop_status
map_row(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    hop_node *h = OP(t, HOP_OP_mul, N(in[0]), hop_arg_float(0.5));
    return push(out, h ? OP(t, HOP_OP_add, N(h), N(((loops *)ud)->w)) : NULL);
}

static hop_status
while_body(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    hop_status st = push(out, OP(t, HOP_OP_add, N(in[0]), hop_arg_int(1)));
    hop_values r = {0};
    hop_arg xs = N(in[1]);
    if (st == HOP_OK)
        st = hop_map(hop_output_graph_of(t), (hop_body){map_row, ud}, &xs, 1, NULL, 0, &r);
    if (st == HOP_OK)
        st = push(out, r.items[0]);
    hop_values_clear(&r);
    return st;
}

static hop_status
scan_step(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)nin;
    hop_node *rw = OP(t, HOP_OP_mul, N(in[1]), N(((loops *)ud)->w));
    hop_status st = push(out, rw ? OP(t, HOP_OP_add, N(in[0]), N(rw)) : NULL);
    hop_node *prod = st == HOP_OK ? OP(t, HOP_OP_mul, N(in[0]), N(in[1])) : NULL;
    return st == HOP_OK
               ? push(out,
                      prod ? OP(t, HOP_OP_sum, N(prod), hop_arg_none(), hop_arg_bool(false)) : NULL)
               : st;
}

static hop_status
combine_add(hop_tracer *t, void *ud, hop_node *const *in, size_t nin, hop_values *out)
{
    (void)ud;
    (void)nin;
    return push(out, OP(t, HOP_OP_add, N(in[0]), N(in[1])));
}

/* g, traced; NULL on an error. */
static hop_output_graph *
trace_loops(void)
{
    hop_output_graph *og = hop_output_graph_new();
    if (og == NULL)
        return NULL;
    loops p;
    bool dyn[2] = {true, false};
    int64_t sizes[2] = {5, 4};
    hop_tracer *root = hop_output_graph_root(og);
    hop_values v = {0}, wl = {0}, sc = {0}, as = {0};
    hop_node *zero, *row0, *init;
    hop_status st = HOP_NOMEM;
    if ((p.x = hop_output_graph_add_input_dims(og, "x", HOP_F32, 2, sizes, dyn)) == NULL ||
        (p.n = hop_output_graph_add_input(og, "n", HOP_I64, 0, NULL, false)) == NULL ||
        (p.k = hop_output_graph_add_input(og, "k", HOP_I64, 0, NULL, false)) == NULL ||
        (p.w = hop_output_graph_capture(og, &w_value, "w", HOP_F32, 1, (int64_t[]){4}, false)) ==
            NULL)
        goto done;
    hop_arg carry = N(p.x);
    hop_arg fori_args[] = {hop_arg_int(0), hop_arg_int(3), hop_arg_list(&carry, 1)};
    hop_body step = {fori_step, &p};
    if ((st = hop_apply(og, &hop_fori_loop_class, fori_args, 3, &step, 1, &v)) != HOP_OK)
        goto done;
    st = HOP_NOMEM;
    if ((zero = OP(root, HOP_OP_full, hop_arg_list(NULL, 0), hop_arg_int(0),
                   hop_arg_dtype(HOP_I64))) == NULL)
        goto done;
    hop_arg carries[] = {N(zero), N(v.items[0])};
    hop_arg while_args[] = {hop_arg_list(carries, 2)};
    hop_body while_bodies[] = {{while_cond, &p}, {while_body, &p}};
    if ((st = hop_apply(og, &hop_while_loop_class, while_args, 1, while_bodies, 2, &wl)) != HOP_OK)
        goto done;
    st = HOP_NOMEM;
    if ((row0 = OP(root, HOP_OP_select, N(wl.items[1]), hop_arg_int(0), hop_arg_int(0))) == NULL ||
        (init = OP(root, HOP_OP_mul, N(row0), hop_arg_float(0.0))) == NULL)
        goto done;
    hop_arg scan_init = N(init), scan_xs = N(wl.items[1]);
    hop_arg scan_args[] = {hop_arg_bool(false), hop_arg_int(0), hop_arg_int(-1),
                           hop_arg_list(&scan_init, 1), hop_arg_list(&scan_xs, 1)};
    hop_body scan_body = {scan_step, &p};
    if ((st = hop_apply(og, &hop_scan_class, scan_args, 5, &scan_body, 1, &sc)) != HOP_OK)
        goto done;
    hop_arg ys = N(sc.items[1]);
    hop_arg as_args[] = {hop_arg_int(0), hop_arg_bool(false), hop_arg_list(&ys, 1),
                         hop_arg_list(&ys, 1)};
    hop_body combine = {combine_add, NULL};
    if ((st = hop_apply(og, &hop_associative_scan_class, as_args, 4, &combine, 1, &as)) != HOP_OK)
        goto done;
    st = hop_tracer_output(root, (hop_arg[]){N(as.items[0]), N(sc.items[0])}, 2) ? HOP_OK
                                                                                 : hop_error_code();
done:
    hop_values_clear(&v);
    hop_values_clear(&wl);
    hop_values_clear(&sc);
    hop_values_clear(&as);
    if (st != HOP_OK) {
        hop_output_graph_free(og);
        return NULL;
    }
    return og;
}

/* g in C on the same inputs: what the plans must compute. */
static void
loops_reference(const float *x, int64_t rows, int64_t n, int64_t k, float *ys, float *carry)
{
    float v[64];
    memcpy(v, x, (size_t)(rows * 4) * sizeof *v);
    int64_t branch = k < 0 ? 0 : k > 2 ? 2 : k;
    for (int64_t i = 0; i < 3; i++)
        for (int64_t e = 0; e < rows * 4; e++)
            v[e] = branch == 0   ? v[e] * w_data[e % 4]
                   : branch == 1 ? v[e] + (float)i
                                 : v[e] - w_data[e % 4];
    for (int64_t j = 0; j < n; j++)
        for (int64_t e = 0; e < rows * 4; e++)
            v[e] = v[e] * 0.5f + w_data[e % 4];
    float cr[4] = {0, 0, 0, 0}, y[16];
    for (int64_t r = 0; r < rows; r++) {
        float s = 0;
        for (int c = 0; c < 4; c++) {
            s += cr[c] * v[r * 4 + c];
            cr[c] += v[r * 4 + c] * w_data[c];
        }
        y[r] = s;
    }
    for (int64_t r = 0; r < rows; r++)
        ys[r] = (r ? ys[r - 1] : 0) + y[r];
    memcpy(carry, cr, sizeof cr);
}

static void
test_loops_and_switch_nested_round_trip(void **state)
{
    (void)state;
    hop_output_graph *og = trace_loops();
    if (og == NULL)
        fprintf(stderr, "%s\n", hop_error_message());
    assert_non_null(og);
    size_t size;
    void *data = save_program(og, &size);
    hop_saved *s = hop_output_graph_load(data, size, &load_opts);
    if (s == NULL)
        fprintf(stderr, "%s\n", hop_error_message());
    assert_non_null(s);
    const hop_graph *a = hop_output_graph_root_graph(og), *b = hop_output_graph_root_graph(s->og);
    char *code = hop_graph_code(a);
    if (getenv("HOP_SHOW"))
        fputs(code, stderr);
    /* Every built-in that loops or switches is in it, nested. */
    const char *calls[] = {"fori_loop(0, 3, fori_loop_body_0, (x,), ",
                           "switch(item, switch_branch_0, switch_branch_1, switch_branch_2, ",
                           "= wrap(wrap_body_0, ",
                           "while_loop(while_loop_cond_0, while_loop_body_0, ",
                           "= map(map_body_0, ",
                           "scan(False, 0, -1, scan_body_0, ",
                           "associative_scan(0, False, associative_scan_combine_0, "};
    for (size_t i = 0; i < LEN(calls); i++)
        if (strstr(code, calls[i]) == NULL)
            fail_msg("no %s in\n%s", calls[i], code);
    hop_free(code);
    assert_same_text(hop_graph_code(a), hop_graph_code(b));
    assert_same_text(hop_graph_table(a), hop_graph_table(b));
    assert_same_text(hop_graph_dot(a), hop_graph_dot(b));
    char *report = hop_output_graph_explain_lifts(og);
    assert_non_null(report);
    if (getenv("HOP_SHOW"))
        fputs(report, stderr);
    /* The made input i is explicit; the branch that adds it lifts it from
     * the loop body; while_loop's cond and body share one signature. */
    assert_null(strstr(report, "fori_loop_body_0.i:"));
    assert_non_null(strstr(report, "switch_branch_1.i_branch1: symbol u0 (input i of graph "
                                   "fori_loop_body_0)\n    lifted by: switch_branch_1\n"
                                   "    brought in by a use of the symbol itself\n"));
    assert_non_null(strstr(report, "switch_branch_1.w: captured tensor w (root input w)\n"
                                   "    lifted by: fori_loop_body_0\n"
                                   "    unused here: passed for switch_branch_0.w, another body "
                                   "of switch\n"));
    assert_non_null(strstr(report, "map_body_0.w: captured tensor w (root input w)\n"
                                   "    lifted by: while_loop_body_0 -> map_body_0\n"));
    assert_non_null(strstr(report, "while_loop_body_0.n_cond_branch: argument n (root input n)\n"
                                   "    lifted by: none (a value of forward itself)\n"
                                   "    unused here: passed for while_loop_cond_0.n_cond_branch, "
                                   "another body of while_loop\n"));
    assert_same_text(report, hop_output_graph_explain_lifts(s->og));
    /* Saving the loaded program gives the same bytes. */
    size_t size2;
    hop_save_options so = {.captures = s->captures, .ncaptures = 1};
    void *data2 = NULL;
    assert_int_equal(hop_output_graph_save(s->og, &so, &data2, &size2), HOP_OK);
    assert_int_equal(size2, size);
    assert_memory_equal(data2, data, size);
    hop_free(data2);
    /* The same results as the traced program and as C, every branch. */
    hop_plan *pa = hop_lower(og, NULL), *pb = hop_lower(s->og, NULL);
    assert_non_null(pa);
    assert_non_null(pb);
    hop_tensor *wt = hop_tensor_from_data(HOP_F32, 1, (int64_t[]){4}, w_data);
    for (int64_t rows = 2; rows <= 6; rows += 2) {
        for (int64_t k = -1; k <= 3; k++) {
            for (int64_t n = 0; n <= 2; n++) {
                hop_tensor *x = rand_tensor(HOP_F32, 2, (int64_t[]){rows, 4});
                hop_tensor *nt = hop_tensor_from_data(HOP_I64, 0, NULL, &n);
                hop_tensor *kt = hop_tensor_from_data(HOP_I64, 0, NULL, &k);
                hop_tensor *in[] = {x, nt, kt, wt}, *ya[2], *yb[2];
                assert_int_equal(hop_plan_run(pa, in, 4, ya, 2), HOP_OK);
                assert_int_equal(hop_plan_run(pb, in, 4, yb, 2), HOP_OK);
                float ys[16], carry[4];
                loops_reference(x->data, rows, n, k, ys, carry);

                for (int o = 0; o < 2; o++)
                    assert_identical(ya[o], yb[o]);
                for (int64_t r = 0; r < rows; r++)
                    if (fabsf(((float *)ya[0]->data)[r] - ys[r]) > 1e-3f * (1 + fabsf(ys[r])))
                        fail_msg("rows %lld k %lld n %lld: ys[%lld] %g, want %g", (long long)rows,
                                 (long long)k, (long long)n, (long long)r,
                                 ((float *)ya[0]->data)[r], ys[r]);
                for (int c = 0; c < 4; c++)
                    assert_float_equal(((float *)ya[1]->data)[c], carry[c],
                                       1e-4 * (1 + fabsf(carry[c])));
                release_all(ya, 2);
                release_all(yb, 2);
                hop_tensor_release(x);
                hop_tensor_release(nt);
                hop_tensor_release(kt);
            }
        }
    }
    hop_tensor_release(wt);
    hop_plan_free(pa);
    hop_plan_free(pb);
    hop_saved_free(s);
    hop_free(data);
    hop_output_graph_free(og);
}

static void
test_lifts_report_origin_chain_cause_and_sharing(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    assert_non_null(og);
    hop_lift_info *li;
    size_t n;
    assert_int_equal(hop_output_graph_lifts(og, &li, &n), HOP_OK);
    const hop_lift_info *w_in_map = NULL, *s0_in_map = NULL, *x_in_neg = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *g = li[i].graph->name, *ph = li[i].placeholder->name;
        if (strcmp(g, "map_body_0") == 0 && strcmp(ph, "w") == 0)
            w_in_map = &li[i];
        if (strcmp(g, "map_body_0") == 0 && strcmp(ph, "s0") == 0)
            s0_in_map = &li[i];
        if (strcmp(g, "cond_false_0") == 0 && strcmp(ph, "x") == 0)
            x_in_neg = &li[i];
    }
    assert_non_null(w_in_map);
    assert_int_equal(w_in_map->origin_kind, HOP_LIFT_CAPTURE);
    assert_string_equal(w_in_map->origin->name, "w");
    assert_int_equal(w_in_map->nlifted_by, 2); /* cond_true_0, then map_body_0 */
    assert_string_equal(w_in_map->lifted_by[0]->name, "cond_true_0");
    assert_string_equal(w_in_map->lifted_by[1]->name, "map_body_0");
    assert_non_null(s0_in_map);
    assert_int_equal(s0_in_map->origin_kind, HOP_LIFT_SYMBOL);
    assert_null(s0_in_map->shape_of); /* n = x.size(0) used itself */
    assert_non_null(x_in_neg);
    assert_int_equal(x_in_neg->origin_kind, HOP_LIFT_ARG);
    assert_non_null(x_in_neg->shared_with); /* both branches use x: one input */
    assert_string_equal(x_in_neg->shared_with->graph->name, "cond_true_0");
    hop_free(li);
    char *text = hop_output_graph_explain_lifts(og);
    assert_non_null(text);
    if (getenv("HOP_SHOW"))
        fputs(text, stderr);
    assert_non_null(strstr(text, "map_body_0.w: captured tensor w (root input w)\n"
                                 "    lifted by: cond_true_0 -> map_body_0\n"));
    assert_non_null(strstr(text, "cond_false_0.s0: symbol s0 (size 0 of root input x)\n"
                                 "    lifted by: cond_false_0\n"
                                 "    brought in by the shape of x (forward)\n"
                                 "    deduplicated: cond_true_0.s0 gets the same value (one input "
                                 "of the call)\n"));
    /* cond_false_0's tracer did not lift it: the call passes forward's own
     * w for cond_true_0's placeholder at the same position. */
    assert_non_null(strstr(text, "cond_false_0.w_true_branch: captured tensor w (root input w)\n"
                                 "    lifted by: none (a value of forward itself)\n"
                                 "    unused here: passed for cond_true_0.w_true_branch, another "
                                 "body of cond\n"));
    hop_free(text);
    hop_output_graph_free(og);
}

static void
test_every_flipped_byte_and_truncation_is_a_format_error(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    size_t size;
    unsigned char *data = save_program(og, &size);
    unsigned char *copy = malloc(size);
    assert_non_null(copy);
    /* Under valgrind (HOP_TEST_SCALE) every 7th position: the same code
     * paths, a tenth of the time. */
    size_t step = getenv("HOP_TEST_SCALE") ? 7 : 1;
    for (size_t i = 0; i < size; i += step) {
        memcpy(copy, data, size);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        assert_null(hop_output_graph_load(copy, size, &load_opts));
        assert_int_equal(hop_error_code(), HOP_FORMAT);
    }
    for (size_t len = 0; len < size; len += step) {
        assert_null(hop_output_graph_load(data, len, &load_opts));
        assert_int_equal(hop_error_code(), HOP_FORMAT);
    }
    assert_null(hop_output_graph_load(data, size - 1, &load_opts));
    assert_non_null(strstr(hop_error_message(), "truncated or extended"));
    memcpy(copy, data, size);
    copy[size / 2] ^= 0x10;
    assert_null(hop_output_graph_load(copy, size, &load_opts));
    assert_string_equal(hop_error_message(), "load: checksum mismatch: the file is corrupted");
    free(copy);
    hop_free(data);
    hop_output_graph_free(og);
}

static void
test_hostile_files_with_valid_checksums_fail_cleanly(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    size_t size;
    unsigned char *data = save_program(og, &size);
    /* Every byte of the payload set to a few hostile values. */
    unsigned char *copy = malloc(size + 64);
    assert_non_null(copy);
    const unsigned values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    size_t loaded = 0;
    long base = hop_alloc_live();
    size_t step = getenv("HOP_TEST_SCALE") ? 7 : 1;
    for (size_t i = 24; i + 4 < size; i += step) {
        for (size_t v = 0; v < LEN(values); v++) {
            memcpy(copy, data, size);
            if (copy[i] == values[v])
                continue;
            copy[i] = (unsigned char)values[v];
            fix_checksum(copy, size);
            hop_saved *s = hop_output_graph_load(copy, size, &load_opts);
            if (s == NULL) {
                hop_status code = hop_error_code();
                assert_true(code == HOP_FORMAT || code == HOP_NOT_FOUND);
                assert_non_null(strstr(hop_error_message(), "load: "));
            } else {
                /* Accepted: a program that verifies (a changed constant, say). */
                char *c = hop_graph_code(hop_output_graph_root_graph(s->og));
                assert_non_null(c);
                hop_free(c);
                hop_plan_free(hop_lower(s->og, NULL));
                loaded++;
                hop_saved_free(s);
            }
        }
    }
    assert_int_equal(hop_alloc_live(), base);
    /* Random mutations for a bounded time (HOP_FUZZ_SECONDS, default 2):
     * flipped, inserted and deleted bytes, the checksum fixed up. */
    const char *secs = getenv("HOP_FUZZ_SECONDS");
    double budget = secs ? atof(secs) : getenv("HOP_TEST_SCALE") ? 0.5 : 2.0;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    clock_t start = clock();
    size_t rounds = 0;
    while ((double)(clock() - start) / CLOCKS_PER_SEC < budget) {
        memcpy(copy, data, size);
        size_t len = size;
        int edits = 1 + (int)(seed % 4);
        for (int e = 0; e < edits; e++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            size_t at = 24 + (size_t)(seed >> 8) % (len - 28);
            switch (seed % 3) {
            case 0:
                copy[at] = (unsigned char)(seed >> 40);
                break;
            case 1:
                if (len < size + 60) {
                    memmove(copy + at + 1, copy + at, len - at);
                    copy[at] = (unsigned char)(seed >> 32);
                    len++;
                }
                break;
            default:
                memmove(copy + at, copy + at + 1, len - at - 1);
                len--;
                break;
            }
        }
        fix_checksum(copy, len);
        hop_saved *s = hop_output_graph_load(copy, len, &load_opts);
        if (s == NULL)
            assert_true(hop_error_code() == HOP_FORMAT || hop_error_code() == HOP_NOT_FOUND);
        hop_saved_free(s);
        rounds++;
    }
    assert_int_equal(hop_alloc_live(), base);
    fprintf(stderr, "hostile: %zu single-byte files loaded of %zu; %zu random rounds\n", loaded,
            (size - 28) * LEN(values), rounds);
    free(copy);
    hop_free(data);
    hop_output_graph_free(og);
}

/* A HOP the reader does not know fails by name. */
static const hop_class *
knows_nothing(const char *name)
{
    (void)name;
    return NULL;
}

static void
test_unregistered_hop_is_not_found(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    size_t size;
    void *data = save_program(og, &size);
    hop_load_options o = {.find_hop = knows_nothing};
    assert_null(hop_output_graph_load(data, size, &o));
    assert_int_equal(hop_error_code(), HOP_NOT_FOUND);
    assert_string_equal(hop_error_message(),
                        "load: graph forward calls the HOP cond, which is not registered (a HOP "
                        "of a library must be registered before the load: hop_load_library, or "
                        "hop.load_library in Python)");
    hop_free(data);
    hop_output_graph_free(og);
}

static void
test_save_refuses_wrong_captures_and_open_traces(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    void *data;
    size_t size;
    assert_int_equal(hop_output_graph_save(og, NULL, &data, &size), HOP_INVALID);
    assert_string_equal(hop_error_message(), "save: the value of captured input w is missing");
    hop_saved_tensor bad = w_value;
    bad.sizes[0] = 5;
    hop_save_options so = {.captures = &bad, .ncaptures = 1};
    assert_int_equal(hop_output_graph_save(og, &so, &data, &size), HOP_INVALID);
    hop_output_graph_free(og);
    og = hop_output_graph_new();
    assert_int_equal(hop_output_graph_save(og, NULL, &data, &size), HOP_MISUSE);
    hop_output_graph_free(og);
}

static int released;

static const void *
make_capture(void *ud, size_t index, const hop_saved_tensor *v)
{
    (void)index;
    (void)v;
    (void)ud;
    hop_error(HOP_INVALID, "no constants today");
    return NULL;
}

static void
release_capture(void *ud, const void *identity)
{
    (void)ud;
    (void)identity;
    released++;
}

static void
test_capture_callback_failure_fails_the_load(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    size_t size;
    void *data = save_program(og, &size);
    hop_load_options o = {
        .find_hop = hop_find_hop, .capture = make_capture, .release = release_capture};
    released = 0;
    assert_null(hop_output_graph_load(data, size, &o));
    assert_int_equal(hop_error_code(), HOP_INVALID);
    assert_string_equal(hop_error_message(), "no constants today");
    assert_int_equal(released, 0);
    hop_free(data);
    hop_output_graph_free(og);
}

static void
test_allocation_failures_while_saving_and_loading(void **state)
{
    (void)state;
    hop_output_graph *og = trace_program();
    size_t size;
    void *data = save_program(og, &size);
    long base = hop_alloc_live();
    int failures = 0;
    for (int k = 1;; k++) {
        hop_alloc_fail_at(k);
        void *d = NULL;
        size_t n;
        hop_save_options so = {.captures = &w_value, .ncaptures = 1};
        hop_status st = hop_output_graph_save(og, &so, &d, &n);
        hop_alloc_fail_at(0);
        if (st == HOP_OK) {
            assert_int_equal(n, size);
            hop_free(d);
            break;
        }
        assert_int_equal(st, HOP_NOMEM);
        assert_int_equal(hop_alloc_live(), base);
        failures++;
    }
    for (int k = 1;; k++) {
        hop_alloc_fail_at(k);
        hop_saved *s = hop_output_graph_load(data, size, &load_opts);
        hop_alloc_fail_at(0);
        if (s != NULL) {
            hop_saved_free(s);
            break;
        }
        assert_int_equal(hop_error_code(), HOP_NOMEM);
        assert_int_equal(hop_alloc_live(), base);
        failures++;
    }
    assert_true(failures > 20);
    hop_free(data);
    hop_output_graph_free(og);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loaded_program_prints_and_runs_as_saved),
        cmocka_unit_test(test_lifts_report_origin_chain_cause_and_sharing),
        cmocka_unit_test(test_loops_and_switch_nested_round_trip),
        cmocka_unit_test(test_every_flipped_byte_and_truncation_is_a_format_error),
        cmocka_unit_test(test_hostile_files_with_valid_checksums_fail_cleanly),
        cmocka_unit_test(test_unregistered_hop_is_not_found),
        cmocka_unit_test(test_save_refuses_wrong_captures_and_open_traces),
        cmocka_unit_test(test_capture_callback_failure_fails_the_load),
        cmocka_unit_test(test_allocation_failures_while_saving_and_loading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
