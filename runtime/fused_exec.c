/*
 * runtime/fused_exec.c - the tiled executor of fused elementwise groups
 * (built by lowering/fused.c; runtime/program.h has their format), copy
 * groups, and tensor copies through them.
 *
 * The executor walks the output in tiles of TILE elements; each step runs
 * the runtime's vector function for its op and dtype (the same code
 * hop_eager runs, so results agree bit for bit) from tile registers on the
 * stack into a tile register, and the last step writes the output
 * directly.  Intermediates never touch memory beyond L1.  Inputs that are
 * contiguous (or one broadcast element) are read in place: the common case
 * is one flat run over every operand.  Otherwise the output's dims are
 * walked with an odometer after broadcasting and merging dims, as the
 * runtime's engine does, and strided inputs are gathered into a register
 * per tile.
 */
#include "runtime/vm_impl.h"

#include <inttypes.h>
#include <stdio.h>

#define TILE 512
#define FAR_ELEMS (1 << 18) /* a run worth prefetching (1 MB of f32) */
#define SPLIT_UNITS 65536 /* work units (hop_op_info.cost: an add's is 1) worth a thread */
/* A piece of a split group: ~20 us on the register kernels (fused_reg.c),
 * which run a unit in ~0.04 ns (exp(relu(2x+1)), 11 units an element, at
 * 16M elements in 6.8 ms).  Each piece costs two atomics on lines both
 * threads write (pool.c's claim and count): at 32768 units (~1.2 us) a
 * map's 100,000 x 16 batched body was 146 pieces and took 300-353 us of
 * CPU on two threads against 200 on one (16 pieces: 205-268; loaded
 * machine, the pool forced).  At least MIN_PIECES per thread, for balance
 * (the last piece is what one thread may wait for), but none under
 * SMALL_PIECE_UNITS. */
#define PIECE_UNITS (1 << 19)
#define SMALL_PIECE_UNITS 32768
#define MIN_PIECES 8
#define MAX_PIECES 1024

void
hop__fgroup_copy(hop__fgroup *g, hop_dtype dst, hop_dtype src)
{
    memset(g, 0, hop__fgroup_bytes(1));
    g->nsteps = 1;
    g->ninputs = 1;
    g->in_dtype[0] = src;
    g->odtype = dst;
    g->cost = 1;
    hop__fstep *s = &g->steps[0];
    s->fn = hop__vfn_copy(dst);
    s->op = HOP_OP_clone;
    s->nin = 1;
    s->out = -1;
    s->dtype = s->fdtype = dst;
    s->in[0] = (hop__fopnd){.src = HOP__F_INPUT, .idx = 0, .need = dst, .have = src};
    hop__fgroup_seal(g);
}

void
hop__fgroup_seal(hop__fgroup *g)
{
    /* the register kernel's arrays, zeroed as the struct's were */
    unsigned char *regs = (unsigned char *)&g->steps[g->nsteps];
    memset(regs, 0, hop__freg_bytes(g->nsteps));
    g->reg_splat = (float *)(void *)regs;
    g->reg_arg = (int8_t *)(regs + (size_t)(g->nsteps + 1) * sizeof(float));
    g->reg_code = (uint8_t *)(g->reg_arg + g->nsteps + 1);
    g->has_sym = false;
    g->same_dtypes = true;
    for (int s = 0; s < g->nsteps; s++) {
        /* an f16 step computes in f32 and rounds: not for the small runners */
        g->same_dtypes &= g->steps[s].fdtype == g->steps[s].dtype;
        for (int i = 0; i < g->steps[s].nin; i++) {
            g->has_sym |= g->steps[s].in[i].src == HOP__F_SYM;
            g->same_dtypes &= g->steps[s].in[i].have == g->steps[s].in[i].need;
        }
    }
    hop__freg_plan(g);
}

/* ------------------------------------------------------------ execution */

typedef struct frun {
    const hop__fgroup *g;
    int rank;
    int64_t numel;
    int64_t sizes[HOP_MAX_RANK];
    char *out;
    int64_t ost[HOP_MAX_RANK];
    const char *in[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN][HOP_MAX_RANK];
    char *xo[HOP__F_MAXXOUT]; /* the extra outputs (a multi-output group) */
    int64_t xst[HOP__F_MAXXOUT][HOP_MAX_RANK];
    _Alignas(8) unsigned char sym[HOP__F_MAXSTEPS][3][8];
} frun;

static void
spread(unsigned char *dst, const void *src, size_t esize, int64_t m)
{
    if ((const unsigned char *)src != dst)
        memcpy(dst, src, esize);
    for (int64_t filled = 1; filled < m;) {
        int64_t k = filled < m - filled ? filled : m - filled;
        memcpy(dst + filled * (int64_t)esize, dst, (size_t)k * esize);
        filled += k;
    }
}

