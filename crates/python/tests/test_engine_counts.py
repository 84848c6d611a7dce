"""Counting where the traces live (issue 24 item 4, issue 42 item 3): docs/sql/counts.sql, read
from the file and run unchanged on DataFusion, DuckDB and Spark (local mode) over a Parquet step
table written by `augur simulate`; `augur_mc.counts_from_rows` turns each engine's rows (in the
forms the engine returns them) into the counts file `augur learn --counts-only` writes for the
same traces, and `augur learn --from-counts` on it learns the model `augur learn` learns from
the traces. Spark runs here under CI (scripts/python-tests installs pyspark; Java 17): one
SparkSession for the module, local[1], one shuffle partition, no UI."""

import json
import os
import subprocess
from pathlib import Path

import datafusion
import duckdb
import pyarrow
import pytest

import augur_mc as augur

REPO = Path(__file__).resolve().parents[3]
AUGUR = os.environ.get("AUGUR_BIN", str(REPO / "target" / "debug" / "augur"))
SQL = (REPO / "docs" / "sql" / "counts.sql").read_text()


def run(*args):
    return subprocess.run([AUGUR, *map(str, args)], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """500 simulated traces of SafetyDrift as Parquet, and `augur learn --counts-only`'s file."""
    d = tmp_path_factory.mktemp("engines")
    t = d / "t.parquet"
    run("simulate", REPO / "models" / "safetydrift.tra", "-n", 500, "--max-steps", 9,
        "--seed", 11, "-o", t)
    own = d / "own.counts.json"
    run("learn", t, "--counts-only", "-o", own)
    return t, own


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[1]").appName("augur-counts-test")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.default.parallelism", "1")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def on_datafusion(parquet, _spark):
    ctx = datafusion.SessionContext()
    ctx.register_parquet("steps", str(parquet))
    df = ctx.sql(SQL)
    return {"DataFrame": lambda: df, "pyarrow Table": df.to_arrow_table, "dicts": df.to_pylist}


def on_duckdb(parquet, _spark):
    con = duckdb.connect()
    con.execute(f"CREATE VIEW steps AS SELECT * FROM read_parquet('{parquet}')")
    rel = lambda: con.sql(SQL)  # noqa: E731
    forms = {"relation": rel, "tuples": lambda: rel().fetchall(),
             "cursor": lambda: con.cursor().execute(SQL), "pyarrow Table": lambda: rel().to_arrow_table()}
    try:
        import pandas  # noqa: F401  (not a test dependency: tested when installed)

        forms["pandas DataFrame"] = lambda: rel().df()
    except ImportError:
        pass
    return forms


def on_spark(parquet, spark):
    spark.read.parquet(str(parquet)).createOrReplaceTempView("steps")
    df = spark.sql(SQL)
    # The DataFrame as it is is collected (Rows); toArrow() is Spark 4's Arrow table.
    return {"DataFrame": lambda: df, "toArrow": df.toArrow}


ENGINES = {"datafusion": on_datafusion, "duckdb": on_duckdb, "spark": on_spark}


def with_sorted_states(doc):
    """The document with each group's states in name order: the SQL numbers states by name,
    `--counts-only` in first-seen order (a trace file's order, which a table does not have)."""
    doc = json.loads(json.dumps(doc))
    for g in doc["groups"]:
        g["states"] = sorted(g["states"])
    return doc


@pytest.fixture(scope="module", params=list(ENGINES))
def engine_counts(request, traces, tmp_path_factory):
    """An engine's name and, for each form of its rows, the counts file counts_from_rows
    wrote of them (the query run once per form)."""
    name = request.param
    # Only the Spark case starts the (module's) SparkSession.
    session = request.getfixturevalue("spark") if name == "spark" else None
    d = tmp_path_factory.mktemp(name)
    files = {}
    for form, rows in ENGINES[name](traces[0], session).items():
        files[form] = d / f"{form.replace(' ', '-')}.counts.json"
        doc = augur.counts_from_rows(rows(), files[form])
        assert json.loads(files[form].read_text()) == doc
    return name, files


def test_the_shipped_sql_gives_augurs_own_counts_on_each_engine(engine_counts, traces):
    name, files = engine_counts
    mine = json.loads(traces[1].read_text())
    assert len(files) >= 2
    for form, path in files.items():
        doc = json.loads(path.read_text())
        # The whole document is --counts-only's, the states in name order (the SQL's ORDER BY).
        assert doc == with_sorted_states(mine), (name, form)
        assert doc["groups"][0]["states"] == sorted(mine["groups"][0]["states"])
        # The file is the document as --counts-only writes it (compact JSON and a newline).
        assert path.read_text() == json.dumps(doc, separators=(",", ":")) + "\n"
        assert doc["groups"][0]["traces"] == 500 and doc["groups"][0]["steps"] > 2000


