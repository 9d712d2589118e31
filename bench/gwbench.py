"""Shared by the gateway bench scripts: start a syncular-gateway on a free port of 127.0.0.1
against a database of the PG* environment and wait until it is ready; seed the gateway test
fixture's partition p1 for pulls and bootstraps."""
import ctypes, http.client, os, signal, socket, subprocess, time


def _die_with_parent():
    """in the child before exec: SIGTERM when the bench process ends, however it ends (a bench
    killed mid-run leaves no gateway behind)"""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)    # PR_SET_PDEATHSIG


def start_gateway(binary, db, flags, stderr=subprocess.DEVNULL):
    """(process, port): the gateway answering readyz 200 (or after 10 s of trying)."""
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    conninfo = " ".join("%s=%s" % (k, os.environ[v]) for k, v in (("host", "PGHOST"), ("port", "PGPORT"),
                        ("user", "PGUSER")) if os.environ.get(v)) + " dbname=" + db
    gw = subprocess.Popen([binary, "--db", conninfo, "--listen", "127.0.0.1:%d" % port] + list(flags), stderr=stderr,
                          preexec_fn=_die_with_parent)
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port); c.request("GET", "/sync-api/readyz")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    return gw, port


def ticks(pid):
    """utime + stime of a process, clock ticks (0 once it is gone)"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


def fixture_db(db):
    """a fresh database `db` with test/gateway/fixture.sql loaded"""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    subprocess.run(["dropdb", "--if-exists", db], check=True, capture_output=True)
    subprocess.run(["createdb", db], check=True)
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", db, "-f",
                    os.path.join(root, "test/gateway/fixture.sql")], check=True, capture_output=True)


def seed_p1(psql, batches, incremental):
    """Into a database with test/gateway/fixture.sql loaded: the log epoch of p1, `batches`
    commits of 500 new tasks rows of list l1, then `incremental` one-change commits; returns
    (bootstrap request of a 10,000-row page, hex; incremental pull 100 commits behind, hex)"""
    psql("SELECT length(syncular.handle(gwtest.pull('p1', 'seed'), 'p1', 'u1'))")     # the log epoch
    psql("".join(
        "SELECT length(syncular.handle(gwtest.req('p1', 'seed', jsonb_build_array(jsonb_build_object("
        "'type', 'PUSH_COMMIT', 'clientCommitId', 'seed%d', 'operations', (SELECT jsonb_agg(jsonb_build_object("
        "'table', 'tasks', 'rowId', 's%d-' || i, 'op', 'upsert', 'payload', encode(syncular.encode_sparse_row("
        "'tasks', jsonb_build_object('id', 's%d-' || i, 'list_id', 'l1', 'title', 'seeded row ' || i || "
        "' of batch %d')), 'base64'))) FROM generate_series(1, 500) i)))), 'p1', 'u1'));\n" % (b, b, b, b)
        for b in range(batches)))
    psql("".join("SELECT length(syncular.handle(gwtest.push('p1', 'seed', 'inc%d', 'inc%d', 'incremental %d'), "
                 "'p1', 'u1'));\n" % (i, i, i) for i in range(incremental)))
    head = int(psql("SELECT max(commit_seq) FROM syncular.sync_commits WHERE partition = 'p1'"))
    boot = psql("SELECT encode(gwtest.req('p1', 'boot', jsonb_build_array(jsonb_build_object('type', 'PULL_HEADER', "
                "'limitCommits', 100, 'limitSnapshotRows', 10000, 'maxSnapshotPages', 1, 'accept', 1), "
                "jsonb_build_object('type', 'SUBSCRIPTION', 'id', 's1', 'table', 'tasks', 'scopes', "
                "jsonb_build_object('list_id', jsonb_build_array('l1')), 'cursor', -1))), 'hex')")
    return boot, psql("SELECT encode(gwtest.pull('p1', 'inc', %d), 'hex')" % (head - 100))
