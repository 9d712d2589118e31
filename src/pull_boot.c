/*
 * pull_boot.c — a bootstrap section (SPEC §3.7): the rows lane's pages (pull_rows.c reads them,
 * pull_lanes.c decides where each goes) and the resume token.  See pull.c "Bootstrap".
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

static char *
resume_token_json(const char *table, int64 as_of, const char *row_cursor)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{\"asOfCommitSeq\":" INT64_FORMAT ",\"tables\":[", as_of);
	escape_json(&b, table);
	appendStringInfoString(&b, "],\"tableIndex\":0,\"rowCursor\":");
	if (row_cursor)
		escape_json(&b, row_cursor);
	else
		appendStringInfoString(&b, "null");
	appendStringInfoChar(&b, '}');
	return b.data;
}

/*
 * One inline page (SPEC §4.7): a SEGMENT_INLINE frame of at most limit rows from the row
 * cursor on, written in place into the round's output (kept when it has rows, or when it is the
 * section's first page); *more when rows are left, *full when the round's budget is spent.
 */
static void
inline_page(PullCtx *pc, RowReader *rr, int page, int64 limit, StringInfo cursor,
			bool *have_cursor, bool *more, bool *full)
{
	SyncRound  *round = pc->round;
	SyncTable  *t = pc->table;
	SspBuf	   *out = round->out;
	size_t		frame_start = out->len;
	SspSegmentWriter w;
	SspError	err;
	uint64		added = 0;

	ssp_put_u8(out, SSP_FRAME_SEGMENT_INLINE);
	ssp_put_u32(out, 0);
	if (!ssp_segment_begin(&w, out, t->name, (uint32) strlen(t->name), round->schema->version,
						   t->codec_columns, (uint16) t->ncolumns, &err))
		pull_raise_codec("starting a rows segment", &err);
	/* stored rows go in as stored: each was decoded and checked when it was written */
	w.validate = false;
	if (!*full)
	{
		uint64		scanned;

		added = pull_fill_page(pc, rr, *have_cursor ? cursor->data : NULL, limit, true, &w,
							   NULL, NULL, cursor, &scanned, more, full);
		*have_cursor = *have_cursor || scanned > 0;
	}
	if (!ssp_segment_finish(&w, &err))
		pull_raise_codec("finishing a rows segment", &err);
	if (out->oom)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));

	/* a page is sent when it has rows, and a section's first page always (§4.7) */
	if (page == 0 || added > 0)
	{
		size_t		n = out->len - frame_start - 5;

		for (int k = 0; k < 4; k++)
			out->data[frame_start + 1 + k] = (uint8) (n >> (8 * k));
		sync_stats_rows_served(t->name, added);
	}
	else
		out->len = frame_start; /* no rows: no frame */
}

void
pull_bootstrap(PullCtx *pc, const ResumeToken *resume, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	SyncTable  *t = pc->table;
	int64		pin = resume ? resume->as_of : round->max_seq;
	int64		limit = round->limit_snapshot_rows;
	bool		complete = false;
	bool		have_cursor = resume && resume->row_cursor;
	StringInfoData cursor;
	PageLane	lane;
	RowReader  *rr;

	pull_write_sub_start(pc, SSP_SUB_ACTIVE, "", true);
	rr = pull_rows_open(pc);
	if (!have_cursor && pull_image_lane(pc, pin, rr))
	{
		pull_rows_close(rr);
		result->active = true;
		result->next_cursor = pin;
		pull_write_sub_end(pc, pin, NULL);
		return;
	}
	pull_lane_init(pc, pin, &lane);

	initStringInfo(&cursor);
	if (have_cursor)
		appendStringInfoString(&cursor, resume->row_cursor);

	for (int page = 0; page < round->max_snapshot_pages; page++)
	{
		MemoryContext old = MemoryContextSwitchTo(pc->work);
		bool		more = false;
		bool		full = round->budget_spent;	/* no room: one empty page (Budget) */

		if (lane.external)
		{
			char	   *page_start = have_cursor ? pstrdup(cursor.data) : NULL;

			full = false;		/* a reference carries no row data (Budget) */
			more = pull_external_page(pc, &lane, rr, page_start, page == 0, &cursor,
									  &have_cursor);
		}
		else
			inline_page(pc, rr, page, limit, &cursor, &have_cursor, &more, &full);
		MemoryContextSwitchTo(old);
		MemoryContextReset(pc->work);

		if (!more && !full)
		{
			complete = true;
			break;
		}
		if (full)
			break;				/* the budget is spent: resume from the cursor next round */
	}

	pull_rows_close(rr);
	result->active = true;
	result->next_cursor = pin;
	pull_write_sub_end(pc, pin, complete ? NULL :
				  resume_token_json(t->name, pin, have_cursor ? cursor.data : NULL));
}
