"""Segment downloads through the gateway: GET <mount>/segments/{id}, direct (SPEC §5.5: host
authentication + X-Syncular-Scopes) and by signed URL (§5.4: the st token is the whole grant)."""
import gzip, hashlib, json, os, subprocess, urllib.parse

from gwlib import Gateway, conninfo, expect_error, frames, jwt_hs256, psql, req_bytes

SECRET = "seg-secret-123"
KEY = {"x-api-key": "u1@pseg"}
SCOPES = {"X-Syncular-Scopes": json.dumps({"list_id": ["l1"]})}


def pull_refs(g, client, accept, headers=KEY):
    """One bootstrap pull of tasks in list l1 with the given accept bits: its SEGMENT_REF frames."""
    body = req_bytes("gwtest.req('pseg', '%s', jsonb_build_array("
                     "jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 100, 'limitSnapshotRows', 2, "
                     "'maxSnapshotPages', 1, 'accept', %d), "
                     "jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'tasks', "
                     "'scopes', jsonb_build_object('list_id', jsonb_build_array('l1')), 'cursor', -1)))"
                     % (client, accept))
    st, _, data = g.sync(body, headers)
    assert st == 200, (st, data[:300])
    refs = frames(data, "SEGMENT_REF")
    assert refs, frames(data)
    return refs


def seed(g, headers=KEY):
    """Three rows in list l1 of partition pseg (a first pull fixes the partition's log epoch)."""
    st, _, data = g.sync(req_bytes("gwtest.pull('pseg', 'c-seg-w')"), headers)
    assert st == 200, data[:200]
    for i in range(3):
        body = req_bytes("gwtest.push('pseg', 'c-seg-w', 'seg-k%d', 'seg-r%d', 'title %d')" % (i, i, i))
        st, _, data = g.sync(body, headers)
        assert st == 200 and frames(data, "PUSH_RESULT")[0]["status"] in ("applied", "cached"), data[:200]


def get(g, sid, headers=None, query=""):
    return g.request("GET", "/sync-api/segments/" + sid + query, headers=headers or {})


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def t_segment_direct_sql_auth():
    g = Gateway()
    try:
        seed(g)
        ref = pull_refs(g, "c-seg-1", 2)[0]
        sid = ref["segmentId"]
        # 200 identity: the bytes are the content address, headers are the extension's
        st, hd, data = get(g, sid, dict(KEY, **SCOPES))
        assert st == 200, (st, data[:300])
        assert sha(data) == sid and len(data) == ref["byteLength"], (sha(data), sid)
        assert hd["content-type"] == "application/octet-stream", hd
        assert hd["etag"] == '"%s"' % sid and hd["cache-control"] == "private, max-age=0", hd
        assert "x-syncular-scopes" in hd["vary"].lower() and "content-encoding" not in hd, hd
        # 304 with If-None-Match
        st, hd, data = get(g, sid, dict(KEY, **SCOPES, **{"If-None-Match": '"%s"' % sid}))
        assert st == 304 and data == b"" and hd["etag"] == '"%s"' % sid, (st, hd)
        # gzip, then zstd (preferred), per Accept-Encoding; the address is over the decoded bytes
        st, hd, data = get(g, sid, dict(KEY, **SCOPES, **{"Accept-Encoding": "gzip"}))
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        assert sha(gzip.decompress(data)) == sid
        st, hd, data = get(g, sid, dict(KEY, **SCOPES, **{"Accept-Encoding": "zstd, gzip"}))
        assert st == 200 and hd.get("content-encoding") == "zstd", hd
        dec = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout
        assert sha(dec) == sid
        # the clientId query argument is accepted (passed to the resolver)
        st, _, data = get(g, sid, dict(KEY, **SCOPES), "?clientId=c-seg-1")
        assert st == 200 and sha(data) == sid, st
        # 403: an actor whose grant cannot see the page (l2 only), 404 unknown id, 401 no auth
        st, _, data = get(g, sid, dict(SCOPES, **{"x-api-key": "l2only@pseg"}))
        expect_error(st, data, 403, "sync.forbidden")
        st, _, data = get(g, "sha256:" + "0" * 64, dict(KEY, **SCOPES))
        expect_error(st, data, 404, "sync.not_found")
        for h in (SCOPES, dict(SCOPES, **{"x-api-key": "deny@pseg"})):
            st, _, data = get(g, sid, h)
            expect_error(st, data, 401, "sync.auth_required")
        # another partition does not know it; a scopes header that is not JSON is the gateway's 400
        st, _, data = get(g, sid, dict(SCOPES, **{"x-api-key": "u1@other"}))
        assert st in (404, 503), (st, data)
        st, _, data = get(g, sid, dict(KEY, **{"X-Syncular-Scopes": "{nope"}))
        expect_error(st, data, 400, "sync.invalid_request")
        # the wrong scope map for the page: 403; a POST: 405
        st, _, data = get(g, sid, dict(KEY, **{"X-Syncular-Scopes": '{"list_id": ["l2"]}'}))
        expect_error(st, data, 403, "sync.forbidden")
        st, _, data = g.request("POST", "/sync-api/segments/" + sid, b"", KEY)
        expect_error(st, data, 405, "sync.invalid_request")
        # keep-alive: two downloads on one connection
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", g.port, timeout=15)
        for _ in range(2):
            c.request("GET", "/sync-api/segments/" + sid, headers=dict(KEY, **SCOPES))
            r = c.getresponse()
            assert r.status == 200 and sha(r.read()) == sid
        c.close()
    finally:
        g.stop()


