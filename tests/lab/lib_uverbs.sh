#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Userspace verbs in the lab: Debian's own unmodified binaries (ibverbs-utils,
# rdmacm-utils, perftest) between a server in one VM and a client in
# another, over whatever provider the device has (librnic for rnic, rxe's
# for rdma_rxe).  Source after scripts/lab/lab.sh and lib_check.sh.  Not a
# test itself.
#
#   uv_gid_index N DEV ADDR TYPE   the index of DEV port 1's GID for ADDR
#                                  (IPv4 or IPv6) of TYPE ("RoCE v2" or
#                                  "IB/RoCE v1") in VM N
#   uv_pair NAME SRV CLI WAIT      SRV in VM $UV_SRV, then CLI in VM $UV_CLI
#                                  once WAIT (tcp:PORT, cm or cm:PORT) says the
#                                  server listens; both outputs in
#                                  $LAB_DIR/uv-NAME.{server,client}
#   uv_iters FILE N                ibv_*_pingpong's "N iters in" line is in
#                                  FILE
#   uv_perf_row FILE SIZE          perftest's result row for SIZE in FILE,
#                                  as "SIZE ITERS FIELDS...", or status 1

UV_SRV=${UV_SRV:-2}
UV_CLI=${UV_CLI:-1}

# uv_gid ADDR: the 16-byte GID of an IPv4 (mapped) or IPv6 address, in
# sysfs's form.
uv_gid() {
	python3 -c '
import ipaddress, sys
ip = ipaddress.ip_address(sys.argv[1])
if ip.version == 4:
    ip = ipaddress.IPv6Address("::ffff:" + str(ip))
h = ip.packed.hex()
print(":".join(h[i:i + 4] for i in range(0, 32, 4)))' "$1"
}

uv_gid_index() {
	local n="$1" dev="$2" gid type="$4"
	gid="$(uv_gid "$3")" || return 1
	# read, not cat: a fork per entry is slow under TCG
	lab_exec "$n" --timeout 60 "cd /sys/class/infiniband/$dev/ports/1 || exit 1
		for i in \$(seq 100); do
			for f in gid_attrs/types/*; do
				x=\${f##*/}
				IFS= read -r t <\$f 2>/dev/null || continue
				[ \"\$t\" = '$type' ] || continue
				IFS= read -r g <gids/\$x
				[ \"\$g\" = '$gid' ] && { echo \$x; exit 0; }
			done
			sleep 0.1
		done
		echo 'no $type GID $gid on $dev' >&2; exit 1"
}

# uv_listening N tcp:PORT|cm|cm:PORT: the server in VM N listens (TCP
# port PORT, or an rdma_cm ID in LISTEN, on PORT).  /proc/net/tcp{,6} (state 0A is LISTEN),
# not ss: one ss takes 2-3 s of a debug guest's vCPU, which the server
# it waits for needs.
uv_listening() {
	local n="$1" what="$2" probe
	case "$what" in
	tcp:*)
		probe="$(printf 'grep -qE "^ *[0-9]+: [0-9A-F]+:%04X [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6' \
			"${what#tcp:}")"
		;;
	cm) probe="rdma resource show cm_id 2>/dev/null | grep LISTEN >/dev/null" ;;
	cm:*) probe="rdma resource show cm_id 2>/dev/null | grep -E 'LISTEN .*src-addr [^ ]*:${what#cm:}( |\$)' >/dev/null" ;;
	*) return 1 ;;
	esac
	lab_exec "$n" --timeout 60 "for i in \$(seq 300); do $probe && exit 0; sleep 0.1; done
		echo 'server did not listen ($what)' >&2; exit 1"
}

uv_pair() {
	local name="$1" srv="$2" cli="$3" wait="$4" job rc=0
	local out="$LAB_DIR/uv-$name"
	job="$(lab_bg "$UV_SRV" "$srv")" || return 1
	if ! uv_listening "$UV_SRV" "$wait"; then
		lab_kill "$UV_SRV" "$job"
		lab_wait "$UV_SRV" "$job" --timeout 10 >"$out.server" 2>&1 || true
		tail -n 20 "$out.server"
		return 1
	fi
	lab_exec "$UV_CLI" --timeout "${UV_TIMEOUT:-120}" "$cli" >"$out.client" 2>&1 || rc=1
	[ "$rc" = 0 ] || lab_kill "$UV_SRV" "$job"
	lab_wait "$UV_SRV" "$job" --timeout 60 >"$out.server" 2>&1 || rc=1
	echo "== server: $srv"
	tail -n 25 "$out.server"
	echo "== client: $cli"
	tail -n 25 "$out.client"
	return "$rc"
}

uv_iters() {
	grep -q "^$2 iters in [0-9.]* seconds" "$1"
}

uv_perf_row() {
	local row
	row="$(awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ { $1 = $1; print; exit }' "$1")"
	[ -n "$row" ] || return 1
	echo "$row"
}

# uv_cut_off OUT: rnic_hostile traffic's output OUT says it failed after it
# had verified transfers: the device went away under a working process,
# which did not just fail to start.
uv_cut_off() {
	local n
	n="$(sed -n 's/^ *\([0-9]*\) transfers verified before the failure$/\1/p' "$1")"
	echo "traffic: ${n:-no count of} transfers verified, then: $(grep '^hostile traffic: ' "$1")"
	grep -q '^hostile traffic: FAIL' "$1" && [ "${n:-0}" -gt 0 ]
}

# uv_cut_busy VM HOSTILE DEV OUT CMD: while rnic_hostile traffic (HOSTILE)
# verifies transfers on DEV in VM, the guest command CMD takes the device
# away (rmmod, unbind): CMD must succeed and the process fail after it had
# verified transfers (uv_cut_off); the process's output goes to OUT.
uv_cut_busy() {
	local vm="$1" hostile="$2" dev="$3" out="$4" cmd="$5" job rc=0
	[ -n "$hostile" ] || return 1
	job="$(lab_bg "$vm" "$hostile -d $dev -T 10000 -t 60 traffic")" || return 1
	lab_exec "$vm" --timeout 90 "$cmd" || rc=1
	lab_wait "$vm" "$job" --timeout 60 >"$out" 2>&1 && rc=1
	cat "$out"
	uv_cut_off "$out" || rc=1
	return "$rc"
}
