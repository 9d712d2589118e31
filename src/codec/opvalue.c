/*
 * opvalue.c — the tagged value encoding of the remote operation protocol (REMOTE.md rev. 1 §4):
 * strict decoding into an SspOpValue tree and canonical encoding back.  See ops.h for the rules.
 *
 * The decoder works on the JSON DOM of json.c, which already bounds nesting
 * (SSP_JSON_MAX_DEPTH), so the recursion here is bounded by it too: every tagged level is at
 * least two JSON levels.
 */
#include "ops.h"
#include "ssp_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PATH_MAX_LEN 120

static bool
bad(SspError *err, const char *path, const char *what)
{
	return ssp_fail(err, OPS_ERR_INVALID_REQUEST, "%s: %s", path, what);
}

static bool
str_is(const SspStr *s, const char *lit)
{
	size_t      n = strlen(lit);

	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

bool
ssp_int64_parse_canonical(const char *s, size_t len, int64_t *out)
{
	static const char maxpos[] = "9223372036854775807";
	static const char maxneg[] = "9223372036854775808";
	bool        neg = false;
	const char *d = s;
	size_t      n = len;
	uint64_t    v = 0;

	if (n > 0 && d[0] == '-')
	{
		neg = true;
		d++;
		n--;
	}
	if (n == 0 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++)
		if (d[i] < '0' || d[i] > '9')
			return false;
	if (d[0] == '0' && (n > 1 || neg))
		return false;			/* leading zero, or "-0" */
	if (n == 19 && memcmp(d, neg ? maxneg : maxpos, 19) > 0)
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t) (d[i] - '0');
	*out = neg ? (int64_t) (0 - v) : (int64_t) v;
	return true;
}

static int
b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool
ssp_base64_decode_strict(SspArena *a, const char *s, size_t len, SspBytes *out)
{
	size_t      pad = 0,
				nbytes;
	uint8_t    *buf;
	size_t      o = 0;

	if (len % 4 != 0)
		return false;
	if (len > 0 && s[len - 1] == '=')
		pad = (len > 1 && s[len - 2] == '=') ? 2 : 1;
	nbytes = len / 4 * 3 - pad;
	if (nbytes > UINT32_MAX)
		return false;
	buf = ssp_arena_alloc(a, nbytes + 1);
	if (buf == NULL)
		return false;
	for (size_t i = 0; i < len; i += 4)
	{
		int         q[4];
		bool        last = i + 4 == len;
		uint32_t    v;

		for (int k = 0; k < 4; k++)
		{
			bool        padpos = last && k >= 4 - (int) pad;

			q[k] = padpos ? 0 : b64val(s[i + k]);
			if (padpos ? s[i + k] != '=' : q[k] < 0)
				return false;
		}
		v = ((uint32_t) q[0] << 18) | ((uint32_t) q[1] << 12) | ((uint32_t) q[2] << 6) | (uint32_t) q[3];
		/* canonical form: the bits under the padding are zero */
		if ((pad == 1 && last && (v & 0xFF) != 0) || (pad == 2 && last && (v & 0xFFFF) != 0))
			return false;
		buf[o++] = (uint8_t) (v >> 16);
		if (!(last && pad == 2))
			buf[o++] = (uint8_t) (v >> 8);
		if (!(last && pad >= 1))
			buf[o++] = (uint8_t) v;
	}
	out->ptr = buf;
	out->len = (uint32_t) nbytes;
	return true;
}

static bool
decode_text(const SspJson *j, const char *path, SspStr *out, SspError *err)
{
	if (j->kind != SSP_JSON_STRING)
		return bad(err, path, "must be a JSON string");
	if (!ssp_utf8_valid(j->text.ptr, j->text.len))
		return bad(err, path, "string is not valid UTF-8 (lone surrogate)");
	*out = j->text;
	return true;
}

static bool decode_value(SspArena *a, const SspJson *j, const char *path, SspOpValue *out,
						 SspError *err);

static bool
decode_array(SspArena *a, const SspJson *v, const char *path, SspOpValue *out, SspError *err)
{
	char        sub[PATH_MAX_LEN];

	if (v->kind != SSP_JSON_ARRAY)
		return bad(err, path, "array value must be a JSON array");
	out->count = v->count;
	out->items = ssp_arena_array(a, v->count ? v->count : 1, sizeof(SspOpValue));
	if (out->items == NULL)
		return ssp_oom(err);
	for (uint32_t i = 0; i < v->count; i++)
	{
		snprintf(sub, sizeof(sub), "%s[%u]", path, i);
		if (!decode_value(a, &v->items[i], sub, &out->items[i], err))
			return false;
	}
	return true;
}

