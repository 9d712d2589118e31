#!/usr/bin/python3
"""End-to-end tests of syncular-gateway against a real PostgreSQL with the extension installed
(PGHOST/PGPORT of a throwaway cluster).  TAP output; exit status 1 when a test fails.
Run by `make gateway-check` and scripts/test.sh."""
import os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gwlib import BIN, TMP, Tap, psql, psql_file  # noqa: E402
import http_tests  # noqa: E402
import gzip_tests  # noqa: E402
import pool_tests  # noqa: E402
import groupcommit_tests  # noqa: E402
import blob_tests  # noqa: E402
import segment_tests  # noqa: E402
import operations_tests  # noqa: E402
import torture_tests  # noqa: E402

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
    # GW_SUITES=realtime: only the realtime tests (test/t/020_wakeup_ring.pl runs them in ring mode)
    suites = os.environ.get("GW_SUITES", "all")
    mods = [http_tests, gzip_tests, pool_tests, groupcommit_tests, blob_tests, segment_tests, operations_tests] if suites == "all" else []
    if os.environ.get("GW_REALTIME", "1") == "1":
        try:
            import realtime_tests
            mods.append(realtime_tests)
            if suites == "all":
                import ack_tests
                mods.append(ack_tests)
            if suites == "all":     # not in the ring-mode run: its time budget is spent
                import watch_tests
                mods.append(watch_tests)
        except ImportError:
            pass
    if suites == "all":
        import metrics_tests  # noqa: E402 (python3-prometheus-client)
        mods.append(metrics_tests)
        # last: the hostile-client families (docs/gateway.md "Limits and malformed input")
        mods.append(torture_tests)
    for m in mods:
        m.run(tap)
    # a sanitizer build (make gateway-check) reports memory errors and leaks in the gateway logs
    for name in sorted(os.listdir(TMP)):
        if name.endswith(".log"):
            with open(os.path.join(TMP, name)) as f:
                text = f.read()
            if re.search(r"AddressSanitizer|LeakSanitizer|runtime error:", text):
                print(text)
                tap.failed.append("sanitizer report in " + name)
    print("1..%d" % tap.n)
    if tap.failed:
        print("# failed: " + ", ".join(tap.failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
