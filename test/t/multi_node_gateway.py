#!/usr/bin/python3
"""The gateway in front of the router (docs/scaling.md "The gateway in front of the router"), a
step of the multi-node TAP test (test/t/001_multi_node.pl), which re-reports its TAP lines.  Starts syncular-gateway with --db on the router database, opens one
realtime socket on a fresh partition of every logical shard, pushes through the router and checks
that each socket gets the delta of its own partition's commit (the NOTIFY comes from the shard that
committed, which the gateway LISTENs on); then runs the stop command (server B down) and checks
that the sockets of the shards on A still get their deltas.  TAP lines; exit 1 on a failure.

usage: multi_node_gateway.py GATEWAY_BIN ROUTER_CONNINFO SHARD_CONNINFO_FOR_RENDER STOP_CMD LOG
"""
import asyncio, base64, hashlib, hmac, http.client, json, socket, subprocess, sys, time

import websockets

GW, ROUTER, RENDER_DB, STOP_CMD, LOG = sys.argv[1:6]
SECRET = "scale-secret"
SUB = [{"id": "s1", "table": "todos", "scopes": {"list_id": ["l1"]}}]


def fail(msg):
    print("not ok - " + msg)
    try:
        print(open(LOG).read()[-3000:], file=sys.stderr)
    except OSError:
        pass
    sys.exit(1)


def ok(msg):
    print("ok - " + msg, flush=True)


