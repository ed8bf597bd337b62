#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rnic VM lab: a library that tests source, and a small CLI.
#
# A lab is a private network namespace holding one Linux bridge; every VM
# NIC is a tap on that bridge, so all lab traffic stays inside the
# namespace.  VMs run the stock Debian kernel under QEMU TCG with the host's
# / shared read-only over 9p (scripts/lab/initramfs.sh,
# scripts/lab/guest-init.sh); commands reach them through a per-VM 9p
# control directory.
#
# Library (source it from a bash script running as root):
#   lab_start [NAME]              namespace + bridge; logs in $RNIC_LAB_DIR/NAME
#   lab_vm N [--virtio] [--rnic] [--mem SIZE] [--rnicsim-arg ARG]...
#                                 [--qemu-arg ARG]... [--kver RELEASE]
#                                 boot VM N in the background (--kver:
#                                 another kernel than the lab's)
#   lab_wait_ready N [--timeout S]             wait for VM N's agent
#   lab_exec N [--timeout S] CMD...  run CMD (joined like ssh does) in VM N;
#                                 its stdout/stderr and exit status are ours
#   lab_bg N CMD...               start CMD in VM N, print a job id
#   lab_wait N JOB [--timeout S]  wait for a job: its output and status
#   lab_job_output N JOB          a job's stdout so far
#   lab_kill N JOB                kill a job's process group
#   lab_capture_start FILE / lab_capture_stop FILE   dumpcap on the bridge
#   lab_addr N virtio|rnic 4|6    a VM NIC's address (no prefix length)
#   lab_sim_ctl N CMD...          a command to VM N's rnicsim on its control
#                                 socket (link, fault, tx/rx/aq hold, pcap,
#                                 counters, fatal: rnicsim --help)
#   lab_pin N CPUS [SIM_CPUS]     VM N's vCPUs on host CPUS, its rnicsim on
#                                 SIM_CPUS (taskset lists)
#   lab_vcpus N                   the host thread ids of VM N's vCPUs
#   lab_cpus                      the host CPUs we may run on, one a line
#   lab_stop                      tear everything down (also run by the
#                                 EXIT/INT/TERM/HUP traps lab_start installs)
#   lab_leftovers [RUN]           list what a run left behind (status 1 if any)
#   lab_check_clean SUITE         after lab_stop: a TAP line for that
#   lab_plan CHECKS VMS           the TAP plan line: the test's own CHECKS,
#                                 plus the sweep's line per VM and the
#                                 cleanup line that lab_stop prints
#   lab_vm_gone N                 VM N was stopped on purpose (no "died")
#   lab_ok / lab_not_ok / lab_elapsed   TAP output and timing helpers
#
# lab_stop sweeps every VM before it stops it: a kmemleak scan (on a
# kernel with kmemleak) and the console searched for WARNING, BUG, Oops,
# KASAN, UBSAN, lockdep, hung-task, soft-lockup and refcount reports.  One
# TAP line per VM ("not ok" on any finding, a VM that died or stopped
# answering), then lab_check_clean's line.  kmemleak's objects fail it
# when rnic code allocated them; the rest are noted in the ok line,
# unless the test set LAB_KMEMLEAK_ALL=1 (its checks drive ib_core for
# rnic, where a leak of ib_core's is one rnic's behaviour can cause).
#
# CLI: scripts/lab/lab.sh help
#
# Environment: RNIC_LAB_DIR (default /tmp/rnic-lab), RNIC_LAB_QEMU,
# RNIC_LAB_KVER (the kernel release the VMs boot: default the Debian lab
# kernel in $RNIC_CACHE/kver; the debug kernel's is in
# $RNIC_CACHE/debug-kver), RNIC_LAB_KERNEL (its image), RNIC_LAB_RNICSIM, RNIC_LAB_BOOT_TIMEOUT (s, default 240),
# RNIC_LAB_SHM_SIZE (rnicsim BAR2 size, default 1 MiB), RNIC_LAB_CPU (QEMU's
# -cpu; default lab__cpu's choice), RNIC_LAB_RNICSIM_ARGS (extra rnicsim options for
# every VM, e.g. --fault drop=1%), RNIC_LAB_APPEND
# (extra kernel command line), RNIC_LAB_RNICSIM_NICE (rnicsim's nice
# value, default -10; 0 runs it as an equal of the vCPUs), RNIC_LAB_PROFILE
# (samples a second: every VM's vCPUs sampled through QEMU's gdbstub by
# guest-profile.py, named in vmN/profile.txt at lab_stop).

LAB_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LAB_REPO="$(cd "$LAB_SRC/../.." && pwd)"
: "${RNIC_LAB_DIR:=/tmp/rnic-lab}"
: "${RNIC_CACHE:=/var/cache/rnic}"
LAB_QEMU="${RNIC_LAB_QEMU:-qemu-system-x86_64}"
LAB_RNICSIM="${RNIC_LAB_RNICSIM:-$LAB_REPO/tools/rnicsim/build/rnicsim}"
LAB_BOOT_TIMEOUT="${RNIC_LAB_BOOT_TIMEOUT:-240}"
LAB_EXEC_TIMEOUT="${RNIC_LAB_EXEC_TIMEOUT:-120}"
LAB_SHM_SIZE="${RNIC_LAB_SHM_SIZE:-1048576}"
# The NIC is hardware beside the host's CPUs, not a peer of the guests'
# vCPUs: under TCG those are busy all the time (a spinning perftest, a
# guest's own work), and a model woken for a doorbell or a frame then
# waited out a vCPU's time slice before it ran (perftest ib_write_lat's
# p99 1.1-1.8 ms at nice 0, 0.86-1.4 ms at -10, average 99-124 us vs
# 56-75 us, same pair).  It only gets to run sooner: it sleeps in
# epoll_wait when it has nothing to do.  The price is paid in message
# rate: perftest ib_send_bw 64 B 23.4k msg/s at -10 vs 40.4k at 0
# (bench.sh, 2026-11-29), a preemption per doorbell.
LAB_RNICSIM_NICE="${RNIC_LAB_RNICSIM_NICE:--10}"
LAB_VECTORS=8
LAB_BRIDGE=br0

LAB_NAME=""
LAB_DIR=""
LAB_NS=""
LAB_RUN=""
LAB_KERNEL=""
LAB_INITRD=""
LAB_TSC_KHZ=""
LAB_T0=""

# ---------------------------------------------------------------- helpers

# One line per failure, always naming what failed and where to look.
lab__err() { echo "lab: $*" >&2; }
lab__info() { echo "# lab: $*" >&2; }

# Microseconds since the epoch, without forking.
lab__now_us() { local t="${EPOCHREALTIME/./}"; echo "$t"; }
# Seconds with one decimal since a lab__now_us timestamp.
lab_elapsed() {
	local d=$(($(lab__now_us) - $1))
	printf '%d.%d' $((d / 1000000)) $((d % 1000000 / 100000))
}

# lab__acct KIND START_US: add the time since START_US to KIND (boot,
# check, stop) in this lab's time accounting, which lab_stop sums up in
# its "time:" line and scripts/test.sh tabulates per test.
lab__acct() {
	[ -n "$LAB_DIR" ] && [ -d "$LAB_DIR" ] || return 0
	echo "$1 $(($(lab__now_us) - $2))" >>"$LAB_DIR/acct"
}

# lab__acct_cpu: add the CPU time (user + system) that this lab's
# processes alive now (QEMU, rnicsim, dumpcap: everything in its
# namespace) have used, as "cpu" in the accounting: scripts/test.sh's
# breakdown shows how many host cores each test keeps busy.  (A VM a
# test stopped on purpose before lab_stop is not counted.)
lab__acct_cpu() {
	[ -n "$LAB_DIR" ] && [ -d "$LAB_DIR" ] && [ -n "$LAB_NS" ] || return 0
	local pid ticks=0 f
	for pid in $(ip netns pids "$LAB_NS" 2>/dev/null); do
		lab__proc_stat "$pid" f || continue
		ticks=$((ticks + f[11] + f[12]))
	done
	echo "cpu $((ticks * 1000000 / $(getconf CLK_TCK)))" >>"$LAB_DIR/acct"
}

# lab__timed KIND CMD...: run CMD, its time counted as KIND; its status.
lab__timed() {
	local kind="$1" t0 rc=0
	shift
	t0="$(lab__now_us)"
	"$@" || rc=$?
	lab__acct "$kind" "$t0"
	return "$rc"
}

lab_ok() { echo "ok - lab: $*"; }
# lab_not_ok WHAT LOG
lab_not_ok() { echo "not ok - lab: $1 (see $2)"; }

lab__need_root() {
	if [ "$(id -u)" != 0 ]; then
		lab__err "start: must run as root (network namespaces, taps)"
		return 1
	fi
}

