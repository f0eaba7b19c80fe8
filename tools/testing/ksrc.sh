# SPDX-License-Identifier: GPL-2.0-only
# Shared by the test scripts: where the kernel source tree lives.
MRC_CACHE=${MRC_CACHE:-/var/cache/mrc}

# Prints the path of an extracted linux-source-6.12 tree, extracting it once.
mrc_ksrc() {
	local tarball=/usr/src/linux-source-6.12.tar.xz
	local tree=$MRC_CACHE/linux-source-6.12
	if [ ! -f "$tree/.mrc-extracted" ]; then
		[ -f "$tarball" ] || { echo "missing $tarball: run make deps" >&2; return 1; }
		mkdir -p "$MRC_CACHE"
		rm -rf "$tree"
		tar -C "$MRC_CACHE" -xf "$tarball" >&2
		touch "$tree/.mrc-extracted"
	fi
	echo "$tree"
}
