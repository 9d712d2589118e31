/*
 * storage_rowdirect.c — one row written without a statement, as the statement would write it:
 * for storage_rows.c the push's update of a stored row whose scopes stay and its insert of a row
 * the commit read as absent with its row-scope entries (push-and-pull.md §2.3 "Upsert"; the
 * layout of docs/storage.md), one row at a time also for a commit of several; for
 * storage_append.c the rows of the commit log (sync_rowdirect_insert_rows: a commit row, its
 * change rows and its scope index entries).
 *
 * Why: through a statement, any BEFORE UPDATE row trigger (the SQL-write capture's
 * zz_syncular_capture, capture_row.c, which skips engine writes anyway) makes the executor lock
 * the old tuple before the update, one more WAL record per pushed update; and a statement's
 * executor start and end cost as much as the write itself.  Here a synced row is found by its
 * primary key in a fresh snapshot (as a statement of its own reads it) and written by
 * table_tuple_update / table_tuple_insert, every index entry inserted as the executor inserts it
 * (ExecInsertIndexTuples: unique checks, expression and partial indexes), so the heap, its
 * indexes and the WAL carry what the statement wrote, less the tuple lock.
 *
 * A synced row only where nothing but the write itself could happen, so the end state is the
 * statement's: an ordinary table (not partitioned, not a partition), no rewrite rule, no trigger
 * but the capture triggers (an app trigger, a foreign key's or a deferrable constraint's
 * trigger: the statement, which fires them), no CHECK constraint or generated column, no
 * row-level security for the caller, the caller's table privileges, every written column of the
 * type the statement's parameter has, and no NULL for a NOT NULL column (the statement raises
 * the error).  Anything else returns false having written nothing, and the caller runs the
 * statement; so does a concurrent update of the row, which the statement waits for, follows or
 * refuses as the isolation level says.  A commit-log row (sync_rowdirect_insertable /
 * _insert_values) fires the BEFORE INSERT row triggers (the writer fence, alone, is checked
 * in place of its call: fence_only) and checks the constraints as the executor does, and needs
 * the statement for any other kind of trigger.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "storage_internal.h"
#include "storage_rowdirect.h"
#include "storage_scan.h"

/*
 * The capture trigger functions seen so far, by OID: a function's name or schema can change, so
 * the list empties on any invalidation of pg_proc entries.
 */
#define CAPTURE_FNS 4
static Oid	capture_fns[CAPTURE_FNS];
static int	ncapture_fns = 0;
static bool capture_callback = false;
static Oid	fence_fn = InvalidOid;	/* see is_fence_fn */

static void
capture_fns_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	ncapture_fns = 0;
	fence_fn = InvalidOid;
}

static bool
is_capture_fn(Oid fn)
{
	char	   *name;
	bool		capture;

	for (int i = 0; i < ncapture_fns; i++)
		if (capture_fns[i] == fn)
			return true;
	if (!capture_callback)
	{
		CacheRegisterSyscacheCallback(PROCOID, capture_fns_reset, (Datum) 0);
		capture_callback = true;
	}
	name = get_func_name(fn);
	capture = name != NULL &&
		get_func_namespace(fn) == get_namespace_oid("syncular", false) &&
		(strcmp(name, "_capture_row") == 0 || strcmp(name, "_capture_log") == 0);
	if (capture && ncapture_fns < CAPTURE_FNS)
		capture_fns[ncapture_fns++] = fn;
	return capture;
}

/*
 * The writer fence's trigger function (syncular.syncular_writer_fence, fence.c) by OID, once
 * seen: its C symbol is checked too, as CREATE OR REPLACE keeps the OID.  Forgotten with the
 * capture functions on any invalidation of pg_proc entries.
 */
static bool
is_fence_fn(Oid fn)
{
	HeapTuple	tup;
	bool		fence = false;

	if (OidIsValid(fence_fn))
		return fn == fence_fn;
	if (!capture_callback)
	{
		CacheRegisterSyscacheCallback(PROCOID, capture_fns_reset, (Datum) 0);
		capture_callback = true;
	}
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc p = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);

		fence = p->prolang == ClanguageId && !isnull &&
			p->pronamespace == get_namespace_oid("syncular", false) &&
			strcmp(NameStr(p->proname), "syncular_writer_fence") == 0 &&
			strcmp(TextDatumGetCString(src), "syncular_writer_fence") == 0;
		ReleaseSysCache(tup);
	}
	if (fence)
		fence_fn = fn;
	return fence;
}

