/*
 * pull_out.c — what every part of a pull section writes with: response frames (SUB_START,
 * SUB_END, any frame), the response budget (pull.c "Budget"), and the pull's kept plans.
 * The lowest of the pull files: it calls none of them.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/visibilitymap.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "executor/tuptable.h"
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "engine.h"
#include "stats.h"
#include "pull_internal.h"

/* ---------------------------------------------------------------- output helpers */


void
pull_raise_codec(const char *what, const SspError *err)
{
	char	   *msg = psprintf("pull: %s: %s", what, err->message);

	sync_raise(err->code && strcmp(err->code, SSP_ERR_INVALID_REQUEST) != 0 ? err->code : "sync.internal_error",
			   msg, NULL);
}

void
pull_write_frame(PullCtx *pc, const SspFrame *f)
{
	MemoryContext old = MemoryContextSwitchTo(pc->outer);
	SspError	err;

	if (!ssp_write_frame(pc->round->out, pc->round->wire_version, f, &err))
		pull_raise_codec("writing a response frame", &err);
	MemoryContextSwitchTo(old);
}

/*
 * May `pending` more bytes of row data enter the response (see "Budget" above)?  Spends the
 * budget (round->budget_spent) when they may not.
 */
bool
pull_budget_allows(SyncRound *round, size_t pending)
{
	if (round->budget_spent)
		return false;
	if (!round->data_delivered)
		return true;			/* the round's first item always goes */
	if (round->out->len + pending <= (size_t) sync_max_response_bytes)
		return true;
	round->budget_spent = true;
	return false;
}

SspStr
pull_mkstr(const char *s)
{
	SspStr		r;

	r.ptr = s;
	r.len = (uint32) strlen(s);
	return r;
}

void
pull_write_sub_start(PullCtx *pc, uint8 status, const char *reason, bool bootstrap)
{
	SspFrame	f;
	SspSubStart *s = &f.sub_start;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SUB_START;
	s->id = pc->sub->id;
	s->status = status;
	s->reason_code = pull_mkstr(reason);
	s->bootstrap = bootstrap;
	if (status == SSP_SUB_ACTIVE)
		s->effective_scopes = sync_pull_effective_map(pc->effective);
	pull_write_frame(pc, &f);
	sync_stats_section(pc->table->name, status, bootstrap);
}

/* SUB_START.effectiveScopes of an effective map (also used by realtime deltas, §8.2). */
SspScopeMap
sync_pull_effective_map(const SyncEffective *e)
{
	SspScopeMap m;

	m.n = (uint32) e->nvars;
	m.entries = palloc0(sizeof(SspScopeEntry) * Max(e->nvars, 1));
	for (int i = 0; i < e->nvars; i++)
	{
		SspScopeEntry *ent = &m.entries[i];

		ent->key = pull_mkstr(e->vars[i]);
		ent->nvalues = (uint32) e->nvalues[i];
		ent->values = palloc0(sizeof(SspStr) * Max(e->nvalues[i], 1));
		for (int k = 0; k < e->nvalues[i]; k++)
			ent->values[k] = pull_mkstr(e->values[i][k]);
	}
	return m;
}

void
pull_write_sub_end(PullCtx *pc, int64 next_cursor, const char *bootstrap_state)
{
	SspFrame	f;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SUB_END;
	f.sub_end.next_cursor = next_cursor;
	if (bootstrap_state)
	{
		f.sub_end.has_bootstrap_state = true;
		f.sub_end.bootstrap_state = pull_mkstr(bootstrap_state);
	}
	pull_write_frame(pc, &f);
}

/* text[] of the first effective variable's values */
Datum
pull_first_var_values(const SyncEffective *e)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(e->nvalues[0], 1));

	for (int k = 0; k < e->nvalues[0]; k++)
		elems[k] = CStringGetTextDatum(e->values[0][k]);
	return PointerGetDatum(construct_array(elems, e->nvalues[0], TEXTOID, -1, false, TYPALIGN_INT));
}

/* ---------------------------------------------------------------- prepared plans */

/*
 * Plans are prepared once per backend per query text (SPI_keepplan) and kept in
 * TopMemoryContext; the plan cache re-plans them after DDL on the tables they read.  The row
 * scan's text embeds the table's qualified name, so there is one entry per synced table.
 */
typedef struct KeptPlan
{
	char	   *sql;
	SPIPlanPtr	plan;
	struct KeptPlan *next;
} KeptPlan;

static KeptPlan *kept_plans = NULL;

