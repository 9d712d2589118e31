/*
 * capture.h — ordinary SQL writes to synced tables as sync commits (docs/writing-with-sql.md).
 *
 * capture_row.c: the BEFORE ROW trigger that fills the _sync_* columns of a row written by SQL
 *   (partition, row id, payload, versions, scopes) from its columns with the codec, no SPI;
 * capture_log.c: the AFTER STATEMENT triggers (transition tables) that append the statement's
 *   rows to the transaction's commit of each partition, set-based, and the transaction state;
 * capture_scan.c: what a statement wrote (partitions, row counts, shape), read in C from its
 *   transition tables.
 * Both skip the engine's own writes: storage_rows.c raises sync_capture_engine_depth around every
 * statement it runs on a synced table (push, reference actions), and the schema bump's row
 * rewrite sets the bypass through syncular._capture_bypass.  Nothing here calls up into the
 * push pipeline; capture_row.c uses push_values.c's row helpers (a lower layer).
 */
#ifndef SYNCULAR_CAPTURE_H
#define SYNCULAR_CAPTURE_H

#include "postgres.h"

#include "commands/trigger.h"

#include "storage.h"

/* > 0 while the engine writes synced rows itself (storage_rows.c); reset at transaction end */
extern int	sync_capture_engine_depth;

/* capture_log.c: the engine bypass set by SQL (syncular._capture_bypass), or the C depth */
extern bool sync_capture_bypassed(void);

/* capture_log.c: the compiled schema of the running statement (one read per statement), read
 * as role as_user (the extension owner) */
extern struct SyncSchema *sync_capture_schema(Oid as_user);

/* settings (capture_log.c): syncular.partition, syncular.actor_id, syncular.client_id */
extern char *sync_capture_partition;

/* capture_log.c: syncular.capture_validators (row validators on captured rows, off by default) */
extern bool sync_capture_validators;

/* capture_log.c: the commit's actor: syncular.actor_id, else the session's role */
extern const char *sync_capture_actor(void);

/* capture_scan.c: what one statement wrote, from its transition tables */
typedef struct SyncCaptureScan
{
	int			nparts;			/* the partitions written, byte ("C") order */
	char	  **parts;
	int64		nnew;			/* rows in the NEW / OLD transition tables */
	int64		nold;
	bool		in_place;		/* UPDATE: every row kept its partition, rowId and scopes */
	bool		one;			/* one row written: INSERT of one row, or in_place of one */
	/* the one row written (one): its stored values */
	char	   *row_id;
	int64		version;
	Datum		scopes;			/* jsonb */
	Datum		payload;		/* bytea */
} SyncCaptureScan;

extern void sync_capture_scan(TriggerData *td, SyncCaptureEvent ev, SyncCaptureScan *s);

/* from _PG_init: the settings and the transaction callbacks */
extern void sync_capture_init(void);

#endif							/* SYNCULAR_CAPTURE_H */
