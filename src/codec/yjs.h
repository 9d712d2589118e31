/*
 * yjs.h — pure-C decoder and merger for Yjs update format v1 (SPEC §5.10.2, the built-in
 * `yjs-doc` merger).  No PostgreSQL dependency: allocation goes through ssp_malloc (ssp.h),
 * so the extension's hooks apply and the fuzz harness links it with plain malloc.
 *
 * An update is: the struct section (clients × runs of structs: GC, Skip, or Item with its
 * origin / rightOrigin / parent / parentSub and one content of type deleted, JSON, binary,
 * string, embed, format, type, any or doc) followed by the delete set (clients × clock ranges).
 * The empty byte string stands for the empty update.
 *
 * yjs_merge(a, b) returns one update whose application equals applying a and b (in either
 * order): the structs of both are unioned per client in clock order, a range covered twice is
 * written once (a partially covered struct is sliced at the covered clock), gaps become Skip
 * structs, and the delete sets are unioned with overlapping or adjacent ranges joined.  The
 * output is canonical (clients in descending order, a total order on ties), so the merge is
 * commutative, associative and idempotent on bytes, not only on the document state.
 *
 * Hostile input is bounded: every count is checked against the bytes left, the number of
 * structs and delete ranges against YJS_MAX_ENTRIES, `any` values nest at most
 * YJS_MAX_DEPTH deep, JSON at most SSP_JSON_MAX_DEPTH; strings must be valid UTF-8 and JSON
 * contents valid JSON; clocks stay below 2^53.  A malformed update fails with a message.
 */
#ifndef SYNCULAR_YJS_H
#define SYNCULAR_YJS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ssp.h"

#define YJS_MAX_ENTRIES (1u << 20)		/* structs, resp. delete ranges, over both inputs */
#define YJS_MAX_DEPTH   64				/* nesting of `any` arrays and objects */

/* Counts of one decoded update (for tests and the validator). */
typedef struct YjsStats
{
	uint32_t	clients;		/* client runs in the struct section */
	uint32_t	structs;		/* structs (Skip included) */
	uint32_t	delete_clients;
	uint32_t	delete_ranges;
} YjsStats;

/* Decode `u` fully; false + err (code sync.crdt_merge_failed) when it is not a v1 update. */
bool		yjs_validate(const uint8_t *u, size_t len, YjsStats *stats, SspError *err);

/*
 * Merge two updates (either may be NULL / empty = the empty update) into out (appended).
 * false + err when either is malformed or on OOM (out is then left partially written).
 */
bool		yjs_merge(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
					  SspBuf *out, SspError *err);

#define YJS_ERR_MERGE "sync.crdt_merge_failed"

#endif							/* SYNCULAR_YJS_H */
