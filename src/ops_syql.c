/*
 * ops_syql.c — the SYQL statement variants of a registered query (REMOTE.md §2: "Execution
 * selects the plan whose SQL equals the selected statement"; queries IR, syql.plan).
 *
 * A query registered from a typegen queries IR with a `syql` member keeps every statement of
 * its plan, each partition-bound and analyzed at registration (register_queries), in the
 * column syql = {backend, activationControls, inputs, statements: [{activationMask?,
 * sortProfile?, boundSql, binds}]}.  A request's params are the SYQL inputs by langName; the
 * statement is chosen as the generated client chooses it:
 *
 *   - an activation control is active when its value input is present (an input declared
 *     with default false: when it is true);
 *   - backend "variants": the statement whose activationMask has bit i set for each active
 *     control i of activationControls; backend "neutralize": activationMask absent;
 *   - with a sort input, the statement of the requested profile (else the default profile);
 *
 * and its positional binds are computed from the inputs: "value" = the input (absent: NULL,
 * or false for an input declared default false; a {present, value} wrapper is unwrapped),
 * "condition-active" = whether every control of the condition is active, "limit" = the
 * requested page size (1..maxSize) or defaultSize.  The bound statement takes the partition
 * as parameter nbinds + 1, as every bound query.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "operations.h"

static JsonbContainer *
jsub(JsonbContainer *c, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(c, key, strlen(key), NULL);

	return (v && v->type == jbvBinary) ? v->val.binary.data : NULL;
}

static bool
jbool_is(JsonbContainer *c, const char *key, bool want)
{
	JsonbValue *v = getKeyJsonValueFromContainer(c, key, strlen(key), NULL);

	return v && v->type == jbvBool && v->val.boolean == want;
}

static JsonbContainer *
elem(JsonbContainer *arr, int i)
{
	JsonbValue *e = getIthJsonbValueFromContainer(arr, i);

	return (e && e->type == jbvBinary) ? e->val.binary.data : NULL;
}

/* the input named `name` (by name, as controls and binds name them) */
static JsonbContainer *
input_by_name(JsonbContainer *inputs, const char *name)
{
	for (uint32 i = 0; i < JsonContainerSize(inputs); i++)
	{
		JsonbContainer *in = elem(inputs, i);
		char	   *n = in ? ops_jstr(in, "name") : NULL;

		if (n && strcmp(n, name) == 0)
			return in;
	}
	return NULL;
}

/* the request's value of an input (by its langName); NULL when absent */
static const SspOpValue *
param_of(const SspOpValue *params, JsonbContainer *input)
{
	char	   *lang = ops_jstr(input, "langName");

	return ssp_op_member(params, lang ? lang : ops_jstr(input, "name"));
}

static bool
control_active(JsonbContainer *inputs, const SspOpValue *params, const char *control)
{
	JsonbContainer *in = input_by_name(inputs, control);
	const SspOpValue *v;

	if (in == NULL)
		sync_raise("operation.query_failed", "the registered SYQL plan names an unknown control", NULL);
	v = param_of(params, in);
	if (jbool_is(in, "default", false))
		return v != NULL && v->kind == SSP_OP_BOOLEAN && v->b;
	return v != NULL;
}

static void
check_inputs(JsonbContainer *inputs, const SspOpValue *params)
{
	if (params != NULL && params->kind != SSP_OP_OBJECT && params->kind != SSP_OP_NULL)
		sync_raise("operation.invalid_request", "params must be an object", NULL);
	for (uint32 k = 0; params && params->kind == SSP_OP_OBJECT && k < params->count; k++)
	{
		bool		known = false;

		for (uint32 i = 0; i < JsonContainerSize(inputs) && !known; i++)
		{
			char	   *lang = ops_jstr(elem(inputs, i), "langName");

			known = lang && strlen(lang) == params->keys[k].len &&
				memcmp(lang, params->keys[k].ptr, params->keys[k].len) == 0;
		}
		if (!known)
			sync_raise("operation.invalid_request", "params carries an input the query does not declare", NULL);
	}
	for (uint32 i = 0; i < JsonContainerSize(inputs); i++)
	{
		JsonbContainer *in = elem(inputs, i);
		const SspOpValue *v = param_of(params, in);

		if (jbool_is(in, "required", true) &&
			(v == NULL || (v->kind == SSP_OP_NULL && !jbool_is(in, "nullable", true))))
			sync_raise("operation.invalid_request",
					   psprintf("required input \"%s\" is missing", ops_jstr(in, "name")), NULL);
	}
}

/* the sort profile asked for (or the default), NULL without a sort input */
static char *
chosen_profile(JsonbContainer *inputs, const SspOpValue *params)
{
	for (uint32 i = 0; i < JsonContainerSize(inputs); i++)
	{
		JsonbContainer *in = elem(inputs, i);
		char	   *kind = ops_jstr(in, "kind");
		JsonbContainer *profiles;
		const SspOpValue *v;

		if (kind == NULL || strcmp(kind, "sort") != 0)
			continue;
		profiles = jsub(in, "profiles");
		v = param_of(params, in);
		if (v == NULL)
			return ops_jstr(in, "defaultProfile");
		for (uint32 p = 0; v->kind == SSP_OP_STRING && profiles && p < JsonContainerSize(profiles); p++)
		{
			char	   *lang = ops_jstr(elem(profiles, p), "langName");

			if (lang && strcmp(lang, v->str.ptr) == 0)
				return ops_jstr(elem(profiles, p), "name");
		}
		sync_raise("operation.invalid_request", "invalid sort profile", NULL);
	}
	return NULL;
}

