#!/usr/bin/env bash
# wasm/build.sh OUT [GO BUILD FLAGS...] builds the module (package ./wasm)
# into OUT the way it ships:
#
#   GOOS=wasip1 GOARCH=wasm go build FLAGS -buildmode=c-shared -trimpath -ldflags='-s -w' -o OUT ./wasm
#
# and then, when binaryen's wasm-opt is installed (Debian package binaryen),
# rewrites it with wasm-opt -Oz: 0.31 MB (5.6%) off orrery.wasm, all of it
# code (the data section, mostly the runtime's tables, is unchanged), the
# same exports and answers (make crosscheck checks the optimized modules
# byte for byte on every host), and no measurable change in speed.
# wasm-opt takes up to a minute of CPU per module, so its output is cached
# under ${XDG_CACHE_HOME:-~/.cache}/orrery/wasm-opt by the SHA-256 of Go's
# output (reproducible under -trimpath), wasm-opt's version and the flags:
# a second build of the same sources (npm pack after make wasm) copies it.
#
# ORRERY_WASM_OPT=0 skips wasm-opt; ORRERY_REQUIRE_WASM_OPT=1 fails when it
# is missing (make crosscheck sets it, so CI never ships the larger module
# unnoticed).
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: wasm/build.sh OUT [go build flags...]" >&2
	exit 2
fi
out=$(realpath -m "$1")
shift
cd "$(dirname "$0")/.."
GOOS=wasip1 GOARCH=wasm "${GO:-go}" build "$@" -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$out" ./wasm

if [ "${ORRERY_WASM_OPT:-1}" = 0 ]; then
	exit 0
fi
if ! command -v wasm-opt >/dev/null 2>&1; then
	if [ "${ORRERY_REQUIRE_WASM_OPT:-}" = 1 ]; then
		echo "wasm/build.sh: wasm-opt (Debian package binaryen) is not installed" >&2
		exit 1
	fi
	echo "wasm/build.sh: $(basename "$out") not optimized (no wasm-opt; Debian package binaryen)" >&2
	exit 0
fi
# Go's code generator emits sign extension, saturating float conversions
# and bulk memory; wasm-opt must accept them and may use no other feature.
flags=(-Oz --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory)
key=$({ sha256sum <"$out"; wasm-opt --version; echo "${flags[*]}"; } | sha256sum | cut -c1-32)
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/orrery/wasm-opt
mkdir -p "$cache"
if [ ! -f "$cache/$key.wasm" ]; then
	start=$(date +%s)
	before=$(stat -c %s "$out")
	tmp=$(mktemp "$cache/$key.XXXXXX")
	trap 'rm -f "$tmp"' EXIT
	wasm-opt "${flags[@]}" "$out" -o "$tmp"
	mv "$tmp" "$cache/$key.wasm"
	echo "wasm/build.sh: $(basename "$out") $before -> $(stat -c %s "$cache/$key.wasm") bytes (wasm-opt ${flags[*]}, $(($(date +%s) - start)) s)" >&2
fi
cp "$cache/$key.wasm" "$out"