lab__need_started() {
	if [ -z "$LAB_DIR" ] || [ ! -f "$LAB_DIR/lab.env" ]; then
		lab__err "$1: no lab running (call lab_start first)"
		return 1
	fi
}

# The VM's directory, checking that the VM exists.
lab__vmdir() {
	local n="$1"
	if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 99 ]; then
		lab__err "bad VM number '$n' (1..99)"
		return 1
	fi
	echo "$LAB_DIR/vm$n"
}

# lab__proc_stat PID ARRAY: the fields of /proc/PID/stat after the ")"
# that ends comm, into ARRAY ([0] the state, [11] and [12] utime and
# stime); fails if PID is gone.
lab__proc_stat() {
	local -n lab__ps_f="$2"
	local line
	read -r line <"/proc/$1/stat" 2>/dev/null || return 1
	# shellcheck disable=SC2034 # a nameref: the caller's array
	read -r -a lab__ps_f <<<"${line##*) }"
}

# A zombie counts as dead: when a signal ends a test's whole process group,
# its QEMUs exit before the test's shell reaps them, and a lab_wait in the
# shell's lab_stop waited out its full timeout on them.
lab__pid_alive() {
	local st
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null && lab__proc_stat "$1" st &&
		[ "${st[0]}" != Z ]
}

lab__qemu_alive() {
	local pid
	pid="$(cat "$LAB_DIR/vm$1/qemu.pid" 2>/dev/null)" || return 1
	lab__pid_alive "$pid"
}

# Record a process we started, so lab_stop can end it.
lab__track() { echo "$1 $2" >>"$LAB_DIR/pids"; }

# Not for background processes: "lab__ns cmd &" would make $! a subshell's
# pid; "ip netns exec NS cmd &" gives the command's own (ip execs it).
lab__ns() { ip netns exec "$LAB_NS" "$@"; }

# A host with br_netfilter loaded (Docker loads it) starts every new
# namespace with bridge-nf-call-{arp,ip,ip6}tables=1: each frame the lab
# bridge forwards then goes through the IP hooks, for nothing, since the
# namespace has no rules.  Measured: 64 KiB RDMA WRITE +25% for rnic, +35%
# for rxe over virtio-net with the hooks off.  The bridge is a wire, so
# turn them off; without br_netfilter the keys do not exist and there is
# nothing to do.
lab__bridge_nf_off() {
	local t
	for t in arptables iptables ip6tables; do
		lab__ns test -e "/proc/sys/net/bridge/bridge-nf-call-$t" || continue
		lab__ns sysctl -qw "net.bridge.bridge-nf-call-$t=0" || return 1
	done
}

# Size like 512M/1G/2048M to bytes.
lab__bytes() {
	local s="$1" n unit
	n="${s%[KkMmGg]}"
	unit="${s#"$n"}"
	[[ "$n" =~ ^[0-9]+$ ]] || return 1
	case "$unit" in
	"") echo "$n" ;;
	[Kk]) echo $((n << 10)) ;;
	[Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;;
	esac
}

# lab_addr N virtio|rnic 4|6: the address lab_vm gives that NIC.
# virtio-net NICs are 10.10.0.N / fd00:10::N, rnic NICs 10.20.0.N /
# fd00:20::N: private ranges that exist only on the lab's bridge.
lab_addr() {
	local n="$1" nic="$2" v="$3" net
	case "$nic" in
	virtio) net=10 ;;
	rnic) net=20 ;;
	*)
		lab__err "lab_addr: NIC must be virtio or rnic, not '$nic'"
		return 1
		;;
	esac
	if [ "$v" = 4 ]; then echo "10.$net.0.$n"; else echo "fd00:$net::$n"; fi
}

# The kernel release the lab's VMs boot (RNIC_LAB_KVER, or the Debian lab
# kernel); modules for it are under /lib/modules/RELEASE on the host's /.
lab_kver() {
	if [ -n "${RNIC_LAB_KVER:-}" ]; then
		echo "$RNIC_LAB_KVER"
	else
		cat "$RNIC_CACHE/kver"
	fi
}

lab__mac() { printf '52:54:00:%s:00:%02x' "$([ "$2" = virtio ] && echo 10 || echo 20)" "$1"; }

# ---------------------------------------------------------------- start/stop

# lab_start [NAME]: check dependencies, build/find the initramfs, create
# the namespace and the bridge, install the cleanup traps.
lab_start() {
	local name="${1:-lab}" kver
	LAB_T0="$(lab__now_us)"
	lab__need_root || return 1
	if ! [[ "$name" =~ ^[A-Za-z0-9_-]{1,40}$ ]]; then
		lab__err "start: bad lab name '$name' (letters, digits, _ and -)"
		return 1
	fi
	if [ -n "$LAB_DIR" ] && [ -f "$LAB_DIR/lab.env" ]; then
		lab__err "start: lab $LAB_NAME is already running in this shell (lab_stop first)"
		return 1
	fi
	# Two live runs of one name would share (and wipe) one log directory.
	local owner
	owner="$(sed -n 's/^LAB_OWNER=//p' "$RNIC_LAB_DIR/$name/lab.env" 2>/dev/null)" || true
	if [ -n "$owner" ] && [ "$owner" != $$ ] && lab__pid_alive "$owner"; then
		lab__err "start: a lab named $name is already running (pid $owner); stop it (scripts/lab/lab.sh down $name) or set RNIC_LAB_DIR"
		return 1
	fi
	# Absolute: QEMU, rnicsim and dumpcap get paths under it.
	if ! mkdir -p "$RNIC_LAB_DIR" || ! RNIC_LAB_DIR="$(cd "$RNIC_LAB_DIR" && pwd)"; then
		lab__err "start: cannot create RNIC_LAB_DIR=$RNIC_LAB_DIR"
		return 1
	fi
	LAB_NAME="$name"
	LAB_DIR="$RNIC_LAB_DIR/$name"
	# Unique per run: names of the namespace and the /dev/shm files.
	LAB_RUN="$name-$$"
	LAB_NS="rnic-lab-$LAB_RUN"

	# Dependencies first, each with the one line that says what to do.
	local dep
	for dep in ip "$LAB_QEMU" dumpcap flock; do
		if ! command -v "$dep" >/dev/null; then
			lab__err "start: missing dependency: $dep (run scripts/install-deps.sh)"
			return 1
		fi
	done
	if [ ! -r "$RNIC_CACHE/kver" ]; then
		lab__err "start: missing dependency: $RNIC_CACHE/kver, the lab kernel version (run scripts/install-deps.sh)"
		return 1
	fi
	kver="$(lab_kver)"
	# A distribution kernel in /boot, or the debug kernel's build tree
	# (scripts/debug-kernel.sh links it as /lib/modules/KVER/build).
	LAB_KERNEL="${RNIC_LAB_KERNEL:-/boot/vmlinuz-$kver}"
	if [ -z "${RNIC_LAB_KERNEL:-}" ] && [ ! -r "$LAB_KERNEL" ] &&
		[ -r "/lib/modules/$kver/build/vmlinux" ]; then
		LAB_KERNEL="/lib/modules/$kver/build/vmlinux"
	fi
	if [ ! -r "$LAB_KERNEL" ]; then
		lab__err "start: missing dependency: kernel $LAB_KERNEL (linux-image-$kver; run scripts/install-deps.sh, or scripts/debug-kernel.sh for the debug kernel)"
		return 1
	fi

	# A previous run of the same name that died without cleaning up.
	if [ -f "$LAB_DIR/lab.env" ]; then
		lab__cleanup_dir "$LAB_DIR" || true
	fi
	rm -rf "$LAB_DIR"
	mkdir -p "$LAB_DIR"
	: >"$LAB_DIR/pids"

	# The uncompressed vmlinux when possible (PVH boot, see kernel.sh).
	if ! LAB_KERNEL="$("$LAB_SRC/kernel.sh" "$LAB_KERNEL" 2>"$LAB_DIR/kernel.log")"; then
		lab__err "start: kernel preparation failed: $(tail -1 "$LAB_DIR/kernel.log") (see $LAB_DIR/kernel.log)"
		return 1
	fi
	if ! LAB_INITRD="$("$LAB_SRC/initramfs.sh" --kver "$kver" 2>"$LAB_DIR/initramfs.log")"; then
		lab__err "start: initramfs build failed: $(tail -1 "$LAB_DIR/initramfs.log") (see $LAB_DIR/initramfs.log)"
		return 1
	fi

	LAB_TSC_KHZ="$(lab__tsc_khz)"

	# State on disk: lab_stop, the CLI and a later cleanup can find
	# everything from it even if this shell is gone.
	cat >"$LAB_DIR/lab.env" <<-EOF
		LAB_NAME=$LAB_NAME
		LAB_RUN=$LAB_RUN
		LAB_NS=$LAB_NS
		LAB_OWNER=$$
		LAB_KERNEL=$LAB_KERNEL
		LAB_KVER=$kver
		LAB_INITRD=$LAB_INITRD
	EOF
	trap 'lab__on_exit' EXIT
	trap 'lab__on_signal INT 130' INT
	trap 'lab__on_signal TERM 143' TERM
	trap 'lab__on_signal HUP 129' HUP

	if ! {
		ip netns add "$LAB_NS" &&
			ip -n "$LAB_NS" link set lo up &&
			ip -n "$LAB_NS" link add "$LAB_BRIDGE" type bridge stp_state 0 \
				forward_delay 0 mcast_snooping 0 &&
			# The bridge is only a wire: no host addresses on it, so a
			# capture holds the VMs' frames and nothing else.
			lab__ns sysctl -qw "net.ipv6.conf.$LAB_BRIDGE.disable_ipv6=1" &&
			lab__bridge_nf_off &&
			ip -n "$LAB_NS" link set "$LAB_BRIDGE" up
	} >"$LAB_DIR/netns.log" 2>&1; then
		lab__err "start: creating namespace $LAB_NS failed: $(tail -1 "$LAB_DIR/netns.log") (see $LAB_DIR/netns.log)"
		lab_stop
		return 1
	fi
	lab__info "started $LAB_NS, logs in $LAB_DIR"
}

