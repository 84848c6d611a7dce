-- Augur's counts table from a step table `steps(trace_id, step, state)` (one row per step).
-- Runs unchanged on DataFusion, DuckDB and Spark SQL (each tested against
-- `augur learn --counts-only`: crates/python/tests/test_engine_counts.py). Spellings that are
-- not common to the three are avoided: `CAST(NULL AS STRING)`, not `VARCHAR` (Spark 4 wants
-- a length), not a bare `NULL` (DataFusion would type the column as null).
-- Every row is one count: kind 'initial' (from = the first state), 'transition' (from -> to),
-- 'end' (from = the last state), 'step' (the steps taken in from; these rows name every state,
-- and their order, by name here, is the state numbering).
-- The rows become the counts file in Python, then a model:
--   augur_mc.counts_from_rows(rows, "counts.json")
--   augur learn --from-counts counts.json -o model.json
WITH ordered AS (
    SELECT trace_id, state,
           LEAD(state) OVER (PARTITION BY trace_id ORDER BY step) AS next_state,
           ROW_NUMBER() OVER (PARTITION BY trace_id ORDER BY step) AS pos,
           COUNT(*) OVER (PARTITION BY trace_id) AS len
    FROM steps
)
SELECT 'initial' AS kind, state AS from_state, CAST(NULL AS STRING) AS to_state, COUNT(*) AS n
    FROM ordered WHERE pos = 1 GROUP BY state
UNION ALL
SELECT 'transition', state, next_state, COUNT(*)
    FROM ordered WHERE next_state IS NOT NULL GROUP BY state, next_state
UNION ALL
SELECT 'end', state, CAST(NULL AS STRING), COUNT(*)
    FROM ordered WHERE pos = len GROUP BY state
UNION ALL
SELECT 'step', state, CAST(NULL AS STRING), COUNT(*)
    FROM ordered GROUP BY state
ORDER BY kind, from_state, to_state
