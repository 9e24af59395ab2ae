/*
 * hop/map.c - map(f, xs, *args): f(x, *args) for each slice x of the xs
 * along dim 0, the results stacked on a new dim 0.
 *
 * Tracing: the body gets explicit inputs, one slice per xs (metadata
 * xs.shape[1:]), then the extra args, then what it lifts; the call node is
 * `map(map_body_N, (xs...), (args..., lifted...))`.  The leading sizes must
 * agree (decided through the ShapeEnv) and not be 0.
 *
 * Lowering: a body of small values made of batchable ops runs once over
 * all the rows (hop_vmap_graph; when the rows' values fit in
 * MAP_BATCH_BYTES, decided at run time for a symbolic row count).  Else a
 * loop over rows: a view per row of each mapped input, the body inlined
 * with the row of each stacked output as the destination of its result.
 * The rows are independent, so the loop is a parallel one (the plan may
 * split it over the thread pool).  Eval: the same loop, row
 * by row, checking that every row gives the same kinds of results.
 */
#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/eval.h"
#include "hop/layout.h"
#include "hop/lowering.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- tracing */

static hop_status
map_check_operands(hop_call *c)
{
    size_t nxs;
    hop_node *const *xs = hop_call_group(c, "xs", &nxs);
    if (nxs == 0)
        return hop_error(HOP_INVALID, "map: needs at least one xs to map over");
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    hop_shape_env *env = hop_output_graph_env(c->og);
    const hop_meta *first = NULL;
    for (size_t i = 0; i < nxs; i++) {
        const hop_node *x = xs[i];
        char what[128]; /* printed for an error only: a third of a map's checks */
        int64_t n;
        if (x->meta->kind != HOP_VALUE_TENSOR || x->meta->meta.rank < 1) {
            hop_value_info_print(x->meta, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) is %s; map needs a tensor of rank >= 1 "
                             "to slice along dim 0",
                             i, x->name, what);
        }
        if (hop_expr_const_value(x->meta->meta.sizes[0], &n) && n == 0) {
            hop_value_info_print(x->meta, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) is %s: zero-length along dim 0, so "
                             "there is nothing to map over",
                             i, x->name, what);
        }
        if (first == NULL) {
            first = &x->meta->meta;
            continue;
        }
        bool eq;
        st = hop_shape_env_decide_eq(env, first->sizes[0], x->meta->meta.sizes[0], "map", &eq);
        if (st != HOP_OK)
            return st;
        if (!eq) {
            char a[96], b[96];
            hop_expr_print(first->sizes[0], a, sizeof a);
            hop_expr_print(x->meta->meta.sizes[0], b, sizeof b);
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) has %s rows but xs 0 has %s; every xs "
                             "needs the same leading size",
                             i, x->name, b, a);
        }
    }
    return HOP_OK;
}

static hop_status
map_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    if (st != HOP_OK)
        return st;
    size_t nxs;
    hop_call_group(c, "xs", &nxs);
    for (size_t i = 0; i < nxs; i++) /* the xs come first: a row of each */
        c->input_meta[i] = hop_value_info_drop_dim(&c->input_meta[i], 0);
    return HOP_OK;
}

static hop_status
map_output_meta(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->output_meta(c);
    if (st != HOP_OK)
        return st;
    const hop_expr *n = hop_call_group(c, "xs", NULL)[0]->meta->meta.sizes[0];
    for (size_t i = 0; i < c->nouts; i++) {
        hop_value_info *o = &c->outs[i];
        char what[128]; /* printed for an error only */
        if (o->kind != HOP_VALUE_TENSOR) {
            hop_value_info_print(o, what, sizeof what);
            return hop_error(HOP_TRACE,
                             "map: output %zu of the body is %s; a map body must "
                             "return tensors",
                             i, what);
        }
        if (o->meta.rank >= HOP_MAX_RANK) {
            hop_value_info_print(o, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "map: output %zu of the body is %s; stacking it would "
                             "exceed rank %d",
                             i, what, HOP_MAX_RANK);
        }
        *o = hop_value_info_insert_dim(o, 0, n);
    }
    return HOP_OK;
}

/* ------------------------------------------------------------- verifying */

/* The body takes a row of each xs (dim 0 removed), then the args as they
 * are, and returns a row of each output. */
static bool
map_row_in(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    (void)call, (void)body;
    if (j < *(const size_t *)ud)
        *want = hop_value_info_drop_dim(want, 0);
    return true;
}

static bool
map_row_out(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    (void)ud, (void)call, (void)body, (void)j;
    *want = hop_value_info_drop_dim(want, 0);
    return true;
}

/* What tracing checks of the xs (tensors of rank >= 1 with one number of
 * rows, not 0), the outputs stacked over those rows, and the body over
 * rows. */
