/*
 * realtime_grants.c — the live grant realtime_fanout checks before a delta (docs/realtime.md §2
 * step 7): the registered scope resolver through sync_scopes_resolve, as a round calls it.
 *
 * With syncular.realtime_grant_cache_ms > 0 a backend keeps each (partition, actor, client)
 * grant that long, so a gateway connection fanning out a busy partition resolves each socket's
 * grant at most once per period instead of once per commit; a changed grant then reaches the
 * fanout within that period (the default, 0, resolves on every call).  Entries also expire
 * when the compiled schema or the resolver changes (the schema generation).  The cache lives in
 * its own context under TopMemoryContext and is dropped whole when it holds too many entries.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "engine.h"
#include "realtime.h"
#include "storage.h"

#define GRANT_CACHE_MAX_ENTRIES 100000

typedef struct GrantEntry
{
	uint64		hash;			/* the key of the hash table */
	char	   *key;			/* partition \x1f actor \x1f client */
	uint64		generation;
	int64		at_ms;
	SyncAllowed *allowed;
} GrantEntry;

static MemoryContext grant_cxt = NULL;
static HTAB *grant_cache = NULL;

/* the grant, every field, copied into the current context (the cache's) */
static SyncAllowed *
copy_allowed(const SyncAllowed *a)
{
	SyncAllowed *c = palloc0(sizeof(SyncAllowed));

	c->failed = a->failed;
	c->leased = a->leased;
	c->nvars = a->nvars;
	sync_scope_entries_copy(a->nvars, a->vars, a->any, a->nvalues, a->values,
							&c->vars, &c->any, &c->nvalues, &c->values);
	return c;
}

static void
cache_reset(void)
{
	HASHCTL		ctl;

	if (grant_cxt == NULL)
		grant_cxt = AllocSetContextCreate(TopMemoryContext, "syncular realtime grants",
										  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(grant_cxt);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(GrantEntry);
	ctl.hcxt = grant_cxt;
	grant_cache = hash_create("syncular realtime grants", 256, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * sync_scopes_resolve, as a round calls it, in a subtransaction: a resolver answer the engine
 * raises for (a variable the schema does not declare: sync.invalid_subscription in a round) must
 * not fail the fanout of every other socket; that socket's grant fails closed instead.
 */
static SyncAllowed *
resolve_or_fail(SyncSchema *schema, const char *partition, const char *actor, const char *client)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	SyncRound	round;
	SyncAllowed *allowed = NULL;

	memset(&round, 0, sizeof(round));
	round.schema = schema;
	round.partition = partition;
	round.actor_id = actor;
	round.client_id = client;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		allowed = sync_scopes_resolve(&round);
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(cxt, owner);

		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		FreeErrorData(edata);
		allowed = palloc0(sizeof(SyncAllowed));
		allowed->failed = true;
	}
	PG_END_TRY();
	return allowed;
}

/*
 * The grant of (partition, actor, client) now, or as resolved within the last
 * syncular.realtime_grant_cache_ms.  Allocated in the caller's context when not cached.
 */
SyncAllowed *
sync_realtime_grant(SyncSchema *schema, const char *partition, const char *actor,
					const char *client, int64 now_ms)
{
	MemoryContext old;
	SyncAllowed *allowed;
	char	   *key = NULL;
	uint64		hash = 0;
	GrantEntry *e = NULL;
	bool		found;

	if (sync_realtime_grant_cache_ms > 0)
	{
		key = psprintf("%s\x1f%s\x1f%s", partition, actor, client);
		hash = hash_bytes_extended((const unsigned char *) key, strlen(key), 0);
		if (grant_cache == NULL)
			cache_reset();
		e = hash_search(grant_cache, &hash, HASH_FIND, NULL);
		if (e != NULL && strcmp(e->key, key) == 0 && e->generation == schema->generation &&
			now_ms - e->at_ms >= 0 && now_ms - e->at_ms < sync_realtime_grant_cache_ms)
			return e->allowed;
	}

	allowed = resolve_or_fail(schema, partition, actor, client);
	if (sync_realtime_grant_cache_ms <= 0)
		return allowed;

	if (hash_get_num_entries(grant_cache) >= GRANT_CACHE_MAX_ENTRIES)
		cache_reset();
	e = hash_search(grant_cache, &hash, HASH_ENTER, &found);
	old = MemoryContextSwitchTo(grant_cxt);
	e->key = pstrdup(key);
	e->generation = schema->generation;
	e->at_ms = now_ms;
	e->allowed = copy_allowed(allowed);
	MemoryContextSwitchTo(old);
	return e->allowed;
}
