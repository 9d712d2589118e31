/*
 * ops_watch.c — the database half of live query watches (REMOTE.md revision 1 §6):
 *
 *   syncular.operations_watch_rerun(partition text, watches jsonb)
 *       RETURNS TABLE(w bigint, max_commit_seq bigint, outcome text, message bytea)
 *
 * One call serves a batch of watches of one partition (a gateway makes one call per partition
 * per wake-up, never one per watch): each element {w, seq, actorId, message} names a watch by
 * the caller's handle w, the maxCommitSeq of its last snapshot (seq; -1 = none yet, the
 * registration snapshot), the authenticated actor and the client's encoded watch message
 * {revision: 1, kind: "watch", watchId, clientId, operationId, params}.  In ONE snapshot the
 * call reads the partition's head and the changes committed after the oldest seq of the batch,
 * and reruns exactly the watches whose answer may have changed:
 *
 *   - a watch with no snapshot yet (seq < 0), after the clientId check of §1;
 *   - a privileged watch when a change of the window (after its seq) is on one of its tables;
 *   - a scoped watch when such a change's row carries, for every scope variable the query
 *     covers on that table, the covered value (the change's scope values are what the commit
 *     log's scope index sync_change_scopes is built from): a commit on another list does not
 *     rerun a watch of one list.  Over WATCH_WINDOW_CHANGES changes, every watch of the window
 *     reruns (correct, only less selective).
 *
 * A rerun goes through the same path as POST /operations (ops_query_run: registration,
 * params, authorization, partition-bound SQL, maxRows) and answers the encoded §6 server
 * message {revision: 1, kind: "snapshot", watchId, operationId, rows, maxCommitSeq}, or
 * {revision: 1, kind: "watch_error", watchId, code, message, retryable}; each rerun runs in its
 * own subtransaction, so one failing watch does not fail the batch.  A watch that need not
 * rerun answers a NULL message and the head, so its next window starts there.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "operations.h"
#include "storage.h"
#include "storage_log.h"

/* changes of one window examined one by one; past this every watch of the window reruns */
#define WATCH_WINDOW_CHANGES 10000

typedef struct WatchReg
{
	char	   *operation_id;
	bool		found;
	bool		privileged;
	int			ntables;
	char	  **tables;
	int			ncov;
	char	  **cov_table;
	char	  **cov_var;
	char	  **cov_param;
	struct WatchReg *next;
} WatchReg;

typedef struct Change
{
	int64		seq;
	char	   *tbl;
	Jsonb	   *scopes;
} Change;

typedef struct Window
{
	int64		lo;				/* exclusive */
	int64		hi;				/* inclusive: the head */
	int			n;
	bool		overflow;
	Change	   *changes;
} Window;

/* The registration facts the filter needs, read once per operation id and call. */
static WatchReg *
watch_reg(WatchReg **cache, const char *operation_id)
{
	WatchReg   *r;
	Jsonb	   *tables;
	Jsonb	   *cov;

	for (r = *cache; r; r = r->next)
		if (strcmp(r->operation_id, operation_id) == 0)
			return r;
	r = palloc0(sizeof(WatchReg));
	r->operation_id = pstrdup(operation_id);
	if (sync_storage_ops_watch(operation_id, &r->privileged, &tables, &cov))
	{
		r->found = true;
		r->ntables = JsonContainerSize(&tables->root);
		r->tables = palloc0(sizeof(char *) * Max(r->ntables, 1));
		for (int i = 0; i < r->ntables; i++)
		{
			JsonbValue *e = getIthJsonbValueFromContainer(&tables->root, i);

			r->tables[i] = pnstrdup(e->val.string.val, e->val.string.len);
		}
		r->ncov = JsonContainerSize(&cov->root);
		r->cov_table = palloc0(sizeof(char *) * Max(r->ncov, 1));
		r->cov_var = palloc0(sizeof(char *) * Max(r->ncov, 1));
		r->cov_param = palloc0(sizeof(char *) * Max(r->ncov, 1));
		for (int i = 0; i < r->ncov; i++)
		{
			JsonbValue *e = getIthJsonbValueFromContainer(&cov->root, i);

			r->cov_table[i] = ops_jstr(e->val.binary.data, "table");
			r->cov_var[i] = ops_jstr(e->val.binary.data, "variable");
			r->cov_param[i] = ops_jstr(e->val.binary.data, "param");
		}
	}
	r->next = *cache;
	*cache = r;
	return r;
}

