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
 * pooler answers 26000 on another server connection, and the statement goes unnamed.
 */
#include "prepared.h"

#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 32

static char *texts[MAX_SLOTS];
static int ntexts;

static int
slot_of(const char *sql)
{
	for (int k = 0; k < ntexts; k++)
		if (strcmp(texts[k], sql) == 0)
			return k;
	if (ntexts == MAX_SLOTS || !(texts[ntexts] = strdup(sql)))
		return -1;
	return ntexts++;
}

static void
name_of(int k, char *buf, size_t size)
{
	snprintf(buf, size, "syncular_gw_%d", k);
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
	char name[32];

	ps->pending = ps->sent = -1;
	if (k < 0 || (ps->failed & (1u << k)))
		return PQsendQueryParams(conn, j->sql, j->nparams, NULL, j->values, j->lengths, j->formats,
								 j->result_format) ? 0 : -1;
	name_of(k, name, sizeof name);
	if (!(ps->ok & (1u << k)))
	{
		ps->pending = k;
		return PQsendPrepare(conn, name, j->sql, j->nparams, NULL) ? 1 : -1;
	}
	ps->sent = k;
	return PQsendQueryPrepared(conn, name, j->nparams, j->values, j->lengths, j->formats,
							   j->result_format) ? 0 : -1;
}

/* the named statement refused before it ran: gone, or its plan's result type changed */
static bool
refused_before_running(const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (!state)
		return false;
	return strcmp(state, "26000") == 0 ||
		(strcmp(state, "0A000") == 0 && msg && strstr(msg, "cached plan must not change result type"));
}

bool
gw_prepared_again(GwPrepared *ps, const PGresult *res)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (ps->pending >= 0)
	{
		if (st == PGRES_COMMAND_OK)
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
		return true;
	}
	return false;
}
