/*
 * ops_bind.c — partition binding of a registered query (REMOTE.md §2): every reference to an
 * app table in the authored SQL is replaced by a derived relation that selects the table's app
 * columns of the authenticated partition only,
 *
 *     tasks t   ->   (SELECT "id", "title", ... FROM "app"."tasks" WHERE _sync_partition = $N) t
 *
 * where $N is one parameter past the query's own, bound at execution to the partition the host
 * authenticated.  Request values only ever travel as parameters.
 *
 * The references are found with PostgreSQL's own parser (RangeVar locations in the raw parse
 * tree), and the rewritten statement is then analyzed: it must be one plain SELECT whose only
 * relations are the derived relations' tables, exactly as many as were rewritten, so a
 * reference the rewrite did not see (a schema-qualified table, a view, a catalog table, a CTE
 * shadowing trick) fails the registration instead of reading another partition.  Analysis also
 * checks the result columns against the declared ones and raises PostgreSQL's own error for
 * SQL outside what PostgreSQL accepts, at registration rather than at first use.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "operations.h"

typedef struct BindRef
{
	RangeVar   *rv;
	int			table_index;	/* in the compiled schema */
} BindRef;

static void bind_refuse(const char *message) pg_attribute_noreturn();

typedef struct RawScan
{
	List	   *rangevars;
	List	   *cte_names;
} RawScan;

static bool
raw_scan(Node *node, RawScan *scan)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeVar))
	{
		scan->rangevars = lappend(scan->rangevars, node);
		return false;
	}
	if (IsA(node, InsertStmt) || IsA(node, UpdateStmt) || IsA(node, DeleteStmt) || IsA(node, MergeStmt))
		bind_refuse("a registered query must be a SELECT without data-modifying statements");
	if (IsA(node, CommonTableExpr))
		scan->cte_names = lappend(scan->cte_names, ((CommonTableExpr *) node)->ctename);
	return raw_expression_tree_walker(node, raw_scan, (void *) scan);
}

static bool
name_in(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp((const char *) lfirst(lc), name) == 0)
			return true;
	return false;
}

static int
ref_cmp(const ListCell *a, const ListCell *b)
{
	int			la = ((BindRef *) lfirst(a))->rv->location;
	int			lb = ((BindRef *) lfirst(b))->rv->location;

	return (la > lb) - (la < lb);
}

/* Byte length of the identifier token at sql[pos] (quoted or plain). */
static int
ident_len(const char *sql, int pos)
{
	int			i = pos;

	if (sql[i] == '"')
	{
		for (i++; sql[i] != '\0'; i++)
			if (sql[i] == '"')
			{
				if (sql[i + 1] == '"')
					i++;
				else
					return i + 1 - pos;
			}
		return i - pos;
	}
	while (sql[i] != '\0' && (isalnum((unsigned char) sql[i]) || sql[i] == '_' || sql[i] == '$' ||
							  (unsigned char) sql[i] >= 0x80))
		i++;
	return i - pos;
}

static void
bind_refuse(const char *message)
{
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s", message)));
}

typedef struct RelCheck
{
	List	   *allowed;		/* Oids of the declared tables */
	int			count;
} RelCheck;

static bool
rel_check(Node *node, RelCheck *rc)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
		{
			if (!list_member_oid(rc->allowed, rte->relid))
				bind_refuse(psprintf("the query reads relation %s, which is not a declared app table "
									 "referenced by its unqualified name",
									 get_rel_name(rte->relid) ? get_rel_name(rte->relid) : "?"));
			rc->count++;
		}
		else if (rte->rtekind == RTE_FUNCTION || rte->rtekind == RTE_TABLEFUNC)
			bind_refuse("the query reads a set-returning function in FROM; only app tables can be read");
		return false;
	}
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;

		if (q->commandType != CMD_SELECT || q->utilityStmt != NULL || q->hasModifyingCTE)
			bind_refuse("a registered query must be a SELECT without data-modifying statements");
		if (q->rowMarks != NIL)
			bind_refuse("a registered query must not lock rows (FOR UPDATE / FOR SHARE)");
		return query_tree_walker(q, rel_check, (void *) rc, QTW_EXAMINE_RTES_BEFORE);
	}
	return expression_tree_walker(node, rel_check, (void *) rc);
}

/* The declared result columns must each be produced exactly once. */
static void
check_columns(Query *q, ArrayType *columns)
{
	Datum	   *names;
	bool	   *nulls;
	int			n;

	deconstruct_array(columns, TEXTOID, -1, false, TYPALIGN_INT, &names, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *want = TextDatumGetCString(names[i]);
		int			found = 0;
		ListCell   *lc;

		foreach(lc, q->targetList)
		{
			TargetEntry *te = lfirst(lc);

			if (!te->resjunk && te->resname != NULL && strcmp(te->resname, want) == 0)
				found++;
		}
		if (found != 1)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
							errmsg("the query result has %d columns named \"%s\"; the declared result column must appear exactly once",
								   found, want)));
	}
}

