/*
 * scopes.c — allowed scopes (the registered resolver), effective scopes per subscription, write
 * authorization and the scope digest (data-model-and-storage.md §3).
 *
 * The resolver is `fn(actor_id text, partition text, client_id text) RETURNS jsonb`, a map
 * variable -> array of string values, where "*" (as the value or inside the array) means any
 * value.  It is called at most once per round, inside a subtransaction: if none is registered,
 * the caller may not execute it, it raises, or it returns something that is not such a map,
 * resolution fails closed (every subscription revoked, every write forbidden).  A key outside the
 * schema's variable union is a server bug surfaced as request-level sync.invalid_subscription.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

#include "engine.h"
#include "leases.h"
#include "storage.h"

/* Order of values and keys: UTF-16 code units (the wire's map-key order); qsort/bsearch of char *. */
int
sync_cmp_utf16(const void *a, const void *b)
{
	const char *x = *(char *const *) a;
	const char *y = *(char *const *) b;

	return ssp_utf16_cmp(x, strlen(x), y, strlen(y));
}

/* Sort (UTF-16 order) and de-duplicate a list of strings in place; returns the new count. */
int
sync_sort_unique(char **v, int n)
{
	int			k = 0;

	if (n <= 1)
		return n;
	qsort(v, n, sizeof(char *), sync_cmp_utf16);
	for (int i = 0; i < n; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
	return k;
}

static bool
in_variable_union(const SyncSchema *schema, const char *var)
{
	for (int i = 0; i < schema->nvariables; i++)
		if (strcmp(schema->variables[i], var) == 0)
			return true;
	return false;
}

/* A JSON scalar as a scope value string (strings as-is, numbers and booleans rendered). */
static char *
scalar_text(JsonbValue *v)
{
	switch (v->type)
	{
		case jbvString:
			return pnstrdup(v->val.string.val, v->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		case jbvBool:
			return pstrdup(v->val.boolean ? "true" : "false");
		default:
			return NULL;
	}
}

/*
 * Convert the resolver's result.  Returns false when the shape is not a map of
 * variable -> (array of scalars | "*"); raises sync.invalid_subscription for a key outside the
 * schema's variable union.
 */
static bool
allowed_from_jsonb(const SyncSchema *schema, Jsonb *jb, SyncAllowed *a)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			n;
	int			cap;

	if (!JB_ROOT_IS_OBJECT(jb))
		return false;
	cap = JB_ROOT_COUNT(jb);
	a->vars = palloc0(sizeof(char *) * Max(cap, 1));
	a->any = palloc0(sizeof(bool) * Max(cap, 1));
	a->nvalues = palloc0(sizeof(int) * Max(cap, 1));
	a->values = palloc0(sizeof(char **) * Max(cap, 1));
	n = 0;

	it = JsonbIteratorInit(&jb->root);
	tok = JsonbIteratorNext(&it, &v, false);	/* WJB_BEGIN_OBJECT */
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		if (!in_variable_union(schema, key))
			sync_raise("sync.invalid_subscription",
					   "the scope resolver returned a variable the schema does not declare",
					   NULL);
		tok = JsonbIteratorNext(&it, &v, true);
		if (tok != WJB_VALUE)
			return false;
		a->vars[n] = key;
		if (v.type == jbvString)
		{
			if (v.val.string.len == 1 && v.val.string.val[0] == '*')
				a->any[n] = true;
			else
			{
				a->values[n] = palloc(sizeof(char *));
				a->values[n][0] = pnstrdup(v.val.string.val, v.val.string.len);
				a->nvalues[n] = 1;
			}
		}
		else if (v.type == jbvBinary && JsonContainerIsArray(v.val.binary.data))
		{
			JsonbContainer *arr = v.val.binary.data;
			int			m = JsonContainerSize(arr);
			int			k = 0;

			a->values[n] = palloc0(sizeof(char *) * Max(m, 1));
			for (int i = 0; i < m; i++)
			{
				JsonbValue *e = getIthJsonbValueFromContainer(arr, i);
				char	   *s = e ? scalar_text(e) : NULL;

				if (s == NULL)
					return false;
				if (strcmp(s, "*") == 0)
					a->any[n] = true;
				else
					a->values[n][k++] = s;
			}
			a->nvalues[n] = sync_sort_unique(a->values[n], k);
		}
		else if (v.type == jbvNull)
			a->nvalues[n] = 0;	/* nothing allowed for this variable */
		else
			return false;
		n++;
	}
	a->nvars = n;
	return true;
}

