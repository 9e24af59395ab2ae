/*
 * tests/c/libs/hostile.c - libraries of HOPs that misbehave, one per
 * HOSTILE_* define (tests/c/CMakeLists.txt builds each), for the tests of
 * hop_load_library and of the tracing protocol's own checks:
 *
 *   HOSTILE_FAILS      registers a HOP and a foreign kernel, then fails
 *   HOSTILE_LOADS_DEP  loads the repeat example library from its init
 *   HOSTILE_LOADS_SELF loads itself from its init
 *   HOSTILE_DATA_INIT  exports `int hop_library_init = 42` (no descriptor)
 *   HOSTILE_DATA_DESC  exports `int hop_library = 42` (not a descriptor)
 *   HOSTILE_OLD_ABI    a descriptor for another ABI version
 *   HOSTILE_NO_OUTPUTS a HOP whose output_meta returns HOP_OK with no outputs
 *   HOSTILE_SEEN_FAILS registers a HOP, waits while another thread finds it,
 *                      then fails
 *   HOSTILE_BAD_SLOTS  HOPs whose print slot says its text takes SIZE_MAX or
 *                      2^40 bytes, and one whose verify fails without a message
 *
 * Every name is unique to its library, so one process may load them all.
 */
#if defined(HOSTILE_SEEN_FAILS)
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif
#include <hop.h>

#include <stdint.h>

#if defined(HOSTILE_FAILS)

static int
leaky_kernel_fn(int64_t n)
{
    return n < 0;
}

static const hop_class leaky_class = {.name = "hostile_leaky_hop"};

static hop_status
fails_init(void)
{
    void *fn;
    int (*f)(int64_t) = leaky_kernel_fn;
    __builtin_memcpy(&fn, &f, sizeof fn);
    hop_status st = hop_register_hop(&leaky_class);
    if (st == HOP_OK)
        st = hop_foreign_register("int hostile_leaky_kernel(int64_t n)", fn, NULL, NULL);
    if (st != HOP_OK)
        return st;
    return hop_error(HOP_INVALID, "hostile: this init fails after registering");
}

HOP_LIBRARY(fails_init);

#elif defined(HOSTILE_LOADS_DEP)

static const hop_class dep_user_class = {.name = "hostile_dep_user"};

static hop_status
loads_dep_init(void)
{
    hop_status st = hop_load_library(HOSTILE_DEP_PATH, NULL, 0, NULL);
    return st == HOP_OK ? hop_register_hop(&dep_user_class) : st;
}

HOP_LIBRARY(loads_dep_init);

#elif defined(HOSTILE_LOADS_SELF)

static hop_status
loads_self_init(void)
{
    return hop_load_library(HOSTILE_SELF_PATH, NULL, 0, NULL);
}

HOP_LIBRARY(loads_self_init);

#elif defined(HOSTILE_DATA_INIT)

__attribute__((visibility("default"))) int hop_library_init = 42;

#elif defined(HOSTILE_DATA_DESC)

__attribute__((visibility("default"))) int hop_library = 42;

#elif defined(HOSTILE_OLD_ABI)

static hop_status
old_init(void)
{
    return HOP_OK;
}

_Static_assert(HOP_ABI_VERSION != 9, "the old ABI descriptor needs another version");
__attribute__((visibility("default")))
const hop_library_descriptor hop_library = {HOP_LIBRARY_MAGIC, 9, old_init};

#elif defined(HOSTILE_NO_OUTPUTS)

static hop_status
no_outputs(hop_call *c)
{
    (void)c;
    return HOP_OK;
}

static const hop_class no_outputs_class = {
    .name = "hostile_no_outputs",
    .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .output_meta = no_outputs,
};

static hop_status
no_outputs_init(void)
{
    return hop_register_hop(&no_outputs_class);
}

HOP_LIBRARY(no_outputs_init);

#elif defined(HOSTILE_SEEN_FAILS)

#include <time.h>

static const hop_class seen_class = {.name = "hostile_seen_hop"};

static hop_status
seen_init(void)
{
    hop_status st = hop_register_hop(&seen_class);
    /* the registry is every thread's: another finds the class meanwhile */
    nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    return st == HOP_OK ? hop_error(HOP_INVALID, "hostile: this init fails after being seen") : st;
}

HOP_LIBRARY(seen_init);

#elif defined(HOSTILE_BAD_SLOTS)

static size_t
print_size_max(const hop_node *call, char *buf, size_t cap)
{
    (void)call;
    (void)buf;
    (void)cap;
    return SIZE_MAX; /* writes nothing: a 0-byte buffer read as text was the bug */
}

static size_t
print_terabyte(const hop_node *call, char *buf, size_t cap)
{
    (void)call;
    if (cap)
        buf[0] = '\0';
    return (size_t)1 << 40;
}

static hop_status
verify_silently(const hop_node *call)
{
    (void)call;
    return HOP_INVALID; /* and no message */
}

/* Slots that fail without a message: each must be reported by its class
 * and slot, not with whatever the thread's error context held before. */
static hop_status
output_meta_silently(hop_call *c)
{
    (void)c;
    return HOP_SHAPE;
}

static hop_status
lower_silently(hop_lower_ctx *cx, const hop_node *call)
{
    (void)cx;
    (void)call;
    return HOP_UNSUPPORTED;
}

static hop_status
eval_silently(hop_eval_ctx *ex)
{
    (void)ex;
    return HOP_RUNTIME;
}

static const hop_class bad_slot_classes[] = {
    {.name = "hostile_print_size_max",
     .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
     .input_mode = HOP_INPUTS_EXPLICIT,
     .print = print_size_max},
    {.name = "hostile_print_terabyte",
     .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
     .input_mode = HOP_INPUTS_EXPLICIT,
     .print = print_terabyte},
    {.name = "hostile_verify_silently",
     .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
     .input_mode = HOP_INPUTS_EXPLICIT,
     .verify = verify_silently},
    {.name = "hostile_output_meta_silently",
     .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
     .input_mode = HOP_INPUTS_EXPLICIT,
     .output_meta = output_meta_silently},
    {.name = "hostile_lower_silently",
     .params = {{"body", HOP_PARAM_BODY, "hostile_body"}, {"args", HOP_PARAM_VARARGS}},
     .input_mode = HOP_INPUTS_EXPLICIT,
     .lower = lower_silently,
     .eval = eval_silently},
};

static hop_status
bad_slots_init(void)
{
    for (size_t i = 0; i < sizeof bad_slot_classes / sizeof *bad_slot_classes; i++) {
        hop_status st = hop_register_hop(&bad_slot_classes[i]);
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}

HOP_LIBRARY(bad_slots_init);

#else
#error "define one HOSTILE_* (tests/c/CMakeLists.txt)"
#endif
