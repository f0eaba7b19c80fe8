# SPDX-License-Identifier: GPL-2.0-only
# Shared by the test scripts: where the kernel source tree lives.
MRC_CACHE=${MRC_CACHE:-/var/cache/mrc}

# Prints the path of an extracted linux-source-6.12 tree, extracting it once.
# A tree that someone used to try mrc's in-tree build (net/mrc linked in,
# net/Kconfig edited) is extracted again: it would build the debug kernel
# with another checkout's headers, or not at all once that checkout is gone.
mrc_ksrc() {
	local tarball=/usr/src/linux-source-6.12.tar.xz
	local tree=$MRC_CACHE/linux-source-6.12 lock
	# make check's background debug kernel and its lint ask at once
	mkdir -p "$MRC_CACHE"
	exec {lock}> "$MRC_CACHE/ksrc.lock"
	flock "$lock"
	if [ ! -f "$tree/.mrc-extracted" ] || [ -e "$tree/net/mrc" ] || [ -L "$tree/net/mrc" ] ||
	   grep -q mrc "$tree/net/Kconfig" 2>/dev/null; then
		[ -f "$tarball" ] || { echo "missing $tarball: run make deps" >&2; exec {lock}>&-; return 1; }
		rm -rf "$tree"
		tar -C "$MRC_CACHE" -xf "$tarball" >&2
		touch "$tree/.mrc-extracted"
	fi
	exec {lock}>&-
	echo "$tree"
}
