-- The error catalogue and how a catalogue code is raised (src/errors.c).
\i sql/test_helpers.psql

-- every wire code of errors.md §3 (minus operation.*, which belong to /operations) is present
SELECT code, category, retryable, recommended_action, http_status, sqlstate
  FROM syncular.error_catalog() WHERE http_status IS NOT NULL ORDER BY code;
-- host storage codes never travel on the wire
SELECT code, category, retryable, sqlstate, http_status IS NULL AS never_on_wire
  FROM syncular.error_catalog() WHERE code LIKE 'sync.storage.%' ORDER BY code;

-- _raise: SQLSTATE from the catalogue, fixed message, JSON detail {"code", "details"}
SELECT pg_temp.err($$SELECT syncular._raise('sync.invalid_request', 'bad frame', '{"offset": 3}')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.forbidden', 'write outside the grant')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.unknown_table', 'table is not served', '{"table": "x"}')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.schema_not_ready', 'server schema is not ready for this request', '{"logEpochChanged": true}')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.too_many_operations', 'too many operations')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.internal_error', 'internal error')$$);
SELECT pg_temp.err($$SELECT syncular._raise('sync.storage.writer_fence_rejected', 'fenced')$$);
-- a code outside the catalogue (a host code) is raised as invalid input
SELECT pg_temp.err($$SELECT syncular._raise('app.quota', 'over quota', '{"limit": 5}')$$);
-- misuse
SELECT pg_temp.err($$SELECT syncular._raise(NULL, 'x')$$);
-- the detail is valid JSON
SELECT (regexp_replace(pg_temp.err($$SELECT syncular._raise('sync.forbidden', 'x', '{"a": [1, "two"]}')$$),
        '^.*\| ', ''))::jsonb AS detail;
