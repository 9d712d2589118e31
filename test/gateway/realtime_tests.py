"""Realtime half of the gateway tests (SPEC §8): hello, deltas, acks, wake-ups, heartbeats,
socket rounds, presence, two gateways on one database, bad input, drain.  Uses Debian's
python3-websockets (asyncio client)."""
import asyncio, base64, json, os, re, signal, subprocess, time

import websockets

from gwlib import BIN, Gateway, conninfo, frames, jwt_hs256, psql, render, req_bytes, reqs_bytes

KEY = "u1@p1"


def pull_http(g, client, key=KEY, list_="l1"):
    """A pull that registers the client's subscription (a first round in a partition without a
    log epoch only acquires the epoch: then it pulls again)."""
    for _ in range(2):
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', '%s', -1, '%s')" % (client, list_)), {"x-api-key": key})
        assert st == 200, body
        if not frames(body, "RESP_HEADER")[0].get("resetRequired"):
            break
    return body


def push_http(g, client, commit, row, title, key=KEY, list_="l1"):
    st, _, body = g.sync(req_bytes("gwtest.push('p1', '%s', '%s', '%s', '%s', '%s')" % (client, commit, row, title, list_)),
                         {"x-api-key": key})
    assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
    return frames(body, "PUSH_RESULT")[0]["commitSeq"]


def url(g, client, key=KEY, extra=""):
    q = "clientId=%s" % client
    if key:
        q += "&apiKey=%s" % key
    return "ws://127.0.0.1:%d/sync-api/realtime?%s%s" % (g.port, q, extra)


async def next_msg(ws, want, timeout=5.0):
    """The next message matching want ('binary', an event name), skipping heartbeats."""
    end = time.time() + timeout
    while True:
        m = await asyncio.wait_for(ws.recv(), max(0.05, end - time.time()))
        if isinstance(m, bytes):
            if want == "binary":
                return m
            continue
        ev = json.loads(m)
        if ev.get("event") == want:
            return ev
        if want == "any-text":
            return ev


async def no_msg(ws, want, timeout=0.8):
    try:
        m = await next_msg(ws, want, timeout)
    except asyncio.TimeoutError:
        return
    raise AssertionError("unexpected %s: %r" % (want, m))


async def delta_with(ws, seq, timeout=5.0):
    """Deltas until one carries the COMMIT seq (earlier commits may come first)."""
    end = time.time() + timeout
    while True:
        m = await next_msg(ws, "binary", max(0.05, end - time.time()))
        if m[0] == 0 and any(f["commitSeq"] == seq for f in frames(m[1:], "COMMIT")):
            return m


async def hello(ws):
    ev = await next_msg(ws, "hello")
    d = ev["data"]
    for k in ("protocolVersion", "sessionId", "actorId", "clientId", "cursor", "latestCursor", "requiresSync",
              "timestamp"):
        assert k in d, d
    assert d["protocolVersion"] == 1
    return d


async def closed_with(ws, code, timeout=5.0):
    try:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    except websockets.ConnectionClosed as e:
        assert e.code == code, "close %s %r, want %s" % (e.code, e.reason, code)
        return e.reason


def arun(coro):
    return asyncio.run(coro)


def t_rt_hello_delta_ack():
    g = Gateway()
    try:
        pull_http(g, "rtA")         # the partition's log epoch exists before a push
        push_http(g, "rtA", "rk0", "r0", "before B pulls")
        pull_http(g, "rtB")

        async def go():
            async with websockets.connect(url(g, "rtB")) as ws:
                d = await hello(ws)
                assert d["clientId"] == "rtB" and d["actorId"] == "u1" and d["requiresSync"] is False, d
                seq = push_http(g, "rtA", "rk1", "r1", "hello realtime")
                m = await next_msg(ws, "binary")
                assert m[0] == 0x00, m[:4]
                fr = frames(m[1:])
                kinds = [f["type"] for f in fr]
                assert kinds == ["RESP_HEADER", "SUB_START", "COMMIT", "SUB_END"], kinds
                assert fr[2]["commitSeq"] == seq and fr[3]["nextCursor"] == seq, fr
                await ws.send(json.dumps({"type": "ack", "cursor": seq}))
                for _ in range(50):
                    if psql("SELECT cursor FROM syncular.sync_clients WHERE client_id = 'rtB'") == str(seq):
                        break
                    await asyncio.sleep(0.05)
                assert psql("SELECT cursor FROM syncular.sync_clients WHERE client_id = 'rtB'") == str(seq)
                # a commit outside B's subscriptions (list l2) sends nothing
                push_http(g, "rtA", "rk2", "r2", "other list", list_="l2")
                await no_msg(ws, "binary")
        arun(go())
    finally:
        g.stop()


def t_rt_never_pulled_requires_sync():
    g = Gateway()
    try:
        async def go():
            async with websockets.connect(url(g, "rtFresh")) as ws:
                d = await hello(ws)
                assert d["requiresSync"] is True and d["cursor"] == -1, d
        arun(go())
    finally:
        g.stop()


def t_rt_two_gateways():
    g1, g2 = Gateway(), Gateway()
    try:
        pull_http(g2, "rtTwo")

        async def go():
            async with websockets.connect(url(g2, "rtTwo")) as ws:
                await hello(ws)
                seq = push_http(g1, "rtA", "rk3", "r3", "via gateway one")
                m = await next_msg(ws, "binary")
                assert m[0] == 0 and frames(m[1:], "COMMIT")[0]["commitSeq"] == seq
        arun(go())
    finally:
        g1.stop()
        g2.stop()