/* A lone step over operands it reads in place has no intermediates to keep
 * in cache: one call over the whole run streams better than tiles (a + b
 * into a buffer is memory-bound). */
static bool
whole_run(const hop__fgroup *g, int64_t ost, const int64_t *ist)
{
    if (g->nsteps != 1 || ost != 1 || g->steps[0].fdtype != g->steps[0].dtype)
        return false;
    const hop__fstep *st = &g->steps[0];
    bool steps = false;
    for (int i = 0; i < st->nin; i++) {
        const hop__fopnd *op = &st->in[i];
        if (op->have != op->need)
            return false;
        if (op->src == HOP__F_INPUT) {
            if (ist[op->idx] != 0 && ist[op->idx] != 1)
                return false;
            steps |= ist[op->idx] == 1;
        }
    }
    return steps;
}

/* The next tile's contiguous inputs and output towards the cache while this
 * tile computes: its steps run in L1, so without this a large group waits
 * for memory and computes by turns (C that streams one loop overlaps them;
 * measured on 16M exp(relu(2x+1)), 1 thread: 0.59 -> 0.38 ns per
 * element, C 0.24-0.26). */
static inline void
prefetch_tile(const hop__fgroup *g, int64_t j, char *o, int64_t ost, size_t osz,
              const char *const *ip, const int64_t *ist)
{
    for (int k = 0; k < g->ninputs; k++) {
        if (ist[k] != 1)
            continue;
        /* the size once: hop_dtype_size is a call (ops/dtype.c), and in the
         * loop's test it ran once a line, 12% of np_large mandelbrot's
         * instructions */
        int64_t isz = (int64_t)hop_dtype_size(g->in_dtype[k]);
        const char *p = ip[k] + j * isz;
        for (int64_t b = 0; b < TILE * isz; b += 64)
            __builtin_prefetch(p + b, 0, 3);
    }
    if (ost == 1)
        for (int64_t b = 0; b < TILE * (int64_t)osz; b += 64)
            __builtin_prefetch(o + j * (int64_t)osz + b, 1, 3);
}

/* Every input contiguous or one element (the register kernel's operands). */
static inline bool
flat_operands(const hop__fgroup *g, const int64_t *ist)
{
    for (int k = 0; k < g->ninputs; k++)
        if (ist[k] != 0 && ist[k] != 1)
            return false;
    return true;
}

/* A multi-output group's extra outputs in a run: where each starts and its
 * stride (elements). */
typedef struct xrun {
    char *at[HOP__F_MAXXOUT];
    int64_t st[HOP__F_MAXXOUT];
} xrun;

/* Step st's m results (in r) into its extra output at tile j of x. */
static void
store_extra(const hop__fstep *st, const xrun *x, int64_t j, int64_t m, const void *r)
{
    int e = st->store - 1;
    int64_t sz = (int64_t)hop_dtype_size(st->dtype);
    if (x->st[e] == 1)
        memcpy(x->at[e] + j * sz, r, (size_t)(m * sz));
    else
        hop__scatter(m, x->at[e] + j * x->st[e] * sz, x->st[e], r, (size_t)sz);
}

/* n output elements at o (stride ost) from inputs at ip (strides ist); a
 * multi-output group's extra outputs at x (NULL: none). */
