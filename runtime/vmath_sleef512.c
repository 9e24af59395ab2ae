/*
 * runtime/vmath_sleef512.c - the SLEEF AVX-512 math backend: vmath_sleef.c
 * built a second time at 16 floats / 8 doubles per vector (-mavx512f; see
 * runtime/CMakeLists.txt).  vmath.c calls it only on CPUs with AVX-512F.
 */
#define HOP_SLEEF_AVX512
#include "vmath_sleef.c"
