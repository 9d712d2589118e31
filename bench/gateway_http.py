#!/usr/bin/python3
"""The HTTP cases of the performance issue, through syncular-gateway as an SDK meets it (run
inside scripts/pgenv.sh, or by bench/cases.sh: `BENCH_ONLY=http bash bench/run.sh 1`).

POST /sync rounds over keep-alive connections, JWT (HS256, so the database runs exactly
handle_http), Bun's default `Accept-Encoding` (what the reference figures were measured with;
GW_ACCEPT_ENCODING=identity sends that instead, for the gateway's cost without compression),
the gateway's default flags otherwise; the load comes from wrk (Debian `wrk`, a C client on
epoll, at most two threads), not from Python.  Cases, each with 1, 4 and 16 keep-alive
connections, interleaved, `runs` times, `secs` seconds each:
  * push 1 op: a fresh 1-op commit every round (never a replay; bench/gateway_http.lua), all in
    partition p1, 16 client ids;
  * pull 100 changes: an incremental pull whose cursor is 100 one-change commits behind;
  * bootstrap page 10k rows: the first page (limitSnapshotRows 10,000) of a 20,000-row list.
Prints per case the median rounds/s with every run, the CPU per round of the database backends
and of the gateway (clock ticks of /proc/<pid>/stat; wrk shares the same two cores), and the ratio to the reference server's figure for
the same case in the issue's table (0.15.48 on Bun with its Hono server, measured on this machine
class, not in this run: a cross-run comparison; bench/README.md, session 15, has the reference
measured on this machine beside these cases).  Never asserts on a time.
Usage: gateway_http.py [secs per measurement] [runs]
"""
import base64, hashlib, hmac, http.client, os, re, shutil, signal, statistics, subprocess, sys, tempfile

from gwbench import fixture_db, seed_p1, start_gateway, ticks

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 3
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
GW = os.environ.get("GW_BIN", os.path.join(root, "gateway/syncular-gateway"))
LUA = os.path.join(root, "bench/gateway_http.lua")
DB, CT = "bench_gw_http", "application/vnd.syncular.sync.v2"
CLIENTS = (1, 4, 16)
PUSH_RATE = {1: 2500, 4: 5000, 16: 9000}   # pushes per second a measurement may take at most
# the table: the reference server's rounds/s for 1 / 4 / 16 clients
REFERENCE = {"push 1 op": (317, 453, 586), "pull 100 changes": (172, 346, 301),
             "bootstrap page 10k rows": (11, 15, 15)}


def b64(x):
    return base64.urlsafe_b64encode(x).rstrip(b"=").decode()


HEAD, CLAIMS = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(b'{"sub":"u1"}')
TOKEN = "%s.%s.%s" % (HEAD, CLAIMS, b64(hmac.new(b"bench", ("%s.%s" % (HEAD, CLAIMS)).encode(),
                                                 hashlib.sha256).digest()))
HDRS = {"Content-Type": CT, "Authorization": "Bearer " + TOKEN,
        "Accept-Encoding": os.environ.get("GW_ACCEPT_ENCODING", "gzip, deflate, br")}


def psql(q):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB], input=q, check=True,
                          capture_output=True, text=True).stdout.strip()


def setup(pushes):
    """(bootstrap body, pull body, push bodies): 20,000 rows of list l1 in 40 commits, then 200
    one-change commits; the pull's cursor is 100 commits behind the head"""
    fixture_db(DB)
    boot, inc = seed_p1(psql, 40, 200)
    psql("VACUUM ANALYZE")
    bodies = psql("SELECT encode(gwtest.push('p1', 'w' || (g %% 16), 'p' || g, 'pr' || g, 'title ' || g), 'hex') "
                  "FROM generate_series(1, %d) g" % pushes).split()
    psql("CHECKPOINT")          # not during the first measurement (fsync on)
    return bytes.fromhex(boot), bytes.fromhex(inc), [bytes.fromhex(x) for x in bodies]


