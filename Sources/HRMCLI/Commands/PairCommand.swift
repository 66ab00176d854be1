public import ArgumentParser
import BlueZ
import Monitor
import Outputs
import SessionLibrary

/// `hrm pair DEVICE`: pairs with a strap (LE Just Works) and trusts it, ahead of `--ecg`/`--acc`.
public struct PairCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a strap, as its ECG and acceleration need (a Polar H10).",
        discussion: """
            Some straps stream more than heart rate only over an encrypted link: a Polar H10's \
            ECG and acceleration (--ecg, --acc) need it paired. hrm watch --ecg pairs on demand; \
            hrm pair does it ahead, once. DEVICE is an address or a part of the name; the strap \
            must be worn (it advertises only then) and not held by a phone or a watch.

            hrm pairs as a device with no keyboard or display ("Just Works": no PIN) through a \
            pairing agent of its own for the call, then marks the strap trusted. It does not \
            replace the desktop's agent. A connection hrm made for pairing is closed again. \
            hrm unpair DEVICE undoes it.

            Exit status: 0 when the strap is paired (or was already), 1 when pairing failed or \
            the strap was not found, 69 when Bluetooth is unavailable, 77 when access is denied.
            """
    )

    @Argument(help: "Address or part of the name of the strap.")
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
        let pairing = Pairing(device: device, bluetooth: bluetooth, scanTimeout: search.chosenScanTimeout)
        // Ctrl-C, SIGTERM and SIGHUP cancel the work; a connection made is closed all the same.
        let status = await SessionStop().run { await pairing.run() }
        if status != 0 { throw ExitCode(status) }
    }
}

/// One `pair` run, with the command's choices as plain values.
struct Pairing: Sendable {
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
        var ours: DevicePath? = nil
        let status: Int32
        do throws(BlueZError) {
            status = try await pair(client, connected: &ours)
        } catch {
            status = report(error)
        }
        // Outside the (perhaps cancelled) task: a cancelled task's calls are not sent.
        await Task { [ours] in if let ours { try? await client.requestDisconnect(ours) } }.value
        await client.close()
        return status
    }

    private func pair(_ client: BlueZClient, connected ours: inout DevicePath?) async throws(BlueZError)
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
        let wasConnected = await client.device(target.address, on: chosen)?.connected ?? false
        let outcome: PairingOutcome
        do throws(BlueZError) {
            outcome = try await client.pair(target.path)
        } catch {
            if !wasConnected { ours = target.path }
            throw error
        }
        // bluetoothd connects a device to pair it, and leaves it connected.
        if !wasConnected, await client.device(target.address, on: chosen)?.connected == true {
            ours = target.path
        }
        let name = TerminalText.sanitised(
            target.displayName ?? target.address.description, limit: TerminalText.nameLimit)
        switch outcome {
        case .paired: print("paired with \(name) (\(target.address)), and trusted it")
        case .alreadyPaired: print("\(name) (\(target.address)) was paired already")
        }
        return 0
    }

    private func report(_ error: BlueZError) -> Int32 {
        if error.code == .cancelled || Task.isCancelled {
            StandardOutput.diagnostic("hrm pair: interrupted; the strap may not be paired")
            return 1
        }
        return Failure.report(error, command: "pair", json: nil)
    }
}
