COMMENT ON TABLE syncular.sync_settings IS
'The registration (singleton id 1): the app schema holding the synced tables, the compiled schema the C engine reads (docs/compiled-schema.md), and the hooks: scope resolver, commit validator, reaction planner. Written by ensure_schema and the set_* functions; emptied by unregister_schema.';
