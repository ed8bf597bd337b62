#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for lab tests that drive rnic_perf (tools/rnic_perf,
# Documentation/rnic_perf.rst) in VMs; source after scripts/lab/lab.sh.
# Not a test itself: the runner takes only tests/lab/test_*.sh.
#
#   perf_load N                    modprobe rnic_perf in VM N (the DKMS
#                                  install; RNIC_PERF_KO=path insmods a
#                                  freshly built one instead)
#   rnic_up_conf N OPTIONS...      rnic_up N, the options in the guest's
#                                  /etc/modprobe.d/rnic.conf
#   rnic_up N [OPTIONS...]         rnic loaded (RNIC_KO=path: insmod that
#                                  one), netdev up, rnic0 ACTIVE, rnic_perf
#   perf_server N ADDR [PORT]      listen in VM N
#   perf_run N ADDR ARGS...        one client run from VM N; prints the
#                                  result line, status 0 when status=ok
#   perf_server_ok N PEER          VM N's server reported the connection from
#                                  PEER (addr:port) with status=ok
#   perf_check N LINE              the same for a client result line
#   perf_field LINE KEY            a key=value field of a result line
#   perf_verified C S ADDR [--timeout T] ARGS...
#                                  one run from VM C to VM S's server on
#                                  ADDR: the client's line, then the
#                                  server's verdict on that connection
#   perf_srq_teardown_ok N LINE EVENTS
#                                  VM N's server drained the srq=1
#                                  connection of its server LINE on one
#                                  LAST_WQE_REACHED, after EVENTS SRQ
#                                  limit events
#   roce_version_counted B A V     the NIC's RoCE vV frame counters rose
#                                  between hw_stats outputs B and A, the
#                                  other version's did not
#   perf_case WHAT C S ADDR [--timeout T] ARGS...
#                                  perf_verified as one check, its figures
#                                  as a comment (and appended to $FIGURES
#                                  if set)
#   perf_figures                   the same figures, after a check of its
#                                  own that ran rnic_perf
#   perf_preflight                 rnic and rnic_perf DKMS-installed for the
#                                  kernel the lab boots, rnicsim built; else
#                                  one not-ok line and exit
#
# check, need and perf_checks_init come from lib_check.sh, sourced here.

# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

PERF_DBG=/sys/kernel/debug/rnic_perf
PERF_PORT=${PERF_PORT:-18515}

perf_load() {
	local n="$1"
	if [ -n "${RNIC_PERF_KO:-}" ]; then
		lab_exec "$n" --timeout 60 "modprobe rdma_cm && { grep -qw ^rnic_perf /proc/modules || insmod $RNIC_PERF_KO; } && test -w $PERF_DBG/control"
	else
		lab_exec "$n" --timeout 60 "modprobe rnic_perf && test -w $PERF_DBG/control"
	fi
}

perf_server() {
	lab_exec "$1" --timeout 30 "echo 'server addr=$2 port=${3:-$PERF_PORT}' > $PERF_DBG/control"
}

# perf_last_line GLOB: guest shell code that sets l to the last line of
# rnic_perf's results matching GLOB* and prints it (nothing if none) with
# the read builtin: a grep and a tail were two execs, ~0.5 s of a debug
# guest's vCPU, after every run.
perf_last_line() {
	echo "r=; IFS= read -r -d '' r <$PERF_DBG/results
		l=; while IFS= read -r x; do case \"\$x\" in $1*) l=\$x ;; esac; done <<<\"\$r\"
		[ -z \"\$l\" ] || echo \"\$l\""
}

# perf_run N ADDR [--timeout S] ARGS...: ARGS are the client's key=value
# options (op=, size=, ...; port= defaults to PERF_PORT).
perf_run() {
	local n="$1" addr="$2" tmo=120
	shift 2
	if [ "${1:-}" = --timeout ]; then
		tmo="$2"
		shift 2
	fi
	local args="$*"
	case " $args " in
	*" port="*) ;;
	*) args="port=$PERF_PORT $args" ;;
	esac
	lab_exec "$n" --timeout "$tmo" "echo 'client addr=$addr $args' > $PERF_DBG/control; rc=\$?
		$(perf_last_line client)
		[ \$rc = 0 ] || dmesg | grep rnic_perf | tail -5 >&2
		exit \$rc"
}

