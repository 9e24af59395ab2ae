/*
 * hop/fori_loop.c - fori_loop(lower, upper, body_fun, init_val): JAX's
 * counted loop, val = body_fun(i, val) for i in [lower, upper); the final
 * val.
 *
 * Tracing: the bounds are ints, SymInts or int scalar tensors (read with
 * item, so an unbacked trip count works); the body gets the index i (a
 * SymInt the HOP makes itself: fori_loop's one made input, an unbacked
 * symbol ranging over [lower, upper) when both are known) and the carries
 * (fresh), and must return each carry as it entered.  The node is
 * `fori_loop(lower, upper, fori_loop_body_N, (init...), (lifted...))`.
 *
 * Under vmap a batched tensor bound (its item deferred: the bounds are
 * HOP_PARAM_BATCHED_ITEM) is one loop over [min lower, max upper) whose
 * lanes update their carries only inside their own range (fori_batch).
 *
 * Lowering: a counted loop (no condition to evaluate per iteration) whose
 * index register is the body's i, carries double-buffered.  Eval: the same
 * loop on concrete values with the same checks.
 */
#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

/* A bound as an int or a SymInt: an int scalar tensor is read with item. */
static hop_status
bound(hop_call *c, const char *name)
{
    hop_arg *b = hop_call_param(c, name);
    if (b->kind == HOP_ARG_INT)
        return HOP_OK;
    if (b->kind == HOP_ARG_SYM && !hop_expr_is_bool(b->u.sym))
        return HOP_OK;
    if (b->kind == HOP_ARG_NODE) {
        const hop_value_info *v = b->u.node->meta;
        if (v->kind == HOP_VALUE_SYM && !hop_expr_is_bool(v->sym))
            return HOP_OK;
        int64_t k, numel = 1;
        bool ok =
            v->kind == HOP_VALUE_TENSOR && (v->meta.dtype == HOP_I64 || v->meta.dtype == HOP_I32);
        for (int d = 0; ok && d < v->meta.rank; d++)
            ok = hop_expr_const_value(v->meta.sizes[d], &k) && (numel *= k) == 1;
        if (ok) {
            hop_node *local = hop_tracer_lift(c->parent, b->u.node);
            hop_node *item = local ? hop_tracer_call_op(c->parent, HOP_OP_item,
                                                        (hop_arg[]){hop_arg_node(local)}, 1)
                                   : NULL;
            if (item == NULL)
                return hop_error_code();
            *b = hop_arg_node(item);
            return HOP_OK;
        }
    }
    char what[96] = "a bool";
    if (b->kind == HOP_ARG_NODE)
        hop_value_info_print(b->u.node->meta, what, sizeof what);
    return hop_error(HOP_DTYPE, "%s: %s must be an int, a SymInt or an int scalar tensor, got %s",
                     c->cls->name, name, what);
}

static hop_status
fori_check_operands(hop_call *c)
{
    hop_status st = bound(c, "lower");
    if (st == HOP_OK)
        st = bound(c, "upper");
    return st == HOP_OK ? hop_prim_hop_base()->check_operands(c) : st;
}

/* The index: an unbacked SymInt, in [lower, upper) when both are known. */
static hop_status
fori_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    if (st != HOP_OK)
        return st;
    const hop_arg *lo = hop_call_param(c, "lower"), *hi = hop_call_param(c, "upper");
    int64_t a = INT64_MIN, b = INT64_MAX;
    if (lo->kind == HOP_ARG_INT && hi->kind == HOP_ARG_INT && lo->u.i < hi->u.i)
        a = lo->u.i, b = hi->u.i - 1;
    const hop_expr *i = hop_shape_env_unbacked(hop_output_graph_env(c->og), a, b);
    if (i == NULL)
        return hop_error_code();
    c->input_meta[0] = (hop_value_info){.kind = HOP_VALUE_SYM, .sym = i};
    c->input_names[0] = "i";
    return HOP_OK;
}

static hop_status
fori_check_outputs(hop_call *c)
{
    size_t n;
    hop_call_group(c, "init_val", &n);
    hop_status st = hop_call_check_carries(c, 0, 1, n, "body_fun");
    if (st == HOP_OK && c->results[0].n != n)
        st = hop_error(HOP_TRACE, "%s: body_fun returns %zu values for %zu carries", c->cls->name,
                       c->results[0].n, n);
    return st;
}

static hop_status
fori_output_meta(hop_call *c)
{
    size_t n;
    hop_call_group(c, "init_val", &n);
    return hop_call_carry_outputs(c, 1, n, 0);
}

/* ------------------------------------------------------------- verifying */

/* A bound as tracing leaves it: an int, a SymInt, or a SymInt node (a
 * tensor bound was read with item). */
static hop_status
verify_bound(const hop_node *call, const char *name)
{
    const hop_arg *b = hop_node_param(call, name);
    const hop_value_info *m = b->kind == HOP_ARG_NODE ? b->u.node->meta : NULL;
    if (b->kind == HOP_ARG_INT || (b->kind == HOP_ARG_SYM && !hop_expr_is_bool(b->u.sym)) ||
        (m && m->kind == HOP_VALUE_SYM && !hop_expr_is_bool(m->sym)))
        return HOP_OK;
    char what[128] = "a bool";
    if (m)
        hop_value_info_print(m, what, sizeof what);
    else if (b->kind == HOP_ARG_SYM)
        snprintf(what, sizeof what, "a SymBool");
    return hop_verify_fail(call, "%s: %s must be an int or a SymInt, got %s", call->cls->name, name,
                           what);
}

