"""GET <mount>/metrics: Prometheus text parsed with Debian's python3-prometheus-client; the
gateway's counters move by the expected amounts, the database part is queried at most once per
--metrics-interval, a cluster without the preloaded library exports only syncular_stats_preloaded 0,
and a role that may not read the statistics gets syncular_stats_readable 0."""
import asyncio, json, os, shutil, subprocess, tempfile

import websockets
from prometheus_client.parser import text_string_to_metric_families

from gwlib import BIN, Gateway, conninfo, free_port, frames, psql, req_bytes
from realtime_tests import KEY, arun, hello, next_msg, pull_http, push_http, url  # noqa: F401


def scrape(g):
    """(samples {(name, sorted label items): value}, families {name: type}, raw body)"""
    st, hd, body = g.request("GET", g.mount + "/metrics")
    assert st == 200, (st, body)
    assert hd["content-type"].startswith("text/plain; version=0.0.4"), hd
    samples, types = {}, {}
    for fam in text_string_to_metric_families(body.decode()):
        assert fam.name not in types, "family %s twice" % fam.name
        types[fam.name] = fam.type
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in samples, key
            samples[key] = s.value
    return samples, types, body


def val(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0)


def t_metrics_http_counters_and_cache():
    # the environment variable sets the interval: a scrape within the hour reuses the first query
    g = Gateway("--pool", "3", env={"SYNCULAR_GATEWAY_METRICS_INTERVAL": "3600"})
    try:
        a, types, first = scrape(g)
        assert types["syncular_gateway_http_requests"] == "counter", types
        assert types["syncular_gateway_commit_to_delta_seconds"] == "histogram", types
        assert types["syncular_gateway_sockets"] == "gauge", types
        assert val(a, "syncular_gateway_metrics_scrapes_total") == 1, a
        assert val(a, "syncular_gateway_pool_connections") == 3
        assert 1 <= val(a, "syncular_gateway_pool_connections_live") <= 3
        assert 0 <= val(a, "syncular_gateway_pool_connections_in_use") <= 3
        # the test cluster does not preload the library: only the preloaded gauge for the database
        assert val(a, "syncular_stats_readable") == 1, a
        assert ("syncular_stats_preloaded", (("database", "gwtest"),)) in a, a
        assert val(a, "syncular_stats_preloaded", database="gwtest") == 0
        assert not [k for k in a if k[0].startswith("syncular_") and not k[0].startswith("syncular_gateway_")
                    and k[0] not in ("syncular_stats_preloaded", "syncular_stats_readable")], a

        sent = received = 0
        for i in range(3):
            body = req_bytes("gwtest.pull('p1', 'c-metrics-%d')" % i)
            st, _, resp = g.sync(body, {"x-api-key": KEY})
            assert st == 200
            received += len(body)
            sent += len(resp)
        st, _, resp = g.sync(b"", {"x-api-key": KEY}, ctype="text/plain")
        assert st == 415
        sent += len(resp)
        for _ in range(2):
            st, _, resp = g.request("GET", "/sync-api/healthz")
            assert st == 200
            sent += len(resp)
        st, _, resp = g.request("GET", "/sync-api/nope")
        assert st == 404
        sent += len(resp)

        b, _, _ = scrape(g)
        d = lambda name, **lb: val(b, name, **lb) - val(a, name, **lb)  # noqa: E731
        assert d("syncular_gateway_http_requests_total", route="sync", status="200") == 3, b
        assert d("syncular_gateway_http_requests_total", route="sync", status="415") == 1
        assert d("syncular_gateway_http_requests_total", route="healthz", status="200") == 2
        assert d("syncular_gateway_http_requests_total", route="other", status="404") == 1
        assert d("syncular_gateway_http_requests_total", route="metrics", status="200") == 1  # the first scrape
        assert d("syncular_gateway_received_bytes_total", transport="http") == received
        assert d("syncular_gateway_sent_bytes_total", transport="http") == sent + len(first)
        # cached: the second scrape ran no query
        assert val(b, "syncular_gateway_metrics_scrapes_total") == 1, b
        assert val(b, "syncular_gateway_metrics_scrape_errors_total") == 0
        assert "NOTICE" not in g.logtext(), g.logtext()      # the views' notice stays out of the log
    finally:
        g.stop()


