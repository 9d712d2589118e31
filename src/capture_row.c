/*
 * capture_row.c — the BEFORE INSERT OR UPDATE row trigger of every synced table
 * (syncular._capture_row, installed by ensure_schema as "zz_syncular_capture"; the name sorts
 * after the app's own BEFORE ROW triggers, so it sees the row they leave).
 *
 * A row written by ordinary SQL gets everything a push would give it
 * (data-model-and-storage.md §1, §6; push-and-pull.md §2.3 "Upsert"):
 *   _sync_partition  the row's value, else the session setting syncular.partition, else an error
 *                    naming the setting (sync.invalid_request, 22023);
 *   _sync_row_id     the primary key rendered as the rowId (WF §4.5);
 *   _sync_payload    the full-row codec bytes re-encoded from the columns (the payload stays the
 *                    truth and always equals the columns; on UPDATE a column whose datum did not
 *                    change keeps its payload value, so a value the projection cannot show, a
 *                    string with U+0000 for one, is never lost by an unrelated update);
 *   _sync_server_version  1 for an INSERT, the stored version + 1 for an UPDATE;
 *   _sync_column_versions the stored per-column versions with each changed column moved to the
 *                    new version (§1.4); the primary key never carries one;
 *   _sync_scopes     {variable: value} from the scope columns (§3.1).
 * A table that is not materialized has no app columns: the statement writes _sync_payload
 * (e.g. syncular.encode_row(...)) and the trigger decodes it to derive the rest.
 * A value the codec refuses (an integer past ±2^53-1, JSON or a blob_ref it cannot carry, a NULL
 * in a non-nullable column, a row past syncular.max_row_bytes, a key past the key maxima) fails
 * the statement with a catalogue error; nothing is logged (the AFTER STATEMENT trigger that logs
 * never runs).  No SPI per row: the compiled schema is read once per statement (with
 * syncular.capture_validators on, the table's row validator runs on each row, push-and-pull.md
 * §2.7, and its error fails the statement).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "capture.h"
#include "push_internal.h"

PG_FUNCTION_INFO_V1(syncular_capture_row);

/* The attribute numbers of one synced table's columns, per schema generation. */
typedef struct CapRel
{
	Oid			relid;
	Oid			nsp;			/* its schema when the entry was made */
	uint64		generation;
	int			ti;
	AttrNumber	a_part;
	AttrNumber	a_row;
	AttrNumber	a_ver;
	AttrNumber	a_scopes;
	AttrNumber	a_payload;
	AttrNumber	a_cv;
	AttrNumber *a_col;			/* per schema column; materialized tables only */
} CapRel;

static CapRel *caprels = NULL;
static int	ncaprels = 0;
static bool nsp_callback = false;

/* A schema renamed (or any other change of pg_namespace): every entry checks its name again. */
static void
forget_schemas(Datum arg, int cacheid, uint32 hashvalue)
{
	for (int i = 0; i < ncaprels; i++)
		caprels[i].nsp = InvalidOid;
}


/* Raise a catalogue error with a HINT (sync_raise has none). */
static void
capture_raise(const char *code, const char *message, const char *details, const char *hint)
{
	const SyncErrorInfo *e = sync_error_info(code);

	ereport(ERROR,
			(errcode(e ? e->sqlstate : ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", message),
			 errdetail("%s", sync_error_detail_json(code, details)),
			 hint ? errhint("%s", hint) : 0));
}

static char *
details_table_column(const char *table, const char *column, const char *reason)
{
	StringInfoData d;

	initStringInfo(&d);
	appendStringInfoString(&d, "{\"table\": ");
	escape_json(&d, table);
	if (column)
	{
		appendStringInfoString(&d, ", \"column\": ");
		escape_json(&d, column);
	}
	appendStringInfoString(&d, ", \"reason\": ");
	escape_json(&d, reason);
	appendStringInfoChar(&d, '}');
	return d.data;
}

static AttrNumber
attnum_of(Relation rel, const char *name, Oid type, const char *table)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
		{
			if (a->atttypid != type)
				break;
			return a->attnum;
		}
	}
	capture_raise("sync.storage.physical_layout_mismatch",
				  "a synced table's physical layout differs from the registered schema",
				  details_table_column(table, name, "column_missing_or_retyped"),
				  "Run syncular.ensure_schema with the registered schema to see the mismatch; "
				  "change synced tables only through ensure_schema.");
	return InvalidAttrNumber;	/* not reached */
}

