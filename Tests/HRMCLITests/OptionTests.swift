import ArgumentParser
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct OptionTests {
    @Test(arguments: [
        ("10", 10.0), ("2.5", 2.5), ("30s", 30), ("45m", 2700), ("1.5h", 5400), ("0.5", 0.5),
        ("1h30m", 5400), ("2m30s", 150), ("1h0m5s", 3605), ("1h30s", 3630),
    ])
    func secondsAccepted(text: String, seconds: Double) {
        #expect(Seconds(argument: text)?.value == seconds)
    }

    @Test(arguments: [
        "inf", "nan", "-inf", "1e308", "0", "-1", "", "s", "1.2.3", "0x10", "1e3", "10d", "٣", "8 s",
        "800000", "30m1h", "1m1m", "1hm", "h", "1h 30m", "1h-30m", "1h30", "0h0m",
    ])
    func secondsRejected(text: String) {
        #expect(Seconds(argument: text) == nil)
    }

    @Test(arguments: [
        ["watch", "--duration", "inf"], ["watch", "--duration", "nan"], ["watch", "--duration", "1e308"],
        ["watch", "--acc", "--acc-rate", "30"], ["watch", "--acc", "--acc-range", "16"],
        ["watch", "--rr-source", "ecg"], ["record", "--rr-source", "chest"], ["pair", ""], ["unpair", ""],
        ["watch", "--scan-timeout", "nan"], ["watch", "--scan-timeout", "inf"],
        ["watch", "--scan-timeout", "2h"],
        ["reset-energy", "--scan-timeout", "-1", "x"], ["reset-energy", "--scan-timeout", "0", "x"],
        ["scan", "--timeout", "-1"], ["scan", "--timeout", "3601"], ["watch", "--count", "0"],
        ["watch", "--json", "--csv"], ["watch", "--format", "csv", "--json"], ["scan", "--format", "xml"],
        ["watch", "--hrv-every", "-1"], ["watch", "--hrv-every", "nan"], ["watch", "--hrv-window", "5"],
        ["watch", "--hrv-window", "2h"], ["watch", "--max-hr", "400"], ["watch", "--max-hr", "0"],
        ["watch", "--rest-hr", "60"], ["watch", "--max-hr", "180", "--rest-hr", "190"],
        ["watch", "--max-hr", "190", "--zones", "100,120"], ["watch", "--zones", "120,100"],
        ["watch", "--zones", "100,,120"], ["watch", "--zones", "1 00"], ["watch", "--zones", ""],
        ["watch", "--zones", "1,2,3,4,5,6,7,8,9,10,11"], ["watch", "--alert-above", "300"],
        ["watch", "--alert-above", "100", "--alert-below", "120"], ["watch", "--on-alert", "true"],
        ["watch", "--alert-above", "150", "--on-alert", " "],
    ])
    func badValuesAreUsageErrors(arguments: [String]) {
        #expect(throws: (any Error).self) { try HRM.parseAsRoot(arguments) }
    }

    @Test func trainingOptions() throws {
        func watch(_ arguments: [String]) throws -> WatchArguments {
            try #require(try HRM.parseAsRoot(["watch"] + arguments) as? WatchCommand).arguments
        }
        let defaults = try watch([])
        #expect(defaults.hrv.settings == HRVTracker.Settings(every: 5, window: 60, correcting: true))
        #expect(defaults.zones.chosen == nil)
        #expect(try watch(["--hrv-every", "0"]).hrv.settings.every == nil)
        #expect(try watch(["--hrv-every", "1m", "--hrv-window", "2m"]).hrv.settings.every == 60)
        #expect(try watch(["--no-correction"]).hrv.settings.correcting == false)
        #expect(try watch(["--max-hr", "200"]).zones.chosen?.lowerBounds == [100, 120, 140, 160, 180])
        #expect(try watch(["--zones", "100, 130,150"]).zones.chosen?.lowerBounds == [100, 130, 150])
        #expect(try watch(["--max-hr", "190", "--rest-hr", "50"]).zones.chosen?.lowerBounds.first == 120)
    }

    @Test func formatAndItsShortForms() throws {
        func format(_ arguments: [String]) throws -> OutputFormat {
            try #require(try HRM.parseAsRoot(["watch"] + arguments) as? WatchCommand).arguments.output.chosen
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
        #expect(watch.arguments.limits.duration?.duration == .seconds(2700))
        #expect(watch.arguments.search.chosenScanTimeout.value == 10)
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
