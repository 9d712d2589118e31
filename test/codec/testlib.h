/*
 * testlib.h — tiny TAP helpers, the NOTES test table and a JSON deep-equality
 * check shared by the codec test programs (header-only; each test is one
 * translation unit).
 */
#ifndef SSP_TESTLIB_H
#define SSP_TESTLIB_H

#include "../../src/codec/ssp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n = 0;
static int tap_failed = 0;

static void
tap_ok(int ok, const char *fmt, ...)
{
	va_list     ap;

	tap_n++;
	if (!ok)
		tap_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void
tap_diag(const char *fmt, ...)
{
	va_list     ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* The NOTES test table of the golden vectors (WF §4.1), plus doc (crdt?)
 * for the wire-3 push vectors: one definition for the unit checks and the
 * vector runner, so both test the same table. */
static const SspColumn notes_cols[] = {
	{"id", SSP_COL_STRING, false, 0},
	{"title", SSP_COL_STRING, true, 0},
	{"body", SSP_COL_STRING, false, 0},
	{"count", SSP_COL_INTEGER, true, 0},
	{"score", SSP_COL_FLOAT, false, 0},
	{"done", SSP_COL_BOOLEAN, false, 0},
	{"meta", SSP_COL_JSON, true, 0},
	{"blob", SSP_COL_BYTES, true, 0},
	{"doc", SSP_COL_CRDT, true, 0},
};

/* Deep equality: objects compared as key sets (order independent),
 * arrays in order, numbers by value, strings by decoded bytes.  With
 * duplicate keys, the last one wins (JSON.parse semantics). */
static const SspJson *
json_get(const SspJson *o, const SspStr *k)
{
	for (uint32_t i = o->count; i-- > 0;)
		if (o->keys[i].len == k->len && memcmp(o->keys[i].ptr, k->ptr, k->len) == 0)
			return &o->items[i];
	return NULL;
}

static int
json_unique_keys(const SspJson *o)
{
	int         n = 0;

	for (uint32_t i = 0; i < o->count; i++)
	{
		int         dup = 0;

		for (uint32_t j = 0; j < i && !dup; j++)
			dup = o->keys[j].len == o->keys[i].len &&
				memcmp(o->keys[j].ptr, o->keys[i].ptr, o->keys[i].len) == 0;
		n += !dup;
	}
	return n;
}

static int
json_equal(const SspJson *a, const SspJson *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (a->kind)
	{
		case SSP_JSON_NUMBER:
			return a->num == b->num;
		case SSP_JSON_STRING:
			return a->text.len == b->text.len &&
				memcmp(a->text.ptr, b->text.ptr, a->text.len) == 0;
		case SSP_JSON_ARRAY:
			if (a->count != b->count)
				return 0;
			for (uint32_t i = 0; i < a->count; i++)
				if (!json_equal(&a->items[i], &b->items[i]))
					return 0;
			return 1;
		case SSP_JSON_OBJECT:
			if (json_unique_keys(a) != json_unique_keys(b))
				return 0;
			for (uint32_t i = 0; i < a->count; i++)
			{
				const SspJson *x = json_get(a, &a->keys[i]);
				const SspJson *y = json_get(b, &a->keys[i]);

				if (y == NULL || !json_equal(x, y))
					return 0;
			}
			return 1;
		default:
			return 1;
	}
}

/* Parse both texts and compare; returns 1 if equal. */
static int
json_text_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	SspArena   *ar = ssp_arena_new();
	SspJson    *ja,
			   *jb;
	int         eq = 0;

	if (ssp_json_parse(ar, a, alen, &ja, NULL) && ssp_json_parse(ar, b, blen, &jb, NULL))
		eq = json_equal(ja, jb);
	ssp_arena_free(ar);
	return eq;
}

static int
hexdiff(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t      i;

	for (i = 0; i < alen && i < blen && a[i] == b[i]; i++)
		;
	if (i == alen && i == blen)
		return 1;
	tap_diag("bytes differ at offset %zu (lengths %zu vs %zu)", i, alen, blen);
	return 0;
}

#endif
