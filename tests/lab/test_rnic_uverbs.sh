#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# Userspace verbs on rnic, kernel bypass through librnic (providers/rnic,
# installed by scripts/dkms-install.sh), with Debian's own unmodified
# binaries between two rnic VMs of two vCPUs each (a process's posts and
# polls beside the kernel's completion events and another process's
# traffic, on two CPUs at once):
#  - ib_uverbs gives rnic0 a /dev/infiniband/uverbs device; ibv_devices
#    lists it and ibv_devinfo -v agrees with sysfs (node GUID, firmware,
#    port state, the GID table's size) and with rdma (GUIDs, firmware,
#    port and physical state);
#  - ibv_rc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong, over RoCE v2
#    and RoCE v1, each with the received data checked (-c);
#  - rping (librdmacm), every ping verified (-V), over IPv4 and IPv6;
#  - perftest: ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw,
#    ib_write_lat, ib_send_lat, each without and with rdma_cm (-R),
#    completing with a result row (the -R runs are short: they prove the
#    connection set-up, the data path is the same);
#  - kernel bypass shown: ib_write_bw under strace -f -c makes fewer
#    system calls than a tenth of its operations, while the batches of
#    doorbells the device served (kicks, kick_rechecks) rise by at least
#    its operations over its send queue's depth;
#  - hostile userspace (rnic_hostile): malformed WQEs, bogus doorbells and
#    kicks, bad MR ranges, bad driver data in create_cq/qp/srq (refused
#    with EINVAL or EFAULT, nothing left of them), a process killed in
#    flight, each failing only what the process owns, while another
#    process's transfers verify;
#  - the device fails (rnicsim "fatal") under a process's transfers: it
#    gets IBV_EVENT_DEVICE_FATAL, no wrong data, its teardown returns,
#    20 new contexts are each refused with EIO, and rmmod and modprobe
#    bring the device back (the kernel-kick check below runs on the
#    reloaded device);
#  - rnic reloaded in vm1 with user_kick_map=0: processes kick through the
#    kernel (a system call per send post, ibv_rc_pingpong's data still
#    checked), then unloaded;
#  - vm2's device unbound through sysfs while a process verifies
#    transfers (the module stays loaded): the unbind completes, the
#    process fails; bound again, the device is back under its name and a
#    new process's transfers verify;
#  - rmmod rnic in vm1 once the processes are gone, and in vm2 while a
#    process still verifies transfers (disassociation: the unload
#    completes, the process fails, nothing hangs).
# UV_PEER=rxe runs the same checks between two rdma_rxe VMs instead: the
# reference the checks themselves are proven against.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"
# shellcheck source=tests/lab/lib_uverbs.sh
. "$(dirname "$0")/lib_uverbs.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic uverbs"
PEER=${UV_PEER:-rnic}
# Every kmemleak object fails the sweep here, ib_core's too: a refused
# context once leaked ib_core's task reference (rnic_ib_uctx.c).
LAB_KMEMLEAK_ALL=1
T0="$(lab__now_us)"
lab_start rnic_uverbs || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_uverbs"
	exit 1
}
# boots 2, set-up 2, devices 2, pingpong 6, rping 2, perftest 12, bypass 1,
# hostile 7, fatal 1, unload 2, kernel kick 1, unbind 1 (rnic only)
if [ "$PEER" = rnic ]; then lab_plan 39 2; else lab_plan 38 2; fi
check_init

if [ "$PEER" = rxe ]; then
	NIC=virtio
	DEV=rxe0
	lab_vm 1 --virtio
	lab_vm 2 --virtio
else
	NIC=rnic
	DEV=rnic0
	preflight rnic rnicsim
	lab_vm 1 --rnic --smp 2
	lab_vm 2 --rnic --smp 2
fi
boot_vms 1 2

