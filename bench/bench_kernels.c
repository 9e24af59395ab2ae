/*
 * bench/bench_kernels.c - the runtime's kernel speeds: the fixed cost of an
 * eager op (add of two 16-float tensors), a memory-bound elementwise kernel
 * (a + b on 16M floats into an existing buffer), a transcendental one (exp
 * on 16M floats, next to a plain libm loop for comparison) and matmul
 * 1024x1024 f32, each on 1 thread and on all threads.
 *
 * Prints figures; asserts nothing.  Best of several rounds.
 */
#define _POSIX_C_SOURCE 199309L
#include <hop.h>
#include <hop/runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
die(const char *what)
{
    fprintf(stderr, "bench_kernels: %s failed: %s\n", what, hop_error_message());
    exit(1);
}

static hop_tensor *
filled(int64_t n, float (*f)(int64_t))
{
    hop_tensor *t = hop_tensor_empty(HOP_F32, 1, &n);
    if (t == NULL)
        die("hop_tensor_empty");
    float *p = t->data;
    for (int64_t i = 0; i < n; i++)
        p[i] = f(i);
    return t;
}

static float
ramp(int64_t i)
{
    return (float)(i % 1000) * 0.01f - 5.0f;
}

static float
wave(int64_t i)
{
    return (float)((i * 7) % 113) * 0.05f - 2.5f;
}

/* Seconds per call of hop_eager_out(op) into out, best of `rounds`. */
static double
time_out(hop_op op, const hop_rt_arg *args, size_t nargs, hop_tensor *out, int reps, int rounds)
{
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        for (int i = 0; i < reps; i++) {
            if (hop_eager_out(op, args, nargs, out) != HOP_OK)
                die(hop_op_get(op)->name);
        }
        double t = (now_s() - t0) / reps;
        best = t < best ? t : best;
    }
    return best;
}

static void
bench_eager_add(void)
{
    const int reps = 200000, rounds = 5;
    hop_tensor *a = filled(16, ramp), *b = filled(16, wave);
    hop_rt_arg args[] = {hop_rt_tensor(a), hop_rt_tensor(b)};
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        for (int i = 0; i < reps; i++) {
            hop_tensor *c = hop_eager_tensor(HOP_OP_add, args, 2);
            if (c == NULL)
                die("add");
            hop_tensor_release(c);
        }
        double t = (now_s() - t0) / reps;
        best = t < best ? t : best;
    }
    hop_tensor *out = hop_tensor_empty(HOP_F32, 1, (int64_t[]){16});
    double t_out = time_out(HOP_OP_add, args, 2, out, reps, rounds);
    printf("eager add, 2 x f32[16] -> new tensor       %8.0f ns\n", best * 1e9);
    printf("eager add, 2 x f32[16] -> existing tensor  %8.0f ns\n", t_out * 1e9);
    hop_tensor_release(a);
    hop_tensor_release(b);
    hop_tensor_release(out);
}

static void
bench_large(int threads)
{
    const int64_t n = 16 << 20;
    hop_runtime_set_threads(threads);
    hop_tensor *a = filled(n, ramp), *b = filled(n, wave), *c = filled(n, ramp);
    hop_rt_arg ab[] = {hop_rt_tensor(a), hop_rt_tensor(b)}, aa[] = {hop_rt_tensor(a)};
    double t_add = time_out(HOP_OP_add, ab, 2, c, 5, 3);
    double t_exp = time_out(HOP_OP_exp, aa, 1, c, 5, 3);
    printf("%d thread%s  a + b, 16M f32 into existing  %7.1f GB/s  (%.2f ms)\n", threads,
           threads == 1 ? " " : "s", 3.0 * 4 * n / t_add / 1e9, t_add * 1e3);
    printf("%d thread%s  exp, 16M f32 into existing    %7.1f GB/s  (%.2f ms)\n", threads,
           threads == 1 ? " " : "s", 2.0 * 4 * n / t_exp / 1e9, t_exp * 1e3);

    const int64_t m = 1024;
    int64_t sizes[] = {m, m};
    hop_tensor *x = hop_tensor_empty(HOP_F32, 2, sizes), *y = hop_tensor_empty(HOP_F32, 2, sizes);
    hop_tensor *z = hop_tensor_empty(HOP_F32, 2, sizes);
    for (int64_t i = 0; i < m * m; i++) {
        ((float *)x->data)[i] = ramp(i);
        ((float *)y->data)[i] = wave(i);
    }
    hop_rt_arg xy[] = {hop_rt_tensor(x), hop_rt_tensor(y)};
    double t_mm = time_out(HOP_OP_matmul, xy, 2, z, 3, 3);
    printf("%d thread%s  matmul 1024x1024 f32          %7.1f GFLOP/s  (%.2f ms)\n", threads,
           threads == 1 ? " " : "s", 2.0 * m * m * m / t_mm / 1e9, t_mm * 1e3);
    hop_tensor *all[] = {a, b, c, x, y, z};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        hop_tensor_release(all[i]);
}

/* The same exp as a plain libm loop, to show what the math backend buys. */
static void
bench_libm_exp(void)
{
    const int64_t n = 16 << 20;
    float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    if (in == NULL || out == NULL)
        die("malloc");
    for (int64_t i = 0; i < n; i++)
        in[i] = ramp(i);
    double best = 1e300;
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        for (int64_t i = 0; i < n; i++)
            out[i] = expf(in[i]);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    printf("1 thread   exp, 16M f32, plain libm loop   %7.1f GB/s  (%.2f ms)  [reference]\n",
           2.0 * 4 * n / best / 1e9, best * 1e3);
    free(in);
    free(out);
}

int
main(void)
{
    hop_runtime_set_threads(0);
    int all = hop_runtime_threads();
    printf("hop runtime: math backend %s, %d cores\n", hop_runtime_math_backend(), all);
    bench_eager_add();
    bench_large(1);
    if (all > 1)
        bench_large(all);
    bench_libm_exp();
    hop_runtime_shutdown();
    return 0;
}
