/*
 * tests/c/test_hop_classes.c - a HOP as one class: the signature binds a
 * call's arguments, the call node's layout follows it (leads, bodies, one
 * list per group, the lifted values last), the accessors read it by name,
 * the print slot prints it, check_operands may inline a body, eval runs
 * the same class on concrete values with host bodies, and libraries of
 * HOPs load at run time.  Each error leaves every state as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static hop_node *
op2(hop_tracer *t, hop_op op, hop_node *a, hop_node *b)
{
    return hop_tracer_call_op(t, op, (hop_arg[]){hop_arg_node(a), hop_arg_node(b)}, 2);
}

/* body(carry, row, *rest) = carry + row * w, w closed over (ud). */
static hop_status
axpy_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    assert_true(n >= 2);
    hop_node *m = op2(t, HOP_OP_mul, in[1], ud);
    hop_node *a = m ? op2(t, HOP_OP_add, in[0], m) : NULL;
    return a ? hop_values_push(out, a) : hop_error_code();
}

static char *
code_of(hop_output_graph *og, hop_node *result)
{
    assert_non_null(
        hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){hop_arg_node(result)}, 1));
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
    char *code = hop_graph_code(hop_output_graph_root_graph(og));
    assert_non_null(code);
    return code;
}

static void
assert_text(char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        fprintf(stderr, "---- got ----\n%s---- want ----\n%s----\n", got, want);
    assert_string_equal(got, want);
    hop_free(got);
}

/* A left fold over rows, in the test (examples/fold.c is the full one):
 * two groups, explicit inputs, so its lifted values get a list of their
 * own; printed by its print slot with the groups named. */
static size_t
fold_print(const hop_node *call, char *buf, size_t cap)
{
    size_t ni, nx, nl;
    const hop_arg *init = hop_node_group(call, "init", &ni), *xs = hop_node_group(call, "xs", &nx);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    int w = snprintf(buf, cap, "fold(%s, init=%s, xs=%s, lifted=%zu)",
                     hop_node_body(call, "f")->name, ni ? init[0].u.node->name : "-",
                     nx ? xs[0].u.node->name : "-", nl + 0 * (lifted != NULL));
    return w < 0 ? 0 : (size_t)w;
}

static hop_status
fold_body_inputs(hop_call *c)
{
    size_t ninit, nxs;
    hop_call_group(c, "init", &ninit);
    hop_call_group(c, "xs", &nxs);
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    for (size_t i = ninit; i < ninit + nxs && st == HOP_OK; i++) {
        hop_meta *m = &c->input_meta[i].meta;
        memmove(m->sizes, m->sizes + 1, (size_t)(m->rank - 1) * sizeof *m->sizes);
        m->rank--;
    }
    return st;
}

/* Its verify says what body_inputs does: the xs' inputs are rows. */
static bool
fold_row(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    size_t ninit, nxs;
    (void)ud, (void)body;
    hop_node_group(call, "init", &ninit);
    hop_node_group(call, "xs", &nxs);
    if (j >= ninit && j < ninit + nxs)
        *want = hop_value_info_drop_dim(want, 0);
    return true;
}

static hop_status
fold_verify(const hop_node *call)
{
    return hop_verify_bodies(call, fold_row, NULL, NULL);
}

static const hop_class fold_class = {
    .name = "tfold",
    .params = {{"f", HOP_PARAM_BODY, "tfold_body"},
               {"init", HOP_PARAM_VALUES, NULL},
               {"xs", HOP_PARAM_VALUES, NULL}},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .body_inputs = fold_body_inputs,
    .verify = fold_verify,
    .print = fold_print,
};

/* The same without a verify slot: the base's refuses the rows its
 * body_inputs made, so tracing refuses the call, naming the HOP. */
static const hop_class unverified_fold_class = {
    .name = "ufold",
    .params = {{"f", HOP_PARAM_BODY, "ufold_body"},
               {"init", HOP_PARAM_VALUES, NULL},
               {"xs", HOP_PARAM_VALUES, NULL}},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .body_inputs = fold_body_inputs,
};

/* A class with every kind of lead, to read them back by name. */
static const hop_class leads_class = {
    .name = "leads",
    .params = {{"k", HOP_PARAM_INT, NULL},
               {"alpha", HOP_PARAM_FLOAT, NULL},
               {"flag", HOP_PARAM_BOOL, NULL},
               {"dt", HOP_PARAM_DTYPE, NULL},
               {"body", HOP_PARAM_BODY, "leads_body"},
               {"args", HOP_PARAM_VARARGS, NULL}},
    .input_mode = HOP_INPUTS_LIFTED,
};