# The host's TSC frequency in kHz, for the guests' tsc_early_khz=.  Under
# TCG the guest's TSC is the host's, but the guest kernel calibrates it
# against the emulated PIT, which goes badly wrong when the host is busy
# (seen here: 82 MHz instead of 2445 MHz).  Its clock then runs many
# times too fast until the clocksource watchdog gives up on the TSC, and
# guest timeouts misfire; and the later, sound calibration against the
# HPET is thrown away when it differs from the first by over 1%.  Told the
# frequency, the guest skips the PIT calibration and the HPET refinement
# still corrects it.  RNIC_LAB_TSC_KHZ overrides (0: let the guest guess).
lab__tsc_khz() {
	local mhz=""
	if [ -n "${RNIC_LAB_TSC_KHZ:-}" ]; then
		[ "$RNIC_LAB_TSC_KHZ" != 0 ] && echo "$RNIC_LAB_TSC_KHZ"
		return 0
	fi
	# The host kernel's own (refined) calibration is the best source;
	# /proc/cpuinfo's "cpu MHz" is the TSC rate in VMs like this one.
	mhz="$(dmesg 2>/dev/null | sed -n 's/.*Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -1)"
	[ -n "$mhz" ] || mhz="$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -1)"
	if [ -z "$mhz" ] && grep -qw constant_tsc /proc/cpuinfo; then
		mhz="$(awk -F': *' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)"
	fi
	[ -n "$mhz" ] && awk -v m="$mhz" 'BEGIN { printf "%d\n", m * 1000 }'
	return 0
}

# Traps: clean up on any exit (set -e failures included) and on signals.
lab__on_exit() {
	local rc=$?
	lab_stop
	return "$rc"
}
lab__on_signal() {
	trap - EXIT INT TERM HUP
	lab__err "interrupted by SIG$1, cleaning up"
	lab_stop --signal
	exit "$2"
}

# End every process of a lab and remove its namespace (with the bridge
# and taps in it), /dev/shm files and sockets.  Works from the state files
# alone, so it also cleans up after a run whose shell was killed.
lab__cleanup_dir() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	local dir="$1" pid label i ns run
	ns="$(sed -n 's/^LAB_NS=//p' "$dir/lab.env" 2>/dev/null)"
	run="$(sed -n 's/^LAB_RUN=//p' "$dir/lab.env" 2>/dev/null)"
	if [ -n "$ns" ] && [ -e "/run/netns/$ns" ]; then
		# Every process we start (QEMU, rnicsim, dumpcap) runs inside our
		# namespace, so the namespace is the authoritative list: no risk
		# of killing a stranger that reused a pid from the pids file of a
		# run that died long ago.  Polite first: QEMU and rnicsim exit
		# cleanly on SIGTERM, dumpcap also flushes its file.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -TERM "$pid" 2>/dev/null
		done
		for i in $(seq 30); do
			[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
			sleep 0.1
		done
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			label="$(awk -v p="$pid" '$1 == p { $1 = ""; print substr($0, 2) }' "$dir/pids" 2>/dev/null)"
			echo "lab: ${label:-process} (pid $pid) ignored SIGTERM, killing" >&2
			kill -KILL "$pid" 2>/dev/null
		done
		for i in $(seq 30); do
			[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
			sleep 0.1
		done
		# Deleting the namespace would take the bridge and taps with it;
		# deleting them first makes sure, and reports nothing when gone.
		ip -n "$ns" link del "$LAB_BRIDGE" 2>/dev/null
		for i in $(ip -n "$ns" -o link show type tun 2>/dev/null | awk -F': ' '{print $2}'); do
			ip -n "$ns" link del "${i%@*}" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null ||
			echo "lab: cleanup: could not delete namespace $ns" >&2
	fi
	# Our children reaped, so no zombie counts as alive for the caller.
	if [ -f "$dir/pids" ]; then
		while read -r pid label; do
			wait "$pid" 2>/dev/null
		done <"$dir/pids"
	fi
	if [ -n "$run" ]; then
		rm -f "/dev/shm/rnic-lab-$run-"*
	fi
	find "$dir" -type s -delete 2>/dev/null
	rm -f "$dir/lab.env"
	: >"$dir/pids" 2>/dev/null
	return 0
}

# lab__time_line: where this lab's wall time went, as one line that
# scripts/test.sh reads: booting VMs (lab_vm, lab_wait_ready), in checks
# (lib_check.sh's check, boots excluded), stopping (console and kmemleak
# sweeps, cleanup), and the rest (set-up between checks: modprobe, servers,
# counters, captures); and the host CPU time its processes used (cpu).
lab__time_line() {
	awk -v wall="$(($(lab__now_us) - LAB_T0))" '
		{ t[$1] += $2 }
		END {
			other = wall - t["boot"] - t["check"] - t["stop"]
			printf "time: wall=%.1f boot=%.1f check=%.1f stop=%.1f other=%.1f cpu=%.1f\n",
				wall / 1e6, t["boot"] / 1e6, t["check"] / 1e6,
				t["stop"] / 1e6, (other < 0 ? 0 : other) / 1e6, t["cpu"] / 1e6
		}' "$LAB_DIR/acct" 2>/dev/null | sed 's/^/# lab: /' >&2
}

# lab_stop [--signal]: sweep every VM (unless interrupted by a signal:
# then only the consoles), stop everything, and print the cleanup line.
lab_stop() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	[ -n "$LAB_DIR" ] && [ -f "$LAB_DIR/lab.env" ] || return 0
	local n=0 d t0
	t0="$(lab__now_us)"
	# The kmemleak scans (~10 s each under TCG) run in every VM at once.
	if [ "${1:-}" != --signal ]; then
		for d in "$LAB_DIR"/vm*; do
			[ -f "$d/qemu.pid" ] && lab__qemu_alive "${d##*/vm}" && [ -f "$d/ctl/ready" ] &&
				lab_bg "${d##*/vm}" "$LAB_KMEMLEAK_SCAN" >"$d/kmemleak.job"
		done
	fi
	for d in "$LAB_DIR"/vm*; do
		[ -f "$d/qemu.pid" ] && lab__sweep "${d##*/vm}" "${1:-}"
	done
	[ -f "$LAB_DIR/pids" ] && n="$(wc -l <"$LAB_DIR/pids")"
	lab__acct_cpu
	lab__cleanup_dir "$LAB_DIR"
	lab__profile_report
	lab__info "stopped $LAB_NS ($n processes, namespace, shm files removed) after $(lab_elapsed "$LAB_T0") s"
	lab__acct stop "$t0"
	lab__time_line
	trap - EXIT INT TERM HUP
	[ "${1:-}" = --signal ] || lab_check_clean "${SUITE:-$LAB_NAME}"
	return 0
}

# lab__profile_report: with RNIC_LAB_PROFILE set, each VM's samples named
# from its kernel's System.map in vmN/profile.txt (scripts/lab/README.md).
lab__profile_report() {
	[ -n "${RNIC_LAB_PROFILE:-}" ] || return 0
	local d k map
	for d in "$LAB_DIR"/vm*; do
		[ -s "$d/profile.samples" ] || continue
		k="$(cat "$d/profile.kver")"
		map="/lib/modules/$k/System.map"
		[ -r "$map" ] || map="/boot/System.map-$k"
		python3 "$LAB_SRC/guest-profile.py" report "$map" "$d/profile.samples" \
			>"$d/profile.txt" 2>&1
		lab__info "vm${d##*/vm}: guest profile $d/profile.txt"
	done
}

