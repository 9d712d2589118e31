/*
 * ddl_guard.c — DDL on a synced table outside ensure_schema is refused (docs/writing-with-sql.md
 * "What is not captured, and how divergence is prevented"; data-model-and-storage.md §6, §7:
 * the physical layout of a synced table is the compiled schema's, and changes only through the
 * append-only bump of ensure_schema).
 *
 * Two event triggers of the extension call syncular._guard_synced_ddl():
 *   syncular_guard_alter  ddl_command_start, tags ALTER TABLE and ALTER TRIGGER: before the
 *                         command runs, from its
 *                         parse tree (ddl_command_start is the only event that still sees the
 *                         table under its old name and can refuse before any work): ADD / DROP
 *                         COLUMN, ALTER COLUMN TYPE, SET / DROP NOT NULL, RENAME of the table or
 *                         a column, SET SCHEMA, and DISABLE TRIGGER or RENAME of the capture
 *                         triggers (ALL, USER or one of them by name) on a synced table;
 *   syncular_guard_drop   sql_drop: a synced table or one of its capture triggers among the
 *                         objects a command dropped (DROP TABLE, DROP TRIGGER, DROP SCHEMA ...
 *                         CASCADE, DROP OWNED); raising there rolls the drop back.
 * Every other ALTER TABLE (constraints, defaults, storage parameters, owner, ENABLE TRIGGER) and
 * every statement on other tables pass.  Allowed: the bump of ensure_schema, which sets the
 * backend flag of syncular._synced_ddl(true) around its DDL (cleared at transaction end and when
 * the subtransaction that set it rolls back); unregister_schema, which deletes the registration
 * before it drops tables, so they are no longer synced; and a superuser who sets
 * syncular.allow_synced_table_ddl (the documented escape hatch for a repair).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "tcop/cmdtag.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "ddl_guard.h"
#include "engine.h"

PG_FUNCTION_INFO_V1(syncular_guard_synced_ddl);
PG_FUNCTION_INFO_V1(syncular_synced_ddl);

static bool allow_ddl = false;	/* syncular.allow_synced_table_ddl */
static bool engine_ddl = false;	/* syncular._synced_ddl(true) */
static SubTransactionId engine_ddl_subid = InvalidSubTransactionId;

/* The five triggers of syncular._install_capture (32_capture.sql). */
static bool
is_capture_trigger(const char *name)
{
	return name != NULL &&
		(strcmp(name, "zz_syncular_capture") == 0 ||
		 strcmp(name, "syncular_capture_insert") == 0 ||
		 strcmp(name, "syncular_capture_update") == 0 ||
		 strcmp(name, "syncular_capture_delete") == 0 ||
		 strcmp(name, "syncular_capture_truncate") == 0);
}

/* The layout change one ALTER TABLE subcommand makes, or NULL. */
static const char *
guarded_subcommand(const AlterTableCmd *cmd)
{
	switch (cmd->subtype)
	{
		case AT_AddColumn:
			return "ADD COLUMN";
		case AT_DropColumn:
			return "DROP COLUMN";
		case AT_AlterColumnType:
			return "ALTER COLUMN TYPE";
		case AT_SetNotNull:
			return "ALTER COLUMN SET NOT NULL";
		case AT_DropNotNull:
			return "ALTER COLUMN DROP NOT NULL";
		case AT_DisableTrigAll:
		case AT_DisableTrigUser:
			return "DISABLE TRIGGER";
		case AT_DisableTrig:
			return is_capture_trigger(cmd->name) ? "DISABLE TRIGGER" : NULL;
		default:
			return NULL;
	}
}

/* ALTER TABLE / TRIGGER statements that change a table's layout: the change and the table, or NULL. */
static const char *
guarded_statement(Node *parsetree, RangeVar **rv)
{
	switch (nodeTag(parsetree))
	{
		case T_AlterTableStmt:
			{
				AlterTableStmt *s = (AlterTableStmt *) parsetree;
				ListCell   *lc;

				if (s->objtype != OBJECT_TABLE)
					return NULL;
				*rv = s->relation;
				foreach(lc, s->cmds)
				{
					const char *what = guarded_subcommand(lfirst_node(AlterTableCmd, lc));

					if (what)
						return what;
				}
				return NULL;
			}
		case T_RenameStmt:
			{
				RenameStmt *s = (RenameStmt *) parsetree;

				*rv = s->relation;
				if (s->renameType == OBJECT_TABLE)
					return "RENAME TO";
				if (s->renameType == OBJECT_COLUMN && s->relationType == OBJECT_TABLE)
					return "RENAME COLUMN";
				if (s->renameType == OBJECT_TRIGGER && is_capture_trigger(s->subname))
					return "RENAME TO";
				return NULL;
			}
		case T_AlterObjectSchemaStmt:
			{
				AlterObjectSchemaStmt *s = (AlterObjectSchemaStmt *) parsetree;

				*rv = s->relation;
				return s->objectType == OBJECT_TABLE ? "SET SCHEMA" : NULL;
			}
		default:
			return NULL;
	}
}

