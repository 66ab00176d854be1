import Foundation
import Testing

/// hrm-sim stopped from a terminal (#26 item 7): Ctrl-C to the foreground group reaches hrm,
/// which ends with its summary, but not hrm-sim's dbus-daemon (a group of its own), so the
/// strap is let go over a bus that is still there; a closed terminal's SIGHUP does the same and
/// leaves no dbus-daemon and no bus folder behind.
@Suite struct SimulatorSignalTests {
    /// hrm-sim -- hrm watch --json in a process group of its own (job control), `signal` sent to
    /// the whole group once the first measurement is out; what the script saw, and hrm's stdout.
    static func stopped(by signal: String) async throws -> (report: [String: String], stdout: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrm-sig-\(UUID())")
        let scratch = directory.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out").path
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim").path
        let script = """
            set -m
            export TMPDIR='\(scratch.path)'
            '\(sim)' --scenario basic -- '\(HRMProcess.binary.path)' watch --json --no-config > '\(out)' 2>/dev/null &
            leader=$!
            # Waits for a line, not for a time: 20 s at most, only so that a hang cannot last.
            for _ in $(seq 400); do grep -q '"type":"measurement"' '\(out)' 2>/dev/null && break; sleep 0.05; done
            daemon=$(pgrep -P "$leader" dbus-daemon)
            echo "daemon-group=$(ps -o pgid= -p "$daemon" | tr -d ' ')"
            echo "leader-group=$leader"
            echo "folders-during=$(ls "$TMPDIR" | wc -l)"
            kill -\(signal) -- -"$leader"
            wait "$leader"; echo "status=$?"
            kill -0 "$daemon" 2>/dev/null && echo "daemon=left" || echo "daemon=gone"
            echo "folders-after=$(ls "$TMPDIR" | wc -l)"
            """
        let result = try await HRMProcess.run(
            ["-c", script], executable: URL(fileURLWithPath: "/bin/bash"), patience: .seconds(60))
        var report: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { report[parts[0]] = parts[1] }
        }
        let stdout = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (report, stdout)
    }

    @Test(arguments: ["INT", "HUP"])
    func aSignalToTheGroupEndsCleanly(signal: String) async throws {
        let (report, stdout) = try await Self.stopped(by: signal)
        #expect(
            report["daemon-group"] != nil && report["daemon-group"] != report["leader-group"], "\(report)")
        #expect(report["folders-during"] == "1", "the private bus's folder while it runs: \(report)")
        #expect(report["status"] == "0", "\(report)")
        #expect(report["daemon"] == "gone", "\(report)")
        #expect(report["folders-after"] == "0", "\(report)")
        // hrm ended as a stop does: the summary, then stopped; never a lost bus.
        let types = WatchBinaryTests.lines(stdout).map { $0["type"] as? String ?? "" }
        #expect(Array(types.suffix(2)) == ["summary", "status"], "\(types)")
        #expect(!stdout.contains("lost the connection to the system bus"))
    }
}
