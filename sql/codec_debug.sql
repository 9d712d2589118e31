-- codec_debug: syncular.debug_render / syncular.debug_encode beyond the golden vectors:
-- wire-3 fields, compact re-serialization of json-typed fields, segments, error paths.
\set VERBOSITY terse

-- try(sql): 'ok: <result>' or '<SQLSTATE> <message> | <code> <details>'
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || coalesce((det::jsonb ->> 'code') || ' ' || coalesce((det::jsonb -> 'details')::text, ''), det, '');
END $$;

-- a wire-3 request: exact bytes, and the rendering comes back equal
\set req '{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c1", "schemaVersion": 1, "logEpoch": "e1"}, {"type": "PULL_HEADER", "limitCommits": 10, "limitSnapshotRows": 0, "maxSnapshotPages": -1, "accept": 1}, {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["b", "a"]}, "params": {"z": [1, 2], "a": {"k": "v"}}, "cursor": -1, "bootstrapState": {"asOfCommitSeq": 5, "tables": ["todos"], "tableIndex": 0, "rowCursor": null}}]}'
SELECT encode(syncular.debug_encode(:'req'), 'hex') AS request_hex;
SELECT syncular.debug_render(syncular.debug_encode(:'req')) = :'req'::jsonb AS request_roundtrip;
-- json-typed fields are re-serialized compact (jsonb key order)
SELECT position(convert_to('{"a":{"k":"v"},"z":[1,2]}', 'UTF8') IN syncular.debug_encode(:'req')) > 0 AS params_compact,
       position(convert_to('{"tables":["todos"],"rowCursor":null,"tableIndex":0,"asOfCommitSeq":5}', 'UTF8') IN syncular.debug_encode(:'req')) > 0 AS token_compact;

-- a wire-3 response with every response frame kind
\set resp '{"magic": "SSP2", "wireVersion": 3, "msgKind": "response", "frames": [{"type": "RESP_HEADER", "latestSchemaVersion": 2, "logEpoch": "e1", "resetRequired": false}, {"type": "LEASE", "leaseId": "l1", "expiresAtMs": 1782994500000}, {"type": "PUSH_RESULT", "clientCommitId": "c-1", "status": "applied", "commitSeq": 3, "results": [{"opIndex": 0, "status": "applied"}]}, {"type": "PUSH_RESULT", "clientCommitId": "c-2", "status": "rejected", "results": [{"opIndex": 0, "status": "conflict", "code": "sync.version_conflict", "message": "m", "serverVersion": 7, "serverRow": "AA==", "conflictColumns": "Ag=="}, {"opIndex": 1, "status": "error", "code": "sync.forbidden", "message": "no", "retryable": false}]}, {"type": "PUSH_RESULT_DETAILS", "clientCommitId": "c-2", "entries": [{"opIndex": 1, "details": {"reason": "scope.denied", "fieldPaths": ["list_id"]}}]}, {"type": "SUB_START", "id": "s1", "status": "active", "reasonCode": "", "effectiveScopes": {"list_id": ["a"]}, "bootstrap": false}, {"type": "COMMIT", "commitSeq": 3, "createdAtMs": 1, "actorId": "u1", "tables": ["todos"], "changes": [{"tableIndex": 0, "rowId": "t1", "op": "upsert", "rowVersion": 1, "scopes": {"list_id": "a"}, "row": "AAE="}, {"tableIndex": 0, "rowId": "t2", "op": "delete", "scopes": {"list_id": "a"}}]}, {"type": "SUB_END", "nextCursor": 3}, {"type": "SUB_START", "id": "s2", "status": "active", "reasonCode": "", "effectiveScopes": {"list_id": ["a"]}, "bootstrap": true}, {"type": "SEGMENT_REF", "segmentId": "sha256:00", "mediaType": "rows", "table": "todos", "byteLength": 1, "rowCount": 1, "asOfCommitSeq": 3, "scopeDigest": "d", "rowCursor": "a", "nextRowCursor": "b", "url": "https://x", "urlExpiresAtMs": 5}, {"type": "SUB_END", "nextCursor": 3, "bootstrapState": {"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0, "rowCursor": "b"}}, {"type": "ERROR", "code": "sync.internal_error", "message": "boom", "category": "internal", "retryable": true, "recommendedAction": "retryLater", "details": {"x": 1}}]}'
SELECT syncular.debug_render(syncular.debug_encode(:'resp')) = :'resp'::jsonb AS response_roundtrip;
SELECT f->>'type' AS type, f FROM jsonb_array_elements(syncular.debug_render(syncular.debug_encode(:'resp'))->'frames') f
 WHERE f->>'type' IN ('RESP_HEADER', 'PUSH_RESULT_DETAILS');

