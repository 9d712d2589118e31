/*
 * pull_lanes.c — where a bootstrap section's data goes (SPEC §5): the rows lane's pages inline
 * or stored and referenced (§5.4, §5.7), and the sqlite lane (§5.3).  pull_rows.c reads the rows
 * (pull_fill_page), pull_boot.c calls these; see pull.c "Bootstrap" and "Budget".
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "pull_internal.h"

/*
 * Where this section's pages go (§5.4, §5.7).  Inline-only (bit 0 alone, or a server that cannot
 * store segments: a hot standby, a read-only transaction, or a partition whose RFC 0007 checkpoint
 * is ahead of the running schema when inline is accepted) keeps pull.c's budgeted page fill.
 * With external rows accepted, a page is filled whole and then sent inline when the client
 * accepts inline, it is at most syncular.inline_segment_max_bytes and the response budget takes
 * it; otherwise it is stored (or an unexpired stored publication of the same page is reused) and
 * sent as a SEGMENT_REF, which puts no row data in the response.
 */

/* The publication key of this section's pages (or image: no row cursor, page size 0). */
static void
lane_key(PullCtx *pc, int64 pin, uint8 media_type, PageLane *lane)
{
	SyncRound  *round = pc->round;

	lane->now_ms = round->now_ms;
	lane->key.partition = round->partition;
	lane->key.log_epoch = round->log_epoch;
	lane->key.table = pc->table->name;
	lane->key.schema_version = round->schema->version;
	lane->key.media_type = media_type;
	lane->key.scope_digest = sync_scope_digest(pc->effective);
	lane->key.grant_digest = sync_grant_digest(pc->effective);
	lane->key.as_of = pin;
	lane->key.row_cursor = NULL;
	lane->key.page_rows = media_type == SSP_MEDIA_ROWS ? round->limit_snapshot_rows : 0;
}

void
pull_lane_init(PullCtx *pc, int64 pin, PageLane *lane)
{
	SyncRound  *round = pc->round;

	memset(lane, 0, sizeof(*lane));
	lane->inline_ok = (round->accept & SSP_ACCEPT_INLINE_ROWS) != 0;
	lane->external = (round->accept & SSP_ACCEPT_EXTERNAL_ROWS) != 0;
	if (!lane->external)
		return;
	if (!sync_segments_writable())
	{
		if (!lane->inline_ok)
			sync_raise("sync.schema_not_ready", "server schema is not ready for this request",
					   "{\"hotStandby\": true}");
		lane->external = false;
		return;
	}
	if (lane->inline_ok && sync_segments_checkpoint_ahead(round->partition, round->schema->version))
	{
		/* a stored page would download as sync.segment_expired (RFC 0007 §9.1) */
		lane->external = false;
		return;
	}
	lane_key(pc, pin, SSP_MEDIA_ROWS, lane);
}

void
pull_write_inline(PullCtx *pc, const uint8 *data, size_t len)
{
	SspFrame	f;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SEGMENT_INLINE;
	f.segment_inline.payload.ptr = data;
	f.segment_inline.payload.len = (uint32) len;
	pull_write_frame(pc, &f);
}

static void
write_ref(PullCtx *pc, const PageLane *lane, const SyncSegPub *pub, const char *row_cursor)
{
	SspFrame	f;
	SspSegmentRef *r = &f.segment_ref;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SEGMENT_REF;
	r->segment_id = pull_mkstr(pub->segment_id);
	r->media_type = lane->key.media_type;
	r->table = pull_mkstr(lane->key.table);
	r->byte_length = pub->byte_length;
	r->row_count = pub->row_count;
	r->as_of_commit_seq = lane->key.as_of;
	r->scope_digest = pull_mkstr(lane->key.scope_digest);
	r->has_row_cursor = row_cursor != NULL;
	if (row_cursor)
		r->row_cursor = pull_mkstr(row_cursor);
	r->has_next_row_cursor = pub->next_row_cursor != NULL;
	if (pub->next_row_cursor)
		r->next_row_cursor = pull_mkstr(pub->next_row_cursor);
	/* §5.4: a url only for a client that advertised bit 3, when the operator configured URLs */
	if ((pc->round->accept & SSP_ACCEPT_SIGNED_URLS) != 0)
	{
		char	   *url;

		if (sync_segment_signed_url(pub->segment_id, lane->key.scope_digest, lane->key.partition,
									lane->now_ms, &url, &r->url_expires_at_ms))
		{
			r->has_url = r->has_url_expires_at_ms = true;
			r->url = pull_mkstr(url);
		}
	}
	pull_write_frame(pc, &f);
}

/* Inline when the client takes it, it is small enough and the budget takes it (see PageLane). */
static bool
page_goes_inline(PullCtx *pc, const PageLane *lane, size_t len)
{
	if (!lane->inline_ok)
		return false;
	if (len > (size_t) sync_inline_segment_max_bytes)
		return false;
	if (!pull_budget_allows(pc->round, len + SEGMENT_SLACK))
		return false;
	pc->round->data_delivered = true;
	return true;
}

/*
 * One page on the external lane, starting after `cursor` (page_start: its text, NULL at the
 * table start).  Returns whether more rows follow; `cursor` is left at the page's last row.
 */
