/*
 * storage_blobs.c — the blob store's reads and writes (SPEC §5.9; docs/blobs.md):
 * sync_blobs (one row per stored blob of a partition, naming the upload that holds its bytes),
 * sync_blob_chunks (the bytes, at most one chunk per row, under an upload id),
 * sync_blob_upload_seq and sync_blob_refs (the rows that reference a blob, written by the
 * commit log).  What they mean (content addressing, authorization, signed URLs) is decided in
 * blobs.c.  Every function needs an SPI connection and restores the caller's memory context,
 * where its results are allocated.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "storage.h"

typedef enum
{
	P_EXISTS_LOCK,
	P_EXISTS,
	P_NEXT_ID,
	P_CHUNK_INSERT,
	P_STAGED,
	P_BLOB_INSERT,
	P_CHUNKS_DELETE,
	P_BLOB_GET,
	P_REFS,
	P_CHUNKS,
	P_PARTITIONS,
	P_COUNT
} BlobPlan;

static const struct
{
	const char *sql;
	int			nargs;
	Oid			types[6];
}			plan_defs[P_COUNT] = {
	[P_EXISTS_LOCK] = {"SELECT 1 FROM syncular.sync_blobs WHERE partition = $1 AND blob_id = $2 "
	"FOR KEY SHARE", 2, {TEXTOID, TEXTOID}},
	[P_EXISTS] = {"SELECT 1 FROM syncular.sync_blobs WHERE partition = $1 AND blob_id = $2",
	2, {TEXTOID, TEXTOID}},
	[P_NEXT_ID] = {"SELECT nextval('syncular.sync_blob_upload_seq')", 0, {0}},
	[P_CHUNK_INSERT] = {"INSERT INTO syncular.sync_blob_chunks (upload_id, seq, data) "
	"VALUES ($1, $2, $3)", 3, {INT8OID, INT4OID, BYTEAOID}},
	[P_STAGED] = {"SELECT count(*)::int4, coalesce(sum(length(data)), 0)::int8 "
	"FROM syncular.sync_blob_chunks WHERE upload_id = $1", 1, {INT8OID}},
	[P_BLOB_INSERT] = {"INSERT INTO syncular.sync_blobs "
		"(partition, blob_id, byte_length, uploader, created_at_ms, upload_id) "
		"VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (partition, blob_id) DO NOTHING",
	6, {TEXTOID, TEXTOID, INT8OID, TEXTOID, INT8OID, INT8OID}},
	[P_CHUNKS_DELETE] = {"DELETE FROM syncular.sync_blob_chunks WHERE upload_id = $1",
	1, {INT8OID}},
	[P_BLOB_GET] = {"SELECT byte_length, upload_id FROM syncular.sync_blobs "
	"WHERE partition = $1 AND blob_id = $2", 2, {TEXTOID, TEXTOID}},
	[P_REFS] = {"SELECT tbl, row_id FROM syncular.sync_blob_refs "
	"WHERE partition = $1 AND blob_id = $2 ORDER BY tbl, row_id", 2, {TEXTOID, TEXTOID}},
	[P_CHUNKS] = {"SELECT data FROM syncular.sync_blob_chunks WHERE upload_id = $1 ORDER BY seq",
	1, {INT8OID}},
	[P_PARTITIONS] = {"SELECT partition FROM syncular.sync_blobs WHERE blob_id = $1",
	1, {TEXTOID}},
};

static SPIPlanPtr plans[P_COUNT];

static SPIPlanPtr
plan(BlobPlan p)
{
	if (plans[p] == NULL)
		plans[p] = sync_storage_keep_plan(plan_defs[p].sql, plan_defs[p].nargs,
										  (Oid *) plan_defs[p].types, 0);
	return plans[p];
}

/* Run a kept plan; the caller's memory context is current again afterwards. */
static uint64
run(BlobPlan p, Datum *args, bool read_only, long count)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan(p), args, NULL, read_only, count);

	MemoryContextSwitchTo(caller);
	if (rc < 0)
		elog(ERROR, "syncular blobs: statement failed (%d)", rc);
	return SPI_processed;
}

static int64
col_int8(int row, int col)
{
	bool		isnull;

	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull));
}

/* The next upload id (sync_blob_upload_seq). */
int64
sync_blob_store_next_upload_id(void)
{
	run(P_NEXT_ID, NULL, false, 1);
	return col_int8(0, 1);
}

/*
 * Whether (partition, blob_id) is stored.  lock: the row is locked FOR KEY SHARE until the
 * transaction ends (the push-time check, §5.9.6, so blob_gc cannot delete it under a commit).
 */
bool
sync_blob_store_exists(const char *partition, const char *blob_id, bool lock)
{
	Datum		args[2];

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(blob_id);
	return lock ? run(P_EXISTS_LOCK, args, false, 1) > 0 : run(P_EXISTS, args, true, 1) > 0;
}

