// Tests of the node:wasi host. The module comes from ORRERY_WASM, or
// out/orrery.wasm at the repository root (make wasm).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ABI_VERSION, MAX_REQUEST_BYTES, OrreryError, load } from '../orrery.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const wasm = process.env.ORRERY_WASM || join(root, 'out', 'orrery.wasm');
if (!existsSync(wasm)) {
  throw new Error(`no module at ${wasm}: run make wasm, or set ORRERY_WASM`);
}
const corpusDir = join(root, 'testdata', 'corpus');
const orrery = await load(wasm);

function* corpus(dir = corpusDir) {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) yield* corpus(p);
    else if (p.endsWith('.json')) yield { name: relative(corpusDir, p).split(sep).join('/'), want: e && dirname(p).split(sep).pop(), bytes: readFileSync(p) };
  }
}

const pulses = { capacity_gbps: 50, jobs: ['a', 'b'].map((id) => ({ id, phases: [{ ms: 30, gbps: 40 }, { ms: 42, gbps: 0 }] })) };

test('abi version', () => {
  assert.equal(orrery.abiVersion, ABI_VERSION);
});

test('every corpus request gets the expected answer, twice the same', () => {
  let n = 0;
  for (const c of corpus()) {
    const first = orrery.handleBytes(c.bytes);
    const reply = JSON.parse(new TextDecoder().decode(first));
    assert.equal(reply.version, 1, c.name);
    assert.equal(('response' in reply) + ('error' in reply), 1, `${c.name}: exactly one of response and error`);
    if (c.want === 'ok') assert.ok(reply.response, `${c.name}: ${JSON.stringify(reply.error)}`);
    else assert.equal(reply.error?.code, c.want, c.name);
    assert.deepEqual(orrery.handleBytes(c.bytes), first, `${c.name}: a second call differs`);
    n++;
  }
  assert.ok(n >= 50, `only ${n} corpus files`);
});

test('typed calls', () => {
  const link = orrery.link(pulses);
  assert.equal(link.score, 1);
  assert.equal(link.unshifted_score, 0.75);
  assert.equal(link.status, 'optimal');
  assert.deepEqual(link.shifts_ms, { a: 0, b: 30 });

  const rank = orrery.rank({
    links: [{ id: 'l1', capacity_gbps: 50 }, { id: 'l2', capacity_gbps: 50 }],
    jobs: pulses.jobs,
    candidates: [{ id: 'apart', paths: { a: ['l1'], b: ['l2'] } }, { id: 'shared', paths: { a: ['l1'], b: ['l1'] } }],
  });
  assert.deepEqual(rank.ranking, ['apart', 'shared']); // both score 1; ties keep input order
  assert.equal(rank.candidates[1].shifts_ms.b, 30);

  const plan = orrery.plan(JSON.parse(readFileSync(join(corpusDir, 'ok', 'plan_small.json'))).request);
  assert.equal(plan.window, 4);
  assert.equal(plan.rounds.length, 4);
  for (const r of plan.rounds) assert.ok(r.every((id) => [1, 2, 3, 4, 5].includes(id)));

  // predict: the predictions the plan was made with, in request order.
  const pred = orrery.predict(JSON.parse(readFileSync(join(corpusDir, 'ok', 'plan_small.json'))).request);
  assert.deepEqual(pred.jobs.map((j) => j.id), plan.jobs.map((j) => j.id));
  assert.deepEqual(pred.jobs.map((j) => j.remaining_s), plan.jobs.map((j) => j.remaining_s));
});

test('errors are OrreryError with code and field', () => {
  const cases = [
    ['cassini.link', { ...pulses, capacity_gbps: 0 }, 'invalid_argument', 'capacity_gbps'],
    ['cassini.link', { ...pulses, jobs: [{ id: 'a', phases: [{ ms: 1, gbps: 'x' }] }] }, 'malformed_json', 'jobs[0].phases[0].gbps'],
    ['cassini.nope', {}, 'unknown_op', 'op'],
    ['cassini.link', '{"capacity_gbps": 50, "jobs": [', 'malformed_json', ''],
  ];
  for (const [op, req, code, field] of cases) {
    assert.throws(() => orrery.call(op, req), (err) => {
      assert.ok(err instanceof OrreryError);
      assert.equal(err.code, code);
      assert.equal(err.field, field);
      return true;
    });
  }
  assert.equal(orrery.link(pulses).score, 1, 'the instance still answers');
});