static hop_status
map_verify(const hop_node *call)
{
    size_t nxs;
    const hop_arg *xs = hop_node_group(call, "xs", &nxs);
    if (nxs == 0)
        return hop_verify_fail(call, "map: needs at least one xs to map over");
    const hop_expr *rows = NULL;
    for (size_t i = 0; i < nxs; i++) {
        const hop_value_info *x = xs[i].kind == HOP_ARG_NODE ? xs[i].u.node->meta : NULL;
        int64_t n, m;
        if (x == NULL || x->kind != HOP_VALUE_TENSOR || x->meta.rank < 1 ||
            (hop_expr_const_value(x->meta.sizes[0], &n) && n == 0))
            return hop_verify_fail(call, "map: xs %zu is not a tensor with rows to map over", i);
        if (rows && rows != x->meta.sizes[0] && hop_expr_const_value(rows, &m) &&
            hop_expr_const_value(x->meta.sizes[0], &n) && m != n)
            return hop_verify_fail(call, "map: xs %zu has other rows than xs 0", i);
        rows = rows ? rows : x->meta.sizes[0];
    }
    for (size_t j = 0; j < call->nouts; j++) {
        const hop_value_info *o = &call->outs[j];
        int64_t n, m;
        if (o->kind != HOP_VALUE_TENSOR || o->meta.rank < 1 ||
            (o->meta.sizes[0] != rows && hop_expr_const_value(rows, &m) &&
             hop_expr_const_value(o->meta.sizes[0], &n) && m != n))
            return hop_verify_fail(call, "map: output %zu is not stacked over the rows", j);
    }
    return hop_verify_bodies(call, map_row_in, map_row_out, &nxs);
}

/* -------------------------------------------------------------- lowering */

/* Batched temporaries a map may take at once, all rows together. */
#define MAP_BATCH_BYTES (64 << 20)
/* The largest value per row a batched body may hold (elements). */
#define MAP_BATCH_ROW_NUMEL (1 << 16)

/* a op b, folded when both are constants. */
static hop_status
int_op(hop_lower_ctx *cx, hop_int_op op, hop_pval a, hop_pval b, hop_pval *out)
{
    if (a.kind != HOP_PVAL_CONST || b.kind != HOP_PVAL_CONST)
        return hop_lower_int(cx, op, a, b, out);
    int64_t x = a.value, y = b.value;
    *out = (hop_pval){HOP_PVAL_CONST, -1,
                      op == HOP_INT_ADD   ? x + y
                      : op == HOP_INT_MUL ? x * y
                      : op == HOP_INT_MAX ? (x > y ? x : y)
                      : op == HOP_INT_MIN ? (x < y ? x : y)
                      : op == HOP_INT_LE  ? x <= y
                                          : 0};
    return op == HOP_INT_ADD || op == HOP_INT_MUL || op == HOP_INT_MAX || op == HOP_INT_MIN ||
                   op == HOP_INT_LE
               ? HOP_OK
               : hop_lower_int(cx, op, a, b, out);
}

/*
 * Whether body batches well: only ops with a batch rule (no HOP call or
 * foreign kernel).  If not, false with why (for the plan's note).
 */
static bool
batchable(const hop_graph *body, char *why, size_t nwhy)
{
    for (const hop_node *n = body->first; n; n = n->next) {
        if (n->kind == HOP_NODE_OUTPUT)
            continue;
        const hop_op_batch_rule *r = n->kind == HOP_NODE_CALL_OP ? hop_op_batch(n->op) : NULL;
        if (n->kind == HOP_NODE_CALL_HOP || n->kind == HOP_NODE_CALL_FOREIGN) {
            snprintf(why, nwhy, "the body calls %s (%s)", hop_node_target(n),
                     n->kind == HOP_NODE_CALL_HOP ? "a HOP" : "a foreign kernel");
            return false;
        }
        if (n->kind != HOP_NODE_PLACEHOLDER && (r == NULL || r->batch == NULL)) {
            snprintf(why, nwhy, "%s (%s) has no batch rule", n->name, hop_node_target(n));
            return false;
        }
    }
    return true;
}

/*
 * a op b (ADD or MUL of counts >= 0) for the fit test, which only compares
 * counts with its limits: it must not overflow (a wrapped product would pass
 * the test, and an overflow error would fail a plan that eager runs), so a
 * size near 2^62 fails the test and the row loop reports it as eager does.
 * Constants saturate at INT64_MAX (exact below it, for the plan's note);
 * a count known only at run time is capped at RUN_CAP, above every limit,
 * and so are its operands (fits() caps each size read at run time), so
 * products stay below 2^54.
 */
#define RUN_CAP ((int64_t)MAP_BATCH_BYTES + 1)
_Static_assert(MAP_BATCH_ROW_NUMEL < RUN_CAP, "the element limit must be below the cap");

static hop_status
capped(hop_lower_ctx *cx, hop_int_op op, hop_pval a, hop_pval b, hop_pval *out)
{
    if (a.kind == HOP_PVAL_CONST && b.kind == HOP_PVAL_CONST) {
        int64_t r;
        bool over = op == HOP_INT_MUL ? __builtin_mul_overflow(a.value, b.value, &r)
                                      : __builtin_add_overflow(a.value, b.value, &r);
        *out = (hop_pval){HOP_PVAL_CONST, -1, over ? INT64_MAX : r};
        return HOP_OK;
    }
    hop_pval cap = {HOP_PVAL_CONST, -1, RUN_CAP};
    if (a.kind == HOP_PVAL_CONST && a.value > RUN_CAP)
        a = cap;
    if (b.kind == HOP_PVAL_CONST && b.value > RUN_CAP)
        b = cap;
    hop_status st = int_op(cx, op, a, b, out);
    return st == HOP_OK ? int_op(cx, HOP_INT_MIN, *out, cap, out) : st;
}

