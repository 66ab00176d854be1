import Foundation
import Testing

/// A strap sending bad frames does not flood the terminal (#26 item 1): stderr says each kind
/// once with the first frame's detail, then how many more came, before the final status; the
/// live line counts them; JSON still has every one.
@Suite struct MalformedFloodTests {
    @Test func eachKindSaidOnceThenCounted() async throws {
        let result = try await HRMProcess.runUnderSim("malformed", ["watch", "--count", "12"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let first = lines.filter { $0.hasPrefix("hrm watch: ") && !$0.contains("(repeated ") }
        let counted = lines.filter { $0.contains("(repeated ") }
        // Three kinds (a truncated energy, an odd RR length, an empty frame), each said once.
        #expect(first.count == 3, "\(lines)")
        #expect(
            first.contains {
                $0.hasPrefix("hrm watch: truncated energy expended") && $0.hasSuffix("(0e4801)")
            })
        #expect(counted.count == 3, "\(lines)")
        // The counts add up to what the final status says was skipped.
        let repeats = counted.compactMap { line -> Int? in
            guard let range = line.range(of: "(repeated ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        let skipped = try #require(
            result.stdout.split(separator: "\n").last.flatMap { line -> Int? in
                guard let range = line.range(of: "measurements, ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }, "\(result.stdout)")
        #expect(repeats.reduce(0, +) + first.count == skipped, "\(repeats) + 3 against \(skipped)")
    }

    @Test func jsonKeepsEveryMalformedFrame() async throws {
        let result = try await HRMProcess.runUnderSim("malformed", ["watch", "--json", "--count", "12"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let errors = events.filter { $0["type"] as? String == "error" && $0["hex"] != nil }
        let stopped = try #require(events.last?["detail"] as? String)
        #expect(stopped.contains("\(errors.count) malformed notifications skipped"), "\(stopped)")
        #expect(errors.count > 3)
    }

    @Test func theLiveLineCountsThem() async throws {
        guard
            let text = try await TerminalBinaryTests.onTerminal(
                "--count 8", term: "xterm", scenario: "malformed")
        else { return }
        #expect(text.contains(" bad frames"), "\(text.suffix(300).debugDescription)")
        #expect(text.components(separatedBy: "hrm watch: truncated energy").count - 1 >= 1)
    }
}
