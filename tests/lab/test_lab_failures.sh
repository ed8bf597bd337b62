#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
# lab-weight: 1
# (one scenario at a time, each with one stock VM at most but the sweep's
# three short-lived ones; ~50 s, most of it timeouts waited out on
# purpose: it runs beside another one-VM test)
# shellcheck disable=SC2317 # functions are called through check
#
# The lab under bad input: a missing dependency, a VM that does not boot,
# a boot that times out, a command that times out, a test that fails under
# set -e, and a run interrupted by Ctrl-C (SIGINT to its process group)
# or SIGTERM.  Each must end in ONE clear "lab: ..." line naming the stage
# and the log to read, a non-zero exit, and nothing left behind: no QEMU,
# rnicsim or dumpcap process, namespace, tap, /dev/shm file or socket.
# The guest's shell: a command's set -e stops it at its first failure,
# and its pipelines fail when any command in them fails (pipefail).
# And lab_stop's sweep: a kernel WARNING on a console, or a VM that died,
# is a "not ok" line of its own; a VM stopped on purpose is not.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lab/lab.sh
. "$HERE/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$HERE/lib_check.sh"

SUITE="lab failures"
T0="$(lab__now_us)"
WORK="$RNIC_LAB_DIR/failures"
rm -rf "$WORK"
mkdir -p "$WORK"
# The scenarios are labs of their own, each in a child: this script
# starts none, so no lab_stop adds lines to these 30.
echo "1..32"
check_init "$WORK/checks"

# scenario NAME: run $WORK/NAME.sh (a lab script, body on stdin) as its own
# process group; sets RC, S_OUT and S_ERR (file names).  RUN is the lab
# run id the script reports, for the leftover check.
scenario() {
	local name="$1"
	{
		echo "set -euo pipefail"
		echo ". '$HERE/../../scripts/lab/lab.sh'"
		cat
	} >"$WORK/$name.sh"
	S_OUT="$WORK/$name.out"
	S_ERR="$WORK/$name.err"
	RC=0
	bash "$WORK/$name.sh" >"$S_OUT" 2>"$S_ERR" || RC=$?
}

# The error lines (lab's info lines start with "# ").
err_lines() { grep -c '^lab: ' "$S_ERR" || true; }

# one_line PATTERN: non-zero exit, exactly one "lab:" line, and it
# matches PATTERN.
one_line() {
	local line
	line="$(grep '^lab: ' "$S_ERR" | head -1)"
	echo "exit $RC, $(err_lines) lab: lines, the first: $line (see $S_ERR)"
	[ "$RC" != 0 ] && [ "$(err_lines)" = 1 ] && grep -qE -- "$1" <<<"$line"
}
expect_one_line() {
	check "$1: non-zero exit and one clear line matching /$2/" one_line "$2" || true
	sed -n 's/^exit/# '"$1"': exit/p' "$OUT/$nchk.log"
}

# nothing_left: nothing of the scenario's run is left.  Its run id is
# needed: without it the search would take in other labs on this host.
nothing_left() {
	local run
	run="$(sed -n 's/^RUN=//p' "$S_OUT" | tail -1)"
	[ -n "$run" ] || {
		echo "the scenario printed no RUN= line (see $S_OUT)"
		return 1
	}
	lab_leftovers "$run"
}
expect_clean() { check "$1: nothing left behind" nothing_left || true; }

# ---- missing dependencies: no VM starts, one line says what to install.
RNIC_LAB_QEMU=/nonexistent/qemu-system-x86_64 scenario no-qemu <<<'lab_start f_noqemu'
expect_one_line "missing QEMU" 'missing dependency: .*qemu.*install-deps'
RNIC_LAB_KERNEL=/nonexistent/vmlinuz scenario no-kernel <<<'lab_start f_nokernel'
expect_one_line "missing kernel" 'missing dependency: kernel /nonexistent/vmlinuz'
RNIC_LAB_BUSYBOX=/nonexistent/busybox scenario no-busybox <<<'lab_start f_nobusybox'
expect_one_line "missing busybox" 'initramfs build failed: .*busybox.*see .*initramfs.log'
RNIC_LAB_RNICSIM=/nonexistent/rnicsim scenario no-rnicsim <<'S'
lab_start f_norsim
echo "RUN=$LAB_RUN"
lab_vm 1 --rnic
S
expect_one_line "missing rnicsim" 'vm1: missing dependency: /nonexistent/rnicsim'
expect_clean "missing rnicsim"

