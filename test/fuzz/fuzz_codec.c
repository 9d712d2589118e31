/*
 * fuzz_codec.c — libFuzzer targets for every decoder entry point of the pure-C codec
 * (src/codec), one binary per target (built with -DFUZZ_TARGET=...):
 *
 *   message   ssp_decode_message: SSP2 requests and responses (WF §2, §3), and
 *             ssp_request_bootstraps and ssp_request_pushes (they must agree with what a decoded
 *             request asks and holds); a message
 *             that decodes re-encodes to exactly the input bytes (canonical encoding, unknown frames
 *             kept) and renders (SPEC §11)
 *   segment   ssp_segment_decode: SSG2 rows segments (WF §4.8); re-encodes byte for byte, renders
 *   row_full  ssp_row_decode_full against a column table taken from the input (WF §4.2)
 *   row_sparse ssp_row_decode_sparse, same column table plus a primary-key index (WF §4.3)
 *   ops       the remote operation value encoding (REMOTE.md §4): decode, canonical re-encode
 *   json      the JSON reader (ssp_json_valid / ssp_json_parse, WF §1 `json`) and the
 *             PUSH_RESULT_DETAILS check / normalizer (WF §3.4)
 *
 * Row targets read a column table first: byte 0 gives the column count (1 + b % 12), one byte
 * per column its type tag (1 + (t & 7)) and nullability (bit 7), then (sparse only) one byte for
 * the primary-key index (modulo the count); the rest is the row.  Seeds: test/fuzz/corpus/<target>,
 * made from the golden vectors by mkseeds.c.
 *
 * Every input is hostile: no crash, sanitizer report or leak is allowed; abort() marks a codec
 * property violation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssp.h"
#include "ops.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_COLS 12

static const char *const col_names[MAX_COLS] = {
	"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11"
};

/* The column table at the head of a row input; returns the bytes consumed, 0 if too short. */
static size_t
read_columns(const uint8_t *data, size_t size, bool sparse, SspColumn *cols, uint32_t *ncols,
			 uint32_t *pk)
{
	size_t		need;

	if (size < 1)
		return 0;
	*ncols = 1 + data[0] % MAX_COLS;
	need = 1 + *ncols + (sparse ? 1 : 0);
	if (size < need)
		return 0;
	for (uint32_t i = 0; i < *ncols; i++)
	{
		cols[i].name = col_names[i];
		cols[i].name_len = (uint32_t) strlen(col_names[i]);
		cols[i].type = (uint8_t) (1 + (data[1 + i] & 7));
		cols[i].nullable = (data[1 + i] & 0x80) != 0;
	}
	*pk = sparse ? data[1 + *ncols] % *ncols : 0;
	return need;
}

static void
check_roundtrip(const uint8_t *in, size_t inlen, const SspBuf *out)
{
	if (out->len != inlen || (inlen > 0 && memcmp(out->data, in, inlen) != 0))
		abort();				/* decoded but not canonical: codec bug */
}

static void
fuzz_message(const uint8_t *data, size_t size)
{
	SspMessage	msg;
	SspError	err;
	SspBuf		out;
	bool		boots = ssp_request_bootstraps(data, size);	/* any bytes: read safely */
	bool		pushes = ssp_request_pushes(data, size);
	bool		asks = false,
				holds = false;

	memset(&msg, 0, sizeof(msg));
	if (!ssp_decode_message(data, size, &msg, &err))
		return;
	/* a message that decodes: the classifier reads what the decoder read */
	for (uint32_t i = 0; i < msg.nframes && msg.kind == SSP_KIND_REQUEST; i++)
	{
		asks |= msg.frames[i].type == SSP_FRAME_SUBSCRIPTION &&
			(msg.frames[i].subscription.cursor < 0 || msg.frames[i].subscription.has_bootstrap_state);
		holds |= msg.frames[i].type == SSP_FRAME_PUSH_COMMIT;
	}
	if (boots != asks || pushes != holds)
		abort();
	ssp_buf_init(&out);
	if (!ssp_encode_message(&msg, &out, &err))
		abort();
	check_roundtrip(data, size, &out);
	ssp_buf_reset(&out);
	if (!ssp_render_message(&msg, &out, &err))
		abort();
	ssp_buf_free(&out);
	ssp_message_free(&msg);
}

static void
fuzz_segment(const uint8_t *data, size_t size)
{
	SspSegment	seg;
	SspError	err;
	SspBuf		out;

	memset(&seg, 0, sizeof(seg));
	if (ssp_segment_decode(data, size, NULL, &err) !=
		ssp_segment_decode(data, size, &seg, &err))
		abort();				/* validate-only and full decode disagree */
	if (seg.arena == NULL)
		return;
	ssp_buf_init(&out);
	if (!ssp_segment_encode(&seg, &out, &err))
		abort();
	check_roundtrip(data, size, &out);
	ssp_buf_reset(&out);
	if (!ssp_render_segment(&seg, &out, &err))
		abort();
	ssp_buf_free(&out);
	ssp_segment_free(&seg);
}

