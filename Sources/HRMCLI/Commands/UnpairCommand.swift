public import ArgumentParser
import BlueZ
import Monitor
import Outputs
import SessionLibrary

/// `hrm unpair DEVICE`: makes bluetoothd forget a paired strap and its keys.
public struct UnpairCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "unpair",
        abstract: "Forget a paired strap and its pairing keys (bluetoothd's RemoveDevice).",
        discussion: """
            Undoes hrm pair (or a pairing made by another program): bluetoothd forgets the \
            strap, its keys and its trust, and disconnects it if it is connected. Useful when a \
            strap was paired with another computer or phone since, and refuses the old keys. \
            DEVICE is an address or a part of the name of a device bluetoothd knows.

            Exit status: 0 when the strap is unpaired (or was not paired: nothing is changed \
            then), 1 when bluetoothd knows no such device, 69 when Bluetooth is unavailable, 77 \
            when access is denied.
            """
    )

    @Argument(help: "Address or part of the name of the strap.")
    public var device: String

    @OptionGroup public var bluetooth: AdapterOptions

    @OptionGroup public var configFile: ConfigOptions

    @OptionGroup(title: "Logging") public var log: LogOptions

    public init() {}

    public func validate() throws {
        if device.isEmpty { throw ValidationError("DEVICE must not be empty: it would match any strap") }
    }

    public mutating func run() async throws {
        StandardOutput.prepare()
        try applyConfigFile()
        let unpairing = Unpairing(device: device, bluetooth: bluetooth)
        let status = await SessionStop().run { await unpairing.run() }
        if status != 0 { throw ExitCode(status) }
    }
}

/// One `unpair` run.
struct Unpairing: Sendable {
    let device: String
    let bluetooth: AdapterOptions

    func run() async -> Int32 {
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect(logger: HRMLog.bluez, busLogger: HRMLog.dbus)
        } catch {
            return report(error)
        }
        let status: Int32
        do throws(BlueZError) {
            status = try await unpair(client)
        } catch {
            status = report(error)
        }
        await client.close()
        return status
    }

    private func unpair(_ client: BlueZClient) async throws(BlueZError) -> Int32 {
        let chosen = try await bluetooth.usableAdapter(client)
        // Only the devices bluetoothd knows: a paired one is always among them.
        let known = await client.knownDevices(on: chosen)
        guard let target = known.first(where: { DeviceFinder.matches($0, device) }) else {
            throw BlueZError(.deviceNotFound, "bluetoothd knows no device '\(device)' on \(chosen.name)")
        }
        let name = TerminalText.sanitised(
            target.displayName ?? target.address.description, limit: TerminalText.nameLimit)
        guard await client.isPaired(target.path) else {
            print("\(name) (\(target.address)) is not paired: nothing to do")
            return 0
        }
        try await client.removeDevice(target.path, from: chosen.path)
        print("unpaired \(name) (\(target.address)): bluetoothd forgot it and its keys")
        return 0
    }

    private func report(_ error: BlueZError) -> Int32 {
        if error.code == .cancelled || Task.isCancelled {
            StandardOutput.diagnostic("hrm unpair: interrupted")
            return 1
        }
        return Failure.report(error, command: "unpair", json: nil)
    }
}
