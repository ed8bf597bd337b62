#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# RC error paths, rnic <-> rnic, with rnic_perf's fault= options (the
# DKMS-installed rnic and rnic_perf; RNIC_PERF_KO=path for a fresh
# rnic_perf.ko): each run must fail with the right work completion status,
# and the work requests behind the failed one must be flushed:
#  - a wrong rkey (RDMA WRITE, READ, FETCH_ADD): REM_ACCESS_ERR, the other
#    depth - 1 WRs in flight WR_FLUSH_ERR, and the server's QP gets
#    IB_EVENT_QP_ACCESS_ERR (its handler in rnic_perf: qp_events=);
#  - SENDs to a server that posted no receive, rnr_retry=1:
#    RNR_RETRY_EXC_ERR, the others flushed, no event on the server;
#  - SENDs one byte longer than the server's receives: the responder's
#    NAK invalid request, REM_INV_REQ_ERR, the others flushed; the server
#    learns of it from its receive's completion (LOC_LEN_ERR), so its QP
#    gets no event (an affiliated error is raised only for a fault no
#    work request of the QP's consumer can report);
#  (the client's QP gets no async event in any of these: a requester
#  learns of the NAK from its completions);
#  - the client's QP moved to ERR with 1 MiB WRITEs in flight: every WR
#    still in flight completes with WR_FLUSH_ERR;
#  - an invalid request from the wire (a SEND MIDDLE with no SEND in
#    progress, at the server's live QP and its expected PSN, injected on
#    the bridge with a correct ICRC while rnic_perf hold= keeps the
#    connection idle): from a stranger's address dropped (rx_drop_bad_src),
#    from the peer's the responder NAKs it and the server's QP goes to ERR
#    with IB_EVENT_QP_REQ_ERR (logged by rnic_perf's event handler), the
#    client's QP untouched (nothing of its was outstanding);
#  - the server's QP held in RTR (rnic_perf rtr=1: its own QP, moved by
#    itself, as srpt does): the client's first SEND raises
#    IB_EVENT_COMM_EST at the server's consumer, which passes it to
#    rdma_notify() and moves the QP to RTS; the run passes verified;
#  - READs at a responder whose REP offers READs but whose QP has no
#    responder resources (rnic_perf resp_res=0): REM_INV_REQ_ERR, the
#    others flushed, IB_EVENT_QP_REQ_ERR at the server;
#  - the peer gone mid-run (its NIC's link down through rnicsim's control
#    socket), retry=2: RETRY_EXC_ERR within a bound, the others flushed;
#  - the NAK, RNR and retry counters of rdma statistic moved on both
#    sides; after it all a normal run still passes verified;
#  - vm1's NIC fails mid-run (rnicsim "fatal"): the run's WRs complete
#    flushed within 60 s; an admin command the NIC never answers
#    (rnicsim "aq hold") fails the run after the driver's 3 s timeout;
#    after each, a reload brings a working device back;
#  - rnic_perf and rnic unload on both VMs.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic qp errors"
T0="$(lab__now_us)"
lab_start rnic_qp_errors || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_qp_errors"
	exit 1
}
# boots 2, devices 2, server 1, baseline 1, bad rkey 3, RNR 1, short
# receive 1, flush 1, invalid request 1, COMM_EST 1, no responder
# resources 1, retry exceeded 1, counters 1, run afterwards 1, fatal and
# reload 2, admin timeout and reload 2, unload 2
lab_plan 24 2
perf_checks_init
perf_preflight

lab_vm 1 --rnic
lab_vm 2 --rnic
boot_vms 1 2
check_vms "1 2" "rnic0 ACTIVE, rnic_perf loaded" rnic_up || exit 1
SRV="$(lab_addr 2 rnic 4)"
check "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV" || exit 1
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-before" 2>&1 || true
done

ok_run() {
	local line
	line="$(perf_run 1 "$SRV" --timeout 150 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	[ "$(perf_field "$line" wc_status)" = SUCCESS ] && [ "$(perf_field "$line" flushed)" = 0 ] &&
		perf_check 2 "$line"
}
check "baseline: RDMA WRITE 64 KiB, 32 verified, wc_status=SUCCESS flushed=0" \
	ok_run op=write size=65536 depth=8 count=32 || true

