COMMENT ON FUNCTION syncular._install_checkpoints(jsonb, integer) IS
  'Internal hook, currently a no-op. Called by ensure_schema after a create or a bump, in the bump transaction: will install each declared backfill checkpoint (checkpoints: JSON array) and raise the writer fence to version. barrier-rfc0007.md §3.4 step 6.4, §5.';
