#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the lab: PID 1 after the initramfs switched to the host's
# / (read-only 9p with a tmpfs overlay).  It mounts the usual pseudo
# filesystems, sets the hostname, brings up the NICs with the addresses
# given on the kernel command line and then runs the command agent.
#
# Kernel command line (written by lab.sh):
#   rniclab.vm=N                   VM number (hostname lab-vmN)
#   rniclab.virtio=MAC,IP4/P,IP6/P  virtio-net NIC to configure at boot
#   rniclab.rnic=MAC,IP4/P,IP6/P    rnic NIC (configured later, once its
#                                  driver is loaded: lab_ifup "$LAB_RNIC_SPEC")
#   rniclab.repo=PATH              the repo on the host's / (for commands)
#
# Command agent: the host shares $RNIC_LAB_DIR/.../vmN/ctl read-write over
# 9p (tag "rnicctl").  The host drops ID.cmd (a bash script, created by
# rename so it is never seen half-written) and writes a newline to the
# guest's second serial port to wake the agent; the agent runs ID.cmd in a
# forked subshell in its own process group with stdout/stderr in ID.out /
# ID.err (readable live by the host), and when it ends writes its exit
# status to ID.rc in one write.  ID.kill from the host kills the command's
# whole process group.  Commands run in the background, so any number may
# run at once (a server in one, a client in another).
#
# Everything interesting is echoed to the serial console, which the host
# saves as vmN/console.log.

set -uo pipefail
# No "set -e" here: PID 1 must not exit on a failed command (that panics
# the kernel); every failure that matters is reported and handled.

# Commands from the host run with the host's tools (HOST_PATH).  Our own
# housekeeping uses the static busybox the initramfs left in /.rnic-lab/bin:
# under TCG the first exec of each host binary costs a few hundred ms of
# 9p reads (binary and libraries), busybox is already in RAM.
HOST_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH="/.rnic-lab/bin:$HOST_PATH"
# LANG=C: a program that finds a UTF-8 locale loads it from the host's /
# over 9p, 0.1-0.2 s of every exec in a debug guest (Python still runs in
# UTF-8 mode: PEP 538 coerces the C locale).
export HOME=/root TERM=dumb LANG=C
CTL=/run/rnic-lab/ctl

log() { echo "rnic-lab: $*" >/dev/console; }
stage() {
	local up
	if [ -r /proc/uptime ]; then
		read -r up _ </proc/uptime
		log "stage: $* (uptime $up s)"
	else
		log "stage: $*"
	fi
}
die() {
	log "FAILED in guest init: $*"
	sleep 1
	# PID 1 exiting panics the kernel and (panic=-1, -no-reboot) ends QEMU.
	exit 1
}

mnt() { # mnt TYPE SOURCE DIR [OPTIONS]
	# Most exist on the host's /: a fork+exec is ~0.2 s of a debug guest.
	[ -d "$3" ] || mkdir -p "$3"
	mount -t "$1" ${4:+-o "$4"} "$2" "$3" || die "mount $1 on $3"
}
mnt proc proc /proc
stage guest-init
mnt sysfs sysfs /sys
# The initramfs moved its devtmpfs here; mount one if it did not.
grep -q '^[^ ]* /dev ' /proc/mounts || mnt devtmpfs devtmpfs /dev
mnt devpts devpts /dev/pts gid=5,mode=620,ptmxmode=666
mnt tmpfs shm /dev/shm mode=1777
mnt tmpfs tmp /tmp mode=1777
mnt tmpfs run /run mode=0755
# configfs is a module in Debian's kernel; the initramfs loaded it.
[ -d /sys/module/configfs ] || modprobe configfs || die "modprobe configfs"
mnt configfs configfs /sys/kernel/config
mnt debugfs debugfs /sys/kernel/debug
# kmemleak's own thread scans a minute after boot and every 10 minutes,
# about 10 s of a TCG guest's only CPU each time; lab_stop scans when the
# test is over, which is the scan that counts.
[ -w /sys/kernel/debug/kmemleak ] && echo scan=off >/sys/kernel/debug/kmemleak
rm -f /.rnic-lab/guest-init

