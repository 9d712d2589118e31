/*
 * yjs.c — Yjs update format v1: strict decoder and the union merge (SPEC §5.10.2).
 *
 * Written from the format's description; see yjs.h for the contract.  Layout reminders:
 *   varuint   LEB128, 7 bits per byte, at most 2^53 - 1 (the JS safe-integer range)
 *   varint    lib0 signed: first byte 0x80 continue | 0x40 sign | 6 bits, then 7 bits per byte
 *   string    varuint byte length + UTF-8; a content string's length counts UTF-16 units
 *   update    varuint nclients, per client {varuint nstructs, varuint client, varuint clock,
 *             structs}, then the delete set: varuint nclients, per client {varuint client,
 *             varuint nranges, per range {varuint clock, varuint len}}
 *   struct    info byte: 10 = Skip {len}; low 5 bits 0 = GC {len}; 1..9 = Item whose content
 *             type is those bits, 0x80 origin ID follows, 0x40 rightOrigin ID follows, with
 *             neither: parent (varuint 1 + root key string | varuint 0 + ID) and, when 0x20,
 *             the parentSub string; then the content.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yjs.h"

#define MAX53 UINT64_C(9007199254740991)

#define BIT_ORIGIN	0x80
#define BIT_RIGHT	0x40
#define BIT_SUB		0x20
#define INFO_SKIP	10

enum
{
	C_DELETED = 1, C_JSON, C_BINARY, C_STRING, C_EMBED, C_FORMAT, C_TYPE, C_ANY, C_DOC
};

typedef struct Rd
{
	const uint8_t *p;
	size_t		len;
	size_t		pos;
	SspError   *err;
} Rd;

/* One decoded GC or Item (Skips are dropped: they only say "not in this update"). */
typedef struct YStruct
{
	uint64_t	client;
	uint64_t	clock;
	uint64_t	len;
	const uint8_t *body;		/* bytes after the info byte, to the struct's end */
	const uint8_t *right;		/* encoded rightOrigin ID, NULL when absent */
	const uint8_t *content;		/* encoded content */
	uint32_t	body_len;
	uint32_t	right_len;
	uint32_t	content_len;
	uint8_t		info;			/* 0 for GC */
} YStruct;

typedef struct YRange
{
	uint64_t	client;
	uint64_t	clock;
	uint64_t	len;
} YRange;

typedef struct Decoded
{
	YStruct    *structs;
	uint32_t	nstructs;
	uint32_t	maxstructs;
	YRange	   *ranges;
	uint32_t	nranges;
	uint32_t	maxranges;
	bool		oom;
} Decoded;

/* ---------------------------------------------------------------- errors */

static bool
set_err(SspError *err, const char *msg, size_t pos)
{
	if (err)
	{
		err->code = YJS_ERR_MERGE;
		snprintf(err->message, sizeof(err->message), "malformed Yjs update: %s at byte %zu",
				 msg, pos);
	}
	return false;
}

static bool
fail(Rd *r, const char *msg)
{
	return set_err(r->err, msg, r->pos);
}

static bool
oom(SspError *err)
{
	if (err)
	{
		err->code = SSP_ERR_INTERNAL;
		snprintf(err->message, sizeof(err->message), "out of memory merging Yjs updates");
	}
	return false;
}

/* ---------------------------------------------------------------- primitive readers */

static bool
rd_uint(Rd *r, uint64_t *v)
{
	uint64_t	n = 0;
	int			shift = 0;

	while (r->pos < r->len)
	{
		uint8_t		b = r->p[r->pos++];

		n |= (uint64_t) (b & 0x7f) << shift;
		if ((b & 0x80) == 0)
		{
			if (n > MAX53)
				return fail(r, "integer beyond 2^53");
			*v = n;
			return true;
		}
		shift += 7;
		if (shift > 49)
			return fail(r, "integer beyond 2^53");
	}
	return fail(r, "truncated integer");
}