/* The changes of (lo, hi] of the partition, in the active snapshot. */
static void
read_window(const char *partition, Window *win)
{
	SyncStoredChange *ch;
	uint64		n = sync_log_read_change_scopes(partition, win->lo, win->hi,
												WATCH_WINDOW_CHANGES, &ch);

	if (n > WATCH_WINDOW_CHANGES)
	{
		win->overflow = true;
		return;
	}
	win->n = (int) n;
	win->changes = palloc0(sizeof(Change) * Max(win->n, 1));
	for (int i = 0; i < win->n; i++)
	{
		win->changes[i].seq = ch[i].seq;
		win->changes[i].tbl = ch[i].table;
		win->changes[i].scopes = ch[i].scopes;
	}
}

/* The change row's scope value of `var` is `value` (a string, or an array holding it). */
static bool
scope_has(Jsonb *scopes, const char *var, const char *value)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&scopes->root, var, strlen(var), NULL);

	if (v == NULL)
		return true;			/* not described: assume it may match */
	if (v->type == jbvString)
		return (size_t) v->val.string.len == strlen(value) && memcmp(v->val.string.val, value, v->val.string.len) == 0;
	if (v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data))
	{
		for (uint32 i = 0; i < JsonContainerSize(v->val.binary.data); i++)
		{
			JsonbValue *e = getIthJsonbValueFromContainer(v->val.binary.data, i);

			if (e->type == jbvString && (size_t) e->val.string.len == strlen(value) &&
				memcmp(e->val.string.val, value, e->val.string.len) == 0)
				return true;
		}
		return false;
	}
	return true;
}

/*
 * May a change after `seq` alter the watch's answer?  covered[i] is the scope text of
 * coverage entry i (NULL when the request does not give one: then any change of the table
 * counts, and the rerun reports the request's fault).
 */
static bool
window_touches(const Window *win, const WatchReg *r, char **covered, int64 seq)
{
	if (win->overflow)
		return true;
	for (int c = 0; c < win->n; c++)
	{
		const Change *ch = &win->changes[c];
		bool		on_table = false;
		bool		match = true;

		if (ch->seq <= seq)
			continue;
		for (int t = 0; t < r->ntables && !on_table; t++)
			on_table = strcmp(r->tables[t], ch->tbl) == 0;
		if (!on_table)
			continue;
		if (!r->privileged)
			for (int k = 0; k < r->ncov && match; k++)
				if (r->cov_table[k] && strcmp(r->cov_table[k], ch->tbl) == 0 && r->cov_var[k] &&
					covered[k] != NULL)
					match = scope_has(ch->scopes, r->cov_var[k], covered[k]);
		if (match)
			return true;
	}
	return false;
}

/* One element of the batch, decoded; false when the message is not a valid watch message. */
typedef struct WatchIn
{
	int64		w;
	int64		seq;
	char	   *actor_id;
	const char *watch_id;		/* NULL when not readable */
	OpsRequest	req;
	bool		valid;
	char	   *error;			/* why it is not valid */
} WatchIn;

