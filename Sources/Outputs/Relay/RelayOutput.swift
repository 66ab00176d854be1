import BlueZ
package import Monitor

/// `--relay` (and `hrm relay`): hrm serves the strap it watches as a Bluetooth LE heart-rate
/// sensor, so that Zwift, a phone or a watch can read it while hrm holds it. Opening connects to
/// bluetoothd on a bus connection of its own, registers the GATT application and the
/// advertisement on the relay's adapter (the strap's unless `--relay-adapter` says), all before
/// the strap is touched; an adapter that cannot be a peripheral, or a registration bluetoothd
/// refuses, is exit 69 with what to do. Ctrl-C and SIGTERM take both back first.
package struct RelayOutput: OutputProvider {
    /// What was asked for.
    package let settings: RelaySettings

    /// The output `settings` describe.
    package init(settings: RelaySettings) {
        self.settings = settings
    }

    package func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let options = context.options
        let client: BlueZClient
        do throws(BlueZError) {
            client = try await BlueZClient.connect(logger: options.logs.bluez, busLogger: options.logs.dbus)
        } catch {
            throw Self.failure(error)
        }
        let peripheral: Peripheral
        do throws(BlueZError) {
            let adapter = try await options.bluetooth.usableAdapter(client, named: settings.adapter)
            peripheral = try await client.registerPeripheral(
                RelayProfile.services,
                advertisement: RelayProfile.advertisement(named: settings.name ?? RelaySettings.defaultName),
                on: adapter)
        } catch {
            await client.close()
            throw Self.failure(error)
        }
        let sink = RelaySink(
            client: client, peripheral: peripheral, namesAfterStrap: settings.name == nil,
            report: context.report)
        // Before the strap is let go: consumers see the relay go, never a frozen value.
        context.stop.beforeStopping { await sink.unregister() }
        // A later output that cannot be opened: the application and the advertisement go again.
        // After the display: the signal to bluetoothd goes out once the user's line is written.
        return SessionOutput(delivery: .afterDisplay(sink), abandon: { await sink.finish() })
    }

    /// A failure to set the relay up: `hrm relay: ...` with what to do, exit 69 (77 for access).
    static func failure(_ error: BlueZError) -> OutputFailure {
        let hint = Failure.hint(error).map { " (\($0))" } ?? ""
        let status = Failure.exitStatus(error)
        return OutputFailure(
            code: EventErrorCode(error.code), message: "cannot relay: \(error.message)\(hint)",
            status: status == 1 || status == 0 ? 69 : status)
    }
}
