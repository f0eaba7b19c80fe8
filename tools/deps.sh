#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs what building and testing mrc needs, from Debian's packages only.
# A quick no-op once everything is there.
set -eu
pkgs=(
	linux-image-6.12-amd64 linux-headers-6.12-amd64 linux-source-6.12
	build-essential make gcc flex bison bc libelf-dev libssl-dev dwarves
	python3 python3-yaml python3-jsonschema
	qemu-system-x86 busybox-static cpio xz-utils kmod
	iproute2 iputils-ping iperf3 libmnl-dev pkg-config sparse jq
	python3-matplotlib trinity prometheus tshark tcpdump netcat-openbsd
	sockperf rsync curl linux-perf libmicrohttpd-dev
	libns3-dev
)
missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || { echo "deps: run as root (or install: ${missing[*]})" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	# tshark: no setuid dumpcap for non-root capture (the tests run as root)
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections 2>/dev/null || true
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# the kernel tree for kunit.py, the kselftest harness and the ynl generator
. "$(dirname "$0")/testing/ksrc.sh"
mrc_ksrc > /dev/null
