#!/usr/bin/python3
"""Remote operations bench (REMOTE.md §2): a small scoped registered query (20 rows of one list)
three ways, 2 clients each for `secs` seconds, on the cluster of PGHOST/PGPORT:
  sql      the same SELECT over libpq (pgbench), the floor;
  in-db    syncular.operations_http with the encoded request (pgbench): decode, registration
           read, scope check, bound SQL, normalization, encode;
  gateway  POST /sync-api/operations through syncular-gateway (JWT HS256), HTTP keep-alive.
Prints operations/s of each and the ratios to sql.  Run: bash scripts/pgenv.sh -- python3
bench/operations.py [secs]."""
import base64, hashlib, hmac, http.client, json, os, subprocess, sys, tempfile, threading, time
from gwbench import start_gateway

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10
DB, CLIENTS = "bench_ops", 2
OPS_CT = "application/vnd.syncular.operations.v1+json"
BODY = ('{"t":"object","v":[["revision",{"t":"integer","v":"1"}],["kind",{"t":"string","v":"query"}],'
        '["clientId",{"t":"string","v":"bench"}],["operationId",{"t":"string","v":"tasksInList"}],'
        '["params",{"t":"object","v":[["listId",{"t":"string","v":"l1"}]]}]]}')


def psql(q):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-c", q], check=True,
                          capture_output=True, text=True).stdout


def pgbench(sql):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql + "\n")
    out = subprocess.run(["pgbench", "-n", "-T", str(int(secs)), "-c", str(CLIENTS), "-j", str(CLIENTS), "-f", f.name, DB],
                         capture_output=True, text=True).stdout
    return next((float(l.split()[2]) for l in out.splitlines() if l.startswith("tps")), 0.0)


subprocess.run(["dropdb", "--if-exists", DB], check=True)
subprocess.run(["createdb", DB], check=True)
subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f",
                os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)
psql("""SELECT syncular.push('p1', 'u1', 'seed', jsonb_build_array(jsonb_build_object('clientCommitId', 'c1',
          'operations', (SELECT jsonb_agg(jsonb_build_object('table', 'tasks', 'op', 'upsert', 'row',
             jsonb_build_object('id', 't' || g, 'list_id', CASE WHEN g <= 20 THEN 'l1' ELSE 'l2' END, 'title', 'task ' || g)))
             FROM generate_series(1, 200) g))));
        SELECT syncular.register_query('tasksInList', 'SELECT id, title FROM tasks WHERE list_id = $1 ORDER BY id',
          '[{"name": "id", "type": "string", "nullable": false}, {"name": "title", "type": "string"}]', ARRAY['tasks'],
          params => '[{"name": "listId", "type": "string"}]',
          coverage => '[{"table": "tasks", "variable": "list_id", "param": "listId"}]', max_rows => 100);
        ANALYZE""")
assert '"t":"array"' in psql("SELECT convert_from(body, 'UTF8') FROM syncular.operations_http(convert_to('%s', 'UTF8'), 'p1', 'u1')" % BODY)

sql = pgbench("SELECT id, title FROM public.tasks WHERE _sync_partition = 'p1' AND list_id = 'l1' ORDER BY id;")
indb = pgbench("SELECT status FROM syncular.operations_http(convert_to('%s', 'UTF8'), 'p1', 'u1');" % BODY)

gw, port = start_gateway(os.path.join(root, "gateway/syncular-gateway"), DB,
                         ["--pool", str(CLIENTS), "--jwt-secret", "bench", "--partition", "p1"])
try:
    b64 = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()  # noqa: E731
    head, claims = b64(b'{"alg":"HS256","typ":"JWT"}'), b64(b'{"sub":"u1"}')
    token = "%s.%s.%s" % (head, claims, b64(hmac.new(b"bench", ("%s.%s" % (head, claims)).encode(), hashlib.sha256).digest()))
    count, bad, stop = [0] * CLIENTS, [0], time.time() + secs

    def worker(i):
        c = http.client.HTTPConnection("127.0.0.1", port)
        h = {"Content-Type": OPS_CT, "Authorization": "Bearer " + token}
        while time.time() < stop:
            c.request("POST", "/sync-api/operations", BODY.encode(), h)
            r = c.getresponse()
            data = r.read()
            if r.status != 200 or b'"rows"' not in data:
                bad[0] += 1
            count[i] += 1

    t0 = time.time()
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(CLIENTS)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    gwops = sum(count) / (time.time() - t0)
finally:
    gw.terminate()
    gw.wait()
assert bad[0] == 0, "%d bad answers" % bad[0]
print("operations (20-row scoped query, %d clients, %gs): sql %.0f/s, in-db %.0f/s (%.2f), gateway %.0f/s (%.2f)"
      % (CLIENTS, secs, sql, indb, indb / sql, gwops, gwops / sql))