# What the kernel prints when something is wrong.  Matched on the serial
# console, which gets every message up to KERN_INFO.
LAB_SWEEP_RE='WARNING:|BUG:|Oops|KASAN|UBSAN|kernel BUG|general protection fault'
LAB_SWEEP_RE+='|possible circular locking|inconsistent lock state|possible recursive locking'
LAB_SWEEP_RE+='|lock inversion|suspicious RCU usage|sleeping function called from invalid context'
LAB_SWEEP_RE+='|blocked for more than|soft lockup|hard LOCKUP|rcu_sched self-detected stall|rcu: INFO'
LAB_SWEEP_RE+='|refcount_t:|new suspected memory leaks|Kernel panic|list_add corruption|list_del corruption'
LAB_SWEEP_RE+='|ODEBUG:|KFENCE:'

# Reports of kernel code that is not ours, seen in the lab, that the sweep
# names instead of failing on. One per line: NAME|LOCK A|LOCK B, a lockdep
# "possible circular locking dependency" or "possible recursive locking"
# report that names both lock classes and none of whose frames is in
# rnic, rnic_perf or rnic_kunit.
#
# nvmet-config-sem: nvmet-rdma handles a connect that arrived before the
# CM's ESTABLISHED event from its rdma_cm handler (handler_mutex, then
# nvmet_config_sem to find the subsystem), and removing a port's
# subsystem link destroys the listener's cm_id under nvmet_config_sem.
# The two mutexes are different ids of one lockdep class (listener, queue);
# the listener's handler never takes nvmet_config_sem. Any RDMA device
# shows it: the data can overtake the CM's RTU under TCG.
#
# rds-trans-sem: RDS checks that an address is an RDMA one by creating
# and destroying a private cm_id (rds_ib_laddr_check: rdma_destroy_id
# takes its handler_mutex) under rds_trans_sem (read), at bind and, on the
# passive side of a connection, from rdma_cm's connect-request handler,
# which holds the listener's handler_mutex: a "possible recursive locking"
# report (one class, two cm_ids, one of them private), or a "circular"
# one if a bind came first. No frame is a driver's; any RDMA device shows
# it on the passive side (test_rnic_rds, Debian's 6.12 RDS).
LAB_KNOWN_REPORTS='nvmet-config-sem|nvmet_config_sem|&id_priv->handler_mutex
rds-trans-sem|rds_trans_sem|&id_priv->handler_mutex'

# Kernel WARNINGs of code that is not ours, named instead of failed: one
# per line, NAME|FUNCTION|CALLER, a "WARNING: ... at FILE:LINE
# FUNCTION+0x..." report (cut here to end trace) whose call trace has
# CALLER and none of whose frames is in rnic, rnic_perf or rnic_kunit.
#
# srpt-srq-cache: 6.12's ib_srpt keeps no receive buffer cache per
# channel when it receives on its SRQ (the tpg's use_srq), yet releasing
# such a channel puts the cache it never got: srpt_cache_put(NULL) finds
# no entry and warns (ib_srpt.c, srpt_release_channel_work). Any RDMA
# device shows it at the first logout in SRQ mode (test_rnic_storage).
LAB_KNOWN_WARNINGS='srpt-srq-cache|srpt_cache_put|srpt_release_channel_work'

