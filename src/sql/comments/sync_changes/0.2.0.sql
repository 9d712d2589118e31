COMMENT ON TABLE syncular.sync_changes IS
'The changes of each logged commit (SPEC §2.2), in order (idx): table, row id, op (1 upsert, 2 delete), row version, stored scopes and the full-row payload; incremental pulls serve them. Pruned with their commit.';
