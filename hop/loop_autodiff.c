/*
 * hop/loop_autodiff.c - reverse and forward mode of any loop HOP, the loop
 * kit's autodiff (hop/loop_kit.h): scan, fori_loop, while_loop and the
 * loops of examples/ differentiate through here.
 *
 * Reverse mode is two scans.  The augmented forward (`<f>_fwd`) runs the
 * step f and also returns the carries each step starts from, which the scan
 * stacks; the backward (`<f>_bwd`) runs the other way over (the xs, the
 * stacked carries, the ys' cotangents), carrying the carries' cotangents and
 * the running sums of the gradients of the values passed whole, its body
 * f's vjp graph inlined.  A counted loop (fori_loop, while_loop once its
 * steps are counted, repeat) is a scan over its indices whose step reads
 * i = item(index).  Forward mode is the HOP again over f's tangent twin.
 * Both peel the first steps where a carry starts without a (co)tangent: a
 * symbolic zero is never multiplied by a partial that may be infinite.
 * Both read f's inputs by name (hop/layout.h) and build their bodies with
 * the builder, so the bodies and the operands passed to them agree by
 * construction.
 */
#include "hop/loop_kit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool
float_value(const hop_value_info *v)
{
    return v->kind == HOP_VALUE_TENSOR && hop_dtype_is_inexact(v->meta.dtype);
}

/* HOP_UNSUPPORTED when a carry of call is a SymInt (mode: "vjp", "jvp"). */
static hop_status
tensor_carries(const hop_node *call, size_t nc, const char *mode)
{
    for (size_t j = 0; j < nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: %s %s carries a SymInt (carry %zu); its %s needs "
                             "tensor carries",
                             call->cls->name, call->name, j, mode);
    return HOP_OK;
}

/* The leading unit dims a row of rank r needs to be stacked along dim: a
 * carry of lower rank than a scan's dim asks (a 0-d counter of a scan along
 * dim 1) is stacked with them, and has them dropped again in each backward
 * step. */
static int
stack_pad(int r, int64_t dim)
{
    int64_t need = dim < 0 ? -dim - 1 : dim;
    return need > r ? (int)(need - r) : 0;
}

/* row with its stack_pad unit dims for dim. */
static hop_value_info
padded(hop_shape_env *env, const hop_value_info *row, int64_t dim)
{
    hop_value_info v = *row;
    for (int k = stack_pad(row->meta.rank, dim); k > 0; k--)
        v = hop_value_info_insert_dim(&v, 0, hop_sym_const(env, 1));
    return v;
}

/* row (padded) stacked along dim (as scan stacks a y) into n steps. */
static hop_value_info
stacked_at(hop_shape_env *env, const hop_value_info *row, const hop_expr *n, int64_t dim)
{
    hop_value_info v = padded(env, row, dim);
    int64_t d = dim < 0 ? dim + v.meta.rank + 1 : dim;
    return hop_value_info_insert_dim(&v, (int)d, n);
}

/* v with k unit dims added in front (unsqueeze) or, k < 0, -k dropped. */
static hop_node *
unit_dims(hop_graph *g, hop_node *v, int k)
{
    for (; v && k != 0; k += k > 0 ? -1 : 1)
        v = hop_graph_call_op(g, k > 0 ? HOP_OP_unsqueeze : HOP_OP_squeeze,
                              (hop_arg[]){hop_arg_node(v), hop_arg_int(0)}, 2);
    return v;
}

/* ------------------------------------------------------------ the loop */

/* A loop as the reverse rule sees it: f's inputs by span, what the call
 * passes for each (primals), which are differentiated. */
typedef struct loop_ad {
    hop_vjp_ctx *cx;
    const hop_loop *lp;
    const hop_node *call;
    const hop_graph *f;
    hop_graph *g; /* the out graph */
    bool counted, indexed, reverse;
    int64_t dim, length;
    hop_span c, x, r;   /* f's carries, xs (none when counted), rest */
    size_t nph, nout;   /* f's inputs and outputs */
    bool *wrt;          /* per input of f: a float value, differentiated */
    hop_node **prim;    /* per input of f: the primal of what the call passes */
    hop_node *steps;    /* counted: the indices, an i64 vector of g */
    hop_value_info ixm; /* counted: one index */
    const hop_expr *n;  /* the number of steps */
} loop_ad;

static void
loop_ad_free(loop_ad *la)
{
    hop_free(la->wrt);
    hop_free(la->prim);
}

