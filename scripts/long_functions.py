#!/usr/bin/env python3
"""List the functions longer than a limit (120 lines) outside tests/.

The rule (issue 27, docs/ARCHITECTURE.md): no function is longer than 120
lines, except the VM's interpreter (hop__exec_at, runtime/vm.c: one switch
with a comment per opcode) and EXPLAIN's per-opcode switches (comment_text
and p4_text, runtime/explain.c), named in EXEMPT below.

How a function is counted: its lines from the one holding its name to its
closing brace (C) or its last statement (Python), blank lines and comments
inside included.  C: a definition is a line at column 0 that opens a
parameter list, whose body's `{` and `}` stand alone at column 0 (the
repo's clang-format PEP 7 layout); functions written inside macros (kernel
templates such as GATHER) are not seen.  Python: every def, nested ones
too, from the ast.

Usage: scripts/long_functions.py [--limit N] [ROOT]; exits 1 when a
function other than the exempt ones is over the limit.
"""
import argparse
import ast
import os
import re
import subprocess
import sys

EXEMPT = {
    ("runtime/vm.c", "hop__exec_at"),
    ("runtime/explain.c", "comment_text"),
    ("runtime/explain.c", "p4_text"),
}

C_NAME = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*)\(")


def c_functions(path, text):
    lines = text.split("\n")
    name, start, body = None, None, False
    for i, line in enumerate(lines):
        if name is None:
            m = C_NAME.match(line)
            if m:
                name, start, body = m.group(1), i, False
            continue
        if not line or line[0] in " \t":
            continue  # the parameter list goes on, or the body does
        if not body and line == "{":
            body = True
        elif body and line == "}":
            yield name, start + 1, i - start + 1
            name = None
        elif not body:
            name = None  # a prototype or a macro's use, not a definition
            m = C_NAME.match(line)
            if m:
                name, start = m.group(1), i


def py_functions(path, text):
    try:
        tree = ast.parse(text, path)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.py"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.split()
    over, exempt = [], []
    for f in files:
        if f.startswith("tests/"):
            continue
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        fns = py_functions(f, text) if f.endswith(".py") else c_functions(f, text)
        for name, line, n in fns:
            if n > a.limit:
                (exempt if (f, name) in EXEMPT else over).append((n, f, line, name))
    for n, f, line, name in sorted(exempt, reverse=True):
        print(f"exempt  {n:4d}  {f}:{line}  {name}")
    for n, f, line, name in sorted(over, reverse=True):
        print(f"over    {n:4d}  {f}:{line}  {name}")
    print(f"{len(over)} function(s) over {a.limit} lines outside tests/ "
          f"({len(exempt)} exempt)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
