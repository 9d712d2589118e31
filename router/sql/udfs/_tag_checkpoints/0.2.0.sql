-- Checkpoint declarations go to the shard of their partition only: each is tagged with that
-- shard's database name, which the shard's cluster_call compares with current_database().
CREATE FUNCTION syncular._tag_checkpoints(checkpoints jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(checkpoints) = 'array' THEN
           (SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(d) = 'object' AND jsonb_typeof(d -> 'partition') = 'string'
                                           THEN d || jsonb_build_object('shardDatabase',
                                                  syncular._shard_database(syncular.shard_of(d ->> 'partition')))
                                           ELSE d END ORDER BY i), '[]'::jsonb)
              FROM jsonb_array_elements(checkpoints) WITH ORDINALITY x(d, i))
         ELSE coalesce(checkpoints, '[]'::jsonb) END
$$;
