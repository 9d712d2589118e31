-- A simulated Syncular client, in plpgsql, for the demo: it keeps what an SDK keeps (log epoch,
-- per-subscription cursor and resume token, a local replica of the rows) and speaks SSP2 wire 3
-- to syncular.handle().  Every round is printed as a readable transcript rendered with
-- syncular.debug_render().
CREATE SCHEMA demo;

CREATE TABLE demo.clients (
  client_id  text PRIMARY KEY,
  actor_id   text NOT NULL,
  epoch      text
);
CREATE TABLE demo.subscriptions (
  client_id        text,
  id               text,
  tbl              text,
  scopes           jsonb,
  cursor           bigint NOT NULL DEFAULT -1,
  bootstrap_state  jsonb,
  PRIMARY KEY (client_id, id)
);
CREATE TABLE demo.replica (            -- the client's local SQLite, simulated
  client_id  text,
  tbl        text,
  row_id     text,
  version    bigint,
  row_data   jsonb,
  PRIMARY KEY (client_id, tbl, row_id)
);
CREATE TABLE demo.transcript (n serial, line text);

CREATE FUNCTION demo.say(line text) RETURNS void LANGUAGE sql AS
$$ INSERT INTO demo.transcript(line) VALUES (line) $$;
-- A demo claim that must hold: 'ok: <what>', else an error (psql ON_ERROR_STOP: the demo exits 3).
CREATE FUNCTION demo.check(ok boolean, what text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'demo check failed: %', what;
  END IF;
  RETURN 'ok: ' || what;
END $$;

-- A push payload as a row object: sparse at wire 3, full before; its size when it does not
-- decode against the registered table (e.g. a vector written for another layout).
CREATE FUNCTION demo.show_payload(tbl text, payload bytea, wire int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF wire >= 3 THEN
    RETURN syncular.decode_sparse_row(tbl, payload)::text;
  END IF;
  RETURN syncular.decode_row(tbl, payload)::text;
EXCEPTION WHEN OTHERS THEN
  RETURN format('(%s-byte row for another layout)', length(payload));
END $$;

-- One line per frame of a rendered message.  req: the request a response answers (a conflict's
-- serverRow is decoded with the table of the operation it names).
CREATE FUNCTION demo.describe(msg jsonb, arrow text, req jsonb DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
DECLARE f jsonb; ch jsonb; r jsonb; seg jsonb; blk jsonb; line text; tbl text;
BEGIN
  FOR f IN SELECT * FROM jsonb_array_elements(msg->'frames') LOOP
    line := arrow || ' ' || rpad(f->>'type', 19);
    CASE f->>'type'
    WHEN 'REQ_HEADER' THEN
      line := line || format('client=%s schema=%s epoch=%s', f->>'clientId', f->>'schemaVersion',
                             coalesce(f->>'logEpoch', '(none: acquire)'));
    WHEN 'RESP_HEADER' THEN
      line := line || format('epoch=%s resetRequired=%s latestSchema=%s%s', f->>'logEpoch',
                             f->>'resetRequired', f->>'latestSchemaVersion',
                             coalesce(' requiredSchema=' || (f->>'requiredSchemaVersion'), ''));
    WHEN 'PUSH_COMMIT' THEN
      line := line || format('%s: ', f->>'clientCommitId') || (SELECT string_agg(format('%s %s/%s%s %s',
                o->>'op', o->>'table', o->>'rowId',
                coalesce(' base=' || (o->>'baseVersion'), ''),
                CASE WHEN o ? 'payload' THEN demo.show_payload(o->>'table', decode(o->>'payload', 'base64'),
                                                          (msg->>'wireVersion')::int) ELSE '' END), '; ')
              FROM jsonb_array_elements(f->'operations') o);
    WHEN 'PULL_HEADER' THEN
      line := line || format('limitCommits=%s limitSnapshotRows=%s accept=%s', f->>'limitCommits',
                             f->>'limitSnapshotRows', f->>'accept');
    WHEN 'SUBSCRIPTION' THEN
      line := line || format('%s table=%s scopes=%s cursor=%s%s', f->>'id', f->>'table', f->>'scopes',
                             f->>'cursor', coalesce(' resume=' || (f->>'bootstrapState'), ''));
    WHEN 'PUSH_RESULT' THEN
      line := line || format('%s %s%s', f->>'clientCommitId', f->>'status',
                             coalesce(' commitSeq=' || (f->>'commitSeq'), ''));
      FOR r IN SELECT * FROM jsonb_array_elements(f->'results') LOOP
        IF r->>'status' <> 'applied' THEN
          line := line || format(' | op %s %s %s "%s"%s', r->>'opIndex', r->>'status', r->>'code',
                                 r->>'message', coalesce(' serverVersion=' || (r->>'serverVersion'), ''));
          IF r->>'status' = 'conflict' THEN
            SELECT c->'operations'->(r->>'opIndex')::int->>'table' INTO tbl
              FROM jsonb_array_elements(req->'frames') c
             WHERE c->>'type' = 'PUSH_COMMIT' AND c->>'clientCommitId' = f->>'clientCommitId';
            line := line || format(' serverRow=%s conflictColumns=%s',
              CASE WHEN tbl IS NULL THEN r->>'serverRow'
                   ELSE syncular.decode_row(tbl, decode(r->>'serverRow', 'base64'))::text END,
              coalesce((SELECT string_agg(col->>'name', ',' ORDER BY i)
                          FROM syncular.sync_settings s,
                               jsonb_array_elements((SELECT t->'columns' FROM jsonb_array_elements(s.compiled->'tables') t
                                                      WHERE t->>'name' = tbl)) WITH ORDINALITY x(col, i)
                         WHERE get_byte(decode(r->>'conflictColumns', 'base64'), ((i - 1) / 8)::int)
                               & (1 << ((i - 1) % 8)::int) <> 0), '-'));
          END IF;
        END IF;
      END LOOP;
    WHEN 'SUB_START' THEN
      line := line || format('%s %s%s scopes=%s bootstrap=%s', f->>'id', f->>'status',
                             CASE WHEN f->>'reasonCode' <> '' THEN ' ' || (f->>'reasonCode') ELSE '' END,
                             f->>'effectiveScopes', f->>'bootstrap');
    WHEN 'COMMIT' THEN
      line := line || format('seq=%s actor=%s ', f->>'commitSeq', f->>'actorId') ||
        (SELECT string_agg(format('%s %s v%s %s', c->>'op', c->>'rowId', coalesce(c->>'rowVersion', '-'),
                 CASE WHEN c ? 'row' THEN syncular.decode_row(f->'tables'->>0, decode(c->>'row', 'base64'))::text ELSE '' END), '; ')
           FROM jsonb_array_elements(f->'changes') c);
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      line := line || format('SSG2 table=%s rows=%s', seg->>'table',
        (SELECT count(*) FROM jsonb_array_elements(seg->'blocks') b, jsonb_array_elements(b) x));
      PERFORM demo.say(line);
      FOR blk IN SELECT * FROM jsonb_array_elements(seg->'blocks') LOOP
        FOR r IN SELECT * FROM jsonb_array_elements(blk) LOOP
          PERFORM demo.say(format('%s                 v%s %s', arrow, r->>'serverVersion', r->>'values'));
        END LOOP;
      END LOOP;
      CONTINUE;
    WHEN 'SEGMENT_REF' THEN
      line := line || format('%s table=%s rows=%s bytes=%s pin=%s id=%s%s%s', f->>'mediaType', f->>'table',
                             f->>'rowCount', f->>'byteLength', f->>'asOfCommitSeq', left(f->>'segmentId', 19) || '…',
                             coalesce(' rowCursor=' || (f->>'rowCursor'), ''),
                             coalesce(' nextRowCursor=' || (f->>'nextRowCursor'), ''));
    WHEN 'SUB_END' THEN
      line := line || format('nextCursor=%s%s', f->>'nextCursor',
                             coalesce(' resume=' || (f->>'bootstrapState'), ''));
    WHEN 'ERROR' THEN
      line := line || format('%s "%s"', f->>'code', f->>'message');
    ELSE
      line := line || (f - 'type')::text;
    END CASE;
    PERFORM demo.say(line);
  END LOOP;
END $$;

-- One sync round for a client: push `commits` (the outbox), pull every subscription, apply what
-- comes back to the local replica, keep the epoch, cursors and resume tokens.  Returns the
-- rendered response.
CREATE FUNCTION demo.sync(p_client text, p_commits jsonb DEFAULT '[]', p_title text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  cl demo.clients;
  frames jsonb;
  req jsonb;
  resp jsonb;
  f jsonb;
  c jsonb;
  o jsonb;
  ops jsonb;
  s demo.subscriptions;
  cur_sub text;
  seg jsonb;
  r jsonb;
  http record;
BEGIN
  SELECT * INTO cl FROM demo.clients WHERE client_id = p_client;
  PERFORM demo.say('');
  PERFORM demo.say(format('── %s (client %s, actor %s) %s', coalesce(p_title, 'round'), p_client, cl.actor_id,
                          repeat('─', greatest(0, 60 - length(coalesce(p_title, 'round'))))));
  frames := jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client,
    'schemaVersion', (SELECT (compiled->>'version')::int FROM syncular.sync_settings), 'logEpoch', cl.epoch)));
  IF cl.epoch IS NOT NULL THEN            -- pushes only once the epoch is known (SPEC §2.1)
    FOR c IN SELECT * FROM jsonb_array_elements(p_commits) LOOP
      ops := '[]';
      FOR o IN SELECT * FROM jsonb_array_elements(c->'operations') LOOP
        ops := ops || jsonb_strip_nulls(jsonb_build_object('table', o->>'table', 'rowId', o->>'rowId',
          'op', o->>'op', 'baseVersion', o->'baseVersion',
          'payload', CASE WHEN o->>'op' = 'upsert' THEN encode(syncular.encode_sparse_row(o->>'table', o->'row'), 'base64') END));
      END LOOP;
      frames := frames || jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', c->>'id', 'operations', ops);
    END LOOP;
  END IF;
  frames := frames || '{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 2, "maxSnapshotPages": 1, "accept": 1}'::jsonb;
  FOR s IN SELECT * FROM demo.subscriptions WHERE client_id = p_client ORDER BY id LOOP
    frames := frames || jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION', 'id', s.id, 'table', s.tbl,
      'scopes', s.scopes, 'cursor', s.cursor, 'bootstrapState', s.bootstrap_state));
  END LOOP;
  req := jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames);
  PERFORM demo.describe(req, '  →');

  SELECT * INTO http FROM syncular.handle_http(syncular.debug_encode(req), 'acme', cl.actor_id);
  IF http.status <> 200 THEN
    PERFORM demo.say(format('  ← HTTP %s %s', http.status, convert_from(http.body, 'UTF8')));
    RETURN NULL;
  END IF;
  resp := syncular.debug_render(http.body);
  PERFORM demo.describe(resp, '  ←', req);

  -- apply the response like an SDK does
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'RESP_HEADER' THEN
      IF (f->>'resetRequired')::boolean THEN
        UPDATE demo.clients SET epoch = f->>'logEpoch' WHERE client_id = p_client;
        DELETE FROM demo.replica WHERE client_id = p_client;
        UPDATE demo.subscriptions SET cursor = -1, bootstrap_state = NULL WHERE client_id = p_client;
      END IF;
    WHEN 'SUB_START' THEN
      cur_sub := f->>'id';
    WHEN 'COMMIT' THEN
      FOR c IN SELECT * FROM jsonb_array_elements(f->'changes') LOOP
        IF c->>'op' = 'delete' THEN
          DELETE FROM demo.replica WHERE client_id = p_client AND tbl = f->'tables'->>0 AND row_id = c->>'rowId';
        ELSE
          INSERT INTO demo.replica VALUES (p_client, f->'tables'->>0, c->>'rowId', (c->>'rowVersion')::bigint,
                 syncular.decode_row(f->'tables'->>0, decode(c->>'row', 'base64')))
          ON CONFLICT (client_id, tbl, row_id) DO UPDATE SET version = EXCLUDED.version, row_data = EXCLUDED.row_data;
        END IF;
      END LOOP;
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      FOR r IN SELECT x FROM jsonb_array_elements(seg->'blocks') b, jsonb_array_elements(b) x LOOP
        INSERT INTO demo.replica VALUES (p_client, seg->>'table', r->'values'->>(SELECT t->>'primaryKey'
                 FROM syncular.sync_settings, jsonb_array_elements(compiled->'tables') t WHERE t->>'name' = seg->>'table'),
                 (r->>'serverVersion')::bigint, r->'values')
        ON CONFLICT (client_id, tbl, row_id) DO UPDATE SET version = EXCLUDED.version, row_data = EXCLUDED.row_data;
      END LOOP;
    WHEN 'SUB_END' THEN
      UPDATE demo.subscriptions SET cursor = (f->>'nextCursor')::bigint, bootstrap_state = f->'bootstrapState'
       WHERE client_id = p_client AND id = cur_sub;
    ELSE NULL;
    END CASE;
  END LOOP;
  RETURN resp;
END $$;
