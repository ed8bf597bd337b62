#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
# lab-weight: 2
# (one VM, but of two vCPUs: beside a one-VM test it and its partner each
# took 30-60% more CPU time and the lab was no faster, ci38)
#
# Scale and limits of rnic with rnic_scale (tools/rnic_scale,
# Documentation/rnic_scale.rst), in one rnic VM on two vCPUs (the debug
# kernel: KASAN, lockdep, kmemleak), every connection an rdma_cm loopback
# through the NIC:
#  - conns: SCALE_CONNS RC connections at once (2 QPs each, each end with
#    its own CQ, completion handlers in softirq and both workqueues),
#    every SEND and RDMA WRITE verified byte by byte; while they are held,
#    rdma resource show counts their QPs; released, the QP count is back;
#  - limits: CQs, QPs, fast-reg MRs and PDs allocated until the driver
#    refuses (the NIC's tables made 1024 entries each, SCALE_TABLE_LOG2):
#    each refusal a clean errno, each count the advertised maximum
#    (ib_device_attr) minus what existed, and one of each allocated again
#    once all were freed;
#  - mr_churn: MRs allocated, fast-registered over fresh pages, written
#    through their rkey, verified, invalidated and freed, SCALE_CHURN times;
#  - cq_overflow: more signalled WRITEs than a CQ of the smallest size
#    holds, never polled: the CQ's handler gets IB_EVENT_CQ_ERR and the QP's
#    IB_EVENT_QP_FATAL, as the verbs define an overflow;
#  - qp_reset: a QP moved to RESET with its WRITEs' CQEs unpolled, then
#    back to RTS: none of them is polled afterwards (the driver scrubbed
#    and counted them), each of the next two WRITEs' CQEs comes first and
#    alone, the QP stays in RTS;
#  - rmmod rnic_scale with connections held, and rnic: everything was
#    freed.
# Every figure is printed as a "# " comment. RNIC_SCALE_KO=path insmods a
# freshly built rnic_scale.ko instead of the DKMS one (RNIC_KO: rnic.ko).
# SCALE_TABLE_LOG2=0 gives the NIC its full tables; with SCALE_LIMIT_CAP=0
# (the default) the VM then has 1 GiB: 65536 MRs (a DMA page of page list
# each) do not fit in the debug kernel's default 512 MiB.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic scale"
T0="$(lab__now_us)"
lab_start rnic_scale || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_scale"
	exit 1
}
# boot, load; conns 5; limits 5; mr_churn 2; cq_overflow 1; qp_reset 1;
# unload 1
lab_plan 17 1
check_init
preflight rnic rnic_scale rnicsim

SCALE_DBG=/sys/kernel/debug/rnic_scale
SCALE_CONNS="${SCALE_CONNS:-256}"
SCALE_HOLD="${SCALE_HOLD:-64}"
SCALE_CHURN="${SCALE_CHURN:-50}"
SCALE_PAGES="${SCALE_PAGES:-256}"
# The NIC's object tables: rnicsim --rdma-table-log2 SCALE_TABLE_LOG2
# makes it advertise (and hold) 2^N QPs, CQs, SRQs, PDs and MRs. With
# the full tables (0) the debug guest takes 53 s to reach 4094 CQs, 60 s
# for 4095 QPs, 112 s for 65534 MRs (in 1 GiB): more than the suite's
# budget. 10 (1024 of each) reaches every refusal in about 35 s, with
# CQs over two doorbell pages and QPs over four (one page, 512 slots, was
# the limit once: 254 QPs), and leaves room for the 512 QPs of conns.
SCALE_TABLE_LOG2="${SCALE_TABLE_LOG2:-10}"
# The limits stop at this many objects of each kind (0: no cap, to the
# refusal of each). At the cap, a kind that was not refused passes as
# "not refused below the cap".
SCALE_LIMIT_CAP="${SCALE_LIMIT_CAP:-0}"

