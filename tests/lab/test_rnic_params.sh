#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug stock
# shellcheck disable=SC2317 # functions are called through check
#
# rnic's module parameters, with the DKMS-installed module and modprobe in
# the stock Debian kernel (scripts/dkms-install.sh first):
#  - every out-of-range or malformed value refuses the load, leaves no rnic
#    module behind, and logs exactly one line that names the parameter and
#    its valid range;
#  - options in /etc/modprobe.d/rnic.conf (written in the guest's overlay)
#    take effect through a plain `modprobe rnic`: the values read back from
#    /sys/module/rnic/parameters, the GID types follow roce_mode and
#    ethtool -g shows eth_ring_size (up to its maximum, 4096); their
#    effects on the wire (roce_udp_port, pfc_prio) are checked with the
#    same rnic.conf in test_perf_rnic.sh and test_rnic_pfc.sh;
#  - `modinfo rnic` describes every parameter the module has.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic params"
T0="$(lab__now_us)"
lab_start rnic_params || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_params"
	exit 1
}
# the boot, 8 refusals, modinfo, 8 for each of 3 rnic.conf rounds.
lab_plan 34 1
check_init
preflight rnic rnicsim

g() { lab_exec 1 --timeout "${GT:-60}" "$@"; }

lab_vm 1 --rnic
boot_vms 1

# refused OPTION RANGE_RE: modprobe fails, rnic is not loaded afterwards,
# and the kernel log got exactly one line that names the parameter and
# matches RANGE_RE (the kernel's own "`x' invalid for parameter" line
# names no range and is not counted).
refused() {
	local opt="$1" range="$2" name="${1%%=*}" out lines n
	out="$(g "dmesg -C
		  if modprobe rnic $opt; then echo LOADED; fi
		  grep -qw ^rnic /proc/modules && echo STILL-LOADED
		  echo ---
		  dmesg")" || return 1
	echo "$out"
	grep -q LOADED <<<"$out" && return 1
	# without the timestamps, whose digits would match a range
	lines="$(sed '0,/^---$/d; s/^\[[^]]*\] //' <<<"$out" |
		grep -F "$name" | grep -E "$range" || true)"
	n="$(grep -c . <<<"$lines" || true)"
	echo "lines naming $name and its range ($n):"
	echo "$lines"
	[ "$n" = 1 ]
}

check "roce_mode=4 refused" refused roce_mode=4 '\<1\>.*\<2\>.*\<3\>' || true
check "roce_mode=v2 refused" refused roce_mode=v2 '\<1\>.*\<2\>.*\<3\>' || true
check "roce_udp_port=0 refused" refused roce_udp_port=0 '1-65535' || true
check "roce_udp_port=70000 refused" refused roce_udp_port=70000 '1-65535' || true
check "pfc_prio=8 refused" refused pfc_prio=8 '0-7' || true
check "pfc_prio=on refused" refused pfc_prio=on '0-7' || true
check "eth_ring_size=100 refused" refused eth_ring_size=100 '64-4096' || true
check "user_kick_map=maybe refused" refused user_kick_map=maybe '\<1\>.*\<0\>' || true

# modinfo: every parameter the loaded module has is described.
modinfo_describes_all() {
	local out
	out="$(g "modprobe rnic && ls /sys/module/rnic/parameters && echo --- &&
		  modinfo rnic; rc=\$?; rmmod rnic; exit \$rc")" || return 1
	echo "$out"
	local p ok=0 params
	params="$(sed '/^---$/,$d' <<<"$out")"
	[ -n "$params" ] || return 1
	for p in $params; do
		if ! grep -Eq "^parm: +$p:.{10,}" <<<"$out"; then
			echo "no description for $p"
			ok=1
		fi
	done
	return "$ok"
}
check "modinfo rnic describes every parameter" modinfo_describes_all || true

