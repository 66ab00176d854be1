/// `/metrics` as text: Prometheus' exposition format 0.0.4, or OpenMetrics 1.0 when the scraper
/// asks for it. Every family has its HELP and TYPE lines; names and units follow Prometheus'
/// naming guide (base units where the issue did not fix the name: `hrm_rr_interval_seconds`).
/// Each strap's samples carry `device` (the address) and `name` (from its `info`, empty until
/// then).
package enum MetricsExposition {
    /// The `Content-Type` of the classic text format.
    package static let textType = "text/plain; version=0.0.4; charset=utf-8"
    /// The `Content-Type` of OpenMetrics.
    package static let openMetricsType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// Whether a scraper's `Accept` asks for OpenMetrics (Prometheus sends it first in its list).
    package static func wantsOpenMetrics(_ accept: String?) -> Bool {
        accept?.contains("application/openmetrics-text") == true
    }

    /// One family: its name (without `_total` for a counter), help, type, and each strap's value.
    private struct Family: Sendable {
        let name: String
        let help: String
        let counter: Bool
        let value: @Sendable (StrapFigures) -> Double?
    }

    private static let families: [Family] = [
        Family(name: "hrm_heart_rate_bpm", help: "The last heart rate, in beats per minute.", counter: false)
        {
            $0.bpm.map(Double.init)
        },
        Family(
            name: "hrm_rr_interval_seconds", help: "The last RR interval (time between beats).",
            counter: false
        ) {
            $0.rrSeconds
        },
        Family(name: "hrm_rmssd_ms", help: "RMSSD over the live HRV window, in milliseconds.", counter: false)
        {
            $0.rmssd
        },
        Family(name: "hrm_dfa_alpha1", help: "DFA alpha1 over the live HRV window.", counter: false) {
            $0.alpha1
        },
        Family(
            name: "hrm_zone", help: "The heart-rate zone (0 below zone 1); only with zones set.",
            counter: false
        ) {
            $0.zone.map(Double.init)
        },
        Family(name: "hrm_battery_percent", help: "The strap's battery level, in percent.", counter: false) {
            $0.battery.map(Double.init)
        },
        Family(name: "hrm_connected", help: "1 while the strap is connected, else 0.", counter: false) {
            $0.connected.map { $0 ? 1 : 0 }
        },
        Family(
            name: "hrm_contact",
            help: "1 when the strap senses skin contact, 0 when not; absent when it cannot tell.",
            counter: false
        ) {
            $0.contact.map { $0 ? 1 : 0 }
        },
        Family(name: "hrm_measurements", help: "Measurements received from the strap.", counter: true) {
            Double($0.measurements)
        },
        Family(name: "hrm_rr_intervals", help: "RR intervals received from the strap.", counter: true) {
            Double($0.rrIntervals)
        },
        Family(
            name: "hrm_artefacts",
            help: "RR intervals corrected as artefacts (missed, extra or ectopic beats).", counter: true
        ) {
            Double($0.artefacts)
        },
        Family(name: "hrm_reconnects", help: "Times the strap's link came back after a drop.", counter: true)
        {
            Double($0.reconnects)
        },
        Family(name: "hrm_malformed", help: "Notifications that did not decode.", counter: true) {
            Double($0.malformed)
        },
        Family(
            name: "hrm_notifications_dropped",
            help: "Notifications dropped because the output did not keep up.", counter: true
        ) {
            Double($0.notificationsDropped)
        },
    ]

    /// The page for `straps`, from `version` (the build's).
    package static func render(
        _ straps: [(device: String, figures: StrapFigures)], version: String, openMetrics: Bool
    )
        -> String
    {
        var text = ""
        text.reserveCapacity(512 + straps.count * 1200)
        let infoType = openMetrics ? "info" : "gauge"
        let infoName = openMetrics ? "hrm_build" : "hrm_build_info"
        text += "# HELP \(infoName) The hrm build: its version in the label.\n"
        text += "# TYPE \(infoName) \(infoType)\n"
        text += "hrm_build_info{version=\"\(escaped(version))\"} 1\n"
        for family in families {
            let samples = straps.compactMap { strap in family.value(strap.figures).map { (strap, $0) } }
            let name = family.counter && !openMetrics ? family.name + "_total" : family.name
            text += "# HELP \(name) \(family.help)\n"
            text += "# TYPE \(name) \(family.counter ? "counter" : "gauge")\n"
            for (strap, value) in samples {
                let labels =
                    "{device=\"\(escaped(strap.device))\",name=\"\(escaped(strap.figures.name ?? ""))\"}"
                text +=
                    (family.counter ? family.name + "_total" : family.name) + labels + " " + number(value)
                    + "\n"
            }
        }
        if openMetrics { text += "# EOF\n" }
        return text
    }

    /// A label value: backslash, double quote and line feed escaped, as both formats ask.
    private static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// `72`, `0.8125`: integers without a point, others as Swift prints them (shortest exact).
    private static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