static hop_status
identity_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)t;
    (void)ud;
    return n ? hop_values_push(out, in[0]) : hop_error(HOP_INVALID, "no input");
}

/* ---------------------------------------------------------------- layout */

static void
test_a_call_node_holds_leads_bodies_and_one_list_per_group_with_lifted_last(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {5, 3}, ws[] = {3};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, xs, true);
    hop_node *w = hop_output_graph_add_input(og, "w", HOP_F32, 1, ws, true);
    hop_node *c0 =
        hop_tracer_call_op(hop_output_graph_root(og), HOP_OP_select,
                           (hop_arg[]){hop_arg_node(x), hop_arg_int(0), hop_arg_int(0)}, 3);
    hop_arg init = hop_arg_node(c0), rows = hop_arg_node(x);
    hop_arg args[] = {hop_arg_list(&init, 1), hop_arg_list(&rows, 1)};
    hop_body b = {axpy_body, w};
    hop_values out = {0};
    size_t before = hop_output_graph_root_graph(og)->nnodes;
    assert_int_equal(hop_apply(og, &unverified_fold_class, args, 2, &b, 1, &out), HOP_VERIFY);
    assert_string_equal(hop_error_message(),
                        "ufold: the call its slots traced does not verify: verify: forward: node "
                        "ufold: ufold: input x of ufold_body_0 is f32[s1], but the call needs "
                        "f32[s0, s1] there");
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, before);
    assert_int_equal(hop_apply(og, &fold_class, args, 2, &b, 1, &out), HOP_OK);
    hop_node *call = out.items[0]->args[0].u.node;
    /* the accessors read the node by parameter name */
    size_t n;
    assert_ptr_equal(hop_node_body(call, "f"), call->args[0].u.graph);
    assert_ptr_equal(hop_node_group(call, "init", &n)[0].u.node, c0);
    assert_int_equal(n, 1);
    assert_ptr_equal(hop_node_group(call, "xs", &n)[0].u.node, x);
    const hop_arg *lifted = hop_node_lifted(call, &n);
    assert_int_equal(n, 2);
    assert_string_equal(lifted[0].u.node->name, "s1");
    assert_string_equal(lifted[1].u.node->name, "w");
    const hop_arg *all[8];
    assert_int_equal(hop_node_passed(call, all, 8), 4);
    assert_ptr_equal(all[1]->u.node, x);
    /* a wrong name is misuse, naming the HOP and the name */
    assert_null(hop_node_group(call, "ys", &n));
    assert_string_equal(hop_error_message(), "hop_node_group: the HOP tfold has no parameter "
                                             "named ys");
    assert_null(hop_node_param(call, "f"));
    assert_string_equal(hop_error_message(),
                        "hop_node_param: f of tfold is not a leading argument");
    /* the class's print slot prints the call */
    assert_text(code_of(og, out.items[0]),
                "def forward(s0: \"Sym(s0)\", s1: \"Sym(s1)\", x: \"f32[s0, s1]\", w: "
                "\"f32[s1]\"):\n"
                "    def tfold_body_0(select: \"f32[s1]\", x: \"f32[s1]\", s1: \"Sym(s1)\", w: "
                "\"f32[s1]\"):\n"
                "        mul: \"f32[s1]\" = mul(x, w)\n"
                "        add: \"f32[s1]\" = add(select, mul)\n"
                "        return (add,)\n"
                "\n"
                "    select: \"f32[s1]\" = select(x, 0, 0)\n"
                "    tfold: \"f32[s1]\" = fold(tfold_body_0, init=select, xs=x, lifted=2)\n"
                "    getitem: \"f32[s1]\" = tfold[0]\n"
                "    return (getitem,)\n");
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

