/*
 * fanout_regs.h — the parsed registrations realtime_fanout works on (fanout_regs.c), and the
 * backend-local cache of them keyed by the registration text (docs/realtime.md §2).
 */
#ifndef SYNCULAR_FANOUT_REGS_H
#define SYNCULAR_FANOUT_REGS_H

#include "engine.h"

/* One subscription of a registration, as the fanout matches it (SPEC §8.2). */
typedef struct RtSub
{
	char	   *id;
	SyncTable  *table;			/* of the compiled schema the registration was parsed under */
	SspScopeMap requested;
	SyncEffective *effective;	/* the registered effective scopes (only the registered keys) */
	char	   *effective_json; /* canonical (sync_effective_json) */
	char	   *group_key;		/* table \x1f effective_json: subscriptions matched alike */
} RtSub;

/* A socket's registration (realtime_connect's "registration" object), parsed and checked. */
typedef struct RtReg
{
	char	   *partition;
	char	   *actor;
	char	   *client;
	char	   *epoch;			/* empty: registered before the partition had an epoch */
	int32		schema_version;
	int			wire;
	int			nsubs;
	RtSub	   *subs;
} RtReg;

/* sync.invalid_request "realtime_fanout: a connection is malformed", details {index, field} */
extern void sync_fanout_malformed(int index, const char *field) pg_attribute_noreturn();

/*
 * Member key of obj as an integer in the ±(2^53−1) contract (§8.1); anything else raises
 * sync_fanout_malformed(index, field).
 */
extern int64 sync_fanout_member_int(JsonbContainer *obj, const char *key, int index,
									const char *field);

/*
 * The registration object reg of input element index, parsed under schema, in the current
 * memory context.  Raises sync.invalid_request (sync_fanout_malformed) for a malformed field or a
 * registration of another partition than partition.
 */
extern RtReg *sync_fanout_reg_parse(SyncSchema *schema, JsonbContainer *reg, const char *partition,
									int index);

/*
 * The registration given as JSON text (len bytes, not NUL-terminated), from this backend's cache
 * when the same text was parsed under the same compiled schema, else parsed (and cached while
 * syncular.realtime_registration_cache_kb allows).  The result is read-only and lives until the
 * end of the calling statement at least.  Raises as sync_fanout_reg_parse; text that is not a
 * JSON object is field "registration".  Call sync_fanout_regs_begin first in each call.
 */
extern const RtReg *sync_fanout_reg_text(SyncSchema *schema, const char *text, int len,
										 const char *partition, int index);

/* At the start of a fanout call, before any sync_fanout_reg_text, with the call's own memory
 * context current (freed when the call ends or fails): drops what schema outdates and evicts
 * (the only place the cache frees anything, and only when no other call is running) */
extern void sync_fanout_regs_begin(const SyncSchema *schema);

extern void sync_fanout_regs_seed(SyncSchema *schema, JsonbContainer *reg, int reg_len,
								  const char *partition);

extern void sync_fanout_regs_stats(int64 *entries, int64 *bytes);

#endif							/* SYNCULAR_FANOUT_REGS_H */