static void
fuzz_row(const uint8_t *data, size_t size, bool sparse)
{
	SspColumn	cols[MAX_COLS];
	SspValue	vals[MAX_COLS];
	uint32_t	ncols;
	uint32_t	pk;
	size_t		hdr = read_columns(data, size, sparse, cols, &ncols, &pk);
	SspArena   *arena;
	SspError	err;
	SspBuf		out;
	bool		ok;
	bool		valid;

	if (hdr == 0)
		return;
	data += hdr;
	size -= hdr;
	valid = sparse ? ssp_row_decode_sparse(NULL, cols, ncols, pk, data, size, NULL, &err)
		: ssp_row_decode_full(NULL, cols, ncols, data, size, NULL, &err);
	arena = ssp_arena_new();
	if (arena == NULL)
		abort();
	memset(vals, 0, sizeof(vals));
	ok = sparse ? ssp_row_decode_sparse(arena, cols, ncols, pk, data, size, vals, &err)
		: ssp_row_decode_full(arena, cols, ncols, data, size, vals, &err);
	if (ok != valid)
		abort();				/* validate-only and full decode disagree */
	if (ok)
	{
		ssp_buf_init(&out);
		if (!(sparse ? ssp_row_encode_sparse(cols, ncols, pk, vals, &out, &err)
			  : ssp_row_encode_full(cols, ncols, vals, &out, &err)))
			abort();			/* a decoded row must re-encode */
		check_roundtrip(data, size, &out);
		ssp_buf_reset(&out);
		(void) ssp_render_pk(&cols[pk], &vals[pk], &out, &err);
		ssp_buf_free(&out);
	}
	ssp_arena_free(arena);
}

static void
fuzz_json(const uint8_t *data, size_t size)
{
	const char *s = (const char *) data;
	SspArena   *arena = ssp_arena_new();
	SspJson    *root = NULL;
	SspError	err;
	SspBuf		once;
	SspBuf		twice;
	bool		valid;

	if (arena == NULL)
		abort();
	valid = ssp_json_valid(s, size);
	if (ssp_json_parse(arena, s, size, &root, &err) != valid)
		abort();				/* the checker and the parser disagree */
	ssp_arena_free(arena);

	/* detailsJson: a normalized text is valid and normalizes to itself */
	ssp_buf_init(&once);
	if (ssp_details_json_normalize(s, size, &once, &err))
	{
		if (!ssp_details_json_valid(s, size, &err))
			abort();
		ssp_buf_init(&twice);
		if (!ssp_details_json_normalize((const char *) once.data, once.len, &twice, &err))
			abort();
		check_roundtrip(once.data, once.len, &twice);
		ssp_buf_free(&twice);
	}
	ssp_buf_free(&once);
}

/* The remote operation value decoder (REMOTE.md §4): a value that decodes encodes canonically,
 * and the canonical text decodes again to the same canonical text. */
static void
fuzz_ops(const uint8_t *data, size_t size)
{
	SspArena   *a = ssp_arena_new();
	SspOpValue *v = NULL;
	SspError	err;
	SspBuf		once, twice;

	if (a == NULL)
		return;
	if (!ssp_op_decode(a, (const char *) data, size, &v, &err))
	{
		if (strcmp(err.code, OPS_ERR_INVALID_REQUEST) != 0 && strcmp(err.code, SSP_ERR_INTERNAL) != 0)
			abort();
		ssp_arena_free(a);
		return;
	}
	ssp_buf_init(&once);
	ssp_buf_init(&twice);
	if (!ssp_op_encode(&once, v, &err))
		abort();
	if (!ssp_op_decode(a, (const char *) once.data, once.len, &v, &err) || !ssp_op_encode(&twice, v, &err))
		abort();
	check_roundtrip(once.data, once.len, &twice);
	ssp_buf_free(&once);
	ssp_buf_free(&twice);
	ssp_arena_free(a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(FUZZ_TARGET_message)
	fuzz_message(data, size);
#elif defined(FUZZ_TARGET_segment)
	fuzz_segment(data, size);
#elif defined(FUZZ_TARGET_row_full)
	fuzz_row(data, size, false);
#elif defined(FUZZ_TARGET_row_sparse)
	fuzz_row(data, size, true);
#elif defined(FUZZ_TARGET_json)
	fuzz_json(data, size);
#elif defined(FUZZ_TARGET_ops)
	fuzz_ops(data, size);
#else
#error "define FUZZ_TARGET_<target>"
#endif
	return 0;
}
