"""Untrusted input never crashes hop (issue #25): saved programs whose HOP
leads are out of range, hostile JSON, libraries of HOPs that misbehave, and
the integer edge cases where compiled code parted from eager.  What crashed
or hung before runs in a child process with a timeout."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hop

import fuzz_saved

# Under the sanitizers every parametrized case runs: each is a memory path of its own
# (budget.cases).
pytestmark = pytest.mark.every_case

BUILD_PYTHON = os.environ.get("HOP_PYTHONPATH")
needs_build = pytest.mark.skipif(not BUILD_PYTHON, reason="HOP_PYTHONPATH is not set: the "
                                 "libraries of HOPs live in the build tree")


def _build_dir():
    return os.path.dirname(os.path.abspath(BUILD_PYTHON))


def hostile(kind):
    return os.path.join(_build_dir(), "tests", "c", f"libhop_hostile_{kind}.so")


def isolated(code, timeout=60):
    """Runs code in a fresh interpreter (hop imported); (returncode, stdout,
    stderr), returncode None when it did not finish in time."""
    env = dict(os.environ)
    if BUILD_PYTHON:
        env["PYTHONPATH"] = os.path.abspath(BUILD_PYTHON)
    try:
        r = subprocess.run([sys.executable, "-c", "import hop\n" + code], capture_output=True,
                           text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out"
    return r.returncode, r.stdout, r.stderr


def load_in_child(data, tmp_path, then=""):
    """fuzz_saved._loads(data) in a child: prints the hop.Error it raises (type and
    message) or 'loaded', then runs `then` (gm is the program)."""
    path = tmp_path / "hostile.hop"
    path.write_bytes(data)
    return isolated(f"""
try:
    gm = hop.load({str(path)!r})
    print("loaded")
