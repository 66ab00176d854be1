import Foundation
import Testing

@testable import HRMCLI

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
    @Test func scalesToItsOwnRange() {
        #expect(Sparkline.render([60, 70, 80]) == "▁▅█")
        #expect(Sparkline.render([72, 72]) == "▁▁")
        #expect(Sparkline.render([]) == "")
        #expect(Sparkline.render(Array(0..<100), width: 10).count == 10)
    }
}
