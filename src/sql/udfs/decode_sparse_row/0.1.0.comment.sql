COMMENT ON FUNCTION syncular.decode_sparse_row(text, bytea) IS
'Decodes a sparse row (wire-format §4.3) into {column: value}; absent columns are omitted, present NULLs '
'are JSON null. Errors as syncular.decode_row.';
