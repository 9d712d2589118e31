"""Realtime acks (SPEC §8.2; docs/gateway.md "--ack-flush-ms"): coalesced per socket and written
in one background statement (one syncular.realtime_ack_many call per partition), flushed on close and on SIGTERM, never in front of a fanout call;
and the gzip thresholds of /sync answers (--gzip-min, --gzip-level)."""
import asyncio, gzip, json, os, signal, subprocess, time, urllib.parse

import websockets

from gwlib import Gateway, frames, psql, req_bytes
from realtime_tests import KEY, arun, delta_with, hello, next_msg, no_msg, pull_http, push_http, url


def metric(g, name):
    return g.metric(name)


def stored_cursor(client):
    return int(psql("SELECT cursor FROM syncular.sync_clients WHERE partition = 'p1' AND client_id = '%s'"
                    % client))


def wait_cursor(client, want, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end and stored_cursor(client) != want:
        time.sleep(0.05)
    return stored_cursor(client)


def t_ack_coalesced():
    """Many acks on one socket, in any order: the stored cursor is the highest, written by far
    fewer statements than acks (the gateway's counters)."""
    g = Gateway(env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "300"})
    try:
        pull_http(g, "akW")
        pull_http(g, "akC")

        async def go():
            async with websockets.connect(url(g, "akC")) as ws:
                await hello(ws)
                seqs = [push_http(g, "akW", "ak%d" % i, "ar%d" % i, "t%d" % i) for i in range(3)]
                await delta_with(ws, seqs[-1])
                # the highest first, then lower ones: the record keeps the maximum
                acks = [seqs[-1]] + [seqs[i % 2] for i in range(199)]
                for c in acks:
                    await ws.send(json.dumps({"type": "ack", "cursor": c}))
                assert wait_cursor("akC", seqs[-1]) == seqs[-1]
                time.sleep(0.5)        # every ack of the burst was received and written
                received = metric(g, "syncular_gateway_acks_received_total")
                writes = metric(g, "syncular_gateway_ack_writes_total")
                assert received == len(acks), received
                assert 1 <= writes <= 5, writes
                assert stored_cursor("akC") == seqs[-1]
        arun(go())
    finally:
        g.stop()


def t_ack_flushed_on_close():
    """An ack followed at once by a close is written at the close, not --ack-flush-ms later."""
    g = Gateway("--ack-flush-ms", "10000")
    try:
        pull_http(g, "akW2")
        pull_http(g, "akClose")

        async def go():
            async with websockets.connect(url(g, "akClose")) as ws:
                await hello(ws)
                seq = push_http(g, "akW2", "akc1", "arc1", "close")
                await delta_with(ws, seq)
                await ws.send(json.dumps({"type": "ack", "cursor": seq}))
            return seq
        seq = arun(go())
        assert wait_cursor("akClose", seq, timeout=3.0) == seq
    finally:
        g.stop()


