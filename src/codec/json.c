/*
 * json.c — JSON syntax validation with JS JSON.parse parity (WF §1 `json`,
 * §8 hard part 2), a small DOM parser, and the output helpers the renderer
 * uses (string escaping, number formatting, base64).
 */
#include "ssp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON.parse whitespace is exactly these four; a BOM is a syntax error. */
static inline bool
is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static inline size_t
skip_ws(const uint8_t *s, size_t len, size_t i)
{
	while (i < len && is_ws(s[i]))
		i++;
	return i;
}

static inline int
hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Scan a string starting at the opening quote; returns index after the
 * closing quote, or 0 on error.  Lone surrogate escapes are accepted. */
static size_t
scan_string(const uint8_t *s, size_t len, size_t i)
{
	i++;                        /* opening quote */
	while (i < len)
	{
		uint8_t     c = s[i];

		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (c == '\\')
		{
			if (i + 1 >= len)
				return 0;
			c = s[i + 1];
			if (c == 'u')
			{
				if (len - i < 6)
					return 0;
				for (int k = 2; k < 6; k++)
					if (hexval(s[i + k]) < 0)
						return 0;
				i += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", c) || c == '\0')
				return 0;
			i += 2;
			continue;
		}
		i++;                    /* UTF-8 validity is checked up front */
	}
	return 0;
}

/* Scan a number; returns index after it or 0 on error. */
static size_t
scan_number(const uint8_t *s, size_t len, size_t i)
{
	if (i < len && s[i] == '-')
		i++;
	if (i >= len)
		return 0;
	if (s[i] == '0')
		i++;
	else if (s[i] >= '1' && s[i] <= '9')
	{
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	else
		return 0;
	if (i < len && s[i] == '.')
	{
		i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i;
}

static size_t
scan_literal(const uint8_t *s, size_t len, size_t i)
{
	static const char *lits[] = {"true", "false", "null"};

	for (int k = 0; k < 3; k++)
	{
		size_t      n = strlen(lits[k]);

		if (len - i >= n && memcmp(s + i, lits[k], n) == 0)
			return i + n;
	}
	return 0;
}

/* Scan one scalar (string, number, literal); 0 on error. */
static size_t
scan_scalar(const uint8_t *s, size_t len, size_t i)
{
	uint8_t     c = s[i];

	if (c == '"')
		return scan_string(s, len, i);
	if (c == '-' || (c >= '0' && c <= '9'))
		return scan_number(s, len, i);
	return scan_literal(s, len, i);
}

bool
ssp_json_valid(const char *text, size_t len)
{
	const uint8_t *s = (const uint8_t *) text;
	uint8_t     stack[SSP_JSON_MAX_DEPTH];  /* '{' or '[' per open level */
	int         depth = 0;
	size_t      i;

	if (!ssp_utf8_valid(text, len))
		return false;
	i = skip_ws(s, len, 0);

value:
	if (i >= len)
		return false;
	if (s[i] == '{' || s[i] == '[')
	{
		uint8_t     open = s[i];

		if (depth >= SSP_JSON_MAX_DEPTH)
			return false;
		stack[depth++] = open;
		i = skip_ws(s, len, i + 1);
		if (i < len && s[i] == (open == '{' ? '}' : ']'))
		{
			depth--;
			i++;
			goto after;
		}
		if (open == '[')
			goto value;
		goto member;
	}
	else
	{
		size_t      e = scan_scalar(s, len, i);

		if (e == 0)
			return false;
		i = e;
	}

after:
	i = skip_ws(s, len, i);
	if (depth == 0)
		return i == len;
	if (i >= len)
		return false;
	if (s[i] == ',')
	{
		i = skip_ws(s, len, i + 1);
		if (stack[depth - 1] == '[')
			goto value;
		goto member;
	}
	if (s[i] == (stack[depth - 1] == '{' ? '}' : ']'))
	{
		depth--;
		i++;
		goto after;
	}
	return false;

member:
	/* object member: "key" ws : ws value */
	if (i >= len || s[i] != '"')
		return false;
	i = scan_string(s, len, i);
	if (i == 0)
		return false;
	i = skip_ws(s, len, i);
	if (i >= len || s[i] != ':')
		return false;
	i = skip_ws(s, len, i + 1);
	goto value;
}

/*
 * A `json` field of a frame (WF §1): a str that must pass ssp_json_valid.  Here,
 * not with the other field readers in buf.c, so that buf.c (the layer below)
 * never calls up into the JSON validator.
 */
bool
ssp_rd_json(SspReader *r, SspStr *s, SspError *err)
{
	size_t      at = r->base + r->pos;

	if (!ssp_rd_str(r, s, err))
		return false;
	if (!ssp_json_valid(s->ptr, s->len))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: invalid JSON text at offset %zu", r->what, at);
	return true;
}

/* ------------------------------------------------------------------ */
/* DOM parser                                                          */
/* ------------------------------------------------------------------ */

typedef struct JParser
{
	const uint8_t *s;
	size_t      len;
	size_t      i;
	SspArena   *arena;
	SspError   *err;
} JParser;

static bool
put_wtf8(SspBuf *b, uint32_t cp)
{
	uint8_t     t[4];
	size_t      n;

	if (cp < 0x80)
	{
		t[0] = (uint8_t) cp;
		n = 1;
	}
	else if (cp < 0x800)
	{
		t[0] = (uint8_t) (0xC0 | (cp >> 6));
		t[1] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 2;
	}
	else if (cp < 0x10000)
	{
		t[0] = (uint8_t) (0xE0 | (cp >> 12));
		t[1] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
		t[2] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 3;
	}
	else
	{
		t[0] = (uint8_t) (0xF0 | (cp >> 18));
		t[1] = (uint8_t) (0x80 | ((cp >> 12) & 0x3F));
		t[2] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
		t[3] = (uint8_t) (0x80 | (cp & 0x3F));
		n = 4;
	}
	return ssp_buf_append(b, t, n);
}

static uint32_t
hex4(const uint8_t *p)
{
	return (uint32_t) ((hexval(p[0]) << 12) | (hexval(p[1]) << 8) |
					   (hexval(p[2]) << 4) | hexval(p[3]));
}

/* Decode a (validated) string token at p->i into the arena. */
static bool
jp_string(JParser *p, SspStr *out)
{
	SspBuf      b;
	size_t      i = p->i + 1;
	char       *d;

	ssp_buf_init(&b);
	while (p->s[i] != '"')
	{
		if (p->s[i] != '\\')
		{
			size_t      st = i;

			while (p->s[i] != '"' && p->s[i] != '\\')
				i++;
			ssp_buf_append(&b, p->s + st, i - st);
			continue;
		}
		switch (p->s[i + 1])
		{
			case 'b': ssp_buf_append(&b, "\b", 1); break;
			case 'f': ssp_buf_append(&b, "\f", 1); break;
			case 'n': ssp_buf_append(&b, "\n", 1); break;
			case 'r': ssp_buf_append(&b, "\r", 1); break;
			case 't': ssp_buf_append(&b, "\t", 1); break;
			case 'u':
				{
					uint32_t    cu = hex4(p->s + i + 2);

					/* Pair a high surrogate with a following low one. */
					if (cu >= 0xD800 && cu <= 0xDBFF && p->s[i + 6] == '\\' &&
						p->s[i + 7] == 'u')
					{
						uint32_t    lo = hex4(p->s + i + 8);

						if (lo >= 0xDC00 && lo <= 0xDFFF)
						{
							put_wtf8(&b, 0x10000 + ((cu - 0xD800) << 10) + (lo - 0xDC00));
							i += 12;
							continue;
						}
					}
					put_wtf8(&b, cu);
					i += 6;
					continue;
				}
			default:            /* " \ / */
				ssp_buf_append(&b, p->s + i + 1, 1);
				break;
		}
		i += 2;
	}
	p->i = i + 1;
	if (b.oom)
	{
		ssp_buf_free(&b);
		return ssp_oom(p->err);
	}
	d = ssp_arena_strdup(p->arena, b.data ? (const char *) b.data : "", b.len);
	out->len = (uint32_t) b.len;
	ssp_buf_free(&b);
	if (d == NULL)
		return ssp_oom(p->err);
	out->ptr = d;
	return true;
}

/* Recursive descent over input already validated by ssp_json_valid, so the
 * depth is bounded by SSP_JSON_MAX_DEPTH and no syntax errors remain. */
static bool
jp_value(JParser *p, SspJson *v)
{
	uint8_t     c;

	p->i = skip_ws(p->s, p->len, p->i);
	c = p->s[p->i];
	if (c == '{' || c == '[')
	{
		bool        obj = c == '{';
		size_t      cap = 0,
					n = 0;
		SspJson    *items = NULL;
		SspStr     *keys = NULL;
		bool        ok = true;

		p->i = skip_ws(p->s, p->len, p->i + 1);
		while (p->s[p->i] != (obj ? '}' : ']'))
		{
			if (n == cap)
			{
				size_t      ncap = cap ? cap * 2 : 8;
				SspJson    *ni = ssp_realloc(items, ncap * sizeof(SspJson));

				if (ni == NULL)
				{
					ok = ssp_oom(p->err);
					break;
				}
				items = ni;
				if (obj)
				{
					SspStr     *nk = ssp_realloc(keys, ncap * sizeof(SspStr));

					if (nk == NULL)
					{
						ok = ssp_oom(p->err);
						break;
					}
					keys = nk;
				}
				cap = ncap;
			}
			if (obj)
			{
				if (!jp_string(p, &keys[n]))
				{
					ok = false;
					break;
				}
				p->i = skip_ws(p->s, p->len, p->i) + 1;  /* ':' */
			}
			memset(&items[n], 0, sizeof(SspJson));
			if (!jp_value(p, &items[n]))
			{
				ok = false;
				break;
			}
			n++;
			p->i = skip_ws(p->s, p->len, p->i);
			if (p->s[p->i] == ',')
				p->i = skip_ws(p->s, p->len, p->i + 1);
		}
		if (ok)
		{
			p->i++;
			v->kind = obj ? SSP_JSON_OBJECT : SSP_JSON_ARRAY;
			v->count = (uint32_t) n;
			v->items = ssp_arena_array(p->arena, n, sizeof(SspJson));
			if (obj)
				v->keys = ssp_arena_array(p->arena, n, sizeof(SspStr));
			if (v->items == NULL || (obj && v->keys == NULL))
				ok = ssp_oom(p->err);
			else
			{
				if (n)
					memcpy(v->items, items, n * sizeof(SspJson));
				if (obj && n)
					memcpy(v->keys, keys, n * sizeof(SspStr));
			}
		}
		ssp_free(items);
		ssp_free(keys);
		return ok;
	}
	if (c == '"')
	{
		v->kind = SSP_JSON_STRING;
		return jp_string(p, &v->text);
	}
	if (c == 't' || c == 'f' || c == 'n')
	{
		v->kind = c == 't' ? SSP_JSON_TRUE : c == 'f' ? SSP_JSON_FALSE : SSP_JSON_NULL;
		p->i += c == 'f' ? 5 : 4;
		return true;
	}
	{
		size_t      e = scan_number(p->s, p->len, p->i);
		char       *lex = ssp_arena_strdup(p->arena, p->s + p->i, e - p->i);

		if (lex == NULL)
			return ssp_oom(p->err);
		v->kind = SSP_JSON_NUMBER;
		v->text.ptr = lex;
		v->text.len = (uint32_t) (e - p->i);
		v->num = strtod(lex, NULL);     /* overflow gives +-HUGE_VAL like JS */
		p->i = e;
		return true;
	}
}

bool
ssp_json_parse(SspArena *a, const char *s, size_t len, SspJson **out,
			   SspError *err)
{
	JParser     p;
	SspJson    *v;

	if (!ssp_json_valid(s, len))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST, "invalid JSON text");
	v = ssp_arena_alloc(a, sizeof(SspJson));
	if (v == NULL)
		return ssp_oom(err);
	p.s = (const uint8_t *) s;
	p.len = len;
	p.i = 0;
	p.arena = a;
	p.err = err;
	if (!jp_value(&p, v))
		return false;
	*out = v;
	return true;
}

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */
/* ------------------------------------------------------------------ */

/*
 * Write s as a JSON string literal the way JSON.stringify does: short
 * escapes for \b\f\n\r\t, \u00XX for other controls, and lone surrogates
 * (WTF-8 ED A0..BF xx, only from DOM strings) as \udXXX.
 */
bool
ssp_json_escape(SspBuf *out, const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *) str;
	size_t      i = 0,
				run = 0;

	ssp_put_u8(out, '"');
	while (i < len)
	{
		uint8_t     c = s[i];
		const char *esc = NULL;
		char        tmp[8];

		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\b')
			esc = "\\b";
		else if (c == '\f')
			esc = "\\f";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c < 0x20)
		{
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			esc = tmp;
		}
		else if (c == 0xED && i + 2 < len && s[i + 1] >= 0xA0 && s[i + 1] <= 0xBF)
		{
			unsigned    cu = 0xD000u | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);

			ssp_buf_append(out, s + run, i - run);
			snprintf(tmp, sizeof(tmp), "\\u%04x", cu);
			ssp_buf_append(out, tmp, 6);
			i += 3;
			run = i;
			continue;
		}
		if (esc)
		{
			ssp_buf_append(out, s + run, i - run);
			ssp_buf_append(out, esc, strlen(esc));
			run = i + 1;
		}
		i++;
	}
	ssp_buf_append(out, s + run, i - run);
	return ssp_put_u8(out, '"');
}

