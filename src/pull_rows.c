/*
 * pull_rows.c — one bootstrap page of rows (SPEC §3.7, §5) into a rows segment or a sqlite
 * image, within the response budget (pull.c "Budget").
 *
 * The page's ids and rows are read by the storage layer's pager (storage_pages.c: ordered index
 * scans of the row-scope index merged in byte order, each id looked up in the synced table's
 * primary key) and copied into the segment as stored (no decode, no re-encode).  Decided here:
 * every row is checked against the effective scopes (scopes.c, the read rule) before it is
 * added, so nothing outside the grant is served; the page is the first `limit` ids after the
 * cursor, one more id read ahead says whether more follow; a row that is gone (or outside the
 * scopes) advances the cursor like any other, so it cannot end the table early.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/jsonb.h"

#include "engine.h"
#include "storage_log.h"
#include "pull_internal.h"

/* A section's rows: the pager (its scans stay open from page to page) and the read rule. */
struct RowReader
{
	SyncRowPager *pager;
	const SyncEffective *effective;
};

RowReader *
pull_rows_open(PullCtx *pc)
{
	const SyncEffective *e = pc->effective;
	RowReader  *rr = MemoryContextAllocZero(pc->outer, sizeof(RowReader));

	rr->effective = e;
	rr->pager = sync_rowpage_open(pc->outer, pc->round->partition, pc->table->name,
								  pc->table->qualified, e->vars[0], e->nvalues[0], e->values[0]);
	return rr;
}

void
pull_rows_close(RowReader *rr)
{
	sync_rowpage_close(rr->pager);
	pfree(rr);
}

/* Does the row just found match the effective scopes (the read rule)? */
static bool
row_in_scope(RowReader *rr)
{
	bool		copied;
	Jsonb	   *scopes = sync_rowpage_scopes(rr->pager, &copied);
	bool		ok;

	if (scopes == NULL)
		return false;
	ok = sync_scopes_match(rr->effective, scopes);
	if (copied)
		pfree(scopes);
	return ok;
}

/*
 * Fill one page: rows after `after` (keyset; NULL: the table start), at most `limit`, while the
 * budget allows.  The page's last id read is left in *cursor (ids whose row is gone or out of
 * scope advance it too).  Returns the rows added; *scanned: the ids read; *more: an id past the
 * page exists; *full: the budget stopped it.  Rows go into the rows segment w, or into the
 * sqlite image img when it is given (then w and seg are unused and the page is never budgeted).
 * seg is the buffer w writes into when that is not the response itself (NULL: w writes into
 * round->out, whose length the budget counts already).
 */
uint64
pull_fill_page(PullCtx *pc, RowReader *rr, const char *after, int64 limit, bool budgeted,
			   SspSegmentWriter *w, SspBuf *seg, SyncImage *img, StringInfo cursor,
			   uint64 *scanned_out, bool *more, bool *full)
{
	SyncRound  *round = pc->round;
	uint64		added = 0;
	SspError	err;
	const char *id;
	int			id_len;

	*more = *full = false;
	*scanned_out = 0;
	sync_rowpage_start(rr->pager, after, limit);
	while (sync_rowpage_next(rr->pager, &id, &id_len))
	{
		if ((int64) *scanned_out == limit)
		{
			*more = true;		/* the look-ahead id: the page ends before it */
			break;
		}
		if ((*scanned_out & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (sync_rowpage_find(rr->pager) && row_in_scope(rr))
		{
			int64		sv;
			bool		copied;
			bytea	   *payload = sync_rowpage_payload(rr->pager, &sv, &copied);
			size_t		len;

			if (payload == NULL)
				sync_raise("sync.internal_error", "pull: a stored row has no payload", NULL);
			len = VARSIZE_ANY_EXHDR(payload);
			if (budgeted &&
				!pull_budget_allows(round, (seg ? seg->len : 0) + w->block.len + len + SEGMENT_SLACK))
			{
				*full = true;
				break;
			}
			if (img)
				sync_image_add_row(img, sv, (const uint8 *) VARDATA_ANY(payload), len);
			else if (!ssp_segment_add_row(w, sv, (const uint8_t *) VARDATA_ANY(payload), len, &err))
				pull_raise_codec("adding a row to a rows segment", &err);
			if (budgeted)
				round->data_delivered = true;
			added++;
			if (copied)
				pfree(payload);
		}
		/* this id is read: the next page (or the resume token) starts after it */
		resetStringInfo(cursor);
		appendBinaryStringInfo(cursor, id, id_len);
		(*scanned_out)++;
	}
	sync_rowpage_end(rr->pager);
	return added;
}
