/*
 * presence.c — scope-keyed ephemeral presence (SPEC §8.6).
 *
 * A connection publishes {"event":"presence","data":{"scopeKey","doc"}} on a key of its
 * registration (the scopeKeys realtime_connect answered: §8.6.3, no separate grant); peers
 * registered on the same key get join/update/leave events, a newly registered key gets the
 * snapshot as a burst of joins, a closed socket leaves every key.  Nothing is persisted.
 * Across gateways, every change travels as NOTIFY syncular_presence (payload JSON, a few
 * hundred bytes plus the document, below PostgreSQL's 8000-byte NOTIFY limit); each gateway
 * mirrors the peers of the others, and a starting gateway asks the others to announce theirs.
 */
#include "ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef struct Entry
{
	struct Entry *next;
	char    *partition;
	char    *key;
	Sock    *s;             /* local publisher, or NULL for a peer on another gateway */
	char     gid[17];       /* remote: its gateway and connection */
	uint64_t conn;
	char    *actor, *client;
	char    *doc;           /* compact JSON object */
} Entry;

static Entry *entries;
static char gid[17];

static bool
holds(Sock *s, const char *key)
{
	size_t i;
	json_t *v;

	json_array_foreach(s->scope_keys, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return true;
	return false;
}

static void
entry_free(Entry *e)
{
	free(e->partition);
	free(e->key);
	free(e->actor);
	free(e->client);
	free(e->doc);
	free(e);
}

static json_t *
doc_json(const char *doc)
{
	json_error_t je;
	json_t *d = doc ? json_loads(doc, 0, &je) : NULL;

	return d ? d : json_null();
}

static void
send_presence(Sock *to, const char *key, const char *kind, const char *actor, const char *client,
			  const char *doc)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:o, s:I}}", "event", "presence", "data",
						  "scopeKey", key, "kind", kind, "actorId", actor, "clientId", client,
						  "doc", strcmp(kind, "leave") == 0 ? json_null() : doc_json(doc),
						  "timestamp", (json_int_t) ws_now_ms());
	char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (t)
		ws_send_text(to, t);
	free(t);
	json_decref(o);
}

static void
send_error(Sock *to, const char *key, const char *code)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:s, s:I}}", "event", "presence", "data", "scopeKey", key,
						  "error", code, "timestamp", (json_int_t) ws_now_ms());
	char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (t)
		ws_send_text(to, t);
	free(t);
	json_decref(o);
}

/* every local socket of the partition registered on key, except the publisher */
static void
fan_local(const char *partition, const char *key, Sock *except, const char *kind, const char *actor,
		  const char *client, const char *doc)
{
	for (WsPart *p = fanout_parts(); p; p = p->next)
	{
		if (strcmp(p->name, partition) != 0)
			continue;
		for (Sock *s = p->socks; s; s = s->pnext)
			if (s != except && s->st == WS_OPEN && holds(s, key))
				send_presence(s, key, kind, actor, client, doc);
	}
}

static void
notify(const char *partition, const char *key, Sock *s, const char *kind, const char *doc)
{
	json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:o}", "g", gid, "n", (json_int_t) s->id,
						  "p", partition, "k", key, "a", s->who.actor, "c", s->client, "kind", kind,
						  "doc", doc_json(doc));
	char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;

	if (t && strlen(t) < 7900)
		gw_pool_notify("syncular_presence", t);
	free(t);
	json_decref(o);
}