static void
test_leads_of_every_kind_are_bound_by_the_signature_and_read_by_name(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {4};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, false);
    hop_arg xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_int(7), hop_arg_int(2), hop_arg_bool(true), hop_arg_dtype(HOP_I64),
                      hop_arg_list(&xa, 1)};
    hop_body b = {identity_body, NULL};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, &leads_class, args, 5, &b, 1, &out), HOP_OK);
    hop_node *call = out.items[0]->args[0].u.node;
    assert_int_equal(hop_node_param(call, "k")->u.i, 7);
    assert_int_equal(hop_node_param(call, "alpha")->kind, HOP_ARG_INT); /* as given */
    assert_true(hop_node_param(call, "flag")->u.b);
    assert_int_equal(hop_node_param(call, "dt")->u.dtype, HOP_I64);
    assert_text(code_of(og, out.items[0]),
                "def forward(x: \"f32[4]\"):\n"
                "    def leads_body_0(x: \"f32[4]\"):\n"
                "        return (x,)\n"
                "\n"
                "    leads: \"f32[4]\" = leads(7, 2, True, i64, leads_body_0, (x,))\n"
                "    getitem: \"f32[4]\" = leads[0]\n"
                "    return (getitem,)\n");
    /* Arguments that do not fit the signature name the parameter, and
     * change nothing. */
    size_t nnodes = hop_output_graph_root_graph(og)->nnodes;
    args[0] = hop_arg_float(1.5);
    assert_int_equal(hop_apply(og, &leads_class, args, 5, &b, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "leads: k must be an int");
    args[0] = hop_arg_int(7);
    args[3] = hop_arg_int(1);
    assert_int_equal(hop_apply(og, &leads_class, args, 5, &b, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "leads: dt must be a dtype");
    assert_int_equal(hop_apply(og, &leads_class, args, 4, &b, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "leads: takes 5 arguments besides its bodies, got 4");
    assert_int_equal(hop_graph_verify(hop_output_graph_root_graph(og)), HOP_OK);
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, nnodes);
    assert_int_equal(out.n, 1);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

static void
test_a_constant_pred_runs_its_branch_inline_with_no_call_node(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {4};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, false);
    hop_arg xa = hop_arg_node(x);
    hop_body b = {axpy_body, x};
    hop_values out = {0};
    hop_arg args[] = {hop_arg_bool(false), hop_arg_list((hop_arg[]){xa, xa}, 2)};
    assert_int_equal(hop_apply(og, &hop_cond_class, args, 2, (hop_body[]){b, b}, 2, &out), HOP_OK);
    assert_int_equal(hop_output_graph_root_graph(og)->nsubgraphs, 0);
    assert_text(code_of(og, out.items[0]), "def forward(x: \"f32[4]\"):\n"
                                           "    mul: \"f32[4]\" = mul(x, x)\n"
                                           "    add: \"f32[4]\" = add(x, mul)\n"
                                           "    return (add,)\n");
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* ------------------------------------------------------------------- eval */

/* A host body: out = in[0] * 2 + in[1] (or in[0] * 2 without a second). */
static hop_status
host_twice(void *ud, const hop_rt_value *in, size_t n, hop_rt_values *out)
{
    int *calls = ud;
    (*calls)++;
    hop_rt_value v;
    hop_rt_arg m[] = {hop_rt_tensor(in[0].tensor), hop_rt_float(2.0)};
    hop_status st = hop_eager(HOP_OP_mul, m, 2, &v);
    if (st == HOP_OK && n > 1) {
        hop_rt_value s;
        hop_rt_arg a[] = {hop_rt_tensor(v.tensor), hop_rt_tensor(in[1].tensor)};
        st = hop_eager(HOP_OP_add, a, 2, &s);
        hop_tensor_release(v.tensor);
        v = s;
    }
    return st == HOP_OK ? hop_rt_values_push(out, v) : st;
}

static hop_tensor *
vec(const float *v, int64_t n)
{
    return hop_tensor_from_data(HOP_F32, 1, &n, v);
}

static void
test_eval_apply_runs_a_class_eagerly_with_host_bodies(void **state)
{
    (void)state;
    hop_tensor *x = vec((float[]){1, 2, 3}, 3), *w = vec((float[]){10, 20, 30}, 3);
    int64_t rs[] = {2, 3};
    hop_tensor *rows = hop_tensor_from_data(HOP_F32, 2, rs, (float[]){1, 2, 3, 4, 5, 6});
    int calls = 0;
    hop_host_body b = {host_twice, &calls};
    hop_rt_values out = {NULL, 0, 0};
    /* cond: only the branch pred picks runs */
    hop_rt_arg ops[] = {hop_rt_tensor(x)};
    hop_rt_arg cargs[] = {hop_rt_bool(true), hop_rt_list(ops, 1)};
    assert_int_equal(hop_eval_apply(&hop_cond_class, cargs, 2, (hop_host_body[]){b, b}, 2, &out),
                     HOP_OK);
    assert_int_equal(calls, 1);
    assert_float_equal(((float *)out.items[0].tensor->data)[2], 6.0, 0);
    hop_rt_values_clear(&out);
    /* map: one body call per row, stacked; the extra arg passed as it is */
    hop_rt_arg mx[] = {hop_rt_tensor(rows)}, ma[] = {hop_rt_tensor(w)};
    hop_rt_arg margs[] = {hop_rt_list(mx, 1), hop_rt_list(ma, 1)};
    calls = 0;
    assert_int_equal(hop_eval_apply(&hop_map_class, margs, 2, &b, 1, &out), HOP_OK);
    assert_int_equal(calls, 2);
    assert_int_equal(out.items[0].tensor->rank, 2);
    assert_float_equal(((float *)out.items[0].tensor->data)[5], 42.0, 0);
    hop_rt_values_clear(&out);
    /* the class's checks hold eagerly too */
    hop_rt_arg bad[] = {hop_rt_list((hop_rt_arg[]){hop_rt_tensor(x), hop_rt_tensor(rows)}, 2),
                        hop_rt_list(NULL, 0)};
    assert_int_equal(hop_eval_apply(&hop_map_class, bad, 2, &b, 1, &out), HOP_SHAPE);
    assert_string_equal(hop_error_message(), "map: xs 1 has 2 rows but xs 0 has 3; every xs "
                                             "needs the same leading size");
    assert_int_equal(hop_eval_apply(&hop_map_class, margs, 1, &b, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "map: takes 2 arguments besides its bodies, got 1");
    cargs[0] = hop_rt_float(1.0);
    assert_int_equal(hop_eval_apply(&hop_cond_class, cargs, 2, (hop_host_body[]){b, b}, 2, &out),
                     HOP_INVALID);
    assert_string_equal(hop_error_message(), "cond: pred has the wrong kind of value");
    assert_int_equal(out.n, 0);
    hop_tensor_release(x);
    hop_tensor_release(w);
    hop_tensor_release(rows);
}

/* ------------------------------------------------------------- libraries */

static void
test_libraries_of_hops_load_once_and_bad_ones_fail_clearly(void **state)
{
    (void)state;
    const char *names[4];
    size_t n = 9;
    assert_int_equal(hop_load_library(HOP_EXAMPLES_DIR "/libhop_repeat.so", names, 4, &n), HOP_OK);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "repeat");
    assert_non_null(hop_find_hop("repeat"));
    /* again: nothing runs, the same names */
    assert_int_equal(hop_load_library(HOP_EXAMPLES_DIR "/libhop_repeat.so", names, 4, &n), HOP_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hop_load_library(HOP_EXAMPLES_DIR "/no_such.so", names, 4, &n), HOP_NOT_FOUND);
    assert_non_null(strstr(hop_error_message(), "load_library: cannot load "));
    assert_int_equal(n, 0);
    /* a shared object that is no library of HOPs */
    assert_int_equal(hop_load_library("libm.so.6", names, 4, &n), HOP_INVALID);
    assert_string_equal(hop_error_message(),
                        "load_library: libm.so.6 has no descriptor hop_library; a library of "
                        "HOPs declares itself with HOP_LIBRARY(init) (hop/prim_hop.h) and is "
                        "built against this hop's headers (ABI version 3)");
    assert_int_equal(hop_load_library(NULL, names, 4, &n), HOP_MISUSE);
}

#define HOSTILE(kind) HOP_HOSTILE_DIR "/libhop_hostile_" kind ".so"

/* Nothing of a library runs before its descriptor is checked: a data symbol
 * named like the old entry point, a symbol that is no descriptor, a
 * descriptor for another ABI version. */
static void
test_a_library_without_a_descriptor_of_this_abi_is_refused_before_it_runs(void **state)
{
    (void)state;
    size_t n = 9;
    assert_int_equal(hop_load_library(HOSTILE("data_init"), NULL, 0, &n), HOP_INVALID);
    assert_string_equal(
        hop_error_message(),
        "load_library: " HOSTILE(
            "data_init") " has no descriptor hop_library "
                         "(it exports hop_library_init, the entry point of hop before ABI "
                         "version 2); a library of HOPs declares itself with HOP_LIBRARY(init) "
                         "(hop/prim_hop.h) and is built against this hop's headers (ABI version "
                         "3)");
    assert_int_equal(n, 0);
    assert_int_equal(hop_load_library(HOSTILE("data_desc"), NULL, 0, &n), HOP_INVALID);
    char want[512];
    snprintf(want, sizeof want,
             "load_library: %s's symbol hop_library is not a descriptor (an object of %zu bytes "
             "defined by HOP_LIBRARY(init) in the library itself)",
             HOSTILE("data_desc"), sizeof(hop_library_descriptor));
    assert_string_equal(hop_error_message(), want);
    assert_int_equal(hop_load_library(HOSTILE("old_abi"), NULL, 0, &n), HOP_INVALID);
    assert_string_equal(
        hop_error_message(),
        "load_library: " HOSTILE(
            "old_abi") " was built for hop ABI version 9, "
                       "but this hop is ABI version 3; rebuild it against this hop's headers");
}

/* A failed init leaves no trace: its HOP and its kernel are unregistered
 * (their names free again); the library stays loaded (see below). */
static void
test_a_failed_init_unregisters_every_hop_and_kernel_it_registered(void **state)
{
    (void)state;
    size_t n = 9;
    assert_int_equal(hop_load_library(HOSTILE("fails"), NULL, 0, &n), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hostile: this init fails after registering");
    assert_int_equal(n, 0);
    assert_null(hop_find_hop("hostile_leaky_hop"));
    assert_null(hop_foreign_find("hostile_leaky_kernel"));
    /* the names are free: a kernel of our own under the same name */
    const hop_foreign *k = NULL;
    assert_int_equal(hop_foreign_register("void hostile_leaky_kernel(int64_t n)",
                                          (void *)(uintptr_t)&hop_error_clear, NULL, &k),
                     HOP_OK);
    assert_int_equal(hop_foreign_unregister("hostile_leaky_kernel"), HOP_OK);
    static const hop_class again = {.name = "hostile_leaky_hop"};
    assert_int_equal(hop_register_hop(&again), HOP_OK);
    assert_int_equal(hop_unregister_hop("hostile_leaky_hop"), HOP_OK);
    /* and loading it again fails the same way, with nothing left behind */
    assert_int_equal(hop_load_library(HOSTILE("fails"), NULL, 0, &n), HOP_INVALID);
    assert_null(hop_foreign_find("hostile_leaky_kernel"));
}

/* A class another thread found while the init that registered it ran stays
 * valid after that init fails: the library is not unloaded (it was, and the
 * finder's class pointed into unmapped memory). */
static void *
find_seen_hop(void *arg)
{
    const hop_class **found = arg;
    for (int i = 0; i < 2000000 && *found == NULL; i++) {
        *found = hop_find_hop("hostile_seen_hop");
        if (*found == NULL)
            sched_yield();
    }
    return NULL;
}

static void
test_a_hop_found_while_its_failing_init_ran_stays_valid(void **state)
{
    (void)state;
    const hop_class *found = NULL;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, find_seen_hop, &found), 0);
    assert_int_equal(hop_load_library(HOSTILE("seen_fails"), NULL, 0, NULL), HOP_INVALID);
    assert_string_equal(hop_error_message(), "hostile: this init fails after being seen");
    pthread_join(th, NULL);
    assert_null(hop_find_hop("hostile_seen_hop"));
    assert_non_null(found);
    assert_string_equal(found->name, "hostile_seen_hop");
}

/* An init may load the library it depends on (the lock is recursive); one
 * that loads its own library is an error, not an endless recursion. */
static void
test_an_init_may_load_its_dependency_but_not_its_own_library(void **state)
{
    (void)state;
    const char *names[4];
    size_t n = 9;
    assert_int_equal(hop_load_library(HOSTILE("loads_dep"), names, 4, &n), HOP_OK);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "hostile_dep_user");
    assert_non_null(hop_find_hop("repeat"));
    assert_int_equal(hop_load_library(HOSTILE("loads_self"), NULL, 0, &n), HOP_INVALID);
    assert_string_equal(
        hop_error_message(),
        "load_library: " HOSTILE("loads_self") "'s init "
                                               "loads " HOSTILE(
                                                   "loads_self") " itself (directly "
                                                                 "or through another library)");
}

