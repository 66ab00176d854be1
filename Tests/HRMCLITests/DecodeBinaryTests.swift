import Foundation
import Testing

/// `hrm decode` run as a built binary: what people and scripts actually see.
@Suite struct DecodeBinaryTests {
    @Test func jsonLineMatchesTheContract() async throws {
        let result = try await HRMProcess.run(["decode", "--json", "16484d03"])
        #expect(result.status == 0)
        #expect(
            result.stdoutLines == [
                #"{"type":"measurement","bpm":72,"contact":"detected","energy_kj":null,"rr_1024":[845],"rr_ms":[825.1953125],"format":"uint8","flags":22}"#
            ])
        #expect(result.stderr.isEmpty)
    }

    @Test func malformedPayloadGivesAnErrorLineAndTheRunGoesOn() async throws {
        let result = try await HRMProcess.run(["decode", "--json", "0e4801", "072c01"])
        #expect(result.status == 65)
        try #require(result.stdoutLines.count == 2)
        #expect(
            result.stdoutLines[0].hasPrefix(
                #"{"type":"error","code":"truncated_energy","offset":2,"message":"#))
        #expect(result.stdoutLines[0].hasSuffix(#","hex":"0e4801"}"#))
        #expect(result.stdoutLines[1].contains(#""bpm":300"#))
    }

    @Test func textModeReportsFailuresOnStderr() async throws {
        let result = try await HRMProcess.run(["decode", "06:96", ""])
        #expect(result.status == 65)
        #expect(result.stdoutLines == ["150 bpm  contact detected  [uint8, flags 0x06]"])
        #expect(result.stderr.contains("empty_frame"))
    }

    @Test func badHexIsAUsageErrorThatShowsWhere() async throws {
        let result = try await HRMProcess.run(["decode", "0648", "06 4g"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty, "nothing is decoded when an argument is not hex")
        #expect(result.stderr.contains("payload 2 is not valid hex: 'g' is not a hex digit at column 5"))
        #expect(result.stderr.contains("  06 4g\n      ^"))
    }

    @Test func standardInputOnePayloadPerLine() async throws {
        let input = "# capture\n16484d03\n\n0x07,0x2c,0x01\n0e 48 01\n"
        let result = try await HRMProcess.run(["decode", "--json"], stdin: input)
        #expect(result.status == 65)
        try #require(result.stdoutLines.count == 3)
        #expect(result.stdoutLines[1].contains(#""bpm":300,"contact":"detected""#))
        #expect(result.stdoutLines[2].contains(#""code":"truncated_energy""#))
    }

    @Test func otherCharacteristics() async throws {
        let location = try await HRMProcess.run(["decode", "--json", "--characteristic", "2a38", "01", "09"])
        #expect(location.status == 0)
        #expect(
            location.stdoutLines == [
                #"{"type":"location","location":"chest","value":1}"#,
                #"{"type":"location","location":"reserved(9)","value":9}"#,
            ])
        let battery = try await HRMProcess.run(["decode", "-c", "2a19", "55", "65"])
        #expect(battery.status == 65)
        #expect(battery.stdoutLines == ["battery: 85 %"])
        #expect(battery.stderr.contains("invalid_battery_level"))
    }

    @Test func unknownCharacteristicExitsWithUsageStatus() async throws {
        let result = try await HRMProcess.run(["decode", "-c", "2a99", "00"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("2a37"))
    }

    @Test func helpTeaches() async throws {
        let result = try await HRMProcess.run(["decode", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("0x06,0x48"))
        #expect(result.stdout.contains("Exit status"))
    }

    @Test func largeInputStreams() async throws {
        let input = String(repeating: "16484d03\n", count: 20_000)
        let result = try await HRMProcess.run(["decode", "--json"], stdin: input)
        #expect(result.status == 0)
        #expect(result.stdoutLines.count == 20_000)
    }
}
