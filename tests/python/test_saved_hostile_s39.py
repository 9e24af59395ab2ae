"""Hostile saved files, field by field (session 39): each test takes a real
saved program, changes one field of its payload (found by walking the
payload as output_graph/load.c reads it, docs/SAVED_FORMAT.md) with the
header's length and checksum made right, and checks that hop.load refuses
what the writer never writes with a hop.Error naming the field, or loads
and runs what it should.  Last, hop.foreign's refusal of an int that is no
address (a library's own hostile slots and exports are C tests:
tests/c/test_hop_classes.c, tests/c/test_foreign.c)."""
import ctypes
import json
import pickle
import threading

import numpy as np
import pytest

import hop
from fuzz_saved import read_uvarint, sections, unwrap, uvarint, with_sections, wrap, zigzag

# ------------------------------------------------------------ the payload


class _Fields:
    """The fields of a payload: (start, end, label, value) in file order."""

    def __init__(self, payload):
        self.b, self.i, self.all = payload, 0, []

    def u(self, label):
        v, end = read_uvarint(self.b, self.i)
        self.all.append((self.i, end, label, v))
        self.i = end
        return v

    def byte(self, label):
        v = self.b[self.i]
        self.all.append((self.i, self.i + 1, label, v))
        self.i += 1
        return v

    def skip(self, n, label):
        self.all.append((self.i, self.i + n, label, bytes(self.b[self.i:self.i + n])))
        self.i += n

    def str_(self, label):
        self.skip(self.u(label + ".len"), label)

    def value(self):
        kind = self.byte("value.kind")
        if kind == 2:
            self.u("value.sym")
        elif kind == 1:
            self.byte("value.dtype")
            for _ in range(self.byte("value.rank")):
                self.u("value.size")

    def args(self):
        for _ in range(self.u("args.count")):
            kind = self.byte("arg.kind")
            if kind in (1, 2, 5, 8):  # node, int, SymInt, graph
                self.u("arg")
            elif kind == 3:
                self.skip(8, "arg.float")
            elif kind in (4, 6):
                self.byte("arg")
            elif kind == 7:
                self.args()


def fields(payload):
    """Every field of payload, labelled (the reader's order)."""
    f = _Fields(payload)
    for _ in range(f.u("symbols.count")):
        f.byte("symbol.unbacked")
        f.u("symbol.hint")
        f.u("symbol.lo")
        f.u("symbol.hi")
    for _ in range(f.u("exprs.count")):
        kind = f.byte("expr.kind")
        f.u("expr.value")
        for _ in range(f.u("expr.n")):
            f.u("expr.operand")
            if kind in (2, 3):
                f.u("expr.coef")
    for _ in range(f.u("guards.count")):
        f.u("guard")
    ngraphs = f.u("graphs.count")
    for _ in range(ngraphs):
        f.str_("graph.name")
        f.u("graph.parent")
    placeholders = []
    for _ in range(ngraphs):
        for _ in range(f.u("graph.guards")):
            f.u("graph.guard")
        nph = 0
        for _ in range(f.u("nodes.count")):
            kind = f.byte("node.kind")
            f.str_("node.name")
            f.u("node.flags")
            if kind == 0:
                nph += 1
                f.value()
            elif kind == 1:
                f.str_("node.op")
                f.args()
                f.value()
            elif kind in (2, 5):
                f.str_("node.target")
                f.args()
                for _ in range(f.u("node.nouts")):
                    f.value()
            elif kind == 3:
                f.u("getitem.node")
                f.u("getitem.index")
            else:
                f.args()
        placeholders.append(nph)
    for nph in placeholders[1:]:
        for _ in range(nph):
            role = f.byte("capture.role")
            if role:
                f.u("capture.source")
            if role == 1:
                f.u("capture.cause")
                if f.byte("capture.note_flags") & 1:
                    f.str_("capture.note")
    for _ in range(f.u("inputs.count")):
        f.u("input.placeholder")
        kind = f.byte("input.kind")
        if kind == 0:
            f.u("input.position")
        elif kind == 2:
            f.u("input.input")
            f.u("input.dim")
    for _ in range(f.u("values.count")):
        f.byte("value.dtype")
        for _ in range(f.byte("value.rank")):
            f.u("value.size")
        f.skip(f.u("value.nbytes"), "value.data")
    for _ in range(f.u("sections.count")):
        f.str_("section.name")
        f.skip(f.u("section.len"), "section.data")
    assert f.i == len(payload)
    return f.all


