COMMENT ON FUNCTION syncular.handle_http(bytea, text, text, text) IS
'POST /sync as one row (SPEC §1.1): runs syncular.handle in a subtransaction and returns exactly what the '
'HTTP endpoint answers. Success: 200, application/vnd.syncular.sync.v2, the SSP2 response. A content_type whose '
'part before '';'' is not application/vnd.syncular.sync.v2: 415 with a sync.invalid_request JSON body. A catalogue '
'error raised by the round: its catalogue HTTP status (SPEC §10) and the JSON body {code, category, retryable, '
'recommendedAction, message, details?}, nothing written. Any other error: 500 sync.internal_error with a fixed '
'message (the database text goes to the server log only). Query cancellation is re-raised. SECURITY DEFINER like '
'syncular.handle.';