test('an envelope over the limit gets wire.Handle\'s answer', () => {
  const big = new Uint8Array(MAX_REQUEST_BYTES + 1).fill(32);
  assert.equal(
    orrery.handle(big),
    `{"version":1,"error":{"code":"limit_exceeded","message":"request is ${MAX_REQUEST_BYTES + 1} bytes, above the ${MAX_REQUEST_BYTES} byte limit"}}`,
  );
});

function pulse(t, up, bw) {
  const d = new Int32Array(t);
  d.fill(bw, 0, up);
  return d;
}

test('linkSearch: the fast path', () => {
  const demand = new Int32Array(144);
  demand.set(pulse(72, 30, 40), 0);
  demand.set(pulse(72, 30, 40), 72);
  for (const mode of ['exact', 'paper']) {
    const r = orrery.linkSearch({ periods: [72, 72], demand, capacity: 50, options: { mode } });
    assert.deepEqual([...r.shifts], [0, 30], mode);
    assert.equal(r.score, 1);
    assert.equal(r.unshifted, 0.75);
    assert.equal(r.status, 'optimal');
    assert.equal(r.points, 72);
    assert.equal(r.perimeter, 72);
    assert.equal(r.grid, 1);
    assert.equal(r.excess, 0n);
  }
  const pinned = orrery.linkSearch({ periods: [72, 72], demand, capacity: 50, fixed: [0, 10] });
  assert.deepEqual([...pinned.shifts], [0, 10]);
  assert.equal(pinned.excess, 20n * 30n, 'at a 10-tick delay the pulses overlap for 20 ticks');
  const free = orrery.linkSearch({ periods: [72, 72], demand, capacity: 50, fixed: [-1, 10] });
  assert.deepEqual([...free.shifts], [40, 10], 'the free job moves 30 ticks past the fixed one');
  assert.equal(free.excess, 0n);
  const budget = orrery.linkSearch({ periods: [72, 72], demand, capacity: 50, options: { budget: 1 } });
  assert.equal(budget.status, 'budget');
});

test('linkSearch agrees with cassini.link', () => {
  const req = JSON.parse(readFileSync(join(corpusDir, 'ok', 'link_exact_coprime_periods.json'))).request;
  const json = orrery.link(req);
  const a = new Int32Array(255).fill(25000, 141);
  const b = new Int32Array(181).fill(30000, 120);
  const demand = new Int32Array(436);
  demand.set(a, 0);
  demand.set(b, 255);
  const flat = orrery.linkSearch({ periods: [255, 181], demand, capacity: 50000 });
  assert.equal(flat.score, json.score);
  assert.equal(flat.unshifted, json.unshifted_score);
  assert.deepEqual([...flat.shifts], [json.shifts_ms.vgg16, json.shifts_ms.resnet]);
  assert.equal(flat.perimeter, json.perimeter_ms);
});

test('linkSearch errors', () => {
  const demand = pulse(8, 3, 40);
  const cases = [
    [{ periods: [8], demand, capacity: 0 }, 'invalid_argument', /capacity/],
    [{ periods: [8], demand: demand.subarray(1), capacity: 5 }, 'invalid_argument', /demands/],
    [{ periods: [8], demand, capacity: 5, options: { mode: 'fast' } }, 'invalid_argument', /mode/],
    [{ periods: [8], demand, capacity: 5, fixed: [1, 2] }, 'invalid_argument', /fixed/],
    [{ periods: [0], demand: [], capacity: 5 }, 'invalid_argument', /period is zero/],
    [{ periods: [], demand: [], capacity: 5 }, 'invalid_argument', /no jobs/],
    [{ periods: [6, 10, 15], demand: new Int32Array(31), capacity: 5, options: { maxPerimeter: 20 } }, 'limit_exceeded', /perimeter/],
  ];
  for (const [input, code, msg] of cases) {
    assert.throws(() => orrery.linkSearch(input), (err) => {
      assert.ok(err instanceof OrreryError, String(err));
      assert.equal(err.code, code);
      assert.match(err.message, msg);
      return true;
    });
  }
  assert.deepEqual([...orrery.linkSearch({ periods: [8, 8], demand: new Int32Array([...demand, ...demand]), capacity: 50 }).shifts], [0, 3]);
});

