/*
 * fuzz_yjs.c — libFuzzer target for the yjs-doc merger (src/codec/yjs.c, SPEC §5.10.2).
 *
 * The input is hostile: its first byte picks where to split the rest into two updates a and b.
 * Properties checked: no crash, sanitizer report or leak; when merge(a, b) succeeds, the result
 * decodes, merge(b, a) is the same bytes (commutative), merge(m, m) = m and merge(m, a) = m
 * (idempotent: m already holds a); when it fails, merge(b, a) fails too.
 *
 * Build and run (not part of CI):  make -C test/fuzz run-yjs SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yjs.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
same(const SspBuf *x, const SspBuf *y)
{
	return x->len == y->len && (x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SspBuf		ab,
				ba,
				mm,
				ma;
	SspError	err;
	const uint8_t *a,
			   *b;
	size_t		alen,
				blen;
	bool		ok;

	if (size == 0)
		return 0;
	alen = data[0] % size;		/* 0 .. size-1 bytes of the rest */
	a = data + 1;
	b = a + alen;
	blen = size - 1 - alen;

	ssp_buf_init(&ab);
	ssp_buf_init(&ba);
	ok = yjs_merge(a, alen, b, blen, &ab, &err);
	if (ok != yjs_merge(b, blen, a, alen, &ba, &err))
		abort();				/* failure must not depend on the order */
	if (ok)
	{
		if (!same(&ab, &ba) || !yjs_validate(ab.data, ab.len, NULL, &err))
			abort();
		ssp_buf_init(&mm);
		ssp_buf_init(&ma);
		if (!yjs_merge(ab.data, ab.len, ab.data, ab.len, &mm, &err) || !same(&mm, &ab) ||
			!yjs_merge(ab.data, ab.len, a, alen, &ma, &err) || !same(&ma, &ab))
			abort();
		ssp_buf_free(&mm);
		ssp_buf_free(&ma);
	}
	ssp_buf_free(&ab);
	ssp_buf_free(&ba);
	return 0;
}