# scale_up N: rnic (the DKMS install; RNIC_KO: that file) up with rnic0
# ACTIVE, rnic_scale loaded (RNIC_SCALE_KO: that file).
scale_up() {
	local load="modprobe rnic_scale" rnic="modprobe rnic"
	[ -z "${RNIC_SCALE_KO:-}" ] || load="modprobe rdma_cm && insmod $RNIC_SCALE_KO"
	[ -z "${RNIC_KO:-}" ] || rnic="modprobe ib_core && insmod $RNIC_KO"
	lab_exec "$1" --timeout 120 "set -e
		$rnic
		for i in \$(seq 100); do [ -e /sys/class/infiniband/rnic0/ports/1 ] && break; sleep 0.1; done
		lab_ifup \"\$LAB_RNIC_SPEC\" >/dev/null
		lab_ib_active rnic0
		$load
		test -w $SCALE_DBG/control"
}

# scale CMD [TIMEOUT]: one command in vm1; prints the result lines it
# added; the write's status is ours.
scale() {
	lab_exec 1 --timeout "${2:-300}" "n=\$(wc -l <$SCALE_DBG/results)
		echo '$1' > $SCALE_DBG/control; rc=\$?
		tail -n +\$((n + 1)) $SCALE_DBG/results
		[ \$rc = 0 ] || dmesg | grep rnic_scale | tail -5 >&2
		exit \$rc"
}

# field LINE KEY: a key=value field of a result line.
field() {
	local k
	for k in $1; do
		case "$k" in "$2"=*)
			echo "${k#*=}"
			return 0
			;;
		esac
	done
	echo "no $2= in the result line" >&2
	return 1
}

# last PREFIX: the last result line starting with PREFIX of the last
# check's log.
last() { grep "^$1" "$OUT/$nchk.log" | tail -1 || true; }

# res_count KIND: rdma resource show's count of KIND objects of rnic0.
res_count() {
	lab_exec 1 --timeout 30 "rdma resource show rnic0" |
		awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

# One VM: 1 GiB for the uncapped limits run, else smaller device tables.
VM_ARGS=()
if [ "$SCALE_LIMIT_CAP" = 0 ] && [ "$SCALE_TABLE_LOG2" = 0 ]; then
	VM_ARGS=(--mem 1G)
elif [ "$SCALE_TABLE_LOG2" != 0 ]; then
	VM_ARGS=(--rnicsim-arg --rdma-table-log2 --rnicsim-arg "$SCALE_TABLE_LOG2")
fi
lab_vm 1 --rnic --smp 2 "${VM_ARGS[@]}"
boot_vms 1
need "vm1: rnic0 ACTIVE (2 vCPUs), rnic_scale loaded" scale_up 1
ADDR="$(lab_addr 1 rnic 4)"

# ------------------------------------------------------------------ conns

QP0="$(res_count qp)"
echo "# rdma resource show rnic0 before: $QP0 QPs"

# conns_verified N [OPTION...]: N connections at once, every one
# ESTABLISHED on both ends, every message verified.
conns_verified() {
	local n="$1" l
	shift
	scale "conns addr=$ADDR n=$n size=1024 count=8 depth=4 $*" 600 || return 1
	l="$(last conns)"
	[ "$(field "$l" status)" = ok ] && [ "$(field "$l" connected)" = "$n" ] &&
		[ "$(field "$l" established)" = $((2 * n)) ] &&
		[ "$(field "$l" verified)" = "$(field "$l" msgs)" ] &&
		[ "$(field "$l" bad_bytes)" = 0 ]
}
# conns_figures: the last conns run's figures and its teardown's.
conns_figures() {
	local l
	l="$(last conns)"
	[ -z "$l" ] || echo "# conns: n=$(field "$l" n) ($(field "$l" qps) QPs): $(field "$l" connected) connected, $(field "$l" connects_per_s) connects/s (last ESTABLISHED after $(field "$l" connect_ms) ms), $(field "$l" verified)/$(field "$l" msgs) messages verified in $(field "$l" traffic_ms) ms, memory per QP $(field "$l" mem_per_qp) B (slab $(field "$l" slab_per_qp) B), status=$(field "$l" status) err=$(field "$l" err)"
	l="$(last teardown)"
	[ -z "$l" ] || echo "# conns: teardown of $(field "$l" conns) connections: $(field "$l" teardown_ms) ms (disconnects $(field "$l" disconnect_ms) ms)"
}
# qps_are N: rdma resource show counts N QPs.
qps_are() {
	local q
	q="$(res_count qp)"
	echo "rdma resource show rnic0: $q QPs (want $1)"
	[ "$q" = "$1" ]
}
released() { scale release 300 && grep -q '^teardown' "$OUT/$nchk.log"; }

check "conns: $SCALE_CONNS loopback RC connections at once ($((2 * SCALE_CONNS)) QPs), every SEND and WRITE verified" \
	conns_verified "$SCALE_CONNS" || true
conns_figures
check "conns: $SCALE_HOLD connections held (hold=1), every SEND and WRITE verified" \
	conns_verified "$SCALE_HOLD" hold=1 || true
conns_figures
check "conns: held, rdma resource show counts $((2 * SCALE_HOLD)) more QPs" \
	qps_are $((QP0 + 2 * SCALE_HOLD)) || true
check "conns: release tears them down" released || true
conns_figures
check "conns: released, rdma resource show counts $QP0 QPs again" qps_are "$QP0" || true

# ----------------------------------------------------------------- limits

LIMITS_LINE=""
limits_run() {
	local cap=" cap=$SCALE_LIMIT_CAP"
	# cap=0 is no option of rnic_scale's: without cap=, every kind to its refusal
	[ "$SCALE_LIMIT_CAP" != 0 ] || cap=""
	scale "limits dev=rnic0$cap" 900 || return 1
	LIMITS_LINE="$(last limits)"
	[ "$(field "$LIMITS_LINE" status)" = ok ]
}
# limit_ok KIND: refused with a clean errno, at the advertised maximum
# minus what existed, and one allocated again after the frees.
limit_ok() {
	local l="$LIMITS_LINE" got max ex err again
	got="$(field "$l" "$1")" && max="$(field "$l" "$1_max")" &&
		ex="$(field "$l" "$1_existing")" && err="$(field "$l" "$1_err")" &&
		again="$(field "$l" "$1_again")" || return 1
	echo "$1: $got allocated, refused with $err; advertised max $max, $ex existing: want $((max - ex)); again=$again"
	[ "$again" = 1 ] || return 1
	if [ "$got" = "$SCALE_LIMIT_CAP" ] && [ "$err" = 0 ] && [ "$got" -lt $((max - ex)) ]; then
		echo "$1: stopped at cap=$SCALE_LIMIT_CAP without a refusal (SCALE_LIMIT_CAP=0: to the limit)"
		return 0
	fi
	case "$err" in ENOSPC | ENOMEM | EINVAL | EAGAIN | EBUSY) ;; *) return 1 ;; esac
	[ "$got" = $((max - ex)) ]
}
# stats: the driver's counters (rdma statistic), "name value" lines.
stats() {
	lab_exec 1 --timeout 30 "rdma statistic show link rnic0/1" |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}
