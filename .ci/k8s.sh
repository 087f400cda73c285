#!/usr/bin/env bash
# The Kubernetes plugin module (bindings/k8s, its own go.mod): download its
# modules (about 800 MB on a clean cache), vet and test the plugin and plan
# packages, and vet the end-to-end test (which skips here: `make k8s-e2e`
# runs it). The scheduler binary is not built here (`make k8s-build`);
# `go vet` of the plugin covers the framework API it is built against.
# Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/../bindings/k8s"
# As bindings/k8s/build.sh builds the binaries (static): the packages the
# tests compile are then the ones make k8s-e2e links, from Go's cache.
export CGO_ENABLED=0
step() {
	local t0=$SECONDS
	"$@"
	echo "k8s: $* took $((SECONDS - t0))s"
}
step go mod download
step go vet ./cassini/ ./plan/ ./e2e/
step go test -count=1 ./cassini/ ./plan/ ./e2e/
