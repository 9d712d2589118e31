#!/usr/bin/python3
"""Peak memory of the plain (non-sanitizer) gateway under the two loads docs/gateway.md reports:
64 concurrent maximum-size /sync bodies, and 64 stalled uploads (/sync bodies and blob PUTs that
stop after their first MiB).  Default limits (--max-inflight-bytes 256 MiB, --max-body from the
database).  Reads VmHWM (peak resident set) from /proc.  Not part of `make gateway-check`:
  PGHOST=... PGPORT=... SYNCULAR_GATEWAY_BIN=gateway/syncular-gateway python3 test/gateway/memory_measure.py
(run after test/gateway/run.py has set up the gwtest database)."""
import os, socket, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gwlib import CT, Gateway  # noqa: E402

MB = 1024 * 1024


def status(g, key):
    with open("/proc/%d/status" % g.proc.pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def head(path, total, method=b"POST"):
    return (method + b" " + path + b" HTTP/1.1\r\nHost: t\r\nx-api-key: u1@p1\r\nContent-Type: " + CT.encode() +
            b"\r\nContent-Length: %d\r\n\r\n" % total)


def concurrent_bodies(g, n, size):
    out = []
    chunk = b"\0" * MB

    def one():
        s = socket.create_connection(("127.0.0.1", g.port), timeout=120)
        try:
            s.sendall(head(b"/sync-api/sync", size))
            left = size
            while left > 0:
                s.sendall(chunk[:min(left, MB)])
                left -= MB
        except OSError:
            pass
        try:
            r = s.recv(64)
            out.append(int(r.split()[1]) if r.startswith(b"HTTP/1.1") else 0)
        except OSError:
            out.append(0)
        s.close()

    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def stalled(g, n, size, sent):
    socks = []
    for i in range(n):
        path = b"/sync-api/sync" if i % 2 == 0 else b"/sync-api/blobs/sha256:" + (b"%064x" % i)
        s = socket.create_connection(("127.0.0.1", g.port), timeout=30)
        try:
            s.sendall(head(path, size, b"POST" if i % 2 == 0 else b"PUT") + b"\0" * sent)
        except OSError:
            pass
        socks.append(s)
    time.sleep(3)
    return socks


def main():
    size = int(os.environ.get("BODY", str(8 * MB - 4096)))
    g = Gateway()
    try:
        base = status(g, "VmRSS")
        res = concurrent_bodies(g, 64, size)
        print("64 concurrent %d-byte bodies: answers %s; VmRSS at start %d MiB, peak (VmHWM) %d MiB"
              % (size, {k: res.count(k) for k in sorted(set(res))}, base // MB, status(g, "VmHWM") // MB))
    finally:
        g.stop()
    g = Gateway()
    try:
        socks = stalled(g, 64, 16 * MB, MB)
        print("64 stalled uploads (32 /sync bodies of 16 MiB and 32 blob PUTs of 16 MiB, 1 MiB sent each): "
              "peak (VmHWM) %d MiB" % (status(g, "VmHWM") // MB))
        for s in socks:
            s.close()
        socks = stalled(g, 64, size, MB)
        print("64 stalled /sync and blob uploads of %d bytes, 1 MiB sent each: peak (VmHWM) %d MiB"
              % (size, status(g, "VmHWM") // MB))
        for s in socks:
            s.close()
    finally:
        g.stop()


if __name__ == "__main__":
    main()
