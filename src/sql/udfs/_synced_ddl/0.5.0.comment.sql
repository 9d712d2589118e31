COMMENT ON FUNCTION syncular._synced_ddl(boolean) IS
  'Internal. on = true: this backend''s DDL on synced tables passes the guard of syncular._guard_synced_ddl until _synced_ddl(false), the end of the transaction, or the rollback of the subtransaction that set it; ensure_schema''s bump sets it around its ALTER TABLE and DROP TABLE. No grant: superuser / extension owner only. Raises nothing.';
