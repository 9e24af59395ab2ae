/*
 * ops/infer_complex.c - which ops take complex operands, and the shape rules
 * of the ops between complex numbers and their parts (real imag conj angle
 * complex).
 *
 * NumPy defines arithmetic, powers, the exponential, logarithmic,
 * trigonometric and hyperbolic functions, sqrt, abs, sign, the sums,
 * products and means, matmul and every data movement on complex numbers;
 * hop does too.  Every other op (floor, maximum, ordered comparisons, the
 * bitwise ops, sorting, ...) refuses a complex operand with HOP_DTYPE:
 *   "floor: complex dtypes are not supported, got c64[3]"
 * NumPy's ordered comparisons and max/min order complex numbers
 * lexicographically; hop does not (hop.numpy raises UnsupportedError there).
 */
#include "ops/infer.h"

#include <stdio.h>

static const hop_meta *
complex_operand(const hop_operand *o)
{
    if (o->kind == HOP_OPND_TENSOR && o->u.tensor != NULL &&
        hop_dtype_is_complex(o->u.tensor->dtype))
        return o->u.tensor;
    if (o->kind == HOP_OPND_LIST && o->u.list.items != NULL) {
        for (size_t k = 0; k < o->u.list.n; k++) {
            const hop_meta *m = complex_operand(&o->u.list.items[k]);
            if (m != NULL)
                return m;
        }
    }
    return NULL;
}

hop_status
hop__complex_check(hop__infer *c, size_t nargs)
{
    if (hop_op_get(c->op)->complex) /* HOP_OP_LIST's complex column */
        return HOP_OK;
    for (size_t i = 0; i < nargs; i++) {
        const hop_meta *m = complex_operand(&c->args[i]);
        if (m != NULL) {
            hop__text t;
            return hop_error(HOP_DTYPE, "%s: complex dtypes are not supported, got %s", c->name,
                             hop__meta_text(&t, m));
        }
    }
    return HOP_OK;
}

/*
 * real(x) imag(x) angle(x): the parts (in radians) of a complex x, in its
 * parts' dtype; of a real x, x, zeros and 0 or pi (angle: a float function,
 * ints give f32).  conj(x) keeps the dtype (the identity on real x).
 */
hop_status
hop__infer_complex_part(hop__infer *c, const hop_meta *x)
{
    hop_dtype dtype = x->dtype;
    if (c->op == HOP_OP_angle && !hop_dtype_is_float(dtype) && !hop_dtype_is_complex(dtype))
        dtype = HOP_F32;
    else if (c->op != HOP_OP_conj)
        dtype = hop_dtype_real(dtype);
    return hop__set_tensor(c, dtype, x->rank, x->sizes);
}