def t_rt_flow_control_wakes():
    g = Gateway("--ws-max-unacked", "1")
    try:
        pull_http(g, "rtFlow")

        async def go():
            async with websockets.connect(url(g, "rtFlow")) as ws:
                await hello(ws)
                push_http(g, "rtA", "rk4", "r4", "one")
                assert (await next_msg(ws, "binary"))[0] == 0
                seq = push_http(g, "rtA", "rk5", "r5", "two")      # not acked: over the budget
                ev = await next_msg(ws, "sync")
                d = ev["data"]
                assert d["reason"] == "catchup-required" and d["requiresPull"] is True and d["cursor"] >= seq, d
                await ws.send(json.dumps({"type": "ack", "cursor": seq}))
                await asyncio.sleep(0.2)
                seq = push_http(g, "rtA", "rk6", "r6", "three")
                m = await next_msg(ws, "binary")
                assert frames(m[1:], "COMMIT")[-1]["commitSeq"] == seq
        arun(go())
    finally:
        g.stop()


def t_rt_heartbeat():
    g = Gateway("--heartbeat", "1", "--idle-timeout", "5")
    try:
        async def go():
            async with websockets.connect(url(g, "rtHb")) as ws:
                await hello(ws)
                ev = await next_msg(ws, "heartbeat", timeout=3)
                assert isinstance(ev["data"]["timestamp"], int)
                await asyncio.sleep(6)      # pings answered by the client keep it open
                await ws.send(json.dumps({"type": "ack", "cursor": -1}))
                await next_msg(ws, "heartbeat", timeout=3)
        arun(go())
        st, _, _ = g.request("GET", "/sync-api/readyz")
        assert st == 200 and "lost" not in g.logtext(), g.logtext()
    finally:
        g.stop()


