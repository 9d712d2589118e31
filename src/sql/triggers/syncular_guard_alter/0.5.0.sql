CREATE EVENT TRIGGER syncular_guard_alter ON ddl_command_start WHEN TAG IN ('ALTER TABLE', 'ALTER TRIGGER')
  EXECUTE FUNCTION syncular._guard_synced_ddl();
