/*
 * budget.c — one memory budget for the whole process (--max-inflight-bytes): request bodies
 * being received or buffered (/sync bodies, their inflated copies, blob upload pieces) and the
 * rounds queued for the database that carry them, plus /sync answers waiting to be written.
 * A new body is admitted only when its declared length fits; otherwise the request is answered
 * 503 sync.rate_limited (retryable) before a body byte is read.  Answers from the database are
 * counted (gw_budget_force) but never refused: the round has run.
 */
#include "gateway.h"

#include <stdlib.h>

static size_t used;

bool
gw_budget_take(size_t n)
{
	if (n > gw_cfg.max_inflight_bytes || used > gw_cfg.max_inflight_bytes - n)
		return false;
	used += n;
	return true;
}

void
gw_budget_force(size_t n)
{
	used += n;
}

void
gw_budget_give(size_t n)
{
	used = n > used ? 0 : used - n;
}

size_t
gw_budget_used(void)
{
	return used;
}

/* The declared body of a request (Content-Length: the framing checks made it one number) against
 * --max-body and the budget, before a body byte is read: 0 admitted (*held = the bytes taken from
 * the budget, 0 without a body), 413 over --max-body, 503 when it does not fit the budget. */
int
gw_budget_admit_body(const char *clen, size_t *held)
{
	unsigned long long n;

	*held = 0;
	if (!clen || !*clen)
		return 0;
	n = strtoull(clen, NULL, 10);
	if (n > gw_cfg.max_body)
		return 413;
	if (n > 0)
	{
		if (!gw_budget_take((size_t) n))
			return 503;
		*held = (size_t) n;
	}
	return 0;
}