SPIPlanPtr
pull_get_plan(const char *sql, int nargs, Oid *argtypes)
{
	KeptPlan   *k;
	SPIPlanPtr	plan;

	for (k = kept_plans; k; k = k->next)
		if (strcmp(k->sql, sql) == 0)
			return k->plan;
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "syncular pull: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "syncular pull: SPI_keepplan failed");
	k = MemoryContextAlloc(TopMemoryContext, sizeof(KeptPlan));
	k->sql = MemoryContextStrdup(TopMemoryContext, sql);
	k->plan = plan;
	k->next = kept_plans;
	kept_plans = k;
	return plan;
}

/* ---------------------------------------------------------------- direct scans */

/* A relation of the syncular schema by name (the pull's direct index scans). */
Oid
pull_catalog_relid(const char *name)
{
	Oid			relid = get_relname_relid(name, get_namespace_oid("syncular", false));

	if (!OidIsValid(relid))
		elog(ERROR, "syncular pull: relation syncular.%s is missing", name);
	return relid;
}

AttrNumber
pull_attnum(Relation rel, const char *name)
{
	TupleDesc	td = RelationGetDescr(rel);

	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return a->attnum;
	}
	elog(ERROR, "syncular pull: column %s of %s is missing", name, RelationGetRelationName(rel));
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/* An equality key on an index column, in that column's collation. */
void
pull_eq_key(ScanKey k, Relation index, AttrNumber attno, Datum value)
{
	ScanKeyEntryInitialize(k, 0, attno, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[attno - 1], F_TEXTEQ, value);
}

/*
 * The next index entry of an index-only scan that is visible in the scan's snapshot, by
 * IndexOnlyNext's rule: a heap page the visibility map marks all-visible is trusted (and
 * predicate-locked for SERIALIZABLE), any other entry is checked against its heap tuple.
 * true: scan->xs_itup holds the entry; false: the scan is done.  slot: a scratch slot of heap.
 */
bool
pull_index_next_visible(IndexScanDesc scan, Relation heap, TupleTableSlot *slot, Buffer *vmbuf)
{
	ItemPointer tid;

	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		if (!VM_ALL_VISIBLE(heap, ItemPointerGetBlockNumber(tid), vmbuf))
		{
			if (!index_fetch_heap(scan, slot))
				continue;		/* not visible in the snapshot */
			ExecClearTuple(slot);
		}
		else
			PredicateLockPage(heap, ItemPointerGetBlockNumber(tid), scan->xs_snapshot);
		return true;
	}
	return false;
}

/* ---------------------------------------------------------------- direct encoding */

/*
 * Room for n more bytes at the end of the response (the codec's buffer, grown the way its own
 * writers grow it: doubling, through ssp_realloc).  The bytes are written by the caller, which
 * then advances out->len.
 */
uint8 *
pull_out_reserve(SspBuf *out, size_t n)
{
	if (out->cap - out->len < n)
	{
		size_t		ncap = out->cap ? out->cap : 64;

		if (n > MaxAllocHugeSize - out->len)
			sync_raise("sync.internal_error", "pull: the response is too large", NULL);
		while (ncap - out->len < n)
			ncap *= 2;
		out->data = ssp_realloc(out->data, ncap);
		out->cap = ncap;
	}
	return out->data + out->len;
}

/* A string field: u32 length + bytes, refused (as the codec refuses it) unless valid UTF-8. */
static inline bool
all_ascii(const char *s, uint32 len)
{
	uint32		i = 0;
	uint64		bits = 0;

	for (; i + 8 <= len; i += 8)
	{
		uint64		w;

		memcpy(&w, s + i, 8);
		bits |= w;
	}
	for (; i < len; i++)
		bits |= (uint8) s[i];
	return (bits & UINT64CONST(0x8080808080808080)) == 0;
}

uint8 *
pull_put_str(uint8 *p, const char *s, uint32 len, const char *field)
{
	/* ASCII is valid UTF-8: the full check only for strings with other bytes */
	if (!all_ascii(s, len) && !ssp_utf8_valid(s, len))
		sync_raise("sync.internal_error",
				   psprintf("pull: writing a commit frame: %s is not valid UTF-8", field), NULL);
	p = pull_put_u32(p, len);
	memcpy(p, s, len);
	return p + len;
}

/* An i64 field, refused (as the codec refuses it) outside the safe integer range. */
uint8 *
pull_put_i64(uint8 *p, int64 v, const char *field)
{
	if (v < -SSP_I64_SAFE_MAX || v > SSP_I64_SAFE_MAX)
		sync_raise("sync.internal_error",
				   psprintf("pull: writing a commit frame: %s outside the safe integer range",
							field), NULL);
	return pull_put_u64(p, (uint64) v);
}
