/*
 * wire.c — SSP2 envelope (WF §2), request and response frames (WF §3.2,
 * §3.4, §5.1), message grammar (WF §3.1, §3.3), unknown-frame skip-and-keep,
 * wire versions 1-3, and PUSH_RESULT_DETAILS validation/normalization.
 */
#include "ssp_internal.h"

#include <stdio.h>
#include <string.h>

#define INV SSP_ERR_INVALID_REQUEST

static const uint8_t magic_ssp2[4] = {'S', 'S', 'P', '2'};

bool
ssp_frame_registered(uint8_t kind, uint8_t type)
{
	if (type == SSP_FRAME_END)
		return true;
	if (kind == SSP_KIND_REQUEST)
		return type >= SSP_FRAME_REQ_HEADER && type <= SSP_FRAME_SUBSCRIPTION;
	if (kind == SSP_KIND_RESPONSE)
		return (type >= SSP_FRAME_RESP_HEADER && type <= SSP_FRAME_SUB_END) ||
			type == SSP_FRAME_LEASE || type == SSP_FRAME_PUSH_RESULT_DETAILS ||
			type == SSP_FRAME_ERROR;
	return false;
}

static bool
registered_any(uint8_t type)
{
	return ssp_frame_registered(SSP_KIND_REQUEST, type) ||
		ssp_frame_registered(SSP_KIND_RESPONSE, type);
}

const char *
ssp_frame_name(uint8_t type)
{
	switch (type)
	{
		case SSP_FRAME_END: return "END";
		case SSP_FRAME_REQ_HEADER: return "REQ_HEADER";
		case SSP_FRAME_PUSH_COMMIT: return "PUSH_COMMIT";
		case SSP_FRAME_PULL_HEADER: return "PULL_HEADER";
		case SSP_FRAME_SUBSCRIPTION: return "SUBSCRIPTION";
		case SSP_FRAME_RESP_HEADER: return "RESP_HEADER";
		case SSP_FRAME_PUSH_RESULT: return "PUSH_RESULT";
		case SSP_FRAME_SUB_START: return "SUB_START";
		case SSP_FRAME_COMMIT: return "COMMIT";
		case SSP_FRAME_SEGMENT_REF: return "SEGMENT_REF";
		case SSP_FRAME_SEGMENT_INLINE: return "SEGMENT_INLINE";
		case SSP_FRAME_SUB_END: return "SUB_END";
		case SSP_FRAME_LEASE: return "LEASE";
		case SSP_FRAME_PUSH_RESULT_DETAILS: return "PUSH_RESULT_DETAILS";
		case SSP_FRAME_ERROR: return "ERROR";
		default: return NULL;
	}
}

/* ------------------------------------------------------------------ */
/* PUSH_RESULT_DETAILS JSON (WF §3.4)                                  */
/* ------------------------------------------------------------------ */

typedef struct DetailsParts
{
	const SspJson *field_paths;
	const SspJson *reason;
	const SspJson *required_action;
	const SspJson *references;
	/* references, de-duplicated (last value wins) and sorted by key */
	uint32_t    nrefs;
	const SspStr *ref_keys;
	const SspJson **ref_vals;
} DetailsParts;

