COMMENT ON FUNCTION syncular.decode_row(text, bytea) IS
'Decodes a full row (wire-format §4.2) of a registered table into {column: value} with every column. '
'Raises sync.invalid_request (details {table}) when the bytes do not decode against the table''s columns, '
'sync.unknown_table for a table that is not registered.';