def psql(conninfo, sql, *args):
    cmd = ["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", conninfo]
    for i, a in enumerate(args):
        cmd += ["-v", "a%d=%s" % (i, a)]
    r = subprocess.run(cmd, input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        fail("psql: %s: %s" % (sql, r.stderr))
    return r.stdout.strip()


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token(partition):
    h = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    p = b64u(json.dumps({"sub": "u1", "tid": partition, "exp": int(time.time()) + 600}).encode())
    sig = hmac.new(SECRET.encode(), ("%s.%s" % (h, p)).encode(), hashlib.sha256).digest()
    return "%s.%s.%s" % (h, p, b64u(sig))


def push(partition, ccid, row, title):
    r = json.loads(psql(ROUTER, """SELECT syncular.push(:'a0', 'u1', 'rt-writer', jsonb_build_array(jsonb_build_object(
      'clientCommitId', :'a1', 'operations', jsonb_build_array(jsonb_build_object('table', 'todos', 'op', 'upsert',
      'row', jsonb_build_object('id', :'a2', 'list_id', 'l1', 'title', :'a3'))))))""", partition, ccid, row, title))
    if r[0].get("status") != "applied":
        fail("push through the router: %r" % r)
    return r[0]["commitSeq"]


def http_json(port, method, path, partition, body=None, headers=None):
    """(status, JSON body) of one request to the gateway, as the actor u1 in partition"""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    h = {"Authorization": "Bearer " + token(partition)}
    h.update(headers or {})
    c.request(method, path, body, h)
    r = c.getresponse()
    raw = r.read()
    c.close()
    try:
        return r.status, json.loads(raw)
    except ValueError:
        fail("%s %s: a body that is not JSON (%d): %r" % (method, path, r.status, raw[:200]))


def routes_beside_rounds(port, partition):
    """a segment by its id is routed to the partition's shard (an unknown one: the shard's 404);
    blobs and signed segment URLs, which a routed call cannot carry, get a clear 404"""
    st, b = http_json(port, "GET", "/sync-api/segments/no-such-segment", partition,
                      headers={"X-Syncular-Scopes": json.dumps({"list_id": ["l1"]})})
    if st != 404 or b.get("code") != "sync.not_found":
        fail("GET a segment through the router: %d %r, want the shard's 404 sync.not_found" % (st, b))
    st, b = http_json(port, "GET", "/sync-api/segments/no-such-segment?st=abc", partition)
    if st != 404 or b.get("code") != "sync.not_found" or "syncular_router" not in b.get("message", ""):
        fail("a signed segment URL through the router: %d %r" % (st, b))
    st, b = http_json(port, "PUT", "/sync-api/blobs/sha256:" + "ab" * 32, partition, b"abcd",
                      {"Content-Type": "application/octet-stream"})
    if st != 404 or b.get("code") != "blob.not_found" or "syncular_router" not in b.get("message", ""):
        fail("PUT a blob through the router: %d %r" % (st, b))
    st, b = http_json(port, "GET", "/sync-api/blobs/sha256:" + "ab" * 32, partition)
    if st != 404 or b.get("code") != "blob.not_found":
        fail("GET a blob through the router: %d %r" % (st, b))


def commits_of(delta):
    """commitSeq of every COMMIT frame of a delta (0x00 + SSP2 response), rendered on a shard."""
    if delta[:1] != b"\x00":
        fail("a binary message that is not a delta: %r" % delta[:8])
    r = json.loads(psql(RENDER_DB, "SELECT syncular.debug_render(decode(:'a0', 'hex'))", delta[1:].hex()))
    return [f["commitSeq"] for f in r["frames"] if f["type"] == "COMMIT"]


async def next_delta(ws, timeout=10.0):
    end = time.time() + timeout
    while True:
        m = await asyncio.wait_for(ws.recv(), max(0.05, end - time.time()))
        if isinstance(m, bytes):
            return m
        ev = json.loads(m)
        if ev.get("event") not in ("hello", "heartbeat"):
            return ev


async def no_delta(ws, timeout=1.0):
    try:
        m = await next_delta(ws, timeout)
    except asyncio.TimeoutError:
        return
    fail("unexpected message: %r" % (m[:16] if isinstance(m, bytes) else m))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


async def main():
    nshards = int(psql(ROUTER, "SELECT syncular.shard_count()"))
    parts = psql(ROUTER, """SELECT string_agg(p, ' ' ORDER BY k) FROM (
      SELECT DISTINCT ON (syncular.shard_of(p)) syncular.shard_of(p) AS k, p
        FROM (SELECT 'rt-' || i AS p FROM generate_series(0, 199) i) x ORDER BY 1, 2) y""").split()
    if len(parts) != nshards or nshards < 2:
        fail("one fresh partition per shard: %r" % parts)
    ndb = int(psql(ROUTER, "SELECT count(*) FROM syncular.shard_conninfos()"))
    port = free_port()
    log = open(LOG, "w")
    gw = subprocess.Popen([GW, "--db", ROUTER, "--listen", "127.0.0.1:%d" % port, "--jwt-secret", SECRET,
                           "--partition-claim", "tid", "--shard-refresh", "1", "--verbose"],
                          stdout=subprocess.DEVNULL, stderr=log)
    try:
        end = time.time() + 15
        while open(LOG).read().count("listening for commits on shard") < ndb:
            if gw.poll() is not None or time.time() > end:
                fail("the gateway did not LISTEN on the %d shard databases" % ndb)
            await asyncio.sleep(0.1)
        ok("gateway on the router: one LISTEN connection per shard database (%d)" % ndb)
        for k, p in enumerate(parts):
            for _ in range(2):   # a first pull of a new partition only acquires its log epoch
                psql(ROUTER, "SELECT syncular.pull(:'a0', 'u1', :'a1', :'a2')", p, "rt-c%d" % k, json.dumps(SUB))
        socks = []
        for k, p in enumerate(parts):
            ws = await websockets.connect("ws://127.0.0.1:%d/sync-api/realtime?clientId=rt-c%d" % (port, k),
                                          extra_headers={"Authorization": "Bearer " + token(p)})
            hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if hello.get("event") != "hello" or hello["data"].get("requiresSync") is not False:
                fail("hello on partition %s: %r" % (p, hello))
            socks.append(ws)
        ok("sockets opened through the router on a partition of each of the %d shards (hello, in sync)" % nshards)
        for k, p in enumerate(parts):
            seq = push(p, "rt-a%d" % k, "rt-row-%d" % k, "on shard %d" % k)
            d = await next_delta(socks[k])
            if not isinstance(d, bytes) or commits_of(d) != [seq]:
                fail("shard %d: the socket got %r, want the delta of commit %d" % (k, d, seq))
            if k == len(parts) - 1:
                # the ack goes through the router to the record on the partition's shard
                shard = psql(ROUTER, "SELECT syncular.shard_connstr(syncular.shard_of(:'a0'))", p)
                await socks[k].send(json.dumps({"type": "ack", "cursor": seq}))
                for _ in range(100):
                    if psql(shard, "SELECT cursor FROM syncular.sync_clients WHERE client_id = :'a0'", "rt-c%d" % k) == str(seq):
                        break
                    await asyncio.sleep(0.05)
                else:
                    fail("the ack of shard %d's socket did not reach its client record" % k)
        for ws in socks:
            await no_delta(ws, 0.5)
        ok("a push through the router on each shard reaches the socket of its partition, and only it; "
           "an ack reaches the record on the shard")
        routes_beside_rounds(port, parts[0])
        ok("through the router: a segment by its id is the shard's answer (404 sync.not_found for an unknown "
           "one); blobs and signed segment URLs get 404 naming the router")
        # server B down: the shards on A keep delivering
        subprocess.run(["bash", "-c", STOP_CMD], check=True)
        down = [k for k, p in enumerate(parts)
                if psql(ROUTER, "SELECT syncular.shard_connstr(syncular.shard_of(:'a0')) ~ 'dbname=syncular_s[23]'", p) == "t"]
        up = [k for k in range(nshards) if k not in down]
        if not down or not up:
            fail("shards on B %r, on A %r" % (down, up))
        for k in up:
            seq = push(parts[k], "rt-b%d" % k, "rt-row-%d" % k, "B is down")
            d = await next_delta(socks[k])
            if not isinstance(d, bytes) or commits_of(d) != [seq]:
                fail("B down, shard %d: the socket got %r, want the delta of commit %d" % (k, d, seq))
        if gw.poll() is not None:
            fail("the gateway exited")
        ok("server B stopped: the sockets of shards %s still get their deltas, the gateway serves on" % up)
        for ws in socks:
            try:
                await asyncio.wait_for(ws.close(), 2)
            except Exception:
                pass
    finally:
        gw.terminate()
        try:
            gw.wait(15)
        except subprocess.TimeoutExpired:
            gw.kill()


asyncio.run(main())