/* The bounds, the index the HOP makes (body_fun's first input, a SymInt),
 * the carries (the outputs), and the base's checks of the body's inputs and
 * outputs. */
static hop_status
fori_verify(const hop_node *call)
{
    hop_status st = verify_bound(call, "lower");
    if (st == HOP_OK)
        st = verify_bound(call, "upper");
    const hop_graph *body = st == HOP_OK ? hop_node_body(call, "body_fun") : NULL;
    const hop_node *i = body ? body->first : NULL;
    if (st == HOP_OK && (i == NULL || i->kind != HOP_NODE_PLACEHOLDER ||
                         i->meta->kind != HOP_VALUE_SYM || hop_expr_is_bool(i->meta->sym)))
        st = hop_verify_fail(call, "%s: the first input of %s must be the index, a SymInt",
                             call->cls->name, body ? body->name : "body_fun");
    if (st == HOP_OK)
        st = hop_verify_carries(call, "init_val", false);
    return st == HOP_OK ? hop_verify_default(call) : st;
}

/* --------------------------------------------------------------- lowering */

static hop_status
fori_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = hop_node_body(call, "body_fun");
    size_t n, ncarry = call->nouts;
    hop_pval *passed = hop_lower_passed(cx, call, &n), *in = hop_lower_pvals(cx, n + 1);
    hop_pval lo, hi, count, k;
    hop_loop_carry lc;
    if (body == NULL || passed == NULL || in == NULL ||
        hop_lower_arg(cx, hop_node_param(call, "lower"), &lo) != HOP_OK ||
        hop_lower_arg(cx, hop_node_param(call, "upper"), &hi) != HOP_OK ||
        hop_lower_carry_begin(cx, call->outs, passed, ncarry, &lc) != HOP_OK)
        return hop_error_code();
    /* count = max(upper, lower) - lower: no trips when upper <= lower, as
     * eager's range, even where upper - lower would overflow int64. */
    hop_pval top;
    hop_status st = HOP_OK;
    if (lo.kind == HOP_PVAL_CONST && hi.kind == HOP_PVAL_CONST && hi.value <= lo.value)
        count = (hop_pval){HOP_PVAL_CONST, -1, 0};
    else if (lo.kind == HOP_PVAL_CONST && hi.kind == HOP_PVAL_CONST &&
             !__builtin_sub_overflow(hi.value, lo.value, &count.value))
        count = (hop_pval){HOP_PVAL_CONST, -1, count.value};
    else if ((st = hop_lower_int(cx, HOP_INT_MAX, hi, lo, &top)) == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_SUB, top, lo, &count);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &k);
    /* i = lower + k: the counter itself when lower is 0. */
    if (st == HOP_OK)
        st = lo.kind == HOP_PVAL_CONST && lo.value == 0
                 ? (in[0] = k, HOP_OK)
                 : hop_lower_int(cx, HOP_INT_ADD, lo, k, &in[0]);
    for (size_t j = 0; j < n; j++)
        in[j + 1] = j < ncarry ? lc.cur[j] : passed[j];
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n + 1, lc.next, lc.got, ncarry);
    if (st == HOP_OK)
        st = hop_lower_carry_next(cx, &lc);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    if (st == HOP_OK)
        st = hop_lower_carry_end(cx, &lc);
    return st == HOP_OK ? hop_lower_results(cx, lc.out, ncarry) : st;
}

/* ------------------------------------------------------------------- eval */

static hop_status
eval_bound(hop_eval_ctx *ex, const char *name, int64_t *out)
{
    hop_rt_arg b;
    hop_status st = hop_eval_param(ex, name, &b);
    if (st != HOP_OK)
        return st;
    if (b.kind == HOP_OPND_INT) {
        *out = b.u.i;
        return HOP_OK;
    }
    if (b.kind == HOP_OPND_TENSOR &&
        (b.u.tensor->dtype == HOP_I64 || b.u.tensor->dtype == HOP_I32) &&
        hop_tensor_numel(b.u.tensor) == 1)
        return hop_tensor_item_int(b.u.tensor, out);
    char what[96] = "a bool";
    if (b.kind == HOP_OPND_TENSOR)
        hop_tensor_print_meta(b.u.tensor, what, sizeof what);
    return hop_error(HOP_DTYPE, "%s: %s must be an int, a SymInt or an int scalar tensor, got %s",
                     hop_eval_class(ex)->name, name, what);
}

static hop_status
fori_eval(hop_eval_ctx *ex)
{
    int64_t lo, hi;
    size_t n, ncarry;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    hop_eval_group(ex, "init_val", &ncarry);
    hop_status st = eval_bound(ex, "lower", &lo);
    if (st == HOP_OK)
        st = eval_bound(ex, "upper", &hi);
    hop_rt_value *in = st == HOP_OK ? hop_calloc(n + 2, sizeof *in) : NULL;
    if (in == NULL)
        return st == HOP_OK ? hop_error_code() : st;
    memcpy(in + 1, passed, n * sizeof *in);
    hop_rt_values carry = {NULL, 0, 0};
    for (size_t j = 0; j < ncarry && st == HOP_OK; j++)
        st = hop_rt_values_push(
            &carry,
            (hop_rt_value){passed[j].kind, hop_tensor_retain(passed[j].tensor), passed[j].i});
    for (int64_t i = lo; i < hi && st == HOP_OK; i++) {
        hop_rt_values next = {NULL, 0, 0};
        in[0] = (hop_rt_value){HOP_VALUE_SYM, NULL, i};
        for (size_t j = 0; j < ncarry; j++)
            in[j + 1] = carry.items[j];
        st = hop_eval_body(ex, "body_fun", in, n + 1, &next);
        if (st == HOP_OK)
            st = hop_eval_check_carries(ex, &next, passed, ncarry, "body_fun");
        if (st == HOP_OK && next.n != ncarry)
            st = hop_error(HOP_TRACE, "%s: body_fun returns %zu values for %zu carries",
                           hop_eval_class(ex)->name, next.n, ncarry);
        hop_rt_values_clear(st == HOP_OK ? &carry : &next);
        if (st == HOP_OK)
            carry = next;
    }
    hop_free(in);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &carry);
    hop_rt_values_clear(&carry);
    return st;
}