def t_ack_flushed_on_sigterm():
    """SIGTERM's drain writes the pending acks before the process exits."""
    g = Gateway("--ack-flush-ms", "10000")
    pull_http(g, "akW3")
    pull_http(g, "akTerm")

    async def go():
        async with websockets.connect(url(g, "akTerm")) as ws:
            await hello(ws)
            seq = push_http(g, "akW3", "akt1", "art1", "term")
            await delta_with(ws, seq)
            await ws.send(json.dumps({"type": "ack", "cursor": seq}))
            await asyncio.sleep(0.3)           # received (and pending for 10 s)
            assert stored_cursor("akTerm") != seq
            os.kill(g.proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(ws.recv(), 5)
            except (websockets.ConnectionClosed, asyncio.TimeoutError):
                pass
        return seq
    seq = arun(go())
    assert g.proc.wait(15) == 0
    assert stored_cursor("akTerm") == seq


def t_ack_never_delays_delta():
    """Acks whose write is stuck (the client record locked by another session) hold at most one
    connection: with --pool 2 the fanout still runs and another socket gets its delta at once."""
    # the variable, not the flag: a gateway without --ack-flush-ms starts too, and fails here
    g = Gateway("--pool", "2", env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "1"})
    locker = None
    try:
        pull_http(g, "akW4")        # the partition's log epoch
        seq0 = push_http(g, "akW4", "akn0", "arn0", "first")
        pull_http(g, "akStuck")     # registered at the head: deltas, not catch-up wake-ups
        pull_http(g, "akRecv")

        async def go():
            nonlocal locker
            async with websockets.connect(url(g, "akStuck")) as a, websockets.connect(url(g, "akRecv")) as b:
                await hello(a)
                await hello(b)
                env = dict(os.environ, PGDATABASE="gwtest")
                locker = subprocess.Popen(
                    ["psql", "-XAtq", "-c", "BEGIN", "-c",
                     "SELECT 1 FROM syncular.sync_clients WHERE partition = 'p1' AND client_id = 'akStuck' FOR UPDATE",
                     "-c", "SELECT pg_sleep(6)", "-c", "COMMIT"], env=env, stdout=subprocess.DEVNULL)
                for _ in range(100):
                    if psql("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(6)'") == "1":
                        break
                    time.sleep(0.05)
                # acks spread over time: each becomes its own write attempt where acks are not coalesced
                for _ in range(6):
                    await a.send(json.dumps({"type": "ack", "cursor": seq0}))
                    await asyncio.sleep(0.1)
                # a commit from another session (not through the pool): the fanout needs a connection
                psql("SELECT length(syncular.handle(gwtest.push('p1', 'akW4', 'akn1', 'arn1', 'second'), 'p1', 'u1'))")
                seq = int(psql("SELECT max(commit_seq) FROM syncular.sync_commits WHERE partition = 'p1'"))
                t0 = time.time()
                await delta_with(b, seq, timeout=2.0)
                assert time.time() - t0 < 2.0
        arun(go())
        locker.wait(15)
        assert wait_cursor("akStuck", seq0) == seq0     # written once the lock is gone
    finally:
        if locker and locker.poll() is None:
            locker.kill()
        g.stop()


def function_calls(name):
    """calls of syncular.<name> in pg_stat_user_functions (every overload), from a new session"""
    return int(psql("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
                    "WHERE schemaname = 'syncular' AND funcname = '%s'" % name))


def calls_since(name, before, want):
    """calls of syncular.<name> since `before`, once they reach `want` (the backends report function
    statistics within a second of going idle) or after 10 s"""
    end = time.time() + 10
    while time.time() < end and function_calls(name) - before < want:
        time.sleep(0.2)
    return function_calls(name) - before


def with_sockets(g, clients, body):
    """One socket per client (hello read), `await body(sockets)`, the sockets closed; every client's
    stored cursor must then reach the commitSeq body returned (its acks all written)."""
    async def go():
        socks = [await websockets.connect(url(g, urllib.parse.quote(c, safe=""))) for c in clients]
        try:
            for ws in socks:
                await hello(ws)
            return await body(socks)
        finally:
            for ws in socks:
                await ws.close()
    seq = arun(go())
    for c in clients:
        assert wait_cursor(c, seq) == seq, c
    return seq


def ack_commit(g, writer, commit, row, title):
    """with_sockets' body: one commit pushed by `writer`, its delta awaited, then acked, on every
    socket"""
    async def body(socks):
        seq = push_http(g, writer, commit, row, title)
        for ws in socks:
            await delta_with(ws, seq)
        for ws in socks:
            await ws.send(json.dumps({"type": "ack", "cursor": seq}))
        return seq
    return body


