COMMENT ON FUNCTION syncular.claim_checkpoint(text, text, integer) IS
'RFC 0007 §3.2 claimCheckpoint. One UPDATE of the (partition, name) row unless it is activated: owner_epoch + 1, '
'declared -> backfilling (backfilling stays: a takeover), schema_version overwritten with the caller''s value '
'(reference behaviour), updated_at_ms = now. Returns the claimed row as JSON (see declare_checkpoint); its '
'ownerEpoch is the caller''s owner epoch. Concurrent claimers serialize on the row lock and get distinct epochs. '
'Errors: sync.storage.checkpoint_not_declared (42704) when the row is absent or activated; '
'sync.storage.invalid_checkpoints (22023) for NULL/empty arguments.';
