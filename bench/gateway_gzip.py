#!/usr/bin/python3
"""Gateway CPU per round and gzip on the event loop (run inside scripts/pgenv.sh or pg_virtualenv).

Seeds 10,000 rows (list l1) and 100 more 1-op commits in partition p1, then for one gateway
binary (GW_BIN, default gateway/syncular-gateway; extra arguments are gateway flags):
  * CPU per round, gateway process vs the database backends serving it (/proc/<pid>/stat of the
    gateway and of its pool sessions, found by application_name), for: push 1 op, pull 100
    changes (cursor 100 commits behind), bootstrap page of 10,000 rows; 4 client processes,
    keep-alive, Accept-Encoding: gzip (what an SDK sends);
  * the p50 / p99 of a small round (1-op push) sent one at a time, and of GET healthz (no
    database: the event loop's own delay), alone and while 16 client processes bootstrap
    10,000-row pages (gzip accepted) through the same gateway.
Prints rows; never fails on a time.  Usage: gateway_gzip.py [seconds per case] [gateway flags...]
"""
import http.client, multiprocessing as mp, os, signal, subprocess, sys, time

from gwbench import fixture_db, seed_p1, start_gateway, ticks

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 5
FLAGS = sys.argv[2:]
GW = os.environ.get("GW_BIN", os.path.join(root, "gateway/syncular-gateway"))
DB, CT, KEY = "bench_gw_gzip", "application/vnd.syncular.sync.v2", "u1@p1"
HDRS = {"Content-Type": CT, "x-api-key": KEY, "Accept-Encoding": "gzip"}


def psql(q):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB], input=q, check=True,
                          capture_output=True, text=True).stdout.strip()


def hexes(q):
    return [bytes.fromhex(x) for x in psql(q).split()]


def setup():
    fixture_db(DB)
    boot, inc = seed_p1(psql, 20, 100)
    pushes = hexes("SELECT encode(gwtest.push('p1', 'w' || (g % 4), 'p' || g, 'pr' || g, 't'), 'hex') "
                   "FROM generate_series(1, 8000) g")
    return bytes.fromhex(boot), bytes.fromhex(inc), pushes


def loop_client(port, bodies, stop_at, out):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    n, k = 0, 0
    while time.time() < stop_at:
        c.request("POST", "/sync-api/sync", bodies[k % len(bodies)], HDRS)
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
        n += 1; k += 1
    out.put(n)


def timed_client(port, bodies, secs, out):
    """latencies (ms) of rounds sent one at a time, 10 ms apart, for secs from its own start;
    bodies None: GET healthz (no database: the event loop's own delay)"""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    lat, k, stop_at = [], 0, time.time() + secs
    while time.time() < stop_at:
        t0 = time.perf_counter()
        if bodies is None:
            c.request("GET", "/sync-api/healthz")
        else:
            c.request("POST", "/sync-api/sync", bodies[k], HDRS)
            k += 1
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
        lat.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.01)
    out.put(lat)


def run_case(port, gwpid, bodies_per_client, secs):
    backends = [int(x) for x in psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'syncular-gateway' "
                                     "AND datname = '%s'" % DB).split()]
    q = mp.Queue()
    stop_at = time.time() + secs
    ps = [mp.Process(target=loop_client, args=(port, b, stop_at, q)) for b in bodies_per_client]
    g0, d0 = ticks(gwpid), sum(ticks(p) for p in backends)
    t0 = time.time()
    for p in ps:
        p.start()
    n = sum(q.get() for _ in ps)
    for p in ps:
        p.join()
    secs = time.time() - t0
    hz = os.sysconf("SC_CLK_TCK")
    g1, d1 = ticks(gwpid), sum(ticks(p) for p in backends)
    return n / secs, (g1 - g0) * 1000.0 / hz / max(n, 1), (d1 - d0) * 1000.0 / hz / max(n, 1)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def main():
    boot, inc, pushes = setup()
    gw, port = start_gateway(GW, DB, ["--auth-headers", "x-api-key"] + FLAGS)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        for name, body in (("bootstrap", boot), ("pull 100", inc)):
            c.request("POST", "/sync-api/sync", body, HDRS); r = c.getresponse(); data = r.read()
            c.request("POST", "/sync-api/sync", body, {"Content-Type": CT, "x-api-key": KEY}); r2 = c.getresponse()
            print("# %s answer: %d bytes, %d on the wire (%s)" % (name, len(r2.read()), len(data),
                                                                 r.getheader("Content-Encoding") or "identity"))
        print("%-34s %10s %14s %14s %8s" % ("case, 4 clients", "rounds/s", "gateway ms", "database ms", "gw/db"))
        quarter = len(pushes) // 8
        for name, bodies in (("push 1 op", [pushes[i * quarter:(i + 1) * quarter] for i in range(4)]),
                             ("pull 100 changes", [[inc]] * 4), ("bootstrap page 10k rows", [[boot]] * 4)):
            tps, gms, dms = run_case(port, gw.pid, bodies, SECS)
            print("%-34s %10.1f %14.3f %14.3f %8.2f" % (name, tps, gms, dms, gms / dms if dms else 0), flush=True)
        # small rounds (and healthz) alone, then beside 16 bootstrapping clients
        small = pushes[4 * quarter:]
        half = len(small) // 2

        def timed(bodies_a, bodies_b):
            qa, qb = mp.Queue(), mp.Queue()
            ta = mp.Process(target=timed_client, args=(port, bodies_a, SECS, qa))
            tb = mp.Process(target=timed_client, args=(port, None, SECS, qb))
            ta.start(); tb.start()
            a, b = qa.get(), qb.get()
            ta.join(); tb.join()
            return a, b
        alone, halone = timed(small[:half], None)
        bq = mp.Queue()
        ps = [mp.Process(target=loop_client, args=(port, [boot], time.time() + SECS + 6, bq)) for _ in range(16)]
        for p in ps:
            p.start()
        time.sleep(2)
        busy, hbusy = timed(small[half:], None)
        pages = sum(bq.get() for _ in ps)
        for p in ps:
            p.join()
        for name, xs in (("small round (push 1 op) alone", alone), ("  healthz alone", halone),
                         ("small round beside 16 bootstraps", busy), ("  healthz beside 16 bootstraps", hbusy)):
            print("%-50s %8.1f %8.1f  (%d)" % (name + ", ms p50 / p99", pct(xs, 0.5), pct(xs, 0.99), len(xs)))
        print("%-50s %8d" % ("bootstrap pages served meanwhile", pages), flush=True)
    finally:
        gw.send_signal(signal.SIGTERM); gw.wait()


if __name__ == "__main__":
    main()
