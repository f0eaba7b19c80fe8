#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the newest installed Debian 6.12 kernel with headers (the VM boots
# it and the module builds against it); the host's running kernel is not it.
set -eu
best=$(ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$best" ] || { echo "no linux-headers-6.12-amd64: run make deps" >&2; exit 1; }
basename "$best" | sed 's/^linux-headers-//'
