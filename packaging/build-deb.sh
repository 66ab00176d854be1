#!/usr/bin/env bash
# make deb: hrm_<version>_<arch>.deb from what `make release` built, as a normal user (files owned
# by root through dpkg-deb --root-owner-group). The staging tree is `make install` into /usr, so
# the package holds exactly what an install does; then what Debian policy adds: gzipped man pages,
# the copyright file and changelog, Depends from dpkg-shlibdeps, md5sums.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

release=.build/release
for program in hrm hrm-sim hrm-serve; do
    if [ ! -x "$release/$program" ]; then
        echo "make deb: $release/$program is missing: run \`make release\` first" >&2
        exit 1
    fi
done

# `hrm 0.1.0` or `0.1.0`, as argument-parser prints it.
version=$("$release/hrm" --version | awk '{print $NF}')
arch=$(dpkg --print-architecture)
changelog_version=$(sed -n '1s/^hrm (\([^)]*\)).*/\1/p' packaging/debian/changelog)
if [ "$version" != "$changelog_version" ]; then
    echo "make deb: hrm --version says $version but packaging/debian/changelog's newest entry is" \
        "$changelog_version: add an entry for $version" >&2
    exit 1
fi

out=.build/deb
stage="$out/hrm_${version}_${arch}"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
make --no-print-directory install DESTDIR="$PWD/$stage" PREFIX=/usr >/dev/null

doc="$stage/usr/share/doc/hrm"
install -d "$doc"
install -m 0644 packaging/debian/copyright "$doc/copyright"
# A native package (no Debian revision): its changelog is changelog.gz, gzip -n for the same
# bytes on every build.
gzip -9n < packaging/debian/changelog > "$doc/changelog.gz"
gzip -9n "$stage"/usr/share/man/man1/*.1

# Depends: the shared libraries the binaries link (the Swift runtime is static), as dpkg-shlibdeps
# finds them through the packages' symbols files. It reads a debian/control, so it runs in a
# scratch folder of its own.
shlib=$(mktemp -d)
trap 'rm -rf "$shlib"' EXIT
mkdir -p "$shlib/debian"
printf 'Source: hrm\n\nPackage: hrm\nArchitecture: any\n' > "$shlib/debian/control"
binaries=()
for program in hrm hrm-sim hrm-serve; do binaries+=("$PWD/$stage/usr/bin/$program"); done
# (Its warning about the missing DEBIAN folder is expected.)
depends=$(cd "$shlib" && dpkg-shlibdeps -O "${binaries[@]}" 2>"$shlib/stderr" | sed -n 's/^shlibs:Depends=//p')
if [ -z "$depends" ]; then
    echo "make deb: dpkg-shlibdeps (from dpkg-dev) found no dependencies: $(grep -v warning: "$shlib/stderr")" >&2
    exit 1
fi
# A binary whose relative relocations are packed (DT_RELR, Package.swift's leanLink) needs glibc
# 2.36 to start, which dpkg-shlibdeps does not see: it goes by the libc symbols the binary calls.
# (grep reads it all: with -q, readelf could die of SIGPIPE and pipefail fail the test.)
if readelf -V "${binaries[@]}" | grep GLIBC_ABI_DT_RELR >/dev/null; then
    libc=$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$depends")
    if [ -n "$libc" ] && dpkg --compare-versions "$libc" lt 2.36; then
        depends=${depends/"libc6 (>= $libc)"/"libc6 (>= 2.36)"}
    fi
fi

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
maintainer=${DEB_MAINTAINER:-$(sed -n 's/^ -- \(.*>\)  .*/\1/p' packaging/debian/changelog | head -1)}
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@MAINTAINER@|$maintainer|" \
    packaging/debian/control.in > "$stage/DEBIAN/control"
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

deb="$out/hrm_${version}_${arch}.deb"
# xz -3: 42 MB in 20 s here, where the default -6 makes 38 MB in a minute.
dpkg-deb --root-owner-group -Zxz -z3 --build "$stage" "$deb" >/dev/null
echo "make deb: $deb ($(du -h "$deb" | cut -f1)), Depends: $depends"
