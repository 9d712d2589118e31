/*
 * schema_ensure.c — the body of syncular.ensure_schema: compile, compare with the stored marker,
 * create / verify / migrate, bump.
 *
 *   syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
 *       RETURNS jsonb
 *
 * shared/reference/data-model-and-storage.md §2 (compile, schema_compile.c), §4 (the marker
 * sync_schema_meta), §6 (synced tables and indexes), §7 (the append-only bump) and
 * barrier-rfc0007.md §3.4 / §6.1 (checkpoint barrier, same-version verification).  The compile
 * runs first, without a lock, so an invalid schema is refused without waiting; everything that
 * plans the work is read again under the migration lock (LOCK TABLE syncular.sync_partitions IN
 * EXCLUSIVE MODE; a hot standby only verifies).  A bump is planned completely (every
 * append-only refusal) before its first DDL.
 *
 * The DDL helpers and RFC 0007 hooks stay SQL functions (the hooks are replaced by later parts of
 * the install script) and are called through SPI with their values as parameters; the DDL issued
 * here quotes every identifier with quote_identifier.  The result is built in SPI's context and
 * handed to the caller with SPI_datumTransfer.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "engine.h"
#include "schema_compile.h"
#include "storage.h"

/* A growable list of names, in the order they are added. */
typedef struct Names
{
	char	  **v;
	int			n;
	int			cap;
} Names;

/* What one ensure_schema call works on. */
typedef struct Ensure
{
	Jsonb	   *compiled;
	Jsonb	   *checkpoints;
	int32		version;
	Names		names;			/* compiled table names, in order */
	char	   *target;			/* the app schema */
	Oid			nsp;
	bool		has_stored;
	int64		stored_ver;
	char	   *stored_txt;
} Ensure;

static void
names_add(Names *l, const char *s)
{
	if (l->n == l->cap)
	{
		l->cap = Max(l->cap * 2, 8);
		l->v = l->v ? repalloc(l->v, sizeof(char *) * l->cap) : palloc(sizeof(char *) * l->cap);
	}
	l->v[l->n++] = pstrdup(s);
}

static bool
names_has(const Names *l, const char *s)
{
	for (int i = 0; s != NULL && i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

/* The JSON array text of a list: to_jsonb(text[]). */
static char *
names_json(const Names *l)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoChar(&b, '[');
	for (int i = 0; i < l->n; i++)
		appendStringInfo(&b, "%s%s", i ? ", " : "", sc_quote(l->v[i]));
	appendStringInfoChar(&b, ']');
	return b.data;
}

static Datum
names_array(const Names *l)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(l->n, 1));

	for (int i = 0; i < l->n; i++)
		d[i] = CStringGetTextDatum(l->v[i]);
	return PointerGetDatum(construct_array(d, l->n, TEXTOID, -1, false, TYPALIGN_INT));
}

static Jsonb *
json_to_jsonb(const char *text)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* Raises a catalogue error whose details are the JSON object text `details`, as jsonb prints it. */
static void
raise_json(const char *code, const char *message, const char *details, const char *hint)
{
	Jsonb	   *j = json_to_jsonb(details);

	sync_raise_hint(code, message, JsonbToCString(NULL, &j->root, VARSIZE(j)), hint);
}

/* ---- SPI ------------------------------------------------------------------------------------ */

/* Runs one statement with parameters (types, values; none NULL); returns SPI_processed. */
static uint64
run(const char *sql, int n, Oid *types, Datum *values)
{
	int			rc = SPI_execute_with_args(sql, n, types, values, NULL, false, 0);

	if (rc < 0)
		elog(ERROR, "syncular ensure_schema: SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/* Column `col` (1-based) of row `row` of the last result as text, NULL for NULL. */
static char *
got_text(uint64 row, int col)
{
	return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);
}

/* `fn`(target text, table text) */
static void
call_target_table(const char *fn, const Ensure *e, const char *tname)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		v[2] = {CStringGetTextDatum(e->target), CStringGetTextDatum(tname)};

	run(psprintf("SELECT syncular.%s($1, $2)", fn), 2, types, v);
}