bool
pull_external_page(PullCtx *pc, PageLane *lane, RowReader *rr, const char *page_start,
				   bool first, StringInfo cursor, bool *have_cursor)
{
	SyncTable  *t = pc->table;
	SyncSegPub	pub;
	SspBuf		seg;
	SspSegmentWriter w;
	SspError	err;
	uint64		added;
	uint64		scanned;
	bool		more;
	bool		full;

	lane->key.row_cursor = page_start;
	if (sync_segment_find(&lane->key, lane->now_ms, &pub))
	{
		/* reuse: the same page of the same pin, scopes and grant (§5.1 build once) */
		bytea	   *bytes = NULL;

		if (lane->inline_ok && pub.byte_length <= sync_inline_segment_max_bytes)
			bytes = sync_segment_bytes(pub.segment_id);
		if (bytes && page_goes_inline(pc, lane, VARSIZE_ANY_EXHDR(bytes)))
			pull_write_inline(pc, (const uint8 *) VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes));
		else
			write_ref(pc, lane, &pub, page_start);
		if (pub.next_row_cursor)
		{
			resetStringInfo(cursor);
			appendStringInfoString(cursor, pub.next_row_cursor);
			*have_cursor = true;
		}
		return pub.next_row_cursor != NULL;
	}

	ssp_buf_init(&seg);
	if (!ssp_segment_begin(&w, &seg, t->name, (uint32) strlen(t->name), pc->round->schema->version,
						   t->codec_columns, (uint16) t->ncolumns, &err))
		pull_raise_codec("starting a rows segment", &err);
	w.validate = false;			/* stored rows go in as stored (pull_boot.c) */
	added = pull_fill_page(pc, rr, page_start, pc->round->limit_snapshot_rows, false, &w, &seg,
						   NULL, cursor, &scanned, &more, &full);
	*have_cursor = *have_cursor || scanned > 0;
	if (!ssp_segment_finish(&w, &err))
		pull_raise_codec("finishing a rows segment", &err);
	/* a page is sent when it has rows, and a section's first page always (§4.7) */
	if (first || added > 0)
	{
		if (page_goes_inline(pc, lane, seg.len))
			pull_write_inline(pc, seg.data, seg.len);
		else
		{
			pub.next_row_cursor = more ? cursor->data : NULL;
			pub.segment_id = sync_segment_put(&lane->key, seg.data, seg.len, (int64) added,
											  pub.next_row_cursor, lane->now_ms);
			pub.byte_length = (int64) seg.len;
			pub.row_count = (int64) added;
			write_ref(pc, lane, &pub, page_start);
		}
	}
	ssp_buf_free(&seg);
	return more;
}

/*
 * The sqlite lane (§5.3): only at the start of a table (a bootstrap resumed mid-table stays on
 * the rows lane), when the client accepts images (bit 2), the table has no encrypted column, the
 * store can be written and no RFC 0007 checkpoint of the partition is ahead of the running schema.
 * An unexpired stored image of the same key is reused (never rebuilt per client, §5.3); otherwise
 * the whole table is read in this pull's snapshot into a new image, which is kept only when the
 * snapshot exceeds one rows page (more than limitSnapshotRows rows) — below that the rows lane
 * serves it inline.  Returns whether the table was delivered as one SEGMENT_REF (no cursors).
 */
#define IMAGE_SCAN_ROWS 10000

bool
pull_image_lane(PullCtx *pc, int64 pin, RowReader *rr)
{
	SyncRound  *round = pc->round;
	SyncTable  *t = pc->table;
	PageLane	lane;
	SyncSegPub	pub;
	SyncImage  *img;
	StringInfoData cursor;
	bool		more = true;
	uint8	   *bytes;
	size_t		len;

	if ((round->accept & SSP_ACCEPT_SQLITE) == 0 || !sync_segments_writable())
		return false;
	for (int i = 0; i < t->ncolumns; i++)
		if (t->columns[i].encrypted)
			return false;
	if (sync_segments_checkpoint_ahead(round->partition, round->schema->version))
		return false;
	memset(&lane, 0, sizeof(lane));
	lane_key(pc, pin, SSP_MEDIA_SQLITE, &lane);
	if (sync_segment_find(&lane.key, lane.now_ms, &pub))
	{
		write_ref(pc, &lane, &pub, NULL);
		return true;
	}

	img = sync_image_begin(t);
	initStringInfo(&cursor);
	for (int64 scanned_total = 0; more; )
	{
		uint64		scanned;
		bool		full;

		pull_fill_page(pc, rr, scanned_total > 0 ? cursor.data : NULL, IMAGE_SCAN_ROWS, false,
					   NULL, NULL, img, &cursor, &scanned, &more, &full);
		scanned_total += (int64) scanned;
		CHECK_FOR_INTERRUPTS();
	}
	if (sync_image_rows(img) <= round->limit_snapshot_rows)
	{
		sync_image_discard(img);
		return false;
	}
	bytes = sync_image_finish(img, round->schema->version, pin, lane.key.scope_digest, &len);
	pub.row_count = sync_image_rows(img);
	sync_image_discard(img);
	pub.next_row_cursor = NULL;
	pub.segment_id = sync_segment_put(&lane.key, bytes, len, pub.row_count, NULL, lane.now_ms);
	pub.byte_length = (int64) len;
	pfree(bytes);
	write_ref(pc, &lane, &pub, NULL);
	return true;
}

