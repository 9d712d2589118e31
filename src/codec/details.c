/*
 * details.c — PUSH_RESULT_DETAILS JSON (WF §3.4): validation of a detailsJson object and its
 * canonical form (members checked, references de-duplicated and sorted by key), for the
 * decoder (ssp_details_json_valid) and the writers (ssp_details_json_normalize).
 */
#include "ssp_internal.h"

#include <string.h>

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
