CREATE FUNCTION syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
                                            commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n         integer;
  i         integer;
  rec       jsonb;
  k         text;
  v         jsonb;
  ts        bigint;
  keys      text[] := '{}';
  types     text[] := '{}';
  versions  integer[] := '{}';
  payloads  jsonb[] := '{}';
  maxes     integer[] := '{}';
  r_key     text;
  r_type    text;
  r_version bigint;
  r_max     bigint;
  bytes     integer;
  inserted  integer;
BEGIN
  IF partition IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'partition', 'missing'); END IF;
  IF client_id IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'clientId', 'missing'); END IF;
  IF client_commit_id IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'clientCommitId', 'missing'); END IF;
  IF commit_seq IS NULL THEN PERFORM syncular._invalid_reaction(NULL, 'commitSeq', 'missing'); END IF;
  IF records IS NULL OR jsonb_typeof(records) = 'null' THEN
    RETURN 0;
  END IF;
  IF jsonb_typeof(records) <> 'array' THEN
    PERFORM syncular._invalid_reaction(NULL, 'records', 'not_array');
  END IF;
  n := jsonb_array_length(records);
  IF n > 100 THEN
    PERFORM syncular._invalid_reaction(NULL, 'records', 'too_many', jsonb_build_object('count', n, 'limit', 100));
  END IF;

  -- validate every record before writing any
  FOR i IN 0 .. n - 1 LOOP
    rec := records -> i;
    IF jsonb_typeof(rec) <> 'object' THEN
      PERFORM syncular._invalid_reaction(i, 'record', 'not_object');
    END IF;
    FOR k IN SELECT x FROM jsonb_object_keys(rec) x ORDER BY x LOOP
      IF k NOT IN ('key', 'type', 'version', 'payload', 'maxAttempts') THEN
        PERFORM syncular._invalid_reaction(i, k, 'unknown_field');
      END IF;
    END LOOP;

    -- key: non-empty string, <= 256 bytes, unique within the commit
    r_key := syncular._reaction_text(i, rec, 'key', 256);
    IF r_key = ANY (keys) THEN
      PERFORM syncular._invalid_reaction(i, 'key', 'duplicate');
    END IF;

    -- type: non-empty string, <= 128 bytes
    r_type := syncular._reaction_text(i, rec, 'type', 128);

    -- version: positive i32
    v := rec -> 'version';
    IF v IS NULL THEN PERFORM syncular._invalid_reaction(i, 'version', 'missing'); END IF;
    r_version := syncular._reaction_int(v, 1, 2147483647);
    IF r_version IS NULL THEN
      PERFORM syncular._invalid_reaction(i, 'version', 'not_positive_i32');
    END IF;

    -- payload: any JSON value (null included), <= 65,536 bytes compact, <= 16 levels deep
    v := rec -> 'payload';
    IF v IS NULL THEN PERFORM syncular._invalid_reaction(i, 'payload', 'missing'); END IF;
    bytes := octet_length(convert_to(syncular._compact_json(v), 'UTF8'));
    IF bytes > 65536 THEN
      PERFORM syncular._invalid_reaction(i, 'payload', 'too_large', jsonb_build_object('bytes', bytes, 'limit', 65536));
    END IF;
    -- a 17th level exists iff some value at path depth 16 is itself an object or an array
    IF jsonb_path_exists(v, 'strict $.**{16} ? (@.type() == "object" || @.type() == "array")') THEN
      PERFORM syncular._invalid_reaction(i, 'payload', 'too_deep', jsonb_build_object('limit', 16));
    END IF;

    -- maxAttempts: optional (absent or null = 10), integer 1..100
    v := rec -> 'maxAttempts';
    IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
      r_max := 10;
    ELSE
      r_max := syncular._reaction_int(v, 1, 100);
      IF r_max IS NULL THEN
        PERFORM syncular._invalid_reaction(i, 'maxAttempts', 'out_of_range', jsonb_build_object('min', 1, 'max', 100));
      END IF;
    END IF;

    keys := keys || r_key;
    types := types || r_type;
    versions := versions || r_version::integer;
    payloads := payloads || (rec -> 'payload');
    maxes := maxes || r_max::integer;
  END LOOP;

  IF n = 0 THEN
    RETURN 0;
  END IF;
  ts := syncular._reaction_now(now_ms);
  -- a key already present (the same commit enqueued before) is kept as it is: at most once
  INSERT INTO syncular.sync_reactions AS r
    (partition, idempotency_key, type, version, payload, source_client_id, source_client_commit_id,
     source_commit_seq, created_at_ms, available_at_ms, status, attempts, max_attempts)
  SELECT _enqueue_reactions.partition,
         '[' || to_json(_enqueue_reactions.partition)::text || ',' || to_json(_enqueue_reactions.client_id)::text
             || ',' || to_json(_enqueue_reactions.client_commit_id)::text || ',' || to_json(x.k)::text || ']',
         x.t, x.ver, x.p, _enqueue_reactions.client_id, _enqueue_reactions.client_commit_id,
         _enqueue_reactions.commit_seq, ts, ts, 'pending', 0, x.m
    FROM unnest(keys, types, versions, payloads, maxes) WITH ORDINALITY AS x(k, t, ver, p, m, ord)
   ORDER BY x.ord
  ON CONFLICT ON CONSTRAINT sync_reactions_pkey DO NOTHING;
  GET DIAGNOSTICS inserted = ROW_COUNT;
  RETURN inserted;
END
$$;