def named(model):
    """A learned model with its states by name (the engine numbers states in its own order)."""
    names = model["metadata"]["state_names"]
    return {
        "initial": sorted(names[s] for s in model["initial"]),
        "transitions": sorted((names[a], names[b], p) for a, b, p in model["transitions"]),
        "labels": sorted((l["name"], sorted(names[s] for s in l["states"])) for l in model["labels"]),
        "counts": (model["counts"]["traces"], model["counts"]["steps"]),
    }


def test_learning_from_an_engines_counts_is_learning_from_the_traces(engine_counts, traces,
                                                                      tmp_path):
    name, files = engine_counts
    parquet = traces[0]
    counts = next(iter(files.values()))
    for alpha in ("0", "0.1"):
        direct, summed = tmp_path / f"direct{alpha}.json", tmp_path / f"engine{alpha}.json"
        run("learn", parquet, "--alpha", alpha, "-o", direct)
        run("learn", "--from-counts", counts, "--alpha", alpha, "-o", summed)
        a, b = named(json.loads(direct.read_text())), named(json.loads(summed.read_text()))
        assert a == b, name
        # The learned model of the engine's counts numbers its states in the SQL's name order.
        assert json.loads(summed.read_text())["metadata"]["state_names"] == sorted(
            json.loads(direct.read_text())["metadata"]["state_names"])


# --- What counts_from_rows refuses: each error names the row and the column. ---------------

GOOD = [
    ("end", "bad", None, 1),
    ("end", "ok", None, 2),
    ("initial", "ok", None, 3),
    ("step", "bad", None, 1),
    ("step", "ok", None, 5),
    ("transition", "ok", "bad", 1),
    ("transition", "ok", "ok", 2),
]


def test_rows_as_tuples_dicts_and_tables_give_the_same_counts(tmp_path):
    # The counts of models/end-state/traces.jsonl, written by --counts-only (docs/scale.md).
    own = tmp_path / "own.json"
    run("learn", REPO / "models" / "end-state" / "traces.jsonl", "--counts-only", "-o", own)
    mine = with_sorted_states(json.loads(own.read_text()))
    dicts = [dict(zip(augur.counts.COLUMNS, r)) for r in GOOD]
    table = pyarrow.Table.from_pylist(dicts)
    for rows in (GOOD, list(reversed(GOOD)), dicts, table, table.to_batches()[0],
                 [r + (None,) for r in GOOD]):
        got = augur.counts_from_rows(rows)
        got["groups"][0]["states"].sort()  # reversed rows number the states otherwise
        assert got == mine


def test_categories_are_groups():
    rows = [r + ("a",) for r in GOOD] + [("step", "x", None, 1), ("initial", "x", None, 1),
                                        ("end", "x", None, 1)]
    doc = augur.counts_from_rows(rows)
    assert [(g["category"], g["traces"]) for g in doc["groups"]] == [("a", 3), (None, 1)]


def refused(rows, *fragments):
    with pytest.raises(augur.ParameterError) as e:
        augur.counts_from_rows(rows)
    for f in fragments:
        assert f in str(e.value), str(e.value)
    assert e.value.message == str(e.value)
    return str(e.value)


def test_bad_rows_are_errors_naming_the_row_and_column():
    refused([], "no rows")
    refused("kind,from_state", "rows are a str")
    refused(42, "rows are a int")
    refused([("step", "ok", None)], "row 1 has 3 values; expected 4 or 5")
    refused([{"kind": "step", "from_state": "ok", "n": 1}], "row 1 has no column `to_state`")
    refused(GOOD[:2] + [("step", None, None, 1)], "row 3: column `from_state` is null")
    refused([("step", "ok", None, -1)], "row 1: column `n` is -1")
    refused([("step", "ok", None, 2**64)], "row 1: column `n` is 18446744073709551616")
    refused([("step", "ok", None, 1.0)], "row 1: column `n` is 1.0 (a float)")
    refused([("step", "ok", None, True)], "row 1: column `n` is True (a bool)")
    refused([("step", b"ok", None, 1)], "row 1: column `from_state` is b'ok' (a bytes)")
    refused([("step", "ok", None, None)], "row 1: column `n` is null")
    refused(GOOD + [("begin", "ok", None, 1)], "row 8", "column `kind` is `begin`")
    refused(GOOD + [("transition", "bad", None, 1)], "row 8", "column `to_state` is null")
    refused(GOOD + [("transition", "ok", "ok", 1)], "row 8",
            "a `transition` row for `ok` -> `ok` again (first at row 7)")
    # A `step` row that is not the moves and ends of its state.
    bad = [r if r[:2] != ("step", "ok") else ("step", "ok", None, 4) for r in GOOD]
    refused(bad, "row 5", "the `step` row of state `ok` counts 4 steps", "add up to 5")
    # Counts that cannot be those of traces, as --from-counts checks a file.
    bad = [r if r[:2] != ("initial", "ok") else ("initial", "ok", None, 2) for r in GOOD]
    refused(bad, "inconsistent transition counts")
    # Order 2: a state is a JSON array of names.
    with pytest.raises(augur.ParameterError, match="row 1: column `from_state`: `ok` is not a JSON array"):
        augur.counts_from_rows([("step", "ok", None, 1)], order=2)
