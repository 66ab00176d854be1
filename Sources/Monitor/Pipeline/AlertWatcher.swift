/// `--alert-above` and `--alert-below`: an `alert` event, right after the measurement that set it
/// off, when a strap's heart rate has been past a bound for 3 s; again only once it came back by
/// 3 bpm. A measurement of 0 bpm or without skin contact says nothing about the heart: it
/// interrupts the 3 s, as a drop does.
package final class AlertWatcher: EventProcessor {
    private let bounds: [AlertTrigger]
    private var triggers = DeviceTable<[AlertTrigger]>()

    package init(above: Int?, below: Int?) {
        bounds = [
            above.map { AlertTrigger(.above, bound: $0) }, below.map { AlertTrigger(.below, bound: $0) },
        ]
        .compactMap { $0 }
    }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        emit(event)
        let device = event.device ?? ""
        switch event.kind {
        case .measurement(let m, _) where m.heartRate > 0 && m.sensorContact != .notDetected:
            let now = event.time.millisecondsSinceEpoch
            for index in bounds.indices {
                guard
                    let alert = triggers[device, default: bounds][index].observe(
                        bpm: Int(m.heartRate), at: now)
                else { continue }
                emit(event.followedBy(.alert(alert)))
            }
        case .measurement, .status(.disconnected, _), .status(.reconnecting, _):
            for index in bounds.indices { triggers[device, default: bounds][index].interrupt() }
        default:
            break
        }
    }
}