/*
 * td's only trigger is the writer fence, BEFORE INSERT FOR EACH ROW, firing in this session's
 * replication role, without a WHEN condition, and no function statistics are kept for it
 * (track_functions = all counts C functions): its call through the executor (the function's
 * SET search_path saved and restored, the trigger data built) can be left out for the check
 * it makes, which resolves no name.
 */
static bool
fence_only(const TriggerDesc *td)
{
	const Trigger *t = &td->triggers[0];

	if (td->numtriggers != 1 || t->tgtype != (TRIGGER_TYPE_ROW | TRIGGER_TYPE_BEFORE |
											  TRIGGER_TYPE_INSERT) ||
		t->tgqual != NULL || t->tgnargs != 0 || pgstat_track_functions == TRACK_FUNC_ALL)
		return false;
	if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA
		? t->tgenabled != TRIGGER_FIRES_ALWAYS && t->tgenabled != TRIGGER_FIRES_ON_REPLICA
		: t->tgenabled != TRIGGER_FIRES_ALWAYS && t->tgenabled != TRIGGER_FIRES_ON_ORIGIN)
		return false;
	return is_fence_fn(t->tgfoid);
}

/*
 * Every trigger is one of the capture triggers ensure_schema installs (syncular._capture_row /
 * _capture_log, 32_capture.sql): those skip the engine's own writes, so a write that fires none
 * of them ends the same.
 */
bool
sync_rowdirect_capture_only(const TriggerDesc *td)
{
	for (int i = 0; td != NULL && i < td->numtriggers; i++)
		if (!is_capture_fn(td->triggers[i].tgfoid))
			return false;
	return true;
}

/* The index of rel's live attribute name, -1 when there is none. */
static int
attr_index(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return i;
	}
	return -1;
}

/*
 * The one-row write's parameters v / n (one_row_types; $4's text as the jsonb scopes) as
 * attributes of rel: false when a column is missing or of another type than its parameter
 * (the statement would coerce the value).
 */
bool
sync_rowdirect_row(Relation rel, const SyncTable *t, const Datum *v, const char *n, Datum scopes,
		   SyncDirectRow *row)
{
	static const char *const sync_cols[] = {"_sync_partition", "_sync_row_id",
		"_sync_server_version", "_sync_scopes", "_sync_payload", "_sync_column_versions"};
	static const Oid sync_types[] = {TEXTOID, TEXTOID, INT8OID, JSONBOID, BYTEAOID, BYTEAOID};
	TupleDesc	desc = RelationGetDescr(rel);
	int			ncols = 6 + (t->materialize ? t->ncolumns : 0);

	row->values = palloc0(sizeof(Datum) * desc->natts);
	row->isnull = palloc(sizeof(bool) * desc->natts);
	row->set = palloc0(sizeof(bool) * desc->natts);
	memset(row->isnull, true, sizeof(bool) * desc->natts);
	for (int c = 0; c < ncols; c++)
	{
		const char *name = c < 6 ? sync_cols[c] : t->columns[c - 6].name;
		Oid			type = c < 6 ? sync_types[c] : column_type_oid(t->columns[c - 6].type);
		int			p = c < 6 ? c : c + 1;	/* the parameter: $7 is the table name */
		int			i = attr_index(desc, name);

		if (i < 0 || row->set[i] || TupleDescAttr(desc, i)->atttypid != type ||
			TupleDescAttr(desc, i)->atttypmod != -1)
			return false;
		if (c < 2)
			row->key[c] = i;
		row->set[i] = true;
		row->isnull[i] = n[p] == 'n';
		row->values[i] = row->isnull[i] ? (Datum) 0 : (c == 3 ? scopes : v[p]);
	}
	return true;
}

static bool
privileged(Oid relid, AclMode mode)
{
	return pg_class_aclcheck(relid, GetUserId(), mode) == ACLCHECK_OK;
}

/* The write of rel can skip the executor (see the head of this file). */
static bool
direct_allowed(Relation rel, AclMode mode)
{
	TupleConstr *c = RelationGetDescr(rel)->constr;
	Oid			relid = RelationGetRelid(rel);

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->rd_rules != NULL)
		return false;
	if (c != NULL && (c->num_check > 0 || c->has_generated_stored))
		return false;
	if (rel->trigdesc != NULL && !sync_rowdirect_capture_only(rel->trigdesc))
		return false;
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	/* the statement reads the key columns too (its WHERE, or the probe before an insert) */
	return privileged(relid, mode) && privileged(relid, ACL_SELECT);
}

/* No NULL in a NOT NULL column of the row in slot (else the statement raises it). */
static bool
not_null_ok(TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (a->attnotnull && !a->attisdropped && slot->tts_isnull[i])
			return false;
	}
	return true;
}