/* A class whose output_meta returns HOP_OK without outputs: the protocol
 * names the HOP and the slot (and the graphs are as before). */
static void
test_an_output_meta_slot_that_gives_no_outputs_is_an_error_naming_it(void **state)
{
    (void)state;
    assert_int_equal(hop_load_library(HOSTILE("no_outputs"), NULL, 0, NULL), HOP_OK);
    const hop_class *cls = hop_find_hop("hostile_no_outputs");
    assert_non_null(cls);
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {4};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, true);
    hop_arg xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_list(&xa, 1)};
    hop_body b = {identity_body, NULL};
    hop_values out = {0};
    size_t before = hop_output_graph_root_graph(og)->nnodes;
    assert_int_equal(hop_apply(og, cls, args, 1, &b, 1, &out), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hostile_no_outputs: the output_meta slot gave 0 "
                                             "outputs but the body hostile_body_0 returns 1");
    assert_int_equal(hop_output_graph_root_graph(og)->nnodes, before);
    assert_int_equal(out.n, 0);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* A library's print slot that says its text takes SIZE_MAX bytes (need + 1
 * wrapped to a 0-byte buffer, read as text) or 2^40 bytes (an out-of-memory
 * error for every printer) gets the generic text with what the slot said;
 * a verify slot that fails without a message is not reported with an older
 * error's. */
