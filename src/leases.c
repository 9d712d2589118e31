/*
 * leases.c — auth leases (SPEC §7.3).
 *
 * A lease is the record (partition, clientId) -> leaseId, actorId, the allowed scopes the
 * resolver returned, issued/expires (sync_leases).  With syncular.lease_ttl_ms > 0 every round
 * whose scopes the resolver resolved stores or slides the client's lease (same leaseId across
 * refreshes) and answers a LEASE frame right after RESP_HEADER (§7.3.2).  When the resolver
 * signals an outage (it returns the JSON string "outage"; or it raises and the operator enabled
 * syncular.lease_on_resolver_error), the round is authorized by the valid lease's scopes instead,
 * without refreshing it; without one it fails request-level with sync.auth_lease_required or
 * sync.auth_lease_revoked (§7.3.3, §7.3.4).  After a revocation the next round the resolver
 * authorizes issues a fresh lease under a new id (syncular.lease_reissue_after_revoke, default
 * on): the revoked id is never slid nor issued again.  The store is the extension's catalog, which no app
 * role can write (90_grants.sql): that is what the spec's host signature at rest protects.
 */
#include "postgres.h"

#include <limits.h>

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "port.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "leases.h"

int			sync_lease_ttl_ms = 0;
bool		sync_lease_on_resolver_error = false;
bool		sync_lease_reissue_after_revoke = true;

