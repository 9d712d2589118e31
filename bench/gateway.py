#!/usr/bin/python3
"""Gateway bench case (run by bench/cases.sh inside pg_virtualenv): POST /sync push rounds through
syncular-gateway (JWT HS256, so the database runs exactly handle_http) vs the same rounds as SQL
calls of syncular.handle_http by pgbench, 2 clients
each, fresh commits every round (the applied path).  Prints one row: gateway tps, direct tps and
their ratio (the issue's target: the gateway costs at most 15%, ratio >= 0.85), and the gateway
process's own CPU per round."""
import base64, hashlib, hmac, http.client, os, signal, subprocess, sys, tempfile, threading, time
from gwbench import start_gateway

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10
DB, CLIENTS, N = "bench_gw", 2, 40000
CT = "application/vnd.syncular.sync.v2"


def psql(q, *a):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, *a, "-c", q], check=True,
                          capture_output=True, text=True).stdout


subprocess.run(["createdb", DB], check=True)
subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
psql("SELECT syncular.handle(gwtest.pull('p1', 'bench-0'), 'p1', 'u1')")       # the log epoch
# fresh commits: ids 1..N for the direct run, N+1..2N for the gateway run; client per id parity
psql("""CREATE TABLE gwtest.reqs AS SELECT g AS id,
          gwtest.push('p1', 'bench-' || (g %% %d), 'k' || g, 'r' || g, 'title ' || g) AS body
          FROM generate_series(1, %d) g;
        ALTER TABLE gwtest.reqs ADD PRIMARY KEY (id); CREATE SEQUENCE gwtest.seq; ANALYZE gwtest.reqs""" % (CLIENTS, 2 * N))

# direct: pgbench, one handle_http call per transaction
with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
    f.write("SELECT status FROM syncular.handle_http((SELECT body FROM gwtest.reqs "
            "WHERE id = (SELECT nextval('gwtest.seq'))), 'p1', 'u1');\n")
out = subprocess.run(["pgbench", "-n", "-T", str(int(secs)), "-c", str(CLIENTS), "-j", str(CLIENTS), "-f", f.name, DB],
                     capture_output=True, text=True).stdout
direct = next((float(l.split()[2]) for l in out.splitlines() if l.startswith("tps")), 0.0)
used = int(psql("SELECT last_value FROM gwtest.seq"))
assert used < N, "not enough prepared requests (%d)" % used

# gateway: the same rounds over HTTP keep-alive connections
gw, port = start_gateway(os.path.join(root, "gateway/syncular-gateway"), DB,
                         ["--pool", str(CLIENTS), "--jwt-secret", "bench", "--partition", "p1"])
bodies = [bytes.fromhex(x) for x in psql("SELECT encode(body, 'hex') FROM gwtest.reqs WHERE id > %d ORDER BY id" % N).split()]
b64 = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()  # noqa: E731
head, claims = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(b'{"sub":"u1"}')
token = "%s.%s.%s" % (head, claims, b64(hmac.new(b"bench", ("%s.%s" % (head, claims)).encode(), hashlib.sha256).digest()))
count, errors, stop = [0] * CLIENTS, [0], time.time() + secs


def client(i):
    c = http.client.HTTPConnection("127.0.0.1", port)
    k = i
    while time.time() < stop and k < len(bodies):
        c.request("POST", "/sync-api/sync", bodies[k], {"Content-Type": CT, "Authorization": "Bearer " + token})
        r = c.getresponse(); r.read()
        if r.status != 200:
            errors[0] += 1
        count[i] += 1
        k += CLIENTS


def cpu_ticks(pid):
    """user + system CPU of a process, in clock ticks (/proc/<pid>/stat fields 14 and 15)"""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


ts = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
c0 = cpu_ticks(gw.pid)
t0 = time.time()
for t in ts:
    t.start()
for t in ts:
    t.join()
via = sum(count) / (time.time() - t0)
gw_ms = (cpu_ticks(gw.pid) - c0) * 1000.0 / os.sysconf("SC_CLK_TCK") / max(sum(count), 1)
gw.send_signal(signal.SIGTERM); gw.wait()
print("%-44s %10.2f %10.2f %8.3f" % ("POST /sync push rounds via gateway, tps", via, direct, via / direct if direct else 0))
# On a machine whose cores the backends already saturate, the load generator's and the gateway's
# own CPU come out of the rounds' share: this figure is the gateway's cost independent of that.
print("%-44s %10.3f" % ("  gateway CPU per round, ms", gw_ms))
if errors[0]:
    print("  (%d gateway rounds did not answer 200)" % errors[0])