/* --------------------------------------------------------------- autodiff */

/*
 * Reverse mode, for a trip count known when traced (int bounds): the
 * loop is a scan over the indices arange(lower, upper).  An augmented
 * forward scan stacks the carries each step starts from; a reverse scan
 * carries the carries' cotangents and the lifted values' gradient sums,
 * each step calling the body's backward graph through a wrap.  Only a body
 * that does not read its index is differentiated yet: a plan binds the
 * index's symbol once per loop, so a body whose index is passed through a
 * wrap would see the wrong step (the fix is substituting the symbol when the
 * body is inlined, as scan's rule inlines its body).
 */

static bool
float_value(const hop_value_info *v)
{
    return v->kind == HOP_VALUE_TENSOR && hop_dtype_is_float(v->meta.dtype);
}

/* In step body s: the body inlined on (i, rest...) with i = item(ix) when
 * indexed (its index symbol becomes i's, with the index's range: ix is an
 * element of arange(lower, upper)), on rest alone otherwise; its outputs go
 * to outs[body's output count]. */
static hop_status
call_step(hop_graph *s, const hop_graph *body, bool indexed, hop_node *ix, hop_node *const *rest,
          size_t nrest, hop_node **outs)
{
    if (!indexed)
        return hop_graph_inline(s, body, rest, outs);
    hop_node *i = hop_graph_call_op(s, HOP_OP_item, (hop_arg[]){hop_arg_node(ix)}, 1);
    hop_node **in = hop_calloc(nrest + 2, sizeof *in);
    hop_status st = i && in ? HOP_OK : hop_error_code();
    if (st == HOP_OK) {
        int64_t lo, hi;
        hop_shape_env_bounds(s->env, hop_graph_placeholder_at(body, 0)->meta->sym, &lo, &hi);
        st = hop_shape_env_constrain(s->env, i->meta->sym, lo, hi);
    }
    if (st == HOP_OK) {
        in[0] = i;
        memcpy(in + 1, rest, nrest * sizeof *rest);
        st = hop_graph_inline(s, body, in, outs);
    }
    hop_free(in);
    return st;
}

/* A bound as an expression: an int's constant, a SymInt's symbol. */
static const hop_expr *
bound_expr(hop_shape_env *env, const hop_arg *b)
{
    return b->kind == HOP_ARG_INT   ? hop_sym_const(env, b->u.i)
           : b->kind == HOP_ARG_SYM ? b->u.sym
                                    : b->u.node->meta->sym;
}

/* The steps' indices in g: arange(lower, upper) when upper >= lower is
 * known (a SymInt node bound stays a node argument, so it stays used), else
 * arange(lower, lower + Max(upper - lower, 0)). */
static hop_node *
step_indices(hop_graph *g, const hop_arg *lo, const hop_arg *hi)
{
    const hop_expr *lo_e = bound_expr(g->env, lo), *hi_e = bound_expr(g->env, hi);
    const hop_expr *span = lo_e && hi_e ? hop_sym_sub(g->env, hi_e, lo_e) : NULL;
    if (span == NULL)
        return NULL;
    int64_t smin, smax;
    hop_shape_env_bounds(g->env, span, &smin, &smax);
    hop_arg a[2] = {hop_arg_sym(lo_e), hop_arg_sym(hi_e)};
    if (smin >= 0) {
        a[0] = *lo;
        a[1] = *hi;
    } else {
        span = hop_sym_max(g->env, span, hop_sym_const(g->env, 0));
        if (span == NULL || (a[1].u.sym = hop_sym_add(g->env, lo_e, span)) == NULL)
            return NULL;
    }
    return hop_graph_call_op(g, HOP_OP_arange,
                             (hop_arg[]){a[0], a[1], hop_arg_int(1), hop_arg_dtype(HOP_I64)}, 4);
}

