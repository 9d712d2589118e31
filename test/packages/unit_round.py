"""The packaged gateway, started as systemd would start syncular-gateway.service, serves a sync
round.  Run by scripts/test-packages.sh with the packages installed, PGHOST/PGPORT/PGUSER set to a
cluster made from the installed files and the database `gwtest` loaded with
test/gateway/fixture.sql:

    python3 test/packages/unit_round.py UNIT_FILE JWT_SECRET

systemd does not run here, so this reads the installed unit: the EnvironmentFile (systemd's
NAME=value syntax), ExecStart (with systemd's $VAR / ${VAR} expansion) and User=, and runs the
command as that user (setpriv, no new privileges) with only the unit's environment.  It then
pushes a row over HTTP with a JWT, pulls it back from a second client, checks that a request
without a token is refused and that SIGTERM drains to exit status 0."""
import base64, os, re, shlex, shutil, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gateway"))
import gwlib  # noqa: E402

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def unit_service(path):
    """The [Service] settings of a unit file: name -> list of values, in order."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
            elif section == "[Service]" and "=" in line:
                k, v = line.split("=", 1)
                out.setdefault(k.strip(), []).append(v.strip())
    return out


def environment_file(path):
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;" or "=" not in line:
                continue
            k, v = line.split("=", 1)
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            env[k.strip()] = v
    return env


def expand(cmdline, env):
    """systemd's ExecStart expansion: a word "$VAR" becomes the value split at whitespace (no
    word when unset or empty), "${VAR}" inside a word becomes the value as it is."""
    words = shlex.split(cmdline)
    words[0] = words[0].lstrip("-@:+!")
    argv = []
    for w in words:
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", w)
        if m:
            argv += env.get(m.group(1), "").split()
        else:
            argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda g: env.get(g.group(1), ""), w))
    return argv


def main():
    unit, secret = sys.argv[1], sys.argv[2]
    svc = unit_service(unit)
    env = {"PATH": PATH, "LANG": "C.UTF-8"}
    for ef in svc.get("EnvironmentFile", []):
        optional = ef.startswith("-")
        ef = ef.lstrip("-")
        if os.path.exists(ef):
            env.update(environment_file(ef))
        elif not optional:
            raise SystemExit("EnvironmentFile %s is missing" % ef)
    (execstart,) = svc["ExecStart"]
    (user,) = svc["User"]
    argv = expand(execstart, env)
    print("# ExecStart: %s (as %s; SYNCULAR_GATEWAY_* from the environment file: %s)"
          % (" ".join(argv), user, ", ".join(sorted(k for k in env if k.startswith("SYNCULAR_GATEWAY_")))))
    listen = env["SYNCULAR_GATEWAY_LISTEN"]
    log = open(os.path.join(gwlib.TMP, "gateway.log"), "w")
    proc = subprocess.Popen(["setpriv", "--reuid", user, "--regid", user, "--init-groups",
                             "--no-new-privs", "--"] + argv, env=env, stdout=log, stderr=log)
    gw = gwlib.Gateway.__new__(gwlib.Gateway)  # an already running process: no start of its own
    gw.proc, gw.log, gw.mount = proc, log.name, env.get("SYNCULAR_GATEWAY_MOUNT", "/sync-api")
    gw.port = int(listen.rsplit(":", 1)[1])
    tap = gwlib.Tap()
    try:
        gw.wait_ready(timeout=20)
        for test in (runs_as_the_unit_user, push_and_pull, refused_without_token, drains_on_sigterm):
            tap.run(named(test, gw, user=user, secret=secret))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if tap.failed:
            print(gw.logtext())
        shutil.rmtree(gwlib.TMP, ignore_errors=True)
    sys.exit(1 if tap.failed else 0)


def named(test, *args, **kw):
    """test(*args, **kw) under test's name (gwlib.Tap prints it)."""
    def run():
        test(*args, **kw)
    run.__name__ = test.__name__
    return run


def runs_as_the_unit_user(gw, user, **_):
    uid = int(subprocess.run(["id", "-u", user], check=True, capture_output=True, text=True).stdout)
    with open("/proc/%d/status" % gw.proc.pid) as f:
        uids = [int(x) for x in re.search(r"^Uid:\s+(.*)$", f.read(), re.M).group(1).split()]
    assert set(uids) == {uid}, (uids, uid)


def push_and_pull(gw, secret, **_):
    tok = {"Authorization": "Bearer " + gwlib.jwt_hs256({"sub": "pkg-user", "exp": int(time.time()) + 300}, secret)}

    def round_(expr, **kw):
        st, _, body = gw.sync(gwlib.req_bytes(expr), tok, **kw)
        assert st == 200, (expr, st, body[:300])
        return body

    # first contact (the partition's log epoch), then a push of one row, then another client pulls it
    round_("gwtest.pull('tenant-1', 'pkg-phone')")
    body = round_("gwtest.push('tenant-1', 'pkg-phone', 'pkg-c1', 'pkg-t1', 'from the package')", accept_gzip=True)
    assert gwlib.frames(body, "PUSH_RESULT")[0]["status"] == "applied", gwlib.frames(body)
    assert gwlib.psql("SELECT title FROM public.tasks WHERE id = 'pkg-t1'") == "from the package"
    body = round_("gwtest.pull('tenant-1', 'pkg-laptop')")
    seg = b"".join(base64.b64decode(f["payload"]) for f in gwlib.frames(body, "SEGMENT_INLINE"))
    assert seg.startswith(b"SSG2") and b"pkg-t1" in seg and b"from the package" in seg, gwlib.frames(body)


def refused_without_token(gw, **_):
    st, _, data = gw.sync(gwlib.req_bytes("gwtest.pull('tenant-1', 'pkg-laptop')"))
    gwlib.expect_error(st, data, 401, "sync.auth_required")


def drains_on_sigterm(gw, **_):
    assert gw.stop(signal.SIGTERM, timeout=30) == 0, gw.logtext()


if __name__ == "__main__":
    main()
