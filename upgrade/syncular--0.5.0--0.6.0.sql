-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

-- The commit log layout of 0.6.0 (docs/storage.md, "Commit log layout"): fewer index entries per
-- change and per row-scope entry, the stored rows kept.
-- sync_changes: a pull reads a commit's changes through the primary key (partition, commit_seq,
-- idx) and skips other tables' changes by the row's tbl.
DROP INDEX syncular.sync_changes_by_table;
-- sync_row_scopes: row_id COLLATE "C", so the primary key (rebuilt by the ALTER, the rows stay)
-- serves the byte-order walk of bootstrap pages; a row's entries are addressed through that key
-- from the scopes stored with the row.
DROP INDEX syncular.sync_row_scopes_paging;
DROP INDEX syncular.sync_row_scopes_by_row;
ALTER TABLE syncular.sync_row_scopes ALTER COLUMN row_id TYPE text COLLATE "C";
COMMENT ON TABLE syncular.sync_row_scopes IS
'Inverted index over the current synced rows: one row per (partition, table, scope variable, value, row id); bootstrap pages walk its primary key (row_id COLLATE "C": row ids in byte order). Kept in step with the synced tables by the engine: the entries of a row are exactly its stored _sync_scopes, and writers find a row''s entries from those.';
COMMENT ON COLUMN syncular.sync_row_scopes.row_id IS 'Primary key of the current row carrying this scope value (inverted index for bootstrap); COLLATE "C", so the primary key orders a value''s row ids in the byte order of bootstrap pages.';
