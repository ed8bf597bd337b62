#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# rmmod + modprobe of rnic, many times, around traffic: the reset
# handshake of the unload and the next load must never lose a race (a
# reload used to find the last unload's RESET_DONE still set, program the
# queues before the device acted on the new reset, and fail to enable).
# Two rnic VMs; vm1 reloads:
#  - twice back to back, the first 3 s after the last traffic (no frame
#    in flight: the rings and the model are quiet within milliseconds);
#  - twice while ping -f runs both ways (vm1's flood restarted each
#    time; each reload checks that frames were arriving);
#  - twice right after a TCP transfer to vm2 ends (the client returns
#    once vm2 has read every byte, and the reload follows at once).
# A reload takes about 25 s on the debug kernel under TCG, so the counts
# are small (20 reloads took 9 minutes); every other lab test loads and
# unloads rnic too (about 40 times per suite run), and rnicsim's unit
# test dev_reset_is_self_clearing pins the handshake down.
# Every reload: rmmod and modprobe succeed, the netdev comes back with the
# lab's addresses and rnic0/1 ACTIVE, and vm1's kernel log since that
# reload has no "device refused to enable" and no "probe of ... failed".
# Then traffic still flows, the kernel logs of the whole run and both
# rnicsim logs (host side) have no device error.
#
# RNIC_KO=PATH loads that rnic.ko (insmod, after modprobe ib_core) instead
# of the DKMS install, e.g. to show that this test catches an old driver.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"
# shellcheck source=tests/lab/lib_net.sh
. "$(dirname "$0")/lib_net.sh"

SUITE="rnic reload"
T0="$(lab__now_us)"
IDLE=2 FLOOD=2 AFTER=2
lab_start rnic_reload || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_reload"
	exit 1
}
# 2 boots, 3 set-up steps, the reloads, 2 traffic and 3 log checks after.
lab_plan $((2 + 3 + IDLE + FLOOD + AFTER + 2 + 3)) 2
check_init
if [ -n "${RNIC_KO:-}" ]; then
	preflight rnicsim
	LOAD="modprobe ib_core && insmod $RNIC_KO"
else
	preflight rnic rnicsim
	LOAD="modprobe rnic"
fi

# Two vCPUs each: the driver's posts, completion handlers and teardown
# run on two CPUs at once (MTTCG).
lab_vm 1 --rnic --smp 2
lab_vm 2 --rnic --smp 2
boot_vms 1 2
V1="$(lab_addr 1 rnic 4)"
V2="$(lab_addr 2 rnic 4)"
V2_6="$(lab_addr 2 rnic 6)"

# The guest side of a load and of one reload, in vm1's $LAB_FILES.
# shellcheck disable=SC2016 # expanded in the guest
cat >"$LAB_DIR/vm1/ctl/files/reload.sh" <<'SH'
#!/bin/bash
# reload.sh load: load rnic, bring its netdev up, wait for rnic0/1 ACTIVE.
# reload.sh MARK: rmmod first; afterwards the kernel log since MARK
# (written to it before the rmmod) must not show a failed enable or probe.
# $LOAD is the load command.
set -u
up() {
	local i dev
	for i in $(seq 100); do
		[ -e /sys/class/infiniband/rnic0/ports/1 ] && break
		sleep 0.1
	done
	dev=$(lab_ifup "$LAB_RNIC_SPEC") || return 1
	lab_ib_active rnic0 || return 1
	echo "netdev $dev: $(ip -br addr show dev "$dev")"
}
if [ "$1" = load ]; then
	eval "$LOAD" && up
	exit
fi
m="rnic-test: reload $1"
echo "$m" >/dev/kmsg
rmmod rnic || exit 1
eval "$LOAD" || exit 1
up || exit 1
dmesg >/tmp/dmesg || exit 1
grep -q "$m\$" /tmp/dmesg || { echo "mark '$m' not in dmesg"; exit 1; }
sed -n "/$m\$/,\$p" /tmp/dmesg >/tmp/since
grep -E 'rnic|probe' /tmp/since
! grep -Eq 'refused to enable|probe of .* failed' /tmp/since
SH
# reload MARK [guest commands before it]: one reload in vm1.
reload() { lab_exec 1 --timeout 120 "export LOAD='$LOAD'; ${2:+$2 || exit 1;} bash \$LAB_FILES/reload.sh '$1'"; }

# shellcheck disable=SC2016 # expanded in the guest
need "vm1: rnic loaded, netdev up, rnic0/1 ACTIVE" \
	lab_exec 1 --timeout 120 "export LOAD='$LOAD'; bash \$LAB_FILES/reload.sh load"
