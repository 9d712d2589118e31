-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.

-- the row type claim_reactions returns (the shard's table syncular.sync_reactions)
CREATE TYPE syncular.sync_reactions AS (
  partition                TEXT,
  idempotency_key          TEXT,
  type                     TEXT,
  version                  INTEGER,
  payload                  JSONB,
  source_client_id         TEXT,
  source_client_commit_id  TEXT,
  source_commit_seq        BIGINT,
  created_at_ms            BIGINT,
  available_at_ms          BIGINT,
  status                   TEXT,
  attempts                 INTEGER,
  max_attempts             INTEGER,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB
);
COMMENT ON TYPE syncular.sync_reactions IS
'The rows of the shard table syncular.sync_reactions, as syncular.claim_reactions returns them through the router.';

CREATE FUNCTION syncular._r_handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle;
$$;
COMMENT ON FUNCTION syncular._r_handle(bytea, text, text) IS
'Internal. PL/Proxy call of syncular.handle on the shard of partition.';

CREATE FUNCTION syncular.handle(request bytea, partition text, actor_id text)
RETURNS bytea LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_handle($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($2, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Routed: one SSP2 round (request bytes in, response bytes out) served by syncular.handle on the shard of partition '
'(logical shard hashtext(partition) & (N - 1)); the response bytes are the shard''s. Errors: those of the shard''s '
'syncular.handle with their SQLSTATE, message, DETAIL and HINT; a shard PL/Proxy cannot reach (connection refused or '
'lost, timeout, bad cluster configuration) raises sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code": '
'"sync.schema_not_ready", "details": {"shardUnavailable": true}}); the PL/Proxy message goes to the server log. '
'The round commits on the shard when it ends, whatever the router''s transaction does. docs/scaling.md, SPEC §1.';

CREATE FUNCTION syncular._r_handle_http(request bytea, partition text, actor_id text, content_type text)
RETURNS TABLE(status integer, content_type text, body bytea) LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.handle_http;
$$;
COMMENT ON FUNCTION syncular._r_handle_http(bytea, text, text, text) IS
'Internal. PL/Proxy call of syncular.handle_http on the shard of partition.';

CREATE FUNCTION syncular._handle_http(request bytea, partition text, actor_id text, ctype text)
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT r.status, r.content_type, r.body FROM syncular._r_handle_http($1, $2, $3, $4) r;
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  IF syncular._shard_failed(st, msg) THEN
    RAISE LOG 'syncular_router: shard % unavailable for partition %: %',
      syncular.shard_of($2), quote_literal(coalesce($2, '')), msg;
    RETURN QUERY SELECT 503, 'application/json'::text, syncular._unavailable_body();
    RETURN;
  END IF;
  PERFORM syncular._route_error($2, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._handle_http(bytea, text, text, text) IS
'Internal. The body of the routed syncular.handle_http (a plpgsql function cannot name an argument and a result '
'column content_type both).';

-- LANGUAGE sql: the argument and the result column share the name content_type, as on the shard
CREATE FUNCTION syncular.handle_http(request bytea, partition text, actor_id text,
                                     content_type text DEFAULT 'application/vnd.syncular.sync.v2')
RETURNS TABLE(status integer, content_type text, body bytea)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM syncular._handle_http($1, $2, $3, $4)
$$;
COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'Routed: POST /sync as one row, the shard''s syncular.handle_http on the shard of partition (the same status, '
'content type and body). A shard PL/Proxy cannot reach answers 503 application/json {"code": "sync.schema_not_ready", '
'"category": "internal", "retryable": true, "recommendedAction": "retryLater", "message": "server schema is not '
'ready for this request", "details": {"shardUnavailable": true}} (the client retries later, as for a closed serve '
'gate); the PL/Proxy message goes to the server log. Query cancellation is re-raised. docs/scaling.md, '
'wire-format.md §9.';

CREATE FUNCTION syncular._r_push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(p_partition);
  TARGET syncular.push;
$$;
CREATE FUNCTION syncular.push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_push($1, $2, $3, $4);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_push(text,text,text,jsonb) IS
'Internal. PL/Proxy call of syncular.push on the shard of p_partition.';
COMMENT ON FUNCTION syncular.push(text,text,text,jsonb) IS
'Routed: runs syncular.push (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of p_partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb, p_limits jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(p_partition);
  TARGET syncular.pull;
$$;
CREATE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb, p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_pull($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_pull(text,text,text,jsonb,jsonb) IS
'Internal. PL/Proxy call of syncular.pull on the shard of p_partition.';
COMMENT ON FUNCTION syncular.pull(text,text,text,jsonb,jsonb) IS
'Routed: runs syncular.pull (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of p_partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_serve_gate(partition text, checkpoints jsonb, running_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.serve_gate;
$$;
CREATE FUNCTION syncular.serve_gate(partition text, checkpoints jsonb DEFAULT '[]'::jsonb, running_version integer DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_serve_gate($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_serve_gate(text,jsonb,integer) IS
'Internal. PL/Proxy call of syncular.serve_gate on the shard of partition.';
COMMENT ON FUNCTION syncular.serve_gate(text,jsonb,integer) IS
'Routed: runs syncular.serve_gate (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.declare_checkpoint;
$$;
CREATE FUNCTION syncular.declare_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_declare_checkpoint($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_declare_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.declare_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.declare_checkpoint(text,text,integer) IS
'Routed: runs syncular.declare_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_checkpoint;
$$;
CREATE FUNCTION syncular.claim_checkpoint(partition text, name text, schema_version integer)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_claim_checkpoint($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_claim_checkpoint(text,text,integer) IS
'Internal. PL/Proxy call of syncular.claim_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.claim_checkpoint(text,text,integer) IS
'Routed: runs syncular.claim_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_advance_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.advance_checkpoint;
$$;
CREATE FUNCTION syncular.advance_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, observed_rows bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_advance_checkpoint($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_advance_checkpoint(text,text,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.advance_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.advance_checkpoint(text,text,bigint,bigint,bigint) IS
'Routed: runs syncular.advance_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_activate_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, sources text[])
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.activate_checkpoint;
$$;
CREATE FUNCTION syncular.activate_checkpoint(partition text, name text, owner_epoch bigint, watermark bigint, sources text[])
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_activate_checkpoint($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Internal. PL/Proxy call of syncular.activate_checkpoint on the shard of partition.';
COMMENT ON FUNCTION syncular.activate_checkpoint(text,text,bigint,bigint,text[]) IS
'Routed: runs syncular.activate_checkpoint (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.checkpoints;
$$;
CREATE FUNCTION syncular.checkpoints(partition text)
RETURNS SETOF jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT * FROM syncular._r_checkpoints($1);
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_checkpoints(text) IS
'Internal. PL/Proxy call of syncular.checkpoints on the shard of partition.';
COMMENT ON FUNCTION syncular.checkpoints(text) IS
'Routed: runs syncular.checkpoints (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.source_coverage_seq;
$$;
CREATE FUNCTION syncular.source_coverage_seq(partition text, tables text[])
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_source_coverage_seq($1, $2);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_source_coverage_seq(text,text[]) IS
'Internal. PL/Proxy call of syncular.source_coverage_seq on the shard of partition.';
COMMENT ON FUNCTION syncular.source_coverage_seq(text,text[]) IS
'Routed: runs syncular.source_coverage_seq (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_prune(partition text, retention jsonb)
RETURNS jsonb LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune;
$$;
CREATE FUNCTION syncular.prune(partition text, retention jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_prune($1, $2);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_prune(text,jsonb) IS
'Internal. PL/Proxy call of syncular.prune on the shard of partition.';
COMMENT ON FUNCTION syncular.prune(text,jsonb) IS
'Routed: runs syncular.prune (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_rotate_log_epoch(partition text)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.rotate_log_epoch;
$$;
CREATE FUNCTION syncular.rotate_log_epoch(partition text)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_rotate_log_epoch($1);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_rotate_log_epoch(text) IS
'Internal. PL/Proxy call of syncular.rotate_log_epoch on the shard of partition.';
COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
'Routed: runs syncular.rotate_log_epoch (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_claim_reactions(partition text, owner text, "limit" integer, lease_ms bigint, now_ms bigint)
RETURNS SETOF syncular.sync_reactions LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.claim_reactions;
$$;
CREATE FUNCTION syncular.claim_reactions(partition text, owner text, "limit" integer DEFAULT 10, lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS SETOF syncular.sync_reactions LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN QUERY SELECT * FROM syncular._r_claim_reactions($1, $2, $3, $4, $5);
  RETURN;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_claim_reactions(text,text,integer,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.claim_reactions on the shard of partition.';
COMMENT ON FUNCTION syncular.claim_reactions(text,text,integer,bigint,bigint) IS
'Routed: runs syncular.claim_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_renew_reaction_lease(partition text, idempotency_key text, owner text, lease_ms bigint, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.renew_reaction_lease;
$$;
CREATE FUNCTION syncular.renew_reaction_lease(partition text, idempotency_key text, owner text, lease_ms bigint DEFAULT 30000, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_renew_reaction_lease($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_renew_reaction_lease(text,text,text,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.renew_reaction_lease on the shard of partition.';
COMMENT ON FUNCTION syncular.renew_reaction_lease(text,text,text,bigint,bigint) IS
'Routed: runs syncular.renew_reaction_lease (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_complete_reaction(partition text, idempotency_key text, owner text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.complete_reaction;
$$;
CREATE FUNCTION syncular.complete_reaction(partition text, idempotency_key text, owner text, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_complete_reaction($1, $2, $3, $4);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_complete_reaction(text,text,text,bigint) IS
'Internal. PL/Proxy call of syncular.complete_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.complete_reaction(text,text,text,bigint) IS
'Routed: runs syncular.complete_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_fail_reaction(partition text, idempotency_key text, owner text, failure jsonb, permanent boolean, base_ms bigint, cap_ms bigint, now_ms bigint)
RETURNS text LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.fail_reaction;
$$;
CREATE FUNCTION syncular.fail_reaction(partition text, idempotency_key text, owner text, failure jsonb, permanent boolean DEFAULT false, base_ms bigint DEFAULT 1000, cap_ms bigint DEFAULT 300000, now_ms bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_fail_reaction($1, $2, $3, $4, $5, $6, $7, $8);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_fail_reaction(text,text,text,jsonb,boolean,bigint,bigint,bigint) IS
'Internal. PL/Proxy call of syncular.fail_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.fail_reaction(text,text,text,jsonb,boolean,bigint,bigint,bigint) IS
'Routed: runs syncular.fail_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_retry_dead_letter_reaction(partition text, idempotency_key text, now_ms bigint)
RETURNS boolean LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.retry_dead_letter_reaction;
$$;
CREATE FUNCTION syncular.retry_dead_letter_reaction(partition text, idempotency_key text, now_ms bigint DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_retry_dead_letter_reaction($1, $2, $3);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_retry_dead_letter_reaction(text,text,bigint) IS
'Internal. PL/Proxy call of syncular.retry_dead_letter_reaction on the shard of partition.';
COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text,text,bigint) IS
'Routed: runs syncular.retry_dead_letter_reaction (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

CREATE FUNCTION syncular._r_prune_reactions(partition text, completed_older_than_ms bigint, dead_letter_older_than_ms bigint, max_rows integer, now_ms bigint)
RETURNS integer LANGUAGE plproxy AS $$
  CLUSTER 'syncular';
  RUN ON syncular.shard_hash(partition);
  TARGET syncular.prune_reactions;
$$;
CREATE FUNCTION syncular.prune_reactions(partition text, completed_older_than_ms bigint DEFAULT 2592000000, dead_letter_older_than_ms bigint DEFAULT 7776000000, max_rows integer DEFAULT 1000, now_ms bigint DEFAULT NULL)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  RETURN syncular._r_prune_reactions($1, $2, $3, $4, $5);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          hnt = PG_EXCEPTION_HINT;
  PERFORM syncular._route_error($1, st, msg, det, hnt);
END
$$;
COMMENT ON FUNCTION syncular._r_prune_reactions(text,bigint,bigint,integer,bigint) IS
'Internal. PL/Proxy call of syncular.prune_reactions on the shard of partition.';
COMMENT ON FUNCTION syncular.prune_reactions(text,bigint,bigint,integer,bigint) IS
'Routed: runs syncular.prune_reactions (same arguments, result and errors; see its COMMENT in the syncular extension) on '
'the shard of partition. A shard PL/Proxy cannot reach raises sync.schema_not_ready (55000, details '
'{"shardUnavailable": true}). docs/scaling.md.';

