#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# The verbs path on ABI 2.0 (the NIC runs the IB transport; the only ABI
# the driver speaks) between two rnic VMs, and a NIC that serves another
# ABI left alone:
#  - the driver enables ABI 2.0 (kernel log), rnic0 comes up ACTIVE and
#    the device's GID table mirrors ib_core's;
#  - rnic_perf over RC: SEND into an SRQ whose limit event must come, and
#    over UD (GSI carries the CM and SIDR MADs), every byte verified on
#    both sides (the other RC operations: test_perf_rnic.sh);
#  - NVMe over Fabrics (nvmet-rdma in vm2, nvme-rdma in vm1): fio writes
#    32 MiB with crc32c verify headers and reads it back verified (memory
#    registration and SEND_WITH_INV as the NVMe drivers use them); the
#    invalidation is shown to be the target's: the host's receive
#    completions with IB_WC_WITH_INVALIDATE (remote_invs) rise with the
#    I/Os and it posts no LOCAL_INV (local_invs), which nvme-rdma does
#    only when the target did not invalidate (Documentation/ulp-verbs.rst);
#  - the driver's bad-CQE / unknown-object counters stay 0;
#  - rmmod rnic with rnic_perf's connections gone;
#  - a VM whose rnicsim advertises ABI 1.0 only (--signature-abi 1, as an
#    old firmware would): rnic loads, binds nothing, and its message says
#    the driver needs ABI 2.0.
# rping (rdmacm-utils) needs a userspace verbs provider, which rnic does
# not have yet (DESIGN.md: "a userspace provider comes later"), so the
# kernel ULP rnic_perf stands in for it here.
#
# RNIC_KO / RNIC_PERF_KO: insmod freshly built modules instead of the
# DKMS install (built against the kernel the lab boots).
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

SUITE="rnic abi2"
T0="$(lab__now_us)"
lab_start rnic_abi2 || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_abi2"
	exit 1
}
# 3 boots; 5 set-up checks, 3 rnic_perf runs, 5 NVMe-oF checks, 2 after
# them, 1 on the ABI 1.0 NIC; then one kernel log sweep per VM.
lab_plan 20 3
perf_checks_init
if [ -n "${RNIC_KO:-}" ]; then
	preflight rnicsim
	[ -n "${RNIC_PERF_KO:-}" ] || preflight rnic_perf
else
	preflight rnic rnic_perf rnicsim
fi

# 1 GiB: nvmet's namespace is a file on vm2's tmpfs, fio's buffers in vm1
lab_vm 1 --rnic --mem 1G
lab_vm 2 --rnic --mem 1G
# a NIC whose firmware serves ABI 1.0 alone
lab_vm 3 --rnic --rnicsim-arg --signature-abi --rnicsim-arg 1
boot_vms 1 2 3

# load N OPTIONS: what the VM's modprobe/insmod of rnic says and returns
load() {
	local n="$1" load
	shift
	load="modprobe rnic $*"
	[ -z "${RNIC_KO:-}" ] || load="modprobe ib_core && insmod $RNIC_KO $*"
	lab_exec "$n" --timeout 60 "$load"
}

# abi_in N MAJOR: the probe line names the ABI in effect
abi_in() {
	lab_exec "$1" --timeout 30 "dmesg | grep -E 'rnic .*ABI $2\\.1, MAC'"
}
check_vms "1 2" "rnic0 ACTIVE (ABI 2.1), rnic_perf loaded" rnic_up || exit 1
check "vm1, vm2: kernel log says ABI 2.1" eval 'abi_in 1 2 && abi_in 2 2' || true

