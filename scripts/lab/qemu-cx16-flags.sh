#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# qemu-cx16-flags.sh: run qemu-cx16-flags.c on this CPU and under
# qemu-x86_64 (Debian package qemu-user, the same TCG as the lab's
# qemu-system-x86_64) and print RFLAGS after CMPXCHG16B from each.
# Exit 0 when QEMU agrees with the CPU, 1 when it shows the bug that
# makes the lab start its guests with -cpu qemu64,-cx16.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
command -v qemu-x86_64 >/dev/null || {
	echo "qemu-x86_64 not found: apt-get install qemu-user" >&2
	exit 2
}
gcc -O1 -static -o "$tmp/t" "$here/qemu-cx16-flags.c"
cpu="$("$tmp/t")" || { echo "this CPU: RFLAGS $cpu (unexpected)"; exit 2; }
echo "this CPU:    RFLAGS $cpu"
if tcg="$(qemu-x86_64 "$tmp/t")"; then
	echo "qemu-x86_64: RFLAGS $tcg ($(qemu-x86_64 --version | head -1)): no bug"
	exit 0
fi
echo "qemu-x86_64: RFLAGS $tcg ($(qemu-x86_64 --version | head -1)): bogus flags"
exit 1
