"""A graph break's region run by CPython itself (Break._finish).

A break inside a loop, a with block or an inlined call ends the graph at the
statement around it (_Hoist), and from there the code runs in Python until
it has passed the region's last instruction (`until`) with an empty stack;
then the rest resumes compiled.  hop's concrete interpreter (_frame's
Translator) ran that region at ~1.5 us an instruction, so a data-dependent
`while` loop of a few ops took 27 times eager's time.  Here the region runs
as the function's own bytecode: a copy of its code object whose entry jumps
to the region's start and whose exits return to hop, which CPython runs at
its own speed.

The copy (`region(code, pc, until, bound)`, cached) differs from the code in
these places only, every other byte and offset the same (so line numbers,
the exception table and tracebacks are the function's):
- the locals bound at the break are its positional parameters, first in
  its co_varnames in the caller's order, the others after them, unbound (a
  read of one raises UnboundLocalError, as eagerly), every LOAD_FAST,
  STORE_FAST and DELETE_FAST renumbered so (the resume hands it the
  frame's values; a closure's free cells are the function's own: the copy
  runs with its __closure__); the instruction after RESUME jumps to a prologue appended
  at the end, which jumps to the region's start (none where the region
  starts at the first instruction after RESUME);
- each instruction past `until` that the region's code reaches with an
  empty stack (a static count over dis.stack_effect; past until with items
  on the stack, a with block's cleanup or a statement's store, the code is
  still the region's) jumps to an epilogue appended at the end, which
  returns (EXIT, that instruction's index, locals()), as the concrete
  interpreter pauses at the first such instruction.
A return inside the region returns the function's value; an exception
propagates as eagerly; a path that leaves the region another way (an
exception handler past it) runs on in Python to the function's end, which is
eager's answer too.  Code this cannot copy returns None and the region runs
in the concrete interpreter as before: the code's own cells (a variable a
nested function reads or writes), a generator or coroutine, more than 256
locals, a region starting where there is no room for the entry's jump, an
exit without room for its own."""

import dis
import opcode
import sys

__all__ = ["EXIT", "region"]

EXIT = object()  # an epilogue returns ((EXIT, the exit's index), locals())

_OP = dis.opmap
_CACHES = opcode._inline_cache_entries
# 3.11's flags: a generator, coroutine, async generator or iterable coroutine
_GENERATORS = 0x20 | 0x80 | 0x100 | 0x200
_VARARGS = 0x04 | 0x08
_NO_FALL = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
            "JUMP_BACKWARD_NO_INTERRUPT"}

_LOCAL_OPS = {_OP["LOAD_FAST"], _OP["STORE_FAST"], _OP["DELETE_FAST"]}

_REGIONS = {}  # (code, pc, until, bound) -> the copy's code object, or None


def region(code, pc, until, bound):
    """The code object that runs code's instructions (dis indices, CACHE
    entries not counted) from pc with the locals bound (a tuple of names,
    the others unbound), whose positional parameters are the bound locals
    in bound's order, returning
    ((EXIT, index), locals()) at an exit past until (the module's text), or
    None where the code cannot be copied."""
    key = (code, pc, until, bound)
    fn = _REGIONS.get(key, False)
    if fn is False:
        fn = _REGIONS[key] = _make(code, pc, until, bound)
    return fn


def _units(op, arg):
    """The code units of op(arg), EXTENDED_ARG prefixes first, then op's
    inline CACHE entries (as bytes)."""
    out = bytearray()
    for shift in (24, 16, 8):
        if arg >> shift:
            out += bytes((_OP["EXTENDED_ARG"], (arg >> shift) & 0xFF))
    out += bytes((op, arg & 0xFF))
    out += bytes(2 * _CACHES[op])
    return out


