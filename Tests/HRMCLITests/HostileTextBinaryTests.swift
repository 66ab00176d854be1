import Foundation
import Testing

/// Issue #10, terminal injection: any advertiser chooses its name (and a strap its maker and
/// model, bluetoothd its messages), so nothing from outside may reach a terminal raw. Text output
/// escapes it and caps its length; JSON carries it exactly.
@Suite struct HostileTextBinaryTests {
    /// The name as the scenario gives it: a window title change, a bell, a forged line.
    static let evilName = "Evil\u{1B}]0;pwned\u{07}\nFAKE LINE"
    static let evilShown = #"Evil\e]0;pwned\a\nFAKE LINE"#

    /// A strap with an evil name, maker and model whose first Connect() fails with an evil
    /// message, and a monitor whose name is 100 000 characters long.
    static func withScenario(_ body: (String) async throws -> Void) async throws {
        let scenario = WatchBinaryTests.temporary("evil.json")
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let devices: [[String: Any]] = [
            [
                "address": "D2:4B:7E:10:20:30", "name": evilName, "rssi": -50, "uuids": ["180d"],
                "deviceInformation": ["manufacturer": "Maker\u{1B}[2J\r", "model": "\u{202E}ledom"],
                "connectFailures": [
                    ["error": "org.bluez.Error.Failed", "message": "abort\u{1B}[31m\nFAKE: connected"]
                ],
                "heartRate": ["interval": 0.2],
            ],
            [
                "address": "C0:FF:EE:00:00:01", "name": String(repeating: "L", count: 100_000), "rssi": -60,
                "uuids": ["180d"],
            ],
        ]
        try JSONSerialization.data(withJSONObject: ["devices": devices]).write(
            to: URL(fileURLWithPath: scenario))
        try await body(scenario)
    }

