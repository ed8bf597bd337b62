#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# The rnic ib_device, with the DKMS-installed module loaded by modprobe in
# the stock Debian kernel (scripts/dkms-install.sh first):
#  - rnic0 registers, port 1 ACTIVE with the rnic netdev (rdma link show),
#    link layer Ethernet, attributes from the device;
#  - ib_core fills the GID table from the netdev's IPv4 and IPv6 addresses
#    with exactly one entry per address per RoCE type of roce_mode:
#    "IB/RoCE v1" and "RoCE v2" for 3, only v1 for 1, only v2 for 2;
#  - the port follows the netdev (ip link set down/up);
#  - rnic0 disappears on rmmod and comes back on modprobe;
#  - rdma_cm's configfs: default_roce_mode accepts exactly the RoCE types the
#    port has ("IB/RoCE v1", "RoCE v2"; never the bare "RoCE v1"), and
#    default_roce_tos accepts 0-255.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic ib"
T0="$(lab__now_us)"
lab_start rnic_ib || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_ib"
	exit 1
}
# the boot, 18 with the default roce_mode, 8 for each of roce_mode 1 and 2.
lab_plan 35 1
check_init
preflight rnic rnicsim

# g CMD: run a bash snippet in the guest.
g() { lab_exec 1 --timeout "${GT:-60}" "$@"; }

lab_vm 1 --rnic
boot_vms 1

IBDEV=rnic0
PORT=/sys/class/infiniband/$IBDEV/ports/1
CFS=/sys/kernel/config/rdma_cm/$IBDEV

# load [OPTIONS]: modprobe rnic, bring its netdev up with the lab's
# addresses; prints the netdev name.
load() {
	g "set -e; modprobe rnic $*
	   for i in \$(seq 100); do [ -e $PORT ] && break; sleep 0.1; done
	   lab_ifup \"\$LAB_RNIC_SPEC\""
}

unload() {
	g "rmdir $CFS 2>/dev/null; rmmod rnic"
}

# The GID table as "index|gid|type|ndev" lines, valid entries only.
gid_dump() {
	# read, not cat: a fork per entry is slow under TCG
	g "cd $PORT
	   for f in gid_attrs/types/*; do
		n=\${f##*/}
		IFS= read -r t <\$f 2>/dev/null || continue
		IFS= read -r gid <gids/\$n
		IFS= read -r nd <gid_attrs/ndevs/\$n
		echo \"\$n|\$gid|\$t|\$nd\"
	   done; true"
}

# gids_expected IFNAME TYPES...: the GID table holds, for every address of
# IFNAME and for the default GID (fe80::/64 + EUI-64 of the MAC), exactly
# one entry of each of TYPES, bound to IFNAME, and nothing else. GIDs are
# added by ib_core's netdev notifier work, so wait for them a little.
gids_expected() {
	local ifname="$1" addrs mac dump i
	shift
	addrs="$(g "ip -o addr show dev $ifname | awk '{print \$4}'")" || return 1
	mac="$(g "cat /sys/class/net/$ifname/address")" || return 1
	for i in $(seq 30); do
		dump="$(gid_dump)" || return 1
		if python3 - "$ifname" "$mac" "$addrs" "$dump" "$@" >/dev/null 2>&1 <<'PY'; then
import ipaddress, sys
ifname, mac, addrs, dump, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
want = set()
for a in addrs.split():
    ip = ipaddress.ip_interface(a).ip
    if ip.version == 4:
        ip = ipaddress.IPv6Address("::ffff:" + str(ip))
    want.add(ip.exploded)
m = bytes.fromhex(mac.replace(":", ""))
eui = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:]
want.add(ipaddress.IPv6Address(b"\xfe\x80" + b"\0" * 6 + eui).exploded)
have = {}
for line in dump.splitlines():
    n, gid, t, nd = line.split("|")
    if nd != ifname:
        sys.exit("entry %s on %s, not %s" % (n, nd, ifname))
    have.setdefault((gid, t), []).append(n)
expect = {(g, t) for g in want for t in types}
bad = [k for k in have if k not in expect]
missing = [k for k in expect if k not in have]
dups = [k for k, v in have.items() if len(v) > 1]
if bad or missing or dups:
    sys.exit("unexpected %s missing %s duplicate %s" % (bad, missing, dups))
PY
			{
				echo "GID table of $ifname, types $*:"
				echo "$dump"
			}
			return 0
		fi
		sleep 0.5
	done
	echo "addresses of $ifname:"
	echo "$addrs"
	echo "expected types: $*"
	echo "GID table (index|gid|type|ndev):"
	echo "$dump"
	return 1
}

link_active() {
	local ifname="$1" out i
	[ -n "$ifname" ] || {
		echo "no netdev (the load failed)"
		return 1
	}
	for i in $(seq 30); do
		out="$(g "rdma link show $IBDEV/1")" || return 1
		echo "$out"
		case "$out" in
		*"state ACTIVE physical_state LINK_UP netdev $ifname"*) return 0 ;;
		esac
		sleep 0.5
	done
	return 1
}

port_state() {
	local want="$1" out i
	for i in $(seq 30); do
		out="$(g "cat $PORT/state")" || return 1
		echo "$out"
		case "$out" in *"$want"*) return 0 ;; esac
		sleep 0.2
	done
	return 1
}

