/*
 * debug_render.c — canonical JSON rendering of SSP2 messages / SSG2 segments (SPEC §11).
 *
 *   syncular.debug_render(message bytea) RETURNS jsonb
 *       SPEC §11 rendering (ssp_render_message / ssp_render_segment; SSG2 is detected by its
 *       magic).  Bytes that do not decode raise the decode error's catalogue code in DETAIL.
 *       A string holding what jsonb cannot store (U+0000, a lone surrogate) keeps its \u escape
 *       as text (see jsonb_safe_text); a value jsonb cannot hold at all (a number beyond
 *       numeric's range) raises sync.invalid_request with details {"sqlstate": ...}.
 *   The inverse, syncular.debug_encode, is in debug_encode.c.
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "engine.h"
#include "rowjson.h"
#include "storage.h"
#include "debug_render.h"

PG_FUNCTION_INFO_V1(syncular_debug_render);

static int
hex4(const char *p)
{
	int			v = 0;

	for (int i = 0; i < 4; i++)
	{
		char		c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * The rendering as text jsonb_in accepts.  SSP2 strings and json-typed fields may carry U+0000 (a
 * NUL byte in a str, a \u0000 escape in JSON text) and json-typed fields lone UTF-16 surrogates
 * (\ud800), and the renderer spells them as \u escapes; jsonb cannot hold either (jsonb_in
 * raises 22P05 or 22P02).  Such an escape gets its backslash escaped, so jsonb keeps the six
 * characters verbatim ("a\u0000b" renders as the string a\u0000b): the rendering is a debugging
 * aid (SPEC §11), it must not fail on a valid message.  The input is the renderer's output, valid
 * JSON, so a backslash only occurs inside a string, where it starts an escape.
 */
static char *
jsonb_safe_text(const char *s, size_t len)
{
	StringInfoData b;
	size_t		i = 0;

	if (memchr(s, '\\', len) == NULL)
		return (char *) s;
	initStringInfo(&b);
	while (i < len)
	{
		int			cp;
		int			low = -1;

		if (s[i] != '\\' || i + 1 >= len)
		{
			appendStringInfoChar(&b, s[i++]);
			continue;
		}
		if (s[i + 1] != 'u' || i + 6 > len || (cp = hex4(s + i + 2)) < 0)
		{
			appendBinaryStringInfo(&b, s + i, 2);	/* \" \\ \/ \b \f \n \r \t */
			i += 2;
			continue;
		}
		if (cp >= 0xD800 && cp <= 0xDBFF && i + 12 <= len && s[i + 6] == '\\' && s[i + 7] == 'u')
			low = hex4(s + i + 8);
		if (low >= 0xDC00 && low <= 0xDFFF)
		{
			appendBinaryStringInfo(&b, s + i, 12);	/* a surrogate pair */
			i += 12;
			continue;
		}
		if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
			appendStringInfoChar(&b, '\\');
		appendBinaryStringInfo(&b, s + i, 6);
		i += 6;
	}
	return b.data;
}

/*
 * jsonb_in over the rendering.  After jsonb_safe_text the only refusals left are values jsonb
 * truly cannot hold (a number beyond numeric's range, a \u escape the database encoding cannot
 * represent): sync.invalid_request with the SQLSTATE in the details, not a bare data exception.
 */
static Datum
rendering_to_jsonb(const char *text)
{
	ErrorData  *refused;
	Datum		result = sync_jsonb_in_guarded(text, (uint32) strlen(text), &refused);

	if (refused)
		sync_raise(SSP_ERR_INVALID_REQUEST,
				   psprintf("debug_render: the message holds a value jsonb cannot store: %s",
							refused->message),
				   psprintf("{\"sqlstate\":\"%s\"}", unpack_sql_state(refused->sqlerrcode)));
	return result;
}

/* The rendering in `out` (ok: rendered) as jsonb; out freed. */
static Jsonb *
rendered_jsonb(bool ok, SspBuf *out, SspError *err)
{
	Datum		result;

	if (!ok)
	{
		ssp_buf_free(out);
		sync_raise_codec_error(err);
	}
	if (!ssp_buf_append(out, "", 1))
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	result = rendering_to_jsonb(jsonb_safe_text((char *) out->data, out->len - 1));
	ssp_buf_free(out);
	return DatumGetJsonbP(result);
}

Jsonb *
sync_render_jsonb(const uint8_t *data, size_t len)
{
	SspBuf		out;
	SspError	err;
	bool		ok;

	ssp_buf_init(&out);
	if (len >= 4 && memcmp(data, "SSG2", 4) == 0)
	{
		SspSegment	seg;

		memset(&seg, 0, sizeof(seg));
		if (!ssp_segment_decode(data, len, &seg, &err))
			sync_raise_codec_error(&err);
		ok = ssp_render_segment(&seg, &out, &err);
		ssp_segment_free(&seg);
	}
	else
	{
		SspMessage	msg;

		memset(&msg, 0, sizeof(msg));
		if (!ssp_decode_message(data, len, &msg, &err))
			sync_raise_codec_error(&err);
		ok = ssp_render_message(&msg, &out, &err);
		ssp_message_free(&msg);
	}
	return rendered_jsonb(ok, &out, &err);
}

Jsonb *
sync_render_frame_jsonb(uint16 wire, const SspFrame *frame)
{
	SspBuf		out;
	SspError	err;
	bool		ok;

	ssp_buf_init(&out);
	ok = ssp_render_frame(wire, frame, &out, &err);
	return rendered_jsonb(ok, &out, &err);
}

Datum
syncular_debug_render(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_JSONB_P(sync_render_jsonb((const uint8_t *) VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in)));
}
