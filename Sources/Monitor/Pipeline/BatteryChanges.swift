/// Passes on a strap's `battery` events only when the level changed since the one last reported,
/// and only once its `info` (which carries the first level) is out: bluetoothd repeats the level
/// after every reconnect.
package final class BatteryChanges: EventProcessor {
    /// The last level reported per device; a device is here once its `info` went out.
    private var reported: [String: Int?] = [:]

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        // The device looked up only for the two kinds: every measurement passes here.
        switch event.kind {
        case .info(_, _, let battery, _, _, _):
            reported[event.device ?? ""] = .some(battery)
        case .battery(let percent):
            let device = event.device ?? ""
            guard let last = reported[device], last != percent else { return }
            reported[device] = percent
        default:
            break
        }
        emit(event)
    }
}
