"""Blob routes of the gateway (SPEC §5.9, docs/blobs.md): PUT streamed into blob_upload_append
inside one pinned transaction, GET streamed chunk by chunk from blob_get through a cursor."""
import base64, hashlib, hmac, http.client, json, os, socket, time

from gwlib import Gateway, expect_error, frames, psql, req_bytes

KEY = {"x-api-key": "u1@p1"}


def bid(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def put(g, data, headers=KEY, blob_id=None):
    return g.request("PUT", "/sync-api/blobs/" + (blob_id or bid(data)), data, dict(headers))


def get(g, blob_id, headers=KEY):
    return g.request("GET", "/sync-api/blobs/" + blob_id, None, dict(headers))


def stored(blob_id):
    return int(psql("SELECT count(*) FROM syncular.sync_blobs WHERE blob_id = '%s'" % blob_id))


def push_file(g, commit, row, blob_id, length, headers=KEY, list_="l1"):
    # a pull first: the partition's log epoch exists before a push (§2.3)
    assert g.sync(req_bytes("gwtest.pull('p1', 'c-blob')"), headers)[0] == 200
    st, _, body = g.sync(req_bytes("gwtest.push_file('p1', 'c-blob', '%s', '%s', '%s', %d, '%s')"
                                   % (commit, row, blob_id, length, list_)), headers)
    assert st == 200, (st, body)
    return frames(body, "PUSH_RESULT")[0]


def t_blob_round_trip():
    g = Gateway()
    try:
        data = os.urandom(100000)
        st, hd, body = put(g, data)
        assert st == 200 and body == b"", (st, body)
        assert stored(bid(data)) == 1
        st, _, body = put(g, data)           # idempotent
        assert st == 200 and body == b"", (st, body)
        # not referenced yet: no row authorizes the download (§5.9.5)
        st, _, body = get(g, bid(data))
        expect_error(st, body, 403, "blob.forbidden")
        r = push_file(g, "kb1", "f1", bid(data), len(data))
        assert r["status"] == "applied", r
        st, hd, body = get(g, bid(data))
        assert st == 200 and hashlib.sha256(body).hexdigest() == bid(data)[7:] and body == data, st
        assert hd["etag"] == '"%s"' % bid(data) and hd["cache-control"] == "private, max-age=0", hd
        assert hd["content-type"] == "application/octet-stream" and int(hd["content-length"]) == len(data), hd
        assert "Authorization" in hd["vary"], hd
        st, hd, body = get(g, bid(data), dict(KEY, **{"If-None-Match": '"%s"' % bid(data)}))
        assert st == 304 and body == b"", st
        # an empty blob
        st, _, _ = put(g, b"")
        assert st == 200 and stored(bid(b"")) == 1
        assert push_file(g, "kb0", "f0", bid(b""), 0)["status"] == "applied"
        st, hd, body = get(g, bid(b""))
        assert st == 200 and body == b"" and hd["content-length"] == "0", (st, hd)
        # the connection pool still serves rounds (every pinned connection went back)
        st, _, _ = g.sync(req_bytes("gwtest.pull('p1', 'c-blob2')"), KEY)
        assert st == 200
    finally:
        g.stop()


def backend_peak_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def t_blob_large_streamed():
    """24 MB through PUT and GET: more than a 1 MiB chunk, more than a 256 kB piece; the gateway
    holds pieces, not the body (its peak RSS grows by less than a third of the body; ASan adds a
    constant ~6 MB, a plain build ~1 MB)."""
    # ASan's quarantine would keep every freed piece: measure without it
    g = Gateway("--pool", "2", env={"ASAN_OPTIONS": "quarantine_size_mb=0:detect_leaks=1"})
    try:
        data = os.urandom(24 * 1024 * 1024 + 12345)
        before = backend_peak_kb(g.proc.pid)
        st, _, body = put(g, data)
        assert st == 200, (st, body)
        # stored in many chunk rows (one per append piece or 1 MiB), summing to the body
        n, total = psql("SELECT count(*) || ' ' || sum(octet_length(data)) FROM syncular.sync_blob_chunks c "
                        "JOIN syncular.sync_blobs b USING (upload_id) WHERE b.blob_id = '%s'" % bid(data)).split()
        assert int(n) >= 25 and int(total) == len(data), (n, total)
        assert push_file(g, "kbl", "fl", bid(data), len(data))["status"] == "applied"
        st, hd, body = get(g, bid(data))
        assert st == 200 and body == data and int(hd["content-length"]) == len(data), (st, len(body))
        grown = backend_peak_kb(g.proc.pid) - before
        print("# gateway peak RSS grew by %d kB for a %d kB body up and down" % (grown, len(data) // 1024))
        assert grown < len(data) // 3072, "gateway peak RSS grew by %d kB" % grown
    finally:
        g.stop()


def t_blob_refusals():
    g = Gateway()
    try:
        data = b"some bytes of a file"
        wrong = bid(b"other bytes")
        st, _, body = put(g, data, blob_id=wrong)
        expect_error(st, body, 400, "blob.hash_mismatch")
        assert stored(wrong) == 0
        st, _, body = put(g, data, blob_id="sha256:xyz")
        expect_error(st, body, 400, "sync.invalid_request")
        # unauthenticated (SQL authenticator answers NULL)
        st, _, body = put(g, data, headers={})
        expect_error(st, body, 401, "sync.auth_required")
        st, _, body = get(g, bid(data), headers={"x-api-key": "deny@p1"})
        expect_error(st, body, 401, "sync.auth_required")
        assert stored(bid(data)) == 0
        # unknown blob
        st, _, body = get(g, bid(b"never uploaded"))
        expect_error(st, body, 404, "blob.not_found")
        # forbidden: a row of list l1 references it, actor l2only sees list l2 only
        assert put(g, data)[0] == 200
        assert push_file(g, "kbf", "ff", bid(data), len(data))["status"] == "applied"
        st, _, body = get(g, bid(data), headers={"x-api-key": "l2only@p1"})
        expect_error(st, body, 403, "blob.forbidden")
        st, _, body = get(g, bid(data))
        assert st == 200 and body == data
        # another partition never sees it
        st, _, body = get(g, bid(data), headers={"x-api-key": "u1@p2"})
        expect_error(st, body, 404, "blob.not_found")
        # a push naming a missing blob is rejected (§5.9.6)
        r = push_file(g, "kbm", "fm", bid(b"missing"), 7)
        assert r["status"] == "rejected", r
        assert "blob.not_found" in json.dumps(r), r
        # other methods
        st, _, body = g.request("DELETE", "/sync-api/blobs/" + bid(data), None, KEY)
        expect_error(st, body, 405, "sync.invalid_request")
    finally:
        g.stop()


def t_blob_too_large_early():
    """413 from the declared Content-Length before any body byte is sent."""
    g = Gateway()
    try:
        s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
        s.sendall(("PUT /sync-api/blobs/%s HTTP/1.1\r\nHost: x\r\nx-api-key: u1@p1\r\n"
                   "Content-Length: %d\r\n\r\n" % (bid(b"big"), 100 * 1024 * 1024)).encode())
        r = http.client.HTTPResponse(s)
        r.begin()
        body = r.read()
        s.close()
        expect_error(r.status, body, 413, "blob.too_large")
        # the streamed count is checked too: a cap below the body (operators' GUC)
        psql("ALTER DATABASE gwtest SET syncular.blob_max_bytes = 1000")
        try:
            g2 = Gateway()
            try:
                st, _, body = put(g2, os.urandom(5000))
                expect_error(st, body, 413, "blob.too_large")
            finally:
                g2.stop()
        finally:
            psql("ALTER DATABASE gwtest RESET syncular.blob_max_bytes")
    finally:
        g.stop()


def no_session_left_in_transaction(seconds):
    """waits until no gateway session is idle in transaction; fails after `seconds`"""
    deadline = time.monotonic() + seconds
    while psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'syncular-gateway' "
               "AND state LIKE 'idle in transaction%'") != "0":
        if time.monotonic() > deadline:
            raise AssertionError("a gateway session stayed idle in transaction for %d s" % seconds)
        time.sleep(0.1)


def t_blob_abandoned_upload():
    """A client that goes away mid-body: the transaction rolls back (nothing stored, no session
    left idle in transaction) and its connection and transfer slot go back (--pool 2 allows
    one transfer at a time: a leaked slot would answer 429)."""
    g = Gateway("--pool", "2")
    try:
        data = os.urandom(3 * 1024 * 1024)
        s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
        s.sendall(("PUT /sync-api/blobs/%s HTTP/1.1\r\nHost: x\r\nx-api-key: u1@p1\r\n"
                   "Content-Length: %d\r\n\r\n" % (bid(data), len(data))).encode())
        s.sendall(data[:1024 * 1024])
        time.sleep(0.5)
        s.close()
        # the gateway learns of the close when it next reads the socket, after the pieces it
        # already took reach the database: on a loaded machine (ASan build) that takes seconds
        no_session_left_in_transaction(30)
        assert stored(bid(data)) == 0
        st, _, body = put(g, data)
        assert st == 200 and stored(bid(data)) == 1, (st, body)
    finally:
        g.stop()


def t_blob_close_with_last_bytes():
    """A client whose last body bytes and close arrive together (less than a read, so the
    library's last read is short): the close must be seen at once, not at the 30 s connection
    timeout, so the transaction rolls back and the pinned connection goes back."""
    g = Gateway("--pool", "2")
    try:
        data = os.urandom(3 * 1024 * 1024)
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
            s.sendall(("PUT /sync-api/blobs/%s HTTP/1.1\r\nHost: x\r\nx-api-key: u1@p1\r\n"
                       "Content-Length: %d\r\n\r\n" % (bid(data), len(data))).encode()
                      + data[:10 * 1024])
            time.sleep(1)           # the gateway is reading the body now, not waiting to start
            s.sendall(data[10 * 1024:100 * 1024])
            s.close()
            no_session_left_in_transaction(8)   # not the 30 s connection timeout
        assert stored(bid(data)) == 0
        st, _, body = put(g, data)
        assert st == 200 and stored(bid(data)) == 1, (st, body)
    finally:
        g.stop()


def t_blob_jwt():
    from http_tests import SECRET, hs
    g = Gateway("--jwt-secret", SECRET, "--partition", "p1")
    try:
        data = b"jwt upload"
        st, _, body = put(g, data, headers={})
        expect_error(st, body, 401, "sync.auth_required")
        st, _, body = put(g, data, headers=hs({"sub": "u1"}))
        assert st == 200, body
        assert psql("SELECT uploader FROM syncular.sync_blobs WHERE blob_id = '%s'" % bid(data)) == "u1"
        st, _, body = get(g, bid(data), headers=hs({"sub": "u1"}))
        expect_error(st, body, 403, "blob.forbidden")
    finally:
        g.stop()


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def mint(claims):
    """a token signed with the server secret, as the extension signs (SPEC §5.4 scheme)"""
    key = bytes.fromhex(psql("SELECT encode(key, 'hex') FROM syncular.sync_segment_secret"))
    if "aud" not in claims:
        claims["aud"] = b64u(hmac.new(key, b"aud:p1", hashlib.sha256).digest()[:16])
    payload = json.dumps(claims, separators=(",", ":")).encode()
    return b64u(payload) + "." + b64u(hmac.new(key, payload, hashlib.sha256).digest())


def tamper(token):
    """the same token with a different exp claim and the original signature"""
    p, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    claims["exp"] += 3600
    return b64u(json.dumps(claims, separators=(",", ":")).encode()) + "." + sig


def t_blob_signed_urls():
    """§5.9.3 grant -> PUT with the token (no host auth) -> stored; tampered, expired and
    other-blob tokens refused with nothing stored; §5.9.5 an authorized GET answers a URL that
    serves the bytes without host auth, and a tampered one is refused."""
    psql("ALTER DATABASE gwtest SET syncular.blob_url_base = '/sync-api/blobs/'")
    try:
        g = Gateway()
        try:
            data = os.urandom(70000)
            path = "/sync-api/blobs/%s/upload-grant" % bid(data)
            st, _, body = g.request("POST", path, b'{"byteLength": %d}' % len(data), {})
            expect_error(st, body, 401, "sync.auth_required")
            st, _, body = g.request("POST", path, b'{"byteLength": "x"}', dict(KEY))
            expect_error(st, body, 400, "sync.invalid_request")
            st, _, body = g.request("POST", path, b'{"byteLength": %d}' % (100 * 1024 * 1024), dict(KEY))
            expect_error(st, body, 413, "blob.too_large")
            st, hd, body = g.request("POST", path, b'{"byteLength": %d}' % len(data), dict(KEY))
            assert st == 200 and hd["content-type"] == "application/json", (st, body)
            grant = json.loads(body)
            assert grant["url"].startswith("/sync-api/blobs/%s?bt=" % bid(data)), grant
            assert grant["urlExpiresAtMs"] > time.time() * 1000 + 60000, grant
            token = grant["url"].split("?bt=")[1]
            # refused, nothing stored: tampered, expired (signed, exp past), another blob's,
            # another length
            for bad, code in ((tamper(token), "blob.forbidden"),
                              (mint({"v": 1, "op": "put", "blob": bid(data), "exp": int(time.time()) - 5,
                                     "len": len(data), "p": "p1", "act": "u1"}), "blob.forbidden")):
                st, _, body = g.request("PUT", "/sync-api/blobs/%s?bt=%s" % (bid(data), bad), data, {})
                expect_error(st, body, 403, code)
            other = os.urandom(10)
            st, _, body = g.request("PUT", "/sync-api/blobs/%s?bt=%s" % (bid(other), token), other, {})
            expect_error(st, body, 403, "blob.forbidden")
            st, _, body = g.request("PUT", grant["url"], data + b"x", {})
            expect_error(st, body, 403, "blob.forbidden")
            assert stored(bid(data)) == 0 and stored(bid(other)) == 0
            # the grant, no host authentication
            st, _, body = g.request("PUT", grant["url"], data, {})
            assert st == 200 and body == b"", (st, body)
            assert psql("SELECT partition || ' ' || uploader FROM syncular.sync_blobs WHERE blob_id = '%s'"
                        % bid(data)) == "p1 u1"
            st, _, body = g.request("POST", path, b'{"byteLength": %d}' % len(data), dict(KEY))
            assert st == 200 and json.loads(body) == {"present": True}, body
            # download: forbidden until a row references it, then a URL, not the bytes
            st, _, body = get(g, bid(data))
            expect_error(st, body, 403, "blob.forbidden")
            assert push_file(g, "kbs", "fs", bid(data), len(data))["status"] == "applied"
            st, hd, body = get(g, bid(data))
            assert st == 200 and hd["content-type"] == "application/json", (st, body)
            dl = json.loads(body)
            assert dl["url"].startswith("/sync-api/blobs/%s?bt=" % bid(data)) and dl["urlExpiresAtMs"] > 0, dl
            st, hd, body = g.request("GET", dl["url"], None, {})
            assert st == 200 and body == data and hd["content-type"] == "application/octet-stream", st
            gtok = dl["url"].split("?bt=")[1]
            for bad in (tamper(gtok), token,
                        mint({"v": 1, "op": "get", "blob": bid(data), "exp": int(time.time()) - 5})):
                st, _, body = g.request("GET", "/sync-api/blobs/%s?bt=%s" % (bid(data), bad), None, {})
                expect_error(st, body, 403, "blob.forbidden")
            # the well-signed unexpired forgery is accepted: the test's signer is the extension's
            st, _, body = g.request("GET", "/sync-api/blobs/%s?bt=%s" % (bid(data), mint(
                {"v": 1, "op": "get", "blob": bid(data), "exp": int(time.time()) + 60})), None, {})
            assert st == 200 and body == data, st
        finally:
            g.stop()
    finally:
        psql("ALTER DATABASE gwtest RESET syncular.blob_url_base")


TESTS = [t_blob_round_trip, t_blob_large_streamed, t_blob_refusals, t_blob_too_large_early,
         t_blob_abandoned_upload, t_blob_close_with_last_bytes, t_blob_jwt, t_blob_signed_urls]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
