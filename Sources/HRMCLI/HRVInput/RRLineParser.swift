import HeartRate
import Monitor
import Outputs
import SessionLibrary

/// What one line of `hrm hrv`'s input gives.
enum RRLine: Equatable {
    /// Nothing: a blank line, a comment, a CSV header, a JSON event that carries no RR intervals.
    case skipped
    /// RR intervals in milliseconds, oldest first (none for a measurement without RR).
    case intervals([Double])
    /// The strap's link dropped here: the beats after it start a new run, so that no successive
    /// difference spans the drop.
    case gap
    /// A recording's header (`"type":"recording"`): nothing, but the source is a recording.
    case recordingHeader
    /// An R peak found in the ECG (`ecg_beat`, read with `--rr-source ecg`): its RR interval in
    /// milliseconds, nil for the first after a (re)start, where a new run begins.
    case ecgBeat(Double?)
}

/// A line read, with the strap it names: input from several straps is analysed per strap.
struct RRLineRead: Equatable {
    var line: RRLine
    /// The strap's address: a JSON line's `device`, a CSV row's device column; nil when none.
    var device: String? = nil
    /// The strap's name, from an `info` line.
    var name: String? = nil
}

/// Why a line cannot be read, without the source and line number (`RRInput` adds them).
struct RRLineError: Error, Equatable, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// How a line is read: decided per line, from its first characters and the CSV header seen last.
///
/// Every input form is detected here, in `detect`, and read by its own method below. hrm session
/// recordings are JSON lines too: their header (`"type":"recording"`) and their measurements'
/// raw `hex` are read in `jsonLine`.
enum RRLineForm: Equatable {
    /// Blank, or a comment (`#`).
    case ignored
    /// `{...}`: a line of `hrm watch --json` (or `hrm decode --json`).
    case json
    /// `time,device,bpm,...`: the header of `hrm watch --csv`; the rows after it are CSV.
    case csvHeader
    /// A line with commas after a CSV header.
    case csvRow
    /// Anything else: one RR interval in milliseconds (`812`, `812.5`), or an error.
    case number

    static func detect(_ trimmed: Substring, afterCSVHeader: Bool) -> RRLineForm {
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return .ignored }
        if trimmed.hasPrefix("{") { return .json }
        if trimmed.hasPrefix("time,") { return .csvHeader }
        if afterCSVHeader, trimmed.contains(",") { return .csvRow }
        return .number
    }
}

/// Reads the lines of one source (a file, standard input) in order: the CSV header seen last is
/// the only state, so each source gets a parser of its own.
struct RRLineParser {
    /// The RR intervals accepted, in milliseconds: above 0 and below this. 5000 ms is 12 bpm,
    /// far below any heart that beats; a larger value is a unit mistake (microseconds, 1/1024 s
    /// ticks of a long gap) or a gap in the recording, not a beat.
    static let ceiling = 5000.0

    /// The columns of the last `hrm watch --csv` header: found by name, so columns added later
    /// (at the end or anywhere) change nothing.
    struct CSVLayout: Equatable {
        let columns: Int
        let rrColumn: Int
        /// `device`: rows of several straps are told apart by it.
        var deviceColumn: Int? = nil
    }

    private(set) var csv: CSVLayout?
    /// The source began with a recording's header: its last line may be torn (a crash mid-write),
    /// which is a warning, not an error.
    private(set) var recording = false
    /// `readFast`'s reader, its storage reused line after line.
    private var scanner = FlatJSONLine()
    /// Which lines of JSON give RR intervals: measurements (`strap`) or `ecg_beat` lines (`ecg`).
    let source: HRVTracker.RRSource

    init(source: HRVTracker.RRSource = .strap) { self.source = source }

    mutating func parse(_ line: some StringProtocol) throws(RRLineError) -> RRLine {
        try read(line).line
    }

