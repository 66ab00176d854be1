import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct BackoffTests {
    @Test func doublesFromHalfASecondUpToFive() {
        var backoff = Backoff()
        let delays = (0..<7).map { _ in backoff.delay() }
        #expect(
            delays == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5),
                .seconds(5),
            ])
        backoff.reset()
        #expect(backoff.delay() == .milliseconds(500))
    }
}

@Suite struct StateStoreTests {
    @Test func xdgRules() {
        #expect(StateStore(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"])?.directory == "/s/hrm")
        #expect(
            StateStore(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])?.directory
                == "/h/.local/state/hrm")
        #expect(StateStore(environment: ["HOME": "/h"])?.directory == "/h/.local/state/hrm")
        #expect(StateStore(environment: [:]) == nil)
    }

    @Test func remembersTheLastDevice() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = StateStore(directory: root.path + "/a/b/hrm")
        #expect(store.lastDevice() == nil)
        #expect(store.remember("D2:4B:7E:10:20:30"))
        #expect(store.lastDevice() == "D2:4B:7E:10:20:30")
        #expect(store.remember("C0:FF:EE:00:00:01"))
        #expect(store.lastDevice() == "C0:FF:EE:00:00:01")
        #expect(!StateStore(directory: "/proc/hrm-cannot").remember("x"), "an unwritable place is not fatal")
    }
}

@Suite struct SparklineTests {
    static func history(_ values: [Int], every step: Int64 = 1000) -> [(time: Int64, bpm: Int)] {
        values.enumerated().map { (Int64($0.offset) * step, $0.element) }
    }

    /// The README's "last minute": two seconds a cell, on a fixed scale of at least 30 bpm.
    @Test func theLastMinuteOnAFixedScale() {
        let steady = Sparkline.lastMinute(Self.history([73, 73, 74, 74]), now: 3000)
        #expect(steady == "▂▂", "73 → 74 bpm is no jump from the bottom to the top: \(steady)")
        let climb = Sparkline.lastMinute(
            Self.history(Array(stride(from: 60, through: 178, by: 2))), now: 59_000)
        #expect(climb.count == 30)
        #expect(climb.first == "▁" && climb.last == "█")
        #expect(Sparkline.lastMinute([], now: 0) == "")
        // Older than a minute: gone.
        #expect(Sparkline.lastMinute([(0, 150), (61_000, 70)], now: 61_000) == "▁")
    }

    /// A drop shows as a gap.
    @Test func aGapIsASpace() {
        let line = Sparkline.lastMinute([(0, 80), (1000, 80), (20_000, 80), (21_000, 80)], now: 21_000)
        #expect(line.hasPrefix("▁") && line.contains(" ") && line.hasSuffix("▁"), "\(line)")
    }
}
