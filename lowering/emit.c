/*
 * lowering/emit.c - the program under construction: routines (main and
 * the subroutines), instructions appended to the current one, int
 * registers, the slot accesses and aliases the memory plan computes
 * lifetimes from, which symbols are bound where, and notes (the strings of
 * the plan's dump).
 *
 * Jump targets and Call targets stay routine-relative until lower.c
 * assembles the routines into one program.
 */
#include "lowering/lowering_impl.h"

#include <stdio.h>

/* --------------------------------------------------------------- helpers */

char *
hop__note(hop_lower_ctx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    if ((size_t)n < sizeof small)
        return hop__arena_strdup(&cx->plan->arena, small);
    char *s = hop__arena_alloc(&cx->plan->arena, (size_t)n + 1);
    if (s == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

hop_status
hop__nomem_or(hop_status st)
{
    return st == HOP_OK ? hop_error(HOP_NOMEM, "out of memory") : st;
}

/* -------------------------------------------------------------- routines */

hop_status
hop__new_routine(hop_lower_ctx *cx, const hop_graph *g, int32_t *out)
{
    if (hop__grow((void **)&cx->routines, &cx->caproutines, cx->nroutines + 1,
                  sizeof *cx->routines) != HOP_OK)
        return HOP_NOMEM;
    hop__rcode *r = &cx->routines[cx->nroutines];
    memset(r, 0, sizeof *r);
    r->graph = g;
    r->name = g ? hop__arena_strdup(&cx->plan->arena, g->name) : "main";
    if (r->name == NULL)
        return HOP_NOMEM;
    *out = (int32_t)cx->nroutines++;
    return HOP_OK;
}

/* ---------------------------------------------------------- instructions */

int32_t
hop__pos(hop_lower_ctx *cx)
{
    return (int32_t)hop__cur(cx)->n;
}

int32_t
hop__emit(hop_lower_ctx *cx, hop__opcode op, int32_t p1, int32_t p2, int32_t p3, const void *p4,
          const char *note)
{
    hop__rcode *r = hop__cur(cx);
    if (hop__grow((void **)&r->code, &r->cap, r->n + 1, sizeof *r->code) != HOP_OK)
        return -1;
    r->code[r->n] =
        (hop__insn){.opcode = (uint8_t)op, .p1 = p1, .p2 = p2, .p3 = p3, .p4 = p4, .note = note};
    return (int32_t)r->n++;
}

hop_status
hop__access(hop_lower_ctx *cx, int32_t slot)
{
    hop__rcode *r = hop__cur(cx);
    if (slot < 0)
        return HOP_OK;
    if (hop__grow((void **)&r->acc, &r->capacc, r->nacc + 1, sizeof *r->acc) != HOP_OK)
        return HOP_NOMEM;
    r->acc[r->nacc++] = (hop__acc){(int32_t)r->n - 1, slot};
    return HOP_OK;
}

hop_status
hop__alias_of(hop_lower_ctx *cx, int32_t slot, int32_t of)
{
    if (hop__grow((void **)&cx->aliases, &cx->capaliases, cx->naliases + 1, sizeof *cx->aliases) !=
        HOP_OK)
        return HOP_NOMEM;
    cx->aliases[cx->naliases++] = (hop__alias){slot, of};
    return HOP_OK;
}

hop_status
hop__new_reg(hop_lower_ctx *cx, const char *name, int32_t *out)
{
    if (hop__grow((void **)&cx->regnames, &cx->capregs, cx->nregs + 1, sizeof *cx->regnames) !=
        HOP_OK)
        return HOP_NOMEM;
    const char *copy = NULL;
    if (name && (copy = hop__arena_strdup(&cx->plan->arena, name)) == NULL)
        return HOP_NOMEM;
    cx->regnames[cx->nregs] = copy;
    *out = (int32_t)cx->nregs++;
    return HOP_OK;
}

/* --------------------------------------------------------------- symbols */

void
hop__mark_defined(hop_lower_ctx *cx, const hop_expr *e)
{
    int64_t id = hop_symbol_id(e);
    if (id >= 0 && (size_t)id < cx->nsyms)
        cx->symdef[id] = true;
}

/* The symbols bound at entry (by the inputs' sizes): everything else in a
 * size makes its tensor late. */
bool
hop__entry_bound(hop_lower_ctx *cx, const hop_expr *sym)
{
    int64_t id = hop_symbol_id(sym);
    return id >= 0 && (size_t)id < cx->nsyms && cx->symentry[id];
}
