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
/// `receive` only picks the events of the strap followed and hands them to the sink's task
/// through a bounded stream; the task sends, on a socket that never waits (`UDPSender`). A
/// datagram that cannot go is dropped: the first drop is reported as an `osc_send_failed` event,
/// the rest counted and told at the end. Nothing here can delay the strap's stream.
package final class OSCSink<C: Clock<Duration> & Sendable>: EventSink where C.Instant: Sendable {
    /// What the task is told, in order.
    private enum Input: Sendable {
        case measurement(bpm: Int, intervals: [Duration])
        case connected(Bool)
    }

    /// What waits for the task. Measurements in a row are merged (the last heart rate, every
    /// interval), so a strap far faster than OSC needs costs one wake-up and one set of messages
    /// per `minimumGap`, not per notification; the intervals are all kept, for the beats.
    private struct Pending {
        var inputs: [Input] = []
        /// The task has been woken for what waits (or is about to take it).
        var signalled = false
        var finished = false

        mutating func append(_ input: Input) {
            if case .measurement(_, let more) = input, case .measurement(_, let earlier)? = inputs.last {
                guard case .measurement(let bpm, _) = input else { return }
                inputs[inputs.count - 1] = .measurement(bpm: bpm, intervals: earlier + more)
            } else {
                inputs.append(input)
            }
        }
    }

    /// The least time between two sets of messages: 20 a second at most, more than any avatar
    /// shows (a strap sends 1 to 4 a second, so every one of its measurements is sent).
    package static var minimumGap: Duration { .milliseconds(50) }

    /// Which strap is followed.
    private struct Following {
        var device: String? = nil
        /// Names from `info` events, by device, for `--osc-device` given as part of a name.
        var names: [String: String] = [:]
    }

    private let settings: OSCSettings
    private let sender: UDPSender
    private let clock: C
    /// `HRPercent`'s 0 and 1.
    private let range: ClosedRange<Int>
    private let report: @Sendable (MonitorEvent) -> Void
    private let console: any SessionConsole
    private let command: String
    private let pending = Mutex(Pending())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let following = Mutex(Following())
    private let schedule = Mutex(BeatSchedule<C.Instant>())
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
        // A second of a strap's notifications many times over: a task that falls this far
        // behind loses the oldest, never the strap's time.
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { await self.run() }
        }
    }

    package func receive(_ event: MonitorEvent) {
        guard let device = event.device else { return }
        switch event.kind {
        case .info(let name, _, _, _, _):
            following.withLock { following in
                if let name { following.names[device] = name }
                if following.device == nil, let wanted = settings.device, Self.matches(device, name, wanted) {
                    following.device = device
                }
            }
        case .measurement(let measurement, _):
            guard isFollowed(device) else { return }
            tell(
                .measurement(
                    bpm: Int(measurement.heartRate),
                    intervals: measurement.rrIntervals.map {
                        .microseconds(Int64(($0.milliseconds * 1000).rounded()))
                    }))
        case .status(.connected, _):
            if following.withLock({ $0.device == device }) { tell(.connected(true)) }
        case .status(.disconnected, _), .status(.reconnecting, _):
            if following.withLock({ $0.device == device }) { tell(.connected(false)) }
        default:
            break
        }
    }

    /// Queues `input` for the task, waking it unless it has been woken already.
    private func tell(_ input: Input) {
        let wakeUp = pending.withLock { pending in
            pending.append(input)
            defer { pending.signalled = true }
            return !pending.signalled
        }
        if wakeUp { wake.yield() }
    }

    package func finish() async {
        pending.withLock { $0.finished = true }
        wake.finish()
        guard let running = task.withLock({ $0 }) else { return }
        // Sending never waits, so the task ends at once; the bound only keeps a promise.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await running.value }
            group.addTask { try? await Task.sleep(for: .seconds(2)) }
            await group.next()
            group.cancelAll()
        }
        let count = dropped.load(ordering: .relaxed)
        if count > 0 {
            console.say(
                "hrm \(command): osc: \(count) message\(count == 1 ? "" : "s") could not be sent to \(settings.destination)"
            )
        }
    }

    /// Whether `device`'s measurements are sent: the strap followed, chosen by the first
    /// measurement when `--osc-device` is not given.
    private func isFollowed(_ device: String) -> Bool {
        following.withLock { following in
            if let followed = following.device { return followed == device }
            if let wanted = settings.device {
                guard Self.matches(device, following.names[device], wanted) else { return false }
            }
            following.device = device
            return true
        }
    }

    /// An address (either case) or a case-insensitive part of the name, as watch's DEVICE.
    private static func matches(_ device: String, _ name: String?, _ wanted: String) -> Bool {
        if device.lowercased() == wanted.lowercased() { return true }
        return name?.lowercased().contains(wanted.lowercased()) == true
    }

    /// The task: messages as measurements come, beats as they fall due, until the stream ends.
    private func run() async {
        let (beatWakes, beatWake) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.playBeats(beatWakes) }
            var connected = false
            var wakeUps = wakes.makeAsyncIterator()
            while true {
                let awake = await wakeUps.next() != nil
                let (inputs, finished) = pending.withLock { pending in
                    defer {
                        pending.inputs.removeAll(keepingCapacity: true)
                        pending.signalled = false
                    }
                    return (pending.inputs, pending.finished)
                }
                for input in inputs {
                    switch input {
                    case .measurement(let bpm, let intervals):
                        if !connected {
                            connected = true
                            send("isHRConnected", .bool(true))
                        }
                        sendHeartRate(bpm)
                        let now = clock.now
                        schedule.withLock { schedule in
                            if intervals.isEmpty {
                                schedule.heartRate(bpm, now: now)
                            } else {
                                schedule.add(intervals, now: now)
                            }
                        }
                        beatWake.yield()
                    case .connected(true):
                        if !connected {
                            connected = true
                            send("isHRConnected", .bool(true))
                        }
                    case .connected(false):
                        // `disconnected` then `reconnecting`: said once.
                        guard connected else { continue }
                        flushBeats(now: clock.now)
                        connected = false
                        send("isHRConnected", .bool(false))
                    }
                }
                if !awake || finished { break }
                // What comes meanwhile waits and is merged: one set of messages per gap at most.
                do { try await clock.sleep(for: Self.minimumGap) } catch { break }
            }
            group.cancelAll()
            beatWake.finish()
        }
        // hrm stops: the beats still waiting, then disconnected, once more.
        flushBeats(now: clock.now)
        send("isHRConnected", .bool(false))
    }

    /// Toggles `isHRBeat` as beats fall due; waits for a wake-up when none is waiting.
    private func playBeats(_ wakes: AsyncStream<Void>) async {
        var wakeUps = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            guard let due = schedule.withLock({ $0.next() }) else {
                guard await wakeUps.next() != nil else { return }
                continue
            }
            do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
            let now = clock.now
            // Sent under the schedule's lock, so that a flush on the other task cannot overtake
            // them: a receiver sees the toggles in order. A send never waits.
            schedule.withLock { schedule in
                for beating in schedule.fire(now: now) { send("isHRBeat", .bool(beating)) }
            }
        }
    }

    /// The beats due by `now` (those a strap without RR gave too), then every one still waiting.
    private func flushBeats(now: C.Instant) {
        schedule.withLock { schedule in
            for beating in schedule.fire(now: now) + schedule.flush() { send("isHRBeat", .bool(beating)) }
        }
    }

    private func sendHeartRate(_ bpm: Int) {
        send("HR", .int(Int32(clamping: bpm)))
        let span = Float(range.upperBound - range.lowerBound)
        let fraction = span > 0 ? Float(bpm - range.lowerBound) / span : 0
        send("HRPercent", .float(min(max(fraction, 0), 1)))
        send("onesHR", .int(Int32(bpm % 10)))
        send("tensHR", .int(Int32(bpm / 10 % 10)))
        send("hundredsHR", .int(Int32(bpm / 100 % 10)))
    }

    private func send(_ name: String, _ argument: OSCArgument) {
        if sender.send(OSCMessage(settings.prefix + name, [argument]).encoded()) { return }
        if dropped.add(1, ordering: .relaxed).newValue == 1 {
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
}
