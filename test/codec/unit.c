/*
 * unit.c — unit checks for the hard parts of the SSP2 codec (TAP).
 */
#include "testlib.h"
#include "../../src/codec/ops.h"

#include <math.h>

#define S(lit) ((SspStr) {lit, (uint32_t) (sizeof(lit) - 1)})
#define B(lit) ((SspBytes) {(const uint8_t *) lit, (uint32_t) (sizeof(lit) - 1)})

/* ------------------------------------------------------------------ */
/* Allocation tracking: largest single request since reset.            */
/* ------------------------------------------------------------------ */

static size_t max_alloc = 0;

static void *
track_malloc(size_t n)
{
	if (n > max_alloc)
		max_alloc = n;
	return malloc(n);
}

static void *
track_realloc(void *p, size_t n)
{
	if (n > max_alloc)
		max_alloc = n;
	return realloc(p, n);
}

/* ------------------------------------------------------------------ */

static void
test_utf16(void)
{
	const char *e000 = "\xEE\x80\x80";      /* U+E000 */
	const char *ffff = "\xEF\xBF\xBF";      /* U+FFFF */
	const char *sup = "\xF0\x90\x80\x80";   /* U+10000 */
	const char *sup2 = "\xF0\x9F\x93\x9D";  /* U+1F4DD */

	tap_ok(ssp_utf16_cmp(sup, 4, e000, 3) < 0, "utf16: U+10000 sorts before U+E000");
	tap_ok(ssp_utf16_cmp(e000, 3, sup, 4) > 0, "utf16: U+E000 sorts after U+10000");
	tap_ok(ssp_utf16_cmp(sup2, 4, ffff, 3) < 0, "utf16: U+1F4DD sorts before U+FFFF");
	tap_ok(memcmp(sup, e000, 3) > 0, "utf16: byte order disagrees (sanity)");
	tap_ok(ssp_utf16_cmp(sup, 4, sup2, 4) < 0, "utf16: supplementary vs supplementary numeric");
	tap_ok(ssp_utf16_cmp("\xED\x9F\xBF", 3, sup, 4) < 0, "utf16: U+D7FF before U+10000");
	tap_ok(ssp_utf16_cmp("ab", 2, "abc", 3) < 0, "utf16: prefix sorts first");
	tap_ok(ssp_utf16_cmp("abc", 3, "abc", 3) == 0, "utf16: equal");
	tap_ok(ssp_utf16_cmp("a\x00" "b", 3, "a", 1) > 0, "utf16: embedded NUL counts");
	tap_ok(ssp_utf16_cmp("Z", 1, "a", 1) < 0, "utf16: ASCII order");
}

