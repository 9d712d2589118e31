"""gzip of /sync answers (SPEC §1.3, docs/gateway.md "gzip"): compressed on worker threads,
never on the event loop when large (--gzip-threads, --gzip-thread-min), Accept-Encoding variants,
the bounded queue (--gzip-queue), and clients that leave while their answer is compressed."""
import gzip, os, re, socket, threading, time

from gwlib import CT, Gateway, psql, req_bytes

KEY = {"x-api-key": "u1@pz"}
ROWS, COMMIT_ROWS, SMALL = 5000, 250, 10


def seed():
    """Partition pz: ROWS tasks of list l1 with 1.3 KB titles of hex (compressible about 2:1, slow
    to compress at level 12), pushed through the engine, then SMALL one-row commits (a pull of
    them is over --gzip-min and under --gzip-thread-min)."""
    if psql("SELECT count(*) FROM syncular.sync_partition_registry WHERE partition = 'pz'") != "0":
        return
    psql("SELECT length(syncular.handle(gwtest.pull('pz', 'seed'), 'pz', 'u1'))")    # the log epoch
    psql("".join(
        "SELECT length(syncular.handle(gwtest.req('pz', 'seed', jsonb_build_array(jsonb_build_object("
        "'type', 'PUSH_COMMIT', 'clientCommitId', 'zseed%d', 'operations', (SELECT jsonb_agg(jsonb_build_object("
        "'table', 'tasks', 'rowId', 'z%d-' || i, 'op', 'upsert', 'payload', encode(syncular.encode_sparse_row("
        "'tasks', jsonb_build_object('id', 'z%d-' || i, 'list_id', 'l1', 'title', (SELECT string_agg(md5(i || '-' "
        "|| k || '-%d'), '') FROM generate_series(1, 40) k))), 'base64'))) FROM generate_series(1, %d) i)))), "
        "'pz', 'u1'));\n" % (b, b, b, b, COMMIT_ROWS) for b in range(ROWS // COMMIT_ROWS)))
    psql("".join("SELECT length(syncular.handle(gwtest.push('pz', 'seed', 'zs%d', 'zs%d', repeat('small %d ', 100)), "
                 "'pz', 'u1'));\n" % (i, i, i) for i in range(SMALL)))


def boot_request(client="zboot"):
    """a bootstrap of every row of pz in one page (several MB)"""
    return req_bytes("gwtest.req('pz', '%s', jsonb_build_array(jsonb_build_object('type', 'PULL_HEADER', "
                     "'limitCommits', 100, 'limitSnapshotRows', %d, 'maxSnapshotPages', 1, 'accept', 1), "
                     "jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'tasks', 'scopes', "
                     "jsonb_build_object('list_id', jsonb_build_array('l1')), 'cursor', -1)))" % (client, ROWS * 2))


def post(g, body, ae=None):
    h = dict(KEY, **{"Content-Type": CT})
    if ae is not None:
        h["Accept-Encoding"] = ae
    return g.request("POST", "/sync-api/sync", body, h, timeout=120)


def metric(g, name, labels=""):
    _, _, text = g.request("GET", "/sync-api/metrics")
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), text.decode(), re.M)
    assert m, (name, labels)
    return float(m.group(1))


def answers(g, where):
    return metric(g, "syncular_gateway_gzip_answers_total", '{thread="%s"}' % where)


def t_gzip_accept_encoding_variants():
    """Each Accept-Encoding form, on a large answer (a worker compresses it) and a middle-sized
    one (over --gzip-min, under --gzip-thread-min: the loop compresses it): gzip when allowed,
    identity otherwise, and the gzip inflates to exactly the identity bytes."""
    seed()
    g = Gateway()
    try:
        big, mid = (req_bytes("gwtest.pull('pz', 'zvar', (SELECT max(commit_seq) - %d FROM syncular.sync_commits "
                              "WHERE partition = 'pz'))" % n) for n in (SMALL + 1, SMALL))
        for body, where in ((big, "worker"), (mid, "loop")):
            st, hd, plain = post(g, body)
            assert st == 200 and "content-encoding" not in hd, hd
            assert hd.get("vary") == "Accept-Encoding", hd
            if where == "worker":
                assert len(plain) > 256 * 1024, len(plain)     # the last 250-row commit and the small ones
            else:
                assert 1024 < len(plain) < 65536, len(plain)
            for ae, gz in (("gzip", True), ("x-gzip", True), ("*", True), ("gzip, identity;q=0", True),
                           ("deflate, gzip;q=0.5", True), ("identity", False), ("gzip;q=0", False),
                           ("br", False), ("", False), ("*;q=0, identity", False)):
                n0 = answers(g, where)
                st, hd, data = post(g, body, ae)
                assert st == 200, (ae, st)
                if gz:
                    assert hd.get("content-encoding") == "gzip", (ae, hd)
                    assert len(data) < len(plain) * 0.7, (ae, len(data), len(plain))
                    assert gzip.decompress(data) == plain, ae
                    assert answers(g, where) == n0 + 1, (ae, where)
                else:
                    assert "content-encoding" not in hd and data == plain, (ae, hd)
        assert metric(g, "syncular_gateway_gzip_queue_bytes") == 0
    finally:
        g.stop()


def healthz_during(g, work):
    """the slowest GET healthz (seconds) sent one after another while work() runs"""
    done, worst = threading.Event(), [0.0]
    res = {}

    def run():
        try:
            res["v"] = work()
        finally:
            done.set()
    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        t0 = time.time()
        st, _, _ = g.request("GET", "/sync-api/healthz")
        assert st == 200
        worst[0] = max(worst[0], time.time() - t0)
        time.sleep(0.005)
    t.join()
    return worst[0], res.get("v")


def t_gzip_large_answer_off_the_loop():
    """A large answer compressed at the slowest level takes its worker a long time; the event
    loop answers healthz meanwhile in a fraction of it (on the loop, healthz waited for all of
    it), and the answer is counted as a worker's, not the loop's."""
    seed()
    g = Gateway("--gzip-level", "12")
    try:
        big = boot_request("zslow")
        post(g, big)            # the plan and the caches warm
        s0, loop0 = metric(g, "syncular_gateway_gzip_seconds_total", '{thread="worker"}'), answers(g, "loop")
        worst, (st, hd, data) = healthz_during(g, lambda: post(g, big, "gzip"))
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        spent = metric(g, "syncular_gateway_gzip_seconds_total", '{thread="worker"}') - s0
        assert spent > 0.3, "compression took only %.3f s: the test proves nothing" % spent
        assert answers(g, "loop") == loop0
        assert worst < spent / 2, "healthz waited %.3f s while compression took %.3f s" % (worst, spent)
        print("# level 12 compression %.3f s on a worker, slowest healthz meanwhile %.3f s" % (spent, worst))
    finally:
        g.stop()
    # --gzip-threads 0: the loop compresses (counted as the loop's)
    g = Gateway("--gzip-threads", "0")
    try:
        st, hd, _ = post(g, big, "gzip")
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        assert answers(g, "loop") == 1 and answers(g, "worker") == 0
    finally:
        g.stop()


def t_gzip_queue_full():
    """Past --gzip-queue an answer goes uncompressed (counted), unless its client refuses
    identity (RFC 9110 §12.5.3): that one waits its turn."""
    seed()
    g = Gateway("--gzip-queue", "65536")
    try:
        big = boot_request("zq")
        st, hd, plain = post(g, big, "gzip")
        assert st == 200 and "content-encoding" not in hd, hd
        assert metric(g, "syncular_gateway_gzip_skipped_total") == 1
        st, hd, data = post(g, big, "gzip, identity;q=0")
        assert st == 200 and hd.get("content-encoding") == "gzip", hd
        assert gzip.decompress(data) == plain
        assert answers(g, "worker") == 1
    finally:
        g.stop()


def raw_request(g, body):
    s = socket.create_connection(("127.0.0.1", g.port))
    s.sendall(("POST /sync-api/sync HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nx-api-key: %s\r\n"
               "Accept-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % (CT, KEY["x-api-key"], len(body))).encode()
              + body)
    return s


def wait_metric(g, name, pred, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        v = metric(g, name)
        if pred(v):
            return v
        time.sleep(0.01)
    raise AssertionError("%s never reached the expected value" % name)


def t_gzip_client_gone():
    """Clients that close while their answers are compressed (one running, one queued behind it
    on the only worker): no crash, both freed once done (the sanitizer build reports any leak at
    exit), and the gateway answers the next request.  Then the same at shutdown with no time to
    drain: the queued job is dropped, the running one freed when its worker ends."""
    seed()
    big = boot_request("zgone")
    for drain in (False, True):
        g = Gateway("--gzip-level", "12", "--gzip-threads", "1", "--drain", "0" if drain else "10")
        try:
            size = len(post(g, big)[2])
            a, b = raw_request(g, big), raw_request(g, big)
            wait_metric(g, "syncular_gateway_gzip_queue_bytes", lambda v: v >= 2 * size)
            a.close()
            b.close()
            if drain:
                rc = g.stop()
                assert rc == 0, (rc, g.logtext())
                assert "gzip: 1 queued answer(s) dropped" in g.logtext(), g.logtext()
                continue
            wait_metric(g, "syncular_gateway_gzip_queue_bytes", lambda v: v == 0)
            st, hd, data = post(g, big, "gzip")
            assert st == 200 and hd.get("content-encoding") == "gzip" and len(gzip.decompress(data)) == size
        finally:
            g.stop()


TESTS = [t_gzip_accept_encoding_variants, t_gzip_large_answer_off_the_loop, t_gzip_queue_full,
         t_gzip_client_gone]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
