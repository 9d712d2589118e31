COMMENT ON FUNCTION syncular._drop_owned_indexes(text, text, text[]) IS
  'Internal. Drops the Syncular-owned indexes of app_schema.tbl: free-standing (not primary, not constraint-owned) indexes named sync_ix_* or equal to a declared index name. Operator indexes survive. data-model-and-storage.md §6 (user indexes), §7 step 4.';
