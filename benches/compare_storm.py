#!/usr/bin/env python3
"""Side-by-side build and check times of Storm (stormpy) and Augur on the QVBS instances.

Usage (from the repository root, with ../shared/qvbs beside it):

    cargo build --release            # Augur must be a release build
    pip install stormpy              # never a test dependency; optional here
    python3 benches/compare_storm.py [--instances crowds.6-10,egl.5-8] [--augur target/release/augur]

For every instance it prints Storm's build and check seconds (sparse engine, default
environment, measured now if stormpy is importable; otherwise the figures recorded in
../shared/qvbs/README.md, sound mode), Augur's (`augur check --json`: `model.build_seconds` and the sum of
the results' `seconds`), and the ratios Augur/Storm (below 1 means Augur is faster).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QVBS = os.path.join(ROOT, "..", "shared", "qvbs")


def recorded_storm_times():
    """Storm's times from the table in ../shared/qvbs/README.md: {id: (build, check)}."""
    out = {}
    try:
        text = open(os.path.join(QVBS, "README.md")).read()
    except OSError:
        return out
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and re.match(r"^[a-z_-]+\.[\w.-]+$", cells[0]):
            try:
                build = float(cells[4])
            except ValueError:
                continue
            m = re.match(r"^[<>]?\s*([0-9.]+)", cells[5])
            check = float(m.group(1)) if m else float("nan")
            out[cells[0]] = (build, check)
    return out


def storm_times(inst):
    """(build, check) seconds measured with stormpy (2.x), or None if stormpy is missing.

    Storm builds the model for the instance's properties (as its command line does: the
    labels the properties need, and target states may be made absorbing) with the sparse
    engine, and checks every property with its default environment.
    """
    try:
        import stormpy
    except ImportError:
        return None
    d = os.path.join(QVBS, inst["model"])
    text = open(os.path.join(d, inst["props"])).read()
    t0 = time.perf_counter()
    prog = stormpy.parse_prism_program(os.path.join(d, inst["file"]))
    em = prog.expression_manager
    defs = {}
    for c in prog.constants:
        if c.name in inst["constants"]:
            v = inst["constants"][c.name]
            defs[c.expression_variable] = em.integer(v) if isinstance(v, int) else em.rational(stormpy.Rational(str(v)))
    if defs:
        prog = prog.define_undefined_constants(defs)
    props = stormpy.parse_properties(text, prog)
    model = stormpy.build_model(prog, props)
    t1 = time.perf_counter()
    for p in props:
        stormpy.model_checking(model, p)
    t2 = time.perf_counter()
    return (t1 - t0, t2 - t1)


def augur_times(inst, augur):
    d = os.path.join(QVBS, inst["model"])
    args = [augur, "check", os.path.join(d, inst["file"]), os.path.join(d, inst["props"]), "--json"]
    consts = ",".join(f"{k}={v}" for k, v in inst["constants"].items())
    if consts:
        args += ["--const", consts]
    t0 = time.perf_counter()
    run = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:] or ["failed"]
    out = json.loads(run.stdout)
    build = out["model"].get("build_seconds", float("nan"))
    check = sum(r.get("seconds") or 0.0 for r in out["results"])
    return (build, check, wall), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--augur", default=os.path.join(ROOT, "target", "release", "augur"))
    ap.add_argument("--instances", help="comma-separated instance ids (default: all)")
    a = ap.parse_args()
    if not os.path.isfile(a.augur):
        sys.exit(f"{a.augur} not found: run `cargo build --release` first")
    instances = json.load(open(os.path.join(QVBS, "instances.json")))
    recorded = recorded_storm_times()
    if a.instances:
        wanted = set(a.instances.split(","))
        instances = [i for i in instances if i["id"] in wanted]
    else:
        # Instances on which Storm's check does not finish (recorded as ">120") are left out
        # unless named explicitly.
        slow = [i["id"] for i in instances if recorded.get(i["id"], (0, 0))[1] >= 120]
        instances = [i for i in instances if i["id"] not in slow]
        if slow:
            print(f"(left out: {', '.join(slow)}: Storm does not finish; name them with --instances)")
    fmt = "{:<24} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}  {}"
    print(fmt.format("instance", "storm bld", "augur bld", "storm chk", "augur chk", "bld x", "chk x", "storm source"))
    for inst in instances:
        measured = storm_times(inst)
        source = "stormpy" if measured else "README"
        sb, sc = measured or recorded.get(inst["id"], (float("nan"), float("nan")))
        times, err = augur_times(inst, a.augur)
        if err:
            print(fmt.format(inst["id"], f"{sb:.3f}", "error", f"{sc:.3f}", "", "", "", err[0]))
            continue
        ab, ac, _ = times
        ratio = lambda x, y: f"{x / y:.2f}" if y and y == y and y > 0 else "-"
        print(fmt.format(inst["id"], f"{sb:.3f}", f"{ab:.3f}", f"{sc:.3f}", f"{ac:.3f}",
                         ratio(ab, sb), ratio(ac, sc), source))


if __name__ == "__main__":
    main()
