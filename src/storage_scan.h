/*
 * storage_scan.h — what the storage files that read by direct index scans share (storage_log.c,
 * storage_pages.c; the keyed reads of storage.c, storage_meta.c and storage_rows.c): relations
 * of the syncular schema by name, columns by name, equality keys, one row by its key, the
 * snapshot of a read, and the index-only visibility rule.  Internal to the storage layer.
 */
#ifndef SYNCULAR_STORAGE_SCAN_H
#define SYNCULAR_STORAGE_SCAN_H

#include "access/genam.h"
#include "access/skey.h"
#include "executor/tuptable.h"
#include "storage/buf.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"
#include "utils/tuplestore.h"

/* A table of the syncular schema, its primary key and a slot of the table (keyed reads). */
typedef struct SyncKeyed
{
	Relation	heap;
	Relation	pk;
	TupleTableSlot *slot;
} SyncKeyed;

/* A sequential scan of a small table of the syncular schema and its slot. */
typedef struct SyncTableScan
{
	Relation	heap;
	TupleTableSlot *slot;
	struct TableScanDescData *scan;
} SyncTableScan;

extern Oid	sync_scan_catalog_relid(const char *name);
extern uint64 sync_scan_catalog_generation(void);
extern void sync_scan_keyed_open(SyncKeyed *k, const char *table);
extern void sync_scan_keyed_close(SyncKeyed *k);
extern void sync_scan_table_begin(SyncTableScan *s, const char *table, Snapshot snap);
extern void sync_scan_table_end(SyncTableScan *s);
extern Relation sync_scan_open_catalog(const char *name, LOCKMODE lock);
extern Snapshot sync_scan_snapshot_begin(bool read_only);
extern void sync_scan_snapshot_end(bool read_only);
extern bool sync_scan_fetch(Relation heap, Relation index, ScanKey keys, int nkeys,
							Snapshot snap, TupleTableSlot *slot);
extern char *sync_scan_text(TupleTableSlot *slot, AttrNumber attno);
extern void *sync_scan_varlena(TupleTableSlot *slot, AttrNumber attno);
extern int64 sync_scan_int8(TupleTableSlot *slot, AttrNumber attno, bool *isnull);
extern void sync_scan_int4_key(ScanKey k, AttrNumber attno, int32 value);
extern AttrNumber sync_scan_attnum(Relation rel, const char *name);

/* The _sync_* attribute numbers of a synced table's rows in its capture transition tables. */
typedef struct SyncSyncedCols
{
	AttrNumber	part;
	AttrNumber	row;
	AttrNumber	ver;
	AttrNumber	scopes;
	AttrNumber	payload;
} SyncSyncedCols;
extern void sync_scan_synced_cols(TupleDesc desc, SyncSyncedCols *c);
/* A read pointer of our own at the start of a transition table (the executor's keep theirs). */
extern void sync_scan_tuplestore_rewind(Tuplestorestate *ts);
extern void sync_scan_eq_key(ScanKey k, Relation index, AttrNumber attno, Datum value);
/* Byte order (COLLATE "C") of two strings given with their lengths; of two text values. */
extern int	sync_scan_bytes_cmp(const char *a, int alen, const char *b, int blen);
extern int	sync_scan_text_cmp(const struct varlena *a, const struct varlena *b);
extern bool sync_scan_next_visible(IndexScanDesc scan, Relation heap, TupleTableSlot *slot,
								   Buffer *vmbuf);

#endif							/* SYNCULAR_STORAGE_SCAN_H */
