#!/usr/bin/env python3
"""Augur against Storm, sound against sound, each run in its own process.

Usage (from the repository root, with ../shared/qvbs beside it):

    cargo build --release            # Augur must be a release build
    pip install stormpy              # optional, never a test dependency
    python3 benches/compare_storm.py [--instances crowds.6-10,walk2d] [--runs 5]
                                     [--out benches/storm-comparison.md] [--augur PATH]

Instances: by default the QVBS instances of ../shared/qvbs with at least 10^5 states
(crowds.6-10, crowds.6-15, egl.5-8, nand.40-4), walk2d (models/walk2d.pm, N=700), and, reported
without a goal, herman.15 and oscillators.8-8-0.1-1. `--instances all` takes every QVBS instance
(except those Storm does not finish) and walk2d.

What is measured, per tool and instance, `--runs` times (default 5), each run a fresh process:
- Storm: stormpy's sparse engine in sound mode (`stormpy.environments.sound()`, 1e-6 relative),
  the model built for the instance's properties (as Storm's command line builds it), every
  property checked for the initial states (`only_initial_states=True`, as Storm's command line
  does). build = parse + build seconds, check = the sum of the `model_checking` calls.
- Augur: `augur check MODEL PROPS --json` (default method, sound, 1e-6 relative). build =
  `model.build_seconds`, check = the sum of the results' `seconds`.
Times are the median of the runs. Memory is the maximum resident set size over the runs, from
the kernel's accounting of each child process (`wait4`). Storm's figure is its worker's peak
minus the bare Python interpreter's (measured in the worker before `import stormpy`): Storm's
libraries count, as they do for Storm's command line; the table's notes give how much of
Storm's figure is the libraries alone.

Correctness: every Augur answer must come with bounds, and its bounds must contain the
reference value (exact rational from QVBS when known, else the recorded approximation; for
walk2d the reference interval in models/README.md, which the bounds must intersect). Storm's
answers are checked against the same reference (within its own bounds when stormpy reports
them). A violation is printed and marked in the table, and the exit code is 1.

Without stormpy, Storm's columns are empty (no recorded figures are mixed into a run).
The table, with the date, the machine and its load, goes to `--out` (README links it).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QVBS = os.path.join(ROOT, "..", "shared", "qvbs")
DEFAULT = ["crowds.6-10", "crowds.6-15", "egl.5-8", "nand.40-4", "walk2d", "herman.15",
           "oscillators.8-8-0.1-1"]
# Goals of issue 12: check time ratio Augur/Storm at most this, and peak memory ratio.
GOALS = {
    "crowds.6-10": (0.5, 1.0),
    "crowds.6-15": (0.5, 1.0),
    "egl.5-8": (0.5, 1.0),
    "nand.40-4": (0.5, 1.0),
    "walk2d": (0.2, 2.0),
}
# Build time ratio Augur/Storm at most this (on the instances with goals).
BUILD_GOAL = 0.5
# walk2d (N=700): the value of P=? [F "exit_east"] from the centre lies in this interval,
# computed by Augur's interval iteration with --method topological --epsilon 1e-11 (models/README.md
# shows the run, checked by the release doc test, and the independent checks on smaller N).
WALK2D_REF = (Fraction("0.9987176836948893"), Fraction("0.998717683709565"))


def walk2d_instance():
    return {
        "id": "walk2d",
        "dir": os.path.join(ROOT, "models"),
        "file": "walk2d.pm",
        "props": "walk2d.props",
        "constants": {},
        "refs": {"exit_east": {"interval": [str(WALK2D_REF[0]), str(WALK2D_REF[1])]}},
        "states_ref": 491401,
    }


def load_instances():
    out = {}
    path = os.path.join(QVBS, "instances.json")
    if os.path.isfile(path):
        for inst in json.load(open(path)):
            inst = dict(inst)
            inst["dir"] = os.path.join(QVBS, inst["model"])
            out[inst["id"]] = inst
    out["walk2d"] = walk2d_instance()
    return out


# ---------------------------------------------------------------- Storm worker (own process)

def storm_worker(spec):
    """Runs in a child process: builds and checks one instance with stormpy, prints JSON."""
    import resource

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import stormpy

    libs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = spec["dir"]
    t0 = time.perf_counter()
    prog = stormpy.parse_prism_program(os.path.join(d, spec["file"]))
    em = prog.expression_manager
    defs = {}
    for c in prog.constants:
        if c.name in spec["constants"]:
            v = spec["constants"][c.name]
            defs[c.expression_variable] = (
                em.integer(v) if isinstance(v, int)
                else em.rational(stormpy.Rational(str(v))))
    if defs:
        prog = prog.define_undefined_constants(defs)
    props = stormpy.parse_properties(open(os.path.join(d, spec["props"])).read(), prog)
    model = stormpy.build_model(prog, props)
    t1 = time.perf_counter()
    env = stormpy.environments.sound()
    results = []
    check = 0.0
    for p in props:
        c0 = time.perf_counter()
        r = stormpy.model_checking(model, p, only_initial_states=True, environment=env)
        check += time.perf_counter() - c0
        text = str(p.get_raw_formula())
        inits = list(model.initial_states)
        vals = []
        for s in inits:
            v = r.get_value(s)
            lo = r.get_lower_bound(s) if r.has_lower_bounds() else None
            hi = r.get_upper_bound(s) if r.has_upper_bounds() else None
            vals.append((float(v), lo, hi))
        # A filter(max, ...) over several initial states (herman) reports the maximum.
        is_max = "Obtain the maximum" in str(p)
        best = max(vals, key=lambda t: t[0]) if is_max else vals[0]
        results.append({"name": p.get_name(), "value": best[0],
                        "lo": best[1], "hi": best[2], "formula": text})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({
        "build": t1 - t0, "check": check, "states": model.nr_states,
        "transitions": model.nr_transitions, "results": results,
        "peak_kb": peak, "base_kb": base, "libs_kb": libs,
    }))


def run_child(args):
    """Runs a child process; returns (stdout, stderr, returncode, wall seconds, max RSS KB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    # communicate() has reaped the child; its rusage is in RUSAGE_CHILDREN only cumulatively,
    # so Storm's workers report their own peak, and Augur is run under wait4 below.
    return out, err, p.returncode, wall


def run_augur(augur, inst):
    d = inst["dir"]
    args = [augur, "check", os.path.join(d, inst["file"]), os.path.join(d, inst["props"]),
            "--json"]
    consts = ",".join(f"{k}={v}" for k, v in inst["constants"].items())
    if consts:
        args += ["--const", consts]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Read the pipes before reaping so a large output cannot block the child.
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if p.returncode not in (0,):
        return None, (err.strip().splitlines() or ["failed"])[-1]
    j = json.loads(out)
    results = []
    for r in j["results"]:
        b = r.get("bounds")
        results.append({"name": r.get("name"), "value": r.get("value"),
                        "lo": b[0] if b else None, "hi": b[1] if b else None,
                        "method": r.get("method")})
    return {
        "build": j["model"].get("build_seconds", float("nan")),
        "check": sum(r.get("seconds") or 0.0 for r in j["results"]),
        "wall": wall, "states": j["model"].get("states"), "results": results,
        "peak_kb": usage.ru_maxrss,
    }, None


def run_storm(inst):
    spec = {k: inst[k] for k in ("dir", "file", "props", "constants")}
    out, err, rc, wall = run_child([sys.executable, os.path.abspath(__file__), "--storm-worker",
                                    json.dumps(spec)])
    if rc != 0:
        return None, (err.strip().splitlines() or ["failed"])[-1]
    j = json.loads(out.strip().splitlines()[-1])
    j["wall"] = wall
    return j, None


def have_stormpy():
    r = subprocess.run([sys.executable, "-c", "import stormpy"], capture_output=True)
    return r.returncode == 0


# ---------------------------------------------------------------- correctness

def as_fraction(x):
    if x is None:
        return None
    if isinstance(x, str):
        if x in ("∞", "inf", "Infinity"):
            return "inf"
        try:
            return Fraction(x)
        except ValueError:
            return None
    if isinstance(x, bool):
        return None
    if x == float("inf"):
        return "inf"
    return Fraction(x)


def reference(inst, name):
    """(lo, hi) reference interval as Fractions (a point when exact), 'inf', or None."""
    ref = inst.get("refs", {}).get(name)
    if ref is None:
        return None
    if "interval" in ref:
        return tuple(Fraction(x) for x in ref["interval"])
    e = as_fraction(ref.get("exact"))
    if e == "inf":
        return "inf"
    if e is not None:
        return (e, e)
    a = as_fraction(ref.get("approx"))
    if a == "inf":
        return "inf"
    if a is None:
        return None
    # A float approximation (Storm's, 1e-6 relative): allow its own tolerance.
    tol = abs(a) * Fraction(2, 10**6)
    return (a - tol, a + tol)


def judge(inst, res, need_bounds):
    """Problems with one tool's answers (list of strings, empty when all is well)."""
    problems = []
    for r in res["results"]:
        ref = reference(inst, r["name"])
        v = r["value"]
        if ref is None or v is None or isinstance(v, bool):
            continue
        if ref == "inf":
            if v not in (float("inf"), "inf", "Infinity"):
                problems.append(f"{r['name']}: {v}, expected ∞")
            continue
        lo, hi = r.get("lo"), r.get("hi")
        if lo is None or hi is None:
            if need_bounds:
                problems.append(f"{r['name']}: no bounds")
            # Without bounds: the value must be within 1e-6 relative of the reference.
            mid = (ref[0] + ref[1]) / 2
            if abs(Fraction(v) - mid) > abs(mid) * Fraction(1, 10**6) + (ref[1] - ref[0]):
                problems.append(f"{r['name']}: {v} off the reference {float(mid)}")
            continue
        flo, fhi = Fraction(lo), Fraction(hi)
        if not (flo <= Fraction(v) <= fhi):
            problems.append(f"{r['name']}: value {v} outside its bounds [{lo}, {hi}]")
        # The bounds must meet the reference interval (contain the exact value when exact).
        if fhi < ref[0] or flo > ref[1]:
            problems.append(f"{r['name']}: bounds [{lo}, {hi}] miss the reference "
                            f"[{float(ref[0])!r}, {float(ref[1])!r}]")
    return problems


# ---------------------------------------------------------------- main

def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {mem}, {platform.system()} {platform.release()}"


def fmt_s(x):
    if x is None:
        return "–"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--storm-worker":
        storm_worker(json.loads(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--augur", default=os.path.join(ROOT, "target", "release", "augur"))
    ap.add_argument("--instances", help="comma-separated ids, or `all`")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "storm-comparison.md"))
    ap.add_argument("--no-storm", action="store_true", help="measure Augur only")
    a = ap.parse_args()
    if not os.path.isfile(a.augur):
        sys.exit(f"{a.augur} not found: run `cargo build --release` first")
    all_inst = load_instances()
    if a.instances == "all":
        ids = [i for i in all_inst if not i.startswith("haddad-monmege.100")]
    elif a.instances:
        ids = a.instances.split(",")
    else:
        ids = DEFAULT
    missing = [i for i in ids if i not in all_inst]
    if missing:
        sys.exit(f"unknown instances (or ../shared/qvbs missing): {', '.join(missing)}")
    storm = not a.no_storm and have_stormpy()
    if not a.no_storm and not storm:
        print("stormpy is not importable: Storm's columns stay empty (pip install stormpy)")
    load_before = os.getloadavg()
    started = datetime.datetime.now().astimezone()
    rows = []
    failed = False
    for iid in ids:
        inst = all_inst[iid]
        aug, sto, problems = [], [], []
        for k in range(a.runs):
            r, err = run_augur(a.augur, inst)
            if err:
                problems.append(f"augur failed: {err}")
                break
            aug.append(r)
            if storm:
                s, err = run_storm(inst)
                if err:
                    problems.append(f"storm failed: {err}")
                else:
                    sto.append(s)
        if aug:
            problems += [f"augur {p}" for p in judge(inst, aug[0], need_bounds=True)]
        if sto:
            problems += [f"storm {p}" for p in judge(inst, sto[0], need_bounds=False)]
        row = {"id": iid, "problems": problems, "load": os.getloadavg()[0]}
        if aug:
            row.update(states=aug[0]["states"],
                       a_build=statistics.median(r["build"] for r in aug),
                       a_check=statistics.median(r["check"] for r in aug),
                       a_mem=max(r["peak_kb"] for r in aug) / 1024,
                       methods=sorted({r["method"] for r in aug[0]["results"] if r["method"]}))
        if sto:
            row.update(s_build=statistics.median(r["build"] for r in sto),
                       s_check=statistics.median(r["check"] for r in sto),
                       s_mem=max(r["peak_kb"] - r["base_kb"] for r in sto) / 1024,
                       s_libs=max(r["libs_kb"] - r["base_kb"] for r in sto) / 1024)
        failed |= bool(problems)
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = os.getloadavg()
    lines = render(rows, a, storm, started, load_before, load_after)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\n(written to {os.path.relpath(a.out, ROOT)})")
    return 1 if failed else 0


def ratio(x, y):
    if x is None or y is None or y <= 0:
        return None
    return x / y


def render(rows, a, storm, started, load_before, load_after):
    L = []
    L.append("# Augur against Storm, sound against sound")
    L.append("")
    L.append(f"Measured {started.strftime('%Y-%m-%d %H:%M %Z')} by `benches/compare_storm.py` "
             f"(`--runs {a.runs}`) on {machine()}.")
    L.append(f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
             f"after: {', '.join(f'{x:.2f}' for x in load_after)} (the machine is shared).")
    L.append("")
    L.append("Storm: stormpy sparse engine, `stormpy.environments.sound()` (1e-6 relative), "
             "initial states only, its memory without the bare Python interpreter's (the libraries "
             "stormpy loads count, as for Storm's command line). Augur: release "
             "build, `augur check --json`, default method (sound, 1e-6 relative). Times: median "
             f"of {a.runs} runs, each in a fresh process; memory: maximum RSS over the runs. "
             "Goals (issue 12): check ≤ 0.5× Storm (walk2d ≤ 0.2×), memory ≤ Storm "
             "(walk2d ≤ 2×), build ≤ 0.5× Storm; herman.15 and oscillators.8-8 are reported without "
             "a goal. load: the 1-minute load average when the row finished.")
    L.append("")
    L.append("| instance | states | Augur build s | Storm build s | build ratio | Augur check s "
             "| Storm check s | check ratio | goal | Augur peak MB | Storm peak MB | memory ratio "
             "| goal | load | answers |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        cr = ratio(r.get("a_check"), r.get("s_check"))
        br = ratio(r.get("a_build"), r.get("s_build"))
        mr = ratio(r.get("a_mem"), r.get("s_mem"))
        goal = GOALS.get(r["id"])

        def mark(x, g):
            if x is None:
                return "–"
            if g is None:
                return f"{x:.2f}"
            return f"{x:.2f} {'✓' if x <= g else '✗'}"
        answers = "inside bounds" if not r["problems"] else "; ".join(r["problems"])
        L.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["id"], r.get("states", "–"), fmt_s(r.get("a_build")), fmt_s(r.get("s_build")),
            mark(br, BUILD_GOAL if goal else None),
            fmt_s(r.get("a_check")), fmt_s(r.get("s_check")),
            mark(cr, goal and goal[0]), f"≤ {goal[0]}" if goal else "–",
            f"{r['a_mem']:.0f}" if "a_mem" in r else "–",
            f"{r['s_mem']:.0f}" if "s_mem" in r else "–",
            mark(mr, goal and goal[1]), f"≤ {goal[1]}" if goal else "–",
            f"{r['load']:.1f}" if "load" in r else "–", answers))
    L.append("")
    L.append("Augur's methods (the solver path that answered each property):")
    L.append("")
    for r in rows:
        for m in r.get("methods", []):
            L.append(f"- {r['id']}: {m}")
    libs = [r["s_libs"] for r in rows if "s_libs" in r]
    if libs:
        L.append("")
        L.append(f"Of Storm's peak, loading its libraries (`import stormpy`) accounts for "
                 f"{min(libs):.0f}–{max(libs):.0f} MB.")
    if not storm:
        L.append("")
        L.append("stormpy was not available: Storm's columns are empty.")
    return L


if __name__ == "__main__":
    sys.exit(main())
