import BlueZSimulator
import Foundation
import Testing

@Suite struct ScenarioTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func basicScenarioDecodes() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Scenarios/basic.json"))
        let scenario = try JSONDecoder().decode(Scenario.self, from: data)
        #expect(scenario.adapters.map(\.name) == ["hci0"])
        #expect(scenario.gattCache == .always)
        let strap = try #require(scenario.devices.first)
        #expect(strap.name == "Polar H10 7E102030")
        #expect(strap.location == 1)
        #expect(strap.battery == 87)
        #expect(strap.heartRate.mode == .realistic)
        #expect(strap.heartRate.rr)
    }

    @Test func defaultsAndExplicitNulls() throws {
        let json = #"{"devices":[{"address":"AA:BB:CC:DD:EE:FF","location":null,"battery":null}]}"#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        #expect(scenario.adapters == [Scenario.Adapter()])
        let device = try #require(scenario.devices.first)
        #expect(device.location == nil, "null means: no Body Sensor Location characteristic")
        #expect(device.battery == nil)
        #expect(device.uuids == ["180d"])
        #expect(device.heartRate.interval == 1)

        let defaults = try JSONDecoder().decode(
            Scenario.self, from: Data(#"{"devices":[{"address":"AA:BB:CC:DD:EE:FF"}]}"#.utf8))
        #expect(defaults.devices.first?.location == 1)
        #expect(defaults.devices.first?.battery == 90)
    }

    @Test func missingAddressIsAnError() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Scenario.self, from: Data(#"{"devices":[{"name":"x"}]}"#.utf8))
        }
    }
}
