"""bench/run.py's output: its table (plain or Markdown, with the rows' notes)
and the machine it ran on (for --json).
"""

import os
import platform
import re
import subprocess

import numpy as np

import hop


def fmt(v, unit):
    if v is None:
        return "—"
    m = v["median"]
    if unit in ("ns", "ns/node", "ns/op", "ns/row"):
        suffix = unit[2:]
        if m >= 1e6:
            return f"{m / 1e6:.2f} ms{suffix}"
        if m >= 1e4:
            return f"{m / 1e3:.1f} us{suffix}"
        if m >= 1e3:
            return f"{m / 1e3:.2f} us{suffix}"
        return f"{m:.1f} ns{suffix}" if m < 100 else f"{m:.0f} ns{suffix}"
    if unit == "x":
        return f"{m:.2f}x"
    if unit == "bytes":
        return f"{m:.0f} B"
    return f"{m:.1f} {unit}"


def machine(build_dir, c_output, torch):
    """The machine, the versions and the build a run measured (--json)."""
    info = {"python": platform.python_version(), "hop": hop.__version__,
            "numpy": np.__version__, "torch": torch.__version__ if torch else None,
            "cores": os.cpu_count(), "load_average": os.getloadavg()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["ram_gib"] = round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    try:
        info["debian"] = open("/etc/debian_version").read().strip()
    except OSError:
        pass

    def cmd(*argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
        except OSError:
            return None
    gcc = cmd("gcc", "--version")
    info["gcc"] = gcc.splitlines()[0] if gcc else None
    for pkg in ("libopenblas0-pthread", "libopenblas0", "libsleef3"):
        v = cmd("dpkg-query", "-W", "-f=${Version}", pkg)
        if v:
            info[pkg] = v
    m = re.search(r"math backend:? (\S+)", "".join(c_output.values()))
    info["hop_math_backend"] = m.group(1).rstrip(",") if m else None
    info["hop_build"] = build_dir
    info["c_bench_output"] = dict(c_output)
    return info


def print_table(results, markdown=False):
    head = ["row", "hop", "C", "NumPy", "PyTorch", "hop/C", "ratio(s)", "target", "met?"]
    lines = []
    for r in results:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "NO")
        hc = r.get("hop_c")
        lines.append([r["title"], fmt(r["hop"], r["unit"]), fmt(r.get("c"), r["unit"]),
                      fmt(r["numpy"], r["unit"]), fmt(r["torch"], r["unit"]),
                      "—" if hc is None else f"{hc:.2f}x", r["ratios"] or "—", r["target"],
                      met])
    if markdown:
        for line in [head, ["---"] * len(head)] + lines:
            print("| " + " | ".join(c.replace("|", "/") for c in line) + " |")
        print()
        for r in results:
            if r["notes"]:
                print(f"- `{r['id']}`: {r['notes']}")
        return
    widths = [max(len(x[i]) for x in lines + [head]) for i in range(len(head))]
    sep = "  "
    print(sep.join(h.ljust(w) for h, w in zip(head, widths)))
    print(sep.join("-" * w for w in widths))
    for line in lines:
        print(sep.join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
    print()
    for r in results:
        if r["notes"]:
            print(f"{r['id']}: {r['notes']}")
