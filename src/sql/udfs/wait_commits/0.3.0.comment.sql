COMMENT ON FUNCTION syncular.wait_commits(bigint, integer) IS
'Commit wake-ups of the current database from the shared-memory ring (SPEC §8.2, §8.3; docs/realtime.md '
'"Commit wake-ups"). after: the position returned by the previous call (NULL: start at the current head, '
'returns at once); timeout_ms: how long to sleep while there is nothing after `after` (0: do not sleep). '
'Rows kind = ''commit'' (position, partition, commit_seq: a commit that became visible; consecutive ones of '
'one partition collapse into the last, at most 1000 per call), then exactly one final row with partition and '
'commit_seq NULL: ''head'' (caught up; position = the current head), ''more'' (row limit reached: call again '
'at once) or ''lost'' (wake-ups after `after` were overwritten - the ring holds 4096 wake-ups and 512 kB of '
'partition names for the whole cluster -, `after` is from an earlier server run, or a partition was longer than '
'64 kB: resynchronize every partition, then continue). The final row''s position is the next call''s `after`. '
'Only commits pushed with the ring mode (syncular.commit_wakeup_mode() ring or both) are recorded. '
'The sleep ends on pg_cancel_backend and statement_timeout (SQLSTATE 57014). Errors: '
'sync.storage.wakeup_unavailable (55000: the library is not in shared_preload_libraries; HINT says what to do), '
'sync.invalid_request (22023: timeout_ms NULL or negative). Grant EXECUTE to the gateway role only.';
