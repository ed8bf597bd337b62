#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics (RDMA) helpers for lab tests; source after
# scripts/lab/lab.sh.  Not a test itself.
#
#   nvmet_up N ADDR MB [MODOPT...]  nvmet-rdma target in VM N on ADDR:4420,
#                           namespace 1 a MB-MiB file on the guest's tmpfs;
#                           MODOPT: nvmet-rdma's options (use_srq=1)
#   nvme_host_up N ADDR [OPT...]  nvme connect -t rdma from VM N; prints the
#                           block device
#   nvme_verify N DEV MB [TIMEOUT [BS]]  fio: write MB MiB with crc32c verify headers,
#                           read everything back and verify
#   nvme_host_down N        nvme disconnect
#   nvmet_down N            remove the target's configfs objects

NVME_NQN=nqn.2026-11.org.rnic:lab
NVME_PORT=4420

nvmet_up() {
	local n="$1" addr="$2" mb="$3" fam=ipv4
	shift 3
	case "$addr" in *:*) fam=ipv6 ;; esac
	lab_exec "$n" --timeout 90 "set -e
		modprobe nvmet-rdma $*
		truncate -s ${mb}M /dev/shm/nvmet.img
		c=/sys/kernel/config/nvmet
		s=\$c/subsystems/$NVME_NQN
		mkdir \$s
		echo 1 > \$s/attr_allow_any_host
		mkdir \$s/namespaces/1
		echo -n /dev/shm/nvmet.img > \$s/namespaces/1/device_path
		echo 1 > \$s/namespaces/1/buffered_io
		echo 1 > \$s/namespaces/1/enable
		mkdir \$c/ports/1
		echo rdma > \$c/ports/1/addr_trtype
		echo $fam > \$c/ports/1/addr_adrfam
		echo $addr > \$c/ports/1/addr_traddr
		echo $NVME_PORT > \$c/ports/1/addr_trsvcid
		ln -s \$s \$c/ports/1/subsystems/$NVME_NQN
		dmesg | grep -i 'nvmet_rdma: enabling port'"
}

# Every step is tried, and every one must succeed.
nvmet_down() {
	lab_exec "$1" --timeout 60 "c=/sys/kernel/config/nvmet rc=0
		rm \$c/ports/1/subsystems/$NVME_NQN || rc=1
		rmdir \$c/ports/1 \$c/subsystems/$NVME_NQN/namespaces/1 \$c/subsystems/$NVME_NQN || rc=1
		rm /dev/shm/nvmet.img || rc=1
		exit \$rc"
}

# The wait for the block device looks with globs and builtins only: an
# ls | grep per look cost the debug guest ~0.6 s of the vCPU the connect
# needs.
nvme_host_up() {
	local n="$1" addr="$2"
	shift 2
	lab_exec "$n" --timeout 120 "set -e
		modprobe nvme-rdma
		nvme connect -t rdma -a $addr -s $NVME_PORT -n $NVME_NQN $* >&2
		d=
		for i in \$(seq 200); do
			for p in /sys/block/nvme*n1; do
				p=\${p##*/}
				[[ \$p =~ ^nvme[0-9]+n1\$ ]] && [ -b /dev/\$p ] && d=\$p && break 2
			done
			sleep 0.1
		done
		[ -n \"\$d\" ] && echo /dev/\$d"
}

# nvme disconnect succeeds when there is nothing to disconnect: the one
# controller must go, and its block device with it.
nvme_host_down() {
	lab_exec "$1" --timeout 60 "nvme disconnect -n $NVME_NQN | tee /tmp/disc.out
		grep -q 'disconnected 1 controller' /tmp/disc.out &&
			! ls /sys/block | grep '^nvme[0-9]*n1\$' >/dev/null"
}

# nvme_verify N DEV MB [TIMEOUT [BS]]: prints fio's write and read
# bandwidth. fio (blocks of BS, default 128k) must succeed, with no error
# or verify failure, and both its write and its verify pass must have
# moved all MB MiB (which fio prints in KiB below 8 MiB or so).
nvme_verify() {
	lab_exec "$1" --timeout "${4:-600}" "fio --name=nvmeof --filename=$2 --rw=write \
		--bs=${5:-128k} --size=${3}M --direct=1 --ioengine=libaio --iodepth=8 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_dump=1 \
		--group_reporting >/tmp/fio.out 2>&1; rc=\$?
		grep -E '^ *(WRITE|READ):|err=|verify' /tmp/fio.out
		[ \$rc = 0 ] && grep -q 'err= 0' /tmp/fio.out &&
			grep -Eq '^ *WRITE: .* io=(${3}(\.0)?MiB|$(($3 * 1024))KiB) ' /tmp/fio.out &&
			grep -Eq '^ *READ: .* io=(${3}(\.0)?MiB|$(($3 * 1024))KiB) ' /tmp/fio.out &&
			! grep -qi 'verify.*fail\|bad magic\|crc32c: verify failed' /tmp/fio.out"
}