// node:wasi writes through a stale view of memory once the module's memory
// has grown (see memorySafeImports in orrery.js): a large plan with a time
// limit, which reads the clock and lets the Go runtime poll for its timer
// after growing memory by tens of megabytes, used to crash node (SIGSEGV or
// a V8 check failure) or corrupt the request bytes. Run it several times on
// one instance and check the answers and the instance's later calls.
test('a large time-limited plan, several times, on one instance', async () => {
  let seed = 1;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const jobs = [];
  for (let i = 0; i < 20000; i++) {
    const epochs = 5 + Math.floor(rand() * 25);
    const dur = Math.round((20 + rand() * 180) * 10) / 10;
    jobs.push({ id: i, gpus: [1, 1, 1, 2, 4][Math.floor(rand() * 5)], submit_s: 0, progress: 0,
      epoch_bs: new Array(epochs).fill(32), epoch_dur_s: new Array(epochs).fill(dur) });
  }
  const request = { gpus: 512, round: 0, config: { rounds: 10, time_limit_ms: 100000 }, jobs };
  const inst = await load(wasm);
  let first;
  for (let run = 0; run < 3; run++) {
    const t0 = Date.now();
    const plan = inst.plan(request);
    const took = Date.now() - t0;
    assert.ok(took >= 0 && took < 600000, `run ${run}: the clock says ${took} ms (a corrupted heap?)`);
    assert.equal(plan.jobs.length, 20000);
    const text = JSON.stringify(plan);
    if (first === undefined) first = text;
    assert.equal(text, first, `run ${run} answered differently`);
  }
  assert.deepEqual(inst.link(pulses).shifts_ms, { a: 0, b: 30 });
});

function swJob(i, gpus, epochs, dur, id = i) {
  const epoch_bs = Array.from({ length: epochs }, (_, e) => (e < Math.floor(epochs / 2) ? 32 : 64));
  return { id, gpus, submit_s: 60 * i, progress: 0, samples_per_epoch: 50000, epoch_bs, epoch_dur_s: epoch_bs.map((b) => dur - b / 16) };
}

test('the stateful scheduler: integer and string ids run the same rounds', () => {
  const a = orrery.newScheduler(4, { rounds: 5 });
  const b = orrery.newScheduler(4, { rounds: 5 });
  assert.ok(b.handle > a.handle);
  for (const [i, g, e, d] of [[1, 2, 8, 200], [2, 1, 6, 150], [3, 1, 10, 120]]) {
    a.add(swJob(i, g, e, d));
    b.add(swJob(i, g, e, d, `job-${i}`));
  }
  for (let r = 0; r < 6; r++) {
    const ids = a.schedule();
    assert.ok(ids.length > 0);
    assert.deepEqual(b.schedule(), ids.map((i) => `job-${i}`), `round ${r}`);
    for (const i of ids) {
      a.progress(i, 1 + (r >> 1));
      b.progress(`job-${i}`, 1 + (r >> 1));
    }
    assert.equal(a.endRound(), r + 1);
    b.endRound();
  }
  assert.ok(b.lastPlan().rounds.flat().every((i) => typeof i === 'string'));
  assert.throws(() => b.add(swJob(4, 1, 4, 100)), (e) => e instanceof OrreryError && e.field === 'job.id');
  assert.throws(() => a.remove(99), (e) => e instanceof OrreryError && e.field === 'id');
  a.close();
  b.close();
  assert.throws(() => a.schedule(), (e) => e instanceof OrreryError && e.field === 'handle');
});

test('load() takes the package module by default and says how to build a missing one', async () => {
  await assert.rejects(load(join(here, 'no-such.wasm')), /make wasm/);
});

