-- syncular install script, part 22: host authentication in SQL (SPEC §1.1: "the host's
-- authenticate(request) runs on every HTTP request and WebSocket upgrade; its result supplies
-- actorId and the partition").  syncular-gateway uses it when it is not given a JWT key: the
-- registered function sees the request's method, path, headers and query and answers who is
-- calling, inside the same transaction as the round it authorizes.

ALTER TABLE syncular.sync_settings ADD COLUMN authenticator REGPROCEDURE;

CREATE FUNCTION syncular.set_authenticator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('authenticator', fn,
      ARRAY['text', 'text', 'jsonb', 'jsonb']::regtype[], 'jsonb'::regtype, true,
      '(method text, path text, headers jsonb, query jsonb) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, authenticator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET authenticator = EXCLUDED.authenticator;
END
$$;
COMMENT ON FUNCTION syncular.set_authenticator(regprocedure) IS
$$Registers the request authenticator (SPEC §1.1 host authentication), or unregisters it when fn is NULL.
fn must be a plain function (method text, path text, headers jsonb, query jsonb) RETURNS jsonb. It is called with the HTTP method ('POST' for /sync, 'GET' for the realtime upgrade), the request path, the request headers as a JSON object (lower-case names, string values) and the query arguments as a JSON object (string values), and answers {"actorId": text, "partition": text} for an authenticated caller or NULL to refuse (HTTP 401 sync.auth_required). It runs as the extension owner inside the round's transaction (SECURITY DEFINER callers): write it with a fixed search_path and qualified names.
Stored in syncular.sync_settings.authenticator (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;

CREATE FUNCTION syncular.authenticate(method text, path text, headers jsonb, query jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  fn regprocedure;
  answer jsonb;
BEGIN
  SELECT s.authenticator INTO fn FROM syncular.sync_settings s WHERE s.id = 1;
  IF fn IS NULL THEN
    RETURN NULL;                -- nothing registered: nobody is authenticated
  END IF;
  -- fn::oid::regproc renders the qualified name; the argument types pick this overload
  EXECUTE format('SELECT %s($1, $2, $3, $4)', fn::oid::regproc)
    INTO answer USING method, path, coalesce(headers, '{}'), coalesce(query, '{}');
  IF answer IS NULL OR jsonb_typeof(answer) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(answer) IS DISTINCT FROM 'object'
     OR jsonb_typeof(answer -> 'actorId') IS DISTINCT FROM 'string' OR answer ->> 'actorId' = ''
     OR jsonb_typeof(answer -> 'partition') IS DISTINCT FROM 'string' OR answer ->> 'partition' = '' THEN
    PERFORM syncular._raise('sync.internal_error',
      'the authenticator must answer {"actorId": text, "partition": text} or NULL',
      jsonb_build_object('authenticator', fn::text));
  END IF;
  RETURN jsonb_build_object('actorId', answer ->> 'actorId', 'partition', answer ->> 'partition');
END
$$;
COMMENT ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) IS
'Runs the authenticator registered with syncular.set_authenticator for one request (SPEC §1.1). method, path: '
'the HTTP request line; headers, query: JSON objects of strings (NULL means {}). Returns {"actorId", "partition"} '
'(only those two keys) or NULL when the authenticator refuses or none is registered. Errors: sync.internal_error '
'(XX000) when the authenticator answers anything else than NULL or an object with non-empty string actorId and '
'partition; whatever the authenticator raises. syncular-gateway calls it once at each realtime WebSocket '
'upgrade (SPEC §8.1). SECURITY DEFINER: the authenticator runs as the extension owner.';

CREATE FUNCTION syncular.handle_http_authenticated(request bytea, method text, path text, headers jsonb,
                                                   query jsonb,
                                                   request_content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  who jsonb;
  msg text;
  err_code text;
BEGIN
  BEGIN
    who := syncular.authenticate(method, path, headers, query);
  EXCEPTION WHEN query_canceled THEN
    RAISE;
  WHEN others THEN
    -- the authenticator's text goes to the server log, never to the client (errors.md §3.2)
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    RAISE LOG 'syncular authenticator failed: %', msg;
    err_code := 'sync.internal_error';
    msg := 'internal server error';
  END;
  IF err_code IS NULL AND who IS NULL THEN
    err_code := 'sync.auth_required';
    msg := 'authentication required';
  END IF;
  IF err_code IS NOT NULL THEN
    RETURN QUERY
      SELECT c.http_status, 'application/json'::text,
             convert_to(json_build_object('code', c.code, 'category', c.category, 'retryable', c.retryable,
                                          'recommendedAction', c.recommended_action, 'message', msg)::text,
                        'UTF8')
        FROM syncular.error_catalog() c WHERE c.code = err_code;
    RETURN;
  END IF;
  RETURN QUERY SELECT h.status, h.content_type, h.body
    FROM syncular.handle_http(request, who ->> 'partition', who ->> 'actorId',
                              request_content_type) h;
END
$$;
COMMENT ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text) IS
'POST /sync with SQL host authentication (SPEC §1.1) in one transaction: runs syncular.authenticate(method, path, '
'headers, query), then syncular.handle_http(request, partition, actorId, request_content_type) with its answer. Returns '
'what the HTTP endpoint answers: NULL from the authenticator (or none registered) gives 401 with a '
'sync.auth_required JSON body; an error raised by the authenticator gives 500 sync.internal_error with a fixed '
'message (the text goes to the server log); otherwise exactly what syncular.handle_http returns. Query '
'cancellation is re-raised. SECURITY DEFINER like syncular.handle_http; used by syncular-gateway.';