/* A count of items that each take at least one byte: never more than the bytes left. */
static bool
rd_count(Rd *r, uint64_t *n)
{
	if (!rd_uint(r, n))
		return false;
	if (*n > r->len - r->pos)
		return fail(r, "count exceeds the bytes left");
	return true;
}

static bool
rd_int(Rd *r)
{
	uint64_t	n;
	int			shift = 6;
	uint8_t		b;

	if (r->pos >= r->len)
		return fail(r, "truncated integer");
	b = r->p[r->pos++];
	n = b & 0x3f;
	while (b & 0x80)
	{
		if (r->pos >= r->len)
			return fail(r, "truncated integer");
		if (shift > 48)
			return fail(r, "integer beyond 2^53");
		b = r->p[r->pos++];
		n |= (uint64_t) (b & 0x7f) << shift;
		shift += 7;
	}
	if (n > MAX53)
		return fail(r, "integer beyond 2^53");
	return true;
}

static bool
rd_bytes(Rd *r, uint64_t n, const uint8_t **ptr)
{
	if (n > r->len - r->pos)
		return fail(r, "length exceeds the bytes left");
	*ptr = r->p + r->pos;
	r->pos += (size_t) n;
	return true;
}

static bool
rd_string(Rd *r, const uint8_t **ptr, uint64_t *n)
{
	if (!rd_uint(r, n) || !rd_bytes(r, *n, ptr))
		return false;
	if (!ssp_utf8_valid((const char *) *ptr, (size_t) *n))
		return fail(r, "string is not valid UTF-8");
	return true;
}

static bool
rd_json(Rd *r, bool undefined_ok)
{
	const uint8_t *s;
	uint64_t	n;

	if (!rd_uint(r, &n) || !rd_bytes(r, n, &s))
		return false;
	if (undefined_ok && n == 9 && memcmp(s, "undefined", 9) == 0)
		return true;
	if (!ssp_json_valid((const char *) s, (size_t) n))
		return fail(r, "JSON content is not valid JSON");
	return true;
}

/* lib0 `any`: a tag byte (127 down to 116) and its value. */
static bool
rd_any(Rd *r, int depth)
{
	const uint8_t *p;
	uint64_t	n;

	if (depth > YJS_MAX_DEPTH)
		return fail(r, "value nested too deeply");
	if (r->pos >= r->len)
		return fail(r, "truncated value");
	switch (r->p[r->pos++])
	{
		case 127:				/* undefined */
		case 126:				/* null */
		case 121:				/* false */
		case 120:				/* true */
			return true;
		case 125:
			return rd_int(r);
		case 124:
			return rd_bytes(r, 4, &p);
		case 123:				/* float64 */
		case 122:				/* bigint64 */
			return rd_bytes(r, 8, &p);
		case 119:
			return rd_string(r, &p, &n);
		case 118:
			{
				uint64_t	keylen;

				if (!rd_count(r, &n))
					return false;
				for (uint64_t i = 0; i < n; i++)
					if (!rd_string(r, &p, &keylen) || !rd_any(r, depth + 1))
						return false;
				return true;
			}
		case 117:
			if (!rd_count(r, &n))
				return false;
			for (uint64_t i = 0; i < n; i++)
				if (!rd_any(r, depth + 1))
					return false;
			return true;
		case 116:
			return rd_uint(r, &n) && rd_bytes(r, n, &p);
		default:
			r->pos--;
			return fail(r, "unknown value tag");
	}
}

/* ---------------------------------------------------------------- UTF-16 lengths */