def t_segment_direct_jwt():
    g = Gateway("--jwt-secret", SECRET, "--partition", "pseg")
    try:
        auth = {"Authorization": "Bearer " + jwt_hs256({"sub": "u1"}, SECRET)}
        seed(g, auth)
        sid = pull_refs(g, "c-seg-2", 2, auth)[0]["segmentId"]
        st, _, data = get(g, sid, dict(auth, **SCOPES))
        assert st == 200 and sha(data) == sid, (st, data[:200])
        st, _, data = get(g, sid, SCOPES)
        expect_error(st, data, 401, "sync.auth_required")
        bad = {"Authorization": "Bearer " + jwt_hs256({"sub": "u1"}, "other-secret")}
        st, _, data = get(g, sid, dict(bad, **SCOPES))
        expect_error(st, data, 401, "sync.auth_required")
        other = {"Authorization": "Bearer " + jwt_hs256({"sub": "l2only"}, SECRET)}
        st, _, data = get(g, sid, dict(other, **SCOPES))
        expect_error(st, data, 403, "sync.forbidden")
    finally:
        g.stop()


def t_segment_signed_url():
    psql("ALTER DATABASE gwtest SET syncular.segment_url_base = 'https://cdn.invalid/sync-api/segments/'")
    g = Gateway()
    try:
        seed(g)
        ref = pull_refs(g, "c-seg-3", 10)[0]      # bits 1 and 3
        sid, url = ref["segmentId"], ref.get("url")
        assert url and url.startswith("https://cdn.invalid/sync-api/segments/" + sid + "?st="), ref
        u = urllib.parse.urlsplit(url)
        path = u.path + "?" + u.query
        # no host authentication, no scopes header: the URL is the whole grant
        st, hd, data = g.request("GET", path)
        assert st == 200 and sha(data) == sid, (st, data[:300])
        assert hd["etag"] == '"%s"' % sid, hd
        st, hd, data = g.request("GET", path, headers={"Accept-Encoding": "gzip"})
        assert st == 200 and hd.get("content-encoding") == "gzip" and sha(gzip.decompress(data)) == sid, hd
        st, _, data = g.request("GET", path, headers={"If-None-Match": '"%s"' % sid})
        assert st == 304 and data == b"", st
        # a tampered token (one payload character changed), a token for another segment: refused
        tok = urllib.parse.parse_qs(u.query)["st"][0]
        pay, mac = tok.split(".")
        tampered = pay[:-2] + ("A" if pay[-2] != "A" else "B") + pay[-1] + "." + mac
        st, _, data = g.request("GET", u.path + "?st=" + tampered)
        expect_error(st, data, 403, "sync.forbidden")
        st, _, data = g.request("GET", u.path + "?st=" + pay + "." + mac[:-2] + "AA")
        expect_error(st, data, 403, "sync.forbidden")
        # the MAC's last character carries 2 bits no byte uses: its 3 other spellings decode to
        # the same MAC and must be refused too (only the canonical encoding verifies)
        abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        for flip in (1, 2, 3):
            alias = mac[:-1] + abc[abc.index(mac[-1]) ^ flip]
            st, _, data = g.request("GET", u.path + "?st=" + pay + "." + alias)
            expect_error(st, data, 403, "sync.forbidden")
        st, _, data = g.request("GET", "/sync-api/segments/sha256:" + "1" * 64 + "?st=" + tok)
        expect_error(st, data, 403, "sync.forbidden")
    finally:
        g.stop()
        psql("ALTER DATABASE gwtest RESET syncular.segment_url_base")