# conf OPTIONS: write /etc/modprobe.d/rnic.conf, modprobe rnic, read back
# the parameters, bring the netdev up and list the GID types.
CONF_OUT=""
conf_load() {
	local rc=0
	CONF_OUT="$(g "set -e
		echo 'options rnic $*' > /etc/modprobe.d/rnic.conf
		modprobe rnic
		cd /sys/module/rnic/parameters
		for p in *; do echo \"param \$p=\$(cat \$p)\"; done
		for i in \$(seq 100); do
			[ -e /sys/class/infiniband/rnic0/ports/1 ] && break
			sleep 0.1
		done
		lab_ifup \"\$LAB_RNIC_SPEC\" >/dev/null
		dev=\$(basename /sys/bus/pci/drivers/rnic/*/net/*)
		ethtool -g \$dev | awk '/^Current/ { c = 1 } c && /^(RX|TX):/ { print \"ring\", \$1, \$2 }'
		cd /sys/class/infiniband/rnic0/ports/1/gid_attrs/types
		# read, not cat: a fork per entry is slow under TCG
		gid_types() {
			for f in *; do
				IFS= read -r t <\$f 2>/dev/null && echo \"types \$t\"
			done
			return 0
		}
		# the default GIDs, IPv4 and IPv6: at least 3 entries
		for w in \$(seq 30); do
			[ \$(gid_types | wc -l) -ge 3 ] && break
			sleep 0.5
		done
		gid_types")" || rc=1
	echo "$CONF_OUT"
	return "$rc"
}

param_is() { grep -qx "param $1=$2" <<<"$CONF_OUT"; }
# ring_is N: ethtool -g's current RX and TX ring sizes are N.
ring_is() { grep -qx "ring RX: $1" <<<"$CONF_OUT" && grep -qx "ring TX: $1" <<<"$CONF_OUT"; }
types_are() {
	local want="$1" have
	have="$(sed -n 's/^types //p' <<<"$CONF_OUT" | sort -u | paste -sd, -)"
	echo "GID types: $have (want $want)"
	[ "$have" = "$want" ]
}
# unload_conf: rmmod must succeed and leave no rnic; rnic.conf goes
# either way, so that a failed round does not leak into the next one.
unload_conf() {
	g "rc=0
	   rmmod rnic || rc=1
	   rm /etc/modprobe.d/rnic.conf || rc=1
	   ! grep -qw ^rnic /proc/modules || rc=1
	   exit \$rc"
}

conf_round() {
	local options="$1" mode="$2" port="$3" prio="$4" ring="$5" types="$6"
	# A failed load leaves CONF_OUT without the values: what follows fails.
	CONF_OUT=""
	check "rnic.conf '$options': modprobe rnic loads" conf_load "$options" || true
	check "rnic.conf: roce_mode reads back $mode" param_is roce_mode "$mode" || true
	check "rnic.conf: roce_udp_port reads back $port" param_is roce_udp_port "$port" || true
	check "rnic.conf: pfc_prio reads back $prio" param_is pfc_prio "$prio" || true
	check "rnic.conf: eth_ring_size reads back $ring" param_is eth_ring_size "$ring" || true
	check "rnic.conf: ethtool -g: the netdev's RX and TX rings have $ring descriptors" ring_is "$ring" || true
	check "rnic.conf roce_mode=$mode: GID types are $types" types_are "$types" || true
	check "rnic.conf: rmmod rnic" unload_conf || true
}

conf_round "roce_mode=2 roce_udp_port=1021 pfc_prio=3 eth_ring_size=4096" \
	2 1021 3 4096 "RoCE v2"
conf_round "roce_mode=1 pfc_prio=off eth_ring_size=64" \
	1 4791 off 64 "IB/RoCE v1"
conf_round "roce_mode=3" 3 4791 off 256 "IB/RoCE v1,RoCE v2"

lab_stop
echo "# test_rnic_params: $(lab_elapsed "$T0") s"
exit "$fail"
