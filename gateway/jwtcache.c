/*
 * jwtcache.c — the verified bearer tokens of recent requests (auth.c's JWT mode, SPEC §1.1).
 *
 * An SDK sends the same token on every round until it renews it, and verifying it again costs
 * more than anything else the gateway does for a small round: the signature (an HMAC or an
 * RSA/ECDSA verification through OpenSSL, whose per-call algorithm fetch dominates an HMAC of a
 * few hundred bytes), then two JSON parses of its claims.  A token whose signature and claims
 * were accepted once gives the same identity until its exp: the key is fixed for the process's
 * life and a JWT carries no other state.  So this table keeps, per accepted token, the identity
 * and the exp/nbf it was accepted with; a request whose token is in it skips the verification,
 * and its dates are checked again against the clock (with --jwt-leeway) on every hit.  A token
 * the cache cannot answer for (absent, or outside its dates) takes the whole verification, which
 * says why it is refused.
 *
 * Layout: --jwt-cache slots, direct-mapped by a hash of the token (an attacker who controls the
 * hash can only evict entries, never hit one: a hit needs the whole token).  The token bytes are
 * compared with OpenSSL's CRYPTO_memcmp, in time independent of where they differ, so a timing
 * probe cannot learn a cached token byte by byte.  Tokens longer than GW_JWT_CACHE_MAX_TOKEN are
 * not kept.  Memory: --jwt-cache × (sizeof(Slot), about 550 bytes, + the token, at most
 * GW_JWT_CACHE_MAX_TOKEN bytes): at the default 4,096 slots about 2 MiB with tokens of 1 KiB,
 * 34 MiB at worst.  Used on the
 * event loop thread only (auth runs there), so no lock.
 */
#include "gateway.h"
#include "metrics.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Slot
{
	char	   *token;			/* malloc'd, NULL: empty */
	size_t		len;
	double		exp;			/* seconds since the epoch; HUGE_VAL: no exp claim */
	double		nbf;			/* -HUGE_VAL: no nbf claim */
	GwIdentity	id;
} Slot;

static Slot *slots;
static size_t nslots;

int
gw_jwt_cache_init(size_t entries)
{
	nslots = entries;
	if (entries == 0)
		return 0;
	slots = calloc(entries, sizeof(Slot));
	if (!slots)
		fprintf(stderr, "syncular-gateway: cannot allocate --jwt-cache %zu slots\n", entries);
	return slots ? 0 : -1;
}

/* FNV-1a 64: spreads tokens over the slots (not a secret: see the file comment) */
static size_t
slot_of(const char *token, size_t len)
{
	return (size_t) (gw_fnv1a64(token, len) % nslots);
}

/* true when now is within the token's dates, widened by leeway (auth.c's check_dates rule) */
static bool
dates_hold(const Slot *s, double now, double leeway)
{
	return !gw_jwt_expired(now, leeway, s->exp) && !gw_jwt_not_yet_valid(now, leeway, s->nbf);
}

bool
gw_jwt_cache_get(const char *token, double now, double leeway, GwIdentity *id)
{
	size_t		len = strlen(token);
	Slot	   *s;

	if (nslots == 0)
		return false;
	if (len > GW_JWT_CACHE_MAX_TOKEN)
	{
		gw_metrics_jwt_cache(false);	/* never kept (the request head's limit is the same) */
		return false;
	}
	s = &slots[slot_of(token, len)];
	if (!s->token || s->len != len || CRYPTO_memcmp(s->token, token, len) != 0)
	{
		gw_metrics_jwt_cache(false);
		return false;
	}
	if (!dates_hold(s, now, leeway))
	{
		/* past its exp (or before its nbf, the clock set back): verified in full, which says why */
		free(s->token);
		s->token = NULL;
		gw_metrics_jwt_cache(false);
		return false;
	}
	gw_metrics_jwt_cache(true);
	*id = s->id;
	return true;
}

void
gw_jwt_cache_put(const char *token, double exp, double nbf, const GwIdentity *id)
{
	size_t		len = strlen(token);
	Slot	   *s;
	char	   *copy;

	if (nslots == 0 || len > GW_JWT_CACHE_MAX_TOKEN || !(copy = malloc(len)))
		return;
	memcpy(copy, token, len);
	s = &slots[slot_of(token, len)];
	free(s->token);
	s->token = copy;
	s->len = len;
	s->exp = exp;
	s->nbf = nbf;
	s->id = *id;
}
