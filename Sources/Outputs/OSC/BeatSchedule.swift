/// When `isHRBeat` toggles: once per heart beat, timed by the strap's RR intervals, not once per
/// notification (a strap sends about one notification a second whatever the heart does).
///
/// A notification brings the intervals of the beats since the last one, after they happened; they
/// are played back in order, each toggle one interval after the one before, so the avatar's pulse
/// follows the heart's rhythm about a second late. A strap that sends no RR gives the heart rate
/// instead: beats at 60/bpm seconds, for as long as measurements keep coming. Every interval gives
/// exactly one toggle: those still waiting when the link drops or hrm stops are given at once
/// (`flush`), so what a receiver counts matches the intervals hrm printed.
///
/// A value with no clock of its own: the caller passes `now`, so tests drive it by hand.
package struct BeatSchedule<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Intervals waiting to be played, oldest first.
    private var waiting: [Duration] = []
    private var head = 0
    /// When the last beat was played (or when playing began).
    private var last: Instant? = nil
    /// The beat of a strap without RR, and until when it holds (a little past the next
    /// measurement expected).
    private var tempo: (interval: Duration, until: Instant)? = nil
    /// `isHRBeat`'s value now.
    package private(set) var beating = false

    /// How far behind playback may fall before it starts again from now: a strap's intervals come
    /// about a second late, so more than this means a gap (a drop, a stall), not a backlog.
    package static var catchUp: Duration { .seconds(3) }
    /// The fastest heart rate beaten out: a UINT16 field can say 65535 bpm, no heart can.
    package static var fastest: Int { 300 }
    /// How long the heart rate's beat goes on after the measurement that gave it.
    package static var tempoHold: Duration { .milliseconds(2500) }

    /// An empty schedule.
    package init() {}

    /// The intervals of a measurement, played after those already waiting.
    package mutating func add(_ intervals: [Duration], now: Instant) {
        tempo = nil
        guard !intervals.isEmpty else { return }
        restartIfIdle(now)
        waiting.append(contentsOf: intervals.filter { $0 > .zero })
    }

    /// A measurement without RR: beats at 60/`bpm` s until a little after the next measurement is
    /// due. A heart rate of 0 (no skin contact), or one no heart beats at (above `fastest`), stops
    /// them.
    package mutating func heartRate(_ bpm: Int, now: Instant) {
        guard bpm > 0, bpm <= Self.fastest else {
            tempo = nil
            return
        }
        if tempo == nil { restartIfIdle(now) }
        tempo = (.milliseconds(Int64(60_000 / bpm)), now.advanced(by: Self.tempoHold))
    }

    /// When the next toggle is due; nil when there is none to play.
    package func next() -> Instant? {
        guard let last else { return nil }
        if head < waiting.count { return last.advanced(by: waiting[head]) }
        guard let tempo else { return nil }
        let due = last.advanced(by: tempo.interval)
        return due <= tempo.until ? due : nil
    }

    /// The toggles due at `now`, in order (each the new value of `isHRBeat`).
    package mutating func fire(now: Instant) -> [Bool] {
        var toggles: [Bool] = []
        while let due = next(), due <= now {
            if head < waiting.count { head += 1 }
            last = due
            beating.toggle()
            toggles.append(beating)
        }
        compact()
        return toggles
    }

    /// Every interval still waiting, toggled at once (a drop, the end): nothing is lost. The
    /// heart rate's beat stops.
    package mutating func flush() -> [Bool] {
        var toggles: [Bool] = []
        while head < waiting.count {
            head += 1
            beating.toggle()
            toggles.append(beating)
        }
        compact()
        tempo = nil
        last = nil
        return toggles
    }

    /// Playback that has nothing to play, or has fallen more than `catchUp` behind, starts again
    /// from `now`.
    private mutating func restartIfIdle(_ now: Instant) {
        let playing = head < waiting.count || tempo != nil
        if playing, let last, last.advanced(by: Self.catchUp) >= now { return }
        last = now
    }

    private mutating func compact() {
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 {
            waiting.removeFirst(head)
            head = 0
        }
    }
}
