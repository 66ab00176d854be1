import BlueZ

/// One DEVICE argument of `watch`: an address or a part of the name, with the adapter to reach it
/// through when it is written `ADAPTER/DEVICE` (`hci1/C0:FF:EE:00:00:01`, `hci1/polar`).
package struct StrapRequest: Sendable, Equatable {
    /// An address or a case-insensitive part of the name.
    package var wanted: String
    /// A name (hci1) or an address; nil: `--adapter`, else the first powered one.
    package var adapter: String?

    /// `ADAPTER/DEVICE` when the part before the first slash names an adapter (hciN or an
    /// address); anything else is a device as written, slash included.
    package init(parsing text: String) {
        if let slash = text.firstIndex(of: "/") {
            let prefix = String(text[..<slash])
            if Self.namesAnAdapter(prefix) {
                wanted = String(text[text.index(after: slash)...])
                adapter = prefix
                return
            }
        }
        wanted = text
        adapter = nil
    }

    package init(wanted: String, adapter: String? = nil) {
        self.wanted = wanted
        self.adapter = adapter
    }

    private static func namesAnAdapter(_ text: String) -> Bool {
        if BluetoothAddress(text) != nil { return true }
        guard text.hasPrefix("hci") else { return false }
        let number = text.dropFirst(3)
        return !number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
    }

    /// How people see it in messages: `'polar'`, `'polar' on hci1`.
    package var spoken: String {
        "'\(TerminalText.sanitised(wanted, limit: TerminalText.nameLimit))'"
            + (adapter.map { " on \($0)" } ?? "")
    }
}
