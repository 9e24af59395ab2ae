/*
 * ops/view.c - view geometry over concrete sizes: how each view op moves the
 * dims of a strided input, and its result's sizes, strides and offset; and
 * the clamped start of the dynamic indexing ops (hop_dynamic_start), which
 * dynamic_slice's view and dynamic_update_slice's kernel share.
 *
 * The one copy.  Eager views and view kernels (runtime/shape_ops.c) and the
 * View instructions of plans call hop_view_of; the shape rules
 * (ops/infer_shape.c) take the dim moves of transpose, permute, unsqueeze,
 * squeeze and select from hop__view_dims and apply them to symbolic sizes.
 * reshape/view follow PyTorch's computeStride: a view exists when each run
 * of merged or split dims is contiguous within itself.
 *
 * Plans evaluate a view's operands only when they run (a SymInt size, a
 * slice bound, a select index), so hop_view_of checks what shape inference
 * checks at trace time, with messages naming the call and the input:
 *   HOP_SHAPE   "t = transpose(x, 0, 5): dim out of range (input f32[3, 4])"
 *   HOP_INDEX   "select = select(x, 0, i): index 7 is out of range for dim 0
 *               of f32[3, 4]" (eager's x[7] is an IndexError too)
 *   HOP_INVALID "reshape: int64 overflow computing 4611686018427387904 * 4"
 */
#include "ops/infer.h"

#include <inttypes.h>
#include <stdio.h>

/* A Python dim d of a rank-n tensor in [0, n), or -1. */
static int
wrap(int64_t d, int n)
{
    int64_t w = d < 0 ? d + n : d;
    return w >= 0 && w < n ? (int)w : -1;
}

int
hop__view_dims(hop_op op, int rank, const int64_t *p, int np, int *from)
{
    int a, b, nr = rank;
    switch (op) {
    case HOP_OP_transpose:
        if (np != 2 || (a = wrap(p[0], rank)) < 0 || (b = wrap(p[1], rank)) < 0)
            return -1;
        for (int k = 0; k < rank; k++)
            from[k] = k;
        from[a] = b;
        from[b] = a;
        break;
    case HOP_OP_permute:
        if (np != rank)
            return -2;
        for (int k = 0; k < rank; k++)
            if ((from[k] = wrap(p[k], rank)) < 0)
                return -1;
        break;
    case HOP_OP_unsqueeze:
        if (np != 1 || rank >= HOP_MAX_RANK || (a = wrap(p[0], rank + 1)) < 0)
            return -1;
        nr = rank + 1;
        for (int k = 0; k < nr; k++)
            from[k] = k < a ? k : k == a ? -1 : k - 1;
        break;
    case HOP_OP_squeeze:
        if (np > rank)
            return -2;
        nr = np;
        for (int k = 0; k < nr; k++)
            if ((from[k] = wrap(p[k], rank)) < 0)
                return -1;
        break;
    case HOP_OP_select:
        if (np != 2 || (a = wrap(p[0], rank)) < 0)
            return -1;
        nr = rank - 1;
        for (int k = 0; k < nr; k++)
            from[k] = k < a ? k : k + 1;
        break;
    default:
        return -1;
    }
    return nr;
}

/*
 * Strides for viewing (osizes, ostrides) as nsizes (same numel), or false.
 * PyTorch's at::detail::computeStride: walk the old dims from the right in
 * chunks that are contiguous in memory; each chunk must be covered exactly
 * by a run of new dims.  An empty tensor views as anything, with the
 * contiguous strides of its new sizes (sizes 0 counted as 1).
 */
