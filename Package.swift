// swift-tools-version: 6.1
import PackageDescription

#if canImport(Glibc)
    import Glibc
#endif

/// C functions each in a section of their own in release builds, as `strict` does for Swift.
let cFunctionSections: [CSetting] = [
    .unsafeFlags(["-ffunction-sections"], .when(platforms: [.linux], configuration: .release))
]

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    // Each function in a section of its own in release builds, so that the link can put the ones
    // that run side by side (see `leanLink`) and drop the ones nothing calls.
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(platforms: [.linux], configuration: .release)),
]

/// The glibc of the machine building, as (major, minor); nil when it is not glibc.
func buildGlibcVersion() -> (Int, Int)? {
    #if canImport(Glibc)
        var text = [CChar](repeating: 0, count: 64)
        guard confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count) > 0 else { return nil }
        // "glibc 2.36"
        let bytes = text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let parts =
            String(decoding: bytes, as: UTF8.self).split(separator: " ").last?.split(separator: ".") ?? []
        guard parts.count >= 2, let major = Int(parts[0]), let minor = Int(parts[1]) else { return nil }
        return (major, minor)
    #else
        return nil
    #endif
}

/// Where Debian (and most distributions) put libdbus's headers; dbus-arch-deps.h is in the
/// library's folder (see `staticLibDBusFolder`).
let libDBusHeaders = "/usr/include/dbus-1.0"

/// Where release builds find libdbus's archive to link it statically: the building machine's
/// folder holding `libdbus-1.a` (a multiarch folder on Debian, whose libdbus-1-dev ships it) and
/// its `dbus-1.0/include`, with glibc 2.36 or newer (as the other static links in `leanLink`); nil
/// where there is none. Debug builds, and so the tests under `make test`, use the shared library.
let staticLibDBusFolder: String? = {
    #if canImport(Glibc)
        guard let (major, minor) = buildGlibcVersion(), (major, minor) >= (2, 36),
            access(libDBusHeaders + "/dbus/dbus.h", R_OK) == 0
        else { return nil }
        let folders = [
            "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/arm-linux-gnueabihf",
            "/usr/lib/riscv64-linux-gnu", "/usr/lib64", "/usr/lib",
        ]
        return folders.first {
            access($0 + "/libdbus-1.a", R_OK) == 0
                && access($0 + "/dbus-1.0/include/dbus/dbus-arch-deps.h", R_OK) == 0
        }
    #else
        return nil
    #endif
}()

/// libdbus's headers when CDBus is not found through pkg-config (see the CDBus target).
let libDBusIncludes: [String] =
    staticLibDBusFolder.map { [libDBusHeaders, $0 + "/dbus-1.0/include"] } ?? []

// How the executables are linked on Linux: fewer of their pages resident (Benchmarks/Watch/README.md,
// "Peak RSS"). No dynamic symbol table of hrm's own functions: nothing looks them up (Swift's
// static-stdlib link exports them all), and the loader no longer reads 9,300 of them. With glibc
// 2.36 or newer, lld packs the 47,000 relative relocations (DT_RELR): 9 KB for the loader to read
// instead of 1.1 MB, with PIE and its address randomisation kept. A binary built so needs glibc 2.36
// to start, hence only where the build's own glibc has it.
let leanLink: [LinkerSetting] = {
    var flags = ["-Xlinker", "--no-export-dynamic"]
    if let (major, minor) = buildGlibcVersion(), (major, minor) >= (2, 36) {
        flags = ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] + flags
    }
    var settings: [LinkerSetting] = [.unsafeFlags(flags, .when(platforms: [.linux]))]
    // In release builds libstdc++ (which only the Swift runtime uses) is linked statically, as
    // the Swift runtime itself is: the shared library's 6,000 exported symbols and its pages cost
    // 0.9 MiB at every start (Benchmarks/Watch/README.md). packaging/static-link holds a
    // `libstdc++.so` that is a linker script naming the archive, found before the real one. So is
    // libgcc (`-static-libgcc`): libgcc_s was mapped for its unwinder alone.
    if let (major, minor) = buildGlibcVersion(), (major, minor) >= (2, 36) {
        settings.append(
            .unsafeFlags(
                [
                    "-L", Context.packageDirectory + "/packaging/static-link", "-Xclang-linker",
                    "-static-libgcc",
                ],
                .when(platforms: [.linux], configuration: .release)))
    }
    // libdbus too, where the distribution ships its archive (Debian's libdbus-1-dev does): the
    // shared library loads libsystemd and six more (lz4, zstd, lzma, gcrypt, gpg-error, cap) that
    // hrm never calls, 1.0 MiB resident at every start. packaging/static-link/dbus's
    // `libdbus-1.so` names the archive; CDBusShims stubs the archive's two libsystemd functions.
    if staticLibDBusFolder != nil {
        settings.append(
            .unsafeFlags(
                ["-L", Context.packageDirectory + "/packaging/static-link/dbus"],
                .when(platforms: [.linux], configuration: .release)))
    }
    return settings
}()