/* The relations the query may read: the declared tables, each a materialized synced table. */
static List *
declared_relations(SyncSchema *schema, Datum *tdat, int ntables)
{
	List	   *allowed = NIL;

	for (int i = 0; i < ntables; i++)
	{
		char	   *name = TextDatumGetCString(tdat[i]);
		SyncTable  *t = sync_schema_table(schema, name);

		if (t == NULL)
			bind_refuse(psprintf("table \"%s\" is not a synced table of the registered schema", name));
		if (!t->materialize)
			bind_refuse(psprintf("table \"%s\" is not materialized (materialize: false) and cannot be queried",
								 name));
		allowed = lappend_oid(allowed,
							  RangeVarGetRelid(makeRangeVar(schema->app_schema, t->name, -1),
											   NoLock, false));
	}
	return allowed;
}

/*
 * The query's references to app tables, in text order: each an unqualified name of a declared
 * table (CTE names aside), and every declared table read at least once.
 */
static List *
table_references(SyncSchema *schema, const RawScan *scan, Datum *tdat, int ntables)
{
	bool	   *read = palloc0(sizeof(bool) * Max(ntables, 1));
	List	   *refs = NIL;
	ListCell   *lc;

	foreach(lc, scan->rangevars)
	{
		RangeVar   *rv = lfirst(lc);
		BindRef    *ref;
		int			k;

		if (rv->schemaname == NULL && rv->catalogname == NULL && name_in(scan->cte_names, rv->relname))
			continue;			/* a CTE reference; its sources are rewritten where they appear */
		if (rv->schemaname != NULL || rv->catalogname != NULL)
			bind_refuse(psprintf("the query names relation \"%s.%s\" with a schema; app tables are "
								 "referenced by their unqualified names only",
								 rv->schemaname ? rv->schemaname : rv->catalogname, rv->relname));
		for (k = 0; k < ntables; k++)
			if (strcmp(TextDatumGetCString(tdat[k]), rv->relname) == 0)
				break;
		if (k == ntables)
			bind_refuse(psprintf("the query reads \"%s\", which is not one of its declared tables",
								 rv->relname));
		if (rv->location < 0)
			bind_refuse("the parser gave no location for a table reference");
		read[k] = true;
		ref = palloc(sizeof(BindRef));
		ref->rv = rv;
		ref->table_index = sync_schema_table_index(schema, rv->relname);
		refs = lappend(refs, ref);
	}
	for (int i = 0; i < ntables; i++)
		if (!read[i])
			bind_refuse(psprintf("declared table \"%s\" is not read by the query",
								 TextDatumGetCString(tdat[i])));
	list_sort(refs, ref_cmp);
	return refs;
}

/* The rewrite: each reference's name token becomes the partition's rows of its table ($n+1). */
static char *
bind_partition(const char *sql, List *refs, SyncSchema *schema, int nparams)
{
	StringInfoData out;
	int			copied = 0;
	ListCell   *lc;

	initStringInfo(&out);
	foreach(lc, refs)
	{
		BindRef    *ref = lfirst(lc);
		SyncTable  *t = &schema->tables[ref->table_index];
		int			len = ident_len(sql, ref->rv->location);

		appendBinaryStringInfo(&out, sql + copied, ref->rv->location - copied);
		appendStringInfoString(&out, "(SELECT ");
		for (int c = 0; c < t->ncolumns; c++)
			appendStringInfo(&out, "%s%s", c ? ", " : "", quote_identifier(t->columns[c].name));
		appendStringInfo(&out, " FROM %s WHERE _sync_partition = $%d)", t->qualified, nparams + 1);
		if (ref->rv->alias == NULL)
			appendStringInfo(&out, " AS %s", quote_identifier(t->name));
		copied = ref->rv->location + len;
	}
	appendStringInfoString(&out, sql + copied);
	return out.data;
}

/*
 * syncular._operation_bind(sql text, param_types regtype[], tables text[], columns text[])
 * RETURNS text: the partition-bound SQL, or an ERROR (the caller names the query).
 */
PG_FUNCTION_INFO_V1(syncular_operation_bind);

