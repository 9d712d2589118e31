"""Shared by the gateway bench scripts: start a syncular-gateway on a free port of 127.0.0.1
against a database of the PG* environment and wait until it is ready."""
import http.client, os, socket, subprocess, time


def start_gateway(binary, db, flags, stderr=subprocess.DEVNULL):
    """(process, port): the gateway answering readyz 200 (or after 10 s of trying)."""
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    conninfo = " ".join("%s=%s" % (k, os.environ[v]) for k, v in (("host", "PGHOST"), ("port", "PGPORT"),
                        ("user", "PGUSER")) if os.environ.get(v)) + " dbname=" + db
    gw = subprocess.Popen([binary, "--db", conninfo, "--listen", "127.0.0.1:%d" % port] + list(flags), stderr=stderr)
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port); c.request("GET", "/sync-api/readyz")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    return gw, port
