#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Each constant of kernel_constants.h against the #define of the same name
# in net/mrc (the max_cwnd of mrc_ack_rcv() against its initialiser).
set -eu
cd "$(dirname "$0")"
rc=0
while read -r name value file; do
	if [ "$name" = MRC_ACK_MAX_CWND ]; then
		kernel=$(sed -n 's/^\s*\.max_cwnd\s*=\s*\([0-9]*\),.*/\1/p' ../net/mrc/input.c)
	else
		kernel=$(sed -n "s/^#define\s\+$name\s\+\([0-9]*\).*/\1/p" "../net/mrc/$file")
	fi
	if [ "$kernel" != "$value" ]; then
		echo "$name: sim has $value, net/mrc/$file has '${kernel}'" >&2
		rc=1
	fi
done < <(sed -n 's|^#define\s\+\(MRC_[A-Z_]*\)\s\+\([0-9]*\)\s*/\*\s*\([a-z_]*\.c\).*|\1 \2 \3|p' \
	kernel_constants.h)
exit $rc