async def socket_round(ws, body, chunks=3):
    step = max(1, len(body) // chunks)
    for i in range(0, len(body), step):
        await ws.send(b"\x01" + body[i:i + step])
    out = b""
    while True:
        m = await next_msg(ws, "binary")
        if m[0] != 1:
            continue
        out += m[1:]
        try:
            return render(out)
        except Exception:  # noqa: BLE001 - not complete yet
            if len(out) > 10_000_000:
                raise


def t_rt_socket_rounds():
    g = Gateway()
    try:
        async def go():
            async with websockets.connect(url(g, "rtSock")) as ws:
                d = await hello(ws)
                assert d["requiresSync"] is True
                r = await socket_round(ws, req_bytes("gwtest.pull('p1', 'rtSock')"))
                assert [f["type"] for f in r["frames"]][0] == "RESP_HEADER", r
                assert any(f["type"] == "SUB_END" for f in r["frames"]), r
                r0_cursor = [f for f in r["frames"] if f["type"] == "SUB_END"][0]["nextCursor"]
                await ws.send(json.dumps({"type": "ack", "cursor": r["frames"][-1].get("nextCursor", 0)}))
                r = await socket_round(ws, req_bytes("gwtest.push('p1', 'rtSock', 'sk1', 's1', 'over the socket')"), 1)
                pr = [f for f in r["frames"] if f["type"] == "PUSH_RESULT"]
                assert pr and pr[0]["status"] == "applied", r
                # §8.7: the push-only round did not deliver its own commit: a wake-up after the
                # response; the client pulls over the socket and acks, then deltas flow again
                ev = await next_msg(ws, "sync")
                assert ev["data"]["reason"] == "catchup-required" and ev["data"]["cursor"] == pr[0]["commitSeq"], ev
                r = await socket_round(ws, req_bytes("gwtest.pull('p1', 'rtSock', %d)" % r0_cursor))
                await ws.send(json.dumps({"type": "ack", "cursor": pr[0]["commitSeq"]}))
                # the registration from the socket round delivers deltas now
                seq = push_http(g, "rtA", "rk7", "r7", "after the socket round")
                await delta_with(ws, seq)
                # a round for another clientId fails in-band
                r = await socket_round(ws, req_bytes("gwtest.pull('p1', 'someone-else')"))
                kinds = [f["type"] for f in r["frames"]]
                assert kinds == ["RESP_HEADER", "ERROR"], r
                assert r["frames"][1]["code"] == "sync.invalid_client_id", r
                # an undecodable request with a valid header: the engine's decode error, in-band
                r = await socket_round(ws, b"SSP2\x03\x00\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", 1)
                assert r["frames"][-1]["type"] == "ERROR" and r["frames"][-1]["code"] == "sync.invalid_request", r
        arun(go())
    finally:
        g.stop()


def t_rt_behind_at_connect_wakes():
    """SPEC §8.2, the reference's choice: a socket behind at connect gets no delta bridging its
    gap, only coalescible catchup-required wake-ups until an ack (or a round) reaches the head;
    then deltas resume."""
    g = Gateway()
    try:
        pull_http(g, "rtA")
        pull_http(g, "rtBehind")
        missed = [push_http(g, "rtA", "bk%d" % i, "b%d" % i, "while away") for i in range(2)]

        async def go():
            async with websockets.connect(url(g, "rtBehind")) as ws:
                d = await hello(ws)
                assert d["requiresSync"] is True and d["cursor"] < d["latestCursor"] == missed[-1], d
                seqs = [push_http(g, "rtA", "bk%d" % (i + 2), "b%d" % (i + 2), "behind") for i in range(2)]
                while True:                 # wake-ups (coalescible), never a delta
                    m = await asyncio.wait_for(ws.recv(), 5)
                    assert not isinstance(m, bytes), "a gap-bridging delta for a socket behind at connect"
                    ev = json.loads(m)
                    if ev["event"] == "heartbeat":
                        continue
                    assert ev["event"] == "sync" and ev["data"]["reason"] == "catchup-required", ev
                    assert ev["data"]["requiresPull"] is True and ev["data"]["cursor"] in seqs, ev
                    if ev["data"]["cursor"] == seqs[-1]:
                        break
                await no_msg(ws, "binary")
                # an ack below the head keeps it behind; an ack at the head ends it
                await ws.send(json.dumps({"type": "ack", "cursor": missed[-1]}))
                await asyncio.sleep(0.2)
                seq = push_http(g, "rtA", "bk4", "b4", "still behind")
                assert (await next_msg(ws, "any-text"))["event"] == "sync"
                await ws.send(json.dumps({"type": "ack", "cursor": seq}))
                await asyncio.sleep(0.2)
                seq = push_http(g, "rtA", "bk5", "b5", "caught up")
                m = await next_msg(ws, "binary")
                fr = frames(m[1:], "COMMIT")
                assert [f["commitSeq"] for f in fr] == [seq], fr      # exactly the new commit
        arun(go())
    finally:
        g.stop()


def t_rt_commit_during_round():
    """SPEC §8.7: a commit that becomes visible while a socket round is in flight (after the
    round's pull read, before the round ends) reaches the socket the same way every time: one
    catchup-required wake-up after the round's response, never a delta and never nothing,
    whichever of the commit's wake-up and the round's end the gateway handles first.  The fixture
    holds the round at its client-record write (after the pull) with an advisory lock."""
    psql("""CREATE OR REPLACE FUNCTION gwtest.hold_round() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.client_id = 'rtHold' THEN PERFORM pg_advisory_xact_lock_shared(4242); END IF;
              RETURN NEW;
            END $$;
            DROP TRIGGER IF EXISTS gwtest_hold_round ON syncular.sync_clients;
            CREATE TRIGGER gwtest_hold_round BEFORE UPDATE ON syncular.sync_clients
              FOR EACH ROW EXECUTE FUNCTION gwtest.hold_round()""")
    g = Gateway()
    holder = None
    try:
        pull_http(g, "rtA")
        pull_http(g, "rtHold")

        async def go():
            nonlocal holder
            async with websockets.connect(url(g, "rtHold")) as ws:
                d = await hello(ws)
                cursor = d["cursor"]
                for i in range(10):
                    # a round rewrites the client record (where the hold is) only when it is
                    # older than SYNC_TOUCH_INTERVAL_MS (1 s) or changed
                    await asyncio.sleep(1.1)
                    holder = subprocess.Popen(["psql", "-XAtq", "-d", "gwtest"], stdin=subprocess.PIPE,
                                              stdout=subprocess.DEVNULL, text=True)
                    holder.stdin.write("SELECT pg_advisory_lock(4242);\n")
                    holder.stdin.flush()
                    for _ in range(100):
                        if psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == "1":
                            break
                        await asyncio.sleep(0.02)
                    body = req_bytes("gwtest.pull('p1', 'rtHold', %d)" % cursor)
                    await ws.send(b"\x01" + body)
                    for _ in range(100):          # the round waits at its client-record write
                        if psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") == "1":
                            break
                        await asyncio.sleep(0.02)
                    else:
                        raise AssertionError("the round never reached the hold")
                    seq = push_http(g, "rtA", "hk%d" % i, "h%d" % i, "during the round")
                    # odd iterations: the commit's wake-up is handled while the round runs; even
                    # ones: the round ends first (the release races the notification)
                    if i % 2:
                        await asyncio.sleep(0.3)
                    holder.stdin.write("SELECT pg_advisory_unlock(4242);\n")
                    holder.stdin.close()
                    holder.wait(timeout=10)
                    holder = None
                    out, done = b"", False
                    while True:             # the response, then one wake-up; no delta at all
                        m = await asyncio.wait_for(ws.recv(), 5)
                        if isinstance(m, bytes):
                            assert m[0] == 1, "iteration %d: a delta instead of a wake-up" % i
                            out += m[1:]
                            done = _complete(out)
                            continue
                        ev = json.loads(m)
                        if ev.get("event") == "heartbeat":
                            continue
                        assert done, "iteration %d: %r before the round's response" % (i, ev)
                        break
                    r = render(out)
                    sub_end = [f for f in r["frames"] if f["type"] == "SUB_END"][0]
                    assert sub_end["nextCursor"] < seq, (i, sub_end, seq)   # the pull read before the commit
                    assert ev["event"] == "sync" and ev["data"]["reason"] == "catchup-required", (i, ev)
                    assert ev["data"]["cursor"] >= seq, (i, ev, seq)
                    await no_msg(ws, "binary", 0.3)
                    cursor = seq            # the client pulls (next iteration's round) and acks
                    await ws.send(json.dumps({"type": "ack", "cursor": seq}))
                    for _ in range(100):    # the ack's write lands before the next hold
                        if psql("SELECT cursor FROM syncular.sync_clients WHERE client_id = 'rtHold'") == str(seq):
                            break
                        await asyncio.sleep(0.02)
        arun(go())
    finally:
        if holder:
            holder.kill()
        g.stop()
        psql("DROP TRIGGER IF EXISTS gwtest_hold_round ON syncular.sync_clients")


def _complete(out):
    try:
        render(out)
        return True
    except Exception:  # noqa: BLE001 - not complete yet
        return False


def t_rt_bad_input_closes():
    g = Gateway("--ws-max-message", "4096")
    pull = req_bytes("gwtest.pull('p1', 'rtBad')")
    cases = [
        (b"\x05hello", 1003),                       # unknown channel tag
        (b"", 1003),                                # empty binary message
        ("not json", 1007),
        ("", 1007),                                 # an empty text message
        ('{"type":"ack","cursor":"x"}', 1007),
        ('{"type":"ack","cursor":1.5}', 1007),
        ('{"event":"presence","data":{"scopeKey":"","doc":{}}}', 1007),
        ('{"event":"presence","data":{"scopeKey":"list:l1","doc":[1]}}', 1007),
        (b"\x01XXXX\x03\x00\x01\x00", 1002),         # not an SSP2 request header
        (b"\x01SSP2\x03\x00\x02\x00", 1002),         # a response header
        (b"\x01" + pull + pull, 1008),              # a pipelined second request
        (b"\x01" + b"\0" * 5000, 1009),             # over --ws-max-message
        ("x" * 5000, 1009),
    ]
    try:
        async def go():
            for msg, code in cases:
                async with websockets.connect(url(g, "rtBad")) as ws:
                    await hello(ws)
                    await ws.send(msg)
                    await closed_with(ws, code)
            # unknown events and types are tolerated (SPEC §8.1)
            async with websockets.connect(url(g, "rtBad")) as ws:
                await hello(ws)
                await ws.send('{"event":"something-new","data":{}}')
                await ws.send('{"type":"future"}')
                await ws.send(json.dumps({"type": "ack", "cursor": -1}))
                await no_msg(ws, "any-text", 0.5)
                assert ws.open
        arun(go())
        st, _, _ = g.request("GET", "/sync-api/healthz")
        assert st == 200
    finally:
        g.stop()


def t_rt_upgrade_refusals():
    g = Gateway()
    j = Gateway("--jwt-secret", "s3", "--partition", "p1", "--ws-max-sockets", "1")
    try:
        async def go():
            for u, code, reason in ((url(g, "x").replace("clientId=x&", ""), 4400, "sync.invalid_request"),
                                    ("ws://127.0.0.1:%d/sync-api/nowhere?clientId=x" % g.port, 4404, "sync.not_found"),
                                    ("ws://127.0.0.1:%d/sync-api/realtime?clientId=x" % j.port, 4401,
                                     "sync.auth_required"),
                                    ("ws://127.0.0.1:%d/sync-api/realtime?clientId=x&access_token=bad" % j.port,
                                     4401, "sync.auth_required")):
                async with websockets.connect(u) as ws:
                    assert await closed_with(ws, code) == reason, u
            # SQL authenticator refusal after the upgrade: close 4401
            async with websockets.connect(url(g, "x", key="deny@p1")) as ws:
                reason = await closed_with(ws, 4401)
                assert reason == "sync.auth_required"
            async with websockets.connect(url(g, "x", key=None)) as ws:
                await closed_with(ws, 4401)
            # JWT in the header or access_token; the socket cap answers 429
            tok = jwt_hs256({"sub": "u1"}, "s3")
            async with websockets.connect("ws://127.0.0.1:%d/sync-api/realtime?clientId=jw&access_token=%s"
                                          % (j.port, tok)) as ws:
                assert (await hello(ws))["actorId"] == "u1"
                async with websockets.connect("ws://127.0.0.1:%d/sync-api/realtime?clientId=jw2" % j.port,
                                              extra_headers={"Authorization": "Bearer " + tok}) as ws2:
                    assert await closed_with(ws2, 4429) == "sync.websocket_connection_limit"
            async with websockets.connect("ws://127.0.0.1:%d/sync-api/realtime?clientId=jw3" % j.port,
                                          extra_headers={"Authorization": "Bearer " + tok}) as ws:
                assert (await hello(ws))["clientId"] == "jw3"
            # a clientId bound to another actor is refused by the extension
            pull_http(g, "rtBound")
            async with websockets.connect(url(g, "rtBound", key="u2@p1")) as ws:
                reason = await closed_with(ws, 4400)
                assert reason == "sync.invalid_client_id", reason
        arun(go())
    finally:
        g.stop()
        j.stop()


def t_rt_presence():
    g1, g2 = Gateway("--presence-max", "200"), Gateway()
    try:
        for c in ("pA", "pB", "pC"):
            pull_http(g1, c)
        pull_http(g1, "pD", key="l2only@p1", list_="l2")

        async def go():
            a = await websockets.connect(url(g1, "pA"))
            b = await websockets.connect(url(g2, "pB"))     # another gateway
            d = await websockets.connect(url(g1, "pD", key="l2only@p1"))
            for ws in (a, b, d):
                await hello(ws)
            await asyncio.sleep(0.3)
            await a.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {"at": 1}}}))
            ev = (await next_msg(b, "presence"))["data"]
            assert ev["kind"] == "join" and ev["clientId"] == "pA" and ev["actorId"] == "u1" and ev["doc"] == {"at": 1}, ev
            await a.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {"at": 2}}}))
            ev = (await next_msg(b, "presence"))["data"]
            assert ev["kind"] == "update" and ev["doc"] == {"at": 2}, ev
            # a late peer gets the snapshot join burst
            c = await websockets.connect(url(g1, "pC"))
            await hello(c)
            ev = (await next_msg(c, "presence"))["data"]
            assert ev["kind"] == "join" and ev["clientId"] == "pA", ev
            await a.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": None}}))
            ev = (await next_msg(b, "presence"))["data"]
            assert ev["kind"] == "leave" and ev["doc"] is None, ev
            # forbidden and too large go back to the publisher only
            await d.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {}}}))
            ev = (await next_msg(d, "presence"))["data"]
            assert ev["error"] == "presence.forbidden", ev
            await a.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {"x": "y" * 300}}}))
            ev = (await next_msg(a, "presence"))["data"]
            assert ev["error"] == "presence.too_large", ev
            # publish again, then disconnect: peers see a leave
            await a.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {"at": 3}}}))
            assert (await next_msg(b, "presence"))["data"]["kind"] == "join"
            await a.close()
            ev = (await next_msg(b, "presence"))["data"]
            assert ev["kind"] == "leave" and ev["clientId"] == "pA", ev
            # D (list l2 only) never saw any of it
            await no_msg(d, "presence", 0.3)
            # a late peer on the other gateway gets the snapshot of B's key from the mirror
            await b.send(json.dumps({"event": "presence", "data": {"scopeKey": "list:l1", "doc": {"b": 1}}}))
            while True:     # C also has A's earlier events queued
                ev = (await next_msg(c, "presence"))["data"]
                if ev.get("clientId") == "pB":
                    break
            assert ev["kind"] == "join" and ev["doc"] == {"b": 1}, ev
            e = await websockets.connect(url(g1, "pC"))
            await hello(e)
            ev = (await next_msg(e, "presence"))["data"]
            assert ev["kind"] == "join" and ev["clientId"] == "pB" and ev["doc"] == {"b": 1}, ev
            await e.close()
            for ws in (b, c, d):
                await ws.close()
        arun(go())
    finally:
        g1.stop()
        g2.stop()


