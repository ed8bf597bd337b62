#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the userspace provider librnic-rdmav34.so (providers/rnic) for
# Debian 12's unmodified libibverbs (rdma-core 44.0, provider ABI 34).
#
# Debian 12 ships no provider headers (driver.h, kern-abi.h, ...), so the
# provider is compiled against a mix, kept in the cache:
#   - the public headers of Debian 12's own libibverbs-dev 44.0-2 (verbs.h,
#     whose struct layouts the provider shares with the installed library:
#     56.1's verbs.h has a longer ibv_port_attr and ibv_qp_ex);
#   - the internal headers of rdma-core 56.1 (same provider ABI 34), from
#     the orig tarball Debian's archive serves: driver.h, kern-abi.h,
#     cmd_*.h, ccan/, util/, the kernel uAPI headers, and the generated
#     kernel-abi/ib_user_verbs.h;
#   - a hand-written config.h.
# The provider links against /usr/lib/x86_64-linux-gnu/libibverbs.so.1
# itself with --no-undefined, and every symbol it imports is checked to
# exist there, so nothing only 56.1 has can slip in.
#
# Usage: scripts/rdma-core.sh [build|check|test|install|path|path-hostile|fetch]
#   build    fetch what is missing, build (if the sources changed), check
#            imports, run the unit test; print the build directory; also
#            builds rnic_hostile, the hostile-userspace test program
#   check    import check of the built provider only
#   test     the provider's unit tests only (WQE/CQE encoding; the data
#            path against a doorbell page in memory)
#   install  build, then copy the provider into libibverbs' provider
#            directory and write /etc/libibverbs.d/rnic.driver (DESTDIR
#            is honoured)
#   path     print the path of librnic-rdmav34.so (after build)
#   path-hostile  print the path of rnic_hostile (after build), the lab's
#            hostile userspace test (providers/rnic/rnic_hostile*.c)
#   match-test  Debian's ibv_devices against fake sysfs devices, the built
#            provider named by RDMAV_DRIVERS (root: a mount namespace)
#   fetch    only download and extract the build inputs
# Everything is cached under $RNIC_CACHE (default /var/cache/rnic); the
# network is needed once (deb.debian.org), never again.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RNIC_CACHE:-/var/cache/rnic}
RC=$CACHE/rdma-core
MIRROR=${RNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}

RC_VER=56.1
RC_TGZ=rdma-core_${RC_VER}.orig.tar.gz
# Debian's Sources index (trixie, rdma-core 56.1-1) lists this checksum
RC_SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
RC_SRC=$RC/rdma-core-$RC_VER

DEV_VER=44.0-2
DEV_DEB=libibverbs-dev_${DEV_VER}_amd64.deb
DEV_SHA256=78e87d12fb642bc41b04cb2e2f3f2f23cee14b89978a846b83defe945f388f72

MIX=$RC/mix-44.0-56.1
ABI_VER=$(awk '/define RNIC_UVERBS_ABI_VERSION/ {print $3}' \
	"$REPO/include/uapi/rdma/rnic-abi.h")
LIBIBVERBS=/usr/lib/x86_64-linux-gnu/libibverbs.so.1
PROVIDER_DIR=/usr/lib/x86_64-linux-gnu/libibverbs
DRIVER_DIR=/etc/libibverbs.d
SO=librnic-rdmav34.so
CC=${CC:-gcc}

log() { echo "rdma-core: $*" >&2; }
die() { echo "rdma-core: $*" >&2; exit 1; }

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

fetch_tarball() {
	sha_ok "$RC/$RC_TGZ" "$RC_SHA256" && return 0
	mkdir -p "$RC"
	log "downloading $RC_TGZ"
	curl -fsSL -o "$RC/$RC_TGZ.part" \
		"$MIRROR/pool/main/r/rdma-core/$RC_TGZ" ||
		die "cannot download $MIRROR/pool/main/r/rdma-core/$RC_TGZ"
	sha_ok "$RC/$RC_TGZ.part" "$RC_SHA256" ||
		die "$RC_TGZ: sha256 is not the pinned $RC_SHA256"
	mv "$RC/$RC_TGZ.part" "$RC/$RC_TGZ"
}

