import HeartRate
import Testing

@testable import HRMCLI

@Suite struct WatchRenderingTests {
    let address = "D2:4B:7E:10:20:30"

    func measurement(_ bytes: [UInt8], at ms: Int64) throws -> MonitorEvent {
        MonitorEvent(
            time: Timestamp(millisecondsSinceEpoch: ms), device: address,
            kind: .measurement(try HeartRateMeasurement(decoding: bytes)))
    }

    @Test func csvHasAHeaderAndMeasurementsOnly() throws {
        var renderer = CSVRenderer()
        #expect(renderer.header == "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone\n")
        #expect(
            renderer.render(try measurement([0x16, 0x48, 0x4D, 0x03], at: 0))?.hasPrefix(
                "1970-01-01T00:00:00.000Z,D2:4B") == true)
        #expect(renderer.render(MonitorEvent(device: address, kind: .battery(percent: 5))) == nil)
    }

    @Test func textLines() throws {
        var renderer = TextLinesRenderer()
        let event = try measurement([0x16, 0x48, 0x4D, 0x03], at: 0)
        let line = renderer.render(event) ?? ""
        #expect(line.hasSuffix("  72 bpm  contact detected  RR 825.1953125 ms\n"))
        let info = MonitorEvent(
            device: address,
            kind: .info(name: "Polar H10", location: .chest, battery: 87, manufacturer: "Polar", model: "H10")
        )
        #expect(
            renderer.render(info)?.hasSuffix(
                "Polar H10 (D2:4B:7E:10:20:30): worn on the chest, battery 87 %, Polar H10\n") == true)
        #expect(
            renderer.render(MonitorEvent(device: nil, kind: .error(code: "x", message: "y", hex: nil))) == nil
        )
    }

    @Test func liveLineIsRedrawnInPlace() throws {
        var renderer = LiveRenderer(colour: false)
        let event = try measurement([0x16, 0x48, 0x4D, 0x03], at: 0)
        let first = renderer.render(event) ?? ""
        #expect(first.hasPrefix("\r\u{1B}[2K♥ 72 bpm  contact ✓  RR 825 ms"))
        #expect(!first.contains("\n"), "the live line stays on one line")
        let status =
            renderer.render(MonitorEvent(device: nil, kind: .status(.reconnecting, detail: "in 0.5 s"))) ?? ""
        #expect(status.hasPrefix("\r\u{1B}[2K-- reconnecting: in 0.5 s\n"))
        #expect(renderer.finish() == nil, "no live line after a drop")
        _ = renderer.render(try measurement([0x06, 0x50], at: 1000))
        #expect(renderer.finish() == "\n")
    }

    @Test func colourOnlyWhenAsked() throws {
        var plain = LiveRenderer(colour: false)
        var coloured = LiveRenderer(colour: true)
        let event = try measurement([0x06, 0x48], at: 0)
        #expect(plain.render(event)?.contains("\u{1B}[1;31m") == false)
        #expect(coloured.render(event)?.contains("\u{1B}[1;31m") == true)
    }
}
