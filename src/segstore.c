/*
 * segstore.c — the segment store (SPEC §5.1): content-addressed bytes in syncular.sync_segments,
 * one publication per descriptor context in syncular.sync_segment_publications
 * (src/sql/45_segments.sql), and the settings that govern them.
 *
 * A publication is live while now < expires_at_ms (syncular.segment_ttl after it was last
 * published) and no RFC 0007 checkpoint of its partition has a schema version above its own
 * (barrier-rfc0007.md §9.1); the pull only reuses live publications, the download only serves
 * them.  Statements are prepared once per backend and kept (SPI_keepplan).  Part of the storage
 * layer: the signed-URL secret (sync_segment_secret) and the publication reads of downloads
 * (segurl.c, segdownload.c) are here too, so no other file names these tables.
 */
#include "postgres.h"

#include <limits.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "segments.h"
#include "storage.h"

int			sync_segment_ttl_s = 24 * 60 * 60;
int			sync_inline_segment_max_bytes = 256 * 1024;

void
sync_segments_define_gucs(void)
{
	DefineCustomIntVariable("syncular.segment_ttl",
							"Lifetime of a published segment (SPEC §5.1).",
							"A stored segment is reused by later pulls and downloadable until this "
							"long after it was last published; then downloads answer "
							"sync.segment_expired and syncular.prune_segments forgets it.",
							&sync_segment_ttl_s,
							24 * 60 * 60, 1, INT_MAX,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.inline_segment_max_bytes",
							"Largest rows segment sent inline (SEGMENT_INLINE), in bytes.",
							"A bootstrap page of a client that accepts external rows segments "
							"(accept bit 1) is stored and sent as a SEGMENT_REF when it is larger, "
							"or when the client does not accept inline segments (SPEC §5.7).",
							&sync_inline_segment_max_bytes,
							256 * 1024, 0, (int) (MaxAllocSize / 2),
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}

bool
sync_segments_writable(void)
{
	return !RecoveryInProgress() && !XactReadOnly;
}

/* ---------------------------------------------------------------- hashing */

char *
sync_segment_id(const uint8 *data, size_t len)
{
	char	   *id = palloc(7 + PG_SHA256_DIGEST_LENGTH * 2 + 1);

	memcpy(id, "sha256:", 7);
	sync_sha256_hex(data, len, id + 7);
	return id;
}

char *
sync_grant_digest(const SyncEffective *e)
{
	StringInfoData b;
	char	   *hex = palloc(PG_SHA256_DIGEST_LENGTH * 2 + 1);

	/* NUL-separated fields (scope values never hold U+0000), one entry per line */
	initStringInfo(&b);
	for (int i = 0; i < e->nall; i++)
	{
		appendBinaryStringInfo(&b, e->vars[i], strlen(e->vars[i]) + 1);
		appendStringInfoChar(&b, e->any[i] ? '*' : '=');
		for (int k = 0; !e->any[i] && k < e->nvalues[i]; k++)
			appendBinaryStringInfo(&b, e->values[i][k], strlen(e->values[i][k]) + 1);
		appendStringInfoChar(&b, '\n');
	}
	sync_sha256_hex((const uint8 *) b.data, b.len, hex);
	pfree(b.data);
	return hex;
}

/* ---------------------------------------------------------------- statements */

static SPIPlanPtr
keep_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *types)
{
	if (*slot == NULL)
		*slot = sync_storage_keep_plan(sql, nargs, types, 0);
	return *slot;
}

static void
key_args(const SyncSegKey *k, Datum *v, char *n)
{
	v[0] = CStringGetTextDatum(k->partition);
	v[1] = CStringGetTextDatum(k->log_epoch);
	v[2] = CStringGetTextDatum(k->table);
	v[3] = Int32GetDatum(k->schema_version);
	v[4] = Int16GetDatum((int16) k->media_type);
	v[5] = CStringGetTextDatum(k->scope_digest);
	v[6] = CStringGetTextDatum(k->grant_digest);
	v[7] = Int64GetDatum(k->as_of);
	v[8] = k->row_cursor ? CStringGetTextDatum(k->row_cursor) : (Datum) 0;
	v[9] = Int32GetDatum(k->page_rows);
	memset(n, ' ', 10);
	n[8] = k->row_cursor ? ' ' : 'n';
}