hop_status
hop_vjp_counted_loop(hop_vjp_ctx *cx, const hop_node *call, const hop_graph *f, bool indexed,
                     const hop_arg *lo, const hop_arg *hi, const hop_arg *init, size_t nc,
                     const hop_arg *lifted, size_t nl)
{
    const char *hop = call->cls->name;
    for (size_t j = 0; j < nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: %s %s carries a SymInt (carry %zu); its vjp needs "
                             "tensor carries",
                             hop, call->name, j);
    hop_graph *g = hop_vjp_out(cx);
    if (lo->kind == HOP_ARG_INT && hi->kind == HOP_ARG_INT && hi->u.i <= lo->u.i) {
        /* no step: the carries pass through */
        hop_status st = HOP_OK;
        for (size_t j = 0; j < nc && st == HOP_OK; j++) {
            hop_node *ct = hop_vjp_ct(cx, call, j);
            if (ct)
                st = hop_vjp_accumulate(cx, init[j].u.node, ct);
        }
        return st;
    }
    size_t off = indexed, nph = f->nplaceholders; /* [i], carries, lifted */
    if (nph != off + nc + nl)
        return hop_error(HOP_MISUSE, "hop_vjp_counted_loop: %s's body %s takes %zu inputs, not %zu",
                         call->name, f->name, nph, off + nc + nl);
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    hop_node **v = hop_calloc(8 * (nph + nc) + 8, sizeof *v);
    hop_value_info *outs = hop_calloc(2 * (nc + nl) + 2, sizeof *outs);
    hop_status st = wrt && v && outs ? HOP_OK : HOP_NOMEM;
    size_t nfc = 0, nwl = 0;
    for (size_t k = off; k < nph && st == HOP_OK; k++) {
        wrt[k] = float_value(hop_graph_placeholder_at(f, k)->meta);
        nfc += wrt[k] && k - off < nc;
        nwl += wrt[k] && k - off >= nc;
    }
    hop_node **prim = v; /* init..., lifted... (out graph) */
    for (size_t k = 0; k < nc + nl && st == HOP_OK; k++)
        prim[k] = hop_vjp_primal(cx, (k < nc ? init[k] : lifted[k - nc]).u.node);
    hop_node *idx = st == HOP_OK ? step_indices(g, lo, hi) : NULL;
    if (st == HOP_OK && idx == NULL)
        st = hop_error_code();
    hop_value_info ixm = {.kind = HOP_VALUE_TENSOR};
    if (st == HOP_OK)
        st = hop_meta_init(&ixm.meta, g->env, HOP_I64, 0, NULL);

    /* 1. the augmented forward: (c..., ix, L...) -> (c'..., c...) */
    char base[256];
    snprintf(base, sizeof base, "%s_fwd", f->name);
    hop_graph *s = st == HOP_OK ? hop_graph_new_subgraph(g, base) : NULL;
    if (st == HOP_OK && s == NULL)
        st = hop_error_code();
    hop_node **sp = prim + nc + nl; /* s's placeholders: c, ix, L */
    for (size_t k = 0; k < nc + 1 + nl && st == HOP_OK; k++) {
        const hop_node *p = k < nc    ? hop_graph_placeholder_at(f, off + k)
                            : k == nc ? NULL
                                      : hop_graph_placeholder_at(f, off + k - 1);
        sp[k] = hop_graph_placeholder(s, p ? p->name : "i", p ? p->meta : &ixm);
        if (sp[k] == NULL)
            st = hop_error_code();
    }
    hop_node **so = sp + nc + 1 + nl, **rest = so + nc + 1;
    for (size_t k = 0; k < nc; k++)
        rest[k] = sp[k];
    for (size_t k = 0; k < nl; k++)
        rest[nc + k] = sp[nc + 1 + k];
    if (st == HOP_OK)
        st = call_step(s, f, indexed, sp[nc], rest, nc + nl, so);
    if (st == HOP_OK) {
        hop_arg *o = hop_calloc(2 * nc + 1, sizeof *o);
        for (size_t j = 0; o && j < nc; j++) {
            o[j] = hop_arg_node(so[j]);
            o[nc + j] = hop_arg_node(sp[j]);
        }
        if (o == NULL || hop_graph_output(s, o, 2 * nc) == NULL)
            st = hop_error_code();
        hop_free(o);
    }
    if (s && (st != HOP_OK || hop_graph_add_subgraph(g, s) != HOP_OK)) {
        hop_graph_free(s);
        s = NULL;
        if (st == HOP_OK)
            st = hop_error_code();
    }
    hop_node *aug = NULL;
    if (st == HOP_OK) {
        for (size_t j = 0; j < nc; j++) {
            outs[j] = call->outs[j];
            hop_value_info st_m = call->outs[j];
            memmove(st_m.meta.sizes + 1, st_m.meta.sizes,
                    (size_t)st_m.meta.rank * sizeof *st_m.meta.sizes);
            st_m.meta.sizes[0] = idx->meta->meta.sizes[0];
            st_m.meta.rank++;
            outs[nc + j] = st_m;
        }
        if ((aug = hop_graph_call_scan(g, false, 0, -1, s, prim, nc, &idx, 1, prim + nc, nl, outs,
                                       2 * nc)) == NULL)
            st = hop_error_code();
    }

    /* 2. the backward body: (ctc..., acc..., ix, c..., L...) -> (gc..., acc + gL...) */
    hop_graph *b = NULL;
    snprintf(base, sizeof base, "%s_step_bwd", f->name);
    if (st == HOP_OK && ((b = hop_graph_new_subgraph(g, base)) == NULL ||
                         (st = hop_vjp_graph(f, wrt, NULL, b)) != HOP_OK)) {
        if (st == HOP_OK)
            st = hop_error_code();
        hop_graph_free(b);
        b = NULL;
    }
    snprintf(base, sizeof base, "%s_bwd", f->name);
    hop_graph *gb = st == HOP_OK ? hop_graph_new_subgraph(g, base) : NULL;
    if (st == HOP_OK && gb == NULL)
        st = hop_error_code();
    hop_node **gp = rest + nc + nl; /* ctc (nfc), acc (nwl), ix, c (nc), L (nl) */
    size_t k = 0;
    char name[256];
    for (size_t q = off; q < nph && st == HOP_OK; q++) {
        if (!wrt[q] || q - off >= nc)
            continue;
        const hop_node *p = hop_graph_placeholder_at(f, q);
        snprintf(name, sizeof name, "%s_ct", p->name);
        if ((gp[k++] = hop_graph_placeholder(gb, name, p->meta)) == NULL)
            st = hop_error_code();
    }
    for (size_t q = off + nc; q < nph && st == HOP_OK; q++) {
        if (!wrt[q])
            continue;
        const hop_node *p = hop_graph_placeholder_at(f, q);
        snprintf(name, sizeof name, "%s_grad", p->name);
        if ((gp[k++] = hop_graph_placeholder(gb, name, p->meta)) == NULL)
            st = hop_error_code();
    }
    size_t xb = k;
    if (st == HOP_OK && (gp[k++] = hop_graph_placeholder(gb, "i", &ixm)) == NULL)
        st = hop_error_code();
    for (size_t q = off; q < nph && st == HOP_OK; q++) {
        const hop_node *p = hop_graph_placeholder_at(f, q);
        if ((gp[k++] = hop_graph_placeholder(gb, p->name, p->meta)) == NULL)
            st = hop_error_code();
    }
    /* b's inputs after [i]: c..., L..., then the float carries' cotangents */
    hop_node **br = gp + k, **bo = br + nph + nfc;
    size_t nb = 0;
    for (size_t q = 0; q < nc + nl; q++)
        br[nb++] = gp[xb + 1 + q];
    for (size_t q = 0; q < nfc; q++)
        br[nb++] = gp[q];
    if (st == HOP_OK)
        st = call_step(gb, b, indexed, gp[xb], br, nb, bo);
    hop_graph_free(b);
    if (st == HOP_OK) {
        /* bo: f's outputs (nc), then one gradient per wrt input in order */
        hop_arg *o = hop_calloc(nfc + nwl + 1, sizeof *o);
        size_t m = 0, gi = nc;
        for (size_t q = off; o && q < nph && st == HOP_OK; q++) {
            if (!wrt[q])
                continue;
            hop_node *d = bo[gi++];
            if (q - off >= nc) {
                hop_node *acc = gp[m];
                d = hop_graph_call_op(gb, HOP_OP_add,
                                      (hop_arg[]){hop_arg_node(acc), hop_arg_node(d)}, 2);
                if (d == NULL)
                    st = hop_error_code();
            }
            o[m++] = hop_arg_node(d);
        }
        if (o == NULL)
            st = HOP_NOMEM;
        else if (st == HOP_OK && hop_graph_output(gb, o, m) == NULL)
            st = hop_error_code();
        hop_free(o);
    }
    if (gb && st == HOP_OK)
        hop_graph_dce(gb); /* the step's forward values nothing reads */
    if (gb && (st != HOP_OK || hop_graph_add_subgraph(g, gb) != HOP_OK)) {
        hop_graph_free(gb);
        gb = NULL;
        if (st == HOP_OK)
            st = hop_error_code();
    }

    /* 3. the backward scan */
    hop_node **bin = gp + k + 2 * (nph + nfc), **bxs = bin + nfc + nwl;
    size_t ni = 0;
    for (size_t q = off; q < nph && st == HOP_OK; q++) {
        if (!wrt[q])
            continue;
        const hop_value_info *m = hop_graph_placeholder_at(f, q)->meta;
        hop_node *ct = q - off < nc ? hop_vjp_ct(cx, call, q - off) : NULL;
        if ((bin[ni++] = ct ? ct : hop_vjp_zeros(cx, m)) == NULL)
            st = hop_error_code();
    }
    bxs[0] = idx;
    for (size_t j = 0; j < nc && st == HOP_OK; j++)
        if ((bxs[1 + j] = hop_graph_getitem(g, aug, nc + j)) == NULL)
            st = hop_error_code();
    hop_node *back = NULL;
    if (st == HOP_OK) {
        for (size_t q = 0; q < ni; q++)
            outs[q] = *bin[q]->meta;
        if ((back = hop_graph_call_scan(g, true, 0, -1, gb, bin, ni, bxs, 1 + nc, prim + nc, nl,
                                        outs, ni)) == NULL)
            st = hop_error_code();
    }
    for (size_t q = off, r = 0; q < nph && st == HOP_OK; q++) {
        if (!wrt[q])
            continue;
        const hop_node *target = (q - off < nc ? init[q - off] : lifted[q - off - nc]).u.node;
        hop_node *d = hop_graph_getitem(g, back, r++);
        st = d ? hop_vjp_accumulate(cx, target, d) : hop_error_code();
    }
    hop_free(wrt);
    hop_free(v);
    hop_free(outs);
    return st;
}