/*
 * Whether the batched body fits, as a plan value (a constant when every
 * size is one): the values of all rows (every node's value, an upper bound
 * on what the batched body holds) take at most MAP_BATCH_BYTES and no value
 * has more than MAP_BATCH_ROW_NUMEL elements per row (counts by capped()).
 */
static hop_status
fits(hop_lower_ctx *cx, const hop_graph *body, hop_pval rows, hop_pval *ok, char *why, size_t nwhy)
{
    hop_pval bytes = {HOP_PVAL_CONST, -1, 0}, most = {HOP_PVAL_CONST, -1, 0};
    hop_status st = HOP_OK;
    for (const hop_node *n = body->first; n && st == HOP_OK; n = n->next) {
        if (n->kind == HOP_NODE_OUTPUT || n->meta->kind != HOP_VALUE_TENSOR)
            continue;
        const hop_meta *m = &n->meta->meta;
        hop_pval numel = {HOP_PVAL_CONST, -1, 1}, size;
        for (int d = 0; d < m->rank && st == HOP_OK; d++) {
            hop_arg a = hop_arg_sym(m->sizes[d]);
            if (!hop_expr_const_value(m->sizes[d], &size.value)) {
                st = hop_lower_arg(cx, &a, &size);
                if (st == HOP_OK)
                    st = int_op(cx, HOP_INT_MIN, size, (hop_pval){HOP_PVAL_CONST, -1, RUN_CAP},
                                &size);
            } else
                size = (hop_pval){HOP_PVAL_CONST, -1, size.value};
            if (st == HOP_OK)
                st = capped(cx, HOP_INT_MUL, numel, size, &numel);
        }
        hop_pval b;
        if (st == HOP_OK)
            st = int_op(cx, HOP_INT_MAX, most, numel, &most);
        if (st == HOP_OK)
            st = capped(cx, HOP_INT_MUL, numel,
                        (hop_pval){HOP_PVAL_CONST, -1, (int64_t)hop_dtype_size(m->dtype)}, &b);
        if (st == HOP_OK)
            st = capped(cx, HOP_INT_ADD, bytes, b, &bytes);
    }
    hop_pval total, a, b;
    if (st == HOP_OK && rows.kind != HOP_PVAL_CONST)
        st = int_op(cx, HOP_INT_MIN, rows, (hop_pval){HOP_PVAL_CONST, -1, RUN_CAP}, &rows);
    if (st == HOP_OK)
        st = capped(cx, HOP_INT_MUL, bytes, rows, &total);
    if (st == HOP_OK)
        st = int_op(cx, HOP_INT_LE, total, (hop_pval){HOP_PVAL_CONST, -1, MAP_BATCH_BYTES}, &a);
    if (st == HOP_OK)
        st = int_op(cx, HOP_INT_LE, most, (hop_pval){HOP_PVAL_CONST, -1, MAP_BATCH_ROW_NUMEL}, &b);
    if (st == HOP_OK && b.kind == HOP_PVAL_CONST && !b.value)
        snprintf(why, nwhy, "a value has %s%" PRId64 " elements per row, more than %d",
                 most.value == INT64_MAX ? "over " : "", most.value, MAP_BATCH_ROW_NUMEL);
    else if (st == HOP_OK && a.kind == HOP_PVAL_CONST && !a.value)
        snprintf(why, nwhy, "the values of all rows take %s%" PRId64 " bytes, more than %d MiB",
                 total.value == INT64_MAX ? "over " : "", total.value, MAP_BATCH_BYTES >> 20);
    return st == HOP_OK ? int_op(cx, HOP_INT_MIN, a, b, ok) : st;
}

/*
 * The body over all rows at once (hop_vmap_graph: the mapped inputs
 * batched at dim 0, the others whole), handed to the lowering, or NULL with
 * why when the map runs row by row (batching failed or would add symbols
 * or guards to the program, which are taken back).
 */
static hop_graph *
batched_body(hop_lower_ctx *cx, const hop_graph *body, size_t nxs, const hop_expr *rows, char *why,
             size_t nwhy)
{
    size_t n = body->nplaceholders, no = body->output->nargs;
    hop_shape_env *env = body->env;
    size_t nsyms = hop_shape_env_nsymbols(env), nguards = hop_shape_env_nguards(env);
    char name[256];
    snprintf(name, sizeof name, "%s_rows", body->name);
    int *dims = hop_calloc(n + no + 1, sizeof *dims);
    hop_graph *bg = dims ? hop_graph_new(env, name) : NULL;
    hop_status st = bg ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; dims && i < n + no; i++)
        dims[i] = i < nxs || i >= n ? 0 : -1;
    if (st == HOP_OK && (st = hop_vmap_graph(body, dims, rows, dims + n, bg)) != HOP_OK)
        snprintf(why, nwhy, "batching the body failed: %s", hop_error_message());
    for (const hop_node *k = bg && st == HOP_OK ? bg->first : NULL; k; k = k->next)
        if (k->kind == HOP_NODE_CALL_HOP || k->kind == HOP_NODE_CALL_FOREIGN) {
            snprintf(why, nwhy, "the batched body would call %s, a loop over the rows",
                     hop_node_target(k));
            st = HOP_UNSUPPORTED;
            break;
        }
    if (st == HOP_OK &&
        (hop_shape_env_nsymbols(env) != nsyms || hop_shape_env_nguards(env) != nguards)) {
        snprintf(why, nwhy, "batching the body would add symbols or guards to the program");
        st = HOP_UNSUPPORTED;
    }
    hop_free(dims);
    if (st != HOP_OK) {
        hop_shape_env_truncate_guards(env, nguards);
        hop_shape_env_truncate_symbols(env, nsyms);
        hop_graph_free(bg);
        hop_error_clear();
        return NULL;
    }
    return hop_lower_keep_graph(cx, bg) == HOP_OK ? bg : NULL;
}

