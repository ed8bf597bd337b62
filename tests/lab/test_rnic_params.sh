#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rnic's module parameters, with the DKMS-installed module and modprobe in
# the stock Debian kernel (scripts/dkms-install.sh first):
#  - every out-of-range or malformed value refuses the load, leaves no rnic
#    module behind, and logs exactly one line that names the parameter and
#    its valid range;
#  - options in /etc/modprobe.d/rnic.conf (written in the guest's overlay)
#    take effect through a plain `modprobe rnic`: the values read back from
#    /sys/module/rnic/parameters, and the GID types follow roce_mode;
#  - `modinfo rnic` describes every parameter the module has.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SUITE="rnic params"
T0="$(lab__now_us)"
KVER="$(cat "$RNIC_CACHE/kver" 2>/dev/null || true)"
lab_start rnic_params || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_params"
	exit 1
}
OUT="$LAB_DIR/checks"
mkdir -p "$OUT"
fail=0

nchk=0
check() {
	local what="$1" f
	shift
	nchk=$((nchk + 1))
	f="$OUT/$nchk.log"
	if "$@" >"$f" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$f"
		fail=1
	fi
}

g() { lab_exec 1 --timeout "${GT:-60}" "$@"; }

if ! modinfo -k "$KVER" -n rnic 2>/dev/null | grep -q "/updates/dkms/"; then
	lab_not_ok "$SUITE: rnic is DKMS-installed for $KVER (run scripts/dkms-install.sh)" \
		"$RNIC_LAB_DIR"
	exit 1
fi
if [ ! -x "$LAB_RNICSIM" ] &&
	! make -C "$LAB_REPO/tools/rnicsim" >"$LAB_DIR/rnicsim-build.log" 2>&1; then
	lab_not_ok "$SUITE: rnicsim builds" "$LAB_DIR/rnicsim-build.log"
	exit 1
fi

lab_vm 1 --rnic
if lab_wait_ready 1; then
	lab_ok "$SUITE: vm1 with an rnic NIC boots to the agent"
else
	lab_not_ok "$SUITE: vm1 with an rnic NIC boots to the agent" "$LAB_DIR/vm1/console.log"
	exit 1
fi

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

check "roce_mode=4 refused" refused roce_mode=4 '\<1\>.*\<2\>.*\<3\>'
check "roce_mode=v2 refused" refused roce_mode=v2 '\<1\>.*\<2\>.*\<3\>'
check "roce_udp_port=0 refused" refused roce_udp_port=0 '1-65535'
check "roce_udp_port=70000 refused" refused roce_udp_port=70000 '1-65535'
check "pfc_prio=8 refused" refused pfc_prio=8 '0-7'
check "pfc_prio=on refused" refused pfc_prio=on '0-7'
check "eth_ring_size=100 refused" refused eth_ring_size=100 '64-4096'

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
	return $ok
}
check "modinfo rnic describes every parameter" modinfo_describes_all

# conf OPTIONS: write /etc/modprobe.d/rnic.conf, modprobe rnic, read back
# the parameters, bring the netdev up and list the GID types.
CONF_OUT=""
conf_load() {
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
		gid_types")"
	echo "$CONF_OUT"
}

param_is() { grep -qx "param $1=$2" <<<"$CONF_OUT"; }
types_are() {
	local want="$1" have
	have="$(sed -n 's/^types //p' <<<"$CONF_OUT" | sort -u | paste -sd, -)"
	echo "GID types: $have (want $want)"
	[ "$have" = "$want" ]
}
unload_conf() { g "rmmod rnic; rm -f /etc/modprobe.d/rnic.conf"; }

conf_round() {
	local options="$1" mode="$2" port="$3" prio="$4" ring="$5" types="$6"
	if ! conf_load "$options" >"$OUT/conf-$mode.log" 2>&1; then
		lab_not_ok "$SUITE: rnic.conf '$options': modprobe rnic loads" "$OUT/conf-$mode.log"
		fail=1
		g "rm -f /etc/modprobe.d/rnic.conf" >/dev/null 2>&1 || true
		return
	fi
	lab_ok "$SUITE: rnic.conf '$options': modprobe rnic loads"
	check "rnic.conf: roce_mode reads back $mode" param_is roce_mode "$mode"
	check "rnic.conf: roce_udp_port reads back $port" param_is roce_udp_port "$port"
	check "rnic.conf: pfc_prio reads back $prio" param_is pfc_prio "$prio"
	check "rnic.conf: eth_ring_size reads back $ring" param_is eth_ring_size "$ring"
	check "rnic.conf roce_mode=$mode: GID types are $types" types_are "$types"
	check "rnic.conf: rmmod rnic" unload_conf
}

conf_round "roce_mode=2 roce_udp_port=1021 pfc_prio=3 eth_ring_size=512" \
	2 1021 3 512 "RoCE v2"
conf_round "roce_mode=1 pfc_prio=off eth_ring_size=64" \
	1 4791 off 64 "IB/RoCE v1"
conf_round "roce_mode=3" 3 4791 off 256 "IB/RoCE v1,RoCE v2"

lab_stop
echo "# test_rnic_params: $(lab_elapsed "$T0") s"
exit "$fail"