/*
 * Say in the server log why resolution failed (it fails closed: every subscription of the round
 * revoked, every write forbidden).  WARNING, with the actor and partition; the reason never
 * reaches the sync client, whose response only shows the revocation or sync.forbidden.
 */
static void
log_resolver_failure(const SyncRound *round, Oid fn, const char *reason, const ErrorData *edata)
{
	ereport(WARNING,
			(errmsg("syncular: the scope resolver failed for actor \"%s\" in partition \"%s\": %s",
					round->actor_id, round->partition, reason),
			 edata && edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 errhint("%s%sResolver %s: every subscription of the round is revoked and every write "
					 "forbidden. Hooks run with search_path = pg_catalog, pg_temp: schema-qualify "
					 "what the resolver reads.",
					 /* the resolver's own HINT (its way out) first */
					 edata && edata->hint ? edata->hint : "",
					 edata && edata->hint ? " " : "",
					 OidIsValid(fn) ? format_procedure(fn) : "(none registered)")));
}

/* The resolver's outage signal (§7.3.3): the JSON string "outage". */
static bool
is_outage(Jsonb *jb)
{
	JsonbValue	v;

	return JB_ROOT_IS_SCALAR(jb) && JsonbExtractScalar(&jb->root, &v) &&
		v.type == jbvString && v.val.string.len == 6 && memcmp(v.val.string.val, "outage", 6) == 0;
}

/*
 * A SQL-language resolver is called through a statement kept for the backend, `SELECT
 * fn($1, $2, $3)`: the planner inlines a single-SELECT body into it once (the plan cache
 * re-plans it when the function is replaced or the search_path differs), where a call through
 * fmgr parsed and planned the body again in every round (a SQL function's cached plan lives
 * for one subtransaction, and the resolver runs in one of its own).  Any other language is
 * called directly, as before: its own handler keeps what it compiled.
 */
static SPIPlanPtr resolver_plan = NULL;
static Oid	resolver_plan_fn = InvalidOid;

/* How a registered resolver is called (pg_proc, one catalog cache lookup). */
typedef struct ResolverProc
{
	Oid			rettype;
	bool		by_statement;	/* SQL language, a plain call of (text, text, text) */
	bool		read_only;		/* not VOLATILE: the statement reads the active snapshot */
} ResolverProc;

static bool
resolver_proc(Oid fn, ResolverProc *rp)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	Form_pg_proc p;
	bool		noconfig;

	if (!HeapTupleIsValid(tup))
		return false;
	p = (Form_pg_proc) GETSTRUCT(tup);
	(void) SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_proconfig, &noconfig);
	rp->rettype = p->prorettype;
	rp->by_statement = p->prolang == SQLlanguageId && p->prokind == PROKIND_FUNCTION &&
		!p->proretset && !p->prosecdef && noconfig && p->provariadic == InvalidOid &&
		p->pronargs == 3 && p->proargtypes.values[0] == TEXTOID &&
		p->proargtypes.values[1] == TEXTOID && p->proargtypes.values[2] == TEXTOID;
	rp->read_only = p->provolatile != PROVOLATILE_VOLATILE;
	ReleaseSysCache(tup);
	return true;
}

/* The kept `SELECT fn($1, $2, $3)` of resolver fn (by its schema-qualified name). */
static SPIPlanPtr
resolver_statement(Oid fn)
{
	char	   *nsp;
	char	   *name;

	if (resolver_plan != NULL && resolver_plan_fn == fn)
		return resolver_plan;
	if (resolver_plan != NULL)
		SPI_freeplan(resolver_plan);
	resolver_plan = NULL;
	nsp = get_namespace_name(get_func_namespace(fn));
	name = get_func_name(fn);
	if (nsp == NULL || name == NULL)
		elog(ERROR, "syncular: the scope resolver %u is gone", fn);
	resolver_plan = sync_storage_keep_plan(psprintf("SELECT %s($1, $2, $3)",
													quote_qualified_identifier(nsp, name)),
										   3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID},
										   CURSOR_OPT_GENERIC_PLAN);
	resolver_plan_fn = fn;
	return resolver_plan;
}

/*
 * Call the resolver: its jsonb result in the caller's context, or NULL when it returned NULL.
 * The caller is in the resolver's subtransaction.
 */
