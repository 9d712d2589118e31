-- crdt_merge: the built-in yjs-doc merger (SPEC §5.10.2) on hand-built Yjs v1 updates, through
-- syncular.crdt_merge.  Layout: nclients, per client {nstructs, client, clock, structs}, then
-- the delete set {nclients, per client {client, nranges, (clock, len)...}}; all varuints.
-- The updates below are client 1 editing the root text "t":
--   a  = "abc" at clock 0 (info 04: string, parent = root key "t")
--   b  = "de"  at clock 3 (info 84: string with origin 1:2)
--   c  = "abcde" at clock 0 (the same edits as one struct, as a Yjs document stores them)
--   d  = "cdef" at clock 2 (origin 1:1): overlaps the end of a
--   e  = "x" at clock 5 (origin 1:4): leaves a gap after a
\i sql/test_helpers.psql
\set a '\\x01010100040101740361626300'
\set b '\\x0101010384010202646500'
\set c '\\x010101000401017405616263646500'
\set d '\\x01010102840101046364656600'
\set e '\\x01010105840104017800'
CREATE FUNCTION pg_temp.m(x bytea, y bytea) RETURNS text LANGUAGE sql AS $$
  SELECT encode(syncular.crdt_merge('yjs-doc', x, y), 'hex')
$$;

-- two consecutive runs of one client become one run, in either order (commutative bytes)
SELECT pg_temp.m(:'a', :'b') AS ab, pg_temp.m(:'b', :'a') = pg_temp.m(:'a', :'b') AS commutes;
-- a struct covered by a longer one is written once: the longer one wins
SELECT pg_temp.m(:'a', :'c') AS ac, pg_temp.m(:'c', :'b') AS cb,
       pg_temp.m(:'c', :'a') = pg_temp.m(:'a', :'c') AS commutes;
-- a partly covered struct is sliced where the other ends: "cdef" from clock 3 is "def" with
-- origin 1:2 (84 01 02, then the string 03 "def")
SELECT pg_temp.m(:'a', :'d') AS ad, pg_temp.m(:'d', :'a') = pg_temp.m(:'a', :'d') AS commutes;
-- a gap between runs is kept as a Skip struct (0a, length 2)
SELECT pg_temp.m(:'a', :'e') AS ae;
-- idempotent: merge(m, m) = m, merge(m, a) = m; associative on these inputs
SELECT pg_temp.m(decode(pg_temp.m(:'a', :'d'), 'hex'), decode(pg_temp.m(:'a', :'d'), 'hex')) = pg_temp.m(:'a', :'d') AS mm,
       pg_temp.m(decode(pg_temp.m(:'a', :'d'), 'hex'), :'a') = pg_temp.m(:'a', :'d') AS m_a,
       pg_temp.m(decode(pg_temp.m(:'a', :'b'), 'hex'), :'e') = pg_temp.m(:'a', decode(pg_temp.m(:'b', :'e'), 'hex')) AS assoc;
-- NULL stored (a new row) and the empty update: the incoming update, normalized; two empty
-- updates merge to the empty document state 00 00
SELECT encode(syncular.crdt_merge('yjs-doc', NULL, :'a'), 'hex') AS null_a,
       pg_temp.m('', :'a') AS empty_a, pg_temp.m(:'a', '') AS a_empty, pg_temp.m('', '') AS empty_empty;

-- delete sets: unioned per client, overlapping or adjacent ranges joined, clients descending
--   1:0+1 with {1:1+1, 1:0+1, 2:5+2} -> 2:5+2, 1:0+2;  {1:0+3, 1:5+1} with 1:2+4 -> 1:0+6
SELECT pg_temp.m('\x000101010001', '\x000201020101000102010502') AS adjacent;
SELECT pg_temp.m('\x0001010200030501', '\x0001010102 04') AS overlapping;

