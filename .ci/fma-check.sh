#!/usr/bin/env bash
# Determinism gate: Go may fuse x*y+z into one FMA instruction on arm64 (and
# on amd64 with GOAMD64=v3), which rounds once instead of twice, so the same
# request would give different floats on different hosts. The engine writes
# float64(x*y) where a product feeds a sum; this fails if any fused
# instruction is left in its arm64 code (the benchmark suite's libraries excepted:
# they produce no answer).
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
for pkg in $(go list . ./kernels/... ./engine/... ./internal/... | grep -v /internal/bench); do
	if out=$(GOARCH=arm64 go build -o /dev/null -gcflags="$pkg=-S" "$pkg" 2>&1 | grep -E '\s(FMADD|FMSUB|FNMADD|FNMSUB)[SD]\s'); then
		echo "fused multiply-add in $pkg:"
		echo "$out" | grep -o '([^)]*\.go:[0-9]*)' | sort -u
		bad=1
	fi
done
exit $bad
