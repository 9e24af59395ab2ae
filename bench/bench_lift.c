/*
 * bench/bench_lift.c - the cost of lifting a free tensor through nested
 * tracers: the first lift at depth d (one placeholder per level, plus the
 * tensor's symbols) and a repeated use (one hash lookup).
 *
 * Prints one row per depth: ns per first lift, ns per level, ns per repeated
 * use.  Not a test: no assertion on time.
 */
#define _POSIX_C_SOURCE 199309L
#include <hop.h>

#include <stdio.h>
#include <time.h>

static double
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Median-free but steady: best of several rounds of `reps` fresh lifts. */
static void
bench_depth(int depth)
{
    const int reps = 200, rounds = 5, uses = 100000;
    double best_first = 1e300, best_use = 1e300;
    for (int r = 0; r < rounds; r++) {
        double first = 0;
        for (int k = 0; k < reps; k++) {
            hop_output_graph *og = hop_output_graph_new();
            int64_t sizes[] = {8, 16};
            hop_node *x = hop_output_graph_add_input(og, "x", HOP_F32, 2, sizes, true);
            hop_tracer *t = hop_output_graph_root(og);
            for (int i = 0; i < depth; i++)
                t = hop_output_graph_push(og, "wrap_body");
            double t0 = now_ns();
            hop_node *v = hop_tracer_lift(t, x);
            first += now_ns() - t0;
            if (v == NULL) {
                fprintf(stderr, "lift failed: %s\n", hop_error_message());
                return;
            }
            if (k == 0) {
                t0 = now_ns();
                for (int i = 0; i < uses; i++)
                    v = hop_tracer_lift(t, x);
                double use = (now_ns() - t0) / uses;
                if (use < best_use)
                    best_use = use;
            }
            hop_output_graph_free(og);
        }
        if (first / reps < best_first)
            best_first = first / reps;
    }
    printf("%6d  %14.0f  %14.1f  %16.1f\n", depth, best_first, best_first / depth, best_use);
}

int
main(void)
{
    printf("lifting x: f32[s0, s1] from the root into the tracer at depth d\n");
    printf("%6s  %14s  %14s  %16s\n", "depth", "first lift ns", "ns per level", "repeated use ns");
    int depths[] = {1, 8, 64, 256};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++)
        bench_depth(depths[i]);
    return 0;
}
