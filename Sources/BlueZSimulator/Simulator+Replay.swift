import DBus

/// The `replay` stream: a recording's frames, each at its own time, once.
///
/// The stream's `times` count from a moment the simulator picks (the anchor): the first frame
/// goes out `interval` seconds after the strap first connects, and each later one as many
/// seconds after the first as the recording says. A frame that cannot go out on time (the link
/// is down, no client has subscribed again yet after a reconnect) goes out as soon as it can, and
/// the frames after it keep their recorded gaps to it: nothing is skipped and nothing comes in a
/// burst. Drops are the device's `drops` (a replay's are tied to the frame before them).
extension Simulator {
    /// How late a frame may go out before the rest of the replay moves with it: more than the
    /// scheduler's jitter, so that the replay does not drift, and less than a reconnect.
    static let replaySlack = 0.25

    func startReplaying(_ path: ObjectPath) {
        devices[path]?.notifyTask?.cancel()
        devices[path]?.notifyTask = Task { [weak self] in
            while !Task.isCancelled {
                guard let wait = await self?.replayStep(path) else { return }
                if wait > 0 {
                    try? await Task.sleep(for: .seconds(wait))
                } else {
                    await Task.yield()
                }
            }
        }
    }

    /// Sends the next frame if it is due. Returns how long to wait before the next step, or nil
    /// when there is nothing more to do while this link lasts (all sent, the link gone).
    func replayStep(_ path: ObjectPath) -> Double? {
        guard var device = devices[path], device.connected, device.servicesResolved,
            let index = device.generator.nextReplayIndex
        else { return nil }
        let stream = device.spec.heartRate
        guard index < stream.times.count else { return nil }
        let t = now
        guard let anchor = device.generator.replayAnchor else {
            devices[path]?.generator.replayAnchor = t + stream.interval - stream.times[index]
            return stream.interval
        }
        let due = anchor + stream.times[index]
        if due > t { return due - t }
        if !reachable(device, at: t) {
            linkLost(path, reason: "link")
            return nil
        }
        guard hasSubscriber(path) else { return timing.tick }
        if t - due > Self.replaySlack { device.generator.replayAnchor = anchor + (t - due) }
        let frame = device.generator.next(at: t)
        devices[path] = device
        if deliver(frame, to: path) { notificationSent(path) }
        return 0
    }
}

extension Scenario.HeartRateStream {
    /// The longest a replay may last: a week of recording.
    static let longestReplay = 604_800.0

    func replayProblems(at path: String) -> [String] {
        var problems: [String] = []
        if times.count != frames.count {
            problems.append("\(path).times: one per frame (\(frames.count)), not \(times.count)")
        }
        var previous = 0.0
        for (i, time) in times.enumerated() {
            if !(time >= 0 && time <= Self.longestReplay) {
                problems.append("\(path).times[\(i)]: 0 to \(Int(Self.longestReplay)) seconds")
            } else if time < previous {
                problems.append("\(path).times[\(i)]: before the time of the frame before it")
            } else {
                previous = time
            }
        }
        return problems
    }
}
