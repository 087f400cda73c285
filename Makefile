# orrery: the commands a user and CI run. `make demo` runs the main job on
# built-in data; `make test` runs the tests. .ci/run calls `make ci`, which
# starts with `make test`.
GO ?= go
OUT ?= out
FUZZTIME ?= 10s
GOBIN := $(shell $(GO) env GOPATH)/bin
WAZERO := $(GOBIN)/wazero
# staticcheck 2026.2.2, pinned: installed through the Go module proxy into a
# folder named for its version, so an older copy on PATH is never used.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/orrery-tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: demo test ci vet lint fmt-check race test-paths go-consumer cross wasm-test gen-check fuzz fma-check wasm simd-check cshared crosscheck python-install npm-pack bench-hosts bench bench-smoke cassini-sweep transports-sweep

# The demo writes its plots into $(OUT) and refreshes the three in docs/
# (deterministic: the same bytes on every run, so a clean tree stays clean).
demo:
	$(GO) run ./cmd/orrery demo -out $(OUT)
	cp $(OUT)/cassini_iteration_cdf.png $(OUT)/cassini_unified_circle.png $(OUT)/shockwave_ftf_cdf.png docs/

test:
	$(GO) vet ./...
	$(GO) test ./...

# The congestion sweep of docs/cassini-regime.md: oversubscription x
# placement x transport on the paper's setup, ten seeds; rewrites the
# page's table and docs/cassini_regime.png.
cassini-sweep:
	$(GO) run ./cmd/orrery cassini regime -seed 1-10 -transports maxmin -q -plot docs -doc docs/cassini-regime.md

# The sweep across transports (docs/transports.md): DCQCN and MLTCP cost
# some 300-600 s of CPU per cell and seed, so one seed and the themis rule.
transports-sweep:
	$(GO) run ./cmd/orrery cassini regime -seed 1 -oversub 2,8 -placements themis -transports maxmin,dcqcn,mltcp -q -doc docs/transports.md

vet:
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

# gofmt, and a package doc on every package.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@out=$$($(GO) list -f '{{if not .Doc}}{{.ImportPath}}{{end}}' ./...); if [ -n "$$out" ]; then echo "no package doc:"; echo "$$out"; exit 1; fi

race:
	$(GO) test -race ./kernels/... ./engine/... ./internal/... ./fuzz/... ./cmd/...

# Every kernel path against the generic one, whole suite: purego, then with
# AVX-512 and then AVX2 turned off (-count=1: the cache cannot see the variable).
# A module outside the repository, set up as docs/go.md says (about 5 s).
go-consumer:
	./.ci/go-consumer.sh

test-paths:
	$(GO) test -count=1 -tags purego ./...
	ORRERY_KERNELS=noavx512 $(GO) test -count=1 ./...
	ORRERY_KERNELS=noavx2 $(GO) test -count=1 ./...

# Other architectures build and vet (asmdecl checks the assembly frames).
cross:
	GOARCH=arm64 $(GO) vet ./kernels/... ./internal/... ./engine/...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./kernels/
	GOOS=wasip1 GOARCH=wasm $(GO) build ./...

$(WAZERO):
	$(GO) install github.com/tetratelabs/wazero/cmd/wazero@v1.12.0

# The kernels', link search's and planner's tests under WebAssembly:
# determinism and deadlines, which a cooperative scheduler can break. The
# default build imports its kernels ("orrery_kernels"), so its tests run in
# wasirun (wazero with the kernels provided natively, as bindings/go does);
# the purego build imports none and runs in the wazero CLI.
WASIRUN := $(abspath $(OUT))/tools/wasirun
wasm-test: $(WAZERO)
	$(GO) build -o $(WASIRUN) ./internal/wasmhost/wasirun
	GOOS=wasip1 GOARCH=wasm $(GO) test -exec $(WASIRUN) ./kernels/ ./internal/deadline/ ./engine/cassini/link/ ./engine/shockwave/round/
	GOOS=wasip1 GOARCH=wasm $(GO) test -exec $(WASIRUN) -run 'TestPlanDigest|TestDetMath|TestSolveMatchesBruteForce|TestSolveDeadline' ./engine/shockwave/market/
	PATH="$$PATH:$(GOBIN):$$($(GO) env GOROOT)/lib/wasm" GOWASIRUNTIME=wazero GOOS=wasip1 GOARCH=wasm $(GO) test -tags purego ./kernels/ ./engine/cassini/link/

# The WebAssembly reactor (ABI v1, see docs/abi.md) and the C shared library.
# orrery.wasm imports its kernels ("orrery_kernels": the Go, JavaScript and
# Python bindings provide them; kernels.wasm is the SIMD module the latter
# two use); orrery-portable.wasm (the purego tag) imports only WASI, for
# any other host. wasm/build.sh runs go build and then, when installed,
# binaryen's wasm-opt -Oz (0.31 MB off; its output cached by input).
wasm:
	GO=$(GO) ./wasm/build.sh $(OUT)/orrery.wasm
	GO=$(GO) ./wasm/build.sh $(OUT)/orrery-portable.wasm -tags purego
	cp bindings/js/kernels.wasm $(OUT)/kernels.wasm

