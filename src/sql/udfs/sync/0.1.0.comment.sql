COMMENT ON PROCEDURE syncular.sync(bytea, text, text, bytea) IS
'The procedure form of syncular.handle (same arguments, errors and response in `response`). Called outside a '
'transaction block it commits after every pushed commit, releasing the partition lock between commits as the '
'reference server does, and serves the pull in a final transaction; inside a transaction block it behaves like '
'syncular.handle. Runs with the caller''s rights (PostgreSQL forbids transaction control in SECURITY DEFINER '
'procedures): the calling role needs the privileges on the syncular catalog tables and the synced tables that '
'handle otherwise holds as its owner.';
