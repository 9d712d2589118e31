/*
 * storage_scan.c — helpers of the storage layer's direct index scans (storage_log.c: the commit
 * log window; storage_pages.c: bootstrap pages; storage_meta.c, storage.c and storage_rows.c:
 * the round's keyed reads).  The pull reads by ordered index scans in its snapshot, without the
 * executor, because a round reads only what it delivers plus one entry (SPEC §3.6, §3.7); a
 * round's keyed reads (the serve gate, the registry, the client record, a stored row) are one
 * primary-key probe each, which as a kept statement paid an executor start and end per call
 * and, when the plan was made on a nearly empty table, a sequential scan until the next
 * ANALYZE.  These are the pieces every such read needs.  Calls no other syncular file.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "storage_scan.h"

/*
 * The syncular schema's relations by name, looked up once per backend (two catalog cache
 * lookups each time otherwise, several times a round).  Any relcache invalidation of a cached
 * relation (DROP, ALTER, ANALYZE) or of all of them empties the cache and bumps the
 * generation, so a name is looked up again; sync_scan_open_catalog re-checks the generation
 * after taking its lock, which is when a concurrent DROP's invalidation arrives.
 */
#define RELID_CACHE_SIZE 32

typedef struct RelidEntry
{
	const char *name;			/* the caller's literal */
	Oid			relid;
} RelidEntry;

static RelidEntry relid_cache[RELID_CACHE_SIZE];
static int	nrelids = 0;
static uint64 relid_generation = 0;
static bool relid_callback = false;

static void
relid_cache_invalidate(Datum arg, Oid relid)
{
	for (int i = 0; i < nrelids; i++)
		if (!OidIsValid(relid) || relid_cache[i].relid == relid)
		{
			nrelids = 0;
			relid_generation++;
			return;
		}
}

/* A relation of the syncular schema by name. */
Oid
sync_scan_catalog_relid(const char *name)
{
	Oid			relid;

	for (int i = 0; i < nrelids; i++)
		if (strcmp(relid_cache[i].name, name) == 0)
			return relid_cache[i].relid;
	if (!relid_callback)
	{
		CacheRegisterRelcacheCallback(relid_cache_invalidate, (Datum) 0);
		relid_callback = true;
	}
	relid = get_relname_relid(name, get_namespace_oid("syncular", false));
	if (!OidIsValid(relid))
		elog(ERROR, "syncular: relation syncular.%s is missing", name);
	if (nrelids < RELID_CACHE_SIZE)
	{
		relid_cache[nrelids].name = name;
		relid_cache[nrelids].relid = relid;
		nrelids++;
	}
	return relid;
}

/* Bumped whenever the cache empties: what is derived from a cached relation's definition can
 * be kept until it changes. */
uint64
sync_scan_catalog_generation(void)
{
	return relid_generation;
}

/*
 * Open a relation of the syncular schema (table or index) by name with lock: the cached OID,
 * looked up again when the lock brought an invalidation of the cache (the relation was
 * dropped or replaced meanwhile).
 */
Relation
sync_scan_open_catalog(const char *name, LOCKMODE lock)
{
	for (;;)
	{
		Oid			relid = sync_scan_catalog_relid(name);
		uint64		generation = relid_generation;

		LockRelationOid(relid, lock);
		if (generation == relid_generation)
			return relation_open(relid, NoLock);
		UnlockRelationOid(relid, lock);
	}
}

/* A table of the syncular schema with its primary key and a slot, for keyed reads. */
void
sync_scan_keyed_open(SyncKeyed *k, const char *table)
{
	Oid			pk;

	k->heap = sync_scan_open_catalog(table, AccessShareLock);
	pk = RelationGetPrimaryKeyIndex(k->heap);
	if (!OidIsValid(pk))
		elog(ERROR, "syncular: syncular.%s has no primary key", table);
	k->pk = index_open(pk, AccessShareLock);
	k->slot = table_slot_create(k->heap, NULL);
}

/* Closed; the locks are kept to the end of the transaction, as the executor keeps them. */
void
sync_scan_keyed_close(SyncKeyed *k)
{
	ExecDropSingleTupleTableSlot(k->slot);
	index_close(k->pk, NoLock);
	table_close(k->heap, NoLock);
}

/*
 * A sequential scan of a table of the syncular schema (AccessShareLock, kept to the end of the
 * transaction) in snap, for the small tables read whole; the rows come into s->slot.
 */
void
sync_scan_table_begin(SyncTableScan *s, const char *table, Snapshot snap)
{
	s->heap = sync_scan_open_catalog(table, AccessShareLock);
	s->slot = table_slot_create(s->heap, NULL);
	s->scan = table_beginscan(s->heap, snap, 0, NULL);
}

void
sync_scan_table_end(SyncTableScan *s)
{
	table_endscan(s->scan);
	ExecDropSingleTupleTableSlot(s->slot);
	table_close(s->heap, NoLock);
}

