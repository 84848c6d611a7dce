"""Counting on an existing engine (issue 24 item 4): docs/sql/counts.sql run by DataFusion on
Parquet traces written by `augur simulate`, its rows written as an `augur-counts` file, and
`augur learn --from-counts` on it gives the model `augur learn` gives on the traces."""

import json
import os
import subprocess
from pathlib import Path

import datafusion

REPO = Path(__file__).resolve().parents[3]
AUGUR = os.environ.get("AUGUR_BIN", str(REPO / "target" / "debug" / "augur"))
SQL = (REPO / "docs" / "sql" / "counts.sql").read_text()


def augur(*args):
    return subprocess.run([AUGUR, *map(str, args)], check=True, capture_output=True, text=True)


def counts_from_engine(parquet):
    """The engine's rows as an augur-counts document (order 1, one group)."""
    ctx = datafusion.SessionContext()
    ctx.register_parquet("steps", str(parquet))
    rows = ctx.sql(SQL).to_pylist()
    by_kind = {}
    for r in rows:
        by_kind.setdefault(r["kind"], []).append(r)
    initial = sorted([r["from_state"], r["n"]] for r in by_kind["initial"])
    transitions = sorted([r["from_state"], r["to_state"], r["n"]] for r in by_kind["transition"])
    ends = sorted([r["from_state"], r["n"]] for r in by_kind["end"])
    states = sorted({r["from_state"] for r in rows} | {r["to_state"] for r in rows if r["to_state"]})
    return {
        "format": "augur-counts",
        "version": 1,
        "order": 1,
        "end_state": None,
        "groups": [{
            "category": None,
            "traces": sum(n for _, n in initial),
            "steps": sum(r["n"] for r in by_kind["step"]),
            "states": states,
            "initial": initial,
            "transitions": transitions,
            "invalid": [],
            "ends": ends,
        }],
    }


def named(model):
    """A learned model with its states by name (the engine numbers states in its own order)."""
    names = model["metadata"]["state_names"]
    return {
        "initial": sorted(names[s] for s in model["initial"]),
        "transitions": sorted((names[a], names[b], p) for a, b, p in model["transitions"]),
        "labels": sorted((l["name"], sorted(names[s] for s in l["states"])) for l in model["labels"]),
        "traces": model["counts"]["traces"],
        "steps": model["counts"]["steps"],
    }


def test_datafusion_counts_learn_the_same_model_as_the_traces(tmp_path):
    traces = tmp_path / "t.parquet"
    augur("simulate", REPO / "models" / "safetydrift.tra", "-n", 3000, "--max-steps", 12,
          "--seed", 7, "-o", traces)
    counts = tmp_path / "engine.counts.json"
    counts.write_text(json.dumps(counts_from_engine(traces)))
    for alpha in ("0", "0.1"):
        direct, summed = tmp_path / f"direct{alpha}.json", tmp_path / f"engine{alpha}.json"
        augur("learn", traces, "--alpha", alpha, "-o", direct)
        augur("learn", "--from-counts", counts, "--alpha", alpha, "-o", summed)
        a, b = named(json.loads(direct.read_text())), named(json.loads(summed.read_text()))
        assert a == b
        assert a["steps"] > 30000


def test_the_engine_counts_equal_augurs_own_counts(tmp_path):
    traces = tmp_path / "t.parquet"
    augur("simulate", REPO / "models" / "safetydrift.tra", "-n", 500, "--max-steps", 9,
          "--seed", 11, "-o", traces)
    own = tmp_path / "own.counts.json"
    augur("learn", traces, "--counts-only", "-o", own)
    mine = json.loads(own.read_text())["groups"][0]
    engine = counts_from_engine(traces)["groups"][0]
    for key in ("traces", "steps", "initial", "transitions", "ends"):
        assert engine[key] == mine[key], key
    assert sorted(mine["states"]) == engine["states"]