static void
test_print_and_verify_slots_that_misreport_are_contained(void **state)
{
    (void)state;
    assert_int_equal(hop_load_library(HOSTILE("bad_slots"), NULL, 0, NULL), HOP_OK);
    static const struct {
        const char *hop, *text;
    } prints[] = {
        {"hostile_print_size_max", "hostile_print_size_max: \"f32[s0]\" = "
                                   "hostile_print_size_max<its print slot returned a length of "
                                   "18446744073709551615>(hostile_body_0, (x,))"},
        {"hostile_print_terabyte", "hostile_print_terabyte: \"f32[s0]\" = "
                                   "hostile_print_terabyte<its print slot returned a length of "
                                   "1099511627776>(hostile_body_0, (x,))"},
    };
    for (size_t i = 0; i < 2; i++) {
        const hop_class *cls = hop_find_hop(prints[i].hop);
        assert_non_null(cls);
        hop_output_graph *og = hop_output_graph_new();
        hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
        hop_arg xa = hop_arg_node(x);
        hop_arg args[] = {hop_arg_list(&xa, 1)};
        hop_body b = {identity_body, NULL};
        hop_values out = {0};
        assert_int_equal(hop_apply(og, cls, args, 1, &b, 1, &out), HOP_OK);
        char *code = hop_graph_code(hop_output_graph_root_graph(og));
        assert_non_null(code);
        assert_non_null(strstr(code, prints[i].text));
        hop_free(code);
        hop_values_clear(&out);
        hop_output_graph_free(og);
    }
    const hop_class *cls = hop_find_hop("hostile_verify_silently");
    assert_non_null(cls);
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    hop_arg xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_list(&xa, 1)};
    hop_body b = {identity_body, NULL};
    hop_values out = {0};
    hop_error(HOP_VERIFY, "an older error");
    assert_int_not_equal(hop_apply(og, cls, args, 1, &b, 1, &out), HOP_OK);
    assert_null(strstr(hop_error_message(), "an older error"));
    assert_non_null(strstr(hop_error_message(), "node hostile_verify_silently: invalid argument"));
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* A tracing, lower or eval slot that fails without a message is reported by
 * its class and slot (hop__slot_status), not with an older error's message
 * ("lowering of ...: gave 0 results", or whatever the thread said last). */
