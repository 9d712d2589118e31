COMMENT ON TABLE syncular.sync_operation_commands IS
'Registered remote commands (REMOTE.md §3), one row per operation id: the authorize function and the command function, both (actor_id text, partition text, params jsonb). Written by syncular.register_command; emptied by unregister_schema.';
