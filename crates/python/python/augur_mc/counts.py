"""Counts from a SQL engine's rows: :func:`counts_from_rows`.

``docs/sql/counts.sql`` counts a step table ``steps(trace_id, step, state)`` where it lives
(DataFusion, DuckDB, Spark SQL); its rows, one count per row (``kind``, ``from_state``,
``to_state``, ``n``, optionally ``category``), become here the counts file ``augur learn
--counts-only`` writes, which ``augur learn --from-counts`` learns from.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import ParameterError

#: The columns of a counts table, in the order of ``docs/sql/counts.sql`` (``category`` may
#: be absent).
COLUMNS = ("kind", "from_state", "to_state", "n", "category")

_Row = Tuple[str, str, Optional[str], int, Optional[str]]


def _bad(message: str) -> ParameterError:
    e = ParameterError(message)
    e.message, e.file, e.line, e.column = message, None, None, None
    return e


def _is_pandas(rows: Any) -> bool:
    return type(rows).__module__.startswith("pandas") and hasattr(rows, "to_dict")


def _records(rows: Any) -> Tuple[Optional[Sequence[str]], Iterable[Any]]:
    """The column names (when the input has them) and the rows, from what an engine returns."""
    if hasattr(rows, "to_pylist"):  # a pyarrow Table / RecordBatch, a DataFusion DataFrame
        return None, rows.to_pylist()
    if hasattr(rows, "read_all"):  # a pyarrow RecordBatchReader
        return None, rows.read_all().to_pylist()
    if _is_pandas(rows):  # a pandas DataFrame
        return [str(c) for c in rows.columns], rows.to_dict("records")
    if hasattr(rows, "to_dicts"):  # a Polars DataFrame
        return None, rows.to_dicts()
    if hasattr(rows, "fetchall") and hasattr(rows, "columns"):  # a DuckDB relation
        return list(rows.columns), rows.fetchall()
    if hasattr(rows, "fetchall") and getattr(rows, "description", None):  # a DB-API cursor
        return [d[0] for d in rows.description], rows.fetchall()
    if hasattr(rows, "collect") and hasattr(rows, "columns"):  # a Spark DataFrame
        return list(rows.columns), rows.collect()
    if hasattr(rows, "__arrow_c_stream__"):  # anything that speaks the Arrow stream protocol
        import pyarrow

        return None, pyarrow.table(rows).to_pylist()
    if isinstance(rows, (str, bytes, Mapping)) or not hasattr(rows, "__iter__"):
        raise _bad(
            f"counts_from_rows: rows are a {type(rows).__name__}; expected a list of rows "
            "(tuples or dicts), a pyarrow Table or RecordBatch, a pandas DataFrame, a DuckDB "
            "relation, a DataFusion or Spark DataFrame"
        )
    return None, rows


def _null(v: Any) -> bool:
    """None, or a float NaN (pandas' null in an object column)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _row(i: int, raw: Any, names: Optional[Sequence[str]]) -> _Row:
    """Row ``i`` (from 1) as ``(kind, from_state, to_state, n, category)``, checked."""
    where = f"counts_from_rows: row {i}"
    if hasattr(raw, "asDict"):  # a Spark Row
        raw = raw.asDict()
    elif hasattr(raw, "_asdict"):  # a named tuple
        raw = raw._asdict()
    if isinstance(raw, Mapping):
        rec = dict(raw)
    elif isinstance(raw, (tuple, list)):
        cols = list(names) if names is not None else list(COLUMNS[: len(raw)])
        if len(raw) != len(cols) or len(raw) not in (4, 5):
            raise _bad(
                f"{where} has {len(raw)} values; expected 4 or 5: {', '.join(COLUMNS)}"
                " (the columns of docs/sql/counts.sql, category optional)"
            )
        rec = dict(zip(cols, raw))
    else:
        raise _bad(f"{where} is a {type(raw).__name__}; expected a tuple or a dict")
    for c in COLUMNS[:4]:
        if c not in rec:
            raise _bad(
                f"{where} has no column `{c}` (it has {', '.join(map(str, rec)) or 'none'}); "
                f"the columns are {', '.join(COLUMNS)} (category optional), as "
                "docs/sql/counts.sql names them"
            )

    def text(c: str, nullable: bool) -> Optional[str]:
        v = rec.get(c)
        if _null(v):
            if nullable:
                return None
            raise _bad(f"{where}: column `{c}` is null")
        if not isinstance(v, str):
            raise _bad(f"{where}: column `{c}` is {v!r} (a {type(v).__name__}); expected a string")
        return v

    n = rec["n"]
    if _null(n):
        raise _bad(f"{where}: column `n` is null")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise _bad(f"{where}: column `n` is {n!r} (a {type(n).__name__}); expected an integer count")
    n = int(n)
    if not 0 <= n < 2**64:
        raise _bad(f"{where}: column `n` is {n}; a count is from 0 to 2^64 - 1")
    kind, frm = text("kind", False), text("from_state", False)
    return kind, frm, text("to_state", True), n, text("category", True)  # type: ignore[return-value]


def counts_from_rows(
    rows: Any,
    path: Union[None, str, "os.PathLike[str]"] = None,
    *,
    order: int = 1,
    end_state: Optional[str] = None,
) -> Dict[str, Any]:
    """The counts of ``docs/sql/counts.sql``'s rows, as the counts file ``augur learn
    --counts-only`` writes (returned as a dict; written to ``path`` when given, the very
    bytes of ``--counts-only``), for ``augur learn --from-counts``.

    ``rows`` is what an engine returns: a pyarrow ``Table``, ``RecordBatch`` or
    ``RecordBatchReader``, a DataFusion DataFrame, a DuckDB relation or cursor, a Spark
    DataFrame (collected), a pandas or Polars DataFrame, or a list of rows (tuples in the
    column order ``kind, from_state, to_state, n[, category]``, dicts, Spark ``Row``\\ s).
    Rows are numbered from 1 in errors. A missing column, a null or mistyped value, an unknown
    ``kind``, a key given twice, or counts that cannot be those of traces (a ``step`` row
    that does not match the moves and ends of its state; checked as ``--from-counts``
    checks a file) raise :class:`ParameterError` naming the row and the column.

    The states are numbered in the order of the ``step`` rows (the SQL orders them by name);
    ``order`` is the chain's order (above 1, each state is the JSON array of its names) and
    ``end_state`` the header's informational ``end_state``.
    """
    names, raw = _records(rows)
    checked: List[_Row] = [_row(i, r, names) for i, r in enumerate(raw, 1)]
    if not checked:
        raise _bad("counts_from_rows: no rows (the SQL counted no steps: is the step table empty?)")
    text = _native.counts_from_rows(checked, order, end_state)
    if path is not None:
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return json.loads(text)
