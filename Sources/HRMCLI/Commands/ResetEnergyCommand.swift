public import ArgumentParser
import BlueZ
import HeartRate

/// `hrm reset-energy DEVICE`: writes 0x01 to the Heart Rate Control Point (0x2A39).
public struct ResetEnergyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "reset-energy",
        abstract: "Reset a monitor's Energy Expended counter (Heart Rate Control Point 0x2A39).",
        discussion: """
            Sensors stop counting at 65535 kJ; this sets the counter back to zero. DEVICE is an \
            address or a part of the name.
            """
    )

    @Argument(help: "Address or part of the name of the monitor.")
    public var device: String

    @OptionGroup public var bluetooth: AdapterOptions

    @OptionGroup public var search: SearchOptions

    public init() {}

    public func run() async throws {
        StandardOutput.prepare()
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect()
        } catch {
            throw ExitCode(Failure.report(error, command: "reset-energy", json: nil))
        }
        let status: Int32
        do {
            status = try await reset(client)
        } catch {
            status = Failure.report(error, command: "reset-energy", json: nil)
        }
        await client.close()
        if status != 0 { throw ExitCode(status) }
    }

    func reset(_ client: BlueZClient) async throws(BlueZError) -> Int32 {
        let chosen = try await bluetooth.usableAdapter(client)
        let finder = DeviceFinder(
            client: client, adapter: chosen, wanted: device, scanTimeout: search.scanTimeout)
        guard let target = try await finder.find() else {
            throw BlueZError(.deviceNotFound, "no '\(device)' found in \(search.scanTimeout.spoken)")
        }
        let controlPoint = BluetoothUUID(HeartRateService.controlPointUUID)
        let ours = try await client.connect(target.path, require: [controlPoint])
        guard let characteristic = await client.characteristic(controlPoint, of: target.path) else {
            throw BlueZError(.bluez, "the device has no Heart Rate Control Point")
        }
        try await client.write(characteristic, HeartRateControlPoint.resetEnergyExpended.encoded)
        print(
            "energy expended reset on \(target.displayName ?? target.address.description) (\(target.address))"
        )
        if ours { try? await client.disconnect(target.path) }
        return 0
    }
}