test('a NaN or an infinity is refused naming its field, before encoding', () => {
  const bad = structuredClone(pulses);
  bad.jobs[1].phases[0].gbps = NaN;
  assert.throws(() => orrery.link(bad), (e) => e instanceof OrreryError && e.code === 'invalid_argument' &&
    e.field === 'jobs[1].phases[0].gbps' && /NaN is not a finite number/.test(e.message));
  assert.throws(() => orrery.link({ ...pulses, capacity_gbps: Infinity }), (e) => e.field === 'capacity_gbps');
  const s = orrery.newScheduler(4);
  assert.throws(() => s.add({ id: 1, gpus: 1, submit_s: 0, progress: 0, epoch_bs: [32, 32], epoch_dur_s: [60, -Infinity] }),
    (e) => e.field === 'job.epoch_dur_s[1]');
  s.close();
});

test('require() works: the CommonJS entry loads the ES module', async () => {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const cjs = require('../orrery.cjs');
  const o = await cjs.load(wasm);
  assert.equal(o.link(pulses).score, 1);
  assert.equal(cjs.ABI_VERSION, ABI_VERSION);
  const bad = structuredClone(pulses);
  bad.capacity_gbps = NaN;
  assert.throws(() => o.link(bad), (e) => cjs.isOrreryError(e) && e.field === 'capacity_gbps');
  assert.equal((await cjs.esm()).OrreryError, OrreryError);
  const agent = require('../agent.cjs');
  assert.equal(typeof (await agent.esm()).TimeShiftAgent, 'function');
  // The package's exports point require() here and import at the ES module.
  const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
  assert.equal(pkg.exports['.'].require.default, './orrery.cjs');
  assert.equal(pkg.exports['.'].import.default, './orrery.js');
  for (const f of ['orrery.cjs', 'orrery.d.cts', 'agent.cjs', 'agent.d.cts']) assert.ok(pkg.files.includes(f), f);
});

test('link and rank carry each job\'s comm offset', () => {
  const job = (id) => ({ id, phases: [{ ms: 40, gbps: 0 }, { ms: 30, gbps: 40 }, { ms: 2, gbps: 0 }] });
  const r = orrery.rank({ links: [{ id: 'up', capacity_gbps: 50 }], jobs: [job('a'), job('b')], candidates: [{ id: 'c', paths: { a: ['up'], b: ['up'] } }] });
  assert.deepEqual(r.comm_offsets_ms, { a: 40, b: 40 });
});

test('integer ids past Number.MAX_SAFE_INTEGER come back exactly, as BigInt', () => {
  // 2^53 and 2^53 + 1 are one number in JavaScript; the module keeps them
  // apart, and so must the object API (issue 29).
  const big = [2n ** 53n, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n];
  const s = orrery.newScheduler(8, { rounds: 3 });
  for (const id of big) {
    s.add({ id, gpus: 1, submit_s: 60, progress: 0, epoch_bs: [32, 32], epoch_dur_s: [36, 36] });
  }
  s.add({ id: 7, gpus: 1, submit_s: 60, progress: 0, epoch_bs: [32, 32], epoch_dur_s: [36, 36] });
  const ids = s.schedule();
  assert.deepEqual([...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)), [-(2n ** 63n), 7, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n]);
  assert.equal(typeof ids.find((x) => x === 7), 'number', 'a safe id stays a number');
  // Against the raw envelope: the same ids, in the same order.
  const raw = orrery.handle(`{"op":"shockwave.scheduler.last_plan","request":{"handle":${s.handle}}}`);
  const plan = s.lastPlan();
  const rawIds = /"rounds":\[\[([^\]]*)\]/.exec(raw)[1].split(',');
  assert.deepEqual(plan.rounds[0].map(String), rawIds);
  assert.deepEqual(plan.jobs.map((j) => String(j.id)), [...raw.matchAll(/\{"id":(-?\d+),"rounds"/g)].map((m) => m[1]));
  // A float of the same digits (makespan_s) stays a number.
  assert.equal(typeof plan.makespan_s, 'number');
  // Remove and progress take BigInt ids too.
  s.progress(2n ** 53n + 1n, 1);
  assert.equal(s.remove(2n ** 53n).active, 4);
  assert.throws(() => s.remove(2n ** 53n), (err) => err instanceof OrreryError && err.field === 'id');
  // A NaN beside a BigInt is refused naming its field, as without one.
  assert.throws(() => s.observe(2n ** 53n + 1n, { round: 1, it_per_s: NaN, bs: 32 }), (e) => e instanceof OrreryError && e.field === 'sample.it_per_s');
  s.close();
});
