import HeartRate
package import Monitor

/// One strap's figures, as `/metrics` shows them: the last value of each gauge (nil until the
/// strap has given one) and the counters since hrm started.
package struct StrapFigures: Sendable, Equatable {
    /// From the strap's `info`.
    package var name: String? = nil
    package var bpm: Int? = nil
    /// The last RR interval, in seconds.
    package var rrSeconds: Double? = nil
    package var rmssd: Double? = nil
    package var alpha1: Double? = nil
    package var zone: Int? = nil
    package var battery: Int? = nil
    package var connected: Bool? = nil
    /// Skin contact; nil when the strap does not say.
    package var contact: Bool? = nil
    package var measurements = 0
    package var rrIntervals = 0
    package var artefacts = 0
    package var reconnects = 0
    package var malformed = 0
    package var notificationsDropped = 0
    /// Connected once already: the next `connected` is a reconnect.
    package var connectedBefore = false

    /// A strap not heard from yet.
    package init() {}
}

/// Every strap's figures, in the order they first came, from the session's events.
package struct MetricsTable: Sendable {
    package private(set) var straps = DeviceTable<StrapFigures>()

    /// An empty table.
    package init() {}

    /// Takes one event of the session.
    package mutating func take(_ event: MonitorEvent) {
        guard let device = event.device else { return }
        switch event.kind {
        case .measurement(let measurement, let zone):
            straps[device, default: StrapFigures()].measured(measurement, zone: zone)
        case .info(let name, _, let battery, _, _, _):
            straps[device, default: StrapFigures()].name = name
            if let battery { straps[device, default: StrapFigures()].battery = battery }
        case .battery(let percent):
            straps[device, default: StrapFigures()].battery = percent
        case .hrv(let metrics, let sessionArtefacts):
            straps[device, default: StrapFigures()].rmssd = metrics.rmssd
            straps[device, default: StrapFigures()].alpha1 = metrics.alpha1
            straps[device, default: StrapFigures()].artefacts = sessionArtefacts
        case .status(.connected, _):
            straps[device, default: StrapFigures()].linked()
        case .status(.disconnected, _), .status(.reconnecting, _), .status(.connecting, _):
            straps[device, default: StrapFigures()].connected = false
        case .error(let code, let message, let hex):
            // A frame that does not decode carries its hex; bluetoothd's value of another type
            // has its own code (the same rule as the summary's count).
            if hex != nil || code == .malformedValue {
                straps[device, default: StrapFigures()].malformed += 1
            } else if code == .notificationsDropped {
                straps[device, default: StrapFigures()].notificationsDropped +=
                    Self.leadingCount(message) ?? 1
            }
        default:
            break
        }
    }

    /// `12 notifications dropped: ...` → 12.
    private static func leadingCount(_ message: String) -> Int? {
        Int(message.prefix { $0.isASCII && $0.isNumber })
    }
}

extension StrapFigures {
    fileprivate mutating func measured(_ measurement: HeartRateMeasurement, zone: Int?) {
        measurements += 1
        bpm = Int(measurement.heartRate)
        self.zone = zone
        let intervals = measurement.rrIntervals
        rrIntervals += intervals.count
        if let last = intervals.last { rrSeconds = last.milliseconds / 1000 }
        switch measurement.sensorContact {
        case .detected: contact = true
        case .notDetected: contact = false
        case .unsupported: contact = nil
        }
        // Measurements mean a link, whatever status came first.
        if connected != true { linked() }
    }

    fileprivate mutating func linked() {
        guard connected != true else { return }
        if connectedBefore { reconnects += 1 }
        connectedBefore = true
        connected = true
    }
}
