"""Helpers of the syncular-gateway end-to-end tests: the database (psql), gateway processes
started and stopped by PID on 127.0.0.1, HTTP requests, JWTs (HS256 by hand, RS256/ES256 signed
with the openssl CLI).  Runs under Debian's /usr/bin/python3 (python3-websockets)."""
import base64, gzip, hashlib, hmac, http.client, json, os, signal, socket, subprocess, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SYNCULAR_GATEWAY_BIN", os.path.join(ROOT, "gateway", "syncular-gateway"))
CT = "application/vnd.syncular.sync.v2"
TMP = tempfile.mkdtemp(prefix="gwtest-")


def psql(sql, db="gwtest", check=True):
    # the statement goes on stdin: rendered responses can be megabytes of hex
    r = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", db], input=sql,
                       capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("psql failed: %s\n%s" % (sql, r.stderr))
    return r.stdout.strip()


def psql_file(path, db):
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", db, "-f", path],
                   check=True, capture_output=True)


def req_bytes(expr):
    """SSP2 request bytes from a SQL expression (a gwtest.* builder)."""
    return bytes.fromhex(psql("SELECT encode(%s, 'hex')" % expr))


def reqs_bytes(expr, n):
    """The request bytes of expr for i = 1 .. n, in that order (expr may use i), built in one
    statement."""
    return [bytes.fromhex(x) for x in psql("SELECT string_agg(encode(%s, 'hex'), ',' ORDER BY i) "
                                           "FROM generate_series(1, %d) i" % (expr, n)).split(",")]


def render(body):
    """A response rendered by syncular.debug_render (SPEC §11), as JSON."""
    return json.loads(psql("SELECT syncular.debug_render(decode('%s', 'hex'))" % body.hex()))


def frames(body, kind=None):
    fr = render(body)["frames"]
    return [f for f in fr if kind is None or f["type"] == kind]


def conninfo(db="gwtest"):
    """The cluster of the test environment (PGHOST/PGPORT/PGUSER; a password comes from PGPASSWORD)."""
    parts = ["%s=%s" % (k, os.environ[v]) for k, v in (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"))
             if os.environ.get(v)]
    return " ".join(parts + ["dbname=" + db])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Gateway:
    """One syncular-gateway process."""

    def __init__(self, *args, db="gwtest", env=None, wait=True, mount="/sync-api"):
        self.port = free_port()
        self.mount = mount
        self.log = os.path.join(TMP, "gw-%d.log" % self.port)
        self.args = [BIN, "--db", conninfo(db), "--listen", "127.0.0.1:%d" % self.port] + list(args)
        e = dict(os.environ, SYNCULAR_GATEWAY_AUTH_HEADERS="x-api-key")
        e.update(env or {})
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=e)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("gateway exited %s: %s" % (self.proc.returncode, self.logtext()))
            try:
                st, _, _ = self.request("GET", self.mount + "/readyz")
                if st == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("gateway not ready: " + self.logtext())

    def logtext(self):
        with open(self.log) as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, timeout=15):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def metric(self, name):
        """the value of an unlabelled sample of GET <mount>/metrics"""
        st, _, body = self.request("GET", self.mount + "/metrics")
        assert st == 200, body
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError("no %s in /metrics" % name)

    def sync(self, body, headers=None, gzip_req=False, accept_gzip=False, ctype=CT):
        h = {"Content-Type": ctype}
        h.update(headers or {})
        if gzip_req:
            body = gzip.compress(body)
            h["Content-Encoding"] = "gzip"
        if accept_gzip:
            h["Accept-Encoding"] = "gzip"
        st, hd, data = self.request("POST", "/sync-api/sync", body, h)
        if hd.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        return st, hd, data

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                raise RuntimeError("gateway did not exit on signal %d" % sig)
        return self.proc.returncode


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwt_hs256(claims, secret, alg="HS256"):
    head = b64u(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    body = b64u(json.dumps(claims).encode())
    msg = ("%s.%s" % (head, body)).encode()
    if alg == "none":
        return "%s.%s." % (head, body)
    sig = hmac.new(secret.encode(), msg, hashlib.sha256).digest()
    return "%s.%s.%s" % (head, body, b64u(sig))


def openssl_keypair(kind):
    """(private PEM path, public PEM path) for 'rsa' or 'ec' (P-256)."""
    priv = os.path.join(TMP, kind + ".key")
    pub = os.path.join(TMP, kind + ".pub")
    if kind == "rsa":
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                        "-out", priv], check=True, capture_output=True)
    else:
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-out", priv], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", priv, "-pubout", "-out", pub], check=True, capture_output=True)
    return priv, pub


def _der_to_raw(der):
    # ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } -> r || s, 32 bytes each
    i = 2 if der[1] < 0x80 else 3
    out = b""
    for _ in range(2):
        n = der[i + 1]
        v = der[i + 2:i + 2 + n].lstrip(b"\0")
        out += v.rjust(32, b"\0")
        i += 2 + n
    return out


def jwt_signed(claims, priv, alg):
    head = b64u(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    body = b64u(json.dumps(claims).encode())
    msg = ("%s.%s" % (head, body)).encode()
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", priv], input=msg, check=True,
                         capture_output=True).stdout
    if alg == "ES256":
        sig = _der_to_raw(sig)
    return "%s.%s.%s" % (head, body, b64u(sig))


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = []

    def run(self, fn):
        self.n += 1
        t0 = time.time()
        try:
            fn()
            print("ok %d - %s (%.1fs)" % (self.n, fn.__name__, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report and continue
            import traceback
            traceback.print_exc()
            print("not ok %d - %s: %s" % (self.n, fn.__name__, e), flush=True)
            self.failed.append(fn.__name__)


def expect_error(st, data, status, code):
    assert st == status, "status %s, want %s: %r" % (st, status, data[:300])
    doc = json.loads(data)
    assert doc["code"] == code, doc
    for k in ("category", "retryable", "recommendedAction", "message"):
        assert k in doc, doc
    return doc
