/*
 * tests/c/test_libhop.c - libhop.so as a C program links it, beside the
 * shared OpenBLAS another library (NumPy) uses: the copy of OpenBLAS linked
 * into libhop.so (runtime/CMakeLists.txt) shows none of its symbols, hop's
 * matmuls multiply through it exactly, and they leave the shared library's
 * thread count as they found it, eagerly and from several threads at once.
 * The C tests of every layer link libhop.so too (LIBHOP in
 * tests/c/CMakeLists.txt); test_runtime.c checks the thread count with the
 * runtime's objects and the OpenBLAS archive linked into the program.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "hop.h"
#include "hop/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

/* OpenBLAS's entry points: its thread count, a CBLAS call, a Fortran BLAS
 * and a LAPACK routine. */
static const char *const openblas_symbols[] = {
    "openblas_get_num_threads",
    "openblas_set_num_threads",
    "goto_set_num_threads",
    "cblas_sgemm",
    "cblas_dgemm",
    "dgemm_",
    "dgesv_",
};

/* libhop.so's copy of OpenBLAS is its own: no OpenBLAS symbol is found in
 * the program's scope (where a library loaded later would bind its calls)
 * nor in libhop.so's, and hop's matmuls still run. */
static void
test_libhop_exports_no_symbol_of_its_openblas(void **state)
{
    (void)state;
#if !defined(HOP_TEST_PRIVATE_OPENBLAS)
    skip(); /* built against the shared OpenBLAS: libhop.so needs it */
#endif
    void *self = dlopen("libhop.so." HOP_TEST_SOVERSION, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(self);
    for (size_t i = 0; i < sizeof openblas_symbols / sizeof *openblas_symbols; i++) {
        assert_null(dlsym(RTLD_DEFAULT, openblas_symbols[i]));
        assert_null(dlsym(self, openblas_symbols[i]));
    }
    assert_non_null(dlsym(self, "hop_eager_tensor"));
    dlclose(self);
}

static double values[96 * 96];

/* a @ a of the 96 x 96 matrix of values, exactly (small integers), as dtype */
static void
check_square(hop_dtype dtype, hop_tensor *a)
{
    hop_rt_arg args[2] = {hop_rt_tensor(a), hop_rt_tensor(a)};
    hop_tensor *c = hop_eager_tensor(HOP_OP_matmul, args, 2);
    assert_non_null(c);
    const void *data = c->data;
    for (int i = 0; i < 96; i++)
        for (int j = 0; j < 96; j++) {
            double want = 0;
            for (int k = 0; k < 96; k++)
                want += values[i * 96 + k] * values[k * 96 + j];
            double got = dtype == HOP_F32 ? ((const float *)data)[i * 96 + j]
                                          : ((const double *)data)[i * 96 + j];
            assert_true(got == want);
        }
    hop_tensor_release(c);
}

static hop_tensor *
square(hop_dtype dtype)
{
    float f[96 * 96];
    for (int i = 0; i < 96 * 96; i++)
        f[i] = (float)values[i];
    const int64_t sizes[2] = {96, 96};
    return hop_tensor_from_data(dtype, 2, sizes, dtype == HOP_F32 ? (void *)f : (void *)values);
}

/* Each thread's matmuls: 50, or 50 / HOP_TEST_SCALE under valgrind. */
static void *
matmuls(void *arg)
{
    const char *scale = getenv("HOP_TEST_SCALE");
    int n = 50 / (scale && atoi(scale) > 1 ? atoi(scale) : 1);
    for (int i = 0; i < n; i++)
        check_square(((hop_tensor *)arg)->dtype, arg);
    return NULL;
}

/* The shared OpenBLAS loaded here, as NumPy loads it, keeps the thread
 * count it was given while hop multiplies (hop used to set 1 for good). */
static void
test_matmul_leaves_the_thread_count_of_a_shared_openblas(void **state)
{
    (void)state;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        skip();
    int (*get)(void);
    void (*set)(int);
    *(void **)&get = dlsym(lib, "openblas_get_num_threads");
    *(void **)&set = dlsym(lib, "openblas_set_num_threads");
    if (get == NULL || set == NULL)
        skip();
    int before = get();
    set(3);
    for (int i = 0; i < 96 * 96; i++)
        values[i] = (i % 7) - 3;
    hop_dtype dtypes[2] = {HOP_F32, HOP_F64};
    for (int d = 0; d < 2; d++) {
        hop_tensor *a = square(dtypes[d]);
        assert_non_null(a);
        check_square(dtypes[d], a);
        assert_int_equal(get(), 3);
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            assert_int_equal(pthread_create(&th[i], NULL, matmuls, a), 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(get(), 3);
        hop_tensor_release(a);
    }
    set(before);
    dlclose(lib);
    hop_runtime_shutdown();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libhop_exports_no_symbol_of_its_openblas),
        cmocka_unit_test(test_matmul_leaves_the_thread_count_of_a_shared_openblas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
