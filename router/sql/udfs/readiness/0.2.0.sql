CREATE FUNCTION syncular.readiness(checkpoints jsonb DEFAULT '[]'::jsonb) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  shards jsonb;
  st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    SELECT jsonb_agg(r ORDER BY r ->> 'database') INTO shards FROM syncular._r_readiness(checkpoints) r;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                            hnt = PG_EXCEPTION_HINT;
    PERFORM syncular._route_error(NULL, st, msg, det, hnt, true);
  END;
  -- ready when every shard is; otherwise the first not-ready shard (by database name) speaks
  RETURN coalesce((SELECT e -> 'readiness' FROM jsonb_array_elements(shards) WITH ORDINALITY x(e, i)
                    WHERE NOT (e -> 'readiness' ->> 'ready')::boolean ORDER BY i LIMIT 1),
                  shards -> 0 -> 'readiness')
         || jsonb_build_object('shards', shards);
END
$$;
