/*
 * realtime.h — what realtime.c (connect, ack, presence, settings) shares with fanout.c
 * (realtime_fanout).  The contract with the gateway: docs/realtime.md.
 */
#ifndef SYNCULAR_REALTIME_H
#define SYNCULAR_REALTIME_H

#include "engine.h"

/* Settings (PGC_SUSET, realtime.c). */
extern int	sync_realtime_max_delta_bytes;		/* syncular.realtime_max_delta_bytes */
extern int	sync_realtime_max_window_commits;	/* syncular.realtime_max_window_commits */
extern int	sync_realtime_max_window_changes;	/* syncular.realtime_max_window_changes */
extern int	sync_realtime_grant_cache_ms;	/* syncular.realtime_grant_cache_ms */
extern int	sync_realtime_registration_cache_kb;	/* syncular.realtime_registration_cache_kb (fanout_regs.c) */

/* fanout_regs.c: {var: [string, ...]} as a decoded scope map (keys sorted); false if not that shape */
extern bool sync_realtime_scope_map(JsonbContainer *obj, SspScopeMap *out);

/* realtime_grants.c: the live grant of a socket (cached per backend when the setting allows) */
extern SyncAllowed *sync_realtime_grant(SyncSchema *schema, const char *partition,
										const char *actor, const char *client, int64 now_ms);

/* The registration's format version ("v"). */
#define SYNC_REGISTRATION_VERSION 1

/* Client ids of this namespace belong to server commands (§1.5). */
#define SYNC_RESERVED_CLIENT_PREFIX "[\"remote-command\","

#endif							/* SYNCULAR_REALTIME_H */
