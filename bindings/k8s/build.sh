#!/usr/bin/env bash
# Builds orrery-scheduler (and, for the end-to-end test, the control plane
# it runs against) with Go's build cache, from this module's go.mod:
#
#   build.sh OUTDIR [orrery-scheduler] [kube-scheduler] [kube-apiserver] [etcd]
#
# (default: orrery-scheduler). The Kubernetes binaries carry the release
# version of k8s.io/kubernetes in go.mod (without it they report
# v0.0.0-master); etcd is the go.etcd.io/etcd/server/v3 that Kubernetes
# requires. Static binaries (CGO_ENABLED=0, as .ci/k8s.sh builds the
# plugin's tests, so the two share Go's build cache). The Dockerfile runs
# this script, as make k8s-build and make k8s-e2e do. Prints each
# binary's build time.
set -euo pipefail
out=$(mkdir -p "${1:?usage: build.sh OUTDIR [binary...]}" && cd "$1" && pwd)
shift
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- orrery-scheduler
v=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
major=${v#v} minor=${v#v*.}
ldflags="-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=${major%%.*} -X k8s.io/component-base/version.gitMinor=${minor%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
export CGO_ENABLED=0
for b in "$@"; do
	case $b in
	orrery-scheduler) pkg=./cmd/orrery-scheduler ;;
	kube-scheduler | kube-apiserver) pkg=k8s.io/kubernetes/cmd/$b ;;
	etcd) pkg=go.etcd.io/etcd/server/v3 ;;
	*) echo "build.sh: unknown binary $b" >&2; exit 2 ;;
	esac
	t0=$SECONDS
	go build -ldflags "$ldflags" -o "$out/$b" "$pkg"
	echo "build.sh: $b took $((SECONDS - t0))s"
done
