"""docs/DEFINING_A_HOP.md's snippets are tested: each C block is a verbatim
part of an example file (which CI builds, runs and tests), the shell block
builds the library in a scratch directory, and the Python block runs against
that library in a fresh interpreter."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "DEFINING_A_HOP.md")


def blocks(lang):
    text = open(DOC).read()
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def test_every_c_snippet_is_a_verbatim_part_of_an_example():
    sources = {name: open(os.path.join(ROOT, "examples", name)).read()
               for name in ("repeat.c", "fold.c", "repeat_hop.c")}
    snippets = blocks("c")
    assert len(snippets) >= 8
    for snippet in snippets:
        assert any(snippet in src for src in sources.values()), snippet


def test_the_shell_and_python_snippets_build_load_and_run_the_library(tmp_path):
    build_python = os.environ.get("HOP_PYTHONPATH")
    if not build_python:
        pytest.skip("HOP_PYTHONPATH is not set: the snippets run against the build tree")
    (sh,), (py,) = blocks("sh"), blocks("python")
    env = dict(os.environ, OUT=str(tmp_path),
               PYTHONPATH=os.path.abspath(build_python))
    # The compiler and linker are not ours: under the sanitizer pass they must
    # not inherit the preloaded ASan runtime (their own leaks would fail the
    # build); the interpreter that loads the library below keeps it.
    build_env = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    subprocess.run(["sh", "-c", sh], cwd=ROOT, env=build_env, check=True)
    lib = tmp_path / "libhop_repeat.so"
    assert lib.exists()
    program = f"LIBRARY = {str(lib)!r}\n" + py
    out = subprocess.run([sys.executable, "-c", program], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "repeat(3, repeat_body_0, (x,), (w,))" in out.stdout