VM='' VIRTIO='' RNIC='' REPO='' SMP=''
for arg in $(</proc/cmdline); do
	case "$arg" in
	rniclab.vm=*) VM="${arg#*=}" ;;
	rniclab.virtio=*) VIRTIO="${arg#*=}" ;;
	rniclab.rnic=*) RNIC="${arg#*=}" ;;
	rniclab.repo=*) REPO="${arg#*=}" ;;
	rniclab.smp=*) SMP="${arg#*=}" ;;
	esac
done
[ -n "$VM" ] || die "no rniclab.vm= on the kernel command line"
# A guest of several vCPUs boots on one (lab.sh gives it maxcpus=1) and
# brings the others online here, before any test runs.  QEMU 7.2's
# multi-threaded TCG can run a stale translation of code that another vCPU
# is patching (fixed in QEMU 8.1): late in boot the kernel flips the
# sched_clock_stable static key on a path every CPU runs all the time,
# and one 2-vCPU guest of the suite died there ("Oops: int3" in
# sched_clock_cpu right after "sched_clock: Marking stable").  With one
# vCPU online then, no other one runs the code being patched.
for f in /sys/devices/system/cpu/cpu[1-9]*/online; do
	[ -e "$f" ] || continue
	read -r online <"$f"
	[ "$online" = 1 ] || echo 1 >"$f" || die "could not bring ${f%/online} online"
done
# A test given N vCPUs runs on N, or not at all: a kernel that cannot see
# them (no ACPI: the MP table names one CPU) ran "SMP" tests on one.
read -r online </sys/devices/system/cpu/online
case "$online" in
0) n=1 ;;
0-*) n=$((${online#0-} + 1)) ;;
*) n=0 ;;
esac
[ "$n" = "${SMP:-1}" ] || die "vCPUs online: $online; QEMU was given ${SMP:-1}"
unset online n f
echo "lab-vm$VM" >/proc/sys/kernel/hostname
echo "lab-vm$VM" >/etc/hostname 2>/dev/null || true

stage network
ip link set lo up || die "lo up"

# lab_ifup MAC,IP4/P,IP6/P: bring up the NIC with that MAC and give it the
# addresses; prints the interface name.  No duplicate address detection:
# the lab bridge is ours, and DAD would only delay IPv6 by ~2 s (set by
# sysctl rather than "nodad", which busybox's ip lacks).
lab_ifup() {
	local spec="$1" mac ip4 ip6 dev d a
	IFS=, read -r mac ip4 ip6 <<<"$spec"
	dev=
	# Up to 30 s: a driver just loaded on a busy host may take a while.
	for _ in $(seq 300); do
		for d in /sys/class/net/*; do
			a=
			read -r a <"$d/address" 2>/dev/null
			if [ "$a" = "$mac" ]; then
				dev="${d##*/}"
				break 2
			fi
		done
		sleep 0.1
	done
	if [ -z "$dev" ]; then
		echo "lab_ifup: no interface with MAC $mac" >&2
		return 1
	fi
	echo 0 >"/proc/sys/net/ipv6/conf/$dev/accept_dad" || return 1
	ip link set "$dev" up || return 1
	if [ -n "$ip4" ]; then ip addr add "$ip4" dev "$dev" || return 1; fi
	if [ -n "$ip6" ]; then ip addr add "$ip6" dev "$dev" || return 1; fi
	echo "$dev"
}
export -f lab_ifup

# lab_ib_active DEV: wait up to 10 s for port 1 of RDMA device DEV to be
# ACTIVE, looking with read and sleep builtins (an "rdma link show | grep"
# per look cost a debug guest ~0.6 s of its vCPU), then print its
# "rdma link show" line; fails if the port never got there.
lab_ib_active() {
	local s
	for _ in $(seq 100); do
		s=
		read -r s <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null
		[[ $s == *ACTIVE ]] && break
		sleep 0.1
	done
	rdma link show "$1/1" | grep 'state ACTIVE'
}
export -f lab_ib_active

VIRTIO_IF=
if [ -n "$VIRTIO" ]; then
	[ -d /sys/module/virtio_net ] || modprobe virtio_net || die "modprobe virtio_net"
	VIRTIO_IF="$(lab_ifup "$VIRTIO")" || die "virtio-net NIC $VIRTIO"
	log "virtio-net NIC $VIRTIO_IF: $VIRTIO"
fi

# libibverbs dlopens every provider /etc/libibverbs.d names (18 in Debian
# 12) in each process that lists devices: ~2 s of a debug guest's vCPU per
# ibv_devices, perftest or rping.  The lab's devices are rnic and rxe only,
# so the guest's overlay hides the other .driver files (whiteouts in its
# tmpfs; the host's / is read-only to it).  The host's own libibverbs, with
# every provider, is what "rdma-core.sh match-test" checks.
hide=()
for f in /etc/libibverbs.d/*.driver; do
	case "${f##*/}" in
	rnic.driver | rxe.driver) ;;
	*) [ -e "$f" ] && hide+=("$f") ;;
	esac