except hop.Error as e:
    print(type(e).__name__ + ": " + str(e))
    raise SystemExit(0)
{then}
""")


# ---------------------------------------------- saved programs: HOP leads

def _saved(fn, *args):
    return fuzz_saved._dumps(hop.trace(fn, *args))


def test_a_saved_scan_whose_dim_is_out_of_range_is_refused_by_scans_verify(tmp_path):
    x = hop.randn(4, 3, seed=1)
    data = _saved(lambda x: hop.scan(lambda c, r: (c + r, c * r), hop.zeros(3), x), x)
    p = fuzz_saved.unwrap(data)
    bad = fuzz_saved.wrap(fuzz_saved.patch_call(p, "scan", 1, 32), data)  # the dim
    code, out, err = load_in_child(bad, tmp_path)
    assert code == 0, err  # it segfaulted in scan_lower
    assert out.startswith("Error: load: ") and "the program does not verify: verify: " \
        "forward: node scan: scan: xs 0 (x) is f32[4, 3], which has no dim 32" in out, out


def test_a_saved_lead_of_the_wrong_kind_is_refused_by_the_layout_check(tmp_path):
    x = hop.randn(4, 3, seed=1)
    data = _saved(lambda x: hop.scan(lambda c, r: (c + r, c * r), hop.zeros(3), x), x)
    p = fuzz_saved.unwrap(data)
    name = b"\x04scan"
    at = p.find(name + b"\x00" + name) + 2 * len(name) + 2  # past the argument count
    assert p[at] == 4 and p[at + 2] == 2  # reverse: a bool, dim: an int
    bad = fuzz_saved.wrap(p[:at + 2] + b"\x04" + p[at + 3:], data)  # dim: a bool now
    code, out, err = load_in_child(bad, tmp_path)
    assert code == 0, err
    assert "verify: forward: node scan: scan: argument 1 (dim) must be an int, not a bool" \
        in out, out


def test_a_saved_associative_scan_over_a_dim_its_xs_lack_is_refused_not_run(tmp_path):
    v = hop.randn(5, seed=3)
    data = _saved(lambda v: hop.associative_scan(lambda a, b: a * b + 1.0, v), v)
    p = fuzz_saved.unwrap(data)
    bad = fuzz_saved.wrap(fuzz_saved.patch_call(p, "associative_scan", 0, 1), data)
    code, out, err = load_in_child(bad, tmp_path, then="gm(hop.randn(5))\nprint('ran')")
    assert code is not None, "the loaded program spun (it read sizes[-1])"
    assert code == 0, err
    assert "associative_scan: xs 0 (v) is f32[5], which has no dim 1" in out, out


def test_loaded_and_traced_calls_pass_one_verify_the_classes_own():
    """A traced node passes its class's verify as it is emitted; a node its
    class refuses is refused the same way however it was made."""
    x = hop.randn(4, 3, seed=1)
    gm = hop.trace(lambda x: hop.map(lambda r: r.sin(), x), x)
    again = fuzz_saved._loads(fuzz_saved._dumps(gm))
    assert again.code == gm.code
    p = fuzz_saved.unwrap(fuzz_saved._dumps(gm))
    # map over a 0-d xs: the placeholder's rank byte 2 -> 0 (no sizes follow)
    name = b"\x01x"
    at = p.find(b"\x00" + name + b"\x00\x01\x08\x02")  # placeholder x: tensor, f32, rank 2
    assert at >= 0
    bad = p[:at + 6] + b"\x00" + p[at + 9:]
    with pytest.raises(hop.Error, match="map: xs 0 is not a tensor with rows to map over"):
        fuzz_saved._loads(fuzz_saved.wrap(bad, fuzz_saved._dumps(gm)))


def test_a_saved_size_hint_near_int64_max_plans_without_overflow(tmp_path):
    """A symbol's hint (the size it was traced at) plans the memory: one of
    2^62 made the layout's byte count overflow (UBSan, lowering/memplan.c);
    the run uses the real sizes either way."""
    x = hop.randn(4, 3, seed=1)
    data = fuzz_saved._dumps(hop.trace(
        lambda x: hop.fori_loop(0, 2, lambda i, a: (a * 2.0).tanh(), x), x, dynamic=True))
    p = fuzz_saved.unwrap(data)
    assert p[0] >= 1 and p[1] == 0  # symbols: a count, then s0: backed, its hint
    _, end = fuzz_saved.read_uvarint(p, 2)
    bad = fuzz_saved.wrap(p[:2] + fuzz_saved.zigzag(2 ** 62) + p[end:], data)
    code, out, err = load_in_child(bad, tmp_path, then="print(gm(hop.ones(4, 3)).shape)")
    assert code == 0, err
    assert out == "loaded\n(4, 3)\n", out


def _patch_constant(p, old, new):
    """p with the first constant expression `old` made `new` (the
    expressions follow the symbols: each a kind byte, a zigzag value, an
    operand count, operands)."""
    nsym, i = fuzz_saved.read_uvarint(p, 0)
    for _ in range(nsym):  # unbacked byte, hint, lo, hi
        i += 1
        for _ in range(3):
            _, i = fuzz_saved.read_uvarint(p, i)
    nexpr, i = fuzz_saved.read_uvarint(p, i)
    for _ in range(nexpr):
        kind, at = p[i], i + 1
        _, end = fuzz_saved.read_uvarint(p, at)
        n, i = fuzz_saved.read_uvarint(p, end)
        if kind == 0 and n == 0 and p[at:end] == fuzz_saved.zigzag(old):
            return p[:at] + fuzz_saved.zigzag(new) + p[end:]
        for _ in range(n):  # operands: an index, and a coefficient or an exponent
            _, i = fuzz_saved.read_uvarint(p, i)
            if kind in (2, 3):  # HOP_EXPR_ADD, HOP_EXPR_MUL
                _, i = fuzz_saved.read_uvarint(p, i)
    raise ValueError(f"no constant {old}")


def test_a_saved_negative_constant_size_is_refused():
    """A size of -2^63 in a tensor's metadata reached the fused-group
    planner, which multiplied it (UBSan, lowering/fused.c)."""
    x = hop.randn(4, 3, seed=1)
    data = fuzz_saved._dumps(hop.trace(lambda x: hop.wrap(lambda: (x * 2.0).sin()), x))
    bad = fuzz_saved.wrap(_patch_constant(fuzz_saved.unwrap(data), 4, -2 ** 63), data)
    with pytest.raises(hop.Error, match=r"size 0 is -9223372036854775808"):
        fuzz_saved._loads(bad)


# ------------------------------------------------ saved programs: JSON

def _python_section_replaced(data, fn):
    p = fuzz_saved.unwrap(data)
    at, secs = fuzz_saved.sections(p)
    secs = [(n, fn(d) if n == b"hop.python" else d) for n, d in secs]
    return fuzz_saved.wrap(fuzz_saved.with_sections(p, at, secs), data)


def test_deep_json_and_wrong_json_types_are_hop_errors_not_python_ones():
    data = _saved(lambda x: x * 2.0, hop.ones(3))
    deep = _python_section_replaced(data, lambda d: b"[" * 100000 + b"]" * 100000)
    with pytest.raises(hop.Error, match="the section hop.python is malformed"):
        fuzz_saved._loads(deep)  # was RecursionError

    def traced_out(d):
        info = json.loads(d)
        info["traced_out"] = [2]
        return json.dumps(info).encode()
    with pytest.raises(hop.Error, match=r"malformed \(traced_out is not a list of bools\)"):
        fuzz_saved._loads(_python_section_replaced(data, traced_out))  # was TypeError

    p = fuzz_saved.unwrap(data)
    at, secs = fuzz_saved.sections(p)
    secs = [(b"hop.\xffind" if n == b"hop.kind" else n, d) for n, d in secs]
    with pytest.raises(hop.Error, match="load: sections: the name of section 0 is not UTF-8"):
        fuzz_saved._loads(fuzz_saved.wrap(fuzz_saved.with_sections(p, at, secs), data))


def test_a_saved_argument_structure_that_is_not_a_tuple_is_refused():
    data = _saved(lambda x: x * 2.0, hop.ones(3))

    def spec(d):
        info = json.loads(d)
        info["spec"] = {"l": ["*"]}
        return json.dumps(info).encode()
    with pytest.raises(hop.Error, match="the argument structure is not a tuple"):
        fuzz_saved._loads(_python_section_replaced(data, spec))


# ------------------------------------------------ libraries of HOPs

@needs_build
def test_a_failed_init_leaves_no_kernel_behind_to_call_into_unmapped_code():
    code, out, err = isolated(f"""
