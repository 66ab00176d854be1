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
}
