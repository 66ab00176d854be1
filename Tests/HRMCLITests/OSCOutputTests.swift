import ClockSupport
import Testing

@testable import Outputs

/// `isHRBeat`'s schedule driven by hand, and `--osc`'s destinations.
@Suite struct OSCOutputTests {
    typealias Instant = ManualClock.Instant

    /// Each RR interval is one toggle, one interval after the one before, from the moment the
    /// intervals came.
    @Test func beatsFollowTheIntervals() {
        var schedule = BeatSchedule<Instant>()
        schedule.add([.milliseconds(800), .milliseconds(1000)], now: Instant.at(0))
        #expect(schedule.next() == Instant.at(800))
        #expect(schedule.fire(now: Instant.at(799)).isEmpty)
        #expect(schedule.fire(now: Instant.at(800)) == [true])
        #expect(schedule.next() == Instant.at(1800))
        // More intervals come while one is still waiting: played after it.
        schedule.add([.milliseconds(900)], now: Instant.at(1000))
        #expect(schedule.fire(now: Instant.at(1800)) == [false])
        #expect(schedule.next() == Instant.at(2700))
        #expect(schedule.fire(now: Instant.at(5000)) == [true])
        #expect(schedule.next() == nil)
    }

    /// A drop or the end: what waits is toggled at once, nothing lost.
    @Test func aFlushGivesEveryWaitingBeat() {
        var schedule = BeatSchedule<Instant>()
        schedule.add([.milliseconds(500), .milliseconds(500), .milliseconds(500)], now: Instant.at(0))
        #expect(schedule.fire(now: Instant.at(600)) == [true])
        #expect(schedule.flush() == [false, true])
        #expect(schedule.next() == nil)
        // Playing again after the flush starts from when the next intervals come.
        schedule.add([.milliseconds(700)], now: Instant.at(10_000))
        #expect(schedule.next() == Instant.at(10_700))
    }

    /// No RR: beats at 60/bpm for a while after each measurement, then none.
    @Test func withoutRRTheHeartRateBeats() {
        var schedule = BeatSchedule<Instant>()
        schedule.heartRate(120, now: Instant.at(0))
        #expect(schedule.next() == Instant.at(500))
        #expect(schedule.fire(now: Instant.at(1000)) == [true, false])
        // The beat stops 2.5 s after the last measurement.
        #expect(schedule.fire(now: Instant.at(5000)).count == 3)
        #expect(schedule.next() == nil)
        // No contact (0 bpm): none; nor from a heart rate no heart beats at.
        schedule.heartRate(0, now: Instant.at(6000))
        #expect(schedule.next() == nil)
        schedule.heartRate(1200, now: Instant.at(6000))
        #expect(schedule.next() == nil)
        // RR coming back take over from the heart rate, played from when they came.
        schedule.heartRate(60, now: Instant.at(7000))
        schedule.add([.milliseconds(300)], now: Instant.at(7100))
        #expect(schedule.next() == Instant.at(7400))
    }

    /// Playback that fell far behind (a stall) starts again from now.
    @Test func playbackFarBehindStartsAgain() {
        var schedule = BeatSchedule<Instant>()
        schedule.add([.milliseconds(1000)], now: Instant.at(0))
        schedule.add([.milliseconds(1000)], now: Instant.at(10_000))
        #expect(schedule.next() == Instant.at(11_000))
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1", UInt16(9000)), ("127.0.0.1:9001", "127.0.0.1", 9001),
        ("vr-pc.local:9000", "vr-pc.local", 9000), ("[::1]:9002", "::1", 9002), ("::1", "::1", 9000),
        ("[fe80::1]", "fe80::1", 9000),
    ])
    func destinations(text: String, host: String, port: UInt16) throws {
        let destination = try OSCDestination(parsing: text)
        #expect(destination.host == host && destination.port == port)
    }

    @Test(arguments: ["", ":9000", "host:", "host:0", "host:65536", "host:90x", "[::1", "[::1]9000", "a b:1"])
    func badDestinations(text: String) {
        #expect(throws: OSCDestination.Invalid.self) { try OSCDestination(parsing: text) }
    }
}