#define KEY_TYPES TEXTOID, TEXTOID, TEXTOID, INT4OID, INT2OID, TEXTOID, TEXTOID, INT8OID, TEXTOID, INT4OID

#define CHECKPOINT_AHEAD_SQL \
	"SELECT 1 FROM syncular.sync_backfill_checkpoints c" \
	" WHERE c.partition = $1 AND c.schema_version > $2 LIMIT 1"

bool
sync_segments_checkpoint_ahead(const char *partition, int32 schema_version)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		v[2];
	int			rc;

	v[0] = CStringGetTextDatum(partition);
	v[1] = Int32GetDatum(schema_version);
	rc = SPI_execute_plan(keep_plan(&plan, CHECKPOINT_AHEAD_SQL, 2, types), v, NULL, true, 1);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: checkpoint read failed: %s", SPI_result_code_string(rc));
	return SPI_processed > 0;
}

#define FIND_SQL \
	"SELECT p.segment_id, s.byte_length, s.row_count, p.next_row_cursor" \
	"  FROM syncular.sync_segment_publications p" \
	"  JOIN syncular.sync_segments s ON s.segment_id = p.segment_id" \
	" WHERE p.partition = $1 AND p.log_epoch = $2 AND p.tbl = $3 AND p.schema_version = $4" \
	"   AND p.media_type = $5 AND p.scope_digest = $6 AND p.grant_digest = $7" \
	"   AND p.as_of_commit_seq = $8 AND p.row_cursor IS NOT DISTINCT FROM $9 AND p.page_rows = $10" \
	"   AND p.expires_at_ms > $11" \
	"   AND NOT EXISTS (SELECT 1 FROM syncular.sync_backfill_checkpoints c" \
	"                    WHERE c.partition = p.partition AND c.schema_version > p.schema_version)"

bool
sync_segment_find(const SyncSegKey *key, int64 now_ms, SyncSegPub *out)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[11] = {KEY_TYPES, INT8OID};
	Datum		v[11];
	char		n[11];
	int			rc;
	HeapTuple	tup;
	TupleDesc	td;
	bool		isnull;
	Datum		d;

	key_args(key, v, n);
	v[10] = Int64GetDatum(now_ms);
	n[10] = ' ';
	rc = SPI_execute_plan(keep_plan(&plan, FIND_SQL, 11, types), v, n, true, 1);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: publication read failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	out->segment_id = TextDatumGetCString(SPI_getbinval(tup, td, 1, &isnull));
	out->byte_length = DatumGetInt64(SPI_getbinval(tup, td, 2, &isnull));
	out->row_count = DatumGetInt64(SPI_getbinval(tup, td, 3, &isnull));
	d = SPI_getbinval(tup, td, 4, &isnull);
	out->next_row_cursor = isnull ? NULL : TextDatumGetCString(d);
	SPI_freetuptable(SPI_tuptable);
	return true;
}

bytea *
sync_segment_bytes(const char *segment_id)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[1] = {TEXTOID};
	Datum		v[1];
	int			rc;
	bool		isnull;
	Datum		d;
	bytea	   *b;

	v[0] = CStringGetTextDatum(segment_id);
	rc = SPI_execute_plan(keep_plan(&plan,
									"SELECT s.bytes FROM syncular.sync_segments s WHERE s.segment_id = $1",
									1, types), v, NULL, true, 1);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: segment read failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return NULL;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	/* out of the tuple table (and out of line), into the caller's context */
	b = DatumGetByteaPCopy(d);
	SPI_freetuptable(SPI_tuptable);
	return b;
}

