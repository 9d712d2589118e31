/*
 * push_conflict.c — the conflict step of a push operation: what the stored state says about an
 * upsert before any value is merged (SPEC §6.2 and §3.4 rule 5; push-and-pull.md §2.3 "Upsert
 * onto an existing row" steps 2-5 and "Upsert onto an absent row"), with the rules of each wire
 * version side by side.  The round answers in the request's wire version, and each version
 * keeps its own SPEC's rules (README "What it serves", Wire):
 *
 *   rule                     wire 2 (SPEC v2, SDKs up to 0.20)     wire 3 (SPEC §6.2)
 *   scope column in update   stripped from the update set          must equal the stored value,
 *                            (SPEC v2 §3.4 rule 5)                 else sync.invalid_request
 *   baseVersion on update    compared with the row version: any    ahead of the row ->
 *                            other value, ahead or behind, is      sync.invalid_request; 0 or a
 *                            sync.version_conflict with serverRow  present non-crdt non-PK column
 *                            (SPEC v2 §6.2), no conflictColumns    whose column version is past
 *                            on the wire                           it -> sync.version_conflict
 *                                                                  with conflictColumns
 *   unversioned upsert onto  inserts (no delete precedence,        sync.row_deleted (delete
 *   a deleted row            SPEC v2 §6.2)                         precedence, SPEC §6.2)
 *
 * Both versions authorize before disclosing (push-and-pull.md §2.3, this project's decision):
 * an absent row's payload scopes are authorized before sync.row_missing or sync.row_deleted is
 * answered.  Every refusal fills st->reject and returns false.
 */
#include "postgres.h"

#include "push_internal.h"

static bool
forbidden(PushState *st, int32 i)
{
	push_set_error(&st->reject, i, "sync.forbidden", "the actor may not write this row", false);
	return false;
}

/* ---------------------------------------------------------------- update: scope columns */

/*
 * The scope columns present in an update (push-and-pull.md §2.3 update step 2).  Wire 2 strips
 * every scope column from the update set (SPEC v2 §3.4 rule 5): `vals` loses them.  Wire 3
 * refuses a present scope column whose value differs from the stored one; equal is a no-op.
 */