    /// No byte of a terminal control from outside: ESC, BEL, CR, C1, the bidi override.
    static func expectNoControls(_ text: String, allowing allowed: Set<Unicode.Scalar> = ["\n"]) {
        let raw = text.unicodeScalars.filter {
            !allowed.contains($0) && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}")
        }
        #expect(raw.isEmpty, "raw controls: \(raw.map { String($0.value, radix: 16) })")
    }

    @Test func scanIntoAPipeEscapesNamesAndCapsThem() async throws {
        try await Self.withScenario { scenario in
            let result = try await HRMProcess.runUnderSim(scenario, ["scan", "--timeout", "1.5"])
            #expect(result.status == 0, "\(result.stderr)")
            Self.expectNoControls(result.stdout)
            try #require(result.stdoutLines.count == 2, "one line per device, none forged: \(result.stdout)")
            #expect(result.stdout.contains("D2:4B:7E:10:20:30   -50 dBm  \(Self.evilShown)\n"))
            #expect(
                result.stdout.contains(
                    "C0:FF:EE:00:00:01   -60 dBm  " + String(repeating: "L", count: 64) + "…\n"))
            #expect(result.stdout.utf8.count < 300, "a 100 KB name does not flood the screen")
        }
    }

    /// JSON (and CSV) stay exact: the name as it was advertised, escaped by their own rules.
    @Test func scanJSONCarriesTheExactName() async throws {
        try await Self.withScenario { scenario in
            let result = try await HRMProcess.runUnderSim(scenario, ["scan", "--json", "--timeout", "1.5"])
            #expect(result.status == 0, "\(result.stderr)")
            let names = WatchBinaryTests.lines(result.stdout).compactMap { $0["name"] as? String }
            #expect(Set(names) == [Self.evilName, String(repeating: "L", count: 100_000)])
            #expect(result.stdout.contains(#""name":"Evil\u001b]0;pwned\u0007\nFAKE LINE""#))
        }
    }

    /// The live table on a terminal (a pty from `script`): hrm's own cursor movements, and the
    /// names escaped.
    @Test func scanLiveTableEscapesNames() async throws {
        try await Self.withScenario { scenario in
            let hrm = HRMProcess.binary.path
            let result = try await HRMProcess.runUnderSim(
                scenario, [], shell: "script -qec '\(hrm) scan --timeout 1.5' /dev/null")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(Self.evilShown))
            #expect(!result.stdout.contains("\u{1B}]"), "no OSC (window title) sequence")
            #expect(!result.stdout.contains("\u{07}"), "no bell")
            #expect(!result.stdout.contains("\nFAKE LINE"), "no forged line")
            #expect(!result.stdout.contains(String(repeating: "L", count: 65)))
            // What remains of ESC is hrm's own: clear line, cursor up.
            let sequences = result.stdout.components(separatedBy: "\u{1B}").dropFirst().map { $0.prefix(6) }
            #expect(
                sequences.allSatisfy { $0.range(of: #"^\[(2K|\d+A)"#, options: .regularExpression) != nil },
                "\(sequences)")
        }
    }

    /// `watch` into a pipe: the info line (name, maker, model) and the status detail carrying
    /// bluetoothd's error message are escaped; every line is one of hrm's.
    @Test func watchTextEscapesInfoAndStatusDetails() async throws {
        try await Self.withScenario { scenario in
            let result = try await HRMProcess.runUnderSim(
                scenario, ["watch", "--count", "2", "--scan-timeout", "5", "D2:4B:7E:10:20:30"])
            #expect(result.status == 0, "\(result.stderr)")
            Self.expectNoControls(result.stdout)
            Self.expectNoControls(result.stderr)
            for line in result.stdoutLines {
                #expect(
                    line.range(of: #"^\d\d:\d\d:\d\d  "#, options: .regularExpression) != nil,
                    "forged: \(line)")
            }
            #expect(
                result.stdout.contains(#"Failed: abort\e[31m\nFAKE: connected; retrying in"#)
            )
            #expect(
                result.stdout.contains(
                    #"\#(Self.evilShown) (D2:4B:7E:10:20:30): worn on the chest, battery 90 %, Maker\e[2J\r \u{202E}ledom"#
                ))
        }
    }

    /// `watch --json` keeps the exact name, maker and model.
    @Test func watchJSONKeepsTheExactInfo() async throws {
        try await Self.withScenario { scenario in
            // Stopped once the info line is out, not after one measurement: on a loaded machine the
            // first measurement can come before the strap's characteristics have all been read,
            // and a stop then ends the reading.
            let result = try await HRMProcess.runUnderSim(
                scenario, ["watch", "--json", "--scan-timeout", "5", "D2:4B:7E:10:20:30"],
                terminateWhen: { $0.contains(#""type":"info""#) })
            #expect(result.status == 0, "\(result.stderr)")
            let info = try #require(
                WatchBinaryTests.lines(result.stdout).first { $0["type"] as? String == "info" })
            #expect(info["name"] as? String == Self.evilName)
            #expect(info["manufacturer"] as? String == "Maker\u{1B}[2J\r")
            #expect(info["model"] as? String == "\u{202E}ledom")
        }
    }

    /// Diagnostics on stderr: the message of a failure (Failure.report) and an error event's
    /// (through StdoutSink) carry the user's text, escaped.
    @Test func stderrMessagesAreEscaped() async throws {
        let scan = try await HRMProcess.runUnderSim(
            "two-straps", ["scan", "--timeout", "1", "--adapter", "hci\u{1B}[2J7"])
        #expect(scan.status == 69)
        Self.expectNoControls(scan.stderr)
        #expect(scan.stderr.contains(#"hci\e[2J7"#), "\(scan.stderr)")
        let watch = try await HRMProcess.runUnderSim(
            "basic", ["watch", "--scan-timeout", "1", "Gar\u{1B}]0;x\u{07}min"])
        #expect(watch.status == 1)
        Self.expectNoControls(watch.stderr)
        #expect(watch.stderr.contains(#"no 'Gar\e]0;x\amin' found"#), "\(watch.stderr)")
    }

    /// `decode`'s echo of input that is not hex: escaped, and only around the bad column.
    @Test func decodeEchoesBadInputEscapedAndWindowed() async throws {
        let escaped = try await HRMProcess.run(["decode", "06\u{1B}]0;pwned\u{07}"])
        #expect(escaped.status == 64)
        Self.expectNoControls(escaped.stderr)
        #expect(escaped.stderr.contains("  06\\e]0;pwned\\a\n    ^"), "\(escaped.stderr)")

        // 60 kB of hex (just under the 64 KiB a line may have) with a bad character near the
        // end: the echo was the whole line and as many spaces again before the caret.
        let line = String(repeating: "ab", count: 30_000) + "zz" + String(repeating: "cd", count: 100)
        let result = try await HRMProcess.run(["decode"], stdin: line + "\n")
        #expect(result.status == 64)
        #expect(result.stderr.contains("line 1 is not valid hex: 'z' is not a hex digit at column 60001"))
        #expect(result.stderr.utf8.count < 400, "\(result.stderr.utf8.count) bytes on stderr")
        let echo = result.stderr.split(separator: "\n").suffix(2).map(String.init)
        try #require(echo.count == 2)
        #expect(
            echo[0] == "  …" + String(repeating: "ab", count: 20) + "zz" + String(repeating: "cd", count: 19)
                + "c…")
        #expect(echo[1] == String(repeating: " ", count: 2 + 41) + "^")
    }
}