void
sync_leases_define_gucs(void)
{
	DefineCustomIntVariable("syncular.lease_ttl_ms",
							"Lifetime of an auth lease; 0 turns leases off.",
							"When above 0, every round whose scopes the resolver resolved issues or "
							"slides the client's lease to now + this many milliseconds and answers a "
							"LEASE frame (SPEC §7.3.3).",
							&sync_lease_ttl_ms,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("syncular.lease_on_resolver_error",
							 "Treat a scope resolver that raises as an outage authorized by the lease.",
							 "Off: a raising resolver fails closed (SPEC §3.2 rule 5). On (with leases "
							 "on): the round is authorized by the client's valid lease, or fails with "
							 "sync.auth_lease_required / sync.auth_lease_revoked (SPEC §7.3.3). The "
							 "resolver returning the JSON string \"outage\" always means an outage.",
							 &sync_lease_on_resolver_error,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("syncular.lease_reissue_after_revoke",
							 "Issue a fresh lease (new leaseId) on the next live-authorized round after a revocation.",
							 "On (default, SPEC §7.3.4): the revoked leaseId is never slid, accepted or "
							 "issued again, but a round the scope resolver authorizes replaces it with a "
							 "new one. Off: a revoked lease blocks issuance for that client until "
							 "syncular.clear_lease removes it.",
							 &sync_lease_reissue_after_revoke,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
}

static SPIPlanPtr issue_plan = NULL;
static SPIPlanPtr load_plan = NULL;

static SPIPlanPtr
keep(const char *sql, int n, Oid *types)
{
	SPIPlanPtr	p = SPI_prepare(sql, n, types);

	if (p == NULL || SPI_keepplan(p) != 0)
		elog(ERROR, "syncular leases: could not prepare a statement");
	return p;
}

/* The allowed map as JSON: {"var": ["v", ...] | ["*"]} (what the resolver's shape allows). */
static char *
allowed_json(const SyncAllowed *a)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoChar(&b, '{');
	for (int i = 0; i < a->nvars; i++)
	{
		if (i > 0)
			appendStringInfoChar(&b, ',');
		escape_json(&b, a->vars[i]);
		appendStringInfoString(&b, ":[");
		if (a->any[i])
			appendStringInfoString(&b, "\"*\"");
		else
			for (int k = 0; k < a->nvalues[i]; k++)
			{
				if (k > 0)
					appendStringInfoChar(&b, ',');
				escape_json(&b, a->values[i][k]);
			}
		appendStringInfoChar(&b, ']');
	}
	appendStringInfoChar(&b, '}');
	return b.data;
}

static char *
new_lease_id(void)
{
	uint8		r[16];
	char	   *id = palloc(6 + 32 + 1);

	if (!pg_strong_random(r, sizeof(r)))
		elog(ERROR, "syncular leases: could not generate a random lease id");
	memcpy(id, "lease_", 6);
	hex_encode((const char *) r, sizeof(r), id + 6);
	id[6 + 32] = '\0';
	return id;
}

void
sync_leases_round(SyncRound *round)
{
	MemoryContext cxt = CurrentMemoryContext;
	Datum		args[8];
	bool		isnull;
	SspFrame	f;
	SspError	err;
	char	   *lease_id;
	int64		expires;

	if (sync_lease_ttl_ms <= 0 || round->allowed == NULL || round->allowed->failed ||
		round->allowed->leased || round->client_id == NULL || RecoveryInProgress())
		return;
	if (issue_plan == NULL)
		/*
		 * Slide a live record, keeping its id.  A revoked record (§7.3.4) is never slid: with
		 * $8 (syncular.lease_reissue_after_revoke) this live-authorized round replaces it with
		 * a fresh lease under the new random id $3, so the revoked id never comes back; without
		 * it the row stays revoked (no row back) until clear_lease.
		 */
		issue_plan = keep("INSERT INTO syncular.sync_leases AS l (partition, client_id, lease_id, "
						  "actor_id, allowed_scopes, issued_at_ms, expires_at_ms) "
						  "VALUES ($1, $2, $3, $4, $5, $6, $6 + $7) "
						  "ON CONFLICT (partition, client_id) DO UPDATE "
						  "SET lease_id = CASE WHEN l.revoked_at_ms IS NULL THEN l.lease_id "
						  "ELSE EXCLUDED.lease_id END, "
						  "actor_id = EXCLUDED.actor_id, allowed_scopes = EXCLUDED.allowed_scopes, "
						  "issued_at_ms = EXCLUDED.issued_at_ms, expires_at_ms = EXCLUDED.expires_at_ms, "
						  "revoked_at_ms = NULL "
						  "WHERE l.revoked_at_ms IS NULL OR $8 "
						  "RETURNING l.lease_id, l.expires_at_ms",
						  8, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, INT8OID, INT8OID, BOOLOID});
	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(round->client_id);
	args[2] = CStringGetTextDatum(new_lease_id());
	args[3] = CStringGetTextDatum(round->actor_id);
	args[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(allowed_json(round->allowed)));
	args[5] = Int64GetDatum(round->now_ms);
	args[6] = Int64GetDatum((int64) sync_lease_ttl_ms);
	args[7] = BoolGetDatum(sync_lease_reissue_after_revoke);
	if (SPI_execute_plan(issue_plan, args, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "syncular leases: issuing the lease failed");
	MemoryContextSwitchTo(cxt);
	if (SPI_processed == 0)
		return;					/* revoked, re-issue off: none until clear_lease */
	lease_id = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	expires = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_LEASE;
	f.lease.lease_id.ptr = lease_id;
	f.lease.lease_id.len = strlen(lease_id);
	f.lease.expires_at_ms = expires;
	if (!ssp_write_frame(round->out, round->wire_version, &f, &err))
		sync_raise("sync.internal_error", "internal error while encoding the response", NULL);
}

Jsonb *
sync_leases_outage(SyncRound *round)
{
	MemoryContext cxt = CurrentMemoryContext;
	Datum		args[2];
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	td;
	Datum		d;

	if (sync_lease_ttl_ms <= 0 || round->client_id == NULL)
		sync_raise("sync.auth_lease_required", "auth lease required",
				   "{\"reason\": \"leases_off\"}");
	if (load_plan == NULL)
		load_plan = keep("SELECT actor_id, allowed_scopes, expires_at_ms, revoked_at_ms IS NOT NULL "
						 "FROM syncular.sync_leases WHERE partition = $1 AND client_id = $2",
						 2, (Oid[]) {TEXTOID, TEXTOID});
	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(round->client_id);
	if (SPI_execute_plan(load_plan, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "syncular leases: reading the lease failed");
	MemoryContextSwitchTo(cxt);
	if (SPI_processed == 0)
		sync_raise("sync.auth_lease_required", "auth lease required", "{\"reason\": \"missing\"}");
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	if (DatumGetBool(SPI_getbinval(tup, td, 4, &isnull)))
		sync_raise("sync.auth_lease_revoked", "auth lease revoked", NULL);
	if (strcmp(SPI_getvalue(tup, td, 1), round->actor_id) != 0)
		sync_raise("sync.auth_lease_required", "auth lease required",
				   "{\"reason\": \"actor_mismatch\"}");
	if (DatumGetInt64(SPI_getbinval(tup, td, 3, &isnull)) <=
		(round->now_ms > 0 ? round->now_ms : sync_now_ms()))
		sync_raise("sync.auth_lease_required", "auth lease required", "{\"reason\": \"expired\"}");
	d = SPI_getbinval(tup, td, 2, &isnull);
	return DatumGetJsonbPCopy(d);
}
