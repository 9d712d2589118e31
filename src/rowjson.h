/*
 * rowjson.h — JSON (jsonb) <-> codec value mapping, shared by rows.c (row helpers) and
 * debug.c (debug_encode).  Implemented in rows.c.
 *
 * Mapping (one column value):
 *   string   <-> JSON string
 *   integer  <-> JSON number (an integer within +-(2^53-1))
 *   float    <-> JSON number (NaN / +-Inf decode to null)
 *   boolean  <-> true / false
 *   json     <-> the embedded JSON value (decode: parsed; null when PostgreSQL cannot hold it)
 *   bytes, crdt <-> standard base64 string
 *   blob_ref <-> JSON object
 *   SQL NULL <-> JSON null
 */
#ifndef SYNCULAR_ROWJSON_H
#define SYNCULAR_ROWJSON_H

#include "postgres.h"
#include "lib/stringinfo.h"
#include "utils/jsonb.h"
#include "ssp.h"

/* How a json / blob_ref column value given as a jsonb value is turned into raw JSON text. */
typedef enum SyncJsonText
{
	SYNC_JSON_TEXT_PG,			/* PostgreSQL's jsonb text output ({"a": 1}) */
	SYNC_JSON_TEXT_COMPACT		/* compact ({"a":1}) */
} SyncJsonText;

/* jsonb_typeof of a value read from a container (scalar or jbvBinary); "value" for any other. */
extern const char *sync_jsonb_type_label(const JsonbValue *jv);
/* Append the compact JSON text of a jsonb value (scalar or jbvBinary container). */
extern void sync_jsonb_append_compact(StringInfo out, JsonbValue *jv);

/*
 * Convert one jsonb value to a codec value of column `col`.  jv == NULL or a JSON null gives
 * is_null = true (the caller checks nullability).  Strings and bytes point into palloc'd memory
 * of the current context.  Bad values raise sync.invalid_request with {table, column}.
 */
extern void sync_json_to_value(const char *table, const SspColumn *col, JsonbValue *jv,
							   SyncJsonText json_text, SspValue *out);

/* Push one codec value of column `col` as a jsonb value (token WJB_VALUE or WJB_ELEM). */
extern void sync_push_value(JsonbParseState **ps, JsonbIteratorToken tok, const char *table,
							const SspColumn *col, const SspValue *v);

/*
 * Push a (NUL-terminated) string, an object key, or an integer, as jsonb_in makes them (an
 * integer's numeric_in and int64_to_numeric both give the scale-0 numeric in its short form), so
 * a value built this way equals the parse of its text byte for byte.
 */
extern void sync_push_string(JsonbParseState **ps, JsonbIteratorToken tok, const char *s);
extern void sync_push_key(JsonbParseState **ps, const char *key);
extern void sync_push_int(JsonbParseState **ps, JsonbIteratorToken tok, int64 i);

/*
 * Push the parsed value of raw JSON text; pushes null when the text is not JSON or when
 * PostgreSQL's jsonb cannot represent it (U+0000, lone surrogates, numbers out of numeric range).
 */
extern void sync_push_json_text(JsonbParseState **ps, JsonbIteratorToken tok,
								const char *s, size_t len);

/*
 * Push the row bytes of registered table `tname` (full, or sparse) as one object {column: value}
 * (syncular.decode_row's value; rows.c).  Raises sync.unknown_table, or sync.invalid_request with
 * {table} when the bytes do not decode.
 */
extern JsonbValue *sync_push_row_object(JsonbParseState **ps, const char *tname,
										const uint8 *data, size_t len, bool sparse);

/* numeric_out text of a jsonb number (never exponent notation). */
extern char *sync_jsonb_number_text(JsonbValue *jv);

/* Parse numeric_out text as an integer within +-(2^53-1) ("12.000" counts as 12). */
extern bool sync_numeric_text_to_int53(const char *s, int64 *out);

/* Decode standard base64 (whitespace ignored) into *out (palloc'd); -1 when invalid. */
extern int	sync_base64_decode(const char *s, int len, char **out);

/*
 * Append a printf-style message to buf (the retry loop appendStringInfoVA needs); the one
 * formatter behind sync_raise_column and debug.c's field errors.
 */
extern void sync_append_vformat(StringInfo buf, const char *fmt, va_list args)
			pg_attribute_printf(2, 0);

/* Raise `code` with details {"table": table, "column": column} (column may be NULL). */
extern void sync_raise_column(const char *code, const char *table, const char *column,
							  const char *fmt,...) pg_attribute_printf(4, 5) pg_attribute_noreturn();

#endif							/* SYNCULAR_ROWJSON_H */
