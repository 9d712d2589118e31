-- syncular install script, part 40: maintenance (push-and-pull.md §5, §1.2; data-model-and-storage.md §8).
--
-- prune() and rotate_log_epoch() take the partition's sync_partitions row FOR UPDATE first and
-- the sync_partition_registry row FOR UPDATE second (the one lock order of §8).  The views are
-- read-only conveniences over the catalog; like the catalog they are owner-only until granted.

-- Locks (partition row, then registry row) and returns the partition's registry row; raises
-- sync.storage.partition_unregistered when the registry has no row for it.
CREATE FUNCTION syncular._lock_partition(partition text)
RETURNS syncular.sync_partition_registry
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  reg syncular.sync_partition_registry;
BEGIN
  -- a registered partition that never pushed has no counter row yet; create it to lock it
  INSERT INTO syncular.sync_partitions AS p (partition) VALUES (_lock_partition.partition)
    ON CONFLICT DO NOTHING;
  PERFORM 1 FROM syncular.sync_partitions p WHERE p.partition = _lock_partition.partition FOR UPDATE;
  SELECT * INTO reg FROM syncular.sync_partition_registry r
   WHERE r.partition = _lock_partition.partition FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM syncular._raise('sync.storage.partition_unregistered', 'partition is not registered',
                            jsonb_build_object('partition', _lock_partition.partition));
  END IF;
  RETURN reg;
END
$$;
COMMENT ON FUNCTION syncular._lock_partition(text) IS
  'Internal. Locks the partition''s sync_partitions row (created when missing) FOR UPDATE, then its sync_partition_registry row FOR UPDATE, and returns the registry row. Raises sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) when the partition has no registry row (the counter-row insert is rolled back with the error). data-model-and-storage.md §8.';

-- A non-negative integer retention value (ms or a count), or the default.
CREATE FUNCTION syncular._retention_value(retention jsonb, key text, dflt bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v jsonb := retention -> key;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN dflt;
  END IF;
  IF jsonb_typeof(v) <> 'number' OR v::text::numeric <> trunc(v::text::numeric)
     OR v::text::numeric < 0 OR v::text::numeric > 9007199254740991 THEN
    PERFORM syncular._raise('sync.storage.invalid_limit',
      'retention values must be non-negative integers', jsonb_build_object('key', key, 'value', v));
  END IF;
  RETURN v::text::bigint;
END
$$;
COMMENT ON FUNCTION syncular._retention_value(jsonb, text, bigint) IS
  'Internal. retention->key as a non-negative safe integer, or dflt when absent or null. Raises sync.storage.invalid_limit (SQLSTATE 22023; details {key, value}) otherwise.';

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

  -- lock order: partition row, then registry row (refuses an unregistered partition)
  PERFORM syncular._lock_partition(prune.partition);
  SELECT p.max_commit_seq, p.horizon_seq INTO max_seq, old_horizon
    FROM syncular.sync_partitions p WHERE p.partition = prune.partition;

  -- floor: the lowest cursor of clients active within the window (none active: no constraint)
  SELECT min(c.cursor) INTO cursor_floor
    FROM syncular.sync_clients c
   WHERE c.partition = prune.partition AND c.updated_at_ms >= now_ms - active_window;
  cursor_floor := coalesce(cursor_floor, max_seq);
  -- forced: the newest commit created before now - forceAge
  SELECT max(c.commit_seq) INTO forced_seq
    FROM syncular.sync_commits c
   WHERE c.partition = prune.partition AND c.created_at_ms < now_ms - force_age;
  forced_seq := coalesce(forced_seq, 0);

  target := least(greatest(cursor_floor, forced_seq), max_seq - min_retained);
  horizon := greatest(old_horizon, greatest(target, 0));

  IF push_age IS NOT NULL THEN
    -- idempotency records whose commit is still in the log and older than the cutoff
    DELETE FROM syncular.sync_push_results r
     USING syncular.sync_commits c
     WHERE r.partition = prune.partition AND c.partition = r.partition
       AND c.client_id = r.client_id AND c.client_commit_id = r.client_commit_id
       AND c.created_at_ms < now_ms - push_age;
    GET DIAGNOSTICS removed_results = ROW_COUNT;
  END IF;

  IF horizon > 0 THEN
    DELETE FROM syncular.sync_commits c WHERE c.partition = prune.partition AND c.commit_seq <= horizon;
    GET DIAGNOSTICS removed = ROW_COUNT;
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
COMMENT ON FUNCTION syncular.prune(text, jsonb) IS
$$Prunes one partition's commit log (SPEC §4.6). Nothing prunes automatically: schedule it (hourly to daily).
retention (JSON object, all keys optional, non-negative integers): activeWindowMs (default 1209600000 = 14 d; clients updated within it hold the floor at their minimum cursor, a cursor of -1 holds everything), forceAgeMs (default 2592000000 = 30 d; commits created before now - forceAgeMs may be pruned regardless of cursors), minRetainedCommits (default 1000; the newest commits always kept), pushResultsOlderThanMs (absent by default = never; when set, also deletes the sync_push_results of commits still in the log created before now - value, before the log is cut), nowMs (clock override, for tests and replays).
target = min(max(floor, forcedSeq), maxSeq - minRetainedCommits); horizon = max(old horizon, target, 0); deletes sync_commits, sync_changes, sync_change_scopes and sync_tombstones with commit_seq <= horizon. With no active client the floor is maxSeq. Locks the sync_partitions row, then the registry row (FOR UPDATE). Safe to repeat.
Returns {previousHorizonSeq, horizonSeq, removedCommits[, removedPushResults]}.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}); sync.storage.invalid_limit (22023; details {key} for an unknown key, {key, value} for a bad value, {value} when retention is not an object).$$;

