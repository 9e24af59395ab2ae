"""A fuzzer of the saved format (docs/SAVED_FORMAT.md): hostile files never
crash or hang hop, nor raise anything but a hop.Error (issue #25).

Seeds (each traced static and dynamic): one program per built-in HOP (wrap,
cond, map, invoke_subgraph, while_loop, fori_loop, scan, associative_scan,
switch, and the vjp, jvp and vmap calls that hop.grad, hop.jvp and hop.vmap
record inside a trace), the two example HOPs of examples/ loaded from their C
libraries (repeat and fold: two groups, lifted values in a list of their
own), programs that nest them (HOPs in bodies, closures two bodies out, the
gradient of a loop, vmap of a cond, a C HOP in a map), and a saved tensor.

Mutations of a seed's payload, each written back into a file whose header
length and checksum are right, so that it reaches the parser:

  truncate  the payload cut anywhere
  flip      1 to 4 bits flipped
  limit     a field (a varint or a byte where one ends) set to a value at a
            limit: 0, 1, 0x7f, 0x80, 0xff, 2^31, 2^32, 2^63 - 1, 2^64 - 1, and
            zigzag -1, INT64_MIN, INT64_MAX
  splice    the start of one seed's payload and the end of another's
  json      a field of the hop.python section set to a hostile value (any
            JSON type, 2^70, a structure nested thousands deep), the whole
            section replaced by deep JSON, or a section name that is not UTF-8
  raw       bytes flipped with the checksum left as it was (must be refused)

A mutant is run by `run_mutant`: hop.load's reader, then its printers (code,
table, DOT), then a call with arguments shaped as the loaded program says
(the seed's tensors).  It must give a result or raise a hop.Error subclass; a
MemoryError (hop refuses a tensor too large to allocate, docs/RELIABILITY.md)
and a program that is still running when its time is up but stops when
interrupted (a loop the file asks for 2^40 trips of: slow, not hung) are
results too.  Anything else is a failure: another exception, a crash, or a
hang (a child that does not stop when interrupted).

Mutants run in batches in a child process (`python fuzz_saved.py child`)
with a memory limit and a time limit per mutant; when a child dies or hangs,
the mutant it was at runs alone (its outcome) and the rest of the batch in a
new child.  `campaign` does it all; tests/python/test_saved_fuzz.py runs
thousands of mutants in CI and scripts/fuzz.py --category saved runs long
campaigns.
"""

import json
import os
import pickle
import random
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER, TRAILER = 24, 4
MUTATIONS = ("truncate", "flip", "limit", "splice", "json", "raw")
# How often each is drawn: most go into the program itself (the JSON and the
# checksum need few to be covered).
WEIGHTS = (15, 25, 30, 12, 15, 3)

# A mutant's budget in the child (seconds): past it the run is interrupted.
MUTANT_SECONDS = 2.0
# The child's address-space limit (bytes; not under ASan, which maps far
# more than it uses).
CHILD_MEMORY = 4 << 30


# --------------------------------------------------------------- the format

def unwrap(data):
    """The payload of a saved file (its header and checksum stripped)."""
    return bytes(data[HEADER:len(data) - TRAILER])


def wrap(payload, template):
    """A file of template's header (magic, version) around payload, with
    the payload length and the checksum made right."""
    head = bytearray(template[:HEADER])
    head[16:24] = struct.pack("<Q", len(payload))
    body = bytes(head) + payload
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def uvarint(v):
    """LEB128 of an unsigned int < 2^64."""
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zigzag(v):
    return uvarint((v << 1) ^ (v >> 63) if v < 0 else v << 1)


def read_uvarint(buf, at):
    """(value, end) of the varint at buf[at:], or (None, at) if it runs off."""
    v, shift, i = 0, 0, at
    while i < len(buf) and shift < 70:
        b = buf[i]
        v |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return v, i
        shift += 7
    return None, at


def sections(payload):
    """(offset of the section count, [(name bytes, data bytes)]) of the
    Python package's sections at the end of payload: found by the first
    section's name, hop.kind, which the package always writes first."""
    at = payload.rfind(b"\x08hop.kind")
    while at > 0:
        count, start = read_uvarint(payload, at - 1)
        if count is not None and start == at:
            out, i = [], at
            for _ in range(count):
                n, i = read_uvarint(payload, i)
                if n is None:
                    break
                name = payload[i:i + n]
                i += n
                m, i = read_uvarint(payload, i)
                if m is None:
                    break
                out.append((name, payload[i:i + m]))
                i += m
            if len(out) == count and i == len(payload):
                return at - 1, out
        at = payload.rfind(b"\x08hop.kind", 0, at)
    raise ValueError("no sections found")


