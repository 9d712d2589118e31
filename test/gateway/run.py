#!/usr/bin/python3
"""End-to-end tests of syncular-gateway against a real PostgreSQL with the extension installed
(PGHOST/PGPORT of a throwaway cluster).  TAP output; exit status 1 when a test fails.
Run by `make gateway-check` and scripts/test.sh."""
import gzip, json, os, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gwlib import (BIN, CT, Gateway, Tap, conninfo, expect_error, frames, jwt_hs256, jwt_signed,  # noqa: E402
                   openssl_keypair, psql, psql_file, req_bytes)
import http_tests  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def setup_databases():
    for db in ("gwtest", "gwnoext", "gwold", "gwnoschema"):
        subprocess.run(["dropdb", "--if-exists", db], check=True, capture_output=True)
        subprocess.run(["createdb", db], check=True, capture_output=True)
    psql_file(os.path.join(HERE, "fixture.sql"), "gwtest")
    psql("CREATE EXTENSION syncular", db="gwnoschema")
    psql("CREATE EXTENSION syncular; UPDATE pg_extension SET extversion = '0.0.1' WHERE extname = 'syncular'",
         db="gwold")


def main():
    if not os.access(BIN, os.X_OK):
        print("Bail out! %s is not built (make gateway)" % BIN)
        return 1
    setup_databases()
    tap = Tap()
    mods = [http_tests]
    if os.environ.get("GW_REALTIME", "1") == "1":
        try:
            import realtime_tests
            mods.append(realtime_tests)
        except ImportError:
            pass
    for m in mods:
        m.run(tap)
    print("1..%d" % tap.n)
    if tap.failed:
        print("# failed: " + ", ".join(tap.failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
