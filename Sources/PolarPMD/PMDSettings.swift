/// A PMD setting's type, as polar-ble-sdk's `PmdSetting.PmdSettingType` numbers them, with the
/// size of one value in bytes (the SDK's `typeToFieldSize`).
public enum PMDSettingType: UInt8, Hashable, Sendable, CaseIterable, Comparable {
    /// Samples per second (2 bytes): the H10's ECG 130, its ACC 25, 50, 100 or 200.
    case sampleRate = 0
    /// Bits per sample (2 bytes): the H10's ECG 14, its ACC 16.
    case resolution = 1
    /// Range in whole units (2 bytes): the H10's ACC 2, 4 or 8 g.
    case range = 2
    /// Range in thousandths of a unit (4 bytes, signed).
    case rangeMilliunit = 3
    /// Number of channels (1 byte): ACC 3.
    case channels = 4
    /// Scale factor of the samples (4 bytes, an IEEE 754 float), sent by the sensor, never asked for.
    case factor = 5
    /// Security key (16 bytes).
    case security = 6

    /// The size of one value in bytes.
    public var fieldSize: Int {
        switch self {
        case .sampleRate, .resolution, .range: 2
        case .rangeMilliunit, .factor: 4
        case .channels: 1
        case .security: 16
        }
    }

    /// The SDK's name in lower case.
    public var name: String {
        switch self {
        case .sampleRate: "sample_rate"
        case .resolution: "resolution"
        case .range: "range"
        case .rangeMilliunit: "range_milliunit"
        case .channels: "channels"
        case .factor: "factor"
        case .security: "security"
        }
    }

    /// Ordered by number.
    public static func < (lhs: PMDSettingType, rhs: PMDSettingType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The settings a sensor offers for a measurement (a get-settings response's parameters), or the
/// settings a start response reports (the factor): for each setting type, its values.
///
/// The wire form is a list of `[type, count, count values little-endian]`. Values are read as the
/// SDK reads them: unsigned for the 1- and 2-byte fields, signed for `rangeMilliunit`, the IEEE 754
/// bits for `factor` (see `factor`); security keys are kept as bytes in `securityKeys`.
public struct PMDAvailableSettings: Hashable, Sendable {
    /// Each setting's values in the order the sensor listed them (security keys aside).
    public let values: [PMDSettingType: [Int]]
    /// The security keys listed, 16 bytes each.
    public let securityKeys: [[UInt8]]

    /// No settings.
    public init() {
        values = [:]
        securityKeys = []
    }

    /// The settings listed in `parameters`. A parameter list of one byte or none holds no settings
    /// (the SDK's rule). Throws `unknownSetting` or `truncatedSetting`, with the offset in
    /// `parameters`.
    public init(decoding parameters: ArraySlice<UInt8>) throws(PMDError) {
        var values: [PMDSettingType: [Int]] = [:]
        var keys: [[UInt8]] = []
        let start = parameters.startIndex
        var index = start
        if parameters.count > 1 {
            while index < parameters.endIndex {
                guard let type = PMDSettingType(rawValue: parameters[index]) else {
                    throw PMDError(
                        .unknownSetting, offset: index - start,
                        "setting type \(parameters[index]) is not one the SDK defines, so its size is unknown"
                    )
                }
                guard index + 1 < parameters.endIndex else {
                    throw PMDError(.truncatedSetting, offset: index - start, "\(type.name) has no count")
                }
                let count = Int(parameters[index + 1])
                index += 2
                let size = type.fieldSize
                guard parameters.endIndex - index >= count * size else {
                    throw PMDError(
                        .truncatedSetting, offset: index - start,
                        "\(type.name) lists \(count) values of \(size) bytes; \(parameters.endIndex - index) bytes remain"
                    )
                }
                var list: [Int] = []
                for _ in 0..<count {
                    let field = parameters[index..<(index + size)]
                    if type == .security {
                        keys.append(Array(field))
                    } else {
                        let raw = littleEndian(field)
                        list.append(type == .rangeMilliunit ? Int(Int32(truncatingIfNeeded: raw)) : Int(raw))
                    }
                    index += size
                }
                if type != .security { values[type, default: []].append(contentsOf: list) }
            }
        }
        self.values = values
        securityKeys = keys
    }

    /// The values offered for `type` (empty when none).
    public subscript(_ type: PMDSettingType) -> [Int] { values[type] ?? [] }

    /// The factor the sensor reports (a start response), the float its four bytes encode; nil when
    /// absent. Samples of some frame types are multiplied by it (see `PMDDecoder`).
    public var factor: Float? {
        values[.factor]?.first.map { Float(bitPattern: UInt32(truncatingIfNeeded: $0)) }
    }

    /// The largest value of each setting: what the SDK's `maxSettings` starts a stream with.
    public var maximal: PMDSelectedSettings {
        var chosen: [PMDSettingType: Int] = [:]
        for (type, list) in values where type != .factor {
            if let largest = list.max() { chosen[type] = largest }
        }
        return PMDSelectedSettings(chosen)
    }
}

/// The settings chosen to start a measurement: one value per setting type.
public struct PMDSelectedSettings: Hashable, Sendable {
    /// The value of each chosen setting.
    public var values: [PMDSettingType: Int]

    /// The settings in `values`.
    public init(_ values: [PMDSettingType: Int]) { self.values = values }

    /// The H10's ECG: 130 Hz, 14 bits.
    public static let h10ECG = PMDSelectedSettings([.sampleRate: 130, .resolution: 14])

    /// The H10's acceleration at `rate` Hz (25, 50, 100 or 200) and `rangeG` g (2, 4 or 8), 16 bits.
    public static func h10ACC(rate: Int, rangeG: Int) -> PMDSelectedSettings {
        PMDSelectedSettings([.sampleRate: rate, .resolution: 16, .range: rangeG])
    }

    /// The settings as a command carries them: `[type, 1, value little-endian]` for each, in order
    /// of type, the factor left out (a sensor reports it, as the SDK's `serializeSelected` skips
    /// it). Throws `settingOutOfRange` for a value that does not fit its field, or a security key
    /// (16 bytes: not an integer value).
    public func encoded() throws(PMDError) -> [UInt8] {
        var bytes: [UInt8] = []
        for type in values.keys.sorted() where type != .factor {
            guard let value = values[type] else { continue }
            let size = type.fieldSize
            let fits =
                switch type {
                case .rangeMilliunit: value >= Int(Int32.min) && value <= Int(Int32.max)
                case .security: false
                default: value >= 0 && value < 1 << (8 * size)
                }
            guard fits else {
                throw PMDError(
                    .settingOutOfRange, "\(type.name) \(value) does not fit its \(size)-byte field")
            }
            bytes.append(type.rawValue)
            bytes.append(1)
            for byte in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * byte))) }
        }
        return bytes
    }
}

/// Up to eight bytes as an unsigned little-endian integer.
func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    var value: UInt64 = 0
    for (shift, byte) in bytes.enumerated() where shift < 8 { value |= UInt64(byte) << (8 * UInt64(shift)) }
    return value
}
