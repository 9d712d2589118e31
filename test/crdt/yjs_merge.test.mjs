// Random concurrent Yjs edits, made by the Yjs library itself, merged by syncular's built-in
// `yjs-doc` merger (SPEC §5.10.2).  For every case:
//   - applying merge(a, b) gives the document of applying a and b (in an order for which Yjs
//     gives that document: Yjs itself differs by order when it splits a surrogate pair);
//   - merge(a, b) and merge(b, a) are the same bytes (commutative);
//   - merge(merge(a, b), c) and merge(a, merge(b, c)) give the document of applying a, b and c
//     (associative);
//   - merge(m, m) is m and merge(m, a) gives m's document (idempotent).
// The updates overlap partially (diffs against older state vectors of the same replica), so
// the merger must slice and de-duplicate struct ranges, and they carry every content type.
//
// Merges run in PostgreSQL: `syncular.crdt_merge('yjs-doc', a, b)` through psql (connection from
// the usual PG* variables; PSQL overrides the client).  YJS_MERGE_CLI=<binary a-file b-file>
// runs a standalone build of src/codec/yjs.c instead.  CASES (default 200) and SEED set the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';

const CASES = Number(process.env.CASES || 200);
let seed = Number(process.env.SEED || 20261201);

function rand() {                     // mulberry32: reproducible runs
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
// Client ids and subdocument guids come from the seeded generator, so a run is reproducible.
function newDoc(opts = {}) {
  const d = new Y.Doc({ guid: `doc-${int(1e9)}`, ...opts });
  d.clientID = 1 + int(0xfffffffe);
  return d;
}
const WORDS = ['a', 'bc', 'def', 'héllo', '😀', 'x😀y', ' ', '\n', 'zzzz', '日本'];

function randomValue(depth = 0) {
  switch (int(depth > 1 ? 6 : 8)) {
    case 0: return int(1000) - 500;
    case 1: return rand() * 1e6;
    case 2: return pick(WORDS);
    case 3: return rand() < 0.5;
    case 4: return null;
    case 5: return new Uint8Array([int(256), int(256), int(256)]);
    case 6: return [randomValue(depth + 1), randomValue(depth + 1)];
    default: return { k: randomValue(depth + 1), [pick(WORDS)]: randomValue(depth + 1) };
  }
}

function editText(t) {
  const len = t.length;
  const r = int(10);
  if (r < 5 || len === 0) t.insert(int(len + 1), pick(WORDS), rand() < 0.2 ? { bold: true } : undefined);
  else if (r < 8) { const i = int(len); t.delete(i, 1 + int(Math.min(4, len - i))); }
  else if (r < 9) { const i = int(len); t.format(i, 1 + int(Math.min(3, len - i)), { italic: rand() < 0.5 ? true : null }); }
  else t.insertEmbed(int(len + 1), { image: pick(WORDS) });
}

function editArray(a) {
  const len = a.length;
  const r = int(10);
  if (r < 4 || len === 0) a.insert(int(len + 1), [randomValue(), randomValue()]);
  else if (r < 6) { const i = int(len); a.delete(i, 1 + int(Math.min(2, len - i))); }
  else if (r < 7) { const m = new Y.Map(); m.set('n', randomValue()); a.insert(int(len + 1), [m]); }
  else if (r < 8) { const t = new Y.Text(); t.insert(0, pick(WORDS)); a.insert(int(len + 1), [t]); }
  else if (r < 9) { const d = newDoc(); a.insert(int(len + 1), [d]); }
  else {
    const nested = a.toArray().filter((x) => x instanceof Y.Map || x instanceof Y.Text);
    if (nested.length > 0) {
      const x = pick(nested);
      if (x instanceof Y.Map) x.set(pick(WORDS), randomValue()); else editText(x);
    } else a.push([randomValue()]);
  }
}

function editMap(m) {
  const r = int(10);
  if (r < 6) m.set(pick(WORDS), randomValue());
  else if (r < 8 && m.size > 0) m.delete(pick([...m.keys()]));
  else { const a = new Y.Array(); a.push([randomValue()]); m.set('arr' + int(3), a); }
}

function editXml(x) {
  const r = int(4);
  if (r === 0 || x.length === 0) {
    const el = new Y.XmlElement(pick(['p', 'h1', 'li']));
    el.setAttribute('class', pick(WORDS));
    el.insert(0, [new Y.XmlText(pick(WORDS))]);
    x.insert(int(x.length + 1), [el]);
  } else if (r === 1) x.insert(int(x.length + 1), [new Y.XmlText(pick(WORDS))]);
  else if (r === 2) x.delete(int(x.length), 1);
  else x.insert(0, [new Y.XmlHook('hook')]);
}

function randomEdit(doc) {
  doc.transact(() => {
    switch (int(4)) {
      case 0: editText(doc.getText('text')); break;
      case 1: editArray(doc.getArray('array')); break;
      case 2: editMap(doc.getMap('map')); break;
      default: editXml(doc.getXmlFragment('xml'));
    }
  });
}

// The clock ranges an update's structs (Skips excluded) and delete set cover, per client: what
// is still pending in a document, independent of how Yjs happened to split it.
function coverage({ structs, ds }) {
  const ranges = structs.filter((x) => x.constructor.name !== 'Skip')
    .map((x) => [x.id.client, x.id.clock, x.length]);
  for (const [client, items] of ds.clients) for (const d of items) ranges.push([-client - 1, d.clock, d.len]);
  ranges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    if (last && last[0] === r[0] && last[1] + last[2] >= r[1]) last[2] = Math.max(last[2], r[1] + r[2] - last[1]);
    else out.push([...r]);
  }
  return out;
}