/* The relation's entry: table index and attribute numbers for the current schema. */
static CapRel *
caprel_for(Relation rel, SyncSchema *schema, const char *table)
{
	CapRel	   *cr = NULL;
	const SyncTable *t;
	int			ti = sync_schema_table_index(schema, table);

	if (!nsp_callback)
	{
		CacheRegisterSyscacheCallback(NAMESPACEOID, forget_schemas, (Datum) 0);
		nsp_callback = true;
	}
	for (int i = 0; i < ncaprels; i++)
		if (caprels[i].relid == RelationGetRelid(rel))
			cr = &caprels[i];
	/*
	 * A row of a statement: the entry its first row made (the schema name checked then, and
	 * checked again after any change of a schema: forget_schemas).
	 */
	if (cr != NULL && ti >= 0 && cr->generation == schema->generation && cr->ti == ti &&
		cr->nsp == RelationGetNamespace(rel))
		return cr;
	if (ti < 0 || strcmp(get_namespace_name(RelationGetNamespace(rel)), schema->app_schema) != 0)
		capture_raise("sync.storage.schema_not_registered",
					  "the table is not a synced table of the registered schema",
					  details_table_column(RelationGetRelationName(rel), NULL, "not_registered"),
					  "syncular.ensure_schema installs the capture triggers; drop triggers a "
					  "synced table kept by unregister_schema still carries.");
	if (cr == NULL)
	{
		caprels = caprels
			? repalloc(caprels, sizeof(CapRel) * (ncaprels + 1))
			: MemoryContextAlloc(TopMemoryContext, sizeof(CapRel));
		cr = &caprels[ncaprels++];
		memset(cr, 0, sizeof(*cr));
		cr->relid = RelationGetRelid(rel);
	}
	t = &schema->tables[ti];
	cr->generation = 0;			/* not valid until complete */
	cr->a_part = attnum_of(rel, "_sync_partition", TEXTOID, table);
	cr->a_row = attnum_of(rel, "_sync_row_id", TEXTOID, table);
	cr->a_ver = attnum_of(rel, "_sync_server_version", INT8OID, table);
	cr->a_scopes = attnum_of(rel, "_sync_scopes", JSONBOID, table);
	cr->a_payload = attnum_of(rel, "_sync_payload", BYTEAOID, table);
	cr->a_cv = attnum_of(rel, "_sync_column_versions", BYTEAOID, table);
	if (cr->a_col)
		pfree(cr->a_col);
	cr->a_col = MemoryContextAllocZero(TopMemoryContext, sizeof(AttrNumber) * Max(t->ncolumns, 1));
	if (t->materialize)
		for (int c = 0; c < t->ncolumns; c++)
			cr->a_col[c] = attnum_of(rel, t->columns[c].name, sync_storage_column_oid(t->columns[c].type),
									 table);
	cr->ti = ti;
	cr->nsp = RelationGetNamespace(rel);
	cr->generation = schema->generation;
	return cr;
}

/* One column's datum as a codec value (materialized tables). */
static void
column_value(const SyncTable *t, int c, Datum d, bool isnull, SspValue *v)
{
	const SyncColumn *col = &t->columns[c];

	memset(v, 0, sizeof(*v));
	v->present = true;
	v->is_null = isnull;
	if (isnull)
		return;
	switch (col->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			{
				text	   *x = DatumGetTextPP(d);

				v->str.ptr = VARDATA_ANY(x);
				v->str.len = VARSIZE_ANY_EXHDR(x);
				break;
			}
		case SSP_COL_INTEGER:
			v->i = DatumGetInt64(d);
			/* the codec's safe-integer range (WF §4.1): named here, the codec would not */
			if (v->i > INT64CONST(9007199254740991) || v->i < -INT64CONST(9007199254740991))
				capture_raise("sync.invalid_request",
							  "an integer column value is outside the safe range ±(2^53-1)",
							  details_table_column(t->name, col->name, "integer_out_of_range"),
							  "Synced integer columns carry JavaScript-safe integers only.");
			break;
		case SSP_COL_FLOAT:
			v->f = DatumGetFloat8(d);
			break;
		case SSP_COL_BOOLEAN:
			v->b = DatumGetBool(d);
			break;
		case SSP_COL_JSON:
			{
				Jsonb	   *j = DatumGetJsonbP(d);
				char	   *s = JsonbToCString(NULL, &j->root, VARSIZE(j));

				v->str.ptr = s;
				v->str.len = strlen(s);
				break;
			}
		default:
			{
				bytea	   *b = DatumGetByteaPP(d);

				v->bytes.ptr = (const uint8 *) VARDATA_ANY(b);
				v->bytes.len = VARSIZE_ANY_EXHDR(b);
				break;
			}
	}
}

