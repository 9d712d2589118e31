/*
 * classify.c — what a request will cost, read off its bytes without decoding it whole, for a
 * front end that schedules rounds (syncular-gateway's pool lanes, docs/gateway.md "Bootstrap
 * rounds").  Not a validator: the server decodes and checks every request itself (wire.c).
 */
#include "ssp_internal.h"

#include <string.h>

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

/*
 * One SUBSCRIPTION payload (wire-format.md §4.3: id, table, scopes, params, cursor,
 * bootstrapState; the same layout in wire 1-3): true when it asks for a bootstrap, a cursor of
 * -1 (never synced) or a bootstrapState (a bootstrap in progress, SPEC §4.7).
 */
static bool
subscription_bootstraps(const uint8_t *p, size_t len)
{
	SspReader	r;
	SspStr		s;
	uint32_t	nkeys;
	bool		present;
	int64_t		cursor;

	ssp_rd_init(&r, p, len, 0, "SUBSCRIPTION", NULL);
	if (!ssp_rd_str(&r, &s, NULL) || !ssp_rd_str(&r, &s, NULL) ||
		!ssp_rd_count(&r, &nkeys, 8, NULL))
		return false;
	for (uint32_t i = 0; i < nkeys; i++)
	{
		uint32_t	nvalues;

		if (!ssp_rd_str(&r, &s, NULL) || !ssp_rd_count(&r, &nvalues, 4, NULL))
			return false;
		for (uint32_t j = 0; j < nvalues; j++)
			if (!ssp_rd_str(&r, &s, NULL))
				return false;
	}
	if (!ssp_rd_opt(&r, &present, NULL) || (present && !ssp_rd_str(&r, &s, NULL)))
		return false;
	if (!ssp_rd_i64(&r, &cursor, NULL) || !ssp_rd_opt(&r, &present, NULL))
		return false;
	return cursor < 0 || present;
}

/* walks a request's frame headers (wire-format.md §3): true at the first frame of the type for
 * which want(payload) holds (want NULL: any frame of the type) */
static bool
request_has(const uint8_t *data, size_t len, uint8_t want_type,
			bool (*want) (const uint8_t *p, size_t len))
{
	size_t		pos = 8;

	if (len < 8 || memcmp(data, "SSP2", 4) != 0 || data[6] != SSP_KIND_REQUEST)
		return false;
	while (len - pos >= 5)
	{
		uint8_t		type = data[pos];
		uint32_t	flen = le32(data + pos + 1);

		if (type == SSP_FRAME_END || flen > len - pos - 5)
			return false;
		if (type == want_type && (!want || want(data + pos + 5, flen)))
			return true;
		pos += 5 + (size_t) flen;
	}
	return false;
}

bool
ssp_request_bootstraps(const uint8_t *data, size_t len)
{
	return request_has(data, len, SSP_FRAME_SUBSCRIPTION, subscription_bootstraps);
}

bool
ssp_request_pushes(const uint8_t *data, size_t len)
{
	return request_has(data, len, SSP_FRAME_PUSH_COMMIT, NULL);
}
