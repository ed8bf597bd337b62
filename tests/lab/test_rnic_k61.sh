#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
# shellcheck disable=SC2317 # functions are called through check
#
# rnic on Debian 12's default kernel, 6.1 ($RNIC_CACHE/kver61, installed by
# scripts/install-deps.sh; rnic DKMS-installed for it by
# scripts/dkms-install.sh, drivers/rnic_compat.h). The test picks its own
# kernels: vm1 and vm2 boot 6.1, vm3 boots the 6.12 lab kernel
# (lab_vm --kver), whatever kernel the runner names.
#  - DKMS built and installed rnic and rnic_perf for 6.1; dkms.conf skips
#    kernels older than 6.1;
#  - vm1, vm2: modprobe rnic takes its options from /etc/modprobe.d (the
#    DKMS module from updates/dkms); the GID table has RoCE v1 and v2 GIDs
#    of both addresses; 16 MiB of TCP over the netdevs with a 64-entry
#    ring (BQL and the TX wake of the compat code);
#  - RoCE v1, then v2, chosen with rdma_cm's configfs on every VM:
#    rnic_perf SEND, WRITE, READ, CMP_SWAP, FETCH_ADD vm1 -> vm2, every byte
#    verified, and the per-version counters; 6.1 <-> 6.12: WRITE vm1 ->
#    vm3 and READ vm3 -> vm1;
#  - NVMe-oF (RoCE v2): a target on vm2 (6.1), 64 MiB written and verified
#    with fio from vm1 (6.1), then from vm3 (6.12);
#  - userspace verbs through librnic on 6.1: ibv_rc_pingpong -c vm1 -> vm2,
#    ib_write_bw vm3 (6.12) -> vm2 (6.1);
#  - vm1 reloaded with PFC on: a pause storm fills its TX ring, the queue
#    stops and is woken;
#  - rmmod rnic on the 6.1 VMs (their NAPI dummy netdev is freed the 6.1
#    way), vm2's while a process verifies transfers through librnic (the
#    context disassociated: rmmod returns, the process fails); lab_stop
#    sweeps every console.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"  # and lib_check.sh
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"
# shellcheck source=tests/lab/lib_uverbs.sh
. "$(dirname "$0")/lib_uverbs.sh"

SUITE="rnic on 6.1"
T0="$(lab__now_us)"
K61="$(cat "$RNIC_CACHE/kver61" 2>/dev/null || true)"
K612="$(cat "$RNIC_CACHE/kver" 2>/dev/null || true)"
MB=64
CONF="roce_mode=3 eth_ring_size=64"
if [ -z "$K61" ]; then
	echo "1..1"
	lab_not_ok "$SUITE: Debian 12's 6.1 kernel is installed ($RNIC_CACHE/kver61; run scripts/install-deps.sh)" \
		"$RNIC_CACHE"
	exit 1
fi
# The lab's kernel; vm3 boots $K612 with lab_vm --kver.
export RNIC_LAB_KVER="$K61"

lab_start rnic_k61 || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_k61"
	exit 1
}
# host 2, boots 3, loads 3, GIDs 2, Ethernet 1, perf servers 3, per RoCE
# version 3 configfs + 5 ops + 1 counters + 2 between kernels, NVMe-oF 6,
# userspace 2, TX stop/wake 1, rmmod 2
lab_plan $((2 + 3 + 3 + 2 + 1 + 3 + 2 * (3 + 5 + 1 + 2) + 6 + 2 + 1 + 2)) 3
perf_checks_init
perf_preflight
# vm3's kernel too.
RNIC_LAB_KVER="$K612" preflight rnic rnic_perf

# ---------------------------------------------------------------- host

dkms_built() {
	local m f
	dkms status -m rnic -k "$K61"
	dkms status -m rnic -k "$K61" | grep ": installed" >/dev/null || return 1
	for m in rnic rnic_perf; do
		f="$(modinfo -k "$K61" -n "$m")" || return 1
		echo "$m: $f, vermagic $(modinfo -k "$K61" -F vermagic "$m")"
		case "$f" in "/lib/modules/$K61/updates/dkms/"*) ;; *) return 1 ;; esac
		modinfo -k "$K61" -F vermagic "$m" | grep "^$K61 " >/dev/null || return 1
	done
}
check "DKMS built and installed rnic and rnic_perf for $K61" dkms_built || true

