#!/usr/bin/env bash
# Installs what the packet-level cross-check needs: ns-3.37 from Debian's
# libns3-dev (headers in /usr/include/ns3, libraries libns3-*.so; about 62 MB,
# 4 packages) and g++, unless both are already there. Needs root or sudo.
# The program is built by package internal/eval/ns3 with plain g++ flags:
# Debian's pkg-config files for ns-3 carry broken Cflags.
set -euo pipefail
if [ -f /usr/include/ns3/core-module.h ] && command -v g++ >/dev/null 2>&1; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install.sh: no apt-get here; install ns-3.37 (libns3-dev) and g++ by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends libns3-dev g++ >/dev/null
test -f /usr/include/ns3/core-module.h