/*
 * The bytes go in once per content address; a concurrent builder of the same bytes finds the
 * row and compares (the second statement returns a row only when the stored bytes differ).
 */
#define PUT_SEGMENT_SQL \
	"INSERT INTO syncular.sync_segments (segment_id, media_type, byte_length, row_count, created_at_ms, bytes)" \
	" VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (segment_id) DO NOTHING"
#define SAME_BYTES_SQL \
	"SELECT 1 FROM syncular.sync_segments s WHERE s.segment_id = $1 AND s.bytes IS DISTINCT FROM $2"
#define PUBLISH_SQL \
	"INSERT INTO syncular.sync_segment_publications AS p (partition, log_epoch, tbl, schema_version," \
	"  media_type, scope_digest, grant_digest, as_of_commit_seq, row_cursor, page_rows, segment_id," \
	"  next_row_cursor, created_at_ms, expires_at_ms)" \
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)" \
	" ON CONFLICT (partition, log_epoch, tbl, schema_version, media_type, scope_digest, grant_digest," \
	"              as_of_commit_seq, row_cursor, page_rows)" \
	" DO UPDATE SET segment_id = excluded.segment_id, next_row_cursor = excluded.next_row_cursor," \
	"               created_at_ms = excluded.created_at_ms, expires_at_ms = excluded.expires_at_ms"

char *
sync_segment_put(const SyncSegKey *key, const uint8 *data, size_t len, int64 row_count,
				 const char *next_row_cursor, int64 now_ms)
{
	static SPIPlanPtr put_plan = NULL;
	static SPIPlanPtr same_plan = NULL;
	static SPIPlanPtr pub_plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	Oid			put_types[6] = {TEXTOID, INT2OID, INT8OID, INT8OID, INT8OID, BYTEAOID};
	Oid			same_types[2] = {TEXTOID, BYTEAOID};
	Oid			pub_types[14] = {KEY_TYPES, TEXTOID, TEXTOID, INT8OID, INT8OID};
	Datum		v[14];
	char		n[14];
	char	   *id = sync_segment_id(data, len);
	bytea	   *bytes = palloc(VARHDRSZ + len);
	int			rc;

	SET_VARSIZE(bytes, VARHDRSZ + len);
	memcpy(VARDATA(bytes), data, len);

	v[0] = CStringGetTextDatum(id);
	v[1] = Int16GetDatum((int16) key->media_type);
	v[2] = Int64GetDatum((int64) len);
	v[3] = Int64GetDatum(row_count);
	v[4] = Int64GetDatum(now_ms);
	v[5] = PointerGetDatum(bytes);
	rc = SPI_execute_plan(keep_plan(&put_plan, PUT_SEGMENT_SQL, 6, put_types), v, NULL, false, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "syncular segments: storing a segment failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
	{
		v[1] = PointerGetDatum(bytes);
		rc = SPI_execute_plan(keep_plan(&same_plan, SAME_BYTES_SQL, 2, same_types), v, NULL, false, 1);
		MemoryContextSwitchTo(caller);
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "syncular segments: segment read failed: %s", SPI_result_code_string(rc));
		if (SPI_processed > 0)
			sync_raise("sync.internal_error",
					   "different bytes are stored under the same segment id (SHA-256 collision)",
					   NULL);
	}
	pfree(bytes);

	key_args(key, v, n);
	v[10] = CStringGetTextDatum(id);
	v[11] = next_row_cursor ? CStringGetTextDatum(next_row_cursor) : (Datum) 0;
	v[12] = Int64GetDatum(now_ms);
	v[13] = Int64GetDatum(now_ms + (int64) sync_segment_ttl_s * 1000);
	n[10] = ' ';
	n[11] = next_row_cursor ? ' ' : 'n';
	n[12] = n[13] = ' ';
	rc = SPI_execute_plan(keep_plan(&pub_plan, PUBLISH_SQL, 14, pub_types), v, n, false, 0);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "syncular segments: publishing a segment failed: %s", SPI_result_code_string(rc));
	return id;
}

