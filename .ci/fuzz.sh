#!/usr/bin/env bash
# Runs every fuzz target in the repository (found by name, so new ones are
# never forgotten) for the given time each. The seed corpora already run in
# `go test`; this explores beyond them.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" when -fuzztime ends while a worker is mid-call (golang/go#75804,
# fixed in Go 1.27): no input is at fault and none is written. A real finding
# always writes its input to testdata/fuzz/<target>/ ("Failing input written
# to") or reports a hang or crash. So a run that fails with nothing but that
# message is run again once, and if it does so again it is reported and
# passed over; any other failure fails at once.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# bare_deadline reports whether the log is the coordinator race and nothing
# else.
bare_deadline() {
	grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:|fuzzing process hung|terminated unexpectedly|_test\.go:[0-9]+:' "$log"
}

grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	dir=$(dirname "$f")
	for name in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
		for attempt in 1 2; do
			echo "== $dir $name ($fuzztime)"
			# From the target's directory: a nested module (bindings/k8s) is its own main module.
			if (cd "$dir" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" .) >"$log" 2>&1; then
				tail -n 3 "$log"
				break
			fi
			cat "$log"
			if ! bare_deadline; then
				exit 1
			fi
			if [ "$attempt" = 2 ]; then
				echo "warning: $name hit the -fuzztime race twice (golang/go#75804); nothing was found"
			else
				echo "(the -fuzztime race of golang/go#75804, no input at fault: once more)"
			fi
		done
	done
done
