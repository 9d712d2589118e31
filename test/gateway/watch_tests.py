"""Live query watches through the gateway (REMOTE.md revision 1 §6) on
<mount>/operations/realtime: the registration snapshot, a rerun on a matching commit and none on a
commit of another scope value, table or partition, one database call per partition and wake-up,
coalescing of commits during a run, unwatch, duplicate watchId, closing the socket.  Uses
Debian's python3-websockets."""
import asyncio, json, os, re, signal, time

import websockets

from gwlib import Gateway, expect_error, psql
from operations_tests import dec, enc, register
from realtime_tests import closed_with

PART = "pwatch"             # a partition of its own: other suites fill p1's lists
KEY = "u1@" + PART


def url(g, key=KEY):
    return "ws://127.0.0.1:%d/sync-api/operations/realtime?apiKey=%s" % (g.port, key)


def connect(g):
    return websockets.connect(url(g), max_size=None)


def watch(wid, op_id, params, client="wc1"):
    return json.dumps(enc({"revision": 1, "kind": "watch", "watchId": wid, "clientId": client,
                           "operationId": op_id, "params": params}))


def unwatch(wid):
    return json.dumps(enc({"revision": 1, "kind": "unwatch", "watchId": wid}))


async def msg(ws, timeout=5.0):
    m = await asyncio.wait_for(ws.recv(), timeout)
    return dec(json.loads(m))


async def silent(ws, timeout=0.8):
    try:
        m = await asyncio.wait_for(ws.recv(), timeout)
    except asyncio.TimeoutError:
        return
    raise AssertionError("unexpected message %r" % dec(json.loads(m)))


def commit(part, cid, row, list_, title="t"):
    """One ordinary commit (syncular.push) of a tasks row; its commitSeq."""
    r = psql("""SELECT syncular.push('%s', 'u1', 'wwriter', '[{"clientCommitId": "%s", "operations": [
                  {"table": "tasks", "op": "upsert", "row": {"id": "%s", "list_id": "%s", "title": "%s"}}]}]')
                  -> 0 ->> 'commitSeq'""" % (part, cid, row, list_, title))
    return int(r)


def metric(g, name):
    _, _, body = g.request("GET", "/sync-api/metrics")
    m = re.search(r"^%s (\d+)" % name, body.decode(), re.M)
    return int(m.group(1))


def run_async(coro):
    return asyncio.run(coro)


def t_watch_snapshots_and_scope_filter():
    register()
    g = Gateway()
    try:
        async def go():
            async with connect(g) as ws:
                await ws.send(watch("a", "tasksInList", {"listId": "l1"}))
                a = await msg(ws)
                assert a["kind"] == "snapshot" and a["watchId"] == "a" and a["operationId"] == "tasksInList", a
                assert a["maxCommitSeq"] == int(psql("SELECT coalesce((SELECT max_commit_seq FROM syncular.partitions WHERE partition = '%s'), 0)" % PART)), a
                await ws.send(watch("b", "tasksInList", {"listId": "l2"}))
                b = await msg(ws)
                assert b["kind"] == "snapshot" and b["watchId"] == "b", b
                calls = metric(g, "syncular_gateway_operation_watch_calls_total")
                assert metric(g, "syncular_gateway_operation_watches") == 2
                # a commit on l1 reruns watch a only (b's covered value l1 is untouched)
                seq = commit(PART, "w-c1", "w-t1", "l1", "watched")
                a = await msg(ws)
                assert a["watchId"] == "a" and a["maxCommitSeq"] == seq, a
                assert {"id": "w-t1", "title": "watched"} in a["rows"], a
                await silent(ws)
                # ... in one database call for both watches of the partition
                assert metric(g, "syncular_gateway_operation_watch_calls_total") == calls + 1
                # a commit on l2 reruns b only
                seq = commit(PART, "w-c2", "w-t2", "l2")
                b = await msg(ws)
                assert b["watchId"] == "b" and b["maxCommitSeq"] == seq and {"id": "w-t2", "title": "t"} in b["rows"], b
                await silent(ws)
                # another partition's commit reruns nothing
                commit("p2", "w-c3", "w-t3", "l1")
                await silent(ws)
                # a duplicate active watchId is operation.invalid_request; the watch stays
                await ws.send(watch("a", "tasksInList", {"listId": "l2"}))
                e = await msg(ws)
                assert e["kind"] == "watch_error" and e["watchId"] == "a" and e["code"] == "operation.invalid_request", e
                # unwatch: no more snapshots for a; the id is free again
                await ws.send(unwatch("a"))
                commit(PART, "w-c4", "w-t4", "l1")
                await silent(ws)
                await ws.send(watch("a", "tasksInList", {"listId": "l1"}))
                a = await msg(ws)
                assert a["kind"] == "snapshot" and any(r["id"] == "w-t4" for r in a["rows"]), a
                # failures of the registration are watch_error, and the watch is not kept
                await ws.send(watch("x", "nope", {}))
                e = await msg(ws)
                assert e["kind"] == "watch_error" and e["watchId"] == "x" and e["code"] == "operation.unknown", e
                await ws.send(watch("y", "tasksInList", {"listId": "l9"}))
                e = await msg(ws)
                assert e["code"] == "operation.forbidden", e
                assert metric(g, "syncular_gateway_operation_watches") == 2
                # a message without a readable watchId closes the socket 1007
                await ws.send('{"t":"string","v":"hello"}')
                try:
                    await asyncio.wait_for(ws.recv(), 5)
                    raise AssertionError("socket stayed open")
                except websockets.ConnectionClosed as ex:
                    assert ex.code == 1007 and ex.reason == "operation.invalid_request", (ex.code, ex.reason)
        run_async(go())
        # closing the socket removed every watch
        end = time.time() + 5
        while metric(g, "syncular_gateway_operation_watches") != 0 and time.time() < end:
            time.sleep(0.05)
        assert metric(g, "syncular_gateway_operation_watches") == 0
        calls = metric(g, "syncular_gateway_operation_watch_calls_total")
        commit(PART, "w-c5", "w-t5", "l1")
        time.sleep(0.5)
        assert metric(g, "syncular_gateway_operation_watch_calls_total") == calls
    finally:
        g.stop()


