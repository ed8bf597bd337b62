#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# NVMe over Fabrics on RoCE v1, rnic <-> rnic (the DKMS-installed rnic and
# rnic_perf; scripts/dkms-install.sh first): rdma_cm's configfs
# default_roce_mode "IB/RoCE v1" on both VMs, an nvmet-rdma target in vm2,
# `nvme connect -t rdma` from vm1, fio writes NVMEOF_MB MiB (default 64)
# with crc32c verify headers and reads it all back verified; the host has
# a poll queue (--nr-poll-queues=1: nvme-rdma's IB_POLL_DIRECT CQ, polled
# by the submitter, never armed), and fio with io_uring --hipri writes
# and verifies 16 MiB through it. The target runs with use_srq=1: every
# queue receives from the SRQs nvmet-rdma shares per completion vector,
# each receive a command buffer plus an in-capsule data page (two SGEs);
# fio's 4 KiB writes go in-capsule (inside the command's SEND, no RDMA
# READ: vm1's read_requests_rcvd must not move), and after the disconnect
# every nvmet QP is drained through ib_drain_qp's SRQ path, which waits
# 60 s, silently, for an IB_EVENT_QP_LAST_WQE_REACHED that never comes;
# then:
#  - on the bridge, the RDMA traffic (the CM exchange and every NVMe/RDMA
#    frame) is Ethertype 0x8915, all of it decoded by tshark as InfiniBand,
#    enough bytes of it to have carried the data both ways; no UDP 4791, no
#    malformed frame or expert error (but for a tshark NVMe dissector
#    artefact, see on_wire);
#  - rdma statistic: RoCE v1 TX/RX packets went up on both VMs, the v2
#    counters did not move.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

MB="${NVMEOF_MB:-64}"
SUITE="nvmeof roce v1"
T0="$(lab__now_us)"
lab_start nvmeof_roce_v1 || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/nvmeof_roce_v1"
	exit 1
}
# boots 2, devices 2, target 1, connect 1, SRQs 1, fio 1, polled fio 1,
# in-capsule 1, disconnect 1, drained 1, target removed 1, wire 1,
# counters 2
lab_plan 16 2
perf_checks_init
perf_preflight

# Two vCPUs each: the driver's posts, completion handlers and teardown
# run on two CPUs at once (MTTCG).
lab_vm 1 --rnic --mem 1G --smp 2
lab_vm 2 --rnic --mem 1G --smp 2
boot_vms 1 2
up() { rnic_up "$1" && roce_mode "$1" rnic0 "IB/RoCE v1"; }
check_vms "1 2" "rnic0 ACTIVE, default_roce_mode \"IB/RoCE v1\"" up || exit 1

TADDR="$(lab_addr 2 rnic 4)"
check "vm2: nvmet-rdma target (use_srq=1) on $TADDR:$NVME_PORT, ${MB} MiB namespace" \
	nvmet_up 2 "$TADDR" "$MB" use_srq=1 || exit 1
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-before" 2>&1 || true
done
PCAP="$LAB_DIR/nvmeof-roce-v1.pcap"
lab_capture_start "$PCAP"
DEV=""
connect() { DEV="$(nvme_host_up 1 "$TADDR" --nr-poll-queues=1)" && echo "$DEV"; }
check "vm1: nvme connect -t rdma to $TADDR over RoCE v1, one poll queue" connect || exit 1
# Each SRQ lists the QPs that receive from it ("lqpn 3-5,9"): every RC QP
# of vm2 (nvmet's, one per NVMe queue) must be on one of the lists.
srqs() {
	local out
	out="$(lab_exec 2 --timeout 60 "set -e
		grep -qx Y /sys/module/nvmet_rdma/parameters/use_srq
		rdma resource show srq dev rnic0
		rdma resource show qp link rnic0/1 | grep 'type RC'")" || return 1
	echo "$out"
	awk '/ srqn / && /\[nvmet_rdma\]/ {
			srqs++
			for (i = 1; i < NF; i++) if ($i == "lqpn") {
				n = split($(i + 1), r, ",")
				for (j = 1; j <= n; j++) {
					if (split(r[j], ab, "-") == 1) ab[2] = ab[1]
					for (q = ab[1]; q <= ab[2]; q++) on[q] = 1
				}
			}
		}
		/ type RC / { for (i = 1; i < NF; i++) if ($i == "lqpn") qp[$(i + 1)] = 1 }
		END {
			for (q in qp) { rc++; if (!(q in on)) { print "QP " q " is on no SRQ"; bad++ } }
			printf "%d SRQs of nvmet_rdma, %d RC QPs\n", srqs, rc
			exit !(srqs >= 1 && rc >= 2 && !bad)
		}' <<<"$out"
}
check "vm2: nvmet-rdma's queues receive from shared receive queues (rdma resource: every RC QP on an SRQ)" srqs || true
t="$(lab__now_us)"
check "vm1: fio writes ${MB} MiB to $DEV and reads it back verified (crc32c), RoCE v1" \
	nvme_verify 1 "$DEV" "$MB" 900 || true
