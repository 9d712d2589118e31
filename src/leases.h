/*
 * leases.h — auth leases (SPEC §7.3; README "Auth leases"): issuance and refresh on authorized
 * rounds with the LEASE frame, and the outage seam of the scope resolver.
 */
#ifndef SYNCULAR_LEASES_H
#define SYNCULAR_LEASES_H

#include "engine.h"

extern int	sync_lease_ttl_ms;			/* GUC syncular.lease_ttl_ms; 0 = leases off */
extern bool sync_lease_on_resolver_error;	/* GUC syncular.lease_on_resolver_error */
extern bool sync_lease_reissue_after_revoke;	/* GUC syncular.lease_reissue_after_revoke */

extern void sync_leases_define_gucs(void);

/*
 * §7.3.3 issuance: after RESP_HEADER of a round whose scopes resolved (not lease-authorized),
 * store or slide the (partition, clientId) lease and write the LEASE frame into round->out.
 * A revoked lease is replaced by a fresh one (new leaseId) unless
 * syncular.lease_reissue_after_revoke is off.  Nothing when leases are off, resolution failed,
 * the round was lease-authorized, the lease is revoked and re-issue is off, or the server is a
 * hot standby.  Needs SPI.
 */
extern void sync_leases_round(SyncRound *round);

/*
 * §7.3.3 the outage seam: the allowed-scope map of the valid lease of (partition, clientId) for
 * the round's actor.  Raises sync.auth_lease_required (401: leases off, no lease, expired, other
 * actor) or sync.auth_lease_revoked (401).  Needs SPI.
 */
extern Jsonb *sync_leases_outage(SyncRound *round);

#endif							/* SYNCULAR_LEASES_H */
