#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Kernel style and static checks: checkpatch --strict on the kernel sources
# and the uapi header, sparse (C=2) and a W=1 build that must be warning-free.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/tools/testing/ksrc.sh"
ksrc=$(mrc_ksrc) || exit 1
kver=${MRC_KVER:-$(bash "$repo/tools/kver.sh")}
kdir=${KDIR:-/usr/src/linux-headers-$kver}
cd "$repo"
fail=0

files=$(ls net/mrc/*.[ch] include/uapi/linux/*.h | grep -v "\.mod\.c$")
if ! "$ksrc/scripts/checkpatch.pl" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $files; then
	echo "lint: checkpatch found problems" >&2
	fail=1
fi

# Rebuild every object with sparse and W=1; any diagnostic fails.
log=$(mktemp)
make -s -C "$kdir" M="$repo" CONFIG_MRC=m W=1 C=2 CHECK=sparse modules > "$log" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -E 'warning:|error:' "$log" | grep -v '^make' | grep -q .; then
	cat "$log" >&2
	echo "lint: sparse / W=1 build not clean" >&2
	fail=1
fi
rm -f "$log"
[ $fail -eq 0 ] && echo "lint: clean"
exit $fail