# What dkms does with a kernel: it skips one its BUILD_EXCLUSIVE_KERNEL
# regex does not match (dkms.conf is a bash fragment dkms sources).
dkms_exclusive() {
	local k re want have
	# shellcheck disable=SC1091 # dkms.conf: variables only
	re="$(set +u && . "$LAB_REPO/dkms.conf" && echo "$BUILD_EXCLUSIVE_KERNEL")"
	[ -n "$re" ] || return 1
	for k in "$K61" "$K612" 6.12.117-rnic-debug:y 6.0.0-0.deb11.6-amd64:n \
		5.10.0-30-amd64:n 4.19.0-27-amd64:n; do
		want=y
		case "$k" in *:n) want=n ;; esac
		k="${k%:?}"
		if [[ "$k" =~ $re ]]; then have=y; else have=n; fi
		echo "$k: build=$have (want $want)"
		[ "$have" = "$want" ] || return 1
	done
}
check "dkms.conf builds for 6.1 and later, skips older kernels" dkms_exclusive || true

# ---------------------------------------------------------------- boot

lab_vm 1 --rnic --mem 1G
lab_vm 2 --rnic --mem 1G
lab_vm 3 --rnic --mem 1G --kver "$K612"
# boot_vms's check, and the kernel each VM runs.
booted() { lab_wait_ready "$1" && lab_exec "$1" uname -r | grep -qx "$2"; }
bad=0
for n in 1 2 3; do
	k="$K61"
	[ "$n" = 3 ] && k="$K612"
	check "vm$n boots $k to the agent" booted "$n" "$k" || bad=1
done
[ "$bad" = 0 ] || exit 1

# modprobe rnic with its options from /etc/modprobe.d (in the guest's
# overlay): the DKMS module, the options in force, rnic0 ACTIVE.
conf_up() {
	local n="$1"
	lab_exec "$n" "echo 'options rnic $CONF' > /etc/modprobe.d/rnic.conf" &&
		rnic_up "$n" &&
		lab_exec "$n" "set -e
			f=\$(modinfo -n rnic); echo \"module \$f\"
			case \$f in /lib/modules/$K61/updates/dkms/rnic.ko*) ;; *) exit 1 ;; esac
			cd /sys/module/rnic/parameters
			echo \"roce_mode=\$(cat roce_mode) eth_ring_size=\$(cat eth_ring_size)\" |
				tee /dev/stderr | grep -x '$CONF' >/dev/null"
}
check_vms "1 2" "modprobe rnic with '$CONF' from /etc/modprobe.d, rnic0 ACTIVE" conf_up || exit 1
need "vm3: modprobe rnic, rnic0 ACTIVE" rnic_up 3

# RoCE v1 and v2 GIDs of the NIC's IPv4 (mapped) and IPv6 addresses;
# ib_core adds them from its netdev notifier work, so wait a little.
gids_both() {
	local n="$1" i dump g t ok
	local gids=("$(printf '0000:0000:0000:0000:0000:ffff:0a14:%04x' "$n")"
		"$(printf 'fd00:0020:0000:0000:0000:0000:0000:%04x' "$n")")
	for i in $(seq 30); do
		dump="$(lab_exec "$n" "cd /sys/class/infiniband/rnic0/ports/1
			for f in gid_attrs/types/*; do
				IFS= read -r t <\$f 2>/dev/null || continue
				IFS= read -r g <gids/\${f##*/}
				echo \"\$g|\$t\"
			done; true")" || return 1
		ok=1
		for g in "${gids[@]}"; do
			for t in "IB/RoCE v1" "RoCE v2"; do
				grep -qxF "$g|$t" <<<"$dump" || ok=0
			done
		done
		if [ "$ok" = 1 ]; then
			echo "$dump"
			return 0
		fi
		sleep 0.5
	done
	echo "want ${gids[*]}, each IB/RoCE v1 and RoCE v2; have:"
	echo "$dump"
	return 1
}
for n in 1 2; do
	check "vm$n: GID table: RoCE v1 and v2 GIDs of 10.20.0.$n and fd00:20::$n" \
		gids_both "$n" || true
