#!/usr/bin/env python3
"""Widens a PRISM explicit model into an interval DTMC, for the robust-checking speed table of
docs/robust.md: every probability p of IN.tra becomes [0.99p, min(1, 1.01p)] in OUT.tra
(PRISM's `src dst [lo,hi]` lines); the .lab and .sta files are copied beside it.

    augur export crowds.prism --const TotalRuns=6,CrowdSize=10 --to tra -o /tmp/c.tra
    python3 benches/widen_intervals.py /tmp/c.tra /tmp/cw.tra
"""
import shutil
import sys
from pathlib import Path


def main() -> None:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    with src.open() as f, dst.open("w") as out:
        out.write(f.readline())  # states transitions
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            p = float(parts[2])
            out.write(f"{parts[0]} {parts[1]} [{0.99 * p!r},{min(1.0, 1.01 * p)!r}]\n")
    for ext in (".lab", ".sta"):
        companion = src.with_suffix(ext)
        if companion.exists():
            shutil.copy(companion, dst.with_suffix(ext))


if __name__ == "__main__":
    main()
