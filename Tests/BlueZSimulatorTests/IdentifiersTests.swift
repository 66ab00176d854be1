import Testing

@testable import BlueZSimulator

/// The simulator's own identifiers against BlueZ's textual forms, written out as literals (as
/// bluetoothd 5.66 sends them), not through the client's types.
@Suite struct IdentifiersTests {
    @Test(arguments: ["D2:4B:7E:10:20:30", "d2:4b:7e:10:20:30", "D2_4B_7E_10_20_30", "d2-4B-7e-10-20-30"])
    func addressForms(text: String) throws {
        let address = try #require(SimulatedAddress(text))
        #expect(address.description == "D2:4B:7E:10:20:30")
        #expect(address.pathComponent == "dev_D2_4B_7E_10_20_30")
        #expect(address.dashed == "D2-4B-7E-10-20-30")
        #expect(address.octets == [0xD2, 0x4B, 0x7E, 0x10, 0x20, 0x30])
    }

    @Test func addressesCompareByValue() throws {
        #expect(SimulatedAddress("aa:bb:cc:dd:ee:ff") == SimulatedAddress("AA:BB:CC:DD:EE:FF"))
        #expect(SimulatedAddress("AA:BB:CC:DD:EE:FF") != SimulatedAddress("AA:BB:CC:DD:EE:FE"))
        let zero = try #require(SimulatedAddress("00:00:00:00:00:00"))
        #expect(zero.pathComponent == "dev_00_00_00_00_00_00")
    }

    @Test(arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:FG", "AA:BB:CC:DD:EE:F",
        "AA:BB:CC:DD:EE:FFF", "AA:BB-CC:DD:EE:FF", "AA BB CC DD EE FF", "AABBCCDDEEFF", "AA::BB:CC:DD:EE",
        "+A:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF ", "dev_AA_BB_CC_DD_EE_FF", "ＡA:BB:CC:DD:EE:FF",
    ])
    func invalidAddresses(text: String) {
        #expect(SimulatedAddress(text) == nil)
    }

    @Test func assignedNumbersExpandToTheBaseUUID() {
        #expect(SimulatedUUID(0x180D).description == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(SimulatedUUID(0x2A37).description == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(SimulatedUUID(0x0001).description == "00000001-0000-1000-8000-00805f9b34fb")
        #expect(SimulatedUUID(0xFFFF).description == "0000ffff-0000-1000-8000-00805f9b34fb")
    }

    @Test(arguments: [
        ("180d", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("180D", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0x180D", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0000180d", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("1234ABCD", "1234abcd-0000-1000-8000-00805f9b34fb"),
        ("0000180D-0000-1000-8000-00805F9B34FB", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
        ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
    ])
    func uuidForms(text: String, expected: String) throws {
        let uuid = try #require(SimulatedUUID(text))
        #expect(uuid.description == expected)
    }

    @Test(arguments: [
        "", "18d", "180d0", "18x0", "+18d", "0x", "0x18", "180d-",
        "0000180d-0000-1000-8000-00805f9b34f", "0000180d-0000-1000-8000-00805f9b34fbb",
        "0000180d00000-1000-8000-00805f9b34fb", "0000180d-0000-1000-8000_00805f9b34fb",
        "0000180g-0000-1000-8000-00805f9b34fb", "{0000180d-0000-1000-8000-00805f9b34fb}",
    ])
    func invalidUUIDs(text: String) {
        #expect(SimulatedUUID(text) == nil)
    }

    @Test func uuidsAreEqualWhateverTheirSpelling() {
        #expect(SimulatedUUID("180d") == SimulatedUUID(0x180D))
        #expect(SimulatedUUID("0000180D-0000-1000-8000-00805F9B34FB") == SimulatedUUID(0x180D))
        #expect(SimulatedUUID("180f") != SimulatedUUID(0x180D))
    }

    @Test func uuidsSortAsNumbers() throws {
        let texts = ["ffff", "180d", "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "1800", "0a00"]
        let sorted = try texts.map { try #require(SimulatedUUID($0)) }.sorted().map(\.description)
        #expect(
            sorted == [
                "00000a00-0000-1000-8000-00805f9b34fb", "00001800-0000-1000-8000-00805f9b34fb",
                "0000180d-0000-1000-8000-00805f9b34fb", "0000ffff-0000-1000-8000-00805f9b34fb",
                "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
            ])
    }
}