static void
run_tiles(const frun *c, int64_t n, char *o, int64_t ost, const char *const *ip, const int64_t *ist,
          const xrun *x)
{
    const hop__fgroup *g = c->g;
    _Alignas(64) unsigned char regs[HOP__F_MAXREGS][TILE * 8];
    _Alignas(64) unsigned char scr[3][TILE * 8];
    _Alignas(64) unsigned char gat[HOP__F_MAXIN][TILE * 8];
    _Alignas(64) unsigned char otmp[TILE * 8];
    _Alignas(64) unsigned char ftmp[TILE * 8]; /* a step's f32 results before rounding */
    size_t osz = hop_dtype_size(g->odtype);
    if (g->reg && ost == 1 && flat_operands(g, ist) &&
        hop__freg_run(g, n, o, (const void *const *)ip, ist))
        return;
    int64_t tile = whole_run(g, ost, ist) ? n : TILE;
    /* a group this large comes from memory, not from the cache (whether it
     * runs whole or in a thread's pieces) */
    bool far = tile == TILE && c->numel >= FAR_ELEMS;
    for (int64_t j = 0; j < n; j += tile) {
        int64_t m = n - j < tile ? n - j : tile;
        if (far && j + 2 * TILE <= n)
            prefetch_tile(g, j + TILE, o, ost, osz, ip, ist);
        const void *ptr[HOP__F_MAXIN];
        int inc[HOP__F_MAXIN];
        for (int k = 0; k < g->ninputs; k++) {
            size_t isz = hop_dtype_size(g->in_dtype[k]);
            if (ist[k] == 0) {
                ptr[k] = ip[k];
                inc[k] = 0;
            } else if (ist[k] == 1) {
                ptr[k] = ip[k] + j * (int64_t)isz;
                inc[k] = 1;
            } else {
                hop__convert(m, gat[k], g->in_dtype[k], ip[k] + j * ist[k] * (int64_t)isz,
                             g->in_dtype[k], ist[k]);
                ptr[k] = gat[k];
                inc[k] = 1;
            }
        }
        void *dst = NULL;
        for (int s = 0; s < g->nsteps; s++) {
            const hop__fstep *st = &g->steps[s];
            const void *a[3];
            int ai[3];
            for (int i = 0; i < st->nin; i++) {
                const hop__fopnd *op = &st->in[i];
                const void *p;
                int pi;
                switch (op->src) {
                case HOP__F_REG:
                    p = regs[op->idx];
                    pi = 1;
                    break;
                case HOP__F_INPUT:
                    p = ptr[op->idx];
                    pi = inc[op->idx];
                    break;
                case HOP__F_SCALAR:
                    p = op->val;
                    pi = 0;
                    break;
                default:
                    p = c->sym[s][i];
                    pi = 0;
                    break;
                }
                if (op->have != op->need) {
                    hop__convert(pi ? m : 1, scr[i], op->need, p, op->have, 1);
                    p = scr[i];
                }
                a[i] = p;
                ai[i] = pi;
            }
            /* Unary functions read every element; binary ones need one
             * operand that steps; where takes anything. */
            if (st->op != HOP_OP_where && !ai[0] && (st->nin == 1 || !ai[1])) {
                spread(scr[0], a[0], hop_dtype_size(st->in[0].need), m);
                a[0] = scr[0];
                ai[0] = 1;
            }
            if (st->out >= 0)
                dst = regs[st->out];
            else
                dst = ost == 1 ? (void *)(o + j * (int64_t)osz) : otmp;
            if (st->fdtype == st->dtype) {
                st->fn(m, dst, a, ai);
            } else {
                st->fn(m, ftmp, a, ai);
                hop__convert(m, dst, st->dtype, ftmp, st->fdtype, 1);
            }
            if (st->store)
                store_extra(st, x, j, m, dst);
        }
        if (dst == otmp)
            hop__scatter(m, o + j * ost * (int64_t)osz, ost, otmp, osz);
    }
}

/* How run_short_rows reads input k: 0 one element, 1 in the output's order,
 * 2 gathered per tile, 3 gathered once (periodic: a row vector broadcast
 * over the rows, its period dividing TILE, so every tile holds the same
 * elements). */
static int
input_how(const frun *c, int k)
{
    bool zero = true, same = true;
    for (int d = 0; d < c->rank; d++) {
        zero = zero && c->ist[k][d] == 0;
        same = same && c->ist[k][d] == c->ost[d];
    }
    if (zero || same)
        return zero ? 0 : 1;
    int d0 = 0;
    while (c->ist[k][d0] == 0)
        d0++;
    int64_t period = 1;
    for (int d = d0; d < c->rank; d++)
        period *= c->sizes[d];
    /* (dims before the first it steps through repeat its elements) */
    return d0 > 0 && TILE % period == 0 ? 3 : 2;
}

/*
 * Short rows (softmax's x - max over 32 columns, pairwise distances' 3
 * coordinates; a bias row of 128 added to every row of a matmul's result):
 * a run per row costs more than the row.  When the output is contiguous,
 * tiles of it are computed whole instead, each input that does not step
 * through the output's order gathered into a tile first.  Rows under 64
 * always; rows up to a tile when no input needs a gather per tile (then a
 * tile is a copy-free run over several rows).
 */
static bool
short_rows(const frun *c)
{
    int inner = c->rank - 1;
    if (c->rank < 2 || c->sizes[inner] >= TILE || c->g->nxout > 0)
        return false;
    int64_t expect = 1;
    for (int d = inner; d >= 0; d--) {
        if (c->ost[d] != expect)
            return false;
        expect *= c->sizes[d];
    }
    if (c->sizes[inner] < 64)
        return true;
    for (int k = 0; k < c->g->ninputs; k++)
        if (input_how(c, k) == 2)
            return false;
    return true;
}

/* One input's view of the output's dims for gathering: adjacent dims it
 * steps through contiguously merged (its own, fewer rows). */
typedef struct gview {
    int rank;
    int64_t sizes[HOP_MAX_RANK], st[HOP_MAX_RANK];
} gview;