def t_metrics_off_and_help():
    r = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    assert "--metrics VALUE" in r.stdout and "SYNCULAR_GATEWAY_METRICS_INTERVAL" in r.stdout, r.stdout
    r = subprocess.run([BIN, "--db", "x", "--metrics", "maybe"], capture_output=True, text=True)
    assert r.returncode == 2 and "--metrics" in r.stderr, r
    g = Gateway("--metrics", "off")
    try:
        st, _, body = g.request("GET", "/sync-api/metrics")
        assert st == 404 and json.loads(body)["code"] == "sync.not_found", body
    finally:
        g.stop()


def t_metrics_stats_not_readable():
    """A role outside pg_read_all_stats: syncular_stats_readable 0, no error in the log."""
    psql("""DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'gw_nostats') THEN
                CREATE ROLE gw_nostats LOGIN PASSWORD 'gw-nostats-pw';
              END IF; END $$;
            GRANT EXECUTE ON FUNCTION syncular.readiness(jsonb) TO gw_nostats;
            GRANT EXECUTE ON FUNCTION syncular.authenticate(text, text, jsonb, jsonb) TO gw_nostats;
            GRANT EXECUTE ON FUNCTION syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text)
              TO gw_nostats""")
    g = Gateway("--db", conninfo("gwtest") + " user=gw_nostats password=gw-nostats-pw", "--metrics-interval", "0")
    try:
        for _ in range(2):
            s, _, _ = scrape(g)
            assert val(s, "syncular_stats_readable") == 0, s
            assert ("syncular_stats_preloaded", (("database", "gwtest"),)) not in s, s
        assert val(s, "syncular_gateway_metrics_scrapes_total") == 2, s     # interval 0: a query each
        assert val(s, "syncular_gateway_metrics_scrape_errors_total") == 0
        assert "metrics scrape failed" not in g.logtext(), g.logtext()
    finally:
        g.stop()


def t_metrics_realtime():
    g = Gateway("--ws-max-unacked", "1", "--metrics-interval", "0")
    try:
        pull_http(g, "rtA")
        pull_http(g, "rtMetrics")
        a, _, _ = scrape(g)
        assert val(a, "syncular_gateway_sockets") == 0

        async def go():
            async with websockets.connect(url(g, "rtMetrics")) as ws:
                await hello(ws)
                s, _, _ = scrape(g)
                assert val(s, "syncular_gateway_sockets") == 1, s
                push_http(g, "rtA", "mk1", "m1", "metrics one")
                delta = await next_msg(ws, "binary")
                assert delta[0] == 0
                seq = push_http(g, "rtA", "mk2", "m2", "metrics two")   # unacked: a wake-up instead
                ev = await next_msg(ws, "sync")
                assert ev["data"]["reason"] == "catchup-required", ev
                ack = json.dumps({"type": "ack", "cursor": seq})
                await ws.send(ack)
                await asyncio.sleep(0.3)
                return delta, len(ack.encode())
        delta, acklen = arun(go())
        b, _, _ = scrape(g)
        d = lambda name, **lb: val(b, name, **lb) - val(a, name, **lb)  # noqa: E731
        assert d("syncular_gateway_deltas_sent_total") == 1, b
        assert d("syncular_gateway_wakeups_sent_total", reason="catchup-required") == 1, b
        assert d("syncular_gateway_commit_to_delta_seconds_count") == 1, b
        assert d("syncular_gateway_commit_to_delta_seconds_bucket", le="+Inf") == 1
        assert 0 < d("syncular_gateway_commit_to_delta_seconds_sum") < 10, b
        assert d("syncular_gateway_sent_bytes_total", transport="websocket") >= len(delta)
        assert d("syncular_gateway_received_bytes_total", transport="websocket") == acklen, b
        assert val(b, "syncular_gateway_sockets") == 0
        # interval 0: every scrape queried the database (this gateway scraped 3 times)
        assert val(b, "syncular_gateway_metrics_scrapes_total") == 3, b
    finally:
        g.stop()


