COMMENT ON VIEW syncular.changes IS
'Every change of the commit log (SPEC §2.2), wherever it is kept: the sync_changes rows, and the change a commit of one upsert keeps in its sync_commits row (idx 0; docs/storage.md "Commit log layout"). Columns as in sync_changes. Read-only; owner-only until granted.';