function view(doc) {
  return JSON.stringify({
    text: doc.getText('text').toDelta(),
    array: doc.getArray('array').toJSON(),
    map: doc.getMap('map').toJSON(),
    xml: doc.getXmlFragment('xml').toString(),
    sv: [...Y.decodeStateVector(Y.encodeStateVector(doc)).entries()].sort((a, b) => a[0] - b[0]),
    ds: [...Y.snapshot(doc).ds.clients.entries()].sort((a, b) => a[0] - b[0])
      .map(([c, items]) => [c, items.map((i) => [i.clock, i.len])]),
    pending: doc.store.pendingStructs ? coverage(Y.decodeUpdateV2(doc.store.pendingStructs.update)) : null,
    pendingDs: doc.store.pendingDs ? coverage(Y.decodeUpdateV2(doc.store.pendingDs)) : null,
  }, (k, v) => (v instanceof Uint8Array ? [...v]      // map keys sorted: their order is integration order
    : v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v));
}

function docOf(...updates) {
  const doc = new Y.Doc({ gc: false });
  for (const u of updates) Y.applyUpdate(doc, u);
  return view(doc);
}

// A case: a shared history, then three replicas edit concurrently (and sometimes see each
// other's edits).  The three updates of a case are drawn from what replicas send: full states
// taken after each round, diffs of the final state against an older state vector, single
// incremental updates and Y.mergeUpdates of a random subset of them.  Together they overlap
// partially (an older state ends inside a struct a later diff starts before), leave gaps (a
// subset of increments) and split items differently, which is what the merger must reconcile.
function makeCase() {
  const base = newDoc({ gc: rand() < 0.5 });
  for (let i = int(20); i > 0; i--) randomEdit(base);
  const replicas = [0, 1, 2].map(() => {
    const d = newDoc({ gc: rand() < 0.5 });
    Y.applyUpdate(d, Y.encodeStateAsUpdate(base));
    const r = { doc: d, incs: [], states: [], svs: [Y.encodeStateVector(d)] };
    d.on('update', (u) => r.incs.push(u));
    return r;
  });
  for (let round = 0; round < 3; round++) {
    for (const [i, r] of replicas.entries()) {
      for (let n = 1 + int(8); n > 0; n--) randomEdit(r.doc);
      r.states.push(Y.encodeStateAsUpdate(r.doc));
      r.svs.push(Y.encodeStateVector(r.doc));
      if (rand() < 0.3) {       // some replicas saw some others' edits
        const j = int(3);
        if (j !== i) Y.applyUpdate(r.doc, Y.encodeStateAsUpdate(replicas[j].doc));
      }
    }
  }
  const draw = () => {
    const r = pick(replicas);
    switch (int(4)) {
      case 0: return pick(r.states);
      case 1: return Y.encodeStateAsUpdate(r.doc, pick(r.svs));
      case 2: return pick(r.incs);
      default: return Y.mergeUpdates(r.incs.filter(() => rand() < 0.4));
    }
  };
  return [draw(), draw(), draw()];
}