static void
test_utf8(void)
{
	static const struct
	{
		const char *s;
		size_t      n;
		bool        ok;
		const char *what;
	}           cases[] = {
		{"plain", 5, true, "ASCII"},
		{"\x00", 1, true, "U+0000"},
		{"\xC2\x80", 2, true, "U+0080"},
		{"\xEF\xBF\xBF", 3, true, "U+FFFF"},
		{"\xF4\x8F\xBF\xBF", 4, true, "U+10FFFF"},
		{"\xC0\x80", 2, false, "overlong NUL (C0 80)"},
		{"\xC1\xBF", 2, false, "overlong C1"},
		{"\xE0\x80\x80", 3, false, "overlong 3-byte"},
		{"\xE0\x9F\xBF", 3, false, "overlong 3-byte upper edge"},
		{"\xF0\x80\x80\x80", 4, false, "overlong 4-byte"},
		{"\xF0\x8F\xBF\xBF", 4, false, "overlong 4-byte upper edge"},
		{"\xED\xA0\x80", 3, false, "surrogate U+D800"},
		{"\xED\xBF\xBF", 3, false, "surrogate U+DFFF"},
		{"\xF4\x90\x80\x80", 4, false, "above U+10FFFF"},
		{"\xF5\x80\x80\x80", 4, false, "F5 lead"},
		{"\xE2\x82", 2, false, "truncated 3-byte"},
		{"\x80", 1, false, "stray continuation"},
		{"\xC2\x41", 2, false, "bad continuation"},
		{"\xFF", 1, false, "FF byte"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(ssp_utf8_valid(cases[i].s, cases[i].n) == cases[i].ok,
			   "utf8: %s %s", cases[i].what, cases[i].ok ? "accepted" : "rejected");
}

static void
test_json(void)
{
	static const struct
	{
		const char *s;
		bool        ok;
	}           cases[] = {
		{"1", true}, {" \t\r\n\"x\" \n", true}, {"\"\\uD800\"", true},
		{"\"\\udc00\\ud800\"", true}, {"{\"a\":1,\"a\":2}", true}, {"[]", true},
		{"{}", true}, {"-0", true}, {"1e5", true}, {"1E+5", true}, {"0.5e-3", true},
		{"null", true}, {"[true,false,null]", true}, {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", true},
		{"\"\xF0\x9D\x94\x98\"", true}, {"{\"k\" : [1 , {\"x\":\"y\"}]}", true},
		{"\xEF\xBB\xBF" "1", false}, {"\v1", false}, {"\f1", false}, {"\xC2\xA0" "1", false},
		{"01", false}, {"1.", false}, {".5", false}, {"+1", false}, {"-", false},
		{"1e", false}, {"[1,]", false}, {"{\"a\":1,}", false}, {"'x'", false},
		{"\"\\x\"", false}, {"\"a\nb\"", false}, {"NaN", false}, {"Infinity", false},
		{"", false}, {"   ", false}, {"1 2", false}, {"\"\\u12\"", false}, {"tru", false},
		{"nul", false}, {"[", false}, {"{\"a\"}", false}, {"{1:2}", false},
		{"\"\xFF\"", false}, {"\"\xED\xA0\x80\"", false}, {"[1]]", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(ssp_json_valid(cases[i].s, strlen(cases[i].s)) == cases[i].ok,
			   "json: case %zu %s", i, cases[i].ok ? "accepted" : "rejected");

	/* nesting bound: 512 accepted, 513 rejected, 100000 rejected */
	{
		size_t      n = 100000;
		char       *deep = malloc(2 * n + 1);

		for (size_t i = 0; i < n; i++)
		{
			deep[i] = '[';
			deep[2 * n - 1 - i] = ']';
		}
		tap_ok(!ssp_json_valid(deep, 2 * n), "json: 100000-deep nesting rejected without recursion");
		tap_ok(ssp_json_valid(deep + n - 512, 1024), "json: 512-deep nesting accepted");
		tap_ok(!ssp_json_valid(deep + n - 513, 1026), "json: 513-deep nesting rejected");
		free(deep);
	}

	/* DOM: escapes, surrogate pairs, numbers */
	{
		SspArena   *a = ssp_arena_new();
		SspJson    *v;
		const char *t = "{\"k\":\"\\u00e9\\ud83d\\udcdd\",\"n\":1e3,\"z\":[-0.5]}";

		tap_ok(ssp_json_parse(a, t, strlen(t), &v, NULL) && v->kind == SSP_JSON_OBJECT &&
			   v->count == 3 && v->items[0].text.len == 6 &&
			   memcmp(v->items[0].text.ptr, "\xC3\xA9\xF0\x9F\x93\x9D", 6) == 0 &&
			   v->items[1].num == 1000 && v->items[2].items[0].num == -0.5,
			   "json: DOM decodes escapes, pairs and numbers");
		ssp_arena_free(a);
	}

	/* the test's deep-equality must discriminate */
	tap_ok(json_text_equal("{\"a\":1,\"b\":[1,2]}", 17, "{ \"b\":[1, 2.0], \"a\":1e0 }", strlen("{ \"b\":[1, 2.0], \"a\":1e0 }")),
		   "deep-equal: key order and number spelling ignored");
	tap_ok(!json_text_equal("{\"a\":1}", 7, "{\"a\":1,\"b\":2}", 13), "deep-equal: extra key detected");
	tap_ok(!json_text_equal("[1,2]", 5, "[2,1]", 5), "deep-equal: array order matters");
	tap_ok(!json_text_equal("{\"a\":\"x\"}", 9, "{\"a\":\"y\"}", 9), "deep-equal: string value differs");
}

static void
test_i64(void)
{
	/* single integer column row: bitmap 00 + i64 */
	static const SspColumn c[] = {{"n", SSP_COL_INTEGER, false, 0}};
	uint8_t     row[9] = {0};
	SspError    err;
	SspBuf      b;
	int64_t     vals[] = {SSP_I64_SAFE_MAX, -SSP_I64_SAFE_MAX, SSP_I64_SAFE_MAX + 1,
	-SSP_I64_SAFE_MAX - 1, INT64_MIN};
	bool        expect[] = {true, true, false, false, false};

	for (int k = 0; k < 5; k++)
	{
		uint64_t    u = (uint64_t) vals[k];

		for (int i = 0; i < 8; i++)
			row[1 + i] = (uint8_t) (u >> (8 * i));
		tap_ok(ssp_row_decode_full(NULL, c, 1, row, 9, NULL, &err) == expect[k],
			   "i64: %lld %s on decode", (long long) vals[k], expect[k] ? "accepted" : "rejected");
		ssp_buf_init(&b);
		tap_ok(ssp_put_i64(&b, vals[k]) == expect[k], "i64: %lld %s by writer",
			   (long long) vals[k], expect[k] ? "accepted" : "refused");
		ssp_buf_free(&b);
	}
}

/* Build a sparse row for NOTES (9 cols): presence bytes, null bytes, tail. */
static bool
sparse_err(const uint8_t *p, size_t n, const char *needle)
{
	SspError    err = {0};
	bool        ok = ssp_row_decode_sparse(NULL, notes_cols, 9, 0, p, n, NULL, &err);

	if (ok)
		return false;
	if (!strstr(err.message, needle) || strcmp(err.code, SSP_ERR_INVALID_REQUEST) != 0)
	{
		tap_diag("got: %s", err.message);
		return false;
	}
	return true;
}

static void
test_sparse(void)
{
	/* presence 0x43 0x00 = id, title, meta; nulls 0x02 = title NULL */
	static const uint8_t good[] = {0x43, 0x00, 0x02, 3, 0, 0, 0, 'n', '-', '1',
	14, 0, 0, 0, '{', '"', 't', 'a', 'g', 's', '"', ':', '[', '"', 'a', '"', ']', '}'};
	SspArena   *a = ssp_arena_new();
	SspValue    v[9];
	SspError    err = {0};
	SspBuf      b;
	uint8_t     t[sizeof(good)];

	ssp_buf_init(&b);
	tap_ok(ssp_row_decode_sparse(a, notes_cols, 9, 0, good, sizeof(good), v, &err) &&
		   v[0].present && !v[0].is_null && v[0].str.len == 3 && v[1].present && v[1].is_null &&
		   !v[2].present && v[6].present && !v[6].is_null && !v[8].present,
		   "sparse: decode presence/null/value states");
	tap_ok(ssp_row_encode_sparse(notes_cols, 9, 0, v, &b, &err) &&
		   hexdiff(b.data, b.len, good, sizeof(good)), "sparse: re-encode identical");
	ssp_buf_free(&b);
	ssp_arena_free(a);

	/* Each violation alone, then combined with later-order ones. */
	memcpy(t, good, sizeof(t));
	t[1] = 0x02;                /* bit 9 = padding */
	tap_ok(sparse_err(t, sizeof(t), "presence bitmap padding"), "sparse: presence padding bit");
	t[0] = 0x42;                /* and PK absent too: padding still reported first */
	tap_ok(sparse_err(t, sizeof(t), "presence bitmap padding"), "sparse: padding before absent PK");
	memcpy(t, good, sizeof(t));
	t[0] = 0x42;                /* PK absent; p=2, null padding bit 2 set too */
	t[2] = 0x04;
	tap_ok(sparse_err(t, sizeof(t), "primary key"), "sparse: absent PK before null padding");
	memcpy(t, good, sizeof(t));
	t[2] = 0x08;                /* null bit for a 4th present column (only 3) */
	tap_ok(sparse_err(t, sizeof(t), "null bitmap padding"), "sparse: null bit for absent column");
	t[2] = 0x09;                /* + null on id: padding reported first */
	tap_ok(sparse_err(t, sizeof(t), "null bitmap padding"), "sparse: null padding before non-nullable");
	memcpy(t, good, sizeof(t));
	t[2] = 0x03;                /* id NULL */
	tap_ok(sparse_err(t, sizeof(t), "non-nullable"), "sparse: null on non-nullable PK");
	t[sizeof(t) - 1] = ']';     /* + bad JSON: non-nullable reported first */
	tap_ok(sparse_err(t, sizeof(t), "non-nullable"), "sparse: non-nullable before value checks");
	memcpy(t, good, sizeof(t));
	t[sizeof(t) - 1] = ']';
	tap_ok(sparse_err(t, sizeof(t), "JSON"), "sparse: value check (json)");
	tap_ok(sparse_err(good, sizeof(good) - 1, "truncated"), "sparse: truncated value");
	{
		uint8_t     longer[sizeof(good) + 1];

		memcpy(longer, good, sizeof(good));
		longer[sizeof(good)] = 0;
		tap_ok(sparse_err(longer, sizeof(longer), "trailing"), "sparse: trailing byte");
	}
}

static void
test_rows(void)
{
	SspArena   *a = ssp_arena_new();
	SspValue    in[9],
				out[9];
	SspBuf      b;
	SspError    err = {0};
	double      nan;
	uint64_t    nanbits = UINT64_C(0x7ff80000deadbeef),
				got;

	memcpy(&nan, &nanbits, 8);
	memset(in, 0, sizeof(in));
	in[0].str = S("pk\0x");     /* embedded NUL, length authoritative */
	in[1].is_null = true;
	in[2].str = S("");
	in[3].i = -7;
	in[4].f = nan;
	in[5].b = true;
	in[6].str = S("{\"a\": [1, 2]}");
	in[7].bytes = B("");
	in[8].bytes = B("\x01\x02\xfe");
	ssp_buf_init(&b);
	tap_ok(ssp_row_encode_full(notes_cols, 9, in, &b, &err), "row: full encode");
	tap_ok(ssp_row_decode_full(a, notes_cols, 9, b.data, b.len, out, &err) &&
		   out[0].str.len == 4 && memcmp(out[0].str.ptr, "pk\0x", 5) == 0 &&
		   out[1].is_null && !out[2].is_null && out[2].str.len == 0 &&
		   out[3].i == -7 && (memcpy(&got, &out[4].f, 8), got == nanbits) && out[5].b &&
		   out[6].str.len == 13 && !out[7].is_null && out[7].bytes.len == 0 &&
		   out[8].bytes.len == 3, "row: full decode round trip (NaN bits, NUL, empty vs NULL)");
	{
		SspBuf      r;

		ssp_buf_init(&r);
		tap_ok(ssp_render_pk(&notes_cols[0], &out[0], &r, &err) && r.len == 4, "pk: string as-is");
		ssp_buf_reset(&r);
		tap_ok(ssp_render_pk(&notes_cols[3], &out[3], &r, &err) && r.len == 2 && memcmp(r.data, "-7", 2) == 0,
			   "pk: integer decimal");
		ssp_buf_reset(&r);
		tap_ok(ssp_render_pk(&notes_cols[5], &out[5], &r, &err) && r.len == 4 && memcmp(r.data, "true", 4) == 0,
			   "pk: boolean");
		ssp_buf_reset(&r);
		tap_ok(ssp_render_pk(&notes_cols[6], &out[6], &r, &err) && r.len == 13, "pk: json raw text");
		tap_ok(!ssp_render_pk(&notes_cols[4], &out[4], &r, &err), "pk: float refused");
		tap_ok(!ssp_render_pk(&notes_cols[1], &out[1], &r, &err), "pk: NULL refused");
		ssp_buf_free(&r);
	}
	/* padding bit in the full-row bitmap (9 cols = 2 bytes, bit 9 padding) */
	{
		uint8_t    *c = malloc(b.len);

		memcpy(c, b.data, b.len);
		c[1] |= 0x02;
		tap_ok(!ssp_row_decode_full(NULL, notes_cols, 9, c, b.len, NULL, &err), "row: padding bit rejected");
		c[1] &= (uint8_t) ~0x02;
		c[0] |= 0x01;           /* null on id */
		tap_ok(!ssp_row_decode_full(NULL, notes_cols, 9, c, b.len, NULL, &err), "row: null on non-nullable rejected");
		free(c);
	}
	/* encoder refuses bad values */
	in[1].is_null = false;
	in[1].str = S("\xC0\x80");
	ssp_buf_reset(&b);
	tap_ok(!ssp_row_encode_full(notes_cols, 9, in, &b, &err), "row: encoder refuses invalid UTF-8");
	in[1].is_null = true;
	in[0].is_null = true;
	tap_ok(!ssp_row_encode_full(notes_cols, 9, in, &b, &err), "row: encoder refuses NULL on non-nullable");
	ssp_buf_free(&b);
	ssp_arena_free(a);

	/* blob_ref shape */
	{
		static const char *good[] = {
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":12}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":1e3,\"mediaType\":\"a/b\",\"name\":\"n\"}",
			"{ \"blobId\" : \"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\", \"byteLength\" : 1.0, \"name\":\"n\" }",
		};
		static const char *bad[] = {
			"{\"byteLength\":12,\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}",
			"{\"blobId\":\"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":12}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":-1}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":1.5}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":12,\"extra\":1}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\"byteLength\":12,\"name\":\"n\",\"mediaType\":\"a\"}",
			"{\"blobId\":\"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}",
			"[1]",
		};

		for (size_t i = 0; i < 3; i++)
			tap_ok(ssp_blob_ref_valid(good[i], strlen(good[i])), "blob_ref: good case %zu", i);
		for (size_t i = 0; i < 8; i++)
			tap_ok(!ssp_blob_ref_valid(bad[i], strlen(bad[i])), "blob_ref: bad case %zu", i);
	}

	/* rendering of non-finite floats via a segment */
	{
		static const SspColumn fc[] = {{"id", SSP_COL_STRING, false, 0}, {"f", SSP_COL_FLOAT, false, 0}};
		SspValue    fv[2];
		SspBuf      seg,
					r;
		SspSegmentWriter w;
		SspSegment  s;

		memset(fv, 0, sizeof(fv));
		fv[0].str = S("x");
		fv[1].f = INFINITY;
		ssp_buf_init(&seg);
		ssp_buf_init(&r);
		ssp_segment_begin(&w, &seg, "t", 1, 1, fc, 2, &err);
		ssp_segment_add_values(&w, 1, fv, &err);
		fv[1].f = -0.0;
		ssp_segment_add_values(&w, 2, fv, &err);
		ssp_segment_finish(&w, &err);
		tap_ok(ssp_segment_decode(seg.data, seg.len, &s, &err) && ssp_render_segment(&s, &r, &err) &&
			   ssp_put_u8(&r, 0) && strstr((char *) r.data, "\"f\":null") && strstr((char *) r.data, "\"f\":0}"),
			   "render: Infinity as null, -0 as 0");
		ssp_segment_free(&s);
		ssp_buf_free(&seg);
		ssp_buf_free(&r);
	}
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

static void
expect_decode_fail(const SspBuf *b, const char *code, const char *what)
{
	SspMessage  m;
	SspError    err = {0};
	bool        ok = ssp_decode_message(b->data, b->len, &m, &err);

	if (ok)
		ssp_message_free(&m);
	else if (strcmp(err.code, code) != 0)
		tap_diag("got %s: %s", err.code, err.message);
	tap_ok(!ok && strcmp(err.code, code) == 0, "%s (%s)", what, ok ? "decoded!" : err.message);
}

/* Raw message from frames, without grammar checks. */
static void
raw_msg(SspBuf *b, uint16_t wire, uint8_t kind, const SspFrame *const *f, int n)
{
	SspError    err;

	ssp_buf_reset(b);
	ssp_write_message_header(b, wire, kind, &err);
	for (int i = 0; i < n; i++)
		if (!ssp_write_frame(b, wire, f[i], &err))
			tap_diag("raw_msg: frame %d: %s", i, err.message);
	ssp_write_end(b, &err);
}

static void
test_framing(void)
{
	SspBuf      b;
	SspFrame    rh = {0},
				pull = {0};

	ssp_buf_init(&b);
	rh.type = SSP_FRAME_REQ_HEADER;
	rh.req_header.client_id = S("client-a");
	rh.req_header.schema_version = 1;
	pull.type = SSP_FRAME_PULL_HEADER;
	pull.pull_header.accept = 3;
	{
		const SspFrame *f[] = {&rh, &pull};
		SspMessage  m;
		SspError    err;

		raw_msg(&b, 1, SSP_KIND_REQUEST, f, 2);
		tap_ok(ssp_decode_message(b.data, b.len, &m, &err), "framing: baseline decodes");
		ssp_message_free(&m);
		/* truncate at every length: always a clean error */
		{
			int         bad = 0;

			for (size_t n = 0; n < b.len; n++)
			{
				if (ssp_decode_message(b.data, n, &m, &err))
				{
					bad++;
					ssp_message_free(&m);
				}
			}
			tap_ok(bad == 0, "framing: every truncation rejected");
		}
		/* overlong frame length: REQ_HEADER declares 4096, 4 follow */
		{
			static const uint8_t ov[] = {'S', 'S', 'P', '2', 1, 0, 1, 0, 0x01, 0x00, 0x10, 0, 0, 1, 2, 3, 4};
			SspBuf      o = {(uint8_t *) ov, sizeof(ov), sizeof(ov), false};

			expect_decode_fail(&o, SSP_ERR_INVALID_REQUEST, "framing: overlong frame length");
		}
		/* END with non-zero length (and that many bytes present) */
		b.data[b.len - 4] = 1;
		ssp_put_u8(&b, 0);
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "framing: END with non-zero length");
		b.len--;
		b.data[b.len - 4] = 0;
		/* byte after END */
		ssp_put_u8(&b, 0);
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "framing: byte after END");
		/* leftover payload byte in a known frame: grow PULL_HEADER by one */
		raw_msg(&b, 1, SSP_KIND_REQUEST, f, 2);
		{
			size_t      pl = 8 + 5 + 16;    /* PULL_HEADER starts after REQ_HEADER */
			SspBuf      c;

			ssp_buf_init(&c);
			ssp_buf_append(&c, b.data, pl);
			ssp_put_u8(&c, SSP_FRAME_PULL_HEADER);
			ssp_put_u32(&c, 14);
			ssp_buf_append(&c, b.data + pl + 5, 13);
			ssp_put_u8(&c, 0);
			ssp_write_end(&c, NULL);
			expect_decode_fail(&c, SSP_ERR_INVALID_REQUEST, "framing: leftover bytes in a known frame");
			/* accept with reserved bits */
			raw_msg(&c, 1, SSP_KIND_REQUEST, f, 2);
			c.data[pl + 5 + 12] = 0x13;
			expect_decode_fail(&c, SSP_ERR_INVALID_REQUEST, "framing: accept bits 4-7 rejected");
			/* msgKind 3 */
			c.data[6] = 3;
			expect_decode_fail(&c, SSP_ERR_INVALID_REQUEST, "framing: msgKind 3 rejected");
			/* wire 0 and 4 */
			raw_msg(&c, 1, SSP_KIND_REQUEST, f, 2);
			c.data[4] = 0;
			expect_decode_fail(&c, SSP_ERR_INVALID_REQUEST, "framing: wireVersion 0 rejected");
			c.data[4] = 4;
			expect_decode_fail(&c, SSP_ERR_INVALID_REQUEST, "framing: wireVersion 4 rejected");
			ssp_buf_free(&c);
		}
	}
	/* worked example sizes: pull-minimal is 114 bytes at wire 1, 115 at wire 3 */
	{
		SspFrame    sub = {0};
		SspScopeEntry e = {S("project"), 1, NULL};
		SspStr      p1 = S("p1");
		const SspFrame *f[] = {&rh, &pull, &sub};

		e.values = &p1;
		sub.type = SSP_FRAME_SUBSCRIPTION;
		sub.subscription.id = S("sub-notes");
		sub.subscription.table = S("notes");
		sub.subscription.scopes.n = 1;
		sub.subscription.scopes.entries = &e;
		sub.subscription.cursor = 42;
		raw_msg(&b, 1, SSP_KIND_REQUEST, f, 3);
		tap_ok(b.len == 114, "wire 1 pull-minimal is 114 bytes (got %zu)", b.len);
		raw_msg(&b, 3, SSP_KIND_REQUEST, f, 3);
		tap_ok(b.len == 115 && b.data[8 + 5 + 16] == 0, "wire 3 pull-minimal is 115 bytes with logEpoch absent");
	}
	ssp_buf_free(&b);
}

static void
test_huge_counts(void)
{
	SspBuf      b;
	SspMessage  m;
	SspError    err;
	bool        ok;

	ssp_buf_init(&b);
	ssp_set_allocator(track_malloc, track_realloc, free);

	/* PUSH_COMMIT declaring 0xFFFFFFFF operations in a tiny frame */
	{
		static const uint8_t msg[] = {'S', 'S', 'P', '2', 2, 0, 1, 0,
			0x01, 10, 0, 0, 0, 1, 0, 0, 0, 'c', 1, 0, 0, 0, 0,
			0x02, 9, 0, 0, 0, 1, 0, 0, 0, 'x', 0xFF, 0xFF, 0xFF, 0xFF,
		0, 0, 0, 0, 0};

		max_alloc = 0;
		ok = !ssp_decode_message(msg, sizeof(msg), &m, &err);
		tap_ok(ok && max_alloc < 65536 && strstr(err.message, "count"),
			   "huge count: PUSH_COMMIT ops (max alloc %zu: %s)", max_alloc, err.message);
	}
	/* COMMIT with a 0xFFFFFFFF tables list */
	{
		static const uint8_t msg[] = {'S', 'S', 'P', '2', 1, 0, 2, 0,
			0x10, 2, 0, 0, 0, 0, 0,
			0x12, 15, 0, 0, 0, 1, 0, 0, 0, 's', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0x13, 24, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0xFF, 0xFF, 0xFF, 0xFF,
		0, 0, 0, 0, 0};

		max_alloc = 0;
		ok = !ssp_decode_message(msg, sizeof(msg), &m, &err);
		tap_ok(ok && max_alloc < 65536 && strstr(err.message, "count"),
			   "huge count: COMMIT tables (max alloc %zu: %s)", max_alloc, err.message);
	}
	/* huge string length */
	{
		static const uint8_t msg[] = {'S', 'S', 'P', '2', 1, 0, 1, 0,
			0x01, 8, 0, 0, 0, 0xF0, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 0, 0, 0, 0, 0};

		max_alloc = 0;
		ok = !ssp_decode_message(msg, sizeof(msg), &m, &err);
		tap_ok(ok && max_alloc < 65536 && strstr(err.message, "truncated"),
			   "huge count: string length (max alloc %zu: %s)", max_alloc, err.message);
	}
	/* segment: 65535 columns, then a block with 0xFFFFFFFF rows */
	{
		static const uint8_t seg1[] = {'S', 'S', 'G', '2', 1, 0, 0, 0, 1, 0, 0, 0, 't',
		1, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0};
		static const uint8_t seg2[] = {'S', 'S', 'G', '2', 1, 0, 0, 0, 1, 0, 0, 0, 't',
			1, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 16, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
		SspSegment  s;

		max_alloc = 0;
		ok = !ssp_segment_decode(seg1, sizeof(seg1), &s, &err);
		tap_ok(ok && max_alloc < 65536 && strstr(err.message, "column count"),
			   "huge count: segment columns (max alloc %zu: %s)", max_alloc, err.message);
		max_alloc = 0;
		ok = !ssp_segment_decode(seg2, sizeof(seg2), &s, &err);
		tap_ok(ok && max_alloc < 65536 && strstr(err.message, "rows cannot fit"),
			   "huge count: segment block rows (max alloc %zu: %s)", max_alloc, err.message);
	}
	ssp_set_allocator(NULL, NULL, NULL);
	ssp_buf_free(&b);
}

/* A fixed set of frames used by the round-trip and grammar tests. */
typedef struct Fx
{
	SspFrame    rq_hdr, push, push_empty, pull, sub;
	SspFrame    rs_hdr, lease, pr_rej, details, pr_ok, ss, commit, se, ss2, sref,
				sinl, se2, unk, error;
	SspPushOp   ops[2];
	SspScopeEntry scopes[2];
	SspStr      vals[3];
	SspOpResult results[3];
	SspDetailsEntry dent[1];
	SspStr      tables[2];
	SspChange   changes[2];
	SspStrPair  cscopes[2];
	SspBuf      segbuf;
	SspBuf      row;
} Fx;

static void
fx_init(Fx *x, uint16_t wire)
{
	SspError    err;
	SspValue    v[9];
	SspSegmentWriter w;

	memset(x, 0, sizeof(*x));
	ssp_buf_init(&x->segbuf);
	ssp_buf_init(&x->row);
	memset(v, 0, sizeof(v));
	v[0].str = S("n-1");
	v[1].is_null = true;
	v[2].str = S("body \xF0\x9F\x93\x9D");
	v[3].is_null = true;
	v[4].f = 3.5;
	v[6].str = S("{\"k\": true}");
	v[7].bytes = B("\x00\x01");
	v[8].is_null = true;
	ssp_row_encode_full(notes_cols, 9, v, &x->row, &err);
	ssp_segment_begin(&w, &x->segbuf, "notes", 5, 1, notes_cols, 9, &err);
	ssp_segment_add_values(&w, 7, v, &err);
	ssp_segment_finish(&w, &err);

	x->rq_hdr.type = SSP_FRAME_REQ_HEADER;
	x->rq_hdr.req_header.client_id = S("client-a");
	x->rq_hdr.req_header.schema_version = 2;
	x->rq_hdr.req_header.has_log_epoch = wire >= 2;
	x->rq_hdr.req_header.log_epoch = wire >= 2 ? S("epoch-1") : S("");

	x->ops[0] = (SspPushOp) {S("notes"), S("n-1"), SSP_OP_UPSERT, true, 0, true,
	{x->row.data, (uint32_t) x->row.len}};
	x->ops[1] = (SspPushOp) {S("notes"), S("n-2"), SSP_OP_DELETE, true, 3, false, {NULL, 0}};
	x->push.type = SSP_FRAME_PUSH_COMMIT;
	x->push.push_commit = (SspPushCommit) {S("c-1"), 2, x->ops};
	x->push_empty.type = SSP_FRAME_PUSH_COMMIT;
	x->push_empty.push_commit = (SspPushCommit) {S("c-0"), 0, NULL};

	x->pull.type = SSP_FRAME_PULL_HEADER;
	x->pull.pull_header = (SspPullHeader) {500, 2000, 8, 15};

	/* keys deliberately unsorted (U+E000 vs U+1F4DD): the encoder sorts */
	x->vals[0] = S("p1");
	x->vals[1] = S("p2");
	x->vals[2] = S("t9");
	x->scopes[0] = (SspScopeEntry) {S("\xEE\x80\x80"), 1, &x->vals[2]};
	x->scopes[1] = (SspScopeEntry) {S("\xF0\x9F\x93\x9D"), 2, &x->vals[0]};
	x->sub.type = SSP_FRAME_SUBSCRIPTION;
	x->sub.subscription = (SspSubscription) {S("sub-1"), S("notes"), {2, x->scopes}, true,
	S("{\"a\": [1, \"\\ud800\"]}"), -1, true, S(" 7 ")};

	x->rs_hdr.type = SSP_FRAME_RESP_HEADER;
	x->rs_hdr.resp_header.has_latest_schema_version = true;
	x->rs_hdr.resp_header.latest_schema_version = 2;
	x->rs_hdr.resp_header.log_epoch = wire >= 2 ? S("epoch-1") : S("");

	x->lease.type = SSP_FRAME_LEASE;
	x->lease.lease = (SspLease) {S("lease-1"), 1782994500000};

	x->results[0] = (SspOpResult) {0, SSP_RESULT_CONFLICT, S("sync.version_conflict"), S("m"), 7,
		{x->row.data, (uint32_t) x->row.len}, wire >= 3 ? B("\x02\x00") : (SspBytes) {NULL, 0}, false};
	x->results[1] = (SspOpResult) {1, SSP_RESULT_ERROR, S("sync.forbidden"), S("no"), 0, {NULL, 0}, {NULL, 0}, true};
	x->results[2] = (SspOpResult) {0, SSP_RESULT_APPLIED, S(""), S(""), 0, {NULL, 0}, {NULL, 0}, false};
	x->pr_rej.type = SSP_FRAME_PUSH_RESULT;
	x->pr_rej.push_result = (SspPushResult) {S("c-1"), SSP_PUSH_REJECTED, false, 0, 2, x->results};
	x->dent[0] = (SspDetailsEntry) {1, S("{ \"references\": {\"zz\": \"v\", \"aa\": \"w\"}, \"reason\": \"scope.denied\", \"fieldPaths\": [\"a.b\", \"c\"] }")};
	x->details.type = SSP_FRAME_PUSH_RESULT_DETAILS;
	x->details.push_result_details = (SspPushResultDetails) {S("c-1"), 1, x->dent};
	x->pr_ok.type = SSP_FRAME_PUSH_RESULT;
	x->pr_ok.push_result = (SspPushResult) {S("c-2"), SSP_PUSH_CACHED, true, 58, 1, &x->results[2]};

	x->ss.type = SSP_FRAME_SUB_START;
	x->ss.sub_start = (SspSubStart) {S("sub-1"), SSP_SUB_ACTIVE, S(""), {2, x->scopes}, false};
	x->tables[0] = S("notes");
	x->tables[1] = S("tasks");
	x->cscopes[0] = (SspStrPair) {S("team"), S("t9")};
	x->cscopes[1] = (SspStrPair) {S("project"), S("p1")};
	x->changes[0] = (SspChange) {0, S("n-1"), SSP_OP_UPSERT, true, 4, {2, x->cscopes}, true,
	{x->row.data, (uint32_t) x->row.len}};
	x->changes[1] = (SspChange) {1, S("task-9"), SSP_OP_DELETE, false, 0, {0, NULL}, false, {NULL, 0}};
	x->commit.type = SSP_FRAME_COMMIT;
	x->commit.commit = (SspCommit) {44, 1782993601000, S("actor-2"), 2, x->tables, 2, x->changes};
	x->se.type = SSP_FRAME_SUB_END;
	x->se.sub_end = (SspSubEnd) {44, false, S("")};

	x->ss2.type = SSP_FRAME_SUB_START;
	x->ss2.sub_start = (SspSubStart) {S("sub-2"), SSP_SUB_ACTIVE, S(""), {0, NULL}, true};
	x->sref.type = SSP_FRAME_SEGMENT_REF;
	x->sref.segment_ref = (SspSegmentRef) {S("sha256:00"), SSP_MEDIA_SQLITE, S("notes"), 8192, 250, 100,
	S("5a99"), false, S(""), true, S("n-0250"), true, S("https://x/y"), true, 1782994500000};
	x->sinl.type = SSP_FRAME_SEGMENT_INLINE;
	x->sinl.segment_inline.payload = (SspBytes) {x->segbuf.data, (uint32_t) x->segbuf.len};
	x->unk.type = 0x17;
	x->unk.unknown = true;
	x->unk.unknown_frame.payload = B("reserved");
	x->se2.type = SSP_FRAME_SUB_END;
	x->se2.sub_end = (SspSubEnd) {100, true, S("{\"asOfCommitSeq\":100}")};
	x->error.type = SSP_FRAME_ERROR;
	x->error.error = (SspErrorFrame) {S("sync.internal_error"), S("boom"), S("internal"), true,
	S("retryLater"), true, S("{\"table\": \"notes\"}")};
}

static void
fx_free(Fx *x)
{
	ssp_buf_free(&x->segbuf);
	ssp_buf_free(&x->row);
}

static void
roundtrip(uint16_t wire, uint8_t kind, const SspFrame *const *f, uint32_t n, const char *what)
{
	SspFrame    arr[32];
	SspMessage  in = {wire, kind, arr, n, NULL},
				out;
	SspBuf      e1,
				e2,
				r1,
				r2;
	SspError    err = {0};
	bool        ok;

	for (uint32_t i = 0; i < n; i++)
		arr[i] = *f[i];
	ssp_buf_init(&e1);
	ssp_buf_init(&e2);
	ssp_buf_init(&r1);
	ssp_buf_init(&r2);
	ok = ssp_encode_message(&in, &e1, &err);
	if (!ok)
		tap_diag("encode: %s", err.message);
	ok = ok && ssp_decode_message(e1.data, e1.len, &out, &err);
	if (!ok)
	{
		tap_diag("%s", err.message);
		tap_ok(0, "wire %u %s: round trip", wire, what);
		goto done;
	}
	tap_ok(out.nframes == n && out.wire_version == wire && out.kind == kind,
		   "wire %u %s: decode gives %u frames", wire, what, n);
	tap_ok(ssp_encode_message(&out, &e2, &err) && hexdiff(e1.data, e1.len, e2.data, e2.len),
		   "wire %u %s: re-encode identical", wire, what);
	/* Field-level comparison through the canonical rendering. */
	ok = ssp_render_message(&in, &r1, &err) && ssp_render_message(&out, &r2, &err);
	if (ok && !json_text_equal((char *) r1.data, r1.len, (char *) r2.data, r2.len))
	{
		/* The details JSON is normalized by the encoder; compare after it. */
		tap_diag("in:  %.*s", (int) r1.len, (char *) r1.data);
		tap_diag("out: %.*s", (int) r2.len, (char *) r2.data);
		ok = false;
	}
	tap_ok(ok, "wire %u %s: decoded fields equal the built frames", wire, what);
	ssp_message_free(&out);
done:
	ssp_buf_free(&e1);
	ssp_buf_free(&e2);
	ssp_buf_free(&r1);
	ssp_buf_free(&r2);
}

/*
 * The descriptor the server writes for an external rows page (SPEC §5.4): mediaType rows, both
 * row cursors, no url; and the first and last pages' shapes (a cursor absent).  Wire 2 and 3.
 */
static void
test_segment_ref_rows(void)
{
	for (uint16_t wire = 2; wire <= 3; wire++)
	{
		Fx          x;
		SspFrame    mid;
		SspFrame    first;
		SspFrame    last;

		fx_init(&x, wire);
		memset(&mid, 0, sizeof(mid));
		mid.type = SSP_FRAME_SEGMENT_REF;
		mid.segment_ref = (SspSegmentRef) {S("sha256:7133f36f"), SSP_MEDIA_ROWS, S("todos"), 115, 2, 1,
		S("9d4fab24"), true, S("b"), true, S("d"), false, S(""), false, 0};
		first = mid;
		first.segment_ref.has_row_cursor = false;
		last = mid;
		last.segment_ref.has_next_row_cursor = false;
		{
			const SspFrame *rsp[] = {&x.rs_hdr, &x.ss2, &first, &mid, &last, &x.se2};

			roundtrip(wire, SSP_KIND_RESPONSE, rsp, 6, "response: rows SEGMENT_REF pages with row cursors, no url");
		}
		fx_free(&x);
	}
}

static void
test_roundtrips(void)
{
	for (uint16_t wire = 1; wire <= 3; wire++)
	{
		Fx          x;

		fx_init(&x, wire);
		{
			const SspFrame *req[] = {&x.rq_hdr, &x.push, &x.pull, &x.unk, &x.sub};

			roundtrip(wire, SSP_KIND_REQUEST, req, 5, "request (all request frames)");
		}
		{
			/* details: use the already-normalized text so renders compare */
			SspDetailsEntry nd = {1, S("{\"fieldPaths\":[\"a.b\",\"c\"],\"reason\":\"scope.denied\",\"references\":{\"aa\":\"w\",\"zz\":\"v\"}}")};
			SspFrame    det = x.details;
			const SspFrame *rsp[] = {&x.rs_hdr, &x.lease, &x.pr_rej, &det, &x.pr_ok, &x.ss,
			&x.commit, &x.se, &x.ss2, &x.sref, &x.sinl, &x.unk, &x.se2, &x.error};

			det.push_result_details.entries = &nd;
			roundtrip(wire, SSP_KIND_RESPONSE, rsp, 14, "response (all response frames)");
		}
		/* details normalization on encode */
		if (wire == 2)
		{
			const SspFrame *rsp[] = {&x.rs_hdr, &x.pr_rej, &x.details};
			SspFrame    arr[3] = {*rsp[0], *rsp[1], *rsp[2]};
			SspMessage  in = {wire, SSP_KIND_RESPONSE, arr, 3, NULL},
						out;
			SspBuf      e;
			SspError    err;
			const char *want = "{\"fieldPaths\":[\"a.b\",\"c\"],\"reason\":\"scope.denied\",\"references\":{\"aa\":\"w\",\"zz\":\"v\"}}";

			ssp_buf_init(&e);
			tap_ok(ssp_encode_message(&in, &e, &err) && ssp_decode_message(e.data, e.len, &out, &err) &&
				   out.frames[2].push_result_details.entries[0].details_json.len == strlen(want) &&
				   memcmp(out.frames[2].push_result_details.entries[0].details_json.ptr, want, strlen(want)) == 0,
				   "details: encoder normalizes member order, sorts references, compacts");
			ssp_message_free(&out);
			ssp_buf_free(&e);
		}
		/* map keys come back sorted in UTF-16 order */
		if (wire == 3)
		{
			const SspFrame *req[] = {&x.rq_hdr, &x.pull, &x.sub};
			SspFrame    arr[3] = {*req[0], *req[1], *req[2]};
			SspMessage  in = {wire, SSP_KIND_REQUEST, arr, 3, NULL},
						out;
			SspBuf      e;
			SspError    err;

			ssp_buf_init(&e);
			tap_ok(ssp_encode_message(&in, &e, &err) && ssp_decode_message(e.data, e.len, &out, &err) &&
				   out.frames[2].subscription.scopes.entries[0].key.len == 4 &&
				   out.frames[2].subscription.scopes.entries[1].key.len == 3,
				   "map: encoder emits supplementary key before U+E000 key");
			ssp_message_free(&out);
			ssp_buf_free(&e);
		}
		fx_free(&x);
	}
}

static void
test_writer_refusals(void)
{
	Fx          x;
	SspBuf      b;
	SspError    err;
	SspFrame    f;

	fx_init(&x, 1);
	ssp_buf_init(&b);
	f = x.unk;
	f.type = SSP_FRAME_COMMIT;
	tap_ok(!ssp_write_frame(&b, 2, &f, &err) && b.len == 0, "writer: refuses unknown frame with a registered type");
	f.type = SSP_FRAME_SUB_START;
	tap_ok(!ssp_write_frame(&b, 2, &f, &err), "writer: refuses unknown 0x12 even in a request context");
	f = x.rq_hdr;
	f.req_header.has_log_epoch = true;
	f.req_header.log_epoch = S("e");
	tap_ok(!ssp_write_frame(&b, 1, &f, &err), "writer: v1 REQ_HEADER has no logEpoch");
	tap_ok(ssp_write_frame(&b, 2, &f, &err), "writer: v2 REQ_HEADER carries logEpoch");
	ssp_buf_reset(&b);
	f = x.rs_hdr;
	tap_ok(!ssp_write_frame(&b, 2, &f, &err), "writer: v2 RESP_HEADER needs a non-empty logEpoch");
	x.results[0].conflict_columns = B("\x02");
	tap_ok(!ssp_write_frame(&b, 2, &x.pr_rej, &err), "writer: conflictColumns refused before wire 3");
	tap_ok(!ssp_write_frame(&b, 2, &x.push_empty, &err) && strcmp(err.code, SSP_ERR_EMPTY_COMMIT) == 0,
		   "writer: empty PUSH_COMMIT refused with sync.empty_commit");
	f = x.sref;
	f.segment_ref.has_url = false;
	tap_ok(!ssp_write_frame(&b, 2, &f, &err), "writer: urlExpiresAtMs without url refused");
	f = x.push;
	x.ops[1].has_payload = true;
	tap_ok(!ssp_write_frame(&b, 2, &f, &err), "writer: delete with payload refused");
	x.ops[1].has_payload = false;
	{
		SspScopeEntry dup[2] = {{S("a"), 0, NULL}, {S("a"), 0, NULL}};

		f = x.ss;
		f.sub_start.effective_scopes = (SspScopeMap) {2, dup};
		tap_ok(!ssp_write_frame(&b, 2, &f, &err), "writer: duplicate map key refused");
	}
	tap_ok(b.len == 0, "writer: failed frames leave no partial bytes");
	ssp_buf_free(&b);
	fx_free(&x);
}

/*
 * A commit streamed change by change (ssp_commit_begin/_add/_end) is the same bytes as the
 * whole frame through ssp_write_frame (WF §3.4): the COMMIT layout is written in one place.
 */
static bool
stream_commit(SspBuf *b, const SspCommit *c, SspError *err)
{
	SspCommitWriter w;

	if (!ssp_commit_begin(&w, b, c->commit_seq, c->created_at_ms, &c->actor_id, c->ntables,
						  c->tables, err))
		return false;
	for (uint32_t i = 0; i < c->nchanges; i++)
		if (!ssp_commit_add(&w, &c->changes[i], err))
			return false;
	return ssp_commit_end(&w, err);
}

static bool
same_as_frame(const SspCommit *c, const char *what)
{
	SspBuf      a,
				b;
	SspError    err;
	SspFrame    f;
	bool        ok;

	ssp_buf_init(&a);
	ssp_buf_init(&b);
	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_COMMIT;
	f.commit = *c;
	/* a prefix, as in a response: the writer works at any offset */
	ssp_buf_append(&a, "prefix", 6);
	ssp_buf_append(&b, "prefix", 6);
	ok = ssp_write_frame(&a, 3, &f, &err) && stream_commit(&b, c, &err) &&
		a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
	tap_ok(ok, "commit writer: %s: the same bytes as ssp_write_frame", what);
	ssp_buf_free(&a);
	ssp_buf_free(&b);
	return ok;
}

static void
test_commit_writer(void)
{
	Fx          x;
	SspBuf      b;
	SspError    err;
	SspCommitWriter w;
	SspStrPair  many[20];
	char        keys[20][16];
	SspChange   ch;
	SspCommit   c;

	fx_init(&x, 3);
	same_as_frame(&x.commit.commit, "two tables, upsert and delete");
	c = x.commit.commit;
	c.nchanges = 0;
	same_as_frame(&c, "no changes");
	/* a scopes map larger than the writer's stack buffer, keys in reverse order */
	for (int i = 0; i < 20; i++)
	{
		snprintf(keys[i], sizeof(keys[i]), "k%02d", 19 - i);
		many[i] = (SspStrPair) {{keys[i], 3}, S("v\xC3\xA9")};
	}
	ch = x.changes[0];
	ch.scopes = (SspStrMap) {20, many};
	c = x.commit.commit;
	c.changes = &ch;
	c.nchanges = 1;
	same_as_frame(&c, "20 scopes (sorted off the stack)");

	ssp_buf_init(&b);
	ssp_buf_append(&b, "xy", 2);
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 1, x.tables, &err) &&
		   ssp_commit_add(&w, &x.changes[0], &err) && w.start == 2,
		   "commit writer: begin and add at the buffer's end");
	ssp_commit_abandon(&w);
	tap_ok(b.len == 2, "commit writer: abandon drops the whole frame");

	ch = x.changes[1];
	ch.row_id = S("bad \xC3");
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 2, x.tables, &err) &&
		   !ssp_commit_add(&w, &ch, &err) && b.len == 2 &&
		   strstr(err.message, "COMMIT.rowId is not valid UTF-8") != NULL,
		   "commit writer: an invalid rowId is refused and the frame dropped");
	ch = x.changes[1];
	ch.op = 3;
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 2, x.tables, &err) &&
		   !ssp_commit_add(&w, &ch, &err) && b.len == 2 &&
		   strstr(err.message, "COMMIT.op value 3 out of range") != NULL,
		   "commit writer: an op out of range is refused");
	ch = x.changes[1];
	ch.table_index = 1;
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 1, x.tables, &err) &&
		   !ssp_commit_add(&w, &ch, &err) && b.len == 2,
		   "commit writer: a tableIndex beyond the tables is refused");
	many[3].key = many[4].key;
	ch = x.changes[0];
	ch.scopes = (SspStrMap) {20, many};
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 2, x.tables, &err) &&
		   !ssp_commit_add(&w, &ch, &err) && b.len == 2,
		   "commit writer: a duplicate scope key is refused (large map)");
	many[3].key = many[0].key;
	ch.scopes = (SspStrMap) {5, many};
	tap_ok(ssp_commit_begin(&w, &b, 7, 1, &x.commit.commit.actor_id, 2, x.tables, &err) &&
		   !ssp_commit_add(&w, &ch, &err) && b.len == 2,
		   "commit writer: a duplicate scope key is refused (small map)");
	tap_ok(!ssp_commit_begin(&w, &b, SSP_I64_SAFE_MAX + 1, 1, &x.commit.commit.actor_id, 2,
							 x.tables, &err) && b.len == 2,
		   "commit writer: an unsafe commitSeq is refused at begin");
	ssp_buf_free(&b);
	fx_free(&x);
}

