COMMENT ON FUNCTION syncular.advance_checkpoint(text, text, bigint, bigint, bigint) IS
'RFC 0007 §3.2 advanceCheckpoint. Compare-and-set on owner_epoch only (state is not checked, as in the reference): '
'sets watermark (a commit_seq), observed_rows and updated_at_ms when the row''s owner_epoch equals owner_epoch. '
'Returns true iff one row changed; a stale owner (or an unknown checkpoint) gets false and never an error. Runs in '
'the caller''s transaction, so a backfill batch can share one transaction with its push: '
'SELECT syncular.advance_checkpoint(...), syncular.handle(...) -- and roll back when it returns false. '
'Errors: sync.storage.invalid_checkpoints (22023) for a NULL watermark or observed_rows.';
