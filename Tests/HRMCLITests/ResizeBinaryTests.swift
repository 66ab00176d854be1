import BrokerSupport
import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor

/// `hrm watch` in a real terminal that rewraps its lines when its window narrows: tmux, a private
/// server of the test's own, its window resized from 100 columns to 40 and back while hrm draws.
/// What stays on the screen is read back with `capture-pane`: one live line (or one row per
/// strap), no broken copy of an old one, and the lines above it as they were (#26 item 6).
@Suite struct ResizeBinaryTests {
    /// A tmux server of the test's own (its socket in the test's directory, no config file),
    /// removed by `end()`.
    struct Tmux {
        let directory: URL
        var socket: String { directory.appendingPathComponent("tmux").path }

        static let path = "/usr/bin/tmux"

        init() throws {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("hrm-tmux-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        /// `tmux -S SOCKET ARGUMENTS`; its output. Started by Spawn's ChildProcess, not Foundation's
        /// Process: the server the first command forks would inherit the test thread's blocked
        /// signals (and never see SIGCHLD or kill-server's SIGTERM), and Foundation's watch on its
        /// child (a socket the server would keep open) would never end.
        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            let (status, output) = try await BrokerSupport.run(
                Self.path, ["-S", socket, "-f", "/dev/null"] + arguments, timeout: Patience.long)
            guard status == 0 else {
                throw TestFailure("tmux \(arguments.joined(separator: " ")): \(status) \(output)")
            }
            return output
        }

        /// A session of 100 x 20 columns running, through sh: earlier output filling the screen,
        /// then hrm under hrm-sim (its pid in the test's directory), then hrm-sim's exit status.
        /// hrm's lines come at the bottom of a full screen, as in a terminal that has been used
        /// (tmux keeps the cursor's row when it rewraps: what grows goes up into its history from
        /// the top, out of reach). hrm's memory and config stay in the test's directory;
        /// `HRM_REFLOW` is not set (tmux is recognised by its own `TMUX`). The pane stays once
        /// the shell has ended.
        func start(_ scenario: String, _ arguments: String) async throws {
            let hrm = HRMProcess.binary.path
            let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim").path
            let command =
                "for i in $(seq 1 25); do echo \"earlier output $i\"; done; "
                + "'\(sim)' --scenario \(scenario) -- '\(hrm)' watch \(arguments) & "
                + "echo $! > '\(directory.path)/pid'; wait $!; echo \"exit status $?\""
            let environment = [
                "XDG_STATE_HOME=\(directory.path)", "XDG_CONFIG_HOME=\(directory.path)", "NO_COLOR=1",
                "HRM_REFLOW=",
            ]
            try await run(
                ["new-session", "-d", "-s", "hrm", "-x", "100", "-y", "20"]
                    + environment.flatMap { ["-e", $0] } + [
                        command, ";", "set", "-g", "remain-on-exit", "on",
                    ])
        }

        /// The pane's rows, its history first, without trailing blanks and blank rows; with
        /// `joined`, a line the terminal wrapped is one.
        func rows(joined: Bool = false) async throws -> [String] {
            let text = try await run(["capture-pane", "-p", "-S", "-", "-t", "hrm"] + (joined ? ["-J"] : []))
            return text.split(separator: "\n").map { String($0.reversed().drop { $0 == " " }.reversed()) }
                .filter { !$0.isEmpty }
        }

        /// The pane's rows once `condition` says yes to them (a deadline only proves "not hung").
        func rows(until condition: ([String]) -> Bool, _ what: String) async throws -> [String] {
            let clock = ContinuousClock()
            let end = clock.now + Patience.long
            while true {
                let rows = try await rows()
                if condition(rows) { return rows }
                guard clock.now < end else { throw TestFailure("\(what) never came; the pane: \(rows)") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        func resize(columns: Int) async throws {
            try await run(["resize-window", "-t", "hrm", "-x", "\(columns)"])
        }

        /// SIGTERM to hrm-sim (which passes it on to hrm); its exit status once it has ended, as
        /// the shell in the pane says it (tmux's own `pane_dead_status` is not always told).
        func stop() async throws -> String {
            let text = try String(contentsOf: directory.appendingPathComponent("pid"), encoding: .utf8)
            guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
                throw TestFailure("no pid for hrm-sim: \(text)")
            }
            kill(pid, SIGTERM)
            let rows = try await rows(
                until: { $0.contains { $0.hasPrefix("exit status ") } }, "hrm-sim's end")
            return rows.last { $0.hasPrefix("exit status ") }.map { String($0.dropFirst(12)) } ?? ""
        }

        func end() async {
            _ = try? await run(["kill-server"])
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// tmux at hand, or a failure: `make test-deps` installs it.
    static func tmux() throws -> Tmux? {
        guard FileManager.default.isExecutableFile(atPath: Tmux.path) else {
            Issue.record("\(Tmux.path) is not installed (Debian's tmux: make test-deps installs it)")
            return nil
        }
        return try Tmux()
    }

    static func columns(_ row: String) -> Int { TerminalText.columns(row) }

    /// The live line is drawn at 100 columns (wider than 40), the window narrowed to 40: once hrm
    /// has drawn again, one row has a heart on it, the last, within 39 columns, and every line
    /// above is as it was. Widened again, the same. Stopped, the summary and `-- stopped` follow
    /// the lines above, with no live line left.
    @Test func oneLiveLineAfterTheWindowNarrows() async throws {
        guard let tmux = try Self.tmux() else { return }
        do {
            try await tmux.start("basic", "")
            let wide = try await tmux.rows(
                until: { rows in rows.last.map { $0.hasPrefix("♥") && Self.columns($0) > 40 } ?? false },
                "a live line wider than 40 columns")
            let above = try await tmux.rows(joined: true).dropLast()
            #expect(
                above.contains { $0.hasPrefix("Polar H10 7E102030") } && above.contains("earlier output 25"))
            #expect(!above.contains { $0.contains("♥") }, "\(wide)")

            try await tmux.resize(columns: 40)
            let narrow = try await tmux.rows(
                until: { rows in rows.last.map { $0.hasPrefix("♥") && Self.columns($0) <= 39 } ?? false },
                "a live line drawn at 40 columns")
            #expect(narrow.filter { $0.contains("♥") }.count == 1, "a broken copy stayed: \(narrow)")
            #expect(narrow.filter { $0.contains("bpm") }.count == 1, "\(narrow)")
            #expect(try await tmux.rows(joined: true).dropLast() == above, "the lines above, intact")

            try await tmux.resize(columns: 100)
            let widened = try await tmux.rows(
                until: { rows in rows.last.map { $0.hasPrefix("♥") && Self.columns($0) > 40 } ?? false },
                "a live line drawn at 100 columns again")
            #expect(widened.filter { $0.contains("♥") }.count == 1, "\(widened)")
            // Joined: the info line is wider than 100 columns, and wraps there as tmux wraps it.
            #expect(
                Array(try await tmux.rows(joined: true).dropLast()) == Array(above),
                "the lines above, intact again")

            let status = try await tmux.stop()
            #expect(status == "0", "hrm-sim's exit status")
            // Less the shell's last words and tmux's for the pane kept after the shell ended.
            let stopped = try await tmux.rows(joined: true).prefix { !$0.hasPrefix("exit status ") }
            #expect(stopped.starts(with: above), "\(stopped)")
            #expect(!stopped.contains { $0.contains("♥") }, "\(stopped)")
            #expect(stopped.last?.hasPrefix("-- stopped: ") == true, "\(stopped)")
            #expect(stopped.contains { $0.hasPrefix("-- summary: ") })
        } catch {
            await tmux.end()
            throw error
        }
        await tmux.end()
    }

    /// Two straps' rows (about 60 columns each) at 100 columns, narrowed to 40: each was rewrapped
    /// into two rows; once hrm has drawn again, two rows have a heart on them, the last two, each
    /// within 39 columns, and the lines above are as they were. At the end the table stays once,
    /// every row stopped, with `-- stopped` under it; no `-- scanning` line is left anywhere.
    @Test func oneTableAfterTheWindowNarrows() async throws {
        guard let tmux = try Self.tmux() else { return }
        func table(_ rows: [String], _ fits: (Int) -> Bool) -> Bool {
            let hearts = rows.suffix(2)
            return rows.count > 2 && hearts.allSatisfy { $0.contains("♥") && !$0.contains("♥ --") }
                && hearts.contains { fits(Self.columns($0)) } && !rows[rows.count - 3].contains("♥")
        }
        do {
            try await tmux.start("two-straps", "--all")
            let wide = try await tmux.rows(
                until: { rows in table(rows) { $0 > 40 } && rows.suffix(2).allSatisfy { $0.contains("RR") } },
                "two rows, one wider than 40 columns")
            let above = try await tmux.rows(joined: true).dropLast(2)
            #expect(
                above.last == "earlier output 25", "nothing between the earlier output and the table: \(wide)"
            )

            try await tmux.resize(columns: 40)
            let narrow = try await tmux.rows(
                until: { rows in
                    table(rows) { _ in true } && rows.suffix(2).allSatisfy { Self.columns($0) <= 39 }
                },
                "the table drawn at 40 columns")
            #expect(narrow.filter { $0.contains("♥") }.count == 2, "a broken copy stayed: \(narrow)")
            #expect(try await tmux.rows(joined: true).dropLast(2) == above, "the lines above, intact")

            try await tmux.resize(columns: 100)
            let widened = try await tmux.rows(
                until: { rows in table(rows) { $0 > 40 } }, "the table drawn at 100 columns again")
            #expect(widened.filter { $0.contains("♥") }.count == 2, "\(widened)")
            #expect(Array(widened.dropLast(2)) == Array(above), "the lines above, unwrapped again")

            let status = try await tmux.stop()
            #expect(status == "0", "hrm-sim's exit status")
            // Less the shell's last words and tmux's for the pane kept after the shell ended.
            let stopped = try await tmux.rows(joined: true).prefix { !$0.hasPrefix("exit status ") }
            #expect(stopped.starts(with: above), "\(stopped)")
            let hearts = stopped.filter { $0.contains("♥") }
            #expect(hearts.count == 2 && hearts.allSatisfy { $0.contains("stopped") }, "\(stopped)")
            #expect(stopped.last?.hasPrefix("-- stopped: ") == true, "\(stopped)")
            #expect(!stopped.contains { $0.contains("scanning") || $0.contains("connecting") }, "\(stopped)")
        } catch {
            await tmux.end()
            throw error
        }
        await tmux.end()
    }
}
