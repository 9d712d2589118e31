/*
 * buf.c — allocator hooks, arena, growable buffer, primitive readers and
 * writers (WF §1), strict UTF-8 and the UTF-16 key comparator.
 */
#include "ssp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Allocator hooks: the only mutable global state of the codec.        */
/* ------------------------------------------------------------------ */

static SspMallocFn  hook_malloc = malloc;
static SspReallocFn hook_realloc = realloc;
static SspFreeFn    hook_free = free;

void
ssp_set_allocator(SspMallocFn m, SspReallocFn r, SspFreeFn f)
{
	hook_malloc = m ? m : malloc;
	hook_realloc = r ? r : realloc;
	hook_free = f ? f : free;
}

void *
ssp_malloc(size_t size)
{
	return hook_malloc(size ? size : 1);
}

void *
ssp_realloc(void *ptr, size_t size)
{
	if (ptr == NULL)
		return ssp_malloc(size);
	return hook_realloc(ptr, size ? size : 1);
}

void
ssp_free(void *ptr)
{
	if (ptr)
		hook_free(ptr);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

bool
ssp_fail(SspError *err, const char *code, const char *fmt, ...)
{
	if (err)
	{
		va_list ap;

		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return false;
}

bool
ssp_oom(SspError *err)
{
	return ssp_fail(err, SSP_ERR_INTERNAL, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Arena                                                               */
/* ------------------------------------------------------------------ */

typedef struct SspChunk
{
	struct SspChunk *next;
	size_t           size;      /* usable bytes after the header */
	size_t           used;
	/* data follows, 8-aligned (the arena promises 8) */
	uint64_t         data[];
} SspChunk;

struct SspArena
{
	SspChunk *head;
};

#define ARENA_CHUNK 8192

SspArena *
ssp_arena_new(void)
{
	SspArena   *a = ssp_malloc(sizeof(SspArena));

	if (a)
		a->head = NULL;
	return a;
}

void *
ssp_arena_alloc(SspArena *a, size_t size)
{
	SspChunk   *c;
	size_t      need = (size + 7) & ~(size_t) 7;
	void       *p;

	if (a == NULL || need < size)
		return NULL;
	c = a->head;
	if (c == NULL || c->size - c->used < need)
	{
		size_t      csize = need > ARENA_CHUNK / 2 ? need : ARENA_CHUNK;

		if (csize > SIZE_MAX - sizeof(SspChunk))
			return NULL;
		c = ssp_malloc(sizeof(SspChunk) + csize);
		if (c == NULL)
			return NULL;
		c->size = csize;
		c->used = 0;
		/* A big dedicated chunk goes second so the head keeps its slack. */
		if (a->head && need > ARENA_CHUNK / 2)
		{
			c->next = a->head->next;
			a->head->next = c;
		}
		else
		{
			c->next = a->head;
			a->head = c;
		}
	}
	p = (char *) c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

void
ssp_arena_free(SspArena *a)
{
	SspChunk   *c;

	if (a == NULL)
		return;
	c = a->head;
	while (c)
	{
		SspChunk   *n = c->next;

		ssp_free(c);
		c = n;
	}
	ssp_free(a);
}

void *
ssp_arena_array(SspArena *a, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / sz)
		return NULL;
	return ssp_arena_alloc(a, n * sz);
}

char *
ssp_arena_strdup(SspArena *a, const void *p, size_t n)
{
	char       *d;

	if (n == SIZE_MAX)
		return NULL;
	d = ssp_arena_alloc(a, n + 1);
	if (d == NULL)
		return NULL;
	if (n)
		memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

/* ------------------------------------------------------------------ */
/* Growable buffer and writers                                         */
/* ------------------------------------------------------------------ */

void
ssp_buf_init(SspBuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = false;
}

void
ssp_buf_free(SspBuf *b)
{
	ssp_free(b->data);
	ssp_buf_init(b);
}

void
ssp_buf_reset(SspBuf *b)
{
	b->len = 0;
	b->oom = false;
}

static bool
buf_grow(SspBuf *b, size_t extra)
{
	size_t      want;
	size_t      ncap;
	uint8_t    *nd;

	if (b->oom)
		return false;
	if (extra > SIZE_MAX - b->len)
	{
		b->oom = true;
		return false;
	}
	want = b->len + extra;
	if (want <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 64;
	while (ncap < want)
	{
		if (ncap > SIZE_MAX / 2)
		{
			ncap = want;
			break;
		}
		ncap *= 2;
	}
	nd = ssp_realloc(b->data, ncap);
	if (nd == NULL)
	{
		b->oom = true;
		return false;
	}
	b->data = nd;
	b->cap = ncap;
	return true;
}

bool
ssp_buf_append(SspBuf *b, const void *p, size_t n)
{
	if (!buf_grow(b, n))
		return false;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

bool
ssp_buf_printf(SspBuf *out, const char *fmt, ...)
{
	char        tmp[128];
	va_list     ap;
	int         n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Only used for short numeric output. */
	if (n < 0 || (size_t) n >= sizeof(tmp))
	{
		out->oom = true;
		return false;
	}
	return ssp_buf_append(out, tmp, (size_t) n);
}

bool
ssp_i64_safe(int64_t v)
{
	return v >= -SSP_I64_SAFE_MAX && v <= SSP_I64_SAFE_MAX;
}

bool
ssp_put_u8(SspBuf *b, uint8_t v)
{
	return ssp_buf_append(b, &v, 1);
}

bool
ssp_put_u16(SspBuf *b, uint16_t v)
{
	uint8_t     t[2] = {(uint8_t) v, (uint8_t) (v >> 8)};

	return ssp_buf_append(b, t, 2);
}

bool
ssp_put_u32(SspBuf *b, uint32_t v)
{
	uint8_t     t[4];

	for (int i = 0; i < 4; i++)
		t[i] = (uint8_t) (v >> (8 * i));
	return ssp_buf_append(b, t, 4);
}

bool
ssp_put_i32(SspBuf *b, int32_t v)
{
	return ssp_put_u32(b, (uint32_t) v);
}

static bool
put_u64(SspBuf *b, uint64_t v)
{
	uint8_t     t[8];

	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t) (v >> (8 * i));
	return ssp_buf_append(b, t, 8);
}

bool
ssp_put_i64(SspBuf *b, int64_t v)
{
	if (!ssp_i64_safe(v))
		return false;
	return put_u64(b, (uint64_t) v);
}

bool
ssp_put_f64(SspBuf *b, double v)
{
	uint64_t    bits;

	memcpy(&bits, &v, 8);       /* carries NaN payloads and -0 unchanged */
	return put_u64(b, bits);
}

bool
ssp_put_bool(SspBuf *b, bool v)
{
	return ssp_put_u8(b, v ? 1 : 0);
}

bool
ssp_put_str(SspBuf *b, const char *p, uint32_t len)
{
	return ssp_put_u32(b, len) && ssp_buf_append(b, p, len);
}

bool
ssp_put_bytes(SspBuf *b, const uint8_t *p, uint32_t len)
{
	return ssp_put_u32(b, len) && ssp_buf_append(b, p, len);
}

/* ------------------------------------------------------------------ */
/* UTF-8 / UTF-16                                                      */
/* ------------------------------------------------------------------ */

/*
 * Decode one code point of valid-or-not UTF-8 at s[*i].  Returns the code
 * point, or -1 for any ill-formed sequence (the WHATWG fatal decoder's
 * rejects: overlongs, surrogates, > U+10FFFF, truncation, stray bytes).
 */
static int32_t
utf8_next(const uint8_t *s, size_t len, size_t *i)
{
	uint8_t     c = s[*i];
	int32_t     cp;
	int         n;
	uint8_t     lo = 0x80,
				hi = 0xBF;

	if (c < 0x80)
	{
		(*i)++;
		return c;
	}
	if (c >= 0xC2 && c <= 0xDF)
	{
		n = 1;
		cp = c & 0x1F;
	}
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 2;
		cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;          /* no overlongs */
		else if (c == 0xED)
			hi = 0x9F;          /* no surrogates */
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 3;
		cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;          /* nothing above U+10FFFF */
	}
	else
		return -1;
	if (len - *i < (size_t) n + 1)
		return -1;              /* truncated sequence */
	for (int k = 1; k <= n; k++)
	{
		uint8_t     t = s[*i + k];

		if (t < lo || t > hi)
			return -1;
		lo = 0x80;
		hi = 0xBF;
		cp = (cp << 6) | (t & 0x3F);
	}
	*i += (size_t) n + 1;
	return cp;
}

bool
ssp_utf8_valid(const char *s, size_t len)
{
	const uint8_t *u = (const uint8_t *) s;
	size_t      i = 0;

	while (i < len)
	{
		uint64_t    w;

		/* ASCII fast path: eight bytes at a time, then one */
		if (len - i >= 8 && (memcpy(&w, u + i, 8), (w & UINT64_C(0x8080808080808080)) == 0))
		{
			i += 8;
			continue;
		}
		if (u[i] < 0x80)
		{
			i++;
			continue;
		}
		if (utf8_next(u, len, &i) < 0)
			return false;
	}
	return true;
}

/* The first UTF-16 code unit of a code point: that decides the order. */
static uint32_t
utf16_key(int32_t cp)
{
	if (cp >= 0x10000)
		return 0xD800 + (((uint32_t) cp - 0x10000) >> 10);
	return (uint32_t) cp;
}

int
ssp_utf16_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	const uint8_t *ua = (const uint8_t *) a;
	const uint8_t *ub = (const uint8_t *) b;
	size_t      i = 0,
				j = 0;

	while (i < alen && j < blen)
	{
		int32_t     ca,
					cb;

		if (ua[i] == ub[j] && ua[i] < 0x80)
		{
			i++;
			j++;
			continue;
		}
		ca = utf8_next(ua, alen, &i);
		cb = utf8_next(ub, blen, &j);
		if (ca < 0 || cb < 0)
		{
			/* Invalid input: fall back to a byte comparison for stability. */
			size_t      m = alen < blen ? alen : blen;
			int         c = memcmp(a, b, m);

			return c ? c : (alen < blen ? -1 : alen > blen);
		}
		if (ca == cb)
			continue;
		if ((ca >= 0x10000) == (cb >= 0x10000))
			return ca < cb ? -1 : 1;
		{
			uint32_t    ka = utf16_key(ca),
						kb = utf16_key(cb);

			/* never equal: one is a surrogate, the other is not */
			return ka < kb ? -1 : 1;
		}
	}
	if (i < alen)
		return 1;
	if (j < blen)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

void
ssp_rd_init(SspReader *r, const uint8_t *p, size_t len, size_t base,
			const char *what, SspArena *arena)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->base = base;
	r->what = what;
	r->arena = arena;
}

bool
ssp_rd_truncated(SspReader *r, SspError *err)
{
	return ssp_fail(err, SSP_ERR_INVALID_REQUEST, "%s truncated at offset %zu",
					r->what, r->base + r->pos);
}

static bool
rd_need(SspReader *r, size_t n, SspError *err)
{
	if (ssp_rd_left(r) < n)
		return ssp_rd_truncated(r, err);
	return true;
}

bool
ssp_rd_raw(SspReader *r, size_t n, const uint8_t **p, SspError *err)
{
	if (!rd_need(r, n, err))
		return false;
	*p = r->p + r->pos;
	r->pos += n;
	return true;
}

bool
ssp_rd_u8(SspReader *r, uint8_t *v, SspError *err)
{
	if (!rd_need(r, 1, err))
		return false;
	*v = r->p[r->pos++];
	return true;
}

bool
ssp_rd_u16(SspReader *r, uint16_t *v, SspError *err)
{
	if (!rd_need(r, 2, err))
		return false;
	*v = (uint16_t) (r->p[r->pos] | (r->p[r->pos + 1] << 8));
	r->pos += 2;
	return true;
}

bool
ssp_rd_u32(SspReader *r, uint32_t *v, SspError *err)
{
	uint32_t    x = 0;

	if (!rd_need(r, 4, err))
		return false;
	for (int i = 3; i >= 0; i--)
		x = (x << 8) | r->p[r->pos + i];
	r->pos += 4;
	*v = x;
	return true;
}

bool
ssp_rd_i32(SspReader *r, int32_t *v, SspError *err)
{
	uint32_t    x;

	if (!ssp_rd_u32(r, &x, err))
		return false;
	*v = (int32_t) x;
	return true;
}

static bool
rd_u64(SspReader *r, uint64_t *v, SspError *err)
{
	uint64_t    x = 0;

	if (!rd_need(r, 8, err))
		return false;
	for (int i = 7; i >= 0; i--)
		x = (x << 8) | r->p[r->pos + i];
	r->pos += 8;
	*v = x;
	return true;
}

bool
ssp_rd_i64(SspReader *r, int64_t *v, SspError *err)
{
	uint64_t    x;
	size_t      at = r->base + r->pos;

	if (!rd_u64(r, &x, err))
		return false;
	*v = (int64_t) x;
	if (!ssp_i64_safe(*v))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: i64 outside the safe integer range at offset %zu",
						r->what, at);
	return true;
}

bool
ssp_rd_f64(SspReader *r, double *v, SspError *err)
{
	uint64_t    x;

	if (!rd_u64(r, &x, err))
		return false;
	memcpy(v, &x, 8);
	return true;
}

bool
ssp_rd_bool(SspReader *r, bool *v, SspError *err)
{
	uint8_t     x;

	if (!ssp_rd_u8(r, &x, err))
		return false;
	if (x > 1)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: bool byte 0x%02x at offset %zu", r->what, x,
						r->base + r->pos - 1);
	*v = x == 1;
	return true;
}

bool
ssp_rd_opt(SspReader *r, bool *present, SspError *err)
{
	uint8_t     x;

	if (!ssp_rd_u8(r, &x, err))
		return false;
	if (x > 1)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: presence byte 0x%02x at offset %zu", r->what, x,
						r->base + r->pos - 1);
	*present = x == 1;
	return true;
}

bool
ssp_rd_str(SspReader *r, SspStr *s, SspError *err)
{
	uint32_t    n;
	const uint8_t *p;
	size_t      at;

	if (!ssp_rd_u32(r, &n, err))
		return false;
	at = r->base + r->pos;
	if (!ssp_rd_raw(r, n, &p, err))
		return false;
	if (!ssp_utf8_valid((const char *) p, n))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: invalid UTF-8 in string at offset %zu", r->what, at);
	s->len = n;
	if (r->arena)
	{
		char       *d = ssp_arena_strdup(r->arena, p, n);

		if (d == NULL)
			return ssp_oom(err);
		s->ptr = d;
	}
	else
		s->ptr = (const char *) p;   /* validate-only: points into input */
	return true;
}

bool
ssp_rd_bytes(SspReader *r, SspBytes *b, SspError *err)
{
	uint32_t    n;
	const uint8_t *p;

	if (!ssp_rd_u32(r, &n, err))
		return false;
	if (!ssp_rd_raw(r, n, &p, err))
		return false;
	b->len = n;
	if (r->arena)
	{
		uint8_t    *d = ssp_arena_alloc(r->arena, n ? n : 1);

		if (d == NULL)
			return ssp_oom(err);
		if (n)
			memcpy(d, p, n);
		b->ptr = d;
	}
	else
		b->ptr = p;
	return true;
}

bool
ssp_rd_count(SspReader *r, uint32_t *n, size_t min_elem, SspError *err)
{
	size_t      at = r->base + r->pos;

	if (!ssp_rd_u32(r, n, err))
		return false;
	/* Attacker-controlled: never allocate more than the input can fill. */
	if (min_elem && *n > ssp_rd_left(r) / min_elem)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: count %u at offset %zu exceeds the remaining bytes",
						r->what, *n, at);
	return true;
}

bool
ssp_rd_done(SspReader *r, SspError *err)
{
	if (r->pos != r->len)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"%s: %zu trailing bytes at offset %zu", r->what,
						r->len - r->pos, r->base + r->pos);
	return true;
}