static Jsonb *
resolver_call(SyncRound *round, Oid fn, const ResolverProc *rp)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		args[3];

	args[0] = CStringGetTextDatum(round->actor_id);
	args[1] = CStringGetTextDatum(round->partition);
	args[2] = CStringGetTextDatum(round->client_id);
	if (rp->by_statement)
	{
		Jsonb	   *result = NULL;
		bool		isnull = true;
		int			rc;
		Datum		d;

		/* a connection of its own: some callers (blob and segment downloads) have none */
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "syncular: SPI_connect failed");
		rc = SPI_execute_plan(resolver_statement(fn), args, NULL, rp->read_only, 1);
		MemoryContextSwitchTo(caller);
		if (rc != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "syncular: calling the scope resolver failed: %s",
				 SPI_result_code_string(rc));
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			result = DatumGetJsonbPCopy(d);
		SPI_finish();
		MemoryContextSwitchTo(caller);
		return result;
	}
	else
	{
		LOCAL_FCINFO(fcinfo, 3);
		FmgrInfo	flinfo;
		Datum		d;
		Jsonb	   *result = NULL;
		MemoryContext old;

		fmgr_info(fn, &flinfo);
		InitFunctionCallInfoData(*fcinfo, &flinfo, 3, DEFAULT_COLLATION_OID, NULL, NULL);
		for (int i = 0; i < 3; i++)
		{
			fcinfo->args[i].value = args[i];
			fcinfo->args[i].isnull = false;
		}
		d = FunctionCallInvoke(fcinfo);
		old = MemoryContextSwitchTo(caller);
		if (!fcinfo->isnull)
			result = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(old);
		return result;
	}
}

/*
 * sync_scopes_resolve — the allowed scopes of the round's actor, resolved at most once per round
 * (memoized in round->allowed).  Never raises for a resolver failure (fails closed, with a
 * WARNING in the server log); raises sync.invalid_subscription for an undeclared variable.
 */
SyncAllowed *
sync_scopes_resolve(SyncRound *round)
{
	SyncAllowed *a;
	Oid			fn;
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Jsonb	   *volatile result = NULL;	/* volatile: set inside PG_TRY */
	volatile bool ok = false;
	const char *volatile reason = NULL;
	ErrorData  *volatile failure = NULL;

	if (round->allowed != NULL)
		return round->allowed;

	a = palloc0(sizeof(SyncAllowed));
	round->allowed = a;
	fn = round->schema ? round->schema->scope_resolver : InvalidOid;
	if (!OidIsValid(fn))
	{
		log_resolver_failure(round, fn, "no scope resolver is registered", NULL);
		a->failed = true;
		return a;
	}

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		ResolverProc rp;

		if (pg_proc_aclcheck(fn, GetUserId(), ACL_EXECUTE) != ACLCHECK_OK)
			reason = psprintf("role \"%s\" may not execute it", GetUserNameFromId(GetUserId(), false));
		else if (!resolver_proc(fn, &rp) || rp.rettype != JSONBOID)
			reason = "it does not return jsonb";
		else
		{
			result = resolver_call(round, fn, &rp);
			if (result != NULL)
				ok = true;
			else
				reason = "it returned NULL";
		}
		sync_subxact_release(caller, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(caller, owner);

		/* a cancel or shutdown is not a resolver failure */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		reason = psprintf("it raised SQLSTATE %s: %s", unpack_sql_state(edata->sqlerrcode),
						  edata->message ? edata->message : "(no message)");
		failure = edata;
		ok = false;
	}
	PG_END_TRY();

	/* §7.3.3: an outage (signalled, or a raise the operator maps to one) is served by the lease */
	if ((ok && is_outage(result)) ||
		(!ok && failure != NULL && sync_lease_on_resolver_error && sync_lease_ttl_ms > 0))
	{
		if (!ok)
			log_resolver_failure(round, fn, reason, failure);
		result = sync_leases_outage(round);
		a->leased = true;
		ok = true;
	}
	if (ok && !allowed_from_jsonb(round->schema, result, a))
	{
		ok = false;
		reason = "it returned something that is not an object of variable -> array of scalar "
			"values, a single value or \"*\"";
	}
	if (!ok)
	{
		SyncAllowed *failed = palloc0(sizeof(SyncAllowed));

		log_resolver_failure(round, fn, reason ? reason : "unknown failure", failure);
		if (failure)
			FreeErrorData(failure);
		failed->failed = true;
		round->allowed = failed;
		return failed;
	}
	return a;
}