/* `fn`(target text, compiled-or-table jsonb) */
static void
call_target_jsonb(const char *fn, const Ensure *e, Jsonb *j)
{
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		v[2] = {CStringGetTextDatum(e->target), JsonbPGetDatum(j)};

	run(psprintf("SELECT syncular.%s($1, $2)", fn), 2, types, v);
}

/* `fn`(compiled jsonb) */
static void
call_compiled(const char *fn, const Ensure *e)
{
	Oid			types[1] = {JSONBOID};
	Datum		v[1] = {JsonbPGetDatum(e->compiled)};

	run(psprintf("SELECT syncular.%s($1)", fn), 1, types, v);
}

/* `fn`(checkpoints jsonb, version integer): the RFC 0007 hooks */
static void
call_checkpoints(const char *fn, const Ensure *e)
{
	Oid			types[2] = {JSONBOID, INT4OID};
	Datum		v[2] = {JsonbPGetDatum(e->checkpoints), Int32GetDatum(e->version)};

	run(psprintf("SELECT syncular.%s($1, $2)", fn), 2, types, v);
}

static void
synced_ddl(bool on)
{
	run(on ? "SELECT syncular._synced_ddl(true)" : "SELECT syncular._synced_ddl(false)", 0, NULL, NULL);
}

/* DDL on target.tname; `rest` is already quoted. */
static void
alter_table(const Ensure *e, const char *tname, const char *rest)
{
	run(psprintf("ALTER TABLE %s.%s %s", quote_identifier(e->target), quote_identifier(tname), rest),
		0, NULL, NULL);
}

/* ---- the compiled schema, read back ----------------------------------------------------- */

static JsonbValue *
compiled_table(const Ensure *e, int i)
{
	JsonbValue *tables = sc_member(&e->compiled->root, "tables");

	return getIthJsonbValueFromContainer(sc_container(tables), i);
}

static Jsonb *
value_jsonb(JsonbValue *v)
{
	return JsonbValueToJsonb(v);
}

/* `obj ->> key`: a string's text, NULL for JSON null or absent or obj not an object, else its JSON text. */
static char *
member_text(const JsonbValue *obj, const char *key)
{
	JsonbValue *v;

	if (obj == NULL || !sc_is(obj, "object"))
		return NULL;
	v = sc_member(sc_container(obj), key);
	if (v == NULL || v->type == jbvNull)
		return NULL;
	if (v->type == jbvString)
		return pnstrdup(v->val.string.val, v->val.string.len);
	return sc_json(v);
}

/* Element i of an array value, or NULL past its end. */
static JsonbValue *
nth(const JsonbValue *arr, int i)
{
	if (arr == NULL || i >= (int) JsonContainerSize(sc_container(arr)))
		return NULL;
	return getIthJsonbValueFromContainer(sc_container(arr), i);
}

static int
length(const JsonbValue *arr)
{
	return arr == NULL ? 0 : JsonContainerSize(sc_container(arr));
}

static bool
member_equal(const JsonbValue *a, const JsonbValue *b, const char *key)
{
	JsonbValue *x = sc_member(sc_container(a), key);
	JsonbValue *y = sc_member(sc_container(b), key);

	return x != NULL && y != NULL &&
		DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(value_jsonb(x)),
										 JsonbPGetDatum(value_jsonb(y))));
}

/* syncular._layout_entry_equal: equal name, type and nullable; false when either is missing. */
static bool
layout_entry_equal(const JsonbValue *a, const JsonbValue *b)
{
	return a != NULL && b != NULL && sc_is(a, "object") && sc_is(b, "object") &&
		member_equal(a, b, "name") && member_equal(a, b, "type") && member_equal(a, b, "nullable");
}