static hop_status
fori_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    size_t nc, nl;
    const hop_arg *init = hop_node_group(call, "init_val", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    hop_arg b[2] = {*hop_node_param(call, "lower"), *hop_node_param(call, "upper")};
    for (int k = 0; k < 2; k++) /* a SymInt node bound: its copy */
        if (b[k].kind == HOP_ARG_NODE && (b[k].u.node = hop_vjp_primal(cx, b[k].u.node)) == NULL)
            return hop_error_code();
    return hop_vjp_counted_loop(cx, call, hop_node_body(call, "body_fun"), true, &b[0], &b[1], init,
                                nc, lifted, nl);
}

/* A placeholder of g like p (its name with suffix); a SymInt placeholder
 * gets a fresh unbacked symbol of p's range (fresh: the new loop binds its
 * own index, and inlining maps p's symbol to it). */
static hop_node *
placeholder_like(hop_graph *g, const hop_node *p, const char *suffix)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s", p->name, suffix);
    if (p->meta->kind != HOP_VALUE_SYM)
        return hop_graph_placeholder(g, name, p->meta);
    int64_t lo, hi;
    hop_shape_env_bounds(g->env, p->meta->sym, &lo, &hi);
    hop_value_info m = {.kind = HOP_VALUE_SYM, .sym = hop_shape_env_unbacked(g->env, lo, hi)};
    return m.sym ? hop_graph_placeholder(g, name, &m) : NULL;
}

