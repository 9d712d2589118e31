-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit

-- Live query watches (REMOTE.md §6): the batched rerun of a partition's watches (65_operations.sql).
CREATE FUNCTION syncular.operations_watch_rerun(partition text, watches jsonb)
RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_operations_watch_rerun';
COMMENT ON FUNCTION syncular.operations_watch_rerun(text, jsonb) IS
$$The database half of live query watches (REMOTE.md revision 1 §6; docs/operations-protocol.md "Live query watches"): one call per partition and wake-up reruns, in ONE snapshot, every watch of the batch whose answer may have changed since its last snapshot, and only those.
partition: what host authentication decided for the watches' sockets; watches: a JSON array of {w, seq, actorId, message}: w = the caller's integer handle of the watch, seq = the maxCommitSeq of its last snapshot (-1: none yet, the registration snapshot, which also checks the clientId as §1), actorId = the authenticated actor, message = the client's encoded watch message {revision: 1, kind: "watch", watchId, clientId, operationId, params} (the tagged value encoding of §4).
A watch reruns when it has no snapshot yet, or when a change committed after its seq (up to the partition's head, read in the same snapshot) is on one of the query's tables and, for a scoped query, its row carries every scope value the query covers on that table: a commit on another scope value (another list) does not rerun it. Past 10000 changes in the window every watch of the window reruns.
Returns one row per watch, in batch order: w; max_commit_seq = the maxCommitSeq the watch's answer now reflects (the partition's head when it did not rerun); outcome = 'unchanged' (not rerun: no change of the window can alter its answer), 'snapshot' or 'error'; message = NULL when unchanged, else the encoded server message {revision: 1, kind: "snapshot", watchId, operationId, rows, maxCommitSeq} (the same query, authorization, partition binding and maxRows as syncular.operations_http) or {revision: 1, kind: "watch_error", watchId, code, message, retryable} with the codes of operations_http (operation.invalid_request for a message that is not a watch message, operation.unknown, operation.forbidden, operation.result_too_large, operation.query_failed, operation.execution_failed, sync.invalid_client_id); each rerun runs in its own subtransaction.
Errors (the whole call): operation.invalid_request (SQLSTATE 22023) for a NULL or empty partition, watches not an array, or an element without integer w and seq and a non-empty actorId.
SECURITY DEFINER with search_path = pg_catalog, pg_temp: the gateway role needs only EXECUTE, as for operations_http.$$;
REVOKE EXECUTE ON FUNCTION syncular.operations_watch_rerun(text, jsonb) FROM PUBLIC;
