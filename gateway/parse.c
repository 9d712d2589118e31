/*
 * parse.c — pure parsing of what clients send the gateway: header values (SPEC §1.1, §1.3),
 * route paths, the socket-round byte stream framing (§8.7) and JSON control messages
 * (§8.1 ack, §8.6 presence).  No I/O; fuzzed by gateway/fuzz/fuzz_parse.c.
 */
#include "parse.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SSP_MAX_SAFE 9007199254740991LL

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* the token [p, p+n) with surrounding blanks removed equals want (case-insensitive) */
static bool
token_is(const char *p, size_t n, const char *want)
{
	while (n > 0 && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return n == strlen(want) && strncasecmp(p, want, n) == 0;
}

bool
gw_content_type_ok(const char *ct)
{
	const char *semi;

	if (!ct)
		return false;
	semi = strchr(ct, ';');
	return token_is(ct, semi ? (size_t) (semi - ct) : strlen(ct), "application/vnd.syncular.sync.v2");
}

/* q-value of one Accept-Encoding element's parameters ("; q=0.5"); 1.0 when absent */
static double
qvalue(const char *params, size_t n)
{
	const char *p = params;
	const char *end = params + n;

	while (p < end)
	{
		const char *semi = memchr(p, ';', (size_t) (end - p));
		const char *q;

		if (!semi)
			break;
		q = skip_ws(semi + 1);
		if (q + 2 <= end && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=')
		{
			char buf[16];
			size_t l = (size_t) (end - (q + 2));

			if (l >= sizeof(buf))
				l = sizeof(buf) - 1;
			memcpy(buf, q + 2, l);
			buf[l] = '\0';
			return atof(buf);
		}
		p = semi + 1;
	}
	return 1.0;
}

/* the q-values Accept-Encoding gives gzip (or x-gzip), identity and *: -1 when not listed, else
 * 1 for q > 0 and 0 for q = 0 */
static void
encodings(const char *ae, int *gzip, int *identity, int *star)
{
	const char *p = ae;

	*gzip = *identity = *star = -1;
	while (p && *p)
	{
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t) (comma - p) : strlen(p);
		const char *semi = memchr(p, ';', n);
		size_t tn = semi ? (size_t) (semi - p) : n;
		int ok = qvalue(p, n) > 0.0;

		if (token_is(p, tn, "gzip") || token_is(p, tn, "x-gzip"))
			*gzip = ok;
		else if (token_is(p, tn, "identity"))
			*identity = ok;
		else if (token_is(p, tn, "*"))
			*star = ok;
		if (!comma)
			break;
		p = comma + 1;
	}
}

bool
gw_accepts_gzip(const char *ae)
{
	int gzip, identity, star;

	if (!ae)
		return false;
	encodings(ae, &gzip, &identity, &star);
	return gzip == 1 || (gzip == -1 && star == 1);
}

bool
gw_refuses_identity(const char *ae)
{
	int gzip, identity, star;

	if (!ae)
		return false;
	encodings(ae, &gzip, &identity, &star);
	return identity == 0 || (identity == -1 && star == 0);
}

int
gw_content_encoding(const char *ce)
{
	if (!ce || !*skip_ws(ce) || token_is(ce, strlen(ce), "identity"))
		return 0;
	if (token_is(ce, strlen(ce), "gzip") || token_is(ce, strlen(ce), "x-gzip"))
		return 1;
	return -1;
}

/* one non-empty path segment without further slashes */
static bool
one_segment(const char *p)
{
	return *p && !strchr(p, '/');
}

GwRoute
gw_route(const char *path, const char *mount)
{
	size_t m = strlen(mount);
	const char *r;

	if (!path || strncmp(path, mount, m) != 0 || path[m] != '/')
		return GW_ROUTE_NONE;
	r = path + m;
	if (strcmp(r, "/sync") == 0)
		return GW_ROUTE_SYNC;
	if (strcmp(r, "/healthz") == 0)
		return GW_ROUTE_HEALTHZ;
	if (strcmp(r, "/readyz") == 0)
		return GW_ROUTE_READYZ;
	if (strcmp(r, "/realtime") == 0)
		return GW_ROUTE_REALTIME;
	if (strcmp(r, "/metrics") == 0)
		return GW_ROUTE_METRICS;
	if (strcmp(r, "/operations") == 0)
		return GW_ROUTE_OPERATIONS;
	if (strcmp(r, "/operations/realtime") == 0)
		return GW_ROUTE_OPS_REALTIME;
	if (strncmp(r, "/segments/", 10) == 0 && one_segment(r + 10))
		return GW_ROUTE_SEGMENT;
	if (strncmp(r, "/blobs/", 7) == 0 && *(r + 7))
	{
		const char *id = r + 7;
		const char *slash = strchr(id, '/');

		if (!slash || (slash > id && strcmp(slash, "/upload-grant") == 0))
			return GW_ROUTE_BLOB;
	}
	return GW_ROUTE_NONE;
}

static uint32_t
rd_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

GwScan
gw_round_scan(GwRoundScan *s, const uint8_t *buf, size_t len, size_t max)
{
	if (!s->header_ok)
	{
		size_t n = len < 8 ? len : 8;
		static const uint8_t magic[4] = {'S', 'S', 'P', '2'};

		/* judge the header as soon as each byte arrives: a bad stream closes early */
		for (size_t i = 0; i < n && i < 4; i++)
			if (buf[i] != magic[i])
				return GW_SCAN_BAD_HEADER;
		if (n >= 6 && (buf[5] != 0 || buf[4] < 1 || buf[4] > 3))
			return GW_SCAN_BAD_HEADER;
		if (n >= 7 && buf[6] != 1)
			return GW_SCAN_BAD_HEADER;
		if (n >= 8 && buf[7] != 0)
			return GW_SCAN_BAD_HEADER;
		if (len < 8)
			return GW_SCAN_MORE;
		s->header_ok = true;
		s->pos = 8;
	}
	while (s->pos + 5 <= len)
	{
		uint8_t type = buf[s->pos];
		uint32_t flen = rd_u32(buf + s->pos + 1);

		if (type == 0)
		{
			if (flen != 0)
				return GW_SCAN_BAD_FRAME;
			s->end = s->pos + 5;
			return GW_SCAN_DONE;
		}
		if ((uint64_t) s->pos + 5 + flen + 5 > max)
			return GW_SCAN_TOO_LARGE;
		if (s->pos + 5 + flen > len)
			return GW_SCAN_MORE;
		s->pos += 5 + (size_t) flen;
	}
	if (s->pos + 5 > max)
		return GW_SCAN_TOO_LARGE;
	return GW_SCAN_MORE;
}

/* an i64 within the JS safe range, not a fraction (SPEC §8.1) */
static bool
safe_int(json_t *v, int64_t *out)
{
	json_int_t i;

	if (!json_is_integer(v))
		return false;
	i = json_integer_value(v);
	if (i > SSP_MAX_SAFE || i < -SSP_MAX_SAFE)
		return false;
	*out = (int64_t) i;
	return true;
}

static void
parse_presence(json_t *data, GwControl *out)
{
	json_t *key, *doc;
	const char *k;

	if (!json_is_object(data))
		goto bad;
	key = json_object_get(data, "scopeKey");
	doc = json_object_get(data, "doc");
	if (!json_is_string(key) || json_string_length(key) == 0 ||
		json_string_length(key) >= sizeof(out->scope_key) || !doc ||
		!(json_is_object(doc) || json_is_null(doc)))
		goto bad;
	k = json_string_value(key);
	if (strlen(k) != json_string_length(key))
		goto bad;               /* embedded NUL */
	strcpy(out->scope_key, k);
	if (json_is_object(doc))
	{
		out->doc = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (!out->doc)
			goto bad;
		out->doc_len = strlen(out->doc);
	}
	out->kind = GW_CTL_PRESENCE;
	return;
bad:
	out->kind = GW_CTL_BAD;
	out->error = "presence: data needs a non-empty scopeKey and doc (object or null)";
}

void
gw_control_parse(const char *text, size_t len, GwControl *out)
{
	json_error_t jerr;
	json_t *root;
	json_t *type, *event;

	memset(out, 0, sizeof(*out));
	root = text && len ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!root || !json_is_object(root))
	{
		out->kind = GW_CTL_BAD;
		out->error = "control message is not a JSON object";
		json_decref(root);
		return;
	}
	type = json_object_get(root, "type");
	event = json_object_get(root, "event");
	if (json_is_string(type) && strcmp(json_string_value(type), "ack") == 0)
	{
		if (safe_int(json_object_get(root, "cursor"), &out->cursor) && out->cursor >= -1)
			out->kind = GW_CTL_ACK;
		else
		{
			out->kind = GW_CTL_BAD;
			out->error = "ack: cursor must be an integer >= -1";
		}
	}
	else if (json_is_string(event) && strcmp(json_string_value(event), "presence") == 0)
		parse_presence(json_object_get(root, "data"), out);
	else
		out->kind = GW_CTL_IGNORE;
	json_decref(root);
}

void
gw_control_free(GwControl *c)
{
	free(c->doc);
	c->doc = NULL;
}