/* Builds a loop body's tangent twin (see hop_jvp_loop) into t. */
static hop_status
jvp_loop_body(hop_jvp_ctx *cx, hop_graph *t, const hop_graph *f, const hop_graph *cond, size_t off,
              size_t nc, size_t nl, const bool *wrt)
{
    size_t nph = f->nplaceholders, nout = f->output->nargs;
    hop_node **v = hop_calloc(2 * nph + 2 * nout + 2, sizeof *v);
    hop_arg *o = hop_calloc(2 * nout + 1, sizeof *o);
    hop_status st = v && o ? HOP_OK : HOP_NOMEM;
    hop_node **ph = v, **dot = v + nph, **jo = dot + nph;
    /* t's inputs: head..., c..., dc..., L..., dL... */
    size_t groups[][2] = {{0, off}, {off, off + nc}, {off + nc, nph}};
    for (int grp = 0; grp < 3 && st == HOP_OK; grp++) {
        for (size_t i = groups[grp][0]; i < groups[grp][1] && st == HOP_OK; i++)
            if ((ph[i] = placeholder_like(t, hop_graph_placeholder_at(f, i), "")) == NULL)
                st = hop_error_code();
        for (size_t i = groups[grp][0]; grp > 0 && i < groups[grp][1] && st == HOP_OK; i++)
            if (wrt[i] &&
                (dot[i] = placeholder_like(t, hop_graph_placeholder_at(f, i), "_dot")) == NULL)
                st = hop_error_code();
    }
    if (cond) { /* cond's inputs are f's without the head */
        hop_node *pred;
        if (st == HOP_OK)
            st = hop_graph_inline(t, cond, ph + off, &pred);
        if (st == HOP_OK && hop_graph_output(t, (hop_arg[]){hop_arg_node(pred)}, 1) == NULL)
            st = hop_error_code();
    } else {
        if (st == HOP_OK)
            st = hop_jvp_inline(t, f, wrt, ph, dot, jo);
        /* jo: f's outputs, then one tangent per output; keep the carries' */
        size_t m = 0;
        for (size_t j = 0; j < nc; j++)
            o[m++] = hop_arg_node(jo[j]);
        for (size_t j = 0; j < nc; j++)
            if (wrt[off + j])
                o[m++] = hop_arg_node(jo[nout + j]);
        if (st == HOP_OK && hop_graph_output(t, o, m) == NULL)
            st = hop_error_code();
    }
    (void)nl;
    (void)cx;
    hop_free(v);
    hop_free(o);
    return st;
}

hop_status
hop_jvp_loop(hop_jvp_ctx *cx, const hop_node *call, const hop_graph *f, const hop_graph *cond,
             size_t off, const hop_arg *init, size_t nc, const hop_arg *lifted, size_t nl,
             hop_jvp_loop_parts *out)
{
    memset(out, 0, sizeof *out);
    for (size_t j = 0; j < nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: %s %s carries a SymInt (carry %zu); its jvp needs "
                             "tensor carries",
                             call->cls->name, call->name, j);
    hop_graph *g = hop_jvp_out(cx);
    size_t nph = f->nplaceholders;
    if (nph != off + nc + nl)
        return hop_error(HOP_MISUSE, "hop_jvp_loop: %s's body %s takes %zu inputs, not %zu",
                         call->name, f->name, nph, off + nc + nl);
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    out->carries = hop_calloc(2 * nc + 1, sizeof *out->carries);
    out->lifted = hop_calloc(2 * nl + 1, sizeof *out->lifted);
    out->outs = hop_calloc(2 * nc + 1, sizeof *out->outs);
    hop_status st = wrt && out->carries && out->lifted && out->outs ? HOP_OK : HOP_NOMEM;
    size_t ncar = nc, nlif = nl;
    for (size_t k = 0; k < nc + nl && st == HOP_OK; k++) {
        const hop_node *v = (k < nc ? init[k] : lifted[k - nc]).u.node;
        const hop_value_info *m = hop_graph_placeholder_at(f, off + k)->meta;
        bool fl = m->kind == HOP_VALUE_TENSOR && hop_dtype_is_float(m->meta.dtype);
        hop_node *p = hop_jvp_primal(cx, v), *d = fl ? hop_jvp_tangent(cx, v) : NULL;
        if (k < nc && fl && d == NULL)
            d = hop_jvp_zeros(cx, m); /* every float carry carries a tangent */
        wrt[off + k] = d != NULL;
        if (p == NULL || (fl && k < nc && d == NULL)) {
            st = hop_error_code();
            break;
        }
        if (k < nc) {
            out->carries[k] = p;
            if (d) {
                out->outs[ncar] = call->outs[k];
                out->carries[ncar++] = d;
            }
            out->outs[k] = call->outs[k];
        } else {
            out->lifted[k - nc] = p;
            if (d)
                out->lifted[nlif++] = d;
        }
    }
    out->ncarries = ncar;
    out->nlifted = nlif;
    char base[256];
    for (int b = 0; b < 2 && st == HOP_OK; b++) {
        const hop_graph *src = b ? cond : f;
        if (src == NULL)
            continue;
        snprintf(base, sizeof base, "%s_jvp", src->name);
        hop_graph *t = hop_graph_new_subgraph(g, base);
        if (t == NULL)
            st = hop_error_code();
        else if ((st = jvp_loop_body(cx, t, f, b ? cond : NULL, off, nc, nl, wrt)) != HOP_OK ||
                 (hop_graph_dce(t), st = hop_graph_add_subgraph(g, t)) != HOP_OK)
            hop_graph_free(t);
        else
            *(b ? &out->cond : &out->body) = t;
    }
    hop_free(wrt);
    if (st != HOP_OK)
        hop_jvp_loop_parts_clear(out);
    return st;
}

