// The time-shift agent from JavaScript: the Go agent's decisions, slept to.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { TimeShiftAgent, readPlan } from '../agent.js';
import { load } from '../orrery.js';

const here = dirname(fileURLToPath(import.meta.url));
const orrery = await load(process.env.ORRERY_WASM || join(here, '..', '..', '..', 'out', 'orrery.wasm'));

function fakeTime(t) {
  const f = { t, slept: 0 };
  f.now = () => f.t;
  f.sleep = async (ms) => {
    f.slept += ms;
    f.t += ms;
  };
  return f;
}

test('wait() lands every iteration on its slot', async () => {
  const ft = fakeTime(1_700_000_000_012.3);
  const a = new TimeShiftAgent(orrery, { shiftMs: 30, periodMs: 72, now: ft.now, sleep: ft.sleep });
  const starts = [];
  for (let i = 0; i < 50; i++) {
    const d = await a.wait();
    starts.push(d.start_unix_ms);
    ft.t += 60 + (i % 5) * 2;
  }
  for (const s of starts) {
    const off = (((s - 30) % 72) + 72) % 72;
    assert.ok(Math.min(off, 72 - off) < 1e-3, `start ${s} off its slot`);
  }
  const st = a.stats();
  assert.equal(st.iterations, 50);
  assert.equal(st.adjustments, 0);
  assert.ok(ft.slept > 0);
  a.close();
});

test('a rewritten shift file installs the new plan', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const path = join(dir, 'shift.json');
  writeFileSync(path, JSON.stringify({ shifts_ms: { a: 10, b: 40 }, periods_ms: { a: 100, b: 100 } }));
  assert.deepEqual(readPlan(path, 'b'), { period_ms: 100, shift_ms: 40 });
  const ft = fakeTime(1_700_000_000_000);
  const a = new TimeShiftAgent(orrery, { shiftFile: path, job: 'b', now: ft.now, sleep: ft.sleep, reloadMs: 0 });
  const d0 = await a.wait();
  assert.ok(Math.abs((d0.start_unix_ms - 40) % 100) < 1e-3);
  writeFileSync(path, JSON.stringify({ period_ms: 100, shift_ms: 75 }));
  utimesSync(path, 1, 1);
  ft.t += 500;
  const d1 = await a.wait();
  assert.ok(Math.abs((d1.start_unix_ms - 75) % 100) < 1e-3);
  assert.equal(a.stats().replans, 1);
  a.close();
});

test('the comm offset comes from a rank response; without one, a warning', async () => {
  const job = (id) => ({ id, phases: [{ ms: 40, gbps: 0 }, { ms: 30, gbps: 40 }, { ms: 2, gbps: 0 }] });
  const resp = orrery.rank({ links: [{ id: 'up', capacity_gbps: 50 }], jobs: [job('a'), job('b')], candidates: [{ id: 'c', paths: { a: ['up'], b: ['up'] } }] });
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const path = join(dir, 'rank.json');
  writeFileSync(path, JSON.stringify(resp));
  assert.equal(readPlan(path, 'b').comm_offset_ms, 40);
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const ft = fakeTime(1_700_000_000_000);
  const a = new TimeShiftAgent(orrery, { shiftFile: path, job: 'b', mode: 'pad', now: ft.now, sleep: ft.sleep });
  const drifts = [];
  for (let i = 0; i < 5; i++) {
    await a.wait();
    ft.t += 40;
    drifts.push(a.communicating());
    ft.t += 31;
  }
  a.close();
  assert.ok(Math.max(...drifts.map(Math.abs)) < 1e-3, `drifts ${drifts}`);
  writeFileSync(path, JSON.stringify({ shifts_ms: resp.shifts_ms, periods_ms: resp.periods_ms }));
  const b = new TimeShiftAgent(orrery, { shiftFile: path, job: 'b', now: ft.now, sleep: ft.sleep });
  await b.wait();
  ft.t += 40;
  const drift = b.communicating();
  b.communicating();
  b.close();
  await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
  process.off('warning', onWarning);
  assert.ok(Math.abs(drift - (40 - 72)) < 1e-3, `drift ${drift}`);
  assert.equal(warnings.filter((w) => w.code === 'ORRERY_NO_COMM_OFFSET').length, 1);
  const c = new TimeShiftAgent(orrery, { shiftFile: path, job: 'b', commOffsetMs: 40, now: ft.now, sleep: ft.sleep });
  assert.equal(c.plan.comm_offset_ms, 40);
  c.close();
});

test('the default mode holds slots as pad; elastic on the plan clock makes the same decisions', async () => {
  const starts = {};
  for (const mode of [undefined, 'elastic', 'pad']) {
    const ft = fakeTime(1_700_000_000_012.3);
    const a = new TimeShiftAgent(orrery, { shiftMs: 30, periodMs: 72, mode, now: ft.now, sleep: ft.sleep });
    starts[mode] = [];
    for (let i = 0; i < 30; i++) {
      starts[mode].push((await a.wait()).start_unix_ms);
      ft.t += 60 + (i % 7) * 3;
    }
    a.close();
  }
  assert.deepEqual(starts[undefined], starts.pad);
  // With no slack, the plan's clock makes pad's decisions, to float
  // rounding of its virtual time.
  starts.elastic.forEach((e, i) => assert.ok(Math.abs(e - starts.pad[i]) < 0.001, `${i}: ${e} vs ${starts.pad[i]}`));
});
