import Foundation
import Testing

/// `--share` (#27): StartNotify instead of AcquireNotify, so that other programs on this machine
/// can read the strap hrm watches; and a plain message when another program holds it alone.
@Suite struct ShareBinaryTests {
    static let strap = "D2:4B:7E:10:20:30"

    /// By default hrm takes the strap by AcquireNotify where offered; with `--share`, by
    /// StartNotify, and two hrm (standing for any two programs) read the same strap at once.
    @Test func withShareTwoProgramsReadTheStrapAtOnce() async throws {
        let log = WatchBinaryTests.temporary("share.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "basic", [], log: log,
            shell: """
                '\(hrm)' watch --json --no-config --share --count 3 \(Self.strap) > "$TMPDIR/share-a.$$" &
                first=$!
                '\(hrm)' watch --json --no-config --share --count 3 \(Self.strap) > "$TMPDIR/share-b.$$"
                b=$?
                wait $first; a=$?
                echo "a $a $(grep -c '"type":"measurement"' "$TMPDIR/share-a.$$")"
                echo "b $b $(grep -c '"type":"measurement"' "$TMPDIR/share-b.$$")"
                rm -f "$TMPDIR/share-a.$$" "$TMPDIR/share-b.$$"
                """, environment: ["TMPDIR": NSTemporaryDirectory()])
        #expect(result.stdoutLines == ["a 0 3", "b 0 3"], "\(result.stdout) \(result.stderr)")
        let calls = try WatchBinaryTests.calls(log)
        // Two at least: the first to finish disconnects the link it made, and the other, whose
        // link that was too, connects and subscribes again.
        #expect(calls.filter { $0 == "StartNotify" }.count >= 2, "\(calls)")
        #expect(!calls.contains("AcquireNotify"), "\(calls)")
    }

    /// The default takes the strap alone; another program (hrm with `--share`) is told plainly
    /// why it cannot subscribe, not bluetoothd's bare "Notify acquired".
    @Test func aStrapHeldByAcquireNotifyIsSaidPlainly() async throws {
        let log = WatchBinaryTests.temporary("held.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.runUnderSim(
            "basic", [], log: log,
            shell: """
                out="$TMPDIR/held.$$"
                '\(hrm)' watch --json --no-config \(Self.strap) > "$out" &
                first=$!
                # Until the first holds the strap (its first measurement): 90 s only proves "not hung".
                # and says how it took it (its info line).
                for i in $(seq 450); do
                    grep -q '"type":"measurement"' "$out" && grep -q '"type":"info"' "$out" && break
                    sleep 0.2
                done
                echo "first took it by $(grep -o '"notify":"[A-Za-z]*"' "$out")"
                '\(hrm)' watch --no-config --share --count 2 --no-reconnect \(Self.strap)
                echo "second $?"
                # The first holds the strap until it is told to stop, however slow the machine.
                kill -INT $first; wait $first; echo "first $?"
                rm -f "$out"
                """, environment: ["TMPDIR": NSTemporaryDirectory()])
        #expect(result.stdoutLines.contains("first 0"), "\(result.stdout) \(result.stderr)")
        #expect(
            result.stdoutLines.contains(#"first took it by "notify":"AcquireNotify""#), "\(result.stdout)")
        #expect(!result.stdoutLines.contains("second 0"), "\(result.stdout)")
        #expect(
            result.stderr.contains("holds the strap's notifications by AcquireNotify"), "\(result.stderr)")
        #expect(try WatchBinaryTests.calls(log).contains("AcquireNotify"))
    }
}
