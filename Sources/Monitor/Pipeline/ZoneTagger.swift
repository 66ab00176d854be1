/// Puts each measurement's heart-rate zone on it, when zones are set.
package final class ZoneTagger: EventProcessor {
    package let zones: HeartRateZones

    package init(zones: HeartRateZones) {
        self.zones = zones
    }

    package func process(_ event: MonitorEvent, emit: (MonitorEvent) -> Void) {
        guard case .measurement(let m, _) = event.kind else { return emit(event) }
        emit(event.with(.measurement(m, zone: zones.zone(for: Int(m.heartRate)))))
    }
}