def measure(port, gwpid, bodies, clients, secs=SECS):
    """(rounds/s, database ms per round, gateway ms per round): wrk with `clients` keep-alive
    connections (at most two threads: the machine's cores) sending the lines of file `bodies`"""
    backends = [int(x) for x in psql("SELECT pid FROM pg_stat_activity WHERE application_name = "
                                     "'syncular-gateway' AND datname = '%s'" % DB).split()]
    threads = min(clients, 2)
    g0, d0 = ticks(gwpid), sum(ticks(p) for p in backends)
    cmd = ["wrk", "-t", str(threads), "-c", str(clients), "-d", "%gs" % secs, "-s", LUA]
    for k, v in HDRS.items():
        cmd += ["-H", "%s: %s" % (k, v)]
    out = subprocess.run(cmd + ["http://127.0.0.1:%d/sync-api/sync" % port, "--", bodies, str(threads)],
                         check=True, capture_output=True, text=True).stdout
    g1, d1 = ticks(gwpid), sum(ticks(p) for p in backends)
    rate = float(re.search(r"^Requests/sec:\s+([0-9.]+)", out, re.M).group(1))
    n = int(re.search(r"^\s*(\d+) requests in", out, re.M).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if bad:
        print("  (%s rounds did not answer 200)" % bad.group(1))
    if re.search(r"^wrapped: [1-9]", out, re.M):
        print("  (a thread ran out of prepared requests and repeated some: the figure is high)")
    hz = os.sysconf("SC_CLK_TCK")
    return rate, (d1 - d0) * 1000.0 / hz / max(n, 1), (g1 - g0) * 1000.0 / hz / max(n, 1)


def write_lines(path, bodies):
    with open(path, "w") as f:
        f.write("".join(b.hex() + "\n" for b in bodies))
    return path


def main():
    if shutil.which("wrk") is None:
        print("skipped: the HTTP cases need wrk (apt-get install wrk)")
        return
    if not os.access(GW, os.X_OK):
        print("skipped: %s is not built (make gateway)" % GW)
        return
    boot, inc, pushes = setup(int(sum(PUSH_RATE.values()) * SECS * RUNS + PUSH_RATE[4]))
    gw, port = start_gateway(GW, DB, ["--jwt-secret", "bench", "--partition", "p1"])
    res, tmp = {}, tempfile.mkdtemp()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        for name, body in (("bootstrap page", boot), ("pull 100 changes", inc)):
            c.request("POST", "/sync-api/sync", body, HDRS)
            r = c.getresponse()
            print("# %s: %d bytes on the wire (%s)" % (name, len(r.read()), r.getheader("Content-Encoding") or "identity"))
        files = {"pull 100 changes": write_lines(os.path.join(tmp, "pull"), [inc]),
                 "bootstrap page 10k rows": write_lines(os.path.join(tmp, "boot"), [boot])}
        # a warm-up of every case (the pool's sessions, caches), not counted
        nxt = int(PUSH_RATE[4] * 1)
        for f in (write_lines(os.path.join(tmp, "push"), pushes[:nxt]), files["pull 100 changes"],
                  files["bootstrap page 10k rows"]):
            measure(port, gw.pid, f, 4, 1)
        for _ in range(RUNS):
            for clients in CLIENTS:
                for case in REFERENCE:
                    f = files.get(case)
                    if f is None:      # fresh pushes for every measurement
                        per = int(PUSH_RATE[clients] * SECS)
                        f = write_lines(os.path.join(tmp, "push"), pushes[nxt:nxt + per])
                        nxt += per
                    res.setdefault((case, clients), []).append(measure(port, gw.pid, f, clients))
    finally:
        gw.send_signal(signal.SIGTERM)
        gw.wait()
        shutil.rmtree(tmp)
    print("| case, clients | rounds/s, median (runs) | reference /s | ratio | CPU per round, database + gateway, ms |")
    print("|---|---|---|---|---|")
    for case, ref in REFERENCE.items():
        for i, clients in enumerate(CLIENTS):
            xs = res[(case, clients)]
            tps = statistics.median(x[0] for x in xs)
            print("| %s, %d | %.1f (%s) | %d | %.2f | %.3f + %.3f |" % (
                case, clients, tps, ", ".join("%.0f" % x[0] for x in xs), ref[i], tps / ref[i],
                statistics.median(x[1] for x in xs), statistics.median(x[2] for x in xs)))


if __name__ == "__main__":
    main()