# lab__known_reports CONSOLE: the console without the blocks of the known
# reports and warnings above (on stdout); the names of those found on fd 3.
lab__known_reports() {
	awk -v known="$LAB_KNOWN_REPORTS" -v warns="$LAB_KNOWN_WARNINGS" '
	function flush(   i, k, f, mine) {
		if (!nb)
			return
		mine = 0
		for (i = 1; i <= nb; i++)
			if (blk[i] ~ /\[rnic[a-z_]*\]| rnic_[a-z0-9_]+\+0x/)
				mine = 1
		if (!mine && kind == "lockdep")
			for (k in names) {
				split(names[k], f, "|")
				if (index(text, "(" f[2] ")") && index(text, "(" f[3] ")")) {
					print f[1] > "/dev/fd/3"
					nb = 0
					return
				}
			}
		if (!mine && kind == "warn")
			for (k in wnames) {
				split(wnames[k], f, "|")
				if (text ~ ("WARNING: [^\n]* at [^ \n]+ " f[2] "\\+0x") &&
				    text ~ ("\n[^\n]* " f[3] "\\+0x")) {
					print f[1] > "/dev/fd/3"
					nb = 0
					return
				}
			}
		for (i = 1; i <= nb; i++)
			print blk[i]
		nb = 0
	}
	BEGIN { split(known, names, "\n"); split(warns, wnames, "\n") }
	/possible circular locking dependency detected|possible recursive locking detected/ {
		flush(); inblk = 1; kind = "lockdep"; text = "" }
	/-+\[ cut here \]-+/ { flush(); inblk = 1; kind = "warn"; text = "" }
	inblk { blk[++nb] = $0; text = text "\n" $0
		if ((kind == "lockdep" && $0 ~ /<\/TASK>/) ||
		    (kind == "warn" && $0 ~ /---\[ end trace/)) { inblk = 0; flush() }
		next }
	{ print }
	END { flush() }' "$1"
}

# kmemleak reports objects unreferenced for 5 s, found by the second of
# two scans.
LAB_KMEMLEAK_SCAN='k=/sys/kernel/debug/kmemleak
	[ -w $k ] || { echo "kmemleak: not in this kernel"; exit 0; }
	echo scan > $k; sleep 1; echo scan > $k; cat $k'

# lab_vm_gone N: VM N was powered off or crashed on purpose.
lab_vm_gone() { : >"$LAB_DIR/vm$1/gone"; }

# lab__sweep N [--signal]: one TAP line for VM N's kernel.
lab__sweep() {
	local n="$1" d="$LAB_DIR/vm$1" what hit leaks others found=() scanned=0
	local suite="${SUITE:-$LAB_NAME}" notes=""
	what="$suite: vm$n: kernel log clean (no WARNING/BUG/Oops/KASAN/UBSAN/KFENCE/lockdep/hung task/soft lockup/refcount/kmemleak report)"
	if [ -s "$d/kmemleak.job" ]; then
		if ! lab_wait "$n" "$(cat "$d/kmemleak.job")" --timeout 300 \
			>"$d/kmemleak.txt" 2>&1; then
			found+=("the VM does not answer at the end of the test (hung or died)")
		fi
		# Only leaks with rnic code (or a module's bare address: rnic
		# after rmmod; modules live at 0xffffffffa0000000 and up, the
		# kernel's text below) on the allocating stack are rnic's.
		leaks="$(awk '/^unreferenced object/ { n += mine; bt = 0; mine = 0 }
			/^  backtrace/ { bt = 1; next }
			bt && /(\[rnic[a-z_]*\]|^ +0xffffffff[a-f][0-9a-f]+$)/ { mine = 1 }
			END { print n + mine }' "$d/kmemleak.txt")"
		[ "$leaks" = 0 ] ||
			found+=("kmemleak: $leaks unreferenced objects allocated by rnic (see $d/kmemleak.txt)")
		others="$(grep -c '^unreferenced object' "$d/kmemleak.txt")"
		if [ "$others" != "$leaks" ] && [ "${LAB_KMEMLEAK_ALL:-0}" = 1 ]; then
			found+=("kmemleak: $((others - leaks)) unreferenced objects not allocated by rnic, in a test that counts them all (LAB_KMEMLEAK_ALL; see $d/kmemleak.txt)")
		elif [ "$others" != "$leaks" ]; then
			echo "# $suite: vm$n: kmemleak: $((others - leaks)) unreferenced objects not allocated by rnic (see $d/kmemleak.txt)"
			notes="kmemleak: $((others - leaks)) objects not allocated by rnic, see $d/kmemleak.txt"
		fi
		scanned=1
	elif [ "${2:-}" != --signal ] && [ ! -e "$d/gone" ]; then
		if lab__qemu_alive "$n"; then
			found+=("the VM never became ready (at $(lab__boot_stage "$d/console.log"))")
		else
			found+=("the VM died during the test (at $(lab__boot_stage "$d/console.log"))")
		fi
	fi
	# Not the agent's own lines: they echo the commands a test runs,
	# which may well contain "BUG:" in a grep pattern.
	# The kernel prints "N new suspected memory leaks" after any scan
	# that found some, the sweep's own included: those objects are
	# judged above, by whose code allocated them, not by that line.
	hit="$(grep -av '^rnic-lab: ' "$d/console.log" 2>/dev/null |
		tr -d '\r' >"$d/console.sweep"
		lab__known_reports "$d/console.sweep" 3>"$d/known-reports" |
		if [ "$scanned" = 1 ]; then
			grep -av -E 'kmemleak: [0-9]+ new suspected memory leaks' || true
		else
			cat
		fi | grep -a -m1 -E "$LAB_SWEEP_RE")"
	[ -z "$hit" ] || found+=("console: ${hit:0:160}")
	# The NIC's kick rings (rnic VMs): entries the device read only at
	# its watch, because no kick announced them, are a lost kick: a
	# writer that skipped its kick without ordering kick_pi before its
	# read of kick_ci (hardware-rdma.rst). The model serves them a
	# second late and counts them; any is a failure.
	local stalls
	if [ -S "$d/rnicsim.ctl" ] && [ "${2:-}" != --signal ]; then
		what="$what, NIC kick rings never stalled"
		stalls="$(lab_sim_ctr "$n" rdma_kick_stalls 2>/dev/null)"
		[ "${stalls:-0}" = 0 ] ||
			found+=("rnicsim: $stalls kick-ring stalls (entries no kick announced, read by the device's watch: a lost kick)")
	fi
	if [ ${#found[@]} = 0 ]; then
		if [ -s "$d/known-reports" ]; then
			# Lockdep stops at its first report: say so.
			local lockdep=""
			cut -d'|' -f1 <<<"$LAB_KNOWN_REPORTS" | grep -qxF -f - "$d/known-reports" &&
				lockdep=", lockdep off after it"
			notes="${notes:+$notes; }known non-rnic report $(sort -u "$d/known-reports" | paste -sd, -)$lockdep; see $d/console.log"
		fi
		lab_ok "$what${notes:+ (but: $notes)}"
		return 0
	fi
	local IFS=';' ln
	lab_not_ok "$what: ${found[*]}" "$d/console.log"
	# The report itself, so that a CI log shows what the console said
	# (the console file stays on the machine that ran the test).
	if [ -n "$hit" ]; then
		ln="$(grep -a -n -m1 -F -- "$hit" "$d/console.sweep" | cut -d: -f1)"
		[ -z "$ln" ] || sed -n "$((ln > 3 ? ln - 3 : 1)),$((ln + 40))p" "$d/console.sweep" |
			sed "s/^/# vm$n console: /"
	fi
	return 1
}

# lab_plan CHECKS VMS: the TAP plan of a test with CHECKS checks of its
# own and VMS VMs (lab_stop adds a line per VM and the cleanup line).
lab_plan() { echo "1..$(($1 + $2 + 1))"; }

# ---------------------------------------------------------------- VMs

# lab__cpu IMAGE: QEMU's -cpu for a guest booting IMAGE.  QEMU 7.2's TCG
# computes CMPXCHG16B's flags from a stale lazy-flags state and can set TF,
# VM and AC in RFLAGS; the next interrupt's IRET loads them and the guest
# dies of a double fault (twice in CI: Debian's 6.12 under rdma_rxe, in
# SLUB's fast path; scripts/lab/README.md).  A kernel is given the
# instruction only when scripts/lab/cx16-safe.py shows that none of its
# CMPXCHG16Bs can be reached that way (our debug kernel, built with
# symbols); others (Debian's, without symbols) get qemu64 without cx16 and
# take the kernel's emulation (pushf/cli/popf, helpers under TCG; the one
# suite run with it in every guest went over the lab stage's limit, with
# other load on the host too, so its cost is not measured apart).  The
# verdict is cached per image.
lab__cpu() {
	local img="$1" key verdict
	if [ -n "${RNIC_LAB_CPU:-}" ]; then
		echo "$RNIC_LAB_CPU"
		return 0
	fi
	key="$(stat -c '%n %s %Y' "$(readlink -f "$img")" | md5sum | cut -c1-16)"
	verdict="$RNIC_CACHE/cx16-$key"
	if [ ! -f "$verdict" ]; then
		(
			flock 9
			[ -f "$verdict" ] && exit 0
			python3 "$LAB_SRC/cx16-safe.py" "$img" >"$verdict.tmp" 2>&1
			echo "rc=$?" >>"$verdict.tmp"
			mv "$verdict.tmp" "$verdict"
		) 9>"$RNIC_CACHE/cx16.lock"
	fi
	if grep -qx 'rc=0' "$verdict" 2>/dev/null; then
		echo qemu64
	else
		echo qemu64,-cx16
	fi
}

# lab__vm_kernel N RELEASE: the image and initramfs VM N boots for
# lab_vm --kver, found as lab_start finds the lab's own; sets the caller's
# kernel and initrd.
lab__vm_kernel() {
	local n="$1" kver="$2" d="$LAB_DIR/vm$1" img="/boot/vmlinuz-$2"
	[ -r "$img" ] || [ ! -r "/lib/modules/$kver/build/vmlinux" ] ||
		img="/lib/modules/$kver/build/vmlinux"
	if [ ! -r "$img" ]; then
		lab__err "vm$n: missing dependency: kernel $img (linux-image-$kver; run scripts/install-deps.sh)"
		return 1
	fi
	if ! kernel="$("$LAB_SRC/kernel.sh" "$img" 2>"$d/kernel.log")"; then
		lab__err "vm$n: kernel preparation failed: $(tail -1 "$d/kernel.log") (see $d/kernel.log)"
		return 1
	fi
	if ! initrd="$("$LAB_SRC/initramfs.sh" --kver "$kver" 2>"$d/initramfs.log")"; then
		lab__err "vm$n: initramfs build failed: $(tail -1 "$d/initramfs.log") (see $d/initramfs.log)"
		return 1
	fi
}

# lab_vm N [--virtio] [--rnic] [--mem SIZE] [--smp VCPUS] [--kver RELEASE]:
# boot VM N in the background. --smp 2 runs the guest on two vCPUs (MTTCG:
# one host thread each), so that its completion handlers, posts and
# teardown run on two CPUs at once; the default is one. The guest boots
# on one and brings the others online before its agent starts; it stops
# with an error unless every vCPU is online. Its time counts as boot time.
lab_vm() { lab__timed boot lab__vm "$@"; }

lab__vm() {
	lab__need_started lab_vm || return 1
	local n="$1" d virtio=0 rnic=0 mem=512M smp=1 bytes simargs=() qargs=()
	# RNIC_LAB_RNICSIM_ARGS: for every rnicsim, before --rnicsim-arg's.
	# shellcheck disable=SC2206 # a list of words
	simargs=(${RNIC_LAB_RNICSIM_ARGS:-})
	local kver="" kernel="$LAB_KERNEL" initrd="$LAB_INITRD"
	d="$(lab__vmdir "$n")" || return 1
	shift
	while [ $# -gt 0 ]; do
		case "$1" in
		--virtio) virtio=1 ;;
		--rnic) rnic=1 ;;
		--rnicsim-arg)
			# Passed through to rnicsim, e.g. --fault drop=1% or --pcap F.
			simargs+=("$2")
			shift
			;;
		--qemu-arg)
			# Appended to QEMU's command line, e.g. another device.
			qargs+=("$2")
			shift
			;;
		--mem)
			mem="$2"
			shift
			;;
		--smp)
			smp="$2"
			shift
			;;
		--kver)
			# Its own kernel (modules from /lib/modules/RELEASE),
			# e.g. rnic on 6.1 talking to rnic on 6.12.
			kver="$2"
			shift
			;;
		*)
			lab__err "vm$n: unknown option $1"
			return 1
			;;
		esac
		shift
	done
	if [ -e "$d" ]; then
		lab__err "vm$n: already started in this lab"
		return 1
	fi
	case "$smp" in
	[1-4]) ;;
	*)
		lab__err "vm$n: bad --smp '$smp' (1 to 4 vCPUs)"
		return 1
		;;
	esac
	if ! bytes="$(lab__bytes "$mem")" || [ "$bytes" -lt $((128 << 20)) ]; then
		lab__err "vm$n: bad --mem '$mem' (e.g. 512M, 1G)"
		return 1
	fi
	# ctl/files is the guest's $LAB_FILES: a directory both sides read
	# and write (uncached 9p), for files a test hands to a VM or back.
	mkdir -p "$d/ctl/files"
	if [ -n "$kver" ]; then
		lab__vm_kernel "$n" "$kver" || return 1
	fi

	local append=(
		console=ttyS0 panic=-1
		# Under TCG every avoidable delay counts.
		mitigations=off
		# The IO-APIC timer check counts jiffies over ~67 ms of TSC
		# time; a vCPU the host leaves waiting that long (two cores,
		# several guests) fails it and the boot panics with "IO-APIC +
		# timer doesn't work!" (seen in KUnit's VM beside a lab run).
		no_timer_check
		rniclab.init="$LAB_SRC/guest-init.sh" rniclab.vm="$n" rniclab.repo="$LAB_REPO"
		rniclab.smp="$smp"
	)
	# The kernel command line splits on spaces.
	case "$LAB_SRC$LAB_REPO" in
	*[[:space:]]*)
		lab__err "vm$n: the repo path must not contain spaces: $LAB_REPO"
		return 1
		;;
	esac
	local qemu=(
		"$LAB_QEMU" -accel tcg -smp "$smp" -nodefaults -no-user-config
		-display none -no-reboot -name "rnic-lab-$LAB_RUN-vm$n,debug-threads=on"
		-kernel "$kernel" -initrd "$initrd"
		-serial "file:$d/console.log" -monitor none
		-chardev "pipe,id=wake,path=$d/wake" -serial chardev:wake
		-pidfile "$d/qemu.pidfile"
		-virtfs "local,path=/,mount_tag=hostroot,readonly=on,multidevs=remap,security_model=none"
		-virtfs "local,path=$d/ctl,mount_tag=rnicctl,multidevs=remap,security_model=none"
	)

	if [ "$virtio" = 1 ]; then
		local tap="tap${n}v" mac
		mac="$(lab__mac "$n" virtio)"
		lab__mktap "$n" "$tap" || return 1
		# romfile=: no iPXE option ROM; running it under TCG costs
		# boot time and the lab boots with -kernel.
		qemu+=(-netdev "tap,id=nv,ifname=$tap,script=no,downscript=no"
			-device "virtio-net-pci,netdev=nv,mac=$mac,romfile=")
		append+=("rniclab.virtio=$mac,$(lab_addr "$n" virtio 4)/24,$(lab_addr "$n" virtio 6)/64")
	fi

	if [ "$rnic" = 1 ]; then
		local tap="tap${n}r" mac shm="/dev/shm/rnic-lab-$LAB_RUN-vm$n-ram" pid i
		mac="$(lab__mac "$n" rnic)"
		if [ "$bytes" -gt $((2 << 30)) ]; then
			lab__err "vm$n: --rnic needs --mem <= 2G (guest-physical must equal the RAM file offset)"
			return 1
		fi
		if [ ! -x "$LAB_RNICSIM" ]; then
			lab__err "vm$n: missing dependency: $LAB_RNICSIM (make -C tools/rnicsim)"
			return 1
		fi
		lab__mktap "$n" "$tap" || return 1
		# The file must exist with its final size before either side maps it.
		truncate -s "$bytes" "$shm" || {
			lab__err "vm$n: cannot create $shm"
			return 1
		}
		ip netns exec "$LAB_NS" nice -n "$LAB_RNICSIM_NICE" \
			"$LAB_RNICSIM" --socket "$d/ivshmem.sock" --guest-mem "$shm" \
			--guest-mem-size "$bytes" --tap "$tap" --mac "$mac" \
			--vectors "$LAB_VECTORS" --shm-size "$LAB_SHM_SIZE" \
			--ctl "$d/rnicsim.ctl" --log "$d/rnicsim.log" "${simargs[@]}" \
			</dev/null >"$d/rnicsim.out" 2>&1 &
		pid=$!
		lab__track "$pid" "vm$n rnicsim"
		echo "$pid" >"$d/rnicsim.pid"
		# QEMU connects at start-up, so the socket must be there first.
		for i in $(seq 100); do
			[ -S "$d/ivshmem.sock" ] && break
			if ! lab__pid_alive "$pid"; then
				lab__err "vm$n: rnicsim exited at start: $(tail -1 "$d/rnicsim.out") (see $d/rnicsim.out and $d/rnicsim.log)"
				return 1
			fi
			sleep 0.1
		done
		if [ ! -S "$d/ivshmem.sock" ]; then
			lab__err "vm$n: rnicsim did not create $d/ivshmem.sock in 10 s (see $d/rnicsim.log)"
			return 1
		fi
		qemu+=(-object "memory-backend-file,id=ram0,size=$bytes,mem-path=$shm,share=on"
			-machine "q35,memory-backend=ram0" -m "$mem"
			-chardev "socket,id=ivs0,path=$d/ivshmem.sock"
			-device "ivshmem-doorbell,chardev=ivs0,vectors=$LAB_VECTORS")
		append+=("rniclab.rnic=$mac,$(lab_addr "$n" rnic 4)/24,$(lab_addr "$n" rnic 6)/64")
	else
		qemu+=(-machine q35 -m "$mem")
	fi
	[ -n "$LAB_TSC_KHZ" ] && append+=("tsc_early_khz=$LAB_TSC_KHZ")
	# The guest's TSC is the host's clock, but the clocksource watchdog
	# judges it by jiffies, whose timer ticks a busy TCG guest delivers
	# late: in 6 of 57 guests of one run (debug kernel) it called the
	# TSC unstable during boot and the guest fell back to the jiffies
	# clocksource, whose 4 ms steps zeroed rnic_perf's latency figures.
	append+=("tsc=reliable")
	# Several vCPUs: booted on one, the others brought online by
	# guest-init.sh (QEMU 7.2's TCG races with the kernel's boot-time code
	# patching).  With one CPU up at boot the kernel turns its LOCK
	# prefixes into NOPs and patches them all back when the second comes
	# online: noreplace-smp keeps the SMP code from the start (a debug
	# guest's CPU bring-up 2.8 -> 2.0 s under TCG).
	[ "$smp" = 1 ] || append+=(maxcpus=1 noreplace-smp)
	# shellcheck disable=SC2206 # RNIC_LAB_APPEND is a list of words
	append+=(${RNIC_LAB_APPEND:-})
	qemu+=(-append "${append[*]}")
	qemu+=(-cpu "$(lab__cpu "$kernel")")

	qemu+=("${qargs[@]}")
	# RNIC_LAB_PROFILE=HZ: a gdbstub for guest-profile.py (below).
	[ -z "${RNIC_LAB_PROFILE:-}" ] ||
		qemu+=(-gdb "unix:$d/gdb.sock,server=on,wait=off")
	# The agent's wake-up line (guest-init.sh): QEMU reads wake.in into the
	# guest's ttyS1; wake.out takes what the guest writes there (nothing).
	rm -f "$d/wake.in" "$d/wake.out"
	mkfifo "$d/wake.in" "$d/wake.out" || {
		lab__err "vm$n: cannot create the fifos $d/wake.{in,out}"
		return 1
	}
	printf '%q ' "${qemu[@]}" >"$d/qemu.cmdline"
	echo >>"$d/qemu.cmdline"
	lab__now_us >"$d/start_us"
	# In the namespace, so that QEMU opens its taps there.
	ip netns exec "$LAB_NS" "${qemu[@]}" </dev/null >"$d/qemu.log" 2>&1 &
	local qpid=$!
	lab__track "$qpid" "vm$n qemu"
	echo "$qpid" >"$d/qemu.pid"
	if [ -n "${RNIC_LAB_PROFILE:-}" ]; then
		# In the namespace, so that the cleanup stops it with QEMU.
		ip netns exec "$LAB_NS" python3 "$LAB_SRC/guest-profile.py" sample \
			"$d/gdb.sock" "$RNIC_LAB_PROFILE" "$smp" "$d/profile.samples" \
			</dev/null >"$d/profile.log" 2>&1 &
		lab__track "$!" "vm$n guest-profile"
		echo "${kver:-$(lab_kver)}" >"$d/profile.kver"
	fi
	lab__info "vm$n: booting ${kver:+$kver }(virtio=$virtio rnic=$rnic mem=$mem), console $d/console.log"
}