/* Chunk number seq of an upload. */
void
sync_blob_store_chunk_insert(int64 upload_id, int32 seq, bytea *chunk)
{
	Datum		args[3];

	args[0] = Int64GetDatum(upload_id);
	args[1] = Int32GetDatum(seq);
	args[2] = PointerGetDatum(chunk);
	run(P_CHUNK_INSERT, args, false, 0);
}

/* The chunks an upload has stored, as this transaction sees them (its own inserts included). */
void
sync_blob_store_staged(int64 upload_id, int32 *nchunks, int64 *bytes)
{
	Datum		arg = Int64GetDatum(upload_id);
	bool		isnull;

	run(P_STAGED, &arg, false, 1);	/* read-write: sees this call's own inserts */
	*nchunks = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*bytes = col_int8(0, 2);
}

/* The blob row naming upload_id; false when (partition, blob_id) was stored already. */
bool
sync_blob_store_insert(const char *partition, const char *blob_id, int64 byte_length,
					   const char *uploader, int64 created_at_ms, int64 upload_id)
{
	Datum		args[6];

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(blob_id);
	args[2] = Int64GetDatum(byte_length);
	args[3] = CStringGetTextDatum(uploader);
	args[4] = Int64GetDatum(created_at_ms);
	args[5] = Int64GetDatum(upload_id);
	return run(P_BLOB_INSERT, args, false, 0) > 0;
}

/* Drop an upload's chunks. */
void
sync_blob_store_chunks_delete(int64 upload_id)
{
	Datum		arg = Int64GetDatum(upload_id);

	run(P_CHUNKS_DELETE, &arg, false, 0);
}

/* A stored blob's length and the upload holding its bytes; false when there is none. */
bool
sync_blob_store_get(const char *partition, const char *blob_id, int64 *byte_length,
					int64 *upload_id)
{
	Datum		args[2];

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(blob_id);
	if (run(P_BLOB_GET, args, true, 1) == 0)
		return false;
	*byte_length = col_int8(0, 1);
	*upload_id = col_int8(0, 2);
	return true;
}

/*
 * Walk the rows of the partition that reference the blob, in (tbl, row_id) order, a page of 100
 * at a time through a cursor, until fn answers true; returns whether one did.  fn runs in a
 * context reset after each row.
 */
bool
sync_blob_store_refs_any(const char *partition, const char *blob_id,
						 bool (*fn) (const char *tbl, const char *row_id, void *arg), void *arg)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext per_row;
	Portal		portal;
	Datum		args[2];
	bool		ok = false;

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(blob_id);
	portal = SPI_cursor_open(NULL, plan(P_REFS), args, NULL, true);
	MemoryContextSwitchTo(caller);
	per_row = AllocSetContextCreate(caller, "syncular blob authorization", ALLOCSET_DEFAULT_SIZES);
	while (!ok)
	{
		SPITupleTable *tt;
		uint64		n;

		SPI_cursor_fetch(portal, true, 100);
		MemoryContextSwitchTo(caller);
		tt = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;
		for (uint64 i = 0; i < n && !ok; i++)
		{
			MemoryContext old = MemoryContextSwitchTo(per_row);

			ok = fn(SPI_getvalue(tt->vals[i], tt->tupdesc, 1),
					SPI_getvalue(tt->vals[i], tt->tupdesc, 2), arg);
			MemoryContextSwitchTo(old);
			MemoryContextReset(per_row);
		}
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(per_row);
	return ok;
}

/*
 * An upload's chunks in order, one fetched and detoasted at a time, each handed to fn (freed
 * after it returns); returns how many there were.
 */
int64
sync_blob_store_chunks_each(int64 upload_id, void (*fn) (bytea *chunk, void *arg), void *arg)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		id = Int64GetDatum(upload_id);
	Portal		portal = SPI_cursor_open(NULL, plan(P_CHUNKS), &id, NULL, true);
	int64		n = 0;
	bool		isnull;

	MemoryContextSwitchTo(caller);
	for (;;)
	{
		Datum		d;
		struct varlena *chunk;

		SPI_cursor_fetch(portal, true, 1);
		MemoryContextSwitchTo(caller);
		if (SPI_processed == 0)
			break;
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		chunk = PG_DETOAST_DATUM(d);
		fn((bytea *) chunk, arg);
		n++;
		if ((Pointer) chunk != DatumGetPointer(d))
			pfree(chunk);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	MemoryContextSwitchTo(caller);
	return n;
}

/* The partitions that store blob_id; their number, the names in *partitions. */
int
sync_blob_store_partitions(const char *blob_id, char ***partitions)
{
	Datum		arg = CStringGetTextDatum(blob_id);
	SPITupleTable *tt;
	uint64		n = run(P_PARTITIONS, &arg, true, 0);

	tt = SPI_tuptable;
	*partitions = palloc(sizeof(char *) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
		(*partitions)[i] = SPI_getvalue(tt->vals[i], tt->tupdesc, 1);
	return (int) n;
}
