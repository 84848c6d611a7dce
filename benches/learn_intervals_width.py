#!/usr/bin/env python3
"""How the width Pmax - Pmin of a learned interval DTMC shrinks as traces grow: the table of
docs/robust.md ("Learning with a guarantee").

For n = 100, 1k, 10k, 100k traces of the known chain models/agent4/agent4.pm
(P(F "unsafe") = 17/59), over 5 seeds each: `augur simulate`, `augur learn --intervals
--confidence 0.95` with the chain's spec, `augur check` of Pmin and Pmax of F "unsafe" (the
outer ends of their guaranteed bounds). Prints the median width, width * sqrt(n), the
ratio to the previous row, and whether every seed's [Pmin, Pmax] holds 17/59.

    python3 benches/learn_intervals_width.py            # uses target/release/augur if built
    AUGUR=target/debug/augur python3 benches/learn_intervals_width.py
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRUE = 17 / 59
SEEDS = range(1, 6)


def augur() -> str:
    if "AUGUR" in os.environ:
        return os.environ["AUGUR"]
    for build in ("release", "debug"):
        p = ROOT / "target" / build / "augur"
        if p.exists():
            return str(p)
    sys.exit("build augur first (cargo build --release), or set AUGUR")


def run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main() -> None:
    exe = augur()
    model = ROOT / "models" / "agent4" / "agent4.pm"
    spec = ROOT / "models" / "agent4" / "spec.toml"
    print("| traces n | median Pmax − Pmin | × √n | vs previous row | [Pmin, Pmax] holds 17/59 |")
    print("|---|---|---|---|---|")
    previous = None
    with tempfile.TemporaryDirectory() as tmp:
        traces, learned = Path(tmp) / "t.jsonl", Path(tmp) / "m.json"
        for n in (100, 1_000, 10_000, 100_000):
            widths, covered = [], 0
            for seed in SEEDS:
                run(exe, "simulate", str(model), "-n", str(n), "--max-steps", "1000",
                    "--seed", str(seed), "-o", str(traces))
                run(exe, "learn", str(traces), "--abstraction", str(spec), "--intervals",
                    "--confidence", "0.95", "-o", str(learned))
                report = json.loads(run(exe, "check", str(learned), "--json",
                                        "--prop", 'Pmin=? [ F "unsafe" ]',
                                        "--prop", 'Pmax=? [ F "unsafe" ]'))
                lo = report["results"][0]["bounds"][0]
                hi = report["results"][1]["bounds"][1]
                widths.append(hi - lo)
                covered += lo <= TRUE <= hi
            w = statistics.median(widths)
            ratio = "" if previous is None else f"{previous / w:.2f}× narrower"
            print(f"| {n:,} | {w:.4f} | {w * math.sqrt(n):.2f} | {ratio} | "
                  f"{covered} of {len(SEEDS)} seeds |")
            previous = w


if __name__ == "__main__":
    main()
