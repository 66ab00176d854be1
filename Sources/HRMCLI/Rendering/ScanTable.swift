import BlueZ
import Monitor
import Outputs
import SessionLibrary

/// What `scan` shows: on a terminal a table sorted by signal under an elapsed-time line, redrawn
/// in place as devices report and as time passes; elsewhere one line per new device.
struct ScanTable {
    let live: Bool
    /// How long the scan lasts, in seconds, for the timer line.
    let timeout: Double
    private var devices: [BluetoothAddress: DiscoveredDevice] = [:]
    /// `scan --all`: heart-rate monitors are marked among the other devices.
    let marksMonitors: Bool
    private var drawnLines = 0
    private var elapsed = 0.0
    private var finished = false

    init(live: Bool, timeout: Double = 10, marksMonitors: Bool = false) {
        self.live = live
        self.timeout = timeout
        self.marksMonitors = marksMonitors
    }

    static func event(_ device: DiscoveredDevice) -> MonitorEvent {
        MonitorEvent(
            device: device.address.description,
            kind: .device(
                name: device.displayName, rssi: device.rssi, services: device.uuids.map(\.shortDescription),
                connected: device.connected))
    }

    func line(_ device: DiscoveredDevice) -> String {
        let rssi = device.rssi.map { "\($0) dBm" } ?? "? dBm"
        return "\(device.address)  \(rssi.leftPadded(8))  \(Self.name(device))\(mark(device))"
    }

    /// After the name, with `--all`: `  ♥ heart rate` for a device that advertises the Heart Rate
    /// service.
    func mark(_ device: DiscoveredDevice) -> String {
        marksMonitors && device.uuids.contains(BluetoothUUID(0x180D)) ? "  ♥ heart rate" : ""
    }

    /// The device's name as the table prints it: any advertiser chooses its own, so it is
    /// sanitised (control characters escaped, the length capped).
    static func name(_ device: DiscoveredDevice) -> String {
        device.displayName.map { TerminalText.sanitised($0, limit: TerminalText.nameLimit) } ?? "(no name)"
    }

    /// A bar of up to 5 blocks: -100 dBm or less is empty, -50 or more is full.
    static func bar(_ rssi: Int?) -> String {
        guard let rssi else { return "     " }
        let filled = min(max((rssi + 100) / 10, 0), 5)
        return String(repeating: "█", count: filled) + String(repeating: "·", count: 5 - filled)
    }

    /// The text to write for this update, if any.
    mutating func update(_ device: DiscoveredDevice, isNew: Bool) -> String? {
        devices[device.address] = device
        guard live else { return isNew ? line(device) : nil }
        return redraw()
    }

    /// The live table again with the timer at `seconds` (nil when not live).
    mutating func tick(_ seconds: Double) -> String? {
        elapsed = seconds
        return live ? redraw() : nil
    }

    /// The table's last drawing once the scan is over, its header saying so (nil when not
    /// live).
    mutating func finish(_ seconds: Double) -> String? {
        elapsed = seconds
        finished = true
        return live ? redraw() : nil
    }

    /// `scanning 3.5 s of 10 s, 2 found (Ctrl-C stops)`; once over, `scanned 10.0 s, 2 found`.
    var timerLine: String {
        let tenths = (min(elapsed, timeout) * 10).rounded(.down) / 10
        let found = devices.count
        if finished { return "scanned \(tenths) s, \(found) found" }
        return
            "scanning \(tenths) s of \(MeasurementRendering.milliseconds(timeout)) s, \(found) found (Ctrl-C stops)"
    }

    private mutating func redraw() -> String {
        let sorted = devices.values.sorted { ($0.rssi ?? -999, $1.address) > ($1.rssi ?? -999, $0.address) }
        var lines = [timerLine, "ADDRESS            SIGNAL          NAME"]
        for device in sorted {
            let rssi = device.rssi.map { "\($0) dBm" } ?? "?"
            lines.append(
                "\(device.address)  \(Self.bar(device.rssi)) \(rssi.leftPadded(8))  \(Self.name(device))\(mark(device))"
            )
        }
        // Move up over the previous table and draw the new one.
        let up = drawnLines > 0 ? "\u{1B}[\(drawnLines)A\r" : ""
        drawnLines = lines.count
        return up + lines.map { "\u{1B}[2K" + $0 }.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

extension ScanTable {
    /// `scan --csv`: a header, then one row per device found. Services are space-separated.
    static let csvHeader = "time,address,name,rssi,services,connected"

    static func csvRow(_ event: MonitorEvent) -> String {
        guard case .device(let name, let rssi, let services, let connected) = event.kind else { return "" }
        return [
            event.time.description, event.device ?? "", CSVField.quoted(name ?? ""),
            rssi.map(String.init) ?? "",
            services.joined(separator: " "), String(connected),
        ].joined(separator: ",")
    }
}

/// RFC 4180 fields: a value with a comma, a quote or a line break is quoted, quotes doubled.
enum CSVField {
    static func quoted(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
            return value
        }
        return "\"" + value.replacingAll("\"", with: "\"\"") + "\""
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