/*
 * An executor state for row writes to rel, as a statement's: the range-table entry carries the
 * updated columns (updated: by attribute index, NULL for an insert), which the executor's hint
 * to the indexes (unchanged key) reads; the result relation has rel's triggers and open
 * indexes.  All of it lives in the state's memory; direct_estate_end closes and frees it.  One
 * state serves the writes of one call (one row, or a new row's row-scope entries): a commit of
 * one upsert writes one row of each of four tables, so a state kept across a commit's rows
 * would save nothing there and cost the longer-held index locks.
 */
static ResultRelInfo *
direct_estate(Relation rel, const bool *updated, EState **estate)
{
	MemoryContext caller;
	RangeTblEntry *rte;
	ResultRelInfo *rri;

	*estate = CreateExecutorState();
	caller = MemoryContextSwitchTo((*estate)->es_query_cxt);
	rte = makeNode(RangeTblEntry);
	rri = makeNode(ResultRelInfo);
	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	for (int i = 0; updated != NULL && i < RelationGetDescr(rel)->natts; i++)
		if (updated[i])
			rte->updatedCols = bms_add_member(rte->updatedCols,
											  i + 1 - FirstLowInvalidHeapAttributeNumber);
	ExecInitRangeTable(*estate, list_make1(rte));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	MemoryContextSwitchTo(caller);
	return rri;
}

static void
direct_estate_end(EState *estate, ResultRelInfo *rri)
{
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

/* The index entries of the row version in slot, just written at slot->tts_tid. */
static void
index_entries(EState *estate, ResultRelInfo *rri, TupleTableSlot *slot, bool update)
{
	List	   *recheck;

	if (rri->ri_NumIndices == 0)
		return;
	recheck = ExecInsertIndexTuples(rri, slot, estate, update, false, NULL, NIL);
	/* a deferred check needs its constraint trigger, which the callers refuse */
	if (recheck != NIL)
		elog(ERROR, "syncular: a deferred index check on a direct row write");
}

/*
 * The index entries of the row version in slot (just written at slot->tts_tid), as the
 * executor inserts them after an insert or a non-HOT update (set: the updated attributes).
 */
static void
insert_index_entries(Relation rel, TupleTableSlot *slot, bool update, const bool *set)
{
	EState	   *estate;
	ResultRelInfo *rri = direct_estate(rel, update ? set : NULL, &estate);

	index_entries(estate, rri, slot, update);
	direct_estate_end(estate, rri);
}

/*
 * What the direct writes of a batch of rows of one synced table share (sync_rowdirect_begin):
 * one snapshot, whose command id moves on before each row so that a row sees the rows written
 * before it, as a statement of its own would; one scan of the primary key per kind of probe,
 * rescanned for each row; and one executor state for the inserts.  A scan begun and ended per
 * row allocates and frees about 27 kB of b-tree scan state each time, which the C library gives
 * back to the kernel and faults in again (bench/README.md "Commits of several operations
 * without statements").  Everything lives in cxt, a child of the caller's context at begin,
 * and is made at first use.
 */
struct SyncDirectBatch
{
	MemoryContext cxt;
	Relation	rel;
	Relation	pk;
	Snapshot	snap;			/* the active snapshot (sync_scan_snapshot_begin) */
	int			rows;			/* rows begun so far (the snapshot, key and slots: at the first) */
	char		allowed[2];		/* direct_allowed for updates, inserts: 0 not asked, 'y', 'n' */
	SnapshotData dirty;
	IndexScanDesc by_key;		/* pk in snap: the stored row of an update */
	IndexScanDesc by_key_dirty; /* pk in dirty: the probe before an insert */
	TupleTableSlot *old;		/* a slot of rel */
	TupleTableSlot *new;		/* virtual, rel's descriptor */
	EState	   *estate;			/* the inserts into rel (first insert) */
	ResultRelInfo *rri;
	Relation	rs;				/* sync_row_scopes, its key, its probe (first insert) */
	Relation	rs_pk;
	IndexScanDesc rs_probe;
	TupleTableSlot *rs_found;
	TupleTableSlot *rs_slot;
	EState	   *rs_estate;
	ResultRelInfo *rs_rri;
	AttrNumber	rs_att[5];
};

/* The primary key of a synced table (its shape checked by sync_storage_row_get). */
static Relation
open_pk(Relation rel)
{
	Oid			pkid = RelationGetPrimaryKeyIndex(rel);

	if (!OidIsValid(pkid))
		elog(ERROR, "syncular: %s has no primary key", RelationGetRelationName(rel));
	return index_open(pkid, RowExclusiveLock);
}

SyncDirectBatch *
sync_rowdirect_begin(Relation rel)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular direct rows",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(cxt);
	SyncDirectBatch *b = palloc0(sizeof(SyncDirectBatch));

	b->cxt = cxt;
	b->rel = rel;
	MemoryContextSwitchTo(caller);
	return b;
}