static hop_status
map_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = hop_node_body(call, "f");
    size_t nxs, n, no = call->nouts;
    const hop_arg *xs = hop_node_group(call, "xs", &nxs);
    if (body == NULL || xs == NULL)
        return hop_error_code();
    if (nxs == 0)
        return hop_error(HOP_VERIFY, "lowering: %s maps over nothing", call->name);
    for (size_t j = 0; j < no; j++) {
        /* The stacked outputs are made before the loop, so their sizes
         * must not depend on what the body computes. */
        const hop_meta *m = &call->outs[j].meta;
        for (int d = 0; d < m->rank; d++) {
            const hop_expr *syms[16];
            size_t ns = hop_expr_free_symbols(m->sizes[d], syms, 16);
            for (size_t k = 0; k < ns && k < 16; k++) {
                if (hop_symbol_is_unbacked(syms[k]) && !hop_lower_symbol_known(cx, syms[k])) {
                    char text[128];
                    hop_meta_print(m, text, sizeof text);
                    return hop_error(HOP_UNSUPPORTED,
                                     "lowering: %s: output %zu is %s, whose size %s is only known "
                                     "inside the body; map needs its outputs' sizes before it runs",
                                     call->name, j, text, hop_symbol_name(syms[k]));
                }
            }
        }
    }
    hop_pval *in = hop_lower_passed(cx, call, &n);
    hop_pval *out = in ? hop_lower_outputs(cx, true) : NULL;
    hop_pval *body_in = out ? hop_lower_pvals(cx, n) : NULL;
    hop_pval *rows = body_in ? hop_lower_pvals(cx, no) : NULL;
    hop_pval *res = rows ? hop_lower_pvals(cx, no) : NULL;
    if (res == NULL)
        return hop_error_code();
    /* The row count is the leading size of the first mapped input. */
    const hop_expr *rows_expr = xs[0].u.node->meta->meta.sizes[0];
    hop_arg size = hop_arg_sym(rows_expr);
    hop_pval count = {HOP_PVAL_CONST, -1, 0}, index;
    hop_status st =
        hop_expr_const_value(rows_expr, &count.value) ? HOP_OK : hop_lower_arg(cx, &size, &count);
    /* A body made of batchable ops runs once over all the rows (fused
     * kernels over whole arrays, one GEMM) when its values fit (fits),
     * decided at run time when a size is symbolic. */
    char why[384] = "";
    hop_pval small = {HOP_PVAL_CONST, -1, 0};
    if (hop_lower_get_options(cx)->no_batching)
        snprintf(why, sizeof why, "batching is off (hop_lower_options.no_batching)");
    else if (st == HOP_OK && batchable(body, why, sizeof why))
        st = fits(cx, body, count, &small, why, sizeof why);
    const hop_graph *bg = st == HOP_OK && (small.kind != HOP_PVAL_CONST || small.value)
                              ? batched_body(cx, body, nxs, rows_expr, why, sizeof why)
                              : NULL;
    bool runtime_choice = bg && small.kind != HOP_PVAL_CONST;
    if (st == HOP_OK) {
        if (bg == NULL)
            st = hop_lower_note(cx, "%s (%s): row by row: %s", call->name, body->name, why);
        else if (runtime_choice)
            st = hop_lower_note(cx,
                                "%s (%s): one batched body over all rows (%s) when the values "
                                "of all rows fit in %d MiB (and none has more than %d elements "
                                "per row), else row by row; decided each run",
                                call->name, body->name, bg->name, MAP_BATCH_BYTES >> 20,
                                MAP_BATCH_ROW_NUMEL);
        else
            st = hop_lower_note(cx, "%s (%s): one batched body over all rows (%s)", call->name,
                                body->name, bg->name);
    }
    if (bg && st == HOP_OK) {
        /* A lazy branch: a run that takes the row loop, because the rows'
         * values would not fit, reserves no memory for them. */
        if (runtime_choice && (st = hop_lower_if_lazy(cx, small)) != HOP_OK)
            return st;
        if ((st = hop_lower_inline(cx, bg, in, n, out, res, no)) != HOP_OK)
            return st;
        if (!runtime_choice)
            return hop_lower_results(cx, out, no);
        if ((st = hop_lower_else(cx)) != HOP_OK)
            return st;
    }
    /* Rows are independent: the plan may split them over the pool. */
    if (st == HOP_OK)
        st = hop_lower_parallel_loop_begin(cx, count, &index);
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        st = k < nxs ? hop_lower_select(cx, in[k], index, &body_in[k])
                     : (body_in[k] = in[k], HOP_OK);
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = hop_lower_select(cx, out[j], index, &rows[j]);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, body_in, n, rows, res, no);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    if (st == HOP_OK && runtime_choice)
        st = hop_lower_end_if(cx);
    return st == HOP_OK ? hop_lower_results(cx, out, no) : st;
}