def saved(obj):
    from hop import _saved
    return _saved.dumps(obj)


def loads(data):
    from hop import _saved
    return _saved.loads(data)


def field(payload, label, k=0, value=None):
    """The k-th field labelled `label` (and holding value, if given)."""
    found = [f for f in fields(payload) if f[2] == label and (value is None or f[3] == value)]
    return found[k]


def replaced(data, f, encoded):
    """data with field f's bytes replaced by `encoded` (a file again)."""
    p = unwrap(data)
    return wrap(p[:f[0]] + encoded + p[f[1]:], data)


def renamed(data, f, name):
    """data with the string field f (its bytes, after its length) set to name."""
    p = unwrap(data)
    start = f[0] - len(uvarint(f[1] - f[0]))
    return wrap(p[:start] + uvarint(len(name)) + name + p[f[1]:], data)


def refused(data):
    with pytest.raises(hop.Error) as e:
        loads(data)
    return str(e.value)


def test_the_field_walker_reads_every_byte_of_programs_of_every_kind():
    w = hop.randn(3, seed=2)
    progs = [hop.trace(lambda x: hop.map(lambda r: hop.cond(r.sum() > 0, lambda: r * w,
                                                            lambda: r - 1.0), x),
                       hop.ones(4, 3), dynamic=True),
             hop.trace(lambda x: hop.scan(lambda c, r: (c + r, c * r), hop.zeros(3), x),
                       hop.ones(4, 3))]
    for gm in progs:
        labels = {f[2] for f in fields(unwrap(saved(gm)))}
        assert {"node.op", "node.target", "capture.role", "input.kind", "section.data"} <= labels


# ------------------------------------------------------------ names


def test_a_name_holding_a_nul_byte_is_refused_not_cut_short_at_it():
    # "mul\0" read as a C string is the op mul: before, the file loaded and ran
    gm = hop.trace(lambda x: x * 2.0, hop.ones(3))
    data = saved(gm)
    p = unwrap(data)
    msg = refused(renamed(data, field(p, "node.op", value=b"mul"), b"mul\0"))
    assert "load: forward: the name \"mul\" holds a NUL byte (at byte" in msg
    msg = refused(renamed(data, field(p, "node.name", value=b"mul"), b"mul\0junk"))
    assert "holds a NUL byte" in msg
    msg = refused(renamed(data, field(p, "graph.name", value=b"forward"), b"forward\0"))
    assert msg.startswith("load: graphs: the name \"forward\" holds a NUL byte")


def test_a_section_name_holding_a_nul_byte_is_refused():
    # ("hop.python\0x" read as the section hop.python before)
    data = saved(hop.trace(lambda x: x + 1.0, hop.ones(2)))
    p = unwrap(data)
    msg = refused(renamed(data, field(p, "section.name", value=b"hop.python"),
                          b"hop.python\0x"))
    assert msg.startswith("load: sections: the name of section 1 holds a NUL byte (at byte")


def test_the_writer_refuses_a_section_name_holding_a_nul_character():
    # Before: _C._save wrote the section "x\0y" as "x" (a C string), silently.
    c = hop.tensor([1.0, 2.0, 3.0])
    gm = hop.trace(lambda x: x * c, hop.ones(3))
    with pytest.raises(ValueError) as e:
        hop._C._save(gm._trace, [c], {"x\0y": b"1"})
    assert str(e.value) == "_save: the section name 'x\\x00y' holds a NUL character"
    assert hop._C._load(hop._C._save(gm._trace, [c], {"x": b"1"}))[2] == {"x": b"1"}


def test_a_hop_target_holding_a_nul_byte_is_refused():
    gm = hop.trace(lambda x: hop.cond(x.sum() > 0, lambda: x * 2.0, lambda: x - 1.0),
                   hop.ones(3))
    data = saved(gm)
    msg = refused(renamed(data, field(unwrap(data), "node.target", value=b"cond"), b"cond\0"))
    assert "the name \"cond\" holds a NUL byte" in msg


# ------------------------------------------------------------ symbols


