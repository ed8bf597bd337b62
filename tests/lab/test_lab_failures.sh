#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lab under bad input: a missing dependency, a VM that does not boot,
# a boot that times out, a command that times out, a test that fails under
# set -e, and a run interrupted by Ctrl-C (SIGINT to its process group)
# or SIGTERM.  Each must end in ONE clear "lab: ..." line naming the stage
# and the log to read, a non-zero exit, and nothing left behind: no QEMU,
# rnicsim or dumpcap process, namespace, tap, /dev/shm file or socket.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lab/lab.sh
. "$HERE/../../scripts/lab/lab.sh"

SUITE="lab failures"
T0="$(lab__now_us)"
WORK="$RNIC_LAB_DIR/failures"
rm -rf "$WORK"
mkdir -p "$WORK"
fail=0
ok() { lab_ok "$SUITE: $1"; }
not_ok() {
	lab_not_ok "$SUITE: $1" "$2"
	fail=1
}

HAVE_RNICSIM=0
[ -x "$LAB_RNICSIM" ] && HAVE_RNICSIM=1

# scenario NAME: run $WORK/NAME.sh (a lab script, body on stdin) as its own
# process group; sets RC, OUT and ERR (file names).  RUN is the lab run id
# the script reports, for the leftover check.
scenario() {
	local name="$1"
	{
		echo "set -euo pipefail"
		echo ". '$HERE/../../scripts/lab/lab.sh'"
		cat
	} >"$WORK/$name.sh"
	OUT="$WORK/$name.out"
	ERR="$WORK/$name.err"
	RC=0
	bash "$WORK/$name.sh" >"$OUT" 2>"$ERR" || RC=$?
}

# The error lines (lab's info lines start with "# ").
err_lines() { grep -c '^lab: ' "$ERR" || true; }

# expect_one_line WHAT PATTERN: non-zero exit, exactly one "lab:" line,
# and it matches PATTERN.
expect_one_line() {
	local what="$1" pat="$2" line
	line="$(grep '^lab: ' "$ERR" | head -1)"
	echo "# $what: exit $RC: $line"
	if [ "$RC" != 0 ] && [ "$(err_lines)" = 1 ] && grep -qE -- "$pat" <<<"$line"; then
		ok "$what: exit $RC and one clear line"
	else
		not_ok "$what: exit $RC and one clear line matching /$pat/" "$ERR"
	fi
}

# expect_clean WHAT: nothing of the scenario's run is left.
expect_clean() {
	local what="$1" run left
	run="$(sed -n 's/^RUN=//p' "$OUT" | tail -1)"
	if [ -z "$run" ]; then
		# Failed before lab_start made anything: check the whole lab dir.
		run="${2:-}"
	fi
	if left="$(lab_leftovers "$run")"; then
		ok "$what: nothing left behind"
	else
		echo "$left" >"$WORK/leftovers.txt"
		not_ok "$what: nothing left behind (found: $(echo "$left" | head -3 | tr '\n' ';'))" "$WORK/leftovers.txt"
	fi
}

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
lab_exec 1 --timeout 2 'sleep 300 | cat; echo never' || rc=$?
echo "TIMEOUT_RC=$rc"
# The sleep must be gone, and the agent still answers.
lab_exec 1 --timeout 30 'pgrep -f "sleep 300" >/dev/null && echo LEFT || echo GONE'
lab_exec 1 --timeout 30 'echo out; echo err >&2; exit 7' || echo "EXIT_RC=$?"
exit 3
S
echo "# command timeout: $(grep '^lab: ' "$ERR" | head -1)"
if grep -q '^TIMEOUT_RC=124$' "$OUT" && [ "$(err_lines)" = 1 ] &&
	grep -qE '^lab: vm1: command timed out after 2 s: sleep 300 .*see .*commands.log' "$ERR"; then
	ok "command timeout: status 124 and one clear line"
else
	not_ok "command timeout: status 124 and one clear line" "$ERR"
fi
if grep -q '^GONE$' "$OUT"; then
	ok "command timeout: the command's processes are killed in the guest"
else
	not_ok "command timeout: the command's processes are killed in the guest" "$OUT"
fi
if grep -q '^out$' "$OUT" && grep -q '^err$' "$ERR" && grep -q '^EXIT_RC=7$' "$OUT"; then
	ok "lab_exec returns stdout, stderr and the exit status"
else
	not_ok "lab_exec returns stdout, stderr and the exit status" "$OUT"
fi
expect_clean "command timeout"

# ---- a failing command under set -e in a test (the ERR/EXIT path).
scenario set-e <<'S'
lab_start f_sete
echo "RUN=$LAB_RUN"
lab_vm 1 --virtio
lab_capture_start "$LAB_DIR/x.pcap"
false
S
if [ "$RC" != 0 ]; then ok "set -e failure: non-zero exit"; else not_ok "set -e failure: non-zero exit" "$ERR"; fi
expect_clean "set -e failure"

# ---- SIGTERM (what CI's timeout sends) while a VM boots, and Ctrl-C with
# it up: a VM with both NICs (its rnicsim too, if built) and a capture.
rnic_opt=""
[ "$HAVE_RNICSIM" = 1 ] && rnic_opt="--rnic"
cat >"$WORK/interrupt.sh" <<S
set -euo pipefail
. '$HERE/../../scripts/lab/lab.sh'
lab_start "\$1"
echo "RUN=\$LAB_RUN"
lab_vm 1 --virtio $rnic_opt
lab_capture_start "\$LAB_DIR/bridge.pcap"
[ "\$2" = ready ] && lab_wait_ready 1
echo READY
while :; do sleep 1; done
S
# interrupt SIGNAL WHEN: start interrupt.sh as its own process group,
# signal the whole group (a terminal's Ctrl-C does the same) once it is
# READY, and wait for it to finish.  Job control (set -m) rather than
# "setsid cmd &": a non-interactive shell starts background jobs with
# SIGINT ignored, and a shell cannot trap a signal ignored on entry.
interrupt() {
	local sig="$1" when="$2" pid i
	OUT="$WORK/interrupt-$sig.out"
	ERR="$WORK/interrupt-$sig.err"
	set -m
	bash "$WORK/interrupt.sh" "f_int_$sig" "$when" >"$OUT" 2>"$ERR" &
	pid=$!
	set +m
	for i in $(seq 600); do
		grep -q '^READY$' "$OUT" 2>/dev/null && break
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
		echo "# interrupt.sh ignored SIG$sig for 60 s, sending SIGTERM" >>"$ERR"
		kill -TERM "$pid"
	fi
	RC=0
	wait "$pid" || RC=$?
}
interrupt TERM booting
echo "# SIGTERM during boot: exit $RC: $(grep '^lab: ' "$ERR" | head -1)"
if [ "$RC" = 143 ] && grep -q '^READY$' "$OUT"; then
	ok "SIGTERM during boot: exit 143"
else
	not_ok "SIGTERM during boot: exit 143 (got $RC)" "$ERR"
fi
expect_clean "SIGTERM during boot"

interrupt INT ready
echo "# Ctrl-C with a VM up: exit $RC: $(grep '^lab: ' "$ERR" | head -1)"
if [ "$RC" = 130 ] && grep -q '^READY$' "$OUT"; then
	ok "Ctrl-C (SIGINT) with a VM up${rnic_opt:+ (rnicsim too)}: exit 130"
else
	not_ok "Ctrl-C (SIGINT) with a VM up: exit 130 (got $RC)" "$ERR"
fi
expect_clean "Ctrl-C with a VM up"

echo "# test_lab_failures: $(lab_elapsed "$T0") s"
exit "$fail"