lab__mktap() {
	local n="$1" tap="$2"
	if ! {
		ip -n "$LAB_NS" tuntap add "$tap" mode tap &&
			ip -n "$LAB_NS" link set "$tap" master "$LAB_BRIDGE" &&
			ip -n "$LAB_NS" link set "$tap" up
	} >>"$LAB_DIR/netns.log" 2>&1; then
		lab__err "vm$n: creating $tap failed: $(tail -1 "$LAB_DIR/netns.log") (see $LAB_DIR/netns.log)"
		return 1
	fi
}

# The last boot stage a VM's console reports, with the failure message if
# the initramfs or guest init printed one.
lab__boot_stage() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	local log="$1" stage fail panic
	stage="$(grep -ao 'rnic-lab: stage: [a-z-]*' "$log" 2>/dev/null | tail -1)"
	stage="${stage#rnic-lab: stage: }"
	if [ -z "$stage" ]; then
		if [ -s "$log" ]; then stage=kernel; else stage="qemu (no console output yet)"; fi
	fi
	fail="$(grep -a 'rnic-lab: FAILED' "$log" 2>/dev/null | tail -1 | tr -d '\r')"
	panic="$(grep -a 'Kernel panic' "$log" 2>/dev/null | head -1 | tr -d '\r')"
	echo "stage $stage${fail:+: ${fail#*rnic-lab: }}${panic:+ [${panic#*] }]}"
}

# lab_wait_ready N [--timeout S]: wait until VM N's agent runs (boot time).
lab_wait_ready() { lab__timed boot lab__wait_ready "$@"; }

