public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// How a command prints its results.
public enum OutputFormat: String, Sendable, ArgumentChoice {
    /// For people: a live display on a terminal, one line per event into a pipe.
    case text
    /// JSON lines (see the README).
    case json
    /// A header, then one row per record.
    case csv
}

/// `--color`: colour on a terminal (auto: unless NO_COLOR is set), always, or never.
public enum ColorChoice: String, Sendable, ArgumentChoice {
    case auto, always, never

    /// Whether to colour text for a display that is `live` (a terminal that is not TERM=dumb).
    func colours(live: Bool) -> Bool {
        switch self {
        case .always: true
        case .never: false
        case .auto: live && !StandardOutput.environmentSet("NO_COLOR")
        }
    }
}

/// `--format text|json|csv`, with `--json` and `--csv` as short forms, and `--color`: `scan` and
/// `watch`.
public struct OutputOptions: ParsableArguments, Sendable {
    @Option(help: "Output format: text, json (JSON lines) or csv.")
    public var format: OutputFormat?

    @Flag(help: "Short for --format json.")
    public var json = false

    @Flag(help: "Short for --format csv.")
    public var csv = false

    @Option(
        help: ArgumentHelp(
            "Colour on a terminal: auto (unless NO_COLOR is set), always or never. Default: auto.",
            valueName: "when"))
    public var color: ColorChoice?

    public init() {}

    public func validate() throws {
        let chosen = [format.map { "--format \($0.rawValue)" }, json ? "--json" : nil, csv ? "--csv" : nil]
            .compactMap { $0 }
        if Set([format, json ? .json : nil, csv ? .csv : nil].compactMap { $0 }).count > 1 {
            throw ValidationError("\(chosen.joined(separator: " and ")) cannot be used together")
        }
    }

    /// The format chosen, by either spelling; text when none was.
    public var chosen: OutputFormat {
        format ?? (json ? .json : csv ? .csv : .text)
    }

    /// Whether a format was given, by any spelling.
    var formatGiven: Bool { format != nil || json || csv }

    /// `--color`; auto when not given.
    public var chosenColor: ColorChoice { color ?? .auto }
}
