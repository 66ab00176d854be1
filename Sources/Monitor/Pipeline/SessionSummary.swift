/// Adds up each strap's session (time connected, heart rate, time in zones) and sends its
/// `summary` event just before the session's `stopped` status, with the session's HRV from the
/// tracker.
package final class SessionSummary: EventProcessor {
    fileprivate struct Tally {
        package var report = SessionReport()
        /// Heart rates above 0 so far, and their sum.
        package var rated = 0
        package var sum = 0
        package var connectedSince: Int64? = nil
        /// The last measurement's time and zone: the time until the next one counts to that zone.
        package var last: (time: Int64, zone: Int?)? = nil
    }

    /// Longer than this between two measurements is a gap, not time in a zone.
    package static let longestGap: Int64 = 5000

    private let zones: HeartRateZones?
    private let hrv: HRVTracker?
    /// Unchecked: `process` runs under the pipeline's lock, and the closures that change a tally
    /// never reach the table; the runtime's check cost every notification a call into the
    /// runtime and its thread-local access set.
    @exclusivity(unchecked) private var tallies = DeviceTable<Tally>()

    package init(zones: HeartRateZones?, hrv: HRVTracker?) {
        self.zones = zones
        self.hrv = hrv
    }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        if case .status(.stopped, _) = event.kind { return finish(event, emit: emit) }
        emit(event)
        tally(event)
    }

    /// Each strap's `summary`, in the order the straps first came, then the `stopped` status.
    /// Out of line, as `tally`: the reports' frame would be live under every later stage.
    @inline(never)
    private func finish(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        let now = event.time.millisecondsSinceEpoch
        for device in tallies.devices {
            guard var tally = tallies[device] else { continue }
            tally.disconnect(at: now)
            tally.report.hrv = hrv?.session(of: device)
            emit(event.followedBy(.summary(tally.report), device: device))
        }
        emit(event)
    }

    /// Adds `event` to its strap's tally, after it went on. Out of line: its frame (2.5 KB with
    /// a new tally's report) was live under the sinks, which ran inside `process`'s `emit`.
    @inline(never)
    private func tally(_ event: MonitorEvent) {
        guard let device = event.device else { return }
        let now = event.time.millisecondsSinceEpoch
        switch event.kind {
        case .status(.connected, _):
            tallies[device, default: Tally(zones)].connectedSince = now
        case .status(.disconnected, _), .status(.reconnecting, _):
            tallies[device, default: Tally(zones)].disconnect(at: now)
        case .measurement(let m, let zone):
            tallies.update(device, default: Tally(zones)) {
                $0.add(bpm: Int(m.heartRate), zone: zone, at: now)
            }
        default:
            tallies.add(device, Tally(zones))
        }
    }
}

extension SessionSummary.Tally {
    package init(_ zones: HeartRateZones?) {
        if let zones { report.zoneSeconds = Array(repeating: 0, count: zones.count + 1) }
    }

    package mutating func disconnect(at now: Int64) {
        if let since = connectedSince { report.connectedSeconds += Double(max(now - since, 0)) / 1000 }
        connectedSince = nil
        last = nil
    }

    package mutating func add(bpm: Int, zone: Int?, at now: Int64) {
        if let last, let zone = last.zone, zone < report.zoneSeconds?.count ?? 0,
            now - last.time <= SessionSummary.longestGap
        {
            report.zoneSeconds?[zone] += Double(max(now - last.time, 0)) / 1000
        }
        last = (now, zone)
        report.measurements += 1
        guard bpm > 0 else { return }
        sum += bpm
        rated += 1
        report.minimumBPM = min(report.minimumBPM ?? bpm, bpm)
        report.maximumBPM = max(report.maximumBPM ?? bpm, bpm)
        report.averageBPM = Double(sum) / Double(rated)
    }
}
