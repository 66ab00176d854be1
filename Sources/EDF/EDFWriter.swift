/// Writes EDF+C files (edfplus.info: "European Data Format 'plus'"): a continuous recording in
/// data records of one second, each signal's samples as 16-bit little-endian integers, and an
/// "EDF Annotations" signal whose every record starts with its time-keeping TAL (`+T␔␔␀`), followed
/// by the annotations whose onset falls in it.
///
/// Pure: the bytes go to the caller's sink (the header first, then one call per data record), and
/// writing them somewhere is the caller's.
public enum EDFWriter {
    /// Seconds in each data record.
    public static let recordSeconds = 1

    /// The whole file as bytes.
    public static func bytes(_ file: EDFFile) throws(EDFError) -> [UInt8] {
        var bytes: [UInt8] = []
        try write(file, to: { bytes.append(contentsOf: $0) })
        return bytes
    }

    /// Writes `file` to `sink`: the header, then each data record. Throws before the first byte
    /// when the file cannot be written as asked. A signal shorter than the longest goes on with its
    /// last value to the end of the last record (EDF+C has no gaps).
    public static func write(_ file: EDFFile, to sink: (borrowing [UInt8]) -> Void) throws(EDFError) {
        guard !file.signals.isEmpty, file.signals.count < 9999 else {
            throw EDFError(
                .badSignalCount, "an EDF+ file here has 1 to 9998 signals; this one has \(file.signals.count)"
            )
        }
        for signal in file.signals { try check(signal) }
        let records =
            file.signals.map { ($0.samples.count + $0.samplesPerRecord - 1) / $0.samplesPerRecord }.max() ?? 0
        guard records > 0 else { throw EDFError(.noSamples, "no signal has a sample") }

        let startOffset = Int64(file.start.nanosecond)
        let annotationBytes = annotationRecords(file.annotations, records: records, startOffset: startOffset)
        let longest = annotationBytes.map(\.count).max() ?? 0
        let annotationSamples = (longest + 1) / 2
        let annotationSignal = EDFSignal(
            label: "EDF Annotations", physicalDimension: "", physicalMinimum: -1, physicalMaximum: 1,
            samplesPerRecord: annotationSamples, samples: [])

        sink(try header(file, signals: file.signals + [annotationSignal], records: records))
        var record: [UInt8] = []
        for index in 0..<records {
            record.removeAll(keepingCapacity: true)
            for signal in file.signals { append(signal, record: index, to: &record) }
            var tal = annotationBytes[index]
            tal.append(contentsOf: repeatElement(0, count: 2 * annotationSamples - tal.count))
            record.append(contentsOf: tal)
            sink(record)
        }
    }

    private static func check(_ signal: EDFSignal) throws(EDFError) {
        guard signal.samplesPerRecord > 0 else {
            throw EDFError(.badSampleCount, "\(signal.label): samples per record must be positive")
        }
        guard signal.physicalMinimum.isFinite, signal.physicalMaximum.isFinite,
            signal.physicalMinimum != signal.physicalMaximum
        else {
            throw EDFError(.badPhysicalRange, "\(signal.label): the physical minimum and maximum must differ")
        }
        guard signal.digitalMinimum >= -32768, signal.digitalMaximum <= 32767,
            signal.digitalMinimum < signal.digitalMaximum
        else {
            throw EDFError(
                .badDigitalRange,
                "\(signal.label): digital values must be -32768...32767, minimum below maximum")
        }
    }

    /// One record's samples of `signal`, digital, little-endian.
    private static func append(_ signal: EDFSignal, record: Int, to bytes: inout [UInt8]) {
        let scale =
            Double(signal.digitalMaximum - signal.digitalMinimum)
            / (signal.physicalMaximum - signal.physicalMinimum)
        let first = record * signal.samplesPerRecord
        let pad = signal.samples.last ?? 0
        for index in first..<(first + signal.samplesPerRecord) {
            let physical = index < signal.samples.count ? signal.samples[index] : pad
            var digital = ((physical - signal.physicalMinimum) * scale + Double(signal.digitalMinimum))
                .rounded()
            // Written as a negation so that NaN goes to the minimum too.
            if !(digital >= Double(signal.digitalMinimum)) { digital = Double(signal.digitalMinimum) }
            if digital > Double(signal.digitalMaximum) { digital = Double(signal.digitalMaximum) }
            let value = UInt16(bitPattern: Int16(digital))
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }
    }

    // MARK: - Header