stats >"$LAB_DIR/stats-limits-before" 2>&1 || true
check "limits: CQs, QPs, MRs, PDs allocated until refused, all freed" limits_run || true
[ -z "$LIMITS_LINE" ] || echo "# limits: ${LIMITS_LINE#limits }"
stats >"$LAB_DIR/stats-limits-after" 2>&1 || true
# delta NAME: how much a counter grew over the limits run ("?" if unread).
delta() {
	local b a
	b="$(awk -v k="$1" '$1 == k { print $2 }' "$LAB_DIR/stats-limits-before")"
	a="$(awk -v k="$1" '$1 == k { print $2 }' "$LAB_DIR/stats-limits-after")"
	if [ -n "$b" ] && [ -n "$a" ]; then echo "+$((a - b))"; else echo "?"; fi
}
echo "# limits: driver counter cmd_failures $(delta cmd_failures) (rdma statistic: one per command the device refused)"
for k in cq qp mr pd; do
	what="refused at max_$k - existing"
	[ "$SCALE_LIMIT_CAP" = 0 ] || what+=" (or none refused up to cap=$SCALE_LIMIT_CAP)"
	check "limits: ${k^^}s: $what, clean errno, one again after the frees" \
		limit_ok "$k" || true
done

# ---------------------------------------------------------------- mr_churn

