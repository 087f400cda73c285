#!/usr/bin/env bash
# npm pack in bindings/js builds orrery.wasm into the package (prepack);
# installed into a throwaway project, load() finds it by default and node
# prints no WASI ExperimentalWarning.
set -euo pipefail
cd "$(dirname "$0")/../bindings/js"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
tgz=$(npm pack --silent --pack-destination "$tmp" | tail -1)
files=$(tar -tzf "$tmp/$tgz")
for f in orrery.wasm kernels.wasm; do
	grep -qx "package/$f" <<<"$files" || { echo "npm pack: no $f in $tgz"; exit 1; }
done
mkdir -p "$tmp/app/node_modules/@orrery"
tar -xzf "$tmp/$tgz" -C "$tmp/app/node_modules/@orrery"
mv "$tmp/app/node_modules/@orrery/package" "$tmp/app/node_modules/@orrery/orrery"
cd "$tmp/app"
cat > check.mjs <<'JS'
import { load } from '@orrery/orrery';
const o = await load();
const r = o.link({ capacity_gbps: 50, jobs: ['a', 'b'].map((id) => ({ id, phases: [{ ms: 30, gbps: 40 }, { ms: 42, gbps: 0 }] })) });
if (r.score !== 1) throw new Error(`score ${r.score}`);
const s = o.newScheduler(4);
s.add({ id: 'a', gpus: 1, submit_s: 0, progress: 0, epoch_bs: [32, 32], epoch_dur_s: [60, 60] });
if (JSON.stringify(s.schedule()) !== '["a"]') throw new Error('schedule');
console.log('ok');
JS
out=$(env -u ORRERY_WASM node check.mjs 2>&1)
[ "$out" = ok ] || { echo "installed package: $out"; exit 1; }
# CommonJS: require() gets the asynchronous load() of orrery.cjs.
cat > check.cjs <<'JS'
const { load, isOrreryError } = require('@orrery/orrery');
load().then((o) => {
  try { o.link({ capacity_gbps: NaN, jobs: [] }); throw new Error('NaN accepted'); } catch (e) { if (!isOrreryError(e) || e.field !== 'capacity_gbps') throw e; }
  console.log('ok');
});
JS
out=$(env -u ORRERY_WASM node check.cjs 2>&1)
[ "$out" = ok ] || { echo "installed package, require(): $out"; exit 1; }
echo "npm-pack: $(du -k "$tmp/$tgz" | cut -f1) kB package with orrery.wasm; packed and checked in $(($(date +%s) - start)) s"
