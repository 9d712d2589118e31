/*
 * schema_compile.h — the schema compiler (schema_compile.c) and the few JSON helpers its caller
 * ensure_schema (schema_ensure.c) shares with it.
 */
#ifndef SYNCULAR_SCHEMA_COMPILE_H
#define SYNCULAR_SCHEMA_COMPILE_H

#include "postgres.h"
#include "utils/jsonb.h"

/* The facts of one compiled table that the physical index plan needs. */
typedef struct SyncCompiledTable
{
	char	   *name;
	bool		mat;
	int			nix;
	char	  **ix_physical;	/* declared indexes: physical name */
	char	  **ix_first;		/* declared indexes: first column */
	int			nrefs;
	char	  **ref_cols;		/* reference child columns */
} SyncCompiledTable;

typedef struct SyncCompiled
{
	SyncCompiledTable *t;
	int			nt;
} SyncCompiled;

extern Jsonb *sync_compile_schema_ir(Jsonb *ir, const char *app_schema, SyncCompiled **summary_out);
extern char **sc_physical_names(const SyncCompiled *s, int *n);
extern bool sc_ref_index_covered(const SyncCompiledTable *t, int i);
extern void sc_invalid(const char *message, const char *rule, const char *tbl, const char *col,
					   const char *extra) pg_attribute_noreturn();

/* jsonb helpers: typeof (NULL when absent), member, string member, JSON text, quoted string */
extern const char *sc_typeof(const JsonbValue *v);
extern bool sc_is(const JsonbValue *v, const char *type);
extern JsonbValue *sc_member(JsonbContainer *obj, const char *key);
extern JsonbContainer *sc_container(const JsonbValue *v);
extern char *sc_str(JsonbContainer *obj, const char *key);
extern char *sc_json(const JsonbValue *v);
extern char *sc_quote(const char *s);

/* layout.c: FNV-1a-64 of len bytes as 16 lowercase hex digits (+ NUL) into hex */
extern void sync_fnv1a64_hex(const char *p, int len, char *hex);

#endif