def t_rt_killed_connections_recover():
    g = Gateway()
    try:
        pull_http(g, "rtKill")

        async def go():
            async with websockets.connect(url(g, "rtKill")) as ws:
                await hello(ws)
                psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name = 'syncular-gateway'")
                for _ in range(100):          # the pool and the LISTEN connection come back
                    await asyncio.sleep(0.1)
                    if int(psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                "'syncular-gateway' AND query ~* 'LISTEN'")) >= 1:
                        break
                await asyncio.sleep(0.3)
                seq = None
                for _ in range(20):
                    st, _, body = g.sync(req_bytes("gwtest.push('p1', 'rtA', 'rk8', 'r8', 'after kill')"),
                                         {"x-api-key": KEY})
                    if st == 200:
                        seq = frames(body, "PUSH_RESULT")[0]["commitSeq"]
                        break
                    await asyncio.sleep(0.2)
                assert seq
                m = await next_msg(ws, "binary")
                assert frames(m[1:], "COMMIT")[-1]["commitSeq"] == seq
        arun(go())
    finally:
        g.stop()


def t_rt_listen_lost_wakes():
    """Commits made while the LISTEN connection was down were never notified to this gateway:
    once it listens again, every socket gets a catchup-required wake-up (SPEC §8.3)."""
    g = Gateway()
    try:
        pull_http(g, "rtLost")

        async def go():
            async with websockets.connect(url(g, "rtLost")) as ws:
                await hello(ws)
                psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name = 'syncular-gateway' AND query ~* '^LISTEN'")
                ev = await next_msg(ws, "sync", timeout=10)
                assert ev["data"]["reason"] == "catchup-required", ev
        arun(go())
    finally:
        g.stop()


