-- syncular install script, part 35: row helpers (src/rows.c).
-- A row of a registered table as a JSON object keyed by column name, to and from the row codec
-- (shared/reference/wire-format.md §4.2 full rows, §4.3 sparse rows).
-- JSON mapping: string -> JSON string; integer -> number (an integer within ±(2^53-1));
-- float -> number (NaN/±Infinity decode to null); boolean -> true/false; json -> the embedded
-- JSON value (encoding stores the jsonb value's text; decoding returns the parsed value, or null
-- when jsonb cannot hold it, e.g. U+0000); bytes and crdt -> standard base64 string;
-- blob_ref -> JSON object; SQL NULL / JSON null -> NULL.

--#include udfs/encode_row/0.1.0.sql
--#include udfs/encode_row/0.1.0.comment.sql

--#include udfs/encode_sparse_row/0.1.0.sql
--#include udfs/encode_sparse_row/0.1.0.comment.sql

--#include udfs/decode_row/0.1.0.sql
--#include udfs/decode_row/0.1.0.comment.sql

--#include udfs/decode_sparse_row/0.1.0.sql
--#include udfs/decode_sparse_row/0.1.0.comment.sql
