#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything rnic needs from Debian's apt, idempotently.
# Safe to run on every invocation: it only calls apt when something is
# missing, and it pins the lab kernel to the newest 6.12 Debian kernel
# and installs Debian 12's default 6.1 kernel (image and headers) beside it.
set -euo pipefail

log() { echo "install-deps: $*" >&2; }

PKGS=(
	build-essential bc bison flex cpio xz-utils zstd kmod rsync
	libelf-dev libssl-dev dwarves python3 perl
	sparse dkms
	qemu-system-x86 busybox-static bash-builtins
	iproute2 ethtool pciutils iputils-ping procps psmisc
	rdma-core rdmacm-utils ibverbs-utils ibverbs-providers infiniband-diags
	perftest strace
	tshark tcpdump nvme-cli fio gnuplot-nox
	# iscsid and iscsiadm for the lab guests' iSER initiator (the guests
	# run the host's /). On a host with systemd it adds iscsid.socket and
	# open-iscsi.service, which log in to nothing until nodes are set up.
	open-iscsi
	linux-source-6.12
)

if [ "$(id -u)" != 0 ]; then
	log "must run as root (apt-get install)"
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, no prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections 2>/dev/null || true

stamp_ok() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || return 1
	done
}

updated=0
apt_update_once() {
	if [ "$updated" = 0 ]; then
		log "apt-get update"
		apt-get update -q >/dev/null
		updated=1
	fi
}

# The lab kernel: the newest linux-image-6.12.*+deb12-amd64 apt offers.
newest_kver() {
	apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
		awk '{print $1}' | sed 's/^linux-headers-//' | sort -V | tail -1
}

KVER="$(newest_kver || true)"
if [ -z "$KVER" ]; then
	apt_update_once
	KVER="$(newest_kver)"
fi
if [ -z "$KVER" ]; then
	log "no linux-headers-6.12.*+deb12-amd64 package found in apt"
	exit 1
fi

# Debian 12's default kernel: the 6.1 release its linux-image-amd64
# metapackage depends on (what "apt install linux-image-amd64" boots).
# The metapackage itself is not installed: it would make later upgrades
# pull in new 6.1 releases behind our back.
default_kver61() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' | head -1
}

KVER61="$(default_kver61 || true)"
if [ -z "$KVER61" ]; then
	apt_update_once
	KVER61="$(default_kver61)"
fi
if [ -z "$KVER61" ]; then
	log "linux-image-amd64 does not depend on a linux-image-6.1.*-amd64 in apt"
	exit 1
fi

missing=()
for p in "${PKGS[@]}" "linux-image-$KVER" "linux-headers-$KVER"; do
	stamp_ok "$p" || missing+=("$p")
done
missing61=()
for p in "linux-image-$KVER61" "linux-headers-$KVER61"; do
	stamp_ok "$p" || missing61+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
	apt_update_once
	log "installing ${missing[*]}"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/rnic-apt.log 2>&1 || {
		log "apt-get install failed; see /tmp/rnic-apt.log"
		tail -20 /tmp/rnic-apt.log >&2
		exit 1
	}
fi

# The 6.1 kernel is installed for the lab to boot, not for this machine:
# its postinst hooks would have DKMS build every AUTOINSTALL module (rnic
# from whatever tree /usr/src holds) for it, outside the lock
# scripts/dkms-install.sh takes.  dkms's autoinstaller skips its run while
# /etc/dkms/no-autoinstall exists; scripts/dkms-install.sh builds rnic for
# this kernel when asked to.  A no-autoinstall the admin made stays.
if [ "${#missing61[@]}" -gt 0 ]; then
	apt_update_once
	noauto=/etc/dkms/no-autoinstall
	ours=0
	if [ ! -e "$noauto" ]; then
		mkdir -p /etc/dkms
		: >"$noauto"
		ours=1
		trap 'rm -f "$noauto"' EXIT
		trap 'exit 1' INT TERM HUP
	fi
	log "installing ${missing61[*]} (DKMS autoinstall off)"
	rc=0
	apt-get install -y -q --no-install-recommends "${missing61[@]}" >/tmp/rnic-apt.log 2>&1 || rc=$?
	if [ "$ours" = 1 ]; then
		rm -f "$noauto"
		trap - EXIT INT TERM HUP
	fi
	if [ "$rc" != 0 ]; then
		log "apt-get install failed; see /tmp/rnic-apt.log"
		tail -20 /tmp/rnic-apt.log >&2
		exit 1
	fi
fi

# Record the lab kernels for the other scripts.
mkdir -p /var/cache/rnic
echo "$KVER" > /var/cache/rnic/kver
echo "$KVER61" > /var/cache/rnic/kver61
log "ok (lab kernel $KVER, Debian 12's default kernel $KVER61)"