# gids N: the device's GID table holds the netdev's IPv4 address (its
# RoCE v2 GID is what rnic_perf's connection below is addressed to)
SRV="$(lab_addr 2 rnic 4)"
gids() {
	local a b c d want
	IFS=. read -r a b c d <<<"$(lab_addr "$1" rnic 4)"
	want="$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")"
	echo "want $want as a RoCE v2 GID"
	# shellcheck disable=SC2016 # expanded in the guest
	lab_exec "$1" --timeout 30 'cd /sys/class/infiniband/rnic0/ports/1
		for f in gids/*; do
			n=${f##*/}
			IFS= read -r g <$f
			[ "$g" = '"$want"' ] || continue
			IFS= read -r t <gid_attrs/types/$n 2>/dev/null && echo "$n $g $t"
		done; true' | grep -E " RoCE v2$"
}
check "vm2: ib_core's GID table has the netdev's address" gids 2 || true
need "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV"

FIGURES="$LAB_DIR/figures"
: >"$FIGURES"
# The RC operations (SEND with SGEs, inline and immediate, WRITE, READ,
# the atomics) run in test_perf_rnic.sh's RoCE v2 pass, the same runs;
# here UD and the SRQ, then NVMe-oF, give the counters below their
# traffic.
perf_case "ABI 2: UD SEND 512 B, depth 8, 100 verified" 1 2 "$SRV" --timeout 240 \
	qp=ud op=send size=512 depth=8 count=100
# rnic_perf's UD runs take one SGE
perf_case "ABI 2: UD SEND_WITH_IMM 1000 B, 100 verified" 1 2 "$SRV" --timeout 240 \
	qp=ud op=send_imm size=1000 depth=8 count=100
# srq_limit_run: an SRQ run whose limit event (EQE SRQ_LIMIT on event
# queue 0, armed by modify_srq) reaches the server's event handler
# exactly once, before its QP's LAST_WQE_REACHED (perf_srq_teardown_ok);
# the buffer that crosses the limit is the 65th of 104.
srq_limit_run() {
	local out line
	out="$(perf_verified 1 2 "$SRV" --timeout 240 srq=1 srq_limit=40 \
		op=send size=2048 depth=8 count=100)" || {
		echo "$out"
		return 1
	}
	echo "$out"
	line="$(grep '^server' <<<"$out" | tail -1)"
	perf_srq_teardown_ok 2 "$line" 1
}
check "ABI 2: RC SEND 2 KiB into an SRQ, 100 verified, srq_limit 40: one limit event, the QP drained on LAST_WQE_REACHED" \
	srq_limit_run || true

MB=32
check "ABI 2: vm2: nvmet-rdma target on $SRV:$NVME_PORT, $MB MiB namespace" \
	nvmet_up 2 "$SRV" "$MB" || true
DEV=""
hw_stats 1 rnic0/1 >"$LAB_DIR/inv-before" 2>&1 || true
connect() { DEV="$(nvme_host_up 1 "$SRV")" && echo "$DEV"; }
check "ABI 2: vm1: nvme connect -t rdma to $SRV" connect || true
t="$(lab__now_us)"
check "ABI 2: vm1: fio writes $MB MiB to ${DEV:-the namespace} and reads it back verified (crc32c)" \
	nvme_verify 1 "$DEV" "$MB" 600 || true
echo "# ABI 2: fio $MB MiB write+verify: $(lab_elapsed "$t") s"
grep -E 'WRITE:|READ:' "$OUT/$nchk.log" | sed 's/^ */# /' || true
# remote_inv: nvme-rdma asks the target to invalidate each request's
# rkey; nvmet-rdma answers with SEND_WITH_INV, so vm1's receive
# completions carry IB_WC_WITH_INVALIDATE and nvme-rdma posts no
# LOCAL_INV of its own; a wrong rkey would have been logged as "Bogus
# remote invalidation" (and the connection reset). At least one per
# 128 KiB write of the first pass.
remote_inv() {
	local a="$LAB_DIR/inv-after" b="$LAB_DIR/inv-before" r l
	hw_stats 1 rnic0/1 >"$a" || return 1
	if ! grep -q '^remote_invs ' "$a" || ! grep -q '^local_invs ' "$a" ||
		! grep -q '^remote_invs ' "$b"; then
		echo "remote_invs or local_invs missing from rdma statistic"
		return 1
	fi
	r=$(($(stat_of "$a" remote_invs) - $(stat_of "$b" remote_invs)))
	l=$(($(stat_of "$a" local_invs) - $(stat_of "$b" local_invs)))
	echo "vm1 (nvme-rdma host): remote_invs +$r, local_invs +$l"
	lab_exec 1 --timeout 30 "! dmesg | grep 'Bogus remote invalidation'" || return 1
	[ "$r" -ge $((MB * 8)) ] && [ "$l" = 0 ]
}
check "ABI 2: vm1: nvmet-rdma invalidated the host's MRs remotely (remote_invs >= $((MB * 8)), no LOCAL_INV, no bogus rkey)" \
	remote_inv || true
