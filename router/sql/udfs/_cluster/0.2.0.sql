CREATE FUNCTION syncular._cluster(call text, args jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  results jsonb;
  actions jsonb;
  st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    -- the check round: every shard must accept before any shard applies
    PERFORM count(*) FROM syncular._r_cluster_call(call, args, false);
    SELECT jsonb_agg(r ORDER BY r ->> 'database') INTO results
      FROM syncular._r_cluster_call(call, args, true) r;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT;
    PERFORM syncular._route_error(NULL, st, msg, det, hnt, true);
  END;
  SELECT jsonb_agg(DISTINCT e -> 'result' -> 'action') INTO actions FROM jsonb_array_elements(results) e;
  RETURN jsonb_build_object('shards', results)
      || CASE WHEN call <> 'ensure_schema' THEN '{}'::jsonb
              WHEN jsonb_array_length(actions) = 1 THEN jsonb_build_object('action', actions -> 0)
              ELSE '{"action": "mixed"}'::jsonb END;
END
$$;
