#!/bin/bash
# Install the host tools the rxe guest needs: QEMU (qemu-system-x86_64, from
# bookworm-backports on Debian 12 because -netdev stream with unix sockets is
# wanted from a recent QEMU), debootstrap and e2fsprogs (mkfs.ext4 -d).
#
# Idempotent; run as root:  sim/rxe-guest/install-tools.sh
# Installs nothing that is already installed (checked with dpkg-query) and
# runs apt-get update only when it has something to install.
#
# The bookworm-backports source (deb822,
# /etc/apt/sources.list.d/bookworm-backports.sources) is added only if no apt
# source mentions bookworm-backports yet; its URI is the one apt already uses
# for Debian (first `URIs:` of debian.sources, else the `deb` line of
# sources.list), never a hard-coded host.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

rxe_require_root "$0"
if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    rxe_die "this script needs a Debian system (dpkg-query/apt-get not found)"
fi

codename=""
if [ -r /etc/os-release ]; then
    codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
fi

qemu_target=()
if [ "$codename" = bookworm ]; then
    if ! grep -rqs --include='*.list' --include='*.sources' 'bookworm-backports' \
        /etc/apt/sources.list /etc/apt/sources.list.d/; then
        mirror=$(rxe_debian_mirror) ||
            rxe_die "cannot find the Debian mirror in apt's configuration (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list); set RNIC_DEBIAN_MIRROR"
        rxe_log "adding bookworm-backports ($mirror) to /etc/apt/sources.list.d/bookworm-backports.sources"
        cat >/etc/apt/sources.list.d/bookworm-backports.sources <<EOF
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    qemu_target=(-t bookworm-backports)
else
    rxe_log "host is '${codename:-unknown}', not bookworm: installing qemu-system-x86 from the default suite"
fi

missing_qemu=0
rxe_pkg_installed qemu-system-x86 || missing_qemu=1
missing_other=()
for p in debootstrap e2fsprogs; do
    rxe_pkg_installed "$p" || missing_other+=("$p")
done

if [ "$missing_qemu" = 0 ] && [ ${#missing_other[@]} = 0 ]; then
    rxe_log "qemu-system-x86, debootstrap, e2fsprogs already installed"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
if [ "$missing_qemu" = 1 ]; then
    apt-get install -y --no-install-recommends "${qemu_target[@]}" qemu-system-x86
fi
if [ ${#missing_other[@]} != 0 ]; then
    apt-get install -y --no-install-recommends debootstrap e2fsprogs
fi
rxe_log "installed: $(qemu-system-x86_64 --version | head -n1)"