static bool
jstr_is(const SspStr *s, const char *lit)
{
	size_t      n = strlen(lit);

	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

/* [a-z][a-z0-9]*([._-][a-z0-9]+)* , at most maxlen chars */
static bool
is_token(const SspStr *s, size_t maxlen)
{
	bool        need_alnum = false;

	if (s->len == 0 || s->len > maxlen)
		return false;
	if (!(s->ptr[0] >= 'a' && s->ptr[0] <= 'z'))
		return false;
	for (uint32_t i = 1; i < s->len; i++)
	{
		char        c = s->ptr[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			need_alnum = false;
		else if ((c == '.' || c == '_' || c == '-') && !need_alnum)
			need_alnum = true;
		else
			return false;
	}
	return !need_alnum;
}

/* ident(.ident)* with ident = [A-Za-z_][A-Za-z0-9_]*, at most 160 chars */
static bool
is_field_path(const SspStr *s)
{
	bool        start = true;

	if (s->len == 0 || s->len > 160)
		return false;
	for (uint32_t i = 0; i < s->len; i++)
	{
		char        c = s->ptr[i];
		bool        alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

		if (start)
		{
			if (!alpha)
				return false;
			start = false;
		}
		else if (c == '.')
			start = true;
		else if (!alpha && !(c >= '0' && c <= '9'))
			return false;
	}
	return !start;
}

/* Decode one UTF-8/WTF-8 code point (input known well-formed). */
static uint32_t
cp_at(const uint8_t *s, size_t len, size_t *i)
{
	uint8_t     c = s[*i];
	uint32_t    cp;
	int         n;

	if (c < 0x80)
	{
		(*i)++;
		return c;
	}
	n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
	cp = c & (0x3F >> n);
	for (int k = 1; k <= n && *i + (size_t) k < len; k++)
		cp = (cp << 6) | (s[*i + k] & 0x3F);
	*i += (size_t) n + 1;
	return cp;
}

/* JS String.prototype.trim whitespace and line terminators. */
static bool
is_js_space(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
		(cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
		cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

static bool
is_ref_value(const SspStr *s)
{
	const uint8_t *u = (const uint8_t *) s->ptr;
	size_t      i = 0;
	uint32_t    cp = 0;
	bool        first = true;

	if (s->len > 256)
		return false;
	while (i < s->len)
	{
		cp = cp_at(u, s->len, &i);
		if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
			return false;       /* control characters */
		if (first && is_js_space(cp))
			return false;       /* not trimmed */
		first = false;
	}
	return s->len == 0 || !is_js_space(cp);
}

static void
sort_refs(SspStr *keys, const SspJson **vals, uint32_t n)
{
	/* insertion sort: at most 16 entries after validation */
	for (uint32_t i = 1; i < n; i++)
	{
		SspStr      k = keys[i];
		const SspJson *v = vals[i];
		uint32_t    j = i;

		while (j > 0 && ssp_utf16_cmp(keys[j - 1].ptr, keys[j - 1].len, k.ptr, k.len) > 0)
		{
			keys[j] = keys[j - 1];
			vals[j] = vals[j - 1];
			j--;
		}
		keys[j] = k;
		vals[j] = v;
	}
}

static bool
details_check(SspArena *a, const char *s, size_t len, DetailsParts *dp,
			  SspError *err)
{
	SspJson    *v;
	const char *bad = NULL;

	memset(dp, 0, sizeof(*dp));
	if (!ssp_json_parse(a, s, len, &v, err))
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: detailsJson is not valid JSON");
	if (v->kind != SSP_JSON_OBJECT)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: detailsJson is not an object");
	/* JSON.parse semantics: the last duplicate wins. */
	for (uint32_t i = 0; i < v->count; i++)
	{
		const SspStr *k = &v->keys[i];

		if (jstr_is(k, "fieldPaths"))
			dp->field_paths = &v->items[i];
		else if (jstr_is(k, "reason"))
			dp->reason = &v->items[i];
		else if (jstr_is(k, "requiredAction"))
			dp->required_action = &v->items[i];
		else if (jstr_is(k, "references"))
			dp->references = &v->items[i];
		else
			return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: unknown member \"%.*s\"",
							(int) (k->len > 40 ? 40 : k->len), k->ptr);
	}
	if (!dp->field_paths && !dp->reason && !dp->required_action && !dp->references)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: detailsJson has no member");
	if (dp->field_paths)
	{
		const SspJson *fp = dp->field_paths;

		if (fp->kind != SSP_JSON_ARRAY || fp->count < 1 || fp->count > 32)
			bad = "fieldPaths";
		for (uint32_t i = 0; !bad && i < fp->count; i++)
		{
			if (fp->items[i].kind != SSP_JSON_STRING || !is_field_path(&fp->items[i].text))
				bad = "fieldPaths";
			for (uint32_t j = 0; !bad && j < i; j++)
				if (fp->items[j].text.len == fp->items[i].text.len &&
					memcmp(fp->items[j].text.ptr, fp->items[i].text.ptr, fp->items[i].text.len) == 0)
					bad = "fieldPaths (duplicate)";
		}
	}
	if (!bad && dp->reason &&
		(dp->reason->kind != SSP_JSON_STRING || !is_token(&dp->reason->text, 96)))
		bad = "reason";
	if (!bad && dp->required_action &&
		(dp->required_action->kind != SSP_JSON_STRING ||
		 !is_token(&dp->required_action->text, 96)))
		bad = "requiredAction";
	if (!bad && dp->references)
	{
		const SspJson *r = dp->references;
		SspStr     *keys;
		const SspJson **vals;
		uint32_t    n = 0;

		if (r->kind != SSP_JSON_OBJECT)
			return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: references is not an object");
		keys = ssp_arena_array(a, r->count ? r->count : 1, sizeof(SspStr));
		vals = ssp_arena_array(a, r->count ? r->count : 1, sizeof(SspJson *));
		if (!keys || !vals)
			return ssp_oom(err);
		for (uint32_t i = 0; i < r->count; i++)
		{
			uint32_t    j;

			for (j = 0; j < n; j++)
				if (keys[j].len == r->keys[i].len &&
					memcmp(keys[j].ptr, r->keys[i].ptr, keys[j].len) == 0)
					break;
			keys[j] = r->keys[i];
			vals[j] = &r->items[i];
			if (j == n)
				n++;
		}
		if (n < 1 || n > 16)
			bad = "references (entry count)";
		for (uint32_t i = 0; !bad && i < n; i++)
			if (!is_token(&keys[i], 64) || vals[i]->kind != SSP_JSON_STRING ||
				!is_ref_value(&vals[i]->text))
				bad = "references";
		sort_refs(keys, vals, n);
		dp->nrefs = n;
		dp->ref_keys = keys;
		dp->ref_vals = vals;
	}
	if (bad)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: invalid %s", bad);
	return true;
}

static bool
details_write(const DetailsParts *dp, SspBuf *out)
{
	bool        first = true;

	ssp_put_u8(out, '{');
	if (dp->field_paths)
	{
		ssp_buf_append(out, "\"fieldPaths\":[", 14);
		for (uint32_t i = 0; i < dp->field_paths->count; i++)
		{
			if (i)
				ssp_put_u8(out, ',');
			ssp_json_escape(out, dp->field_paths->items[i].text.ptr,
							dp->field_paths->items[i].text.len);
		}
		ssp_put_u8(out, ']');
		first = false;
	}
	if (dp->reason)
	{
		if (!first)
			ssp_put_u8(out, ',');
		ssp_buf_append(out, "\"reason\":", 9);
		ssp_json_escape(out, dp->reason->text.ptr, dp->reason->text.len);
		first = false;
	}
	if (dp->required_action)
	{
		if (!first)
			ssp_put_u8(out, ',');
		ssp_buf_append(out, "\"requiredAction\":", 17);
		ssp_json_escape(out, dp->required_action->text.ptr, dp->required_action->text.len);
		first = false;
	}
	if (dp->references)
	{
		if (!first)
			ssp_put_u8(out, ',');
		ssp_buf_append(out, "\"references\":{", 14);
		for (uint32_t i = 0; i < dp->nrefs; i++)
		{
			if (i)
				ssp_put_u8(out, ',');
			ssp_json_escape(out, dp->ref_keys[i].ptr, dp->ref_keys[i].len);
			ssp_put_u8(out, ':');
			ssp_json_escape(out, dp->ref_vals[i]->text.ptr, dp->ref_vals[i]->text.len);
		}
		ssp_put_u8(out, '}');
	}
	ssp_put_u8(out, '}');
	return !out->oom;
}

/* Validate, and when out != NULL append the normalized text. */
static bool
details_process(const char *s, size_t len, SspBuf *out, SspError *err)
{
	SspArena   *a = ssp_arena_new();
	DetailsParts dp;
	SspBuf      tmp;
	bool        ok;

	if (a == NULL)
		return ssp_oom(err);
	ssp_buf_init(&tmp);
	ok = details_check(a, s, len, &dp, err);
	if (ok)
	{
		/* The size limit applies to the normalized object. */
		if (!details_write(&dp, &tmp))
			ok = ssp_oom(err);
		else if (tmp.len > 4096)
			ok = ssp_fail(err, INV, "PUSH_RESULT_DETAILS: detailsJson exceeds 4096 bytes");
		else if (out && !ssp_buf_append(out, tmp.data, tmp.len))
			ok = ssp_oom(err);
	}
	ssp_buf_free(&tmp);
	ssp_arena_free(a);
	return ok;
}

bool
ssp_details_json_valid(const char *s, size_t len, SspError *err)
{
	return details_process(s, len, NULL, err);
}

bool
ssp_details_json_normalize(const char *s, size_t len, SspBuf *out, SspError *err)
{
	return details_process(s, len, out, err);
}

/* ------------------------------------------------------------------ */
/* Grammar (WF §3.1, §3.3)                                             */
/* ------------------------------------------------------------------ */

void
ssp_grammar_init(SspGrammar *g, uint8_t kind)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
}

static bool
gfail(SspGrammar *g, SspError *err, const char *what)
{
	return ssp_fail(err, INV, "%s: %s (frame #%u)",
					g->kind == SSP_KIND_REQUEST ? "request" : "response", what,
					g->count);
}

static bool
details_follow_ok(const SspGrammar *g, const SspFrame *f, SspError *err)
{
	const SspFrame *p = g->prev;
	const SspPushResultDetails *d = &f->push_result_details;

	if (p == NULL || p->unknown || p->type != SSP_FRAME_PUSH_RESULT)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS does not directly follow a PUSH_RESULT");
	if (p->push_result.status != SSP_PUSH_REJECTED)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS follows a non-rejected PUSH_RESULT");
	if (p->push_result.client_commit_id.len != d->client_commit_id.len ||
		memcmp(p->push_result.client_commit_id.ptr, d->client_commit_id.ptr,
			   d->client_commit_id.len) != 0)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS clientCommitId does not match its PUSH_RESULT");
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		bool        found = false;

		for (uint32_t j = 0; j < p->push_result.nresults && !found; j++)
			found = p->push_result.results[j].op_index == d->entries[i].op_index &&
				p->push_result.results[j].status == SSP_RESULT_ERROR;
		if (!found)
			return ssp_fail(err, INV,
							"PUSH_RESULT_DETAILS opIndex %d names no error record",
							(int) d->entries[i].op_index);
	}
	return true;
}

bool
ssp_grammar_step(SspGrammar *g, const SspFrame *f, SspError *err)
{
	uint8_t     t = f->type;
	bool        unk = f->unknown;

	if (g->count == 0)
	{
		uint8_t     hdr = g->kind == SSP_KIND_REQUEST ? SSP_FRAME_REQ_HEADER : SSP_FRAME_RESP_HEADER;

		if (unk || t != hdr)
			return gfail(g, err, g->kind == SSP_KIND_REQUEST ?
						 "first frame must be REQ_HEADER" : "first frame must be RESP_HEADER");
		g->count = 1;
		g->prev = f;
		return true;
	}
	if (!unk && (t == SSP_FRAME_END || !ssp_frame_registered(g->kind, t)))
	{
		char        m[64];

		snprintf(m, sizeof(m), "frame type 0x%02x not allowed here", t);
		return gfail(g, err, m);
	}
	if (g->kind == SSP_KIND_REQUEST)
	{
		if (!unk)
			switch (t)
			{
				case SSP_FRAME_REQ_HEADER:
					return gfail(g, err, "second REQ_HEADER");
				case SSP_FRAME_PUSH_COMMIT:
					if (g->seen_pull)
						return gfail(g, err, "PUSH_COMMIT after PULL_HEADER");
					g->seen_push = true;
					break;
				case SSP_FRAME_PULL_HEADER:
					if (g->seen_pull)
						return gfail(g, err, "second PULL_HEADER");
					g->seen_pull = true;
					break;
				case SSP_FRAME_SUBSCRIPTION:
					if (!g->seen_pull)
						return gfail(g, err, "SUBSCRIPTION without a preceding PULL_HEADER");
					break;
			}
	}
	else
	{
		if (g->seen_error)
			return gfail(g, err, "frame after ERROR");
		if (!unk)
			switch (t)
			{
				case SSP_FRAME_RESP_HEADER:
					return gfail(g, err, "second RESP_HEADER");
				case SSP_FRAME_LEASE:
					if (g->seen_lease)
						return gfail(g, err, "second LEASE");
					if (g->body_seen)
						return gfail(g, err, "LEASE after another body frame");
					g->seen_lease = true;
					break;
				case SSP_FRAME_PUSH_RESULT:
					if (g->seen_sub_start)
						return gfail(g, err, "PUSH_RESULT after SUB_START");
					break;
				case SSP_FRAME_PUSH_RESULT_DETAILS:
					if (g->seen_sub_start)
						return gfail(g, err, "PUSH_RESULT_DETAILS after SUB_START");
					if (!details_follow_ok(g, f, err))
						return false;
					break;
				case SSP_FRAME_SUB_START:
					if (g->sub_open)
						return gfail(g, err, "nested SUB_START");
					g->sub_open = true;
					g->seen_sub_start = true;
					g->sub_content = 0;
					break;
				case SSP_FRAME_COMMIT:
					if (!g->sub_open)
						return gfail(g, err, "COMMIT outside a subscription");
					if (g->sub_content == 2)
						return gfail(g, err, "COMMIT mixed with segments");
					g->sub_content = 1;
					break;
				case SSP_FRAME_SEGMENT_REF:
				case SSP_FRAME_SEGMENT_INLINE:
					if (!g->sub_open)
						return gfail(g, err, "segment outside a subscription");
					if (g->sub_content == 1)
						return gfail(g, err, "segment mixed with COMMIT");
					g->sub_content = 2;
					break;
				case SSP_FRAME_SUB_END:
					if (!g->sub_open)
						return gfail(g, err, "SUB_END outside a subscription");
					g->sub_open = false;
					break;
				case SSP_FRAME_ERROR:
					g->seen_error = true;
					break;
			}
		g->body_seen = true;
	}
	g->count++;
	g->prev = f;
	return true;
}

bool
ssp_grammar_finish(SspGrammar *g, SspError *err)
{
	if (g->count == 0)
		return gfail(g, err, "no header frame");
	if (g->kind == SSP_KIND_REQUEST && !g->seen_push && !g->seen_pull)
		return gfail(g, err, "neither PUSH_COMMIT nor PULL_HEADER");
	if (g->kind == SSP_KIND_RESPONSE && g->sub_open && !g->seen_error)
		return gfail(g, err, "subscription still open at END");
	return true;
}

/* ------------------------------------------------------------------ */
/* Frame decoders                                                      */
/* ------------------------------------------------------------------ */

#define TRY(x) do { if (!(x)) return false; } while (0)

static bool
rd_nonempty(SspReader *r, SspStr *s, const char *field, SspError *err)
{
	TRY(ssp_rd_str(r, s, err));
	if (s->len == 0)
		return ssp_fail(err, INV, "%s: %s must not be empty", r->what, field);
	return true;
}

static bool
rd_opt_str(SspReader *r, bool *has, SspStr *s, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_str(r, s, err);
}

static bool
rd_opt_json(SspReader *r, bool *has, SspStr *s, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_json(r, s, err);
}

static bool
rd_opt_i64(SspReader *r, bool *has, int64_t *v, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_i64(r, v, err);
}

static bool
rd_opt_i32(SspReader *r, bool *has, int32_t *v, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_i32(r, v, err);
}

static bool
rd_enum(SspReader *r, uint8_t *v, uint8_t max, const char *field, SspError *err)
{
	TRY(ssp_rd_u8(r, v, err));
	if (*v < 1 || *v > max)
		return ssp_fail(err, INV, "%s: %s value %u out of range at offset %zu",
						r->what, field, *v, r->base + r->pos - 1);
	return true;
}

static void *
rd_alloc(SspReader *r, size_t n, size_t sz)
{
	return ssp_arena_array(r->arena, n ? n : 1, sz);
}

/* map str -> list(str), keys strictly ascending in UTF-16 order */
static bool
rd_scope_map(SspReader *r, SspScopeMap *m, SspError *err)
{
	TRY(ssp_rd_count(r, &m->n, 8, err));
	m->entries = rd_alloc(r, m->n, sizeof(SspScopeEntry));
	if (!m->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < m->n; i++)
	{
		SspScopeEntry *e = &m->entries[i];

		TRY(ssp_rd_str(r, &e->key, err));
		if (i > 0 && ssp_utf16_cmp(m->entries[i - 1].key.ptr, m->entries[i - 1].key.len,
								   e->key.ptr, e->key.len) >= 0)
			return ssp_fail(err, INV, "%s: map keys not strictly ascending at offset %zu",
							r->what, r->base + r->pos);
		TRY(ssp_rd_count(r, &e->nvalues, 4, err));
		e->values = rd_alloc(r, e->nvalues, sizeof(SspStr));
		if (!e->values)
			return ssp_oom(err);
		for (uint32_t j = 0; j < e->nvalues; j++)
			TRY(ssp_rd_str(r, &e->values[j], err));
	}
	return true;
}

static bool
rd_str_map(SspReader *r, SspStrMap *m, SspError *err)
{
	TRY(ssp_rd_count(r, &m->n, 8, err));
	m->entries = rd_alloc(r, m->n, sizeof(SspStrPair));
	if (!m->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < m->n; i++)
	{
		SspStrPair *e = &m->entries[i];

		TRY(ssp_rd_str(r, &e->key, err));
		if (i > 0 && ssp_utf16_cmp(m->entries[i - 1].key.ptr, m->entries[i - 1].key.len,
								   e->key.ptr, e->key.len) >= 0)
			return ssp_fail(err, INV, "%s: map keys not strictly ascending at offset %zu",
							r->what, r->base + r->pos);
		TRY(ssp_rd_str(r, &e->value, err));
	}
	return true;
}

static bool
dec_req_header(SspReader *r, uint16_t wire, SspReqHeader *h, SspError *err)
{
	TRY(rd_nonempty(r, &h->client_id, "clientId", err));
	TRY(ssp_rd_i32(r, &h->schema_version, err));
	if (h->schema_version < 1)
		return ssp_fail(err, INV, "%s: schemaVersion %d < 1", r->what, (int) h->schema_version);
	if (wire >= 2)
	{
		TRY(rd_opt_str(r, &h->has_log_epoch, &h->log_epoch, err));
		if (h->has_log_epoch && h->log_epoch.len == 0)
			return ssp_fail(err, INV, "%s: logEpoch must not be empty", r->what);
	}
	return true;
}

static bool
dec_push_commit(SspReader *r, SspPushCommit *c, SspError *err)
{
	TRY(rd_nonempty(r, &c->client_commit_id, "clientCommitId", err));
	TRY(ssp_rd_count(r, &c->nops, 11, err));
	if (c->nops == 0)
		return ssp_fail(err, SSP_ERR_EMPTY_COMMIT, "PUSH_COMMIT \"%.*s\" has zero operations",
						(int) (c->client_commit_id.len > 64 ? 64 : c->client_commit_id.len),
						c->client_commit_id.ptr);
	c->ops = rd_alloc(r, c->nops, sizeof(SspPushOp));
	if (!c->ops)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->nops; i++)
	{
		SspPushOp  *op = &c->ops[i];

		TRY(ssp_rd_str(r, &op->table, err));
		TRY(ssp_rd_str(r, &op->row_id, err));
		TRY(rd_enum(r, &op->op, 2, "op", err));
		TRY(rd_opt_i64(r, &op->has_base_version, &op->base_version, err));
		TRY(ssp_rd_opt(r, &op->has_payload, err));
		if (op->has_payload)
			TRY(ssp_rd_bytes(r, &op->payload, err));
		if (op->has_payload != (op->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: operation %u payload presence does not match op",
							r->what, i);
	}
	return true;
}

static bool
dec_pull_header(SspReader *r, SspPullHeader *p, SspError *err)
{
	TRY(ssp_rd_i32(r, &p->limit_commits, err));
	TRY(ssp_rd_i32(r, &p->limit_snapshot_rows, err));
	TRY(ssp_rd_i32(r, &p->max_snapshot_pages, err));
	TRY(ssp_rd_u8(r, &p->accept, err));
	if (p->accept & 0xF0)
		return ssp_fail(err, INV, "%s: accept has reserved bits set (0x%02x)", r->what, p->accept);
	return true;
}

static bool
dec_subscription(SspReader *r, SspSubscription *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->id, err));
	TRY(ssp_rd_str(r, &s->table, err));
	TRY(rd_scope_map(r, &s->scopes, err));
	TRY(rd_opt_json(r, &s->has_params, &s->params, err));
	TRY(ssp_rd_i64(r, &s->cursor, err));
	TRY(rd_opt_json(r, &s->has_bootstrap_state, &s->bootstrap_state, err));
	return true;
}

