CREATE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb,
                              p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  s jsonb;
  resp jsonb;
  f jsonb;
  sections jsonb := '[]'::jsonb;
  cur jsonb;
  seg jsonb;
  changes jsonb;
BEGIN
  IF jsonb_typeof(p_subscriptions) IS DISTINCT FROM 'array' THEN
    PERFORM syncular._raise('sync.invalid_request', 'subscriptions must be a JSON array', NULL);
  END IF;
  SELECT st.compiled INTO compiled FROM syncular.sync_settings st WHERE st.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
      'schemaVersion', (compiled->>'version')::int,
      'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)),
    jsonb_build_object('type', 'PULL_HEADER',
      'limitCommits', coalesce((p_limits->>'limitCommits')::int, 0),
      'limitSnapshotRows', coalesce((p_limits->>'limitSnapshotRows')::int, 0),
      'maxSnapshotPages', coalesce((p_limits->>'maxSnapshotPages')::int, 0),
      'accept', 1));
  FOR s IN SELECT * FROM jsonb_array_elements(p_subscriptions) LOOP
    frames := frames || jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION',
      'id', s->>'id', 'table', s->>'table', 'scopes', coalesce(s->'scopes', '{}'::jsonb),
      'cursor', coalesce((s->>'cursor')::bigint, -1), 'bootstrapState', s->'bootstrapState'));
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'SUB_START' THEN
      cur := (f - 'type') || '{"commits": [], "rows": []}'::jsonb;
    WHEN 'COMMIT' THEN
      -- one aggregate, not an append per change: a commit of SQL writes can hold 100,000 changes
      SELECT coalesce(jsonb_agg(jsonb_build_object('table', f->'tables'->((x.ch->>'tableIndex')::int)) ||
               (x.ch - 'tableIndex' - 'row') ||
               CASE WHEN x.ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                      f->'tables'->>((x.ch->>'tableIndex')::int), decode(x.ch->>'row', 'base64')))
                    ELSE '{}'::jsonb END ORDER BY x.n), '[]'::jsonb)
        INTO changes
        FROM jsonb_array_elements(f->'changes') WITH ORDINALITY AS x(ch, n);
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      cur := jsonb_set(cur, '{rows}', cur->'rows' || coalesce((
        SELECT jsonb_agg(jsonb_build_object('serverVersion', y.rw->'serverVersion', 'row', y.rw->'values')
                         ORDER BY x.n, y.m)
          FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY AS x(blk, n),
               jsonb_array_elements(x.blk) WITH ORDINALITY AS y(rw, m)), '[]'::jsonb));
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE
      NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;