# ---- a VM that does not boot: the guest init does not exist, so the
# initramfs gives up and the kernel panics; QEMU exits.
RNIC_LAB_APPEND=rniclab.init=/nonexistent/guest-init.sh scenario no-boot <<'S'
lab_start f_noboot
echo "RUN=$LAB_RUN"
lab_vm 1 --virtio
lab_wait_ready 1
S
expect_one_line "VM that does not boot" 'vm1: did not boot: .*stage switch-root.*see .*console.log'
expect_clean "VM that does not boot"

# ---- a boot that takes longer than the timeout.
RNIC_LAB_BOOT_TIMEOUT=2 scenario boot-timeout <<'S'
lab_start f_boottmo
echo "RUN=$LAB_RUN"
lab_vm 1
lab_wait_ready 1
S
expect_one_line "boot timeout" 'vm1: did not boot in 2 s: stage .*see .*console.log'
expect_clean "boot timeout"

# ---- a command that times out: killed in the guest (with its children),
# status 124, the VM still serves commands afterwards.
scenario cmd-timeout <<'S'
lab_start f_cmdtmo
echo "RUN=$LAB_RUN"
lab_vm 1
lab_wait_ready 1
rc=0
lab_exec 1 --timeout 2 '/bin/sleep 300 | cat; echo never' || rc=$?
echo "TIMEOUT_RC=$rc"
# The sleep must be gone, and the agent still answers.
lab_exec 1 --timeout 30 'pgrep -f "sleep 300" >/dev/null && echo LEFT || echo GONE'
lab_exec 1 --timeout 30 'echo out; echo err >&2; exit 7' || echo "EXIT_RC=$?"
lab_exec 1 --timeout 30 'set -e; false; echo REACHED' || echo "SETE_RC=$?"
lab_exec 1 --timeout 30 'false | true' || echo "PIPEFAIL_RC=$?"
exit 3
S
echo "# command timeout: $(grep '^lab: ' "$S_ERR" | head -1)"
timed_out() {
	cat "$S_OUT" "$S_ERR"
	grep -q '^TIMEOUT_RC=124$' "$S_OUT" && [ "$(err_lines)" = 1 ] &&
		grep -qE '^lab: vm1: command timed out after 2 s: /bin/sleep 300 .*see .*commands.log' "$S_ERR"
}
check "command timeout: status 124 and one clear line" timed_out || true
check "command timeout: the command's processes are killed in the guest" grep '^GONE$' "$S_OUT" || true
exec_returns() {
	grep -q '^out$' "$S_OUT" && grep -q '^err$' "$S_ERR" && grep -q '^EXIT_RC=7$' "$S_OUT"
}
check "lab_exec returns stdout, stderr and the exit status" exec_returns || true
# The agent once started jobs from a condition (handle || ...), where bash
# ignores set -e, in the jobs too: every "set -e" in a guest command did
# nothing, and a command's status was only its last command's.
sete_stops() { grep -q '^SETE_RC=1$' "$S_OUT" && ! grep -q '^REACHED$' "$S_OUT"; }
check "a guest command under set -e stops at its first failure (status 1)" sete_stops || true
# Guest commands run with pipefail, as the host's tests do: a pipeline
# whose first command fails must not pass (scripts/lab/guest-init.sh).
pipefail_on() { grep -q '^PIPEFAIL_RC=1$' "$S_OUT"; }
check "a guest pipeline fails when a command in it fails (pipefail)" pipefail_on || true
expect_clean "command timeout"

# ---- a failing command under set -e in a test (the ERR/EXIT path).
scenario set-e <<'S'
lab_start f_sete
echo "RUN=$LAB_RUN"
lab_vm 1 --virtio
lab_capture_start "$LAB_DIR/x.pcap"
false
S
check "set -e failure: non-zero exit (got $RC)" [ "$RC" != 0 ] || true
expect_clean "set -e failure"

