import Foundation
import Testing

/// `hrm sessions` from the session library's index ($XDG_DATA_HOME/hrm/library.sqlite3), the
/// built binary as a user runs it: the index made, kept up to date by a scan of the folder, made
/// again when damaged or old, bypassed when it cannot be used, and read back by SQLite's own
/// shell (`sqlite3`) as an independent witness.
@Suite struct SessionLibraryBinaryTests {
    /// A data folder with `hrm/sessions/` in it.
    struct Library {
        let data: URL
        var sessions: URL { data.appendingPathComponent("hrm/sessions") }
        var index: String { data.appendingPathComponent("hrm/library.sqlite3").path }
        var environment: [String: String] { ["XDG_DATA_HOME": data.path] }

        init() throws {
            data = try RecordingBinaryTests.folder()
            try FileManager.default.createDirectory(at: sessions, withIntermediateDirectories: true)
        }

        /// Writes a recording named by its start, and returns its name.
        @discardableResult
        func add(
            start: Date, minutes: Int, device: String = "D2:4B:7E:10:20:30", name: String = "Test H10",
            bpm: Int = 60
        ) throws -> String {
            let file = SessionLibraryBinaryTests.fileName(start, device: device)
            try SessionLibraryBinaryTests.recording(
                start: start, minutes: minutes, device: device, name: name, bpm: bpm
            )
            .write(to: sessions.appendingPathComponent(file), atomically: false, encoding: .utf8)
            return file
        }

        func sessions(_ arguments: [String] = []) async throws -> HRMProcess.Result {
            try await HRMProcess.run(["sessions"] + arguments, environment: environment)
        }

        /// `sqlite3 INDEX SQL`: SQLite's shell, not hrm, reads the index.
        func sqlite(_ sql: String) async throws -> String {
            let result = try await HRMProcess.run(
                [index, sql], executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }

        func remove() { try? FileManager.default.removeItem(at: data) }
    }

    /// `2026-01-05T08:00:00.250Z`: a formatter per call (it is not Sendable).
    static func iso(_ date: Date) -> String {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.string(from: date)
    }

    static func fileName(_ start: Date, device: String) -> String {
        let stamp = ISO8601DateFormatter().string(from: start).replacingOccurrences(of: ":", with: "-")
        return stamp + "_" + device.replacingOccurrences(of: ":", with: "-") + ".jsonl"
    }

    /// A recording of `minutes` at 1 Hz, a beat a second with RR intervals that vary (so HRV has
    /// something to measure), as hrm record writes it.
    static func recording(start: Date, minutes: Int, device: String, name: String, bpm: Int) -> String {
        func time(_ seconds: Double) -> String { iso(start.addingTimeInterval(seconds)) }
        var lines = [
            #"{"type":"recording","format":1,"hrm":"0.1.0","start":"\#(time(0))","command":"record"}"#,
            #"{"type":"status","time":"\#(time(0.2))","mono_ms":200,"device":"\#(device)","state":"connected"}"#,
            #"{"type":"info","time":"\#(time(0.3))","mono_ms":300,"device":"\#(device)","name":"\#(name.replacingOccurrences(of: "\"", with: "\\\""))"}"#,
        ]
        for second in 1...(minutes * 60) {
            let rate = bpm + second % 5
            let rr = 61440 / rate + (second % 3) * 7
            let hex = String(format: "16%02x%02x%02x", rate, rr & 0xff, rr >> 8)
            lines.append(
                #"{"type":"measurement","time":"\#(time(Double(second)))","mono_ms":\#(second * 1000),"device":"\#(device)","bpm":\#(rate),"contact":"detected","energy_kj":null,"rr_1024":[\#(rr)],"rr_ms":[\#(Double(rr) * 1000 / 1024)],"format":"uint8","zone":2,"hex":"\#(hex)"}"#
            )
        }
        let end = Double(minutes * 60) + 0.5
        lines.append(
            #"{"type":"status","time":"\#(time(end))","mono_ms":\#(Int(end * 1000)),"device":"\#(device)","state":"stopped"}"#
        )
        return lines.joined(separator: "\n") + "\n"
    }