void
sync_rowdirect_end(SyncDirectBatch *b)
{
	if (b->by_key)
		index_endscan(b->by_key);
	if (b->by_key_dirty)
		index_endscan(b->by_key_dirty);
	if (b->estate)
		direct_estate_end(b->estate, b->rri);
	if (b->rows > 0)
	{
		ExecDropSingleTupleTableSlot(b->new);
		ExecDropSingleTupleTableSlot(b->old);
		index_close(b->pk, NoLock);
	}
	if (b->rs)
	{
		if (b->rs_probe)
			index_endscan(b->rs_probe);
		if (b->rs_estate)
			direct_estate_end(b->rs_estate, b->rs_rri);
		ExecDropSingleTupleTableSlot(b->rs_slot);
		ExecDropSingleTupleTableSlot(b->rs_found);
		index_close(b->rs_pk, NoLock);
		table_close(b->rs, NoLock);
	}
	if (b->rows > 0)
		sync_scan_snapshot_end(false);
	MemoryContextDelete(b->cxt);
}

/*
 * The next row: at the first, the snapshot, the primary key and the slots (none of it for a
 * batch the direct write refuses at once); after it, the writes of the rows before visible in
 * the batch's snapshot.
 */
static void
next_row(SyncDirectBatch *b)
{
	MemoryContext caller;

	if (b->rows++ > 0)
	{
		CommandCounterIncrement();
		UpdateActiveSnapshotCommandId();
		return;
	}
	caller = MemoryContextSwitchTo(b->cxt);
	b->snap = sync_scan_snapshot_begin(false);
	b->pk = open_pk(b->rel);
	InitDirtySnapshot(b->dirty);
	b->old = table_slot_create(b->rel, NULL);
	b->new = MakeSingleTupleTableSlot(RelationGetDescr(b->rel), &TTSOpsVirtual);
	MemoryContextSwitchTo(caller);
}

/* direct_allowed for the batch's table, asked once per kind of write (the same user, relation
 * and lock for every row of the batch) */
static bool
batch_allowed(SyncDirectBatch *b, AclMode mode)
{
	char	   *a = &b->allowed[mode == ACL_UPDATE ? 0 : 1];

	if (*a == 0)
		*a = direct_allowed(b->rel, mode) ? 'y' : 'n';
	return *a == 'y';
}

/*
 * The first row of *scan (an index scan of heap in snap, begun in the batch's memory at its
 * first use) whose first nkeys index columns equal keys: true with the row in slot.
 */
static bool
batch_fetch(SyncDirectBatch *b, IndexScanDesc *scan, Relation heap, Relation index, Snapshot snap,
			ScanKey keys, int nkeys, TupleTableSlot *slot)
{
	MemoryContext caller = MemoryContextSwitchTo(b->cxt);
	bool		found;

	if (*scan == NULL)
		*scan = index_beginscan(heap, index, snap, nkeys, 0);
	index_rescan(*scan, keys, nkeys, NULL, 0);
	found = index_getnext_slot(*scan, ForwardScanDirection, slot);
	MemoryContextSwitchTo(caller);
	return found;
}

/* The row of the batch's table whose primary key (_sync_partition, _sync_row_id) is key. */
static bool
fetch_by_key(SyncDirectBatch *b, const Datum *key, bool dirty, TupleTableSlot *slot)
{
	ScanKeyData keys[2];

	sync_scan_eq_key(&keys[0], b->pk, 1, key[0]);
	sync_scan_eq_key(&keys[1], b->pk, 2, key[1]);
	return dirty
		? batch_fetch(b, &b->by_key_dirty, b->rel, b->pk, &b->dirty, keys, 2, slot)
		: batch_fetch(b, &b->by_key, b->rel, b->pk, b->snap, keys, 2, slot);
}

/*
 * UPDATE rel SET <the set attributes> WHERE (_sync_partition, _sync_row_id) = key, rel being
 * the batch's table (open with RowExclusiveLock): true when the row was found and updated,
 * false with nothing written (no visible row, a concurrent update, or a table the statement
 * must write).
 */