def with_sections(payload, at, secs):
    out = bytearray(payload[:at]) + uvarint(len(secs))
    for name, data in secs:
        out += uvarint(len(name)) + name + uvarint(len(data)) + data
    return bytes(out)


def patch_call(payload, target, lead, value):
    """payload with lead argument `lead` (0-based, an INT or a BOOL) of the
    first call_hop named after its target set to value (an int): for tests
    that make one field hostile."""
    name = bytes([len(target)]) + target.encode()
    at = payload.find(name + b"\x00" + name)
    if at < 0:
        raise ValueError(f"no call of {target}")
    i = at + 2 * len(name) + 1
    _, i = read_uvarint(payload, i)  # the argument count
    for _ in range(lead):
        kind = payload[i]
        i += 1
        if kind == 4:  # HOP_ARG_BOOL: one byte
            i += 1
        else:
            _, i = read_uvarint(payload, i)
    kind = payload[i]
    _, end = read_uvarint(payload, i + 1)
    enc = bytes([value]) if kind == 4 else zigzag(value)
    return payload[:i + 1] + enc + payload[end:]


# ----------------------------------------------------------------- seeds

def _libs():
    """The example libraries of the build tree (HOP_PYTHONPATH's parent)."""
    path = os.environ.get("HOP_PYTHONPATH") or os.environ.get("PYTHONPATH", "").split(":")[0]
    d = os.path.join(os.path.dirname(os.path.abspath(path)), "examples")
    return [os.path.join(d, f"libhop_{n}.so") for n in ("repeat", "fold")]


def load_libraries():
    import hop
    for lib in _libs():
        hop.load_library(lib)


def seed_programs():
    """[(name, saved bytes, args)] covering every built-in HOP and the two
    example HOPs of examples/ (their libraries are loaded)."""
    import hop
    load_libraries()
    x = hop.randn(4, 3, seed=1)
    w = hop.randn(3, seed=2)
    v = hop.randn(5, seed=3)
    n = hop.tensor(3)

    def region(t):
        return (t * w).tanh()
    region = hop.nested_compile_region(region)

    programs = {
        "wrap": (lambda x: hop.wrap(lambda: (x * w).sin()), (x,)),
        "cond": (lambda x: hop.cond(x.sum() > 0, lambda: x * w, lambda: x - 1.0), (x,)),
        "map": (lambda x: hop.map(lambda r: (r * w).relu(), x), (x,)),
        "invoke_subgraph": (lambda x: region(x) + region(x * 2.0), (x,)),
        "while_loop": (lambda x: hop.while_loop(lambda i, a: i < 5,
                                                lambda i, a: (i + 1, a * 0.5),
                                                (hop.tensor(0), x))[1], (x,)),
        "fori_loop": (lambda x, n: hop.fori_loop(0, n, lambda i, a: a + w, x), (x, n)),
        "scan": (lambda x: hop.scan(lambda c, r: (c + r, c * r), hop.zeros(3), x), (x,)),
        "associative_scan": (lambda v: hop.associative_scan(lambda a, b: a + b, v), (v,)),
        "associative_scan_general": (
            lambda x: hop.associative_scan(lambda a, b: a * b + 1.0, x, dim=1), (x,)),
        "switch": (lambda x, n: hop.switch(n, [lambda: x + 1.0, lambda: x * w,
                                               lambda: x.exp()]), (x, n)),
        "vjp": (lambda x: hop.grad(lambda y: (y * w).sin().sum())(x), (x,)),
        "jvp": (lambda x: hop.jvp(lambda y: (y * w).cos(), (x,), (hop.ones(4, 3),))[1], (x,)),
        "vmap": (lambda x: hop.vmap(lambda r: (r * w).sum())(x), (x,)),
        "repeat": (lambda x: hop.ops.repeat(3, lambda a: (a * w).tanh(), x), (x,)),
        "fold": (lambda x: hop.ops.fold(lambda c, r: c + r * w, hop.zeros(3), x), (x,)),
        # nested: HOPs in bodies, closures two bodies out, transformations of loops
        "nested": (lambda x: hop.map(lambda r: hop.cond(
            r.sum() > 0, lambda: hop.fori_loop(0, 3, lambda i, a: a * w + r, r),
            lambda: hop.switch(1, [lambda: r - 1.0, lambda: r * 2.0])), x), (x,)),
        "nested_loops": (lambda x: hop.scan(
            lambda c, r: (hop.while_loop(lambda k, a: k < 2, lambda k, a: (k + 1, a + r * c.sum()),
                                         (hop.tensor(0), c))[1], c * 2.0),
            hop.ones(3), x), (x,)),
        "grad_of_loop": (lambda x: hop.grad(lambda y: hop.fori_loop(
            0, 3, lambda i, a: (a * w).sin(), y).sum())(x), (x,)),
        "vmap_of_cond": (lambda x: hop.vmap(lambda r: hop.cond(r.sum() > 0, lambda: r * w,
                                                               lambda: r - w))(x), (x,)),
        "repeat_in_map": (lambda x: hop.map(lambda r: hop.ops.repeat(
            2, lambda a: hop.ops.fold(lambda c, q: c + q * a, hop.zeros(3), x), r), x), (x,)),
    }
    out = []
    for name, (fn, args) in programs.items():
        for dynamic in (False, True):
            gm = hop.trace(fn, *args, dynamic=dynamic)
            out.append((f"{name}{'_dyn' if dynamic else ''}", _dumps(gm), args))
    out.append(("tensor", _dumps(hop.tensor([[1.5, -2.0], [0.25, 4.0]])), ()))
    return out


