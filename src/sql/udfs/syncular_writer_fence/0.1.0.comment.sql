COMMENT ON FUNCTION syncular.syncular_writer_fence() IS
'Trigger function of sync_commits_writer_fence (BEFORE INSERT on syncular.sync_commits; RFC 0007 writer fence, '
'barrier-rfc0007.md §5): refuses a commit whose writer_version is NULL or below '
'sync_writer_fence.required_writer_version for its partition, raising sync.storage.writer_fence_rejected '
'(SQLSTATE P0001, message = the code, DETAIL {"code": "sync.storage.writer_fence_rejected", "details": '
'{"partition", "writerVersion", "requiredWriterVersion"}}, the catalogue form). Partitions without a fence row are '
'not fenced. Through the engine: raised as is by syncular.handle / syncular.push / CALL syncular.sync; '
'syncular.handle_http answers 500 sync.internal_error with a fixed message.';