# perf_result_wait N PREFIX LOOKS WANT: in VM N, wait (LOOKS x 0.2 s at
# most) for a result line starting with PREFIX, print the last one, and
# succeed if it matches the glob WANT. The wait reads the results with
# the read builtin: a grep per look cost the debug guest more CPU than
# the run it waited for.
perf_result_wait() {
	lab_exec "$1" --timeout 60 "for i in \$(seq $3); do
			r=; IFS= read -r -d '' r <$PERF_DBG/results
			case \"\$r\" in *'$2 '*) break ;; esac
			sleep 0.2
		done
		$(perf_last_line "*'$2 '")
		case \"\$l\" in $4) exit 0 ;; esac; exit 1"
}

perf_server_ok() { perf_result_wait "$1" "server peer=$2" 150 '*status=ok'; }

# perf_srq_teardown_ok N SERVER_LINE EVENTS: the server in VM N drained
# that srq=1 connection's QP on the device's one LAST_WQE_REACHED: its
# teardown line within 20 s (without the event ib_drain_qp() waits 60 s
# and says nothing), and the SRQ's limit events were EVENTS. The SRQ
# holds count + 4 buffers, so the event is due once count + 5 - srq_limit
# were taken (fewer than srq_limit left); the NIC runs the transport and the event travels on event
# queue 0, apart from the completions, as on hardware, so the server may
# get it after the run's last message (srq_event_msgs says when). It is
# counted here and not in the server line (a snapshot at DONE): it comes
# before LAST_WQE_REACHED on the same in-order queue. When the device
# raises it is rnicsim's test (test_rdma_rc.c, the limit's exact take).
perf_srq_teardown_ok() {
	local peer line ev lim cnt
	peer="$(perf_field "$2" peer)" || return 1
	line="$(perf_result_wait "$1" "teardown peer=$peer" 100 "*' last_wqe_events=1 '*")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	ev="$(perf_field "$line" srq_events)"
	lim="$(perf_field "$line" srq_limit)"
	cnt="$(perf_field "$2" count)"
	echo "srq_events=$ev (want $3), srq_event_msgs=$(perf_field "$line" srq_event_msgs) of $cnt (buffer $((cnt + 5 - lim)) of $((cnt + 4)) left fewer than srq_limit=$lim)"
	[ "$ev" = "$3" ]
}

# perf_check N LINE: the server in VM N saw the connection of client
# result LINE and found nothing wrong.
perf_check() {
	local local_addr
	local_addr="$(perf_field "$2" local)" || return 1
	perf_server_ok "$1" "$local_addr"
}

perf_field() {
	local k
	for k in $1; do
		case "$k" in
		"$2"=*)
			echo "${k#*=}"
			return 0
			;;
		esac
	done
	return 1
}

# perf_verified C S ADDR [--timeout T] ARGS...: a client run from VM C to
# the server of VM S on ADDR, and that server's verdict on it.
perf_verified() {
	local c="$1" s="$2" addr="$3" line
	shift 3
	line="$(perf_run "$c" "$addr" "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	perf_check "$s" "$line"
}

# perf_case WHAT C S ADDR [--timeout T] ARGS...: perf_verified as one
# check; the run's figures follow as a comment.
perf_case() {
	local what="$1"
	shift
	check "$what" perf_verified "$@" || true
	perf_figures
}

# perf_figures: the figures of the last check's client run as a comment
# (and appended to $FIGURES if set); for checks of their own that run
# rnic_perf.
perf_figures() {
	local line
	line="$(grep '^client' "$OUT/$nchk.log" | tail -1 || true)"
	if [ -n "$line" ]; then
		echo "# $(perf_summary "$line")"
		[ -z "${FIGURES:-}" ] || echo "$line" >>"$FIGURES"
	fi
}

