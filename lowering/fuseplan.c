/*
 * lowering/fuseplan.c - fusion planning: which elementwise nodes of a graph
 * are computed inside their user's fused group, within the executor's
 * limits (steps, inputs, registers).  Each group's members are collected by
 * a bounded walk from its root; a group that does not fit gives up a member
 * (the deepest, cut_member's choice, or fill_cut's where its inputs are
 * full), which becomes the root of a group of its own.  Each group is built
 * here once (hop__fused_build, fused.c), and lower.c's compile_group
 * finishes it.
 */
#include "lowering/lowering_impl.h"

#include <string.h>

static bool
same_shape(const hop_meta *a, const hop_meta *b)
{
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->sizes[d] != b->sizes[d])
            return false;
    return true;
}

/* n (whose entry is m) can be computed inside its only user's group: both
 * fusable (plan_fusion's first pass noted which nodes are). */
static bool
absorbable(hop_lower_ctx *cx, const hop_node *n, const hop__vmap *m)
{
    if (!m->fusable || n->nuses == 0)
        return false;
    const hop_node *u = n->uses->user;
    for (const hop_use *use = n->uses; use; use = use->next)
        if (use->user != u)
            return false;
    const hop__vmap *um = hop__vmap_get(cx, u, false);
    return um != NULL && um->fusable && same_shape(&n->meta->meta, &u->meta->meta);
}

/* Which visited nodes found an absorbed operand with no room left for it. */
typedef struct left_out {
    bool full;          /* one did */
    const hop_node *by; /* the first one that did */
    bool others;        /* and another node did too */
} left_out;

enum { WALK_CAP = HOP__F_MAXSTEPS + 1 };

/* A group's walk (collect): its members in graph order, the nodes in
 * visiting order, each one's hop__vmap (a drop or a reuse renumbers them
 * with no lookup) and what was left out.  root: a cut member whose whole
 * walk this is, kept for when planning reaches it (drop_subtree). */
typedef struct walk {
    const hop_node *members[WALK_CAP], *order[WALK_CAP];
    hop__vmap *mvm[WALK_CAP], *ovm[WALK_CAP];
    int ends[WALK_CAP];
    int nm, no;
    left_out full;
    const hop_node *root;
} walk;

/* Members of the group rooted at n, in graph order (operands first).  At most
 * cap nodes are visited; order[] gets them in visiting order, so the last one
 * is the deepest, and full says which absorbed operands were left out.
 * Bounding the walk keeps a long chain of absorbable nodes linear to plan,
 * not quadratic.  Each visited node's hop__vmap gets the group's number (a
 * node seen twice, as in x * x, is visited once) and its member index, and
 * ends[i] is one past the last visited node reached through order[i] (a
 * member has one user, so order[i .. ends[i]) is its subtree). */
static void
collect_from(hop_lower_ctx *cx, const hop_node *n, hop__vmap *nv, walk *w, int cap)
{
    int at = w->no++;
    w->order[at] = n;
    w->ovm[at] = nv;
    nv->group = cx->group;
    nv->member = -1;
    for (size_t i = 0; i < n->nargs; i++) {
        /* only a call_op is absorbed (hop__fused_ok_into): no lookup for a
         * placeholder, a capture's */
        if (n->args[i].kind != HOP_ARG_NODE || n->args[i].u.node->kind != HOP_NODE_CALL_OP)
            continue;
        const hop_node *a = n->args[i].u.node;
        hop__vmap *m = hop__vmap_get(cx, a, false);
        if (m == NULL || !m->absorbed || m->group == cx->group)
            continue;
        if (w->no == cap) {
            if (!w->full.full)
                w->full.by = n;
            else if (w->full.by != n)
                w->full.others = true;
            w->full.full = true;
        } else
            collect_from(cx, a, m, w, cap);
    }
    w->ends[at] = w->no;
    nv->member = w->nm;
    w->mvm[w->nm] = nv;
    w->members[w->nm++] = n;
}

static void
collect(hop_lower_ctx *cx, const hop_node *n, walk *w)
{
    cx->group++;
    w->nm = w->no = 0;
    w->full = (left_out){0};
    collect_from(cx, n, hop__vmap_get(cx, n, false), w, WALK_CAP);
}

