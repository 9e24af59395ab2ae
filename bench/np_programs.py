"""bench/np_programs.py - the NumPy programs of bench/run.py's rows: the
eleven of np_small and np_large (issue #17) with their arguments, the BLAS
shapes of blas_shapes (issue #29) and np_if's branchy function.  Plain NumPy
code, which the rows run on NumPy and compiled by hop.compile; the rows
themselves (timing, figures) are in run.py.
"""

import numpy as np

import hop


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    return h @ w2 + b2


def np_pairwise(a, b):
    d = a[:, None, :] - b[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


def np_logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True)))[..., 0]


def np_kmeans(x, c):
    d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1)


def np_mandelbrot(cre, cim):
    """20 steps of z = z*z + c; np.where keeps escaped points still."""
    zr = np.zeros_like(cre)
    zi = np.zeros_like(cim)
    count = np.zeros(cre.shape, dtype=np.int32)
    for _ in range(20):
        inside = zr * zr + zi * zi < 4.0
        zr, zi = (np.where(inside, zr * zr - zi * zi + cre, zr),
                  np.where(inside, 2.0 * zr * zi + cim, zi))
        count = count + inside
    return count


def np_logreg_step(x, y, w):
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return w - 0.1 * (x.T @ (p - y)) / x.shape[0]


def np_layer_norm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def np_kmeans_step(x, c):
    """One Lloyd step: assign, then each centroid the mean of its points."""
    a = np.argmin(((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2), axis=1)
    onehot = (a[:, None] == np.arange(c.shape[0])).astype(x.dtype)
    return (onehot.T @ x) / np.maximum(onehot.sum(axis=0), 1.0)[:, None]


def np_conv2d_fft(img, k):
    s = (img.shape[0] + k.shape[0] - 1, img.shape[1] + k.shape[1] - 1)
    return np.fft.irfft2(np.fft.rfft2(img, s) * np.fft.rfft2(k, s), s)


def np_lstsq_fit(x, y):
    """A cubic through (x, y) by least squares."""
    v = np.stack([x ** 3, x ** 2, x, np.ones_like(x)], axis=1)
    return np.linalg.lstsq(v, y, rcond=None)[0]


def np_programs(large):
    """name -> (function, float32 arguments): every input <= 1k elements,
    or the largest array (input or result) >= 1M."""
    rng = np.random.default_rng(17)

    def r(*s):
        return rng.standard_normal(s).astype(np.float32)

    def plane(n):
        re, im = np.meshgrid(np.linspace(-2, 1, n), np.linspace(-1.5, 1.5, n))
        return re.astype(np.float32), im.astype(np.float32)

    def labels(n):
        return (rng.random(n) < 0.5).astype(np.float32)
    if large:
        return {"softmax": (np_softmax, (r(4096, 256),)),
                "mlp": (np_mlp, (r(16384, 64), r(64, 128), r(128), r(128, 16), r(16))),
                "pairwise": (np_pairwise, (r(1024, 3), r(1024, 3))),
                "logsumexp": (np_logsumexp, (r(4096, 256),)),
                "kmeans": (np_kmeans, (r(262144, 4), r(8, 4))),
                "mandelbrot": (np_mandelbrot, plane(1024)),
                "logreg": (np_logreg_step, (r(65536, 16), labels(65536), r(16))),
                "layernorm": (np_layer_norm, (r(4096, 256), r(256), r(256))),
                "kmeans_step": (np_kmeans_step, (r(262144, 4), r(8, 4))),
                "conv2d_fft": (np_conv2d_fft, (r(1020, 1020), r(5, 5))),
                "lstsq_fit": (np_lstsq_fit, (r(262144), r(262144)))}
    return {"softmax": (np_softmax, (r(32, 32),)),
            "mlp": (np_mlp, (r(16, 16), r(16, 32), r(32), r(32, 8), r(8))),
            "pairwise": (np_pairwise, (r(16, 3), r(16, 3))),
            "logsumexp": (np_logsumexp, (r(32, 32),)),
            "kmeans": (np_kmeans, (r(128, 2), r(8, 2))),
            "mandelbrot": (np_mandelbrot, plane(32)),
            "logreg": (np_logreg_step, (r(64, 16), labels(64), r(16))),
            "layernorm": (np_layer_norm, (r(32, 32), r(32), r(32))),
            "kmeans_step": (np_kmeans_step, (r(128, 2), r(8, 2))),
            "conv2d_fft": (np_conv2d_fft, (r(16, 16), r(3, 3))),
            "lstsq_fit": (np_lstsq_fit, (r(256), r(256)))}


def blas_shapes():
    """name -> (function, float64 arguments): every BLAS shape issue #29
    names."""
    rng = np.random.default_rng(29)

    def r(*s):
        return rng.standard_normal(s)
    return {"gemv X@w 1000": (lambda x, w: x @ w, (r(1000, 1000), r(1000))),
            "X.T@w 1000": (lambda x, w: x.T @ w, (r(1000, 1000), r(1000))),
            "w@X 1000": (lambda w, x: w @ x, (r(1000), r(1000, 1000))),
            "X.T@w 65536x8": (lambda x, w: x.T @ w, (r(65536, 8), r(65536))),
            "X.T@w 32768x24": (lambda x, w: x.T @ w, (r(32768, 24), r(32768))),
            "gemm 256": (lambda a, b: a @ b, (r(256, 256), r(256, 256))),
            "batched 64x32x32": (lambda a, b: a @ b, (r(64, 32, 32), r(64, 32, 32))),
            "small 8x8": (lambda a, b: a @ b, (r(8, 8), r(8, 8))),
            "dot 1M": (lambda a, b: np.dot(a, b), (r(1 << 20), r(1 << 20))),
            "outer 1000": (lambda a, b: np.outer(a, b), (r(1000), r(1000)))}


def np_branchy(x):
    # an integer count: a condition with NumPy's bits, merged into one cond
    # (hop's float np.sum(x) may round otherwise, so that `if` is a break)
    if np.sum(x > 0) > 0:
        return np.sin(x) * 2.0
    return np.cos(x) - 1.0


def np_branchy_cond(x):
    return hop.cond(np.sum(x > 0) > 0, lambda: np.sin(x) * 2.0, lambda: np.cos(x) - 1.0)