def test_an_unbacked_symbol_with_a_hint_is_refused():
    # the format writes 0 for an unbacked symbol's hint: the loader ignored it
    gm = hop.trace(lambda x: x * 2.0, hop.ones(4, 3), dynamic=True)
    data = saved(gm)
    p = unwrap(data)
    hint = field(p, "symbol.hint")
    assert hint[3] == zigzag(4)[0]
    msg = refused(replaced(data, field(p, "symbol.unbacked"), b"\x01"))
    assert msg.startswith("load: symbols: symbol 0: an unbacked symbol has the hint 4, not 0")


# ------------------------------------------------------------ root inputs


def _captures_program():
    c1 = hop.tensor([1.0, 2.0, 3.0])
    c2 = hop.tensor([10.0, 20.0, 30.0])
    return hop.trace(lambda x: x * c1 - c2, hop.ones(3))


def test_root_inputs_listed_out_of_placeholder_order_are_refused():
    # Before: the two captured values swapped in the list loaded; Trace.inputs
    # then said c2 held c1's value while the plan ran with c1's.
    gm = _captures_program()
    data = saved(gm)
    p = bytearray(unwrap(data))
    a, b = [f for f in fields(bytes(p)) if f[2] == "input.placeholder"][1:3]
    p[a[0]], p[b[0]] = p[b[0]], p[a[0]]
    msg = refused(wrap(bytes(p), data))
    assert msg.startswith("load: root inputs: root input 1 is placeholder 2, not 1 (the root "
                          "inputs are its placeholders in order)")
    ok = loads(data)
    assert ok(hop.ones(3)).tolist() == [-9.0, -18.0, -27.0]


def test_a_captured_input_before_an_argument_is_refused_not_given_the_argument():
    # Before: placeholder 0 (x) marked captured with the value [10, 20, 30]
    # and placeholder 1 (c) the argument loaded, and the runner passed the
    # argument to x: m(y) gave y - saved, where the file says saved - y.
    c = hop.tensor([10.0, 20.0, 30.0])
    gm = hop.trace(lambda x: x - c, hop.ones(3))
    data = saved(gm)
    p = unwrap(data)
    count = field(p, "inputs.count")
    values = field(p, "values.count")
    swapped = p[:count[1]] + bytes([0, 1]) + bytes([1, 0, 0]) + p[values[0]:]
    msg = refused(wrap(swapped, data))
    assert msg == ("hop.load: root input c is an argument after a captured input (a saved "
                   "program's arguments come first)")


def test_argument_positions_out_of_order_are_refused():
    gm = hop.trace(lambda x, y: x - y, hop.ones(3), hop.ones(3))
    data = saved(gm)
    p = unwrap(data)
    msg = refused(replaced(data, field(p, "input.position", 1), uvarint(0)))
    assert msg.startswith("load: root inputs: root input 1 is argument 0, not 1 (at byte")
    msg = refused(replaced(data, field(p, "input.position", 0), uvarint(7)))
    assert "root input 0 is argument 7, not 0" in msg


def test_a_size_input_must_be_the_size_of_the_tensor_and_dim_it_names():
    # Before, any input and any dim below 8 loaded (lift reports then named
    # the wrong size).
    gm = hop.trace(lambda x: x * 2.0, hop.ones(4, 3), dynamic=True)
    data = saved(gm)
    p = unwrap(data)
    assert [f[3] for f in fields(p) if f[2] in ("input.input", "input.dim")] == [2, 0, 2, 1]
    msg = refused(replaced(data, field(p, "input.dim", 0), uvarint(1)))
    assert msg.startswith("load: root inputs: root input 0 (s0) is not size 1 of root input 2")
    msg = refused(replaced(data, field(p, "input.dim", 1), uvarint(3)))
    assert "root input 1 (s1) is not size 3 of root input 2" in msg
    msg = refused(replaced(data, field(p, "input.input", 0), uvarint(1)))
    assert "root input 0 (s0) is not size 0 of root input 1" in msg
    assert loads(data)(hop.ones(5, 2)).shape == (5, 2)