# fails WANT FLUSHED LINE: LINE is a failed run whose first bad completion
# was WANT, with FLUSHED WRs flushed behind it (FLUSHED "1-8": a range).
fails() {
	local want="$1" fl="$2" line="$3" st n
	echo "$line"
	st="$(perf_field "$line" wc_status)" || st=-
	n="$(perf_field "$line" flushed)" || n=-
	echo "status=$(perf_field "$line" status) wc_status=$st flushed=$n; want fail, $want, $fl"
	[ "$(perf_field "$line" status)" = fail ] && [ "$st" = "$want" ] || return 1
	case "$fl" in
	*-*) [ "$n" -ge "${fl%-*}" ] && [ "$n" -le "${fl#*-}" ] ;;
	*) [ "$n" = "$fl" ] ;;
	esac
}
# must_fail WANT FLUSHED EVENTS ARGS...: a client run from vm1 that must
# fail so; the server's QP must have got exactly the async events EVENTS
# (rnic_perf's qp_events= names: access_err, or none), the
# client's none. The server writes its line for a run that ended early at
# the disconnect, after the run's events.
must_fail() {
	local want="$1" fl="$2" ev="$3" line peer
	shift 3
	if line="$(perf_run 1 "$SRV" --timeout 120 "$@")"; then
		echo "$line"
		echo "the run passed"
		return 1
	fi
	fails "$want" "$fl" "$line" || return 1
	echo "client qp_events=$(perf_field "$line" qp_events)"
	[ "$(perf_field "$line" qp_events)" = none ] || return 1
	peer="$(perf_field "$line" local)" || return 1
	perf_result_wait 2 "server peer=$peer" 100 "*' qp_events=$ev '*"
}

D=8
check "wrong rkey, RDMA WRITE depth $D: REM_ACCESS_ERR, the other $((D - 1)) flushed; the server's QP: QP_ACCESS_ERR" \
	must_fail REM_ACCESS_ERR $((D - 1)) access_err op=write size=4096 depth=$D count=64 fault=rkey || true
check "wrong rkey, RDMA READ depth $D: REM_ACCESS_ERR, the other $((D - 1)) flushed; the server's QP: QP_ACCESS_ERR" \
	must_fail REM_ACCESS_ERR $((D - 1)) access_err op=read size=4096 depth=$D count=64 fault=rkey || true
check "wrong rkey, FETCH_ADD depth $D: REM_ACCESS_ERR, the other $((D - 1)) flushed; the server's QP: QP_ACCESS_ERR" \
	must_fail REM_ACCESS_ERR $((D - 1)) access_err op=fetch_add depth=$D count=64 fault=rkey || true
check "SEND to a server with no receive posted, rnr_retry=1, depth 4: RNR_RETRY_EXC_ERR, the other 3 flushed; no QP event" \
	must_fail RNR_RETRY_EXC_ERR 3 none op=send size=4096 depth=4 count=16 fault=norecv rnr_retry=1 || true
check "SEND 4 KiB into 4095-byte receives, depth 4: REM_INV_REQ_ERR, the other 3 flushed; no QP event" \
	must_fail REM_INV_REQ_ERR 3 none op=send size=4096 depth=4 count=16 fault=short || true
check "QP moved to ERR with 1 MiB WRITEs in flight, depth $D: WR_FLUSH_ERR for each still in flight (1-$D); no QP event" \
	must_fail WR_FLUSH_ERR "1-$D" none op=write size=1048576 depth=$D count=64 verify=0 fault=flush || true

# ---- an invalid request from the wire, at a live QP

