/*
 * fanout_regs.c — realtime_fanout's registrations (docs/realtime.md §2): the parse of a socket's
 * registration object, and a backend-local cache of parsed registrations keyed by their text.
 *
 * A gateway keeps each socket's registration as the compact JSON text realtime_connect answered
 * and sends the same text with every commit's fanout call.  Parsing it again for every commit
 * (the text into jsonb, then every field, scope map and canonical effective-scopes string) was
 * more than half of a call's time at 1,000 sockets, so syncular.realtime_fanout_arrays, which
 * takes each registration as one text element, looks the text up here first.
 *
 * Why the cache is safe:
 *   - An entry is the parse of exactly its text (64-bit hash, then the bytes compared), and a
 *     parse reads nothing but that text and the compiled schema (a subscription's table is a
 *     pointer into it).  The compiled schema is identified by its generation (schema.c bumps it
 *     whenever the settings row changes and the schema is rebuilt, freeing the old one), and the
 *     cache is dropped whole when a call sees another generation (sync_fanout_regs_begin, right
 *     after the call's sync_schema_get).  The partition check is not cached: a hit is checked
 *     against the call's partition again.  Nothing depends on the role, the snapshot or the
 *     transaction, and everything the decision needs from the database (epoch, schema version,
 *     gate, window, live grant) is still read per call.
 *   - Entries are never changed after they are added, and memory is freed only in
 *     sync_fanout_regs_begin, at the start of a call and only when no other call is running (a
 *     call nested in another, from a scope resolver, frees nothing): a running call never loses
 *     an entry it holds.  An entry is added only once it is completely copied, so an error (a malformed
 *     registration, out of memory) leaves no partial entry; what a failed copy allocated stays in
 *     the generation's context and goes with it.
 *   - Bounded: two generations, each its own context under TopMemoryContext.  Lookups try the
 *     current one, then the previous one (a hit there is copied into the current one); when a
 *     call starts with the current generation at half of syncular.realtime_registration_cache_kb
 *     or more, the previous one is freed and the current one becomes the previous.  So memory
 *     stays within the setting plus the registrations of one call, registrations still in use
 *     survive (copied, not parsed), and those of closed sockets go within two rotations.  0
 *     turns the cache off (every registration parsed into the call's memory).
 */
#include "postgres.h"

#include <limits.h>

#include "common/hashfn.h"
#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"
#include "fanout_regs.h"
#include "realtime.h"

/* syncular.realtime_registration_cache_kb (defined with the other realtime settings, realtime.c) */
int			sync_realtime_registration_cache_kb = 16384;

/* ---------------------------------------------------------------- the parse */

static int
cmp_entry(const void *a, const void *b)
{
	const SspScopeEntry *x = a;
	const SspScopeEntry *y = b;

	return ssp_utf16_cmp(x->key.ptr, x->key.len, y->key.ptr, y->key.len);
}

/*
 * {var: [non-empty string, ...]} -> a scope map as the decoder gives it (keys sorted, values in
 * list order); false when obj is not of that shape.  Reads the registrations here and the
 * persisted subscriptions in realtime.c.
 */
bool
sync_realtime_scope_map(JsonbContainer *obj, SspScopeMap *out)
{
	JsonbIterator *it;
	JsonbValue	v;
	int			n = 0;

	out->n = 0;
	if (!JsonContainerIsObject(obj))
		return false;
	out->entries = palloc0(sizeof(SspScopeEntry) * Max(JsonContainerSize(obj), 1));
	it = JsonbIteratorInit(obj);
	(void) JsonbIteratorNext(&it, &v, true);
	while (JsonbIteratorNext(&it, &v, true) == WJB_KEY)
	{
		SspScopeEntry *e = &out->entries[n++];
		JsonbContainer *arr;

		e->key.ptr = pnstrdup(v.val.string.val, v.val.string.len);
		e->key.len = (uint32) v.val.string.len;
		(void) JsonbIteratorNext(&it, &v, true);
		if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
			return false;
		arr = v.val.binary.data;
		e->nvalues = (uint32) JsonContainerSize(arr);
		e->values = palloc0(sizeof(SspStr) * Max(e->nvalues, 1));
		for (uint32 k = 0; k < e->nvalues; k++)
		{
			JsonbValue *x = getIthJsonbValueFromContainer(arr, k);

			if (x == NULL || x->type != jbvString || x->val.string.len == 0)
				return false;
			e->values[k].ptr = pnstrdup(x->val.string.val, x->val.string.len);
			e->values[k].len = (uint32) x->val.string.len;
		}
	}
	out->n = (uint32) n;
	qsort(out->entries, n, sizeof(SspScopeEntry), cmp_entry);
	return true;
}


