/*
 * image.c — SQLite image segments (SPEC §5.3), built with libsqlite3 in memory.
 *
 * The file holds exactly two tables: the data table, named as the synced table, with the IR's
 * columns in declaration order plus `_syncular_version INTEGER NOT NULL` last; and the one-row
 * metadata table `_syncular_segment`.  Affinities: string/json/blob_ref -> TEXT, integer and
 * boolean -> INTEGER, float -> REAL, bytes/crdt -> BLOB; non-nullable columns NOT NULL, the
 * primary key PRIMARY KEY.  Cells: boolean 0/1, json as its raw text, NULL for null.
 *
 * The database lives in SQLite's own (malloc) memory; a reset callback on the builder's memory
 * context closes it, so an error anywhere in the pull frees it with the round.  The finished
 * file is taken with sqlite3_serialize and copied into a palloc'd buffer.
 *
 * Rows go in IMAGE_BATCH at a time through one multi-row INSERT (the rows, their order and so
 * the file are those of one INSERT per row; the statement's per-execution work is shared), the
 * rest one by one at the end, all in one transaction without a journal.
 */
#include "postgres.h"

#include <sqlite3.h>

#include "utils/memutils.h"

#include "image.h"

#define IMAGE_BATCH 32

struct SyncImage
{
	MemoryContext cxt;
	MemoryContextCallback cb;
	sqlite3    *db;
	sqlite3_stmt *insert;		/* one row */
	sqlite3_stmt *batch;		/* IMAGE_BATCH rows */
	const SyncTable *table;
	SspArena   *arena;
	SspValue   *values;			/* IMAGE_BATCH rows of decoded values */
	int64	   *versions;
	int			pending;		/* rows decoded, not inserted yet */
	int64		rows;
};

static void
image_close(void *arg)
{
	SyncImage  *img = arg;

	if (img->insert)
		sqlite3_finalize(img->insert);
	if (img->batch)
		sqlite3_finalize(img->batch);
	if (img->db)
		sqlite3_close(img->db);
	if (img->arena)
		ssp_arena_free(img->arena);
	img->insert = NULL;
	img->batch = NULL;
	img->db = NULL;
	img->arena = NULL;
}

static void
image_fail(SyncImage *img, const char *what)
{
	char	   *msg = pstrdup(img->db ? sqlite3_errmsg(img->db) : "out of memory");

	sync_raise("sync.internal_error", "building a sqlite image failed",
			   psprintf("{\"stage\": \"%s\", \"sqlite\": \"%s\"}", what, msg));
}

