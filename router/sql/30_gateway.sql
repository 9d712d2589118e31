-- syncular_router install script, part 30: the surface syncular-gateway uses (docs/gateway.md,
-- docs/scaling.md "The gateway in front of the router").
--
--   * realtime_connect, realtime_fanout, realtime_ack and presence_authorize are routed to the
--     shard of their partition like the round functions (part 15, router/routed.txt);
--   * the SQL authenticator lives in the router database itself: it answers which partition a
--     request belongs to, so it runs before any shard is chosen.  set_authenticator registers it
--     here (table syncular.router_settings), authenticate runs it here, and
--     handle_http_authenticated runs it and then the routed handle_http (SPEC §1.1);
--   * shard_conninfos lists the distinct shard databases, so that the gateway LISTENs on every
--     one of them (NOTIFY syncular_commit is issued by the shard that commits, SPEC §8.2).

-- ---------------------------------------------------------------- the shard databases to LISTEN on

CREATE FUNCTION syncular.shard_conninfos() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT DISTINCT regexp_replace(substr(o, strpos(o, '=') + 1),
                                 '(^|\s)(user|password)\s*=\s*(''([^''\\]|\\.)*''|\S+)', '', 'g')
    FROM pg_foreign_server s, unnest(s.srvoptions) o
   WHERE s.srvname = 'syncular' AND o ~ '^p[0-9]+='
   ORDER BY 1
$$;
COMMENT ON FUNCTION syncular.shard_conninfos() IS
'The distinct shard databases of the cluster: the libpq connection strings of the p<i> options of server syncular, '
'without their user and password keywords, sorted; no rows when the server does not exist. syncular-gateway '
'LISTENs for syncular_commit on each (the NOTIFY is issued by the shard that commits, SPEC §8.2), connecting with '
'its own role and credentials, and re-reads the list periodically (a moved shard). SECURITY DEFINER so that the '
'gateway role needs no access to the SQL/MED catalogs: grant it EXECUTE. Raises nothing. docs/scaling.md.';

-- ---------------------------------------------------------------- the SQL authenticator (SPEC §1.1)

CREATE TABLE syncular.router_settings (
  id            integer PRIMARY KEY CHECK (id = 1),
  authenticator regprocedure
);
COMMENT ON TABLE syncular.router_settings IS
'The router''s settings (a singleton row, id 1): authenticator, the function syncular.set_authenticator registered '
'in the router database.';
SELECT pg_catalog.pg_extension_config_dump('syncular.router_settings', '');

CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  p pg_proc%ROWTYPE;
  expected constant text := '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb';
BEGIN
  IF fn IS NOT NULL THEN
    SELECT * INTO p FROM pg_proc WHERE oid = fn;
    IF NOT FOUND OR p.prokind <> 'f' OR p.proretset OR p.prorettype <> 'jsonb'::regtype OR p.provariadic <> 0
       OR p.proargtypes <> array_to_string(ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[]::oid[], ' ')::oidvector THEN
      RAISE EXCEPTION 'an authenticator must be a function %', expected USING ERRCODE = '22023',
        DETAIL = jsonb_build_object('code', 'sync.storage.hook_signature', 'details',
                   jsonb_build_object('hook', 'authenticator', 'function', fn::text, 'expected', expected))::text;
    END IF;
  END IF;
  INSERT INTO syncular.router_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
COMMENT ON FUNCTION syncular.set_authenticator(regprocedure) IS
'Registers the request authenticator in the router database (SPEC §1.1 host authentication), or unregisters it when '
'fn is NULL. Not routed: the authenticator answers the partition, so it runs in the router before a shard is chosen; '
'it is a function of the router database (method text, path text, headers jsonb, query jsonb) RETURNS jsonb answering '
'{"actorId": text, "partition": text} or NULL, as for syncular.set_authenticator in the syncular extension. Stored '
'in syncular.router_settings.authenticator. Owner-only. Errors: sync.storage.hook_signature (SQLSTATE 22023; DETAIL '
'{"code": "sync.storage.hook_signature", "details": {hook, function, expected}}) for any other signature, a procedure, '
'an aggregate, a set-returning or variadic function. docs/scaling.md.';

