/*
 * pull_rows.c — reading one bootstrap page of rows (SPEC §3.7, §5): the page's row ids in
 * row id order (COLLATE "C") after the cursor, then their rows, into a rows segment or a sqlite
 * image, within the response budget (pull.c "Budget").
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"
#include "stats.h"
#include "pull_internal.h"

/* ---------------------------------------------------------------- bootstrap */

/*
 * A bootstrap page is read in two statements.  First its row ids (ID_SQL): per scope value of
 * the first effective variable, an ordered range scan of the paging index (partition, tbl,
 * var, value, row_id COLLATE "C") from the cursor, stopped at page size + 1; then the union of
 * those few ids in order.  It reads at most values x (page + 1) index entries, never every
 * entry past the cursor.  Then the rows (scan_sql): one index scan of the synced table's
 * primary key for the page's ids (= ANY, no per-row join probe), in the same C order.  The
 * page boundary and the "more" look-ahead come from the ids, so a row that is gone cannot end
 * the table early.
 */
#define ID_SQL(after) \
	"SELECT DISTINCT v.row_id" \
	"  FROM unnest($4::text[]) AS val(value)," \
	"       LATERAL (SELECT s.row_id COLLATE \"C\" AS row_id" \
	"                  FROM syncular.sync_row_scopes s" \
	"                 WHERE s.partition = $1 AND s.tbl = $2 AND s.var = $3 AND s.value = val.value" \
	"                   AND " after \
	"                 ORDER BY s.row_id COLLATE \"C\" LIMIT $6) v" \
	" ORDER BY 1 LIMIT $6"

/* One scope value: the index range scan alone is the page (ids unique and ordered, no sort). */
#define ID1_SQL(after) \
	"SELECT s.row_id COLLATE \"C\" AS row_id" \
	"  FROM syncular.sync_row_scopes s" \
	" WHERE s.partition = $1 AND s.tbl = $2 AND s.var = $3 AND s.value = ($4::text[])[1]" \
	"   AND " after \
	" ORDER BY s.row_id COLLATE \"C\" LIMIT $6"

/*
 * The page start as its own statement text (table start: $5 unused but typed), so that the
 * cursor is always an index condition: a generic plan of "$5 IS NULL OR row_id > $5" could not
 * use it and would read the whole range before the cursor on every page.
 */
#define AFTER_START "($5::text IS NULL)"
#define AFTER_CURSOR "s.row_id COLLATE \"C\" > $5::text COLLATE \"C\""

char *
pull_scan_sql(const SyncTable *t)
{
	return psprintf(
		"SELECT r._sync_row_id, r._sync_server_version, r._sync_scopes, r._sync_payload"
		"  FROM %s r"
		" WHERE r._sync_partition = $1 AND r._sync_row_id = ANY ($2::text[])"
		" ORDER BY r._sync_row_id COLLATE \"C\"",
		t->qualified);
}

/*
 * The ids of the page after args[4] (ID1_SQL for one scope value, else ID_SQL; LIMIT args[5] =
 * limit + 1): the first `limit` as
 * a text[] in *ids, their count in *nids, the last one in last_id; *more when one more exists.
 */
static void
page_ids(Datum *args, char *nulls, int64 limit, Datum *ids, int *nids, StringInfo last_id,
		 bool *more)
{
	Oid			argtypes[6] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT8OID};
	ArrayType  *values = DatumGetArrayTypeP(args[3]);
	bool		one = ArrayGetNItems(ARR_NDIM(values), ARR_DIMS(values)) == 1;
	bool		start = nulls[4] == 'n';
	SPIPlanPtr	plan = pull_get_plan(one ? (start ? ID1_SQL(AFTER_START) : ID1_SQL(AFTER_CURSOR))
								: (start ? ID_SQL(AFTER_START) : ID_SQL(AFTER_CURSOR)),
								6, argtypes);
	MemoryContext caller = CurrentMemoryContext;
	Datum	   *elems;
	int			rc;
	int			n;

	rc = SPI_execute_plan(plan, args, nulls, true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular pull: page id read failed: %s", SPI_result_code_string(rc));
	n = (int) Min((int64) SPI_processed, limit);
	*more = (int64) SPI_processed > limit;
	elems = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		elems[i] = PointerGetDatum(DatumGetTextPCopy(SPI_getbinval(SPI_tuptable->vals[i],
																	 SPI_tuptable->tupdesc, 1, &isnull)));
	}
	if (n > 0)
	{
		text	   *lastt = DatumGetTextPP(elems[n - 1]);

		resetStringInfo(last_id);
		appendBinaryStringInfo(last_id, VARDATA_ANY(lastt), VARSIZE_ANY_EXHDR(lastt));
	}
	SPI_freetuptable(SPI_tuptable);
	*ids = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
	*nids = n;
}

