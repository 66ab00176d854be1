package import BlueZ

/// Which adapter to use, and whether the session may power it on.
package struct AdapterChoice: Sendable, Equatable {
    /// A name (hci0) or an address; nil: the first powered one.
    package var adapter: String? = nil
    /// Power the adapter on if it is off.
    package var powerOn = false

    /// How long to look for a device when nothing else is said: 10 s.
    package static let defaultScanTimeout: Seconds = {
        guard let ten = try? Seconds(10) else { preconditionFailure("10 s is a valid time") }
        return ten
    }()

    /// Either choice, or neither (the first powered adapter, left as it is).
    package init(adapter: String? = nil, powerOn: Bool = false) {
        self.adapter = adapter
        self.powerOn = powerOn
    }

    /// The adapter chosen (`name`, else `adapter`, else the first powered one), powered on
    /// when it is off and `powerOn` allows it.
    package func usableAdapter(_ client: BlueZClient, named name: String? = nil) async throws(BlueZError)
        -> Adapter
    {
        let chosen = try await client.selectAdapter(name ?? adapter)
        if chosen.powered { return chosen }
        // Powering on cannot help: say what can.
        if chosen.blocked {
            throw BlueZError(
                .adapterBlocked,
                "the adapter \(chosen.name) is blocked through rfkill (Bluetooth switched off)")
        }
        guard powerOn else {
            throw BlueZError(.adapterPoweredOff, "the adapter \(chosen.name) is powered off")
        }
        return try await client.powerOn(chosen)
    }
}
