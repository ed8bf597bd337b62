#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract Debian's linux-source-6.12 once into the cache and print its path.
# checkpatch.pl, kunit.py and the KUnit kernel build all read from it.
set -euo pipefail

CACHE=${RNIC_CACHE:-/var/cache/rnic}
TARBALL=/usr/src/linux-source-6.12.tar.xz
DEST="$CACHE/linux-source-6.12"

if [ ! -f "$TARBALL" ]; then
	echo "linux-source: $TARBALL missing; run scripts/install-deps.sh" >&2
	exit 1
fi

# The stamp records which tarball was extracted, so a Debian update of
# linux-source-6.12 re-extracts instead of silently using a stale tree.
want="$(stat -c '%s %Y' "$TARBALL")"
if [ -f "$DEST/.rnic-stamp" ] && [ "$(cat "$DEST/.rnic-stamp")" = "$want" ]; then
	echo "$DEST"
	exit 0
fi

echo "linux-source: extracting $TARBALL (once)" >&2
rm -rf "$DEST.tmp" "$DEST"
mkdir -p "$DEST.tmp"
tar -xJf "$TARBALL" -C "$DEST.tmp" --strip-components=1
echo "$want" > "$DEST.tmp/.rnic-stamp"
mv "$DEST.tmp" "$DEST"
echo "$DEST"