extract_tarball() {
	[ -f "$RC_SRC/.rnic-ok" ] && return 0
	log "extracting $RC_TGZ"
	rm -rf "$RC_SRC.tmp"
	mkdir -p "$RC_SRC.tmp"
	tar -xzf "$RC/$RC_TGZ" -C "$RC_SRC.tmp" --strip-components=1
	touch "$RC_SRC.tmp/.rnic-ok"
	rm -rf "$RC_SRC"
	mv "$RC_SRC.tmp" "$RC_SRC"
}

# Debian 12's libibverbs-dev: through apt, or straight from the pool when
# apt has no lists (a fresh guest); the pinned checksum decides either way
fetch_dev_deb() {
	sha_ok "$RC/$DEV_DEB" "$DEV_SHA256" && return 0
	mkdir -p "$RC"
	log "apt-get download libibverbs-dev=$DEV_VER"
	if ! (cd "$RC" && apt-get download -q "libibverbs-dev=$DEV_VER" >&2); then
		log "apt-get download failed; fetching $DEV_DEB from the pool"
		curl -fsSL -o "$RC/$DEV_DEB" \
			"$MIRROR/pool/main/r/rdma-core/$DEV_DEB" ||
			die "cannot download $DEV_DEB"
	fi
	sha_ok "$RC/$DEV_DEB" "$DEV_SHA256" ||
		die "$DEV_DEB: sha256 is not the pinned $DEV_SHA256"
}

write_config_h() {
	cat > "$1" <<'EOF'
/* Hand-written for the rnic provider build (scripts/rdma-core.sh) */
#ifndef CONFIG_H_IN
#define CONFIG_H_IN
#define HAVE_STATEMENT_EXPR 1
#define HAVE_BUILTIN_TYPES_COMPATIBLE_P 1
#define HAVE_TYPEOF 1
#define HAVE_ISBLANK 1
#define HAVE_BUILTIN_CLZ 1
#define HAVE_BUILTIN_CLZL 1
#define PACKAGE_VERSION "44.0"
#define STREAM_CLOEXEC "e"
#define RDMA_CDEV_DIR "/dev/infiniband"
#define IBV_CONFIG_DIR "/etc/libibverbs.d"
#define VERBS_PROVIDER_DIR "/usr/lib/x86_64-linux-gnu/libibverbs"
#define VERBS_PROVIDER_SUFFIX "-rdmav34.so"
#define IBVERBS_PABI_VERSION 34
#define HAVE_FUNC_ATTRIBUTE_ALWAYS_INLINE 1
#define HAVE_FUNC_ATTRIBUTE_IFUNC 1
#define HAVE_FUNC_ATTRIBUTE_SYMVER 1
#define HAVE_WORKING_IF_H 1
#define HAVE_FULL_SYMBOL_VERSIONS 1
#define SIZEOF_LONG 8
#define VERBS_IOCTL_ONLY 0
#define VERBS_WRITE_ONLY 0
#endif
EOF
}