static size_t
find(const SspBuf *b, const char *needle, size_t n)
{
	for (size_t i = 0; i + n <= b->len; i++)
		if (memcmp(b->data + i, needle, n) == 0)
			return i;
	return b->len;
}

static void
test_grammar(void)
{
	Fx          x;
	SspBuf      b;
	SspFrame    d2,
				pr_ok_same;
	SspDetailsEntry badent = {0, S("{\"reason\":\"x\"}")};

	fx_init(&x, 2);
	ssp_buf_init(&b);
#define BAD(kind, what, ...) do { \
		const SspFrame *f_[] = {__VA_ARGS__}; \
		raw_msg(&b, 2, kind, f_, (int) (sizeof(f_) / sizeof(f_[0]))); \
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "grammar: " what); } while (0)
#define GOOD(kind, what, ...) do { \
		const SspFrame *f_[] = {__VA_ARGS__}; \
		SspMessage m_; SspError e_; bool ok_; \
		raw_msg(&b, 2, kind, f_, (int) (sizeof(f_) / sizeof(f_[0]))); \
		ok_ = ssp_decode_message(b.data, b.len, &m_, &e_); \
		if (ok_) ssp_message_free(&m_); else tap_diag("%s", e_.message); \
		tap_ok(ok_, "grammar: " what); } while (0)

	/* request */
	BAD(SSP_KIND_REQUEST, "request without PUSH_COMMIT or PULL_HEADER", &x.rq_hdr);
	BAD(SSP_KIND_REQUEST, "request with only an unknown frame", &x.rq_hdr, &x.unk);
	BAD(SSP_KIND_REQUEST, "unknown first frame", &x.unk, &x.rq_hdr, &x.pull);
	BAD(SSP_KIND_REQUEST, "second REQ_HEADER", &x.rq_hdr, &x.rq_hdr, &x.pull);
	BAD(SSP_KIND_REQUEST, "second PULL_HEADER", &x.rq_hdr, &x.pull, &x.pull);
	BAD(SSP_KIND_REQUEST, "PUSH_COMMIT after PULL_HEADER", &x.rq_hdr, &x.pull, &x.push);
	BAD(SSP_KIND_REQUEST, "SUBSCRIPTION without PULL_HEADER", &x.rq_hdr, &x.push, &x.sub);
	BAD(SSP_KIND_REQUEST, "response frame in a request", &x.rq_hdr, &x.pull, &x.se);
	BAD(SSP_KIND_REQUEST, "RESP_HEADER first in a request", &x.rs_hdr, &x.pull);
	GOOD(SSP_KIND_REQUEST, "push only", &x.rq_hdr, &x.push);
	GOOD(SSP_KIND_REQUEST, "unknown frames between known ones", &x.rq_hdr, &x.unk, &x.push, &x.unk, &x.pull, &x.unk);
	{
		const SspFrame *f[] = {&x.rq_hdr, &x.push_empty};
		SspBuf      raw;

		/* writer refuses empty commits, so hand-build: REQ_HEADER + c-0 with 0 ops */
		ssp_buf_init(&raw);
		raw_msg(&raw, 2, SSP_KIND_REQUEST, f, 1);
		raw.len -= 5;
		ssp_put_u8(&raw, SSP_FRAME_PUSH_COMMIT);
		ssp_put_u32(&raw, 11);
		ssp_put_str(&raw, "c-0", 3);
		ssp_put_u32(&raw, 0);
		ssp_write_end(&raw, NULL);
		expect_decode_fail(&raw, SSP_ERR_EMPTY_COMMIT, "PUSH_COMMIT with zero operations");
		ssp_buf_free(&raw);
	}

	/* response */
	GOOD(SSP_KIND_RESPONSE, "header only", &x.rs_hdr);
	GOOD(SSP_KIND_RESPONSE, "lease right after header", &x.rs_hdr, &x.lease, &x.pr_ok);
	BAD(SSP_KIND_RESPONSE, "LEASE after PUSH_RESULT", &x.rs_hdr, &x.pr_ok, &x.lease);
	BAD(SSP_KIND_RESPONSE, "LEASE after an unknown frame", &x.rs_hdr, &x.unk, &x.lease);
	BAD(SSP_KIND_RESPONSE, "second LEASE", &x.rs_hdr, &x.lease, &x.lease);
	BAD(SSP_KIND_RESPONSE, "LEASE after ERROR", &x.rs_hdr, &x.error, &x.lease);
	GOOD(SSP_KIND_RESPONSE, "details after a rejected result", &x.rs_hdr, &x.pr_rej, &x.details);
	BAD(SSP_KIND_RESPONSE, "details after an applied result", &x.rs_hdr, &x.pr_ok, &x.details);
	pr_ok_same = x.pr_ok;
	pr_ok_same.push_result.client_commit_id = S("c-1");
	BAD(SSP_KIND_RESPONSE, "details after a cached result with the same id", &x.rs_hdr, &pr_ok_same, &x.details);
	d2 = x.details;
	d2.push_result_details.client_commit_id = S("c-9");
	BAD(SSP_KIND_RESPONSE, "details with a different clientCommitId", &x.rs_hdr, &x.pr_rej, &d2);
	d2 = x.details;
	d2.push_result_details.entries = &badent;   /* opIndex 0 is a conflict record */
	BAD(SSP_KIND_RESPONSE, "details naming a non-error record", &x.rs_hdr, &x.pr_rej, &d2);
	BAD(SSP_KIND_RESPONSE, "two details frames", &x.rs_hdr, &x.pr_rej, &x.details, &x.details);
	BAD(SSP_KIND_RESPONSE, "details after an unknown frame", &x.rs_hdr, &x.pr_rej, &x.unk, &x.details);
	BAD(SSP_KIND_RESPONSE, "PUSH_RESULT after SUB_START", &x.rs_hdr, &x.ss, &x.se, &x.pr_ok);
	BAD(SSP_KIND_RESPONSE, "nested SUB_START", &x.rs_hdr, &x.ss, &x.ss2, &x.se, &x.se);
	BAD(SSP_KIND_RESPONSE, "COMMIT outside a subscription", &x.rs_hdr, &x.commit);
	BAD(SSP_KIND_RESPONSE, "segment outside a subscription", &x.rs_hdr, &x.sref);
	BAD(SSP_KIND_RESPONSE, "SUB_END outside a subscription", &x.rs_hdr, &x.se);
	BAD(SSP_KIND_RESPONSE, "COMMIT then segment", &x.rs_hdr, &x.ss, &x.commit, &x.sinl, &x.se);
	BAD(SSP_KIND_RESPONSE, "segment then COMMIT", &x.rs_hdr, &x.ss, &x.sref, &x.commit, &x.se);
	BAD(SSP_KIND_RESPONSE, "subscription open at END", &x.rs_hdr, &x.ss, &x.commit);
	GOOD(SSP_KIND_RESPONSE, "subscription open at END after ERROR", &x.rs_hdr, &x.ss, &x.commit, &x.error);
	BAD(SSP_KIND_RESPONSE, "unknown frame after ERROR", &x.rs_hdr, &x.error, &x.unk);
	BAD(SSP_KIND_RESPONSE, "second ERROR", &x.rs_hdr, &x.error, &x.error);
	BAD(SSP_KIND_RESPONSE, "request frame in a response", &x.rs_hdr, &x.pull);
	BAD(SSP_KIND_RESPONSE, "second RESP_HEADER", &x.rs_hdr, &x.rs_hdr);
	GOOD(SSP_KIND_RESPONSE, "two subscriptions, commits then segments", &x.rs_hdr, &x.ss, &x.commit,
		 &x.se, &x.ss2, &x.sref, &x.sinl, &x.se2);

	/* frame-level decode checks */
	{
		SspFrame    pr = x.pr_ok;
		const SspFrame *f[] = {&x.rs_hdr, &pr};
		size_t      at;

		raw_msg(&b, 2, SSP_KIND_RESPONSE, f, 2);
		at = find(&b, "c-2", 3) + 3;  /* PUSH_RESULT.status */
		b.data[at] = 3;     /* rejected, but commitSeq present */
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: commitSeq present on a rejected result");
		b.data[at] = 4;
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: PUSH_RESULT status 4");
		b.data[at] = 2;
		b.data[at + 1] = 2;
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: presence byte 2");
	}
	{
		SspFrame    se = x.ss;
		const SspFrame *f[] = {&x.rs_hdr, &se, &x.se};
		SspScopeEntry un[2] = {{S("b"), 0, NULL}, {S("a"), 0, NULL}};
		size_t      at;

		raw_msg(&b, 2, SSP_KIND_RESPONSE, f, 3);
		at = find(&b, "sub-1", 5) + 5;    /* SUB_START.status */
		b.data[at] = 0;
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: SUB_START status 0");
		/* unsorted keys on the wire: swap after encoding sorted a,b */
		se.sub_start.effective_scopes = (SspScopeMap) {2, un};
		raw_msg(&b, 2, SSP_KIND_RESPONSE, f, 3);
		at += 1 + 4 + 4;        /* status, reasonCode "", map count */
		b.data[at + 4] = 'b';
		b.data[at + 4 + 1 + 4 + 4] = 'a';
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: map keys out of order");
		b.data[at + 4] = 'a';
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: duplicate map keys");
	}
	{
		SspFrame    c = x.commit;
		const SspFrame *f[] = {&x.rs_hdr, &x.ss, &c, &x.se};
		SspBuf      raw;
		size_t      off;

		ssp_buf_init(&raw);
		raw_msg(&raw, 2, SSP_KIND_RESPONSE, f, 4);
		/* find the second change's tableIndex (01 00 followed by "task-9") */
		for (off = 0; off + 8 < raw.len; off++)
			if (memcmp(raw.data + off, "\x01\x00\x06\x00\x00\x00task-9", 12) == 0)
				break;
		raw.data[off] = 2;
		expect_decode_fail(&raw, SSP_ERR_INVALID_REQUEST, "frame: COMMIT tableIndex out of range");
		ssp_buf_free(&raw);
	}
	{
		SspFrame    s = x.sinl;
		const SspFrame *f[] = {&x.rs_hdr, &x.ss2, &s, &x.se2};
		size_t      i;

		raw_msg(&b, 2, SSP_KIND_RESPONSE, f, 4);
		for (i = 0; i + 4 < b.len && memcmp(b.data + i, "SSG2", 4) != 0; i++)
			;
		b.data[i + 4] = 2;      /* formatVersion 2 */
		expect_decode_fail(&b, SSP_ERR_INVALID_REQUEST, "frame: SEGMENT_INLINE with a bad SSG2 payload");
	}
	{
		SspDetailsEntry bad[] = {
			{1, S("{}")},
			{1, S("{\"reason\":\"Bad\"}")},
			{1, S("{\"reason\":\"a..b\"}")},
			{1, S("{\"fieldPaths\":[]}")},
			{1, S("{\"fieldPaths\":[\"a\",\"a\"]}")},
			{1, S("{\"fieldPaths\":[\"a.\"]}")},
			{1, S("{\"references\":{\"k\":\" x\"}}")},
			{1, S("{\"references\":{\"k\":\"a\\u0001\"}}")},
			{1, S("{\"references\":{}}")},
			{1, S("{\"other\":1}")},
			{1, S("[\"reason\"]")},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			SspError    err;

			tap_ok(!ssp_details_json_valid(bad[i].details_json.ptr, bad[i].details_json.len, &err),
				   "details: invalid case %zu rejected", i);
		}
		{
			SspError    err;
			const char *ok = "{\"requiredAction\":\"retry-later\",\"reason\":\"a.b_c-d\",\"fieldPaths\":[\"_x.y1\"],\"references\":{\"row\":\"n-1 \xC3\xA9\"}}";

			tap_ok(ssp_details_json_valid(ok, strlen(ok), &err), "details: valid object accepted");
		}
	}