/*
 * Takes order[cut] (no longer absorbed) and the members reached through it
 * out of the group being planned, as walking the group again would: when
 * the walk left nothing out (no cap reached), a new walk visits the same
 * nodes in the same order but that subtree, which is order[cut ..
 * ends[cut]) and, in graph order, the members just before order[cut]'s
 * own.  Walking again made planning a chain that outgrows a group's inputs
 * quadratic in the group's 64 steps: each cut re-walked the whole group
 * (~2 K instructions of every capture of a long chain of adds, issue #30).
 *
 * With save (the walk left nothing out), the subtree is order[cut]'s own
 * whole walk, which planning makes next when it reaches order[cut] as a
 * root: no other group's walk reaches it (each member has one user, and
 * order[cut] is absorbed no more), so it is kept in *save for that (a walk
 * of a 64-step window of a chain of adds over captures cut into groups of
 * 7 was ~57 nodes walked again a group, ~0.5 K instructions a capture).
 */
static void
drop_subtree(walk *w, int cut, walk *save)
{
    int end = w->ends[cut], k = end - cut;
    int last = w->ovm[cut]->member;
    if (save) {
        for (int i = cut; i < end; i++) {
            save->order[i - cut] = w->order[i];
            save->ovm[i - cut] = w->ovm[i];
            save->ends[i - cut] = w->ends[i] - cut;
        }
        memcpy(save->members, w->members + last - k + 1, (size_t)k * sizeof *save->members);
        memcpy(save->mvm, w->mvm + last - k + 1, (size_t)k * sizeof *save->mvm);
        save->nm = save->no = k;
        save->full = (left_out){0};
        save->root = w->order[cut];
    }
    for (int i = cut; i < end; i++) {
        w->ovm[i]->group = 0; /* no group's number: cx->group counts from 1 */
        w->ovm[i]->member = -1;
    }
    for (int i = 0; i < cut; i++) /* the ancestors' subtrees lose it */
        if (w->ends[i] >= end)
            w->ends[i] -= k;
    for (int i = end; i < w->no; i++) {
        w->order[i - k] = w->order[i];
        w->ovm[i - k] = w->ovm[i];
        w->ends[i - k] = w->ends[i] - k;
    }
    w->no -= k;
    for (int i = last + 1; i < w->nm; i++) {
        w->members[i - k] = w->members[i];
        w->mvm[i - k] = w->mvm[i];
        w->mvm[i - k]->member = i - k;
    }
    w->nm -= k;
}

/* Makes the walk kept in *saved (drop_subtree) the group's walk *w, as
 * collect would make it: the group's number and member indices again. */
static void
reuse_walk(hop_lower_ctx *cx, walk **w, walk **saved)
{
    walk *t = *w;
    *w = *saved;
    *saved = t;
    (*saved)->root = NULL;
    (*w)->root = NULL;
    cx->group++;
    for (int i = 0; i < (*w)->no; i++)
        (*w)->ovm[i]->group = cx->group;
    for (int i = 0; i < (*w)->nm; i++)
        (*w)->mvm[i]->member = i;
}

/* Which visited member (an index of order, not 0: the root) a group with
 * too many inputs gives up: the last visited one that still absorbs an
 * operand, else the last visited.  Cutting a leaf - a member that absorbs
 * nothing - turns its inputs into one input, its result, so it seldom
 * brings the inputs within the limit: the unrolled count = count + (x < 4)
 * (a left-deep chain of adds whose right operands are conversions of
 * comparisons) lost its conversions one by one, each a group of its own
 * whose i32 result went through memory, and every add after them (7 of
 * them, 20 MB at 1M elements) waited for the group at the end.  Cutting the
 * chain's bottom instead keeps each conversion in its add's group.  In a
 * chain the last visited member is the bottom: no change there. */
static int
cut_member(hop_lower_ctx *cx, const hop_node *const *order, int no)
{
    for (int i = no - 1; i > 0; i--) {
        const hop_node *n = order[i];
        for (size_t a = 0; a < n->nargs; a++) {
            if (n->args[a].kind != HOP_ARG_NODE)
                continue;
            const hop__vmap *m = hop__vmap_get(cx, n->args[a].u.node, false);
            if (m != NULL && m->absorbed)
                return i;
        }
    }
    return no - 1;
}

