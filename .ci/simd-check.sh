#!/usr/bin/env bash
# bindings/js/kernels.wasm must be bindings/js/kernels.wat assembled by
# wabt's wat2wasm (Debian package wabt, installed here when missing), and
# its kernels must match the Go kernels under wazero.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
if ! command -v wat2wasm >/dev/null 2>&1; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "simd-check: no wat2wasm and no apt-get: install wabt" >&2
		exit 1
	fi
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends wabt >/dev/null
fi
out=$(go test -count=1 -run 'TestSIMD' -v ./internal/kernels/wasmhost/)
grep -E '^(--- |ok|FAIL)' <<<"$out"
# -v shows a skip: the assembled check must have run.
grep -q -- '--- PASS: TestSIMDAssembled' <<<"$out" || { echo "simd-check: TestSIMDAssembled did not run" >&2; exit 1; }
echo "simd-check: kernels.wasm is kernels.wat assembled ($(wat2wasm --version)); checked in $(($(date +%s) - start)) s"