static int
allowed_index(const SyncAllowed *allowed, const char *var)
{
	for (int i = 0; i < allowed->nvars; i++)
		if (strcmp(allowed->vars[i], var) == 0)
			return i;
	return -1;
}

bool
sync_scopes_allows(const SyncAllowed *allowed, const char *var, const char *value)
{
	int			i;

	if (allowed == NULL || allowed->failed || value == NULL || value[0] == '\0')
		return false;
	i = allowed_index(allowed, var);
	if (i < 0)
		return false;
	if (allowed->any[i])
		return true;
	for (int k = 0; k < allowed->nvalues[i]; k++)
		if (strcmp(allowed->values[i][k], value) == 0)
			return true;
	return false;
}

/*
 * sync_scopes_effective — what one subscription to `table` may receive.
 *
 * Requested variables (§3.2 steps 4-5): requested ∩ allowed; revoked when resolution failed,
 * when a requested key has no allowed value, or when nothing was requested.  Then this project's
 * read rule, stricter than the reference: every other declared variable of the table is
 * restricted to the grant's values ("*": any value), and a declared variable the grant allows
 * nothing of (absent, null or an empty list) revokes the subscription, since the actor could
 * write no row of the table either (§3.4 step 3: all declared keys are required).  Keys come out
 * sorted within each part (the requested map is sorted by the decoder, the table's variables
 * follow declaration order); value lists sorted (UTF-16 order) and de-duplicated.
 */
SyncEffective *
sync_scopes_effective(const SyncAllowed *allowed, const SyncTable *table,
					  const SspScopeMap *requested)
{
	SyncEffective *e = palloc0(sizeof(SyncEffective));
	uint32		n = requested->n;
	int			cap;

	if (allowed == NULL || allowed->failed || table == NULL || n == 0)
	{
		e->revoked = true;
		return e;
	}
	cap = (int) n + table->nscopes;
	e->vars = palloc0(sizeof(char *) * cap);
	e->any = palloc0(sizeof(bool) * cap);
	e->nvalues = palloc0(sizeof(int) * cap);
	e->values = palloc0(sizeof(char **) * cap);
	for (uint32 i = 0; i < n; i++)
	{
		const SspScopeEntry *req = &requested->entries[i];
		char	   *var = pnstrdup(req->key.ptr, req->key.len);
		int			ai = allowed_index(allowed, var);
		int			k = 0;

		if (ai < 0)
		{
			e->revoked = true;
			return e;
		}
		e->vars[i] = var;
		e->values[i] = palloc0(sizeof(char *) * Max(req->nvalues, 1));
		for (uint32 j = 0; j < req->nvalues; j++)
		{
			char	   *val = pnstrdup(req->values[j].ptr, req->values[j].len);

			if (allowed->any[ai] || sync_scopes_allows(allowed, var, val))
				e->values[i][k++] = val;
		}
		e->nvalues[i] = sync_sort_unique(e->values[i], k);
		if (e->nvalues[i] == 0)
		{
			e->revoked = true;
			return e;
		}
	}
	e->nvars = (int) n;
	e->nall = (int) n;

	/* the grant restriction on the declared variables the subscription did not request */
	for (int s = 0; s < table->nscopes; s++)
	{
		const char *var = table->scopes[s].variable;
		bool		seen = false;
		int			ai;
		int			k = e->nall;

		for (int i = 0; i < e->nall && !seen; i++)
			seen = strcmp(e->vars[i], var) == 0;
		if (seen)
			continue;
		ai = allowed_index(allowed, var);
		if (ai < 0 || (!allowed->any[ai] && allowed->nvalues[ai] == 0))
		{
			e->revoked = true;
			return e;
		}
		e->vars[k] = pstrdup(var);
		e->any[k] = allowed->any[ai];
		if (!e->any[k])
		{
			e->nvalues[k] = allowed->nvalues[ai];	/* sorted, de-duplicated */
			e->values[k] = palloc(sizeof(char *) * e->nvalues[k]);
			for (int v = 0; v < e->nvalues[k]; v++)
				e->values[k][v] = pstrdup(allowed->values[ai][v]);
		}
		e->nall++;
	}
	return e;
}

