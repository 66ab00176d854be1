import Monitor
import Outputs
import SessionLibrary

/// Why the config file could not be used, with where in it: `path:line[:column]: message`, the
/// form editors and compilers use, so that the line is found at once.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable codes, for tests and for the exit status.
    public enum Code: String, Sendable {
        /// The file named by `--config` does not exist, or a file cannot be read.
        case unreadable
        /// Not UTF-8, or a NUL character: no text a person wrote.
        case notText
        /// TOML that does not parse.
        case syntax
        /// A value of the wrong kind (`max-hr = "abc"`).
        case wrongType
        /// A value of the right kind that hrm cannot take (`max-hr = -5`, `zones = [100, 90]`).
        case badValue
        /// Two settings that do not go together (`max-hr` and `zones`).
        case conflict
    }

    public let code: Code
    public let path: String
    public let line: Int?
    public let column: Int?
    public let message: String

    init(_ code: Code, _ path: String, line: Int? = nil, column: Int? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    /// sysexits: 66 (no input) for a file that cannot be read, 78 (configuration) for one that
    /// is wrong.
    public var exitStatus: Int32 { code == .unreadable ? 66 : 78 }

    public var description: String {
        var place = path
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        return "\(place): \(message)"
    }
}

/// Something in the file hrm does not use (a key it does not know): reported, then ignored, so
/// that a typo is seen and a file written for a newer hrm still works with this one.
public struct ConfigWarning: Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let line: Int?
    public let message: String

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }
}