import ctypes
try:
    hop.load_library({hostile('fails')!r})
except hop.InvalidError as e:
    print("refused:", e)
print("hostile_leaky_hop" in dir(hop.ops))
fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64)(lambda n: 0)
k = hop.foreign("int hostile_leaky_kernel(int64_t n)", fn)
print(k(5))
""")
    assert code == 0, err  # the stale kernel was found and called: a segfault
    assert out == "refused: hostile: this init fails after registering\nFalse\nNone\n", out


@needs_build
def test_an_init_that_loads_its_dependency_does_not_deadlock():
    code, out, err = isolated(f"""
print(hop.load_library({hostile('loads_dep')!r}))
print("repeat" in dir(hop.ops))
""")
    assert code is not None, "deadlocked on the library lock"
    assert code == 0, err
    assert out == "['hostile_dep_user']\nTrue\n"


@needs_build
@pytest.mark.parametrize("kind, message", [
    ("data_init", " has no descriptor hop_library (it exports hop_library_init, the entry "
                  "point of hop before ABI version 2)"),
    ("data_desc", "'s symbol hop_library is not a descriptor (an object of 16 bytes defined "
                  "by HOP_LIBRARY(init) in the library itself)"),
    ("old_abi", " was built for hop ABI version 9, but this hop is ABI version 3; rebuild it "
                "against this hop's headers"),
])
def test_a_library_without_a_descriptor_for_this_abi_is_refused_before_anything_runs(
        kind, message):
    code, out, err = isolated(f"""
try:
    hop.load_library({hostile(kind)!r})
except hop.InvalidError as e:
    print(e)
