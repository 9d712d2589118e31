COMMENT ON COLUMN syncular.sync_operation_commands.operation_id IS 'Operation id of the registered command (REMOTE.md §3), unique.';
COMMENT ON COLUMN syncular.sync_operation_commands.authorize IS 'Authorize function (actor_id text, partition text, params jsonb) returning boolean.';
COMMENT ON COLUMN syncular.sync_operation_commands.command IS 'Command function (actor_id text, partition text, params jsonb) returning the mutations (full-row upserts and deletes).';