/*
 * The snapshot of a keyed read: read_only, the caller's active snapshot (the pull's, a SQL
 * function's statement); otherwise what SPI gives a statement that is not read-only: a new
 * snapshot (READ COMMITTED; the transaction's otherwise) in which the transaction's own
 * earlier writes are visible (CommandCounterIncrement).  sync_scan_snapshot_end after the read.
 */
Snapshot
sync_scan_snapshot_begin(bool read_only)
{
	if (!read_only)
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		CommandCounterIncrement();
		UpdateActiveSnapshotCommandId();
	}
	return GetActiveSnapshot();
}

void
sync_scan_snapshot_end(bool read_only)
{
	if (!read_only)
		PopActiveSnapshot();
}

/*
 * One row by its key: the first nkeys columns of index (a unique index of heap) equal to
 * keys (sync_scan_eq_key / sync_scan_int4_key), visible in snap.  true: the row is in slot
 * (a slot of heap; valid until the slot is cleared or dropped); false: no such row.
 */
bool
sync_scan_fetch(Relation heap, Relation index, ScanKey keys, int nkeys, Snapshot snap,
				TupleTableSlot *slot)
{
	IndexScanDesc scan = index_beginscan(heap, index, snap, nkeys, 0);
	bool		found;

	index_rescan(scan, keys, nkeys, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	return found;
}

/* A column of the row in slot as a palloc'd C string (NULL for SQL NULL). */
char *
sync_scan_text(TupleTableSlot *slot, AttrNumber attno)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, attno, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* A varlena column of the row in slot, detoasted into a palloc'd copy (NULL for SQL NULL). */
void *
sync_scan_varlena(TupleTableSlot *slot, AttrNumber attno)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, attno, &isnull);

	return isnull ? NULL : PG_DETOAST_DATUM_COPY(d);
}

/* An int8 column of the row in slot (0 for SQL NULL, *isnull set). */
int64
sync_scan_int8(TupleTableSlot *slot, AttrNumber attno, bool *isnull)
{
	Datum		d = slot_getattr(slot, attno, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

/* The attribute number of a column of a transition table's descriptor (SPI_fnumber). */
static AttrNumber
transition_attnum(TupleDesc desc, const char *name)
{
	int			a = SPI_fnumber(desc, name);

	if (a <= 0)
		elog(ERROR, "syncular: a synced table's transition table has no column %s", name);
	return (AttrNumber) a;
}

void
sync_scan_synced_cols(TupleDesc desc, SyncSyncedCols *c)
{
	c->part = transition_attnum(desc, "_sync_partition");
	c->row = transition_attnum(desc, "_sync_row_id");
	c->ver = transition_attnum(desc, "_sync_server_version");
	c->scopes = transition_attnum(desc, "_sync_scopes");
	c->payload = transition_attnum(desc, "_sync_payload");
}

void
sync_scan_tuplestore_rewind(Tuplestorestate *ts)
{
	int			ptr = tuplestore_alloc_read_pointer(ts, EXEC_FLAG_REWIND);

	tuplestore_select_read_pointer(ts, ptr);
	tuplestore_rescan(ts);
}

AttrNumber
sync_scan_attnum(Relation rel, const char *name)
{
	TupleDesc	td = RelationGetDescr(rel);

	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return a->attnum;
	}
	elog(ERROR, "syncular: column %s of %s is missing", name, RelationGetRelationName(rel));
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/* An equality key on an index column, in that column's collation. */
void
sync_scan_eq_key(ScanKey k, Relation index, AttrNumber attno, Datum value)
{
	ScanKeyEntryInitialize(k, 0, attno, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[attno - 1], F_TEXTEQ, value);
}

/* An equality key on an int4 index column. */
void
sync_scan_int4_key(ScanKey k, AttrNumber attno, int32 value)
{
	ScanKeyEntryInitialize(k, 0, attno, BTEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_INT4EQ, Int32GetDatum(value));
}

/*
 * The next index entry of an index-only scan that is visible in the scan's snapshot, by
 * IndexOnlyNext's rule: a heap page the visibility map marks all-visible is trusted (and
 * predicate-locked for SERIALIZABLE), any other entry is checked against its heap tuple.
 * true: scan->xs_itup holds the entry; false: the scan is done.  slot: a scratch slot of heap.
 */
bool
sync_scan_next_visible(IndexScanDesc scan, Relation heap, TupleTableSlot *slot, Buffer *vmbuf)
{
	ItemPointer tid;

	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		if (!VM_ALL_VISIBLE(heap, ItemPointerGetBlockNumber(tid), vmbuf))
		{
			if (!index_fetch_heap(scan, slot))
				continue;		/* not visible in the snapshot */
			ExecClearTuple(slot);
		}
		else
			PredicateLockPage(heap, ItemPointerGetBlockNumber(tid), scan->xs_snapshot);
		return true;
	}
	return false;
}

int
sync_scan_bytes_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	return c != 0 ? c : (alen > blen) - (alen < blen);
}

int
sync_scan_text_cmp(const struct varlena *a, const struct varlena *b)
{
	return sync_scan_bytes_cmp(VARDATA_ANY(a), VARSIZE_ANY_EXHDR(a), VARDATA_ANY(b),
							   VARSIZE_ANY_EXHDR(b));
}
