"""Remote operations through the gateway (REMOTE.md revision 1 §5): POST <mount>/operations with
host authentication as /sync (JWT and the SQL authenticator), 405 / 415 / 413 / 401 decided by
the gateway, encoded success and kind "error" bodies from syncular.operations_http, commands
applied once and replayed as cached, commits visible to /sync clients."""
import base64, json, os, time

from gwlib import Gateway, expect_error, jwt_hs256, psql

OPS_CT = "application/vnd.syncular.operations.v1+json"
SECRET = "ops-secret-456"
KEY = {"x-api-key": "u1@p1"}


def enc(v):
    """A Python value in the tagged encoding of REMOTE.md §4."""
    if v is None:
        return {"t": "null"}
    if isinstance(v, bool):
        return {"t": "boolean", "v": v}
    if isinstance(v, int):
        return {"t": "integer", "v": str(v)}
    if isinstance(v, float):
        return {"t": "number", "v": v}
    if isinstance(v, str):
        return {"t": "string", "v": v}
    if isinstance(v, bytes):
        return {"t": "bytes", "v": base64.b64encode(v).decode()}
    if isinstance(v, list):
        return {"t": "array", "v": [enc(x) for x in v]}
    return {"t": "object", "v": [[k, enc(x)] for k, x in v.items()]}


def dec(e):
    t = e["t"]
    if t == "null":
        return None
    if t == "integer":
        return int(e["v"])
    if t == "bytes":
        return base64.b64decode(e["v"])
    if t == "array":
        return [dec(x) for x in e["v"]]
    if t == "object":
        return {k: dec(x) for k, x in e["v"]}
    return e["v"]


def op(g, req, headers=None, ctype=OPS_CT):
    h = {"Content-Type": ctype}
    h.update(headers or {})
    st, hd, body = g.request("POST", "/sync-api/operations", json.dumps(enc(req)).encode(), h)
    return st, hd, body


def ok(g, req, headers=None):
    st, hd, body = op(g, req, headers)
    assert st == 200 and hd["content-type"] == OPS_CT, (st, hd, body[:300])
    return dec(json.loads(body))


def query(op_id, params, client="oc1"):
    return {"revision": 1, "kind": "query", "clientId": client, "operationId": op_id, "params": params}


def command(op_id, request_id, params, client="ow1"):
    return {"revision": 1, "kind": "command", "clientId": client, "operationId": op_id,
            "requestId": request_id, "params": params}


def register():
    psql("""
      SELECT syncular.register_query('tasksInList', 'SELECT id, title FROM tasks WHERE list_id = $1 ORDER BY id',
        '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}]', ARRAY['tasks'],
        params => '[{"name": "listId", "type": "string"}]',
        coverage => '[{"table": "tasks", "variable": "list_id", "param": "listId"}]', max_rows => 100);
      CREATE OR REPLACE FUNCTION gwtest.allow(actor text, part text, params jsonb) RETURNS boolean
        LANGUAGE sql AS $$ SELECT actor <> 'denied' $$;
      CREATE OR REPLACE FUNCTION gwtest.add_task(actor text, part text, params jsonb) RETURNS jsonb
        LANGUAGE sql AS $$ SELECT jsonb_build_array(jsonb_build_object('op', 'upsert', 'table', 'tasks',
          'row', jsonb_build_object('id', params ->> 'id', 'list_id', params ->> 'list', 'title', params ->> 'title'))) $$;
      SELECT syncular.register_command('addTask', 'gwtest.allow(text,text,jsonb)', 'gwtest.add_task(text,text,jsonb)');
    """)


