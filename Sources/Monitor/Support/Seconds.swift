/// A length of time given by a person: `10`, `2.5`, `30s`, `45m`, `1h30m`. One rule for every
/// such value: a finite number above 0 and at most a week, so that nothing later has to convert
/// an infinite or absurd value into a `Duration` (which traps). The command line's parsing of it
/// (its usage errors) lives with the options.
public struct Seconds: Sendable, Hashable, CustomStringConvertible {
    /// The length in seconds: finite, above 0, at most `ceiling`.
    public let value: Double

    /// The most any option accepts: a week.
    public static let ceiling = 7 * 24 * 3600.0

    /// Why a number is not a `Seconds`, in words.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What is wrong, for people.
        public let description: String
    }

    /// `value` seconds, or why not.
    public init(_ value: Double) throws(Invalid) {
        guard value.isFinite, value > 0 else {
            throw Invalid(description: "must be a number of seconds above 0")
        }
        guard value <= Self.ceiling else { throw Invalid(description: "must be at most a week (604800 s)") }
        self.value = value
    }

    /// `10`, `2.5`, `30s`, `45m`, `1.5h`, `1h30m`, `2m30s` in seconds; nil for anything else.
    /// A bare number is seconds; with units, each part a number and its unit, larger units first.
    package static func parse(_ text: String) -> Double? {
        if let bare = number(Substring(text)) { return bare }
        var total = 0.0
        var rest = Substring(text)
        var lastUnit = Double.infinity
        while !rest.isEmpty {
            guard let end = rest.firstIndex(where: { "hms".contains($0) }) else { return nil }
            let unit: Double = rest[end] == "h" ? 3600 : rest[end] == "m" ? 60 : 1
            // 1h30m, not 30m1h nor 1m1m.
            guard unit < lastUnit, let value = number(rest[..<end]) else { return nil }
            total += value * unit
            lastUnit = unit
            rest = rest[rest.index(after: end)...]
        }
        return total
    }

    /// Digits and one point only: Double(_:) would also take "inf", "nan", "0x1p3" and "1e308".
    private static func number(_ text: Substring) -> Double? {
        var points = 0
        for character in text {
            if character == "." {
                points += 1
            } else if !character.isASCII || !character.isNumber {
                return nil
            }
        }
        guard points <= 1, text.contains(where: \.isNumber), let value = Double(text) else { return nil }
        return value
    }

    /// The length as a `Duration`, to the millisecond.
    public var duration: Duration { .milliseconds(Int64((value * 1000).rounded())) }

    /// As the user would write it back: `10`, `2.5`.
    public var description: String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// For messages: `10.0 s` (as earlier versions printed).
    package var spoken: String { "\(value) s" }

    /// `value` as the user would write it: `10`, `2.5`.
    package static func describe(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