bool
push_conflict_scope_columns(PushState *st, int32 i, const SyncTable *t, SspValue *vals,
							const SyncRowScopes *stored_scopes)
{
	for (int s = 0; s < t->nscopes; s++)
	{
		const SyncScope *sc = &t->scopes[s];
		const SspValue *v = &vals[sc->column_index];
		const char *old;
		char	   *now;

		if (!v->present)
			continue;
		if (st->round->wire_version < 3)
		{
			vals[sc->column_index].present = false;
			continue;
		}
		old = sync_row_scopes_lookup(stored_scopes, sc->variable);
		now = push_scope_text(&t->codec_columns[sc->column_index], v);
		if (old == NULL || now == NULL || strcmp(old, now) != 0)
		{
			push_set_error(&st->reject, i, "sync.invalid_request",
						   "scope columns cannot change on update", false);
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------- update: baseVersion */

/*
 * Wire 2 (SPEC v2 §6.2): a baseVersion other than the row version is a conflict.  The bitmap
 * of the present non-PK non-crdt columns is kept with the stored result; the wire-2 record
 * carries none.
 */
static bool
update_versions_wire2(PushState *st, int32 i, const SspPushOp *op, const SyncTable *t,
					  const SspValue *vals, const SyncStoredRow *stored)
{
	uint32		blen;
	uint8	   *bitmap;

	if (!op->has_base_version || op->base_version == stored->server_version)
		return true;
	bitmap = push_new_bitmap(t, &blen);
	for (int c = 0; c < t->ncolumns; c++)
		if (vals[c].present && c != t->pk_index && t->columns[c].type != SSP_COL_CRDT)
			bitmap[c / 8] |= (uint8) (1 << (c % 8));
	push_set_conflict(&st->reject, i, stored, bitmap, blen);
	return false;
}

/*
 * Wire 3 (SPEC §6.2, push-and-pull.md §2.3 update steps 4-5): baseVersion 0 is the lost-insert
 * race (every present non-PK non-crdt column marked); otherwise the present non-PK non-crdt
 * columns whose column version is past baseVersion are marked, and any mark is a conflict.
 * The PK never marks (this project's decision); crdt columns never conflict (SPEC §5.10.3).
 */
static bool
update_versions_wire3(PushState *st, int32 i, const SspPushOp *op, const SyncTable *t,
					  const SspValue *vals, const SyncStoredRow *stored, const int64 *cv)
{
	uint32		blen;
	uint8	   *bitmap;
	bool		marked = false;

	if (!op->has_base_version)
		return true;			/* last-write-wins per column */
	bitmap = push_new_bitmap(t, &blen);
	for (int c = 0; c < t->ncolumns; c++)
	{
		if (!vals[c].present || c == t->pk_index || t->columns[c].type == SSP_COL_CRDT)
			continue;
		if (op->base_version == 0 || cv[c] > op->base_version)
		{
			bitmap[c / 8] |= (uint8) (1 << (c % 8));
			marked = true;
		}
	}
	if (op->base_version == 0 || marked)
	{
		push_set_conflict(&st->reject, i, stored, bitmap, blen);
		return false;
	}
	return true;
}

/*
 * The baseVersion of an update against the stored row, in the request's wire version.  *cv
 * gets the stored row's column versions (data-model-and-storage.md §1.4), which the merge moves.
 */
bool
push_conflict_update(PushState *st, int32 i, const SspPushOp *op, const SyncTable *t,
					 const SspValue *vals, const SyncStoredRow *stored, int64 **cv)
{
	if (st->round->wire_version < 3)
	{
		if (!update_versions_wire2(st, i, op, t, vals, stored))
			return false;
		*cv = push_column_versions(t, stored);
		return true;
	}
	if (op->has_base_version && op->base_version > stored->server_version)
	{
		push_set_error(&st->reject, i, "sync.invalid_request",
					   "baseVersion is ahead of the server version", false);
		return false;
	}
	*cv = push_column_versions(t, stored);
	return update_versions_wire3(st, i, op, t, vals, stored, *cv);
}

/* ---------------------------------------------------------------- insert: the absent row */

/*
 * Wire 3 delete precedence (SPEC §6.2): an unversioned upsert onto a row whose tombstone is
 * within the horizon is sync.row_deleted, after authorizing (the payload scopes, or the
 * delete's scopes when the payload lacks a scope column).  *tomb_absent: looked up, none.
 */
static bool
insert_tombstone_wire3(PushState *st, int32 i, const SyncTable *t, const char *row_id,
					   const SyncTombstone *pre_tomb, bool authorized, bool scopes_complete,
					   bool *tomb_absent)
{
	int64		tomb_seq;
	Jsonb	   *tomb_scopes = NULL;
	bool		tomb_found;

	*tomb_absent = true;
	if (pre_tomb != NULL)
	{
		tomb_found = pre_tomb->found;
		tomb_seq = pre_tomb->commit_seq;
		tomb_scopes = pre_tomb->delete_scopes;
	}
	else
		tomb_found = sync_storage_tombstone_get(t->name, st->round->partition, row_id,
												&tomb_seq, &tomb_scopes);
	if (!tomb_found)
		return true;
	if (!scopes_complete && tomb_scopes != NULL)
	{
		SyncRowScopes ts;

		sync_row_scopes_from_jsonb(tomb_scopes, &ts);
		authorized = sync_scopes_authorize_write(st->round->allowed, t, &ts);
	}
	if (!authorized)
		return forbidden(st, i);
	push_set_error(&st->reject, i, "sync.row_deleted", "the row was deleted", false);
	return false;
}

/*
 * An upsert onto an absent row (push-and-pull.md §2.3, the tombstone table of §6.2):
 * baseVersion > 0 -> sync.row_missing; unversioned on wire 3 -> the tombstone rule above (wire
 * 2 has no delete precedence, SPEC v2 §6.2); then an insert needs every column present, else
 * sync.row_missing.  Authorized (`authorized`: the payload scopes are complete and allowed)
 * before any of them is disclosed.  *tomb_absent: the tombstone was looked up and is absent
 * (the insert need not clear it).
 */
bool
push_conflict_insert(PushState *st, int32 i, const SspPushOp *op, const SyncTable *t,
					 const char *row_id, const SyncTombstone *pre_tomb, bool authorized,
					 bool scopes_complete, bool all_present, bool *tomb_absent)
{
	*tomb_absent = false;
	if (op->has_base_version && op->base_version > 0)
	{
		if (!authorized)
			return forbidden(st, i);
		push_set_error(&st->reject, i, "sync.row_missing", "the row does not exist", false);
		return false;
	}
	if (!op->has_base_version && st->round->wire_version >= 3 &&
		!insert_tombstone_wire3(st, i, t, row_id, pre_tomb, authorized, scopes_complete,
								tomb_absent))
		return false;
	if (!authorized)
		return forbidden(st, i);
	if (!all_present)
	{
		push_set_error(&st->reject, i, "sync.row_missing", "the row does not exist", false);
		return false;
	}
	return true;
}