#undef BAD
#undef GOOD
	ssp_buf_free(&b);
	fx_free(&x);
}

static void
test_segments(void)
{
	static const SspColumn c[] = {{"id", SSP_COL_INTEGER, false, 0}, {"b", SSP_COL_BYTES, true, 0}};
	SspValue    v[2];
	SspBuf      out;
	SspSegmentWriter w;
	SspSegment  s;
	SspError    err = {0};
	bool        ok = true;
	uint8_t    *big = calloc(1, 100000);

	memset(v, 0, sizeof(v));
	ssp_buf_init(&out);
	ok = ssp_segment_begin(&w, &out, "t", 1, 3, c, 2, &err);
	for (int i = 0; ok && i < 2500; i++)
	{
		v[0].i = i;
		v[1].is_null = true;
		ok = ssp_segment_add_values(&w, i + 1, v, &err);
	}
	ok = ok && ssp_segment_finish(&w, &err);
	tap_ok(ok && ssp_segment_decode(out.data, out.len, &s, &err) && s.nblocks == 3 &&
		   s.blocks[0].nrows == 1000 && s.blocks[1].nrows == 1000 && s.blocks[2].nrows == 500 &&
		   s.blocks[2].rows[499].values[0].i == 2499,
		   "segment: 2500 rows cut into blocks of 1000/1000/500");
	ssp_segment_free(&s);

	ssp_buf_reset(&out);
	ok = ssp_segment_begin(&w, &out, "t", 1, 3, c, 2, &err);
	for (int i = 0; ok && i < 6; i++)
	{
		v[0].i = i;
		v[1].is_null = false;
		v[1].bytes = (SspBytes) {big, 100000};
		ok = ssp_segment_add_values(&w, 1, v, &err);
	}
	ok = ok && ssp_segment_finish(&w, &err);
	tap_ok(ok && ssp_segment_decode(out.data, out.len, &s, &err) && s.nblocks == 3 &&
		   s.blocks[0].nrows == 2, "segment: blocks cut before ~256 KiB (6 x 100 kB rows -> 3 blocks)");
	{
		SspBuf      re;

		ssp_buf_init(&re);
		tap_ok(ssp_segment_encode(&s, &re, &err) && hexdiff(re.data, re.len, out.data, out.len),
			   "segment: re-encode keeps the block split");
		ssp_buf_free(&re);
	}
	ssp_segment_free(&s);

	/* structural errors */
	{
		uint8_t    *t = malloc(out.len + 1);
		size_t      hdr = 4 + 2 + 2 + 5 + 4 + 2 + (4 + 2 + 2) + (4 + 1 + 2);

		memcpy(t, out.data, out.len);
		t[out.len] = 0;
		tap_ok(!ssp_segment_decode(t, out.len + 1, NULL, &err), "segment: trailing byte rejected");
		t[hdr - 1] = 3;         /* column flags: reserved bit */
		tap_ok(!ssp_segment_decode(t, out.len, NULL, &err), "segment: reserved column flag bit rejected");
		t[hdr - 1] = 1;
		t[hdr - 2] = 9;         /* type tag 9 */
		tap_ok(!ssp_segment_decode(t, out.len, NULL, &err), "segment: unknown type tag rejected");
		t[hdr - 2] = 6;
		t[hdr + 4] ^= 1;        /* block byteLength off by one */
		tap_ok(!ssp_segment_decode(t, out.len, NULL, &err), "segment: block length mismatch rejected");
		t[hdr + 4] ^= 1;
		memset(t + hdr + 8, 0, 8);  /* first serverVersion 0 */
		tap_ok(!ssp_segment_decode(t, out.len, NULL, &err), "segment: serverVersion 0 rejected");
		tap_ok(!ssp_segment_decode(t, 3, NULL, &err), "segment: truncated magic rejected");
		free(t);
	}
	tap_ok(!ssp_segment_add_row(&w, 0, NULL, 0, &err), "segment writer: serverVersion 0 refused");
	ssp_buf_free(&out);
	free(big);
}