void
sync_fanout_malformed(int index, const char *field)
{
	sync_raise("sync.invalid_request", "realtime_fanout: a connection is malformed",
			   psprintf("{\"index\": %d, \"field\": \"%s\"}", index, field));
}

static JsonbValue *
member(JsonbContainer *obj, const char *key, JsonbValue *v)
{
	return getKeyJsonValueFromContainer(obj, key, strlen(key), v);
}

static char *
member_text(JsonbContainer *obj, const char *key, int index, const char *field)
{
	JsonbValue	v;

	if (member(obj, key, &v) == NULL || v.type != jbvString || v.val.string.len == 0)
		sync_fanout_malformed(index, field);
	return pnstrdup(v.val.string.val, v.val.string.len);
}

int64
sync_fanout_member_int(JsonbContainer *obj, const char *key, int index, const char *field)
{
	JsonbValue	v;
	char	   *s;
	char	   *end;
	long long	x;

	if (member(obj, key, &v) == NULL || v.type != jbvNumeric)
		sync_fanout_malformed(index, field);
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || x > SSP_I64_SAFE_MAX || x < -SSP_I64_SAFE_MAX)
		sync_fanout_malformed(index, field);
	return (int64) x;
}

static JsonbContainer *
member_container(JsonbContainer *obj, const char *key, bool array, int index, const char *field)
{
	JsonbValue	v;

	if (member(obj, key, &v) == NULL || v.type != jbvBinary ||
		(array ? !JsonContainerIsArray(v.val.binary.data) : !JsonContainerIsObject(v.val.binary.data)))
		sync_fanout_malformed(index, field);
	return v.val.binary.data;
}

/* the registered effective scopes as the engine's struct (pointing into m's strings) */
static SyncEffective *
effective_from_map(const SspScopeMap *m)
{
	SyncEffective *e = palloc0(sizeof(SyncEffective));

	/* the registered (requested ∩ allowed) keys only: a prefilter, a superset of the live rule */
	e->nvars = e->nall = (int) m->n;
	e->vars = palloc0(sizeof(char *) * Max(m->n, 1));
	e->any = palloc0(sizeof(bool) * Max(m->n, 1));
	e->nvalues = palloc0(sizeof(int) * Max(m->n, 1));
	e->values = palloc0(sizeof(char **) * Max(m->n, 1));
	for (uint32 i = 0; i < m->n; i++)
	{
		e->vars[i] = (char *) m->entries[i].key.ptr;
		e->nvalues[i] = (int) m->entries[i].nvalues;
		e->values[i] = palloc0(sizeof(char *) * Max(m->entries[i].nvalues, 1));
		for (uint32 k = 0; k < m->entries[i].nvalues; k++)
			e->values[i][k] = (char *) m->entries[i].values[k].ptr;
	}
	e->revoked = (m->n == 0);
	return e;
}

static void
parse_sub(SyncSchema *schema, JsonbContainer *obj, int index, RtSub *s)
{
	SspScopeMap eff;

	if (!JsonContainerIsObject(obj))
		sync_fanout_malformed(index, "registration.subscriptions");
	s->id = member_text(obj, "id", index, "registration.subscriptions.id");
	s->table = sync_schema_table(schema,
								 member_text(obj, "table", index, "registration.subscriptions.table"));
	if (s->table == NULL)
		sync_fanout_malformed(index, "registration.subscriptions.table");
	if (!sync_realtime_scope_map(member_container(obj, "scopes", false, index,
												  "registration.subscriptions.scopes"),
								 &s->requested))
		sync_fanout_malformed(index, "registration.subscriptions.scopes");
	if (!sync_realtime_scope_map(member_container(obj, "effective", false, index,
												  "registration.subscriptions.effective"), &eff) ||
		eff.n == 0)
		sync_fanout_malformed(index, "registration.subscriptions.effective");
	s->effective = effective_from_map(&eff);
	s->effective_json = sync_effective_json(s->effective);
	/* built in a StringInfo of 1 KiB at least: kept at its own length (the jsonb signature keeps
	 * every connection's parse for the whole call) */
	s->effective_json = pstrdup(s->effective_json);
	s->group_key = psprintf("%s\x1f%s", s->table->name, s->effective_json);
}

