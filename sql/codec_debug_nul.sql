-- codec_debug_nul: syncular.debug_render of valid messages whose strings hold what jsonb cannot
-- store: U+0000 (as a \u0000 escape inside a json-typed field, or as a NUL byte in a str field)
-- and lone UTF-16 surrogates (\ud800 in a json-typed field).  Such a string renders with the
-- escape spelled out: the backslash is escaped, so jsonb holds the six characters "\u0000"
-- (SPEC §11 is a debugging aid; nothing parses renderings).  Everything else in the message
-- renders as usual.  The messages are built with syncular.debug_encode around a placeholder
-- (jsonb cannot hold the character either), then the placeholder bytes are replaced by bytes of
-- the same length, so every length prefix stays right.
\set VERBOSITY terse

-- patch(bytes, placeholder, replacement): every occurrence of the placeholder replaced
CREATE FUNCTION pg_temp.patch(b bytea, placeholder text, repl bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  p bytea := convert_to(placeholder, 'UTF8');
  i int;
BEGIN
  IF length(p) <> length(repl) THEN
    RAISE EXCEPTION 'placeholder and replacement differ in length';
  END IF;
  LOOP
    i := position(p IN b);
    EXIT WHEN i = 0;
    b := overlay(b PLACING repl FROM i FOR length(p));
  END LOOP;
  RETURN b;
END $$;

-- try(sql): 'ok: <result>' or '<SQLSTATE> <message> | <DETAIL>'
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text; r text;
BEGIN
  EXECUTE q INTO r;
  RETURN 'ok: ' || coalesce(r, 'NULL');
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || ' | ' || coalesce(det, '');
END $$;

-- a request: params and bootstrapState (json-typed) carry \u0000 and lone surrogates; the
-- clientId (str) carries a NUL byte.  Placeholders: ZZZZZZ -> \u0000, YYYYYY -> \ud800 (a lone
-- high surrogate), VVVVVV -> \udc00 (a lone low one), WWWWWWWWWWWW -> \ud800\u0041 (high, then
-- not a low one), PPPPPPPPPPPP -> \ud83d\ude00 (a pair: U+1F600, stored as is), "c-X-1" -> "c-<NUL>-1"
\set req '{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c-X-1", "schemaVersion": 1}, {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}, {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {"list_id": ["a"]}, "params": {"q": "aZZZZZZb", "ZZZZZZ": [1], "s": "YYYYYY", "l": "VVVVVV", "t": "WWWWWWWWWWWW", "pair": "PPPPPPPPPPPP"}, "cursor": -1, "bootstrapState": {"asOfCommitSeq": 1, "tables": ["todos"], "tableIndex": 0, "rowCursor": "ZZZZZZ"}}]}'
SELECT pg_temp.patch(pg_temp.patch(pg_temp.patch(pg_temp.patch(pg_temp.patch(pg_temp.patch(
         syncular.debug_encode(:'req'),
         'ZZZZZZ', convert_to('\u0000', 'UTF8')), 'YYYYYY', convert_to('\ud800', 'UTF8')),
         'VVVVVV', convert_to('\udc00', 'UTF8')), 'WWWWWWWWWWWW', convert_to('\ud800\u0041', 'UTF8')),
         'PPPPPPPPPPPP', convert_to('\ud83d\ude00', 'UTF8')),
         'c-X-1', '\x632d002d31'::bytea) AS req_bytes \gset
SELECT pg_temp.try($$SELECT syncular.debug_render('$$ || :'req_bytes' || $$')::text$$) AS request;
-- the rendered escapes are text, readable with ->>
SELECT f ->> 'clientId' AS client_id FROM jsonb_array_elements(syncular.debug_render(:'req_bytes') -> 'frames') f
 WHERE f ->> 'type' = 'REQ_HEADER';
SELECT f -> 'params' ->> 'q' AS q, f -> 'params' ->> 's' AS s, f -> 'params' ->> 'l' AS l,
       f -> 'params' ->> 't' AS t, f -> 'params' ->> 'pair' AS pair,
       f -> 'bootstrapState' ->> 'rowCursor' AS row_cursor
  FROM jsonb_array_elements(syncular.debug_render(:'req_bytes') -> 'frames') f WHERE f ->> 'type' = 'SUBSCRIPTION';

-- a response: SUB_END bootstrapState and ERROR details (PUSH_RESULT_DETAILS cannot carry one:
-- its members are tokens, field paths and control-free reference values, WF §3.4)
\set resp '{"magic": "SSP2", "wireVersion": 3, "msgKind": "response", "frames": [{"type": "RESP_HEADER", "latestSchemaVersion": 1, "logEpoch": "e1", "resetRequired": false}, {"type": "SUB_START", "id": "s1", "status": "active", "reasonCode": "", "effectiveScopes": {"list_id": ["a"]}, "bootstrap": true}, {"type": "SUB_END", "nextCursor": 3, "bootstrapState": {"asOfCommitSeq": 3, "tables": ["todos"], "tableIndex": 0, "rowCursor": "ZZZZZZ"}}, {"type": "ERROR", "code": "sync.internal_error", "message": "m", "category": "internal", "retryable": true, "recommendedAction": "retryLater", "details": {"x": "ZZZZZZ"}}]}'
SELECT pg_temp.patch(syncular.debug_encode(:'resp'), 'ZZZZZZ', convert_to('\u0000', 'UTF8')) AS resp_bytes \gset
SELECT f ->> 'type' AS type, f - 'type' AS fields
  FROM jsonb_array_elements(syncular.debug_render(:'resp_bytes') -> 'frames') f
 WHERE f ->> 'type' IN ('SUB_END', 'ERROR');

-- an SSG2 segment: a json column value and a string column value
\set seg '{"magic": "SSG2", "formatVersion": 1, "table": "t", "schemaVersion": 1, "columns": [{"name": "id", "type": "string", "nullable": false}, {"name": "j", "type": "json", "nullable": true}], "blocks": [[{"serverVersion": 1, "values": {"id": "a-X", "j": {"k": "ZZZZZZ"}}}]]}'
SELECT syncular.debug_render(pg_temp.patch(pg_temp.patch(syncular.debug_encode(:'seg'), 'ZZZZZZ',
         convert_to('\u0000', 'UTF8')), 'a-X', '\x612d00'::bytea)) -> 'blocks' AS segment_blocks;

-- a backslash the message really holds is not mistaken for an escape: "\\u0000" (an escaped
-- backslash, then u0000) renders as before
SELECT syncular.debug_render(syncular.debug_encode(
  '{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c\\u0000", "schemaVersion": 1}, {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]}'))
  -> 'frames' -> 0 ->> 'clientId' AS literal_backslash;

-- a number beyond numeric's range (valid JSON) is a value jsonb truly cannot hold: a catalogue
-- code, not a bare data exception
SELECT pg_temp.try($$SELECT (syncular.debug_render('$$ || pg_temp.patch(syncular.debug_encode(
  '{"magic": "SSP2", "wireVersion": 3, "msgKind": "request", "frames": [{"type": "REQ_HEADER", "clientId": "c", "schemaVersion": 1}, {"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}, {"type": "SUBSCRIPTION", "id": "s1", "table": "todos", "scopes": {}, "params": {"n": 12345678}, "cursor": -1}]}'),
  '12345678', convert_to('1e999999', 'UTF8'))::text || $$') IS NULL)::text$$) AS huge_number;
