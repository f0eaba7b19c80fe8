#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs MRC's KUnit suites on UML with the kernel's own kunit.py.  The kernel
# tree comes from linux-source-6.12, is extracted once into $MRC_CACHE and
# builds incrementally there; net/mrc and the uapi header are linked in.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/testing/ksrc.sh"
# One UML build tree and one source tree per machine: serialise runs (from
# several clones or worktrees at once, each links its own net/mrc in).
mkdir -p "$MRC_CACHE"
exec 9> "$MRC_CACHE/kunit.lock"
flock 9
ksrc=$(mrc_ksrc)
build=$MRC_CACHE/kunit-uml
results=${RESULTS:-$repo/results}/kunit
mkdir -p "$results" "$build"

ln -sfn "$repo/net/mrc" "$ksrc/net/mrc"
for h in "$repo"/include/uapi/linux/*.h; do
	ln -sfn "$h" "$ksrc/include/uapi/linux/$(basename "$h")"
done
grep -q 'net/mrc/Kconfig' "$ksrc/net/Kconfig" ||
	sed -i '/source "net\/mptcp\/Kconfig"/a source "net/mrc/Kconfig"' "$ksrc/net/Kconfig"
grep -q 'CONFIG_MRC)' "$ksrc/net/Makefile" ||
	echo 'obj-$(CONFIG_MRC)		+= mrc/' >> "$ksrc/net/Makefile"

# The link may have pointed at another checkout whose objects are newer than
# these sources: make would keep them.  MRC's own objects rebuild in seconds.
rm -rf "$build/net/mrc"
cd "$ksrc"
set +e
python3 tools/testing/kunit/kunit.py build \
	--kunitconfig=net/mrc/.kunitconfig --build_dir="$build" \
	--jobs="$(nproc)" > "$results/build.log" 2>&1
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	tail -40 "$results/build.log" >&2
	echo "kunit: build FAILED" >&2
	exit "$rc"
fi
# Boot the UML kernel ourselves rather than through kunit.py: the suites run
# before init, then kunit-init.sh (host root read-only over hostfs) has
# kmemleak scan and print its report before powering off.
set +e
timeout 600 "$build/linux" mem=1G console=tty kunit.enable=1 \
	root=/dev/root rootfstype=hostfs rootflags=/ ro \
	init="$repo/tools/testing/kunit-init.sh" < /dev/null > "$results/raw.log" 2>&1
uml_rc=$?
rc=0
set -e
# The raw TAP log from the UML kernel: count test cases (nested, indented).
awk -f "$repo/tools/testing/tap-count.awk" "$results/raw.log" > "$results/counts"
cat "$results/counts"
grep -E '^\s*(not )?ok ' "$results/raw.log" | sed 's/^/kunit: /' || true
read -r passed failed _ < "$results/counts"
if [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
	rc=1
fi
if grep -Eq 'BUG:|WARNING:|KASAN|possible circular|inconsistent lock|refcount_t' "$results/raw.log"; then
	echo "kunit: kernel splat in $results/raw.log" >&2
	grep -E -A20 'BUG:|WARNING:|KASAN|possible circular|inconsistent lock|refcount_t' "$results/raw.log" | head -60 >&2
	rc=1
fi
# kmemleak: UML records no allocation backtraces, so a leak cannot be pinned
# on MRC by its trace; nothing but boot and these suites runs in this
# kernel, so any unreferenced object fails the run.
sed -n '/^kmemleak: report begin/,/^kmemleak: report end/p' "$results/raw.log" \
	> "$results/kmemleak"
if ! grep -q '^kmemleak: report end' "$results/kmemleak" &&
   grep -q 'ptrace set fp regs failed, errno = 14' "$results/raw.log"; then
	# The host kernel takes a task's XSAVE state only whole
	# (xstateregs_set(): EFAULT unless the size is the host's); UML 6.12
	# passes a fixed-size buffer smaller than an AMX host's state, so no
	# UML process can run here.  The suites ran before init; only the
	# kmemleak scan, which needs init, cannot.
	echo "kunit: kmemleak scan SKIPPED: this host's XSAVE state is larger than UML 6.12 handles (AMX), UML cannot start init" >&2
	read -r p f s < "$results/counts"
	echo "$p $f $((s + 1))" > "$results/counts"
elif ! grep -q '^kmemleak: report end' "$results/kmemleak"; then
	echo "kunit: no kmemleak report (the kernel did not reach init, rc=$uml_rc)" >&2
	rc=1
else
	[ "$uml_rc" -eq 0 ] || rc=1
	leaks=$(grep -c '^unreferenced object' "$results/kmemleak" || true)
	echo "kunit: kmemleak: $leaks unreferenced objects"
	if [ "$leaks" -ne 0 ]; then
		cat "$results/kmemleak" >&2
		rc=1
	fi
fi
[ "$rc" -eq 0 ] || { tail -40 "$results/raw.log" >&2; echo "kunit: FAILED (rc=$rc)" >&2; }
exit "$rc"
