COMMENT ON FUNCTION syncular._checkpoint_barrier(jsonb, integer) IS
  'Internal hook, a no-op until replaced (60_barrier.sql). Refuses (sync.storage.checkpoint_incomplete) when a checkpoint at running_version is not activated and is not among the caller''s declarations (checkpoints: JSON array). barrier-rfc0007.md §3.4.';