# perf_summary LINE: the figures of a result line, for a "# " comment.
perf_summary() {
	local l="$1"
	echo "op=$(perf_field "$l" op) size=$(perf_field "$l" size) depth=$(perf_field "$l" depth) count=$(perf_field "$l" count) sge=$(perf_field "$l" sge) inline=$(perf_field "$l" inline): $(perf_field "$l" MBps) MB/s, $(perf_field "$l" msg_rate) msg/s, latency avg $(perf_field "$l" lat_avg_us) p50 $(perf_field "$l" lat_p50_us) p99 $(perf_field "$l" lat_p99_us) us"
}

# ---------------------------------------------------------------- devices

# rnic_up N [MODPROBE_OPTIONS...]: modprobe rnic (the DKMS install;
# RNIC_KO=path insmods a freshly built rnic.ko instead, after its
# dependency ib_core) with the options, bring its netdev up with the lab's
# addresses, wait for rnic0/1 ACTIVE, load rnic_perf.
rnic_up() {
	local n="$1" load
	shift
	load="modprobe rnic $*"
	[ -z "${RNIC_KO:-}" ] || load="modprobe ib_core && insmod $RNIC_KO $*"
	lab_exec "$n" --timeout 120 "set -e
		$load
		for i in \$(seq 100); do [ -e /sys/class/infiniband/rnic0/ports/1 ] && break; sleep 0.1; done
		lab_ifup \"\$LAB_RNIC_SPEC\" >/dev/null
		lab_ib_active rnic0" && perf_load "$n"
}

# rnic_up_conf N OPTIONS...: rnic_up N with OPTIONS where users put them,
# an "options rnic" line in /etc/modprobe.d/rnic.conf (the guest's own
# overlay), and a plain modprobe: the checks that follow see the options'
# effect through that path. insmod (RNIC_KO) reads no modprobe.d, so
# there the options go on its command line.
rnic_up_conf() {
	local n="$1"
	shift
	if [ -n "${RNIC_KO:-}" ]; then
		rnic_up "$n" "$@"
		return
	fi
	lab_exec "$n" --timeout 30 "echo 'options rnic $*' > /etc/modprobe.d/rnic.conf" &&
		rnic_up "$n"
}

# rnic_unload N...: stop rnic_perf, rmmod rnic_perf and rnic, in each VM
# in turn; rnic must be gone.
rnic_unload() {
	local n
	for n in "$@"; do
		lab_exec "$n" --timeout 60 "echo stop > $PERF_DBG/control && rmmod rnic_perf && rmmod rnic &&
			! grep -w '^rnic' /proc/modules" || return 1
	done
}

# rnic_down N: unload rnic_perf's users and rnic.
rnic_down() {
	lab_exec "$1" --timeout 60 "echo stop > $PERF_DBG/control; rmmod rnic"
}

# rxe_up N [ADDR/PREFIX...]: rdma_rxe on the virtio-net NIC as rxe0, with
# extra addresses on that NIC (e.g. one in the rnic subnet, so rnic VMs
# reach it on the same bridge), rnic_perf loaded.
rxe_up() {
	local n="$1" a adds=""
	shift
	for a in "$@"; do
		adds+="ip addr add $a dev \$LAB_VIRTIO_IF nodad; "
	done
	lab_exec "$n" --timeout 60 "set -e; $adds
		modprobe rdma_rxe
		rdma link add rxe0 type rxe netdev \$LAB_VIRTIO_IF
		rdma link show rxe0/1" && perf_load "$n"
}

