/*
 * yjs.c — unit checks of the yjs-doc merger (src/codec/yjs.c, SPEC §5.10.2), standalone and
 * under valgrind: hand-built Yjs v1 updates (the same as sql/crdt_merge.sql), malformed input,
 * and allocation failure at every allocation of a merge (no leak, a clean error).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/codec/yjs.h"

static int	tap_n = 0;
static int	tap_failed = 0;

static void
tap_ok(int ok, const char *fmt, ...)
{
	va_list		ap;

	tap_n++;
	tap_failed += !ok;
	printf("%s %d - ", ok ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static size_t
unhex(const char *h, uint8_t *out)
{
	size_t		n = 0;

	for (; h[0] && h[1]; h += 2)
	{
		unsigned int v;

		if (h[0] == ' ')
		{
			h--;
			continue;
		}
		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t) v;
	}
	return n;
}

static void
tohex(const SspBuf *b, char *out)
{
	for (size_t i = 0; i < b->len; i++)
		sprintf(out + 2 * i, "%02x", b->data[i]);
	out[2 * b->len] = '\0';
}

/* merge(a, b) as hex, or the error message prefixed by "error: " */
static const char *
merge_hex(const char *a, const char *b)
{
	static char out[4096];
	uint8_t		ab[1024],
				bb[1024];
	size_t		al = unhex(a, ab),
				bl = unhex(b, bb);
	SspBuf		buf;
	SspError	err;

	ssp_buf_init(&buf);
	if (yjs_merge(ab, al, bb, bl, &buf, &err))
		tohex(&buf, out);
	else
		snprintf(out, sizeof(out), "error: %s", err.message);
	ssp_buf_free(&buf);
	return out;
}

static void
expect(const char *what, const char *a, const char *b, const char *want)
{
	const char *got = merge_hex(a, b);

	tap_ok(strcmp(got, want) == 0, "%s", what);
	if (strcmp(got, want) != 0)
		printf("# got %s, want %s\n", got, want);
}

/* an allocator that fails after `budget` allocations */
static long budget;
static void *
fail_malloc(size_t n)
{
	return budget-- > 0 ? malloc(n) : NULL;
}
static void *
fail_realloc(void *p, size_t n)
{
	return budget-- > 0 ? realloc(p, n) : NULL;
}

#define A "01010100040101740361626300"	/* "abc" at 1:0 */
#define B "0101010384010202646500"		/* "de" at 1:3 after 1:2 */
#define D "01010102840101046364656600"	/* "cdef" at 1:2 after 1:1 */
#define E "01010105840104017800"			/* "x" at 1:5 after 1:4 */

int
main(void)
{
	SspError	err;
	int			oom_ok = 1;

	expect("consecutive runs", A, B, "01020100040101740361626384010202646500");
	expect("consecutive runs, other order", B, A, "01020100040101740361626384010202646500");
	expect("partly covered struct sliced", D, A, "0102010004010174036162638401020364656600");
	expect("gap kept as Skip", A, E, "0103010004010174036162630a02840104017800");
	expect("empty and empty", "", "", "0000");
	/* a libFuzzer finding: GC ranges cut differently in the inputs are one GC in the output, so
	 * merging the result with an input gives the result again (idempotent) */
	expect("adjacent and overlapping GCs are one GC", "020100080062010000001000",
		   "0201002e04010000010001004100", "01010000006a00");
	expect("a GC run cut in three, merged with a GC run cut in two", "0103000000100032002800",
		   "020100080062010000001000", "01010000006a00");
	expect("delete sets joined", "000101010001", "000201020101000102010502", "00020201050201010002");
	expect("surrogate pair split", "01010100000200", "0101010184010005f09f98807800",
		   "01020100000284010104efbfbd7800");
	expect("truncated", "01010100040101740361", "",
		   "error: malformed Yjs update: length exceeds the bytes left at byte 9");
	expect("trailing bytes", "", "000000",
		   "error: malformed Yjs update: trailing bytes after the delete set at byte 2");
	tap_ok(yjs_validate((const uint8_t *) "\x00\x00", 2, NULL, &err), "validate: empty state");

	/* every allocation of a merge may fail: a clean error, nothing leaked (valgrind) */
	for (long n = 0; n < 64; n++)
	{
		uint8_t		a[64],
					d[64];
		size_t		al = unhex(A, a),
					dl = unhex(D, d);
		SspBuf		buf;
		bool		ok;

		budget = n;
		ssp_set_allocator(fail_malloc, fail_realloc, free);
		ssp_buf_init(&buf);
		ok = yjs_merge(a, al, d, dl, &buf, &err);
		ssp_set_allocator(NULL, NULL, NULL);
		if (!ok && strcmp(err.code, SSP_ERR_INTERNAL) != 0)
			oom_ok = 0;
		ssp_buf_free(&buf);
		if (ok)
			break;
	}
	tap_ok(oom_ok, "allocation failure: sync.internal_error, no leak");
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