static void
gview_init(gview *v, const frun *c, int k)
{
    v->rank = 0;
    for (int d = 0; d < c->rank; d++) {
        int n = v->rank;
        if (n > 0 && v->st[n - 1] == c->ist[k][d] * c->sizes[d]) {
            v->sizes[n - 1] *= c->sizes[d];
            v->st[n - 1] = c->ist[k][d];
        } else {
            v->sizes[n] = c->sizes[d];
            v->st[n] = c->ist[k][d];
            v->rank++;
        }
    }
}

/* The odometer's carry from dim d0 outwards: each dim at its end goes back
 * to 0 and steps the one before it, off following.  A macro, so that the
 * gather loops compile as when they wrote it out (a function, even
 * inlined, grew them by 2 KB). */
#define ODOMETER_CARRY(v, idx, off, d0)                                                            \
    for (int d = (d0); d > 0 && (idx)[d] == (v)->sizes[d]; d--) {                                  \
        (off) += (v)->st[d - 1] - (v)->sizes[d] * (v)->st[d];                                      \
        (idx)[d] = 0;                                                                              \
        (idx)[d - 1]++;                                                                            \
    }

/* Elements [pos, pos + m) of an input (of view v over src) in the output's
 * order into dst. */
#define GATHER(T, sfx)                                                                             \
    static void gather_##sfx(T *dst, const T *src, const gview *v, int64_t pos, int64_t m)         \
    {                                                                                              \
        int inner = v->rank - 1;                                                                   \
        int64_t idx[HOP_MAX_RANK], off = 0, s = v->st[inner], rest = pos;                          \
        for (int d = inner; d >= 0; d--) {                                                         \
            idx[d] = rest % v->sizes[d];                                                           \
            rest /= v->sizes[d];                                                                   \
            off += idx[d] * v->st[d];                                                              \
        }                                                                                          \
        for (int64_t done = 0; done < m;) {                                                        \
            if (inner > 0 && idx[inner] == 0 && idx[inner - 1] == 0 &&                             \
                m - done >= v->sizes[inner] * v->sizes[inner - 1]) {                               \
                /* a whole block of the two inner dims: rows without the odometer */               \
                int64_t rows = v->sizes[inner - 1], n = v->sizes[inner], s1 = v->st[inner - 1];    \
                const T *p = src + off;                                                            \
                T *o = dst + done;                                                                 \
                for (int64_t j = 0; j < rows; j++, o += n, p += s1)                                \
                    for (int64_t i = 0; i < n; i++)                                                \
                        o[i] = p[i * s];                                                           \
                done += rows * n;                                                                  \
                if (inner < 2)                                                                     \
                    break; /* the block was everything */                                          \
                off += v->st[inner - 2];                                                           \
                idx[inner - 2]++;                                                                  \
                ODOMETER_CARRY(v, idx, off, inner - 2)                                             \
                continue;                                                                          \
            }                                                                                      \
            if (s == 0 && inner > 0 && idx[inner] == 0 && m - done >= v->sizes[inner]) {           \
                /* whole rows of one element each (x - max over rows): no odometer per row */      \
                int64_t n = v->sizes[inner], s1 = v->st[inner - 1], rows = (m - done) / n;         \
                if (rows > v->sizes[inner - 1] - idx[inner - 1])                                   \
                    rows = v->sizes[inner - 1] - idx[inner - 1];                                   \
                const T *p = src + off;                                                            \
                T *o = dst + done;                                                                 \
                for (int64_t j = 0; j < rows; j++, o += n) {                                       \
                    T x = p[j * s1];                                                               \
                    for (int64_t i = 0; i < n; i++)                                                \
                        o[i] = x;                                                                  \
                }                                                                                  \
                done += rows * n;                                                                  \
                off += rows * s1;                                                                  \
                idx[inner - 1] += rows;                                                            \
                ODOMETER_CARRY(v, idx, off, inner - 1)                                             \
                continue;                                                                          \
            }                                                                                      \
            int64_t n = v->sizes[inner] - idx[inner];                                              \
            if (n > m - done)                                                                      \
                n = m - done;                                                                      \
            const T *p = src + off;                                                                \
            T *o = dst + done;                                                                     \
            if (s == 0) {                                                                          \
                T x = *p;                                                                          \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = x;                                                                      \
            } else if (s == 1) {                                                                   \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = p[i];                                                                   \
            } else {                                                                               \
                for (int64_t i = 0; i < n; i++)                                                    \
                    o[i] = p[i * s];                                                               \
            }                                                                                      \
            done += n;                                                                             \
            off += n * s;                                                                          \
            idx[inner] += n;                                                                       \
            ODOMETER_CARRY(v, idx, off, inner)                                                     \
        }                                                                                          \
    }
