/*
 * ops.h — the value encoding of the remote operation protocol (REMOTE.md revision 1, §4):
 * recursively tagged JSON values, decoded into a tree and encoded back, in the pure codec (no
 * PostgreSQL dependency).
 *
 *   {"t":"null"}                  {"t":"boolean","v":true}        {"t":"number","v":1.5}
 *   {"t":"string","v":"x"}        {"t":"integer","v":"42"}        {"t":"bytes","v":"AAE="}
 *   {"t":"array","v":[...]}       {"t":"object","v":[["key",<value>],...]}
 *
 * Decoding is strict, so every client text has exactly one meaning: a tag object has exactly
 * the members `t` and `v` (`t` alone for null), integers are canonical decimal text in the
 * int64 range (no sign on zero, no leading zeros, no '+'), bytes are canonical padded standard
 * base64 (unused bits zero), numbers are finite, strings and keys are valid UTF-8 (no lone
 * surrogates), object keys are unique.  Every failure is OPS_ERR_INVALID_REQUEST
 * ("operation.invalid_request") with a message naming the path of the bad value; allocation
 * failure is SSP_ERR_INTERNAL.
 */
#ifndef SSP_OPS_H
#define SSP_OPS_H

#include "ssp.h"

#define OPS_ERR_INVALID_REQUEST "operation.invalid_request"

typedef enum SspOpKind
{
	SSP_OP_NULL = 0,
	SSP_OP_BOOLEAN,
	SSP_OP_NUMBER,
	SSP_OP_STRING,
	SSP_OP_INTEGER,
	SSP_OP_BYTES,
	SSP_OP_ARRAY,
	SSP_OP_OBJECT
} SspOpKind;

typedef struct SspOpValue SspOpValue;
struct SspOpValue
{
	SspOpKind   kind;
	bool        b;              /* BOOLEAN */
	double      num;            /* NUMBER: finite */
	int64_t     i;              /* INTEGER: full int64 range */
	SspStr      str;            /* STRING: UTF-8, NUL-terminated copy */
	SspBytes    bytes;          /* BYTES */
	uint32_t    count;          /* ARRAY / OBJECT: members */
	SspStr     *keys;           /* OBJECT: keys, wire order, unique */
	SspOpValue *items;          /* ARRAY / OBJECT: values */
};

/* Decode one encoded value from JSON text; the tree lives in arena `a`. */
bool ssp_op_decode(SspArena *a, const char *text, size_t len, SspOpValue **out,
				   SspError *err);

/* Decode from an already parsed JSON DOM (path = label for messages, e.g. "request"). */
bool ssp_op_from_json(SspArena *a, const SspJson *j, const char *path, SspOpValue *out,
					  SspError *err);

/* Append the canonical encoding of v (no whitespace, members as `t` then `v`).  Refuses a
 * non-finite number or invalid UTF-8 with OPS_ERR_INVALID_REQUEST. */
bool ssp_op_encode(SspBuf *out, const SspOpValue *v, SspError *err);

/* The member `key` of an OBJECT value; NULL when v is not an object or has no such key. */
const SspOpValue *ssp_op_member(const SspOpValue *v, const char *key);

/* Canonical padded standard base64 decoding (REMOTE.md §4); false when not canonical. */
bool ssp_base64_decode_strict(SspArena *a, const char *s, size_t len, SspBytes *out);

/* Canonical int64 decimal text (REMOTE.md §4): "0" or -?[1-9][0-9]* within the int64 range. */
bool ssp_int64_parse_canonical(const char *s, size_t len, int64_t *out);

#endif							/* SSP_OPS_H */