static void
exec(SyncImage *img, const char *sql)
{
	if (sqlite3_exec(img->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		image_fail(img, "exec");
}

static void
append_ident(StringInfo b, const char *name)
{
	appendStringInfoChar(b, '"');
	for (const char *p = name; *p; p++)
	{
		if (*p == '"')
			appendStringInfoChar(b, '"');
		appendStringInfoChar(b, *p);
	}
	appendStringInfoChar(b, '"');
}

static const char *
affinity(uint8 type)
{
	switch (type)
	{
		case SSP_COL_INTEGER:
		case SSP_COL_BOOLEAN:
			return "INTEGER";
		case SSP_COL_FLOAT:
			return "REAL";
		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			return "BLOB";
		default:
			return "TEXT";		/* string, json, blob_ref */
	}
}

SyncImage *
sync_image_begin(const SyncTable *t)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular image",
											  ALLOCSET_DEFAULT_SIZES);
	SyncImage  *img = MemoryContextAllocZero(cxt, sizeof(SyncImage));
	StringInfoData ddl;
	StringInfoData ins;
	StringInfoData row;

	img->cxt = cxt;
	img->table = t;
	img->cb.func = image_close;
	img->cb.arg = img;
	MemoryContextRegisterResetCallback(cxt, &img->cb);
	img->values = MemoryContextAlloc(cxt, sizeof(SspValue) * Max(t->ncolumns, 1) * IMAGE_BATCH);
	img->versions = MemoryContextAlloc(cxt, sizeof(int64) * IMAGE_BATCH);
	if (sqlite3_open_v2(":memory:", &img->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		image_fail(img, "open");
	exec(img, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");

	initStringInfo(&ddl);
	initStringInfo(&ins);
	initStringInfo(&row);
	appendStringInfoString(&ddl, "CREATE TABLE ");
	append_ident(&ddl, t->name);
	appendStringInfoString(&ddl, " (");
	appendStringInfoString(&ins, "INSERT INTO ");
	append_ident(&ins, t->name);
	appendStringInfoString(&ins, " VALUES ");
	appendStringInfoChar(&row, '(');
	for (int i = 0; i < t->ncolumns; i++)
	{
		const SyncColumn *c = &t->columns[i];

		append_ident(&ddl, c->name);
		appendStringInfo(&ddl, " %s%s%s, ", affinity(c->type), c->nullable ? "" : " NOT NULL",
						 i == t->pk_index ? " PRIMARY KEY" : "");
		appendStringInfoString(&row, "?, ");
	}
	appendStringInfoString(&ddl, "\"_syncular_version\" INTEGER NOT NULL)");
	appendStringInfoString(&row, "?)");
	appendStringInfoString(&ins, row.data);
	exec(img, ddl.data);
	if (sqlite3_prepare_v2(img->db, ins.data, -1, &img->insert, NULL) != SQLITE_OK)
		image_fail(img, "prepare");
	/* the same row placeholders IMAGE_BATCH times (none past SQLite's variable limit: one by one) */
	for (int k = 1; k < IMAGE_BATCH; k++)
		appendStringInfo(&ins, ", %s", row.data);
	if (sqlite3_prepare_v2(img->db, ins.data, -1, &img->batch, NULL) != SQLITE_OK)
		img->batch = NULL;
	pfree(ddl.data);
	pfree(ins.data);
	pfree(row.data);
	return img;
}

static void
bind_value(SyncImage *img, sqlite3_stmt *st, int pos, uint8 type, const SspValue *v)
{
	int			rc;

	if (v->is_null)
		rc = sqlite3_bind_null(st, pos);
	else
		switch (type)
		{
			case SSP_COL_INTEGER:
				rc = sqlite3_bind_int64(st, pos, v->i);
				break;
			case SSP_COL_BOOLEAN:
				rc = sqlite3_bind_int(st, pos, v->b ? 1 : 0);
				break;
			case SSP_COL_FLOAT:
				rc = sqlite3_bind_double(st, pos, v->f);
				break;
			case SSP_COL_BYTES:
			case SSP_COL_CRDT:
				rc = sqlite3_bind_blob(st, pos, v->bytes.len ? (const void *) v->bytes.ptr : "",
									   (int) v->bytes.len, SQLITE_STATIC);
				break;
			default:
				rc = sqlite3_bind_text(st, pos, v->str.len ? v->str.ptr : "",
									   (int) v->str.len, SQLITE_STATIC);
				break;
		}
	if (rc != SQLITE_OK)
		image_fail(img, "bind");
}

/* Insert `n` decoded rows (from img->values) with `st` (n placeholder rows). */
static void
insert_rows(SyncImage *img, sqlite3_stmt *st, int first, int n)
{
	const SyncTable *t = img->table;
	int			per = t->ncolumns + 1;

	for (int r = 0; r < n; r++)
	{
		const SspValue *vals = &img->values[(first + r) * t->ncolumns];

		for (int i = 0; i < t->ncolumns; i++)
			bind_value(img, st, r * per + i + 1, t->columns[i].type, &vals[i]);
		if (sqlite3_bind_int64(st, r * per + per, img->versions[first + r]) != SQLITE_OK)
			image_fail(img, "bind");
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		image_fail(img, "insert");
	sqlite3_reset(st);
}

/* Insert the decoded rows still pending (one by one when fewer than a batch). */
static void
flush_rows(SyncImage *img, bool all)
{
	if (img->pending == IMAGE_BATCH && img->batch)
		insert_rows(img, img->batch, 0, IMAGE_BATCH);
	else if (all || img->batch == NULL)
		for (int r = 0; r < img->pending; r++)
			insert_rows(img, img->insert, r, 1);
	else
		return;
	img->pending = 0;
	/* the decoded strings are bound SQLITE_STATIC: the arena goes after the step */
	if (img->rows % 256 == 0 || all)
	{
		ssp_arena_free(img->arena);
		img->arena = NULL;
	}
}

void
sync_image_add_row(SyncImage *img, int64 server_version, const uint8 *payload, size_t len)
{
	const SyncTable *t = img->table;
	SspError	err;

	if (img->arena == NULL && (img->arena = ssp_arena_new()) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (!ssp_row_decode_full(img->arena, t->codec_columns, (uint32) t->ncolumns, payload, len,
							 &img->values[img->pending * t->ncolumns], &err))
		sync_raise("sync.internal_error", "a stored row does not decode", NULL);
	img->versions[img->pending++] = server_version;
	img->rows++;
	flush_rows(img, false);
}

int64
sync_image_rows(const SyncImage *img)
{
	return img->rows;
}

uint8 *
sync_image_finish(SyncImage *img, int32 schema_version, int64 as_of, const char *scope_digest,
				  size_t *len)
{
	sqlite3_stmt *meta;
	sqlite3_int64 size = 0;
	unsigned char *data;
	uint8	   *out;

	flush_rows(img, true);
	sqlite3_finalize(img->insert);
	if (img->batch)
		sqlite3_finalize(img->batch);
	img->insert = NULL;
	img->batch = NULL;
	exec(img, "CREATE TABLE \"_syncular_segment\" (format INTEGER NOT NULL, \"table\" TEXT NOT NULL, "
		 "schemaVersion INTEGER NOT NULL, asOfCommitSeq INTEGER NOT NULL, scopeDigest TEXT NOT NULL, "
		 "rowCount INTEGER NOT NULL)");
	if (sqlite3_prepare_v2(img->db, "INSERT INTO \"_syncular_segment\" VALUES (1, ?, ?, ?, ?, ?)", -1,
						   &meta, NULL) != SQLITE_OK)
		image_fail(img, "prepare");
	sqlite3_bind_text(meta, 1, img->table->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(meta, 2, schema_version);
	sqlite3_bind_int64(meta, 3, as_of);
	sqlite3_bind_text(meta, 4, scope_digest, -1, SQLITE_STATIC);
	sqlite3_bind_int64(meta, 5, img->rows);
	if (sqlite3_step(meta) != SQLITE_DONE)
	{
		sqlite3_finalize(meta);
		image_fail(img, "metadata");
	}
	sqlite3_finalize(meta);
	exec(img, "COMMIT");
	data = sqlite3_serialize(img->db, "main", &size, 0);
	if (data == NULL)
		image_fail(img, "serialize");
	out = palloc(size);
	memcpy(out, data, size);
	sqlite3_free(data);
	*len = (size_t) size;
	return out;
}

void
sync_image_discard(SyncImage *img)
{
	MemoryContextDelete(img->cxt);	/* the reset callback closes the database */
}