/* ------------------------------------------------------------------ eval */

/* The checks tracing makes on metadata, on concrete xs. */
static hop_status
check_xs(const hop_rt_value *xs, size_t nxs)
{
    if (nxs == 0)
        return hop_error(HOP_INVALID, "map: needs at least one xs to map over");
    for (size_t i = 0; i < nxs; i++) {
        char what[128];
        hop_eval_describe(&xs[i], what, sizeof what);
        const hop_tensor *x = xs[i].tensor;
        if (xs[i].kind != HOP_VALUE_TENSOR || x->rank < 1)
            return hop_error(HOP_SHAPE,
                             "map: xs %zu is %s; map needs a tensor of rank >= 1 to slice along "
                             "dim 0",
                             i, what);
        if (x->sizes[0] == 0)
            return hop_error(HOP_SHAPE,
                             "map: xs %zu is %s: zero-length along dim 0, so there is nothing "
                             "to map over",
                             i, what);
        if (x->sizes[0] != xs[0].tensor->sizes[0])
            return hop_error(HOP_SHAPE,
                             "map: xs %zu has %" PRId64 " rows but xs 0 has %" PRId64
                             "; every xs needs the same leading size",
                             i, x->sizes[0], xs[0].tensor->sizes[0]);
    }
    return HOP_OK;
}

/* Row i's results against row 0's: a host body may return anything. */
static hop_status
check_row(const hop_rt_values *first, const hop_rt_value *got, size_t ngot, int64_t i)
{
    if (ngot != first->n)
        return hop_error(HOP_TRACE,
                         "map: the body returns %zu value%s for row %" PRId64 " but %zu for row 0",
                         ngot, ngot == 1 ? "" : "s", i, first->n);
    for (size_t j = 0; j < ngot; j++) {
        char a[128], b[128];
        hop_eval_describe(&first->items[j], a, sizeof a);
        hop_eval_describe(&got[j], b, sizeof b);
        if (got[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_TRACE,
                             "map: output %zu of the body is %s; a map body must return tensors", j,
                             b);
        const hop_tensor *x = first->items[j].tensor, *y = got[j].tensor;
        bool same = x->dtype == y->dtype && x->rank == y->rank;
        for (int d = 0; same && d < x->rank; d++)
            same = x->sizes[d] == y->sizes[d];
        if (!same)
            return hop_error(HOP_SHAPE,
                             "map: output %zu of the body is %s for row 0 but %s for row %" PRId64
                             "; every row must give the same shape and dtype",
                             j, a, b, i);
    }
    return HOP_OK;
}

static hop_status
map_eval(hop_eval_ctx *ex)
{
    size_t nxs, n;
    const hop_rt_value *xs = hop_eval_group(ex, "xs", &nxs);
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    hop_status st = xs ? check_xs(xs, nxs) : hop_error_code();
    if (st != HOP_OK)
        return st;
    int64_t nrows = xs[0].tensor->sizes[0];
    hop_rt_value *row_in = hop_calloc(n + 1, sizeof *row_in);
    hop_rt_values rows = {NULL, 0, 0}; /* nrows x nouts, row-major */
    size_t no = 0;
    if (row_in == NULL)
        return hop_error_code();
    memcpy(row_in, passed, n * sizeof *row_in);
    for (int64_t i = 0; i < nrows && st == HOP_OK; i++) {
        for (size_t k = 0; k < nxs && st == HOP_OK; k++) {
            hop_rt_arg a[] = {hop_rt_tensor(xs[k].tensor), hop_rt_int(0), hop_rt_int(i)};
            st = hop_eager(HOP_OP_select, a, 3, &row_in[k]);
        }
        size_t before = rows.n;
        if (st == HOP_OK)
            st = hop_eval_body(ex, "f", row_in, n, &rows);
        for (size_t k = 0; k < nxs; k++)
            if (row_in[k].tensor != xs[k].tensor) {
                hop_tensor_release(row_in[k].tensor);
                row_in[k] = xs[k];
            }
        if (st == HOP_OK && i == 0)
            no = rows.n;
        if (st == HOP_OK) {
            hop_rt_values first = {rows.items, no, no};
            st = check_row(&first, rows.items + before, rows.n - before, i);
        }
    }
    hop_free(row_in);
    hop_rt_values res = {NULL, 0, 0};
    if (st == HOP_OK)
        st = hop_eval_stack_rows(&rows, no, nrows, false, 0, &res);
    hop_rt_values_clear(&rows);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &res);
    hop_rt_values_clear(&res);
    return st;
}

/* --------------------------------------------------------------- autodiff */

/* meta with a leading dim of size n: a row's value stacked. */
static hop_value_info
stacked(const hop_value_info *row, const hop_expr *n)
{
    return hop_value_info_insert_dim(row, 0, n);
}

static bool
is_float(const hop_node *v)
{
    return v && v->meta->kind == HOP_VALUE_TENSOR && hop_dtype_is_inexact(v->meta->meta.dtype);
}