def register_slow():
    """slowTasks: tasksInList whose every run takes 0.4 s (an initplan that sleeps)."""
    register()
    psql("""CREATE OR REPLACE FUNCTION gwtest.slow() RETURNS boolean LANGUAGE sql AS $$ SELECT true FROM pg_sleep(0.4) $$;
            SELECT syncular.register_query('slowTasks',
              'SELECT id, title FROM tasks WHERE list_id = $1 AND (SELECT gwtest.slow()) ORDER BY id',
              '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}]', ARRAY['tasks'],
              params => '[{"name": "listId", "type": "string"}]',
              coverage => '[{"table": "tasks", "variable": "list_id", "param": "listId"}]', max_rows => 1000)""")


def t_watch_coalescing():
    register_slow()
    g = Gateway()
    try:
        async def go():
            async with connect(g) as ws:
                await ws.send(watch("s", "slowTasks", {"listId": "l1"}))
                first = await msg(ws)
                assert first["kind"] == "snapshot", first
                # six commits 0.1 s apart (one psql session: the timing is the server's) while
                # reruns take 0.4 s each: at most one rerun pending at a time
                psql(";".join("""SELECT syncular.push('%s', 'u1', 'wwriter', '[{"clientCommitId": "co-%d", "operations": [
                  {"table": "tasks", "op": "upsert", "row": {"id": "co-t%d", "list_id": "l1", "title": "c"}}]}]');
                  SELECT pg_sleep(0.1)""" % (PART, i, i) for i in range(6)))
                heads = [int(psql("SELECT max_commit_seq FROM syncular.partitions WHERE partition = '%s'" % PART))]
                snaps = []
                try:
                    while True:
                        snaps.append(await msg(ws, timeout=1.5))
                except asyncio.TimeoutError:
                    pass
                assert 1 <= len(snaps) < 6, [s["maxCommitSeq"] for s in snaps]
                last = snaps[-1]
                assert last["maxCommitSeq"] == heads[-1], (last["maxCommitSeq"], heads)
                assert all(any(r["id"] == "co-t%d" % i for r in last["rows"]) for i in range(6)), last
        run_async(go())
    finally:
        g.stop()


def t_watch_unwatch_suppresses_running():
    register_slow()
    g = Gateway()
    try:
        async def go():
            async with connect(g) as ws:
                # the slow registration snapshot is still running when the unwatch arrives
                await ws.send(watch("u", "slowTasks", {"listId": "l1"}))
                await asyncio.sleep(0.1)
                await ws.send(unwatch("u"))
                await silent(ws, 1.2)
                await ws.send(watch("v", "tasksInList", {"listId": "l1"}))
                v = await msg(ws)
                assert v["watchId"] == "v", v
        run_async(go())
    finally:
        g.stop()


def t_watch_transport():
    """The watch route on the gateway's WebSocket layer (http.c upgrade, ws.c, wswatch.c): a
    plain GET is 400; a failed host authentication closes 4401; watches sent at once, while the
    SQL authenticator still runs, are kept and all answered; the socket counts as a realtime
    socket; SIGTERM closes it 1001 and the gateway exits 0."""
    register()
    g = Gateway()
    try:
        st, _, data = g.request("GET", "/sync-api/operations/realtime")
        expect_error(st, data, 400, "sync.invalid_request")

        async def go():
            async with websockets.connect(url(g, "nobody")) as ws:
                try:
                    await ws.send(watch("n", "tasksInList", {"listId": "l1"}))
                except websockets.ConnectionClosed:
                    pass    # the 4401 may come first: the authenticator answered before the send
                assert await closed_with(ws, 4401) == "sync.auth_required"
            async with connect(g) as ws:
                for w in ("e1", "e2", "e3"):
                    await ws.send(watch(w, "tasksInList", {"listId": "l1"}))
                got = [await msg(ws) for _ in range(3)]
                assert sorted(m["watchId"] for m in got) == ["e1", "e2", "e3"], got
                assert all(m["kind"] == "snapshot" for m in got), got
                assert metric(g, "syncular_gateway_sockets") == 1
                assert metric(g, "syncular_gateway_operation_watches") == 3
                os.kill(g.proc.pid, signal.SIGTERM)
                await closed_with(ws, 1001)
        run_async(go())
        assert g.proc.wait(10) == 0
    finally:
        g.stop()


TESTS = [t_watch_snapshots_and_scope_filter, t_watch_coalescing, t_watch_unwatch_suppresses_running,
         t_watch_transport]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
