#!/usr/bin/env bash
# bindings/js/kernels.wasm must be bindings/js/kernels.wat assembled by
# wabt's wat2wasm (Debian package wabt, installed here when missing), and
# its kernels must match the Go kernels under wazero.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if ! command -v wat2wasm >/dev/null 2>&1; then
	./.ci/apt-install.sh simd-check wabt
fi
out=$(go test -count=1 -run 'TestSIMD' -v ./internal/wasmhost/)
grep -E '^(--- |ok|FAIL)' <<<"$out"
# -v shows a skip: the assembled check must have run.
grep -q -- '--- PASS: TestSIMDAssembled' <<<"$out" || { echo "simd-check: TestSIMDAssembled did not run" >&2; exit 1; }
echo "simd-check: kernels.wasm is kernels.wat assembled ($(wat2wasm --version)); checked in $(($(date +%s) - start)) s"
