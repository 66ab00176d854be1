public import ArgumentParser

/// A length of time given on the command line: `10`, `2.5`, `30s`, `45m`, `1h30m`. One rule for
/// every such option: a finite number above 0 and no more than the option allows, so that nothing
/// later has to convert an infinite or absurd value into a `Duration` (which traps).
public struct Seconds: Sendable, Hashable, CustomStringConvertible, ExpressibleByArgument {
    public let value: Double

    /// The most any option accepts: a week.
    public static let ceiling = 7 * 24 * 3600.0

    public init(_ value: Double) throws(ValidationError) {
        guard value.isFinite, value > 0 else { throw ValidationError("must be a number of seconds above 0") }
        guard value <= Self.ceiling else { throw ValidationError("must be at most a week (604800 s)") }
        self.value = value
    }

    public init?(argument: String) {
        guard let seconds = try? Self.parsing(argument) else { return nil }
        self = seconds
    }

    /// What every time option accepts, for its usage error.
    static let rule =
        "give a number of seconds above 0 (10, 2.5), or with units (30s, 45m, 2h, 1h30m), at most a week"

    /// `text` as a time, or the usage error that says what is accepted: the transform of every
    /// time option (`@Option(parsing: .unconditional, transform: Seconds.parsing)`), so that
    /// `--timeout inf` and `--timeout -1` are told why instead of only that they are invalid.
    public static func parsing(_ text: String) throws(ValidationError) -> Seconds {
        guard let value = parse(text), value.isFinite, value > 0 else { throw ValidationError(rule) }
        guard value <= ceiling else { throw ValidationError("at most a week (604800 s, 168h)") }
        return try Seconds(value)
    }

    /// `10`, `2.5`, `30s`, `45m`, `1.5h`, `1h30m`, `2m30s` in seconds; nil for anything else.
    /// A bare number is seconds; with units, each part a number and its unit, larger units first.
    static func parse(_ text: String) -> Double? {
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

    public static var defaultCompletionKind: CompletionKind { .default }

    public var duration: Duration { .milliseconds(Int64((value * 1000).rounded())) }

    /// As the user would write it back: `10`, `2.5`.
    public var description: String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// For messages: `10.0 s` (as earlier versions printed).
    var spoken: String { "\(value) s" }

    /// Throws the usage error the option `name` gets when its value is above `maximum`.
    func check(atMost maximum: Double, _ name: String) throws(ValidationError) {
        if value > maximum {
            throw ValidationError("\(name) must be at most \(Seconds.describe(maximum)) seconds")
        }
    }

    static func describe(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
