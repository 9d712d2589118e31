CREATE FUNCTION syncular.set_reaction_planner(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('reaction_planner', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'jsonb'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, reaction_planner) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET reaction_planner = EXCLUDED.reaction_planner;
END
$$;