static bool
view_strides(int orank, const int64_t *osizes, const int64_t *ostrides, int nrank,
             const int64_t *nsizes, int64_t *nstrides)
{
    int64_t numel = 1;
    for (int d = 0; d < orank; d++)
        numel *= osizes[d];
    if (numel == 0 || orank == 0) {
        int64_t s = 1;
        for (int d = nrank - 1; d >= 0; d--) {
            nstrides[d] = s;
            s *= nsizes[d] > 0 ? nsizes[d] : 1;
        }
        return true;
    }
    int view_d = nrank - 1;
    int64_t chunk_base = ostrides[orank - 1], tensor_numel = 1, view_numel = 1;
    for (int td = orank - 1; td >= 0; td--) {
        tensor_numel *= osizes[td];
        if (td == 0 || (osizes[td - 1] != 1 && ostrides[td - 1] != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || nsizes[view_d] == 1)) {
                nstrides[view_d] = view_numel * chunk_base;
                view_numel *= nsizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (td > 0) {
                chunk_base = ostrides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* `f32[3, 4]`, for messages. */
static const char *
input_text(char *buf, size_t cap, hop_dtype dtype, const hop_view *x)
{
    hop_sizes_print(dtype, x->rank, x->sizes, buf, cap);
    return buf;
}

static hop_status
bad(const char *what, hop_dtype dtype, const hop_view *x, const char *why)
{
    char t[160];
    return hop_error(HOP_SHAPE, "%s: %s (input %s)", what, why, input_text(t, sizeof t, dtype, x));
}

/* reshape/view: the sizes p with a -1 inferred, and the strides. */
static hop_status
reshape(hop_op op, hop_dtype dtype, const hop_view *x, const int64_t *p, int np, const char *what,
        hop_view *out, bool *copy)
{
    if (np > HOP_MAX_RANK)
        return bad(what, dtype, x, "too many dims");
    int64_t numel = 1, known = 1, prod;
    for (int d = 0; d < x->rank; d++)
        numel *= x->sizes[d];
    int infer = -1;
    for (int i = 0; i < np; i++) {
        out->sizes[i] = p[i];
        if (p[i] == -1 && infer < 0) {
            infer = i;
        } else if (p[i] < 0) {
            return bad(what, dtype, x, "negative size");
        } else if (__builtin_mul_overflow(known, p[i], &prod)) {
            /* A wrapped product could match x's numel; the shape rule
             * refuses the overflow as this does. */
            return hop_error(HOP_INVALID, "%s: int64 overflow computing %" PRId64 " * %" PRId64,
                             hop_op_get(op)->name, known, p[i]);
        } else {
            known = prod;
        }
    }
    if (infer >= 0)
        out->sizes[infer] = known ? numel / known : 0;
    int64_t total = 1;
    for (int i = 0; i < np; i++)
        total *= out->sizes[i]; /* no overflow: at most known or numel */
    if (total != numel)
        return bad(what, dtype, x, "the number of elements differs");
    out->rank = np;
    if (!view_strides(x->rank, x->sizes, x->strides, np, out->sizes, out->strides)) {
        /* The caller copies (reshape) or refuses (view); strides of the
         * copy, which is contiguous. */
        *copy = true;
        int64_t s = 1;
        for (int d = np - 1; d >= 0; d--) {
            out->strides[d] = s;
            s *= out->sizes[d];
        }
    }
    return HOP_OK;
}

int64_t
hop_dynamic_start(int64_t start, int64_t n, int64_t size)
{
    /* A start more negative than -n, or past n - size, is clamped, never an
     * error: the value is data, read when the op runs. */
    if (start < 0)
        start = start < -n ? 0 : start + n;
    int64_t hi = n - size < 0 ? 0 : n - size;
    return start < 0 ? 0 : start > hi ? hi : start;
}

int64_t
hop_dynamic_view(int rank, const int64_t *sizes, const int64_t *strides, int dim, int64_t start,
                 int64_t size, bool keep, int *orank, int64_t *osizes, int64_t *ostrides)
{
    int k = 0;
    for (int d = 0; d < rank; d++) {
        if (d == dim && !keep)
            continue;
        osizes[k] = d == dim ? size : sizes[d];
        ostrides[k++] = strides[d];
    }
    *orank = k;
    return hop_dynamic_start(start, sizes[dim], size) * strides[dim];
}

hop_status
hop_view_of(hop_op op, hop_dtype dtype, const hop_view *x, const int64_t *p, int np, unsigned none,
            const char *what, hop_view *out, bool *copy)
{
    if (x == NULL || out == NULL || copy == NULL || (np > 0 && p == NULL))
        return hop_error(HOP_MISUSE, "hop_view_of: NULL argument");
    if (what == NULL) {
        const hop_op_info *info = hop_op_get(op);
        what = info ? info->name : "view";
    }
    int r = x->rank, from[HOP_MAX_RANK];
    hop_view v = {.rank = r, .offset = x->offset};
    *copy = false;
    switch (op) {
    case HOP_OP_reshape:
    case HOP_OP_view: {
        hop_status st = reshape(op, dtype, x, p, np, what, &v, copy);
        if (st != HOP_OK)
            return st;
        break;
    }
    case HOP_OP_transpose:
    case HOP_OP_permute:
    case HOP_OP_unsqueeze:
    case HOP_OP_squeeze:
    case HOP_OP_select: {
        int nr = hop__view_dims(op, r, p, np, from);
        if (nr < 0)
            return bad(what, dtype, x, nr == -2 ? "wrong number of dims" : "dim out of range");
        if (op == HOP_OP_select) {
            int a = wrap(p[0], r);
            int64_t i = p[1] < 0 ? p[1] + x->sizes[a] : p[1];
            if (i < 0 || i >= x->sizes[a]) {
                char t[160];
                return hop_error(HOP_INDEX,
                                 "%s: index %" PRId64 " is out of range for dim %d of %s", what,
                                 p[1], a, input_text(t, sizeof t, dtype, x));
            }
            v.offset += i * x->strides[a];
        }
        v.rank = nr;
        for (int k = 0; k < nr; k++) {
            if (from[k] >= 0) {
                v.sizes[k] = x->sizes[from[k]];
                v.strides[k] = x->strides[from[k]];
            } else { /* unsqueeze's new dim, in front of x's dim k */
                v.sizes[k] = 1;
                v.strides[k] = k < r ? x->strides[k] * x->sizes[k] : 1;
            }
        }
        break;
    }
    case HOP_OP_expand:
        if (np < r || np > HOP_MAX_RANK)
            return bad(what, dtype, x, "cannot expand to fewer dims");
        v.rank = np;
        for (int i = np - 1; i >= 0; i--) {
            int xd = i - (np - r);
            int64_t want = p[i];
            if (xd < 0) {
                if (want < 0)
                    return bad(what, dtype, x, "-1 is not allowed for a new dim");
                v.sizes[i] = want;
                v.strides[i] = 0;
            } else if (want == -1 || want == x->sizes[xd]) {
                v.sizes[i] = x->sizes[xd];
                v.strides[i] = x->strides[xd];
            } else if (x->sizes[xd] == 1 && want >= 0) {
                v.sizes[i] = want;
                v.strides[i] = 0;
            } else {
                return bad(what, dtype, x, "sizes do not match");
            }
        }
        break;
    case HOP_OP_slice: {
        int a = np == 4 ? wrap(p[0], r) : -1;
        if (a < 0)
            return bad(what, dtype, x, "dim out of range");
        int64_t n = x->sizes[a], step = p[3];
        int64_t s = none & 1 ? 0 : p[1], e = none & 2 ? n : p[2];
        if (step <= 0)
            return bad(what, dtype, x, "step must be positive");
        if (s < 0)
            s += n;
        if (e < 0)
            e += n;
        s = s < 0 ? 0 : s > n ? n : s;
        e = e < s ? s : e > n ? n : e;
        memcpy(v.sizes, x->sizes, sizeof v.sizes);
        memcpy(v.strides, x->strides, sizeof v.strides);
        v.sizes[a] = (e - s + step - 1) / step;
        if (v.sizes[a] > 0) { /* (empty: NumPy's view, step 1 from the start) */
            v.strides[a] = x->strides[a] * step;
            v.offset += s * x->strides[a];
        }
        break;
    }
    case HOP_OP_dynamic_slice: { /* dim, the start as read, the size, keep */
        int a = np == 4 ? wrap(p[0], r) : -1;
        if (a < 0)
            return bad(what, dtype, x, "dim out of range");
        if (p[2] < 0 || p[2] > x->sizes[a] || (!p[3] && p[2] != 1))
            return bad(what, dtype, x, "the slice does not fit in its dim");
        v.offset += hop_dynamic_view(x->rank, x->sizes, x->strides, a, p[1], p[2], p[3] != 0,
                                     &v.rank, v.sizes, v.strides);
        break;
    }
    case HOP_OP_mask_gradient: /* x itself */
    case HOP_OP_fail_if:       /* x itself (its flag checked by the caller) */
        memcpy(v.sizes, x->sizes, sizeof v.sizes);
        memcpy(v.strides, x->strides, sizeof v.strides);
        break;
    default:
        return hop_error(HOP_UNSUPPORTED, "%s: not a view op", what);
    }
    for (int k = v.rank; k < HOP_MAX_RANK; k++)
        v.sizes[k] = v.strides[k] = 0;
    *out = v;
    return HOP_OK;
}
