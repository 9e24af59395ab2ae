/*
 * runtime/fpstatus.c - the floating-point exceptions hop's kernels raised:
 * what lets a NumPy front end warn as NumPy does (python/hop/numpy: NumPy
 * warns "divide by zero encountered in divide" after a ufunc whose loop
 * raised FE_DIVBYZERO, under its default error state).
 *
 * Three sources make one answer, per thread:
 * - the thread's own IEEE flags (fenv.h: both the SSE and x87 flags on
 *   x86, as libm may use either);
 * - flags a kernel notes without a floating-point operation
 *   (hop__fp_note: an integer division by zero, MIN // -1, which NumPy's
 *   integer loops report through the same flags and hop's kernels answer
 *   without trapping);
 * - the flags of the pool's workers while they ran this thread's pieces
 *   (pool.c hands each worker's flags to the job and the job's to the
 *   caller before the caller's wait ends).
 * Only the four NumPy reports: inexact is never read.
 *
 * Cost: hop_fp_status is fetestexcept (fnstsw + stmxcsr) and a load;
 * hop_fp_clear clears the fenv flags only when some are set (feclearexcept
 * rewrites the x87 environment: ~100 cycles).
 */
#include "hop/runtime.h"
#include "runtime/runtime.h"

#include <fenv.h>

#define FE_REPORTED (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)

/* hop__fp_note's flags (HOP_FP_*) on this thread since the last clear. */
static _Thread_local int noted;

/* The thread's fenv flags as HOP_FP_* bits. */
static inline int
fenv_flags(void)
{
    int e = fetestexcept(FE_REPORTED);
    if (e == 0)
        return 0;
    return (e & FE_DIVBYZERO ? HOP_FP_DIVIDE : 0) | (e & FE_OVERFLOW ? HOP_FP_OVERFLOW : 0) |
           (e & FE_UNDERFLOW ? HOP_FP_UNDERFLOW : 0) | (e & FE_INVALID ? HOP_FP_INVALID : 0);
}

int
hop_fp_status(void)
{
    return fenv_flags() | noted;
}

void
hop_fp_clear(void)
{
    if (fetestexcept(FE_REPORTED) != 0)
        feclearexcept(FE_REPORTED);
    noted = 0;
}

void
hop__fp_note(int flags)
{
    noted |= flags;
}

int
hop__fp_take(void)
{
    int f = hop_fp_status();
    if (f != 0)
        hop_fp_clear();
    return f;
}
