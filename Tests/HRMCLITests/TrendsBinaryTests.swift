import Foundation
import Testing

/// `hrm trends`, the built binary over a sessions folder of synthetic recordings on several days
/// before today (UTC): its figures checked against the RR intervals the test wrote (RMSSD by the
/// formula, here), against SQLite's own shell reading the index, and its weeks against
/// Foundation's ISO 8601 calendar.
@Suite struct TrendsBinaryTests {
    typealias Library = SessionLibraryBinaryTests.Library

    static let strap = "D2:4B:7E:10:20:30"
    static let other = "D2:4B:7E:10:20:99"

    /// One synthetic session: `daysAgo` (its start at 06:00 UTC that day, plus `offset` hours),
    /// its length, heart rate and how much its RR intervals vary.
    struct Planned {
        var daysAgo: Int
        var seconds: Int
        var bpm: Int
        var step: Int
        var offset = 0
        var device = TrendsBinaryTests.strap
        var name = "Test H10"
    }

    static let plan = [
        Planned(daysAgo: 0, seconds: 360, bpm: 58, step: 5),
        Planned(daysAgo: 1, seconds: 360, bpm: 62, step: 9),
        Planned(daysAgo: 2, seconds: 360, bpm: 60, step: 4),
        // 40 s: an RMSSD, but too short for alpha1 (50 beats) and a resting heart rate (5 min).
        Planned(daysAgo: 2, seconds: 40, bpm: 70, step: 40, offset: 3),
        Planned(daysAgo: 5, seconds: 420, bpm: 64, step: 6),
        Planned(daysAgo: 12, seconds: 360, bpm: 66, step: 3),
        Planned(daysAgo: 40, seconds: 360, bpm: 50, step: 8),
        // Another strap, recorded less: not the one shown unless --device picks it.
        Planned(daysAgo: 1, seconds: 120, bpm: 90, step: 2, offset: 5, device: other, name: "Other Strap"),
    ]

