#!/bin/bash
# Build (once) the rnic soft-RoCE guest: Debian 12 bookworm, stock kernel,
# rdma_rxe, rdma-core, perftest, pyverbs; /sbin/rnic-init = guest-init.sh.
#
#   sudo sim/rxe-guest/build-image.sh OUTDIR
#
# Outputs in OUTDIR:
#   rootfs.ext4   raw ext4 root file system (label rnicguest; boot it with
#                 snapshot=on so it is never modified)
#   vmlinuz       the guest kernel
#   initrd.img    its initramfs (contains virtio_blk + ext4)
#   versions.txt  kernel / rdma-core / perftest / ... versions (key=value)
#   stamp         cache key: sha256 over build-image.sh, common.sh, guest-init.sh
#
# If OUTDIR/stamp holds the current key and the outputs exist, prints "cached"
# and exits 0 at once (root not needed for that). Otherwise (root needed):
# debootstrap into a temp dir beside OUTDIR, mkfs.ext4 -d (no loop mount),
# then rename the results into OUTDIR, stamp last, so an interrupted build
# never looks cached. Concurrent builds of the same OUTDIR serialise on
# OUTDIR/.lock.
#
# The Debian mirror is the one apt on this host is configured with (first
# `URIs:` in /etc/apt/sources.list.d/debian.sources, else the `deb` line of
# /etc/apt/sources.list); RNIC_DEBIAN_MIRROR overrides it.
# Host tools: sim/rxe-guest/install-tools.sh.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

SUITE=bookworm
PACKAGES=linux-image-amd64,rdma-core,ibverbs-utils,ibverbs-providers,perftest,iproute2,kmod,procps,rdmacm-utils,python3-pyverbs,pciutils
OUTPUTS=(rootfs.ext4 vmlinuz initrd.img versions.txt)

if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
OUT=$1

# --- cache key & fast path -------------------------------------------------
KEY=$(cd "$HERE" && sha256sum build-image.sh common.sh guest-init.sh | sha256sum | cut -d' ' -f1)

is_cached() {
    [ -f "$OUT/stamp" ] || return 1
    [ "$(cat "$OUT/stamp")" = "$KEY" ] || return 1
    local f
    for f in "${OUTPUTS[@]}"; do
        [ -s "$OUT/$f" ] || return 1
    done
}

if is_cached; then
    echo "cached"
    exit 0
fi

# --- preconditions ---------------------------------------------------------
T0=$(date +%s.%N)
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
phase() { rxe_log "[$(elapsed)] $*"; }

rxe_require_root "$0"
for tool in debootstrap mkfs.ext4 chroot flock sha256sum; do
    command -v "$tool" >/dev/null 2>&1 ||
        rxe_die "$tool not found; install the host tools with: sudo $HERE/install-tools.sh"
done
mke2fs_ver=$(mke2fs -V 2>&1 | awk 'NR == 1 { print $2 }')
case $mke2fs_ver in
    1.[0-3]* | 1.4[0-2]*) rxe_die "mke2fs $mke2fs_ver is too old for 'mkfs.ext4 -d' (need >= 1.43)" ;;
esac
[ -r "$HERE/guest-init.sh" ] || rxe_die "missing $HERE/guest-init.sh"

MIRROR=$(rxe_debian_mirror) ||
    rxe_die "Debian mirror not found in apt's configuration (/etc/apt/sources.list.d/debian.sources URIs:, /etc/apt/sources.list deb line); set RNIC_DEBIAN_MIRROR=URI"
probe_mirror() {
    local url="$MIRROR/dists/$SUITE/Release"
    if command -v curl >/dev/null 2>&1; then
        curl -fsS --max-time 60 -o /dev/null "$url"
    elif command -v wget >/dev/null 2>&1; then
        wget -q --timeout=60 -O /dev/null "$url"
    else
        return 0 # debootstrap itself will tell
    fi
}
probe_mirror || rxe_die "Debian mirror $MIRROR does not serve dists/$SUITE/Release (not reachable, or not a Debian archive); set RNIC_DEBIAN_MIRROR"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PARENT=$(dirname "$OUT")
TMP_PREFIX=".$(basename "$OUT").build."

exec 9>"$OUT/.lock"
if ! flock -n 9; then
    rxe_log "another build of $OUT is running; waiting for it"
    flock 9
fi
if is_cached; then # built by the run we waited for
    echo "cached"
    exit 0
