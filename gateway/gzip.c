/*
 * gzip.c — Content-Encoding: gzip request bodies (SPEC §1.3: servers MUST accept them).
 * Inflation is bounded by the body limit so a small bomb cannot grow memory.  Answers are
 * compressed by compress.c.
 */
#include "gateway.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int
gw_gunzip(const uint8_t *in, size_t inlen, size_t limit, uint8_t **out, size_t *outlen)
{
	z_stream    z;
	size_t      cap = inlen * 4 < 4096 ? 4096 : inlen * 4;
	uint8_t    *buf;
	int         rc;

	if (cap > limit + 1)
		cap = limit + 1;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)   /* gzip wrapper only */
		return -3;
	if (!(buf = malloc(cap)))
	{
		inflateEnd(&z);
		return -3;
	}
	z.next_in = (Bytef *) in;
	z.avail_in = (uInt) inlen;
	for (;;)
	{
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt) (cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			goto bad;
		if (z.avail_out == 0)
		{
			uint8_t *nb;

			if (cap > limit)
			{
				free(buf);
				inflateEnd(&z);
				return -2;
			}
			cap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
			if (!(nb = realloc(buf, cap)))
			{
				free(buf);
				inflateEnd(&z);
				return -3;
			}
			buf = nb;
		}
		else if (rc == Z_BUF_ERROR || z.avail_in == 0)
			goto bad;           /* truncated stream */
	}
	/* trailing bytes after the gzip member are not a valid body */
	if (z.avail_in != 0 || z.total_out > limit)
	{
		rc = z.total_out > limit ? -2 : -1;
		free(buf);
		inflateEnd(&z);
		return rc;
	}
	*out = buf;
	*outlen = z.total_out;
	inflateEnd(&z);
	return 0;
bad:
	free(buf);
	inflateEnd(&z);
	return -1;
}
