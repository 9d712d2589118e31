COMMENT ON FUNCTION syncular.encode_sparse_row(text, jsonb) IS
'Encodes a JSON object as a sparse row (wire-format §4.3, the wire-3 push payload): the keys of the '
'object are the present columns (JSON null = present NULL); the primary key is required. Errors as '
'syncular.encode_row.';