fi

# Unmount anything below $1, then delete it without crossing file systems.
remove_tree() {
    local dir=$1 mnt
    [ -d "$dir" ] || return 0
    # deepest first
    awk -v d="$dir/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r |
        while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done
    rm -rf --one-file-system "$dir"
}

# Left over by builds that were killed (we hold the lock, so none is running).
for stale in "$PARENT/$TMP_PREFIX"*; do
    [ -e "$stale" ] || continue
    rxe_log "removing stale build dir $stale"
    remove_tree "$stale"
done

TMP=$(mktemp -d "$PARENT/${TMP_PREFIX}XXXXXX")
ROOT=$TMP/root
cleanup() {
    local rc=$?
    remove_tree "$TMP"
    if [ $rc -ne 0 ]; then rxe_log "build FAILED after $(elapsed) (rc $rc); $OUT left unchanged"; fi
}
trap cleanup EXIT

# Long steps run in their own session, in the background, so that a signal to
# this script (kill, a runner's timeout) stops them at once instead of after
# they finish, before the temp dir is removed.
child=""
# run_child LOG CMD...: output to LOG ("-" = ours)
run_child() {
    local rc=0 log=$1
    shift
    if [ "$log" = - ]; then setsid "$@" & else setsid "$@" >"$log" 2>&1 & fi
    child=$!
    wait "$child" || rc=$?
    child=""
    return "$rc"
}
on_signal() {
    trap - INT TERM HUP
    if [ -n "$child" ]; then
        kill -TERM -- "-$child" 2>/dev/null || true
        local _
        for _ in $(seq 50); do
            pgrep -s "$child" >/dev/null 2>&1 || break
            sleep 0.2
        done
        kill -KILL -- "-$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    rxe_log "interrupted"
    exit 130
}
trap on_signal INT TERM HUP

phase "building $SUITE guest image in $OUT (mirror $MIRROR, temp $TMP)"

# --- debootstrap -----------------------------------------------------------
phase "debootstrap --variant=minbase $SUITE (log: $TMP/debootstrap.log)"
if ! run_child "$TMP/debootstrap.log" \
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR"; then
    tail -n 30 "$TMP/debootstrap.log" >&2 || true
    [ -f "$ROOT/debootstrap/debootstrap.log" ] && tail -n 30 "$ROOT/debootstrap/debootstrap.log" >&2
    rxe_die "debootstrap failed (see above)"
fi
phase "debootstrap done"

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }

