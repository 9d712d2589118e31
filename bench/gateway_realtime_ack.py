#!/usr/bin/python3
"""Realtime commit-to-delta latency with clients that ack as the SDK does (SPEC §8.2).

N sockets on one partition, each its own client (clientId lat<i>, registered by a pull), held by
bench/rtclient.c, which acks every delta at once ({"type":"ack","cursor":n}).  50 commits 50 ms
apart; per socket and commit the delta's arrival is measured from the push response (the commit
is durable and notified before the response is sent).  Prints p50 / p95 / p99 in ms and the
number of statements calling syncular.realtime_ack (or realtime_ack_many) per commit with their
execution time per commit, and the same for the realtime_fanout calls (pg_stat_statements: run
with shared_preload_libraries=pg_stat_statements,syncular, else "-").  Never fails on a time.

Usage (inside scripts/pgenv.sh or pg_virtualenv):
  gateway_realtime_ack.py SOCKETS [RUNS] [gateway flags...]
  GW_BIN=path/to/syncular-gateway selects the gateway binary (default gateway/syncular-gateway);
  BENCH_NO_ACK=1: the sockets do not ack (the comparison); BENCH_ONE_CLIENT=1: every socket is
  client "lat" (one registration, one scope resolver call per fanout: the older bench's setup);
  BENCH_PER_COMMIT=1 also prints each commit's p50 and slowest delivery (stderr).
"""
import http.client, os, resource, signal, subprocess, sys, tempfile, time

from gwbench import start_gateway

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
FLAGS = sys.argv[3:]
GW = os.environ.get("GW_BIN", os.path.join(root, "gateway/syncular-gateway"))
COMMITS = 50
DB, CT, KEY = "bench_gw_rtack", "application/vnd.syncular.sync.v2", "u1@p1"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * N + 256)), hard))
TMPD = tempfile.mkdtemp(prefix="gwbench-")


def psql(q, db=DB):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", q], check=True,
                          capture_output=True, text=True).stdout.strip()


def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", "/sync-api/sync", body, {"Content-Type": CT, "x-api-key": KEY})
    r = c.getresponse(); data = r.read(); c.close()
    assert r.status == 200, data
    return data


def one_run(exe):
    subprocess.run(["dropdb", "--if-exists", DB], check=True, capture_output=True)
    subprocess.run(["createdb", DB], check=True)
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                    os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
    pss = psql("SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_stat_statements'") == "1" and \
        "pg_stat_statements" in psql("SHOW shared_preload_libraries")
    if pss:
        psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    one = bool(os.environ.get("BENCH_ONE_CLIENT"))
    for _ in range(2):       # the epoch, then the registering pull of every client
        psql("SELECT count(syncular.handle(gwtest.pull('p1', 'lat' || %s), 'p1', 'u1')) "
             "FROM generate_series(0, %d) i" % ("''" if one else "i", 0 if one else N - 1))
    pushes = [bytes.fromhex(psql("SELECT encode(gwtest.push('p1', 'writer', 'c%d', 'r%d', 'x'), 'hex')" % (i, i)))
              for i in range(COMMITS)]
    gw, port = start_gateway(GW, DB, ["--auth-headers", "x-api-key", "--ws-max-sockets", str(4 * N)] + FLAGS,
                             stderr=open(os.environ.get("GW_BENCH_LOG", os.devnull), "w"))
    try:
        head = int(psql("SELECT coalesce(max(commit_seq), 0) FROM syncular.sync_commits WHERE partition = 'p1'"))
        path = "/sync-api/realtime?clientId=lat%s&apiKey=%s" % ("" if one else "%d", KEY)
        ack = [] if os.environ.get("BENCH_NO_ACK") else [str(head)]
        cl = subprocess.Popen([exe, "127.0.0.1", str(port), path, str(N), str(COMMITS)] + ack,
                              stdout=subprocess.PIPE, text=True)
        assert cl.stdout.readline().strip() == "READY"
        time.sleep(1)
        if pss:
            psql("SELECT pg_stat_statements_reset()")
        lat = []
        for k in range(COMMITS):
            post(port, pushes[k])
            t1 = time.time()
            arrivals = [int(x) / 1e6 for x in cl.stdout.readline().split()]
            assert len(arrivals) == N
            lat += [(a - t1) * 1000 for a in arrivals]
            if os.environ.get("BENCH_PER_COMMIT"):
                mine = sorted((a - t1) * 1000 for a in arrivals)
                print("  commit %2d: p50 %6.1f  max %6.1f ms" % (k + 1, mine[len(mine) // 2], mine[-1]),
                      file=sys.stderr, flush=True)
            time.sleep(0.05)
        cl.wait(30)
        if os.environ.get("BENCH_PER_COMMIT"):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", "/sync-api/metrics")
            for line in c.getresponse().read().decode().splitlines():
                if line.startswith("syncular_gateway_pool_preferred_jobs_total{"):
                    print("  " + line, file=sys.stderr, flush=True)
            c.close()
        time.sleep(0.5)
        calls = fan = "-"
        if pss:
            n, ms = psql("SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0) FROM pg_stat_statements "
                         "WHERE query LIKE '%realtime_ack%'").split("|")
            calls = "%.1f (%.1f ms)" % (int(n) / COMMITS, float(ms) / COMMITS)
            n, ms = psql("SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0) FROM pg_stat_statements "
                         "WHERE query LIKE '%realtime_fanout%'").split("|")
            fan = "%.1f (%.1f ms)" % (int(n) / COMMITS, float(ms) / COMMITS)
        stored = psql("SELECT count(*) FROM syncular.sync_clients WHERE partition = 'p1' AND client_id LIKE 'lat%%' "
                      "AND cursor = %d" % (head + COMMITS))
    finally:
        gw.send_signal(signal.SIGTERM); gw.wait()
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]  # noqa: E731
    return p(0.5), p(0.95), p(0.99), calls, fan, stored


exe = os.path.join(TMPD, "rtclient")
subprocess.run(["cc", "-O2", "-o", exe, os.path.join(root, "bench/rtclient.c")], check=True)
print("%-8s %-4s %8s %8s %8s %22s %22s %14s" % ("sockets", "run", "p50 ms", "p95 ms", "p99 ms",
                                                  "ack stmts/commit (ms)", "fanouts/commit (ms)", "cursors stored"))
for r in range(RUNS):
    p50, p95, p99, calls, fan, stored = one_run(exe)
    print("%-8d %-4d %8.1f %8.1f %8.1f %22s %22s %14s" % (N, r + 1, p50, p95, p99, calls, fan, stored), flush=True)
