/*
 * schema.c — the compiled schema (`syncular.sync_settings.compiled`, docs/compiled-schema.md)
 * loaded into a per-backend cache.
 *
 * The cache lives in its own memory context under CacheMemoryContext.  Its key is the settings
 * row's xmin and ctid: any UPDATE of the row (ensure_schema, a hook registration), in this
 * transaction or another one, produces a new row version and therefore a reload; a rolled-back
 * change makes the old version visible again, which also differs from the cached key.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/catcache.h"
#include "utils/memutils.h"

#include "engine.h"
#include "storage.h"

uint64		sync_schema_generation = 0;

static MemoryContext schema_cxt = NULL;
static SyncSchema *cached_schema = NULL;
static bool cached_valid = false;	/* cached_key describes cached_schema (maybe NULL) */
static char *cached_key = NULL;		/* "xmin:ctid", in TopMemoryContext */
/* cached_key parsed: the settings row version the cache was built from */
static TransactionId cached_xmin = InvalidTransactionId;
static ItemPointerData cached_tid;

static void
schema_corrupt(const char *what)
{
	sync_raise("sync.internal_error", "the compiled schema is unreadable",
			   psprintf("{\"reason\": \"%s\"}", what));
}

static bool
jb_get(JsonbContainer *c, const char *key, JsonbValue *out)
{
	JsonbValue *v;

	if (c == NULL || !JsonContainerIsObject(c))
		return false;
	v = getKeyJsonValueFromContainer(c, key, strlen(key), out);
	return v != NULL;
}

static char *
jb_text(JsonbContainer *c, const char *key, bool required)
{
	JsonbValue	v;

	if (!jb_get(c, key, &v) || v.type == jbvNull)
	{
		if (required)
			schema_corrupt(key);
		return NULL;
	}
	if (v.type != jbvString)
		schema_corrupt(key);
	return pnstrdup(v.val.string.val, v.val.string.len);
}

static int64
jb_int(JsonbContainer *c, const char *key)
{
	JsonbValue	v;

	if (!jb_get(c, key, &v) || v.type != jbvNumeric)
		schema_corrupt(key);
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v.val.numeric)));
}

static bool
jb_bool(JsonbContainer *c, const char *key, bool dflt)
{
	JsonbValue	v;

	if (!jb_get(c, key, &v) || v.type == jbvNull)
		return dflt;
	if (v.type != jbvBool)
		schema_corrupt(key);
	return v.val.boolean;
}

/* An array member as a container (NULL when absent or null). */
static JsonbContainer *
jb_array(JsonbContainer *c, const char *key, int *n)
{
	JsonbValue	v;

	*n = 0;
	if (!jb_get(c, key, &v) || v.type == jbvNull)
		return NULL;
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		schema_corrupt(key);
	*n = JsonContainerSize(v.val.binary.data);
	return v.val.binary.data;
}

