/*
 * prepared.c — protocol-level named statements (libpq PQsendPrepare / PQsendQueryPrepared) for
 * the statements every request runs.  Sent unnamed (PQsendQueryParams), each call of
 * `SELECT ... FROM syncular.handle_http($1, ...)` is parsed, analyzed and planned again: about
 * a tenth of a 1-op push round's backend CPU (bench/README.md, "The HTTP cases against the
 * reference server").
 *
 * Slots: up to 32 statement texts for the process, taken by the first job marked prepare that
 * carries each text (kept as a copy, compared by content: a text rebuilt per call finds its slot).
 * Per connection, a statement is prepared on its first use: the Prepare goes first, the job's
 * query follows when it completed.  A Prepare that fails (the database lacks the function, a
 * privilege) leaves that statement unnamed on that connection; so does an execution that fails
 * before running because the statement is gone (26000: a DISCARD, a pooler between) or its
 * cached plan refuses a changed result type (0A000 after an extension update): that job is sent
 * again unnamed, which is safe because nothing of it ran.  Protocol-level statements (not SQL
 * PREPARE) are what PgBouncer 1.21 and later keep across its transaction pooling; an older
 * pooler answers 26000 on another server connection, and the statement goes unnamed.  The
 * errors are told apart by SQLSTATE and the server function that raised them, not by their
 * message, which the server's lc_messages translates.
 */
#include "prepared.h"

#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 32

static unsigned long long fallbacks;     /* named executions refused, sent again unnamed */
static char *texts[MAX_SLOTS];
static char names[MAX_SLOTS][32];
static int ntexts;

/*
 * A slot's name comes from its text (64-bit FNV-1a), not from the order of first use: a
 * server connection that a pooler hands from one gateway process to another, or one kept
 * across a gateway restart, may hold a statement of that name already, and it is then the
 * same text (its Prepare answers 42P05, taken as prepared).
 */
static int
slot_of(const char *sql)
{
	for (int k = 0; k < ntexts; k++)
		if (strcmp(texts[k], sql) == 0)
			return k;
	if (ntexts == MAX_SLOTS || !(texts[ntexts] = strdup(sql)))
		return -1;
	snprintf(names[ntexts], sizeof names[0], "syncular_gw_%016llx",
			 (unsigned long long) gw_fnv1a64(sql, strlen(sql)));
	return ntexts++;
}

void
gw_prepared_reset(GwPrepared *ps)
{
	ps->ok = ps->failed = 0;
	ps->pending = ps->sent = -1;
}

int
gw_prepared_send(GwPrepared *ps, PGconn *conn, const GwJob *j)
{
	int k = j->prepare ? slot_of(j->sql) : -1;

	ps->pending = ps->sent = -1;
	if (k < 0 || (ps->failed & (1u << k)))
		return PQsendQueryParams(conn, j->sql, j->nparams, NULL, j->values, j->lengths, j->formats,
								 j->result_format) ? 0 : -1;
	if (!(ps->ok & (1u << k)))
	{
		ps->pending = k;
		return PQsendPrepare(conn, names[k], j->sql, j->nparams, NULL) ? 1 : -1;
	}
	ps->sent = k;
	return PQsendQueryPrepared(conn, names[k], j->nparams, j->values, j->lengths, j->formats,
							   j->result_format) ? 0 : -1;
}

/* the error's SQLSTATE is code, raised by the server's function fn (never translated) */
static bool
raised(const PGresult *res, const char *code, const char *fn)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *src = res ? PQresultErrorField(res, PG_DIAG_SOURCE_FUNCTION) : NULL;

	return state && strcmp(state, code) == 0 && (!fn || (src && strcmp(src, fn) == 0));
}

/*
 * The named statement refused before it ran: gone at Bind (26000 from FetchPreparedStatement),
 * or its cached plan's result type changed (0A000 from RevalidateCachedQuery).
 */
static bool
refused_before_running(const PGresult *res)
{
	return raised(res, "26000", "FetchPreparedStatement") || raised(res, "0A000", "RevalidateCachedQuery");
}

bool
gw_prepared_again(GwPrepared *ps, const PGresult *res)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (ps->pending >= 0)
	{
		if (st == PGRES_COMMAND_OK || raised(res, "42P05", NULL))
			ps->ok |= 1u << ps->pending;
		else
			ps->failed |= 1u << ps->pending;
		ps->pending = -1;
		return true;
	}
	if (ps->sent >= 0 && st == PGRES_FATAL_ERROR && res && refused_before_running(res))
	{
		ps->ok &= ~(1u << ps->sent);
		ps->failed |= 1u << ps->sent;
		ps->sent = -1;
		fallbacks++;
		return true;
	}
	return false;
}

unsigned long long
gw_prepared_fallbacks(void)
{
	return fallbacks;
}