def test_a_lift_cause_must_be_a_tensor_of_the_parent_with_the_symbol_in_its_shape():
    # cond_true_0 lifts s0 (cause: x, the parent's node 1), x, s1 (cause: y,
    # node 3) and y.  Before, any parent node loaded as a cause: y for s0 (the
    # lift report then said s0 came from y's shape), and a cause given to a
    # lifted tensor was dropped.
    gm = hop.trace(lambda x, y: hop.cond(x.sum() > 0, lambda: x * 2.0 + y.sum(), lambda: x),
                   hop.ones(4), hop.ones(3), dynamic=True)
    data = saved(gm)
    p = unwrap(data)
    causes = [f for f in fields(p) if f[2] == "capture.cause"][:4]
    assert [f[3] for f in causes] == [2, 0, 4, 0]
    for k, cause, named in ((0, 4, "y"), (0, 1, "s0"), (1, 2, "x"), (3, 4, "y"), (2, 3, "s1")):
        msg = refused(replaced(data, causes[k], uvarint(cause)))
        ph = ["s0", "x", "s1_true_branch", "y_true_branch"][k]
        assert msg.startswith(f"load: capture tables: cond_true_0.{ph}: the cause {named} is not "
                              f"a tensor of cond_true_0's parent with this symbol in its shape")
    lifts = {(li["graph"], li["placeholder"]): li["shape_of"]
             for li in hop._C._lifts(loads(data)._trace)}
    assert lifts[("cond_true_0", "s0")] == "x" and lifts[("cond_true_0", "s1_true_branch")] == "y"


# ------------------------------------------------------------ the Python section


def _with_python(data, **changes):
    p = unwrap(data)
    at, secs = sections(p)
    secs = [list(s) for s in secs]
    py = next(s for s in secs if s[0] == b"hop.python")
    info = json.loads(py[1])
    info.update(changes)
    py[1] = json.dumps(info).encode()
    return wrap(with_sections(p, at, [tuple(s) for s in secs]), data)


def test_a_tensor_result_called_an_int_or_a_float_is_refused():
    # Before: sym_out true on the f32[] result of x.sum() loaded, and a call
    # returned int(sum), a number the program never computed.
    gm = hop.trace(lambda x: (x.sum(), x.shape[0]), hop.full((3,), 1.75), dynamic=True)
    data = saved(gm)
    out = loads(data)(hop.full((3,), 1.75))
    assert out[0].tolist() == 5.25 and out[1] == 3 and type(out[1]) is int
    msg = refused(_with_python(data, sym_out=[True, True]))
    assert msg == ("hop.load: the section hop.python says result 0 is an int (a SymInt), but "
                   "the program's output 0 is a tensor of hop.float32 and sizes []")
    msg = refused(_with_python(data, sym_out=[False, "float"]))
    assert msg == ("hop.load: the section hop.python says result 1 is a float (a SymFloat), "
                   "but the program's output 1 is the SymInt s0")
    msg = refused(_with_python(data, sym_out=[False, False]))
    assert msg == ("hop.load: the section hop.python says result 1 is a tensor, but the "
                   "program's output 1 is the SymInt s0")


def test_int_and_float_results_of_expressions_still_load():
    gm = hop.trace(lambda x: (x.shape[0] * 2, x.shape[0] / 4, x.sin()), hop.ones(4, 3),
                   dynamic=True)
    m = loads(saved(gm))
    r = m(hop.ones(6, 3))
    assert r[0] == 12 and type(r[0]) is int and r[1] == 1.5 and type(r[1]) is float


# ------------------------------------------------------------ threads