    /// As `parse`, with the strap the line names.
    mutating func read(_ line: some StringProtocol) throws(RRLineError) -> RRLineRead {
        let trimmed = Substring(String(line).trimmingSpaces)
        switch RRLineForm.detect(trimmed, afterCSVHeader: csv != nil) {
        case .ignored: return RRLineRead(line: .skipped)
        case .json:
            var read = try Self.jsonLine(trimmed, source: source)
            if read.line == .recordingHeader {
                recording = true
                read.line = .skipped
            }
            return read
        case .csvHeader:
            csv = try Self.csvHeader(trimmed)
            return RRLineRead(line: .skipped)
        case .csvRow:
            guard let csv else { return RRLineRead(line: try Self.numberLine(trimmed)) }
            return try Self.csvRow(trimmed, layout: csv)
        case .number: return RRLineRead(line: try Self.numberLine(trimmed))
        }
    }

    /// The line as `read` reads it, when it is a JSON line of the shape hrm writes (`FlatJSONLine`)
    /// that reads without an error: a recording's measurement by its `hex`, a status, any other
    /// type. Nil for anything else (an error to tell, `rr_ms` without `hex`, CSV, numbers): `read`
    /// reads it, and says what is wrong.
    mutating func readFast(_ bytes: UnsafeRawBufferPointer) -> RRLineRead? {
        guard scanner.scan(bytes), let type = scanner.string("type") else { return nil }
        let line = scanner
        let device = line.string("device").flatMap { $0.isEmpty ? nil : $0 }
        let read: RRLine
        switch type {
        case "recording":
            recording = true
            read = .skipped
        case "measurement":
            // With --rr-source ecg the strap's RR intervals are not the ones read.
            guard source == .strap else {
                read = .skipped
                break
            }
            guard let payload = line.plainHex("hex"), let m = try? HeartRateMeasurement(decoding: payload)
            else {
                return nil
            }
            var intervals: [Double] = []
            for rr in m.rrIntervals {
                guard let checked = try? Self.checked(rr.milliseconds) else { return nil }
                intervals.append(checked)
            }
            read = .intervals(intervals)
        case "ecg_beat" where source == .ecg:
            guard let member = line.member("rr_ms") else { return nil }
            switch member.kind {
            case .literal where line.isNull("rr_ms"): read = .ecgBeat(nil)
            case .number:
                guard let rr = line.number("rr_ms"), let checked = try? Self.checked(rr) else { return nil }
                read = .ecgBeat(checked)
            default: return nil
            }
        case "status":
            let state = line.string("state")
            read = state == "disconnected" || state == "stopped" ? .gap : .skipped
        default:
            read = .skipped
        }
        return RRLineRead(line: read, device: device, name: type == "info" ? line.string("name") : nil)
    }

