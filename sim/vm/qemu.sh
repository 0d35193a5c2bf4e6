#!/bin/bash
# Run the QEMU that sim/vm/install-qemu.sh put into its own Debian sid root,
# without chroot: the root's dynamic loader runs the binary with the root's
# libraries, its firmware and data directories (-L) and its module directory
# (QEMU_MODULE_DIR, so the host's QEMU 10 modules are never loaded).
#
#   sim/vm/qemu.sh [QEMU ARGS...]          e.g. sim/vm/qemu.sh -device help
#
# The root is $RNIC_QEMU_SID (default /opt/rnic/qemu-sid), as for
# install-qemu.sh. Exits 127 with the reason when it is not installed.
set -euo pipefail

DIR=${RNIC_QEMU_SID:-/opt/rnic/qemu-sid}
R=$DIR/root
LIB=$R/usr/lib/x86_64-linux-gnu
if [ ! -x "$R/usr/bin/qemu-system-x86_64" ] || [ ! -e "$LIB/ld-linux-x86-64.so.2" ]; then
    echo "qemu.sh: no QEMU in $R; install it with: sudo $(dirname "$0")/install-qemu.sh $DIR" >&2
    exit 127
fi
export QEMU_MODULE_DIR=$LIB/qemu
exec "$LIB/ld-linux-x86-64.so.2" --library-path "$LIB" \
    "$R/usr/bin/qemu-system-x86_64" -L "$R/usr/share/seabios" -L "$R/usr/share/qemu" "$@"
