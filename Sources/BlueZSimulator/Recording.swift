import Foundation
import InputFiles

/// A recording of `hrm watch` turned into the scenario that plays it back (`hrm-sim --replay`).
///
/// A recording is JSON lines: a header `{"type":"recording","format":1,...}`, then what `hrm
/// watch --json` printed, each line with `mono_ms` (milliseconds since the start, monotonic) and
/// each notification's payload as `hex` (measurements, and `error` lines of malformed ones).
/// The scenario has one strap: the recording's device (the first address in it), named, placed
/// and powered as its `info` line says, whose `replay` stream sends every recorded payload with
/// the recorded gaps (divided by `speed`), and whose link drops where the recording's did: from
/// a `disconnected` status to the next `connected`, tied to the frame before the drop.
public enum Recording {
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        /// The file cannot be read (exit 66).
        case unreadable(String)
        /// It is not a recording, or a line of it is wrong (exit 65).
        case invalid(String)

        public var description: String {
            switch self {
            case .unreadable(let text), .invalid(let text): text
            }
        }
    }

    /// The scenario, and warnings for stderr (a torn last line, lines of another device).
    public struct Replay: Sendable {
        public var scenario: Scenario
        public var warnings: [String]
    }

    /// The replay of the recording at `path`: a regular file only (a FIFO would hang the read,
    /// `/dev/zero` never end), read by the shared bounded line reader (a line over 64 KiB is
    /// invalid; NUL bytes at the end, as a crash leaves them, are left out with a warning).
    public static func load(path: String, speed: Double = 1) throws(LoadError) -> Replay {
        let input: TextInput
        do {
            input = try TextInput.file(path, source: path)
        } catch {
            throw error.isUnreadable ? .unreadable(error.description) : .invalid(error.description)
        }
        do {
            var loaded = try replay(input.text, speed: speed, name: path)
            if let note = input.tornTailNote { loaded.warnings.insert(note, at: 0) }
            return loaded
        } catch {
            throw .invalid("\(path): \(error.description)")
        }
    }

    /// The replay of a recording's text; `name` goes into the scenario's description.
    public static func replay(_ text: String, speed: Double = 1, name: String = "recording") throws(LoadError)
        -> Replay
    {
        guard speed.isFinite, speed > 0 else { throw .invalid("the speed must be a number above 0") }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? $0.dropLast() : $0
        }
        while lines.last?.allSatisfy(\.isWhitespace) == true { lines.removeLast() }
        guard let first = lines.first, let header = object(first), header["type"] as? String == "recording"
        else {
            throw .invalid(#"not a recording: the first line is not {"type":"recording",...}"#)
        }
        guard let format = header["format"] as? Int, format == 1 else {
            throw .invalid(
                "a recording of format \(header["format"].map { "\($0)" } ?? "none"); this hrm-sim reads 1")
        }
        var warnings: [String] = []
        var builder = Builder(speed: speed)
        for (index, line) in lines.enumerated().dropFirst() where !line.allSatisfy(\.isWhitespace) {
            let number = index + 1
            guard let entry = object(line) else {
                if index == lines.count - 1 {
                    warnings.append(
                        "line \(number): the last line is incomplete (cut off mid-write); ignored")
                    continue
                }
                throw .invalid("line \(number): not a JSON object")
            }
            do {
                try builder.add(entry)
            } catch {
                throw .invalid("line \(number): \(error.description)")
            }
        }
        warnings += builder.warnings
        let scenario: Scenario
        do {
            scenario = try builder.scenario(name: name)
            try scenario.validate()
        } catch let error as Builder.LineError {
            throw .invalid(error.description)
        } catch {
            throw .invalid("\(error)")
        }
        return Replay(scenario: scenario, warnings: warnings)
    }

    static func object(_ line: Substring) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// `chest`, `reserved(9)`: a Body Sensor Location as watch prints it, back to its byte.
    static func location(_ text: String) -> Int? {
        let names = ["other", "chest", "wrist", "finger", "hand", "ear_lobe", "foot"]
        if let index = names.firstIndex(of: text) { return index }
        guard text.hasPrefix("reserved("), text.hasSuffix(")"),
            let value = Int(text.dropFirst(9).dropLast()), (7...255).contains(value)
        else { return nil }
        return value
    }

    /// Collects the lines of one strap in order.
    struct Builder {
        let speed: Double
        var device: String? = nil
        var name: String? = nil
        var location: Int? = 1
        var battery: Int? = 90
        var information: Scenario.DeviceInformation? = nil
        var info = false
        var frames: [String] = []
        var monos: [Double] = []
        var drops: [Scenario.Drop] = []
        var events: [Scenario.Event] = []
        /// When the link went down and has not come back yet.
        var droppedAt: Double? = nil
        var lastConnected: Double? = nil
        var firstFrameAfterConnected: Double? = nil
        var lastMono = 0.0
        var otherDevices: Set<String> = []
        var warnings: [String] = []

        struct LineError: Error {
            let description: String
        }

        mutating func add(_ entry: [String: Any]) throws(LineError) {
            guard let type = entry["type"] as? String else { throw LineError(description: "no type") }
            if let address = entry["device"] as? String {
                guard let parsed = SimulatedAddress(address) else {
                    throw LineError(description: "device '\(address)' is not an address")
                }
                if device == nil { device = parsed.description }
                if device != parsed.description {
                    if otherDevices.insert(parsed.description).inserted {
                        warnings.append(
                            "lines of a second device \(parsed) are ignored: a replay plays one strap")
                    }
                    return
                }
            }
            let mono = entry["mono_ms"] as? Double
            if let mono {
                guard mono.isFinite, mono >= 0 else { throw LineError(description: "mono_ms is not a time") }
                guard mono >= lastMono else {
                    throw LineError(
                        description: "mono_ms \(mono) goes back (the line before has \(lastMono))")
                }
                lastMono = mono
            }
            func needMono() throws(LineError) -> Double {
                guard let mono else { throw LineError(description: "a \(type) line without mono_ms") }
                return mono
            }
            switch type {
            case "info" where !info:
                info = true
                name = entry["name"] as? String
                location = (entry["location"] as? String).flatMap(Recording.location)
                battery = (entry["battery"] as? Int).map { min(max($0, 0), 100) }
                let manufacturer = entry["manufacturer"] as? String
                let model = entry["model"] as? String
                if manufacturer != nil || model != nil {
                    var information = Scenario.DeviceInformation()
                    information.manufacturer = manufacturer
                    information.model = model
                    self.information = information
                }
            case "measurement", "error":
                guard let hex = entry["hex"] as? String else {
                    if type == "measurement" {
                        throw LineError(description: "a measurement without hex (its payload)")
                    }
                    return  // An error that is not a notification (a timeout, a failed call).
                }
                guard Scenario.bytes(hex: hex) != nil else {
                    throw LineError(description: "hex '\(hex)' is not hex")
                }
                let mono = try needMono()
                if frames.isEmpty { firstFrameAfterConnected = lastConnected.map { mono - $0 } }
                frames.append(hex.lowercased())
                monos.append(mono)
            case "status":
                switch entry["state"] as? String {
                case "disconnected":
                    if droppedAt == nil { droppedAt = try needMono() }
                case "connected":
                    let mono = try needMono()
                    lastConnected = mono
                    if let start = droppedAt {
                        addDrop(from: start, to: mono)
                        droppedAt = nil
                    }
                default: break
                }
            case "battery":
                guard let percent = entry["percent"] as? Int, (0...100).contains(percent) else {
                    throw LineError(description: "a battery line without percent 0-100")
                }
                if frames.isEmpty {
                    battery = percent
                } else if let device {
                    events.append(
                        .battery(.afterNotifications(frames.count), device: device, percent: percent))
                }
            default: break
            }
        }

        /// A drop before the first frame is left out: the replay starts with the first frame.
        mutating func addDrop(from start: Double, to end: Double) {
            guard let last = monos.last else { return }
            var drop = Scenario.Drop(
                afterNotifications: frames.count, for: max(end - start, 1) / 1000 / speed)
            drop.delay = (start - last) / 1000 / speed
            drops.append(drop)
        }

        mutating func scenario(name file: String) throws(LineError) -> Scenario {
            guard let device, let first = monos.first else {
                throw LineError(
                    description: "nothing to replay: no measurement or malformed notification with hex")
            }
            // A recording that ends with the link down: down until the end of the replay.
            if let start = droppedAt { addDrop(from: start, to: max(lastMono, start) + 1000) }
            let times = monos.map { ($0 - first) / 1000 / speed }
            if let last = times.last, last > Scenario.HeartRateStream.longestReplay {
                throw LineError(
                    description:
                        "the replay would last \(Int(last)) s; at most \(Int(Scenario.HeartRateStream.longestReplay))"
                )
            }
            var strap = Scenario.Device(address: device)
            strap.name = name
            strap.rssi = -60
            strap.uuids = battery == nil ? ["180d"] : ["180d", "180f"]
            strap.location = location
            strap.battery = battery
            strap.deviceInformation = information
            var stream = Scenario.HeartRateStream()
            stream.mode = .replay
            stream.frames = frames
            stream.times = times
            // The first frame as long after the link came up as in the recording (0.1 to 1 s).
            stream.interval = min(max((firstFrameAfterConnected ?? 1000) / 1000 / speed, 0.1), 1)
            strap.heartRate = stream
            strap.drops = drops
            var scenario = Scenario()
            let speedText = speed == 1 ? "" : ", \(speed)x"
            scenario.description =
                "replay of \(file): \(frames.count) notifications over \(Int(times.last ?? 0)) s, \(drops.count) drops\(speedText)"
            scenario.devices = [strap]
            scenario.events = events
            return scenario
        }
    }
}