def t_segment_url_pinned_clock():
    """The clock seam reaches the gateway's sessions (ALTER DATABASE ... SET
    syncular.clock_override_ms, docs/testing-seams.md): urlExpiresAtMs is the pinned issuing
    second + syncular.segment_url_ttl, the URL serves at that time and, on a clock moved past
    exp + the 60 s skew of SPEC 5.4, answers 404 sync.segment_expired; TTL 0 issues it expired."""
    psql("ALTER DATABASE gwtest SET syncular.segment_url_base = 'https://cdn.invalid/sync-api/segments/'")
    psql("ALTER DATABASE gwtest SET syncular.clock_override_ms = '1700000000500'")
    g = None
    try:
        g = Gateway()
        seed(g)
        ref = pull_refs(g, "c-seg-clock", 10)[0]
        assert ref["urlExpiresAtMs"] == 1700000000000 + 15 * 60 * 1000, ref
        u = urllib.parse.urlsplit(ref["url"])
        st, _, data = g.request("GET", u.path + "?" + u.query)
        assert st == 200 and sha(data) == ref["segmentId"], (st, data[:300])
        g.stop()
        psql("ALTER DATABASE gwtest SET syncular.clock_override_ms = '%d'" % (ref["urlExpiresAtMs"] + 61000))
        psql("ALTER DATABASE gwtest SET syncular.segment_url_ttl = 0")
        g = Gateway()
        st, _, data = g.request("GET", u.path + "?" + u.query)
        expect_error(st, data, 404, "sync.segment_expired")
        ref = pull_refs(g, "c-seg-clock", 10)[0]
        assert ref["urlExpiresAtMs"] == 1700000961000, ref        # the issuing second: expired
    finally:
        if g:
            g.stop()
        for name in ("segment_url_base", "clock_override_ms", "segment_url_ttl"):
            psql("ALTER DATABASE gwtest RESET syncular.%s" % name)


def t_segment_least_privilege_role():
    """A login role with the gateway grants of src/sql/90_grants.sql serves the segment route."""
    psql("""DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'gw_least_seg') THEN
                CREATE ROLE gw_least_seg LOGIN PASSWORD 'gw-least-pw';
              END IF; END $$;
            GRANT EXECUTE ON FUNCTION syncular.readiness(jsonb),
                                      syncular.authenticate(text, text, jsonb, jsonb),
                                      syncular.handle_http_authenticated(bytea, text, text, jsonb, jsonb, text),
                                      syncular.segment_download(text, text, text, jsonb, text, text, text),
                                      syncular.segment_url_download(text, text, text, text),
                                      syncular.commit_wakeup_mode(), syncular.wait_commits(bigint, integer)
              TO gw_least_seg""")
    g = Gateway("--db", conninfo("gwtest") + " user=gw_least_seg password=gw-least-pw")
    try:
        seed(g)
        sid = pull_refs(g, "c-seg-4", 2)[0]["segmentId"]
        st, _, data = get(g, sid, dict(KEY, **SCOPES, **{"Accept-Encoding": "gzip"}))
        assert st == 200 and sha(gzip.decompress(data)) == sid, (st, data[:300])
        st, _, data = get(g, sid, SCOPES, "?st=not-a-token")
        expect_error(st, data, 403, "sync.forbidden")
        assert "failed" not in g.logtext() and "permission" not in g.logtext(), g.logtext()
    finally:
        g.stop()


TESTS = [t_segment_direct_sql_auth, t_segment_direct_jwt, t_segment_signed_url, t_segment_url_pinned_clock,
         t_segment_least_privilege_role]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