GATHER(uint8_t, 1)
GATHER(uint16_t, 2)
GATHER(uint32_t, 4)
GATHER(uint64_t, 8)
/* c128's elements: 16 bytes moved as one value */
typedef struct gather16 {
    uint64_t lo, hi;
} gather16;
GATHER(gather16, 16)

static void
gather(void *dst, const char *src, size_t isz, const gview *v, int64_t pos, int64_t m)
{
    switch (isz) {
    case 1:
        gather_1(dst, (const uint8_t *)src, v, pos, m);
        break;
    case 2:
        gather_2(dst, (const uint16_t *)src, v, pos, m);
        break;
    case 4:
        gather_4(dst, (const uint32_t *)src, v, pos, m);
        break;
    case 8:
        gather_8(dst, (const uint64_t *)src, v, pos, m);
        break;
    default:
        gather_16(dst, (const gather16 *)src, v, pos, m);
        break;
    }
}

static void
run_short_rows(const frun *c, int64_t begin, int64_t end)
{
    const hop__fgroup *g = c->g;
    size_t osz = hop_dtype_size(g->odtype);
    _Alignas(64) unsigned char buf[HOP__F_MAXIN][TILE * 8];
    const char *ip[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN];
    int how[HOP__F_MAXIN]; /* input_how's */
    gview views[HOP__F_MAXIN];
    bool reg = g->reg; /* the register kernel takes the range whole */
    for (int k = 0; k < g->ninputs; k++) {
        how[k] = input_how(c, k);
        ist[k] = how[k] != 0;
        if (how[k] >= 2)
            gview_init(&views[k], c, k);
        reg &= how[k] != 2;
    }
    if (reg) {
        /* a periodic input gathered once is one period of the kernel's */
        _Static_assert(TILE == HOP__FREG_PERIOD, "a gathered tile is the kernel's period");
        int64_t inc[HOP__F_MAXIN];
        const void *kp[HOP__F_MAXIN];
        for (int k = 0; k < g->ninputs; k++) {
            size_t isz = hop_dtype_size(g->in_dtype[k]);
            inc[k] = how[k] == 3 ? HOP__FREG_PERIOD : how[k];
            if (how[k] == 3) {
                gather(buf[k], c->in[k], isz, &views[k], begin,
                       end - begin < TILE ? end - begin : TILE);
                kp[k] = buf[k];
            } else {
                kp[k] = c->in[k] + (how[k] ? begin * (int64_t)isz : 0);
            }
        }
        if (hop__freg_run(g, end - begin, c->out + begin * (int64_t)osz, kp, inc))
            return;
    }
    for (int64_t pos = begin; pos < end;) {
        int64_t m = end - pos < TILE ? end - pos : TILE;
        for (int k = 0; k < g->ninputs; k++) {
            size_t isz = hop_dtype_size(g->in_dtype[k]);
            if (how[k] == 0) {
                ip[k] = c->in[k];
            } else if (how[k] == 1) {
                ip[k] = c->in[k] + pos * (int64_t)isz;
            } else if (how[k] == 2 || pos == begin) {
                gather(buf[k], c->in[k], isz, &views[k], pos, m);
                ip[k] = (const char *)buf[k];
            }
        }
        run_tiles(c, m, c->out + pos * (int64_t)osz, 1, ip, ist, NULL);
        pos += m;
    }
}

/* The element size of g's extra output e: its step's dtype. */
static size_t
xsize(const hop__fgroup *g, int e)
{
    for (int s = 0; s < g->nsteps; s++)
        if (g->steps[s].store == e + 1)
            return hop_dtype_size(g->steps[s].dtype);
    return 1;
}