def t_rt_slow_consumer_bounded():
    """A client that never reads (a raw socket with a tiny receive window after the upgrade):
    once the kernel buffers are full, the gateway's queue for it stays within --ws-max-buffer
    (deltas become coalesced catchup-required wake-ups); a reading client is unaffected."""
    import socket as so
    g = Gateway("--ws-max-buffer", "200000", "--ws-max-unacked", "100000", "--verbose")
    try:
        pull_http(g, "rtSlow")
        pull_http(g, "rtFast")
        raw = so.socket()
        raw.setsockopt(so.SOL_SOCKET, so.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", g.port))
        raw.sendall(("GET /sync-api/realtime?clientId=rtSlow&apiKey=%s HTTP/1.1\r\nHost: x\r\n"
                     "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" % KEY).encode())
        assert raw.recv(4096).startswith(b"HTTP/1.1 101"), "no upgrade"

        def rss_kb():
            with open("/proc/%d/status" % g.proc.pid) as f:
                return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
        rss0 = rss_kb()

        async def go():
            fast = await websockets.connect(url(g, "rtFast"))
            await hello(fast)
            loop = asyncio.get_running_loop()
            got = []

            async def read_fast():
                while True:
                    got.append(await fast.recv())
            reader = asyncio.ensure_future(read_fast())
            big = "x" * 100000
            for i in range(70):
                await loop.run_in_executor(None, push_http, g, "rtA", "slow%d" % i, "sl%d" % i, big)
            await asyncio.sleep(0.3)
            reader.cancel()
            assert any(isinstance(m, bytes) and m[0] == 0 for m in got) and fast.open, len(got)
            await fast.close()
        arun(go())
        slow = [l for l in g.logtext().splitlines() if "fanout rtSlow" in l]
        queued = [int(re.search(r"queued (\d+)", l).group(1)) for l in slow]
        assert max(queued) <= 200000 + 1000, max(queued)
        # nothing else holds the unsent deltas either: 7 MB were pushed, the kernel holds ~2 MB
        # (not under AddressSanitizer, whose quarantine keeps freed memory)
        if not BIN.endswith("-asan"):
            assert rss_kb() - rss0 < 5000, rss_kb() - rss0
        assert any("catchup-required" in l or "delta-too-large" in l for l in slow), slow[-3:]
        raw.close()
        st, _, _ = g.request("GET", "/sync-api/healthz")
        assert st == 200
    finally:
        g.stop()


def t_rt_least_privilege_role():
    """A login role with exactly the EXECUTE grants of src/sql/90_grants.sql's gateway example
    serves HTTP rounds and realtime sockets."""
    psql("""DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'gw_least') THEN
                CREATE ROLE gw_least LOGIN PASSWORD 'gw-least-pw';
              END IF; END $$;
            GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.realtime_connect(text, text, text) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[])
              TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.realtime_ack(text, text, text, bigint, text) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.readiness(jsonb) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.commit_wakeup_mode(), syncular.wait_commits(bigint, integer)
              TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) TO gw_least;
            GRANT EXECUTE ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text)
              TO gw_least""")
    ci = conninfo("gwtest") + " user=gw_least password=gw-least-pw"
    g = Gateway("--db", ci)
    try:
        pull_http(g, "rtLeast")

        async def go():
            async with websockets.connect(url(g, "rtLeast")) as ws:
                await hello(ws)
                seq = push_http(g, "rtA", "lp1", "lp1", "least privilege")
                await delta_with(ws, seq)
                await ws.send(json.dumps({"type": "ack", "cursor": seq}))
                await asyncio.sleep(0.3)
        arun(go())
        assert "failed" not in g.logtext() and "permission" not in g.logtext(), g.logtext()
    finally:
        g.stop()


def t_rt_wakeup_source():
    """The gateway takes commit wake-ups the way the database sends them (docs/realtime.md "Commit
    wake-ups"): NOTIFY mode LISTENs syncular_commit and runs no waiter; ring mode (the library
    preloaded, test/t/020_wakeup_ring.pl) runs syncular.wait_commits on a connection of its own and
    still LISTENs syncular_commit (a session pushing in notify mode reaches it), and a waiter
    killed while a commit happens resumes at its position: the commit still arrives as a delta,
    without a catch-up wake-up."""
    mode = psql("SELECT syncular.commit_wakeup_mode()")
    g = Gateway()
    try:
        pull_http(g, "rtSrc")

        def backends(pattern):
            return int(psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'syncular-gateway' "
                            "AND query ~ '%s'" % pattern))

        async def go():
            async with websockets.connect(url(g, "rtSrc")) as ws:
                await hello(ws)
                # the waiters of gateways stopped by earlier tests end with their current call (5 s)
                for _ in range(100):
                    if (backends("wait_commits"), backends("^LISTEN")) == ((1, 1) if mode != "notify" else (0, 1)):
                        break
                    await asyncio.sleep(0.1)
                st, _, body = g.request("GET", "/sync-api/metrics")
                ring_gauge = re.search(rb"\nsyncular_gateway_commit_wakeups_ring (\d)", body).group(1)
                if mode == "notify":
                    assert backends("wait_commits") == 0 and backends("LISTEN syncular_commit") == 1, mode
                    assert ring_gauge == b"0", body
                    seq = push_http(g, "rtA", "src1", "src1", "notify mode")
                    await delta_with(ws, seq)
                    return
                assert backends("wait_commits") == 1 and backends("LISTEN syncular_commit") == 1, mode
                assert ring_gauge == b"1", body
                seq = push_http(g, "rtA", "src1", "src1", "ring mode")
                await delta_with(ws, seq)
                # a pushing session in notify mode (a mode switch in progress) still reaches it
                r = psql("SET syncular.commit_wakeup = notify; SELECT syncular.handle(gwtest.push('p1', "
                         "'rtA', 'srcN', 'srcN', 'notify session', 'l1'), 'p1', 'u1') IS NOT NULL")
                assert r.strip().endswith("t"), r
                m = await next_msg(ws, "binary", timeout=10)
                assert frames(m[1:], "COMMIT")[-1]["commitSeq"] == seq + 1, frames(m[1:], "COMMIT")
                # kill the waiter, commit while it is down: the next waiter resumes at its position
                psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE application_name = 'syncular-gateway' AND query ~ 'wait_commits'")
                seq = push_http(g, "rtA", "src2", "src2", "while the waiter is down")
                m = await next_msg(ws, "binary", timeout=10)
                assert frames(m[1:], "COMMIT")[-1]["commitSeq"] == seq
                assert "commit waiter connection lost" in g.logtext(), g.logtext()
                assert "were lost" not in g.logtext(), g.logtext()
        arun(go())
    finally:
        g.stop()


