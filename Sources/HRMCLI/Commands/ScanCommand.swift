public import ArgumentParser
import BlueZ
public import Monitor
import Outputs
import SessionLibrary
import Threads

/// `hrm scan`: lists heart-rate monitors as they are found.
public struct ScanCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List nearby heart-rate monitors (Bluetooth LE service 0x180D).",
        discussion: """
            Scans for --timeout seconds. On a terminal the list is a live table sorted by signal; \
            into a pipe it is one line per new device; with --json one JSON object per device \
            (see the README for the format); with --csv a header and one row per device.

            Ctrl-C ends the scan early (discovery stopped, the devices found so far kept).

            Exit status: 0 when at least one monitor was found, 1 when none was, 69 when Bluetooth \
            is unavailable (bluetoothd not running, no adapter, adapter off), 77 when the D-Bus \
            policy denies access.

            Chest straps advertise only while worn, with moistened electrodes.
            """
    )

    @OptionGroup public var output: OutputOptions

    @Flag(help: "List every Bluetooth LE device, not only heart-rate monitors.")
    public var all = false

    @Option(
        parsing: .unconditional, help: "How long to scan: seconds, or with a unit (30s, 2m). Default: 10.",
        transform: Seconds.parsing)
    public var timeout: Seconds = SearchOptions.defaultScanTimeout

    @OptionGroup public var bluetooth: AdapterOptions

    @OptionGroup public var configFile: ConfigOptions

    @OptionGroup(title: "Logging") public var log: LogOptions

    public init() {}

    public func validate() throws {
        try timeout.check(atMost: 3600, "--timeout")
    }

    public mutating func run() async throws {
        StandardOutput.prepare()
        try applyConfigFile()
        let scan = Scan(format: output.chosen, all: all, timeout: timeout.value, bluetooth: bluetooth)
        let status = await SessionStop().run {
            let output = LineWriter()
            let status = await scan.run(output: output)
            output.flush()
            return status
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// One `scan` run, with the command's choices as plain values.
struct Scan: Sendable {
    var format: OutputFormat
    var all: Bool
    var timeout: Double
    var bluetooth: AdapterOptions

    var json: Bool { format == .json }

    func run(output: LineWriter) async -> Int32 {
        let client: BlueZClient
        do {
            client = try await BlueZClient.connect(logger: HRMLog.bluez, busLogger: HRMLog.dbus)
        } catch {
            return Failure.report(error, command: "scan", json: json ? output : nil)
        }
        var scanned: Adapter? = nil
        let status = await scan(client, output: output, scanning: &scanned)
        // Discovery stopped and answered before the client closes, however the scan ended: from
        // a task of its own, since Ctrl-C cancelled this one (its calls would not go out), and
        // close() cancels the stream's own StopDiscovery if that has not gone out yet.
        if let scanned { await Task { await client.endDiscovery(on: scanned) }.value }
        await client.close()
        return status
    }

    private func scan(_ client: BlueZClient, output: LineWriter, scanning: inout Adapter?) async -> Int32 {
        do throws(BlueZError) {
            let chosen = try await bluetooth.usableAdapter(client)
            let stream = try await client.discover(
                adapter: chosen, services: all ? nil : [BluetoothUUID(0x180D)])
            scanning = chosen
            let live = format == .text && StandardOutput.isLiveTerminal
            if format == .csv { output.line(ScanTable.csvHeader, flush: true) }
            var table = ScanTable(live: live, timeout: timeout, marksMonitors: all)
            var seen = Set<BluetoothAddress>()
            let started = ContinuousClock.now
            // A live table's timer is redrawn twice a second, devices or not.
            let updates = stream.ticking(every: live ? .milliseconds(500) : nil)
            for await update in updates.until(started + .seconds(timeout)) {
                switch update {
                case .element(let device):
                    let isNew = seen.insert(device.address).inserted
                    if format == .json {
                        if isNew { output.line(MonitorEventJSON.line(ScanTable.event(device)), flush: true) }
                    } else if format == .csv {
                        if isNew { output.line(ScanTable.csvRow(ScanTable.event(device)), flush: true) }
                    } else if let text = table.update(device, isNew: isNew) {
                        output.line(text, flush: true)
                    }
                case .tick:
                    if let text = table.tick((ContinuousClock.now - started).inSeconds) {
                        output.line(text, flush: true)
                    }
                }
            }
            // The whole timeout, or less when Ctrl-C ended the scan.
            let scanned = min((ContinuousClock.now - started).inSeconds, timeout)
            if let text = table.finish(scanned) { output.line(text, flush: true) }
            let found = seen.count
            if found == 0 {
                let shown = MeasurementRendering.milliseconds((scanned * 10).rounded() / 10)
                StandardOutput.diagnostic(
                    "hrm scan: no \(all ? "Bluetooth LE device" : "heart-rate monitor") found in \(shown) s"
                        + (all ? "" : "\n  hint: " + (Failure.hint(BlueZError(.deviceNotFound, "")) ?? "")))
                return 1
            }
            return 0
        } catch {
            return Failure.report(error, command: "scan", json: json ? output : nil)
        }
    }
}