/* A map rule's view of the call: its layout, the value passed for each
 * body input (fwd), its primal in the out graph g (prim); and, for the rule
 * to fill in, which body inputs it differentiates (wrt) and the values it
 * adds to the map (extra: the outputs' cotangents, or the inputs'
 * tangents, so room for the larger of the two counts). */
typedef struct map_rule {
    const hop_node *call;
    hop_graph *g;
    hop_layout l;
    hop_span xs;
    const hop_graph *body;
    const hop_node **fwd;
    hop_node **prim;
    bool *wrt;
    hop_node **extra;
} map_rule;

static hop_status
map_rule_of(const hop_node *call, hop_graph *g, hop_node *(*primal)(void *cx, const hop_node *v),
            void *cx, map_rule *m)
{
    memset(m, 0, sizeof *m);
    m->call = call;
    m->g = g;
    hop_status st = hop_layout_of(call, &m->l);
    m->xs = hop_layout_span(&m->l, "xs");
    m->body = hop_node_body(call, "f");
    m->fwd = hop_calloc(m->l.n + 1, sizeof *m->fwd);
    m->prim = hop_calloc(m->l.n + 1, sizeof *m->prim);
    m->wrt = hop_calloc(m->l.n + 1, sizeof *m->wrt);
    m->extra = hop_calloc(m->l.n + call->nouts + 1, sizeof *m->extra);
    if (st == HOP_OK && (m->fwd == NULL || m->prim == NULL || m->wrt == NULL || m->extra == NULL))
        st = hop_error_code();
    for (size_t j = 0; j < m->l.n && st == HOP_OK; j++) {
        const hop_arg *a = hop_node_passed_to(call, j);
        m->fwd[j] = a->kind == HOP_ARG_NODE ? a->u.node : NULL;
        if (m->fwd[j] && (m->prim[j] = primal(cx, m->fwd[j])) == NULL)
            st = hop_error_code();
    }
    return st;
}

static void
map_rule_free(map_rule *m)
{
    hop_free(m->fwd);
    hop_free(m->prim);
    hop_free(m->wrt);
    hop_free(m->extra);
}

static hop_node *
vjp_primal(void *cx, const hop_node *v)
{
    return hop_vjp_primal(cx, v);
}

static hop_node *
jvp_primal(void *cx, const hop_node *v)
{
    return hop_jvp_primal(cx, v);
}

/*
 * The one map both rules emit into m->g, over body (the body's backward or
 * tangent graph): its xs are the call's xs (their primals) followed by the
 * first nmapped of m->extra, the values the rule maps (cotangents, xs
 * tangents); its args are the call's args followed by the next nwhole of
 * m->extra, passed whole (args tangents); its outputs are the call's, then
 * more[nmore].  body takes its extra inputs after the call's, mapped ones
 * first: those placeholders move to right after the xs rows, so that
 * body's inputs line up with the map's operands.  NULL with the error set.
 */
static hop_node *
emit_rule_map(const map_rule *m, hop_graph *body, size_t nmapped, size_t nwhole,
              const hop_value_info *more, size_t nmore)
{
    const hop_node *call = m->call;
    size_t n = m->l.n;
    if (body->nplaceholders == n + nmapped + nwhole)
        for (size_t i = 0; i < nmapped; i++)
            if (hop_graph_move_placeholder(body, hop_graph_placeholder_at(body, n + i),
                                           m->xs.n + i) != HOP_OK)
                return NULL;
    hop_span args = hop_layout_span(&m->l, "args");
    hop_value_info *outs = hop_calloc(call->nouts + nmore + 1, sizeof *outs);
    hop_build *b = outs ? hop_build_new(m->g, &hop_map_class) : NULL;
    hop_status st = b ? hop_build_use_body(b, "f", body) : hop_error_code();
    for (size_t j = m->xs.at; j < m->xs.at + m->xs.n && st == HOP_OK; j++)
        st = hop_build_operand(b, "xs", m->prim[j]);
    for (size_t i = 0; i < nmapped && st == HOP_OK; i++)
        st = hop_build_operand(b, "xs", m->extra[i]);
    for (size_t j = args.at; j < args.at + args.n && st == HOP_OK; j++)
        st = hop_build_operand(b, "args", m->prim[j]);
    for (size_t i = 0; i < nwhole && st == HOP_OK; i++)
        st = hop_build_operand(b, "args", m->extra[nmapped + i]);
    hop_node *r = NULL;
    if (st == HOP_OK) {
        memcpy(outs, call->outs, call->nouts * sizeof *outs);
        memcpy(outs + call->nouts, more, nmore * sizeof *outs);
        r = hop_build_emit(b, outs, call->nouts + nmore);
        b = NULL;
    }
    hop_build_free(b);
    hop_free(outs);
    return r;
}

/*
 * Reverse: a backward map over (rows of xs, rows of the output cotangents)
 * with the args, whose body is the body's backward graph; a row's gradient
 * of an xs is that row of its gradient, and the gradient of a value passed
 * whole (an arg, or one the body lifted) is the sum over the rows.
 */
