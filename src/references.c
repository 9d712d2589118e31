/*
 * references.c — declared-reference enforcement (§6.11; push-and-pull.md §2.7;
 * data-model-and-storage.md §2.5), the sync_enforce_references seam.
 *
 * Runs once per commit, after every client operation and before the whole-commit validator,
 * over the candidate state: the commit's rows are already written in its subtransaction, so
 * the synced tables ARE the candidate state.
 *
 *   1. Actions.  For every evidence entry (client ops, then appended ones, in order) that
 *      deletes a row which stays deleted at the end of the commit, every child reference to
 *      its table with ON DELETE CASCADE appends a delete of each child row, and with SET NULL
 *      an upsert that NULLs the reference column.  Appended operations are themselves
 *      evidence entries, so cascades recurse; a visited set keeps each (action, row) to one
 *      appended operation.  They are authorized on the child's stored scopes, run the row
 *      validator, emit ordinary changes (deletes write tombstones at append time) and carry
 *      the opIndex of the client operation the cascade started from.  More than
 *      syncular.max_cascade_operations_per_commit appended operations -> cascade_limit.
 *   2. Checks, in evidence order, on the final state:
 *      - a delete (still deleted at the end) whose table has a RESTRICT child reference with
 *        a remaining child -> restricted_delete {references: {child: <table>}};
 *      - an upsert (the row's last entry) whose non-NULL reference value names no row of the
 *        parent table in this partition -> missing_parent {fieldPaths: [column],
 *        references: {parent: <table>, row: <rowId>}} (row omitted when it cannot be a
 *        references value: longer than 256 bytes, untrimmed, control characters).
 *   Deleting a parent together with its children passes RESTRICT: the children are gone from
 *   the candidate state when the check runs.  Every rejection is sync.reference_violation,
 *   retryable false, attributed to the originating client opIndex.
 */
#include "postgres.h"

#include <limits.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "engine.h"
#include "rules.h"
#include "storage.h"

int			sync_max_cascade_operations_per_commit = 1000;

