# orrery: the commands a user and CI run. `make demo` runs the main job on
# built-in data; `make test` runs the tests (what .ci/run calls).
GO ?= go
OUT ?= out

.PHONY: demo test ci vet fmt-check race build

demo:
	$(GO) run ./cmd/orrery demo --out $(OUT)

test:
	$(GO) vet ./...
	$(GO) test ./...

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

race:
	$(GO) test -race ./engine/... ./kernels/...

# ci is everything .ci/run checks, after `make test`.
ci: test fmt-check race
