/*
 * runtime/explain.c - hop_plan_dump (EXPLAIN for plans) and the trace of a
 * running plan (HOP_TRACE_PLAN=1, hop_plan_set_trace).
 *
 * The dump has three parts:
 *
 *   addr  opcode    p1  p2  p3  p4                        comment
 *   ----  --------  --  --  --  ------------------------  ---------------
 *      0  Input      0   0   0  x: f32[s0, 4]             t0 = input 0
 *      1  Guard      0   0   0  s0 > 4
 *      2  Layout     0   0   0                            block: 1 region
 *      3  Fused      1   1   2  exp(add(x, 1))            t1 = exp
 *      4  Halt       0   0   0
 *
 * one row per instruction, with a `-- <name>` line where a subroutine
 * starts; p4 is the instruction's descriptor (an expression, a fused
 * group, an op call) and the comment says what it does in terms of slots
 * (tN) and registers (rN); then the lowering's notes (hop_lower_note:
 * which way a HOP runs and why), the slots (name, kind, dtype and sizes) and
 * registers; then the memory plan: each region's offset and size and the
 * tensors sharing it, with their live ranges.  Static plans print byte
 * counts; symbolic ones the expressions the sizes are computed from.
 */
#include "runtime/vm_impl.h"

#include <inttypes.h>
#include <stdio.h>

const char *const hop__opcode_names[HOP__OP_COUNT] = {
#define HOP__OPC_NAME(name) #name,
    HOP__OPCODES(HOP__OPC_NAME)
#undef HOP__OPC_NAME
};

const char *const hop__skind_names[] = {"input", "buffer", "output", "late", "view", "alias"};

static const char *
slot_name(const hop_plan *p, int32_t s)
{
    return s >= 0 && s < p->nslots && p->slots[s].name ? p->slots[s].name : "";
}

static size_t
slot_dim(const void *slot, int d, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s", ((const hop__slot *)slot)->sizes[d]->text);
    return n < 0 ? 0 : (size_t)n;
}

static size_t
slot_meta(const void *slot, char *buf, size_t cap)
{
    const hop__slot *s = slot;
    return hop_dims_print(s->dtype, s->rank, slot_dim, s, buf, cap);
}

static void
meta_text(hop__buf *b, const hop__slot *s)
{
    hop__buf_print(b, slot_meta, s);
}

char *
hop__ntext_string(const hop__ntext *t)
{
    hop__buf b;
    hop__buf_init(&b);
    hop__ntext_write(t, &b);
    return hop__buf_finish(&b);
}

/* What t computes: its text after the first ` = `, appended to b. */
static void
after_name(const hop__ntext *t, hop__buf *b)
{
    size_t start = b->len;
    hop__ntext_write(t, b);
    if (b->failed)
        return;
    for (size_t i = start; i + 3 <= b->len; i++)
        if (memcmp(b->data + i, " = ", 3) == 0) {
            memmove(b->data + start, b->data + i + 3, b->len - (i + 3));
            b->len -= i + 3 - start;
            b->data[b->len] = '\0';
            break;
        }
}

static void
p4_text(const hop_plan *p, const hop__insn *in, hop__buf *b)
{
    switch ((hop__opcode)in->opcode) {
    case HOP__OP_Input: {
        const hop__input *d = in->p4;
        hop__buf_printf(b, "%s: ", d->name);
        meta_text(b, &p->slots[d->slot]);
        break;
    }
    case HOP__OP_Guard:
        hop__buf_puts(b, ((const hop__guard *)in->p4)->x->text);
        break;
    case HOP__OP_Fused:
    case HOP__OP_Copy:
        hop__fgroup_text(in->p4, b);
        if (((const hop__fgroup *)in->p4)->epi) {
            hop__buf_puts(b, "; ");
            after_name(((const hop__fgroup *)in->p4)->epi->text, b);
        }
        break;
    case HOP__OP_IfNot:
    case HOP__OP_If:
        if (in->p4)
            hop__fgroup_text(in->p4, b);
        break;
    case HOP__OP_Op:
    case HOP__OP_View:
    case HOP__OP_OpAlloc:
        after_name(((const hop__opdesc *)in->p4)->text, b);
        break;
    case HOP__OP_Eval:
        hop__buf_puts(b, ((const hop__xprog *)in->p4)->text);
        break;
    case HOP__OP_Integer:
        hop__buf_printf(b, "%" PRId64, in->i64);
        break;
    case HOP__OP_Call:
        hop__buf_puts(b, p->routines[((const hop__calldesc *)in->p4)->routine].name);
        break;
    case HOP__OP_Extern:
        after_name(((const hop__extern *)in->p4)->text, b);
        break;
    case HOP__OP_Kernel:
        hop__buf_puts(b, ((const hop__hopkernel *)in->p4)->name);
        break;
    default:
        break;
    }
}