static hop_status
map_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    map_rule m;
    hop_status st = map_rule_of(call, hop_vjp_out(cx), vjp_primal, cx, &m);
    size_t n = m.l.n, ng = 0, nct = 0;
    hop_value_info *more = hop_calloc(n + 1, sizeof *more);
    if (st == HOP_OK && more == NULL)
        st = HOP_NOMEM;
    const hop_expr *rows = m.xs.n ? m.fwd[m.xs.at]->meta->meta.sizes[0] : NULL;
    for (size_t j = 0; j < n && st == HOP_OK; j++)
        if (is_float(m.fwd[j]) && hop_vjp_active(cx, m.fwd[j])) {
            m.wrt[j] = true;
            more[ng++] = stacked(hop_graph_placeholder_at(m.body, j)->meta, rows);
        }
    /* an output nothing differentiates gets no cotangent (a symbolic zero:
     * zeros times an infinite partial would be nan), as hop_vjp_bodies */
    hop_ct_kind *cts = hop_calloc(call->nouts + 1, sizeof *cts);
    bool all = true;
    for (size_t i = 0; i < call->nouts && cts && ng > 0; i++) {
        if (!hop_dtype_is_inexact(call->outs[i].meta.dtype))
            continue;
        hop_node *ct = hop_vjp_ct(cx, call, i);
        cts[i] = ct ? HOP_CT_INPUT : HOP_CT_NONE;
        all = all && ct;
        if (ct)
            m.extra[nct++] = ct;
    }
    if (st == HOP_OK && cts == NULL)
        st = HOP_NOMEM;
    hop_graph *bwd = NULL;
    if (st == HOP_OK && ng > 0)
        st = hop_vjp_body_seeded(cx, m.body, m.wrt, all ? NULL : cts, &bwd);
    hop_free(cts);
    /* the cotangents are mapped; the args' gradients come out whole */
    hop_node *r = NULL;
    if (st == HOP_OK && ng > 0 && (r = emit_rule_map(&m, bwd, nct, 0, more, ng)) == NULL)
        st = hop_error_code();
    for (size_t j = 0, k = 0; j < n && st == HOP_OK && r; j++) {
        if (!m.wrt[j])
            continue;
        hop_node *gj = hop_graph_getitem(m.g, r, call->nouts + k++);
        if (gj && j >= m.xs.at + m.xs.n) {
            hop_arg a[] = {hop_arg_node(gj), hop_arg_int(0), hop_arg_bool(false)};
            gj = hop_graph_call_op(m.g, HOP_OP_sum, a, 3);
        }
        st = gj ? hop_vjp_accumulate(cx, m.fwd[j], gj) : hop_error_code();
    }
    hop_free(more);
    map_rule_free(&m);
    return st;
}

/* Which of the call's outputs get a tangent (*want, one per output; left
 * NULL when every output does, the body's default), *nt of them: those a
 * tangent reaches in the body (hop_ad_reach).  Another keeps a symbolic
 * zero tangent, as wrap's (hop_jvp_bodies) and JAX's scan's ys: instantiated
 * zeros would meet an infinite partial after the map (0 * inf = nan where
 * PyTorch's loop over the rows gives the derivative of a constant). */
static hop_status
jvp_wanted(const map_rule *m, hop_ct_kind **want, size_t *nt)
{
    const hop_node *call = m->call;
    bool *reached = hop_calloc(call->nouts + 1, sizeof *reached);
    hop_status st = reached ? hop_ad_reach(m->body, m->wrt, reached) : HOP_NOMEM;
    *want = NULL;
    *nt = 0;
    for (size_t i = 0; i < call->nouts && st == HOP_OK; i++)
        *nt += reached[i];
    if (st == HOP_OK && *nt < call->nouts && (*want = hop_calloc(call->nouts + 1, sizeof **want)))
        for (size_t i = 0; i < call->nouts; i++)
            (*want)[i] = reached[i] ? HOP_CT_INPUT : HOP_CT_NONE;
    else if (st == HOP_OK && *nt < call->nouts)
        st = HOP_NOMEM;
    hop_free(reached);
    return st;
}

/* Forward: a map over (xs rows, their tangents' rows) with (args, their
 * tangents) of the body's tangent graph, which outputs the tangents of the
 * outputs a tangent reaches (no map at all when none does). */
static hop_status
map_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    map_rule m;
    hop_status st = map_rule_of(call, hop_jvp_out(cx), jvp_primal, cx, &m);
    size_t nxt = 0, nat = 0, nt = 0;
    for (size_t j = 0; j < m.l.n && st == HOP_OK; j++) {
        hop_node *t = m.fwd[j] ? hop_jvp_tangent(cx, m.fwd[j]) : NULL;
        if (t && is_float(m.fwd[j])) {
            m.wrt[j] = true;
            m.extra[nxt + nat] = t;
            *(j < m.xs.at + m.xs.n ? &nxt : &nat) += 1;
        }
    }
    hop_ct_kind *want = NULL;
    if (st == HOP_OK && nxt + nat > 0)
        st = jvp_wanted(&m, &want, &nt);
    hop_value_info *more = hop_calloc(call->nouts + 1, sizeof *more);
    if (st == HOP_OK && more == NULL)
        st = HOP_NOMEM;
    for (size_t i = 0, k = 0; i < call->nouts && st == HOP_OK; i++)
        if (want == NULL || want[i] != HOP_CT_NONE)
            more[k++] = call->outs[i];
    hop_graph *jb = NULL;
    if (st == HOP_OK && nt > 0)
        st = hop_jvp_body_wanted(cx, m.body, m.wrt, want, &jb);
    /* the xs tangents are mapped, the args' tangents passed whole */
    hop_node *r = NULL;
    if (st == HOP_OK && nt > 0 && (r = emit_rule_map(&m, jb, nxt, nat, more, nt)) == NULL)
        st = hop_error_code();
    for (size_t i = 0, k = 0; i < call->nouts && st == HOP_OK && r; i++) {
        if (want && want[i] == HOP_CT_NONE)
            continue;
        hop_node *t = hop_graph_getitem(m.g, r, call->nouts + k++);
        st = t ? hop_jvp_set_tangent(cx, call, i, t) : hop_error_code();
    }
    hop_free(want);
    hop_free(more);
    map_rule_free(&m);
    return st;
}