/* ---------------------------------------------------------------- secret and publications */

/* The signed-URL secret (SPEC §5.4), NULL when its row is missing or empty. */
bytea *
sync_segment_secret_read(void)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	int			rc;
	bool		isnull;
	bytea	   *key = NULL;

	keep_plan(&plan, "SELECT s.key FROM syncular.sync_segment_secret s WHERE s.id = 1", 0, NULL);
	rc = SPI_execute_plan(plan, NULL, NULL, true, 1);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: reading the secret failed: %s", SPI_result_code_string(rc));
	if (SPI_processed > 0)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			key = DatumGetByteaPCopy(d);
	}
	return key;
}

/*
 * Store `fresh` as the secret unless one exists; the secret in force.  The pull's reads use its
 * snapshot, which cannot see this row: RETURNING gives the key.
 */
bytea *
sync_segment_secret_create(bytea *fresh)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			type = BYTEAOID;
	Datum		arg = PointerGetDatum(fresh);
	bool		isnull;
	int			rc;

	rc = SPI_execute_with_args("INSERT INTO syncular.sync_segment_secret AS s (id, key) VALUES (1, $1)"
							   " ON CONFLICT (id) DO UPDATE SET key = s.key RETURNING s.key",
							   1, &type, &arg, NULL, false, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "syncular segments: creating the secret failed: %s", SPI_result_code_string(rc));
	return DatumGetByteaPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											&isnull));
}

/* The partitions with a publication of segment_id under scope digest sd; their count. */
int
sync_segment_publication_partitions(const char *segment_id, const char *sd, char ***out)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	int			rc;
	char	  **parts;
	MemoryContext caller = CurrentMemoryContext;

	args[0] = CStringGetTextDatum(segment_id);
	args[1] = CStringGetTextDatum(sd);
	rc = SPI_execute_with_args("SELECT DISTINCT p.partition FROM syncular.sync_segment_publications p"
							   " WHERE p.segment_id = $1 AND p.scope_digest = $2",
							   2, types, args, NULL, true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: publication read failed: %s", SPI_result_code_string(rc));
	parts = palloc(sizeof(char *) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		parts[i] = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));
	}
	*out = parts;
	return (int) SPI_processed;
}

#define PUBS_SQL \
	"SELECT p.tbl, p.schema_version, p.scope_digest, p.grant_digest, p.expires_at_ms" \
	"  FROM syncular.sync_segment_publications p" \
	" WHERE p.segment_id = $1 AND p.partition = $2 AND p.log_epoch = $3" \
	" ORDER BY p.created_at_ms, p.expires_at_ms"

/* The publications of segment_id in (partition, epoch), oldest first; their count. */
int
sync_segment_publications(const char *segment_id, const char *partition, const char *epoch,
						  SyncSegPublication **out)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		v[3];
	int			rc;
	SyncSegPublication *p;

	v[0] = CStringGetTextDatum(segment_id);
	v[1] = CStringGetTextDatum(partition);
	v[2] = CStringGetTextDatum(epoch);
	rc = SPI_execute_with_args(PUBS_SQL, 3, types, v, NULL, true, 0);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular segments: publication read failed: %s", SPI_result_code_string(rc));
	p = palloc0(sizeof(SyncSegPublication) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;

		p[i].tbl = TextDatumGetCString(SPI_getbinval(t, td, 1, &isnull));
		p[i].schema_version = DatumGetInt32(SPI_getbinval(t, td, 2, &isnull));
		p[i].scope_digest = TextDatumGetCString(SPI_getbinval(t, td, 3, &isnull));
		p[i].grant_digest = TextDatumGetCString(SPI_getbinval(t, td, 4, &isnull));
		p[i].expires_at_ms = DatumGetInt64(SPI_getbinval(t, td, 5, &isnull));
	}
	*out = p;
	return (int) SPI_processed;
}