""")
    assert code == 0, err  # a data symbol was called as a function: a segfault
    assert out.startswith(f"load_library: {hostile(kind)}{message}"), out


@needs_build
def test_a_class_that_gives_no_outputs_is_a_hop_error_naming_it_and_the_slot():
    hop.load_library(hostile("no_outputs"))
    x = hop.ones(3)
    with pytest.raises(hop.Error, match=r"^hostile_no_outputs: the output_meta slot gave 0 "
                                        r"outputs but the body hostile_body_0 returns 1$"):
        hop.trace(lambda x: hop.ops.hostile_no_outputs(lambda a: a * 2.0, x), x)  # StopIteration


# ------------------------------------------------ integer edges

MIN = -2 ** 63


def _three_ways(fn, *args):
    eager = fn(*args)
    traced = hop.trace(fn, *args)(*args)
    compiled = hop.compile(fn)(*args)
    return [np.asarray(getattr(v, "numpy", lambda: v)()) for v in (eager, traced, compiled)]


def test_int64_min_is_a_value_in_compiled_code_not_an_unbound_symbol():
    n = hop.tensor(MIN)
    for r in _three_ways(lambda n: n.item() + 1, n):
        assert int(r) == MIN + 1
    x = hop.ones(2)
    for r in _three_ways(lambda n, x: hop.switch(n, [lambda v: v + 9.0, lambda v: v * 20.0], x),
                         n, x):
        np.testing.assert_array_equal(r, [10.0, 10.0])
    lo = hop.tensor(MIN)
    for r in _three_ways(lambda lo: hop.fori_loop(lo, lo + 3, lambda i, a: a + 1.0,
                                                  hop.zeros(2)), lo):
        np.testing.assert_array_equal(r, [3.0, 3.0])


def test_a_fori_loop_whose_upper_minus_lower_overflows_runs_no_trips_as_eager():
    code, out, err = isolated("""
lo, hi = 2 ** 62 + 1, -2 ** 62
body = lambda i, a: a + 1.0
f = lambda a, l, h: hop.fori_loop(l.item(), h.item(), body, a)
g = lambda a: hop.fori_loop(lo, hi, body, a)
a, l, h = hop.zeros(2), hop.tensor(lo), hop.tensor(hi)
print(f(a, l, h), hop.compile(f)(a, l, h), g(a), hop.compile(g)(a))
""", timeout=60)
    assert code is not None, "the loop ran 2^63 trips"
    assert code == 0, err  # "int64 overflow"
    assert out == "hop.tensor([0., 0.]) " * 3 + "hop.tensor([0., 0.])\n"


@pytest.mark.parametrize("sig, column, token", [
    ("void façade(int64_t n)", 8, "ç"),
    ("void 名前(int64_t n)", 6, "名"),
    ("void f(int64_t ñ)", 16, "ñ"),
])
def test_a_non_ascii_name_is_an_error_with_a_message_naming_it(sig, column, token):
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64)(lambda n: None)
    with pytest.raises(hop.InvalidError) as e:
        hop.foreign(sig, fn)
    msg = str(e.value)
    assert msg.startswith(f"foreign signature: column {column}") and \
        f"'{token}' (names and types are ASCII C identifiers)" in msg, msg


def test_a_negative_size_from_the_data_is_an_invalid_error_compiled_as_eager():
    f = lambda n: hop.zeros(n.item())  # noqa: E731
    n = hop.tensor(-3)
    with pytest.raises(hop.InvalidError, match=r"^zeros: invalid size -3 in shape \[-3\]$"):
        f(n)
    with pytest.raises(hop.InvalidError, match=r"^zeros: invalid size -3 in shape \[-3\]$"):
        hop.compile(f)(n)  # was a plain hop.Error


@pytest.mark.parametrize("sig, column, shown", [
    ("void f(int64_t n)\0junk", 18, r"'\x00'"),  # was ValueError: embedded null character
    ("void f\udcff(int64_t n)", 7, r"'\udcff'"),  # was UnicodeEncodeError
])
def test_a_nul_or_a_lone_surrogate_in_a_foreign_signature_is_an_error_naming_its_column(
        sig, column, shown):
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64)(lambda n: None)
    with pytest.raises(hop.InvalidError) as e:
        hop.foreign(sig, fn)
    assert str(e.value) == f"foreign signature: column {column}: {shown} is not a character " \
        "of a C prototype (names and types are ASCII C identifiers)"


def test_a_library_path_with_a_nul_character_is_a_not_found_error_naming_it():
    for path in ("/tmp/x\0y.so", b"/tmp/x\0y.so"):  # was ValueError: embedded null byte
        with pytest.raises(hop.NotFoundError) as e:
            hop.load_library(path)
        assert str(e.value) == f"load_library: cannot load {path!r}: the path has a NUL " \
                               "character"