static bool
dec_resp_header(SspReader *r, uint16_t wire, SspRespHeader *h, SspError *err)
{
	TRY(rd_opt_i32(r, &h->has_required_schema_version, &h->required_schema_version, err));
	TRY(rd_opt_i32(r, &h->has_latest_schema_version, &h->latest_schema_version, err));
	if (wire >= 2)
	{
		TRY(rd_nonempty(r, &h->log_epoch, "logEpoch", err));
		TRY(ssp_rd_bool(r, &h->reset_required, err));
	}
	return true;
}

static bool
dec_lease(SspReader *r, SspLease *l, SspError *err)
{
	TRY(rd_nonempty(r, &l->lease_id, "leaseId", err));
	return ssp_rd_i64(r, &l->expires_at_ms, err);
}

static bool
dec_push_result(SspReader *r, uint16_t wire, SspPushResult *p, SspError *err)
{
	TRY(ssp_rd_str(r, &p->client_commit_id, err));
	TRY(rd_enum(r, &p->status, 3, "status", err));
	TRY(rd_opt_i64(r, &p->has_commit_seq, &p->commit_seq, err));
	if (p->has_commit_seq != (p->status != SSP_PUSH_REJECTED))
		return ssp_fail(err, INV, "%s: commitSeq presence does not match status", r->what);
	TRY(ssp_rd_count(r, &p->nresults, 5, err));
	p->results = rd_alloc(r, p->nresults, sizeof(SspOpResult));
	if (!p->results)
		return ssp_oom(err);
	for (uint32_t i = 0; i < p->nresults; i++)
	{
		SspOpResult *o = &p->results[i];

		TRY(ssp_rd_i32(r, &o->op_index, err));
		TRY(rd_enum(r, &o->status, 3, "result status", err));
		if (o->status == SSP_RESULT_CONFLICT)
		{
			TRY(ssp_rd_str(r, &o->code, err));
			TRY(ssp_rd_str(r, &o->message, err));
			TRY(ssp_rd_i64(r, &o->server_version, err));
			TRY(ssp_rd_bytes(r, &o->server_row, err));
			if (wire >= 3)
				TRY(ssp_rd_bytes(r, &o->conflict_columns, err));
		}
		else if (o->status == SSP_RESULT_ERROR)
		{
			TRY(ssp_rd_str(r, &o->code, err));
			TRY(ssp_rd_str(r, &o->message, err));
			TRY(ssp_rd_bool(r, &o->retryable, err));
		}
	}
	return true;
}