/* la's spans and primals from the call's layout. */
static hop_status
loop_ad_of(hop_vjp_ctx *cx, const hop_loop *lp, loop_ad *la)
{
    hop_layout l;
    memset(la, 0, sizeof *la);
    la->cx = cx;
    la->lp = lp;
    la->call = lp->call;
    la->g = hop_vjp_out(cx);
    la->counted = lp->xs == NULL;
    la->f = hop_node_body(lp->call, lp->body);
    if (la->f == NULL || hop_layout_of(lp->call, &l) != HOP_OK)
        return hop_error_code();
    hop_span made = hop_layout_span(&l, HOP_SPAN_MADE);
    la->c = hop_layout_span(&l, lp->carries);
    la->x = la->counted ? (hop_span){la->c.at + la->c.n, 0} : hop_layout_span(&l, lp->xs);
    la->r = (hop_span){la->x.at + la->x.n, l.n - (la->x.at + la->x.n)};
    la->indexed = made.n == 1;
    la->nph = la->f->nplaceholders;
    la->nout = la->f->output->nargs;
    if (made.n > 1 || la->c.at != made.n || la->x.at != la->c.at + la->c.n || la->nph != l.n)
        return hop_error(HOP_MISUSE,
                         "hop_loop_vjp: %s's body %s does not take (made, %s, %s, the rest) "
                         "in that order",
                         la->call->name, la->f->name, lp->carries, lp->xs ? lp->xs : "no xs");
    la->wrt = hop_calloc(la->nph + 1, sizeof *la->wrt);
    la->prim = hop_calloc(la->nph + 1, sizeof *la->prim);
    if (la->wrt == NULL || la->prim == NULL)
        return HOP_NOMEM;
    for (size_t j = la->c.at; j < la->nph; j++) {
        la->wrt[j] = float_value(hop_graph_placeholder_at(la->f, j)->meta);
        la->prim[j] = hop_vjp_primal(cx, hop_node_passed_to(la->call, j)->u.node);
    }
    la->reverse = la->counted ? false : lp->reverse;
    la->dim = la->counted ? 0 : lp->dim;
    la->length = la->counted ? -1 : lp->length;
    return HOP_OK;
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

/* The steps: the indices of a counted loop (made in g), else the xs'
 * count along dim. */
static hop_status
loop_steps(loop_ad *la)
{
    if (!la->counted) {
        const hop_meta *m = la->x.n ? &la->prim[la->x.at]->meta->meta : NULL;
        int64_t d = m ? (la->dim < 0 ? la->dim + m->rank : la->dim) : 0;
        la->n = m ? m->sizes[d] : hop_sym_const(la->g->env, la->length);
        return HOP_OK;
    }
    if ((la->steps = step_indices(la->g, &la->lp->lower, &la->lp->upper)) == NULL)
        return hop_error_code();
    la->n = la->steps->meta->meta.sizes[0];
    la->ixm = (hop_value_info){.kind = HOP_VALUE_TENSOR};
    return hop_meta_init(&la->ixm.meta, la->g->env, HOP_I64, 0, NULL);
}

/*
 * In step body s: body (f, or f's vjp graph taking extra inputs after f's)
 * run on c, x, r and extra; its outputs to outs.  A counted loop's x is the
 * one index ix: the body gets i = item(ix) when indexed (its index symbol
 * becomes i's, with the index's range: ix is an element of the steps), and
 * nothing otherwise.
 */
static hop_status
run_step(const loop_ad *la, hop_graph *s, const hop_graph *body, hop_node *const *c,
         hop_node *const *x, hop_node *const *r, hop_node *const *extra, size_t nextra,
         hop_node **outs)
{
    size_t nx = la->counted ? 0 : la->x.n, k = 0;
    hop_node **in = hop_calloc(la->c.n + nx + la->r.n + nextra + 2, sizeof *in);
    if (in == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    if (la->counted && la->indexed) {
        hop_node *i = hop_graph_call_op(s, HOP_OP_item, (hop_arg[]){hop_arg_node(x[0])}, 1);
        int64_t lo, hi;
        hop_shape_env_bounds(s->env, hop_graph_placeholder_at(la->f, 0)->meta->sym, &lo, &hi);
        st = i ? hop_shape_env_constrain(s->env, i->meta->sym, lo, hi) : hop_error_code();
        in[k++] = i;
    }
    hop_node *const *parts[4] = {c, x, r, extra};
    size_t counts[4] = {la->c.n, nx, la->r.n, nextra};
    for (int p = 0; p < 4; p++)
        for (size_t j = 0; j < counts[p]; j++)
            in[k++] = parts[p][j];
    if (st == HOP_OK)
        st = hop_graph_inline(s, body, in, outs);
    hop_free(in);
    return st;
}

/* Adds f's inputs of span sp to group `group` of the scan b builds, each
 * passed the primal (NULL prims: nothing, for the value of la->steps). */
static hop_status
inputs_like_f(const loop_ad *la, hop_build *b, const char *group, hop_span sp, hop_node **ph)
{
    for (size_t j = 0; j < sp.n; j++) {
        const hop_node *p = hop_graph_placeholder_at(la->f, sp.at + j);
        if ((ph[j] = hop_build_input(b, group, la->prim[sp.at + j], p->name, p->meta)) == NULL)
            return hop_error_code();
    }
    return HOP_OK;
}

/* The scan's xs of a step: a counted loop's one index, else f's xs. */
static hop_status
step_xs(const loop_ad *la, hop_build *b, hop_node **ph)
{
    if (!la->counted)
        return inputs_like_f(la, b, "xs", la->x, ph);
    return (ph[0] = hop_build_input(b, "xs", la->steps, "i", &la->ixm)) ? HOP_OK : hop_error_code();
}

/* The scan's leads. */
static hop_status
scan_leads(const loop_ad *la, hop_build *b, bool reverse, int64_t length)
{
    hop_status st = hop_build_lead(b, "reverse", hop_arg_bool(reverse));
    if (st == HOP_OK)
        st = hop_build_lead(b, "dim", hop_arg_int(la->dim));
    return st == HOP_OK ? hop_build_lead(b, "length", hop_arg_int(length)) : st;
}

/* ------------------------------------------------------------ reverse */

/* 1. The augmented forward: scan(f_fwd) with f_fwd(c, x, r) = (f's
 * outputs..., c...): the carries each step starts from, stacked. */
static hop_node *
augmented_forward(const loop_ad *la)
{
    char base[256];
    snprintf(base, sizeof base, "%s_fwd", la->f->name);
    size_t nx = la->counted ? 1 : la->x.n, nouts = la->nout + la->c.n;
    hop_node **ph = hop_calloc(la->c.n + nx + la->r.n + la->nout + 1, sizeof *ph);
    hop_node **xp = ph + la->c.n, **rp = xp + nx, **fo = rp + la->r.n;
    hop_value_info *outs = hop_calloc(nouts + 1, sizeof *outs);
    hop_build *b = ph && outs ? hop_build_new(la->g, &hop_scan_class) : NULL;
    hop_graph *fa = b ? hop_build_body(b, "f", base) : NULL;
    hop_status st = fa ? scan_leads(la, b, la->reverse, la->length) : hop_error_code();
    if (st == HOP_OK)
        st = inputs_like_f(la, b, "init", la->c, ph);
    if (st == HOP_OK)
        st = step_xs(la, b, xp);
    if (st == HOP_OK)
        st = inputs_like_f(la, b, "lifted", la->r, rp);
    if (st == HOP_OK)
        st = run_step(la, fa, la->f, ph, xp, rp, NULL, 0, fo);
    for (size_t j = 0; j < nouts && st == HOP_OK; j++) {
        hop_node *o = j < la->nout ? fo[j] : ph[j - la->nout];
        if (j >= la->nout)
            o = unit_dims(fa, o, stack_pad(o->meta->meta.rank, la->dim));
        st = o ? hop_build_output(b, "f", o) : hop_error_code();
    }
    hop_node *aug = NULL;
    if (st == HOP_OK) {
        for (size_t j = 0; j < la->nout; j++)
            outs[j] = la->call->outs[j];
        for (size_t j = 0; j < la->c.n; j++)
            outs[la->nout + j] = stacked_at(la->g->env, &la->call->outs[j], la->n, la->dim);
        aug = hop_build_emit(b, outs, nouts);
        b = NULL;
    }
    hop_build_free(b);
    hop_free(ph);
    hop_free(outs);
    return aug;
}

/* The cotangent of output j of the call, or zeros like meta. */
static hop_node *
ct_or_zeros(const loop_ad *la, size_t j, const hop_value_info *meta)
{
    hop_node *ct = hop_vjp_ct(la->cx, la->call, j);
    return ct ? ct : hop_vjp_zeros(la->cx, meta);
}

/*
 * One backward scan: the steps it runs and what seeds them.  An output of
 * f whose cotangent is zero (nothing differentiates it) is not an input of
 * the step's backward (HOP_CT_NONE: a symbolic zero, as PyTorch's None), so
 * its partials are never multiplied by a zero: 0 * inf (a partial that
 * overflowed) would be NaN where the answer is finite.  A y's is zero at
 * every step; a carry's at the first backward steps until a cotangent
 * reaches it, so those steps run alone (peeled), each with its own seeds
 * (backward_seeds), and one scan runs the rest.
 */
typedef struct bwd_phase {
    const hop_graph *bwd;    /* one step's backward, over the cts below */
    const hop_ct_kind *cts;  /* per output of f: whether bwd takes its cotangent */
    hop_node *const *init;   /* the scan's carries (NULL: the call's cts, zeros) */
    const hop_expr *lo, *hi; /* the steps [lo, hi) it runs (NULL: every step) */
    const char *suffix;      /* its body's name after f's */
    bool first;              /* the forward's first step: it reads the call's init */
} bwd_phase;

/* v's steps [lo, hi) along the loop's dim; v itself when ph runs all. */
static hop_node *
phase_steps(const loop_ad *la, const bwd_phase *ph, hop_node *v)
{
    if (v == NULL || ph->lo == NULL)
        return v;
    hop_arg a[] = {hop_arg_node(v), hop_arg_int(la->dim), hop_arg_sym(ph->lo),
                   hop_arg_sym(ph->hi), hop_arg_int(1)};
    return hop_graph_call_op(la->g, HOP_OP_slice, a, 5);
}

/* The backward scan's carries: the float carries' cotangents (`<c>_ct`,
 * entering as the call's), then the running sums of the float rest values'
 * gradients (`<r>_grad`, entering as zeros), or ph's init; their metadata
 * into outs. */
static hop_status
backward_carries(const loop_ad *la, const bwd_phase *ph, hop_build *b, hop_node **acc,
                 hop_value_info *outs, size_t *no)
{
    char name[256];
    size_t k = 0;
    for (size_t j = la->c.at; j < la->nph; j++) {
        bool carry = j < la->c.at + la->c.n;
        if (!la->wrt[j] || (!carry && j < la->r.at))
            continue;
        const hop_node *p = hop_graph_placeholder_at(la->f, j);
        snprintf(name, sizeof name, "%s%s", p->name, carry ? "_ct" : "_grad");
        const hop_value_info *m = carry && !la->counted ? &la->call->outs[j - la->c.at] : p->meta;
        hop_node *v = ph->init  ? ph->init[k++]
                      : carry ? ct_or_zeros(la, j - la->c.at, m)
                              : hop_vjp_zeros(la->cx, m);
        if (v == NULL || (acc[j] = hop_build_input(b, "init", v, name, p->meta)) == NULL)
            return hop_error_code();
        outs[(*no)++] = *v->meta;
    }
    return HOP_OK;
}

/* The backward scan's xs, each cut to ph's steps: f's xs (their values
 * into xv), the stacked carries (c, as f names them, their stack_pad unit
 * dims dropped in gb; the forward's first step's phase reads the call's
 * init instead, passed whole), the cotangents of the ys ph's step takes
 * (`<y>_ct`); their placeholders into x, c, cty. */
static hop_status
backward_xs(const loop_ad *la, const bwd_phase *ph, hop_build *b, hop_graph *gb, hop_node *aug,
            hop_node **x, hop_node **xv, hop_node **c, hop_node **cty, size_t *ncty)
{
    hop_status st = HOP_OK;
    size_t nx = la->counted ? 1 : la->x.n;
    for (size_t j = 0; j < nx && st == HOP_OK; j++) {
        const hop_node *p = la->counted ? NULL : hop_graph_placeholder_at(la->f, la->x.at + j);
        xv[j] = phase_steps(la, ph, la->counted ? la->steps : la->prim[la->x.at + j]);
        if (xv[j] == NULL || (x[j] = hop_build_input(b, "xs", xv[j], p ? p->name : "i",
                                                     p ? p->meta : &la->ixm)) == NULL)
            st = hop_error_code();
    }
    for (size_t j = 0; j < la->c.n && st == HOP_OK && ph->first; j++) {
        const hop_node *p = hop_graph_placeholder_at(la->f, la->c.at + j);
        if ((c[j] = hop_build_input(b, "lifted", la->prim[la->c.at + j], p->name, p->meta)) == NULL)
            st = hop_error_code();
    }
    for (size_t j = 0; j < la->c.n && st == HOP_OK && !ph->first; j++) {
        const hop_node *p = hop_graph_placeholder_at(la->f, la->c.at + j);
        hop_node *s = phase_steps(la, ph, hop_graph_getitem(la->g, aug, la->nout + j));
        hop_value_info m = padded(la->g->env, p->meta, la->dim);
        if (s == NULL || (c[j] = hop_build_input(b, "xs", s, p->name, &m)) == NULL ||
            (c[j] = unit_dims(gb, c[j], -stack_pad(p->meta->meta.rank, la->dim))) == NULL)
            st = hop_error_code();
    }
    char name[256];
    for (size_t j = la->c.n; j < la->nout && st == HOP_OK; j++) {
        if (ph->cts[j] != HOP_CT_INPUT)
            continue;
        const hop_arg *o = &la->f->output->args[j];
        snprintf(name, sizeof name, "%s_ct", o->kind == HOP_ARG_NODE ? o->u.node->name : "y");
        hop_node *v = phase_steps(la, ph, hop_vjp_ct(la->cx, la->call, j));
        if (v == NULL ||
            (cty[(*ncty)++] = hop_build_input(b, "xs", v, name, o->u.node->meta)) == NULL)
            st = hop_error_code();
    }
    return st;
}

/* The gradient of f's input j in bo, bwd's outputs: f's outputs, then one
 * gradient per wrt input in order. */
static hop_node *
grad_of(const loop_ad *la, hop_node *const *bo, size_t j)
{
    size_t gi = la->nout;
    for (size_t k = la->c.at; k < j; k++)
        gi += la->wrt[k];
    return bo[gi];
}

/* The backward step's outputs: the float carries' gradients, the running
 * sums of the float rest values' (acc + g), the float xs' gradients. */
static hop_status
backward_outputs(const loop_ad *la, hop_build *b, hop_graph *gb, hop_node *const *acc,
                 hop_node *const *bo)
{
    hop_status st = HOP_OK;
    for (size_t j = la->c.at; j < la->x.at && st == HOP_OK; j++)
        if (la->wrt[j])
            st = hop_build_output(b, "f", grad_of(la, bo, j));
    for (size_t j = la->r.at; j < la->nph && st == HOP_OK; j++) {
        if (!la->wrt[j])
            continue;
        hop_arg a[] = {hop_arg_node(acc[j]), hop_arg_node(grad_of(la, bo, j))};
        hop_node *d = hop_graph_call_op(gb, HOP_OP_add, a, 2);
        st = d ? hop_build_output(b, "f", d) : hop_error_code();
    }
    for (size_t j = la->x.at; j < la->r.at && st == HOP_OK; j++)
        if (la->wrt[j])
            st = hop_build_output(b, "f", grad_of(la, bo, j));
    return st;
}

/* 2. A backward: scan(f_bwd) the other way over ph's steps, f_bwd one
 * step's vjp graph of f (ph->bwd) inlined; its carries the cotangents and
 * gradient sums, its ys the float xs' gradients. */
static hop_node *
backward_scan(const loop_ad *la, const bwd_phase *ph, hop_node *aug)
{
    char base[256];
    snprintf(base, sizeof base, "%s_bwd%s", la->f->name, ph->suffix);
    size_t nx = la->counted ? 1 : la->x.n, nph = la->nph;
    hop_node **v = hop_calloc(3 * nph + 2 * nx + 3 * la->nout + 4, sizeof *v);
    hop_node **acc = v, **x = acc + nph, **xv = x + nx, **c = xv + nx, **cty = c + la->c.n;
    hop_node **rp = cty + la->nout, **cts = rp + la->r.n, **bo = cts + la->nout;
    hop_value_info *outs = hop_calloc(nph + 1, sizeof *outs);
    hop_build *b = v && outs ? hop_build_new(la->g, &hop_scan_class) : NULL;
    hop_graph *gb = b ? hop_build_body(b, "f", base) : NULL;
    hop_status st =
        gb ? scan_leads(la, b, !la->reverse, ph->lo ? -1 : la->length) : hop_error_code();
    size_t no = 0, ncty = 0, nct = 0;
    if (st == HOP_OK)
        st = backward_carries(la, ph, b, acc, outs, &no);
    if (st == HOP_OK)
        st = backward_xs(la, ph, b, gb, aug, x, xv, c, cty, &ncty);
    for (size_t j = 0; j < la->r.n && st == HOP_OK; j++) {
        const hop_node *p = hop_graph_placeholder_at(la->f, la->r.at + j);
        if ((rp[j] = hop_build_input(b, "lifted", la->prim[la->r.at + j], p->name, p->meta)) ==
            NULL)
            st = hop_error_code();
    }
    /* bwd's inputs after f's: the cotangents of f's outputs it takes */
    for (size_t j = 0; j < la->c.n; j++)
        if (ph->cts[j] == HOP_CT_INPUT)
            cts[nct++] = acc[la->c.at + j];
    memcpy(cts + nct, cty, ncty * sizeof *cts);
    if (st == HOP_OK)
        st = run_step(la, gb, ph->bwd, c, x, rp, cts, nct + ncty, bo);
    if (st == HOP_OK)
        st = backward_outputs(la, b, gb, acc, bo);
    for (size_t j = la->x.at; j < la->r.at && st == HOP_OK; j++)
        if (la->wrt[j])
            outs[no++] = *xv[j - la->x.at]->meta;
    hop_node *back = NULL;
    if (st == HOP_OK) {
        back = hop_build_emit(b, outs, no);
        b = NULL;
        if (la->counted)
            hop_graph_dce(gb); /* the step's forward values nothing reads */
    }
    hop_build_free(b);
    hop_free(v);
    hop_free(outs);
    return back;
}

/* 3. The gradients: the carries' and the rest's (the last phase's final
 * carries), then the xs' (the phases' ys, in the xs' order: the phases run
 * the steps the other way from the forward). */
static hop_status
accumulate(const loop_ad *la, hop_node *const *backs, size_t nb)
{
    hop_status st = HOP_OK;
    hop_arg *parts = hop_calloc(nb + 1, sizeof *parts);
    size_t q = 0;
    for (int xs = 0; xs < 2 && parts; xs++)
        for (size_t j = la->c.at; j < la->nph && st == HOP_OK; j++) {
            bool is_x = j >= la->x.at && j < la->r.at;
            if (!la->wrt[j] || is_x != (xs == 1))
                continue;
            hop_node *d = hop_graph_getitem(la->g, backs[nb - 1], q);
            for (size_t k = 0; k < nb && d && is_x && nb > 1; k++) {
                hop_node *e = hop_graph_getitem(la->g, backs[la->reverse ? k : nb - 1 - k], q);
                parts[k] = hop_arg_node(e);
                if (e == NULL)
                    d = NULL;
            }
            if (d && is_x && nb > 1) {
                hop_arg a[] = {hop_arg_list(parts, nb), hop_arg_int(la->dim)};
                d = hop_graph_call_op(la->g, HOP_OP_cat, a, 2);
            }
            q++;
            st = d ? hop_vjp_accumulate(la->cx, hop_node_passed_to(la->call, j)->u.node, d)
                   : hop_error_code();
        }
    hop_free(parts);
    return parts ? st : HOP_NOMEM;
}

/* Whether f's input j reaches (hop_ad_reach) an output k of f with
 * cts[k] == HOP_CT_INPUT (*yes); from (one per input of f) and reached (one
 * per output) are scratch. */
static hop_status
input_reaches(const loop_ad *la, size_t j, const hop_ct_kind *cts, bool *from, bool *reached,
              bool *yes)
{
    memset(from, 0, la->nph * sizeof *from);
    memset(reached, 0, la->nout * sizeof *reached);
    from[j] = true;
    hop_status st = hop_ad_reach(la->f, from, reached);
    *yes = false;
    for (size_t k = 0; k < la->nout && st == HOP_OK; k++)
        *yes = *yes || (cts[k] == HOP_CT_INPUT && reached[k]);
    return st;
}

/*
 * The seeds of the backward's phases, nout per phase in cts (room for
 * HOP_LOOP_PEEL_MAX + 2 phases): HOP_CT_INPUT for an output of f whose
 * cotangent the step's backward takes.  A y takes one at every step where
 * the call's has one; a carry at the first backward step where the call's
 * has one, and at the next where its input reaches an output whose
 * cotangent this step took.  Returns the number of steps peeled (run alone,
 * each with its own seeds) before the seeds settle; the phase after them
 * runs the other steps.  Unsettled after HOP_LOOP_PEEL_MAX steps (seeds
 * that cycle), the last phase takes every float carry's cotangent (zeros
 * where it has none).
 */
#define HOP_LOOP_PEEL_MAX 4
static size_t
backward_seeds(const loop_ad *la, hop_ct_kind *cts, hop_status *st)
{
    size_t nout = la->nout, np = 0;
    bool *from = hop_calloc(la->nph + 1, sizeof *from);
    bool *reached = hop_calloc(nout + 1, sizeof *reached);
    *st = from && reached ? HOP_OK : HOP_NOMEM;
    for (size_t j = 0; j < nout; j++)
        cts[j] = float_value(&la->call->outs[j]) && hop_vjp_ct(la->cx, la->call, j)
                     ? HOP_CT_INPUT
                     : HOP_CT_NONE;
    for (; *st == HOP_OK; np++) {
        hop_ct_kind *cur = cts + np * nout, *next = cur + nout;
        memcpy(next, cur, nout * sizeof *cts);
        for (size_t j = 0; j < la->c.n && *st == HOP_OK; j++) {
            bool yes = np == HOP_LOOP_PEEL_MAX;
            if (float_value(&la->call->outs[j]) && !yes)
                *st = input_reaches(la, la->c.at + j, cur, from, reached, &yes);
            if (float_value(&la->call->outs[j]))
                next[j] = yes ? HOP_CT_INPUT : HOP_CT_NONE;
        }
        if (*st != HOP_OK || np == HOP_LOOP_PEEL_MAX || memcmp(next, cur, nout * sizeof *cts) == 0)
            break;
    }
    if (np == HOP_LOOP_PEEL_MAX) /* the unsettled phase's seeds */
        memcpy(cts + np * nout, cts + (np + 1) * nout, nout * sizeof *cts);
    hop_free(from);
    hop_free(reached);
    return np;
}

/* The steps of phase p of np + 1 along the xs (with first, np + 2: the
 * last, np + 1, runs the forward's first step alone): the backward runs them
 * from the forward's last (first when the forward runs reverse), so peeled
 * step p is [Max(n - 1 - p, s), Max(n - p, s)) ([Min(e, p), Min(e, p + 1)))
 * and phase np the rest, with s = 0 and e = n, or with first s = Min(n, 1)
 * and e = Max(n - 1, 0), the first step's phase [0, s) ([e, n)); an empty
 * range runs no step (n = 0 passes the cotangents through). */
static hop_status
phase_range(const loop_ad *la, bwd_phase *ph, size_t p, size_t np, bool first)
{
    hop_shape_env *env = la->g->env;
    const hop_expr *zero = hop_sym_const(env, 0), *n = la->n;
    const hop_expr *s = first ? hop_sym_min(env, n, hop_sym_const(env, 1)) : zero;
    const hop_expr *e = first ? hop_sym_max(env, hop_sym_add_int(env, n, -1), zero) : n;
    const hop_expr *ends[2] = {la->reverse ? e : zero, la->reverse ? n : s};
    for (int k = 0; k < 2 && p <= np; k++) {
        int64_t at = (int64_t)p + k; /* an end, counted from the backward's start */
        if (la->reverse)
            ends[k] = k == 1 && p == np ? e : hop_sym_min(env, e, hop_sym_const(env, at));
        else
            ends[1 - k] = k == 1 && p == np ? s : hop_sym_max(env, hop_sym_add_int(env, n, -at), s);
    }
    if (ends[0] == NULL || ends[1] == NULL)
        return hop_error_code();
    ph->lo = ends[0];
    ph->hi = ends[1];
    return HOP_OK;
}

/* 2 and 3: the backward scans of the phases (np + 1, and the first
 * step's with first), each from the last's carries. */
static hop_status
backward_phases(const loop_ad *la, bwd_phase *ph, size_t np, bool first, hop_node *aug)
{
    size_t ncar = 0, nb = np + 1 + first;
    for (size_t j = la->c.at; j < la->nph; j++)
        ncar += la->wrt[j] && (j < la->x.at || j >= la->r.at);
    hop_node **init = hop_calloc(nb * ncar + 1, sizeof *init);
    hop_node **backs = hop_calloc(nb + 1, sizeof *backs);
    hop_status st = init && backs ? HOP_OK : HOP_NOMEM;
    for (size_t p = 0; p < nb && st == HOP_OK; p++) {
        if (np > 0 || first)
            st = phase_range(la, &ph[p], p, np, first);
        if (p > 0) {
            ph[p].init = init + p * ncar;
            for (size_t q = 0; q < ncar && st == HOP_OK; q++)
                if ((init[p * ncar + q] = hop_graph_getitem(la->g, backs[p - 1], q)) == NULL)
                    st = hop_error_code();
        }
        if (st == HOP_OK && (backs[p] = backward_scan(la, &ph[p], aug)) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK)
        st = accumulate(la, backs, nb);
    hop_free(init);
    hop_free(backs);
    return st;
}

/*
 * Whether the forward's first step gets a backward phase of its own, which
 * reads the carries it starts from as the call's init (passed whole) rather
 * than as the first row of the stacked carries; *q the phase whose seeds it
 * takes.  The values are the same, but a transformation of the backward
 * then sees the init's own tangent: under a jvp along a value the loop
 * closes over (not its init), the init has a symbolic zero one, where the
 * stacked carries' tangent has an instantiated zero in that row, which the
 * step's backward would multiply by its cotangent (0 * inf = nan where that
 * cotangent overflowed; PyTorch's unrolled loop never multiplies).  The
 * step's seeds are the rest's (*q = np) when nothing is peeled, else those
 * of the peeled phase it falls in (Min(n - 1, np)), known only for a
 * constant number of steps n: with peeled phases and a symbolic n (a
 * while_loop's count under grad of grad) the first step stays in its phase.
 * So does it when n is a compound expression (the steps of a backward's
 * phase, differentiated again): the phases' sizes (Max(n - 1, 0) of
 * Max(u0 - 1, 0), ...) would be expressions the shape env cannot prove
 * equal, and a third-order gradient of a while_loop fails to trace.
 */
static bool
first_step_phase(const loop_ad *la, size_t np, size_t *q)
{
    int64_t n;
    bool known = hop_expr_const_value(la->n, &n);
    if (np == 0 && (known || hop_expr_kind_of(la->n) == HOP_EXPR_SYMBOL))
        return true;
    if (!known)
        return false;
    *q = n >= 1 && (uint64_t)(n - 1) < np ? (size_t)(n - 1) : np;
    return true;
}

/* A counted loop of no step (constant bounds): the carries pass through. */
static hop_status
pass_through(hop_vjp_ctx *cx, const hop_node *call, const char *carries)
{
    size_t nc;
    const hop_arg *init = hop_node_group(call, carries, &nc);
    hop_status st = init ? HOP_OK : hop_error_code();
    for (size_t j = 0; j < nc && st == HOP_OK; j++) {
        hop_node *ct = hop_vjp_ct(cx, call, j);
        if (ct)
            st = hop_vjp_accumulate(cx, init[j].u.node, ct);
    }
    return st;
}

hop_status
hop_loop_vjp_counted(hop_vjp_ctx *cx, const hop_node *call, const char *body, const char *carries,
                     hop_arg lower, hop_arg upper)
{
    hop_loop lp = {.call = call, .body = body, .carries = carries, .lower = lower, .upper = upper};
    return hop_loop_vjp(cx, &lp);
}

hop_status
hop_loop_vjp(hop_vjp_ctx *cx, const hop_loop *lp)
{
    size_t nc;
    if (cx == NULL || lp == NULL || lp->call == NULL || lp->body == NULL || lp->carries == NULL)
        return hop_error(HOP_MISUSE, "hop_loop_vjp: NULL argument");
    if (hop_node_group(lp->call, lp->carries, &nc) == NULL)
        return hop_error_code();
    hop_status st = tensor_carries(lp->call, nc, "vjp");
    if (st != HOP_OK)
        return st;
    if (lp->xs == NULL && lp->lower.kind == HOP_ARG_INT && lp->upper.kind == HOP_ARG_INT &&
        lp->upper.u.i <= lp->lower.u.i)
        return pass_through(cx, lp->call, lp->carries);
    loop_ad la;
    hop_graph *bwd[HOP_LOOP_PEEL_MAX + 1] = {NULL};
    bwd_phase ph[HOP_LOOP_PEEL_MAX + 2] = {{0}};
    hop_node *aug = NULL;
    hop_ct_kind *cts = NULL;
    size_t np = 0;
    char base[256];
    st = loop_ad_of(cx, lp, &la);
    if (st == HOP_OK &&
        (cts = hop_calloc((HOP_LOOP_PEEL_MAX + 2) * la.nout + 1, sizeof *cts)) == NULL)
        st = HOP_NOMEM;
    if (st == HOP_OK)
        np = backward_seeds(&la, cts, &st);
    if (st == HOP_OK)
        st = loop_steps(&la);
    snprintf(base, sizeof base, "%s_step_bwd", la.f ? la.f->name : "f");
    /* one step's backward per phase: (f's inputs, cts of the outputs it
     * takes) -> (its outputs, the gradients); made before the forward for
     * a scan, after it for a counted loop (the order their symbols are made
     * in) */
    for (int pass = 0; pass < 2 && st == HOP_OK; pass++) {
        if (pass != (la.counted ? 1 : 0)) {
            if ((aug = augmented_forward(&la)) == NULL)
                st = hop_error_code();
            continue;
        }
        for (size_t p = 0; p <= np && st == HOP_OK; p++) {
            ph[p] = (bwd_phase){.cts = cts + p * la.nout, .suffix = p < np ? "_peel" : ""};
            st = (bwd[p] = hop_graph_new(la.g->env, base)) == NULL
                     ? hop_error_code()
                     : hop_vjp_graph(la.f, la.wrt, ph[p].cts, bwd[p]);
            ph[p].bwd = bwd[p];
        }
    }
    size_t q = np;
    bool first = st == HOP_OK && first_step_phase(&la, np, &q);
    if (first)
        ph[np + 1] =
            (bwd_phase){.bwd = ph[q].bwd, .cts = ph[q].cts, .suffix = "_first", .first = true};
    if (st == HOP_OK)
        st = backward_phases(&la, ph, np, first, aug);
    for (size_t p = 0; p <= HOP_LOOP_PEEL_MAX; p++)
        hop_graph_free(bwd[p]);
    hop_free(cts);
    loop_ad_free(&la);
    return st;
}

/* ------------------------------------------------------------ forward */

/* A loop as the forward rule sees it. */
/* Output j of the call, or its tangent; or the step counter of a loop
 * with peeled phases. */
typedef struct jvp_out {
    size_t j;
    bool tangent, counter;
} jvp_out;

typedef struct loop_jvp {
    hop_jvp_ctx *cx;
    const hop_node *call;
    const hop_graph *f;
    hop_graph *g;
    hop_layout l;
    size_t nc, nout; /* carries, f's outputs */
    hop_span c;      /* f's carries */
    bool *wrt;       /* per input of f: it has a tangent */
    bool *seed;      /* per input of f: the call passes it a tangent */
    bool *phase;     /* per phase, per input of f: the step reads its tangent */
    bool *reached;   /* per output of f: some phase's tangents reach it */
    size_t np;       /* peeled phases (the last phase, np, runs the rest) */
    hop_node **prim, **tan;
    jvp_out *order; /* the new call's outputs (norder) */
    size_t norder;
} loop_jvp;

/* The new call's outputs in order, as the twins return them: the carries,
 * the float carries' tangents, the ys, the tangents of the float ys a
 * phase's tangents reach.  A y no tangent reaches keeps a symbolic zero
 * tangent, as JAX's scan (its ys outside the nonzero tangents get Zero): an
 * instantiated zero would meet an infinite partial after the loop (0 * inf
 * = nan where PyTorch's loop and JAX give the derivative of a constant).
 * Derived once (jvp_order); the step twin's outputs, the call's output
 * metadata and the tangents set afterwards all read it. */
static hop_status
jvp_order(loop_jvp *lj)
{
    const hop_node *call = lj->call;
    size_t groups[3] = {0, lj->nc, call->nouts};
    if ((lj->order = hop_calloc(2 * call->nouts + 2, sizeof *lj->order)) == NULL)
        return HOP_NOMEM;
    for (int k = 0; k < 2; k++) {
        for (size_t j = groups[k]; j < groups[k + 1]; j++)
            lj->order[lj->norder++] = (jvp_out){j, false, false};
        for (size_t j = groups[k]; j < groups[k + 1]; j++)
            if (float_value(&call->outs[j]) && (k == 0 || lj->reached[j]))
                lj->order[lj->norder++] = (jvp_out){j, true, false};
        if (k == 0 && lj->np > 0)
            lj->order[lj->norder++] = (jvp_out){0, false, true};
    }
    return HOP_OK;
}

/* The primal and tangent of each input of f: every float carry has a
 * tangent (zeros where its init has none), the other float inputs where
 * theirs is not zero. */
static hop_status
jvp_inputs(loop_jvp *lj)
{
    hop_span made = hop_layout_span(&lj->l, HOP_SPAN_MADE);
    size_t n = lj->l.n, carries = made.n + lj->nc;
    lj->wrt = hop_calloc(2 * n + 1, sizeof *lj->wrt);
    lj->prim = hop_calloc(2 * n + 1, sizeof *lj->prim);
    if (lj->wrt == NULL || lj->prim == NULL)
        return HOP_NOMEM;
    lj->seed = lj->wrt + n;
    lj->tan = lj->prim + n;
    for (size_t j = made.n; j < n; j++) {
        const hop_node *v = hop_node_passed_to(lj->call, j)->u.node;
        const hop_value_info *m = hop_graph_placeholder_at(lj->f, j)->meta;
        bool fl = float_value(m);
        lj->prim[j] = hop_jvp_primal(lj->cx, v);
        lj->tan[j] = fl ? hop_jvp_tangent(lj->cx, v) : NULL;
        lj->seed[j] = lj->tan[j] != NULL;
        if (j < carries && fl && lj->tan[j] == NULL &&
            (lj->tan[j] = hop_jvp_zeros(lj->cx, m)) == NULL)
            return hop_error_code();
        lj->wrt[j] = lj->tan[j] != NULL;
        if (lj->prim[j] == NULL)
            return hop_error_code();
    }
    return HOP_OK;
}

/*
 * The phases of the step's tangent twin, as the reverse rule's
 * (backward_seeds): a carry whose init has no tangent has a symbolic zero
 * one, as PyTorch's and JAX's None, until a value with a tangent reaches it,
 * so the first steps read only the tangents they have (their twins never
 * multiply a partial by a zero: an overflowed partial gives no 0 * inf =
 * nan).  Phase 0 reads the carries' tangents the call passes (seed), phase
 * p + 1 those of the carries whose output phase p's tangents reach
 * (hop_ad_reach, which says how a nested HOP call's outputs are reached),
 * until the
 * set settles: phase np runs every other step.  Unsettled after
 * HOP_LOOP_PEEL_MAX steps, it reads every float carry's (zeros where the
 * carry has none).  The other inputs' tangents are read at every step.
 * lj->reached: the outputs of f some phase's tangents reach; a y no phase
 * reaches gets no tangent (jvp_order).
 */
static hop_status
jvp_phases(loop_jvp *lj)
{
    size_t n = lj->l.n;
    bool *reached = hop_calloc(lj->nout + 1, sizeof *reached);
    hop_status st = reached ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK && (lj->phase = hop_calloc((HOP_LOOP_PEEL_MAX + 2) * n + 1, 1)) == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; st == HOP_OK && j < n; j++)
        lj->phase[j] = j >= lj->c.at && j < lj->c.at + lj->c.n ? lj->seed[j] : lj->wrt[j];
    for (lj->np = 0; st == HOP_OK; lj->np++) {
        bool *cur = lj->phase + lj->np * n, *next = cur + n;
        memset(reached, 0, lj->nout * sizeof *reached);
        if ((st = hop_ad_reach(lj->f, cur, reached)) != HOP_OK)
            break;
        memcpy(next, cur, n);
        for (size_t k = 0; k < lj->c.n; k++) {
            size_t j = lj->c.at + k;
            next[j] = lj->wrt[j] && (lj->np == HOP_LOOP_PEEL_MAX || reached[k]);
        }
        if (memcmp(next, cur, n) == 0)
            break;
        if (lj->np == HOP_LOOP_PEEL_MAX) {
            memcpy(cur, next, n); /* the unsettled phase reads every float carry's */
            break;
        }
    }
    if (st == HOP_OK)
        memset(reached, 0, lj->nout * sizeof *reached);
    for (size_t p = 0; p <= lj->np && st == HOP_OK; p++)
        st = hop_ad_reach(lj->f, lj->phase + p * n, reached);
    lj->reached = reached;
    return st;
}

/* A placeholder of every twin like made input p: a fresh unbacked symbol of
 * p's range (the new loop binds its own index; inlining maps p's symbol to
 * it). */
static hop_status
made_like(loop_jvp *lj, hop_build *b, const hop_node *p)
{
    hop_value_info m = *p->meta;
    if (m.kind == HOP_VALUE_SYM) {
        int64_t lo, hi;
        hop_shape_env_bounds(lj->g->env, p->meta->sym, &lo, &hi);
        if ((m.sym = hop_shape_env_unbacked(lj->g->env, lo, hi)) == NULL)
            return hop_error_code();
    }
    return hop_build_made(b, p->name, &m) ? HOP_OK : hop_error_code();
}

/* The step counter of a loop with peeled phases: an i64 carry `k` from 0,
 * after the carries' tangents. */
static hop_status
counter_input(loop_jvp *lj, hop_build *b, const char *group)
{
    hop_value_info km = {.kind = HOP_VALUE_TENSOR};
    hop_status st = hop_meta_init(&km.meta, lj->g->env, HOP_I64, 0, NULL);
    hop_node *k0 =
        st == HOP_OK
            ? hop_graph_call_op(
                  lj->g, HOP_OP_full,
                  (hop_arg[]){hop_arg_list(NULL, 0), hop_arg_int(0), hop_arg_dtype(HOP_I64)}, 3)
            : NULL;
    return k0 && hop_build_input(b, group, k0, "k", &km) ? HOP_OK : hop_error_code();
}

/* The twins' inputs: the made ones, then each group's primals followed by
 * its tangents (`<x>_dot`), the carries' by the step counter when the loop
 * has peeled phases. */
static hop_status
twin_inputs(loop_jvp *lj, hop_build *b)
{
    hop_status st = HOP_OK;
    char name[256];
    for (size_t s = 0; s < lj->l.nspans && st == HOP_OK; s++) {
        hop_span sp = lj->l.spans[s];
        const char *group = lj->l.names[s];
        for (size_t j = sp.at; j < sp.at + sp.n && st == HOP_OK; j++) {
            const hop_node *p = hop_graph_placeholder_at(lj->f, j);
            if (s == 0)
                st = made_like(lj, b, p);
            else if (hop_build_input(b, group, lj->prim[j], p->name, p->meta) == NULL)
                st = hop_error_code();
        }
        for (size_t j = sp.at; s > 0 && j < sp.at + sp.n && st == HOP_OK; j++) {
            if (!lj->wrt[j])
                continue;
            const hop_node *p = hop_graph_placeholder_at(lj->f, j);
            snprintf(name, sizeof name, "%s_dot", p->name);
            if (hop_build_input(b, group, lj->tan[j], name, p->meta) == NULL)
                st = hop_error_code();
        }
        if (st == HOP_OK && lj->np > 0 && sp.at == lj->c.at && s > 0)
            st = counter_input(lj, b, group);
    }
    return st;
}

/* t's placeholders by f's input index: primals into ph, tangents into dot
 * (the twins' layout: each span's primals, then its tangents), the step
 * counter after the carries' (a twin's when `counted` and the loop has one;
 * a phase's switch branch has none) into *k when k is not NULL. */
static void
twin_placeholders(const loop_jvp *lj, const hop_graph *t, hop_node **ph, hop_node **dot,
                  bool counted, hop_node **k)
{
    const hop_node *q = t->first;
    for (size_t s = 0; s < lj->l.nspans; s++) {
        hop_span sp = lj->l.spans[s];
        for (size_t j = sp.at; j < sp.at + sp.n; j++, q = q->next)
            ph[j] = (hop_node *)q;
        for (size_t j = sp.at; j < sp.at + sp.n; j++)
            if (lj->wrt[j]) {
                dot[j] = (hop_node *)q;
                q = q->next;
            }
        if (counted && lj->np > 0 && sp.at == lj->c.at && s > 0) {
            if (k)
                *k = (hop_node *)q;
            q = q->next;
        }
    }
}

/* Phase p's step inlined into t (a twin, or a branch of its switch) from
 * t's placeholders: the outputs in jvp_order's order into outs (the
 * counter's slot left NULL). */
static hop_status
phase_step(loop_jvp *lj, hop_graph *t, size_t p, hop_node **outs)
{
    size_t n = lj->l.n, nout = lj->nout;
    hop_node **v = hop_calloc(2 * n + 2 * nout + 1, sizeof *v);
    if (v == NULL)
        return HOP_NOMEM;
    hop_node **ph = v, **dot = v + n, **jo = dot + n;
    twin_placeholders(lj, t, ph, dot, false, NULL);
    hop_status st = hop_jvp_inline(t, lj->f, lj->phase + p * n, ph, dot, jo);
    for (size_t k = 0; k < lj->norder && st == HOP_OK; k++)
        outs[k] = lj->order[k].counter ? NULL : jo[lj->order[k].tangent * nout + lj->order[k].j];
    hop_free(v);
    return st;
}

/* The steps of a loop with peeled phases: switch(k, phase 0, ..., phase
 * np) over t's inputs but the counter k (the switch clamps: phase np runs
 * from step np on), its results and k + 1 into outs. */
static hop_status
phase_switch(loop_jvp *lj, hop_graph *t, hop_node **outs)
{
    size_t n = lj->l.n;
    hop_node **v = hop_calloc(2 * n + lj->norder + 1, sizeof *v), *k = NULL;
    hop_value_info *meta = hop_calloc(lj->norder + 1, sizeof *meta);
    hop_build *b = v && meta ? hop_build_new(t, &hop_switch_class) : NULL;
    hop_status st = b ? HOP_OK : hop_error_code();
    hop_graph *br[HOP_LOOP_PEEL_MAX + 1] = {NULL};
    char name[256];
    twin_placeholders(lj, t, v, v + n, true, &k);
    for (size_t p = 0; p <= lj->np && st == HOP_OK; p++) {
        snprintf(name, sizeof name, "%s_jvp_%s", lj->f->name, p < lj->np ? "peel" : "steps");
        st = (br[p] = hop_build_body(b, "branches", name)) ? HOP_OK : hop_error_code();
    }
    hop_node *ki =
        st == HOP_OK ? hop_graph_call_op(t, HOP_OP_item, (hop_arg[]){hop_arg_node(k)}, 1) : NULL;
    if (st == HOP_OK)
        st = ki ? hop_build_lead(b, "index", hop_arg_node(ki)) : hop_error_code();
    for (size_t j = 0; j < t->nplaceholders && st == HOP_OK; j++) {
        hop_node *q = hop_graph_placeholder_at(t, j);
        if (q != k && hop_build_input(b, "operands", q, q->name, q->meta) == NULL)
            st = hop_error_code();
    }
    size_t nr = 0;
    for (size_t p = 0; p <= lj->np && st == HOP_OK; p++) {
        hop_node **o = v + 2 * n;
        st = phase_step(lj, br[p], p, o);
        for (size_t j = 0; j < lj->norder && st == HOP_OK; j++) {
            if (o[j] == NULL)
                continue;
            if (p == lj->np)
                meta[nr++] = *o[j]->meta;
            st = hop_build_output_of(b, br[p], o[j]);
        }
    }
    hop_node *r = NULL;
    if (st == HOP_OK) {
        r = hop_build_emit(b, meta, nr);
        b = NULL;
        st = r ? HOP_OK : hop_error_code();
    }
    hop_arg k1[2] = {hop_arg_node(k), hop_arg_int(1)};
    for (size_t j = 0, at = 0; j < lj->norder && st == HOP_OK; j++) {
        outs[j] = lj->order[j].counter ? hop_graph_call_op(t, HOP_OP_add, k1, 2)
                                       : hop_graph_getitem(t, r, at++);
        st = outs[j] ? HOP_OK : hop_error_code();
    }
    hop_build_free(b);
    hop_free(meta);
    hop_free(v);
    return st;
}

/* f's twin: its tangent graph inlined (under a switch over the phases when
 * the loop peels some); returns the carries, their tangents (float ones),
 * the step counter, the ys, theirs. */
static hop_status
step_twin(loop_jvp *lj, hop_build *b, hop_graph *t)
{
    hop_node **outs = hop_calloc(lj->norder + 1, sizeof *outs);
    if (outs == NULL)
        return HOP_NOMEM;
    hop_status st = lj->np > 0 ? phase_switch(lj, t, outs) : phase_step(lj, t, 0, outs);
    for (size_t k = 0; k < lj->norder && st == HOP_OK; k++)
        st = hop_build_output_of(b, t, outs[k]);
    hop_free(outs);
    return st;
}

/* The twin of another body g (a while_loop's cond_fn): g on the primals. */
static hop_status
other_twin(loop_jvp *lj, hop_build *b, hop_graph *t, const hop_graph *g)
{
    size_t n = lj->l.n, no = g->output->nargs;
    hop_node **v = hop_calloc(2 * n + no + 1, sizeof *v);
    if (v == NULL)
        return HOP_NOMEM;
    twin_placeholders(lj, t, v, v + n, true, NULL);
    hop_status st = hop_graph_inline(t, g, v, v + 2 * n);
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = hop_build_output_of(b, t, v[2 * n + j]);
    hop_free(v);
    return st;
}

/* The leads as the call has them, a node lead's primal. */
static hop_status
jvp_leads(loop_jvp *lj, hop_build *b)
{
    size_t np;
    const hop_param *p = hop_class_params(lj->call->cls, &np);
    hop_status st = HOP_OK;
    for (size_t k = 0; k < np && st == HOP_OK; k++) {
        if (!hop_param_is_lead(p[k].kind))
            continue;
        hop_arg a = *hop_node_param(lj->call, p[k].name);
        if (a.kind == HOP_ARG_NODE && (a.u.node = hop_jvp_primal(lj->cx, a.u.node)) == NULL)
            return hop_error_code();
        st = hop_build_lead(b, p[k].name, a);
    }
    return st;
}

/* The twins, one per body of the call, `<body>_jvp`; the step's first. */
static hop_status
jvp_twins(loop_jvp *lj, hop_build *b, const char *body, hop_graph **twins, size_t *nt)
{
    size_t np;
    const hop_param *p = hop_class_params(lj->call->cls, &np);
    char base[256];
    *nt = 0;
    for (int step = 1; step >= 0; step--)
        for (size_t k = 0; k < np; k++) {
            if (p[k].kind != HOP_PARAM_BODY || (strcmp(p[k].name, body) == 0) != (step == 1))
                continue;
            snprintf(base, sizeof base, "%s_jvp", hop_node_body(lj->call, p[k].name)->name);
            if ((twins[(*nt)++] = hop_build_body(b, p[k].name, base)) == NULL)
                return hop_error_code();
        }
    return HOP_OK;
}

/* The twins filled: the step's, then the others' in parameter order. */
static hop_status
fill_twins(loop_jvp *lj, hop_build *b, const char *body, hop_graph *const *twins)
{
    size_t np, t = 1;
    const hop_param *p = hop_class_params(lj->call->cls, &np);
    hop_status st = step_twin(lj, b, twins[0]);
    for (size_t k = 0; k < np && st == HOP_OK; k++)
        if (p[k].kind == HOP_PARAM_BODY && strcmp(p[k].name, body) != 0)
            st = other_twin(lj, b, twins[t++], hop_node_body(lj->call, p[k].name));
    return st;
}

/* The new call's outputs' metadata: the call's, in jvp_order's order. */
static hop_value_info *
jvp_outs(const loop_jvp *lj)
{
    hop_value_info *outs = hop_calloc(lj->norder + 1, sizeof *outs);
    for (size_t k = 0; outs && k < lj->norder; k++) {
        if (!lj->order[k].counter) {
            outs[k] = lj->call->outs[lj->order[k].j];
        } else if (outs[k] = (hop_value_info){.kind = HOP_VALUE_TENSOR},
                   hop_meta_init(&outs[k].meta, lj->g->env, HOP_I64, 0, NULL) != HOP_OK) {
            hop_free(outs);
            return NULL;
        }
    }
    return outs;
}

/* Whether carry j's tangent is zero after any number of steps: its init
 * has none and no phase's step reaches it (phase p + 1 reads the tangents
 * phase p's outputs have, and the last phase is settled). */
static bool
carry_tangent_zero(const loop_jvp *lj, size_t j)
{
    for (size_t p = 0; p <= lj->np; p++)
        if (lj->phase[p * lj->l.n + lj->c.at + j])
            return false;
    return true;
}

/* The tangents of the call's float outputs: the new call r's outputs that
 * jvp_order says are tangents.  A carry whose tangent is zero after any
 * number of steps keeps a symbolic zero one, as JAX's scan (the carries
 * outside its fixpoint of nonzero tangents get Zero): a rule after the loop
 * (the next phase of a loop's backward) never multiplies the loop's
 * instantiated zeros by a partial that may be infinite. */
static hop_status
set_tangents(loop_jvp *lj, hop_node *r)
{
    hop_status st = HOP_OK;
    for (size_t k = 0; k < lj->norder && st == HOP_OK; k++) {
        if (!lj->order[k].tangent ||
            (lj->order[k].j < lj->nc && carry_tangent_zero(lj, lj->order[k].j)))
            continue;
        hop_node *t = hop_graph_getitem(lj->g, r, k);
        st = t ? hop_jvp_set_tangent(lj->cx, lj->call, lj->order[k].j, t) : hop_error_code();
    }
    return st;
}

hop_status
hop_loop_jvp(hop_jvp_ctx *cx, const hop_node *call, const char *body, const char *carries)
{
    loop_jvp lj = {.cx = cx, .call = call};
    if (cx == NULL || call == NULL || body == NULL || carries == NULL)
        return hop_error(HOP_MISUSE, "hop_loop_jvp: NULL argument");
    if (hop_node_group(call, carries, &lj.nc) == NULL || (lj.f = hop_node_body(call, body)) == NULL)
        return hop_error_code();
    hop_status st = tensor_carries(call, lj.nc, "jvp");
    if (st == HOP_OK)
        st = hop_layout_of(call, &lj.l);
    if (st == HOP_OK && lj.f->nplaceholders != lj.l.n)
        st = hop_error(HOP_MISUSE, "hop_loop_jvp: %s's body %s takes %zu inputs, not %zu",
                       call->name, lj.f->name, lj.f->nplaceholders, lj.l.n);
    lj.g = hop_jvp_out(cx);
    lj.nout = lj.f->output ? lj.f->output->nargs : 0;
    if (st == HOP_OK)
        lj.c = hop_layout_span(&lj.l, carries);
    if (st == HOP_OK)
        st = jvp_inputs(&lj);
    if (st == HOP_OK)
        st = jvp_phases(&lj);
    if (st == HOP_OK)
        st = jvp_order(&lj);
    hop_build *b = st == HOP_OK ? hop_build_new(lj.g, call->cls) : NULL;
    hop_graph *twins[HOP_MAX_BODIES];
    size_t nt = 0;
    if (st == HOP_OK && b == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = jvp_twins(&lj, b, body, twins, &nt);
    if (st == HOP_OK)
        st = jvp_leads(&lj, b);
    if (st == HOP_OK)
        st = twin_inputs(&lj, b);
    if (st == HOP_OK)
        st = fill_twins(&lj, b, body, twins);
    hop_value_info *outs = st == HOP_OK ? jvp_outs(&lj) : NULL;
    hop_node *r = NULL;
    if (st == HOP_OK && outs == NULL)
        st = HOP_NOMEM;
    if (st == HOP_OK) {
        r = hop_build_emit(b, outs, lj.norder);
        b = NULL;
        st = r ? HOP_OK : hop_error_code();
    }
    for (size_t k = 0; k < nt && st == HOP_OK; k++)
        hop_graph_dce(twins[k]); /* the forward values no output reads */
    if (st == HOP_OK)
        st = set_tangents(&lj, r);
    hop_build_free(b);
    hop_free(outs);
    hop_free(lj.wrt);
    hop_free(lj.phase);
    hop_free(lj.reached);
    hop_free(lj.prim);
    hop_free(lj.order);
    return st;
}

/* The loop's reach (hop/class.h's slot): a monotone fixed point over the
 * carries, from the values the call passes, then one more pass for the
 * ys.  It contains every phase hop_loop_jvp peels (each phase's carries
 * are reached ones of the phase before), so an output it leaves unreached
 * is one hop_loop_jvp gives no tangent (or zeros). */
hop_status
hop_loop_reach(const hop_node *call, const char *body, const char *carries, const bool *from,
               bool *reached)
{
    if (call == NULL || body == NULL || carries == NULL || from == NULL || reached == NULL)
        return hop_error(HOP_MISUSE, "hop_loop_reach: NULL argument");
    size_t nc;
    const hop_graph *f;
    hop_layout l;
    if (hop_node_group(call, carries, &nc) == NULL || (f = hop_node_body(call, body)) == NULL)
        return hop_error_code();
    hop_status st = hop_layout_of(call, &l);
    if (st != HOP_OK)
        return st;
    hop_span made = hop_layout_span(&l, HOP_SPAN_MADE), c = hop_layout_span(&l, carries);
    size_t nout = f->output ? f->output->nargs : 0;
    if (f->nplaceholders != l.n || nout != call->nouts || c.n != nc || nc > nout)
        return hop_error(HOP_MISUSE, "hop_loop_reach: %s is not laid out as a loop", call->name);
    bool *cur = hop_calloc(l.n + nout + 1, sizeof *cur), *out = cur + l.n;
    if (cur == NULL)
        return HOP_NOMEM;
    for (size_t j = made.n; j < l.n; j++)
        cur[j] = from[j - made.n];
    for (bool grew = true; grew && st == HOP_OK;) {
        memset(out, 0, nout * sizeof *out);
        st = hop_ad_reach(f, cur, out);
        grew = false;
        for (size_t k = 0; k < nc && st == HOP_OK; k++)
            if (out[k] && !cur[c.at + k])
                cur[c.at + k] = grew = true;
    }
    for (size_t k = 0; k < nout && st == HOP_OK; k++)
        reached[k] = reached[k] || (k < nc ? cur[c.at + k] : out[k]);
    hop_free(cur);
    return st;
}
