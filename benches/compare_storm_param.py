#!/usr/bin/env python3
"""Parametric DTMCs, Augur against Storm (issue 38): the rational function of one property
of brp (pK, pL), crowds (PF, badC) and nand (perr, prob1), and the refinement of a region to
95% coverage on brp and crowds.

Functions: `augur check MODEL --prop P --param A,B --const ...` (release binary, wall time
of the whole process: parsing, building, state elimination, printing) against stormpy's
parametric engine (`build_parametric_model` + `model_checking`, state elimination, Storm's
default; build and check timed together), median of 3 each.

Regions: Augur's `--region BOX --refine 0.95` against stormpy's region checker
(`stormpy.pars.verify` with a region: parameter lifting; a box is all-satisfy when the
property is verified on it, all-violate when its negation is) driven by the same bisection: the box
split across its widest side, largest first, until 95% of the volume is decided.

Usage: python3 benches/compare_storm_param.py [--only NAME] [--no-regions | --regions-only]
(PARAM_BENCH_LIMIT=SECONDS stops an Augur run after that long, reported as "> SECONDS")
(needs `pip install stormpy` and `cargo build --release`; AUGUR_BIN=PATH times another build
of the binary, e.g. target/profiling/augur, the release profile with symbols).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUGUR = os.environ.get("AUGUR_BIN", os.path.join(ROOT, "target", "release", "augur"))
BENCH = os.path.join(ROOT, "benches", "param")

# name, model file, constants, parameters, property
CASES = [
    ("brp-16-2", "brp.pm", "N=16,MAX=2", "pK,pL", "P=? [ F s=5 ]"),
    ("brp-256-5", "brp.pm", "N=256,MAX=5", "pK,pL", "P=? [ F s=5 ]"),
    ("crowds-6-5", "crowds.pm", "TotalRuns=6,CrowdSize=5", "PF,badC", "P=? [ F observe0>1 ]"),
    ("nand-10-2", "nand.pm", "N=10,K=2", "perr,prob1", "P=? [ F s=4 & z/N<0.1 ]"),
    ("nand-20-2", "nand.pm", "N=20,K=2", "perr,prob1", "P=? [ F s=4 & z/N<0.1 ]"),
]

# name, model, constants, parameters, property with a bound, box
REGIONS = [
    ("brp-16-2", "brp.pm", "N=16,MAX=2", "pK,pL", "P<=0.9 [ F s=5 ]", "0.1<=pK<=0.9,0.1<=pL<=0.9"),
    ("brp-256-5", "brp.pm", "N=256,MAX=5", "pK,pL", "P<=0.9 [ F s=5 ]",
     "0.1<=pK<=0.9,0.1<=pL<=0.9"),
    ("crowds-3-5", "crowds.pm", "TotalRuns=3,CrowdSize=5", "PF,badC", "P<=0.1 [ F observe0>1 ]",
     "0.1<=PF<=0.9,0.1<=badC<=0.9"),
    ("crowds-6-5", "crowds.pm", "TotalRuns=6,CrowdSize=5", "PF,badC", "P<=0.1 [ F observe0>1 ]",
     "0.1<=PF<=0.9,0.1<=badC<=0.9"),
    ("crowds-6-5-refined", "crowds.pm", "TotalRuns=6,CrowdSize=5", "PF,badC",
     "P<=0.3 [ F observe0>1 ]", "0.1<=PF<=0.9,0.1<=badC<=0.9"),
]


def median_time(run, n=3):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


# A run longer than this is stopped and reported as "> LIMIT".
LIMIT = float(os.environ.get("PARAM_BENCH_LIMIT", "600"))


def augur_function(model, consts, params, prop):
    def run():
        r = subprocess.run([AUGUR, "check", os.path.join(BENCH, model), "--prop", prop,
                            "--param", params, "--const", consts, "--json"],
                           capture_output=True, text=True, check=True, timeout=LIMIT)
        return r.stdout
    try:
        return median_time(run)
    except subprocess.TimeoutExpired:
        return float("inf"), None


def storm_function(model, consts, prop):
    import stormpy
    import stormpy.pars  # noqa: F401
    from stormpy.numbers.developer.cln import FactorizedRationalFunction as F

    def run():
        prog = stormpy.parse_prism_program(os.path.join(BENCH, model))
        prog, _ = stormpy.instantiate_constants(prog, consts)
        props = stormpy.parse_properties(prop, prog)
        m = stormpy.build_model[F](prog, props)
        res = stormpy.model_checking(m, props[0], only_initial_states=True)
        return str(res.get_value(m.initial_states[0]))
    return median_time(run)


def augur_region(model, consts, params, prop, box):
    def run():
        r = subprocess.run([AUGUR, "check", os.path.join(BENCH, model), "--prop", prop,
                            "--param", params, "--const", consts, "--region", box,
                            "--refine", "0.95", "--json"],
                           capture_output=True, text=True, check=True)
        region = json.loads(r.stdout)["results"][0]["region"]
        return region["examined"], region["coverage"]
    return median_time(run)


def storm_region(model, consts, params, prop, box):
    import stormpy
    import stormpy.pars
    from stormpy.numbers.developer.cln import FactorizedRationalFunction as F

    def run():
        prog = stormpy.parse_prism_program(os.path.join(BENCH, model))
        prog, _ = stormpy.instantiate_constants(prog, consts)
        negated = prop.replace("<=", ">", 1)
        props = stormpy.parse_properties(prop + ";" + negated, prog)
        m = stormpy.build_model[F](prog, props[:1])
        params = m.collect_all_parameters()
        bounds = {}
        for part in box.split(","):
            lo, name, hi = part.split("<=")
            bounds[name.strip()] = (float(lo), float(hi))
        todo = [bounds]
        total = 1.0
        for lo, hi in bounds.values():
            total *= hi - lo
        decided = 0.0
        boxes = 0
        while todo and decided / total < 0.95:
            todo.sort(key=lambda b: vol(b))
            b = todo.pop()
            boxes += 1
            text = ",".join(f"{lo}<={n}<={hi}" for n, (lo, hi) in b.items())
            region = stormpy.pars.parse_region(text, params)
            # Parameter lifting: all satisfy, else all violate (the negated bound), else split.
            if stormpy.pars.verify(m, props[0], region=region) or \
                    stormpy.pars.verify(m, props[1], region=region):
                decided += vol(b)
            else:
                n = max(b, key=lambda k: b[k][1] - b[k][0])
                lo, hi = b[n]
                mid = (lo + hi) / 2
                a, c = dict(b), dict(b)
                a[n] = (lo, mid)
                c[n] = (mid, hi)
                todo += [a, c]
        return boxes, decided / total
    return median_time(run)


def vol(b):
    v = 1.0
    for lo, hi in b.values():
        v *= hi - lo
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--no-regions", action="store_true")
    ap.add_argument("--regions-only", action="store_true")
    args = ap.parse_args()
    print(f"machine: {os.uname().nodename}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print("| model | parameters | Augur (s) | Storm (s) | Storm / Augur |")
    print("|---|---|---|---|---|")
    for name, model, consts, params, prop in CASES:
        if args.regions_only or args.only and args.only not in name:
            continue
        ta, _ = augur_function(model, consts, params, prop)
        ts, _ = storm_function(model, consts, prop)
        shown = f"> {LIMIT:.0f}" if ta == float("inf") else f"{ta:.3f}"
        print(f"| {name} | {params} | {shown} | {ts:.3f} | {ts / ta:.2f} |", flush=True)
    if args.no_regions:
        return
    print()
    print("| model | property, region | Augur (s) | Storm (s) | Augur / Storm "
          "| boxes examined (Augur, Storm) | coverage (Augur, Storm) |")
    print("|---|---|---|---|---|---|---|")
    for name, model, consts, params, prop, box in REGIONS:
        if args.only and args.only not in name:
            continue
        ta, (ab, ac) = augur_region(model, consts, params, prop, box)
        ts, (boxes, cov) = storm_region(model, consts, params, prop, box)
        print(f"| {name} | `{prop}`, {box} | {ta:.3f} | {ts:.3f} | {ta / ts:.2f} "
              f"| {ab}, {boxes} | {ac:.3f}, {cov:.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