RtReg *
sync_fanout_reg_parse(SyncSchema *schema, JsonbContainer *reg, const char *partition, int index)
{
	RtReg	   *r = palloc0(sizeof(RtReg));
	JsonbContainer *subs;
	JsonbValue	ev;
	int64		v;

	if (sync_fanout_member_int(reg, "v", index, "registration.v") != SYNC_REGISTRATION_VERSION)
		sync_fanout_malformed(index, "registration.v");
	r->partition = member_text(reg, "partition", index, "registration.partition");
	if (strcmp(r->partition, partition) != 0)
		sync_fanout_malformed(index, "registration.partition");
	r->actor = member_text(reg, "actorId", index, "registration.actorId");
	r->client = member_text(reg, "clientId", index, "registration.clientId");
	/* empty: registered on a standby before the partition had an epoch (then reset-required) */
	if (member(reg, "logEpoch", &ev) == NULL || ev.type != jbvString)
		sync_fanout_malformed(index, "registration.logEpoch");
	r->epoch = pnstrdup(ev.val.string.val, ev.val.string.len);
	v = sync_fanout_member_int(reg, "schemaVersion", index, "registration.schemaVersion");
	if (v < 1 || v > INT_MAX)
		sync_fanout_malformed(index, "registration.schemaVersion");
	r->schema_version = (int32) v;
	v = sync_fanout_member_int(reg, "wireVersion", index, "registration.wireVersion");
	if (v != 2 && v != 3)
		sync_fanout_malformed(index, "registration.wireVersion");
	r->wire = (int) v;
	subs = member_container(reg, "subscriptions", true, index, "registration.subscriptions");
	r->nsubs = JsonContainerSize(subs);
	r->subs = palloc0(sizeof(RtSub) * Max(r->nsubs, 1));
	for (int i = 0; i < r->nsubs; i++)
	{
		JsonbValue *s = getIthJsonbValueFromContainer(subs, i);

		if (s == NULL || s->type != jbvBinary)
			sync_fanout_malformed(index, "registration.subscriptions");
		parse_sub(schema, s->val.binary.data, index, &r->subs[i]);
	}
	return r;
}

/* text (not NUL-terminated) that must be a JSON object: parsed, in the current context */
static RtReg *
parse_text(SyncSchema *schema, const char *text, int len, const char *partition, int index)
{
	char	   *s = pnstrdup(text, len);
	JsonLexContext *lex = makeJsonLexContextCstringLen(s, len, GetDatabaseEncoding(), true);
	Jsonb	   *jb;

	/* checked first, so that bad JSON is the catalogue's error naming the element */
	if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
		sync_fanout_malformed(index, "registration");
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s)));
	if (!JB_ROOT_IS_OBJECT(jb))
		sync_fanout_malformed(index, "registration");
	return sync_fanout_reg_parse(schema, &jb->root, partition, index);
}

/* ---------------------------------------------------------------- copies (into the cache) */

static void
map_copy(SspScopeMap *dst, const SspScopeMap *src)
{
	dst->n = src->n;
	dst->entries = palloc0(sizeof(SspScopeEntry) * Max(src->n, 1));
	for (uint32 i = 0; i < src->n; i++)
	{
		const SspScopeEntry *e = &src->entries[i];
		SspScopeEntry *d = &dst->entries[i];

		d->key.ptr = pnstrdup(e->key.ptr, e->key.len);
		d->key.len = e->key.len;
		d->nvalues = e->nvalues;
		d->values = palloc0(sizeof(SspStr) * Max(e->nvalues, 1));
		for (uint32 k = 0; k < e->nvalues; k++)
		{
			d->values[k].ptr = pnstrdup(e->values[k].ptr, e->values[k].len);
			d->values[k].len = e->values[k].len;
		}
	}
}

/* an effective_from_map struct (nvars == nall, no "*"), its strings copied */
static SyncEffective *
effective_copy(const SyncEffective *e)
{
	SyncEffective *c = palloc0(sizeof(SyncEffective));

	c->revoked = e->revoked;
	c->nvars = e->nvars;
	c->nall = e->nall;
	sync_scope_entries_copy(e->nall, e->vars, e->any, e->nvalues, e->values,
							&c->vars, &c->any, &c->nvalues, &c->values);
	return c;
}