void
hop_jvp_loop_parts_clear(hop_jvp_loop_parts *p)
{
    hop_free(p->carries);
    hop_free(p->lifted);
    hop_free(p->outs);
    p->carries = p->lifted = NULL;
    p->outs = NULL;
}

hop_status
hop_jvp_loop_finish(hop_jvp_ctx *cx, const hop_node *call, hop_jvp_loop_parts *p, hop_node *loop,
                    size_t nc)
{
    hop_status st = loop ? HOP_OK : hop_error_code();
    for (size_t j = 0, k = nc; j < nc && st == HOP_OK; j++) {
        const hop_value_info *m = &call->outs[j];
        if (!hop_dtype_is_float(m->meta.dtype))
            continue;
        hop_node *t = hop_graph_getitem(hop_jvp_out(cx), loop, k++);
        st = t ? hop_jvp_set_tangent(cx, call, j, t) : hop_error_code();
    }
    hop_jvp_loop_parts_clear(p);
    return st;
}

/* fori_loop(lower, upper, body_jvp, (c..., dc...), (L..., dL...)). */
static hop_status
fori_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    size_t nc, nl;
    const hop_arg *init = hop_node_group(call, "init_val", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    hop_jvp_loop_parts p;
    hop_status st =
        hop_jvp_loop(cx, call, hop_node_body(call, "body_fun"), NULL, 1, init, nc, lifted, nl, &p);
    if (st != HOP_OK)
        return st;
    hop_arg b[2] = {*hop_node_param(call, "lower"), *hop_node_param(call, "upper")};
    for (int k = 0; k < 2 && st == HOP_OK; k++) /* a SymInt node bound: its copy */
        if (b[k].kind == HOP_ARG_NODE && (b[k].u.node = hop_jvp_primal(cx, b[k].u.node)) == NULL)
            st = hop_error_code();
    hop_arg *items = hop_calloc(p.ncarries + p.nlifted + 1, sizeof *items);
    if (st == HOP_OK && items == NULL)
        st = HOP_NOMEM;
    hop_node *loop = NULL;
    if (st == HOP_OK) {
        for (size_t k = 0; k < p.ncarries; k++)
            items[k] = hop_arg_node(p.carries[k]);
        for (size_t k = 0; k < p.nlifted; k++)
            items[p.ncarries + k] = hop_arg_node(p.lifted[k]);
        hop_arg args[] = {b[0], b[1], hop_arg_graph(p.body), hop_arg_list(items, p.ncarries),
                          hop_arg_list(items + p.ncarries, p.nlifted)};
        loop =
            hop_graph_call_hop(hop_jvp_out(cx), &hop_fori_loop_class, args, 5, p.outs, p.ncarries);
    }
    hop_free(items);
    if (st != HOP_OK) {
        hop_jvp_loop_parts_clear(&p);
        return st;
    }
    return hop_jvp_loop_finish(cx, call, &p, loop, nc);
}

/* ------------------------------------------------------------------ vmap */

/* The lanes of batched bounds (the extra inputs lower, upper; NULL when
 * not batched): lane b runs while lower_b <= i < upper_b, only the batched
 * sides compared (the loop's own range is [min lower, max upper)). */