static JsonbContainer *
jb_item_object(JsonbContainer *arr, int i)
{
	JsonbValue *v = getIthJsonbValueFromContainer(arr, i);

	if (v == NULL || v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		schema_corrupt("array item");
	return v->val.binary.data;
}

static uint8
column_type_tag(const char *t)
{
	static const char *const names[] = {"string", "integer", "float", "boolean", "json",
	"bytes", "blob_ref", "crdt"};

	for (int i = 0; i < (int) lengthof(names); i++)
		if (strcmp(t, names[i]) == 0)
			return (uint8) (i + 1);
	schema_corrupt("column type");
	return 0;
}

static int
cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The table's columns (compiled "columns"), with their codec view. */
static void
build_columns(SyncTable *t, JsonbContainer *tj)
{
	int			n;
	JsonbContainer *arr = jb_array(tj, "columns", &n);

	if (n < 1 || n > 65535)
		schema_corrupt("columns");
	t->ncolumns = n;
	t->columns = palloc0(sizeof(SyncColumn) * n);
	t->codec_columns = palloc0(sizeof(SspColumn) * n);
	for (int ci = 0; ci < n; ci++)
	{
		JsonbContainer *cj = jb_item_object(arr, ci);
		SyncColumn *c = &t->columns[ci];
		char	   *type = jb_text(cj, "type", true);

		c->name = jb_text(cj, "name", true);
		c->type = column_type_tag(type);
		c->nullable = jb_bool(cj, "nullable", false);
		c->encrypted = jb_bool(cj, "encrypted", false);
		c->crdt_type = jb_text(cj, "crdtType", false);
		t->codec_columns[ci].name = c->name;
		t->codec_columns[ci].type = c->type;
		t->codec_columns[ci].nullable = c->nullable;
		t->codec_columns[ci].name_len = (uint32) strlen(c->name);
	}
	if (t->pk_index < 0 || t->pk_index >= t->ncolumns)
		schema_corrupt("pkIndex");
}

/* The table's scopes (compiled "scopes"): pattern, variable and the column it reads. */
static void
build_scopes(SyncTable *t, JsonbContainer *tj)
{
	int			n;
	JsonbContainer *arr = jb_array(tj, "scopes", &n);

	t->nscopes = n;
	t->scopes = palloc0(sizeof(SyncScope) * Max(n, 1));
	for (int si = 0; si < n; si++)
	{
		JsonbContainer *sj = jb_item_object(arr, si);
		SyncScope  *sc = &t->scopes[si];

		sc->pattern = jb_text(sj, "pattern", false);
		sc->prefix = jb_text(sj, "prefix", false);
		sc->variable = jb_text(sj, "variable", true);
		sc->column = jb_text(sj, "column", true);
		sc->column_index = (int) jb_int(sj, "columnIndex");
		if (sc->column_index < 0 || sc->column_index >= t->ncolumns)
			schema_corrupt("columnIndex");
	}
}

/* The table's declared references (compiled "references"); onDelete defaults to restrict. */
static void
build_references(SyncTable *t, JsonbContainer *tj)
{
	int			n;
	JsonbContainer *arr = jb_array(tj, "references", &n);

	t->nreferences = n;
	t->references = palloc0(sizeof(SyncReference) * Max(n, 1));
	for (int ri = 0; ri < n; ri++)
	{
		JsonbContainer *rj = jb_item_object(arr, ri);
		SyncReference *r = &t->references[ri];

		r->column = jb_text(rj, "column", true);
		r->column_index = (int) jb_int(rj, "columnIndex");
		r->parent_table = jb_text(rj, "parentTable", true);
		r->on_delete = jb_text(rj, "onDelete", false);
		if (r->on_delete == NULL)
			r->on_delete = pstrdup("restrict");
	}
}

/*
 * The declared indexes of a materialized table (compiled "indexes"): push_values.c bounds their
 * key bytes (SYNC_MAX_INDEX_KEY_BYTES).
 */
static void
build_indexes(SyncTable *t, JsonbContainer *tj)
{
	int			n;
	JsonbContainer *arr = jb_array(tj, "indexes", &n);

	t->nindexes = t->materialize ? n : 0;
	t->indexes = palloc0(sizeof(SyncIndex) * Max(t->nindexes, 1));
	for (int xi = 0; xi < t->nindexes; xi++)
	{
		JsonbContainer *xj = jb_item_object(arr, xi);
		SyncIndex  *ix = &t->indexes[xi];
		int			nc;
		JsonbContainer *cols = jb_array(xj, "columns", &nc);

		ix->column_index = palloc0(sizeof(int) * Max(nc, 1));
		for (int k = 0; k < nc; k++)
		{
			JsonbValue *cv = getIthJsonbValueFromContainer(cols, k);

			if (cv == NULL || cv->type != jbvString)
				schema_corrupt("index column");
			for (int ci = 0; ci < t->ncolumns; ci++)
				if (strlen(t->columns[ci].name) == (size_t) cv->val.string.len &&
					memcmp(t->columns[ci].name, cv->val.string.val, cv->val.string.len) == 0)
					ix->column_index[ix->ncolumns++] = ci;
		}
	}
}

/* The sorted, de-duplicated union of the tables' scope variables. */
static void
union_variables(SyncSchema *s)
{
	int			nvars = 0;
	char	  **all;
	int			k = 0;

	for (int ti = 0; ti < s->ntables; ti++)
		nvars += s->tables[ti].nscopes;
	s->variables = palloc0(sizeof(char *) * Max(nvars, 1));
	s->nvariables = 0;
	all = palloc0(sizeof(char *) * Max(nvars, 1));
	for (int ti = 0; ti < s->ntables; ti++)
		for (int si = 0; si < s->tables[ti].nscopes; si++)
			all[k++] = s->tables[ti].scopes[si].variable;
	qsort(all, k, sizeof(char *), cmp_cstr);
	for (int i = 0; i < k; i++)
		if (s->nvariables == 0 || strcmp(s->variables[s->nvariables - 1], all[i]) != 0)
			s->variables[s->nvariables++] = all[i];
}

static SyncSchema *
build_schema(Jsonb *compiled, Oid resolver, Oid validator, Oid planner)
{
	JsonbContainer *root = &compiled->root;
	SyncSchema *s = palloc0(sizeof(SyncSchema));
	JsonbContainer *tables;
	int			ntables;

	s->version = (int32) jb_int(root, "version");
	s->app_schema = jb_text(root, "appSchema", true);
	s->scope_resolver = resolver;
	s->commit_validator = validator;
	s->reaction_planner = planner;

	tables = jb_array(root, "tables", &ntables);
	s->ntables = ntables;
	s->tables = palloc0(sizeof(SyncTable) * Max(ntables, 1));
	for (int ti = 0; ti < ntables; ti++)
	{
		JsonbContainer *tj = jb_item_object(tables, ti);
		SyncTable  *t = &s->tables[ti];

		t->name = jb_text(tj, "name", true);
		t->qualified = psprintf("%s.%s", quote_identifier(s->app_schema),
								quote_identifier(t->name));
		t->materialize = jb_bool(tj, "materialize", true);
		t->pk_index = (int) jb_int(tj, "pkIndex");
		build_columns(t, tj);
		build_scopes(t, tj);
		build_references(t, tj);
		build_indexes(t, tj);
	}
	union_variables(s);
	return s;
}

/*
 * Whether the settings row version the cache was built from is still the one the active
 * snapshot sees: the check of every round, by one fetch of that tuple instead of a statement
 * (storage_meta.c).  false when it cannot tell (no cache): the caller reads the row.
 */
static bool
cached_version_current(void)
{
	if (!cached_valid || cached_key == NULL || !TransactionIdIsValid(cached_xmin))
		return false;
	return sync_storage_settings_version_visible(cached_xmin, &cached_tid);
}

SyncSchema *
sync_schema_get(void)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *volatile key = NULL;	/* volatile: live across PG_TRY below */
	Jsonb	   *volatile compiled = NULL;
	Oid			hooks[3] = {InvalidOid, InvalidOid, InvalidOid};
	SyncSettingsRow row;
	bool		found;

	if (cached_version_current())
		return cached_schema;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(caller);	/* the row's key and schema are the caller's */
	found = sync_storage_settings_read(cached_valid ? cached_key : NULL, &row);
	if (found && !row.changed)
	{
		SPI_finish();
		return cached_schema;
	}
	if (!found && cached_valid && cached_key == NULL)
	{
		SPI_finish();
		return cached_schema;	/* still no settings row */
	}
	if (found)
	{
		key = row.key;
		compiled = row.compiled;
		memcpy(hooks, row.hooks, sizeof(hooks));
	}
	SPI_finish();

	/* rebuild */
	if (schema_cxt != NULL)
	{
		MemoryContextDelete(schema_cxt);
		schema_cxt = NULL;
	}
	cached_schema = NULL;
	cached_valid = false;
	if (cached_key != NULL)
	{
		pfree(cached_key);
		cached_key = NULL;
	}
	sync_schema_generation++;

	if (compiled != NULL)
	{
		MemoryContext cxt;
		MemoryContext old;

		if (CacheMemoryContext == NULL)
			CreateCacheMemoryContext();
		cxt = AllocSetContextCreate(CacheMemoryContext, "syncular compiled schema",
									ALLOCSET_SMALL_SIZES);
		old = MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			cached_schema = build_schema(compiled, hooks[0], hooks[1], hooks[2]);
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(old);
			MemoryContextDelete(cxt);
			PG_RE_THROW();
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		schema_cxt = cxt;
		cached_schema->generation = sync_schema_generation;
	}
	cached_xmin = InvalidTransactionId;
	if (key != NULL)
	{
		unsigned int xmin;
		unsigned int block;
		unsigned int offset;

		cached_key = MemoryContextStrdup(TopMemoryContext, key);
		/* "xmin:(block,offset)", as xid and tid text out write them */
		if (sscanf(key, "%u:(%u,%u)", &xmin, &block, &offset) == 3)
		{
			cached_xmin = (TransactionId) xmin;
			ItemPointerSet(&cached_tid, (BlockNumber) block, (OffsetNumber) offset);
		}
	}
	cached_valid = true;
	return cached_schema;
}

SyncTable *
sync_schema_table(SyncSchema *schema, const char *name)
{
	int			i = sync_schema_table_index(schema, name);

	return i < 0 ? NULL : &schema->tables[i];
}

int
sync_schema_table_index(SyncSchema *schema, const char *name)
{
	if (schema == NULL || name == NULL)
		return -1;
	for (int i = 0; i < schema->ntables; i++)
		if (strcmp(schema->tables[i].name, name) == 0)
			return i;
	return -1;
}
