"""The documents' ```python blocks as tests: every block of docs/python.md, README.md and
docs/scale.md runs, in order, one namespace per document, in a fresh directory that holds links
to the repository's `models/` and `docs/` (the documents run from the repository root, as the
console blocks of tests/conformance/docs.rs do), so a document cannot drift from the package.

A tag after the language says how a block is treated, as for console blocks:
- none: runnable;
- `needs-external-data`: the block needs a data set that is not in the repository: not run;
- `not-run`: shown for reading only (an install, a sketch): not run.
A python block with any other tag is an error, so a block cannot lose its tag unseen.

What a document's text says exists before its blocks run (docs/scale.md: a step table written
by `augur simulate -o traces.parquet`) is made by `SETUP`, with the binary under test
(`AUGUR_BIN`); the values the text states of what the blocks compute are checked after them.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCS = ["docs/python.md", "README.md", "docs/scale.md"]
TAGS = {"", "needs-external-data", "not-run"}
AUGUR = os.environ.get("AUGUR_BIN", str(REPO / "target" / "debug" / "augur"))


def python_blocks(text: str, doc: str = "docs/python.md"):
    """(line of the opening fence, tag, code) of every ```python block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```python(?:\s+(.*))?$", lines[i].rstrip())
        if m:
            tag = (m.group(1) or "").strip()
            start = i + 1
            j = start
            while j < len(lines) and lines[j].rstrip() != "```":
                j += 1
            if j == len(lines):
                raise AssertionError(f"{doc}:{i + 1}: a python block without its closing ```")
            blocks.append((i + 1, tag, "\n".join(lines[start:j])))
            i = j
        i += 1
    return blocks


def simulate_traces(work: Path):
    """docs/scale.md's `traces.parquet` (`augur simulate -o traces.parquet`); its summary."""
    out = subprocess.run(
        [AUGUR, "simulate", "models/die.json", "-n", "300", "--max-steps", "20",
         "-o", "traces.parquet", "--json"],
        cwd=work, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


SETUP = {"docs/scale.md": simulate_traces}


def run_document(doc: str, work: Path, repo: Path = REPO):
    """Runs the runnable blocks of `doc` in `work`; (namespace, blocks run, setup's result)."""
    os.symlink(repo / "models", work / "models")
    os.symlink(repo / "docs", work / "docs")
    path = repo / doc
    blocks = python_blocks(path.read_text(encoding="utf-8"), doc)
    namespace = {"__name__": "__docs__"}
    old = os.getcwd()
    os.chdir(work)
    ran = 0
    try:
        setup = SETUP[doc](work) if doc in SETUP else None
        for line, tag, code in blocks:
            if tag:
                continue
            # Line numbers of a traceback are the document's.
            compiled = compile("\n" * line + code, f"{path}", "exec")
            try:
                exec(compiled, namespace)
            except Exception as e:  # noqa: BLE001 (reported with the block's line)
                raise AssertionError(f"{doc}:{line}: the block fails: {e!r}") from e
            ran += 1
    finally:
        os.chdir(old)
    return namespace, ran, setup


@pytest.mark.parametrize("doc", DOCS)
def test_the_blocks_are_found_and_tagged(doc):
    blocks = python_blocks((REPO / doc).read_text(encoding="utf-8"), doc)
    assert len(blocks) >= (7 if doc == "docs/python.md" else 1)
    for line, tag, _ in blocks:
        assert tag in TAGS, f"{doc}:{line}: unknown tag {tag!r} (none, needs-external-data or not-run)"


def test_an_unclosed_block_is_an_error():
    with pytest.raises(AssertionError, match="closing"):
        python_blocks("```python\nx = 1\n")


def test_a_failing_block_names_its_line(tmp_path):
    repo, work = tmp_path / "repo", tmp_path / "work"
    for d in (repo / "models", repo / "docs", work):
        d.mkdir(parents=True)
    (repo / "x.md").write_text("text\n```python\nx = 1\n```\n```python\nraise ValueError(x)\n```\n")
    with pytest.raises(AssertionError, match=r"x.md:5: the block fails: ValueError\(1\)"):
        run_document("x.md", work, repo)


def test_every_python_block_of_docs_python_md_runs(tmp_path, capsys):
    namespace, ran, _ = run_document("docs/python.md", tmp_path)
    assert ran >= 7
    # What the blocks wrote, as the text says.
    assert (tmp_path / "monitor.json").exists() and (tmp_path / "microwave.json").exists()
    # A few values the text states.
    assert round(namespace["r"].value, 6) == 0.166667
    assert namespace["results"][0].value == pytest.approx(1 / 16)
    assert namespace["results"][1].value == pytest.approx(12.0)


def test_the_python_block_of_readme_runs(tmp_path):
    namespace, ran, _ = run_document("README.md", tmp_path)
    assert ran == 1
    # The gate decided (a decision with an action below PAUSE, else the block raises).
    augur = namespace["augur"]
    assert namespace["decision"].action < augur.Action.PAUSE
    assert namespace["session"] is not None


def test_the_python_block_of_docs_scale_md_runs(tmp_path):
    namespace, ran, simulated = run_document("docs/scale.md", tmp_path)
    assert ran == 2
    # The engines' counts are the counts of `augur-counts` the text describes: the traces
    # start once and end once each, the steps are every row of the step table, and each step
    # but a trace's first is a transition (totals from `augur simulate`'s own summary).
    for name in ("counts", "counts_duckdb"):
        g = namespace[name]["groups"][0]
        assert g["traces"] == simulated["traces"] == 300
        assert sum(n for _, n in g["ends"]) == simulated["traces"]
        assert g["steps"] == simulated["steps"]
        assert sum(n for _, _, n in g["transitions"]) == simulated["steps"] - simulated["traces"]
    assert namespace["counts"] == namespace["counts_duckdb"]
    assert (tmp_path / "counts.json").read_text() == (tmp_path / "counts-duckdb.json").read_text()
    # The console block after them (not run by the Rust docs test: it needs counts.json), its
    # output as the text shows it.
    text = (REPO / "docs" / "scale.md").read_text(encoding="utf-8")
    block = re.search(r"```console not-run [^\n]*\n\$ (augur learn --from-counts counts.json[^\n]*)\n"
                      r"((?:[^`][^\n]*\n)+)```", text)
    assert block, "docs/scale.md: the console block of `augur learn --from-counts counts.json`"
    out = subprocess.run([AUGUR, *block.group(1).split()[1:]], cwd=tmp_path, check=True,
                         capture_output=True, text=True)
    assert (out.stderr + out.stdout).splitlines() == block.group(2).splitlines()
