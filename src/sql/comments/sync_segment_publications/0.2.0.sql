COMMENT ON TABLE syncular.sync_segment_publications IS
'Publications of stored segments (SPEC §5.1): the reuse key (partition, log epoch, table, schema version, media '
'type, scope digest §3.5, grant digest, asOfCommitSeq, page start and page size) with the page continuation, '
'creation and expiry (syncular.segment_ttl). grant_digest hashes the read restriction on unrequested scope '
'variables, so two actors share a segment only when they may read exactly the same rows. UNLOGGED cache.';