static SspValue *
decode_payload(const SyncTable *t, Datum d, const char *reason)
{
	bytea	   *p = DatumGetByteaPP(d);
	SspValue   *vals = palloc0(sizeof(SspValue) * t->ncolumns);
	SspError	err;

	if (!ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
							 (const uint8 *) VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p), vals, &err))
		capture_raise("sync.invalid_request",
					  psprintf("_sync_payload is not a full row of the table: %s", err.message),
					  details_table_column(t->name, "_sync_payload", reason),
					  "Write a table that is not materialized with _sync_payload = "
					  "syncular.encode_row(table, row).");
	return vals;
}

static bool
datum_changed(Relation rel, AttrNumber a, HeapTuple oldt, HeapTuple newt)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), a - 1);
	bool		on,
				nn;
	Datum		o = heap_getattr(oldt, a, RelationGetDescr(rel), &on);
	Datum		n = heap_getattr(newt, a, RelationGetDescr(rel), &nn);

	if (on || nn)
		return on != nn;
	return !datumIsEqual(o, n, att->attbyval, att->attlen);
}

/* The partition of the written row: its own value, else syncular.partition. */
static char *
row_partition(Relation rel, const CapRel *cr, HeapTuple tup, const SyncTable *t)
{
	bool		isnull;
	Datum		d = heap_getattr(tup, cr->a_part, RelationGetDescr(rel), &isnull);
	char	   *p;

	if (!isnull)
		p = TextDatumGetCString(d);
	else if (sync_capture_partition != NULL && sync_capture_partition[0] != '\0')
		p = pstrdup(sync_capture_partition);
	else
		capture_raise("sync.invalid_request",
					  "a row written to a synced table needs a partition",
					  details_table_column(t->name, "_sync_partition", "partition_missing"),
					  "SET syncular.partition = '<partition>' for the session (or SET LOCAL for "
					  "the transaction), or write the _sync_partition column.");
	if (p[0] == '\0' || strlen(p) > SYNC_MAX_ID_BYTES)
		capture_raise("sync.invalid_request",
					  psprintf("the partition must be 1 to %d bytes", SYNC_MAX_ID_BYTES),
					  details_table_column(t->name, "_sync_partition", "partition_invalid"), NULL);
	return p;
}

/*
 * The owner of this trigger function (the extension owner): the row trigger is not SECURITY
 * DEFINER (that would switch role, and with the pinned search_path set a GUC, for every row), so
 * the one settings read of a statement runs as this role instead.
 */
static Oid
trigger_owner(FunctionCallInfo fcinfo)
{
	static Oid	fn = InvalidOid;
	static Oid	owner = InvalidOid;

	if (fn != fcinfo->flinfo->fn_oid)
	{
		HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fcinfo->flinfo->fn_oid));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "syncular: cache lookup failed for function %u", fcinfo->flinfo->fn_oid);
		owner = ((Form_pg_proc) GETSTRUCT(tup))->proowner;
		ReleaseSysCache(tup);
		fn = fcinfo->flinfo->fn_oid;
	}
	return owner;
}

/*
 * syncular.capture_validators: the table's row validator on the row written (docs/writing-with-
 * sql.md "Rules"), as the extension owner, as a push runs it, with SPI for the validator lookup.
 * Its error fails the statement.
 */
static void
validate_row(Oid owner, SyncSchema *schema, int ti, const char *row_id, const SspValue *vals,
			 const SspValue *old_vals, const char *partition)
{
	const char *actor = sync_capture_actor();	/* the session's role, before the switch */
	Oid			save_uid;
	int			save_ctx;

	GetUserIdAndSecContext(&save_uid, &save_ctx);
	SetUserIdAndSecContext(owner, save_ctx | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "syncular: SPI_connect failed");
		sync_validate_captured_row(schema, ti, false, row_id, vals, old_vals, actor, partition);
		SPI_finish();			/* the caller's context is current again */
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_uid, save_ctx);
	}
	PG_END_TRY();
}

/*
 * The values of the row written (newt; oldt for an UPDATE): from the columns of a materialized
 * table, else from its _sync_payload; changed[c] says which columns the write changed.  A
 * non-nullable synced column that is NULL fails the statement.
 */