/* ---- the app schema ---------------------------------------------------------------------- */

static void
resolve_target(Ensure *e, const char *app_schema, const char *registered, const char *caller)
{
	const char *t;

	if (registered != NULL && app_schema != NULL && strcmp(app_schema, registered) != 0)
		raise_json("sync.storage.schema_invalid", "a different app schema is already registered in this database",
				   psprintf("{\"rule\": \"app_schema\", \"registeredSchema\": %s, \"appSchema\": %s}",
							sc_quote(registered), sc_quote(app_schema)),
				   psprintf("One app schema per database: pass app_schema => %s (or omit it), or undo the "
							"registration first with SELECT syncular.unregister_schema(%s).",
							quote_literal_cstr(registered), quote_literal_cstr(registered)));
	t = app_schema ? app_schema : registered ? registered : caller;
	if (t == NULL)
		sc_invalid("no app schema: pass app_schema or set a search_path", "app_schema", NULL, NULL, NULL);
	if (strcmp(t, "syncular") == 0 || strcmp(t, "pg_catalog") == 0 ||
		strcmp(t, "information_schema") == 0 || strncmp(t, "pg_", 3) == 0)
		sc_invalid("the app schema cannot be a system or extension schema", "app_schema", NULL, NULL,
				   psprintf("\"appSchema\": %s", sc_quote(t)));
	e->nsp = get_namespace_oid(t, true);
	if (!OidIsValid(e->nsp))
		sc_invalid("the app schema does not exist", "app_schema", NULL, NULL,
				   psprintf("\"appSchema\": %s", sc_quote(t)));
	e->target = pstrdup(t);
}

/* compiled with appSchema = the target (jsonb_set(compiled, '{appSchema}', to_jsonb(target))) */
static void
set_app_schema(Ensure *e)
{
	Datum		path = CStringGetTextDatum("appSchema");
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = e->target;
	v.val.string.len = strlen(e->target);
	e->compiled = DatumGetJsonbP(DirectFunctionCall4(jsonb_set, JsonbPGetDatum(e->compiled),
													 PointerGetDatum(construct_array(&path, 1, TEXTOID, -1, false, TYPALIGN_INT)),
													 JsonbPGetDatum(JsonbValueToJsonb(&v)), BoolGetDatum(true)));
}

/* The registered app schema and the marker, read under the lock. */
static void
read_state(Ensure *e, const char *app_schema, const char *caller)
{
	char	   *registered = sync_storage_settings_app_schema();

	e->has_stored = sync_storage_schema_meta_read(&e->stored_ver, &e->stored_txt);
	resolve_target(e, app_schema, registered, caller);
	set_app_schema(e);
}

/* ---- verify, create --------------------------------------------------------------------- */

static char *
result_json(const Ensure *e, const char *action)
{
	return psprintf("{\"schemaVersion\": %d, \"action\": \"%s\", \"appSchema\": %s, \"tables\": %s",
					e->version, action, sc_quote(e->target), names_json(&e->names));
}

static Jsonb *
verify(Ensure *e)
{
	Oid			types[2] = {JSONBOID, TEXTOID};
	Datum		v[2] = {JsonbPGetDatum(e->compiled), CStringGetTextDatum(e->stored_txt ? e->stored_txt : "")};

	run("SELECT syncular._verify_stored_layouts($1, syncular._parse_layouts($2))", 2, types, v);
	call_compiled("_check_physical_layout", e);
	call_compiled("_check_capture", e);
	return json_to_jsonb(psprintf("%s}", result_json(e, "verified")));
}