/*
 * Fill one page: rows after `cursor` (keyset), at most `limit`, while the budget allows.  The
 * page's last row read is left in *cursor (rows that are gone or out of scope advance it too).
 * Returns the rows added; *scanned: the rows read; *more: a row past the page exists; *full:
 * the budget stopped it.  Rows go into the rows segment w, or into the sqlite image img when it
 * is given (then w and seg are unused and the page is never budgeted).
 */
uint64
pull_fill_page(PullCtx *pc, SPIPlanPtr plan, Datum *args, char *nulls, int64 limit, bool budgeted,
		  SspSegmentWriter *w, SspBuf *seg, SyncImage *img, StringInfo cursor,
		  uint64 *scanned_out, bool *more, bool *full)
{
	SyncRound  *round = pc->round;
	Portal		portal;
	uint64		added = 0;
	SspError	err;
	Datum		rargs[2];
	int			nids;
	StringInfoData last_id;

	*more = *full = false;
	*scanned_out = 0;
	initStringInfo(&last_id);
	page_ids(args, nulls, limit, &rargs[1], &nids, &last_id, more);
	if (nids == 0)
		return 0;
	rargs[0] = args[0];
	portal = SPI_cursor_open(NULL, plan, rargs, NULL, true);
	if (portal == NULL)
		elog(ERROR, "syncular pull: row scan failed: %s", SPI_result_code_string(SPI_result));
	while (!*full)
	{
		SPITupleTable *tt;
		uint64		n;

		SPI_cursor_fetch(portal, true, PULL_FETCH_ROWS);
		tt = SPI_tuptable;
		n = SPI_processed;
		for (uint64 r = 0; r < n; r++)
		{
			HeapTuple	tup = tt->vals[r];
			TupleDesc	td = tt->tupdesc;
			bool		isnull;
			Datum		d;
			text	   *id;

			d = SPI_getbinval(tup, td, 3, &isnull);
			if (!isnull && sync_scopes_match(pc->effective, DatumGetJsonbP(d)))
			{
				int64		sv = DatumGetInt64(SPI_getbinval(tup, td, 2, &isnull));
				Datum		raw = SPI_getbinval(tup, td, 4, &isnull);
				bytea	   *payload;
				size_t		len;

				if (isnull)
					sync_raise("sync.internal_error", "pull: a stored row has no payload", NULL);
				payload = DatumGetByteaPP(raw);
				len = VARSIZE_ANY_EXHDR(payload);
				if (budgeted &&
					!pull_budget_allows(round, seg->len + w->block.len + len + SEGMENT_SLACK))
				{
					*full = true;
					*more = false;
					break;
				}
				if (img)
					sync_image_add_row(img, sv, (const uint8 *) VARDATA_ANY(payload), len);
				else if (!ssp_segment_add_row(w, sv, (const uint8_t *) VARDATA_ANY(payload), len, &err))
					pull_raise_codec("adding a row to a rows segment", &err);
				if (budgeted)
					round->data_delivered = true;
				added++;
				if ((Pointer) payload != DatumGetPointer(raw))
					pfree(payload);
			}
			/* this row is read: the next page (or the resume token) starts after it */
			id = DatumGetTextPP(SPI_getbinval(tup, td, 1, &isnull));
			resetStringInfo(cursor);
			appendBinaryStringInfo(cursor, VARDATA_ANY(id), VARSIZE_ANY_EXHDR(id));
			(*scanned_out)++;
		}
		SPI_freetuptable(tt);
		if (n == 0)
			break;
	}
	SPI_cursor_close(portal);
	if (!*full)
	{
		/* every id of the page is read, including ids whose row is gone */
		resetStringInfo(cursor);
		appendBinaryStringInfo(cursor, last_id.data, last_id.len);
		*scanned_out = (uint64) nids;
	}
	return added;
}