# ---- SIGTERM (what CI's timeout sends) while a VM boots, and Ctrl-C with
# it up: a VM with both NICs (its rnicsim too: without rnicsim, lab_vm
# fails and so do these checks) and a capture.
cat >"$WORK/interrupt.sh" <<S
set -euo pipefail
. '$HERE/../../scripts/lab/lab.sh'
lab_start "\$1"
echo "RUN=\$LAB_RUN"
lab_vm 1 --virtio --rnic
lab_capture_start "\$LAB_DIR/bridge.pcap"
[ "\$2" = ready ] && lab_wait_ready 1
echo READY
while :; do sleep 1; done
S
# interrupt SIGNAL WHEN: start interrupt.sh as its own process group,
# signal the whole group (a terminal's Ctrl-C does the same) once it is
# READY, and wait for it to finish.  Job control (set -m) rather than
# "setsid cmd &": a non-interactive shell starts background jobs with
# SIGINT ignored, and a shell cannot trap a signal ignored on entry.  For
# the same reason the signals lab.sh traps are reset to their defaults:
# this test may itself run with them ignored (started in the background,
# or under nohup), where a terminal's Ctrl-C would not be.
interrupt() {
	local sig="$1" when="$2" pid i
	S_OUT="$WORK/interrupt-$sig.out"
	S_ERR="$WORK/interrupt-$sig.err"
	set -m
	env --default-signal=HUP,INT,TERM bash "$WORK/interrupt.sh" "f_int_$sig" "$when" >"$S_OUT" 2>"$S_ERR" &
	pid=$!
	set +m
	for i in $(seq 600); do
		grep -q '^READY$' "$S_OUT" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -"$sig" -- "-$pid" 2>/dev/null || true
	# It must finish on its own; if not, that is a failure, but still
	# clean up rather than hang.
	for i in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "# interrupt.sh ignored SIG$sig for 60 s, sending SIGTERM" >>"$S_ERR"
		kill -TERM "$pid"
	fi
	RC=0
	wait "$pid" || RC=$?
}
# ended_by SIGNAL RC: the run was READY (its VM and rnicsim started), and
# the signal ended it with RC.
ended_by() {
	cat "$S_OUT" "$S_ERR"
	echo "exit $RC, want $2"
	[ "$RC" = "$2" ] && grep -q '^READY$' "$S_OUT" &&
		[ -f "$RNIC_LAB_DIR/f_int_$1/vm1/rnicsim.pid" ]
}
interrupt TERM booting
echo "# SIGTERM during boot: exit $RC: $(grep '^lab: ' "$S_ERR" | head -1)"
check "SIGTERM during boot (rnicsim too): exit 143" ended_by TERM 143 || true
expect_clean "SIGTERM during boot"

interrupt INT ready
echo "# Ctrl-C with a VM up: exit $RC: $(grep '^lab: ' "$S_ERR" | head -1)"
check "Ctrl-C (SIGINT) with a VM up (rnicsim too): exit 130" ended_by INT 130 || true
expect_clean "Ctrl-C with a VM up"

# ---- lab_stop's sweep: three VMs; vm1's kernel logs a WARNING, vm2's
# QEMU is killed, vm3's is stopped and declared gone.  The scenario plans
# no checks of its own: its lines are the sweep's and the cleanup's.
scenario sweep <<'S'
lab_start f_sweep
echo "RUN=$LAB_RUN"
lab_plan 0 3
for n in 1 2 3; do lab_vm "$n"; done
for n in 1 2 3; do lab_wait_ready "$n"; done
lab_exec 1 'echo "<4>WARNING: CPU: 0 PID: 1 at lab_failures sweep test" >/dev/kmsg'
kill -KILL "$(cat "$LAB_DIR/vm2/qemu.pid")"
kill -TERM "$(cat "$LAB_DIR/vm3/qemu.pid")"
lab_vm_gone 3
for n in 2 3; do
	while kill -0 "$(cat "$LAB_DIR/vm$n/qemu.pid")" 2>/dev/null; do sleep 0.1; done
done
lab_stop
S
sweep_line() {
	cat "$S_OUT"
	grep -E "$1" "$S_OUT"
}
check "sweep: a kernel WARNING is a not-ok line for that VM, naming it" \
	sweep_line '^not ok - lab: f_sweep: vm1: kernel log clean .*WARNING: CPU: 0 PID: 1 at lab_failures sweep test' ||
	true
check "sweep: the console around the report follows as comments naming the VM" \
	sweep_line '^# vm1 console: .*WARNING: CPU: 0 PID: 1 at lab_failures sweep test' || true
check "sweep: a VM that died is a not-ok line" \
	sweep_line '^not ok - lab: f_sweep: vm2: kernel log clean .*the VM died during the test' || true
check "sweep: a VM stopped on purpose (lab_vm_gone) is ok" \
	sweep_line '^ok - lab: f_sweep: vm3: kernel log clean' || true