static bool
dec_details(SspReader *r, SspPushResultDetails *d, SspError *err)
{
	TRY(rd_nonempty(r, &d->client_commit_id, "clientCommitId", err));
	TRY(ssp_rd_count(r, &d->nentries, 8, err));
	if (d->nentries == 0)
		return ssp_fail(err, INV, "%s: no entries", r->what);
	d->entries = rd_alloc(r, d->nentries, sizeof(SspDetailsEntry));
	if (!d->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		SspDetailsEntry *e = &d->entries[i];

		TRY(ssp_rd_i32(r, &e->op_index, err));
		if (e->op_index < 0)
			return ssp_fail(err, INV, "%s: negative opIndex", r->what);
		for (uint32_t j = 0; j < i; j++)
			if (d->entries[j].op_index == e->op_index)
				return ssp_fail(err, INV, "%s: duplicate opIndex %d", r->what, (int) e->op_index);
		TRY(ssp_rd_str(r, &e->details_json, err));
		TRY(ssp_details_json_valid(e->details_json.ptr, e->details_json.len, err));
	}
	return true;
}

static bool
dec_sub_start(SspReader *r, SspSubStart *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->id, err));
	TRY(rd_enum(r, &s->status, 3, "status", err));
	TRY(ssp_rd_str(r, &s->reason_code, err));
	TRY(rd_scope_map(r, &s->effective_scopes, err));
	return ssp_rd_bool(r, &s->bootstrap, err);
}

