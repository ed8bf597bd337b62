#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything rnic needs from Debian's apt, idempotently.
# Safe to run on every invocation: it only calls apt when something is
# missing, and it pins the lab kernel to the newest 6.12 Debian kernel.
set -euo pipefail

log() { echo "install-deps: $*" >&2; }

PKGS=(
	build-essential bc bison flex cpio xz-utils zstd kmod rsync
	libelf-dev libssl-dev dwarves python3 perl
	sparse dkms
	qemu-system-x86 busybox-static
	iproute2 ethtool pciutils iputils-ping procps psmisc
	rdma-core rdmacm-utils ibverbs-utils ibverbs-providers infiniband-diags
	tshark tcpdump nvme-cli fio gnuplot-nox
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

missing=()
for p in "${PKGS[@]}" "linux-image-$KVER" "linux-headers-$KVER"; do
	stamp_ok "$p" || missing+=("$p")
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

# Record the lab kernel for the other scripts.
mkdir -p /var/cache/rnic
echo "$KVER" > /var/cache/rnic/kver
log "ok (lab kernel $KVER)"