# Port attributes the driver reports: link layer, node type, node GUID from
# the MAC.
port_attrs() {
	local ifname="$1" out mac guid
	out="$(g "cat $PORT/link_layer /sys/class/infiniband/$IBDEV/node_type
		  cat /sys/class/net/$ifname/address /sys/class/infiniband/$IBDEV/node_guid
		  rdma dev show $IBDEV")" || return 1
	echo "$out"
	grep -qx Ethernet <<<"$out" || return 1
	grep -q "^1: CA" <<<"$out" || return 1
	mac="$(sed -n 3p <<<"$out")"
	guid="$(sed -n 4p <<<"$out")"
	# 52:54:00:12:34:56 -> 5054:00ff:fe12:3456
	[ "$guid" = "$(python3 -c '
import sys
m = bytes.fromhex(sys.argv[1].replace(":", ""))
e = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:]
print(":".join(e[i:i + 2].hex() for i in range(0, 8, 2)))' "$mac")" ]
}

link_down() { g "ip link set $1 down" && port_state DOWN; }
link_up() { g "ip link set $1 up" && port_state ACTIVE; }
roce_mode_starts_v2() {
	local v
	v="$(g "cat $CFS/ports/1/default_roce_mode")" || return 1
	echo "$v"
	[ "$v" = "RoCE v2" ]
}
gone() {
	unload && g "! [ -e /sys/class/infiniband/$IBDEV ] &&
		     rdma link show >/tmp/links && ! grep -q $IBDEV /tmp/links &&
		     ! grep -qw ^rnic /proc/modules"
}

# cfs_accept FILE VALUE: the write must succeed and read back VALUE.
cfs_accept() {
	local file="$1" val="$2"
	g "echo '$val' > $CFS/ports/1/$file && cat $CFS/ports/1/$file" >"$OUT/cfs" 2>&1 || {
		cat "$OUT/cfs"
		return 1
	}
	cat "$OUT/cfs"
	[ "$(cat "$OUT/cfs")" = "$val" ]
}

# cfs_refuse FILE VALUE: the write must fail and leave the value unchanged.
cfs_refuse() {
	local file="$1" val="$2" before after
	before="$(g "cat $CFS/ports/1/$file")" || return 1
	if g "echo '$val' > $CFS/ports/1/$file"; then
		echo "'$val' was accepted"
		return 1
	fi
	after="$(g "cat $CFS/ports/1/$file")" || return 1
	echo "before '$before' after '$after'"
	[ "$before" = "$after" ]
}

cfs_mkdir() {
	g "modprobe rdma_cm && { mountpoint -q /sys/kernel/config ||
	   mount -t configfs none /sys/kernel/config; } && mkdir $CFS && ls $CFS/ports/1"
}

# load_if [OPTIONS]: load, keeping the netdev's name in IF for the checks
# that follow (empty if the load failed: they then fail too).
IF=""
load_if() { IF="$(load "$@")" && echo "netdev $IF"; }

# ------------------------------------------------------------------ default
need "modprobe rnic creates $IBDEV and its netdev comes up" load_if
check "rdma link show: $IBDEV/1 ACTIVE with netdev $IF" link_active "$IF" || true
check "port attributes: Ethernet link layer, CA, node GUID from the MAC" port_attrs "$IF" || true
check "roce_mode default (3): one GID per address per type, v1 and v2" \
	gids_expected "$IF" "IB/RoCE v1" "RoCE v2" || true
check "port goes DOWN with ip link set down" link_down "$IF" || true
check "port comes back ACTIVE with ip link set up" link_up "$IF" || true

check "configfs: mkdir $CFS" cfs_mkdir || true
check "configfs (roce_mode=3): default_roce_mode starts as RoCE v2" roce_mode_starts_v2 || true
check "configfs (roce_mode=3): \"IB/RoCE v1\" accepted and read back" \
	cfs_accept default_roce_mode "IB/RoCE v1" || true
check "configfs (roce_mode=3): \"RoCE v2\" accepted and read back" \
	cfs_accept default_roce_mode "RoCE v2" || true
check "configfs: bare \"RoCE v1\" refused" cfs_refuse default_roce_mode "RoCE v1" || true
for tos in 0 255 106; do
	check "configfs: default_roce_tos $tos accepted and read back" \
		cfs_accept default_roce_tos "$tos" || true
done
for tos in 256 -1 abc; do
	check "configfs: default_roce_tos $tos refused" cfs_refuse default_roce_tos "$tos" || true
done

# ------------------------------------------------------------------ reload
check "rmmod: $IBDEV, its sysfs directory and the module disappear" gone || true

for mode in 1 2; do
	if [ "$mode" = 1 ]; then
		types=("IB/RoCE v1") other="RoCE v2" own="IB/RoCE v1"
	else
		types=("RoCE v2") other="IB/RoCE v1" own="RoCE v2"
	fi
	# A failed load fails the checks after it, which still run.
	IF=""
	check "modprobe rnic roce_mode=$mode brings $IBDEV back" load_if roce_mode=$mode || true
	check "roce_mode=$mode: port ACTIVE with netdev $IF" link_active "$IF" || true
	check "roce_mode=$mode: GID table holds only ${types[*]}, one per address" \
		gids_expected "$IF" "${types[@]}" || true
	check "configfs (roce_mode=$mode): mkdir $CFS" cfs_mkdir || true
	check "configfs (roce_mode=$mode): \"$own\" accepted and read back" \
		cfs_accept default_roce_mode "$own" || true
	check "configfs (roce_mode=$mode): \"$other\" refused" \
		cfs_refuse default_roce_mode "$other" || true
	check "configfs (roce_mode=$mode): bare \"RoCE v1\" refused" \
		cfs_refuse default_roce_mode "RoCE v1" || true
	check "roce_mode=$mode: rmmod removes $IBDEV" gone || true
done

# Kernel warnings, oopses and leaks: lab_stop's sweep of vm1.

lab_stop
echo "# test_rnic_ib: $(lab_elapsed "$T0") s"
exit "$fail"
