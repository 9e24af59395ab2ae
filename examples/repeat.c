/*
 * examples/repeat.c - a HOP in one file, against the public API only:
 * repeat(n, body, x, *args) applies body to x n times (x -> body(x, *args)
 * -> ...).  x is a carry: in the body it is the current value.  The class
 * fills the slots where repeat differs from the PrimHOP base (tracing checks,
 * what a well-formed call node is, a counted loop, eval, reverse mode and
 * vmap: the last three with the loop kit, hop/loop_kit.h); its library's
 * descriptor (HOP_LIBRARY) names the init that registers it, so Python loads
 * it with hop.load_library (docs/DEFINING_A_HOP.md walks through it).  It
 * has no forward mode: the loop kit's is the HOP again with each group
 * followed by its tangents, and repeat's x takes one value.
 */
#include <hop.h>


/* n >= 0 and one x: checked when traced and when run. */
static hop_status
check_args(int64_t n, size_t nx)
{
    if (n < 0)
        return hop_error(HOP_INVALID, "repeat: n must be >= 0, got %lld", (long long)n);
    if (nx != 1)
        return hop_error(HOP_INVALID, "repeat: x must be one value, got %zu", nx);
    return HOP_OK;
}

/* The body's result feeds its next iteration, so it must look like x. */
static hop_status
wrong_result(const char *want, size_t n, const char *got)
{
    return hop_error(HOP_TRACE,
                     "repeat: the body must return one %s like x; it returns %zu "
                     "value(s), the first %s",
                     want, n, got);
}

/* ---- tracing */

static hop_status
repeat_check_operands(hop_call *c)
{
    size_t nx;
    hop_call_group(c, "x", &nx);
    hop_status st = check_args(hop_call_param(c, "n")->u.i, nx);
    return st == HOP_OK ? hop_prim_hop_base()->check_operands(c) : st;
}

static hop_status
repeat_output_meta(hop_call *c)
{
    const hop_values *r = &c->results[0];
    const hop_value_info *x = c->operands[0]->meta;
    bool same = false;
    hop_status st = r->n == 1 ? hop_value_info_decide_same(hop_output_graph_env(c->og), x,
                                                           r->items[0]->meta, "repeat", &same)
                              : HOP_OK;
    if (st != HOP_OK || same)
        return st == HOP_OK ? hop_prim_hop_base()->output_meta(c) : st;
    char want[96], got[96] = "nothing";
    hop_value_info_print(x, want, sizeof want);
    if (r->n > 0)
        hop_value_info_print(r->items[0]->meta, got, sizeof got);
    return wrong_result(want, r->n, got);
}

/* ---- verifying: a call node, traced or loaded from a file, passes the
 * checks tracing made; the base checks the body against what is passed. */
static hop_status
repeat_verify(const hop_node *call)
{
    size_t nx;
    hop_node_group(call, "x", &nx);
    hop_status st = check_args(hop_node_param(call, "n")->u.i, nx);
    return st == HOP_OK ? hop_verify_default(call) : hop_verify_error(call, st);
}

/* ---- lowering: n times carry = body(carry, *args), the carry
 * double-buffered (the body writes the next value, then the buffers swap). */
static hop_status
repeat_lower(hop_lower_ctx *cx, const hop_node *call)
{
    size_t n;
    const hop_graph *body = hop_node_body(call, "body");
    hop_pval *in = hop_lower_passed(cx, call, &n), i;
    hop_pval count = {HOP_PVAL_CONST, -1, hop_node_param(call, "n")->u.i};
    hop_loop_carry lc;
    if (body == NULL || in == NULL)
        return hop_error_code();
    hop_status st = hop_lower_carry_begin(cx, call->outs, in, 1, &lc);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &i);
    in[0] = lc.cur[0];
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n, lc.next, lc.got, 1);
    if (st == HOP_OK)
        st = hop_lower_carry_loop_end(cx, &lc);
    return st == HOP_OK ? hop_lower_results(cx, lc.out, 1) : st;
}

/* ---- eval: the same loop on concrete values, with the same checks: the
 * loop kit's carry-evaluation loop (hop/loop_kit.h) runs the body on the
 * current x. */
static hop_status
repeat_eval(hop_eval_ctx *ex)
{
    hop_rt_arg n;
    size_t nx;
    hop_eval_loop l;
    hop_status st = hop_eval_param(ex, "n", &n);
    if (st == HOP_OK && hop_eval_group(ex, "x", &nx))
        st = check_args(n.u.i, nx);
    if (st != HOP_OK)
        return st;
    st = hop_eval_loop_begin(ex, 0, "x", &l);
    for (int64_t k = 0; k < n.u.i && st == HOP_OK; k++) {
        hop_rt_values next = {NULL, 0, 0};
        st = hop_eval_loop_run(&l, "body", &next);
        if (st == HOP_OK && (next.n != 1 || !hop_eval_same_kind(&next.items[0], &l.init[0]))) {
            char want[96], got[96] = "nothing";
            hop_eval_describe(&l.init[0], want, sizeof want);
            if (next.n > 0)
                hop_eval_describe(&next.items[0], got, sizeof got);
            st = wrong_result(want, next.n, got);
        }
        if (st == HOP_OK)
            hop_eval_loop_take(&l, &next);
        hop_rt_values_clear(&next);
    }
    return hop_eval_loop_end(&l, st);
}

/* ---- reverse mode: repeat is a counted loop, so the loop kit emits its vjp
 * (a forward scan over the n steps that stacks x, then a scan the other way
 * running the body's vjp graph, docs/AUTODIFF.md). */
static hop_status
repeat_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    return hop_loop_vjp_counted(cx, call, "body", "x", hop_arg_int(0), *hop_node_param(call, "n"));
}

/* ---- vmap: repeat again over the body batched; x is batched when it is or
 * the body makes it so. */
static hop_status
repeat_batch(hop_batch_ctx *cx, const hop_node *call)
{
    return hop_loop_batch(cx, call, "body", "x", NULL, NULL);
}

static const hop_class repeat_class = {
    .name = "repeat",
    .params = {{"n", HOP_PARAM_INT},
               {"body", HOP_PARAM_BODY, "repeat_body"},
               {"x", HOP_PARAM_CARRY},
               {"args", HOP_PARAM_VARARGS}},
    .doc = "repeat(n, body, x, *args): body applied to x n times, body(x, *args) -> x.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = repeat_check_operands,
    .output_meta = repeat_output_meta,
    .verify = repeat_verify,
    .lower = repeat_lower,
    .eval = repeat_eval,
    .vjp = repeat_vjp,
    .batch = repeat_batch,
};

/* The library's init and its descriptor: hop.load_library (hop_load_library)
 * checks the descriptor, then runs the init. */
static hop_status
repeat_init(void)
{
    return hop_register_hop(&repeat_class);
}

HOP_LIBRARY(repeat_init);