CREATE FUNCTION syncular.authenticate(method text, path text, headers jsonb, query jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  fn regprocedure;
  answer jsonb;
BEGIN
  SELECT s.authenticator INTO fn FROM syncular.router_settings s WHERE s.id = 1;
  IF fn IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format('SELECT %s($1, $2, $3, $4)', fn::oid::regproc)
    INTO answer USING method, path, coalesce(headers, '{}'), coalesce(query, '{}');
  IF answer IS NULL OR jsonb_typeof(answer) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(answer) IS DISTINCT FROM 'object'
     OR jsonb_typeof(answer -> 'actorId') IS DISTINCT FROM 'string' OR answer ->> 'actorId' = ''
     OR jsonb_typeof(answer -> 'partition') IS DISTINCT FROM 'string' OR answer ->> 'partition' = '' THEN
    RAISE EXCEPTION 'the authenticator must answer {"actorId": text, "partition": text} or NULL'
      USING ERRCODE = 'XX000',
            DETAIL = jsonb_build_object('code', 'sync.internal_error', 'details',
                                        jsonb_build_object('authenticator', fn::text))::text;
  END IF;
  RETURN jsonb_build_object('actorId', answer ->> 'actorId', 'partition', answer ->> 'partition');
END
$$;
COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered in the router with syncular.set_authenticator for one request (SPEC §1.1), in the '
'router database. Arguments, result and errors as syncular.authenticate of the syncular extension: '
'{"actorId", "partition"} or NULL; sync.internal_error (XX000) for any other answer; whatever the authenticator '
'raises. syncular-gateway calls it once at each realtime WebSocket upgrade. docs/scaling.md.';

CREATE FUNCTION syncular._auth_error_body(code text, message text) RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE code WHEN 'sync.auth_required' THEN 401 ELSE 500 END, 'application/json'::text,
         convert_to(json_build_object('code', code,
                                      'category', CASE code WHEN 'sync.auth_required' THEN 'auth-required' ELSE 'internal' END,
                                      'retryable', true,
                                      'recommendedAction', CASE code WHEN 'sync.auth_required' THEN 'refreshAuth' ELSE 'retryLater' END,
                                      'message', message)::text, 'UTF8')
$$;
COMMENT ON FUNCTION syncular._auth_error_body(text, text) IS
'Internal. The HTTP answer of a refused request (sync.auth_required: 401) or of a failing authenticator '
'(sync.internal_error: 500) as the shard''s handle_http_authenticated writes it (SPEC §10.1 body).';

CREATE FUNCTION syncular._handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                    ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  who jsonb;
  msg text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.internal_error', 'internal server error');
    RETURN;
  END;
  IF who IS NULL THEN
    RETURN QUERY SELECT * FROM syncular._auth_error_body('sync.auth_required', 'authentication required');
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular._handle_http(request, who ->> 'partition', who ->> 'actorId', ctype) h;
END
$$;
COMMENT ON FUNCTION syncular._handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'Internal. The body of the router''s syncular.handle_http_authenticated.';

CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb, query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http_authenticated($1, $2, $3, $4, $5, $6)
$$;
COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication through the router (SPEC §1.1): runs the router''s syncular.authenticate, '
'then the routed syncular.handle_http(request, partition, actorId, request_content_type) on the shard of the answered '
'partition. NULL from the authenticator (or none registered) gives 401 sync.auth_required; an error raised by the '
'authenticator gives 500 sync.internal_error with a fixed message (the text goes to the router''s server log); '
'otherwise what the routed handle_http answers (503 {"shardUnavailable": true} for a shard PL/Proxy cannot reach). '
'The authenticator runs in the router''s transaction, the round in its own transaction on the shard. Query '
'cancellation is re-raised. docs/scaling.md.';
