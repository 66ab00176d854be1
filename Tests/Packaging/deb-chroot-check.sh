#!/usr/bin/env bash
# The .deb `make deb` built, installed with apt into a clean, minimal Debian 12 (bookworm) chroot,
# so that apt pulls its Depends from the archive; then hrm --help, hrm-sim --list and, with
# dbus-daemon there, hrm-sim -- hrm watch --count 3 run inside it; then the package is purged and
# must leave nothing behind.
#
# Needs root (debootstrap, chroot, mount) and a Debian mirror: MIRROR, else the one this machine's
# apt uses for bookworm (apt-mirror.sh reads /etc/apt's sources; no host is named here). The debootstrapped
# system is kept as a tarball outside the clone (CACHE, by default
# /var/cache/hrm-ci/bookworm-minbase.tar.zst, remade after a week) so that reruns skip debootstrap.
# Anything that cannot run says SKIPPED and why, and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

CACHE=${CACHE:-/var/cache/hrm-ci/bookworm-minbase.tar.zst}
started=$SECONDS

skip() {
    echo "deb-chroot-check: SKIPPED: $*"
    exit 0
}
fail() {
    echo "deb-chroot-check: FAILED: $*" >&2
    exit 1
}

deb=${1:-$(ls -t .build/deb/hrm_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || fail "no .deb: run make deb first (or give its path)"
[ "$(id -u)" = 0 ] || skip "needs root for debootstrap, chroot and mount"
for tool in debootstrap chroot zstd; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done

work=$(mktemp -d /tmp/hrm-chroot.XXXXXX)
root="$work/root"
mkdir "$root"

# Unmounts everything under the chroot, then removes it; never removes a tree that still has
# something mounted in it (that would reach into the host's /proc).
cleanup() {
    local status=$?
    if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc" || umount -l "$root/proc" || true; fi
    if grep -q " $root/" /proc/self/mounts; then
        echo "deb-chroot-check: still mounted under $root; left in place" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -f "$CACHE" ] && [ -z "$(find "$CACHE" -mtime +7)" ]; then
    tar --zstd -xpf "$CACHE" -C "$root"
    echo "deb-chroot-check: bookworm from the cache $CACHE"
else
    MIRROR=${MIRROR:-$(Tests/Packaging/apt-mirror.sh bookworm || true)}
    [ -n "$MIRROR" ] || skip "no Debian mirror for bookworm in /etc/apt's sources (set MIRROR=URL)"
    if ! debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1; then
        skip "debootstrap could not make bookworm from $MIRROR: $(tail -1 "$work/debootstrap.log")"
    fi
    mkdir -p "$(dirname "$CACHE")"
    tar --zstd -cpf "$CACHE.partial" -C "$root" . && mv "$CACHE.partial" "$CACHE"
    echo "deb-chroot-check: bookworm debootstrapped from $MIRROR in $((SECONDS - started)) s, cached in $CACHE"
fi

mount -t proc proc "$root/proc"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/hrm.deb"

in_chroot() {
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb \
        DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}

if ! in_chroot apt-get update -qq >"$work/apt.log" 2>&1; then
    skip "apt-get update in the chroot failed: $(tail -1 "$work/apt.log")"
fi
# dbus-daemon is a Recommends (for hrm-sim); asked for by name, without the other Recommends.
in_chroot apt-get install -y -qq --no-install-recommends /tmp/hrm.deb dbus-daemon >"$work/apt.log" 2>&1 ||
    fail "apt-get install ./hrm.deb: $(tail -5 "$work/apt.log")"
echo "deb-chroot-check: installed $(basename "$deb") with apt ($(in_chroot dpkg-query -W -f '${Depends}' hrm))"

help=$(in_chroot hrm --help) || fail "hrm --help exited $?"
grep -q 'USAGE: hrm <subcommand>' <<<"$help" || fail "hrm --help: $help"
version=$(in_chroot hrm --version) || fail "hrm --version exited $?"
in_chroot dpkg-query -W -f '${Version}' hrm | grep -qx "$version" || fail "hrm --version $version is not the package's"
list=$(in_chroot hrm-sim --list) || fail "hrm-sim --list exited $?"
grep -q '^basic ' <<<"$list" || fail "hrm-sim --list: $list"
echo "deb-chroot-check: hrm --help, hrm --version ($version), hrm-sim --list ($(wc -l <<<"$list") scenarios)"

unit=/usr/lib/systemd/user/hrm-record.service
in_chroot grep -q '^ExecStart=/usr/bin/hrm record' "$unit" || fail "$unit does not run /usr/bin/hrm"
[ -f "$root/usr/share/man/man1/hrm.1.gz" ] || fail "no hrm.1.gz"

if in_chroot sh -c 'command -v dbus-daemon' >/dev/null; then
    watch=$(in_chroot hrm-sim -- hrm watch --count 3 --json) || fail "hrm-sim -- hrm watch --count 3 exited $?"
    measurements=$(grep -c '"type":"measurement"' <<<"$watch" || true)
    [ "$measurements" = 3 ] || fail "hrm watch --count 3 gave $measurements measurements: $watch"
    echo "deb-chroot-check: hrm-sim -- hrm watch --count 3: 3 measurements"
else
    echo "deb-chroot-check: SKIPPED hrm-sim -- hrm watch: no dbus-daemon in the chroot"
fi

in_chroot dpkg --purge hrm >"$work/apt.log" 2>&1 || fail "dpkg --purge hrm: $(tail -3 "$work/apt.log")"
for path in /usr/bin/hrm /usr/bin/hrm-sim /usr/share/hrm "$unit"; do
    [ ! -e "$root$path" ] || fail "$path is left after dpkg --purge"
done
echo "deb-chroot-check: passed in $((SECONDS - started)) s"
