import Testing

@testable import BlueZSimulator

@Suite struct GATTLayoutTests {
    /// The lab's strap has the same services as the real one in shared/realbluez, so its object
    /// paths must be exactly those in transcripts/probe.txt.
    @Test func labLayoutMatchesTheRealTranscript() throws {
        let scenario = try ScenarioCatalog.load("lab")
        let device = try #require(scenario.devices.first)
        let layout = try GATTLayout(devicePath: "/org/bluez/hci0/dev_00_AA_01_01_00_01", device: device)
        let paths = layout.services.flatMap { service in
            [service.path] + service.characteristics.flatMap { [$0.path] + ($0.ccc.map { [$0.path] } ?? []) }
        }.map { String($0.rawValue.dropFirst("/org/bluez/hci0/dev_00_AA_01_01_00_01/".count)) }
        #expect(
            paths == [
                "service0008", "service0008/char0009", "service0008/char0009/desc000b",
                "service0008/char000c",
                "service0008/char000e", "service0008/char0010",
                "service0012", "service0012/char0013",
                "service0015", "service0015/char0016", "service0015/char0016/desc0018",
                "service0015/char0019",
                "service0015/char001b",
                "service001d", "service001d/char001e", "service001d/char001e/desc0020",
            ])
        let flags = layout.characteristics.map {
            "\($0.uuid):\($0.flags.joined(separator: ","))"
        }
        #expect(flags.contains("00002a37-0000-1000-8000-00805f9b34fb:notify"))
        #expect(flags.contains("00002a38-0000-1000-8000-00805f9b34fb:read"))
        #expect(flags.contains("00002a39-0000-1000-8000-00805f9b34fb:write"))
        #expect(flags.contains("00002a19-0000-1000-8000-00805f9b34fb:read,notify"))
    }

    @Test func optionalCharacteristicsFollowTheScenario() throws {
        var device = Scenario.Device(address: "AA:BB:CC:DD:EE:FF")
        device.location = nil
        device.battery = nil
        let layout = try GATTLayout(devicePath: "/d", device: device)
        #expect(!layout.characteristics.contains { $0.role == .bodySensorLocation })
        #expect(!layout.services.contains { $0.uuid == SimulatedUUID(0x180F) })
        #expect(layout.characteristics.contains { $0.role == .measurement })
    }
}
