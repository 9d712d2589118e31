/*
 * clock.c — milliseconds since the Unix epoch, the unit of every SSP2 timestamp (createdAtMs,
 * recordedAtMs, expiresAtMs, urlExpiresAtMs; SPEC §3), and the ONE place that answers "now" for
 * every timestamp and deadline the engine writes or compares: C calls sync_now_ms(), SQL and
 * plpgsql call syncular.now_ms(), which is this function.
 *
 * The clock seam: syncular.clock_override_ms pins the clock to an absolute instant, and
 * syncular.clock_offset_ms moves the wall clock by a signed amount.  Both are PGC_SUSET (a
 * superuser sets them for a session, a role or a database with ALTER DATABASE ... SET), so an
 * app role cannot move its leases or URLs.  A pinned clock is what an SDK test harness needs to
 * check expiresAtMs = issuedAt + ttl, to make a URL expire or a lease run out; an offset is the
 * incident tool (expire every lease now, age segments out).  Without either it is the wall clock
 * (GetCurrentTimestamp: the real time at the call, like clock_timestamp(), not the transaction
 * start).  A leaf: every file that stamps time calls down to it.
 */
#include "postgres.h"

#include <limits.h>

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "engine.h"

/* SPEC §3: times are safe integers (|t| <= 2^53 - 1) */
#define CLOCK_MAX_MS ((int64) 9007199254740991)

static char *clock_override_text = NULL;
static char *clock_offset_text = NULL;
static bool clock_pinned = false;
static int64 clock_override_ms = 0;
static int64 clock_offset_ms = 0;

/* '' = unset; else a decimal integer within [lo, CLOCK_MAX_MS] */
static bool
parse_ms(const char *s, int64 lo, int64 *out)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > CLOCK_MAX_MS)
		return false;
	*out = (int64) v;
	return true;
}

static bool
check_ms(char **newval, void **extra, GucSource source, int64 lo, const char *what)
{
	int64		v;
	int64	   *x;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!parse_ms(*newval, lo, &v))
	{
		GUC_check_errdetail("%s must be empty or an integer number of milliseconds in %s … 9007199254740991.",
							what, lo < 0 ? "-9007199254740991" : "0");
		return false;
	}
	x = malloc(sizeof(int64));	/* the GUC machinery free()s extra (PostgreSQL 15) */
	if (x == NULL)
		return false;
	*x = v;
	*extra = x;
	return true;
}

static bool
check_override(char **newval, void **extra, GucSource source)
{
	return check_ms(newval, extra, source, 0, "syncular.clock_override_ms");
}

static bool
check_offset(char **newval, void **extra, GucSource source)
{
	return check_ms(newval, extra, source, -CLOCK_MAX_MS, "syncular.clock_offset_ms");
}

static void
assign_override(const char *newval, void *extra)
{
	clock_pinned = extra != NULL;
	clock_override_ms = extra != NULL ? *(int64 *) extra : 0;
}

static void
assign_offset(const char *newval, void *extra)
{
	clock_offset_ms = extra != NULL ? *(int64 *) extra : 0;
}

void
sync_clock_define_gucs(void)
{
	DefineCustomStringVariable("syncular.clock_override_ms",
							   "Pins the engine's clock to this instant (ms since the Unix epoch); empty: the wall clock.",
							   "A testing and incident tool: every timestamp and deadline the engine "
							   "writes or compares (leases, signed URL expiry, segment expiry and pruning, "
							   "commit and client times, prune's default now, reactions) reads this clock. "
							   "Set per session or per database (ALTER DATABASE ... SET).",
							   &clock_override_text,
							   "",
							   PGC_SUSET, 0,
							   check_override, assign_override, NULL);
	DefineCustomStringVariable("syncular.clock_offset_ms",
							   "Moves the engine's wall clock by this many ms (signed); empty or 0: none.",
							   "A testing and incident tool, e.g. a positive offset runs every lease and "
							   "signed URL out now. Ignored while syncular.clock_override_ms is set.",
							   &clock_offset_text,
							   "",
							   PGC_SUSET, 0,
							   check_offset, assign_offset, NULL);
}

int64
sync_now_ms(void)
{
	TimestampTz now;
	int64		ms;

	if (clock_pinned)
		return clock_override_ms;
	now = GetCurrentTimestamp();
	ms = (int64) (now / 1000) +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	return ms + clock_offset_ms;
}

PG_FUNCTION_INFO_V1(syncular_now_ms);

/* syncular.now_ms(): the same clock for the SQL and plpgsql paths */
Datum
syncular_now_ms(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(sync_now_ms());
}