static SspValue *
row_values(Relation rel, const CapRel *cr, const SyncTable *t, HeapTuple oldt, HeapTuple newt,
		   SspValue **old_vals, bool *changed)
{
	TupleDesc	desc = RelationGetDescr(rel);
	SspValue   *vals;
	bool		isnull;

	*old_vals = NULL;
	if (oldt != NULL)
		*old_vals = decode_payload(t, heap_getattr(oldt, cr->a_payload, desc, &isnull),
								   "stored_payload");
	if (t->materialize)
	{
		vals = palloc0(sizeof(SspValue) * t->ncolumns);
		for (int c = 0; c < t->ncolumns; c++)
		{
			Datum		d;

			if (oldt != NULL && !datum_changed(rel, cr->a_col[c], oldt, newt))
			{
				vals[c] = (*old_vals)[c];	/* the payload's value, even one the column cannot show */
				continue;
			}
			changed[c] = true;
			d = heap_getattr(newt, cr->a_col[c], desc, &isnull);
			column_value(t, c, d, isnull, &vals[c]);
		}
	}
	else
	{
		Datum		d = heap_getattr(newt, cr->a_payload, desc, &isnull);

		if (isnull)
			capture_raise("sync.invalid_request",
						  "a table that is not materialized is written through _sync_payload",
						  details_table_column(t->name, "_sync_payload", "payload_missing"),
						  "Write _sync_payload = syncular.encode_row(table, row).");
		vals = decode_payload(t, d, "payload_invalid");
		/* an unchanged payload changes no column; any other payload moves every column */
		if (oldt == NULL || datum_changed(rel, cr->a_payload, oldt, newt))
			memset(changed, true, sizeof(bool) * t->ncolumns);
	}
	for (int c = 0; c < t->ncolumns; c++)
		if (vals[c].is_null && !t->columns[c].nullable)
			capture_raise("sync.invalid_request", "a non-nullable synced column is NULL",
						  details_table_column(t->name, t->columns[c].name, "null_value"), NULL);
	return vals;
}

/*
 * The rowId of the row (the primary key rendered as a string, data-model-and-storage.md §1.3,
 * §2.2), checked for size and U+0000.
 */
static char *
row_id_of(const SyncTable *t, const SspValue *vals)
{
	SspBuf		buf;
	SspError	err;
	char	   *row_id;

	ssp_buf_init(&buf);
	if (!ssp_render_pk(&t->codec_columns[t->pk_index], &vals[t->pk_index], &buf, &err))
		sync_raise_codec_error(&err);
	if (buf.len > SYNC_MAX_ROW_ID_BYTES || memchr(buf.data, '\0', buf.len) != NULL)
		capture_raise("sync.invalid_request",
					  psprintf("the primary key's rowId must be at most %d bytes without U+0000",
							   SYNC_MAX_ROW_ID_BYTES),
					  details_table_column(t->name, t->columns[t->pk_index].name, "key_too_large"),
					  NULL);
	row_id = pnstrdup((const char *) buf.data, buf.len);
	ssp_buf_free(&buf);
	return row_id;
}

/*
 * The row's payload: its full-row encoding (data-model-and-storage.md §1.3), at most
 * syncular.max_row_bytes, as a bytea.
 */
static bytea *
row_payload(const SyncTable *t, const SspValue *vals)
{
	SspBuf		buf;
	SspError	err;
	bytea	   *p;

	ssp_buf_init(&buf);
	if (!ssp_row_encode_full(t->codec_columns, t->ncolumns, vals, &buf, &err))
		capture_raise(err.code ? err.code : "sync.invalid_request",
					  psprintf("a value cannot be encoded for sync: %s", err.message),
					  details_table_column(t->name, NULL, "unencodable_value"), NULL);
	if (buf.len > (size_t) sync_max_row_bytes)
		capture_raise("sync.invalid_request",
					  psprintf("the row is %zu bytes encoded, at most %d are accepted "
							   "(syncular.max_row_bytes)", buf.len, sync_max_row_bytes),
					  details_table_column(t->name, NULL, "value_too_large"), NULL);
	p = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(p, VARHDRSZ + buf.len);
	memcpy(VARDATA(p), buf.data, buf.len);
	ssp_buf_free(&buf);
	return p;
}

