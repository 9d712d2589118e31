COMMENT ON FUNCTION syncular._synced_table_dropped() IS
  'Internal. In a sql_drop event trigger: the first (by name) synced table of the registered schema among the dropped objects, or whose capture trigger is among them, or '''' when none is. Read by the synced-table DDL guard. Raises the PostgreSQL error when called outside a sql_drop event trigger.';
