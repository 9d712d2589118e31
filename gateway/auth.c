/*
 * auth.c — host authentication (SPEC §1.1: the host's authenticate(request) runs on every
 * HTTP request and WebSocket upgrade and yields actorId and partition).
 *
 * JWT mode (--jwt-secret HS256, --jwt-public-key RS256/ES256): the token comes from
 * "Authorization: Bearer <token>" (or, for the WebSocket upgrade only, where browsers cannot
 * set headers, the query argument access_token).  The algorithm is pinned to the key kind, so a
 * token cannot pick HS256 with the public key as secret.  exp and nbf are enforced as RFC 7519
 * NumericDates (integers or fractions of seconds; any other JSON type is a 401), with
 * --jwt-leeway seconds of clock skew allowed.  A token accepted once is kept (jwtcache.c,
 * --jwt-cache): its next requests skip the signature and claim parsing, not the date check.
 *
 * SQL mode: the request's method, path, headers and query go to syncular.authenticate (the
 * function registered with syncular.set_authenticator), in the round's own transaction.
 */
#include "gateway.h"

#include <errno.h>
#include <jansson.h>
#include <jwt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static unsigned char *jwt_key;
static int jwt_key_len;

bool
gw_auth_is_jwt(void)
{
	/* --auth none answers as synchronously as JWT: the fixed development identity */
	return gw_cfg.jwt_secret != NULL || gw_cfg.jwt_public_key != NULL || gw_cfg.auth_none;
}

int
gw_auth_init(void)
{
	FILE *f;
	long n;

	if (gw_cfg.jwt_secret)
	{
		jwt_key = (unsigned char *) strdup(gw_cfg.jwt_secret);
		jwt_key_len = (int) strlen(gw_cfg.jwt_secret);
		return jwt_key_len > 0 ? gw_jwt_cache_init((size_t) gw_cfg.jwt_cache) : -1;
	}
	if (!gw_cfg.jwt_public_key)
		return 0;
	if (!(f = fopen(gw_cfg.jwt_public_key, "rb")))
	{
		fprintf(stderr, "syncular-gateway: cannot read --jwt-public-key %s\n", gw_cfg.jwt_public_key);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n <= 0 || n > 65536 || !(jwt_key = malloc((size_t) n + 1)) ||
		fread(jwt_key, 1, (size_t) n, f) != (size_t) n)
	{
		fclose(f);
		fprintf(stderr, "syncular-gateway: --jwt-public-key %s is empty or unreadable\n",
				gw_cfg.jwt_public_key);
		return -1;
	}
	fclose(f);
	jwt_key[n] = '\0';
	jwt_key_len = (int) n;
	if (!strstr((char *) jwt_key, "-----BEGIN PUBLIC KEY-----"))
	{
		fprintf(stderr, "syncular-gateway: --jwt-public-key %s is not a PEM public key\n",
				gw_cfg.jwt_public_key);
		return -1;
	}
	return gw_jwt_cache_init((size_t) gw_cfg.jwt_cache);
}

static bool
alg_allowed(jwt_alg_t alg)
{
	if (gw_cfg.jwt_secret)
		return alg == JWT_ALG_HS256;
	return alg == JWT_ALG_RS256 || alg == JWT_ALG_ES256;
}

static bool
copy_claim(jwt_t *jwt, const char *claim, char *dst, size_t cap)
{
	const char *v = jwt_get_grant(jwt, claim);

	if (!v || !*v || strlen(v) >= cap)
		return false;
	strcpy(dst, v);
	return true;
}

/*
 * RFC 7519 §2 NumericDate: seconds since the epoch, a JSON number that may carry a fraction.
 * §4.1.4: the token is refused when now >= exp; §4.1.5: when now < nbf; §4.1.6 iat is
 * informational, but a present iat must be a NumericDate too.  leeway widens both windows
 * (clock skew between issuer and gateway).  NULL when the dates are acceptable (*exp and *nbf
 * then hold them, HUGE_VAL / -HUGE_VAL when absent, for jwtcache.c), else why not.
 */
static const char *
check_dates(jwt_t *jwt, double now, double *exp, double *nbf)
{
	static const char *const names[] = {"exp", "nbf", "iat"};
	char *payload = jwt_get_grants_json(jwt, NULL);
	json_t *claims = payload ? json_loads(payload, JSON_DECODE_ANY, NULL) : NULL;
	double leeway = (double) gw_cfg.jwt_leeway_s;
	const char *why = NULL;

	free(payload);
	if (!json_is_object(claims))
	{
		json_decref(claims);
		return "invalid token";
	}
	*exp = HUGE_VAL;
	*nbf = -HUGE_VAL;
	for (int i = 0; i < 3 && !why; i++)
	{
		json_t *v = json_object_get(claims, names[i]);
		double d;

		if (!v)
			continue;
		if (!json_is_number(v))
		{
			why = i == 0 ? "token exp is not a NumericDate" : i == 1 ? "token nbf is not a NumericDate"
				: "token iat is not a NumericDate";
			break;
		}
		d = json_number_value(v);
		if (i == 0 && gw_jwt_expired(now, leeway, d))
			why = "token expired";
		else if (i == 1 && gw_jwt_not_yet_valid(now, leeway, d))
			why = "token not yet valid";
		if (i == 0)
			*exp = d;
		else if (i == 1)
			*nbf = d;
	}
	json_decref(claims);
	return why;
}

