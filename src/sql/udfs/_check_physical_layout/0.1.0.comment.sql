COMMENT ON FUNCTION syncular._check_physical_layout(jsonb) IS
  'Internal hook, currently a no-op. Will check every synced table of the compiled schema against the physical catalog (meta column types and nullability, PK) and raise sync.storage.physical_layout_mismatch (SQLSTATE 55000) with details {table, reason, ...}. barrier-rfc0007.md §6.2.';
