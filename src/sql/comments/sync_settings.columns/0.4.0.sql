COMMENT ON COLUMN syncular.sync_settings.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_settings.app_schema IS 'Schema holding the synced app tables.';
COMMENT ON COLUMN syncular.sync_settings.compiled IS 'Compiled schema the C engine reads (docs/compiled-schema.md).';
COMMENT ON COLUMN syncular.sync_settings.scope_resolver IS 'Scope resolver (actor, partition, client) RETURNS jsonb; NULL: none registered.';
COMMENT ON COLUMN syncular.sync_settings.commit_validator IS 'Whole-commit validator, NULL when none.';
COMMENT ON COLUMN syncular.sync_settings.reaction_planner IS 'Reaction planner, NULL when none.';
COMMENT ON COLUMN syncular.sync_settings.authenticator IS 'SQL request authenticator (method, path, headers, query) RETURNS jsonb, NULL when none.';
