package import Monitor
import OSC
import Synchronization

/// What `--osc` sends and where: the destination, the address prefix, the range `HRPercent`
/// spans, and the strap to follow when several are watched.
package struct OSCSettings: Sendable, Equatable {
    /// Where the datagrams go.
    package var destination: OSCDestination
    /// Put before each parameter's name; VRChat's avatar parameters by default.
    package var prefix: String
    /// The heart rates `HRPercent` maps to 0 and 1; nil: 0 to `--max-hr`, else 0 to 200.
    package var range: ClosedRange<Int>?
    /// The strap followed, by address or part of its name; nil: the first to send a measurement.
    package var device: String?

    /// VRChat's avatar parameters: `/avatar/parameters/`.
    package static let defaultPrefix = "/avatar/parameters/"

    /// Every setting, as given.
    package init(
        destination: OSCDestination, prefix: String = OSCSettings.defaultPrefix,
        range: ClosedRange<Int>? = nil,
        device: String? = nil
    ) {
        self.destination = destination
        self.prefix = prefix
        self.range = range
        self.device = device
    }
}

/// Sends one strap's heart rate as OSC messages, under HRtoVRChat_OSC's parameter names so that
/// avatars built for it work unchanged: `HR` (int), `HRPercent` (float in [0, 1]), `onesHR`,
/// `tensHR`, `hundredsHR` (ints, for avatars that draw digits), `isHRConnected` (bool: true while
/// the strap is connected, false on a drop and once more when hrm stops) and `isHRBeat` (bool,
/// toggled once per heart beat: `BeatSchedule`).
///
/// The heart rate goes out on the thread that brought it, just after the pipeline's lock is let
/// go (`afterSend`), on a socket that never waits (`UDPSender`): no task to wake per measurement,
/// which is what a notification costs most here. At most one set per `minimumGap`: a strap sends
/// 1 to 4 measurements a second, so every one goes; a faster source has its latest heart rate sent
/// at the next chance. Only the beats, timed, run on a task of the sink's own. A datagram that
/// cannot go is dropped: the first drop is reported as an `osc_send_failed` event (by the task,
/// never from the strap's send), the rest counted and told at the end.
package final class OSCSink<C: Clock<Duration> & Sendable>: EventSink where C.Instant: Sendable {
    /// Which strap is followed, and what waits to be sent.
    private struct State {
        var followed: String? = nil
        /// Names from `info` events, by device, for `--osc-device` given as part of a name.
        var names: [String: String] = [:]
        var connected = false
        /// Encoded messages for `afterSend`, in order.
        var outbox: [[UInt8]] = []
        /// When the last heart rate was queued.
        var lastSent: C.Instant? = nil
        /// A heart rate that came within `minimumGap` of the last one sent: sent with the next.
        var held: Int? = nil
        var schedule = BeatSchedule<C.Instant>()
        /// The beat task waits for a wake-up (nothing to play).
        var playerIdle = true
        var stopped = false
    }

    /// The least time between two sets of heart-rate messages: 10 a second at most, as often as
    /// VRChat shares an avatar's parameters with others, and more than a strap sends.
    package static var minimumGap: Duration { .milliseconds(100) }

    private let settings: OSCSettings
    private let sender: UDPSender
    private let clock: C
    /// `HRPercent`'s 0 and 1.
    private let range: ClosedRange<Int>
    private let report: @Sendable (MonitorEvent) -> Void
    private let console: any SessionConsole
    private let command: String
    private let state: Mutex<State>
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let dropped = Atomic<Int>(0)
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// A sink sending to `sender`; `maximumHeartRate` is `HRPercent`'s 1 when no range is set.
    package init(
        settings: OSCSettings, sender: UDPSender, clock: C, maximumHeartRate: Int?, command: String,
        console: any SessionConsole, report: @escaping @Sendable (MonitorEvent) -> Void
    ) {
        self.settings = settings
        self.sender = sender
        self.clock = clock
        let top = max(maximumHeartRate ?? 200, 1)
        range = settings.range ?? 0...top
        self.command = command
        self.console = console
        self.report = report
        state = Mutex(State(followed: nil))
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { await self.playBeats() }
        }
    }

    /// Under the pipeline's lock: decides what to send and encodes it; nothing is sent here.
    package func receive(_ event: MonitorEvent) {
        guard let device = event.device else { return }
        var wakePlayer = false
        state.withLock { state in
            switch event.kind {
            case .info(let name, _, _, _, _, _):
                if let name { state.names[device] = name }
                if state.followed == nil, let wanted = settings.device, Self.matches(device, name, wanted) {
                    state.followed = device
                }
            case .measurement(let measurement, _):
                guard follows(device, &state) else { return }
                let now = clock.now
                if !state.connected { connect(&state) }
                let bpm = Int(measurement.heartRate)
                if let last = state.lastSent, last.advanced(by: Self.minimumGap) > now {
                    state.held = bpm
                } else {
                    queueHeartRate(bpm, &state)
                    state.lastSent = now
                }
                let intervals = measurement.rrIntervals
                if intervals.isEmpty {
                    state.schedule.heartRate(bpm, now: now)
                } else {
                    state.schedule.add(
                        intervals.map { .microseconds(Int64(($0.milliseconds * 1000).rounded())) }, now: now)
                }
                if state.playerIdle, state.schedule.next() != nil {
                    state.playerIdle = false
                    wakePlayer = true
                }
            case .status(.connected, _):
                if state.followed == device, !state.connected { connect(&state) }
            case .status(.disconnected, _), .status(.reconnecting, _):
                // `disconnected` then `reconnecting`: said once.
                if state.followed == device, state.connected { disconnect(&state) }
            default:
                break
            }
        }
        if wakePlayer { wake.yield() }
    }

    /// After the pipeline's lock: what `receive` queued goes out, on this thread.
    package func afterSend() {
        // Sent under the lock (a few datagrams that never wait): `finish` takes the lock, so a set
        // of messages is never cut in two by hrm exiting while this thread is still sending it.
        state.withLock { state in
            guard !state.stopped else { return }
            for datagram in state.outbox { send(datagram) }
            state.outbox.removeAll(keepingCapacity: true)
        }
        // The first drop is reported by the task: woken for it, never reported from here.
        if dropped.load(ordering: .relaxed) > 0, !reported.load(ordering: .relaxed) { wake.yield() }
    }

    package func finish() async {
        wake.finish()
        if let running = task.withLock({ $0 }) {
            running.cancel()
            await running.value
        }
        // hrm stops: a heart rate held back, the beats still waiting, then disconnected, once more.
        let outbox = state.withLock { state -> [[UInt8]] in
            state.stopped = true
            if let held = state.held { queueHeartRate(held, &state) }
            state.held = nil
            queueBeats(state.schedule.fire(now: clock.now) + state.schedule.flush(), &state)
            state.outbox.append(message("isHRConnected", .bool(false)))
            defer { state.outbox.removeAll() }
            return state.outbox
        }
        for datagram in outbox { send(datagram) }
        reportFirstDrop()
        let count = dropped.load(ordering: .relaxed)
        if count > 0 {
            console.say(
                "hrm \(command): osc: \(count) message\(count == 1 ? "" : "s") could not be sent to \(settings.destination)"
            )
        }
    }

    /// Whether `device`'s measurements are sent: the strap followed, chosen by the first
    /// measurement when `--osc-device` is not given.
    private func follows(_ device: String, _ state: inout State) -> Bool {
        if let followed = state.followed { return followed == device }
        if let wanted = settings.device, !Self.matches(device, state.names[device], wanted) { return false }
        state.followed = device
        return true
    }

    /// An address (either case) or a case-insensitive part of the name, as watch's DEVICE.
    private static func matches(_ device: String, _ name: String?, _ wanted: String) -> Bool {
        if device.lowercased() == wanted.lowercased() { return true }
        return name?.lowercased().contains(wanted.lowercased()) == true
    }

    private func connect(_ state: inout State) {
        state.connected = true
        state.outbox.append(message("isHRConnected", .bool(true)))
    }

    /// The link dropped: the heart rate held back, every beat waiting, then disconnected.
    private func disconnect(_ state: inout State) {
        if let held = state.held { queueHeartRate(held, &state) }
        state.held = nil
        queueBeats(state.schedule.fire(now: clock.now) + state.schedule.flush(), &state)
        state.connected = false
        state.outbox.append(message("isHRConnected", .bool(false)))
    }

    private func queueHeartRate(_ bpm: Int, _ state: inout State) {
        let span = Float(range.upperBound - range.lowerBound)
        let fraction = span > 0 ? Float(bpm - range.lowerBound) / span : 0
        state.held = nil
        state.outbox.append(message("HR", .int(Int32(clamping: bpm))))
        state.outbox.append(message("HRPercent", .float(min(max(fraction, 0), 1))))
        state.outbox.append(message("onesHR", .int(Int32(bpm % 10))))
        state.outbox.append(message("tensHR", .int(Int32(bpm / 10 % 10))))
        state.outbox.append(message("hundredsHR", .int(Int32(bpm / 100 % 10))))
    }

    private func queueBeats(_ toggles: [Bool], _ state: inout State) {
        for beating in toggles { state.outbox.append(message("isHRBeat", .bool(beating))) }
    }

    /// The beats as they fall due, and a heart rate held back once its gap has passed; waits for
    /// a wake-up when there is nothing to play.
    private func playBeats() async {
        var wakeUps = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            reportFirstDrop()
            let due = state.withLock { state -> C.Instant? in
                let next = state.schedule.next()
                if next == nil { state.playerIdle = true }
                return next
            }
            guard let due else {
                guard await wakeUps.next() != nil else { return }
                continue
            }
            do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
            // Taken and sent under the lock, so that toggles queued by a drop on the strap's
            // thread cannot overtake them: a receiver sees them in order. A send never waits.
            state.withLock { state in
                guard !state.stopped else { return }
                var toggles: [[UInt8]] = []
                for beating in state.schedule.fire(now: clock.now) {
                    toggles.append(message("isHRBeat", .bool(beating)))
                }
                // A heart rate held back by the gap goes with the beat rather than wait for the
                // next measurement.
                if let held = state.held, let last = state.lastSent,
                    last.advanced(by: Self.minimumGap) <= clock.now
                {
                    queueHeartRate(held, &state)
                    state.lastSent = clock.now
                }
                state.outbox.append(contentsOf: toggles)
                let outbox = state.outbox
                state.outbox.removeAll(keepingCapacity: true)
                for datagram in outbox { send(datagram) }
            }
        }
    }

    private func message(_ name: String, _ argument: OSCArgument) -> [UInt8] {
        OSCMessage(settings.prefix + name, [argument]).encoded()
    }

    /// Sends one datagram, or counts it dropped.
    private func send(_ datagram: [UInt8]) {
        if !sender.send(datagram) { dropped.add(1, ordering: .relaxed) }
    }

    private let reported = Atomic<Bool>(false)

    /// The first drop, said once, from the task or the end: never from the strap's send.
    private func reportFirstDrop() {
        guard dropped.load(ordering: .relaxed) > 0, !reported.exchange(true, ordering: .relaxed) else {
            return
        }
        report(
            MonitorEvent(
                device: nil,
                kind: .error(
                    code: .oscSendFailed,
                    message:
                        "OSC: a message to \(settings.destination) could not be sent (nothing listening, or the network refused it); later ones that fail are counted",
                    hex: nil)))
    }
}