/* A table ensure_schema is about to create must not be in the way. */
static void
refuse_existing(const Ensure *e, const char *tname)
{
	if (!OidIsValid(get_relname_relid(tname, e->nsp)))
		return;
	raise_json("sync.storage.schema_invalid", "a synced table to create already exists in the app schema",
			   psprintf("{\"table\": %s, \"rule\": \"table_exists\"}", sc_quote(tname)),
			   psprintf("ensure_schema creates its synced tables: drop or rename %s.%s (a table kept by "
						"syncular.unregister_schema or DROP EXTENSION), or register into another app_schema.",
						quote_identifier(e->target), quote_identifier(tname)));
}

static void
write_settings(const Ensure *e)
{
	sync_storage_settings_write(e->target, e->compiled);
}

/* The marker, then the RFC 0007 declarations (checkpoints, writer fence). */
static void
write_marker(const Ensure *e)
{
	sync_storage_schema_meta_write(e->version, e->compiled);
	call_checkpoints("_install_checkpoints", e);
}

static Jsonb *
create_all(Ensure *e)
{
	for (int i = 0; i < e->names.n; i++)
		refuse_existing(e, e->names.v[i]);
	for (int i = 0; i < e->names.n; i++)
		call_target_jsonb("_create_synced_table", e, value_jsonb(compiled_table(e, i)));
	call_target_jsonb("_create_indexes", e, e->compiled);
	write_settings(e);
	write_marker(e);
	return json_to_jsonb(psprintf("%s}", result_json(e, "created")));
}

/* ---- the append-only bump (§7) ------------------------------------------------------------ */

/* The bump's state: the stored layouts and what each step did. */
typedef struct Bump
{
	Jsonb	   *stored;
	Names		created;
	Names		dropped;
	Names		altered;
	StringInfoData rewrites;	/* JSON array members {table, old, new, backfill} */
	int			nrewrites;
	int64		rewritten;
} Bump;

/* The stored layout of a table: its array, else [] (NULL). */
static JsonbValue *
stored_layout(const Bump *b, const char *tname)
{
	JsonbValue *v = sc_member(&b->stored->root, tname);

	return sc_is(v, "array") ? v : NULL;
}

static void
not_append_only(const char *message, const char *tname, const char *col, const char *reason)
{
	StringInfoData h;

	run("SELECT syncular._schema_change_hint()", 0, NULL, NULL);
	initStringInfo(&h);
	appendStringInfoString(&h, got_text(0, 1));
	raise_json("sync.storage.schema_not_append_only", message,
			   psprintf("{\"phase\": \"storage_migration\", \"table\": %s, \"column\": %s, \"reason\": \"%s\"}",
						sc_quote(tname), sc_quote(col), reason),
			   h.data);
}

/* The stored layout of a kept table must be a prefix of the new one, appended columns nullable. */
static void
check_append_only(const Bump *b, const char *tname, const JsonbValue *t)
{
	JsonbValue *old = stored_layout(b, tname);
	JsonbValue *cols = sc_member(sc_container(t), "columns");
	int			old_n = length(old);
	int			new_n = length(cols);

	for (int i = 0; i < Max(old_n, new_n); i++)
	{
		const char *m = "schema change is not append-only: the stored layout must be a prefix of the new one";

		if (i >= new_n)
			not_append_only(m, tname, member_text(nth(old, i), "name"), "column_removed");
		else if (i < old_n && !layout_entry_equal(nth(old, i), nth(cols, i)))
		{
			char	   *name = member_text(nth(cols, i), "name");

			not_append_only(m, tname, name ? name : "", "column_changed");
		}
		else if (i >= old_n && !sc_member(sc_container(nth(cols, i)), "nullable")->val.boolean)
			not_append_only("schema change is not append-only: appended columns must be nullable",
							tname, member_text(nth(cols, i), "name"), "appended_column_not_nullable");
	}
}

/* Plans the whole bump before any DDL: new tables (not in the way), append-only kept tables. */
static void
plan_bump(Ensure *e, Bump *b)
{
	for (int i = 0; i < e->names.n; i++)
	{
		const char *tname = e->names.v[i];

		if (sc_member(&b->stored->root, tname) == NULL)
		{
			refuse_existing(e, tname);
			names_add(&b->created, tname);
			continue;
		}
		check_append_only(b, tname, compiled_table(e, i));
	}
}