/*
 * sync_scope_entries_copy — a deep copy, in the current context, of n scope entries held as the
 * parallel arrays SyncAllowed and SyncEffective both use (variable, "*" granted, values), stored
 * through the *_out pointers.  For a grant or an effective map that must outlive the memory it
 * was built in: realtime_grants.c's grant cache and fanout_regs.c's registration cache
 * (docs/realtime.md §2).  Every array gets at least one element, as the builders allocate them.
 */
void
sync_scope_entries_copy(int n, char *const *vars, const bool *any, const int *nvalues,
						char **const *values, char ***vars_out, bool **any_out,
						int **nvalues_out, char ****values_out)
{
	char	  **cv = palloc0(sizeof(char *) * Max(n, 1));
	bool	   *ca = palloc0(sizeof(bool) * Max(n, 1));
	int		   *cn = palloc0(sizeof(int) * Max(n, 1));
	char	 ***cval = palloc0(sizeof(char **) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		cv[i] = pstrdup(vars[i]);
		ca[i] = any[i];
		cn[i] = nvalues[i];
		cval[i] = palloc0(sizeof(char *) * Max(nvalues[i], 1));
		for (int k = 0; k < nvalues[i]; k++)
			cval[i][k] = pstrdup(values[i][k]);
	}
	*vars_out = cv;
	*any_out = ca;
	*nvalues_out = cn;
	*values_out = cval;
}

/* JSON string escaping as JSON.stringify does it (UTF-8 passes through). */
static void
append_json_string(StringInfo buf, const char *s)
{
	appendStringInfoChar(buf, '"');
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		switch (*p)
		{
			case '"':
				appendStringInfoString(buf, "\\\"");
				break;
			case '\\':
				appendStringInfoString(buf, "\\\\");
				break;
			case '\b':
				appendStringInfoString(buf, "\\b");
				break;
			case '\f':
				appendStringInfoString(buf, "\\f");
				break;
			case '\n':
				appendStringInfoString(buf, "\\n");
				break;
			case '\r':
				appendStringInfoString(buf, "\\r");
				break;
			case '\t':
				appendStringInfoString(buf, "\\t");
				break;
			default:
				if (*p < 0x20)
					appendStringInfo(buf, "\\u%04x", *p);
				else
					appendStringInfoChar(buf, (char) *p);
		}
	}
	appendStringInfoChar(buf, '"');
}

/*
 * Canonical JSON of an effective map: keys and values in UTF-16 order, no whitespace.  Only the
 * requested entries [0, nvars): the map the wire echoes.  The grant restriction on unrequested
 * variables is not part of it, so a digest does not bind it: the segment store binds it with
 * a second digest (sync_grant_digest, segstore.c) before sharing pages between actors.
 */