/* ------------------------------------------------------------------ */
/* Remote operation value encoding (REMOTE.md §4, ops.h)                */
/* ------------------------------------------------------------------ */

static bool
op_roundtrip(const char *in, const char *want)
{
	SspArena   *a = ssp_arena_new();
	SspOpValue *v = NULL;
	SspError	err;
	SspBuf		out;
	bool		ok;

	ssp_buf_init(&out);
	ok = ssp_op_decode(a, in, strlen(in), &v, &err) && ssp_op_encode(&out, v, &err) &&
		out.len == strlen(want) && memcmp(out.data, want, out.len) == 0;
	if (!ok)
		printf("# in %s out %.*s\n", in, (int) out.len, out.data ? (char *) out.data : "");
	ssp_buf_free(&out);
	ssp_arena_free(a);
	return ok;
}

static bool
op_refused(const char *in)
{
	SspArena   *a = ssp_arena_new();
	SspOpValue *v = NULL;
	SspError	err = {0};
	bool		ok;

	ok = !ssp_op_decode(a, in, strlen(in), &v, &err) && err.code != NULL &&
		strcmp(err.code, OPS_ERR_INVALID_REQUEST) == 0;
	ssp_arena_free(a);
	return ok;
}

static void
test_opvalue(void)
{
	static const char *const same[] = {
		"{\"t\":\"null\"}",
		"{\"t\":\"boolean\",\"v\":true}",
		"{\"t\":\"boolean\",\"v\":false}",
		"{\"t\":\"number\",\"v\":1.5}",
		"{\"t\":\"number\",\"v\":-0.000123}",
		"{\"t\":\"string\",\"v\":\"x\\n\\u0000\xc3\xa9\"}",
		"{\"t\":\"integer\",\"v\":\"42\"}",
		"{\"t\":\"integer\",\"v\":\"0\"}",
		"{\"t\":\"integer\",\"v\":\"9223372036854775807\"}",
		"{\"t\":\"integer\",\"v\":\"-9223372036854775808\"}",
		"{\"t\":\"bytes\",\"v\":\"AAE=\"}",
		"{\"t\":\"bytes\",\"v\":\"\"}",
		"{\"t\":\"bytes\",\"v\":\"/+8A\"}",
		"{\"t\":\"bytes\",\"v\":\"AA==\"}",
		"{\"t\":\"array\",\"v\":[]}",
		"{\"t\":\"object\",\"v\":[]}",
		"{\"t\":\"array\",\"v\":[{\"t\":\"null\"},{\"t\":\"array\",\"v\":[{\"t\":\"integer\",\"v\":\"-1\"}]}]}",
		"{\"t\":\"object\",\"v\":[[\"t\",{\"t\":\"string\",\"v\":\"v\"}],[\"\",{\"t\":\"object\",\"v\":[]}]]}",
	};
	static const char *const refused[] = {
		"", "null", "[]", "{}", "{\"v\":1}", "{\"t\":1}", "{\"t\":\"nul\"}",
		"{\"t\":\"null\",\"v\":null}",
		"{\"t\":\"boolean\",\"v\":1}", "{\"t\":\"boolean\"}",
		"{\"t\":\"boolean\",\"v\":true,\"x\":1}",
		"{\"t\":\"boolean\",\"v\":true,\"t\":\"boolean\"}",
		"{\"t\":\"number\",\"v\":\"1\"}", "{\"t\":\"number\",\"v\":1e400}", "{\"t\":\"number\",\"v\":-1e309}",
		"{\"t\":\"string\",\"v\":1}", "{\"t\":\"string\",\"v\":\"\\ud800\"}",
		"{\"t\":\"integer\",\"v\":42}", "{\"t\":\"integer\",\"v\":\"042\"}", "{\"t\":\"integer\",\"v\":\"-0\"}",
		"{\"t\":\"integer\",\"v\":\"+1\"}", "{\"t\":\"integer\",\"v\":\"\"}", "{\"t\":\"integer\",\"v\":\"-\"}",
		"{\"t\":\"integer\",\"v\":\"1.0\"}", "{\"t\":\"integer\",\"v\":\" 1\"}",
		"{\"t\":\"integer\",\"v\":\"9223372036854775808\"}",
		"{\"t\":\"integer\",\"v\":\"-9223372036854775809\"}",
		"{\"t\":\"integer\",\"v\":\"18446744073709551616\"}",
		"{\"t\":\"bytes\",\"v\":\"AAE\"}", "{\"t\":\"bytes\",\"v\":\"AAF=\"}", "{\"t\":\"bytes\",\"v\":\"AB==\"}",
		"{\"t\":\"bytes\",\"v\":\"A===\"}", "{\"t\":\"bytes\",\"v\":\"AA=A\"}", "{\"t\":\"bytes\",\"v\":\"AA-_\"}",
		"{\"t\":\"bytes\",\"v\":\"=AAA\"}", "{\"t\":\"bytes\",\"v\":\"AAAA\\n\"}",
		"{\"t\":\"array\",\"v\":{}}", "{\"t\":\"array\",\"v\":[1]}", "{\"t\":\"array\",\"v\":[{\"t\":\"null\"},{}]}",
		"{\"t\":\"object\",\"v\":{}}", "{\"t\":\"object\",\"v\":[[\"a\"]]}",
		"{\"t\":\"object\",\"v\":[[\"a\",{\"t\":\"null\"},1]]}",
		"{\"t\":\"object\",\"v\":[[1,{\"t\":\"null\"}]]}",
		"{\"t\":\"object\",\"v\":[[\"a\",{\"t\":\"null\"}],[\"a\",{\"t\":\"null\"}]]}",
		"{\"t\":\"object\",\"v\":[[\"a\",1]]}",
	};
	int			nsame = (int) (sizeof(same) / sizeof(same[0]));
	int			nref = (int) (sizeof(refused) / sizeof(refused[0]));
	int			good = 0;
	SspArena   *a = ssp_arena_new();
	SspOpValue *v = NULL;
	SspError	err;
	int64_t		i64;

	for (int i = 0; i < nsame; i++)
		tap_ok(op_roundtrip(same[i], same[i]), "ops: canonical value %d round-trips", i);
	tap_ok(op_roundtrip(" { \"v\" : true , \"t\" : \"boolean\" } ", "{\"t\":\"boolean\",\"v\":true}"),
		   "ops: member order and whitespace are not significant");
	for (int i = 0; i < nref; i++)
	{
		bool		r = op_refused(refused[i]);

		good += r;
		if (!r)
			printf("# accepted: %s\n", refused[i]);
	}
	tap_ok(good == nref, "ops: %d malformed values refused with operation.invalid_request", nref);

	tap_ok(ssp_op_decode(a, "{\"t\":\"object\",\"v\":[[\"k\",{\"t\":\"integer\",\"v\":\"-9223372036854775808\"}]]}",
						 strlen("{\"t\":\"object\",\"v\":[[\"k\",{\"t\":\"integer\",\"v\":\"-9223372036854775808\"}]]}"), &v, &err) && ssp_op_member(v, "k") != NULL &&
		   ssp_op_member(v, "k")->i == INT64_MIN && ssp_op_member(v, "x") == NULL,
		   "ops: member lookup, int64 minimum exact");
	tap_ok(ssp_op_decode(a, "{\"t\":\"bytes\",\"v\":\"/+8A\"}", 24, &v, &err) && v->bytes.len == 3 &&
		   v->bytes.ptr[0] == 0xff && v->bytes.ptr[1] == 0xef && v->bytes.ptr[2] == 0,
		   "ops: bytes decode exactly");
	tap_ok(!ssp_op_decode(a, "{\"t\":\"null\"", 11, &v, &err) && strcmp(err.code, OPS_ERR_INVALID_REQUEST) == 0,
		   "ops: bad JSON is operation.invalid_request");
	tap_ok(ssp_op_decode(a, "{\"t\":\"array\",\"v\":[{\"t\":\"bytes\",\"v\":\"AAF=\"}]}", 44, &v, &err) == false &&
		   strstr(err.message, "value[0]") != NULL, "ops: the message names the path (%s)", err.message);
	tap_ok(ssp_int64_parse_canonical("123", 3, &i64) && i64 == 123 &&
		   !ssp_int64_parse_canonical("99999999999999999999", 20, &i64),
		   "ops: int64 parser bounds");
	{
		/* deep nesting is bounded by the JSON reader, never the C stack */
		size_t		depth = 2000, n = 0;
		char	   *deep = malloc(depth * 40 + 64);

		for (size_t i = 0; i < depth; i++)
			n += (size_t) sprintf(deep + n, "{\"t\":\"array\",\"v\":[");
		n += (size_t) sprintf(deep + n, "{\"t\":\"null\"}");
		for (size_t i = 0; i < depth; i++)
			n += (size_t) sprintf(deep + n, "]}");
		tap_ok(!ssp_op_decode(a, deep, n, &v, &err), "ops: nesting deeper than the JSON limit refused");
		free(deep);
	}
	{
		SspOpValue	inf = {.kind = SSP_OP_NUMBER, .num = INFINITY};
		SspBuf		out;

		ssp_buf_init(&out);
		tap_ok(!ssp_op_encode(&out, &inf, &err), "ops: encoder refuses a non-finite number");
		ssp_buf_free(&out);
	}
	ssp_arena_free(a);
}

int
main(void)
{
	test_utf16();
	test_utf8();
	test_json();
	test_i64();
	test_sparse();
	test_rows();
	test_framing();
	test_huge_counts();
	test_roundtrips();
	test_segment_ref_rows();
	test_writer_refusals();
	test_commit_writer();
	test_grammar();
	test_segments();
	test_opvalue();
	return tap_done();
}