def t_ack_one_call_per_flush():
    """Eight sockets, each its own client, ack one commit: every record gets its cursor, and the
    database sees one syncular.realtime_ack_many call per ack write (one partition) and no
    per-socket syncular.realtime_ack call (pg_stat_user_functions, track_functions = all)."""
    clients = ["akMany%d" % i for i in range(8)]
    psql("ALTER DATABASE gwtest SET track_functions = 'all'")
    g = Gateway(env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "300"})
    try:
        pull_http(g, "akW5")
        for c in clients:
            pull_http(g, c)
        single0, many0 = function_calls("realtime_ack"), function_calls("realtime_ack_many")
        writes0 = metric(g, "syncular_gateway_ack_writes_total")
        with_sockets(g, clients, ack_commit(g, "akW5", "akm1", "arm1", "many"))
        writes = metric(g, "syncular_gateway_ack_writes_total") - writes0
        assert 1 <= writes < len(clients), writes
        many = calls_since("realtime_ack_many", many0, writes)
        assert many == writes, (many, writes)
        assert function_calls("realtime_ack") == single0, (function_calls("realtime_ack"), single0)
    finally:
        g.stop()
        psql("ALTER DATABASE gwtest RESET track_functions")


def t_ack_client_bytes():
    """Acks of clients whose ids hold the bytes an array literal gives meaning to (quote,
    backslash, comma, braces, blank, NULL spelled out) and non-ASCII, written in one flush with a
    plain one: each record gets its own cursor (the ids travel as binary array elements)."""
    clients = ['akQ"u\\o,te{x}', "NULL", "ak blank \u00e9", "akPlain"]
    g = Gateway(env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "300"})
    try:
        pull_http(g, "akW6")
        for c in clients:
            pull_http(g, c)
        with_sockets(g, clients, ack_commit(g, "akW6", "akb1", "arb1", "bytes"))
    finally:
        g.stop()


def t_gzip_thresholds():
    """A small /sync answer goes uncompressed even to a client accepting gzip; a large one is
    gzip (at --gzip-level) and decodes to the same bytes an identity answer carries."""
    g = Gateway()
    try:
        gz = {"x-api-key": KEY, "Accept-Encoding": "gzip"}
        pull_http(g, "c-gzw")          # the partition's log epoch
        # a push's answer (a PUSH_RESULT) is small whatever the partition holds
        raw = req_bytes("gwtest.push('p1', 'c-gzw', 'gzs', 'gzs', 'small')")
        st, hd, body = g.request("POST", "/sync-api/sync", raw, dict(gz, **{"Content-Type": CT}))
        assert st == 200 and "content-encoding" not in hd and len(body) < 1024, (hd, len(body))
        assert frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        # identity refused (RFC 9110 §12.5.3): gzip whatever the size
        raw = req_bytes("gwtest.push('p1', 'c-gzw', 'gzs2', 'gzs2', 'small')")
        st, hd, body = g.request("POST", "/sync-api/sync", raw, dict(gz, **{"Content-Type": CT,
                                                                             "Accept-Encoding": "gzip, identity;q=0"}))
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        assert frames(gzip.decompress(body), "PUSH_RESULT")[0]["status"] == "applied"
        for i in range(4):
            st, _, body = g.sync(req_bytes("gwtest.push('p1', 'c-gzw', 'gz%d', 'gzr%d', repeat('y', 3000))"
                                           % (i, i)), {"x-api-key": KEY})
            assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        big = req_bytes("gwtest.pull('p1', 'c-gzbig')")
        st, hd, zbody = g.request("POST", "/sync-api/sync", big, dict(gz, **{"Content-Type": CT}))
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        st, hd2, plain = g.request("POST", "/sync-api/sync", big, {"x-api-key": KEY, "Content-Type": CT})
        assert "content-encoding" not in hd2 and len(plain) > 12000, (hd2, len(plain))
        assert len(zbody) < len(plain) // 4, (len(zbody), len(plain))
        inflated = gzip.decompress(zbody)
        assert [f["type"] for f in frames(inflated)] == [f["type"] for f in frames(plain)]
    finally:
        g.stop()