    private static func header(_ file: EDFFile, signals: [EDFSignal], records: Int) throws(EDFError)
        -> [UInt8]
    {
        let start = file.start
        guard (1985...9999).contains(start.year), (1...12).contains(start.month),
            (1...31).contains(start.day),
            (0...23).contains(start.hour), (0...59).contains(start.minute), (0...59).contains(start.second),
            (0..<1_000_000_000).contains(start.nanosecond)
        else {
            throw EDFError(.badStartDate, "EDF dates start in 1985; the time must be a valid time of day")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * (signals.count + 1))
        field("0", 8, &bytes)
        let patient = file.patient
        field(
            [
                subfield(patient.code), subfield(patient.sex), patient.birthdate.map(edfPlusDate) ?? "X",
                subfield(patient.name),
            ].joined(separator: " "), 80, &bytes)
        field(
            [
                "Startdate", edfPlusDate(start), subfield(file.administrationCode), subfield(file.technician),
                subfield(file.equipment),
            ].joined(separator: " "), 80, &bytes)
        // EDF's two-digit year: 85-99 for 1985-1999, 00-84 for 2000-2084; later years "yy", the
        // recording field's Startdate holding the year (EDF+ section 2.1.3.2).
        let year = start.year <= 2084 ? two(start.year % 100) : "yy"
        field("\(two(start.day)).\(two(start.month)).\(year)", 8, &bytes)
        field("\(two(start.hour)).\(two(start.minute)).\(two(start.second))", 8, &bytes)
        field(String(256 * (signals.count + 1)), 8, &bytes)
        field("EDF+C", 44, &bytes)
        field(String(records), 8, &bytes)
        field(String(recordSeconds), 8, &bytes)
        field(String(signals.count), 4, &bytes)
        for signal in signals { field(signal.label, 16, &bytes) }
        for signal in signals { field(signal.transducer, 80, &bytes) }
        for signal in signals { field(signal.physicalDimension, 8, &bytes) }
        for signal in signals { field(try number(signal.physicalMinimum, signal.label), 8, &bytes) }
        for signal in signals { field(try number(signal.physicalMaximum, signal.label), 8, &bytes) }
        for signal in signals { field(String(signal.digitalMinimum), 8, &bytes) }
        for signal in signals { field(String(signal.digitalMaximum), 8, &bytes) }
        for signal in signals { field(signal.prefiltering, 80, &bytes) }
        for signal in signals { field(String(signal.samplesPerRecord), 8, &bytes) }
        for _ in signals { field("", 32, &bytes) }
        return bytes
    }

    /// `text` as printable ASCII, cut or padded with spaces to `length` bytes.
    private static func field(_ text: String, _ length: Int, _ bytes: inout [UInt8]) {
        var count = 0
        for scalar in text.unicodeScalars where count < length {
            bytes.append(scalar.value >= 32 && scalar.value < 127 ? UInt8(scalar.value) : UInt8(ascii: "_"))
            count += 1
        }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: length - count))
    }

    /// An EDF+ subfield: "X" when unknown, spaces as "_" (subfields are separated by spaces).
    private static func subfield(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "X" }
        return String(text.map { $0 == " " ? "_" : $0 })
    }

    /// "02-AUG-1951".
    private static func edfPlusDate(_ date: EDFDateTime) -> String {
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        let month = (1...12).contains(date.month) ? months[date.month - 1] : "X"
        return "\(two(date.day))-\(month)-\(date.year)"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    /// `value` in at most 8 characters: an integer when it is one, else as many decimals as fit.
    static func number(_ value: Double, _ label: String) throws(EDFError) -> String {
        if value == value.rounded(), abs(value) < 1e15 {
            let text = String(Int64(value))
            if text.count <= 8 { return text }
        } else {
            for decimals in stride(from: 6, through: 1, by: -1) {
                let text = decimal(value, decimals: decimals)
                if text.count <= 8 { return text }
            }
        }
        throw EDFError(.fieldTooLong, "\(label): \(value) does not fit in 8 characters")
    }

    /// `value` with `decimals` digits after the point, trailing zeros dropped.
    private static func decimal(_ value: Double, decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let magnitude = abs(value) * Double(scale)
        guard magnitude < 9e17 else { return String(repeating: "9", count: 20) }
        let scaled = Int64(magnitude.rounded())
        var fraction = String(scaled % scale)
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let whole = String(scaled / scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return fraction.isEmpty ? sign + whole : sign + whole + "." + fraction
    }

    // MARK: - Annotations

    /// Each record's TALs: the time-keeping TAL, then the annotations whose onset falls in it
    /// (those before the start in the first record, those after the end in the last).
    private static func annotationRecords(_ annotations: [EDFAnnotation], records: Int, startOffset: Int64)
        -> [[UInt8]]
    {
        let second: Int64 = 1_000_000_000
        var perRecord: [[UInt8]] = (0..<records).map { index in
            Array(seconds(Int64(index) * Int64(recordSeconds) * second + startOffset).utf8) + [0x14, 0x14, 0]
        }
        for annotation in annotations.sorted(by: { $0.onset < $1.onset }) {
            let index = Int(
                max(0, min(Int64(records - 1), annotation.onset / (Int64(recordSeconds) * second))))
            var tal = Array(seconds(annotation.onset + startOffset).utf8)
            if let duration = annotation.duration, duration >= 0 {
                tal.append(0x15)
                tal.append(contentsOf: seconds(duration).utf8.dropFirst())
            }
            tal.append(0x14)
            for byte in annotation.text.utf8 {
                tal.append(byte == 0 || byte == 0x14 || byte == 0x15 ? 0x20 : byte)
            }
            tal.append(contentsOf: [0x14, 0])
            perRecord[index].append(contentsOf: tal)
        }
        return perRecord
    }

    /// A TAL's onset: "+12", "+0.25", "-1.5": seconds, a sign always, no exponent.
    static func seconds(_ nanoseconds: Int64) -> String {
        let sign = nanoseconds < 0 ? "-" : "+"
        let magnitude = nanoseconds.magnitude
        let whole = magnitude / 1_000_000_000
        var fraction = String(magnitude % 1_000_000_000)
        guard fraction != "0" else { return sign + String(whole) }
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return sign + String(whole) + "." + fraction
    }
}
