#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every module parameter must carry a description in modinfo (what it
# does, its valid values and its default), and must be documented in
# Documentation/rnic.rst.
set -euo pipefail

KO=${1:?usage: check-modinfo.sh rnic.ko}
DOC="$(dirname "$0")/../Documentation/rnic.rst"
rc=0

# Parameters declared with module_param_cb() carry no parmtype in modinfo,
# so the list comes from the sources and modinfo must describe each one.
SRC="$(dirname "$0")/../drivers"
mapfile -t params < <(grep -ho 'module_param\(_cb\|_named\)\?([a-z_0-9]*' "$SRC"/*.c |
	sed 's/.*(//' | sort -u)
[ "${#params[@]}" -gt 0 ] || { echo "check-modinfo: no module_param in $SRC" >&2; exit 1; }
for p in "${params[@]}"; do
	desc=$(modinfo -F parm "$KO" | sed -n "s/^$p:\(.*\)/\1/p")
	if [ -z "$desc" ]; then
		echo "check-modinfo: parameter $p has no MODULE_PARM_DESC" >&2
		rc=1
	elif ! grep -qi "default" <<<"$desc"; then
		echo "check-modinfo: parameter $p: description does not state the default" >&2
		rc=1
	fi
	if ! grep -q "^$p\$" "$DOC"; then
		echo "check-modinfo: parameter $p is not documented in Documentation/rnic.rst" >&2
		rc=1
	fi
done
exit $rc
