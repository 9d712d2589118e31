/*
 * schema_compile.c — the schema compiler: the app's schema IR (jsonb) -> the compiled schema of
 * docs/compiled-schema.md.
 *
 *   syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
 *
 * Accepts the typegen IR (irVersion 1: schemaVersion, scopes {pattern, variable, column}) and the
 * plain server shape (version, scopes "prefix:{variable}" or {pattern, column}) and applies every
 * compile-time rule of shared/reference/data-model-and-storage.md §2.2 (identifiers), §2.3
 * (columns, primary key), §2.4 (scopes), §2.5 (references) and §6 (physical index names).  Pass 1
 * reads tables, columns, the primary key, scopes and indexes in declaration order; pass 2 checks
 * the declared references once every table is known.  The first failed rule raises
 * sync.storage.schema_invalid (SQLSTATE 22023) with details {table?, column?, ...extra, rule}, in
 * the order the rules are listed here, so the same IR always gets the same refusal.
 *
 * Pure apart from one read: a crdt column's crdtType must be yjs-doc or registered in
 * syncular.sync_crdt_mergers (SPEC §5.10.1), asked through syncular._crdt_type_known.
 * Everything is palloc'd in the caller's context; nothing switches context.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"

#include "engine.h"
#include "rowjson.h"
#include "schema_compile.h"

typedef struct CCol
{
	char	   *name;
	const char *type;			/* compiled type: bytes when encrypted */
	bool		nullable;
	char	   *crdt;			/* crdtType, or NULL */
	bool		encrypted;
} CCol;

typedef struct CScope
{
	char	   *pattern;
	char	   *prefix;
	char	   *var;
	char	   *col;
	int			idx;
} CScope;

typedef struct CIndex
{
	char	   *name;
	char	  **cols;
	int			ncols;
	bool		unique;
	char	   *physical;
} CIndex;

typedef struct CRef
{
	char	   *col;
	int			idx;
	char	   *parent;
	const char *ondel;
} CRef;

typedef struct CTable
{
	char	   *name;
	bool		mat;
	char	   *pk;
	int			pk_idx;
	CCol	   *cols;
	int			ncols;
	CScope	   *scopes;
	int			nscopes;
	CIndex	   *ix;
	int			nix;
	JsonbValue *raw_refs;		/* the references member, NULL when absent */
	CRef	   *refs;
	int			nrefs;
} CTable;

/* The whole schema while it is compiled; the cross-table state of pass 1. */
typedef struct Compiler
{
	CTable	   *t;
	int			nt;
	char	  **var_names;		/* variable -> column, across the whole schema */
	char	  **var_cols;
	int			nvars;
	char	  **ixnames;		/* declared index names, across the whole schema */
	int			nixnames;
} Compiler;

static const char *const column_types[] = {
	"string", "integer", "float", "boolean", "json", "bytes", "blob_ref", "crdt"
};

/* ---- JSON helpers ---------------------------------------------------------------------- */

/* jsonb_typeof of a member value, or NULL for an absent member. */
const char *
sc_typeof(const JsonbValue *v)
{
	return v == NULL ? NULL : sync_jsonb_type_label(v);
}

bool
sc_is(const JsonbValue *v, const char *type)
{
	const char *t = sc_typeof(v);

	return t != NULL && strcmp(t, type) == 0;
}

/* "absent, JSON null or of `type`" (coalesce(jsonb_typeof(x), 'null') IN ('null', type)). */
static bool
is_opt(const JsonbValue *v, const char *type)
{
	return v == NULL || v->type == jbvNull || sc_is(v, type);
}

/* Member `key` of an object container, or NULL. */
JsonbValue *
sc_member(JsonbContainer *obj, const char *key)
{
	return getKeyJsonValueFromContainer(obj, key, strlen(key), NULL);
}

/* The container of an array or object value. */
JsonbContainer *
sc_container(const JsonbValue *v)
{
	Assert(v->type == jbvBinary);
	return v->val.binary.data;
}

