/*
 * storage_direct_scope.c — the executor state of the direct row writes (storage_rowdirect.c):
 * one state per row write, or, inside a commit's scope (sync_storage_direct_scope_begin / _end,
 * around the writes of one pushed commit), one state shared by every row of the commit, with one
 * result relation (its open indexes, triggers and constraint expressions) per table and kind of
 * write.  A commit of one upsert writes four rows of four tables (the synced row, its row-scope
 * entry, the change and the commit row), a commit of n upserts 3n + 1: the state, its memory
 * context and each table's index opens are made once per commit instead of once per row.
 *
 * The shared state is used only by writes in the subtransaction and under the resource owner
 * that began the scope (the index relations it opens belong to that owner), so a write in a
 * nested subtransaction (a row batch's) gets a state of its own as before.  The scope holds its
 * own reference to every table it keeps a result relation of, so the relation descriptor stays
 * valid while callers close and reopen the table between rows.  _end closes it all before the
 * subtransaction ends; after an error, _abandon forgets it (the abort released the relations;
 * its memory is a child of the context current at _begin).  A transaction or subtransaction
 * abort forgets it too, so a scope never outlives its transaction.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "storage.h"
#include "storage_rowdirect.h"

#define SCOPE_TARGETS 16

typedef struct ScopeTarget
{
	Relation	heap;			/* the scope's own reference */
	bool		update;
	Bitmapset  *updated;		/* the range-table entry's updatedCols */
	ResultRelInfo *rri;
} ScopeTarget;

static struct
{
	bool		open;
	SubTransactionId subxact;
	ResourceOwner owner;
	MemoryContext parent;
	EState	   *estate;			/* made at the first write */
	List	   *rtable;
	int			ntargets;
	ScopeTarget targets[SCOPE_TARGETS];
} scope;

static bool scope_callbacks = false;

static void
scope_forget(void)
{
	scope.open = false;
	scope.estate = NULL;
	scope.rtable = NIL;
	scope.ntargets = 0;
}

static void
scope_xact_callback(XactEvent event, void *arg)
{
	scope_forget();
}

static void
scope_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && scope.open && mySubid == scope.subxact)
		scope_forget();
}

/*
 * Open the scope of one commit's direct writes in the current subtransaction; its memory will
 * be a child of the current context.  The caller ends it with _end before the subtransaction
 * ends, or, in its error handler, with _abandon.
 */
void
sync_storage_direct_scope_begin(void)
{
	if (!scope_callbacks)
	{
		RegisterXactCallback(scope_xact_callback, NULL);
		RegisterSubXactCallback(scope_subxact_callback, NULL);
		scope_callbacks = true;
	}
	scope_forget();
	scope.open = true;
	scope.subxact = GetCurrentSubTransactionId();
	scope.owner = CurrentResourceOwner;
	scope.parent = CurrentMemoryContext;
}

/* Close the scope: its indexes and tables closed, its state freed.  A no-op when not open. */
void
sync_storage_direct_scope_end(void)
{
	if (scope.open && scope.estate != NULL)
	{
		ResourceOwner saved = CurrentResourceOwner;

		/* the relations are the scope owner's, whoever is current now */
		CurrentResourceOwner = scope.owner;
		for (int i = 0; i < scope.ntargets; i++)
		{
			ExecCloseIndices(scope.targets[i].rri);
			table_close(scope.targets[i].heap, NoLock);
		}
		CurrentResourceOwner = saved;
		FreeExecutorState(scope.estate);
	}
	scope_forget();
}

/* After an error that rolled the scope's subtransaction back: forget the scope. */
void
sync_storage_direct_scope_abandon(void)
{
	scope_forget();
}

/* The range-table entry of a write of rel (updated: by attribute index, NULL for an insert). */
static RangeTblEntry *
write_rte(Relation rel, const bool *updated)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);

	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	for (int i = 0; updated != NULL && i < RelationGetDescr(rel)->natts; i++)
		if (updated[i])
			rte->updatedCols = bms_add_member(rte->updatedCols,
											  i + 1 - FirstLowInvalidHeapAttributeNumber);
	return rte;
}

/* t is the scope's result relation of rel for a write of the attributes updated (NULL: an insert) */
static bool
target_matches(const ScopeTarget *t, Relation rel, const bool *updated)
{
	if (RelationGetRelid(t->heap) != RelationGetRelid(rel) || t->update != (updated != NULL))
		return false;
	for (int i = 0; updated != NULL && i < RelationGetDescr(rel)->natts; i++)
		if (updated[i] != bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, t->updated))
			return false;
	return true;
}

/* The scope's result relation of rel for this kind of write, made when missing; NULL: none. */
static ResultRelInfo *
scope_target(Relation rel, const bool *updated)
{
	MemoryContext caller;
	RangeTblEntry *rte;
	ScopeTarget *t;

	if (!scope.open || scope.subxact != GetCurrentSubTransactionId() ||
		scope.owner != CurrentResourceOwner)
		return NULL;
	for (int i = 0; i < scope.ntargets; i++)
		if (target_matches(&scope.targets[i], rel, updated))
			return scope.targets[i].rri;
	if (scope.ntargets == SCOPE_TARGETS)
		return NULL;
	if (scope.estate == NULL)
	{
		caller = MemoryContextSwitchTo(scope.parent);
		scope.estate = CreateExecutorState();
		MemoryContextSwitchTo(caller);
	}
	caller = MemoryContextSwitchTo(scope.estate->es_query_cxt);
	rte = write_rte(rel, updated);
	t = &scope.targets[scope.ntargets++];
	t->heap = table_open(RelationGetRelid(rel), NoLock);
	t->update = updated != NULL;
	t->updated = rte->updatedCols;
	t->rri = makeNode(ResultRelInfo);
	/* the range table grows by the entry; the state is initialized again with it */
	scope.rtable = lappend(scope.rtable, rte);
	ExecInitRangeTable(scope.estate, scope.rtable);
	InitResultRelInfo(t->rri, t->heap, list_length(scope.rtable), NULL, 0);
	ExecOpenIndices(t->rri, false);
	MemoryContextSwitchTo(caller);
	return t->rri;
}

/*
 * An executor state for one row write to rel, as a statement's: the range-table entry carries
 * the updated columns (updated: by attribute index, NULL for an insert), which the executor's
 * hint to the indexes (unchanged key) reads; the result relation has rel's triggers and open
 * indexes.  The scope's shared state when one is open here, else one of the write's own, all of
 * it in the state's memory.  The caller ends the write with sync_direct_state_done.
 */
ResultRelInfo *
sync_direct_state(Relation rel, const bool *updated, EState **estate)
{
	MemoryContext caller;
	ResultRelInfo *rri = scope_target(rel, updated);

	if (rri != NULL)
	{
		*estate = scope.estate;
		return rri;
	}
	*estate = CreateExecutorState();
	caller = MemoryContextSwitchTo((*estate)->es_query_cxt);
	rri = makeNode(ResultRelInfo);
	ExecInitRangeTable(*estate, list_make1(write_rte(rel, updated)));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	MemoryContextSwitchTo(caller);
	return rri;
}

/*
 * The end of a row write's use of its state: the scope's keeps its result relations and empties
 * its per-row memory (expression and trigger evaluation); a write's own is closed and freed.
 */
void
sync_direct_state_done(EState *estate, ResultRelInfo *rri)
{
	if (scope.open && estate == scope.estate)
	{
		ResetPerTupleExprContext(estate);
		return;
	}
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}
