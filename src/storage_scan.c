/*
 * storage_scan.c — helpers of the storage layer's direct index scans (storage_log.c: the commit
 * log window; storage_pages.c: bootstrap pages).  The pull reads by ordered index scans in its
 * snapshot, without the executor, because a round reads only what it delivers plus one entry
 * (SPEC §3.6, §3.7); these are the pieces every such scan needs.  Calls no other syncular file.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/visibilitymap.h"
#include "catalog/namespace.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "storage_scan.h"

/* A relation of the syncular schema by name. */
Oid
sync_scan_catalog_relid(const char *name)
{
	Oid			relid = get_relname_relid(name, get_namespace_oid("syncular", false));

	if (!OidIsValid(relid))
		elog(ERROR, "syncular pull: relation syncular.%s is missing", name);
	return relid;
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
	elog(ERROR, "syncular pull: column %s of %s is missing", name, RelationGetRelationName(rel));
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/* An equality key on an index column, in that column's collation. */
void
sync_scan_eq_key(ScanKey k, Relation index, AttrNumber attno, Datum value)
{
	ScanKeyEntryInitialize(k, 0, attno, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[attno - 1], F_TEXTEQ, value);
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
