/*
 * pull_internal.h — what the pull files share (one subscription section of a pull).  Layers,
 * each file calling only files below it: pull.c; pull_window.c, pull_boot.c; pull_lanes.c;
 * pull_rows.c; pull_out.c; below them the storage layer (storage_log.h: the commit-log window,
 * bootstrap pages) and the codec.  Not used by any other file.
 */
#ifndef SYNCULAR_PULL_INTERNAL_H
#define SYNCULAR_PULL_INTERNAL_H

#include "engine.h"
#include "image.h"
#include "segments.h"

/* A segment's framing beyond its row records: frame header, block headers, terminator. */
#define SEGMENT_SLACK 64

typedef struct PullCtx
{
	SyncRound  *round;
	const SspSubscription *sub;
	const SyncEffective *effective;
	SyncTable  *table;
	MemoryContext outer;		/* the caller's context: round->out grows there */
	MemoryContext work;			/* reset per batch / page */
} PullCtx;

/* Where a section's rows-lane pages go (pull_lanes.c, "Where this section's pages go"). */
typedef struct PageLane
{
	bool		inline_ok;		/* accept bit 0 */
	bool		external;		/* pages may be stored and referenced */
	SyncSegKey	key;
	int64		now_ms;
} PageLane;

/* A usable resume token (pull.c parse_token). */
typedef struct ResumeToken
{
	int64		as_of;
	char	   *row_cursor;		/* NULL = table start */
} ResumeToken;

/* pull_out.c */
extern void pull_raise_codec(const char *what, const SspError *err) pg_attribute_noreturn();
extern void pull_write_frame(PullCtx *pc, const SspFrame *f);
extern bool pull_budget_allows(SyncRound *round, size_t pending);
extern SspStr pull_mkstr(const char *s);
extern void pull_write_sub_start(PullCtx *pc, uint8 status, const char *reason, bool bootstrap);
extern void pull_write_sub_end(PullCtx *pc, int64 next_cursor, const char *bootstrap_state);

/* pull_rows.c: one section's row reader (its scans stay open from page to page) */
typedef struct RowReader RowReader;
extern RowReader *pull_rows_open(PullCtx *pc);
extern void pull_rows_close(RowReader *rr);
extern uint64 pull_fill_page(PullCtx *pc, RowReader *rr, const char *after, int64 limit,
							 bool budgeted, SspSegmentWriter *w, SspBuf *seg, SyncImage *img,
							 StringInfo cursor, uint64 *scanned_out, bool *more, bool *full);

/* pull_lanes.c */
extern void pull_lane_init(PullCtx *pc, int64 pin, PageLane *lane);
extern void pull_write_inline(PullCtx *pc, const uint8 *data, size_t len);
extern bool pull_external_page(PullCtx *pc, PageLane *lane, RowReader *rr, const char *page_start,
							   bool first, StringInfo cursor, bool *have_cursor);
extern bool pull_image_lane(PullCtx *pc, int64 pin, RowReader *rr);

/* pull_window.c, pull_boot.c */
extern void pull_incremental(PullCtx *pc, SyncPullResult *result);
extern void pull_bootstrap(PullCtx *pc, const ResumeToken *resume, SyncPullResult *result);

#endif							/* SYNCULAR_PULL_INTERNAL_H */