static void
run_range(const frun *c, int64_t begin, int64_t end)
{
    const hop__fgroup *g = c->g;
    size_t osz = hop_dtype_size(g->odtype);
    const char *ip[HOP__F_MAXIN];
    int64_t ist[HOP__F_MAXIN];
    if (short_rows(c)) {
        run_short_rows(c, begin, end);
        return;
    }
    xrun x;
    if (c->rank <= 1) {
        int64_t os = c->rank ? c->ost[0] : 1;
        for (int k = 0; k < g->ninputs; k++) {
            ist[k] = c->rank ? c->ist[k][0] : 0;
            ip[k] = c->in[k] + begin * ist[k] * (int64_t)hop_dtype_size(g->in_dtype[k]);
        }
        for (int e = 0; e < g->nxout; e++) {
            x.st[e] = c->rank ? c->xst[e][0] : 1;
            x.at[e] = c->xo[e] + begin * x.st[e] * (int64_t)xsize(g, e);
        }
        run_tiles(c, end - begin, c->out + begin * os * (int64_t)osz, os, ip, ist, &x);
        return;
    }
    int r = c->rank, inner = r - 1;
    int64_t idx[HOP_MAX_RANK], rest = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rest % c->sizes[d];
        rest /= c->sizes[d];
    }
    for (int k = 0; k < g->ninputs; k++)
        ist[k] = c->ist[k][inner];
    for (int e = 0; e < g->nxout; e++)
        x.st[e] = c->xst[e][inner];
    for (int64_t pos = begin; pos < end;) {
        int64_t ooff = 0;
        for (int d = 0; d < r; d++)
            ooff += idx[d] * c->ost[d];
        for (int k = 0; k < g->ninputs; k++) {
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d] * c->ist[k][d];
            ip[k] = c->in[k] + off * (int64_t)hop_dtype_size(g->in_dtype[k]);
        }
        for (int e = 0; e < g->nxout; e++) {
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d] * c->xst[e][d];
            x.at[e] = c->xo[e] + off * (int64_t)xsize(g, e);
        }
        int64_t n = c->sizes[inner] - idx[inner];
        if (n > end - pos)
            n = end - pos;
        run_tiles(c, n, c->out + ooff * (int64_t)osz, c->ost[inner], ip, ist, &x);
        pos += n;
        idx[inner] += n;
        for (int d = inner; d > 0 && idx[d] == c->sizes[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static void
task(const void *ctx, int ith, int nth)
{
    const frun *c = ctx;
    int64_t b, e;
    hop__split(c->numel, ith, nth, 64, &b, &e);
    if (b < e)
        run_range(c, b, e);
}

/* How many pieces a group of `work` units is split into on `threads`. */
static int
split_pieces(int64_t work, int threads)
{
    int64_t pieces = work / PIECE_UNITS, lo = (int64_t)threads * MIN_PIECES;
    if (lo > work / SMALL_PIECE_UNITS)
        lo = work / SMALL_PIECE_UNITS;
    if (lo < threads)
        lo = threads;
    if (pieces < lo)
        pieces = lo;
    return pieces > MAX_PIECES ? MAX_PIECES : (int)pieces;
}

static bool
contiguous(const hop_tensor *t, int64_t *numel)
{
    int64_t expect = 1;
    bool ok = true;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->sizes[d] != 1 && t->strides[d] != expect)
            ok = false;
        expect *= t->sizes[d];
    }
    *numel = expect;
    return ok;
}

void
hop__fgroup_text(const hop__fgroup *g, hop__buf *b)
{
    if (g->text)
        hop__buf_puts(b, g->text);
    else if (g->describe)
        g->describe(g->desc, b);
    else
        hop__buf_puts(b, "fused");
}

static hop_status
mismatch(const hop__fgroup *g, const hop_tensor *out, const hop_tensor *x)
{
    hop__ttext a, b;
    hop__buf what;
    hop__buf_init(&what);
    hop__fgroup_text(g, &what);
    char *text = hop__buf_finish(&what);
    if (text == NULL)
        return HOP_NOMEM;
    hop_status st = hop_error(HOP_SHAPE, "%s: operand %s does not broadcast to the result %s", text,
                              hop__tensor_text(&a, x), hop__tensor_text(&b, out));
    hop_free(text);
    return st;
}

/* Runs g with output out, inputs in and extra outputs xout (a
 * multi-output group's: each of out's sizes); sym holds the SYM operands'
 * values converted to their dtypes. */