    /// A line of `hrm watch --json`: a measurement's `rr_ms`; a `status` line that says the link
    /// dropped (`disconnected`) or the session ended (`stopped`: two sessions appended to one
    /// file) is a gap; every other type (status, info, battery, error, hrv, alert, summary, and
    /// types added later) carries no RR intervals and is skipped.
    static func jsonLine(_ text: Substring, source: HRVTracker.RRSource = .strap) throws(RRLineError)
        -> RRLineRead
    {
        let value: JSONValue
        do {
            value = try JSONValue.parse(String(text))
        } catch {
            throw RRLineError(message: "not valid JSON (\(error)): \(quoted(text))")
        }
        guard case .object = value, let type = value["type"]?.string else {
            throw RRLineError(message: "a JSON line must be an object with a \"type\": \(quoted(text))")
        }
        let device = value["device"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let line = try jsonEvent(type, value, text, source: source)
        let name = type == "info" ? value["name"]?.string : nil
        return RRLineRead(line: line, device: device, name: name)
    }

    /// What a JSON line of `type` gives, from `value`, its text parsed.
    private static func jsonEvent(
        _ type: String, _ value: JSONValue, _ text: Substring, source: HRVTracker.RRSource
    )
        throws(RRLineError) -> RRLine
    {
        switch type {
        case "recording":
            return .recordingHeader
        case "measurement" where source == .ecg:
            // With --rr-source ecg the strap's RR intervals are not the ones read.
            return .skipped
        case "ecg_beat" where source == .ecg:
            switch value["rr_ms"] {
            case .null?: return .ecgBeat(nil)
            case .number(let rr)?: return .ecgBeat(try checked(rr))
            default:
                throw RRLineError(
                    message: "an ecg_beat without an \"rr_ms\" (a number or null): \(quoted(text))")
            }
        case "measurement":
            // A recording's line carries the notification as received: decoded here again, so
            // that a better decoder reads an old recording better.
            if let hex = value["hex"]?.string {
                guard let bytes = try? HexPayload.parse(hex),
                    let m = try? HeartRateMeasurement(decoding: bytes)
                else {
                    throw RRLineError(message: "a measurement whose \"hex\" does not decode: \(quoted(text))")
                }
                var intervals: [Double] = []
                for rr in m.rrIntervals { intervals.append(try checked(rr.milliseconds)) }
                return .intervals(intervals)
            }
            guard case .array(let elements) = value["rr_ms"] else {
                throw RRLineError(message: "a measurement without an \"rr_ms\" array: \(quoted(text))")
            }
            var intervals: [Double] = []
            for element in elements {
                guard case .number(let rr) = element else {
                    throw RRLineError(
                        message: "\"rr_ms\" holds something other than numbers: \(quoted(text))")
                }
                intervals.append(try checked(rr))
            }
            return .intervals(intervals)
        case "status":
            let state = value["state"]?.string
            return state == "disconnected" || state == "stopped" ? .gap : .skipped
        default:
            return .skipped
        }
    }

    static func csvHeader(_ text: Substring) throws(RRLineError) -> CSVLayout {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0).trimmingSpaces
        }
        guard let rr = names.firstIndex(of: "rr_ms") else {
            throw RRLineError(message: "a CSV header without an rr_ms column: \(quoted(text))")
        }
        return CSVLayout(columns: names.count, rrColumn: rr, deviceColumn: names.firstIndex(of: "device"))
    }

    /// A row of `hrm watch --csv`: the `rr_ms` field, its intervals separated by spaces.
    static func csvRow(_ text: Substring, layout: CSVLayout) throws(RRLineError) -> RRLineRead {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == layout.columns else {
            throw RRLineError(
                message:
                    "a CSV row of \(fields.count) fields under a header of \(layout.columns): \(quoted(text))"
            )
        }
        var intervals: [Double] = []
        for item in fields[layout.rrColumn].split(separator: " ") {
            guard let rr = plainNumber(item) else {
                throw RRLineError(message: "the rr_ms field holds \(quoted(item)), not milliseconds")
            }
            intervals.append(try checked(rr))
        }
        let device = layout.deviceColumn.map { String(fields[$0]).trimmingSpaces }
        return RRLineRead(line: .intervals(intervals), device: device?.isEmpty == false ? device : nil)
    }

    /// One RR interval in milliseconds: `812`, `812.5`.
    static func numberLine(_ text: Substring) throws(RRLineError) -> RRLine {
        guard let rr = plainNumber(text) else {
            throw RRLineError(
                message:
                    "\(quoted(text)) is not an RR interval in milliseconds (812.5), nor a line of hrm watch --json or --csv"
            )
        }
        return .intervals([try checked(rr)])
    }

    /// Digits with at most one point, and an optional sign (so that `-5` is told it is out of
    /// range); nil for anything else: `Double(_:)` alone would take `nan`, `inf`, `0x1p3`.
    static func plainNumber(_ text: some StringProtocol) -> Double? {
        var body = Substring(text)
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        var points = 0
        var digits = 0
        for character in body {
            if character == "." {
                points += 1
            } else if character.isASCII, character.isNumber {
                digits += 1
            } else {
                return nil
            }
        }
        guard points <= 1, digits > 0, let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    static func checked(_ rr: Double) throws(RRLineError) -> Double {
        guard rr.isFinite, rr > 0, rr < ceiling else {
            throw RRLineError(
                message:
                    "the RR interval \(HRVText.number(rr)) ms is out of range: RR intervals are above 0 and below \(Int(ceiling)) ms"
            )
        }
        return rr
    }

    /// Input text in a message: quoted, escaped and cut (a line may be anything, of any length).
    static func quoted(_ text: some StringProtocol) -> String {
        "\"" + TerminalText.sanitised(String(text), limit: 60) + "\""
    }
}
