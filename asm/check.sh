#!/usr/bin/env bash
# Regenerates the amd64 kernels from gen.go and fails if the committed output
# (kernels/kernels_amd64.s, kernels/stubs_amd64.go) changes. CI runs it.
set -euo pipefail
cd "$(dirname "$0")"
go generate ./...
out=(../kernels/kernels_amd64.s ../kernels/stubs_amd64.go)
if ! git diff --exit-code --stat -- "${out[@]}"; then
	echo "asm/check.sh: the generated kernels are stale; run 'cd asm && go generate ./...' and commit them" >&2
	exit 1
fi
if [ -n "$(git ls-files --others --exclude-standard -- "${out[@]}")" ]; then
	echo "asm/check.sh: generated kernels are not committed" >&2
	exit 1
fi