    /// Today's start, UTC.
    static var today: Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
    }

    /// The RR intervals of a planned session, in 1/1024 s, a beat a second.
    static func rr(_ session: Planned) -> [Int] {
        (1...session.seconds).map { second in
            61440 / (session.bpm + second % 5) + (second % 3) * session.step
        }
    }

    /// RMSSD (ms) by its definition: the root mean square of successive differences.
    static func rmssd(_ rr1024: [Int]) -> Double {
        let milliseconds = rr1024.map { Double($0) * 1000 / 1024 }
        let squares = zip(milliseconds, milliseconds.dropFirst()).map { ($1 - $0) * ($1 - $0) }
        return (squares.reduce(0, +) / Double(squares.count)).squareRoot()
    }

    static func recording(_ session: Planned, start: Date) -> String {
        func time(_ seconds: Double) -> String {
            SessionLibraryBinaryTests.iso(start.addingTimeInterval(seconds))
        }
        let device = session.device
        var lines = [
            #"{"type":"recording","format":1,"hrm":"0.1.0","start":"\#(time(0))","command":"record"}"#,
            #"{"type":"status","time":"\#(time(0.2))","mono_ms":200,"device":"\#(device)","state":"connected"}"#,
            #"{"type":"info","time":"\#(time(0.3))","mono_ms":300,"device":"\#(device)","name":"\#(session.name)"}"#,
        ]
        for (index, rr) in rr(session).enumerated() {
            let second = index + 1
            let rate = session.bpm + second % 5
            let hex = String(format: "16%02x%02x%02x", rate, rr & 0xff, rr >> 8)
            lines.append(
                #"{"type":"measurement","time":"\#(time(Double(second)))","mono_ms":\#(second * 1000),"device":"\#(device)","bpm":\#(rate),"contact":"detected","energy_kj":null,"rr_1024":[\#(rr)],"rr_ms":[\#(Double(rr) * 1000 / 1024)],"format":"uint8","zone":2,"hex":"\#(hex)"}"#
            )
        }
        let end = Double(session.seconds) + 0.5
        lines.append(
            #"{"type":"status","time":"\#(time(end))","mono_ms":\#(Int(end * 1000)),"device":"\#(device)","state":"stopped"}"#
        )
        return lines.joined(separator: "\n") + "\n"
    }

    static func start(_ session: Planned, today: Date) -> Date {
        today.addingTimeInterval(Double(-session.daysAgo) * 86_400 + Double(6 + session.offset) * 3600)
    }

    /// A library with every planned session written.
    static func library(today: Date) throws -> Library {
        let library = try Library()
        for session in plan {
            let start = start(session, today: today)
            let name = SessionLibraryBinaryTests.fileName(start, device: session.device)
            try recording(session, start: start).write(
                to: library.sessions.appendingPathComponent(name), atomically: false, encoding: .utf8)
        }
        return library
    }

    static func day(_ date: Date) -> String { String(SessionLibraryBinaryTests.iso(date).prefix(10)) }

    static func number(_ value: Any?) -> Double? {
        switch value {
        case let value as Int: Double(value)
        case let value as Double: value
        case let value as NSNumber: value.doubleValue
        default: nil
        }
    }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    static func trends(_ library: Library, _ arguments: [String]) async throws -> HRMProcess.Result {
        try await HRMProcess.run(["trends"] + arguments, environment: library.environment)
    }

    // MARK: Per day

    /// Each day's figures: RMSSD the mean of the RMSSD of the RR intervals written, ln RMSSD the
    /// mean of their logs, resting heart rate and alpha1 as SQLite's shell reads them from the
    /// index, zones and time summed; a day without a session all nulls.
    @Test func dailyFiguresAreTheRecordingsOwn() async throws {
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let result = try await Self.trends(library, ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        // Brought up to date as hrm sessions does, and the strap recorded longest named.
        #expect(result.stderr.contains("hrm trends: indexing 8 recordings"), "\(result.stderr)")
        #expect(
            result.stderr.contains("hrm trends: D2:4B:7E:10:20:30 \"Test H10\", the strap recorded longest"),
            "\(result.stderr)")
        let objects = WatchBinaryTests.lines(result.stdout)
        try #require(objects.count == 30, "\(result.stdout)")
        #expect(objects.last?["period"] as? String == Self.day(today))
        #expect(objects.first?["period"] as? String == Self.day(today.addingTimeInterval(-29 * 86_400)))
        // No artefacts: the RR intervals written are the ones measured.
        #expect(try await library.sqlite("SELECT sum(artefacts) FROM straps;") == "0\n")
        for daysAgo in 0..<30 {
            let object = objects[29 - daysAgo]
            let date = Self.day(today.addingTimeInterval(Double(-daysAgo) * 86_400))
            #expect(object["type"] as? String == "trend")
            #expect(object["period"] as? String == date)
            #expect(object["device"] as? String == Self.strap)
            let sessions = Self.plan.filter { $0.daysAgo == daysAgo && $0.device == Self.strap }
            #expect(Self.number(object["sessions"]) == Double(sessions.count), "\(date)")
            guard !sessions.isEmpty else {
                for key in ["resting_bpm", "rmssd_ms", "ln_rmssd", "alpha1", "zone2_min"] {
                    #expect(object[key] is NSNull, "\(date) \(key): \(object[key] ?? "missing")")
                }
                #expect(Self.number(object["recorded_min"]) == 0)
                continue
            }
            let rmssds = sessions.map { Self.rmssd(Self.rr($0)) }
            let rmssd = try #require(Self.mean(rmssds))
            let lnRMSSD = try #require(Self.mean(rmssds.map { log($0) }))
            #expect(abs((Self.number(object["rmssd_ms"]) ?? -1) - rmssd) <= 0.0051, "\(date) \(object)")
            #expect(abs((Self.number(object["ln_rmssd"]) ?? -1) - lnRMSSD) <= 0.00051, "\(date) \(object)")
            // Resting: the lowest 5-minute mean of bpm + second % 5 is bpm + 2, of 5 minutes or more.
            let resting = sessions.filter { $0.seconds >= 300 }.map { Double($0.bpm + 2) }.min()
            #expect(Self.number(object["resting_bpm"]) == resting, "\(date) \(object)")
            // SQLite's shell, reading the index: the day's row of its days view.
            let row = try await library.sqlite(
                "SELECT resting_bpm, round(alpha1, 3), round(sum_minutes, 1) FROM (SELECT d.resting_bpm, d.alpha1, "
                    + "(SELECT sum(z.seconds) / 60.0 FROM zones z JOIN files f ON f.name = z.file "
                    + "JOIN straps s ON s.file = z.file AND s.position = z.position "
                    + "WHERE s.address = d.address AND date(f.start_ms / 1000, 'unixepoch') = d.day AND z.zone = 2) "
                    + "AS sum_minutes FROM days d WHERE d.day = '\(date)' AND d.address = '\(Self.strap)');")
            let fields = row.dropLast().split(separator: "|", omittingEmptySubsequences: false).map(
                String.init)
            try #require(fields.count == 3, "\(row)")
            #expect(Self.number(object["resting_bpm"]) == Double(fields[0]), "\(date) \(row)")
            #expect(Self.number(object["alpha1"]) == Double(fields[1]), "\(date) \(row) \(object)")
            #expect(Self.number(object["zone2_min"]) == Double(fields[2]), "\(date) \(row) \(object)")
            #expect(Self.number(object["zone3_min"]) == 0)
            let connected = try await library.sqlite(
                "SELECT round(connected_s / 60.0, 1) FROM days WHERE day = '\(date)' AND address = '\(Self.strap)';"
            )
            #expect(
                Self.number(object["recorded_min"]) == Double(connected.dropLast()), "\(date) \(connected)")
            // Each recording's own connected time: from 'connected' (0.2 s) to 'stopped'.
            let expected = sessions.map { Double($0.seconds) + 0.3 }.reduce(0, +) / 60
            #expect(abs((Self.number(object["recorded_min"]) ?? -1) - expected) <= 0.051, "\(date)")
        }
        // The short session has no alpha1: the day's is the other session's alone.
        let twoDaysAgo = objects[27]
        let alone = try await library.sqlite(
            "SELECT round(s.alpha1, 3) FROM straps s JOIN files f ON f.name = s.file "
                + "WHERE s.address = '\(Self.strap)' AND f.duration_s > 300 "
                + "AND date(f.start_ms / 1000, 'unixepoch') = '\(Self.day(today.addingTimeInterval(-2 * 86_400)))';"
        )
        #expect(Self.number(twoDaysAgo["alpha1"]) == Double(alone.dropLast()), "\(alone) \(twoDaysAgo)")
        #expect(!(twoDaysAgo["alpha1"] is NSNull))

        // A second run reads the index alone: nothing to index, nothing said but the strap.
        let again = try await Self.trends(library, ["--json"])
        #expect(again.stdout == result.stdout)
        #expect(!again.stderr.contains("indexing"), "\(again.stderr)")
    }

    // MARK: Per week

    /// ISO weeks (Monday to Sunday, UTC) as Foundation's calendar numbers them, a week at the
    /// start holding only the days within --days, its figures the means of its days'.
    @Test func weeksAreISOWeeks() async throws {
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let days = 20
        let result = try await Self.trends(library, ["--json", "--by", "week", "--days", String(days)])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = WatchBinaryTests.lines(result.stdout)

        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        var weeks: [(label: String, daysAgo: [Int])] = []
        for daysAgo in (0..<days).reversed() {
            let date = today.addingTimeInterval(Double(-daysAgo) * 86_400)
            let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
            let label = String(format: "%04d-W%02d", parts.yearForWeekOfYear ?? 0, parts.weekOfYear ?? 0)
            if weeks.last?.label == label {
                weeks[weeks.count - 1].daysAgo.append(daysAgo)
            } else {
                weeks.append((label, [daysAgo]))
            }
        }
        #expect(objects.map { $0["period"] as? String ?? "" } == weeks.map(\.label), "\(result.stdout)")
        try #require(objects.count == weeks.count)
        for (object, week) in zip(objects, weeks) {
            #expect(Self.number(object["days"]) == Double(week.daysAgo.count), "\(week.label)")
            #expect(
                object["start"] as? String
                    == Self.day(today.addingTimeInterval(Double(-(week.daysAgo.first ?? 0)) * 86_400)))
            let sessions = Self.plan.filter { week.daysAgo.contains($0.daysAgo) && $0.device == Self.strap }
            #expect(Self.number(object["sessions"]) == Double(sessions.count), "\(week.label)")
            // Each day's RMSSD, then the week's mean of them.
            let daily = week.daysAgo.compactMap { daysAgo in
                Self.mean(sessions.filter { $0.daysAgo == daysAgo }.map { Self.rmssd(Self.rr($0)) })
            }
            let restings = week.daysAgo.compactMap { daysAgo in
                sessions.filter { $0.daysAgo == daysAgo && $0.seconds >= 300 }.map { Double($0.bpm + 2) }
                    .min()
            }
            if let rmssd = Self.mean(daily) {
                #expect(
                    abs((Self.number(object["rmssd_ms"]) ?? -1) - rmssd) <= 0.0051, "\(week.label) \(object)")
            } else {
                #expect(object["rmssd_ms"] is NSNull, "\(week.label)")
            }
            if let resting = Self.mean(restings) {
                #expect(abs((Self.number(object["resting_bpm"]) ?? -1) - resting) <= 0.051, "\(week.label)")
            } else {
                #expect(object["resting_bpm"] is NSNull, "\(week.label)")
            }
            let minutes = sessions.map { Double($0.seconds) + 0.3 }.reduce(0, +) / 60
            #expect(abs((Self.number(object["recorded_min"]) ?? -1) - minutes) <= 0.051, "\(week.label)")
        }
    }

    // MARK: CSV, the terminal, straps and an empty library

    @Test func csvHasAHeaderAndARowPerPeriod() async throws {
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let csv = try await Self.trends(library, ["--csv", "--days", "7"])
        let json = try await Self.trends(library, ["--json", "--days", "7"])
        #expect(csv.status == 0, "\(csv.stderr)")
        try #require(csv.stdoutLines.count == 8, "\(csv.stdout)")
        #expect(
            csv.stdoutLines[0]
                == "period,start,days,device,sessions,recorded_min,resting_bpm,rmssd_ms,ln_rmssd,alpha1,"
                + "zone0_min,zone1_min,zone2_min,zone3_min,zone4_min,zone5_min")
        let header = csv.stdoutLines[0].split(separator: ",").map(String.init)
        for (line, object) in zip(csv.stdoutLines.dropFirst(), WatchBinaryTests.lines(json.stdout)) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            try #require(fields.count == header.count, "\(line)")
            for (key, field) in zip(header, fields) {
                switch object[key] {
                case is NSNull: #expect(field.isEmpty, "\(key) \(line)")
                case let text as String: #expect(field == text, "\(key) \(line)")
                default: #expect(Double(field) == Self.number(object[key]), "\(key) \(line) \(object)")
                }
            }
        }
        // Three days ago: no session, empty fields but the counts.
        #expect(csv.stdoutLines[4].hasSuffix(",\(Self.strap),0,0,,,,,,,,,,"), "\(csv.stdoutLines[4])")
    }

    /// On a terminal (script(1)'s pseudo-terminal): a row per figure, a block per day, a gap mark
    /// for days without a session, the latest value and the range.
    @Test func aTerminalGetsAChart() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return
        }
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let result = try await HRMProcess.run(
            ["-qefc", "stty cols 100; '\(HRMProcess.binary.path)' trends --days 7", "/dev/null"],
            executable: URL(fileURLWithPath: "/usr/bin/script"),
            environment: library.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.components(separatedBy: "\r\n")
        #expect(
            lines.contains {
                $0.hasSuffix("D2:4B:7E:10:20:30 \"Test H10\": 7 days to \(Self.day(today)), 5 sessions")
            },
            "\(result.stdout.debugDescription)")
        // Seven days, oldest first: sessions 5, 2, 1 and 0 days ago; 6, 4 and 3 days ago none.
        func row(_ name: String) -> String? { lines.first { $0.hasPrefix(name + " ") } }
        let resting = try #require(row("resting HR"), "\(result.stdout.debugDescription)")
        // Resting heart rate (bpm + 2): 66 five days ago, 62 two, 64 one, 60 today; on a scale
        // of 60 to 66 in 8 steps: levels 7, 2.3, 4.7 and 0.
        #expect(resting.contains("·█··▃▆▁  latest 60.0 bpm  range 60.0-66.0"), "\(resting)")
        let recorded = try #require(row("recorded"))
        // 7.005, 6.677 (6 min and 40 s), 6.005 and 6.005 minutes: levels 7, 4.7, 0 and 0.
        #expect(recorded.contains("·█··▆▁▁  latest 6 min  range 6-7"), "\(recorded)")
        #expect(row("RMSSD")?.contains("latest") == true)
        #expect(row("ln RMSSD")?.contains("latest") == true)
        #expect(row("alpha1")?.contains("latest") == true)
        #expect(row("zone 2")?.contains("latest 6 min") == true)
        // Zones no session reached have no row.
        #expect(row("zone 3") == nil)
    }

    /// Through a pipe the chart is the same text at 80 columns: by week a block a week, and a
    /// year by day folded into blocks of several days, each row within the 80 (the first line
    /// names the strap, whatever its length).
    @Test func weeksAndAYearAsText() async throws {
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let weeks = try await Self.trends(library, ["--by", "week", "--days", "20"])
        #expect(weeks.status == 0, "\(weeks.stderr)")
        let json = WatchBinaryTests.lines(
            try await Self.trends(library, ["--by", "week", "--days", "20", "--json"]).stdout)
        #expect(
            weeks.stdoutLines.first
                == "D2:4B:7E:10:20:30 \"Test H10\": \(json.count) weeks to \(Self.day(today)), 6 sessions",
            "\(weeks.stdout)")
        let resting = try #require(weeks.stdoutLines.first { $0.hasPrefix("resting HR ") })
        // A block (or a gap mark) per week, between the name and the latest value.
        let blocks = resting.dropFirst("resting HR  ".count).prefix { $0 != " " }
        #expect(blocks.count == json.count, "\(resting)")
        #expect(blocks.allSatisfy { "▁▂▃▄▅▆▇█·".contains($0) }, "\(resting)")
        let one = try await Self.trends(library, ["--days", "1"])
        #expect(
            one.stdoutLines.first?.hasSuffix(": 1 day to \(Self.day(today)), 1 session") == true,
            "\(one.stdout)")
        let year = try await Self.trends(library, ["--days", "365"])
        #expect(year.status == 0, "\(year.stderr)")
        #expect(
            year.stdoutLines.first?.contains("365 days to \(Self.day(today)), 7 sessions (a block is ")
                == true, "\(year.stdout)")
        #expect(year.stdoutLines.dropFirst().allSatisfy { $0.count <= 80 }, "\(year.stdout)")
        #expect(year.stdoutLines.count == 7, "\(year.stdout)")
    }

    @Test func deviceChoosesAStrap() async throws {
        let today = Self.today
        let library = try Self.library(today: today)
        defer { library.remove() }
        let other = try await Self.trends(library, ["--json", "--days", "3", "--device", "other"])
        #expect(other.status == 0, "\(other.stderr)")
        let objects = WatchBinaryTests.lines(other.stdout)
        #expect(objects.map { $0["device"] as? String } == Array(repeating: Self.other, count: 3))
        #expect(objects.map { Self.number($0["sessions"]) } == [0, 1, 0])
        #expect(!other.stderr.contains("recorded longest"), "\(other.stderr)")
        // A strap without a session in the period: said, nothing printed.
        let quiet = try await Self.trends(library, ["--days", "1", "--device", "other"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stdout.isEmpty)
        #expect(
            quiet.stderr
                == "hrm trends: no sessions of D2:4B:7E:10:20:99 \"Other Strap\" today\n",
            "\(quiet.stderr)")
        let none = try await Self.trends(library, ["--device", "AA:BB:CC:DD:EE:FF"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("matches no strap of the library"), "\(none.stderr)")
        #expect(none.stdout.isEmpty)
    }

    @Test func anEmptyLibrarySaysSo() async throws {
        let library = try Library()
        defer { library.remove() }
        let result = try await Self.trends(library, [])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "hrm trends: no recordings in \(library.sessions.path) yet (hrm record makes them)\n",
            "\(result.stderr)")
        // A session, but none in the period.
        let old = Planned(daysAgo: 40, seconds: 60, bpm: 60, step: 3)
        let start = Self.start(old, today: Self.today)
        try Self.recording(old, start: start).write(
            to: library.sessions.appendingPathComponent(
                SessionLibraryBinaryTests.fileName(start, device: old.device)),
            atomically: false, encoding: .utf8)
        let none = try await Self.trends(library, ["--json"])
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty)
        #expect(
            none.stderr.hasSuffix(
                "hrm trends: no sessions in the last 30 days in \(library.sessions.path)\n"),
            "\(none.stderr)")
        let bad = try await Self.trends(library, ["--by", "month"])
        #expect(bad.status == 64)
    }
}
