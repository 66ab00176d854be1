import CheckerSupport
import FIT
import Foundation
import Testing

/// The encoder's files against independent readers (Garmin's FIT SDK and fitdecode from PyPI)
/// through Tests/FITCheck/fit_check.py, in a venv at `.build/fit-venv` that `.ci/run` prepares, or
/// the first of these tests when it is missing. Without it (no network, no python3-venv) the tests
/// say SKIPPED and why, and record a known issue: never a silent pass.
@Suite struct FITIndependentTests {
    /// The checker and its venv.
    static let checker = IndependentChecker(
        venv: "fit", modules: ["garmin_fit_sdk", "fitdecode"], packages: ["garmin-fit-sdk", "fitdecode"],
        script: "Tests/FITCheck/fit_check.py")

    /// nil when the venv is ready, else why not: made (or found wanting) once per test process.
    static let venv = Task { await checker.prepare() }

    /// What fit_check.py compares the readers' findings with (see its docstring).
    static func expectations(_ activity: FITActivity) -> [String: Any] {
        let toUnix = { (milliseconds: Int64) in
            Int(FITTime.timestamp(unixMilliseconds: milliseconds)) + 631_065_600
        }
        let null: Any = NSNull()
        return [
            "records": activity.samples.count,
            "heart_rates": activity.samples.map { Int($0.heartRate) },
            "record_times": activity.samples.map { toUnix($0.time) },
            // As documented: not finite or negative skipped, above 65.534 s clamped.
            "rr_ms": activity.rrSeconds.compactMap { rr -> Int? in
                rr.isFinite && rr >= 0 ? min(Int((rr * 1000).rounded()), 65_534) : nil
            },
            "avg_heart_rate": activity.averageHeartRate.map { Int($0) as Any } ?? null,
            "max_heart_rate": activity.maximumHeartRate.map { Int($0) as Any } ?? null,
            "total_timer_time": Double(activity.timerMilliseconds) / 1000,
            "total_elapsed_time": Double(activity.elapsedMilliseconds) / 1000,
            "start_time": toUnix(activity.start),
            "end_time": toUnix(activity.end),
            "sport": activity.sport.name,
            "timer_starts": activity.segments.count,
            "timer_stops": activity.segments.count,
            "serial_number": activity.serialNumber.map { Int($0) as Any } ?? null,
        ]
    }

    /// Encodes `activity`, writes it and its expectations to a temporary folder, and runs the
    /// readers on it; prints what they report.
    func check(_ activity: FITActivity, _ name: String) async throws {
        if let reason = await Self.venv.value {
            print("SKIPPED: FIT independent check (\(name)) because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("independent FIT check (\(name)) not run") }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fit-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("\(name).fit")
        let expected = directory.appendingPathComponent("\(name).json")
        try Data(FITEncoder.encode(activity)).write(to: file)
        try JSONSerialization.data(withJSONObject: Self.expectations(activity), options: [.sortedKeys]).write(
            to: expected)

        let result = try await Self.checker.check([file.path, "--expect-json", expected.path])
        for line in result.output.split(separator: "\n")
        where line.contains("FAIL") || line.contains("SKIPPED") || line.hasPrefix("fit-check: PASS (") {
            print("\(name): \(line)")
        }
        if result.status == 2 {
            print("SKIPPED: FIT independent check (\(name)) because the readers cannot be imported")
            withKnownIssue("SKIPPED: \(result.output)") {
                Issue.record("independent FIT check (\(name)) not run")
            }
            return
        }
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("fit-check: PASS ("))
    }

    /// 20 minutes of running with a 45 s drop in the middle: two segments, every record and beat.
    @Test(.timeLimit(.minutes(15))) func sessionWithDrop() async throws {
        try await check(TestSessions.session(connected: 1200, dropAfter: 600, dropSeconds: 45), "drop")
    }

    /// Three hours at 1 Hz with a drop after 90 minutes: 10,800 records, about 21,600 beats.
    @Test(.timeLimit(.minutes(15))) func threeHours() async throws {
        try await check(TestSessions.session(connected: 3 * 3600, dropAfter: 5400), "three-hours")
    }

    /// RR intervals that cannot be written as they are: a 70 s one (written as 65.534 s, which the
    /// readers must take as a value, not as padding), and NaN, infinity and a negative one
    /// (skipped); sport walking, no serial number, no heart-rate summary.
    @Test(.timeLimit(.minutes(15))) func unwritableIntervals() async throws {
        var activity = TestSessions.session(connected: 30, sport: .walking, serialNumber: nil)
        activity.rrSeconds.insert(contentsOf: [70, .nan, 65.534, -0.2, .infinity, 0.8], at: 10)
        activity.averageHeartRate = nil
        activity.maximumHeartRate = nil
        try await check(activity, "unwritable-rr")
    }

    /// No samples, no beats, no segments, no heart rates, no serial number: still read cleanly.
    @Test(.timeLimit(.minutes(15))) func emptySession() async throws {
        try await check(FITActivity(start: TestSessions.start, sport: .training), "empty")
    }
}