/* Whether the group being planned fits once order[cut] and what it absorbs
 * are out of it: in place, their run of members (order[cut] last, the
 * members reached through it before it) skipped.  Copying the walk to
 * drop_subtree it and renumbering the members back after each trial cost
 * ~1.6 K instructions of every capture of a long chain of adds (issue #30:
 * ~8 trials a group). */
static bool
fits_without(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
             const hop_node *const *order, const int *ends, int cut)
{
    int k = ends[cut] - cut, last = hop__vmap_get(cx, order[cut], false)->member;
    return hop__fused_fits(cx, root, members, nm, last - k + 1, k);
}

/*
 * The deepest cut along the walk's first path, order[1 .. d], that leaves
 * the group at most HOP__F_MAXIN inputs (0: not even order[1]'s does).
 * Cutting order[c] leaves members[ends[c] - c ..] (its run of members is
 * the first ends[c] - c: the path's members are each the first visited
 * below the one before).  Going one deeper, order[c] turns from an input
 * into a member, order[c + 1] comes in for it and the steps order[c] adds
 * bring their inputs: one count down the path, each step's operands read
 * once, where each trial of fill_cut read every step of its group again.
 */
static int
inputs_fill(hop_lower_ctx *cx, const hop_node *const *members, int nm, const hop_node *const *order,
            const int *ends, int d)
{
    const hop_node *in[HOP__F_MAXIN + 1];
    int nin = 0, first = nm;
    for (int c = 1; c <= d; c++) {
        for (int k = 0; c > 1 && k < nin; k++)
            if (in[k] == order[c - 1]) { /* a member now: its user's register */
                in[k] = in[--nin];
                break;
            }
        int jc = ends[c] - c;
        nin = hop__fused_add_inputs(cx, members, jc, first, jc, in, nin);
        if (nin > HOP__F_MAXIN)
            return c - 1;
        first = jc;
    }
    return d;
}

/*
 * Which member a group with too many inputs gives up: cut_member's choice
 * when cutting it makes the group fit, else the deepest member of the
 * walk's first path (the root's first operand, its first operand, ...: a
 * chain's members) whose cut leaves a group that fits, else cut_member's
 * choice.  cut_member's choice alone cut a chain of adds over captures two
 * members at a time from its bottom, each pair a group of its own (92
 * groups for 200 adds, issue #30); a cut where the group is full leaves the
 * rest of the chain absorbed whole, for groups of 7 adds and 8 inputs.
 *
 * Along the path, a deeper cut's group is the shallower one's with steps
 * added before them (order[p] a member instead of an input, its own
 * operands' runs): no fewer inputs (order[p + 1], used by order[p] alone,
 * comes in for order[p]), steps or live registers.  So the cuts that fit
 * are the path's top down to the deepest one.  The inputs alone bound it
 * (inputs_fill, counted once down the path): a cut below that bound does
 * not fit, with no trial, and one at the bound that fits is the deepest.
 * Only a group held by its registers below the bound is bisected, between
 * the top and the bound.  Trials galloping down from the top, then
 * bisecting, read ~36 steps a group of 7 adds over captures (~1.1 K
 * instructions a capture, issue #30); the count and the one trial ~15.
 */