def t_operations_sql_auth():
    register()
    g = Gateway()
    try:
        r = ok(g, command("addTask", "r1", {"id": "op-t1", "list": "l1", "title": "from an operation"}), KEY)
        assert r["kind"] == "command" and r["status"] == "applied" and r["commitSeq"] >= 1, r
        seq = r["commitSeq"]
        # the retry is cached with the same commitSeq; one commit under the REMOTE.md §3 identity
        r2 = ok(g, command("addTask", "r1", {"id": "op-t1", "list": "l1", "title": "from an operation"}), KEY)
        assert r2["status"] == "cached" and r2["commitSeq"] == seq, r2
        assert psql("""SELECT count(*) || ' ' || min(actor_id) FROM syncular.commits
                        WHERE client_id = '["remote-command","u1","ow1"]' AND client_commit_id = '["addTask","r1"]'""") == "1 u1"
        # the query reads it, with maxCommitSeq of the same snapshot
        r = ok(g, query("tasksInList", {"listId": "l1"}), KEY)
        assert r["kind"] == "query" and {"id": "op-t1", "title": "from an operation"} in r["rows"], r
        assert r["maxCommitSeq"] >= seq, r
        # the partition comes from authentication: p2 sees nothing of p1
        r = ok(g, query("tasksInList", {"listId": "l1"}), {"x-api-key": "u1@p2"})
        assert r["rows"] == [] and r["maxCommitSeq"] == 0, r
        # operation failures are encoded kind "error" answers with 200
        r = ok(g, query("nope", {}), KEY)
        assert r["kind"] == "error" and r["code"] == "operation.unknown" and r["retryable"] is False, r
        r = ok(g, query("tasksInList", {"listId": "l1"}), {"x-api-key": "l2only@p1"})
        assert r["code"] == "operation.forbidden", r
        r = ok(g, command("addTask", "r2", {"id": "x", "list": "l1", "title": "x"}), {"x-api-key": "denied@p1"})
        assert r["code"] == "operation.forbidden", r
        st, hd, body = g.request("POST", "/sync-api/operations", b'{"t":"integer","v":"01"}', dict(KEY, **{"Content-Type": OPS_CT}))
        r = dec(json.loads(body))
        assert st == 200 and r["code"] == "operation.invalid_request", (st, r)
        # host authentication failures are the catalogue JSON with 401
        for h in ({}, {"x-api-key": "deny@p1"}):
            st, _, body = op(g, query("tasksInList", {"listId": "l1"}), h)
            expect_error(st, body, 401, "sync.auth_required")
    finally:
        g.stop()


def t_operations_http_rules():
    g = Gateway("--max-body", "4096")
    try:
        st, _, body = op(g, query("tasksInList", {"listId": "l1"}), KEY, ctype="application/json")
        expect_error(st, body, 415, "sync.invalid_request")
        st, _, body = op(g, query("tasksInList", {"listId": "l1"}), KEY, ctype=OPS_CT + "; charset=utf-8")
        assert st == 200, body
        st, _, body = g.request("GET", "/sync-api/operations", headers=KEY)
        expect_error(st, body, 405, "sync.invalid_request")
        st, _, body = g.request("POST", "/sync-api/operations", b"x" * 5000,
                                dict(KEY, **{"Content-Type": OPS_CT}))
        expect_error(st, body, 413, "sync.invalid_request")
        st, _, body = g.request("POST", "/sync-api/operations/x", b"{}", dict(KEY, **{"Content-Type": OPS_CT}))
        expect_error(st, body, 404, "sync.not_found")
        # keep-alive: several operations on one connection
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", g.port, timeout=10)
        try:
            for i in range(3):
                c.request("POST", "/sync-api/operations", json.dumps(enc(query("tasksInList", {"listId": "l2"}))),
                          dict(KEY, **{"Content-Type": OPS_CT}))
                r = c.getresponse()
                assert r.status == 200 and dec(json.loads(r.read()))["kind"] == "query"
        finally:
            c.close()
    finally:
        g.stop()


def t_operations_jwt():
    register()
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--max-body", "65536")
    try:
        h = {"Authorization": "Bearer " + jwt_hs256({"sub": "u3", "exp": int(time.time()) + 60}, SECRET)}
        r = ok(g, command("addTask", "j1", {"id": "op-j1", "list": "l2", "title": "jwt"}), h)
        assert r["status"] == "applied", r
        assert psql("SELECT actor_id FROM syncular.commits WHERE client_id = '[\"remote-command\",\"u3\",\"ow1\"]'") == "u3"
        r = ok(g, query("tasksInList", {"listId": "l2"}), h)
        assert any(row["id"] == "op-j1" for row in r["rows"]), r
        st, _, body = op(g, query("tasksInList", {"listId": "l2"}), {"Authorization": "Bearer nope"})
        expect_error(st, body, 401, "sync.auth_required")
        st, _, body = g.request("POST", "/sync-api/operations", b"x" * 70000, dict(h, **{"Content-Type": OPS_CT}))
        expect_error(st, body, 413, "sync.invalid_request")
    finally:
        g.stop()


TESTS = [t_operations_sql_auth, t_operations_http_rules, t_operations_jwt]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