static void
decode_watch(SspArena *a, JsonbContainer *e, WatchIn *in)
{
	JsonbValue *m = getKeyJsonValueFromContainer(e, "message", 7, NULL);
	char	   *text;
	SspOpValue *root;
	SspError	err;
	const SspOpValue *v;

	in->valid = false;
	in->error = "the watch message is not an encoded object";
	if (m == NULL || m->type != jbvBinary)
		return;
	text = JsonbToCString(NULL, m->val.binary.data, m->val.binary.len);
	if (!ssp_op_decode(a, text, strlen(text), &root, &err) || root->kind != SSP_OP_OBJECT)
		return;
	v = ssp_op_member(root, "watchId");
	if (v && v->kind == SSP_OP_STRING && v->str.len > 0)
		in->watch_id = pnstrdup(v->str.ptr, v->str.len);
	v = ssp_op_member(root, "kind");
	if (v == NULL || v->kind != SSP_OP_STRING || strcmp(v->str.ptr, "watch") != 0 || in->watch_id == NULL)
	{
		in->error = "the message is not a watch message with a watchId";
		return;
	}
	v = ssp_op_member(root, "clientId");
	if (v == NULL || v->kind != SSP_OP_STRING || v->str.len == 0)
	{
		in->error = "clientId must be a non-empty string";
		return;
	}
	in->req.client_id = pnstrdup(v->str.ptr, v->str.len);
	v = ssp_op_member(root, "operationId");
	if (v == NULL || v->kind != SSP_OP_STRING || v->str.len == 0)
	{
		in->error = "operationId must be a non-empty string";
		return;
	}
	in->req.operation_id = pnstrdup(v->str.ptr, v->str.len);
	in->req.params = ssp_op_member(root, "params");
	in->valid = true;			/* the arena lives as long as the call's memory */
}

/* The covered scope values of the watch's params, by coverage entry. */
static char **
covered_values(const WatchReg *r, const SspOpValue *params)
{
	char	  **covered = palloc0(sizeof(char *) * Max(r->ncov, 1));

	for (int k = 0; k < r->ncov; k++)
	{
		const SspOpValue *v = (params && r->cov_param[k]) ? ssp_op_member(params, r->cov_param[k]) : NULL;

		covered[k] = v ? ops_scope_text(v) : NULL;
	}
	return covered;
}

/* The §6 snapshot message from the query success object. */
static bytea *
snapshot_message(const char *watch_id, const char *operation_id, const SspOpValue *result)
{
	OpsObject	o;
	SspOpValue	v;

	ops_obj_init_message(&o, "snapshot");
	ops_set_string(ops_obj_add(&o, "watchId"), watch_id);
	ops_set_string(ops_obj_add(&o, "operationId"), operation_id);
	*ops_obj_add(&o, "rows") = *ssp_op_member(result, "rows");
	*ops_obj_add(&o, "maxCommitSeq") = *ssp_op_member(result, "maxCommitSeq");
	ops_obj_done(&o, &v);
	return ops_encode_response(&v);
}

/* One rerun's work (sync_entry_run) and what it hands back. */
typedef struct Rerun
{
	const WatchIn *in;
	const char *partition;
	Snapshot	snap;
	int64	   *max_seq;
	bytea	   *body;
} Rerun;

static void
rerun_work(void *arg)
{
	Rerun	   *r = (Rerun *) arg;
	const WatchIn *in = r->in;
	SspOpValue	out;
	const SspOpValue *seq;

	if (!in->valid)
		sync_raise("operation.invalid_request", in->error, NULL);
	if (in->seq < 0)
		ops_check_client(r->partition, in->actor_id, in->req.client_id);
	ops_query_run(&in->req, r->partition, in->actor_id, r->snap, &out);
	seq = ssp_op_member(&out, "maxCommitSeq");
	if (seq && seq->kind == SSP_OP_NUMBER)
		*r->max_seq = (int64) seq->num;
	r->body = snapshot_message(in->watch_id, in->req.operation_id, &out);
}