/* the wall clock in seconds since the epoch (exp and nbf are NumericDates) */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int
gw_auth_jwt(GwReq *r, GwIdentity *id, const char **why)
{
	const char *hdr = gw_req_header(r, "Authorization");
	const char *token = NULL;
	jwt_t *jwt = NULL;
	double now, exp, nbf;
	int rc = -1;

	if (gw_cfg.auth_none)
	{
		snprintf(id->actor, sizeof(id->actor), "%s", gw_cfg.dev_actor);
		snprintf(id->partition, sizeof(id->partition), "%s", gw_cfg.partition);
		return 0;
	}
	*why = "missing bearer token";
	if (hdr)
	{
		if (strncasecmp(hdr, "Bearer ", 7) == 0)
			token = hdr + 7;
	}
	else if (gw_req_header(r, "Upgrade"))
		token = gw_req_arg(r, "access_token");
	if (!token || !*token)
		return -1;
	now = now_s();
	if (gw_jwt_cache_get(token, now, (double) gw_cfg.jwt_leeway_s, id))
		return 0;
	*why = "invalid token";
	if (jwt_decode(&jwt, token, jwt_key, jwt_key_len) != 0 || !jwt)
		goto out;
	if (!alg_allowed(jwt_get_alg(jwt)))
	{
		*why = "token algorithm not accepted";
		goto out;
	}
	if ((*why = check_dates(jwt, now, &exp, &nbf)) != NULL)
		goto out;
	*why = "invalid token";
	if (!copy_claim(jwt, gw_cfg.actor_claim, id->actor, sizeof(id->actor)))
	{
		*why = "token lacks the actor claim";
		goto out;
	}
	if (gw_cfg.partition_claim)
	{
		if (!copy_claim(jwt, gw_cfg.partition_claim, id->partition, sizeof(id->partition)))
		{
			*why = "token lacks the partition claim";
			goto out;
		}
	}
	else
		snprintf(id->partition, sizeof(id->partition), "%s", gw_cfg.partition);
	gw_jwt_cache_put(token, exp, nbf, id);
	rc = 0;
out:
	jwt_free(jwt);
	return rc;
}

/* request headers for the SQL authenticator: the standard ones (names not starting "x-") and
 * the names listed in --auth-headers; names in lower case */
static bool
header_listed(const char *name)
{
	const char *l = gw_cfg.auth_headers;
	size_t n = strlen(name);

	if (strncasecmp(name, "x-", 2) != 0)
		return true;
	while (l && *l)
	{
		size_t k;

		l += strspn(l, ", ");
		k = strcspn(l, ", ");
		if (k == n && strncasecmp(l, name, n) == 0)
			return true;
		l += k;
	}
	return false;
}

static void
add_header(void *cls, const char *name, const char *value)
{
	char key[128];
	size_t n = strlen(name);

	if (n == 0 || n >= sizeof(key) || !value || !header_listed(name))
		return;
	for (size_t i = 0; i <= n; i++)
		key[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char) (name[i] + 'a' - 'A') : name[i];
	json_object_set_new((json_t *) cls, key, json_string(value));
}

char *
gw_auth_headers_json(GwReq *r)
{
	json_t *o = json_object();
	char *s;

	gw_req_headers(r, add_header, o);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

static void
add_arg(void *cls, const char *key, const char *value)
{
	json_object_set_new((json_t *) cls, key, json_string(value ? value : ""));
}

/*
 * The identity in the SQL authenticator's answer (syncular.authenticate(...)::text:
 * {"actorId", "partition"}, NULL for a refused caller): false when json_text is NULL, not JSON,
 * or either member is missing, not a string or too long for GwIdentity.
 */
bool
gw_auth_identity(const char *json_text, GwIdentity *id)
{
	json_t *who = json_text ? json_loads(json_text, 0, NULL) : NULL;
	const char *actor = json_string_value(json_object_get(who, "actorId"));
	const char *part = json_string_value(json_object_get(who, "partition"));
	bool ok = actor && part && strlen(actor) < sizeof(id->actor) && strlen(part) < sizeof(id->partition);

	if (ok)
	{
		strcpy(id->actor, actor);
		strcpy(id->partition, part);
	}
	json_decref(who);
	return ok;
}

char *
gw_auth_query_json(GwReq *r)
{
	json_t *o = json_object();
	char *s;

	gw_req_args(r, add_arg, o);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}
