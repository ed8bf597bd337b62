#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the lab's initramfs: busybox-static, the lab kernel's 9p and
# overlay modules (decompressed, with their dependencies from
# modules.dep) and scripts/lab/initramfs-init.sh as /init.
#
# The image is cached in /var/cache/rnic/ under a name derived from a hash
# of every input (kernel version, busybox binary, module files, this script
# and the init script), so it is rebuilt only when one of them changes.
# Prints the image's path on stdout.
#
# Usage: scripts/lab/initramfs.sh [--kver VERSION]
set -euo pipefail

LAB_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${RNIC_CACHE:-/var/cache/rnic}"
BUSYBOX="${RNIC_LAB_BUSYBOX:-/bin/busybox}"
# The modules the guest needs before it can reach the host's /, plus
# configfs and virtio_net: loading them here with insmod is instant, while
# modprobe from the host's / first reads kmod, its libraries and indexes
# over 9p (seconds under TCG). virtio_pci is built into Debian's 6.12 but
# a module in its 6.1, which has no 9p transport without it.
WANT=(virtio_pci netfs 9pnet 9pnet_virtio 9p overlay configfs virtio_net)

fail() {
	echo "lab: initramfs: $*" >&2
	exit 1
}

KVER=
if [ "${1:-}" = --kver ]; then
	KVER="$2"
fi
if [ -z "$KVER" ]; then
	[ -r "$CACHE/kver" ] || fail "missing $CACHE/kver (run scripts/install-deps.sh)"
	KVER="$(cat "$CACHE/kver")"
fi
MODDIR="/lib/modules/$KVER"
[ -r "$MODDIR/modules.dep" ] ||
	fail "missing $MODDIR/modules.dep (is linux-image-$KVER installed? run scripts/install-deps.sh)"
[ -x "$BUSYBOX" ] || fail "missing $BUSYBOX (install busybox-static: scripts/install-deps.sh)"
# A dynamically linked busybox would not run in the initramfs.
if ! file_out="$(LC_ALL=C readelf -l "$BUSYBOX" 2>/dev/null)" ||
	grep -q 'Requesting program interpreter' <<<"$file_out"; then
	fail "$BUSYBOX is not statically linked (install busybox-static)"
fi
command -v cpio >/dev/null || fail "missing cpio (run scripts/install-deps.sh)"
command -v xz >/dev/null || fail "missing xz (run scripts/install-deps.sh)"

# Resolve the load order from modules.dep: each module's dependencies
# (listed there deepest-last) come before it, each module once.
declare -A seen=()
order=()
add_module() {
	local name="$1" line path deps d i
	line="$(grep -E "(^|/)${name}\.ko(\.[a-z]+)?:" "$MODDIR/modules.dep" | head -1)" ||
		true
	if [ -z "$line" ]; then
		# Not a module: built into this kernel (fine), or really missing.
		if grep -qE "(^|/)${name}\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
			return 0
		fi
		fail "module $name not found in $MODDIR/modules.dep or modules.builtin"
	fi
	path="${line%%:*}"
	read -r -a deps <<<"${line#*:}"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		d="$(basename "${deps[$i]}")"
		add_module "${d%%.ko*}"
	done
	if [ -z "${seen[$path]:-}" ]; then
		seen[$path]=1
		order+=("$path")
	fi
}
for m in "${WANT[@]}"; do
	add_module "$m"
done

# Cache key: everything that ends up in the image.
key="$({
	echo "$KVER"
	sha256sum "$BUSYBOX" "$LAB_SRC/initramfs.sh" "$LAB_SRC/initramfs-init.sh" | cut -d' ' -f1
	for p in "${order[@]}"; do
		echo "$p"
		sha256sum "$MODDIR/$p" | cut -d' ' -f1
	done
} | sha256sum | cut -c1-16)"
OUT="$CACHE/lab-initramfs-$KVER-$key.cpio"

mkdir -p "$CACHE"
# Concurrent runs: one builds, the others wait and then find the image.
exec 9>"$CACHE/lab-initramfs.lock"
flock 9
if [ -s "$OUT" ]; then
	echo "$OUT"
	exit 0
fi

work="$(mktemp -d "$CACHE/lab-initramfs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,dev,proc,sys,mnt,lib/modules}
cp "$BUSYBOX" "$root/bin/busybox"
for applet in sh mount umount insmod mkdir cat cp sleep switch_root; do
	ln -s busybox "$root/bin/$applet"
done
# The guest init's own tools (initramfs-init.sh copies the directory into
# the guest's root in one cp: an exec per applet cost a debug boot ~1 s).
mkdir -p "$root/lab-bin"
ln "$root/bin/busybox" "$root/lab-bin/busybox"
for applet in cat cut grep head ip mkdir mkfifo mount mv rm seq setsid sleep tr; do
	ln -s busybox "$root/lab-bin/$applet"
done
: >"$root/lib/modules/load-order"
for p in "${order[@]}"; do
	f="$(basename "$p")"
	case "$f" in
	*.ko.xz) xz -dc "$MODDIR/$p" >"$root/lib/modules/${f%.xz}" ;;
	*.ko.zst) zstd -qdc "$MODDIR/$p" >"$root/lib/modules/${f%.zst}" ;;
	*.ko.gz) gzip -dc "$MODDIR/$p" >"$root/lib/modules/${f%.gz}" ;;
	*.ko) cp "$MODDIR/$p" "$root/lib/modules/$f" ;;
	*) fail "unexpected module file $p" ;;
	esac
	echo "${f%.ko*}.ko" >>"$root/lib/modules/load-order"
done
install -m 0755 "$LAB_SRC/initramfs-init.sh" "$root/init"
# Uncompressed: a few MB that the kernel unpacks faster than it would
# decompress them under TCG.
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet) >"$work/img.cpio"
mv "$work/img.cpio" "$OUT"
# Older images of this kernel are useless now; other kernels' are not (a
# lab may boot several, lab_vm --kver, and each keeps its own image).
find "$CACHE" -maxdepth 1 -name "lab-initramfs-$KVER-????????????????.cpio" ! -path "$OUT" -delete
echo "lab: initramfs: built $OUT (modules: ${order[*]##*/})" >&2
echo "$OUT"
