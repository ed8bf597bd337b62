#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# The storage ULPs besides NVMe-oF (which has tests of its own), in turn
# on one pair of rnic VMs over RoCE v2: SRP, NFS over RDMA, iSER. Two
# vCPUs each, so that each ULP's posts, completion handlers (softirq,
# workqueues, srp's direct polling) and teardown run on two CPUs at once.
#
# SRP (the SCSI RDMA Protocol): vm2 runs
# the LIO target ib_srpt (a 32 MiB ramdisk LUN, an ACL for vm1's
# initiator port, listening through rdma_cm), vm1 the initiator ib_srp, logging in through
# rdma_cm (add_target ... dest=ADDR:PORT, no InfiniBand subnet manager on
# RoCE). fio writes 16 MiB to the SCSI disk and reads it back verified
# (crc32c), twice: srpt receiving into each channel's own receive queue,
# then into its shared receive queue (the tpg's use_srq). Then the
# initiator logs out (remove_target), the target is torn down and the
# modules unloaded.
# SRP's habits the other ULPs of the suite lack: ib_srp polls its send CQ
# directly (IB_POLL_DIRECT, ib_process_cq_direct(), never armed) and
# registers every data buffer with FRWR, invalidated by the target's
# SEND_WITH_INV or its own LOCAL_INV; srpt moves the data with rdma_rw
# (RDMA READ for writes, RDMA WRITE for reads) and, with use_srq, receives
# every channel's requests on one SRQ (Documentation/ulp-verbs.rst).
#
# NFS over RDMA (RPC-over-RDMA, the rpcrdma module): vm2's knfsd exports a
# tmpfs as the NFSv4 root and listens on RDMA port 20049 only; vm1 mounts
# it with proto=rdma, NFSv4.2 (its session's backchannel on the same RDMA
# connection). The guests have no nfs-utils: the server is set up as
# rpc.nfsd and mountd would do it, by writing nfsd's files and the export
# caches' channels (/proc/net/rpc/*/channel) with entries that do not
# expire, and the client mounts with mount(2)'s text options (addr=). fio
# writes 16 MiB with O_DIRECT and reads it back verified (crc32c): every
# 128 KiB goes as an RDMA READ of vm1's memory by the server (a read
# chunk) or an RDMA WRITE into it (a write chunk); a tree of files of 1 B
# to 1 MiB is copied in through the page cache and compared on both sides
# (SHA-256), with vm1's page cache dropped first. xprtrdma's habits: an
# FRWR region for every chunk, its REG_MR posted unsignaled in one chain
# with the SEND, invalidated by the server's SEND_WITH_INV or by the
# client's own chain of LOCAL_INVs; its QP drained receive queue first at
# unmount. Then the client unmounts, nfsd stops, and rnic is unloaded
# with rpcrdma still loaded on both sides (ib_core removes rpcrdma's
# clients from the device first).
#
# iSER (iSCSI Extensions for RDMA): vm2's LIO iSCSI target (a 32 MiB
# ramdisk LUN for vm1's initiator name, no CHAP) with an iSER portal
# (ib_isert, rdma_cm); vm1 runs open-iscsi's iscsid and logs in with
# iscsiadm's built-in "iser" interface (ib_iser). fio writes 16 MiB and
# reads it back verified; vm1's NIC must serve isert's RDMA READs and
# ib_iser's FRWR regions be invalidated (isert's SEND_WITH_INV); then
# logout, iscsid stopped, the target torn down and the modules unloaded.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

SUITE="rnic storage"
T0="$(lab__now_us)"
lab_start rnic_storage || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_storage"
	exit 1
}
# boots 2, devices 2; SRP: target 1, per receive mode 5 (x2), FRWR 1,
# teardown 2; NFS: server 1, mount 1, data 2, chunks 1, teardown 1;
# iSER: target 1, login 1, data 1, RDMA 1, teardown 2; unload 1
lab_plan 31 2
perf_checks_init
perf_preflight

# The target checks that a login names it: its ID extension and I/O
# controller GUID must both be srpt_service_guid.
GUID=0x0002c903a0b0c0d0
PORT=5555
MB=16
SRV="$(lab_addr 2 rnic 4)"

lab_vm 1 --rnic --smp 2
lab_vm 2 --rnic --smp 2 --mem 1G
boot_vms 1 2
up() { rnic_up "$1" && roce_mode "$1" rnic0 "RoCE v2"; }
check_vms "1 2" "rnic0 ACTIVE, RoCE v2 default" up || exit 1

