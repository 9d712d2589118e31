/*
 * pull_internal.h — what pull.c and pull_lanes.c share (one subscription section of a pull).
 * Not used by any other file.
 */
#ifndef SYNCULAR_PULL_INTERNAL_H
#define SYNCULAR_PULL_INTERNAL_H

#include "executor/spi.h"

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

/* pull.c */
extern void pull_raise_codec(const char *what, const SspError *err) pg_attribute_noreturn();
extern void pull_write_frame(PullCtx *pc, const SspFrame *f);
extern bool pull_budget_allows(SyncRound *round, size_t pending);
extern SspStr pull_mkstr(const char *s);
extern uint64 pull_fill_page(PullCtx *pc, SPIPlanPtr plan, Datum *args, char *nulls, int64 limit,
							 bool budgeted, SspSegmentWriter *w, SspBuf *seg, SyncImage *img,
							 StringInfo cursor, uint64 *scanned_out, bool *more, bool *full);

/* pull_lanes.c */
extern void pull_lane_init(PullCtx *pc, int64 pin, PageLane *lane);
extern void pull_write_inline(PullCtx *pc, const uint8 *data, size_t len);
extern bool pull_external_page(PullCtx *pc, PageLane *lane, SPIPlanPtr plan, Datum *args,
							   char *nulls, const char *page_start, bool first, StringInfo cursor,
							   bool *have_cursor);
extern bool pull_image_lane(PullCtx *pc, int64 pin, SPIPlanPtr plan, Datum *args, char *nulls);

#endif							/* SYNCULAR_PULL_INTERNAL_H */