static bool
dec_commit(SspReader *r, SspCommit *c, SspError *err)
{
	TRY(ssp_rd_i64(r, &c->commit_seq, err));
	TRY(ssp_rd_i64(r, &c->created_at_ms, err));
	TRY(ssp_rd_str(r, &c->actor_id, err));
	TRY(ssp_rd_count(r, &c->ntables, 4, err));
	c->tables = rd_alloc(r, c->ntables, sizeof(SspStr));
	if (!c->tables)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->ntables; i++)
		TRY(ssp_rd_str(r, &c->tables[i], err));
	TRY(ssp_rd_count(r, &c->nchanges, 13, err));
	c->changes = rd_alloc(r, c->nchanges, sizeof(SspChange));
	if (!c->changes)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->nchanges; i++)
	{
		SspChange  *ch = &c->changes[i];

		TRY(ssp_rd_u16(r, &ch->table_index, err));
		if (ch->table_index >= c->ntables)
			return ssp_fail(err, INV, "%s: change %u tableIndex %u out of range",
							r->what, i, ch->table_index);
		TRY(ssp_rd_str(r, &ch->row_id, err));
		TRY(rd_enum(r, &ch->op, 2, "op", err));
		TRY(rd_opt_i64(r, &ch->has_row_version, &ch->row_version, err));
		if (ch->has_row_version != (ch->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: change %u rowVersion presence does not match op",
							r->what, i);
		TRY(rd_str_map(r, &ch->scopes, err));
		TRY(ssp_rd_opt(r, &ch->has_row, err));
		if (ch->has_row)
			TRY(ssp_rd_bytes(r, &ch->row, err));
		if (ch->has_row != (ch->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: change %u row presence does not match op", r->what, i);
	}
	return true;
}

static bool
dec_segment_ref(SspReader *r, SspSegmentRef *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->segment_id, err));
	TRY(rd_enum(r, &s->media_type, 2, "mediaType", err));
	TRY(ssp_rd_str(r, &s->table, err));
	TRY(ssp_rd_i64(r, &s->byte_length, err));
	TRY(ssp_rd_i64(r, &s->row_count, err));
	TRY(ssp_rd_i64(r, &s->as_of_commit_seq, err));
	TRY(ssp_rd_str(r, &s->scope_digest, err));
	TRY(rd_opt_str(r, &s->has_row_cursor, &s->row_cursor, err));
	TRY(rd_opt_str(r, &s->has_next_row_cursor, &s->next_row_cursor, err));
	TRY(rd_opt_str(r, &s->has_url, &s->url, err));
	TRY(rd_opt_i64(r, &s->has_url_expires_at_ms, &s->url_expires_at_ms, err));
	if (s->has_url != s->has_url_expires_at_ms)
		return ssp_fail(err, INV, "%s: urlExpiresAtMs presence does not match url", r->what);
	return true;
}

static bool
dec_segment_inline(SspReader *r, SspSegmentInline *s, SspError *err)
{
	const uint8_t *p;
	size_t      n = ssp_rd_left(r);
	SspError    e2;

	if (n > UINT32_MAX)
		return ssp_fail(err, INV, "%s: payload too large", r->what);
	TRY(ssp_rd_raw(r, n, &p, err));
	if (!ssp_segment_decode(p, n, NULL, &e2))
	{
		if (err)
		{
			err->code = e2.code;
			snprintf(err->message, sizeof(err->message), "SEGMENT_INLINE: %.180s", e2.message);
		}
		return false;
	}
	if (r->arena)
	{
		uint8_t    *d = ssp_arena_alloc(r->arena, n ? n : 1);

		if (!d)
			return ssp_oom(err);
		if (n)
			memcpy(d, p, n);
		p = d;
	}
	s->payload.ptr = p;
	s->payload.len = (uint32_t) n;
	return true;
}

static bool
dec_sub_end(SspReader *r, SspSubEnd *s, SspError *err)
{
	TRY(ssp_rd_i64(r, &s->next_cursor, err));
	return rd_opt_json(r, &s->has_bootstrap_state, &s->bootstrap_state, err);
}

static bool
dec_error(SspReader *r, SspErrorFrame *e, SspError *err)
{
	TRY(ssp_rd_str(r, &e->code, err));
	TRY(ssp_rd_str(r, &e->message, err));
	TRY(ssp_rd_str(r, &e->category, err));
	TRY(ssp_rd_bool(r, &e->retryable, err));
	TRY(ssp_rd_str(r, &e->recommended_action, err));
	return rd_opt_json(r, &e->has_details, &e->details, err);
}

static bool
decode_frame_payload(SspReader *r, uint16_t wire, SspFrame *f, SspError *err)
{
	switch (f->type)
	{
		case SSP_FRAME_REQ_HEADER: return dec_req_header(r, wire, &f->req_header, err);
		case SSP_FRAME_PUSH_COMMIT: return dec_push_commit(r, &f->push_commit, err);
		case SSP_FRAME_PULL_HEADER: return dec_pull_header(r, &f->pull_header, err);
		case SSP_FRAME_SUBSCRIPTION: return dec_subscription(r, &f->subscription, err);
		case SSP_FRAME_RESP_HEADER: return dec_resp_header(r, wire, &f->resp_header, err);
		case SSP_FRAME_LEASE: return dec_lease(r, &f->lease, err);
		case SSP_FRAME_PUSH_RESULT: return dec_push_result(r, wire, &f->push_result, err);
		case SSP_FRAME_PUSH_RESULT_DETAILS: return dec_details(r, &f->push_result_details, err);
		case SSP_FRAME_SUB_START: return dec_sub_start(r, &f->sub_start, err);
		case SSP_FRAME_COMMIT: return dec_commit(r, &f->commit, err);
		case SSP_FRAME_SEGMENT_REF: return dec_segment_ref(r, &f->segment_ref, err);
		case SSP_FRAME_SEGMENT_INLINE: return dec_segment_inline(r, &f->segment_inline, err);
		case SSP_FRAME_SUB_END: return dec_sub_end(r, &f->sub_end, err);
		case SSP_FRAME_ERROR: return dec_error(r, &f->error, err);
		default:
			return ssp_fail(err, SSP_ERR_INTERNAL, "no decoder for frame 0x%02x", f->type);
	}
}

