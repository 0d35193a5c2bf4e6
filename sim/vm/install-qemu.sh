#!/bin/bash
# Install a QEMU with the vfio-user client (`-device vfio-user-pci`) from
# Debian unstable into a directory of its own, without a source build and
# without touching the host's QEMU (bookworm-backports' QEMU 10 has no
# vfio-user-pci; the rxe interop guest keeps using it).
#
#   sudo sim/vm/install-qemu.sh [DIR]      # DIR default: $RNIC_QEMU_SID or /opt/rnic/qemu-sid
#
# What it does: `debootstrap --variant=minbase sid DIR/root`, then in a
# chroot `apt-get install --no-install-recommends qemu-system-x86` (with
# Acquire::Check-Valid-Until=false: the mirror may serve an old snapshot),
# then checks through the root's own loader that
# `qemu-system-x86_64 -device help` lists vfio-user-pci. sim/vm/qemu.sh runs
# that QEMU (no chroot: DIR/root's ld.so with its library path).
#
# Cached: DIR/stamp holds a key (sha256 of this script and the mirror
# helper); when it matches and the binary is there the script prints
# "cached" and exits at once (no root needed). Otherwise it builds into a
# temp dir beside DIR and renames it into place, stamp last, so an
# interrupted install never looks done. Concurrent runs serialise on a lock.
# The Debian mirror is the one apt on this host uses (sim/rxe-guest/common.sh;
# RNIC_DEBIAN_MIRROR overrides).
#
# Measured on the 2-core machine: ~60 s (debootstrap ~45 s, apt ~15 s),
# ~280 MB.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../rxe-guest/common.sh
. "$HERE/../rxe-guest/common.sh"

log() { printf '[qemu-sid] %s\n' "$*" >&2; }
die() { printf '[qemu-sid] error: %s\n' "$*" >&2; exit 1; }

if [ $# -gt 1 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    echo "usage: $0 [DIR]   (default \$RNIC_QEMU_SID or /opt/rnic/qemu-sid)" >&2
    exit 2
fi
DIR=${1:-${RNIC_QEMU_SID:-/opt/rnic/qemu-sid}}
KEY=$(cd "$HERE" && sha256sum install-qemu.sh ../rxe-guest/common.sh | sha256sum | cut -d' ' -f1)
BIN=root/usr/bin/qemu-system-x86_64

is_cached() {
    [ -f "$DIR/stamp" ] && [ "$(cat "$DIR/stamp")" = "$KEY" ] && [ -x "$DIR/$BIN" ]
}
if is_cached; then
    echo cached
    exit 0
fi

T0=$(date +%s)
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, apt-get): sudo $0 $DIR"
for t in debootstrap chroot flock sha256sum; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install debootstrap)"
done
MIRROR=$(rxe_debian_mirror) ||
    die "no Debian mirror in apt's configuration; set RNIC_DEBIAN_MIRROR=URI"

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if is_cached; then
    echo cached
    exit 0
fi

TMP=$(mktemp -d "$DIR.build.XXXXXX")
cleanup() {
    local rc=$? m
    # Anything still mounted below the temp dir (a killed chroot step).
    for m in $(awk -v d="$TMP/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$TMP"
    [ $rc -eq 0 ] || log "install FAILED (rc $rc); $DIR left unchanged"
}
trap cleanup EXIT

ROOT=$TMP/root
log "debootstrap --variant=minbase sid $ROOT ($MIRROR; log $TMP/debootstrap.log)"
if ! debootstrap --variant=minbase sid "$ROOT" "$MIRROR" >"$TMP/debootstrap.log" 2>&1; then
    tail -n 30 "$TMP/debootstrap.log" >&2
    die "debootstrap sid failed"
fi
log "debootstrap done after $(($(date +%s) - T0)) s"

in_root() {
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}
mount -t proc proc "$ROOT/proc"
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -q)
if ! { in_root apt-get "${APT_OPTS[@]}" update &&
    in_root apt-get "${APT_OPTS[@]}" install -y qemu-system-x86; } >"$TMP/apt.log" 2>&1; then
    umount "$ROOT/proc"
    tail -n 30 "$TMP/apt.log" >&2
    die "apt-get install qemu-system-x86 failed in the sid root"
fi
VERSION=$(in_root dpkg-query -W -f='${Version}' qemu-system-x86)
umount "$ROOT/proc"
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* \
    "$ROOT"/usr/share/man/* "$ROOT"/usr/share/locale/*

# The check runs the binary exactly as sim/vm/qemu.sh will.
if ! RNIC_QEMU_SID=$TMP "$HERE/qemu.sh" -device help >"$TMP/devices.txt" 2>&1; then
    cat "$TMP/devices.txt" >&2
    die "the installed qemu-system-x86_64 does not run through its root's loader"
fi
grep -q '"vfio-user-pci"' "$TMP/devices.txt" ||
    die "qemu-system-x86 $VERSION from sid has no vfio-user-pci device"
echo "qemu-system-x86=$VERSION" >"$TMP/version.txt"
echo "$KEY" >"$TMP/stamp"

# Publish: the new tree replaces the old one; stamp last.
rm -rf --one-file-system "$DIR"
mkdir -p "$DIR"
mv "$ROOT" "$DIR/root"
mv "$TMP/version.txt" "$DIR/version.txt"
mv "$TMP/stamp" "$DIR/stamp"
log "qemu-system-x86 $VERSION with vfio-user-pci in $DIR ($(du -sm "$DIR" | cut -f1) MB, $(($(date +%s) - T0)) s)"
