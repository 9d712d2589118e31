#!/usr/bin/python3
"""Demo part 5: two clients through syncular-gateway.  A (alice) syncs over HTTP (POST /sync,
gzip); B (bob) keeps a realtime WebSocket open and receives A's push as a binary delta, without
polling; then B runs a sync round over the socket itself.  Tokens are HS256 JWTs."""
import asyncio, base64, gzip, hashlib, hmac, http.client, json, subprocess, sys, time

import websockets

PORT, SECRET, DB = int(sys.argv[1]), sys.argv[2], sys.argv[3]
CT = "application/vnd.syncular.sync.v2"


def sql(q):
    return subprocess.run(["psql", "-XAtq", "-d", DB, "-c", q], check=True, capture_output=True,
                          text=True).stdout.strip()


def req(expr):
    return bytes.fromhex(sql("SELECT encode(%s, 'hex')" % expr))


def show(body):
    doc = json.loads(sql("SELECT syncular.debug_render(decode('%s', 'hex'))" % body.hex()))
    for f in doc["frames"]:
        brief = {k: v for k, v in f.items() if k in ("clientCommitId", "status", "commitSeq", "id", "nextCursor",
                                                      "actorId", "code", "resetRequired")}
        if f["type"] == "COMMIT":
            brief["changes"] = ["%s %s" % (c["op"], c["rowId"]) for c in f["changes"]]
        print("      %-12s %s" % (f["type"], json.dumps(brief)))
    return doc


def token(actor):
    b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()  # noqa: E731
    h, p = b(b'{"alg":"HS256","typ":"JWT"}'), b(json.dumps({"sub": actor, "exp": int(time.time()) + 600}).encode())
    return "%s.%s.%s" % (h, p, b(hmac.new(SECRET.encode(), ("%s.%s" % (h, p)).encode(), hashlib.sha256).digest()))


def post(actor, body, title):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    c.request("POST", "/sync-api/sync", gzip.compress(body), {
        "Content-Type": CT, "Content-Encoding": "gzip", "Accept-Encoding": "gzip",
        "Authorization": "Bearer " + token(actor)})
    r = c.getresponse()
    data = r.read()
    if r.getheader("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    print("  %s -> HTTP %d %s (%d bytes, Content-Encoding %s)" % (title, r.status, r.getheader("Content-Type"),
                                                                  len(data), r.getheader("Content-Encoding") or "identity"))
    return show(data) if r.status == 200 else print("      " + data.decode())


async def main():
    print("── A (alice) over HTTP: first round acquires the log epoch")
    post("alice", req("demo_gw.pull('phone-A')"), "A: POST /sync (pull)")
    print("── B (bob) pulls once over HTTP (registers its subscription), then opens the realtime socket")
    post("bob", req("demo_gw.pull('laptop-B')"), "B: POST /sync (pull)")
    uri = "ws://127.0.0.1:%d/sync-api/realtime?clientId=laptop-B&access_token=%s" % (PORT, token("bob"))
    async with websockets.connect(uri) as ws:
        hello = json.loads(await ws.recv())
        print("  B <- %s" % json.dumps(hello))
        print("── A pushes a todo over HTTP; B is not polling")
        post("alice", req("""demo_gw.push('phone-A', 'A-1', '{"id": "t1", "list_id": "groceries", "title": "milk",
                             "done": false, "position": 1, "updated_at_ms": 1000}')"""), "A: POST /sync (push)")
        while True:
            m = await asyncio.wait_for(ws.recv(), 5)
            if isinstance(m, bytes) and m[0] == 0:
                break
        print("  B <- binary delta (channel tag 0x00, %d bytes), pushed by the gateway on A's commit:" % (len(m) - 1))
        doc = show(m[1:])
        cursor = [f for f in doc["frames"] if f["type"] == "SUB_END"][-1]["nextCursor"]
        await ws.send(json.dumps({"type": "ack", "cursor": cursor}))
        print("  B -> {\"type\":\"ack\",\"cursor\":%d}   (the client record's cursor is now %s)"
              % (cursor, sql("SELECT cursor FROM syncular.sync_clients WHERE client_id = 'laptop-B'") or "?"))
        print("── B runs a sync round over the socket (0x01 chunks both ways): it checks the milk off")
        await ws.send(b"\x01" + req("""demo_gw.push('laptop-B', 'B-1', '{"id": "t1", "done": true,
                                        "updated_at_ms": 2000}')"""))
        out = b""
        while True:
            m = await asyncio.wait_for(ws.recv(), 5)
            if isinstance(m, bytes) and m[0] == 1:
                out += m[1:]
                if out[-5:] == b"\0\0\0\0\0":
                    break
        print("  B <- round response (%d bytes):" % len(out))
        show(out)
    print("── A pulls over HTTP and sees B's change")
    post("alice", req("demo_gw.pull('phone-A', %s)" % cursor), "A: POST /sync (pull from %d)" % cursor)


asyncio.run(main())