# --- kernel & initrd -------------------------------------------------------
mapfile -t kvers < <(ls "$ROOT/lib/modules")
[ ${#kvers[@]} = 1 ] || rxe_die "expected one kernel in $ROOT/lib/modules, found: ${kvers[*]:-none}"
KVER=${kvers[0]}
[ -s "$ROOT/boot/vmlinuz-$KVER" ] || rxe_die "kernel image $ROOT/boot/vmlinuz-$KVER missing"
[ -f "$ROOT/lib/modules/$KVER/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ] ||
    ls "$ROOT/lib/modules/$KVER/kernel/drivers/infiniband/sw/rxe/"rdma_rxe.ko* >/dev/null 2>&1 ||
    rxe_die "kernel $KVER has no rdma_rxe module"

mount -t proc proc "$ROOT/proc"
initrd_has_virtio_blk() {
    grep -q '/virtio_blk\.ko' "$ROOT/lib/modules/$KVER/modules.builtin" && return 0
    [ -s "$ROOT/boot/initrd.img-$KVER" ] || return 1
    # (to a file: grep -q in a pipe would SIGPIPE lsinitramfs under pipefail)
    in_root lsinitramfs "/boot/initrd.img-$KVER" >"$TMP/initrd.list" || return 1
    grep -q '/virtio_blk\.ko' "$TMP/initrd.list"
}
# The kernel package's initrd uses MODULES=most: ~35 MB (gzip; minbase has no
# zstd) whose unpacking alone costs ~2.5 s of boot under TCG. Regenerate a
# small one holding just what mounting /dev/vda needs (virtio-pci, virtio-blk,
# ext4); the rest of the modules load from the root file system.
[ -s "$ROOT/boot/initrd.img-$KVER" ] || rxe_log "warning: debootstrap generated no initrd; creating one"
printf 'MODULES=list\n' >"$ROOT/etc/initramfs-tools/conf.d/rnic.conf"
printf '%s\n' virtio_pci virtio_blk ext4 >>"$ROOT/etc/initramfs-tools/modules"
phase "update-initramfs (MODULES=list: virtio_pci virtio_blk ext4)"
if [ -e "$ROOT/boot/initrd.img-$KVER" ]; then mode=-u; else mode=-c; fi
run_child "$TMP/initramfs.log" chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
    update-initramfs "$mode" -k "$KVER" ||
    { cat "$TMP/initramfs.log" >&2; rxe_die "update-initramfs failed in the chroot"; }
[ -s "$ROOT/boot/initrd.img-$KVER" ] || rxe_die "update-initramfs generated no $ROOT/boot/initrd.img-$KVER"
initrd_has_virtio_blk || rxe_die "initrd $ROOT/boot/initrd.img-$KVER has no virtio_blk (and it is not built in)"
phase "kernel $KVER, initrd $(du -h "$ROOT/boot/initrd.img-$KVER" | cut -f1) (virtio_blk ok)"

# --- versions --------------------------------------------------------------
{
    echo "kernel=$KVER"
    in_root dpkg-query -W -f='${Package}=${Version}\n' \
        "linux-image-$KVER" rdma-core ibverbs-utils ibverbs-providers perftest \
        rdmacm-utils python3-pyverbs iproute2 initramfs-tools
    echo "debian=$(cat "$ROOT/etc/debian_version")"
    echo "suite=$SUITE"
    echo "mirror=$MIRROR"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "key=$KEY"
} >"$TMP/versions.txt"
umount "$ROOT/proc"

cp "$ROOT/boot/vmlinuz-$KVER" "$TMP/vmlinuz"
cp "$ROOT/boot/initrd.img-$KVER" "$TMP/initrd.img"

# --- guest configuration ---------------------------------------------------
install -m 0755 "$HERE/guest-init.sh" "$ROOT/sbin/rnic-init"
echo rnic-guest >"$ROOT/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\trnic-guest\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
echo "# rnic guest: root is mounted by the initramfs, nothing else" >"$ROOT/etc/fstab"
echo "nameserver 10.0.2.3" >"$ROOT/etc/resolv.conf"

# --- trim ------------------------------------------------------------------
phase "trimming rootfs ($(du -sm "$ROOT" | cut -f1) MB)"
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb \
    "$ROOT"/var/cache/debconf/*-old "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/* \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/usr/share/lintian "$ROOT"/usr/share/linda \
    "$ROOT"/boot/initrd.img-* "$ROOT/debootstrap"
# Kernel modules a headless virtio guest never loads (the biggest part).
mods=$ROOT/lib/modules/$KVER/kernel
rm -rf "$mods"/drivers/gpu "$mods"/drivers/media "$mods"/sound "$mods"/drivers/net/wireless \
    "$mods"/drivers/bluetooth "$mods"/net/bluetooth "$mods"/drivers/staging "$mods"/drivers/iio \
    "$mods"/drivers/isdn "$mods"/net/mac80211 "$mods"/net/wireless "$mods"/drivers/net/can \
    "$mods"/net/can "$mods"/drivers/hwmon "$mods"/drivers/input/touchscreen "$mods"/drivers/usb/gadget
rm -rf "$ROOT/lib/firmware"/*
in_root depmod -a "$KVER"
phase "rootfs trimmed to $(du -sm "$ROOT" | cut -f1) MB"

# --- ext4 image (no loop mount) --------------------------------------------
used_mb=$(du -sm "$ROOT" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 256))
phase "mkfs.ext4 -d ($size_mb MB)"
truncate -s "${size_mb}M" "$TMP/rootfs.ext4"
run_child - mkfs.ext4 -q -F -b 4096 -d "$ROOT" -L rnicguest "$TMP/rootfs.ext4"
echo "$KEY" >"$TMP/stamp"

# --- publish: outputs first, stamp last ------------------------------------
rm -f "$OUT/stamp"
for f in "${OUTPUTS[@]}"; do
    mv -f "$TMP/$f" "$OUT/$f"
done
mv -f "$TMP/stamp" "$OUT/stamp"
sync -f "$OUT/stamp" 2>/dev/null || true

phase "done: $OUT (rootfs $(du -h --apparent-size "$OUT/rootfs.ext4" | cut -f1), kernel $KVER)"
sed 's/^/  /' "$OUT/versions.txt" >&2
