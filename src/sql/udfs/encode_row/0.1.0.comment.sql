COMMENT ON FUNCTION syncular.encode_row(text, jsonb) IS
'Encodes a JSON object as a full row (wire-format §4.2) of a registered table. Every column is written; '
'an absent key or JSON null is NULL. Raises sync.invalid_request (details {table, column}) for an unknown '
'key, a value of the wrong JSON type, an integer outside ±(2^53-1), bad base64, NULL on a non-nullable '
'column; sync.unknown_table for a table that is not registered.';
