import BlueZ

extension DiscoveredDevice {
    /// `D2:4B:7E:10:20:30 "Polar H10 7E102030" RSSI -58`: a strap as hrm's log names it.
    package var logText: String {
        "\(address)\(displayName.map { " \($0.debugDescription)" } ?? "") RSSI \(rssi.map(String.init) ?? "unknown")"
    }
}