def t_rt_wakeup_lost_resyncs():
    """Ring mode: when the ring moves past the waiter's position (the gateway stalled while more
    wake-ups than the ring holds were committed), wait_commits answers "lost" and the gateway
    makes one fanout call per partition up to its head: the commit whose wake-up was overwritten
    still reaches the socket as a delta.  (NOTIFY mode has no ring: test/t/020_wakeup_ring.pl runs this.)"""
    if psql("SELECT syncular.commit_wakeup_mode()") == "notify":
        print("# t_rt_wakeup_lost_resyncs: NOTIFY mode here, checked in ring mode by test/t/020_wakeup_ring.pl")
        return
    fill = ["F" * 255 + "a", "F" * 255 + "b"]     # 256-byte partitions: 2048 of them fill the ring
    for f in fill:
        psql("SELECT syncular.handle(gwtest.pull('%s', 'fill'), '%s', 'u1')" % (f, f))
    g = Gateway()
    try:
        pull_http(g, "rtLostR")

        async def go():
            async with websockets.connect(url(g, "rtLostR")) as ws:
                await hello(ws)
                os.kill(g.proc.pid, signal.SIGSTOP)
                try:
                    # the waiter's pending call returns with this one; its answer waits in the socket
                    psql("SELECT syncular.handle(gwtest.push('%s', 'fill', 'f0', 'f0', 'f0'), '%s', 'u1')"
                         % (fill[0], fill[0]))
                    time.sleep(0.3)
                    psql("SELECT syncular.handle(gwtest.push('p1', 'rtA', 'lost1', 'lost1', 'overwritten'), 'p1', 'u1')")
                    seq = int(psql("SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1'"))
                    psql("""DO $$ BEGIN
                              FOR i IN 1..1050 LOOP
                                PERFORM syncular.handle(gwtest.push('%s', 'fill', 'a' || i, 'a' || i, 'x'), '%s', 'u1');
                                PERFORM syncular.handle(gwtest.push('%s', 'fill', 'b' || i, 'b' || i, 'x'), '%s', 'u1');
                              END LOOP; END $$""" % (fill[0], fill[0], fill[1], fill[1]))
                finally:
                    os.kill(g.proc.pid, signal.SIGCONT)
                m = await next_msg(ws, "binary", timeout=10)
                assert frames(m[1:], "COMMIT")[-1]["commitSeq"] == seq
                assert "commit wake-ups were lost" in g.logtext(), g.logtext()
                st, _, body = g.request("GET", "/sync-api/metrics")
                assert b"\nsyncular_gateway_commit_wakeups_lost_total 1\n" in body, body
        arun(go())
    finally:
        os.kill(g.proc.pid, signal.SIGCONT)
        g.stop()