# srv_qp STATE: "LQPN RQ_PSN" of vm2's one RC QP in STATE (rnic_perf's
# server's: rdma_cm creates it, so restrack names rdma_cm its owner).
srv_qp() {
	lab_exec 2 --timeout 30 "rdma resource show qp link rnic0/1" |
		awk -v st="$1" '/ type RC / {
			q = ""; p = ""; s = ""
			for (i = 1; i < NF; i++) {
				if ($i == "lqpn") q = $(i + 1)
				if ($i == "rq-psn") p = $(i + 1)
				if ($i == "state") s = $(i + 1)
			}
			if (s == st) { print q, p; n++ }
		} END { exit n != 1 }'
}
# send_middle SRC_IP QPN PSN: one RC SEND MIDDLE from SRC_IP at vm2's QP.
send_middle() {
	ip netns exec "$LAB_NS" python3 "$LAB_REPO/tests/lab/hostile_frames.py" \
		--src-ip "$1" --qpn "$2" --psn "$3" br0 "$(lab__mac 2 rnic)" "$SRV" 1 \
		live_qp_send_middle
}
# delta BEFORE AFTER COUNTER WANT: the counter grew by exactly WANT
# (stat_delta: a counter missing from either snapshot fails).
delta() {
	local d
	d="$(stat_delta "$1" "$2" "$3")" || return 1
	echo "$3 +$d (want +$4)"
	[ "$d" = "$4" ]
}
invalid_request() {
	local n0 n job qp psn rc=0 line
	n0="$(lab_exec 1 --timeout 30 "dmesg | grep -c 'holding the connection'; true")" || return 1
	for n in 1 2; do hw_stats "$n" rnic0/1 >"$LAB_DIR/inv-vm$n-0" || return 1; done
	job="$(lab_bg 1 "echo 'client addr=$SRV port=$PERF_PORT op=send size=64 depth=4 count=16 hold=60000' > $PERF_DBG/control")" ||
		return 1
	if lab_exec 1 --timeout 90 "for i in \$(seq 300); do
			[ \$(dmesg | grep -c 'holding the connection') -gt $n0 ] && exit 0
			sleep 0.2
		done; exit 1" && read -r qp psn < <(srv_qp RTS); then
		echo "vm2: rnic_perf's QP $qp in RTS, rq-psn $psn"
		# A stranger: dropped before the transport looks at it.
		send_middle 10.20.0.99 "$qp" "$psn" &&
			hw_stats 2 rnic0/1 >"$LAB_DIR/inv-vm2-1" &&
			delta "$LAB_DIR/inv-vm2-0" "$LAB_DIR/inv-vm2-1" rx_drop_bad_src 1 &&
			delta "$LAB_DIR/inv-vm2-0" "$LAB_DIR/inv-vm2-1" nak_inv_req_sent 0 &&
			srv_qp RTS >/dev/null || rc=1
		# The peer's address: the responder judges it.
		[ "$rc" = 0 ] && send_middle "$(lab_addr 1 rnic 4)" "$qp" "$psn" || rc=1
		[ "$rc" = 0 ] && for _ in $(seq 20); do
			srv_qp ERR >/dev/null && break
			sleep 0.5
		done
		srv_qp ERR || { echo "vm2: the QP did not go to ERR"; rc=1; }
	else
		echo "no held connection with one rnic_perf QP in RTS on vm2"
		rc=1
	fi
	lab_kill 1 "$job"
	lab_wait 1 "$job" --timeout 60 >/dev/null
	for n in 1 2; do hw_stats "$n" rnic0/1 >"$LAB_DIR/inv-vm$n-2" || rc=1; done
	delta "$LAB_DIR/inv-vm2-0" "$LAB_DIR/inv-vm2-2" nak_inv_req_sent 1 || rc=1
	delta "$LAB_DIR/inv-vm1-0" "$LAB_DIR/inv-vm1-2" nak_inv_req_rcvd 1 || rc=1
	line="$(lab_exec 1 --timeout 30 "grep '^client .* hold=60000 ' $PERF_DBG/results | tail -1")" || return 1
	echo "$line"
	[ "$(perf_field "$line" status)" = ok ] && [ "$(perf_field "$line" qp_events)" = none ] || rc=1
	# The server wrote its line when the run ended, before the frame:
	# its QP event handler's log line says what the consumer got.
	lab_exec 2 --timeout 30 "dmesg | grep 'rnic0: QP $qp: '" || rc=1
	lab_exec 2 --timeout 30 "dmesg | grep -F 'rnic_perf: rnic0: QP $qp: QP request error' >/dev/null" || {
		echo "vm2: rnic_perf's QP event handler got no QP_REQ_ERR for QP $qp"
		rc=1
	}
	return "$rc"
}
check "invalid request at the server's live QP (SEND MIDDLE, no SEND begun): a stranger's dropped (rx_drop_bad_src), the peer's NAKed, the server's QP to ERR with QP_REQ_ERR, the client's untouched" \
	invalid_request || true

# ---- the server moves its own QP through its states (rtr=, resp_res=)

