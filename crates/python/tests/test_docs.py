"""docs/python.md as a test: every ```python block runs, in order, in one namespace, in a fresh
directory that holds a link to the repository's `models/` (as the console blocks of the other
documents run: tests/conformance/docs.rs), so the document cannot drift from the package.

A tag after the language says how a block is treated, as for console blocks:
- none: runnable;
- `needs-external-data`: the block needs a data set that is not in the repository: not run;
- `not-run`: shown for reading only (an install, a sketch): not run.
A python block with any other tag is an error, so a block cannot lose its tag unseen.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "python.md"
TAGS = {"", "needs-external-data", "not-run"}


def python_blocks(text: str):
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
                raise AssertionError(f"docs/python.md:{i + 1}: a python block without its closing ```")
            blocks.append((i + 1, tag, "\n".join(lines[start:j])))
            i = j
        i += 1
    return blocks


def test_the_blocks_are_found_and_tagged():
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 7
    for line, tag, _ in blocks:
        assert tag in TAGS, f"docs/python.md:{line}: unknown tag {tag!r} (none, needs-external-data or not-run)"
    with pytest.raises(AssertionError, match="closing"):
        python_blocks("```python\nx = 1\n")


def test_every_python_block_of_the_document_runs(tmp_path, capsys):
    os.symlink(REPO / "models", tmp_path / "models")
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    namespace = {"__name__": "__docs__"}
    old = os.getcwd()
    os.chdir(tmp_path)
    ran = 0
    try:
        for line, tag, code in blocks:
            if tag:
                continue
            # Line numbers of a traceback are the document's.
            compiled = compile("\n" * line + code, f"{DOC}", "exec")
            try:
                exec(compiled, namespace)
            except Exception as e:  # noqa: BLE001 (reported with the block's line)
                raise AssertionError(f"docs/python.md:{line}: the block fails: {e!r}") from e
            ran += 1
    finally:
        os.chdir(old)
    assert ran >= 7
    # What the blocks wrote, as the text says.
    assert (tmp_path / "monitor.json").exists() and (tmp_path / "microwave.json").exists()
    # A few values the text states.
    assert round(namespace["r"].value, 6) == 0.166667
    assert namespace["results"][0].value == pytest.approx(1 / 16)
    assert namespace["results"][1].value == pytest.approx(12.0)