# The header mix (see the top of this file); rebuilt only when missing
build_mix() {
	local t=$MIX.tmp inc f
	[ -f "$MIX/.rnic-ok" ] && return 0
	log "assembling the header mix in $MIX"
	rm -rf "$t"
	mkdir -p "$t/deb"
	dpkg-deb -x "$RC/$DEV_DEB" "$t/deb"
	inc=$t/include
	mkdir -p "$inc/infiniband" "$inc/kernel-abi" "$inc/ccan" "$inc/util" "$inc/rdma"
	cp "$t"/deb/usr/include/infiniband/*.h "$inc/infiniband/"
	for f in driver.h kern-abi.h cmd_ioctl.h cmd_write.h marshall.h; do
		cp "$RC_SRC/libibverbs/$f" "$inc/infiniband/$f"
	done
	cp "$RC_SRC"/ccan/*.h "$inc/ccan/"
	cp "$RC_SRC"/util/*.h "$inc/util/"
	cp "$RC_SRC"/kernel-headers/rdma/*.h "$inc/rdma/"
	(cd "$RC_SRC/kernel-headers" &&
	 python3 ../buildlib/make_abi_structs.py rdma/ib_user_verbs.h \
		"$inc/kernel-abi/ib_user_verbs.h")
	write_config_h "$inc/config.h"
	rm -rf "$t/deb"
	touch "$t/.rnic-ok"
	rm -rf "$MIX"
	mv "$t" "$MIX"
}

fetch_all() {
	fetch_tarball
	extract_tarball
	fetch_dev_deb
	build_mix
}

# What the provider is built from; the build directory is named by its hash
sources() {
	ls "$REPO"/providers/rnic/*.[ch] "$REPO"/providers/rnic/*.map \
	   "$REPO"/providers/rnic/compat/linux/*.h \
	   "$REPO"/include/rnic_hw.h "$REPO"/include/rnic_hw_rdma.h \
	   "$REPO"/include/uapi/rdma/rnic-abi.h "$REPO"/scripts/rdma-core.sh
}

build_dir() {
	local h
	h=$(sources | sort | xargs cat | sha256sum | cut -c1-16)
	echo "$CACHE/rnic-provider/$h"
}

CFLAGS_RNIC=(-O2 -g -fPIC -std=gnu11 -D_GNU_SOURCE -pthread
	     -Wall -Wextra -Werror -Wno-unused-parameter
	     -Wmissing-prototypes -Wstrict-prototypes
	     -fno-strict-aliasing -fstack-protector-strong)

# -I order: the provider's kernel-type shims, the hardware headers, the
# build's generated rnic kernel-abi header, then the mix as system headers
# (their own warnings are not ours to fix).
cflags_inc() {
	echo "-I$REPO/providers/rnic -I$REPO/providers/rnic/compat -I$REPO/include -I$1/include -I$REPO/include/uapi -isystem $MIX/include"
}

# check_imports FILE [exe]: an executable (exe) may export what it likes
check_imports() {
	local so=$1 kind=${2:-provider} t missing
	t=$(mktemp -d)
	nm -D --defined-only "$LIBIBVERBS" |
		awk '{s=$3; sub(/@@?/, "@", s); print s}' | sort -u > "$t/have"
	nm -D --undefined-only "$so" | awk '{print $NF}' |
		grep -E '@IBVERBS_' | sort -u > "$t/need" || true
	# an unversioned import from libibverbs would bind to any version
	nm -D --undefined-only "$so" | awk '{print $NF}' | grep -v '@' |
		grep -E '^(ibv_|_?_?verbs_|execute_ioctl|__ioctl_)' > "$t/unver" || true
	missing=$(comm -23 "$t/need" "$t/have"; sed 's/^/unversioned: /' "$t/unver")
	rm -rf "$t"
	if [ -n "$missing" ]; then
		echo "rdma-core: $so imports what $LIBIBVERBS lacks:" >&2
		echo "$missing" >&2
		return 1
	fi
	if [ "$kind" = exe ]; then
		log "imports OK: every libibverbs symbol of $(basename "$so") is in $LIBIBVERBS"
		return 0
	fi
	# the provider must export nothing: libibverbs finds it by its constructor
	if nm -D --defined-only "$so" | awk '$2 ~ /[TDBRW]/' | grep -q .; then
		echo "rdma-core: $so exports symbols:" >&2
		nm -D --defined-only "$so" | awk '$2 ~ /[TDBRW]/' >&2
		return 1
	fi
	log "imports OK: every libibverbs symbol of $(basename "$so") is in $LIBIBVERBS"
}

run_unit_test() {
	local d=$1
	[ -x "$d/rnic_unit_test" ] || die "no unit test in $d"
	"$d/rnic_unit_test" >&2
	"$d/rnic_datapath_test" >&2
}

build() {
	local d t src obj objs=() dp_objs inc
	fetch_all
	[ -f "$LIBIBVERBS" ] || die "$LIBIBVERBS missing: apt-get install libibverbs1"
	d=$(build_dir)
	if [ -f "$d/.rnic-ok" ]; then
		echo "$d"
		return 0
	fi
	t=$d.tmp.$$
	rm -rf "$t"
	# shellcheck disable=SC2064
	trap "rm -rf '$t'" EXIT
	mkdir -p "$t/include/kernel-abi"
	python3 "$RC_SRC/buildlib/make_abi_structs.py" \
		"$REPO/include/uapi/rdma/rnic-abi.h" "$t/include/kernel-abi/rnic-abi.h"
	inc=$(cflags_inc "$t")
	for src in "$REPO"/providers/rnic/*.c; do
		obj=$t/$(basename "${src%.c}").o
		case $src in
		*_test.c | */rnic_hostile*.c) continue ;;
		esac
		# shellcheck disable=SC2086
		$CC "${CFLAGS_RNIC[@]}" $inc -c "$src" -o "$obj"
		objs+=("$obj")
	done
	$CC -shared -o "$t/$SO" "${objs[@]}" \
		-Wl,--version-script="$REPO/providers/rnic/librnic.map" \
		-Wl,--no-undefined -Wl,-z,now -Wl,-z,relro -Wl,--as-needed \
		-l:libibverbs.so.1 -pthread
	check_imports "$t/$SO"
	# The unit test links the pure encode/decode file only: no libibverbs.
	# The data path test links the provider's objects but rnic.o (the
	# match table and context, which need a kernel) and libibverbs.
	# shellcheck disable=SC2086
	$CC "${CFLAGS_RNIC[@]}" $inc -o "$t/rnic_unit_test" \
		"$REPO/providers/rnic/rnic_unit_test.c" "$t/rnic_wqe.o"
	dp_objs=()
	for obj in "${objs[@]}"; do
		[ "$(basename "$obj")" = rnic.o ] || dp_objs+=("$obj")
	done
	# shellcheck disable=SC2086
	$CC "${CFLAGS_RNIC[@]}" $inc -o "$t/rnic_datapath_test" \
		"$REPO/providers/rnic/rnic_datapath_test.c" "${dp_objs[@]}" \
		-l:libibverbs.so.1 -pthread
	# rnic_hostile: a program on Debian's libibverbs that reaches the
	# provider's structs through rnic.h (the same sources, so the same
	# layout); run in the lab, not here (it needs a device). Its files
	# are rnic_hostile*.c, which sources() hashes with the rest.
	# shellcheck disable=SC2086
	$CC "${CFLAGS_RNIC[@]}" $inc -o "$t/rnic_hostile" \
		"$REPO"/providers/rnic/rnic_hostile*.c \
		-Wl,--as-needed -l:libibverbs.so.1 -pthread
	check_imports "$t/rnic_hostile" exe
	run_unit_test "$t"
	echo "driver rnic" > "$t/rnic.driver"
	touch "$t/.rnic-ok"
	rm -rf "$d"
	mkdir -p "$(dirname "$d")"
	mv "$t" "$d"
	trap - EXIT
	# the three newest builds stay, for comparison; the rest go
	# shellcheck disable=SC2012
	ls -1dt "$CACHE"/rnic-provider/*/ 2>/dev/null | tail -n +4 |
		xargs -r rm -rf
	log "built $d/$SO"
	echo "$d"
}

install_provider() {
	local d dest=${DESTDIR:-}
	d=$(build)
	install -d "$dest$PROVIDER_DIR" "$dest$DRIVER_DIR"
	install -m 0644 "$d/$SO" "$dest$PROVIDER_DIR/$SO"
	install -m 0644 "$d/rnic.driver" "$dest$DRIVER_DIR/rnic.driver"
	log "installed $dest$PROVIDER_DIR/$SO and $dest$DRIVER_DIR/rnic.driver"
}

# One fake uverbs device in a sysfs tree at $1: ibdev name $2, uverbs ABI
# $3, the PCI function bound to driver $4 (libibverbs reads SYSFS_PATH)
fake_sysfs() {
	local r=$1
	mkdir -p "$r/class/infiniband_verbs/uverbs0" "$r/class/infiniband/$2/device" \
		"$r/bus/pci/drivers/$4"
	echo 6 > "$r/class/infiniband_verbs/abi_version"
	echo "$2" > "$r/class/infiniband_verbs/uverbs0/ibdev"
	echo 231:192 > "$r/class/infiniband_verbs/uverbs0/dev"
	echo "$3" > "$r/class/infiniband_verbs/uverbs0/abi_version"
	echo "1: CA" > "$r/class/infiniband/$2/node_type"
	echo 5254:00ff:fe12:3456 > "$r/class/infiniband/$2/node_guid"
	echo pci:v00001AF4d00001110sv00001AF4sd00001100bc05sc00i00 \
		> "$r/class/infiniband/$2/device/modalias"
	ln -s "$r/bus/pci/drivers/$4" "$r/class/infiniband/$2/device/driver"
}

# Debian's libibverbs matching the built provider against fake devices:
# in a private mount namespace, so /dev/infiniband exists only there
match_test() {
	local so t c name abi drv want out err fails=0
	so=$(built_or_die)/$SO
	[ "$(id -u)" = 0 ] || die "match-test needs root (unshare -m, mount)"
	t=$(mktemp -d)
	for c in "rnic0 $ABI_VER rnic yes" "foo0 $ABI_VER rnic yes" \
		 "foo0 $ABI_VER ivshmem no" "rnic0 $((ABI_VER + 1)) rnic no"; do
		# shellcheck disable=SC2086
		set -- $c
		name=$1 abi=$2 drv=$3 want=$4
		fake_sysfs "$t/$name-$abi-$drv" "$name" "$abi" "$drv"
		# shellcheck disable=SC2016
		out=$(unshare -m --propagation private sh -c '
			mount -t tmpfs none /dev && mkdir /dev/infiniband &&
			touch /dev/infiniband/uverbs0 &&
			SYSFS_PATH=$1 RDMAV_DRIVERS=$2 ibv_devices' sh \
			"$t/$name-$abi-$drv" "${so%-rdmav34.so}" 2>"$t/err") || true
		err=$(cat "$t/err")
		if [ "$want" = yes ]; then
			if ! echo "$out" | grep -qw "$name" || [ -n "$err" ]; then
				log "match-test: $name (ABI $abi, driver $drv) not claimed cleanly: $out $err"
				fails=$((fails + 1))
			fi
		elif echo "$out" | grep -qw "$name"; then
			log "match-test: $name (ABI $abi, driver $drv) claimed, must not be"
			fails=$((fails + 1))
		fi
	done
	rm -rf "$t"
	[ $fails = 0 ] || die "match-test: $fails case(s) failed"
	log "match-test OK: rnic0 and a renamed rnic claimed without a message; an ivshmem device of another driver and another uverbs ABI not"
}

built_or_die() {
	local d
	d=$(build_dir)
	[ -f "$d/.rnic-ok" ] || die "not built yet: scripts/rdma-core.sh build"
	echo "$d"
}

case ${1:-build} in
build)		build ;;
fetch)		fetch_all ;;
check)		check_imports "$(built_or_die)/$SO" ;;
test)		run_unit_test "$(built_or_die)" ;;
match-test)	match_test ;;
install)	install_provider ;;
path)		echo "$(built_or_die)/$SO" ;;
path-hostile)	echo "$(built_or_die)/rnic_hostile" ;;
*)		sed -n '/^# Usage/,/^# network/p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2 ;;
esac
