#!/usr/bin/python3
"""Group commit bench (run by bench/cases.sh inside the bench cluster, or alone:
`bash scripts/pgenv.sh -c fsync=on -- python3 bench/gateway_group_commit.py [secs] [runs]`):
1-op push rounds over HTTP through syncular-gateway (JWT, --pool 4), all of one partition, from
1 client and from 4 clients (each a process with a keep-alive connection, fresh commits every
round), with group commit off (--group-commit 1) and on (the default), runs interleaved; and the
same requests as SQL calls of syncular.handle_http by pgbench, 1 and 4 clients, which cannot be
grouped.  Prints the medians (tps), the 4-client / 1-client ratio of each (the issue's target:
4 clients on one partition at least as fast as 1), and the rounds per group commit.  Never
asserts on a time."""
import base64, hashlib, hmac, http.client, multiprocessing, os, re, signal, statistics, subprocess, sys, tempfile, time
from gwbench import start_gateway

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
DB, CT = "bench_gc", "application/vnd.syncular.sync.v2"
PER = int(3200 * secs)     # requests one measurement may take (all its clients together)


def psql(q):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c", q], check=True,
                          capture_output=True, text=True).stdout


subprocess.run(["dropdb", "--if-exists", DB], check=True, capture_output=True)
subprocess.run(["createdb", DB], check=True)
subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
psql("SELECT syncular.handle(gwtest.pull('p1', 'bench-0'), 'p1', 'u1')")       # the log epoch
# request g: commit 'k<g>' of client 'bench-<g mod 4>', row 'r<g>'; every measurement takes
# fresh ones, PER of them: (off, on) x runs x (1, 4 clients), and pgbench's two
psql("""CREATE TABLE gwtest.reqs AS SELECT g AS id,
          gwtest.push('p1', 'bench-' || (g %% 4), 'k' || g, 'r' || g, 'title ' || g) AS body
          FROM generate_series(1, %d) g;
        ALTER TABLE gwtest.reqs ADD PRIMARY KEY (id); CREATE SEQUENCE gwtest.seq; ANALYZE gwtest.reqs"""
     % (PER * (4 * runs + 2) + 1))
bodies = [bytes.fromhex(x) for x in psql("SELECT encode(body, 'hex') FROM gwtest.reqs ORDER BY id").split()]
b64 = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()  # noqa: E731
head, claims = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(b'{"sub":"u1"}')
token = "%s.%s.%s" % (head, claims, b64(hmac.new(b"bench", ("%s.%s" % (head, claims)).encode(), hashlib.sha256).digest()))
next_id = [0]


def client(port, ids, stop, out):
    c = http.client.HTTPConnection("127.0.0.1", port)
    n = bad = 0
    for k in ids:
        if time.time() >= stop:
            break
        c.request("POST", "/sync-api/sync", bodies[k], {"Content-Type": CT, "Authorization": "Bearer " + token})
        r = c.getresponse()
        r.read()
        n += 1
        bad += r.status != 200
    out.put((n, bad))


def via_gateway(port, clients):
    """tps of `clients` processes for secs seconds, each with its own keep-alive connection"""
    out, stop = multiprocessing.Queue(), time.time() + secs + 0.2
    base = next_id[0]
    next_id[0] += PER
    ps = [multiprocessing.Process(target=client, args=(port, range(base + i, base + PER, clients), stop, out))
          for i in range(clients)]
    t0 = time.time()
    for p in ps:
        p.start()
    got = [out.get() for _ in ps]
    took = time.time() - t0
    for p in ps:
        p.join()
    if sum(b for _, b in got):
        print("  (%d rounds did not answer 200)" % sum(b for _, b in got))
    if any(n >= PER // clients for n, _ in got):
        print("  (a client ran out of prepared requests: the figure is low)")
    return sum(n for n, _ in got) / took


def metric(port, name):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/sync-api/metrics")
    m = re.search(r"^%s (\d+)$" % name, c.getresponse().read().decode(), re.M)
    return int(m.group(1)) if m else 0


def direct(clients):
    """pgbench: one handle_http call per transaction, requests from the same table"""
    psql("SELECT setval('gwtest.seq', %d)" % next_id[0])     # (ids start at 1; bodies[] at 0)
    next_id[0] += PER
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("SELECT status FROM syncular.handle_http((SELECT body FROM gwtest.reqs "
                "WHERE id = (SELECT nextval('gwtest.seq'))), 'p1', 'u1');\n")
    out = subprocess.run(["pgbench", "-n", "-T", str(int(secs)), "-c", str(clients), "-j", str(clients), "-f", f.name, DB],
                         capture_output=True, text=True).stdout
    os.unlink(f.name)
    return next((float(line.split()[2]) for line in out.splitlines() if line.startswith("tps")), 0.0)


binary = os.path.join(root, "gateway/syncular-gateway")
res = {k: [] for k in ("off1", "off4", "on1", "on4")}
per_batch = []
for r in range(runs):
    for mode, flag in (("off", "1"), ("on", "16")):
        gw, port = start_gateway(binary, DB, ["--pool", "4", "--jwt-secret", "bench", "--partition", "p1",
                                              "--group-commit", flag])
        for clients in (1, 4):
            res["%s%d" % (mode, clients)].append(via_gateway(port, clients))
        if mode == "on":
            n = metric(port, "syncular_gateway_group_commits_total")
            per_batch.append(metric(port, "syncular_gateway_group_commit_rounds_total") / n if n else 0.0)
        gw.send_signal(signal.SIGTERM)
        gw.wait()
d1, d4 = direct(1), direct(4)
med = {k: statistics.median(v) for k, v in res.items()}
print("| push 1-op, one partition | 1 client tps | 4 clients tps | 4 / 1 |")
print("|---|---|---|---|")
for mode, label in (("off", "gateway, --group-commit 1 (off)"), ("on", "gateway, --group-commit 16")):
    print("| %s | %.1f | %.1f | %.3f |" % (label, med[mode + "1"], med[mode + "4"], med[mode + "4"] / med[mode + "1"]))
print("| pgbench, handle_http per transaction | %.1f | %.1f | %.3f |" % (d1, d4, d4 / d1 if d1 else 0))
print("each run (off 1 / off 4 / on 1 / on 4): " + "; ".join(
    "%.0f / %.0f / %.0f / %.0f" % (res["off1"][i], res["off4"][i], res["on1"][i], res["on4"][i]) for i in range(runs)))
print("rounds per group commit (4 clients + 1 client runs): " + ", ".join("%.2f" % x for x in per_batch))
