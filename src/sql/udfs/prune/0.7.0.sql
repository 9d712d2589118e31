CREATE FUNCTION syncular.prune(partition text, retention jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  k               text;
  now_ms          bigint;
  active_window   bigint;
  force_age       bigint;
  min_retained    bigint;
  push_age        bigint;
  max_seq         bigint;
  old_horizon     bigint;
  cursor_floor    bigint;
  forced_seq      bigint;
  target          bigint;
  horizon         bigint;
  removed         bigint := 0;
  removed_results bigint;
  result          jsonb;
BEGIN
  retention := coalesce(retention, '{}'::jsonb);
  IF jsonb_typeof(retention) <> 'object' THEN
    PERFORM syncular._raise('sync.storage.invalid_limit', 'retention must be a JSON object',
                            jsonb_build_object('value', retention));
  END IF;
  FOR k IN SELECT key FROM jsonb_object_keys(retention) AS key ORDER BY key LOOP
    IF k NOT IN ('activeWindowMs', 'forceAgeMs', 'minRetainedCommits', 'pushResultsOlderThanMs', 'nowMs') THEN
      PERFORM syncular._raise('sync.storage.invalid_limit', 'unknown retention key',
                              jsonb_build_object('key', k));
    END IF;
  END LOOP;
  active_window := syncular._retention_value(retention, 'activeWindowMs', 14 * 86400000::bigint);
  force_age     := syncular._retention_value(retention, 'forceAgeMs', 30 * 86400000::bigint);
  min_retained  := syncular._retention_value(retention, 'minRetainedCommits', 1000);
  push_age      := syncular._retention_value(retention, 'pushResultsOlderThanMs', NULL);
  now_ms        := syncular._retention_value(retention, 'nowMs',
                     syncular.now_ms());

  -- lock order: the partition lock, then the registry row (refuses an unregistered partition);
  -- the newest commit_seq: the newest commit row's, or the horizon
  PERFORM syncular._lock_partition(prune.partition);
  SELECT p.horizon_seq INTO old_horizon FROM syncular.sync_partitions p WHERE p.partition = prune.partition;
  SELECT greatest(coalesce((SELECT c.commit_seq FROM syncular.sync_commits c
                             WHERE c.partition = prune.partition
                             ORDER BY c.commit_seq DESC LIMIT 1), 0), coalesce(old_horizon, 0))
    INTO max_seq;

  -- floor: the lowest cursor of clients active within the window (none active: no constraint)
  SELECT min(c.cursor) INTO cursor_floor
    FROM syncular.sync_clients c
   WHERE c.partition = prune.partition AND c.updated_at_ms >= now_ms - active_window;
  cursor_floor := coalesce(cursor_floor, max_seq);
  -- forced: the newest commit created before now - forceAge.  A walk of the partition's range
  -- of the primary key (no index by time: docs/storage.md, "Commit log layout"; maintenance
  -- reads the retained log once instead of every commit writing one more index entry).
  SELECT max(c.commit_seq) INTO forced_seq
    FROM syncular.sync_commits c
   WHERE c.partition = prune.partition AND c.created_at_ms < now_ms - force_age;
  forced_seq := coalesce(forced_seq, 0);

  target := least(greatest(cursor_floor, forced_seq), max_seq - min_retained);
  horizon := greatest(old_horizon, greatest(target, 0));

  IF push_age IS NOT NULL THEN
    -- idempotency records whose commit is still in the log and older than the cutoff: an
    -- applied commit's result is stored in its sync_commits row (docs/storage.md)
    UPDATE syncular.sync_commits c SET result = NULL
     WHERE c.partition = prune.partition AND c.result IS NOT NULL
       AND c.created_at_ms < now_ms - push_age;
    GET DIAGNOSTICS removed_results = ROW_COUNT;
  END IF;

  IF horizon > 0 THEN
    -- the stored results of the pruned commits stay (a retry of a pruned commit still replays
    -- its result, SPEC §6.3): they move to sync_push_results with the commit rows' deletion
    WITH d AS (DELETE FROM syncular.sync_commits c
                WHERE c.partition = prune.partition AND c.commit_seq <= horizon
            RETURNING c.partition, c.client_id, c.client_commit_id, c.result),
         m AS (INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result)
               SELECT d.partition, d.client_id, d.client_commit_id, d.result FROM d
                WHERE d.result IS NOT NULL
               ON CONFLICT ON CONSTRAINT sync_push_results_pkey DO NOTHING)
    SELECT count(*) INTO removed FROM d;
    DELETE FROM syncular.sync_changes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_change_scopes c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    DELETE FROM syncular.sync_tombstones c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
  END IF;
  IF horizon <> old_horizon THEN
    UPDATE syncular.sync_partitions p SET horizon_seq = horizon WHERE p.partition = prune.partition;
  END IF;

  result := jsonb_build_object('previousHorizonSeq', old_horizon, 'horizonSeq', horizon,
                               'removedCommits', removed);
  IF push_age IS NOT NULL THEN
    result := result || jsonb_build_object('removedPushResults', removed_results);
  END IF;
  RETURN result;
END
$$;