bool
sync_rowdirect_update(SyncDirectBatch *b, const Datum *key, const SyncDirectRow *row)
{
	Relation	rel = b->rel;
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *old;
	TupleTableSlot *new;
	bool	   *set;
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	bool		update_indexes;

	if (!batch_allowed(b, ACL_UPDATE))
		return false;
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);
	next_row(b);
	old = b->old;
	new = b->new;
	if (!fetch_by_key(b, key, false, old))
		return false;
	/* the statement's SET: every written column but the key, which it matched */
	set = palloc(sizeof(bool) * desc->natts);
	memcpy(set, row->set, sizeof(bool) * desc->natts);
	set[row->key[0]] = set[row->key[1]] = false;
	slot_getallattrs(old);
	ExecClearTuple(new);
	for (int i = 0; i < desc->natts; i++)
	{
		new->tts_values[i] = set[i] ? row->values[i] : old->tts_values[i];
		new->tts_isnull[i] = set[i] ? row->isnull[i] : old->tts_isnull[i];
	}
	ExecStoreVirtualTuple(new);
	if (!not_null_ok(new) ||
		table_tuple_update(rel, &old->tts_tid, new, GetCurrentCommandId(true), b->snap,
						   InvalidSnapshot, true, &tmfd, &lockmode, &update_indexes) != TM_Ok)
		return false;
	if (update_indexes)
		insert_index_entries(rel, new, true, set);
	return true;
}

/*
 * The string members of a scopes object as (var, value) text pairs; false when a value is not
 * a string (the statement's jsonb_each_text renders those; none of the push's scopes is one).
 */
bool
sync_rowdirect_scope_pairs(Jsonb *scopes, List **vars, List **values)
{
	JsonbIterator *it = JsonbIteratorInit(&scopes->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	text	   *key = NULL;

	*vars = *values = NIL;
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = cstring_to_text_with_len(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE)
		{
			if (v.type != jbvString)
				return false;
			*vars = lappend(*vars, key);
			*values = lappend(*values,
							  cstring_to_text_with_len(v.val.string.val, v.val.string.len));
		}
		else if (tok != WJB_BEGIN_OBJECT && tok != WJB_END_OBJECT)
			return false;
	}
	return true;
}

/*
 * Insert the row in slot into rel with its index entries, made in *estate (*rri: its result
 * relation of rel; both made at the first row when *estate is NULL, so one state serves the
 * rows of one loop: the caller ends it with direct_estate_end).  The per-row memory of the
 * state is emptied after each row.
 */
static void
insert_row(Relation rel, TupleTableSlot *slot, EState **estate, ResultRelInfo **rri)
{
	if (*estate == NULL)
		*rri = direct_estate(rel, NULL, estate);
	table_tuple_insert(rel, slot, GetCurrentCommandId(true), 0, NULL);
	index_entries(*estate, *rri, slot, false);
	ResetPerTupleExprContext(*estate);
}

/* sync_row_scopes, its key and what its probes and inserts reuse, at the batch's first insert */
static bool
open_row_scopes(SyncDirectBatch *b)
{
	MemoryContext caller;
	Relation	rs;

	if (b->rs)
		return true;
	rs = sync_scan_open_catalog("sync_row_scopes", RowExclusiveLock);
	if (!privileged(RelationGetRelid(rs), ACL_INSERT) ||
		!privileged(RelationGetRelid(rs), ACL_SELECT))
	{
		table_close(rs, NoLock);
		return false;
	}
	caller = MemoryContextSwitchTo(b->cxt);
	b->rs = rs;
	b->rs_pk = open_pk(rs);
	b->rs_found = table_slot_create(rs, NULL);
	b->rs_slot = MakeSingleTupleTableSlot(RelationGetDescr(rs), &TTSOpsVirtual);
	b->rs_att[0] = sync_scan_attnum(rs, "partition");
	b->rs_att[1] = sync_scan_attnum(rs, "tbl");
	b->rs_att[2] = sync_scan_attnum(rs, "var");
	b->rs_att[3] = sync_scan_attnum(rs, "value");
	b->rs_att[4] = sync_scan_attnum(rs, "row_id");
	MemoryContextSwitchTo(caller);
	return true;
}

/*
 * The row-scope entries (partition, tbl, var, value, row_id) of a new row, each inserted unless
 * present (a key probe in the batch's snapshot: the partition lock excludes a concurrent writer
 * of the same entry, docs/storage.md), as the statement inserts them.
 */
