/*
 * fuzz_decode.c — libFuzzer target for the pure-C codec (src/codec).
 *
 * Every input is treated as hostile client bytes: decode it as an SSP2 message and as an SSG2
 * segment.  Properties checked: no crash or sanitizer report; a message that decodes
 * re-encodes to exactly the input bytes (canonical encoding, unknown frames kept) and renders;
 * a segment that decodes re-encodes byte for byte.
 *
 * Build and run (not part of CI):  make -C test/fuzz run SECONDS=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ssp.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SspMessage	msg;
	SspSegment	seg;
	SspError	err;
	SspBuf		out;

	memset(&msg, 0, sizeof(msg));
	if (ssp_decode_message(data, size, &msg, &err))
	{
		ssp_buf_init(&out);
		if (!ssp_encode_message(&msg, &out, &err) || out.len != size ||
			memcmp(out.data, data, size) != 0)
			abort();			/* decoded but not canonical: codec bug */
		ssp_buf_reset(&out);
		if (!ssp_render_message(&msg, &out, &err))
			abort();
		ssp_buf_free(&out);
		ssp_message_free(&msg);
	}

	memset(&seg, 0, sizeof(seg));
	if (ssp_segment_decode(data, size, &seg, &err))
	{
		ssp_buf_init(&out);
		if (!ssp_segment_encode(&seg, &out, &err) || out.len != size ||
			memcmp(out.data, data, size) != 0)
			abort();
		ssp_buf_reset(&out);
		if (!ssp_render_segment(&seg, &out, &err))
			abort();
		ssp_buf_free(&out);
		ssp_segment_free(&seg);
	}
	return 0;
}
