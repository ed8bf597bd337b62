#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the tests of rnic's Ethernet netdev; source after
# scripts/lab/lab.sh.  Not a test itself.
#
#   DEV                       guest snippet setting dev= to the rnic netdev
#   ethtool_stats N           "name value" lines of ethtool -S in VM N
#   ethtool_stat N NAME       one of them (fails if ethtool or the counter
#                             is missing)
#   stats_zero N NAME...      every named counter is listed and 0
#   tcp_server_cmd            guest command: receive one TCP connection on
#                             port 5001 to its end; prints "BYTES SHA256"
#   tcp_client_cmd ADDR MIB   guest command: send MIB MiB of random bytes
#                             to ADDR:5001 and return once the server has
#                             read them all; prints "BYTES SHA256"
#   tcp_bulk FROM TO ADDR MIB one transfer; what TO received must be what
#                             FROM sent

# The rnic netdev's name, from the PCI driver's sysfs directory.
# shellcheck disable=SC2016 # expanded in the guest
DEV='dev=$(basename /sys/bus/pci/drivers/rnic/*/net/*)'

# ethtool runs alone in the guest: its status is lab_exec's, which the
# host's pipefail makes this pipeline's.
ethtool_stats() {
	lab_exec "$1" --timeout 60 "$DEV; ethtool -S \$dev" |
		awk -F': *' 'NF == 2 { sub(/^ +/, "", $1); print $1, $2 }'
}

ethtool_stat() {
	local v
	v="$(ethtool_stats "$1" | awk -v k="$2" '$1 == k { print $2 }')" || return 1
	[ -n "$v" ] || {
		echo "vm$1: no counter $2 in ethtool -S" >&2
		return 1
	}
	echo "$v"
}

stats_zero() {
	local n="$1" s k v bad=0
	shift
	s="$(ethtool_stats "$n")" || return 1
	for k in "$@"; do
		v="$(awk -v k="$k" '$1 == k { print $2 }' <<<"$s")"
		echo "vm$n $k: ${v:-missing}"
		[ "$v" = 0 ] || bad=1
	done
	return "$bad"
}

tcp_server_cmd() {
	cat <<-'EOF'
		python3 - <<'PY'
		import hashlib, socket
		s = socket.socket()
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind(('0.0.0.0', 5001))
		s.listen(1)
		s.settimeout(150)
		c, _ = s.accept()
		c.settimeout(150)
		h, n = hashlib.sha256(), 0
		while True:
		    b = c.recv(65536)
		    if not b:
		        break
		    h.update(b)
		    n += len(b)
		c.close()
		print(n, h.hexdigest())
		PY
	EOF
}

# The client half-closes and waits for the server's close: when it
# returns, every byte has arrived (a test may unload the driver then).
tcp_client_cmd() {
	cat <<-EOF
		python3 - <<'PY'
		import hashlib, os, socket, time
		data = os.urandom($2 << 20)
		for i in range(50):
		    try:
		        c = socket.create_connection(('$1', 5001), timeout=150)
		        break
		    except OSError:
		        time.sleep(0.2)
		c.sendall(data)
		c.shutdown(socket.SHUT_WR)
		while c.recv(65536):
		    pass
		c.close()
		print(len(data), hashlib.sha256(data).hexdigest())
		PY
	EOF
}

tcp_bulk() {
	local job sent got
	job="$(lab_bg "$2" "$(tcp_server_cmd)")" || return 1
	sent="$(lab_exec "$1" --timeout 200 "$(tcp_client_cmd "$3" "$4")")" || {
		lab_kill "$2" "$job"
		lab_wait "$2" "$job" --timeout 30
		return 1
	}
	got="$(lab_wait "$2" "$job" --timeout 200)" || return 1
	echo "sent: $sent; received: $got"
	[ -n "$sent" ] && [ "$sent" = "$got" ]
}
