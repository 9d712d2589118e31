"""The gateway's database pool over TCP, as CI runs it (pg_virtualenv: host=localhost, a password).

libpq's non-blocking connect over TCP asks to be called again when the socket is writable from
inside the writable callback (the connect completed; now the startup packet), and so does a
PQflush that could not send everything.  libwebsockets 4.1's raw-file role (the gateway's earlier
loop) dropped such a request, so the pool never came up over TCP (readyz stayed 503) and a large
query could stall.  A cluster reached
over a unix socket (connect completes at once, the server reads fast) does not show it, so the
gateway reaches the cluster through a TCP relay on 127.0.0.1 that forwards slowly."""
import os, re, shutil, socket, subprocess, tempfile, threading, time

from gwlib import Gateway, free_port, frames, req_bytes, reqs_bytes

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


def start_pgbouncer(pgb):
    """PgBouncer in transaction mode (round-robin over 3 server connections) in front of the
    test cluster's gwtest; (process, port, its folder).  Run as postgres when we are root (it
    refuses root)."""
    port, d = free_port(), tempfile.mkdtemp(prefix="gwtest-pgb-")   # not in TMP: postgres reads it
    os.chmod(d, 0o777)
    host, pgport = os.environ.get("PGHOST", "/var/run/postgresql"), os.environ.get("PGPORT", "5432")
    user, password = os.environ.get("PGUSER", "postgres"), os.environ.get("PGPASSWORD", "")
    with open(os.path.join(d, "users.txt"), "w") as f:
        f.write('"%s" ""\n' % user)
    with open(os.path.join(d, "pgb.ini"), "w") as f:
        f.write("[databases]\ngwtest = host=%s port=%s dbname=gwtest user=%s%s\n"
                "[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = %d\nunix_socket_dir =\n"
                "auth_type = trust\nauth_file = %s/users.txt\npool_mode = transaction\n"
                "default_pool_size = 3\nserver_round_robin = 1\nmax_client_conn = 50\n"
                "logfile = %s/pgb.log\npidfile = %s/pgb.pid\n"
                % (host, pgport, user, " password=" + password if password else "", port, d, d, d))
    for name in os.listdir(d):
        os.chmod(os.path.join(d, name), 0o666)
    cmd = [pgb, os.path.join(d, "pgb.ini")]
    if os.getuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, port, d


def t_prepared_behind_transaction_pooler():
    """The gateway prepares the statements every request runs (gateway/prepared.c).  Behind a
    pooler in transaction mode that does not keep prepared statements (PgBouncer 1.18, Debian
    12's), a statement prepared on one server connection is executed on another: the server
    answers 26000 and the gateway sends it again unnamed, or its Prepare meets the same name
    there (42P05: the same text).  Every round still answers as without the pooler: 4 clients,
    30 pushes each, all applied, commit_seq gap-free; the fallbacks are counted."""
    pgb = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not os.access(pgb, os.X_OK):
        print("skip - t_prepared_behind_transaction_pooler: pgbouncer is not installed (apt-get install pgbouncer)")
        return
    proc, port, d = start_pgbouncer(pgb)
    g = None
    try:
        user = os.environ.get("PGUSER", "postgres")
        g = Gateway("--db", "host=127.0.0.1 port=%d user=%s dbname=gwtest" % (port, user), "--pool", "4")
        key = {"x-api-key": "u1@pgb"}     # a partition of its own: other tests count list l1 of p1
        for _ in range(2):                  # the first round takes the partition's log epoch
            st, _, body = g.sync(req_bytes("gwtest.pull('pgb', 'c-pgb0')"), key)
            assert st == 200, body[:300]
        bodies = reqs_bytes("gwtest.push('pgb', 'c-pgb' || (i % 4), 'pgb' || i, 'pgb' || i, 'behind a pooler')", 120)
        seqs, errors = [], []

        def client(k):
            for b in bodies[k::4]:
                st, _, body = g.sync(b, key)
                pr = frames(body, "PUSH_RESULT") if st == 200 else []
                if not pr or pr[0]["status"] != "applied":
                    errors.append((st, body[:300]))
                else:
                    seqs.append(pr[0]["commitSeq"])
        ts = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors[:3]
        assert sorted(seqs) == list(range(min(seqs), min(seqs) + 120)), sorted(seqs)
        st, _, metrics = g.request("GET", "/sync-api/metrics")
        n = int(re.search(rb"\nsyncular_gateway_prepared_fallbacks_total (\d+)", metrics).group(1))
        assert n > 0, "no named statement was refused behind the pooler: the test did not test"
        print("# %d named executions sent again unnamed" % n)
    finally:
        if g:
            g.stop()
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(d, ignore_errors=True)


TESTS = [t_pool_connects_over_tcp, t_bootstraps_leave_connections, t_prepared_behind_transaction_pooler]


def run(tap):
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