static void
insert_scope_entries(SyncDirectBatch *b, Datum partition, Datum tbl, Datum row_id, List *vars,
					 List *values)
{
	TupleDesc	desc = RelationGetDescr(b->rs);
	TupleTableSlot *slot = b->rs_slot;
	ListCell   *lv;
	ListCell   *lval;

	forboth(lv, vars, lval, values)
	{
		Datum		kv[5] = {partition, tbl, PointerGetDatum(lfirst(lv)),
		PointerGetDatum(lfirst(lval)), row_id};
		ScanKeyData keys[5];
		MemoryContext caller;

		for (int k = 0; k < 5; k++)
			sync_scan_eq_key(&keys[k], b->rs_pk, k + 1, kv[k]);
		if (batch_fetch(b, &b->rs_probe, b->rs, b->rs_pk, b->snap, keys, 5, b->rs_found))
			continue;
		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
		for (int k = 0; k < 5; k++)
		{
			slot->tts_values[b->rs_att[k] - 1] = kv[k];
			slot->tts_isnull[b->rs_att[k] - 1] = false;
		}
		ExecStoreVirtualTuple(slot);
		caller = MemoryContextSwitchTo(b->cxt);
		insert_row(b->rs, slot, &b->rs_estate, &b->rs_rri);
		MemoryContextSwitchTo(caller);
	}
}

/*
 * INSERT INTO rel <every attribute, from row> unless its primary key (_sync_partition,
 * _sync_row_id) = key is there, then its row-scope entries from scopes (a jsonb object) for
 * table tbl, rel being the batch's table (open with RowExclusiveLock): true when inserted;
 * false with nothing written (the key is taken, even by a transaction in progress, or a table
 * the statement must write).  A plain insert: no speculative-insertion confirm.
 */
bool
sync_rowdirect_insert(SyncDirectBatch *b, const Datum *key, const SyncDirectRow *row,
					  Jsonb *scopes, Datum tbl)
{
	Relation	rel = b->rel;
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *new;
	List	   *vars;
	List	   *values;
	MemoryContext caller;

	if (!batch_allowed(b, ACL_INSERT) || !sync_rowdirect_scope_pairs(scopes, &vars, &values))
		return false;
	for (int i = 0; i < desc->natts; i++)
		if (!row->set[i] && !TupleDescAttr(desc, i)->attisdropped)
			return false;		/* the statement would give it its default */
	if (!open_row_scopes(b))
		return false;
	next_row(b);
	new = b->new;
	/*
	 * the key probed in a dirty snapshot: a row there, committed or not (a writer outside the
	 * engine), leaves the write to the statement, whose ON CONFLICT waits for it
	 */
	if (fetch_by_key(b, key, true, b->old))
		return false;
	ExecClearTuple(new);
	memcpy(new->tts_values, row->values, sizeof(Datum) * desc->natts);
	memcpy(new->tts_isnull, row->isnull, sizeof(bool) * desc->natts);
	for (int i = 0; i < desc->natts; i++)
		new->tts_isnull[i] |= TupleDescAttr(desc, i)->attisdropped;
	ExecStoreVirtualTuple(new);
	if (!not_null_ok(new))
		return false;
	caller = MemoryContextSwitchTo(b->cxt);
	insert_row(rel, new, &b->estate, &b->rri);
	MemoryContextSwitchTo(caller);
	insert_scope_entries(b, key[0], tbl, key[1], vars, values);
	return true;
}

/*
 * sync_rowdirect_insertable's answers (one commit asks two per round), by relation, user and
 * column list (the caller's static names array).  What an answer reads is the relation's
 * definition (relcache: kind, rules, triggers, attributes, row-level security flags, its ACL
 * and owner; any change of them invalidates the relation's relcache entry, whose callback drops
 * the relation's answers) and the user's roles (superuser, BYPASSRLS, memberships: a change of
 * pg_authid or pg_auth_members drops every answer).  A relation with row-level security enabled
 * is not cached: check_enable_rls also reads the security context there.
 */
#define INSERTABLE_CACHE 8
#define INSERTABLE_MAX_COLS 16

typedef struct InsertableAnswer
{
	Oid			relid;
	Oid			userid;
	const char *const *names;
	int			n;
	bool		ok;
	int			att[INSERTABLE_MAX_COLS];
} InsertableAnswer;

static InsertableAnswer insertable_cache[INSERTABLE_CACHE];
static int	ninsertable = 0;
static bool insertable_callbacks = false;

static void
insertable_rel_reset(Datum arg, Oid relid)
{
	for (int i = ninsertable - 1; i >= 0; i--)
		if (!OidIsValid(relid) || insertable_cache[i].relid == relid)
			insertable_cache[i] = insertable_cache[--ninsertable];
}

static void
insertable_roles_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	ninsertable = 0;
}