void
sync_references_define_gucs(void)
{
	DefineCustomIntVariable("syncular.max_cascade_operations_per_commit",
							"Maximum number of operations declared references may append to one commit.",
							"ON DELETE CASCADE deletes and SET NULL updates count; a commit that needs "
							"more is rejected with sync.reference_violation (reason cascade_limit).",
							&sync_max_cascade_operations_per_commit,
							1000, 0, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- a small string map */

/* key -> int, open addressing; keys are copied. */
typedef struct KeyMap
{
	int			cap;			/* power of two */
	int			n;
	char	  **keys;
	int		   *vals;
} KeyMap;

static void
map_init(KeyMap *m)
{
	m->cap = 64;
	m->n = 0;
	m->keys = palloc0(sizeof(char *) * m->cap);
	m->vals = palloc0(sizeof(int) * m->cap);
}

static int
map_slot(const KeyMap *m, const char *key)
{
	uint32		h = hash_bytes((const unsigned char *) key, strlen(key));
	int			i = (int) (h & (uint32) (m->cap - 1));

	while (m->keys[i] != NULL && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void
map_put(KeyMap *m, const char *key, int val)
{
	int			i;

	if ((m->n + 1) * 2 > m->cap)
	{
		KeyMap		g;

		g.cap = m->cap * 2;
		g.n = 0;
		g.keys = palloc0(sizeof(char *) * g.cap);
		g.vals = palloc0(sizeof(int) * g.cap);
		for (int k = 0; k < m->cap; k++)
			if (m->keys[k] != NULL)
			{
				int			j = map_slot(&g, m->keys[k]);

				g.keys[j] = m->keys[k];
				g.vals[j] = m->vals[k];
				g.n++;
			}
		pfree(m->keys);
		pfree(m->vals);
		*m = g;
	}
	i = map_slot(m, key);
	if (m->keys[i] == NULL)
	{
		m->keys[i] = pstrdup(key);
		m->n++;
	}
	m->vals[i] = val;
}

/* The value of key, or -1. */
static int
map_get(const KeyMap *m, const char *key)
{
	int			i = map_slot(m, key);

	return m->keys[i] != NULL ? m->vals[i] : -1;
}

static char *
row_key(int table_index, const char *row_id)
{
	return psprintf("%d:%s", table_index, row_id);
}

/* ---------------------------------------------------------------- rejections */

static void
violation(SyncOpReject *reject, int32 op_index, const char *message, char *details)
{
	reject->op_index = op_index;
	reject->code = "sync.reference_violation";
	reject->message = message;
	reject->retryable = false;
	reject->details_json = details;
}

/* A string usable as a PUSH_RESULT_DETAILS references value (WF §3.4). */
static bool
reference_value_ok(const char *s)
{
	size_t		len = strlen(s);

	if (len == 0 || len > 256)
		return false;
	if (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ||
		s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char) s[i] < 0x20 || (unsigned char) s[i] == 0x7f)
			return false;
	return true;
}

static char *
missing_parent_details(const SyncReference *r, const char *parent_row_id)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"fieldPaths\":[");
	escape_json(&b, r->column);
	appendStringInfoString(&b, "],\"reason\":\"missing_parent\",\"references\":{\"parent\":");
	escape_json(&b, r->parent_table);
	if (parent_row_id != NULL && reference_value_ok(parent_row_id))
	{
		appendStringInfoString(&b, ",\"row\":");
		escape_json(&b, parent_row_id);
	}
	appendStringInfoString(&b, "}}");
	return b.data;
}

/* ---------------------------------------------------------------- enforcement */

/* A (child table, reference) pair whose parent is a given table. */
typedef struct ChildRef
{
	int			child;
	int			ref;
} ChildRef;

/* The declared references of a schema by parent table. */
typedef struct ChildIndex
{
	int		   *nchild;			/* per parent table */
	ChildRef  **children;		/* per parent table: its child references */
} ChildIndex;

/* Parent table -> the child references that name it; false when the schema declares none. */
static bool
child_index(SyncSchema *schema, ChildIndex *ix)
{
	int			total = 0;

	ix->nchild = palloc0(sizeof(int) * Max(schema->ntables, 1));
	ix->children = palloc0(sizeof(ChildRef *) * Max(schema->ntables, 1));
	for (int pass = 0; pass < 2; pass++)
	{
		/* the first pass counts, the second fills */
		for (int c = 0; c < schema->ntables; c++)
			for (int r = 0; r < schema->tables[c].nreferences; r++)
			{
				int			p = sync_schema_table_index(schema,
														schema->tables[c].references[r].parent_table);

				if (p < 0)
					continue;
				if (pass == 1)
				{
					ix->children[p][ix->nchild[p]].child = c;
					ix->children[p][ix->nchild[p]].ref = r;
				}
				ix->nchild[p]++;
				total++;
			}
		if (total == 0)
			return false;		/* no declared references */
		for (int p = 0; pass == 0 && p < schema->ntables; p++)
			if (ix->nchild[p] > 0)
			{
				ix->children[p] = palloc0(sizeof(ChildRef) * ix->nchild[p]);
				ix->nchild[p] = 0;
			}
	}
	return true;
}

/* What the actions of one commit share. */
typedef struct Enforcement
{
	SyncRound  *round;
	SyncCommitState *cs;
	const SyncRowWriter *writer;
	ChildIndex	ix;
	KeyMap		last;			/* row key -> index of its last evidence entry */
	KeyMap		visited;		/* appended (action, row) */
	int			appended;
	int			cap;			/* syncular.max_cascade_operations_per_commit */
} Enforcement;

/*
 * The CASCADE or SET NULL action of child reference `cr` on the rows that reference the deleted
 * row of evidence entry `ev`: each child row at most once per action, appended through the
 * writer; the cascade cap counts every appended operation.  false + *reject when refused.
 */
static bool
child_action(Enforcement *en, const SyncOpEvidence *ev, const ChildRef *cr, SyncOpReject *reject)
{
	SyncSchema *schema = en->round->schema;
	const SyncReference *r = &schema->tables[cr->child].references[cr->ref];
	bool		cascade = strcmp(r->on_delete, "cascade") == 0;
	char	  **ids;
	int			n;

	if (!cascade && strcmp(r->on_delete, "set_null") != 0)
		return true;			/* restrict: checked below */
	CHECK_FOR_INTERRUPTS();
	n = sync_storage_reference_children(schema, cr->child, cr->ref, en->round->partition,
										ev->row_id, (long) (en->cap - en->appended) + 1L, &ids);
	for (int j = 0; j < n; j++)
	{
		char	   *vkey = psprintf("%c%d:%d:%s", cascade ? 'D' : 'N', cr->child,
									r->column_index, ids[j]);
		bool		ok;

		if (map_get(&en->visited, vkey) >= 0)
			continue;
		map_put(&en->visited, vkey, 1);
		if (en->appended >= en->cap)
		{
			violation(reject, ev->op_index,
					  psprintf("the delete cascades to more than %d operations", en->cap),
					  pstrdup("{\"reason\":\"cascade_limit\"}"));
			return false;
		}
		en->appended++;
		if (cascade)
			ok = en->writer->append_delete(en->cs, cr->child, ids[j], ev->op_index, reject);
		else
			ok = en->writer->append_set_null(en->cs, cr->child, ids[j], r->column_index,
											 ev->op_index, reject);
		if (!ok)
		{
			reject->op_index = ev->op_index;
			return false;
		}
		if (en->cs->nops > 0)
		{
			const SyncOpEvidence *ne = &en->cs->ops[en->cs->nops - 1];

			map_put(&en->last, row_key(ne->table_index, ne->row_id), en->cs->nops - 1);
		}
	}
	return true;
}

/* 1. Actions: CASCADE and SET NULL, recursively through appended deletes. */
static bool
run_actions(Enforcement *en, SyncOpReject *reject)
{
	for (int i = 0; i < en->cs->nops; i++)
	{
		/* copy: appending may move cs->ops */
		SyncOpEvidence ev = en->cs->ops[i];
		int			p = ev.table_index;

		if (ev.op != SSP_OP_DELETE || ev.stored == NULL || en->ix.nchild[p] == 0)
			continue;
		if (map_get(&en->last, row_key(p, ev.row_id)) != i)
			continue;			/* re-created later in the commit */
		for (int k = 0; k < en->ix.nchild[p]; k++)
			if (!child_action(en, &ev, &en->ix.children[p][k], reject))
				return false;
	}
	return true;
}

/* 2a. A delete that stays: no RESTRICT child reference may keep a child row. */
static bool
check_restrict(Enforcement *en, const SyncOpEvidence *ev, SyncOpReject *reject)
{
	SyncSchema *schema = en->round->schema;
	int			p = ev->table_index;

	if (ev->stored == NULL)
		return true;
	for (int k = 0; k < en->ix.nchild[p]; k++)
	{
		const SyncTable *ct = &schema->tables[en->ix.children[p][k].child];
		const SyncReference *r = &ct->references[en->ix.children[p][k].ref];
		char	  **ids;
		StringInfoData b;

		if (strcmp(r->on_delete, "restrict") != 0)
			continue;
		if (sync_storage_reference_children(schema, en->ix.children[p][k].child,
											en->ix.children[p][k].ref, en->round->partition,
											ev->row_id, 1, &ids) == 0)
			continue;
		initStringInfo(&b);
		appendStringInfoString(&b,
							   "{\"reason\":\"restricted_delete\",\"references\":{\"child\":");
		escape_json(&b, ct->name);
		appendStringInfoString(&b, "}}");
		violation(reject, ev->op_index, "the row is still referenced by child rows", b.data);
		return false;
	}
	return true;
}

/* 2b. An upsert that stays: each non-NULL reference value names a row of its parent table. */
static bool
check_parents(Enforcement *en, const SyncOpEvidence *ev, SyncOpReject *reject)
{
	SyncSchema *schema = en->round->schema;
	const SyncTable *t = &schema->tables[ev->table_index];

	for (int k = 0; k < t->nreferences; k++)
	{
		const SyncReference *r = &t->references[k];
		const SspValue *v = &ev->row[r->column_index];
		int			pti = sync_schema_table_index(schema, r->parent_table);
		SspBuf		b;
		SspError	err;
		char	   *parent_id = NULL;
		SyncStoredRow parent;

		if (!v->present || v->is_null || pti < 0)
			continue;
		ssp_buf_init(&b);
		if (ssp_render_pk(&t->codec_columns[r->column_index], v, &b, &err) &&
			memchr(b.data, '\0', b.len) == NULL)
			parent_id = pnstrdup((const char *) b.data, b.len);
		ssp_buf_free(&b);
		if (parent_id != NULL)
		{
			sync_storage_row_get(schema, pti, en->round->partition, parent_id, &parent);
			if (parent.found)
				continue;
		}
		violation(reject, ev->op_index, "the referenced parent row does not exist",
				  missing_parent_details(r, parent_id));
		return false;
	}
	return true;
}

bool
sync_enforce_references(SyncRound *round, SyncCommitState *cs, const SyncRowWriter *writer,
						SyncOpReject *reject)
{
	Enforcement en;

	memset(&en, 0, sizeof(en));
	en.round = round;
	en.cs = cs;
	en.writer = writer;
	en.cap = sync_max_cascade_operations_per_commit;
	if (!child_index(round->schema, &en.ix))
		return true;			/* no declared references */
	map_init(&en.last);
	map_init(&en.visited);
	for (int i = 0; i < cs->nops; i++)
		map_put(&en.last, row_key(cs->ops[i].table_index, cs->ops[i].row_id), i);

	if (!run_actions(&en, reject))
		return false;

	/* 2. checks over the final state, in evidence order */
	for (int i = 0; i < cs->nops; i++)
	{
		const SyncOpEvidence *ev = &cs->ops[i];

		CHECK_FOR_INTERRUPTS();
		if (map_get(&en.last, row_key(ev->table_index, ev->row_id)) != i)
			continue;			/* not the row's final state */
		if (ev->op == SSP_OP_DELETE ? !check_restrict(&en, ev, reject)
			: !check_parents(&en, ev, reject))
			return false;
	}
	return true;
}