# The target's port directory is its GID 0 as srpt names it (0x and 32
# hex digits). A login to that port is named by its initiator port ID:
# ib_srp's initiator_ext (0) and the interface ID of its GID 0 (SRP rev.
# 16a order); the LUN is mapped to that name alone.
IPI=""
target_up() {
	local g
	g="$(lab_exec 1 --timeout 30 cat /sys/class/infiniband/rnic0/ports/1/gids/0)" || return 1
	IPI="0x0000000000000000$(echo "$g" | cut -d: -f5-8 | tr -d :)"
	echo "vm1's initiator port ID: $IPI"
	[[ $IPI =~ ^0x[0-9a-f]{32}$ ]] || return 1
	lab_exec 2 --timeout 120 "set -e
		modprobe ib_srpt srpt_service_guid=$GUID
		c=/sys/kernel/config/target
		mkdir -p \$c/core/rd_mcp_0/lun0
		echo rd_pages=$((32 * 256)) > \$c/core/rd_mcp_0/lun0/control
		echo 1 > \$c/core/rd_mcp_0/lun0/enable
		g=0x\$(tr -d : < /sys/class/infiniband/rnic0/ports/1/gids/0)
		t=\$c/srpt/\$g/tpg_1
		mkdir -p \$t/lun/lun_0 \$t/acls/$IPI/lun_0
		ln -s \$c/core/rd_mcp_0/lun0 \$t/lun/lun_0/lun0
		ln -s \$t/lun/lun_0 \$t/acls/$IPI/lun_0/lun0
		echo 1 > \$t/enable
		echo $PORT > \$c/srpt/discovery_auth/rdma_cm_port
		echo \$t > /tmp/srpt-tpg
		cat \$c/srpt/discovery_auth/rdma_cm_port"
}

# use_srq N: srpt's receive mode for the next login (the tpg's attribute
# may change only while no channel is open).
use_srq() {
	lab_exec 2 --timeout 30 "t=\$(cat /tmp/srpt-tpg)
		echo $1 > \$t/attrib/use_srq && grep -qx $1 \$t/attrib/use_srq"
}

