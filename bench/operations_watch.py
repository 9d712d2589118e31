#!/usr/bin/python3
"""Live query watch bench (REMOTE.md §6): commit-to-snapshot latency with 1,000 watches on one
partition, of which 10 match each commit, through syncular-gateway on the cluster of
PGHOST/PGPORT.  10 sockets hold 100 watches each (tasksInList, a scoped query); one watch per
socket is on list "hot", the other 990 on 99 other lists.  Each of `commits` commits upserts a
row of "hot"; the latency of a watch is the arrival of its snapshot minus the server clock read
in the committing statement (the commit itself is included).  Prints p50/p99 per watch and of
the last of the 10, the rerun calls per commit (gateway metrics) and the snapshots the 990 other
watches received (0: the scope filter reruns nothing else).  Never fails on a time.  Run:
bash scripts/pgenv.sh -- /usr/bin/python3 bench/operations_watch.py [commits]."""
import asyncio, base64, hashlib, hmac, http.client, json, os, re, subprocess, sys, time
from gwbench import start_gateway

import websockets

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COMMITS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
DB, SOCKETS, PER_SOCKET = "bench_watch", 10, 100


def psql(q):
    r = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c", q], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout.strip()


def enc(v):
    if isinstance(v, str):
        return {"t": "string", "v": v}
    if isinstance(v, int):
        return {"t": "integer", "v": str(v)}
    return {"t": "object", "v": [[k, enc(x)] for k, x in v.items()]}


def dec(e):
    if e["t"] == "array":
        return [dec(x) for x in e["v"]]
    if e["t"] == "object":
        return {k: dec(x) for k, x in e["v"]}
    return e.get("v")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] if xs else float("nan")


subprocess.run(["dropdb", "--if-exists", DB], check=True)
subprocess.run(["createdb", DB], check=True)
subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
psql("""CREATE OR REPLACE FUNCTION gwtest.resolve(actor text, part text, client text) RETURNS jsonb
          LANGUAGE sql AS $$ SELECT '{"list_id": "*"}'::jsonb $$;
        SELECT syncular.push('p1', 'u1', 'seed', jsonb_build_array(jsonb_build_object('clientCommitId', 'c' || b,
          'operations', (SELECT jsonb_agg(jsonb_build_object('table', 'tasks', 'op', 'upsert', 'row',
             jsonb_build_object('id', 't' || g, 'list_id', CASE WHEN g <= 10 THEN 'hot' ELSE 'l' || (g % 99) END,
                                'title', 'task ' || g))) FROM generate_series(b * 250 + 1, b * 250 + 250) g))))
          FROM generate_series(0, 3) b;
        SELECT syncular.register_query('tasksInList', 'SELECT id, title FROM tasks WHERE list_id = $1 ORDER BY id',
          '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}]', ARRAY['tasks'],
          params => '[{"name": "listId", "type": "string"}]',
          coverage => '[{"table": "tasks", "variable": "list_id", "param": "listId"}]', max_rows => 100);
        ANALYZE""")

gw, port = start_gateway(os.path.join(root, "gateway/syncular-gateway"), DB,
                         ["--pool", "2", "--jwt-secret", "bench", "--partition", "p1"])


def metric(name):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/sync-api/metrics")
    return int(re.search(r"^%s (\d+)" % name, c.getresponse().read().decode(), re.M).group(1))


async def main():
    b64 = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()  # noqa: E731
    head, claims = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(b'{"sub":"u1"}')
    token = "%s.%s.%s" % (head, claims, b64(hmac.new(b"bench", ("%s.%s" % (head, claims)).encode(), hashlib.sha256).digest()))
    url = "ws://127.0.0.1:%d/sync-api/operations/realtime" % port
    socks = [await websockets.connect(url, extra_headers={"Authorization": "Bearer " + token}, max_size=None)
             for _ in range(SOCKETS)]
    arrivals = {}          # (watchId, maxCommitSeq) -> arrival time
    others = [0]

    async def reader(ws):
        async for m in ws:
            d = dec(json.loads(m))
            if d.get("kind") != "snapshot":
                raise RuntimeError("unexpected %r" % d)
            arrivals[(d["watchId"], d["maxCommitSeq"])] = time.time()
            if not d["watchId"].startswith("hot"):
                others[0] += 1

    readers = [asyncio.ensure_future(reader(ws)) for ws in socks]
    for i, ws in enumerate(socks):
        for k in range(PER_SOCKET):
            wid, lst = ("hot%d" % i, "hot") if k == 0 else ("w%d-%d" % (i, k), "l%d" % ((i * PER_SOCKET + k) % 99))
            await ws.send(json.dumps(enc({"revision": 1, "kind": "watch", "watchId": wid, "clientId": "bench%d" % i,
                                          "operationId": "tasksInList", "params": {"listId": lst}})))
    while len(arrivals) < SOCKETS * PER_SOCKET:
        await asyncio.sleep(0.05)
    others[0] = 0
    calls0 = metric("syncular_gateway_operation_watch_calls_total")
    per_watch, last_of_10 = [], []
    for n in range(COMMITS):
        out = await asyncio.to_thread(psql, """SELECT syncular.push('p1', 'u1', 'writer', '[{"clientCommitId": "b%d",
            "operations": [{"table": "tasks", "op": "upsert", "row": {"id": "t%d", "list_id": "hot", "title": "v%d"}}]}]')
            -> 0 ->> 'commitSeq', (extract(epoch FROM clock_timestamp()) * 1000)::bigint""" % (n, 1 + n % 10, n))
        seq, t0 = int(out.split("|")[0]), int(out.split("|")[1]) / 1000.0
        end = time.time() + 10
        while time.time() < end and not all(("hot%d" % i, seq) in arrivals for i in range(SOCKETS)):
            await asyncio.sleep(0.002)
        got = [arrivals[("hot%d" % i, seq)] - t0 for i in range(SOCKETS) if ("hot%d" % i, seq) in arrivals]
        per_watch += got
        if len(got) == SOCKETS:
            last_of_10.append(max(got))
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    calls = metric("syncular_gateway_operation_watch_calls_total") - calls0
    for r in readers:
        r.cancel()
    for ws in socks:
        await ws.close()
    ms = lambda x: x * 1000  # noqa: E731
    print("watches: %d on one partition (%d sockets), %d match each commit; %d commits" %
          (SOCKETS * PER_SOCKET, SOCKETS, SOCKETS, COMMITS))
    print("commit-to-snapshot latency per matching watch: p50 %.1f ms, p99 %.1f ms (%d samples)" %
          (ms(pct(per_watch, 50)), ms(pct(per_watch, 99)), len(per_watch)))
    print("commit to the last of the 10 snapshots: p50 %.1f ms, p99 %.1f ms" % (ms(pct(last_of_10, 50)), ms(pct(last_of_10, 99))))
    print("operations_watch_rerun calls per commit: %.2f; snapshots to the %d other watches: %d" %
          (calls / float(COMMITS), SOCKETS * PER_SOCKET - SOCKETS, others[0]))


try:
    asyncio.run(main())
finally:
    gw.terminate()
    gw.wait()