def _dumps(obj):
    from hop import _saved
    return _saved.dumps(obj)


def _loads(data):
    """hop.load from bytes (what pickle.loads of a saved object runs)."""
    from hop import _saved
    return _saved.loads(data)


# ------------------------------------------------------------- mutations

LIMIT_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)
LIMIT_VARINTS = [uvarint(v) for v in (0, 1, 63, 64, 127, 128, 255, 1 << 31, 1 << 32,
                                      (1 << 63) - 1, (1 << 64) - 1)] + \
    [zigzag(v) for v in (-1, -(1 << 63), (1 << 63) - 1)]

HOSTILE_JSON = [None, True, False, 0, -1, 1, 2 ** 70, -2 ** 70, 1.5, float("inf"), "x", "*",
                "float", [], {}, [None], [True] * 3, ["*"] * 3, {"t": []}, {"t": ["*", "*"]},
                {"l": ["*"]}, {"d": [["k", "*"]]}, {"d": [[[1], "*"]]}, {"n": [True, "*"]},
                {"a": [False, {"t": ["*"]}]}, {"q": 1}]


def _deep(depth, rng):
    opener, closer = rng.choice((("[", "]"), ('{"t": [', "]}"), ('{"a": [true, ', "]}")))
    return (opener * depth + '"*"' + closer * depth).encode()


def _program_end(payload):
    """Where the program ends and the Python package's sections begin."""
    try:
        return sections(payload)[0]
    except ValueError:
        return len(payload)


def _offset(payload, rng):
    """An offset, in the program (before the sections) most of the time."""
    end = _program_end(payload)
    return rng.randrange(end if end and rng.random() < 0.85 else len(payload))


def _boundaries(payload, rng):
    """Offsets where a field may start (after a byte that ends a varint), in
    the program most of the time."""
    end = _program_end(payload) if rng.random() < 0.85 else len(payload)
    return [i + 1 for i, b in enumerate(payload[:max(end, 2) - 1]) if b < 0x80] or [0]


