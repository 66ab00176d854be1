import Foundation
import Testing

/// `hrm-sim --list` is a line per scenario that fits a terminal; the whole story is `--describe
/// NAME`'s (#26 item 13).
@Suite struct SimulatorListTests {
    static let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")

    @Test func aLineEachThenTheWholeDescription() async throws {
        let list = try await HRMProcess.run(["--list"], executable: Self.sim)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count >= 19, "\(lines)")
        for line in lines { #expect(line.count <= 100, "too long for a terminal: \(line)") }
        let climb = try #require(lines.first { $0.hasPrefix("climb ") })
        #expect(climb.hasSuffix("A workout through the zones"), "\(climb)")

        let described = try await HRMProcess.run(["--describe", "climb"], executable: Self.sim)
        #expect(described.status == 0, "\(described.stderr)")
        #expect(described.stdout.hasPrefix("A workout through the zones: one strap whose heart rate climbs"))
        #expect(described.stdout.count > climb.count)

        let unknown = try await HRMProcess.run(["--describe", "nope"], executable: Self.sim)
        #expect(unknown.status == 66)
        #expect(unknown.stderr.contains("no scenario named 'nope'"), "\(unknown.stderr)")
    }
}