# up N [OPTIONS]: the device with its addresses (rnic loaded with the
# module OPTIONS), port ACTIVE, ib_uverbs and rdma_ucm loaded, and a uverbs
# character device for it.
up() {
	local load
	# shellcheck disable=SC2016 # expanded in the guest
	if [ "$PEER" = rxe ]; then
		load='modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$LAB_VIRTIO_IF"'
	else
		# RNIC_KO=path: that rnic.ko instead of the DKMS-installed one
		load="modprobe rnic ${2:-}"
		[ -z "${RNIC_KO:-}" ] || load="modprobe ib_core && insmod $RNIC_KO ${2:-}"
	fi
	attach "$1" "$load"
}
# attach N LOAD: run LOAD (a guest command that makes the device appear),
# then as up says.
attach() {
	local load="$2"
	[ "$PEER" = rxe ] || load="$load
			for i in \$(seq 100); do [ -e /sys/class/infiniband/rnic0/ports/1 ] && break; sleep 0.1; done
			lab_ifup \"\$LAB_RNIC_SPEC\" >/dev/null"
	lab_exec "$1" --timeout 120 "set -e
		$load
		lab_ib_active $DEV
		modprobe ib_uverbs
		modprobe rdma_ucm
		u=
		for i in \$(seq 100); do
			for f in /sys/class/infiniband_verbs/uverbs*/ibdev; do
				[ \"\$(cat \$f 2>/dev/null)\" = $DEV ] && u=\${f%/ibdev}
			done
			[ -n \"\$u\" ] && break
			sleep 0.1
		done
		[ -n \"\$u\" ] && [ -c /dev/infiniband/\${u##*/} ]
		echo \"$DEV: /dev/infiniband/\${u##*/}\""
}
check_vms "1 2" "$DEV ACTIVE, ib_uverbs and rdma_ucm loaded, /dev/infiniband/uverbsN" up || exit 1

SRV4="$(lab_addr 2 "$NIC" 4)"
CLI4="$(lab_addr 1 "$NIC" 4)"
GV2=$(uv_gid_index 2 "$DEV" "$SRV4" "RoCE v2") || GV2=
CV2=$(uv_gid_index 1 "$DEV" "$CLI4" "RoCE v2") || CV2=
# rxe has no RoCE v1
GV1=
CV1=
if [ "$PEER" = rnic ]; then
	GV1=$(uv_gid_index 2 "$DEV" "$SRV4" "IB/RoCE v1") || GV1=
	CV1=$(uv_gid_index 1 "$DEV" "$CLI4" "IB/RoCE v1") || CV1=
fi
echo "# GID indices: vm2 v2=$GV2 v1=$GV1, vm1 v2=$CV2 v1=$CV1"

devices() {
	lab_exec 1 --timeout 60 "ibv_devices" >"$LAB_DIR/ibv_devices" 2>&1 || {
		cat "$LAB_DIR/ibv_devices"
		return 1
	}
	cat "$LAB_DIR/ibv_devices"
	grep -Eq "^[[:space:]]+${DEV}[[:space:]]+[0-9a-f]{16}$" "$LAB_DIR/ibv_devices"
}
check "ibv_devices lists $DEV with its node GUID" devices || true

# devinfo: ibv_devinfo -v's view of the device is sysfs's and rdma's
# (iproute2's netlink view: node and system image GUIDs, firmware, port
# state and physical state).
devinfo() {
	local out="$LAB_DIR/ibv_devinfo" sys guid fw ngids nl
	lab_exec 1 --timeout 60 "ibv_devinfo -v -d $DEV" >"$out" 2>&1 || {
		cat "$out"
		return 1
	}
	sys="$(lab_exec 1 --timeout 30 "cd /sys/class/infiniband/$DEV
		cat node_guid fw_ver
		ls ports/1/gid_attrs/types | wc -l")" || return 1
	guid="$(sed -n 1p <<<"$sys")"
	fw="$(sed -n 2p <<<"$sys")"
	ngids="$(sed -n 3p <<<"$sys")"
	head -n 40 "$out"
	echo "sysfs: node_guid $guid fw_ver $fw gid entries $ngids"
	lab_exec 1 --timeout 30 "rdma -j dev show $DEV && rdma -j link show $DEV/1" \
		>"$LAB_DIR/rdma-dev" 2>&1 || {
		cat "$LAB_DIR/rdma-dev"
		return 1
	}
	# one line: node_guid sys_image_guid state physical_state fw
	nl="$(python3 -c 'import json, sys
d, l = (json.loads(x)[0] for x in sys.stdin.read().split("\n") if x.strip())
print(d["node_guid"], d["sys_image_guid"], l["state"], l["physical_state"], d.get("fw", ""))' \
		<"$LAB_DIR/rdma-dev")" || {
		cat "$LAB_DIR/rdma-dev"
		return 1
	}
	echo "rdma: node_guid sys_image_guid state physical_state fw: $nl"
	read -r -a nl <<<"$nl"
	if ! { [ "${nl[0]}" = "$guid" ] &&
		grep -Eq "^[[:space:]]*sys_image_guid:[[:space:]]+${nl[1]}$" "$out" &&
		grep -Eq "^[[:space:]]*state:[[:space:]]+PORT_${nl[2]} " "$out" &&
		grep -Eq "^[[:space:]]*phys_state:[[:space:]]+${nl[3]} " "$out" &&
		[ "${nl[*]:4}" = "$fw" ]; }; then
		echo "ibv_devinfo and rdma disagree"
		return 1
	fi
	# sysfs has the driver's string ("rnicsim 2.0"), libibverbs formats
	# the device's version number as major.minor.sub: the numbers agree.
	# rxe has no firmware version in sysfs (ibv_devinfo shows 0.0.0).
	fw="$(grep -Eo '[0-9]+\.[0-9]+' <<<"$fw" | head -n 1)" || true
	grep -Eq "^[[:space:]]*node_guid:[[:space:]]+$guid$" "$out" &&
		{ [ -z "$fw" ] || grep -Eq "^[[:space:]]*fw_ver:[[:space:]]+${fw//./\\.}(\.[0-9]+)?$" "$out"; } &&
		grep -Eq "state:[[:space:]]+PORT_ACTIVE" "$out" &&
		grep -Eq "link_layer:[[:space:]]+Ethernet" "$out" &&
		grep -Eq "^[[:space:]]*max_qp:[[:space:]]+[1-9]" "$out" &&
		grep -Eq "^[[:space:]]*gid_tbl_len:[[:space:]]+$ngids$" "$out"
}
check "ibv_devinfo -v: node GUID, firmware, GID table length as sysfs says; GUIDs, firmware, port and physical state as rdma says; port ACTIVE, Ethernet" devinfo || true

# pingpong NAME TOOL SGID CGID ARGS: server in vm2, client in vm1, 500
# exchanges with the buffers checked on both sides.
pingpong() {
	local name="$1" tool="$2" sg="$3" cg="$4"
	shift 4
	if [ -z "$sg" ] || [ -z "$cg" ]; then
		echo "no GID index (server '$sg', client '$cg')"
		return 1
	fi
	uv_pair "$name" "$tool -d $DEV -g $sg -c -n 500 $*" \
		"$tool -d $DEV -g $cg -c -n 500 $* $SRV4" tcp:18515 &&
		uv_iters "$LAB_DIR/uv-$name.server" 500 &&
		uv_iters "$LAB_DIR/uv-$name.client" 500
}
check "ibv_rc_pingpong -c, RoCE v2, 4 KiB, 500 exchanges" \
	pingpong rc-v2 ibv_rc_pingpong "$GV2" "$CV2" -s 4096 || true
check "ibv_rc_pingpong -c, RoCE v1, 4 KiB, 500 exchanges" \
	pingpong rc-v1 ibv_rc_pingpong "$GV1" "$CV1" -s 4096 || true
check "ibv_ud_pingpong -c, RoCE v2, 512 B, 500 exchanges" \
	pingpong ud-v2 ibv_ud_pingpong "$GV2" "$CV2" -s 512 || true
check "ibv_ud_pingpong -c, RoCE v1, 512 B, 500 exchanges" \
	pingpong ud-v1 ibv_ud_pingpong "$GV1" "$CV1" -s 512 || true
check "ibv_srq_pingpong -c, RoCE v2, 4 QPs on one SRQ, 4 KiB, 500 exchanges" \
	pingpong srq-v2 ibv_srq_pingpong "$GV2" "$CV2" -q 4 -s 4096 || true
check "ibv_srq_pingpong -c, RoCE v1, 4 QPs on one SRQ, 4 KiB, 500 exchanges" \
	pingpong srq-v1 ibv_srq_pingpong "$GV1" "$CV1" -q 4 -s 4096 || true

# rping_v V: librdmacm's rping, 50 verified pings over IPv<V>.
rping_v() {
	local a
	a="$(lab_addr 2 "$NIC" "$1")"
	uv_pair "rping-$1" "rping -s -a $a -V -C 50" "rping -c -a $a -V -v -C 50" cm:7174 &&
		[ "$(grep -c 'ping data: rdma-ping-' "$LAB_DIR/uv-rping-$1.client")" -eq 50 ]
}
check "rping -V -C 50 (librdmacm) over IPv4" rping_v 4 || true
check "rping -V -C 50 (librdmacm) over IPv6" rping_v 6 || true

# perf NAME TOOL SIZE ARGS: a perftest pair (-x: the RoCE v2 GID of each
# side, or rdma_cm with -R); the client's result row for SIZE.
perf() {
	local name="$1" tool="$2" size="$3" row sx="-x $GV2" cx="-x $CV2" w=tcp:18515
	shift 3
	# with -R the server listens on an rdma_cm ID, not a TCP socket
	if [[ " $* " == *" -R "* ]]; then
		sx=
		cx=
		w=cm:18515
	fi
	uv_pair "$name" "$tool -d $DEV $sx -s $size $* -F" \
		"$tool -d $DEV $cx -s $size $* -F $SRV4" "$w" || return 1
	row="$(uv_perf_row "$LAB_DIR/uv-$name.client" "$size")" || {
		echo "no result row for $size bytes"
		return 1
	}
	echo "# $name: $row"
	echo "$name $row" >>"$LAB_DIR/perftest.rows"
}
: >"$LAB_DIR/perftest.rows"
check "ib_write_bw 64 KiB x 2000" perf write_bw ib_write_bw 65536 -n 2000 --report_gbits || true
check "ib_read_bw 64 KiB x 1000" perf read_bw ib_read_bw 65536 -n 1000 --report_gbits || true
# send_bw_peek: ib_send_bw as perf; on rnic the server's receive posts
# wrote their RQ slot and rang nothing (RNIC_UCTX_F_RQ_PEEK): vm2's NIC
# found them by reading the slot (rq_peeks rose) while its kicks stood
# still but for stray kernel doorbells (< 8; perftest reposts each of the
# 2000 receives, kicking would be hundreds of kicks).
send_bw_peek() {
	local b="$LAB_DIR/peek.before" a="$LAB_DIR/peek.after" p k r
	if [ "$PEER" = rnic ]; then
		hw_stats 2 "$DEV/1" >"$b" || return 1
	fi
	perf send_bw ib_send_bw 4096 -n 2000 --report_gbits || return 1
	[ "$PEER" = rnic ] || return 0
	hw_stats 2 "$DEV/1" >"$a" &&
		p="$(stat_delta "$b" "$a" rq_peeks)" &&
		k="$(stat_delta "$b" "$a" kicks)" &&
		r="$(stat_delta "$b" "$a" kick_rechecks)" || return 1
	echo "vm2: rq_peeks +$p, kicks served +$((k + r))"
	[ "$p" -gt 0 ] && [ "$((k + r))" -lt 8 ]
}
check "ib_send_bw 4 KiB x 2000; the server's receive posts rang no doorbell (its NIC read the slots)" send_bw_peek || true
check "ib_atomic_bw (fetch and add) x 2000" perf atomic_bw ib_atomic_bw 8 -n 2000 || true
check "ib_write_lat 64 B x 2000" perf write_lat ib_write_lat 64 -n 2000 || true
check "ib_send_lat 64 B x 2000" perf send_lat ib_send_lat 64 -n 2000 || true
check "ib_write_bw -R (rdma_cm) 64 KiB x 1000" perf write_bw_cm ib_write_bw 65536 -n 1000 -R --report_gbits || true
check "ib_read_bw -R (rdma_cm) 64 KiB x 200" perf read_bw_cm ib_read_bw 65536 -n 200 -R --report_gbits || true
check "ib_send_bw -R (rdma_cm) 4 KiB x 200" perf send_bw_cm ib_send_bw 4096 -n 200 -R --report_gbits || true
check "ib_atomic_bw -R (rdma_cm) x 200" perf atomic_bw_cm ib_atomic_bw 8 -n 200 -R || true
check "ib_write_lat -R (rdma_cm) 64 B x 200" perf write_lat_cm ib_write_lat 64 -n 200 -R || true
check "ib_send_lat -R (rdma_cm) 64 B x 1000" perf send_lat_cm ib_send_lat 64 -n 1000 -R || true

# bypass: ib_write_bw (64 B, 20000 WRITEs) under strace -f -c on the
# client: the process enters the kernel for set-up and completion, not
# per operation; and the doorbells it rang reached the device.
# kicks: the batches of kick entries vm1's device served: those it was
# kicked for (kicks) and those it found when it looked again after
# storing kick_ci (kick_rechecks: entries whose kick the writer skipped,
# RNIC_RDMA_CAP_KICK_CI).
kicks() {
	local f="$LAB_DIR/kicks.vm1"
	hw_stats 1 "$DEV/1" >"$f" &&
		echo $(($(stat_of "$f" kicks) + $(stat_of "$f" kick_rechecks)))
}
# strace_calls FILE: the total of the "strace -c" table in FILE.
strace_calls() { awk '$NF == "total" { print $(NF - 2) }' "$1"; }
bypass() {
	local n=20000 k0=0 k1=0 calls
	[ "$PEER" = rxe ] || k0="$(kicks)" || return 1
	uv_pair bypass "ib_write_bw -d $DEV -x $GV2 -s 64 -n $n -F" \
		"strace -f -c -o /tmp/strace.txt ib_write_bw -d $DEV -x $CV2 -s 64 -n $n -F $SRV4 && cat /tmp/strace.txt" \
		tcp:18515 || return 1
	[ "$PEER" = rxe ] || k1="$(kicks)" || return 1
	calls="$(strace_calls "$LAB_DIR/uv-bypass.client")"
	echo "system calls of the client: ${calls:-none found} for $n WRITEs"
	echo "device kicks (vm1): $k0 -> $k1"
	[ -n "$calls" ] && [ "$calls" -lt $((n / 10)) ] || return 1
	# rxe has no kick counter: its system calls are the check. A batch
	# the device serves holds at most the SQ's 128 WQEs (perftest's tx
	# depth): a WQE posted needs room, which only WQEs the device read
	# and completed give back.
	[ "$PEER" = rxe ] || [ "$((k1 - k0))" -ge $((n / 128)) ]
}
check "kernel bypass: ib_write_bw 20000 x 64 B makes < 2000 system calls; the device's kicks rise" bypass || true

# Hostile userspace (providers/rnic/rnic_hostile.c, rnic only): in vm1,
# while another process (rnic_hostile traffic) verifies WRITEs and SENDs,
# each mode attacks its own context; each must fail only what it owns,
# and end with a fresh context that verifies.
HOSTILE=
TRAFFIC=
if [ "$PEER" = rnic ]; then
	HOSTILE="$(bash "$LAB_REPO/scripts/rdma-core.sh" path-hostile 2>/dev/null)" || HOSTILE=
	# it runs until the test says stop (-s), after the last mode
	[ -z "$HOSTILE" ] ||
		TRAFFIC="$(lab_bg 1 "rm -f /tmp/traffic.stop; $HOSTILE -d $DEV -t 150 -s /tmp/traffic.stop traffic")"
fi
hostile() {
	[ -n "$HOSTILE" ] || {
		echo "no rnic_hostile (scripts/rdma-core.sh path-hostile)"
		return 1
	}
	lab_exec 1 --timeout 150 "$HOSTILE -d $DEV -T 20000 $1" >"$LAB_DIR/hostile-$1" 2>&1 || {
		cat "$LAB_DIR/hostile-$1"
		return 1
	}
	cat "$LAB_DIR/hostile-$1"
	grep -q "^hostile $1: ok" "$LAB_DIR/hostile-$1"
}
uv_hostile() { [ "$PEER" = rxe ] && return 0; hostile "$@"; }
check "hostile: malformed WQEs (bad opcode, SGE counts, foreign and bad keys, privileged ones) fail only their own QP" uv_hostile bad-wqe || true
check "hostile: kick entries for slots not its own are counted (bad_kicks), bad slot values fail only their own queue" uv_hostile bad-db || true
check "hostile: MRs over unmapped, wild, kernel, wrapping or read-only ranges are refused" uv_hostile bad-mr || true
check "hostile: create_cq, create_qp, create_srq with driver data librnic never sends (short, long, reserved bits, rings missing, unaligned, unmapped, too small) refused with EINVAL or EFAULT, nothing left; correct ones created" uv_hostile bad-udata || true
check "hostile: a process killed with WRITEs and SENDs in flight leaves nothing behind" uv_hostile killed || true
check "hostile: any value written to the kick register harms no one" uv_hostile bad-kick || true
traffic() {
	[ "$PEER" = rxe ] && return 0
	[ -n "$TRAFFIC" ] || return 1
	lab_exec 1 --timeout 30 "touch /tmp/traffic.stop" || return 1
	lab_wait 1 "$TRAFFIC" --timeout 180 >"$LAB_DIR/hostile-traffic" 2>&1 || {
		cat "$LAB_DIR/hostile-traffic"
		return 1
	}
	cat "$LAB_DIR/hostile-traffic"
	grep -q "CQs moderated: .*(ibv_modify_cq)" "$LAB_DIR/hostile-traffic" &&
		grep -q "^hostile traffic: ok" "$LAB_DIR/hostile-traffic"
}
check "hostile: the other process's transfers verified throughout, on CQs it moderated (ibv_modify_cq)" traffic || true

# fatal: vm1's NIC fails (rnicsim "fatal") while a process verifies
# transfers: the process gets IBV_EVENT_DEVICE_FATAL, no transfer
# completes with wrong data, its teardown returns, and 20 new contexts are
# each refused with EIO (rnic_hostile fatal); the guest log names the
# failure, and the sweep (LAB_KMEMLEAK_ALL) finds nothing the refusals
# leaked. The device stays failed until the
# driver is reloaded: "down 1" below unloads it, kernel_kick loads it.
dev_fatal() {
	local job out="$LAB_DIR/hostile-fatal" rc=0
	[ "$PEER" = rxe ] && return 0
	[ -n "$HOSTILE" ] || return 1
	job="$(lab_bg 1 "$HOSTILE -d $DEV -T 5000 -t 60 fatal >/tmp/fatal.out 2>&1; rc=\$?; cat /tmp/fatal.out; exit \$rc")" ||
		return 1
	lab_exec 1 --timeout 60 "for i in \$(seq 300); do
			grep -q '^fatal: ready' /tmp/fatal.out 2>/dev/null && exit 0
			sleep 0.1
		done
		echo 'rnic_hostile fatal did not get ready' >&2; exit 1" || rc=1
	[ "$rc" = 0 ] && { lab_sim_ctl 1 fatal || rc=1; }
	[ "$rc" = 0 ] || lab_kill 1 "$job"
	lab_wait 1 "$job" --timeout 90 >"$out" 2>&1 || rc=1
	cat "$out"
	lab_exec 1 --timeout 30 "dmesg >/tmp/dmesg.txt
		grep -E 'device fatal error' /tmp/dmesg.txt | tail -2
		grep -qE 'device fatal error' /tmp/dmesg.txt" || rc=1
	grep -q '^hostile fatal: ok' "$out" || rc=1
	return "$rc"
}
check "vm1's NIC fails under a process's transfers: DEVICE_FATAL reaches it, no wrong data, its teardown returns, 20 new contexts refused with EIO" dev_fatal || true

# unload_busy: rmmod rnic in vm2 while a process has its context open and
# verifies transfers: ib_core disassociates the context (the mappings are
# revoked), rmmod returns, and the process fails (an error, or its own
# timeout), never hangs the unload or the guest.
unload_busy() {
	uv_cut_busy 2 "$HOSTILE" "$DEV" "$LAB_DIR/unload-busy" \
		"sleep 4; time rmmod rnic && ! grep -w '^rnic' /proc/modules"
}
# unbind_busy: vm2's device unbound through sysfs while a process has its
# context open and verifies transfers: the same disassociation as rmmod
# with the module still loaded, so what stays behind in the module (names,
# indices, its pages) meets a probe again. The unbind returns, the
# process fails, the device is gone; bound again, it comes back as $DEV
# with its addresses and a uverbs device, and a new process's transfers
# (3 s of them) verify.
unbind_busy() {
	local rc=0 out="$LAB_DIR/unbind-busy"
	uv_cut_busy 2 "$HOSTILE" "$DEV" "$out" "set -e
		bdf=\$(basename \$(readlink -f /sys/class/infiniband/$DEV/device))
		echo \"$DEV is PCI \$bdf\"
		echo \$bdf >/tmp/unbound
		sleep 4
		time echo \$bdf >/sys/bus/pci/drivers/rnic/unbind
		[ ! -e /sys/class/infiniband/$DEV ]
		grep -qw '^rnic' /proc/modules" || rc=1
	attach 2 'cat /tmp/unbound >/sys/bus/pci/drivers/rnic/bind' || return 1
	lab_exec 2 --timeout 60 "$HOSTILE -d $DEV -T 10000 -t 3 traffic" >"$out.after" 2>&1 || rc=1
	cat "$out.after"
	grep -q '^hostile traffic: ok' "$out.after" || rc=1
	return "$rc"
}
down() {
	if [ "$PEER" = rxe ]; then
		lab_exec "$1" --timeout 60 "rdma link delete rxe0 && rmmod rdma_rxe"
	else
		lab_exec "$1" --timeout 60 "rmmod rnic && ! grep -w '^rnic' /proc/modules"
	fi
}
check "vm1: no process left: the driver unloads (the device failed)" down 1 || true

# kernel_kick: vm1 reloaded with user_kick_map=0 says its processes kick
# through the kernel; librnic then makes a system call (a post with no
# work requests naming its slot) for each send post (receive posts need
# none: the device reads receive slots itself, RNIC_UCTX_F_RQ_PEEK):
# ibv_rc_pingpong's 500 exchanges (a send each, so at least 500 such
# calls) under strace, data checked (-c), the device's kicks rising (it
# counts kicks it found entries for, so posts close together count once).
# Then rmmod again. (rxe: nothing to switch.)
kernel_kick() {
	local n=500 cv2 calls k0 k1
	[ "$PEER" = rnic ] || return 0
	up 1 user_kick_map=0 || return 1
	lab_exec 1 --timeout 60 "echo \"user_kick_map: \$(cat /sys/module/rnic/parameters/user_kick_map)\"
		dmesg | grep 'user contexts' | tail -1 | tee /tmp/kick.msg
		grep -q 'kick through the kernel: user_kick_map=0' /tmp/kick.msg" || return 1
	cv2=$(uv_gid_index 1 "$DEV" "$CLI4" "RoCE v2") || return 1
	k0="$(kicks)" || return 1
	uv_pair kkick "ibv_rc_pingpong -d $DEV -g $GV2 -c -n $n -s 4096" \
		"strace -f -c -e trace=write,ioctl -o /tmp/strace-kk.txt ibv_rc_pingpong -d $DEV -g $cv2 -c -n $n -s 4096 $SRV4 && cat /tmp/strace-kk.txt" \
		tcp:18515 || return 1
	k1="$(kicks)" || return 1
	uv_iters "$LAB_DIR/uv-kkick.client" "$n" || return 1
	calls="$(strace_calls "$LAB_DIR/uv-kkick.client")"
	echo "write+ioctl system calls of the client: ${calls:-none found} for $n exchanges"
	echo "device kicks (vm1): $k0 -> $k1"
	[ -n "$calls" ] && [ "$calls" -ge "$n" ] && [ "$k1" -gt "$k0" ] || return 1
	down 1
}
check "vm1: user_kick_map=0: processes kick through the kernel (a system call per send post), data checked; rmmod" kernel_kick || true
if [ "$PEER" = rnic ]; then
	check "vm2: unbind through sysfs with a process verifying transfers: it completes, the process fails; bound again, transfers verify" unbind_busy || true
	check "vm2: rmmod rnic with a process verifying transfers: the unload completes, the process fails, no hang" unload_busy || true
else
	check "vm2: no process left: the driver unloads" down 2 || true
fi

lab_stop
echo "# test_rnic_uverbs: $(lab_elapsed "$T0") s"
exit "$fail"