/* One rerun in its own subtransaction: the snapshot message, or its watch_error. */
static bytea *
rerun(const WatchIn *in, const char *partition, Snapshot snap, int64 *max_seq, bool *failed)
{
	Rerun		r = {in, partition, snap, max_seq, NULL};
	ErrorData  *edata = sync_entry_run(rerun_work, &r);

	if (edata == NULL)
		return r.body;
	*failed = true;
	return ops_failure_response(edata, in->watch_id ? in->watch_id : "");
}

static void
decode_batch(Jsonb *watches, int n, WatchIn *ins, int64 *lo)
{
	/* one arena for the batch (it lives as long as the call's memory) */
	SspArena   *a = ssp_arena_new();

	if (a == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	for (int i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&watches->root, i);
		WatchIn    *in = &ins[i];

		if (e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data) ||
			!ops_jint(e->val.binary.data, "w", &in->w) || !ops_jint(e->val.binary.data, "seq", &in->seq) ||
			(in->actor_id = ops_jstr(e->val.binary.data, "actorId")) == NULL || in->actor_id[0] == '\0')
			sync_raise("operation.invalid_request",
					   "each watch is {w, seq, actorId, message} with integers w and seq", NULL);
		in->req.command = false;
		decode_watch(a, e->val.binary.data, in);
		if (in->seq >= 0 && in->seq < *lo)
			*lo = in->seq;
	}
}

PG_FUNCTION_INFO_V1(syncular_operations_watch_rerun);

Datum
syncular_operations_watch_rerun(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext caller = CurrentMemoryContext;
	char	   *partition;
	Jsonb	   *watches;
	int			n;
	WatchIn    *ins;
	WatchReg   *cache = NULL;
	Window		win;
	int64		horizon;
	Snapshot	snap;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		sync_raise("operation.invalid_request", "partition and watches must not be NULL", NULL);
	partition = text_to_cstring(PG_GETARG_TEXT_PP(0));
	watches = PG_GETARG_JSONB_P(1);
	if (partition[0] == '\0' || strlen(partition) > SYNC_MAX_ID_BYTES)
		sync_raise("operation.invalid_request", "partition must be a non-empty text", NULL);
	if (!JsonContainerIsArray(&watches->root) || JsonContainerIsScalar(&watches->root))
		sync_raise("operation.invalid_request", "watches must be a JSON array", NULL);
	n = JsonContainerSize(&watches->root);
	ins = palloc0(sizeof(WatchIn) * Max(n, 1));
	memset(&win, 0, sizeof(win));
	win.lo = PG_INT64_MAX;
	decode_batch(watches, n, ins, &win.lo);

	/* one snapshot for the head, the window and every rerun of the batch (§2, §6) */
	snap = RegisterSnapshot(GetTransactionSnapshot());
	PushActiveSnapshot(snap);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(caller);	/* SPI_connect leaves its procedure context current */
	sync_storage_read_seqs(partition, &win.hi, &horizon);
	if (win.lo < win.hi)
		read_window(partition, &win);

	for (int i = 0; i < n; i++)
	{
		WatchIn    *in = &ins[i];
		bool		run = in->seq < 0 || !in->valid;
		int64		max_seq = win.hi;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		bool		failed = false;

		if (!run && in->seq < win.hi)
		{
			WatchReg   *r = watch_reg(&cache, in->req.operation_id);

			run = !r->found || window_touches(&win, r, r->found ? covered_values(r, in->req.params) : NULL,
											  in->seq);
		}
		values[0] = Int64GetDatum(in->w);
		if (run)
		{
			bytea	   *body = rerun(in, partition, snap, &max_seq, &failed);

			values[3] = PointerGetDatum(body);
			values[2] = CStringGetTextDatum(failed ? "error" : "snapshot");
		}
		else
		{
			values[2] = CStringGetTextDatum("unchanged");
			nulls[3] = true;
		}
		values[1] = Int64GetDatum(max_seq);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();				/* the caller's context is current again */
	PopActiveSnapshot();
	UnregisterSnapshot(snap);
	return (Datum) 0;
}
