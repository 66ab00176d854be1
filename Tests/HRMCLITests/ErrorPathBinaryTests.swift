import Foundation
import Testing

/// What a person sees when the machine is not ready: said plainly, once, with what to do.
@Suite struct ErrorPathBinaryTests {
    /// No system bus at all (no dbus-daemon): `no_system_bus`, the address once, a hint; 69.
    @Test(arguments: [["watch"], ["watch", "--json"], ["scan", "--timeout", "1"], ["watch", "--csv"]])
    func noSystemBus(arguments: [String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-bus-\(UUID().uuidString)")
        let address = "unix:path=\(directory.path)/system_bus_socket"
        let result = try await HRMProcess.run(arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        #expect(result.status == 69)
        #expect(
            result.stderr.contains("the system D-Bus is not running: nothing answers at \(address)"),
            "\(result.stderr)")
        #expect(
            result.stderr.components(separatedBy: directory.path).count == 2,
            "the address once: \(result.stderr)")
        #expect(result.stderr.contains("hint: start it with: sudo systemctl start dbus"))
        if arguments.contains("--json") {
            #expect(result.stdout.contains(#""code":"no_system_bus""#))
        } else {
            #expect(result.stdout.isEmpty, "no CSV header before a fatal error: \(result.stdout)")
        }
    }

    /// The remembered strap is not around: hrm says so as it takes the strongest one; `hrm forget`
    /// makes it stop remembering.
    @Test func aRememberedStrapThatIsNotAround() async throws {
        let state = WatchBinaryTests.temporary("state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state + "/hrm", withIntermediateDirectories: true)
        try "D2:4B:7E:10:20:30\n".write(toFile: state + "/hrm/last-device", atomically: true, encoding: .utf8)
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "two-straps", [],
            shell: """
                export XDG_STATE_HOME='\(state)'
                '\(hrm)' watch --json --count 1
                '\(hrm)' forget
                test ! -e '\(state)/hrm/last-device' && echo gone
                '\(hrm)' forget
                """)
        #expect(result.status == 0, "\(result.stderr)")
        let details = WatchBinaryTests.lines(result.stdout).compactMap { $0["detail"] as? String }
        #expect(
            details.contains {
                $0.contains("the last strap watched, D2:4B:7E:10:20:30, is not around")
                    && $0.contains("C0:FF:EE:00:00:01") && $0.contains("hrm forget")
            }, "\(details)")
        // watch remembered the strap it took; forget removes that.
        #expect(
            result.stdout.contains("forgot C0:FF:EE:00:00:01\ngone\nhrm remembers no device\n"),
            "\(result.stdout)")
    }
}