def as_postgres(cmd):
    if os.getuid() == 0:
        cmd = ["su", "postgres", "-s", "/bin/bash", "-c", " ".join("'%s'" % c for c in cmd)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def t_metrics_preloaded_cluster():
    """A cluster of its own with shared_preload_libraries = 'syncular' (as test/t/010_counters.pl):
    the database part carries the documented families, moved by the rounds through the gateway."""
    # the staged installation of this run (scripts/pgenv.sh), never the system directories
    bindir = os.environ.get("SYNCULAR_BIN")
    if not bindir:
        raise RuntimeError("SYNCULAR_BIN is not set: run under scripts/pgenv.sh")
    work = tempfile.mkdtemp(prefix="gwstats-")
    os.chmod(work, 0o755)
    if os.getuid() == 0:
        shutil.chown(work, "postgres")
    port = free_port()
    data = os.path.join(work, "data")
    env = dict(os.environ, PGHOST=work, PGPORT=str(port), PGUSER="postgres")
    g = None
    try:
        as_postgres([bindir + "/initdb", "-A", "trust", "-U", "postgres", "-D", data])
        as_postgres([bindir + "/pg_ctl", "-D", data, "-l", work + "/log", "-w", "-t", "60", "-o",
                     "-p %d -k %s -c listen_addresses= -c fsync=off -c shared_preload_libraries=syncular" % (port, work),
                     "start"])
        subprocess.run(["createdb", "gwstat"], env=env, check=True, capture_output=True)
        subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", "gwstat", "-f",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture.sql")],
                       env=env, check=True, capture_output=True)
        g = Gateway("--db", "host=%s port=%d user=postgres dbname=gwstat" % (work, port), "--metrics-interval", "0")
        a, types, _ = scrape(g)
        assert val(a, "syncular_stats_preloaded", database="gwstat") == 1, a

        def rq(expr):       # request bytes built in this cluster's database (its log epoch)
            return bytes.fromhex(subprocess.run(["psql", "-XAtq", "-d", "gwstat", "-c", "SELECT encode(%s, 'hex')" % expr],
                                                env=env, check=True, capture_output=True, text=True).stdout.strip())
        rounds = 0
        for client in ("pa", "pb"):
            for _ in range(2):
                st, _, body = g.sync(rq("gwtest.pull('p1', '%s', -1, 'l1')" % client), {"x-api-key": KEY})
                assert st == 200, body
                rounds += 1
                if not frames(body, "RESP_HEADER")[0].get("resetRequired"):
                    break
        st, _, body = g.sync(rq("gwtest.push('p1', 'pa', 'pk1', 'pr1', 'counted', 'l1')"), {"x-api-key": KEY})
        assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        rounds += 1
        st, _, body = g.sync(b"\x00" * 16, {"x-api-key": KEY})     # refused by the extension
        assert st == 400, body
        code = json.loads(body)["code"]
        b, types, text = scrape(g)
        d = lambda name, **lb: val(b, name, database="gwstat", **lb) - val(a, name, database="gwstat", **lb)  # noqa
        assert d("syncular_rounds_total", outcome="ok") == rounds, text.decode()
        assert d("syncular_rounds_refused_total", code=code) == 1, text.decode()
        assert d("syncular_push_commits_total", status="applied") == 1
        assert d("syncular_push_operations_total") == 1
        assert d("syncular_push_phase_seconds_count") == 1
        assert d("syncular_push_phase_seconds_bucket", le="+Inf") == 1
        assert types["syncular_push_phase_seconds"] == "histogram" and types["syncular_rounds"] == "counter"
        assert types["syncular_partition_lag_max_commits"] == "gauge", types
        assert ("syncular_clients", (("cursor", "with"), ("database", "gwstat"))) in b, text.decode()
        assert ("syncular_clients_behind_horizon", (("database", "gwstat"),)) in b
        assert [k for k in b if k[0] == "syncular_table_push_operations_total"], text.decode()
        assert val(b, "syncular_stats_readable") == 1
        # the library is preloaded: commit wake-ups come from the ring (docs/realtime.md)
        assert val(b, "syncular_gateway_commit_wakeups_ring") == 1, text.decode()
        assert val(b, "syncular_gateway_commit_wakeups_lost_total") == 0, text.decode()
        assert "NOTICE" not in g.logtext() and "failed" not in g.logtext(), g.logtext()
    finally:
        if g:
            g.stop()
        subprocess.run(["su", "postgres", "-s", "/bin/bash", "-c", "%s/pg_ctl -D %s -m immediate stop" % (bindir, data)]
                       if os.getuid() == 0 else [bindir + "/pg_ctl", "-D", data, "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


TESTS = [t_metrics_http_counters_and_cache, t_metrics_off_and_help, t_metrics_stats_not_readable,
         t_metrics_realtime, t_metrics_preloaded_cluster]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