static hop_status
execute(const hop__fgroup *g, hop_tensor *out, const hop_tensor *const *in, hop_tensor *const *xout,
        frun *c)
{
    c->g = g;
    int64_t numel;
    bool flat = contiguous(out, &numel);
    c->numel = numel;
    for (int e = 0; e < g->nxout; e++) {
        if (xout[e]->rank != out->rank ||
            memcmp(xout[e]->sizes, out->sizes, (size_t)out->rank * sizeof *out->sizes) != 0)
            return mismatch(g, out, xout[e]);
        int64_t n;
        flat = flat && contiguous(xout[e], &n);
        c->xo[e] = xout[e]->data;
    }
    if (numel == 0)
        return HOP_OK;
    for (int k = 0; k < g->ninputs && flat; k++) {
        int64_t n;
        flat = contiguous(in[k], &n) && (n == numel || n == 1) && in[k]->rank <= out->rank;
    }
    c->out = out->data;
    for (int k = 0; k < g->ninputs; k++)
        c->in[k] = in[k]->data;
    if (flat) {
        c->rank = 1;
        c->sizes[0] = numel;
        c->ost[0] = 1;
        for (int k = 0; k < g->ninputs; k++)
            c->ist[k][0] = hop_tensor_numel(in[k]) == 1 && numel != 1 ? 0 : 1;
        for (int e = 0; e < g->nxout; e++)
            c->xst[e][0] = 1;
    } else {
        /* Broadcast strides over the output's dims, then drop size-1 dims
         * and merge dims every operand steps through contiguously. */
        int r = out->rank, n = 0;
        int64_t st[HOP__F_MAXIN][HOP_MAX_RANK];
        for (int k = 0; k < g->ninputs; k++) {
            const hop_tensor *x = in[k];
            if (x->rank > r)
                return mismatch(g, out, x);
            for (int d = 0; d < r; d++) {
                int sd = d - (r - x->rank);
                if (sd < 0 || x->sizes[sd] == 1) {
                    st[k][d] = 0;
                } else if (x->sizes[sd] == out->sizes[d]) {
                    st[k][d] = x->strides[sd];
                } else {
                    return mismatch(g, out, x);
                }
            }
        }
        for (int d = 0; d < r; d++) {
            if (out->sizes[d] == 1)
                continue;
            bool merge = n > 0 && c->ost[n - 1] == out->strides[d] * out->sizes[d];
            for (int k = 0; k < g->ninputs && merge; k++)
                merge = c->ist[k][n - 1] == st[k][d] * out->sizes[d];
            for (int e = 0; e < g->nxout && merge; e++)
                merge = c->xst[e][n - 1] == xout[e]->strides[d] * out->sizes[d];
            int at = merge ? n - 1 : n++;
            c->sizes[at] = merge ? c->sizes[at] * out->sizes[d] : out->sizes[d];
            c->ost[at] = out->strides[d];
            for (int k = 0; k < g->ninputs; k++)
                c->ist[k][at] = st[k][d];
            for (int e = 0; e < g->nxout; e++)
                c->xst[e][at] = xout[e]->strides[d];
        }
        c->rank = n;
    }
    /* Split when each thread gets SPLIT_UNITS of work, into pieces
     * (split_pieces; pool.c: a descheduled thread then holds back one
     * piece, not half the group). */
    int threads = hop_runtime_threads();
    int64_t work = numel * (g->cost > 0 ? g->cost : 1);
    if (threads > 1 && work >= 2 * SPLIT_UNITS) {
        hop__pool_run_pieces(task, c, split_pieces(work, threads), work, NULL, NULL);
    } else {
        run_range(c, 0, numel);
    }
    return HOP_OK;
}

/* A SymInt operand's value now, in the dtype its step reads (vm_impl.h). */
hop_status
hop__fused_sym_value(const hop__fopnd *o, hop_dtype opdtype, const int64_t *regs, void *out)
{
    int64_t v;
    hop_status st = hop__xget(o->x, regs, &v);
    if (st != HOP_OK)
        return st;
    if (o->x->is_bool) {
        hop__bool b = v != 0;
        hop__convert(1, out, o->need, &b, HOP_BOOL, 1);
    } else if (opdtype == HOP_F16 && o->need != HOP_F16) {
        uint16_t h; /* rounded to f16 first, as the runtime's kernel does */
        hop__convert(1, &h, HOP_F16, &v, HOP_I64, 1);
        hop__convert(1, out, o->need, &h, HOP_F16, 1);
    } else {
        hop__convert(1, out, o->need, &v, HOP_I64, 1);
    }
    return HOP_OK;
}

/*
 * A group the lowering marked small (program.h: small_n), run straight over
 * its operands without the tiled machinery: the common case in a loop body
 * or a map row.  Its frame stays under a page (no stack probes).
 */
static inline hop_status
small_steps(const hop__fgroup *g, hop__frame *f, hop__ftile *regs)
{
    _Alignas(8) unsigned char sym[3][8];
    const hop_tensor *slots = f->slots;
    int64_t n = g->small_n;
    if (g->reg) {
        const void *in[HOP__F_MAXIN];
        int64_t inc[HOP__F_MAXIN];
        for (int k = 0; k < g->ninputs; k++) {
            in[k] = slots[g->inputs[k]].data;
            inc[k] = g->small_inc[k];
        }
        if (hop__freg_run(g, n, slots[g->out].data, in, inc))
            return HOP_OK;
    }
    for (const hop__fstep *st = g->steps, *end = st + g->nsteps; st < end; st++) {
        const void *a[3];
        for (int i = 0; i < st->nin; i++) {
            const hop__fopnd *op = &st->in[i];
            if (op->src == HOP__F_INPUT) {
                a[i] = slots[g->inputs[op->idx]].data;
            } else if (op->src == HOP__F_REG) {
                a[i] = regs[op->idx];
            } else if (op->src == HOP__F_SCALAR) {
                a[i] = op->val;
            } else {
                hop_status rc = hop__fused_sym_value(op, st->opdtype, f->regs, sym[i]);
                if (rc != HOP_OK)
                    return rc;
                a[i] = sym[i];
            }
        }
        st->fn(n, st->out >= 0 ? (void *)regs[st->out] : slots[g->out].data, a, st->small_ai);
    }
    return HOP_OK;
}