static bool
decode_object(SspArena *a, const SspJson *v, const char *path, SspOpValue *out, SspError *err)
{
	char        sub[PATH_MAX_LEN];

	if (v->kind != SSP_JSON_ARRAY)
		return bad(err, path, "object value must be a JSON array of [key, value] pairs");
	out->count = v->count;
	out->items = ssp_arena_array(a, v->count ? v->count : 1, sizeof(SspOpValue));
	out->keys = ssp_arena_array(a, v->count ? v->count : 1, sizeof(SspStr));
	if (out->items == NULL || out->keys == NULL)
		return ssp_oom(err);
	for (uint32_t i = 0; i < v->count; i++)
	{
		const SspJson *pair = &v->items[i];

		snprintf(sub, sizeof(sub), "%s[%u]", path, i);
		if (pair->kind != SSP_JSON_ARRAY || pair->count != 2)
			return bad(err, sub, "an object member must be a [key, value] pair");
		if (!decode_text(&pair->items[0], sub, &out->keys[i], err))
			return false;
		/* quadratic, but bounded by the request size limit and keeps the tree order */
		for (uint32_t k = 0; k < i; k++)
			if (out->keys[k].len == out->keys[i].len &&
				memcmp(out->keys[k].ptr, out->keys[i].ptr, out->keys[i].len) == 0)
				return bad(err, sub, "duplicate object key");
		snprintf(sub, sizeof(sub), "%s.%.*s", path, (int) (out->keys[i].len > 40 ? 40 : out->keys[i].len),
				 out->keys[i].ptr);
		if (!decode_value(a, &pair->items[1], sub, &out->items[i], err))
			return false;
	}
	return true;
}

static bool
decode_value(SspArena *a, const SspJson *j, const char *path, SspOpValue *out, SspError *err)
{
	const SspJson *t = NULL,
			   *v = NULL;

	memset(out, 0, sizeof(*out));
	if (j->kind != SSP_JSON_OBJECT)
		return bad(err, path, "an encoded value must be a JSON object {\"t\", \"v\"}");
	for (uint32_t i = 0; i < j->count; i++)
	{
		const SspJson **slot = str_is(&j->keys[i], "t") ? &t : str_is(&j->keys[i], "v") ? &v : NULL;

		if (slot == NULL)
			return bad(err, path, "an encoded value has only the members \"t\" and \"v\"");
		if (*slot != NULL)
			return bad(err, path, "duplicate member in an encoded value");
		*slot = &j->items[i];
	}
	if (t == NULL || t->kind != SSP_JSON_STRING)
		return bad(err, path, "missing or non-string tag \"t\"");
	if (str_is(&t->text, "null"))
	{
		if (v != NULL)
			return bad(err, path, "a null value has no \"v\"");
		out->kind = SSP_OP_NULL;
		return true;
	}
	if (v == NULL)
		return bad(err, path, "missing \"v\"");
	if (str_is(&t->text, "boolean"))
	{
		if (v->kind != SSP_JSON_TRUE && v->kind != SSP_JSON_FALSE)
			return bad(err, path, "boolean value must be true or false");
		out->kind = SSP_OP_BOOLEAN;
		out->b = v->kind == SSP_JSON_TRUE;
		return true;
	}
	if (str_is(&t->text, "number"))
	{
		if (v->kind != SSP_JSON_NUMBER || !isfinite(v->num))
			return bad(err, path, "number value must be a finite JSON number");
		out->kind = SSP_OP_NUMBER;
		out->num = v->num;
		return true;
	}
	if (str_is(&t->text, "string"))
	{
		out->kind = SSP_OP_STRING;
		return decode_text(v, path, &out->str, err);
	}
	if (str_is(&t->text, "integer"))
	{
		if (v->kind != SSP_JSON_STRING || !ssp_int64_parse_canonical(v->text.ptr, v->text.len, &out->i))
			return bad(err, path, "integer value must be canonical decimal text in the int64 range");
		out->kind = SSP_OP_INTEGER;
		return true;
	}
	if (str_is(&t->text, "bytes"))
	{
		if (v->kind != SSP_JSON_STRING ||
			!ssp_base64_decode_strict(a, v->text.ptr, v->text.len, &out->bytes))
			return bad(err, path, "bytes value must be canonical padded standard base64");
		out->kind = SSP_OP_BYTES;
		return true;
	}
	if (str_is(&t->text, "array"))
	{
		out->kind = SSP_OP_ARRAY;
		return decode_array(a, v, path, out, err);
	}
	if (str_is(&t->text, "object"))
	{
		out->kind = SSP_OP_OBJECT;
		return decode_object(a, v, path, out, err);
	}
	return bad(err, path, "unknown tag");
}