/* The string member `key` of `obj`, or NULL when absent or not a string (syncular._jstr). */
char *
sc_str(JsonbContainer *obj, const char *key)
{
	JsonbValue *v = sc_member(obj, key);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* The JSON text of a value; "null" for NULL (what jsonb_build_object makes of SQL NULL). */
char *
sc_json(const JsonbValue *v)
{
	Jsonb	   *j;

	if (v == NULL)
		return pstrdup("null");
	if (v->type == jbvBinary)
		return JsonbToCString(NULL, v->val.binary.data, v->val.binary.len);
	j = JsonbValueToJsonb((JsonbValue *) v);
	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}

/* A JSON string literal, or null for NULL. */
char *
sc_quote(const char *s)
{
	StringInfoData b;

	if (s == NULL)
		return pstrdup("null");
	initStringInfo(&b);
	escape_json(&b, s);
	return b.data;
}

/* `v #>> '{}'`: a string's text, NULL for JSON null, any other value's JSON text. */
static char *
text_of(const JsonbValue *v)
{
	if (v->type == jbvString)
		return pnstrdup(v->val.string.val, v->val.string.len);
	if (v->type == jbvNull)
		return NULL;
	return sc_json(v);
}

/* Position of s in v[0..n-1], or -1 (array_position - 1). */
static int
position(char **v, int n, const char *s)
{
	if (s == NULL)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return i;
	return -1;
}

/* The elements of an array value; jsonb_array_elements refuses JSON null the same way. */
static int
array_size(const JsonbValue *v)
{
	if (v->type == jbvNull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot extract elements from a scalar")));
	return JsonContainerSize(sc_container(v));
}

static JsonbValue *
elem(const JsonbValue *arr, int i)
{
	return getIthJsonbValueFromContainer(sc_container(arr), i);
}

/* ---- refusals ---------------------------------------------------------------------------- */

/*
 * Raises sync.storage.schema_invalid with details {table?, column?, <extra>, rule}.  extra is
 * NULL or JSON object members text ("\"index\": \"x\""); the details go through jsonb so their
 * text is exactly what syncular._raise printed for the same jsonb.
 */
void
sc_invalid(const char *message, const char *rule, const char *tbl, const char *col, const char *extra)
{
	StringInfoData d;
	Datum		jb;

	initStringInfo(&d);
	appendStringInfoChar(&d, '{');
	if (tbl != NULL)
		appendStringInfo(&d, "\"table\": %s, ", sc_quote(tbl));
	if (col != NULL)
		appendStringInfo(&d, "\"column\": %s, ", sc_quote(col));
	if (extra != NULL)
		appendStringInfo(&d, "%s, ", extra);
	appendStringInfo(&d, "\"rule\": %s}", sc_quote(rule));
	jb = DirectFunctionCall1(jsonb_in, CStringGetDatum(d.data));
	sync_raise_hint("sync.storage.schema_invalid", message,
					DatumGetCString(DirectFunctionCall1(jsonb_out, jb)),
					strcmp(rule, "column_type") == 0 ?
					"A column \"type\" is one of: string, integer, float, boolean, json, bytes, blob_ref, crdt." :
					NULL);
}

/* One member of the details' extra: "name": <json>. */
static char *
member(const char *name, const char *json)
{
	return psprintf("%s: %s", sc_quote(name), json);
}

/* Identifier rules (§2.2): non-empty, at most 63 UTF-8 bytes, no sync_ / _sync prefix. */
static void
check_identifier(const char *name, const char *tbl, const char *col, const char *extra)
{
	if (name == NULL || name[0] == '\0')
		sc_invalid("identifier is missing or empty", "identifier_empty", tbl, col, extra);
	if (strlen(name) > 63)
		sc_invalid("identifier is longer than 63 UTF-8 bytes", "identifier_too_long", tbl, col, extra);
	if (strncmp(name, "sync_", 5) == 0 || strncmp(name, "_sync", 5) == 0)
		sc_invalid("identifier uses a reserved prefix (sync_ or _sync)", "identifier_reserved",
				   tbl, col, extra);
}

/* ---- the version ------------------------------------------------------------------------- */

static bool
numeric_is(const JsonbValue *v, int64 n)
{
	return v != NULL && v->type == jbvNumeric &&
		DatumGetBool(DirectFunctionCall2(numeric_eq, NumericGetDatum(v->val.numeric),
										 NumericGetDatum(int64_to_numeric(n))));
}

/* The schema version member, checked: an integer JSON number in 1..2147483647. */
static JsonbValue *
read_version(JsonbContainer *ir)
{
	JsonbValue *iv = sc_member(ir, "irVersion");
	JsonbValue *v;
	Datum		n;

	if (iv != NULL && !numeric_is(iv, 1))
		sc_invalid("unsupported irVersion (only 1 is known)", "ir_version", NULL, NULL, NULL);
	v = sc_member(ir, iv != NULL ? "schemaVersion" : "version");
	if (v == NULL || v->type != jbvNumeric)
		goto bad;
	n = NumericGetDatum(v->val.numeric);
	if (!DatumGetBool(DirectFunctionCall2(numeric_eq, n, DirectFunctionCall2(numeric_trunc, n, Int32GetDatum(0))))
		|| DatumGetBool(DirectFunctionCall2(numeric_lt, n, NumericGetDatum(int64_to_numeric(1))))
		|| DatumGetBool(DirectFunctionCall2(numeric_gt, n, NumericGetDatum(int64_to_numeric(PG_INT32_MAX)))))
		goto bad;
	return v;
bad:
	sc_invalid("schema version must be an integer between 1 and 2147483647", "version", NULL, NULL, NULL);
	return NULL;
}

/* ---- pass 1: one table ------------------------------------------------------------------ */

static bool
crdt_type_known(const char *crdt)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	bool		isnull;
	bool		known;

	if (strcmp(crdt, "yjs-doc") == 0)
		return true;
	args[0] = CStringGetTextDatum(crdt);
	SPI_connect();
	if (SPI_execute_with_args("SELECT syncular._crdt_type_known($1)", 1, argtypes, args, NULL,
							  true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "syncular._crdt_type_known failed");
	known = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	known = known && !isnull;
	SPI_finish();
	return known;
}

/* The crdt rules of one column (§5.10.1): its crdtType, or NULL for any other type. */
static char *
column_crdt(JsonbContainer *c, const char *ctype, bool enc, const char *tname, const char *cname)
{
	char	   *crdt;

	if (strcmp(ctype, "crdt") != 0)
	{
		if (!is_opt(sc_member(c, "crdtType"), "null"))
			sc_invalid("crdtType is only allowed on a crdt column", "crdt_type", tname, cname, NULL);
		return NULL;
	}
	if (enc)
		sc_invalid("a crdt column cannot be encrypted", "encrypted_crdt", tname, cname, NULL);
	crdt = sc_str(c, "crdtType");
	if (crdt == NULL || !crdt_type_known(crdt))
		sc_invalid("a crdt column must declare a known crdtType", "crdt_type", tname, cname,
				   member("crdtType", sc_quote(crdt)));
	return crdt;
}

static void
read_column(CTable *t, const JsonbValue *cv)
{
	CCol	   *col = &t->cols[t->ncols];
	JsonbContainer *c;
	JsonbValue *v;
	char	  **names = palloc(sizeof(char *) * Max(t->ncols, 1));
	const char *ctype;
	bool		known = false;

	if (!sc_is(cv, "object"))
		sc_invalid("a column must be a JSON object", "column_shape", t->name, NULL, NULL);
	c = sc_container(cv);
	col->name = sc_str(c, "name");
	check_identifier(col->name, t->name, col->name, NULL);
	for (int i = 0; i < t->ncols; i++)
		names[i] = t->cols[i].name;
	if (position(names, t->ncols, col->name) >= 0)
		sc_invalid("duplicate column name", "duplicate_column", t->name, col->name, NULL);
	ctype = sc_str(c, "type");
	for (int i = 0; ctype != NULL && i < (int) lengthof(column_types); i++)
		known = known || strcmp(ctype, column_types[i]) == 0;
	if (!known)
		sc_invalid("unknown column type", "column_type", t->name, col->name,
				   member("type", sc_json(sc_member(c, "type"))));
	v = sc_member(c, "nullable");
	if (!sc_is(v, "boolean"))
		sc_invalid("column nullable must be a boolean", "column_nullable", t->name, col->name, NULL);
	col->nullable = v->val.boolean;
	v = sc_member(c, "encrypted");
	if (!is_opt(v, "boolean"))
		sc_invalid("column encrypted must be a boolean", "column_encrypted", t->name, col->name, NULL);
	col->encrypted = v != NULL && v->type == jbvBool && v->val.boolean;
	col->crdt = column_crdt(c, ctype, col->encrypted, t->name, col->name);
	if (col->encrypted && sc_str(c, "declaredType") != NULL && strcmp(sc_str(c, "declaredType"), "crdt") == 0)
		sc_invalid("a crdt column cannot be encrypted", "encrypted_crdt", t->name, col->name, NULL);
	col->type = col->encrypted ? "bytes" : ctype;
	t->ncols++;
}

static char **
column_names(const CTable *t)
{
	char	  **names = palloc(sizeof(char *) * Max(t->ncols, 1));

	for (int i = 0; i < t->ncols; i++)
		names[i] = t->cols[i].name;
	return names;
}

static void
read_primary_key(CTable *t, JsonbContainer *tc)
{
	const char *type;

	t->pk = sc_str(tc, "primaryKey");
	t->pk_idx = position(column_names(t), t->ncols, t->pk);
	if (t->pk_idx < 0)
		sc_invalid("primary key must name a column of the table", "primary_key", t->name, t->pk, NULL);
	if (t->cols[t->pk_idx].encrypted)
		sc_invalid("the primary key cannot be encrypted", "primary_key_encrypted", t->name, t->pk, NULL);
	type = t->cols[t->pk_idx].type;
	if (strcmp(type, "string") != 0 && strcmp(type, "integer") != 0 &&
		strcmp(type, "boolean") != 0 && strcmp(type, "json") != 0)
		sc_invalid("primary key type must be string, integer, boolean or json", "primary_key_type",
				   t->name, t->pk, member("type", sc_quote(type)));
}

/*
 * The scope pattern grammar `^([^{}]+):\{([^{}:]+)\}$`: a non-empty prefix without braces, ':{',
 * a non-empty variable without braces or colons, '}' at the end.  Splits it into prefix and
 * variable; false when it does not match.
 */
static bool
split_pattern(const char *p, char **prefix, char **var)
{
	const char *open = strchr(p, '{');
	size_t		len = strlen(p);

	if (open == NULL || len < 5 || p[len - 1] != '}' || open - p < 2 || open[-1] != ':')
		return false;
	if (strchr(open + 1, '{') != NULL || memchr(p, '}', len - 1) != NULL)
		return false;
	if (open + 1 == p + len - 1 || memchr(open + 1, ':', p + len - 1 - (open + 1)) != NULL)
		return false;
	*prefix = pnstrdup(p, open - 1 - p);
	*var = pnstrdup(open + 1, p + len - 1 - (open + 1));
	return true;
}

/* The pattern, column and variable of one scope declaration (string or object). */
static void
scope_shape(const CTable *t, const JsonbValue *s, char **pattern, char **scol, char **svar)
{
	JsonbContainer *o;

	*scol = *svar = NULL;
	if (s->type == jbvString)
	{
		*pattern = pnstrdup(s->val.string.val, s->val.string.len);
		return;
	}
	if (!sc_is(s, "object"))
		sc_invalid("a scope must be a pattern string or an object with a pattern", "scope_shape",
				   t->name, NULL, NULL);
	o = sc_container(s);
	*pattern = sc_str(o, "pattern");
	*scol = sc_str(o, "column");
	*svar = sc_str(o, "variable");
	if ((sc_member(o, "column") != NULL && *scol == NULL) ||
		(sc_member(o, "variable") != NULL && *svar == NULL))
		sc_invalid("scope column and variable must be strings", "scope_shape", t->name, NULL, NULL);
}

/* One variable <-> exactly one column, in the table and across the schema. */
static void
scope_map_variable(Compiler *cc, CTable *t, const char *svar, const char *scol)
{
	int			g = position(cc->var_names, cc->nvars, svar);
	bool		clash = g >= 0 && strcmp(cc->var_cols[g], scol) != 0;

	for (int i = 0; i < t->nscopes; i++)
		clash = clash || strcmp(t->scopes[i].var, svar) == 0 || strcmp(t->scopes[i].col, scol) == 0;
	if (clash)
		sc_invalid("a scope variable must map to exactly one column", "scope_variable_column",
				   t->name, scol, member("variable", sc_quote(svar)));
	if (g >= 0)
		cc->var_cols[g] = pstrdup(scol);
	else
	{
		cc->var_names[cc->nvars] = pstrdup(svar);
		cc->var_cols[cc->nvars++] = pstrdup(scol);
	}
}

static void
read_scope(Compiler *cc, CTable *t, const JsonbValue *s)
{
	CScope	   *sc = &t->scopes[t->nscopes];
	char	   *pattern;
	char	   *scol;
	char	   *svar;
	char	   *prefix;
	char	   *var;

	scope_shape(t, s, &pattern, &scol, &svar);
	if (pattern == NULL || !split_pattern(pattern, &prefix, &var))
		sc_invalid("scope pattern must be prefix:{variable} with exactly one variable (no braces in the prefix, no braces or colons in the variable)",
				   "scope_pattern", t->name, NULL, member("pattern", sc_quote(pattern)));
	if (svar != NULL && strcmp(svar, var) != 0)
		sc_invalid("scope variable does not match its pattern", "scope_variable", t->name, NULL,
				   psprintf("%s, %s", member("pattern", sc_quote(pattern)), member("variable", sc_quote(svar))));
	scol = scol != NULL ? scol : var;
	sc->idx = position(column_names(t), t->ncols, scol);
	if (sc->idx < 0)
		sc_invalid("scope names no column of the table", "scope_column", t->name, scol,
				   member("pattern", sc_quote(pattern)));
	if (t->cols[sc->idx].encrypted)
		sc_invalid("a scope column cannot be encrypted", "scope_encrypted", t->name, scol,
				   member("pattern", sc_quote(pattern)));
	scope_map_variable(cc, t, var, scol);
	sc->pattern = pattern;
	sc->prefix = prefix;
	sc->var = var;
	sc->col = scol;
	t->nscopes++;
}

/* `sync_ix_<name>`, or `sync_ix_<16-hex FNV-1a-64 of name>` past 63 bytes (§6). */
static char *
physical_index_name(const char *name)
{
	char		hex[17];

	if (strlen("sync_ix_") + strlen(name) <= 63)
		return psprintf("sync_ix_%s", name);
	sync_fnv1a64_hex(name, strlen(name), hex);
	return psprintf("sync_ix_%s", hex);
}

/* The columns of one declared index: each a column of the table, none twice. */
static void
index_columns(CTable *t, CIndex *ix, const JsonbValue *cols, const char *ixm)
{
	char	  **names = column_names(t);

	if (!sc_is(cols, "array") || JsonContainerSize(sc_container(cols)) == 0)
		sc_invalid("an index must list at least one column", "index_shape", t->name, NULL, ixm);
	ix->ncols = JsonContainerSize(sc_container(cols));
	ix->cols = palloc(sizeof(char *) * ix->ncols);
	for (int i = 0; i < ix->ncols; i++)
	{
		JsonbValue *c = elem(cols, i);

		if (c->type != jbvString || position(names, t->ncols, text_of(c)) < 0)
			sc_invalid("index names no column of the table", "index_column", t->name, text_of(c), ixm);
		ix->cols[i] = text_of(c);
	}
	for (int i = 0; i < ix->ncols; i++)
		if (position(ix->cols, i, ix->cols[i]) >= 0)
			sc_invalid("an index lists a column twice", "index_column", t->name, NULL, ixm);
}

static void
read_index(Compiler *cc, CTable *t, const JsonbValue *iv)
{
	CIndex	   *ix = &t->ix[t->nix];
	JsonbContainer *o;
	JsonbValue *u;
	char	   *ixm;

	if (!sc_is(iv, "object"))
		sc_invalid("an index must be a JSON object", "index_shape", t->name, NULL, NULL);
	o = sc_container(iv);
	ix->name = sc_str(o, "name");
	ixm = member("index", sc_quote(ix->name));
	check_identifier(ix->name, t->name, NULL, ixm);
	if (position(cc->ixnames, cc->nixnames, ix->name) >= 0)
		sc_invalid("duplicate index name", "duplicate_index", t->name, NULL, ixm);
	cc->ixnames[cc->nixnames++] = ix->name;
	index_columns(t, ix, sc_member(o, "columns"), ixm);
	u = sc_member(o, "unique");
	if (!is_opt(u, "boolean"))
		sc_invalid("index unique must be a boolean", "index_shape", t->name, NULL, ixm);
	ix->unique = u != NULL && u->type == jbvBool && u->val.boolean;
	ix->physical = physical_index_name(ix->name);
	t->nix++;
}

/* materialize: default true, except when every non-PK, non-scope column is encrypted (a table
 * with no such column at all stays materialized). */
static void
read_materialize(CTable *t, JsonbContainer *tc)
{
	JsonbValue *m = sc_member(tc, "materialize");
	int			n = 0;
	bool		all_enc = true;

	if (!is_opt(m, "boolean"))
		sc_invalid("materialize must be a boolean", "materialize", t->name, NULL, NULL);
	if (m != NULL && m->type == jbvBool)
	{
		t->mat = m->val.boolean;
		return;
	}
	for (int i = 0; i < t->ncols; i++)
	{
		bool		scope_col = false;

		for (int s = 0; s < t->nscopes; s++)
			scope_col = scope_col || strcmp(t->scopes[s].col, t->cols[i].name) == 0;
		if (i == t->pk_idx || scope_col)
			continue;
		n++;
		all_enc = all_enc && t->cols[i].encrypted;
	}
	t->mat = !(n > 0 && all_enc);
}

/* A non-empty array member, or the refusal `message` with `rule`. */
static JsonbValue *
need_list(CTable *t, JsonbContainer *tc, const char *key, const char *message, const char *rule)
{
	JsonbValue *v = sc_member(tc, key);

	if (!sc_is(v, "array") || JsonContainerSize(sc_container(v)) == 0)
		sc_invalid(message, rule, t->name, NULL, NULL);
	return v;
}

static void
read_table(Compiler *cc, CTable *t, const JsonbValue *tv)
{
	JsonbContainer *tc;
	JsonbValue *v;
	int			n;

	if (!sc_is(tv, "object"))
		sc_invalid("a table must be a JSON object", "table_shape", NULL, NULL, NULL);
	tc = sc_container(tv);
	t->name = sc_str(tc, "name");
	check_identifier(t->name, t->name, NULL, NULL);
	for (int i = 0; i < cc->nt; i++)
		if (strcmp(cc->t[i].name, t->name) == 0)
			sc_invalid("duplicate table name", "duplicate_table", t->name, NULL, NULL);

	v = need_list(t, tc, "columns", "a table must have a non-empty columns array", "columns");
	n = JsonContainerSize(sc_container(v));
	t->cols = palloc0(sizeof(CCol) * n);
	for (int i = 0; i < n; i++)
		read_column(t, elem(v, i));
	read_primary_key(t, tc);

	v = need_list(t, tc, "scopes", "a table must declare at least one scope", "scopes_missing");
	n = JsonContainerSize(sc_container(v));
	t->scopes = palloc0(sizeof(CScope) * n);
	cc->var_names = repalloc(cc->var_names, sizeof(char *) * (cc->nvars + n));
	cc->var_cols = repalloc(cc->var_cols, sizeof(char *) * (cc->nvars + n));
	for (int i = 0; i < n; i++)
		read_scope(cc, t, elem(v, i));

	v = sc_member(tc, "indexes");
	if (!is_opt(v, "array"))
		sc_invalid("indexes must be an array", "index_shape", t->name, NULL, NULL);
	n = v == NULL ? 0 : array_size(v);
	t->ix = palloc0(sizeof(CIndex) * Max(n, 1));
	cc->ixnames = repalloc(cc->ixnames, sizeof(char *) * (cc->nixnames + n + 1));
	for (int i = 0; i < n; i++)
		read_index(cc, t, elem(v, i));

	read_materialize(t, tc);
	t->raw_refs = sc_member(tc, "references");
	if (!is_opt(t->raw_refs, "array"))
		sc_invalid("references must be an array", "reference_shape", t->name, NULL, NULL);
	cc->nt++;
}

/* ---- pass 2: references (§2.5) --------------------------------------------------------- */

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* True when two tables declare the same scope patterns (as multisets). */
static bool
same_patterns(const CTable *a, const CTable *b)
{
	char	  **pa = palloc(sizeof(char *) * Max(a->nscopes, 1));
	char	  **pb = palloc(sizeof(char *) * Max(b->nscopes, 1));

	if (a->nscopes != b->nscopes)
		return false;
	for (int i = 0; i < a->nscopes; i++)
	{
		pa[i] = a->scopes[i].pattern;
		pb[i] = b->scopes[i].pattern;
	}
	qsort(pa, a->nscopes, sizeof(char *), cmp_str);
	qsort(pb, b->nscopes, sizeof(char *), cmp_str);
	for (int i = 0; i < a->nscopes; i++)
		if (strcmp(pa[i], pb[i]) != 0)
			return false;
	return true;
}

/* onDelete: restrict (default), cascade, set null / set_null (trimmed, any case); NULL if not. */
static const char *
on_delete(JsonbContainer *r)
{
	JsonbValue *v = sc_member(r, "onDelete");
	char	   *s;

	if (v == NULL || v->type == jbvNull)
		return "restrict";
	s = sc_str(r, "onDelete");
	if (s == NULL)
		return NULL;
	s = TextDatumGetCString(DirectFunctionCall1Coll(lower, DEFAULT_COLLATION_OID,
													DirectFunctionCall1(btrim1, CStringGetTextDatum(s))));
	if (strcmp(s, "restrict") == 0 || strcmp(s, "cascade") == 0)
		return strcmp(s, "restrict") == 0 ? "restrict" : "cascade";
	if (strcmp(s, "set null") == 0 || strcmp(s, "set_null") == 0)
		return "set_null";
	return NULL;
}

/* The parent checks of one reference: it exists, its key type and scope patterns match. */
static void
reference_parent(Compiler *cc, CTable *t, CRef *ref)
{
	const CTable *parent = NULL;
	char	   *pm = member("parentTable", sc_quote(ref->parent));

	for (int i = 0; ref->parent != NULL && parent == NULL && i < cc->nt; i++)
		if (strcmp(cc->t[i].name, ref->parent) == 0)
			parent = &cc->t[i];
	if (parent == NULL)
		sc_invalid("reference names an unknown parent table", "reference_parent", t->name, ref->col, pm);
	if (strcmp(parent->cols[parent->pk_idx].type, t->cols[ref->idx].type) != 0)
		sc_invalid("reference column type differs from the parent primary key type", "reference_type",
				   t->name, ref->col, pm);
	if (!same_patterns(parent, t))
		sc_invalid("a child table must declare the same scope patterns as its parent", "reference_scopes",
				   t->name, ref->col, pm);
}

static void
read_reference(Compiler *cc, CTable *t, const JsonbValue *rv)
{
	CRef	   *ref = &t->refs[t->nrefs];
	JsonbContainer *r;
	char	   *pm;

	if (!sc_is(rv, "object"))
		sc_invalid("a reference must be a JSON object", "reference_shape", t->name, NULL, NULL);
	r = sc_container(rv);
	ref->col = sc_str(r, "column");
	ref->idx = position(column_names(t), t->ncols, ref->col);
	if (ref->idx < 0)
		sc_invalid("reference names no column of the table", "reference_column", t->name, ref->col, NULL);
	for (int i = 0; i < t->nrefs; i++)
		if (strcmp(t->refs[i].col, ref->col) == 0)
			sc_invalid("a column declares more than one reference", "duplicate_reference",
					   t->name, ref->col, NULL);
	ref->parent = sc_str(r, "parentTable");
	reference_parent(cc, t, ref);
	ref->ondel = on_delete(r);
	if (ref->ondel == NULL)
		sc_invalid("reference onDelete must be restrict, cascade or set null", "reference_on_delete",
				   t->name, ref->col, member("onDelete", sc_json(sc_member(r, "onDelete"))));
	pm = member("parentTable", sc_quote(ref->parent));
	if (strcmp(ref->ondel, "set_null") == 0 && !t->cols[ref->idx].nullable)
		sc_invalid("ON DELETE SET NULL needs a nullable column", "reference_set_null", t->name, ref->col, pm);
	/* a cascaded SET NULL keeps the row's stored scopes, so it must never clear a scope column */
	for (int i = 0; strcmp(ref->ondel, "set_null") == 0 && i < t->nscopes; i++)
		if (strcmp(t->scopes[i].col, ref->col) == 0)
			sc_invalid("ON DELETE SET NULL cannot clear a scope column", "reference_set_null_scope",
					   t->name, ref->col, pm);
	t->nrefs++;
}

static void
read_references(Compiler *cc, CTable *t)
{
	int			n = t->raw_refs == NULL ? 0 : array_size(t->raw_refs);

	t->refs = palloc0(sizeof(CRef) * Max(n, 1));
	for (int i = 0; i < n; i++)
		read_reference(cc, t, elem(t->raw_refs, i));
}

/* ---- the physical index plan (§6) -------------------------------------------------------- */

/*
 * Every physical index name of the schema, as syncular._index_plan lists them: the declared
 * indexes of materialized tables, then one per reference child column of a materialized table
 * that no declared index leads with.
 */
char	  **
sc_physical_names(const SyncCompiled *s, int *n)
{
	char	  **names = NULL;
	int			cap = 0;

	*n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int ti = 0; ti < s->nt; ti++)
		{
			const SyncCompiledTable *t = &s->t[ti];
			int			k = pass == 0 ? t->nix : t->nrefs;

			for (int i = 0; t->mat && i < k; i++)
			{
				if (pass == 1 && sc_ref_index_covered(t, i))
					continue;
				if (*n == cap)
				{
					cap = Max(cap * 2, 8);
					names = names ? repalloc(names, sizeof(char *) * cap) : palloc(sizeof(char *) * cap);
				}
				names[(*n)++] = pass == 0 ? t->ix_physical[i] :
					physical_index_name(psprintf("ref_%s_%s", t->name, t->ref_cols[i]));
			}
		}
	return names;
}

/* True when a declared index of the table already leads with reference i's column. */
bool
sc_ref_index_covered(const SyncCompiledTable *t, int i)
{
	for (int d = 0; d < t->nix; d++)
		if (strcmp(t->ix_first[d], t->ref_cols[i]) == 0)
			return true;
	return false;
}

static SyncCompiled *
summary(const Compiler *cc)
{
	SyncCompiled *s = palloc0(sizeof(SyncCompiled));

	s->nt = cc->nt;
	s->t = palloc0(sizeof(SyncCompiledTable) * Max(cc->nt, 1));
	for (int ti = 0; ti < cc->nt; ti++)
	{
		const CTable *t = &cc->t[ti];
		SyncCompiledTable *o = &s->t[ti];

		o->name = t->name;
		o->mat = t->mat;
		o->nix = t->nix;
		o->nrefs = t->nrefs;
		o->ix_physical = palloc(sizeof(char *) * Max(t->nix, 1));
		o->ix_first = palloc(sizeof(char *) * Max(t->nix, 1));
		o->ref_cols = palloc(sizeof(char *) * Max(t->nrefs, 1));
		for (int i = 0; i < t->nix; i++)
		{
			o->ix_physical[i] = t->ix[i].physical;
			o->ix_first[i] = t->ix[i].cols[0];
		}
		for (int i = 0; i < t->nrefs; i++)
			o->ref_cols[i] = t->refs[i].col;
	}
	return s;
}

static void
check_physical_names(const Compiler *cc)
{
	int			n;
	char	  **names = sc_physical_names(summary(cc), &n);

	qsort(names, n, sizeof(char *), cmp_str);
	for (int i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			sc_invalid("two indexes map to the same physical index name", "duplicate_index",
					   NULL, NULL, NULL);
}

/* ---- output ------------------------------------------------------------------------------ */

static void
put_table(StringInfo b, const CTable *t)
{
	appendStringInfo(b, "{\"name\": %s, \"materialize\": %s, \"primaryKey\": %s, \"pkIndex\": %d, \"columns\": [",
					 sc_quote(t->name), t->mat ? "true" : "false", sc_quote(t->pk), t->pk_idx);
	for (int i = 0; i < t->ncols; i++)
		appendStringInfo(b, "%s{\"name\": %s, \"type\": %s, \"nullable\": %s, \"crdtType\": %s, \"encrypted\": %s}",
						 i ? ", " : "", sc_quote(t->cols[i].name), sc_quote(t->cols[i].type),
						 t->cols[i].nullable ? "true" : "false", sc_quote(t->cols[i].crdt),
						 t->cols[i].encrypted ? "true" : "false");
	appendStringInfoString(b, "], \"scopes\": [");
	for (int i = 0; i < t->nscopes; i++)
		appendStringInfo(b, "%s{\"pattern\": %s, \"prefix\": %s, \"variable\": %s, \"column\": %s, \"columnIndex\": %d}",
						 i ? ", " : "", sc_quote(t->scopes[i].pattern), sc_quote(t->scopes[i].prefix),
						 sc_quote(t->scopes[i].var), sc_quote(t->scopes[i].col), t->scopes[i].idx);
	appendStringInfoString(b, "], \"indexes\": [");
	for (int i = 0; i < t->nix; i++)
	{
		appendStringInfo(b, "%s{\"name\": %s, \"columns\": [", i ? ", " : "", sc_quote(t->ix[i].name));
		for (int c = 0; c < t->ix[i].ncols; c++)
			appendStringInfo(b, "%s%s", c ? ", " : "", sc_quote(t->ix[i].cols[c]));
		appendStringInfo(b, "], \"unique\": %s, \"physical\": %s}", t->ix[i].unique ? "true" : "false",
						 sc_quote(t->ix[i].physical));
	}
	appendStringInfoString(b, "], \"references\": [");
	for (int i = 0; i < t->nrefs; i++)
		appendStringInfo(b, "%s{\"column\": %s, \"columnIndex\": %d, \"parentTable\": %s, \"onDelete\": %s}",
						 i ? ", " : "", sc_quote(t->refs[i].col), t->refs[i].idx,
						 sc_quote(t->refs[i].parent), sc_quote(t->refs[i].ondel));
	appendStringInfoString(b, "]}");
}

/*
 * sync_compile_schema_ir — compiles `ir` (NULL = SQL NULL) with appSchema = app_schema (NULL:
 * JSON null).  Returns the compiled jsonb; *summary_out (when not NULL) gets the per-table facts
 * ensure_schema needs.  Raises sync.storage.schema_invalid on the first failed rule.
 */
Jsonb *
sync_compile_schema_ir(Jsonb *ir, const char *app_schema, SyncCompiled **summary_out)
{
	Compiler	cc = {0};
	JsonbValue *version;
	JsonbValue *tables;
	StringInfoData b;
	int			n;
	int32		v;

	if (ir == NULL || JB_ROOT_IS_SCALAR(ir) || !JB_ROOT_IS_OBJECT(ir))
		sc_invalid("schema IR must be a JSON object", "shape", NULL, NULL, NULL);
	version = read_version(&ir->root);
	tables = sc_member(&ir->root, "tables");
	if (!sc_is(tables, "array"))
		sc_invalid("schema IR must have a tables array", "tables", NULL, NULL, NULL);
	n = JsonContainerSize(sc_container(tables));
	cc.t = palloc0(sizeof(CTable) * Max(n, 1));
	cc.var_names = palloc(sizeof(char *));
	cc.var_cols = palloc(sizeof(char *));
	cc.ixnames = palloc(sizeof(char *));
	for (int i = 0; i < n; i++)
		read_table(&cc, &cc.t[cc.nt], elem(tables, i));
	for (int i = 0; i < cc.nt; i++)
		read_references(&cc, &cc.t[i]);
	check_physical_names(&cc);

	/* as v_version::text::integer: a version written 1.0 is refused by int4in the same way */
	v = DatumGetInt32(DirectFunctionCall1(int4in, DirectFunctionCall1(numeric_out,
																	  NumericGetDatum(version->val.numeric))));
	initStringInfo(&b);
	appendStringInfo(&b, "{\"version\": %d, \"appSchema\": %s, \"tables\": [", v, sc_quote(app_schema));
	for (int i = 0; i < cc.nt; i++)
	{
		if (i > 0)
			appendStringInfoString(&b, ", ");
		put_table(&b, &cc.t[i]);
	}
	appendStringInfoString(&b, "]}");
	if (summary_out != NULL)
		*summary_out = summary(&cc);
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data)));
}

PG_FUNCTION_INFO_V1(sync_compile_schema);

/* syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb */
Datum
sync_compile_schema(PG_FUNCTION_ARGS)
{
	Jsonb	   *ir = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	char	   *app = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));

	PG_RETURN_JSONB_P(sync_compile_schema_ir(ir, app, NULL));
}