echo "# fio ${MB} MiB write+verify: $(lab_elapsed "$t") s"
grep -E 'WRITE:|READ:' "$OUT/$nchk.log" | sed 's/^ */# /' || true
# polled: the namespace's queue polls (io_poll 1: the controller has a
# poll queue) and rnic0 has a CQ that nvme-rdma polls directly
# (rdma resource: poll-ctx DIRECT); fio's io_uring --hipri I/O, which
# io_uring refuses on a queue that cannot poll, writes 16 MiB and reads
# it back verified.
polled() {
	lab_exec 1 --timeout 300 "set -e
		p=\$(cat /sys/block/${DEV#/dev/}/queue/io_poll)
		c=\$(rdma resource show cq dev rnic0 | grep -c 'poll-ctx DIRECT' || true)
		echo \"$DEV: io_poll \$p; rnic0 CQs polled directly: \$c\"
		[ \"\$p\" = 1 ] && [ \"\$c\" -ge 1 ]
		fio --name=polled --filename=$DEV --rw=write --bs=64k --size=16M \\
			--direct=1 --ioengine=io_uring --hipri --iodepth=4 \\
			--verify=crc32c --do_verify=1 --verify_fatal=1 >/tmp/fio-poll.out 2>&1 ||
			{ cat /tmp/fio-poll.out; exit 1; }
		grep -E '^ *(WRITE|READ):|err=' /tmp/fio-poll.out
		grep -q 'err= 0' /tmp/fio-poll.out &&
			grep -Eq '^ *WRITE: .* io=16(\\.0)?MiB ' /tmp/fio-poll.out &&
			grep -Eq '^ *READ: .* io=16(\\.0)?MiB ' /tmp/fio-poll.out"
}
check "vm1: fio io_uring --hipri writes 16 MiB and reads it back verified through the poll queue (IB_POLL_DIRECT CQ)" \
	polled || true
# In-capsule writes: up to nvmet's in-capsule size (4 KiB by default)
# nvme-rdma puts a write's data in the command's SEND, which lands in the
# target's receive (here an SRQ's) behind the command; the target reads
# nothing from the host. Written and read back verified; meanwhile vm1's
# NIC served no RDMA READ and sent at least one request per I/O.
incapsule() {
	local b="$LAB_DIR/stats-ic-before" a="$LAB_DIR/stats-ic-after" r w
	hw_stats 1 rnic0/1 >"$b" || return 1
	nvme_verify 1 "$DEV" 4 300 4k || return 1
	hw_stats 1 rnic0/1 >"$a" || return 1
	r="$(stat_delta "$b" "$a" read_requests_rcvd)" || return 1
	w="$(stat_delta "$b" "$a" rc_req_packets)" || return 1
	echo "vm1: read_requests_rcvd +$r, rc_req_packets +$w (2048 I/Os)"
	[ "$r" = 0 ] && [ "$w" -ge 2048 ]
}
check "vm1: fio 4 KiB writes of 4 MiB go in-capsule (no RDMA READ by the target) and read back verified" \
	incapsule || true
check "vm1: nvme disconnect" nvme_host_down 1 || true
# Drained: every nvmet QP left ERR through ib_drain_qp's SRQ path, which
# needs the driver's LAST_WQE_REACHED per QP (without it: 60 s each).
check "vm2: every nvmet QP drained (LAST_WQE_REACHED) and destroyed, and its SRQs, within 30 s" \
	rc_qps_gone 2 srq || true
lab_capture_stop "$PCAP"
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-after" 2>&1 || true
done
check "vm2: target removed" nvmet_down 2 || true

# One pass over the capture (it holds the data twice over): per frame its
# Ethertype, UDP destination port, length, BTH opcode (so: decoded as
# InfiniBand) and CM ConnectRequest.  Then the frames with an expert error
# (a malformed frame has one): tshark's NVMe/RDMA dissector decodes every
# packet of a multi-packet RDMA WRITE of NVMe data (the Commands Supported
# and Effects log page at connect) as the start of that data and throws on
# the WRITE Middle/Last packets; those, and only those, are not counted.
on_wire() {
	local sum v1 v1b ib v2 req bad nvme artefact
	sum="$(tshark -r "$PCAP" -T fields -E occurrence=a -E aggregator=, \
		-e eth.type -e udp.dstport -e frame.len -e infiniband.bth.opcode \
		-e infiniband.cm.req 2>/dev/null |
		awk -F '\t' '
			$1 ~ /(^|,)0x8915(,|$)/ { v1++; v1b += $3; if ($4 != "") ib++ }
			$2 ~ /(^|,)4791(,|$)/ { v2++ }
			$5 != "" { req++ }
			END { printf "%d %d %d %d %d\n", v1, v1b, ib, v2, req }')"
	read -r v1 v1b ib v2 req <<<"$sum"
	artefact='nvme && _ws.malformed && (infiniband.bth.opcode == 7 || infiniband.bth.opcode == 8)'
	bad="$(pcap_count "$PCAP" "_ws.expert.severity >= 0x00800000 && !($artefact)")"
	nvme="$(pcap_count "$PCAP" nvme-rdma)"
	echo "Ethertype 0x8915: $v1 frames, $v1b bytes (InfiniBand: $ib, NVMe/RDMA: $nvme), CM REQ: $req"
	echo "UDP 4791: $v2, malformed/expert errors: $bad (not counted: $(pcap_count "$PCAP" "$artefact") RDMA WRITE Middle/Last the NVMe data dissector throws on)"
	# the data crossed twice (written, then read back for the verify)
	[ "$v1" -gt 0 ] && [ "$ib" = "$v1" ] && [ "$v1b" -gt $((2 * MB << 20)) ] &&
		[ "$nvme" -gt 0 ] && [ "$req" -gt 0 ] && [ "$v2" = 0 ] && [ "$bad" = 0 ]
}
check "RoCE v1 on the wire: NVMe/RDMA frames are Ethertype 0x8915, all decoded as InfiniBand (CM REQ among them), >= 2 x ${MB} MiB, no UDP 4791, no malformed/expert errors" \
	on_wire || true

counters() {
	cat "$LAB_DIR/stats-vm$1-after"
	roce_version_counted "$LAB_DIR/stats-vm$1-before" "$LAB_DIR/stats-vm$1-after" 1
}
check_vms "1 2" "rdma statistic: RoCE v1 TX/RX packets up, v2 unchanged" counters || true

lab_stop
echo "# test_nvmeof_roce_v1 (${MB} MiB): $(lab_elapsed "$T0") s"
exit "$fail"
