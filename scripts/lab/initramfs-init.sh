#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the lab initramfs (busybox sh, PID 1).  Its only job is to get
# from the kernel to the host's own userland: load the few modules the
# Debian kernel has as modules (9p, overlay), mount the host's / read-only
# over 9p, put a tmpfs overlay on top so the guest can write, and hand over
# to the guest init script named on the kernel command line.
#
# Every step prints "rnic-lab: stage: NAME" on the console so the host can
# tell which stage a VM that never became ready died in.  Any failure ends
# in a clear message and exiting PID 1, which panics the kernel; with
# panic=-1 and -no-reboot QEMU then exits at once instead of hanging.

export PATH=/bin

# The guest uptime on each stage line shows where boot time goes.
stage() {
	read -r up _ </proc/uptime
	echo "rnic-lab: stage: $* (uptime $up s)"
}
die() {
	echo "rnic-lab: FAILED in initramfs: $*"
	sleep 1
	exit 1
}

/bin/busybox mount -t devtmpfs devtmpfs /dev || die "mount devtmpfs"
# Re-open stdio on the console: the kernel may start us without them.
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc || die "mount proc"
mount -t sysfs sysfs /sys || die "mount sysfs"
stage initramfs

# Kernel command line: rniclab.init=PATH is the guest init script, as a
# path on the host's / (the repo may be anywhere).  Dotted names are
# treated by the kernel as module options of a module that does not
# exist, so it neither complains nor exports them to us; parse them here.
GUEST_INIT=
# shellcheck disable=SC2013 # the command line is one line of words
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rniclab.init=*) GUEST_INIT="${arg#rniclab.init=}" ;;
	esac
done
[ -n "$GUEST_INIT" ] || die "no rniclab.init= on the kernel command line"

stage modules
# Loaded in the order initramfs.sh wrote (dependencies first).
while read -r mod; do
	[ -n "$mod" ] || continue
	insmod "/lib/modules/$mod" || die "insmod $mod"
done </lib/modules/load-order

stage mount-root
mkdir -p /mnt/lower /mnt/rw /mnt/root
# msize: larger 9p messages make reading binaries/libraries from the host
# noticeably faster under TCG.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot /mnt/lower ||
	die "mount 9p hostroot (is -virtfs ...mount_tag=hostroot given?)"
mount -t tmpfs -o mode=0755 rw /mnt/rw || die "mount tmpfs"
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work \
	overlay /mnt/root || die "mount overlay"

stage switch-root
[ -f "/mnt/root$GUEST_INIT" ] || die "guest init $GUEST_INIT not found on the host's /"
# Copy the guest init into the overlay's tmpfs: the guest mounts tmpfs on
# /tmp and /run, which would hide the script if the repo lived there, and
# bash reads its script lazily.
mkdir -p /mnt/root/.rnic-lab
cp "/mnt/root$GUEST_INIT" /mnt/root/.rnic-lab/guest-init || die "copy guest init"
# The guest init and its agent use this static busybox (and the applet
# links initramfs.sh made) for their own housekeeping: it is already in
# RAM, whereas the first exec of each host binary reads it and its
# libraries over 9p.
cp -a /lab-bin /mnt/root/.rnic-lab/bin || die "copy busybox and its applets"
umount /proc /sys
mount --move /dev /mnt/root/dev || die "move /dev"
exec switch_root /mnt/root /bin/bash /.rnic-lab/guest-init "$GUEST_INIT"