static InsertableAnswer *
insertable_cached(Oid relid, Oid userid, int n, const char *const *names)
{
	for (int i = 0; i < ninsertable; i++)
		if (insertable_cache[i].relid == relid && insertable_cache[i].userid == userid &&
			insertable_cache[i].names == names && insertable_cache[i].n == n)
			return &insertable_cache[i];
	return NULL;
}

static void
insertable_remember(Relation rel, Oid userid, int n, const char *const *names, bool ok,
					const int *att)
{
	InsertableAnswer *a;

	if (rel->rd_rel->relrowsecurity || n > INSERTABLE_MAX_COLS)
		return;
	if (!insertable_callbacks)
	{
		CacheRegisterRelcacheCallback(insertable_rel_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, insertable_roles_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, insertable_roles_reset, (Datum) 0);
		insertable_callbacks = true;
	}
	if (ninsertable == INSERTABLE_CACHE)
		ninsertable = 0;		/* more relations than the log has: start over */
	a = &insertable_cache[ninsertable++];
	a->relid = RelationGetRelid(rel);
	a->userid = userid;
	a->names = names;
	a->n = n;
	a->ok = ok;
	memcpy(a->att, att, sizeof(int) * n);
}

/* sync_rowdirect_insertable without the cache. */
static bool
insertable_check(Relation rel, int n, const char *const *names, const Oid *types, int *att)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TriggerDesc *td = rel->trigdesc;
	int			named = 0;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->rd_rules != NULL ||
		(desc->constr != NULL && desc->constr->has_generated_stored))
		return false;
	for (int i = 0; td != NULL && i < td->numtriggers; i++)
		if (TRIGGER_FOR_INSERT(td->triggers[i].tgtype) &&
			(!TRIGGER_FOR_ROW(td->triggers[i].tgtype) ||
			 !TRIGGER_FOR_BEFORE(td->triggers[i].tgtype)))
			return false;
	if (td != NULL && td->trig_insert_new_table)
		return false;
	for (int k = 0; k < n; k++)
	{
		att[k] = attr_index(desc, names[k]);
		if (att[k] < 0 || TupleDescAttr(desc, att[k])->atttypid != types[k] ||
			TupleDescAttr(desc, att[k])->atttypmod != -1)
			return false;
	}
	for (int i = 0; i < desc->natts; i++)
		named += !TupleDescAttr(desc, i)->attisdropped;
	if (named != n)
		return false;			/* another column would get its default */
	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, true) == RLS_ENABLED)
		return false;
	return privileged(RelationGetRelid(rel), ACL_INSERT);
}

/*
 * Whether INSERT INTO rel (names) VALUES (...) can be made without the statement: a table of
 * the syncular schema, every live attribute named with the parameter's type (att[k]: the
 * attribute index of names[k]; n at most 16), no rewrite rule, no row-level security for the
 * caller, the caller's INSERT privilege, and no trigger an INSERT fires but BEFORE ROW ones (the
 * writer fence of sync_commits), which sync_rowdirect_insert_values fires.  names must be a
 * static array (the answer is kept by its address).  rel is open with a lock, so the
 * invalidations of its definition have been received.
 */
bool
sync_rowdirect_insertable(Relation rel, int n, const char *const *names, const Oid *types,
						  int *att)
{
	Oid			userid = GetUserId();
	InsertableAnswer *a = insertable_cached(RelationGetRelid(rel), userid, n, names);
	bool		ok;

	if (a != NULL)
	{
		memcpy(att, a->att, sizeof(int) * n);
		return a->ok;
	}
	/* every att[k] set, even when the check stops early, so the kept answer is defined */
	for (int k = 0; k < n; k++)
		att[k] = -1;
	ok = insertable_check(rel, n, names, types, att);
	insertable_remember(rel, userid, n, names, ok, att);
	return ok;
}

/*
 * The BEFORE INSERT row triggers of rri fired on slot (a row of desc): false when one skipped
 * the row.  The writer fence alone (fence_only) is checked in place, as its trigger function
 * checks the row (the partition and writer_version columns) and returns it unchanged.
 */
static bool
before_insert_triggers(EState *estate, ResultRelInfo *rri, TupleTableSlot *slot, TupleDesc desc)
{
	int			p;
	int			w;

	if (!fence_only(rri->ri_TrigDesc) || (p = attr_index(desc, "partition")) < 0 ||
		(w = attr_index(desc, "writer_version")) < 0)
		return ExecBRInsertTriggers(estate, rri, slot);
	sync_storage_writer_fence_check(slot->tts_values[p], slot->tts_isnull[p],
									slot->tts_values[w], slot->tts_isnull[w]);
	return true;
}

/* Rows per table_multi_insert call (CopyFrom buffers up to 1,000 rows the same way). */
#define MULTI_INSERT_ROWS 1000