def t_rt_wakeups_idle_without_sockets():
    """Ring mode: while no realtime socket or watch is open, the waiter does not make one
    syncular.wait_commits call per commit (each call wakes a backend and turns the event loop):
    it calls every 250 ms and takes that time's commits in one answer.  A ring that moved past
    its position meanwhile is no loss (nobody was waiting): no log line, no count.  A socket's
    upgrade makes the waiter call at once, from its position: the next commit is a delta."""
    if psql("SELECT syncular.commit_wakeup_mode()") == "notify":
        print("# t_rt_wakeups_idle_without_sockets: NOTIFY mode here, checked in ring mode by "
              "test/t/020_wakeup_ring.pl")
        return
    fill = ["I" * 255 + "a", "I" * 255 + "b"]     # 256-byte partitions: 2048 of them fill the ring
    for f in fill:
        psql("SELECT syncular.handle(gwtest.pull('%s', 'fill'), '%s', 'u1')" % (f, f))
    g = Gateway()

    def calls():
        st, _, body = g.request("GET", "/sync-api/metrics")
        return int(re.search(rb"\nsyncular_gateway_commit_wakeup_calls_total (\d+)", body).group(1))
    try:
        pull_http(g, "rtIdle")      # the partition's log epoch (the pushes below need it)
        for _ in range(100):        # the waiter's first call is out
            if calls() > 0:
                break
            time.sleep(0.05)
        bodies = reqs_bytes("gwtest.push('p1', 'rtA', 'idle' || i, 'idle' || i, 'no socket')", 60)
        c0, t0 = calls(), time.time()
        for b in bodies:
            st, _, body = g.sync(b, {"x-api-key": KEY})
            assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        time.sleep(0.3)
        took, made = time.time() - t0, calls() - c0
        assert made <= took / 0.25 + 3, "%d wait_commits calls for 60 commits in %.2f s" % (made, took)
        # the ring laps while nothing consumes wake-ups (one transaction: 2,100 wake-ups at commit)
        psql("""DO $$ BEGIN
                  FOR i IN 1..1050 LOOP
                    PERFORM syncular.handle(gwtest.push('%s', 'fill', 'a' || i, 'a' || i, 'x'), '%s', 'u1');
                    PERFORM syncular.handle(gwtest.push('%s', 'fill', 'b' || i, 'b' || i, 'x'), '%s', 'u1');
                  END LOOP; END $$""" % (fill[0], fill[0], fill[1], fill[1]))
        c1 = calls()
        for _ in range(200):        # a call sent after the lap: its "lost" answer was taken
            if calls() >= c1 + 2:
                break
            time.sleep(0.05)
        pull_http(g, "rtIdle")      # the socket starts at the head: deltas, no catch-up

        async def go():
            # a socket's upgrade makes an idle waiter call at once (not at its next 250 ms turn),
            # three times over: the waiter idles again after the answer to a commit
            for k in range(3):
                push_http(g, "rtA", "idleR%d" % k, "idleR%d" % k, "no socket")
                time.sleep(0.05)    # its answer taken: idle until 250 ms from it
                c0 = calls()
                async with websockets.connect(url(g, "rtIdle")) as ws:
                    await hello(ws)
                    assert calls() > c0, (k, c0, calls())
                pull_http(g, "rtIdle")
            async with websockets.connect(url(g, "rtIdle")) as ws:
                await hello(ws)
                c1 = calls()
                seq = push_http(g, "rtA", "idleS", "idleS", "a socket is open")
                await delta_with(ws, seq, timeout=2)
                seq = push_http(g, "rtA", "idleT", "idleT", "and again")
                await delta_with(ws, seq, timeout=2)
                assert calls() >= c1 + 2, (c1, calls())     # a call per answer again
        arun(go())
        assert "were lost" not in g.logtext(), g.logtext()
        st, _, body = g.request("GET", "/sync-api/metrics")
        assert b"\nsyncular_gateway_commit_wakeups_lost_total 0\n" in body, body
    finally:
        g.stop()