planned() {
	local plan n
	cat "$S_OUT"
	plan="$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$S_OUT")"
	n="$(grep -cE '^(not )?ok - ' "$S_OUT")"
	echo "plan $plan, lines $n"
	[ "$plan" = 4 ] && [ "$n" = 4 ] && grep -q '^ok - lab: f_sweep: cleanup leaves' "$S_OUT"
}
check "sweep: lab_plan 0 3 is what lab_stop printed (3 VM lines and the cleanup line)" planned || true
expect_clean "sweep"

# ---- the sweep's known non-rnic reports (LAB_KNOWN_REPORTS), on a
# console written here: named and passed only when the report is exactly
# the listed lock pair with no rnic frame.
report() {
	cat <<R
[  277.4] ======================================================
[  277.4] WARNING: possible circular locking dependency detected
[  277.4] rm/192 is trying to acquire lock:
[  277.4] ffff8880 (&id_priv->handler_mutex){+.+.}-{3:3}, at: rdma_destroy_id+0x12/0x20
[  277.4] but task is already holding lock:
[  277.4] ffffffff ($1){++++}-{3:3}, at: nvmet_port_subsys_drop_link+0x47/0x2e0
[  277.4]        $2
[  277.4]        rdma_destroy_id+0x12/0x20
[  277.4]  </TASK>
[  278.0] rnic 0000:00:03.0: link up
R
}
# sweep_case CONSOLE NAME EXPECT: the sweep's filter of known reports on
# CONSOLE: with EXPECT "known", it must leave the sweep nothing and name
# NAME; with "report", leave the report and name nothing.
sweep_case() {
	local k="$WORK/known-names"
	cat "$1"
	out="$(lab__known_reports "$1" 3>"$k" | grep -a -E "$LAB_SWEEP_RE" || true)"
	echo "left for the sweep: ${out:-nothing}; named: $(cat "$k")"
	[ "$3" = known ] && [ -z "$out" ] && [ "$(cat "$k")" = "$2" ] && return 0
	[ "$3" = report ] && [ -n "$out" ] && [ ! -s "$k" ] && return 0
	return 1
}
sweep_known() {
	report "$1" "$2" >"$WORK/known-console"
	sweep_case "$WORK/known-console" nvmet-config-sem "$3"
}
check "sweep: the known nvmet lockdep report is named, not failed" \
	sweep_known nvmet_config_sem 'nvmet_rdma_remove_port+0x3d/0x50 [nvmet_rdma]' known || true
check "sweep: the same report with an rnic frame is a report" \
	sweep_known nvmet_config_sem 'rnic_destroy_qp+0x3d/0x50 [rnic]' report || true
check "sweep: the same shape with another lock is a report" \
	sweep_known rtnl_mutex 'nvmet_rdma_remove_port+0x3d/0x50 [nvmet_rdma]' report || true

# A known WARNING (LAB_KNOWN_WARNINGS): named only when its function and
# caller are the listed ones and no frame is rnic's.
warning() {
	cat <<R
[   39.1] ------------[ cut here ]------------
[   39.1] WARNING: CPU: 0 PID: 8 at drivers/infiniband/ulp/srpt/ib_srpt.c:158 srpt_cache_put+0x184/0x1b0 [ib_srpt]
[   39.1] Modules linked in: ib_srpt target_core_mod rnic_perf(O) rnic(O)
[   39.1] Call Trace:
[   39.1]  <TASK>
[   39.1]  $1
[   39.1]  srpt_release_channel_work+0x49d/0x6d0 [ib_srpt]
[   39.1]  process_one_work+0x82f/0x1730
[   39.1]  </TASK>
[   39.1] ---[ end trace 0000000000000000 ]---
[   40.0] rnic 0000:00:03.0: link up
R
}
warn_known() {
	warning "$1" >"$WORK/warn-console"
	sweep_case "$WORK/warn-console" srpt-srq-cache "$2"
}
check "sweep: the known srpt WARNING is named, not failed" \
	warn_known '? srpt_mad_recv_handler+0x11f0/0x11f0 [ib_srpt]' known || true
check "sweep: the same WARNING with an rnic frame in its trace is a report" \
	warn_known 'rnic_ib_destroy_qp+0x3d/0x90 [rnic]' report || true

echo "# test_lab_failures: $(lab_elapsed "$T0") s"
exit "$fail"
