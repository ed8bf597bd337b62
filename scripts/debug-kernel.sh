#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (cached) the lab's debug kernel from Debian's linux-source-6.12
# with scripts/debug-kernel.config (KASAN, lockdep, kmemleak, UBSAN,
# KFENCE, debug objects, hung-task and soft-lockup detectors, KUnit), and
# install it the way a distribution kernel is installed, so that DKMS and
# modprobe work for it: modules and modules.builtin under
# /lib/modules/RELEASE, /lib/modules/RELEASE/build pointing at the build
# tree.  One image serves KUnit (scripts/kunit.sh) and the lab
# (RNIC_LAB_KVER=RELEASE).
#
# Prints "RELEASE BUILD-DIR" on stdout; the image the lab boots is
# BUILD-DIR/vmlinux (PVH entry).  Also writes RELEASE to
# $RNIC_CACHE/debug-kver.
#
# Usage: scripts/debug-kernel.sh
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE=${RNIC_CACHE:-/var/cache/rnic}
FRAG="$REPO/scripts/debug-kernel.config"
LOG=${RNIC_DEBUG_KERNEL_LOG:-$CACHE/debug-kernel-build.log}

die() { echo "debug-kernel: $*" >&2; exit 1; }

mkdir -p "$CACHE"
# One build at a time; a second caller waits and then finds it built.
exec 9>"$CACHE/debug-kernel.lock"
flock 9

SRC="$("$REPO/scripts/linux-source.sh")" || die "linux-source failed"

# The key covers the fragment and the extracted source: a config change
# or a new linux-source rebuilds, nothing else does.
key="$( (cat "$FRAG" "$SRC/.rnic-stamp") | sha1sum | cut -c1-12)"
KB="$CACHE/debug-kernel-$key"

if [ ! -f "$KB/.rnic-built" ]; then
	echo "debug-kernel: building in $KB (log $LOG)" >&2
	# Builds of older fragments are dead weight (each is ~1 GB). (Moving
	# one here to build incrementally does not help: Kbuild's command
	# lines name the build directory, so everything is rebuilt anyway.)
	find "$CACHE" -maxdepth 1 -name 'debug-kernel-*' -type d ! -path "$KB" \
		-exec rm -rf {} +
	rm -rf "$KB"
	mkdir -p "$KB"
	t0=$SECONDS
	{
		make -C "$SRC" O="$KB" KCONFIG_ALLCONFIG="$FRAG" allnoconfig &&
			make -C "$SRC" O="$KB" olddefconfig
	} >"$LOG" 2>&1 || die "kernel config failed; see $LOG"
	# allnoconfig silently drops symbols whose dependencies are unmet:
	# insist that every line of the fragment survived.
	while read -r line; do
		case "$line" in CONFIG_*=*) ;; *) continue ;; esac
		grep -qxF "$line" "$KB/.config" ||
			die "kernel config: '$line' did not survive olddefconfig (unmet dependency?); see $KB/.config"
	done <"$FRAG"
	make -C "$SRC" O="$KB" -j"$(nproc)" vmlinux bzImage modules \
		>>"$LOG" 2>&1 || die "kernel build failed; see $LOG"
	touch "$KB/.rnic-built"
	echo "debug-kernel: built in $((SECONDS - t0)) s" >&2
fi

REL="$(cat "$KB/include/config/kernel.release")"
MODDIR="/lib/modules/$REL"
# Installed once per build: modules.builtin tells modprobe (and the lab's
# initramfs builder) that rdma_rxe, nvme-rdma, ... are built in.
if [ ! -f "$MODDIR/.rnic-key" ] || [ "$(cat "$MODDIR/.rnic-key")" != "$key" ]; then
	# DKMS state of a previous build of the same release is stale.
	rm -rf "$MODDIR/kernel" "$MODDIR/updates"
	make -C "$SRC" O="$KB" INSTALL_MOD_PATH=/ modules_install \
		>>"$LOG" 2>&1 || die "modules_install failed; see $LOG"
	ln -sfn "$KB" "$MODDIR/build"
	cp "$KB/System.map" "$MODDIR/System.map"
	echo "$key" >"$MODDIR/.rnic-key"
fi
echo "$REL" >"$CACHE/debug-kver"
echo "$REL $KB"
