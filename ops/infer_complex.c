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

static bool
complex_ok(hop_op op)
{
    switch (op) {
    case HOP_OP_neg:
    case HOP_OP_abs:
    case HOP_OP_exp:
    case HOP_OP_log:
    case HOP_OP_sin:
    case HOP_OP_cos:
    case HOP_OP_tanh:
    case HOP_OP_sqrt:
    case HOP_OP_expm1:
    case HOP_OP_log1p:
    case HOP_OP_log2:
    case HOP_OP_log10:
    case HOP_OP_exp2:
    case HOP_OP_tan:
    case HOP_OP_arctan:
    case HOP_OP_sinh:
    case HOP_OP_cosh:
    case HOP_OP_arcsin:
    case HOP_OP_arccos:
    case HOP_OP_arcsinh:
    case HOP_OP_arccosh:
    case HOP_OP_arctanh:
    case HOP_OP_sign:
    case HOP_OP_add:
    case HOP_OP_sub:
    case HOP_OP_mul:
    case HOP_OP_div:
    case HOP_OP_pow:
    case HOP_OP_eq:
    case HOP_OP_ne:
    case HOP_OP_logical_and:
    case HOP_OP_logical_or:
    case HOP_OP_logical_not:
    case HOP_OP_where:
    case HOP_OP_sum:
    case HOP_OP_mean:
    case HOP_OP_prod:
    case HOP_OP_any:
    case HOP_OP_all:
    case HOP_OP_matmul:
    case HOP_OP_reshape:
    case HOP_OP_view:
    case HOP_OP_transpose:
    case HOP_OP_permute:
    case HOP_OP_unsqueeze:
    case HOP_OP_squeeze:
    case HOP_OP_expand:
    case HOP_OP_select:
    case HOP_OP_slice:
    case HOP_OP_cat:
    case HOP_OP_stack:
    case HOP_OP_full:
    case HOP_OP_zeros:
    case HOP_OP_ones:
    case HOP_OP_nonzero:
    case HOP_OP_sym_size:
    case HOP_OP_to:
    case HOP_OP_clone:
    case HOP_OP_cumsum:
    case HOP_OP_cumprod:
    case HOP_OP_take:
    case HOP_OP_dynamic_slice:
    case HOP_OP_dynamic_update_slice:
    case HOP_OP_mask_gradient:
    case HOP_OP_put:
    case HOP_OP_real:
    case HOP_OP_imag:
    case HOP_OP_conj:
    case HOP_OP_angle:
        return true;
    default:
        return hop_op_get(op)->rule == HOP_RULE_LINALG || hop_op_get(op)->rule == HOP_RULE_FFT;
    }
}

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
    if (complex_ok(c->op))
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
    hop__set_tensor(c, dtype, x->rank, x->sizes);
    return HOP_OK;
}