static JsonbContainer *
choose_statement(JsonbContainer *syql, JsonbContainer *inputs, const SspOpValue *params)
{
	JsonbContainer *statements = jsub(syql, "statements");
	JsonbContainer *controls = jsub(syql, "activationControls");
	char	   *backend = ops_jstr(syql, "backend");
	char	   *profile = chosen_profile(inputs, params);
	int64		mask = 0;
	bool		variants = backend && strcmp(backend, "variants") == 0;

	for (uint32 i = 0; variants && controls && i < JsonContainerSize(controls); i++)
	{
		JsonbValue *c = getIthJsonbValueFromContainer(controls, i);

		if (c->type == jbvString &&
			control_active(inputs, params, pnstrdup(c->val.string.val, c->val.string.len)))
			mask |= INT64CONST(1) << i;
	}
	for (uint32 s = 0; statements && s < JsonContainerSize(statements); s++)
	{
		JsonbContainer *st = elem(statements, s);
		int64		m = 0;
		char	   *sp = ops_jstr(st, "sortProfile");

		if (variants && (!ops_jint(st, "activationMask", &m) || m != mask))
			continue;
		if ((profile == NULL) != (sp == NULL) || (profile && strcmp(profile, sp) != 0))
			continue;
		return st;
	}
	sync_raise("operation.query_failed", "the registered SYQL plan has no statement for these inputs", NULL);
	return NULL;					/* not reached */
}

/* one positional bind of the chosen statement */
static void
bind_value(JsonbContainer *bind, JsonbContainer *inputs, const SspOpValue *params,
		   Datum *value, char *null, Oid *type)
{
	char	   *kind = ops_jstr(bind, "kind");
	JsonbContainer *in;
	const SspOpValue *v;

	*null = ' ';
	if (kind && strcmp(kind, "condition-active") == 0)
	{
		JsonbContainer *controls = jsub(bind, "controls");
		bool		active = true;

		for (uint32 i = 0; controls && i < JsonContainerSize(controls); i++)
		{
			JsonbValue *c = getIthJsonbValueFromContainer(controls, i);

			active = active && c->type == jbvString &&
				control_active(inputs, params, pnstrdup(c->val.string.val, c->val.string.len));
		}
		*type = BOOLOID;
		*value = BoolGetDatum(active);
		return;
	}
	in = input_by_name(inputs, ops_jstr(bind, "input") ? ops_jstr(bind, "input") : "");
	if (in == NULL)
		sync_raise("operation.query_failed", "the registered SYQL plan binds an unknown input", NULL);
	v = param_of(params, in);
	if (kind && strcmp(kind, "limit") == 0)
	{
		int64		n = 0,
					max = 0;

		*type = INT8OID;
		if (v == NULL)
			(void) ops_jint(in, "defaultSize", &n);
		else if (v->kind == SSP_OP_INTEGER || (v->kind == SSP_OP_NUMBER && v->num == (double) (int64) v->num))
			n = v->kind == SSP_OP_INTEGER ? v->i : (int64) v->num;
		if (!ops_jint(in, "maxSize", &max) || n < 1 || n > max)
			sync_raise("operation.invalid_request",
					   psprintf("input \"%s\" must be an integer from 1 through %lld", ops_jstr(in, "name"),
								(long long) max), NULL);
		*value = Int64GetDatum(n);
		return;
	}
	/* a value bind */
	{
		OpsType		t = ops_type_from_name(ops_jstr(bind, "type"));
		bool		isnull = false;

		*type = ops_type_oid(t);
		if (v != NULL && v->kind == SSP_OP_OBJECT && ssp_op_member(v, "present") && ssp_op_member(v, "value"))
			v = ssp_op_member(v, "value");  /* an optional nullable input, {present, value} */
		if (v == NULL && jbool_is(in, "default", false))
		{
			*value = BoolGetDatum(false);
			return;
		}
		if (v == NULL)
		{
			*null = 'n';
			*value = (Datum) 0;
			return;
		}
		if (t == OPS_T_INVALID || !ops_value_to_datum(v, t, value, &isnull))
			sync_raise("operation.invalid_request",
					   psprintf("input \"%s\" is not a value of its declared type", ops_jstr(in, "name")), NULL);
		*null = isnull ? 'n' : ' ';
	}
}

void
ops_syql_select(Jsonb *syql, const SspOpValue *params, const char *partition, OpsSyqlChoice *out)
{
	JsonbContainer *inputs = jsub(&syql->root, "inputs");
	JsonbContainer *st;
	JsonbContainer *binds;
	int			n;

	if (inputs == NULL)
		sync_raise("operation.query_failed", "the registered SYQL plan has no inputs", NULL);
	check_inputs(inputs, params);
	st = choose_statement(&syql->root, inputs, params);
	binds = jsub(st, "binds");
	n = binds ? (int) JsonContainerSize(binds) : 0;
	out->bound_sql = ops_jstr(st, "boundSql");
	out->nbinds = n;
	out->values = palloc0(sizeof(Datum) * (n + 1));
	out->nulls = palloc0(n + 1);
	out->types = palloc0(sizeof(Oid) * (n + 1));
	for (int i = 0; i < n; i++)
		bind_value(elem(binds, i), inputs, params, &out->values[i], &out->nulls[i], &out->types[i]);
	out->values[n] = CStringGetTextDatum(partition);
	out->nulls[n] = ' ';
	out->types[n] = TEXTOID;
}