/* Row r of vals / nulls (n values, k as att) stored in slot, a virtual tuple of rel. */
static void
fill_slot(TupleTableSlot *slot, TupleDesc desc, int n, const int *att, const Datum *v,
		  const bool *nl)
{
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	for (int k = 0; k < n; k++)
	{
		slot->tts_values[att[k]] = nl[k] ? (Datum) 0 : v[k];
		slot->tts_isnull[att[k]] = nl[k];
	}
	ExecStoreVirtualTuple(slot);
}

/*
 * Rows without BEFORE row triggers, as CopyFrom inserts them: up to MULTI_INSERT_ROWS at a time
 * with table_multi_insert (one WAL record per heap page filled, not one per row), then each
 * row's index entries.
 */
static void
insert_rows_multi(Relation rel, EState *estate, ResultRelInfo *rri, int n, const int *att,
				  int nrows, const Datum *vals, const bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			batch = Min(nrows, MULTI_INSERT_ROWS);
	TupleTableSlot **slots = palloc(sizeof(TupleTableSlot *) * batch);
	MemoryContext caller;

	/*
	 * The slots share one unpinned copy of the descriptor: a pin per slot of the relation's own
	 * would put the same pointer a thousand times in the resource owner's hash, where each pin
	 * and release probes past all the others.
	 */
	TupleDesc	sdesc = CreateTupleDescCopy(desc);
	const TupleTableSlotOps *ops = table_slot_callbacks(rel);

	for (int i = 0; i < batch; i++)
		slots[i] = MakeSingleTupleTableSlot(sdesc, ops);
	for (int r = 0; r < nrows; r += batch)
	{
		int			m = Min(batch, nrows - r);

		for (int i = 0; i < m; i++)
		{
			fill_slot(slots[i], desc, n, att, vals + (size_t) (r + i) * n,
					  nulls + (size_t) (r + i) * n);
			if (desc->constr != NULL)
				ExecConstraints(rri, slots[i], estate);
		}
		/* table_multi_insert may leak memory: in the per-row context, as CopyFrom calls it */
		caller = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));
		table_multi_insert(rel, slots, m, GetCurrentCommandId(true), 0, NULL);
		MemoryContextSwitchTo(caller);
		for (int i = 0; i < m; i++)
		{
			index_entries(estate, rri, slots[i], false);
			ResetPerTupleExprContext(estate);
		}
	}
	for (int i = 0; i < batch; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	pfree(slots);
	FreeTupleDesc(sdesc);
}

/*
 * The inserts sync_rowdirect_insertable allowed, as the executor makes them: for each of nrows
 * rows (row r's values vals[r * n + k] / nulls[r * n + k], k as att), the BEFORE INSERT row
 * triggers (one returning NULL skips the row), the table's constraints (their errors), the heap
 * insert and its index entries.  One executor state serves every row (its per-row memory
 * emptied after each), as one INSERT statement of nrows rows would.  Several rows of a table
 * without BEFORE row triggers go to the heap in batches (insert_rows_multi).
 */
void
sync_rowdirect_insert_rows(Relation rel, int n, const int *att, int nrows, const Datum *vals,
						   const bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(rel);
	EState	   *estate;
	ResultRelInfo *rri = direct_estate(rel, NULL, &estate);
	TupleTableSlot *slot;
	bool		before = rri->ri_TrigDesc != NULL && rri->ri_TrigDesc->trig_insert_before_row;

	if (!before && nrows > 1)
	{
		insert_rows_multi(rel, estate, rri, n, att, nrows, vals, nulls);
		direct_estate_end(estate, rri);
		return;
	}
	slot = table_slot_create(rel, NULL);
	for (int r = 0; r < nrows; r++)
	{
		fill_slot(slot, desc, n, att, vals + (size_t) r * n, nulls + (size_t) r * n);
		if (!before || before_insert_triggers(estate, rri, slot, desc))
		{
			if (desc->constr != NULL)
				ExecConstraints(rri, slot, estate);
			table_tuple_insert(rel, slot, GetCurrentCommandId(true), 0, NULL);
			index_entries(estate, rri, slot, false);
		}
		ResetPerTupleExprContext(estate);
	}
	ExecDropSingleTupleTableSlot(slot);
	direct_estate_end(estate, rri);
}

/* sync_rowdirect_insert_rows of one row */
void
sync_rowdirect_insert_values(Relation rel, int n, const int *att, const Datum *vals,
							 const bool *nulls)
{
	sync_rowdirect_insert_rows(rel, n, att, 1, vals, nulls);
}
