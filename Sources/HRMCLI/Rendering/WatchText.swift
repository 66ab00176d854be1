import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// Watch's lines for people. Names, makers, models and status details come from the strap or from
/// bluetoothd, so they are printed through `TerminalText` (escaped, capped); JSON carries them
/// exactly.
enum WatchText {
    /// `Polar H10 (D2:4B:7E:10:20:30): chest, battery 87 %, Polar Electro Oy H10`
    static func info(
        address: String?, name: String?, location: BodySensorLocation?, battery: Int?, manufacturer: String?,
        model: String?, notify: MonitorEvent.NotifyMode? = nil
    ) -> String {
        var facts: [String] = []
        if let location { facts.append("worn on the \(location.text)") }
        if let battery { facts.append("battery \(battery) %") }
        let maker = [manufacturer, model].compactMap { $0 }.map(shown).joined(separator: " ")
        if !maker.isEmpty { facts.append(maker) }
        switch notify {
        case .acquireNotify?: facts.append("notifications held by hrm alone (AcquireNotify)")
        case .startNotify?: facts.append("notifications shared with other programs (StartNotify)")
        case nil: break
        }
        // Without an address when the line names its strap already (several straps).
        let named = name.map(shown) ?? "(no name)"
        let who = address.map { "\(named) (\($0))" } ?? named
        return facts.isEmpty ? who : "\(who): \(facts.joined(separator: ", "))"
    }

    /// A summary after `lead` (`-- summary: `): one line when it fits in `width` columns (always,
    /// without a width: a pipe), else a line per group, the later ones indented under the first,
    /// so that a terminal never wraps it mid-word.
    static func summary(_ report: SessionReport, lead: String, indent: Int = 0, width: Int?) -> [String] {
        let line = lead + report.text
        guard let width, indent + line.count > width - 1 else { return [line] }
        let groups = report.groups
        let pad = String(repeating: " ", count: min(lead.count, 4))
        return [lead + (groups.first ?? "")] + groups.dropFirst().map { pad + $0 }
    }

    /// `heart rate above 160 bpm: 163 bpm`
    static func alert(_ alert: HeartRateAlert) -> String {
        "heart rate \(alert.direction.rawValue) \(alert.bound) bpm: \(alert.bpm) bpm"
    }

    /// `relay: consumer 11:22:33:44:55:66 connected`, `relay: a consumer subscribed`.
    static func relay(_ state: MonitorEvent.RelayState, _ consumer: String?) -> String {
        let who = consumer.map { "consumer \(TerminalText.sanitised($0, limit: TerminalText.nameLimit))" }
        switch state {
        case .consumerConnected: return "relay: \(who ?? "a consumer") connected"
        case .subscribed: return "relay: \(who ?? "a consumer") subscribed"
        case .unsubscribed: return "relay: \(who ?? "the last consumer") unsubscribed"
        case .consumerDisconnected: return "relay: \(who ?? "a consumer") disconnected"
        }
    }

    /// `disconnected: le-connection-abort-by-local; retrying in 0.5 seconds`
    static func status(_ state: MonitorEvent.State, _ detail: String?) -> String {
        guard let detail else { return state.rawValue }
        return "\(state.rawValue): \(TerminalText.sanitised(detail, limit: TerminalText.messageLimit))"
    }

    private static func shown(_ text: String) -> String {
        TerminalText.sanitised(text, limit: TerminalText.nameLimit)
    }
}
