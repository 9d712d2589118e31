# Sourced by bench/push-waits.sh, bench/push-scale.sh and bench/push-statements.sh: (re)creates the database `bench`
# in the cluster of the PG* environment with bench/setup.sql; q SQL runs one statement there
# (unaligned, tuples only, stops on an error).
db=bench
q() { psql -X -Atq -d "$db" -v ON_ERROR_STOP=1 -c "$1"; }
dropdb --if-exists "$db" 2>/dev/null || true
createdb "$db"
psql -X -q -d "$db" -v ON_ERROR_STOP=1 -f "$(dirname "${BASH_SOURCE[0]}")/setup.sql" >/dev/null
# sample_waits LABEL SECONDS: pg_stat_activity sampled every SECONDS into bench.waits (c, t, e,
# rel: LABEL, wait_event_type / wait_event of every active pgbench backend, "CPU" = none, and the
# relation or lock type of its ungranted pg_locks entries) until no pgbench backend was seen for
# a second after the first one (pgbench connects once on its own before its clients do), at
# most 600 s.  Start it in the background just before pgbench.
sample_waits() {
  psql -X -Atq -d "$db" -c "DO \$\$
DECLARE last timestamptz; n int; t0 timestamptz := clock_timestamp();
BEGIN
  LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT count(*) INTO n FROM pg_stat_activity WHERE application_name = 'pgbench';
    IF n > 0 THEN
      last := clock_timestamp();
    END IF;
    EXIT WHEN clock_timestamp() > last + interval '1 s' OR clock_timestamp() > t0 + interval '600 s';
    INSERT INTO bench.waits
    SELECT '$1', coalesce(a.wait_event_type, 'CPU'), coalesce(a.wait_event, 'CPU'),
           (SELECT string_agg(DISTINCT coalesce(l.relation::regclass::text, l.locktype), ',')
              FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)
      FROM pg_stat_activity a WHERE a.application_name = 'pgbench' AND a.state = 'active';
    PERFORM pg_sleep($2);
  END LOOP;
END \$\$"
}
