COMMENT ON FUNCTION syncular._first_undeclared_checkpoint(jsonb, integer) IS
'Internal. (partition, name) of the first incomplete checkpoint at running_version (all partitions, ordered by '
'(partition, name) COLLATE "C") that the declarations do not cover (partition + name match; schemaVersion not '
'compared, RFC 0007 §3.1); both NULL when none. Raises sync.storage.invalid_checkpoints for a bad declaration list.';
