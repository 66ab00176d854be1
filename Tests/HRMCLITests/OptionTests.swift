import ArgumentParser
import Testing

@testable import HRMCLI

@Suite struct OptionTests {
    @Test(arguments: [
        ("10", 10.0), ("2.5", 2.5), ("30s", 30), ("45m", 2700), ("1.5h", 5400), ("0.5", 0.5),
    ])
    func secondsAccepted(text: String, seconds: Double) {
        #expect(Seconds(argument: text)?.value == seconds)
    }

    @Test(arguments: [
        "inf", "nan", "-inf", "1e308", "0", "-1", "", "s", "1.2.3", "0x10", "1e3", "10d", "٣", "8 s",
        "800000",
    ])
    func secondsRejected(text: String) {
        #expect(Seconds(argument: text) == nil)
    }

    @Test(arguments: [
        ["watch", "--duration", "inf"], ["watch", "--duration", "nan"], ["watch", "--duration", "1e308"],
        ["watch", "--scan-timeout", "nan"], ["watch", "--scan-timeout", "inf"],
        ["watch", "--scan-timeout", "2h"],
        ["reset-energy", "--scan-timeout", "-1", "x"], ["reset-energy", "--scan-timeout", "0", "x"],
        ["scan", "--timeout", "-1"], ["scan", "--timeout", "3601"], ["watch", "--count", "0"],
        ["watch", "--json", "--csv"], ["watch", "--format", "csv", "--json"], ["scan", "--format", "xml"],
    ])
    func badValuesAreUsageErrors(arguments: [String]) {
        #expect(throws: (any Error).self) { try HRM.parseAsRoot(arguments) }
    }

    @Test func formatAndItsShortForms() throws {
        func format(_ arguments: [String]) throws -> OutputFormat {
            try #require(try HRM.parseAsRoot(["watch"] + arguments) as? WatchCommand).output.chosen
        }
        #expect(try format([]) == .text)
        #expect(try format(["--json"]) == .json)
        #expect(try format(["--format", "json"]) == .json)
        #expect(try format(["--csv"]) == .csv)
        #expect(try format(["--format", "csv", "--csv"]) == .csv, "the same choice twice is no conflict")
        let scan = try #require(
            try HRM.parseAsRoot(["scan", "--format", "csv", "--timeout", "30s"]) as? ScanCommand)
        #expect(scan.output.chosen == .csv)
        #expect(scan.timeout.value == 30)
    }

    /// `Failure.hint` suggests --power-on for a powered-off adapter: every command that talks to
    /// Bluetooth must have it.
    @Test(arguments: [["scan"], ["watch"], ["reset-energy", "x"]])
    func everyBluetoothCommandHasTheOptionsItsHintsName(command: [String]) throws {
        #expect(Failure.hint(.init(.adapterPoweredOff, ""))?.contains("--power-on") == true)
        _ = try HRM.parseAsRoot(command + ["--power-on", "--adapter", "hci0"])
    }

    @Test func durationsBecomeDurations() throws {
        let watch = try #require(try HRM.parseAsRoot(["watch", "--duration", "45m"]) as? WatchCommand)
        #expect(watch.limits.duration?.duration == .seconds(2700))
        #expect(watch.search.scanTimeout.value == 10)
    }
}

@Suite struct WatchLimitMessageTests {
    /// A negative value is the option's (not "Missing value"), and the message says what is
    /// allowed.
    @Test(arguments: [
        (["watch", "--count", "-1"], "--count must be at least 1"),
        (["watch", "--duration", "-5"], "give a number of seconds above 0"),
        (["watch", "--duration", "inf"], "give a number of seconds above 0"),
    ])
    func negativeLimitsGetTheRealMessage(arguments: [String], expected: String) {
        do {
            _ = try HRM.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            let text = HRM.message(for: error)
            #expect(text.contains(expected), "\(text)")
            #expect(!text.contains("Missing value"), "\(text)")
        }
    }
}
