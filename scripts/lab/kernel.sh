#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel image the lab boots: the lab kernel's uncompressed
# vmlinux, extracted once from /boot/vmlinuz-$KVER and cached in
# /var/cache/rnic/.  QEMU boots an ELF vmlinux through its PVH entry point,
# which skips the real-mode setup and the in-guest decompression of the
# bzImage: under TCG that saves about 5 s per boot (measured on this
# 2-core machine: 1.9 s instead of 8.0 s from QEMU start to the kernel's
# first line).  If the image cannot be extracted, or has no PVH entry note,
# the bzImage itself is printed and booted the classic way.
#
# Usage: scripts/lab/kernel.sh [VMLINUZ]
set -euo pipefail

CACHE="${RNIC_CACHE:-/var/cache/rnic}"
if [ $# -ge 1 ]; then
	VMLINUZ="$1"
else
	[ -r "$CACHE/kver" ] || {
		echo "lab: kernel: missing $CACHE/kver (run scripts/install-deps.sh)" >&2
		exit 1
	}
	VMLINUZ="/boot/vmlinuz-$(cat "$CACHE/kver")"
fi
[ -r "$VMLINUZ" ] || {
	echo "lab: kernel: missing $VMLINUZ (run scripts/install-deps.sh)" >&2
	exit 1
}

# has_pvh FILE: an ELF with the Xen PVH entry note (type 0x12).
has_pvh() { LC_ALL=C readelf -n "$1" 2>/dev/null | grep -q 'Unknown note type: (0x00000012)\|XEN_ELFNOTE_PHYS32_ENTRY'; }

# Already a PVH vmlinux (the debug kernel's build tree): boot it as it is.
if has_pvh "$VMLINUZ"; then
	echo "$VMLINUZ"
	exit 0
fi

key="$(stat -c '%s-%Y' "$VMLINUZ")"
OUT="$CACHE/lab-vmlinux-$(basename "$VMLINUZ")-$key"
mkdir -p "$CACHE"
exec 9>"$CACHE/lab-vmlinux.lock"
flock 9
if [ -s "$OUT" ]; then
	echo "$OUT"
	exit 0
fi

# The compressed payload starts at its format's magic; decompressors stop
# at the end of their stream and complain about the bytes after it, so
# their exit status is not checked: the result is (has_pvh).
tmp="$(mktemp "$CACHE/lab-vmlinux.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
extract() { # extract MAGIC-REGEX CMD...
	local magic="$1" off
	shift
	off="$(LC_ALL=C grep -obUaP "$magic" "$VMLINUZ" | head -1 | cut -d: -f1)" || true
	[ -n "$off" ] || return 1
	tail -c +$((off + 1)) "$VMLINUZ" | "$@" >"$tmp" 2>/dev/null || true
	has_pvh "$tmp"
}
if extract '\x28\xb5\x2f\xfd' zstd -dcq ||
	extract '\xfd\x37\x7a\x58\x5a\x00' xz -dcq ||
	extract '\x1f\x8b\x08' gzip -dcq; then
	mv "$tmp" "$OUT"
	# Older extractions of this image are useless now; other kernels'
	# are not (a lab may boot several, lab_vm --kver).
	find "$CACHE" -maxdepth 1 -name "lab-vmlinux-$(basename "$VMLINUZ")-[0-9]*-[0-9]*" \
		! -path "$OUT" -delete
	echo "lab: kernel: extracted $OUT from $VMLINUZ" >&2
	echo "$OUT"
else
	echo "lab: kernel: no PVH-bootable vmlinux in $VMLINUZ, booting it as a bzImage" >&2
	echo "$VMLINUZ"
fi
