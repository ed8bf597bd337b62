#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install this tree's rnic module with DKMS for the lab kernels (the
# newest Debian 6.12 kernel, not the machine's running kernel, the debug
# kernel when scripts/debug-kernel.sh has built it, and Debian 12's default
# 6.1 kernel when scripts/install-deps.sh has installed it), exactly as a
# user would: dkms add, build, install. Idempotent: an unchanged tree that
# is already installed for every kernel asked for is left alone.
#
# Then the userspace half: the rdma-core provider librnic
# (providers/rnic, scripts/rdma-core.sh), which libibverbs loads for an
# rnic device; guests see it through the host's / (Documentation/
# rnic-provider.rst). RNIC_NO_PROVIDER=1 skips it.
#
# Usage: scripts/dkms-install.sh [KVER...]
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE=${RNIC_CACHE:-/var/cache/rnic}
LOG=${RNIC_DKMS_LOG:-/tmp/rnic-dkms.log}

die() { echo "dkms-install: $*" >&2; exit 1; }

# The provider is built against cached rdma-core sources (fetched once from
# deb.debian.org) and installed only when its build changed.
provider() {
	[ "${RNIC_NO_PROVIDER:-0}" = 1 ] && return 0
	bash "$REPO/scripts/rdma-core.sh" install >>"$LOG" 2>&1 ||
		die "provider: scripts/rdma-core.sh install failed; see $LOG"
	echo "dkms-install: librnic-rdmav34.so installed (/etc/libibverbs.d/rnic.driver)"
}

KVERS=("$@")
if [ ${#KVERS[@]} = 0 ]; then
	KVERS=("$(cat "$CACHE/kver" 2>/dev/null || true)")
	[ -r "$CACHE/debug-kver" ] && KVERS+=("$(cat "$CACHE/debug-kver")")
	[ -r "$CACHE/kver61" ] && KVERS+=("$(cat "$CACHE/kver61")")
fi
for KVER in "${KVERS[@]}"; do
	[ -n "$KVER" ] || die "no kernel version; run scripts/install-deps.sh first"
	[ -d "/lib/modules/$KVER/build" ] ||
		die "no headers for $KVER (/lib/modules/$KVER/build); run scripts/install-deps.sh (or scripts/debug-kernel.sh)"
done
command -v dkms >/dev/null || die "dkms missing; run scripts/install-deps.sh"

# One install at a time: dkms keeps per-module state in /var/lib/dkms and
# two concurrent add/build/install runs fail spuriously.
mkdir -p "$CACHE"
exec 9>"$CACHE/dkms.lock"
flock 9

NAME=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$REPO/dkms.conf")
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
DEST="/usr/src/$NAME-$VER"

# Only what the module build needs goes to /usr/src: DKMS builds there.
FILES=(Makefile Kbuild dkms.conf drivers include kunit tools/rnic_perf tools/rnic_scale)
hash="$(cd "$REPO" && find "${FILES[@]}" -type f \
	! -name '*.o' ! -name '*.ko' ! -name '*.cmd' ! -name '*.mod*' \
	! -name modules.order ! -name Module.symvers -print0 | sort -z |
	xargs -0 sha1sum | sha1sum | cut -c1-16)"
installed() { # KVER has the module of this tree (its stamp and the file)
	local ko="/lib/modules/$1/updates/dkms/$NAME.ko"
	[ "$(cat "$DEST/.rnic-hash-$1" 2>/dev/null)" = "$hash" ] &&
		{ [ -f "$ko" ] || [ -f "$ko.xz" ] || [ -f "$ko.zst" ]; }
}
# build_install KVER...: dkms build and install this tree's module for
# each, then stamp it with the tree's hash.
build_install() {
	local k
	for k in "$@"; do
		dkms build -m "$NAME" -v "$VER" -k "$k" --force >>"$LOG" 2>&1 ||
			die "stage dkms build for $k failed; see $LOG and /var/lib/dkms/$NAME/$VER/build/make.log"
		dkms install -m "$NAME" -v "$VER" -k "$k" --force >>"$LOG" 2>&1 ||
			die "stage dkms install for $k failed; see $LOG"
		echo "$hash" >"$DEST/.rnic-hash-$k"
	done
	echo "dkms-install: $NAME/$VER installed for $*:"
	dkms status -m "$NAME" -v "$VER"
}
# The kernels to build for: with this tree already in $DEST only those
# whose module is not this tree's (installing for one kernel must not
# leave another's stale, nor remove it); else all, from a fresh copy.
TODO=()
if [ "$(cat "$DEST/.rnic-hash" 2>/dev/null)" = "$hash" ] &&
	[ -e "/var/lib/dkms/$NAME/$VER" ]; then
	for KVER in "${KVERS[@]}"; do
		installed "$KVER" || TODO+=("$KVER")
	done
	if [ ${#TODO[@]} = 0 ]; then
		echo "dkms-install: $NAME/$VER for ${KVERS[*]} up to date"
		provider
		exit 0
	fi
	: >"$LOG"
	build_install "${TODO[@]}"
	provider
	exit 0
fi

: >"$LOG"
# DKMS's own record of the version, not 'dkms status' (whose output is
# empty when the source link is broken, although 'dkms add' then refuses).
if [ -e "/var/lib/dkms/$NAME/$VER" ]; then
	if ! dkms remove -m "$NAME" -v "$VER" --all >>"$LOG" 2>&1; then
		# A record whose source tree is gone cannot be removed by dkms;
		# its built modules stay in /lib/modules until reinstalled.
		[ -d "$DEST" ] && die "stage dkms remove failed; see $LOG"
		echo "dkms-install: removing the record of $NAME/$VER, whose source $DEST is gone" >>"$LOG"
		rm -rf "/var/lib/dkms/$NAME/$VER"
	fi
fi
rm -rf "$DEST"
mkdir -p "$DEST"
(cd "$REPO" && tar -cf - --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
	--exclude=Module.symvers "${FILES[@]}") | tar -xf - -C "$DEST"

dkms add -m "$NAME" -v "$VER" >>"$LOG" 2>&1 || die "stage dkms add failed; see $LOG"
echo "$hash" >"$DEST/.rnic-hash"
build_install "${KVERS[@]}"
provider
