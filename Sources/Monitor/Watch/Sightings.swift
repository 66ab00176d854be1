package import BlueZ
import Synchronization

/// The heart-rate monitors a finder's scans saw: when the one asked for is not among them, the
/// message says what was there (`no 'polar' found in 10.0 s; heart-rate monitors seen: HRM-Pro
/// (C0:FF:EE:00:00:01), TICKR (C0:FF:EE:00:00:02)`), so that a misspelt name or a strap asleep is
/// told apart from a neighbour's.
package final class Sightings: Sendable {
    private let devices = Mutex<[DiscoveredDevice]>([])

    package init() {}

    /// `device` was seen (again: its latest sighting is kept).
    package func saw(_ device: DiscoveredDevice) {
        devices.withLock { devices in
            if let index = devices.firstIndex(where: { $0.address == device.address }) {
                devices[index] = device
            } else {
                devices.append(device)
            }
        }
    }

    /// What was seen, strongest first.
    package var seen: [DiscoveredDevice] {
        devices.withLock { $0 }.sorted { ($0.rssi ?? -999) > ($1.rssi ?? -999) }
    }

    /// The end of a "not found" message: what the scans of `all` saw, at most `limit` named.
    package static func told(_ all: [Sightings], limit: Int = 5) -> String {
        var seen: [DiscoveredDevice] = []
        for sightings in all {
            for device in sightings.seen where !seen.contains(where: { $0.address == device.address }) {
                seen.append(device)
            }
        }
        guard !seen.isEmpty else { return "; no heart-rate monitor was advertising" }
        let named = seen.prefix(limit).map { device in
            let name = device.displayName.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) }
            return name.map { "\($0) (\(device.address))" } ?? device.address.description
        }
        let more = seen.count > limit ? " and \(seen.count - limit) more" : ""
        return "; heart-rate monitor\(seen.count == 1 ? "" : "s") seen: " + named.joined(separator: ", ")
            + more
    }
}