// ---------------------------------------------------------------- merge backends

const hex = (b) => Buffer.from(b).toString('hex');

function sqlOf(e) {
  return e instanceof Uint8Array ? `'\\x${hex(e)}'::bytea`
    : `syncular.crdt_merge('yjs-doc', ${sqlOf(e[1])}, ${sqlOf(e[2])})`;
}

function evalPsql(exprs) {
  const dir = mkdtempSync(join(tmpdir(), 'syncular-crdt-'));
  try {
    const file = join(dir, 'merges.sql');
    writeFileSync(file, exprs.map((e) => `SELECT encode(${sqlOf(e)}, 'hex');`).join('\n'));
    const r = spawnSync(process.env.PSQL || 'psql', ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-f', file],
      { encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`psql failed: ${r.stderr || r.error}`);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    if (lines.length !== exprs.length) throw new Error(`psql returned ${lines.length} rows for ${exprs.length}`);
    return lines.map((l) => new Uint8Array(Buffer.from(l, 'hex')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function evalCli(exprs) {
  const dir = mkdtempSync(join(tmpdir(), 'syncular-crdt-'));
  const one = (e) => {
    if (e instanceof Uint8Array) return e;
    const a = one(e[1]);
    const b = one(e[2]);
    writeFileSync(join(dir, 'a'), a);
    writeFileSync(join(dir, 'b'), b);
    const r = spawnSync(process.env.YJS_MERGE_CLI, [join(dir, 'a'), join(dir, 'b')], { maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`merge failed: ${r.stderr}`);
    return new Uint8Array(r.stdout);
  };
  try {
    return exprs.map(one);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const evaluate = process.env.YJS_MERGE_CLI ? evalCli : evalPsql;

// ---------------------------------------------------------------- the run

const cases = [];
for (let i = 0; i < CASES; i++) cases.push(makeCase());
const M = (a, b) => ['m', a, b];
const exprs = [];
for (const [a, b, c] of cases) {
  exprs.push(M(a, b), M(b, a), M(M(a, b), c), M(a, M(b, c)), M(M(a, b), M(a, b)), M(M(a, b), a),
    M(new Uint8Array(0), a));
}
const results = evaluate(exprs);

// Yjs itself is not always order-independent: an item split inside a surrogate pair turns the
// halves into U+FFFD in one application order and not in another.  So a merged document must
// equal the document of *some* order of applying the inputs (all of them when Yjs agrees).
const permutations = (xs) => (xs.length <= 1 ? [xs]
  : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p])));
const docsOf = (...us) => new Set(permutations(us).map((p) => docOf(...p)));

let failures = 0;
let yjsOrderDependent = 0;
const check = (ok, i, what) => {
  if (!ok) {
    failures++;
    if (failures <= 10) console.log(`not ok case ${i}: ${what}`);
  }
};
cases.forEach(([a, b, c], i) => {
  const [ab, ba, ab_c, a_bc, abab, ab_a, ea] = results.slice(i * 7, i * 7 + 7);
  const both = docsOf(a, b);
  const all = docsOf(a, b, c);
  if (both.size > 1 || all.size > 1) yjsOrderDependent++;
  check(both.has(docOf(ab)), i, 'apply(merge(a, b)) differs from applying a and b');
  check(hex(ab) === hex(ba), i, 'merge(a, b) and merge(b, a) differ');
  check(all.has(docOf(ab_c)), i, 'merge(merge(a, b), c) differs from applying a, b, c');
  check(all.has(docOf(a_bc)), i, 'merge(a, merge(b, c)) differs from applying a, b, c');
  check(hex(abab) === hex(ab), i, 'merge(m, m) is not m');
  check(docOf(ab_a) === docOf(ab), i, 'merge(m, a) changed the document');
  check(docOf(ea) === docOf(a), i, 'merge(empty, a) differs from a');
});
const total = cases.length * 7;
if (yjsOrderDependent > 0) console.log(`# ${yjsOrderDependent} cases where Yjs itself depends on the application order`);
console.log(`${failures === 0 ? 'ok' : 'not ok'} - yjs-doc merger: ${cases.length} random cases, ` +
  `${total - failures}/${total} checks passed (seed ${process.env.SEED || 20261201})`);
process.exit(failures === 0 ? 0 : 1);
