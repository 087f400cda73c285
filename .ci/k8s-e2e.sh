#!/usr/bin/env bash
# The end-to-end test of orrery-scheduler against a real control plane
# (bindings/k8s/e2e): builds etcd, kube-apiserver, kube-scheduler and
# orrery-scheduler from bindings/k8s/go.mod with Go's caches
# (bindings/k8s/build.sh, the Dockerfile's build step), then runs the test,
# which starts them on 127.0.0.1 and removes everything at the end. Prints
# each step's time. OUT (default out) receives the binaries.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-out}
case $out in /*) ;; *) out=$root/$out ;; esac
bin=$out/k8s-e2e/bin
cd "$root/bindings/k8s"
t0=$SECONDS
go mod download
./build.sh "$bin" etcd kube-apiserver kube-scheduler orrery-scheduler
echo "k8s-e2e: downloads and builds took $((SECONDS - t0))s"
t0=$SECONDS
ORRERY_K8S_E2E_BIN=$bin go test -count=1 -timeout 30m -v -run TestKubernetes ./e2e/
echo "k8s-e2e: the test took $((SECONDS - t0))s"