/* Step 1: stored tables no longer in the schema are dropped with their index rows. */
static void
drop_retired(Ensure *e, Bump *b)
{
	Oid			types[1] = {JSONBOID};
	Datum		v[1] = {JsonbPGetDatum(b->stored)};
	Names		keys = {0};

	/* the stored keys in the database's text order, as ORDER BY key */
	run("SELECT key FROM jsonb_each($1) ORDER BY key", 1, types, v);
	for (uint64 r = 0; r < SPI_processed; r++)
		names_add(&keys, got_text(r, 1));
	for (int i = 0; i < keys.n; i++)
	{
		if (names_has(&e->names, keys.v[i]))
			continue;
		sync_storage_forget_table(keys.v[i]);
		run(psprintf("DROP TABLE IF EXISTS %s.%s", quote_identifier(e->target), quote_identifier(keys.v[i])),
			0, NULL, NULL);
		names_add(&b->dropped, keys.v[i]);
	}
}

/* The physical (not dropped, user) column names of a relation, before the step changes them. */
static Names
physical_columns(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		v[1] = {ObjectIdGetDatum(relid)};
	Names		cols = {0};

	run("SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 "
		"AND NOT a.attisdropped", 1, types, v);
	for (uint64 r = 0; r < SPI_processed; r++)
		names_add(&cols, got_text(r, 1));
	return cols;
}

/* PostgreSQL projection type of a schema column type (syncular._pg_type, §6). */
static const char *
pg_type_of(const char *coltype)
{
	if (strcmp(coltype, "integer") == 0)
		return "bigint";
	if (strcmp(coltype, "float") == 0)
		return "double precision";
	if (strcmp(coltype, "boolean") == 0)
		return "boolean";
	if (strcmp(coltype, "json") == 0)
		return "jsonb";
	if (strcmp(coltype, "bytes") == 0 || strcmp(coltype, "crdt") == 0)
		return "bytea";
	return "text";				/* string, blob_ref */
}

/* Materialized: add the missing projection columns; returns how many, backfill members in bf. */
static int
add_projection(const Ensure *e, const char *tname, const JsonbValue *cols, int old_n,
			   const Names *phys, StringInfo bf)
{
	int			added = 0;

	for (int i = 0; i < length(cols); i++)
	{
		char	   *name = member_text(nth(cols, i), "name");
		char	   *type = member_text(nth(cols, i), "type");

		if (names_has(phys, name))
			continue;
		alter_table(e, tname, psprintf("ADD COLUMN %s %s", quote_identifier(name), pg_type_of(type)));
		added++;
		if (i < old_n)			/* an existing value (materialize turned on): backfill it */
			appendStringInfo(bf, "%s{\"name\": %s, \"type\": %s}", bf->len > 1 ? ", " : "",
							 sc_quote(name), sc_quote(type));
	}
	return added;
}

/* Not materialized: drop the stale projection (the payload is the truth); returns how many. */
static int
drop_projection(const Ensure *e, const char *tname, const JsonbValue *old, const Names *phys)
{
	int			dropped = 0;

	for (int i = 0; i < length(old); i++)
	{
		char	   *name = member_text(nth(old, i), "name");

		if (!names_has(phys, name) || strncmp(name, "_sync", 5) == 0)
			continue;
		alter_table(e, tname, psprintf("DROP COLUMN %s", quote_identifier(name)));
		dropped++;
	}
	return dropped;
}

static Datum
index_names(const JsonbValue *t)
{
	JsonbValue *ix = sc_member(sc_container(t), "indexes");
	Names		n = {0};

	for (int i = 0; i < length(ix); i++)
		names_add(&n, member_text(nth(ix, i), "name"));
	return names_array(&n);
}