bool
ssp_op_from_json(SspArena *a, const SspJson *j, const char *path, SspOpValue *out, SspError *err)
{
	return decode_value(a, j, path, out, err);
}

bool
ssp_op_decode(SspArena *a, const char *text, size_t len, SspOpValue **out, SspError *err)
{
	SspJson    *j;
	SspOpValue *v;

	if (!ssp_json_parse(a, text, len, &j, err))
	{
		if (err != NULL && err->code != NULL && strcmp(err->code, SSP_ERR_INVALID_REQUEST) == 0)
			err->code = OPS_ERR_INVALID_REQUEST;
		return false;
	}
	v = ssp_arena_alloc(a, sizeof(SspOpValue));
	if (v == NULL)
		return ssp_oom(err);
	if (!decode_value(a, j, "value", v, err))
		return false;
	*out = v;
	return true;
}

const SspOpValue *
ssp_op_member(const SspOpValue *v, const char *key)
{
	size_t      n = strlen(key);

	if (v == NULL || v->kind != SSP_OP_OBJECT)
		return NULL;
	for (uint32_t i = 0; i < v->count; i++)
		if (v->keys[i].len == n && memcmp(v->keys[i].ptr, key, n) == 0)
			return &v->items[i];
	return NULL;
}

static bool
put_lit(SspBuf *out, const char *s)
{
	return ssp_buf_append(out, s, strlen(s));
}

static bool
encode_string(SspBuf *out, const SspStr *s, SspError *err)
{
	if (!ssp_utf8_valid(s->ptr, s->len))
		return ssp_fail(err, OPS_ERR_INVALID_REQUEST, "string to encode is not valid UTF-8");
	return ssp_json_escape(out, s->ptr, s->len);
}

bool
ssp_op_encode(SspBuf *out, const SspOpValue *v, SspError *err)
{
	switch (v->kind)
	{
		case SSP_OP_NULL:
			put_lit(out, "{\"t\":\"null\"}");
			break;
		case SSP_OP_BOOLEAN:
			put_lit(out, v->b ? "{\"t\":\"boolean\",\"v\":true}" : "{\"t\":\"boolean\",\"v\":false}");
			break;
		case SSP_OP_NUMBER:
			if (!isfinite(v->num))
				return ssp_fail(err, OPS_ERR_INVALID_REQUEST, "number to encode is not finite");
			put_lit(out, "{\"t\":\"number\",\"v\":");
			ssp_render_double(out, v->num);
			put_lit(out, "}");
			break;
		case SSP_OP_STRING:
			put_lit(out, "{\"t\":\"string\",\"v\":");
			if (!encode_string(out, &v->str, err))
				return false;
			put_lit(out, "}");
			break;
		case SSP_OP_INTEGER:
			ssp_buf_printf(out, "{\"t\":\"integer\",\"v\":\"%lld\"}", (long long) v->i);
			break;
		case SSP_OP_BYTES:
			put_lit(out, "{\"t\":\"bytes\",\"v\":\"");
			ssp_base64_encode(out, v->bytes.ptr, v->bytes.len);
			put_lit(out, "\"}");
			break;
		case SSP_OP_ARRAY:
		case SSP_OP_OBJECT:
			put_lit(out, v->kind == SSP_OP_ARRAY ? "{\"t\":\"array\",\"v\":[" : "{\"t\":\"object\",\"v\":[");
			for (uint32_t i = 0; i < v->count; i++)
			{
				if (i > 0)
					put_lit(out, ",");
				if (v->kind == SSP_OP_OBJECT)
				{
					put_lit(out, "[");
					if (!encode_string(out, &v->keys[i], err))
						return false;
					put_lit(out, ",");
				}
				if (!ssp_op_encode(out, &v->items[i], err))
					return false;
				if (v->kind == SSP_OP_OBJECT)
					put_lit(out, "]");
			}
			put_lit(out, "]}");
			break;
		default:
			return ssp_fail(err, OPS_ERR_INVALID_REQUEST, "unknown value kind");
	}
	if (out->oom)
		return ssp_oom(err);
	return true;
}
