#!/usr/bin/env bash
# Installs what the packet-level cross-check needs: ns-3.37 from Debian's
# libns3-dev (headers in /usr/include/ns3, libraries libns3-*.so; about 62 MB,
# 4 packages) and g++, unless both are already there, through the
# repository's apt installer (apt-get update first; root or sudo).
# The program is built by package internal/eval/ns3 with plain g++ flags:
# Debian's pkg-config files for ns-3 carry broken Cflags.
set -euo pipefail
if [ -f /usr/include/ns3/core-module.h ] && command -v g++ >/dev/null 2>&1; then
	exit 0
fi
"$(dirname "$0")/../../../.ci/apt-install.sh" "internal/eval/ns3/install.sh" libns3-dev g++
test -f /usr/include/ns3/core-module.h
