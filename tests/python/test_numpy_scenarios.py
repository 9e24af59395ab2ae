"""NumPy as people write it (issue #29): 135 short programs (statistics,
indexing, set and search routines, linalg, fft, in-place updates, ufunc
methods, NumPy's documentation examples), each run by NumPy, by hop.numpy
eagerly (on hop.numpy arrays) and by hop.compile (numpy_diff.check: values,
dtype, shape, ndarray or NumPy scalar, the arguments after the call), and
compiled without a fallback.  add.at (an ImportError) and einsum's repeated
index ('ii', a trace) failed before they were found here."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import check

R = np.random.default_rng(0)
X = R.standard_normal((6, 4))
Y = R.standard_normal(6)
I = np.arange(12)
M = np.arange(12.).reshape(3, 4)
B = R.integers(0, 5, 20)
S = np.array([3., 1., 2., 5., 4.])
Z = R.standard_normal((5, 5))
P = R.random(10)
T = np.linspace(0, 1, 11)
SCENARIOS = [
 ("zscore", lambda x: (x - x.mean(0)) / x.std(0), (X,)),
 ("minmax", lambda x: (x - x.min()) / (x.max() - x.min()), (X,)),
 ("softmax_rows", lambda x: np.exp(x - x.max(1, keepdims=True)) /
  np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True), (X,)),
 ("clip_norm", lambda x: x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12), (X,)),
 ("one_hot", lambda b: np.eye(5)[b], (B,)),
 ("bincount", lambda b: np.bincount(b, minlength=6), (B,)),
 ("unique_counts", lambda b: np.unique(b, return_counts=True), (B,)),
 ("argsort_rank", lambda s: np.argsort(np.argsort(s)), (S,)),
 ("cumsum_norm", lambda p: np.cumsum(p) / p.sum(), (P,)),
 ("searchsorted_cdf", lambda p, t: np.searchsorted(np.cumsum(p) / p.sum(), t), (P, T)),
 ("moving_avg", lambda y: np.convolve(y, np.ones(3) / 3, mode="valid"), (Y,)),
 ("diff_sign", lambda y: np.diff(np.sign(y)), (Y,)),
 ("where_replace", lambda x: np.where(x < 0, 0, x), (X,)),
 ("mask_assign", lambda x: (lambda z: (z.__setitem__(z < 0, 0.0), z)[1])(x.copy()), (X,)),
 ("nan_fill", lambda x: np.nan_to_num(np.where(x > 1, np.nan, x), nan=-1.0), (X,)),
 ("nanmean", lambda x: np.nanmean(np.where(x > 1, np.nan, x), axis=0), (X,)),
 ("outer_dist", lambda x: np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)), (X,)),
 ("pairwise_dot", lambda x: x @ x.T, (X,)),
 ("cov", lambda x: np.cov(x, rowvar=False), (X,)),
 ("corrcoef", lambda x: np.corrcoef(x.T), (X,)),
 ("lstsq_fit", lambda x, y: np.linalg.lstsq(x, y, rcond=None)[0], (X, Y)),
 ("polyfit_line", lambda t: np.polyfit(t, 3 * t + 1, 1), (T,)),
 ("interp", lambda t: np.interp(np.array([0.05, 0.55]), t, t ** 2), (T,)),
 ("histogram", lambda y: np.histogram(y, bins=4), (Y,)),
 ("digitize", lambda y: np.digitize(y, [-1.0, 0.0, 1.0]), (Y,)),
 ("percentile", lambda y: np.percentile(y, [25, 50, 75]), (Y,)),
 ("median_axis", lambda x: np.median(x, axis=1), (X,)),
 ("argmax_unravel", lambda x: np.unravel_index(np.argmax(x), x.shape), (X,)),
 ("topk", lambda y: np.sort(y)[-3:][::-1], (Y,)),
 ("argpartition", lambda y: np.sort(y[np.argpartition(y, 2)[:2]]), (Y,)),
 ("tril_mask", lambda z: z * np.tri(5), (Z,)),
 ("triu_sum", lambda z: np.triu(z, 1).sum(), (Z,)),
 ("trace_diag", lambda z: (np.trace(z), np.diag(z)), (Z,)),
 ("kron", lambda m: np.kron(np.eye(2), m[:2, :2]), (M,)),
 ("meshgrid", lambda t: np.meshgrid(t[:3], t[:2]), (T,)),
 ("stack_cols", lambda y: np.column_stack([y, y ** 2, np.ones_like(y)]), (Y,)),
 ("pad", lambda m: np.pad(m, 1, mode="edge"), (M,)),
 ("roll", lambda i: np.roll(i, 3), (I,)),
 ("reshape_T", lambda i: i.reshape(3, 4).T.ravel(), (I,)),
 ("split", lambda i: np.split(i, 3), (I,)),
 ("tile_repeat", lambda i: (np.tile(i[:3], 2), np.repeat(i[:3], 2)), (I,)),
 ("fancy_idx", lambda m: m[[0, 2]][:, [1, 3]], (M,)),
 ("ix_", lambda m: m[np.ix_([0, 2], [1, 3])], (M,)),
 ("bool_rows", lambda m: m[m.sum(1) > 10], (M,)),
 ("add_at", lambda b: (lambda o: (np.add.at(o, b, 1), o)[1])(np.zeros(5)), (B,)),
 ("put_along", lambda x: np.take_along_axis(x, np.argsort(x, 1), 1), (X,)),
 ("allclose", lambda x: np.allclose(x, x + 1e-12), (X,)),
 ("isin", lambda b: np.isin(b, [1, 3]), (B,)),
 ("count_nonzero", lambda x: np.count_nonzero(x > 0, axis=0), (X,)),
 ("any_all", lambda x: (np.any(x > 2), np.all(x > -5)), (X,)),
 ("int_division", lambda i: (i // 5, i % 5, np.divmod(i, 4)), (I,)),
 ("float32_mix", lambda x: (x.astype(np.float32) * 2 + 1).dtype, (X,)),
 ("uint8_wrap", lambda i: (i.astype(np.uint8) * 30), (I,)),
 ("fft_power", lambda y: np.abs(np.fft.rfft(y)) ** 2, (Y,)),
 ("fft_conv", lambda y: np.fft.irfft(np.fft.rfft(y) * np.fft.rfft(y), n=6), (Y,)),
 ("inv_solve", lambda z: np.allclose(np.linalg.inv(z) @ z, np.eye(5)), (Z,)),
 ("det_slog", lambda z: np.linalg.slogdet(z), (Z,)),
 ("eigh_sym", lambda z: np.linalg.eigh(z + z.T)[0], (Z,)),
 ("svd_rank", lambda z: np.linalg.matrix_rank(z), (Z,)),
 ("einsum_bmm", lambda x: np.einsum("ij,kj->ik", x, x), (X,)),
 ("einsum_trace", lambda z: np.einsum("ii", z), (Z,)),
 ("logsumexp", lambda x: np.log(np.sum(np.exp(x - x.max()))) + x.max(), (X,)),
 ("cumprod_axis", lambda m: np.cumprod(m + 1, axis=1), (M,)),
 ("gradient", lambda y: np.gradient(y), (Y,)),
 ("linspace_ep", lambda y: np.linspace(y.min(), y.max(), 5, endpoint=False), (Y,)),
 ("arange_float", lambda y: np.arange(0, y.size, 0.5), (Y,)),
 ("full_like_nan", lambda x: np.full_like(x, np.nan).sum(), (X,)),
 ("clip", lambda x: np.clip(x, -0.5, 0.5), (X,)),
 ("round_dec", lambda x: np.round(x, 2), (X,)),
 ("sort_axis0", lambda x: np.sort(x, axis=0), (X,)),
 ("lexsort", lambda b: np.lexsort((np.arange(20), b)), (B,)),
 ("setdiff", lambda b: np.setdiff1d(np.arange(6), b), (B,)),
 ("intersect", lambda b: np.intersect1d(b, [0, 2, 4, 9]), (B,)),
 ("cross", lambda x: np.cross(x[:, :3], x[::-1, :3]), (X,)),
 ("inplace_div", lambda x: (lambda z: (z.__itruediv__(z.sum(0)), z)[1])(x.copy()), (X,)),
 ("ravel_multi", lambda: np.ravel_multi_index(([0, 1], [2, 3]), (3, 4)), ()),
 ("atleast2d", lambda y: np.atleast_2d(y).shape, (Y,)),
 ("expand_squeeze", lambda y: np.squeeze(np.expand_dims(y, (0, 2))).shape, (Y,)),
 ("swapaxes", lambda x: np.swapaxes(x[None], 0, 2).shape, (X,)),
 ("ptp", lambda x: np.ptp(x, axis=0), (X,)),
 ("average_w", lambda y: np.average(y, weights=np.arange(1, 7)), (Y,)),
 ("var_ddof", lambda x: np.var(x, axis=0, ddof=1), (X,)),
 ("prod_int", lambda i: np.prod(i[1:6]), (I,)),
 ("max_where", lambda x: np.max(x, axis=0, where=x < 1, initial=-np.inf), (X,)),
 ("heaviside", lambda y: np.heaviside(y, 0.5), (Y,)),
 ("select", lambda y: np.select([y < -1, y > 1], [-1, 1], 0), (Y,)),
 ("piecewise", lambda y: np.piecewise(y, [y < 0, y >= 0], [lambda v: -v, lambda v: v]), (Y,)),
 ("flip", lambda m: np.flip(m, axis=1), (M,)),
 ("rot90", lambda m: np.rot90(m), (M,)),
 ("nonzero_tuple", lambda m: np.nonzero(m > 5), (M,)),
 ("argwhere", lambda m: np.argwhere(m > 8), (M,)),
 ("array_split", lambda i: np.array_split(i, 5), (I,)),
 ("fromfunction", lambda: np.fromfunction(lambda i, j: i + j, (3, 3)), ()),
 ("identity_bool", lambda: np.identity(3, dtype=bool), ()),
 ("complex_abs", lambda y: np.abs(y + 1j * y[::-1]), (Y,)),
 ("angle_deg", lambda y: np.angle(y + 1j, deg=True), (Y,)),
 ("vander", lambda t: np.vander(t[:4], 3), (T,)),
 ("polyval", lambda t: np.polyval([1., -2., 1.], t), (T,)),
 ("trapz", lambda t: np.trapz(t ** 2, t), (T,)),
 ("mean_dtype", lambda i: np.mean(i, dtype=np.float32), (I,)),
 ("sum_bool", lambda x: (x > 0).sum(), (X,)),
 ("empty_then_fill", lambda y: (lambda o: (o.fill(2.0), o * y)[1])(np.empty(6)), (Y,)),
 ("concat_axis1", lambda m: np.concatenate([m, m], axis=1), (M,)),
 ("hsplit_vstack", lambda m: np.vstack(np.hsplit(m, 2)), (M,)),
 ("dot_vec", lambda y: np.dot(y, y), (Y,)),
 ("inner_outer", lambda y: (np.inner(y, y), np.outer(y, y).shape), (Y,)),
 ("tensordot", lambda x: np.tensordot(x, x, axes=([0], [0])), (X,)),
 ("matmul_3d", lambda x: (x.reshape(2, 3, 4) @ x.reshape(2, 4, 3)), (X,)),
 ("floor_ceil", lambda y: (np.floor(y), np.ceil(y), np.trunc(y)), (Y,)),
 ("log1p_expm1", lambda p: (np.log1p(p), np.expm1(p)), (P,)),
 ("hypot_arctan2", lambda y: (np.hypot(y, 1), np.arctan2(y, 1)), (Y,)),
 ("sinc_i0", lambda t: (np.sinc(t), np.i0(t)), (T,)),
 ("frexp_ldexp", lambda y: np.frexp(y), (Y,)),
 ("modf", lambda y: np.modf(y), (Y,)),
 ("isnan_any", lambda x: np.isnan(np.log(x)).any(), (X,)),
 ("std_keep", lambda x: x.std(axis=1, keepdims=True), (X,)),
 ("astype_int", lambda x: (x * 10).astype(int), (X,)),
 ("comparison_chain", lambda y: ((y > -1) & (y < 1)).sum(), (Y,)),
 ("xor_not", lambda b: np.logical_xor(b > 2, ~(b < 1)), (B,)),
 ("bitwise", lambda b: (b << 2) | (b & 1), (B,)),
 ("view_write", lambda m: (lambda z: (z[:, 1].__imul__(-1), z)[1])(m.copy()), (M,)),
 ("diag_set", lambda z: (lambda w: (np.fill_diagonal(w, 0), w)[1])(z.copy()), (Z,)),
 ("ones_tril_idx", lambda z: z[np.tril_indices(5, -1)], (Z,)),
 ("triu_idx_assign",
  lambda z: (lambda w: (w.__setitem__(np.triu_indices(5, 1), 0.0), w)[1])(z.copy()), (Z,)),
 ("argmin_axis", lambda x: x.argmin(axis=1), (X,)),
 ("max_keep", lambda x: x.max(axis=0, keepdims=True), (X,)),
 ("sum_tuple_axes", lambda x: x.reshape(2, 3, 4).sum(axis=(0, 2)), (X,)),
 ("round_half", lambda: np.round(np.array([0.5, 1.5, 2.5, -0.5])), ()),
 ("int_pow", lambda i: i ** 2 - 2 ** i[:5].sum(), (I,)),
 ("neg_int_pow", lambda i: np.float64(2.0) ** -i[:4], (I,)),
 ("maximum_reduce", lambda x: np.maximum.reduce(x, axis=0), (X,)),
 ("add_accumulate", lambda y: np.add.accumulate(y), (Y,)),
 ("multiply_outer", lambda y: np.multiply.outer(y[:3], y[:2]), (Y,)),
 ("empty_reduce_sum", lambda y: y[y > 100].sum(), (Y,)),
 ("empty_mean", lambda y: y[y > 100].mean(), (Y,)),
]


# Semantics people meet: promotion with scalars, integer wraparound, NaN,
# in-place methods on arguments, errors, Python control flow on data.
R2 = np.random.default_rng(1)
X2 = R2.standard_normal((5, 3))
Y2 = R2.standard_normal(7)
I2 = np.arange(10)
B2 = R2.integers(0, 4, 12)
F32 = R2.standard_normal(6).astype(np.float32)
I8 = np.array([100, 120, -128, 5], dtype=np.int8)
U8 = np.array([250, 3, 7], dtype=np.uint8)
BO = np.array([True, False, True, True])
def _loop_rows(x):
    out = []
    for row in x:
        out.append(row.sum())
    return np.array(out)
def _inplace_sort(y):
    y.sort()
    return y
def _fill(x):
    x.fill(3)
    return x
def _put(i):
    i.put([0, 2], [-1, -2])
    return i
def _repeated_setitem(i):
    i[[1, 1, 2]] = [7, 8, 9]
    return i
def _overlap(i):
    i[1:] = i[:-1]
    return i
def _aug_int_float(i):
    i += 1
    i *= 2
    return i
def _out_param(x):
    o = np.empty_like(x)
    np.multiply(x, 2, out=o)
    np.add(o, 1, out=o)
    return o
def _errstate(y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(y), y / 0
def _unpack(x):
    a, b, c = x.T
    return a + b * c
def _ellipsis(x):
    return x[..., 1], x[None, ..., None].shape
def _setitem_broadcast(x):
    x[:, 0] = [1, 2, 3, 4, 5]
    x[1] = 0
    return x
def _neg_step(i):
    return i[::-2], i[-3:], i[-1]
def _cond_py(y):
    if y.sum() > 0:
        return y * 2
    return -y
def _while_py(y):
    s = 0.0
    k = 0
    while s < 5 and k < 10:
        s += abs(y[k % 7])
        k += 1
    return s, k

SCENARIOS += [
 ("loop_rows", _loop_rows, (X2,)),
 ("inplace_sort", _inplace_sort, (Y2,)),
 ("fill", _fill, (X2,)),
 ("put_method", _put, (I2,)),
 ("repeated_setitem", _repeated_setitem, (I2,)),
 ("overlap_assign", _overlap, (I2,)),
 ("aug_int", _aug_int_float, (I2,)),
 ("out_param", _out_param, (X2,)),
 ("errstate", _errstate, (Y2,)),
 ("unpack_T", _unpack, (X2,)),
 ("ellipsis", _ellipsis, (X2,)),
 ("setitem_broadcast", _setitem_broadcast, (X2,)),
 ("neg_step", _neg_step, (I2,)),
 ("cond_py", _cond_py, (Y2,)),
 ("while_py", _while_py, (Y2,)),
 ("int8_overflow", lambda a: a + a, (I8,)),
 ("int8_scalar", lambda a: a * 3, (I8,)),
 ("uint8_sub", lambda a: a - 5, (U8,)),
 ("uint8_neg_scalar", lambda a: a + (-1), (U8,)),
 ("f32_scalar_f64", lambda a: a * np.float64(2.0), (F32,)),
 ("f32_pyfloat", lambda a: a * 2.5, (F32,)),
 ("f32_int64arr", lambda a: a + np.arange(6), (F32,)),
 ("bool_sum", lambda b: b.sum(), (BO,)),
 ("bool_cumsum", lambda b: np.cumsum(b), (BO,)),
 ("bool_add", lambda b: b + b, (BO,)),
 ("bool_mean", lambda b: b.mean(), (BO,)),
 ("int_mean", lambda i: i.mean(), (I2,)),
 ("int_true_div", lambda i: i / 3, (I2,)),
 ("int_pow_neg_float", lambda i: i ** -1.0, (I2,)),
 ("int_floordiv_zero", lambda i: i // 0, (I2,)),
 ("float_floordiv_zero", lambda y: y // 0.0, (Y2,)),
 ("mod_neg", lambda i: (-i) % 3, (I2,)),
 ("fmod_neg", lambda i: np.fmod(-i, 3), (I2,)),
 ("round_neg_dec", lambda y: np.round(y * 1000, -2), (Y2,)),
 ("around_int", lambda i: np.around(i * 17, -1), (I2,)),
 ("argsort_stable", lambda b: np.argsort(b, kind="stable"), (B2,)),
 ("unique_inverse", lambda b: np.unique(b, return_inverse=True), (B2,)),
 ("unique_index", lambda b: np.unique(b, return_index=True), (B2,)),
 ("diff_n2", lambda y: np.diff(y, n=2), (Y2,)),
 ("diff_prepend", lambda y: np.diff(y, prepend=0), (Y2,)),
 ("hist_range_density", lambda y: np.histogram(y, bins=3, range=(-2, 2), density=True), (Y2,)),
 ("bincount_w", lambda b: np.bincount(b, weights=np.arange(12.0)), (B2,)),
 ("norm_ord", lambda x: (np.linalg.norm(x, 1), np.linalg.norm(x, np.inf),
                         np.linalg.norm(x[:, 0], 3)), (X2,)),
 ("where_1arg", lambda y: np.where(y > 0), (Y2,)),
 ("nonzero_method", lambda y: (y > 0).nonzero(), (Y2,)),
 ("clip_method", lambda x: x.clip(min=0), (X2,)),
 ("round_method", lambda x: x.round(1), (X2,)),
 ("repeat_method", lambda i: i[:3].repeat([1, 2, 3]), (I2,)),
 ("take_method", lambda i: i.take([1, -1, 3]), (I2,)),
 ("take_axis", lambda x: np.take(x, [0, 2], axis=1), (X2,)),
 ("compress", lambda x: np.compress([True, False, True], x, axis=1), (X2,)),
 ("choose", lambda b: np.choose(b % 2, [np.zeros(12), np.ones(12)]), (B2,)),
 ("searchsorted_method", lambda i: i.searchsorted([2.5, 7], side="right"), (I2,)),
 ("dot_method", lambda x: x.T.dot(x), (X2,)),
 ("trace_method", lambda x: x[:3].trace(), (X2,)),
 ("diagonal_method", lambda x: x.diagonal(), (X2,)),
 ("argmax_keep", lambda x: np.argmax(x, axis=0, keepdims=True), (X2,)),
 ("any_axis_neg", lambda x: np.any(x > 1, axis=-1), (X2,)),
 ("sum_dtype", lambda i: np.sum(i, dtype=np.int8), (I2,)),
 ("cumsum_dtype", lambda i: np.cumsum(i, dtype=float), (I2,)),
 ("item", lambda i: i[3].item(), (I2,)),
 ("len_shape", lambda x: (len(x), x.shape, x.ndim, x.size), (X2,)),
 ("array_from_list_mixed", lambda y: np.array([y[0], 1, 2.5]), (Y2,)),
 ("array_of_arrays", lambda y: np.array([y, y * 2]).shape, (Y2,)),
 ("asarray_int_list", lambda: np.asarray([1, 2, 3]).dtype, ()),
 ("max_nan", lambda y: np.max(np.append(y, np.nan)), (Y2,)),
 ("nanmax", lambda y: np.nanmax(np.append(y, np.nan)), (Y2,)),
 ("nanargmin", lambda y: np.nanargmin(np.append(y, np.nan)), (Y2,)),
 ("nansum", lambda y: np.nansum(np.append(y, np.nan)), (Y2,)),
 ("sort_nan", lambda y: np.sort(np.append(y, np.nan)), (Y2,)),
 ("isfinite_inf", lambda y: np.isfinite(y / (y > 0)), (Y2,)),
 ("sign_zero", lambda y: np.sign(np.append(y, [0.0, -0.0])), (Y2,)),
 ("copysign", lambda y: np.copysign(1.0, y), (Y2,)),
 ("maximum_nan", lambda y: np.maximum(y, np.nan), (Y2,)),
 ("fmax_nan", lambda y: np.fmax(y, np.nan), (Y2,)),
 ("sqrt_neg", lambda y: np.sqrt(y), (Y2,)),
 ("power_frac", lambda y: np.power(y, 0.5), (Y2,)),
 ("exp_overflow", lambda y: np.exp(y * 1000), (Y2,)),
 ("float32_sum", lambda a: a.sum(), (F32,)),
 ("float32_mean", lambda a: a.mean(), (F32,)),
 ("float32_std", lambda a: a.std(), (F32,)),
 ("float32_matmul", lambda a: np.outer(a, a) @ a, (F32,)),
 ("shape_mismatch", lambda x, y: x + y, (X2, Y2)),
 ("bool_of_array", lambda y: bool(y > 0), (Y2,)),
 ("index_oob", lambda i: i[10], (I2,)),
 ("reshape_bad", lambda i: i.reshape(3, 4), (I2,)),
 ("axis_oob", lambda x: x.sum(axis=2), (X2,)),
 ("concat_mismatch", lambda x: np.concatenate([x, x.T]), (X2,)),
 ("matmul_mismatch", lambda x: x @ x, (X2,)),
 ("inv_singular", lambda: np.linalg.inv(np.ones((3, 3))), ()),
 ("cholesky_npd", lambda: np.linalg.cholesky(-np.eye(2)), ()),
 ("float_index", lambda i: i[1.0], (I2,)),
 ("astype_bool", lambda y: y.astype(bool), (Y2,)),
 ("astype_uint8_neg", lambda y: (y * 10).astype(np.int32).astype(np.uint8), (Y2,)),
 ("flatten_F", lambda x: x.flatten(order="F"), (X2,)),
 ("reshape_order_F", lambda i: i.reshape((2, 5), order="F"), (I2,)),
 ("transpose_axes", lambda x: x.reshape(5, 3, 1).transpose(2, 0, 1).shape, (X2,)),
 ("moveaxis", lambda x: np.moveaxis(x[None], 0, -1).shape, (X2,)),
 ("broadcast_to", lambda y: np.broadcast_to(y, (2, 7)).sum(0), (Y2,)),
 ("newaxis_mul", lambda y: (y[:, np.newaxis] * y[np.newaxis, :]).trace(), (Y2,)),
 ("linspace_retstep", lambda: np.linspace(0, 1, 5, retstep=True), ()),
 ("logspace", lambda: np.logspace(0, 2, 3), ()),
 ("geomspace", lambda: np.geomspace(1, 1000, 4), ()),
 ("eye_k", lambda: np.eye(3, 4, k=1, dtype=int), ()),
 ("full_int", lambda: np.full(3, 7), ()),
 ("arange_neg", lambda: np.arange(5, -5, -2.5), ()),
 ("cumsum_2d_none", lambda x: np.cumsum(x), (X2,)),
 ("quantile_interp", lambda y: np.quantile(y, 0.3, method="nearest"), (Y2,)),
 ("median_even", lambda y: np.median(y[:6]), (Y2,)),
 ("corr_valid", lambda y: np.correlate(y, y[:3], "valid"), (Y2,)),
 ("convolve_full", lambda y: np.convolve(y, [1, -1]), (Y2,)),
 ("polyder_int", lambda: (np.polyder([1, 2, 3]), np.polyint([3, 2, 1])), ()),
 ("roots", lambda: np.sort(np.roots([1, -3, 2])), ()),
 ("fft2_shift", lambda x: np.fft.fftshift(np.fft.fft2(x)).shape, (X2,)),
 ("fftfreq", lambda: np.fft.fftfreq(6, d=0.5), ()),
 ("ifft_roundtrip", lambda y: np.fft.ifft(np.fft.fft(y)).real, (Y2,)),
 ("solve_vec", lambda x: np.linalg.solve(x[:3] @ x[:3].T + np.eye(3), np.ones(3)), (X2,)),
 ("qr_r", lambda x: np.abs(np.linalg.qr(x)[1]), (X2,)),
 ("svd_s", lambda x: np.linalg.svd(x, compute_uv=False), (X2,)),
 ("pinv", lambda x: np.linalg.pinv(x).shape, (X2,)),
 ("matrix_power_neg", lambda x: np.linalg.matrix_power(x[:3] + 3 * np.eye(3), -2), (X2,)),
 ("complex_arith", lambda y: (y + 1j) * (y - 1j), (Y2,)),
 ("complex_sort", lambda y: np.sort(y[::-1] + 1j * y), (Y2,)),
 ("complex_sum_mean", lambda y: ((y + 2j).sum(), (y + 2j).mean()), (Y2,)),
 ("real_imag_conj", lambda y: ((y + 1j * y).real, (y + 1j * y).imag, np.conj(y + 1j)), (Y2,)),
]

def _eager_same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _eager_same(g, w)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        g = np.asarray(got)
        assert g.dtype == want.dtype and g.shape == np.shape(want), (g.dtype, g.shape)
        # a NumPy scalar where NumPy gives one, an array where it gives an array
        assert isinstance(want, np.generic) == (np.ndim(got) == 0 and
                                                not isinstance(got, np.ndarray) and
                                                getattr(got, "_scalar", True)), type(got)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, want)
        return
    assert type(got) is type(want) and (got == want or got != got), (got, want)


@pytest.mark.parametrize("fn,args", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_numpy_program_eager_and_compiled_is_numpys(fn, args):
    def copies():
        return [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            want = fn(*copies())
    except Exception as e:  # noqa: BLE001 (the error NumPy raises, which hop must raise)
        with pytest.raises(type(e)):
            fn(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in copies()])
        with pytest.raises(type(e)), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # hop.compile's fallback warning
            hop.compile(fn)(*copies())
        return
    # (NumPy's state as for want: hop.numpy warns for floating-point errors
    # as NumPy does, np.log of a negative here)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # hop.compile's fallback warning is an error; NumPy's own warnings
        # of the data (empty_mean: "Mean of empty slice.", which hop.numpy
        # gives as NumPy does, test_numpy_reduction_fidelity.py) are not
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("error", "hop", RuntimeWarning)
        _eager_same(fn(*[hnp.asarray(a) if isinstance(a, np.ndarray) else a
                         for a in copies()]), want)
        check(fn, *copies(), rtol=1e-12)
        c = hop.compile(fn)
        c(*copies())
        assert c._eager_why is None and c._untranslated is None, c.explain()


@pytest.mark.parametrize("name,b", [("add", 1.5), ("subtract", 2.0), ("maximum", 2.5),
                                    ("multiply", 3.0), ("negative", None)])
def test_ufunc_at_on_a_hop_numpy_array_and_its_view_is_numpys(name, b):
    idx = np.array([0, 1, 1, 3])
    extra = () if b is None else (b,)
    for make in (lambda a: a, lambda a: a[1:]):  # the array, and a view writing through
        want, got = np.arange(1.0, 6.0), hnp.arange(1.0, 6.0)
        getattr(np, name).at(make(want), idx, *extra)
        getattr(np, name).at(make(got), idx, *extra)
        np.testing.assert_array_equal(np.asarray(got), want)
    # compiled: the binary and unary ufuncs' .at are traced
    # (test_numpy_ufunc_at.py has them all)
    check(lambda i, x: (np.add.at(x, i, 1.5), x)[1], idx, np.arange(1.0, 6.0))
    check(lambda i, x: (np.subtract.at(x, i, 1.5), x)[1], idx, np.arange(1.0, 6.0))
    check(lambda i, x: (np.maximum.at(x, i, 2.5), x)[1], idx, np.arange(1.0, 6.0))
    check(lambda i, x: (np.negative.at(x, i), x)[1], idx, np.arange(1.0, 6.0))


def test_einsum_with_a_repeated_index_takes_the_diagonal():
    r = np.random.default_rng(1)
    z, t3 = r.standard_normal((4, 4)), r.standard_normal((3, 3, 2))
    for sub, ops in [("ii", (z,)), ("ii->i", (z,)), ("iij->j", (t3,)), ("iij->ij", (t3,)),
                     ("ij,jj->i", (z, z)), ("ii,jj->ij", (z, z)),
                     ("iii->i", (r.standard_normal((3, 3, 3)),))]:
        check(lambda *a, sub=sub: np.einsum(sub, *a), *ops, rtol=1e-12)
    with pytest.raises(ValueError, match="dimensions in operand 0 for collapsing index 'i' "
                                         r"don't match \(3 != 4\)"):
        np.einsum("ii", hnp.zeros((3, 4)))
    check(lambda a: np.einsum("ii", a), np.zeros((3, 4)))  # NumPy's ValueError