/* The row's scopes (SPEC §3.1): every scope column set, each value at most its size. */
static void
row_scopes(const SyncTable *t, const SspValue *vals, SyncRowScopes *scopes)
{
	bool		complete;

	push_payload_scopes(t, vals, scopes, &complete);
	if (!complete)
		capture_raise("sync.invalid_request", "a scope column of the row is NULL or empty",
					  details_table_column(t->name, NULL, "missing_scope"),
					  "Every scope column of a synced row needs a value (SPEC §3.1).");
	for (int s = 0; s < scopes->n; s++)
		if (strlen(scopes->values[s]) > SYNC_MAX_SCOPE_VALUE_BYTES)
			capture_raise("sync.invalid_request",
						  psprintf("a scope value must be at most %d bytes",
								   SYNC_MAX_SCOPE_VALUE_BYTES),
						  details_table_column(t->name, scopes->vars[s], "key_too_large"), NULL);
}

/*
 * Versions (§1.4) of an updated row (oldt): the row moves to stored + 1, and so does every
 * column that changed; *cvblob the column versions encoded.  A new row is at version 1 with no
 * column versions.
 */
static int64
row_versions(Relation rel, const CapRel *cr, const SyncTable *t, HeapTuple oldt,
			 const bool *changed, bytea **cvblob)
{
	bool		isnull;
	SyncStoredRow stored = {0};
	Datum		d;
	int64		version;
	int64	   *cv;

	*cvblob = NULL;
	if (oldt == NULL)
		return 1;
	d = heap_getattr(oldt, cr->a_ver, RelationGetDescr(rel), &isnull);
	stored.found = true;
	stored.server_version = DatumGetInt64(d);
	d = heap_getattr(oldt, cr->a_cv, RelationGetDescr(rel), &isnull);
	stored.column_versions = isnull ? NULL : DatumGetByteaPP(d);
	version = stored.server_version + 1;
	cv = push_column_versions(t, &stored);
	for (int c = 0; c < t->ncolumns; c++)
		if (changed[c] && c != t->pk_index)
			cv[c] = version;
	*cvblob = push_encode_column_versions(t, cv);
	return version;
}

Datum
syncular_capture_row(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	HeapTuple	newt;
	HeapTuple	oldt = NULL;
	SyncSchema *schema;
	const SyncTable *t;
	CapRel	   *cr;
	SspValue   *vals;
	SspValue   *old_vals;
	bool	   *changed;
	int64		version;
	bytea	   *cvblob;
	char	   *row_id;
	char	   *partition;
	SyncRowScopes scopes;
	int			cols[6];
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || td->tg_trigger->tgnargs != 1)
		elog(ERROR, "syncular._capture_row: must be the BEFORE ROW trigger ensure_schema installs");
	rel = td->tg_relation;
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		oldt = td->tg_trigtuple;
		newt = td->tg_newtuple;
	}
	else
		newt = td->tg_trigtuple;
	if (sync_capture_bypassed())
		return PointerGetDatum(newt);

	schema = sync_capture_schema(trigger_owner(fcinfo));
	if (schema == NULL)
		capture_raise("sync.storage.schema_not_registered", "no schema is registered",
					  NULL, "Register the app schema with syncular.ensure_schema.");
	cr = caprel_for(rel, schema, td->tg_trigger->tgargs[0]);
	t = &schema->tables[cr->ti];
	partition = row_partition(rel, cr, newt, t);
	changed = palloc0(sizeof(bool) * Max(t->ncolumns, 1));
	vals = row_values(rel, cr, t, oldt, newt, &old_vals, changed);
	row_id = row_id_of(t, vals);
	values[4] = PointerGetDatum(row_payload(t, vals));
	row_scopes(t, vals, &scopes);
	version = row_versions(rel, cr, t, oldt, changed, &cvblob);
	if (sync_capture_validators)
		validate_row(trigger_owner(fcinfo), schema, cr->ti, row_id, vals, old_vals, partition);

	/* the engine's columns of the row, as a push writes them */
	cols[0] = cr->a_part;
	values[0] = CStringGetTextDatum(partition);
	cols[1] = cr->a_row;
	values[1] = CStringGetTextDatum(row_id);
	cols[2] = cr->a_ver;
	values[2] = Int64GetDatum(version);
	cols[3] = cr->a_scopes;
	values[3] = JsonbPGetDatum(sync_row_scopes_jsonb(&scopes));
	cols[4] = cr->a_payload;
	cols[5] = cr->a_cv;
	values[5] = cvblob ? PointerGetDatum(cvblob) : (Datum) 0;
	nulls[5] = cvblob == NULL;
	return PointerGetDatum(heap_modify_tuple_by_cols(newt, RelationGetDescr(rel), 6, cols,
													 values, nulls));
}
