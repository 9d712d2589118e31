COMMENT ON FUNCTION syncular._serve_gate_check(text, integer, jsonb) IS
'Internal; the C engine''s serve gate as SQL (RFC 0007 §4.4, src/gate.c): the same C code the engine runs at the '
'entry gate of every round, in every push commit right after the partition lock, and in the pull''s snapshot before '
'any subscription is served. STABLE, so its reads use the calling statement''s snapshot. '
'Declarations come from the setting syncular.checkpoints (JSON array text as for serve_gate; unset or empty = '
'none), set by the gateway with SET syncular.checkpoints = ''[...]''. token: NULL, or an earlier read''s token '
'(its members storedSchemaVersion and/or logEpoch are compared; others ignored). Returns the gate token '
'{storedSchemaVersion (0 without a marker), logEpoch (null without a registry row)}. Refusals, in order, all '
'sync.schema_not_ready (SQLSTATE 55000, message "server schema is not ready for this request"): schema, DETAIL '
'{"code":"sync.schema_not_ready","details":{"storedSchemaVersion":n,"runningSchemaVersion":n}}; checkpoint, '
'details {"partition":p,"projection":name}; epoch (a member of token differs from the current read), details '
'{"logEpochChanged":true}. Errors: sync.storage.invalid_checkpoints (22023) for a bad setting. Writes nothing.';