static uint32_t
rd_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

static bool
check_envelope(const uint8_t *data, size_t len, uint16_t *wire, uint8_t *kind,
			   SspError *err)
{
	if (len < 8)
		return ssp_fail(err, INV, "message truncated: %zu bytes, header needs 8", len);
	if (memcmp(data, magic_ssp2, 4) != 0)
		return ssp_fail(err, INV, "bad magic (expected SSP2)");
	*wire = (uint16_t) (data[4] | (data[5] << 8));
	if (*wire < SSP_WIRE_MIN || *wire > SSP_WIRE_MAX)
		return ssp_fail(err, INV, "unsupported wireVersion %u", *wire);
	*kind = data[6];
	if (*kind != SSP_KIND_REQUEST && *kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, INV, "unknown msgKind 0x%02x", *kind);
	if (data[7] != 0)
		return ssp_fail(err, INV, "envelope flags must be 0 (got 0x%02x)", data[7]);
	return true;
}

bool
ssp_decode_message(const uint8_t *data, size_t len, SspMessage *msg, SspError *err)
{
	uint16_t    wire = 0;
	uint8_t     kind = 0;
	size_t      pos,
				maxframes = 0;
	SspArena   *arena;
	SspFrame   *frames;
	uint32_t    n = 0;
	SspGrammar  g;

	memset(msg, 0, sizeof(*msg));
	TRY(check_envelope(data, len, &wire, &kind, err));

	/* Pre-count frame headers (error-free) to size the frame array. */
	for (pos = 8; len - pos >= 5;)
	{
		uint32_t    flen = rd_le32(data + pos + 1);

		maxframes++;
		if (data[pos] == SSP_FRAME_END || flen > len - pos - 5)
			break;
		pos += 5 + (size_t) flen;
	}
	arena = ssp_arena_new();
	if (arena == NULL)
		return ssp_oom(err);
	frames = ssp_arena_array(arena, maxframes ? maxframes : 1, sizeof(SspFrame));
	if (frames == NULL)
	{
		ssp_arena_free(arena);
		return ssp_oom(err);
	}
	ssp_grammar_init(&g, kind);

	for (pos = 8;;)
	{
		uint8_t     type;
		uint32_t    flen;
		SspFrame   *f;
		SspReader   r;
		char        what[24];

		if (len - pos < 5)
		{
			ssp_fail(err, INV, "message truncated at offset %zu: no END frame", pos);
			goto fail;
		}
		type = data[pos];
		flen = rd_le32(data + pos + 1);
		if (flen > len - pos - 5)
		{
			ssp_fail(err, INV, "frame 0x%02x at offset %zu declares %u bytes, only %zu remain",
					 type, pos, flen, len - pos - 5);
			goto fail;
		}
		if (type == SSP_FRAME_END)
		{
			if (flen != 0)
			{
				ssp_fail(err, INV, "END frame with non-zero length %u", flen);
				goto fail;
			}
			if (pos + 5 != len)
			{
				ssp_fail(err, INV, "%zu bytes after END", len - pos - 5);
				goto fail;
			}
			if (!ssp_grammar_finish(&g, err))
				goto fail;
			break;
		}
		if (n >= maxframes)     /* cannot happen: pre-count is exact */
		{
			ssp_fail(err, SSP_ERR_INTERNAL, "frame count mismatch");
			goto fail;
		}
		f = &frames[n];
		f->type = type;
		snprintf(what, sizeof(what), "frame 0x%02x", type);
		ssp_rd_init(&r, data + pos + 5, flen, pos + 5, what, arena);
		if (ssp_frame_registered(kind, type))
		{
			if (!decode_frame_payload(&r, wire, f, err) || !ssp_rd_done(&r, err))
				goto fail;
		}
		else if (registered_any(type))
		{
			ssp_fail(err, INV, "frame 0x%02x (%s) is not allowed in a %s", type,
					 ssp_frame_name(type), kind == SSP_KIND_REQUEST ? "request" : "response");
			goto fail;
		}
		else
		{
			/* Unknown: keep type and payload for re-emission (WF §2.2 rule 4). */
			uint8_t    *d = ssp_arena_alloc(arena, flen ? flen : 1);

			if (d == NULL)
			{
				ssp_oom(err);
				goto fail;
			}
			if (flen)
				memcpy(d, data + pos + 5, flen);
			f->unknown = true;
			f->unknown_frame.payload.ptr = d;
			f->unknown_frame.payload.len = flen;
		}
		if (!ssp_grammar_step(&g, f, err))
			goto fail;
		n++;
		pos += 5 + (size_t) flen;
	}
	msg->wire_version = wire;
	msg->kind = kind;
	msg->frames = frames;
	msg->nframes = n;
	msg->arena = arena;
	return true;

fail:
	ssp_arena_free(arena);
	memset(msg, 0, sizeof(*msg));
	return false;
}

void
ssp_message_free(SspMessage *msg)
{
	if (msg == NULL)
		return;
	ssp_arena_free(msg->arena);
	memset(msg, 0, sizeof(*msg));
}

/* ------------------------------------------------------------------ */
/* Frame encoders                                                      */
/* ------------------------------------------------------------------ */

static bool
enc_req_header(SspBuf *out, uint16_t wire, const SspReqHeader *h, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &h->client_id, "REQ_HEADER.clientId", err));
	if (h->schema_version < 1)
		return ssp_fail(err, INV, "REQ_HEADER.schemaVersion must be >= 1");
	ssp_put_i32(out, h->schema_version);
	if (wire >= 2)
	{
		if (h->has_log_epoch && h->log_epoch.len == 0)
			return ssp_fail(err, INV, "REQ_HEADER.logEpoch must not be empty");
		return ssp_wr_opt_str(out, h->has_log_epoch, &h->log_epoch, "REQ_HEADER.logEpoch", err);
	}
	if (h->has_log_epoch)
		return ssp_fail(err, INV, "REQ_HEADER.logEpoch does not exist at wire 1");
	return true;
}

static bool
enc_push_commit(SspBuf *out, const SspPushCommit *c, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &c->client_commit_id, "PUSH_COMMIT.clientCommitId", err));
	if (c->nops == 0)
		return ssp_fail(err, SSP_ERR_EMPTY_COMMIT, "PUSH_COMMIT with zero operations");
	ssp_put_u32(out, c->nops);
	for (uint32_t i = 0; i < c->nops; i++)
	{
		const SspPushOp *op = &c->ops[i];

		TRY(ssp_wr_str(out, &op->table, "PUSH_COMMIT.table", err));
		TRY(ssp_wr_str(out, &op->row_id, "PUSH_COMMIT.rowId", err));
		TRY(ssp_wr_enum(out, op->op, 2, "PUSH_COMMIT.op", err));
		TRY(ssp_wr_opt_i64(out, op->has_base_version, op->base_version, "PUSH_COMMIT.baseVersion", err));
		if (op->has_payload != (op->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "PUSH_COMMIT operation %u: payload present iff upsert", i);
		ssp_put_bool(out, op->has_payload);
		if (op->has_payload)
			TRY(ssp_wr_bytes(out, &op->payload, "PUSH_COMMIT.payload", err));
	}
	return true;
}