/* ------------------------------------------------------------------ vmap */

/*
 * A batched xs or arg: a map over the inner dim.  The map still iterates
 * its own dim: a batched xs [B, N, ...] has its batch moved after it
 * ([N, B, ...]), so each row is batched at 0, and the body is batched
 * (hop_batch_body); each output comes out [N, B, ...] and has its batch
 * moved back to the front.
 */
static hop_status
map_batch(hop_batch_ctx *cx, const hop_node *call)
{
    const hop_graph *f = hop_node_body(call, "f");
    hop_layout l;
    hop_status st = hop_layout_of(call, &l);
    hop_span xs = hop_layout_span(&l, "xs");
    for (size_t j = 0; j < call->nouts; j++)
        if (call->outs[j].meta.rank + 1 > HOP_MAX_RANK)
            return hop_batch_loop(cx, call); /* a batched output would not fit */
    if (st == HOP_OK && f->nplaceholders != l.n)
        return hop_error(HOP_MISUSE, "vmap: map %s: its body has %zu inputs, not %zu", call->name,
                         f->nplaceholders, l.n);
    bool *mask = hop_calloc(l.n + 1, sizeof *mask);
    hop_node **ops = hop_calloc(l.n + 1, sizeof *ops);
    hop_value_info *outs = hop_calloc(call->nouts + 1, sizeof *outs);
    if (st == HOP_OK && (mask == NULL || ops == NULL || outs == NULL))
        st = HOP_NOMEM;
    if (st == HOP_OK)
        st = hop_batch_operands(cx, call, ops, mask);
    for (size_t i = xs.at; i < xs.at + xs.n && st == HOP_OK; i++)
        if (mask[i] && (ops[i] = hop_batch_movedim(cx, ops[i], 0, 1)) == NULL)
            st = hop_error_code();
    hop_graph *fb = NULL;
    if (st == HOP_OK)
        st = hop_batch_body(cx, f, mask, &fb);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        /* [N, B, ...]: the body's output (batched) stacked */
        outs[j] = stacked(fb->output->args[j].u.node->meta, call->outs[j].meta.sizes[0]);
    }
    hop_build *b = st == HOP_OK ? hop_build_new(hop_batch_out(cx), &hop_map_class) : NULL;
    if (st == HOP_OK)
        st = b ? hop_build_use_body(b, "f", fb) : hop_error_code();
    if (st == HOP_OK)
        st = hop_build_operands(b, &l, ops);
    hop_node *c = NULL;
    if (st == HOP_OK) {
        c = hop_build_emit(b, outs, call->nouts);
        b = NULL;
        st = c ? hop_graph_rename_node(hop_batch_out(cx), c, call->name) : hop_error_code();
    }
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(hop_batch_out(cx), c, j);
        if (v != NULL)
            v = hop_batch_movedim(cx, v, 1, 0);
        st = v ? hop_batch_set(cx, call, j, v, true) : hop_error_code();
    }
    hop_build_free(b);
    hop_free(mask);
    hop_free(ops);
    hop_free(outs);
    return st;
}

const hop_class hop_map_class = {
    .name = "map",
    .params = {{"f", HOP_PARAM_BODY, "map_body"},
               {"xs", HOP_PARAM_VALUES},
               {"args", HOP_PARAM_VARARGS}},
    .doc = "map(f, xs, *args): f(x, *args) for each slice x of xs along dim 0, the results "
           "stacked on a new dim 0; xs is a tensor or a pytree of tensors with one leading size.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = map_check_operands,
    .body_inputs = map_body_inputs,
    .output_meta = map_output_meta,
    .verify = map_verify,
    .lower = map_lower,
    .eval = map_eval,
    .vjp = map_vjp,
    .jvp = map_jvp,
    .reach = hop_ad_reach_bodies, /* output i stacks body output i */
    .batch = map_batch,
};

hop_status
hop_map(hop_output_graph *og, hop_body f, const hop_arg *xs, size_t nxs, const hop_arg *args,
        size_t nargs, hop_values *outputs)
{
    if ((nxs > 0 && xs == NULL) || (nargs > 0 && args == NULL))
        return hop_error(HOP_MISUSE, "hop_map: NULL %s", xs == NULL ? "xs" : "args");
    hop_arg lists[] = {hop_arg_list((hop_arg *)xs, nxs), hop_arg_list((hop_arg *)args, nargs)};
    return hop_apply(og, &hop_map_class, lists, 2, &f, 1, outputs);
}