done

# 16 MiB of TCP vm1 -> vm2 through a 64-entry TX ring: every completion
# must reach BQL, or BQL stops the queue for good (the compat TX wake);
# ethtool -S names the counters (the compat ethtool_puts). Whether the
# ring fills, and the queue stops and wakes, depends on timing: the
# counts are printed, not required.
tcp_bulk() {
	local job got
	job="$(lab_bg 2 "busybox nc -l -p 5001 | wc -c")" || return 1
	lab_exec 2 --timeout 30 "for i in \$(seq 100); do
			ss -ltn | grep ':5001 ' >/dev/null && exit 0; sleep 0.1; done; exit 1" || return 1
	lab_exec 1 --timeout 120 "head -c 16777216 /dev/zero >/dev/tcp/10.20.0.2/5001" || {
		lab_kill 2 "$job"
		return 1
	}
	got="$(lab_wait 2 "$job" --timeout 60)" || return 1
	echo "received $got bytes"
	[ "$got" = 16777216 ] || return 1
	lab_exec 1 "ethtool -S \$(rdma link show rnic0/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')" |
		tee "$LAB_DIR/vm1-ethtool-S" | grep -E '^ +tx0_(packets|stopped|woken):' || return 1
	grep -qE '^ +tx0_packets: [1-9]' "$LAB_DIR/vm1-ethtool-S" &&
		grep -qE '^ +port_tx_eth_frames: [1-9]' "$LAB_DIR/vm1-ethtool-S"
}
check "vm1 -> vm2: 16 MiB of TCP over the rnic netdevs (64-entry ring); ethtool -S names the counters" \
	tcp_bulk || true
echo "# vm1 TX ring:$(grep -E '^ +tx0_(stopped|woken):' "$LAB_DIR/vm1-ethtool-S" 2>/dev/null | tr -s ' \n' ' ')"

# ---------------------------------------------------------------- RDMA

for n in 1 2 3; do
	need "vm$n: rnic_perf server on $(lab_addr "$n" rnic 4)" \
		perf_server "$n" "$(lab_addr "$n" rnic 4)"
done

# run FROM TO WHAT ARGS...: one verified rnic_perf run, client in VM FROM,
# server in VM TO; its figures as a comment.
run_one() {
	local from="$1" to="$2" line
	shift 2
	line="$(perf_run "$from" "$(lab_addr "$to" rnic 4)" --timeout 150 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	perf_check "$to" "$line"
}
run() {
	local from="$1" to="$2" what="$3" line
	shift 3
	check "$what" run_one "$from" "$to" "$@" || true
	line="$(grep '^client' "$OUT/$nchk.log" | tail -1 || true)"
	[ -z "$line" ] || echo "# $(perf_summary "$line")"
}

