import HeartRate

/// Watch's lines for people. Names, makers, models and status details come from the strap or from
/// bluetoothd, so they are printed through `TerminalText` (escaped, capped); JSON carries them
/// exactly.
enum WatchText {
    /// `Polar H10 (D2:4B:7E:10:20:30): chest, battery 87 %, Polar Electro Oy H10`
    static func info(
        address: String?, name: String?, location: BodySensorLocation?, battery: Int?, manufacturer: String?,
        model: String?
    ) -> String {
        var facts: [String] = []
        if let location { facts.append("worn on the \(location.text)") }
        if let battery { facts.append("battery \(battery) %") }
        let maker = [manufacturer, model].compactMap { $0 }.map(shown).joined(separator: " ")
        if !maker.isEmpty { facts.append(maker) }
        let who = "\(name.map(shown) ?? "(no name)") (\(address ?? "?"))"
        return facts.isEmpty ? who : "\(who): \(facts.joined(separator: ", "))"
    }

    /// `heart rate above 160 bpm: 163 bpm`
    static func alert(_ alert: HeartRateAlert) -> String {
        "heart rate \(alert.direction.rawValue) \(alert.bound) bpm: \(alert.bpm) bpm"
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