check "ABI 2: vm1: nvme disconnect" nvme_host_down 1 || true
check "ABI 2: vm2: target removed" nvmet_down 2 || true

# clean_counters N: no CQE or event the driver had to refuse
clean_counters() {
	local f="$LAB_DIR/stats-vm$1" k v bad=0
	hw_stats "$1" rnic0/1 >"$f"
	for k in bad_cqes cqe_unknown_qp bad_eqes eq_unknown_cq bad_srq_drops async_unknown_obj \
		qp_err_by_driver deferred_frees; do
		v="$(awk -v k="$k" '$1 == k { print $2 }' "$f")"
		echo "vm$1 $k ${v:-missing}"
		[ "${v:-x}" = 0 ] || bad=1
	done
	# the NIC's transport counters, then its port counters (hw_*)
	for k in rc_req_packets ud_send_packets retransmits hw_tx_roce_v2_frames \
		hw_rx_roce_v2_frames hw_tx_roce_v1_frames; do
		echo "vm$1 $k $(stat_of "$f" "$k")"
	done
	[ "$(stat_of "$f" rc_req_packets)" -gt 0 ] || bad=1
	[ "$(stat_of "$f" hw_tx_roce_v2_frames)" -gt 0 ] || bad=1
	[ "$(stat_of "$f" hw_rx_roce_v2_frames)" -gt 0 ] || bad=1
	# present and 0: a missing counter must not pass as "no v1 frames"
	v="$(awk '$1 == "hw_tx_roce_v1_frames" { print $2 }' "$f")"
	[ "${v:-x}" = 0 ] || bad=1
	return "$bad"
}
check "ABI 2: no bad CQE/EQE/SRQ-slot report, unknown object or deferred free; the NIC counted RC packets and RoCE v2 (not v1) frames each way (both VMs)" \
	eval 'clean_counters 1 && clean_counters 2' || true
check "ABI 2: rmmod rnic in both VMs after the runs" eval 'rnic_down 1 && rnic_down 2' || true

# refuse_old N: VM N's NIC serves ABI 1.0 alone: the module loads, binds
# nothing, and says what it needs
refuse_old() {
	load "$1" || return 1
	lab_exec "$1" --timeout 30 "ls /sys/class/infiniband/ 2>/dev/null; ls /sys/bus/pci/drivers/rnic/"
	if lab_exec "$1" --timeout 30 "ls /sys/bus/pci/drivers/rnic/ | grep '^0000:' >/dev/null || ls /sys/class/infiniband/ 2>/dev/null | grep rnic >/dev/null"; then
		echo "the ABI 1.0 NIC was bound"
		return 1
	fi
	lab_exec "$1" --timeout 30 "dmesg | grep -E 'rnic serves ABI 1\.[0-9]+ \(majors 0x2\); this driver needs ABI 2\.0'" &&
		lab_exec "$1" --timeout 30 "rmmod rnic"
}
check "vm3 (NIC serves ABI 1.0 only): rnic loads, binds nothing, and says it needs ABI 2.0" refuse_old 3 || true

lab_stop
echo "# test_rnic_abi2: $(lab_elapsed "$T0") s"
exit "$fail"