static void
comment_text(const hop_plan *p, int32_t pc, hop__buf *b)
{
    const hop__insn *in = &p->code[pc];
    switch ((hop__opcode)in->opcode) {
    case HOP__OP_Input:
        hop__buf_printf(b, "t%d = input %d", in->p2, in->p1);
        break;
    case HOP__OP_Guard: {
        const hop__guard *g = in->p4;
        if (g->graph)
            hop__buf_printf(b, "guard %d of %s", in->p1, g->graph);
        else
            hop__buf_printf(b, "guard %d", in->p1);
        break;
    }
    case HOP__OP_Layout: {
        int32_t nb = 0;
        for (int32_t i = 0; i < p->nbuffers; i++)
            nb += p->buffers[i].section == in->p1;
        hop__buf_printf(b, "%s", in->p1 ? "lazy section" : "block");
        if (in->p1)
            hop__buf_printf(b, " %d", in->p1);
        if (p->static_layout)
            hop__buf_printf(b, ": %" PRId64 " bytes, %d tensor%s", p->section_bytes[in->p1], nb,
                            nb == 1 ? "" : "s");
        else
            hop__buf_printf(b, ": %d tensor%s, sized at run time", nb, nb == 1 ? "" : "s");
        break;
    }
    case HOP__OP_Fused: {
        const hop__fgroup *g = in->p4;
        hop__buf_printf(b, "t%d = %s", in->p1, slot_name(p, in->p1));
        for (int e = 0; e < g->nxout; e++)
            hop__buf_printf(b, "; t%d = %s", g->xout[e], slot_name(p, g->xout[e]));
        if (g->epi)
            hop__buf_printf(b, "; t%d = %s (kernel %d%s)", g->epi_out, slot_name(p, g->epi_out),
                            g->epi->cache, g->epi->fixed ? ", fixed" : "");
        break;
    }
    case HOP__OP_Copy:
        hop__buf_printf(b, "t%d <- t%d", in->p1, in->p2);
        break;
    case HOP__OP_Op:
        hop__buf_printf(b, "t%d = %s (kernel %d%s)", in->p1, slot_name(p, in->p1), in->p2,
                        ((const hop__opdesc *)in->p4)->fixed ? ", fixed" : "");
        break;
    case HOP__OP_View:
        hop__buf_printf(b, "t%d = %s, a view of t%d", in->p1, slot_name(p, in->p1), in->p2);
        break;
    case HOP__OP_OpAlloc:
        hop__buf_printf(b, "t%d = %s (allocated)", in->p1, slot_name(p, in->p1));
        break;
    case HOP__OP_Alloc:
        hop__buf_printf(b, "t%d = new tensor", in->p1);
        break;
    case HOP__OP_Move:
        hop__buf_printf(b, "t%d = t%d", in->p1, in->p2);
        break;
    case HOP__OP_Swap: {
        const int32_t *more = in->p4;
        hop__buf_printf(b, "t%d <-> t%d", in->p1, in->p2);
        for (int32_t k = 0; k < in->p3; k++)
            hop__buf_printf(b, ", t%d <-> t%d", more[2 * k], more[2 * k + 1]);
        break;
    }
    case HOP__OP_Select:
        if (in->i64)
            hop__buf_printf(b, "t%d = t%d[r%d along dim %" PRId64 "]", in->p1, in->p2, in->p3,
                            in->i64);
        else
            hop__buf_printf(b, "t%d = t%d[r%d]", in->p1, in->p2, in->p3);
        break;
    case HOP__OP_Item:
        hop__buf_printf(b, "r%d = item(t%d)", in->p1, in->p2);
        break;
    case HOP__OP_SymSize:
        hop__buf_printf(b, "r%d = t%d.size(%d)", in->p1, in->p2, in->p3);
        break;
    case HOP__OP_Eval:
    case HOP__OP_Integer:
        hop__buf_printf(b, "r%d = p4", in->p1);
        break;
    case HOP__OP_MoveInt:
        hop__buf_printf(b, "r%d = r%d", in->p1, in->p2);
        break;
    case HOP__OP_IfNot:
        hop__buf_printf(b, "if not %c%d goto %d", in->p3 == 0 ? 't' : 'r', in->p1, in->p2);
        break;
    case HOP__OP_If:
        if (in->p4)
            hop__buf_printf(b, "t%d = %s; ", in->p1, slot_name(p, in->p1));
        hop__buf_printf(b, "if %c%d goto %d", in->p3 == 0 ? 't' : 'r', in->p1, in->p2);
        if (in->straight)
            hop__buf_printf(b, " (straight)");
        break;
    case HOP__OP_Goto:
        hop__buf_printf(b, "goto %d", in->p2);
        break;
    case HOP__OP_LoopInit:
        hop__buf_printf(b, "r%d = 0; if r%d <= 0 goto %d", in->p1, in->p3, in->p2);
        break;
    case HOP__OP_Next:
        hop__buf_printf(b, "r%d += 1; if r%d < r%d goto %d", in->p1, in->p1, in->p3, in->p2);
        if (in->straight)
            hop__buf_printf(b, " (straight)");
        break;
    case HOP__OP_Call: {
        const hop__calldesc *d = in->p4;
        hop__buf_printf(b, "call %d with", in->p1);
        for (int32_t k = 0; k < d->nmoves; k++) {
            const hop__callmove *m = &d->moves[k];
            if (m->tensor)
                hop__buf_printf(b, " t%d=t%d", m->dst, m->src);
            else if (m->src >= 0)
                hop__buf_printf(b, " r%d=r%d", m->dst, m->src);
            else
                hop__buf_printf(b, " r%d=%" PRId64, m->dst, m->value);
        }
        break;
    }
    case HOP__OP_Return:
        hop__buf_puts(b, "return");
        break;
    case HOP__OP_Extern: {
        const hop__extern *e = in->p4;
        for (int32_t k = 0; k < e->nouts; k++)
            hop__buf_printf(b, "%st%d", k ? ", " : "", e->outs[k]);
        hop__buf_printf(b, "%sforeign %s", e->nouts ? " = " : "", e->name);
        break;
    }
    case HOP__OP_Kernel: {
        const hop__hopkernel *k = in->p4;
        hop__buf_printf(b, "%s(", k->name);
        for (int32_t j = 0; j < k->n; j++)
            hop__buf_printf(b, "%st%d", j ? ", " : "", k->slots[j]);
        hop__buf_puts(b, ")");
        break;
    }
    case HOP__OP_Halt:
    case HOP__OP_COUNT:
        break;
    }
}