static Entry *
find_local(Sock *s, const char *key)
{
	for (Entry *e = entries; e; e = e->next)
		if (e->s == s && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static void
unlink_entry(Entry *x)
{
	for (Entry **pp = &entries; *pp; pp = &(*pp)->next)
		if (*pp == x)
		{
			*pp = x->next;
			return;
		}
}

static void
local_leave(Sock *s, Entry *e)
{
	fan_local(e->partition, e->key, s, "leave", s->who.actor, s->client, NULL);
	notify(e->partition, e->key, s, "leave", NULL);
	unlink_entry(e);
	entry_free(e);
}

void
presence_on_control(Sock *s, const GwControl *c)
{
	Entry *e = find_local(s, c->scope_key);
	const char *kind;

	if (!holds(s, c->scope_key))
	{
		send_error(s, c->scope_key, "presence.forbidden");
		return;
	}
	if (!c->doc)
	{
		if (e)
			local_leave(s, e);
		return;
	}
	if (c->doc_len > gw_cfg.presence_max)
	{
		send_error(s, c->scope_key, "presence.too_large");
		return;
	}
	if (e)
	{
		free(e->doc);
		e->doc = strdup(c->doc);
		kind = "update";
	}
	else
	{
		if (!(e = calloc(1, sizeof(Entry))))
			return;
		e->partition = strdup(s->who.partition);
		e->key = strdup(c->scope_key);
		e->s = s;
		e->actor = strdup(s->who.actor);
		e->client = strdup(s->client);
		e->doc = strdup(c->doc);
		e->next = entries;
		entries = e;
		kind = "join";
	}
	fan_local(e->partition, e->key, s, kind, s->who.actor, s->client, e->doc);
	notify(e->partition, e->key, s, kind, e->doc);
}

void
presence_on_close(Sock *s)
{
	Entry *e = entries, *n;

	for (; e; e = n)
	{
		n = e->next;
		if (e->s == s)
			local_leave(s, e);
	}
}

static bool
in_array(json_t *arr, const char *key)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return true;
	return false;
}

void
presence_on_registration(Sock *s, json_t *old_keys)
{
	Entry *e, *n;
	size_t i;
	json_t *v;

	/* §8.6.3: keys no longer held leave; keys newly held get the snapshot */
	for (e = entries; e; e = n)
	{
		n = e->next;
		if (e->s == s && !holds(s, e->key))
			local_leave(s, e);
	}
	json_array_foreach(s->scope_keys, i, v)
	{
		const char *key = json_string_value(v);

		if (!key || (old_keys && in_array(old_keys, key)))
			continue;
		for (e = entries; e; e = e->next)
			if (e->s != s && strcmp(e->key, key) == 0 && strcmp(e->partition, s->who.partition) == 0)
				send_presence(s, key, "join", e->actor, e->client, e->doc);
	}
}

static void
announce_all(void)
{
	for (Entry *e = entries; e; e = e->next)
		if (e->s)
			notify(e->partition, e->key, e->s, "join", e->doc);
}

void
presence_on_notify(const char *payload)
{
	json_error_t je;
	json_t *o = json_loads(payload, 0, &je);
	const char *g, *p, *k, *a, *c, *kind;
	uint64_t conn;
	json_t *d;
	char *doc;
	Entry *e;

	g = o ? json_string_value(json_object_get(o, "g")) : NULL;
	kind = o ? json_string_value(json_object_get(o, "kind")) : NULL;
	if (!g || !kind || strcmp(g, gid) == 0)
		goto out;
	if (strcmp(kind, "sync-request") == 0)
	{
		announce_all();
		goto out;
	}
	p = json_string_value(json_object_get(o, "p"));
	k = json_string_value(json_object_get(o, "k"));
	a = json_string_value(json_object_get(o, "a"));
	c = json_string_value(json_object_get(o, "c"));
	conn = (uint64_t) json_integer_value(json_object_get(o, "n"));
	d = json_object_get(o, "doc");
	if (!p || !k || !a || !c)
		goto out;
	for (e = entries; e; e = e->next)
		if (!e->s && e->conn == conn && strcmp(e->gid, g) == 0 && strcmp(e->key, k) == 0)
			break;
	if (strcmp(kind, "leave") == 0)
	{
		if (e)
		{
			fan_local(p, k, NULL, "leave", a, c, NULL);
			unlink_entry(e);
			entry_free(e);
		}
		goto out;
	}
	if (!json_is_object(d) || !(doc = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		goto out;
	if (e && strcmp(e->doc, doc) == 0)
	{
		free(doc);              /* a re-announcement of what we know */
		goto out;
	}
	if (e)
	{
		free(e->doc);
		e->doc = doc;
		fan_local(p, k, NULL, "update", a, c, doc);
	}
	else if ((e = calloc(1, sizeof(Entry))))
	{
		snprintf(e->gid, sizeof(e->gid), "%s", g);
		e->conn = conn;
		e->partition = strdup(p);
		e->key = strdup(k);
		e->actor = strdup(a);
		e->client = strdup(c);
		e->doc = doc;
		e->next = entries;
		entries = e;
		fan_local(p, k, NULL, "join", a, c, doc);
	}
	else
		free(doc);
out:
	json_decref(o);
}

/* once the listen connection is up: ask the other gateways for their peers */
static void
presence_request_sync(void)
{
	char buf[80];

	snprintf(buf, sizeof(buf), "{\"g\":\"%s\",\"kind\":\"sync-request\"}", gid);
	gw_pool_notify("syncular_presence", buf);
}

void
presence_init(void)
{
	uint8_t r[8];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 7, sizeof(r));
	for (int i = 0; i < 8; i++)
		snprintf(gid + 2 * i, 3, "%02x", r[i]);
	gw_pool_set_listen_up(presence_request_sync);
}
