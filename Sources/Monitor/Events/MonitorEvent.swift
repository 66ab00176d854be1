package import HRV
package import HeartRate

/// One thing `scan` or `watch` reports. Logic produces these; renderers turn them into lines.
package struct MonitorEvent: Sendable {
    package enum State: String, Sendable {
        case scanning, connecting, connected, disconnected, reconnecting, stopped
    }

    package enum Kind: Sendable {
        /// A heart-rate monitor (or, with `--all`, any device) seen by a scan.
        case device(name: String?, rssi: Int?, services: [String], connected: Bool)
        case status(State, detail: String?)
        /// What hrm learnt once connected. `location` is nil when the strap has no 0x2A38;
        /// `notify`, how hrm subscribed (nil where it does not say, as a recording's replay).
        /// (Indirect: once per connection, and its 73 bytes made every event, and every copy of
        /// one down the pipeline, a quarter bigger than a measurement's needs.)
        indirect case info(
            name: String?, location: BodySensorLocation?, battery: Int?, manufacturer: String?,
            model: String?,
            notify: NotifyMode? = nil
        )
        /// A decoded notification, with its heart-rate zone when zones are set (0 below zone 1).
        case measurement(HeartRateMeasurement, zone: Int? = nil)
        case battery(percent: Int)
        /// HRV over the most recent beats, sent right after the measurement that brought the
        /// last of them.
        /// (Indirect, as the summary: rare events that would make every event bigger.)
        /// `sessionArtefacts`: the beats corrected since the session began (a counter for
        /// metrics; the window's own are in the metrics).
        indirect case hrv(HRVMetrics, sessionArtefacts: Int = 0)
        /// The heart rate crossed an `--alert-above`/`--alert-below` bound and stayed there.
        case alert(HeartRateAlert)
        /// A strap's session in figures, sent just before the `stopped` status.
        indirect case summary(SessionReport)
        /// A stable `code`, a message for people, and the payload's hex for a malformed frame.
        case error(code: EventErrorCode, message: String, hex: String?)
        /// A consumer of `--relay` (a phone, Zwift, a watch) came, subscribed, unsubscribed or
        /// went. `consumer` is its address; nil for a subscription when bluetoothd does not say
        /// whose it is (it says only that the first subscribed or the last left).
        case relay(RelayState, consumer: String?)
        /// A frame of the strap's ECG (`--ecg`); the event's payload is the frame as the strap
        /// sent it (what a recording keeps).
        indirect case ecg(ECGFrame)
        /// A frame of the strap's acceleration (`--acc`), with its payload as `ecg`'s.
        indirect case acc(ACCFrame)
        /// An R peak found in the ECG.
        case ecgBeat(ECGBeat)
    }

    /// How hrm takes the strap's notifications, as bluetoothd offers them.
    package enum NotifyMode: String, Sendable {
        /// A socket of hrm's own: no other program on the machine can subscribe meanwhile.
        case acquireNotify = "AcquireNotify"
        /// Values on the bus, which bluetoothd shares among the programs that subscribe.
        case startNotify = "StartNotify"
    }

    /// What a consumer of the relay did.
    package enum RelayState: String, Sendable {
        case consumerConnected = "consumer_connected"
        case subscribed
        case unsubscribed
        case consumerDisconnected = "consumer_disconnected"
    }

    package let time: Timestamp
    /// The same moment on the monotonic clock: a recording's offsets, which a change of the
    /// wall clock cannot bend.
    package let instant: ContinuousInstant
    /// The device's address, upper case with colons, where the event concerns one.
    package let device: String?
    package let kind: Kind
    /// A notification's payload as received, for a measurement: what a recording keeps (the
    /// decoded fields are only one reading of it).
    package let payload: [UInt8]?

    package init(
        time: Timestamp = .now(), instant: ContinuousInstant = .now, device: String?, kind: Kind,
        payload: [UInt8]? = nil
    ) {
        self.time = time
        self.instant = instant
        self.device = device
        self.kind = kind
        self.payload = payload
    }

    /// This event with another kind: the same moment, device and payload.
    package func with(_ kind: Kind) -> MonitorEvent {
        MonitorEvent(time: time, instant: instant, device: device, kind: kind, payload: payload)
    }

    /// An event a processor adds because of this one: the same moment and device.
    package func followedBy(_ kind: Kind, device: String? = nil) -> MonitorEvent {
        MonitorEvent(time: time, instant: instant, device: device ?? self.device, kind: kind)
    }
}