def _jump(op, at, target):
    """A relative jump at byte offset `at` to byte offset `target`: its bytes
    (the arg counts code units from the end of the jump)."""
    n = 2
    while True:
        end = at + n
        arg = (target - end) // 2 if op == _OP["JUMP_FORWARD"] else (end - target) // 2
        if arg < 0:
            return None
        code = _units(op, arg)
        if len(code) == n:
            return code
        if len(code) < n:
            # the longer jump's arg fits fewer units (512 bytes forward: arg
            # 256 needs an EXTENDED_ARG, which makes it 255): EXTENDED_ARG 0
            # pads it to n (before, n alternated 2, 4, 2, ... forever and
            # hop.compile hung on the call that made this region)
            return bytes((_OP["EXTENDED_ARG"], 0)) * ((n - len(code)) // 2) + code
        n = len(code)


def _exits(ins, at, pc, until):
    """{index: 0} of the region's exits: the instructions past until its
    code reaches with an empty stack, by a static count of the stack from
    an empty one at pc (past until with items on it, the code is still the
    region's); None where the count fails."""
    depth, todo, out = {pc: 0}, [pc], {}
    while todo:
        k = todo.pop()
        i, d = ins[k], depth[k]
        arg = i.arg if i.opcode >= dis.HAVE_ARGUMENT else None
        succ = []
        if i.opname not in _NO_FALL and k + 1 < len(ins):
            succ.append((k + 1, d + dis.stack_effect(i.opcode, arg, jump=False)))
        if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            t = at.get(i.argval)
            if t is None:
                return None
            succ.append((t, d + dis.stack_effect(i.opcode, arg, jump=True)))
        for t, e in succ:
            if e < 0 or t < pc:
                return None  # (a jump before the region's start: not a region)
            # past until, the first instruction with an empty stack is an
            # exit (a with block's cleanup, a statement's store run first)
            seen = out if t > until and e == 0 else depth
            if t in seen:
                if seen[t] != e:
                    return None
                continue
            seen[t] = e
            if seen is depth:
                todo.append(t)
    return None if set(out) & set(depth) else out


def _make(code, pc, until, bound):
    if sys.version_info[:2] != (3, 11) or code.co_cellvars or code.co_flags & _GENERATORS:
        return None  # (the copy is 3.11's bytecode: its opcodes, caches and line table)
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    at = {i.offset: n for n, i in enumerate(ins)}
    # (a closure's code copies its free cells first: COPY_FREE_VARS, RESUME)
    first = 1 + (bool(ins) and ins[0].opname == "COPY_FREE_VARS")
    if len(ins) <= first or ins[first - 1].opname != "RESUME" or \
            not first <= pc <= until < len(ins):
        return None
    exits = _exits(ins, at, pc, until)
    if exits is None:
        return None
    raw = bytearray(code.co_code)
    consts = list(code.co_consts) + [locals]
    locals_at = len(consts) - 1
    # every offset a jump or a handler may reach: an overwritten unit must
    # not be one (but the exit itself)
    targets = {i.argval for i in ins if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs}
    targets |= {e.target for e in dis._parse_exception_table(code)}
    tail = bytearray()

    def here():
        return len(raw) + len(tail)

    # the locals bound at pc first, as the parameters: the others are
    # unbound in the copy's frame (a read raises UnboundLocalError, as
    # eagerly); each LOAD_FAST, STORE_FAST and DELETE_FAST renumbered (a
    # cell or free variable's index counts all the locals: unchanged)
    names = list(bound) + [n for n in code.co_varnames if n not in bound]
    index = {n: k for k, n in enumerate(names)}
    if len(names) != code.co_nlocals or len(index) != len(names) or len(names) > 256:
        return None  # (a name bound twice, or no local of the code)
    for i in ins:
        if i.opcode in _LOCAL_OPS:
            raw[i.offset + 1] = index[code.co_varnames[i.arg]]
    # the entry: the instruction after RESUME jumps to the prologue, which
    # jumps to pc (none where the region starts there)
    entry_at, start = ins[first].offset, ins[pc].offset
    if start != entry_at:
        prologue = here()
        entry = _jump(_OP["JUMP_FORWARD"], entry_at, prologue)
        if entry is None or entry_at + len(entry) > start or \
                any(entry_at < t < entry_at + len(entry) for t in targets):
            return None
        back = _jump(_OP["JUMP_BACKWARD"], here(), start)
        if back is None:
            return None
        tail += back
        raw[entry_at:entry_at + len(entry)] = entry
    # each exit with an empty stack jumps to its epilogue
    for k in sorted(exits):
        t = ins[k].offset
        consts.append((EXIT, k))
        epilogue = here()
        tail += _units(_OP["LOAD_CONST"], len(consts) - 1)
        tail += _units(_OP["PUSH_NULL"], 0)
        tail += _units(_OP["LOAD_CONST"], locals_at)
        tail += _units(_OP["PRECALL"], 0)
        tail += _units(_OP["CALL"], 0)
        tail += _units(_OP["BUILD_TUPLE"], 2)
        tail += _units(_OP["RETURN_VALUE"], 0)
        jump = _jump(_OP["JUMP_FORWARD"], t, epilogue)
        if jump is None or t + len(jump) > len(code.co_code) or \
                any(t < x < t + len(jump) for x in targets):
            return None
        raw[t:t + len(jump)] = jump
    added = len(tail) // 2
    raw += tail
    # the appended units have no line (3.11's location entry "none", up to
    # 8 units each)
    table = bytearray(code.co_linetable)
    while added > 0:
        n = min(added, 8)
        table.append(0x80 | (15 << 3) | (n - 1))
        added -= n
    try:
        new = code.replace(co_code=bytes(raw), co_consts=tuple(consts),
                           co_linetable=bytes(table), co_varnames=tuple(names),
                           co_argcount=sum(n in bound for n in names),
                           co_posonlyargcount=0, co_kwonlyargcount=0,
                           co_flags=code.co_flags & ~_VARARGS,
                           co_stacksize=max(code.co_stacksize, 3))
    except (TypeError, ValueError):
        return None
    return new
