/*
 * storage_scan.h — what the storage files that read by direct index scans share (storage_log.c,
 * storage_pages.c): relations of the syncular schema by name, columns by name, equality keys,
 * and the index-only visibility rule.  Internal to the storage layer.
 */
#ifndef SYNCULAR_STORAGE_SCAN_H
#define SYNCULAR_STORAGE_SCAN_H

#include "access/genam.h"
#include "access/skey.h"
#include "executor/tuptable.h"
#include "storage/buf.h"
#include "utils/relcache.h"

extern Oid	sync_scan_catalog_relid(const char *name);
extern AttrNumber sync_scan_attnum(Relation rel, const char *name);
extern void sync_scan_eq_key(ScanKey k, Relation index, AttrNumber attno, Datum value);
extern bool sync_scan_next_visible(IndexScanDesc scan, Relation heap, TupleTableSlot *slot,
								   Buffer *vmbuf);

#endif							/* SYNCULAR_STORAGE_SCAN_H */
