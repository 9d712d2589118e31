/*
 * pull_out.c — what every part of a pull section writes with: response frames (SUB_START,
 * SUB_END, any frame) and the response budget (pull.c "Budget").  The lowest of the pull
 * files: it calls none of them.
 */
#include "postgres.h"

#include "utils/memutils.h"

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
