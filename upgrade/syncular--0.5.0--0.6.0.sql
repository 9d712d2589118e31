-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

-- The two hook rules of the round path in C (src/hook_records.c): the validator rejection
-- decoding and the reaction records' checks and enqueue; the PL/pgSQL helpers only they used go.
CREATE OR REPLACE FUNCTION syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
RETURNS jsonb LANGUAGE C IMMUTABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_validator_rejection';

CREATE OR REPLACE FUNCTION syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
                                            commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE C SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'syncular_enqueue_reactions';
COMMENT ON FUNCTION syncular._enqueue_reactions(text, text, text, bigint, jsonb, bigint) IS
$$Internal; called by the C push engine with the reaction planner's result for a new, validated commit, in the push transaction (push-and-pull.md §2.8; §6.9). Rejected commits and replays never call it.
Arguments: partition, client_id, client_commit_id, commit_seq of the commit; records = JSON array of {key, type, version, payload, maxAttempts?} (SQL NULL, JSON null and [] enqueue nothing); now_ms = creation time in epoch ms (NULL = the engine''s clock, syncular.now_ms(); the engine passes the commit's created_at_ms).
Rules (all records are checked before any is written): at most 100 records; each an object with no other members; key a non-empty string of at most 256 UTF-8 bytes, unique within the call; type a non-empty string of at most 128 UTF-8 bytes; version an integer 1..2147483647; payload present, any JSON value, compact JSON (syncular._compact_json) at most 65,536 UTF-8 bytes, nesting of objects/arrays at most 16 levels ({"a":1} is 1 level); maxAttempts absent/null (= 10) or an integer 1..100. Integral JSON numbers such as 3.0 count as integers.
Each record becomes a sync_reactions row: idempotency_key = compact JSON text ["<partition>","<client_id>","<client_commit_id>","<key>"] (JSON string escaping as JSON.stringify), status pending, attempts 0, created_at_ms = available_at_ms = now. A row whose idempotency_key already exists is left as it is (ON CONFLICT DO NOTHING).
Returns the number of rows inserted.
Errors: sync.storage.invalid_reaction (SQLSTATE 22023; message "invalid reaction record"; details {index?, field, reason, ...}: field is partition / clientId / clientCommitId / commitSeq (reason missing), records (not_array; too_many with count, limit), or the record member key / type / version / payload / maxAttempts / record / <unknown member>, with reason missing, not_string, empty, too_long (bytes, limit), duplicate, not_positive_i32, too_large (bytes, limit), too_deep (limit), out_of_range (min, max), not_object, unknown_field). The engine turns any error here into a server failure (sync.internal_error, nothing persisted).$$;

DROP FUNCTION syncular._reaction_text(integer, jsonb, text, integer);
DROP FUNCTION syncular._reaction_int(jsonb, bigint, bigint);
DROP FUNCTION syncular._invalid_reaction(integer, text, text, jsonb);
