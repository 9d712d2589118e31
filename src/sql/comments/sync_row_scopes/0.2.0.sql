COMMENT ON TABLE syncular.sync_row_scopes IS
'Inverted index over the current synced rows: one row per (partition, table, scope variable, value, row id); bootstrap pages and scope checks read it. Kept in step with the synced tables by the engine.';