for v in 1 2; do
	if [ "$v" = 1 ]; then mode="IB/RoCE v1"; else mode="RoCE v2"; fi
	other=$((3 - v))
	for n in 1 2 3; do
		check "RoCE v$v: vm$n: configfs default_roce_mode \"$mode\"" \
			roce_mode "$n" rnic0 "$mode" || true
	done
	hw_stats 1 rnic0/1 >"$LAB_DIR/stats-v$v-before" 2>&1 || true
	t="$(lab__now_us)"
	run 1 2 "RoCE v$v: 6.1 -> 6.1: SEND 4 KiB, 2 SGEs, 200 verified" \
		op=send size=4096 sge=2 depth=8 count=200
	run 1 2 "RoCE v$v: 6.1 -> 6.1: RDMA WRITE 64 KiB, 64 verified" \
		op=write size=65536 depth=16 count=64
	run 1 2 "RoCE v$v: 6.1 -> 6.1: RDMA READ 64 KiB, 64 verified" \
		op=read size=65536 depth=16 count=64
	run 1 2 "RoCE v$v: 6.1 -> 6.1: CMP_SWAP, 300 verified" op=cmp_swap depth=8 count=300
	run 1 2 "RoCE v$v: 6.1 -> 6.1: FETCH_ADD, 300 verified" op=fetch_add depth=8 count=300
	hw_stats 1 rnic0/1 >"$LAB_DIR/stats-v$v-after" 2>&1 || true
	counters() {
		roce_version_counted "$LAB_DIR/stats-v$v-before" "$LAB_DIR/stats-v$v-after" "$v"
	}
	check "RoCE v$v: vm1: rdma statistic: RoCE v$v TX/RX packets up, v$other unchanged" \
		counters || true
	run 1 3 "RoCE v$v: 6.1 -> 6.12: RDMA WRITE 64 KiB, 64 verified" \
		op=write size=65536 depth=16 count=64
	run 3 1 "RoCE v$v: 6.12 -> 6.1: RDMA READ 64 KiB, 64 verified" \
		op=read size=65536 depth=16 count=64
	echo "# RoCE v$v runs: $(lab_elapsed "$t") s"
done

# ---------------------------------------------------------------- NVMe-oF

TADDR="$(lab_addr 2 rnic 4)"
nvme_from() {
	local n="$1" dev
	dev="$(nvme_host_up "$n" "$TADDR")" || return 1
	echo "$dev"
	nvme_verify "$n" "$dev" "$MB" 600
}
check "NVMe-oF: vm2 (6.1): nvmet-rdma target on $TADDR:$NVME_PORT, $MB MiB namespace" \
	nvmet_up 2 "$TADDR" "$MB" || true
for n in 1 3; do
	k=6.1
	[ "$n" = 3 ] && k=6.12
	t="$(lab__now_us)"
	check "NVMe-oF: vm$n ($k): nvme connect -t rdma, fio writes $MB MiB and reads it back verified (crc32c)" \
		nvme_from "$n" || true
	echo "# NVMe-oF vm$n ($k) -> vm2 (6.1), $MB MiB: $(lab_elapsed "$t") s"
	grep -E 'WRITE:|READ:' "$OUT/$nchk.log" | sed 's/^ */# /' || true
	check "NVMe-oF: vm$n ($k): nvme disconnect" nvme_host_down "$n" || true
done
check "NVMe-oF: vm2: target removed" nvmet_down 2 || true

# ---------------------------------------------------------------- userspace

# upair NAME CLI_VM SRV_CMD CLI_CMD: a pair with the server in vm2; each
# side's RoCE v2 GID of its IPv4 address.
upair() {
	local c="$2" sg cg
	lab_exec 2 --timeout 60 "modprobe ib_uverbs" && lab_exec "$c" --timeout 60 "modprobe ib_uverbs" &&
		sg="$(uv_gid_index 2 rnic0 "$TADDR" "RoCE v2")" &&
		cg="$(uv_gid_index "$c" rnic0 "$(lab_addr "$c" rnic 4)" "RoCE v2")" || return 1
	UV_CLI="$c" uv_pair "$1" "${3//@G/$sg}" "${4//@G/$cg}" tcp:18515
}
k61_pp() {
	upair pp 1 "ibv_rc_pingpong -d rnic0 -g @G -c -n 300 -s 4096" \
		"ibv_rc_pingpong -d rnic0 -g @G -c -n 300 -s 4096 $TADDR" &&
		uv_iters "$LAB_DIR/uv-pp.server" 300 && uv_iters "$LAB_DIR/uv-pp.client" 300
}
check "userspace (6.1): ibv_rc_pingpong -c 4 KiB x 300 through librnic, vm1 -> vm2" k61_pp || true
k61_bw() {
	upair bw 3 "ib_write_bw -d rnic0 -x @G -s 65536 -n 500 -F" \
		"ib_write_bw -d rnic0 -x @G -s 65536 -n 500 -F $TADDR" &&
		uv_perf_row "$LAB_DIR/uv-bw.client" 65536
}
check "userspace 6.12 -> 6.1: ib_write_bw 64 KiB x 500, vm3 -> vm2" k61_bw || true