def t_rt_rounds_prepared():
    """The statements every request runs are prepared once per pool connection (gateway/prepared.c):
    100 socket rounds and 100 POST /sync rounds through a gateway of two connections are planned a
    handful of times (PostgreSQL plans a named statement's first five executions), not once per
    round.  Needs pg_stat_statements with track_planning (the ring-mode run of
    test/t/020_wakeup_ring.pl preloads it)."""
    if "pg_stat_statements" not in psql("SHOW shared_preload_libraries"):
        print("# t_rt_rounds_prepared: pg_stat_statements is not preloaded here, checked by "
              "test/t/020_wakeup_ring.pl")
        return
    psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
    g = Gateway("--pool", "2")
    try:
        pull_http(g, "rtPrep")
        bodies = reqs_bytes("gwtest.pull('p1', 'rtPrep')", 100)
        for b in bodies:
            st, _, body = g.sync(b, {"x-api-key": KEY})
            assert st == 200, body

        async def go():
            async with websockets.connect(url(g, "rtPrep")) as ws:
                await hello(ws)
                for b in bodies:
                    r = await socket_round(ws, b, 1)
                    assert r["frames"][0]["type"] == "RESP_HEADER", r
        arun(go())
        rows = psql("SELECT calls || ' ' || plans || ' ' || query FROM pg_stat_statements "
                    "WHERE query LIKE 'SELECT status, content_type, body FROM syncular.handle_http%'").splitlines()
        assert len(rows) >= 2, rows
        for r in rows:
            calls, plans = int(r.split()[0]), int(r.split()[1])
            if calls >= 100:
                assert plans <= 2 * 6, rows
        assert sum(int(r.split()[0]) for r in rows) >= 200, rows
    finally:
        g.stop()


def t_rt_sigterm_closes_sockets():
    g = Gateway()

    async def go():
        async with websockets.connect(url(g, "rtDrain")) as ws:
            await hello(ws)
            os.kill(g.proc.pid, signal.SIGTERM)
            await closed_with(ws, 1001)
    arun(go())
    assert g.proc.wait(10) == 0


def t_rt_sql_update_delta():
    """A row written with plain SQL UPDATE (a sync commit of the capture triggers) reaches a
    client on the realtime socket as a delta, without polling; the same for INSERT and DELETE."""
    g = Gateway()
    try:
        pull_http(g, "rtSqlA")
        push_http(g, "rtSqlA", "sk0", "sq1", "written by a client")
        pull_http(g, "rtSqlB")

        async def go():
            async with websockets.connect(url(g, "rtSqlB")) as ws:
                d = await hello(ws)
                assert d["requiresSync"] is False, d
                psql("UPDATE public.tasks SET title = 'edited by plain SQL' "
                     "WHERE _sync_partition = 'p1' AND id = 'sq1'")
                seq = int(psql("SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1'"))
                m = await delta_with(ws, seq)
                commit = [f for f in frames(m[1:], "COMMIT") if f["commitSeq"] == seq][0]
                ch = [c for c in commit["changes"] if c["rowId"] == "sq1"]
                assert len(ch) == 1 and ch[0]["op"] == "upsert" and ch[0]["rowVersion"] == 2, commit
                # the row travels as codec bytes (a full row: the payload the trigger encoded)
                assert b"edited by plain SQL" in base64.b64decode(ch[0]["row"]), commit
                assert commit["actorId"] == psql("SELECT current_user"), commit
                # an INSERT and a DELETE in one transaction: one commit, one delta
                psql("SET syncular.partition = 'p1'; BEGIN; "
                     "INSERT INTO public.tasks (id, list_id, title) VALUES ('sq2', 'l1', 'inserted by SQL'); "
                     "DELETE FROM public.tasks WHERE _sync_partition = 'p1' AND id = 'sq1'; COMMIT;")
                seq2 = int(psql("SELECT max_commit_seq FROM syncular.partitions WHERE partition = 'p1'"))
                assert seq2 == seq + 1, (seq, seq2)
                m = await delta_with(ws, seq2)
                commit = [f for f in frames(m[1:], "COMMIT") if f["commitSeq"] == seq2][0]
                ops = sorted((c["rowId"], c["op"]) for c in commit["changes"])
                assert ops == [("sq1", "delete"), ("sq2", "upsert")], commit
                # a rolled-back SQL write sends nothing
                psql("BEGIN; UPDATE public.tasks SET title = 'never' WHERE _sync_partition = 'p1' AND id = 'sq2'; "
                     "ROLLBACK;")
                await no_msg(ws, "binary")
        arun(go())
    finally:
        g.stop()


TESTS = [t_rt_hello_delta_ack, t_rt_never_pulled_requires_sync, t_rt_two_gateways, t_rt_flow_control_wakes,
         t_rt_heartbeat, t_rt_socket_rounds, t_rt_behind_at_connect_wakes, t_rt_commit_during_round,
         t_rt_bad_input_closes, t_rt_upgrade_refusals, t_rt_presence,
         t_rt_killed_connections_recover, t_rt_listen_lost_wakes, t_rt_least_privilege_role, t_rt_wakeup_source,
         t_rt_wakeup_lost_resyncs, t_rt_wakeups_idle_without_sockets, t_rt_rounds_prepared, t_rt_sql_update_delta,
         t_rt_sigterm_closes_sockets,
         t_rt_slow_consumer_bounded]     # last: it leaves 7 MB of rows in list l1


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