// A release link that puts the functions a run executes side by side at the start of the text
// (packaging/hot-functions/NAME.order, `make hot-functions`): the kernel maps a binary's pages
// 64 KiB at a time around each one touched, so code run from all over the text makes most of it
// resident (hrm: watch 14.9 → 13.1 MiB; hrm-serve 17.5 → 11 MB of text resident; the Benchmarks'
// READMEs). Only lld reads the file; a name it no longer finds is skipped without a word.
func hotFunctionsFirst(_ name: String) -> [LinkerSetting] {
    guard let (major, minor) = buildGlibcVersion(), (major, minor) >= (2, 36) else { return [] }
    let order = Context.packageDirectory + "/packaging/hot-functions/\(name).order"
    return [
        .unsafeFlags(
            [
                "-Xlinker", "--symbol-ordering-file=\(order)", "-Xlinker", "--no-warn-symbol-ordering",
            ], .when(platforms: [.linux], configuration: .release))
    ]
}

let package = Package(
    name: "hrm",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hrm", targets: ["hrm"]),
        .executable(name: "hrm-sim", targets: ["hrm-sim"]),
        .executable(name: "hrm-serve", targets: ["hrm-serve"]),
        .library(name: "HeartRate", targets: ["HeartRate"]),
        .library(name: "HRV", targets: ["HRV"]),
        .library(name: "DBus", targets: ["DBus"]),
        // For the benchmarks' package (make bench-ecg).
        .library(name: "PolarPMD", targets: ["PolarPMD"]),
        .library(name: "ECG", targets: ["ECG"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Without its default traits: FullFoundation and ConfigurationSupport (swift-configuration)
        // would link all of Foundation and ICU into hrm-serve; hrm-serve needs neither, and
        // Hummingbird then uses FoundationEssentials, which swift-argument-parser links anyway
        // (hrm-serve: 71 -> 27 MB stripped, about 2 MiB less resident; Benchmarks/Serve/README.md).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Already there under Hummingbird; named because hrm-serve uses NIO's HTTP types directly.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        // Pure decoder for the Heart Rate Service: no Foundation, no D-Bus, no dependencies.
        .target(name: "HeartRate", swiftSettings: strict),
        // Heart-rate variability: artefact correction, time-domain metrics, DFA alpha1. Pure
        // Swift like HeartRate: no Foundation, no dependencies.
        .target(name: "HRV", swiftSettings: strict),
        // FIT activity files (Garmin's Flexible and Interoperable data Transfer) for a heart-rate
        // session: records, RR intervals, laps and the session. Pure Swift: no Foundation, no
        // dependencies.
        .target(name: "FIT", swiftSettings: strict),
        // Files hrm and hrm-sim read but did not write: regular files only, lines of bounded
        // length, a torn end of NUL bytes told and left out. Glibc only.
        .target(name: "InputFiles", swiftSettings: strict),

        // The one way to run a thread of hrm's own (named, detached, for a poll loop), the eventfd
        // that wakes it, and the monotonic clock its deadlines use: for DBus, MQTT and BlueZ's
        // notification reader. Its two C shims are what Glibc's overlay does not export.
        .target(name: "Threads", dependencies: ["CThreadShims"], swiftSettings: strict),
        // Its thread marks are read once per notification: in a section of their own, the link's
        // order puts them with the reader's code (packaging/hot-functions).
        .target(name: "CThreadShims", cSettings: cFunctionSections),

        // hrm's client of bluetoothd: adapters, discovery, devices, GATT.
        .target(
            name: "BlueZ",
            dependencies: ["DBus", "Threads", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        // A simulated bluetoothd: serves org.bluez from a scenario (see Scenarios/).
        .target(
            name: "BlueZSimulator",
            dependencies: [
                "DBus", "HeartRate", "PolarPMD", "InputFiles", "Spawn", "CInstallPrefix", "Threads",
            ],
            swiftSettings: strict),
        // The PREFIX `make release` builds for (a C define: Swift defines carry no values), where an
        // installed hrm-sim looks for its scenarios when they are not beside its bin folder.
        .target(name: "CInstallPrefix"),

        // Child processes with a clean signal mask: hrm-sim's COMMAND and dbus-daemon, watch's
        // --on-alert.
        .target(name: "Spawn", dependencies: ["Threads", "CThreadShims"], swiftSettings: strict),

        // The monitoring core, what a GUI or another program would embed: the event model and
        // its JSON form, the watch session (finding straps, supervising connections), the
        // pipeline of processors and the output contract. No command line, no terminal.
        .target(
            name: "Monitor",
            dependencies: [
                "BlueZ", "HeartRate", "HRV", "PolarPMD", "ECG", "Threads",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // The session library: recording a session (the JSON-lines file, the sessions folder),
        // reading a recording back, and exporting it (FIT, TCX, CSV).
        .target(
            name: "SessionLibrary",
            dependencies: [
                "Monitor", "BlueZ", "HeartRate", "HRV", "FIT", "InputFiles", "SQLite", "Threads", "PolarPMD",
                "ECG",
                "EDF",
            ],
            swiftSettings: strict
        ),
        // SQLite (Debian's libsqlite3) for the session library's index: the header as a module (no
        // pkgConfig: its -lsqlite3 would link the library into every hrm), C shims that load it
        // when a database is first opened, and the Swift layer on top that hides both.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CSQLiteShims", dependencies: ["CSQLite"]),
        .target(name: "SQLite", dependencies: ["CSQLite", "CSQLiteShims"], swiftSettings: strict),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"], swiftSettings: strict),

        // Open Sound Control 1.0 messages (VRChat's avatar parameters): pure Swift, no
        // dependencies.
        .target(name: "OSC", swiftSettings: strict),
        .testTarget(name: "OSCTests", dependencies: ["OSC"], swiftSettings: strict),

        // Polar's PMD (Polar Measurement Data) protocol as polar-ble-sdk defines it: features,
        // commands, responses, ECG and acceleration frames (raw and delta-compressed) and their
        // sample times. Pure Swift: no Foundation, no dependencies, no BlueZ.
        .target(name: "PolarPMD", swiftSettings: strict),
        .testTarget(name: "PolarPMDTests", dependencies: ["PolarPMD"], swiftSettings: strict),
        // R peaks found in an ECG as it streams (NeuroKit's gradient method). Pure Swift.
        .target(name: "ECG", swiftSettings: strict),
        .testTarget(
            name: "ECGTests", dependencies: ["ECG", "PolarPMD", "CheckerSupport"], swiftSettings: strict),
        // EDF+ (European Data Format) files: the header, the data records, the annotations.
        // Pure Swift: the caller writes the bytes.
        .target(name: "EDF", swiftSettings: strict),
        .testTarget(name: "EDFTests", dependencies: ["EDF", "CheckerSupport"], swiftSettings: strict),

        // The outputs that carry dependencies of their own: MQTT (libmosquitto), --on-alert's
        // child processes, hrm serve's live feed. Each is an OutputProvider of the core's contract.
        .target(
            name: "Outputs",
            dependencies: ["Monitor", "SessionLibrary", "HeartRate", "MQTT", "OSC", "Spawn", "Threads"],
            swiftSettings: strict
        ),

        // The command-line interface: commands, input parsing and rendering.
        .target(
            name: "HRMCLI",
            dependencies: [
                "Monitor", "SessionLibrary", "Outputs", "BlueZ", "HeartRate", "HRV", "FIT", "InputFiles",
                "Spawn", "EDF",
                "MQTT", "CTOMLShims",
                "Threads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The config file's TOML: toml++ (Debian's libtomlplusplus-dev, header-only) behind one C
        // function.
        .target(name: "CTOMLShims"),
        .executableTarget(
            name: "hrm", dependencies: ["HRMCLI", "Threads"], swiftSettings: strict,
            linkerSettings: leanLink + hotFunctionsFirst("hrm")),
        // `hrm serve`'s web server (Hummingbird on SwiftNIO), an executable of its own that `hrm
        // serve` runs in its place: the server's libraries stay out of `hrm watch`.
        .executableTarget(
            name: "hrm-serve",
            dependencies: [
                "HRMCLI", "Monitor", "Outputs", "Threads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: strict, linkerSettings: leanLink + hotFunctionsFirst("hrm-serve")),
        .executableTarget(
            name: "hrm-sim",
            dependencies: [
                "BlueZSimulator", "Spawn", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict, linkerSettings: leanLink),

        // libdbus-1 through pkg-config (Debian keeps dbus-arch-deps.h in an arch folder), and the
        // few C shims Swift cannot call directly; the Swift D-Bus layer on top hides both.
        // Where release builds link the archive (staticLibDBusFolder), not through pkg-config: the
        // `-L/usr/lib/<arch>` it adds would come first on the link line and find the shared
        // library before packaging/static-link/dbus's script; the headers' folders are given here.
        staticLibDBusFolder == nil
            ? .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])])
            : .systemLibrary(name: "CDBus", providers: [.apt(["libdbus-1-dev"])]),
        .target(
            name: "CDBusShims", dependencies: ["CDBus"],
            cSettings: staticLibDBusFolder == nil
                ? []
                : [
                    .unsafeFlags(libDBusIncludes.map { "-I" + $0 }),
                    .define("HRM_STATIC_LIBDBUS", .when(configuration: .release)),
                ]),
        // Logging: a caller's swift-log Logger (none by default) sees every call and its outcome.
        .target(
            name: "DBus",
            dependencies: [
                "CDBus", "CDBusShims", "Threads", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + [.unsafeFlags(libDBusIncludes.flatMap { ["-Xcc", "-I" + $0] })]),
        // D-Bus round-trip and signal-throughput benchmark (run by `make bench-dbus`).
        .executableTarget(
            name: "dbus-bench", dependencies: ["DBus"], path: "Benchmarks/DBus/dbus-bench",
            swiftSettings: strict),

        .testTarget(name: "HeartRateTests", dependencies: ["HeartRate"], swiftSettings: strict),
        .testTarget(name: "HRVTests", dependencies: ["HRV"], swiftSettings: strict),
        .testTarget(name: "FITTests", dependencies: ["FIT", "CheckerSupport"], swiftSettings: strict),
        .testTarget(name: "ThreadsTests", dependencies: ["Threads"], swiftSettings: strict),
        .testTarget(
            name: "BlueZTests", dependencies: ["BlueZ", "BlueZSimulator", "DBus"], swiftSettings: strict),
        .testTarget(
            name: "BlueZSimulatorTests",
            dependencies: ["BlueZSimulator", "HeartRate", "PolarPMD", "ECG", "Spawn"],
            swiftSettings: strict),
        .testTarget(
            name: "HRMCLITests",
            dependencies: [
                "HRMCLI", "Monitor", "SessionLibrary", "Outputs", "HeartRate", "HRV", "InputFiles",
                "PolarPMD", "BrokerSupport", "EDF", "CheckerSupport",
                "ClockSupport",
                "Threads",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "DBusTests", dependencies: ["DBus", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        // libmosquitto's header (libmosquitto-dev), C shims (its loader),
        // and the MQTT client on top that hides them: hrm publishes measurements to a broker and
        // subscribes for `team`. The library itself is loaded when the first client is made, so
        // that hrm without --mqtt does not carry it and OpenSSL.
        .systemLibrary(name: "CMosquitto"),
        .target(name: "CMosquittoShims", dependencies: ["CMosquitto"]),
        .target(
            name: "MQTT", dependencies: ["CMosquitto", "CMosquittoShims", "Threads"], swiftSettings: strict),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "BrokerSupport"], swiftSettings: strict),
        // A mosquitto broker of a test's own and mosquitto's clients as independent witnesses:
        // for the MQTT module's tests and for hrm's.
        // A clock that stands still until a test moves it, for code that takes a `Clock`: timers,
        // back-offs and deadlines tested without waiting in wall time. No Testing import, so that
        // `make release` (which builds every target) builds it too.
        .target(name: "ClockSupport", path: "Tests/ClockSupport", swiftSettings: strict),
        // An independent checker's venv and run (Python readers of FIT, ECG, EDF+), for the pure
        // libraries' test targets.
        .target(name: "CheckerSupport", path: "Tests/CheckerSupport", swiftSettings: strict),
        .target(
            name: "BrokerSupport", dependencies: ["MQTT", "Spawn"], path: "Tests/BrokerSupport",
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
