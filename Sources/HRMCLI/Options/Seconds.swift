public import ArgumentParser

/// A length of time given on the command line: `10`, `2.5`, `30s`, `45m`, `1.5h`. One rule for
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
        "give a number of seconds above 0 (10, 2.5), or with a unit (30s, 45m, 2h), at most a week"

    /// `text` as a time, or the usage error that says what is accepted: the transform of every
    /// time option (`@Option(parsing: .unconditional, transform: Seconds.parsing)`), so that
    /// `--timeout inf` and `--timeout -1` are told why instead of only that they are invalid.
    public static func parsing(_ text: String) throws(ValidationError) -> Seconds {
        guard let value = parse(text), value.isFinite, value > 0 else { throw ValidationError(rule) }
        guard value <= ceiling else { throw ValidationError("at most a week (604800 s, 168h)") }
        return try Seconds(value)
    }

    /// `10`, `2.5`, `30s`, `45m`, `1.5h` in seconds; nil for anything else.
    static func parse(_ text: String) -> Double? {
        var number = Substring(text)
        var unit = 1.0
        switch number.last {
        case "s": number = number.dropLast()
        case "m": (number, unit) = (number.dropLast(), 60)
        case "h": (number, unit) = (number.dropLast(), 3600)
        default: break
        }
        // Digits and one point only: Double(_:) would also take "inf", "nan", "0x1p3" and "1e308".
        var points = 0
        for character in number {
            if character == "." {
                points += 1
            } else if !character.isASCII || !character.isNumber {
                return nil
            }
        }
        guard points <= 1, number.contains(where: \.isNumber), let value = Double(number) else { return nil }
        return value * unit
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
