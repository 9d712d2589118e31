COMMENT ON TABLE syncular.sync_row_validators IS
'The row validator of each synced table (docs/hooks.md), registered with syncular.set_row_validator.';
