#!/usr/bin/env bash
# Installs Debian packages for the repository's checks and benchmarks:
# .ci/apt-install.sh WHAT PACKAGE... (WHAT names the caller in its error).
# Runs apt-get update first, as root or through sudo; without apt-get it
# fails, telling the user to install the packages by hand.
set -euo pipefail
what=$1
shift
if ! command -v apt-get >/dev/null 2>&1; then
	echo "$what: no apt-get here; install $* by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