def t_fanout_batches():
    """--fanout-batch 2 with five sockets, each its own client: each commit is fanned out by three
    syncular.realtime_fanout_arrays calls (pg_stat_user_functions), and every socket still receives
    exactly one delta per commit, in commit order, and its acks are all written.  Each call
    prefers one pool connection, the same every commit, and a socket stays in its call, so each
    backend parses a registration once (src/fanout_regs.c): with the pool otherwise idle (the acks
    written before the next commit) all nine calls run on their preferred connections
    (syncular_gateway_pool_preferred_jobs_total)."""
    clients = ["fbSock%d" % i for i in range(5)]
    placed = 'syncular_gateway_pool_preferred_jobs_total{placed="%s"}'
    psql("ALTER DATABASE gwtest SET track_functions = 'all'")
    g = Gateway("--fanout-batch", "2", env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "1"})
    try:
        pull_http(g, "fbW")
        for c in clients:
            pull_http(g, c)

        async def body(socks):
            await asyncio.sleep(0.3)
            calls0 = function_calls("realtime_fanout_arrays")
            before = [metric(g, placed % p) for p in ("preferred", "other")]
            seqs = []
            for k in range(3):
                seqs.append(push_http(g, "fbW", "fb%d" % k, "fbr%d" % k, "batch %d" % k))
                for ws in socks:
                    m = await next_msg(ws, "binary")
                    got = [f["commitSeq"] for f in frames(m[1:], "COMMIT")]
                    assert got == [seqs[-1]], (got, seqs)
                    await ws.send(json.dumps({"type": "ack", "cursor": seqs[-1]}))
                await asyncio.sleep(0.3)    # the acks written: the pool idle again
            for ws in socks:
                await no_msg(ws, "binary", 0.5)
            calls = calls_since("realtime_fanout_arrays", calls0, 9)
            assert calls == 9, calls
            after = [metric(g, placed % p) for p in ("preferred", "other")]
            assert [x - y for x, y in zip(after, before)] == [9, 0], (before, after)
            return seqs[-1]
        with_sockets(g, clients, body)
    finally:
        g.stop()
        psql("ALTER DATABASE gwtest RESET track_functions")


def t_ack_waits_for_fanout():
    """One socket per fanout call: socket F (actor u1) gets its delta while the call for socket S
    (actor slow: its scope resolver sleeps 2 s) still runs.  F's ack is written only after that
    call answered, not while it runs (the deltas of a commit come before its acks' write; a write
    waits at most a second for fanout calls)."""
    g = Gateway("--fanout-batch", "1", env={"SYNCULAR_GATEWAY_ACK_FLUSH_MS": "1"})
    try:
        pull_http(g, "awW")
        pull_http(g, "awFast")
        pull_http(g, "awSlow", key="slow@p1")

        async def go():
            async with websockets.connect(url(g, "awSlow", key="slow@p1")) as s, \
                    websockets.connect(url(g, "awFast")) as f:
                await hello(s)
                await hello(f)
                seq = push_http(g, "awW", "aw1", "awr1", "wait")
                await delta_with(f, seq, timeout=1.5)   # before S's resolver wakes up
                await f.send(json.dumps({"type": "ack", "cursor": seq}))
                await asyncio.sleep(0.4)                 # received; S's call still runs (2 s)
                assert stored_cursor("awFast") != seq    # so not written yet (and not for 1 s)
                await delta_with(s, seq, timeout=10)
                assert wait_cursor("awFast", seq) == seq
        arun(go())
    finally:
        g.stop()


CT = "application/vnd.syncular.sync.v2"
TESTS = [t_ack_coalesced, t_ack_one_call_per_flush, t_ack_flushed_on_close, t_ack_flushed_on_sigterm,
         t_ack_never_delays_delta, t_fanout_batches, t_ack_waits_for_fanout, t_ack_client_bytes,
         t_gzip_thresholds]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
