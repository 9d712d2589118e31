"""The gateway's database pool over TCP, as CI runs it (pg_virtualenv: host=localhost, a password).

libpq's non-blocking connect over TCP asks to be called again when the socket is writable from
inside the writable callback (the connect completed; now the startup packet), and so does a
PQflush that could not send everything.  libwebsockets 4.1's raw-file role (the gateway's earlier
loop) dropped such a request, so the pool never came up over TCP (readyz stayed 503) and a large
query could stall.  A cluster reached
over a unix socket (connect completes at once, the server reads fast) does not show it, so the
gateway reaches the cluster through a TCP relay on 127.0.0.1 that forwards slowly."""
import os, re, socket, threading, time

from gwlib import Gateway, frames, req_bytes

KEY = {"x-api-key": "u1@p1"}


class TcpRelay:
    """127.0.0.1:<port> -> the cluster (its unix socket, or TCP), one thread pair per connection;
    towards the server it forwards about 4 MB/s, so a big query fills the gateway's socket."""

    def __init__(self, family, addr):
        self.family, self.addr = family, addr
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.accepted += 1
            u = socket.socket(self.family)
            u.connect(self.addr)
            threading.Thread(target=self._pipe, args=(c, u, 0.004), daemon=True).start()
            threading.Thread(target=self._pipe, args=(u, c, 0), daemon=True).start()

    @staticmethod
    def _pipe(a, b, pause):
        try:
            while True:
                d = a.recv(16384)
                if not d:
                    break
                b.sendall(d)
                if pause:
                    time.sleep(pause)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.srv.close()


def relay_to_cluster():
    host = os.environ.get("PGHOST", "/var/run/postgresql")
    port = os.environ.get("PGPORT", "5432")
    if host.startswith("/"):
        return TcpRelay(socket.AF_UNIX, os.path.join(host, ".s.PGSQL." + port))
    return TcpRelay(socket.AF_INET, ("127.0.0.1" if host == "localhost" else host, int(port)))


def t_pool_connects_over_tcp():
    """readyz becomes ready with --db naming 127.0.0.1, and "localhost" (as in CI; where it also
    resolves to ::1, that address is refused first: the relay listens on 127.0.0.1 only); rounds,
    a large one included, run on that pool."""
    relay = relay_to_cluster()
    user = " user=" + os.environ["PGUSER"] if os.environ.get("PGUSER") else ""
    try:
        for host in ("127.0.0.1", "localhost"):
            db = "host=%s port=%d%s dbname=gwtest" % (host, relay.port, user)
            seen = relay.accepted
            g = Gateway("--db", db, "--pool", "2", "--verbose")   # the last --db counts
            try:
                # the startup check, two round connections and the LISTEN one came through the relay
                assert relay.accepted - seen == 4, relay.accepted - seen
                st, _, body = g.request("GET", "/sync-api/readyz")
                assert st == 200, body
                st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'c-tcp-%s')" % host), KEY)
                assert st == 200 and frames(body, "RESP_HEADER"), (st, body[:200])
                # 6 MB of query parameters: the socket buffer fills (the relay is slow) and
                # PQflush resumes from writable callbacks.  The row is over the row limit: the
                # answer names its size, so the server got every byte
                st, _, body = g.sync(req_bytes("gwtest.push('p1', 'c-tcp-%s', 'k-tcp', 't-tcp', repeat('x', %d))"
                                               % (host, 6 << 20)), KEY)
                assert st == 200, body[:300]
                pr = frames(body, "PUSH_RESULT")
                assert pr[0]["status"] == "rejected" and "6291477 bytes" in pr[0]["results"][0]["message"], pr
            finally:
                g.stop()
    finally:
        relay.close()


def t_bootstraps_leave_connections():
    """--pool 2 (default --bootstrap-connections: 1): two bootstrap rounds (cursor -1) of actor
    "slow", whose scope resolver sleeps 2 s, take one connection, the second queued behind the
    first; meanwhile the /metrics query (which shows the lane), a push and an incremental pull
    (cursor >= 0) run on the other connection at once.  Both bootstraps still answer.  Without
    the lane the three wait about 1.5 s for the first bootstrap."""
    g = Gateway("--pool", "2")
    slow = {"x-api-key": "slow@p1"}
    try:
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'bl-w')"), KEY)      # the log epoch
        assert st == 200, body
        answers = []

        def boot(c):
            answers.append(g.sync(req_bytes("gwtest.pull('p1', '%s')" % c), slow)[0])
        ts = [threading.Thread(target=boot, args=("bl-b%d" % i,)) for i in range(2)]
        for t in ts:
            t.start()
        time.sleep(0.5)     # both sent: one in the resolver's sleep (2 s), one queued
        t0 = time.time()
        st, _, text = g.request("GET", "/sync-api/metrics")    # its query runs on the pool too
        m = text.decode()
        assert st == 200 and re.search(r"^syncular_gateway_pool_bootstrap_rounds 1$", m, re.M), m
        assert re.search(r"^syncular_gateway_pool_bootstrap_rounds_waiting 1$", m, re.M), m
        st, _, body = g.sync(req_bytes("gwtest.push('p1', 'bl-w', 'bl-c1', 'bl-r1', 'beside bootstraps')"), KEY)
        assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
        seq = frames(body, "PUSH_RESULT")[0]["commitSeq"]
        st, _, body = g.sync(req_bytes("gwtest.pull('p1', 'bl-w', %d)" % (seq - 1)), KEY)
        assert st == 200 and frames(body, "COMMIT"), body
        took = time.time() - t0
        assert took < 1.0, took     # all three before the first bootstrap's resolver wakes up
        for t in ts:
            t.join(15)
        assert answers == [200, 200], answers
    finally:
        g.stop()


TESTS = [t_pool_connects_over_tcp, t_bootstraps_leave_connections]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
