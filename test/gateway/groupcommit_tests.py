"""Group commit (groupcommit.c, docs/gateway.md "Group commit"): push rounds of one partition
that arrive while another push of that partition is in the database wait in the gateway, then
run together as one statement (one transaction, one lock wait, one WAL flush), each with its own
commit and answer.

The partition's lock is held from a psql session (syncular._partition_lock), so the
first push waits in the database for as long as the test wants, and the pushes sent meanwhile
are known to wait in the gateway: no timing decides what is batched."""
import re, subprocess, threading, time

from gwlib import Gateway, frames, jwt_hs256, psql, req_bytes

SECRET = "gc-secret-789"
AUTH = {"Authorization": "Bearer " + jwt_hs256({"sub": "u1"}, SECRET)}


class LockHolder:
    """A psql session holding the partition lock (syncular._partition_lock, docs/storage.md)."""

    def __init__(self, partition):
        self.p = subprocess.Popen(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", "gwtest"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.p.stdin.write("BEGIN; SELECT 'locked' FROM syncular._partition_lock('%s');\n" % partition)
        self.p.stdin.flush()
        line = self.p.stdout.readline().strip()
        assert line == "locked", line

    def release(self):
        self.p.stdin.write("COMMIT;\n")
        self.p.stdin.close()
        self.p.wait(10)


def metric(g, name):
    st, _, text = g.request("GET", "/sync-api/metrics")
    m = re.search(r"^%s (\d+)$" % name, text.decode(), re.M)
    assert st == 200 and m, (st, name)
    return int(m.group(1))


def wait_metric(g, name, want, timeout=10):
    end = time.time() + timeout
    while metric(g, name) != want:
        assert time.time() < end, (name, metric(g, name), want)
        time.sleep(0.05)


def pushes(g, part, names, answers):
    """one thread per push (clients c-<name>, commit k-<name>, row r-<name>), answers[name] =
    (status, PUSH_RESULT or body)"""
    def one(n):
        st, _, body = g.sync(req_bytes("gwtest.push('%s', 'c-%s', 'k-%s', 'r-%s', '%s')" % (part, n, n, n, n)), AUTH)
        answers[n] = (st, frames(body, "PUSH_RESULT")[0] if st == 200 else body)
    ts = [threading.Thread(target=one, args=(n,)) for n in names]
    for t in ts:
        t.start()
    return ts


def start(part, *flags):
    """a gateway (--pool 4, JWT for partition part) and the partition's log epoch and first
    commit made: (gateway, that commit's commit_seq)"""
    g = Gateway("--jwt-secret", SECRET, "--partition", part, "--pool", "4", *flags)
    st, _, body = g.sync(req_bytes("gwtest.pull('%s', 'c-first')" % part), AUTH)   # the log epoch
    assert st == 200, body
    st, _, body = g.sync(req_bytes("gwtest.push('%s', 'c-first', 'k-first', 'r-first', 'first')" % part), AUTH)
    assert st == 200 and frames(body, "PUSH_RESULT")[0]["status"] == "applied", body
    return g, frames(body, "PUSH_RESULT")[0]["commitSeq"]


def t_waiting_pushes_run_as_one_statement():
    """--pool 4: push "a" waits for the held lock in the database; five more pushes of the
    partition wait in the gateway (the gauge says 5) instead of taking four connections to wait
    on the same lock.  Released, the five run as one statement: every one applied, commit_seq
    one after the other in arrival order after "a", one group commit of five rounds, and the log
    has exactly those commits, gap-free."""
    part = "gc1"
    g, first = start(part)
    try:
        held = LockHolder(part)
        answers = {}
        ts = pushes(g, part, ["a"], answers)
        time.sleep(0.3)
        assert metric(g, "syncular_gateway_pool_connections_in_use") >= 1
        names = ["b", "c", "d", "e", "f"]
        for n in names:     # one by one, so that arrival order is known
            ts += pushes(g, part, [n], answers)
            wait_metric(g, "syncular_gateway_group_commit_waiting", names.index(n) + 1)
        assert metric(g, "syncular_gateway_group_commits_total") == 0
        held.release()
        for t in ts:
            t.join(15)
        assert sorted(answers) == ["a"] + names, answers
        assert all(a[0] == 200 and a[1]["status"] == "applied" for a in answers.values()), answers
        seqs = [answers[n][1]["commitSeq"] for n in ["a"] + names]
        assert seqs == list(range(first + 1, first + 7)), seqs
        assert metric(g, "syncular_gateway_group_commits_total") == 1
        assert metric(g, "syncular_gateway_group_commit_rounds_total") == 5
        assert metric(g, "syncular_gateway_group_commit_waiting") == 0
        log = psql("SELECT string_agg(commit_seq || ':' || client_id, ',' ORDER BY commit_seq) "
                   "FROM syncular.sync_commits WHERE partition = '%s'" % part).strip()
        assert log == ",".join("%d:c-%s" % (s, n) for s, n in zip([first] + seqs, ["first", "a"] + names)), log
    finally:
        g.stop()


def t_failed_batch_runs_round_by_round():
    """A batch that fails as a whole (a trigger of the app cancels the write of one row,
    SQLSTATE 57014, which the push rethrows and handle_http does not catch) is rolled back and
    its rounds run again one by one: the two good pushes are applied, the bad one alone answers
    500 sync.internal_error, the fallback is counted, and the log has no gap."""
    part = "gc2"
    psql("""CREATE FUNCTION public.gc_poison() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.title = 'poison' THEN
                RAISE EXCEPTION 'poisoned row' USING ERRCODE = 'query_canceled';
              END IF;
              RETURN NEW;
            END $$;
            CREATE TRIGGER gc_poison BEFORE INSERT ON public.tasks FOR EACH ROW EXECUTE FUNCTION public.gc_poison()""")
    g = None
    try:
        g, first = start(part)
        held = LockHolder(part)
        answers = {}
        ts = pushes(g, part, ["a"], answers)
        time.sleep(0.3)
        for i, n in enumerate(["good1", "poison", "good2"]):
            ts += pushes(g, part, [n], answers)
            wait_metric(g, "syncular_gateway_group_commit_waiting", i + 1)
        held.release()
        for t in ts:
            t.join(15)
        assert [answers[n][1]["status"] for n in ("a", "good1", "good2")] == ["applied"] * 3, answers
        assert answers["poison"][0] == 500 and b"sync.internal_error" in answers["poison"][1], answers["poison"]
        assert metric(g, "syncular_gateway_group_commit_fallbacks_total") == 1
        assert "group commit of 3 rounds failed, running them one by one: ERROR:  poisoned row" in g.logtext()
        seqs = sorted(answers[n][1]["commitSeq"] for n in ("a", "good1", "good2"))
        assert seqs == [first + 1, first + 2, first + 3], seqs
        log = psql("SELECT string_agg(commit_seq::text, ',' ORDER BY commit_seq) FROM syncular.sync_commits "
                   "WHERE partition = '%s'" % part).strip()
        assert log == ",".join(str(s) for s in [first] + seqs), log
    finally:
        if g:
            g.stop()
        psql("DROP TRIGGER gc_poison ON public.tasks; DROP FUNCTION public.gc_poison()")


def t_group_commit_off():
    """--group-commit 1: nothing waits in the gateway; the pushes wait for the lock in the
    database, each on its own connection, and no group commit is counted."""
    part = "gc3"
    g, first = start(part, "--group-commit", "1")
    try:
        held = LockHolder(part)
        answers = {}
        ts = pushes(g, part, ["a", "b", "c"], answers)
        end = time.time() + 10
        while metric(g, "syncular_gateway_pool_connections_in_use") < 3:   # (a scrape may hold a 4th)
            assert time.time() < end
            time.sleep(0.05)
        assert metric(g, "syncular_gateway_group_commit_waiting") == 0
        held.release()
        for t in ts:
            t.join(15)
        assert all(a[0] == 200 and a[1]["status"] == "applied" for a in answers.values()), answers
        assert metric(g, "syncular_gateway_group_commits_total") == 0
    finally:
        g.stop()


def t_dead_connection_fails_its_round_only():
    """The backend running push "a" (waiting for the held lock) is terminated: "a" answers 500
    sync.internal_error (retryable, as any round on a connection that dies), and the two pushes
    that waited behind it in the gateway then run as one group on another connection and are
    applied once the lock is released."""
    part = "gc4"
    g, first = start(part)
    try:
        held = LockHolder(part)
        answers = {}
        ts = pushes(g, part, ["a"], answers)
        end = time.time() + 10
        pid = ""
        while not pid:     # the backend of "a", waiting for the lock
            assert time.time() < end
            pid = psql("SELECT pid FROM pg_stat_activity WHERE query LIKE '%%handle_http%%' "
                       "AND wait_event_type = 'Lock' AND datname = 'gwtest'").strip()
            time.sleep(0.05)
        for n in ["b", "c"]:
            ts += pushes(g, part, [n], answers)
            wait_metric(g, "syncular_gateway_group_commit_waiting", ["b", "c"].index(n) + 1)
        psql("SELECT pg_terminate_backend(%s)" % pid)
        ts[0].join(15)
        assert answers["a"][0] == 500 and b"sync.internal_error" in answers["a"][1], answers.get("a")
        wait_metric(g, "syncular_gateway_group_commits_total", 1)
        assert metric(g, "syncular_gateway_group_commit_waiting") == 0
        held.release()
        for t in ts:
            t.join(15)
        assert [answers[n][1]["status"] for n in ("b", "c")] == ["applied", "applied"], answers
        assert metric(g, "syncular_gateway_group_commit_rounds_total") == 2
    finally:
        g.stop()


def t_shutdown_with_waiting_rounds():
    """SIGTERM while push "a" waits for the held lock and "b", "c" wait behind it in the
    gateway (--drain 1): the gateway exits 0 after the drain, every push is answered (500
    sync.internal_error, retryable) or its connection closed, "b" and "c" never applied, and the sanitizer
    build reports nothing (run.py reads the logs): the failing group's next group lands in the
    pool's queue as it is being emptied."""
    part = "gc5"
    g, first = start(part, "--drain", "1")
    held = LockHolder(part)
    try:
        answers = {}

        def one(n):
            try:
                st, _, body = g.sync(req_bytes("gwtest.push('%s', 'c-%s', 'k-%s', 'r-%s', '%s')" % (part, n, n, n, n)), AUTH)
                answers[n] = st
            except OSError:
                answers[n] = "closed"
        ts = [threading.Thread(target=one, args=("a",))]
        ts[0].start()
        time.sleep(0.3)
        for i, n in enumerate(["b", "c"]):
            ts.append(threading.Thread(target=one, args=(n,)))
            ts[-1].start()
            wait_metric(g, "syncular_gateway_group_commit_waiting", i + 1)
        assert g.stop() == 0
        for t in ts:
            t.join(15)
        assert all(answers[n] in (500, "closed") for n in "abc"), answers
    finally:
        held.release()
        g.stop()
    # "a"'s backend, waiting for the lock, notices its client gone only when it answers: it may
    # commit once the lock is released (the client retries and is answered `cached`); the
    # rounds that waited in the gateway never reached the database
    applied = psql("SELECT coalesce(string_agg(client_id, ','), '') FROM syncular.sync_commits "
                   "WHERE partition = '%s' AND commit_seq > %d" % (part, first)).strip()
    assert applied in ("", "c-a"), applied


def t_lost_database_with_queued_group():
    """--pool 1, partitions by a claim: push "a" of gc6 holds the only connection (waiting for the
    held lock of gc6); push "x" of gc7 waits in the pool's queue for the connection and "y" of gc7
    waits behind it in the gateway.  The connection's backend is terminated: with no connection
    up, the pool fails its queue ("x"), and "x"'s end sends "y"'s statement into that same queue,
    which is failed in turn (jobqueue.c empties the queue before the callbacks run: a queue
    failed in place appended "y" behind the job being failed, lost when that was its tail).  All
    three answer 500 sync.internal_error (retryable), the gateway serves again once reconnected,
    and the sanitizer build reports nothing."""
    tok = lambda part: {"Authorization": "Bearer " + jwt_hs256({"sub": "u1", "p": part}, SECRET)}  # noqa: E731
    g = Gateway("--jwt-secret", SECRET, "--partition-claim", "p", "--pool", "1")
    held = None
    try:
        firsts = {}
        for part in ("gc6", "gc7"):
            st, _, body = g.sync(req_bytes("gwtest.pull('%s', 'c-first')" % part), tok(part))
            assert st == 200, body
            st, _, body = g.sync(req_bytes("gwtest.push('%s', 'c-first', 'k-first', 'r-first', 'first')" % part), tok(part))
            assert st == 200, body
            firsts[part] = frames(body, "PUSH_RESULT")[0]["commitSeq"]
        held = LockHolder("gc6")
        answers = {}

        def one(part, n):
            st, _, body = g.sync(req_bytes("gwtest.push('%s', 'c-%s', 'k-%s', 'r-%s', '%s')" % (part, n, n, n, n)),
                                 tok(part))
            answers[n] = (st, body)
        ts = []
        for part, n in (("gc6", "a"), ("gc7", "x"), ("gc7", "y")):
            ts.append(threading.Thread(target=one, args=(part, n)))
            ts[-1].start()
            time.sleep(0.3)
        pid = psql("SELECT pid FROM pg_stat_activity WHERE query LIKE '%%handle_http%%' "
                   "AND wait_event_type = 'Lock' AND datname = 'gwtest'").strip()
        assert pid, "a is not waiting for the lock"
        psql("SELECT pg_terminate_backend(%s)" % pid)
        for t in ts:
            t.join(15)
        assert all(answers[n][0] == 500 and b"sync.internal_error" in answers[n][1] for n in "axy"), answers
        held.release()
        held = None
        g.wait_ready()
        st, _, body = g.sync(req_bytes("gwtest.push('gc7', 'c-z', 'k-z', 'r-z', 'z')"), tok("gc7"))
        assert st == 200 and frames(body, "PUSH_RESULT")[0]["commitSeq"] == firsts["gc7"] + 1, body
    finally:
        if held:
            held.release()
        g.stop()

TESTS = [t_waiting_pushes_run_as_one_statement, t_failed_batch_runs_round_by_round, t_group_commit_off,
         t_dead_connection_fails_its_round_only, t_shutdown_with_waiting_rounds, t_lost_database_with_queued_group]


def run(tap):
    import os
    only = os.environ.get("GW_ONLY")
    for t in TESTS:
        if not only or only in t.__name__:
            tap.run(t)