# ---------------------------------------------------------------- TX ring

# The TX queue stopping on a full ring and woken by completions, on 6.1
# (netif_txq_completed_wake's fallback): vm1 reloads rnic with PFC on
# priority 0, the Ethernet queue's, and its rnicsim receives a storm of
# XOFF frames, so the device holds every frame, while vm1 sends 1 MiB of
# UDP to vm2. UDP, not TCP: TCP keeps fewer frames in flight than the 64
# of the ring. BQL's minimum limit is raised above the ring so that the
# ring, not BQL, stops the queue. The storm ends once the queue stopped
# (within 3 s, under the 5 s TX watchdog); then the send must finish, the
# queue be woken and the netdev still carry traffic.
# shellcheck disable=SC2016 # expanded in the guest
TX_IF='$(rdma link show rnic0/1 | sed -n "s/.* netdev \([^ ]*\).*/\1/p")'
tx_stop_wake() {
	local tx rc=0
	rnic_down 1 && rnic_up 1 pfc_prio=0 || return 1
	lab_exec 1 "echo 1000000 > /sys/class/net/$TX_IF/queues/tx-0/byte_queue_limits/limit_min &&
		ping -c 1 -W 5 10.20.0.2" || return 1
	lab_sim_ctl 1 fault pause=0:1000/s || return 1
	# Nothing listens on port 9: vm2's port unreachable may end the send
	# early (ECONNREFUSED), which is fine once the ring has filled.
	tx="$(lab_bg 1 "head -c 1048576 /dev/zero >/dev/udp/10.20.0.2/9; true")" || rc=1
	[ "$rc" = 1 ] || lab_exec 1 --timeout 30 "for i in \$(seq 30); do
			ethtool -S $TX_IF | grep -E '^ +tx0_stopped: [1-9]' && exit 0
			sleep 0.1
		done; exit 1" || rc=1
	lab_sim_ctl 1 fault pause=off || return 1
	[ "$rc" = 0 ] || return 1
	lab_wait 1 "$tx" --timeout 120 || return 1
	lab_exec 1 "ethtool -S $TX_IF | grep -E '^ +(tx0_(packets|stopped|woken)|port_rx_pause):'
		ping -c 3 -W 5 10.20.0.2 >/dev/null" | tee "$LAB_DIR/vm1-stop-wake" || return 1
	grep -qE '^ +tx0_woken: [1-9]' "$LAB_DIR/vm1-stop-wake"
}
check "vm1: a PFC pause fills the TX ring: the queue stops, completions wake it, traffic goes on" \
	tx_stop_wake || true
echo "# vm1 TX ring under the pause:$(grep -E 'tx0_(stopped|woken)' "$LAB_DIR/vm1-stop-wake" 2>/dev/null | tr -s ' \n' ' ')"

# ---------------------------------------------------------------- unload

unload() {
	rnic_down "$1" && lab_exec "$1" "! grep -qw ^rnic /proc/modules"
}
check_vms "1" "rmmod rnic (its NAPI dummy netdev freed)" unload || true
# unload_busy: rmmod rnic in vm2 while a process (rnic_hostile traffic)
# has its context open and verifies transfers: 6.1's ib_core zaps the
# context's mappings and calls disassociate_ucontext the way 6.12's does;
# rmmod returns, the process fails, nothing hangs.
unload_busy() {
	local hostile
	hostile="$(bash "$LAB_REPO/scripts/rdma-core.sh" path-hostile)" || return 1
	uv_cut_busy 2 "$hostile" rnic0 "$LAB_DIR/unload-busy" \
		"sleep 4; time rmmod rnic && ! grep -qw '^rnic' /proc/modules"
}
check "vm2: rmmod rnic with a process verifying transfers: the unload completes, the process fails, no hang" unload_busy || true

lab_stop
echo "# test_rnic_k61: $(lab_elapsed "$T0") s"
exit "$fail"
