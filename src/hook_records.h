/*
 * hook_records.h — the two rules for what an app hook hands back to the engine (hook_records.c):
 * a validator's SY001 rejection (push-and-pull.md §2.7, SPEC §6.7–§6.8) and the reaction
 * planner's records (push-and-pull.md §2.8, SPEC §6.9).
 */
#ifndef SYNCULAR_HOOK_RECORDS_H
#define SYNCULAR_HOOK_RECORDS_H

#include "postgres.h"
#include "utils/jsonb.h"

/*
 * The rejection a validator's error carries, or NULL when it is not a well-formed one.
 *   sqlstate: the error's SQLSTATE (5 characters); detail, message: its DETAIL and MESSAGE,
 *   either may be NULL.  Returns {"code", "message", "details"?, "opIndex"?} palloc'd in the
 *   caller's context.  Never raises for any input.
 */
extern Jsonb *sync_hook_rejection(const char *sqlstate, const char *detail, const char *message);

/*
 * Validate reaction records (every record before any is written) and enqueue them as
 * sync_reactions rows of the commit (partition, client_id, client_commit_id, commit_seq), created
 * and available at now_ms.  records NULL, JSON null or [] enqueue nothing.  Needs an SPI
 * connection.  Returns the number of rows inserted (a key already enqueued is kept as it is).
 * Errors: sync.storage.invalid_reaction (SQLSTATE 22023; details {index?, field, reason, ...}).
 */
extern int64 sync_reactions_enqueue(const char *partition, const char *client_id,
									const char *client_commit_id, int64 commit_seq,
									Jsonb *records, int64 now_ms);

#endif
