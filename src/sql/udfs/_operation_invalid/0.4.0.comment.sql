COMMENT ON FUNCTION syncular._operation_invalid(text, text, text, jsonb) IS
'Internal. Raises sync.storage.operation_invalid (SQLSTATE 22023) for a refused registration: message prefixed with the operation id, details {operationId, rule, ...extra}, a HINT.';
