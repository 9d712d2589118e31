/*
 * b64url.c — base64url without padding (RFC 4648 §5), over PostgreSQL's base64: the signed
 * segment and blob URL tokens (SPEC §5.4) and the commit NOTIFY payload (SPEC §8.2).
 */
#include "postgres.h"

#include "common/base64.h"

#include "engine.h"

char *
sync_b64url_encode(const uint8 *data, int len)
{
	int			cap = pg_b64_enc_len(len) + 1;
	char	   *out = palloc(cap);
	int			n = pg_b64_encode((const char *) data, len, out, cap);
	int			k = 0;

	if (n < 0)
		elog(ERROR, "syncular: base64 encoding failed");
	for (int i = 0; i < n; i++)
	{
		char		c = out[i];

		if (c == '=')
			break;
		out[k++] = c == '+' ? '-' : c == '/' ? '_' : c;
	}
	out[k] = '\0';
	return out;
}

uint8 *
sync_b64url_decode(const char *s, int len, int *outlen)
{
	int			padded = len + (4 - len % 4) % 4;
	char	   *buf = palloc(padded + 1);
	uint8	   *out;
	int			n;

	for (int i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (c == '+' || c == '/' || c == '=')
			return NULL;
		buf[i] = c;
	}
	for (int i = len; i < padded; i++)
		buf[i] = '=';
	out = palloc(pg_b64_dec_len(padded) + 1);
	n = pg_b64_decode(buf, padded, (char *) out, pg_b64_dec_len(padded) + 1);
	if (n < 0)
		return NULL;

	/*
	 * Only the canonical encoding: the last character of a group that is cut short carries 2 or
	 * 4 bits no byte uses, and the decoder ignores them, so without this check several strings
	 * decode to the same bytes — a signed URL token with a "changed" last character would still
	 * verify (§5.4 wants a tampered token refused).  Re-encoding is the exact test.
	 */
	{
		char	   *again = sync_b64url_encode(out, n);
		bool		same = (int) strlen(again) == len && memcmp(again, s, len) == 0;

		pfree(again);
		if (!same)
			return NULL;
	}
	*outlen = n;
	return out;
}
