/*
 * jsondoc.h — reading a rendering-shaped jsonb document (SPEC §11) field by field, for
 * debug_encode.  Every accessor names the field's path ("frames[2].operations[0].row") in its
 * error: a missing or mistyped field raises sync.invalid_request (22023) with details
 * {"field": path}.  JSON null counts as absent.  Results are palloc'd in the current context.
 */
#ifndef SYNCULAR_JSONDOC_H
#define SYNCULAR_JSONDOC_H

#include "postgres.h"
#include "utils/jsonb.h"
#include "ssp.h"

/* Integer bounds for doc_get_int: int32, and the integers a JSON number holds exactly. */
#define I32_MIN ((int64) PG_INT32_MIN)
#define I32_MAX ((int64) PG_INT32_MAX)
#define I64_MIN (-SSP_I64_SAFE_MAX)
#define I64_MAX SSP_I64_SAFE_MAX

/* A zeroed C array for the n elements of a document array; never NULL, even when n = 0. */
#define ELEMS(type, n) ((type *) palloc0(sizeof(type) * Max((n), 1)))

/*
 * A document array read element by element: its container, size and path.  Every list in a
 * document (frames, operations, results, columns, blocks, ...) is read through this, so each
 * element is checked and named in errors the same way.
 */
typedef struct DocArray
{
	JsonbContainer *arr;
	int			n;
	char	   *path;
} DocArray;

/* Reads one element object (named `path` in errors) into the C element at `out`. */
typedef void (*ObjectReader) (JsonbContainer *obj, const char *path, void *out);

/*
 * An object member read as a map, pair by pair (scopes, effectiveScopes): its iterator, size and
 * path.  Both map shapes of a document are read through this.
 */
typedef struct DocMap
{
	JsonbIterator *it;
	int			n;
	char	   *path;
} DocMap;

extern void doc_raise_field(const char *path, const char *fmt,...) pg_attribute_printf(2, 3) pg_attribute_noreturn();
extern char *doc_path_key(const char *base, const char *key);
extern char *doc_path_index(const char *base, int i);
extern bool doc_is_object(JsonbValue *v);
extern bool doc_is_array(JsonbValue *v);
extern JsonbValue *doc_member(JsonbContainer *obj, const char *key);
extern JsonbValue *doc_need(JsonbContainer *obj, const char *base, const char *key);
extern JsonbContainer *doc_need_object(JsonbValue *v, const char *path);
extern JsonbContainer *doc_get_object(JsonbContainer *obj, const char *base, const char *key);
extern SspStr doc_as_str(JsonbValue *v, const char *path);
extern SspStr doc_get_str(JsonbContainer *obj, const char *base, const char *key);
extern SspStr doc_get_opt_str(JsonbContainer *obj, const char *base, const char *key, bool *present);
extern int64 doc_as_int(JsonbValue *v, const char *path, int64 min, int64 max);
extern int64 doc_get_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max);
extern int64 doc_get_opt_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max,
			bool *present);
extern bool doc_get_bool(JsonbContainer *obj, const char *base, const char *key, bool dflt, bool required);
extern SspBytes doc_as_bytes(JsonbValue *v, const char *path);
extern SspBytes doc_get_bytes(JsonbContainer *obj, const char *base, const char *key);
extern SspBytes doc_get_opt_bytes(JsonbContainer *obj, const char *base, const char *key, bool *present);
extern SspStr doc_as_json_text(JsonbValue *v);
extern SspStr doc_get_opt_json(JsonbContainer *obj, const char *key, bool *present);
extern uint8 doc_get_enum(JsonbContainer *obj, const char *base, const char *key, const char *const *names, int nnames);
extern DocArray doc_as_array(JsonbValue *v, char *path);
extern DocArray doc_get_array(JsonbContainer *obj, const char *base, const char *key);
extern JsonbValue *doc_elem(const DocArray *a, int i);
extern JsonbContainer *doc_elem_object(const DocArray *a, int i, char **path);
extern DocArray doc_elem_array(const DocArray *a, int i);
extern SspStr doc_elem_str(const DocArray *a, int i);
extern void *doc_get_objects(JsonbContainer *obj, const char *base, const char *key, Size elem_size,
			ObjectReader read, int *n);
extern DocMap doc_get_map(JsonbContainer *obj, const char *base, const char *key);
extern bool doc_next_pair(DocMap *m, SspStr *k, JsonbValue *v, char **vpath);
extern SspScopeMap doc_get_scope_map(JsonbContainer *obj, const char *base, const char *key);
extern SspStrMap doc_get_str_map(JsonbContainer *obj, const char *base, const char *key);

#endif
