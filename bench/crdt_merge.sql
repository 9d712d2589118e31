-- CRDT merge throughput (SPEC §5.10): the built-in yjs-doc merger (syncular.crdt_merge) on a
-- stored document of about 1 kB and 100 kB and a small incoming edit (what a push of one
-- keystroke costs), and two documents of that size merged with each other; next to a plain
-- bytea concatenation of the same two values in the same loop (the floor: one SQL call that
-- touches both values).  Prints merges/s, concatenations/s and their ratio; asserts nothing.
-- Usage: psql -v secs=3 -f bench/crdt_merge.sql  (an existing database; needs the extension)
\set QUIET on
\if :{?secs}
\else
\set secs 3
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS syncular;

CREATE FUNCTION pg_temp.varuint(n bigint) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE out bytea := '';
BEGIN
  LOOP
    IF n < 128 THEN RETURN out || set_byte('\x00', 0, n::int); END IF;
    out := out || set_byte('\x00', 0, (n % 128 + 128)::int);
    n := n / 128;
  END LOOP;
END $$;

-- A Yjs v1 update of `bytes` bytes or a little more: `clients` clients (ids base+1..) typing
-- 16-character runs into the root text "t", each run after the previous one; every fourth run
-- partly deleted (a delete set entry of 3 units).
CREATE FUNCTION pg_temp.doc(bytes int, clients int, base int) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  per int := greatest(1, bytes / (clients * 22));
  structs bytea := pg_temp.varuint(clients);
  ds bytea := pg_temp.varuint(clients);
  run bytea := convert_to('abcdefghijklmnop', 'UTF8');
  dels bytea;
  c int;
BEGIN
  FOR c IN REVERSE base + clients .. base + 1 LOOP   -- canonical order: clients descending
    structs := structs || pg_temp.varuint(per) || pg_temp.varuint(c) || '\x00'::bytea
               || '\x0401017410'::bytea || run;
    dels := '';
    FOR j IN 1 .. per - 1 LOOP
      structs := structs || '\x84'::bytea || pg_temp.varuint(c) || pg_temp.varuint(j * 16 - 1) || '\x10'::bytea || run;
      IF j % 4 = 0 THEN dels := dels || pg_temp.varuint(j * 16 + 2) || '\x03'::bytea; END IF;
    END LOOP;
    ds := ds || pg_temp.varuint(c) || pg_temp.varuint((per - 1) / 4) || dels;
  END LOOP;
  RETURN structs || ds;
END $$;

-- ops/s of one kind over `secs` seconds
CREATE FUNCTION pg_temp.rate(kind text, a bytea, b bytea, secs float8) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  n bigint := 0;
  r bytea;
BEGIN
  WHILE clock_timestamp() - t0 < make_interval(secs => secs) LOOP
    IF kind = 'merge' THEN
      r := syncular.crdt_merge('yjs-doc', a, b);
    ELSE
      r := a || b;
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n / extract(epoch FROM clock_timestamp() - t0);
END $$;

CREATE TEMP TABLE cases AS
SELECT * FROM (VALUES
  (1, 'merge 1 kB doc + keystroke',   pg_temp.doc(1000, 4, 0),    '\x0101e707008401050178 00'::bytea),
  (2, 'merge 100 kB doc + keystroke', pg_temp.doc(100000, 4, 0),  '\x0101e707008401050178 00'::bytea),
  (3, 'merge 1 kB doc + 1 kB doc',    pg_temp.doc(1000, 4, 0),    pg_temp.doc(1000, 4, 2)),
  (4, 'merge 100 kB doc + 100 kB doc', pg_temp.doc(100000, 4, 0), pg_temp.doc(100000, 4, 2))) c(ord, name, a, b);
-- every input is a valid, canonical update: merging it with itself gives it back
SELECT bool_and(syncular.crdt_merge('yjs-doc', a, a) = a) AS docs_canonical FROM cases \gset
\echo docs canonical: :docs_canonical

\set QUIET off
\pset footer off
SELECT name AS "case", length(a) + length(b) AS "input bytes",
       round(m::numeric, 1) AS "merges/s", round(c::numeric, 1) AS "concat/s",
       round((m / c)::numeric, 4) AS ratio,
       round(((length(a) + length(b)) * m / 1e6)::numeric, 1) AS "merge MB/s"
  FROM (SELECT ord, name, a, b, pg_temp.rate('merge', a, b, :secs) AS m,
               pg_temp.rate('concat', a, b, :secs) AS c FROM cases) r
 ORDER BY ord;
