#!/usr/bin/env python3
"""The PRISM reader at scale, whole process (issue 43, item 4): `augur check` on models with one
command per state, as `augur explain --output` and `augur export --to prism` write them.

Writes a chain of N states (`[] s=i -> 0.5:(s'=i+1) + 0.5:(s'=0);`, one module, one command per
state) for N = 10^4, 10^5 and 10^6, then times `augur check FILE --prop 'P=? [ X s=1 ]' --json`
on each (the answer is 0.5: checked), after a warm-up run. Prints a Markdown table of the
medians: wall time, CPU time, the model's own build time (`build_seconds`: parse and state
space) and the largest resident set.

    python3 benches/prism_scale.py                       # build the release binary, measure
    python3 benches/prism_scale.py --no-build --runs 1 --sizes 10000,100000
    python3 benches/prism_scale.py --augur /path/to/an/older/augur   # another build

Only the standard library; Linux or macOS (os.wait4 gives each run's CPU time and memory).
The criterion benchmark of the same models (parse and build in-process, 10^4 and 10^5
commands) is `cargo bench -p augur-prism --bench prism_build -- one_command`.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_chain(path, n):
    """The chain of `n` states, one command per state."""
    with open(path, "w") as f:
        f.write(f"dtmc\n\nmodule augur_model\n  s : [0..{n - 1}] init 0;\n")
        for s in range(n):
            f.write(f"  [] s={s} -> 0.5:(s'={min(s + 1, n - 1)}) + 0.5:(s'=0);\n")
        f.write("endmodule\n")


def run_once(argv):
    """Runs argv: wall time (s), CPU time (s), peak resident set (MB), parsed stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(argv)} failed ({status}):\n{err}")
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return wall, usage.ru_utime + usage.ru_stime, rss, json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--augur", default=os.path.join(ROOT, "target", "release", "augur"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()
    if not args.no_build and args.augur == os.path.join(ROOT, "target", "release", "augur"):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    print(
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {args.augur}"
    )
    print("| commands | wall (s) | CPU (s) | build_seconds | peak RSS (MB) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.sizes.split(",")]:
            path = os.path.join(tmp, f"chain{n}.pm")
            write_chain(path, n)
            argv = [args.augur, "check", path, "--prop", "P=? [ X s=1 ]", "--json"]
            runs = [run_once(argv) for _ in range(args.runs + 1)][1:]
            for *_, out in runs:
                assert out["model"]["states"] == n, out["model"]
                assert out["results"][0]["value"] == 0.5, out["results"]
            med = lambda k: statistics.median(r[k] for r in runs)
            build = statistics.median(r[3]["model"]["build_seconds"] for r in runs)
            print(f"| {n:,} | {med(0):.2f} | {med(1):.2f} | {build:.2f} | {med(2):.0f} |")


if __name__ == "__main__":
    main()