done
# One exec: a fork is ~0.2 s of a debug guest.
[ ${#hide[@]} = 0 ] || rm -f "${hide[@]}" || log "could not hide ${hide[*]}"
unset hide f

stage agent
mkdir -p "$CTL"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none rnicctl "$CTL" ||
	die "mount 9p rnicctl (the host's vmN/ctl directory)"

# What every command sees.
# Addresses without their prefix length, ready for ping/rping -a.
IFS=, read -r LAB_VIRTIO_MAC LAB_VIRTIO_IP4 LAB_VIRTIO_IP6 <<<"$VIRTIO"
IFS=, read -r LAB_RNIC_MAC LAB_RNIC_IP4 LAB_RNIC_IP6 <<<"$RNIC"
LAB_VIRTIO_IP4="${LAB_VIRTIO_IP4%/*}" LAB_VIRTIO_IP6="${LAB_VIRTIO_IP6%/*}"
LAB_RNIC_IP4="${LAB_RNIC_IP4%/*}" LAB_RNIC_IP6="${LAB_RNIC_IP6%/*}"
export LAB_VM="$VM" LAB_REPO="$REPO" LAB_VIRTIO_IF="$VIRTIO_IF" LAB_FILES="$CTL/files" \
	LAB_VIRTIO_MAC LAB_VIRTIO_IP4 LAB_VIRTIO_IP6 \
	LAB_RNIC_MAC LAB_RNIC_IP4 LAB_RNIC_IP6
# For "lab_ifup rnic" once a driver created the rnic netdev.
export LAB_RNIC_SPEC="$RNIC"

# Loadable builtins (Debian's bash-builtins) for the commands that test
# commands run in their polling loops.  Every exec costs a debug guest
# under TCG about 0.3 s of its only vCPU (measured: a fork 0.07 s, a
# static busybox exec 0.12 s, /bin/true 0.33 s: the page faults of ld.so
# and libc), so a "sleep 0.2" loop took more CPU than the work it waited
# for.  These four take the arguments coreutils' take in our tests; a
# test that needs a real sleep process (one to find with pgrep) runs
# /bin/sleep.  Jobs are forks of this shell and inherit them.
for b in sleep seq basename dirname; do
	[ -f "/usr/lib/bash/$b" ] && enable -f "/usr/lib/bash/$b" "$b"
done

# Sleeping 0.1 s with the read builtin on a fifo nobody writes costs no
# fork, which matters when every fork is emulated.
mkfifo /run/rnic-lab/tick
exec 8<>/run/rnic-lab/tick

# The host wakes the agent through the second serial port: after each
# ID.cmd or ID.kill it drops, lab.sh writes that file's name as a line.
# Without it the agent would have to look at the share every 0.1 s, and a
# look is a 9p walk/readdir/clunk: ~40 ms of a debug guest's only vCPU.
# With it, the agent opens the one file it was told about, and looks at
# the whole share only when a kill waits for its job to start (every
# second) or, as a safety net, after 10 s without a request.  (Looking
# once a second whatever happened took 4% of every VM's CPU, idle or not.)
WAKE=
if [ -c /dev/ttyS1 ] && stty -F /dev/ttyS1 raw -echo 2>/dev/null &&
	exec 9<>/dev/ttyS1; then
	WAKE=ttyS1
fi

# start_job ID: run ID.cmd in the background.  The job is a forked copy
# of this shell, not a new bash: under TCG exec'ing bash costs ~0.1-0.3 s
# per command, a fork a few ms.  It starts from a clean slate (our
# options, traps, variables and functions other than lab_ifup removed) and
# has its own process group (set -m), so a kill reaches all of it.
# It keeps pipefail, as the host's tests run (set -euo pipefail), so a
# pipeline fails when any command in it fails; -e and -u are the
# command's to set.  A reader that stops early ("| grep -q", "| head")
# can then fail the pipeline with its writer's SIGPIPE: commands write
# "| grep PATTERN >/dev/null" instead (scripts/lab/README.md).
start_job() {
	local id="$1" __lab_job="$CTL/$1.cmd"
	(
		cd / || exit 1
		set -m
		(
			set +m +u -o pipefail
			trap - INT TERM HUP
			exec 8<&- 9<&-
			unset -f log stage die mnt start_job kill_job handle scan
			unset VM VIRTIO RNIC REPO SMP VIRTIO_IF CTL f arg line up pid rc id started
			unset req tmo RETRY
			PATH="$HOST_PATH"
			unset HOST_PATH
			# shellcheck disable=SC1090 # the host's command
			. "$__lab_job"
		) <>/dev/null >"$CTL/$id.out" 2>"$CTL/$id.err" &
		pid=$!
		echo "$pid" >"$CTL/$id.pid"
		wait "$pid"
		rc=$?
		# One write of a non-empty line: the host takes ID.rc once it
		# is not empty (no rename: every exec, busybox's mv included,
		# costs ~0.1 s of a debug guest's vCPU).
		echo "$rc" >"$CTL/$id.rc"
	) &
}

# kill_job ID: returns 1 while the job has not written its pid yet (the
# request stays pending and is retried on the next tick).
kill_job() {
	local id="$1" pid
	if [ ! -f "$CTL/$id.pid" ]; then
		# Not started yet, or never existed / already collected.
		if [ -f "$CTL/$id.cmd" ]; then
			return 1
		fi
		return 0
	fi
	read -r pid <"$CTL/$id.pid" || return 1
	log "agent: $id killed on request"
	kill -TERM -- "-$pid" 2>/dev/null
	# Whatever ignores SIGTERM gets SIGKILL a second later.
	(sleep 1 && kill -KILL -- "-$pid" 2>/dev/null) &
}

read -r up _ </proc/uptime
if ! echo "$up" >"$CTL/ready.tmp" || ! mv "$CTL/ready.tmp" "$CTL/ready"; then
	die "cannot write to the ctl share"
fi
log "ready after $up s of guest uptime (NICs: virtio=${VIRTIO_IF:-none}, wake-ups: ${WAKE:-polling})"

# handle NAME: the request in the share's file NAME (ID.cmd or ID.kill);
# sets RETRY if it must be retried (a kill of a job not started yet).
# Never call it as a condition (handle || ..., if handle): bash ignores
# set -e in everything a condition runs, the jobs it forks included, and
# every "set -e" in the host's commands would silently do nothing.
handle() {
	local f="$CTL/$1" id line
	case "$1" in
	j*.cmd)
		id="${1%.cmd}"
		# The file stays until the host collects the job: the agent
		# remembers what it started instead of renaming.
		[ -z "${started[$id]:-}" ] || return 0
		# The console takes ~0.3 ms a character in a debug guest: the
		# id and the start of the command (the whole command and its
		# status are in the host's vmN/commands.log).  A name that is
		# not (or no longer) there reads nothing.
		line=
		read -r -N 48 line <"$f" 2>/dev/null
		[ -n "$line" ] || return 0
		started[$id]=1
		log "agent: $id: ${line//$'\n'/ }"
		start_job "$id"
		;;
	j*.kill)
		[ -f "$f" ] || return 0
		if kill_job "${1%.kill}"; then
			rm -f "$f"
		else
			RETRY=1
		fi
		;;
	esac
	return 0
}

# scan: every request in the share; sets RETRY if one must be retried.
scan() {
	local f
	RETRY=
	for f in "$CTL"/*; do
		handle "${f##*/}"
	done
}

shopt -s nullglob
declare -A started=()
RETRY=
scan
while :; do
	# No explicit reaping: bash's SIGCHLD handler reaps every child,
	# including orphans re-parented to us as PID 1.
	if [ -z "$WAKE" ]; then
		read -r -t 0.1 -u 8 _ || true
		scan
		continue
	fi
	tmo=10
	[ -z "$RETRY" ] || tmo=1
	if read -r -t "$tmo" -u 9 req; then
		# An empty or unknown line: look at everything.
		case "$req" in
		j*.cmd | j*.kill) handle "$req" ;;
		*) scan ;;
		esac
	else
		# Also what is left of a line cut by the timeout.
		scan
	fi
done
