"""HTTP half of the gateway tests: CLI and startup, /sync, gzip, limits, auth, faults, drain."""
import gzip, json, os, re, signal, socket, subprocess, threading, time

from gwlib import (BIN, CT, Gateway, conninfo, expect_error, frames, jwt_hs256, jwt_signed,
                   openssl_keypair, psql, req_bytes)

SECRET = "test-secret-123"
KEY = {"x-api-key": "u1@p1"}


def hs(claims):
    return {"Authorization": "Bearer " + jwt_hs256(claims, SECRET)}


def t_help_lists_every_flag():
    r = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    assert r.returncode == 0, r
    for flag in ("--db", "--auth", "--dev-actor", "--verbose [1|0]", "--listen", "--mount", "--pool", "--max-body", "--jwt-secret", "--jwt-public-key",
                 "--actor-claim", "--partition-claim", "--jwt-cache", "--partition", "--ws-max-message", "--heartbeat",
                 "--idle-timeout", "--drain", "SYNCULAR_GATEWAY_DB", "default 127.0.0.1:8787"):
        assert flag in r.stdout, flag
    r = subprocess.run([BIN, "--pool", "x", "--db", "x"], capture_output=True, text=True)
    assert r.returncode == 2 and "--pool" in r.stderr, r
    r = subprocess.run([BIN], capture_output=True, text=True, env={"PATH": "/usr/bin"})
    assert r.returncode == 2 and "--db" in r.stderr, r
    r = subprocess.run([BIN, "--nope"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown argument" in r.stderr, r
    # --version: the extension version the gateway serves (the one healthz reports), exit 0
    r = subprocess.run([BIN, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and re.fullmatch(r"syncular-gateway \d+\.\d+\.\d+\n", r.stdout), r
    assert "--version" in subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout


def refuses(db_conninfo, needle):
    r = subprocess.run([BIN, "--db", db_conninfo, "--listen", "127.0.0.1:1"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1, r
    assert needle in r.stderr, r.stderr


def t_refuses_to_start():
    refuses(conninfo("gwtest") + " port=1 connect_timeout=2", "cannot connect")
    refuses(conninfo("no_such_db"), "cannot connect")
    refuses(conninfo("gwnoext"), "extension is not installed")
    refuses(conninfo("gwold"), "has syncular 0.0.1 but this gateway was built for")


def t_refuses_without_authentication():
    # no JWT key and no SQL authenticator registered (gwnoschema has none): one line, exit 1
    r = subprocess.run([BIN, "--db", conninfo("gwnoschema"), "--listen", "127.0.0.1:1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no authentication is possible" in lines[0] and \
        "syncular.set_authenticator" in lines[0] and "--auth none" in lines[0], r.stderr
    # --auth none needs --partition, and excludes a JWT key
    r = subprocess.run([BIN, "--db", conninfo("gwnoschema"), "--auth", "none"], capture_output=True, text=True)
    assert r.returncode == 2 and "--auth none needs --partition" in r.stderr, r
    r = subprocess.run([BIN, "--db", "x", "--auth", "nobody"], capture_output=True, text=True)
    assert r.returncode == 2 and "--auth is auto or none" in r.stderr, r


def t_auth_none_dev_identity():
    # development mode: every request is --dev-actor in --partition, announced loudly at start
    g = Gateway("--auth", "none", "--partition", "p1", "--dev-actor", "u1", "--verbose", "1")
    try:
        log = g.logtext()
        assert "auth NONE" in log and "WARNING: --auth none: NO AUTHENTICATION" in log and \
            'actor "u1" in partition "p1"' in log, log
        for _ in range(2):      # the first may only answer the log epoch (no client record yet)
            st, _, body = g.request("POST", "/sync-api/sync", req_bytes("gwtest.pull('p1', 'dev-c1')"),
                                    {"Content-Type": CT})
            assert st == 200, (st, body)
        # the round ran as u1 in p1: the client record says so
        assert psql("SELECT actor_id || '@' || partition FROM syncular.sync_clients "
                    "WHERE client_id = 'dev-c1'", db="gwtest") == "u1@p1"
    finally:
        g.stop()


def t_verbose_forms():
    # documented as --verbose [1|0]: every form parses (the value after the flag is optional)
    for args in (["--verbose"], ["--verbose", "1"], ["--verbose", "0"], ["--verbose=1"], ["--verbose=off"]):
        r = subprocess.run([BIN] + args + ["--pool", "0", "--db", "x"], capture_output=True, text=True)
        assert r.returncode == 2 and "--pool (SYNCULAR_GATEWAY_POOL) must be 1..256, got 0" in r.stderr, (args, r.stderr)
    r = subprocess.run([BIN, "--verbose=maybe", "--db", "x"], capture_output=True, text=True)
    assert r.returncode == 2 and "bad value for --verbose" in r.stderr, r
    # a number after the bare flag is its bad value, not an unknown argument
    r = subprocess.run([BIN, "--verbose", "2", "--db", "x"], capture_output=True, text=True)
    assert r.returncode == 2 and 'bad value for --verbose (SYNCULAR_GATEWAY_VERBOSE): "2"' in r.stderr, r


def t_config_ranges():
    # a limit out of range names its flag, its variable, the range and the value, whether the
    # value came from a flag or from the environment (/etc/default/syncular-gateway)
    cases = [(["--heartbeat", "0"], "--heartbeat (SYNCULAR_GATEWAY_HEARTBEAT) must be 1 or more seconds, got 0"),
             (["--gzip-level", "13"], "--gzip-level (SYNCULAR_GATEWAY_GZIP_LEVEL) must be 1..12, got 13"),
             (["--gzip-threads", "65"], "--gzip-threads (SYNCULAR_GATEWAY_GZIP_THREADS) must be 0..64 threads, got 65"),
             (["--max-inflight-bytes", "100"], "--max-inflight-bytes (SYNCULAR_GATEWAY_MAX_INFLIGHT_BYTES) must be 65536 or more bytes, got 100"),
             (["--fanout-batch", "0"], "--fanout-batch (SYNCULAR_GATEWAY_FANOUT_BATCH) must be 1..100000 sockets, got 0"),
             (["--watch-batch", "0"], "--watch-batch (SYNCULAR_GATEWAY_WATCH_BATCH) must be 1..100000 watches, got 0"),
             (["--ack-flush-ms", "20000"], "--ack-flush-ms (SYNCULAR_GATEWAY_ACK_FLUSH_MS) must be 0..10000 milliseconds, got 20000"),
             (["--shard-refresh", "0"], "--shard-refresh (SYNCULAR_GATEWAY_SHARD_REFRESH) must be 1..86400 seconds, got 0"),
             (["--ws-max-message", "10"], "--ws-max-message (SYNCULAR_GATEWAY_WS_MAX_MESSAGE) must be 64 or more bytes, got 10"),
             (["--ws-max-unacked", "0"], "--ws-max-unacked (SYNCULAR_GATEWAY_WS_MAX_UNACKED) must be 1 or more deltas, got 0"),
             (["--ws-max-watches", "0"], "--ws-max-watches (SYNCULAR_GATEWAY_WS_MAX_WATCHES) must be 1 or more watches, got 0"),
             (["--presence-max", "1"], "--presence-max (SYNCULAR_GATEWAY_PRESENCE_MAX) must be 2..7000 bytes"),
             (["--jwt-cache", "70000"], "--jwt-cache (SYNCULAR_GATEWAY_JWT_CACHE) must be 0..65536 tokens, got 70000"),
             (["--jwt-leeway", "700"], "--jwt-leeway (SYNCULAR_GATEWAY_JWT_LEEWAY) must be 0..600 seconds, got 700"),
             (["--group-commit", "0"], "--group-commit (SYNCULAR_GATEWAY_GROUP_COMMIT) must be 1..1024 (1: off), got 0"),
             (["--max-body", "10"], "--max-body (SYNCULAR_GATEWAY_MAX_BODY) must be 0 (the database's) or at least 64 bytes, got 10"),
             (["--idle-timeout", "10"], "--idle-timeout (10) must be more than --heartbeat (30) seconds"),
             (["--bootstrap-connections", "9"], "--bootstrap-connections (9) must be 0..--pool (8)")]
    for args, want in cases:
        r = subprocess.run([BIN, "--db", "x"] + args, capture_output=True, text=True)
        assert r.returncode == 2 and want in r.stderr, (args, r.stderr)
    env = dict(os.environ, SYNCULAR_GATEWAY_HEARTBEAT="0")
    r = subprocess.run([BIN, "--db", "x"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "--heartbeat (SYNCULAR_GATEWAY_HEARTBEAT) must be 1 or more seconds, got 0" in r.stderr, r
    # the boundaries themselves are taken (the check stops at the database: exit 1, not 2)
    r = subprocess.run([BIN, "--db", "host=/nonexistent dbname=x connect_timeout=1", "--gzip-level", "12",
                        "--gzip-threads", "64", "--ack-flush-ms", "10000", "--pool", "256", "--jwt-leeway", "600"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 2 and "must be" not in r.stderr, r


def t_env_variables():
    g = Gateway(env={"SYNCULAR_GATEWAY_MOUNT": "/api/v2", "SYNCULAR_GATEWAY_POOL": "2"}, mount="/api/v2")
    try:
        st, _, body = g.request("GET", "/api/v2/healthz")
        assert st == 200 and json.loads(body)["status"] == "ok", body
        st, _, _ = g.request("GET", "/sync-api/healthz")
        assert st == 404
    finally:
        g.stop()


def t_readyz_names_a_failed_check():
    """A gateway role without EXECUTE on syncular.readiness(): readyz answers 503 "readiness check
    failed" with the SQLSTATE (42501) and the log says why, instead of "database unreachable"
    for a database that answers (a missing grant is a configuration error, not an outage)."""
    psql("""DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'gw_noready') THEN
                CREATE ROLE gw_noready LOGIN PASSWORD 'gw-noready-pw';
              END IF; END $$;""")
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--db",
                conninfo("gwtest") + " user=gw_noready password=gw-noready-pw", wait=False)
    try:
        doc, st = None, None
        for _ in range(100):        # until it listens and its pool is up
            try:
                st, _, body = g.request("GET", "/sync-api/readyz")
                doc = json.loads(body)
                if doc.get("reason") not in ("database unreachable", "no live database connection"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert st == 503 and doc == {"ready": False, "reason": "readiness check failed", "sqlstate": "42501"}, (st, doc)
        assert "readyz: syncular.readiness() failed: permission denied" in g.logtext(), g.logtext()
    finally:
        g.stop()


def t_healthz_readyz():
    g = Gateway()
    n = Gateway("--jwt-secret", SECRET, "--partition", "p1", db="gwnoschema", wait=False)
    try:
        st, hd, body = g.request("GET", "/sync-api/healthz")
        assert st == 200 and hd["content-type"].startswith("application/json"), (st, hd)
        st, _, body = g.request("GET", "/sync-api/readyz")
        doc = json.loads(body)
        assert st == 200 and doc["ready"] is True and doc["poolLive"] >= 1, doc
        for _ in range(100):        # until it listens and its pool is up: then readiness answers
            try:
                st, _, body = n.request("GET", "/sync-api/readyz")
                doc = json.loads(body)
                if "readiness" in doc:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert st == 503 and doc["ready"] is False and doc["readiness"]["phase"] == "schema_compile", doc
        st, _, _ = n.request("GET", "/sync-api/healthz")
        assert st == 200
    finally:
        g.stop()
        n.stop()


def t_sync_round_sql_auth():
    g = Gateway()
    try:
        st, hd, body = g.sync(req_bytes("gwtest.pull('p1', 'c-http-1')"), KEY)
        assert st == 200 and hd["content-type"] == CT, (st, hd, body[:200])
        assert frames(body, "RESP_HEADER"), frames(body)
        st, _, body = g.sync(req_bytes("gwtest.push('p1', 'c-http-1', 'k1', 't1', 'from http')"), KEY)
        assert st == 200, body
        pr = frames(body, "PUSH_RESULT")
        assert pr and pr[0]["status"] == "applied", pr
        # the actor came from the authenticator: the commit is u1's
        assert psql("SELECT actor_id FROM syncular.commits WHERE client_commit_id = 'k1'") == "u1"
        # retransmission is idempotent
        st, _, body = g.sync(req_bytes("gwtest.push('p1', 'c-http-1', 'k1', 't1', 'from http')"), KEY)
        assert frames(body, "PUSH_RESULT")[0]["status"] == "cached"
        # the query string works too; refused and absent keys are 401 with the catalogue body
        st, _, body = g.request("POST", "/sync-api/sync?apiKey=u1@p1", req_bytes("gwtest.pull('p1', 'c-http-1')"),
                                {"Content-Type": CT})
        assert st == 200, body
        for h in ({}, {"x-api-key": "deny@p1"}):
            st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-http-1')"), h)
            expect_error(st, body, 401, "sync.auth_required")
        # an engine error is the engine's JSON body and status
        st, _, body = g.sync(b"SSP2\x03\x00\x01\x00garbage", KEY)
        expect_error(st, body, 400, "sync.invalid_request")
    finally:
        g.stop()


def t_content_type_and_method():
    g = Gateway()
    try:
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-http-2')"), KEY, ctype="application/octet-stream")
        expect_error(st, body, 415, "sync.invalid_request")
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-http-2')"), KEY, ctype=CT + "; charset=binary")
        assert st == 200, body
        st, _, body = g.request("GET", "/sync-api/sync")
        expect_error(st, body, 405, "sync.invalid_request")
        st, _, body = g.request("POST", "/sync-api/sync", b"x", {"Content-Type": CT, "Content-Encoding": "br"})
        expect_error(st, body, 415, "sync.invalid_request")
    finally:
        g.stop()


def t_gzip_both_ways():
    g = Gateway("--gzip-min", "0")     # this small answer compressed too (ack_tests: the threshold)
    try:
        raw = req_bytes("gwtest.pull('p1', 'c-gz')")
        st, hd, body = g.sync(raw, KEY, gzip_req=True, accept_gzip=True)
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        assert "accept-encoding" in hd.get("vary", "").lower(), hd
        assert frames(body, "RESP_HEADER")
        st, hd, body = g.sync(raw, KEY)
        assert st == 200 and "content-encoding" not in hd, hd
        # q=0 refuses gzip
        st, hd, _ = g.sync(raw, dict(KEY, **{"Accept-Encoding": "gzip;q=0"}))
        assert "content-encoding" not in hd, hd
        # a broken gzip body
        st, _, body = g.request("POST", "/sync-api/sync", b"\x1f\x8bnot gzip at all",
                                dict(KEY, **{"Content-Type": CT, "Content-Encoding": "gzip"}))
        expect_error(st, body, 400, "sync.invalid_request")
        st, _, body = g.request("POST", "/sync-api/sync", gzip.compress(raw)[:-6],
                                dict(KEY, **{"Content-Type": CT, "Content-Encoding": "gzip"}))
        expect_error(st, body, 400, "sync.invalid_request")
    finally:
        g.stop()


def t_body_limits():
    g = Gateway("--max-body", "4096")
    try:
        st, _, body = g.sync(b"\0" * 5000, KEY)
        expect_error(st, body, 413, "sync.invalid_request")
        # a gzip bomb: small on the wire, over the limit inflated
        st, _, body = g.sync(b"\0" * 100000, KEY, gzip_req=True)
        expect_error(st, body, 413, "sync.invalid_request")
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-lim')"), KEY)
        assert st == 200
    finally:
        g.stop()


def held_upload(g, path, total, sent, extra=b""):
    """A socket that declared `total` body bytes and sent `sent` of them, left open."""
    s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
    s.sendall(b"%s %s HTTP/1.1\r\nHost: t\r\nx-api-key: u1@p1\r\nContent-Type: %s\r\n"
              b"Content-Length: %d\r\n%s\r\n" % (b"PUT" if b"/blobs/" in path else b"POST", path,
                                                    CT.encode(), total, extra) + b"\0" * sent)
    return s


def head_only(g, path, total):
    """Send a request head declaring `total` body bytes, none of them; (status, headers, body)."""
    s = held_upload(g, path, total, 0)
    buf = b""
    try:
        while b"\r\n\r\n" not in buf or len(buf.partition(b"\r\n\r\n")[2]) < int(
                re.search(rb"content-length: *(\d+)", buf, re.I).group(1) if re.search(rb"content-length: *(\d+)", buf, re.I) else 0):
            x = s.recv(65536)
            if not x:
                break
            buf += x
    finally:
        s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    hd = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), hd, body


def t_memory_budget():
    """--max-inflight-bytes: bodies being received hold their declared length; a body that does
    not fit is answered 503 sync.rate_limited before it is read; the budget comes back."""
    g = Gateway("--max-inflight-bytes", "1500000", "--max-body", "1000000")
    try:
        a = held_upload(g, b"/sync-api/sync", 900000, 1000)
        time.sleep(0.3)
        # answered from the head alone: no body byte is sent (nor read)
        st, hd, body = head_only(g, b"/sync-api/sync", 700000)
        assert hd.get("connection") == "close", hd
        doc = expect_error(st, body, 503, "sync.rate_limited")
        assert doc["retryable"] is True, doc
        st, _, text = g.request("GET", "/sync-api/metrics")
        assert b"syncular_gateway_inflight_bytes 900" in text and b"_limit 1500000" in text, text[-600:]
        # a blob upload holds its buffering bound (1.25 MiB) and is refused the same way
        b = held_upload(g, b"/sync-api/blobs/sha256:" + b"ab" * 32, 5000000, 10)
        b.settimeout(5)
        assert b.recv(4096).startswith(b"HTTP/1.1 503"), "blob upload not refused"
        b.close()
        # small bodies still fit; when the stalled body goes, the budget is back
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-budget')"), KEY)
        assert st == 200, body
        a.close()
        time.sleep(0.3)
        st, _, body = g.sync(b"\0" * 700000, KEY)
        assert st == 400, (st, body[:200])      # read and judged by the engine: not SSP2
    finally:
        g.stop()


def t_max_body_follows_database():
    """Without --max-body the gateway takes syncular.max_request_bytes, at start and after a
    reconnect; an explicit --max-body wins."""
    psql("ALTER DATABASE gwtest SET syncular.max_request_bytes = '64kB'")
    g = Gateway()
    try:
        st, _, body = head_only(g, b"/sync-api/sync", 70000)
        doc = expect_error(st, body, 413, "sync.invalid_request")
        assert "size limit" in doc["message"], doc       # the gateway's answer, not the engine's
        assert "follows syncular.max_request_bytes: 65536" in g.logtext(), g.logtext()
        psql("ALTER DATABASE gwtest SET syncular.max_request_bytes = '128kB'")
        psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             "WHERE application_name = 'syncular-gateway' AND pid <> pg_backend_pid()")
        deadline = time.time() + 15
        while "131072" not in g.logtext() and time.time() < deadline:
            g.request("GET", "/sync-api/readyz")
            time.sleep(0.2)
        assert "follows syncular.max_request_bytes: 131072" in g.logtext(), g.logtext()
        st, _, body = g.sync(b"\0" * 70000, KEY)
        assert st == 400, (st, body[:200])
    finally:
        g.stop()
    g = Gateway("--max-body", "100000")
    try:
        st, _, body = g.sync(b"\0" * 90000, KEY)
        assert st == 400, (st, body[:200])
    finally:
        g.stop()
        psql("ALTER DATABASE gwtest RESET syncular.max_request_bytes")


def t_routes_404():
    g = Gateway()
    try:
        st, _, body = g.request("GET", "/sync-api/segments/abc")    # segment_tests.py: no auth
        expect_error(st, body, 401, "sync.auth_required")
        # no syncular.blob_url_base: no grants offered (blob_tests.py: with one)
        st, _, body = g.request("POST", "/sync-api/blobs/sha256:%s/upload-grant" % ("0" * 64),
                                b'{"byteLength": 1}', {"x-api-key": "u1@p1"})
        expect_error(st, body, 404, "blob.not_found")
        st, _, body = g.request("GET", "/elsewhere")
        expect_error(st, body, 404, "sync.not_found")
        st, _, body = g.request("GET", "/sync-api/realtime?clientId=x")
        expect_error(st, body, 400, "sync.invalid_request")
        # the catalogue rows the gateway answers with match the extension's
        for code in ("sync.not_found", "blob.not_found"):
            row = json.loads(psql("SELECT json_build_object('category', category, 'retryable', retryable, "
                                  "'recommendedAction', recommended_action) FROM syncular.error_catalog() "
                                  "WHERE code = '%s'" % code))
            doc = json.loads(g.request("GET", "/sync-api/nothing")[2] if code == "sync.not_found"
                             else g.request("POST", "/sync-api/blobs/sha256:%s/upload-grant" % ("0" * 64),
                                            b'{"byteLength": 1}', {"x-api-key": "u1@p1"})[2])
            assert all(doc[k] == v for k, v in row.items()), (doc, row)
    finally:
        g.stop()


def t_jwt_hs256():
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1")
    try:
        now = int(time.time())
        pull = req_bytes("gwtest.pull('p1', 'c-jwt')")
        st, _, body = g.sync(pull, hs({"sub": "u2", "exp": now + 60}))
        assert st == 200, body
        push = req_bytes("gwtest.push('p1', 'c-jwt', 'kj', 'tj', 'jwt')")
        st, _, body = g.sync(push, hs({"sub": "u2"}))
        assert frames(body, "PUSH_RESULT")[0]["status"] == "applied"
        assert psql("SELECT actor_id FROM syncular.commits WHERE client_commit_id = 'kj'") == "u2"
        bad = [{}, hs({"sub": "u2", "exp": now - 10}), hs({"sub": "u2", "nbf": now + 600}), hs({"nosub": 1}),
               {"Authorization": "Bearer " + jwt_hs256({"sub": "u2"}, "wrong-secret")},
               {"Authorization": "Bearer " + jwt_hs256({"sub": "u2"}, SECRET, alg="none")},
               {"Authorization": "Bearer not.a.jwt"}, {"Authorization": "Basic dTE6cA=="},
               {"x-api-key": "u1@p1"}]
        for h in bad:
            st, _, body = g.sync(pull, h)
            expect_error(st, body, 401, "sync.auth_required")
    finally:
        g.stop()


def t_jwt_numeric_dates():
    """RFC 7519 NumericDate: integers and fractions for exp/nbf/iat; any other type is a 401;
    --jwt-leeway widens exp and nbf by that many seconds."""
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1")
    try:
        now = time.time()
        pull = req_bytes("gwtest.pull('p1', 'c-jwt-dates')")
        for claims in ({"exp": now + 600.5}, {"exp": int(now) + 60, "nbf": now - 5.25, "iat": now - 5.5},
                       {"nbf": int(now) - 1}, {"iat": 1.0e9}):
            claims["sub"] = "u2"
            st, _, body = g.sync(pull, hs(claims))
            assert st == 200, (claims, body)
        for claims in ({"nbf": now + 600.5}, {"nbf": str(int(now) + 600)}, {"exp": now - 0.5},
                       {"exp": str(int(now) + 600)}, {"exp": None}, {"exp": True}, {"exp": [now + 600]},
                       {"nbf": {"t": 1}}, {"iat": "yesterday"}, {"exp": now + 600, "nbf": "later"}):
            claims["sub"] = "u2"
            st, _, body = g.sync(pull, hs(claims))
            expect_error(st, body, 401, "sync.auth_required")
    finally:
        g.stop()
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--jwt-leeway", "30")
    try:
        now = time.time()
        pull = req_bytes("gwtest.pull('p1', 'c-jwt-dates')")
        for claims, want in (({"exp": now - 10}, 200), ({"nbf": now + 10.5}, 200), ({"exp": now - 40}, 401),
                             ({"nbf": now + 40}, 401)):
            claims["sub"] = "u2"
            st, _, body = g.sync(pull, hs(claims))
            assert st == want, (claims, st, body)
    finally:
        g.stop()
    r = subprocess.run([BIN, "--db", "x", "--jwt-leeway", "601"], capture_output=True, text=True)
    assert r.returncode == 2 and "--jwt-leeway" in r.stderr, r


def t_jwt_cache():
    """A token accepted once skips the signature check on its next requests (--jwt-cache), but
    its exp is checked on every request (with --jwt-leeway); a token that differs only in its
    signature, or another actor's token in the same slot, is verified in full and answers as
    itself; --jwt-cache 0 verifies every request."""
    hits, misses = "syncular_gateway_jwt_cache_hits_total", "syncular_gateway_jwt_cache_misses_total"
    pull = req_bytes("gwtest.pull('p1', 'c-jwt-cache')")
    actor = "SELECT actor_id FROM syncular.commits WHERE client_commit_id = '%s'"
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1")
    try:
        exp = time.time() + 3
        tok = hs({"sub": "u2", "exp": exp})
        for _ in range(3):
            st, _, body = g.sync(pull, tok)
            assert st == 200, body
        assert (g.metric(hits), g.metric(misses)) == (2, 1), (g.metric(hits), g.metric(misses))
        time.sleep(max(0, exp - time.time()) + 0.2)
        expect_error(*g.sync(pull, tok)[::2], 401, "sync.auth_required")
    finally:
        g.stop()
    # one slot: every token meets the cached one there, so only the whole token can make a hit
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--jwt-cache", "1")
    try:
        tok = hs({"sub": "u2"})
        for _ in range(2):
            assert g.sync(pull, tok)[0] == 200
        token = tok["Authorization"]
        forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        expect_error(*g.sync(pull, {"Authorization": forged})[::2], 401, "sync.auth_required")
        for cid in ("kjc1", "kjc2"):   # the second from the cache: u7's own identity
            body = req_bytes("gwtest.push('p1', 'c-jwt-cache-u7', '%s', 't%s', 'jwt cache')" % (cid, cid))
            st, _, answer = g.sync(body, hs({"sub": "u7"}))
            assert st == 200 and frames(answer, "PUSH_RESULT")[0]["status"] == "applied", answer
            assert psql(actor % cid) == "u7", cid
        st, _, answer = g.sync(req_bytes("gwtest.push('p1', 'c-jwt-cache', 'kjc3', 'tkjc3', 'u2 again')"), tok)
        assert st == 200 and psql(actor % "kjc3") == "u2", answer
        assert (g.metric(hits), g.metric(misses)) == (2, 4), (g.metric(hits), g.metric(misses))
    finally:
        g.stop()
    # a cached token past its exp is still accepted within the leeway, and refused after it
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--jwt-leeway", "2")
    try:
        exp = time.time() + 1
        tok = hs({"sub": "u2", "exp": exp})
        assert g.sync(pull, tok)[0] == 200
        time.sleep(max(0, exp - time.time()) + 0.3)
        assert g.sync(pull, tok)[0] == 200 and g.metric(hits) == 1
        time.sleep(max(0, exp + 2 - time.time()) + 0.3)
        expect_error(*g.sync(pull, tok)[::2], 401, "sync.auth_required")
    finally:
        g.stop()
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--jwt-cache", "0")
    try:
        tok = hs({"sub": "u2"})
        for _ in range(2):
            assert g.sync(pull, tok)[0] == 200
        assert (g.metric(hits), g.metric(misses)) == (0, 0)
    finally:
        g.stop()
    for bad in ("-1", "65537"):
        r = subprocess.run([BIN, "--db", "x", "--jwt-cache", bad], capture_output=True, text=True)
        assert r.returncode == 2 and "--jwt-cache" in r.stderr, r


def t_jwt_rs256_es256_partition_claim():
    for kind, alg in (("rsa", "RS256"), ("ec", "ES256")):
        priv, pub = openssl_keypair(kind)
        g = Gateway("--jwt-public-key", pub, "--partition-claim", "tenant", "--actor-claim", "uid")
        try:
            pull = req_bytes("gwtest.pull('p1', 'c-%s')" % kind)
            tok = jwt_signed({"uid": "u3", "tenant": "p1", "exp": int(time.time()) + 60}, priv, alg)
            st, _, body = g.sync(pull, {"Authorization": "Bearer " + tok})
            assert st == 200, (alg, body)
            # missing partition claim; HS256 with the public key as the secret (algorithm confusion)
            tok = jwt_signed({"uid": "u3"}, priv, alg)
            expect_error(*g.sync(pull, {"Authorization": "Bearer " + tok})[::2], 401, "sync.auth_required")
            with open(pub) as f:
                forged = jwt_hs256({"uid": "u3", "tenant": "p1"}, f.read())
            expect_error(*g.sync(pull, {"Authorization": "Bearer " + forged})[::2], 401, "sync.auth_required")
        finally:
            g.stop()


def slow_round(g, commit_id, result):
    """A push by actor 'slow' (its scope resolver sleeps 2 s) in a thread."""
    body = req_bytes("gwtest.push('p1', 'c-slow', '%s', 'ts-%s', 'slow')" % (commit_id, commit_id))

    def go():
        result.append(g.sync(body, {"x-api-key": "slow@p1"}))
    t = threading.Thread(target=go)
    t.start()
    return t


def t_killed_database_connection():
    g = Gateway("--pool", "2")
    try:
        res = []
        t = slow_round(g, "kslow", res)
        time.sleep(0.7)
        n = psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                 "WHERE application_name = 'syncular-gateway' AND pid <> pg_backend_pid()")
        assert int(n) >= 1, n
        t.join()
        st, _, body = res[0]
        doc = expect_error(st, body, 500, "sync.internal_error")
        assert doc["retryable"] is True, doc
        # nothing of the interrupted round was committed; the client retries by clientCommitId
        assert psql("SELECT count(*) FROM syncular.commits WHERE client_commit_id = 'kslow'") == "0"
        deadline = time.time() + 10
        while True:
            st, _, body = g.sync(req_bytes("gwtest.push('p1', 'c-slow2', 'kslow', 'ts-kslow', 'slow')"), KEY)
            if st == 200 or time.time() > deadline:
                break
            time.sleep(0.3)
        assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        st, _, body = g.request("GET", "/sync-api/readyz")
        assert st == 200, body
        assert "lost" in g.logtext()
    finally:
        g.stop()


def t_database_down():
    """No connection possible: rounds answer 500 sync.internal_error (retryable) at once, readyz
    503; when the database accepts connections again the pool comes back by itself."""
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1", "--pool", "2", db="gwnoschema", wait=False)
    pull = req_bytes("gwtest.pull('p1', 'c-down')")

    def until_engine_answers():
        for _ in range(100):
            try:
                st, _, body = g.sync(pull, hs({"sub": "u1"}))
                if st != 500:
                    return st, body
            except OSError:
                pass
            time.sleep(0.1)
        return st, body
    try:
        # the engine answers (this database has no app schema registered)
        expect_error(*until_engine_answers(), 503, "sync.schema_not_ready")
        psql("ALTER DATABASE gwnoschema WITH ALLOW_CONNECTIONS false")
        psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'gwnoschema'")
        time.sleep(0.5)
        t0 = time.time()
        st, _, body = g.sync(pull, hs({"sub": "u1"}))
        doc = expect_error(st, body, 500, "sync.internal_error")
        assert doc["retryable"] is True and time.time() - t0 < 3, (doc, time.time() - t0)
        st, _, body = g.request("GET", "/sync-api/readyz")
        assert st == 503, body
        psql("ALTER DATABASE gwnoschema WITH ALLOW_CONNECTIONS true")
        expect_error(*until_engine_answers(), 503, "sync.schema_not_ready")
    finally:
        psql("ALTER DATABASE gwnoschema WITH ALLOW_CONNECTIONS true")
        g.stop()


def t_sigterm_drains():
    g = Gateway()
    res = []
    t = slow_round(g, "kdrain", res)
    time.sleep(0.5)
    os.kill(g.proc.pid, signal.SIGTERM)
    time.sleep(0.2)
    # draining: new requests are refused with 503 (or the listener is gone)
    try:
        st, _, body = g.request("GET", "/sync-api/healthz", timeout=3)
        expect_error(st, body, 503, "sync.internal_error")
    except OSError:
        pass
    t.join()
    st, _, body = res[0]
    assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", (st, body[:200])
    assert g.proc.wait(10) == 0
    assert "draining" in g.logtext()


def t_sigterm_past_the_drain():
    """A round still waiting for the database when --drain ends: its connection closes
    unanswered and the gateway exits 0 (libmicrohttpd aborted the process when the resumed
    request was suspended again before the daemon stopped)."""
    g = Gateway("--drain", "0")
    g.sync(req_bytes("gwtest.pull('p1', 'c-drain0')"), KEY)     # the partition's log epoch
    body = req_bytes("gwtest.pull('p1', 'c-slow')")     # its scope resolver sleeps 2 s

    def go():
        try:
            g.sync(body, {"x-api-key": "slow@p1"})
        except Exception:  # noqa: BLE001 - closed unanswered, as expected
            pass
    t = threading.Thread(target=go)
    t.start()
    time.sleep(0.5)
    os.kill(g.proc.pid, signal.SIGTERM)
    rc = g.proc.wait(10)
    t.join()
    assert rc == 0, (rc, g.logtext())
    assert "stopped (1 request(s) still in flight)" in g.logtext(), g.logtext()


def t_queue_limit():
    g = Gateway("--pool", "1", "--max-queue", "1")
    try:
        # a second after its pool is up the gateway reads syncular.max_request_bytes with a job of
        # its own (limits.c): let it pass, or it takes the one queue slot from the rounds
        time.sleep(1.5)
        res = []
        threads = [slow_round(g, "kq%d" % i, res) for i in range(3)]
        for t in threads:
            t.join()
        statuses = sorted(r[0] for r in res)
        assert statuses.count(200) >= 2 and 429 in statuses, statuses
        for st, _, body in res:
            if st == 429:
                expect_error(st, body, 429, "sync.rate_limited")
    finally:
        g.stop()


TESTS = [t_help_lists_every_flag, t_refuses_to_start, t_refuses_without_authentication, t_verbose_forms, t_config_ranges,
         t_env_variables, t_healthz_readyz, t_readyz_names_a_failed_check, t_sync_round_sql_auth, t_auth_none_dev_identity,
         t_content_type_and_method, t_gzip_both_ways, t_body_limits, t_memory_budget, t_max_body_follows_database, t_routes_404,
         t_jwt_hs256, t_jwt_numeric_dates, t_jwt_cache, t_jwt_rs256_es256_partition_claim, t_killed_database_connection, t_database_down,
         t_sigterm_drains, t_sigterm_past_the_drain,
         t_queue_limit]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
