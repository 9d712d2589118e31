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
#include "storage.h"

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
	SspFrame	f;
	SspError	err;
	char	   *lease_id;
	int64		expires;

	if (sync_lease_ttl_ms <= 0 || round->allowed == NULL || round->allowed->failed ||
		round->allowed->leased || round->client_id == NULL || RecoveryInProgress())
		return;
	/*
	 * Slide a live lease, keeping its id; a revoked one is replaced under a fresh random id when
	 * syncular.lease_reissue_after_revoke is on (§7.3.4), else none is issued until clear_lease.
	 */
	if (!sync_storage_lease_issue(round->partition, round->client_id, new_lease_id(),
								  round->actor_id, allowed_json(round->allowed), round->now_ms,
								  (int64) sync_lease_ttl_ms, sync_lease_reissue_after_revoke,
								  &lease_id, &expires))
		return;

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
	SyncStoredLease lease;

	if (sync_lease_ttl_ms <= 0 || round->client_id == NULL)
		sync_raise("sync.auth_lease_required", "auth lease required",
				   "{\"reason\": \"leases_off\"}");
	if (!sync_storage_lease_get(round->partition, round->client_id, &lease))
		sync_raise("sync.auth_lease_required", "auth lease required", "{\"reason\": \"missing\"}");
	if (lease.revoked)
		sync_raise("sync.auth_lease_revoked", "auth lease revoked", NULL);
	if (strcmp(lease.actor_id, round->actor_id) != 0)
		sync_raise("sync.auth_lease_required", "auth lease required",
				   "{\"reason\": \"actor_mismatch\"}");
	if (lease.expires_at_ms <= (round->now_ms > 0 ? round->now_ms : sync_now_ms()))
		sync_raise("sync.auth_lease_required", "auth lease required", "{\"reason\": \"expired\"}");
	return lease.allowed_scopes;
}
