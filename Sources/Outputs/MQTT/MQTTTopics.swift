import Monitor
import SessionLibrary

/// The topic contract (README, "MQTT"): every topic hrm publishes, in one place.
///
///     hrm/<id>/status                 online / offline (retained; offline is the last will)
///     hrm/<id>/<device>/measurement   each measurement as watch --json prints it (QoS 1)
///     hrm/<id>/<device>/bpm           the heart rate, a plain number (retained)
///     hrm/<id>/<device>/state         the last status event (retained)
///     hrm/<id>/<device>/info          the strap's info event (retained)
///     hrm/<id>/<device>/battery       the battery level, a plain number (retained)
///     hrm/<id>/<device>/hrv           the last hrv event (retained)
///     hrm/<id>/<device>/summary       the session's summary, at the end (retained)
///
/// `<device>` is the strap's address in lower case without colons.
package struct MQTTTopics: Sendable, Equatable {
    package let prefix: String
    package let host: String

    package var status: String { "\(prefix)/\(host)/status" }

    package func device(_ address: String, _ leaf: Leaf) -> String {
        "\(prefix)/\(host)/\(Self.deviceLevel(address))/\(leaf.rawValue)"
    }

    package enum Leaf: String, CaseIterable, Sendable {
        case measurement, bpm, state, info, battery, hrv, summary
    }

    /// `C0:FF:EE:00:00:01` → `c0ffee000001`.
    package static func deviceLevel(_ address: String) -> String {
        String(address.lowercased().filter { $0 != ":" })
    }

    /// What every hrm host publishes, for a subscriber: `hrm/+/status`, `hrm/+/+/measurement`, ….
    package func subscriptions() -> [String] {
        ["\(prefix)/+/status"] + Leaf.allCases.map { "\(prefix)/+/+/\($0.rawValue)" }
    }

    /// Why `text` cannot be one topic level (empty, a slash, a wildcard, a NUL), or nil.
    package static func problem(withLevel text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.contains(where: { "/+#".contains($0) || $0 == "\0" }) {
            return "'\(TerminalText.sanitised(text, limit: 40))' must not contain /, + or #"
        }
        return nil
    }

    /// `text` as a topic level: wildcards, slashes and spaces replaced; nil when nothing is left.
    package static func level(_ text: String) -> String? {
        let cleaned = String(text.map { "/+# \0".contains($0) || $0.isNewline ? "_" : $0 })
        return cleaned.isEmpty ? nil : cleaned
    }

    /// Every stored property, as given.
    package init(prefix: String, host: String) {
        self.prefix = prefix
        self.host = host
    }
}