comm_est_lines() {
	lab_exec 2 --timeout 30 "dmesg | grep -cE 'rnic_perf: rnic0: QP [0-9]+: communication established'; true"
}
# comm_est: a SEND run with the server's QP in RTR until the client's
# first message: exactly one COMM_EST at the server's consumer, none at
# the client's, every SEND verified.
comm_est() {
	local n0 n1 line srv rc
	n0="$(comm_est_lines)" || return 1
	line="$(perf_run 1 "$SRV" --timeout 120 op=send size=4096 depth=8 count=64 rtr=1)" || {
		echo "$line"
		return 1
	}
	echo "$line"
	[ "$(perf_field "$line" wc_status)" = SUCCESS ] &&
		[ "$(perf_field "$line" qp_events)" = none ] || return 1
	srv="$(perf_result_wait 2 "server peer=$(perf_field "$line" local)" 150 \
		"*' rtr=1 '*' msgs=64 '*' qp_events=comm_est status=ok'")"
	rc=$?
	echo "$srv"
	n1="$(comm_est_lines)" || return 1
	echo "vm2: COMM_EST logged by rnic_perf's QP event handler: $n0 -> $n1 (want +1)"
	[ "$rc" = 0 ] && [ "$n1" = $((n0 + 1)) ]
}
check "server's QP held in RTR (rtr=1): the client's first SEND raises COMM_EST at the server's consumer (rdma_notify), then RTS; 64 SENDs of 4 KiB verified" \
	comm_est || true
check "READ at a responder whose REP offers READs and whose QP takes none (resp_res=0), depth $D: REM_INV_REQ_ERR, the other $((D - 1)) flushed; the server's QP: QP_REQ_ERR" \
	must_fail REM_INV_REQ_ERR $((D - 1)) req_err op=read size=4096 depth=$D count=64 resp_res=0 || true

# ---- the peer goes away mid-run: its NIC loses the link

