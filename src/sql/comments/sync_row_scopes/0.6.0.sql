COMMENT ON TABLE syncular.sync_row_scopes IS
'Inverted index over the current synced rows: one row per (partition, table, scope variable, value, row id); bootstrap pages walk its primary key (row_id COLLATE "C": row ids in byte order). Kept in step with the synced tables by the engine: the entries of a row are exactly its stored _sync_scopes, and writers find a row''s entries from those.';
