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
  blk jsonb;
  rw jsonb;
  ch jsonb;
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
      changes := '[]'::jsonb;
      FOR ch IN SELECT * FROM jsonb_array_elements(f->'changes') LOOP
        changes := changes || (jsonb_build_object('table', f->'tables'->((ch->>'tableIndex')::int)) ||
          (ch - 'tableIndex' - 'row') ||
          CASE WHEN ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                 f->'tables'->>((ch->>'tableIndex')::int), decode(ch->>'row', 'base64')))
               ELSE '{}'::jsonb END);
      END LOOP;
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      FOR blk IN SELECT * FROM jsonb_array_elements(seg->'blocks') LOOP
        FOR rw IN SELECT * FROM jsonb_array_elements(blk) LOOP
          cur := jsonb_set(cur, '{rows}', cur->'rows' || jsonb_build_object(
            'serverVersion', rw->'serverVersion', 'row', rw->'values'));
        END LOOP;
      END LOOP;
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE
      NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;