    static let day: TimeInterval = 86_400
    static let base = Date(timeIntervalSince1970: 1_767_600_000)  // 2026-01-05T08:00:00Z

    // MARK: The index made and kept up to date

    @Test func theFirstRunMakesTheIndexAndLaterRunsReadIt() async throws {
        let library = try Library()
        defer { library.remove() }
        for offset in 0..<3 {
            try library.add(start: Self.base.addingTimeInterval(Double(offset) * Self.day), minutes: 2)
        }
        let first = try await library.sessions()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("indexing 3 recordings"), "\(first.stderr)")
        #expect(first.stdoutLines.count == 3)
        #expect(
            first.stdoutLines.first?.hasPrefix(
                "2026-01-07 08:00 UTC  2:01  D2:4B:7E:10:20:30 Test H10  avg 62 max 64 bpm  ") == true)
        // SQLite's own shell: a sound WAL database of this hrm's version, a row per file and strap.
        #expect(
            try await library.sqlite("PRAGMA integrity_check; PRAGMA journal_mode; PRAGMA user_version;")
                == "ok\nwal\n2\n")
        #expect(
            try await library.sqlite(
                "SELECT count(*), sum(measurements) FROM files WHERE status = 'session';") == "3|360\n")
        #expect(
            try await library.sqlite("SELECT DISTINCT address, name, measurements FROM straps;")
                == "D2:4B:7E:10:20:30|Test H10|120\n")
        #expect(try await library.sqlite("SELECT count(*) FROM days;") == "3\n")
        // Read from the index: the same lines, and nothing said.
        let second = try await library.sessions()
        #expect(second.stdout == first.stdout)
        #expect(second.stderr.isEmpty, "\(second.stderr)")
    }

    /// The figures kept are hrm hrv's (same file, same strap) and the heart rates hrm export's.
    @Test func theStrapsFiguresAreHRVsOwn() async throws {
        let library = try Library()
        defer { library.remove() }
        let name = try library.add(start: Self.base, minutes: 6)
        let listed = try await library.sessions(["--csv"])
        #expect(listed.status == 0, "\(listed.stderr)")
        try #require(listed.stdoutLines.count == 2)
        let header = listed.stdoutLines[0].split(separator: ",").map(String.init)
        let row = listed.stdoutLines[1].split(separator: ",", omittingEmptySubsequences: false).map(
            String.init)
        let field = Dictionary(uniqueKeysWithValues: zip(header, row))
        let hrv = try await HRMProcess.run([
            "hrv", "--json", library.sessions.appendingPathComponent(name).path,
        ])
        let figures = try #require(WatchBinaryTests.lines(hrv.stdout).first)
        #expect(field["beats"] == "\(figures["beats"] as? Int ?? -1)")
        #expect(field["rmssd_ms"].flatMap(Double.init) == figures["rmssd_ms"] as? Double)
        #expect(field["sdnn_ms"].flatMap(Double.init) == figures["sdnn_ms"] as? Double)
        #expect(field["measurements"] == "360")
        #expect(field["min_bpm"] == "60")
        #expect(field["max_bpm"] == "64")
        // bpm 60..64 in turn: the lowest 5 minutes average 62.
        #expect(field["resting_bpm"] == "62")
        #expect(field["path"] == library.sessions.appendingPathComponent(name).path)
        #expect(try await library.sqlite("SELECT zone, seconds FROM zones;") == "2|360\n")
    }

    @Test func addedChangedAndRemovedFilesAreNoticedWithoutReadingTheRest() async throws {
        let library = try Library()
        defer { library.remove() }
        let kept = try library.add(start: Self.base, minutes: 1)
        let changed = try library.add(start: Self.base.addingTimeInterval(Self.day), minutes: 1)
        let removed = try library.add(start: Self.base.addingTimeInterval(2 * Self.day), minutes: 1)
        _ = try await library.sessions()
        let rowid = "SELECT rowid FROM files WHERE name = '\(kept)';"
        let keptRow = try await library.sqlite(rowid)
        try FileManager.default.removeItem(at: library.sessions.appendingPathComponent(removed))
        try Self.recording(
            start: Self.base.addingTimeInterval(Self.day), minutes: 3, device: "D2:4B:7E:10:20:30",
            name: "Test H10", bpm: 70
        )
        .write(to: library.sessions.appendingPathComponent(changed), atomically: false, encoding: .utf8)
        let added = try library.add(start: Self.base.addingTimeInterval(3 * Self.day), minutes: 2)
        let result = try await library.sessions(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let listed = WatchBinaryTests.lines(result.stdout)
        #expect(
            listed.compactMap { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) } == [
                added, changed, kept,
            ])
        #expect(listed.compactMap { $0["measurements"] as? Int } == [120, 180, 60])
        #expect(listed[1]["avg_bpm"] as? Int == 72)
        // The file that did not change kept its row: it was not read again.
        #expect(try await library.sqlite(rowid) == keptRow)
        #expect(
            try await library.sqlite("SELECT count(*) FROM files; SELECT count(*) FROM straps;") == "3\n3\n")
    }

    @Test func reindexMakesTheIndexAgain() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        let first = try await library.sessions()
        let again = try await library.sessions(["--reindex"])
        #expect(again.status == 0)
        #expect(again.stderr.contains("indexing 1 recording "), "\(again.stderr)")
        #expect(again.stdout == first.stdout)
    }

    // MARK: An index that cannot be used as it is

    @Test func aDamagedIndexIsMadeAgainFromTheRecordings() async throws {
        let library = try Library()
        defer { library.remove() }
        let name = try library.add(start: Self.base, minutes: 1)
        let recording = try Data(contentsOf: library.sessions.appendingPathComponent(name))
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: library.index))
        let result = try await library.sessions()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the index \(library.index) is damaged"), "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        #expect(try await library.sqlite("PRAGMA integrity_check; SELECT count(*) FROM files;") == "ok\n1\n")
        // The recording is untouched.
        #expect(try Data(contentsOf: library.sessions.appendingPathComponent(name)) == recording)
    }

    @Test func anOlderIndexIsMadeAgain() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        _ = try await library.sqlite("CREATE TABLE files (name TEXT); INSERT INTO files VALUES ('x');")
        let result = try await library.sessions()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("made by an older hrm (schema 0): made again"), "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        #expect(try await library.sqlite("PRAGMA user_version; SELECT count(*) FROM files;") == "2\n1\n")
    }

    @Test func aNewerIndexIsLeftAsItIs() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        _ = try await library.sqlite("CREATE TABLE future (x); PRAGMA user_version = 99;")
        let result = try await library.sessions()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("made by a newer hrm (schema 99): listing from the recordings"),
            "\(result.stderr)")
        #expect(result.stdoutLines.count == 1)
        #expect(
            try await library.sqlite("PRAGMA user_version; SELECT name FROM sqlite_master;") == "99\nfuture\n"
        )
    }

    /// An index that cannot be opened (here a folder where the file should be; as root a read-only
    /// folder would not stop hrm): a warning, and the recordings read as they are.
    @Test func anIndexThatCannotBeOpenedStillLists() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        try FileManager.default.createDirectory(atPath: library.index, withIntermediateDirectories: true)
        let result = try await library.sessions(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: cannot use the index \(library.index)"), "\(result.stderr)")
        #expect(WatchBinaryTests.lines(result.stdout).first?["measurements"] as? Int == 60)
    }

    /// A disk that fills while the index is written (a file-size limit, which the kernel enforces
    /// even for root): the transaction is rolled back, the index stays as it was, the listing is
    /// made from the recordings.
    @Test func aFullDiskLeavesTheIndexAsItWas() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        _ = try await library.sessions()
        for offset in 1...60 {
            try library.add(start: Self.base.addingTimeInterval(Double(offset) * 3600), minutes: 1)
        }
        let result = try await HRMProcess.run(
            [
                "-c",
                // The limit: the largest file of the index as it is, and 4 KiB more.
                #"big=$(stat -c %s "$1" "$1-wal" 2>/dev/null | sort -n | tail -1); ulimit -f $(( big / 1024 + 4 )); exec "$0" sessions"#,
                HRMProcess.binary.path, library.index,
            ], executable: URL(fileURLWithPath: "/bin/bash"), environment: library.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("cannot use the index"), "\(result.stderr)")
        #expect(result.stdoutLines.count == 61)
        #expect(try await library.sqlite("PRAGMA integrity_check; SELECT count(*) FROM files;") == "ok\n1\n")
    }

    /// Another connection holds the write lock past the busy timeout (5 s): the listing does not
    /// wait for ever, it reads the recordings.
    @Test func aBusyIndexIsBypassed() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        _ = try await library.sessions()
        let added = try library.add(start: Self.base.addingTimeInterval(Self.day), minutes: 1)
        let script = #"""
            coproc LOCK { exec /usr/bin/python3 -u -c 'import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("BEGIN IMMEDIATE")
            print("locked")
            sys.stdin.read()' "$1"; }
            read -r -t 60 line <&"${LOCK[0]}" || exit 90
            "$0" sessions; status=$?
            exec {LOCK[1]}>&-
            wait
            exit $status
            """#
        let result = try await HRMProcess.run(
            ["-c", script, HRMProcess.binary.path, library.index],
            executable: URL(fileURLWithPath: "/bin/bash"),
            environment: library.environment, patience: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("is busy (another hrm holds it): listing from the recordings"),
            "\(result.stderr)")
        #expect(result.stdoutLines.count == 2)
        #expect(result.stdoutLines.first?.hasSuffix(added) == true)
    }

    // MARK: Filters and forms

    @Test func filtersPickSessions() async throws {
        let library = try Library()
        defer { library.remove() }
        let now = Date()
        let recent = try library.add(
            start: now.addingTimeInterval(-2 * Self.day), minutes: 3, name: "Polar H10 A")
        let old = try library.add(
            start: now.addingTimeInterval(-40 * Self.day), minutes: 1, device: "C0:FF:EE:00:00:01",
            name: "HRM-Pro")
        let january = try library.add(start: Self.base, minutes: 2, name: "Polar H10 A")
        func names(_ arguments: [String]) async throws -> [String] {
            let result = try await library.sessions(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return WatchBinaryTests.lines(result.stdout).compactMap {
                ($0["path"] as? String)?.split(separator: "/").last.map(String.init)
            }
        }
        #expect(try await names([]) == [recent, old, january])
        #expect(try await names(["--since", "30d"]) == [recent])
        #expect(try await names(["--since", "2026-01-05", "--until", "2026-01-05"]) == [january])
        #expect(try await names(["--until", "2026-01-04"]) == [])
        #expect(try await names(["--since", "2026-01-05T08:00:01Z"]) == [recent, old])
        #expect(try await names(["--device", "hrm-pro"]) == [old])
        #expect(try await names(["--device", "C0:FF:EE:00:00:01"]) == [old])
        #expect(try await names(["--device", "polar"]) == [recent, january])
        #expect(try await names(["--min-duration", "2m"]) == [recent, january])
        let bad = try await library.sessions(["--since", "yesterday"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--since 'yesterday': give a date"), "\(bad.stderr)")
    }

    @Test func csvHasAHeaderAndQuotesWhatNeedsIt() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1, name: "Strap, \"the\" one")
        let result = try await library.sessions(["--csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutLines.count == 2)
        #expect(
            result.stdoutLines[0].hasPrefix("start,duration_s,connected_s,device,name,straps,measurements,"))
        #expect(
            result.stdoutLines[1].hasPrefix(
                #"2026-01-05T08:00:00.000Z,60.5,60.3,D2:4B:7E:10:20:30,"Strap, ""the"" one",1,60,"#),
            "\(result.stdout)")
        let both = try await library.sessions(["--csv", "--json"])
        #expect(both.status == 64)
    }

    // MARK: Files that are not recordings of this hrm

    @Test func damagedAndNewerFilesAreToldAtEachListing() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        try "not a recording\n".write(
            to: library.sessions.appendingPathComponent("junk.jsonl"), atomically: false, encoding: .utf8)
        try
            (#"{"type":"recording","format":2,"hrm":"9.0.0","start":"2026-01-06T08:00:00.000Z","command":"record"}"#
            + "\n")
            .write(
                to: library.sessions.appendingPathComponent("2026-01-06T08-00-00Z_future.jsonl"),
                atomically: false, encoding: .utf8)
        // A torn end of NUL bytes, as a crash leaves one.
        let torn = library.sessions.appendingPathComponent(
            try library.add(start: Self.base.addingTimeInterval(-Self.day), minutes: 1))
        let handle = try FileHandle(forWritingTo: torn)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(count: 4096))
        try handle.close()
        for run in 0..<2 {
            let result = try await library.sessions()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "junk.jsonl is not an hrm recording of format 1 (see hrm record): left out"),
                "run \(run): \(result.stderr)")
            #expect(result.stderr.contains("ends in 4096 NUL bytes"), "run \(run): \(result.stderr)")
            #expect(result.stdoutLines.count == 3, "\(result.stdout)")
            #expect(
                result.stdoutLines.first
                    == "2026-01-06 08:00 UTC  ?:??  (recorded by a newer hrm (format 2): not read; a newer hrm reads it)  \(library.sessions.path)/2026-01-06T08-00-00Z_future.jsonl"
            )
        }
        let json = try await library.sessions(["--json"])
        let newer = try #require(WatchBinaryTests.lines(json.stdout).first)
        #expect(newer["format"] as? Int == 2)
        #expect(newer["start"] as? String == "2026-01-06T08:00:00.000Z")
    }

    // MARK: Two hrm at once

    /// A recording made while the list is read: the listing in the middle sees what was written so
    /// far, hrm record adds the whole session to the index when it ends (before any listing reads
    /// it again), and the index stays sound.
    @Test func recordAddsItsSessionWhileAListingReads() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        _ = try await library.sessions()
        let result = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                export XDG_DATA_HOME="\(library.data.path)"
                "\(HRMProcess.binary.path)" record --count 8 Polar > /dev/null 2> "$XDG_DATA_HOME/record.err" &
                record=$!
                for _ in $(seq 600); do grep -q "recording to" "$XDG_DATA_HOME/record.err" && break; sleep 0.05; done
                "\(HRMProcess.binary.path)" sessions --json > "$XDG_DATA_HOME/during.json" || exit 91
                wait $record || exit 92
                /usr/bin/sqlite3 "\(library.index)" "SELECT measurements FROM files ORDER BY name DESC LIMIT 1;"
                cat "$XDG_DATA_HOME/record.err" >&2
                """, patience: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
        // SQLite's shell read the row hrm record wrote: every measurement of the session.
        #expect(result.stdoutLines == ["8"], "\(result.stdout)")
        let during = WatchBinaryTests.lines(
            try String(
                contentsOfFile: library.data.appendingPathComponent("during.json").path, encoding: .utf8))
        #expect(during.count == 2)
        #expect((during.first?["measurements"] as? Int ?? 99) <= 8)
        let after = try await library.sessions(["--json"])
        #expect(after.stderr.isEmpty, "\(after.stderr)")
        #expect(WatchBinaryTests.lines(after.stdout).first?["measurements"] as? Int == 8)
        #expect(try await library.sqlite("PRAGMA integrity_check;") == "ok\n")
    }

    /// Two first listings at once: both make (or find) the index, both list every recording, and
    /// the index is sound after.
    @Test func twoFirstListingsAtOnce() async throws {
        let library = try Library()
        defer { library.remove() }
        for offset in 0..<30 {
            try library.add(start: Self.base.addingTimeInterval(Double(offset) * 3600), minutes: 1)
        }
        let result = try await HRMProcess.run(
            [
                "-c",
                #""$0" sessions > "$1/a" 2>&1 & a=$!; "$0" sessions > "$1/b" 2>&1 & b=$!; wait $a || exit 91; wait $b || exit 92; cat "$1/a" "$1/b""#,
                HRMProcess.binary.path, library.data.path,
            ], executable: URL(fileURLWithPath: "/bin/bash"), environment: library.environment)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdoutLines.filter { $0.hasPrefix("2026-01-") }.count == 60, "\(result.stdout)")
        #expect(!result.stdout.contains("warning"), "\(result.stdout)")
        #expect(try await library.sqlite("PRAGMA integrity_check; SELECT count(*) FROM files;") == "ok\n30\n")
    }

    // MARK: What the first run says, and who loads SQLite

    /// On a terminal the first run shows how far it has got, on one line written over itself and
    /// taken off at the end; through a pipe there is no such line (the earlier tests).
    @Test func indexingShowsProgressOnATerminal() async throws {
        let library = try Library()
        defer { library.remove() }
        for offset in 0..<3 {
            try library.add(start: Self.base.addingTimeInterval(Double(offset) * Self.day), minutes: 1)
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return
        }
        let result = try await HRMProcess.run(
            ["-qefc", "'\(HRMProcess.binary.path)' sessions", "/dev/null"],
            executable: URL(fileURLWithPath: "/usr/bin/script"),
            environment: library.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("hrm sessions: indexing 3 recordings"), "\(result.stdout.debugDescription)"
        )
        #expect(
            result.stdout.contains("\r\u{1B}[Khrm sessions: indexing 3/3 (100 %)"),
            "\(result.stdout.debugDescription)")
        #expect(result.stdout.contains("\r\u{1B}[K2026-01-07 08:00 UTC"), "\(result.stdout.debugDescription)")
    }

    /// libsqlite3 is loaded by the listing only: hrm watch (and hrm record's start) never map it.
    @Test func onlyTheLibraryLoadsSQLite() async throws {
        let library = try Library()
        defer { library.remove() }
        try library.add(start: Self.base, minutes: 1)
        let watchLog = library.data.appendingPathComponent("watch-ld").path
        let listLog = library.data.appendingPathComponent("list-ld").path
        let watch = try await HRMProcess.runUnderSim(
            "basic", [],
            shell: """
                LD_DEBUG=files LD_DEBUG_OUTPUT="\(watchLog)" "\(HRMProcess.binary.path)" watch --count 2 Polar > /dev/null
                """)
        #expect(watch.status == 0, "\(watch.stderr)")
        let list = try await HRMProcess.run(
            ["sessions"],
            environment: library.environment.merging(["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": listLog]) { $1 }
        )
        #expect(list.status == 0, "\(list.stderr)")
        func loaded(_ prefix: String) throws -> String {
            let names = try FileManager.default.contentsOfDirectory(atPath: library.data.path).filter {
                $0.hasPrefix(prefix)
            }
            return try names.map {
                try String(contentsOfFile: library.data.appendingPathComponent($0).path, encoding: .utf8)
            }
            .joined()
        }
        let watched = try loaded("watch-ld")
        #expect(watched.contains("libc.so.6"), "the loader's log is empty: \(watched.prefix(200))")
        #expect(!watched.contains("libsqlite3"))
        #expect(try loaded("list-ld").contains("libsqlite3.so.0"))
    }
}