/*
 * Number text for a double: integral values below 1e21 in plain decimal,
 * others with the shortest %g precision that reads back exactly.
 * Non-finite values become null (SPEC §11); -0 prints as 0 like JS.
 */
bool
ssp_render_double(SspBuf *out, double d)
{
	char        tmp[40];

	if (!isfinite(d))
		return ssp_buf_append(out, "null", 4);
	if (d == 0)
		return ssp_buf_append(out, "0", 1);
	if (d == floor(d) && fabs(d) < 1e21)
		return ssp_buf_printf(out, "%.0f", d);
	for (int prec = 1; prec <= 17; prec++)
	{
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	return ssp_buf_append(out, tmp, strlen(tmp));
}

bool
ssp_base64_encode(SspBuf *out, const uint8_t *p, size_t len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t      i = 0;

	while (len - i >= 3)
	{
		uint32_t    v = ((uint32_t) p[i] << 16) | ((uint32_t) p[i + 1] << 8) | p[i + 2];
		char        q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], tbl[v & 63]};

		ssp_buf_append(out, q, 4);
		i += 3;
	}
	if (len - i == 1)
	{
		uint32_t    v = (uint32_t) p[i] << 16;
		char        q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], '=', '='};

		ssp_buf_append(out, q, 4);
	}
	else if (len - i == 2)
	{
		uint32_t    v = ((uint32_t) p[i] << 16) | ((uint32_t) p[i + 1] << 8);
		char        q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], '='};

		ssp_buf_append(out, q, 4);
	}
	return !out->oom;
}
