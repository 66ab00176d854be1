public import ArgumentParser
import BlueZ
import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// `hrm reset-energy DEVICE`: writes 0x01 to the Heart Rate Control Point (0x2A39).
public struct ResetEnergyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "reset-energy",
        abstract: "Reset a monitor's Energy Expended counter (Heart Rate Control Point 0x2A39).",
        discussion: """
            Sensors stop counting at 65535 kJ; this sets the counter back to zero. DEVICE is an \
            address or a part of the name.

            Exit status: 0 when the counter was reset, 1 when it was not (the device was not \
            found, the write failed or was interrupted), 69 when Bluetooth is unavailable, 77 \
            when access is denied. A connection hrm made is closed however it ends.
            """
    )

    @Argument(help: "Address or part of the name of the monitor.")
    public var device: String

    @OptionGroup public var bluetooth: AdapterOptions

    @OptionGroup public var search: SearchOptions

    @OptionGroup public var configFile: ConfigOptions

    @OptionGroup(title: "Logging") public var log: LogOptions

    public init() {}

    public func validate() throws {
        if device.isEmpty { throw ValidationError("DEVICE must not be empty: it would match any strap") }
    }

    public mutating func run() async throws {
        StandardOutput.prepare()
        try applyConfigFile()
        let reset = EnergyReset(device: device, bluetooth: bluetooth, scanTimeout: search.chosenScanTimeout)
        // Ctrl-C, SIGTERM and SIGHUP cancel the work; the connection is closed all the same.
        let status = await SessionStop().run { await reset.run() }
        if status != 0 { throw ExitCode(status) }
    }
}

/// One `reset-energy` run, with the command's choices as plain values.
struct EnergyReset: Sendable {
    let device: String
    let bluetooth: AdapterOptions
    let scanTimeout: Seconds

    func run() async -> Int32 {
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect(logger: HRMLog.bluez, busLogger: HRMLog.dbus)
        } catch {
            return report(error)
        }
        // The device this run connected, if it did: closed however the run ends.
        var ours: DevicePath? = nil
        let status: Int32
        do throws(BlueZError) {
            status = try await reset(client, connected: &ours)
        } catch {
            status = report(error)
        }
        // Outside the (perhaps cancelled) task: a cancelled task's calls are not sent. Sent, not
        // awaited: bluetoothd takes the link down without hrm waiting seconds for the reply.
        await Task { [ours] in if let ours { try? await client.requestDisconnect(ours) } }.value
        await client.close()
        return status
    }

    private func reset(_ client: BlueZClient, connected ours: inout DevicePath?) async throws(BlueZError)
        -> Int32
    {
        let chosen = try await bluetooth.usableAdapter(client)
        let finder = DeviceFinder(client: client, adapter: chosen, wanted: device, scanTimeout: scanTimeout)
        guard let target = try await finder.find() else {
            if Task.isCancelled { throw BlueZError(.cancelled, "interrupted while looking for '\(device)'") }
            throw BlueZError(
                .deviceNotFound,
                "no '\(device)' found in \(scanTimeout.spoken)" + Sightings.told([finder.sightings]))
        }
        let controlPoint = BluetoothUUID(HeartRateService.controlPointUUID)
        if try await client.connect(target.path, require: [controlPoint]) { ours = target.path }
        guard let characteristic = await client.characteristic(controlPoint, of: target.path) else {
            throw BlueZError(.bluez, "the device has no Heart Rate Control Point")
        }
        try await client.write(characteristic, HeartRateControlPoint.resetEnergyExpended.encoded)
        let name = TerminalText.sanitised(
            target.displayName ?? target.address.description, limit: TerminalText.nameLimit)
        print("energy expended reset on \(name) (\(target.address))")
        return 0
    }

    /// A failure, or an interruption: the counter was not (known to be) reset, so the status is
    /// never 0 here.
    private func report(_ error: BlueZError) -> Int32 {
        if error.code == .cancelled || Task.isCancelled {
            StandardOutput.diagnostic("hrm reset-energy: interrupted; the counter was not reset")
            return 1
        }
        return Failure.report(error, command: "reset-energy", json: nil)
    }
}