static bool
enc_pull_header(SspBuf *out, const SspPullHeader *p, SspError *err)
{
	if (p->accept & 0xF0)
		return ssp_fail(err, INV, "PULL_HEADER.accept has reserved bits set");
	ssp_put_i32(out, p->limit_commits);
	ssp_put_i32(out, p->limit_snapshot_rows);
	ssp_put_i32(out, p->max_snapshot_pages);
	ssp_put_u8(out, p->accept);
	return true;
}

static bool
enc_subscription(SspBuf *out, const SspSubscription *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->id, "SUBSCRIPTION.id", err));
	TRY(ssp_wr_str(out, &s->table, "SUBSCRIPTION.table", err));
	TRY(ssp_wr_scope_map(out, &s->scopes, "SUBSCRIPTION.scopes", err));
	TRY(ssp_wr_opt_json(out, s->has_params, &s->params, "SUBSCRIPTION.params", err));
	TRY(ssp_wr_i64(out, s->cursor, "SUBSCRIPTION.cursor", err));
	return ssp_wr_opt_json(out, s->has_bootstrap_state, &s->bootstrap_state,
					   "SUBSCRIPTION.bootstrapState", err);
}

static bool
enc_resp_header(SspBuf *out, uint16_t wire, const SspRespHeader *h, SspError *err)
{
	ssp_wr_opt_i32(out, h->has_required_schema_version, h->required_schema_version);
	ssp_wr_opt_i32(out, h->has_latest_schema_version, h->latest_schema_version);
	if (wire >= 2)
	{
		TRY(ssp_wr_nonempty(out, &h->log_epoch, "RESP_HEADER.logEpoch", err));
		ssp_put_bool(out, h->reset_required);
		return true;
	}
	if (h->log_epoch.len || h->reset_required)
		return ssp_fail(err, INV, "RESP_HEADER epoch fields do not exist at wire 1");
	return true;
}

static bool
enc_lease(SspBuf *out, const SspLease *l, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &l->lease_id, "LEASE.leaseId", err));
	return ssp_wr_i64(out, l->expires_at_ms, "LEASE.expiresAtMs", err);
}

static bool
enc_push_result(SspBuf *out, uint16_t wire, const SspPushResult *p, SspError *err)
{
	TRY(ssp_wr_str(out, &p->client_commit_id, "PUSH_RESULT.clientCommitId", err));
	TRY(ssp_wr_enum(out, p->status, 3, "PUSH_RESULT.status", err));
	if (p->has_commit_seq != (p->status != SSP_PUSH_REJECTED))
		return ssp_fail(err, INV, "PUSH_RESULT.commitSeq present iff applied or cached");
	TRY(ssp_wr_opt_i64(out, p->has_commit_seq, p->commit_seq, "PUSH_RESULT.commitSeq", err));
	ssp_put_u32(out, p->nresults);
	for (uint32_t i = 0; i < p->nresults; i++)
	{
		const SspOpResult *o = &p->results[i];

		ssp_put_i32(out, o->op_index);
		TRY(ssp_wr_enum(out, o->status, 3, "PUSH_RESULT result status", err));
		if (o->status == SSP_RESULT_CONFLICT)
		{
			TRY(ssp_wr_str(out, &o->code, "conflict.code", err));
			TRY(ssp_wr_str(out, &o->message, "conflict.message", err));
			TRY(ssp_wr_i64(out, o->server_version, "conflict.serverVersion", err));
			TRY(ssp_wr_bytes(out, &o->server_row, "conflict.serverRow", err));
			if (wire >= 3)
				TRY(ssp_wr_bytes(out, &o->conflict_columns, "conflict.conflictColumns", err));
			else if (o->conflict_columns.len)
				return ssp_fail(err, INV, "conflictColumns does not exist before wire 3");
		}
		else if (o->status == SSP_RESULT_ERROR)
		{
			TRY(ssp_wr_str(out, &o->code, "error.code", err));
			TRY(ssp_wr_str(out, &o->message, "error.message", err));
			ssp_put_bool(out, o->retryable);
		}
	}
	return true;
}

static bool
enc_details(SspBuf *out, const SspPushResultDetails *d, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &d->client_commit_id, "PUSH_RESULT_DETAILS.clientCommitId", err));
	if (d->nentries == 0)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS needs at least one entry");
	ssp_put_u32(out, d->nentries);
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		const SspDetailsEntry *e = &d->entries[i];
		size_t      lenpos;
		size_t      n;

		if (e->op_index < 0)
			return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: negative opIndex");
		for (uint32_t j = 0; j < i; j++)
			if (d->entries[j].op_index == e->op_index)
				return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: duplicate opIndex %d",
								(int) e->op_index);
		ssp_put_i32(out, e->op_index);
		lenpos = out->len;
		ssp_put_u32(out, 0);
		if (out->oom)
			return ssp_oom(err);
		TRY(ssp_details_json_normalize(e->details_json.ptr, e->details_json.len, out, err));
		n = out->len - lenpos - 4;
		for (int k = 0; k < 4; k++)
			out->data[lenpos + k] = (uint8_t) (n >> (8 * k));
	}
	return true;
}

static bool
enc_sub_start(SspBuf *out, const SspSubStart *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->id, "SUB_START.id", err));
	TRY(ssp_wr_enum(out, s->status, 3, "SUB_START.status", err));
	TRY(ssp_wr_str(out, &s->reason_code, "SUB_START.reasonCode", err));
	TRY(ssp_wr_scope_map(out, &s->effective_scopes, "SUB_START.effectiveScopes", err));
	ssp_put_bool(out, s->bootstrap);
	return true;
}

static bool
enc_segment_ref(SspBuf *out, const SspSegmentRef *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->segment_id, "SEGMENT_REF.segmentId", err));
	TRY(ssp_wr_enum(out, s->media_type, 2, "SEGMENT_REF.mediaType", err));
	TRY(ssp_wr_str(out, &s->table, "SEGMENT_REF.table", err));
	TRY(ssp_wr_i64(out, s->byte_length, "SEGMENT_REF.byteLength", err));
	TRY(ssp_wr_i64(out, s->row_count, "SEGMENT_REF.rowCount", err));
	TRY(ssp_wr_i64(out, s->as_of_commit_seq, "SEGMENT_REF.asOfCommitSeq", err));
	TRY(ssp_wr_str(out, &s->scope_digest, "SEGMENT_REF.scopeDigest", err));
	TRY(ssp_wr_opt_str(out, s->has_row_cursor, &s->row_cursor, "SEGMENT_REF.rowCursor", err));
	TRY(ssp_wr_opt_str(out, s->has_next_row_cursor, &s->next_row_cursor,
				   "SEGMENT_REF.nextRowCursor", err));
	if (s->has_url != s->has_url_expires_at_ms)
		return ssp_fail(err, INV, "SEGMENT_REF.urlExpiresAtMs present iff url");
	TRY(ssp_wr_opt_str(out, s->has_url, &s->url, "SEGMENT_REF.url", err));
	return ssp_wr_opt_i64(out, s->has_url_expires_at_ms, s->url_expires_at_ms,
					  "SEGMENT_REF.urlExpiresAtMs", err);
}