def test_concurrent_loads_and_calls_from_threads_agree():
    w = hop.randn(3, seed=2)
    gm = hop.trace(lambda x: hop.map(lambda r: hop.cond(r.sum() > 0, lambda: r * w,
                                                        lambda: r - 1.0), x),
                   hop.ones(4, 3), dynamic=True)
    data = saved(gm)
    x = hop.randn(5, 3, seed=3)
    want = gm(x).tolist()
    bad = wrap(unwrap(data)[:-3], data)
    results, errors = [], []

    def work():
        for _ in range(20):
            results.append(loads(data)(x).tolist())
            try:
                loads(bad)
            except hop.Error as e:
                errors.append(str(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 80
    assert len(set(errors)) == 1 and len(errors) == 80


def test_a_saved_tensor_whose_program_computes_something_else_is_refused():
    # Before: a GraphModule's file relabelled hop.kind = "tensor" loaded as its
    # captured value t, not the 2 * t its program computes.
    t = hop.tensor([1.5, 2.0])
    data = saved(hop.trace(lambda: t * 2.0))
    p = unwrap(data)
    at, secs = sections(p)
    secs = [(n, b"tensor" if n == b"hop.kind" else v) for n, v in secs]
    msg = refused(wrap(with_sections(p, at, secs), data))
    assert msg == ("hop.load: a saved tensor's program must return its captured value; this "
                   "one computes something else (save it as a GraphModule)")
    for v in (t, hop.tensor(3, dtype=hop.int64), hop.tensor([True, False]), hop.zeros(0, 2)):
        back = loads(saved(v))
        assert back.dtype == v.dtype and back.shape == v.shape and back.tolist() == v.tolist()


def test_a_section_saved_twice_is_refused_not_read_once():
    # Before: the last hop.python won and the first was never read.
    data = saved(hop.trace(lambda x: x * 3.0, hop.ones(2)))
    p = unwrap(data)
    at, secs = sections(p)
    py = dict(secs)[b"hop.python"]
    for twice in (secs + [(b"hop.python", py)], [(b"hop.kind", b"tensor")] + secs):
        msg = refused(wrap(with_sections(p, at, twice), data))
        assert msg in ("load: sections: the section hop.python appears twice",
                       "load: sections: the section hop.kind appears twice")
    assert loads(data)(hop.ones(2)).tolist() == [3.0, 3.0]


def test_a_negative_or_too_wide_int_is_no_kernel_address():
    # Before: hop.foreign(sig, -1) registered the address 2**64 - 1 and a call
    # crashed the process; 2**64 was an OverflowError about C longs.
    for addr in (-1, -2 ** 70, 2 ** 64, 2 ** 70):
        with pytest.raises(ValueError) as e:
            hop.foreign("void h4_nowhere(int64_t n)", addr)
        assert str(e.value) == (f"foreign_register(): address {addr} is not an address (an int "
                                f"from 1 to 2**64 - 1)")
    with pytest.raises(ValueError, match=r"^foreign_register\(\): address is 0$"):
        hop.foreign("void h4_nowhere(int64_t n)", 0)
    with pytest.raises(hop.Error):  # nothing was registered under the name
        hop._C._foreign_signature("h4_nowhere")


# ------------------------------------------- foreign kernels without sizes

F32P = ctypes.POINTER(ctypes.c_float)


@ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_float, F32P, F32P)
def _scale(n, a, x, y):
    for i in range(n):
        y[i] = a * x[i]


def _kernel_program(kernels, sized):
    sig = ("void s39_scale_sized(int64_t n, float a, const float x[n], float y[n])" if sized
           else "void s39_scale(int64_t n, float a, const float *x, float *y)")
    k = kernels(sig, _scale)
    f = lambda x: hop.cond(x.sum() > 0, lambda x: k(3, 2.0, x, x * 1),  # noqa: E731
                           lambda x: x - 1, (x,))
    return hop.trace(f, hop.ones(3), dynamic=True), k


def test_a_program_calling_a_kernel_with_unsized_pointers_loads_only_when_trusted(kernels,
                                                                                  tmp_path):
    # A file decides the ints the kernel's call passes (`n`): with pointers
    # the signature gives no size, a hostile file made the kernel run past
    # its buffers (a segfault).  Such a program loads when the caller says
    # the file is trusted; a pickle (which runs code of its own) is.
    gm, k = _kernel_program(kernels, sized=False)
    path = tmp_path / "k.hop"
    hop.save(gm, path)
    with pytest.raises(hop.Error) as e:
        hop.load(path)
    assert str(e.value) == (
        "hop.load: the program calls the foreign kernel void s39_scale(int64_t n, float a, "
        "const float *x, float *y), whose pointer parameters x, y have no size, so the ints "
        "the file passes it would be used unchecked; declare the sizes in its signature "
        "(const float x[n]), or load a file you trust with hop.load(path, trust_kernels=True)")
    assert k.signature.startswith("void s39_scale(")  # (the registry is as it was)
    x = hop.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    same = hop.load(path, trust_kernels=True)
    assert same(x).tolist() == gm(x).tolist() == [2.0, 4.0, 6.0]
    assert pickle.loads(pickle.dumps(gm))(x).tolist() == [2.0, 4.0, 6.0]


def test_a_program_calling_a_kernel_with_sized_pointers_loads_and_checks_each_call(kernels,
                                                                                   tmp_path):
    gm, _ = _kernel_program(kernels, sized=True)
    path = tmp_path / "k.hop"
    hop.save(gm, path)
    same = hop.load(path)
    x = hop.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    assert same(x).tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(hop.ShapeError):
        same(hop.ones(2))  # n = 3 for 2 elements: refused, not run
