COMMENT ON FUNCTION syncular.shard_conninfos() IS
'The distinct shard databases of the cluster: the libpq connection strings of the p<i> options of server syncular, '
'without their user and password keywords, sorted; no rows when the server does not exist. syncular-gateway '
'LISTENs for syncular_commit on each (the NOTIFY is issued by the shard that commits, SPEC §8.2), connecting with '
'its own role and credentials, and re-reads the list periodically (a moved shard). SECURITY DEFINER so that the '
'gateway role needs no access to the SQL/MED catalogs: grant it EXECUTE. Raises nothing. docs/scaling.md.';
