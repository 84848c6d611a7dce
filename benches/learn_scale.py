#!/usr/bin/env python3
"""Learning at scale, whole process: `augur learn` on the traces of issue 24.

Builds the release binary, simulates `models/safetydrift.tra` (300 000 traces of at most 12
steps, seed 1: 3.05 M steps) as JSON Lines and as a Parquet step table, then times `augur learn`
on them, each reader run 5 times after a warm-up run (the file in the page cache): the
sequential JSON Lines reader (`--threads 1`, the reader of earlier versions), the parallel JSON
Lines reader (one thread per core) and the Parquet reader. Prints a Markdown table of the
medians: wall time, CPU time (user + system, all threads), steps per second (by wall time),
CPU time per step (all threads; the figure least sensitive to other load on the machine) and
the largest resident set.

    python3 benches/learn_scale.py            # build, generate, measure
    python3 benches/learn_scale.py --no-build --runs 3
    python3 benches/learn_scale.py --augur target/profiling/augur   # another build of it

Only the standard library; Linux or macOS (os.wait4 gives each run's CPU time and memory).
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


def run_once(argv):
    """Runs argv; its wall time (s), CPU time (s) and peak resident set (MB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err}")
    # ru_maxrss: kilobytes on Linux, bytes on macOS.
    rss = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return wall, usage.ru_utime + usage.ru_stime, rss


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per reader (default 5)")
    ap.add_argument("--traces", type=int, default=300_000, help="traces to simulate")
    ap.add_argument("--no-build", action="store_true", help="use target/release/augur as is")
    ap.add_argument("--dir", help="where to write the traces (default: a temporary directory)")
    ap.add_argument("--augur", help="the binary to measure (default: target/release/augur, "
                    "built first unless --no-build)")
    args = ap.parse_args()

    if args.augur:
        augur = os.path.abspath(args.augur)
    else:
        if not args.no_build:
            subprocess.run(
                ["cargo", "build", "--release", "--quiet", "--bin", "augur", "--features", "parquet"], cwd=ROOT, check=True
            )
        augur = os.path.join(ROOT, "target", "release", "augur")
    tmp = None
    if args.dir:
        work = args.dir
        os.makedirs(work, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="augur-learn-scale-")
        work = tmp.name
    model = os.path.join(ROOT, "models", "safetydrift.tra")
    jsonl = os.path.join(work, "sd.jsonl")
    parquet = os.path.join(work, "sd.parquet")
    for out in (jsonl, parquet):
        subprocess.run(
            [augur, "simulate", model, "-n", str(args.traces), "--max-steps", "12",
             "--seed", "1", "-o", out],
            check=True, stdout=subprocess.DEVNULL,
        )
    out_model = os.path.join(work, "learned.json")
    readers = [
        ("JSON Lines, sequential (`--threads 1`)", [jsonl, "--threads", "1"]),
        (f"JSON Lines, parallel ({os.cpu_count()} threads)", [jsonl]),
        ("Parquet", [parquet]),
    ]
    # The steps, from the learner itself (and the three readers must agree on the model).
    steps = None
    models = []
    for _, extra in readers:
        summary = subprocess.run(
            [augur, "learn", *extra, "-o", out_model, "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        s = json.loads(summary)["models"][0]["steps"]
        if steps is not None and s != steps:
            sys.exit(f"the readers disagree on the number of steps: {steps} and {s}")
        steps = s
        with open(out_model) as f:
            doc = json.load(f)
        doc.get("metadata", {}).get("learned", {}).pop("traces_file", None)
        models.append(doc)
    if any(m != models[0] for m in models):
        sys.exit("the readers learned different models")

    print(f"# augur learn, whole process, median of {args.runs} runs after a warm-up run; "
          f"binary: {os.path.relpath(augur, ROOT)}")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {cpu_model()}, "
          f"{os.cpu_count()} cores, load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# traces: simulate models/safetydrift.tra -n {args.traces} --max-steps 12 --seed 1: "
          f"{steps} steps, JSON Lines {os.path.getsize(jsonl) / 1e6:.1f} MB, "
          f"Parquet {os.path.getsize(parquet) / 1e6:.1f} MB")
    print()
    print("| reader | wall (s) | CPU (s) | steps/s (wall) | CPU ns/step | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, extra in readers:
        argv = [augur, "learn", *extra, "-o", out_model]
        run_once(argv)  # warm-up
        runs = [run_once(argv) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rss = max(r[2] for r in runs)
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {steps / wall / 1e6:.1f} M | "
              f"{cpu / steps * 1e9:.0f} | {rss:.0f} |", flush=True)
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
