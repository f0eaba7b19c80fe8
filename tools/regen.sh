#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Generates the netlink code of the "mrc" family from its YAML spec with the
# kernel's own generator (linux-source-6.12 tools/net/ynl/ynl-gen-c.py), as
# the kernel's ynl-regen.sh does for in-tree families.
#
# Usage: regen.sh          write the generated files
#        regen.sh --check  fail (and show the diff) if they are stale
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/tools/testing/ksrc.sh"
ksrc=$(mrc_ksrc) || exit 1
gen=$ksrc/tools/net/ynl/ynl-gen-c.py
spec=Documentation/netlink/specs/mrc.yaml
check=0
[ "${1:-}" = --check ] && check=1

# ynl-gen-c.py names the spec relative to the tree that holds MAINTAINERS
# and looks for the schema two directories above the spec: give it a tree.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/Documentation/netlink/specs" "$tmp/out"
touch "$tmp/MAINTAINERS"
cp "$repo/Documentation/netlink/genetlink.yaml" "$tmp/Documentation/netlink/"
cp "$repo/$spec" "$tmp/$spec"

# The schema lets a multicast group carry flags, but the 6.12 generator (and
# the newest upstream one read) drop them, so the kernel would let anyone join.
# Run a copy taught one mapping: uns-admin-perm on a group becomes
# GENL_MCAST_CAP_NET_ADMIN (genl_bind() checks it against the netns's user
# namespace, as GENL_UNS_ADMIN_PERM does for an op).  Fail if the line the
# copy patches ever changes.
cp "$ksrc/tools/net/ynl/ynl-gen-c.py" "$tmp/"
cp -r "$ksrc/tools/net/ynl/lib" "$tmp/lib"
gen=$tmp/ynl-gen-c.py
python3 - "$gen" <<'PY' || { echo "regen: cannot patch ynl-gen-c.py for mcast-group flags" >&2; exit 1; }
import sys
path = sys.argv[1]
src = open(path).read()
old = """        cw.p('[' + grp_id + '] = { "' + name + '", },')"""
new = """        flags = grp.get('flags', [])
        if [f for f in flags if f != 'uns-admin-perm']:
            raise Exception(f"mcast group {name}: only uns-admin-perm is supported")
        if flags:
            cw.p('[' + grp_id + '] = { "' + name + '", .flags = GENL_MCAST_CAP_NET_ADMIN, },')
        else:
            cw.p('[' + grp_id + '] = { "' + name + '", },')"""
if src.count(old) != 1:
    sys.exit(1)
open(path, "w").write(src.replace(old, new))
PY

# OUTPUT MODE ARGS...
outputs=(
	"include/uapi/linux/mrc_netlink.h uapi --header"
	"net/mrc/netlink_gen.h kernel --header"
	"net/mrc/netlink_gen.c kernel --source"
)
rc=0
for o in "${outputs[@]}"; do
	read -r f mode kind <<< "$o"
	out=$tmp/out/$(basename "$f")
	(cd "$tmp" && python3 "$gen" --mode "$mode" "$kind" --spec "$tmp/$spec" -o "$out") ||
		{ echo "regen: ynl-gen-c.py failed for $f" >&2; exit 1; }
	if [ $check = 1 ]; then
		if ! diff -u "$repo/$f" "$out"; then
			echo "regen: $f does not match $spec (run make regen)" >&2
			rc=1
		fi
	elif ! cmp -s "$out" "$repo/$f"; then
		cp "$out" "$repo/$f"
		echo "	GEN	$f"
	fi
done
[ $check = 1 ] && [ $rc = 0 ] && echo "regen: generated files match $spec"
exit $rc