lab__wait_ready() {
	lab__need_started lab_wait_ready || return 1
	local n="$1" d timeout="$LAB_BOOT_TIMEOUT" start now
	d="$(lab__vmdir "$n")" || return 1
	[ "${2:-}" = --timeout ] && timeout="$3"
	if [ ! -f "$d/qemu.pid" ]; then
		lab__err "vm$n: not started (lab_vm $n first)"
		return 1
	fi
	start="$(cat "$d/start_us")"
	# When the kernel's first console line appears: splits boot time into
	# QEMU/firmware/kernel loading and the kernel's own boot.  Only known
	# if we were already watching (not when waiting for another VM first).
	local kernel_at=""
	[ -s "$d/console.log" ] && kernel_at="?"
	while [ ! -f "$d/ctl/ready" ]; do
		if [ -z "$kernel_at" ] && [ -s "$d/console.log" ]; then
			kernel_at="$(lab_elapsed "$start")"
		fi
		if ! lab__qemu_alive "$n"; then
			sleep 0.2 # let QEMU's last console output land
			lab__err "vm$n: did not boot: QEMU exited at $(lab__boot_stage "$d/console.log") (see $d/console.log, $d/qemu.log)"
			return 1
		fi
		now="$(lab__now_us)"
		if [ $((now - start)) -gt $((timeout * 1000000)) ]; then
			lab__err "vm$n: did not boot in $timeout s: $(lab__boot_stage "$d/console.log") (see $d/console.log)"
			return 1
		fi
		sleep 0.1
	done
	lab__info "vm$n: ready in $(lab_elapsed "$start") s (first console line after ${kernel_at:-?} s, guest uptime $(cat "$d/ctl/ready") s)"
}

# ---------------------------------------------------------------- commands

# lab_bg N CMD...: start CMD (its words joined with spaces and run by
# bash, like ssh does) in VM N; prints the job id for lab_wait/lab_kill.
lab_bg() {
	lab__need_started lab_bg || return 1
	local n="$1" d id
	d="$(lab__vmdir "$n")" || return 1
	shift
	if [ ! -f "$d/ctl/ready" ]; then
		lab__err "vm$n: not ready (lab_wait_ready $n first)"
		return 1
	fi
	id="j${EPOCHREALTIME/./}$RANDOM"
	printf '%s\n' "$*" >"$d/ctl/$id.cmd.tmp"
	# The agent only picks up *.cmd, so it never sees a partial file.
	mv "$d/ctl/$id.cmd.tmp" "$d/ctl/$id.cmd"
	lab__wake "$d" "$id.cmd"
	echo "$id"
}

# lab__wake VMDIR NAME: tell the VM's agent to act on the share's file
# NAME now (guest-init.sh).  Opened read-write, a fifo never blocks, even
# with QEMU gone (the line then stays in the pipe).
lab__wake() {
	[ -p "$1/wake.in" ] || return 0
	{ printf '%s\n' "$2" >&3; } 3<>"$1/wake.in" 2>/dev/null || true
}

# lab_job_output N JOB: what a running (or finished, not yet waited-for)
# job has written to stdout so far, e.g. to see that a server is up.
lab_job_output() {
	local d
	d="$(lab__vmdir "$1")" || return 1
	cat "$d/ctl/$2.out" 2>/dev/null || true
}

# lab_kill N JOB: kill the job's whole process group in the guest.
lab_kill() {
	local d
	d="$(lab__vmdir "$1")" || return 1
	: >"$d/ctl/$2.kill"
	lab__wake "$d" "$2.kill"
}

# lab_wait N JOB [--timeout S]: wait for a job; print its stdout (stderr to
# our stderr) and return its exit status.  A job still running after S
# seconds is killed, reported in one line and gives 124.
lab_wait() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	lab__need_started lab_wait || return 1
	local n="$1" id="$2" d timeout="$LAB_EXEC_TIMEOUT" start rc cmd i qpid nap
	d="$(lab__vmdir "$n")" || return 1
	[ "${3:-}" = --timeout ] && timeout="$4"
	start="${EPOCHREALTIME/./}"
	rc=
	qpid="$(cat "$d/qemu.pid" 2>/dev/null)"
	# Naps of 0.05 s without a fork: a read that times out on a fifo
	# nobody writes (opened read-write, so the open does not block).
	nap=
	[ -p "$LAB_DIR/nap" ] || mkfifo "$LAB_DIR/nap" 2>/dev/null
	[ -p "$LAB_DIR/nap" ] && exec {nap}<>"$LAB_DIR/nap"
	# The agent writes ID.rc in one write of a non-empty line.
	while [ ! -s "$d/ctl/$id.rc" ]; do
		if ! lab__pid_alive "$qpid"; then
			rc=dead
			break
		fi
		if [ $((${EPOCHREALTIME/./} - start)) -gt $((timeout * 1000000)) ]; then
			rc=timeout
			lab_kill "$n" "$id"
			# Give the agent time to kill it and collect the status.
			for i in $(seq 100); do
				[ -s "$d/ctl/$id.rc" ] && break
				sleep 0.1
			done
			break
		fi
		if [ -n "$nap" ]; then read -r -t 0.05 -u "$nap" _; else sleep 0.05; fi
	done
	[ -z "$nap" ] || exec {nap}<&-
	cmd="$(head -c 200 "$d/ctl/$id.cmd" 2>/dev/null | tr '\n' ' ')"
	[ "$rc" = dead ] || [ "$rc" = timeout ] || rc="$(cat "$d/ctl/$id.rc")"
	# A transcript of every command, for the "see LOG" lines.
	{
		echo "=== $id ($(lab_elapsed "$start") s, status $rc): $cmd"
		cat "$d/ctl/$id.out" 2>/dev/null
		sed 's/^/stderr: /' "$d/ctl/$id.err" 2>/dev/null
	} >>"$d/commands.log"
	cat "$d/ctl/$id.out" 2>/dev/null
	cat "$d/ctl/$id.err" >&2 2>/dev/null
	# A job that outlived its kill request still writes its files; leave
	# them to it rather than have it recreate half of them.
	if [ "$rc" != timeout ] || [ -s "$d/ctl/$id.rc" ]; then
		rm -f "$d/ctl/$id".*
	fi
	case "$rc" in
	dead)
		lab__err "vm$n: VM died while running: $cmd(at $(lab__boot_stage "$d/console.log"); see $d/console.log)"
		return 1
		;;
	timeout)
		lab__err "vm$n: command timed out after $timeout s: $cmd(see $d/commands.log, $d/console.log)"
		return 124
		;;
	esac
	return "$rc"
}

# lab_sim_ctl N CMD...: send CMD to VM N's rnicsim (its control socket);
# rnicsim's answer on stdout, its status ours.
lab_sim_ctl() {
	lab__need_started lab_sim_ctl || return 1
	"$LAB_RNICSIM" --ctl-cmd "$LAB_DIR/vm$1/rnicsim.ctl" "${@:2}"
}

# lab_sim_ctr N NAME: one counter of VM N's model, as rnicsim's "counters"
# prints it; nothing if it has no such counter.
lab_sim_ctr() { lab_sim_ctl "$1" counters | awk -v k="$2" '$1 == k { print $2 }'; }

# lab_vcpus N: the host thread ids of VM N's vCPUs (QEMU names them "CPU
# K/TCG": lab__vm starts it with debug-threads=on), one per line.
lab_vcpus() {
	lab__need_started lab_vcpus || return 1
	local pid t
	pid="$(cat "$LAB_DIR/vm$1/qemu.pid")" || return 1
	for t in /proc/"$pid"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in
		"CPU "*/TCG) echo "${t##*/}" ;;
		esac
	done
}

# lab_pin N CPUS [SIM_CPUS]: VM N's vCPU threads on the host CPUs of the
# taskset list CPUS, and its rnicsim (every thread) on SIM_CPUS if given.
# QEMU's other threads (its main loop, which moves a virtio-net NIC's
# frames through the tap, and its I/O workers) stay wherever the host's
# scheduler puts them.  The lab itself pins nothing: a benchmark
# (scripts/bench/pair.sh) does, to hold one placement for a whole run.
lab_pin() {
	lab__need_started lab_pin || return 1
	local d="$LAB_DIR/vm$1" t n=0 pid
	for t in $(lab_vcpus "$1"); do
		taskset -c -p "$2" "$t" >/dev/null || return 1
		n=$((n + 1))
	done
	if [ "$n" = 0 ]; then
		lab__err "vm$1: lab_pin: no vCPU thread (\"CPU K/TCG\") in its QEMU"
		return 1
	fi
	[ -n "${3:-}" ] || return 0
	pid="$(cat "$d/rnicsim.pid")" && taskset -a -c -p "$3" "$pid" >/dev/null
}

