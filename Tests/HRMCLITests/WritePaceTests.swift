import ClockSupport
import Testing

@testable import Outputs

/// `hrm serve`'s pace of writes to its clients, driven by hand: a strap's events go out at once,
/// a faster stream's wait at most one interval.
@Suite struct WritePaceTests {
    typealias Instant = ManualClock.Instant

    /// The first round goes at once; so does every round of a strap's pace (a notification a
    /// second, or four).
    @Test func aStrapsEventsNeverWait() {
        var pace = WritePace<Instant>()
        #expect(pace.delay(at: Instant.at(0)) == .zero)
        pace.wrote(at: Instant.at(0))
        for milliseconds in stride(from: Int64(250), through: 3000, by: 250) {
            #expect(pace.delay(at: Instant.at(milliseconds)) == .zero, "at \(milliseconds) ms")
            pace.wrote(at: Instant.at(milliseconds))
        }
    }

    /// Writes asked for within an interval of the last round wait for the rest of it; at the
    /// interval's end, or after, they go at once.
    @Test func aFastStreamWaitsForTheRestOfTheInterval() {
        var pace = WritePace<Instant>(interval: .milliseconds(16))
        pace.wrote(at: Instant.at(1000))
        #expect(pace.delay(at: Instant.at(1000)) == .milliseconds(16))
        #expect(pace.delay(at: Instant.at(1005)) == .milliseconds(11))
        #expect(pace.delay(at: Instant.at(1015)) == .milliseconds(1))
        #expect(pace.delay(at: Instant.at(1016)) == .zero)
        #expect(pace.delay(at: Instant.at(1100)) == .zero)
        // The round that waited went at 1016: the next waits from there.
        pace.wrote(at: Instant.at(1016))
        #expect(pace.delay(at: Instant.at(1021)) == .milliseconds(11))
    }

    /// At most 60 rounds a second by default: a display's frame.
    @Test func theDefaultIsADisplaysFrame() {
        let pace = WritePace<Instant>()
        #expect(pace.interval == .seconds(1) / 60)
        #expect(WritePace<Instant>.defaultInterval > .milliseconds(16))
        #expect(WritePace<Instant>.defaultInterval < .milliseconds(17))
    }
}