static int
fill_cut(hop_lower_ctx *cx, const hop_node *root, const hop_node *const *members, int nm,
         const hop_node *const *order, const int *ends, int no)
{
    int c = cut_member(cx, order, no);
    int d = 1; /* order[1 .. d] is the first path below the root */
    while (d + 1 < no && ends[d] > d + 1)
        d++;
    int top = d < no ? inputs_fill(cx, members, nm, order, ends, d) : 0;
    bool over = c > top && c <= d; /* on the path below top: too many inputs */
    if (!over && fits_without(cx, root, members, nm, order, ends, c))
        return c;
    if (top == 0)
        return c; /* order[1]'s cut has too many inputs: none on the path fits */
    if (fits_without(cx, root, members, nm, order, ends, top))
        return top;
    if (!fits_without(cx, root, members, nm, order, ends, 1))
        return c;
    int lo = 1, hi = top; /* order[lo]'s cut fits; order[hi]'s does not */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (fits_without(cx, root, members, nm, order, ends, mid))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Plans the group rooted at n (entry m): its walk (kept in *saved when an
 * earlier cut kept it there for n, else collected), cut until it fits, and
 * its build kept in m->built. */
static hop_status
plan_group(hop_lower_ctx *cx, const hop_node *n, hop__vmap *m, walk **wp, walk **saved)
{
    if ((*saved)->root == n)
        reuse_walk(cx, wp, saved);
    else
        collect(cx, n, *wp);
    walk *w = *wp;
    for (;;) {
        if (w->no == 1)
            break; /* the root alone: nothing to cut whatever a build says, and
                      compile_group reports why it does not fit */
        hop_status st = w->full.full || w->nm > HOP__F_MAXSTEPS
                            ? HOP_UNSUPPORTED
                            : hop__fused_build(cx, n, w->members, w->nm, true, &m->built);
        if (st == HOP_OK)
            break;
        if (st != HOP_UNSUPPORTED)
            return st;
        /* Too big: a member becomes the root of a group of its own, so a
         * long chain splits into full groups (each node is cut at most
         * once): the deepest (the last visited), or for too many inputs
         * the last visited that still absorbs an operand (cut_member). */
        int cut = !w->full.full && w->nm <= HOP__F_MAXSTEPS && cx->fbuild_inputs
                      ? fill_cut(cx, n, w->members, w->nm, w->order, w->ends, w->no)
                      : w->no - 1;
        const hop_node *deepest = w->order[cut];
        w->ovm[cut]->absorbed = false;
        if (cut == w->no - 1 ? !w->full.full || (w->full.by == deepest && !w->full.others)
                             : !w->full.full) {
            /* Walking again would visit the same nodes in the same order
             * but the cut one and those reached through it: when the
             * walk left nothing out, or the deepest is cut (the last
             * visited, so no other member was reached through it) and
             * only its own operands were left out.  Drop them from this
             * walk instead: a long chain's groups are walked once in
             * planning, not once a cut. */
            drop_subtree(w, cut, w->full.full ? NULL : *saved);
            w->full = (left_out){0};
            continue;
        }
        collect(cx, n, w);
    }
    return HOP_OK;
}

/* ------------------------------------------------ multi-output groups */

/*
 * After the tree groups are planned, consecutive groups (units, in their
 * roots' order) of one shape where each reads a result of the ones before
 * it are merged into one multi-output group (program.h: nxout), computed
 * in one pass at the last root's place: a result read again in the group
 * stays in a tile register, and one read after the group is also written
 * to a slot of its own.  A loop unrolled over elementwise updates (np_large
 * Mandelbrot's `inside = zr*zr + zi*zi < 4`, the two np.where updates of zr
 * and zi, count + inside: three groups a step, each a pass over the
 * arrays) becomes one group over several steps, reading zr, zi, cre and
 * cim once.  Lowering never reorders: a unit joins only when no node
 * outside the merged units reads a result of the units before it earlier
 * than its root (a member of another group counts at that group's root),
 * so every value is computed before it is read.  Units the register kernel
 * runs (f32 chains, fused_reg.c) and small ones (at most HOP__F_SMALL
 * elements: the straight runners) are left as they are.
 */

typedef struct units {
    const hop_node **roots; /* tmp arena, n of them, in graph order */
    int n;
} units;

static const hop__fbuilt *
unit_built(hop_lower_ctx *cx, const units *us, int u)
{
    return hop__vmap_get(cx, us->roots[u], false)->built;
}

/* A shape of at most HOP__F_SMALL elements, known now. */
static bool
small_shape(const hop_meta *m)
{
    int64_t n = 1, v;
    for (int d = 0; d < m->rank; d++) {
        if (!hop_expr_const_value(m->sizes[d], &v))
            return false;
        n *= v;
        if (n > HOP__F_SMALL)
            return false;
    }
    return true;
}

/* Whether member x's result is read outside units [u0, u1]; *before: by a
 * node (or a group) placed before position at. */
static bool
read_outside(hop_lower_ctx *cx, const units *us, const hop_node *x, int u0, int u1, int32_t at,
             bool *before)
{
    bool out = false;
    for (const hop_use *use = x->uses; use; use = use->next) {
        const hop__vmap *um = hop__vmap_get(cx, use->user, false);
        if (um != NULL && um->unit >= u0 && um->unit <= u1)
            continue;
        out = true;
        if (um == NULL ||
            (um->unit >= 0 ? hop__vmap_get(cx, us->roots[um->unit], false)->pos : um->pos) <= at)
            *before = true;
    }
    return out;
}

/* The members of units [u0, u1] in graph order into members (at most
 * HOP__F_MAXSTEPS: the caller checked), numbered as a new group's, and
 * whether each is read after the group (is_out; not the last, the
 * group's output).  Returns how many. */
static int
merged_members(hop_lower_ctx *cx, const units *us, int u0, int u1, const hop_node **members,
               bool *is_out)
{
    int nm = 0;
    for (int u = u0; u <= u1; u++) {
        const hop__fbuilt *b = unit_built(cx, us, u);
        for (int i = 0; i < b->nmembers; i++) {
            const hop_node *x = b->members[i];
            int32_t pos = hop__vmap_get(cx, x, false)->pos;
            int k = nm++;
            while (k > 0 && hop__vmap_get(cx, members[k - 1], false)->pos > pos) {
                members[k] = members[k - 1];
                k--;
            }
            members[k] = x;
        }
    }
    cx->group++;
    for (int i = 0; i < nm; i++) {
        hop__vmap *m = hop__vmap_get(cx, members[i], false);
        bool before = false;
        m->group = cx->group;
        m->member = i;
        is_out[i] = i < nm - 1 && read_outside(cx, us, members[i], u0, u1, INT32_MIN, &before);
    }
    return nm;
}

/* Unit u's members numbered as its own group's again (a trial merge
 * numbered them as another's). */
static void
renumber(hop_lower_ctx *cx, const units *us, int u)
{
    const hop__fbuilt *b = unit_built(cx, us, u);
    for (int i = 0; i < b->nmembers; i++) {
        hop__vmap *m = hop__vmap_get(cx, b->members[i], false);
        m->group = b->group;
        m->member = i;
    }
}

/* Whether unit u joins units [u0, u - 1] (above). */
static bool
joins(hop_lower_ctx *cx, const units *us, int u0, int u)
{
    const hop_node *r = us->roots[u];
    const hop__fbuilt *b = unit_built(cx, us, u);
    int total = b->nmembers;
    if (b->g->reg || !same_shape(&us->roots[u0]->meta->meta, &r->meta->meta) ||
        small_shape(&r->meta->meta))
        return false;
    bool reads = false; /* u reads a result of the units before it */
    for (int i = 0; i < b->nmembers && !reads; i++)
        for (size_t a = 0; a < b->members[i]->nargs && !reads; a++) {
            const hop_arg *arg = &b->members[i]->args[a];
            const hop__vmap *am =
                arg->kind == HOP_ARG_NODE ? hop__vmap_get(cx, arg->u.node, false) : NULL;
            reads = am != NULL && am->unit >= u0 && am->unit < u;
        }
    if (!reads)
        return false;
    int32_t at = hop__vmap_get(cx, r, false)->pos;
    for (int k = u0; k < u; k++) {
        const hop__fbuilt *bk = unit_built(cx, us, k);
        if (bk->g->reg)
            return false;
        total += bk->nmembers;
        bool before = false;
        for (int i = 0; i < bk->nmembers && !before; i++)
            read_outside(cx, us, bk->members[i], u0, u, at, &before);
        if (before || total > HOP__F_MAXSTEPS)
            return false;
    }
    const hop_node *members[HOP__F_MAXSTEPS];
    bool is_out[HOP__F_MAXSTEPS];
    int nm = merged_members(cx, us, u0, u, members, is_out);
    return hop__fused_build_multi(cx, members, nm, is_out, NULL) == HOP_OK;
}

/* Units [u0, u1] as one multi-output group, kept in the last root's
 * hop__vmap (the others' places compute nothing). */
static hop_status
merge(hop_lower_ctx *cx, const units *us, int u0, int u1)
{
    const hop_node *members[HOP__F_MAXSTEPS];
    bool is_out[HOP__F_MAXSTEPS];
    int nm = merged_members(cx, us, u0, u1, members, is_out);
    hop__fbuilt *b;
    hop_status st = hop__fused_build_multi(cx, members, nm, is_out, &b);
    if (st != HOP_OK) {
        for (int u = u0; u <= u1; u++)
            renumber(cx, us, u);
        return st == HOP_UNSUPPORTED ? HOP_OK : st;
    }
    for (int u = u0; u < u1; u++) {
        hop__vmap *m = hop__vmap_get(cx, us->roots[u], false);
        m->merged = true;
        m->built = NULL;
    }
    hop__vmap_get(cx, us->roots[u1], false)->built = b;
    return HOP_OK;
}

static hop_status
merge_units(hop_lower_ctx *cx, const hop_graph *g)
{
    units us = {NULL, 0};
    bool any = false; /* a unit after the first may join (joins' first test) */
    for (const hop_node *n = g->first; n; n = n->next) {
        const hop__vmap *m = hop__vmap_get(cx, n, false);
        if (m->absorbed || !m->fusable || m->built == NULL)
            continue;
        any = any || (us.n > 0 && !m->built->g->reg && !small_shape(&n->meta->meta));
        us.n++;
    }
    if (!any)
        return HOP_OK; /* (a chain of small groups: no pass over its units) */
    if ((us.roots = hop__arena_alloc(&cx->tmp, (size_t)us.n * sizeof *us.roots)) == NULL)
        return HOP_NOMEM;
    int nu = 0;
    for (const hop_node *n = g->first; n; n = n->next) {
        const hop__vmap *m = hop__vmap_get(cx, n, false);
        if (m->absorbed || !m->fusable || m->built == NULL)
            continue;
        for (int i = 0; i < m->built->nmembers; i++)
            hop__vmap_get(cx, m->built->members[i], false)->unit = nu;
        us.roots[nu++] = n;
    }
    int u0 = 0;
    for (int u = 1; u <= us.n; u++) {
        if (u < us.n && joins(cx, &us, u0, u))
            continue;
        hop_status st = HOP_OK;
        if (u - 1 > u0)
            st = merge(cx, &us, u0, u - 1);
        else
            renumber(cx, &us, u0);
        if (st != HOP_OK)
            return st;
        u0 = u;
    }
    return HOP_OK;
}

/* Decides which elementwise nodes of g are computed inside their user's
 * group, within the executor's limits (steps, inputs, registers). */
hop_status
hop__plan_fusion(hop_lower_ctx *cx, const hop_graph *g)
{
    /* hop__fused_ok once a node (absorbable asks it of a node and of its
     * user, the passes below and compile_call_op again). */
    int32_t pos = 0;
    for (const hop_node *n = g->first; n; n = n->next) {
        hop__vmap *m = hop__vmap_get(cx, n, true);
        if (m == NULL)
            return HOP_NOMEM;
        m->pos = pos++;
        m->unit = -1;
        m->fusable = hop__fused_ok_into(cx, n, m);
        m->absorbed = m->merged = false;
        m->preassigned = false;
        m->dests = NULL;
        m->built = NULL;
        m->v.kind = HOP_PVAL_NONE;
    }
    if (cx->opts.no_fusion)
        return HOP_OK;
    for (const hop_node *n = g->first; n; n = n->next) {
        hop__vmap *m = hop__vmap_get(cx, n, false);
        m->absorbed = absorbable(cx, n, m);
    }
    /* Each group is built here once, its limits checked, and compile_group
     * finishes it (building it again there cost ~40% of lowering a chain). */
    walk walks[2];
    walk *w = &walks[0], *saved = &walks[1];
    saved->root = NULL;
    for (const hop_node *n = g->last; n; n = n->prev) {
        hop__vmap *m = hop__vmap_get(cx, n, false);
        if (m->absorbed || !m->fusable)
            continue;
        hop_status st = plan_group(cx, n, m, &w, &saved);
        if (st != HOP_OK)
            return st;
    }
    return merge_units(cx, g);
}

int
hop__fuse_collect(hop_lower_ctx *cx, const hop_node *root, const hop_node **members)
{
    walk w;
    collect(cx, root, &w);
    memcpy(members, w.members, (size_t)w.nm * sizeof *members);
    return w.nm;
}