__attribute__((noinline)) static hop_status
run_small(const hop__fgroup *g, hop__frame *f)
{
    _Alignas(64) hop__ftile regs[HOP__F_MAXREGS];
    return small_steps(g, f, regs);
}

/* An int64 operand of a scalar_i64 step. */
static inline int64_t
scalar_in(const hop__fgroup *g, const hop__frame *f, const hop__fopnd *op)
{
    int64_t v;
    memcpy(&v, op->src == HOP__F_INPUT ? f->slots[g->inputs[op->idx]].data : op->val, sizeof v);
    return v;
}

/* A scalar_i64 group (program.h). */
static void
run_scalar(const hop__fgroup *g, hop__frame *f)
{
    const hop__fstep *st = &g->steps[0];
    hop__scalar_i64(st->op, scalar_in(g, f, &st->in[0]), scalar_in(g, f, &st->in[1]),
                    f->slots[g->out].data);
}

hop_status
hop__fused_small(const hop__fgroup *g, hop__frame *f, hop__ftile *regs)
{
    if (g->scalar_i64) {
        run_scalar(g, f);
        return HOP_OK;
    }
    return small_steps(g, f, regs);
}

/* A register-kernel group over contiguous operands, each the output's size
 * or one element, too small to split between threads: straight to the
 * kernel, without execute's broadcasting and merging of dims (a chain of
 * small ops on plan inputs).  False when it does not apply. */
static bool
reg_direct(const hop__fgroup *g, hop_tensor *out, const hop_tensor *const *in)
{
    int64_t numel, n;
    if (!contiguous(out, &numel) || numel == 0 ||
        (numel * (g->cost > 0 ? g->cost : 1) >= 2 * SPLIT_UNITS && hop_runtime_threads() > 1))
        return false;
    const void *ip[HOP__F_MAXIN];
    int64_t inc[HOP__F_MAXIN];
    for (int k = 0; k < g->ninputs; k++) {
        /* execute's test for one flat run */
        if (!contiguous(in[k], &n) || (n != numel && n != 1) || in[k]->rank > out->rank)
            return false;
        ip[k] = in[k]->data;
        inc[k] = n != 1 || numel == 1;
    }
    return hop__freg_run(g, numel, out->data, ip, inc);
}

/* A group of any size: the tiled engine (execute). */
__attribute__((noinline)) static hop_status
run_general(const hop__fgroup *g, hop__frame *f)
{
    frun c;
    for (int s = 0; g->has_sym && s < g->nsteps; s++) {
        for (int i = 0; i < g->steps[s].nin; i++) {
            const hop__fopnd *o = &g->steps[s].in[i];
            hop_status st = o->src == HOP__F_SYM
                                ? hop__fused_sym_value(o, g->steps[s].opdtype, f->regs, c.sym[s][i])
                                : HOP_OK;
            if (st != HOP_OK)
                return st;
        }
    }
    const hop_tensor *in[HOP__F_MAXIN];
    for (int k = 0; k < g->ninputs; k++)
        in[k] = &f->slots[g->inputs[k]];
    if (g->reg && reg_direct(g, &f->slots[g->out], in))
        return HOP_OK;
    hop_tensor *xout[HOP__F_MAXXOUT];
    for (int e = 0; e < g->nxout; e++)
        xout[e] = &f->slots[g->xout[e]];
    return execute(g, &f->slots[g->out], in, xout, &c);
}

/* The three runners keep their own frames: the cheap ones pay nothing for
 * the large stack of the others. */
hop_status
hop__fused_run(const hop__fgroup *g, hop__frame *f)
{
    if (g->scalar_i64) {
        run_scalar(g, f);
        return HOP_OK;
    }
    if (g->small_n > 0)
        return run_small(g, f);
    return run_general(g, f);
}

hop_status
hop__copy_tensor(hop_tensor *dst, const hop_tensor *src)
{
    hop__fgroup g;
    hop__fgroup_copy(&g, dst->dtype, src->dtype);
    g.text = "copy";
    if (g.steps[0].fn == NULL)
        return hop_error(HOP_DTYPE, "copy: cannot copy into %s", hop_dtype_name(dst->dtype));
    frun c;
    const hop_tensor *in[1] = {src};
    return execute(&g, dst, in, NULL, &c);
}