/* Step 2 for one kept table: owned indexes dropped, projection columns added or dropped, the
 * row rewrite planned. */
static void
alter_kept(Ensure *e, Bump *b, const JsonbValue *t, const char *tname, Oid relid)
{
	JsonbValue *old = stored_layout(b, tname);
	JsonbValue *cols = sc_member(sc_container(t), "columns");
	int			old_n = length(old);
	int			new_n = length(cols);
	Names		phys = physical_columns(relid);
	StringInfoData bf;
	int			changed;
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTARRAYOID};
	Datum		v[3] = {CStringGetTextDatum(e->target), CStringGetTextDatum(tname), index_names(t)};

	call_target_table("_install_capture", e, tname);	/* a table registered before 0.4.0 too */
	run("SELECT syncular._drop_owned_indexes($1, $2, $3)", 3, types, v);
	if (!names_has(&phys, "_sync_column_versions"))
		alter_table(e, tname, "ADD COLUMN _sync_column_versions bytea");
	initStringInfo(&bf);
	appendStringInfoChar(&bf, '[');
	if (sc_member(sc_container(t), "materialize")->val.boolean)
		changed = add_projection(e, tname, cols, old_n, &phys, &bf);
	else
		changed = drop_projection(e, tname, old, &phys);
	appendStringInfoChar(&bf, ']');
	if (new_n > old_n || bf.len > 2 || changed > 0)
		names_add(&b->altered, tname);
	if (new_n > old_n || bf.len > 2)
		appendStringInfo(&b->rewrites, "%s{\"table\": %s, \"old\": %d, \"new\": %d, \"backfill\": %s}",
						 b->nrewrites++ ? ", " : "", sc_quote(tname), old_n, new_n, bf.data);
}

static void
alter_kept_tables(Ensure *e, Bump *b)
{
	for (int i = 0; i < e->names.n; i++)
	{
		const char *tname = e->names.v[i];
		Oid			relid;

		if (names_has(&b->created, tname))
			continue;
		relid = get_relname_relid(tname, e->nsp);
		if (!OidIsValid(relid))
		{
			names_add(&b->created, tname);	/* stored but physically missing: create it afresh */
			continue;
		}
		alter_kept(e, b, compiled_table(e, i), tname, relid);
	}
}

/* Step 5: payload re-encoding and projection backfill, table by table. */
static void
rewrite_rows(Ensure *e, Bump *b)
{
	JsonbValue	rw = {0};
	Jsonb	   *all = json_to_jsonb(psprintf("[%s]", b->rewrites.data));

	rw.type = jbvBinary;
	rw.val.binary.data = &all->root;
	rw.val.binary.len = VARSIZE(all);
	for (int i = 0; i < b->nrewrites; i++)
	{
		JsonbValue *r = nth(&rw, i);
		Oid			types[5] = {TEXTOID, TEXTOID, INT4OID, INT4OID, JSONBOID};
		Datum		v[5] = {CStringGetTextDatum(e->target), CStringGetTextDatum(member_text(r, "table")),
			Int32GetDatum(pg_strtoint32(member_text(r, "old"))),
			Int32GetDatum(pg_strtoint32(member_text(r, "new"))),
		JsonbPGetDatum(value_jsonb(sc_member(sc_container(r), "backfill")))};

		run("SELECT syncular._rewrite_rows($1, $2, $3, $4, $5)", 5, types, v);
		b->rewritten += pg_strtoint64(got_text(0, 1));
	}
}