static int
utf8_seq_len(uint8_t lead)
{
	return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/* UTF-16 code units of valid UTF-8 (a 4-byte sequence is a surrogate pair). */
static uint64_t
utf16_units(const uint8_t *s, uint64_t n)
{
	uint64_t	units = 0;

	for (uint64_t i = 0; i < n; i += utf8_seq_len(s[i]))
		units += utf8_seq_len(s[i]) == 4 ? 2 : 1;
	return units;
}

/* ---------------------------------------------------------------- struct section */

/* Content of an Item: validates it and sets its length in clock units. */
static bool
rd_content(Rd *r, int ref, uint64_t *len)
{
	const uint8_t *p;
	uint64_t	n;

	*len = 1;
	switch (ref)
	{
		case C_DELETED:
			return rd_uint(r, len);
		case C_JSON:
			if (!rd_count(r, len))
				return false;
			for (uint64_t i = 0; i < *len; i++)
				if (!rd_json(r, true))
					return false;
			return true;
		case C_BINARY:
			return rd_uint(r, &n) && rd_bytes(r, n, &p);
		case C_STRING:
			if (!rd_string(r, &p, &n))
				return false;
			*len = utf16_units(p, n);
			return true;
		case C_EMBED:
			return rd_json(r, false);
		case C_FORMAT:
			return rd_string(r, &p, &n) && rd_json(r, false);
		case C_TYPE:
			if (!rd_uint(r, &n))
				return false;
			if (n > 6)
				return fail(r, "unknown shared type");
			if (n == 3 || n == 5)	/* XML element name, XML hook name */
				return rd_string(r, &p, &n);
			return true;
		case C_ANY:
			if (!rd_count(r, len))
				return false;
			for (uint64_t i = 0; i < *len; i++)
				if (!rd_any(r, 0))
					return false;
			return true;
		case C_DOC:
			return rd_string(r, &p, &n) && rd_any(r, 0);
		default:
			return fail(r, "unknown content type");
	}
}

static bool
rd_id(Rd *r)
{
	uint64_t	client,
				clock;

	return rd_uint(r, &client) && rd_uint(r, &clock);
}

/* One Item after its info byte; fills s (client, clock set by the caller). */
static bool
rd_item(Rd *r, uint8_t info, YStruct *s)
{
	size_t		start = r->pos;

	s->right = NULL;
	s->right_len = 0;
	if ((info & BIT_ORIGIN) && !rd_id(r))
		return false;
	if (info & BIT_RIGHT)
	{
		size_t		rs = r->pos;

		if (!rd_id(r))
			return false;
		s->right = r->p + rs;
		s->right_len = (uint32_t) (r->pos - rs);
	}
	if ((info & (BIT_ORIGIN | BIT_RIGHT)) == 0)
	{
		uint64_t	parent_info,
					n;
		const uint8_t *p;

		if (!rd_uint(r, &parent_info))
			return false;
		if (parent_info == 1)
		{
			if (!rd_string(r, &p, &n))
				return false;
		}
		else if (parent_info != 0 || !rd_id(r))
			return parent_info != 0 ? fail(r, "bad parent info") : false;
		if ((info & BIT_SUB) && !rd_string(r, &p, &n))
			return false;
	}
	s->content = r->p + r->pos;
	if (!rd_content(r, info & 0x1f, &s->len))
		return false;
	s->content_len = (uint32_t) (r->p + r->pos - s->content);
	s->body = r->p + start;
	s->body_len = (uint32_t) (r->pos - start);
	s->info = info;
	return true;
}

static bool
push_struct(Decoded *d, const YStruct *s, Rd *r)
{
	if (d->nstructs >= YJS_MAX_ENTRIES)
		return fail(r, "too many structs");
	if (d->nstructs == d->maxstructs)
	{
		uint32_t	cap = d->maxstructs ? d->maxstructs * 2 : 64;
		YStruct    *n = ssp_realloc(d->structs, (size_t) cap * sizeof(YStruct));

		if (n == NULL)
		{
			d->oom = true;
			return oom(r->err);
		}
		d->structs = n;
		d->maxstructs = cap;
	}
	d->structs[d->nstructs++] = *s;
	return true;
}

static bool
push_range(Decoded *d, uint64_t client, uint64_t clock, uint64_t len, Rd *r)
{
	if (d->nranges >= YJS_MAX_ENTRIES)
		return fail(r, "too many delete ranges");
	if (d->nranges == d->maxranges)
	{
		uint32_t	cap = d->maxranges ? d->maxranges * 2 : 64;
		YRange	   *n = ssp_realloc(d->ranges, (size_t) cap * sizeof(YRange));

		if (n == NULL)
		{
			d->oom = true;
			return oom(r->err);
		}
		d->ranges = n;
		d->maxranges = cap;
	}
	d->ranges[d->nranges].client = client;
	d->ranges[d->nranges].clock = clock;
	d->ranges[d->nranges].len = len;
	d->nranges++;
	return true;
}

static bool
rd_structs(Rd *r, Decoded *d, YjsStats *st)
{
	uint64_t	nclients;

	if (!rd_count(r, &nclients))
		return false;
	st->clients = (uint32_t) nclients;
	for (uint64_t i = 0; i < nclients; i++)
	{
		uint64_t	nstructs,
					client,
					clock;

		if (!rd_count(r, &nstructs) || !rd_uint(r, &client) || !rd_uint(r, &clock))
			return false;
		for (uint64_t j = 0; j < nstructs; j++)
		{
			YStruct		s;
			uint8_t		info;

			if (r->pos >= r->len)
				return fail(r, "truncated struct");
			info = r->p[r->pos++];
			memset(&s, 0, sizeof(s));
			s.client = client;
			s.clock = clock;
			if (info == INFO_SKIP || (info & 0x1f) == 0)
			{
				size_t		start = r->pos;

				if (!rd_uint(r, &s.len))
					return false;
				s.body = r->p + start;
				s.body_len = (uint32_t) (r->pos - start);
			}
			else if ((info & 0x1f) > C_DOC)
				return fail(r, "unknown struct type");
			else if (!rd_item(r, info, &s))
				return false;
			if (s.len > MAX53 - clock)
				return fail(r, "clock beyond 2^53");
			clock += s.len;
			st->structs++;
			if (info != INFO_SKIP && s.len > 0 && !push_struct(d, &s, r))
				return false;
		}
	}
	return true;
}

static bool
rd_delete_set(Rd *r, Decoded *d, YjsStats *st)
{
	uint64_t	nclients;

	if (!rd_count(r, &nclients))
		return false;
	st->delete_clients = (uint32_t) nclients;
	for (uint64_t i = 0; i < nclients; i++)
	{
		uint64_t	client,
					nranges;

		if (!rd_uint(r, &client) || !rd_count(r, &nranges))
			return false;
		for (uint64_t j = 0; j < nranges; j++)
		{
			uint64_t	clock,
						len;

			if (!rd_uint(r, &clock) || !rd_uint(r, &len))
				return false;
			if (len > MAX53 - clock)
				return fail(r, "delete range beyond 2^53");
			st->delete_ranges++;
			if (len > 0 && !push_range(d, client, clock, len, r))
				return false;
		}
	}
	return true;
}

static bool
decode(const uint8_t *u, size_t len, Decoded *d, YjsStats *st, SspError *err)
{
	Rd			r = {u, len, 0, err};

	memset(st, 0, sizeof(*st));
	if (len == 0)
		return true;			/* the empty update */
	if (!rd_structs(&r, d, st) || !rd_delete_set(&r, d, st))
		return false;
	if (r.pos != r.len)
		return fail(&r, "trailing bytes after the delete set");
	return true;
}

static void
decoded_free(Decoded *d)
{
	ssp_free(d->structs);
	ssp_free(d->ranges);
}

bool
yjs_validate(const uint8_t *u, size_t len, YjsStats *stats, SspError *err)
{
	Decoded		d;
	YjsStats	st;
	bool		ok;

	memset(&d, 0, sizeof(d));
	ok = decode(u, len, &d, stats ? stats : &st, err);
	decoded_free(&d);
	return ok;
}

/* ---------------------------------------------------------------- writer */

static bool
put_uint(SspBuf *b, uint64_t v)
{
	uint8_t		tmp[10];
	int			n = 0;

	do
	{
		tmp[n] = (uint8_t) (v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	return ssp_buf_append(b, tmp, n);
}

/* Content of s with its first k clock units removed (0 < k < s->len). */
static bool
put_content_tail(SspBuf *b, const YStruct *s, uint64_t k)
{
	Rd			r = {s->content, s->content_len, 0, NULL};
	uint64_t	n;
	const uint8_t *p;

	switch (s->info & 0x1f)
	{
		case C_DELETED:
			return put_uint(b, s->len - k);
		case C_JSON:
		case C_ANY:
			if (!rd_uint(&r, &n))
				return false;
			for (uint64_t i = 0; i < k; i++)
				if (!((s->info & 0x1f) == C_JSON ? rd_json(&r, true) : rd_any(&r, 0)))
					return false;
			return put_uint(b, n - k) &&
				ssp_buf_append(b, s->content + r.pos, s->content_len - r.pos);
		case C_STRING:
			{
				uint64_t	units = 0,
							i = 0;
				bool		half = false;

				if (!rd_uint(&r, &n) || !rd_bytes(&r, n, &p))
					return false;
				while (units < k && i < n)
				{
					int			sl = utf8_seq_len(p[i]);

					units += sl == 4 ? 2 : 1;
					i += sl;
					half = units > k;	/* k splits a surrogate pair */
				}
				if (half)		/* the lone low half, as a JS encoder writes it: U+FFFD */
					return put_uint(b, n - i + 3) && ssp_buf_append(b, "\xEF\xBF\xBD", 3) &&
						ssp_buf_append(b, p + i, n - i);
				return put_uint(b, n - i) && ssp_buf_append(b, p + i, n - i);
			}
		default:				/* length-1 contents are never split */
			return false;
	}
}

/* Writes the Item s from clock offset k (0 = verbatim); GCs are written by put_client. */
static bool
put_struct(SspBuf *b, const YStruct *s, uint64_t k)
{
	uint8_t		info;

	if (k == 0)
		return ssp_buf_append(b, &s->info, 1) && ssp_buf_append(b, s->body, s->body_len);
	/* a slice's left neighbour is the unit before it, which becomes its origin */
	info = (uint8_t) ((s->info & 0x1f) | BIT_ORIGIN | (s->right ? BIT_RIGHT : 0));
	return ssp_buf_append(b, &info, 1) && put_uint(b, s->client) &&
		put_uint(b, s->clock + k - 1) &&
		(s->right == NULL || ssp_buf_append(b, s->right, s->right_len)) &&
		put_content_tail(b, s, k);
}

/* Writes (counts, with b NULL) the pending GC run as one GC struct, if there is one. */
static bool
flush_gc(SspBuf *b, uint64_t *gc, uint64_t *count)
{
	bool		ok = true;

	if (*gc == 0)
		return true;
	(*count)++;
	if (b)
		ok = ssp_buf_append(b, "\0", 1) && put_uint(b, *gc);
	*gc = 0;
	return ok;
}

/*
 * The structs of one client (sorted by clock) as written: whole, sliced where an earlier one
 * covers their start, dropped when covered, a Skip before a gap.  Adjacent GCs are written as
 * one (Yjs merges them too): how a GC range was cut in the inputs does not show in the output,
 * so merging a result with one of its inputs gives the result again.  With b NULL only counts.
 */
static bool
put_client(SspBuf *b, const YStruct *s, uint32_t n, uint64_t *count)
{
	uint64_t	end = s[0].clock;
	uint64_t	gc = 0;			/* clock units of the GC run not written yet */

	*count = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		uint64_t	k = 0;

		if (s[i].clock + s[i].len <= end)
			continue;
		if (s[i].clock > end)
		{
			if (!flush_gc(b, &gc, count))
				return false;
			(*count)++;
			if (b && !(ssp_buf_append(b, "\x0a", 1) && put_uint(b, s[i].clock - end)))
				return false;
		}
		else
			k = end - s[i].clock;
		if (s[i].info == 0)
			gc += s[i].len - k;
		else
		{
			if (!flush_gc(b, &gc, count))
				return false;
			(*count)++;
			if (b && !put_struct(b, &s[i], k))
				return false;
		}
		end = s[i].clock + s[i].len;
	}
	return flush_gc(b, &gc, count);
}

static int
cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

/* Clients descending, clocks ascending, longer first, GC before Item, then by bytes. */
static int
cmp_struct(const void *pa, const void *pb)
{
	const YStruct *a = pa,
			   *b = pb;
	int			c;

	if ((c = cmp_u64(b->client, a->client)) != 0 || (c = cmp_u64(a->clock, b->clock)) != 0 ||
		(c = cmp_u64(b->len, a->len)) != 0 || (c = cmp_u64(a->info, b->info)) != 0 ||
		(c = cmp_u64(a->body_len, b->body_len)) != 0)
		return c;
	return memcmp(a->body, b->body, a->body_len);
}

static int
cmp_range(const void *pa, const void *pb)
{
	const YRange *a = pa,
			   *b = pb;
	int			c;

	if ((c = cmp_u64(b->client, a->client)) != 0 || (c = cmp_u64(a->clock, b->clock)) != 0)
		return c;
	return cmp_u64(b->len, a->len);
}

static bool
put_structs(SspBuf *b, YStruct *s, uint32_t n)
{
	uint64_t	nclients = 0;

	if (n > 1)					/* s is NULL when there is nothing to sort */
		qsort(s, n, sizeof(YStruct), cmp_struct);
	for (uint32_t i = 0; i < n; i++)
		if (i == 0 || s[i].client != s[i - 1].client)
			nclients++;
	if (!put_uint(b, nclients))
		return false;
	for (uint32_t i = 0, j; i < n; i = j)
	{
		uint64_t	count;

		for (j = i + 1; j < n && s[j].client == s[i].client; j++)
			;
		if (!put_client(NULL, s + i, j - i, &count) || !put_uint(b, count) ||
			!put_uint(b, s[i].client) || !put_uint(b, s[i].clock) ||
			!put_client(b, s + i, j - i, &count))
			return false;
	}
	return true;
}

/* Sorts and joins overlapping or adjacent ranges in place; returns the new count. */
static uint32_t
join_ranges(YRange *r, uint32_t n)
{
	uint32_t	out = 0;

	if (n > 1)
		qsort(r, n, sizeof(YRange), cmp_range);
	for (uint32_t i = 0; i < n; i++)
	{
		YRange	   *last = out ? &r[out - 1] : NULL;

		if (last && last->client == r[i].client && last->clock + last->len >= r[i].clock)
		{
			uint64_t	end = r[i].clock + r[i].len;

			if (end > last->clock + last->len)
				last->len = end - last->clock;
		}
		else
			r[out++] = r[i];
	}
	return out;
}

static bool
put_delete_set(SspBuf *b, YRange *r, uint32_t n)
{
	uint64_t	nclients = 0;

	n = join_ranges(r, n);
	for (uint32_t i = 0; i < n; i++)
		if (i == 0 || r[i].client != r[i - 1].client)
			nclients++;
	if (!put_uint(b, nclients))
		return false;
	for (uint32_t i = 0, j; i < n; i = j)
	{
		for (j = i + 1; j < n && r[j].client == r[i].client; j++)
			;
		if (!put_uint(b, r[i].client) || !put_uint(b, j - i))
			return false;
		for (uint32_t k = i; k < j; k++)
			if (!put_uint(b, r[k].clock) || !put_uint(b, r[k].len))
				return false;
	}
	return true;
}

bool
yjs_merge(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, SspBuf *out,
		  SspError *err)
{
	Decoded		d;
	YjsStats	st;
	bool		ok;

	memset(&d, 0, sizeof(d));
	ok = decode(a, a ? alen : 0, &d, &st, err) && decode(b, b ? blen : 0, &d, &st, err);
	if (ok)
	{
		ok = put_structs(out, d.structs, d.nstructs) &&
			put_delete_set(out, d.ranges, d.nranges) && !out->oom;
		if (!ok)
			oom(err);
	}
	decoded_free(&d);
	return ok;
}