# lab_cpus: the host CPUs this process may run on (its affinity, which a
# cpuset or taskset may have narrowed), one per line, ascending.
lab_cpus() {
	local list r
	list="$(awk '$1 == "Cpus_allowed_list:" { print $2 }' /proc/self/status)"
	for r in ${list//,/ }; do
		seq "${r%-*}" "${r#*-}"
	done
}

# lab_exec N [--timeout S] CMD...: run CMD in VM N and wait for it.
lab_exec() {
	local n="$1" timeout="$LAB_EXEC_TIMEOUT" id
	shift
	if [ "${1:-}" = --timeout ]; then
		timeout="$2"
		shift 2
	fi
	id="$(lab_bg "$n" "$@")" || return 1
	lab_wait "$n" "$id" --timeout "$timeout"
}

# ---------------------------------------------------------------- capture

# lab_capture_start FILE: capture every frame on the lab bridge to FILE
# (classic pcap, so every tool, rnicsim's tests included, reads it).
lab_capture_start() {
	lab__need_started lab_capture_start || return 1
	local file="$1" pid i log
	log="$LAB_DIR/capture-$(basename "$file").log"
	rm -f "$file"
	ip netns exec "$LAB_NS" dumpcap -q -P -i "$LAB_BRIDGE" -w "$file" </dev/null >"$log" 2>&1 &
	pid=$!
	lab__track "$pid" "dumpcap $file"
	echo "$pid $file" >>"$LAB_DIR/captures"
	# Ready once the file header is written.
	for i in $(seq 100); do
		[ -s "$file" ] && return 0
		if ! lab__pid_alive "$pid"; then
			lab__err "capture: dumpcap exited: $(tail -1 "$log") (see $log)"
			return 1
		fi
		sleep 0.1
	done
	lab__err "capture: dumpcap did not start in 10 s (see $log)"
	return 1
}

# lab_capture_stop FILE: stop that capture; FILE is complete afterwards.
lab_capture_stop() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	lab__need_started lab_capture_stop || return 1
	local file="$1" pid f i
	while read -r pid f; do
		[ "$f" = "$file" ] || continue
		# Frames of the last exchange may still sit in dumpcap's socket
		# buffer, and SIGTERM ends it without reading them: wait until
		# the file has stopped growing for a second (at most 10 s).
		local size=-1 now stable=0
		for i in $(seq 20); do
			now="$(stat -c %s "$file" 2>/dev/null || echo 0)"
			if [ "$now" = "$size" ]; then
				stable=$((stable + 1))
				[ "$stable" -ge 2 ] && break
			else
				stable=0
			fi
			size="$now"
			sleep 0.5
		done
		# Not SIGINT: a shell starts background jobs with SIGINT ignored.
		# dumpcap flushes and closes its file on SIGTERM as well.
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 50); do
			lab__pid_alive "$pid" || return 0
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		lab__err "capture: dumpcap for $file did not stop on SIGTERM, killed"
		return 1
	done <"$LAB_DIR/captures"
	lab__err "capture: no capture running to $file"
	return 1
}

# ---------------------------------------------------------------- leftovers

# Print everything a lab run left behind (processes, namespaces,
# /dev/shm files, sockets); exit status 1 if anything.  RUN restricts it to
# one run (other labs may legitimately be running on this machine).
lab_leftovers() {
	# Status-checked by hand; must not die half-way under the caller's set -e.
	local -
	set +e
	local run="${1:-}" found=0 pat pid f
	local -A seen=()
	pat="rnic-lab-${run}"
	for pid in $(pgrep -f -- "$pat" 2>/dev/null); do
		[ "$pid" = "$$" ] && continue
		case "$(cat "/proc/$pid/comm" 2>/dev/null)" in
		qemu-system-*|rnicsim|dumpcap|tshark)
			seen[$pid]=1
			;;
		esac
	done
	if [ -n "$run" ]; then
		# dumpcap's command line names its file, not the run.
		for pid in $(pgrep -x rnicsim) $(pgrep -x dumpcap) $(pgrep -f qemu-system); do
			if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$RNIC_LAB_DIR/${run%-*}/"; then
				seen[$pid]=1
			fi
		done
	fi
	for pid in "${!seen[@]}"; do
		echo "process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | head -c 150)"
		found=1
	done
	for f in /run/netns/"$pat"*; do
		[ -e "$f" ] && { echo "namespace ${f##*/}"; found=1; }
	done
	for f in /dev/shm/"$pat"*; do
		[ -e "$f" ] && { echo "shm file $f"; found=1; }
	done
	if [ -n "$run" ] && [ -d "$RNIC_LAB_DIR/${run%-*}" ]; then
		while read -r f; do
			echo "socket $f"
			found=1
		done < <(find "$RNIC_LAB_DIR/${run%-*}" -type s 2>/dev/null)
	fi
	return "$found"
}

# lab_check_clean SUITE: after lab_stop, one TAP line saying whether the
# run left anything behind.
lab_check_clean() {
	local left
	if left="$(lab_leftovers "$LAB_RUN")"; then
		lab_ok "$1: cleanup leaves no process, namespace, shm file or socket"
	else
		echo "$left" >"$LAB_DIR/leftovers.txt"
		lab_not_ok "$1: cleanup leaves no process, namespace, shm file or socket" "$LAB_DIR/leftovers.txt"
		return 1
	fi
}

# ---------------------------------------------------------------- CLI

lab__usage() {
	cat <<-EOF
		usage: scripts/lab/lab.sh COMMAND ...
		  up NAME VM...        start lab NAME with VMs given as N[:virtio][:rnic][:mem=SIZE][:kver=REL]
		                       (e.g. 1:virtio 2:virtio:rnic), wait until they are ready,
		                       then keep them running until Ctrl-C or 'down NAME'
		  exec NAME N CMD...   run CMD in VM N of the running lab NAME
		  down NAME            stop lab NAME
		  cleanup              clean up every lab whose owning process is gone
		  leftovers [RUN]      list leftover processes/namespaces/shm files (exit 1 if any)
		  initramfs            build (or find) the cached initramfs, print its path
		Logs and consoles: \$RNIC_LAB_DIR/NAME (default /tmp/rnic-lab/NAME).
	EOF
}

# Load a running lab's state (for exec/down from another shell).
lab__attach() {
	LAB_DIR="$RNIC_LAB_DIR/$1"
	if [ ! -f "$LAB_DIR/lab.env" ]; then
		lab__err "no running lab named '$1' in $RNIC_LAB_DIR"
		return 1
	fi
	LAB_NAME="$(sed -n 's/^LAB_NAME=//p' "$LAB_DIR/lab.env")"
	LAB_RUN="$(sed -n 's/^LAB_RUN=//p' "$LAB_DIR/lab.env")"
	LAB_NS="$(sed -n 's/^LAB_NS=//p' "$LAB_DIR/lab.env")"
}

lab__main() {
	set -euo pipefail
	local cmd="${1:-help}"
	shift || true
	case "$cmd" in
	up)
		local name="$1" spec n opts o opt
		shift
		lab_start "$name"
		local vms=()
		for spec in "$@"; do
			n="${spec%%:*}"
			opts=()
			IFS=: read -r -a o <<<"${spec#"$n"}"
			for opt in "${o[@]}"; do
				case "$opt" in
				"") ;;
				virtio | rnic) opts+=("--$opt") ;;
				mem=*) opts+=(--mem "${opt#mem=}") ;;
				kver=*) opts+=(--kver "${opt#kver=}") ;;
				*)
					lab__err "up: bad VM option '$opt'"
					return 1
					;;
				esac
			done
			lab_vm "$n" "${opts[@]}"
			vms+=("$n")
		done
		for n in "${vms[@]}"; do
			lab_wait_ready "$n"
		done
		echo "lab $name is up; run: $0 exec $name N CMD...; stop with Ctrl-C or: $0 down $name"
		# Wait for a signal; the traps clean up.
		while :; do sleep 1; done
		;;
	exec)
		lab__attach "$1"
		shift
		lab_exec "$@"
		;;
	down)
		lab__attach "$1"
		local owner
		owner="$(sed -n 's/^LAB_OWNER=//p' "$LAB_DIR/lab.env")"
		if lab__pid_alive "$owner"; then
			kill -TERM "$owner"
			while lab__pid_alive "$owner"; do sleep 0.1; done
		else
			lab__cleanup_dir "$LAB_DIR"
		fi
		;;
	cleanup)
		local env owner
		for env in "$RNIC_LAB_DIR"/*/lab.env; do
			[ -f "$env" ] || continue
			owner="$(sed -n 's/^LAB_OWNER=//p' "$env")"
			if ! lab__pid_alive "$owner"; then
				echo "cleaning up $(dirname "$env")"
				lab__cleanup_dir "$(dirname "$env")"
			fi
		done
		;;
	leftovers) lab_leftovers "$@" ;;
	initramfs) "$LAB_SRC/initramfs.sh" ;;
	help | -h | --help) lab__usage ;;
	*)
		lab__usage >&2
		return 1
		;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	lab__main "$@"
fi
