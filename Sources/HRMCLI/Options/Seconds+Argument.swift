public import ArgumentParser
public import Monitor
import Outputs
import SessionLibrary

/// A time option's value: `--timeout 10`, `--scan-timeout 30s`, `--duration 1h30m`, each told
/// what is accepted when it is not.
extension Seconds: ExpressibleByArgument {
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
        do {
            return try Seconds(value)
        } catch {
            throw ValidationError(error.description)
        }
    }

    public static var defaultCompletionKind: CompletionKind { .default }

    /// Throws the usage error the option `name` gets when its value is above `maximum`.
    func check(atMost maximum: Double, _ name: String) throws(ValidationError) {
        if value > maximum {
            throw ValidationError("\(name) must be at most \(Seconds.describe(maximum)) seconds")
        }
    }
}
