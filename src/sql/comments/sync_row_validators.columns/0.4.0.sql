COMMENT ON COLUMN syncular.sync_row_validators.tbl IS 'Synced table the validator guards.';
COMMENT ON COLUMN syncular.sync_row_validators.fn IS 'Row validator (op, tbl, row_id, new_row, stored_row, actor_id, partition) RETURNS void.';