# scsi_disk DRIVER: guest commands that wait up to 30 s for the SCSI disk
# of a host that DRIVER (its scsi_host proc_name) registered, and print
# its device.
scsi_disk() {
	echo "d=
		for i in \$(seq 300); do
			for b in /sys/block/sd*; do
				[ -e \$b/device ] || continue
				sh=\$(readlink -f \$b/device | grep -o '/host[0-9]*/' | tr -d / || true)
				grep -qx $1 /sys/class/scsi_host/\$sh/proc_name 2>/dev/null &&
					[ -b /dev/\${b##*/} ] && d=\${b##*/} && break 2
			done
			sleep 0.1
		done
		[ -n \"\$d\" ] && echo /dev/\$d"
}

# login: ib_srp's add_target through rdma_cm; prints the SCSI disk.
login() {
	lab_exec 1 --timeout 120 "set -e
		modprobe ib_srp
		h=/sys/class/infiniband_srp/srp-rnic0-1
		for i in \$(seq 50); do [ -e \$h/add_target ] && break; sleep 0.1; done
		echo id_ext=${GUID#0x},ioc_guid=${GUID#0x},dest=$SRV:$PORT,max_sect=256 > \$h/add_target
		$(scsi_disk ib_srp)"
}

# logout: remove_target of every SRP remote port; the disk goes with it.
logout() {
	lab_exec 1 --timeout 60 "set -e
		for r in /sys/class/srp_remote_ports/port-*; do
			[ -e \$r/delete ] && echo 1 > \$r/delete
		done
		for i in \$(seq 100); do
			ls /sys/class/srp_remote_ports/ | grep -q . || break
			sleep 0.1
		done
		! ls /sys/class/srp_remote_ports/ | grep -q ."
}

# stats_before ULP: vm1's counters before that ULP's checks.
stats_before() { hw_stats 1 rnic0/1 >"$LAB_DIR/stats-$1-before" 2>&1 || true; }

# rdma_used ULP: since stats_before ULP, vm1's NIC served the target's
# RDMA READs (the data fio wrote: SRP's and iSER's writes, NFS's read
# chunks) and its driver saw the initiator's FRWR regions invalidated,
# by the target's SEND_WITH_INV or the initiator's own LOCAL_INV.
rdma_used() {
	local r l i w b="$LAB_DIR/stats-$1-before" a="$LAB_DIR/stats-$1-after"
	hw_stats 1 rnic0/1 >"$a" || return 1
	r="$(stat_delta "$b" "$a" read_requests_rcvd)" || return 1
	w="$(stat_delta "$b" "$a" rc_req_packets)" || return 1
	l="$(stat_delta "$b" "$a" local_invs)" || return 1
	i="$(stat_delta "$b" "$a" remote_invs)" || return 1
	echo "vm1: read_requests_rcvd +$r, rc_req_packets +$w, local_invs +$l, remote_invs +$i"
	[ "$r" -gt 0 ] && [ $((l + i)) -gt 0 ]
}

# mode N WHAT: one login in receive mode use_srq=N (5 checks): with an
# SRQ the channel's drain waits for LAST_WQE_REACHED.
mode() {
	local dev=""
	check "use_srq=$1: vm2: srpt's tpg receives $2" use_srq "$1" || true
	get_dev() { dev="$(login)" && echo "$dev"; }
	check "use_srq=$1: vm1: ib_srp logs in through rdma_cm ($SRV:$PORT), a SCSI disk appears" get_dev || true
	check "use_srq=$1: fio writes $MB MiB to the SRP disk and reads it back verified (crc32c)" \
		nvme_verify 1 "${dev:-/dev/no-srp-disk}" "$MB" 300 || true
	check "use_srq=$1: vm1: the initiator logs out (srp_remote_ports delete), the disk goes" logout || true
	check "use_srq=$1: vm2: srpt's channel QP drained and destroyed within 30 s of the logout" \
		rc_qps_gone 2 || true
}

check "vm2: ib_srpt target: 32 MiB ramdisk LUN mapped to vm1's initiator port, rdma_cm port $PORT" target_up || true
stats_before srp
mode 0 "into each channel's receive queue"
mode 1 "into one SRQ"
check "vm1's NIC served srpt's RDMA READs, and ib_srp's FRWR regions were invalidated (rdma statistic)" \
	rdma_used srp || true

target_down() {
	lab_exec 2 --timeout 60 "set -e
		c=/sys/kernel/config/target t=\$(cat /tmp/srpt-tpg)
		echo 0 > \$c/srpt/discovery_auth/rdma_cm_port
		echo 0 > \$t/enable
		rm \$t/acls/$IPI/lun_0/lun0 \$t/lun/lun_0/lun0
		rmdir \$t/acls/$IPI/lun_0 \$t/acls/$IPI \$t/lun/lun_0 \$t \${t%/tpg_1}
		rmdir \$c/core/rd_mcp_0/lun0 \$c/core/rd_mcp_0 \$c/srpt"
}
check "vm2: target torn down (configfs objects removed, srpt's fabric too)" target_down || true
unload_ulps() {
	lab_exec 1 --timeout 60 "rmmod ib_srp && ! grep -qw '^ib_srp' /proc/modules" &&
		lab_exec 2 --timeout 60 "rmmod ib_srpt && ! grep -qw '^ib_srpt' /proc/modules"
}
check "rmmod ib_srp (vm1) and ib_srpt (vm2)" unload_ulps || true

# ---- NFS over RDMA
NFS_PORT=20049
NFS_MNT=/mnt/nfs
CLI="$(lab_addr 1 rnic 4)"
# Entries of the export caches never expire (mountd would answer the
# kernel's upcalls instead; the guests have no mountd).
FOREVER=2147483647
# NFSEXP_FSID | NFSEXP_NOSUBTREECHECK | NFSEXP_INSECURE_PORT: fsid 0 makes
# the export the NFSv4 pseudo-root (tmpfs has no UUID to name it by), and
# an RDMA connection's source port is not a privileged one; no root
# squash, so that the client's root may write.
NFS_FLAGS=$((0x2000 | 0x400 | 0x2))

nfs_server_up() {
	lab_exec 2 --timeout 120 "set -e
		modprobe nfsd
		modprobe rpcrdma
		mkdir -p /srv/nfs
		mount -t tmpfs -o size=64m nfsexport /srv/nfs
		mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
		echo '-3 +4 +4.1 +4.2' > /proc/fs/nfsd/versions
		echo 'nfsd $CLI $FOREVER lab' > /proc/net/rpc/auth.unix.ip/channel
		echo 'lab /srv/nfs $FOREVER $NFS_FLAGS 65534 65534 0' > /proc/net/rpc/nfsd.export/channel
		echo 'lab 1 \\x00000000 $FOREVER /srv/nfs' > /proc/net/rpc/nfsd.fh/channel
		# An NFSv4 server starts in a grace period in which it refuses
		# OPENs (NFS4ERR_GRACE, and the client backs off up to 15 s
		# per retry). Only client tracking (nfsdcld, absent here) may
		# end it early, so it gets its shortest length, set before
		# the first listener exists.
		echo 10 > /proc/fs/nfsd/nfsv4gracetime
		echo 'rdma $NFS_PORT' > /proc/fs/nfsd/portlist
		echo 4 > /proc/fs/nfsd/threads
		cat /proc/fs/nfsd/portlist /proc/fs/nfsd/versions /proc/fs/nfsd/threads
		grep -q '^rdma $NFS_PORT\$' /proc/fs/nfsd/portlist"
}

nfs_mount() {
	lab_exec 1 --timeout 120 "set -e
		modprobe nfsv4
		modprobe rpcrdma
		mkdir -p $NFS_MNT
		mount -i -t nfs4 -o vers=4.2,proto=rdma,port=$NFS_PORT,addr=$SRV,clientaddr=$CLI $SRV:/ $NFS_MNT
		grep ' $NFS_MNT ' /proc/mounts
		grep -q ' $NFS_MNT nfs4 .*proto=rdma' /proc/mounts" &&
		nfs_grace_over
}

# nfs_grace_over: the server's grace period ended (a deliberate wait of
# what is left of its 10 s).
nfs_grace_over() {
	lab_exec 2 --timeout 60 "for i in \$(seq 300); do
			[ \"\$(cat /proc/fs/nfsd/v4_end_grace)\" = Y ] && exit 0
			sleep 0.1
		done
		exit 1"
}

# nfs_tree: files of 1 B to 1 MiB written through vm1's page cache, its
# cache dropped, read back and compared; the server's copy must match.
nfs_tree() {
	local c s
	c="$(lab_exec 1 --timeout 300 "set -e
		mkdir -p /tmp/tree
		for n in 1 100 4095 4096 4097 65536 100000 1048576; do
			head -c \$n /dev/urandom > /tmp/tree/f\$n
		done
		cp -r /tmp/tree $NFS_MNT/
		sync
		echo 3 > /proc/sys/vm/drop_caches
		cd /tmp/tree && sha256sum f* > /tmp/tree.sum
		cd $NFS_MNT/tree && sha256sum -c --quiet /tmp/tree.sum >&2
		cat /tmp/tree.sum")" || return 1
	s="$(lab_exec 2 --timeout 120 "cd /srv/nfs/tree && sha256sum f*")" || return 1
	echo "$c"
	[ "$(echo "$c" | wc -l)" = 8 ] && [ "$c" = "$s" ]
}

# The export cache holds the exported directory until it is flushed
# (exportfs -f's way), or the tmpfs could not be unmounted.
nfs_down() {
	lab_exec 1 --timeout 60 "umount $NFS_MNT && ! grep -q ' $NFS_MNT ' /proc/mounts" &&
		lab_exec 2 --timeout 60 "set -e
			echo 0 > /proc/fs/nfsd/threads
			[ \"\$(cat /proc/fs/nfsd/threads)\" = 0 ]
			for c in nfsd.fh nfsd.export auth.unix.ip; do
				date +%s > /proc/net/rpc/\$c/flush
			done
			umount /srv/nfs"
}

check "vm2: knfsd exports a tmpfs as the NFSv4 root over RDMA only (port $NFS_PORT), no mountd" \
	nfs_server_up || true
stats_before nfs
check "vm1: mount -t nfs4 -o vers=4.2,proto=rdma,port=$NFS_PORT $SRV:/; the server's grace period over" nfs_mount || true
check "NFS: fio writes $MB MiB with O_DIRECT and reads it back verified (crc32c)" \
	nvme_verify 1 "$NFS_MNT/fio.dat" "$MB" 300 || true
check "NFS: files of 1 B to 1 MiB copied in, read back after a cache drop, the same on the server (SHA-256)" \
	nfs_tree || true
check "NFS: vm1's NIC served the server's RDMA READs and xprtrdma's FRWR regions were invalidated (rdma statistic)" \
	rdma_used nfs || true
check "NFS: vm1 unmounts, vm2's nfsd stops" nfs_down || true

# ---- iSER
ISER_PORT=3260
TGT_IQN=iqn.2026-11.org.rnic.lab:vm2-ramdisk
INI_IQN=iqn.2026-11.org.rnic.lab:vm1

# LIO's iSCSI target: a network portal is created as TCP, its "iser"
# attribute adds the iSER listener (rdma_cm) on the same address and
# port; the LUN is mapped to vm1's initiator name alone, no CHAP.
iser_target_up() {
	lab_exec 2 --timeout 120 "set -e
		modprobe iscsi_target_mod
		modprobe ib_isert
		c=/sys/kernel/config/target
		mkdir -p \$c/core/rd_mcp_1/lun0
		echo rd_pages=$((32 * 256)) > \$c/core/rd_mcp_1/lun0/control
		echo 1 > \$c/core/rd_mcp_1/lun0/enable
		t=\$c/iscsi/$TGT_IQN/tpgt_1
		mkdir -p \$t/lun/lun_0 \$t/acls/$INI_IQN/lun_0
		ln -s \$c/core/rd_mcp_1/lun0 \$t/lun/lun_0/lun0
		ln -s \$t/lun/lun_0 \$t/acls/$INI_IQN/lun_0/lun0
		mkdir \$t/np/$SRV:$ISER_PORT
		echo 1 > \$t/np/$SRV:$ISER_PORT/iser
		echo 0 > \$t/attrib/authentication
		echo 1 > \$t/enable
		cat \$t/np/$SRV:$ISER_PORT/iser"
}

# iser_login: open-iscsi's iscsid and iscsiadm with the built-in "iser"
# interface (ib_iser); prints the SCSI disk.
iser_login() {
	lab_exec 1 --timeout 120 "set -e
		modprobe ib_iser
		mkdir -p /run/lock/iscsi
		echo InitiatorName=$INI_IQN > /etc/iscsi/initiatorname.iscsi
		iscsid
		iscsiadm -m node -o new -T $TGT_IQN -p $SRV:$ISER_PORT -I iser >/dev/null
		iscsiadm -m node -T $TGT_IQN -p $SRV:$ISER_PORT -I iser --login >&2
		$(scsi_disk iscsi_iser)"
}

iser_logout() {
	lab_exec 1 --timeout 60 "set -e
		iscsiadm -m node -T $TGT_IQN -p $SRV:$ISER_PORT --logout >&2
		iscsiadm -m node -o delete -T $TGT_IQN >&2
		! ls /sys/class/iscsi_session | grep -q .
		iscsiadm -k 0
		rmmod ib_iser"
}

iser_target_down() {
	lab_exec 2 --timeout 60 "set -e
		c=/sys/kernel/config/target t=\$c/iscsi/$TGT_IQN/tpgt_1
		echo 0 > \$t/enable
		rm \$t/acls/$INI_IQN/lun_0/lun0 \$t/lun/lun_0/lun0
		rmdir \$t/acls/$INI_IQN/lun_0 \$t/acls/$INI_IQN \$t/lun/lun_0 \$t/np/$SRV:$ISER_PORT
		rmdir \$t \${t%/tpgt_1} \$c/core/rd_mcp_1/lun0 \$c/core/rd_mcp_1 \$c/iscsi
		rmmod ib_isert iscsi_target_mod"
}

iser_dev=""
get_iser_dev() { iser_dev="$(iser_login)" && echo "$iser_dev"; }
check "vm2: LIO iSCSI target with an iSER portal on $SRV:$ISER_PORT, a 32 MiB ramdisk LUN for $INI_IQN" \
	iser_target_up || true
stats_before iser
check "vm1: iscsiadm logs in over iSER (iface iser), a SCSI disk appears" get_iser_dev || true
check "iSER: fio writes $MB MiB to the disk and reads it back verified (crc32c)" \
	nvme_verify 1 "${iser_dev:-/dev/no-iser-disk}" "$MB" 300 || true
check "iSER: vm1's NIC served isert's RDMA READs and ib_iser's FRWR regions were invalidated (rdma statistic)" \
	rdma_used iser || true
check "iSER: vm1 logs out, iscsid stops, ib_iser unloads" iser_logout || true
check "iSER: vm2's target torn down, ib_isert and iscsi_target_mod unloaded" iser_target_down || true
check "rmmod rnic_perf rnic on both VMs, rpcrdma still loaded" rnic_unload 1 2 || true

lab_stop
echo "# test_rnic_storage: $(lab_elapsed "$T0") s"
exit "$fail"