/* a deep copy in the current context (the table pointers stay the schema's) */
static RtReg *
reg_copy(const RtReg *r)
{
	RtReg	   *c = palloc0(sizeof(RtReg));

	c->partition = pstrdup(r->partition);
	c->actor = pstrdup(r->actor);
	c->client = pstrdup(r->client);
	c->epoch = pstrdup(r->epoch);
	c->schema_version = r->schema_version;
	c->wire = r->wire;
	c->nsubs = r->nsubs;
	c->subs = palloc0(sizeof(RtSub) * Max(r->nsubs, 1));
	for (int i = 0; i < r->nsubs; i++)
	{
		const RtSub *s = &r->subs[i];
		RtSub	   *d = &c->subs[i];

		d->id = pstrdup(s->id);
		d->table = s->table;
		map_copy(&d->requested, &s->requested);
		d->effective = effective_copy(s->effective);
		d->effective_json = pstrdup(s->effective_json);
		d->group_key = pstrdup(s->group_key);
	}
	return c;
}

/* ---------------------------------------------------------------- the cache */

typedef struct RegEntry
{
	uint64		hash;			/* the key of the hash table: of the text's bytes */
	char	   *text;
	int			len;
	RtReg	   *reg;
} RegEntry;

typedef struct RegGen
{
	MemoryContext cxt;			/* NULL: empty */
	HTAB	   *table;
} RegGen;

static RegGen gens[2];			/* gens[cur]: the current generation, gens[1 - cur]: the previous */
static int	cur = 0;
static uint64 cached_schema_generation = 0;
static int	active_calls = 0;		/* fanout calls running in this backend (nested: a resolver's) */

/* the reset callback of a call's memory context: the call ended, or failed */
static void
call_ended(void *arg)
{
	active_calls--;
}

static void
gen_drop(RegGen *g)
{
	if (g->cxt != NULL)
		MemoryContextDelete(g->cxt);	/* the hash table is a child context of it */
	g->cxt = NULL;
	g->table = NULL;
}

