import BlueZ
import Monitor

/// One strap of a file that holds several (a recording of `watch --all`, `watch --json` of two
/// straps), picked by `--device`: its address, or a case-insensitive part of the name its `info`
/// line gave, as watch's DEVICE arguments are.
package enum StrapChoice {
    package struct Strap: Equatable {
        /// As the file writes it.
        package let device: String
        package let name: String?

        /// Every stored property, as given.
        package init(device: String, name: String?) {
            self.device = device
            self.name = name
        }
    }

    package enum Outcome: Equatable {
        case found(Strap)
        case none
        /// A part of a name that more than one strap's name holds.
        case several([Strap])
    }

    package static func pick(_ wanted: String, among straps: [Strap]) -> Outcome {
        // An address is compared as one (either case, `-` or `_` between the bytes), never as a name.
        if let address = BluetoothAddress(wanted) {
            let found = straps.filter { BluetoothAddress($0.device) == address }
            return found.first.map { .found($0) } ?? .none
        }
        let lowered = wanted.lowercased()
        if let strap = straps.first(where: { $0.device.lowercased() == lowered }) { return .found(strap) }
        let found = straps.filter { $0.name?.lowercased().contains(lowered) == true }
        switch found.count {
        case 0: return .none
        case 1: return .found(found[0])
        default: return .several(found)
        }
    }

    /// `C0:FF:EE:00:00:01 "HRM-Pro:123456"`: for messages, whatever the file says.
    package static func label(_ strap: Strap) -> String {
        let device = TerminalText.sanitised(strap.device, limit: TerminalText.nameLimit)
        guard let name = strap.name else { return device }
        return device + " \"" + TerminalText.sanitised(name, limit: TerminalText.nameLimit) + "\""
    }

    /// Why `wanted` picked nothing, or too much, with the straps to choose from.
    package static func refusal(
        _ wanted: String, _ outcome: Outcome, among straps: [Strap], in source: String
    )
        -> String
    {
        let spoken = "'" + TerminalText.sanitised(wanted, limit: TerminalText.nameLimit) + "'"
        guard !straps.isEmpty else { return "--device \(spoken): \(source) names no strap" }
        if case .several(let matching) = outcome {
            return "--device \(spoken) matches \(matching.count) straps of \(source); give the address:"
                + list(matching)
        }
        return "--device \(spoken) matches no strap of \(source), which has:" + list(straps)
    }

    /// An indented line per strap (`label`, then `detail`'s words), the first 20 only: a file
    /// may name any number.
    package static func list(_ straps: [Strap], detail: (Strap) -> String = { _ in "" }) -> String {
        let shown = 20
        var text = straps.prefix(shown).map { "\n  " + label($0) + detail($0) }.joined()
        if straps.count > shown { text += "\n  and \(straps.count - shown) more" }
        return text
    }
}