static bool
enc_segment_inline(SspBuf *out, const SspSegmentInline *s, SspError *err)
{
	if (s->payload.len && s->payload.ptr == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "SEGMENT_INLINE: NULL payload");
	TRY(ssp_segment_decode(s->payload.ptr, s->payload.len, NULL, err));
	ssp_buf_append(out, s->payload.ptr, s->payload.len);
	return true;
}

static bool
enc_sub_end(SspBuf *out, const SspSubEnd *s, SspError *err)
{
	TRY(ssp_wr_i64(out, s->next_cursor, "SUB_END.nextCursor", err));
	return ssp_wr_opt_json(out, s->has_bootstrap_state, &s->bootstrap_state,
					   "SUB_END.bootstrapState", err);
}

static bool
enc_error(SspBuf *out, const SspErrorFrame *e, SspError *err)
{
	TRY(ssp_wr_str(out, &e->code, "ERROR.code", err));
	TRY(ssp_wr_str(out, &e->message, "ERROR.message", err));
	TRY(ssp_wr_str(out, &e->category, "ERROR.category", err));
	ssp_put_bool(out, e->retryable);
	TRY(ssp_wr_str(out, &e->recommended_action, "ERROR.recommendedAction", err));
	return ssp_wr_opt_json(out, e->has_details, &e->details, "ERROR.details", err);
}

bool
ssp_write_message_header(SspBuf *out, uint16_t wire, uint8_t kind, SspError *err)
{
	if (wire < SSP_WIRE_MIN || wire > SSP_WIRE_MAX)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write wireVersion %u", wire);
	if (kind != SSP_KIND_REQUEST && kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write msgKind %u", kind);
	ssp_buf_append(out, magic_ssp2, 4);
	ssp_put_u16(out, wire);
	ssp_put_u8(out, kind);
	ssp_put_u8(out, 0);
	return out->oom ? ssp_oom(err) : true;
}

bool
ssp_write_frame(SspBuf *out, uint16_t wire, const SspFrame *f, SspError *err)
{
	size_t      start = out->len;
	size_t      n;
	bool        ok;

	if (wire < SSP_WIRE_MIN || wire > SSP_WIRE_MAX)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write wireVersion %u", wire);
	if (out->oom)
		return ssp_oom(err);
	if (f->unknown && registered_any(f->type))
		return ssp_fail(err, SSP_ERR_INTERNAL,
						"refusing to write registered frame type 0x%02x as unknown", f->type);
	if (!f->unknown && f->type == SSP_FRAME_END)
		return ssp_fail(err, SSP_ERR_INTERNAL, "use ssp_write_end for END");
	ssp_put_u8(out, f->type);
	ssp_put_u32(out, 0);
	if (f->unknown)
	{
		const SspBytes *pl = &f->unknown_frame.payload;

		ok = !(pl->len && pl->ptr == NULL) ||
			ssp_fail(err, SSP_ERR_INTERNAL, "unknown frame: NULL payload");
		if (ok)
			ssp_buf_append(out, pl->ptr, pl->len);
	}
	else
		switch (f->type)
		{
			case SSP_FRAME_REQ_HEADER: ok = enc_req_header(out, wire, &f->req_header, err); break;
			case SSP_FRAME_PUSH_COMMIT: ok = enc_push_commit(out, &f->push_commit, err); break;
			case SSP_FRAME_PULL_HEADER: ok = enc_pull_header(out, &f->pull_header, err); break;
			case SSP_FRAME_SUBSCRIPTION: ok = enc_subscription(out, &f->subscription, err); break;
			case SSP_FRAME_RESP_HEADER: ok = enc_resp_header(out, wire, &f->resp_header, err); break;
			case SSP_FRAME_LEASE: ok = enc_lease(out, &f->lease, err); break;
			case SSP_FRAME_PUSH_RESULT: ok = enc_push_result(out, wire, &f->push_result, err); break;
			case SSP_FRAME_PUSH_RESULT_DETAILS: ok = enc_details(out, &f->push_result_details, err); break;
			case SSP_FRAME_SUB_START: ok = enc_sub_start(out, &f->sub_start, err); break;
			case SSP_FRAME_COMMIT: ok = ssp_enc_commit(out, &f->commit, err); break;
			case SSP_FRAME_SEGMENT_REF: ok = enc_segment_ref(out, &f->segment_ref, err); break;
			case SSP_FRAME_SEGMENT_INLINE: ok = enc_segment_inline(out, &f->segment_inline, err); break;
			case SSP_FRAME_SUB_END: ok = enc_sub_end(out, &f->sub_end, err); break;
			case SSP_FRAME_ERROR: ok = enc_error(out, &f->error, err); break;
			default:
				ok = ssp_fail(err, SSP_ERR_INTERNAL,
							  "frame type 0x%02x is not registered; mark it unknown", f->type);
		}
	if (ok && out->oom)
		ok = ssp_oom(err);
	n = ok ? out->len - start - 5 : 0;
	if (ok && n > UINT32_MAX)
		ok = ssp_fail(err, INV, "frame 0x%02x payload exceeds 4 GiB", f->type);
	if (!ok)
	{
		if (out->len > start)
			out->len = start;   /* roll back the partial frame */
		return false;
	}
	for (int k = 0; k < 4; k++)
		out->data[start + 1 + k] = (uint8_t) (n >> (8 * k));
	return true;
}

bool
ssp_write_end(SspBuf *out, SspError *err)
{
	static const uint8_t end[5] = {0, 0, 0, 0, 0};

	return ssp_buf_append(out, end, 5) ? true : ssp_oom(err);
}

bool
ssp_encode_message(const SspMessage *msg, SspBuf *out, SspError *err)
{
	SspGrammar  g;
	size_t      start = out->len;

	if (msg->kind != SSP_KIND_REQUEST && msg->kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, SSP_ERR_INTERNAL, "bad msgKind %u", msg->kind);
	ssp_grammar_init(&g, msg->kind);
	TRY(ssp_write_message_header(out, msg->wire_version, msg->kind, err));
	for (uint32_t i = 0; i < msg->nframes; i++)
	{
		if (!ssp_grammar_step(&g, &msg->frames[i], err) ||
			!ssp_write_frame(out, msg->wire_version, &msg->frames[i], err))
		{
			out->len = start;
			return false;
		}
	}
	if (!ssp_grammar_finish(&g, err) || !ssp_write_end(out, err))
	{
		out->len = start;
		return false;
	}
	return true;
}
