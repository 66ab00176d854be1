import ArgumentParser
import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Issue #10, messages that mislead: `--count -1` said "Missing value for '--count <count>'"
/// (only `--count=-1` got the real message) and `--duration inf` that the value was invalid
/// without saying why.
@Suite struct OptionMessageTests {
    /// The message argument-parser prints for `arguments`, which must not parse.
    static func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try HRM.parseAsRoot(arguments)
            return nil
        } catch {
            return HRM.message(for: error)
        }
    }

    @Test(arguments: [
        ["scan", "--timeout", "-1"], ["scan", "--timeout", "-0.5"], ["scan", "--timeout", "inf"],
        ["watch", "--scan-timeout", "-1"], ["reset-energy", "--scan-timeout", "-5", "x"],
        ["reset-energy", "x", "--scan-timeout", "nan"],
    ])
    func aTimeThatIsNotOneSaysWhatIsAccepted(arguments: [String]) throws {
        let message = try #require(Self.usageMessage(arguments))
        #expect(!message.contains("Missing value"), "\(message)")
        #expect(
            message.contains("is invalid for '\(arguments[arguments.firstIndex { $0.hasPrefix("--") } ?? 0])")
        )
        #expect(
            message.contains("above 0 (10, 2.5), or with units (30s, 45m, 2h, 1h30m), at most a week"),
            "\(message)"
        )
    }

    @Test func aTimeAboveAWeekSaysSo() throws {
        let message = try #require(Self.usageMessage(["scan", "--timeout", "800000"]))
        #expect(message.contains("at most a week"), "\(message)")
    }

    /// The limits of `watch`, as an option group (WatchCommand uses it as `limits`).
    @Test(arguments: [
        (["--count", "-1"], "--count must be at least 1"), (["--count", "0"], "--count must be at least 1"),
        (["--count=-1"], "--count must be at least 1"),
        (["--duration", "-5"], "above 0 (10, 2.5), or with units (30s, 45m, 2h, 1h30m), at most a week"),
        (["--duration", "inf"], "above 0 (10, 2.5), or with units (30s, 45m, 2h, 1h30m), at most a week"),
    ])
    func limitsSayWhatIsWrong(arguments: [String], expected: String) throws {
        #expect(throws: (any Error).self) { try LimitOptions.parse(arguments) }
        do {
            _ = try LimitOptions.parse(arguments)
        } catch {
            let message = LimitOptions.message(for: error)
            #expect(message.contains(expected), "\(message)")
            #expect(!message.contains("Missing value"), "\(message)")
        }
    }

    @Test func limitsParse() throws {
        let limits = try LimitOptions.parse(["--count", "3", "--duration", "45m"])
        #expect(limits.runLimits.count == 3)
        #expect(limits.runLimits.duration?.duration == .seconds(2700))
        #expect(try LimitOptions.parse([]).runLimits.count == nil)
    }

    @Test func timesStillParse() throws {
        let scan = try #require(try HRM.parseAsRoot(["scan", "--timeout", "2m"]) as? ScanCommand)
        #expect(scan.timeout.value == 120)
        let reset = try #require(
            try HRM.parseAsRoot(["reset-energy", "--scan-timeout", "1.5", "x"]) as? ResetEnergyCommand)
        #expect(reset.search.scanTimeout?.value == 1.5)
        #expect(Seconds(argument: "30s")?.value == 30)
        #expect(throws: ValidationError.self) { try Seconds.parsing("-1") }
    }

    /// As the user sees it: the rule, not "Missing value".
    @Test func binaryTellsWhyATimeIsRefused() async throws {
        let result = try await HRMProcess.run(["scan", "--timeout", "-1"])
        #expect(result.status == 64)
        #expect(
            result.stderr.contains(
                "The value '-1' is invalid for '--timeout <timeout>': give a number of seconds above 0 (10, 2.5), or with units (30s, 45m, 2h, 1h30m), at most a week"
            ), "\(result.stderr)")
    }
}
