// host.mjs runs orrery's module in Node for the cross-host check
// (bindings/crosscheck): one JSON object per line on stdout.
//
//   node host.mjs corpus MODULE DIR          {"name", "b64"} per request file under DIR
//   node host.mjs bench MODULE DIR NAME...   {"name", "ns_per_op"} per benchmark
//   node host.mjs time MODULE DIR RUNS       {"name", "wall_ns", "cpu_ns", "b64"} per .jsonl file under DIR:
//                                            RUNS times, on a fresh instance each, its lines in order, the
//                                            last one timed (wall and process CPU time), and its last answer
//
// Benchmark names: "abi_version" (one export call), "search" (linkSearch on
// the two-job problem of bench.Search), or a request file under DIR.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Orrery, load } from '../orrery.js';

function walk(dir, root = dir, out = []) {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, root, out);
    else if (p.endsWith('.json') || p.endsWith('.jsonl')) out.push(relative(root, p).split(sep).join('/'));
  }
  return out;
}

// The flat problem every host benchmarks: the corpus request
// ok/link_exact_coprime_periods.json quantized to 1 ms ticks and 1 Mbps.
function searchProblem() {
  const a = new Int32Array(255).fill(25000, 141);
  const b = new Int32Array(181).fill(30000, 120);
  const demand = new Int32Array(436);
  demand.set(a, 0);
  demand.set(b, 255);
  return { periods: [255, 181], demand, capacity: 50000 };
}

// measure returns the mean ns/op of fn over at least half a second, after
// a second of warm-up: V8 compiles the module's functions lazily and tiers
// them up in the background, so the first thousand or so calls are several
// times slower than the steady state.
function measure(fn) {
  const warm = process.hrtime.bigint() + 1_000_000_000n;
  for (let i = 0; i < 3 || process.hrtime.bigint() < warm; i++) fn();
  let n = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const ns = Number(process.hrtime.bigint() - t0);
    if (ns > 5e8 || n >= 1 << 24) return ns / n;
    n = ns < 1e6 ? n * 100 : Math.ceil(n * Math.min(100, (6e8 / ns)));
  }
}

const [mode, module, dir, ...names] = process.argv.slice(2);
const orrery = await load(module);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
if (mode === 'corpus') {
  const compiled = await WebAssembly.compile(readFileSync(module));
  for (const name of walk(dir)) {
    const data = readFileSync(join(dir, name));
    let resp;
    if (name.endsWith('.jsonl')) {
      // A session: its lines in order on an instance of its own.
      const own = new Orrery(compiled);
      const lines = data.toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
      resp = Buffer.from(lines.map((l) => own.handle(l)).join('\n'));
    } else {
      resp = orrery.handleBytes(data);
    }
    out({ name, b64: Buffer.from(resp).toString('base64') });
  }
} else if (mode === 'time') {
  // The time limits of issue 29 (internal/timing): each case's set-up
  // lines untimed, then its last line, RUNS times.
  const compiled = await WebAssembly.compile(readFileSync(module));
  const runs = Number(names[0]);
  const files = walk(dir).map((name) => [name, readFileSync(join(dir, name)).toString('utf8').split('\n').filter((l) => l !== '')]);
  // Warm-up: every case once, untimed, so that V8 has tiered the module's
  // functions up (its background compiler would count as CPU time).
  for (const [, lines] of files) {
    const own = new Orrery(compiled);
    for (const l of lines) own.handleBytes(Buffer.from(l));
  }
  for (const [name, lines] of files) {
    const wall = [], cpu = [];
    let last;
    for (let r = 0; r < runs; r++) {
      const own = new Orrery(compiled);
      for (const l of lines.slice(0, -1)) own.handleBytes(Buffer.from(l));
      const env = Buffer.from(lines[lines.length - 1]);
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      last = own.handleBytes(env);
      const t1 = process.hrtime.bigint();
      const c1 = process.cpuUsage(c0);
      wall.push(Number(t1 - t0));
      cpu.push((c1.user + c1.system) * 1000);
    }
    out({ name, wall_ns: wall, cpu_ns: cpu, b64: Buffer.from(last).toString('base64') });
  }
} else if (mode === 'bench') {
  for (const name of names) {
    let fn;
    if (name === 'abi_version') fn = () => orrery.abiVersion;
    else if (name === 'search') {
      const p = searchProblem();
      fn = () => orrery.linkSearch(p);
    } else {
      const env = readFileSync(join(dir, name));
      fn = () => orrery.handleBytes(env);
    }
    out({ name, ns_per_op: measure(fn) });
  }
} else {
  process.stderr.write('usage: host.mjs corpus|bench|time MODULE DIR [NAME...|RUNS]\n');
  process.exit(2);
}
