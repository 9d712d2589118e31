REVOKE ALL ON FUNCTION syncular._guard_synced_ddl() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_ddl(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_of(oid) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._synced_table_dropped() FROM PUBLIC;