static void
test_slots_failing_without_a_message_are_named(void **state)
{
    (void)state;
    assert_int_equal(hop_load_library(HOSTILE("bad_slots"), NULL, 0, NULL), HOP_OK);
    hop_arg xa;
    hop_body b = {identity_body, NULL};
    hop_values out = {0};
    hop_output_graph *og = hop_output_graph_new();
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, (int64_t[]){4}, true);
    xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_list(&xa, 1)};
    hop_error(HOP_VERIFY, "an older error");
    assert_int_equal(
        hop_apply(og, hop_find_hop("hostile_output_meta_silently"), args, 1, &b, 1, &out),
        HOP_SHAPE);
    assert_string_equal(hop_error_message(), "hostile_output_meta_silently: its output_meta slot "
                                             "failed with HOP_SHAPE and gave no message");
    hop_values_clear(&out);
    /* the lower slot, then the eval slot */
    assert_int_equal(hop_apply(og, hop_find_hop("hostile_lower_silently"), args, 1, &b, 1, &out),
                     HOP_OK);
    assert_non_null(
        hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){hop_arg_node(out.items[0])}, 1));
    hop_error(HOP_VERIFY, "an older error");
    assert_null(hop_lower(og, NULL));
    assert_string_equal(hop_error_message(), "hostile_lower_silently: its lower slot failed with "
                                             "HOP_UNSUPPORTED and gave no message");
    hop_tensor *t = vec((float[]){1, 2, 3, 4}, 4);
    hop_tensor *res[1] = {NULL};
    hop_error(HOP_VERIFY, "an older error");
    assert_int_equal(hop_graph_eval(og, &t, 1, res, 1), HOP_RUNTIME);
    assert_string_equal(hop_error_message(), "hostile_lower_silently: its eval slot failed with "
                                             "HOP_RUNTIME and gave no message");
    hop_tensor_release(t);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