static Jsonb *
migrate(Ensure *e)
{
	Bump		b = {0};
	Oid			types[1] = {TEXTOID};
	Datum		v[1] = {CStringGetTextDatum(e->stored_txt ? e->stored_txt : "")};

	run("SELECT syncular._parse_layouts($1)::text", 1, types, v);
	b.stored = json_to_jsonb(got_text(0, 1));
	initStringInfo(&b.rewrites);
	plan_bump(e, &b);

	/* the bump's own DDL on synced tables passes the DDL guard (33_ddl_guard.sql) until step 4 */
	synced_ddl(true);
	drop_retired(e, &b);
	alter_kept_tables(e, &b);
	for (int i = 0; i < e->names.n; i++)	/* 3. new tables */
		if (names_has(&b.created, e->names.v[i]))
			call_target_jsonb("_create_synced_table", e, value_jsonb(compiled_table(e, i)));
	synced_ddl(false);

	write_settings(e);			/* 4. first: decode_row reads it for the backfill */
	rewrite_rows(e, &b);		/* 5. */
	call_target_jsonb("_create_indexes", e, e->compiled);	/* 6. after the data: unique checked once */
	write_marker(e);			/* 7. */
	return json_to_jsonb(psprintf("%s, \"previousSchemaVersion\": " INT64_FORMAT ", \"created\": %s, "
								  "\"dropped\": %s, \"altered\": %s, \"rewrittenRows\": " INT64_FORMAT "}",
								  result_json(e, "migrated"), e->stored_ver, names_json(&b.created),
								  names_json(&b.dropped), names_json(&b.altered), b.rewritten));
}

/* ---- the entry point ----------------------------------------------------------------------- */

static void
refuse_newer(const Ensure *e)
{
	raise_json("sync.storage.schema_newer", "stored schema version is newer than the schema being ensured",
			   psprintf("{\"phase\": \"storage_migration\", \"storedSchemaVersion\": " INT64_FORMAT
						", \"runningSchemaVersion\": %d}", e->stored_ver, e->version),
			   psprintf("This database already serves schema version " INT64_FORMAT ": deploy that IR (or a "
						"newer one). Versions never go back; to start over, SELECT syncular.unregister_schema(%s).",
						e->stored_ver, quote_literal_cstr(e->target)));
}

static Jsonb *
ensure(Ensure *e, const char *app_schema, const char *caller)
{
	/* the migration lock, then every read that plans the work (a hot standby cannot take it and
	 * cannot write either: it only verifies the replicated marker; a create or bump there fails on
	 * its first write as a read-only transaction) */
	if (!RecoveryInProgress())
		sync_storage_schema_lock();
	call_checkpoints("_checkpoint_barrier", e);
	read_state(e, app_schema, caller);
	if (e->has_stored && e->stored_ver > e->version)
		refuse_newer(e);
	if (e->has_stored && e->stored_ver == e->version)
		return verify(e);
	if (!e->has_stored)
		return create_all(e);
	return migrate(e);
}

PG_FUNCTION_INFO_V1(sync_ensure_schema);

/* syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text) */
Datum
sync_ensure_schema(PG_FUNCTION_ARGS)
{
	Ensure		e = {0};
	SyncCompiled *s;
	Jsonb	   *result;
	Datum		out;

	e.checkpoints = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	if (e.checkpoints == NULL || JB_ROOT_IS_SCALAR(e.checkpoints) || !JB_ROOT_IS_ARRAY(e.checkpoints))
		sc_invalid("checkpoints must be a JSON array", "checkpoints", NULL, NULL, NULL);
	/* compile first (pure): an invalid schema is refused without taking the migration lock */
	e.compiled = sync_compile_schema_ir(PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0), NULL, &s);
	e.version = DatumGetInt32(DirectFunctionCall1(numeric_int4,
												  NumericGetDatum(sc_member(&e.compiled->root, "version")->val.numeric)));
	for (int i = 0; i < s->nt; i++)
		names_add(&e.names, s->t[i].name);

	SPI_connect();
	result = ensure(&e, PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2)),
					PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3)));
	out = SPI_datumTransfer(JsonbPGetDatum(result), false, -1);
	SPI_finish();
	PG_RETURN_DATUM(out);
}
