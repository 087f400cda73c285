// kernels-bench.mjs measures the SIMD kernel module (kernels.wasm) under
// node on the shapes of the benchmark suite's kernel tables, so its rates
// compare with the Go paths' there (bench/cmd/orrery-bench, README):
//
//   node bindings/js/tools/kernels-bench.mjs [KERNELS_WASM]
//
// rotations scores every shift of a circle of n ticks (4096 shifts at
// n = 46155); then the link search's leaf shapes (n ticks, m shifts) of
// the corpus's 12-job ranking. Random profiles of values in [0, 1000) at
// a threshold of 1000, as the suite's. It prints billions of pair
// evaluations per CPU-second of this process, median of 7 rounds.

import { readFileSync } from 'node:fs';
import { cpuUsage } from 'node:process';

const path = process.argv[2] ?? new URL('../kernels.wasm', import.meta.url);
const memory = new WebAssembly.Memory({ initial: 16 });
const k = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(path)), { orrery: { memory } }).exports;

let seed = 7;
function next() {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed >>> 8;
}

// rate returns the median billions of pairs per CPU-second of rotations
// over m shifts of a circle of n ticks.
function rate(n, m) {
  const base = 64, rotor = base + 4 * n + 64, dst = rotor + 4 * (2 * n + 64) + 64;
  const need = dst + 8 * m + 64;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  const i32 = new Int32Array(memory.buffer);
  const rot = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    i32[base / 4 + i] = next() % 1000;
    rot[i] = next() % 1000;
  }
  for (let j = 0; j < 2 * n + 64; j++) i32[rotor / 4 + j] = rot[(n - (j % n)) % n];
  const calls = Math.max(1, Math.round(2e7 / (n * m)));
  for (let r = 0; r < calls; r++) k.rotations(dst, base, rotor, n, 1000, 0, m); // tier up
  const rates = [];
  for (let round = 0; round < 7; round++) {
    const c0 = cpuUsage();
    for (let r = 0; r < calls; r++) k.rotations(dst, base, rotor, n, 1000, 0, m);
    const c = cpuUsage(c0);
    rates.push((n * m * calls) / ((c.user + c.system) * 1e3));
  }
  rates.sort((a, b) => a - b);
  return rates[3];
}

console.log('| n | shifts | kernels.wasm rotations (G pairs/CPU-s) |');
console.log('|---|---|---|');
for (const n of [72, 360, 1024, 4096, 46155]) {
  const m = Math.min(n, 4096);
  console.log(`| ${n} | ${m} | ${rate(n, m).toFixed(2)} |`);
}
for (const [n, m] of [[360, 90], [720, 60], [1800, 30], [1440, 144]]) {
  console.log(`| ${n} | ${m} | ${rate(n, m).toFixed(2)} |`);
}
