/*
 * errors.c — the catalogue entries the gateway itself answers with (SPEC §10.1 shape:
 * code, category, retryable, recommendedAction, message).  Every other error body comes from
 * syncular.handle_http.  The rows match syncular.error_catalog() (checked by the tests).
 */
#include "gateway.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct CatEntry
{
	const char *code;
	const char *category;
	bool        retryable;
	const char *action;
	int         status;
} CatEntry;

static const CatEntry catalogue[] = {
	{"sync.auth_required", "auth-required", true, "refreshAuth", 401},
	{"sync.invalid_request", "invalid-request", false, "fixRequest", 400},
	{"sync.internal_error", "internal", true, "retryLater", 500},
	{"sync.not_found", "not-found", false, "forceResync", 404},
	{"sync.rate_limited", "rate-limited", true, "retryLater", 429},
	{"sync.schema_not_ready", "internal", true, "retryLater", 503},
	{"sync.websocket_connection_limit", "rate-limited", true, "retryLater", 429},
	{"sync.invalid_client_id", "invalid-request", false, "resetClientId", 400},
	{"blob.not_found", "not-found", false, "fixRequest", 404},
	{"blob.forbidden", "forbidden", false, "checkPermissions", 403},
	{"blob.hash_mismatch", "invalid-request", false, "fixRequest", 400},
	{"blob.too_large", "invalid-request", false, "fixRequest", 413},
};

char *
gw_error_json(const char *code, const char *message, int status_override, int *status)
{
	const CatEntry *e = &catalogue[2];    /* unknown codes degrade to internal_error */
	json_t     *o;
	char       *s;

	for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strcmp(catalogue[i].code, code) == 0)
			e = &catalogue[i];
	o = json_pack("{s:s, s:s, s:b, s:s, s:s}", "code", e->code, "category", e->category,
				  "retryable", e->retryable, "recommendedAction", e->action, "message", message);
	s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (status)
		*status = status_override > 0 ? status_override : e->status;
	return s;
}