/* A HOP lowered to a kernel of its own (hop_lower_kernel): twice(body, xs)
 * returns 2 * xs[0] (its body, the identity, is traced and ignored); the
 * kernel fails on a NaN, and its lower slot checks the toolkit's refusals. */
typedef struct twice_data {
    float factor;
} twice_data;

static hop_status
twice_kernel(const void *data, hop_tensor *const *t, size_t n)
{
    const twice_data *d = data;
    const float *x = t[1]->data;
    float *o = t[0]->data;
    assert_int_equal(n, 2);
    for (int64_t i = 0; i < hop_tensor_numel(t[1]); i++) {
        if (isnan(x[i]))
            return hop_error(HOP_RUNTIME, "twice: element %lld is NaN", (long long)i);
        o[i] = d->factor * x[i];
    }
    return HOP_OK;
}

static hop_status
twice_lower(hop_lower_ctx *cx, const hop_node *call)
{
    size_t n;
    const hop_arg *xs = hop_node_group(call, "xs", &n);
    hop_pval x, *out = hop_lower_outputs(cx, true);
    hop_status st = out ? hop_lower_arg(cx, &xs[0], &x) : hop_error_code();
    twice_data d = {2.0f};
    hop_pval args[] = {out ? out[0] : x, x}, k = {HOP_PVAL_CONST, -1, 3};
    if (st != HOP_OK)
        return st;
    /* the refusals */
    assert_int_equal(hop_lower_kernel(cx, "twice", NULL, &d, sizeof d, args, 2), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_lower_kernel: NULL kernel");
    hop_pval bad[] = {args[0], k};
    assert_int_equal(hop_lower_kernel(cx, "twice", twice_kernel, &d, sizeof d, bad, 2), HOP_MISUSE);
    assert_string_equal(hop_error_message(), "hop_lower_kernel: argument 1 is not a tensor");
    hop_error_clear();
    st = hop_lower_kernel(cx, "twice", twice_kernel, &d, sizeof d, args, 2);
    return st == HOP_OK ? hop_lower_results(cx, out, 1) : st;
}

static const hop_class twice_class = {
    .name = "twice",
    .params = {{"f", HOP_PARAM_BODY, "twice_body"}, {"xs", HOP_PARAM_VALUES, NULL}},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .lower = twice_lower,
};

static void
test_a_hop_lowers_to_a_kernel_of_its_own_that_can_fail_the_run(void **state)
{
    (void)state;
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {3};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, false);
    hop_arg xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_list(&xa, 1)};
    hop_body b = {identity_body, NULL};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, &twice_class, args, 1, &b, 1, &out), HOP_OK);
    assert_non_null(
        hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){hop_arg_node(out.items[0])}, 1));
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    char *dump = hop_plan_dump(plan);
    assert_non_null(strstr(dump, "Kernel"));
    assert_non_null(strstr(dump, "twice(t1, t0)"));
    hop_free(dump);
    hop_tensor *in = vec((float[]){1, -2, 0.5f}, 3), *got = NULL;
    assert_int_equal(hop_plan_run(plan, &in, 1, &got, 1), HOP_OK);
    assert_float_equal(((float *)got->data)[0], 2, 0);
    assert_float_equal(((float *)got->data)[1], -4, 0);
    assert_float_equal(((float *)got->data)[2], 1, 0);
    hop_tensor_release(got);
    ((float *)in->data)[1] = NAN;
    got = NULL;
    assert_int_equal(hop_plan_run(plan, &in, 1, &got, 1), HOP_RUNTIME);
    assert_string_equal(hop_error_message(), "twice: element 1 is NaN");
    assert_null(got);
    hop_tensor_release(in);
    hop_values_clear(&out);
    hop_plan_free(plan);
    hop_output_graph_free(og);
}

/* The repeat library traced, lowered, run and evaluated from C. */
static hop_status
tanh_body(hop_tracer *t, void *ud, hop_node *const *in, size_t n, hop_values *out)
{
    (void)ud;
    (void)n;
    hop_node *v = hop_tracer_call_op(t, HOP_OP_tanh, (hop_arg[]){hop_arg_node(in[0])}, 1);
    return v ? hop_values_push(out, v) : hop_error_code();
}

