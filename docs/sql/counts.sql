-- Augur's counts table from a step table `steps(trace_id, step, state)` (one row per step).
-- Standard SQL (window functions); runs unchanged on DataFusion, DuckDB, Spark SQL, Ballista.
-- Every row is one count: kind 'initial' (from = the first state), 'transition' (from -> to),
-- 'end' (from = the last state); trace and step totals are the 'initial' and 'step' rows.
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