Datum
syncular_operation_bind(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	SyncSchema *schema = sync_schema_get();
	Datum	   *tdat;
	bool	   *tnull;
	int			ntables;
	Datum	   *pdat;
	bool	   *pnull;
	int			nparams;
	Oid		   *types;
	List	   *raw;
	RawStmt    *stmt;
	RawScan		scan = {NIL, NIL};
	List	   *refs;
	char	   *bound;
	RelCheck	rc = {NIL, 0};
	Query	   *q;

	if (schema == NULL)
		bind_refuse("no app schema is registered (syncular.ensure_schema first)");
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), TEXTOID, -1, false, TYPALIGN_INT, &tdat, &tnull,
					  &ntables);
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(1), REGTYPEOID, sizeof(Oid), true, TYPALIGN_INT, &pdat,
					  &pnull, &nparams);
	rc.allowed = declared_relations(schema, tdat, ntables);

	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		bind_refuse("a registered query must be exactly one SQL statement");
	stmt = linitial_node(RawStmt, raw);
	if (!IsA(stmt->stmt, SelectStmt))
		bind_refuse("a registered query must be a SELECT statement");
	(void) raw_scan(stmt->stmt, &scan);
	refs = table_references(schema, &scan, tdat, ntables);
	bound = bind_partition(sql, refs, schema, nparams);

	/* analysis of the bound statement: the relation rule and the result columns */
	types = palloc(sizeof(Oid) * (nparams + 1));
	for (int i = 0; i < nparams; i++)
		types[i] = DatumGetObjectId(pdat[i]);
	types[nparams] = TEXTOID;
	raw = raw_parser(bound, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		bind_refuse("the bound query is not one statement");
	q = parse_analyze_fixedparams(linitial_node(RawStmt, raw), bound, types, nparams + 1, NULL);
	(void) rel_check((Node *) q, &rc);
	if (rc.count != list_length(refs))
		bind_refuse("the query reads an app table through a reference the partition binding cannot see");
	check_columns(q, PG_GETARG_ARRAYTYPE_P(3));
	PG_RETURN_TEXT_P(cstring_to_text(bound));
}

/*
 * syncular._operation_positional(sql text, names text[]) RETURNS text: typegen SQL (SQLite
 * placeholders) as PostgreSQL parameters.  `:name` is $k with k the position of name in
 * names (repeats share one parameter); without any `:name`, each `?` in order is $1, $2, ...
 * Quoted strings, quoted identifiers, comments and `::` are copied unchanged.
 */
PG_FUNCTION_INFO_V1(syncular_operation_positional);

Datum
syncular_operation_positional(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *nd;
	bool	   *nn;
	int			nnames;
	StringInfoData out;
	int			questions = 0;
	bool		named = false;
	int			i = 0;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &nd, &nn, &nnames);
	initStringInfo(&out);
	while (sql[i] != '\0')
	{
		char		c = sql[i];

		if (c == '\'' || c == '"' || c == '`')
		{
			int			j = i + 1;

			while (sql[j] != '\0' && !(sql[j] == c && sql[j + 1] != c))
				j += (sql[j] == c) ? 2 : 1;
			if (sql[j] != '\0')
				j++;
			appendBinaryStringInfo(&out, sql + i, j - i);
			i = j;
		}
		else if (c == '-' && sql[i + 1] == '-')
		{
			int			j = i;

			while (sql[j] != '\0' && sql[j] != '\n')
				j++;
			appendBinaryStringInfo(&out, sql + i, j - i);
			i = j;
		}
		else if (c == '/' && sql[i + 1] == '*')
		{
			char	   *end = strstr(sql + i + 2, "*/");
			int			j = end ? (int) (end - sql) + 2 : (int) strlen(sql);

			appendBinaryStringInfo(&out, sql + i, j - i);
			i = j;
		}
		else if (c == ':' && sql[i + 1] == ':')
		{
			appendStringInfoString(&out, "::");
			i += 2;
		}
		else if (c == ':' && (isalpha((unsigned char) sql[i + 1]) || sql[i + 1] == '_'))
		{
			int			j = i + 1;
			int			k;
			char	   *name;

			while (isalnum((unsigned char) sql[j]) || sql[j] == '_')
				j++;
			name = pnstrdup(sql + i + 1, j - i - 1);
			for (k = 0; k < nnames; k++)
				if (strcmp(TextDatumGetCString(nd[k]), name) == 0)
					break;
			if (k == nnames)
				ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								errmsg("the SQL uses :%s, which is not a declared param", name)));
			appendStringInfo(&out, "$%d", k + 1);
			named = true;
			i = j;
		}
		else if (c == '?')
		{
			appendStringInfo(&out, "$%d", ++questions);
			i++;
		}
		else
			appendStringInfoChar(&out, sql[i++]);
	}
	if (named && questions > 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("the SQL mixes :name and ? placeholders")));
	if (!named && questions != nnames)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("the SQL has %d ? placeholders for %d declared params", questions, nnames)));
	PG_RETURN_TEXT_P(cstring_to_text(out.data));
}