# rc_qps_gone N [srq]: within 30 s, VM N's rnic0 has no RC QP left (and,
# with "srq", no SRQ either): a ULP's teardown drained and destroyed its
# QPs. ib_drain_qp() of an SRQ-attached QP waits 60 s, without a word,
# for a LAST_WQE_REACHED that does not come. Prints how long it took.
rc_qps_gone() {
	lab_exec "$1" --timeout 90 "s=\$(cut -d' ' -f1 /proc/uptime) r=-
		for i in \$(seq 60); do
			q=\$(rdma resource show qp link rnic0/1 | grep -c 'type RC')
			${2:+r=\$(rdma resource show srq dev rnic0 | grep -c srqn)}
			case \$q:\$r in 0:0 | 0:-) break ;; esac
			sleep 0.5
		done
		awk -v s=\$s -v q=\$q -v r=\$r '{ printf \"RC QPs %d, SRQs %s, %.1f s after the teardown began\\n\", q, r, \$1 - s }' /proc/uptime
		case \$q:\$r in 0:0 | 0:-) exit 0 ;; esac
		exit 1"
}

# roce_mode N IBDEV MODE: rdma_cm's default RoCE type for IBDEV port 1
# ("IB/RoCE v1" or "RoCE v2").
roce_mode() {
	lab_exec "$1" --timeout 30 "set -e; modprobe rdma_cm
		d=/sys/kernel/config/rdma_cm/$2
		[ -d \$d ] || mkdir \$d
		echo '$3' > \$d/ports/1/default_roce_mode
		grep -qx '$3' \$d/ports/1/default_roce_mode"
}

# hw_stats N LINK: "name value" lines of rdma statistic show link LINK.
hw_stats() {
	lab_exec "$1" --timeout 30 "rdma statistic show link $2" |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}


# stat_of FILE NAME: a counter's value in hw_stats output (0 if absent).
stat_of() { awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$1"; }

# roce_version_counted BEFORE AFTER V: between two hw_stats outputs, the
# NIC's TX and RX frames of RoCE vV went up and the other version's did not.
# Strict (stat_delta): a counter missing from either snapshot fails, it
# does not read as an unchanged 0.
roce_version_counted() {
	local b="$1" a="$2" v="$3" dir k n
	for dir in tx rx; do
		k="hw_${dir}_roce_v${v}_frames"
		n="$(stat_delta "$b" "$a" "$k")" || return 1
		echo "$k +$n"
		[ "$n" -gt 0 ] || return 1
	done
	for dir in tx rx; do
		k="hw_${dir}_roce_v$((3 - v))_frames"
		n="$(stat_delta "$b" "$a" "$k")" || return 1
		echo "$k +$n"
		[ "$n" = 0 ] || return 1
	done
}

# pcap_count PCAP FILTER [TSHARK_OPTIONS...]: frames matching FILTER.  A
# tshark that fails (unreadable capture, bad filter) prints nothing and
# fails, saying why: read as 0 it passed every "no frames of the other
# kind" check.
pcap_count() {
	local p="$1" f="$2" out
	shift 2
	if ! out="$(tshark -r "$p" "$@" -Y "$f" -T fields -e frame.number 2>&1)"; then
		echo "pcap_count: tshark failed on $p with filter '$f': ${out:0:300}" >&2
		return 1
	fi
	grep -c '^[0-9]' <<<"$out"
}

perf_preflight() { preflight rnic rnic_perf rnicsim; }

# stat_delta BEFORE AFTER NAME: how much a counter grew between two
# hw_stats snapshots; fails, saying so, if either snapshot lacks it (a
# missing counter must not read as an unchanged 0).
stat_delta() {
	local b a
	b="$(awk -v k="$3" '$1 == k { print $2 }' "$1" 2>/dev/null)"
	a="$(awk -v k="$3" '$1 == k { print $2 }' "$2" 2>/dev/null)"
	if [ -z "$b" ] || [ -z "$a" ]; then
		echo "no counter $3 in $1 or $2" >&2
		return 1
	fi
	echo $((a - b))
}

# pcap_sum PCAP FILTER: "FRAMES BYTES" of the frames matching FILTER
# (fails like pcap_count).
pcap_sum() {
	local out
	if ! out="$(tshark -r "$1" -Y "$2" -T fields -e frame.len 2>&1)"; then
		echo "pcap_sum: tshark failed on $1 with filter '$2': ${out:0:300}" >&2
		return 1
	fi
	awk '/^[0-9]+$/ { n++; b += $1 } END { print n + 0, b + 0 }' <<<"$out"
}
