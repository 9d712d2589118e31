/*
 * urltoken.h — the native signed-URL token of SPEC §5.4, shared by every purpose that mints one
 * (segment URLs, blob upload grants and blob download URLs, §5.9.3 / §5.9.5):
 *
 *   token = base64url(payloadJson) "." base64url(HMAC-SHA256(key, payloadJson))
 *
 * One server secret (syncular.sync_segment_secret, owner-only) and one scheme; the purposes
 * differ only in their claims.  Implemented in segurl.c.  All need an SPI connection.
 */
#ifndef SYNCULAR_URLTOKEN_H
#define SYNCULAR_URLTOKEN_H

#include "utils/jsonb.h"

/* the token for payload (JSON text of len bytes); NULL when no secret can be had (standby) */
extern char *sync_url_token_mint(const char *payload, int len);

/* the claims of a token this server signed; NULL when malformed or the MAC does not match */
extern Jsonb *sync_url_token_open(const char *token);

/* the "aud" claim for partition (§5.4: stable, not derivable by a client); NULL without secret */
extern char *sync_url_token_audience(const char *partition);

/* a string claim, or NULL; an integer claim, or false */
extern char *sync_url_token_text(Jsonb *claims, const char *key);
extern bool sync_url_token_int(Jsonb *claims, const char *key, int64 *out);

#endif							/* SYNCULAR_URLTOKEN_H */