static void
insn_text(const hop_plan *p, int32_t pc, hop__buf *b)
{
    const hop__insn *in = &p->code[pc];
    hop__buf p4, cm;
    hop__buf_init(&p4);
    hop__buf_init(&cm);
    p4_text(p, in, &p4);
    comment_text(p, pc, &cm);
    hop__buf_append(&p4, "", 1);
    hop__buf_append(&cm, "", 1);
    hop__buf_printf(b, "%4d  %-9s %3d %3d %3d  %-28s  %s", pc, hop__opcode_names[in->opcode],
                    in->p1, in->p2, in->p3, p4.failed ? "" : p4.data, cm.failed ? "" : cm.data);
    hop__buf_discard(&p4);
    hop__buf_discard(&cm);
}

size_t
hop_plan_nnotes(const hop_plan *p)
{
    return p ? p->nnotes : 0;
}

const char *
hop_plan_note(const hop_plan *p, size_t i)
{
    return p && i < p->nnotes ? p->notes[i] : NULL;
}

char *
hop_plan_dump(const hop_plan *p)
{
    if (p == NULL) {
        hop_error(HOP_MISUSE, "hop_plan_dump: the plan is NULL");
        return NULL;
    }
    hop__buf b;
    hop__buf_init(&b);
    hop__buf_puts(&b, "addr  opcode     p1  p2  p3  p4                            comment\n");
    hop__buf_puts(&b, "----  --------- --- --- ---  ----------------------------  -------\n");
    int32_t r = 1;
    for (int32_t pc = 0; pc < p->ncode; pc++) {
        if (r < p->nroutines && p->routines[r].entry == pc) {
            hop__buf_printf(&b, "-- %s\n", p->routines[r].name);
            r++;
        }
        size_t start = b.len;
        insn_text(p, pc, &b);
        while (b.len > start && !b.failed && b.data[b.len - 1] == ' ')
            b.data[--b.len] = '\0';
        hop__buf_puts(&b, "\n");
    }
    if (p->nnotes) {
        hop__buf_puts(&b, "\nnotes:\n");
        for (size_t i = 0; i < p->nnotes; i++)
            hop__buf_printf(&b, "  %s\n", p->notes[i]);
    }
    hop__buf_puts(&b, "\nslots:\n");
    for (int32_t s = 0; s < p->nslots; s++) {
        const hop__slot *sl = &p->slots[s];
        hop__buf_printf(&b, "  t%-3d %-7s ", s, hop__skind_names[sl->kind]);
        meta_text(&b, sl);
        if (sl->name)
            hop__buf_printf(&b, "  %s", sl->name);
        hop__buf_puts(&b, "\n");
    }
    if (p->nregs) {
        hop__buf_puts(&b, "registers:");
        for (int32_t i = 0; i < p->nregs; i++)
            hop__buf_printf(&b, " r%d%s%s", i, p->regnames[i] ? "=" : "",
                            p->regnames[i] ? p->regnames[i] : "");
        hop__buf_puts(&b, "\n");
    }
    if (p->static_layout)
        hop__buf_printf(&b, "memory: %d tensor%s, block of %" PRId64 " bytes\n", p->nbuffers,
                        p->nbuffers == 1 ? "" : "s", p->block_bytes);
    else
        hop__buf_printf(&b, "memory: %d tensor%s, sized at run time\n", p->nbuffers,
                        p->nbuffers == 1 ? "" : "s");
    for (int32_t m = 0; m < p->nbuffers; m++) {
        const hop__buffer *buf = &p->buffers[m];
        int32_t base = p->routines[buf->routine].entry;
        hop__buf_printf(&b, "  t%d %s [%d-%d]", buf->slot, slot_name(p, buf->slot), base + buf->def,
                        base + buf->last);
        if (buf->section)
            hop__buf_printf(&b, " (lazy section %d)", buf->section);
        if (p->static_layout)
            hop__buf_printf(&b, ": offset %" PRId64 ", %" PRId64 " bytes\n", buf->offset,
                            buf->bytes->value);
        else
            hop__buf_printf(&b, ": %s bytes\n",
                            buf->bytes ? buf->bytes->text : "(overflows int64)");
    }
    return hop__buf_finish(&b);
}

void
hop__trace_insn(const hop_plan *p, int32_t pc)
{
    hop__buf b;
    hop__buf_init(&b);
    insn_text(p, pc, &b);
    char *s = hop__buf_finish(&b);
    if (s) {
        while (*s && s[strlen(s) - 1] == ' ')
            s[strlen(s) - 1] = '\0';
        fprintf(p->trace, "plan: %s\n", s);
        hop_free(s);
    }
}