# bg_run [OPTS]: a long WRITE run from vm1 in the background.  The job
# fails unless the run wrote a result line of its own: the last line of
# an earlier run (results keeps 16) must not be judged.
bg_run() {
	lab_bg 1 "l0=\$(grep '^client' $PERF_DBG/results | tail -1)
		echo 'client addr=$SRV port=$PERF_PORT op=write size=65536 depth=$D count=1000000 verify=0 $*' > $PERF_DBG/control
		rc=\$?
		l1=\$(grep '^client' $PERF_DBG/results | tail -1)
		echo \"\$l1\"
		[ -n \"\$l1\" ] && [ \"\$l1\" != \"\$l0\" ] || { echo \"no result line of this run (write status \$rc)\" >&2; exit 3; }
		exit \$rc"
}
# wait_flowing BASE: vm2's NIC has received 500 RoCE v2 frames more than
# BASE (within 30 s).
wait_flowing() {
	for _ in $(seq 300); do
		[ "$(lab_sim_ctr 2 rx_roce_v2_frames)" -gt $((${1:-0} + 500)) ] && return 0
		sleep 0.1
	done
	return 1
}
# cut_run WHEN WANT FLUSHED OPTS CMD...: a long run from vm1 (bg_run OPTS)
# is cut by CMD once traffic flows; it must end within 60 s, failed with
# a result line of its own (not 3), WANT its first bad completion and
# FLUSHED WRs flushed behind it (fails).
cut_run() {
	local when="$1" want="$2" fl="$3" run_opts="$4" job base flowing=0 t line rc
	shift 4
	base="$(lab_sim_ctr 2 rx_roce_v2_frames)"
	job="$(bg_run "$run_opts")" || return 1
	wait_flowing "$base" && flowing=1
	echo "traffic flowing: $flowing"
	"$@" || return 1
	t="$(lab__now_us)"
	line="$(lab_wait 1 "$job" --timeout 60)"
	rc=$?
	echo "the run ended $(lab_elapsed "$t") s after $when (status $rc)"
	[ "$flowing" = 1 ] && [ "$rc" != 0 ] && [ "$rc" != 3 ] && [ "$rc" != 124 ] &&
		fails "$want" "$fl" "$line"
}
# Three local ACK timeouts (rdma_cm's RoCE default, about 0.5 s each) and
# the completion: well within 60 s.
peer_gone() {
	local rc=0
	cut_run "the link went down" RETRY_EXC_ERR "1-$((D - 1))" retry=2 lab_sim_ctl 2 link down || rc=1
	lab_sim_ctl 2 link up
	return "$rc"
}
check "peer's link down mid-run, retry=2, depth $D: RETRY_EXC_ERR within 60 s, the WRs behind it flushed (1-$((D - 1)))" \
	peer_gone || true

for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-after" 2>&1 || true
done
counters() {
	local k v n b a
	for v in "1 nak_rem_access_rcvd 3" "2 nak_rem_access_sent 3" "1 rnr_naks_rcvd 2" \
		"2 rnr_naks_sent 2" "1 nak_inv_req_rcvd 1" "2 nak_inv_req_sent 1" \
		"1 rnr_retry_exceeded 1" "1 retry_exceeded 1" "1 local_ack_timeouts 3"; do
		read -r n k min <<<"$v"
		b="$(stat_of "$LAB_DIR/stats-vm$n-before" "$k")"
		a="$(stat_of "$LAB_DIR/stats-vm$n-after" "$k")"
		echo "vm$n $k: $b -> $a (want +$min)"
		[ "$((a - b))" -ge "$min" ] || return 1
	done
}
check "rdma statistic: remote access, RNR and invalid request NAKs sent/received, rnr_retry_exceeded, retry_exceeded, local ACK timeouts" \
	counters || true

after() {
	lab_exec 2 --timeout 60 "lab_ib_active rnic0" && ok_run "$@"
}
check "afterwards (vm2's link back up): SEND 4 KiB, 200 verified, wc_status=SUCCESS" \
	after op=send size=4096 depth=8 count=200 || true
# ---- vm1's NIC fails: a fatal error mid-run, then an admin command that
# is never answered.  Outstanding WRs must complete (flushed) instead of
# waiting forever, nothing the device may still use is freed, and a
# reload brings a working device back.

# held_fatal: vm2's NIC holds what it receives first, so that vm1's WRs
# are still in flight (unacknowledged) when vm1's NIC fails: without it,
# a device quicker than the guest's posting could have completed them all
# and left nothing to flush (flushed=0, seen once at rnicsim nice -10).
held_fatal() {
	lab_sim_ctl 2 rx hold && sleep 0.5 && lab_sim_ctl 1 fatal
}
dev_fatal() {
	local rc=0
	cut_run "the device failed" WR_FLUSH_ERR "1-$D" "" held_fatal || rc=1
	lab_sim_ctl 2 rx release || rc=1
	lab_exec 1 --timeout 30 "dmesg | grep -E 'device fatal error|DEVICE_FATAL' | tail -3" || rc=1
	return "$rc"
}
check "vm1's NIC fails mid-run (rnicsim fatal): the driver logs it, the run ends within 60 s, its WRs flushed (1-$D)" \
	dev_fatal || true
# reload_runs: rnic and rnic_perf reloaded in vm1 (the probe resets the
# device), and a verified run passes.
reload_runs() {
	lab_exec 1 --timeout 120 "echo stop > $PERF_DBG/control; rmmod rnic_perf && rmmod rnic" &&
		rnic_up 1 && ok_run op=send size=4096 depth=8 count=200
}
check "vm1: after the fatal error, rmmod and modprobe rnic bring the device back: SEND 4 KiB, 200 verified" \
	reload_runs || true
aq_timeout() {
	local n0 n1 line
	n0="$(lab_exec 1 --timeout 30 "dmesg | grep -c 'timed out after'; true")" || return 1
	lab_sim_ctl 1 aq hold || return 1
	# The run's first command (CREATE_CQ) waits 3 s for its answer.
	if line="$(perf_run 1 "$SRV" --timeout 60 op=send size=4096 depth=8 count=16)"; then
		lab_sim_ctl 1 aq release
		echo "$line"
		echo "the run passed with the admin queue held"
		return 1
	fi
	echo "$line"
	lab_sim_ctl 1 aq release || return 1
	n1="$(lab_exec 1 --timeout 30 "dmesg | grep -c 'timed out after'; true")" || return 1
	lab_exec 1 --timeout 30 "dmesg | grep -E 'timed out after|fatal|resetting' | tail -4"
	echo "admin timeouts logged: $n0 -> $n1; device: $(lab_sim_ctl 1 counters | grep -E '^(aq_hold|fatal_reason) ' | tr '\n' ' ')"
	[ "$n1" -gt "$n0" ]
}
check "vm1: admin queue held (rnicsim aq hold): the run fails, the driver logs the timeout and stops the device" \
	aq_timeout || true
check "vm1: after the admin timeout, rmmod and modprobe rnic bring the device back: SEND 4 KiB, 200 verified" \
	reload_runs || true

for n in 1 2; do
	check "vm$n: rnic_perf stopped, rmmod rnic_perf rnic" \
		lab_exec "$n" --timeout 60 "echo stop > $PERF_DBG/control && rmmod rnic_perf && rmmod rnic &&
			! grep -w '^rnic' /proc/modules" || true
done

lab_stop
echo "# test_rnic_qp_errors: $(lab_elapsed "$T0") s"
exit "$fail"