-- a slice inside a surrogate pair: GC 1:0 (len 2) and "😀x" from clock 1 (the emoji is two
-- UTF-16 units): the slice from clock 2 starts with the pair's low half, written as U+FFFD
SELECT pg_temp.m('\x01010100000200', '\x0101010184010005f09f98807800') AS surrogate;
-- a GC partly covered by a deleted-content item (01, length 3) is sliced to its length 2;
-- a deleted-content item partly covered by a GC keeps its last 3 units (81 01 01 03)
SELECT pg_temp.m('\x01010100010101740300', '\x01010101000400') AS gc_slice;
SELECT pg_temp.m('\x01010100000200', '\x0101010181010004 00') AS deleted_slice;
-- JSON and Any contents are sliced element by element
--   JSON ["1", undefined, {"a":2}] and Any [5, "x", {"k": [true]}] from clock 1, after GC 1:0+2
SELECT pg_temp.m('\x01010100000200', '\x01010101820100030131' || '\x09'::bytea || convert_to('undefined', 'UTF8')
                   || '\x07'::bytea || convert_to('{"a":2}', 'UTF8') || '\x00'::bytea) AS json_slice;
SELECT pg_temp.m('\x01010100000200', '\x0101010188010003 7d05 770178 7601016b750178 00') AS any_slice;
-- every content type decodes and is copied verbatim: binary, embed, format, XML element "p",
-- map, any with every value tag, subdocument (guid "g", opts {})
SELECT pg_temp.m('', decode(replace(
    '01 07 01 00'
    ' 03 010174 03aabbcc'
    ' 05 010174 07' || encode('{"x":1}', 'hex') ||
    ' 06 010174 04' || encode('bold', 'hex') || ' 04' || encode('true', 'hex') ||
    ' 07 010174 03 0170'
    ' 07 010174 01'
    ' 08 010174 0b 7f 7e 7d41 7c0000803f 7b000000000000f03f 7a0000000000000001 79 78 770161 7601016b7500 74020102'
    ' 09 010174 0167 7600'
    ' 00', ' ', ''), 'hex')) AS every_content;

-- malformed updates: sync.crdt_merge_failed "CRDT merger failed", never a crash
SELECT t.name, pg_temp.try(format('SELECT syncular.crdt_merge(%L, %L::bytea, %L::bytea)', 'yjs-doc', '\x', t.u)) AS result
  FROM (VALUES ('truncated',          '\x01010100040101740361'),
               ('no delete set',      '\x010101000401017403616263'),
               ('trailing bytes',     '\x000000'),
               ('unknown content',    '\x010101000b00'),
               ('bad parent info',    '\x01010100040200'),
               ('count beyond bytes', '\x01ff0f'),
               ('invalid UTF-8',      '\x01010100040101740261ff00'),
               ('bad JSON',           '\x01010100020101740101' || '7b' || '00'),
               ('unknown any tag',    '\x0101010008010174' || '01' || '50' || '00'),
               ('unknown type ref',   '\x010101000701017409' || '00'),
               ('integer beyond 2^53', '\x01010180808080808080800100'),
               ('clock beyond 2^53',  '\x010101ffffffffffffff0f000200'),
               ('delete beyond 2^53', '\x000101' || '01' || 'ffffffffffffff0f' || '02'),
               ('one byte',           '\x00')) AS t(name, u);
-- nesting of `any` values is bounded (65 nested arrays)
SELECT pg_temp.try(format('SELECT syncular.crdt_merge(%L, NULL, %L::bytea)', 'yjs-doc',
         '\x0101010008010174' || '01' || repeat('7501', 65) || '7e' || '00')) AS deep_any;
-- 64 nested arrays are fine
SELECT pg_temp.try(format('SELECT length(syncular.crdt_merge(%L, NULL, %L::bytea))', 'yjs-doc',
         '\x0101010008010174' || '01' || repeat('7501', 64) || '7e' || '00')) AS deep_any_ok;
-- a malformed stored value fails the same way
SELECT pg_temp.try(format('SELECT syncular.crdt_merge(%L, %L::bytea, %L::bytea)', 'yjs-doc', '\x0102', :'a')) AS bad_stored;
-- unknown type, NULL arguments
SELECT pg_temp.try($$SELECT syncular.crdt_merge('automerge', NULL, '\x00')$$) AS unknown_type;
SELECT pg_temp.try($$SELECT syncular.crdt_merge('yjs-doc', '\x00', NULL)$$) AS null_incoming;