static hop_status
bound_lanes(void *arg, hop_graph *g, hop_node *const *in, hop_node *const *lim, hop_node **mask)
{
    (void)arg;
    hop_node *act[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (lim[k] && (act[k] = hop_graph_call_op(
                           g, k ? HOP_OP_gt : HOP_OP_le,
                           (hop_arg[]){hop_arg_node(lim[k]), hop_arg_node(in[0])}, 2)) == NULL)
            return hop_error_code();
    hop_arg both[] = {hop_arg_node(act[0]), hop_arg_node(act[1])};
    *mask = act[0] == NULL   ? act[1]
            : act[1] == NULL ? act[0]
                             : hop_graph_call_op(g, HOP_OP_logical_and, both, 2);
    return *mask ? HOP_OK : hop_error_code();
}

/* The loop's bound from a batched one, [B]: item(amin) for lower, item(amax)
 * for upper. */
static hop_node *
loop_bound(hop_graph *g, hop_node *b, bool upper)
{
    hop_arg dims[] = {hop_arg_int(0)};
    hop_node *r = hop_graph_call_op(
        g, upper ? HOP_OP_amax : HOP_OP_amin,
        (hop_arg[]){hop_arg_node(b), hop_arg_list(dims, 1), hop_arg_bool(false)}, 3);
    return r ? hop_graph_call_op(g, HOP_OP_item, (hop_arg[]){hop_arg_node(r)}, 1) : NULL;
}

/*
 * A batched carry, lifted value or bound: the same loop over the body
 * batched.  A carry is batched when its init is or the body makes it so
 * (hop_batch_carries, a fixed point; such an init is broadcast on entry).
 * A batched bound (an int tensor bound the vmapped function reads per
 * example: its `item` is deferred to here, HOP_PARAM_BATCHED_ITEM) is one
 * loop over [min lower, max upper) whose index stays unbatched, every carry
 * batched and masked per lane (hop_batch_masked_body); a SymInt carry then
 * cannot differ per example: HOP_UNSUPPORTED.
 */
static hop_status
fori_batch(hop_batch_ctx *cx, const hop_node *call)
{
    hop_graph *g = hop_batch_out(cx);
    size_t nc, nl;
    const hop_arg *init = hop_node_group(call, "init_val", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    const hop_graph *f = hop_node_body(call, "body_fun");
    hop_arg bounds[2] = {*hop_node_param(call, "lower"), *hop_node_param(call, "upper")};
    hop_node *bnd[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        bool b = false;
        if (bounds[k].kind == HOP_ARG_NODE) {
            hop_node *v = hop_batch_value(cx, bounds[k].u.node, &b);
            bounds[k] = hop_arg_node(v);
            bnd[k] = b ? v : NULL;
        }
    }
    bool masked = bnd[0] || bnd[1];
    for (size_t j = 0; j < nc && masked; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: fori_loop (%s) with a batched bound carries a SymInt "
                             "(carry %zu), which cannot differ per example",
                             call->name, j);
    size_t nph = f->nplaceholders; /* i, the carries, the lifted values */
    bool *mask = hop_calloc(nph + 1, sizeof *mask);
    hop_node **ops = hop_calloc(nc + nl + 1, sizeof *ops);
    hop_arg *items = hop_calloc(nc + nl + 3, sizeof *items);
    hop_value_info *outs = hop_calloc(call->nouts + 1, sizeof *outs);
    hop_status st = mask && ops && items && outs ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK && nph != 1 + nc + nl)
        st = hop_error(HOP_MISUSE, "vmap: fori_loop %s: its body has %zu inputs, not %zu",
                       call->name, nph, 1 + nc + nl);
    for (size_t i = 0; i < nc + nl && st == HOP_OK; i++) {
        const hop_node *v = (i < nc ? init[i] : lifted[i - nc]).u.node;
        if ((ops[i] = hop_batch_value(cx, v, &mask[1 + i])) == NULL)
            st = hop_error(HOP_MISUSE, "vmap: operand %s of fori_loop %s has no value", v->name,
                           call->name);
    }
    if (st == HOP_OK)
        st = hop_batch_carries(cx, f, mask, 1, nc);
    for (size_t j = 0; j < nc && masked && st == HOP_OK; j++)
        mask[1 + j] = true;
    /* a batched bound: `<body>_vmap` masked per lane, the batched bounds
     * its extra inputs (passed as extra lifted values) */
    hop_batch_lanes lanes = {bound_lanes, NULL, false, 2, (const char *[]){"lower", "upper"}, bnd};
    hop_graph *fb = NULL;
    if (st == HOP_OK)
        st = masked ? hop_batch_masked_body(cx, f, mask, 1, &lanes, &fb)
                    : hop_batch_body_outs(cx, f, mask, mask + 1, &fb);
    for (size_t j = 0; j < nc && st == HOP_OK; j++) {
        bool b;
        hop_batch_value(cx, init[j].u.node, &b);
        if (mask[1 + j] && !b && (ops[j] = hop_batch_broadcast(cx, ops[j])) == NULL)
            st = hop_error_code();
    }
    size_t nitems = nc + nl;
    for (size_t i = 0; i < nc + nl && st == HOP_OK; i++)
        items[i] = hop_arg_node(ops[i]);
    /* no example (a batch of size 0): no lane runs, so no iteration (and
     * no min or max of nothing) */
    int64_t size;
    bool none = hop_expr_const_value(hop_batch_size(cx), &size) && size == 0;
    for (int k = 0; k < 2 && st == HOP_OK; k++) {
        if (bnd[k] == NULL)
            continue;
        items[nitems++] = hop_arg_node(bnd[k]);
        hop_node *b = none ? NULL : loop_bound(g, bnd[k], k == 1);
        if (b != NULL)
            bounds[k] = hop_arg_node(b);
        else if (!none)
            st = hop_error_code();
    }
    if (masked && none)
        bounds[0] = bounds[1] = hop_arg_int(0);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        outs[j] = call->outs[j];
        if (mask[1 + j]) {
            hop_meta *m = &outs[j].meta;
            memmove(m->sizes + 1, m->sizes, (size_t)m->rank * sizeof *m->sizes);
            m->sizes[0] = hop_batch_size(cx);
            m->rank++;
        }
    }
    hop_node *c = NULL;
    if (st == HOP_OK) {
        hop_arg args[] = {bounds[0], bounds[1], hop_arg_graph(fb), hop_arg_list(items, nc),
                          hop_arg_list(items + nc, nitems - nc)};
        if ((c = hop_graph_call_hop(g, &hop_fori_loop_class, args, 5, outs, call->nouts)) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK)
        st = hop_graph_rename_node(g, c, call->name);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(g, c, j);
        st = v ? hop_batch_set(cx, call, j, v, mask[1 + j]) : hop_error_code();
    }
    hop_free(mask);
    hop_free(ops);
    hop_free(items);
    hop_free(outs);
    return st;
}

const hop_class hop_fori_loop_class = {
    .name = "fori_loop",
    .params = {{"lower", HOP_PARAM_VALUE, NULL, HOP_PARAM_BATCHED_ITEM},
               {"upper", HOP_PARAM_VALUE, NULL, HOP_PARAM_BATCHED_ITEM},
               {"body_fun", HOP_PARAM_BODY, "fori_loop_body"},
               {"init_val", HOP_PARAM_CARRY}},
    .doc = "fori_loop(lower, upper, body_fun, init_val): val = body_fun(i, val) for i in "
           "[lower, upper); returns the final val.  The bounds are ints or int scalar tensors.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .guard_mode = HOP_GUARDS_BODY,
    .made_inputs = 1,
    .check_operands = fori_check_operands,
    .body_inputs = fori_body_inputs,
    .check_outputs = fori_check_outputs,
    .output_meta = fori_output_meta,
    .installed = hop_call_bind_outputs,
    .verify = fori_verify,
    .lower = fori_lower,
    .eval = fori_eval,
    .vjp = fori_vjp,
    .jvp = fori_jvp,
    .batch = fori_batch,
};