# bindings/js/kernels.wasm is kernels.wat assembled (wabt, apt-installed
# when missing) and matches the Go kernels.
simd-check:
	./.ci/simd-check.sh

cshared:
	$(GO) build -buildmode=c-shared -trimpath -o $(OUT)/liborrery.so ./bindings/c

# Native, wazero, node and Python give byte-identical answers on
# testdata/corpus (node, python3, gcc and wasm-opt required: a missing one
# fails), with the modules as make wasm ships them (wasm-opt's output).
crosscheck:
	ORRERY_REQUIRE_WASM_OPT=1 $(MAKE) wasm
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./wasm/...
	ORRERY_WASM=$(abspath $(OUT))/orrery.wasm ORRERY_WASM_PORTABLE=$(abspath $(OUT))/orrery-portable.wasm \
		ORRERY_REQUIRE_HOSTS=1 $(GO) test -count=1 ./wasm/... ./bindings/...

# pip install ./bindings/python offline (--no-index) into a throwaway venv
# of Debian's python3, then import and load() from another folder.
python-install:
	./.ci/python-install.sh

# The JavaScript package: npm pack carries orrery.wasm, and load() finds it
# from another folder without a warning.
npm-pack:
	./.ci/npm-pack.sh

# Time limits on every host, 1 ms to 1 s on every request size
# (docs/reliability.md): natively, in wazero and in node (needs node).
.PHONY: deadlines
deadlines:
	$(GO) test -count=1 -timeout 60m -run TestDeadlines -v . -deadline.sweep
	$(GO) test -count=1 -timeout 60m -run TestDeadlines -v ./bindings/go -deadline.sweep
	$(GO) test -count=1 -timeout 60m -run TestNodeDeadlines -v ./bindings/crosscheck -deadline.sweep

# Per-call overhead and end-to-end calls, native vs wazero vs node vs Python.
bench-hosts:
	$(GO) run ./bindings/crosscheck -bench

# The benchmark suite (bench/cmd/orrery-bench): kernels on every path, link
# search vs brute force and paper mode, ranking, the Shockwave planner vs
# COIN-OR CBC (apt-installed when missing), native vs WebAssembly. About 10
# minutes; writes $(OUT)/bench/{readme.md,report.md,report.json}; exit 1 on a
# failed gate.
bench:
	-./bench/install-cbc.sh
	-./bench/install-highs.sh
	$(GO) run ./bench/cmd/orrery-bench -out $(OUT)/bench

# The suite's CI subset and its gates (installs CBC; well under a minute).
bench-smoke:
	./.ci/bench-smoke.sh

# Regenerating the assembly with avo must change nothing.
gen-check:
	cd asm && ./check.sh

# No fused multiply-adds in the engine: the same answer on every host.
fma-check:
	./.ci/fma-check.sh

# Every fuzz target in the repository for FUZZTIME each.
fuzz:
	./.ci/fuzz.sh $(FUZZTIME)

ci: test fmt-check lint race test-paths go-consumer cross fma-check wasm-test gen-check simd-check crosscheck python-install npm-pack bench-smoke fuzz k8s k8s-e2e ns3-check testbed-check

# The Kubernetes scheduler plugin, its own module (bindings/k8s): download,
# vet and test the plugin (about 480 MB of modules; see .ci/k8s.sh), and
# build the scheduler binary (bindings/k8s/build.sh, the Dockerfile's step).
.PHONY: k8s k8s-build k8s-e2e
k8s:
	./.ci/k8s.sh

k8s-build:
	./bindings/k8s/build.sh $(OUT) orrery-scheduler

# orrery-scheduler against a real control plane (bindings/k8s/e2e): builds
# etcd, kube-apiserver, kube-scheduler and orrery-scheduler with Go's caches
# into $(OUT)/k8s-e2e/bin and runs the scenarios on 127.0.0.1 (see
# bindings/k8s/README.md; the cold build dominates: measured there).
k8s-e2e:
	OUT=$(OUT) ./.ci/k8s-e2e.sh

# The packet-level cross-check of the fluid network model (internal/eval/ns3):
# installs ns-3.37 (Debian's libns3-dev) and g++ if missing, builds the ns-3
# program and runs the CI-sized check: Fig. 2 under DCTCP, Cubic and NewReno,
# Table 2's snapshots 1 and 2 (snapshot 1 also held by -hold score) and a small
# DLRM + ResNet50 cluster under DCTCP, each against the fluid model with
# tolerances. In CI: 4-5 minutes of CPU, 2m16s of wall time on 2 cores (5m13s
# with other jobs loading them), the program's build 15 s more; install.sh
# runs apt-get update and install when ns-3 is missing (about 8 s).
.PHONY: ns3-check ns3-full
ns3-check:
	./internal/eval/ns3/install.sh
	ORRERY_NS3=1 $(GO) test -count=1 -timeout 60m -run 'TestPacketLevel' -v ./internal/eval/ns3/

