/*
 * rules.h — internal interface of the server-side write rules (SPEC §2.3, §3.4): row and commit
 * validators and the reaction planner (hooks.c), declared references (references.c), and the
 * row writer the push passes down to reference enforcement for the commit in progress.
 *
 * The seams sync_validate_row, sync_validate_commit and sync_plan_reactions are declared in
 * engine.h (hooks.c defines them); sync_enforce_references here (references.c).  Everything
 * here runs inside sync_push_commit, connected to SPI, inside the commit's subtransaction.
 */
#ifndef SYNCULAR_RULES_H
#define SYNCULAR_RULES_H

#include "engine.h"

/* ---------------------------------------------------------------- the row writer */

/*
 * What declared-reference enforcement may do to the commit in progress, built by the push
 * (push_apply.c's push_row_writer) and passed down to sync_enforce_references, so that
 * references.c calls nothing of the push.  Both read the stored row (nothing happens when it is
 * absent), authorize the write on the row's stored scopes, run the row validator, write, record
 * an ordinary change (a delete writes its tombstone at append time) and an evidence entry
 * attributed to `origin` (the client opIndex the cascade started from).  false + *reject
 * (op_index = origin) when refused.  Each restores the caller's memory context.
 */
typedef struct SyncRowWriter
{
	/* ON DELETE CASCADE: delete the row */
	bool		(*append_delete) (SyncCommitState *cs, int table_index, const char *row_id,
								  int32 origin, SyncOpReject *reject);
	/* SET NULL: the stored row with `column` NULLed; only that column's version moves */
	bool		(*append_set_null) (SyncCommitState *cs, int table_index, const char *row_id,
									int column, int32 origin, SyncOpReject *reject);
} SyncRowWriter;

/* ---------------------------------------------------------------- references.c */

/*
 * §6.11 declared-reference enforcement over the candidate state; appends cascade and SET NULL
 * operations through `writer`.  false + *reject when the commit is refused.
 */
extern bool sync_enforce_references(SyncRound *round, SyncCommitState *state,
									const SyncRowWriter *writer, SyncOpReject *reject);
/* GUC syncular.max_cascade_operations_per_commit (default 1000). */
extern int	sync_max_cascade_operations_per_commit;
/* Defines the GUCs of references.c; called from _PG_init. */
extern void sync_references_define_gucs(void);

/* ---------------------------------------------------------------- storage.c additions */

/*
 * Row ids (sorted, "C" collation) of the rows of table `child_index` whose reference column
 * `ref_index` (an index into that table's references[]) renders equal to `parent_row_id`, at
 * most `limit`.  Materialized string / integer / boolean columns use the projection (and the
 * reference index ensure_schema builds); anything else scans the partition's payloads.
 */
extern int	sync_storage_reference_children(const SyncSchema *schema, int child_index,
											int ref_index, const char *partition,
											const char *parent_row_id, long limit,
											char ***row_ids);

#endif							/* SYNCULAR_RULES_H */