# shellcheck disable=SC2016 # expanded in the guest
need "vm2: modprobe rnic, netdev up" \
	lab_exec 2 --timeout 120 'modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"'
need "vm1 -> vm2 IPv4 before the reloads" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2"

# ------------------------------------------------------------ back to back
sleep 3
for i in $(seq "$IDLE"); do
	check "reload $i of $IDLE back to back (idle): netdev and rnic0 back, no refused enable or failed probe" \
		reload "idle $i" || true
done

# ------------------------------------------------------------ during floods
# vm2 floods vm1 all along; vm1 floods vm2 from 2 s before each rmmod (its
# ping dies with the netdev), and its RX counter must have moved by then.
J2="$(lab_bg 2 "ping -f -w 900 $V1")" || J2=""
# shellcheck disable=SC2016 # expanded in the guest
FLOOD_CMD="$DEV"'; rx() { ethtool -S $dev | awk '\''$1 == "rx0_packets:" { print $2 }'\''; }
	ping -f -w 60 '"$V2"' >/dev/null 2>&1 &
	a=$(rx); sleep 2; b=$(rx)
	echo "rx0_packets in the 2 s before the rmmod: $a -> $b"
	[ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -gt 50 ]'
for i in $(seq "$FLOOD"); do
	check "reload $i of $FLOOD during ping -f both ways: netdev and rnic0 back, no refused enable or failed probe" \
		reload "flood $i" "$FLOOD_CMD" || true
	# vm1's flood outlives the reload command. Builtins only: under the
	# flood an exec of pkill took the guest 5-14 s.
	# shellcheck disable=SC2016 # expanded in the guest
	lab_exec 1 --timeout 30 'for p in /proc/[0-9]*; do
			c=; read -r c <"$p/comm" 2>/dev/null
			[ "$c" = ping ] && kill "${p#/proc/}" 2>/dev/null
		done; true' >/dev/null 2>&1 || true
done
if [ -n "$J2" ]; then
	lab_kill 2 "$J2"
	lab_wait 2 "$J2" --timeout 30 >/dev/null 2>&1 || true
fi

# ------------------------------------------------------------ right after TCP
# tcp_then_reload I: 2 MiB vm1 -> vm2, reload the moment the client
# returns (vm2 has read it all), then compare what vm2 got.
tcp_then_reload() {
	local job sent got rc=0
	job="$(lab_bg 2 "$(tcp_server_cmd)")" || return 1
	# Braces: the client is a here-document, which must end on its own line.
	reload "tcp $1" "{ $(tcp_client_cmd "$V2" 2)
} >/tmp/sent" || rc=1
	sent="$(lab_exec 1 --timeout 30 'cat /tmp/sent')" || rc=1
	got="$(lab_wait 2 "$job" --timeout 200)" || rc=1
	echo "sent: $sent; received: $got"
	[ "$rc" = 0 ] && [ -n "$sent" ] && [ "$sent" = "$got" ]
}
for i in $(seq "$AFTER"); do
	check "reload $i of $AFTER right after a TCP transfer (2 MiB intact): netdev and rnic0 back, no refused enable or failed probe" \
		tcp_then_reload "$i" || true
done

# ------------------------------------------------------------ afterwards
both_ways() {
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2" &&
		lab_exec 1 --timeout 60 "ping -6 -c 3 -i 0.2 -W 5 -w 20 $V2_6" &&
		lab_exec 2 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V1"
}
check "after the reloads: ping vm1 <-> vm2, IPv4 and IPv6" both_ways || true
check "after the reloads: bulk TCP vm2 -> vm1 (4 MiB) intact" tcp_bulk 2 1 "$V1" 4 || true
clean_dmesg() {
	local n out rc=0
	for n in 1 2; do
		out="$(lab_exec "$n" --timeout 60 'dmesg')" || return 1
		if grep -E 'refused to enable|probe of .* failed' <<<"$out"; then
			rc=1
		fi
		echo "vm$n: $(grep -c 'rnic-test: reload' <<<"$out") reload marks, $(grep -c . <<<"$out") lines"
	done
	return "$rc"
}
check "vm1 and vm2 kernel logs of the whole run: no refused enable, no failed probe" clean_dmesg || true
# The model's side: it logs "device fatal" when the driver programmed it
# wrongly (e.g. queues written before the reset they raced).
sim_clean() {
	local log="$LAB_DIR/vm$1/rnicsim.log"
	[ -f "$log" ] || {
		echo "no $log"
		return 1
	}
	! grep -n 'device fatal' "$log"
}
check_vms "1 2" "rnicsim.log has no 'device fatal'" sim_clean || true

lab_stop
echo "# test_rnic_reload: $(lab_elapsed "$T0") s"
exit "$fail"
