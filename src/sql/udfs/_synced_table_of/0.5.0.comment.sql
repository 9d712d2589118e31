COMMENT ON FUNCTION syncular._synced_table_of(oid) IS
  'Internal. The name of the synced table of the registered schema whose relation is relid, or '''' when it is none (no registration, another table). Read by the synced-table DDL guard. Raises nothing.';
