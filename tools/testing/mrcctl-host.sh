#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mrcctl, its man page and make install on the host, where no mrc module
# need be loaded: what mrcctl refuses before it talks to the kernel, and
# what the tree's text files must hold.  TAP; run by make check after the
# build.
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/testing/tap.sh"
MRCCTL=$repo/tools/mrcctl/mrcctl
MAN=$repo/tools/mrcctl/mrcctl.8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tap_plan 2

# --- the man page ------------------------------------------------------------
bad=$(LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$MAN" | cut -d: -f1 | paste -sd ' ')
tap_result $(( ${#bad} == 0 )) "mrcctl.8 holds no control bytes${bad:+ (lines $bad)}"
# lint.sh --host on a copy of the tree whose man page has a form feed
mkdir -p "$tmp/lint/tools/mrcctl"
cp "$repo/tools/lint.sh" "$tmp/lint/tools/"
printf '.TH X 8\n.B plane add \fIADDR\n' > "$tmp/lint/tools/mrcctl/mrcctl.8"
err=$(bash "$tmp/lint/tools/lint.sh" --host 2>&1)
rc=$?
echo "# lint.sh --host: rc $rc: $err"
[ $rc -ne 0 ] && grep -q "mrcctl.8: control bytes on line(s) 2" <<< "$err"
tap_result $(( $? == 0 )) "lint.sh rejects a control byte in a man page"

tap_done