/*
 * The registration is read by two SECURITY DEFINER SQL functions of 33_ddl_guard.sql (search_path
 * pinned, owned by the extension owner), called through fmgr: the role running the DDL needs no
 * privilege on syncular.*, and the statement's own names were resolved with its search_path
 * before.  Each answers the synced table's name, or '' when the table is not synced.
 */
static char *
registration_lookup(const char *fn_name, int nargs, Oid *argtypes, Datum *args)
{
	Oid			fn = LookupFuncName(list_make2(makeString("syncular"), makeString((char *) fn_name)),
									nargs, argtypes, false);
	Datum		r = nargs == 0 ? OidFunctionCall0(fn) : OidFunctionCall1(fn, args[0]);
	char	   *name = TextDatumGetCString(r);

	return name[0] ? name : NULL;
}

pg_attribute_noreturn()
static void
refuse(const char *table, const char *command)
{
	StringInfoData d;

	initStringInfo(&d);
	appendStringInfoString(&d, "{\"table\": ");
	escape_json(&d, table);
	appendStringInfoString(&d, ", \"command\": ");
	escape_json(&d, command);
	appendStringInfoString(&d, ", \"reason\": \"ddl_outside_ensure_schema\"}");
	ereport(ERROR,
			(errcode(sync_error_info("sync.storage.physical_layout_mismatch")->sqlstate),
			 errmsg("%s on synced table \"%s\" is refused: synced tables change only "
					"through syncular.ensure_schema", command, table),
			 errdetail("%s", sync_error_detail_json("sync.storage.physical_layout_mismatch", d.data)),
			 errhint("Change the schema IR (a new version: nullable columns appended, tables added "
					 "or retired) and call syncular.ensure_schema, which alters the tables and "
					 "re-encodes the rows; syncular.unregister_schema ends the registration. "
					 "For a repair, a superuser may SET syncular.allow_synced_table_ddl = on "
					 "for the session.")));
}

/* ddl_command_start, ALTER TABLE / TRIGGER: refuse a layout change of a synced table before it runs */
static void
guard_alter(EventTriggerData *trigdata)
{
	RangeVar   *rv = NULL;
	const char *what = guarded_statement(trigdata->parsetree, &rv);
	Oid			relid;
	char	   *table;

	if (what == NULL || rv == NULL)
		return;
	relid = RangeVarGetRelid(rv, NoLock, true);
	if (!OidIsValid(relid))
		return;
	table = registration_lookup("_synced_table_of", 1, (Oid[]) {OIDOID},
								(Datum[]) {ObjectIdGetDatum(relid)});
	if (table != NULL)
		refuse(table, psprintf("%s %s", GetCommandTagName(trigdata->tag), what));
}

/* sql_drop: a synced table among the dropped objects (DROP TABLE, DROP SCHEMA CASCADE, ...) */
static void
guard_drop(EventTriggerData *trigdata)
{
	char	   *table = registration_lookup("_synced_table_dropped", 0, NULL, NULL);

	if (table != NULL)
		refuse(table, GetCommandTagName(trigdata->tag));
}

/* syncular._guard_synced_ddl() RETURNS event_trigger (see the head of this file) */
Datum
syncular_guard_synced_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "syncular._guard_synced_ddl: must be called as an event trigger");
	if (allow_ddl || engine_ddl)
		PG_RETURN_VOID();
	trigdata = (EventTriggerData *) fcinfo->context;
	if (strcmp(trigdata->event, "sql_drop") == 0)
		guard_drop(trigdata);
	else
		guard_alter(trigdata);
	PG_RETURN_VOID();
}

/* syncular._synced_ddl(on boolean): ensure_schema's own DDL on synced tables passes the guard */
Datum
syncular_synced_ddl(PG_FUNCTION_ARGS)
{
	engine_ddl = PG_GETARG_BOOL(0);
	engine_ddl_subid = GetCurrentSubTransactionId();
	PG_RETURN_VOID();
}

static void
guard_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		engine_ddl = false;
}

static void
guard_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (!engine_ddl)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB && engine_ddl_subid >= mySubid)
		engine_ddl = false;
	else if (event == SUBXACT_EVENT_COMMIT_SUB && engine_ddl_subid == mySubid)
		engine_ddl_subid = parentSubid;
}

void
sync_ddl_guard_init(void)
{
	DefineCustomBoolVariable("syncular.allow_synced_table_ddl",
							 "Lets this session run DDL that changes a synced table's layout outside ensure_schema.",
							 "Off: ALTER TABLE ... ADD/DROP/ALTER COLUMN, RENAME, SET SCHEMA, DISABLE, RENAME or DROP "
							 "of the capture triggers, and DROP of a synced table are refused. For repairs only: "
							 "ensure_schema then refuses until the layout matches the registered schema again.",
							 &allow_ddl, false, PGC_SUSET, 0, NULL, NULL, NULL);
	RegisterXactCallback(guard_xact_callback, NULL);
	RegisterSubXactCallback(guard_subxact_callback, NULL);
}
