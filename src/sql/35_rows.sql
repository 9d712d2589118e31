-- syncular install script, part 35: row helpers (src/rows.c).
-- A row of a registered table as a JSON object keyed by column name, to and from the row codec
-- (shared/reference/wire-format.md §4.2 full rows, §4.3 sparse rows).
-- JSON mapping: string -> JSON string; integer -> number (an integer within ±(2^53-1));
-- float -> number (NaN/±Infinity decode to null); boolean -> true/false; json -> the embedded
-- JSON value (encoding stores the jsonb value's text; decoding returns the parsed value, or null
-- when jsonb cannot hold it, e.g. U+0000); bytes and crdt -> standard base64 string;
-- blob_ref -> JSON object; SQL NULL / JSON null -> NULL.

CREATE FUNCTION syncular.encode_row(tbl text, "row" jsonb)
RETURNS bytea LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_encode_row';
COMMENT ON FUNCTION syncular.encode_row(text, jsonb) IS
'Encodes a JSON object as a full row (wire-format §4.2) of a registered table. Every column is written; '
'an absent key or JSON null is NULL. Raises sync.invalid_request (details {table, column}) for an unknown '
'key, a value of the wrong JSON type, an integer outside ±(2^53-1), bad base64, NULL on a non-nullable '
'column; sync.unknown_table for a table that is not registered.';

CREATE FUNCTION syncular.encode_sparse_row(tbl text, "row" jsonb)
RETURNS bytea LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_encode_sparse_row';
COMMENT ON FUNCTION syncular.encode_sparse_row(text, jsonb) IS
'Encodes a JSON object as a sparse row (wire-format §4.3, the wire-3 push payload): the keys of the '
'object are the present columns (JSON null = present NULL); the primary key is required. Errors as '
'syncular.encode_row.';

CREATE FUNCTION syncular.decode_row(tbl text, payload bytea)
RETURNS jsonb LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_decode_row';
COMMENT ON FUNCTION syncular.decode_row(text, bytea) IS
'Decodes a full row (wire-format §4.2) of a registered table into {column: value} with every column. '
'Raises sync.invalid_request (details {table}) when the bytes do not decode against the table''s columns, '
'sync.unknown_table for a table that is not registered.';

CREATE FUNCTION syncular.decode_sparse_row(tbl text, payload bytea)
RETURNS jsonb LANGUAGE C STABLE STRICT AS 'MODULE_PATHNAME', 'syncular_decode_sparse_row';
COMMENT ON FUNCTION syncular.decode_sparse_row(text, bytea) IS
'Decodes a sparse row (wire-format §4.3) into {column: value}; absent columns are omitted, present NULLs '
'are JSON null. Errors as syncular.decode_row.';
