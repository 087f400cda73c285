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