char *
sync_effective_json(const SyncEffective *effective)
{
	StringInfoData buf;
	char	  **keys;
	int		   *order;
	int			n = effective->revoked ? 0 : effective->nvars;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	keys = palloc0(sizeof(char *) * Max(n, 1));
	order = palloc0(sizeof(int) * Max(n, 1));
	for (int i = 0; i < n; i++)
		keys[i] = effective->vars[i];
	qsort(keys, n, sizeof(char *), sync_cmp_utf16);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (effective->vars[j] == keys[i])
				order[i] = j;
	for (int i = 0; i < n; i++)
	{
		int			j = order[i];
		char	  **vals = palloc(sizeof(char *) * Max(effective->nvalues[j], 1));
		int			m;

		memcpy(vals, effective->values[j], sizeof(char *) * effective->nvalues[j]);
		m = sync_sort_unique(vals, effective->nvalues[j]);
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		append_json_string(&buf, keys[i]);
		appendStringInfoString(&buf, ":[");
		for (int k = 0; k < m; k++)
		{
			if (k > 0)
				appendStringInfoChar(&buf, ',');
			append_json_string(&buf, vals[k]);
		}
		appendStringInfoChar(&buf, ']');
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* Lowercase SHA-256 hex (64 characters and a NUL into hex) of len bytes of data. */
void
sync_sha256_hex(const uint8 *data, size_t len, char *hex)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (ctx == NULL ||
		pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, data, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
	{
		if (ctx)
			pg_cryptohash_free(ctx);
		elog(ERROR, "syncular: SHA-256 failed");
	}
	pg_cryptohash_free(ctx);
	for (int i = 0; i < PG_SHA256_DIGEST_LENGTH; i++)
		snprintf(hex + i * 2, 3, "%02x", digest[i]);
}

/* Lowercase SHA-256 hex of the canonical JSON of the effective map (§3.5). */
char *
sync_scope_digest(const SyncEffective *effective)
{
	char	   *json = sync_effective_json(effective);
	char	   *hex = palloc(PG_SHA256_DIGEST_LENGTH * 2 + 1);

	sync_sha256_hex((const uint8 *) json, strlen(json), hex);
	return hex;
}

/*
 * Matching rule (§3.2) under this project's read rule: for every declared variable of the
 * subscription's table (every entry of `effective`, requested or not), the stored scope value is
 * present, non-empty and in that entry's list, or the entry allows any value.  A stored map that
 * is not an object, or lacks a declared variable, does not match (a write to that row would be
 * denied too, §3.4 step 2).
 */
bool
sync_scopes_match(const SyncEffective *effective, Jsonb *stored_scopes)
{
	if (effective == NULL || effective->revoked || effective->nvars == 0 ||
		stored_scopes == NULL || !JB_ROOT_IS_OBJECT(stored_scopes))
		return false;
	for (int i = 0; i < effective->nall; i++)
	{
		JsonbValue	v;
		bool		found = false;

		if (getKeyJsonValueFromContainer(&stored_scopes->root, effective->vars[i],
										 strlen(effective->vars[i]), &v) == NULL ||
			v.type != jbvString || v.val.string.len == 0)
			return false;
		if (effective->any[i])
			continue;
		for (int k = 0; k < effective->nvalues[i]; k++)
		{
			const char *want = effective->values[i][k];

			if (strlen(want) == (size_t) v.val.string.len &&
				memcmp(want, v.val.string.val, v.val.string.len) == 0)
			{
				found = true;
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

const char *
sync_row_scopes_lookup(const SyncRowScopes *scopes, const char *var)
{
	for (int i = 0; i < scopes->n; i++)
		if (strcmp(scopes->vars[i], var) == 0)
			return scopes->values[i];
	return NULL;
}

/*
 * Write authorization (§3.4 step 3): every declared variable of the table has a non-empty value
 * in `scopes` that the allowed map permits.  Fails closed when resolution failed.
 */
bool
sync_scopes_authorize_write(const SyncAllowed *allowed, const SyncTable *table,
							const SyncRowScopes *scopes)
{
	if (allowed == NULL || allowed->failed)
		return false;
	for (int i = 0; i < table->nscopes; i++)
	{
		const char *var = table->scopes[i].variable;

		if (!sync_scopes_allows(allowed, var, sync_row_scopes_lookup(scopes, var)))
			return false;
	}
	return true;
}

/* {"var":"value",...} in variable order (the jsonb form normalizes order anyway). */
char *
sync_row_scopes_json(const SyncRowScopes *scopes)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < scopes->n; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		append_json_string(&buf, scopes->vars[i]);
		appendStringInfoChar(&buf, ':');
		append_json_string(&buf, scopes->values[i]);
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/*
 * The same object as a jsonb value, built directly (what jsonb_in of sync_row_scopes_json would
 * give, without printing and parsing the text: the capture's row trigger makes one per row).
 */
Jsonb *
sync_row_scopes_jsonb(const SyncRowScopes *scopes)
{
	JsonbParseState *state = NULL;
	JsonbValue	k;
	JsonbValue	v;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < scopes->n; i++)
	{
		k.type = jbvString;
		k.val.string.val = scopes->vars[i];
		k.val.string.len = strlen(scopes->vars[i]);
		pushJsonbValue(&state, WJB_KEY, &k);
		v.type = jbvString;
		v.val.string.val = scopes->values[i];
		v.val.string.len = strlen(scopes->values[i]);
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* The stored `_sync_scopes` / change scopes object as a SyncRowScopes (string values only). */
void
sync_row_scopes_from_jsonb(Jsonb *jb, SyncRowScopes *out)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			cap;
	char	   *key = NULL;

	out->n = 0;
	out->vars = NULL;
	out->values = NULL;
	if (jb == NULL || !JB_ROOT_IS_OBJECT(jb))
		return;
	cap = JB_ROOT_COUNT(jb);
	out->vars = palloc0(sizeof(char *) * Max(cap, 1));
	out->values = palloc0(sizeof(char *) * Max(cap, 1));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE && key != NULL)
		{
			char	   *val = scalar_text(&v);

			if (val != NULL)
			{
				out->vars[out->n] = key;
				out->values[out->n] = val;
				out->n++;
			}
			key = NULL;
		}
	}
}
