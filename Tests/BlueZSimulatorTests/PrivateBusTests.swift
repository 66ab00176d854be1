import BlueZSimulator
import DBus
import Foundation
import Spawn
import Testing

@Suite struct PrivateBusTests {
    /// `dbus-send` (an independent client) reaches the private bus, and the policy is in force.
    private func dbusSend(_ address: String, _ arguments: [String]) throws -> (Int32, String) {
        // Output goes to a file, not a pipe: a daemon started by a test running in parallel may
        // inherit a pipe's write end and keep it open, so reading a pipe to its end could hang.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent(
            "dbus-send-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
        process.arguments = ["--bus=\(address)", "--print-reply", "--reply-timeout=5000"] + arguments
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: log, encoding: .utf8))
    }

    @Test func startsAnswersAndStops() throws {
        let bus = try PrivateBus()
        #expect(bus.address.hasPrefix("unix:path="))
        let (status, output) = try dbusSend(
            bus.address,
            ["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"])
        #expect(status == 0)
        #expect(output.contains("org.freedesktop.DBus"))
        bus.stop()
        #expect(!bus.isRunning)
        bus.stop()
    }

    @Test(.timeLimit(.minutes(1))) func denyPolicyRefusesCallsToBlueZ() async throws {
        let bus = try PrivateBus(policy: .denyBlueZ)
        defer { bus.stop() }
        try await withClient(on: bus) { client in
            // Watched before the owner starts, so its NameOwnerChanged cannot be missed.
            let owners = try await client.signals(
                matching: MatchRule(
                    sender: .bus, interface: .bus, member: "NameOwnerChanged", arg0: "org.bluez"))
            // An independent service owns org.bluez (python3-dbus), so the bus has somewhere to route.
            let owner = try ChildProcess(
                executable: "/usr/bin/python3",
                arguments: [
                    "-c",
                    "import dbus,time,sys; b=dbus.bus.BusConnection(sys.argv[1]); b.request_name('org.bluez'); print('owned', flush=True); time.sleep(30)",
                    bus.address,
                ])
            defer { owner.terminate() }
            // python3 can take seconds to start while the rest of the suite loads both cores.
            let owned = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await message in owners.map(\.element) {
                        if message.body.count == 3, case .string(let newOwner) = message.body[2],
                            !newOwner.isEmpty
                        {
                            return true
                        }
                    }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(15))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            try #require(owned, "the python3-dbus owner of org.bluez did not start within 15 s")
            let (status, output) = try dbusSend(
                bus.address,
                ["--dest=org.bluez", "/", "org.freedesktop.DBus.ObjectManager.GetManagedObjects"])
            #expect(status != 0)
            #expect(output.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(output)")
        }
    }
}
