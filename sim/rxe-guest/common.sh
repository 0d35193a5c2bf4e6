# shellcheck shell=bash
# Helpers shared by install-tools.sh and build-image.sh (sourced, bash).
# build-image.sh includes this file in its cache key.

rxe_log() { printf '[rxe-guest] %s\n' "$*" >&2; }
rxe_die() { printf '[rxe-guest] error: %s\n' "$*" >&2; exit 1; }

rxe_require_root() {
    [ "$(id -u)" = 0 ] || rxe_die "$1 must run as root (it uses debootstrap/chroot/apt-get); try: sudo $1 ..."
}

# Print the Debian archive URI apt itself is configured with, without a
# trailing slash. Order: $RNIC_DEBIAN_MIRROR (explicit override), the first
# `URIs:` of /etc/apt/sources.list.d/debian.sources (deb822, Debian 12 default
# in containers/cloud images), then the first `deb` line of
# /etc/apt/sources.list that is not a security archive. Never guesses a host.
rxe_debian_mirror() {
    local uri=""
    if [ -n "${RNIC_DEBIAN_MIRROR:-}" ]; then
        uri=$RNIC_DEBIAN_MIRROR
    fi
    if [ -z "$uri" ] && [ -r /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk 'tolower($1) == "uris:" { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
        # deb [opts] URI SUITE COMPONENTS...
        uri=$(sed -e 's/#.*//' -e 's/\[[^]]*\]//' /etc/apt/sources.list |
            awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }')
    fi
    [ -n "$uri" ] || return 1
    printf '%s\n' "${uri%/}"
}

# Is a Debian package installed (dpkg's own view)?
rxe_pkg_installed() {
    dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}