static void
gen_create(RegGen *g)
{
	HASHCTL		ctl;

	g->cxt = AllocSetContextCreate(TopMemoryContext, "syncular realtime registrations",
								   ALLOCSET_DEFAULT_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(RegEntry);
	ctl.hcxt = g->cxt;
	g->table = hash_create("syncular realtime registrations", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* the cache for schema: dropped under another generation (or when off), rotated when full */
static void
regs_prepare(const SyncSchema *schema)
{
	Size		limit = (Size) sync_realtime_registration_cache_kb * 1024;

	if (limit == 0 || schema->generation != cached_schema_generation)
	{
		gen_drop(&gens[0]);
		gen_drop(&gens[1]);
		cached_schema_generation = schema->generation;
		return;
	}
	if (gens[cur].cxt != NULL && MemoryContextMemAllocated(gens[cur].cxt, true) >= limit / 2)
	{
		gen_drop(&gens[1 - cur]);
		cur = 1 - cur;			/* the full one is now the previous one */
	}
}

void
sync_fanout_regs_begin(const SyncSchema *schema)
{
	MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));

	/*
	 * Counted until the call's context goes (its end or its error), so that a call started
	 * inside another one (a scope resolver calling realtime_fanout_arrays) frees nothing the
	 * outer call holds; such a call under another schema generation parses without the cache.
	 */
	cb->func = call_ended;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	if (active_calls++ > 0)
		return;
	regs_prepare(schema);
}

/* this backend's cache: entries (both generations) and bytes allocated for them */
void
sync_fanout_regs_stats(int64 *entries, int64 *bytes)
{
	*entries = 0;
	*bytes = 0;
	for (int g = 0; g < 2; g++)
		if (gens[g].cxt != NULL)
		{
			*entries += (int64) hash_get_num_entries(gens[g].table);
			*bytes += (int64) MemoryContextMemAllocated(gens[g].cxt, true);
		}
}

static RegEntry *
gen_find(RegGen *g, uint64 hash, const char *text, int len)
{
	RegEntry   *e;

	if (g->table == NULL)
		return NULL;
	e = hash_search(g->table, &hash, HASH_FIND, NULL);
	return e != NULL && e->len == len && memcmp(e->text, text, len) == 0 ? e : NULL;
}

/* reg (of text) copied into the current generation; reg itself when another text has its hash */
static const RtReg *
gen_add(uint64 hash, const char *text, int len, const RtReg *reg)
{
	RegGen	   *g = &gens[cur];
	MemoryContext old;
	RtReg	   *copy;
	char	   *text_copy;
	RegEntry   *e;
	bool		found;

	if (g->cxt == NULL)
		gen_create(g);
	old = MemoryContextSwitchTo(g->cxt);
	copy = reg_copy(reg);
	text_copy = pnstrdup(text, len);
	MemoryContextSwitchTo(old);
	e = hash_search(g->table, &hash, HASH_ENTER, &found);
	if (found)
		return reg;				/* a 64-bit collision: that text keeps its entry */
	e->text = text_copy;
	e->len = len;
	e->reg = copy;
	return copy;
}

/*
 * The cached parse of text, added on a miss: parsed from jc when given (the jsonb that prints
 * as text: realtime_connect's own answer, no text to parse again), else from the text.
 */
static const RtReg *
reg_lookup(SyncSchema *schema, const char *text, int len, JsonbContainer *jc,
		   const char *partition, int index)
{
	uint64		hash;
	RegEntry   *e;
	const RtReg *reg;

	if (sync_realtime_registration_cache_kb == 0 || schema->generation != cached_schema_generation)
		return parse_text(schema, text, len, partition, index);
	hash = hash_bytes_extended((const unsigned char *) text, (Size) len, 0);
	if ((e = gen_find(&gens[cur], hash, text, len)) != NULL)
		reg = e->reg;
	else if ((e = gen_find(&gens[1 - cur], hash, text, len)) != NULL)
		reg = gen_add(hash, text, len, e->reg);	/* still in use: kept past the next rotation */
	else
		return gen_add(hash, text, len,
					   jc ? sync_fanout_reg_parse(schema, jc, partition, index)
					   : parse_text(schema, text, len, partition, index));
	/* the parse checked the partition of the call that added it; this call's, again */
	if (strcmp(reg->partition, partition) != 0)
		sync_fanout_malformed(index, "registration.partition");
	return reg;
}

const RtReg *
sync_fanout_reg_text(SyncSchema *schema, const char *text, int len, const char *partition, int index)
{
	return reg_lookup(schema, text, len, NULL, partition, index);
}

/*
 * A registration realtime_connect answered (reg, reg_len bytes), parsed into this backend's
 * cache now, keyed by the text a gateway reads back and sends with each fanout call: a gateway
 * that runs the socket's fanout calls on the connection that registered it (gateway/fanout.c)
 * finds it parsed, and the first commit after many sockets connect does not pay every parse.  Nothing while a
 * fanout call runs (a scope resolver registering a socket): that call's entries stay as they are.
 */
void
sync_fanout_regs_seed(SyncSchema *schema, JsonbContainer *reg, int reg_len, const char *partition)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *text;

	if (active_calls > 0 || sync_realtime_registration_cache_kb == 0)
		return;
	regs_prepare(schema);
	text = JsonbToCString(NULL, reg, reg_len);	/* as (answer -> 'registration')::text prints */

	/*
	 * A registration the parse refuses is left out, not an error of realtime_connect: the fanout
	 * call that gets it reports it as it would have.  The parse reads only the registration and
	 * the compiled schema (no lock, buffer or SPI), and an entry is added only once complete, so
	 * nothing needs a subtransaction to be undone.
	 */
	PG_TRY();
	{
		(void) reg_lookup(schema, text, (int) strlen(text), reg, partition, 0);
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		if (ed->sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE)
			PG_RE_THROW();		/* a cancel, out of memory: not the registration's */
		FlushErrorState();
		FreeErrorData(ed);
	}
	PG_END_TRY();
}

PG_FUNCTION_INFO_V1(syncular_realtime_registration_cache);

/*
 * syncular.realtime_registration_cache() -> (entries bigint, bytes bigint): this backend's
 * cache of parsed registrations (docs/realtime.md §2): the registrations it holds and the bytes
 * allocated for them (at most about syncular.realtime_registration_cache_kb plus one call's).
 */
Datum
syncular_realtime_registration_cache(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	int64		entries;
	int64		bytes;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "syncular.realtime_registration_cache: must return a record");
	sync_fanout_regs_stats(&entries, &bytes);
	values[0] = Int64GetDatum(entries);
	values[1] = Int64GetDatum(bytes);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