static void
test_a_loaded_hop_traces_lowers_and_evaluates_like_a_built_in(void **state)
{
    (void)state;
    assert_int_equal(hop_load_library(HOP_EXAMPLES_DIR "/libhop_repeat.so", NULL, 0, NULL), HOP_OK);
    const hop_class *repeat = hop_find_hop("repeat");
    hop_output_graph *og = hop_output_graph_new();
    int64_t xs[] = {4};
    hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 1, xs, true);
    hop_arg xa = hop_arg_node(x);
    hop_arg args[] = {hop_arg_int(3), hop_arg_list(&xa, 1), hop_arg_list(NULL, 0)};
    hop_body b = {tanh_body, NULL};
    hop_values out = {0};
    assert_int_equal(hop_apply(og, repeat, args, 3, &b, 1, &out), HOP_OK);
    assert_non_null(
        hop_tracer_output(hop_output_graph_root(og), (hop_arg[]){hop_arg_node(out.items[0])}, 1));
    hop_plan *plan = hop_lower(og, NULL);
    assert_non_null(plan);
    hop_tensor *in = vec((float[]){-2, -0.5f, 0.5f, 2}, 4), *got, *want;
    assert_int_equal(hop_plan_run(plan, &in, 1, &got, 1), HOP_OK);
    assert_int_equal(hop_graph_eval(og, &in, 1, &want, 1), HOP_OK);
    for (int i = 0; i < 4; i++) {
        float v = ((float *)in->data)[i];
        float ref = tanhf(tanhf(tanhf(v)));
        assert_float_equal(((float *)got->data)[i], ref, 1e-6);
        assert_float_equal(((float *)want->data)[i], ref, 1e-6);
    }
    /* its own checks: n < 0 is refused when traced and when run */
    args[0] = hop_arg_int(-1);
    assert_int_equal(hop_apply(og, repeat, args, 3, &b, 1, &out), HOP_INVALID);
    assert_string_equal(hop_error_message(), "repeat: n must be >= 0, got -1");
    hop_rt_arg rargs[] = {hop_rt_int(-1), hop_rt_list((hop_rt_arg[]){hop_rt_tensor(in)}, 1),
                          hop_rt_list(NULL, 0)};
    hop_rt_values rout = {NULL, 0, 0};
    int calls = 0;
    hop_host_body hb = {host_twice, &calls};
    assert_int_equal(hop_eval_apply(repeat, rargs, 3, &hb, 1, &rout), HOP_INVALID);
    assert_string_equal(hop_error_message(), "repeat: n must be >= 0, got -1");
    rargs[0] = hop_rt_int(2);
    assert_int_equal(hop_eval_apply(repeat, rargs, 3, &hb, 1, &rout), HOP_OK);
    assert_int_equal(calls, 2);
    assert_float_equal(((float *)rout.items[0].tensor->data)[3], 8.0, 0);
    hop_rt_values_clear(&rout);
    hop_tensor_release(in);
    hop_tensor_release(got);
    hop_tensor_release(want);
    hop_plan_free(plan);
    hop_values_clear(&out);
    hop_output_graph_free(og);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_a_call_node_holds_leads_bodies_and_one_list_per_group_with_lifted_last),
        cmocka_unit_test(test_leads_of_every_kind_are_bound_by_the_signature_and_read_by_name),
        cmocka_unit_test(test_a_constant_pred_runs_its_branch_inline_with_no_call_node),
        cmocka_unit_test(test_eval_apply_runs_a_class_eagerly_with_host_bodies),
        cmocka_unit_test(test_libraries_of_hops_load_once_and_bad_ones_fail_clearly),
        cmocka_unit_test(test_a_library_without_a_descriptor_of_this_abi_is_refused_before_it_runs),
        cmocka_unit_test(test_a_failed_init_unregisters_every_hop_and_kernel_it_registered),
        cmocka_unit_test(test_an_init_may_load_its_dependency_but_not_its_own_library),
        cmocka_unit_test(test_an_output_meta_slot_that_gives_no_outputs_is_an_error_naming_it),
        cmocka_unit_test(test_print_and_verify_slots_that_misreport_are_contained),
        cmocka_unit_test(test_slots_failing_without_a_message_are_named),
        cmocka_unit_test(test_a_hop_found_while_its_failing_init_ran_stays_valid),
        cmocka_unit_test(test_a_loaded_hop_traces_lowers_and_evaluates_like_a_built_in),
        cmocka_unit_test(test_a_hop_lowers_to_a_kernel_of_its_own_that_can_fail_the_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
