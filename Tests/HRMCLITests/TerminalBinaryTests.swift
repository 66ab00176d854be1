import Foundation
import Testing

/// `hrm watch` on a real pseudo-terminal (util-linux `script`): TERM=dumb gets plain lines,
/// `--color never` and NO_COLOR no colour, and warnings never land on the live line.
@Suite struct TerminalBinaryTests {
    /// hrm under hrm-sim on a pty, TERM and NO_COLOR as given; what the terminal received.
    static func onTerminal(
        _ arguments: String, term: String, noColor: Bool = false, scenario: String = "basic"
    )
        async throws -> String?
    {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return nil
        }
        let hrm = HRMProcess.binary.path
        let environment = "TERM=\(term) " + (noColor ? "NO_COLOR=1" : "NO_COLOR=")
        let result = try await HRMProcess.runUnderSim(
            scenario, [],
            shell: "\(environment) /usr/bin/script -qefc \"'\(hrm)' watch \(arguments)\" /dev/null")
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func dumbTerminalsGetLinesWithoutEscapes() async throws {
        guard let text = try await Self.onTerminal("--count 3", term: "dumb") else { return }
        #expect(!text.contains("\u{1B}"), "\(text.debugDescription)")
        #expect(text.contains("72 bpm") || text.contains(" bpm  contact"))
    }

    @Test func colourAsAsked() async throws {
        guard let auto = try await Self.onTerminal("--count 2", term: "xterm") else { return }
        #expect(auto.contains("\u{1B}[2K"), "a live line")
        #expect(auto.contains("\u{1B}[1;31m"), "the BPM in colour")
        guard let never = try await Self.onTerminal("--count 2 --color never", term: "xterm") else { return }
        #expect(never.contains("\u{1B}[2K") && !never.contains("\u{1B}[1;31m"))
        guard let noColor = try await Self.onTerminal("--count 2", term: "xterm", noColor: true) else {
            return
        }
        #expect(!noColor.contains("\u{1B}[1;31m"))
        guard let always = try await Self.onTerminal("--count 2 --color always", term: "xterm", noColor: true)
        else { return }
        #expect(always.contains("\u{1B}[1;31m"))
    }

    /// The malformed scenario's warnings come on lines of their own: the live line is cleared
    /// before each and drawn again after it, never continued by one.
    @Test func warningsClearTheLiveLineFirst() async throws {
        guard let text = try await Self.onTerminal("--count 8", term: "xterm", scenario: "malformed") else {
            return
        }
        let warnings = text.components(separatedBy: "hrm watch: ")
        #expect(warnings.count > 2, "\(text.debugDescription)")
        for before in warnings.dropLast() {
            // What comes just before each warning ends with a cleared line (or a newline).
            #expect(
                before.hasSuffix("\r\u{1B}[2K") || before.hasSuffix("\n") || before.hasSuffix("\r\n")
                    || before.isEmpty,
                "\(before.suffix(40).debugDescription)")
        }
    }
}
