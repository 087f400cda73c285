#!/usr/bin/env bash
# Runs every fuzz target in the repository (found by name, so new ones are
# never forgotten) for the given time each. The seed corpora already run in
# `go test`; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	dir=$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
		echo "== $dir $name ($fuzztime)"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$dir"
	done
done