CREATE FUNCTION syncular.rotate_log_epoch(partition text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text := gen_random_uuid()::text;
BEGIN
  PERFORM syncular._lock_partition(rotate_log_epoch.partition);
  UPDATE syncular.sync_partition_registry r SET log_epoch = epoch, epoch_required = true
   WHERE r.partition = rotate_log_epoch.partition;
  DELETE FROM syncular.sync_clients c WHERE c.partition = rotate_log_epoch.partition;
  RETURN epoch;
END
$$;
COMMENT ON FUNCTION syncular.rotate_log_epoch(text) IS
$$Rotates a partition's log epoch, e.g. after a backup restore and before traffic resumes (SPEC §2.1, §4.6).
Under the partition lock (sync_partitions row, then registry row, FOR UPDATE): sets a new random epoch (gen_random_uuid()::text), epoch_required = true, and deletes every sync_clients row of the partition; clients then reset and re-bootstrap. Returns the new epoch.
Errors: sync.storage.partition_unregistered (SQLSTATE 42704; details {partition}) for a partition without a registry row.$$;

-- ---------------------------------------------------------------------------------------------
-- read-only views

CREATE VIEW syncular.partitions AS
SELECT coalesce(p.partition, r.partition)          AS partition,
       coalesce(p.max_commit_seq, 0)               AS max_commit_seq,
       coalesce(p.horizon_seq, 0)                  AS horizon_seq,
       r.log_epoch,
       r.last_authenticated_at_ms,
       (SELECT count(*) FROM syncular.sync_clients c
         WHERE c.partition = coalesce(p.partition, r.partition)) AS clients
  FROM syncular.sync_partitions p
  FULL JOIN syncular.sync_partition_registry r ON r.partition = p.partition;
COMMENT ON VIEW syncular.partitions IS
  'Read-only. One row per known partition (counter row and/or registry row): max_commit_seq, horizon_seq (0 when the partition never pushed), log_epoch and last_authenticated_at_ms (NULL when unregistered), clients = number of client records. SPEC §4.6.';

CREATE VIEW syncular.clients AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor, c.subscriptions, c.updated_at_ms,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
COMMENT ON VIEW syncular.clients IS
  'Read-only. The client records (SPEC §4.5) plus behind_horizon: true when 0 <= cursor < the partition''s horizon_seq (its next pull resets with sync.cursor_expired).';

CREATE VIEW syncular.commits AS
SELECT c.partition, c.commit_seq, c.client_id, c.client_commit_id, c.actor_id, c.created_at_ms,
       c.writer_version, coalesce(ch.changes, 0) AS changes, coalesce(ch.tables, '{}') AS tables
  FROM syncular.sync_commits c
  LEFT JOIN LATERAL (SELECT count(*) AS changes, array_agg(DISTINCT x.tbl ORDER BY x.tbl) AS tables
                       FROM syncular.sync_changes x
                      WHERE x.partition = c.partition AND x.commit_seq = c.commit_seq) ch ON true;
COMMENT ON VIEW syncular.commits IS
  'Read-only. The commit log (SPEC §2.1; table sync_commits) with changes = number of sync_changes rows and tables = the distinct tables they touch.';
