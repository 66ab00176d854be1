#!/bin/bash
# Says so when a release binary links libdbus dynamically although Package.swift would link its
# archive here (staticLibDBusFolder: glibc 2.36 or newer, libdbus-1-dev's headers and archive).
# SwiftPM caches its evaluation of Package.swift: a first build before libdbus-1-dev was installed
# keeps the shared library (1 MiB more resident at every start) until that cache is removed.
# Usage: check-libdbus.sh BINARY. Warns on stderr; never fails the build.
binary=$1
[ -x "$binary" ] || exit 0
version=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
[ -n "$major" ] && [ -n "$minor" ] || exit 0
{ [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 36 ]; }; } || exit 0
[ -r /usr/include/dbus-1.0/dbus/dbus.h ] || exit 0
found=""
for folder in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib/arm-linux-gnueabihf \
    /usr/lib/riscv64-linux-gnu /usr/lib64 /usr/lib; do
    if [ -r "$folder/libdbus-1.a" ] && [ -r "$folder/dbus-1.0/include/dbus/dbus-arch-deps.h" ]; then
        found=$folder
        break
    fi
done
[ -n "$found" ] || exit 0
if ldd "$binary" 2>/dev/null | grep -q 'libdbus-1\.so'; then
    echo "warning: $binary links libdbus dynamically, though $found/libdbus-1.a is installed:" \
        "SwiftPM kept Package.swift's evaluation from before libdbus-1-dev was installed." \
        "To link it statically: rm -rf ~/.cache/org.swift.swiftpm/manifests .build/*/release && make release" >&2
fi
exit 0