-- an SSG2 segment document: every type; a non-nullable float rendered null is encoded as NaN
\set seg '{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 2, "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "n", "type": "integer", "nullable": true}, {"name": "f", "type": "float", "nullable": false}, {"name": "b", "type": "boolean", "nullable": false}, {"name": "j", "type": "json", "nullable": true}, {"name": "y", "type": "bytes", "nullable": true}, {"name": "c", "type": "crdt", "nullable": true}, {"name": "r", "type": "blob_ref", "nullable": true}], "blocks": [[{"serverVersion": 1, "values": {"id": "a", "n": 5, "f": null, "b": true, "j": [1, {"k": null}], "y": "AAE=", "c": "", "r": {"blobId": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "byteLength": 3}}}], [{"serverVersion": 9007199254740991, "values": {"id": "b", "n": null, "f": 2.5, "b": false, "j": null, "y": null, "c": null, "r": null}}]]}'
SELECT syncular.debug_render(syncular.debug_encode(:'seg')) = :'seg'::jsonb AS segment_roundtrip;
SELECT encode(substr(syncular.debug_encode(:'seg'), 1, 16), 'hex') AS segment_head;
-- NaN on the wire: 8 bytes 00 00 00 00 00 00 f8 7f somewhere in the first row
SELECT position('\x000000000000f87f'::bytea IN syncular.debug_encode(:'seg')) > 0 AS nan_encoded;

-- debug_render errors carry the decode error's catalogue code
SELECT t, pg_temp.try(q) FROM (VALUES
  ('empty',              $$SELECT syncular.debug_render('\x')$$),
  ('garbage',            $$SELECT syncular.debug_render('\x0102030405')$$),
  ('SSG2 magic only',    $$SELECT syncular.debug_render(convert_to('SSG2', 'UTF8'))$$),
  ('empty commit',       $$SELECT syncular.debug_render(syncular.debug_encode('{"magic":"SSP2","wireVersion":3,"msgKind":"request","frames":[{"type":"REQ_HEADER","clientId":"c","schemaVersion":1},{"type":"PUSH_COMMIT","clientCommitId":"x","operations":[]}]}'))$$)
) AS x(t, q);

-- debug_encode: invalid documents name the field; encoder refusals keep the codec's code
SELECT t, pg_temp.try(q) FROM (VALUES
  ('not an object',      $$SELECT syncular.debug_encode('[]')$$),
  ('bad magic',          $$SELECT syncular.debug_encode('{"magic": "SSP1"}')$$),
  ('no msgKind',         $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "frames": []}')$$),
  ('bad msgKind',        $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "x", "frames": []}')$$),
  ('frames not array',   $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": {}}')$$),
  ('frame not object',   $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [1]}')$$),
  ('unknown frame type', $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "NOPE"}]}')$$),
  ('missing field',      $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "schemaVersion": 1}]}')$$),
  ('wrong type',         $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": 5, "schemaVersion": 1}]}')$$),
  ('i32 out of range',   $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 2147483648}]}')$$),
  ('fractional',         $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1.5}]}')$$),
  ('bad enum',           $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1}, {"type": "PUSH_COMMIT", "clientCommitId": "x", "operations": [{"table": "t", "rowId": "r", "op": "merge"}]}]}')$$),
  ('bad base64',         $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1}, {"type": "PUSH_COMMIT", "clientCommitId": "x", "operations": [{"table": "t", "rowId": "r", "op": "upsert", "payload": "%%"}]}]}')$$),
  ('scope value type',   $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1}, {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}, {"type": "SUBSCRIPTION", "id": "s", "table": "t", "scopes": {"k": [1]}, "cursor": 0}]}')$$),
  ('grammar',            $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "response", "frames": [{"type": "RESP_HEADER", "logEpoch": "e", "resetRequired": false}, {"type": "SUB_END", "nextCursor": 1}]}')$$),
  ('empty commit',       $$SELECT syncular.debug_encode('{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1}, {"type": "PUSH_COMMIT", "clientCommitId": "x", "operations": []}]}')$$),
  ('segment bad type',   $$SELECT syncular.debug_encode('{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 1, "columns": [{"name": "id", "type": "text", "nullable": false}], "blocks": []}')$$),
  ('segment bad value',  $$SELECT syncular.debug_encode('{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 1, "columns": [{"name": "id", "type": "string", "nullable": false}], "blocks": [[{"serverVersion": 1, "values": {"id": 5}}]]}')$$),
  ('segment null id',    $$SELECT syncular.debug_encode('{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 1, "columns": [{"name": "id", "type": "string", "nullable": false}], "blocks": [[{"serverVersion": 1, "values": {}}]]}')$$),
  ('segment version 0',  $$SELECT syncular.debug_encode('{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 1, "columns": [{"name": "id", "type": "string", "nullable": false}], "blocks": [[{"serverVersion": 0, "values": {"id": "a"}}]]}')$$)
) AS x(t, q);
