/*
 * wakeup.h — commit wake-ups for realtime gateways (SPEC §8.2): NOTIFY syncular_commit, or the
 * shared-memory ring read by syncular.wait_commits (docs/realtime.md "Commit wake-ups").
 */
#ifndef SYNCULAR_WAKEUP_H
#define SYNCULAR_WAKEUP_H

#include "postgres.h"

/* syncular.c: from _PG_init (the GUC, the transaction callbacks, the shared-memory hooks) */
extern void sync_wakeup_init(void);

/*
 * push.c: an applied commit, inside the subtransaction that wrote it.  Delivered when the
 * top-level transaction commits, never when it (or that subtransaction) rolls back.
 */
extern void sync_wakeup_commit(const char *partition, int64 commit_seq);

#endif
