COMMENT ON FUNCTION syncular._shard_failed(text, text) IS
'Internal. True when an error caught around a PL/Proxy call is PL/Proxy''s own failure to reach the shard '
'(SQLSTATE XX000, message "PL/Proxy function ..."), not an error the shard raised.';
