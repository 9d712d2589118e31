CREATE EVENT TRIGGER syncular_guard_drop ON sql_drop
  EXECUTE FUNCTION syncular._guard_synced_ddl();
