#!/usr/bin/python3
"""Realtime bench cases of syncular-gateway (run by bench/cases.sh inside pg_virtualenv):
  * commit-to-delta latency: N sockets registered on one partition (default 1,000) held by a C
    client (bench/rtclient.c: one epoll loop, timestamps at read), 50 commits 50 ms apart; per
    socket and commit, p50/p99 of the delta's arrival measured from the push response (the commit
    is durable and notified before the response is sent: the issue's commit-to-delta) and from the
    push's HTTP request (the whole path: the push round too);
  * memory per idle socket: the gateway's RSS growth while the N sockets are open, / N;
  * reconnect storm: all N sockets close and reconnect at once; every one gets its hello and the
    next commit's delta (they converge).
Prints rows; never fails on a time.  Usage: gateway_realtime.py [sockets]"""
import asyncio, http.client, os, re, resource, signal, subprocess, sys, time

import tempfile

import websockets
from gwbench import start_gateway

TMPD = tempfile.mkdtemp(prefix="gwbench-")

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
DB, CT, KEY = "bench_gw_rt", "application/vnd.syncular.sync.v2", "u1@p1"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * N + 256)), hard))


def psql(q):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c", q], check=True,
                          capture_output=True, text=True).stdout.strip()


subprocess.run(["createdb", DB], check=True)
subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
gw, port = start_gateway(os.path.join(root, "gateway/syncular-gateway"), DB,
                         ["--auth-headers", "x-api-key", "--ws-max-sockets", str(4 * N)] + sys.argv[2:],
                         stderr=open(os.environ.get("GW_BENCH_LOG", os.devnull), "w"))


def post(body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", "/sync-api/sync", body, {"Content-Type": CT, "x-api-key": KEY})
    r = c.getresponse(); data = r.read(); c.close()
    assert r.status == 200, data
    return data


def req(expr):
    return bytes.fromhex(psql("SELECT encode(%s, 'hex')" % expr))


def rss_kb():
    with open("/proc/%d/status" % gw.pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


for _ in range(2):                                   # epoch, then the registering pull
    post(req("gwtest.pull('p1', 'lat')"))
pushes = [req("gwtest.push('p1', 'writer', 'c%d', 'r%d', 'x')" % (i, i)) for i in range(110)]
URI = "ws://127.0.0.1:%d/sync-api/realtime?clientId=lat&apiKey=%s" % (port, KEY)


async def open_all():
    socks = []
    for i in range(0, N, 100):                       # in batches, as clients arrive
        socks += await asyncio.gather(*[websockets.connect(URI, max_queue=None) for _ in range(min(100, N - i))])
    await asyncio.gather(*[ws.recv() for ws in socks])   # hello
    return socks


def c_client_latency():
    """(commit-to-delta ms, whole-path ms, bytes per idle socket) with the C client."""
    exe = os.path.join(TMPD, "rtclient")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(root, "bench/rtclient.c")], check=True)
    rss0 = rss_kb()
    cl = subprocess.Popen([exe, "127.0.0.1", str(port), URI.split(str(port), 1)[1], str(N), "50"],
                          stdout=subprocess.PIPE, text=True)
    assert cl.stdout.readline().strip() == "READY"
    time.sleep(1)
    per_socket = (rss_kb() - rss0) * 1024 / N
    from_commit, whole = [], []
    for k in range(50):
        t0 = time.time()
        post(pushes[k])
        t1 = time.time()
        arrivals = [int(x) / 1e6 for x in cl.stdout.readline().split()]
        assert len(arrivals) == N
        from_commit += [(a - t1) * 1000 for a in arrivals]
        whole += [(a - t0) * 1000 for a in arrivals]
        time.sleep(0.05)
    cl.wait(30)
    return sorted(from_commit), sorted(whole), per_socket


async def main():
    loop = asyncio.get_running_loop()
    from_commit, whole, per_socket = c_client_latency()
    p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    print("%-52s %10.1f %10.1f" % ("commit-to-delta ms (from the push response), %d sockets: p50 / p99" % N,
                                   p(from_commit, 0.5), p(from_commit, 0.99)))
    print("%-52s %10.1f %10.1f" % ("whole path ms (from the push request): p50 / p99", p(whole, 0.5), p(whole, 0.99)))
    print("%-52s %10.0f" % ("gateway memory per idle socket, bytes", per_socket))
    post(req("gwtest.pull('p1', 'lat')"))          # the record's cursor catches up (no acks above)
    socks = await open_all()
    # a Python asyncio client for comparison (the client's own cost: 1,000 recv() on 2 cores)
    arrivals = []

    async def recv_time(ws, t0):
        await ws.recv()
        arrivals.append((time.time() - t0) * 1000)
    t0 = time.time()
    fut = loop.run_in_executor(None, post, pushes[50])
    await asyncio.gather(*[recv_time(ws, t0) for ws in socks])
    await fut
    arrivals.sort()
    print("%-52s %10.1f %10.1f" % ("  Python client, whole path ms, one commit: p50 / p99", p(arrivals, 0.5), p(arrivals, 0.99)))
    # reconnect storm
    await asyncio.gather(*[ws.close() for ws in socks])
    t0 = time.time()
    socks = await asyncio.gather(*[websockets.connect(URI, max_queue=None, open_timeout=60) for _ in range(N)])
    await asyncio.gather(*[ws.recv() for ws in socks])
    t1 = time.time()
    await loop.run_in_executor(None, post, pushes[51])
    got = await asyncio.gather(*[asyncio.wait_for(ws.recv(), 30) for ws in socks])
    ok = sum(1 for m in got if isinstance(m, bytes) and m[0] == 0)
    print("%-44s %10.2f %10d" % ("reconnect storm: s until all hellos, converged", t1 - t0, ok))
    await asyncio.gather(*[ws.close() for ws in socks])


try:
    asyncio.run(main())
finally:
    gw.send_signal(signal.SIGTERM); gw.wait()