def mutate(seeds, rng):
    """One mutant: (kind, seed name, description, bytes)."""
    kind = rng.choices(MUTATIONS, WEIGHTS)[0]
    name, data, _ = rng.choice(seeds)
    p = unwrap(data)
    if kind == "truncate":
        k = _offset(p, rng)
        return kind, name, f"{name}[:{k}]", wrap(p[:k], data)
    if kind == "flip":
        b = bytearray(p)
        where = []
        for _ in range(rng.randint(1, 4)):
            i = _offset(p, rng)
            b[i] ^= 1 << rng.randrange(8)
            where.append(i)
        return kind, name, f"{name} bits at {where}", wrap(bytes(b), data)
    if kind == "limit":
        i = rng.choice(_boundaries(p, rng))
        if rng.random() < 0.4:
            v = rng.choice(LIMIT_BYTES)
            return kind, name, f"{name}[{i}] = {v:#x}", \
                wrap(p[:i] + bytes([v]) + p[i + 1:], data)
        _, end = read_uvarint(p, i)
        enc = rng.choice(LIMIT_VARINTS)
        return kind, name, f"{name} varint at {i} = {enc.hex()}", \
            wrap(p[:i] + enc + p[max(end, i + 1):], data)
    if kind == "splice":
        other, odata, _ = rng.choice(seeds)
        q = unwrap(odata)
        i, j = rng.choice(_boundaries(p, rng)), rng.choice(_boundaries(q, rng))
        return kind, name, f"{name}[:{i}] + {other}[{j}:]", wrap(p[:i] + q[j:], data)
    if kind == "json":
        at, secs = sections(p)
        secs = [list(s) for s in secs]
        py = next(s for s in secs if s[0] == b"hop.python")
        what = rng.random()
        if what < 0.15:
            depth = rng.choice((200, 1000, 5000, 100000))
            py[1] = _deep(depth, rng)
            desc = f"hop.python nested {depth} deep"
        elif what < 0.25:
            secs[rng.randrange(len(secs))][0] = b"hop.\xff\xfe" + bytes([rng.randrange(256)])
            desc = "a section name that is not UTF-8"
        else:
            info = json.loads(py[1])
            key = rng.choice(sorted(info))
            value = rng.choice(HOSTILE_JSON)
            if rng.random() < 0.3 and isinstance(info[key], list) and info[key]:
                info[key][rng.randrange(len(info[key]))] = value
                desc = f"hop.python {key}[?] = {value!r}"
            elif rng.random() < 0.2:
                value = json.loads(_deep(rng.choice((50, 120)), rng))
                info[key] = value
                desc = f"hop.python {key} nested deep"
            else:
                info[key] = value
                desc = f"hop.python {key} = {value!r}"
            py[1] = json.dumps(info).encode()
        return kind, name, f"{name}: {desc}", \
            wrap(with_sections(p, at, [tuple(s) for s in secs]), data)
    # raw: damage with the checksum left alone
    b = bytearray(data)
    i = rng.randrange(len(b))
    b[i] ^= 1 << rng.randrange(8)
    return kind, name, f"{name} byte {i} flipped, checksum not fixed", bytes(b)


# ------------------------------------------------------------ the child

class Slow(BaseException):
    """Raised by the alarm in the child: the mutant ran out of its time."""


def _on_alarm(signum, frame):
    raise Slow()


def _args_for(gm, seed_args):
    """Arguments shaped as the loaded program's own structure: its constant
    arguments where it has them, the seed's tensors (cycled) elsewhere."""
    from hop._pytree import unflatten
    import hop
    runner = gm._call
    tensors = [a for a in seed_args if isinstance(a, hop.Tensor)] or [hop.ones(4, 3)]
    leaves, k = [], 0
    for s in runner.statics:
        if s is None:
            leaves.append(tensors[k % len(tensors)])
            k += 1
        else:
            leaves.append(s)
    return unflatten(leaves, runner.spec)


def _force(out):
    import hop
    from hop._pytree import flatten
    leaves, _ = flatten(out)
    for leaf in leaves:
        if isinstance(leaf, hop.Tensor):
            leaf.numpy()


def run_mutant(data, seed_args):
    """'ok', 'error' (a hop.Error), 'memory', 'slow'; raises on anything else
    (the failure)."""
    import hop
    signal.setitimer(signal.ITIMER_REAL, MUTANT_SECONDS)
    try:
        obj = _loads(data)
        if isinstance(obj, hop.Tensor):
            obj.numpy()
            return "ok"
        obj.code, obj.tabular(), obj.to_dot()
        _force(obj(*_args_for(obj, seed_args)))
        return "ok"
    except hop.Error:
        return "error"
    except MemoryError:
        return "memory"
    except Slow:
        return "slow"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _child(batch_path):
    """Runs the mutants of a batch file; prints `start i` before each and
    `done i outcome` after (flushed), so the parent knows where it died."""
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    signal.signal(signal.SIGALRM, _on_alarm)
    with open(batch_path, "rb") as f:
        seed_args, mutants = pickle.load(f)
    load_libraries()
    out = sys.stdout
    for i, (seed, data) in enumerate(mutants):
        out.write(f"start {i}\n")
        out.flush()
        try:
            try:
                outcome = run_mutant(data, seed_args[seed])
            except Slow:  # the alarm, just as the mutant ended
                outcome = "slow"
        except Slow:
            outcome = "slow"
        except BaseException as e:  # the failure: reported, the batch goes on
            outcome = "other " + json.dumps(f"{type(e).__name__}: {str(e)[:300]}")
        out.write(f"done {i} {outcome}\n")
        out.flush()