churn_ok() {
	local l
	scale "mr_churn addr=$ADDR n=$SCALE_CHURN pages=$SCALE_PAGES" 600 || return 1
	l="$(last mr_churn)"
	[ "$(field "$l" status)" = ok ] && [ "$(field "$l" regs)" = "$SCALE_CHURN" ] &&
		[ "$(field "$l" bad_bytes)" = 0 ] &&
		[ "$(field "$l" bytes_verified)" = $((SCALE_CHURN * $(field "$l" pages) * 4096)) ]
}
check "mr_churn: $SCALE_CHURN x (alloc, REG_MR over $SCALE_PAGES fresh pages, WRITE through the rkey, verify, LOCAL_INV, dereg)" \
	churn_ok || true
churn_figures() {
	local l
	l="$(last mr_churn)"
	[ -z "$l" ] || echo "# mr_churn: $(field "$l" regs) registrations of $(field "$l" pages) pages (device max $(field "$l" max_pages)): $(field "$l" regs_per_s) registrations/s, $(field "$l" bytes_verified) bytes verified, status=$(field "$l" status) err=$(field "$l" err)"
}
churn_figures
# churn_max: two registrations of the device's largest page list.
churn_max() {
	local l
	scale "mr_churn addr=$ADDR n=2 pages=1048576" 300 || return 1
	l="$(last mr_churn)"
	[ "$(field "$l" status)" = ok ] && [ "$(field "$l" regs)" = 2 ] &&
		[ "$(field "$l" pages)" = "$(field "$l" max_pages)" ] &&
		[ "$(field "$l" bytes_verified)" = $((2 * $(field "$l" pages) * 4096)) ]
}
check "mr_churn: 2 x the largest page list (max_fast_reg_page_list_len)" churn_max || true
churn_figures

# ------------------------------------------------------------- cq_overflow

ovf_ok() {
	local l
	scale "cq_overflow dev=rnic0" 120
	l="$(last cq_overflow)"
	[ "$(field "$l" cq_err_events)" -ge 1 ] && [ "$(field "$l" qp_fatal_events)" -ge 1 ] &&
		[ "$(field "$l" status)" = ok ]
}
check "cq_overflow: signalled WRITEs past a CQ of the smallest size: IB_EVENT_CQ_ERR on the CQ, IB_EVENT_QP_FATAL on the QP" \
	ovf_ok || true
l="$(last cq_overflow)"
[ -z "$l" ] || echo "# cq_overflow: ${l#cq_overflow }"

# ------------------------------------------------------------- qp_reset

# scrubbed: the driver's count of CQEs it dropped for QPs reset or
# destroyed before they were polled (rdma statistic).
scrubbed() {
	lab_exec 1 --timeout 30 "rdma statistic show link rnic0/1" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "cqes_scrubbed") print $(i + 1) }'
}
# qp_reset: signalled WRITEs whose CQEs stay unpolled in their CQ, the QP
# moved to RESET and back to RTS, two new WRITEs one at a time: the first
# CQE polled each time is the new WRITE's, nothing after it, its bytes
# arrived, the QP is still in RTS, and the driver counted between 1 and
# the 8 WRITEs' CQEs as scrubbed.
reset_ok() {
	local l s0 s1
	s0="$(scrubbed)"
	scale "qp_reset dev=rnic0" 60
	l="$(last qp_reset)"
	s1="$(scrubbed)"
	echo "cqes_scrubbed: ${s0:-?} -> ${s1:-?}"
	[ -n "$s0" ] && [ -n "$s1" ] && [ "$(field "$l" status)" = ok ] &&
		[ "$((s1 - s0))" -ge 1 ] && [ "$((s1 - s0))" -le "$(field "$l" wrs)" ]
}
check "qp_reset: a QP reset with CQEs unpolled and brought back to RTS: its CQ hands out none of them, each next WRITE completes first and alone" \
	reset_ok || true
l="$(last qp_reset)"
[ -z "$l" ] || echo "# qp_reset: ${l#qp_reset }"

# unload: rmmod rnic_scale with 4 connections held (its exit tears them
# down), then rnic.
unload() {
	conns_verified 4 hold=1 || return 1
	lab_exec 1 --timeout 120 "rmmod rnic_scale && dmesg | grep 'rnic_scale: teardown conns=4 ' >/dev/null &&
		rmmod rnic && ! grep -qw '^rnic' /proc/modules"
}
check "rmmod rnic_scale with 4 connections held, then rnic" unload || true

lab_stop
echo "# test_rnic_scale: $(lab_elapsed "$T0") s"
exit "$fail"
