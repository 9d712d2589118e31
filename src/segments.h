/*
 * segments.h — the segment store (SPEC §5.1) as the pull and the download see it (segstore.c),
 * and the direct download endpoint (segdownload.c, §5.5).
 *
 * Every function needs an SPI connection; results are allocated in CurrentMemoryContext.
 */
#ifndef SYNCULAR_SEGMENTS_H
#define SYNCULAR_SEGMENTS_H

#include "engine.h"

/* GUCs (segstore.c) */
extern int	sync_segment_ttl_s;		/* syncular.segment_ttl, seconds */
extern int	sync_inline_segment_max_bytes;	/* syncular.inline_segment_max_bytes */
extern void sync_segments_define_gucs(void);

/* The reuse key of one publication (§5.1): the descriptor context. */
typedef struct SyncSegKey
{
	const char *partition;
	const char *log_epoch;
	const char *table;
	int32		schema_version;
	uint8		media_type;		/* SSP_MEDIA_* */
	const char *scope_digest;	/* §3.5 */
	const char *grant_digest;	/* sync_grant_digest */
	int64		as_of;
	const char *row_cursor;		/* page start; NULL = table start */
	int32		page_rows;		/* limitSnapshotRows of the page (0 for an image) */
} SyncSegKey;

/* A stored, live publication. */
typedef struct SyncSegPub
{
	char	   *segment_id;
	int64		byte_length;
	int64		row_count;
	char	   *next_row_cursor;	/* NULL = last page of the table */
} SyncSegPub;

/* The store can be written (not a hot standby, not a read-only transaction). */
extern bool sync_segments_writable(void);

/* A partition checkpoint has a schema version above `schema_version` (RFC 0007 §9.1). */
extern bool sync_segments_checkpoint_ahead(const char *partition, int32 schema_version);

/* An unexpired publication for the key, whose segment is still stored. */
extern bool sync_segment_find(const SyncSegKey *key, int64 now_ms, SyncSegPub *out);

/* The stored bytes of a segment (NULL when forgotten). */
extern bytea *sync_segment_bytes(const char *segment_id);

/*
 * Store `data` under its content address and publish it for `key` (refreshing an existing
 * publication of the same context); returns the segment id.  Raises sync.internal_error when
 * different bytes are already stored under the same address (§5.1: fail loudly).
 */
extern char *sync_segment_put(const SyncSegKey *key, const uint8 *data, size_t len,
							  int64 row_count, const char *next_row_cursor, int64 now_ms);

/* "sha256:" + lowercase hex of the SHA-256 of data (§5.1). */
extern char *sync_segment_id(const uint8 *data, size_t len);

/* The signed-URL secret and the publications a download checks (segstore.c). */
typedef struct SyncSegPublication
{
	char	   *tbl;
	int32		schema_version;
	char	   *scope_digest;
	char	   *grant_digest;
	int64		expires_at_ms;
} SyncSegPublication;

extern bytea *sync_segment_secret_read(void);
extern bytea *sync_segment_secret_create(bytea *fresh);
extern int	sync_segment_publication_partitions(const char *segment_id, const char *sd,
												char ***out);
extern int	sync_segment_publications(const char *segment_id, const char *partition,
									  const char *epoch, SyncSegPublication **out);

/*
 * Lowercase hex SHA-256 over every entry of the effective scopes, the grant restriction on
 * unrequested variables included: the scope digest (§3.5) binds only the requested map, so it
 * alone would let two actors with different grants share a page.
 */
extern char *sync_grant_digest(const SyncEffective *effective);

/* Signed URLs (segurl.c, §5.4) */
extern char *sync_segment_url_base;	/* syncular.segment_url_base */
extern int	sync_segment_url_ttl_s;	/* syncular.segment_url_ttl, seconds */
extern void sync_segment_url_define_gucs(void);

/* A signed URL for the segment, or false when none is configured (no base, no secret). */
extern bool sync_segment_signed_url(const char *segment_id, const char *scope_digest,
									const char *partition, int64 now_ms, char **url,
									int64 *expires_at_ms);

/* Verify a token; returns the partition it names and its scope digest, or raises. */
extern char *sync_segment_url_check(const char *segment_id, const char *st, int64 now_ms,
									char **scope_digest);

#endif							/* SYNCULAR_SEGMENTS_H */