# ------------------------------------------------------------ the parent

def _run_batch(seed_args, mutants, timeout, env):
    """Runs mutants [(seed, bytes)] in one child: (outcomes by index, how it
    ended: 'ok', 'crash <code>' or 'hang', the index it was at)."""
    with tempfile.NamedTemporaryFile(suffix=".batch", delete=False) as f:
        pickle.dump((seed_args, mutants), f)
        path = f.name
    try:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "child", path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        try:
            stdout, stderr = p.communicate(timeout=timeout)
            ended = "ok" if p.returncode == 0 else f"crash {p.returncode}"
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            ended = "hang"
    finally:
        os.unlink(path)
    outcomes, at = {}, None
    for line in stdout.splitlines():
        words = line.split(" ", 2)
        if words[0] == "start":
            at = int(words[1])
        elif words[0] == "done":
            outcomes[int(words[1])] = words[2]
            at = None
    return outcomes, ended, at, stderr[-2000:]


def _child_env():
    env = dict(os.environ)
    path = os.environ.get("HOP_PYTHONPATH")
    if path:
        env["PYTHONPATH"] = os.path.abspath(path) + os.pathsep + env.get("PYTHONPATH", "")
        env["HOP_PYTHONPATH"] = os.path.abspath(path)
    if "asan" in env.get("LD_PRELOAD", ""):
        # A huge allocation is refused (MemoryError), not a fatal report.
        opts = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + \
            "allocator_may_return_null=1:max_allocation_size_mb=2048"
    return env


def campaign(n, rng_seed, batch=400, seeds=None, on_failure=None, progress=None):
    """Runs n mutants (from random.Random(rng_seed)) in batches; returns
    {'counts': {outcome: count}, 'failures': [(kind, seed name, description,
    outcome, bytes)]}.  on_failure(failure) is called for each as it is
    found."""
    if seeds is None:
        seeds = seed_programs()
    rng = random.Random(rng_seed)
    seed_index = {name: i for i, (name, _, _) in enumerate(seeds)}
    seed_args = [args for _, _, args in seeds]
    env = _child_env()
    counts, failures = {}, []
    done = 0
    while done < n:
        k = min(batch, n - done)
        made = [mutate(seeds, rng) for _ in range(k)]
        mutants = [(seed_index[name], data) for _, name, _, data in made]
        outcomes = _run_all(seed_args, mutants, env)
        for i, (kind, name, desc, data) in enumerate(made):
            outcome = outcomes[i]
            key = outcome.split(" ")[0]
            counts[key] = counts.get(key, 0) + 1
            if key not in ("ok", "error", "memory", "slow"):
                failure = (kind, name, desc, outcome, data)
                failures.append(failure)
                if on_failure:
                    on_failure(failure)
        done += k
        if progress:
            progress(done, counts)
    return {"counts": counts, "failures": failures}


def _run_all(seed_args, mutants, env):
    """Every mutant's outcome: a batch in one child; when the child dies or
    hangs, the mutant it was at runs alone (its own outcome: crash or hang
    if it does that alone too) and the ones after it run as a new batch."""
    outcomes = {}
    pending = list(range(len(mutants)))
    while pending:
        batch = [mutants[i] for i in pending]
        got, ended, at, _ = _run_batch(seed_args, batch, 30 + len(batch) * MUTANT_SECONDS, env)
        for j, outcome in got.items():
            outcomes[pending[j]] = outcome
        if ended == "ok":
            break
        if at is None:  # died between mutants: blame the next one
            at = min((j for j in range(len(batch)) if j not in got), default=None)
            if at is None:
                break
        alone, e, _, err = _run_batch(seed_args, [batch[at]], 30 + 3 * MUTANT_SECONDS, env)
        outcomes[pending[at]] = alone.get(0, "lost") if e == "ok" else \
            e + " " + json.dumps(err[-600:])
        pending = [pending[j] for j in range(at + 1, len(batch)) if j not in got]
    for i in range(len(mutants)):
        outcomes.setdefault(i, "lost")
    return outcomes


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "child":
    sys.path.insert(0, HERE)
    _child(sys.argv[2])
