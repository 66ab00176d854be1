import MQTT
import Monitor
import Outputs
import SessionLibrary

/// `hrm config`: the settings the file gives, written back as TOML in the schema's order (what
/// hrm understood, after checking), a password hidden.
enum ConfigRendering {
    static func toml(_ file: Configuration) -> [String] {
        var top: [String] = []
        if let devices = file.devices {
            top.append(
                devices.count == 1
                    ? "device = \(quoted(devices[0]))" : "devices = \(array(devices.map(quoted)))")
        }
        top.append(
            contentsOf: [
                file.adapter.map { "adapter = \(quoted($0))" },
                file.powerOn.map { "power-on = \($0)" },
                file.scanTimeout.map { "scan-timeout = \($0)" },
                file.format.map { "format = \(quoted($0.rawValue))" },
                file.color.map { "color = \(quoted($0.rawValue))" },
                file.maxHR.map { "max-hr = \($0)" },
                file.restHR.map { "rest-hr = \($0)" },
                file.zones.map { "zones = \(array($0.map(String.init)))" },
            ].compactMap { $0 })
        var lines = top
        func table(_ name: String, _ entries: [String?]) {
            let present = entries.compactMap { $0 }
            guard !present.isEmpty else { return }
            if !lines.isEmpty { lines.append("") }
            lines.append("[\(name)]")
            lines.append(contentsOf: present)
        }
        table(
            "hrv",
            [
                file.hrv.every.map { "every = \(Seconds.describe($0))" },
                file.hrv.window.map { "window = \($0)" },
            ])
        table(
            "mqtt",
            [
                file.mqtt.url.map { url in
                    // The password is not shown: the output may end up on a screen or in a bug report.
                    let shown = (try? MQTTBrokerURL(parsing: url)).map { "\($0)" } ?? url
                    return "url = \(quoted(shown))" + (shown == url ? "" : "  # password hidden")
                },
                file.mqtt.id.map { "id = \(quoted($0))" },
                file.mqtt.prefix.map { "prefix = \(quoted($0))" },
                file.mqtt.cafile.map { "cafile = \(quoted($0))" },
                file.mqtt.haDiscovery.map { "ha-discovery = \($0)" },
                file.mqtt.haPrefix.map { "ha-prefix = \(quoted($0))" },
            ])
        table(
            "serve",
            [
                file.serve.listen.map { "listen = \(quoted($0))" },
                file.serve.allowHost.map { "allow-host = \(array($0.map(quoted)))" },
            ])
        return lines
    }

    private static func array(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    /// A TOML basic string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
