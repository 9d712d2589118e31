/*
 * libFuzzer harness for the gateway's own parsing (gateway/parse.c): the first input byte picks
 * the parser, the rest is its input.  Run: make -C gateway/fuzz run SECONDS=60
 */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

static char *
cstr(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);

	memcpy(s, d, n);
	s[n] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	s = cstr(data + 1, size - 1);
	switch (data[0] % 5)
	{
		case 0:
			(void) gw_content_type_ok(s);
			(void) gw_content_encoding(s);
			break;
		case 1:
			(void) gw_accepts_gzip(s);
			(void) gw_refuses_identity(s);
			break;
		case 2:
			(void) gw_route(s, "/sync-api");
			(void) gw_route(s, "");
			break;
		case 3:
		{
			GwControl c;

			gw_control_parse((const char *) data + 1, size - 1, &c);
			gw_control_free(&c);
			break;
		}
		case 4:
		{
			/* feed the round stream in two pieces, as chunks arrive */
			GwRoundScan sc;
			size_t half = (size - 1) / 2;

			memset(&sc, 0, sizeof(sc));
			if (gw_round_scan(&sc, data + 1, half, 65536) == GW_SCAN_MORE)
				(void) gw_round_scan(&sc, data + 1, size - 1, 65536);
			break;
		}
	}
	free(s);
	return 0;
}