# The larger offline runs behind the packet-level numbers of docs/cassini.md (about
# an hour of CPU; each command's report in $(OUT)/ns3/*.txt, every run's
# scenario and output under $(OUT)/ns3/runs/).
NS3CHECK = $(GO) run ./internal/eval/ns3/cmd/ns3check
ns3-full:
	./internal/eval/ns3/install.sh
	mkdir -p $(OUT)/ns3/runs
	$(NS3CHECK) -cases fig2 -iterations 20 -variants unshifted,cassini,elastic,shifted,half -keep $(OUT)/ns3/runs/fig2 > $(OUT)/ns3/fig2.txt
	$(NS3CHECK) -cases fig2 -iterations 15 -variants half -partial 0.25 -keep $(OUT)/ns3/runs/quarter > $(OUT)/ns3/fig2-quarter.txt
	$(NS3CHECK) -cases fig2 -iterations 15 -variants half -partial 0.75 -keep $(OUT)/ns3/runs/three-quarters > $(OUT)/ns3/fig2-three-quarters.txt
	$(NS3CHECK) -cases fig2 -iterations 20 -variants unshifted,half -catch-up -keep $(OUT)/ns3/runs/catch-up > $(OUT)/ns3/fig2-catch-up.txt
	$(NS3CHECK) -cases snapshot1,snapshot2 -iterations 12 -variants unshifted,cassini,shifted -keep $(OUT)/ns3/runs/snapshots > $(OUT)/ns3/snapshots.txt
	$(NS3CHECK) -cases snapshot1,snapshot2 -iterations 12 -ccs dctcp -variants cassini -hold score -keep $(OUT)/ns3/runs/snapshots-score > $(OUT)/ns3/snapshots-score.txt
	$(NS3CHECK) -cases snapshot3,snapshot4,snapshot5 -iterations 12 -ccs dctcp -variants unshifted,shifted -keep $(OUT)/ns3/runs/snapshots345 > $(OUT)/ns3/snapshots345.txt
	$(NS3CHECK) -cases snapshot3,snapshot4 -iterations 12 -variants unshifted,elastic -keep $(OUT)/ns3/runs/snapshots34-elastic > $(OUT)/ns3/snapshots34-elastic.txt
	$(NS3CHECK) -cases cluster -cluster-jobs 8 -cluster-models DLRM,ResNet50 -cluster-iterations 10-20 -seed 5 -variants unshifted,cassini -keep $(OUT)/ns3/runs/dlrm > $(OUT)/ns3/dlrm.txt
	$(NS3CHECK) -cases cluster -cluster-jobs 10 -cluster-iterations 10-20 -seed 5 -ccs dctcp -variants unshifted,cassini -keep $(OUT)/ns3/runs/cluster > $(OUT)/ns3/cluster.txt

# The kernel testbed (internal/eval/testbed, docs/testbed.md): the paper's
# fixed experiments on real TCP in network namespaces, root only (it skips
# with a message when not root; as root testbed-check installs iproute2
# and util-linux, for ip, tc and chrt, when missing), every namespace it
# creates removed when it ends. testbed-check is CI's: Fig. 2
# under Cubic, alone (30 iterations), overlapped and with agents (150 each)
# at real-time priority; it fails when the agents do not beat the
# overlapped jobs by 5% on medians, and says IN DOUBT (and passes) when the
# host stalled on more than 5% of the iterations. About 2.5 minutes.
# testbed runs Fig. 2 and Table 2's snapshots 3 and 4 under Cubic, Reno and
# BBR and writes every report to $(OUT)/testbed/ (about 40 minutes).
.PHONY: testbed testbed-check
testbed-check:
	@if [ "$$(id -u)" -eq 0 ] && ! (command -v ip && command -v tc && command -v chrt) >/dev/null 2>&1; then \
		./.ci/apt-install.sh testbed-check iproute2 util-linux; fi
	ORRERY_TESTBED=1 $(GO) test -count=1 -timeout 15m -run 'TestCI$$' -v ./internal/eval/testbed/

TESTBED = $(GO) run ./internal/eval/testbed/cmd/testbed
testbed:
	mkdir -p $(OUT)/testbed
	$(TESTBED) -scenario fig2 -cc cubic,reno,bbr -arms alone,overlapped,shifted,agents -out $(OUT)/testbed | tee $(OUT)/testbed/fig2.txt
	$(TESTBED) -scenario snapshot3 -cc cubic,reno,bbr -out $(OUT)/testbed | tee $(OUT)/testbed/snapshot3.txt
	$(TESTBED) -scenario snapshot4 -cc cubic,reno,bbr -out $(OUT)/testbed | tee $(OUT)/testbed/snapshot4.txt
